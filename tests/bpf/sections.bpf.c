// SPDX-License-Identifier: BSD-2-Clause
/*
 * The section names an XDP program can have, and programs of other types
 * beside them (as xdp-bench has): the tracepoint and the tc program are
 * skipped, and the hash map only the tracepoint uses is left out. Each XDP
 * program returns its own verdict, so a test can tell them apart.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} exceptions SEC(".maps");

SEC("xdp")
int sec_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp.frags")
int sec_frags(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp/devmap")
int sec_devmap(struct xdp_md *ctx)
{
	return XDP_TX;
}

SEC("xdp/cpumap")
int sec_cpumap(struct xdp_md *ctx)
{
	return XDP_ABORTED;
}

/* An old-style name: libbpf does not know its type, uxdp makes it XDP. */
SEC("xdp_prog")
int sec_old(struct xdp_md *ctx)
{
	return XDP_REDIRECT;
}

SEC("tp/xdp/xdp_exception")
int sec_tp(void *ctx)
{
	__u32 k = 0;
	__u64 one = 1;

	bpf_map_update_elem(&exceptions, &k, &one, BPF_ANY);
	return 0;
}

SEC("tc")
int sec_tc(void *ctx)
{
	return 0;
}

LICENSE;
