/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The redirect loop measured by `uxdp-bench redirect`, kept apart so it can
 * be built twice: normally and with indirect-branch thunks (retpolines), as
 * the seed measured (tools/uxdp-bench/redirect_child.c runs it).
 */
#ifndef UXDP_BENCH_REDIRECT_LOOP_H
#define UXDP_BENCH_REDIRECT_LOOP_H

#include <stdint.h>

struct redirect_result {
	double ns_per_pkt;	/* wall time (CLOCK_MONOTONIC) per packet */
	double calls_per_pkt;	/* xdp_xmit calls on the target per packet */
	uint64_t packets;
};

/*
 * A null device generating 64-byte packets, whose program redirects every
 * one through a device map to a second null device (a sink: TX completes at
 * once), whose bulk size is @bulk (16: one xdp_xmit per 16 frames; 1: one
 * per frame). Measures @packets packets after a warm-up. Returns 0 or
 * -errno (uxdp_errmsg() says why).
 */
int redirect_loop_run(uint32_t bulk, uint64_t packets,
		      struct redirect_result *res);

#endif /* UXDP_BENCH_REDIRECT_LOOP_H */
