// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * BPF side of the kernel peer benchmark (bench/kpeer_veth.c): the same
 * single-CPU XDP_TX loop that uxdp runs in-process, run by the kernel on a
 * veth pair vA <-> vB inside a private network namespace.
 *
 *   kpeer_gen_redirect  generator, run by BPF_PROG_TEST_RUN with
 *                       BPF_F_TEST_XDP_LIVE_FRAMES: redirect every frame
 *                       out of vA (ndo_xdp_xmit into vB's receive ring)
 *   kpeer_gen_drop      generator for the "injection only" baseline
 *   kpeer_b_swap_tx     on vB (native XDP): swap the Ethernet addresses,
 *                       XDP_TX (back out of vB, i.e. into vA's ring)
 *   kpeer_b_drop        on vB for the one-hop variant: drop at once
 *   kpeer_a_count_drop  on vA (native XDP): count the frame, drop it
 *
 * The generator's target (vA's ifindex) is a const volatile in .rodata,
 * set by the loader before the object is loaded, so the verifier sees a
 * constant.
 *
 * Build: clang -O2 -g -target bpf -c veth_loop.bpf.c -o veth_loop.bpf.o
 * (Debian keeps <asm/types.h> under /usr/include/<triplet>, which a
 * -target bpf compile does not search; without it the fallback below
 * stands in for <linux/types.h>. Passing -I/usr/include/$(gcc
 * -dumpmachine) uses the real one instead.)
 */
#if defined(__has_include) && !__has_include(<asm/types.h>)
/* What <linux/types.h> (via <asm/types.h>) would give the headers below. */
#define _LINUX_TYPES_H
typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __le16;
typedef __u16 __be16;
typedef __u32 __le32;
typedef __u32 __be32;
typedef __u64 __le64;
typedef __u64 __be64;
typedef __u16 __sum16;
typedef __u32 __wsum;
typedef unsigned int __poll_t;
#define __aligned_u64 __u64 __attribute__((aligned(8)))
#define __aligned_s64 __s64 __attribute__((aligned(8)))
#define __aligned_be64 __be64 __attribute__((aligned(8)))
#define __aligned_le64 __le64 __attribute__((aligned(8)))
#endif

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* vA's ifindex in the benchmark's namespace; set before load. */
const volatile __u32 kpeer_a_ifindex = 0;

/* Frames that completed the loop, counted by vA's program (key 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kpeer_a_count SEC(".maps");

SEC("xdp")
int kpeer_gen_redirect(struct xdp_md *ctx)
{
	return bpf_redirect(kpeer_a_ifindex, 0);
}

SEC("xdp")
int kpeer_gen_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int kpeer_b_swap_tx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u16 *p = data;	/* 16-bit halves of the two addresses */
	__u16 d0, d1, d2;

	if (data + ETH_HLEN > data_end)
		return XDP_DROP;

	/* h_dest is p[0..2], h_source p[3..5]: three 16-bit swaps. */
	d0 = p[0];
	d1 = p[1];
	d2 = p[2];
	p[0] = p[3];
	p[1] = p[4];
	p[2] = p[5];
	p[3] = d0;
	p[4] = d1;
	p[5] = d2;
	return XDP_TX;
}

SEC("xdp")
int kpeer_b_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int kpeer_a_count_drop(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *cnt;

	cnt = bpf_map_lookup_elem(&kpeer_a_count, &key);
	if (cnt)
		*cnt += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
