// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf_map_push_elem, _pop_elem and _peek_elem on a queue and a stack,
 * small enough that packets fill them: each packet pushes its length into
 * the queue (BPF_EXIST when the length is odd: the oldest goes), a
 * 12-byte record into the stack, and every third packet by the counter
 * pops from both and peeks. Pops and peeks of an empty map into buffers
 * of 0xff (the kernel zeroes them), and the flags the kernel refuses.
 * Every result and value into rets; test_bpf_kernel compares them and
 * the queue's and stack's contents with the kernel's after each packet.
 */
#include "corpus.h"

struct rec {
	__u32 len;
	__u8 head[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4);
	__uint(key_size, 0);
	__uint(value_size, sizeof(__u32));
} q SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 3);
	__uint(key_size, 0);
	__uint(value_size, sizeof(struct rec));
} s SEC(".maps");

/* Never pushed: always empty. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 2);
	__type(value, __u64);
} empty SEC(".maps");

RESULTS(rets, 16)
RESULTS(count, 1)

SEC("xdp")
int queue(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 len = (__u32)(end - data), k = 0, v;
	struct rec r = { .len = len }, got;
	__u64 *n = bpf_map_lookup_elem(&count, &k), e;

	if (!n)
		return XDP_ABORTED;
	(*n)++;
	if (data + 8 <= end)
		__builtin_memcpy(r.head, data, 8);
	put_rets(0, bpf_map_push_elem(&q, &len, len & 1 ? BPF_EXIST : 0));
	put_rets(1, bpf_map_push_elem(&s, &r, BPF_ANY));
	/* The kernel refuses these flags: -EINVAL, nothing pushed. */
	put_rets(2, bpf_map_push_elem(&q, &len, BPF_NOEXIST));
	put_rets(3, bpf_map_push_elem(&q, &len, 4));
	if (*n % 3 == 0) {
		v = 0xffffffff;
		put_rets(4, bpf_map_pop_elem(&q, &v));
		put_rets(5, v);
		__builtin_memset(&got, 0xff, sizeof(got));
		put_rets(6, bpf_map_pop_elem(&s, &got));
		put_rets(7, got.len);
		put_rets(8, *(__u64 *)got.head);
	}
	v = 0xffffffff;
	put_rets(9, bpf_map_peek_elem(&q, &v));
	put_rets(10, v);
	__builtin_memset(&got, 0xff, sizeof(got));
	put_rets(11, bpf_map_peek_elem(&s, &got));
	put_rets(12, got.len);
	e = ~0ULL;
	put_rets(13, bpf_map_pop_elem(&empty, &e));
	put_rets(14, e);
	e = ~0ULL;
	put_rets(15, bpf_map_peek_elem(&empty, &e));
	return len & 2 ? XDP_DROP : XDP_PASS;
}

LICENSE;
