// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a queue map (not in uxdp yet). */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 16);
	__uint(key_size, 0);
	__uint(value_size, sizeof(__u32));
} flows SEC(".maps");

SEC("xdp")
int refuse_queue(struct xdp_md *ctx)
{
	__u32 v = ctx->rx_queue_index;

	return bpf_map_push_elem(&flows, &v, 0) ? XDP_DROP : XDP_PASS;
}

LICENSE;
