// SPDX-License-Identifier: BSD-2-Clause
/*
 * Redirects: bpf_redirect_map into a devmap, a devmap_hash and an xskmap,
 * bpf_redirect
 * by ifindex, their flags (a fallback verdict in the low bits, anything
 * else XDP_ABORTED), and a devmap lookup. test_bpf_kernel compares the
 * verdicts with the kernel's (maps empty: the fallbacks); test_bpf_redirect
 * fills them and sends packets through uxdp's devices.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* Keyed by anything (kernel samples key it by ifindex). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} devs_h SEC(".maps");

/* The device bpf_redirect sends to (set before load). */
volatile const __u32 target_ifindex = 0;

/* Slot and flags from the packet's last bytes: every fallback, and
 * flags no map takes. */
SEC("xdp")
int rdr_map(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	__u64 flags;
	__u32 k;

	if (data + 16 > data_end)
		return XDP_DROP;
	k = data[14] % 5;			/* 4: out of range */
	flags = data[15] & 3;
	/* Often a flag no map takes; never BPF_F_BROADCAST (bit 3), which
	 * uxdp does not have yet (docs/semantics.md). */
	if ((data[15] & 0x80) && (data[15] & 0x3f) != 3)
		flags |= 1ULL << (data[15] & 0x3f);
	return bpf_redirect_map(&devs, k, flags);
}

SEC("xdp")
int rdr_slot0(struct xdp_md *ctx)
{
	return bpf_redirect_map(&devs, 0, XDP_DROP);
}

SEC("xdp")
int rdr_ifindex(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;

	if (data + 15 > data_end)
		return XDP_DROP;
	/* Flags 0 for IPv4 (0x45), 1 (XDP_ABORTED) for a top bit set. */
	return bpf_redirect(target_ifindex, data[14] >> 7);
}

/* libxdp's default program's way: a socket for the queue, or pass. */
SEC("xdp")
int rdr_xsk(struct xdp_md *ctx)
{
	__u32 q = ctx->rx_queue_index;

	if (bpf_map_lookup_elem(&xsks, &q))
		return bpf_redirect_map(&xsks, q, 0);
	return XDP_PASS;
}

/* A devmap lookup: the entry's ifindex picks the verdict. */
SEC("xdp")
int rdr_lookup(struct xdp_md *ctx)
{
	struct bpf_devmap_val *v;
	__u32 k = 0;

	v = bpf_map_lookup_elem(&devs, &k);
	if (!v)
		return XDP_PASS;
	return v->ifindex ? XDP_TX : XDP_DROP;
}

/* A devmap_hash by key 0xdead0001 (the fallback XDP_DROP), and its
 * lookup: with the entry, the verdict says the entry's ifindex is set. */
SEC("xdp")
int rdr_hash(struct xdp_md *ctx)
{
	struct bpf_devmap_val *v;
	__u32 k = 0xdead0001;

	v = bpf_map_lookup_elem(&devs_h, &k);
	if (v && !v->ifindex)
		return XDP_ABORTED;
	return bpf_redirect_map(&devs_h, k, XDP_DROP);
}

LICENSE;
