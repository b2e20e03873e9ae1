// SPDX-License-Identifier: BSD-2-Clause
/* bpf_printk (bpf_trace_printk, 3 arguments at most) with an integer, a
 * hex byte of the packet and a string from .rodata; and one format the
 * kernel refuses (%n), whose result is the verdict's complement. */
#include "corpus.h"

SEC("xdp")
int xdp_printk(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	long bad;

	if (data + 1 > data_end)
		return XDP_ABORTED;
	bpf_printk("len %d first %02x %s", (int)(data_end - data), data[0],
		   "ok");
	bad = bpf_printk("bad %n", 1);
	return bad < 0 ? XDP_PASS : XDP_DROP;
}

LICENSE;
