// SPDX-License-Identifier: BSD-2-Clause
/* Count UDP/IPv4 packets per destination port in a HASH (inserted with
 * BPF_NOEXIST on the first packet, added to after), and every IPv4
 * packet per protocol in a PERCPU_HASH; drop a port's packets after its
 * third; a packet to port 7 deletes port 9's count. */
#include "corpus.h"


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u16);
	__type(value, __u64);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} protos SEC(".maps");

SEC("xdp")
int xdp_hash_ports(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u64 one = 1, *v;
	__u32 proto;
	__u16 port;

	if ((void *)(ip + 1) > data_end ||
	    eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	proto = ip->protocol;
	v = bpf_map_lookup_elem(&protos, &proto);
	if (v)
		*v += 1;
	else
		bpf_map_update_elem(&protos, &proto, &one, BPF_ANY);
	if (ip->protocol != IPPROTO_UDP || ip->ihl != 5 ||
	    (void *)(udp + 1) > data_end)
		return XDP_PASS;
	port = __builtin_bswap16(udp->dest);
	if (port == 7) {
		__u16 nine = 9;

		bpf_map_delete_elem(&ports, &nine);
		return XDP_PASS;
	}
	v = bpf_map_lookup_elem(&ports, &port);
	if (!v) {
		/* A full map refuses the key: still passed. */
		bpf_map_update_elem(&ports, &port, &one, BPF_NOEXIST);
		return XDP_PASS;
	}
	return __sync_add_and_fetch(v, 1) > 3 ? XDP_DROP : XDP_PASS;
}

LICENSE;
