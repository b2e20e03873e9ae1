// SPDX-License-Identifier: BSD-2-Clause
/* The part 1 helpers that return a value, kept in an array map for the
 * test to read: 0 ktime_get_ns, 1 ktime_get_boot_ns, 2
 * ktime_get_coarse_ns, 3 get_prandom_u32, 4 get_smp_processor_id, 5
 * xdp_get_buff_len, 6 map_update_elem's result for a key out of range,
 * 7 map_delete_elem's on an array. */
#include "corpus.h"

RESULTS(out, 8)

SEC("xdp")
int xdp_helpers(struct xdp_md *ctx)
{
	__u32 bad = 8;
	__u64 v = 1;

	put_out(0, bpf_ktime_get_ns());
	put_out(1, bpf_ktime_get_boot_ns());
	put_out(2, bpf_ktime_get_coarse_ns());
	put_out(3, bpf_get_prandom_u32());
	put_out(4, bpf_get_smp_processor_id());
	put_out(5, bpf_xdp_get_buff_len(ctx));
	put_out(6, bpf_map_update_elem(&out, &bad, &v, BPF_ANY));
	put_out(7, bpf_map_delete_elem(&out, &bad));
	return XDP_PASS;
}

LICENSE;
