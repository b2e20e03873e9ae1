// SPDX-License-Identifier: BSD-2-Clause
/* Refused: bpf_get_current_pid_tgid is not a helper XDP programs have. */
#include "corpus.h"

SEC("xdp")
int refuse_nonxdp(struct xdp_md *ctx)
{
	return bpf_get_current_pid_tgid() & 1 ? XDP_DROP : XDP_PASS;
}

LICENSE;
