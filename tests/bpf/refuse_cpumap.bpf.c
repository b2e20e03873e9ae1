// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a cpumap (not in uxdp yet). */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpus SEC(".maps");

SEC("xdp")
int refuse_cpumap(struct xdp_md *ctx)
{
	return bpf_redirect_map(&cpus, ctx->rx_queue_index, XDP_PASS);
}

LICENSE;
