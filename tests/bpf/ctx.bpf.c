// SPDX-License-Identifier: BSD-2-Clause
/*
 * The context as struct xdp_md presents it, kept in an array map: 0
 * ingress_ifindex, 1 rx_queue_index, 2 egress_ifindex, 3 the packet's
 * length, 4 the first 4 bytes of metadata (0 without 4 of them); passed.
 */
#include "corpus.h"

RESULTS(fields, 5)

SEC("xdp")
int xdp_ctx(struct xdp_md *ctx)
{
	__u32 *meta = (void *)(long)ctx->data_meta;
	void *data = (void *)(long)ctx->data;

	put_fields(0, ctx->ingress_ifindex);
	put_fields(1, ctx->rx_queue_index);
	put_fields(2, ctx->egress_ifindex);
	put_fields(3, ctx->data_end - ctx->data);
	put_fields(4, (void *)(meta + 1) <= data ? *meta : 0);
	return XDP_PASS;
}

LICENSE;
