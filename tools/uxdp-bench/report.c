/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The results module: rows, targets and notes, printed as aligned human
 * tables or as one JSON document.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "report.h"

struct report_row {
	char group[16];
	char name[64];
	char variant[40];
	double value;
	double min;
	char unit[16];
	unsigned int nparts;
	char part_name[REPORT_MAX_PARTS][24];
	double part_value[REPORT_MAX_PARTS];
	char seed[128];
	char note[160];
	bool summary;
};

struct report_target {
	char group[16];
	char what[96];
	double value;
	double limit;
	bool at_least;		/* met when value >= limit, else <= */
	char note[200];
};

enum item_kind {
	ITEM_ROW,
	ITEM_TARGET,
	ITEM_NOTE,
	ITEM_WARN,
	ITEM_TEXT,
	ITEM_HEADING,
};

/* Notes, warnings, text and headings: one line each. */
struct report_line {
	char group[16];
	char text[640];
};

struct report_item {
	enum item_kind kind;
	void *p;		/* row, target or line */
};

struct report_env_kv {
	char key[32];
	char str[160];
	double num;
	bool is_num;
};

static struct {
	const char *command;
	bool json;
	bool quiet;
	bool compact;
	struct report_item *items;
	size_t nitems, cap, flushed;
	struct report_env_kv env[24];
	unsigned int nenv;
} rep;

/*
 * errno of the first failed write to stdout. It is taken where the output
 * is flushed: by the time main() checks stdout, errno has long since been
 * overwritten. Outside rep, which report_finish() clears.
 */
static int out_errno;

static void out_flush(void)
{
	errno = 0;
	if ((fflush(stdout) || ferror(stdout)) && !out_errno)
		out_errno = errno ? errno : EIO;
}

int report_output_error(void)
{
	return out_errno;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		fprintf(stderr, "uxdp-bench: out of memory\n");
		exit(1);
	}
	return p;
}

static void add_item(enum item_kind kind, void *p)
{
	if (rep.nitems == rep.cap) {
		size_t cap = rep.cap ? rep.cap * 2 : 128;
		struct report_item *n = realloc(rep.items, cap * sizeof(*n));

		if (!n) {
			fprintf(stderr, "uxdp-bench: out of memory\n");
			exit(1);
		}
		rep.items = n;
		rep.cap = cap;
	}
	rep.items[rep.nitems].kind = kind;
	rep.items[rep.nitems].p = p;
	rep.nitems++;
}

void report_init(const char *command, bool json, bool quiet, bool compact)
{
	rep.command = command;
	rep.json = json;
	rep.quiet = quiet;
	rep.compact = compact;
}

static struct report_env_kv *env_slot(const char *key)
{
	struct report_env_kv *kv;
	unsigned int i;

	for (i = 0; i < rep.nenv; i++)
		if (!strcmp(rep.env[i].key, key))
			return &rep.env[i];
	if (rep.nenv == sizeof(rep.env) / sizeof(rep.env[0]))
		return NULL;
	kv = &rep.env[rep.nenv++];
	snprintf(kv->key, sizeof(kv->key), "%s", key);
	return kv;
}

void report_env_num(const char *key, double value)
{
	struct report_env_kv *kv = env_slot(key);

	if (kv) {
		kv->num = value;
		kv->is_num = true;
	}
}

void report_env_str(const char *key, const char *fmt, ...)
{
	struct report_env_kv *kv = env_slot(key);
	va_list ap;

	if (!kv)
		return;
	va_start(ap, fmt);
	vsnprintf(kv->str, sizeof(kv->str), fmt, ap);
	va_end(ap);
	kv->is_num = false;
}

static void add_line(enum item_kind kind, const char *group, const char *fmt,
		     va_list ap)
{
	struct report_line *l = xcalloc(1, sizeof(*l));

	snprintf(l->group, sizeof(l->group), "%s", group ? group : "");
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	add_item(kind, l);
}

void report_text(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(ITEM_TEXT, NULL, fmt, ap);
	va_end(ap);
}

void report_heading(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(ITEM_HEADING, NULL, fmt, ap);
	va_end(ap);
}

void report_note(const char *group, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(ITEM_NOTE, group, fmt, ap);
	va_end(ap);
}

void report_warn(const char *group, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(ITEM_WARN, group, fmt, ap);
	va_end(ap);
}

struct report_row *report_add(const char *group, const char *name,
			      const char *variant, double value, double min,
			      const char *unit)
{
	struct report_row *r = xcalloc(1, sizeof(*r));

	snprintf(r->group, sizeof(r->group), "%s", group);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->variant, sizeof(r->variant), "%s", variant);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->value = value;
	r->min = min;
	add_item(ITEM_ROW, r);
	return r;
}

void report_part(struct report_row *r, const char *name, double value)
{
	if (r->nparts == REPORT_MAX_PARTS)
		return;
	snprintf(r->part_name[r->nparts], sizeof(r->part_name[0]), "%s",
		 name);
	r->part_value[r->nparts++] = value;
}

void report_seed(struct report_row *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->seed, sizeof(r->seed), fmt, ap);
	va_end(ap);
}

void report_row_note(struct report_row *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

void report_summarise(struct report_row *r)
{
	r->summary = true;
}

static void target_add(const char *group, const char *what, double value,
		       double limit, bool at_least, const char *fmt,
		       va_list ap)
{
	struct report_target *t = xcalloc(1, sizeof(*t));

	snprintf(t->group, sizeof(t->group), "%s", group);
	snprintf(t->what, sizeof(t->what), "%s", what);
	t->value = value;
	t->limit = limit;
	t->at_least = at_least;
	if (fmt)
		vsnprintf(t->note, sizeof(t->note), fmt, ap);
	add_item(ITEM_TARGET, t);
}

void report_target(const char *group, const char *what, double value,
		   double limit, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	target_add(group, what, value, limit, false, fmt, ap);
	va_end(ap);
}

void report_target_min(const char *group, const char *what, double value,
		       double limit, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	target_add(group, what, value, limit, true, fmt, ap);
	va_end(ap);
}

static bool target_met(const struct report_target *t)
{
	return t->at_least ? t->value >= t->limit : t->value <= t->limit;
}

/* ---- human output -------------------------------------------------------- */

struct widths {
	int group, name, variant, unit;
};

static void widen(struct widths *w, const struct report_row *r)
{
	int g = (int)strlen(r->group), n = (int)strlen(r->name);
	int v = (int)strlen(r->variant), u = (int)strlen(r->unit);

	if (g > w->group)
		w->group = g;
	if (n > w->name)
		w->name = n;
	if (v > w->variant)
		w->variant = v;
	if (u > w->unit)
		w->unit = u;
}

/* "cyc/elem" -> "elem": the per-what of a cycle unit, NULL otherwise. */
static const char *cycle_unit_suffix(const char *unit)
{
	return strncmp(unit, "cyc/", 4) ? NULL : unit + 4;
}

/* Append to a line buffer; a full buffer just stops growing. */
static void line_add(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void line_add(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/* Print without the padding the last column leaves behind. */
static void line_put(char *buf, size_t len, size_t off)
{
	if (off >= len)
		off = len - 1;
	while (off && buf[off - 1] == ' ')
		off--;
	buf[off] = '\0';
	puts(buf);
}

static void print_row(const struct report_row *r, const struct widths *w)
{
	const char *per = cycle_unit_suffix(r->unit);
	char buf[512];
	size_t off = 0;
	unsigned int i;

	line_add(buf, sizeof(buf), &off, "%-*s  %-*s  %-*s  ", w->group,
		 r->group, w->name, r->name, w->variant, r->variant);
	if (isnan(r->value))
		line_add(buf, sizeof(buf), &off, "%9s %-*s", "n/a", w->unit,
			 r->unit);
	else
		line_add(buf, sizeof(buf), &off, "%9.2f %-*s", r->value,
			 w->unit, r->unit);
	if (per && !isnan(r->value))
		line_add(buf, sizeof(buf), &off, "  %7.2f ns/%-5s",
			 bench_ns(r->value), per);
	else if (per)
		line_add(buf, sizeof(buf), &off, "  %7s    %-5s", "", "");
	if (!isnan(r->min))
		line_add(buf, sizeof(buf), &off, "  min %7.2f", r->min);
	for (i = 0; i < r->nparts; i++) {
		if (isnan(r->part_value[i]))
			line_add(buf, sizeof(buf), &off, "  %s n/a",
				 r->part_name[i]);
		else
			line_add(buf, sizeof(buf), &off, "  %s %.2f",
				 r->part_name[i], r->part_value[i]);
	}
	if (r->seed[0])
		line_add(buf, sizeof(buf), &off, "  | seed: %s", r->seed);
	if (r->note[0])
		line_add(buf, sizeof(buf), &off, "  (%s)", r->note);
	line_put(buf, sizeof(buf), off);
}

static int target_width(size_t from, size_t to)
{
	int w = 0;
	size_t i;

	for (i = from; i < to; i++) {
		const struct report_target *t = rep.items[i].p;
		int n;

		if (rep.items[i].kind != ITEM_TARGET)
			continue;
		n = (int)strlen(t->what);
		if (n > w)
			w = n;
	}
	return w;
}

static void print_target(const struct report_target *t, int width)
{
	const char *verdict;
	char buf[512];
	size_t off = 0;

	if (isnan(t->value))
		verdict = "NOT MEASURED";
	else
		verdict = target_met(t) ? "REACHED" : "NOT REACHED";
	line_add(buf, sizeof(buf), &off, "TARGET %-5s %-*s  ", t->group,
		 width, t->what);
	if (isnan(t->value))
		line_add(buf, sizeof(buf), &off, "%6s", "n/a");
	else
		line_add(buf, sizeof(buf), &off, "%6.3f", t->value);
	line_add(buf, sizeof(buf), &off, " %s %.2f  %-11s",
		 t->at_least ? ">=" : "<=", t->limit, verdict);
	if (t->note[0])
		line_add(buf, sizeof(buf), &off, "  (%s)", t->note);
	line_put(buf, sizeof(buf), off);
}

/*
 * A note or warning, wrapped at 79 columns under its label: they are
 * sentences, and a terminal is where they are read.
 */
static void print_wrapped(const char *group, const char *label,
			  const char *text)
{
	int indent = printf("%-5s  %s: ", group, label);

	out_flush();
	bench_put_wrapped(stdout, indent, indent, text);
}

/* Print items [from, to), sizing each run of rows to its own contents. */
static void print_items(size_t from, size_t to)
{
	size_t i, j;

	for (i = from; i < to; i++) {
		struct report_item *it = &rep.items[i];
		struct report_line *l = it->p;
		struct widths w = { 0 };
		int tw;

		/* The demo's tables are its summary block. */
		if (rep.compact && it->kind != ITEM_TEXT &&
		    it->kind != ITEM_WARN)
			continue;
		switch (it->kind) {
		case ITEM_ROW:
			for (j = i; j < to && rep.items[j].kind == ITEM_ROW;
			     j++)
				widen(&w, rep.items[j].p);
			for (; i < j; i++)
				print_row(rep.items[i].p, &w);
			i--;
			break;
		case ITEM_TARGET:
			j = i;
			while (j < to && rep.items[j].kind == ITEM_TARGET)
				j++;
			tw = target_width(i, j);
			for (; i < j; i++)
				print_target(rep.items[i].p, tw);
			i--;
			break;
		case ITEM_NOTE:
			if (!rep.quiet)
				print_wrapped(l->group, "note", l->text);
			break;
		case ITEM_WARN:
			print_wrapped(l->group, "WARNING", l->text);
			break;
		case ITEM_TEXT:
			printf("%s\n", l->text);
			break;
		case ITEM_HEADING:
			printf("\n== %s ==\n", l->text);
			break;
		}
	}
}

void report_flush(void)
{
	if (!rep.json)
		print_items(rep.flushed, rep.nitems);
	rep.flushed = rep.nitems;
	out_flush();
}

void report_print_summary(const char *title)
{
	struct widths w = { 0 };
	size_t i;

	if (rep.json)
		return;
	printf("\n== %s ==\n", title);
	for (i = 0; i < rep.nitems; i++)
		if (rep.items[i].kind == ITEM_TARGET)
			print_target(rep.items[i].p,
				     target_width(0, rep.nitems));
	for (i = 0; i < rep.nitems; i++) {
		struct report_row *r = rep.items[i].p;

		if (rep.items[i].kind == ITEM_ROW && r->summary)
			widen(&w, r);
	}
	for (i = 0; i < rep.nitems; i++) {
		struct report_row *r = rep.items[i].p;

		if (rep.items[i].kind == ITEM_ROW && r->summary)
			print_row(r, &w);
	}
	out_flush();
}

/* ---- JSON output --------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/*
 * Names are padded so the human columns line up; a JSON consumer gets them
 * with single spaces and no padding.
 */
static void json_name(const char *s)
{
	char buf[128];
	size_t n = 0;

	for (; *s && n < sizeof(buf) - 1; s++) {
		if (*s == ' ' && (!n || buf[n - 1] == ' '))
			continue;
		buf[n++] = *s;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	json_str(buf);
}

static void json_num(double v)
{
	if (isnan(v) || isinf(v))
		printf("null");
	else
		printf("%.6g", v);
}

static void json_opt_str(const char *s)
{
	if (s[0])
		json_str(s);
	else
		printf("null");
}

static void json_row(const struct report_row *r)
{
	unsigned int i;

	printf("    {\"group\": ");
	json_str(r->group);
	printf(", \"name\": ");
	json_name(r->name);
	printf(", \"variant\": ");
	json_str(r->variant);
	printf(", \"value\": ");
	json_num(r->value);
	printf(", \"min\": ");
	json_num(r->min);
	printf(", \"unit\": ");
	json_str(r->unit);
	if (cycle_unit_suffix(r->unit)) {
		printf(", \"ns\": ");
		json_num(bench_ns(r->value));
	}
	if (r->nparts) {
		printf(", \"parts\": {");
		for (i = 0; i < r->nparts; i++) {
			printf("%s", i ? ", " : "");
			json_str(r->part_name[i]);
			printf(": ");
			json_num(r->part_value[i]);
		}
		printf("}");
	}
	printf(", \"seed\": ");
	json_opt_str(r->seed);
	printf(", \"note\": ");
	json_opt_str(r->note);
	printf(", \"summary\": %s}", r->summary ? "true" : "false");
}

static void json_target(const struct report_target *t)
{
	printf("    {\"group\": ");
	json_str(t->group);
	printf(", \"what\": ");
	json_name(t->what);
	printf(", \"value\": ");
	json_num(t->value);
	printf(", \"limit\": ");
	json_num(t->limit);
	printf(", \"at_least\": %s, \"met\": %s, \"note\": ",
	       t->at_least ? "true" : "false",
	       isnan(t->value) ? "null" : target_met(t) ? "true" : "false");
	json_opt_str(t->note);
	printf("}");
}

static void json_items(const char *key, enum item_kind kind,
		       enum item_kind kind2)
{
	bool first = true;
	size_t i;

	printf("  \"%s\": [", key);
	for (i = 0; i < rep.nitems; i++) {
		struct report_item *it = &rep.items[i];

		if (it->kind != kind && it->kind != kind2)
			continue;
		printf("%s\n", first ? "" : ",");
		first = false;
		if (kind == ITEM_ROW) {
			json_row(it->p);
		} else if (kind == ITEM_TARGET) {
			json_target(it->p);
		} else {
			struct report_line *l = it->p;

			printf("    {\"group\": ");
			json_str(l->group);
			printf(", \"level\": \"%s\", \"text\": ",
			       it->kind == ITEM_WARN ? "warning" : "note");
			json_str(l->text);
			printf("}");
		}
	}
	printf("%s]", first ? "" : "\n  ");
}

static void print_json(void)
{
	unsigned int i;

	printf("{\n  \"tool\": \"uxdp-bench\",\n  \"command\": ");
	json_str(rep.command);
	printf(",\n  \"env\": {");
	for (i = 0; i < rep.nenv; i++) {
		printf("%s\n    ", i ? "," : "");
		json_str(rep.env[i].key);
		printf(": ");
		if (rep.env[i].is_num)
			json_num(rep.env[i].num);
		else
			json_str(rep.env[i].str);
	}
	printf("\n  },\n");
	json_items("results", ITEM_ROW, ITEM_ROW);
	printf(",\n");
	json_items("targets", ITEM_TARGET, ITEM_TARGET);
	printf(",\n");
	json_items("notes", ITEM_NOTE, ITEM_WARN);
	printf("\n}\n");
}

void report_finish(void)
{
	size_t i;

	if (rep.json)
		print_json();
	else
		report_flush();
	out_flush();
	for (i = 0; i < rep.nitems; i++)
		free(rep.items[i].p);
	free(rep.items);
	memset(&rep, 0, sizeof(rep));
}
