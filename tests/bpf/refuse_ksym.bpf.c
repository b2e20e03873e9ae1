// SPDX-License-Identifier: BSD-2-Clause
/* Refused: a kernel variable (typed __ksym). */
#include "corpus.h"

extern const int bpf_prog_active __ksym;

SEC("xdp")
int refuse_ksym(struct xdp_md *ctx)
{
	return bpf_prog_active ? XDP_DROP : XDP_PASS;
}

LICENSE;
