// SPDX-License-Identifier: BSD-2-Clause
/* Refused: bpf_sk_lookup_tcp works on the kernel's sockets. */
#include "corpus.h"

SEC("xdp")
int refuse_socket(struct xdp_md *ctx)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;

	sk = bpf_sk_lookup_tcp(ctx, &t, sizeof(t.ipv4), -1, 0);
	if (sk) {
		bpf_sk_release(sk);
		return XDP_DROP;
	}
	return XDP_PASS;
}

LICENSE;
