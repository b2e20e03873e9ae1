/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Frees from threads that do not own the pool (uxdp_pool_free_remote): they
 * reach the owner's free list, nothing is lost or handed out twice, and the
 * path is clean under ThreadSanitizer.
 */
#include "t_helpers.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <uxdp/uxdp.h>

#define NCHUNKS 256
#define ROUNDS 20000

struct t_remote {
	struct uxdp_pool *pool;
	/* SPSC hand-off from the owner to the freeing thread. */
	struct uxdp_ring prod, cons;
	void *mem;
	uint64_t freed;
};

static void *t_freer(void *arg)
{
	struct t_remote *r = arg;
	struct uxdp_buff *bufs[32];
	uint32_t idx, n, i;

	for (;;) {
		n = uxdp_ring_cons_peek(&r->cons, 32, &idx);
		for (i = 0; i < n; i++) {
			uint64_t v = *uxdp_ring_addr(&r->cons, idx + i);

			if (!v)
				goto out;
			bufs[i] = (struct uxdp_buff *)(uintptr_t)v;
		}
		uxdp_ring_cons_release(&r->cons, n);
		if (n) {
			uxdp_pool_free_remote(r->pool, bufs, n);
			r->freed += n;
		} else {
			sched_yield();	/* a loaded machine: let the owner run */
		}
	}
out:
	/* Free what preceded the end marker, then stop. */
	if (i) {
		uxdp_pool_free_remote(r->pool, bufs, i);
		r->freed += i;
	}
	uxdp_ring_cons_release(&r->cons, n);
	return NULL;
}

static void t_send(struct t_remote *r, uint64_t v)
{
	uint32_t idx;

	while (!uxdp_ring_prod_reserve(&r->prod, 1, &idx))
		sched_yield();
	*uxdp_ring_addr(&r->prod, idx) = v;
	uxdp_ring_prod_submit(&r->prod, 1);
}

/* The owner allocates, another thread frees; buffers come back. */
static void test_remote_free_roundtrip(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 2048,
			  .fill_size = NCHUNKS);
	struct uxdp_umem *u = uxdp_umem_create(NULL, NCHUNKS * 2048, &o);
	struct uxdp_ring *fill;
	struct uxdp_pool_stats st;
	struct t_remote r;
	uint8_t where[NCHUNKS];
	pthread_t th;
	uint32_t idx, i, round, got = 0;

	(void)state;
	assert_non_null(u);
	memset(&r, 0, sizeof(r));
	r.pool = uxdp_pool_create(u, NULL);
	assert_non_null(r.pool);
	assert_true(uxdp_pool_is_owner(r.pool));
	fill = uxdp_umem_fill_ring(u);
	assert_int_equal(uxdp_ring_prod_reserve(fill, NCHUNKS, &idx), NCHUNKS);
	for (i = 0; i < NCHUNKS; i++)
		*uxdp_ring_addr(fill, idx + i) = (uint64_t)i * 2048;
	uxdp_ring_prod_submit(fill, NCHUNKS);

	r.mem = uxdp_ring_mem_alloc(64, 8);
	assert_non_null(r.mem);
	uxdp_ring_init_prod(&r.prod, r.mem, 64, NULL);
	uxdp_ring_init_cons(&r.cons, r.mem, 64, NULL);
	assert_int_equal(pthread_create(&th, NULL, t_freer, &r), 0);

	for (round = 0; round < ROUNDS; round++) {
		struct uxdp_buff *b[16];
		uint32_t n = uxdp_pool_alloc_batch(r.pool, b, 16);

		for (i = 0; i < n; i++) {
			uxdp_buff_set_size(b[i], 64);
			t_send(&r, (uint64_t)(uintptr_t)b[i]);
		}
		got += n;
	}
	t_send(&r, 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.freed, got);
	/* Far more allocations than chunks: the remote frees were reused. */
	assert_true(got > 10 * NCHUNKS);

	/* Everything is back in the pool, or still on the fill ring (the
	 * free list, fed by the remote frees, is used first): audit drains
	 * the pending ones. */
	assert_int_equal(uxdp_pool_audit(r.pool, where), NCHUNKS);
	for (i = 0; i < NCHUNKS; i++)
		if (where[i] != UXDP_LOC_FREE_LIST && where[i] != UXDP_LOC_FILL)
			fail_msg("chunk %u in places 0x%x", i, where[i]);
	assert_int_equal(uxdp_pool_stats(r.pool, &st), 0);
	assert_int_equal(st.outstanding, 0);
	assert_int_equal(st.bad_free, 0);
	assert_int_equal(st.remote_pending, 0);
	assert_int_equal(uxdp_pool_destroy(r.pool), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);
	uxdp_ring_mem_free(r.mem, 64, 8);
}

/*
 * A remote double free is caught at the push: the buffer is queued once,
 * counted once, and handed out once.
 */
static void test_remote_double_free(void **state)
{
	struct uxdp_umem *u = uxdp_umem_create(NULL, 4 * 4096, NULL);
	struct uxdp_pool *p = uxdp_pool_create(u, NULL);
	struct uxdp_ring *fill = uxdp_umem_fill_ring(u);
	struct uxdp_pool_stats st;
	struct uxdp_buff *b[2], *x;
	uint32_t idx;

	(void)state;
	assert_non_null(p);
	uxdp_ring_prod_reserve(fill, 1, &idx);
	*uxdp_ring_addr(fill, idx) = 0;
	uxdp_ring_prod_submit(fill, 1);
	x = uxdp_pool_alloc(p);
	assert_non_null(x);
	b[0] = b[1] = x;
	uxdp_pool_free_remote(p, b, 2);
	uxdp_pool_stats(p, &st);
	assert_int_equal(st.remote_pending, 1);
	assert_int_equal(st.bad_free, 1);
	assert_ptr_equal(uxdp_pool_alloc(p), x);	/* drained, reused */
	uxdp_pool_stats(p, &st);
	assert_int_equal(st.bad_free, 1);
	assert_int_equal(st.outstanding, 1);
	assert_null(uxdp_pool_alloc(p));
	uxdp_buff_free(x);
	assert_int_equal(uxdp_pool_destroy(p), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);
}

/*
 * Two pools on one UMEM, both retired with UXDP_POOL_RETIRE_UMEM while
 * buffers are out; the last buffers of each come home on two threads at
 * once. The UMEM must be destroyed exactly once, by whichever pool goes
 * last (ASan sees a double free or a leak; TSan a race).
 */
struct t_ret {
	struct uxdp_buff *bufs[8];
	uint32_t n;
	uint32_t *go;
};

static void *t_returner(void *arg)
{
	struct t_ret *r = arg;
	uint32_t i;

	while (!__atomic_load_n(r->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < r->n; i++)
		uxdp_pool_free_remote(uxdp_buff_pool(r->bufs[i]), &r->bufs[i],
				      1);
	return NULL;
}

static void test_retire_shared_umem(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = 2048);
	int round, rounds = T_TSAN ? 200 : 2000;

	(void)state;
	for (round = 0; round < rounds; round++) {
		struct uxdp_umem *u = uxdp_umem_create(NULL, 64 * 2048, &uo);
		struct uxdp_pool *p[2];
		struct t_ret r[2];
		pthread_t th[2];
		uint32_t go = 0;
		int k;

		assert_non_null(u);
		for (k = 0; k < 2; k++) {
			p[k] = uxdp_pool_create(u, NULL);
			assert_non_null(p[k]);
			assert_int_equal(uxdp_pool_fill_range(p[k], k * 32, 32),
					 32);
			r[k].go = &go;
			r[k].n = 1 + (uint32_t)(round + k) % 8;
			assert_int_equal(uxdp_pool_alloc_batch(p[k], r[k].bufs,
							       r[k].n),
					 r[k].n);
		}
		for (k = 0; k < 2; k++) {
			assert_int_equal(pthread_create(&th[k], NULL,
							t_returner, &r[k]), 0);
			uxdp_pool_retire(p[k], UXDP_POOL_RETIRE_UMEM);
		}
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		for (k = 0; k < 2; k++)
			pthread_join(th[k], NULL);
		/* Nothing to check here: u is gone (ASan would see a
		 * use); LeakSanitizer says whether it was freed. */
	}
}

/*
 * After uxdp_pool_retire() every return takes the pool's lock, whatever
 * the path and the thread, and the one that brings the last buffer home
 * frees the pool (issue 13: a release did neither). Four threads hold a
 * share of the buffers each. One returns its share with
 * uxdp_pool_free_remote() from the moment it starts, racing with the
 * retire (that call is safe at any time). The others start returning once
 * the retire has returned, as a datapath learns that its device went away:
 * by release, uxdp_buff_free() and uxdp_pool_free_batch(), one buffer at a
 * time, interleaved. Whichever is last, the pool goes exactly once: then
 * the UMEM can be destroyed (ASan: no double free; LSan, in the rounds
 * that retire with UXDP_POOL_RETIRE_UMEM: no leak; TSan: no race).
 */
#define RET_SHARE	8

struct t_retirer {
	struct uxdp_pool *pool;
	struct uxdp_buff *bufs[RET_SHARE];
	uint64_t want[RET_SHARE];	/* release: the addresses expected */
	uint64_t got[RET_SHARE];
	int path;			/* 0 free_remote, 1 release, 2 free,
					 * 3 free_batch */
	const uint32_t *go;
};

static void *t_retire_returner(void *arg)
{
	struct t_retirer *r = arg;
	uint32_t i;

	if (r->path)
		while (!__atomic_load_n(r->go, __ATOMIC_ACQUIRE))
			sched_yield();
	for (i = 0; i < RET_SHARE; i++) {
		switch (r->path) {
		case 0:
			uxdp_pool_free_remote(r->pool, &r->bufs[i], 1);
			break;
		case 1:
			r->got[i] = uxdp_pool_release(r->bufs[i]);
			break;
		case 2:
			uxdp_buff_free(r->bufs[i]);
			break;
		default:
			uxdp_pool_free_batch(r->pool, &r->bufs[i], 1);
			break;
		}
		if (i % 3 == 0)
			sched_yield();
	}
	return NULL;
}

static void test_retire_returns_from_threads(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = 2048);
	int round, rounds = T_TSAN ? 100 : 1000;

	(void)state;
	for (round = 0; round < rounds; round++) {
		struct uxdp_umem *u = uxdp_umem_create(NULL, 64 * 2048, &uo);
		uint32_t flags = round % 2 ? UXDP_POOL_RETIRE_UMEM : 0;
		struct t_retirer r[4];
		struct uxdp_pool *p;
		pthread_t th[4];
		uint32_t go = 0, i;
		int k;

		assert_non_null(u);
		p = uxdp_pool_create(u, NULL);
		assert_non_null(p);
		assert_int_equal(uxdp_pool_fill_range(p, 0, 4 * RET_SHARE),
				 4 * RET_SHARE);
		for (k = 0; k < 4; k++) {
			memset(&r[k], 0, sizeof(r[k]));
			r[k].pool = p;
			r[k].path = k;
			r[k].go = &go;
			assert_int_equal(uxdp_pool_alloc_batch(p, r[k].bufs,
							       RET_SHARE),
					 RET_SHARE);
			for (i = 0; i < RET_SHARE; i++)
				r[k].want[i] = uxdp_buff_umem_addr(r[k].bufs[i]);
		}
		/* The remote freer starts first, so that its frees race with
		 * the retire; the rest wait for it to have returned. */
		assert_int_equal(pthread_create(&th[0], NULL,
						t_retire_returner, &r[0]), 0);
		for (k = 1; k < 4; k++)
			assert_int_equal(pthread_create(&th[k], NULL,
							t_retire_returner,
							&r[k]), 0);
		uxdp_pool_retire(p, flags);
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		for (k = 0; k < 4; k++)
			assert_int_equal(pthread_join(th[k], NULL), 0);
		for (i = 0; i < RET_SHARE; i++)
			assert_int_equal(r[1].got[i], r[1].want[i]);
		/* Every buffer is home: the pool is gone, unbound. */
		if (!flags)
			assert_int_equal(uxdp_umem_destroy(u), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_free_roundtrip),
		cmocka_unit_test(test_remote_double_free),
		cmocka_unit_test(test_retire_shared_umem),
		cmocka_unit_test(test_retire_returns_from_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
