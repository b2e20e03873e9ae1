/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp buffer pool: what a driver allocates receive buffers from (the
 * kernel's xsk_buff_pool). Buffers come from the UMEM's fill ring, or first
 * from the pool's free list of buffers the datapath recycled.
 *
 * Two ways to allocate:
 *   uxdp_pool_alloc()        one buffer, data/data_meta set, ready to use
 *   uxdp_pool_alloc_batch()  up to max buffers into an array (e.g. the
 *                            driver's own SW ring); data/data_meta are NOT
 *                            set: call uxdp_buff_set_size() when the packet
 *                            length is known, so each buffer head is written
 *                            once, at receive time, not at refill and again
 *                            at receive.
 *
 * Aligned mode: one buffer head per chunk, initialised once when the pool is
 * created; allocation maps a fill-ring address to its head by index and
 * writes nothing to it. Unaligned mode keeps a stack of unused heads and fills
 * one in on every allocation.
 *
 * Where a buffer goes after allocation:
 *   uxdp_buff_free()      back to the pool's free list (XDP_DROP, errors);
 *                         reused before the fill ring, never seen by the user
 *   uxdp_pool_release()   to the application (e.g. in an RX descriptor);
 *                         returns the address to put in the descriptor
 *   uxdp_pool_complete()  straight to the completion ring
 *
 * Threading: a pool belongs to one thread, its owner (the polling thread of
 * its queue: the "CPU"); allocation, uxdp_buff_free(), free_batch and
 * release take no lock and are for the owner only. Other threads hand
 * buffers back with uxdp_pool_free_remote(), which takes a lock once per
 * call; the owner takes them back at the start of its next call that
 * allocates, frees, releases or looks up a buffer (the page_pool ptr_ring
 * idea; see uxdp_pool_free_remote()). After uxdp_pool_retire() there is no
 * owner and every return takes the lock. The rings shared with the
 * application are SPSC and lock-free.
 */
#ifndef UXDP_POOL_H
#define UXDP_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/buff.h>
#include <uxdp/common.h>
#include <uxdp/umem.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uxdp_pool;

/*
 * A pool buffer head (the kernel's xdp_buff_xsk): the buff the driver sees,
 * plus the pool it belongs to. One cache line.
 */
struct uxdp_pool_buff {
	struct uxdp_buff xdp;
	struct uxdp_pool *pool;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct uxdp_pool_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t flags;		/* none defined yet; must be 0 */
	/* For a pool with rings of its own (not the UMEM's first): fill and
	 * completion ring entries, powers of two; 0: enough for every chunk
	 * (at least UXDP_UMEM_DEFAULT_RING_SIZE). */
	uint32_t fill_size;
	uint32_t comp_size;
	size_t :0;
};
#define uxdp_pool_opts__last_field comp_size

struct uxdp_pool_stats {
	uint64_t alloc;		/* buffers handed to the driver */
	uint64_t freed;		/* buffers put on the free list */
	uint64_t released;	/* buffers handed to the application */
	uint64_t completed;	/* addresses posted to the completion ring */
	/* Attempts that found the fill ring empty (the kernel's
	 * fq->queue_empty_descs: counts failed attempts, not packets). */
	uint64_t fill_empty;
	/* Fill addresses outside the UMEM: consumed, skipped, counted
	 * (fq->invalid_descs). The chunk stays with the application. */
	uint64_t fill_invalid;
	/* Aligned mode: fill addresses naming a chunk the pool already holds
	 * (posted twice, or never given back). Skipped and counted; the kernel
	 * does not check this and would alias one head. */
	uint64_t fill_dup;
	/* A free or release of a buffer that is not allocated (a double
	 * free, a free after release, another pool's buffer), by any path:
	 * ignored and counted; at the call, except a remote free whose buffer
	 * turns out not to be allocated when the owner takes it back
	 * (uxdp_pool_free_remote()). */
	uint64_t bad_free;
	/* Buffers other threads returned (uxdp_pool_free_remote), included
	 * in freed: the slow path, one lock per call. Frames freed on the
	 * thread that polls the pool's queue never come this way. */
	uint64_t remote_freed;
	uint32_t free_list;	/* buffers on the free list now */
	/* Buffers allocated and not yet returned; includes remote_pending. */
	uint32_t outstanding;
	/* Returned by other threads, not yet taken back by the owner (see
	 * uxdp_pool_free_remote() for when it does). */
	uint32_t remote_pending;
};

/*
 * Create a pool over @umem. The first pool uses the UMEM's own fill and
 * completion rings (uxdp_umem_fill_ring()); every further one shares the
 * UMEM's memory with its own pair of rings (uxdp_pool_fill_ring()): the
 * kernel's shared UMEM, one pool per (device, queue), and a redirect
 * between them moves a descriptor, not bytes. The pools share no chunk
 * state: post each chunk to one pool's fill ring (as with the kernel, a
 * chunk posted to two is held by both; uxdp_umem_audit() shows it). @opts
 * may be NULL. Returns the pool, or NULL with errno set (EINVAL, ENOMEM).
 */
struct uxdp_pool *uxdp_pool_create(struct uxdp_umem *umem,
				   const struct uxdp_pool_opts *opts);

/* The application's producer handle on the pool's fill ring, and consumer
 * handle on its completion ring (the UMEM's own pair for its first pool). */
struct uxdp_ring *uxdp_pool_fill_ring(struct uxdp_pool *pool);
struct uxdp_ring *uxdp_pool_comp_ring(struct uxdp_pool *pool);

/*
 * Post chunks [@first, @first + @n) on the pool's fill ring (chunk i at
 * i * chunk_size), all or nothing: how queues sharing a UMEM split it.
 * Returns @n, -EINVAL (outside the UMEM) or -ENOSPC (no room).
 */
int uxdp_pool_fill_range(struct uxdp_pool *pool, uint32_t first, uint32_t n);

/*
 * Destroy a pool. Buffers on its free list return to the application (the
 * UMEM is the application's memory again; nothing is posted anywhere). The
 * fill ring is left as it is for the next pool. Returns 0, or -EBUSY if
 * buffers are still allocated (nothing is destroyed then). If another pool
 * on the same UMEM was retired with UXDP_POOL_RETIRE_UMEM and is gone, and
 * this is the last pool bound to the UMEM, the UMEM is destroyed too (it
 * was handed over: see uxdp_pool_retire()).
 */
int uxdp_pool_destroy(struct uxdp_pool *pool);

/*
 * Destroy @pool as soon as every buffer is back: at once if none is out
 * (returns other threads made and the owner has not taken back yet count
 * as back), otherwise when the last one is returned, from whatever thread
 * returns it (the kernel's page_pool_destroy). A return is any of
 * uxdp_buff_free(), uxdp_pool_free_batch(), uxdp_pool_free_remote() and
 * uxdp_pool_release(): a release hands the chunk to the application, which
 * the pool then no longer waits for. For a driver whose device goes away
 * while its buffers still travel as frames elsewhere (in another device's
 * ring, a socket): they come home later and are counted in the pool's stats
 * until the pool is gone.
 *
 * From this call on nobody owns the pool: it must not be allocated from,
 * audited, looked up (uxdp_pool_buff_at) or destroyed again; returns (and
 * uxdp_pool_stats() while the pool exists) are the only calls allowed, and
 * every return takes the pool's lock, so any thread may make them:
 * uxdp_pool_free_remote() at any time, the others once this call has
 * returned (the thread must see the retire: a lock, a ring, a join). A
 * second return of a buffer, by any path, is counted in bad_free in that
 * call. The return that leaves no buffer out frees the pool before it
 * returns: the caller must not touch the buffer, or the pool, after it.
 *
 * With UXDP_POOL_RETIRE_UMEM the UMEM is handed over too: it is destroyed
 * with the pool, or, while other pools are bound to it, with the last of
 * them to go, by retire or by uxdp_pool_destroy() (whichever thread that
 * happens on). The application must not destroy it itself then, and a
 * release that ends the last pool hands out an address in a UMEM that no
 * longer exists (an area uxdp mapped is unmapped with it; one the caller
 * passed stays the caller's). Without the flag the UMEM stays the
 * application's to destroy once no pool is bound to it.
 */
#define UXDP_POOL_RETIRE_UMEM	(1U << 0)
void uxdp_pool_retire(struct uxdp_pool *pool, uint32_t flags);

/* The UMEM the pool allocates from. */
struct uxdp_umem *uxdp_pool_umem(const struct uxdp_pool *pool);

/* Set the rx queue every buffer reports in buff->rxq (xsk_pool_set_rxq_info). */
void uxdp_pool_set_rxq(struct uxdp_pool *pool, struct uxdp_rxq_info *rxq);

/*
 * Allocate one buffer, reusing the free list first, then the fill ring.
 * data, data_meta and data_end are set to hard_start + 256 (empty packet).
 * Invalid fill addresses are skipped and counted. Returns the buffer, or NULL
 * if none is available (fill ring empty: counted in fill_empty).
 */
struct uxdp_buff *uxdp_pool_alloc(struct uxdp_pool *pool);

/*
 * Allocate up to @max buffers into @bufs, best effort: free list first, then
 * the fill ring. Does not set data/data_meta/data_end: call
 * uxdp_buff_set_size() on each buffer before using it. Invalid and duplicate
 * fill addresses are skipped and counted. Returns how many, 0..@max.
 */
uint32_t uxdp_pool_alloc_batch(struct uxdp_pool *pool, struct uxdp_buff **bufs,
			       uint32_t max);

/*
 * Whether @n buffers can be allocated right now (free list plus fill ring).
 * Counts a fill_empty event when the fill ring is empty, as the kernel does.
 */
bool uxdp_pool_can_alloc(struct uxdp_pool *pool, uint32_t n);

/*
 * Make all fill-ring entries consumed so far visible to the application, so
 * it can post more. The allocation paths do this whenever they refresh their
 * view of the ring; call it at the end of a poll (the kernel's xsk_flush).
 */
void uxdp_pool_flush(struct uxdp_pool *pool);

/*
 * Set a freshly received buffer's length: data = hard_start + 256,
 * data_meta = data, data_end = data + @size, flags = 0
 * (xsk_buff_set_size). The caller guarantees @size fits the frame.
 */
UXDP_INLINE void uxdp_buff_set_size(struct uxdp_buff *buf, uint32_t size)
{
	buf->data = (char *)buf->data_hard_start + UXDP_PACKET_HEADROOM;
	buf->data_meta = buf->data;
	buf->data_end = (char *)buf->data + size;
	buf->flags = 0;
}

/* The pool a pool buffer belongs to. */
UXDP_INLINE struct uxdp_pool *uxdp_buff_pool(const struct uxdp_buff *buf)
{
	return ((const struct uxdp_pool_buff *)buf)->pool;
}

/*
 * Return a buffer to its pool's free list. A buffer already free is ignored
 * and counted (bad_free), as the kernel's xp_free guards double frees.
 */
void uxdp_buff_free(struct uxdp_buff *buf);

/* uxdp_buff_free() for @n buffers of one pool. */
void uxdp_pool_free_batch(struct uxdp_pool *pool, struct uxdp_buff **bufs,
			  uint32_t n);

/*
 * Return @n buffers of @pool from a thread that is not its owner. Safe from
 * any thread at any time; takes the pool's return lock once. The buffers
 * wait on a stack (remote_pending) until the owner takes them back, which
 * it does at the start of every call that allocates, frees, releases or
 * looks up a buffer: uxdp_pool_alloc(), uxdp_pool_alloc_batch(),
 * uxdp_pool_can_alloc(), uxdp_buff_free(), uxdp_pool_free_batch(),
 * uxdp_pool_release(), uxdp_pool_buff_at(), whatever their arguments; and
 * in uxdp_pool_audit(), uxdp_umem_audit() and uxdp_pool_destroy(). Nothing
 * else takes them back (not uxdp_pool_flush(), uxdp_pool_complete(),
 * uxdp_pool_stats(), uxdp_pool_fill_range()). Once the pool is retired
 * this call takes them back itself, before it returns.
 *
 * Bad returns are counted in bad_free, at two points. At this call: a
 * pointer that is not one of @pool's buffers, and a buffer already waiting
 * on the stack (freed remotely twice). When the owner takes the buffer
 * back: a buffer that is not allocated by then (already on the free list,
 * released, never allocated), which this thread cannot see; either way it
 * is counted once and not returned twice.
 */
void uxdp_pool_free_remote(struct uxdp_pool *pool, struct uxdp_buff **bufs,
			   uint32_t n);

/* Make the calling thread the pool's owner (default: the creating thread). */
void uxdp_pool_set_owner(struct uxdp_pool *pool);

/*
 * No thread owns the pool until the next uxdp_pool_set_owner(): every
 * return takes the remote path. The first half of moving a pool to another
 * thread: disown, wait until the old owner can no longer be in the middle of
 * a lock-free return (a grace period, when its returns happen inside polls),
 * then the new owner takes it. Poll groups do this when a queue leaves them.
 */
void uxdp_pool_disown(struct uxdp_pool *pool);

/* Whether the calling thread owns @pool. */
bool uxdp_pool_is_owner(const struct uxdp_pool *pool);

/*
 * Hand a buffer to the application (it leaves the pool). Returns the address
 * to put in the RX descriptor (xp_get_handle): aligned, the offset of data in
 * the UMEM; unaligned, chunk base | (offset of data from base) << 48. Returns
 * UINT64_MAX for a buffer that is not allocated (counted in bad_free). On a
 * retired pool a release is a return like a free (uxdp_pool_retire()): if
 * it was the last buffer out, the pool is gone when this returns.
 */
uint64_t uxdp_pool_release(struct uxdp_buff *buf);

/*
 * Post @n addresses to the completion ring (a TX completion, or returning
 * chunks to the application). Returns how many fit, 0..@n; publishes them.
 */
uint32_t uxdp_pool_complete(struct uxdp_pool *pool, const uint64_t *addrs,
			    uint32_t n);

/*
 * An opaque pointer for the pool's user (the socket layer keeps its socket
 * here). NULL until set.
 */
void uxdp_pool_set_user(struct uxdp_pool *pool, void *user);
void *uxdp_pool_user(const struct uxdp_pool *pool);

/* ---- For drivers: buffers and UMEM addresses ---------------------------------- */

/*
 * The UMEM address of a pool buffer's data, as an RX descriptor carries it
 * (the kernel's xp_get_handle): aligned, the offset of data in the UMEM;
 * unaligned, chunk base | (offset of data from the base) << 48. The buffer
 * stays allocated (uxdp_pool_release() is this plus handing it over).
 */
uint64_t uxdp_buff_umem_addr(const struct uxdp_buff *buf);

/* The UMEM address of the chunk a pool buffer lives in (its base): what a
 * driver posts on a kernel fill ring. */
uint64_t uxdp_buff_chunk_addr(const struct uxdp_buff *buf);

/*
 * The allocated buffer of @pool that UMEM address @addr falls in (an RX
 * descriptor's, in the aligned or unaligned encoding), or NULL if @addr
 * names no buffer the pool has allocated: a bad descriptor, to count and
 * skip. The pool's owner only.
 */
struct uxdp_buff *uxdp_pool_buff_at(struct uxdp_pool *pool, uint64_t addr);

/* Copy the pool's counters into @st. Returns 0, or -EINVAL. */
int uxdp_pool_stats(const struct uxdp_pool *pool, struct uxdp_pool_stats *st);

/*
 * Where each chunk is, for tests and soak checks. Call only at a quiescent
 * point (no other thread touching the pool's rings). For every chunk index
 * (address / chunk_size) @where[i] gets a bit per place it was found:
 * fill ring, allocated to the driver, pool free list, completion ring. The
 * caller adds the places it tracks itself (its own hands, a socket ring) and
 * checks each chunk is in exactly one. @where must have nchunks entries.
 * A chunk found twice in one place also gets UXDP_LOC_DUP. Fill entries
 * outside the UMEM name no chunk and are not placed. In unaligned mode only
 * buffers placed at multiples of chunk_size map to a chunk index.
 * Frees pending from other threads are moved to the free list first.
 * Returns the number of placements made, or -EINVAL.
 */
#define UXDP_LOC_FILL		(1U << 0)
#define UXDP_LOC_DRIVER		(1U << 1)
#define UXDP_LOC_FREE_LIST	(1U << 2)
#define UXDP_LOC_COMP		(1U << 3)
#define UXDP_LOC_APP		(1U << 4)	/* for the caller's own use */
#define UXDP_LOC_OTHER		(1U << 5)	/* for the caller's own use */
#define UXDP_LOC_DUP		(1U << 7)	/* seen twice in one place */
int uxdp_pool_audit(struct uxdp_pool *pool, uint8_t *where);

/*
 * uxdp_pool_audit() over every pool bound to @umem, merged into @where
 * (nchunks entries): a chunk held by two pools gets UXDP_LOC_DUP. Chunks
 * in the rings of a UMEM with no pool are not seen. Returns the number of
 * placements, -EINVAL or -ENOMEM.
 */
int uxdp_umem_audit(struct uxdp_umem *umem, uint8_t *where);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_POOL_H */
