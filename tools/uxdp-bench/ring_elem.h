/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the two-thread ring tests put in each element, shared by the uxdp
 * loops (ring_perf.c) and the DPDK loops (dpdk_peer.c) so both rings carry
 * and check exactly the same bytes.
 */
#ifndef UXDP_BENCH_RING_ELEM_H
#define UXDP_BENCH_RING_ELEM_H

#include <stdint.h>

/* The 16-byte element: struct uxdp_desc's layout, without needing uxdp. */
struct ring_elem16 {
	uint64_t addr;
	uint32_t len;
	uint32_t options;
};

/*
 * Element @seq. The length word is a multiplicative hash of seq, so a slot
 * read before the producer finished writing it (a missing barrier) or a
 * stale slot from one lap ago shows up as a mismatch in both words.
 */
static inline uint64_t ring_elem8_val(uint64_t seq)
{
	return seq;
}

static inline void ring_elem16_fill(struct ring_elem16 *e, uint64_t seq)
{
	e->addr = seq;
	e->len = (uint32_t)seq * 2654435761U;
	e->options = (uint32_t)(seq >> 32);
}

static inline int ring_elem16_bad(const struct ring_elem16 *e, uint64_t seq)
{
	return e->addr != seq || e->len != (uint32_t)seq * 2654435761U ||
	       e->options != (uint32_t)(seq >> 32);
}

/* Ring size for every ring test, uxdp and DPDK alike. */
#define RING_BENCH_SIZE		2048

#endif /* UXDP_BENCH_RING_ELEM_H */
