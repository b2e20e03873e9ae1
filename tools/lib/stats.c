/* SPDX-License-Identifier: BSD-2-Clause */
/* Live statistics for the uxdp tools (stats.h). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "stats.h"

/* The stats structs are arrays of counters: summed and subtracted as
 * such, so a counter added to the library is carried along unnamed. */
_Static_assert(sizeof(struct uxdp_rxq_stats) % sizeof(uint64_t) == 0,
	       "struct uxdp_rxq_stats is not all 64-bit counters");
_Static_assert(sizeof(struct uxdp_txq_stats) % sizeof(uint64_t) == 0,
	       "struct uxdp_txq_stats is not all 64-bit counters");

#define NWORDS(type)	(sizeof(type) / sizeof(uint64_t))

void tstats_words_add(void *dst, const void *src, size_t n)
{
	uint64_t a, b;
	size_t i;

	/* memcpy: the structs are not declared as arrays. */
	for (i = 0; i < n; i++) {
		memcpy(&a, (char *)dst + i * sizeof(a), sizeof(a));
		memcpy(&b, (const char *)src + i * sizeof(b), sizeof(b));
		a += b;
		memcpy((char *)dst + i * sizeof(a), &a, sizeof(a));
	}
}

void tstats_words_sub(void *dst, const void *x, const void *y, size_t n)
{
	uint64_t a, b, d;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(&a, (const char *)x + i * sizeof(a), sizeof(a));
		memcpy(&b, (const char *)y + i * sizeof(b), sizeof(b));
		/* A counter never goes back; if one seems to (a queue that
		 * went away), say 0 rather than 2^64 - something. */
		d = a >= b ? a - b : 0;
		memcpy((char *)dst + i * sizeof(d), &d, sizeof(d));
	}
}

int tdev_counters_read(struct uxdp_dev *dev, struct tdev_counters *c)
{
	uint32_t q, n;
	int err;

	memset(c, 0, sizeof(*c));
	n = uxdp_dev_num_rxq(dev);
	for (q = 0; q < n; q++) {
		struct uxdp_rxq_stats st;

		err = uxdp_dev_rxq_stats(dev, q, &st);
		if (err)
			return err;
		tstats_words_add(&c->rx, &st, NWORDS(st));
	}
	n = uxdp_dev_num_txq(dev);
	for (q = 0; q < n; q++) {
		struct uxdp_txq_stats st;

		err = uxdp_dev_txq_stats(dev, q, &st);
		if (err)
			return err;
		tstats_words_add(&c->tx, &st, NWORDS(st));
	}
	return 0;
}

uint64_t tdev_rx_packets(struct uxdp_dev *dev)
{
	uint32_t q, n = uxdp_dev_num_rxq(dev);
	uint64_t sum = 0;

	for (q = 0; q < n; q++) {
		struct uxdp_rxq_stats st;

		if (!uxdp_dev_rxq_stats(dev, q, &st))
			sum += st.packets;
	}
	return sum;
}

void tdev_counters_sub(const struct tdev_counters *now,
		       const struct tdev_counters *then,
		       struct tdev_counters *d)
{
	tstats_words_sub(&d->rx, &now->rx, &then->rx, NWORDS(d->rx));
	tstats_words_sub(&d->tx, &now->tx, &then->tx, NWORDS(d->tx));
}

/* ---- by name ------------------------------------------------------------ */

struct names_walk {
	const char *scope;	/* the scope being captured */
	uint32_t queue;		/* its first queue */
	unsigned int n, max;
	const char **out;
	const char **desc;
	bool seen;
};

static int name_add(void *arg, const struct uxdp_stat *st)
{
	struct names_walk *w = arg;

	if (strcmp(st->scope, w->scope))
		return 0;
	if (!w->seen) {
		w->seen = true;
		w->queue = st->queue;
	}
	/* One queue's fields are the struct's, in order. */
	if (st->queue != w->queue)
		return 0;
	if (w->n == w->max)
		return -EPROTO;
	w->out[w->n] = st->name;
	w->desc[w->n] = st->desc;
	w->n++;
	return 0;
}

int tdev_names_read(struct uxdp_dev *dev, struct tdev_names *names)
{
	struct names_walk w = {
		.scope = "rx", .out = names->rx, .desc = names->rx_desc,
		.max = TDEV_NRX,
	};
	int err;

	err = uxdp_dev_stats_walk(dev, name_add, &w);
	if (err)
		return err;
	if (w.n != TDEV_NRX)
		return -EPROTO;
	w = (struct names_walk){
		.scope = "tx", .out = names->tx, .desc = names->tx_desc,
		.max = TDEV_NTX,
	};
	err = uxdp_dev_stats_walk(dev, name_add, &w);
	if (err)
		return err;
	return w.n == TDEV_NTX ? 0 : -EPROTO;
}

uint64_t tdev_rx_field(const struct tdev_counters *c, unsigned int i)
{
	uint64_t v = 0;

	if (i < TDEV_NRX)
		memcpy(&v, (const char *)&c->rx + i * sizeof(v), sizeof(v));
	return v;
}

uint64_t tdev_tx_field(const struct tdev_counters *c, unsigned int i)
{
	uint64_t v = 0;

	if (i < TDEV_NTX)
		memcpy(&v, (const char *)&c->tx + i * sizeof(v), sizeof(v));
	return v;
}

static int set_add(void *arg, const struct uxdp_stat *st)
{
	struct tstat_set *set = arg;
	uint32_t i;

	/* A handful of names per scope: a linear search, once a second. */
	for (i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].scope, st->scope) &&
		    !strcmp(set->s[i].name, st->name))
			break;
	if (i == set->n) {
		if (set->n == TSTAT_MAX)
			return 0;	/* more than we keep: leave it out */
		set->s[i] = (struct tstat){
			.scope = st->scope,
			.name = st->name,
			.desc = st->desc,
		};
		set->n++;
	}
	set->s[i].value += st->value;
	return 0;
}

int tstat_set_read(struct uxdp_dev *dev, struct tstat_set *set)
{
	set->n = 0;
	return uxdp_dev_stats_walk(dev, set_add, set);
}

uint64_t tstat_get(const struct tstat_set *set, const char *scope,
		   const char *name)
{
	uint32_t i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].scope, scope) &&
		    !strcmp(set->s[i].name, name))
			return set->s[i].value;
	return 0;
}

/* ---- formats ------------------------------------------------------------- */

uint64_t tstats_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

char *tstats_fmt_count(char *buf, size_t len, uint64_t v)
{
	char digits[24], out[32];
	int n, i, o = 0;

	n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, len, "%s", out);
	return buf;
}

double tstats_rate(uint64_t count, uint64_t ns)
{
	return ns ? (double)count * 1e9 / (double)ns : 0.0;
}

char *tstats_fmt_rate(char *buf, size_t len, uint64_t count, uint64_t ns)
{
	double r = tstats_rate(count, ns) + 0.5;

	return tstats_fmt_count(buf, len, r >= 1.8e19 ? UINT64_MAX :
				(uint64_t)r);
}

char *tstats_fmt(char *buf, size_t len, uint64_t v, uint64_t ns)
{
	return ns ? tstats_fmt_rate(buf, len, v, ns) :
		    tstats_fmt_count(buf, len, v);
}

void tjson_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			/* Bytes past ASCII too: a port string need not be
			 * UTF-8, and a JSON document must be. */
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

int tstats_flush(FILE *f)
{
	errno = 0;
	if (fflush(f) || ferror(f))
		return errno ? errno : EIO;
	return 0;
}
