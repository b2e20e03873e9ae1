// SPDX-License-Identifier: BSD-2-Clause
/*
 * Maps of maps, as Katran's balancer uses them: an array of arrays filled
 * by its initialiser (slots 0 and 2), and a hash of LRU hashes with a
 * fallback LRU when the hash has no map for the key ("lru_map =
 * lookup(&lru_mapping, &cpu); if (!lru_map) lru_map = &fallback_cache").
 *
 *	res[0]	lookups in an inner array (found a map)
 *	res[1]	of-array misses
 *	res[2]	flows put in an inner LRU of the hash, res[3] in the fallback
 *	res[4]	the last LRU value read back
 */
#include "corpus.h"

RESULTS(res, 8)

struct inner_arr {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
};

struct inner_arr arr_a SEC(".maps"), arr_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct inner_arr);
} outer_arr SEC(".maps") = {
	.values = { [0] = &arr_a, [2] = &arr_b },
};

struct inner_lru {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
};

struct inner_lru lru_one SEC(".maps"), fallback SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct inner_lru);
} outer_hash SEC(".maps") = {
	.values = { [1] = &lru_one },
};

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&res, &k);

	if (v)
		*v += 1;
}

SEC("xdp")
int ofmaps_route(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = (void *)(data + 14);
	__u32 k, flow;
	__u64 *v, one = 1;
	void *inner, *lru;
	int verdict = XDP_PASS;

	if ((void *)(ip + 1) > (void *)data_end)
		return XDP_DROP;
	if (data[12] != 0x08 || data[13] != 0x00)
		return XDP_PASS;
	k = ((__u8 *)&ip->daddr)[3] % 4;
	inner = bpf_map_lookup_elem(&outer_arr, &k);
	if (inner) {
		k = ((__u8 *)&ip->saddr)[3] % 4;
		v = bpf_map_lookup_elem(inner, &k);
		if (v) {
			*v += 1;
			verdict = XDP_TX;
		}
		bump(0);
	} else {
		bump(1);
	}
	k = ip->ttl % 3;
	lru = bpf_map_lookup_elem(&outer_hash, &k);
	if (!lru) {
		lru = &fallback;
		bump(3);
	} else {
		bump(2);
	}
	flow = ip->saddr ^ ip->id;
	bpf_map_update_elem(lru, &flow, &one, BPF_ANY);
	v = bpf_map_lookup_elem(lru, &flow);
	if (v)
		put_res(4, *v + ip->ttl);
	return verdict;
}

LICENSE;
