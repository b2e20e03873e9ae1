// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The afxdp driver's XDP program (src/drivers/afxdp/): every packet that
 * arrives on a queue with an AF_XDP socket of ours goes to that socket;
 * the rest go on to the kernel's stack, counted per queue, so a port that
 * binds fewer queues than the interface has can tell what it missed.
 *
 * Built at build time (clang -O2 -g -target bpf) and embedded in libuxdp
 * as bytes, so the installed library needs no file next to it. The loader
 * sizes both maps to the interface's queues before loading.
 */
#if defined(__has_include) && !__has_include(<asm/types.h>)
/* Debian keeps <asm/types.h> under /usr/include/<triplet>, which a -target
 * bpf compile does not search unless told (the build passes -I for it);
 * these stand in for what <linux/types.h> would give the headers below. */
#define _LINUX_TYPES_H
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u16 __le16;
typedef __u32 __le32;
typedef __u64 __le64;
typedef __u16 __sum16;
typedef __u32 __wsum;
typedef unsigned int __poll_t;
#define __aligned_u64 __u64 __attribute__((aligned(8)))
#endif

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Queue index -> AF_XDP socket (the driver inserts each bound socket). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} uxdp_xsks SEC(".maps");

/* Packets passed to the stack because their queue has no socket. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} uxdp_xsk_miss SEC(".maps");

SEC("xdp")
int uxdp_xsk_redirect(struct xdp_md *ctx)
{
	__u32 q = ctx->rx_queue_index;
	__u64 *miss;

	/* The lower bits of the flags are the verdict when the slot is
	 * empty: XDP_PASS, then counted below. */
	if (bpf_redirect_map(&uxdp_xsks, q, XDP_PASS) == XDP_REDIRECT)
		return XDP_REDIRECT;
	miss = bpf_map_lookup_elem(&uxdp_xsk_miss, &q);
	if (miss)
		*miss += 1;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
