// SPDX-License-Identifier: BSD-2-Clause
/*
 * uxdp-bench bpf: return XDP_TX at once, the dev path's floor for
 * programs that transmit (as drop.bpf.c and pass.bpf.c are for theirs).
 */
#include "corpus.h"

SEC("xdp")
int xdp_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

LICENSE;
