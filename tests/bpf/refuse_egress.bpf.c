// SPDX-License-Identifier: BSD-2-Clause
/*
 * Refused: xdp_md.egress_ifindex read by a program that is not a devmap
 * program (the kernel's verifier refuses it: "invalid bpf_context access").
 */
#include "corpus.h"

SEC("xdp")
int refuse_egress(struct xdp_md *ctx)
{
	return ctx->egress_ifindex ? XDP_DROP : XDP_PASS;
}

LICENSE;
