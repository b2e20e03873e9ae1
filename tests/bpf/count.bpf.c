// SPDX-License-Identifier: BSD-2-Clause
/* Count packets and bytes in an array map (slot 0: packets, 1: bytes),
 * and each thread's packets in a per-CPU array; pass them on. */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} per_cpu SEC(".maps");

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 k = 0;
	__u64 *v;

	v = bpf_map_lookup_elem(&counters, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	k = 1;
	v = bpf_map_lookup_elem(&counters, &k);
	if (v)
		__sync_fetch_and_add(v, data_end - data);
	k = 0;
	v = bpf_map_lookup_elem(&per_cpu, &k);
	if (v)
		*v += 1;
	return XDP_PASS;
}

LICENSE;
