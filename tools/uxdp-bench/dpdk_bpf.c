/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: DPDK's librte_bpf as a peer (dpdk_bpf.h).
 */
#include <errno.h>
#include <stdio.h>

#include "dpdk_bpf.h"

int dpdk_bpf_prepare(const char *path, const char *func,
		     const unsigned char *pkt, uint32_t len,
		     struct dpdk_bpf **out, char *why, size_t whylen)
{
	(void)path, (void)func, (void)pkt, (void)len;
	*out = NULL;
	snprintf(why, whylen, "not built");
	return 1;
}

bool dpdk_bpf_has_jit(const struct dpdk_bpf *b)
{
	(void)b;
	return false;
}

int dpdk_bpf_loop(struct dpdk_bpf *b, bool jit, uint64_t n, uint32_t want,
		  uint64_t *ticks, uint64_t *bad)
{
	(void)b, (void)jit, (void)n, (void)want, (void)ticks, (void)bad;
	return -EOPNOTSUPP;
}

const char *dpdk_bpf_why(const struct dpdk_bpf *b)
{
	(void)b;
	return "not built";
}

void dpdk_bpf_free(struct dpdk_bpf *b)
{
	(void)b;
}
