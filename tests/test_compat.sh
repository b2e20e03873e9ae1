#!/bin/sh
# libxdp source compatibility, end to end: examples/xdpsock_mini.c, written
# against libxdp's <xdp/xsk.h> only, built against libxdp and against
# uxdp's compatibility header, must do the same with the same packets.
#
#   test_compat.sh uxdp    SRC CC XDPSOCK_UXDP [XDPSOCK_LIBXDP]
#   test_compat.sh kernel  SRC CC XDPSOCK_UXDP XDPSOCK_LIBXDP [KRULES_PROBE]
#   test_compat.sh samples SRC CC LIBDIR [CFLAGS]
#
# uxdp: the compatibility header compiles whatever the order of includes
# (and as C++); then xdpsock_mini on a uxdp veth pair (UXDP_COMPAT_PORT_*),
# fed from a pcap file by UXDP_COMPAT_FEED: rxdrop (busy-polling, and in
# poll() in copy mode) must count exactly the file's packets, bytes and
# hash; l2fwd must send every one back with its MACs swapped (the feed's
# capture file).
# kernel: the same file injected into a kernel veth pair in a namespace
# this script makes (root; bpffs mounted in the namespace's own mount
# namespace if absent; LIBXDP_SKIP_DISPATCHER=1), run with the libxdp
# build, must give the same totals as the uxdp build, and the same frames
# back on the peer. Without root, libxdp or kernel AF_XDP it skips loudly
# (exit 77), or fails when UXDP_CI=1. It prints the kernel's release and,
# with KRULES_PROBE (t_kernel_rules_probe), the form of each
# version-dependent rule the kernel follows: a kernel whose XDP_STATISTICS
# has no rx_ring_full (before 5.9, 8aa5a33578e9) is not compared on it.
# samples: tests/compat_samples.c, the kernel's AF_XDP samples in
# miniature (their includes and their calls beyond <xdp/xsk.h>: libxdp's
# program API, libbpf's map calls, if_nametoindex, RLIMIT_MEMLOCK), built
# against the compatibility headers with -luxdp alone (LIBDIR's libuxdp.so;
# CFLAGS: the sanitizer the library was built with). Its program path must
# be refused with the call's name; its default path, two ports with their
# fill rings stocked 300 ms after their sockets and feeds on both peers,
# must forward every packet both ways. With UXDP_BPF_EXAMPLES=DIR (a copy
# of xdp-project/bpf-examples; its sources cannot be part of uxdp), the
# real xsk_fwd and xdpsock are built and run the same way.
set -eu
mode=$1
src=$2
cc=$3
bin_uxdp=$4
bin_libxdp=${5:-none}
bin_krules=${6:-none}
# samples: LIBDIR, CFLAGS
libdir=$4
xcflags=${5:-}
npkts=120

tmp=$(mktemp -d)
ns=""
app_pid=""
cleanup() {
	if [ -n "$app_pid" ]; then
		kill "$app_pid" 2>/dev/null || true
		wait "$app_pid" 2>/dev/null || true
	fi
	if [ -n "$ns" ]; then
		ip netns del "$ns" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "" >&2
	echo "*** SKIPPED: $* ***" >&2
	echo "" >&2
	case "${UXDP_CI:-}" in
	""|0) exit 77 ;;
	esac
	echo "UXDP_CI is set: a skip is a failure here" >&2
	exit 1
}

# ---- the packets, and what a correct run reports --------------------------
cat > "$tmp/pk.py" <<'PY'
import socket, struct, sys, time

MAGIC_US, MAGIC_NS = 0xa1b2c3d4, 0xa1b23c4d

def read_pcap(path):
    data = open(path, "rb").read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (MAGIC_US, MAGIC_NS):
        sys.exit("%s: not a little-endian pcap file" % path)
    off, frames = 24, []
    while off < len(data):
        _, _, cap, _ = struct.unpack_from("<IIII", data, off)
        off += 16
        frames.append(data[off:off + cap])
        off += cap
    return frames

def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", MAGIC_US, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)))
            f.write(fr)

def fnv(frames):
    h = 0xcbf29ce484222325
    for fr in frames:
        for b in struct.pack("<I", len(fr)) + fr:
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h

def swap(fr):
    return fr[6:12] + fr[0:6] + fr[12:]

cmd = sys.argv[1]
if cmd == "gen":
    # Sizes from 60 to 1514 bytes, a local experimental EtherType (no
    # stack anywhere answers it), contents numbered.
    frames = []
    n = int(sys.argv[3])
    for i in range(n):
        ln = 60 + (i * 397) % (1514 - 60 + 1)
        dst = bytes([0x02, 0, 0, 0, 0x10, 0x02])
        src = bytes([0x02, 0, 0, 0, 0x10, 0x01])
        body = bytes((i * 13 + k) & 0xff for k in range(ln - 14))
        frames.append(dst + src + b"\x88\xb5" + body)
    write_pcap(sys.argv[2], frames)
elif cmd == "expect":
    frames = read_pcap(sys.argv[2])
    print("rx_packets %d" % len(frames))
    print("rx_bytes %d" % sum(len(f) for f in frames))
    print("rx_hash 0x%016x" % fnv(frames))
elif cmd == "swapped":
    # swapped IN OUT: OUT holds IN's frames, MACs swapped, in order.
    want = [swap(f) for f in read_pcap(sys.argv[2])]
    got = read_pcap(sys.argv[3])
    if got != want:
        bad = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                   min(len(got), len(want)))
        sys.exit("%s: %d frames, %d expected; first difference at frame %d"
                 % (sys.argv[3], len(got), len(want), bad))
elif cmd == "same":
    # same A B: the same frames, in the same order.
    a, b = read_pcap(sys.argv[2]), read_pcap(sys.argv[3])
    if a != b:
        sys.exit("%s (%d frames) and %s (%d frames) differ"
                 % (sys.argv[2], len(a), sys.argv[3], len(b)))
elif cmd == "count":
    print(len(read_pcap(sys.argv[2])))
elif cmd == "inject":
    # inject IFNAME IN OUT EXPECT: send IN's frames out of IFNAME, then
    # collect up to EXPECT frames arriving on it (3 s at most) into OUT.
    ifname, frames, expect = sys.argv[2], read_pcap(sys.argv[3]), \
        int(sys.argv[5])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((ifname, 0))
    s.settimeout(0.1)
    for fr in frames:
        s.send(fr)
    got, end = [], time.time() + 3
    while len(got) < expect and time.time() < end:
        try:
            pkt, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] != socket.PACKET_OUTGOING:
            got.append(pkt)
    write_pcap(sys.argv[4], got)
elif cmd == "afxdp":
    # Whether this kernel has AF_XDP sockets at all.
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()
    except OSError as e:
        sys.exit(str(e))
PY
# Debian's python3 when there is one: a version manager's shim costs
# seconds per start on a loaded machine.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
pk() { "$py" "$tmp/pk.py" "$@"; }

pk gen "$tmp/in.pcap" $npkts
pk expect "$tmp/in.pcap" > "$tmp/expect"

# The fields both builds must agree on (the ring-empty counters depend on
# timing, and zero-copy on the device).
fields="rx_packets rx_bytes rx_hash tx_packets tx_bytes tx_outstanding \
rx_dropped rx_invalid_descs tx_invalid_descs rx_ring_full timeout"
pick() {
	for f in $fields; do
		grep "^$f " "$1" || echo "$f -"
	done
}

check_expect() {	# OUT: rx totals as the file says, nothing lost
	grep -q "^ready$" "$1" || fail "$1: no ready line"
	for f in rx_packets rx_bytes rx_hash; do
		want=$(grep "^$f " "$tmp/expect")
		grep -qx "$want" "$1" || {
			cat "$1" >&2
			fail "$1: want '$want'"
		}
	done
	for f in rx_dropped rx_ring_full tx_invalid_descs tx_outstanding; do
		grep -qx "$f 0" "$1" || { cat "$1" >&2; fail "$1: $f not 0"; }
	done
	! grep -q "^timeout" "$1" || fail "$1: timed out"
}

# ---- uxdp ----------------------------------------------------------------------
# run_uxdp NAME OPTS...: xdpsock_mini on uxdp veth0, veth1 fed from in.pcap,
# what comes back out of veth1 written to NAME.pcap; totals in NAME.out.
run_uxdp() {
	name=$1
	shift
	UXDP_COMPAT_PORT_veth0="veth:veth0,peer=veth1" \
	UXDP_COMPAT_FEED="veth1=pcap:$tmp/in.pcap,out=$tmp/$name.pcap" \
	"$bin_uxdp" -i veth0 -n $npkts -d 30 "$@" > "$tmp/$name.out" \
		2> "$tmp/$name.err" || {
		rc=$?
		cat "$tmp/$name.out" "$tmp/$name.err" >&2
		fail "xdpsock_mini (uxdp) $* exited with $rc"
	}
}

uxdp_runs() {
	run_uxdp u_rxdrop -r
	check_expect "$tmp/u_rxdrop.out"
	grep -qx "tx_packets 0" "$tmp/u_rxdrop.out" || fail "rxdrop sent"
	run_uxdp u_rxdrop_poll -r -p -c
	check_expect "$tmp/u_rxdrop_poll.out"
	grep -qx "zerocopy 0" "$tmp/u_rxdrop_poll.out" || fail "-c: zero-copy"
	run_uxdp u_l2fwd -l
	check_expect "$tmp/u_l2fwd.out"
	grep -qx "tx_packets $npkts" "$tmp/u_l2fwd.out" ||
		fail "l2fwd: not every packet sent"
	pk swapped "$tmp/in.pcap" "$tmp/u_l2fwd.pcap"
	# Nothing came back in rxdrop.
	[ "$(pk count "$tmp/u_rxdrop.pcap")" = 0 ] ||
		fail "rxdrop: frames came back"
	echo "uxdp: rxdrop, rxdrop in poll(), l2fwd: $npkts packets each, as" \
	     "the file says"
}

if [ "$mode" = uxdp ]; then
	# The header, whatever comes first, fortified or not, C and C++.
	cat > "$tmp/order.c" <<'C'
#if LINUX_IF_FIRST
#include <linux/if.h>
#endif
#if XSK_FIRST
#include <xdp/xsk.h>
#include <xdp/libxdp.h>
#endif
#include <netinet/in.h>
#if !LINUX_IF_FIRST
#include <net/if.h>
#endif
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#include <bpf/bpf.h>

struct ops {
	int (*poll)(struct pollfd *, nfds_t, int);
};

int use(int fd, struct xsk_ring_cons *rx);
int use(int fd, struct xsk_ring_cons *rx)
{
	struct sockaddr_in sin;
	struct ops o = { poll };
	struct pollfd p = { fd, POLLIN, 0 };
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	unsigned int idx;
	char buf[4] = { 0 };

	memset(&sin, 0, sizeof(sin));
	sendto(fd, buf, 0, MSG_DONTWAIT, (struct sockaddr *)&sin,
	       sizeof(sin));
	sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL);
	getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len);
	setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &fd, sizeof(fd));
	rx->cached_cons = rx->cached_prod;
	return o.poll(&p, 1, 0) + poll(&p, 1, 0) +
	       (int)xsk_ring_cons__peek(rx, rx->size, &idx);
}

/* What the kernel's samples call beyond <xdp/xsk.h>. */
int samples(const char *ifname);
int samples(const char *ifname)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	struct xdp_program *prog = xdp_program__open_file("x.o", NULL, NULL);
	struct xdp_multiprog *mp;
	int idx = (int)if_nametoindex(ifname), key = 0;
	char msg[64];

	if (setrlimit(RLIMIT_MEMLOCK, &r) || libxdp_get_error(prog))
		return libxdp_strerror((int)libxdp_get_error(prog), msg,
				       sizeof(msg));
	xdp_program__set_xdp_frags_support(prog, true);
	xdp_program__attach(prog, idx, XDP_MODE_NATIVE, 0);
	bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(
		xdp_program__bpf_obj(prog), ".bss")), &key, &idx, BPF_ANY);
	xdp_program__detach(prog, idx, XDP_MODE_SKB, 0);
	xdp_program__close(prog);
	mp = xdp_multiprog__get_from_ifindex(idx);
	if (!libxdp_get_error(mp))
		xdp_multiprog__detach(mp);
	xdp_multiprog__close(mp);
	return xdp_program__fd(prog) + (XDP_PKT_CONTD & 1);
}
C
	inc="-I$src/include/uxdp/compat -I$src/include"
	warn="-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes"
	for first in 0 1; do
		for defs in "" "-D_GNU_SOURCE" "-O2 -D_FORTIFY_SOURCE=2" \
			    "-O2 -D_FORTIFY_SOURCE=2 -D_GNU_SOURCE" \
			    "-DLINUX_IF_FIRST=1" "-DUXDP_COMPAT_NO_LIBBPF"; do
			# shellcheck disable=SC2086
			"$cc" -std=gnu11 $warn $defs -DXSK_FIRST=$first $inc \
				-c "$tmp/order.c" -o "$tmp/order.o" ||
				fail "order.c (xsk.h first: $first, $defs)"
		done
	done
	if command -v c++ > /dev/null; then
		# shellcheck disable=SC2086
		c++ -std=gnu++17 -Wall -Wextra -Werror -DXSK_FIRST=1 $inc \
			-x c++ -c "$tmp/order.c" -o "$tmp/order.o" ||
			fail "order.c as C++"
	fi
	# One that must not compile: a wrong use is still caught (the
	# checks above can fail).
	printf '#include <xdp/xsk.h>\nint f(void);\nint f(void) { return xsk_ring_prod__reserve(0); }\n' \
		> "$tmp/bad.c"
	# shellcheck disable=SC2086
	if "$cc" $inc -c "$tmp/bad.c" -o "$tmp/bad.o" 2>/dev/null; then
		fail "bad.c compiled"
	fi
	echo "compat headers: include order, <linux/if.h> first, without" \
	     "libbpf's, _GNU_SOURCE, fortify, C++: OK"

	# No such device: a clear error, naming the variable to set.
	if "$bin_uxdp" -i nosuch0 -d 1 > /dev/null 2> "$tmp/nodev.err"; then
		fail "nosuch0 worked"
	fi
	grep -q "UXDP_COMPAT_PORT_nosuch0" "$tmp/nodev.err" ||
		{ cat "$tmp/nodev.err" >&2; fail "no hint for a missing device"; }

	uxdp_runs
	exit 0
fi

# ---- the kernel's samples, built with -luxdp alone ---------------------------
# run_fed OUT ERR CMD...: CMD on uxdp veth pairs sa0/sa1 and sb0/sb1 (the
# second from UXDP_COMPAT_PORTS), in.pcap replayed into sa1 and sb1,
# what leaves them captured in sa.pcap and sb.pcap.
run_fed() {
	out=$1
	err=$2
	shift 2
	rm -f "$tmp/sa.pcap" "$tmp/sb.pcap"
	LD_LIBRARY_PATH=$libdir \
	UXDP_COMPAT_PORT_sa0="veth:sa0,peer=sa1" \
	UXDP_COMPAT_PORTS="sb0=veth:sb0,peer=sb1" \
	UXDP_COMPAT_FEED="sa1=pcap:$tmp/in.pcap,out=$tmp/sa.pcap;sb1=pcap:$tmp/in.pcap,out=$tmp/sb.pcap" \
	"$@" > "$out" 2> "$err"
}

# The real ones, from a copy of bpf-examples.
real_samples() {
	bx=$UXDP_BPF_EXAMPLES
	[ -f "$bx/AF_XDP-forwarding/xsk_fwd.c" ] ||
		fail "UXDP_BPF_EXAMPLES=$bx: no AF_XDP-forwarding/xsk_fwd.c"
	# Under TSan: the samples' own races (their statistics threads read
	# counters and flags without synchronisation) are theirs.
	printf 'race:thread_func\nrace:dump_stats\nrace:poller\nrace:is_benchmark_done\n' \
		> "$tmp/samples.supp"
	TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=$tmp/samples.supp"
	export TSAN_OPTIONS
	# shellcheck disable=SC2086
	"$cc" -O2 $xcflags $inc -I"$bx/headers" \
		"$bx/AF_XDP-forwarding/xsk_fwd.c" -L"$libdir" -luxdp \
		-o "$tmp/xsk_fwd" 2> "$tmp/cc.err" ||
		{ cat "$tmp/cc.err" >&2; fail "xsk_fwd did not build"; }
	# SIGINT ends it; it prints its counters every second.
	rc=0
	run_fed "$tmp/fwd.out" "$tmp/fwd.err" timeout -s INT 4 \
		"$tmp/xsk_fwd" -i sa0 -i sb0 -c 0 || rc=$?
	[ $rc = 124 ] || { cat "$tmp/fwd.out" "$tmp/fwd.err" >&2;
		fail "xsk_fwd exited with $rc"; }
	grep -Eq '^\|    0 \| +'$npkts' \|' "$tmp/fwd.out" &&
	grep -Eq '^\|    1 \| +'$npkts' \|' "$tmp/fwd.out" ||
		{ tail -8 "$tmp/fwd.out" >&2; fail "xsk_fwd: not every packet received"; }
	echo "bpf-examples xsk_fwd, built with -luxdp: $npkts packets in on each port"
	if [ ! -f /usr/include/sys/capability.h ]; then
		echo "*** bpf-examples xdpsock left out: it needs <sys/capability.h> (libcap-dev) ***" >&2
		return 0
	fi
	# shellcheck disable=SC2086
	"$cc" -O2 $xcflags $inc -I"$bx/headers" \
		"$bx/AF_XDP-example/xdpsock.c" -L"$libdir" -luxdp \
		-o "$tmp/xdpsock" 2> "$tmp/cc.err" ||
		{ cat "$tmp/cc.err" >&2; fail "xdpsock did not build"; }
	run_fed "$tmp/xs.out" "$tmp/xs.err" "$tmp/xdpsock" -i sa0 -r -d 2 ||
		fail "xdpsock -r: $(cat "$tmp/xs.err")"
	grep -Eq "^rx +[0-9]+ +$npkts " "$tmp/xs.out" ||
		{ cat "$tmp/xs.out" >&2; fail "xdpsock -r: not $npkts received"; }
	run_fed "$tmp/xs.out" "$tmp/xs.err" "$tmp/xdpsock" -i sa0 -l -c -d 2 ||
		fail "xdpsock -l: $(cat "$tmp/xs.err")"
	pk swapped "$tmp/in.pcap" "$tmp/sa.pcap"
	run_fed "$tmp/xs.out" "$tmp/xs.err" "$tmp/xdpsock" -i sa0 -t -C 1000 \
		-b 32 || fail "xdpsock -t: $(cat "$tmp/xs.err")"
	[ "$(pk count "$tmp/sa.pcap")" = 1000 ] ||
		fail "xdpsock -t -C 1000 -b 32: $(pk count "$tmp/sa.pcap") sent"
	echo "bpf-examples xdpsock, built with -luxdp: rxdrop, l2fwd, txonly 1000 of 1000"
}

if [ "$mode" = samples ]; then
	inc="-I$src/include/uxdp/compat -I$src/include"
	# shellcheck disable=SC2086
	"$cc" -std=gnu11 -Wall -Wextra -Werror $xcflags $inc \
		"$src/tests/compat_samples.c" -L"$libdir" -luxdp \
		-o "$tmp/samples" 2> "$tmp/cc.err" ||
		{ cat "$tmp/cc.err" >&2; fail "compat_samples.c did not build with -luxdp alone"; }
	# Its own program (xdpsock's path when it needs one): refused,
	# naming the call, and the sample says why it gives up.
	rc=0
	run_fed "$tmp/own.out" "$tmp/own.err" "$tmp/samples" -P -i sa0 || rc=$?
	[ $rc = 1 ] || { cat "$tmp/own.err" >&2; fail "-P exited with $rc"; }
	grep -q "^uxdp compat: xdp_program__open_file: eBPF programs are not supported yet" "$tmp/own.err" &&
	grep -q "ERROR: program loading failed: Operation not supported" "$tmp/own.err" ||
		{ cat "$tmp/own.err" >&2; fail "-P: no clear refusal"; }
	# The default path: every packet of each feed forwarded to the
	# other port, though both fill rings were stocked 300 ms late and
	# sb0's socket came after the feeds started.
	run_fed "$tmp/fwd.out" "$tmp/fwd.err" "$tmp/samples" -s 300 \
		-n $npkts -i sa0 -i sb0 ||
		{ cat "$tmp/fwd.out" "$tmp/fwd.err" >&2; fail "compat_samples failed"; }
	for l in "port 0 sa0 rx $npkts tx $npkts completed $npkts" \
		 "port 1 sb0 rx $npkts tx $npkts completed $npkts" \
		 "no XDP program loaded on sa0"; do
		grep -qx "$l" "$tmp/fwd.out" ||
			{ cat "$tmp/fwd.out" "$tmp/fwd.err" >&2; fail "want '$l'"; }
	done
	pk same "$tmp/in.pcap" "$tmp/sa.pcap"
	pk same "$tmp/in.pcap" "$tmp/sb.pcap"
	echo "samples in miniature, built with -luxdp alone: program refused;" \
	     "$npkts packets forwarded each way, none lost"
	if [ -n "${UXDP_BPF_EXAMPLES:-}" ]; then
		real_samples
	else
		echo "(the real xsk_fwd and xdpsock: set UXDP_BPF_EXAMPLES to a copy of xdp-project/bpf-examples)"
	fi
	exit 0
fi

[ "$mode" = kernel ] || fail "mode: uxdp, kernel or samples"

# ---- the kernel ------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "kernel AF_XDP comparison needs root"
[ -x "$bin_libxdp" ] || skip "xdpsock_mini_libxdp not built (libxdp-dev)"
command -v ip > /dev/null || skip "no ip(8) (iproute2)"
ns="uxdp-compat-$$"
ip netns add "$ns" 2> "$tmp/ns.err" ||
	skip "cannot make a network namespace: $(cat "$tmp/ns.err")"
ip netns exec "$ns" "$py" "$tmp/pk.py" afxdp 2> "$tmp/afxdp.err" ||
	skip "no AF_XDP in this kernel: $(cat "$tmp/afxdp.err")"

uxdp_runs

echo "comparing against kernel $(uname -r)"
if [ -x "$bin_krules" ]; then
	"$bin_krules" > "$tmp/krules" || fail "t_kernel_rules_probe failed"
	cat "$tmp/krules"
	if grep -q ": stats_v2 older" "$tmp/krules"; then
		echo "kernel $(uname -r) follows the older rule here" \
		     "(8aa5a33578e9): no rx_ring_full in XDP_STATISTICS," \
		     "not compared"
		fields=$(echo "$fields" | sed 's/rx_ring_full //')
	fi
fi

# No IPv6 (router solicitations and the like would reach the socket), a
# veth pair, both ends up.
ip netns exec "$ns" sh -e -c '
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip link set lo up
	ip link add veth0 type veth peer name veth1
	ip link set veth0 up
	ip link set veth1 up'

# run_kernel NAME OPTS...: xdpsock_mini (libxdp) on veth0; once it is
# ready, in.pcap is sent from veth1 and what comes back on veth1 is
# written to NAME.pcap.
run_kernel() {
	name=$1
	shift
	expect=0
	case " $* " in *" -l "*) expect=$npkts ;; esac
	ip netns exec "$ns" sh -c '
		mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
		LIBXDP_SKIP_DISPATCHER=1 exec "$@"' sh \
		"$bin_libxdp" -i veth0 -n $npkts -d 30 "$@" \
		> "$tmp/$name.out" 2> "$tmp/$name.err" &
	app_pid=$!
	i=0
	while ! grep -q "^ready$" "$tmp/$name.out"; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$app_pid" 2>/dev/null; then
			cat "$tmp/$name.out" "$tmp/$name.err" >&2
			fail "xdpsock_mini (libxdp) $* did not get ready"
		fi
		sleep 0.05
	done
	ip netns exec "$ns" "$py" "$tmp/pk.py" inject veth1 "$tmp/in.pcap" \
		"$tmp/$name.pcap" $expect
	rc=0
	wait "$app_pid" || rc=$?
	app_pid=""
	[ $rc = 0 ] || {
		cat "$tmp/$name.out" "$tmp/$name.err" >&2
		fail "xdpsock_mini (libxdp) $* exited with $rc"
	}
}

compare() {	# KERNEL_OUT UXDP_OUT
	pick "$1" > "$1.pick"
	pick "$2" > "$2.pick"
	diff -u "$1.pick" "$2.pick" >&2 ||
		fail "kernel ($1) and uxdp ($2) differ"
}

run_kernel k_rxdrop -r
check_expect "$tmp/k_rxdrop.out"
compare "$tmp/k_rxdrop.out" "$tmp/u_rxdrop.out"
run_kernel k_rxdrop_poll -r -p -c
check_expect "$tmp/k_rxdrop_poll.out"
compare "$tmp/k_rxdrop_poll.out" "$tmp/u_rxdrop_poll.out"
run_kernel k_l2fwd -l
check_expect "$tmp/k_l2fwd.out"
compare "$tmp/k_l2fwd.out" "$tmp/u_l2fwd.out"
pk swapped "$tmp/in.pcap" "$tmp/k_l2fwd.pcap"
pk same "$tmp/u_l2fwd.pcap" "$tmp/k_l2fwd.pcap"
[ "$(pk count "$tmp/k_rxdrop.pcap")" = 0 ] ||
	fail "kernel rxdrop: frames came back"
echo "kernel veth (libxdp) and uxdp veth (compat): the same totals for" \
     "rxdrop, rxdrop in poll(), l2fwd, and the same frames back"
