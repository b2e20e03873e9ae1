#!/bin/sh
# uxdp-fwd: --help and the man page, bad usage (exit 2, a message naming
# the problem), reflect and forward over null ports with exact totals, every
# built-in program and programs from a shared object, the ends (--count,
# --duration, SIGINT and SIGTERM when started in the background, where SIGINT
# comes ignored) and lost output (exit 1). Then the sections that need
# drivers not always built: pcap (packet contents) and afxdp (real
# interfaces in network namespaces), each skipped, loudly, without its kind.
#
#	test_fwd.sh UXDP_FWD EXAMPLE_SO [MAN_PAGE]
set -eu
fwd=$1
example=$2
man=${3:-}
tool=$fwd tool_name=uxdp-fwd tool_timeout=30
. "$(dirname "$0")/t_tool.sh"
run_fwd() {
	run_tool "$@"
}

# json_ok FILE WHAT EXPR... (t_tool.sh): FILE is JSON lines, intervals
# then one totals object (t; P is its ports by name, iv the intervals),
# every port's outcomes add up, the audit found nothing misplaced, and
# each Python EXPR holds, as json_check_all checks.

# Of every output: intervals then the totals, whose counts add up.
fwd_checks=$(cat <<'PY'
assert t["type"] == "totals", "last line is not the totals"
iv = L[:-1]
assert all(x["type"] == "interval" for x in iv), "not intervals"
P = {p["name"]: p for p in t["ports"]}
for p in t["ports"]:
    rx = p["rx"]
    outcomes = (rx["pass"] + rx["pass_dropped"] + rx["drop"] +
                rx["tx"] + rx["redirect"] + rx["aborted"] +
                rx["no_prog"] + rx["tx_err"] + rx["redirect_err"] +
                rx["redirect_no_target"] + rx["frame_err"])
    assert outcomes == rx["packets"], "%s: %d packets, %d " \
        "outcomes" % (p["name"], rx["packets"], outcomes)
    assert p.get("audit", {}).get("misplaced", 0) == 0, p["audit"]
fwd = sum(p["rx"]["tx"] + p["rx"]["redirect"] for p in t["ports"])
assert t["forwarded"] == fwd, "forwarded %d, ports say %d" % (
    t["forwarded"], fwd)
assert t["received"] == sum(p["rx"]["packets"] for p in t["ports"])
PY
)

# ---- --help, and the man page describes every option -------------------------
expect 0 "" --help
cp "$tmp/out" "$tmp/help"
for opt in --prog --prog-args --duration --count --interval --threads \
	   --cpus --budget --bulk --queues --batch --busy-poll --copy \
	   --zero-copy --json --quiet --verbose --help; do
	grep -q -e "$opt\b" "$tmp/help" || fail "--help does not mention $opt"
done
grep -q "^  null:NAME" "$tmp/help" || fail "--help lists no null port kind"
grep -q "^usage: uxdp-fwd \[options\] PORT \[PORT\]" "$tmp/help" ||
	fail "--help has no usage line"
if [ -n "$man" ]; then
	# Every option --help lists, in the man page (roff writes '-' as
	# '\-').
	for opt in $(sed -n '/^options:/,/^$/s/^ *\(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p' \
		     "$tmp/help"); do
		roff=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
		grep -q -e "$roff" "$man" ||
			fail "man page does not describe $opt"
	done
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -P-c -P-b -P-u "$man" >"$tmp/man.txt" 2>"$tmp/man.err" ||
			fail "man page does not render: $(cat "$tmp/man.err")"
		grep -q "EXIT STATUS" "$tmp/man.txt" ||
			fail "rendered man page lacks EXIT STATUS"
	else
		echo "SKIP: groff missing, man page not rendered"
	fi
fi
rc=0
"$fwd" --help >/dev/full 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "--help > /dev/full: exit $rc, want 1"

# ---- bad usage: exit 2 --------------------------------------------------------
expect 2 "no PORT given"
expect 2 "3 ports given.*'null:c' is one too many" null:a null:b null:c
expect 2 "unknown option '--bogus'" --bogus null:a
expect 2 "unknown option '-x'" -x null:a
expect 2 "option '--json' takes no value" --json=1 null:a
expect 2 "option '--bulk' needs a value" null:a --bulk
expect 2 "--count: 'abc' is not a number" --count abc null:a
expect 2 "--count: '-5' is not a number" --count -5 null:a
expect 2 "--threads: 0 is out of range: 1\.\.64" --threads 0 null:a
expect 2 "--bulk: 0 is out of range: 1\.\.16" --bulk 0 null:a
expect 2 "--bulk: 17 is out of range: 1\.\.16" --bulk 17 null:a
expect 2 "--budget: 0 is out of range" --budget 0 null:a
expect 2 "--duration: '1s' is not a number of seconds" -d 1s null:a
expect 2 "--duration: '0.0001' is not a number of seconds" -d 0.0001 null:a
expect 2 "--interval: 0.05 is out of range" -i 0.05 null:a
expect 2 "--batch: 100 is not a power of two" --batch 100 null:a
expect 2 "unknown kind 'foo' \(built in: null, veth" foo:x
expect 2 "port 'nocolon': want KIND:ARG" nocolon
expect 2 "--prog 'nosuch': not a built-in program" --prog nosuch null:a
expect 2 "--prog ':x': want FILE.so:NAME" --prog :x null:a
expect 2 "--prog-args: the built-in program 'drop' takes no arguments" \
	--prog drop --prog-args x null:a
expect 2 "--copy and --zero-copy exclude each other" --copy --zero-copy \
	null:a
expect 2 "--copy applies to afxdp ports only, and no port is one" \
	--copy null:a
expect 2 "--busy-poll applies to afxdp ports only" --busy-poll 64 null:a
expect 2 "--batch applies to afxdp ports only" --batch 1024 null:a
expect 2 "--queues applies to afxdp and veth ports only" --queues 2 null:a
expect 2 "--cpus '0,x': want a list" --cpus 0,x null:a
expect 2 "--cpus: CPU 1000 is not one this process may run on" \
	--cpus 1000 null:a
# A port its driver refuses is bad usage too, told in the driver's words,
# for every kind (t_tool.sh has the list)...
expect 2 "^uxdp-fwd: port 'null:g,count=abc': .*count=abc" null:g,count=abc
expect_bad_ports
# ... also when the options' parameters are what make it bad.
if grep -q "^  afxdp:" "$tmp/help"; then
	expect 2 "^uxdp-fwd: port 'afxdp:uxdpnosuch0@0-64': .*65 queues" \
		--queues 65 afxdp:uxdpnosuch0
fi

# ---- set-up failures: exit 1, the message says which and why -------------------
# What only opening can find out: a file, an interface, a device not there.
expect_open_fails
expect 1 "port 'null:a': .*taken" null:a null:a
expect 1 "'veth:v' and 'veth:v' are the same device" veth:v veth:v
expect 1 "--prog nosuch\.so:x: .*nosuch\.so.*(not found|No such file)" \
	--prog nosuch.so:x null:g,count=1k -c 1k
expect 1 "defines no program 'nosuch'" --prog "$example:nosuch" null:g
expect 1 "udp_only: init refused args 'bad'" --prog "$example:udp_only" \
	--prog-args bad null:g

# ---- reflect on one port: every packet back out of it ---------------------------
expect 0 "" --json --count 200000 null:g0,count=200k
json_ok "$tmp/out" "reflect" 't["stop"] == "count"' \
	't["mode"] == "reflect"' 't["received"] == 200000' \
	't["forwarded"] == 200000' 't["dropped"] == 0' \
	'P["g0"]["rx"]["tx"] == 200000' 'P["g0"]["tx"]["packets"] == 200000' \
	'P["g0"]["audit"]["in_flight"] == 0' \
	'P["g0"]["audit"]["chunks"] == 1024'
# The same in text: the totals line adds up.
expect 0 "" --count 200000 null:g0,count=200k
grep -q "^received 200,000, forwarded 200,000 (.* pps), dropped 0$" \
	"$tmp/out" || fail "reflect: text totals: $(cat "$tmp/out")"
grep -q "stopped by count" "$tmp/out" || fail "reflect: no stop reason"

# ---- forward between two ports: exactly the packets generated -------------------
expect 0 "" --json --count 100000 null:g1,count=100k null:s1,sink
json_ok "$tmp/out" "forward" 't["mode"] == "forward"' \
	't["forwarded"] == 100000' 't["dropped"] == 0' \
	'P["g1"]["rx"]["redirect"] == 100000' \
	'P["s1"]["tx"]["packets"] == 100000' \
	'P["s1"]["tx"]["bytes"] == 6400000' 'P["s1"]["rx"]["packets"] == 0' \
	'P["g1"]["audit"]["in_flight"] == 0' 't["threads"] == 1'
# Two threads: one per port.
expect 0 "" --json --threads 2 -c 100k null:g1,count=100k null:s1,sink
json_ok "$tmp/out" "forward, 2 threads" 't["threads"] == 2' \
	't["forwarded"] == 100000' 'P["s1"]["tx"]["packets"] == 100000'
# More threads than queues: as many as there are queues, and a warning.
expect 0 "4 poll threads asked for, but the ports have 2 RX queues: using 2" \
	--json -t 4 -c 10k null:g1,count=10k null:s1,sink
json_ok "$tmp/out" "forward, -t 4" 't["threads"] == 2'
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
expect 0 "" --json --cpus "$cpu" -c 10k null:g1,count=10k null:s1,sink
json_ok "$tmp/out" "forward, --cpus $cpu" 't["threads"] == 1' \
	't["forwarded"] == 10000'

# --bulk: frames per transmit call into the egress port.
expect 0 "" --json --bulk 1 -c 100k null:g1,count=100k null:s1,sink
json_ok "$tmp/out" "--bulk 1" 'P["s1"]["tx"]["xmit_calls"] == 100000'
expect 0 "" --json -c 100k null:g1,count=100k null:s1,sink
json_ok "$tmp/out" "default bulk" \
	'P["s1"]["tx"]["xmit_calls"] <= 100000 // 16 + 16'
# --budget: no poll takes more than that from a queue.
expect 0 "" --json --budget 8 -c 10k null:g1,count=10k null:s1,sink
json_ok "$tmp/out" "--budget 8" '0 < P["g1"]["rx_batch"] <= 8' \
	'P["g1"]["rx"]["polls"] >= 10000 // 8'

# A port that refuses: drops by reason, in text too.
expect 0 "" --json -c 10k null:g2,count=10k veth:v2
json_ok "$tmp/out" "forward to a refusing veth" 't["forwarded"] == 0' \
	'P["g2"]["rx"]["redirect_err"] == 10000' \
	'P["v2"]["tx"]["down"] == 10000' 't["dropped"] == 10000'
expect 0 "" -c 10k null:g2,count=10k veth:v2
grep -q "^  drops: redirect_err 10,000$" "$tmp/out" ||
	fail "no drop reason for the generator: $(cat "$tmp/out")"
grep -q "^  drops: txq_down 10,000$" "$tmp/out" ||
	fail "no drop reason for the veth: $(cat "$tmp/out")"
# --queues reaches a veth port as its own parameter.
expect 0 "" --json --queues 3 -c 1k null:g3,count=1k veth:v3
json_ok "$tmp/out" "--queues 3" 'P["v3"]["port"] == "veth:v3,queues=3"'
# -v: every counter, the audit, the set-up on stderr.
expect 0 "thread 0 polls g4 queue 0" -v -c 10k null:g4,count=10k
for want in "rx\.packets *10,000" "tx\.packets *10,000" "pool\.alloc" \
	    "audit: 1024 chunks, 0 in flight, 0 misplaced"; do
	grep -Eq "$want" "$tmp/out" || fail "-v: no /$want/ in the output"
done

# ---- the built-in programs ------------------------------------------------------
expect 0 "" --json --prog drop -c 100k null:g5,count=100k null:s5,sink
json_ok "$tmp/out" "--prog drop" 't["prog"] == "drop"' \
	't["forwarded"] == 0' 't["dropped"] == 100000' \
	'P["g5"]["rx"]["drop"] == 100000' 'P["s5"]["tx"]["packets"] == 0'
expect 0 "" --json --prog count -c 100k null:g5,count=100k null:s5,sink
json_ok "$tmp/out" "--prog count" 't["dropped"] == 100000' \
	'P["g5"]["counted"] == {"packets": 100000, "bytes": 6400000}' \
	'P["s5"]["counted"] == {"packets": 0, "bytes": 0}'
expect 0 "" --prog count -c 100k null:g5,count=100k
grep -q "^  counted 100,000 packets, 6,400,000 bytes$" "$tmp/out" ||
	fail "--prog count: text: $(cat "$tmp/out")"
expect 0 "" --json --prog macswap -c 100k null:g5,count=100k null:s5,sink
json_ok "$tmp/out" "--prog macswap" 't["forwarded"] == 100000' \
	'P["s5"]["tx"]["packets"] == 100000'
expect 0 "" --json --prog macswap -c 100k null:g5,count=100k,len=14
json_ok "$tmp/out" "--prog macswap, 14-byte frames" \
	't["forwarded"] == 100000' 'P["g5"]["rx"]["aborted"] == 0'

# ---- programs from a shared object ----------------------------------------------
# The default packet is UDP to port 1025: PASS lets it through.
expect 0 "" --json --prog "$example:udp_only" --prog-args dport=1025 \
	-c 100k null:g6,count=100k null:s6,sink
json_ok "$tmp/out" "udp_only dport=1025" 't["forwarded"] == 100000' \
	'P["s6"]["tx"]["packets"] == 100000'
expect 0 "" --json --prog "$example:udp_only" --prog-args dport=53 \
	-c 100k null:g6,count=100k null:s6,sink
json_ok "$tmp/out" "udp_only dport=53" 't["forwarded"] == 0' \
	'P["g6"]["rx"]["drop"] == 100000'
# grow calls a libuxdp helper the tool provides: 10 bytes more per packet.
expect 0 "" --json --prog "$example:grow" --prog-args by=10 \
	-c 100k null:g6,count=100k null:s6,sink
json_ok "$tmp/out" "grow by=10" 't["forwarded"] == 100000' \
	'P["s6"]["tx"]["bytes"] == 100000 * 74'

# ---- the ends ---------------------------------------------------------------------
# --duration: exits by itself, 0, with intervals and totals. Five intervals
# are due; a stall skips the ticks it missed, so at least 3.
start=$(date +%s%N)
expect 0 "" --json -d 1 -i 0.2 null:g7,pps=100k null:s7,sink
end=$(date +%s%N)
json_ok "$tmp/out" "--duration 1" 't["stop"] == "duration"' \
	'0.95 <= t["elapsed_s"] < 3' 'len(iv) >= 3' \
	'all(len(x["ports"]) == 2 for x in iv)' \
	'all(x["ports"][0]["rx_batch"] >= 0 for x in iv)' \
	'sum(x["ports"][0]["rx"]["packets"] for x in iv) <= t["received"]' \
	't["received"] > 10000' \
	'all("afxdp" not in p for x in iv + [t] for p in x["ports"])'
[ $(((end - start) / 1000000)) -lt 10000 ] ||
	fail "--duration 1 took $(((end - start) / 1000000)) ms"
expect 0 "" -d 0.3 -i 0.1 null:g7,pps=100k null:s7,sink
grep -q "^g7 .* rx/s .* fwd/s .* tx/s .* drop/s .* batch$" "$tmp/out" ||
	fail "--duration: no interval line in $(cat "$tmp/out")"
grep -q "stopped by duration" "$tmp/out" || fail "--duration: stop reason"
# Only afxdp ports have kernel counters and a line on what the kernel gave.
! grep -q "kernel:" "$tmp/out" || fail "null ports with kernel counters"
! grep -q "XDP" "$tmp/err" || fail "null ports with an XDP line: $(cat "$tmp/err")"

# signal_test SIG: started in the background by this (non-interactive)
# shell, so SIGINT arrives ignored; it must still stop, cleanly, with 0.
signal_test() {
	sig=$1
	signal_stop "$sig" --json null:g8,pps=200k null:s8,sink
	json_ok "$tmp/sig.out" "SIG$sig" "t['stop'] == 'SIG$sig'" \
		't["received"] > 0' 'P["s8"]["tx"]["packets"] == t["forwarded"]'
}
# The case this is about: does this shell start background jobs with SIGINT
# ignored? (sh without job control does; then so does uxdp-fwd.)
ign=$( (sleep 5 & p=$!
	  sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$p/status"
	  kill "$p") 2>/dev/null)
if [ $((0x$ign & 2)) -eq 0 ]; then
	echo "NOTE: background jobs start with SIGINT caught here, not" \
	     "ignored: the inherited-ignore case is not exercised"
fi
signal_test INT
signal_test TERM

# ---- output that cannot be written: exit 1 -----------------------------------------
for mode in --json --verbose; do
	rc=0
	run_fwd "$mode" -c 1k null:g9,count=1k >/dev/full 2>"$tmp/err" ||
		rc=$?
	[ "$rc" -eq 1 ] &&
		grep -q "writing output: No space left on device" "$tmp/err" ||
		fail "$mode > /dev/full: exit $rc, $(cat "$tmp/err")"
done
# A reader that goes away: EPIPE, not death by SIGPIPE.
{ rc=0; run_fwd --json -d 5 -i 0.1 null:g9,pps=10k 2>"$tmp/err" || rc=$?
  echo "$rc" >"$tmp/rc"; } | head -c 1 >/dev/null
[ "$(cat "$tmp/rc")" = 1 ] && grep -q "writing output: Broken pipe" \
	"$tmp/err" || fail "| head: exit $(cat "$tmp/rc"), $(cat "$tmp/err")"

# ---- pcap: what the programs did to the packets --------------------------------------
if grep -q "^  pcap:" "$tmp/help"; then
	expect 0 "" --prog macswap -c 10 null:g10,count=10 \
		"pcap:,out=$tmp/swapped.pcap"
	python3 - "$tmp/swapped.pcap" <<'PY' || fail "macswap: bad frames"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert len(data) > 24, "empty capture"
off, n = 24, 0
while off < len(data):
    incl = struct.unpack_from("<I" if data[:4] in
                              (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
                              else ">I", data, off + 8)[0]
    frame = data[off + 16:off + 16 + incl]
    # The generator's frames go from ...:01 to ...:02; swapped, back.
    assert frame[0:6] == bytes.fromhex("020000000001"), frame[:12].hex()
    assert frame[6:12] == bytes.fromhex("020000000002"), frame[:12].hex()
    off += 16 + incl
    n += 1
assert n == 10, "%d frames" % n
PY
	# A replay stops the tool at its end; a file broken mid-record is
	# replayed up to the break, said on stderr, and exits 1.
	python3 - "$tmp/cut.pcap" "$tmp/whole.pcap" <<'PY'
import struct, sys
pkt = bytes.fromhex("020000000002020000000001" "88b5") + bytes(50)
for path, cut in ((sys.argv[1], True), (sys.argv[2], False)):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(11):
            f.write(struct.pack("<IIII", i, 0, 64, 64))
            f.write(pkt[:20] if cut and i == 10 else pkt)
PY
	expect 0 "" -d 30 "pcap:$tmp/whole.pcap" null:s11,sink
	grep -q "stopped by end of replay" "$tmp/out" &&
		grep -q "^received 11," "$tmp/out" ||
		fail "whole pcap: $(cat "$tmp/out")"
	expect 1 "replay stopped after 10 records: .*truncated" -d 30 \
		"pcap:$tmp/cut.pcap" null:s12,sink
	grep -q "^received 10," "$tmp/out" || fail "cut pcap: $(cat "$tmp/out")"
else
	echo "SKIP: pcap kind not built in: packet contents not checked"
fi

# ---- afxdp: real interfaces, veth pairs in network namespaces -------------------------
# As root, in a namespace this script makes (and deletes): a0 = a1 and
# b0 = b1, two kernel veth pairs. uxdp-fwd owns a1 and b1; frames sent into
# a0 must come out of b0 (forward) or back out of a0 (reflect), exactly as
# many as were sent, and nothing may stay attached once it has gone.
# The namespace goes at exit too (t_tool.sh); this is for going sooner.
ns_cleanup() {
	if [ -n "$ns" ]; then
		ip netns del "$ns" 2>/dev/null || true
		ns=
	fi
}

# link_stat DEV rx|tx: packets counted by the kernel on DEV.
link_stat() {
	ip -n "$ns" -s -j link show "$1" | python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["stats64"][sys.argv[1]]["packets"])' "$2"
}

# send DEV N: N 64-byte UDP frames into DEV (AF_PACKET), as null makes.
send() {
	ip netns exec "$ns" python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
pkt = bytes.fromhex("020000000002020000000001080045000032000040004011b6b7"
                    "c0000201c000020204000401001e0000") + bytes(22)
assert len(pkt) == 64
for _ in range(int(sys.argv[2])):
    s.send(pkt)
PY
}

# afxdp_run WANT-DEV WANT-DIR ARGS...: uxdp-fwd ARGS in the namespace until
# it has received 1000 frames; once it is up, 1000 go into a0, and WANT-DEV
# must count 1000 more in WANT-DIR (rx or tx).
afxdp_run() {
	dev=$1 dir=$2
	shift 2
	before=$(link_stat "$dev" "$dir")
	ip netns exec "$ns" timeout -s KILL 30 "$fwd" -c 1000 -d 20 "$@" \
		>"$tmp/afx.out" 2>"$tmp/afx.err" &
	bg_pid=$!
	# Up when the header is out (printed after the threads start).
	i=0
	while ! grep -q "Ctrl-C stops" "$tmp/afx.out" && [ $i -lt 100 ] &&
	      kill -0 "$bg_pid" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	send a0 1000
	rc=0
	wait "$bg_pid" || rc=$?
	bg_pid=
	[ "$rc" -eq 0 ] || fail "afxdp $*: exit $rc: $(cat "$tmp/afx.err")"
	grep -q "stopped by count" "$tmp/afx.out" ||
		fail "afxdp $*: not stopped by --count: $(cat "$tmp/afx.out")"
	grep -q "^received 1,000, forwarded 1,000 " "$tmp/afx.out" ||
		fail "afxdp $*: totals: $(cat "$tmp/afx.out")"
	# What the kernel gave each afxdp port, and its counters.
	for a in "$@"; do
		case $a in afxdp:*) ;; *) continue ;; esac
		d=${a#afxdp:}
		grep -q "^uxdp-fwd: $d: XDP [a-z]* (.*), copy mode, need_wakeup on, queue 0 bound (of 1)$" \
			"$tmp/afx.err" ||
			fail "afxdp $*: no mode line for $d: $(cat "$tmp/afx.err")"
		sed -n "/^$d /,/^[^ ]/p" "$tmp/afx.out" |
			grep -q "^  kernel:.* rx_ring_full [0-9]" ||
			fail "afxdp $*: no kernel counters for $d: $(cat "$tmp/afx.out")"
	done
	after=$(link_stat "$dev" "$dir")
	[ $((after - before)) -eq 1000 ] ||
		fail "afxdp $*: $dev $dir $((after - before)) frames, want 1000"
	# Nothing left attached to the interfaces it used.
	for d in a1 b1; do
		if ip -n "$ns" -j link show "$d" | grep -q '"xdp"'; then
			fail "afxdp $*: an XDP program left on $d"
		fi
	done
}

if grep -q "^  afxdp:" "$tmp/help"; then
	# The options reach an afxdp port as its own parameters (an
	# interface that does not exist: the open fails and names the
	# port string it was given).
	expect 1 "port 'afxdp:uxdpnosuch0@0-1,copy,rx_size=1024,tx_size=1024,busy_poll=64'" \
		--queues 2 --copy --batch 1024 --busy-poll 64 \
		afxdp:uxdpnosuch0
	expect 1 "port 'afxdp:uxdpnosuch0@3,zerocopy'" --queues 2 \
		--zero-copy afxdp:uxdpnosuch0@3
	if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
		echo "SKIP: afxdp end-to-end: needs root and ip(8)"
	elif ! ip netns add "uxdp-fwd-$$" 2>"$tmp/err"; then
		echo "SKIP: afxdp end-to-end: no network namespace:" \
		     "$(cat "$tmp/err")"
	else
		ns=uxdp-fwd-$$
		ip -n "$ns" link add a0 type veth peer name a1
		ip -n "$ns" link add b0 type veth peer name b1
		# Nothing but the test's frames on the wires: no IPv6
		# neighbour discovery, no addresses, so no ARP.
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
		for d in a0 a1 b0 b1; do
			ip -n "$ns" link set "$d" up
		done
		afxdp_run b0 rx afxdp:a1 afxdp:b1
		afxdp_run a0 rx --prog macswap afxdp:a1
		ns_cleanup
	fi
else
	echo "SKIP: afxdp kind not built in: no tests over real interfaces"
fi

json_check_all "$fwd_checks"
if [ "$failed" -ne 0 ]; then
	echo "test_fwd: FAILED"
	exit 1
fi
echo "test_fwd: all passed"
