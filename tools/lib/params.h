/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line options for the uxdp tools, declared once: a table of
 * struct tparam rows bound to the fields of the tool's own options struct.
 * The getopt_long() tables, the range checks, the error messages and the
 * OPTIONS part of --help are all generated from it, so an option cannot be
 * parsed one way and documented another.
 *
 *	static const struct tparam defs[] = {
 *		TPARAM("duration", 'd', TPARAM_MSEC, struct my_opts, duration,
 *		       "SECONDS", 0, 86400000, "stop after this long (default:
 *		       run until SIGINT)"),
 *		...
 *	};
 *
 * Bad usage ends the process with exit status 2 and a message naming the
 * option; --help prints the text and exits 0. Nothing here touches a
 * device: a tool checks what the table cannot express (options that
 * conflict, a list's contents) after tparams_parse() and reports it with
 * tparams_fail().
 */
#ifndef UXDP_TOOLS_PARAMS_H
#define UXDP_TOOLS_PARAMS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tparam_type {
	TPARAM_FLAG,		/* bool, no argument */
	TPARAM_U32,		/* decimal, k/M/G (x1000) suffix ok */
	TPARAM_U64,		/* the same, 64 bits */
	/* Seconds with up to 3 decimals ("1", "0.25"), kept as uint64_t
	 * milliseconds; min and max are in milliseconds too. */
	TPARAM_MSEC,
	TPARAM_STR,		/* const char *, pointing into argv */
	/* Repeatable: each use appends one (struct tparam_strs), at most
	 * TPARAM_STRS_MAX; the metavar row's help says it repeats. */
	TPARAM_STRS,
	TPARAM_HELP,		/* print the help text, exit 0 */
};

#define TPARAM_STRS_MAX	32

struct tparam_strs {
	const char *v[TPARAM_STRS_MAX];	/* into argv, in the order given */
	unsigned int n;
};

struct tparam {
	const char *name;	/* the long option, without "--" */
	int key;		/* short letter, or 0 for long only */
	enum tparam_type type;
	size_t off;		/* of the field in the tool's options struct */
	const char *metavar;	/* the argument's name in --help */
	uint64_t min, max;	/* numbers: the accepted range */
	const char *help;	/* one sentence, ending with the default */
};

#define TPARAM(name, key, type, stype, field, mv, lo, hi, help)	\
	{ name, key, type, offsetof(stype, field), mv, lo, hi, help }
/* In a struct tparams initializer: the table @defs and its length. */
#define TPARAMS_DEFS(table) \
	.defs = (table), .ndefs = sizeof(table) / sizeof((table)[0])
#define TPARAM_HELP_ROW \
	{ "help", 'h', TPARAM_HELP, 0, NULL, 0, 0, "print this text and exit" }

/* Most rows a table may have (the "given" bits are one word). */
#define TPARAMS_MAX	64

struct tparams {
	const char *prog;	/* "uxdp-fwd", for messages */
	const char *synopsis;	/* "[options] PORT [PORT]" */
	const char *about;	/* a paragraph after the usage line */
	const struct tparam *defs;
	unsigned int ndefs;
	/* Prints the part of --help after OPTIONS (ports, exit status). */
	void (*more_help)(FILE *f);
	/* Filled by tparams_parse(): bit i set when defs[i] was given. */
	uint64_t given;
};

/*
 * Parse @argv into @opts (fields not given keep what they held). Returns
 * the index of the first operand. Exits 2 on bad usage, 0 after --help.
 */
int tparams_parse(struct tparams *p, int argc, char **argv, void *opts);

/* Whether option @name (its long name) was on the command line. */
bool tparams_given(const struct tparams *p, const char *name);

/* "PROG: message\n" on stderr: every line a tool says about itself. */
void tmsg_v(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void tmsg(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report bad usage the way tparams_parse() does, and exit 2. */
void tparams_fail(const struct tparams *p, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* The whole --help text. */
void tparams_usage(const struct tparams *p, FILE *f);

/*
 * Print @text to @f wrapped at 79 columns: the first line starts at column
 * @first (the caller has printed that much already), the others are
 * indented by @indent. A newline in @text starts a new line.
 */
void tparams_wrap(FILE *f, unsigned int first, unsigned int indent,
		  const char *text);

/* A part of --help after OPTIONS: "\nTITLE:\n  " and @text wrapped at
 * 79 columns, indented by 2. */
void tparams_section(FILE *f, const char *title, const char *text);

/* The last part of --help: "\nexamples:\n", a line "  PROG ARGS" for
 * each string of @args (NULL-terminated), then "\nSee PROG(1).\n". */
void tparams_examples(FILE *f, const char *prog, const char *const *args);

/*
 * A decimal number with an optional k/M/G (x1000) suffix into *@out.
 * Returns 0, -EINVAL (not a number) or -ERANGE (over 64 bits).
 */
int tparams_parse_u64(const char *s, uint64_t *out);

/*
 * Seconds with at most three decimals ("2", "0.5", "1.250") into *@ms.
 * Returns 0, -EINVAL or -ERANGE.
 */
int tparams_parse_msec(const char *s, uint64_t *ms);

/*
 * A list of numbers and ranges ("0,2-3") into @out, in the order given,
 * ranges expanded: at most @max entries, each at most @hi. Duplicates are
 * kept (the caller decides what one means). Returns the number of entries,
 * or -EINVAL (not such a list, or a range going down), -ERANGE (a number
 * above @hi), -E2BIG (more than @max entries).
 */
int tparams_parse_list(const char *s, uint32_t hi, uint32_t *out,
		       unsigned int max);

/*
 * Option --@what: a list of CPUs (tparams_parse_list(), "0,2-3") into
 * @out, at most @max, each one this process may run on; else
 * tparams_fail() (exit 2). Returns how many.
 */
unsigned int tparams_parse_cpus(const struct tparams *p, const char *what,
				const char *s, uint32_t *out,
				unsigned int max);

#endif /* UXDP_TOOLS_PARAMS_H */
