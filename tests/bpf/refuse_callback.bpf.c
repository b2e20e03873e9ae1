// SPDX-License-Identifier: BSD-2-Clause
/* Refused: bpf_loop takes a callback (part 2 of issue 14). */
#include "corpus.h"

static int step(__u32 i, void *data)
{
	*(__u32 *)data += i;
	return 0;
}

SEC("xdp")
int refuse_callback(struct xdp_md *ctx)
{
	__u32 sum = 0;

	bpf_loop(8, step, &sum, 0);
	return sum == 28 ? XDP_PASS : XDP_DROP;
}

LICENSE;
