/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: DPDK's librte_bpf as a peer (for comparison only). It
 * has no XDP context, no maps and no JMP32: the bench hands it the
 * object's linked instructions (-mcpu=v1) with the context loads
 * rewritten for a context of u64 fields (data, data_end, ...) that the
 * bench fills, array maps as plain memory, and bpf_map_lookup_elem as an
 * external function. dpdk_bpf.c says which programs that covers.
 */
#ifndef UXDP_BENCH_DPDK_BPF_H
#define UXDP_BENCH_DPDK_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dpdk_bpf;

/*
 * Prepare program @func of the object at @path (a -mcpu=v1 build) to run
 * on @len bytes at @pkt. Returns 0, 1 when DPDK cannot run it (not built,
 * an instruction or helper rte_bpf lacks, its validator's refusal: @why
 * says), or -errno.
 */
int dpdk_bpf_prepare(const char *path, const char *func,
		     const unsigned char *pkt, uint32_t len,
		     struct dpdk_bpf **out, char *why, size_t whylen);

/* Whether rte_bpf_get_jit() gave machine code for it. */
bool dpdk_bpf_has_jit(const struct dpdk_bpf *b);

/*
 * @n runs, rte_bpf_exec() or the JIT's function, on the prepared packet:
 * *@ticks the TSC ticks of the loop, *@bad the runs whose verdict was not
 * @want. Returns 0 or -errno (dpdk_bpf_why() says why).
 */
int dpdk_bpf_loop(struct dpdk_bpf *b, bool jit, uint64_t n, uint32_t want,
		  uint64_t *ticks, uint64_t *bad);

const char *dpdk_bpf_why(const struct dpdk_bpf *b);
void dpdk_bpf_free(struct dpdk_bpf *b);

#endif /* UXDP_BENCH_DPDK_BPF_H */
