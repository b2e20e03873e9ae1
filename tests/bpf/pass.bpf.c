// SPDX-License-Identifier: BSD-2-Clause
/* Every packet passed. */
#include "corpus.h"

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

LICENSE;
