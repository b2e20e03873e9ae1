// SPDX-License-Identifier: BSD-2-Clause
/*
 * For test_bpf_kernel, which runs it with the ifindex and queues of a
 * device of its own in the context: what a run saw, kept in an array (0
 * ingress_ifindex, 1 rx_queue_index, 2 the first 4 bytes of metadata, 0
 * without, 3 the packet's length), and a verdict from the queue (0 and 2
 * pass, 1 drop, 3 tx) so that every packet's comparison covers it.
 */
#include "corpus.h"

RESULTS(seen, 4)

SEC("xdp")
int kdiff_ctx(struct xdp_md *ctx)
{
	__u32 *meta = (void *)(long)ctx->data_meta;
	void *data = (void *)(long)ctx->data;
	__u32 q = ctx->rx_queue_index;

	put_seen(0, ctx->ingress_ifindex);
	put_seen(1, q);
	put_seen(2, (void *)(meta + 1) <= data ? *meta : 0);
	put_seen(3, ctx->data_end - ctx->data);
	if (q == 3)
		return XDP_TX;
	return q & 1 ? XDP_DROP : XDP_PASS;
}

LICENSE;
