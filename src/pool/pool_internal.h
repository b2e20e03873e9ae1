/* SPDX-License-Identifier: BSD-2-Clause */
/* UMEM and pool internals, shared by umem.c and pool.c only. */
#ifndef UXDP_POOL_INTERNAL_H
#define UXDP_POOL_INTERNAL_H

#include <pthread.h>
#include <stdlib.h>

#include <uxdp/pool.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>

/*
 * A fill and completion ring pair: the memory, and the application's ends
 * (producer of fill, consumer of completion). A UMEM has one; the first pool
 * bound to it uses it, and every further pool (shared UMEM) has its own, as
 * the kernel requires one pair per (device, queue).
 */
struct pool_rings {
	void *fill_mem;
	void *comp_mem;
	uint32_t fill_size;
	uint32_t comp_size;
	struct uxdp_ring fill;		/* application: producer side */
	struct uxdp_ring comp;		/* application: consumer side */
};

int pool_rings_alloc(struct pool_rings *r, uint32_t fill_size,
		     uint32_t comp_size);
void pool_rings_free(struct pool_rings *r);
/* Ring entries for a UMEM of @size bytes in @chunk_size chunks when the
 * caller gave @n (0: enough for every chunk, at least the default). */
uint32_t pool_ring_size(uint32_t n, uint64_t size, uint32_t chunk_size);
int pool_rings_post(struct uxdp_ring *fill, uint32_t chunk_size,
		    uint32_t first, uint32_t n);

struct uxdp_umem {
	void *area;
	uint64_t size;
	size_t map_len;			/* non-zero if uxdp mapped the area */
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
	uint32_t nchunks;
	struct pool_rings rings;	/* the UMEM's own pair */
	/* Pools bound to the UMEM, under lock (control path). */
	pthread_mutex_t lock;
	struct uxdp_pool *pools;
	uint32_t npools;
	bool rings_taken;		/* a pool uses the UMEM's own pair */
	/* A pool retired with UXDP_POOL_RETIRE_UMEM: the last pool to go
	 * destroys the UMEM (under lock). */
	bool retire;
};

/*
 * Where a head is, as its pool's owner sees it: pool->fpos[head].
 *
 *	FPOS_APP   the application's (fill ring, completion ring, its hands)
 *	FPOS_HELD  allocated: fresh from the fill ring, held by the datapath
 *	otherwise  the position the head had on the free list when it was last
 *	           pushed there. It is on the free list now iff that position
 *	           is below free_list_cnt and the slot still holds it;
 *	           otherwise it was popped since and is allocated.
 *
 * The last rule is the sparse-set trick: popping a batch off the free list
 * is one memcpy and a count, with no per-buffer write, yet membership stays
 * exact, so a double free is still caught at the free.
 *
 * The slots at and above free_list_cnt keep what was popped from them. Call
 * such a slot s "clean" when it holds no head, or a head X with
 * fpos[X] == s: then X is allocated and s is its only clean slot. Popping
 * leaves the popped slots clean, and a push at the count writes a clean
 * slot; the only way a slot above the count stops being clean is that its
 * head goes elsewhere (pushed at a lower position, or released) while the
 * slot stays above the count. The highest such slot is remembered, coarsely
 * (dirty_top: that slot + 2, 0 for none), a register's work rather than a
 * store per buffer; once the count has risen past it every such slot is
 * below the count, and dirty_top goes back to 0.
 *
 * So when a batch of buffers equals, pointer for pointer, the slots from the
 * count up, and those slots lie outside the dirty range, each buffer is
 * allocated, distinct, and back in the slot it was popped from: freeing the
 * batch is adding to the count (uxdp_pool_free_batch's fast path). Unused
 * slots hold SLOT_EMPTY, an address no caller has, so that a batch of NULLs
 * (a caller's bug) never matches.
 */
#define FPOS_APP	UINT32_MAX
/* Unaligned buffers are at least UXDP_UMEM_MIN_CHUNK_SIZE (2^11) long. */
#define UNALIGNED_BASE_SHIFT	11
#define FPOS_HELD	(UINT32_MAX - 1)

struct uxdp_pool {
	/* Control path first. */
	struct uxdp_umem *umem;
	struct uxdp_pool *next;		/* the UMEM's list of pools */
	struct pool_rings *rings;	/* the UMEM's pair, or own_rings */
	struct pool_rings own_rings;
	uint32_t nheads;
	uint32_t retire_flags;		/* uxdp_pool_retire() */
	void *user;			/* uxdp_pool_set_user() */

	/* Data path from here on, starting on its own cache line. */
	struct uxdp_ring fq __attribute__((aligned(UXDP_CACHE_LINE)));
	struct uxdp_pool_buff *heads;
	uint32_t *fpos;			/* FPOS_* or free-list position */
	struct uxdp_pool_buff **free_list;
	struct uxdp_pool_buff **free_heads;	/* unaligned mode only */
	/* Unaligned mode: head index + 1 of the held buffer whose base >> 11
	 * is the index, 0 for none (uxdp_pool_buff_at). */
	uint32_t *by_base;
	char *addrs;			/* the UMEM area */
	uint64_t chunk_mask;
	uint64_t addrs_cnt;		/* UMEM size in bytes */
	uint32_t free_list_cnt;
	/* The highest slot that may not be clean, + 2 (see above). */
	uint32_t dirty_top;
	uint32_t free_heads_cnt;
	uint32_t chunk_size;
	uint32_t chunk_shift;
	uint32_t headroom;
	bool unaligned;
	/* Set once by uxdp_pool_retire(): every return (free, free_batch,
	 * free_remote, release) takes the remote lock, and the one that leaves
	 * no buffer out frees the pool. */
	bool retired;

	/* Counters: written by the pool's owner (or under the remote lock once
	 * the pool is retired). */
	uint64_t n_alloc;
	uint64_t n_freed;
	uint64_t n_released;
	uint64_t n_completed;
	uint64_t n_fill_empty;
	uint64_t n_fill_invalid;
	uint64_t n_fill_dup;
	uint64_t n_bad_free;
	uint64_t n_remote;

	/* The owning thread: the one that allocates (uxdp_pool_set_owner). */
	const void *owner;

	/*
	 * Buffers returned by other threads (uxdp_pool_free_remote), moved to
	 * the free list by the owner at the start of its next call that looks
	 * at buffer state (pool_sync_remote() in pool.c), or at once by the
	 * pushing thread once the pool is retired. Its own
	 * cache line: other threads write it. Everything here is under lock,
	 * except cnt, which the owner peeks relaxed to see if there is work.
	 */
	struct {
		struct uxdp_spinlock lock;
		uint32_t cnt;
		/* Double and foreign remote frees caught at the push; the owner
		 * adds them to n_bad_free when it drains (uxdp_pool_stats()
		 * counts them from the push on). */
		uint64_t bad;
		/* One byte per head: 1 while the head is on the stack, so a
		 * head is there at most once and the stack cannot overflow. */
		uint8_t *pending;
		struct uxdp_pool_buff **stack;
	} remote __attribute__((aligned(UXDP_CACHE_LINE)));

	/* Completion ring, producer side: the TX path's, not the RX path's. */
	struct uxdp_ring cq __attribute__((aligned(UXDP_CACHE_LINE)));
};

/* For the socket layer's zero-copy completions (src/xsk/): the pool's
 * completed counter, one writer at a time, relaxed for readers. */
static inline void pool_count_completed(struct uxdp_pool *p, uint64_t n)
{
	__atomic_store_n(&p->n_completed,
			 __atomic_load_n(&p->n_completed, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

#endif /* UXDP_POOL_INTERNAL_H */
