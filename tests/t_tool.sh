# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tools' shell tests (test_fwd.sh, test_xsk_tool.sh,
# test_bpf_tool.sh), sourced after setting:
#	tool		the binary under test
#	tool_name	its name, for messages
#	tool_timeout	seconds a run may take before it is killed
# Gives: $tmp (removed at exit), $bg_pid and $ns (a background process this
# script started and a network namespace it made, both cleaned up at exit),
# $failed, fail, run_tool, expect, out_has, json_ok, json_check_all,
# sanitizer_check and signal_stop.
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

# json_ok FILE WHAT EXPR...: keep FILE (JSON lines), what it is and the
# Python expressions that must hold of it, for json_check_all, which
# checks them all at once at the end ($tmp/json.N, .what, .expr): one
# Python start-up, so the test stays fast on a loaded machine.
njson=0
json_ok() {
	njson=$((njson + 1))
	cp "$1" "$tmp/json.$njson"
	printf '%s\n' "$2" >"$tmp/json.$njson.what"
	shift 2
	: >"$tmp/json.$njson.expr"
	for _expr in "$@"; do
		printf '%s\n' "$_expr" >>"$tmp/json.$njson.expr"
	done
}

# json_check_all [PYTHON]: every file json_ok kept, checked: its lines
# parsed (L; t, the last), PYTHON run on them (the script's own checks of
# every output; names it defines are there for the expressions), then each
# expression. A line per failure, a count, and $failed set on any.
json_check_all() {
	printf '%s\n' "${1:-}" >"$tmp/json.checks.py"
	python3 - "$tmp" "$njson" <<'PY' || failed=1
import json, sys
tmp, n, bad = sys.argv[1], int(sys.argv[2]), 0
checks = compile(open(tmp + "/json.checks.py").read(), "checks", "exec")
for i in range(1, n + 1):
    base = "%s/json.%d" % (tmp, i)
    what = open(base + ".what").read().strip()
    try:
        text = open(base).read()
        assert text.endswith("\n"), "output does not end with a newline"
        L = [json.loads(l) for l in text.splitlines()]
        assert L, "no output"
        env = {"json": json, "L": L, "t": L[-1]}
        exec(checks, env)
        for e in open(base + ".expr").read().splitlines():
            assert eval(e, env), "does not hold: %s\n  output: %s" % (
                e, json.dumps(L[-1])[:2000])
    except Exception as ex:
        print("FAIL: %s: %s: %s" % (what, type(ex).__name__, ex))
        bad += 1
print("%d JSON outputs checked, %d failed" % (n, bad))
sys.exit(1 if bad else 0)
PY
}

# out_has PATTERN WHAT: the last run's stdout matches PATTERN (grep -E).
out_has() {
	grep -Eq -e "$1" "$tmp/out" ||
		{ fail "$2: stdout lacks /$1/"; sed 's/^/  stdout: /' "$tmp/out"; }
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

# expect_bad_ports [OPTION ARGS...]: port strings that parse but that their
# kind's driver refuses (its argument, a key, a value, values that do not
# go together), one for each thing each in-tree driver checks, each with
# a piece of the driver's reason. Each is refused while the command line
# is read: exit 2, "port 'STRING': " and the reason, as the tool's PORT,
# or with OPTION as its value ("OPTION: port ..."), ARGS after it. A kind
# not built in (no "  KIND:" line in $tmp/help, the --help output) is
# refused as unknown, exit 2 too.
t_tab=$(printf '\t')
expect_bad_ports() {
	opt=${1:-}
	[ $# -eq 0 ] || shift
	while IFS="$t_tab" read -r s pat <&3; do
		kind=${s%%:*}
		grep -q "^  $kind:" "$tmp/help" || pat="unknown kind '$kind'"
		if [ -n "$opt" ]; then
			expect 2 "^$tool_name: $opt: port '$s': .*$pat" -d 1 \
				"$opt" "$s" "$@"
		else
			expect 2 "^$tool_name: port '$s': .*$pat" -d 1 "$s"
		fi
	done 3<<'LIST'
afxdp:	an interface name of 1\.\.15 characters
afxdp:@1	an interface name of 1\.\.15 characters
afxdp:lo@x	queues are @Q or @Q1-Q2
afxdp:lo,bogus=1	unknown parameter 'bogus'
afxdp:uxdpnosuch0@3-1	queues are @Q or @Q1-Q2 with Q1 <= Q2
afxdp:uxdpnosuch0@0-64	65 queues: at most 64
afxdp:uxdpnosuch0,copy,zerocopy	copy and zerocopy both asked for
afxdp:uxdpnosuch0,mode=fast	mode=fast: native or generic
afxdp:uxdpnosuch0,rx_size=100	rx_size=100: a power of two
afxdp:uxdpnosuch0,chunk=3000	chunk=3000: 2048 or 4096
afxdp:uxdpnosuch0,shared=	shared=: a group name
null:	no NAME
null:averyveryverylongname	longer than a device name
null:n,len=3	len=3: want a number
null:n,len=20,seq	seq needs len=50
null:n,count=abc	count=abc
veth:	no NAME
veth:v,ring=3	ring_size 3: a power of two
veth:v,peer=v	two names
veth:v,mtu=10	mtu=10
nic:	no NAME
nic:n,loop=n	looped to itself
nic:n,ring=100	rx_ring 100: a power of two
nic:n,ring=64,threshold=40	refill_threshold 40
pcap:	give a file to replay \(pcap:FILE\) or to write
pcap:,out=	out= needs a file name
pcap:in.pcap,loop=y	loop=y
pcap:in.pcap,colour=red	unknown parameter 'colour'
LIST
}

# expect_open_fails [OPTION ARGS...]: port strings the driver takes that
# fail only when opened (a file, an interface or a device not there): exit
# 1, the reason, and nothing left behind. As for expect_bad_ports.
expect_open_fails() {
	opt=${1:-}
	[ $# -eq 0 ] || shift
	while IFS="$t_tab" read -r s pat <&3; do
		kind=${s%%:*}
		grep -q "^  $kind:" "$tmp/help" || continue
		s=$(printf '%s' "$s" | sed "s|TMP|$tmp|g")
		if [ -n "$opt" ]; then
			expect 1 "$opt: port '$s': .*$pat" -d 1 "$opt" "$s" "$@"
		else
			expect 1 "port '$s': .*$pat" -d 1 "$s"
		fi
	done 3<<'LIST'
afxdp:uxdpnosuch0	afxdp uxdpnosuch0: (no such interface|not permitted)
nic:n,loop=uxdpabsent	loop=uxdpabsent: no nic of that name
veth:v45678901234567	too long to make its peer's
pcap:TMP/out.pcap	out\.pcap: No such file or directory \(pcap:FILE replays FILE; to capture, use pcap:,out=FILE\)
pcap:TMP/in.pcap,out=TMP/o.pcap	in\.pcap: No such file or directory$
LIST
	[ ! -e "$tmp/out.pcap" ] && [ ! -e "$tmp/o.pcap" ] ||
		fail "a failed pcap open left a file behind"
}
