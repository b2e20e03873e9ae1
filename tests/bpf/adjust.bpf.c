// SPDX-License-Identifier: BSD-2-Clause
/*
 * The packet helpers: 4 bytes of metadata (0xfeedf00d), 2 bytes pushed at
 * the front (0xaa 0xbb), 3 bytes cut at the end; XDP_PASS. The results of
 * calls the kernel refuses go in an array map: 0 a head move past the
 * end, 1 a tail grown past the frame, 2 metadata not a multiple of 4.
 */
#include "corpus.h"

RESULTS(errs, 3)

SEC("xdp")
int xdp_adjust(struct xdp_md *ctx)
{
	unsigned char *data, *data_end;
	__u32 *meta;

	put_errs(0, bpf_xdp_adjust_head(ctx, 4096));
	put_errs(1, bpf_xdp_adjust_tail(ctx, 4096));
	put_errs(2, bpf_xdp_adjust_meta(ctx, -3));
	if (bpf_xdp_adjust_meta(ctx, -4))
		return XDP_ABORTED;
	meta = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(meta + 1) > (void *)data)
		return XDP_ABORTED;
	*meta = 0xfeedf00d;
	if (bpf_xdp_adjust_head(ctx, -2))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + 2 > data_end)
		return XDP_ABORTED;
	data[0] = 0xaa;
	data[1] = 0xbb;
	if (bpf_xdp_adjust_tail(ctx, -3))
		return XDP_ABORTED;
	return XDP_PASS;
}

LICENSE;
