// SPDX-License-Identifier: BSD-2-Clause
/*
 * An LPM trie a program fills and reads: each IPv4 packet looks its
 * destination up (the longest prefix of it that is an entry), counts on
 * the entry it found, then adds its source with a prefix length its TTL
 * picks (BPF_NOEXIST; a full trie says -ENOSPC) and deletes the
 * destination's prefix of a length its ID picks. Every helper's result
 * goes to res, the verdict says whether the lookup found an entry.
 *
 *	res[0]	lookups that found an entry
 *	res[1]	updates that succeeded, res[2] their -EEXIST, res[3] -ENOSPC
 *	res[4]	deletes that succeeded, res[5] their -ENOENT
 *	res[6]	the last found entry's value
 */
#include "corpus.h"

RESULTS(res, 8)

struct key4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 12);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct key4);
	__type(value, __u64);
} routes SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&res, &k);

	if (v)
		*v += 1;
}

SEC("xdp")
int lpm_route(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = (void *)(data + 14);
	struct key4 k;
	__u64 *v, one = 1;
	long err;
	int verdict = XDP_PASS;

	if ((void *)(ip + 1) > (void *)data_end)
		return XDP_DROP;
	if (data[12] != 0x08 || data[13] != 0x00)
		return XDP_PASS;
	k.prefixlen = 32;
	__builtin_memcpy(k.addr, &ip->daddr, 4);
	v = bpf_map_lookup_elem(&routes, &k);
	if (v) {
		*v += 1;
		bump(0);
		put_res(6, *v);
		verdict = XDP_TX;
	}
	k.prefixlen = ip->ttl % 34;		/* 33: -EINVAL */
	__builtin_memcpy(k.addr, &ip->saddr, 4);
	err = bpf_map_update_elem(&routes, &k, &one, BPF_NOEXIST);
	bump(!err ? 1 : err == -17 ? 2 : err == -28 ? 3 : 7);
	k.prefixlen = (__u32)(ip->id >> 8) % 33;
	__builtin_memcpy(k.addr, &ip->daddr, 4);
	err = bpf_map_delete_elem(&routes, &k);
	bump(!err ? 4 : err == -2 ? 5 : 7);
	return verdict;
}

LICENSE;
