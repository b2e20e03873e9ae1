// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a kfunc (the kernel's XDP metadata hooks). */
#include "corpus.h"

extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx,
					 __u64 *timestamp) __ksym;

SEC("xdp")
int refuse_kfunc(struct xdp_md *ctx)
{
	__u64 ts = 0;

	if (bpf_xdp_metadata_rx_timestamp(ctx, &ts))
		return XDP_PASS;
	return ts ? XDP_DROP : XDP_PASS;
}

LICENSE;
