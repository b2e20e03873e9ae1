// SPDX-License-Identifier: BSD-2-Clause
/* Every packet dropped. */
#include "corpus.h"

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

LICENSE;
