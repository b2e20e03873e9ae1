// SPDX-License-Identifier: BSD-2-Clause
/* A bounded loop (not unrolled): the sum of the packet's first 64 bytes,
 * or of all of it when shorter, kept in an array map; passed. */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sum SEC(".maps");

SEC("xdp")
int xdp_loop(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	__u64 s = 0, *v;
	__u32 k = 0;
	int i;

#pragma clang loop unroll(disable)
	for (i = 0; i < 64; i++) {
		if (data + i + 1 > data_end)
			break;
		s += data[i];
	}
	v = bpf_map_lookup_elem(&sum, &k);
	if (v)
		*v = s;
	return XDP_PASS;
}

LICENSE;
