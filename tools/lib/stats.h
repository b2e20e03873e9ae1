/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Live statistics for the uxdp tools: a device's counters summed over its
 * queues, by type (for the numbers a tool computes with) and by name (for
 * listing every counter the library has, new ones included), differences
 * between two samples, and the number formats of the output
 * ("14,880,952", JSON strings).
 *
 * Sampling only reads: the polling threads are the counters' only writers
 * (uxdp_dev_rxq_stats() and the stats walk copy each field atomically), so
 * a sample taken while traffic flows is consistent per field, not across
 * fields. Totals meant to add up are read once the pollers have stopped.
 */
#ifndef UXDP_TOOLS_STATS_H
#define UXDP_TOOLS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uxdp/dev.h>

/* ---- by type ------------------------------------------------------------ */

/* One device's counters, each summed over all its RX or TX queues. */
struct tdev_counters {
	struct uxdp_rxq_stats rx;
	struct uxdp_txq_stats tx;
};

/* Read @dev's counters into *@c. Returns 0 or -errno. */
int tdev_counters_read(struct uxdp_dev *dev, struct tdev_counters *c);

/* Only the RX packets, summed: cheap enough to poll every few ms. */
uint64_t tdev_rx_packets(struct uxdp_dev *dev);

/* *@d = @now - @then, field by field (counters only grow). */
void tdev_counters_sub(const struct tdev_counters *now,
		       const struct tdev_counters *then,
		       struct tdev_counters *d);

/*
 * Any struct of @n uint64_t counters and nothing else (the library's
 * per-queue stats, struct uxdp_xsk_stats, an application's own): @dst +=
 * @src, and @dst = @now - @then, field by field (0 where a counter seems
 * to have gone back: a queue that went away).
 */
void tstats_words_add(void *dst, const void *src, size_t n);
void tstats_words_sub(void *dst, const void *now, const void *then,
		      size_t n);

/* ---- by name ------------------------------------------------------------ */

#define TDEV_NRX	(sizeof(struct uxdp_rxq_stats) / sizeof(uint64_t))
#define TDEV_NTX	(sizeof(struct uxdp_txq_stats) / sizeof(uint64_t))

/*
 * The names (and one-line descriptions) of the fields of struct
 * uxdp_rxq_stats and uxdp_txq_stats, in order, as the library's stats walk
 * gives them: a tool prints every counter without naming each, and one it
 * does not know yet still shows.
 */
struct tdev_names {
	const char *rx[TDEV_NRX];
	const char *rx_desc[TDEV_NRX];
	const char *tx[TDEV_NTX];
	const char *tx_desc[TDEV_NTX];
};

/*
 * Fill *@names from @dev (any device with an RX and a TX queue). Returns 0,
 * -EPROTO if the walk's fields are not the structs' (a library and headers
 * that do not match), or -errno.
 */
int tdev_names_read(struct uxdp_dev *dev, struct tdev_names *names);

/* Field @i of the RX / TX counters (0 past the end). */
uint64_t tdev_rx_field(const struct tdev_counters *c, unsigned int i);
uint64_t tdev_tx_field(const struct tdev_counters *c, unsigned int i);

#define TSTAT_MAX	64

struct tstat {
	const char *scope;	/* "rx", "tx" or "pool" (library strings) */
	const char *name;
	const char *desc;
	uint64_t value;		/* summed over the scope's queues / pools */
};

/*
 * Every counter uxdp_dev_stats_walk() gives for a device, summed per
 * (scope, name) over queues, in the library's order. The pool scope holds
 * gauges too (buffers on the free list now), which only make sense as
 * values, never as rates.
 */
struct tstat_set {
	uint32_t n;
	struct tstat s[TSTAT_MAX];
};

/* Read every counter of @dev into *@set. Returns 0 or -errno. */
int tstat_set_read(struct uxdp_dev *dev, struct tstat_set *set);

/* The value of @scope.@name in @set, 0 if there is none. */
uint64_t tstat_get(const struct tstat_set *set, const char *scope,
		   const char *name);

/* ---- formats ------------------------------------------------------------- */

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t tstats_now_ns(void);

/* @v with thousands separators, "14,880,952", into @buf; returns @buf. */
char *tstats_fmt_count(char *buf, size_t len, uint64_t v);

/* @count over @ns, per second, rounded, with separators; returns @buf. */
char *tstats_fmt_rate(char *buf, size_t len, uint64_t count, uint64_t ns);

/* Over @ns, the rate (tstats_fmt_rate); @ns == 0, the count: the one
 * format of the interval lines and of the totals. */
char *tstats_fmt(char *buf, size_t len, uint64_t v, uint64_t ns);

/* @count / @ns * 1e9, 0 when @ns is 0 (never NaN: JSON has none). */
double tstats_rate(uint64_t count, uint64_t ns);

/* @s as a JSON string, quotes and escapes included. */
void tjson_str(FILE *f, const char *s);

/*
 * After a line of output: push it out (whoever reads a pipe sees it at
 * once) and tell whether everything written to @f so far arrived.
 * Returns 0 or a positive errno (EIO when the stream does not say).
 */
int tstats_flush(FILE *f);

#endif /* UXDP_TOOLS_STATS_H */
