#!/bin/sh
# The library exports exactly what the public headers declare: every
# function declared in include/uxdp/*.h is in the shared library (with the
# version node), and nothing else is. Catches a new public function missing
# from src/libuxdp.map, and a private one leaking out. And the in-tree
# drivers include public headers only (<uxdp/driver.h> and the layers'),
# as an out-of-tree driver must.
set -eu
lib=$1
inc=$2
src=$(dirname "$inc")/src
if grep -n '#include "' "$src"/drivers/*.c; then
	echo "in-tree drivers must include only public headers (above)"
	exit 1
fi
python3 - "$lib" "$inc" <<'PY'
import glob, re, subprocess, sys
lib, inc = sys.argv[1], sys.argv[2]
declared = set()
for h in glob.glob(inc + "/uxdp/*.h"):
    text = open(h).read()
    # Drop comments and preprocessor lines (macros are not symbols).
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines()
                     if not l.lstrip().startswith("#"))
    for m in re.finditer(r"\b(uxdp_[a-z0-9_]+)\s*\(", text):
        name = m.group(1)
        # A declaration's name follows its return type (a word or a '*');
        # a call inside an inline body follows an operator, a '(' or a
        # keyword such as return.
        before = text[:m.start()].rstrip()
        prev = re.search(r"([A-Za-z0-9_]+|\S)$", before)
        if not prev:
            continue
        tok = prev.group(1)
        if tok in ("return", "if", "while", "sizeof", "else"):
            continue
        if not (tok == "*" or re.match(r"[A-Za-z0-9_]+$", tok)):
            continue
        declared.add(name)
out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                     capture_output=True, text=True).stdout
exported = {}
for line in out.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[2].startswith("uxdp_"):
        name, _, ver = parts[2].partition("@")
        exported[name] = ver.lstrip("@")
# Function-like names in headers that are not functions: typedef'd
# function pointer types used as uxdp_x_fn(...) do not occur; struct
# members are not matched (they follow "->" or "." in inline bodies).
missing = sorted(n for n in declared if n not in exported)
extra = sorted(n for n in exported if n not in declared)
unversioned = sorted(n for n, v in exported.items() if v != "UXDP_0.1")
ok = True
if missing:
    ok = False
    print("declared in include/uxdp but not exported (src/libuxdp.map?):")
    print("  " + " ".join(missing))
if extra:
    ok = False
    print("exported but declared in no public header (make it static, or "
          "declare it):")
    print("  " + " ".join(extra))
if unversioned:
    ok = False
    print("exported without the UXDP_0.1 version: " + " ".join(unversioned))
print("%d functions declared, %d exported" % (len(declared), len(exported)))
sys.exit(0 if ok else 1)
PY
