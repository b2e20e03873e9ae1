/* SPDX-License-Identifier: BSD-2-Clause */
/* The kernel's AF_XDP socket counters by name (xskstats.h). */
#include <string.h>

#include "xskstats.h"

_Static_assert(sizeof(struct uxdp_xsk_stats) % sizeof(uint64_t) == 0,
	       "struct uxdp_xsk_stats is not all 64-bit counters");

/* In the order of struct uxdp_xsk_stats (checked below). */
const struct txsk_field txsk_fields[TXSK_NSTATS] = {
	{ "rx_dropped", true },
	{ "rx_invalid_descs", true },
	{ "tx_invalid_descs", true },
	{ "rx_ring_full", true },
	{ "rx_fill_ring_empty_descs", true },
	{ "tx_ring_empty_descs", false },
};

#define TXSK_AT(f, i)	\
	_Static_assert(offsetof(struct uxdp_xsk_stats, f) == \
		       (i) * sizeof(uint64_t), #f " is not field " #i)
TXSK_AT(rx_dropped, 0);
TXSK_AT(rx_invalid_descs, 1);
TXSK_AT(tx_invalid_descs, 2);
TXSK_AT(rx_ring_full, 3);
TXSK_AT(rx_fill_ring_empty_descs, 4);
TXSK_AT(tx_ring_empty_descs, 5);
_Static_assert(TXSK_NSTATS == 6, "a counter in struct uxdp_xsk_stats "
	       "without a name here");
#undef TXSK_AT

uint64_t txsk_stat(const struct uxdp_xsk_stats *st, unsigned int i)
{
	uint64_t v = 0;

	if (i < TXSK_NSTATS)
		memcpy(&v, (const char *)st + i * sizeof(v), sizeof(v));
	return v;
}

void txsk_from_afxdp(const struct uxdp_afxdp_queue_stats *q,
		     struct uxdp_xsk_stats *st)
{
	*st = (struct uxdp_xsk_stats){
		.rx_dropped = q->rx_dropped,
		.rx_invalid_descs = q->rx_invalid_descs,
		.tx_invalid_descs = q->tx_invalid_descs,
		.rx_ring_full = q->rx_ring_full,
		.rx_fill_ring_empty_descs = q->rx_fill_ring_empty_descs,
		.tx_ring_empty_descs = q->tx_ring_empty_descs,
	};
}

void txsk_json(FILE *f, const char *sep, const struct uxdp_xsk_stats *st)
{
	unsigned int i;

	for (i = 0; i < TXSK_NSTATS; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : sep, txsk_fields[i].name,
			(unsigned long long)txsk_stat(st, i));
}
