// SPDX-License-Identifier: BSD-2-Clause
/*
 * CO-RE: the context read through flavours of struct xdp_md with
 * preserve_access_index, as objects built against vmlinux.h read it: one
 * with the UAPI layout but fields in another order, one with 64-bit fields
 * (as bpftime's uXDP builds objects). Both must read the kernel's xdp_md.
 * The verdict: XDP_DROP on a queue other than 0, else XDP_PASS for a
 * 64-byte packet and XDP_TX for any other length; XDP_ABORTED if the two
 * flavours disagree.
 */
#include "corpus.h"
#include <bpf/bpf_core_read.h>

struct xdp_md___shuffled {
	__u32 rx_queue_index;
	__u32 data_end;
	__u32 data;
} __attribute__((preserve_access_index));

struct xdp_md___wide {
	__u64 data;
	__u64 data_end;
	__u64 data_meta;
} __attribute__((preserve_access_index));

SEC("xdp")
int xdp_core(struct xdp_md *ctx)
{
	struct xdp_md___shuffled *s = (void *)ctx;
	struct xdp_md___wide *w = (void *)ctx;
	__u32 len = s->data_end - s->data;
	__u32 wlen = (__u32)(w->data_end - w->data);

	if (len != wlen)
		return XDP_ABORTED;
	if (!bpf_core_field_exists(s->rx_queue_index))
		return XDP_ABORTED;
	if (s->rx_queue_index)
		return XDP_DROP;
	return len == 64 ? XDP_PASS : XDP_TX;
}

LICENSE;
