// SPDX-License-Identifier: BSD-2-Clause
/* Global data as libbpf skeletons set it before load: the verdict and a
 * byte to write at offset 0 in .rodata, a run counter in .bss, a step in
 * .data, and a second read-only section (.rodata.cfg). */
#include "corpus.h"

const volatile __u32 verdict = XDP_PASS;
const volatile __u8 mark = 0xab;
const volatile __u32 extra SEC(".rodata.cfg") = 7;
__u64 step = 1;
__u64 runs;

SEC("xdp")
int xdp_rodata(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;

	runs += step + extra;
	if (data + 1 <= data_end)
		data[0] = mark;
	return verdict;
}

LICENSE;
