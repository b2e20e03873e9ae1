/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's AF_XDP socket counters (XDP_STATISTICS, struct
 * uxdp_xsk_stats) by name, for every tool that shows them: uxdp-xsk's
 * sockets, and the sockets under uxdp-fwd's afxdp ports, whose driver
 * keeps the same six counters in struct uxdp_afxdp_queue_stats.
 */
#ifndef UXDP_TOOLS_XSKSTATS_H
#define UXDP_TOOLS_XSKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uxdp/uxdp.h>

#define TXSK_NSTATS	(sizeof(struct uxdp_xsk_stats) / sizeof(uint64_t))

/*
 * loss: a packet or a descriptor lost; tx_ring_empty_descs is news, not
 * trouble (it counts every wakeup that found the TX ring drained, in copy
 * mode most of them).
 */
struct txsk_field {
	const char *name;
	bool loss;
};

/* The fields of struct uxdp_xsk_stats, in order. */
extern const struct txsk_field txsk_fields[TXSK_NSTATS];

/* Field @i of @st (0 past the end). */
uint64_t txsk_stat(const struct uxdp_xsk_stats *st, unsigned int i);

/* The XDP_STATISTICS part of an afxdp port's queue counters. */
void txsk_from_afxdp(const struct uxdp_afxdp_queue_stats *q,
		     struct uxdp_xsk_stats *st);

/* The members "rx_dropped":N,... of a JSON object, the first after
 * @sep ("" opens the object, "," continues it). */
void txsk_json(FILE *f, const char *sep, const struct uxdp_xsk_stats *st);

#endif /* UXDP_TOOLS_XSKSTATS_H */
