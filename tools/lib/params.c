/* SPDX-License-Identifier: BSD-2-Clause */
/* Command-line options from one table (params.h). */
#define _GNU_SOURCE	/* sched_getaffinity() */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

#define WRAP_COLS	79

void tparams_wrap(FILE *f, unsigned int first, unsigned int indent,
		  const char *text)
{
	unsigned int col = first;
	bool empty = true;	/* nothing on this line yet */
	const char *p = text;

	while (*p) {
		size_t len;

		if (*p == '\n') {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			empty = true;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		len = strcspn(p, " \n");
		/* A word that does not fit goes to the next line, unless it
		 * would not fit there either (a word longer than a line). */
		if (col + !empty + len > WRAP_COLS &&
		    (!empty || col > indent)) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			empty = true;
		}
		if (!empty) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, len, f);
		col += (unsigned int)len;
		empty = false;
		p += len;
	}
	fputc('\n', f);
}

void tparams_section(FILE *f, const char *title, const char *text)
{
	fprintf(f, "\n%s:\n  ", title);
	tparams_wrap(f, 2, 2, text);
}

void tparams_examples(FILE *f, const char *prog, const char *const *args)
{
	fprintf(f, "\nexamples:\n");
	for (; *args; args++)
		fprintf(f, "  %s %s\n", prog, *args);
	fprintf(f, "\nSee %s(1).\n", prog);
}

int tparams_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	/* strtoull() would take a sign and blanks; a count has neither. */
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10) {
			/* Still has to be a number to be "too big". */
			while (isdigit((unsigned char)*p))
				p++;
			return *p && !strchr("kKmMgG", *p) ? -EINVAL : -ERANGE;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'k': case 'K': mult = 1000ULL; p++; break;
	case 'm': case 'M': mult = 1000000ULL; p++; break;
	case 'g': case 'G': mult = 1000000000ULL; p++; break;
	}
	if (*p)
		return -EINVAL;
	if (v && mult > UINT64_MAX / v)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

int tparams_parse_msec(const char *s, uint64_t *ms)
{
	uint64_t sec = 0, frac = 0;
	const char *p = s;
	int digits = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > UINT64_MAX / 10000)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++, digits++) {
			if (digits == 3)
				return -EINVAL;	/* finer than 1 ms */
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		for (; digits < 3; digits++)
			frac *= 10;
	}
	if (*p)
		return -EINVAL;
	*ms = sec * 1000 + frac;
	return 0;
}

/* One decimal number of a list at *@p, advancing it; -EINVAL, -ERANGE. */
static int list_number(const char **p, uint32_t hi, uint32_t *v)
{
	uint64_t n = 0;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	for (; isdigit((unsigned char)**p); (*p)++) {
		n = n * 10 + (uint64_t)(**p - '0');
		if (n > hi)
			break;
	}
	if (n > hi) {
		while (isdigit((unsigned char)**p))
			(*p)++;
		return -ERANGE;
	}
	*v = (uint32_t)n;
	return 0;
}

int tparams_parse_list(const char *s, uint32_t hi, uint32_t *out,
		       unsigned int max)
{
	const char *p = s;
	unsigned int n = 0;
	int err, range_err = 0;

	do {
		uint32_t a, b, v;

		err = list_number(&p, hi, &a);
		if (err == -EINVAL)
			return err;
		if (err)
			range_err = err;
		b = a;
		if (*p == '-') {
			p++;
			err = list_number(&p, hi, &b);
			if (err == -EINVAL)
				return err;
			if (err)
				range_err = err;
		}
		if (*p && *p != ',')
			return -EINVAL;
		/* The whole list must parse before a number out of range
		 * is the answer: "1,x" is not a list at all. */
		if (range_err)
			continue;
		if (b < a)
			return -EINVAL;
		for (v = a;; v++) {
			if (n == max)
				return -E2BIG;
			out[n++] = v;
			if (v == b)
				break;
		}
	} while (*p++ == ',');
	return range_err ? range_err : (int)n;
}

unsigned int tparams_parse_cpus(const struct tparams *p, const char *what,
				const char *s, uint32_t *out, unsigned int max)
{
	cpu_set_t allowed;
	int n, i;

	n = tparams_parse_list(s, CPU_SETSIZE - 1, out, max);
	if (n == -E2BIG)
		tparams_fail(p, "--%s: more than %u CPUs", what, max);
	if (n < 0)
		tparams_fail(p, "--%s '%s': want a list like 0,2-3 of CPU "
			     "numbers", what, s);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (i = 0; i < n; i++)
		if (!CPU_ISSET(out[i], &allowed))
			tparams_fail(p, "--%s: CPU %u is not one this process "
				     "may run on", what, out[i]);
	return (unsigned int)n;
}

void tmsg_v(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tmsg(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmsg_v(prog, fmt, ap);
	va_end(ap);
}

void tparams_fail(const struct tparams *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tmsg_v(p->prog, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", p->prog);
	exit(2);
}

void tparams_usage(const struct tparams *p, FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: %s %s\n\n", p->prog, p->synopsis);
	if (p->about) {
		tparams_wrap(f, 0, 0, p->about);
		fputc('\n', f);
	}
	fprintf(f, "options:\n");
	for (i = 0; i < p->ndefs; i++) {
		const struct tparam *d = &p->defs[i];
		char flag[64];
		int n;

		if (d->key)
			n = snprintf(flag, sizeof(flag), "  -%c, --%s", d->key,
				     d->name);
		else
			n = snprintf(flag, sizeof(flag), "      --%s", d->name);
		if (d->metavar && n > 0 && (size_t)n < sizeof(flag))
			snprintf(flag + n, sizeof(flag) - (size_t)n, " %s",
				 d->metavar);
		/* A long flag gets the help on a line of its own. */
		if (strlen(flag) > 27) {
			fprintf(f, "%s\n%29s", flag, "");
		} else {
			fprintf(f, "%-29s", flag);
		}
		tparams_wrap(f, 29, 29, d->help);
	}
	if (p->more_help) {
		fputc('\n', f);
		p->more_help(f);
	}
}

bool tparams_given(const struct tparams *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->ndefs; i++)
		if (!strcmp(p->defs[i].name, name))
			return p->given & (1ULL << i);
	return false;
}

static void set_value(struct tparams *p, const struct tparam *d,
		      const char *arg, void *opts)
{
	char *field = (char *)opts + d->off;
	uint64_t v = 0;
	int err;

	switch (d->type) {
	case TPARAM_FLAG:
		*(bool *)field = true;
		return;
	case TPARAM_STR:
		if (!*arg)
			tparams_fail(p, "--%s: empty value", d->name);
		*(const char **)field = arg;
		return;
	case TPARAM_STRS: {
		struct tparam_strs *l = (struct tparam_strs *)field;

		if (!*arg)
			tparams_fail(p, "--%s: empty value", d->name);
		if (l->n == TPARAM_STRS_MAX)
			tparams_fail(p, "--%s: at most %u of them", d->name,
				     TPARAM_STRS_MAX);
		l->v[l->n++] = arg;
		return;
	}
	case TPARAM_HELP:
		tparams_usage(p, stdout);
		/* --help > /dev/full is a failure like any lost output. */
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "%s: writing the help text: %s\n",
				p->prog, strerror(errno ? errno : EIO));
			exit(1);
		}
		exit(0);
	case TPARAM_U32:
	case TPARAM_U64:
	case TPARAM_MSEC:
		if (d->type == TPARAM_MSEC)
			err = tparams_parse_msec(arg, &v);
		else
			err = tparams_parse_u64(arg, &v);
		if (err == -EINVAL) {
			if (d->type == TPARAM_MSEC)
				tparams_fail(p, "--%s: '%s' is not a number "
					     "of seconds (e.g. 2 or 0.5, at "
					     "most 3 decimals)", d->name, arg);
			if (d->max == UINT64_MAX)
				tparams_fail(p, "--%s: '%s' is not a number "
					     "(k/M/G suffix ok)", d->name, arg);
			tparams_fail(p, "--%s: '%s' is not a number (want "
				     "%llu..%llu, k/M/G suffix ok)", d->name,
				     arg, (unsigned long long)d->min,
				     (unsigned long long)d->max);
		}
		if (err || v < d->min || v > d->max) {
			if (d->type == TPARAM_MSEC)
				tparams_fail(p, "--%s: %s is out of range: "
					     "%llu.%03llu..%llu.%03llu seconds",
					     d->name, arg,
					     (unsigned long long)d->min / 1000,
					     (unsigned long long)d->min % 1000,
					     (unsigned long long)d->max / 1000,
					     (unsigned long long)d->max % 1000);
			tparams_fail(p, "--%s: %s is out of range: %llu..%llu",
				     d->name, arg, (unsigned long long)d->min,
				     (unsigned long long)d->max);
		}
		if (d->type == TPARAM_U32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return;
	}
}

/*
 * getopt_long() said '?' for @arg: an unknown option, or "--json=1", a
 * value given to an option that takes none. For the latter glibc leaves
 * the option's value in optopt (0 for an unknown long option).
 */
static void __attribute__((noreturn))
bad_option(const struct tparams *p, const char *arg)
{
	unsigned int i;

	if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '=')) {
		for (i = 0; i < p->ndefs; i++)
			if ((int)(i + 256) == optopt)
				tparams_fail(p, "option '--%s' takes no value",
					     p->defs[i].name);
	}
	if (optopt > 0 && optopt < 256 && strncmp(arg, "--", 2))
		tparams_fail(p, "unknown option '-%c'", optopt);
	tparams_fail(p, "unknown option '%s'", arg);
}

int tparams_parse(struct tparams *p, int argc, char **argv, void *opts)
{
	struct option longopts[TPARAMS_MAX + 1];
	char shortopts[TPARAMS_MAX * 2 + 2], *sp = shortopts;
	unsigned int i;
	int c;

	if (p->ndefs > TPARAMS_MAX) {
		fprintf(stderr, "%s: internal error: %u options, at most %d\n",
			p->prog, p->ndefs, TPARAMS_MAX);
		exit(1);
	}
	*sp++ = ':';		/* a missing argument comes back as ':' */
	for (i = 0; i < p->ndefs; i++) {
		const struct tparam *d = &p->defs[i];
		bool arg = d->type != TPARAM_FLAG && d->type != TPARAM_HELP;

		/* Long options come back as 256 + their row, short ones as
		 * their letter: either leads to the row. */
		longopts[i] = (struct option){
			.name = d->name,
			.has_arg = arg ? required_argument : no_argument,
			.val = (int)(256 + i),
		};
		if (d->key) {
			*sp++ = (char)d->key;
			if (arg)
				*sp++ = ':';
		}
	}
	memset(&longopts[p->ndefs], 0, sizeof(longopts[0]));
	*sp = '\0';

	p->given = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct tparam *d = NULL;

		if (c == '?')
			bad_option(p, argv[optind - 1]);
		if (c == ':')
			tparams_fail(p, "option '%s' needs a value",
				     argv[optind - 1]);
		if (c >= 256 && (unsigned int)(c - 256) < p->ndefs) {
			i = (unsigned int)(c - 256);
		} else {
			for (i = 0; i < p->ndefs; i++)
				if (p->defs[i].key == c)
					break;
			if (i == p->ndefs)
				tparams_fail(p, "unknown option '%s'",
					     argv[optind - 1]);
		}
		d = &p->defs[i];
		p->given |= 1ULL << i;
		set_value(p, d, optarg, opts);
	}
	return optind;
}
