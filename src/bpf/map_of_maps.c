/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_ARRAY_OF_MAPS and BPF_MAP_TYPE_HASH_OF_MAPS (the kernel's
 * kernel/bpf/map_in_map.c with the fd array and the fd hash): maps whose
 * values are maps. A program's lookup gives the inner map (or NULL), which
 * it passes to the map calls as it would a map of its own; the safety pass
 * knows the inner map by the of-map's inner definition (map->inner, from
 * the object's BTF), which every map put in it must match, as the
 * kernel's bpf_map_meta_equal: type, key and value sizes, flags, and for
 * arrays max_entries unless the definition has BPF_F_INNER_MAP.
 *
 *	ARRAY_OF_MAPS	slots[key], a struct uxdp_bpf_map * each
 *	HASH_OF_MAPS	a HASH of the same keys whose 8-byte values are the
 *			pointers (map_hash.c, under this family's lock)
 *
 * The control plane's values are map ids (uxdp_bpf_map_id()), as the
 * kernel's lookups give ids where its updates take descriptors. A slot
 * holds a reference on its map; a replaced or deleted one is put after a
 * grace period the writer waits for (a run is a read-side section: the
 * family is rcu_reader), so a program that looked it up finishes with it
 * first. Programs may only look up (the kernel's verifier refuses the
 * rest, and so does the safety pass).
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

struct of_maps {
	struct uxdp_bpf_map map;
	struct uxdp_bpf_map **slots;	/* ARRAY_OF_MAPS: release/acquire */
	struct uxdp_bpf_map *h;		/* HASH_OF_MAPS: key -> pointer */
	pthread_mutex_t lock;		/* writers */
};

static inline struct of_maps *to_om(const struct uxdp_bpf_map *m)
{
	return (struct of_maps *)m;
}

static inline bool is_array(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_ARRAY_OF_MAPS;
}

/* What may be an inner map: the families whose maps a program uses by
 * pointer alone (no prog arrays, no of-maps in of-maps). */
static bool inner_ok(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_LPM_TRIE:
		return true;
	default:
		return false;
	}
}

/* The kernel's: fd_array_map_alloc_check refuses the program-access
 * flags for an array of maps; a hash of maps takes a hash's. */
#define OM_ARRAY_FLAGS	(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY)
#define OM_HASH_FLAGS	(OM_ARRAY_FLAGS | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | \
			 BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED)

static int om_alloc_check(const struct uxdp_bpf_map *m)
{
	const struct uxdp_bpf_map *in = m->inner;
	char tb[24];

	if (!in)
		return uxdp_fail(EINVAL, "map %s: an of-map needs its inner "
				 "map's definition (__array(values, struct "
				 "{ ... }) in its BTF definition)", m->name);
	if (!inner_ok(in->type))
		return uxdp_fail(EOPNOTSUPP, "map %s: inner maps of type %s "
				 "are not supported (arrays, hashes and LPM "
				 "tries are)", m->name,
				 uxdp_bpf_map_type_str(in->type, tb,
						       sizeof(tb)));
	if (!m->max_entries || m->value_size != 4 ||
	    (is_array(m) && m->key_size != 4) || !m->key_size ||
	    (m->map_flags & ~(is_array(m) ? OM_ARRAY_FLAGS : OM_HASH_FLAGS)))
		return uxdp_fail(EINVAL, "map %s: an of-map needs value_size 4 "
				 "(a map), %s, max_entries above 0 and known "
				 "flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 is_array(m) ? "key_size 4" : "a key",
				 m->key_size, m->value_size, m->max_entries,
				 m->map_flags);
	if (is_array(m) && m->max_entries > (1U << 24))
		return uxdp_fail(E2BIG, "map %s: max_entries %u: uxdp allows an "
				 "array of maps at most 2^24", m->name,
				 m->max_entries);
	/* The definition is checked as a map of its own would be (a bad
	 * inner definition fails the outer map, as the kernel's inner
	 * map fd would not have been made). */
	return in->ops->map_alloc_check(in);
}

static int om_alloc(struct uxdp_bpf_map *m)
{
	struct of_maps *om = to_om(m);
	int err;

	if (is_array(m)) {
		om->slots = calloc(m->max_entries, sizeof(*om->slots));
		if (!om->slots)
			return uxdp_fail(ENOMEM, "map %s: out of memory",
					 m->name);
	} else {
		om->h = uxdp_bpf_map_new(m->name, BPF_MAP_TYPE_HASH,
					 m->key_size, sizeof(void *),
					 m->max_entries,
					 m->map_flags & (BPF_F_NO_PREALLOC |
							 BPF_F_ZERO_SEED));
		if (!om->h)
			return uxdp_fail(ENOMEM, "map %s: out of memory",
					 m->name);
		err = uxdp_bpf_map_create(om->h);
		if (err) {
			uxdp_bpf_map_free(om->h);
			om->h = NULL;
			return err;
		}
		/* Its values are map pointers: never the control plane's to
		 * find and write (a review's finding). */
		uxdp_bpf_map_unlist(om->h);
	}
	pthread_mutex_init(&om->lock, NULL);
	return 0;
}

/* The map in the hash's value @v (8 bytes, written whole under lock). */
static inline struct uxdp_bpf_map *hval(const void *v)
{
	struct uxdp_bpf_map *p;

	memcpy(&p, v, sizeof(p));
	return p;
}

/* Nothing uses the of-map any more: its maps' references go now. */
static void om_free(struct uxdp_bpf_map *m)
{
	struct of_maps *om = to_om(m);
	uint32_t i;

	if (om->slots) {
		for (i = 0; i < m->max_entries; i++)
			uxdp_bpf_map_free(om->slots[i]);
		free(om->slots);
	}
	if (om->h) {
		uint8_t *k = malloc(m->key_size), *next = malloc(m->key_size);
		uint8_t v[sizeof(void *)];
		int e;

		/* Every key's map, then the hash (a NULL key: the first). */
		for (e = k && next ? uxdp_bpf_map_get_next_key(om->h, NULL,
							       next) : -ENOMEM;
		     !e; e = uxdp_bpf_map_get_next_key(om->h, k, next)) {
			memcpy(k, next, m->key_size);
			if (!uxdp_bpf_map_lookup(om->h, k, v, 0))
				uxdp_bpf_map_free(hval(v));
		}
		free(k);
		free(next);
		uxdp_bpf_map_free(om->h);
	}
	pthread_mutex_destroy(&om->lock);
}

/* The kernel's bpf_map_meta_equal (and array_map_meta_equal). */
static int om_fits(const struct uxdp_bpf_map *m, const struct uxdp_bpf_map *in)
{
	const struct uxdp_bpf_map *d = m->inner;
	bool any_size = (d->type == BPF_MAP_TYPE_ARRAY ||
			 d->type == BPF_MAP_TYPE_PERCPU_ARRAY) ?
			!!(d->map_flags & BPF_F_INNER_MAP) : true;

	if (in->type == m->type || in->inner)
		return uxdp_fail(EINVAL, "map %s: map %s is an of-map: one "
				 "level only", m->name, in->name);
	if (in->type != d->type || in->key_size != d->key_size ||
	    in->value_size != d->value_size || in->map_flags != d->map_flags ||
	    (!any_size && in->max_entries != d->max_entries))
		return uxdp_fail(EINVAL, "map %s: map %s (type %u, key %u, "
				 "value %u, max_entries %u, flags 0x%x) is not "
				 "of its inner definition (type %u, key %u, "
				 "value %u, max_entries %u, flags 0x%x)",
				 m->name, in->name, in->type, in->key_size,
				 in->value_size, in->max_entries,
				 in->map_flags, d->type, d->key_size,
				 d->value_size, d->max_entries, d->map_flags);
	return 0;
}

/*
 * @key holds @in (a reference taken over; NULL: delete). 0 or the
 * kernel's error; the old map is put after the grace period, waited for
 * here (so never from inside a poll: -EDEADLK).
 */
static int om_set(struct of_maps *om, const void *key, struct uxdp_bpf_map *in,
		  uint64_t flags)
{
	struct uxdp_bpf_map *m = &om->map, *old = NULL;
	uint8_t v[sizeof(void *)];
	uint32_t idx = 0;
	int err = 0;

	if (xdp_rcu_in_reader()) {
		uxdp_bpf_map_free(in);
		return uxdp_fail(EDEADLK, "map %s: an of-map changed from "
				 "inside a poll or a run would wait for itself",
				 m->name);
	}
	if (is_array(m)) {
		memcpy(&idx, key, sizeof(idx));
		if (in && flags != BPF_ANY)
			err = uxdp_fail(EINVAL, "map %s: update: an array of "
					"maps takes BPF_ANY only (flags "
					"0x%llx)", m->name,
					(unsigned long long)flags);
		else if (idx >= m->max_entries)
			err = -E2BIG;
	}
	if (!err && in)
		err = om_fits(m, in);
	if (err) {
		uxdp_bpf_map_free(in);
		return err;
	}
	pthread_mutex_lock(&om->lock);
	if (is_array(m)) {
		old = om->slots[idx];
		if (!in && !old) {
			err = -ENOENT;
		} else {
			/* Release: a program that finds the map sees it
			 * whole. */
			__atomic_store_n(&om->slots[idx], in, __ATOMIC_RELEASE);
		}
	} else {
		if (!uxdp_bpf_map_lookup(om->h, key, v, 0))
			old = hval(v);
		if (in) {
			memcpy(v, &in, sizeof(in));
			err = uxdp_bpf_map_update(om->h, key, v, flags);
		} else {
			err = uxdp_bpf_map_delete(om->h, key);
		}
		if (err)
			old = NULL;
	}
	pthread_mutex_unlock(&om->lock);
	if (err) {
		uxdp_bpf_map_free(in);
		return err;
	}
	/* Not in a reader (checked above): this cannot fail. */
	if (old && !xdp_synchronize("of-map"))
		uxdp_bpf_map_free(old);
	return 0;
}

static int om_lookup(const struct uxdp_bpf_map *m, const void *key,
		     void *value, uint64_t flags)
{
	struct of_maps *om = to_om(m);
	struct uxdp_bpf_map *in = NULL;
	uint8_t v[sizeof(void *)];
	uint32_t idx, id = 0;

	(void)flags;
	pthread_mutex_lock(&om->lock);
	if (is_array(m)) {
		memcpy(&idx, key, sizeof(idx));
		if (idx < m->max_entries)
			in = om->slots[idx];
	} else if (!uxdp_bpf_map_lookup(om->h, key, v, 0)) {
		in = hval(v);
	}
	if (in)
		id = in->id;
	pthread_mutex_unlock(&om->lock);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, sizeof(id));
	return 0;
}

static int om_update(struct uxdp_bpf_map *m, const void *key,
		     const void *value, uint64_t flags)
{
	struct uxdp_bpf_map *in;
	uint32_t id;

	memcpy(&id, value, sizeof(id));
	/* The kernel's order: flags (a hash's) and the index first. */
	if (!is_array(m) && flags > BPF_EXIST)
		return -EINVAL;
	if (is_array(m)) {
		uint32_t idx;

		memcpy(&idx, key, sizeof(idx));
		if (flags != BPF_ANY)
			return uxdp_fail(EINVAL, "map %s: update: an array of "
					 "maps takes BPF_ANY only", m->name);
		if (idx >= m->max_entries)
			return -E2BIG;
	}
	in = uxdp_bpf_map_get_by_id(id);
	if (!in)
		return uxdp_fail(ENOENT, "map %s: update: no map has id %u",
				 m->name, id);
	return om_set(to_om(m), key, in, flags);
}

static int om_delete(struct uxdp_bpf_map *m, const void *key)
{
	return om_set(to_om(m), key, NULL, BPF_ANY);
}

static int om_get_next_key(const struct uxdp_bpf_map *m, const void *key,
			   void *next_key)
{
	if (!is_array(m))
		return uxdp_bpf_map_get_next_key(to_om(m)->h, key, next_key);
	return uxdp_bpf_array_next_key(m, key, next_key);
}

/* A program's lookup: the inner map itself, or NULL. */
static void *om_lookup_elem(struct uxdp_bpf_map *m, const void *key)
{
	struct of_maps *om = to_om(m);
	const void *v;
	uint32_t idx;

	if (is_array(m)) {
		memcpy(&idx, key, sizeof(idx));
		if (unlikely(idx >= m->max_entries))
			return NULL;
		/* Pairs with om_set's release. */
		return __atomic_load_n(&om->slots[idx], __ATOMIC_ACQUIRE);
	}
	v = om->h->ops->map_lookup_elem(om->h, key);
	return v ? hval(v) : NULL;
}

#define OM_OPS							\
	.map_size = sizeof(struct of_maps),				\
	.rcu_reader = true,						\
	.map_alloc_check = om_alloc_check,				\
	.map_alloc = om_alloc,						\
	.map_free = om_free,						\
	.map_lookup = om_lookup,					\
	.map_update = om_update,					\
	.map_delete = om_delete,					\
	.map_get_next_key = om_get_next_key,				\
	.map_lookup_elem = om_lookup_elem

const struct uxdp_bpf_map_ops uxdp_bpf_array_of_maps_ops = { OM_OPS };
const struct uxdp_bpf_map_ops uxdp_bpf_hash_of_maps_ops = { OM_OPS };
