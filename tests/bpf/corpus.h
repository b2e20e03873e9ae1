/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every program of uxdp's eBPF corpus (tests/bpf/) includes: the UAPI
 * types and libbpf's helper declarations. Built by clang -O2 -g -target bpf
 * at build time (tests/CMakeLists.txt), -mcpu=v3, some also -mcpu=v1.
 */
#ifndef T_BPF_CORPUS_H
#define T_BPF_CORPUS_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define LICENSE	char _license[] SEC("license") = "Dual BSD/GPL"

/* An array map @name of @n u64 values for a test to read back, and
 * put_@name(k, v) to store value @v at @k. */
#define RESULTS(name, n)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARRAY);			\
		__uint(max_entries, n);					\
		__type(key, __u32);					\
		__type(value, __u64);					\
	} name SEC(".maps");						\
									\
	static __always_inline void put_##name(__u32 k, __u64 v)	\
	{								\
		bpf_map_update_elem(&name, &k, &v, BPF_ANY);		\
	}

/* The same per CPU (this CPU's value at @k), for objects a test runs on
 * several threads at once. */
#define PERCPU_RESULTS(name, n)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, n);					\
		__type(key, __u32);					\
		__type(value, __s64);					\
	} name SEC(".maps");						\
									\
	static __always_inline void put_##name(__u32 k, __s64 v)	\
	{								\
		bpf_map_update_elem(&name, &k, &v, BPF_ANY);		\
	}

#endif
