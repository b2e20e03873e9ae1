// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpf_perf_event_output into PERF_EVENT_ARRAYs: a sample of the
 * program's bytes with the packet's first bytes after them (the flags'
 * upper bits), one into slot 0 by index, one of no bytes, and the
 * kernel's errors (an index past max_entries, flags it does not know,
 * more packet than there is). Each call's result goes into rets (this
 * CPU's).
 * test_bpf_kernel compares the samples and rets with the kernel's (run on
 * CPU 0, so BPF_F_CURRENT_CPU and index 0 are the same ring on both);
 * test_bpf_perf reads them with uxdp's perf buffer.
 */
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u32);
} events SEC(".maps");

/* max_entries left to the loader: the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(__u32));
} events_all SEC(".maps");

/* Per CPU: test_bpf_perf's producer threads run it at once. */
PERCPU_RESULTS(rets, 6)

struct sample {
	__u32 len;
	__u32 queue;
	__u8 tag[8];		/* no padding: every byte is set */
};

SEC("xdp")
int perf(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct sample s = {
		.len = (__u32)(end - data), .queue = ctx->rx_queue_index,
		.tag = { 1, 2, 3, 4, 5 },
	};
	__u64 cap = s.len > 96 ? 96 : s.len;

	put_rets(0, bpf_perf_event_output(ctx, &events,
					  BPF_F_CURRENT_CPU | cap << 32,
					  &s, sizeof(s)));
	put_rets(1, bpf_perf_event_output(ctx, &events, 0, &s, 4));
	put_rets(2, bpf_perf_event_output(ctx, &events, 4, &s, 4));
	put_rets(3, bpf_perf_event_output(ctx, &events,
					  BPF_F_CURRENT_CPU | 1ULL << 52,
					  &s, 4));
	put_rets(4, bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU |
					  (__u64)(s.len + 1) << 32, &s, 4));
	put_rets(5, bpf_perf_event_output(ctx, &events_all,
					  BPF_F_CURRENT_CPU, &s, 0));
	return XDP_PASS;
}

LICENSE;
