// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tail calls through prog arrays: one filled by its static initialiser,
 * one the test fills from the control plane (jmp_dyn[0] = tail_dyn, in
 * the kernel and in uxdp alike). Every way a tail call goes: to a
 * program, to itself until the kernel's limit of 33 stops it, from a
 * bpf-to-bpf subprogram (the target's exit returns to the subprogram's
 * caller), and falling through (an empty slot, an index out of range).
 *
 *	res[0]	runs of tail_entry
 *	res[1]	runs of tail_ipv4
 *	res[2]	runs of tail_chain, every packet
 *	chain	runs of tail_chain for the last IPv4 packet (tail_entry
 *		zeroes it; a plain array: it goes into the packet, and a
 *		per-CPU value would depend on the CPU the kernel ran on)
 *	res[4]	fall-throughs seen by tail_entry
 *	res[5]	runs of tail_dyn
 *	res[6]	runs of tail_sub
 *
 * (res is per CPU, read summed.)
 */
#include "corpus.h"

/* Per CPU: test_bpf_tail runs the programs from two threads at once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} res SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&res, &k);

	if (v)
		*v += 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} chain SEC(".maps");

int tail_ipv4(struct xdp_md *ctx);
int tail_chain(struct xdp_md *ctx);
int tail_sub(struct xdp_md *ctx);

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 5);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__array(values, int (void *));
} jmp_static SEC(".maps") = {
	.values = {
		[1] = (void *)&tail_ipv4,
		[2] = (void *)&tail_chain,
		[4] = (void *)&tail_sub,
	},
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} jmp_dyn SEC(".maps");

/* A subprogram that tail-calls: tail_sub's verdict comes back here. */
static __attribute__((noinline)) int sub_tail(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp_static, 4);
	/* Only if the slot were empty; not a constant, which clang would
	 * carry into the caller past the call. */
	return (int)ctx->rx_queue_index + 1000;
}

SEC("xdp")
int tail_entry(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	__u32 k = 0;
	__u64 zero = 0;
	__u16 proto;

	bump(0);
	if (data + 14 > data_end)
		return XDP_DROP;
	proto = (__u16)(data[12] << 8 | data[13]);
	switch (proto) {
	case ETH_P_IP:
		bpf_map_update_elem(&chain, &k, &zero, BPF_ANY);
		bpf_tail_call(ctx, &jmp_static, 1);
		break;
	case ETH_P_IPV6:
		bpf_tail_call(ctx, &jmp_dyn, 0);
		break;
	case ETH_P_8021Q:
		return sub_tail(ctx) == 7 ? XDP_TX : XDP_ABORTED;
	case ETH_P_ARP:
		bpf_tail_call(ctx, &jmp_static, 0);	/* empty */
		break;
	default:
		bpf_tail_call(ctx, &jmp_static, proto);	/* out of range */
		break;
	}
	bump(4);
	return XDP_PASS;
}

/* Swaps the MACs; UDP goes on to the chain. */
SEC("xdp")
int tail_ipv4(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	unsigned char t;
	int i;

	bump(1);
	if (data + 34 > data_end)
		return XDP_DROP;
	for (i = 0; i < 6; i++) {
		t = data[i];
		data[i] = data[6 + i];
		data[6 + i] = t;
	}
	if (data[23] == IPPROTO_UDP)
		bpf_tail_call(ctx, &jmp_static, 2);
	return XDP_TX;
}

/* Calls itself until the run's tail calls are spent; marks the packet
 * with how many times it ran. */
SEC("xdp")
int tail_chain(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	__u32 k = 0;
	__u64 *n;

	bump(2);
	n = bpf_map_lookup_elem(&chain, &k);
	if (!n)
		return XDP_ABORTED;
	*n += 1;
	if (data + 15 <= data_end)
		data[14] = (unsigned char)*n;
	bpf_tail_call(ctx, &jmp_static, 2);
	return XDP_PASS;
}

SEC("xdp")
int tail_sub(struct xdp_md *ctx)
{
	bump(6);
	return 7;
}

SEC("xdp")
int tail_dyn(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;

	bump(5);
	if (data + 1 > data_end)
		return XDP_DROP;
	data[0] ^= 0xff;
	return XDP_TX;
}

LICENSE;
