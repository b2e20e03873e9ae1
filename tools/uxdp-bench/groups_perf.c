/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench groups: what a poll group costs, and what it saves, on the
 * reflector the first user of uxdp built (issue 7):
 *
 *	gen (null) --redirect--> veth A ==> B (swap MACs, XDP_TX) ==> A: count
 *
 * three devices, one queue each, run three ways on the same machine:
 *
 *	inline   the bench thread polls gen, B and A in turn itself: no
 *	         threads, no groups, the floor
 *	group    one poll group polls all three (one thread, run to
 *	         completion, asleep when idle)
 *	threads  uxdp_dev_start() on each: a thread per queue, three threads
 *	         for however many CPUs
 *
 * For each, gen hands out N packets; a run ends when every one of them has
 * reached A or a counter (a ring that was full, a refusal), and reports the
 * Mpps that reached A, the share lost on the way, and the wall time. The
 * group's cost against inline is the machinery (the set walk, the read
 * section, the sleep check); threads against group is what scheduling
 * three pollers on fewer CPUs loses.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "bench.h"
#include "report.h"

#define GEN_FRAMES	1024
#define BUDGET		64

enum groups_mode { MODE_INLINE, MODE_GROUP, MODE_THREADS, NMODES };

static const char *const mode_names[NMODES] = {
	[MODE_INLINE] = "inline",
	[MODE_GROUP] = "group",
	[MODE_THREADS] = "threads",
};

struct groups_case {
	enum groups_mode mode;
	unsigned int seq;	/* device names: unique per run */
};

enum { M_MPPS, M_LOSS, M_MS, M_NMETRICS };

struct refl {
	struct uxdp_dev *g, *a, *b;
	struct uxdp_map *map;
	struct uxdp_poll_group *grp;
	uint64_t back;		/* A's count: written by A's poller */
};

static uint32_t prog_gen(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return uxdp_redirect_map(priv, 0, UXDP_DROP);
}

static uint32_t prog_swap_tx(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *d = ctx->data, t[6];

	(void)priv;
	if (d + 12 > (unsigned char *)ctx->data_end)
		return UXDP_ABORTED;
	memcpy(t, d, 6);
	memcpy(d, d + 6, 6);
	memcpy(d + 6, t, 6);
	return UXDP_TX;
}

static uint32_t prog_count(struct uxdp_buff *ctx, void *priv)
{
	uint64_t *c = priv;

	(void)ctx;
	/* One writer (A's poller), read by the bench thread. */
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
	return UXDP_DROP;
}

static int attach(struct uxdp_dev *dev, uxdp_prog_fn fn, void *priv)
{
	struct uxdp_prog *p = uxdp_prog_create("groups", fn, priv);
	int err;

	if (!p)
		return -errno;
	err = uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, p);
	uxdp_prog_put(p);
	return err;
}

static void refl_teardown(struct refl *r)
{
	uxdp_poll_group_destroy(r->grp);
	uxdp_dev_destroy(r->g);
	uxdp_dev_destroy(r->a);
	uxdp_dev_destroy(r->b);
	uxdp_map_destroy(r->map);
}

static int refl_setup(struct refl *r, const struct groups_case *c, uint64_t n)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_frames = GEN_FRAMES,
			  .rx_count = n);
	char ng[16], na[16], nb[16];
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(ng, sizeof(ng), "pgg%u.%u", c->seq, (unsigned)getpid() % 1000);
	snprintf(na, sizeof(na), "pga%u.%u", c->seq, (unsigned)getpid() % 1000);
	snprintf(nb, sizeof(nb), "pgb%u.%u", c->seq, (unsigned)getpid() % 1000);
	r->g = uxdp_null_create(ng, &no);
	r->map = uxdp_map_create(1);
	if (!r->g || !r->map ||
	    (err = uxdp_veth_create(na, nb, NULL, &r->a, &r->b)))
		goto fail;
	err = uxdp_map_update(r->map, 0, uxdp_dev_target(r->a));
	if (!err)
		err = attach(r->g, prog_gen, r->map);
	if (!err)
		err = attach(r->b, prog_swap_tx, NULL);
	if (!err)
		err = attach(r->a, prog_count, &r->back);
	if (!err)
		err = uxdp_dev_up(r->a);
	if (!err)
		err = uxdp_dev_up(r->b);
	if (err)
		goto fail;
	return 0;
fail:
	bench_why("set-up: %s", uxdp_errmsg());
	refl_teardown(r);
	return -EIO;
}

/* Frames that reached the end of the line: A, or a counted drop. */
static uint64_t refl_done(struct refl *r)
{
	struct uxdp_rxq_stats g, b;

	uxdp_dev_rxq_stats(r->g, 0, &g);
	uxdp_dev_rxq_stats(r->b, 0, &b);
	return __atomic_load_n(&r->back, __ATOMIC_RELAXED) + g.redirect_err +
	       g.drop + b.tx_err;
}

static int groups_case_run(void *arg, uint64_t ops, double *out)
{
	struct groups_case *c = arg;
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po, .budget = BUDGET);
	struct timespec ms = { .tv_nsec = 200000 };
	uint64_t t0, t1, deadline;
	struct refl r;
	int err;

	c->seq++;
	err = refl_setup(&r, c, ops);
	if (err)
		return err;
	/* Up last: once polled, gen generates. */
	err = uxdp_dev_up(r.g);
	if (err)
		goto out;
	if (c->mode == MODE_GROUP) {
		r.grp = uxdp_poll_group_create(&po);
		err = !r.grp ? -errno :
		      uxdp_poll_group_add(r.grp, r.g, 0) ? -EIO :
		      uxdp_poll_group_add(r.grp, r.b, 0) ? -EIO :
		      uxdp_poll_group_add(r.grp, r.a, 0) ? -EIO : 0;
	}
	if (err)
		goto out;
	t0 = bench_tsc_begin();
	deadline = t0 + (uint64_t)(bench_env.tsc_ghz * 1e9 * 60);
	if (c->mode == MODE_INLINE) {
		while (refl_done(&r) < ops && bench_tsc_end() < deadline) {
			uxdp_dev_poll(r.g, 0, BUDGET);
			uxdp_dev_poll(r.b, 0, BUDGET);
			uxdp_dev_poll(r.a, 0, BUDGET);
		}
	} else {
		if (c->mode == MODE_GROUP)
			err = uxdp_poll_group_start(r.grp);
		else
			err = uxdp_dev_start(r.a, &po) ? -EIO :
			      uxdp_dev_start(r.b, &po) ? -EIO :
			      uxdp_dev_start(r.g, &po) ? -EIO : 0;
		if (err)
			goto out;
		while (refl_done(&r) < ops && bench_tsc_end() < deadline)
			nanosleep(&ms, NULL);
	}
	t1 = bench_tsc_end();
	if (refl_done(&r) < ops) {
		bench_why("%s: %llu of %llu frames in 60 s",
			  mode_names[c->mode],
			  (unsigned long long)refl_done(&r),
			  (unsigned long long)ops);
		err = -ETIMEDOUT;
		goto out;
	}
	out[M_MPPS] = (double)r.back / bench_ns((double)(t1 - t0)) * 1e3;
	out[M_LOSS] = 100.0 * (double)(ops - r.back) / (double)ops;
	out[M_MS] = bench_ns((double)(t1 - t0)) / 1e6;
out:
	refl_teardown(&r);
	return err;
}

int bench_groups(const struct bench_opts *o)
{
	struct groups_case cases[NMODES];
	struct bench_variant v[NMODES];
	uint64_t ops = o->ops ? o->ops : BENCH_GROUPS_DEFAULT_OPS;
	struct report_row *row;
	unsigned int i;
	int ret = 0;

	report_heading("groups: generator -> veth A -> B (XDP_TX) -> A on "
		       "one thread, one poll group, or a thread per queue");
	memset(v, 0, sizeof(v));
	for (i = 0; i < NMODES; i++) {
		cases[i] = (struct groups_case){ .mode = i };
		v[i].label = mode_names[i];
		v[i].run = groups_case_run;
		v[i].arg = &cases[i];
		v[i].ops = ops;
		v[i].nmetrics = M_NMETRICS;
	}
	bench_run(v, NMODES, o->runs, "groups", o->quiet);
	if (bench_check(v, NMODES, "groups"))
		ret = 1;
	for (i = 0; i < NMODES; i++) {
		if (!v[i].nsamples)
			continue;
		row = report_add("groups", mode_names[i], "uxdp",
				 bench_median(&v[i], M_MPPS),
				 bench_min(&v[i], M_MPPS), "Mpps");
		report_part(row, "lost %", bench_median(&v[i], M_LOSS));
		report_part(row, "ms", bench_median(&v[i], M_MS));
		report_summarise(row);
	}
	if (v[MODE_INLINE].nsamples && v[MODE_GROUP].nsamples) {
		double r = bench_paired_ratio(&v[MODE_GROUP], &v[MODE_INLINE],
					      M_MPPS);

		row = report_add("groups", "group / inline", "uxdp", r, NAN,
				 "x");
		report_row_note(row, "what the group machinery costs: 1.0 is "
				"free (median of per-round Mpps ratios)");
		report_summarise(row);
	}
	if (v[MODE_THREADS].nsamples && v[MODE_GROUP].nsamples) {
		double r = bench_paired_ratio(&v[MODE_GROUP],
					      &v[MODE_THREADS], M_MPPS);

		row = report_add("groups", "group / threads", "uxdp", r, NAN,
				 "x");
		report_row_note(row, "Mpps delivered, one group against a "
				"thread per queue on %d CPU%s", bench_env.ncpus,
				bench_env.ncpus == 1 ? "" : "s");
		report_summarise(row);
		report_target_min("groups", "poll group loses nothing "
				  "(delivered / generated)",
				  1.0 - bench_median(&v[MODE_GROUP], M_LOSS) /
				  100.0, 1.0, "lost %.3f%% (threads: %.1f%%)",
				  bench_median(&v[MODE_GROUP], M_LOSS),
				  bench_median(&v[MODE_THREADS], M_LOSS));
	}
	report_note("groups", "%llu packets per run; a run ends when every "
		    "packet has reached A or a counter; threads: 3 pollers "
		    "on %d CPU%s", (unsigned long long)ops, bench_env.ncpus,
		    bench_env.ncpus == 1 ? "" : "s");
	report_flush();
	return ret;
}
