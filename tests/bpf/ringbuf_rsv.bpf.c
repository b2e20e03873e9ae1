// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf_ringbuf_reserve, _submit and _discard: a record of the packet's
 * first bytes filled in place and submitted, one discarded (the consumer
 * never sees it, the positions move), two records at once submitted in
 * the other order, and the packet copied into a record by
 * bpf_xdp_load_bytes. Results into rets (this CPU's). test_bpf_kernel
 * compares the records and rets with the kernel's.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8192);
} rb SEC(".maps");

PERCPU_RESULTS(rets, 8)

struct rec {
	__u32 len;
	__u32 tag;
	__u8 head[8];
};

SEC("xdp")
int ringbuf_rsv(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 len = (__u32)(end - data);
	struct rec *r, *a, *b;
	__u8 *p;

	/* (Not "put_rets(0, r != 0)" before the check: clang then tests
	 * a copy twice, paths uxdp's pass joins into an unknown pointer;
	 * docs/semantics.md, "Ring buffers".) */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		put_rets(0, 0);
	} else {
		put_rets(0, 1);
		r->len = len;
		r->tag = 1;
		__builtin_memset(r->head, 0, sizeof(r->head));
		if (data + 8 <= end)
			__builtin_memcpy(r->head, data, 8);
		bpf_ringbuf_submit(r, 0);
	}
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (r) {
		r->tag = 2;
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
	}
	put_rets(2, bpf_ringbuf_query(&rb, BPF_RB_PROD_POS));
	a = bpf_ringbuf_reserve(&rb, sizeof(*a), 0);
	if (!a)
		return XDP_PASS;
	b = bpf_ringbuf_reserve(&rb, sizeof(*b), 0);
	if (!b) {
		bpf_ringbuf_discard(a, 0);
		return XDP_PASS;
	}
	a->len = len;
	a->tag = 3;
	__builtin_memset(a->head, 3, sizeof(a->head));
	b->len = len;
	b->tag = 4;
	__builtin_memset(b->head, 4, sizeof(b->head));
	/* b first: the consumer waits for a, then reads both. */
	bpf_ringbuf_submit(b, 0);
	put_rets(3, bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA));
	bpf_ringbuf_submit(a, BPF_RB_FORCE_WAKEUP);
	p = bpf_ringbuf_reserve(&rb, 64, 0);
	if (p) {
		long err = bpf_xdp_load_bytes(ctx, 0, p, 64);

		put_rets(4, err);
		/* A short packet leaves the record as the ring had it
		 * (older records' bytes, in the kernel too): discarded. */
		if (err)
			bpf_ringbuf_discard(p, 0);
		else
			bpf_ringbuf_submit(p, 0);
	}
	put_rets(5, bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA));
	return XDP_PASS;
}

LICENSE;
