#!/bin/sh
# uxdp-bench smoke test: --help, argument errors (exit 2), and every
# command with tiny runs, checked for a well-formed JSON document with
# results and targets. Numbers are not judged here: speed lives in the
# benchmark, not in tests.
set -eu
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bench" --help | grep -q "usage: uxdp-bench COMMAND"
for bad in "" "nosuch" "ring -r 0" "ring --frames x" "ring extra"; do
	# shellcheck disable=SC2086
	if "$bench" $bad >/dev/null 2>&1; then
		echo "uxdp-bench $bad: accepted"; exit 1
	fi
	# shellcheck disable=SC2086
	rc=0; "$bench" $bad >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || { echo "uxdp-bench $bad: exit $rc, want 2"; exit 1; }
done

check_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc.get("results") or doc.get("rows") or []
assert rows, "no results in %s" % sys.argv[2]
for r in rows:
    v = r.get("value")
    assert v is None or v == v, "NaN value in %s: %r" % (sys.argv[2], r)
print("%s: %d results" % (sys.argv[2], len(rows)))
PY
}

"$bench" ring -r 1 -n 20000 --no-dpdk --json -q > "$tmp/ring.json"
check_json "$tmp/ring.json" ring
"$bench" pool -r 1 -n 20000 --frames 256 --no-dpdk --json -q > "$tmp/pool.json"
check_json "$tmp/pool.json" pool
"$bench" redirect -r 1 -n 20000 --json -q > "$tmp/redirect.json"
check_json "$tmp/redirect.json" redirect
# veth-tx runs the kernel peer when root; keep it short.
"$bench" veth-tx -r 1 -n 200000 --json -q > "$tmp/veth.json"
check_json "$tmp/veth.json" veth-tx
echo "uxdp-bench: OK"
