/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench ring: uxdp's SPSC rings against DPDK's rte_ring SP/SC.
 *
 * Element sizes 8 (an address ring: fill, completion) and 16 (a descriptor
 * ring: rx, tx); bulks of 1, 8 and 32. Three tests:
 *
 *   1-core     enqueue a bulk from a table, dequeue it into a table, on one
 *              CPU: the instruction cost of the verbs, no cache traffic.
 *   2-thread   producer and consumer on separate CPUs, the consumer
 *              checking every element: adds the cost of moving the index
 *              and slot cache lines between cores.
 *   empty-poll a consumer asking an empty ring for 32 entries: what an idle
 *              poll loop pays.
 *
 * Both sides copy through a small table (DPDK's API requires one; the uxdp
 * loops copy from the same kind of table into the reserved slots rather
 * than writing in place) so the two do the same work per element.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/ring.h>

#include "bench.h"
#include "dpdk_peer.h"
#include "report.h"
#include "ring_elem.h"

_Static_assert(sizeof(struct ring_elem16) == sizeof(struct uxdp_desc),
	       "the DPDK and uxdp 16-byte elements must match");

enum ring_impl {
	IMPL_UXDP,
	IMPL_DPDK,
};

enum ring_test {
	TEST_1CORE,
	TEST_2THREAD,
	TEST_POLL,
};

static const char *const test_names[] = {
	[TEST_1CORE] = "1-core",
	[TEST_2THREAD] = "2-thread",
	[TEST_POLL] = "empty-poll",
};

/* Bulk sizes: DPDK's test_ring_perf keeps its list volatile for the same
 * reason bench_opaque_u32() exists. */
static const volatile uint32_t bulk_sizes[] = { 1, 8, 32 };
static const uint32_t elem_sizes[] = { 8, 16 };
#define POLL_BULK	32
#define MAX_BULK	64

/*
 * The two handles of one uxdp ring, each on its own cache line: in the
 * two-thread test they belong to different CPUs, and a shared line would
 * add false sharing that no real user of the ring has.
 */
struct uxdp_pair {
	struct uxdp_ring prod __attribute__((aligned(UXDP_CACHE_LINE)));
	struct uxdp_ring cons __attribute__((aligned(UXDP_CACHE_LINE)));
};

struct ring_case {
	enum ring_impl impl;
	enum ring_test test;
	uint32_t esize;
	uint32_t bulk;
	void *mem;			/* uxdp ring memory */
	struct uxdp_pair *h;		/* uxdp handles */
	struct dpdk_ring *dr;
	uint64_t src[MAX_BULK * 2];	/* 64 elements of up to 16 bytes */
	uint64_t dst[MAX_BULK * 2];
	uint64_t checked;		/* 2-thread: elements checked */
	uint64_t bad;			/* 2-thread: elements that differed */
	char label[64];
};

/* ---- uxdp loops ---------------------------------------------------------- */

static int uxdp_1core8(struct uxdp_pair *h, const uint64_t *src,
		       uint64_t *dst, uint32_t n, uint64_t iters)
{
	uint64_t k;
	uint32_t idx;

	for (k = 0; k < iters; k++) {
		if (!uxdp_ring_prod_reserve(&h->prod, n, &idx))
			return -EIO;
		uxdp_ring_prod_write_addrs(&h->prod, idx, src, n);
		uxdp_ring_prod_submit(&h->prod, n);
		if (uxdp_ring_cons_peek(&h->cons, n, &idx) != n)
			return -EIO;
		uxdp_ring_cons_read_addrs(&h->cons, idx, dst, n);
		uxdp_ring_cons_release(&h->cons, n);
	}
	return 0;
}

static int uxdp_1core16(struct uxdp_pair *h, const struct uxdp_desc *src,
			struct uxdp_desc *dst, uint32_t n, uint64_t iters)
{
	uint64_t k;
	uint32_t idx;

	for (k = 0; k < iters; k++) {
		if (!uxdp_ring_prod_reserve(&h->prod, n, &idx))
			return -EIO;
		uxdp_ring_prod_write_descs(&h->prod, idx, src, n);
		uxdp_ring_prod_submit(&h->prod, n);
		if (uxdp_ring_cons_peek(&h->cons, n, &idx) != n)
			return -EIO;
		uxdp_ring_cons_read_descs(&h->cons, idx, dst, n);
		uxdp_ring_cons_release(&h->cons, n);
	}
	return 0;
}

/* The consumer's idle poll: peek refreshes the producer index every time. */
static uint64_t uxdp_poll(struct uxdp_pair *h, uint32_t n, uint64_t polls)
{
	uint64_t k, got = 0;
	uint32_t idx;

	for (k = 0; k < polls; k++)
		got += uxdp_ring_cons_peek(&h->cons, n, &idx);
	return got;
}

static void uxdp_produce8(struct uxdp_pair *h, uint32_t n, uint64_t total)
{
	uint64_t src[MAX_BULK], seq;
	uint32_t idx, i;

	for (seq = 0; seq < total; seq += n) {
		for (i = 0; i < n; i++)
			src[i] = ring_elem8_val(seq + i);
		while (!uxdp_ring_prod_reserve(&h->prod, n, &idx))
			bench_cpu_relax();
		uxdp_ring_prod_write_addrs(&h->prod, idx, src, n);
		uxdp_ring_prod_submit(&h->prod, n);
	}
}

static void uxdp_produce16(struct uxdp_pair *h, uint32_t n, uint64_t total)
{
	struct ring_elem16 src[MAX_BULK];
	uint64_t seq;
	uint32_t idx, i;

	for (seq = 0; seq < total; seq += n) {
		for (i = 0; i < n; i++)
			ring_elem16_fill(&src[i], seq + i);
		while (!uxdp_ring_prod_reserve(&h->prod, n, &idx))
			bench_cpu_relax();
		uxdp_ring_prod_write_descs(&h->prod, idx,
					   (const struct uxdp_desc *)src, n);
		uxdp_ring_prod_submit(&h->prod, n);
	}
}

/*
 * The consumer waits until a whole bulk is there, as DPDK's bulk dequeue
 * does, so both sides move the same number of entries per index update;
 * peek alone would take whatever is there (best effort).
 */
static uint64_t uxdp_consume8(struct uxdp_pair *h, uint32_t n, uint64_t total)
{
	uint64_t dst[MAX_BULK], seq, bad = 0;
	uint32_t idx, i;

	for (seq = 0; seq < total; seq += n) {
		while (uxdp_ring_cons_nb_avail(&h->cons, n) < n)
			bench_cpu_relax();
		uxdp_ring_cons_peek(&h->cons, n, &idx);
		uxdp_ring_cons_read_addrs(&h->cons, idx, dst, n);
		uxdp_ring_cons_release(&h->cons, n);
		for (i = 0; i < n; i++)
			bad += dst[i] != ring_elem8_val(seq + i);
	}
	return bad;
}

static uint64_t uxdp_consume16(struct uxdp_pair *h, uint32_t n,
			       uint64_t total)
{
	struct ring_elem16 dst[MAX_BULK];
	uint64_t seq, bad = 0;
	uint32_t idx, i;

	for (seq = 0; seq < total; seq += n) {
		while (uxdp_ring_cons_nb_avail(&h->cons, n) < n)
			bench_cpu_relax();
		uxdp_ring_cons_peek(&h->cons, n, &idx);
		uxdp_ring_cons_read_descs(&h->cons, idx,
					  (struct uxdp_desc *)dst, n);
		uxdp_ring_cons_release(&h->cons, n);
		for (i = 0; i < n; i++)
			bad += ring_elem16_bad(&dst[i], seq + i);
	}
	return bad;
}

/* ---- the two-thread harness ---------------------------------------------- */

struct pc_run {
	struct ring_case *c;
	uint32_t bulk;
	uint64_t total;
	int ready;
	int go;
	uint64_t t_end;
	uint64_t bad;
};

static void *consumer_main(void *arg)
{
	struct pc_run *pr = arg;
	struct ring_case *c = pr->c;
	uint64_t bad;

	__atomic_store_n(&pr->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&pr->go, __ATOMIC_ACQUIRE))
		bench_cpu_relax();
	if (c->impl == IMPL_DPDK)
		bad = dpdk_ring_consume(c->dr, pr->bulk, pr->total);
	else if (c->esize == 8)
		bad = uxdp_consume8(c->h, pr->bulk, pr->total);
	else
		bad = uxdp_consume16(c->h, pr->bulk, pr->total);
	pr->t_end = bench_tsc_end();
	pr->bad = bad;
	return NULL;
}

/*
 * The producer runs on this (CPU a) thread, the consumer on a new thread
 * pinned to CPU b. The clock starts when the producer releases the
 * consumer and stops when the consumer has checked the last element; both
 * CPUs read the same invariant TSC.
 */
static int run_2thread(struct ring_case *c, uint64_t ops, double *out)
{
	struct pc_run pr = { .c = c };
	struct bench_thread *t;
	uint64_t t0;
	int err;

	pr.bulk = bench_opaque_u32(c->bulk);
	pr.total = ops / pr.bulk * pr.bulk;
	if (!pr.total)
		pr.total = pr.bulk;
	err = bench_spawn(&t, bench_env.cpu_b, consumer_main, &pr);
	if (err)
		return err;
	while (!__atomic_load_n(&pr.ready, __ATOMIC_ACQUIRE))
		bench_cpu_relax();
	t0 = bench_tsc_begin();
	__atomic_store_n(&pr.go, 1, __ATOMIC_RELEASE);
	if (c->impl == IMPL_DPDK)
		dpdk_ring_produce(c->dr, pr.bulk, pr.total);
	else if (c->esize == 8)
		uxdp_produce8(c->h, pr.bulk, pr.total);
	else
		uxdp_produce16(c->h, pr.bulk, pr.total);
	bench_join(t);
	c->checked += pr.total;
	c->bad += pr.bad;
	if (pr.t_end <= t0)
		return -ERANGE;		/* TSCs of the two CPUs disagree */
	out[0] = (double)(pr.t_end - t0) / (double)pr.total;
	return 0;
}

static int run_1core(struct ring_case *c, uint64_t ops, double *out)
{
	uint32_t n = bench_opaque_u32(c->bulk);
	uint64_t iters = ops / n ? ops / n : 1, t0, t1, ticks;
	int err;

	if (c->impl == IMPL_DPDK) {
		err = dpdk_ring_1core(c->dr, c->src, c->dst, n, iters, &ticks);
	} else {
		t0 = bench_tsc_begin();
		if (c->esize == 8)
			err = uxdp_1core8(c->h, c->src, c->dst, n, iters);
		else
			err = uxdp_1core16(c->h, (void *)c->src,
					   (void *)c->dst, n, iters);
		t1 = bench_tsc_end();
		ticks = t1 - t0;
	}
	if (err)
		return err;
	/* What went in must have come out. */
	if (memcmp(c->src, c->dst, (size_t)n * c->esize))
		return -EIO;
	out[0] = (double)ticks / (double)(iters * n);
	return 0;
}

static int run_poll(struct ring_case *c, uint64_t ops, double *out)
{
	uint32_t n = bench_opaque_u32(c->bulk);
	uint64_t t0, t1, ticks, got;
	int err = 0;

	if (c->impl == IMPL_DPDK) {
		err = dpdk_ring_poll(c->dr, c->dst, n, ops, &ticks);
	} else {
		t0 = bench_tsc_begin();
		got = uxdp_poll(c->h, n, ops);
		t1 = bench_tsc_end();
		ticks = t1 - t0;
		if (got)
			err = -EIO;
	}
	if (err)
		return err;
	out[0] = (double)ticks / (double)ops;
	return 0;
}

static int ring_case_run(void *arg, uint64_t ops, double *out)
{
	struct ring_case *c = arg;

	switch (c->test) {
	case TEST_1CORE:
		return run_1core(c, ops, out);
	case TEST_2THREAD:
		return run_2thread(c, ops, out);
	case TEST_POLL:
		return run_poll(c, ops, out);
	}
	return -EINVAL;
}

/* ---- setup --------------------------------------------------------------- */

static int case_setup(struct ring_case *c)
{
	uint32_t i;

	snprintf(c->label, sizeof(c->label), "ring %s %s elem=%u n=%u",
		 c->impl == IMPL_UXDP ? "uxdp" : "dpdk", test_names[c->test],
		 c->esize, c->bulk);
	/* Distinct, non-zero table contents, so the memcmp means something. */
	for (i = 0; i < MAX_BULK * 2; i++)
		c->src[i] = 0x1000 + i;
	if (c->impl == IMPL_DPDK) {
		c->dr = dpdk_ring_create(c->esize, RING_BENCH_SIZE);
		return c->dr ? 0 : -ENOMEM;
	}
	c->mem = uxdp_ring_mem_alloc(RING_BENCH_SIZE, c->esize);
	if (!c->mem)
		return -errno;
	c->h = aligned_alloc(UXDP_CACHE_LINE, sizeof(*c->h));
	if (!c->h)
		return -ENOMEM;
	if (uxdp_ring_init_prod(&c->h->prod, c->mem, RING_BENCH_SIZE, NULL) ||
	    uxdp_ring_init_cons(&c->h->cons, c->mem, RING_BENCH_SIZE, NULL))
		return -EINVAL;
	return 0;
}

static void case_teardown(struct ring_case *c)
{
	if (c->impl == IMPL_DPDK) {
		dpdk_ring_free(c->dr);
		return;
	}
	free(c->h);
	uxdp_ring_mem_free(c->mem, RING_BENCH_SIZE, c->esize);
}

/* ---- reporting ----------------------------------------------------------- */

static struct bench_variant *find_variant(struct bench_variant *v,
					  unsigned int nv, enum ring_impl impl,
					  uint32_t esize, uint32_t bulk)
{
	unsigned int i;

	for (i = 0; i < nv; i++) {
		struct ring_case *c = v[i].arg;

		if (c->impl == impl && c->esize == esize && c->bulk == bulk)
			return &v[i];
	}
	return NULL;
}

static void report_test(struct bench_variant *v, unsigned int nv,
			enum ring_test test)
{
	const char *unit = test == TEST_POLL ? "cyc/poll" : "cyc/elem";
	unsigned int e, b;

	for (e = 0; e < 2; e++) {
		for (b = 0; b < 3; b++) {
			uint32_t esize = elem_sizes[e], bulk = bulk_sizes[b];
			struct bench_variant *u, *d;
			struct report_row *row;
			char name[64];

			if (test == TEST_POLL && bulk != POLL_BULK)
				continue;
			u = find_variant(v, nv, IMPL_UXDP, esize, bulk);
			d = find_variant(v, nv, IMPL_DPDK, esize, bulk);
			snprintf(name, sizeof(name),
				 "spsc bulk n=%-2u elem=%-2u %s", bulk, esize,
				 test_names[test]);
			if (u)
				report_add("ring", name, "uxdp",
					   bench_median(u, 0), bench_min(u, 0),
					   unit);
			if (!d)
				continue;
			report_add("ring", name, "dpdk", bench_median(d, 0),
				   bench_min(d, 0), unit);
			if (!u)
				continue;
			row = report_add("ring", name, "uxdp/dpdk",
					 bench_median(u, 0) /
					 bench_median(d, 0), NAN, "x");
			/* Bulk 32 is the target, listed as such. */
			if (bulk != 32 || test == TEST_POLL)
				report_summarise(row);
		}
	}
	for (e = 0; e < 2; e++) {
		struct bench_variant *u, *d;
		char what[96];

		if (test == TEST_POLL) {
			/* Issue 6: an empty poll costs at most DPDK's. */
			u = find_variant(v, nv, IMPL_UXDP, elem_sizes[e],
					 POLL_BULK);
			d = find_variant(v, nv, IMPL_DPDK, elem_sizes[e],
					 POLL_BULK);
			if (!u || !d)
				continue;
			snprintf(what, sizeof(what),
				 "uxdp/dpdk empty poll of %u elem=%-2u",
				 POLL_BULK, elem_sizes[e]);
			report_target("ring", what,
				      bench_paired_ratio(u, d, 0), 1.0,
				      "uxdp %.2f vs dpdk %.2f cyc/poll "
				      "(medians)", bench_median(u, 0),
				      bench_median(d, 0));
			continue;
		}
		u = find_variant(v, nv, IMPL_UXDP, elem_sizes[e], 32);
		d = find_variant(v, nv, IMPL_DPDK, elem_sizes[e], 32);
		if (!u || !d)
			continue;
		snprintf(what, sizeof(what), "uxdp/dpdk bulk-32 elem=%-2u %s",
			 elem_sizes[e], test_names[test]);
		/* Per-round ratios: the two ran back to back each round. */
		report_target("ring", what, bench_paired_ratio(u, d, 0), 1.0,
			      "uxdp %.2f vs dpdk %.2f cyc/elem (medians)",
			      bench_median(u, 0), bench_median(d, 0));
	}
}

/*
 * A target that could not be measured is still listed, as such; @why_no
 * says why the DPDK side is missing.
 */
static void unmeasured_targets(bool dpdk, bool two, const char *why_no)
{
	unsigned int e, t;

	for (t = TEST_1CORE; t <= TEST_2THREAD; t++) {
		for (e = 0; e < 2; e++) {
			char what[96];

			if (dpdk && (t == TEST_1CORE || two))
				continue;
			snprintf(what, sizeof(what),
				 "uxdp/dpdk bulk-32 elem=%-2u %s",
				 elem_sizes[e], test_names[t]);
			report_target("ring", what, NAN, 1.0, "%s",
				      !dpdk ? why_no :
				      "one CPU: no 2-thread test");
		}
	}
}

/* ---- the command --------------------------------------------------------- */

static unsigned int add_cases(struct ring_case *cases, unsigned int n,
			      enum ring_test test, bool dpdk)
{
	unsigned int e, b, i;

	for (e = 0; e < 2; e++) {
		for (b = 0; b < 3; b++) {
			if (test == TEST_POLL && bulk_sizes[b] != POLL_BULK)
				continue;
			for (i = 0; i < (dpdk ? 2U : 1U); i++) {
				struct ring_case *c = &cases[n++];

				c->impl = i ? IMPL_DPDK : IMPL_UXDP;
				c->test = test;
				c->esize = elem_sizes[e];
				c->bulk = bulk_sizes[b];
			}
		}
	}
	return n;
}

/* Returns the number of variants that failed. */
static unsigned int run_test(struct ring_case *cases, unsigned int ncases,
			     enum ring_test test, const struct bench_opts *o,
			     uint64_t ops)
{
	struct bench_variant v[16];
	unsigned int i, nv = 0, failed;
	char what[64];

	for (i = 0; i < ncases && nv < 16; i++) {
		if (cases[i].test != test)
			continue;
		v[nv] = (struct bench_variant){
			.label = cases[i].label,
			.run = ring_case_run,
			.arg = &cases[i],
			.ops = ops,
			.nmetrics = 1,
		};
		nv++;
	}
	snprintf(what, sizeof(what), "ring %s", test_names[test]);
	bench_run(v, nv, o->runs, what, o->quiet);
	failed = bench_check(v, nv, "ring");
	report_test(v, nv, test);
	bench_variants_free(v, nv);
	return failed;
}

int bench_ring(const struct bench_opts *o)
{
	struct ring_case *cases;
	unsigned int ncases = 0, i;
	uint64_t ops = o->ops ? o->ops : BENCH_RING_DEFAULT_OPS;
	bool dpdk = false, two = bench_env.ncpus >= 2;
	const char *why_no = "no DPDK peer";
	int ret = 0;

	if (!o->no_dpdk && dpdk_peer_built())
		dpdk = !dpdk_peer_start(bench_env.cpu_a,
					       bench_dpdk_mem_mb(o));
	report_env_num("ring_ops", (double)ops);
	report_env_num("ring_size", RING_BENCH_SIZE);
	report_heading("ring: uxdp SPSC rings vs DPDK rte_ring SP/SC");
	report_note("ring", "ring size %u for both (DPDK's holds %u: one slot "
		    "stays empty); %llu elements (polls) per run; median of "
		    "%u runs, variants interleaved", RING_BENCH_SIZE,
		    RING_BENCH_SIZE - 1, (unsigned long long)ops, o->runs);
	report_note("ring", "1-core: enqueue a bulk from a table then dequeue "
		    "it into a table, on CPU %d; empty-poll: dequeue of %u "
		    "from an empty ring", bench_env.cpu_a, POLL_BULK);
	if (two)
		report_note("ring", "2-thread: producer on CPU %d, consumer "
			    "on CPU %d; both wait for whole bulks; the "
			    "consumer checks every element",
			    bench_env.cpu_a, bench_env.cpu_b);
	if (dpdk) {
		report_note("ring", "DPDK: rte_ring_create_elem(SP_ENQ|"
			    "SC_DEQ), rte_ring_enqueue_bulk_elem / "
			    "rte_ring_dequeue_bulk_elem, esize a constant; "
			    "the peer is compiled with libdpdk's flags (%s), "
			    "uxdp with the project's", dpdk_peer_cflags());
	} else if (o->no_dpdk || !dpdk_peer_built()) {
		/* Absent by choice or by build: a skip, not a failure. */
		report_note("ring", "DPDK peer: %s", o->no_dpdk ?
			    "skipped (--no-dpdk)" : dpdk_peer_status());
	} else {
		/* Built and asked for, but it would not start: a failure. */
		bench_fail("ring", "DPDK peer: %s (--no-dpdk skips it)",
			   dpdk_peer_status());
		why_no = "DPDK peer failed to start";
		ret = 1;
	}

	cases = calloc(32, sizeof(*cases));
	if (!cases) {
		bench_fail("ring", "%s", strerror(ENOMEM));
		report_flush();
		return 1;
	}
	ncases = add_cases(cases, ncases, TEST_1CORE, dpdk);
	if (two)
		ncases = add_cases(cases, ncases, TEST_2THREAD, dpdk);
	ncases = add_cases(cases, ncases, TEST_POLL, dpdk);
	for (i = 0; i < ncases; i++) {
		int err = case_setup(&cases[i]);

		if (err) {
			bench_fail("ring", "%s: set-up: %s", cases[i].label,
				   strerror(-err));
			report_flush();
			ret = 1;
			goto out;
		}
	}

	if (run_test(cases, ncases, TEST_1CORE, o, ops))
		ret = 1;
	report_flush();
	if (two) {
		uint64_t checked = 0, bad = 0;

		if (run_test(cases, ncases, TEST_2THREAD, o, ops))
			ret = 1;
		for (i = 0; i < ncases; i++) {
			if (cases[i].test != TEST_2THREAD)
				continue;
			checked += cases[i].checked;
			bad += cases[i].bad;
			if (cases[i].bad) {
				bench_fail("ring", "%s: %llu of %llu elements "
					   "arrived wrong", cases[i].label,
					   (unsigned long long)cases[i].bad,
					   (unsigned long long)
					   cases[i].checked);
				ret = 1;
			}
		}
		report_note("ring", "2-thread content check: %llu elements "
			    "checked, %llu wrong", (unsigned long long)checked,
			    (unsigned long long)bad);
	} else {
		/* Nothing to run it on: a skip, not a failure. */
		report_warn("ring", "2-thread test skipped: only one CPU in "
			    "the affinity mask");
	}
	report_flush();
	if (run_test(cases, ncases, TEST_POLL, o, ops))
		ret = 1;
	unmeasured_targets(dpdk, two, why_no);
	report_flush();
out:
	for (i = 0; i < ncases; i++)
		case_teardown(&cases[i]);
	free(cases);
	return ret;
}
