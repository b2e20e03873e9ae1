/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench redirect: XDP_REDIRECT between two devices, bulk xdp_xmit (16
 * frames per call) vs single (1), built normally and built with
 * indirect-branch thunks (gcc -mindirect-branch=thunk, the retpolines the
 * seed's kernel had): the seed measured +13.4% (ixgbe) and +8.7% (i40e)
 * with CONFIG_RETPOLINE, and no change without it on physical NICs.
 *
 * The loop lives in redirect_loop.c and is built into two helper
 * programs next to this one, uxdp-bench-redirect (normal) and
 * uxdp-bench-redirect-thunk (the library and the loop compiled with
 * thunks). Each run of a variant is one run of a helper; the four variants
 * are interleaved as every other command's are.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "report.h"

enum { M_CYC, M_CALLS, M_NMETRICS };

struct redirect_case {
	char path[PATH_MAX];
	const char *name;	/* the helper's file name */
	uint32_t bulk;
};

static int helper_path(char *out, size_t len, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(out, len, "%s/%s", self, name) >= len)
		return -ENAMETOOLONG;
	return access(out, X_OK) ? -errno : 0;
}

static int redirect_case_run(void *arg, uint64_t ops, double *out)
{
	struct redirect_case *c = arg;
	unsigned long long pkts;
	double ns, calls;
	char cmd[PATH_MAX + 64];
	FILE *f;
	int st, got;

	snprintf(cmd, sizeof(cmd), "'%s' %u %llu", c->path, c->bulk,
		 (unsigned long long)ops);
	f = popen(cmd, "r");
	if (!f) {
		bench_why("cannot run %s: %s", c->name, strerror(errno));
		return -errno;
	}
	got = fscanf(f, "%lf %lf %llu", &ns, &calls, &pkts);
	st = pclose(f);
	if (st == -1) {
		bench_why("%s: waiting for it: %s", c->name, strerror(errno));
		return -ECHILD;
	}
	/* Its own message, if any, went to our stderr. */
	if (WIFSIGNALED(st)) {
		bench_why("%s %u %llu killed by signal %d", c->name, c->bulk,
			  (unsigned long long)ops, WTERMSIG(st));
		return -EIO;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		bench_why("%s %u %llu exited with status %d", c->name,
			  c->bulk, (unsigned long long)ops,
			  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -EIO;
	}
	if (got != 3 || !(ns > 0) || !(calls >= 0) || pkts < ops) {
		bench_why("%s %u %llu printed no valid result", c->name,
			  c->bulk, (unsigned long long)ops);
		return -EIO;
	}
	out[M_CYC] = ns * bench_env.tsc_ghz;
	out[M_CALLS] = calls;
	return 0;
}

int bench_redirect(const struct bench_opts *o)
{
	static const char *const flavors[] = { "uxdp-bench-redirect",
					       "uxdp-bench-redirect-thunk" };
	static const uint32_t bulks[] = { 16, 1 };
	struct redirect_case cases[4];
	struct bench_variant v[4];
	uint64_t ops = o->ops ? o->ops : BENCH_REDIRECT_DEFAULT_OPS;
	unsigned int nv = 0, f, b;
	double gain[2] = { NAN, NAN };
	int ret = 0;

	report_heading("redirect: XDP_REDIRECT null -> devmap -> null, bulk "
		       "xdp_xmit (16) vs single (1), normal and thunk builds");
	memset(v, 0, sizeof(v));
	for (f = 0; f < 2; f++) {
		char path[PATH_MAX];
		int err = helper_path(path, sizeof(path), flavors[f]);

		/*
		 * Both helpers are built and installed with uxdp-bench:
		 * one missing is a broken installation, not an absent peer.
		 */
		if (err) {
			bench_fail("redirect", "%s not found next to "
				   "uxdp-bench (%s): no %s variants",
				   flavors[f], strerror(-err),
				   f ? "thunk" : "normal");
			ret = 1;
			continue;
		}
		for (b = 0; b < 2; b++) {
			struct redirect_case *c = &cases[nv];

			snprintf(c->path, sizeof(c->path), "%s", path);
			c->name = flavors[f];
			c->bulk = bulks[b];
			v[nv].label = f ? (b ? "thunk single" : "thunk bulk") :
					  (b ? "normal single" : "normal bulk");
			v[nv].run = redirect_case_run;
			v[nv].arg = c;
			v[nv].ops = ops;
			v[nv].nmetrics = M_NMETRICS;
			nv++;
		}
	}
	if (!nv) {
		report_flush();
		return 1;
	}
	bench_run(v, nv, o->runs, "redirect", o->quiet);
	if (bench_check(v, nv, "redirect"))
		ret = 1;

	for (f = 0; f + 1 < nv; f += 2) {
		bool thunk = strstr(v[f].label, "thunk") != NULL;
		double bulk = bench_median(&v[f], M_CYC);
		double single = bench_median(&v[f + 1], M_CYC);
		struct report_row *row;

		for (b = 0; b < 2; b++) {
			row = report_add("redirect", v[f + b].label, "uxdp",
					 bench_env.tsc_ghz * 1e3 /
					 bench_median(&v[f + b], M_CYC), NAN,
					 "Mpps");
			report_part(row, "cyc/pkt",
				    bench_median(&v[f + b], M_CYC));
			report_part(row, "xmit calls/pkt",
				    bench_median(&v[f + b], M_CALLS));
		}
		/* Per-round ratios (cycles: single/bulk = Mpps bulk/single). */
		gain[thunk] = bench_paired_ratio(&v[f + 1], &v[f], M_CYC);
		row = report_add("redirect", thunk ? "thunk bulk/single" :
				 "normal bulk/single", "uxdp", gain[thunk],
				 NAN, "x");
		report_row_note(row, "median of per-round ratios; ratio of "
				"medians %.2fx", single / bulk);
		report_seed(row, thunk ? "1.134x ixgbe (6.04 -> 6.85 Mpps), "
			    "1.087x i40e (6.19 -> 6.72)" :
			    "no change without retpoline (physical NICs)");
		report_summarise(row);
	}
	/* Listed even when not measured: that is a failure, said above. */
	report_target_min("redirect", "bulk/single under thunks", gain[1],
			  1.13, "the seed: +13%% ixgbe, +9%% i40e");
	report_note("redirect", "each run is one run of a helper program "
		    "(uxdp-bench-redirect[-thunk]); the thunk build compiles "
		    "the library and the loop with -mindirect-branch=thunk "
		    "-mindirect-branch-register");
	bench_variants_free(v, nv);
	report_flush();
	return ret;
}
