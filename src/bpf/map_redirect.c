/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_DEVMAP, _DEVMAP_HASH and _XSKMAP (the kernel's devmap.c and
 * xskmap.c): the targets bpf_redirect_map() sends a packet to, carried out
 * by the xdp layer's redirect maps (struct uxdp_map: a slot per key, a
 * per-CPU bulk queue per target, flushed once per poll, a device taken
 * out of every map when it is destroyed).
 *
 * Beside the struct uxdp_map, the values a program's lookup reads and the
 * control plane's gives back, one 8-byte element per key:
 *
 *	DEVMAP	struct bpf_devmap_val { u32 ifindex; u32 prog; }
 *	XSKMAP	u32: the key (a program only tests the result for NULL)
 *
 * A lookup finds a value only while the slot holds a target (so not after
 * its device went away). A program may not write them (BPF_F_RDONLY_PROG,
 * set as the kernel sets it for devmaps), nor update or delete (the
 * safety pass refuses it, as the kernel's verifier).
 *
 * DEVMAP_HASH (the kernel's dev_map_hash_ops): the same slots, each key
 * given one (any u32 key) through buckets of nodes that programs walk
 * without a lock: a writer (serialised by the map's mutex) publishes a new
 * node with a release store, unlinks a deleted one and waits a grace
 * period before its slot can hold another key, so a program that found
 * the node never reaches another key's device through it. Its errors are
 * the kernel's: ifindex 0 -EINVAL (a devmap's empties its slot), a new key
 * in a full map -E2BIG, delete of a missing key -ENOENT, get_next_key in
 * bucket order. A key whose device went away is found by no lookup and
 * skipped by get_next_key; its node goes when the key is deleted,
 * replaced, or when a new key needs the room (the kernel drops it at
 * once).
 *
 * Not yet: BPF_F_BROADCAST (a run asking for it ends XDP_ABORTED, counted
 * and printed once), a devmap entry's second-stage program (its update is
 * -EOPNOTSUPP).
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include <uxdp/xdp.h>
#include <uxdp/xsk.h>
#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "../dev/dev_internal.h"
#include "../xdp/xdp_internal.h"

/* The kernel's DEV_CREATE_FLAG_MASK (and xskmap's): BPF_F_RDONLY_PROG is
 * the kernel's own to set. */
#define RDR_CREATE_FLAGS	(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY)
#define RDR_MAX_ENTRIES		(1U << 20)	/* struct uxdp_map's */

/* A DEVMAP_HASH key and the slot it has. */
struct rdr_node {
	struct rdr_node *next;		/* readers: acquire loads */
	uint32_t key, slot;
};

struct rdr_map {
	struct uxdp_bpf_map map;
	struct uxdp_map *um;
	/* DEVMAP_HASH: n_buckets (a power of two) lists, the slots no key
	 * has (free[0..nfree)), how many nodes; writers under lock. */
	struct rdr_node **buckets;
	uint32_t n_buckets, nfree, items;
	uint32_t *free;
	pthread_mutex_t lock;
};

static inline struct rdr_map *to_rdr(const struct uxdp_bpf_map *m)
{
	return (struct rdr_map *)m;
}

static inline bool is_hash(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_DEVMAP_HASH;
}

static inline bool is_dev(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_DEVMAP || is_hash(m);
}

static int rdr_alloc_check(const struct uxdp_bpf_map *m)
{
	bool vs_ok = is_dev(m) ? m->value_size == 4 || m->value_size == 8 :
				 m->value_size == 4;

	if (!m->max_entries || m->key_size != 4 || !vs_ok ||
	    (m->map_flags & ~RDR_CREATE_FLAGS))
		return uxdp_fail(EINVAL, "map %s: a%s needs key_size 4, "
				 "value_size %s, max_entries above 0 and known "
				 "flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 is_hash(m) ? " devmap_hash" :
				 is_dev(m) ? " devmap" : "n xskmap",
				 is_dev(m) ? "4 or 8" : "4", m->key_size,
				 m->value_size, m->max_entries, m->map_flags);
	if (m->max_entries > RDR_MAX_ENTRIES)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: uxdp's redirect "
				 "maps have at most %u", m->name,
				 m->max_entries, RDR_MAX_ENTRIES);
	return 0;
}

static int rdr_alloc(struct uxdp_bpf_map *m)
{
	struct rdr_map *r = to_rdr(m);
	uint64_t size = (uint64_t)m->max_entries * 8;

	r->um = uxdp_map_create(m->max_entries);
	if (!r->um)
		return uxdp_fail(ENOMEM, "map %s: %s", m->name, uxdp_errmsg());
	size = (size + UXDP_CACHE_LINE - 1) & ~(uint64_t)(UXDP_CACHE_LINE - 1);
	if (posix_memalign((void **)&m->values, UXDP_CACHE_LINE, size)) {
		uxdp_map_destroy(r->um);
		r->um = NULL;
		return uxdp_fail(ENOMEM, "map %s: out of memory", m->name);
	}
	memset(m->values, 0, size);
	m->values_size = size;
	/* As the kernel does for devmaps: a lookup's value is not the
	 * program's to write. */
	m->map_flags |= BPF_F_RDONLY_PROG;
	if (is_hash(m)) {
		uint32_t i;

		r->n_buckets = 1;
		while (r->n_buckets < m->max_entries)
			r->n_buckets <<= 1;
		r->buckets = calloc(r->n_buckets, sizeof(r->buckets[0]));
		r->free = malloc((size_t)m->max_entries * sizeof(r->free[0]));
		if (!r->buckets || !r->free) {
			free(r->buckets);
			free(r->free);
			r->buckets = NULL;
			r->free = NULL;
			uxdp_map_destroy(r->um);
			r->um = NULL;
			free(m->values);
			m->values = NULL;
			return uxdp_fail(ENOMEM, "map %s: out of memory",
					 m->name);
		}
		/* Slot 0 first out. */
		for (i = 0; i < m->max_entries; i++)
			r->free[i] = m->max_entries - 1 - i;
		r->nfree = m->max_entries;
		pthread_mutex_init(&r->lock, NULL);
	}
	return 0;
}

static void rdr_free(struct uxdp_bpf_map *m)
{
	struct rdr_map *r = to_rdr(m);

	if (r->buckets) {
		uint32_t b;

		for (b = 0; b < r->n_buckets; b++)
			for (struct rdr_node *n = r->buckets[b], *nx; n;
			     n = nx) {
				nx = n->next;
				free(n);
			}
		free(r->buckets);
		free(r->free);
		r->buckets = NULL;
		pthread_mutex_destroy(&r->lock);
	}
	uxdp_map_destroy(r->um);
	free(m->values);
	m->values = NULL;
}

/* ---- DEVMAP_HASH's keys ---------------------------------------------------- */

/* The kernel's dev_map_index_hash: the key's low bits. */
static inline struct rdr_node **rdr_bucket(const struct rdr_map *r,
					   uint32_t key)
{
	return &r->buckets[key & (r->n_buckets - 1)];
}

/* The node of @key, or NULL: from a program (inside a read section) or a
 * writer. Acquire pairs with the release that published each node. */
static struct rdr_node *rdr_find(const struct rdr_map *r, uint32_t key)
{
	struct rdr_node *n = __atomic_load_n(rdr_bucket(r, key),
					     __ATOMIC_ACQUIRE);

	while (n && n->key != key)
		n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
	return n;
}

/* @key's slot for the datapath, or UINT32_MAX: what every lookup and
 * redirect of a DEVMAP_HASH goes through. */
static inline uint32_t rdr_slot(const struct uxdp_bpf_map *m, uint32_t key)
{
	struct rdr_node *n;

	if (!is_hash(m))
		return key;
	n = rdr_find(to_rdr(m), key);
	return n ? n->slot : UINT32_MAX;
}

/* Slot @k holds @t (NULL: empty), value @v (8 bytes) written first. */
static void rdr_set(struct rdr_map *r, uint32_t k, struct uxdp_xdp_target *t,
		    const uint8_t *v)
{
	uint64_t *e = (uint64_t *)(void *)(r->map.values + (uint64_t)k * 8);
	uint64_t x;

	/*
	 * One 8-byte store: a program reading the value while it is
	 * replaced reads the old one or the new one, whole (the kernel's
	 * readers hold the old node). An emptied slot keeps its value: a
	 * program that found the target before it went may still read it,
	 * and no lookup finds a value while the slot is empty (the kernel's
	 * old node lives until its grace period too).
	 */
	if (t) {
		memcpy(&x, v, 8);
		__atomic_store_n(e, x, __ATOMIC_RELAXED);
	}
	/* Release (uxdp_map_update): a program that finds the target
	 * finds the value written. */
	uxdp_map_update(r->um, k, t);
}

static int rdr_lookup(const struct uxdp_bpf_map *m, const void *key,
		      void *value, uint64_t flags)
{
	struct rdr_map *r = to_rdr(m);
	uint32_t k;

	(void)flags;
	/* The kernel's xskmap has no lookup from user space. */
	if (!is_dev(m))
		return uxdp_fail(EOPNOTSUPP, "map %s: an xskmap has no "
				 "control-plane lookup", m->name);
	memcpy(&k, key, sizeof(k));
	if (is_hash(m)) {
		pthread_mutex_lock(&r->lock);
		k = rdr_slot(m, k);
		if (k < m->max_entries && uxdp_map_lookup(r->um, k))
			memcpy(value, m->values + (uint64_t)k * 8,
			       m->value_size);
		else
			k = UINT32_MAX;
		pthread_mutex_unlock(&r->lock);
		return k == UINT32_MAX ? -ENOENT : 0;
	}
	if (k >= m->max_entries || !uxdp_map_lookup(r->um, k))
		return -ENOENT;
	memcpy(value, m->values + (uint64_t)k * 8, m->value_size);
	return 0;
}

/*
 * Unlink @n (under lock) and wait until no program can hold it, then its
 * slot may take another key. From inside a poll the wait would wait for
 * itself: -EDEADLK, nothing changed.
 */
static int rdr_unlink(struct rdr_map *r, struct rdr_node *n)
{
	struct rdr_node **pp = rdr_bucket(r, n->key);

	if (xdp_rcu_in_reader())
		return xdp_synchronize("devmap_hash delete");
	while (*pp != n)
		pp = &(*pp)->next;
	/* Release: a reader past this point finds the rest of the list. */
	__atomic_store_n(pp, n->next, __ATOMIC_RELEASE);
	rdr_set(r, n->slot, NULL, NULL);
	/* Outside any read section (above): this waits for the programs
	 * that may still hold the node, and cannot fail. */
	(void)xdp_synchronize("devmap_hash delete");
	r->free[r->nfree++] = n->slot;
	r->items--;
	free(n);
	return 0;
}

/* A full map's room: the keys whose device went away go. */
static int rdr_purge(struct rdr_map *r)
{
	uint32_t b;
	int err;

	for (b = 0; b < r->n_buckets; b++)
		for (struct rdr_node *n = r->buckets[b], *nx; n; n = nx) {
			nx = n->next;
			if (uxdp_map_lookup(r->um, n->slot))
				continue;
			err = rdr_unlink(r, n);
			if (err)
				return err;
		}
	return 0;
}

/* The kernel's __dev_map_hash_update_elem, in its order. */
static int rdr_hash_update(struct rdr_map *r, uint32_t key,
			   const uint32_t v[2], uint64_t flags,
			   struct uxdp_dev *dev)
{
	struct rdr_node *n, **head;
	int err = 0;

	pthread_mutex_lock(&r->lock);
	n = rdr_find(r, key);
	if (n && (flags & BPF_NOEXIST)) {
		err = -EEXIST;
		goto out;
	}
	if (n) {
		rdr_set(r, n->slot, uxdp_dev_target(dev), (const uint8_t *)v);
		goto out;
	}
	if (r->items >= r->map.max_entries) {
		err = rdr_purge(r);
		if (!err && r->items >= r->map.max_entries)
			err = -E2BIG;
		if (err)
			goto out;
	}
	n = malloc(sizeof(*n));
	if (!n) {
		err = uxdp_fail(ENOMEM, "map %s: out of memory", r->map.name);
		goto out;
	}
	n->key = key;
	n->slot = r->free[--r->nfree];
	rdr_set(r, n->slot, uxdp_dev_target(dev), (const uint8_t *)v);
	head = rdr_bucket(r, key);
	n->next = *head;
	/* Release: a program that finds the node finds it whole, and its
	 * slot set. */
	__atomic_store_n(head, n, __ATOMIC_RELEASE);
	r->items++;
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

static int rdr_hash_delete(struct rdr_map *r, uint32_t key)
{
	struct rdr_node *n;
	int err;

	pthread_mutex_lock(&r->lock);
	n = rdr_find(r, key);
	err = n ? rdr_unlink(r, n) : -ENOENT;
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* The kernel's dev_map_hash_get_next_key: the next node in its bucket,
 * then the following buckets'; a missing key (or none) gives the first.
 * Keys whose device went away are skipped. */
static int rdr_hash_next_key(const struct uxdp_bpf_map *m, const void *key,
			     void *next_key)
{
	struct rdr_map *r = to_rdr(m);
	struct rdr_node *n = NULL;
	uint32_t b = 0, k;
	int err = -ENOENT;

	pthread_mutex_lock(&r->lock);
	if (key) {
		memcpy(&k, key, sizeof(k));
		n = rdr_find(r, k);
	}
	if (n) {
		b = (n->key & (r->n_buckets - 1)) + 1;
		n = n->next;
	}
	for (;;) {
		while (n && !uxdp_map_lookup(r->um, n->slot))
			n = n->next;
		if (n || b >= r->n_buckets)
			break;
		n = r->buckets[b++];
	}
	if (n) {
		memcpy(next_key, &n->key, sizeof(n->key));
		err = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

static int rdr_update(struct uxdp_bpf_map *m, const void *key,
		      const void *value, uint64_t flags)
{
	struct rdr_map *r = to_rdr(m);
	uint32_t k, v[2] = { 0, 0 };
	struct uxdp_dev *dev;

	memcpy(&k, key, sizeof(k));
	if (!is_dev(m))
		return uxdp_fail(EOPNOTSUPP, "map %s: an xskmap's values are "
				 "sockets: uxdp_bpf_xskmap_set() puts a uxdp "
				 "socket in (the kernel's update takes its "
				 "file descriptor)", m->name);
	/* dev_map_update_elem's order (a hash's: its ifindex first). */
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (!is_hash(m)) {
		if (k >= m->max_entries)
			return -E2BIG;
		if (flags == BPF_NOEXIST)
			return -EEXIST;
	}
	memcpy(v, value, m->value_size);
	if (is_hash(m) && !v[0])
		return -EINVAL;
	/* bpf_prog.fd is signed: only a positive one names a program (-1
	 * is the usual none); with ifindex 0 it is -EINVAL (the kernel's). */
	if ((int32_t)v[1] > 0 && !v[0])
		return -EINVAL;
	if ((int32_t)v[1] > 0)
		return uxdp_fail(EOPNOTSUPP, "map %s: a devmap entry's program "
				 "(bpf_prog %d) is not supported yet", m->name,
				 (int32_t)v[1]);
	v[1] = 0;
	if (!v[0]) {
		/* ifindex 0: no device (the kernel's empty entry). */
		rdr_set(r, k, NULL, NULL);
		return 0;
	}
	dev = uxdp_dev_get_by_index(v[0]);
	if (!dev)
		return uxdp_fail(EINVAL, "map %s: no device has ifindex %u",
				 m->name, v[0]);
	if (is_hash(m))
		return rdr_hash_update(r, k, v, flags, dev);
	rdr_set(r, k, uxdp_dev_target(dev), (const uint8_t *)v);
	return 0;
}

static int rdr_delete(struct uxdp_bpf_map *m, const void *key)
{
	uint32_t k;

	memcpy(&k, key, sizeof(k));
	if (is_hash(m))
		return rdr_hash_delete(to_rdr(m), k);
	/* dev_map_delete_elem and xsk_map_delete_elem: 0 for an empty slot
	 * too. */
	if (k >= m->max_entries)
		return -EINVAL;
	rdr_set(to_rdr(m), k, NULL, NULL);
	return 0;
}

UXDP_EXPORT int uxdp_bpf_xskmap_set(struct uxdp_bpf_map *map, uint32_t key,
				    struct uxdp_xsk *xsk)
{
	uint32_t v[2] = { key, 0 };

	uxdp_clear_err();
	if (!map || map->type != BPF_MAP_TYPE_XSKMAP || !map->created)
		return uxdp_fail(EINVAL, "map %s: not a loaded xskmap",
				 map ? map->name : "(null)");
	if (key >= map->max_entries)
		return uxdp_fail(E2BIG, "map %s: slot %u of %u", map->name, key,
				 map->max_entries);
	rdr_set(to_rdr(map), key, xsk ? uxdp_xsk_target(xsk) : NULL,
		(const uint8_t *)v);
	return 0;
}

/* A program's lookup: the value while the slot holds a target. */
static void *rdr_lookup_elem(struct uxdp_bpf_map *m, const void *key)
{
	struct rdr_map *r = to_rdr(m);
	uint32_t k;

	memcpy(&k, key, sizeof(k));
	k = rdr_slot(m, k);
	if (unlikely(k >= m->max_entries) || !uxdp_map_lookup(r->um, k))
		return NULL;
	return m->values + (uint64_t)k * 8;
}

/* bpf_redirect_map: the kernel's __bpf_xdp_redirect_map. */
static uint32_t rdr_redirect(struct uxdp_bpf_map *m, uint32_t key,
			     uint64_t flags)
{
	static uint32_t warned;
	uint64_t allowed = 3 | (is_dev(m) ? BPF_F_BROADCAST |
					    BPF_F_EXCLUDE_INGRESS : 0);
	struct uxdp_xdp_target *t;
	struct uxdp_xdp_cpu *cpu;

	if (unlikely(flags & ~allowed))
		return UXDP_ABORTED;
	if (unlikely(flags & BPF_F_BROADCAST)) {
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			uxdp_pr(UXDP_WARN, "bpf: map %s: bpf_redirect_map with "
				"BPF_F_BROADCAST is not supported yet: the run "
				"ends XDP_ABORTED (printed once)\n", m->name);
		return UXDP_ABORTED;
	}
	key = rdr_slot(m, key);
	t = key < m->max_entries ? uxdp_map_lookup(to_rdr(m)->um, key) : NULL;
	cpu = uxdp_tls_cpu;
	if (!t) {
		/* As the kernel's: a miss clears an earlier redirect's
		 * target. */
		if (cpu)
			cpu->ri_target = NULL;
		return (uint32_t)(flags & 3);
	}
	/* Outside a poll (a test run) there is nowhere to send it: the
	 * verdict only, as the kernel's test run. */
	if (cpu)
		cpu->ri_target = t;
	return UXDP_REDIRECT;
}

/* bpf_redirect(ifindex, flags): the kernel's bpf_xdp_redirect. An
 * ifindex no device has is a REDIRECT with no target, which the poll
 * counts (redirect_no_target) and drops. */
uint32_t uxdp_bpf_redirect_ifindex(uint32_t ifindex, uint64_t flags)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;
	struct uxdp_dev *dev;

	if (unlikely(flags))
		return UXDP_ABORTED;
	if (cpu) {
		dev = dev_by_ifindex_rcu(ifindex);
		cpu->ri_target = dev ? uxdp_dev_target(dev) : NULL;
	}
	return UXDP_REDIRECT;
}

#define RDR_OPS								\
	.map_size = sizeof(struct rdr_map),				\
	.map_alloc_check = rdr_alloc_check,				\
	.map_alloc = rdr_alloc,						\
	.map_free = rdr_free,						\
	.map_lookup = rdr_lookup,					\
	.map_update = rdr_update,					\
	.map_delete = rdr_delete,					\
	.map_lookup_elem = rdr_lookup_elem,				\
	.map_redirect = rdr_redirect

const struct uxdp_bpf_map_ops uxdp_bpf_devmap_ops = {
	RDR_OPS, .map_get_next_key = uxdp_bpf_array_next_key,
};
const struct uxdp_bpf_map_ops uxdp_bpf_xskmap_ops = {
	RDR_OPS, .map_get_next_key = uxdp_bpf_array_next_key,
};
const struct uxdp_bpf_map_ops uxdp_bpf_devmap_hash_ops = {
	RDR_OPS, .map_get_next_key = rdr_hash_next_key,
};
