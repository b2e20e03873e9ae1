/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UMEM registration: validation (the kernel's XDP_UMEM_REG rules, in the
 * kernel's order), the area, and the fill and completion rings.
 */
#include "../internal.h"

#include <sys/mman.h>

#include "pool_internal.h"

#define UMEM_PAGE_SIZE	4096ULL
#define HUGE_PAGE_SIZE	(2ULL << 20)

#define UMEM_KERNEL_FLAGS \
	(UXDP_UMEM_F_UNALIGNED | UXDP_UMEM_F_TX_SW_CSUM | \
	 UXDP_UMEM_F_TX_METADATA_LEN)
#define UMEM_ALL_FLAGS	(UMEM_KERNEL_FLAGS | UXDP_UMEM_F_HUGEPAGES | \
			 UXDP_UMEM_F_THP)

/*
 * The kernel's checks (net/xdp/xdp_umem.c, xdp_umem_reg), in its order, so
 * the first failing rule is the one reported. Pure arithmetic on @area.
 */
static int umem_check_kernel_rules(uint64_t addr, uint64_t size,
				   uint32_t chunk_size, uint32_t headroom,
				   uint32_t flags, uint32_t tx_metadata_len)
{
	bool unaligned = flags & UXDP_UMEM_F_UNALIGNED;
	uint64_t npgs, chunks;

	if (chunk_size < UXDP_UMEM_MIN_CHUNK_SIZE ||
	    chunk_size > UXDP_UMEM_MAX_CHUNK_SIZE)
		return uxdp_fail(EINVAL,
				 "umem: chunk_size %u outside [%u, %u]",
				 chunk_size, UXDP_UMEM_MIN_CHUNK_SIZE,
				 UXDP_UMEM_MAX_CHUNK_SIZE);
	if (flags & ~UMEM_KERNEL_FLAGS)
		return uxdp_fail(EINVAL, "umem: unknown flags 0x%x",
				 flags & ~UMEM_KERNEL_FLAGS);
	if (!unaligned && !is_pow2_u64(chunk_size))
		return uxdp_fail(EINVAL,
				 "umem: chunk_size %u is not a power of two "
				 "(required unless UXDP_UMEM_F_UNALIGNED)",
				 chunk_size);
	if (addr & (UMEM_PAGE_SIZE - 1))
		return uxdp_fail(EINVAL, "umem: area %#llx is not page aligned",
				 (unsigned long long)addr);
	if (addr + size < addr)
		return uxdp_fail(EINVAL,
				 "umem: area + size wraps the address space");
	npgs = size / UMEM_PAGE_SIZE + !!(size % UMEM_PAGE_SIZE);
	if (npgs > UINT32_MAX)
		return uxdp_fail(EINVAL, "umem: size %llu is over 2^32 pages",
				 (unsigned long long)size);
	chunks = size / chunk_size;
	if (!chunks || chunks > UINT32_MAX)
		return uxdp_fail(EINVAL,
				 "umem: size %llu holds %llu chunks of %u; need "
				 "1 to 2^32-1",
				 (unsigned long long)size,
				 (unsigned long long)chunks, chunk_size);
	if (!unaligned && size % chunk_size)
		return uxdp_fail(EINVAL,
				 "umem: size %llu is not a multiple of chunk_size "
				 "%u (required unless UXDP_UMEM_F_UNALIGNED)",
				 (unsigned long long)size, chunk_size);
	if (headroom > chunk_size - UXDP_UMEM_CHUNK_RESERVED)
		return uxdp_fail(EINVAL,
				 "umem: headroom %u too large for chunk_size %u "
				 "(max %u: 256 XDP headroom + %u tailroom + %u "
				 "packet bytes must fit)",
				 headroom, chunk_size,
				 chunk_size - UXDP_UMEM_CHUNK_RESERVED,
				 UXDP_SKB_SHINFO_SIZE, UXDP_MIN_PACKET_ROOM);
	if (!(flags & UXDP_UMEM_F_TX_METADATA_LEN))
		return 0;
	if (tx_metadata_len >= 256 || tx_metadata_len % 8)
		return uxdp_fail(EINVAL,
				 "umem: tx_metadata_len %u must be < 256 and a "
				 "multiple of 8", tx_metadata_len);
	/*
	 * Every request needs the flags word and one 8-byte field after it:
	 * a shorter area lets the kernel read past it. Kernels with
	 * 1bb30b181d9f (August 2026, in 6.18.y) refuse 0 and 8; older ones
	 * took them. An application that asks for 16 or more works on both.
	 */
	if (tx_metadata_len < UXDP_TX_METADATA_MIN_LEN)
		return uxdp_fail(EINVAL,
				 "umem: tx_metadata_len %u is below %u: with "
				 "UXDP_UMEM_F_TX_METADATA_LEN the area must hold "
				 "the request's flags and one 8-byte field (the "
				 "kernel's rule since 1bb30b181d9f)",
				 tx_metadata_len, UXDP_TX_METADATA_MIN_LEN);
	return 0;
}

/*
 * Fill and completion rings hold every chunk unless told otherwise: a ring
 * smaller than the UMEM cannot take "post every chunk" in one reserve (all
 * or nothing), which every pool user starts with.
 */
uint32_t pool_ring_size(uint32_t n, uint64_t size, uint32_t chunk_size)
{
	uint64_t chunks = chunk_size ? size / chunk_size : 0, r;

	if (n)
		return n;
	r = UXDP_UMEM_DEFAULT_RING_SIZE;
	while (r < chunks && r < UXDP_RING_MAX_ENTRIES)
		r <<= 1;
	return (uint32_t)r;
}

int pool_rings_alloc(struct pool_rings *r, uint32_t fill_size,
		     uint32_t comp_size)
{
	memset(r, 0, sizeof(*r));
	r->fill_size = fill_size;
	r->comp_size = comp_size;
	r->fill_mem = uxdp_ring_mem_alloc(fill_size, sizeof(uint64_t));
	if (!r->fill_mem)
		return -errno;
	r->comp_mem = uxdp_ring_mem_alloc(comp_size, sizeof(uint64_t));
	if (!r->comp_mem) {
		int err = -errno;

		uxdp_ring_mem_free(r->fill_mem, fill_size, sizeof(uint64_t));
		r->fill_mem = NULL;
		return err;
	}
	/* Fresh zeroed memory with valid sizes: these cannot fail. */
	uxdp_ring_init_prod(&r->fill, r->fill_mem, fill_size, NULL);
	uxdp_ring_init_cons(&r->comp, r->comp_mem, comp_size, NULL);
	return 0;
}

void pool_rings_free(struct pool_rings *r)
{
	uxdp_ring_mem_free(r->fill_mem, r->fill_size, sizeof(uint64_t));
	uxdp_ring_mem_free(r->comp_mem, r->comp_size, sizeof(uint64_t));
	r->fill_mem = r->comp_mem = NULL;
}

/* Post chunks [first, first + n) on @fill, all or nothing. */
int pool_rings_post(struct uxdp_ring *fill, uint32_t chunk_size,
		    uint32_t first, uint32_t n)
{
	uint32_t idx, i;

	if (uxdp_ring_prod_reserve(fill, n, &idx) != n)
		return uxdp_fail(ENOSPC, "fill ring: room for %u entries, not "
				 "the %u chunks", uxdp_ring_prod_nb_free(fill, n),
				 n);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(fill, idx + i) =
			(uint64_t)(first + i) * chunk_size;
	uxdp_ring_prod_submit(fill, n);
	return (int)n;
}

static int umem_check(const void *area, uint64_t size,
		      const struct uxdp_umem_opts *opts)
{
	uint32_t chunk_size, headroom, flags, tx_meta, fill, comp;
	int err;

	if (!UXDP_OPTS_VALID(opts, uxdp_umem_opts))
		return -EINVAL;
	chunk_size = UXDP_OPTS_GET(opts, chunk_size,
				   UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	headroom = UXDP_OPTS_GET(opts, headroom, 0);
	flags = UXDP_OPTS_GET(opts, flags, 0);
	tx_meta = UXDP_OPTS_GET(opts, tx_metadata_len, 0);
	fill = pool_ring_size(UXDP_OPTS_GET(opts, fill_size, 0), size,
			      chunk_size);
	comp = pool_ring_size(UXDP_OPTS_GET(opts, comp_size, 0), size,
			      chunk_size);

	if (flags & ~UMEM_ALL_FLAGS)
		return uxdp_fail(EINVAL, "umem: unknown flags 0x%x",
				 flags & ~UMEM_ALL_FLAGS);
	if ((flags & UXDP_UMEM_F_HUGEPAGES) && area)
		return uxdp_fail(EINVAL,
				 "umem: UXDP_UMEM_F_HUGEPAGES applies only when "
				 "uxdp allocates the area (area == NULL)");
	if ((flags & UXDP_UMEM_F_THP) && area)
		return uxdp_fail(EINVAL,
				 "umem: UXDP_UMEM_F_THP applies only when "
				 "uxdp allocates the area (area == NULL)");
	/* A NULL area is ours to place: it will be page aligned. */
	err = umem_check_kernel_rules(area ? (uint64_t)(uintptr_t)area :
				      UMEM_PAGE_SIZE, size, chunk_size,
				      headroom, flags & UMEM_KERNEL_FLAGS,
				      tx_meta);
	if (err)
		return err;
	if (!is_pow2_u64(fill) || fill > UXDP_RING_MAX_ENTRIES)
		return uxdp_fail(EINVAL,
				 "umem: fill_size %u must be a power of two "
				 "<= 2^30", fill);
	if (!is_pow2_u64(comp) || comp > UXDP_RING_MAX_ENTRIES)
		return uxdp_fail(EINVAL,
				 "umem: comp_size %u must be a power of two "
				 "<= 2^30", comp);
	return 0;
}

UXDP_EXPORT int uxdp_umem_check(const void *area, uint64_t size,
				const struct uxdp_umem_opts *opts)
{
	uxdp_clear_err();
	return umem_check(area, size, opts);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/*
 * The area for a UMEM the caller did not provide, populated now (a fault
 * on the datapath costs microseconds). With UXDP_UMEM_F_HUGEPAGES:
 * hugetlbfs pages, or fail. With UXDP_UMEM_F_THP, from 2 MiB up: 2 MiB
 * aligned and marked MADV_HUGEPAGE, so that where transparent huge pages
 * are enabled the area is backed by them (a zero-copy driver writes all
 * over the UMEM; with 4 KiB pages a 16 MiB area is 4096 TLB entries).
 * Not the default: the pool's own free-list benchmark (which never touches
 * the area) measured 1.5x slower beside a THP-backed area, unexplained.
 */
static void *umem_map_area(uint64_t size, bool huge, bool thp,
			   size_t *map_len)
{
	int mflags = MAP_PRIVATE | MAP_ANONYMOUS;
	size_t align = huge ? HUGE_PAGE_SIZE : UMEM_PAGE_SIZE;
	size_t len, head;
	char *p, *a;

	*map_len = (size + align - 1) & ~(align - 1);
	if (huge || !thp || *map_len < HUGE_PAGE_SIZE) {
		if (huge)
			mflags |= MAP_HUGETLB;
		p = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
			 mflags | MAP_POPULATE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* Over-map by 2 MiB and trim to a 2 MiB aligned start. */
	len = *map_len + HUGE_PAGE_SIZE;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, mflags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE_PAGE_SIZE - 1) &
		     ~(uintptr_t)(HUGE_PAGE_SIZE - 1));
	head = (size_t)(a - p);
	if (head)
		munmap(p, head);
	munmap(a + *map_len, len - head - *map_len);
	/* Advice, not a requirement: THP may be off, or not compiled in. */
	(void)madvise(a, *map_len, MADV_HUGEPAGE);
	if (madvise(a, *map_len, MADV_POPULATE_WRITE)) {
		size_t off;

		/* Before 5.14: touch every page ourselves. */
		for (off = 0; off < *map_len; off += UMEM_PAGE_SIZE)
			((volatile char *)a)[off] = 0;
	}
	return a;
}

UXDP_EXPORT __cold struct uxdp_umem *
uxdp_umem_create(void *area, uint64_t size, const struct uxdp_umem_opts *opts)
{
	struct uxdp_umem *umem;
	int err;

	uxdp_clear_err();
	err = umem_check(area, size, opts);
	if (err)
		goto err;
	err = -ENOMEM;
	umem = calloc(1, sizeof(*umem));
	if (!umem) {
		uxdp_fail(ENOMEM, "umem: out of memory");
		goto err;
	}
	umem->size = size;
	umem->chunk_size = UXDP_OPTS_GET(opts, chunk_size,
					 UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	umem->headroom = UXDP_OPTS_GET(opts, headroom, 0);
	umem->flags = UXDP_OPTS_GET(opts, flags, 0);
	if (umem->flags & UXDP_UMEM_F_TX_METADATA_LEN)
		umem->tx_metadata_len = UXDP_OPTS_GET(opts, tx_metadata_len, 0);
	umem->nchunks = (uint32_t)(size / umem->chunk_size);
	pthread_mutex_init(&umem->lock, NULL);

	if (area) {
		umem->area = area;
	} else {
		umem->area = umem_map_area(size,
					   umem->flags & UXDP_UMEM_F_HUGEPAGES,
					   umem->flags & UXDP_UMEM_F_THP,
					   &umem->map_len);
		if (!umem->area) {
			err = uxdp_fail(ENOMEM,
					"umem: mmap of %llu bytes%s failed",
					(unsigned long long)size,
					umem->flags & UXDP_UMEM_F_HUGEPAGES ?
					" in huge pages (are any reserved? see "
					"/proc/sys/vm/nr_hugepages)" : "");
			goto err_free;
		}
	}

	err = pool_rings_alloc(&umem->rings,
			       pool_ring_size(UXDP_OPTS_GET(opts, fill_size, 0),
					      size, umem->chunk_size),
			       pool_ring_size(UXDP_OPTS_GET(opts, comp_size, 0),
					      size, umem->chunk_size));
	if (err)
		goto err_unmap;
	return umem;

err_unmap:
	if (umem->map_len)
		munmap(umem->area, umem->map_len);
err_free:
	free(umem);
err:
	errno = -err;
	return NULL;
}

UXDP_EXPORT __cold int uxdp_umem_destroy(struct uxdp_umem *umem)
{
	uxdp_clear_err();
	if (!umem)
		return 0;
	if (umem->npools)
		return uxdp_fail(EBUSY, "umem: %u pool%s still bound",
				 umem->npools, umem->npools == 1 ? " is" :
				 "s are");
	pool_rings_free(&umem->rings);
	pthread_mutex_destroy(&umem->lock);
	if (umem->map_len)
		munmap(umem->area, umem->map_len);
	free(umem);
	return 0;
}

UXDP_EXPORT __cold int uxdp_umem_fill_all(struct uxdp_umem *umem)
{
	uxdp_clear_err();
	return pool_rings_post(&umem->rings.fill, umem->chunk_size, 0,
			       umem->nchunks);
}

UXDP_EXPORT struct uxdp_ring *uxdp_umem_fill_ring(struct uxdp_umem *umem)
{
	return &umem->rings.fill;
}

UXDP_EXPORT struct uxdp_ring *uxdp_umem_comp_ring(struct uxdp_umem *umem)
{
	return &umem->rings.comp;
}

UXDP_EXPORT void *uxdp_umem_area(const struct uxdp_umem *umem)
{
	return umem->area;
}

UXDP_EXPORT uint64_t uxdp_umem_size(const struct uxdp_umem *umem)
{
	return umem->size;
}

UXDP_EXPORT uint32_t uxdp_umem_chunk_size(const struct uxdp_umem *umem)
{
	return umem->chunk_size;
}

UXDP_EXPORT uint32_t uxdp_umem_headroom(const struct uxdp_umem *umem)
{
	return umem->headroom;
}

UXDP_EXPORT uint32_t uxdp_umem_nchunks(const struct uxdp_umem *umem)
{
	return umem->nchunks;
}

UXDP_EXPORT bool uxdp_umem_unaligned(const struct uxdp_umem *umem)
{
	return umem->flags & UXDP_UMEM_F_UNALIGNED;
}
