/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench veth-tx: single-core XDP_TX through a veth pair, bulk 16 vs
 * bulk 1 (the seed: 7.26 -> 7.84 Mpps, spin lock 7.83% -> 1.17% of the
 * CPU), and the same loop run by the kernel on this machine (the peer to
 * beat).
 *
 * The loop, all on one CPU, in one thread:
 *
 *	gen (null device) --redirect, devmap bulk 16--> veth A xmit
 *	  -> B's ring; poll B: swap MACs, XDP_TX -> bulk queue (16 or 1)
 *	  -> flush: B's xmit -> A's ring; poll A: count, XDP_DROP
 *	  -> the frame goes back to gen's pool
 *
 * which is the kernel peer's loop step for step. The variants differ only
 * in B's XDP_TX bulk size.
 *
 * The kernel peer: the same loop run by the kernel, on a veth pair vA-vB
 * in a private namespace (tools/lib/testbed.c): the testbed's live-frames
 * generator redirects each frame out of vA (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, 64 frames per flush), vB's program swaps
 * the MACs and returns XDP_TX, vA's counts and drops. All of it runs on
 * this thread's CPU, inside the test-run call (veth's NAPI runs in the
 * softirq that each batch's flush raises). Loop Mpps = frames vA counted
 * / the time of the call; frames still in the rings when it returns are
 * waited for and counted, not timed. The generator alone (its program
 * drops) is the injection ceiling. vB's program also counts packets and
 * bytes in a per-CPU map (every testbed program on an interface does),
 * which the uxdp loop's B does not: a few ns per frame.
 *
 * The lock share: every xdp_xmit call takes the receiving ring's producer
 * lock once. Uncontended, a lock+unlock pair costs what one locked
 * exchange and a store cost; we time that pair here (the same TTAS spin
 * lock as src/internal.h) and multiply by the xmit calls per packet (from
 * the txq counters) to estimate the share of each packet's cycles spent in
 * the lock. perf, where available, gives the measured figure
 * (docs/benchmarks.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "bench.h"
#include "report.h"
#ifdef UXDP_BENCH_HAVE_TESTBED
#include "testbed.h"
#endif

#define GEN_FRAMES	1024	/* frames in flight, at most: ~3 rings' worth */
#define POLL_BUDGET	64

struct veth_loop {
	struct uxdp_dev *gen, *a, *b;
	struct uxdp_map *map;
	uint64_t a_count;	/* written by A's program */
};

/* The kernel peer, set up by its first run (a failure is the run's). */
struct kernel_loop {
	struct tb *tb;
	struct tb_ns *ns;
	struct tb_xdp *a;	/* vA: count, drop */
	struct tb_gen *gen;	/* out of vA */
	struct tb_gen *gen_drop;	/* the generator alone */
	int err;		/* set-up failed: every run fails alike */
	bool unavailable;	/* ... because this kernel cannot */
	char why[192];
};

struct veth_case {
	struct veth_loop *l;
	uint32_t bulk;		/* B's XDP_TX bulk; 0: the kernel peer */
	struct kernel_loop *k;
};

enum { M_CYC, M_CALLS, M_MPPS, M_GEN_MPPS, M_NMETRICS };

/* ---- the programs ------------------------------------------------------------ */

static uint32_t prog_gen(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return uxdp_redirect_map(priv, 0, UXDP_DROP);
}

static uint32_t prog_swap_tx(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *d = ctx->data, t[6];

	(void)priv;
	if (d + 12 > (unsigned char *)ctx->data_end)
		return UXDP_ABORTED;
	memcpy(t, d, 6);
	memcpy(d, d + 6, 6);
	memcpy(d + 6, t, 6);
	return UXDP_TX;
}

static uint32_t prog_count_drop(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(*(uint64_t *)priv)++;
	return UXDP_DROP;
}

/* ---- set-up ------------------------------------------------------------------ */

static int attach(struct uxdp_dev *dev, const char *name, uxdp_prog_fn fn,
		  void *priv)
{
	struct uxdp_prog *p = uxdp_prog_create(name, fn, priv);
	int err;

	if (!p)
		return -errno;
	err = uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, p);
	uxdp_prog_put(p);
	return err;
}

static void loop_teardown(struct veth_loop *l)
{
	uxdp_dev_destroy(l->a);
	uxdp_dev_destroy(l->b);
	uxdp_dev_destroy(l->gen);
	uxdp_map_destroy(l->map);
}

static int loop_setup(struct veth_loop *l)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_frames = GEN_FRAMES);
	char ga[16], na[16], nb[16];
	int err;

	memset(l, 0, sizeof(*l));
	snprintf(ga, sizeof(ga), "bgen%d", getpid() % 10000);
	snprintf(na, sizeof(na), "bva%d", getpid() % 10000);
	snprintf(nb, sizeof(nb), "bvb%d", getpid() % 10000);
	l->gen = uxdp_null_create(ga, &no);
	if (!l->gen)
		goto err;
	if (uxdp_veth_create(na, nb, NULL, &l->a, &l->b))
		goto err;
	l->map = uxdp_map_create(1);
	if (!l->map)
		goto err;
	uxdp_map_update(l->map, 0, uxdp_dev_target(l->a));
	err = attach(l->gen, "gen-redirect", prog_gen, l->map);
	if (!err)
		err = attach(l->b, "swap-tx", prog_swap_tx, NULL);
	if (!err)
		err = attach(l->a, "count-drop", prog_count_drop, &l->a_count);
	if (!err)
		err = uxdp_dev_up(l->gen) || uxdp_dev_up(l->a) ||
		      uxdp_dev_up(l->b);
	if (err)
		goto err;
	return 0;
err:
	fprintf(stderr, "uxdp-bench: veth-tx set-up: %s\n", uxdp_errmsg());
	loop_teardown(l);
	return -1;
}

static uint64_t txq_calls(struct uxdp_dev *dev)
{
	struct uxdp_txq_stats st;

	uxdp_dev_txq_stats(dev, 0, &st);
	return st.xmit_calls;
}

/* ---- the runs -------------------------------------------------------------- */

/* Poll until A has dropped @ops more frames. Returns ticks. */
static uint64_t loop_run(struct veth_loop *l, uint64_t ops)
{
	uint64_t goal = l->a_count + ops, t0, t1;

	t0 = bench_tsc_begin();
	while (l->a_count < goal) {
		uxdp_dev_poll(l->gen, 0, POLL_BUDGET);
		uxdp_dev_poll(l->b, 0, POLL_BUDGET);
		uxdp_dev_poll(l->a, 0, POLL_BUDGET);
	}
	t1 = bench_tsc_end();
	return t1 - t0;
}

/* Drain the rings so every run starts from the same, empty, state. */
static void loop_drain(struct veth_loop *l)
{
	int i;

	for (i = 0; i < 64; i++)
		if (uxdp_dev_poll(l->b, 0, POLL_BUDGET) +
		    uxdp_dev_poll(l->a, 0, POLL_BUDGET) == 0)
			break;
}

static int uxdp_case_run(void *arg, uint64_t ops, double *out)
{
	struct veth_case *c = arg;
	struct veth_loop *l = c->l;
	uint64_t calls0, ticks;

	uxdp_dev_set_bulk(l->b, c->bulk);
	calls0 = txq_calls(l->a) + txq_calls(l->b);
	ticks = loop_run(l, ops);
	loop_drain(l);
	out[M_CYC] = (double)ticks / (double)ops;
	out[M_CALLS] = (double)(txq_calls(l->a) + txq_calls(l->b) - calls0) /
		       (double)ops;
	out[M_MPPS] = (double)ops / bench_ns((double)ticks) * 1e3;
	return 0;
}

#ifdef UXDP_BENCH_HAVE_TESTBED
#define KERNEL_FRAME_LEN	64	/* Ethernet + IPv4 + UDP, no FCS */
#define KERNEL_SETTLE_MS	500	/* longest wait for frames in flight */

static void kernel_teardown(struct kernel_loop *k)
{
	tb_gen_close(k->gen);
	tb_gen_close(k->gen_drop);
	tb_close(k->tb);	/* the programs, the pair, the namespace */
	k->gen = k->gen_drop = NULL;
	k->tb = NULL;
}

/* A kernel that cannot (no native XDP on veth, no live frames). */
static bool kernel_cannot(int err)
{
	return err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */;
}

static int kernel_setup(struct kernel_loop *k)
{
	static const uint8_t mac_a[6] = { 0x02, 0x75, 0x78, 0x64, 0x70, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0x75, 0x78, 0x64, 0x70, 0x0b };
	struct tb_veth_opts vo = { .queues = 1, .mac_a = mac_a,
				   .mac_b = mac_b };
	struct tb_gen_opts go = { .cpu = -1 };
	uint8_t frame[KERNEL_FRAME_LEN];
	struct tb_xdp *b;
	int err;

	tb_frame_build(frame, sizeof(frame), mac_b, mac_a, 9, 0);
	err = tb_open(&k->tb, 0);
	if (!err) {
		k->ns = tb_ns_new(k->tb, "veth");
		err = k->ns ? 0 : -errno;
	}
	if (!err)
		err = tb_veth_add(k->tb, k->ns, "vA", k->ns, "vB", &vo);
	/* vB first: what vA sends it needs vB's NAPI, and back. */
	if (!err)
		err = tb_xdp_attach(k->ns, "vB", TB_PROG_MACSWAP, 0,
				    TB_XDP_NATIVE, &b);
	if (!err)
		err = tb_xdp_attach(k->ns, "vA", TB_PROG_DROP, 0,
				    TB_XDP_NATIVE, &k->a);
	if (!err)
		err = tb_gen_open(k->tb, k->ns, "vA", frame, sizeof(frame),
				  &go, &k->gen);
	go.drop = true;
	if (!err)
		err = tb_gen_open(k->tb, k->ns, "vA", frame, sizeof(frame),
				  &go, &k->gen_drop);
	if (err) {
		k->err = err;
		k->unavailable = kernel_cannot(err);
		snprintf(k->why, sizeof(k->why), "%s", tb_errmsg());
		kernel_teardown(k);
	}
	return err;
}

/*
 * Wait (bounded) until vA has counted @want frames more than @base, or
 * its count stopped moving for 5 ms. Returns how many it counted.
 */
static uint64_t kernel_settle(struct kernel_loop *k, uint64_t base,
			      uint64_t want)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	uint64_t cur = base, last = base;
	int i, still = 0;

	for (i = 0; i < KERNEL_SETTLE_MS; i++) {
		if (tb_xdp_count(k->a, &cur, NULL))
			break;
		if (cur - base >= want)
			break;
		if (i && cur == last) {
			if (++still >= 5)
				break;
		} else {
			still = 0;
		}
		last = cur;
		nanosleep(&ms, NULL);
	}
	return cur - base;
}

/* A test run's failure: a skip if this kernel cannot, else a failure. */
static int kernel_send_err(int err, const char *what)
{
	if (kernel_cannot(err)) {
		bench_why("this kernel cannot run it: %s (%s)", tb_errmsg(),
			  what);
		return BENCH_UNAVAILABLE;
	}
	bench_why("%s (%s)", tb_errmsg(), what);
	return err;
}

static int kernel_case_run(void *arg, uint64_t ops, double *out)
{
	struct veth_case *c = arg;
	struct kernel_loop *k = c->k;
	uint64_t t0, t1, c0, got;
	int err;

	if (!k->tb && !k->err)
		kernel_setup(k);
	if (k->err) {
		if (k->unavailable) {
			bench_why("this kernel cannot run it: %s", k->why);
			return BENCH_UNAVAILABLE;
		}
		bench_why("%s", k->why);
		return k->err;
	}

	/* The generator alone: page_pool, program, recycle. */
	t0 = bench_tsc_begin();
	err = tb_gen_send(k->gen_drop, ops);
	t1 = bench_tsc_end();
	if (err)
		return kernel_send_err(err, "generator only");
	out[M_GEN_MPPS] = (double)ops / bench_ns((double)(t1 - t0)) * 1e3;

	/* The loop. */
	err = tb_xdp_count(k->a, &c0, NULL);
	if (err) {
		bench_why("%s", tb_errmsg());
		return err;
	}
	t0 = bench_tsc_begin();
	err = tb_gen_send(k->gen, ops);
	t1 = bench_tsc_end();
	if (err)
		return kernel_send_err(err, "loop");
	got = kernel_settle(k, c0, ops);
	if (!got) {
		bench_why("no frame came back to vA (%llu sent)",
			  (unsigned long long)ops);
		return -EIO;
	}
	out[M_MPPS] = (double)got / bench_ns((double)(t1 - t0)) * 1e3;
	out[M_CYC] = (double)(t1 - t0) / (double)got;
	return 0;
}
#endif

/* Cycles of an uncontended TTAS lock+unlock pair, as src/internal.h's. */
static double lock_pair_cycles(void)
{
	static uint32_t lock;
	const uint64_t n = 2000000;
	uint64_t i, t0, t1;

	t0 = bench_tsc_begin();
	for (i = 0; i < n; i++) {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	}
	t1 = bench_tsc_end();
	return (double)(t1 - t0) / (double)n;
}

/* ---- the command ------------------------------------------------------------------ */

int bench_veth_tx(const struct bench_opts *o)
{
	static const uint32_t bulks[] = { 16, 1 };
	struct veth_case cases[3];
	struct bench_variant v[3];
	struct veth_loop loop;
	struct report_row *row;
	struct kernel_loop kl;
	uint64_t ops = o->ops ? o->ops : BENCH_VETH_DEFAULT_OPS;
	unsigned int nv = 0, i;
	double lock, m16, m1, c16, c1, k, ratio;
	bool kpeer = true;
	int ret = 0;

	report_heading("veth-tx: single-core XDP_TX through a veth pair "
		       "(gen -> A -> B XDP_TX -> A drop)");
	if (bench_pin_self(bench_env.cpu_a))
		report_warn("veth", "could not pin to CPU %d", bench_env.cpu_a);
	if (loop_setup(&loop)) {
		bench_fail("veth", "set-up of the uxdp loop (see above)");
		report_flush();
		return 1;
	}

	memset(v, 0, sizeof(v));
	memset(&kl, 0, sizeof(kl));
	for (i = 0; i < 2; i++) {
		cases[nv] = (struct veth_case){ .l = &loop, .bulk = bulks[i] };
		v[nv].label = bulks[i] == 16 ? "uxdp bulk 16" : "uxdp bulk 1";
		v[nv].run = uxdp_case_run;
		v[nv].arg = &cases[nv];
		v[nv].ops = ops;
		v[nv].nmetrics = M_NMETRICS;
		nv++;
	}
	/* Each way the kernel peer can be absent is a skip, said so. */
#ifndef UXDP_BENCH_HAVE_TESTBED
	report_warn("veth", "kernel peer not built (needs libbpf-dev at "
		    "build time)");
	kpeer = false;
#else
	if (geteuid() != 0) {
		report_warn("veth", "kernel peer skipped: needs root (netns, "
			    "veth, XDP programs, BPF_PROG_TEST_RUN)");
		kpeer = false;
	}
	if (kpeer) {
		uint64_t kops = o->ops ? o->ops / 5 : BENCH_VETH_KERNEL_OPS;

		cases[nv] = (struct veth_case){ .k = &kl };
		v[nv].label = "kernel veth";
		v[nv].run = kernel_case_run;
		v[nv].arg = &cases[nv];
		v[nv].ops = kops < 100000 ? 100000 : kops;
		v[nv].nmetrics = M_NMETRICS;
		nv++;
	}
#endif
	bench_run(v, nv, o->runs, "veth-tx", o->quiet);
	if (bench_check(v, nv, "veth"))
		ret = 1;
	lock = lock_pair_cycles();

	m16 = bench_median(&v[0], M_MPPS);
	m1 = bench_median(&v[1], M_MPPS);
	c16 = bench_median(&v[0], M_CYC);
	c1 = bench_median(&v[1], M_CYC);
	for (i = 0; i < 2; i++) {
		double calls = bench_median(&v[i], M_CALLS);
		double cyc = bench_median(&v[i], M_CYC);

		row = report_add("veth", i ? "xdp_tx bulk 1 " : "xdp_tx bulk 16",
				 "uxdp", bench_median(&v[i], M_MPPS),
				 bench_min(&v[i], M_MPPS), "Mpps");
		report_part(row, "cyc/pkt", cyc);
		report_part(row, "xmit calls/pkt", calls);
		report_part(row, "lock share est. %", 100.0 * calls * lock /
			    cyc);
		report_seed(row, i ? "7.26 Mpps, _raw_spin_lock 7.83%%" :
				     "7.84 Mpps, _raw_spin_lock 1.17%% "
				     "(v3: 7.94, 1.08%%)");
		report_summarise(row);
	}
	/* Ratios within each round (run back to back), then the median. */
	ratio = bench_paired_ratio(&v[0], &v[1], M_MPPS);
	row = report_add("veth", "xdp_tx bulk16/bulk1", "uxdp", ratio, NAN,
			 "x");
	report_seed(row, "1.08x (7.84/7.26; v3 1.09x)");
	report_row_note(row, "median of per-round ratios; ratio of medians "
			"%.2fx", m16 / m1);
	report_summarise(row);
	report_target_min("veth", "uxdp xdp_tx bulk16/bulk1 Mpps", ratio,
			  1.3, "%.1f vs %.1f Mpps; %.1f vs %.1f cyc/pkt",
			  m16, m1, c16, c1);
	report_note("veth", "lock+unlock pair, uncontended: %.1f cyc; lock "
		    "share = xmit calls/pkt x that / cyc/pkt (an estimate: "
		    "see docs/benchmarks.md for perf's figure)", lock);

	if (kpeer && !v[2].err) {
		k = bench_median(&v[2], M_MPPS);
		row = report_add("veth", "kernel veth loop", "kernel", k,
				 bench_min(&v[2], M_MPPS), "Mpps");
		report_part(row, "gen-only Mpps",
			    bench_median(&v[2], M_GEN_MPPS));
		report_summarise(row);
		ratio = bench_paired_ratio(&v[0], &v[2], M_MPPS);
		row = report_add("veth", "uxdp bulk16 / kernel", "uxdp",
				 ratio, NAN, "x");
		report_row_note(row, "median of per-round ratios; ratio of "
				"medians %.2fx", m16 / k);
		report_summarise(row);
		report_target_min("veth", "uxdp loop / kernel loop Mpps",
				  ratio, 3.0, "uxdp %.1f Mpps, kernel %.2f "
				  "Mpps", m16, k);
		report_note("veth", "kernel peer: the same loop on a kernel "
			    "veth pair in a private netns, BPF programs, "
			    "generator BPF_PROG_TEST_RUN live frames "
			    "(tools/lib/testbed.c); its gen-only figure is the "
			    "injection ceiling");
	}
#ifdef UXDP_BENCH_HAVE_TESTBED
	kernel_teardown(&kl);
#endif
	bench_variants_free(v, nv);
	loop_teardown(&loop);
	report_flush();
	return ret;
}
