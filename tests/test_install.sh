#!/bin/sh
# Install into a scratch prefix, then build the README example the way a
# consumer would: pkg-config --cflags --libs uxdp, shared and static.
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The README's way: make install PREFIX=DIR (the build is up to date, so
# this only installs), and the .pc names DIR, not the configured prefix.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" install \
	BUILD="$build" PREFIX="$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name uxdp.pc)
[ -n "$pc" ] || { echo "uxdp.pc not installed"; exit 1; }
grep -qx "prefix=$tmp/prefix" "$pc" ||
	{ echo "uxdp.pc does not name PREFIX:"; cat "$pc"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
pkgc() { pkg-config "$@" uxdp; }
libdir=$(pkgc --variable=libdir)
[ -f "$tmp/prefix/include/uxdp/driver.h" ] ||
	{ echo "headers not under PREFIX"; exit 1; }
# The man pages: uxdp(7), and each tool's, installed and rendering
# without a warning.
for m in man7/uxdp.7 man1/uxdp-fwd.1 man1/uxdp-xsk.1 man1/uxdp-bpf.1 \
	 man1/uxdp-bench.1; do
	# A tool's page comes with the tool (UXDP_BUILD_TOOLS).
	case $m in man1/*)
		t=$(basename "$m" .1)
		[ -x "$tmp/prefix/bin/$t" ] || continue ;;
	esac
	f=$(find "$tmp/prefix" -path "*/man/$m")
	[ -n "$f" ] || { echo "$m not installed"; exit 1; }
	if command -v groff >/dev/null; then
		# Undefined macros, bad escapes, missing glyphs; not line
		# adjustment, which long port strings cannot avoid.
		w=$(groff -man -Tutf8 -Wbreak -wmac -wchar -wescape "$f" 2>&1 >/dev/null)
		[ -z "$w" ] || { echo "$m: groff: $w"; exit 1; }
	fi
done

cc $(pkgc --cflags) "$src/examples/quickstart.c" $(pkgc --libs) \
	-o "$tmp/qs-shared"
LD_LIBRARY_PATH=$libdir "$tmp/qs-shared" | grep -q "hello"

cc $(pkgc --cflags) "$src/examples/quickstart.c" "$libdir/libuxdp.a" \
	$(pkgc --static --libs-only-l | sed 's/-luxdp//') -o "$tmp/qs-static"
"$tmp/qs-static" | grep -q "hello"

# The complete example, threads and all, from the installed headers only.
cc $(pkgc --cflags) "$src/examples/veth_reflect.c" $(pkgc --libs) \
	-o "$tmp/reflect"
LD_LIBRARY_PATH=$libdir "$tmp/reflect" 10000 |
	grep -q "reflected 10000 of 10000 packets; audit: 0 misplaced"
# The compatibility headers: an application of the kernel's AF_XDP
# samples' kind builds from them with pkg-config's flags alone (-luxdp),
# and its program calls are refused by name.
for h in xdp/xsk.h xdp/libxdp.h bpf/libbpf.h bpf/bpf.h; do
	[ -f "$tmp/prefix/include/uxdp/compat/$h" ] ||
		{ echo "compat/$h not installed"; exit 1; }
done
cc -I"$(pkgc --variable=includedir)/uxdp/compat" $(pkgc --cflags) \
	"$src/tests/compat_samples.c" $(pkgc --libs) -o "$tmp/samples"
if LD_LIBRARY_PATH=$libdir UXDP_COMPAT_PORT_i0="null:i0" \
	"$tmp/samples" -P -i i0 2> "$tmp/samples.err"; then
	echo "compat_samples -P: the program was not refused"; exit 1
fi
grep -q "xdp_program__open_file: eBPF programs are not supported yet" \
	"$tmp/samples.err" || { cat "$tmp/samples.err"; exit 1; }
echo "install + pkg-config: shared and static consumers OK"
