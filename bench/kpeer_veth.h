/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel peer of the veth XDP_TX loop: the same single-CPU loop that
 * uxdp runs in-process (generator -> veth A xmit -> B XDP_TX -> A drop),
 * run by the real kernel on a veth pair in a private network namespace.
 * See the comment at the top of kpeer_veth.c for what is measured.
 *
 * Needs root (CAP_NET_ADMIN + CAP_BPF/CAP_SYS_ADMIN), native XDP on veth
 * and BPF_F_TEST_XDP_LIVE_FRAMES (Linux 5.18+), libbpf, and the BPF
 * object built from bench/bpf/veth_loop.bpf.c:
 *
 *	clang -O2 -g -target bpf -c bench/bpf/veth_loop.bpf.c -o veth_loop.bpf.o
 *
 * kpeer_veth.c is plain C and links with -lbpf.
 */
#ifndef UXDP_BENCH_KPEER_VETH_H
#define UXDP_BENCH_KPEER_VETH_H

#include <stdint.h>

/*
 * Defaults for callers: about 5 s in all on the 2-CPU VM this was written
 * on (loop ~4.5 Mpps, one hop ~6.5, generator ~14: 3 x 5 x 2M frames).
 */
#define KPEER_VETH_FRAMES	2000000ULL
#define KPEER_VETH_RUNS		5
#define KPEER_VETH_MAX_RUNS	100

struct kpeer_veth_result {
	/* Full loop: frames counted by vA per second of test_run wall time. */
	double mpps_loop_median, mpps_loop_min, mpps_loop_max;
	/* Generator alone (its program returns XDP_DROP): injection ceiling. */
	double mpps_gen_only_median;
	uint64_t frames;	/* frames generated in the loop runs */
	uint64_t looped;	/* of those, counted by vA (full loop done) */
	int runs;		/* measured runs of each variant */
	char note[256];		/* one line: why it failed, or a summary */

	/* ---- extras (beyond the minimum; zero when not measured) ---- */
	double mpps_gen_only_min, mpps_gen_only_max;
	/* One hop: generator -> vA xmit -> vB's program drops. */
	double mpps_hop_median, mpps_hop_min, mpps_hop_max;
	/*
	 * veth's own counters (ethtool -S) over the loop runs, UINT64_MAX if
	 * they could not be read: vB's XDP_TX frames that entered vA's ring,
	 * vB's XDP_TX frames vA's ring refused, generator frames vB's ring
	 * refused (vA's tx_queue xdp_xmit_errors).
	 */
	uint64_t b_xdp_tx, b_xdp_tx_errors, a_xmit_errors;
	/*
	 * Involuntary context switches of the calling thread inside the
	 * measured test runs: other tasks on CPU 0 took time that the wall
	 * clock counted. 0 means the runs had the CPU to themselves.
	 */
	uint64_t preemptions;
	int cpu;		/* the CPU everything ran on (0) */
	int batch_size;		/* test_run batch_size (frames per flush) */
};

/*
 * Build the namespace, veth pair and programs, measure @runs runs of
 * @frames_per_run frames of each variant (generator only, one hop, full
 * loop; interleaved), tear everything down, and fill *@res.
 *
 * The calling thread is pinned to CPU 0 and moved into a fresh, unnamed
 * network namespace for the duration; its affinity and namespace are
 * restored before returning. If SIGINT or SIGTERM arrives (and had the
 * default action), the run stops, everything is cleaned up, and the
 * signal is raised again with its default action.
 *
 * Returns 0, or a negative errno with res->note saying why in one line
 * ("not root", "no native XDP on veth", "BPF_F_TEST_XDP_LIVE_FRAMES
 * unsupported", ...). Nothing is left behind in either case.
 */
int kpeer_veth_run(const char *bpf_obj_path, uint64_t frames_per_run,
		   int runs, struct kpeer_veth_result *res);

#endif /* UXDP_BENCH_KPEER_VETH_H */
