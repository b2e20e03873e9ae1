// SPDX-License-Identifier: BSD-2-Clause
/* Refused: an LPM trie (not in uxdp yet). */
#include "corpus.h"

struct lpm_key {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_key);
	__type(value, __u64);
} flows SEC(".maps");

SEC("xdp")
int refuse_lpm(struct xdp_md *ctx)
{
	struct lpm_key k = { 32, ctx->rx_queue_index };

	return bpf_map_lookup_elem(&flows, &k) ? XDP_DROP : XDP_PASS;
}

LICENSE;
