// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a hash map (part 2 of issue 14). */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} flows SEC(".maps");

SEC("xdp")
int refuse_hash(struct xdp_md *ctx)
{
	__u32 k = ctx->rx_queue_index;

	return bpf_map_lookup_elem(&flows, &k) ? XDP_DROP : XDP_PASS;
}

LICENSE;
