// SPDX-License-Identifier: BSD-2-Clause
/* Parse Ethernet, IPv4 and UDP; count UDP packets per destination port.
 * UDP is dropped (counted), anything else passed. */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} port_count SEC(".maps");

SEC("xdp")
int xdp_parse_udp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 port;
	__u64 *v;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XDP_PASS;
	if (ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return XDP_PASS;
	port = bpf_ntohs(udp->dest);
	v = bpf_map_lookup_elem(&port_count, &port);
	if (v)
		__sync_fetch_and_add(v, 1);
	return XDP_DROP;
}

LICENSE;
