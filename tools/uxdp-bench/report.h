/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench results: every command adds rows, targets and notes here, and
 * the report prints them either as a human table (one greppable line per
 * result) or, with --json, as one JSON document at exit.
 *
 * A row is (group, name, variant, value, unit) plus, optionally, the
 * minimum over the runs, up to four named parts (a phase breakdown printed
 * on the same line), the seed's figure and a note. Rows whose unit is
 * "cyc/..." also print the value in ns, from the calibrated TSC.
 *
 * Human output is buffered and printed at report_flush(), so a table's
 * columns can be sized to its contents.
 */
#ifndef UXDP_BENCH_REPORT_H
#define UXDP_BENCH_REPORT_H

#include <stdbool.h>

#define REPORT_MAX_PARTS	4

struct report_row;

/*
 * Start a report for @command; @json selects the output format. @compact
 * (demo) prints only text, warnings and the summary block, not the tables.
 */
void report_init(const char *command, bool json, bool quiet, bool compact);

/* Environment facts for the JSON document ("tsc_ghz", "pinning", ...). */
void report_env_num(const char *key, double value);
void report_env_str(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line of text in the human output (headers); not in the JSON. */
void report_text(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* A section heading in the human output; not in the JSON. */
void report_heading(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Add a result: @value is the median, @min the minimum over the runs (NAN
 * if the value is derived, e.g. a ratio). Returns the row so the caller can
 * attach parts, a seed figure or a note; never NULL (exits on ENOMEM).
 */
struct report_row *report_add(const char *group, const char *name,
			      const char *variant, double value, double min,
			      const char *unit);

/* A named figure printed on the row's line after the value, same unit. */
void report_part(struct report_row *row, const char *name, double value);

/* The seed's own figure for this result, printed beside ours. */
void report_seed(struct report_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void report_row_note(struct report_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* List the row again in the summary block (demo, end of each command). */
void report_summarise(struct report_row *row);

/*
 * A target: @value compared with @limit (met when value <= limit). NAN for
 * @value means it could not be measured, which is reported as such.
 */
void report_target(const char *group, const char *what, double value,
		   double limit, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The same, met when @value >= @limit (speed-ups, ratios to beat). */
void report_target_min(const char *group, const char *what, double value,
		       double limit, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* An explanatory note (hidden by -q in the human output; kept in JSON). */
void report_note(const char *group, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A warning: always printed (to stdout in the table, and kept in JSON). */
void report_warn(const char *group, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Human output: print everything added since the last flush. */
void report_flush(void);

/*
 * Human output: the summary block of every target and summarised row so
 * far, targets (the ratios) first, under @title. Warnings are not repeated:
 * they were printed where they arose (in the demo too).
 */
void report_print_summary(const char *title);

/* JSON output: print the document. Frees everything. */
void report_finish(void);

/*
 * 0, or the errno of the first write to stdout that failed (the output is
 * incomplete); main() says so and exits 1.
 */
int report_output_error(void);

#endif /* UXDP_BENCH_REPORT_H */
