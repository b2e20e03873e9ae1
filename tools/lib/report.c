/* SPDX-License-Identifier: BSD-2-Clause */
/* What the tools report of a port (report.h). */
#include <string.h>

#include "params.h"
#include "ports.h"
#include "report.h"

int tport_delta(struct tport *pt, struct tdev_counters *d)
{
	struct tdev_counters now;
	int err = tdev_counters_read(pt->dev, &now);

	if (err)
		return err;
	tdev_counters_sub(&now, &pt->last, d);
	pt->last = now;
	return 0;
}

void tport_final(const char *prog, struct tport *pt)
{
	struct tstat_set all;
	const char *name = uxdp_dev_name(pt->dev);
	uint32_t i;
	int n;

	tdev_counters_read(pt->dev, &pt->total);
	/* rx and tx are in pt->total already: the pool scope only. */
	pt->pool.n = 0;
	if (!tstat_set_read(pt->dev, &all))
		for (i = 0; i < all.n; i++)
			if (!strcmp(all.s[i].scope, "pool"))
				pt->pool.s[pt->pool.n++] = all.s[i];
	n = uxdp_dev_audit(pt->dev, &pt->audit);
	pt->audit_err = n < 0;
	if (n < 0)
		tmsg(prog, "%s: audit: %s", name, tports_why(n));
	else if (pt->audit.misplaced)
		tmsg(prog, "WARNING: %s: %u of %u buffers misplaced (in no "
		     "place or in two): a libuxdp bug, please report it", name,
		     pt->audit.misplaced, pt->audit.chunks);
}

/* ---- text ------------------------------------------------------------------ */

void tport_text_line(FILE *f, const char *scope, const char *name,
		     uint64_t v, uint64_t ns, int width)
{
	char buf[32];

	fprintf(f, "  %s.%-*s %15s%s\n", scope,
		width - (int)strlen(scope) - 1, name,
		tstats_fmt(buf, sizeof(buf), v, ns), ns ? "/s" : "");
}

void tport_text_counters(FILE *f, const struct tdev_names *names,
			 const struct tdev_counters *d, uint64_t ns,
			 int width)
{
	unsigned int i;

	for (i = 0; i < TDEV_NRX; i++)
		if (tdev_rx_field(d, i))
			tport_text_line(f, "rx", names->rx[i],
					tdev_rx_field(d, i), ns, width);
	for (i = 0; i < TDEV_NTX; i++)
		if (tdev_tx_field(d, i))
			tport_text_line(f, "tx", names->tx[i],
					tdev_tx_field(d, i), ns, width);
}

void tport_text_pool(FILE *f, const struct tport *pt, int width)
{
	uint32_t i;

	for (i = 0; i < pt->pool.n; i++)
		if (pt->pool.s[i].value)
			tport_text_line(f, "pool", pt->pool.s[i].name,
					pt->pool.s[i].value, 0, width);
	if (!pt->audit_err && pt->audit.pools)
		fprintf(f, "  audit: %u chunks, %u in flight, %u misplaced\n",
			pt->audit.chunks, pt->audit.in_flight,
			pt->audit.misplaced);
}

/* ---- JSON ------------------------------------------------------------------ */

void tport_json_id(FILE *f, const struct tport *pt)
{
	fprintf(f, "\"name\":");
	tjson_str(f, uxdp_dev_name(pt->dev));
	fprintf(f, ",\"kind\":");
	tjson_str(f, uxdp_dev_kind(pt->dev));
	fprintf(f, ",\"port\":");
	tjson_str(f, pt->str);
}

void tport_json_counters(FILE *f, const struct tdev_names *names,
			 const struct tdev_counters *d)
{
	unsigned int i;

	fprintf(f, "\"rx\":{");
	for (i = 0; i < TDEV_NRX; i++) {
		fprintf(f, "%s", i ? "," : "");
		tjson_str(f, names->rx[i]);
		fprintf(f, ":%llu", (unsigned long long)tdev_rx_field(d, i));
	}
	fprintf(f, "},\"tx\":{");
	for (i = 0; i < TDEV_NTX; i++) {
		fprintf(f, "%s", i ? "," : "");
		tjson_str(f, names->tx[i]);
		fprintf(f, ":%llu", (unsigned long long)tdev_tx_field(d, i));
	}
	fprintf(f, "}");
}

void tport_json_pool(FILE *f, const struct tport *pt)
{
	uint32_t i;

	fprintf(f, ",\"pool\":{");
	for (i = 0; i < pt->pool.n; i++) {
		fprintf(f, "%s", i ? "," : "");
		tjson_str(f, pt->pool.s[i].name);
		fprintf(f, ":%llu", (unsigned long long)pt->pool.s[i].value);
	}
	fprintf(f, "}");
}

void tport_json_audit(FILE *f, const struct tport *pt)
{
	if (!pt->audit_err)
		fprintf(f, ",\"audit\":{\"pools\":%u,\"chunks\":%u,"
			"\"in_flight\":%u,\"misplaced\":%u}", pt->audit.pools,
			pt->audit.chunks, pt->audit.in_flight,
			pt->audit.misplaced);
}
