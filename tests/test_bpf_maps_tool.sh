#!/bin/sh
# --map, --map-elem and --dump-map of uxdp-bpf test and uxdp-fwd on the
# eBPF corpus (tests/bpf/): a hash dumped to a file and seeded back from
# it, per-CPU values per CPU and for all, a queue's and a stack's order
# kept through a dump and a re-seed, global data (.rodata's volatile
# const settings, .data) written before load, a prog array filled by a
# program's name (and dumped by name), the JSON of --dump-map on stdout,
# a count seeded in uxdp-fwd and read back after a run of exact length;
# then every kind of bad input: bad usage (exit 2) and elements that
# cannot go in (exit 1, a message naming the element and why).
#
#	test_bpf_maps_tool.sh UXDP_BPF UXDP_FWD CORPUS_DIR
set -eu
bpf=$1
fwd=$2
dir=$3
tool=$bpf tool_name="uxdp-bpf" tool_timeout=30
. "$(dirname "$0")/t_tool.sh"

if [ ! -f "$dir/hash_ports.o" ]; then
	echo "SKIP: no eBPF corpus in $dir (clang -target bpf or libbpf missing)"
	[ "${UXDP_CI:-0}" = 1 ] && exit 1
	exit 77
fi

# UDP/IPv4 to port 53 (42 bytes), and an IPv6 header's start.
udp=02000000000202000000000108004500001c000000004011000
udp=${udp}0c0a80001c0a8000204d2003500080000
ip6=00112233445566778899aabb86dd6000000000000000

# ---- --help names the options ------------------------------------------------------
expect 0 "" test --help
for opt in --map --map-elem --dump-map; do
	grep -q -e "$opt " "$tmp/out" || fail "test --help lacks $opt"
done
tool=$fwd tool_name=uxdp-fwd
expect 0 "" --help
for opt in --map --map-elem --dump-map; do
	grep -q -e "$opt " "$tmp/out" || fail "uxdp-fwd --help lacks $opt"
done
tool=$bpf tool_name=uxdp-bpf

# ---- a hash: dumped to a file, seeded back -------------------------------------------
# hash_ports counts packets per UDP destination port... keyed by the
# port as the program reads it; three runs: 3.
expect 0 "" test "$dir/hash_ports.o" --packet "$udp" -n 3 \
	--dump-map ports="$tmp/ports.json" --dump-map protos
out_has '^map protos \(percpu_hash, key 4 bytes, value 8 bytes, max_entries 8\): 1 element$' \
	"per-CPU text header"
out_has '^  key 11 00 00 00  cpu 0 value 03 00 00 00 00 00 00 00$' \
	"per-CPU text line"
tr -d '\n' <"$tmp/ports.json" >"$tmp/ports.line"; echo >>"$tmp/ports.line"
json_ok "$tmp/ports.line" "--dump-map ports=FILE" \
	'len(t) == 1' \
	't[0]["value"][0] == "0x03" and set(t[0]["value"][1:]) == {"0x00"}' \
	'len(t[0]["key"]) == 2'
# Seeded from it: one more run makes 4, and an element of our own.
expect 0 "" test "$dir/hash_ports.o" --packet "$udp" -j \
	--map ports="$tmp/ports.json" \
	--map-elem 'ports:0x0900=[1,2,3,4,5,6,7,8]' --dump-map ports
json_ok "$tmp/out" "--map ports=FILE, then a run" \
	'L[-1]["map"] == "ports" and L[-1]["type"] == "hash"' \
	'L[-1]["key_size"] == 2 and L[-1]["value_size"] == 8' \
	'sorted(int(e["value"][0], 16) for e in L[-1]["elements"]) == [1, 4]' \
	'[e["value"] for e in L[-1]["elements"] if e["key"] == ["0x09", "0x00"]] == [["0x%02x" % i for i in range(1, 9)]]'

# ---- per-CPU values: some CPUs, and one for all ------------------------------------
expect 0 "" test "$dir/hash_ports.o" --packet "$udp" -j \
	--map-elem 'protos:7=[{"cpu":1,"value":9},{"cpu":3,"value":"0x0a00000000000000"}]' \
	--map-elem 'protos:8=-2' --dump-map protos
json_ok "$tmp/out" "--map-elem per-CPU values" \
	'[(v["cpu"], v["value"][0]) for v in E(L)[7]] == [(1, "0x09"), (3, "0x0a")]' \
	'len(E(L)[8]) == 64 and all(v["value"] == ["0xfe"] + ["0xff"] * 7 for v in E(L)[8])'

# ---- a queue and a stack: order kept ------------------------------------------------
# The program pushes its packet's length (42) on q and a record on s.
expect 0 "" test "$dir/queue.o" --packet "$udp" --dump-map s="$tmp/s.json"
expect 0 "" test "$dir/queue.o" --packet "$udp" --map s="$tmp/s.json" \
	--map-elem 's:=0x090000000000000000000000' --map-elem 'q:=5' \
	--dump-map q --dump-map s
out_has '^map q \(queue, key 0 bytes, value 4 bytes, max_entries 4\): 2 elements$' "queue header"
sed -n '/^map q /,/^map s /p' "$tmp/out" | grep '^  value' >"$tmp/q"
printf '  value 05 00 00 00\n  value 2a 00 00 00\n' | cmp -s - "$tmp/q" ||
	fail "queue order: $(cat "$tmp/q")"
sed -n '/^map s /,$p' "$tmp/out" | grep '^  value' | cut -c9-10 | tr '\n' ' ' >"$tmp/s"
[ "$(cat "$tmp/s")" = "2a 09 2a " ] || fail "stack order (bottom first): $(cat "$tmp/s")"
expect 1 "--map-elem q:1=5: a queue has no keys" test "$dir/queue.o" \
	--packet "$udp" --map-elem q:1=5

# ---- global data before load ---------------------------------------------------------
# rodata.o returns .rodata's verdict and writes its mark at byte 0;
# runs += step + extra, per run.
expect 0 "" test "$dir/rodata.o" --packet "$udp" -n 2 \
	--map-elem '.rodata:0=01 00 00 00 55' --map-elem '.data:0=3' \
	--dump-map .bss --dump-map rodata.rodata
out_has '^packet 1 \(42 bytes\): XDP_DROP' ".rodata verdict seeded"
out_has '^  out \(42 bytes\): 55' ".rodata mark seeded"
out_has '^  key 00 00 00 00  value 14 00 00 00 00 00 00 00$' ".bss after 2 runs of step 3 + extra 7"
out_has '^  key 00 00 00 00  value 01 00 00 00 55$' ".rodata dumped"
expect 1 "global data has one element, key 0" test "$dir/rodata.o" \
	--packet "$udp" --map-elem '.data:1=3'
expect 1 "value: want 8 bytes, have 2" test "$dir/rodata.o" \
	--packet "$udp" --map-elem '.data:0=0x0300'

# ---- a prog array by name ----------------------------------------------------------
expect 0 "" test "$dir/tail.o:tail_entry" --packet "$ip6" --expect pass
expect 0 "" test "$dir/tail.o:tail_entry" --packet "$ip6" --expect tx \
	--map-elem jmp_dyn:0=tail_dyn --dump-map jmp_dyn="$tmp/j.json" \
	--dump-map jmp_static
out_has '^  key 01 00 00 00  value .. 00 00 00 \(tail_ipv4\)$' "prog array dumped by name"
grep -q '"value":"tail_dyn"' "$tmp/j.json" || fail "prog array file: $(cat "$tmp/j.json")"
expect 0 "" test "$dir/tail.o:tail_entry" --packet "$ip6" --expect tx \
	--map jmp_dyn="$tmp/j.json"
out_has '^  out \(22 bytes\): ff1122' "tail_dyn ran"

# ---- uxdp-fwd: a count seeded, read after an exact run ----------------------------------
tool=$fwd tool_name=uxdp-fwd
expect 0 "" --prog "$dir/count.o" -j --count 10k --map-elem counters:0=1000 \
	--dump-map counters --dump-map per_cpu=$tmp/pc.json \
	null:gen,count=10k null:sink,sink
json_ok "$tmp/out" "uxdp-fwd --dump-map" \
	'L[-1]["map"] == "counters" and L[-2]["type"] == "totals"' \
	'int.from_bytes(bytes(int(b, 16) for b in L[-1]["elements"][0]["value"]), "little") == 11000'
tr -d '\n' <"$tmp/pc.json" >"$tmp/pc.line"; echo >>"$tmp/pc.line"
json_ok "$tmp/pc.line" "uxdp-fwd --dump-map per_cpu=FILE" \
	'sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little") for v in t[0]["values"]) == 10000'
expect 2 "--map-elem: only for an eBPF program" --prog fwd \
	--map-elem counters:0=1 null:gen null:sink
expect 1 "--map-elem nope:0=1: no map 'nope' in the object; its maps: counters, per_cpu" \
	--prog "$dir/count.o" --map-elem nope:0=1 null:gen,count=1 null:sink,sink
tool=$bpf tool_name=uxdp-bpf

# ---- bad input ----------------------------------------------------------------------
t() {
	expect "$@"
}
h=$dir/hash_ports.o
t 2 "--map 'ports': want NAME=FILE.json" test "$h" --packet "$udp" --map ports
t 2 "--map '=x': want NAME=FILE.json" test "$h" --packet "$udp" --map =x
t 2 "--map-elem 'ports=1': want NAME:KEY=VALUE" test "$h" --packet "$udp" --map-elem ports=1
t 2 "--map-elem 'ports:1': want" test "$h" --packet "$udp" --map-elem ports:1
t 2 "--dump-map: empty value" test "$h" --packet "$udp" --dump-map ''
t 2 "--dump-map 'x=': want NAME or NAME=FILE" test "$h" --packet "$udp" --dump-map x=
many=
for i in $(seq 33); do many="$many --map-elem ports:$i=1"; done
# shellcheck disable=SC2086
t 2 "--map-elem: at most 32" test "$h" --packet "$udp" $many
t 1 "no map 'nope' in the object; its maps: protos, ports" test "$h" --packet "$udp" --dump-map nope
t 1 "--map ports=/nonexistent.json: unable to open" test "$h" --packet "$udp" --map ports=/nonexistent.json
t 1 "a perf_event_array's records are read as they come" test "$dir/perf.o" --packet "$udp" --dump-map events

bad() {	# bad JSON-TEXT PATTERN
	printf '%s\n' "$1" >"$tmp/bad.json"
	t 1 "$2" test "$h" --packet "$udp" --map ports="$tmp/bad.json"
}
bad '[{"key":1,"value":2},' "line 2: .*expected"
bad '{"key":1}' "want a JSON array of elements"
bad '[{"key":1,"value":2,"x":1}]' 'element 1: unknown field "x"'
bad '[{"key":1,"value":2},{"key":70000,"value":2}]' "element 2: key: 70000 does not fit in 2 bytes"
bad '[{"key":[1,2,3],"value":2}]' "key: want 2 bytes, have 3"
bad '[{"key":"zz","value":2}]' "key: \"zz\" is not hex"
bad '[{"key":"0a0","value":2}]' "an odd number of hex digits"
bad '[{"key":[1,300],"value":2}]' "byte 1: 300 is not 0..255"
bad '[{"key":1,"key":2,"value":2}]' "duplicate object key"
bad '[{"key":1,"values":[{"cpu":0,"value":1}]}]' "not per-CPU"
bad '[{"value":2}]' 'no "key"'
bad '[{"key":1}]' 'want one of "value" and "values"'
bad '[{"key":1.5,"value":2}]' "want an array of bytes, a hex string or a number"
bad '[{"key":1,"value":[1,2,3,4,5,6,7,8,9]}]' "value: want 8 bytes, have 9"
bad '[{"key":1,"value":1},{"key":2,"value":1},{"key":3,"value":1},{"key":4,"value":1},{"key":5,"value":1}]' \
	"element 5: map ports is full \(max_entries 4\)"
t 1 "cpu 64: the possible CPUs are 0..63" test "$h" --packet "$udp" \
	--map-elem 'protos:1=[{"cpu":64,"value":1}]'
t 1 "cpu 1 twice" test "$h" --packet "$udp" \
	--map-elem 'protos:1=[{"cpu":1,"value":1},{"cpu":1,"value":1}]'
t 1 "entry 1: want" test "$h" --packet "$udp" --map-elem 'protos:1=[{"cpu":1}]'
t 1 "key: -32769 does not fit in 2 bytes" test "$h" --packet "$udp" --map-elem ports:-32769=1
t 1 "key: \"0x\" is not hex" test "$h" --packet "$udp" --map-elem ports:0x=1
t 1 "--dump-map ports=/nonexistent/x.json: No such file" test "$h" --packet "$udp" \
	--dump-map ports=/nonexistent/x.json

# E(L): the last line's per-CPU elements by their key's first byte.
json_check_all 'def E(L):
    return {int(e["key"][0], 16): e["values"] for e in L[-1]["elements"]}'
[ "$failed" = 0 ] && echo "PASS"
exit "$failed"
