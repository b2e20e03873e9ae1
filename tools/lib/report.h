/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the tools report of a port they opened: its counters over an
 * interval and at the end, its buffer pools' counters and the audit of its
 * buffers once it is down, as text lines and as JSON members. A tool puts
 * a struct tport in its own port struct and prints its own lines around
 * these (uxdp-fwd's rx/fwd/tx/drop line, uxdp-xsk's "port v (veth): ...").
 *
 * Everything prints to @f as given, never flushing: the tool checks its
 * output once a line is complete (tool_check_output()).
 */
#ifndef UXDP_TOOLS_REPORT_H
#define UXDP_TOOLS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <uxdp/uxdp.h>

#include "stats.h"

struct tport {
	const char *spec;		/* as given: what messages name */
	const char *str;		/* as opened: the JSON's "port" */
	struct uxdp_dev *dev;
	struct tdev_counters last;	/* at the previous tick */
	struct tdev_counters total;	/* at the end */
	struct tstat_set pool;		/* the pool scope, at the end */
	struct uxdp_dev_audit audit;
	int audit_err;			/* the audit failed: none shown */
};

/* The counters since the previous call (or since pt->last was read) into
 * *@d, and a new sample. Returns 0, or -errno with nothing changed. */
int tport_delta(struct tport *pt, struct tdev_counters *d);

/*
 * Once @pt is down (its frames home, its counts final): the totals, the
 * pool counters and the audit, with a "PROG: ..." warning when the audit
 * fails or finds a buffer misplaced (a library bug).
 */
void tport_final(const char *prog, struct tport *pt);

/* ---- text ------------------------------------------------------------------ */

/*
 * "  SCOPE.NAME      14,880,952/s": the name padded to @width columns
 * (scope, dot and name), the value a rate over @ns, or with @ns == 0 a
 * count.
 */
void tport_text_line(FILE *f, const char *scope, const char *name,
		     uint64_t v, uint64_t ns, int width);

/* Every non-zero counter of @d as "  rx.NAME" and "  tx.NAME" lines. */
void tport_text_counters(FILE *f, const struct tdev_names *names,
			 const struct tdev_counters *d, uint64_t ns,
			 int width);

/* At the end: the non-zero pool counters as "  pool.NAME" lines, then
 * "  audit: ..." if the port has a pool and the audit worked. */
void tport_text_pool(FILE *f, const struct tport *pt, int width);

/* ---- JSON ------------------------------------------------------------------ */

/* "name":..,"kind":..,"port":.. (members of the port's object). */
void tport_json_id(FILE *f, const struct tport *pt);

/* "rx":{"packets":N,...},"tx":{...}: every counter, by the library's
 * names. */
void tport_json_counters(FILE *f, const struct tdev_names *names,
			 const struct tdev_counters *d);

/* ,"pool":{...}: the pool counters at the end. */
void tport_json_pool(FILE *f, const struct tport *pt);

/* ,"audit":{"pools":N,...}, unless the audit failed. */
void tport_json_audit(FILE *f, const struct tport *pt);

#endif /* UXDP_TOOLS_REPORT_H */
