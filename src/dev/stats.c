/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters by name: one table per stats struct, with the field's name, what
 * it counts and where it is, so tools print them without naming 30 fields
 * (uxdp_dev_stats_walk, uxdp_dev_stats_print). The static asserts below
 * keep each table in step with its struct.
 */
#include "../internal.h"

#include <stdio.h>

#include <uxdp/dev.h>
#include <uxdp/pool.h>

struct stat_desc {
	const char *name;
	const char *desc;
	uint32_t off;
	uint8_t size;		/* 8 or 4 bytes */
};

#define D(type, field, text) \
	{ #field, text, offsetof(struct type, field), \
	  sizeof(((struct type *)0)->field) }

static const struct stat_desc rxq_descs[] = {
	D(uxdp_rxq_stats, packets, "frames received, with or without a program"),
	D(uxdp_rxq_stats, bytes, "bytes of those frames"),
	D(uxdp_rxq_stats, pass, "UXDP_PASS, handed to the pass handler"),
	D(uxdp_rxq_stats, pass_dropped, "UXDP_PASS with no pass handler set"),
	D(uxdp_rxq_stats, drop, "UXDP_DROP verdicts"),
	D(uxdp_rxq_stats, tx, "UXDP_TX frames sent"),
	D(uxdp_rxq_stats, redirect, "UXDP_REDIRECT frames sent"),
	D(uxdp_rxq_stats, aborted, "UXDP_ABORTED, and invalid verdicts"),
	D(uxdp_rxq_stats, invalid_action, "verdicts above UXDP_REDIRECT"),
	D(uxdp_rxq_stats, no_prog, "received with no program attached"),
	D(uxdp_rxq_stats, tx_err, "UXDP_TX frames the device did not take"),
	D(uxdp_rxq_stats, redirect_err,
	  "redirected frames the target did not take"),
	D(uxdp_rxq_stats, redirect_no_target,
	  "UXDP_REDIRECT with no target set"),
	D(uxdp_rxq_stats, redirect_miss,
	  "redirect map lookups that found an empty slot"),
	D(uxdp_rxq_stats, frame_err, "no headroom or tailroom for a frame"),
	D(uxdp_rxq_stats, xmit_calls, "xmit calls flushing bulk queues"),
	D(uxdp_rxq_stats, drained,
	  "frames given back unprocessed at down or destroy"),
	D(uxdp_rxq_stats, polls, "polls that received frames"),
};

static const struct stat_desc txq_descs[] = {
	D(uxdp_txq_stats, packets, "frames taken for transmission"),
	D(uxdp_txq_stats, bytes, "bytes of those frames"),
	D(uxdp_txq_stats, xmit_calls, "xdp_xmit calls (one lock each)"),
	D(uxdp_txq_stats, full, "frames refused: queue or ring full"),
	D(uxdp_txq_stats, too_big, "frames refused from one over the MTU on"),
	D(uxdp_txq_stats, down,
	  "frames refused: device or peer down, no program"),
	D(uxdp_txq_stats, bad_flags, "calls refused for unknown flags"),
};

static const struct stat_desc pool_descs[] = {
	D(uxdp_pool_stats, alloc, "buffers handed to the driver"),
	D(uxdp_pool_stats, freed, "buffers put back on the free list"),
	D(uxdp_pool_stats, released, "buffers handed to the application"),
	D(uxdp_pool_stats, completed, "addresses posted to the completion ring"),
	D(uxdp_pool_stats, fill_empty, "allocations that found the fill ring empty"),
	D(uxdp_pool_stats, fill_invalid, "fill addresses outside the UMEM"),
	D(uxdp_pool_stats, fill_dup, "fill addresses of chunks the pool held"),
	D(uxdp_pool_stats, bad_free, "frees of buffers not allocated"),
	D(uxdp_pool_stats, remote_freed, "buffers returned by other threads"),
	D(uxdp_pool_stats, free_list, "buffers on the free list now"),
	D(uxdp_pool_stats, outstanding, "buffers allocated now"),
	D(uxdp_pool_stats, remote_pending, "returns not yet picked up"),
};

#undef D

/* Every field has a row: the structs are all counters, 8 then 4 bytes. */
_Static_assert(sizeof(rxq_descs) / sizeof(rxq_descs[0]) ==
	       sizeof(struct uxdp_rxq_stats) / sizeof(uint64_t),
	       "rxq_descs lacks a field of struct uxdp_rxq_stats");
_Static_assert(sizeof(txq_descs) / sizeof(txq_descs[0]) ==
	       sizeof(struct uxdp_txq_stats) / sizeof(uint64_t),
	       "txq_descs lacks a field of struct uxdp_txq_stats");
_Static_assert(offsetof(struct uxdp_pool_stats, remote_pending) +
	       sizeof(uint32_t) + sizeof(uint32_t) ==
	       sizeof(struct uxdp_pool_stats) &&
	       sizeof(pool_descs) / sizeof(pool_descs[0]) == 12,
	       "pool_descs lacks a field of struct uxdp_pool_stats");

static int walk_table(const struct stat_desc *d, size_t n, const void *st,
		      const char *scope, uint32_t q, uxdp_stat_fn fn,
		      void *arg)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		const char *p = (const char *)st + d[i].off;
		struct uxdp_stat s = {
			.scope = scope,
			.queue = q,
			.name = d[i].name,
			.desc = d[i].desc,
		};

		if (d[i].size == sizeof(uint64_t)) {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			s.value = v;
		} else {
			uint32_t v;

			memcpy(&v, p, sizeof(v));
			s.value = v;
		}
		ret = fn(arg, &s);
		if (ret)
			return ret;
	}
	return 0;
}

UXDP_EXPORT int uxdp_dev_stats_walk(struct uxdp_dev *dev, uxdp_stat_fn fn,
				    void *arg)
{
	uint32_t q, k;
	int ret;

	if (!dev || !fn)
		return -EINVAL;
	for (q = 0; q < uxdp_dev_num_rxq(dev); q++) {
		struct uxdp_rxq_stats st;

		uxdp_dev_rxq_stats(dev, q, &st);
		ret = walk_table(rxq_descs, ARRAY_SIZE(rxq_descs), &st, "rx",
				 q, fn, arg);
		if (ret)
			return ret;
	}
	for (q = 0; q < uxdp_dev_num_txq(dev); q++) {
		struct uxdp_txq_stats st;

		uxdp_dev_txq_stats(dev, q, &st);
		ret = walk_table(txq_descs, ARRAY_SIZE(txq_descs), &st, "tx",
				 q, fn, arg);
		if (ret)
			return ret;
	}
	for (q = 0; q < uxdp_dev_num_rxq(dev); q++) {
		struct uxdp_pool *pool = uxdp_dev_pool(dev, q);
		struct uxdp_pool_stats st;

		if (!pool)
			continue;
		/* A pool shared by queues is walked once, at its first. */
		for (k = 0; k < q; k++)
			if (uxdp_dev_pool(dev, k) == pool)
				break;
		if (k < q)
			continue;
		uxdp_pool_stats(pool, &st);
		ret = walk_table(pool_descs, ARRAY_SIZE(pool_descs), &st,
				 "pool", q, fn, arg);
		if (ret)
			return ret;
	}
	return 0;
}

struct print_ctx {
	FILE *f;
	const char *dev;
	uint32_t flags;
};

static int print_one(void *arg, const struct uxdp_stat *s)
{
	struct print_ctx *c = arg;

	if (!s->value && !(c->flags & UXDP_STATS_ALL))
		return 0;
	if (fprintf(c->f, "%s/%s%u %-20s %20llu%s%s\n", c->dev, s->scope,
		    s->queue, s->name, (unsigned long long)s->value,
		    c->flags & UXDP_STATS_DESC ? "  " : "",
		    c->flags & UXDP_STATS_DESC ? s->desc : "") < 0)
		return -EIO;
	return 0;
}

UXDP_EXPORT int uxdp_dev_stats_print(struct uxdp_dev *dev, FILE *f,
				     uint32_t flags)
{
	struct print_ctx c = { .f = f, .flags = flags };

	if (!dev || !f || (flags & ~(UXDP_STATS_ALL | UXDP_STATS_DESC)))
		return -EINVAL;
	c.dev = uxdp_dev_name(dev);
	return uxdp_dev_stats_walk(dev, print_one, &c);
}
