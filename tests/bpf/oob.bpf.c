// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the kernel's verifier would refuse and uxdp checks at run time
 * instead: a packet byte at an index read from the packet (never compared
 * with data_end), and a loop that does not end (the budget ends it). A
 * run that goes outside or spins ends as XDP_ABORTED, counted.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} spins SEC(".maps");

SEC("xdp")
int oob_read(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;

	if (data + 1 > data_end)
		return XDP_PASS;
	return data[data[0]] ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int forever(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&spins, &k);

	if (!v)
		return XDP_PASS;
	for (;;) {
		__sync_fetch_and_add(v, 1);
		if (*(volatile __u64 *)v == 0)
			break;
	}
	return XDP_DROP;
}

LICENSE;
