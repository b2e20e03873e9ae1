// SPDX-License-Identifier: BSD-2-Clause
/* BPF-to-BPF calls: two levels of noinline subprograms, one taking the
 * context. The verdict: XDP_TX for packets of at least 60 bytes whose
 * first byte is odd, XDP_PASS for other long ones, XDP_DROP for short. */
#include "corpus.h"

static __attribute__((noinline)) int pkt_len(struct xdp_md *ctx)
{
	return ctx->data_end - ctx->data;
}

static __attribute__((noinline)) int odd(__u32 v)
{
	return v & 1;
}

static __attribute__((noinline)) int classify(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;

	if (pkt_len(ctx) < 60 || data + 1 > data_end)
		return XDP_DROP;
	return odd(data[0]) ? XDP_TX : XDP_PASS;
}

SEC("xdp")
int xdp_calls(struct xdp_md *ctx)
{
	return classify(ctx);
}

LICENSE;
