// SPDX-License-Identifier: BSD-2-Clause
/* Refused: bpf_redirect, a helper of part 2 of issue 14. */
#include "corpus.h"

SEC("xdp")
int refuse_redirect(struct xdp_md *ctx)
{
	return bpf_redirect(ctx->ingress_ifindex, 0);
}

LICENSE;
