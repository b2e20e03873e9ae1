/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench internals shared by every command: options, the TSC clock,
 * CPU pinning and the round-robin runner.
 *
 * A command (ring_perf.c, pool_perf.c, ...) builds an array of variants,
 * hands it to bench_run(), and turns medians into report rows (report.h).
 * Nothing here knows about rings or pools.
 */
#ifndef UXDP_BENCH_H
#define UXDP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#else
#define BENCH_HAVE_TSC 0
#endif

/* Options, as parsed by main.c. Zero means "the command's default". */
struct bench_opts {
	uint32_t runs;		/* -r: samples per variant */
	uint64_t ops;		/* -n: elements / buffers per run */
	uint32_t frames;	/* --frames: UMEM chunks (pool) */
	uint32_t chunk_size;	/* --chunk-size: 2048 or 4096 (pool) */
	bool json;		/* --json: one JSON document on stdout */
	bool quiet;		/* -q: no progress or explanatory notes */
	bool no_dpdk;		/* --no-dpdk: skip the DPDK peers */
	bool compact;		/* demo: summary block only, no full tables */
	uint64_t seed;		/* --seed: soak's random choices */
	uint32_t duration;	/* --duration: fwd's run, soak's limit, s */
	uint32_t pipelines;	/* --pipelines: soak's concurrent pipelines */
	const char *plot_dir;	/* --plot: sweeps drawn as SVG here */
	/* --instructions (pool, xsk; demo and all set it): also count
	 * instructions per packet with callgrind (instr.h). */
	bool instructions;
	const char *bpf_dir;	/* --objects: bpf's eBPF objects */
};

/* What the process found at start-up; filled by bench_env_init(). */
struct bench_env {
	double tsc_ghz;		/* TSC ticks per ns */
	double stamp_cost;	/* ticks between two back-to-back stamps */
	int ncpus;		/* CPUs in our affinity mask */
	int cpu_a;		/* 1-core tests and producers run here */
	int cpu_b;		/* consumers, -1 if only one CPU */
	bool pinned;		/* pthread_setaffinity_np worked */
};

extern struct bench_env bench_env;

/* ---- the clock ----------------------------------------------------------- */

/*
 * Stamps for a timed region. The lfence before rdtsc keeps earlier work from
 * leaking past the start; rdtscp waits for the timed work to retire and the
 * lfence after it keeps later work from starting before the stamp. Without
 * them out-of-order execution blurs regions of a few dozen cycles.
 */
static inline uint64_t bench_tsc_begin(void)
{
#if BENCH_HAVE_TSC
	_mm_lfence();
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
#endif
}

static inline uint64_t bench_tsc_end(void)
{
#if BENCH_HAVE_TSC
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
#else
	return bench_tsc_begin();
#endif
}

/* Spin-wait hint for the two-thread loops (the same for every peer). */
static inline void bench_cpu_relax(void)
{
#if BENCH_HAVE_TSC
	_mm_pause();
#endif
}

/*
 * Read a size through a volatile so the compiler cannot specialise a loop
 * for the one value a variant happens to use: bulk 32 must cost what it
 * costs when the size is a run-time value, as in a real driver.
 */
static inline uint32_t bench_opaque_u32(uint32_t v)
{
	volatile uint32_t x = v;

	return x;
}

static inline uint64_t bench_opaque_u64(uint64_t v)
{
	volatile uint64_t x = v;

	return x;
}

/*
 * Calibrate the TSC against CLOCK_MONOTONIC_RAW, measure the cost of a
 * stamp, and find the CPUs to pin to. Returns 0, or -1 if no clock works.
 */
int bench_env_init(void);

/* ns for @ticks TSC ticks. */
static inline double bench_ns(double ticks)
{
	return ticks / bench_env.tsc_ghz;
}

/* ---- pinning ------------------------------------------------------------- */

/* Pin the calling thread to @cpu. Returns 0, or -errno. No-op for cpu < 0. */
int bench_pin_self(int cpu);

/*
 * Run @fn(@arg) on a new thread pinned to @cpu (bench_env.cpu_b for
 * consumers). Returns 0, or -errno. bench_join() waits for it.
 */
struct bench_thread;
int bench_spawn(struct bench_thread **t, int cpu, void *(*fn)(void *),
		void *arg);
void bench_join(struct bench_thread *t);

/* ---- the runner ---------------------------------------------------------- */

#define BENCH_MAX_METRICS	6

/*
 * What a variant's run() returns, besides 0 and -errno, when the peer it
 * measures cannot run on this machine (a kernel without a feature the peer
 * needs, ...): the variant is dropped as a skip, which the report lists
 * but the exit status does not count. Anything else that keeps a variant
 * from producing its figures is a failure.
 */
#define BENCH_UNAVAILABLE	1

struct bench_variant {
	const char *label;	/* for progress and error messages */
	/*
	 * Do @ops operations and store per-operation figures (TSC ticks per
	 * element, per buffer, ...) in out[0..nmetrics-1]. Returns 0, -errno
	 * (a failure: the variant is dropped from the results, and the
	 * command fails) or BENCH_UNAVAILABLE. bench_why() may say why.
	 */
	int (*run)(void *arg, uint64_t ops, double *out);
	void *arg;
	uint64_t ops;
	unsigned int nmetrics;

	/* Filled by bench_run(). */
	double *samples;	/* [run][metric] */
	unsigned int nsamples;
	int err;		/* the first error; -EOPNOTSUPP if unavailable */
	bool unavailable;	/* run() said BENCH_UNAVAILABLE */
	char why[192];		/* bench_why() of that run, or strerror() */
};

/*
 * Run every variant @runs times, round-robin: run 1 of each variant, then
 * run 2 of each, ... so slow drift of a shared machine (another tenant, a
 * frequency change) lands on all variants alike instead of on whichever
 * ran last. One untimed warm-up pass first (page faults, caches, branch
 * predictors). Returns the number of variants that produced samples.
 */
unsigned int bench_run(struct bench_variant *v, unsigned int nv,
		       unsigned int runs, const char *what, bool quiet);

/*
 * What bench_run() does first, for a runner of its own (instr.c): the
 * samples of @runs runs per variant, errors and reasons cleared.
 */
void bench_run_prepare(struct bench_variant *v, unsigned int nv,
		       unsigned int runs);

/*
 * Whether UXDP_BENCH_FAIL_VARIANT names the variant @label (see
 * bench_check()); if so bench_why() says so, and its run must fail.
 */
bool bench_fail_injected(const char *label);

/*
 * Called by a run() that is about to return an error: one line saying why
 * ("uxdp-bench-redirect exited with status 2"), kept in the variant and
 * printed by bench_check(). Without it the error's strerror() is used.
 */
void bench_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What bench_why() said last (for code outside a variant's run). */
const char *bench_last_why(void);

/*
 * After bench_run(): every variant that failed is named, with why, on
 * stderr and as a warning in the report (its figures are n/a); every
 * unavailable one is listed in the report as skipped. Returns the number
 * of failed variants: a command returns 1 if it is not zero.
 *
 * For tests, the environment variable UXDP_BENCH_FAIL_VARIANT=TEXT makes
 * every run of a variant whose label contains TEXT fail (-ECANCELED), so
 * the failure paths of every command can be exercised on a healthy
 * machine.
 */
unsigned int bench_check(const struct bench_variant *v, unsigned int nv,
			 const char *group);

/*
 * A failure outside the variants (set-up, a content check, a peer that
 * would not start): "uxdp-bench: GROUP: FAILED: ..." on stderr and a
 * warning in the report. The caller returns 1.
 */
void bench_fail(const char *group, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Median / minimum of one metric over the runs; NAN if none. */
double bench_median(const struct bench_variant *v, unsigned int metric);
double bench_min(const struct bench_variant *v, unsigned int metric);

/*
 * One metric of run @run (0-based, in round-robin order), NAN if that run
 * failed. Runs with the same index ran back to back across variants.
 */
double bench_sample(const struct bench_variant *v, unsigned int run,
		    unsigned int metric);

/*
 * The median over runs of a/b, each ratio taken within one round (the two
 * variants ran back to back), so slow spells of a shared machine, which
 * scale both alike, cancel out. NAN if no round has both.
 */
double bench_paired_ratio(const struct bench_variant *a,
			  const struct bench_variant *b, unsigned int metric);

/* Median of @n values (sorts @vals); NAN if n == 0. */
double bench_median_of(double *vals, unsigned int n);

/* Free what bench_run() allocated. */
void bench_variants_free(struct bench_variant *v, unsigned int nv);

/* @text from column @col on, wrapped at 79 with continuation at @indent. */
void bench_put_wrapped(FILE *f, int col, int indent, const char *text);

/*
 * The first @name in $PATH that we may run, as execvp() would find it,
 * into @out. false if there is none.
 */
bool bench_exe_in_path(const char *name, char *out, size_t len);

/* Progress to stderr unless quiet. */
void bench_progress(bool quiet, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Memory for DPDK's EAL (no hugepages: plain anonymous memory): room for a
 * mempool as large as the UMEM the pool command builds, plus rings.
 */
unsigned int bench_dpdk_mem_mb(const struct bench_opts *o);

/* ---- commands ------------------------------------------------------------ */

/*
 * Each returns 0, or 1 if anything it should have measured could not be
 * (a variant failed, a content check did not hold, set-up failed), having
 * said which and why on stderr and printed whatever did succeed. A peer
 * that is absent on this machine (DPDK not built or --no-dpdk, no kernel
 * peer without root, one CPU) is a skip, said so in the output, not a
 * failure.
 */
int bench_ring(const struct bench_opts *o);
int bench_pool(const struct bench_opts *o);
int bench_veth_tx(const struct bench_opts *o);
int bench_redirect(const struct bench_opts *o);
int bench_groups(const struct bench_opts *o);
/* uxdp-fwd vs dpdk-testpmd vs libxdp_fwd on the netns testbed (root). */
int bench_fwd(const struct bench_opts *o);
/*
 * Not a benchmark: pipelines under churn for -n packets, then exact
 * accounting and buffer audits (soak.c). 1 on any mismatch.
 */
int bench_soak(const struct bench_opts *o);
/* The seed's xdpsock rxdrop end to end on the nic model (xsk_perf.c). */
int bench_xsk(const struct bench_opts *o);
/* XDP eBPF programs: uxdp's JIT and interpreter, native C, the kernel,
 * DPDK's librte_bpf (bpf_perf.c). */
int bench_bpf(const struct bench_opts *o);

#define BENCH_RING_DEFAULT_OPS	10000000ULL
#define BENCH_POOL_DEFAULT_OPS	2000000ULL
#define BENCH_VETH_DEFAULT_OPS	10000000ULL
/* veth-tx's kernel peer: frames per run, for the generator alone and for
 * the loop each (-n / 5 when -n is given, at least 100k). */
#define BENCH_VETH_KERNEL_OPS	2000000ULL
#define BENCH_REDIRECT_DEFAULT_OPS	10000000ULL
#define BENCH_GROUPS_DEFAULT_OPS	4000000ULL
#define BENCH_SOAK_DEFAULT_OPS	10000000ULL
#define BENCH_XSK_DEFAULT_OPS	2000000ULL
/* --instructions: packets (buffers) of the first counted pass, the second
 * is twice as long; -n does not change them: a count needs no more. */
#define BENCH_XSK_INSTR_OPS	16384ULL
#define BENCH_BPF_DEFAULT_OPS	1000000ULL
#define BENCH_BPF_INSTR_OPS	4096ULL
#define BENCH_POOL_INSTR_OPS	16384ULL
#define BENCH_SOAK_DEFAULT_PIPES	4
/* Each pipeline has at most 6 polling threads; 64 threads may poll. */
#define BENCH_SOAK_MAX_PIPES	8
#define BENCH_DEFAULT_RUNS	5
#define BENCH_DEMO_RUNS		3
#define BENCH_DEFAULT_FRAMES	4096
#define BENCH_DEFAULT_CHUNK	2048

#endif /* UXDP_BENCH_H */
