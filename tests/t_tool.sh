# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tools' shell tests (test_fwd.sh, test_xsk_tool.sh), sourced
# after setting:
#	tool		the binary under test
#	tool_name	its name, for messages
#	tool_timeout	seconds a run may take before it is killed
# Gives: $tmp (removed at exit), $bg_pid and $ns (a background process this
# script started and a network namespace it made, both cleaned up at exit),
# $failed, fail, run_tool, expect, sanitizer_check and signal_stop.
tmp=$(mktemp -d)
bg_pid=
ns=
failed=0

cleanup() {
	# Only the process this script started, by its PID.
	if [ -n "$bg_pid" ]; then
		kill -KILL "$bg_pid" 2>/dev/null || true
	fi
	if [ -n "$ns" ]; then
		ip netns del "$ns" 2>/dev/null || true
		ns=
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	failed=1
}

# Nothing may hang the test: every run is bounded (killed after
# $tool_timeout seconds: exit 137).
run_tool() {
	timeout -s KILL "$tool_timeout" "$tool" "$@"
}

# A sanitizer build reports on stderr, whatever the exit status (ASan's
# is 1, which a set-up failure also has).
sanitizer_check() {
	if grep -Eq "Sanitizer|runtime error" "$1"; then
		fail "$2: a sanitizer report"
		sed 's/^/  stderr: /' "$1" | head -40
	fi
}

# expect RC PATTERN ARGS...: the tool with ARGS, stdout to $tmp/out, exits
# RC and its stderr matches PATTERN (grep -E; "" for any) and holds no
# sanitizer report.
expect() {
	want=$1 pat=$2
	shift 2
	rc=0
	run_tool "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$tool_name $*: exit $rc, want $want"
		sed 's/^/  stderr: /' "$tmp/err"
	elif [ -n "$pat" ] && ! grep -Eq -e "$pat" "$tmp/err"; then
		fail "$tool_name $*: stderr lacks /$pat/"
		sed 's/^/  stderr: /' "$tmp/err"
	fi
	sanitizer_check "$tmp/err" "$tool_name $*"
}

# signal_stop SIG ARGS...: the tool with ARGS (printing --json interval
# lines) started in the background, by this non-interactive shell, so
# SIGINT arrives ignored. Signalled with SIG at its first interval line
# (by then its signals are taken and packets flow; a fixed sleep is not
# enough on a loaded machine), at most 10 s in. It must stop within 10 s,
# exit 0 and leave no sanitizer report; its stdout stays in $tmp/sig.out.
signal_stop() {
	sig=$1
	shift
	: >"$tmp/sig.out"
	"$tool" "$@" >"$tmp/sig.out" 2>"$tmp/sig.err" &
	bg_pid=$!
	i=0
	while ! grep -qs '"type":"interval"' "$tmp/sig.out" &&
	      [ $i -lt 100 ] && kill -0 "$bg_pid" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	# Gone already: the exit status below says how.
	kill "-$sig" "$bg_pid" 2>/dev/null || true
	# A process that ignored the signal is killed.
	i=0
	while kill -0 "$bg_pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$bg_pid" 2>/dev/null; then
		fail "SIG$sig did not stop $tool_name"
		kill -KILL "$bg_pid"
	fi
	rc=0
	wait "$bg_pid" || rc=$?
	bg_pid=
	[ "$rc" -eq 0 ] ||
		fail "SIG$sig: exit $rc, want 0: $(cat "$tmp/sig.err")"
	sanitizer_check "$tmp/sig.err" "SIG$sig"
}
