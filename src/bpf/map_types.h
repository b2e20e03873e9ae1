/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every map type the kernel's UAPI names, one row each: the only list of map
 * types in the bpf layer (the kernel's include/linux/bpf_types.h). The
 * loader takes a map's family from here and refuses, by the map's name and
 * this spelling, a type whose ops are NULL.
 *
 *	X(type, name, ops)
 *
 * type  BPF_MAP_TYPE_* (UAPI value)
 * name  libbpf's spelling (libbpf_bpf_map_type_str), for messages
 * ops   the family's struct uxdp_bpf_map_ops (map_<family>.c), or NULL for
 *       a type uxdp does not have (yet: issue 15 brings CPUMAP)
 *
 * Newer kernels' types beyond BPF_MAP_TYPE_USER_RINGBUF are spelled by
 * number ("type 33"): the UAPI header Debian 12 ships ends there.
 */
#ifndef UXDP_BPF_MAP_TYPES_H
#define UXDP_BPF_MAP_TYPES_H

#define UXDP_BPF_MAP_TYPES(X)						\
	X(BPF_MAP_TYPE_UNSPEC,		"unspec",	NULL)		\
	X(BPF_MAP_TYPE_HASH,		"hash",		&uxdp_bpf_hash_ops) \
	X(BPF_MAP_TYPE_ARRAY,		"array",	&uxdp_bpf_array_ops) \
	X(BPF_MAP_TYPE_PROG_ARRAY,	"prog_array",	&uxdp_bpf_prog_array_ops) \
	X(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "perf_event_array", &uxdp_bpf_perf_event_array_ops)	\
	X(BPF_MAP_TYPE_PERCPU_HASH,	"percpu_hash",	&uxdp_bpf_percpu_hash_ops) \
	X(BPF_MAP_TYPE_PERCPU_ARRAY,	"percpu_array",	&uxdp_bpf_percpu_array_ops) \
	X(BPF_MAP_TYPE_STACK_TRACE,	"stack_trace",	NULL)		\
	X(BPF_MAP_TYPE_CGROUP_ARRAY,	"cgroup_array",	NULL)		\
	X(BPF_MAP_TYPE_LRU_HASH,	"lru_hash",	&uxdp_bpf_lru_hash_ops) \
	X(BPF_MAP_TYPE_LRU_PERCPU_HASH,	"lru_percpu_hash", &uxdp_bpf_lru_percpu_hash_ops) \
	X(BPF_MAP_TYPE_LPM_TRIE,	"lpm_trie",	&uxdp_bpf_lpm_trie_ops) \
	X(BPF_MAP_TYPE_ARRAY_OF_MAPS,	"array_of_maps", &uxdp_bpf_array_of_maps_ops) \
	X(BPF_MAP_TYPE_HASH_OF_MAPS,	"hash_of_maps",	&uxdp_bpf_hash_of_maps_ops) \
	X(BPF_MAP_TYPE_DEVMAP,		"devmap",	&uxdp_bpf_devmap_ops) \
	X(BPF_MAP_TYPE_SOCKMAP,		"sockmap",	NULL)		\
	X(BPF_MAP_TYPE_CPUMAP,		"cpumap",	NULL)		\
	X(BPF_MAP_TYPE_XSKMAP,		"xskmap",	&uxdp_bpf_xskmap_ops) \
	X(BPF_MAP_TYPE_SOCKHASH,	"sockhash",	NULL)		\
	X(BPF_MAP_TYPE_CGROUP_STORAGE,	"cgroup_storage", NULL)		\
	X(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, "reuseport_sockarray", NULL) \
	X(BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, "percpu_cgroup_storage", NULL) \
	X(BPF_MAP_TYPE_QUEUE,		"queue",	&uxdp_bpf_queue_ops) \
	X(BPF_MAP_TYPE_STACK,		"stack",	&uxdp_bpf_stack_ops) \
	X(BPF_MAP_TYPE_SK_STORAGE,	"sk_storage",	NULL)		\
	X(BPF_MAP_TYPE_DEVMAP_HASH,	"devmap_hash",	&uxdp_bpf_devmap_hash_ops) \
	X(BPF_MAP_TYPE_STRUCT_OPS,	"struct_ops",	NULL)		\
	X(BPF_MAP_TYPE_RINGBUF,		"ringbuf",	&uxdp_bpf_ringbuf_ops)		\
	X(BPF_MAP_TYPE_INODE_STORAGE,	"inode_storage", NULL)		\
	X(BPF_MAP_TYPE_TASK_STORAGE,	"task_storage",	NULL)		\
	X(BPF_MAP_TYPE_BLOOM_FILTER,	"bloom_filter",	NULL)		\
	X(BPF_MAP_TYPE_USER_RINGBUF,	"user_ringbuf",	NULL)

#endif /* UXDP_BPF_MAP_TYPES_H */
