/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: the kernel's side. The same eBPF object loaded into the
 * kernel with libbpf and run with BPF_PROG_TEST_RUN (repeat), and the
 * object's linked instructions as libbpf leaves them without a bpf()
 * call, for DPDK's librte_bpf. Without libbpf every call says it was not
 * built.
 */
#ifndef UXDP_BENCH_BPF_KERNEL_H
#define UXDP_BENCH_BPF_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kbpf;

/*
 * Load program @func of the object at @path into the kernel (root, or
 * CAP_BPF and CAP_NET_ADMIN). Returns 0, BENCH_UNAVAILABLE-style 1 when
 * the kernel cannot be asked (not built, no privilege: @why says), or
 * -errno with @why saying what libbpf or the verifier said.
 */
int kbpf_load(const char *path, const char *func, struct kbpf **out,
	      char *why, size_t whylen);
void kbpf_close(struct kbpf *k);
/* The control plane's update of map @map of @k's object (BPF_ANY): 0 or
 * -errno (-ENOENT: no such map). */
int kbpf_map_update(struct kbpf *k, const char *map, const void *key,
		    const void *value);
/* The first u64 of per-CPU map @map's value at @key, summed over CPUs. */
int kbpf_map_sum_u64(struct kbpf *k, const char *map, uint32_t key,
		     uint64_t *sum);

/*
 * BPF_PROG_TEST_RUN: @repeat runs on @len bytes at @pkt. *@retval gets
 * the verdict, *@kns the kernel's own mean ns per run (an integer),
 * *@ticks the TSC ticks the call took. Returns 0 or -errno.
 */
int kbpf_test_run(struct kbpf *k, const void *pkt, uint32_t len,
		  uint32_t repeat, uint32_t *retval, uint32_t *kns,
		  uint64_t *ticks);

/*
 * The kernel on a device path: a veth pair in a namespace of the netns
 * testbed (tools/lib/testbed.h), @k's program attached natively to its
 * far end, the testbed's live-frames generator injecting @len bytes at
 * @pkt out of the near end on CPU @cpu. Returns 0, 1 when it cannot run
 * here (not built, not root, a kernel without live frames: @why says),
 * or -errno with @why.
 */
struct kveth;
int kveth_open(struct kbpf *k, const void *pkt, uint32_t len, int cpu,
	       struct kveth **out, char *why, size_t whylen);
/*
 * Inject @count frames and wait (bounded) until the far end's XDP has
 * seen them all: *@ticks from the first to the last. -EIO with @why if
 * some never arrived.
 */
int kveth_run(struct kveth *v, uint64_t count, uint64_t *ticks, char *why,
	      size_t whylen);
void kveth_close(struct kveth *v);
/* The testbed the pairs live in, once they are all closed. */
void kveth_cleanup(void);

/* A map of an object, as libbpf describes it. */
struct kbpf_map {
	char *name;
	uint32_t type;		/* BPF_MAP_TYPE_* */
	uint32_t value_size;
	uint32_t max_entries;
	void *init;		/* global data: the initial value, else NULL */
	size_t init_size;
};

/*
 * The linked instructions of @func in @path, as libbpf's light-skeleton
 * loader leaves them (no bpf() call): an ld_imm64 of a map has src 5 (map
 * by index, imm) or 6 (its value, imm index, next imm offset). *@insns
 * (8-byte struct bpf_insn each) is malloc()ed; *@maps gets the object's
 * maps in index order (kbpf_maps_free() them). Returns 0 or -errno with
 * @why.
 */
int kbpf_linked_insns(const char *path, const char *func, void **insns,
		      uint32_t *ninsns, struct kbpf_map **maps, uint32_t *nmaps,
		      char *why, size_t whylen);
void kbpf_maps_free(struct kbpf_map *maps, uint32_t n);

#endif /* UXDP_BENCH_BPF_KERNEL_H */
