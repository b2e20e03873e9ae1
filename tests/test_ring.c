/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring layer, single thread: the shared-memory layout, the control-path
 * argument checks, every producer and consumer verb, the index caches,
 * wrap-around of the free-running u32 indices and the need_wakeup flag.
 *
 * Both handles of a ring live in this one thread, so every count a call
 * returns is exact and the tests can assert it. tests/test_ring_stress.c
 * puts the two sides on two threads.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "t_helpers.h"

#include <uxdp/ring.h>

#define T_PAGE		4096
#define T_VAL		0xabcd000000000000ULL	/* upper bits must survive */

/* A ring and one handle per side, on the same memory. */
struct t_ring_pair {
	void *mem;
	uint32_t entries;
	uint32_t elem_size;
	struct uxdp_ring prod;
	struct uxdp_ring cons;
};

static uint32_t *t_word(void *mem, size_t off)
{
	return (uint32_t *)((char *)mem + off);
}

/*
 * Allocate a ring, set both shared indices to @start and attach both
 * handles, as a ring already in use. Returns 0, or -1 on failure.
 */
static int t_pair_open(struct t_ring_pair *rp, uint32_t entries,
		       uint32_t elem_size, uint32_t start)
{
	memset(rp, 0, sizeof(*rp));
	rp->mem = uxdp_ring_mem_alloc(entries, elem_size);
	if (!rp->mem)
		return -1;
	rp->entries = entries;
	rp->elem_size = elem_size;
	/* Before init: init reads the shared indices into the caches. */
	*t_word(rp->mem, UXDP_RING_OFF_PRODUCER) = start;
	*t_word(rp->mem, UXDP_RING_OFF_CONSUMER) = start;
	if (uxdp_ring_init_prod(&rp->prod, rp->mem, entries, NULL) ||
	    uxdp_ring_init_cons(&rp->cons, rp->mem, entries, NULL)) {
		uxdp_ring_mem_free(rp->mem, entries, elem_size);
		rp->mem = NULL;
		return -1;
	}
	return 0;
}

static void t_pair_close(struct t_ring_pair *rp)
{
	uxdp_ring_mem_free(rp->mem, rp->entries, rp->elem_size);
	rp->mem = NULL;
}

/* Fixture: an empty address ring of 8 entries, indices at 0. */
static int t_setup_addr8(void **state)
{
	struct t_ring_pair *rp = calloc(1, sizeof(*rp));

	if (!rp || t_pair_open(rp, 8, sizeof(uint64_t), 0)) {
		free(rp);
		return -1;
	}
	*state = rp;
	return 0;
}

static int t_teardown_pair(void **state)
{
	struct t_ring_pair *rp = *state;

	t_pair_close(rp);
	free(rp);
	return 0;
}

/* Reserve, write and submit @n addresses T_VAL + @first.. (must fit). */
static void t_push(struct uxdp_ring *prod, uint32_t n, uint64_t first)
{
	uint32_t idx = 0, i;

	assert_int_equal(uxdp_ring_prod_reserve(prod, n, &idx), n);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(prod, idx + i) = T_VAL + first + i;
	uxdp_ring_prod_submit(prod, n);
}

/* Check @n peeked addresses from slot @idx are T_VAL + @first.. */
static void t_expect(const struct uxdp_ring *cons, uint32_t idx, uint32_t n,
		     uint64_t first)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(*uxdp_ring_addr(cons, idx + i),
				 T_VAL + first + i);
}

/* Peek, check and release exactly @n addresses T_VAL + @first.. */
static void t_pop(struct uxdp_ring *cons, uint32_t n, uint64_t first)
{
	uint32_t idx = 0;

	assert_int_equal(uxdp_ring_cons_peek(cons, n, &idx), n);
	t_expect(cons, idx, n, first);
	uxdp_ring_cons_release(cons, n);
}

/* ---- layout -------------------------------------------------------------- */

/* The offsets are the kernel's struct xdp_ring on 64-byte cache lines. */
static void test_layout_offsets(void **state)
{
	(void)state;
	assert_int_equal(UXDP_RING_OFF_PRODUCER, 0);
	assert_int_equal(UXDP_RING_OFF_CONSUMER, 128);
	assert_int_equal(UXDP_RING_OFF_FLAGS, 196);
	assert_int_equal(UXDP_RING_OFF_DESC, 320);

	/* struct xdp_ring_offset: producer, consumer, desc, flags; all u64 */
	assert_int_equal(sizeof(struct uxdp_ring_offsets), 32);
	assert_int_equal(offsetof(struct uxdp_ring_offsets, producer), 0);
	assert_int_equal(offsetof(struct uxdp_ring_offsets, consumer), 8);
	assert_int_equal(offsetof(struct uxdp_ring_offsets, desc), 16);
	assert_int_equal(offsetof(struct uxdp_ring_offsets, flags), 24);

	/* uapi values of XDP_RING_NEED_WAKEUP, XDP_PKT_CONTD, ... */
	assert_int_equal(UXDP_RING_NEED_WAKEUP, 1);
	assert_int_equal(UXDP_PKT_CONTD, 1);
	assert_int_equal(UXDP_TX_METADATA, 2);
}

/*
 * With NULL offsets both handles point at the standard offsets of the
 * memory, and the verbs touch exactly those words and the entry array.
 */
static void test_layout_null_offsets(void **state)
{
	static const uint32_t esz[] = { 8, 16 };
	unsigned int k;
	size_t i;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct t_ring_pair rp;
		unsigned char *m;
		uint32_t idx = 0;

		assert_int_equal(t_pair_open(&rp, 8, esz[k], 0), 0);
		m = rp.mem;
		assert_ptr_equal(rp.prod.producer, m + UXDP_RING_OFF_PRODUCER);
		assert_ptr_equal(rp.prod.consumer, m + UXDP_RING_OFF_CONSUMER);
		assert_ptr_equal(rp.prod.flags, m + UXDP_RING_OFF_FLAGS);
		assert_ptr_equal(rp.prod.ring, m + UXDP_RING_OFF_DESC);
		assert_ptr_equal(rp.cons.producer, m + UXDP_RING_OFF_PRODUCER);
		assert_ptr_equal(rp.cons.consumer, m + UXDP_RING_OFF_CONSUMER);
		assert_ptr_equal(rp.cons.flags, m + UXDP_RING_OFF_FLAGS);
		assert_ptr_equal(rp.cons.ring, m + UXDP_RING_OFF_DESC);
		if (esz[k] == 8) {
			assert_ptr_equal(uxdp_ring_addr(&rp.prod, 3),
					 m + UXDP_RING_OFF_DESC + 3 * 8);
			assert_ptr_equal(uxdp_ring_addr(&rp.prod, 8 + 3),
					 m + UXDP_RING_OFF_DESC + 3 * 8);
		} else {
			assert_ptr_equal(uxdp_ring_desc(&rp.prod, 3),
					 m + UXDP_RING_OFF_DESC + 3 * 16);
			assert_ptr_equal(uxdp_ring_desc(&rp.prod, 8 + 3),
					 m + UXDP_RING_OFF_DESC + 3 * 16);
		}

		/* Drive one entry through and look at the raw bytes. */
		assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 1, &idx), 1);
		if (esz[k] == 8)
			*uxdp_ring_addr(&rp.prod, idx) = 0x1122334455667788ULL;
		else
			uxdp_ring_desc(&rp.prod, idx)->addr =
				0x1122334455667788ULL;
		uxdp_ring_prod_submit(&rp.prod, 1);
		assert_int_equal(*t_word(m, 0), 1);
		assert_int_equal(*(uint64_t *)(m + 320), 0x1122334455667788ULL);
		assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 1, &idx), 1);
		uxdp_ring_cons_release(&rp.cons, 1);
		assert_int_equal(*t_word(m, 128), 1);
		uxdp_ring_set_need_wakeup(&rp.cons);
		assert_int_equal(*t_word(m, 196), UXDP_RING_NEED_WAKEUP);

		/* Every other header byte is still zero. */
		for (i = 0; i < UXDP_RING_OFF_DESC; i++) {
			if (i < 4 || (i >= 128 && i < 132) ||
			    (i >= 196 && i < 200))
				continue;
			assert_int_equal(m[i], 0);
		}
		t_pair_close(&rp);
	}
}

/* struct uxdp_desc is byte for byte the kernel's struct xdp_desc. */
static void test_desc_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct uxdp_desc), 16);
	assert_int_equal(offsetof(struct uxdp_desc, addr), 0);
	assert_int_equal(offsetof(struct uxdp_desc, len), 8);
	assert_int_equal(offsetof(struct uxdp_desc, options), 12);
	assert_int_equal(sizeof(((struct uxdp_desc *)0)->addr), 8);
	assert_int_equal(sizeof(((struct uxdp_desc *)0)->len), 4);
	assert_int_equal(sizeof(((struct uxdp_desc *)0)->options), 4);
}

/* ---- control path -------------------------------------------------------- */

static void test_mem_size(void **state)
{
	static const uint32_t n[] = { 1, 2, 8, 64, 4096, 1U << 20,
				      UXDP_RING_MAX_ENTRIES };
	unsigned int i;

	(void)state;
	assert_int_equal(UXDP_RING_MAX_ENTRIES, 1U << 30);
	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		assert_int_equal(uxdp_ring_mem_size(n[i], 8),
				 320 + (size_t)n[i] * 8);
		assert_int_equal(uxdp_ring_mem_size(n[i], 16),
				 320 + (size_t)n[i] * 16);
	}
}

/* Sizes every control-path call must refuse. */
static const uint32_t t_bad_entries[] = {
	0, 3, 6, 1000, (1U << 30) + 1, 1U << 31, 0xffffffffU,
};
static const uint32_t t_bad_elem[] = { 0, 1, 4, 12, 24, 32 };

#define T_NBAD_ENTRIES	(sizeof(t_bad_entries) / sizeof(t_bad_entries[0]))
#define T_NBAD_ELEM	(sizeof(t_bad_elem) / sizeof(t_bad_elem[0]))

static void test_mem_size_bad(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < T_NBAD_ENTRIES; i++) {
		assert_int_equal(uxdp_ring_mem_size(t_bad_entries[i], 8), 0);
		assert_int_equal(uxdp_ring_mem_size(t_bad_entries[i], 16), 0);
	}
	for (i = 0; i < T_NBAD_ELEM; i++) {
		assert_int_equal(uxdp_ring_mem_size(8, t_bad_elem[i]), 0);
		assert_int_equal(uxdp_ring_mem_size(1, t_bad_elem[i]), 0);
	}
}

/*
 * Expect uxdp_ring_mem_alloc() to refuse with EINVAL and a reason. A good
 * call first, so a message left over from an earlier failure is less likely
 * to pass for this one's.
 */
static void t_expect_alloc_einval(uint32_t entries, uint32_t elem_size)
{
	void *mem = uxdp_ring_mem_alloc(1, 8);

	assert_non_null(mem);
	uxdp_ring_mem_free(mem, 1, 8);

	errno = 0;
	assert_null(uxdp_ring_mem_alloc(entries, elem_size));
	assert_int_equal(errno, EINVAL);
	assert_non_null(uxdp_errmsg());
	assert_true(uxdp_errmsg()[0] != '\0');
}

static void test_mem_alloc_bad(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < T_NBAD_ENTRIES; i++) {
		t_expect_alloc_einval(t_bad_entries[i], 8);
		t_expect_alloc_einval(t_bad_entries[i], 16);
	}
	for (i = 0; i < T_NBAD_ELEM; i++)
		t_expect_alloc_einval(8, t_bad_elem[i]);
}

/* Memory comes back zeroed, page aligned and writable end to end. */
static void test_mem_alloc(void **state)
{
	static const uint32_t n[] = { 1, 8, 4096 };
	static const uint32_t esz[] = { 8, 16 };
	unsigned int i, k;
	size_t j, len;

	(void)state;
	for (i = 0; i < 3; i++) {
		for (k = 0; k < 2; k++) {
			unsigned char *m = uxdp_ring_mem_alloc(n[i], esz[k]);

			assert_non_null(m);
			assert_int_equal((uintptr_t)m % T_PAGE, 0);
			len = uxdp_ring_mem_size(n[i], esz[k]);
			for (j = 0; j < len; j++)
				assert_int_equal(m[j], 0);
			memset(m, 0xa5, len);
			uxdp_ring_mem_free(m, n[i], esz[k]);
		}
	}
	uxdp_ring_mem_free(NULL, 8, 8);		/* no-op */
}

#define T_MIB		(1L << 20)
/* What a lazily mapped ring may cost in resident memory, used or not. */
#define T_LAZY_MAX	(64 * T_MIB)

/*
 * Big rings are mapped lazily: up to 16 GiB costs only what is touched,
 * and the memory still works end to end. Sizes grow, so a ring mapped
 * with MAP_POPULATE fails at 128 MiB, long before it could take 16 GiB.
 */
static void test_mem_alloc_lazy(void **state)
{
	static const struct {
		uint32_t entries;
		uint32_t esz;
	} big[] = {
		{ 1U << 24, 8 }, { 1U << 24, 16 }, { 1U << 30, 8 },
		{ 1U << 30, 16 },
	};
	long page = sysconf(_SC_PAGESIZE), before, grew;
	uint64_t addrs[4] = { 1, 2, T_VAL, 4 }, got[4];
	struct uxdp_desc d = { .addr = T_VAL, .len = 60 };
	struct uxdp_ring prod, cons;
	unsigned int i, k;
	unsigned char *m;
	uint32_t idx;
	size_t len;

	(void)state;
	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		len = uxdp_ring_mem_size(big[i].entries, big[i].esz);
		before = t_rss_pages();
		m = uxdp_ring_mem_alloc(big[i].entries, big[i].esz);
		if (!m)
			fail_msg("%zu-byte ring: %s", len, uxdp_errmsg());
		grew = (t_rss_pages() - before) * page;
		if (grew >= T_LAZY_MAX)
			fail_msg("a %zu-byte ring made %ld bytes resident",
				 len, grew);

		/* Both ends are there, and the handles work on it. */
		assert_int_equal(m[len - 1], 0);
		m[len - 1] = 0x5a;
		assert_int_equal(uxdp_ring_init_prod(&prod, m, big[i].entries,
						     NULL), 0);
		assert_int_equal(uxdp_ring_init_cons(&cons, m, big[i].entries,
						     NULL), 0);
		assert_int_equal(uxdp_ring_prod_reserve(&prod, 4, &idx), 4);
		if (big[i].esz == 8) {
			uxdp_ring_prod_write_addrs(&prod, idx, addrs, 4);
		} else {
			for (k = 0; k < 4; k++)
				*uxdp_ring_desc(&prod, idx + k) = d;
		}
		uxdp_ring_prod_submit(&prod, 4);
		assert_int_equal(uxdp_ring_cons_peek(&cons, 4, &idx), 4);
		if (big[i].esz == 8) {
			uxdp_ring_cons_read_addrs(&cons, idx, got, 4);
			assert_memory_equal(got, addrs, sizeof(addrs));
		} else {
			assert_int_equal(uxdp_ring_desc(&cons, idx + 3)->addr,
					 T_VAL);
		}
		uxdp_ring_cons_release(&cons, 4);
		assert_int_equal(m[len - 1], 0x5a);
		grew = (t_rss_pages() - before) * page;
		if (grew >= T_LAZY_MAX)
			fail_msg("a %zu-byte ring, 2 spots used: %ld bytes "
				 "resident", len, grew);
		uxdp_ring_mem_free(m, big[i].entries, big[i].esz);
	}

	/* Up to 2 MiB of entries, a ring is still faulted in at once. */
	before = t_rss_pages();
	m = uxdp_ring_mem_alloc(1U << 17, 16);
	assert_non_null(m);
	grew = (t_rss_pages() - before) * page;
	if (grew < 2 * T_MIB)
		fail_msg("a 2 MiB ring is not populated: %ld bytes resident",
			 grew);
	uxdp_ring_mem_free(m, 1U << 17, 16);
}

static void test_init_bad_entries(void **state)
{
	struct uxdp_ring r;
	unsigned int i;
	void *mem;

	(void)state;
	mem = uxdp_ring_mem_alloc(8, 16);
	assert_non_null(mem);
	for (i = 0; i < T_NBAD_ENTRIES; i++) {
		assert_int_equal(uxdp_ring_init_prod(&r, mem, t_bad_entries[i],
						     NULL), -EINVAL);
		assert_true(uxdp_errmsg()[0] != '\0');
		assert_int_equal(uxdp_ring_init_cons(&r, mem, t_bad_entries[i],
						     NULL), -EINVAL);
		assert_true(uxdp_errmsg()[0] != '\0');
	}
	/* The same memory and handle are fine with a good size. */
	assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, NULL), 0);
	assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, NULL), 0);
	uxdp_ring_mem_free(mem, 8, 16);
}

/* Words must be 4-byte aligned, the entry array 8-byte aligned. */
static void test_init_misaligned_offsets(void **state)
{
	static const struct uxdp_ring_offsets std = {
		.producer = UXDP_RING_OFF_PRODUCER,
		.consumer = UXDP_RING_OFF_CONSUMER,
		.desc = UXDP_RING_OFF_DESC,
		.flags = UXDP_RING_OFF_FLAGS,
	};
	struct uxdp_ring_offsets off;
	struct uxdp_ring r;
	unsigned int i;
	void *mem;

	(void)state;
	mem = uxdp_ring_mem_alloc(8, 16);
	assert_non_null(mem);
	for (i = 1; i < 8; i++) {
		off = std;
		off.desc += i;		/* 4-aligned is not enough either */
		assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &off),
				 -EINVAL);
		assert_true(uxdp_errmsg()[0] != '\0');
		assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, &off),
				 -EINVAL);
		if (i >= 4)
			continue;
		off = std;
		off.producer += i;
		assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &off),
				 -EINVAL);
		assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, &off),
				 -EINVAL);
		off = std;
		off.consumer += i;
		assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &off),
				 -EINVAL);
		assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, &off),
				 -EINVAL);
		off = std;
		off.flags += i;
		assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &off),
				 -EINVAL);
		assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, &off),
				 -EINVAL);
	}
	/* Aligned but unusual offsets are accepted. */
	off = std;
	off.producer = 4;
	off.consumer = 8;
	off.flags = 12;
	off.desc = 328;
	assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &off), 0);
	assert_int_equal(uxdp_ring_init_cons(&r, mem, 8, &off), 0);
	assert_int_equal(uxdp_ring_init_prod(&r, mem, 8, &std), 0);
	uxdp_ring_mem_free(mem, 8, 16);
}

/* A handle attached to a ring in use starts from its shared indices. */
static void test_init_attaches_to_used_ring(void **state)
{
	struct uxdp_ring prod, cons;
	uint32_t idx = 0;
	void *mem;

	(void)state;
	mem = uxdp_ring_mem_alloc(8, 8);
	assert_non_null(mem);
	*t_word(mem, UXDP_RING_OFF_PRODUCER) = 10;
	*t_word(mem, UXDP_RING_OFF_CONSUMER) = 4;
	assert_int_equal(uxdp_ring_init_prod(&prod, mem, 8, NULL), 0);
	assert_int_equal(uxdp_ring_init_cons(&cons, mem, 8, NULL), 0);

	assert_int_equal(uxdp_ring_prod_nb_free(&prod, 1), 2);
	assert_int_equal(uxdp_ring_prod_reserve(&prod, 3, &idx), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&prod, 2, &idx), 2);
	assert_int_equal(idx, 10);
	assert_int_equal(uxdp_ring_cons_nb_avail(&cons, 1), 6);
	assert_int_equal(uxdp_ring_cons_peek(&cons, 8, &idx), 6);
	assert_int_equal(idx, 4);
	uxdp_ring_mem_free(mem, 8, 8);
}

/* ---- producer ------------------------------------------------------------ */

/* reserve is all or nothing: a short ring reserves nothing. */
static void test_reserve_all_or_nothing(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 5, &idx), 5);
	assert_int_equal(idx, 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 4, &idx), 0);
	/* The failed call took nothing: all 3 free slots are still there. */
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 3), 3);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 3, &idx), 3);
	assert_int_equal(idx, 5);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 1, &idx), 0);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 0);

	uxdp_ring_prod_cancel(&rp->prod, 8);
	t_push(&rp->prod, 8, 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 1, &idx), 0);
	t_pop(&rp->cons, 8, 0);
}

/* reserve never hands out more slots than the ring holds. */
static void test_reserve_over_size(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 9, &idx), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 0xffffffffU, &idx),
			 0);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 9, &idx), 8);
	assert_int_equal(idx, 0);
	uxdp_ring_prod_cancel(&rp->prod, 8);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 8, &idx), 8);
	assert_int_equal(idx, 0);
}

/* reserve_batch is best effort: it takes what is free, up to n. */
static void test_reserve_batch_partial(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0, i;

	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 5, &idx), 5);
	assert_int_equal(idx, 0);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 10, &idx), 3);
	assert_int_equal(idx, 5);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 4, &idx), 0);
	for (i = 0; i < 8; i++)
		*uxdp_ring_addr(&rp->prod, i) = T_VAL + i;
	uxdp_ring_prod_submit(&rp->prod, 8);

	t_pop(&rp->cons, 2, 0);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 4, &idx), 2);
	assert_int_equal(idx, 8);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 1, &idx), 0);
}

/* Entries become visible to the consumer only when submitted. */
static void test_submit_publishes(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0, i;

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 4, &idx), 4);
	for (i = 0; i < 4; i++)
		*uxdp_ring_addr(&rp->prod, idx + i) = T_VAL + i;
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 1), 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 4, &idx), 0);
	assert_int_equal(uxdp_ring_count(&rp->cons), 0);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 0);

	/* submit publishes the oldest n reserved, not all of them */
	uxdp_ring_prod_submit(&rp->prod, 2);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 2);
	assert_int_equal(uxdp_ring_count(&rp->cons), 2);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 4, &idx), 2);
	assert_int_equal(idx, 0);
	t_expect(&rp->cons, idx, 2, 0);

	uxdp_ring_prod_submit(&rp->prod, 2);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 4, &idx), 2);
	assert_int_equal(idx, 2);
	t_expect(&rp->cons, idx, 2, 2);
}

/* prod_publish publishes every reserved slot, however reserved. */
static void test_prod_publish(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0, i;

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 2, &idx), 2);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp->prod, 3, &idx), 3);
	assert_int_equal(idx, 2);
	for (i = 0; i < 5; i++)
		*uxdp_ring_addr(&rp->prod, i) = T_VAL + i;
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 0);

	uxdp_ring_prod_publish(&rp->prod);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 5);
	assert_int_equal(uxdp_ring_count(&rp->prod), 5);
	uxdp_ring_prod_publish(&rp->prod);	/* nothing new: no change */
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 5);

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 3, &idx), 3);
	*uxdp_ring_addr(&rp->prod, idx) = T_VAL + 5;
	*uxdp_ring_addr(&rp->prod, idx + 1) = T_VAL + 6;
	uxdp_ring_prod_cancel(&rp->prod, 1);
	uxdp_ring_prod_publish(&rp->prod);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 7);

	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 7);
	assert_int_equal(idx, 0);
	t_expect(&rp->cons, idx, 7, 0);
}

/* cancel gives back the newest reserved slots; they are reserved again. */
static void test_prod_cancel(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0, i;

	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 5, &idx), 5);
	for (i = 0; i < 5; i++)
		*uxdp_ring_addr(&rp->prod, idx + i) = T_VAL + i;
	uxdp_ring_prod_cancel(&rp->prod, 2);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 5), 5);
	uxdp_ring_prod_submit(&rp->prod, 3);
	assert_int_equal(uxdp_ring_count(&rp->cons), 3);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 3);
	t_expect(&rp->cons, idx, 3, 0);

	/* The cancelled slots come back first. */
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 1, &idx), 1);
	assert_int_equal(idx, 3);
	*uxdp_ring_addr(&rp->prod, idx) = T_VAL + 3;
	uxdp_ring_prod_submit(&rp->prod, 1);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 1);
	assert_int_equal(idx, 3);
	t_expect(&rp->cons, idx, 1, 3);

	/* Cancelling everything leaves nothing for publish to publish. */
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 4, &idx), 4);
	uxdp_ring_prod_cancel(&rp->prod, 4);
	uxdp_ring_prod_publish(&rp->prod);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 4);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 0);
}

/*
 * nb_free reloads the shared consumer index only when the cache is short
 * of @want: a release by the consumer shows up once someone asks for more
 * than the cache knows about.
 */
static void test_nb_free_cache(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	t_push(&rp->prod, 4, 0);
	t_pop(&rp->cons, 4, 0);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 4);

	/* The cache shows 4 free: enough for want <= 4, so no reload. */
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 4);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 4), 4);
	/* Short of 8: reload, and see all 8. */
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 8), 8);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 8);

	/* reserve goes through the same cache */
	t_push(&rp->prod, 8, 4);
	t_pop(&rp->cons, 2, 4);
	/* The cache says full, but wanting nothing never reloads it. */
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 0), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 2, &idx), 2);
	assert_int_equal(idx, 12);
}

/* ---- consumer ------------------------------------------------------------ */

/* peek is best effort and never returns an entry twice. */
static void test_peek_partial(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 1, &idx), 0);
	t_push(&rp->prod, 3, 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 5, &idx), 3);
	assert_int_equal(idx, 0);
	t_expect(&rp->cons, idx, 3, 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 1, &idx), 0);
	uxdp_ring_cons_release(&rp->cons, 3);

	/* Across the end of the slot array (slots 3..7, 0..2). */
	t_push(&rp->prod, 8, 3);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 3, &idx), 3);
	assert_int_equal(idx, 3);
	t_expect(&rp->cons, idx, 3, 3);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 100, &idx), 5);
	assert_int_equal(idx, 6);
	t_expect(&rp->cons, idx, 5, 6);
	uxdp_ring_cons_release(&rp->cons, 8);
	assert_int_equal(uxdp_ring_count(&rp->cons), 0);
}

/* Slots go back to the producer only when released. */
static void test_release_publishes(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	t_push(&rp->prod, 8, 0);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 8);
	t_expect(&rp->cons, idx, 8, 0);
	/* Peeked but not released: still the consumer's. */
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 1, &idx), 0);
	assert_int_equal(uxdp_ring_count(&rp->prod), 8);

	/* release hands back the oldest n peeked */
	uxdp_ring_cons_release(&rp->cons, 3);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 3);
	assert_int_equal(uxdp_ring_count(&rp->prod), 5);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 1), 3);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 4, &idx), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 3, &idx), 3);
	assert_int_equal(idx, 8);

	uxdp_ring_cons_release(&rp->cons, 5);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 8);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 5, &idx), 5);
	assert_int_equal(idx, 11);
}

/* cons_publish releases every peeked entry, however peeked. */
static void test_cons_publish(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	t_push(&rp->prod, 6, 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 2, &idx), 2);
	assert_int_equal(idx, 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 3, &idx), 3);
	assert_int_equal(idx, 2);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 8), 2);

	uxdp_ring_cons_publish(&rp->cons);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 5);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 8), 7);
	uxdp_ring_cons_publish(&rp->cons);	/* nothing new: no change */
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 5);

	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 1, &idx), 1);
	assert_int_equal(idx, 5);
	uxdp_ring_cons_cancel(&rp->cons, 1);
	uxdp_ring_cons_publish(&rp->cons);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 5);
	assert_int_equal(uxdp_ring_count(&rp->cons), 1);
}

/* cancel un-peeks the newest entries; the next peek returns them again. */
static void test_cons_cancel(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	t_push(&rp->prod, 6, 0);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 4, &idx), 4);
	assert_int_equal(idx, 0);
	uxdp_ring_cons_cancel(&rp->cons, 2);
	/* Nothing was released. */
	assert_int_equal(uxdp_ring_count(&rp->cons), 6);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 8), 2);

	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 4, &idx), 4);
	assert_int_equal(idx, 2);
	t_expect(&rp->cons, idx, 4, 2);
	uxdp_ring_cons_release(&rp->cons, 6);
	assert_int_equal(uxdp_ring_count(&rp->cons), 0);
	assert_int_equal(uxdp_ring_prod_nb_free(&rp->prod, 8), 8);

	/* Cancel everything peeked: all of it comes back. */
	t_push(&rp->prod, 3, 6);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 3);
	uxdp_ring_cons_cancel(&rp->cons, 3);
	t_pop(&rp->cons, 3, 6);
}

/* nb_avail reloads the shared producer index only when the cache is short. */
static void test_nb_avail_cache(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t idx = 0;

	t_push(&rp->prod, 2, 0);
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 1), 2);
	t_push(&rp->prod, 3, 2);
	/* The cache shows 2: enough for want <= 2, so no reload. */
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 1), 2);
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 2), 2);
	/* Short of 3: reload, and see all 5. */
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 3), 5);
	assert_int_equal(uxdp_ring_cons_nb_avail(&rp->cons, 1), 5);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 8, &idx), 5);
	t_expect(&rp->cons, idx, 5, 0);
}

/* ---- whole ring ---------------------------------------------------------- */

enum t_kind { T_ADDR, T_DESC };

static void t_put(enum t_kind kind, struct uxdp_ring *r, uint32_t idx,
		  uint64_t seq)
{
	struct uxdp_desc *d;

	if (kind == T_ADDR) {
		*uxdp_ring_addr(r, idx) = T_VAL + seq;
		return;
	}
	d = uxdp_ring_desc(r, idx);
	d->addr = T_VAL + seq;
	d->len = (uint32_t)(seq * 2654435761U);
	d->options = (uint32_t)seq & UXDP_PKT_CONTD;
}

static void t_check(enum t_kind kind, const struct uxdp_ring *r, uint32_t idx,
		    uint64_t seq)
{
	const struct uxdp_desc *d;

	if (kind == T_ADDR) {
		assert_int_equal(*uxdp_ring_addr(r, idx), T_VAL + seq);
		return;
	}
	d = uxdp_ring_desc(r, idx);
	assert_int_equal(d->addr, T_VAL + seq);
	assert_int_equal(d->len, (uint32_t)(seq * 2654435761U));
	assert_int_equal(d->options, (uint32_t)seq & UXDP_PKT_CONTD);
}

static uint32_t t_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Push @total entries through a ring whose indices start at @start with
 * random batches on both sides, mixing every verb, and check order,
 * content and every count (exact here: one thread drives both sides).
 */
static void t_wrap_run(enum t_kind kind, uint32_t size, uint32_t start,
		       uint32_t total, uint64_t seed)
{
	uint32_t esz = kind == T_ADDR ? 8 : 16;
	uint32_t sent = 0, recvd = 0, want, n, idx, i;
	struct t_ring_pair rp;
	uint64_t rnd;

	assert_int_equal(t_pair_open(&rp, size, esz, start), 0);
	while (recvd < total) {
		/* Producer: up to size + 1, so some requests cannot fit. */
		rnd = t_rand(&seed);
		want = t_min(1 + rnd % (size + 2), total - sent);
		if (want) {
			uint32_t room = size - (sent - recvd);

			if (rnd & 0x100) {
				n = uxdp_ring_prod_reserve_batch(&rp.prod, want,
								 &idx);
				assert_int_equal(n, t_min(want, room));
			} else {
				n = uxdp_ring_prod_reserve(&rp.prod, want,
							   &idx);
				assert_int_equal(n, want <= room ? want : 0);
			}
			if (n)
				assert_int_equal(idx, (uint32_t)(start + sent));
			for (i = 0; i < n; i++)
				t_put(kind, &rp.prod, idx + i, sent + i);
			if (rnd & 0x200)
				uxdp_ring_prod_publish(&rp.prod);
			else
				uxdp_ring_prod_submit(&rp.prod, n);
			sent += n;
		}
		assert_int_equal(uxdp_ring_count(&rp.prod), sent - recvd);

		/* Consumer */
		rnd = t_rand(&seed);
		want = 1 + rnd % (size + 2);
		n = uxdp_ring_cons_peek(&rp.cons, want, &idx);
		assert_int_equal(n, t_min(want, sent - recvd));
		if (n)
			assert_int_equal(idx, (uint32_t)(start + recvd));
		for (i = 0; i < n; i++)
			t_check(kind, &rp.cons, idx + i, recvd + i);
		if (rnd & 0x100)
			uxdp_ring_cons_publish(&rp.cons);
		else
			uxdp_ring_cons_release(&rp.cons, n);
		recvd += n;
		assert_int_equal(uxdp_ring_count(&rp.cons), sent - recvd);
	}
	assert_int_equal(sent, total);
	assert_int_equal(*t_word(rp.mem, UXDP_RING_OFF_PRODUCER),
			 (uint32_t)(start + total));
	assert_int_equal(*t_word(rp.mem, UXDP_RING_OFF_CONSUMER),
			 (uint32_t)(start + total));
	/* The indices did cross 2^32. */
	assert_true(*t_word(rp.mem, UXDP_RING_OFF_PRODUCER) < start);
	assert_true(*t_word(rp.mem, UXDP_RING_OFF_CONSUMER) < start);
	t_pair_close(&rp);
}

/* Free-running indices wrap at 2^32 with no special case. */
/*
 * The other side's index is clamped, never trusted (issue 6, defect 6): a
 * producer that runs more than a ring ahead, or a consumer that releases
 * more than it peeked, used to make peek / reserve_batch return more than
 * the ring size, and the bulk copies then wrote and read past the ring
 * (ASan: heap-buffer-overflow on the arrays and the ring). The arrays here
 * are sized exactly to what was asked, on the heap, so ASan sees any
 * overrun.
 */
static void test_hostile_peer_clamped(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 8, 64 };
	static const uint32_t jumps[] = { 65, 1000, 1U << 31, UINT32_MAX };
	uint32_t s, j;

	(void)state;
	for (s = 0; s < 4; s++) {
		for (j = 0; j < 4; j++) {
			uint32_t n = sizes[s], want = n * 4, got, idx;
			struct t_ring_pair rp;
			uint64_t *addrs = calloc(want, sizeof(*addrs));
			struct uxdp_desc *descs = calloc(want, sizeof(*descs));
			uint32_t *prod, *cons;

			assert_non_null(addrs);
			assert_non_null(descs);
			/* Producer far ahead: the consumer sees at most n. */
			assert_int_equal(t_pair_open(&rp, n, 8, 7), 0);
			prod = t_word(rp.mem, UXDP_RING_OFF_PRODUCER);
			*prod += jumps[j];
			assert_true(uxdp_ring_cons_nb_avail(&rp.cons, want) <= n);
			got = uxdp_ring_cons_peek(&rp.cons, want, &idx);
			assert_true(got <= n);
			uxdp_ring_cons_read_addrs(&rp.cons, idx, addrs, got);
			uxdp_ring_cons_release(&rp.cons, got);
			/* Consumer ahead of the producer: at most n free. */
			cons = t_word(rp.mem, UXDP_RING_OFF_CONSUMER);
			*cons = rp.prod.cached_prod + jumps[j];
			assert_true(uxdp_ring_prod_nb_free(&rp.prod, want) <= n);
			got = uxdp_ring_prod_reserve_batch(&rp.prod, want, &idx);
			assert_true(got <= n);
			uxdp_ring_prod_write_addrs(&rp.prod, idx, addrs, got);
			uxdp_ring_prod_submit(&rp.prod, got);
			uxdp_ring_mem_free(rp.mem, n, 8);

			/* The same with descriptors. */
			assert_int_equal(t_pair_open(&rp, n, 16, 7), 0);
			prod = t_word(rp.mem, UXDP_RING_OFF_PRODUCER);
			*prod -= jumps[j];
			got = uxdp_ring_cons_peek(&rp.cons, want, &idx);
			assert_true(got <= n);
			uxdp_ring_cons_read_descs(&rp.cons, idx, descs, got);
			cons = t_word(rp.mem, UXDP_RING_OFF_CONSUMER);
			*cons -= jumps[j];
			got = uxdp_ring_prod_reserve_batch(&rp.prod, want, &idx);
			assert_true(got <= n);
			uxdp_ring_prod_write_descs(&rp.prod, idx, descs, got);
			uxdp_ring_mem_free(rp.mem, n, 16);
			free(addrs);
			free(descs);
		}
	}
}

/*
 * Two holes the ring fuzzer found in the first clamp: a handle attached to
 * a ring whose peer index is already nonsense trusted it on its fast path,
 * and a clamp followed by a cancel left more free slots (or entries) than
 * the ring has. Either way a later bulk copy ran past the ring.
 */
static void test_hostile_attach_and_cancel(void **state)
{
	uint64_t *buf = calloc(16, sizeof(*buf));
	struct t_ring_pair rp;
	struct uxdp_ring h;
	uint32_t idx, got;

	(void)state;
	assert_non_null(buf);
	/* Attach with the consumer ahead of the producer: full, not 2^32. */
	assert_int_equal(t_pair_open(&rp, 8, 8, 100), 0);
	*t_word(rp.mem, UXDP_RING_OFF_CONSUMER) = 100 + 5;
	assert_int_equal(uxdp_ring_init_prod(&h, rp.mem, 8, NULL), 0);
	assert_true(uxdp_ring_prod_nb_free(&h, 1) <= 8);
	got = uxdp_ring_prod_reserve_batch(&h, 16, &idx);
	assert_true(got <= 8);
	uxdp_ring_prod_write_addrs(&h, idx, buf, got);
	/* Attach with the producer far ahead: empty, not 2^31 entries. */
	*t_word(rp.mem, UXDP_RING_OFF_CONSUMER) = 100;
	*t_word(rp.mem, UXDP_RING_OFF_PRODUCER) = 100 + (1U << 31);
	assert_int_equal(uxdp_ring_init_cons(&h, rp.mem, 8, NULL), 0);
	got = uxdp_ring_cons_peek(&h, 16, &idx);
	assert_true(got <= 8);
	uxdp_ring_cons_read_addrs(&h, idx, buf, got);
	uxdp_ring_mem_free(rp.mem, 8, 8);

	/* Producer: reserve 3, the consumer jumps ahead, cancel the 3. */
	assert_int_equal(t_pair_open(&rp, 8, 8, 0), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 3, &idx), 3);
	*t_word(rp.mem, UXDP_RING_OFF_CONSUMER) = 50;
	got = uxdp_ring_prod_reserve_batch(&rp.prod, 16, &idx);
	assert_true(got <= 5);
	uxdp_ring_prod_cancel(&rp.prod, got + 3);
	got = uxdp_ring_prod_reserve_batch(&rp.prod, 16, &idx);
	assert_true(got <= 8);
	uxdp_ring_prod_write_addrs(&rp.prod, idx, buf, got);
	uxdp_ring_mem_free(rp.mem, 8, 8);

	/*
	 * Producer: reserve 4, the consumer moves into the reserved slots
	 * (3 of them, never submitted), the producer looks (nb_free) and
	 * cancels 3: the consumer must not end up ahead of the producer,
	 * or the next reserve hands out more than the ring (fuzz_ring's
	 * crash: 6 slots of a 4-slot ring, a heap overflow).
	 */
	assert_int_equal(t_pair_open(&rp, 4, 8, 0), 0);
	assert_int_equal(uxdp_ring_prod_reserve_batch(&rp.prod, 16, &idx), 4);
	*t_word(rp.mem, UXDP_RING_OFF_CONSUMER) = 3;
	assert_true(uxdp_ring_prod_nb_free(&rp.prod, 1) <= 4);
	uxdp_ring_prod_cancel(&rp.prod, 3);
	got = uxdp_ring_prod_reserve(&rp.prod, 6, &idx);
	assert_true(got <= 4);
	got = uxdp_ring_prod_reserve_batch(&rp.prod, 6, &idx);
	assert_true(got <= 3);
	uxdp_ring_prod_write_addrs(&rp.prod, idx, buf, got);
	uxdp_ring_mem_free(rp.mem, 4, 8);

	/* Consumer: peek 3, the producer jumps ahead, cancel the 3. */
	assert_int_equal(t_pair_open(&rp, 8, 8, 0), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 3, &idx), 3);
	uxdp_ring_prod_submit(&rp.prod, 3);
	assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 3, &idx), 3);
	*t_word(rp.mem, UXDP_RING_OFF_PRODUCER) = 1000;
	got = uxdp_ring_cons_peek(&rp.cons, 16, &idx);
	assert_true(got <= 5);
	uxdp_ring_cons_cancel(&rp.cons, got + 3);
	got = uxdp_ring_cons_peek(&rp.cons, 16, &idx);
	assert_true(got <= 8);
	uxdp_ring_cons_read_addrs(&rp.cons, idx, buf, got);
	uxdp_ring_mem_free(rp.mem, 8, 8);
	free(buf);
}

/* An empty poll changes nothing in the handle: peek returns 0, idx is the
 * next entry, and entries published later are found as usual. */
static void test_empty_peek_is_pure(void **state)
{
	struct t_ring_pair rp;
	struct uxdp_ring before;
	uint32_t idx = 0, i;

	(void)state;
	assert_int_equal(t_pair_open(&rp, 8, 8, 100), 0);
	before = rp.cons;
	for (i = 0; i < 3; i++) {
		assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 4, &idx), 0);
		assert_int_equal(idx, 100);
		assert_memory_equal(&before, &rp.cons, sizeof(before));
	}
	assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 2, &idx), 2);
	uxdp_ring_prod_submit(&rp.prod, 2);
	assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 4, &idx), 2);
	assert_int_equal(idx, 100);
	uxdp_ring_mem_free(rp.mem, 8, 8);
}

static void test_wrap_u32(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 8, 64, 4096 };
	/* 0xffffffff: the very first entry sits just below the wrap. */
	static const uint32_t starts[] = { 0xfffffff0U, 0xffffffffU,
					   0xffffff00U };
	enum t_kind kind;
	unsigned int s, t;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (kind = T_ADDR; kind <= T_DESC; kind++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (t = 0; t < 3; t++)
				t_wrap_run(kind, sizes[s], starts[t],
					   5000 + 3 * sizes[s], seed++);
}

/* uxdp_ring_count reads the shared indices, wrap included. */
static void test_count(void **state)
{
	struct t_ring_pair *rp = *state;
	struct uxdp_ring cons;
	uint32_t idx = 0;

	assert_int_equal(uxdp_ring_count(&rp->prod), 0);
	assert_int_equal(uxdp_ring_prod_reserve(&rp->prod, 3, &idx), 3);
	assert_int_equal(uxdp_ring_count(&rp->prod), 0);	/* reserved */
	uxdp_ring_prod_submit(&rp->prod, 3);
	assert_int_equal(uxdp_ring_count(&rp->prod), 3);
	assert_int_equal(uxdp_ring_count(&rp->cons), 3);
	assert_int_equal(uxdp_ring_cons_peek(&rp->cons, 2, &idx), 2);
	assert_int_equal(uxdp_ring_count(&rp->cons), 3);	/* unreleased */
	uxdp_ring_cons_release(&rp->cons, 2);
	assert_int_equal(uxdp_ring_count(&rp->cons), 1);
	assert_int_equal(uxdp_ring_count(&rp->prod), 1);

	*t_word(rp->mem, UXDP_RING_OFF_PRODUCER) = 3;
	*t_word(rp->mem, UXDP_RING_OFF_CONSUMER) = 0xfffffffeU;
	assert_int_equal(uxdp_ring_init_cons(&cons, rp->mem, 8, NULL), 0);
	assert_int_equal(uxdp_ring_count(&cons), 5);
	assert_int_equal(uxdp_ring_cons_nb_avail(&cons, 1), 5);
	assert_int_equal(uxdp_ring_cons_peek(&cons, 8, &idx), 5);
	assert_int_equal(idx, 0xfffffffeU);
}

/* A ring of one entry: every entry goes through the same slot. */
static void test_ring_size_one(void **state)
{
	static const uint32_t esz[] = { 8, 16 };
	struct t_ring_pair rp;
	uint32_t idx = 0, i;
	unsigned int k;
	char *slot;

	(void)state;
	for (k = 0; k < 2; k++) {
		assert_int_equal(t_pair_open(&rp, 1, esz[k], 0), 0);
		slot = (char *)rp.mem + UXDP_RING_OFF_DESC;
		assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 2, &idx), 0);
		assert_int_equal(uxdp_ring_prod_reserve_batch(&rp.prod, 2,
							      &idx), 1);
		uxdp_ring_prod_cancel(&rp.prod, 1);
		for (i = 0; i < 100; i++) {
			assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 1,
								&idx), 1);
			assert_int_equal(idx, i);
			assert_ptr_equal(uxdp_ring_addr(&rp.prod, idx), slot);
			*uxdp_ring_addr(&rp.prod, idx) = T_VAL + i;
			assert_int_equal(uxdp_ring_prod_reserve(&rp.prod, 1,
								&idx), 0);
			assert_int_equal(uxdp_ring_prod_reserve_batch(&rp.prod,
								      1, &idx),
					 0);
			uxdp_ring_prod_submit(&rp.prod, 1);

			assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 2,
							     &idx), 1);
			assert_int_equal(idx, i);
			assert_int_equal(*uxdp_ring_addr(&rp.cons, idx),
					 T_VAL + i);
			assert_int_equal(uxdp_ring_cons_peek(&rp.cons, 1,
							     &idx), 0);
			uxdp_ring_cons_release(&rp.cons, 1);
		}
		assert_int_equal(uxdp_ring_count(&rp.cons), 0);
		t_pair_close(&rp);
	}
}

/* need_wakeup round-trips and touches only bit 0 of the flags word. */
static void test_need_wakeup(void **state)
{
	struct t_ring_pair *rp = *state;
	uint32_t *flags = t_word(rp->mem, UXDP_RING_OFF_FLAGS);

	assert_false(uxdp_ring_needs_wakeup(&rp->prod));
	assert_false(uxdp_ring_needs_wakeup(&rp->cons));
	uxdp_ring_set_need_wakeup(&rp->cons);
	assert_int_equal(*flags, UXDP_RING_NEED_WAKEUP);
	assert_true(uxdp_ring_needs_wakeup(&rp->prod));
	uxdp_ring_clear_need_wakeup(&rp->cons);
	assert_int_equal(*flags, 0);
	assert_false(uxdp_ring_needs_wakeup(&rp->prod));

	/* Other bits survive set and clear, repeated ones included. */
	*flags = 0xa5a5a5a4U;
	assert_false(uxdp_ring_needs_wakeup(&rp->prod));
	uxdp_ring_set_need_wakeup(&rp->cons);
	assert_int_equal(*flags, 0xa5a5a5a5U);
	assert_true(uxdp_ring_needs_wakeup(&rp->prod));
	assert_true(uxdp_ring_needs_wakeup(&rp->cons));
	uxdp_ring_set_need_wakeup(&rp->cons);
	assert_int_equal(*flags, 0xa5a5a5a5U);
	uxdp_ring_clear_need_wakeup(&rp->cons);
	assert_int_equal(*flags, 0xa5a5a5a4U);
	assert_false(uxdp_ring_needs_wakeup(&rp->prod));
	uxdp_ring_clear_need_wakeup(&rp->cons);
	assert_int_equal(*flags, 0xa5a5a5a4U);

	*flags = 0xffffffffU;
	assert_true(uxdp_ring_needs_wakeup(&rp->prod));
	uxdp_ring_clear_need_wakeup(&rp->prod);
	assert_int_equal(*flags, 0xfffffffeU);
	uxdp_ring_set_need_wakeup(&rp->prod);
	assert_int_equal(*flags, 0xffffffffU);

	/* The index words are untouched. */
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_PRODUCER), 0);
	assert_int_equal(*t_word(rp->mem, UXDP_RING_OFF_CONSUMER), 0);
}

/*
 * Drive a ring in a buffer laid out some other way, as getsockopt(
 * XDP_MMAP_OFFSETS) may report: the handles use the given offsets and
 * touch nothing else.
 */
#define T_POISON	0x5a
#define T_CUST_SIZE	8
#define T_CUST_START	0xfffffffcU

static void test_custom_offsets(void **state)
{
	static const struct uxdp_ring_offsets off = {
		.producer = 256,
		.consumer = 64,		/* before the producer */
		.flags = 4,
		.desc = 448,
	};
	enum t_kind kind;
	size_t len, i;

	(void)state;
	for (kind = T_ADDR; kind <= T_DESC; kind++) {
		size_t esz = kind == T_ADDR ? 8 : 16;
		size_t arr_end = off.desc + T_CUST_SIZE * esz;
		struct uxdp_ring prod, cons;
		unsigned char *buf = NULL;
		uint32_t idx = 0, j;

		len = arr_end + 64;
		assert_int_equal(posix_memalign((void **)&buf, 64, len), 0);
		memset(buf, T_POISON, len);
		*t_word(buf, off.producer) = T_CUST_START;
		*t_word(buf, off.consumer) = T_CUST_START;
		*t_word(buf, off.flags) = 0x10;

		assert_int_equal(uxdp_ring_init_prod(&prod, buf, T_CUST_SIZE,
						     &off), 0);
		assert_int_equal(uxdp_ring_init_cons(&cons, buf, T_CUST_SIZE,
						     &off), 0);
		assert_ptr_equal(prod.producer, buf + off.producer);
		assert_ptr_equal(prod.consumer, buf + off.consumer);
		assert_ptr_equal(prod.flags, buf + off.flags);
		assert_ptr_equal(prod.ring, buf + off.desc);
		assert_ptr_equal(cons.producer, buf + off.producer);
		assert_ptr_equal(cons.consumer, buf + off.consumer);
		assert_ptr_equal(cons.flags, buf + off.flags);
		assert_ptr_equal(cons.ring, buf + off.desc);
		assert_int_equal(uxdp_ring_count(&cons), 0);
		assert_int_equal(uxdp_ring_prod_nb_free(&prod, 9),
				 T_CUST_SIZE);

		/* Fill the ring (crossing 2^32) and drain it. */
		assert_int_equal(uxdp_ring_prod_reserve(&prod, T_CUST_SIZE,
							&idx), T_CUST_SIZE);
		assert_int_equal(idx, T_CUST_START);
		for (j = 0; j < T_CUST_SIZE; j++)
			t_put(kind, &prod, idx + j, j);
		uxdp_ring_prod_submit(&prod, T_CUST_SIZE);
		assert_int_equal(*t_word(buf, off.producer),
				 (uint32_t)(T_CUST_START + T_CUST_SIZE));
		assert_int_equal(uxdp_ring_count(&prod), T_CUST_SIZE);
		/* Entry j is in slot (start + j) & mask of the desc array. */
		for (j = 0; j < T_CUST_SIZE; j++) {
			uint64_t v;

			memcpy(&v, buf + off.desc +
			       ((T_CUST_START + j) & (T_CUST_SIZE - 1)) * esz,
			       sizeof(v));
			assert_int_equal(v, T_VAL + j);
		}

		assert_int_equal(uxdp_ring_cons_peek(&cons, 9, &idx),
				 T_CUST_SIZE);
		for (j = 0; j < T_CUST_SIZE; j++)
			t_check(kind, &cons, idx + j, j);
		uxdp_ring_cons_release(&cons, T_CUST_SIZE);
		assert_int_equal(*t_word(buf, off.consumer),
				 (uint32_t)(T_CUST_START + T_CUST_SIZE));
		assert_int_equal(uxdp_ring_count(&cons), 0);

		uxdp_ring_set_need_wakeup(&cons);
		assert_int_equal(*t_word(buf, off.flags), 0x11);
		assert_true(uxdp_ring_needs_wakeup(&prod));

		/* Nothing outside the three words and the array changed. */
		for (i = 0; i < len; i++) {
			if ((i >= off.producer && i < off.producer + 4) ||
			    (i >= off.consumer && i < off.consumer + 4) ||
			    (i >= off.flags && i < off.flags + 4) ||
			    (i >= off.desc && i < arr_end))
				continue;
			assert_int_equal(buf[i], T_POISON);
		}
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_offsets),
		cmocka_unit_test(test_layout_null_offsets),
		cmocka_unit_test(test_desc_layout),
		cmocka_unit_test(test_mem_size),
		cmocka_unit_test(test_mem_size_bad),
		cmocka_unit_test(test_mem_alloc_bad),
		cmocka_unit_test(test_mem_alloc),
		cmocka_unit_test(test_mem_alloc_lazy),
		cmocka_unit_test(test_hostile_peer_clamped),
		cmocka_unit_test(test_empty_peek_is_pure),
		cmocka_unit_test(test_hostile_attach_and_cancel),
		cmocka_unit_test(test_init_bad_entries),
		cmocka_unit_test(test_init_misaligned_offsets),
		cmocka_unit_test(test_init_attaches_to_used_ring),
		cmocka_unit_test_setup_teardown(test_reserve_all_or_nothing,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_reserve_over_size,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_reserve_batch_partial,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_submit_publishes,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_prod_publish,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_prod_cancel,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_nb_free_cache,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_peek_partial,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_release_publishes,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_cons_publish,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_cons_cancel,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test_setup_teardown(test_nb_avail_cache,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test(test_wrap_u32),
		cmocka_unit_test_setup_teardown(test_count,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test(test_ring_size_one),
		cmocka_unit_test_setup_teardown(test_need_wakeup,
						t_setup_addr8, t_teardown_pair),
		cmocka_unit_test(test_custom_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
