/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench xsk: the seed's experiment (002: xdpsock rxdrop on ice in
 * zero-copy, refill with xsk_buff_alloc_batch against one xsk_buff_alloc
 * per buffer, aligned and unaligned UMEM) end to end in this process: a
 * nic (include/uxdp/nic.h) whose generator feeds the wire, a program that
 * redirects every packet to the queue's AF_XDP socket, and xdpsock's
 * application loops (tools/uxdp-xsk/xsk_app.c, built in as it is).
 *
 * Two arrangements of the threads:
 *
 *   split  xdpsock's: the queue's poller (the "NAPI") on CPU a, the
 *          application (xsk_app_run) on CPU b. Throughput is that of the
 *          slower side; the poller's productive polls are timed.
 *   1-core run to completion: one thread polls the queue, then runs one
 *          rxdrop step of the application (the poll's budget is the
 *          application's batch: one bulk size), and again; every cycle of a
 *          packet's life is on that core, timed per phase. With 2 queues
 *          there is one such thread per queue, each on its own CPU: the
 *          closest to "a poller and an application per queue" two CPUs
 *          allow without time-sharing spinning threads.
 *
 * Mpps = packets the application consumed (took off its RX ring; txonly:
 * completions) / wall time of the run. Every run ends with the accounting
 * checked at a quiescent point: generated = consumed + every counted drop
 * (the nic's, the socket's, the queue's verdicts), forwarded = sent by the
 * nic, and every UMEM chunk in exactly one place (xsk_app_audit for the
 * sockets' UMEMs, uxdp_dev_audit for the nic's own); a run that fails
 * either is a failed variant.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uxdp/nic.h>
#include <uxdp/uxdp.h>
#include <uxdp/xsk.h>

#include "bench.h"
#include "instr.h"
#include "plot.h"
#include "report.h"
#include "xsk_app.h"

#define XSK_FRAMES	4096
#define XSK_FRAME_SIZE	2048
#define XSK_BUDGET	64
#define XSK_BATCH	64
#define XSK_MAX_Q	2
/* No progress for this long: the run is stuck, a failure. */
#define XSK_STALL_NS	3000000000ULL

/* Metrics of one run. */
enum {
	/* Split: packets / wall. 1-core: the sum over queues of packets /
	 * the polling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so what
	 * the scheduler gave another process is not counted. */
	M_MPPS,
	M_CYC,		/* ticks per packet on the CPUs used (see below) */
	M_POLL,		/* of them, in uxdp_dev_poll */
	M_APP,		/* of them, in the application's step (1-core) */
	M_WALL,		/* packets / wall time, Mpps */
	M_LOST,		/* % of generated packets not consumed */
	M_N,
};

struct xsk_case {
	char label[96];
	const char *name;	/* row name */
	enum xsk_app_mode mode;
	bool zc, unaligned, single, rtc;
	uint32_t queues;
	uint32_t threshold;	/* nic refill_threshold; 0: default */
	uint32_t batch;		/* application batch */
	/* Counters of the last run, for "where the cycles go". */
	struct uxdp_nic_stats nst;
	struct uxdp_xsk_stats xst;
	uint64_t consumed, app_empty;
};

/* One queue's socket and its application, and its 1-core thread. */
struct xsk_q {
	struct xsk_app app;
	struct xsk_case *c;
	struct uxdp_dev *dev;
	uint32_t q;
	uint64_t target;	/* 1-core: packets to consume */
	uint64_t consumed;	/* 1-core loop's own count */
	uint64_t drained;	/* taken off the RX ring after the run */
	uint64_t poll_ticks, app_ticks, end;
	uint64_t cpu_ns;	/* the 1-core thread's CPU time in its loop */
	const uint32_t *go;
	int err;
};

static const char *mode_name(enum xsk_app_mode m)
{
	return m == XSK_APP_RXDROP ? "rxdrop" :
	       m == XSK_APP_L2FWD ? "l2fwd" : "txonly";
}

/* ---- the 1-core loop ----------------------------------------------------- */

/*
 * One rxdrop step, the shape of xsk_app.c's (peek a batch of the RX ring,
 * reserve as many fill slots, copy the chunk bases, release, submit): the
 * same per-packet work, callable between two polls.
 */
static uint32_t rtc_rxdrop(struct xsk_app *a, uint32_t batch)
{
	uint32_t idx_rx, idx_fq, n, i;

	n = uxdp_ring_cons_peek(a->rx, batch, &idx_rx);
	if (!n)
		return 0;
	/* The fill ring holds every chunk of the UMEM: never short. */
	if (uxdp_ring_prod_reserve(a->fill, n, &idx_fq) != n) {
		uxdp_ring_cons_cancel(a->rx, n);
		return 0;
	}
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(a->fill, idx_fq + i) =
			uxdp_ring_desc(a->rx, idx_rx + i)->addr & a->base_mask;
	/* RX slots first, as xsk_app.c does (see there why). */
	uxdp_ring_cons_release(a->rx, n);
	uxdp_ring_prod_submit(a->fill, n);
	return n;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *rtc_thread(void *arg)
{
	struct xsk_q *x = arg;
	uint64_t last = 0, t_last, stall;
	uint32_t batch = bench_opaque_u32(x->c->batch), k = 0;

	stall = (uint64_t)(XSK_STALL_NS * bench_env.tsc_ghz);
	/* Acquire: pairs with the starter's release; set-up is done. */
	while (!__atomic_load_n(x->go, __ATOMIC_ACQUIRE))
		bench_cpu_relax();
	x->cpu_ns = thread_cpu_ns();
	t_last = bench_tsc_begin();
	while (x->consumed < x->target) {
		uint64_t t0 = bench_tsc_begin(), t1, t2;
		int r = uxdp_dev_poll(x->dev, x->q, (int)batch);

		t1 = bench_tsc_end();
		x->consumed += rtc_rxdrop(&x->app, batch);
		t2 = bench_tsc_end();
		if (r < 0) {
			x->err = r;
			break;
		}
		x->poll_ticks += t1 - t0;
		x->app_ticks += t2 - t1;
		if (++k % 256)
			continue;
		if (x->consumed != last) {
			last = x->consumed;
			t_last = t2;
		} else if (t2 - t_last > stall) {
			x->err = -ETIMEDOUT;
			break;
		}
	}
	x->end = bench_tsc_end();
	x->cpu_ns = thread_cpu_ns() - x->cpu_ns;
	return NULL;
}

/* ---- the split arrangement ----------------------------------------------- */

struct split_app {
	struct xsk_app *a;
	uint32_t stop;
};

static void *app_thread(void *arg)
{
	struct split_app *s = arg;

	xsk_app_run(s->a, &s->stop);
	return NULL;
}

static uint64_t app_progress(const struct xsk_app *a)
{
	/* Relaxed: a counter of the application's thread (xsk_app.h). */
	return a->cfg.mode == XSK_APP_TXONLY ?
	       __atomic_load_n(&a->st.tx_packets, __ATOMIC_RELAXED) :
	       __atomic_load_n(&a->st.rx_packets, __ATOMIC_RELAXED);
}

/*
 * The poller, here; the application on its own thread. Until the
 * application consumed @ops packets (txonly: finished its count).
 */
static int split_run(struct xsk_q *x, uint64_t ops, uint64_t *wall,
		     uint64_t *busy)
{
	struct split_app s = { .a = &x->app };
	struct bench_thread *t;
	uint64_t t0, tl, stall, last = 0, now = 0;
	uint32_t k = 0;
	int err;

	stall = (uint64_t)(XSK_STALL_NS * bench_env.tsc_ghz);
	err = bench_spawn(&t, bench_env.cpu_b, app_thread, &s);
	if (err) {
		bench_why("application thread: %s", strerror(-err));
		return err;
	}
	t0 = tl = bench_tsc_begin();
	for (;;) {
		uint64_t a = bench_tsc_begin(), b;
		int r = uxdp_dev_poll(x->dev, x->q, XSK_BUDGET);

		b = bench_tsc_end();
		if (r > 0)
			*busy += b - a;
		if (r < 0) {
			bench_why("poll: %s", strerror(-r));
			err = r;
			break;
		}
		if (++k % 16)
			continue;
		now = app_progress(&x->app);
		if (x->app.cfg.mode == XSK_APP_TXONLY ? xsk_app_done(&x->app) :
		    now >= ops)
			break;
		if (now != last) {
			last = now;
			tl = b;
		} else if (b - tl > stall) {
			bench_why("stalled: the application consumed %llu of "
				  "%llu packets, nothing for %.0f s",
				  (unsigned long long)now,
				  (unsigned long long)ops, XSK_STALL_NS / 1e9);
			err = -ETIMEDOUT;
			break;
		}
	}
	*wall = bench_tsc_end() - t0;
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	bench_join(t);
	return err;
}

/*
 * After the run, nothing polling but us: the RX ring's leftovers back to
 * the fill ring (consumed, untimed); l2fwd and txonly: poll until every
 * packet is completed and the nic's TX ring is empty (l2fwd: the
 * completions to the fill ring).
 */
static int drain(struct xsk_q *x)
{
	struct xsk_app *a = &x->app;
	uint64_t deadline = bench_tsc_begin() +
			    (uint64_t)(XSK_STALL_NS * bench_env.tsc_ghz);
	uint32_t idx, idx_fq, n, i;
	bool polled = false;

	for (;;) {
		struct uxdp_nic_stats ns;

		while (a->rx && (n = rtc_rxdrop(a, 256)))
			x->drained += n;
		/*
		 * Copy mode completes a packet when the nic took it: what
		 * its TX ring still holds is sent by the polls to come.
		 * tx_pending is what the last poll saw, and the application
		 * may have posted after it (its thread's last kick, under
		 * load: 465 of 625 frames once, "sent by the nic 160"):
		 * only a poll of ours, with nobody else posting, says it.
		 */
		if (a->cfg.mode == XSK_APP_RXDROP ||
		    (polled && !a->outstanding &&
		     !uxdp_nic_stats(x->dev, x->q, &ns) && !ns.tx_pending))
			return 0;
		if (bench_tsc_begin() > deadline) {
			bench_why("drain: %llu forwarded packets never "
				  "completed, or the nic's TX ring never "
				  "emptied", (unsigned long long)a->outstanding);
			return -ETIMEDOUT;
		}
		if (!(a->cfg.bind_flags & UXDP_XSK_F_ZEROCOPY))
			uxdp_xsk_sendto(a->xsk);
		uxdp_dev_poll(x->dev, x->q, XSK_BUDGET);
		polled = true;
		if (a->cfg.mode != XSK_APP_L2FWD)
			continue;
		n = uxdp_ring_cons_peek(a->comp, 256, &idx);
		if (!n)
			continue;
		if (uxdp_ring_prod_reserve(a->fill, n, &idx_fq) != n) {
			uxdp_ring_cons_cancel(a->comp, n);
			continue;
		}
		for (i = 0; i < n; i++)
			*uxdp_ring_addr(a->fill, idx_fq + i) =
				*uxdp_ring_addr(a->comp, idx + i) &
				a->base_mask;
		uxdp_ring_prod_submit(a->fill, n);
		uxdp_ring_cons_release(a->comp, n);
		a->outstanding -= n;
		a->st.tx_packets += n;
	}
}

/* ---- accounting ---------------------------------------------------------- */

static int check_accounting(struct xsk_case *c, struct uxdp_dev *dev,
			    struct xsk_q *qs, uint64_t *consumed,
			    uint64_t *generated)
{
	struct uxdp_nic_stats ns;
	struct uxdp_xsk_stats xs = { 0 };
	struct uxdp_rxq_stats rs = { 0 };
	uint64_t cons = 0, fwd = 0, done = 0, empty = 0, drops;
	uint32_t q;
	int err;

	err = uxdp_nic_stats(dev, UXDP_ALL_QUEUES, &ns);
	if (err) {
		bench_why("nic stats: %s", strerror(-err));
		return err;
	}
	for (q = 0; q < c->queues; q++) {
		struct xsk_app *a = &qs[q].app;
		struct uxdp_xsk_stats s;
		struct uxdp_rxq_stats r;
		struct xsk_app_audit au;
		int bad;

		if (uxdp_xsk_stats(a->xsk, &s) ||
		    uxdp_dev_rxq_stats(dev, q, &r)) {
			bench_why("socket or queue %u stats", q);
			return -EIO;
		}
		xs.rx_dropped += s.rx_dropped;
		xs.rx_ring_full += s.rx_ring_full;
		xs.tx_invalid_descs += s.tx_invalid_descs;
		xs.rx_fill_ring_empty_descs += s.rx_fill_ring_empty_descs;
		rs.drop += r.drop;
		rs.aborted += r.aborted;
		rs.pass_dropped += r.pass_dropped;
		rs.redirect_err += r.redirect_err;
		cons += (c->rtc ? qs[q].consumed : a->st.rx_packets) +
			qs[q].drained;
		fwd += a->st.tx_submitted;
		done += a->st.tx_packets;
		empty += a->st.rx_empty_polls;
		bad = xsk_app_audit(a, &au);
		if (bad) {
			bench_why("audit of queue %u's UMEM: %d misplaced of "
				  "%u chunks", q, bad, au.chunks);
			return -EPROTO;
		}
	}
	err = uxdp_dev_audit(dev, NULL);
	if (err) {
		bench_why("audit of the nic's own pools: %d misplaced", err);
		return -EPROTO;
	}
	c->nst = ns;
	c->xst = xs;
	c->app_empty = empty;
	if (c->mode == XSK_APP_TXONLY) {
		*consumed = done;
		*generated = ns.tx_packets;
		if (done != fwd || ns.tx_packets + ns.tx_oversize != fwd ||
		    xs.tx_invalid_descs) {
			bench_why("accounting: submitted %llu, completed %llu, "
				  "sent by the nic %llu + oversize %llu, "
				  "invalid %llu",
				  (unsigned long long)fwd,
				  (unsigned long long)done,
				  (unsigned long long)ns.tx_packets,
				  (unsigned long long)ns.tx_oversize,
				  (unsigned long long)xs.tx_invalid_descs);
			return -EPROTO;
		}
		c->consumed = done;
		return 0;
	}
	drops = ns.rx_missed + ns.rx_oversize + xs.rx_dropped +
		xs.rx_ring_full + rs.drop + rs.aborted + rs.pass_dropped +
		rs.redirect_err;
	*consumed = cons;
	*generated = ns.gen_packets;
	c->consumed = cons;
	if (ns.gen_packets != cons + drops) {
		bench_why("accounting: generated %llu != consumed %llu + drops "
			  "%llu (missed %llu, oversize %llu, xsk dropped %llu, "
			  "rx ring full %llu, drop %llu, aborted %llu, "
			  "redirect_err %llu)",
			  (unsigned long long)ns.gen_packets,
			  (unsigned long long)cons, (unsigned long long)drops,
			  (unsigned long long)ns.rx_missed,
			  (unsigned long long)ns.rx_oversize,
			  (unsigned long long)xs.rx_dropped,
			  (unsigned long long)xs.rx_ring_full,
			  (unsigned long long)rs.drop,
			  (unsigned long long)rs.aborted,
			  (unsigned long long)rs.redirect_err);
		return -EPROTO;
	}
	if (c->mode == XSK_APP_L2FWD &&
	    (done != fwd || ns.tx_packets + ns.tx_oversize != fwd ||
	     xs.tx_invalid_descs)) {
		bench_why("accounting: forwarded %llu, completed %llu, sent by "
			  "the nic %llu + oversize %llu, invalid %llu",
			  (unsigned long long)fwd, (unsigned long long)done,
			  (unsigned long long)ns.tx_packets,
			  (unsigned long long)ns.tx_oversize,
			  (unsigned long long)xs.tx_invalid_descs);
		return -EPROTO;
	}
	return 0;
}

/* ---- one run ------------------------------------------------------------- */

static unsigned int nic_seq;

/* What a run is done on: the nic, its sockets and their program. */
struct xsk_rig {
	struct xsk_q qs[XSK_MAX_Q];
	struct uxdp_dev *dev;
	struct uxdp_map *map;
	uint32_t nq;		/* sockets made */
};

/*
 * The nic with @c's refill mode, a socket (and its UMEM, faulted in) per
 * queue, the program redirecting to them, the device up. -errno with
 * bench_why() saying why; xsk_rig_down() undoes what was made either way.
 */
static int xsk_rig_up(struct xsk_rig *r, struct xsk_case *c, uint64_t ops,
		      const uint32_t *go)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, no, .queues = c->queues,
			  .refill_threshold = c->threshold,
			  .flags = (c->single ? UXDP_NIC_F_SINGLE_ALLOC : 0) |
				   (c->mode == XSK_APP_TXONLY ?
				    UXDP_NIC_F_NO_GEN : 0));
	struct xsk_app_cfg cfg = {
		.mode = c->mode,
		.batch = c->batch,
		.frames = XSK_FRAMES,
		.frame_size = XSK_FRAME_SIZE,
		.unaligned = c->unaligned,
		.bind_flags = (c->zc ? UXDP_XSK_F_ZEROCOPY : UXDP_XSK_F_COPY) |
			      UXDP_XSK_F_NEED_WAKEUP,
		.tx_len = 64,
		.tx_count = c->mode == XSK_APP_TXONLY ? ops : 0,
		.stop_fd = -1,
	};
	struct uxdp_prog *prog;
	char name[UXDP_IFNAMSIZ];
	uint32_t q;
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "bxsk%u", nic_seq++ % 10000);
	r->dev = uxdp_nic_create(name, &no);
	if (!r->dev) {
		bench_why("nic: %s", uxdp_errmsg());
		return -errno;
	}
	r->map = uxdp_map_create(c->queues);
	if (!r->map) {
		err = -errno;
		bench_why("map: %s", uxdp_errmsg());
		return err;
	}
	for (q = 0; q < c->queues; q++, r->nq++) {
		struct xsk_q *x = &r->qs[q];

		x->c = c;
		x->dev = r->dev;
		x->q = q;
		x->go = go;
		x->target = ops / c->queues;
		err = xsk_app_init(&x->app, &cfg, r->dev, q);
		if (err) {
			bench_why("socket on queue %u: %s", q, uxdp_errmsg());
			return err;
		}
		/* Fault the UMEM in now: a fresh mapping's first touches
		 * (the nic's "DMA") would otherwise be timed. */
		memset(x->app.area, 0, (size_t)XSK_FRAMES * XSK_FRAME_SIZE);
		err = uxdp_map_update(r->map, q, uxdp_xsk_target(x->app.xsk));
		if (err) {
			bench_why("map update: %s", uxdp_errmsg());
			return err;
		}
	}
	prog = uxdp_prog_create("xsk", c->mode == XSK_APP_TXONLY ?
				xsk_app_prog_drop : xsk_app_prog_xsk, r->map);
	if (!prog) {
		err = -errno;
		bench_why("program: %s", uxdp_errmsg());
		return err;
	}
	err = uxdp_dev_attach_prog(r->dev, UXDP_ALL_QUEUES, prog);
	uxdp_prog_put(prog);
	if (!err)
		err = uxdp_dev_up(r->dev);
	if (err)
		bench_why("nic: %s", uxdp_errmsg());
	return err;
}

/* Tear down what xsk_rig_up() made; @err, or the teardown's error. */
static int xsk_rig_down(struct xsk_rig *r, int err)
{
	uint32_t q;
	int e;

	for (q = 0; q < r->nq; q++) {
		e = xsk_app_fini(&r->qs[q].app);
		if (e && !err) {
			bench_why("socket teardown: %s", strerror(-e));
			err = e;
		}
	}
	uxdp_dev_destroy(r->dev);
	uxdp_map_destroy(r->map);
	return err;
}

static int xsk_case_run(void *arg, uint64_t ops, double *out)
{
	struct xsk_case *c = arg;
	struct xsk_rig rig;
	struct xsk_q *qs = rig.qs;
	struct bench_thread *th[XSK_MAX_Q] = { NULL };
	uint64_t wall = 0, busy = 0, consumed = 0, gen = 0, pt = 0, at = 0;
	uint32_t go = 0, q;
	int err, e;

	err = xsk_rig_up(&rig, c, ops, &go);
	if (err)
		goto out;

	if (c->rtc) {
		uint64_t t0, end = 0;

		/* Queue 0 here (CPU a), queue 1 on CPU b. */
		for (q = 1; q < c->queues; q++) {
			err = bench_spawn(&th[q], bench_env.cpu_b, rtc_thread,
					  &qs[q]);
			if (err) {
				bench_why("thread: %s", strerror(-err));
				/* Release: let the ones started finish. */
				for (e = 0; e < (int)q; e++)
					qs[e].target = 0;
				__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
				break;
			}
		}
		t0 = bench_tsc_begin();
		/* Release: the sockets and the nic are set up. */
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		if (!err)
			rtc_thread(&qs[0]);
		for (q = 1; q < c->queues; q++)
			if (th[q])
				bench_join(th[q]);
		if (err)
			goto out;
		for (q = 0; q < c->queues; q++) {
			if (qs[q].err) {
				err = qs[q].err;
				bench_why("queue %u: %s", q, err == -ETIMEDOUT ?
					  "stalled: nothing consumed for 3 s" :
					  strerror(-err));
				goto out;
			}
			if (qs[q].end > end)
				end = qs[q].end;
			pt += qs[q].poll_ticks;
			at += qs[q].app_ticks;
		}
		wall = end - t0;
	} else {
		err = split_run(&qs[0], ops, &wall, &busy);
		if (err)
			goto out;
		pt = busy;
	}
	for (q = 0; q < c->queues && !err; q++)
		err = drain(&qs[q]);
	if (!err)
		err = check_accounting(c, rig.dev, qs, &consumed, &gen);
	if (err)
		goto out;
	{
		/* The drained packets were not timed. */
		uint64_t timed = consumed;
		double mpps = 0, cpu_ns = 0;

		for (q = 0; q < c->queues; q++)
			timed -= qs[q].drained;
		if (!timed || !wall) {
			bench_why("nothing consumed");
			err = -EPROTO;
			goto out;
		}
		out[M_WALL] = (double)timed / bench_ns((double)wall) * 1e3;
		if (c->rtc) {
			for (q = 0; q < c->queues; q++) {
				if (!qs[q].cpu_ns)
					continue;
				mpps += (double)qs[q].consumed /
					(double)qs[q].cpu_ns * 1e3;
				cpu_ns += (double)qs[q].cpu_ns;
			}
			out[M_MPPS] = mpps;
			/* On-CPU ticks, split between the two phases in
			 * the proportion the TSC saw them. */
			out[M_CYC] = cpu_ns * bench_env.tsc_ghz /
				     (double)timed;
			out[M_POLL] = pt + at ? out[M_CYC] * (double)pt /
						(double)(pt + at) : NAN;
			out[M_APP] = pt + at ? out[M_CYC] * (double)at /
					       (double)(pt + at) : NAN;
		} else {
			out[M_MPPS] = out[M_WALL];
			/* Both threads spin the whole run: 2 CPUs. */
			out[M_CYC] = (double)wall * 2 / (double)timed;
			out[M_POLL] = (double)pt / (double)timed;
			out[M_APP] = NAN;
		}
		out[M_LOST] = c->mode == XSK_APP_TXONLY || !gen ? NAN :
			      100.0 * (double)(gen - consumed) / (double)gen;
	}
out:
	return xsk_rig_down(&rig, err);
}

/* ---- --instructions: the child ------------------------------------------ */

static void label(struct xsk_case *c);

/* Polls in a row that consumed nothing: the loop is stuck. */
#define XSK_INSTR_STUCK	1000000U

/*
 * The 1-core loop without its clock: poll, one rxdrop step, until @target
 * packets were consumed; returns how many were (a step takes up to a
 * batch, so a few more). -errno of a failed poll or a stall in x->err.
 */
static inline __attribute__((always_inline)) uint64_t
xsk_instr_steps(struct xsk_q *x, uint64_t target)
{
	uint32_t batch = x->c->batch, idle = 0;
	uint64_t n = 0;

	while (n < target) {
		int r = uxdp_dev_poll(x->dev, x->q, (int)batch);
		uint32_t got = rtc_rxdrop(&x->app, batch);

		if (r < 0) {
			x->err = r;
			break;
		}
		n += got;
		idle = got ? 0 : idle + 1;
		if (idle > XSK_INSTR_STUCK) {
			x->err = -ETIMEDOUT;
			break;
		}
	}
	return n;
}

/*
 * What callgrind collects in passes 1 and 2 (--toggle-collect=
 * bench_instr_xsk_loop*): the whole loop, minus the pool's allocation
 * calls, which match the second pattern (uxdp_pool_alloc*) and so turn
 * collection off while they run.
 */
INSTR_LOOP uint64_t bench_instr_xsk_loop(struct xsk_q *x, uint64_t target);
INSTR_LOOP uint64_t bench_instr_xsk_loop(struct xsk_q *x, uint64_t target)
{
	return xsk_instr_steps(x, target);
}

/* Passes 3 and 4: the same loop under a name that matches nothing, so
 * only the allocation calls are collected. */
static uint64_t xsk_instr_plain_loop(struct xsk_q *x, uint64_t target)
{
	return xsk_instr_steps(x, target);
}

/*
 * uxdp-bench __instr xsk aligned|unaligned batch|single N: the seed's
 * 1-core rxdrop zc, one queue, counted over N then 2N packets, twice
 * (whole loop minus allocation, allocation alone). The parent runs it
 * under callgrind (xsk_instructions).
 */
int xsk_instr_child(int argc, char **argv)
{
	struct xsk_case c;
	struct xsk_rig rig;
	struct xsk_q *x = &rig.qs[0];
	uint64_t n, warm, units[4] = { 0 }, consumed = 0, gen = 0;
	uint32_t go = 1;
	int err;

	n = argc == 3 ? instr_arg_u64(argv[2]) : 0;
	if (!n || (strcmp(argv[0], "aligned") && strcmp(argv[0], "unaligned")) ||
	    (strcmp(argv[1], "batch") && strcmp(argv[1], "single"))) {
		fprintf(stderr, "usage: uxdp-bench " INSTR_CHILD_ARG " xsk "
			"aligned|unaligned batch|single PACKETS\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	c.mode = XSK_APP_RXDROP;
	c.zc = c.rtc = true;
	c.queues = 1;
	c.batch = XSK_BATCH;
	c.unaligned = !strcmp(argv[0], "unaligned");
	c.single = !strcmp(argv[1], "single");
	label(&c);
	err = xsk_rig_up(&rig, &c, 0, &go);
	if (err)
		goto out;
	/* Uncounted: every UMEM chunk goes round the fill ring twice and the
	 * refill settles into its steady rhythm. */
	warm = xsk_instr_plain_loop(x, 2 * XSK_FRAMES);
	if (!x->err) {
		INSTR_START();
		units[0] = bench_instr_xsk_loop(x, n);
		INSTR_DUMP("loop N");
		units[1] = bench_instr_xsk_loop(x, 2 * n);
		INSTR_DUMP("loop 2N");
		units[2] = xsk_instr_plain_loop(x, n);
		INSTR_DUMP("alloc N");
		units[3] = xsk_instr_plain_loop(x, 2 * n);
		INSTR_DUMP("alloc 2N");
		INSTR_STOP();
	}
	if (x->err) {
		err = x->err;
		bench_why("poll: %s", err == -ETIMEDOUT ? "stalled: nothing "
			  "consumed" : strerror(-err));
		goto out;
	}
	x->consumed = warm + units[0] + units[1] + units[2] + units[3];
	err = drain(x);
	if (!err)
		err = check_accounting(&c, rig.dev, rig.qs, &consumed, &gen);
	/* A lost packet's work would be spread over those consumed. */
	if (!err && gen != consumed) {
		bench_why("%llu of %llu packets lost while counting",
			  (unsigned long long)(gen - consumed),
			  (unsigned long long)gen);
		err = -EPROTO;
	}
	if (!err)
		instr_child_units(units, 4);
out:
	err = xsk_rig_down(&rig, err);
	if (err)
		fprintf(stderr, "uxdp-bench " INSTR_CHILD_ARG " %s: %s\n",
			c.label, bench_last_why());
	return err ? 1 : 0;
}

/* ---- --instructions: the parent ----------------------------------------- */

/* Figures of a counted variant. */
enum {
	MI_PKT,		/* instructions per packet, the whole loop */
	MI_ALLOC,	/* of them, in the pool's allocation calls */
	MI_N,
};

struct xsk_instr {
	struct instr_variant iv;	/* first: bench_variant.arg */
	char label[64];
	char n[24];
	bool unaligned, single;
};

static int xsk_instr_figures(const struct instr_variant *iv,
			     const struct instr_counts *c, double *out)
{
	double rest = instr_per_unit(c, 0, 1), alloc = instr_per_unit(c, 2, 3);

	(void)iv;
	if (isnan(rest) || !(rest > 0)) {
		bench_why("nothing counted in bench_instr_xsk_loop (%llu, %llu "
			  "instructions): a stripped binary?",
			  (unsigned long long)c->ir[0],
			  (unsigned long long)c->ir[1]);
		return -EPROTO;
	}
	/*
	 * Nothing in passes 3 and 4: callgrind found no uxdp_pool_alloc* (a
	 * stripped binary, or LTO inlined the calls), so passes 1 and 2
	 * counted the whole loop. The total is right; the split is not
	 * measured, rather than free.
	 */
	out[MI_PKT] = rest + (alloc > 0 ? alloc : 0);
	out[MI_ALLOC] = alloc > 0 ? alloc : NAN;
	return 0;
}

/*
 * The seed's four 1-core variants counted by callgrind: instructions per
 * packet, beside the Mpps. Returns the number of failed variants.
 */
static unsigned int xsk_instructions(const struct bench_opts *o)
{
	static const char *const names[4] = {
		"instr aligned   alloc_batch", "instr aligned   single alloc",
		"instr unaligned alloc_batch", "instr unaligned single alloc",
	};
	struct xsk_instr xi[4];
	struct bench_variant v[4];
	unsigned int i, j, failed;
	struct report_row *row;
	double b, sg, ba, sa;

	if (!instr_ready()) {
		report_warn("xsk", "instructions per packet skipped: %s",
			    instr_status());
		return 0;
	}
	for (i = 0; i < 4; i++) {
		struct xsk_instr *x = &xi[i];

		memset(x, 0, sizeof(*x));
		x->unaligned = i >= 2;
		x->single = i & 1;
		snprintf(x->label, sizeof(x->label), "xsk instructions %s %s",
			 x->unaligned ? "unaligned" : "aligned",
			 x->single ? "single" : "batch");
		snprintf(x->n, sizeof(x->n), "%llu",
			 (unsigned long long)BENCH_XSK_INSTR_OPS);
		x->iv.job = (struct instr_job){
			.group = "xsk",
			.args = { x->unaligned ? "unaligned" : "aligned",
				  x->single ? "single" : "batch", x->n },
			.toggle = { "bench_instr_xsk_loop*",
				    "uxdp_pool_alloc*" },
			.ndumps = 4,
		};
		x->iv.figures = xsk_instr_figures;
		instr_variant_init(&v[i], &x->iv, x->label,
				   BENCH_XSK_INSTR_OPS, MI_N);
	}
	failed = instr_measure(v, 4, o, "xsk");

	report_heading("xsk: instructions per packet (callgrind), the seed's "
		       "experiment, rxdrop zc on one core");
	for (i = 0; i < 4; i++) {
		row = report_add("xsk", names[i], "uxdp",
				 instr_median(&v[i], MI_PKT),
				 instr_min(&v[i], MI_PKT), "instr/pkt");
		report_part(row, "alloc", instr_median(&v[i], MI_ALLOC));
		report_part(row, "spread", instr_spread(&v[i], MI_PKT));
	}
	for (j = 0; j < 2; j++) {
		b = instr_median(&v[2 * j], MI_PKT);
		sg = instr_median(&v[2 * j + 1], MI_PKT);
		ba = instr_median(&v[2 * j], MI_ALLOC);
		sa = instr_median(&v[2 * j + 1], MI_ALLOC);
		row = report_add("xsk", j ? "instr unaligned batch/single" :
				 "instr aligned   batch/single", "uxdp",
				 b / sg, NAN, "x");
		/* Instructions are a cost: the inverse of the seed's
		 * throughput gain is its counterpart. */
		report_seed(row, j ? "Mpps 1.015x (ice) / 1.01x (i40e), "
			    "cost 0.985x / 0.99x" : "Mpps 1.11x (ice) / 1.12x "
			    "(i40e), cost 0.90x / 0.89x");
		report_summarise(row);
		row = report_add("xsk", j ? "instr unaligned single-batch" :
				 "instr aligned   single-batch", "uxdp",
				 sg - b, NAN, "instr/pkt");
		report_part(row, "alloc", sa - ba);
		report_part(row, "rest", (sg - sa) - (b - ba));
		report_seed(row, j ? "1 cyc/pkt" : "9 cyc/pkt");
		report_summarise(row);
	}
	report_note("xsk", "instructions: %s; each variant in a process of "
		    "its own under callgrind (%u each), set-up and %u "
		    "packets of warm-up uncounted, then %llu and %llu packets "
		    "counted: per packet = the difference / %llu, so what a "
		    "pass costs once drops out. Only the 1-core loop is "
		    "counted (poll + rxdrop step, without the clock reads of "
		    "the timed loop): alloc = inside uxdp_pool_alloc and "
		    "uxdp_pool_alloc_batch, rest = the loop without them",
		    instr_status(), v[0].nsamples, 2 * XSK_FRAMES,
		    (unsigned long long)BENCH_XSK_INSTR_OPS,
		    (unsigned long long)(2 * BENCH_XSK_INSTR_OPS),
		    (unsigned long long)BENCH_XSK_INSTR_OPS);
	report_note("xsk", "a count, not a time: load on the other CPU, "
		    "frequency and cache misses do not change it; it is of "
		    "valgrind's virtual CPU (no AVX-512, so glibc's string "
		    "functions are not the ones a native run picks) and of "
		    "this build. spread = largest - smallest over the "
		    "children");
	b = instr_median(&v[0], MI_PKT);
	sg = instr_median(&v[1], MI_PKT);
	report_target("xsk", "aligned alloc_batch/single refill, instr/pkt",
		      b / sg, 1.0, "%.1f vs %.1f instr/pkt; the seed: 9 "
		      "cyc/pkt less", b, sg);
	bench_variants_free(v, 4);
	return failed;
}

/* ---- the command --------------------------------------------------------- */

#define XSK_MAX_CASES	48

static struct xsk_case *add_case(struct xsk_case *cs, unsigned int *n,
				 const char *name, enum xsk_app_mode mode,
				 bool zc, bool rtc)
{
	struct xsk_case *c = &cs[(*n)++];

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->mode = mode;
	c->zc = zc;
	c->rtc = rtc;
	c->queues = 1;
	c->batch = XSK_BATCH;
	return c;
}

static void label(struct xsk_case *c)
{
	char extra[48] = "";

	if (c->threshold)
		snprintf(extra, sizeof(extra), " threshold=%u", c->threshold);
	else if (c->batch != XSK_BATCH)
		snprintf(extra, sizeof(extra), " batch=%u", c->batch);
	snprintf(c->label, sizeof(c->label), "xsk %s %s %s%s %s %s%s",
		 mode_name(c->mode), c->zc ? "zc" : "copy",
		 c->rtc ? "1-core" : "split",
		 c->queues > 1 ? " 2q" : "",
		 c->unaligned ? "unaligned" : "aligned",
		 c->single ? "single" : "batch", extra);
}

static struct bench_variant *find(struct bench_variant *v, unsigned int nv,
				  const struct xsk_case *c)
{
	/* v[i].arg is &cs[i]: the case's index is the variant's. */
	size_t i = c ? (size_t)(c - (const struct xsk_case *)v[0].arg) : nv;

	return i < nv && !v[i].err && v[i].nsamples ? &v[i] : NULL;
}

static double med(struct bench_variant *v, unsigned int nv,
		  const struct xsk_case *c, unsigned int m)
{
	struct bench_variant *x = find(v, nv, c);

	return x ? bench_median(x, m) : NAN;
}

static double paired(struct bench_variant *v, unsigned int nv,
		     const struct xsk_case *a, const struct xsk_case *b,
		     unsigned int m)
{
	struct bench_variant *x = find(v, nv, a), *y = find(v, nv, b);

	return x && y ? bench_paired_ratio(x, y, m) : NAN;
}

static struct report_row *row_of(struct bench_variant *v, unsigned int nv,
				 const struct xsk_case *c, const char *name)
{
	struct bench_variant *x = find(v, nv, c);
	struct report_row *row;

	row = report_add("xsk", name, "uxdp", x ? bench_median(x, M_MPPS) :
			 NAN, x ? bench_min(x, M_MPPS) : NAN, "Mpps");
	report_part(row, "cyc/pkt", med(v, nv, c, M_CYC));
	report_part(row, "poll cyc/pkt", med(v, nv, c, M_POLL));
	if (c->rtc) {
		report_part(row, "app cyc/pkt", med(v, nv, c, M_APP));
		report_part(row, "wall Mpps", med(v, nv, c, M_WALL));
	}
	if (c->mode != XSK_APP_TXONLY)
		report_part(row, "lost %", med(v, nv, c, M_LOST));
	return row;
}

int bench_xsk(const struct bench_opts *o)
{
	static const uint32_t thresholds[] = { 8, 16, 32, 64, 128, 256, 512 };
	static const uint32_t batches[] = { 1, 4, 8, 16, 32, 64, 128 };
	uint64_t ops = o->ops ? o->ops : BENCH_XSK_DEFAULT_OPS;
	struct xsk_case cs[XSK_MAX_CASES];
	struct bench_variant v[XSK_MAX_CASES];
	struct xsk_case *split[6], *ab, *as, *ub, *us, *q2, *ssingle;
	struct xsk_case *sw_thr[2][7] = { { NULL } }, *sw_batch[7] = { NULL };
	unsigned int nv = 0, i, j, failed;
	struct report_row *row;
	double r, sb, ss;
	bool plot = plot_enabled();

	/* xdpsock's layout: the matrix of modes. */
	for (i = 0; i < 6; i++)
		split[i] = add_case(cs, &nv, NULL, (enum xsk_app_mode[]){
					    XSK_APP_RXDROP, XSK_APP_RXDROP,
					    XSK_APP_L2FWD, XSK_APP_L2FWD,
					    XSK_APP_TXONLY, XSK_APP_TXONLY }[i],
				    !(i & 1), false);
	ssingle = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, false);
	ssingle->single = true;
	/* The seed's four, on one core. */
	ab = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, true);
	as = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, true);
	as->single = true;
	ub = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, true);
	ub->unaligned = true;
	us = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, true);
	us->unaligned = us->single = true;
	q2 = add_case(cs, &nv, NULL, XSK_APP_RXDROP, true, true);
	q2->queues = 2;
	if (plot) {
		for (j = 0; j < 2; j++)
			for (i = 0; i < 7; i++) {
				if (thresholds[i] == 256)	/* the default */
					continue;
				sw_thr[j][i] = add_case(cs, &nv, NULL,
							XSK_APP_RXDROP, true,
							true);
				sw_thr[j][i]->threshold = thresholds[i];
				sw_thr[j][i]->single = j;
			}
		for (i = 0; i < 7; i++) {
			if (batches[i] == XSK_BATCH)
				continue;
			sw_batch[i] = add_case(cs, &nv, NULL, XSK_APP_RXDROP,
					       true, true);
			sw_batch[i]->batch = batches[i];
		}
	}
	for (i = 0; i < nv; i++) {
		label(&cs[i]);
		v[i] = (struct bench_variant){
			.label = cs[i].label,
			.run = xsk_case_run,
			.arg = &cs[i],
			/* Split runs are slower, the sweeps' points many:
			 * shorter runs. */
			.ops = i > (unsigned int)(q2 - cs) ? ops / 4 :
			       !cs[i].rtc ? ops / 2 : ops,
			.nmetrics = M_N,
		};
	}

	report_env_num("xsk_ops", (double)ops);
	report_heading("xsk: the seed's rxdrop on the nic model, AF_XDP "
		       "sockets in-process (issue 9)");
	report_note("xsk", "nic: 1 queue (scaling: 2), rx ring %u, refill "
		    "threshold %u, 256 UDP flows of 64 B as fast as polled; "
		    "UMEM %u x %u B, rings 2048, need_wakeup, budget %u, app "
		    "batch %u; %llu packets consumed per 1-core run (split: "
		    "half, sweeps: a quarter)", UXDP_NIC_DEFAULT_RING,
		    UXDP_NIC_DEFAULT_RING / 4, XSK_FRAMES, XSK_FRAME_SIZE,
		    XSK_BUDGET, XSK_BATCH, (unsigned long long)ops);
	report_note("xsk", "split: poller on CPU %d, application thread on "
		    "CPU %d (xdpsock's layout). 1-core: one thread polls, "
		    "then runs one rxdrop step, on CPU %d; 2 queues: one "
		    "such thread per queue, queue 1's on CPU %d (two CPUs "
		    "cannot give each queue a poller and an application "
		    "thread of its own without time-sharing spinning "
		    "threads)", bench_env.cpu_a, bench_env.cpu_b,
		    bench_env.cpu_a, bench_env.cpu_b);
	report_note("xsk", "Mpps = packets the application took off its RX "
		    "ring (txonly: completions) / time: split: wall time; "
		    "1-core: each polling thread's CPU time "
		    "(CLOCK_THREAD_CPUTIME_ID; time the scheduler gave "
		    "another process is not counted; wall Mpps shown too), "
		    "summed over queues; cyc/pkt = ticks on the CPUs used "
		    "per packet (split: wall x 2 CPUs); poll = ticks in "
		    "uxdp_dev_poll (the nic's hardware model + clean + "
		    "program + refill; split: productive polls only), app = "
		    "the rxdrop step; lost = generated but not consumed "
		    "(rx_missed: no posted buffer, rx_ring_full)");
	report_note("xsk", "every run: generated = consumed + counted drops, "
		    "forwarded = sent, and every UMEM chunk in one place "
		    "(xsk_app_audit, uxdp_dev_audit), else the variant fails");

	bench_run(v, nv, o->runs, "xsk", o->quiet);
	failed = bench_check(v, nv, "xsk");

	report_heading("xsk: one queue, split (poller CPU %d, application "
		       "CPU %d)", bench_env.cpu_a, bench_env.cpu_b);
	for (i = 0; i < 6; i++) {
		char name[48];

		snprintf(name, sizeof(name), "%s %s", mode_name(split[i]->mode),
			 split[i]->zc ? "zc" : "copy");
		row = row_of(v, nv, split[i], name);
		if (i == 0)
			report_summarise(row);
	}
	row = row_of(v, nv, ssingle, "rxdrop zc single alloc");
	r = paired(v, nv, split[0], ssingle, M_MPPS);
	row = report_add("xsk", "split rxdrop zc batch/single", "uxdp", r, NAN,
			 "x");
	report_seed(row, "1.11x (ice) / 1.12x (i40e)");

	report_heading("xsk: the seed's experiment, rxdrop zc on one core "
		       "(CPU %d)", bench_env.cpu_a);
	row = row_of(v, nv, ab, "aligned   alloc_batch");
	report_summarise(row);
	row_of(v, nv, as, "aligned   single alloc");
	row_of(v, nv, ub, "unaligned alloc_batch");
	row_of(v, nv, us, "unaligned single alloc");
	for (j = 0; j < 2; j++) {
		struct xsk_case *b = j ? ub : ab, *s = j ? us : as;

		r = paired(v, nv, b, s, M_MPPS);
		row = report_add("xsk", j ? "unaligned batch/single Mpps" :
				 "aligned   batch/single Mpps", "uxdp", r, NAN,
				 "x");
		report_seed(row, j ? "1.015x (ice) / 1.01x (i40e)" :
			    "1.11x (ice) / 1.12x (i40e)");
		report_summarise(row);
		sb = med(v, nv, b, M_CYC);
		ss = med(v, nv, s, M_CYC);
		row = report_add("xsk", j ? "unaligned single-batch cyc/pkt" :
				 "aligned   single-batch cyc/pkt", "uxdp",
				 ss - sb, NAN, "cyc/pkt");
		report_seed(row, j ? "1 cyc/pkt" : "9 cyc/pkt");
		report_part(row, "poll", med(v, nv, s, M_POLL) -
			    med(v, nv, b, M_POLL));
		report_part(row, "refill batch", b->nst.refills ?
			    (double)b->nst.refill_bufs /
			    (double)b->nst.refills : NAN);
	}
	report_note("xsk", "the seed: whole-driver throughput on a 2.1 GHz "
		    "Cascade Lake (ice, i40e, xdpsock rxdrop); here the nic "
		    "model's poll also writes every packet (the 'DMA'), so "
		    "the refill's share of a packet's cycles is smaller");

	report_heading("xsk: scaling, rxdrop zc 1-core per queue");
	row = row_of(v, nv, q2, "2 queues");
	r = paired(v, nv, q2, ab, M_MPPS);
	row = report_add("xsk", "2 queues / 1 queue", "uxdp", r, NAN, "x");
	report_summarise(row);

	/* Where the cycles go: the counters of the last run. */
	if (find(v, nv, ab) && find(v, nv, as)) {
		const struct xsk_case *c[2] = { ab, as };

		for (j = 0; j < 2; j++)
			report_note("xsk", "where the cycles go (%s, last run): "
				    "poll %.1f + app %.1f cyc/pkt of %.1f; "
				    "%llu refills posted %llu buffers (mean "
				    "%.1f) with %llu alloc calls; rx_missed "
				    "%llu, rx_ring_full %llu, fill ring "
				    "empty %llu", v[c[j] - cs].label,
				    med(v, nv, c[j], M_POLL),
				    med(v, nv, c[j], M_APP),
				    med(v, nv, c[j], M_CYC),
				    (unsigned long long)c[j]->nst.refills,
				    (unsigned long long)c[j]->nst.refill_bufs,
				    c[j]->nst.refills ?
				    (double)c[j]->nst.refill_bufs /
				    (double)c[j]->nst.refills : 0.0,
				    (unsigned long long)c[j]->nst.alloc_calls,
				    (unsigned long long)c[j]->nst.rx_missed,
				    (unsigned long long)c[j]->xst.rx_ring_full,
				    (unsigned long long)
				    c[j]->xst.rx_fill_ring_empty_descs);
	}
	if (find(v, nv, split[0]))
		report_note("xsk", "where the cycles go (%s, last run): "
			    "poller busy %.1f cyc/pkt; app empty polls "
			    "%llu; rx_missed %llu, rx_ring_full %llu (lost "
			    "%.1f%% of generated), mean refill %.1f, "
			    "poller %s",
			    split[0]->label, med(v, nv, split[0], M_POLL),
			    (unsigned long long)split[0]->app_empty,
			    (unsigned long long)split[0]->nst.rx_missed,
			    (unsigned long long)split[0]->xst.rx_ring_full,
			    med(v, nv, split[0], M_LOST),
			    split[0]->nst.refills ?
			    (double)split[0]->nst.refill_bufs /
			    (double)split[0]->nst.refills : 0.0,
			    "busy-polls: split Mpps is wall-clock");

	report_target_min("xsk", "zc rxdrop on one core, Mpps",
			  med(v, nv, ab, M_MPPS), 20.0,
			  "%.1f cyc/pkt on CPU %d", med(v, nv, ab, M_CYC),
			  bench_env.cpu_a);
	report_target_min("xsk", "aligned alloc_batch/single refill, Mpps",
			  paired(v, nv, ab, as, M_MPPS), 1.0,
			  "%.2f vs %.2f Mpps (medians); seed 1.11-1.12x",
			  med(v, nv, ab, M_MPPS), med(v, nv, as, M_MPPS));
	report_target_min("xsk", "2 queues / 1 queue, Mpps",
			  paired(v, nv, q2, ab, M_MPPS), 1.8,
			  "%.2f vs %.2f Mpps, one 1-core thread per queue",
			  med(v, nv, q2, M_MPPS), med(v, nv, ab, M_MPPS));

	if (plot) {
		struct plot *p;

		p = plot_get("xsk_refill_batch", "xsk rxdrop zc, 1 core: "
			     "refill threshold", "refill threshold "
			     "(descriptors, ~ refill batch)", "Mpps",
			     PLOT_LOGX | PLOT_YZERO);
		for (j = 0; j < 2; j++)
			for (i = 0; i < 7; i++) {
				struct xsk_case *c = thresholds[i] == 256 ?
					(j ? as : ab) : sw_thr[j][i];

				plot_point(p, j ? "single alloc" :
					   "alloc_batch", thresholds[i],
					   med(v, nv, c, M_MPPS));
			}
		p = plot_get("xsk_app_batch", "xsk rxdrop zc, 1 core: "
			     "bulk (poll budget = application batch)",
			     "packets per poll and per ring operation",
			     "Mpps", PLOT_LOGX | PLOT_YZERO);
		for (i = 0; i < 7; i++)
			plot_point(p, "rxdrop zc aligned", batches[i],
				   med(v, nv, batches[i] == XSK_BATCH ? ab :
				       sw_batch[i], M_MPPS));
		p = plot_get("xsk_queues", "xsk rxdrop zc: queues (one "
			     "1-core thread each)", "queues", "Mpps",
			     PLOT_YZERO);
		plot_xtics(p, "(1, 2)");
		plot_point(p, "measured", 1, med(v, nv, ab, M_MPPS));
		plot_point(p, "measured", 2, med(v, nv, q2, M_MPPS));
		plot_point(p, "linear", 1, med(v, nv, ab, M_MPPS));
		plot_point(p, "linear", 2, 2 * med(v, nv, ab, M_MPPS));
	}
	report_flush();
	bench_variants_free(v, nv);
	if (o->instructions) {
		failed += xsk_instructions(o);
		report_flush();
	}
	return failed ? 1 : 0;
}
