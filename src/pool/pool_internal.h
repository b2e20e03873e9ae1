/* SPDX-License-Identifier: BSD-2-Clause */
/* UMEM and pool internals, shared by umem.c and pool.c only. */
#ifndef UXDP_POOL_INTERNAL_H
#define UXDP_POOL_INTERNAL_H

#include <stdlib.h>

#include <uxdp/pool.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>

struct uxdp_umem {
	void *area;
	uint64_t size;
	size_t map_len;			/* non-zero if uxdp mapped the area */
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
	uint32_t nchunks;
	uint32_t fill_size;
	uint32_t comp_size;
	void *fill_mem;
	void *comp_mem;
	struct uxdp_ring fill;		/* application: producer side */
	struct uxdp_ring comp;		/* application: consumer side */
	struct uxdp_pool *pool;		/* the bound pool, if any */
};

/* Where a buffer head is, from the pool's point of view. */
enum buf_state {
	BUF_APP = 0,	/* the application's (fill ring, its hands, ...) */
	BUF_DRIVER,	/* allocated: a driver or the datapath holds it */
	BUF_FREE,	/* on the pool's free list */
};

struct uxdp_pool {
	/* Control path first. */
	struct uxdp_umem *umem;
	uint32_t nheads;

	/* Data path from here on, starting on its own cache line. */
	struct uxdp_ring fq __attribute__((aligned(UXDP_CACHE_LINE)));
	struct uxdp_pool_buff *heads;
	uint8_t *state;			/* enum buf_state, one per head */
	struct uxdp_pool_buff **free_list;
	struct uxdp_pool_buff **free_heads;	/* unaligned mode only */
	char *addrs;			/* the UMEM area */
	uint64_t chunk_mask;
	uint64_t addrs_cnt;		/* UMEM size in bytes */
	uint32_t free_list_cnt;
	uint32_t free_heads_cnt;
	uint32_t chunk_size;
	uint32_t chunk_shift;
	uint32_t headroom;
	bool unaligned;

	/* Counters: written by the pool's thread only. */
	uint64_t n_alloc;
	uint64_t n_freed;
	uint64_t n_released;
	uint64_t n_completed;
	uint64_t n_fill_empty;
	uint64_t n_fill_invalid;
	uint64_t n_fill_dup;
	uint64_t n_bad_free;

	/* The owning thread: the one that allocates (uxdp_pool_set_owner). */
	const void *owner;

	/*
	 * Buffers returned by other threads (uxdp_pool_free_remote), moved to
	 * the free list by the owner when its free list runs dry. Its own cache
	 * line: other threads write it.
	 */
	struct {
		struct uxdp_spinlock lock;
		uint32_t cnt;		/* written under lock, peeked relaxed */
		uint64_t overflow;	/* pushes past capacity (double frees) */
		struct uxdp_pool_buff **stack;
	} remote __attribute__((aligned(UXDP_CACHE_LINE)));

	/* Completion ring, producer side: the TX path's, not the RX path's. */
	struct uxdp_ring cq __attribute__((aligned(UXDP_CACHE_LINE)));
};

#endif /* UXDP_POOL_INTERNAL_H */
