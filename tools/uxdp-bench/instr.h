/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench --instructions: instructions per packet (per buffer), counted
 * by callgrind, beside the timed figures.
 *
 * The timed figures of this machine move by 10-30% between runs; a count
 * of instructions does not. uxdp-bench runs itself again under
 *
 *	valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no
 *		 --toggle-collect=FUNC ...  uxdp-bench __instr GROUP ARGS...
 *
 * one child process per variant and count. The child builds what the
 * timed variant builds, runs a warm-up pass uninstrumented, then starts
 * the instrumentation and runs the measured loop (a function FUNC, the
 * only code whose instructions are collected) twice: over N units
 * (packets, buffers), then over 2N, dumping the counters after each
 * (CALLGRIND_DUMP_STATS_AT). It prints how many units each pass did. The
 * parent reads the "totals:" line of each dump: (Ir(2N) - Ir(N)) /
 * (units(2N) - units(N)) is the cost of one unit with what a pass costs
 * once (entering the loop, its last partial batch) taken out.
 *
 * Patterns given to --toggle-collect nest: entering a second matching
 * function inside the first turns collection off until it returns. A
 * child uses that to split a loop's count: pass A collects the loop minus
 * the calls matched by a second pattern, pass B (the same work through a
 * loop function that matches nothing) collects those calls alone.
 */
#ifndef UXDP_BENCH_INSTR_H
#define UXDP_BENCH_INSTR_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"

#ifdef UXDP_BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define INSTR_START()		do { CALLGRIND_START_INSTRUMENTATION; \
				     CALLGRIND_ZERO_STATS; } while (0)
#define INSTR_DUMP(tag)		CALLGRIND_DUMP_STATS_AT(tag)
#define INSTR_STOP()		CALLGRIND_STOP_INSTRUMENTATION
#else
#define INSTR_START()		do { } while (0)
#define INSTR_DUMP(tag)		do { (void)(tag); } while (0)
#define INSTR_STOP()		do { } while (0)
#endif

/*
 * A function whose instructions are collected: never inlined, cloned or
 * specialised (a clone would carry another name), so --toggle-collect
 * finds it by name. LTO may still add a suffix: patterns end in '*'.
 */
#if defined(__clang__)
#define INSTR_LOOP	__attribute__((noinline, used))
#else
#define INSTR_LOOP	__attribute__((noipa, used))
#endif

/* argv[1] of a child: what main() hands to instr_child_main(). */
#define INSTR_CHILD_ARG		"__instr"

/* Exit status when --instructions was asked for and valgrind is absent. */
#define INSTR_EXIT_NO_VALGRIND	3

#define INSTR_MAX_DUMPS		4
#define INSTR_MAX_TOGGLES	3

/* What one child is to do. */
struct instr_job {
	const char *group;		/* "xsk", "pool": the child's command */
#define INSTR_MAX_ARGS		6
	const char *args[INSTR_MAX_ARGS];	/* its arguments */
	const char *toggle[INSTR_MAX_TOGGLES];	/* --toggle-collect= */
	unsigned int ndumps;		/* dumps it makes, one per pass */
};

/* What it counted: per pass, the instructions and the units done. */
struct instr_counts {
	uint64_t ir[INSTR_MAX_DUMPS];
	uint64_t units[INSTR_MAX_DUMPS];
};

/*
 * Find valgrind ($UXDP_BENCH_VALGRIND, else "valgrind" in $PATH) and
 * check this build can be counted (valgrind/callgrind.h was found at
 * build time). 0 if it can, else -1; instr_status() says why not.
 */
int instr_init(void);
bool instr_ready(void);
const char *instr_status(void);

/*
 * A variant counted by instr_run(): what the child is to do, and how its
 * counts become the variant's figures. bench_variant.arg points at one.
 */
struct instr_variant {
	struct instr_job job;
	/* out[0..nmetrics-1] from @c; -errno with bench_why() if the counts
	 * make no sense (nothing collected: a stripped binary). */
	int (*figures)(const struct instr_variant *iv,
		       const struct instr_counts *c, double *out);
};

/* Children at once: one per CPU of our affinity mask, at most this. */
#define INSTR_MAX_PARALLEL	8

/*
 * bench_run() for instr_variants: @runs children of each variant under
 * callgrind, round-robin, as many at once as there are CPUs (a count
 * does not depend on what runs beside it). No warm-up run: each child
 * warms itself up. Failures (and UXDP_BENCH_FAIL_VARIANT) are kept in the
 * variants as bench_run() keeps them, for bench_check(). Returns the
 * number of variants with figures.
 */
unsigned int instr_run(struct bench_variant *v, unsigned int nv,
		       unsigned int runs, const char *what, bool quiet);

/* @v counting @iv: @ops units per pass, @nmetrics figures. */
void instr_variant_init(struct bench_variant *v, struct instr_variant *iv,
			const char *label, uint64_t ops,
			unsigned int nmetrics);

/*
 * instr_run() of @v with the children per variant @o asks for (two, one
 * with -r 1 or in the demo), then bench_check() under @group: the number
 * of variants that failed.
 */
unsigned int instr_measure(struct bench_variant *v, unsigned int nv,
			   const struct bench_opts *o, const char *group);

/* Median and minimum of @metric, NAN if the variant failed. */
double instr_median(const struct bench_variant *v, unsigned int metric);
double instr_min(const struct bench_variant *v, unsigned int metric);

/* Largest minus smallest of @metric over the runs (0: all equal), NAN if
 * the variant failed. */
double instr_spread(const struct bench_variant *v, unsigned int metric);

/*
 * Instructions per unit of passes @a (N units) and @b (2N units): the
 * difference of the two, so a pass's fixed cost drops out. NAN if the
 * passes did not differ in units.
 */
double instr_per_unit(const struct instr_counts *c, unsigned int a,
		      unsigned int b);

/* ---- in the child -------------------------------------------------------- */

/* main() with argv after INSTR_CHILD_ARG. Returns the exit status. */
int instr_child_main(int argc, char **argv);

/* The child's report to the parent: the units of each pass, on stdout. */
void instr_child_units(const uint64_t *units, unsigned int n);

/* The children of each command (xsk_perf.c, pool_perf.c). */
int xsk_instr_child(int argc, char **argv);
int pool_instr_child(int argc, char **argv);
int bpf_instr_child(int argc, char **argv);

/* A positive count from a child's argument, 0 if it is not one. */
uint64_t instr_arg_u64(const char *s);

#endif /* UXDP_BENCH_INSTR_H */
