/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_umem: bytes -> a UMEM configuration -> uxdp_umem_check() and
 * uxdp_umem_create().
 *
 * Checks, for every input:
 *  - check() returns 0 or -EINVAL, and -EINVAL comes with an error text;
 *  - check() agrees with an independent model of the rules in umem.h
 *    (the kernel's XDP_UMEM_REG rules plus uxdp's ring-size and option-struct
 *    rules);
 *  - create() succeeds exactly when check() returned 0 (it may also fail
 *    with ENOMEM for UXDP_UMEM_F_HUGEPAGES, when no huge pages are
 *    reserved); a failure is NULL + EINVAL with the same error text check()
 *    gave;
 *  - a created UMEM reports what was asked for (size, chunk size, headroom,
 *    chunk count, mode, area, ring sizes), its area is usable end to end,
 *    and uxdp_umem_destroy() returns 0.
 * create() runs only when the result cannot need much memory: size at most
 * 4 MiB and ring sizes at most 2^16 (a failing configuration allocates
 * nothing, so it always runs).
 *
 * Input (little-endian, zeros past the end):
 *	u8   area kind: 0 NULL, 1 a heap area, 2 a heap area + offset,
 *	     3 any number (never dereferenced); bit 2: opts NULL;
 *	     bit 3: opts.sz from the input
 *	u64  area number (kind 3) / offset (kind 2, low 12 bits)
 *	u8   size shape, u64 size
 *	u8   chunk shape, u32 chunk_size
 *	u8   headroom shape, u32 headroom
 *	u8   flags shape, u32 flags
 *	u8   tx_metadata_len shape (bit 0: low 9 bits only; bit 1: one of
 *	     0, 8, 16, 24, the edge of the 16-byte minimum), u32 tx_metadata_len
 *	u8   ring shape, u32 fill_size, u32 comp_size
 *	u8   opts.sz (bit 3 of the first byte), then the bytes past the struct
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

#define PAGE		4096ULL
#define MAX_CREATE_SIZE	(4ULL << 20)
#define MAX_CREATE_RING	(1U << 16)
#define OPTS_BUF	80

/* The part of the options struct the library knows (up to comp_size). */
#define OPTS_KNOWN_END \
	(offsetof(struct uxdp_umem_opts, comp_size) + sizeof(uint32_t))

union opts_buf {
	struct uxdp_umem_opts o;
	unsigned char b[OPTS_BUF];
	uint64_t align;
};

static const uint32_t chunk_table[] = {
	0, 2048, 4096, 3000, 2047, 2049, 4095, 4097, 1, 8192, 1U << 31,
	UINT32_MAX,
};

static uint64_t pick_size(struct fz *f)
{
	uint8_t shape = fz_u8(f);
	uint64_t v = fz_u64(f);

	switch (shape % 6) {
	case 0:
		return v;
	case 1:	/* whole pages, up to 4 MiB */
		return (v % 1025) * PAGE;
	case 2:	/* whole 2048-byte chunks */
		return (v % 2049) * 2048;
	case 3:	/* anything up to 4 MiB + a bit */
		return v % (MAX_CREATE_SIZE + 8192);
	case 4:	/* near the top of the address space */
		return UINT64_MAX - (v & 0xffff);
	default:	/* near 2^32 pages and 2^32 chunks */
		return (1ULL << 44) + (v & 0xffffff) - 0x800000;
	}
}

static uint32_t pick_chunk(struct fz *f)
{
	uint8_t shape = fz_u8(f);
	uint32_t v = fz_u32(f);

	if (shape % 4 == 0)
		return v;
	return chunk_table[v % (sizeof(chunk_table) / sizeof(chunk_table[0]))];
}

static uint32_t pick_headroom(struct fz *f, uint32_t chunk)
{
	uint8_t shape = fz_u8(f);
	uint32_t v = fz_u32(f);
	uint32_t c = chunk ? chunk : UXDP_UMEM_DEFAULT_CHUNK_SIZE;

	switch (shape % 4) {
	case 0:
		return v;
	case 1:
		return v % 4096;
	default:	/* around the largest valid headroom */
		return c - UXDP_UMEM_CHUNK_RESERVED + (v % 5) - 2;
	}
}

static uint32_t pick_flags(struct fz *f)
{
	uint8_t shape = fz_u8(f);
	uint32_t v = fz_u32(f);

	if (shape % 4 == 0)
		return v;
	return v & (UXDP_UMEM_F_UNALIGNED | UXDP_UMEM_F_TX_SW_CSUM |
		    UXDP_UMEM_F_TX_METADATA_LEN |
		    (shape % 4 == 1 ? UXDP_UMEM_F_HUGEPAGES : 0) |
		    (shape % 8 == 3 ? UXDP_UMEM_F_THP : 0));
}

static uint32_t pick_ring(uint8_t shape, uint32_t v)
{
	switch (shape % 4) {
	case 0:
		return v;
	case 1:
		return 0;		/* the default */
	default:
		return 1U << (v % 32);
	}
}

/* ---- the model: umem.h's rules, written from the header ------------------ */

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* A field the library reads: present in the caller's struct and non-zero. */
static uint32_t opt_get(const union opts_buf *ob, bool null, size_t off,
			uint32_t def)
{
	uint32_t v;

	if (null || ob->o.sz < off + sizeof(uint32_t))
		return def;
	memcpy(&v, ob->b + off, sizeof(v));
	return v ? v : def;
}

#define OPT(ob, null, field, def) \
	opt_get(ob, null, offsetof(struct uxdp_umem_opts, field), def)

static bool model_valid(uint64_t area, bool area_null, uint64_t size,
			const union opts_buf *ob, bool null)
{
	uint32_t chunk, headroom, flags, txm, fill, comp;
	uint64_t chunks, npgs;
	bool unaligned;
	size_t i;

	if (!null) {
		if (ob->o.sz < sizeof(size_t))
			return false;
		for (i = OPTS_KNOWN_END; i < ob->o.sz; i++)
			if (ob->b[i])
				return false;
	}
	chunk = OPT(ob, null, chunk_size, UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	headroom = OPT(ob, null, headroom, 0);
	flags = OPT(ob, null, flags, 0);
	txm = OPT(ob, null, tx_metadata_len, 0);
	fill = OPT(ob, null, fill_size, UXDP_UMEM_DEFAULT_RING_SIZE);
	comp = OPT(ob, null, comp_size, UXDP_UMEM_DEFAULT_RING_SIZE);
	unaligned = flags & UXDP_UMEM_F_UNALIGNED;

	if (flags & ~(UXDP_UMEM_F_UNALIGNED | UXDP_UMEM_F_TX_SW_CSUM |
		      UXDP_UMEM_F_TX_METADATA_LEN | UXDP_UMEM_F_HUGEPAGES |
		      UXDP_UMEM_F_THP))
		return false;
	if ((flags & (UXDP_UMEM_F_HUGEPAGES | UXDP_UMEM_F_THP)) && !area_null)
		return false;
	if (area_null)
		area = PAGE;	/* uxdp places it: page aligned */
	if (chunk < UXDP_UMEM_MIN_CHUNK_SIZE ||
	    chunk > UXDP_UMEM_MAX_CHUNK_SIZE)
		return false;
	if (!unaligned && !pow2(chunk))
		return false;
	if (area % PAGE)
		return false;
	if (area + size < area)
		return false;
	npgs = size / PAGE + (size % PAGE != 0);
	if (npgs > UINT32_MAX)
		return false;
	chunks = size / chunk;
	if (chunks == 0 || chunks > UINT32_MAX)
		return false;
	if (!unaligned && size % chunk)
		return false;
	if ((uint64_t)headroom + UXDP_UMEM_CHUNK_RESERVED > chunk)
		return false;
	/* with the flag: 16..248, a multiple of 8 (the kernel since
	 * 1bb30b181d9f) */
	if ((flags & UXDP_UMEM_F_TX_METADATA_LEN) &&
	    (txm >= 256 || txm % 8 || txm < 16))
		return false;
	if (!pow2(fill) || fill > UXDP_RING_MAX_ENTRIES)
		return false;
	if (!pow2(comp) || comp > UXDP_RING_MAX_ENTRIES)
		return false;
	return true;
}

/* ---- the harness --------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	uxdp_set_print(NULL);
	return 0;
}

static void check_created(struct uxdp_umem *um, void *area, uint64_t size,
			  const union opts_buf *ob, bool null, bool own_mem)
{
	uint32_t chunk = OPT(ob, null, chunk_size,
			     UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	uint32_t flags = OPT(ob, null, flags, 0);
	uint32_t fill = OPT(ob, null, fill_size, UXDP_UMEM_DEFAULT_RING_SIZE);
	uint32_t comp = OPT(ob, null, comp_size, UXDP_UMEM_DEFAULT_RING_SIZE);
	struct uxdp_ring *fr = uxdp_umem_fill_ring(um);
	struct uxdp_ring *cr = uxdp_umem_comp_ring(um);
	char *a = uxdp_umem_area(um);

	FZ_CHECK(uxdp_umem_size(um) == size, "size %llu, asked %llu",
		 (unsigned long long)uxdp_umem_size(um),
		 (unsigned long long)size);
	FZ_CHECK(uxdp_umem_chunk_size(um) == chunk, "chunk %u, asked %u",
		 uxdp_umem_chunk_size(um), chunk);
	FZ_CHECK(uxdp_umem_headroom(um) == OPT(ob, null, headroom, 0),
		 "headroom %u", uxdp_umem_headroom(um));
	FZ_CHECK(uxdp_umem_nchunks(um) == size / chunk, "nchunks %u",
		 uxdp_umem_nchunks(um));
	FZ_CHECK(uxdp_umem_unaligned(um) ==
		 !!(flags & UXDP_UMEM_F_UNALIGNED), "unaligned mode");
	if (area)
		FZ_CHECK(a == area, "area %p, given %p", (void *)a, area);
	else
		FZ_CHECK(a && !((uintptr_t)a % PAGE), "area %p", (void *)a);
	/* A fresh fill ring is all free; a fresh completion ring is empty. */
	FZ_CHECK(uxdp_ring_prod_nb_free(fr, UINT32_MAX) == fill,
		 "fill ring has %u free, size %u",
		 uxdp_ring_prod_nb_free(fr, UINT32_MAX), fill);
	FZ_CHECK(uxdp_ring_cons_nb_avail(cr, UINT32_MAX) == 0,
		 "fresh completion ring not empty");
	{
		uint32_t idx;

		FZ_CHECK(uxdp_ring_prod_reserve(fr, fill, &idx) == fill,
			 "cannot reserve the whole fill ring (%u)", fill);
		uxdp_ring_prod_cancel(fr, fill);
	}
	(void)comp;
	if (own_mem) {
		/* The whole area is the application's memory. */
		a[0] = 1;
		a[size - 1] = 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fz f = { data, len };
	uint8_t mode = fz_u8(&f);
	unsigned kind = mode & 3;
	bool null_opts = mode & 4, raw_sz = mode & 8;
	uint64_t area_num = fz_u64(&f), size;
	union opts_buf ob;
	void *area = NULL, *heap = NULL;
	char msg[256];
	bool valid, can_create;
	uint8_t shape;
	int rc, err;
	size_t i;
	struct uxdp_umem *um;

	memset(&ob, 0, sizeof(ob));
	size = pick_size(&f);
	ob.o.chunk_size = pick_chunk(&f);
	ob.o.headroom = pick_headroom(&f, ob.o.chunk_size);
	ob.o.flags = pick_flags(&f);
	shape = fz_u8(&f);
	ob.o.tx_metadata_len = fz_u32(&f);
	if (shape & 1)
		ob.o.tx_metadata_len &= 0x1ff;
	if (shape & 2)
		ob.o.tx_metadata_len &= 0x18;
	shape = fz_u8(&f);
	ob.o.fill_size = pick_ring(shape, fz_u32(&f));
	ob.o.comp_size = pick_ring(shape >> 2, fz_u32(&f));
	ob.o.sz = sizeof(ob.o);
	if (raw_sz) {
		/* An older (smaller) or newer (larger) caller's struct. */
		ob.o.sz = fz_u8(&f) % (OPTS_BUF + 1);
		for (i = sizeof(ob.o); i < ob.o.sz; i++)
			ob.b[i] = (fz_u8(&f) & 3) == 3 ? fz_u8(&f) : 0;
	}

	switch (kind) {
	case 0:
		break;
	case 1:
	case 2:
		if (size > MAX_CREATE_SIZE)
			break;
		/* A real area, page aligned, optionally moved off alignment. */
		heap = aligned_alloc(PAGE, (size + 2 * PAGE - 1) / PAGE * PAGE);
		if (!heap)
			abort();
		area = (char *)heap + (kind == 2 ? area_num % PAGE : 0);
		break;
	default:
		area = (void *)(uintptr_t)area_num;
		break;
	}

	valid = model_valid((uintptr_t)area, !area, size, &ob, null_opts);
	rc = uxdp_umem_check(area, size, null_opts ? NULL : &ob.o);
	FZ_CHECK(rc == 0 || rc == -EINVAL, "check returned %d", rc);
	if (rc)
		FZ_CHECK(uxdp_errmsg()[0], "check returned %d, no error text",
			 rc);
	FZ_CHECK((rc == 0) == valid,
		 "check says %s, the rules say %s (size %llu chunk %u headroom "
		 "%u flags %#x txmeta %u fill %u comp %u sz %zu area %p): %s",
		 rc ? "invalid" : "valid", valid ? "valid" : "invalid",
		 (unsigned long long)size, ob.o.chunk_size, ob.o.headroom,
		 ob.o.flags, ob.o.tx_metadata_len, ob.o.fill_size,
		 ob.o.comp_size, ob.o.sz, area, uxdp_errmsg());
	snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());

	can_create = rc != 0 ||
		(size <= MAX_CREATE_SIZE &&
		 OPT(&ob, null_opts, fill_size, 1) <= MAX_CREATE_RING &&
		 OPT(&ob, null_opts, comp_size, 1) <= MAX_CREATE_RING);
	if (!can_create)
		goto out;

	errno = 0;
	um = uxdp_umem_create(area, size, null_opts ? NULL : &ob.o);
	err = errno;
	if (rc) {
		FZ_CHECK(!um, "create succeeded where check said: %s", msg);
		FZ_CHECK(err == EINVAL, "create failed with errno %d, check "
			 "with -EINVAL", err);
		FZ_CHECK(!strcmp(uxdp_errmsg(), msg),
			 "create says '%s', check said '%s'", uxdp_errmsg(),
			 msg);
		goto out;
	}
	if (!um) {
		/* Huge pages may simply not be reserved on this machine. */
		FZ_CHECK((OPT(&ob, null_opts, flags, 0) &
			  UXDP_UMEM_F_HUGEPAGES) && err == ENOMEM,
			 "create failed (errno %d: %s) where check passed",
			 err, uxdp_errmsg());
		FZ_CHECK(uxdp_errmsg()[0], "create failed, no error text");
		goto out;
	}
	check_created(um, area, size, &ob, null_opts, kind != 3);
	rc = uxdp_umem_destroy(um);
	FZ_CHECK(rc == 0, "destroy returned %d: %s", rc, uxdp_errmsg());
out:
	free(heap);
	return 0;
}
