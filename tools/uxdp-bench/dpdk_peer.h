/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The DPDK peers: rte_ring SP/SC and rte_mempool, measured with the same
 * clock and loop shapes as the uxdp cases. dpdk_peer.c is the only file
 * that includes DPDK headers; it is compiled with -DUXDP_HAVE_DPDK when
 * libdpdk was found, and otherwise every call below reports "not built".
 *
 * The measured loops live in dpdk_peer.c because rte_ring and rte_mempool
 * are inline functions: they must be compiled where DPDK's headers are.
 */
#ifndef UXDP_BENCH_DPDK_PEER_H
#define UXDP_BENCH_DPDK_PEER_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the peers were compiled in. */
bool dpdk_peer_built(void);

/*
 * One line for the report header: "not built (...)", "22.11.x, EAL not
 * started yet", "22.11.x, EAL up on CPU 0 (...)", "EAL init failed: ...".
 */
const char *dpdk_peer_status(void);

/*
 * Start DPDK's EAL, once per process, on @cpu with @mem_mb of (non-huge)
 * memory. Later calls return the first call's result. Returns 0, or -1 with
 * the reason in dpdk_peer_status().
 */
int dpdk_peer_start(int cpu, unsigned int mem_mb);

/* The EAL arguments used, for the report. */
const char *dpdk_peer_eal_args(void);

/* libdpdk's own compile flags the peer was built with ("" if none). */
const char *dpdk_peer_cflags(void);

/* ---- rte_ring ------------------------------------------------------------ */

struct dpdk_ring;

/*
 * An SP/SC ring of @count (power of two) elements of @esize (8 or 16)
 * bytes. Returns NULL on failure (message on stderr).
 */
struct dpdk_ring *dpdk_ring_create(uint32_t esize, uint32_t count);
void dpdk_ring_free(struct dpdk_ring *r);

/*
 * One core: @iters times, enqueue @bulk elements from @src, then dequeue
 * them into @dst. *@ticks gets the TSC ticks of the loop. Returns 0, or
 * -EIO if an enqueue or dequeue came back short.
 */
int dpdk_ring_1core(struct dpdk_ring *r, const void *src, void *dst,
		    uint32_t bulk, uint64_t iters, uint64_t *ticks);

/* @polls dequeues of @bulk from the empty ring; *@ticks as above. */
int dpdk_ring_poll(struct dpdk_ring *r, void *dst, uint32_t bulk,
		   uint64_t polls, uint64_t *ticks);

/*
 * Two threads: the producer enqueues @total elements (ring_elem.h content)
 * in bulks of @bulk, spinning while full; the consumer dequeues as many,
 * spinning while short, checks each, and returns the number of bad
 * elements. @total must be a multiple of @bulk.
 */
void dpdk_ring_produce(struct dpdk_ring *r, uint32_t bulk, uint64_t total);
uint64_t dpdk_ring_consume(struct dpdk_ring *r, uint32_t bulk, uint64_t total);

/* ---- rte_mempool --------------------------------------------------------- */

struct dpdk_mempool;

/*
 * A mempool of @n objects of @obj_size bytes with a per-lcore cache of
 * @cache objects, single producer / single consumer (like a uxdp pool, it
 * has one user). Returns NULL on failure (message on stderr).
 */
struct dpdk_mempool *dpdk_mempool_create(uint32_t n, uint32_t obj_size,
					 uint32_t cache);
void dpdk_mempool_free(struct dpdk_mempool *mp);

/* Whether the calling thread gets the per-lcore cache (is an EAL lcore). */
bool dpdk_mempool_cached(struct dpdk_mempool *mp);

/*
 * @rounds rounds of: get @round objects in bulks of @bulk, then put them
 * back in bulks of @bulk (@round a multiple of @bulk). *@ticks gets the
 * loop's TSC ticks. Returns 0, or -ENOMEM if a get failed.
 */
int dpdk_mempool_cycle(struct dpdk_mempool *mp, uint32_t bulk, uint32_t round,
		       uint64_t rounds, uint64_t *ticks);

#endif /* UXDP_BENCH_DPDK_PEER_H */
