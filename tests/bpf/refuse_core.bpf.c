// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a CO-RE read of an xdp_md field the kernel's UAPI lacks. */
#include "corpus.h"

struct xdp_md___future {
	__u32 data;
	__u32 rx_hash;
} __attribute__((preserve_access_index));

SEC("xdp")
int refuse_core(struct xdp_md *ctx)
{
	struct xdp_md___future *f = (void *)ctx;

	return f->rx_hash ? XDP_DROP : XDP_PASS;
}

LICENSE;
