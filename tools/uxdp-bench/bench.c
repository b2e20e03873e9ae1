/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The clock, pinning and the round-robin runner behind every command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "report.h"

struct bench_env bench_env = { .tsc_ghz = 1.0, .cpu_a = -1, .cpu_b = -1 };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_of(double *v, unsigned int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Ticks per ns over a 20 ms busy window, five times, median. The window is
 * long enough that the two clock reads at its ends (a few hundred ns, more
 * if the hypervisor steals the CPU right then) stay below 0.01%.
 */
static double calibrate_tsc(void)
{
	double ghz[5];
	unsigned int i;

	for (i = 0; i < 5; i++) {
		uint64_t n0 = raw_ns(), t0 = bench_tsc_begin(), n1, t1;

		do {
			n1 = raw_ns();
		} while (n1 - n0 < 20000000ULL);
		t1 = bench_tsc_end();
		ghz[i] = (double)(t1 - t0) / (double)(n1 - n0);
	}
	return median_of(ghz, 5);
}

/* Ticks between two back-to-back stamps: what each timed phase overstates. */
static double measure_stamp_cost(void)
{
	double d[1001];
	unsigned int i;

	for (i = 0; i < 1001; i++) {
		uint64_t a = bench_tsc_end();
		uint64_t b = bench_tsc_end();

		d[i] = (double)(b - a);
	}
	return median_of(d, 1001);
}

static void find_cpus(void)
{
	cpu_set_t set;
	int c;

	bench_env.ncpus = 1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	bench_env.ncpus = CPU_COUNT(&set);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (bench_env.cpu_a < 0)
			bench_env.cpu_a = c;
		else if (bench_env.cpu_b < 0)
			bench_env.cpu_b = c;
	}
}

int bench_env_init(void)
{
	find_cpus();
	/* With one CPU there is nothing to choose; leave the thread free. */
	if (bench_env.ncpus >= 2 && !bench_pin_self(bench_env.cpu_a))
		bench_env.pinned = true;
#if BENCH_HAVE_TSC
	bench_env.tsc_ghz = calibrate_tsc();
	if (!(bench_env.tsc_ghz > 0.01))
		return -1;
#endif
	bench_env.stamp_cost = measure_stamp_cost();
	return 0;
}

int bench_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct bench_thread {
	pthread_t tid;
};

int bench_spawn(struct bench_thread **tp, int cpu, void *(*fn)(void *),
		void *arg)
{
	struct bench_thread *t = calloc(1, sizeof(*t));
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	if (!t)
		return -ENOMEM;
	pthread_attr_init(&attr);
	/* Pinned before it starts: it never runs a cycle on the wrong CPU. */
	if (cpu >= 0 && bench_env.pinned) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	err = pthread_create(&t->tid, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err) {
		free(t);
		return -err;
	}
	*tp = t;
	return 0;
}

void bench_join(struct bench_thread *t)
{
	pthread_join(t->tid, NULL);
	free(t);
}

bool bench_exe_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	struct stat st;

	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);
		int n;

		/* An empty entry is the current directory. */
		n = snprintf(out, len, "%.*s/%s", (int)dl, dl ? path : ".",
			     name);
		if (n > 0 && (size_t)n < len && !stat(out, &st) &&
		    S_ISREG(st.st_mode) && !access(out, X_OK))
			return true;
		path = colon ? colon + 1 : "";
	}
	return false;
}

void bench_progress(bool quiet, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

/* Why the run in progress failed, from bench_why(); "" if not said. */
static char run_why[192];

void bench_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run_why, sizeof(run_why), fmt, ap);
	va_end(ap);
}

const char *bench_last_why(void)
{
	return run_why[0] ? run_why : "no reason given";
}

/*
 * bench_run() calls this only for a variant without an error yet and
 * drops the variant after its first one, so v->why says why it was
 * dropped.
 */
static int run_one(struct bench_variant *v, uint64_t ops, double *out)
{
	unsigned int m;
	int err;

	for (m = 0; m < v->nmetrics; m++)
		out[m] = NAN;
	run_why[0] = '\0';
	if (bench_fail_injected(v->label))
		err = -ECANCELED;
	else
		err = v->run(v->arg, ops, out);
	if (!err)
		return 0;
	if (err == BENCH_UNAVAILABLE) {
		v->unavailable = true;
		err = -EOPNOTSUPP;
	}
	v->err = err;
	snprintf(v->why, sizeof(v->why), "%s",
		 run_why[0] ? run_why : strerror(-err));
	return err;
}

void bench_run_prepare(struct bench_variant *v, unsigned int nv,
		       unsigned int runs)
{
	unsigned int i;

	for (i = 0; i < nv; i++) {
		v[i].samples = calloc((size_t)runs * BENCH_MAX_METRICS,
				      sizeof(double));
		v[i].nsamples = 0;
		v[i].unavailable = false;
		v[i].why[0] = '\0';
		if (!v[i].samples) {
			v[i].err = -ENOMEM;
			snprintf(v[i].why, sizeof(v[i].why), "%s",
				 strerror(ENOMEM));
		}
	}
}

bool bench_fail_injected(const char *label)
{
	const char *fail = getenv("UXDP_BENCH_FAIL_VARIANT");

	if (!fail || !*fail || !strstr(label, fail))
		return false;
	bench_why("failure injected (UXDP_BENCH_FAIL_VARIANT)");
	return true;
}

unsigned int bench_run(struct bench_variant *v, unsigned int nv,
		       unsigned int runs, const char *what, bool quiet)
{
	double scratch[BENCH_MAX_METRICS];
	unsigned int i, r, ok = 0;

	bench_run_prepare(v, nv, runs);
	bench_progress(quiet, "  %s: %u variants x %u runs ", what, nv, runs);
	/* Warm-up: a sixteenth of a run, results thrown away. */
	for (i = 0; i < nv; i++)
		if (!v[i].err)
			run_one(&v[i], v[i].ops / 16 ? v[i].ops / 16 : 1,
				scratch);
	for (r = 0; r < runs; r++) {
		for (i = 0; i < nv; i++) {
			double *out;

			if (v[i].err)
				continue;
			out = &v[i].samples[v[i].nsamples * BENCH_MAX_METRICS];
			if (!run_one(&v[i], v[i].ops, out))
				v[i].nsamples++;
		}
		bench_progress(quiet, ".");
	}
	bench_progress(quiet, "\n");
	for (i = 0; i < nv; i++)
		ok += !v[i].err && v[i].nsamples;
	return ok;
}

void bench_fail(const char *group, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "uxdp-bench: %s: FAILED: %s\n", group, msg);
	report_warn(group, "FAILED: %s", msg);
}

unsigned int bench_check(const struct bench_variant *v, unsigned int nv,
			 const char *group)
{
	unsigned int i, failed = 0;

	for (i = 0; i < nv; i++) {
		if (!v[i].err && v[i].nsamples)
			continue;
		if (v[i].unavailable) {
			report_warn(group, "%s skipped: %s", v[i].label,
				    v[i].why);
			continue;
		}
		failed++;
		bench_fail(group, "%s: %s (its figures are n/a)", v[i].label,
			   v[i].why[0] ? v[i].why : "no samples");
	}
	return failed;
}

static double stat_of(const struct bench_variant *v, unsigned int metric,
		      bool want_min)
{
	double col[256];
	unsigned int i, n = 0;

	if (v->err || metric >= v->nmetrics)
		return NAN;
	for (i = 0; i < v->nsamples && n < 256; i++) {
		double x = v->samples[i * BENCH_MAX_METRICS + metric];

		if (!isnan(x))
			col[n++] = x;
	}
	if (!n)
		return NAN;
	if (!want_min)
		return median_of(col, n);
	qsort(col, n, sizeof(*col), cmp_double);
	return col[0];
}

double bench_sample(const struct bench_variant *v, unsigned int run,
		    unsigned int metric)
{
	if (v->err || run >= v->nsamples || metric >= v->nmetrics)
		return NAN;
	return v->samples[run * BENCH_MAX_METRICS + metric];
}

double bench_median_of(double *vals, unsigned int n)
{
	return median_of(vals, n);
}

double bench_median(const struct bench_variant *v, unsigned int metric)
{
	return stat_of(v, metric, false);
}

double bench_min(const struct bench_variant *v, unsigned int metric)
{
	return stat_of(v, metric, true);
}

void bench_variants_free(struct bench_variant *v, unsigned int nv)
{
	unsigned int i;

	for (i = 0; i < nv; i++) {
		free(v[i].samples);
		v[i].samples = NULL;
	}
}

unsigned int bench_dpdk_mem_mb(const struct bench_opts *o)
{
	uint64_t frames = o->frames ? o->frames : BENCH_DEFAULT_FRAMES;
	uint64_t chunk = o->chunk_size ? o->chunk_size : BENCH_DEFAULT_CHUNK;

	/* Each object carries a header and padding: count it twice. */
	return 256 + (unsigned int)((frames * (chunk + 256) * 2) >> 20);
}

double bench_paired_ratio(const struct bench_variant *a,
			  const struct bench_variant *b, unsigned int metric)
{
	double r[256];
	unsigned int i, n = 0;

	for (i = 0; i < a->nsamples && i < b->nsamples && n < 256; i++) {
		double x = bench_sample(a, i, metric);
		double y = bench_sample(b, i, metric);

		if (!isnan(x) && !isnan(y) && y != 0)
			r[n++] = x / y;
	}
	return bench_median_of(r, n);
}

/* @text from column @col on, wrapped at 79 with continuation at @indent. */
void bench_put_wrapped(FILE *f, int col, int indent, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *e = p;
		int len;

		while (*e && *e != ' ')
			e++;
		len = (int)(e - p);
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, p);
		col += len;
		p = *e ? e + 1 : e;
	}
	fputc('\n', f);
}
