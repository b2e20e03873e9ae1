// SPDX-License-Identifier: BSD-2-Clause
/* Refused: an LRU hash map (not in uxdp yet). */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} flows SEC(".maps");

SEC("xdp")
int refuse_lru(struct xdp_md *ctx)
{
	__u32 k = ctx->rx_queue_index;

	return bpf_map_lookup_elem(&flows, &k) ? XDP_DROP : XDP_PASS;
}

LICENSE;
