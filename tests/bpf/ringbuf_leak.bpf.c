// SPDX-License-Identifier: BSD-2-Clause
/*
 * A reservation left neither submitted nor discarded when the packet is
 * shorter than 60 bytes (the kernel's verifier refuses it: a reference
 * leak). uxdp loads it and discards what a run left at its end, so the
 * ring goes on: test_bpf_ringbuf reads the records of the long packets
 * after the short ones.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

SEC("xdp")
int ringbuf_leak(struct xdp_md *ctx)
{
	__u32 len = (__u32)(ctx->data_end - ctx->data);
	__u32 *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return XDP_DROP;
	*r = len;
	if (len < 60)
		return XDP_PASS;	/* left */
	bpf_ringbuf_submit(r, 0);
	return XDP_PASS;
}

LICENSE;
