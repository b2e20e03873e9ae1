/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The afxdp driver against the running kernel: veth pairs in private
 * network namespaces (tools/lib/testbed.h), packets from raw sockets and
 * the kernel's live-frames generator in a peer namespace, into an afxdp
 * device, through uxdp programs, and back out.
 *
 * Every test ends with the device down: uxdp_dev_audit() == 0 and 0 in
 * flight (a device that is down holds nothing in the kernel), then
 * destroyed: no XDP program on the interface, no AF_XDP socket left in
 * the process. A shared UMEM is audited whole (uxdp_umem_audit():
 * uxdp_dev_audit() audits a device's pools one at a time, so the other
 * pools' chunks would count as misplaced), with 0 in flight per device. Traffic is bounded in count and time; the namespaces go
 * with the testbed (and with the process, whatever ends it).
 *
 * Every run prints the kernel's release and the form of the
 * version-dependent rules it follows (t_kernel_rules.h); what it counts is
 * checked in sums that hold under either form (ring-full drops were in
 * rx_dropped before XDP_STATISTICS grew rx_ring_full, 5.9).
 *
 * Needs root and AF_XDP; otherwise the program skips (exit 77), loudly,
 * and fails under UXDP_CI=1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <net/if.h>

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "t_helpers.h"
#include "t_kernel_rules.h"
#include "testbed.h"

#include <uxdp/afxdp.h>
#include <uxdp/uxdp.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define T_DEADLINE_MS	5000	/* longest wait for traffic */

/* The running kernel's release and the form of each rule it follows. */
static struct t_krules t_kr;

/* ---- per-test environment: namespaces a (ours) and b (the peer) ---------- */

struct t_env {
	struct tb *tb;
	struct tb_ns *a, *b;
	struct uxdp_dev *dev[4];
	struct uxdp_prog *prog[4];
	int fd[4];
	uint8_t mac_va[6], mac_vb[6];
};

static int t_env_setup(struct t_env *e, uint32_t queues, uint32_t mtu)
{
	struct tb_veth_opts vo = { .queues = queues, .mtu = mtu };
	int err, i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < 4; i++)
		e->fd[i] = -1;
	err = tb_open(&e->tb, 0);
	if (!err) {
		e->a = tb_ns_new(e->tb, "a");
		e->b = e->a ? tb_ns_new(e->tb, "b") : NULL;
		err = e->b ? 0 : -errno;
	}
	if (!err)
		err = tb_veth_add(e->tb, e->a, "va", e->b, "vb", &vo);
	if (!err)
		err = tb_link_mac(e->a, "va", e->mac_va);
	if (!err)
		err = tb_link_mac(e->b, "vb", e->mac_vb);
	if (err)
		fprintf(stderr, "testbed: %s\n", tb_errmsg());
	return err;
}

static void t_env_teardown(struct t_env *e)
{
	int i;

	for (i = 0; i < 4; i++) {
		uxdp_dev_destroy(e->dev[i]);
		uxdp_prog_put(e->prog[i]);
		if (e->fd[i] >= 0)
			close(e->fd[i]);
	}
	tb_close(e->tb);
}

static int setup_1q(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(t_env_setup(e, 1, 0), 0);
	*state = e;
	return 0;
}

static int setup_2q(void **state)
{
	struct t_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(t_env_setup(e, 2, 0), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	t_env_teardown(*state);
	free(*state);
	return 0;
}

/* Open a port in namespace @ns (the driver looks the interface up in the
 * creating thread's namespace). */
struct t_open {
	const char *port, *name;
	struct uxdp_dev *dev;
	int err;
	char msg[256];
};

static int t_open_fn(void *arg)
{
	struct t_open *o = arg;

	o->dev = uxdp_dev_open(o->port, o->name);
	o->err = o->dev ? 0 : errno;
	snprintf(o->msg, sizeof(o->msg), "%s", uxdp_errmsg());
	return 0;
}

static struct uxdp_dev *t_open_in(struct tb_ns *ns, const char *port,
				  const char *name, int *err, char *msg)
{
	struct t_open o = { .port = port, .name = name };

	assert_int_equal(tb_ns_run(ns, t_open_fn, &o), 0);
	if (err)
		*err = o.err;
	if (msg)
		snprintf(msg, 256, "%s", o.msg);
	if (!o.dev && !err)
		fail_msg("%s: %s", port, o.msg);
	return o.dev;
}

/* AF_XDP sockets this process holds. */
static int t_xsk_sockets(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name), dom;
		socklen_t len = sizeof(dom);

		if (de->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) &&
		    dom == AF_XDP)
			n++;
	}
	closedir(d);
	return n;
}

/* What the process writes to stderr between begin and end (libbpf's and
 * libxdp's default print goes there). */
static int t_stderr_begin(void)
{
	int saved = dup(2), fd = memfd_create("t_stderr", MFD_CLOEXEC);

	assert_true(saved >= 0 && fd >= 0);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	close(fd);
	return saved;
}

static void t_stderr_end(int saved, char *buf, size_t size)
{
	ssize_t n;

	fflush(stderr);
	n = pread(2, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	assert_true(dup2(saved, 2) == 2);
	close(saved);
}

static uint32_t t_prog_on(struct t_env *e, const char *ifname)
{
	uint32_t id = 1;

	assert_int_equal(tb_xdp_query(e->a, ifname, &id, NULL), 0);
	return id;
}

/* Down: audit clean, nothing in flight. Then destroy: nothing left. */
static void t_end_device(struct t_env *e, int i, const char *ifname)
{
	struct uxdp_dev_audit a;

	assert_int_equal(uxdp_dev_down(e->dev[i]), 0);
	assert_int_equal(uxdp_dev_audit(e->dev[i], &a), 0);
	assert_int_equal(a.misplaced, 0);
	assert_int_equal(a.in_flight, 0);
	uxdp_dev_destroy(e->dev[i]);
	e->dev[i] = NULL;
	if (ifname)
		assert_int_equal(t_prog_on(e, ifname), 0);
}

/* ---- programs ------------------------------------------------------------ */

struct t_prog {
	uint32_t verdict;		/* UXDP_DROP, UXDP_TX, UXDP_REDIRECT */
	struct uxdp_xdp_target *to;	/* redirect */
	uint64_t packets, bytes, intact;
};

static uint32_t t_prog_run(struct uxdp_buff *ctx, void *priv)
{
	struct t_prog *p = priv;
	uint32_t len = uxdp_buff_len(ctx);
	uint8_t *d = ctx->data, tmp[6];

	__atomic_fetch_add(&p->packets, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->bytes, len, __ATOMIC_RELAXED);
	/* Release: a reader that sees intact sees packets and bytes. */
	if (tb_frame_check(d, len, NULL))
		__atomic_fetch_add(&p->intact, 1, __ATOMIC_RELEASE);
	if (p->verdict == UXDP_TX) {
		memcpy(tmp, d, 6);
		memcpy(d, d + 6, 6);
		memcpy(d + 6, tmp, 6);
	}
	if (p->verdict == UXDP_REDIRECT)
		return uxdp_redirect_target(p->to);
	return p->verdict;
}

static void t_attach(struct t_env *e, int i, struct t_prog *p)
{
	e->prog[i] = uxdp_prog_create("t_prog", t_prog_run, p);
	assert_non_null(e->prog[i]);
	assert_int_equal(uxdp_dev_attach_prog(e->dev[i], UXDP_ALL_QUEUES,
					      e->prog[i]), 0);
}

static uint64_t t_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_ACQUIRE);
}

/* Poll every queue of @dev (this thread) until *@c reaches @want. */
static void t_poll_until(struct uxdp_dev *dev, const uint64_t *c,
			 uint64_t want)
{
	uint64_t t0 = t_now_ms();
	uint32_t q;

	while (t_get(c) < want && t_now_ms() - t0 < T_DEADLINE_MS)
		for (q = 0; q < uxdp_dev_num_rxq(dev); q++)
			assert_true(uxdp_dev_poll(dev, q, 64) >= 0);
}

static void t_wait_until(const uint64_t *c, uint64_t want)
{
	uint64_t t0 = t_now_ms();

	while (t_get(c) < want && t_now_ms() - t0 < T_DEADLINE_MS)
		usleep(1000);
}

/* Until the device's queue @q has no frame in flight (completions). */
static void t_wait_tx_done(struct uxdp_dev *dev, uint32_t q)
{
	struct uxdp_afxdp_queue_stats qs;
	uint64_t t0 = t_now_ms();

	do {
		assert_int_equal(uxdp_afxdp_queue_stats(dev, q, &qs), 0);
		if (!qs.tx_in_flight)
			return;
		usleep(1000);
	} while (t_now_ms() - t0 < T_DEADLINE_MS);
	fail_msg("queue %u: %u frames still in flight", q, qs.tx_in_flight);
}

static const uint32_t t_sizes[] = { 60, 64, 128, 256, 512, 1000, 1400, 1514 };
#define T_NSIZES	(sizeof(t_sizes) / sizeof(t_sizes[0]))

/* Send @per of every size from @fd (vb), return the bytes sent. */
static uint64_t t_send_sizes(struct t_env *e, int fd, uint32_t per,
			     uint64_t seq0)
{
	uint8_t f[1514];
	uint64_t bytes = 0, seq = seq0;
	uint32_t i, k;

	for (k = 0; k < per; k++)
		for (i = 0; i < T_NSIZES; i++) {
			size_t len = tb_frame_build(f, t_sizes[i], e->mac_va,
						    e->mac_vb, 1000, seq++);

			assert_int_equal(tb_pkt_send(fd, f, len), 0);
			bytes += len;
		}
	return bytes;
}

/* ---- receive ------------------------------------------------------------- */

/* Packets of several sizes from the peer arrive whole, counted by a uxdp
 * program; what the kernel reports is read back. */
static void test_rx_sizes(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct uxdp_afxdp_queue_stats qs;
	struct uxdp_afxdp_info in;
	struct uxdp_rxq_stats rs;
	uint32_t per = 8, n = per * T_NSIZES, tb_id = 0;
	int mode = 0;
	uint64_t bytes;

	e->dev[0] = t_open_in(e->a, "afxdp:va@0,rx_size=512,tx_size=256",
			      "xa", NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(t_xsk_sockets(), 1);

	/* What the kernel says it gave us. */
	assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	assert_string_equal(in.ifname, "va");
	assert_true(in.up);
	assert_int_equal(in.queues, 1);
	assert_int_equal(in.if_rx_queues, 1);
	assert_false(in.zerocopy);		/* veth: copy mode */
	assert_true(in.need_wakeup);
	assert_int_equal(in.xdp_mode, UXDP_AFXDP_XDP_NATIVE);
	assert_int_equal(tb_xdp_query(e->a, "va", &tb_id, &mode), 0);
	assert_int_equal(in.prog_id, tb_id);
	assert_int_equal(mode, TB_XDP_NATIVE);
	assert_true(in.attach == UXDP_AFXDP_ATTACH_LIBBPF_LINK ||
		    in.attach == UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER);
	fprintf(stderr, "# afxdp on veth: xdp %s (%s), %s, need_wakeup %s\n",
		uxdp_afxdp_xdp_mode_str(in.xdp_mode),
		uxdp_afxdp_attach_str(in.attach),
		in.zerocopy ? "zero-copy" : "copy",
		in.need_wakeup ? "on" : "off");

	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	bytes = t_send_sizes(e, e->fd[0], per, 0);
	t_poll_until(e->dev[0], &p.packets, n);
	assert_int_equal(t_get(&p.packets), n);
	assert_int_equal(t_get(&p.bytes), bytes);
	assert_int_equal(t_get(&p.intact), n);

	assert_int_equal(uxdp_dev_rxq_stats(e->dev[0], 0, &rs), 0);
	assert_int_equal(rs.packets, n);
	assert_int_equal(rs.bytes, bytes);
	assert_int_equal(rs.drop, n);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_true(qs.bound);
	assert_int_equal(qs.rx_descs, n);
	assert_int_equal(qs.rx_bad_descs, 0);
	assert_int_equal(qs.rx_dropped, 0);
	assert_int_equal(qs.rx_ring_full, 0);
	assert_int_equal(qs.rx_invalid_descs, 0);
	assert_int_equal(qs.no_socket, 0);
	assert_true(qs.fill_posted >= 512);	/* the ring was kept full */
	assert_int_equal(uxdp_afxdp_print(e->dev[0], stderr, 0), 0);

	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

/* ---- transmit ------------------------------------------------------------ */

/* XDP_TX back out (no copy: the buffer is the socket's own), then frames
 * of another device redirected in (copied): both arrive at the peer
 * whole. A polling thread per queue. */
static void test_tx_reflect_and_copy(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_TX };
	struct t_prog gp = { .verdict = UXDP_REDIRECT };
	struct uxdp_afxdp_queue_stats qs;
	UXDP_DECLARE_OPTS(uxdp_null_opts, no);
	uint8_t f[1514], tmpl[300];
	uint32_t n = 256, got = 0, i, gen_n = 100;
	uint64_t t0, seq, seen[256 / 64] = { 0 };
	struct uxdp_dev_audit a;
	ssize_t len;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=1024,tx_size=512",
			      "xa", NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);

	for (i = 0; i < n; i++) {
		len = (ssize_t)tb_frame_build(f, t_sizes[i % T_NSIZES],
					      e->mac_va, e->mac_vb, 2000, i);
		assert_int_equal(tb_pkt_send(e->fd[0], f, (size_t)len), 0);
	}
	t0 = t_now_ms();
	while (got < n && t_now_ms() - t0 < T_DEADLINE_MS) {
		len = tb_pkt_recv(e->fd[0], f, sizeof(f), 100);
		if (len == -ETIMEDOUT)
			continue;
		assert_true(len > 0);
		assert_true(tb_frame_check(f, (size_t)len, &seq));
		assert_true(seq < n);
		assert_int_equal(len, t_sizes[seq % T_NSIZES]);
		/* Swapped by the program: to vb, from va. */
		assert_memory_equal(f, e->mac_vb, 6);
		assert_memory_equal(f + 6, e->mac_va, 6);
		assert_false(seen[seq / 64] & (1ULL << (seq % 64)));
		seen[seq / 64] |= 1ULL << (seq % 64);
		got++;
	}
	assert_int_equal(got, n);
	t_wait_tx_done(e->dev[0], 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_int_equal(qs.tx_nocopy, n);
	assert_int_equal(qs.tx_copy, 0);
	assert_int_equal(qs.tx_completed, n);
	assert_int_equal(qs.comp_mismatch, 0);
	assert_true(qs.tx_kicks > 0);

	/* Frames from a null device's pool: not this UMEM, so copied. */
	tb_frame_build(tmpl, sizeof(tmpl), e->mac_vb, e->mac_va, 3000, 7);
	no.rx_template = tmpl;
	no.rx_template_len = sizeof(tmpl);
	no.rx_count = gen_n;
	e->dev[1] = uxdp_null_create("gen", &no);
	assert_non_null(e->dev[1]);
	gp.to = uxdp_dev_target(e->dev[0]);
	t_attach(e, 1, &gp);
	assert_int_equal(uxdp_dev_up(e->dev[1]), 0);
	/* The copy stash is topped up by the afxdp queue's poller. */
	t0 = t_now_ms();
	do {
		assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	} while (qs.tx_stash < gen_n && t_now_ms() - t0 < T_DEADLINE_MS &&
		 !usleep(1000));
	assert_true(qs.tx_stash >= gen_n);
	t_poll_until(e->dev[1], &gp.packets, gen_n);
	assert_int_equal(t_get(&gp.packets), gen_n);
	for (got = 0, t0 = t_now_ms();
	     got < gen_n && t_now_ms() - t0 < T_DEADLINE_MS;) {
		len = tb_pkt_recv(e->fd[0], f, sizeof(f), 100);
		if (len == -ETIMEDOUT)
			continue;
		assert_int_equal(len, sizeof(tmpl));
		assert_true(tb_frame_check(f, (size_t)len, &seq));
		assert_int_equal(seq, 7);
		got++;
	}
	assert_int_equal(got, gen_n);
	t_wait_tx_done(e->dev[0], 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_int_equal(qs.tx_copy, gen_n);
	assert_int_equal(qs.tx_nocopy, n);
	/* The generator's frames went home when copied. */
	assert_int_equal(uxdp_dev_down(e->dev[1]), 0);
	assert_int_equal(uxdp_dev_audit(e->dev[1], &a), 0);
	assert_int_equal(a.in_flight, 0);

	uxdp_dev_stop(e->dev[0]);
	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

/*
 * Frames of another UMEM sent to a queue whose poller has not run since
 * up (uxdp-fwd's first frames, before the far port's thread wakes): they
 * are copied into the queue's stash, and the stash must neither be one
 * batch deep nor wait for the poller to reap the completions that would
 * refill it. Rounds of 32, each delivered before the next, four times the
 * TX ring in all, and no poller on the afxdp device at all: every frame
 * goes out, none is refused for want of a buffer.
 */
static void test_tx_copy_without_poller(void **state)
{
	struct t_env *e = *state;
	struct t_prog gp = { .verdict = UXDP_REDIRECT };
	struct uxdp_afxdp_queue_stats qs;
	UXDP_DECLARE_OPTS(uxdp_null_opts, no);
	const uint32_t round = 32, total = 4 * 256;
	uint8_t f[1514], tmpl[128];
	uint32_t got = 0, sent = 0, want;
	uint64_t t0, seq;
	ssize_t len;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256",
			      "xa", NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	tb_frame_build(tmpl, sizeof(tmpl), e->mac_vb, e->mac_va, 3000, 9);
	no.rx_template = tmpl;
	no.rx_template_len = sizeof(tmpl);
	no.rx_count = total;
	e->dev[1] = uxdp_null_create("gen", &no);
	assert_non_null(e->dev[1]);
	gp.to = uxdp_dev_target(e->dev[0]);
	t_attach(e, 1, &gp);
	assert_int_equal(uxdp_dev_up(e->dev[1]), 0);
	while (sent < total) {
		want = sent + round;
		for (t0 = t_now_ms(); t_get(&gp.packets) < want &&
		     t_now_ms() - t0 < T_DEADLINE_MS;)
			assert_true(uxdp_dev_poll(e->dev[1], 0, (int)(want -
				    t_get(&gp.packets))) >= 0);
		assert_int_equal(t_get(&gp.packets), want);
		sent = want;
		for (t0 = t_now_ms(); got < sent &&
		     t_now_ms() - t0 < T_DEADLINE_MS;) {
			len = tb_pkt_recv(e->fd[0], f, sizeof(f), 100);
			if (len == -ETIMEDOUT)
				continue;
			assert_int_equal(len, sizeof(tmpl));
			assert_true(tb_frame_check(f, (size_t)len, &seq));
			got++;
		}
		assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
		if (got < sent)
			fail_msg("%u of %u frames out; %" PRIu64 " refused for "
				 "want of a copy buffer, stash %u", got, sent,
				 qs.tx_no_buffer, qs.tx_stash);
	}
	assert_int_equal(qs.tx_copy, total);
	assert_int_equal(qs.tx_no_buffer, 0);
	assert_int_equal(uxdp_dev_down(e->dev[1]), 0);
	/* The last completions are the poller's to reap: one comes now. */
	t0 = t_now_ms();
	do {
		assert_true(uxdp_dev_poll(e->dev[0], 0, 64) >= 0);
		assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	} while (qs.tx_in_flight && t_now_ms() - t0 < T_DEADLINE_MS &&
		 !usleep(1000));
	assert_int_equal(qs.tx_in_flight, 0);
	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

/* CPU time of this process, in ms (every thread: the poller's too). */
static uint64_t t_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Send @n frames of a null generator's pool through @gen (polled here). */
static void t_gen_poll(struct uxdp_dev *gen, struct t_prog *gp, uint64_t want)
{
	uint64_t t0 = t_now_ms();

	while (t_get(&gp->packets) < want && t_now_ms() - t0 < T_DEADLINE_MS)
		assert_true(uxdp_dev_poll(gen, 0, (int)(want -
				  t_get(&gp->packets))) >= 0);
	assert_int_equal(t_get(&gp->packets), want);
}

/*
 * The interface under an up device goes down with frames on its TX ring,
 * then is deleted: uxdp_dev_link() says so each time; frames sent to it
 * meanwhile are refused and counted as down; its poller neither kicks in
 * a loop nor burns a CPU (it did: 16 million failed sendto()s in 4 s);
 * down gives back what the kernel never took, counted as down, not sent.
 * Up again after the link is: frames flow.
 */
static void test_link_down_and_gone(void **state)
{
	struct t_env *e = *state;
	struct t_prog gp = { .verdict = UXDP_REDIRECT };
	struct uxdp_afxdp_queue_stats qs;
	struct uxdp_txq_stats ts, ts0;
	struct uxdp_rxq_stats rs;
	struct uxdp_link_info li;
	struct uxdp_dev_audit a;
	UXDP_DECLARE_OPTS(uxdp_null_opts, no);
	uint8_t f[1514], tmpl[128];
	uint64_t cpu0, kicks0, t0, seq;
	uint32_t got;
	ssize_t len;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256",
			      "xa", NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);
	assert_int_equal(uxdp_dev_link(e->dev[0], &li), 0);
	assert_int_equal(li.state, UXDP_LINK_UP);
	assert_int_equal(li.mtu, 1500);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	tb_frame_build(tmpl, sizeof(tmpl), e->mac_vb, e->mac_va, 3000, 5);
	no.rx_template = tmpl;
	no.rx_template_len = sizeof(tmpl);
	e->dev[1] = uxdp_null_create("gen", &no);
	assert_non_null(e->dev[1]);
	gp.to = uxdp_dev_target(e->dev[0]);
	t_attach(e, 1, &gp);
	assert_int_equal(uxdp_dev_up(e->dev[1]), 0);

	/* Up: frames go out. */
	t_gen_poll(e->dev[1], &gp, 32);
	for (got = 0, t0 = t_now_ms(); got < 32 &&
	     t_now_ms() - t0 < T_DEADLINE_MS;) {
		len = tb_pkt_recv(e->fd[0], f, sizeof(f), 100);
		if (len > 0 && tb_frame_check(f, (size_t)len, &seq))
			got++;
	}
	assert_int_equal(got, 32);
	/* Sent counts at completion: every one of the 32 counted first. */
	t_wait_tx_done(e->dev[0], 0);

	/* Down: said, and frames refused without a spin. */
	assert_int_equal(tb_link_set(e->a, "va", false, 0), 0);
	assert_int_equal(uxdp_dev_link(e->dev[0], &li), 0);
	assert_int_equal(li.state, UXDP_LINK_DOWN);
	assert_int_equal(uxdp_dev_txq_stats(e->dev[0], 0, &ts0), 0);
	t_gen_poll(e->dev[1], &gp, 64);		/* the first kick finds out */
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	kicks0 = qs.tx_kicks;
	cpu0 = t_cpu_ms();
	t0 = t_now_ms();
	usleep(500000);
	t_gen_poll(e->dev[1], &gp, 96);		/* refused: the link is down */
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	if (t_cpu_ms() - cpu0 > (t_now_ms() - t0) / 2 ||
	    qs.tx_kicks - kicks0 > 16)
		fail_msg("down: %" PRIu64 " ms of CPU in %" PRIu64 " ms, %"
			 PRIu64 " kicks", t_cpu_ms() - cpu0, t_now_ms() - t0,
			 qs.tx_kicks - kicks0);
	assert_int_equal(uxdp_dev_txq_stats(e->dev[0], 0, &ts), 0);
	assert_true(ts.down - ts0.down >= 32);
	/* What was posted but never taken is not sent, and down gives it
	 * back, counted in drained. */
	uxdp_dev_stop(e->dev[0]);
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_txq_stats(e->dev[0], 0, &ts), 0);
	assert_int_equal(uxdp_dev_rxq_stats(e->dev[0], 0, &rs), 0);
	assert_int_equal(ts.packets + ts.down + rs.drained - ts0.down -
			 ts0.packets, 64);
	assert_int_equal(uxdp_dev_audit(e->dev[0], &a), 0);
	assert_int_equal(a.misplaced, 0);
	assert_int_equal(a.in_flight, 0);

	/* Up again once the link is: frames flow. */
	assert_int_equal(tb_link_set(e->a, "va", true, 0), 0);
	assert_int_equal(uxdp_dev_link(e->dev[0], &li), 0);
	assert_int_equal(li.state, UXDP_LINK_UP);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	while (tb_pkt_recv(e->fd[0], f, sizeof(f), 50) > 0)
		;
	/* Its pool has had an owner (the stopped poller's thread): TX
	 * opens at the next poll, which stocks the copy stash first; until
	 * then a transmit is refused as down, not lost for want of a copy
	 * buffer. */
	t_gen_poll(e->dev[1], &gp, 112);
	assert_int_equal(uxdp_dev_txq_stats(e->dev[0], 0, &ts0), 0);
	assert_int_equal(ts0.down, ts.down + 16);
	assert_int_equal(ts0.full, 0);
	assert_true(uxdp_dev_poll(e->dev[0], 0, 64) >= 0);
	t_gen_poll(e->dev[1], &gp, 144);
	for (got = 0, t0 = t_now_ms(); got < 32 &&
	     t_now_ms() - t0 < T_DEADLINE_MS;) {
		assert_true(uxdp_dev_poll(e->dev[0], 0, 64) >= 0);
		len = tb_pkt_recv(e->fd[0], f, sizeof(f), 20);
		if (len > 0 && tb_frame_check(f, (size_t)len, &seq))
			got++;
	}
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_int_equal(uxdp_dev_txq_stats(e->dev[0], 0, &ts), 0);
	if (got != 32)
		fail_msg("up again: %u of 32 out; tx %" PRIu64 " down %" PRIu64
			 " full %" PRIu64 "; kicks %" PRIu64 " errors %" PRIu64
			 " copies %" PRIu64 " no buffer %" PRIu64, got,
			 ts.packets, ts.down, ts.full, qs.tx_kicks,
			 qs.tx_kick_errors, qs.tx_copy, qs.tx_no_buffer);

	/* Deleted: gone, and down still gives everything back. */
	close(e->fd[0]);
	e->fd[0] = -1;
	assert_int_equal(tb_link_del(e->a, "va"), 0);
	assert_int_equal(uxdp_dev_link(e->dev[0], &li), 0);
	assert_int_equal(li.state, UXDP_LINK_GONE);
	t_gen_poll(e->dev[1], &gp, 176);
	assert_int_equal(uxdp_dev_down(e->dev[1]), 0);
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_audit(e->dev[0], &a), 0);
	assert_int_equal(a.misplaced, 0);
	assert_int_equal(a.in_flight, 0);
	assert_int_equal(uxdp_dev_up(e->dev[0]), -ENODEV);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;
	assert_int_equal(t_xsk_sockets(), 0);
}

/* ---- two queues ---------------------------------------------------------- */

/* veth hands a redirected frame to the peer's queue (CPU % queues): the
 * generator on CPU 0 feeds queue 0, on CPU 1 queue 1. */
static void test_two_queues(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct tb_gen_opts go = { .cpu = 0 };
	struct uxdp_rxq_stats r0, r1;
	struct uxdp_afxdp_info in;
	uint64_t n0 = 300, n1 = 500;
	uint8_t f[128];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	e->dev[0] = t_open_in(e->a, "afxdp:va@0-1,rx_size=1024,tx_size=256",
			      NULL, NULL, NULL);
	assert_string_equal(uxdp_dev_name(e->dev[0]), "va");
	assert_int_equal(uxdp_dev_num_rxq(e->dev[0]), 2);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(t_xsk_sockets(), 2);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);

	tb_frame_build(f, sizeof(f), e->mac_va, e->mac_vb, 4000, 1);
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), n0, &go),
			 0);
	go.cpu = 1;
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), n1, &go),
			 0);
	/* The pollers run the program while we read: intact is counted
	 * last, so wait on it and read packets after. */
	t_wait_until(&p.intact, n0 + n1);
	assert_int_equal(t_get(&p.intact), n0 + n1);
	assert_int_equal(t_get(&p.packets), n0 + n1);
	uxdp_dev_stop(e->dev[0]);
	assert_int_equal(uxdp_dev_rxq_stats(e->dev[0], 0, &r0), 0);
	assert_int_equal(uxdp_dev_rxq_stats(e->dev[0], 1, &r1), 0);
	assert_int_equal(r0.packets, n0);
	assert_int_equal(r1.packets, n1);
	assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	assert_int_equal(in.if_rx_queues, 2);
	assert_int_equal(in.queues, 2);
	assert_int_equal(in.no_socket, 0);
	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

static char t_warned[1024];

static int t_capture_print(enum uxdp_print_level level, const char *fmt,
			   va_list ap)
{
	size_t l = strlen(t_warned);

	if (level == UXDP_WARN)
		vsnprintf(t_warned + l, sizeof(t_warned) - l, fmt, ap);
	return 0;
}

/* One queue of two bound: a warning with the queue counts at up, and
 * the packets of the other queue go to the stack, counted. */
static void test_unbound_queue(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct tb_gen_opts go = { .cpu = 1 };
	struct uxdp_afxdp_queue_stats qs;
	struct uxdp_afxdp_info in;
	uxdp_print_fn_t old;
	uint8_t f[128];
	uint64_t t0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	e->dev[0] = t_open_in(e->a, "afxdp:va@0,rx_size=256,tx_size=256",
			      NULL, NULL, NULL);
	t_attach(e, 0, &p);
	t_warned[0] = '\0';
	old = uxdp_set_print(t_capture_print);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	uxdp_set_print(old);
	assert_non_null(strstr(t_warned, "has 2 RX queues and this port "
			       "binds 1"));
	tb_frame_build(f, sizeof(f), e->mac_va, e->mac_vb, 4000, 1);
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), 50, &go),
			 0);
	t0 = t_now_ms();
	do {
		assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	} while (in.no_socket < 50 && t_now_ms() - t0 < T_DEADLINE_MS &&
		 !usleep(1000));
	assert_int_equal(in.no_socket, 50);
	assert_int_equal(uxdp_dev_poll(e->dev[0], 0, 64), 0);
	assert_int_equal(t_get(&p.packets), 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_int_equal(qs.no_socket, 0);	/* queue 0 missed nothing */
	t_end_device(e, 0, "va");
}

/* ---- shared UMEM --------------------------------------------------------- */

/*
 * Two ports on one UMEM (shared=): A's program redirects to C, and C sends
 * A's buffers by address: no copy. va (ns a) <- vb (ns b), vc (ns a) ->
 * vd (ns b).
 */
static void test_shared_umem_forward(void **state)
{
	struct t_env *e = *state;
	struct t_prog pa = { .verdict = UXDP_REDIRECT };
	struct t_prog pc = { .verdict = UXDP_DROP };
	struct uxdp_afxdp_queue_stats qs;
	struct uxdp_afxdp_info in;
	uint8_t f[1514], mac_vc[6];
	uint32_t n = 300, got = 0, nch, i;
	struct uxdp_umem *umem;
	struct uxdp_dev_audit a;
	uint8_t *where;
	uint64_t t0, seq;
	ssize_t len;

	assert_int_equal(tb_veth_add(e->tb, e->a, "vc", e->b, "vd", NULL), 0);
	assert_int_equal(tb_link_mac(e->a, "vc", mac_vc), 0);
	e->dev[0] = t_open_in(e->a, "afxdp:va,shared=g1,rx_size=512,"
			      "tx_size=256,frames=1024", "A", NULL, NULL);
	e->dev[1] = t_open_in(e->a, "afxdp:vc,shared=g1,rx_size=512,"
			      "tx_size=256,frames=1024", "C", NULL, NULL);
	umem = uxdp_pool_umem(uxdp_dev_pool(e->dev[0], 0));
	assert_ptr_equal(umem, uxdp_pool_umem(uxdp_dev_pool(e->dev[1], 0)));
	assert_int_equal(uxdp_afxdp_info(e->dev[1], &in), 0);
	assert_true(in.shared);
	assert_string_equal(in.group, "g1");
	pa.to = uxdp_dev_target(e->dev[1]);
	t_attach(e, 0, &pa);
	t_attach(e, 1, &pc);
	assert_int_equal(uxdp_dev_up(e->dev[1]), 0);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);
	assert_int_equal(uxdp_dev_start(e->dev[1], NULL), 0);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	assert_int_equal(tb_pkt_open(e->b, "vd", &e->fd[1]), 0);

	for (i = 0; i < n; i++) {
		len = (ssize_t)tb_frame_build(f, t_sizes[i % T_NSIZES],
					      e->mac_va, e->mac_vb, 5000, i);
		assert_int_equal(tb_pkt_send(e->fd[0], f, (size_t)len), 0);
	}
	for (t0 = t_now_ms(); got < n && t_now_ms() - t0 < T_DEADLINE_MS;) {
		len = tb_pkt_recv(e->fd[1], f, sizeof(f), 100);
		if (len == -ETIMEDOUT)
			continue;
		assert_true(tb_frame_check(f, (size_t)len, &seq));
		assert_int_equal(len, t_sizes[seq % T_NSIZES]);
		got++;
	}
	assert_int_equal(got, n);
	assert_int_equal(t_get(&pa.intact), n);
	t_wait_tx_done(e->dev[1], 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[1], 0, &qs), 0);
	assert_int_equal(qs.tx_nocopy, n);	/* a descriptor moved */
	assert_int_equal(qs.tx_copy, 0);
	assert_int_equal(qs.tx_completed, n);
	uxdp_dev_stop(e->dev[0]);
	uxdp_dev_stop(e->dev[1]);

	/* A goes down first: its socket waits (the group is still up). */
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_true(qs.bound);
	assert_int_equal(uxdp_dev_down(e->dev[1]), 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_false(qs.bound);
	assert_int_equal(t_xsk_sockets(), 0);
	assert_int_equal(t_prog_on(e, "va"), 0);
	assert_int_equal(t_prog_on(e, "vc"), 0);

	/* Every chunk of the shared UMEM in exactly one place, none out. */
	nch = uxdp_umem_nchunks(umem);
	where = calloc(nch, 1);
	assert_non_null(where);
	assert_true(uxdp_umem_audit(umem, where) > 0);
	for (i = 0; i < nch; i++) {
		assert_true(where[i] && !(where[i] & (where[i] - 1)));
		assert_false(where[i] & UXDP_LOC_DRIVER);
	}
	free(where);
	/* uxdp_dev_audit() looks at the device's own pool only: its
	 * in-flight count is what applies to a shared UMEM. */
	uxdp_dev_audit(e->dev[0], &a);
	assert_int_equal(a.in_flight, 0);
	uxdp_dev_audit(e->dev[1], &a);
	assert_int_equal(a.in_flight, 0);
	uxdp_dev_destroy(e->dev[0]);
	uxdp_dev_destroy(e->dev[1]);
	e->dev[0] = e->dev[1] = NULL;
}

/*
 * Tiny rings under load: va's poller redirects the kernel generator's
 * frames to vc (no copy) while this thread redirects a null device's
 * frames there too (copied): two threads on vc's TX lock, completions
 * reaped by vc's poller. Every frame is accounted for, exactly: the
 * kernel's drops, uxdp's refusals, what reaches vd.
 */
static void test_stress_tiny_rings(void **state)
{
	struct t_env *e = *state;
	struct t_prog pa = { .verdict = UXDP_REDIRECT };
	struct t_prog pc = { .verdict = UXDP_DROP };
	struct t_prog gp = { .verdict = UXDP_REDIRECT };
	struct tb_gen_opts go = { .cpu = 0 };
	struct uxdp_afxdp_queue_stats qa, qc;
	struct uxdp_rxq_stats ra, rg;
	UXDP_DECLARE_OPTS(uxdp_null_opts, no);
	struct uxdp_dev_audit au;
	uint64_t inj = 20000, gen_n = 5000, vd = 0, t0;
	uint8_t f[128], mac_vc[6], tmpl[200];
	struct tb_xdp *x;

	assert_int_equal(tb_veth_add(e->tb, e->a, "vc", e->b, "vd", NULL), 0);
	assert_int_equal(tb_link_mac(e->a, "vc", mac_vc), 0);
	assert_int_equal(tb_xdp_attach(e->b, "vd", TB_PROG_DROP, 0,
				       TB_XDP_NATIVE, &x), 0);
	e->dev[0] = t_open_in(e->a, "afxdp:va,shared=g4,rx_size=64,"
			      "tx_size=64,frames=256,group_frames=512", "A",
			      NULL, NULL);
	e->dev[1] = t_open_in(e->a, "afxdp:vc,shared=g4,rx_size=64,"
			      "tx_size=64,frames=256", "C", NULL, NULL);
	tb_frame_build(tmpl, sizeof(tmpl), mac_vc, e->mac_va, 6000, 9);
	no.rx_template = tmpl;
	no.rx_template_len = sizeof(tmpl);
	no.rx_count = gen_n;
	e->dev[2] = uxdp_null_create("gen", &no);
	assert_non_null(e->dev[2]);
	pa.to = gp.to = uxdp_dev_target(e->dev[1]);
	t_attach(e, 0, &pa);
	t_attach(e, 1, &pc);
	t_attach(e, 2, &gp);
	assert_int_equal(uxdp_dev_up(e->dev[1]), 0);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_up(e->dev[2]), 0);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);
	assert_int_equal(uxdp_dev_start(e->dev[1], NULL), 0);

	tb_frame_build(f, sizeof(f), e->mac_va, e->mac_vb, 6000, 3);
	/* The kernel generator on CPU 0, the null device polled here. */
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), inj / 2,
				    &go), 0);
	t_poll_until(e->dev[2], &gp.packets, gen_n);
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), inj / 2,
				    &go), 0);
	assert_int_equal(t_get(&gp.packets), gen_n);
	/* Settle A first: va's RX ring, whose last entries A's poller may
	 * not have taken yet (a loaded machine left 64 there: one ring's
	 * worth). rx_descs counts them before that poll ends, and the
	 * poll's redirects to vc are flushed at its end: stop A, which
	 * waits for that poll, before looking at vc. */
	t0 = t_now_ms();
	do {
		usleep(2000);
		assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qa), 0);
	} while (qa.rx_descs + qa.rx_dropped + qa.rx_ring_full < inj &&
		 t_now_ms() - t0 < T_DEADLINE_MS);
	uxdp_dev_stop(e->dev[0]);
	/* Then vc: everything sent to it completed and reached vd. */
	do {
		assert_int_equal(uxdp_afxdp_queue_stats(e->dev[1], 0, &qc), 0);
		assert_int_equal(tb_xdp_count(x, &vd, NULL), 0);
	} while ((qc.tx_in_flight || vd < qc.tx_completed) &&
		 t_now_ms() - t0 < T_DEADLINE_MS && !usleep(2000));
	uxdp_dev_stop(e->dev[1]);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qa), 0);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[1], 0, &qc), 0);
	assert_int_equal(uxdp_dev_rxq_stats(e->dev[0], 0, &ra), 0);
	assert_int_equal(uxdp_dev_rxq_stats(e->dev[2], 0, &rg), 0);
	assert_int_equal(tb_xdp_count(x, &vd, NULL), 0);
	fprintf(stderr, "# injected %" PRIu64 ": A rx %" PRIu64 " (kernel "
		"dropped %" PRIu64 ", ring full %" PRIu64 "), redirected %"
		PRIu64 " (refused %" PRIu64 "); null %" PRIu64 ": redirected "
		"%" PRIu64 " (refused %" PRIu64 "); vd got %" PRIu64 "\n", inj,
		qa.rx_descs, qa.rx_dropped, qa.rx_ring_full, ra.redirect,
		ra.redirect_err, gen_n, rg.redirect, rg.redirect_err, vd);
	/* Kernel side of va: every injected frame received or counted. */
	assert_int_equal(qa.rx_descs + qa.rx_dropped + qa.rx_ring_full, inj);
	/* uxdp: every received frame redirected or refused (counted). */
	assert_int_equal(ra.packets, qa.rx_descs);
	assert_int_equal(ra.redirect + ra.redirect_err, ra.packets);
	assert_int_equal(rg.redirect + rg.redirect_err, gen_n);
	/* vc: A's by descriptor, the null device's copied; all sent. */
	assert_int_equal(qc.tx_nocopy, ra.redirect);
	assert_int_equal(qc.tx_copy, rg.redirect);
	assert_int_equal(qc.tx_completed, qc.tx_nocopy + qc.tx_copy);
	assert_int_equal(qc.comp_mismatch, 0);
	assert_int_equal(vd, qc.tx_completed);
	assert_true(ra.redirect > 0 && rg.redirect > 0);

	assert_int_equal(uxdp_dev_down(e->dev[2]), 0);
	assert_int_equal(uxdp_dev_audit(e->dev[2], &au), 0);
	assert_int_equal(au.in_flight, 0);
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_down(e->dev[1]), 0);
	uxdp_dev_audit(e->dev[0], &au);
	assert_int_equal(au.in_flight, 0);
	uxdp_dev_audit(e->dev[1], &au);
	assert_int_equal(au.in_flight, 0);
	assert_int_equal(t_xsk_sockets(), 0);
	tb_xdp_detach(x);
}

/* ---- XDP_STATISTICS, modes, busy polling --------------------------------- */

/* A small ring not polled: the kernel counts what it could not deliver,
 * and every injected packet is in exactly one counter. */
static void test_kernel_stats(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct tb_gen_opts go = { .cpu = -1 };
	struct uxdp_afxdp_queue_stats qs;
	uint64_t n = 1000;
	uint8_t f[128];

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=64,tx_size=64,"
			      "frames=256", "xa", NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	/* One poll fills the fill ring (64); then nobody polls. */
	assert_int_equal(uxdp_dev_poll(e->dev[0], 0, 64), 0);
	tb_frame_build(f, sizeof(f), e->mac_va, e->mac_vb, 4000, 1);
	assert_int_equal(tb_gen_run(e->tb, e->b, "vb", f, sizeof(f), n, &go),
			 0);
	/* veth's NAPI may still be at it (ksoftirqd on a loaded machine):
	 * wait, without polling, until all but the 64 the fill ring took
	 * are counted. The assertions below say what went where. */
	T_WAIT_FOR(!uxdp_afxdp_queue_stats(e->dev[0], 0, &qs) &&
		   qs.rx_dropped + qs.rx_ring_full >= n - 64, T_DEADLINE_MS);
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	fprintf(stderr, "# rx_dropped %" PRIu64 " rx_ring_full %" PRIu64
		" rx_fill_ring_empty_descs %" PRIu64 "\n", qs.rx_dropped,
		qs.rx_ring_full, qs.rx_fill_ring_empty_descs);
	assert_true(qs.rx_dropped + qs.rx_ring_full > 0);
	if (t_krules_older(&t_kr, T_KR_STATS_V2))
		t_krules_note(&t_kr, 1U << T_KR_STATS_V2,
			      "rx_ring_full is 0, its drops are in rx_dropped");
	t_poll_until(e->dev[0], &p.packets, 64);
	while (uxdp_dev_poll(e->dev[0], 0, 64) > 0)
		;
	assert_int_equal(uxdp_afxdp_queue_stats(e->dev[0], 0, &qs), 0);
	assert_int_equal(t_get(&p.packets) + qs.rx_dropped + qs.rx_ring_full,
			 n);
	assert_int_equal(t_get(&p.packets), qs.rx_descs);
	assert_true(t_get(&p.packets) <= 64);
	t_end_device(e, 0, "va");
}

/* Generic mode on request, busy polling: both read back. */
static void test_generic_busy_poll(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct uxdp_afxdp_info in;
	uint32_t per = 2, n = per * T_NSIZES;
	int mode = 0;

	e->dev[0] = t_open_in(e->a, "afxdp:va,mode=generic,busy_poll=16,"
			      "copy,rx_size=256,tx_size=256", "xa", NULL,
			      NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	assert_int_equal(in.xdp_mode, UXDP_AFXDP_XDP_GENERIC);
	assert_int_equal(tb_xdp_query(e->a, "va", NULL, &mode), 0);
	assert_int_equal(mode, TB_XDP_GENERIC);
	assert_true(in.busy_poll);
	assert_int_equal(in.busy_poll_budget, 16);
	assert_false(in.zerocopy);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	t_send_sizes(e, e->fd[0], per, 100);
	t_poll_until(e->dev[0], &p.packets, n);
	assert_int_equal(t_get(&p.intact), n);
	t_end_device(e, 0, "va");
}

/* Attached over netlink (as without XDP links): down detaches ours, and
 * leaves a program that replaced it alone. */
static int t_foreign_fn(void *arg)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int *fd = arg, idx = (int)if_nametoindex("va");

	*fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign", "GPL", prog, 2, NULL);
	if (*fd < 0 || !idx)
		return -1;
	/* No UPDATE_IF_NOEXIST: replace whatever is there. */
	return bpf_xdp_attach(idx, *fd, XDP_FLAGS_DRV_MODE, NULL);
}

static int t_foreign_off(void *arg)
{
	(void)arg;
	return bpf_xdp_detach((int)if_nametoindex("va"), XDP_FLAGS_DRV_MODE,
			      NULL);
}

static void test_netlink_detach_only_ours(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct uxdp_afxdp_info in;
	uint32_t id, foreign;
	uxdp_print_fn_t old;
	int fd = -1;

	setenv("UXDP_AFXDP_ATTACH", "netlink", 1);
	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	unsetenv("UXDP_AFXDP_ATTACH");
	assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	assert_int_equal(in.attach, UXDP_AFXDP_ATTACH_LIBBPF);
	id = t_prog_on(e, "va");
	assert_int_equal(id, in.prog_id);
	/* Down and up: detached, attached again. */
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	assert_int_equal(t_prog_on(e, "va"), 0);
	setenv("UXDP_AFXDP_ATTACH", "netlink", 1);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	unsetenv("UXDP_AFXDP_ATTACH");
	assert_true(t_prog_on(e, "va") != 0);

	/* Someone replaces it: our down must not remove theirs. */
	assert_int_equal(tb_ns_run(e->a, t_foreign_fn, &fd), 0);
	e->fd[0] = fd;
	foreign = t_prog_on(e, "va");
	assert_true(foreign && foreign != id);
	t_warned[0] = '\0';
	old = uxdp_set_print(t_capture_print);
	assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
	uxdp_set_print(old);
	assert_non_null(strstr(t_warned, "not ours"));
	assert_int_equal(t_prog_on(e, "va"), foreign);
	assert_int_equal(tb_ns_run(e->a, t_foreign_off, NULL), 0);
	t_end_device(e, 0, "va");
}

/* ---- an interface without native XDP ------------------------------------- */

/* A macvlan on va (no ndo_bpf: generic XDP only; this kernel has no dummy
 * driver), up, in the calling thread's namespace. */
static int t_macvlan_fn(void *arg)
{
	(void)arg;
	return system("ip link add link va name mv0 type macvlan mode bridge "
		      "&& ip link set dev mv0 up") ? -1 : 0;
}

/*
 * Without native XDP, the default mode falls back to generic (info and
 * the kernel both say so) and packets arrive; mode=native is refused at
 * up with EOPNOTSUPP, a message naming the mode, and nothing left behind.
 */
static void test_generic_fallback(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct uxdp_afxdp_info in;
	uint8_t mac[6], f[128];
	uint32_t n = 8, i;
	int mode = 0;

	assert_int_equal(tb_ns_run(e->a, t_macvlan_fn, NULL), 0);
	assert_int_equal(tb_link_mac(e->a, "mv0", mac), 0);

	e->dev[0] = t_open_in(e->a, "afxdp:mv0,mode=native,rx_size=256,"
			      "tx_size=256", "xm", NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), -EOPNOTSUPP);
	if (!strstr(uxdp_errmsg(), "mv0: cannot attach the XDP program in "
		    "native mode"))
		fail_msg("mode=native on mv0: \"%s\"", uxdp_errmsg());
	assert_false(uxdp_dev_is_up(e->dev[0]));
	assert_int_equal(t_prog_on(e, "mv0"), 0);
	assert_int_equal(t_xsk_sockets(), 0);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;

	e->dev[0] = t_open_in(e->a, "afxdp:mv0,rx_size=256,tx_size=256",
			      "xm", NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_afxdp_info(e->dev[0], &in), 0);
	assert_int_equal(in.xdp_mode, UXDP_AFXDP_XDP_GENERIC);
	assert_false(in.zerocopy);
	assert_int_equal(tb_xdp_query(e->a, "mv0", NULL, &mode), 0);
	assert_int_equal(mode, TB_XDP_GENERIC);
	assert_int_equal(t_xsk_sockets(), 1);

	/* From the peer to the macvlan's address, through generic XDP. */
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	for (i = 0; i < n; i++) {
		size_t len = tb_frame_build(f, sizeof(f), mac, e->mac_vb,
					    1000, i);

		assert_int_equal(tb_pkt_send(e->fd[0], f, len), 0);
	}
	t_poll_until(e->dev[0], &p.packets, n);
	assert_int_equal(t_get(&p.packets), n);
	assert_int_equal(t_get(&p.intact), n);
	t_end_device(e, 0, "mv0");
	assert_int_equal(t_xsk_sockets(), 0);
}

/* ---- idle wake ----------------------------------------------------------- */

/*
 * A poll group with a 1 s idle timeout sleeps on the socket's descriptor
 * (ops->rx_fd): once it is asleep, a packet is processed in well under a
 * second, and the sleep counts as ended by a wakeup, not the timeout.
 */
static void test_idle_wake(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, go, .idle_us = 1000000);
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	struct uxdp_poll_group_stats gs, g0;
	struct uxdp_poll_group *g;
	uint8_t f[128];
	uint64_t t0, dt;
	uint32_t k;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	g = uxdp_poll_group_create(&go);
	assert_non_null(g);
	assert_int_equal(uxdp_poll_group_add(g, e->dev[0], UXDP_ALL_QUEUES),
			 0);
	assert_int_equal(uxdp_poll_group_start(g), 0);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);

	for (k = 0; k < 3; k++) {
		size_t len = tb_frame_build(f, sizeof(f), e->mac_va,
					    e->mac_vb, 1000, k);

		/* Asleep: it went to sleep and no round ran for 50 ms. */
		t0 = t_now_ms();
		for (;;) {
			assert_int_equal(uxdp_poll_group_stats(g, &g0), 0);
			usleep(50 * 1000);
			assert_int_equal(uxdp_poll_group_stats(g, &gs), 0);
			if (gs.sleeps && gs.sleeps == g0.sleeps &&
			    gs.rounds == g0.rounds)
				break;
			if (t_now_ms() - t0 > T_DEADLINE_MS)
				fail_msg("the group never settled asleep");
		}
		t0 = t_now_ms();
		assert_int_equal(tb_pkt_send(e->fd[0], f, len), 0);
		/* intact is counted last, after packets. */
		t_wait_until(&p.intact, k + 1);
		dt = t_now_ms() - t0;
		assert_int_equal(t_get(&p.intact), k + 1);
		assert_int_equal(t_get(&p.packets), k + 1);
		if (dt >= 200)
			fail_msg("packet %u took %" PRIu64 " ms with the "
				 "poller asleep (idle 1 s)", k, dt);
		assert_int_equal(uxdp_poll_group_stats(g, &gs), 0);
		assert_true(gs.wakeups > g0.wakeups);
	}
	uxdp_poll_group_destroy(g);
	t_end_device(e, 0, "va");
}

/* ---- bad input ----------------------------------------------------------- */

static void t_open_fails(struct t_env *e, const char *port, int err,
			 const char *needle)
{
	char msg[256];
	int got = 0;

	assert_null(t_open_in(e->a, port, NULL, &got, msg));
	if (got != err || (needle && !strstr(msg, needle)))
		fail_msg("%s: errno %d (%s), want %d and \"%s\"", port, got,
			 msg, err, needle ? needle : "");
	assert_int_equal(t_xsk_sockets(), 0);
}

static void test_bad_input(void **state)
{
	struct t_env *e = *state;
	int err = 0;

	t_open_fails(e, "afxdp:nosuch0", ENODEV, "no such interface");
	t_open_fails(e, "afxdp:va@1", EINVAL, "1 RX queue");
	t_open_fails(e, "afxdp:va@0-3", EINVAL, "out of range");
	t_open_fails(e, "afxdp:va@2-1", EINVAL, "Q1 <= Q2");
	t_open_fails(e, "afxdp:va@x", EINVAL, "@Q");
	t_open_fails(e, "afxdp:va,bogus=1", EINVAL, "bogus");
	t_open_fails(e, "afxdp:va,chunk=3000", EINVAL, "2048 or 4096");
	t_open_fails(e, "afxdp:va,rx_size=100", EINVAL, "power of two");
	t_open_fails(e, "afxdp:va,copy,zerocopy", EINVAL, "both");
	t_open_fails(e, "afxdp:va,mode=turbo", EINVAL, "native or generic");
	t_open_fails(e, "afxdp:va,frames=10", EINVAL, "frames");
	t_open_fails(e, "afxdp:,copy", EINVAL, "interface name");
	t_open_fails(e, "afxdp:waytoolonginterfacename", EINVAL,
		     "interface name");
	/* A 1500 MTU does not fit 2 KiB chunks (1472 bytes of room). */
	t_open_fails(e, "afxdp:va,chunk=2048", EINVAL, "chunk=4096");
	/* Nor 9000 in 4 KiB. */
	assert_int_equal(tb_link_set(e->a, "va", true, 9000), 0);
	t_open_fails(e, "afxdp:va", EINVAL, "MTU 9000 too large");
	assert_int_equal(tb_link_set(e->a, "va", true, 1500), 0);
	/* Down. */
	assert_int_equal(tb_link_set(e->a, "va", false, 0), 0);
	t_open_fails(e, "afxdp:va", ENETDOWN, "ip link set dev va up");
	assert_int_equal(tb_link_set(e->a, "va", true, 0), 0);
	/* Shared groups must agree. */
	e->dev[0] = t_open_in(e->a, "afxdp:va,shared=g2,rx_size=256,"
			      "tx_size=256", "g2a", NULL, NULL);
	t_open_fails(e, "afxdp:va,shared=g2,rx_size=512,tx_size=256",
		     EINVAL, "must match");
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;
	/* A group's UMEM is sized by its first port: one that does not fit
	 * is refused, and fits once another member is gone (its chunks go
	 * back to the group). */
	e->dev[0] = t_open_in(e->a, "afxdp:va,shared=g3,rx_size=64,"
			      "tx_size=64,frames=256,group_frames=512", "g3a",
			      NULL, NULL);
	e->dev[1] = t_open_in(e->a, "afxdp:va,shared=g3,rx_size=64,"
			      "tx_size=64,frames=256", "g3b", NULL, NULL);
	t_open_fails(e, "afxdp:va,shared=g3,rx_size=64,tx_size=64,"
		     "frames=256", ENOSPC, "has 0 free chunks");
	uxdp_dev_destroy(e->dev[1]);
	e->dev[1] = t_open_in(e->a, "afxdp:va,shared=g3,rx_size=64,"
			      "tx_size=64,frames=256", "g3c", NULL, NULL);
	uxdp_dev_destroy(e->dev[1]);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = e->dev[1] = NULL;

	/* Interface gone down between create and up. */
	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	assert_int_equal(tb_link_set(e->a, "va", false, 0), 0);
	err = uxdp_dev_up(e->dev[0]);
	assert_int_equal(err, -ENETDOWN);
	assert_int_equal(tb_link_set(e->a, "va", true, 0), 0);
	assert_int_equal(t_prog_on(e, "va"), 0);
	assert_int_equal(t_xsk_sockets(), 0);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;
}

/* Zero-copy asked for on veth (none): up fails, and leaves nothing. */
static void test_failed_start_zerocopy(void **state)
{
	struct t_env *e = *state;
	struct uxdp_dev_audit a;

	e->dev[0] = t_open_in(e->a, "afxdp:va,zerocopy,rx_size=256,"
			      "tx_size=256", "xa", NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), -EOPNOTSUPP);
	assert_non_null(strstr(uxdp_errmsg(), "zero-copy"));
	assert_false(uxdp_dev_is_up(e->dev[0]));
	assert_int_equal(t_prog_on(e, "va"), 0);
	assert_int_equal(t_xsk_sockets(), 0);
	assert_int_equal(uxdp_dev_audit(e->dev[0], &a), 0);
	assert_int_equal(a.in_flight, 0);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;
	assert_int_equal(t_prog_on(e, "va"), 0);
}

/* Someone else's program on the interface: up fails (EBUSY, naming it),
 * leaves no socket and does not touch theirs. */
static void test_failed_start_foreign_prog(void **state)
{
	struct t_env *e = *state;
	struct tb_xdp *x;
	char out[1024];
	int saved, err;
	uint32_t id;

	assert_int_equal(tb_xdp_attach(e->a, "va", TB_PROG_PASS, 0,
				       TB_XDP_NATIVE, &x), 0);
	id = t_prog_on(e, "va");
	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	/* libbpf has plenty to say about a refused attach: not here. */
	saved = t_stderr_begin();
	err = uxdp_dev_up(e->dev[0]);
	t_stderr_end(saved, out, sizeof(out));
	assert_int_equal(err, -EBUSY);
	assert_string_equal(out, "");
	assert_non_null(strstr(uxdp_errmsg(), "not ours"));
	assert_int_equal(t_prog_on(e, "va"), id);
	assert_int_equal(t_xsk_sockets(), 0);
	tb_xdp_detach(x);
	/* And with it gone, the same device comes up. */
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	t_end_device(e, 0, "va");
}

/* A second socket on a bound queue: EBUSY after the retries. */
static void test_queue_busy(void **state)
{
	struct t_env *e = *state;
	char self[64];
	uint64_t t0;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "x1",
			      NULL, NULL);
	e->dev[1] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "x2",
			      NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	t0 = t_now_ms();
	assert_int_equal(uxdp_dev_up(e->dev[1]), -EBUSY);
	assert_true(t_now_ms() - t0 >= 1900);		/* it retried */
	/* Held, and by whom: this process is the one with a socket. */
	snprintf(self, sizeof(self), "pid %d (", (int)getpid());
	if (!strstr(uxdp_errmsg(), "queue 0 is still held") ||
	    !strstr(uxdp_errmsg(), self) ||
	    !strstr(uxdp_errmsg(), ", this process)"))
		fail_msg("busy, but: %s", uxdp_errmsg());
	assert_int_equal(t_xsk_sockets(), 1);
	assert_true(t_prog_on(e, "va") != 0);	/* x1's, still there */
	t_end_device(e, 1, NULL);
	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

/* Up and down in a row: a quick re-bind finds the queue still held by
 * the kernel (EBUSY) and is retried; traffic flows after each up. */
static void test_rebind_cycles(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_DROP };
	uint32_t i, per = 1, n = per * T_NSIZES;

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
		t_send_sizes(e, e->fd[0], per, i * n);
		t_poll_until(e->dev[0], &p.packets, (uint64_t)(i + 1) * n);
		assert_int_equal(t_get(&p.packets), (uint64_t)(i + 1) * n);
		assert_int_equal(uxdp_dev_down(e->dev[0]), 0);
		assert_int_equal(t_prog_on(e, "va"), 0);
	}
	assert_int_equal(t_get(&p.intact), 8 * n);
	t_end_device(e, 0, "va");
}

/* Destroy while up, with a polling thread: everything goes. */
static void test_destroy_while_up(void **state)
{
	struct t_env *e = *state;
	struct t_prog p = { .verdict = UXDP_TX };

	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "xa",
			      NULL, NULL);
	t_attach(e, 0, &p);
	assert_int_equal(uxdp_dev_up(e->dev[0]), 0);
	assert_int_equal(uxdp_dev_start(e->dev[0], NULL), 0);
	assert_int_equal(tb_pkt_open(e->b, "vb", &e->fd[0]), 0);
	t_send_sizes(e, e->fd[0], 4, 0);
	t_wait_until(&p.packets, 4 * T_NSIZES);
	uxdp_dev_destroy(e->dev[0]);
	e->dev[0] = NULL;
	assert_int_equal(t_prog_on(e, "va"), 0);
	assert_int_equal(t_xsk_sockets(), 0);
}

/* ---- processes: not root; killed by SIGINT ------------------------------- */

static char t_self[4096];

/*
 * Run this program as a child in @ns's namespace: "--child CMD NSPATH".
 * With @wait_ready, returns once the child printed "ready"; else waits
 * for it, echoes what it printed, and gives its *@status.
 */
static pid_t t_spawn(const char *cmd, struct tb_ns *ns, int *status,
		     bool wait_ready)
{
	char nspath[64], buf[256];
	int pipefd[2];
	pid_t pid;

	snprintf(nspath, sizeof(nspath), "/proc/%d/fd/%d", (int)getpid(),
		 tb_ns_fd(ns));
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(pipefd[1], 1);
		execl(t_self, t_self, "--child", cmd, nspath, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	if (wait_ready) {
		ssize_t n = read(pipefd[0], buf, sizeof(buf) - 1);

		close(pipefd[0]);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_non_null(strstr(buf, "ready"));
		return pid;
	}
	for (;;) {
		ssize_t n = read(pipefd[0], buf, sizeof(buf) - 1);

		if (n <= 0)
			break;
		buf[n] = '\0';
		fprintf(stderr, "# child %s: %s", cmd, buf);
	}
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return pid;
}

static int t_child(const char *cmd, const char *nspath)
{
	int fd = open(nspath, O_RDONLY | O_CLOEXEC);
	struct uxdp_dev *dev;

	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return 2;
	close(fd);
	if (!strcmp(cmd, "nocaps")) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];

		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			return 3;
		dev = uxdp_afxdp_create("va", NULL);
		if (dev || errno != EPERM || !strstr(uxdp_errmsg(), "root")) {
			fprintf(stderr, "child: errno %d: %s\n", errno,
				uxdp_errmsg());
			return 1;
		}
		return 0;
	}
	if (!strncmp(cmd, "bpffs", 5)) {
		bool force = !strcmp(cmd, "bpffs-libxdp");
		struct uxdp_afxdp_info in;
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);
		char out[4096];
		int saved, idx = (int)if_nametoindex("va"), ok;

		/* bpffs in a mount namespace of our own: libxdp pins its
		 * dispatcher there, and it all goes when we exit. */
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL))
			return 6;
		if (force)
			setenv("UXDP_AFXDP_ATTACH", "libxdp", 1);
		t_warned[0] = '\0';
		uxdp_set_print(t_capture_print);
		saved = t_stderr_begin();
		dev = uxdp_afxdp_create("va", NULL);
		ok = dev && !uxdp_dev_up(dev) && !uxdp_afxdp_info(dev, &in);
		ok = ok && !bpf_xdp_query(idx, 0, &qo) && qo.prog_id;
		ok = ok && !uxdp_dev_down(dev);
		ok = ok && !bpf_xdp_query(idx, 0, &qo) && !qo.prog_id;
		uxdp_dev_destroy(dev);
		t_stderr_end(saved, out, sizeof(out));
		printf("attach %s\n", ok ? uxdp_afxdp_attach_str(in.attach) :
		       "failed");
		if (!ok || !in.bpffs || out[0] || t_warned[0]) {
			fprintf(stderr, "child: ok %d bpffs %d, stderr "
				"\"%s\", warned \"%s\" (%s)\n", ok,
				ok && in.bpffs, out, t_warned, uxdp_errmsg());
			return 1;
		}
		/* libxdp's dispatcher fails on some kernels; it is used
		 * where it works, else we fall back without a word. */
		if (force)
			return in.attach != UXDP_AFXDP_ATTACH_LIBXDP_SINGLE &&
			       in.attach != UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER;
		return in.attach == UXDP_AFXDP_ATTACH_LIBBPF_LINK ||
		       in.attach == UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER ? 0 : 1;
	}
	if (!strcmp(cmd, "upwait")) {
		UXDP_DECLARE_OPTS(uxdp_afxdp_opts, o, .rx_size = 256,
				  .tx_size = 256);

		dev = uxdp_afxdp_create("va", &o);
		if (!dev || uxdp_dev_up(dev))
			return 4;
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();	/* until SIGINT, default action */
	}
	return 5;
}

/*
 * Another process holds the queue: the bind retries, then names it. Once
 * that process is gone, a bind straight away succeeds: the kernel's
 * deferred release of the dead socket's queue is what the retries wait
 * out (a forwarder restarted at once meets it).
 */
static void test_queue_busy_other_process(void **state)
{
	struct t_env *e = *state;
	char who[64];
	pid_t pid;
	int st;

	pid = t_spawn("upwait", e->a, NULL, true);
	e->dev[0] = t_open_in(e->a, "afxdp:va,rx_size=256,tx_size=256", "x1",
			      NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), -EBUSY);
	snprintf(who, sizeof(who), "pid %d (test_afxdp)", (int)pid);
	if (!strstr(uxdp_errmsg(), "still held") ||
	    !strstr(uxdp_errmsg(), who))
		fail_msg("want \"%s\" in: %s", who, uxdp_errmsg());
	fprintf(stderr, "# %s\n", uxdp_errmsg());
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (uxdp_dev_up(e->dev[0]))
		fail_msg("up right after the holder died: %s", uxdp_errmsg());
	t_end_device(e, 0, "va");
	assert_int_equal(t_xsk_sockets(), 0);
}

/*
 * Another process serves queue 0 with uxdp's program; this one wants
 * queue 1 of the same interface. The XSKMAP is the other's, so this is
 * refused, and the message says that it is uxdp's program of another
 * process, which one, and what to do (it said "not ours ... detach it").
 */
static void test_second_process_other_queue(void **state)
{
	struct t_env *e = *state;
	char who[64];
	pid_t pid;
	int st;

	pid = t_spawn("upwait", e->a, NULL, true);
	e->dev[0] = t_open_in(e->a, "afxdp:va@1,rx_size=256,tx_size=256",
			      "x1", NULL, NULL);
	assert_int_equal(uxdp_dev_up(e->dev[0]), -EBUSY);
	snprintf(who, sizeof(who), "pid %d (test_afxdp)", (int)pid);
	if (!strstr(uxdp_errmsg(), "another uxdp process serves this "
		    "interface") || !strstr(uxdp_errmsg(), who) ||
	    !strstr(uxdp_errmsg(), "give it every queue wanted") ||
	    strstr(uxdp_errmsg(), "this process"))
		fail_msg("want uxdp's program of %s in: %s", who,
			 uxdp_errmsg());
	assert_int_equal(t_xsk_sockets(), 0);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* Once it is gone, this one serves the interface. */
	if (uxdp_dev_up(e->dev[0]))
		fail_msg("up after the other left: %s", uxdp_errmsg());
	t_end_device(e, 0, "va");
}

/* Without capabilities (root, but none left): EPERM, saying why. */
static void test_not_root(void **state)
{
	struct t_env *e = *state;
	int st = 0;

	t_spawn("nocaps", e->a, &st, false);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * With bpffs mounted (in the child's own mount namespace) libxdp is
 * tried first: its dispatcher if it works, else, quietly, a bpf_link.
 * Forced to keep libxdp's own fallback (a single program over netlink),
 * down still detaches it.
 */
static void test_bpffs_libxdp(void **state)
{
	struct t_env *e = *state;
	int st = 0;

	t_spawn("bpffs", e->a, &st, false);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	t_spawn("bpffs-libxdp", e->a, &st, false);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(t_prog_on(e, "va"), 0);
}

/* The testbed's own check: the kernel generator will not inject into a
 * veth whose peer runs no XDP program (every frame would be dropped
 * silently), and with one there every frame arrives. */
static void test_testbed_peer_check(void **state)
{
	struct t_env *e = *state;
	struct tb_xdp *x;
	uint8_t f[100];
	uint64_t pk = 0, by = 0;

	tb_frame_build(f, sizeof(f), e->mac_vb, e->mac_va, 1, 1);
	assert_int_equal(tb_gen_run(e->tb, e->a, "va", f, sizeof(f), 10,
				    NULL), -ENOLINK);
	assert_non_null(strstr(tb_errmsg(), "has no XDP program"));
	assert_int_equal(tb_xdp_attach(e->b, "vb", TB_PROG_DROP, 0,
				       TB_XDP_NATIVE, &x), 0);
	assert_int_equal(tb_gen_run(e->tb, e->a, "va", f, sizeof(f), 1000,
				    NULL), 0);
	assert_int_equal(tb_xdp_count(x, &pk, &by), 0);
	assert_int_equal(pk, 1000);
	assert_int_equal(by, 1000 * sizeof(f));
	tb_xdp_detach(x);
}

/* A process killed by SIGINT (no handler) leaves no program behind: the
 * bpf_link goes with it. */
static void test_sigint_detaches(void **state)
{
	struct t_env *e = *state;
	uint64_t t0;
	pid_t pid;
	int st;

	pid = t_spawn("upwait", e->a, NULL, true);
	assert_true(t_prog_on(e, "va") != 0);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	/* The kernel releases a dead process's files before its parent
	 * hears of it; allow for deferred work all the same. */
	for (t0 = t_now_ms(); t_prog_on(e, "va") && t_now_ms() - t0 < 2000;)
		usleep(1000);
	assert_int_equal(t_prog_on(e, "va"), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rx_sizes, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_tx_reflect_and_copy,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_tx_copy_without_poller,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_link_down_and_gone,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_two_queues, setup_2q,
						teardown),
		cmocka_unit_test_setup_teardown(test_unbound_queue, setup_2q,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_umem_forward,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_stress_tiny_rings,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_stats, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_generic_busy_poll,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_netlink_detach_only_ours,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_generic_fallback,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_idle_wake, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_start_zerocopy,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_failed_start_foreign_prog,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_queue_busy, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_rebind_cycles, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_while_up,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_not_root, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_queue_busy_other_process,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_second_process_other_queue,
						setup_2q, teardown),
		cmocka_unit_test_setup_teardown(test_sigint_detaches,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_bpffs_libxdp, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_testbed_peer_check,
						setup_1q, teardown),
	};
	ssize_t n;
	int s;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return t_child(argv[2], argv[3]);
	n = readlink("/proc/self/exe", t_self, sizeof(t_self) - 1);
	if (n <= 0)
		t_skip_program("cannot find /proc/self/exe");
	t_self[n] = '\0';
	if (geteuid() != 0)
		t_skip_program("test_afxdp needs root (namespaces, veth, "
			       "AF_XDP, BPF)");
	s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s < 0)
		t_skip_program("no AF_XDP sockets here: %s", strerror(errno));
	close(s);
	t_krules_init(&t_kr);
	if (t_krules_probe_umem(&t_kr))
		t_skip_program("cannot ask the kernel about AF_XDP");
	printf("comparing against kernel %s\n", t_kr.release);
	t_krules_print(&t_kr, stdout);
	fflush(stdout);
	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
