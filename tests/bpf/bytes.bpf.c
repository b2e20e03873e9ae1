// SPDX-License-Identifier: BSD-2-Clause
/* bpf_xdp_load_bytes and bpf_xdp_store_bytes at offsets the packet picks
 * (in range or past its end), at its last bytes, and past 0xffff; the
 * return values go into the packet at 32, so the kernel differential
 * compares them and the stored bytes. */
#include "corpus.h"

SEC("xdp")
int xdp_bytes(struct xdp_md *ctx)
{
	__u8 *p = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u8 buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	__s64 r[4];
	__u32 len, a, b;

	if (p + 64 > end)
		return XDP_PASS;
	len = end - p;
	a = p[0];
	b = p[1];
	r[0] = bpf_xdp_load_bytes(ctx, a * 4, buf, 8);
	r[1] = bpf_xdp_load_bytes(ctx, len - 4, buf + 4, 4);
	r[2] = bpf_xdp_load_bytes(ctx, 0x10000, buf, 4);
	r[3] = bpf_xdp_store_bytes(ctx, b * 2, buf, 8);
	p = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (p + 64 > end)
		return XDP_PASS;
	__builtin_memcpy(p + 32, r, sizeof(r));
	return XDP_TX;
}

LICENSE;
