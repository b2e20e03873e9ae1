/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UMEM creation and validation: defaults, every rejected configuration gives
 * -EINVAL and says why, option-struct compatibility, caller vs own memory.
 * (tests/test_umem_kernel.c checks the same rules against the kernel.)
 */
#include "t_helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <uxdp/uxdp.h>

#define MB (1ULL << 20)

static void *t_area(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_ptr_not_equal(p, MAP_FAILED);
	return p;
}

/* Defaults: 4 KiB chunks, no headroom, 2048-entry rings, our own memory. */
static void test_defaults(void **state)
{
	struct uxdp_umem *u = uxdp_umem_create(NULL, MB, NULL);

	(void)state;
	assert_non_null(u);
	assert_int_equal(uxdp_umem_chunk_size(u), 4096);
	assert_int_equal(uxdp_umem_headroom(u), 0);
	assert_int_equal(uxdp_umem_nchunks(u), 256);
	assert_int_equal(uxdp_umem_size(u), MB);
	assert_false(uxdp_umem_unaligned(u));
	assert_int_equal(uxdp_umem_fill_ring(u)->size, 2048);
	assert_int_equal(uxdp_umem_comp_ring(u)->size, 2048);
	assert_int_equal((uintptr_t)uxdp_umem_area(u) & 4095, 0);
	/* The area is ours and writable end to end. */
	memset(uxdp_umem_area(u), 0xab, MB);
	assert_int_equal(uxdp_umem_destroy(u), 0);
}

struct bad_case {
	uint64_t size;
	uint32_t chunk_size, headroom, flags, tx_meta, fill, comp;
	size_t area_off;
	const char *why;	/* substring expected in uxdp_errmsg() */
};

/* Every rule rejects with EINVAL, and the message names the rule. */
static void test_rejects_say_why(void **state)
{
	static const struct bad_case cases[] = {
		{ MB, 1024, 0, 0, 0, 0, 0, 0, "chunk_size 1024 outside" },
		{ MB, 2047, 0, 0, 0, 0, 0, 0, "outside" },
		{ MB, 8192, 0, 0, 0, 0, 0, 0, "outside" },
		{ MB, 3000, 0, 0, 0, 0, 0, 0, "not a power of two" },
		{ MB, 2048, 0, 1U << 3, 0, 0, 0, 0, "unknown flags" },
		{ MB, 2048, 0, 0, 0, 0, 0, 64, "not page aligned" },
		{ 0, 2048, 0, 0, 0, 0, 0, 0, "chunks of" },
		{ 1000, 2048, 0, UXDP_UMEM_F_UNALIGNED, 0, 0, 0, 0, "chunks of" },
		{ MB + 2048, 4096, 0, 0, 0, 0, 0, 0, "not a multiple" },
		{ MB, 2048, 1345, 0, 0, 0, 0, 0, "headroom 1345 too large" },
		{ MB, 4096, 4000, 0, 0, 0, 0, 0, "too large" },
		{ MB, 2048, 0, UXDP_UMEM_F_TX_METADATA_LEN, 12, 0, 0, 0,
		  "tx_metadata_len" },
		{ MB, 2048, 0, UXDP_UMEM_F_TX_METADATA_LEN, 256, 0, 0, 0,
		  "tx_metadata_len" },
		{ MB, 2048, 0, UXDP_UMEM_F_TX_METADATA_LEN, 8, 0, 0, 0,
		  "tx_metadata_len 8 is below 16" },
		{ MB, 2048, 0, 0, 0, 1000, 0, 0, "fill_size 1000" },
		{ MB, 2048, 0, 0, 0, 0, 3, 0, "comp_size 3" },
		{ MB, 2048, 0, UXDP_UMEM_F_HUGEPAGES, 0, 0, 0, 0,
		  "only when uxdp allocates" },
	};
	char *area = t_area(2 * MB);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		UXDP_DECLARE_OPTS(uxdp_umem_opts, o,
				  .chunk_size = c->chunk_size,
				  .headroom = c->headroom, .flags = c->flags,
				  .tx_metadata_len = c->tx_meta,
				  .fill_size = c->fill, .comp_size = c->comp);
		struct uxdp_umem *u;

		errno = 0;
		u = uxdp_umem_create(area + c->area_off, c->size, &o);
		if (u || errno != EINVAL || !strstr(uxdp_errmsg(), c->why))
			fail_msg("case %zu: umem %p errno %d msg '%s', want "
				 "EINVAL and '%s'", i, (void *)u, errno,
				 uxdp_errmsg(), c->why);
		assert_int_equal(uxdp_umem_check(area + c->area_off, c->size,
						 &o), -EINVAL);
	}
	munmap(area, 2 * MB);
}

/* Boundaries that must be accepted. */
static void test_accepts_limits(void **state)
{
	char *area = t_area(2 * MB);
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 2048,
			  .headroom = 2048 - UXDP_UMEM_CHUNK_RESERVED);
	struct uxdp_umem *u;

	(void)state;
	u = uxdp_umem_create(area, MB, &o);
	assert_non_null(u);
	assert_int_equal(uxdp_umem_destroy(u), 0);

	/* Unaligned: any chunk size in range, a tail that is not a chunk. */
	o.chunk_size = 3000;
	o.headroom = 0;
	o.flags = UXDP_UMEM_F_UNALIGNED;
	u = uxdp_umem_create(area, MB + 100, &o);
	assert_non_null(u);
	assert_int_equal(uxdp_umem_nchunks(u), (MB + 100) / 3000);
	assert_true(uxdp_umem_unaligned(u));
	assert_int_equal(uxdp_umem_destroy(u), 0);

	/* The metadata length is only read with its flag, as in the kernel. */
	o.flags = 0;
	o.chunk_size = 2048;
	o.tx_metadata_len = 13;
	assert_int_equal(uxdp_umem_check(area, MB, &o), 0);
	o.flags = UXDP_UMEM_F_TX_METADATA_LEN;
	o.tx_metadata_len = 248;
	assert_int_equal(uxdp_umem_check(area, MB, &o), 0);

	/* Exactly one chunk. */
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	assert_int_equal(uxdp_umem_check(area, 4096, &o), 0);
	munmap(area, 2 * MB);
}

/*
 * tx_metadata_len with its flag: the kernel's rule since 1bb30b181d9f, every
 * length from 0 to 300. 16..248 in steps of 8 and nothing else; 0 and 8
 * (older kernels took them) say which rule, and none of it matters
 * without the flag. The headroom rule does not move with it: the largest
 * headroom is the same with and without metadata.
 */
static void test_tx_metadata_len_rule(void **state)
{
	char *area = t_area(MB);
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 4096,
			  .flags = UXDP_UMEM_F_TX_METADATA_LEN);
	unsigned int ok = 0;
	uint32_t len;
	int want, got;

	(void)state;
	for (len = 0; len <= 300; len++) {
		o.flags = UXDP_UMEM_F_TX_METADATA_LEN;
		o.tx_metadata_len = len;
		want = len >= UXDP_TX_METADATA_MIN_LEN &&
		       len <= UXDP_TX_METADATA_MAX_LEN && len % 8 == 0 ?
		       0 : -EINVAL;
		got = uxdp_umem_check(area, MB, &o);
		if (got != want)
			fail_msg("tx_metadata_len %u with the flag: %d, want "
				 "%d (%s)", len, got, want, uxdp_errmsg());
		ok += !got;
		if (len < UXDP_TX_METADATA_MIN_LEN && len % 8 == 0)
			assert_non_null(strstr(uxdp_errmsg(), "below 16"));
		o.flags = 0;
		assert_int_equal(uxdp_umem_check(area, MB, &o), 0);
	}
	assert_int_equal(ok, (248 - 16) / 8 + 1);

	o.flags = UXDP_UMEM_F_TX_METADATA_LEN | UXDP_UMEM_F_TX_SW_CSUM |
		  UXDP_UMEM_F_UNALIGNED;
	o.chunk_size = 3000;
	o.tx_metadata_len = 16;
	assert_int_equal(uxdp_umem_check(area, MB, &o), 0);
	o.tx_metadata_len = 8;
	assert_int_equal(uxdp_umem_check(area, MB, &o), -EINVAL);

	o.flags = UXDP_UMEM_F_TX_METADATA_LEN;
	o.chunk_size = 4096;
	o.tx_metadata_len = UXDP_TX_METADATA_MAX_LEN;
	o.headroom = 4096 - UXDP_UMEM_CHUNK_RESERVED;
	assert_int_equal(uxdp_umem_check(area, MB, &o), 0);
	o.headroom++;
	assert_int_equal(uxdp_umem_check(area, MB, &o), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "headroom"));
	munmap(area, MB);
}

/* Caller memory is used in place and left mapped at destroy. */
static void test_caller_area(void **state)
{
	char *area = t_area(MB);
	struct uxdp_umem *u = uxdp_umem_create(area, MB, NULL);

	(void)state;
	assert_non_null(u);
	assert_ptr_equal(uxdp_umem_area(u), area);
	assert_int_equal(uxdp_umem_destroy(u), 0);
	area[MB - 1] = 1;	/* still ours: would fault if unmapped */
	munmap(area, MB);
}

/* Option structs: too small, older, newer with zero tail, newer non-zero. */
static void test_opts_compat(void **state)
{
	struct {
		struct uxdp_umem_opts o;
		uint64_t future;
	} big;
	struct uxdp_umem_opts o;
	struct uxdp_umem *u;

	(void)state;
	memset(&o, 0, sizeof(o));	/* sz == 0: not declared properly */
	assert_null(uxdp_umem_create(NULL, MB, &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "UXDP_DECLARE_OPTS"));

	/* An older caller knows only up to headroom: the rest is default. */
	memset(&o, 0, sizeof(o));
	o.sz = offsetof(struct uxdp_umem_opts, headroom) + sizeof(uint32_t);
	o.chunk_size = 2048;
	o.flags = 0xdead;	/* beyond the caller's sz: must be ignored */
	u = uxdp_umem_create(NULL, MB, &o);
	assert_non_null(u);
	assert_int_equal(uxdp_umem_chunk_size(u), 2048);
	assert_false(uxdp_umem_unaligned(u));
	assert_int_equal(uxdp_umem_destroy(u), 0);

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	u = uxdp_umem_create(NULL, MB, &big.o);
	assert_non_null(u);
	assert_int_equal(uxdp_umem_destroy(u), 0);

	big.future = 1;
	assert_null(uxdp_umem_create(NULL, MB, &big.o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "newer"));
}

/* Huge pages are optional: either they work or the error says what to do. */
static void test_hugepages(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .flags = UXDP_UMEM_F_HUGEPAGES);
	struct uxdp_umem *u;

	(void)state;
	u = uxdp_umem_create(NULL, 4 * MB, &o);
	if (u) {
		memset(uxdp_umem_area(u), 1, 4 * MB);
		assert_int_equal(uxdp_umem_destroy(u), 0);
	} else {
		assert_int_equal(errno, ENOMEM);
		assert_non_null(strstr(uxdp_errmsg(), "nr_hugepages"));
	}
}

/* Ring sizes come from the options. */
static void test_ring_sizes(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .fill_size = 64,
			  .comp_size = 1U << 14);
	struct uxdp_umem *u = uxdp_umem_create(NULL, MB, &o);

	(void)state;
	assert_non_null(u);
	assert_int_equal(uxdp_umem_fill_ring(u)->size, 64);
	assert_int_equal(uxdp_umem_comp_ring(u)->size, 1U << 14);
	assert_int_equal(uxdp_umem_destroy(u), 0);
}

/*
 * The largest fill and completion rings (2^30 entries, 8 GiB each) cost
 * only what is used: creating the UMEM leaves well under 64 MiB resident.
 */
static void test_huge_rings_lazy(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .fill_size = 1U << 30,
			  .comp_size = 1U << 30);
	long page = sysconf(_SC_PAGESIZE), before, grew;
	uint64_t addr = 4096;
	struct uxdp_umem *u;
	uint32_t idx;

	(void)state;
	before = t_rss_pages();
	u = uxdp_umem_create(NULL, MB, &o);
	if (!u)
		fail_msg("create: %s", uxdp_errmsg());
	assert_int_equal(uxdp_umem_fill_ring(u)->size, 1U << 30);
	assert_int_equal(uxdp_umem_comp_ring(u)->size, 1U << 30);
	/* The fill ring works. */
	assert_int_equal(uxdp_ring_prod_reserve(uxdp_umem_fill_ring(u), 1,
						&idx), 1);
	uxdp_ring_prod_write_addrs(uxdp_umem_fill_ring(u), idx, &addr, 1);
	uxdp_ring_prod_submit(uxdp_umem_fill_ring(u), 1);
	grew = (t_rss_pages() - before) * page;
	/* The 1 MiB area is populated on purpose; the rings are not. */
	if (grew >= (long)(64 * MB))
		fail_msg("UMEM with 2^30-entry rings: %ld bytes resident",
			 grew);
	assert_int_equal(uxdp_umem_destroy(u), 0);
}

/* Descriptor address helpers. */
static void test_addr_helpers(void **state)
{
	char area[16];
	uint64_t a = (5000ULL) | (300ULL << UXDP_UNALIGNED_BUF_OFFSET_SHIFT);

	(void)state;
	assert_int_equal(uxdp_umem_addr_offset(4096), 4096);
	assert_int_equal(uxdp_umem_addr_offset(a), 5300);
	assert_ptr_equal(uxdp_umem_addr_ptr(area, 7), area + 7);
	assert_int_equal(uxdp_umem_destroy(NULL), 0);
}

/*
 * Default fill and completion rings hold every chunk (issue 7, item 8):
 * the smallest power of two that is at least the chunk count and at least
 * UXDP_UMEM_DEFAULT_RING_SIZE (src/pool/umem.c, pool_ring_size).
 */
static void test_default_rings_hold_every_chunk(void **state)
{
	static const struct {
		uint32_t chunks, chunk_size, ring;
	} cases[] = {
		{ 100, 4096, UXDP_UMEM_DEFAULT_RING_SIZE },
		{ 2048, 4096, 2048 },
		{ 2049, 2048, 4096 },
		{ 4096, 4096, 4096 },
		{ 4096, 2048, 4096 },
		{ 4097, 2048, 8192 },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		UXDP_DECLARE_OPTS(uxdp_umem_opts, o,
				  .chunk_size = cases[i].chunk_size);
		struct uxdp_umem *u = uxdp_umem_create(NULL,
			(uint64_t)cases[i].chunks * cases[i].chunk_size, &o);

		if (!u)
			fail_msg("%u chunks: %s", cases[i].chunks,
				 uxdp_errmsg());
		assert_int_equal(uxdp_umem_nchunks(u), cases[i].chunks);
		assert_int_equal(uxdp_umem_fill_ring(u)->size, cases[i].ring);
		assert_int_equal(uxdp_umem_comp_ring(u)->size, cases[i].ring);
		/* And "post every chunk" fits in one go. */
		assert_int_equal(uxdp_umem_fill_all(u), (int)cases[i].chunks);
		assert_int_equal(*uxdp_umem_fill_ring(u)->producer,
				 cases[i].chunks);
		assert_int_equal(uxdp_umem_destroy(u), 0);
	}
}

/*
 * uxdp_umem_fill_all() is all or nothing: a fill ring smaller than the
 * chunks gets -ENOSPC, a message, and no entry at all; a ring that is
 * already partly used likewise.
 */
static void test_fill_all_enospc(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .fill_size = 64);
	struct uxdp_umem *u = uxdp_umem_create(NULL, MB, &o);	/* 256 */
	struct uxdp_ring *fill;
	uint64_t addr = 0;
	uint32_t idx;

	(void)state;
	assert_non_null(u);
	fill = uxdp_umem_fill_ring(u);
	assert_int_equal(fill->size, 64);
	assert_int_equal(uxdp_umem_fill_all(u), -ENOSPC);
	assert_non_null(strstr(uxdp_errmsg(), "fill ring"));
	assert_int_equal(*fill->producer, 0);
	assert_int_equal(uxdp_ring_prod_nb_free(fill, 64), 64);
	assert_int_equal(uxdp_umem_destroy(u), 0);

	/* Exactly the chunks: fits; once more: no room, nothing added. */
	o.fill_size = 256;
	u = uxdp_umem_create(NULL, MB, &o);
	assert_non_null(u);
	fill = uxdp_umem_fill_ring(u);
	assert_int_equal(uxdp_umem_fill_all(u), 256);
	assert_int_equal(uxdp_umem_fill_all(u), -ENOSPC);
	assert_int_equal(*fill->producer, 256);
	assert_int_equal(uxdp_umem_destroy(u), 0);

	/* One entry already posted leaves room for 255 of 256: none go. */
	u = uxdp_umem_create(NULL, MB, &o);
	assert_non_null(u);
	fill = uxdp_umem_fill_ring(u);
	assert_int_equal(uxdp_ring_prod_reserve(fill, 1, &idx), 1);
	uxdp_ring_prod_write_addrs(fill, idx, &addr, 1);
	uxdp_ring_prod_submit(fill, 1);
	assert_int_equal(uxdp_umem_fill_all(u), -ENOSPC);
	assert_int_equal(*fill->producer, 1);
	assert_int_equal(uxdp_umem_destroy(u), 0);
}

/*
 * An area the library maps with UXDP_UMEM_F_THP: populated at create (no
 * fault on the datapath), and from 2 MiB up 2 MiB aligned and advised
 * MADV_HUGEPAGE, so that with transparent huge pages in "madvise" or
 * "always" mode it is backed by huge pages; with a caller's area the flag
 * is refused.
 */
static bool thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strstr(buf, "[never]");
}

/* AnonHugePages of the mapping that starts at @start, in KiB; -1 if none. */
static long smaps_anon_huge_kb(const void *start)
{
	char line[256], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)start);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break;
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void test_area_mapped_for_the_datapath(void **state)
{
	static const uint64_t sizes[] = { 64 * 1024, 4 << 20, (6 << 20) + 4096 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .flags = UXDP_UMEM_F_THP);
		struct uxdp_umem *u = uxdp_umem_create(NULL, sizes[i], &o);
		unsigned char vec[2048];
		uintptr_t a;
		size_t pg, npg;
		long kb;

		assert_non_null(u);
		a = (uintptr_t)uxdp_umem_area(u);
		npg = (size_t)((sizes[i] + 4095) / 4096);
		assert_true(npg <= sizeof(vec));
		/* Populated: every page resident before the first packet. */
		assert_int_equal(mincore((void *)a, sizes[i], vec), 0);
		for (pg = 0; pg < npg; pg++)
			assert_true(vec[pg] & 1);
		if (sizes[i] >= (2 << 20)) {
			assert_int_equal(a & ((2 << 20) - 1), 0);
			kb = smaps_anon_huge_kb((void *)a);
			if (!thp_enabled())
				printf("test_umem: transparent huge pages "
				       "are off here: alignment checked, "
				       "backing not\n");
			else
				/* Huge pages are a best effort of the
				 * kernel (memory may be fragmented): at
				 * least one, not all. */
				assert_true(kb >= 2048);
		}
		assert_int_equal(uxdp_umem_destroy(u), 0);
	}
	{
		UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .flags = UXDP_UMEM_F_THP);
		static char area[1 << 16] __attribute__((aligned(4096)));

		assert_null(uxdp_umem_create(area, sizeof(area), &o));
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(uxdp_errmsg(), "UXDP_UMEM_F_THP"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_rejects_say_why),
		cmocka_unit_test(test_accepts_limits),
		cmocka_unit_test(test_tx_metadata_len_rule),
		cmocka_unit_test(test_caller_area),
		cmocka_unit_test(test_opts_compat),
		cmocka_unit_test(test_hugepages),
		cmocka_unit_test(test_ring_sizes),
		cmocka_unit_test(test_huge_rings_lazy),
		cmocka_unit_test(test_addr_helpers),
		cmocka_unit_test(test_default_rings_hold_every_chunk),
		cmocka_unit_test(test_fill_all_enospc),
		cmocka_unit_test(test_area_mapped_for_the_datapath),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
