// SPDX-License-Identifier: BSD-2-Clause
/* Refused: bpf_fib_lookup, a helper uxdp does not have yet (issue 15). */
#include "corpus.h"

SEC("xdp")
int refuse_fib(struct xdp_md *ctx)
{
	struct bpf_fib_lookup p = { .family = 2, .ifindex = ctx->ingress_ifindex };

	return bpf_fib_lookup(ctx, &p, sizeof(p), 0) ? XDP_PASS : XDP_DROP;
}

LICENSE;
