/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_QUEUE and BPF_MAP_TYPE_STACK (the kernel's
 * kernel/bpf/queue_stack_maps.c): values with no key, first in first out
 * or last in first out, through bpf_map_push_elem, _pop_elem and
 * _peek_elem, and from the control plane as update (push), lookup (peek)
 * and lookup_and_delete (pop).
 *
 * The kernel's layout and rules: a ring of max_entries + 1 slots of
 * value_size bytes (one always empty, so head == tail is empty and
 * head + 1 == tail full). Push writes at head; a queue pops at tail, a
 * stack at head - 1. A push into a full map is -E2BIG, or with BPF_EXIST
 * drops the oldest value (tail moves on, for a stack too) and goes in.
 * A pop or peek of an empty map zeroes the caller's value and is -ENOENT.
 *
 * One lock per map (the kernel's raw spin lock): every operation moves
 * head or tail, so none could go without one; a critical section is a
 * copy of one value. Nothing points into the ring from outside it, so
 * there is no grace period to wait for.
 */
#include "../internal.h"

#include <stdlib.h>

#include "bpf_internal.h"

/* The kernel's QUEUE_STACK_CREATE_FLAG_MASK: no BPF_F_NO_PREALLOC. */
#define QS_CREATE_FLAGS	(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
			 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
/* uxdp's limit on one map's ring (docs/semantics.md), as for arrays. */
#define QS_MAX_BYTES	(1ULL << 30)
/* The kernel's KMALLOC_MAX_SIZE on x86-64 (4 MiB pages << MAX_ORDER):
 * a value_size above it is -E2BIG before anything is allocated. */
#define QS_MAX_VALUE	(4U << 20)

struct qs_map {
	struct uxdp_bpf_map map;
	struct uxdp_bpf_spinlock lock;
	uint32_t head, tail;		/* under lock */
	uint32_t size;			/* max_entries + 1 */
};

static inline struct qs_map *to_qs(const struct uxdp_bpf_map *m)
{
	return (struct qs_map *)m;
}

static int qs_alloc_check(const struct uxdp_bpf_map *m)
{
	if (!m->max_entries || m->key_size || !m->value_size ||
	    (m->map_flags & ~QS_CREATE_FLAGS))
		return uxdp_fail(EINVAL, "map %s: a %s needs key_size 0, "
				 "value_size and max_entries above 0 and known "
				 "flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 m->type == BPF_MAP_TYPE_QUEUE ? "queue" :
				 "stack", m->key_size, m->value_size,
				 m->max_entries, m->map_flags);
	if (m->value_size > QS_MAX_VALUE)
		return uxdp_fail(E2BIG, "map %s: value_size %u: the kernel's "
				 "largest is %u", m->name, m->value_size,
				 QS_MAX_VALUE);
	if (((uint64_t)m->max_entries + 1) * m->value_size > QS_MAX_BYTES)
		return uxdp_fail(E2BIG, "map %s: %llu bytes of values, more "
				 "than the %llu uxdp allows one queue or stack",
				 m->name, (unsigned long long)
				 (((uint64_t)m->max_entries + 1) * m->value_size),
				 (unsigned long long)QS_MAX_BYTES);
	return 0;
}

static int qs_alloc(struct uxdp_bpf_map *m)
{
	struct qs_map *q = to_qs(m);
	uint64_t size = ((uint64_t)m->max_entries + 1) * m->value_size;

	size = (size + UXDP_CACHE_LINE - 1) & ~(uint64_t)(UXDP_CACHE_LINE - 1);
	if (posix_memalign((void **)&m->values, UXDP_CACHE_LINE, size))
		return uxdp_fail(ENOMEM, "map %s: out of memory for %llu bytes",
				 m->name, (unsigned long long)size);
	memset(m->values, 0, size);
	m->values_size = size;
	q->size = m->max_entries + 1;
	q->head = q->tail = 0;
	uxdp_bpf_spin_init(&q->lock);
	return 0;
}

static void qs_free(struct uxdp_bpf_map *m)
{
	free(m->values);
	m->values = NULL;
}

static inline uint8_t *qs_slot(const struct qs_map *q, uint32_t i)
{
	return q->map.values + (uint64_t)i * q->map.value_size;
}

/* Pop (@del) or peek into @value: the kernel's __queue_map_get and
 * __stack_map_get. */
static long qs_get(struct uxdp_bpf_map *m, void *value, bool del)
{
	struct qs_map *q = to_qs(m);
	uint32_t i;

	uxdp_bpf_spin_lock(&q->lock);
	if (q->head == q->tail) {
		uxdp_bpf_spin_unlock(&q->lock);
		memset(value, 0, m->value_size);
		return -ENOENT;
	}
	if (m->type == BPF_MAP_TYPE_QUEUE) {
		i = q->tail;
		if (del)
			q->tail = i + 1 >= q->size ? 0 : i + 1;
	} else {
		i = q->head ? q->head - 1 : q->size - 1;
		if (del)
			q->head = i;
	}
	memcpy(value, qs_slot(q, i), m->value_size);
	uxdp_bpf_spin_unlock(&q->lock);
	return 0;
}

/* The kernel's queue_stack_map_push_elem. */
static long qs_push(struct uxdp_bpf_map *m, const void *value, uint64_t flags)
{
	struct qs_map *q = to_qs(m);
	uint32_t next;

	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	uxdp_bpf_spin_lock(&q->lock);
	next = q->head + 1 >= q->size ? 0 : q->head + 1;
	if (next == q->tail) {
		if (!(flags & BPF_EXIST)) {
			uxdp_bpf_spin_unlock(&q->lock);
			return -E2BIG;
		}
		/* Full, BPF_EXIST: the oldest value makes room. */
		q->tail = q->tail + 1 >= q->size ? 0 : q->tail + 1;
	}
	memcpy(qs_slot(q, q->head), value, m->value_size);
	q->head = next;
	uxdp_bpf_spin_unlock(&q->lock);
	return 0;
}

static long qs_pop_elem(struct uxdp_bpf_map *m, void *value)
{
	return qs_get(m, value, true);
}

static long qs_peek_elem(struct uxdp_bpf_map *m, void *value)
{
	return qs_get(m, value, false);
}

/* ---- the control plane (map.c checked the map, that the key is NULL) ---- */

static int qs_lookup(const struct uxdp_bpf_map *m, const void *key,
		     void *value, uint64_t flags)
{
	(void)key, (void)flags;
	return (int)qs_get((struct uxdp_bpf_map *)m, value, false);
}

static int qs_update(struct uxdp_bpf_map *m, const void *key,
		     const void *value, uint64_t flags)
{
	(void)key;
	return (int)qs_push(m, value, flags);
}

static int qs_lookup_and_delete(struct uxdp_bpf_map *m, const void *key,
				void *value, uint64_t flags)
{
	(void)key;
	/* The kernel's: no flags for a queue or a stack. */
	if (flags)
		return -EINVAL;
	return (int)qs_get(m, value, true);
}

/* The kernel's queue_stack_map_delete_elem and _get_next_key. */
static int qs_delete(struct uxdp_bpf_map *m, const void *key)
{
	(void)m, (void)key;
	return -EINVAL;
}

static int qs_get_next_key(const struct uxdp_bpf_map *m, const void *key,
			   void *next_key)
{
	(void)m, (void)key, (void)next_key;
	return -EINVAL;
}

#define QS_OPS								\
	.map_size = sizeof(struct qs_map),				\
	.map_alloc_check = qs_alloc_check,				\
	.map_alloc = qs_alloc,						\
	.map_free = qs_free,						\
	.map_lookup = qs_lookup,					\
	.map_update = qs_update,					\
	.map_delete = qs_delete,					\
	.map_get_next_key = qs_get_next_key,				\
	.map_lookup_and_delete = qs_lookup_and_delete,			\
	.map_push_elem = qs_push,					\
	.map_pop_elem = qs_pop_elem,					\
	.map_peek_elem = qs_peek_elem
	/* No map_lookup_elem, _update_elem, _delete_elem: the safety pass
	 * lets only push, pop and peek take a queue or a stack. */

const struct uxdp_bpf_map_ops uxdp_bpf_queue_ops = { QS_OPS };
const struct uxdp_bpf_map_ops uxdp_bpf_stack_ops = { QS_OPS };
