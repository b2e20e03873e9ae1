#!/bin/sh
# uxdp-xsk: --help and the man page, bad usage (exit 2, a message naming the
# problem), set-up failures (exit 1, the library's reason), and exact totals:
# rxdrop on a null generator in copy and zero-copy, aligned and unaligned,
# busy and --poll; one and two queues of a veth fed from its peer; txonly
# into a sink and over a veth; l2fwd on null and over a veth, the far end
# checking that every packet came back with its addresses swapped; every
# UMEM chunk accounted for after each run. Then the ends (--count,
# --duration, --tx-count, SIGINT and SIGTERM when started in the
# background, where SIGINT comes ignored) and lost output (exit 1). rxdrop
# with exact totals on a nic port too, and as root txonly through a kernel
# AF_XDP socket (afxdp:) on a veth whose far end counts the packets.
#
#	test_xsk_tool.sh UXDP_XSK [MAN_PAGE]
set -eu
xsk=$1
man=${2:-}
tool=$xsk tool_name=uxdp-xsk tool_timeout=60
. "$(dirname "$0")/t_tool.sh"
run_xsk() {
	run_tool "$@"
}

# json_ok FILE WHAT EXPR... (t_tool.sh): FILE is JSON lines, intervals
# then one totals object t, in which S is the sockets by queue, P the
# port, R the peer (or None), F the feeds and iv the intervals; every
# socket's audit placed every chunk exactly once, the sums add up, and
# each Python EXPR holds, as json_check_all checks.

# Of every output: intervals then the totals, whose counts add up and
# whose audits found every chunk.
xsk_checks=$(cat <<'PY'
OUTCOMES = ("pass", "pass_dropped", "drop", "tx", "redirect", "aborted",
            "no_prog", "tx_err", "redirect_err", "redirect_no_target",
            "frame_err")
assert t["type"] == "totals", "last line is not the totals"
iv = L[:-1]
assert all(x["type"] == "interval" for x in iv), "not intervals"
S = {s["queue"]: s for s in t["sockets"]}
P, R, F = t["port"], t.get("peer"), t["feeds"]
for s in t["sockets"]:
    a = s["audit"]
    assert a["misplaced"] == 0, "queue %d: %s" % (s["queue"], a)
    places = sum(a[k] for k in ("fill", "driver", "free_list",
                 "comp", "rx_ring", "tx_ring", "app"))
    assert places == a["chunks"] == t["frames"], a
assert t["rx_packets"] == sum(s["app"]["rx_packets"]
                              for s in t["sockets"])
assert t["tx_packets"] == sum(s["app"]["tx_packets"]
                              for s in t["sockets"])
for d in [P] + ([R] if R else []) + F:
    rx = d["rx"]
    assert sum(rx[k] for k in OUTCOMES) == rx["packets"], \
        "%s: outcomes do not add up: %s" % (d["name"], rx)
    assert d["audit"]["misplaced"] == 0, d["audit"]
PY
)

# ---- --help, and the man page describes every option -------------------------
expect 0 "" --help
cp "$tmp/out" "$tmp/help"
for opt in --rxdrop --txonly --l2fwd --queue --copy --zero-copy --batch \
	   --frames --frame-size --ring-size --unaligned --need-wakeup \
	   --no-need-wakeup --poll --touch --tx-len --tx-count --cpus \
	   --app-cpus --budget --peer --feed --duration --count --interval \
	   --json --extra-stats --quiet --help; do
	grep -q -e "$opt\b" "$tmp/help" || fail "--help does not mention $opt"
done
grep -q "^  null:NAME" "$tmp/help" || fail "--help lists no null port kind"
grep -q "^usage: uxdp-xsk \[options\] PORT$" "$tmp/help" ||
	fail "--help has no usage line"
if [ -n "$man" ]; then
	# Every option --help lists, in the man page (roff writes '-' as
	# '\-').
	nopt=0
	for opt in $(sed -n '/^options:/,/^$/s/^ *\(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p' \
		     "$tmp/help"); do
		nopt=$((nopt + 1))
		roff=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
		grep -q -e "$roff" "$man" ||
			fail "man page does not describe $opt"
	done
	[ "$nopt" -ge 29 ] || fail "only $nopt options found in --help"
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -P-c -P-b -P-u "$man" >"$tmp/man.txt" 2>"$tmp/man.err" ||
			fail "man page does not render: $(cat "$tmp/man.err")"
		[ ! -s "$tmp/man.err" ] ||
			fail "groff warns: $(cat "$tmp/man.err")"
		grep -q "EXIT STATUS" "$tmp/man.txt" ||
			fail "rendered man page lacks EXIT STATUS"
	else
		echo "SKIP: groff missing, man page not rendered"
	fi
fi
rc=0
"$xsk" --help >/dev/full 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "--help > /dev/full: exit $rc, want 1"

# ---- bad usage: exit 2 --------------------------------------------------------
expect 2 "no PORT given"
expect 2 "one PORT only \('null:b' is one too many\)" null:a null:b
expect 2 "unknown option '--bogus'" --bogus null:a
expect 2 "unknown option '-x'" -x null:a
expect 2 "option '--json' takes no value" --json=1 null:a
expect 2 "option '--batch' needs a value" null:a --batch
expect 2 "--rxdrop, --txonly and --l2fwd exclude each other" -r -t null:a
expect 2 "--rxdrop, --txonly and --l2fwd exclude each other" --l2fwd \
	--txonly null:a
expect 2 "--copy and --zero-copy exclude each other" --copy --zero-copy \
	null:a
expect 2 "--need-wakeup and --no-need-wakeup exclude each other" \
	--need-wakeup -m null:a
expect 2 "--frame-size: 1024 is out of range: 2048\.\.4096" -f 1024 null:a
expect 2 "--frame-size 3000: 2048 or 4096" -f 3000 null:a
expect 2 "--ring-size: 1000 is not a power of two" --ring-size 1000 null:a
expect 2 "--batch 4096 is more than --ring-size 2048" -b 4096 null:a
expect 2 "--batch: 0 is out of range" -b 0 null:a
expect 2 "--frames: 8 is out of range: 16\.\." --frames 8 null:a
expect 2 "--tx-len applies to --txonly only" --tx-len 100 null:a
expect 2 "--tx-count applies to --txonly only" --l2fwd -C 5 null:a
expect 2 "--touch applies to --rxdrop only" --l2fwd --touch null:a
expect 2 "--tx-len 3000 does not fit a 2048-byte frame" --txonly -s 3000 \
	-f 2048 null:a
expect 2 "--tx-len: 41 is out of range: 42\.\." --txonly -s 41 null:a
expect 2 "--tx-count: 0 is out of range" --txonly -C 0 null:a
expect 2 "--queue '0,0': queue 0 twice" --queue 0,0 null:a
expect 2 "--queue 'x': want a queue or a list" --queue x null:a
expect 2 "--queue '3-1': want a queue or a list" --queue 3-1 null:a
expect 2 "--queue '70000': queues are 0\.\.65535" --queue 70000 null:a
expect 2 "--queue: more than 16 queues" --queue 0-16 null:a
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
expect 2 "--cpus lists 2 CPUs for 1 queue: one per queue" \
	--cpus "$cpu,$cpu" null:a
expect 2 "--app-cpus lists 1 CPU for 2 queues" --queue 0-1 \
	--app-cpus "$cpu" null:a
expect 2 "--cpus: CPU 1000 is not one this process may run on" \
	--cpus 1000 null:a
expect 2 "--cpus '0,x': want a list" --cpus 0,x null:a
expect 2 "--feed sends through --peer: give both" --feed null:f veth:v
expect 2 "--feed: txonly sockets receive nothing" --txonly --peer veth:vp \
	--feed null:f veth:v
expect 2 "--count: 'abc' is not a number" --count abc null:a
expect 2 "--duration: '1s' is not a number of seconds" -d 1s null:a
expect 2 "--interval: 0.05 is out of range" -i 0.05 null:a
expect 2 "unknown kind 'foo' \(built in: null, veth" foo:x
expect 2 "port 'nocolon': want KIND:ARG" nocolon
expect 2 "--peer: port 'foo:x': unknown kind 'foo'" --peer foo:x veth:v
expect 2 "--feed: port 'bar:y': unknown kind 'bar'" --peer veth:vp \
	--feed bar:y veth:v
# A port its driver refuses is bad usage too, told in the driver's words,
# for every kind (t_tool.sh has the list), whichever option names it.
expect 2 "^uxdp-xsk: port 'null:g,count=abc': .*count=abc" null:g,count=abc
expect 2 "^uxdp-xsk: --feed: port 'null:f,pps=x': .*pps=x" --peer veth:vp \
	--feed null:f,pps=x veth:v
expect_bad_ports
expect_bad_ports --peer veth:v
expect_bad_ports --feed --peer veth:vp veth:v

# ---- set-up failures: exit 1, the library's reason ------------------------------
# What only opening can find out: a file, an interface, a device not there.
expect_open_fails
expect_open_fails --peer veth:v
expect 1 "socket on g queue 1: .*g has no queue 1 \(it has 1\)" --queue 1 \
	null:g
expect 1 "socket on v queue 0: .*cannot do zero-copy" --zero-copy veth:v
expect 1 "--peer 'veth:v' is PORT itself" --peer veth:v veth:v

# ---- rxdrop on a generator: exactly the packets it made -------------------------
# Zero-copy with no more chunks than RX ring entries cannot overflow the
# ring (the generator waits for fill entries): exact at full speed. Copy
# mode copies into chunks taken from the fill ring, which an application
# that falls behind empties: a paced generator and chunks for a third of
# a second of it, so that a loaded machine does not lose any.
for bind in --zero-copy --copy; do
	for align in "" --unaligned; do
		for poll in "" --poll; do
			if [ "$bind" = --zero-copy ]; then
				port=null:gz,count=50k
				n=50000
				opts="--frames 2048"
			else
				port=null:gc,count=20k,pps=60k
				n=20000
				opts="--frames 16384 --ring-size 16384 -f 2048"
			fi
			# shellcheck disable=SC2086
			expect 0 "" --json -c "$n" $bind $align $poll $opts \
				"$port"
			json_ok "$tmp/out" "rxdrop $bind $align $poll" \
				't["stop"] == "count"' 't["mode"] == "rxdrop"' \
				"t['rx_packets'] == $n" \
				"S[0]['bind'] == '${bind#--}'" \
				"S[0]['app']['rx_bytes'] == 64 * $n" \
				'S[0]["xsk"]["rx_dropped"] == 0' \
				'S[0]["xsk"]["rx_ring_full"] == 0' \
				"P['rx']['redirect'] == $n" \
				"t['unaligned'] == $([ -n "$align" ] && echo True || echo False)" \
				"S[0]['app']['sleeps'] $([ -n "$poll" ] && echo '>' || echo '==') 0" \
				'S[0]["audit"]["fill"] + S[0]["audit"]["free_list"] == t["frames"]'
		done
	done
done
# On a nic port, the same: both bindings, both UMEM modes, the nic's
# batch refill and its one-buffer-per-call refill (single_alloc). The nic
# drops what finds no posted descriptor, as a NIC does: a paced generator
# and no more chunks than RX ring entries (--frames 2048, the ring 2048),
# which leaves 200 ms of packets in hand for a loaded machine.
for bind in --zero-copy --copy; do
	for align in "" --unaligned; do
		for single in "" ,single_alloc; do
			# shellcheck disable=SC2086
			expect 0 "" --json -c 5k $bind $align --frames 2048 \
				"nic:n,count=5k,pps=10k$single"
			json_ok "$tmp/out" "rxdrop on nic $bind $align $single" \
				't["stop"] == "count"' 't["rx_packets"] == 5000' \
				"S[0]['bind'] == '${bind#--}'" \
				"P['port'] == 'nic:n,count=5k,pps=10k$single'" \
				"P['kind'] == 'nic'" \
				"S[0]['app']['rx_bytes'] == 64 * 5000" \
				'S[0]["xsk"]["rx_dropped"] == 0' \
				'S[0]["xsk"]["rx_ring_full"] == 0' \
				'P["rx"]["redirect"] == 5000' \
				"t['unaligned'] == $([ -n "$align" ] && echo True || echo False)" \
				'S[0]["audit"]["fill"] + S[0]["audit"]["free_list"] == t["frames"]'
		done
	done
done
# A source that ends stops the run, --count reached or not: the socket may
# have dropped some (rx_ring_full), and those never arrive (before: -c N
# null:g,count=N ran for ever once one was dropped).
expect 0 "" --json -c 2k null:ge,count=1k
json_ok "$tmp/out" "-c 2k, a source of 1k" 't["stop"] == "end of source"' \
	't["rx_packets"] == 1000' 'P["rx"]["packets"] == 1000'
expect 0 "" --json null:gf,count=1k
json_ok "$tmp/out" "no -c, a source of 1k" 't["stop"] == "end of source"' \
	't["rx_packets"] == 1000'
expect 0 "" --json -c 5k --ring-size 64 --frames 4096 null:gg,count=5k
json_ok "$tmp/out" "-c N, a source of N, a small RX ring" \
	't["stop"] in ("count", "end of source")' \
	't["rx_packets"] + S[0]["xsk"]["rx_ring_full"] == 5000'
# Without --copy or --zero-copy: what the driver offers.
expect 0 "" --json -c 1k null:gd,count=1k
json_ok "$tmp/out" "default bind, null" 'S[0]["bind"] == "zero-copy"'
# --touch, a small batch, 2 KiB frames, no need_wakeup.
expect 0 "" --json -c 10k --touch -b 1 -f 2048 -m --frames 512 \
	--ring-size 512 null:gt,count=10k
json_ok "$tmp/out" "--touch -b 1 -m" 't["rx_packets"] == 10000' \
	't["batch"] == 1' 't["frame_size"] == 2048' \
	't["need_wakeup"] == False' 'S[0]["app"]["fill_wakeups"] == 0'

# ---- a veth fed from its peer: one queue, then two ------------------------------
veth_opts="--frames 8192 --ring-size 8192 -f 2048 --peer veth:vp"
# shellcheck disable=SC2086
expect 0 "" --json -c 10k $veth_opts --feed null:f,count=10k,pps=50k \
	veth:v,ring=4096
json_ok "$tmp/out" "rxdrop on a veth" 't["rx_packets"] == 10000' \
	'S[0]["bind"] == "copy"' 'F[0]["rx"]["redirect"] == 10000' \
	'R["tx"]["packets"] == 10000' 'P["rx"]["redirect"] == 10000'
for poll in "" --poll; do
	# shellcheck disable=SC2086
	expect 0 "" --json --queue 0-1 -c 20k $poll $veth_opts \
		--feed null:f,count=10k,pps=50k veth:v,queues=2,ring=4096
	json_ok "$tmp/out" "rxdrop, 2 queues $poll" \
		't["rx_packets"] == 20000' 'sorted(S) == [0, 1]' \
		'S[0]["app"]["rx_packets"] == 10000' \
		'S[1]["app"]["rx_packets"] == 10000' \
		'[f["name"] for f in F] == ["f0", "f1"]' \
		'all(f["rx"]["redirect"] == 10000 for f in F)'
done

# ---- txonly: exactly --tx-count per socket --------------------------------------
for bind in "" --copy; do
	expect 0 "" --json --txonly -C 30k -s 100 $bind null:s,sink
	json_ok "$tmp/out" "txonly $bind" 't["stop"] == "tx-count"' \
		't["tx_packets"] == 30000' 'S[0]["app"]["tx_submitted"] == 30000' \
		'P["tx"]["packets"] == 30000' 'P["tx"]["bytes"] == 3000000' \
		'P["rx"]["packets"] == 0' \
		"S[0]['bind'] == '$([ -n "$bind" ] && echo copy || echo zero-copy)'" \
		'S[0]["audit"]["app"] == t["frames"]'
done
# The same in text, with -v: the sink's counters.
expect 0 "" -v --txonly -C 30k null:s,sink
for want in "tx\.packets *30,000" "tx\.bytes *1,920,000" \
	    "app\.tx_packets *30,000" "xsk\.tx_invalid_descs *0" \
	    "audit: 4096 chunks: 0 fill, 0 driver, 0 free list, 0 comp, 0 rx ring, 0 tx ring, 4096 app; 0 misplaced" \
	    "stopped by tx-count" "received 0 \(0 pps\), sent 30,000 "; do
	grep -Eq "$want" "$tmp/out" || fail "txonly -v: no /$want/ in the output"
done
# A generator port: it still receives, and the tool says so.
expect 0 "txonly: g received [0-9]+ packets and dropped them" --txonly \
	--copy -C 1k null:g,pps=100k
# Over a veth: the peer gets them, addresses as sent; two queues.
# shellcheck disable=SC2086
expect 0 "" --json --txonly -C 10k $veth_opts veth:v,ring=4096
json_ok "$tmp/out" "txonly over a veth" 't["tx_packets"] == 10000' \
	'R["received"]["packets"] == 10000' 'R["received"]["other"] == 0' \
	'R["received"]["dst"] == "02:00:00:00:00:02"' \
	'R["received"]["src"] == "02:00:00:00:00:01"'
# shellcheck disable=SC2086
expect 0 "" --json --txonly --queue 0-1 -C 10k --poll $veth_opts \
	veth:v,queues=2,ring=4096
json_ok "$tmp/out" "txonly, 2 queues" 't["tx_packets"] == 20000' \
	'S[0]["app"]["tx_packets"] == S[1]["app"]["tx_packets"] == 10000' \
	'R["received"]["packets"] == 20000'

# ---- l2fwd: back out, addresses swapped -----------------------------------------
# On a null port (zero-copy): what the sockets forwarded went out of it;
# what they had not yet sent when the count was reached is on the TX ring.
expect 0 "" --json --l2fwd -c 50k --frames 2048 null:gl,count=50k
json_ok "$tmp/out" "l2fwd on null" 't["rx_packets"] == 50000' \
	'P["tx"]["packets"] + S[0]["audit"]["tx_ring"] == 50000' \
	'S[0]["app"]["tx_submitted"] == 50000'
# Over a veth, fed from the peer, which sees every packet come back with
# the generator's addresses swapped. Until the end of --duration: every
# packet has made the round trip by then.
for poll in "" --poll; do
	# shellcheck disable=SC2086
	expect 0 "" --json --l2fwd -d 2 $poll $veth_opts \
		--feed null:f,count=10k,pps=50k veth:v,ring=4096
	json_ok "$tmp/out" "l2fwd over a veth $poll" \
		't["stop"] == "duration"' \
		't["rx_packets"] == t["tx_packets"] == 10000' \
		'R["received"]["packets"] == 10000' \
		'R["received"]["other"] == 0' \
		'R["received"]["dst"] == "02:00:00:00:00:01"' \
		'R["received"]["src"] == "02:00:00:00:00:02"' \
		'S[0]["audit"]["fill"] == t["frames"]'
done
# shellcheck disable=SC2086
expect 0 "" --json --l2fwd -d 2 --queue 0,1 $veth_opts \
	--feed null:f,count=5k,pps=25k veth:v,queues=2,ring=4096
json_ok "$tmp/out" "l2fwd, 2 queues" \
	'S[0]["app"]["rx_packets"] == S[1]["app"]["rx_packets"] == 5000' \
	't["tx_packets"] == 10000' 'R["received"]["packets"] == 10000' \
	'R["received"]["other"] == 0'

# ---- -v: every counter, the audit, the set-up on stderr ---------------------------
expect 0 "poll thread 0 polls g queue 0" -v -c 10k --frames 2048 \
	null:g,count=10k
for want in "^q0 +zero-copy +10,000 rx" "xsk\.rx_ring_full +0$" \
	    "xsk\.rx_fill_ring_empty_descs" "app\.rx_empty_polls" \
	    "app\.fill_starved" "app\.tx_eagain" \
	    "audit: 2048 chunks: 2048 fill, 0 driver, 0 free list, 0 comp, 0 rx ring, 0 tx ring, 0 app; 0 misplaced" \
	    "rx\.redirect +10,000" "stopped by count"; do
	grep -Eq "$want" "$tmp/out" || fail "-v: no /$want/ in the output"
done

# ---- the ends ---------------------------------------------------------------------
# Five intervals are due; a stall skips the ticks it missed: at least 3.
expect 0 "" --json -d 1 -i 0.2 null:g7,pps=100k
json_ok "$tmp/out" "--duration 1" 't["stop"] == "duration"' \
	'0.95 <= t["elapsed_s"] < 5' 'len(iv) >= 3' \
	'all(len(x["sockets"]) == 1 for x in iv)' \
	'all(x["devices"][0]["name"] == "g7" for x in iv)' \
	'sum(x["sockets"][0]["app"]["rx_packets"] for x in iv) <= t["rx_packets"]' \
	't["rx_packets"] > 10000'
expect 0 "" -d 0.3 -i 0.1 null:g7,pps=100k
grep -q "^q0 .* rx/s .* tx/s$" "$tmp/out" ||
	fail "--duration: no interval line in $(cat "$tmp/out")"
grep -q "stopped by duration" "$tmp/out" || fail "--duration: stop reason"
expect 0 "" -q -d 0.3 null:g7,pps=100k
grep -q "rx/s" "$tmp/out" && fail "--quiet: interval lines in $(cat "$tmp/out")"
grep -q "^received " "$tmp/out" || fail "--quiet: no totals"

# signal_test SIG: started in the background by this (non-interactive)
# shell, so SIGINT arrives ignored; it must still stop, cleanly, with 0.
signal_test() {
	sig=$1
	signal_stop "$sig" --json --poll null:g8,pps=200k
	json_ok "$tmp/sig.out" "SIG$sig" "t['stop'] == 'SIG$sig'" \
		't["rx_packets"] > 0'
}
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
for mode in --json -v; do
	rc=0
	run_xsk "$mode" -c 1k null:g9,count=1k >/dev/full 2>"$tmp/err" ||
		rc=$?
	[ "$rc" -eq 1 ] &&
		grep -q "writing output: No space left on device" "$tmp/err" ||
		fail "$mode > /dev/full: exit $rc, $(cat "$tmp/err")"
	sanitizer_check "$tmp/err" "$mode > /dev/full"
done
# A reader that goes away: EPIPE, not death by SIGPIPE.
{ rc=0; run_xsk --json -d 5 -i 0.1 --poll null:g9,pps=10k 2>"$tmp/err" ||
	rc=$?
  echo "$rc" >"$tmp/rc"; } | head -c 1 >/dev/null
[ "$(cat "$tmp/rc")" = 1 ] && grep -q "writing output: Broken pipe" \
	"$tmp/err" || fail "| head: exit $(cat "$tmp/rc"), $(cat "$tmp/err")"
sanitizer_check "$tmp/err" "| head"

# ---- afxdp: txonly through a kernel AF_XDP socket on a veth -----------------------
# In a namespace of this test's own (removed on exit), its far end counts
# what arrived. Root only: a skip, loudly, or a failure under UXDP_CI.
if [ "$(id -u)" != 0 ]; then
	echo ""
	echo "*** SKIPPED: uxdp-xsk on afxdp: needs root (a namespace, XDP) ***"
	echo ""
	case "${UXDP_CI:-}" in
	""|0) ;;
	*) fail "afxdp: UXDP_CI is set and afxdp cannot run (not root)" ;;
	esac
elif ! "$xsk" --help | grep -q "^  afxdp:"; then
	echo ""
	echo "*** SKIPPED: uxdp-xsk built without the afxdp port kind ***"
	echo ""
	case "${UXDP_CI:-}" in
	""|0) ;;
	*) fail "afxdp: UXDP_CI is set and uxdp-xsk has no afxdp kind" ;;
	esac
else
	ns=uxdp-xsk-tool-$$
	ip netns add "$ns"
	# No IPv6: its link-up chatter would arrive at the far end too.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link add xa type veth peer name xb
	ip -n "$ns" link set xa up
	ip -n "$ns" link set xb up
	sysrx() {
		ip netns exec "$ns" cat "/sys/class/net/xb/statistics/$1"
	}
	rx0=$(sysrx rx_packets)
	b0=$(sysrx rx_bytes)
	rc=0
	timeout -s KILL 60 ip netns exec "$ns" "$xsk" --json --txonly \
		-C 1000 -s 100 afxdp:xa@0 >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 0 ] || { fail "txonly on afxdp:xa@0: exit $rc"; \
			     sed 's/^/  stderr: /' "$tmp/err"; }
	sanitizer_check "$tmp/err" "txonly on afxdp:xa@0"
	json_ok "$tmp/out" "txonly on afxdp" 't["stop"] == "tx-count"' \
		't["tx_packets"] == 1000' 'P["kind"] == "afxdp"' \
		'P["tx"]["packets"] == 1000' 'S[0]["audit"]["app"] == t["frames"]'
	rx=$(( $(sysrx rx_packets) - rx0 ))
	bytes=$(( $(sysrx rx_bytes) - b0 ))
	[ "$rx" -eq 1000 ] && [ "$bytes" -eq 100000 ] ||
		fail "afxdp txonly: the far end xb received $rx packets," \
		     "$bytes bytes; want 1000, 100000"
fi

json_check_all "$xsk_checks"
if [ "$failed" -ne 0 ]; then
	echo "test_xsk_tool: FAILED"
	exit 1
fi
echo "test_xsk_tool: all passed"
