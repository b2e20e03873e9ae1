/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring layer, two threads: a producer and a consumer that share nothing but
 * the ring memory and synchronise only through the ring's own acquire and
 * release (A-D in <uxdp/ring.h>). The consumer checks the order and content
 * of every entry, so a missing or misplaced barrier shows up here as a stale
 * or torn entry, and under ThreadSanitizer (-DUXDP_SANITIZE=thread) as a
 * data race. The indices start just below 2^32 so the run crosses the wrap.
 *
 * UXDP_STRESS_N=<entries> in the environment overrides the entry count, for
 * quick runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "t_helpers.h"

#include <uxdp/ring.h>

#define T_STRESS_N	10000000ULL	/* entries per test */
#define T_STRESS_START	0xffff0000U	/* indices cross 2^32 after 64 Ki */
#define T_MAX_BATCH	64
#define T_YIELD_EVERY	64		/* full/empty polls between yields */
#define T_CLOCK_EVERY	4096		/* full/empty polls between clocks */
#define T_TIMEOUT_S	150.0		/* a lost entry fails, not hangs */

enum t_mode {
	T_ADDR_FIXED,	/* address ring, reserve (all or nothing), peek */
	T_DESC_RANDOM,	/* descriptor ring, reserve_batch / peek, 1..64 */
};

/* One thread's side of the ring. */
struct t_side {
	struct uxdp_ring r;
	enum t_mode mode;
	uint64_t n;		/* entries to move */
	uint64_t seed;		/* batch sizes */
	double deadline;
	/* Results: written by the thread, read after pthread_join(). */
	uint64_t done;		/* entries moved */
	uint64_t bad;		/* entries with the wrong content */
	uint64_t first_bad;	/* sequence number of the first of those */
	uint64_t bad_idx;	/* reserve/peek returned an unexpected index */
	uint64_t stalls;	/* polls that found the ring full or empty */
	bool timed_out;
};

static double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The ring was full (producer) or empty (consumer): let the other side run
 * now and then, and give up at the deadline. Returns true to give up.
 */
static bool t_stall(struct t_side *s)
{
	s->stalls++;
	if (s->stalls % T_YIELD_EVERY == 0)
		sched_yield();
	if (s->stalls % T_CLOCK_EVERY == 0 && t_now() > s->deadline) {
		s->timed_out = true;
		return true;
	}
	return false;
}

/* How many to ask for next, at most @left. */
static uint32_t t_batch(struct t_side *s, uint64_t left, uint64_t round)
{
	uint32_t want;

	if (s->mode == T_ADDR_FIXED)
		want = 1 + round % 16;
	else
		want = 1 + t_rand(&s->seed) % T_MAX_BATCH;
	return want < left ? want : (uint32_t)left;
}

/* Entry number @k (0-based) carries sequence number k + 1, never 0. */
static void t_write(struct t_side *s, uint32_t idx, uint64_t seq)
{
	struct uxdp_desc *d;

	if (s->mode == T_ADDR_FIXED) {
		*uxdp_ring_addr(&s->r, idx) = seq;
		return;
	}
	d = uxdp_ring_desc(&s->r, idx);
	d->addr = seq;
	d->len = (uint32_t)(seq * 7);
	d->options = (uint32_t)(seq & 1);
}

static bool t_read_ok(struct t_side *s, uint32_t idx, uint64_t seq)
{
	const struct uxdp_desc *d;

	if (s->mode == T_ADDR_FIXED)
		return *uxdp_ring_addr(&s->r, idx) == seq;
	d = uxdp_ring_desc(&s->r, idx);
	return d->addr == seq && d->len == (uint32_t)(seq * 7) &&
	       d->options == (uint32_t)(seq & 1);
}

static void *t_producer(void *arg)
{
	struct t_side *s = arg;
	uint32_t next = T_STRESS_START, want, n, idx, i;
	uint64_t done = 0, round = 0;

	while (done < s->n) {
		want = t_batch(s, s->n - done, round);
		if (s->mode == T_ADDR_FIXED)
			n = uxdp_ring_prod_reserve(&s->r, want, &idx);
		else
			n = uxdp_ring_prod_reserve_batch(&s->r, want, &idx);
		if (!n) {
			if (t_stall(s))
				break;
			continue;
		}
		if (idx != next)
			s->bad_idx++;
		for (i = 0; i < n; i++)
			t_write(s, idx + i, done + i + 1);
		if (s->mode == T_DESC_RANDOM && (s->seed >> 40 & 1))
			uxdp_ring_prod_publish(&s->r);
		else
			uxdp_ring_prod_submit(&s->r, n);
		done += n;
		next += n;
		round++;
	}
	s->done = done;
	return NULL;
}

static void *t_consumer(void *arg)
{
	struct t_side *s = arg;
	uint32_t next = T_STRESS_START, want, n, idx, i;
	uint64_t done = 0;

	while (done < s->n) {
		if (s->mode == T_ADDR_FIXED)
			want = T_MAX_BATCH / 2;
		else
			want = t_batch(s, s->n - done, 0);
		n = uxdp_ring_cons_peek(&s->r, want, &idx);
		if (!n) {
			if (t_stall(s))
				break;
			continue;
		}
		if (idx != next)
			s->bad_idx++;
		for (i = 0; i < n; i++) {
			if (t_read_ok(s, idx + i, done + i + 1))
				continue;
			if (!s->bad++)
				s->first_bad = done + i + 1;
		}
		if (s->mode == T_DESC_RANDOM && (s->seed >> 40 & 1))
			uxdp_ring_cons_publish(&s->r);
		else
			uxdp_ring_cons_release(&s->r, n);
		done += n;
		next += n;
	}
	s->done = done;
	return NULL;
}

/* T_STRESS_N, or UXDP_STRESS_N from the environment. */
static uint64_t t_stress_count(void)
{
	const char *env = getenv("UXDP_STRESS_N");
	unsigned long long n;
	char *end;

	if (!env || !*env)
		return T_STRESS_N;
	errno = 0;
	n = strtoull(env, &end, 0);
	if (errno || *end || !n)
		fail_msg("UXDP_STRESS_N=%s: want a positive count", env);
	return n;
}

static void t_stress_run(enum t_mode mode, uint32_t entries)
{
	uint32_t esz = mode == T_ADDR_FIXED ? sizeof(uint64_t) :
					      sizeof(struct uxdp_desc);
	struct t_side prod, cons;
	pthread_t tp, tc;
	uint32_t *pw, *cw;
	double t0, dt;
	uint64_t n;
	char *mem;

	n = t_stress_count();
	mem = uxdp_ring_mem_alloc(entries, esz);
	assert_non_null(mem);
	pw = (uint32_t *)(mem + UXDP_RING_OFF_PRODUCER);
	cw = (uint32_t *)(mem + UXDP_RING_OFF_CONSUMER);
	*pw = T_STRESS_START;
	*cw = T_STRESS_START;

	memset(&prod, 0, sizeof(prod));
	memset(&cons, 0, sizeof(cons));
	assert_int_equal(uxdp_ring_init_prod(&prod.r, mem, entries, NULL), 0);
	assert_int_equal(uxdp_ring_init_cons(&cons.r, mem, entries, NULL), 0);
	prod.mode = cons.mode = mode;
	prod.n = cons.n = n;
	prod.seed = 0x243f6a8885a308d3ULL;
	cons.seed = 0x13198a2e03707344ULL;

	t0 = t_now();
	prod.deadline = cons.deadline = t0 + T_TIMEOUT_S;
	assert_int_equal(pthread_create(&tc, NULL, t_consumer, &cons), 0);
	assert_int_equal(pthread_create(&tp, NULL, t_producer, &prod), 0);
	assert_int_equal(pthread_join(tp, NULL), 0);
	assert_int_equal(pthread_join(tc, NULL), 0);
	dt = t_now() - t0;

	print_message("%s: %" PRIu64 " entries, %u-entry ring, %.2f s "
		      "(%.1f M/s), %" PRIu64 " full / %" PRIu64
		      " empty polls\n",
		      mode == T_ADDR_FIXED ? "addr" : "desc", n, entries, dt,
		      n / dt / 1e6, prod.stalls, cons.stalls);
	if (cons.bad)
		print_message("%" PRIu64 " bad entries, first seq %" PRIu64
			      "\n", cons.bad, cons.first_bad);

	assert_false(prod.timed_out);
	assert_false(cons.timed_out);
	assert_int_equal(prod.done, n);
	assert_int_equal(cons.done, n);
	assert_int_equal(cons.bad, 0);
	assert_int_equal(prod.bad_idx, 0);
	assert_int_equal(cons.bad_idx, 0);
	assert_int_equal(*pw, (uint32_t)(T_STRESS_START + n));
	assert_int_equal(*cw, (uint32_t)(T_STRESS_START + n));
	assert_int_equal(uxdp_ring_count(&cons.r), 0);
	/* The indices crossed 2^32 (unless UXDP_STRESS_N made it short). */
	if (n >= (uint64_t)(0U - T_STRESS_START) && n < T_STRESS_START)
		assert_true(*pw < T_STRESS_START);
	uxdp_ring_mem_free(mem, entries, esz);
}

/* Address ring, fixed batches: strict order of a sequence of addresses. */
static void test_stress_addr(void **state)
{
	(void)state;
	t_stress_run(T_ADDR_FIXED, 128);
}

/* Descriptor ring, random batches of 1..64 on both sides. */
static void test_stress_desc_random_batch(void **state)
{
	(void)state;
	t_stress_run(T_DESC_RANDOM, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_addr),
		cmocka_unit_test(test_stress_desc_random_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
