/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench pool: what batched Rx allocation saves per buffer, aligned vs
 * unaligned UMEM (the shape of the seed's table), and the pool's free-list
 * path against DPDK's rte_mempool.
 *
 * Work is done in rounds of ROUND buffers, a NAPI budget: whatever the
 * allocation call, the driver refills ROUND buffers per poll, so the only
 * thing that changes between variants is how the pool is asked for them.
 *
 *   rx-to-user  the application posts ROUND addresses on the fill ring
 *               (reserve/write/submit); the driver allocates them (one
 *               uxdp_pool_alloc() per buffer, or uxdp_pool_alloc_batch()
 *               of 1..64); it sets each buffer's size when "the packet
 *               arrives" (uxdp_buff_set_size() after a batch allocation;
 *               after a single one, which already set data, only data_end
 *               as drivers did before the batch API); then it hands each
 *               buffer to the application with uxdp_pool_release(), which
 *               re-posts the address next round: every buffer takes the
 *               fill-queue path. This is the seed's rxdrop-over-AF_XDP
 *               buffer life.
 *   drop        the same, but buffers go back with uxdp_buff_free() (single)
 *               or uxdp_pool_free_batch(): allocation is then served from
 *               the free list, the XDP_DROP life.
 *   drop-bare   drop without set_size: pure free-list get and put, the
 *               like-for-like of rte_mempool get/put.
 *
 * Each run times the whole loop once (the total), then runs it again with
 * a stamp between phases (post / alloc / set_size+return) per round, never
 * per buffer. Phase figures have the cost of one stamp subtracted; the
 * stamps also serialise the phases, so they need not add up to the total.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/pool.h>
#include <uxdp/umem.h>

#include "bench.h"
#include "plot.h"
#include "dpdk_peer.h"
#include "instr.h"
#include "report.h"

#define ROUND		64	/* buffers per round: a NAPI budget */
#define PKT_LEN		64	/* every "received" packet */
#define DPDK_CACHE	256	/* rte_mempool per-lcore cache */

enum pool_cycle {
	CYCLE_RX,	/* rx-to-user: release, re-post, fill-queue path */
	CYCLE_DROP,	/* free, free-list path */
	CYCLE_BARE,	/* drop without set_size */
	CYCLE_DPDK,	/* rte_mempool get + put */
};

static const char *const cycle_names[] = {
	[CYCLE_RX] = "rx-to-user",
	[CYCLE_DROP] = "drop",
	[CYCLE_BARE] = "drop-bare",
	[CYCLE_DPDK] = "get+put",
};

/* Metrics of one run, ticks per buffer. */
enum {
	M_TOTAL,
	M_ALLOC,
	M_POST,
	M_RETURN,	/* set_size + release / free */
};

/* 0 is "single": uxdp_pool_alloc(), one call per buffer. */
static const volatile uint32_t batch_sizes[] = { 0, 1, 8, 16, 32, 64 };
#define NBATCH		6
static const uint32_t dpdk_bulks[] = { 1, 8, 32, 64 };
#define NDPDK		4

/* One UMEM + pool, and the application's side of it. */
struct pool_mode {
	bool unaligned;
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	struct uxdp_ring *fq;		/* the application's fill handle */
	uint64_t *app_q;		/* addresses the application holds */
	uint32_t app_mask;
	uint32_t app_head;		/* next to post */
	uint32_t app_tail;		/* next free slot */
	uint32_t frames;
};

struct pool_case {
	struct pool_mode *m;
	struct dpdk_mempool *dm;
	enum pool_cycle cycle;
	uint32_t batch;			/* 0: single */
	char label[64];
};

/* ---- the application ----------------------------------------------------- */

static inline int app_post(struct pool_mode *m, uint32_t n)
{
	uint32_t idx, i;

	if (uxdp_ring_prod_reserve(m->fq, n, &idx) != n)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(m->fq, idx + i) =
			m->app_q[m->app_head++ & m->app_mask];
	uxdp_ring_prod_submit(m->fq, n);
	return 0;
}

/* ---- the driver ---------------------------------------------------------- */

static inline int drv_alloc(struct uxdp_pool *p, struct uxdp_buff **bufs,
			    uint32_t batch, uint32_t n)
{
	uint32_t got, k;

	if (!batch) {
		for (got = 0; got < n; got++) {
			bufs[got] = uxdp_pool_alloc(p);
			if (!bufs[got])
				return -ENOBUFS;
		}
		return 0;
	}
	for (got = 0; got < n; got += k) {
		k = uxdp_pool_alloc_batch(p, bufs + got,
					  n - got < batch ? n - got : batch);
		if (!k)
			return -ENOBUFS;
	}
	return 0;
}

/* "A packet of PKT_LEN bytes arrived in each buffer." */
static inline void drv_set_size(struct uxdp_buff **bufs, uint32_t batch,
				uint32_t n, uint32_t len)
{
	uint32_t i;

	if (batch) {
		for (i = 0; i < n; i++)
			uxdp_buff_set_size(bufs[i], len);
		return;
	}
	/* uxdp_pool_alloc() already set data: only the end is new. */
	for (i = 0; i < n; i++)
		bufs[i]->data_end = (char *)bufs[i]->data + len;
}

static inline int drv_release(struct pool_mode *m, struct uxdp_buff **bufs,
			      uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t addr = uxdp_pool_release(bufs[i]);

		if (addr == UINT64_MAX)
			return -EIO;
		m->app_q[m->app_tail++ & m->app_mask] = addr;
	}
	return 0;
}

static inline void drv_free(struct uxdp_pool *p, struct uxdp_buff **bufs,
			    uint32_t batch, uint32_t n)
{
	uint32_t j;

	if (!batch) {
		for (j = 0; j < n; j++)
			uxdp_buff_free(bufs[j]);
		return;
	}
	for (j = 0; j < n; j += batch)
		uxdp_pool_free_batch(p, bufs + j,
				     n - j < batch ? n - j : batch);
}

/* ---- the cycles ---------------------------------------------------------- */

/*
 * @rounds of the rx-to-user cycle, unstamped. @alloc: the allocation
 * step (drv_alloc, or --instructions' out-of-line copy of it).
 */
static inline __attribute__((always_inline)) int
rx_rounds(struct pool_mode *m, uint32_t batch, uint32_t len, uint64_t rounds,
	  int (*alloc)(struct uxdp_pool *, struct uxdp_buff **, uint32_t,
		       uint32_t))
{
	struct uxdp_buff *bufs[ROUND];
	uint64_t r;
	int err;

	for (r = 0; r < rounds; r++) {
		err = app_post(m, ROUND);
		if (!err)
			err = alloc(m->pool, bufs, batch, ROUND);
		if (err)
			return err;
		drv_set_size(bufs, batch, ROUND, len);
		err = drv_release(m, bufs, ROUND);
		if (err)
			return err;
	}
	return 0;
}

static int run_rx(struct pool_case *c, uint32_t batch, uint64_t rounds,
		  uint64_t *ph)
{
	struct pool_mode *m = c->m;
	struct uxdp_buff *bufs[ROUND];
	uint32_t len = bench_opaque_u32(PKT_LEN);
	uint64_t r, t0, t1, s0, s1, s2, s3;
	int err;

	t0 = bench_tsc_begin();
	err = rx_rounds(m, batch, len, rounds, drv_alloc);
	if (err)
		return err;
	t1 = bench_tsc_end();
	ph[M_TOTAL] = t1 - t0;

	s0 = bench_tsc_end();
	for (r = 0; r < rounds; r++) {
		err = app_post(m, ROUND);
		s1 = bench_tsc_end();
		if (!err)
			err = drv_alloc(m->pool, bufs, batch, ROUND);
		s2 = bench_tsc_end();
		if (err)
			return err;
		drv_set_size(bufs, batch, ROUND, len);
		err = drv_release(m, bufs, ROUND);
		s3 = bench_tsc_end();
		if (err)
			return err;
		ph[M_POST] += s1 - s0;
		ph[M_ALLOC] += s2 - s1;
		ph[M_RETURN] += s3 - s2;
		s0 = s3;
	}
	return 0;
}

/* Give the buffers parked on the free list back to the application. */
static int drain_free_list(struct pool_mode *m)
{
	struct uxdp_buff *bufs[ROUND];
	struct uxdp_pool_stats st;
	uint32_t n;

	for (;;) {
		if (uxdp_pool_stats(m->pool, &st))
			return -EINVAL;
		if (!st.free_list)
			return 0;
		n = st.free_list < ROUND ? st.free_list : ROUND;
		if (drv_alloc(m->pool, bufs, n, n))
			return -ENOBUFS;
		/* A batch allocation leaves data unset; release reads it. */
		drv_set_size(bufs, 1, n, 0);
		if (drv_release(m, bufs, n))
			return -EIO;
	}
}

static int run_drop(struct pool_case *c, uint32_t batch, uint64_t rounds,
		    uint64_t *ph)
{
	bool sized = c->cycle == CYCLE_DROP;
	struct pool_mode *m = c->m;
	struct uxdp_buff *bufs[ROUND];
	uint32_t len = bench_opaque_u32(PKT_LEN);
	uint64_t r, t0, t1, s0, s1, s2;
	int err;

	/* One round's worth on the fill ring; from then on the free list. */
	err = app_post(m, ROUND);
	if (err)
		return err;
	t0 = bench_tsc_begin();
	for (r = 0; r < rounds; r++) {
		err = drv_alloc(m->pool, bufs, batch, ROUND);
		if (err)
			return err;
		if (sized)
			drv_set_size(bufs, batch, ROUND, len);
		drv_free(m->pool, bufs, batch, ROUND);
	}
	t1 = bench_tsc_end();
	ph[M_TOTAL] = t1 - t0;

	s0 = bench_tsc_end();
	for (r = 0; r < rounds; r++) {
		err = drv_alloc(m->pool, bufs, batch, ROUND);
		s1 = bench_tsc_end();
		if (err)
			return err;
		if (sized)
			drv_set_size(bufs, batch, ROUND, len);
		drv_free(m->pool, bufs, batch, ROUND);
		s2 = bench_tsc_end();
		ph[M_ALLOC] += s1 - s0;
		ph[M_RETURN] += s2 - s1;
		s0 = s2;
	}
	return drain_free_list(m);
}

/* Every buffer must be back with the application after each run. */
static int check_quiescent(struct pool_mode *m)
{
	struct uxdp_pool_stats st;

	if (uxdp_pool_stats(m->pool, &st))
		return -EINVAL;
	if (st.outstanding || st.free_list || st.fill_invalid ||
	    st.fill_dup || st.bad_free ||
	    m->app_tail - m->app_head != m->frames) {
		fprintf(stderr,
			"uxdp-bench: pool accounting off after a run: "
			"outstanding %u, free_list %u, fill_invalid %llu, "
			"fill_dup %llu, bad_free %llu, app holds %u of %u\n",
			st.outstanding, st.free_list,
			(unsigned long long)st.fill_invalid,
			(unsigned long long)st.fill_dup,
			(unsigned long long)st.bad_free,
			m->app_tail - m->app_head, m->frames);
		return -EIO;
	}
	return 0;
}

static int pool_case_run(void *arg, uint64_t ops, double *out)
{
	struct pool_case *c = arg;
	uint64_t rounds = ops / ROUND ? ops / ROUND : 1;
	uint64_t ph[4] = { 0 };
	double bufs = (double)(rounds * ROUND);
	double stamps = (double)rounds * bench_env.stamp_cost;
	uint32_t batch = bench_opaque_u32(c->batch);
	int err;

	switch (c->cycle) {
	case CYCLE_RX:
		err = run_rx(c, batch, rounds, ph);
		break;
	case CYCLE_DROP:
	case CYCLE_BARE:
		err = run_drop(c, batch, rounds, ph);
		break;
	case CYCLE_DPDK:
		err = dpdk_mempool_cycle(c->dm, batch, ROUND, rounds,
					 &ph[M_TOTAL]);
		out[M_TOTAL] = (double)ph[M_TOTAL] / bufs;
		return err;
	default:
		return -EINVAL;
	}
	if (!err)
		err = check_quiescent(c->m);
	if (err)
		return err;
	out[M_TOTAL] = (double)ph[M_TOTAL] / bufs;
	out[M_ALLOC] = ((double)ph[M_ALLOC] - stamps) / bufs;
	out[M_RETURN] = ((double)ph[M_RETURN] - stamps) / bufs;
	if (c->cycle == CYCLE_RX)
		out[M_POST] = ((double)ph[M_POST] - stamps) / bufs;
	return 0;
}

/* ---- setup --------------------------------------------------------------- */

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int mode_setup(struct pool_mode *m, bool unaligned, uint32_t frames,
		      uint32_t chunk)
{
	/* The fill ring can hold every chunk, as a real application sizes
	 * it, so posting never fails for want of room. */
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo,
		.chunk_size = chunk,
		.flags = unaligned ? UXDP_UMEM_F_UNALIGNED : 0,
		.fill_size = pow2_at_least(frames),
	);
	uint32_t i;

	m->unaligned = unaligned;
	m->frames = frames;
	m->umem = uxdp_umem_create(NULL, (uint64_t)frames * chunk, &uo);
	if (!m->umem) {
		fprintf(stderr, "uxdp-bench: uxdp_umem_create: %s\n",
			uxdp_errmsg());
		return -1;
	}
	m->pool = uxdp_pool_create(m->umem, NULL);
	if (!m->pool) {
		fprintf(stderr, "uxdp-bench: uxdp_pool_create: %s\n",
			uxdp_errmsg());
		return -1;
	}
	m->fq = uxdp_umem_fill_ring(m->umem);
	m->app_mask = pow2_at_least(frames) - 1;
	m->app_q = calloc((size_t)m->app_mask + 1, sizeof(*m->app_q));
	if (!m->app_q)
		return -1;
	for (i = 0; i < frames; i++)
		m->app_q[i] = (uint64_t)i * chunk;
	m->app_head = 0;
	m->app_tail = frames;
	return 0;
}

static void mode_teardown(struct pool_mode *m)
{
	if (m->pool && uxdp_pool_destroy(m->pool))
		fprintf(stderr, "uxdp-bench: uxdp_pool_destroy: %s\n",
			uxdp_errmsg());
	if (m->umem)
		uxdp_umem_destroy(m->umem);
	free(m->app_q);
}

static const char *kind_name(uint32_t batch, char *buf, size_t len)
{
	if (!batch)
		snprintf(buf, len, "single");
	else
		snprintf(buf, len, "batch=%u", batch);
	return buf;
}

/* ---- --instructions: the child ------------------------------------------ */

/*
 * What callgrind collects in passes 1 and 2 (--toggle-collect=
 * bench_instr_pool_cycle*): the whole rx-to-user cycle, as run_rx's
 * unstamped loop.
 */
INSTR_LOOP int bench_instr_pool_cycle(struct pool_mode *m, uint32_t batch,
				      uint32_t len, uint64_t rounds);
INSTR_LOOP int bench_instr_pool_cycle(struct pool_mode *m, uint32_t batch,
				      uint32_t len, uint64_t rounds)
{
	return rx_rounds(m, batch, len, rounds, drv_alloc);
}

/*
 * Passes 3 and 4 (bench_instr_pool_alloc*): the allocation step alone,
 * as the phase stamps of run_rx bracket it, plus this function's own
 * call and return once per round of ROUND buffers.
 */
INSTR_LOOP int bench_instr_pool_alloc(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t batch,
				      uint32_t n);
INSTR_LOOP int bench_instr_pool_alloc(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t batch,
				      uint32_t n)
{
	return drv_alloc(p, bufs, batch, n);
}

static int pool_instr_alloc_pass(struct pool_mode *m, uint32_t batch,
				 uint32_t len, uint64_t rounds)
{
	return rx_rounds(m, batch, len, rounds, bench_instr_pool_alloc);
}

/*
 * uxdp-bench __instr pool aligned|unaligned single|batch=N BUFFERS FRAMES
 * CHUNK: the rx-to-user cycle counted over BUFFERS then 2 x BUFFERS, the
 * whole cycle and the allocation step (xsk_instr_child's scheme).
 */
int pool_instr_child(int argc, char **argv)
{
	struct pool_mode m = { 0 };
	uint64_t n = 0, rounds, units[4];
	uint32_t len = bench_opaque_u32(PKT_LEN), batch = 0, frames = 0;
	uint32_t chunk = 0;
	const char *what = "set-up";
	int err = -EINVAL;

	if (argc == 5) {
		n = instr_arg_u64(argv[2]);
		frames = (uint32_t)instr_arg_u64(argv[3]);
		chunk = (uint32_t)instr_arg_u64(argv[4]);
		if (!strncmp(argv[1], "batch=", 6))
			batch = (uint32_t)instr_arg_u64(argv[1] + 6);
	}
	if (n < ROUND || frames < 2 * ROUND || frames > (1U << 20) ||
	    (chunk != 2048 && chunk != 4096) ||
	    (strcmp(argv[0], "aligned") && strcmp(argv[0], "unaligned")) ||
	    (strcmp(argv[1], "single") && (!batch || batch > ROUND))) {
		fprintf(stderr, "usage: uxdp-bench " INSTR_CHILD_ARG " pool "
			"aligned|unaligned single|batch=1..%u BUFFERS FRAMES "
			"2048|4096\n", ROUND);
		return 2;
	}
	rounds = n / ROUND;
	if (mode_setup(&m, !strcmp(argv[0], "unaligned"), frames, chunk))
		goto out;
	/* Uncounted: every chunk round the fill ring twice. */
	what = "warm-up";
	err = bench_instr_pool_cycle(&m, batch, len, 2 * frames / ROUND);
	if (err)
		goto out;
	what = "counted passes";
	INSTR_START();
	err = bench_instr_pool_cycle(&m, batch, len, rounds);
	INSTR_DUMP("cycle N");
	if (!err)
		err = bench_instr_pool_cycle(&m, batch, len, 2 * rounds);
	INSTR_DUMP("cycle 2N");
	if (!err)
		err = pool_instr_alloc_pass(&m, batch, len, rounds);
	INSTR_DUMP("alloc N");
	if (!err)
		err = pool_instr_alloc_pass(&m, batch, len, 2 * rounds);
	INSTR_DUMP("alloc 2N");
	INSTR_STOP();
	if (!err) {
		what = "accounting";
		err = check_quiescent(&m);
	}
	if (!err) {
		units[0] = units[2] = rounds * ROUND;
		units[1] = units[3] = 2 * rounds * ROUND;
		instr_child_units(units, 4);
	}
out:
	if (err)
		fprintf(stderr, "uxdp-bench " INSTR_CHILD_ARG " pool %s %s: "
			"%s: %s\n", argv[0], argv[1], what, strerror(-err));
	mode_teardown(&m);
	return err ? 1 : 0;
}

/* ---- --instructions: the parent ----------------------------------------- */

enum {
	MI_TOTAL,	/* instructions per buffer, the whole cycle */
	MI_ALLOC,	/* the allocation step alone */
	MI_N,
};

struct pool_instr {
	struct instr_variant iv;	/* first: bench_variant.arg */
	char label[64];
	char kind[16], n[24], frames[16], chunk[16];
	bool unaligned;
	uint32_t batch;
};

static int pool_instr_figures(const struct instr_variant *iv,
			      const struct instr_counts *c, double *out)
{
	out[MI_TOTAL] = instr_per_unit(c, 0, 1);
	out[MI_ALLOC] = instr_per_unit(c, 2, 3);
	(void)iv;
	if (!(out[MI_TOTAL] > 0) || !(out[MI_ALLOC] > 0)) {
		bench_why("nothing counted in bench_instr_pool_cycle or "
			  "bench_instr_pool_alloc (%llu, %llu instructions): a "
			  "stripped binary?", (unsigned long long)c->ir[1],
			  (unsigned long long)c->ir[3]);
		return -EPROTO;
	}
	return 0;
}

/*
 * The rx-to-user cycle's four seed variants (single and batch 64, aligned
 * and unaligned) counted by callgrind. Returns the failed variants.
 */
static unsigned int pool_instructions(const struct bench_opts *o,
				      uint32_t frames, uint32_t chunk)
{
	struct pool_instr pi[4];
	struct bench_variant v[4];
	unsigned int i, j, failed;
	struct report_row *row;

	if (!instr_ready()) {
		report_warn("pool", "instructions per buffer skipped: %s",
			    instr_status());
		return 0;
	}
	for (i = 0; i < 4; i++) {
		struct pool_instr *x = &pi[i];

		memset(x, 0, sizeof(*x));
		x->unaligned = i >= 2;
		x->batch = i & 1 ? ROUND : 0;
		if (x->batch)
			snprintf(x->kind, sizeof(x->kind), "batch=%u",
				 x->batch);
		else
			snprintf(x->kind, sizeof(x->kind), "single");
		snprintf(x->label, sizeof(x->label), "pool instructions %s %s",
			 x->unaligned ? "unaligned" : "aligned", x->kind);
		snprintf(x->n, sizeof(x->n), "%llu",
			 (unsigned long long)BENCH_POOL_INSTR_OPS);
		snprintf(x->frames, sizeof(x->frames), "%u", frames);
		snprintf(x->chunk, sizeof(x->chunk), "%u", chunk);
		x->iv.job = (struct instr_job){
			.group = "pool",
			.args = { x->unaligned ? "unaligned" : "aligned",
				  x->kind, x->n, x->frames, x->chunk },
			.toggle = { "bench_instr_pool_cycle*",
				    "bench_instr_pool_alloc*" },
			.ndumps = 4,
		};
		x->iv.figures = pool_instr_figures;
		instr_variant_init(&v[i], &x->iv, x->label,
				   BENCH_POOL_INSTR_OPS, MI_N);
	}
	failed = instr_measure(v, 4, o, "pool");

	report_heading("pool: instructions per buffer (callgrind), rx-to-user "
		       "cycle");
	for (i = 0; i < 4; i++) {
		char name[64];

		snprintf(name, sizeof(name), "instr rx-to-user %-9s %-8s",
			 pi[i].unaligned ? "unaligned" : "aligned",
			 pi[i].kind);
		row = report_add("pool", name, "uxdp",
				 instr_median(&v[i], MI_TOTAL),
				 instr_min(&v[i], MI_TOTAL), "instr/buf");
		report_part(row, "alloc", instr_median(&v[i], MI_ALLOC));
		report_part(row, "spread", instr_spread(&v[i], MI_TOTAL));
	}
	for (j = 0; j < 2; j++) {
		const char *mode = j ? "unaligned" : "aligned  ";
		double st = instr_median(&v[2 * j], MI_TOTAL);
		double bt = instr_median(&v[2 * j + 1], MI_TOTAL);
		double sa = instr_median(&v[2 * j], MI_ALLOC);
		double ba = instr_median(&v[2 * j + 1], MI_ALLOC);
		char name[64];

		snprintf(name, sizeof(name), "instr %s saved single->batch64 "
			 "alloc", mode);
		row = report_add("pool", name, "uxdp", ba - sa, NAN,
				 "instr/buf");
		report_part(row, "total", bt - st);
		report_seed(row, j ? "-1 cyc/pkt" : "-9 cyc/pkt");
		report_summarise(row);
		snprintf(name, sizeof(name), "instr %s batch64/single alloc",
			 mode);
		row = report_add("pool", name, "uxdp", ba / sa, NAN, "x");
		report_part(row, "total", bt / st);
		report_summarise(row);
	}
	/*
	 * The seed's split of the aligned gain (report_seed_rows), from
	 * counts: batching measured in unaligned mode, the rest credited to
	 * the pre-initialised heads.
	 */
	{
		double us = instr_median(&v[2], MI_TOTAL), ub = instr_median(&v[3], MI_TOTAL);
		double ab = instr_median(&v[1], MI_TOTAL), gain = us - ab;

		/* No gain (or none measured): no split. */
		if (!(gain > 0))
			gain = NAN;
		row = report_add("pool", "instr aligned gain share: batching",
				 "estimate", 100.0 * (us - ub) / gain, NAN,
				 "%");
		report_seed(row, "~40%%");
		if (!isnan(gain))
			report_row_note(row, "unaligned single -> aligned "
					"batch64 = %.2f instr/buf", -gain);
		report_summarise(row);
		row = report_add("pool", "instr aligned gain share: pre-init "
				 "heads", "estimate", 100.0 * (ub - ab) / gain,
				 NAN, "%");
		report_seed(row, "~60%%");
		report_summarise(row);
	}
	report_note("pool", "instructions: %s; each variant in a process of "
		    "its own under callgrind (%u each), set-up and two laps "
		    "of the UMEM uncounted, then %llu and %llu buffers of the "
		    "rx-to-user cycle counted: per buffer = the difference / "
		    "%llu. Whole cycle = run_rx's loop without its stamps; "
		    "alloc = the step its alloc phase times (the driver's "
		    "allocation, single or batch, called out of line: one "
		    "call and return per round of %u more)", instr_status(),
		    v[0].nsamples, (unsigned long long)BENCH_POOL_INSTR_OPS,
		    (unsigned long long)(2 * BENCH_POOL_INSTR_OPS),
		    (unsigned long long)BENCH_POOL_INSTR_OPS, ROUND);
	report_target("pool", "aligned alloc_batch(64)/single, alloc phase, "
		      "instructions", instr_median(&v[1], MI_ALLOC) /
		      instr_median(&v[0], MI_ALLOC), 0.5,
		      "%.2f vs %.2f instr/buf (counted, not timed)",
		      instr_median(&v[1], MI_ALLOC), instr_median(&v[0], MI_ALLOC));
	bench_variants_free(v, 4);
	return failed;
}

/* ---- reporting ----------------------------------------------------------- */

static struct bench_variant *find(struct bench_variant *v, unsigned int nv,
				  enum pool_cycle cycle, int unaligned,
				  uint32_t batch)
{
	unsigned int i;

	for (i = 0; i < nv; i++) {
		struct pool_case *c = v[i].arg;

		if (c->cycle != cycle || c->batch != batch)
			continue;
		if (cycle == CYCLE_DPDK || c->m->unaligned == unaligned)
			return &v[i];
	}
	return NULL;
}

static double med(struct bench_variant *v, unsigned int metric)
{
	return v ? bench_median(v, metric) : NAN;
}

/* a/b run by run (see bench_paired_ratio), NAN if either is missing. */
static double paired(struct bench_variant *a, struct bench_variant *b,
		     unsigned int metric)
{
	return a && b ? bench_paired_ratio(a, b, metric) : NAN;
}

static void report_uxdp_rows(struct bench_variant *v, unsigned int nv,
			     enum pool_cycle cycle)
{
	unsigned int mode, b;

	for (mode = 0; mode < 2; mode++) {
		for (b = 0; b < NBATCH; b++) {
			struct bench_variant *x;
			struct report_row *row;
			char name[64], kind[24];

			x = find(v, nv, cycle, (int)mode, batch_sizes[b]);
			if (!x)
				continue;
			snprintf(name, sizeof(name), "%-10s %-9s %-8s",
				 cycle_names[cycle],
				 mode ? "unaligned" : "aligned",
				 kind_name(batch_sizes[b], kind,
					   sizeof(kind)));
			row = report_add("pool", name, "uxdp",
					 bench_median(x, M_TOTAL),
					 bench_min(x, M_TOTAL), "cyc/buf");
			report_part(row, "alloc",
				    bench_median(x, M_ALLOC));
			if (cycle == CYCLE_RX) {
				report_part(row, "post",
					    bench_median(x, M_POST));
				report_part(row, "set+release",
					    bench_median(x, M_RETURN));
			} else if (cycle == CYCLE_DROP) {
				report_part(row, "set+free",
					    bench_median(x, M_RETURN));
			} else {
				report_part(row, "free",
					    bench_median(x, M_RETURN));
			}
		}
	}
}

/*
 * The batching share of the aligned gain, run by run, then the median. The
 * four variants of one round-robin round ran back to back, so a slow spell
 * of a shared machine scales all four alike and cancels in the share;
 * across rounds it does not, and a share built from four medians, a
 * difference of differences, swings with it.
 */
static double paired_batching_share(struct bench_variant *us,
				    struct bench_variant *ub,
				    struct bench_variant *ab)
{
	double share[256];
	unsigned int r, n = 0;

	if (!us || !ub || !ab)
		return NAN;
	for (r = 0; r < us->nsamples && n < 256; r++) {
		double s = bench_sample(us, r, M_TOTAL);
		double b = bench_sample(ub, r, M_TOTAL);
		double a = bench_sample(ab, r, M_TOTAL);

		if (!isnan(s + b + a) && s - a > 0)
			share[n++] = 100.0 * (s - b) / (s - a);
	}
	return bench_median_of(share, n);
}

/* Our counterparts of the seed's figures, and the batching target. */
static void report_seed_rows(struct bench_variant *v, unsigned int nv)
{
	double as = med(find(v, nv, CYCLE_RX, 0, 0), M_TOTAL);
	double ab = med(find(v, nv, CYCLE_RX, 0, 64), M_TOTAL);
	double us = med(find(v, nv, CYCLE_RX, 1, 0), M_TOTAL);
	double ub = med(find(v, nv, CYCLE_RX, 1, 64), M_TOTAL);
	double asa = med(find(v, nv, CYCLE_RX, 0, 0), M_ALLOC);
	double aba = med(find(v, nv, CYCLE_RX, 0, 64), M_ALLOC);
	double usa = med(find(v, nv, CYCLE_RX, 1, 0), M_ALLOC);
	double uba = med(find(v, nv, CYCLE_RX, 1, 64), M_ALLOC);
	double gain = us - ab, batching = us - ub, preinit = ub - ab;
	struct report_row *row;

	report_heading("pool: our figures beside the seed's (rx-to-user "
		       "cycle, medians)");
	row = report_add("seed", "aligned   saved single->batch64 total",
			 "uxdp", ab - as, NAN, "cyc/buf");
	report_seed(row, "-9 cyc/pkt (ice +11%%, i40e +12%% throughput)");
	report_row_note(row, "%.1f%% of our single-alloc buffer cycle",
			100.0 * (as - ab) / as);
	report_summarise(row);
	row = report_add("seed", "aligned   saved single->batch64 alloc",
			 "uxdp", aba - asa, NAN, "cyc/buf");
	report_summarise(row);
	row = report_add("seed", "unaligned saved single->batch64 total",
			 "uxdp", ub - us, NAN, "cyc/buf");
	report_seed(row, "-1 cyc/pkt (ice +1.5%%, i40e +1%% throughput)");
	report_row_note(row, "%.1f%% of our single-alloc buffer cycle",
			100.0 * (us - ub) / us);
	report_summarise(row);
	row = report_add("seed", "unaligned saved single->batch64 alloc",
			 "uxdp", uba - usa, NAN, "cyc/buf");
	report_summarise(row);
	row = report_add("seed", "aligned   single/batch64 total", "uxdp",
			 as / ab, NAN, "x");
	report_summarise(row);
	row = report_add("seed", "aligned   single/batch64 alloc", "uxdp",
			 asa / aba, NAN, "x");
	report_summarise(row);
	row = report_add("seed", "unaligned single/batch64 total", "uxdp",
			 us / ub, NAN, "x");
	report_summarise(row);

	/*
	 * The seed's "before" is an aligned pool that pops a head off a
	 * stack and fills it on every single allocation. uxdp's aligned
	 * single path already uses pre-initialised heads, so the closest
	 * model of "before" is our unaligned single path (stack + fill per
	 * buffer), and of "after" our aligned batch-64 path.
	 */
	row = report_add("seed", "aligned gain, unaligned single->aligned "
			 "batch64", "estimate", -gain, NAN, "cyc/buf");
	report_seed(row, "-9 cyc/pkt");
	report_summarise(row);
	if (gain > 0) {
		row = report_add("seed", "aligned gain share: batching",
				 "estimate", 100.0 * batching / gain, NAN,
				 "%");
		report_seed(row, "~40%%");
		report_part(row, "paired",
			    paired_batching_share(find(v, nv, CYCLE_RX, 1, 0),
						  find(v, nv, CYCLE_RX, 1, 64),
						  find(v, nv, CYCLE_RX, 0,
						       64)));
		report_row_note(row, "unaligned single - unaligned batch64 "
				"= %.2f cyc/buf", batching);
		report_summarise(row);
		row = report_add("seed", "aligned gain share: pre-init heads",
				 "estimate", 100.0 * preinit / gain, NAN, "%");
		report_seed(row, "~60%%");
		report_row_note(row, "unaligned batch64 - aligned batch64 "
				"= %.2f cyc/buf", preinit);
		report_summarise(row);
		report_note("seed", "split estimate: batching measured in "
			    "unaligned mode (no pre-initialised heads there), "
			    "the rest credited to the pre-initialised heads. "
			    "Taken in the other order (pre-init first: "
			    "unaligned single - aligned single = %.2f, then "
			    "batching: aligned single - aligned batch64 = "
			    "%.2f) the batching share is %.0f%%. \"paired\" is "
			    "the median of the share computed within each "
			    "round-robin round, steadier on a noisy machine. "
			    "All are estimates: the unaligned path also "
			    "differs in address masking and bounds checks, "
			    "and this loop is the buffer life alone, not a "
			    "driver", us - as, as - ab,
			    100.0 * (as - ab) / gain);
	} else {
		report_warn("seed", "no aligned gain measured (%.2f cyc/buf); "
			    "the split is not meaningful", gain);
	}
	report_note("seed", "the seed's %% are whole-driver throughput on "
		    "ice/i40e; ours are of the buffer-management loop only, "
		    "so compare cycles saved, not percentages");

	/* Per-round ratios: a noisy neighbour shifts whole rounds. */
	report_target("pool", "aligned alloc_batch(64)/single, alloc phase",
		      paired(find(v, nv, CYCLE_RX, 0, 64),
			     find(v, nv, CYCLE_RX, 0, 0), M_ALLOC), 0.5,
		      "%.2f vs %.2f cyc/buf (medians)", aba, asa);
	report_target("pool", "aligned alloc_batch(64)/single, whole cycle",
		      paired(find(v, nv, CYCLE_RX, 0, 64),
			     find(v, nv, CYCLE_RX, 0, 0), M_TOTAL), 0.5,
		      "%.2f vs %.2f cyc/buf, rx-to-user (medians)", ab, as);
}

static void report_dpdk_rows(struct bench_variant *v, unsigned int nv)
{
	unsigned int b;

	for (b = 0; b < NDPDK; b++) {
		uint32_t n = dpdk_bulks[b];
		struct bench_variant *d = find(v, nv, CYCLE_DPDK, 0, n);
		struct bench_variant *u = find(v, nv, CYCLE_DROP, 0, n);
		struct bench_variant *x = find(v, nv, CYCLE_BARE, 0, n);
		struct report_row *row;
		char name[64];

		if (!d)
			continue;
		snprintf(name, sizeof(name), "%-10s mempool   bulk=%-2u",
			 cycle_names[CYCLE_DPDK], n);
		report_add("pool", name, "dpdk", bench_median(d, M_TOTAL),
			   bench_min(d, M_TOTAL), "cyc/buf");
		snprintf(name, sizeof(name), "drop vs mempool n=%-2u", n);
		row = report_add("pool", name, "uxdp/dpdk",
				 med(u, M_TOTAL) / med(d, M_TOTAL), NAN, "x");
		report_row_note(row, "drop cycle incl. set_size");
		snprintf(name, sizeof(name), "drop-bare vs mempool n=%-2u", n);
		row = report_add("pool", name, "uxdp/dpdk",
				 med(x, M_TOTAL) / med(d, M_TOTAL), NAN, "x");
		report_row_note(row, "like for like: no set_size");
		report_summarise(row);
	}
	/* Targets after the table, so its columns stay in one block. */
	for (b = 0; b < NDPDK; b++) {
		uint32_t n = dpdk_bulks[b];
		struct bench_variant *d = find(v, nv, CYCLE_DPDK, 0, n);
		struct bench_variant *u = find(v, nv, CYCLE_DROP, 0, n);
		char what[96];

		if (!d)
			continue;
		snprintf(what, sizeof(what), "uxdp drop n=%-2u / rte_mempool "
			 "get+put n=%-2u", n, n);
		report_target("pool", what, paired(u, d, M_TOTAL), 1.0,
			      "%.2f vs %.2f cyc/buf (medians); drop = "
			      "alloc_batch+set_size+free_batch",
			      med(u, M_TOTAL), med(d, M_TOTAL));
	}
	/*
	 * Issue 6: the free-list cycle, like for like (no set_size), keeping
	 * the guarantee that nothing is handed out twice, at most 1.5x a
	 * mempool that makes no such check.
	 */
	for (b = 0; b < NDPDK; b++) {
		uint32_t n = dpdk_bulks[b];
		struct bench_variant *d = find(v, nv, CYCLE_DPDK, 0, n);
		struct bench_variant *x = find(v, nv, CYCLE_BARE, 0, n);
		char what[96];

		if (!d || !x || n != 64)
			continue;
		snprintf(what, sizeof(what), "uxdp drop-bare n=%u / "
			 "rte_mempool get+put n=%u", n, n);
		report_target("pool", what, paired(x, d, M_TOTAL), 1.5,
			      "%.2f vs %.2f cyc/buf (medians); drop-bare = "
			      "alloc_batch+free_batch, double frees caught",
			      med(x, M_TOTAL), med(d, M_TOTAL));
	}
}

/* ---- the command --------------------------------------------------------- */

/* --plot: cycles per buffer against the batch size (single at 0.5). */
static void plot_pool(struct bench_variant *v, unsigned int nv)
{
	struct plot *p = plot_get("pool_batch", "pool: Rx buffer life, "
				  "cycles per buffer against batch size",
				  "alloc batch (buffers per call)", "cyc/buf",
				  PLOT_LOGX | PLOT_YZERO);
	enum pool_cycle cy;
	unsigned int mode, b;

	plot_xtics(p, "(\"single\" 0.5, 1, 8, 16, 32, 64)");
	for (cy = CYCLE_RX; cy <= CYCLE_DROP; cy++)
		for (mode = 0; mode < 2; mode++)
			for (b = 0; b < NBATCH; b++) {
				struct bench_variant *x;
				char series[48];

				x = find(v, nv, cy, (int)mode, batch_sizes[b]);
				if (!x)
					continue;
				snprintf(series, sizeof(series), "%s %s",
					 cycle_names[cy], mode ? "unaligned" :
					 "aligned");
				plot_point(p, series, batch_sizes[b] ?
					   (double)batch_sizes[b] : 0.5,
					   bench_median(x, M_TOTAL));
			}
}

int bench_pool(const struct bench_opts *o)
{
	uint32_t frames = o->frames ? o->frames : BENCH_DEFAULT_FRAMES;
	uint32_t chunk = o->chunk_size ? o->chunk_size : BENCH_DEFAULT_CHUNK;
	uint64_t ops = o->ops ? o->ops : BENCH_POOL_DEFAULT_OPS;
	struct pool_mode modes[2] = { { 0 } };
	struct bench_variant v[48];
	struct pool_case cases[48];
	struct dpdk_mempool *dm[NDPDK] = { NULL };
	unsigned int nv = 0, mode, b, i;
	bool dpdk = false, dpdk_failed = false;
	int ret = 1;

	memset(cases, 0, sizeof(cases));
	for (mode = 0; mode < 2; mode++) {
		if (mode_setup(&modes[mode], mode, frames, chunk)) {
			bench_fail("pool", "set-up of the %s UMEM and pool "
				   "(see above)", mode ? "unaligned" :
				   "aligned");
			report_flush();
			goto out;
		}
	}
	if (!o->no_dpdk && dpdk_peer_built())
		dpdk = !dpdk_peer_start(bench_env.cpu_a,
					bench_dpdk_mem_mb(o));

	for (mode = 0; mode < 2; mode++) {
		enum pool_cycle cy;

		for (cy = CYCLE_RX; cy <= CYCLE_DROP; cy++) {
			for (b = 0; b < NBATCH; b++) {
				struct pool_case *c = &cases[nv];
				char kind[24];

				c->m = &modes[mode];
				c->cycle = cy;
				c->batch = batch_sizes[b];
				snprintf(c->label, sizeof(c->label),
					 "pool %s %s %s", cycle_names[cy],
					 mode ? "unaligned" : "aligned",
					 kind_name(c->batch, kind,
						   sizeof(kind)));
				nv++;
			}
		}
	}
	for (b = 0; b < NDPDK; b++) {
		struct pool_case *c = &cases[nv++];

		c->m = &modes[0];
		c->cycle = CYCLE_BARE;
		c->batch = dpdk_bulks[b];
		snprintf(c->label, sizeof(c->label),
			 "pool drop-bare aligned batch=%u", c->batch);
	}
	if (dpdk) {
		uint32_t cache = DPDK_CACHE;

		/* rte_mempool refuses a cache above n / 1.5. */
		if ((uint64_t)cache * 3 > (uint64_t)frames * 2)
			cache = frames * 2 / 3;
		for (b = 0; b < NDPDK; b++) {
			struct pool_case *c = &cases[nv];

			dm[b] = dpdk_mempool_create(frames, chunk, cache);
			if (!dm[b]) {
				/* Why went to stderr. */
				bench_fail("pool", "rte_mempool of %u objects "
					   "could not be created: no DPDK "
					   "figures", frames);
				dpdk_failed = true;
				break;
			}
			c->dm = dm[b];
			c->cycle = CYCLE_DPDK;
			c->batch = dpdk_bulks[b];
			snprintf(c->label, sizeof(c->label),
				 "pool dpdk mempool bulk=%u", c->batch);
			nv++;
		}
		if (dm[0] && !dpdk_mempool_cached(dm[0]))
			report_warn("pool", "rte_mempool per-lcore cache not "
				    "in use: this thread is not an EAL lcore");
	}
	for (i = 0; i < nv; i++)
		v[i] = (struct bench_variant){
			.label = cases[i].label,
			.run = pool_case_run,
			.arg = &cases[i],
			.ops = ops,
			.nmetrics = 4,
		};

	report_env_num("pool_ops", (double)(ops / ROUND * ROUND));
	report_env_num("pool_frames", frames);
	report_env_num("pool_chunk_size", chunk);
	report_heading("pool: Rx buffer life per buffer, single vs batched "
		       "allocation, aligned vs unaligned");
	report_note("pool", "UMEM %u chunks of %u B, fill ring %u; rounds of "
		    "%u buffers (a NAPI budget), %llu buffers per run and "
		    "phase pass; median of %u runs, variants interleaved; on "
		    "CPU %d", frames, chunk, pow2_at_least(frames), ROUND,
		    (unsigned long long)(ops / ROUND * ROUND), o->runs,
		    bench_env.cpu_a);
	report_note("pool", "value = whole loop, one clock pair; alloc, "
		    "post, set+release/free = phases timed per round (not per "
		    "buffer), %.0f-tick stamp cost subtracted",
		    bench_env.stamp_cost);
	report_note("pool", "rx-to-user: app posts on the fill ring, pool "
		    "allocates, set_size (single: data_end only), "
		    "uxdp_pool_release, app re-posts; drop: uxdp_buff_free / "
		    "uxdp_pool_free_batch, allocation from the free list");
	if (dpdk) {
		report_note("pool", "DPDK: rte_mempool_create(n=%u, "
			    "obj=%u B, cache=%u, SP_PUT|SC_GET); per round "
			    "%u objects got in bulks of n then put back in "
			    "bulks of n; drop-bare: uxdp the same way",
			    frames, chunk, DPDK_CACHE, ROUND);
	} else if (o->no_dpdk || !dpdk_peer_built()) {
		/* Absent by choice or by build: a skip, not a failure. */
		report_note("pool", "DPDK peer: %s", o->no_dpdk ?
			    "skipped (--no-dpdk)" : dpdk_peer_status());
	} else {
		/* Built and asked for, but it would not start: a failure. */
		bench_fail("pool", "DPDK peer: %s (--no-dpdk skips it)",
			   dpdk_peer_status());
		dpdk_failed = true;
	}

	bench_run(v, nv, o->runs, "pool", o->quiet);
	ret = bench_check(v, nv, "pool") || dpdk_failed;
	report_heading("pool: rx-to-user cycle (fill-queue path), cyc/buf");
	report_uxdp_rows(v, nv, CYCLE_RX);
	report_heading("pool: drop cycle (free-list path), cyc/buf");
	report_uxdp_rows(v, nv, CYCLE_DROP);
	report_uxdp_rows(v, nv, CYCLE_BARE);
	plot_pool(v, nv);
	if (dpdk)
		report_dpdk_rows(v, nv);
	else
		report_target("pool", "uxdp drop / rte_mempool get+put", NAN,
			      1.0, "%s", dpdk_failed ?
			      "DPDK peer failed to start" : "no DPDK peer");
	report_flush();
	report_seed_rows(v, nv);
	report_flush();
	bench_variants_free(v, nv);
	if (o->instructions) {
		if (pool_instructions(o, frames, chunk))
			ret = 1;
		report_flush();
	}
out:
	for (b = 0; b < NDPDK; b++)
		dpdk_mempool_free(dm[b]);
	for (mode = 0; mode < 2; mode++)
		mode_teardown(&modes[mode]);
	return ret;
}
