// SPDX-License-Identifier: BSD-2-Clause
/*
 * uxdp-bench bpf: parse Ethernet/IPv4/UDP and pick the AF_XDP socket of
 * the receiving queue (an XSKMAP slot by rx_queue_index), as AF_XDP
 * steering programs do; anything else goes to the stack. uxdp refuses
 * XSKMAP and bpf_redirect_map until part 2 of issue 14: until then only
 * the kernel runs it, and the bench says so.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int xdp_xsk_pick(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;

	if ((void *)(eth + 1) > data_end ||
	    eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

LICENSE;
