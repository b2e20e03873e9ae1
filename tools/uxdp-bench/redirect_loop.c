/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The redirect loop (see redirect_loop.h): on one CPU,
 *
 *	src (null device) poll -> program: uxdp_redirect_map(map, 0)
 *	  -> per-thread bulk queue of the target -> xdp_xmit on dst
 *	     (one call per @bulk frames, and one at the end of each poll)
 *	  -> dst (null device): counts under its TX lock, completes: the
 *	     frames go back to src's pool
 *
 * The seed's setup (xdp_redirect_map between two NICs) has one indirect
 * call per xmit; ours has two (the target's xmit, then the driver op), and
 * the program call and driver poll per packet or per poll, as the
 * kernel's. Everything here is plain C, so building it with
 * -mindirect-branch=thunk turns every one of those calls into a retpoline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "redirect_loop.h"

#define SRC_FRAMES	512
#define BUDGET		64

static uint32_t prog_redirect(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return uxdp_redirect_map(priv, 0, UXDP_DROP);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t sent(struct uxdp_dev *dst, uint64_t *calls)
{
	struct uxdp_txq_stats st;

	uxdp_dev_txq_stats(dst, 0, &st);
	*calls = st.xmit_calls;
	return st.packets;
}

int redirect_loop_run(uint32_t bulk, uint64_t packets,
		      struct redirect_result *res)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, so, .rx_frames = SRC_FRAMES);
	UXDP_DECLARE_OPTS(uxdp_null_opts, sink, .flags = UXDP_NULL_F_NO_RX);
	struct uxdp_dev *src = NULL, *dst = NULL;
	struct uxdp_map *map = NULL;
	struct uxdp_prog *prog = NULL;
	uint64_t p0, p1, c0, c1, t0, t1, warm = packets / 10 + 1000;
	char ns[16], nd[16];
	int err = -EINVAL;

	snprintf(ns, sizeof(ns), "rsrc%d", getpid() % 100000);
	snprintf(nd, sizeof(nd), "rdst%d", getpid() % 100000);
	src = uxdp_null_create(ns, &so);
	dst = uxdp_null_create(nd, &sink);
	map = uxdp_map_create(1);
	if (!src || !dst || !map)
		goto out;
	prog = uxdp_prog_create("redirect", prog_redirect, map);
	if (!prog)
		goto out;
	uxdp_map_update(map, 0, uxdp_dev_target(dst));
	uxdp_dev_set_bulk(dst, bulk);
	if (uxdp_dev_attach_prog(src, UXDP_ALL_QUEUES, prog) ||
	    uxdp_dev_up(src) || uxdp_dev_up(dst))
		goto out;

	/* Warm-up: caches, branch predictors, the pool's free list. */
	p0 = sent(dst, &c0);
	while (sent(dst, &c1) - p0 < warm)
		uxdp_dev_poll(src, 0, BUDGET);

	p0 = sent(dst, &c0);
	t0 = now_ns();
	do {
		uxdp_dev_poll(src, 0, BUDGET);
	} while (sent(dst, &c1) - p0 < packets);
	t1 = now_ns();
	p1 = sent(dst, &c1);
	res->packets = p1 - p0;
	res->ns_per_pkt = (double)(t1 - t0) / (double)res->packets;
	res->calls_per_pkt = (double)(c1 - c0) / (double)res->packets;
	err = 0;
out:
	if (err && !uxdp_errmsg()[0])
		fprintf(stderr, "redirect loop: set-up failed\n");
	uxdp_dev_destroy(src);
	uxdp_dev_destroy(dst);
	uxdp_map_destroy(map);
	uxdp_prog_put(prog);
	return err;
}
