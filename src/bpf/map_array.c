/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY (the kernel's
 * kernel/bpf/arraymap.c), and through ARRAY the global data sections.
 *
 * Every value of a map lies in one allocation, so a value pointer a program
 * got from a lookup can be bounded by the safety pass to that area (the
 * region of struct uxdp_bpf_build_map). Elements are value_size rounded up
 * to 8 bytes, as the kernel's. A per-CPU array keeps one block of all its
 * elements per thread index, each block starting on a cache line: a thread
 * updating its own values shares no line with another's.
 *
 *	ARRAY		values[index * elem_size]
 *	PERCPU_ARRAY	values[cpu * cpu_stride + index * elem_size]
 *
 * Lookups take no lock (the kernel's take none either: an update of a
 * value a program reads at the same time is not atomic).
 */
#include "../internal.h"

#include <stdlib.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

/* The most bytes of values one array may have: a userspace limit of uxdp's
 * (docs/semantics.md), so an object cannot make it allocate the machine. */
#define ARRAY_MAX_BYTES		(1ULL << 30)
/* The kernel's PCPU_MIN_UNIT_SIZE: the largest per-CPU element. */
#define PCPU_MAX_ELEM		32768

struct uxdp_bpf_array {
	struct uxdp_bpf_map map;
	uint32_t elem_size;		/* value_size rounded up to 8 */
	uint64_t cpu_stride;		/* PERCPU: bytes per thread's block */
};

static inline struct uxdp_bpf_array *to_array(const struct uxdp_bpf_map *m)
{
	return (struct uxdp_bpf_array *)m;
}

static inline bool is_percpu(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* The flags an array takes (the kernel's ARRAY_CREATE_FLAG_MASK). */
#define ARRAY_CREATE_FLAGS	(BPF_F_NUMA_NODE | BPF_F_MMAPABLE |	\
				 BPF_F_RDONLY | BPF_F_WRONLY |		\
				 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | \
				 BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP)

static int array_map_alloc_check(const struct uxdp_bpf_map *m)
{
	if (!m->max_entries || m->key_size != 4 || !m->value_size ||
	    (m->map_flags & ~ARRAY_CREATE_FLAGS))
		return uxdp_fail(EINVAL, "map %s: an array needs key_size 4, "
				 "value_size and max_entries above 0 and "
				 "known flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 m->key_size, m->value_size, m->max_entries,
				 m->map_flags);
	if (is_percpu(m) && (m->map_flags & (BPF_F_MMAPABLE |
					     BPF_F_INNER_MAP)))
		return uxdp_fail(EINVAL, "map %s: a percpu_array cannot be "
				 "mmapable or an inner map", m->name);
	/* Only a perf event array keeps its elements when closed. */
	if (m->map_flags & BPF_F_PRESERVE_ELEMS)
		return uxdp_fail(EINVAL, "map %s: BPF_F_PRESERVE_ELEMS is for "
				 "perf_event_array", m->name);
	/* The kernel's limit: a larger value could not be read from
	 * userspace (array_map_alloc_check). */
	if (m->value_size > UXDP_BPF_VALUE_MAX)
		return uxdp_fail(E2BIG, "map %s: value_size %u: the most is "
				 "%u", m->name, m->value_size,
				 UXDP_BPF_VALUE_MAX);
	if (m->max_entries > 1U << 31)
		return uxdp_fail(E2BIG, "map %s: value_size %u, max_entries "
				 "%u: too large", m->name, m->value_size,
				 m->max_entries);
	if (is_percpu(m) && ((m->value_size + 7) & ~7U) > PCPU_MAX_ELEM)
		return uxdp_fail(E2BIG, "map %s: per-CPU values of %u bytes: "
				 "the most is %u", m->name, m->value_size,
				 PCPU_MAX_ELEM);
	return 0;
}

static int array_map_alloc(struct uxdp_bpf_map *m)
{
	struct uxdp_bpf_array *a = to_array(m);
	uint64_t block, size;

	a->elem_size = (m->value_size + 7) & ~7U;
	block = (uint64_t)a->elem_size * m->max_entries;
	if (is_percpu(m)) {
		a->cpu_stride = (block + UXDP_CACHE_LINE - 1) &
				~(uint64_t)(UXDP_CACHE_LINE - 1);
		size = a->cpu_stride * UXDP_BPF_NR_CPUS;
	} else {
		size = block;
	}
	if (size > ARRAY_MAX_BYTES)
		return uxdp_fail(E2BIG, "map %s: %llu bytes of values, more "
				 "than the %llu uxdp allows one array", m->name,
				 (unsigned long long)size,
				 (unsigned long long)ARRAY_MAX_BYTES);
	/* Cache-line aligned, whole lines: the values never share a line
	 * with other data. */
	size = (size + UXDP_CACHE_LINE - 1) & ~(uint64_t)(UXDP_CACHE_LINE - 1);
	if (posix_memalign((void **)&m->values, UXDP_CACHE_LINE, size))
		return uxdp_fail(ENOMEM, "map %s: out of memory for %llu "
				 "bytes", m->name, (unsigned long long)size);
	memset(m->values, 0, size);
	m->values_size = size;
	return 0;
}

static void array_map_free(struct uxdp_bpf_map *m)
{
	free(m->values);
	m->values = NULL;
	m->values_size = 0;
}

static inline uint8_t *array_elem(const struct uxdp_bpf_map *m, uint32_t cpu,
				  uint32_t index)
{
	const struct uxdp_bpf_array *a = to_array(m);

	return m->values + cpu * a->cpu_stride +
	       (uint64_t)index * a->elem_size;
}

/* ---- control plane ------------------------------------------------------ */

static int array_map_lookup(const struct uxdp_bpf_map *m, const void *key,
			    void *value, uint64_t flags)
{
	uint32_t index;

	(void)flags;
	memcpy(&index, key, sizeof(index));
	if (index >= m->max_entries)
		return -ENOENT;
	memcpy(value, array_elem(m, 0, index), m->value_size);
	return 0;
}

/* The checks of array_map_update_elem(), shared with programs. */
static long array_update_check(const struct uxdp_bpf_map *m, uint32_t index,
			       uint64_t flags)
{
	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST)
		return -EINVAL;
	if (index >= m->max_entries)
		return -E2BIG;
	if (flags & BPF_NOEXIST)	/* every element always exists */
		return -EEXIST;
	if (flags & BPF_F_LOCK)		/* no bpf_spin_lock in part 1 */
		return -EINVAL;
	return 0;
}

static int array_map_update(struct uxdp_bpf_map *m, const void *key,
			    const void *value, uint64_t flags)
{
	uint32_t index;
	long err;

	memcpy(&index, key, sizeof(index));
	err = array_update_check(m, index, flags);
	if (err)
		return (int)err;
	memcpy(array_elem(m, 0, index), value, m->value_size);
	return 0;
}

/* bpf_percpu_array_copy(): one 8-byte-rounded slot per possible CPU. */
static int percpu_array_map_lookup(const struct uxdp_bpf_map *m,
				   const void *key, void *value,
				   uint64_t flags)
{
	uint32_t elem = to_array(m)->elem_size, index, cpu;
	uint8_t *out = value;

	(void)flags;
	memcpy(&index, key, sizeof(index));
	if (index >= m->max_entries)
		return -ENOENT;
	for (cpu = 0; cpu < UXDP_BPF_NR_CPUS; cpu++)
		memcpy(out + (size_t)cpu * elem, array_elem(m, cpu, index),
		       elem);
	return 0;
}

/* bpf_percpu_array_update(): every CPU's slot from the user's layout. */
static int percpu_array_map_update(struct uxdp_bpf_map *m, const void *key,
				   const void *value, uint64_t flags)
{
	uint32_t elem = to_array(m)->elem_size, index, cpu;
	const uint8_t *in = value;

	memcpy(&index, key, sizeof(index));
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (index >= m->max_entries)
		return -E2BIG;
	if (flags == BPF_NOEXIST)
		return -EEXIST;
	for (cpu = 0; cpu < UXDP_BPF_NR_CPUS; cpu++)
		memcpy(array_elem(m, cpu, index), in + (size_t)cpu * elem,
		       elem);
	return 0;
}

static int array_map_delete(struct uxdp_bpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return -EINVAL;
}

/* The kernel's array_map_get_next_key: every index, whether or not it
 * holds anything (also the prog arrays' and the arrays of maps'). */
int uxdp_bpf_array_next_key(const struct uxdp_bpf_map *m, const void *key,
			    void *next_key)
{
	uint32_t index, next;

	if (key)
		memcpy(&index, key, sizeof(index));
	if (!key || index >= m->max_entries) {
		next = 0;
	} else {
		if (index == m->max_entries - 1)
			return -ENOENT;
		next = index + 1;
	}
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

/* ---- programs ------------------------------------------------------------- */

/* The key is a program's pointer to 4 readable bytes (the safety pass
 * proved it), not necessarily aligned. */
static inline uint32_t key_index(const void *key)
{
	uint32_t index;

	memcpy(&index, key, sizeof(index));
	return index;
}

static void *array_map_lookup_elem(struct uxdp_bpf_map *m, const void *key)
{
	uint32_t index = key_index(key);

	if (unlikely(index >= m->max_entries))
		return NULL;
	return m->values + (uint64_t)index * to_array(m)->elem_size;
}

static long array_map_update_elem(struct uxdp_bpf_map *m, const void *key,
				  const void *value, uint64_t flags)
{
	uint32_t index = key_index(key);
	long err = array_update_check(m, index, flags);

	if (err)
		return err;
	memcpy(array_elem(m, 0, index), value, m->value_size);
	return 0;
}

static long array_map_delete_elem(struct uxdp_bpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return -EINVAL;
}

/* This thread's value: uxdp's CPU is its thread index. */
static void *percpu_array_map_lookup_elem(struct uxdp_bpf_map *m,
					  const void *key)
{
	uint32_t index = key_index(key);

	if (unlikely(index >= m->max_entries))
		return NULL;
	return array_elem(m, xdp_thread_index() % UXDP_BPF_NR_CPUS, index);
}

static long percpu_array_map_update_elem(struct uxdp_bpf_map *m,
					 const void *key, const void *value,
					 uint64_t flags)
{
	uint32_t index = key_index(key);
	long err = array_update_check(m, index, flags);

	if (err)
		return err;
	memcpy(array_elem(m, xdp_thread_index() % UXDP_BPF_NR_CPUS, index),
	       value, m->value_size);
	return 0;
}

/* r@reg *= @k: lsh when @k is a power of two. */
static struct bpf_insn mul_k(uint8_t reg, uint64_t k)
{
	if (is_pow2_u64(k))
		return (struct bpf_insn){ .code = BPF_ALU64 | BPF_LSH | BPF_K,
					  .dst_reg = reg,
					  .imm = __builtin_ctzll(k) };
	return (struct bpf_insn){ .code = BPF_ALU64 | BPF_MUL | BPF_K,
				  .dst_reg = reg, .imm = (int32_t)k };
}

/*
 * The lookups' common part: r0 = values + key * elem_size, or a jump of
 * @skip + 1 to the end's "mov r0, 0" when the key is out of range.
 *
 *	lddw	r1, values
 *	ldxw	r0, [r2+0]
 *	jge	r0, max_entries, +skip
 *	mul	r0, elem_size		(lsh when a power of two)
 *	add	r0, r1
 */
static struct bpf_insn *gen_elem(const struct uxdp_bpf_map *m,
				 struct bpf_insn *i, int16_t skip)
{
	uint64_t base = (uint64_t)(uintptr_t)m->values;

	*i++ = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM,
				  .dst_reg = BPF_REG_1,
				  .imm = (int32_t)(uint32_t)base };
	*i++ = (struct bpf_insn){ .imm = (int32_t)(uint32_t)(base >> 32) };
	*i++ = (struct bpf_insn){ .code = BPF_LDX | BPF_W | BPF_MEM,
				  .dst_reg = BPF_REG_0, .src_reg = BPF_REG_2 };
	*i++ = (struct bpf_insn){ .code = BPF_JMP | BPF_JGE | BPF_K,
				  .dst_reg = BPF_REG_0, .off = skip,
				  .imm = (int32_t)m->max_entries };
	*i++ = mul_k(BPF_REG_0, to_array(m)->elem_size);
	*i++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_X,
				  .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1 };
	return i;
}

/* The end: "ja +1; mov r0, 0" (an out-of-range key's NULL); the count. */
static uint32_t gen_end(struct bpf_insn *insn, struct bpf_insn *i)
{
	*i++ = (struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = 1 };
	*i++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
				  .dst_reg = BPF_REG_0 };
	return (uint32_t)(i - insn);
}

/*
 * A lookup whose key the safety pass knows (@key: its 4 bytes), folded as
 * the kernel's verifier folds a constant key's bounds test: "lddw r0,
 * &values[index]", or "mov r0, 0" for an index out of range. Returns
 * where the next instruction goes; *@in_range says which it was.
 */
static struct bpf_insn *gen_known(const struct uxdp_bpf_map *m,
				  const void *key, struct bpf_insn *i,
				  bool *in_range)
{
	uint32_t index = key_index(key);
	uint64_t v;

	*in_range = index < m->max_entries;
	if (!*in_range) {
		*i++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					  .dst_reg = BPF_REG_0 };
		return i;
	}
	v = (uint64_t)(uintptr_t)array_elem(m, 0, index);
	*i++ = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM,
				  .dst_reg = BPF_REG_0,
				  .imm = (int32_t)(uint32_t)v };
	*i++ = (struct bpf_insn){ .imm = (int32_t)(uint32_t)(v >> 32) };
	return i;
}

/* array_map_lookup_elem() as instructions (the kernel's
 * array_map_gen_lookup), the value area's address a constant: the common
 * part (jge +3), then the end; a known key, folded. */
static uint32_t array_map_gen_lookup(const struct uxdp_bpf_map *m,
				     const void *key, struct bpf_insn *insn)
{
	bool in_range;

	if (key)
		return (uint32_t)(gen_known(m, key, insn, &in_range) - insn);
	/* jge's immediate is signed 32-bit. */
	if (m->max_entries > INT32_MAX)
		return 0;
	return gen_end(insn, gen_elem(m, insn, 3));
}

/*
 * percpu_array_map_lookup_elem() as instructions (the kernel's
 * percpu_array_map_gen_lookup): the array's element, then this thread's
 * block of them.
 *
 *	(the common part, jge +6)
 *	thread	r1			(xdp_thread_index())
 *	mul	r1, cpu_stride		(lsh when a power of two)
 *	add	r0, r1
 *	(the end)
 */
static struct bpf_insn *gen_this_cpu(const struct uxdp_bpf_array *a,
				      struct bpf_insn *i)
{
	*i++ = (struct bpf_insn){ .code = UXDP_BPF_OP_THREAD,
				  .dst_reg = BPF_REG_1 };
	*i++ = mul_k(BPF_REG_1, a->cpu_stride);
	*i++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_X,
				  .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1 };
	return i;
}

static uint32_t percpu_array_map_gen_lookup(const struct uxdp_bpf_map *m,
					    const void *key,
					    struct bpf_insn *insn)
{
	const struct uxdp_bpf_array *a = to_array(m);
	struct bpf_insn *i;
	bool in_range;

	/* jge's and mul's immediates are signed 32-bit. */
	if (a->cpu_stride > INT32_MAX)
		return 0;
	if (key) {
		/* The element's first CPU's copy, then this thread's. */
		i = gen_known(m, key, insn, &in_range);
		if (in_range)
			i = gen_this_cpu(a, i);
		return (uint32_t)(i - insn);
	}
	if (m->max_entries > INT32_MAX)
		return 0;
	i = gen_this_cpu(a, gen_elem(m, insn, 6));
	return gen_end(insn, i);
}

const struct uxdp_bpf_map_ops uxdp_bpf_array_ops = {
	.map_size = sizeof(struct uxdp_bpf_array),
	.map_alloc_check = array_map_alloc_check,
	.map_alloc = array_map_alloc,
	.map_free = array_map_free,
	.map_lookup = array_map_lookup,
	.map_update = array_map_update,
	.map_delete = array_map_delete,
	.map_get_next_key = uxdp_bpf_array_next_key,
	.map_lookup_elem = array_map_lookup_elem,
	.map_update_elem = array_map_update_elem,
	.map_delete_elem = array_map_delete_elem,
	.map_gen_lookup = array_map_gen_lookup,
};

const struct uxdp_bpf_map_ops uxdp_bpf_percpu_array_ops = {
	.map_size = sizeof(struct uxdp_bpf_array),
	.map_alloc_check = array_map_alloc_check,
	.map_alloc = array_map_alloc,
	.map_free = array_map_free,
	.map_lookup = percpu_array_map_lookup,
	.map_update = percpu_array_map_update,
	.map_delete = array_map_delete,
	.map_get_next_key = uxdp_bpf_array_next_key,
	.map_lookup_elem = percpu_array_map_lookup_elem,
	.map_update_elem = percpu_array_map_update_elem,
	.map_delete_elem = array_map_delete_elem,
	.map_gen_lookup = percpu_array_map_gen_lookup,
};
