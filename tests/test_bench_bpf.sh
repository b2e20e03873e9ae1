#!/bin/sh
# uxdp-bench bpf smoke test: tiny runs of every program on every side
# that can run here, checked for real work, not for speed: the JIT, the
# interpreter and native C each have figures on the dev, run and test
# paths (a figure exists only if every run returned the program's own
# verdict and, on the dev path, every packet ended in its counter), the
# safety pass's counts are there, the kernel's figures or the reason
# they are not, and a failed variant is exit 1 naming it.
set -eu
tool=$1 tool_name=uxdp-bench tool_timeout=100
. "$(dirname "$0")/t_tool.sh"

expect 0 "" bpf -r 1 -n 2000 --json -q
cp "$tmp/out" "$tmp/bpf.json"
python3 - "$tmp/bpf.json" "$(id -u)" <<'PY' || fail "bpf: bad results"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for r in doc["results"] if r["group"] == "bpf"]
fig = {(r["name"], r["variant"]): r for r in rows}
progs = ["drop", "count", "parse_udp", "macswap", "loop", "calls",
         "rodata"]
for p in ["pass"] + progs:
    for side in ["uxdp-jit", "uxdp-interp", "native-c"]:
        for path in ["dev", "run"] + (["test"] if side != "native-c"
                                      else []):
            r = fig.get(("%s %s" % (p, path), side))
            assert r and r["value"] and r["value"] > 0, \
                "no figure for %s %s %s" % (p, path, side)
            assert "cost" in r.get("parts", {}), \
                "no floor-subtracted cost for %s %s %s" % (p, path, side)
    s = fig.get(("%s safety" % p, "uxdp"))
    assert s and s["parts"]["accesses"] == s["parts"]["proven"] + \
        s["value"], "safety counts of %s: %r" % (p, s)
    assert " 0 faults in " in s["note"], "faults in %s: %s" % (p, s["note"])
# The loop's back edge is counted; drop touches no memory.
assert fig[("loop safety", "uxdp")]["parts"]["back_edges"] >= 1
assert fig[("drop safety", "uxdp")]["parts"]["accesses"] == 0
notes = " ".join(n["text"] for n in doc["notes"])
# The XSKMAP program runs (its map empty: XDP_PASS) on uxdp's engines.
assert fig.get(("xsk_pick test", "uxdp-jit")), "no uxdp figure for xsk_pick"
if sys.argv[2] == "0":
    for p in progs + ["xsk_pick"]:
        r = fig.get(("%s test" % p, "kernel"))
        assert r and r["value"] > 0, "no kernel figure for %s" % p
        # The kernel on a veth pair: a figure, or why not (no live frames).
        assert ("%s dev" % p, "kernel") in fig or \
            "%s on kernel, dev path: skipped" % p in notes, \
            "kernel dev path of %s: no figure, no reason" % p
else:
    assert "not root" in notes, "kernel skipped without saying why"
# With DPDK built, the peers' ratios are there for count (both sides
# run it) and as a geomean: positive, or none with the reason (a cost
# at most 0, which a run this tiny may give under load).
def ratio_ok(r):
    return r and ((r["value"] is not None and r["value"] > 0) or
                  (r["value"] is None and "no ratio" in (r["note"] or "")))
if any(r["variant"] == "dpdk-jit" for r in rows):
    for v in ["dpdk-interp/dpdk-jit", "uxdp-interp/dpdk-interp",
              "uxdp-jit/dpdk-jit"]:
        assert ratio_ok(fig.get(("count ratio", v))), \
            "count: peer ratio %s: %r" % (v, fig.get(("count ratio", v)))
        g = fig.get(("geomean ratio", v))
        assert g and (g["value"] is None or g["value"] > 0) and \
            " programs" in (g["note"] or ""), "geomean %s: %r" % (v, g)
targets = [t["what"] for t in doc["targets"]]
for t in ["jit/native geomean", "interp/jit geomean",
          "jit/kernel geomean"]:
    assert t in targets, "no target %s" % t
print("bpf: %d results, %d targets" % (len(rows), len(targets)))
PY

# A variant that fails: exit 1, named on stderr, the rest still reported.
UXDP_BENCH_FAIL_VARIANT="bpf count run uxdp-jit" \
	expect 1 "bpf count run uxdp-jit" bpf -r 1 -n 500 --no-dpdk -q
grep -q "parse_udp run" "$tmp/out" || fail "injected failure: nothing else reported"

[ "$failed" -eq 0 ] || exit 1
echo "uxdp-bench bpf: OK"
