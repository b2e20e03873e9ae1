// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf_ringbuf_output and bpf_ringbuf_query on a RINGBUF: a record of the
 * packet's first bytes, one of an odd size (the ring rounds it up to 8)
 * without a wake-up, the kernel's errors (flags it does not know, a record
 * bigger than the ring), and every query. Results into rets (this CPU's).
 * test_bpf_kernel compares the records and rets with the kernel's (both
 * rings read after every run, so the positions move alike);
 * test_bpf_ringbuf reads them with uxdp's ring buffer.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

PERCPU_RESULTS(rets, 9)

/* Bigger than the ring. */
__u8 blob[5000];

struct record {
	__u32 len;
	__u32 queue;
	__u8 head[16];
};

SEC("xdp")
int ringbuf(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct record r = {
		.len = (__u32)(end - data), .queue = ctx->rx_queue_index,
	};

	if (data + sizeof(r.head) <= end)
		__builtin_memcpy(r.head, data, sizeof(r.head));
	put_rets(0, bpf_ringbuf_output(&rb, &r, sizeof(r), 0));
	put_rets(1, bpf_ringbuf_output(&rb, &r, 5, BPF_RB_NO_WAKEUP));
	put_rets(2, bpf_ringbuf_output(&rb, &r, 4, 4));
	put_rets(3, bpf_ringbuf_output(&rb, blob, sizeof(blob),
				       BPF_RB_FORCE_WAKEUP));
	put_rets(4, bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA));
	put_rets(5, bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE));
	put_rets(6, bpf_ringbuf_query(&rb, BPF_RB_CONS_POS));
	put_rets(7, bpf_ringbuf_query(&rb, BPF_RB_PROD_POS));
	put_rets(8, bpf_ringbuf_query(&rb, 9));
	return XDP_PASS;
}

LICENSE;
