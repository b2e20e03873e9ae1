/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_HASH, PERCPU_HASH, LRU_HASH and LRU_PERCPU_HASH (the
 * kernel's kernel/bpf/hashtab.c), over liburcu's lock-free hash table
 * (cds_lfht, urcu/rculfhash.h) in the library's RCU flavour (urcu-memb,
 * src/xdp/xdp_internal.h).
 *
 * An element is one allocation: the table's node, the RCU head that frees
 * it, its hash, then the key and the value, each rounded up to 8 bytes as
 * the kernel's (a PERCPU_HASH element has UXDP_BPF_NR_CPUS values, one
 * per thread index). Readers (programs, control-plane lookups and
 * iterations) take no lock: they run inside a read-side section, and an
 * element deleted or replaced is freed only after a grace period, so a
 * value pointer a program holds stays valid to the end of its run.
 *
 * Updates follow the kernel's semantics with its flags and errors: HASH
 * replaces an existing element with a new one (a reader sees the whole old
 * value or the whole new one, never a mix); PERCPU_HASH writes an existing
 * element's values in place, as the kernel does. max_entries is the most
 * elements the table holds (-E2BIG for one more; replacing an element of
 * a full table is fine, as in the kernel). Elements are allocated per
 * update: the kernel's preallocation is a memory policy (BPF_F_NO_PREALLOC
 * is accepted and changes nothing the program or the control plane can
 * see, but the kernel's pool reuses a deleted element at once, which here
 * waits for its grace period).
 *
 * The iteration order (get_next_key) is the table's, not the kernel's; the
 * kernel's depends on a random seed too. Keys a program cannot prove it
 * reads inside the value stay refused by the safety pass: the values have
 * no single region to check a variable offset against.
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

/* The flags a hash takes (the kernel's HTAB_CREATE_FLAG_MASK). */
#define HTAB_CREATE_FLAGS	(BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | \
				 BPF_F_NUMA_NODE | BPF_F_RDONLY |	\
				 BPF_F_WRONLY | BPF_F_RDONLY_PROG |	\
				 BPF_F_WRONLY_PROG | BPF_F_ZERO_SEED)
/* The kernel's KMALLOC_MAX_SIZE on x86-64 (4 MiB) and PCPU_MIN_UNIT_SIZE:
 * the limits of htab_map_alloc_check(). */
#define HTAB_KMALLOC_MAX	(4ULL << 20)
#define HTAB_PCPU_MAX_ELEM	32768
/* The most buckets a table gets: 2^20, 16 MiB of them. */
#define HTAB_MAX_BUCKETS	(1UL << 20)
/* A lookup-then-publish that keeps losing races to other writers gives
 * up rather than spin: every try lost to a completed update. */
#define HTAB_UPDATE_TRIES	64

struct htab {
	struct uxdp_bpf_map map;
	struct cds_lfht *ht;
	uint64_t seed;
	uint32_t key_stride;		/* key_size rounded up to 8 */
	uint32_t value_stride;		/* value_size rounded up to 8 */
	size_t elem_size;
	long count;			/* elements in the table (atomic) */
	/* LRU: every element in a slot, a clock hand over the slots, the
	 * free ones on a stack; writers serialised by the lock. */
	pthread_mutex_t lock;
	struct htab_elem **slots;
	uint32_t *free_slots;
	uint32_t nfree, hand;
};

struct htab_elem {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	uint32_t slot;			/* LRU: its slot */
	uint8_t ref;			/* LRU: a program looked it up */
	uint64_t data[];		/* key, then the value(s) */
};

/* What the table's match function compares a node with. */
struct htab_key {
	const void *key;
	uint32_t size;
};

static inline struct htab *to_htab(const struct uxdp_bpf_map *m)
{
	return (struct htab *)m;
}

static inline bool is_percpu(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_PERCPU_HASH ||
	       m->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/* The most bytes of an LRU's slot arrays (its preallocated part). */
#define LRU_MAX_BYTES	(1ULL << 30)

static inline bool is_lru(const struct uxdp_bpf_map *m)
{
	return m->type == BPF_MAP_TYPE_LRU_HASH ||
	       m->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static inline uint8_t *elem_key(struct htab_elem *e)
{
	return (uint8_t *)e->data;
}

static inline uint8_t *elem_value(const struct htab *h, struct htab_elem *e,
				  uint32_t cpu)
{
	return (uint8_t *)e->data + h->key_stride +
	       (size_t)cpu * h->value_stride;
}

static inline uint32_t this_cpu(void)
{
	return xdp_thread_index() % UXDP_BPF_NR_CPUS;
}

/* An element's writer releases it before the table or call_rcu gets it;
 * a reader and the freeing callback acquire it (bpf_internal.h). */
#define elem_release(e)		uxdp_tsan_release(e)
#define elem_acquire(e)		uxdp_tsan_acquire(e)

/* ---- hashing ----------------------------------------------------------- */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The key's bytes, eight at a time, seeded: the table orders its nodes by
 * the bit-reversed hash, so every bit of it must depend on the key. */
static uint64_t htab_hash(const struct htab *h, const void *key)
{
	const uint8_t *p = key;
	uint32_t n = h->map.key_size;
	uint64_t v = h->seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL), w;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		v = (v ^ mix64(w)) * 0x9e3779b97f4a7c15ULL;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		v = (v ^ mix64(w)) * 0x9e3779b97f4a7c15ULL;
	}
	return mix64(v);
}

static int htab_match(struct cds_lfht_node *node, const void *arg)
{
	const struct htab_key *k = arg;
	struct htab_elem *e = caa_container_of(node, struct htab_elem, node);

	elem_acquire(e);
	return !memcmp(elem_key(e), k->key, k->size);
}

/* The element of @key, and its place in *@it; inside a read-side
 * section. */
static struct htab_elem *htab_find(const struct htab *h, const void *key,
				   uint64_t hash, struct cds_lfht_iter *it)
{
	struct htab_key k = { key, h->map.key_size };
	struct cds_lfht_node *node;

	cds_lfht_lookup(h->ht, hash, htab_match, &k, it);
	node = cds_lfht_iter_get_node(it);
	return node ? caa_container_of(node, struct htab_elem, node) : NULL;
}

/* ---- lifetime ---------------------------------------------------------- */


static void elem_free_rcu(struct rcu_head *head)
{
	struct htab_elem *e = caa_container_of(head, struct htab_elem, rcu);

	elem_acquire(e);
	xdp_rcu_after_grace();
	free(e);
}

/* @e is out of the table: freed when every reader that could see it is
 * gone. */
static void elem_retire(struct htab_elem *e)
{
	elem_release(e);
	urcu_memb_call_rcu(&e->rcu, elem_free_rcu);
}

static int htab_map_alloc_check(const struct uxdp_bpf_map *m)
{
	if (m->map_flags & ~HTAB_CREATE_FLAGS)
		return uxdp_fail(EINVAL, "map %s: unknown flags for a hash "
				 "(map_flags 0x%x)", m->name, m->map_flags);
	if ((m->map_flags & BPF_F_NO_COMMON_LRU) && !is_lru(m))
		return uxdp_fail(EINVAL, "map %s: BPF_F_NO_COMMON_LRU is for "
				 "LRU hashes", m->name);
	/* The kernel's ENOTSUPP (524): an LRU is always preallocated. */
	if (is_lru(m) && (m->map_flags & BPF_F_NO_PREALLOC))
		return uxdp_fail(524, "map %s: an LRU hash cannot be "
				 "BPF_F_NO_PREALLOC", m->name);
	if ((is_percpu(m) || (m->map_flags & BPF_F_NO_COMMON_LRU)) &&
	    (m->map_flags & BPF_F_NUMA_NODE))
		return uxdp_fail(EINVAL, "map %s: a percpu_hash takes no NUMA "
				 "node", m->name);
	if (!m->max_entries || !m->key_size || !m->value_size)
		return uxdp_fail(EINVAL, "map %s: a hash needs key_size, "
				 "value_size and max_entries above 0 "
				 "(key_size %u, value_size %u, max_entries %u)",
				 m->name, m->key_size, m->value_size,
				 m->max_entries);
	if ((uint64_t)m->key_size + m->value_size >=
	    HTAB_KMALLOC_MAX - sizeof(struct htab_elem))
		return uxdp_fail(E2BIG, "map %s: key_size %u + value_size %u: "
				 "the kernel's limit is under %llu", m->name,
				 m->key_size, m->value_size,
				 (unsigned long long)HTAB_KMALLOC_MAX);
	if (is_percpu(m) && ((m->value_size + 7) & ~7U) > HTAB_PCPU_MAX_ELEM)
		return uxdp_fail(E2BIG, "map %s: per-CPU values of %u bytes: "
				 "the most is %u", m->name, m->value_size,
				 HTAB_PCPU_MAX_ELEM);
	/* An LRU's slots are made at once (12 bytes each): uxdp's limit, as
	 * the arrays' (docs/semantics.md), so that an object cannot make it
	 * allocate the machine (fuzz_bpf_elf: 2^31 entries, 24 GiB). */
	if (is_lru(m) && (uint64_t)m->max_entries *
	    (sizeof(struct htab_elem *) + sizeof(uint32_t)) > LRU_MAX_BYTES)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: an LRU hash "
				 "of uxdp's has at most %llu", m->name,
				 m->max_entries, (unsigned long long)
				 (LRU_MAX_BYTES / (sizeof(struct htab_elem *) +
						   sizeof(uint32_t))));
	if (m->max_entries > 1U << 31)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: the most is "
				 "2^31", m->name, m->max_entries);
	return 0;
}

static unsigned long pow2_at_least(uint64_t n)
{
	unsigned long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int htab_map_alloc(struct uxdp_bpf_map *m)
{
	struct htab *h = to_htab(m);
	unsigned long init, max;
	int err;

	h->key_stride = (m->key_size + 7) & ~7U;
	h->value_stride = (m->value_size + 7) & ~7U;
	h->elem_size = sizeof(struct htab_elem) + h->key_stride +
		       (size_t)h->value_stride *
		       (is_percpu(m) ? UXDP_BPF_NR_CPUS : 1);
	if (m->map_flags & BPF_F_ZERO_SEED)
		h->seed = 0;
	else if (getrandom(&h->seed, sizeof(h->seed), 0) != sizeof(h->seed))
		h->seed = (uint64_t)(uintptr_t)h ^ 0x5bd1e995U;
	/*
	 * A bucket per element, as the kernel's n_buckets (a power of two
	 * at least max_entries), made at once and never resized: resizing
	 * runs on liburcu's worker thread, whose hand-offs ThreadSanitizer
	 * cannot see (a report in every threaded test), and the kernel's
	 * table does not resize either. Past HTAB_MAX_BUCKETS chains grow
	 * longer instead of the buckets' memory.
	 */
	max = pow2_at_least(m->max_entries);
	if (max > HTAB_MAX_BUCKETS)
		max = HTAB_MAX_BUCKETS;
	init = max;
	/* The calls below register nothing: the caller's thread is made a
	 * reader first, as every later call on the table needs. */
	if (!xdp_cpu_get())
		return uxdp_fail(ENOMEM, "map %s: out of memory", m->name);
	err = uxdp_bpf_rcu_prepare(m->name);
	if (err)
		return err;
	h->ht = cds_lfht_new_flavor(init, init, max, 0, &urcu_memb_flavor,
				    NULL);
	if (!h->ht)
		return uxdp_fail(ENOMEM, "map %s: out of memory for a table "
				 "of %u entries", m->name, m->max_entries);
	if (is_lru(m)) {
		uint32_t i;

		h->slots = calloc(m->max_entries, sizeof(*h->slots));
		h->free_slots = malloc((size_t)m->max_entries *
				       sizeof(*h->free_slots));
		if (!h->slots || !h->free_slots) {
			free(h->slots);
			free(h->free_slots);
			h->slots = NULL;
			h->free_slots = NULL;
			cds_lfht_destroy(h->ht, NULL);
			h->ht = NULL;
			return uxdp_fail(ENOMEM, "map %s: out of memory for "
					 "%u LRU slots", m->name,
					 m->max_entries);
		}
		for (i = 0; i < m->max_entries; i++)
			h->free_slots[i] = m->max_entries - 1 - i;
		h->nfree = m->max_entries;
		pthread_mutex_init(&h->lock, NULL);
	}
	return 0;
}

/* A control-plane call's read-side section: its thread made a reader
 * (once), and the nesting counted with the datapath's. */
static struct uxdp_xdp_cpu *cp_enter(void)
{
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

	if (cpu)
		xdp_rcu_lock(cpu);
	return cpu;
}

/*
 * The last reference to the map went: no program runs it and no control
 * plane call is in it. Every element leaves the table and is freed after a
 * grace period, then the table goes.
 */
static void htab_map_free(struct uxdp_bpf_map *m)
{
	struct htab *h = to_htab(m);
	struct cds_lfht_node *node;
	struct uxdp_xdp_cpu *cpu;
	struct cds_lfht_iter it;
	struct htab_elem *e;

	if (!h->ht)
		return;
	cpu = cp_enter();
	if (!cpu) {
		uxdp_pr(UXDP_WARN, "uxdp: map %s: out of memory: its elements "
			"are leaked\n", m->name);
		return;
	}
	/* Not cds_lfht_for_each_entry(): at the end it takes the container
	 * of a NULL node, which UBSan refuses (fuzz_bpf_elf's corpus). */
	cds_lfht_first(h->ht, &it);
	while ((node = cds_lfht_iter_get_node(&it))) {
		e = caa_container_of(node, struct htab_elem, node);
		cds_lfht_next(h->ht, &it);
		if (!cds_lfht_del(h->ht, &e->node))
			elem_retire(e);
	}
	xdp_rcu_unlock(cpu);
	if (cds_lfht_destroy(h->ht, NULL))
		uxdp_pr(UXDP_WARN, "uxdp: map %s: its table could not be "
			"destroyed and is leaked\n", m->name);
	h->ht = NULL;
	h->count = 0;
	if (is_lru(m)) {
		free(h->slots);
		free(h->free_slots);
		h->slots = NULL;
		h->free_slots = NULL;
		pthread_mutex_destroy(&h->lock);
	}
}

/* ---- the operations, for programs and the control plane ----------------- */

/* A new element of @key: its values zeroed but @value's. */
static struct htab_elem *elem_new(const struct htab *h, const void *key,
				  const void *value, bool all_cpus)
{
	struct htab_elem *e = calloc(1, h->elem_size);
	uint32_t cpu;

	if (!e)
		return NULL;
	memcpy(elem_key(e), key, h->map.key_size);
	if (!is_percpu(&h->map))
		memcpy(elem_value(h, e, 0), value, h->map.value_size);
	else if (!all_cpus)
		/* A program's update: its CPU's value, the others zero (the
		 * kernel's pcpu_init_value()). */
		memcpy(elem_value(h, e, this_cpu()), value, h->map.value_size);
	else
		for (cpu = 0; cpu < UXDP_BPF_NR_CPUS; cpu++)
			memcpy(elem_value(h, e, cpu),
			       (const uint8_t *)value +
			       (size_t)cpu * h->value_stride,
			       h->map.value_size);
	return e;
}

/* An existing PERCPU_HASH element, written in place (the kernel's
 * pcpu_copy_value()): a program's CPU, or every CPU from the control
 * plane's layout. */
static void elem_write_percpu(const struct htab *h, struct htab_elem *e,
			      const void *value, bool all_cpus)
{
	uint32_t cpu;

	if (!all_cpus) {
		memcpy(elem_value(h, e, this_cpu()), value, h->map.value_size);
		return;
	}
	for (cpu = 0; cpu < UXDP_BPF_NR_CPUS; cpu++)
		memcpy(elem_value(h, e, cpu),
		       (const uint8_t *)value + (size_t)cpu * h->value_stride,
		       h->map.value_size);
}

/* One more element, unless the table is full. */
static bool count_reserve(struct htab *h)
{
	if (__atomic_add_fetch(&h->count, 1, __ATOMIC_RELAXED) >
	    (long)h->map.max_entries) {
		__atomic_sub_fetch(&h->count, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static void count_release(struct htab *h)
{
	__atomic_sub_fetch(&h->count, 1, __ATOMIC_RELAXED);
}

/*
 * The LRU families (the kernel's htab_lru_map_update_elem()): the hash's
 * flags and errors, but a new key in a full map takes the place of the
 * least recently used element instead of -E2BIG. uxdp approximates the
 * kernel's LRU lists with a clock (second chance): a program's lookup
 * marks an element, and the hand, going round the slots, evicts the first
 * element it finds unmarked and unmarks those it passes. So an element a
 * program looked up since the hand last passed it is never the one
 * evicted, and an eviction takes at most two turns of the hand (docs/
 * semantics.md; test_bpf_hash shows the bound). Writers (updates and
 * deletes, the control plane's and programs') take the map's lock;
 * lookups take none.
 */
/* @e, just deleted from the table (under the lock): its slot freed, the
 * element retired. */
static void lru_remove(struct htab *h, struct htab_elem *e)
{
	h->slots[e->slot] = NULL;
	h->free_slots[h->nfree++] = e->slot;
	count_release(h);
	elem_retire(e);
}

static void lru_evict(struct htab *h)
{
	uint32_t n = h->map.max_entries, step, s;
	struct htab_elem *e;

	for (step = 0; step < 2 * n + 1; step++) {
		s = h->hand;
		h->hand = (h->hand + 1) % n;
		e = h->slots[s];
		if (!e)
			continue;
		if (__atomic_load_n(&e->ref, __ATOMIC_RELAXED) &&
		    step < 2 * n) {
			__atomic_store_n(&e->ref, 0, __ATOMIC_RELAXED);
			continue;
		}
		/* Writers hold the lock: nothing else deletes it. */
		cds_lfht_del(h->ht, &e->node);
		lru_remove(h, e);
		return;
	}
}

static long lru_update(struct htab *h, const void *key, uint64_t hash,
		       const void *value, uint64_t flags, bool all_cpus)
{
	struct htab_key k = { key, h->map.key_size };
	struct cds_lfht_iter it;
	struct htab_elem *old, *e;
	long err = 0;

	pthread_mutex_lock(&h->lock);
	old = htab_find(h, key, hash, &it);
	if (old && flags == BPF_NOEXIST) {
		err = -EEXIST;
	} else if (!old && flags == BPF_EXIST) {
		err = -ENOENT;
	} else if (old && is_percpu(&h->map)) {
		elem_write_percpu(h, old, value, all_cpus);
	} else {
		/* Made before any eviction: out of memory evicts nothing. */
		e = elem_new(h, key, value, all_cpus);
		if (!e) {
			err = -ENOMEM;
		} else if (old) {
			e->slot = old->slot;
			h->slots[e->slot] = e;
			elem_release(e);
			cds_lfht_replace(h->ht, &it, hash, htab_match, &k,
					 &e->node);
			elem_retire(old);
		} else {
			if (!h->nfree)
				lru_evict(h);
			e->slot = h->free_slots[--h->nfree];
			h->slots[e->slot] = e;
			__atomic_add_fetch(&h->count, 1, __ATOMIC_RELAXED);
			elem_release(e);
			cds_lfht_add_unique(h->ht, hash, htab_match, &k,
					    &e->node);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

static long lru_delete(struct htab *h, const void *key)
{
	struct cds_lfht_iter it;
	struct htab_elem *e;
	long err = -ENOENT;

	pthread_mutex_lock(&h->lock);
	e = htab_find(h, key, htab_hash(h, key), &it);
	if (e && !cds_lfht_del(h->ht, &e->node)) {
		lru_remove(h, e);
		err = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return err;
}

/*
 * The kernel's htab_map_update_elem() / htab_percpu_map_update_elem():
 * inside a read-side section. Each try looks the key up and publishes by
 * one atomic step of the table (add_unique, or replace of the element it
 * found); a try that lost a race with another writer looks again, so the
 * flags are judged against the table as it was when the update took
 * effect.
 */
static long htab_update(struct htab *h, const void *key, const void *value,
			uint64_t flags, bool all_cpus)
{
	uint64_t hash = htab_hash(h, key);
	struct htab_key k = { key, h->map.key_size };
	struct cds_lfht_iter it;
	struct htab_elem *old, *e;
	struct cds_lfht_node *got;
	int tries;

	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST)
		return -EINVAL;
	if (flags & BPF_F_LOCK)		/* no bpf_spin_lock in the values */
		return -EINVAL;
	if (is_lru(&h->map))
		return lru_update(h, key, hash, value, flags, all_cpus);
	for (tries = 0; tries < HTAB_UPDATE_TRIES; tries++) {
		old = htab_find(h, key, hash, &it);
		if (old && flags == BPF_NOEXIST)
			return -EEXIST;
		if (!old && flags == BPF_EXIST)
			return -ENOENT;
		if (old && is_percpu(&h->map)) {
			elem_write_percpu(h, old, value, all_cpus);
			return 0;
		}
		if (!old && !count_reserve(h))
			return -E2BIG;
		e = elem_new(h, key, value, all_cpus);
		if (!e) {
			if (!old)
				count_release(h);
			return -ENOMEM;
		}
		elem_release(e);
		if (old) {
			/* Readers see the old element or the new one. */
			if (!cds_lfht_replace(h->ht, &it, hash, htab_match, &k,
					      &e->node)) {
				elem_retire(old);
				return 0;
			}
			/* Deleted meanwhile: never published, so free. */
			free(e);
			continue;
		}
		got = cds_lfht_add_unique(h->ht, hash, htab_match, &k,
					  &e->node);
		if (got == &e->node)
			return 0;
		/* Another writer added the key first. */
		count_release(h);
		free(e);
	}
	return -EAGAIN;
}

static long htab_delete(struct htab *h, const void *key)
{
	struct cds_lfht_iter it;
	struct htab_elem *e;

	if (is_lru(&h->map))
		return lru_delete(h, key);
	e = htab_find(h, key, htab_hash(h, key), &it);
	if (!e || cds_lfht_del(h->ht, &e->node))
		return -ENOENT;
	count_release(h);
	elem_retire(e);
	return 0;
}

/* ---- programs (inside a run: a read-side section, bpf/prog.c) ----------- */

/* A program's lookup marks an LRU element used (the control plane's does
 * not, as the kernel's lookup_elem_sys); written only when it changes, so
 * a hot element's line is not written on every packet. */
static inline void lru_mark(const struct htab *h, struct htab_elem *e)
{
	if (is_lru(&h->map) && !__atomic_load_n(&e->ref, __ATOMIC_RELAXED))
		__atomic_store_n(&e->ref, 1, __ATOMIC_RELAXED);
}

static void *htab_map_lookup_elem(struct uxdp_bpf_map *m, const void *key)
{
	struct htab *h = to_htab(m);
	struct cds_lfht_iter it;
	struct htab_elem *e = htab_find(h, key, htab_hash(h, key), &it);

	if (!e)
		return NULL;
	lru_mark(h, e);
	return elem_value(h, e, 0);
}

static void *percpu_htab_map_lookup_elem(struct uxdp_bpf_map *m,
					 const void *key)
{
	struct htab *h = to_htab(m);
	struct cds_lfht_iter it;
	struct htab_elem *e = htab_find(h, key, htab_hash(h, key), &it);

	if (!e)
		return NULL;
	lru_mark(h, e);
	return elem_value(h, e, this_cpu());
}

static long htab_map_update_elem(struct uxdp_bpf_map *m, const void *key,
				 const void *value, uint64_t flags)
{
	return htab_update(to_htab(m), key, value, flags, false);
}

static long htab_map_delete_elem(struct uxdp_bpf_map *m, const void *key)
{
	return htab_delete(to_htab(m), key);
}

/* ---- control plane ------------------------------------------------------ */

static int htab_map_lookup(const struct uxdp_bpf_map *m, const void *key,
			   void *value, uint64_t flags)
{
	struct htab *h = to_htab(m);
	struct uxdp_xdp_cpu *cpu = cp_enter();
	struct cds_lfht_iter it;
	struct htab_elem *e;
	uint32_t c;

	(void)flags;
	if (!cpu)
		return -ENOMEM;
	e = htab_find(h, key, htab_hash(h, key), &it);
	if (e && !is_percpu(m)) {
		memcpy(value, elem_value(h, e, 0), m->value_size);
	} else if (e) {
		/* The user's layout: value_size rounded up to 8 per CPU. */
		for (c = 0; c < UXDP_BPF_NR_CPUS; c++)
			memcpy((uint8_t *)value + (size_t)c * h->value_stride,
			       elem_value(h, e, c), h->value_stride);
	}
	xdp_rcu_unlock(cpu);
	return e ? 0 : -ENOENT;
}

static int htab_map_update(struct uxdp_bpf_map *m, const void *key,
			   const void *value, uint64_t flags)
{
	struct uxdp_xdp_cpu *cpu = cp_enter();
	long err;

	if (!cpu)
		return -ENOMEM;
	err = htab_update(to_htab(m), key, value, flags, true);
	xdp_rcu_unlock(cpu);
	return (int)err;
}

static int htab_map_delete(struct uxdp_bpf_map *m, const void *key)
{
	struct uxdp_xdp_cpu *cpu = cp_enter();
	long err;

	if (!cpu)
		return -ENOMEM;
	err = htab_delete(to_htab(m), key);
	xdp_rcu_unlock(cpu);
	return (int)err;
}

/* The key after @key in the table's order; the first for NULL or a key
 * not in the map (the kernel's rule); -ENOENT after the last. */
static int htab_map_get_next_key(const struct uxdp_bpf_map *m,
				 const void *key, void *next_key)
{
	struct htab *h = to_htab(m);
	struct uxdp_xdp_cpu *cpu = cp_enter();
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct htab_elem *e = NULL;

	if (!cpu)
		return -ENOMEM;
	if (key)
		e = htab_find(h, key, htab_hash(h, key), &it);
	if (e)
		cds_lfht_next(h->ht, &it);
	else
		cds_lfht_first(h->ht, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		e = caa_container_of(node, struct htab_elem, node);
		elem_acquire(e);
		memcpy(next_key, elem_key(e), m->key_size);
	}
	xdp_rcu_unlock(cpu);
	return node ? 0 : -ENOENT;
}

/* The two families differ only in what a program's lookup returns. */
#define HTAB_OPS(lookup_elem_)						\
	{								\
		.map_size = sizeof(struct htab),			\
		.rcu_reader = true,					\
		.map_alloc_check = htab_map_alloc_check,		\
		.map_alloc = htab_map_alloc,				\
		.map_free = htab_map_free,				\
		.map_lookup = htab_map_lookup,				\
		.map_update = htab_map_update,				\
		.map_delete = htab_map_delete,				\
		.map_get_next_key = htab_map_get_next_key,		\
		.map_lookup_elem = lookup_elem_,			\
		.map_update_elem = htab_map_update_elem,		\
		.map_delete_elem = htab_map_delete_elem,		\
	}

const struct uxdp_bpf_map_ops uxdp_bpf_hash_ops =
	HTAB_OPS(htab_map_lookup_elem);
const struct uxdp_bpf_map_ops uxdp_bpf_percpu_hash_ops =
	HTAB_OPS(percpu_htab_map_lookup_elem);
const struct uxdp_bpf_map_ops uxdp_bpf_lru_hash_ops =
	HTAB_OPS(htab_map_lookup_elem);
const struct uxdp_bpf_map_ops uxdp_bpf_lru_percpu_hash_ops =
	HTAB_OPS(percpu_htab_map_lookup_elem);
