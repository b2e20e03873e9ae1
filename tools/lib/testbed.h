/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testbed: private network namespaces, veth pairs between them, small XDP
 * programs, a kernel packet generator and raw packet sockets, for the
 * tests and the benchmarks that need real Linux interfaces (the afxdp
 * driver). Plain C over libbpf and rtnetlink; no uxdp, no cmocka; prints
 * nothing (failures return -errno, tb_errmsg() says why).
 *
 *	struct tb *tb;
 *	struct tb_ns *a, *b;
 *
 *	tb_open(&tb, 0);
 *	a = tb_ns_new(tb, "a");
 *	b = tb_ns_new(tb, "b");
 *	tb_veth_add(tb, a, "va", b, "vb", NULL);   both ends up, IPv6 off
 *	tb_ns_run(a, make_my_device, arg);          code that must run in a
 *	tb_pkt_open(b, "vb", &fd);                  raw socket on vb
 *	...
 *	tb_close(tb);                               everything removed
 *
 * Namespaces. Made with unshare(CLONE_NEWNET) in a short-lived thread and
 * held by a file descriptor: they have no name, nothing shows in
 * `ip netns list`, and nothing can outlive the process, whatever kills
 * it (the kernel frees a namespace with its last reference, and the veth
 * pairs and XDP programs in it with it). With TB_F_NAMED (or
 * UXDP_TESTBED_NAMED=1 in the environment) each is also bind-mounted at
 * /run/netns/uxdptb-PID-NAME, so `ip netns exec` and tcpdump can look in
 * while a test runs; those names are removed by tb_close(), at exit, on
 * SIGINT/SIGTERM/SIGHUP, and, should a process die with SIGKILL, by the
 * next tb_open() of any process (leftovers of dead PIDs).
 * IPv6 is disabled in every namespace, so the stack sends nothing of its
 * own (router solicitations, MLD) out of the veths: tests count packets.
 *
 * Threads. Calls that act in a namespace enter it in the calling thread
 * (setns) and go back before returning; sockets made that way stay in
 * the namespace whatever thread uses them. One tb may be used from
 * several threads if calls on it are not concurrent. Needs root
 * (CAP_SYS_ADMIN for namespaces, CAP_NET_ADMIN, CAP_BPF).
 *
 * XDP into veth, the trap this module checks: a frame redirected or
 * XDP_TX'ed INTO a veth by the kernel's XDP (ndo_xdp_xmit) is received by
 * the other end only if that end has an XDP program (its NAPI); without
 * one the kernel drops it, counted only in ethtool -S. Packets a socket
 * sends (AF_PACKET, AF_XDP copy mode) go through the stack and need
 * nothing. tb_gen_run() refuses to inject into a veth whose peer has no
 * program (-ENOLINK), rather than lose every frame quietly.
 */
#ifndef UXDP_TOOLS_TESTBED_H
#define UXDP_TOOLS_TESTBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_NAME_MAX	16	/* namespace name, with the NUL */
#define TB_PREFIX	"uxdptb"

struct tb;
struct tb_ns;

/* tb_open() flags */
#define TB_F_NAMED	(1U << 0)	/* bind-mount under /run/netns too */

/*
 * A testbed. Removes what dead processes left under /run/netns, and
 * arranges that everything this one makes is removed at exit and on
 * SIGINT, SIGTERM and SIGHUP (when their action is the default: the
 * signal is raised again once the cleanup is done). Returns 0, or -EPERM
 * (not root), -errno.
 */
int tb_open(struct tb **tbp, uint32_t flags);

/* Remove every namespace, veth pair and program of @tb, and free it. */
void tb_close(struct tb *tb);

/* Why the last failing call of this thread failed ("" if none). */
const char *tb_errmsg(void);

/* ---- namespaces ---------------------------------------------------------- */

/* A new, empty network namespace (loopback down, IPv6 off). @name: 1..15
 * characters, [A-Za-z0-9_-], unique in @tb. Returns it or NULL (errno). */
struct tb_ns *tb_ns_new(struct tb *tb, const char *name);

/* Its file descriptor (for setns) and name. */
int tb_ns_fd(const struct tb_ns *ns);
const char *tb_ns_name(const struct tb_ns *ns);

/*
 * Move the calling thread into @ns; *@saved gets a descriptor of where it
 * was, for tb_ns_leave(). Returns 0 or -errno.
 */
int tb_ns_enter(const struct tb_ns *ns, int *saved);
/* Back to @saved (and close it). Returns 0 or -errno. */
int tb_ns_leave(int saved);

/* Run @fn(@arg) with the calling thread in @ns. Returns fn's result, or
 * -errno if the namespace could not be entered. */
int tb_ns_run(const struct tb_ns *ns, int (*fn)(void *arg), void *arg);

/* ---- links --------------------------------------------------------------- */

struct tb_veth_opts {
	uint32_t queues;	/* RX = TX queues per end; 0: 1 */
	uint32_t mtu;		/* 0: 1500 */
	bool down;		/* leave both ends down */
	/* Ethernet addresses; NULL: 02:75:78:74:62:NN (NN: the pair's
	 * number in @tb, then 0 for a, 1 for b). */
	const uint8_t *mac_a, *mac_b;
};

/*
 * A veth pair: @a in @ns_a, @b in @ns_b (may be the same namespace).
 * @o may be NULL. Returns 0 or -errno (-EEXIST: a name is taken).
 */
int tb_veth_add(struct tb *tb, struct tb_ns *ns_a, const char *a,
		struct tb_ns *ns_b, const char *b,
		const struct tb_veth_opts *o);

/* Delete a link (a veth end takes its peer along). Returns 0 or -errno. */
int tb_link_del(struct tb_ns *ns, const char *ifname);

/* Up or down; MTU (0: leave). Returns 0 or -errno. */
int tb_link_set(struct tb_ns *ns, const char *ifname, bool up, uint32_t mtu);

/* Channels (ethtool -L): @rx and @tx queues in use (0: leave). */
int tb_link_set_queues(struct tb_ns *ns, const char *ifname, uint32_t rx,
		       uint32_t tx);

/* Interface index of @ifname in @ns, or -ENODEV. */
int tb_ifindex(struct tb_ns *ns, const char *ifname);

/* The interface's Ethernet address. Returns 0 or -errno. */
int tb_link_mac(struct tb_ns *ns, const char *ifname, uint8_t mac[6]);

/*
 * One of the interface's driver counters (ethtool -S) by name: for veth,
 * "rx_queue_1_xdp_redirect", "rx_queue_0_xdp_packets", "peer_ifindex",
 * ... Returns 0 and *@value, -ENOENT (no such counter), or -errno.
 */
int tb_link_stat(struct tb_ns *ns, const char *ifname, const char *name,
		 uint64_t *value);

/* Every driver counter of @ifname that is not zero, one line to @out
 * ("IF: name value ..."), for a failure's report. 0 or -errno. */
int tb_link_stats_print(struct tb_ns *ns, const char *ifname, FILE *out);

/*
 * AF_XDP sockets open in @ns, by anyone (the kernel's count per
 * namespace: the XDP line of /proc/net/protocols; it needs no
 * CONFIG_XDP_SOCKETS_DIAG). Returns the count, or -errno.
 */
int tb_xsk_count(struct tb_ns *ns);

/* ---- XDP programs -------------------------------------------------------- */

enum tb_prog_kind {
	TB_PROG_PASS,		/* count, XDP_PASS */
	TB_PROG_DROP,		/* count, XDP_DROP */
	TB_PROG_TX,		/* count, XDP_TX (back out of the interface) */
	TB_PROG_REDIRECT,	/* count, bpf_redirect(arg ifindex) */
	TB_PROG_MACSWAP,	/* count, swap the Ethernet addresses, XDP_TX
				 * (frames shorter than 14 bytes: XDP_DROP) */
};

/* Attach modes: tb_xdp_attach() flags, tb_xdp_query() results. */
#define TB_XDP_NATIVE	1
#define TB_XDP_GENERIC	2

struct tb_xdp;

/*
 * Load a program of @kind (@arg: the redirect target's ifindex) and
 * attach it to @ifname in @ns, in @mode (TB_XDP_NATIVE or
 * TB_XDP_GENERIC), if the interface runs none. Every one counts packets
 * and bytes. Returns 0 and *@out, or -errno (-EBUSY: a program is there).
 */
int tb_xdp_attach(struct tb_ns *ns, const char *ifname, enum tb_prog_kind kind,
		  uint32_t arg, int mode, struct tb_xdp **out);

/* Packets and bytes the program has seen (all CPUs). Returns 0 or -errno. */
int tb_xdp_count(const struct tb_xdp *x, uint64_t *packets, uint64_t *bytes);

/* Detach (if still ours) and free. NULL is a no-op. */
void tb_xdp_detach(struct tb_xdp *x);

/*
 * What @ifname in @ns runs: *@prog_id (0: nothing) and *@mode
 * (TB_XDP_NATIVE, TB_XDP_GENERIC, 0 none, -1 other). Returns 0 or -errno.
 */
int tb_xdp_query(struct tb_ns *ns, const char *ifname, uint32_t *prog_id,
		 int *mode);

/* ---- the kernel generator (BPF_PROG_TEST_RUN, live frames) --------------- */

struct tb_gen_opts {
	uint64_t pps;		/* 0: as fast as the kernel goes */
	int cpu;		/* run on this CPU (veth picks the receiving
				 * queue by CPU); -1: wherever */
	uint32_t batch;		/* frames per flush; 0: 64 */
	/* tb_gen_open() only: the program drops every frame instead of
	 * sending it, so a run measures what injection alone costs (the
	 * generator's ceiling); the peer needs no program then. */
	bool drop;
};

/*
 * Inject @count copies of @frame (@len bytes, 14..3500) out of veth end
 * @ifname in @ns (XDP redirect: they arrive at its peer as XDP frames),
 * at @o->pps, bounded in time by the count and rate. The peer must have
 * an XDP program (see the top: else -ENOLINK, nothing sent). @o may be
 * NULL. Returns 0 or -errno (-EOPNOTSUPP: no live-frames test runs).
 */
int tb_gen_run(struct tb *tb, struct tb_ns *ns, const char *ifname,
	       const void *frame, size_t len, uint64_t count,
	       const struct tb_gen_opts *o);

/*
 * The same generator kept open, for benchmarks that inject many times and
 * time each injection themselves: tb_gen_open() does the checks and loads
 * the program once (same arguments and errors as tb_gen_run(), less the
 * count), tb_gen_send() injects @count frames (as fast as the kernel goes,
 * or at @o->pps; on @o->cpu if not -1) and returns 0 or -errno,
 * tb_gen_close() frees it (NULL: no-op). A generator touches only its own
 * state: one thread may send on it while another reads counters.
 */
struct tb_gen;
int tb_gen_open(struct tb *tb, struct tb_ns *ns, const char *ifname,
		const void *frame, size_t len, const struct tb_gen_opts *o,
		struct tb_gen **out);
int tb_gen_send(struct tb_gen *g, uint64_t count);
void tb_gen_close(struct tb_gen *g);

/* ---- raw packets --------------------------------------------------------- */

/*
 * An AF_PACKET socket bound to @ifname in @ns: sends whole Ethernet
 * frames, receives what arrives on the interface (not what it sends).
 * Returns 0 and *@fd, or -errno. Close it with close().
 */
int tb_pkt_open(struct tb_ns *ns, const char *ifname, int *fd);

/* Send one frame. Returns 0 or -errno. */
int tb_pkt_send(int fd, const void *frame, size_t len);

/* Receive one frame into @buf, waiting up to @timeout_ms. Returns its
 * length, -ETIMEDOUT, or -errno. */
ssize_t tb_pkt_recv(int fd, void *buf, size_t size, int timeout_ms);

/* The packet socket's counts since the last call (PACKET_STATISTICS
 * resets them): frames queued to it and frames it dropped. 0 or -errno. */
int tb_pkt_stats(int fd, uint64_t *packets, uint64_t *drops);

/* ---- test frames --------------------------------------------------------- */

/*
 * Build an Ethernet/IPv4/UDP frame of @len bytes (60..9000) from @src to
 * @dst, UDP ports @sport -> 9, sequence number @seq in the first 8 bytes
 * of the payload and a pattern derived from it in the rest. Returns @len,
 * or 0 if @len is out of range.
 */
size_t tb_frame_build(void *buf, size_t len, const uint8_t dst[6],
		      const uint8_t src[6], uint16_t sport, uint64_t seq);

/*
 * Check a frame tb_frame_build() made: lengths, IPv4 checksum, payload
 * pattern (not the Ethernet addresses: a forwarder may swap them).
 * Returns true and *@seq if intact.
 */
bool tb_frame_check(const void *buf, size_t len, uint64_t *seq);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_TOOLS_TESTBED_H */
