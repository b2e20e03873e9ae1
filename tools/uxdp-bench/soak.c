/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench soak: many pipelines at once, every configuration the defaults
 * never reach, and a churn thread changing things under them; at the end
 * every packet is accounted for and every buffer is home (issue 6).
 *
 * A pipeline is the reflector of tests/test_lifecycle.c:
 *
 *	G (null generator) --redirect through the map, slot = pipeline-->
 *	  A's xmit -> B's ring; B: XDP_TX -> A's ring; A: count, XDP_DROP
 *
 * It runs in epochs. An epoch draws a configuration from the matrix (veth
 * ring 2..4096, 1 or 2 queues, budget 1..1024, bulk 1 or 16, generator
 * buffers, idle timeout, and a polling thread per queue, a poll group of
 * its own, or the poll groups every pipeline shares), builds G, A and B,
 * lets G generate a known number of packets (rx_count), waits until every
 * one of them has reached an end, stops and takes everything down, checks
 * the accounting and G's pool, and destroys it all. The epochs of all
 * pipelines draw on one budget, -n packets, so fast configurations take
 * more of it and slow ones do not hold the run up.
 *
 * Meanwhile this thread (the "churn thread": it also runs the epochs, so
 * nothing else changes a pipeline under it) picks a live pipeline at
 * random intervals and: swaps a device's program for an equivalent one, or
 * briefly for one that drops (G: XDP_DROP, B: XDP_ABORTED, A: XDP_PASS
 * without a handler, each counted by the program itself); takes A, B or G
 * down and up again; destroys the veth pair under traffic, one end then
 * the other, and makes a new one (the map slot is cleared by the destroy
 * and re-pointed); moves a queue between poll groups or between a group
 * and polling threads; changes a bulk size.
 *
 * Exact accounting with devices that vanish: a destroyed device takes its
 * counters with it, including the frames its destroy gave back. So an end
 * is taken down first (under traffic: its ring is given back, counted in
 * its drained; from then on transmits into it are refused and counted by
 * the sender), its counters are read, and only then is it destroyed, still
 * under traffic (the map slot still holds A; B may still transmit into A).
 * Its receive counters cannot change between the read and the destroy: no
 * poll runs on a down device and nothing can be queued to it. Its transmit
 * refusals can (G keeps redirecting into a down A until the destroy clears
 * the slot); G counts those too, so that one check is an inequality.
 *
 * Every packet carries its sequence number (UXDP_NULL_F_SEQ); A's program
 * marks it in a bitmap, so a packet delivered twice, or one G never
 * generated, is caught.
 *
 * For tests: UXDP_SOAK_FAULT=skip:REASON leaves one term (a reason of the
 * drop table, or "delivered") out of the main equation, and
 * UXDP_SOAK_FAULT=leak keeps one of G's buffers before the audit: either
 * must fail the run. UXDP_SOAK_VERBOSE=1 prints a line per epoch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "bench.h"
#include "report.h"

#define SOAK_MAXQ		2
#define SOAK_NSHARED		2
#define SOAK_SEQ_OFF		42	/* the null template's UDP payload */
/* No packet of an epoch moved for this long: a poller sleeps on a ring
 * with frames (the idle timeouts drawn include 30 s, longer than this). */
#define SOAK_STALL_NS		(10ULL * 1000000000ULL)
#define SOAK_TICK_US		1000	/* the churn thread's loop */
#define SOAK_CHURN_MAX_US	8000	/* between events: 0..this */
#define SOAK_WINDOW_MAX_US	2000	/* a bad program, a device down */
#define SOAK_CHUNK_MIN		2048
#define SOAK_CHUNK_MAX		(4ULL << 20)

enum soak_mode { MODE_THREADS, MODE_GROUP, MODE_SHARED, MODE_N };
enum { DEV_G, DEV_A, DEV_B, NDEV };
static const char *const mode_names[MODE_N] = { "threads", "group",
						 "shared" };

/* The matrix. */
static const uint32_t rings[] = { 2, 16, 64, 256, 4096 };
static const int budgets[] = { 1, 8, 64, 1024 };
static const uint32_t bulks[] = { 1, 16 };
static const uint32_t gen_frames[] = { 64, 256, 1024 };
/* 30 s: longer than the stall limit, so a lost wake-up is a failure. */
static const uint32_t idles[] = { 100, 10000, 30000000 };
/*
 * Generator packets per second, 0: as fast as polled. Unpaced, a
 * generator with a thread of its own refuses most of its packets at A
 * (B's ring is full: a saturated wire); paced, they flow to the end, and
 * the generator's poller sleeps on its timer (uxdp_dev_ops.rx_fd).
 */
static const uint64_t pps[] = { 0, 0, 250000, 1000000 };

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct soak_cfg {
	uint32_t ring, queues, bulk, frames, idle_us;
	uint64_t pps;
	int budget;
	enum soak_mode mode;
};

/* Where the packets went, as the final equation adds them up. */
enum soak_reason {
	R_DELIVERED,	/* A's program saw it: the end of the line */
	R_G_REFUSED,	/* G's redirect refused by A (full, down): redirect_err */
	R_G_MISS,	/* the map slot was empty: redirect_miss, dropped */
	R_G_CHURN,	/* G's drop program */
	R_B_DRAINED,	/* queued to B when B went down */
	R_B_REFUSED,	/* B's XDP_TX refused by A: tx_err */
	R_B_CHURN,	/* B's aborting program */
	R_A_DRAINED,	/* queued to A when A went down */
	R_A_CHURN,	/* A's pass program, no handler: pass_dropped */
	R_N
};

static const char *const reason_keys[R_N] = {
	"delivered", "redirect_err", "redirect_miss", "g_churn", "b_drained",
	"tx_err", "b_churn", "a_drained", "a_churn",
};

static const char *const reason_text[R_N] = {
	"delivered (A's program)",
	"G->A refused (G redirect_err)",
	"map slot empty (G redirect_miss)",
	"G drop program (churn)",
	"B ring given back at down",
	"B->A refused (B tx_err)",
	"B aborting program (churn)",
	"A ring given back at down",
	"A pass program (churn)",
};

enum soak_churn {
	C_SWAP,		/* an equivalent program */
	C_BADPROG,	/* a dropping program, briefly */
	C_DOWNUP_A,
	C_DOWNUP_B,
	C_DOWNUP_G,
	C_PAIR,		/* the veth pair destroyed under traffic, remade */
	C_MOVE,		/* a queue to another group, or groups <-> threads */
	C_RESTART,	/* a device's polling threads stopped and started */
	C_BULK,
	C_N
};

static const char *const churn_text[C_N] = {
	"program swaps (equivalent)", "dropping program windows",
	"A down/up", "B down/up", "G down/up",
	"veth pair destroyed + remade", "queue moves (groups, threads)",
	"polling threads restarted", "bulk size changes",
};

/* Written by the programs (any polling thread), read by the churn thread. */
struct soak_counts {
	uint64_t delivered;
	uint64_t g_bad, b_bad, a_bad;	/* the churn programs' packets */
	uint64_t dup;			/* a sequence number seen twice */
	uint64_t seq_bad;		/* beyond the epoch's count; bad packet */
} __attribute__((aligned(64)));

struct soak;

struct soak_pipe {
	struct soak *s;
	unsigned int id;
	/* [dev][0], [dev][1]: equivalent programs; [dev][2]: the bad one */
	struct uxdp_prog *prog[NDEV][3];
	unsigned int cur[NDEV];		/* which good one is attached */

	/* The epoch. */
	bool active;
	uint32_t epoch;
	struct soak_cfg cfg;
	uint64_t count;			/* G's rx_count; programs read it */
	uint64_t t0_ns;
	struct uxdp_dev *dev[NDEV];
	struct uxdp_poll_group *own;	/* MODE_GROUP */
	/* Who polls each queue: a group, or the device's own threads. */
	struct uxdp_poll_group *grp[NDEV][SOAK_MAXQ];
	bool threads[NDEV];
	/* Counters of this epoch's A and B ends already destroyed. */
	struct uxdp_rxq_stats old_rx[NDEV];
	struct uxdp_txq_stats old_tx[NDEV];
	uint64_t progress, progress_ns;	/* stall detection */
	uint64_t *seen;			/* one bit per sequence number */

	/* Over the run. */
	uint64_t epochs, generated, delivered, busy_ns;
	unsigned int failures;

	struct soak_counts cnt;
};

struct soak {
	const struct bench_opts *o;
	uint64_t seed, rng;
	uint64_t total, remaining, chunk;
	unsigned int npipes;
	struct soak_pipe *pipes;
	struct uxdp_map *map;
	struct uxdp_poll_group *shared[SOAK_NSHARED];
	int shared_budget[SOAK_NSHARED];
	uint64_t names;
	bool stop;			/* start no more epochs */
	bool fatal;			/* a set-up call failed: wind down */
	bool timed_out;
	unsigned int failures;
	uint64_t reason[R_N];
	uint64_t generated;
	uint64_t refused_full, refused_down;	/* transmit refusals by why */
	uint64_t churn[C_N];
	uint64_t epochs;
	/* How often each value of the matrix was drawn. */
	uint64_t cover_ring[ARRAY_SIZE(rings)], cover_budget[ARRAY_SIZE(budgets)];
	uint64_t cover_bulk[ARRAY_SIZE(bulks)], cover_mode[MODE_N];
	uint64_t cover_q[SOAK_MAXQ], cover_paced;
	int fault_skip;			/* a reason, or -1 */
	bool fault_leak;
	bool verbose;
};

/* ---- small helpers ------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* splitmix64: the run is reproducible from --seed (timing aside). */
static uint64_t rnd(struct soak *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(struct soak *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % n);
}

static uint64_t get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static void inc(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static double mega(uint64_t v)
{
	return (double)v / 1e6;
}

/* ---- the programs -------------------------------------------------------- */

static uint32_t prog_g_redirect(struct uxdp_buff *ctx, void *priv)
{
	struct soak_pipe *p = priv;

	(void)ctx;
	return uxdp_redirect_map(p->s->map, p->id, UXDP_DROP);
}

/* The same verdicts, by another path through the code. */
static uint32_t prog_g_redirect_checked(struct uxdp_buff *ctx, void *priv)
{
	struct soak_pipe *p = priv;

	if ((char *)ctx->data + 14 > (char *)ctx->data_end)
		return UXDP_ABORTED;
	return uxdp_redirect_map(p->s->map, p->id, UXDP_DROP);
}

static uint32_t prog_g_bad(struct uxdp_buff *ctx, void *priv)
{
	struct soak_pipe *p = priv;

	(void)ctx;
	inc(&p->cnt.g_bad);
	return UXDP_DROP;
}

static uint32_t prog_b_tx(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_TX;
}

static uint32_t prog_b_swap_tx(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *d = ctx->data, t[6];

	(void)priv;
	if (d + 14 > (unsigned char *)ctx->data_end)
		return UXDP_ABORTED;
	memcpy(t, d, 6);
	memcpy(d, d + 6, 6);
	memcpy(d + 6, t, 6);
	return UXDP_TX;
}

static uint32_t prog_b_bad(struct uxdp_buff *ctx, void *priv)
{
	struct soak_pipe *p = priv;

	(void)ctx;
	inc(&p->cnt.b_bad);
	return UXDP_ABORTED;
}

/*
 * The end of the line: mark the packet's sequence number. A number seen
 * before is a packet delivered twice (a frame returned and reused while
 * still queued, or transmitted twice); one at or past the epoch's count
 * was never generated (a stale frame from an earlier epoch, or garbage).
 */
static void deliver(struct soak_pipe *p, const struct uxdp_buff *ctx,
		    bool check_type)
{
	const unsigned char *d = ctx->data;
	uint64_t seq, bit, old;

	inc(&p->cnt.delivered);
	if (d + SOAK_SEQ_OFF + 8 > (const unsigned char *)ctx->data_end ||
	    (check_type && (d[12] != 0x08 || d[13] != 0x00))) {
		inc(&p->cnt.seq_bad);
		return;
	}
	memcpy(&seq, d + SOAK_SEQ_OFF, sizeof(seq));
	if (seq >= __atomic_load_n(&p->count, __ATOMIC_RELAXED)) {
		inc(&p->cnt.seq_bad);
		return;
	}
	bit = 1ULL << (seq & 63);
	old = __atomic_fetch_or(&p->seen[seq >> 6], bit, __ATOMIC_RELAXED);
	if (old & bit)
		inc(&p->cnt.dup);
}

static uint32_t prog_a_deliver(struct uxdp_buff *ctx, void *priv)
{
	deliver(priv, ctx, false);
	return UXDP_DROP;
}

static uint32_t prog_a_deliver_checked(struct uxdp_buff *ctx, void *priv)
{
	deliver(priv, ctx, true);
	return UXDP_DROP;
}

static uint32_t prog_a_bad(struct uxdp_buff *ctx, void *priv)
{
	struct soak_pipe *p = priv;

	(void)ctx;
	inc(&p->cnt.a_bad);
	return UXDP_PASS;	/* no pass handler: pass_dropped */
}

static const uxdp_prog_fn prog_fns[NDEV][3] = {
	[DEV_G] = { prog_g_redirect, prog_g_redirect_checked, prog_g_bad },
	[DEV_A] = { prog_a_deliver, prog_a_deliver_checked, prog_a_bad },
	[DEV_B] = { prog_b_tx, prog_b_swap_tx, prog_b_bad },
};

/* ---- failures ------------------------------------------------------------ */

static void cfg_str(const struct soak_pipe *p, char *buf, size_t len)
{
	const struct soak_cfg *c = &p->cfg;

	snprintf(buf, len, "ring %u, %u queue%s, budget %d, bulk %u, %s, "
		 "idle %u us, %u buffers, %llu pps, %llu packets", c->ring,
		 c->queues, c->queues > 1 ? "s" : "", c->budget, c->bulk,
		 mode_names[c->mode], c->idle_us, c->frames,
		 (unsigned long long)c->pps, (unsigned long long)p->count);
}

static void __attribute__((format(printf, 2, 3)))
pipe_fail(struct soak_pipe *p, const char *fmt, ...)
{
	char msg[320], cfg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cfg_str(p, cfg, sizeof(cfg));
	bench_fail("soak", "pipeline %u epoch %u (%s): %s", p->id, p->epoch,
		   cfg, msg);
	p->failures++;
	p->s->failures++;
	/* Finish what runs, start nothing new: the first failure is the
	 * one to read. */
	p->s->stop = true;
}

/* A set-up or control call failed: the soak cannot go on. */
static int setup_fail(struct soak_pipe *p, const char *what, int err)
{
	pipe_fail(p, "%s: %s (%s)", what, strerror(err < 0 ? -err : err),
		  uxdp_errmsg());
	p->s->fatal = true;
	return err < 0 ? err : -err;
}

#define CHECK_EQ(p, what, x, y)						\
	do {								\
		unsigned long long x_ = (x), y_ = (y);			\
		if (x_ != y_)						\
			pipe_fail((p), "%s: %llu != %llu", (what), x_, y_); \
	} while (0)

/* ---- counters ------------------------------------------------------------ */

#define NU64(t)	(sizeof(t) / sizeof(uint64_t))

static void add_u64(uint64_t *dst, const uint64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] += src[i];
}

/* Add @dev's receive counters, every queue, to *@sum. */
static void rx_add(struct uxdp_rxq_stats *sum, const struct uxdp_dev *dev)
{
	struct uxdp_rxq_stats st;
	uint32_t q;

	for (q = 0; q < uxdp_dev_num_rxq(dev); q++)
		if (!uxdp_dev_rxq_stats(dev, q, &st))
			add_u64((uint64_t *)sum, (const uint64_t *)&st,
				NU64(st));
}

static void tx_add(struct uxdp_txq_stats *sum, const struct uxdp_dev *dev)
{
	struct uxdp_txq_stats st;
	uint32_t q;

	for (q = 0; q < uxdp_dev_num_txq(dev); q++)
		if (!uxdp_dev_txq_stats(dev, q, &st))
			add_u64((uint64_t *)sum, (const uint64_t *)&st,
				NU64(st));
}

/* A device's counters in this epoch: its destroyed instances plus now. */
static struct uxdp_rxq_stats pipe_rx(const struct soak_pipe *p, int d)
{
	struct uxdp_rxq_stats st = p->old_rx[d];

	if (p->dev[d])
		rx_add(&st, p->dev[d]);
	return st;
}

static struct uxdp_txq_stats pipe_tx(const struct soak_pipe *p, int d)
{
	struct uxdp_txq_stats st = p->old_tx[d];

	if (p->dev[d])
		tx_add(&st, p->dev[d]);
	return st;
}

/* Every verdict a received frame can end in (aborted includes invalid). */
static uint64_t outcomes(const struct uxdp_rxq_stats *st)
{
	return st->pass + st->pass_dropped + st->drop + st->tx +
	       st->redirect + st->aborted + st->no_prog + st->tx_err +
	       st->redirect_err + st->redirect_no_target + st->frame_err;
}

/*
 * Packets that have reached an end: everything but G's sent redirects
 * (now in B's ring) and B's sent XDP_TX (now in A's ring). Read while
 * traffic flows: each packet reaches one end counter once, so the sum
 * never counts one twice and reaches the epoch's count exactly when the
 * last one arrives (a bug that counts twice overshoots, and the exact
 * checks after the stop say where).
 */
static uint64_t pipe_ended(const struct soak_pipe *p)
{
	struct uxdp_rxq_stats g = pipe_rx(p, DEV_G), a = pipe_rx(p, DEV_A);
	struct uxdp_rxq_stats b = pipe_rx(p, DEV_B);

	return outcomes(&g) - g.redirect + outcomes(&b) - b.tx + b.drained +
	       outcomes(&a) + a.drained;
}

/* ---- who polls what ------------------------------------------------------ */

static int start_threads(struct soak_pipe *p, int d)
{
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po, .budget = p->cfg.budget,
			  .idle_us = p->cfg.idle_us);
	int err = uxdp_dev_start(p->dev[d], &po);

	if (err)
		return setup_fail(p, "uxdp_dev_start", err);
	p->threads[d] = true;
	return 0;
}

static int group_add(struct soak_pipe *p, int d, uint32_t q,
		     struct uxdp_poll_group *g)
{
	int err = uxdp_poll_group_add(g, p->dev[d], q);

	if (err)
		return setup_fail(p, "uxdp_poll_group_add", err);
	p->grp[d][q] = g;
	return 0;
}

/* A group to poll from, other than @not: the pipeline's own or a shared. */
static struct uxdp_poll_group *pick_group(struct soak_pipe *p,
					  struct uxdp_poll_group *not)
{
	struct uxdp_poll_group *c[SOAK_NSHARED + 1];
	unsigned int n = 0, i;

	if (p->own && p->own != not)
		c[n++] = p->own;
	for (i = 0; i < SOAK_NSHARED; i++)
		if (p->s->shared[i] != not)
			c[n++] = p->s->shared[i];
	return c[rnd_below(p->s, n)];
}

/* Start polling device @d the way the epoch's mode says. */
static int poll_start(struct soak_pipe *p, int d)
{
	uint32_t q, nq = uxdp_dev_num_rxq(p->dev[d]);
	int err = 0;

	if (p->cfg.mode == MODE_THREADS)
		return start_threads(p, d);
	for (q = 0; q < nq && !err; q++)
		err = group_add(p, d, q, p->cfg.mode == MODE_GROUP ? p->own :
				pick_group(p, NULL));
	return err;
}

/* Stop polling device @d: when this returns no thread polls it. */
static void poll_stop(struct soak_pipe *p, int d)
{
	uint32_t q;

	if (p->threads[d])
		uxdp_dev_stop(p->dev[d]);
	p->threads[d] = false;
	for (q = 0; q < SOAK_MAXQ; q++) {
		int err = p->grp[d][q] ?
			  uxdp_poll_group_remove(p->grp[d][q], p->dev[d], q) :
			  0;

		if (err)
			setup_fail(p, "uxdp_poll_group_remove", err);
		p->grp[d][q] = NULL;
	}
}

/* ---- devices ------------------------------------------------------------- */

static int attach(struct soak_pipe *p, int d, uint32_t q, unsigned int which)
{
	int err = uxdp_dev_attach_prog(p->dev[d], q, p->prog[d][which]);

	if (err)
		return setup_fail(p, "uxdp_dev_attach_prog", err);
	if (which < 2 && q == UXDP_ALL_QUEUES)
		p->cur[d] = which;
	return 0;
}

static int dev_up(struct soak_pipe *p, int d)
{
	int err = uxdp_dev_up(p->dev[d]);

	return err ? setup_fail(p, "uxdp_dev_up", err) : 0;
}

static int dev_down(struct soak_pipe *p, int d)
{
	int err = uxdp_dev_down(p->dev[d]);

	return err ? setup_fail(p, "uxdp_dev_down", err) : 0;
}

/* A new veth pair for the pipeline, polled, and the map slot on it. */
static int pair_create(struct soak_pipe *p)
{
	UXDP_DECLARE_OPTS(uxdp_veth_opts, vo, .ring_size = p->cfg.ring,
			  .queues = p->cfg.queues);
	struct soak *s = p->s;
	char na[UXDP_IFNAMSIZ], nb[UXDP_IFNAMSIZ];
	unsigned long k = (unsigned long)(s->names++ % 1000000000UL);
	int err, d;

	snprintf(na, sizeof(na), "sk%ua%lu", p->id, k);
	snprintf(nb, sizeof(nb), "sk%ub%lu", p->id, k);
	err = uxdp_veth_create(na, nb, &vo, &p->dev[DEV_A], &p->dev[DEV_B]);
	if (err)
		return setup_fail(p, "uxdp_veth_create", err);
	for (d = DEV_A; d <= DEV_B; d++) {
		uxdp_dev_set_bulk(p->dev[d], p->cfg.bulk);
		err = attach(p, d, UXDP_ALL_QUEUES, rnd_below(s, 2));
		if (!err)
			err = dev_up(p, d);
		if (!err)
			err = poll_start(p, d);
		if (err)
			return err;
	}
	err = uxdp_map_update(s->map, p->id, uxdp_dev_target(p->dev[DEV_A]));
	return err ? setup_fail(p, "uxdp_map_update", err) : 0;
}

/*
 * Destroy one end of the pair under traffic, keeping its counters: down
 * first (its ring is given back and counted), read, destroy. Nothing can
 * reach its receive counters in between (see the top of the file).
 */
static int end_destroy(struct soak_pipe *p, int d)
{
	int err = dev_down(p, d);

	if (err)
		return err;
	rx_add(&p->old_rx[d], p->dev[d]);
	tx_add(&p->old_tx[d], p->dev[d]);
	/* The destroy stops its threads and takes it out of its groups. */
	uxdp_dev_destroy(p->dev[d]);
	p->dev[d] = NULL;
	p->threads[d] = false;
	memset(p->grp[d], 0, sizeof(p->grp[d]));
	return 0;
}

/* ---- epochs -------------------------------------------------------------- */

/*
 * How much of the chunk an epoch of this configuration gets: tiny rings,
 * budgets and bulks move a packet at a much higher cost, so they get
 * fewer packets and every epoch lasts about as long.
 */
static uint64_t cfg_count(const struct soak *s, const struct soak_cfg *c)
{
	uint64_t n = s->chunk;

	if (c->ring <= 2)
		n /= 8;
	else if (c->ring <= 16)
		n /= 2;
	if (c->budget <= 1)
		n /= 8;
	else if (c->budget <= 8)
		n /= 2;
	if (c->bulk == 1)
		n /= 2;
	/* A paced epoch: about an eighth of a second. */
	if (c->pps && n > c->pps / 8)
		n = c->pps / 8;
	return n < SOAK_CHUNK_MIN ? SOAK_CHUNK_MIN : n;
}

static void cfg_draw(struct soak *s, struct soak_cfg *c)
{
	unsigned int ri = rnd_below(s, ARRAY_SIZE(rings));
	unsigned int bi = rnd_below(s, ARRAY_SIZE(budgets));
	unsigned int ki = rnd_below(s, ARRAY_SIZE(bulks));

	c->ring = rings[ri];
	c->budget = budgets[bi];
	c->bulk = bulks[ki];
	c->queues = 1 + rnd_below(s, SOAK_MAXQ);
	c->mode = (enum soak_mode)rnd_below(s, MODE_N);
	c->frames = gen_frames[rnd_below(s, ARRAY_SIZE(gen_frames))];
	c->idle_us = idles[rnd_below(s, ARRAY_SIZE(idles))];
	c->pps = pps[rnd_below(s, ARRAY_SIZE(pps))];
	s->cover_paced += c->pps != 0;
	s->cover_ring[ri]++;
	s->cover_budget[bi]++;
	s->cover_bulk[ki]++;
	s->cover_mode[c->mode]++;
	s->cover_q[c->queues - 1]++;
}

static int epoch_start(struct soak_pipe *p)
{
	struct soak *s = p->s;
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .flags = UXDP_NULL_F_SEQ);
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po);
	char ng[UXDP_IFNAMSIZ];
	uint64_t n;
	int err;

	cfg_draw(s, &p->cfg);
	n = cfg_count(s, &p->cfg);
	if (n > s->remaining)
		n = s->remaining;
	s->remaining -= n;
	/* Nothing of this pipeline runs between epochs: plain resets. */
	__atomic_store_n(&p->count, n, __ATOMIC_RELAXED);
	p->epoch++;
	p->active = true;
	memset(&p->cnt, 0, sizeof(p->cnt));
	memset(p->old_rx, 0, sizeof(p->old_rx));
	memset(p->old_tx, 0, sizeof(p->old_tx));
	memset(p->seen, 0, (n + 63) / 64 * sizeof(uint64_t));
	p->t0_ns = p->progress_ns = now_ns();
	p->progress = 0;

	if (p->cfg.mode == MODE_GROUP) {
		po.budget = p->cfg.budget;
		po.idle_us = p->cfg.idle_us;
		p->own = uxdp_poll_group_create(&po);
		if (!p->own)
			return setup_fail(p, "uxdp_poll_group_create", errno);
		err = uxdp_poll_group_start(p->own);
		if (err)
			return setup_fail(p, "uxdp_poll_group_start", err);
	}
	err = pair_create(p);
	if (err)
		return err;
	no.rx_count = n;
	no.rx_frames = p->cfg.frames;
	no.rx_pps = p->cfg.pps;
	snprintf(ng, sizeof(ng), "sk%ug%lu", p->id,
		 (unsigned long)(s->names++ % 1000000000UL));
	p->dev[DEV_G] = uxdp_null_create(ng, &no);
	if (!p->dev[DEV_G])
		return setup_fail(p, "uxdp_null_create", errno);
	/* Up and polled last: it generates from then on. */
	err = attach(p, DEV_G, UXDP_ALL_QUEUES, rnd_below(s, 2));
	if (!err)
		err = dev_up(p, DEV_G);
	if (!err)
		err = poll_start(p, DEV_G);
	return err;
}

/*
 * Every packet of the epoch has ended: stop, take everything down, and
 * check each hop, then the whole, then G's buffers. Counters are final
 * here: no poll runs on a down device, and nothing can be queued to one.
 */
static void epoch_check(struct soak_pipe *p)
{
	struct soak *s = p->s;
	struct uxdp_rxq_stats g = pipe_rx(p, DEV_G), a = pipe_rx(p, DEV_A);
	struct uxdp_rxq_stats b = pipe_rx(p, DEV_B);
	struct uxdp_txq_stats ta = pipe_tx(p, DEV_A), tb = pipe_tx(p, DEV_B);
	struct soak_counts c;
	uint64_t r[R_N], sum = 0, bits = 0, i, n = p->count;
	unsigned int k;

	c.delivered = get(&p->cnt.delivered);
	c.g_bad = get(&p->cnt.g_bad);
	c.b_bad = get(&p->cnt.b_bad);
	c.a_bad = get(&p->cnt.a_bad);
	c.dup = get(&p->cnt.dup);
	c.seq_bad = get(&p->cnt.seq_bad);

	/* Generated: exactly the count, by both of G's counters. */
	CHECK_EQ(p, "G generated (rx packets) = count", g.packets, n);
	CHECK_EQ(p, "G generated (uxdp_null_generated) = count",
		 uxdp_null_generated(p->dev[DEV_G]), n);
	/* G: every packet one verdict, redirect or a counted drop. */
	CHECK_EQ(p, "G packets = its verdicts", g.packets, outcomes(&g));
	CHECK_EQ(p, "G packets = redirect + redirect_err + drop", g.packets,
		 g.redirect + g.redirect_err + g.drop);
	CHECK_EQ(p, "G drop = redirect_miss + drop program", g.drop,
		 g.redirect_miss + c.g_bad);
	/* A's transmit took what G counted as sent. Its refusals are G's
	 * redirect_err, but a destroyed A kept counting after its read. */
	CHECK_EQ(p, "A tx packets = G redirect", ta.packets, g.redirect);
	if (ta.full + ta.too_big + ta.down > g.redirect_err)
		pipe_fail(p, "A tx refusals %llu > G redirect_err %llu",
			  (unsigned long long)(ta.full + ta.too_big + ta.down),
			  (unsigned long long)g.redirect_err);
	/* B: in = processed + given back; processed = its verdicts. */
	CHECK_EQ(p, "G redirect = B packets + B drained", g.redirect,
		 b.packets + b.drained);
	CHECK_EQ(p, "B packets = its verdicts", b.packets, outcomes(&b));
	CHECK_EQ(p, "B packets = tx + tx_err + aborted", b.packets,
		 b.tx + b.tx_err + b.aborted);
	CHECK_EQ(p, "B aborted = aborting program", b.aborted, c.b_bad);
	CHECK_EQ(p, "B tx packets = B tx", tb.packets, b.tx);
	CHECK_EQ(p, "B tx refusals = B tx_err",
		 tb.full + tb.too_big + tb.down, b.tx_err);
	/* A: in = processed + given back. */
	CHECK_EQ(p, "B tx = A packets + A drained", b.tx,
		 a.packets + a.drained);
	CHECK_EQ(p, "A packets = its verdicts", a.packets, outcomes(&a));
	CHECK_EQ(p, "A packets = drop + pass_dropped", a.packets,
		 a.drop + a.pass_dropped);
	CHECK_EQ(p, "A drop = delivered (program)", a.drop, c.delivered);
	CHECK_EQ(p, "A pass_dropped = pass program", a.pass_dropped, c.a_bad);
	/* Nothing else happened anywhere. */
	CHECK_EQ(p, "no other verdicts (no_prog, frame_err, invalid, ...)",
		 g.no_prog + g.frame_err + g.redirect_no_target + g.aborted +
		 a.no_prog + a.frame_err + a.redirect_no_target + a.aborted +
		 b.no_prog + b.frame_err + b.redirect_no_target + a.tx +
		 g.invalid_action + a.invalid_action + b.invalid_action +
		 ta.too_big + tb.too_big + g.drained, 0);

	/* The whole: generated = delivered + every counted drop. */
	r[R_DELIVERED] = c.delivered;
	r[R_G_REFUSED] = g.redirect_err;
	r[R_G_MISS] = g.redirect_miss;
	r[R_G_CHURN] = c.g_bad;
	r[R_B_DRAINED] = b.drained;
	r[R_B_REFUSED] = b.tx_err;
	r[R_B_CHURN] = b.aborted;
	r[R_A_DRAINED] = a.drained;
	r[R_A_CHURN] = a.pass_dropped;
	for (k = 0; k < R_N; k++)
		if ((int)k != s->fault_skip)
			sum += r[k];
	if (sum != n)
		pipe_fail(p, "generated %llu != delivered %llu + dropped %llu "
			  "(%lld unaccounted%s)", (unsigned long long)n,
			  (unsigned long long)r[R_DELIVERED],
			  (unsigned long long)(sum - r[R_DELIVERED]),
			  (long long)(n - sum),
			  s->fault_skip >= 0 ? "; UXDP_SOAK_FAULT skips a "
					       "counter" : "");

	/* Each delivered packet once, and only packets G generated. */
	for (i = 0; i < (n + 63) / 64; i++)
		bits += (uint64_t)__builtin_popcountll(p->seen[i]);
	CHECK_EQ(p, "packets delivered twice", c.dup, 0);
	CHECK_EQ(p, "packets with a bad sequence number or header",
		 c.seq_bad, 0);
	CHECK_EQ(p, "distinct sequence numbers delivered = delivered", bits,
		 c.delivered - c.dup - c.seq_bad);

	for (k = 0; k < R_N; k++)
		s->reason[k] += r[k];
	s->generated += g.packets;
	s->refused_full += ta.full + tb.full;
	s->refused_down += ta.down + tb.down;
	p->generated += g.packets;
	p->delivered += c.delivered;
}

/* Every buffer of G home, none twice. G is down and nobody polls it. */
static void epoch_audit(struct soak_pipe *p)
{
	struct uxdp_pool *pool = uxdp_dev_pool(p->dev[DEV_G], 0);
	struct uxdp_buff *kept = NULL;
	struct uxdp_dev_audit au;
	int ret;

	if (p->s->fault_leak && pool) {
		uxdp_pool_set_owner(pool);
		kept = uxdp_pool_alloc(pool);
	}
	ret = uxdp_dev_audit(p->dev[DEV_G], &au);
	if (ret < 0)
		pipe_fail(p, "uxdp_dev_audit: %s", strerror(-ret));
	else if (ret || au.in_flight || au.chunks != p->cfg.frames)
		pipe_fail(p, "audit of G's buffers: %d misplaced, %u in flight, "
			  "%u of %u chunks%s", ret, au.in_flight, au.chunks,
			  p->cfg.frames,
			  kept ? " (UXDP_SOAK_FAULT=leak keeps one)" : "");
	if (kept)
		uxdp_buff_free(kept);
}

static void epoch_finish(struct soak_pipe *p)
{
	struct soak *s = p->s;
	uint64_t ns = now_ns() - p->t0_ns;
	int d;

	/* Nobody polls anything of the pipeline, then all down: the last
	 * polls have ended, and with them every bulk queue and every batch
	 * of returns they held. */
	for (d = 0; d < NDEV; d++)
		if (p->dev[d])
			poll_stop(p, d);
	for (d = 0; d < NDEV; d++)
		if (p->dev[d])
			dev_down(p, d);
	if (p->dev[DEV_G]) {
		epoch_check(p);
		epoch_audit(p);
	}
	if (s->verbose) {
		char cfg[192];

		cfg_str(p, cfg, sizeof(cfg));
		fprintf(stderr, "soak: pipeline %u epoch %u: %s: %.1f ms, "
			"%.2f Mpps, %llu delivered\n", p->id, p->epoch, cfg,
			(double)ns / 1e6, (double)p->count / ((double)ns / 1e3),
			(unsigned long long)get(&p->cnt.delivered));
	}
	for (d = 0; d < NDEV; d++) {
		uxdp_dev_destroy(p->dev[d]);
		p->dev[d] = NULL;
	}
	uxdp_poll_group_destroy(p->own);
	p->own = NULL;
	p->active = false;
	p->epochs++;
	p->busy_ns += ns;
	s->epochs++;
}

/*
 * Has the epoch ended? Every generated packet at an end, or nothing moved
 * for SOAK_STALL_NS (a lost wake-up: fail, then stop and check anyway,
 * which says where the packets were).
 */
static void epoch_poll(struct soak_pipe *p, uint64_t now)
{
	uint64_t gen = uxdp_null_generated(p->dev[DEV_G]);
	uint64_t ended = pipe_ended(p);

	if (gen >= p->count && ended >= p->count) {
		epoch_finish(p);
		return;
	}
	if (gen + ended != p->progress) {
		p->progress = gen + ended;
		p->progress_ns = now;
	} else if (now - p->progress_ns > SOAK_STALL_NS) {
		pipe_fail(p, "stalled: %llu of %llu generated, %llu ended, "
			  "nothing moved for %llu s (a poller asleep on a "
			  "ring with frames?)", (unsigned long long)gen,
			  (unsigned long long)p->count,
			  (unsigned long long)ended,
			  SOAK_STALL_NS / 1000000000ULL);
		epoch_finish(p);
	}
}

/* ---- churn --------------------------------------------------------------- */

static void window(struct soak *s)
{
	sleep_us(rnd_below(s, SOAK_WINDOW_MAX_US));
}

/* A dropping program on one device (or one queue of it), briefly. */
static int churn_badprog(struct soak_pipe *p)
{
	int d = (int)rnd_below(p->s, NDEV), err;
	uint32_t q = UXDP_ALL_QUEUES;

	if (uxdp_dev_num_rxq(p->dev[d]) > 1 && rnd_below(p->s, 2))
		q = rnd_below(p->s, uxdp_dev_num_rxq(p->dev[d]));
	err = attach(p, d, q, 2);
	if (err)
		return err;
	window(p->s);
	return attach(p, d, UXDP_ALL_QUEUES, rnd_below(p->s, 2));
}

static int churn_downup(struct soak_pipe *p, int d)
{
	int err = dev_down(p, d);

	if (err)
		return err;
	window(p->s);
	return dev_up(p, d);
}

/* Destroy the pair under traffic, one end then the other, and remake it. */
static int churn_pair(struct soak_pipe *p)
{
	int first = rnd_below(p->s, 2) ? DEV_A : DEV_B, err;

	err = end_destroy(p, first);
	if (err)
		return err;
	window(p->s);		/* the survivor transmits into nothing */
	err = end_destroy(p, first == DEV_A ? DEV_B : DEV_A);
	if (err)
		return err;
	window(p->s);		/* the slot is empty: G's redirects miss */
	return pair_create(p);
}

/*
 * Move where a device is polled: a queue to another group, a device's
 * threads to groups or back, or its threads restarted.
 */
static int churn_move(struct soak_pipe *p, enum soak_churn *kind)
{
	struct soak *s = p->s;
	int d = (int)rnd_below(s, NDEV), err = 0;
	struct uxdp_dev *dev = p->dev[d];
	uint32_t q, nq = uxdp_dev_num_rxq(dev);

	*kind = C_MOVE;
	if (p->threads[d]) {
		uxdp_dev_stop(dev);
		p->threads[d] = false;
		if (rnd_below(s, 2)) {
			*kind = C_RESTART;
			return start_threads(p, d);
		}
		for (q = 0; q < nq && !err; q++)
			err = group_add(p, d, q, pick_group(p, NULL));
		return err;
	}
	if (!rnd_below(s, 4)) {
		/* Every queue out of its group, then a thread each. */
		for (q = 0; q < nq; q++) {
			err = uxdp_poll_group_remove(p->grp[d][q], dev, q);
			if (err)
				return setup_fail(p, "uxdp_poll_group_remove",
						  err);
			p->grp[d][q] = NULL;
		}
		return start_threads(p, d);
	}
	q = rnd_below(s, nq);
	err = uxdp_poll_group_remove(p->grp[d][q], dev, q);
	if (err)
		return setup_fail(p, "uxdp_poll_group_remove", err);
	return group_add(p, d, q, pick_group(p, p->grp[d][q]));
}

static int churn(struct soak *s)
{
	struct soak_pipe *live[BENCH_SOAK_MAX_PIPES], *p;
	unsigned int n = 0, i, w;
	enum soak_churn kind;
	int err = 0, d;

	for (i = 0; i < s->npipes; i++)
		if (s->pipes[i].active)
			live[n++] = &s->pipes[i];
	if (!n)
		return 0;
	p = live[rnd_below(s, n)];
	/* Weights: program changes and moves most, whole pairs least. */
	w = rnd_below(s, 100);
	if (w < 25) {
		kind = C_SWAP;
		d = (int)rnd_below(s, NDEV);
		err = attach(p, d, UXDP_ALL_QUEUES, !p->cur[d]);
	} else if (w < 40) {
		kind = C_BADPROG;
		err = churn_badprog(p);
	} else if (w < 50) {
		kind = C_DOWNUP_A;
		err = churn_downup(p, DEV_A);
	} else if (w < 60) {
		kind = C_DOWNUP_B;
		err = churn_downup(p, DEV_B);
	} else if (w < 65) {
		kind = C_DOWNUP_G;
		err = churn_downup(p, DEV_G);
	} else if (w < 75) {
		kind = C_PAIR;
		err = churn_pair(p);
	} else if (w < 92) {
		err = churn_move(p, &kind);
	} else {
		kind = C_BULK;
		uxdp_dev_set_bulk(p->dev[DEV_A + rnd_below(s, 2)],
				  bulks[rnd_below(s, ARRAY_SIZE(bulks))]);
	}
	s->churn[kind]++;
	return err;
}

/* ---- the run ------------------------------------------------------------- */

static int pipes_init(struct soak *s)
{
	unsigned int i, d, k;

	s->pipes = calloc(s->npipes, sizeof(*s->pipes));
	if (!s->pipes)
		return -ENOMEM;
	for (i = 0; i < s->npipes; i++) {
		struct soak_pipe *p = &s->pipes[i];

		p->s = s;
		p->id = i;
		p->seen = calloc((s->chunk + 63) / 64, sizeof(uint64_t));
		if (!p->seen)
			return -ENOMEM;
		for (d = 0; d < NDEV; d++)
			for (k = 0; k < 3; k++) {
				p->prog[d][k] = uxdp_prog_create(k < 2 ? "soak" :
								 "soak_bad",
								 prog_fns[d][k],
								 p);
				if (!p->prog[d][k])
					return -errno;
			}
	}
	return 0;
}

static void pipes_fini(struct soak *s)
{
	unsigned int i, d, k;

	if (!s->pipes)
		return;
	for (i = 0; i < s->npipes; i++) {
		struct soak_pipe *p = &s->pipes[i];

		for (d = 0; d < NDEV; d++) {
			uxdp_dev_destroy(p->dev[d]);
			for (k = 0; k < 3; k++)
				uxdp_prog_put(p->prog[d][k]);
		}
		uxdp_poll_group_destroy(p->own);
		free(p->seen);
	}
	free(s->pipes);
}

static uint64_t live_ended(const struct soak *s, uint64_t *gen)
{
	uint64_t ended = 0;
	unsigned int i, k;

	*gen = s->generated;
	for (k = 0; k < R_N; k++)
		ended += s->reason[k];
	for (i = 0; i < s->npipes; i++) {
		const struct soak_pipe *p = &s->pipes[i];

		if (!p->active || !p->dev[DEV_G])
			continue;
		*gen += uxdp_null_generated(p->dev[DEV_G]);
		ended += pipe_ended(p);
	}
	return ended;
}

static uint64_t churn_total(const struct soak *s)
{
	uint64_t n = 0;
	unsigned int k;

	for (k = 0; k < C_N; k++)
		n += s->churn[k];
	return n;
}

static void progress(const struct soak *s, uint64_t t0, uint64_t now)
{
	uint64_t gen, ended = live_ended(s, &gen);
	double secs = (double)(now - t0) / 1e9;

	bench_progress(s->o->quiet, "soak: %6.1f s  %.1fM of %.1fM generated, "
		       "%.1fM ended, %.2f Mpps, %llu epochs, %llu churn "
		       "events%s\n", secs, mega(gen), mega(s->total),
		       mega(ended), secs > 0 ? mega(gen) / secs : 0.0,
		       (unsigned long long)s->epochs,
		       (unsigned long long)churn_total(s),
		       s->failures ? ", FAILED" : "");
}

/* The loop: epochs start and end, churn at random intervals. */
static void soak_loop(struct soak *s, uint64_t t0)
{
	uint64_t deadline = s->o->duration ?
			    t0 + (uint64_t)s->o->duration * 1000000000ULL : 0;
	uint64_t next_churn = t0, next_progress = t0 + 1000000000ULL, now;
	unsigned int i, busy;

	for (;;) {
		now = now_ns();
		if (deadline && now >= deadline && !s->stop) {
			s->stop = true;
			s->timed_out = true;
		}
		if (s->fatal)
			break;
		busy = 0;
		for (i = 0; i < s->npipes && !s->fatal; i++) {
			struct soak_pipe *p = &s->pipes[i];

			if (p->active)
				epoch_poll(p, now);
			if (!p->active && !s->stop && s->remaining &&
			    !s->fatal)
				epoch_start(p);
			busy += p->active;
		}
		if (!busy || s->fatal)
			break;
		if (now >= next_churn) {
			if (churn(s))
				break;
			next_churn = now_ns() +
				     rnd_below(s, SOAK_CHURN_MAX_US) * 1000ULL;
		}
		if (now >= next_progress) {
			progress(s, t0, now);
			next_progress += 1000000000ULL;
		}
		sleep_us(SOAK_TICK_US);
	}
}

static void parse_fault(struct soak *s)
{
	const char *f = getenv("UXDP_SOAK_FAULT");
	unsigned int k;

	s->fault_skip = -1;
	if (!f || !*f)
		return;
	if (!strcmp(f, "leak")) {
		s->fault_leak = true;
		return;
	}
	for (k = 0; k < R_N; k++)
		if (!strncmp(f, "skip:", 5) && !strcmp(f + 5, reason_keys[k]))
			s->fault_skip = (int)k;
	if (s->fault_skip < 0)
		fprintf(stderr, "uxdp-bench: soak: UXDP_SOAK_FAULT=%s not "
			"understood (leak, or skip:REASON)\n", f);
}

/* ---- the report ---------------------------------------------------------- */

static void cover_text(const struct soak *s)
{
	char buf[512];
	size_t off = 0;
	unsigned int i;

#define COVER(fmt, ...)							\
	do {								\
		int n_ = snprintf(buf + off, sizeof(buf) - off, fmt,	\
				  __VA_ARGS__);				\
		if (n_ > 0 && (size_t)n_ < sizeof(buf) - off)		\
			off += (size_t)n_;				\
	} while (0)
	COVER("%s", "epochs by ring");
	for (i = 0; i < ARRAY_SIZE(rings); i++)
		COVER(" %u:%llu", rings[i],
		      (unsigned long long)s->cover_ring[i]);
	COVER("%s", "; budget");
	for (i = 0; i < ARRAY_SIZE(budgets); i++)
		COVER(" %d:%llu", budgets[i],
		      (unsigned long long)s->cover_budget[i]);
	COVER("%s", "; bulk");
	for (i = 0; i < ARRAY_SIZE(bulks); i++)
		COVER(" %u:%llu", bulks[i],
		      (unsigned long long)s->cover_bulk[i]);
	COVER("%s", "; polling");
	for (i = 0; i < MODE_N; i++)
		COVER(" %s:%llu", mode_names[i],
		      (unsigned long long)s->cover_mode[i]);
	COVER("; queues 1:%llu 2:%llu", (unsigned long long)s->cover_q[0],
	      (unsigned long long)s->cover_q[1]);
	COVER("; paced generator %llu", (unsigned long long)s->cover_paced);
#undef COVER
	report_note("soak", "%s", buf);
}

/* The drop table's figures exactly, by the names UXDP_SOAK_FAULT takes. */
static void exact_text(const struct soak *s)
{
	char buf[512];
	size_t off = 0;
	unsigned int k;
	int n;

	for (k = 0; k < R_N && off < sizeof(buf); k++) {
		n = snprintf(buf + off, sizeof(buf) - off, "%s%s %llu",
			     k ? ", " : "", reason_keys[k],
			     (unsigned long long)s->reason[k]);
		if (n > 0)
			off += (size_t)n;
	}
	report_note("soak", "exactly: generated %llu = %s",
		    (unsigned long long)s->generated, buf);
}

static void soak_report(struct soak *s, double secs)
{
	struct report_row *row;
	uint64_t dropped = 0;
	unsigned int k, i;
	const char *verdict = s->failures ? "FAIL" : "PASS";

	for (k = 1; k < R_N; k++)
		dropped += s->reason[k];
	row = report_add("soak", "generated", "all", mega(s->generated), NAN,
			 "Mpkt");
	report_summarise(row);
	row = report_add("soak", "delivered", "all",
			 mega(s->reason[R_DELIVERED]), NAN, "Mpkt");
	report_summarise(row);
	row = report_add("soak", "dropped, counted", "all", mega(dropped), NAN,
			 "Mpkt");
	report_summarise(row);
	for (k = 1; k < R_N; k++)
		report_add("soak", reason_text[k], "dropped",
			   mega(s->reason[k]), NAN, "Mpkt");
	row = report_add("soak", "rate (generated / wall time)", "all",
			 secs > 0 ? mega(s->generated) / secs : NAN, NAN,
			 "Mpps");
	report_row_note(row, "%.1f s, %u pipelines, 2 shared poll groups",
			secs, s->npipes);
	report_summarise(row);
	for (i = 0; i < s->npipes; i++) {
		struct soak_pipe *p = &s->pipes[i];
		char name[32];

		snprintf(name, sizeof(name), "pipeline %u (%llu epochs)", i,
			 (unsigned long long)p->epochs);
		row = report_add("soak", name, p->failures ? "FAIL" : "PASS",
				 mega(p->generated), NAN, "Mpkt");
		report_part(row, "delivered", mega(p->delivered));
		report_part(row, "Mpps", p->busy_ns ?
			    (double)p->generated * 1e3 / (double)p->busy_ns :
			    NAN);
	}
	for (k = 0; k < C_N; k++)
		report_add("soak", churn_text[k], "churn", (double)s->churn[k],
			   NAN, "events");
	row = report_add("soak", "checks failed", verdict,
			 (double)s->failures, NAN, "count");
	report_summarise(row);
	cover_text(s);
	exact_text(s);
	report_note("soak", "transmit refusals by reason: %llu ring full, "
		    "%llu device or peer down/destroyed (A's refusals after "
		    "its counters were read are not in these)",
		    (unsigned long long)s->refused_full,
		    (unsigned long long)s->refused_down);
	if (s->timed_out)
		report_warn("soak", "--duration reached: %llu of %llu packets "
			    "generated (the checks hold for those)",
			    (unsigned long long)s->generated,
			    (unsigned long long)s->total);
	report_text("soak: %s: generated %llu = delivered %llu + dropped "
		    "%llu (counted by reason)%s; %llu epochs, G's buffers "
		    "audited after each; %llu churn events; seed %llu",
		    verdict, (unsigned long long)s->generated,
		    (unsigned long long)s->reason[R_DELIVERED],
		    (unsigned long long)dropped,
		    s->generated == s->reason[R_DELIVERED] + dropped ? "" :
		    " MISMATCH", (unsigned long long)s->epochs,
		    (unsigned long long)churn_total(s),
		    (unsigned long long)s->seed);
	report_env_str("soak_result", "%s", verdict);
	report_env_str("soak_seed", "%llu", (unsigned long long)s->seed);
	report_env_str("soak_generated", "%llu",
		       (unsigned long long)s->generated);
	report_env_str("soak_delivered", "%llu",
		       (unsigned long long)s->reason[R_DELIVERED]);
	report_env_str("soak_dropped", "%llu", (unsigned long long)dropped);
	report_env_num("soak_failures", s->failures);
}

int bench_soak(const struct bench_opts *o)
{
	struct soak s = { .o = o };
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po, .idle_us = 30000000);
	uint64_t t0;
	unsigned int i;
	int err;

	s.seed = o->seed ? o->seed : (now_ns() ^ ((uint64_t)getpid() << 32));
	s.rng = s.seed;
	s.total = s.remaining = o->ops ? o->ops : BENCH_SOAK_DEFAULT_OPS;
	s.npipes = o->pipelines ? o->pipelines : BENCH_SOAK_DEFAULT_PIPES;
	if (s.npipes > BENCH_SOAK_MAX_PIPES)
		s.npipes = BENCH_SOAK_MAX_PIPES;
	/* About eight epochs per pipeline for the fast configurations. */
	s.chunk = s.total / (s.npipes * 8ULL);
	s.chunk = s.chunk < SOAK_CHUNK_MIN ? SOAK_CHUNK_MIN :
		  s.chunk > SOAK_CHUNK_MAX ? SOAK_CHUNK_MAX : s.chunk;
	s.verbose = getenv("UXDP_SOAK_VERBOSE") != NULL;
	parse_fault(&s);

	report_heading("soak: %u pipelines G -> A -> B -> A under churn, "
		       "%llu packets, seed %llu", s.npipes,
		       (unsigned long long)s.total,
		       (unsigned long long)s.seed);
	s.map = uxdp_map_create(s.npipes);
	err = s.map ? pipes_init(&s) : -errno;
	for (i = 0; i < SOAK_NSHARED && !err; i++) {
		po.budget = budgets[rnd_below(&s, ARRAY_SIZE(budgets))];
		s.shared_budget[i] = po.budget;
		s.shared[i] = uxdp_poll_group_create(&po);
		err = s.shared[i] ? uxdp_poll_group_start(s.shared[i]) : -errno;
	}
	if (err) {
		bench_fail("soak", "set-up: %s (%s)", strerror(-err),
			   uxdp_errmsg());
		s.failures++;
		goto out;
	}
	report_text("soak: shared poll groups' budgets %d and %d; churn every "
		    "0-%u ms; stall limit %llu s", s.shared_budget[0],
		    s.shared_budget[1], SOAK_CHURN_MAX_US / 1000,
		    SOAK_STALL_NS / 1000000000ULL);
	report_flush();

	t0 = now_ns();
	soak_loop(&s, t0);
	progress(&s, t0, now_ns());
	soak_report(&s, (double)(now_ns() - t0) / 1e9);
	if (s.failures)
		fprintf(stderr, "uxdp-bench: soak: %u check%s failed; seed "
			"%llu (--seed %llu repeats its configurations and "
			"churn)\n", s.failures, s.failures == 1 ? "" : "s",
			(unsigned long long)s.seed,
			(unsigned long long)s.seed);
out:
	/* Whatever is left (a failed set-up), then the shared groups. */
	pipes_fini(&s);
	for (i = 0; i < SOAK_NSHARED; i++)
		uxdp_poll_group_destroy(s.shared[i]);
	uxdp_map_destroy(s.map);
	report_flush();
	return s.failures ? 1 : 0;
}
