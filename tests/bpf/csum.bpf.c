// SPDX-License-Identifier: BSD-2-Clause
/* bpf_csum_diff on the packet's own bytes, in the ways programs call it:
 * a diff of two words, pushing and pulling data with a seed, buffers at
 * odd addresses, no data at all, and a size the kernel refuses (not a
 * multiple of 4). Each result goes into the packet at 64 + 8 * i, so the
 * kernel differential compares them byte for byte. */
#include "corpus.h"

#define OUT	64

SEC("xdp")
int xdp_csum(struct xdp_md *ctx)
{
	__u8 *p = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u32 seed;
	__s64 r;

	if (p + OUT + 6 * 8 > end)
		return XDP_PASS;
	__builtin_memcpy(&seed, p, 4);
	r = bpf_csum_diff((void *)(p + 4), 4, (void *)(p + 8), 4, 0);
	__builtin_memcpy(p + OUT, &r, 8);
	r = bpf_csum_diff(NULL, 0, (void *)(p + 12), 20, seed);
	__builtin_memcpy(p + OUT + 8, &r, 8);
	r = bpf_csum_diff((void *)(p + 13), 8, NULL, 0, seed);
	__builtin_memcpy(p + OUT + 16, &r, 8);
	r = bpf_csum_diff((void *)(p + 5), 12, (void *)(p + 21), 16, seed);
	__builtin_memcpy(p + OUT + 24, &r, 8);
	r = bpf_csum_diff(NULL, 0, NULL, 0, seed);
	__builtin_memcpy(p + OUT + 32, &r, 8);
	r = bpf_csum_diff((void *)(p + 4), 6, NULL, 0, 0);
	__builtin_memcpy(p + OUT + 40, &r, 8);
	return XDP_TX;
}

LICENSE;
