#!/bin/sh
# uxdp-bpf over the eBPF corpus (tests/bpf/, built by clang at build time):
# --help and the man page, bad usage (exit 2), check (every corpus program
# loads, each refuse_* refused with its reason, exit 1), dump (programs,
# what the safety pass proved and checks, maps, the disassembly), test
# (verdicts, output bytes, repeat, faults counted, pcap in and out,
# --expect). Then --prog FILE.o[:NAME] of uxdp-fwd and uxdp-xsk on
# in-process ports (null:, pcap:) with exact totals, and their clear
# errors for a file, a name or a program that cannot be had. run (the
# bpf_conformance plugin) on programs of its own and on a sample of the
# suite's files, if they are there.
#
#	test_bpf_tool.sh UXDP_BPF UXDP_FWD UXDP_XSK CORPUS_DIR [MAN_PAGE
#			 [CONFORMANCE_DIR]]
set -eu
bpf=$1
fwd=$2
xsk=$3
dir=$4
man=${5:-}
suite=${6:-}
tool=$bpf tool_name="uxdp-bpf" tool_timeout=30
. "$(dirname "$0")/t_tool.sh"

# use TOOL NAME: what expect and run_tool run from now on.
use() {
	tool=$1 tool_name=$2
}

if [ ! -f "$dir/drop.o" ]; then
	# The corpus needs clang and libbpf: without them there is nothing
	# to load. Loud, and a failure where CI says everything is there.
	echo "SKIP: no eBPF corpus in $dir (clang -target bpf or libbpf missing)"
	[ "${UXDP_CI:-0}" = 1 ] && exit 1
	exit 77
fi

# json_ok FILE WHAT EXPR... (t_tool.sh): FILE is JSON lines (L, all of
# them; t, the last), and each Python EXPR holds, as json_check_all
# checks. G: t's programs by name (dump), K: the packet lines (test).

bpf_checks='G = {p["name"]: p for p in t.get("programs", [])}
K = [l for l in L if l.get("type") == "packet"]'

# The packets: a UDP/IPv4 frame to port 53 from 02:..:01 to 02:..:02, one
# that is not IP, and one whose first byte (0xff) sends oob_read past its
# end.
udp=02000000000202000000000108004500001c000000004011000
udp=${udp}0c0a80001c0a8000204d2003500080000
udp_swapped=02000000000102000000000208004500001c000000004011000
udp_swapped=${udp_swapped}0c0a80001c0a8000204d2003500080000
arp=ffffffffffff0200000000010806
far=ff00000000020200000000010800

# ---- --help, and the man page describes every option -------------------------
expect 0 "" --help
cp "$tmp/out" "$tmp/help"
for c in dump test check run; do
	grep -q "^  $c " "$tmp/help" || fail "--help lacks the command $c"
	expect 0 "" "$c" --help
	grep -q "^usage: uxdp-bpf $c " "$tmp/out" ||
		fail "$c --help has no usage line"
	cp "$tmp/out" "$tmp/help.$c"
done
for opt in --disasm --xlated --json --engine; do
	grep -q -e "$opt\b" "$tmp/help.dump" || fail "dump --help lacks $opt"
done
for opt in --packet --pcap --repeat --engine --out --expect --ifindex \
	   --queue --json; do
	grep -q -e "$opt\b" "$tmp/help.test" || fail "test --help lacks $opt"
done
if [ -n "$man" ]; then
	for c in dump test check run; do
		for opt in $(sed -n '/^options:/,/^$/s/^ *\(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p' \
			     "$tmp/help.$c"); do
			roff=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
			grep -q -e "$roff" "$man" ||
				fail "man page does not describe $c $opt"
		done
	done
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -P-c -P-b -P-u "$man" >"$tmp/man.txt" \
			2>"$tmp/man.err" ||
			fail "man page does not render: $(cat "$tmp/man.err")"
		grep -q "EXIT STATUS" "$tmp/man.txt" ||
			fail "rendered man page lacks EXIT STATUS"
	else
		echo "SKIP: groff missing, man page not rendered"
	fi
fi

# ---- bad usage: exit 2, a message that names the problem ------------------------
expect 2 "usage: uxdp-bpf COMMAND"
expect 2 "unknown command 'prog' \(dump, test, check, run\)" prog x.o
expect 2 "want one FILE\.o" dump
expect 2 "want one FILE\.o" check "$dir/drop.o" "$dir/pass.o"
expect 2 "unknown option '--bogus'" dump --bogus "$dir/drop.o"
expect 2 "want one FILE\.o\[:PROG\]" test --packet "$arp"
expect 2 "give the packets: --packet HEX or --pcap FILE" test "$dir/drop.o"
expect 2 "give the packets" test --packet "$arp" --pcap x.pcap "$dir/drop.o"
expect 2 "--packet: an odd number of hex digits" test --packet 001 "$dir/drop.o"
expect 2 "--packet: 'g' is not a hex digit" test --packet 0g "$dir/drop.o"
expect 2 "--packet: no bytes" test --packet " : " "$dir/drop.o"
expect 2 "--packet: more than 3520 bytes" test \
	--packet "$(head -c 3521 /dev/zero | od -An -v -tx1 | tr -d ' \n')" \
	"$dir/drop.o"
expect 2 "FILE\.o:NAME with no NAME" test --packet "$arp" "$dir/drop.o:"
expect 2 "'': no object file" test --packet "$arp" ""
expect 2 "--engine 'fast': interp, jit or default" check --engine fast \
	"$dir/drop.o"
expect 2 "--expect 'maybe': aborted, drop, pass, tx or redirect" test \
	--packet "$arp" --expect maybe "$dir/drop.o"
expect 2 "--repeat: 0 is out of range" test --packet "$arp" -n 0 "$dir/drop.o"

# ---- check: every corpus program loads; each refuse_* refused, with why -----------
for p in drop pass count macswap parse_udp oob calls loop rodata core; do
	[ -f "$dir/$p.o" ] || { fail "corpus: no $p.o"; continue; }
	expect 0 "" check "$dir/$p.o"
	grep -q ": refused" "$tmp/out" && fail "check $p.o: $(cat "$tmp/out")"
done
expect 0 "" check "$dir/drop.o"
out_has "^xdp_drop: ok \(2 insns, (jit|interp)\)$" "check drop.o"
expect 0 "" check --engine interp "$dir/oob.o"
out_has "^oob_read: ok \([0-9]+ insns, interp\)$" "check oob.o"
out_has "^forever: ok \([0-9]+ insns, interp\)$" "check oob.o"
# Another type beside the XDP programs: listed, never loaded.
expect 0 "" check "$dir/sections.o"
out_has "^sec_tc: skipped \(section tc, sched_cls: not XDP\)$" "sections.o"
out_has "^sec_tp: skipped \(section tp/.*, tracepoint: not XDP\)$" "sections.o"
[ "$(grep -c ": ok (" "$tmp/out")" -eq 5 ] ||
	fail "sections.o: want 5 XDP programs ok: $(cat "$tmp/out")"
# NAME\tthe refusal's text: the program, its instruction, the reason.
# (expect sets pat: the reason is why.)
while IFS="$t_tab" read -r p why <&3; do
	expect 1 "$dir/$p\.o: 1 of 1 XDP program refused" check "$dir/$p.o"
	out_has "^$p: refused: prog $p: insn [0-9]+ \(.*\): $why" "check $p.o"
done 3<<'LIST'
refuse_cpumap	map cpus \(type cpumap\): not supported
refuse_fib	helper bpf_fib_lookup \(69\): not supported
refuse_nonxdp	helper bpf_get_current_pid_tgid \(14\): not callable from XDP
refuse_kfunc	calls kfunc bpf_xdp_metadata_rx_timestamp
refuse_ksym	a kernel variable \(extern __ksym\)
refuse_callback	a callback function
refuse_socket	helper bpf_sk_lookup_tcp \(84\)
refuse_core	CO-RE relocation
LIST
expect 1 "nosuch\.o: No such file or directory" check "$tmp/nosuch.o"
# --kernel-verify: the running kernel's verifier refuses what uxdp checks
# at run time instead (oob.o's unchecked read, its endless loop). Root
# and a kernel with BPF only; else skipped, loudly.
rc=0
run_tool check -k "$dir/drop.o" >"$tmp/out" 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 0 ]; then
	expect 1 "oob\.o: 2 of 2 XDP programs refused" check -k "$dir/oob.o"
	out_has "^oob_read: refused: prog oob_read: the verifier of kernel .* refuses it" \
		"check -k oob.o"
	out_has "^forever: refused: prog forever: the verifier of kernel .* refuses it" \
		"check -k oob.o"
	expect 0 "" check --kernel-verify "$dir/count.o"
	expect 0 "" test -k "$dir/macswap.o" --packet "$udp" --expect tx
else
	echo "SKIP: --kernel-verify: $(head -1 "$tmp/err")"
fi
printf 'not an ELF object' >"$tmp/junk.o"
expect 1 "junk\.o" check "$tmp/junk.o"

# ---- dump: programs, what the safety pass proved, maps, the instructions ----------
expect 0 "" dump "$dir/count.o"
out_has "^program xdp_count: section xdp, xdp$" "dump count.o"
out_has "^  memory accesses: [0-9]+, [0-9]+ proven, [0-9]+ checked; back edges: 0$" \
	"dump count.o"
out_has "^map counters: array, key 4, value 8, max_entries 2$" "dump count.o"
out_has "^map per_cpu: percpu_array, key 4, value 8, max_entries 1$" \
	"dump count.o"
expect 0 "" dump -d "$dir/count.o"
out_has "^ +[0-9]+: lddw %r1, map\[0\]	; counters$" "dump -d count.o"
out_has "^ +[0-9]+: lddw %r1, map\[1\]	; per_cpu$" "dump -d count.o"
out_has "^ +[0-9]+: call 1	; bpf_map_lookup_elem$" "dump -d count.o"
out_has "^ +34: exit$" "dump -d count.o"
# -x: the code the engines run. count's three lookups are inline (no call
# is left), and their keys are constants: folded to the value's address
# (no read of the key); each instruction names the one it came from.
# parse_udp's key is the port: the array's bounds test stays. The packet
# read oob_read cannot prove is a check; forever's back edge a budget step.
expect 0 "" dump -x "$dir/count.o"
out_has "^ +[0-9]+ \(from [0-9]+\): lddw %r0, 0x[0-9a-f]+$" "dump -x count.o"
out_has "^ +[0-9]+ \(from [0-9]+\): thread %r1$" "dump -x count.o"
grep -q "call" "$tmp/out" && fail "dump -x count.o: a call left: $(cat "$tmp/out")"
grep -q "ldxw %r0, \[%r2+0\]" "$tmp/out" &&
	fail "dump -x count.o: a constant key read: $(cat "$tmp/out")"
expect 0 "" dump -x "$dir/parse_udp.o"
out_has "^ +[0-9]+ \(from [0-9]+\): ldxw %r0, \[%r2\+0\]$" "dump -x parse_udp.o"
grep -q "call" "$tmp/out" && fail "dump -x parse_udp.o: a call left: $(cat "$tmp/out")"
expect 0 "" dump -x "$dir/oob.o"
out_has "^ +[0-9]+ \(from [0-9]+\): checkr 1 \[%r[0-9]+\+0\] kind 1 region 0	; the packet$" "dump -x oob.o"
out_has "^ +[0-9]+ \(from [0-9]+\): budget$" "dump -x oob.o"
expect 0 "" dump --json -x "$dir/count.o"
json_ok "$tmp/out" "dump --json -x count.o" \
	'len(G["xdp_count"]["xlated"]) > 0' \
	'sum(2 if e["text"].startswith("lddw") else 1 for e in G["xdp_count"]["xlated"]) == G["xdp_count"]["xlated_insns"]' \
	'all(a["from"] <= b["from"] for a, b in zip(G["xdp_count"]["xlated"], G["xdp_count"]["xlated"][1:]))'
expect 0 "" dump -d "$dir/drop.o"
out_has "^ +0: mov32? %r0, 1$" "dump -d drop.o"
out_has "^ +1: exit$" "dump -d drop.o"
expect 0 "" dump --json -d "$dir/oob.o"
json_ok "$tmp/out" "dump --json oob.o" \
	'set(G) == {"oob_read", "forever"}' \
	'all(p["loaded"] and p["proven"] + p["checked"] == p["accesses"] for p in G.values())' \
	'G["oob_read"]["checked"] >= 1' \
	'G["forever"]["back_edges"] >= 1' \
	'G["oob_read"]["disasm"][-1]["text"] == "exit"' \
	'len(G["oob_read"]["disasm"]) <= G["oob_read"]["insns"]' \
	't["maps"][0]["name"] == "spins" and t["maps"][0]["type"] == "array"'
expect 0 "" dump --json --engine interp "$dir/drop.o"
json_ok "$tmp/out" "dump --json --engine interp drop.o" \
	'G["xdp_drop"]["engine"] == "interp" and G["xdp_drop"]["jit_size"] == 0' \
	'G["xdp_drop"]["insns"] == 2 and G["xdp_drop"]["accesses"] == 0'
# A refused program is shown with its reason; dump itself succeeds.
expect 0 "" dump --json "$dir/refuse_cpumap.o"
json_ok "$tmp/out" "dump --json refuse_cpumap.o" \
	'not G["refuse_cpumap"]["loaded"]' \
	'"map cpus (type cpumap)" in G["refuse_cpumap"]["refused"]' \
	't["maps"][0]["type"] == "cpumap" and t["maps"][0]["max_entries"] == 4'
expect 0 "" dump "$dir/sections.o"
out_has "^program sec_tc: section tc, sched_cls$" "dump sections.o"
out_has "^  not XDP: not loaded$" "dump sections.o"
expect 1 "nosuch\.o: No such file or directory" dump "$tmp/nosuch.o"

# ---- test: verdicts, the bytes left, repeat, faults ---------------------------------
expect 0 "" test "$dir/drop.o" --packet "$udp"
out_has "^packet 1 \(42 bytes\): XDP_DROP$" "test drop.o"
out_has "^totals: 1 packet, 0 changed, drop 1$" "test drop.o"
out_has "^  bpf xdp_drop \((jit|interp)\): 1 run; aborted 0, faults 0$" \
	"test drop.o"
expect 0 "" test "$dir/pass.o" --packet "$udp" --expect XDP_PASS
out_has "^packet 1 \(42 bytes\): XDP_PASS$" "test pass.o"
expect 1 "1 of 1 packets not pass" test "$dir/drop.o" --packet "$udp" \
	--expect pass
expect 0 "" test "$dir/macswap.o" --packet "$udp"
out_has "^packet 1 \(42 bytes\): XDP_TX$" "test macswap.o"
out_has "^  out \(42 bytes\): $udp_swapped$" "test macswap.o"
out_has "^totals: 1 packet, 1 changed, tx 1$" "test macswap.o"
# Shorter than an Ethernet header: refused, as the kernel's test run.
expect 2 "--packet: 2 bytes: at least 14 \(an Ethernet header\)" test \
	"$dir/macswap.o" --packet 0200
expect 0 "" test "$dir/parse_udp.o" --packet "$udp" --expect drop
expect 0 "" test "$dir/parse_udp.o" --packet "$arp" --expect pass
# Repeated on the same buffer: macswap twice is the packet as it came.
expect 0 "" test --json "$dir/macswap.o" --packet "$udp" --repeat 2
json_ok "$tmp/out" "test --repeat 2 macswap.o" \
	'K[0]["verdict"] == "tx" and not K[0]["changed"]' \
	't["runs"] == 2 and t["prog"]["runs"] == 2'
expect 0 "" test --json "$dir/count.o" --packet "$udp" -n 1000
json_ok "$tmp/out" "test -n 1000 count.o" \
	't["packets"] == 1 and t["runs"] == 1000 and t["prog"]["runs"] == 1000' \
	't["verdicts"]["pass"] == 1 and t["prog"]["aborted"] == 0'
# What the program counted: its arrays after the runs, the per-CPU one
# summed over the threads.
expect 0 "" test "$dir/count.o" --packet "$udp" -n 1000 --maps
out_has "^  counters\[0\] = 1000$" "test --maps count.o"
out_has "^  counters\[1\] = 42000$" "test --maps count.o"
out_has "^  per_cpu\[0\] = 1000$" "test --maps count.o"
expect 0 "" test --json "$dir/parse_udp.o" --packet "$udp" -n 3 --maps
json_ok "$tmp/out" "test --maps parse_udp.o" \
	't["maps"] == [{"name": "port_count", "type": "array", "more": 0, "entries": [{"key": 53, "hex": "0300000000000000", "value": 3}]}]'
# Outside the packet (oob_read at data[0xff]) and a loop that never ends
# (forever): XDP_ABORTED, counted as faults, on both engines.
for eng in interp jit default; do
	[ "$eng" = jit ] && [ "$(uname -m)" != x86_64 ] && continue
	expect 0 "prog oob_read: insn [0-9]+ .*: a memory access outside" \
		test --json --engine "$eng" "$dir/oob.o:oob_read" --packet "$far"
	json_ok "$tmp/out" "test --engine $eng oob_read" \
		'K[0]["verdict"] == "aborted" and t["prog"]["faults"] == 1' \
		't["prog"]["last_fault"] == "mem" and t["prog"]["aborted"] == 1' \
		'"last_fault_insn" in t["prog"]'
	expect 0 "" test --json --engine "$eng" "$dir/oob.o:oob_read" \
		--packet "0002$udp"
	json_ok "$tmp/out" "test --engine $eng oob_read in bounds" \
		'K[0]["verdict"] == "pass" and t["prog"]["faults"] == 0'
	expect 0 "budget of back edges" test --json --engine "$eng" \
		"$dir/oob.o:forever" --packet "$udp" -n 3
	json_ok "$tmp/out" "test --engine $eng forever" \
		'K[0]["verdict"] == "aborted" and t["prog"]["faults"] == 3' \
		't["prog"]["last_fault"] == "budget"' \
		't["prog"]["engine"] == ("interp" if "'"$eng"'" == "interp" else t["prog"]["engine"])'
done
# The program, named or not, and what cannot be had.
expect 1 "no program 'nosuch' in .*drop\.o; its XDP programs: xdp_drop$" \
	test "$dir/drop.o:nosuch" --packet "$arp"
expect 1 "program 'sec_tc' \(section 'tc'\) is not an XDP program" \
	test "$dir/sections.o:sec_tc" --packet "$arp"
expect 1 "refuse_cpumap\.o: prog refuse_cpumap: insn [0-9]+ .*type cpumap" \
	test "$dir/refuse_cpumap.o" --packet "$arp"
expect 1 "nosuch\.o: No such file or directory" test "$tmp/nosuch.o" \
	--packet "$arp"
# An old-style section name ("xdp_prog"), loaded as XDP.
expect 0 "" test "$dir/sections.o:sec_old" --packet "$udp" --expect redirect

# ---- test on a pcap file, and what the program left written to one ---------------
python3 - "$tmp/in.pcap" "$tmp/in-be.pcap" "$tmp/in.pcapng" "$tmp/cut.pcap" \
	"$udp" "$arp" <<'PY'
import struct, sys
pk = [bytes.fromhex(sys.argv[5]), bytes.fromhex(sys.argv[6])]
for path, end, cut in ((sys.argv[1], "<", False), (sys.argv[2], ">", False),
                       (sys.argv[4], "<", True)):
    with open(path, "wb") as f:
        f.write(struct.pack(end + "IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pk):
            f.write(struct.pack(end + "IIII", 100 + i, 7, len(p), len(p)))
            f.write(p[:10] if cut and i == 1 else p)
open(sys.argv[3], "wb").write(struct.pack("<II", 0x0a0d0d0a, 28) + bytes(20))
PY
# swapped_ok FILE WHAT [ts]: FILE is a pcap file of in.pcap's two packets
# with their Ethernet addresses swapped (with ts: their time stamps kept).
swapped_ok() {
	python3 - "$1" "$udp_swapped" "${3:-}" <<'PY' || fail "$2: bad frames"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert struct.unpack_from("<I", data)[0] in (0xa1b2c3d4, 0xa1b23c4d), \
    "not a pcap file of this host's order"
off, frames = 24, []
while off < len(data):
    sec, usec, incl, orig = struct.unpack_from("<IIII", data, off)
    frames.append((sec, data[off + 16:off + 16 + incl]))
    off += 16 + incl
assert len(frames) == 2, "%d frames" % len(frames)
assert frames[0][1] == bytes.fromhex(sys.argv[2]), frames[0][1].hex()
# The 14-byte ARP frame, swapped too.
assert frames[1][1][:12].hex() == "020000000001ffffffffffff", frames[1]
assert not sys.argv[3] or [f[0] for f in frames] == [100, 101], frames
PY
}

expect 0 "" test "$dir/parse_udp.o" --pcap "$tmp/in.pcap"
out_has "^packet 1 \(42 bytes\): XDP_DROP$" "test --pcap parse_udp.o"
out_has "^packet 2 \(14 bytes\): XDP_PASS$" "test --pcap parse_udp.o"
out_has "^totals: 2 packets, 0 changed, drop 1, pass 1$" \
	"test --pcap parse_udp.o"
expect 0 "" test "$dir/parse_udp.o" --pcap "$tmp/in.pcap" --maps
out_has "^  port_count\[53\] = 1$" "test --pcap --maps parse_udp.o"
expect 0 "" test "$dir/parse_udp.o" --pcap "$tmp/in-be.pcap"
out_has "^totals: 2 packets, 0 changed, drop 1, pass 1$" \
	"test --pcap (big-endian) parse_udp.o"
expect 0 "" test "$dir/macswap.o" --pcap "$tmp/in.pcap" --out "$tmp/o.pcap"
swapped_ok "$tmp/o.pcap" "test --out" ts
expect 1 "a pcapng file: only classic pcap is read" test "$dir/drop.o" \
	--pcap "$tmp/in.pcapng"
expect 1 "cut\.pcap: a record of 14 bytes at offset 82, with 10 left" \
	test "$dir/drop.o" --pcap "$tmp/cut.pcap"
expect 1 "--pcap .*nosuch\.pcap: No such file or directory" test \
	"$dir/drop.o" --pcap "$tmp/nosuch.pcap"
expect 1 "--out .*: No such file or directory" test "$dir/drop.o" \
	--packet "$arp" --out "$tmp/no/dir/o.pcap"

# ---- run: the conformance suite's plugin ----------------------------------------------
# run_is R0 ARGS... < stdin: exit 0 and r0 (hex) on stdout. (expect sets
# want: the r0 is r0_want.)
run_is() {
	r0_want=$1
	shift
	expect 0 "" run "$@"
	[ "$(cat "$tmp/out")" = "$r0_want" ] ||
		fail "run $*: r0 '$(cat "$tmp/out")', want $r0_want"
}
# mov32 %r0, 42; exit
printf 'b4 00 00 00 2a 00 00 00 95 00 00 00 00 00 00 00\n' >"$tmp/p42"
run_is 2a <"$tmp/p42"
# ldxb %r0, [%r1+2]; exit: MEMORY as the runner passes it, then its
# options as one word.
printf '71 10 02 00 00 00 00 00 95 00 00 00 00 00 00 00' >"$tmp/pmem"
for eng in interp jit default; do
	[ "$eng" = jit ] && [ "$(uname -m)" != x86_64 ] && continue
	run_is 22 "00  11  22  33  " "--engine $eng" <"$tmp/pmem"
	# mov32 %r0, 7; div32 %r0, %r1 (r1 = 0: the RFC's 0); exit
	printf 'mov32 %%r0, 7\ndiv32 %%r0, %%r1\nexit\n' >"$tmp/pdiv"
	run_is 0 --asm --engine "$eng" <"$tmp/pdiv"
done
# No memory, and no options: the runner's empty words.
run_is 2a "" "" <"$tmp/p42"
printf 'b4 00 00 00 07 00 00 00' >"$tmp/pnoexit"
expect 1 "prog stdin: insn 0 \(mov32 %r0, 7\): runs off the end" run \
	<"$tmp/pnoexit"
printf 'b4 00 00 00 07' >"$tmp/phalf"
expect 1 "not a whole number of 8-byte instructions" run <"$tmp/phalf"
printf 'mov32 %%r0, 7\nbogus %%r1\nexit\n' >"$tmp/pbad"
expect 1 "the program on stdin: line 2" run --asm <"$tmp/pbad"
expect 2 "MEMORY: 'x' is not a hex digit" run "0x" <"$tmp/p42"
expect 2 "OPTIONS: unknown option '--fast'" run "" "--fast" <"$tmp/p42"
expect 2 "--engine 'warp': interp, jit or default" run "" "--engine warp" \
	<"$tmp/p42"
# A sample of the suite (every 8th file that expects a result), through
# every engine, as its runner would call the plugin: the suite's results.
if [ -n "$suite" ] && [ -d "$suite/tests" ]; then
	python3 - "$bpf" "$suite/tests" "$(uname -m)" <<'PY' || failed=1
import os, subprocess, sys
tool, d, machine = sys.argv[1], sys.argv[2], sys.argv[3]
files = sorted(f for f in os.listdir(d) if f.endswith(".data"))
engines = ["interp", "default"] + (["jit"] if machine == "x86_64" else [])
ran = bad = 0
for f in files[::8]:
    sec, cur = {}, None
    for line in open(os.path.join(d, f)):
        line = line.rstrip("\n")
        if line.startswith("-- "):
            cur = line[3:].strip()
            sec[cur] = []
        elif cur and not line.startswith("#"):
            sec[cur].append(line)
    if "asm" not in sec or "result" not in sec or "error" in sec:
        continue
    text = "\n".join(sec["asm"]) + "\n"
    if "call %r" in text:
        continue    # callx: out of scope
    mem = " ".join(sec.get("mem", []))
    want = int(" ".join(sec["result"]).split()[0], 0)
    for e in engines:
        r = subprocess.run([tool, "run", "--asm", "--engine", e, mem],
                           input=text, capture_output=True, text=True,
                           timeout=30)
        ran += 1
        if r.returncode or int(r.stdout, 16) != want:
            bad += 1
            print("FAIL: run %s (%s): exit %d, r0 %r, want 0x%x: %s" % (
                f, e, r.returncode, r.stdout.strip(), want, r.stderr))
print("run: %d of the suite's programs ran, %d failed" % (ran, bad))
sys.exit(1 if bad or not ran else 0)
PY
else
	echo "SKIP: no conformance suite: run not tried on its programs"
fi

# ---- uxdp-fwd --prog FILE.o: on null ports, exact totals ---------------------------
use "$fwd" uxdp-fwd
expect 0 "" --json -q -c 1000 --prog "$dir/drop.o" null:g1,count=1000 \
	null:s1,sink
json_ok "$tmp/out" "uxdp-fwd --prog drop.o" \
	't["received"] == 1000 and t["forwarded"] == 0' \
	't["prog"].endswith("drop.o") and t["bpf"]["name"] == "xdp_drop"' \
	't["bpf"]["runs"] == 1000 and t["bpf"]["verdicts"]["drop"] == 1000' \
	'sum(t["bpf"]["verdicts"].values()) == 1000 and t["bpf"]["faults"] == 0'
expect 0 "" --json -q -c 1000 --prog "$dir/pass.o:xdp_pass" \
	null:g2,count=1000 null:s2,sink
json_ok "$tmp/out" "uxdp-fwd --prog pass.o:xdp_pass" \
	't["forwarded"] == 1000 and t["bpf"]["verdicts"]["pass"] == 1000' \
	'[p["tx"]["packets"] for p in t["ports"] if p["name"] == "s2"] == [1000]'
# XDP_TX: back out of the port it came in on, reflecting or forwarding.
expect 0 "" --json -q -c 1000 --prog "$dir/macswap.o" --engine interp \
	null:g3,count=1000
json_ok "$tmp/out" "uxdp-fwd --prog macswap.o (reflect, interp)" \
	't["forwarded"] == 1000 and t["bpf"]["verdicts"]["tx"] == 1000' \
	't["bpf"]["engine"] == "interp" and t["bpf"]["runs"] == 1000'
expect 0 "" --json -q -c 1000 --prog "$dir/macswap.o" null:g4,count=1000 \
	null:s4,sink
json_ok "$tmp/out" "uxdp-fwd --prog macswap.o (two ports)" \
	'[p["rx"]["tx"] for p in t["ports"] if p["name"] == "g4"] == [1000]' \
	'[p["tx"]["packets"] for p in t["ports"] if p["name"] == "s4"] == [0]'
# Faults: counted per program, the verdict XDP_ABORTED on the port.
expect 0 "budget of back edges" --json -q -c 20 --prog "$dir/oob.o:forever" \
	null:g5,count=20
json_ok "$tmp/out" "uxdp-fwd --prog oob.o:forever" \
	't["bpf"]["faults"] == 20 and t["bpf"]["aborted"] == 20' \
	't["bpf"]["verdicts"]["aborted"] == 20 and t["bpf"]["last_fault"] == "budget"' \
	't["ports"][0]["rx"]["aborted"] == 20'
expect 0 "" -q -c 100 --prog "$dir/parse_udp.o" null:g6,count=100
out_has "^  bpf xdp_parse_udp \((jit|interp)\): 100 runs: drop 100; aborted 0, faults 0$" \
	"uxdp-fwd --prog parse_udp.o"
# Bad --prog: the string alone is bad usage (2); a file, a name or a
# program that cannot be had, a program that cannot be set up (1).
expect 2 "--prog 'x\.o:': FILE\.o:NAME with no NAME" --prog x.o: null:a
expect 2 "--engine 'fast': interp, jit or default" --prog "$dir/drop.o" \
	--engine fast null:a
expect 2 "--engine: only for an eBPF program" --engine jit null:a
expect 2 "--prog-args: an eBPF program takes no arguments" \
	--prog "$dir/drop.o" --prog-args x null:a
expect 1 "^uxdp-fwd: --prog .*nosuch\.o: No such file or directory$" \
	--prog "$tmp/nosuch.o" null:a
expect 1 "^uxdp-fwd: --prog .*drop\.o:nosuch: no program 'nosuch' in .*drop\.o; its XDP programs: xdp_drop$" \
	--prog "$dir/drop.o:nosuch" null:a
expect 1 "its XDP programs: sec_xdp, sec_frags, sec_devmap, sec_cpumap, sec_old$" \
	--prog "$dir/sections.o:nosuch" null:a
expect 1 "^uxdp-fwd: --prog .*sections\.o:sec_tc: program 'sec_tc' \(section 'tc'\) is not an XDP program" \
	--prog "$dir/sections.o:sec_tc" null:a
expect 1 "^uxdp-fwd: --prog .*refuse_fib\.o: prog refuse_fib: insn [0-9]+ \(call 69\): helper bpf_fib_lookup" \
	--prog "$dir/refuse_fib.o" null:a
expect 1 "junk\.o" --prog "$tmp/junk.o" null:a

# The bytes: macswap.o reflecting a replayed file (pcap: ports, if built).
use "$fwd" uxdp-fwd
expect 0 "" --help
if grep -q "^  pcap:" "$tmp/out"; then
	expect 0 "" -q --prog "$dir/macswap.o" \
		"pcap:$tmp/in.pcap,out=$tmp/fwd.pcap"
	swapped_ok "$tmp/fwd.pcap" "uxdp-fwd --prog macswap.o"
else
	echo "SKIP: pcap kind not built in: the bytes uxdp-fwd sent not checked"
fi

# ---- uxdp-xsk --prog FILE.o: what reaches the sockets -----------------------------
use "$xsk" uxdp-xsk
expect 0 "" --json -q -c 1000 --prog "$dir/pass.o" null:x1,count=1000
json_ok "$tmp/out" "uxdp-xsk --prog pass.o" \
	't["rx_packets"] == 1000 and t["bpf"]["verdicts"]["pass"] == 1000' \
	't["bpf"]["runs"] == 1000 and t["bpf"]["name"] == "xdp_pass"'
# The generator's UDP frames: parse_udp drops them all, none reach the
# socket; the run ends with the generator's last packet.
expect 0 "" --json -q --prog "$dir/parse_udp.o" --engine interp \
	null:x3,count=100
json_ok "$tmp/out" "uxdp-xsk --prog parse_udp.o" \
	't["rx_packets"] == 0 and t["bpf"]["engine"] == "interp"' \
	't["stop"] == "end of source" and t["bpf"]["runs"] == 100' \
	't["bpf"]["verdicts"]["drop"] == t["bpf"]["runs"] == t["port"]["rx"]["packets"]' \
	't["port"]["rx"]["drop"] == t["bpf"]["runs"]'
expect 2 "--prog: txonly sockets receive nothing" --txonly \
	--prog "$dir/drop.o" null:a
expect 2 "--engine: only with --prog FILE\.o" --engine interp null:a
expect 2 "FILE\.o:NAME with no NAME" --prog "$dir/drop.o:" null:a
expect 1 "^uxdp-xsk: --prog .*drop\.o:x: no program 'x' in .*; its XDP programs: xdp_drop$" \
	--prog "$dir/drop.o:x" null:a
expect 1 "^uxdp-xsk: --prog .*refuse_cpumap\.o: prog refuse_cpumap: insn" \
	--prog "$dir/refuse_cpumap.o" null:a
expect 0 "" --help
grep -q -e "--prog FILE.o\[:NAME\]" "$tmp/out" ||
	fail "uxdp-xsk --help lacks --prog"

json_check_all "$bpf_checks"
if [ "$failed" -ne 0 ]; then
	echo "FAILED"
	exit 1
fi
echo "PASSED"
