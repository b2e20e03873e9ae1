/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The buffer pool: single and batched allocation, aligned and unaligned,
 * several chunk sizes and headrooms; exhaustion; invalid and duplicate fill
 * addresses; set_size and headroom arithmetic; free list, release and
 * completion; the accounting invariant after random operation sequences;
 * teardown.
 *
 * Every test loops over the configurations itself (FOR_ALL_CFGS) and ends by
 * checking the accounting invariant: each chunk in exactly one place.
 */
#include "t_helpers.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <uxdp/uxdp.h>

#define NCHUNKS 64

struct t_cfg {
	uint32_t chunk_size;
	uint32_t headroom;
	bool unaligned;
};

static const struct t_cfg cfgs[] = {
	{ 2048, 0, false },
	{ 2048, 128, false },
	{ 2048, 2048 - UXDP_UMEM_CHUNK_RESERVED, false },
	{ 4096, 0, false },
	{ 4096, 256, false },
	{ 4096, 1000, false },
	{ 2048, 0, true },
	{ 3000, 64, true },
	{ 4096, 512, true },
};

#define FOR_ALL_CFGS(c) \
	for (const struct t_cfg *c = cfgs; c < cfgs + ARRAY_LEN(cfgs); c++)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* One UMEM + pool, plus the application's view of where its chunks are. */
struct t_env {
	const struct t_cfg *cfg;
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	struct uxdp_ring *fill;		/* app side */
	struct uxdp_ring *comp;		/* app side */
	uint32_t nchunks;
	bool app[NCHUNKS];		/* chunks in the application's hands */
};

static void t_env_init(struct t_env *e, const struct t_cfg *c)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = c->chunk_size,
			  .headroom = c->headroom,
			  .flags = c->unaligned ? UXDP_UMEM_F_UNALIGNED : 0,
			  .fill_size = 128, .comp_size = 128);
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->cfg = c;
	e->umem = uxdp_umem_create(NULL, (uint64_t)NCHUNKS * c->chunk_size,
				   &o);
	if (!e->umem)
		fail_msg("umem create: %s", uxdp_errmsg());
	e->pool = uxdp_pool_create(e->umem, NULL);
	assert_non_null(e->pool);
	e->fill = uxdp_umem_fill_ring(e->umem);
	e->comp = uxdp_umem_comp_ring(e->umem);
	e->nchunks = uxdp_umem_nchunks(e->umem);
	assert_int_equal(e->nchunks, NCHUNKS);
	for (i = 0; i < NCHUNKS; i++)
		e->app[i] = true;
}

/* Chunk base address of chunk @i (unaligned tests use chunk multiples). */
static uint64_t t_chunk_addr(const struct t_env *e, uint32_t i)
{
	return (uint64_t)i * e->cfg->chunk_size;
}

static uint32_t t_addr_chunk(const struct t_env *e, uint64_t addr)
{
	return (uint32_t)(uxdp_umem_addr_offset(addr) / e->cfg->chunk_size);
}

/* Post raw addresses on the fill ring (may be invalid or duplicates). */
static void t_post_raw(struct t_env *e, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx, i;

	assert_int_equal(uxdp_ring_prod_reserve(e->fill, n, &idx), n);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(e->fill, idx + i) = addrs[i];
	uxdp_ring_prod_submit(e->fill, n);
}

/* Post chunks the application holds; they leave its hands. */
static void t_post(struct t_env *e, const uint32_t *chunks, uint32_t n)
{
	uint64_t addrs[NCHUNKS];
	uint32_t i;

	assert_true(n <= NCHUNKS);
	for (i = 0; i < n; i++) {
		assert_true(e->app[chunks[i]]);
		e->app[chunks[i]] = false;
		addrs[i] = t_chunk_addr(e, chunks[i]);
	}
	t_post_raw(e, addrs, n);
}

static void t_post_range(struct t_env *e, uint32_t first, uint32_t n)
{
	uint32_t chunks[NCHUNKS], i;

	for (i = 0; i < n; i++)
		chunks[i] = first + i;
	t_post(e, chunks, n);
}

/* Post every chunk the application holds. */
static void t_post_app(struct t_env *e)
{
	uint32_t chunks[NCHUNKS], i, n = 0;

	for (i = 0; i < NCHUNKS; i++)
		if (e->app[i])
			chunks[n++] = i;
	if (n)
		t_post(e, chunks, n);
}

/* Chunk index a pool buffer sits in. */
static uint32_t t_buf_chunk(const struct t_env *e, const struct uxdp_buff *b)
{
	uint64_t off = (uint64_t)((char *)b->data_hard_start -
				  (char *)uxdp_umem_area(e->umem));

	return (uint32_t)((off - e->cfg->headroom) / e->cfg->chunk_size);
}

/* Drain the completion ring into the application's hands. */
static uint32_t t_drain_comp(struct t_env *e)
{
	uint32_t idx, n, i;

	n = uxdp_ring_cons_peek(e->comp, NCHUNKS, &idx);
	for (i = 0; i < n; i++) {
		uint32_t c = t_addr_chunk(e, *uxdp_ring_addr(e->comp, idx + i));

		assert_false(e->app[c]);
		e->app[c] = true;
	}
	uxdp_ring_cons_release(e->comp, n);
	return n;
}

/*
 * The invariant: every chunk is in exactly one place. @held lists buffers
 * the test holds (allocated, so the pool reports them as DRIVER).
 */
static void t_check_invariant(struct t_env *e, struct uxdp_buff **held,
			      uint32_t nheld)
{
	uint8_t where[NCHUNKS];
	uint32_t i, driver = 0;
	int placed = uxdp_pool_audit(e->pool, where);

	assert_true(placed >= 0);
	for (i = 0; i < nheld; i++)
		assert_true(where[t_buf_chunk(e, held[i])] & UXDP_LOC_DRIVER);
	for (i = 0; i < NCHUNKS; i++) {
		if (e->app[i]) {
			if (where[i] & UXDP_LOC_APP)
				where[i] |= UXDP_LOC_DUP;
			where[i] |= UXDP_LOC_APP;
		}
		driver += !!(where[i] & UXDP_LOC_DRIVER);
		if (where[i] == 0 || (where[i] & (where[i] - 1)))
			fail_msg("cfg %u/%u%s: chunk %u is in places 0x%x "
				 "(want exactly one)", e->cfg->chunk_size,
				 e->cfg->headroom,
				 e->cfg->unaligned ? "/unaligned" : "", i,
				 where[i]);
	}
	assert_int_equal(driver, nheld);
}

static void t_env_fini(struct t_env *e, struct uxdp_buff **held, uint32_t n)
{
	t_check_invariant(e, held, n);
	uxdp_pool_free_batch(e->pool, held, n);
	assert_int_equal(uxdp_pool_destroy(e->pool), 0);
	assert_int_equal(uxdp_umem_destroy(e->umem), 0);
}

static struct uxdp_pool_stats t_stats(const struct t_env *e)
{
	struct uxdp_pool_stats st;

	assert_int_equal(uxdp_pool_stats(e->pool, &st), 0);
	return st;
}

/* Release a buffer to the application, which now holds its chunk. */
static void t_env_note_release(struct t_env *e, struct uxdp_buff *b)
{
	uint32_t c = t_buf_chunk(e, b);

	assert_true(uxdp_pool_release(b) != UINT64_MAX);
	assert_false(e->app[c]);
	e->app[c] = true;
}

/* ---- tests ----------------------------------------------------------------- */

/* Single alloc sets data/data_meta/data_end; the head describes its chunk. */
static void test_single_alloc_sets_pointers(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *held[4];
		struct t_env e;
		char *area;
		uint32_t i;

		t_env_init(&e, c);
		area = uxdp_umem_area(e.umem);
		t_post_range(&e, 5, 4);
		for (i = 0; i < 4; i++) {
			struct uxdp_buff *b = uxdp_pool_alloc(e.pool);

			assert_non_null(b);
			held[i] = b;
			assert_ptr_equal(b->data_hard_start,
					 area + t_chunk_addr(&e, 5 + i) +
					 c->headroom);
			assert_ptr_equal(b->data, (char *)b->data_hard_start +
					 UXDP_PACKET_HEADROOM);
			assert_ptr_equal(b->data_meta, b->data);
			assert_ptr_equal(b->data_end, b->data);
			assert_int_equal(b->flags, 0);
			assert_int_equal(b->frame_sz,
					 c->chunk_size - c->headroom);
			assert_ptr_equal(uxdp_buff_pool(b), e.pool);
		}
		assert_int_equal(t_stats(&e).alloc, 4);
		assert_int_equal(t_stats(&e).outstanding, 4);
		t_env_fini(&e, held, 4);
	}
}

/* Same fill content: the batch path returns the same buffers in order. */
static void test_batch_matches_single(void **state)
{
	static const uint32_t order[] = { 9, 3, 63, 0, 17, 42, 8, 1, 33 };
	const uint32_t n = ARRAY_LEN(order);

	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *single[ARRAY_LEN(order)];
		struct uxdp_buff *batch[ARRAY_LEN(order) + 4];
		void *hs[ARRAY_LEN(order)];
		struct t_env e;
		uint32_t i;

		t_env_init(&e, c);
		t_post(&e, order, n);
		for (i = 0; i < n; i++) {
			single[i] = uxdp_pool_alloc(e.pool);
			assert_non_null(single[i]);
			hs[i] = single[i]->data_hard_start;
			assert_int_equal(t_buf_chunk(&e, single[i]), order[i]);
		}
		/* Hand them back to the application, then post them again. */
		for (i = 0; i < n; i++) {
			uxdp_pool_release(single[i]);
			e.app[order[i]] = true;
		}
		t_check_invariant(&e, NULL, 0);
		t_post(&e, order, n);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, batch, n + 4), n);
		for (i = 0; i < n; i++) {
			assert_ptr_equal(batch[i]->data_hard_start, hs[i]);
			if (!c->unaligned)	/* aligned: chunk i is head i */
				assert_ptr_equal(batch[i], single[i]);
		}
		t_env_fini(&e, batch, n);
	}
}

/* The batch path leaves data alone; set_size does the arithmetic. */
static void test_batch_then_set_size(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[2];
		struct t_env e;
		char *sentinel = (char *)0x1234;
		uint32_t max = c->chunk_size - c->headroom -
			       UXDP_UMEM_CHUNK_RESERVED + UXDP_MIN_PACKET_ROOM;

		t_env_init(&e, c);
		t_post_range(&e, 0, 1);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 1), 1);
		b[0]->data = sentinel;
		uxdp_buff_free(b[0]);
		/* From the free list: still no pointer writes. */
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 1), 1);
		assert_ptr_equal(b[0]->data, sentinel);

		uxdp_buff_set_size(b[0], 60);
		assert_ptr_equal(b[0]->data, (char *)b[0]->data_hard_start +
				 UXDP_PACKET_HEADROOM);
		assert_ptr_equal(b[0]->data_meta, b[0]->data);
		assert_int_equal(uxdp_buff_len(b[0]), 60);
		/* The largest packet a chunk takes still ends inside it. */
		uxdp_buff_set_size(b[0], max);
		assert_true((char *)b[0]->data_end <=
			    (char *)uxdp_umem_area(e.umem) + c->chunk_size);
		t_env_fini(&e, b, 1);
	}
}

/* Out of buffers: batch returns fewer, then 0; single returns NULL. */
static void test_exhaustion(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[NCHUNKS];
		struct uxdp_pool_stats st;
		struct t_env e;

		t_env_init(&e, c);
		t_post_range(&e, 0, 10);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 16), 10);
		assert_int_equal(t_stats(&e).fill_empty, 0);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + 10, 16), 0);
		assert_int_equal(t_stats(&e).fill_empty, 1);
		assert_null(uxdp_pool_alloc(e.pool));
		assert_int_equal(t_stats(&e).fill_empty, 2);
		assert_false(uxdp_pool_can_alloc(e.pool, 1));
		assert_int_equal(t_stats(&e).fill_empty, 3);

		/* Free three: they come back before anything else. */
		uxdp_pool_free_batch(e.pool, b + 7, 3);
		assert_true(uxdp_pool_can_alloc(e.pool, 3));
		assert_false(uxdp_pool_can_alloc(e.pool, 4));
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + 7, 8), 3);
		st = t_stats(&e);
		assert_int_equal(st.outstanding, 10);
		assert_int_equal(st.free_list, 0);
		t_env_fini(&e, b, 10);
	}
}

/* Invalid fill addresses are consumed, skipped and counted; never crash. */
static void test_invalid_fill_addrs(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		uint64_t size = (uint64_t)NCHUNKS * c->chunk_size;
		uint64_t bad[] = {
			size, size + 1, UINT64_MAX, 1ULL << 47,
			/* unaligned: base fits, chunk runs past the end */
			size - c->chunk_size + 1,
		};
		uint32_t nbad = c->unaligned ? 5 : 4;
		uint64_t mixed[8];
		struct uxdp_buff *b[8];
		struct t_env e;
		uint32_t n;

		t_env_init(&e, c);
		mixed[0] = bad[0];
		mixed[1] = t_chunk_addr(&e, 2);
		mixed[2] = bad[1];
		mixed[3] = bad[2];
		mixed[4] = t_chunk_addr(&e, 3);
		mixed[5] = bad[3];
		mixed[6] = bad[nbad - 1];
		e.app[2] = e.app[3] = false;
		t_post_raw(&e, mixed, 7);
		n = uxdp_pool_alloc_batch(e.pool, b, 8);
		assert_int_equal(n, 2);
		assert_int_equal(t_buf_chunk(&e, b[0]), 2);
		assert_int_equal(t_buf_chunk(&e, b[1]), 3);
		assert_int_equal(t_stats(&e).fill_invalid, 5);

		/* Single path: skips the invalid ones too. */
		mixed[0] = bad[2];
		mixed[1] = bad[0];
		mixed[2] = t_chunk_addr(&e, 4);
		e.app[4] = false;
		t_post_raw(&e, mixed, 3);
		b[2] = uxdp_pool_alloc(e.pool);
		assert_non_null(b[2]);
		assert_int_equal(t_buf_chunk(&e, b[2]), 4);
		assert_int_equal(t_stats(&e).fill_invalid, 7);
		t_env_fini(&e, b, 3);
	}
}

/* An aligned-mode address anywhere in a chunk names that chunk. */
static void test_aligned_addr_in_chunk(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[2];
		uint64_t a[2];
		struct t_env e;

		if (c->unaligned)
			continue;
		t_env_init(&e, c);
		a[0] = t_chunk_addr(&e, 7) + 1;
		a[1] = t_chunk_addr(&e, 9) + c->chunk_size - 1;
		e.app[7] = e.app[9] = false;
		t_post_raw(&e, a, 2);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 2), 2);
		assert_int_equal(t_buf_chunk(&e, b[0]), 7);
		assert_int_equal(t_buf_chunk(&e, b[1]), 9);
		t_env_fini(&e, b, 2);
	}
}

/* Unaligned mode: the fill ring's offset bits are ignored. */
static void test_unaligned_fill_offset_ignored(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b;
		struct t_env e;
		uint64_t a;

		if (!c->unaligned)
			continue;
		t_env_init(&e, c);
		a = t_chunk_addr(&e, 6) | (77ULL << UXDP_UNALIGNED_BUF_OFFSET_SHIFT);
		e.app[6] = false;
		t_post_raw(&e, &a, 1);
		b = uxdp_pool_alloc(e.pool);
		assert_non_null(b);
		assert_int_equal(t_buf_chunk(&e, b), 6);
		t_env_fini(&e, &b, 1);
	}
}

/*
 * Aligned mode: a chunk posted twice, or posted while the pool still holds it
 * (allocated or on the free list), is handed out once; the rest is counted.
 */
static void test_duplicate_fill_addrs(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[8], *x;
		uint64_t a[4];
		struct t_env e;

		if (c->unaligned)
			continue;
		t_env_init(&e, c);
		a[0] = t_chunk_addr(&e, 1);
		a[1] = t_chunk_addr(&e, 1) + 100;	/* same chunk */
		a[2] = t_chunk_addr(&e, 2);
		a[3] = t_chunk_addr(&e, 1);
		e.app[1] = e.app[2] = false;
		t_post_raw(&e, a, 4);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 8), 2);
		assert_int_equal(t_stats(&e).fill_dup, 2);

		/* Chunk 2 is allocated, chunk 1 goes on the free list: posting
		 * either again must not hand it out a second time. */
		uxdp_buff_free(b[0]);
		a[0] = t_chunk_addr(&e, 2);
		a[1] = t_chunk_addr(&e, 1);
		t_post_raw(&e, a, 2);
		x = uxdp_pool_alloc(e.pool);	/* the free list first */
		assert_ptr_equal(x, b[0]);
		assert_null(uxdp_pool_alloc(e.pool));
		assert_int_equal(t_stats(&e).fill_dup, 4);
		b[0] = x;
		t_env_fini(&e, b, 2);
	}
}

/* Free list: LIFO reuse before the fill ring; double free is ignored. */
static void test_free_list(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[4], *x;
		struct t_env e;

		t_env_init(&e, c);
		t_post_range(&e, 0, 4);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 3), 3);
		uxdp_buff_free(b[0]);
		uxdp_buff_free(b[1]);
		uxdp_buff_free(b[1]);		/* double free */
		assert_int_equal(t_stats(&e).bad_free, 1);
		assert_int_equal(t_stats(&e).free_list, 2);
		assert_int_equal(uxdp_pool_release(b[0]), UINT64_MAX);
		assert_int_equal(t_stats(&e).bad_free, 2);
		t_check_invariant(&e, b + 2, 1);

		x = uxdp_pool_alloc(e.pool);
		assert_ptr_equal(x, b[1]);	/* last freed, first out */
		assert_ptr_equal(x->data, (char *)x->data_hard_start +
				 UXDP_PACKET_HEADROOM);
		b[1] = x;
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, &x, 1), 1);
		assert_ptr_equal(x, b[0]);
		b[0] = x;
		/* Then the fill ring: chunk 3. */
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + 3, 1), 1);
		assert_int_equal(t_buf_chunk(&e, b[3]), 3);
		t_env_fini(&e, b, 4);
	}
}

/* Release hands the chunk to the application with the kernel's address. */
static void test_release_handle(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b;
		struct t_env e;
		uint64_t h, base;
		char *area;

		t_env_init(&e, c);
		area = uxdp_umem_area(e.umem);
		t_post_range(&e, 11, 1);
		b = uxdp_pool_alloc(e.pool);
		assert_non_null(b);
		/* A program moved the packet start (adjust_head). */
		b->data = (char *)b->data - 14;
		base = t_chunk_addr(&e, 11);
		h = uxdp_pool_release(b);
		e.app[11] = true;
		if (c->unaligned) {
			assert_int_equal(h & UXDP_UNALIGNED_BUF_ADDR_MASK, base);
			assert_int_equal(h >> UXDP_UNALIGNED_BUF_OFFSET_SHIFT,
					 c->headroom + UXDP_PACKET_HEADROOM - 14);
		} else {
			assert_int_equal(h, base + c->headroom +
					 UXDP_PACKET_HEADROOM - 14);
		}
		assert_ptr_equal(uxdp_umem_addr_ptr(area, h), b->data);
		assert_int_equal(t_stats(&e).released, 1);
		assert_int_equal(t_stats(&e).outstanding, 0);
		t_env_fini(&e, NULL, 0);
	}
}

/* Completion ring: addresses posted reach the application, in order. */
static void test_complete(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		uint64_t a[3];
		struct t_env e;
		uint32_t idx;

		t_env_init(&e, c);
		a[0] = t_chunk_addr(&e, 5);
		a[1] = t_chunk_addr(&e, 6);
		a[2] = t_chunk_addr(&e, 7);
		e.app[5] = e.app[6] = e.app[7] = false;
		assert_int_equal(uxdp_pool_complete(e.pool, a, 3), 3);
		t_check_invariant(&e, NULL, 0);
		assert_int_equal(uxdp_ring_cons_peek(e.comp, 8, &idx), 3);
		assert_int_equal(*uxdp_ring_addr(e.comp, idx + 2), a[2]);
		uxdp_ring_cons_cancel(e.comp, 3);
		assert_int_equal(t_drain_comp(&e), 3);
		assert_int_equal(t_stats(&e).completed, 3);
		t_env_fini(&e, NULL, 0);
	}
}

/* The application sees fill slots come free as the pool consumes them. */
static void test_fill_consumer_published(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[NCHUNKS];
		struct t_env e;
		uint32_t n = 0, idx;

		t_env_init(&e, c);
		/* The fill ring is 128 deep; post all 64 chunks. */
		t_post_range(&e, 0, NCHUNKS);
		assert_int_equal(uxdp_ring_prod_nb_free(e.fill, 128), 64);
		n += uxdp_pool_alloc_batch(e.pool, b, 32);
		uxdp_pool_flush(e.pool);
		assert_int_equal(uxdp_ring_prod_nb_free(e.fill, 128), 96);
		n += uxdp_pool_alloc_batch(e.pool, b + n, 64);
		/* Finding the ring empty publishes the consumer on its own
		 * (unaligned mode is out of heads first: it never looks). */
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + n, 1), 0);
		if (c->unaligned)
			uxdp_pool_flush(e.pool);
		assert_int_equal(uxdp_ring_prod_reserve(e.fill, 128, &idx), 128);
		uxdp_ring_prod_cancel(e.fill, 128);
		assert_int_equal(n, NCHUNKS);
		t_env_fini(&e, b, n);
	}
}

/* Unaligned: allocation is also bounded by free heads; release returns them. */
static void test_unaligned_heads(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[NCHUNKS + 1];
		uint64_t a[NCHUNKS];
		struct t_env e;
		uint32_t i, n;

		if (!c->unaligned)
			continue;
		t_env_init(&e, c);
		t_post_range(&e, 0, NCHUNKS);
		n = uxdp_pool_alloc_batch(e.pool, b, NCHUNKS);
		assert_int_equal(n, NCHUNKS);
		/* All heads are out: an overlapping base cannot be served. */
		a[0] = 100;
		t_post_raw(&e, a, 1);
		assert_false(uxdp_pool_can_alloc(e.pool, 1));
		assert_null(uxdp_pool_alloc(e.pool));
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + n, 1), 0);
		/* Release all to the application: heads come back. */
		for (i = 0; i < NCHUNKS; i++) {
			uint64_t h = uxdp_pool_release(b[i]);

			a[i] = h & UXDP_UNALIGNED_BUF_ADDR_MASK;
		}
		/* Now the pending overlapping base (100) is served. */
		b[0] = uxdp_pool_alloc(e.pool);
		assert_non_null(b[0]);
		assert_ptr_equal(b[0]->data_hard_start,
				 (char *)uxdp_umem_area(e.umem) + 100 +
				 c->headroom);
		uxdp_pool_release(b[0]);
		for (i = 0; i < NCHUNKS; i++)
			e.app[i] = true;
		t_env_fini(&e, NULL, 0);
	}
}

/*
 * Random operation sequences: allocate (single or batch), free, release to
 * the application, complete; the application reposts and drains. The
 * invariant holds after every step.
 */
static void test_random_accounting(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *held[NCHUNKS];
		uint64_t seed = 0x9e3779b97f4a7c15ULL ^ c->chunk_size ^
				c->headroom;
		uint32_t nheld = 0, step;
		struct t_env e;

		t_env_init(&e, c);
		for (step = 0; step < 4000; step++) {
			uint32_t op = t_rand(&seed) % 7, k, i;
			uint32_t chunks[NCHUNKS], n = 0;

			switch (op) {
			case 0:	/* application posts some of its chunks */
				for (i = 0; i < NCHUNKS && n < 9; i++)
					if (e.app[i] && t_rand(&seed) % 3 == 0)
						chunks[n++] = i;
				if (uxdp_ring_prod_nb_free(e.fill, n) >= n)
					t_post(&e, chunks, n);
				break;
			case 1:	/* batch alloc */
				k = 1 + t_rand(&seed) % 16;
				k = k > NCHUNKS - nheld ? NCHUNKS - nheld : k;
				nheld += uxdp_pool_alloc_batch(e.pool,
							       held + nheld, k);
				for (i = 0; i < nheld; i++)
					uxdp_buff_set_size(held[i], 64);
				break;
			case 2: { /* single alloc */
				struct uxdp_buff *b = nheld < NCHUNKS ?
					uxdp_pool_alloc(e.pool) : NULL;

				if (b)
					held[nheld++] = b;
				break;
			}
			case 3:	/* free a random held buffer */
			case 4: /* or release it to the application */
			case 5: /* or complete it */
				if (!nheld)
					break;
				k = t_rand(&seed) % nheld;
				if (op == 3) {
					uxdp_buff_free(held[k]);
				} else {
					uint32_t ch = t_buf_chunk(&e, held[k]);
					uint64_t h = uxdp_pool_release(held[k]);

					assert_int_equal(t_addr_chunk(&e, h), ch);
					if (op == 4) {
						e.app[ch] = true;
					} else if (uxdp_pool_complete(e.pool,
								&h, 1) != 1) {
						e.app[ch] = true;
					}
				}
				held[k] = held[--nheld];
				break;
			case 6:
				t_drain_comp(&e);
				uxdp_pool_flush(e.pool);
				break;
			}
			t_check_invariant(&e, held, nheld);
		}
		t_env_fini(&e, held, nheld);
	}
}

/*
 * Teardown: a pool with buffers out refuses to go; a UMEM with a pool
 * refuses to go; once everything is back, a new pool gets every chunk.
 */
static void test_teardown(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[NCHUNKS];
		uint32_t n, i, freed[20];
		struct t_env e;

		t_env_init(&e, c);
		t_post_range(&e, 0, NCHUNKS);
		n = uxdp_pool_alloc_batch(e.pool, b, 40);
		assert_int_equal(n, 40);
		uxdp_pool_free_batch(e.pool, b, 20);
		assert_int_equal(uxdp_pool_destroy(e.pool), -EBUSY);
		assert_non_null(strstr(uxdp_errmsg(), "20 buffers"));
		assert_int_equal(uxdp_umem_destroy(e.umem), -EBUSY);
		assert_non_null(strstr(uxdp_errmsg(), "1 pool is still bound"));

		/* Release 20 to the application, free the rest. */
		for (i = 20; i < 40; i++) {
			e.app[t_buf_chunk(&e, b[i])] = true;
			uxdp_pool_release(b[i]);
		}
		t_check_invariant(&e, NULL, 0);
		for (i = 0; i < 20; i++)
			freed[i] = t_buf_chunk(&e, b[i]);
		assert_int_equal(uxdp_pool_destroy(e.pool), 0);
		/* The free list (20) is the application's again; the 24 still
		 * in the fill ring stay there for the next pool. */
		for (i = 0; i < 20; i++)
			e.app[freed[i]] = true;

		e.pool = uxdp_pool_create(e.umem, NULL);
		assert_non_null(e.pool);
		for (i = 0; i < NCHUNKS; i++)
			if (e.app[i])
				t_post_range(&e, i, 1);
		n = uxdp_pool_alloc_batch(e.pool, b, NCHUNKS);
		assert_int_equal(n, NCHUNKS);
		t_env_fini(&e, b, n);
	}
}

/*
 * Double frees split between the remote and the local paths (issue 6,
 * defect 3): the second return is a counted no-op whichever path it takes,
 * and the buffer is handed out once. Before the fix, free_remote() then
 * uxdp_buff_free() put the buffer on the free list and on the remote stack,
 * and two allocations returned the same buffer.
 */
static void test_remote_and_local_double_free(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[3], *x, *y;
		struct t_env e;
		int path;

		t_env_init(&e, c);
		t_post_range(&e, 0, NCHUNKS);
		for (path = 0; path < 4; path++) {
			uint64_t bad0 = t_stats(&e).bad_free;

			b[0] = uxdp_pool_alloc(e.pool);
			assert_non_null(b[0]);
			switch (path) {
			case 0:	/* remote, then local */
				uxdp_pool_free_remote(e.pool, b, 1);
				uxdp_buff_free(b[0]);
				break;
			case 1:	/* remote, then release */
				uxdp_pool_free_remote(e.pool, b, 1);
				assert_int_equal(uxdp_pool_release(b[0]),
						 UINT64_MAX);
				break;
			case 2:	/* local, then remote */
				uxdp_buff_free(b[0]);
				uxdp_pool_free_remote(e.pool, b, 1);
				break;
			case 3:	/* local batch of two copies, then remote */
				b[1] = b[0];
				uxdp_pool_free_batch(e.pool, b, 2);
				uxdp_pool_free_remote(e.pool, b, 1);
				break;
			}
			x = uxdp_pool_alloc(e.pool);
			y = uxdp_pool_alloc(e.pool);
			assert_non_null(x);
			assert_non_null(y);
			if (x == y)
				fail_msg("path %d: one buffer handed out twice",
					 path);
			assert_int_equal(t_stats(&e).bad_free,
					 bad0 + (path == 3 ? 2 : 1));
			b[0] = x;
			b[1] = y;
			uxdp_pool_free_batch(e.pool, b, 2);
			t_check_invariant(&e, NULL, 0);
		}
		assert_int_equal(t_stats(&e).outstanding, 0);
		t_env_fini(&e, NULL, 0);
	}
}

/*
 * A batch that comes back to the free-list slots it was popped from is
 * taken back by a compare (uxdp_pool_free_batch's fast path). The slots
 * above the count still name their old heads after one of them moved: a
 * buffer freed alone (locally or from another thread) and then again in
 * the batch, or released and then freed in the batch, must be caught as
 * the double free it is, never handed out twice. Batches of NULLs never
 * match an unused slot.
 */
static void test_batch_return_in_place(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *a[NCHUNKS], *all[NCHUNKS], *nul[32] = { 0 };
		struct t_env e;
		uint32_t i, j, n;
		int path;

		t_env_init(&e, c);
		/* Fresh pool: every slot unused. */
		uxdp_pool_free_batch(e.pool, nul, 32);
		assert_int_equal(t_stats(&e).bad_free, 32);
		t_post_range(&e, 0, NCHUNKS);
		n = uxdp_pool_alloc_batch(e.pool, all, NCHUNKS);
		assert_int_equal(n, NCHUNKS);
		uxdp_pool_free_batch(e.pool, all, NCHUNKS);
		for (path = 0; path < 6; path++) {
			uint64_t bad0 = t_stats(&e).bad_free;
			uint64_t freed0 = t_stats(&e).freed, want_bad = 1;

			assert_int_equal(uxdp_pool_alloc_batch(e.pool, a, 32),
					 32);
			switch (path) {
			case 0:	/* alone, then in the batch */
				uxdp_buff_free(a[5]);
				uxdp_pool_free_batch(e.pool, a + 1, 31);
				uxdp_buff_free(a[0]);
				break;
			case 1:	/* released, then in the batch */
				t_env_note_release(&e, a[5]);
				uxdp_pool_free_batch(e.pool, a, 32);
				break;
			case 2:	/* from another thread, then in the batch */
				uxdp_pool_free_remote(e.pool, a + 5, 1);
				uxdp_pool_free_batch(e.pool, a + 1, 31);
				uxdp_buff_free(a[0]);
				break;
			case 3:	/* the whole batch, in place: no error */
				uxdp_pool_free_batch(e.pool, a, 32);
				want_bad = 0;
				break;
			case 4:	/* the same batch twice */
				uxdp_pool_free_batch(e.pool, a, 32);
				uxdp_pool_free_batch(e.pool, a, 32);
				want_bad = 32;
				break;
			case 5:	/* NULLs where the slots hold heads */
				uxdp_pool_free_batch(e.pool, nul, 32);
				uxdp_pool_free_batch(e.pool, a, 32);
				want_bad = 32;
				break;
			}
			assert_int_equal(t_stats(&e).bad_free, bad0 + want_bad);
			assert_int_equal(t_stats(&e).freed,
					 freed0 + 32 - (path == 1));
			/* Everything the pool has, once each. */
			n = uxdp_pool_alloc_batch(e.pool, all, NCHUNKS);
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (all[i] == all[j])
						fail_msg("path %d: buffer %u "
							 "handed out twice",
							 path, i);
			t_check_invariant(&e, all, n);
			uxdp_pool_free_batch(e.pool, all, n);
			t_post_app(&e);
			n = uxdp_pool_alloc_batch(e.pool, all, NCHUNKS);
			assert_int_equal(n, NCHUNKS);
			uxdp_pool_free_batch(e.pool, all, NCHUNKS);
		}
		assert_int_equal(t_stats(&e).outstanding, 0);
		t_env_fini(&e, NULL, 0);
	}
}

/*
 * Remote double frees cannot crowd out a legitimate remote free (defect 4):
 * before the fix the remote queue held one entry per chunk, the double
 * frees filled it, and the last, legitimate free was dropped: the chunk
 * was lost and the pool could never be destroyed.
 */
static void test_remote_double_free_keeps_legit(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		UXDP_DECLARE_OPTS(uxdp_umem_opts, o,
				  .chunk_size = c->chunk_size,
				  .headroom = c->headroom,
				  .flags = c->unaligned ?
					   UXDP_UMEM_F_UNALIGNED : 0);
		struct uxdp_umem *u = uxdp_umem_create(NULL,
						       2ULL * c->chunk_size, &o);
		struct uxdp_pool *p = uxdp_pool_create(u, NULL);
		struct uxdp_ring *fill = uxdp_umem_fill_ring(u);
		struct uxdp_buff *a, *b, *aa[2];
		struct uxdp_pool_stats st;
		uint32_t idx;

		assert_non_null(p);
		assert_int_equal(uxdp_ring_prod_reserve(fill, 2, &idx), 2);
		*uxdp_ring_addr(fill, idx) = 0;
		*uxdp_ring_addr(fill, idx + 1) = c->chunk_size;
		uxdp_ring_prod_submit(fill, 2);
		a = uxdp_pool_alloc(p);
		b = uxdp_pool_alloc(p);
		assert_non_null(a);
		assert_non_null(b);
		uxdp_buff_free(a);
		aa[0] = aa[1] = a;
		uxdp_pool_free_remote(p, aa, 2);	/* both bad */
		uxdp_pool_free_remote(p, &b, 1);	/* legitimate */
		uxdp_pool_stats(p, &st);
		assert_int_equal(st.bad_free, 1);	/* the queued dup */
		assert_int_equal(uxdp_pool_destroy(p), 0);
		assert_int_equal(uxdp_umem_destroy(u), 0);
	}
}

/*
 * Every free path refuses a buffer of another pool and counts it (defect
 * 5: free_remote() used to queue it and the owner's drain then read and
 * wrote outside its arrays; ASan catches that here).
 */
static void test_foreign_buffer_every_path(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct t_env a, b;
		struct uxdp_buff *x, *bufs[2];

		t_env_init(&a, c);
		t_env_init(&b, c);
		t_post_range(&a, 0, 4);
		t_post_range(&b, 0, 4);
		x = uxdp_pool_alloc(b.pool);
		assert_non_null(x);
		/* Pool a never held x. */
		uxdp_pool_free_batch(a.pool, &x, 1);
		uxdp_pool_free_remote(a.pool, &x, 1);
		/* A pointer inside a's heads but not at a head's start. */
		bufs[0] = uxdp_pool_alloc(a.pool);
		assert_non_null(bufs[0]);
		bufs[1] = (struct uxdp_buff *)((char *)bufs[0] + 8);
		uxdp_pool_free_remote(a.pool, bufs + 1, 1);
		uxdp_pool_free_batch(a.pool, bufs + 1, 1);
		assert_int_equal(t_stats(&a).bad_free, 4);
		assert_int_equal(t_stats(&b).bad_free, 0);
		assert_int_equal(t_stats(&b).outstanding, 1);
		/* x is still b's to free, once. */
		uxdp_buff_free(x);
		assert_int_equal(t_stats(&b).outstanding, 0);
		t_env_fini(&a, bufs, 1);
		t_env_fini(&b, NULL, 0);
	}
}

/*
 * As the kernel (xp_alloc_new_from_fq caps a batch at the number of heads),
 * one aligned batch reads at most nchunks fill entries, whatever max is.
 */
static void test_batch_reads_at_most_nchunks(void **state)
{
	static const struct t_cfg cfg = { 2048, 0, false };
	uint64_t addrs[NCHUNKS + 20];
	struct uxdp_buff *b[NCHUNKS + 20];
	struct t_env e;
	uint32_t i;

	(void)state;
	t_env_init(&e, &cfg);
	/* NCHUNKS invalid entries, then 20 valid ones. */
	for (i = 0; i < NCHUNKS; i++)
		addrs[i] = (uint64_t)(NCHUNKS + i) * 2048;
	for (i = 0; i < 20; i++) {
		addrs[NCHUNKS + i] = (uint64_t)i * 2048;
		e.app[i] = false;
	}
	t_post_raw(&e, addrs, NCHUNKS + 20);
	assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, NCHUNKS + 20), 0);
	assert_int_equal(t_stats(&e).fill_invalid, NCHUNKS);
	assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, NCHUNKS + 20), 20);
	t_env_fini(&e, b, 20);
}

/*
 * The application writes the fill ring's producer index: a producer moved
 * far past the ring neither makes the pool read outside it nor makes the
 * audit walk 2^31 slots. What the pool reads is at most a ring of stale
 * entries, each validated (here: all duplicates of chunks it holds).
 */
static void test_hostile_fill_producer(void **state)
{
	static const struct t_cfg cfg = { 2048, 0, false };
	struct uxdp_buff *b[NCHUNKS];
	uint8_t where[NCHUNKS];
	struct t_env e;
	uint32_t *prod;
	uint32_t n;

	(void)state;
	t_env_init(&e, &cfg);
	t_post_range(&e, 0, NCHUNKS);
	n = uxdp_pool_alloc_batch(e.pool, b, NCHUNKS);
	assert_int_equal(n, NCHUNKS);
	prod = e.fill->producer;
	__atomic_store_n(prod, *prod + (1U << 31), __ATOMIC_RELEASE);
	assert_true(uxdp_pool_audit(e.pool, where) <= (int)(NCHUNKS + 128));
	assert_int_equal(uxdp_pool_alloc_batch(e.pool, b + 0, 0), 0);
	{
		struct uxdp_buff *more[NCHUNKS];

		assert_int_equal(uxdp_pool_alloc_batch(e.pool, more, NCHUNKS),
				 0);
	}
	assert_true(t_stats(&e).fill_dup <= NCHUNKS);
	/* Everything is still accounted for: give it all back. */
	uxdp_pool_free_batch(e.pool, b, n);
	assert_int_equal(t_stats(&e).outstanding, 0);
	assert_int_equal(uxdp_pool_destroy(e.pool), 0);
	assert_int_equal(uxdp_umem_destroy(e.umem), 0);
}

/*
 * A retired pool frees itself when its last buffer comes home, from any
 * path; until then returns are counted as usual (LSan reports a leak and
 * ASan a use after free if this goes wrong).
 */
static void test_retire(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *b[8];
		struct t_env e;

		t_env_init(&e, c);
		t_post_range(&e, 0, 8);
		assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 8), 8);
		uxdp_pool_free_batch(e.pool, b, 2);
		uxdp_pool_retire(e.pool, UXDP_POOL_RETIRE_UMEM);
		/* Owner paths now go the remote way. */
		assert_false(uxdp_pool_is_owner(e.pool));
		uxdp_pool_free_batch(e.pool, b + 2, 3);
		uxdp_pool_free_remote(e.pool, b + 5, 2);
		uxdp_pool_free_remote(e.pool, b + 7, 1);	/* the last */
		/* Pool and UMEM are gone here. */
	}
	FOR_ALL_CFGS(c) {	/* nothing out: gone at once */
		struct t_env e;

		t_env_init(&e, c);
		uxdp_pool_retire(e.pool, 0);
		assert_int_equal(uxdp_umem_destroy(e.umem), 0);
	}
}

/* The four ways a buffer goes back, for the tests that try each. */
enum t_ret_path { T_FREE, T_FREE_BATCH, T_FREE_REMOTE, T_RELEASE, T_NPATHS };

static const char *const t_path_name[T_NPATHS] = {
	"uxdp_buff_free", "uxdp_pool_free_batch", "uxdp_pool_free_remote",
	"uxdp_pool_release",
};

/* Return @b to @p by @path; a release's address, else 0. */
static uint64_t t_return(struct uxdp_pool *p, struct uxdp_buff *b,
			 enum t_ret_path path)
{
	switch (path) {
	case T_FREE:
		uxdp_buff_free(b);
		break;
	case T_FREE_BATCH:
		uxdp_pool_free_batch(p, &b, 1);
		break;
	case T_FREE_REMOTE:
		uxdp_pool_free_remote(p, &b, 1);
		break;
	default:
		return uxdp_pool_release(b);
	}
	return 0;
}

/*
 * A retired pool ends when its last buffer leaves, whichever way it leaves
 * (issue 13). A release after retire is a return like the others: the
 * chunk goes to the application with its address, and the pool no longer
 * waits for it. Before retire the pool has buffers in every state (on the
 * free list, released, freed by another thread and not yet taken back,
 * allocated); while it waits, every return path counts a second return of
 * a buffer, or another pool's buffer, in bad_free and changes nothing
 * else. A second pool on the UMEM sees the retired one unbind when its
 * last buffer goes ("1 pool is still bound"); with UXDP_POOL_RETIRE_UMEM
 * the UMEM then goes with that second pool (LeakSanitizer checks it went).
 * Before the fix a release of the last buffer left the pool bound for ever
 * (umem_destroy: "2 pools are still bound") and leaked pool and UMEM.
 */
static void test_retire_last_by_every_path(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		int last, flags;

		for (last = 0; last < T_NPATHS; last++)
		for (flags = 0; flags <= (int)UXDP_POOL_RETIRE_UMEM; flags++) {
			struct uxdp_buff *b[8], *kb;
			struct uxdp_pool_stats st;
			struct uxdp_pool *keep;
			uint64_t want, bad = 0;
			struct t_env e;
			int i, k;

			t_env_init(&e, c);
			keep = uxdp_pool_create(e.umem, NULL);
			assert_non_null(keep);
			assert_int_equal(uxdp_pool_fill_range(keep, 60, 1), 1);
			kb = uxdp_pool_alloc(keep);
			assert_non_null(kb);
			t_post_range(&e, 0, 8);
			assert_int_equal(uxdp_pool_alloc_batch(e.pool, b, 8),
					 8);
			uxdp_pool_free_batch(e.pool, b, 2);	/* free list */
			t_env_note_release(&e, b[2]);		/* the app's */
			uxdp_pool_free_remote(e.pool, b + 3, 1); /* queued */
			assert_int_equal(t_stats(&e).remote_pending, 1);
			want = uxdp_buff_umem_addr(b[7]);

			uxdp_pool_retire(e.pool, (uint32_t)flags);
			/* The queued one was taken back by the retire. */
			st = t_stats(&e);
			assert_int_equal(st.outstanding, 4);
			assert_int_equal(st.remote_pending, 0);
			assert_int_equal(st.freed, 3);
			assert_int_equal(st.released, 1);
			assert_int_equal(st.bad_free, 0);

			/* b[4..6] go back by the three other paths, b[7] by
			 * @last. */
			for (i = 0; i < 3; i++)
				t_return(e.pool, b[4 + i],
					 (enum t_ret_path)((last + 1 + i) %
							   T_NPATHS));
			st = t_stats(&e);
			assert_int_equal(st.outstanding, 1);
			assert_int_equal(st.bad_free, 0);

			/* Second returns of every state, every path: counted
			 * at the call, the pool still waits for b[7]. */
			for (i = 0; i < 6; i++) {
				/* Freed, released and remotely freed before
				 * retire; returned by each path after. */
				struct uxdp_buff *const again[6] = {
					b[0], b[2], b[3], b[4], b[5], b[6],
				};

				for (k = 0; k < T_NPATHS; k++) {
					uint64_t r = t_return(e.pool, again[i],
						(enum t_ret_path)k);

					if (k == T_RELEASE)
						assert_int_equal(r, UINT64_MAX);
					assert_int_equal(t_stats(&e).bad_free,
							 ++bad);
				}
			}
			/* Another pool's buffer, through this pool's paths. */
			uxdp_pool_free_batch(e.pool, &kb, 1);
			uxdp_pool_free_remote(e.pool, &kb, 1);
			bad += 2;
			st = t_stats(&e);
			assert_int_equal(st.bad_free, bad);
			assert_int_equal(st.outstanding, 1);
			assert_int_equal(st.remote_pending, 0);

			/* The last one: the pool is gone after this call. */
			if (t_return(e.pool, b[7], (enum t_ret_path)last) !=
			    (last == T_RELEASE ? want : 0))
				fail_msg("%s of the last buffer: wrong "
					 "address", t_path_name[last]);
			if (uxdp_umem_destroy(e.umem) != -EBUSY ||
			    !strstr(uxdp_errmsg(), "1 pool is still bound"))
				fail_msg("cfg %u/%u%s, retire 0x%x, last by "
					 "%s: the retired pool is still bound "
					 "(%s)", c->chunk_size, c->headroom,
					 c->unaligned ? "/unaligned" : "",
					 flags, t_path_name[last],
					 uxdp_errmsg());
			/* The other pool was never touched. */
			assert_int_equal(uxdp_pool_stats(keep, &st), 0);
			assert_int_equal(st.bad_free, 0);
			assert_int_equal(st.outstanding, 1);
			uxdp_buff_free(kb);
			/* With RETIRE_UMEM the UMEM goes with the last pool
			 * bound to it, this one. */
			assert_int_equal(uxdp_pool_destroy(keep), 0);
			if (!flags)
				assert_int_equal(uxdp_umem_destroy(e.umem), 0);
		}
	}
}

/*
 * Retire with nothing out but a remote free not yet taken back, or a
 * released buffer: the pool goes in the call. With UXDP_POOL_RETIRE_UMEM on
 * a UMEM other pools share, the UMEM goes with the last pool bound to it,
 * retired or destroyed, and not before; without the flag it stays the
 * application's to destroy. Before the fix the pools emptied by a release
 * stayed bound (LeakSanitizer checks the UMEMs that go on their own).
 */
static void test_retire_shared_umem_order(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		struct uxdp_buff *a, *b;
		struct uxdp_pool *q;
		struct t_env e;
		int order;

		t_env_init(&e, c);
		t_post_range(&e, 0, 2);
		a = uxdp_pool_alloc(e.pool);
		b = uxdp_pool_alloc(e.pool);
		assert_non_null(a);
		assert_non_null(b);
		t_env_note_release(&e, b);
		uxdp_pool_free_remote(e.pool, &a, 1);
		uxdp_pool_retire(e.pool, 0);
		assert_int_equal(uxdp_umem_destroy(e.umem), 0);

		/* Retired with the flag and nothing out, beside a pool in use:
		 * the UMEM stays while that one works, and goes with it. */
		t_env_init(&e, c);
		q = uxdp_pool_create(e.umem, NULL);
		assert_non_null(q);
		uxdp_pool_retire(e.pool, UXDP_POOL_RETIRE_UMEM);
		assert_int_equal(uxdp_umem_destroy(e.umem), -EBUSY);
		assert_non_null(strstr(uxdp_errmsg(), "1 pool is still bound"));
		assert_int_equal(uxdp_pool_fill_range(q, 0, 4), 4);
		a = uxdp_pool_alloc(q);
		assert_non_null(a);
		uxdp_buff_free(a);
		assert_int_equal(uxdp_pool_destroy(q), 0);	/* UMEM too */

		/* Both retired with buffers out, one with the flag: the UMEM
		 * goes with the second to empty, whichever that is. */
		for (order = 0; order < 2; order++) {
			t_env_init(&e, c);
			q = uxdp_pool_create(e.umem, NULL);
			assert_non_null(q);
			t_post_range(&e, 0, 1);
			assert_int_equal(uxdp_pool_fill_range(q, 1, 1), 1);
			a = uxdp_pool_alloc(e.pool);
			b = uxdp_pool_alloc(q);
			assert_non_null(a);
			assert_non_null(b);
			uxdp_pool_retire(e.pool, UXDP_POOL_RETIRE_UMEM);
			uxdp_pool_retire(q, 0);
			assert_int_not_equal(uxdp_pool_release(order ? a : b),
					     UINT64_MAX);
			assert_int_equal(uxdp_umem_destroy(e.umem), -EBUSY);
			assert_non_null(strstr(uxdp_errmsg(),
					       "1 pool is still bound"));
			assert_int_not_equal(uxdp_pool_release(order ? b : a),
					     UINT64_MAX);
			/* Both pools and the UMEM are gone. */
		}

		/* Without the flag the UMEM is the application's. */
		t_env_init(&e, c);
		q = uxdp_pool_create(e.umem, NULL);
		assert_non_null(q);
		t_post_range(&e, 0, 1);
		a = uxdp_pool_alloc(e.pool);
		assert_non_null(a);
		uxdp_pool_retire(e.pool, 0);
		assert_int_equal(uxdp_pool_destroy(q), 0);
		assert_int_equal(uxdp_umem_destroy(e.umem), -EBUSY);
		assert_int_not_equal(uxdp_pool_release(a), UINT64_MAX);
		assert_int_equal(uxdp_umem_destroy(e.umem), 0);
	}
}

/* ---- when remote frees are taken back ------------------------------------ */

/* One call into the pool, for test_remote_drain_points. @spare is an
 * allocated buffer it may return; it says whether it did. */
struct t_call {
	const char *name;
	bool drains;
	bool (*call)(struct t_env *e, struct uxdp_buff *spare);
};

static bool t_call_alloc(struct t_env *e, struct uxdp_buff *spare)
{
	struct uxdp_buff *b = uxdp_pool_alloc(e->pool);

	(void)spare;
	assert_non_null(b);
	uxdp_buff_free(b);
	return false;
}

static bool t_call_alloc_batch(struct t_env *e, struct uxdp_buff *spare)
{
	struct uxdp_buff *b;

	(void)spare;
	assert_int_equal(uxdp_pool_alloc_batch(e->pool, &b, 1), 1);
	uxdp_buff_free(b);
	return false;
}

static bool t_call_can_alloc(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	assert_true(uxdp_pool_can_alloc(e->pool, 1));
	return false;
}

static bool t_call_free(struct t_env *e, struct uxdp_buff *spare)
{
	(void)e;
	uxdp_buff_free(spare);
	return true;
}

static bool t_call_free_batch(struct t_env *e, struct uxdp_buff *spare)
{
	uxdp_pool_free_batch(e->pool, &spare, 1);
	return true;
}

static bool t_call_release(struct t_env *e, struct uxdp_buff *spare)
{
	t_env_note_release(e, spare);
	return true;
}

static bool t_call_buff_at(struct t_env *e, struct uxdp_buff *spare)
{
	assert_ptr_equal(uxdp_pool_buff_at(e->pool,
					   uxdp_buff_umem_addr(spare)), spare);
	return false;
}

static bool t_call_buff_at_outside(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	assert_null(uxdp_pool_buff_at(e->pool, UINT64_MAX));
	return false;
}

static bool t_call_audit(struct t_env *e, struct uxdp_buff *spare)
{
	uint8_t where[NCHUNKS];

	(void)spare;
	assert_true(uxdp_pool_audit(e->pool, where) > 0);
	return false;
}

static bool t_call_destroy(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	assert_int_equal(uxdp_pool_destroy(e->pool), -EBUSY);
	return false;
}

static bool t_call_flush(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	uxdp_pool_flush(e->pool);
	return false;
}

static bool t_call_complete(struct t_env *e, struct uxdp_buff *spare)
{
	uint64_t a = t_chunk_addr(e, NCHUNKS - 1);

	(void)spare;
	e->app[NCHUNKS - 1] = false;
	assert_int_equal(uxdp_pool_complete(e->pool, &a, 1), 1);
	assert_int_equal(t_drain_comp(e), 1);
	return false;
}

static bool t_call_stats(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	(void)t_stats(e);
	return false;
}

static bool t_call_fill_range(struct t_env *e, struct uxdp_buff *spare)
{
	(void)spare;
	assert_int_equal(uxdp_pool_fill_range(e->pool, 0, 0), 0);
	return false;
}

/*
 * When another thread's frees are taken back, as pool.h and
 * docs/semantics.md say (issue 13): at the start of every call that
 * allocates, frees, releases or looks up a buffer, and of audit and
 * destroy, whatever its arguments (uxdp_pool_buff_at of an address outside
 * the UMEM too); not by flush, complete, stats or fill_range. A remote free
 * of a buffer already on the free list is a double free the freeing thread
 * cannot see: it is counted in bad_free when one of those calls takes it
 * back. A remote free of a buffer already queued, or of something that is
 * not one of the pool's buffers, is counted at the call.
 */
static void test_remote_drain_points(void **state)
{
	static const struct t_call calls[] = {
		{ "alloc", true, t_call_alloc },
		{ "alloc_batch", true, t_call_alloc_batch },
		{ "can_alloc", true, t_call_can_alloc },
		{ "buff_free", true, t_call_free },
		{ "free_batch", true, t_call_free_batch },
		{ "release", true, t_call_release },
		{ "buff_at", true, t_call_buff_at },
		{ "buff_at outside the UMEM", true, t_call_buff_at_outside },
		{ "audit", true, t_call_audit },
		{ "destroy", true, t_call_destroy },
		{ "flush", false, t_call_flush },
		{ "complete", false, t_call_complete },
		{ "stats", false, t_call_stats },
		{ "fill_range", false, t_call_fill_range },
	};

	(void)state;
	FOR_ALL_CFGS(c) {
		size_t k;

		for (k = 0; k < ARRAY_LEN(calls); k++) {
			const struct t_call *t = &calls[k];
			struct uxdp_buff *x, *y, *spare, *two[2], *odd;
			struct uxdp_pool_stats st;
			struct t_env e;
			bool gone;

			t_env_init(&e, c);
			t_post_range(&e, 0, 8);
			x = uxdp_pool_alloc(e.pool);
			y = uxdp_pool_alloc(e.pool);
			spare = uxdp_pool_alloc(e.pool);
			assert_non_null(x);
			assert_non_null(y);
			assert_non_null(spare);
			uxdp_buff_free(x);		/* on the free list */

			uxdp_pool_free_remote(e.pool, &x, 1);	/* double */
			st = t_stats(&e);
			assert_int_equal(st.bad_free, 0);	/* not yet */
			assert_int_equal(st.remote_pending, 1);
			two[0] = two[1] = y;		/* good, then queued */
			uxdp_pool_free_remote(e.pool, two, 2);
			odd = (struct uxdp_buff *)((char *)y + 8);
			uxdp_pool_free_remote(e.pool, &odd, 1);	/* not a head */
			st = t_stats(&e);
			assert_int_equal(st.bad_free, 2);	/* at the call */
			assert_int_equal(st.remote_pending, 2);
			assert_int_equal(st.outstanding, 2);

			gone = t->call(&e, spare);
			st = t_stats(&e);
			if (st.remote_pending != (t->drains ? 0 : 2) ||
			    st.bad_free != (t->drains ? 3 : 2) ||
			    st.remote_freed != (t->drains ? 1 : 0))
				fail_msg("cfg %u/%u%s: after %s, remote_pending "
					 "%u, bad_free %llu, remote_freed %llu: "
					 "%s", c->chunk_size, c->headroom,
					 c->unaligned ? "/unaligned" : "",
					 t->name, st.remote_pending,
					 (unsigned long long)st.bad_free,
					 (unsigned long long)st.remote_freed,
					 t->drains ? "should have been taken "
					 "back" : "should still wait");
			if (gone)
				t_env_fini(&e, NULL, 0);
			else
				t_env_fini(&e, &spare, 1);
		}
	}
}

/*
 * Shared UMEM (issue 8): several pools over one UMEM, each with its own
 * fill and completion rings, one per (device, queue) as the kernel has it.
 * Each gets the chunks posted to its own ring; a buffer freed goes back to
 * its own pool; the merged audit places every chunk once; a chunk posted
 * to two pools' rings shows up as held twice.
 */
static void test_shared_umem(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		UXDP_DECLARE_OPTS(uxdp_pool_opts, po, .fill_size = 64,
				  .comp_size = 64);
		struct uxdp_pool *q2, *q3;
		struct uxdp_buff *b[NCHUNKS], *x;
		uint8_t where[NCHUNKS];
		struct t_env e;
		uint32_t i, n1, n2;

		t_env_init(&e, c);
		q2 = uxdp_pool_create(e.umem, &po);
		q3 = uxdp_pool_create(e.umem, NULL);
		assert_non_null(q2);
		assert_non_null(q3);
		/* The first pool has the UMEM's rings, the others their own. */
		assert_ptr_equal(uxdp_pool_fill_ring(e.pool), e.fill);
		assert_ptr_not_equal(uxdp_pool_fill_ring(q2), e.fill);
		assert_int_equal(uxdp_pool_fill_ring(q2)->size, 64);
		assert_ptr_not_equal(uxdp_pool_fill_ring(q3),
				     uxdp_pool_fill_ring(q2));
		/* Split the chunks: 0..31 to the first, 32..63 to q2. */
		assert_int_equal(uxdp_pool_fill_range(e.pool, 0, 32), 32);
		assert_int_equal(uxdp_pool_fill_range(q2, 32, 32), 32);
		assert_int_equal(uxdp_pool_fill_range(q3, 60, 10), -EINVAL);
		for (i = 0; i < NCHUNKS; i++)
			e.app[i] = false;
		n1 = uxdp_pool_alloc_batch(e.pool, b, NCHUNKS);
		n2 = uxdp_pool_alloc_batch(q2, b + n1, NCHUNKS);
		assert_int_equal(n1, 32);
		assert_int_equal(n2, 32);
		for (i = 0; i < n1; i++)
			assert_true(t_buf_chunk(&e, b[i]) < 32);
		for (i = n1; i < n1 + n2; i++) {
			assert_true(t_buf_chunk(&e, b[i]) >= 32);
			assert_ptr_equal(uxdp_buff_pool(b[i]), q2);
		}
		assert_int_equal(uxdp_umem_audit(e.umem, where), NCHUNKS);
		for (i = 0; i < NCHUNKS; i++)
			assert_int_equal(where[i], UXDP_LOC_DRIVER);
		/* A buffer of q2 freed on the first pool: another pool's. */
		uxdp_pool_free_batch(e.pool, b + n1, 1);
		assert_int_equal(t_stats(&e).bad_free, 1);
		uxdp_pool_free_batch(q2, b + n1, n2);
		uxdp_pool_free_batch(e.pool, b, n1);
		/* Chunk 5, held by the first pool's free list, posted to q3. */
		{
			uint64_t a = t_chunk_addr(&e, 5);
			uint32_t idx;

			assert_int_equal(uxdp_ring_prod_reserve(
				uxdp_pool_fill_ring(q3), 1, &idx), 1);
			*uxdp_ring_addr(uxdp_pool_fill_ring(q3), idx) = a;
			uxdp_ring_prod_submit(uxdp_pool_fill_ring(q3), 1);
			x = uxdp_pool_alloc(q3);
			assert_non_null(x);
		}
		assert_int_equal(uxdp_umem_audit(e.umem, where), NCHUNKS + 1);
		assert_true(where[5] & UXDP_LOC_DUP);
		uxdp_buff_free(x);
		assert_int_equal(uxdp_umem_destroy(e.umem), -EBUSY);
		assert_non_null(strstr(uxdp_errmsg(), "3 pools are"));
		assert_int_equal(uxdp_pool_destroy(q2), 0);
		assert_int_equal(uxdp_pool_destroy(q3), 0);
		/* The UMEM's own rings pass to the next pool. */
		assert_int_equal(uxdp_pool_destroy(e.pool), 0);
		e.pool = uxdp_pool_create(e.umem, NULL);
		assert_non_null(e.pool);
		assert_ptr_equal(uxdp_pool_fill_ring(e.pool), e.fill);
		for (i = 0; i < NCHUNKS; i++)
			e.app[i] = true;
		t_env_fini(&e, NULL, 0);
	}
}

/*
 * Buffer <-> UMEM address (for drivers): uxdp_buff_umem_addr() is the RX
 * descriptor address of the data, uxdp_buff_chunk_addr() the chunk base,
 * and uxdp_pool_buff_at() maps either back to the allocated buffer (any
 * address inside the chunk when aligned; the exact base, whatever the
 * offset bits, when unaligned). NULL for what names no allocated buffer of
 * this pool: never allocated, freed, released, outside the UMEM, a wrong
 * unaligned base, another pool's buffer in a shared UMEM.
 */
static void test_buff_umem_addr(void **state)
{
	(void)state;
	FOR_ALL_CFGS(c) {
		const uint64_t data_off = c->headroom + UXDP_PACKET_HEADROOM;
		struct uxdp_buff *b[4], *x, *y;
		struct uxdp_pool *q2;
		struct t_env e;
		uint64_t a, base, size;
		char *area;
		uint32_t i;

		t_env_init(&e, c);
		area = uxdp_umem_area(e.umem);
		size = (uint64_t)NCHUNKS * c->chunk_size;
		q2 = uxdp_pool_create(e.umem, NULL);
		assert_non_null(q2);

		/* Nothing allocated yet. */
		assert_null(uxdp_pool_buff_at(e.pool, t_chunk_addr(&e, 3)));
		t_post_range(&e, 3, 4);
		for (i = 0; i < 4; i++) {
			b[i] = uxdp_pool_alloc(e.pool);
			assert_non_null(b[i]);
		}
		/* Chunk 7 is posted to the pool but not allocated. */
		t_post_range(&e, 7, 1);
		for (i = 0; i < 4; i++) {
			base = t_chunk_addr(&e, 3 + i);
			assert_int_equal(uxdp_buff_chunk_addr(b[i]), base);
			a = uxdp_buff_umem_addr(b[i]);
			if (c->unaligned)
				assert_int_equal(a, base | (data_off <<
					UXDP_UNALIGNED_BUF_OFFSET_SHIFT));
			else
				assert_int_equal(a, base + data_off);
			assert_ptr_equal(uxdp_umem_addr_ptr(area, a),
					 b[i]->data);
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, a), b[i]);
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, base),
					 b[i]);
			/* The buffer stays allocated. */
			assert_int_equal(t_stats(&e).outstanding, 4);
		}

		/* The program moved the data: the address follows. */
		b[1]->data = (char *)b[1]->data - 14;
		a = uxdp_buff_umem_addr(b[1]);
		assert_ptr_equal(uxdp_umem_addr_ptr(area, a), b[1]->data);
		assert_ptr_equal(uxdp_pool_buff_at(e.pool, a), b[1]);
		b[1]->data = (char *)b[1]->data + 14;

		base = t_chunk_addr(&e, 6);
		if (!c->unaligned) {
			/* Any address inside the chunk names it. */
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, base + 1),
					 b[3]);
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, base +
							   c->chunk_size - 1),
					 b[3]);
			assert_ptr_equal(uxdp_pool_buff_at(e.pool,
							   base - 1), b[2]);
			/* Offset bits mean nothing here: outside. */
			assert_null(uxdp_pool_buff_at(e.pool, base |
				(1ULL << UXDP_UNALIGNED_BUF_OFFSET_SHIFT)));
		} else {
			/* The exact base, whatever the offset says. */
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, base |
				(77ULL << UXDP_UNALIGNED_BUF_OFFSET_SHIFT)),
					 b[3]);
			/* A wrong base names nothing, in the same 2 KiB
			 * slot or not. */
			assert_null(uxdp_pool_buff_at(e.pool, base + 1));
			assert_null(uxdp_pool_buff_at(e.pool, base - 1));
			assert_null(uxdp_pool_buff_at(e.pool, base + 2048));
			assert_null(uxdp_pool_buff_at(e.pool, base +
						       c->chunk_size - 1));
		}
		/* Next chunk: posted, not allocated. */
		assert_null(uxdp_pool_buff_at(e.pool, base + c->chunk_size));
		assert_null(uxdp_pool_buff_at(e.pool, t_chunk_addr(&e, 7) +
					       data_off));

		/* Outside the UMEM. */
		assert_null(uxdp_pool_buff_at(e.pool, size));
		assert_null(uxdp_pool_buff_at(e.pool, size + data_off));
		assert_null(uxdp_pool_buff_at(e.pool, UINT64_MAX));
		assert_null(uxdp_pool_buff_at(e.pool,
					      UXDP_UNALIGNED_BUF_ADDR_MASK));

		/* Shared UMEM: another pool's buffer is not this pool's. */
		assert_int_equal(uxdp_pool_fill_range(q2, 20, 1), 1);
		e.app[20] = false;
		x = uxdp_pool_alloc(q2);
		assert_non_null(x);
		a = uxdp_buff_umem_addr(x);
		assert_int_equal(uxdp_buff_chunk_addr(x),
				 t_chunk_addr(&e, 20));
		assert_ptr_equal(uxdp_pool_buff_at(q2, a), x);
		assert_null(uxdp_pool_buff_at(e.pool, a));
		assert_null(uxdp_pool_buff_at(q2, uxdp_buff_umem_addr(b[0])));
		uxdp_buff_free(x);
		assert_null(uxdp_pool_buff_at(q2, a));
		/* Its free list goes back to the application. */
		assert_int_equal(uxdp_pool_destroy(q2), 0);
		e.app[20] = true;

		/* Freed: gone; allocated again from the free list: back. */
		a = uxdp_buff_umem_addr(b[0]);
		uxdp_buff_free(b[0]);
		assert_null(uxdp_pool_buff_at(e.pool, a));
		assert_null(uxdp_pool_buff_at(e.pool, t_chunk_addr(&e, 3)));
		y = uxdp_pool_alloc(e.pool);
		assert_ptr_equal(y, b[0]);
		assert_ptr_equal(uxdp_pool_buff_at(e.pool, a), b[0]);

		/* Released to the application: gone. */
		a = uxdp_buff_umem_addr(b[1]);
		assert_int_equal(uxdp_pool_release(b[1]), a);
		e.app[4] = true;
		assert_null(uxdp_pool_buff_at(e.pool, a));
		assert_null(uxdp_pool_buff_at(e.pool, t_chunk_addr(&e, 4)));
		b[1] = b[3];

		if (c->unaligned) {
			/* A buffer at a base that is not a chunk multiple:
			 * only that base names it. */
			base = t_chunk_addr(&e, 30) + 100;
			e.app[30] = false;
			t_post_raw(&e, &base, 1);
			/* Chunk 7 is still first on the fill ring. */
			y = uxdp_pool_alloc(e.pool);
			assert_non_null(y);
			assert_int_equal(uxdp_buff_chunk_addr(y),
					 t_chunk_addr(&e, 7));
			uxdp_pool_release(y);
			e.app[7] = true;
			x = uxdp_pool_alloc(e.pool);
			assert_non_null(x);
			assert_int_equal(uxdp_buff_chunk_addr(x), base);
			a = uxdp_buff_umem_addr(x);
			assert_int_equal(a, base | (data_off <<
					 UXDP_UNALIGNED_BUF_OFFSET_SHIFT));
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, a), x);
			assert_ptr_equal(uxdp_pool_buff_at(e.pool, base), x);
			assert_null(uxdp_pool_buff_at(e.pool,
						      t_chunk_addr(&e, 30)));
			assert_null(uxdp_pool_buff_at(e.pool, base - 1));
			uxdp_pool_release(x);
			e.app[30] = true;
			assert_null(uxdp_pool_buff_at(e.pool, base));
		}
		/* Drain what went to the completion ring: nothing did. */
		assert_int_equal(t_drain_comp(&e), 0);
		t_env_fini(&e, b, 3);
	}
}

/* Bad configuration and second pool. */
/*
 * The kernel allows 2^32-1 chunks; a pool's position words reserve the top
 * two values, so a UMEM with 2^32-2 chunks or more is refused by the pool
 * with a reason (not by an allocation failure, or a wrapped position on a
 * machine with the memory). The area is reserved address space, never
 * touched: 8 TiB of PROT_NONE.
 */
static void t_pool_too_many_chunks(void)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 2048,
			  .fill_size = 64, .comp_size = 64);
	uint64_t size = 0xfffffffeULL * 2048;
	void *area = mmap(NULL, size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct uxdp_umem *u;

	if (area == MAP_FAILED)
		fail_msg("reserving 8 TiB of address space: %s",
			 strerror(errno));
	u = uxdp_umem_create(area, size, &o);
	if (!u)
		fail_msg("umem of 2^32-2 chunks: %s", uxdp_errmsg());
	assert_null(uxdp_pool_create(u, NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "at most 4294967293"));
	assert_int_equal(uxdp_umem_destroy(u), 0);
	munmap(area, size);
}

static void test_pool_create_errors(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_pool_opts, o, .flags = 1);
	struct uxdp_umem *u = uxdp_umem_create(NULL, 1 << 20, NULL);
	struct uxdp_pool *p;

	(void)state;
	assert_non_null(u);
	assert_null(uxdp_pool_create(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_pool_create(u, &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "flags"));
	p = uxdp_pool_create(u, NULL);
	assert_non_null(p);
	assert_int_equal(uxdp_pool_stats(NULL, NULL), -EINVAL);
	assert_int_equal(uxdp_pool_audit(p, NULL), -EINVAL);
	assert_ptr_equal(uxdp_pool_umem(p), u);
	assert_int_equal(uxdp_pool_destroy(p), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);
	t_pool_too_many_chunks();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_alloc_sets_pointers),
		cmocka_unit_test(test_batch_matches_single),
		cmocka_unit_test(test_batch_then_set_size),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_invalid_fill_addrs),
		cmocka_unit_test(test_aligned_addr_in_chunk),
		cmocka_unit_test(test_unaligned_fill_offset_ignored),
		cmocka_unit_test(test_duplicate_fill_addrs),
		cmocka_unit_test(test_free_list),
		cmocka_unit_test(test_release_handle),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_fill_consumer_published),
		cmocka_unit_test(test_unaligned_heads),
		cmocka_unit_test(test_random_accounting),
		cmocka_unit_test(test_teardown),
		cmocka_unit_test(test_pool_create_errors),
		cmocka_unit_test(test_remote_and_local_double_free),
		cmocka_unit_test(test_remote_double_free_keeps_legit),
		cmocka_unit_test(test_batch_return_in_place),
		cmocka_unit_test(test_foreign_buffer_every_path),
		cmocka_unit_test(test_batch_reads_at_most_nchunks),
		cmocka_unit_test(test_hostile_fill_producer),
		cmocka_unit_test(test_retire),
		cmocka_unit_test(test_retire_last_by_every_path),
		cmocka_unit_test(test_retire_shared_umem_order),
		cmocka_unit_test(test_remote_drain_points),
		cmocka_unit_test(test_shared_umem),
		cmocka_unit_test(test_buff_umem_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
