/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_LPM_TRIE (the kernel's kernel/bpf/lpm_trie.c): longest
 * prefix match over keys { u32 prefixlen; u8 data[] } whose data is big
 * endian (data[0] the most significant byte), IPv4 and IPv6 prefixes.
 *
 * The kernel's structure, so that what a control plane sees (the order of
 * get_next_key, which entries a full map takes) is the kernel's: a binary
 * trie whose nodes hold a prefix; a node's children extend it by the next
 * bit (child[bit]); intermediate nodes (no value, never returned) join two
 * subtrees that part at a bit no entry ends on, so every intermediate node
 * has exactly two children.
 *
 * Lookups take no lock: a reader walks child pointers read with acquire;
 * a writer (under the map's lock) builds a node whole, then publishes it
 * with a release store, and frees a node it took out after a grace period
 * (the family is rcu_reader: a program's run is a read-side section, the
 * control plane's calls take one). An update replaces a node by a new one,
 * so a reader sees the whole old value or the whole new one.
 *
 * Kernel versions: since 6.13 an update honours BPF_NOEXIST and BPF_EXIST
 * and a full trie still takes a replacement (-ENOSPC only for a new
 * entry); before, both flags were ignored and a full trie refused every
 * update. uxdp has the newer rules (docs/semantics.md; test_bpf_lpm says
 * which rule the running kernel has).
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

#define LPM_DATA_SIZE_MIN	1
#define LPM_DATA_SIZE_MAX	256
#define LPM_KEY_SIZE_MIN	(4 + LPM_DATA_SIZE_MIN)
#define LPM_KEY_SIZE_MAX	(4 + LPM_DATA_SIZE_MAX)
/* The kernel's LPM_VAL_SIZE_MAX: KMALLOC_MAX_SIZE less a node and its
 * data (the node's header is 32 bytes there). */
#define LPM_VALUE_MAX		(UXDP_BPF_VALUE_MAX - LPM_DATA_SIZE_MAX - 32)
#define LPM_CREATE_FLAGS	(BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE |	\
				 BPF_F_RDONLY | BPF_F_WRONLY |		\
				 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

#define NODE_IM			(1U << 0)	/* intermediate: no value */

struct lpm_node {
	struct rcu_head rcu;
	struct lpm_node *child[2];	/* published with release */
	uint32_t prefixlen;
	uint32_t flags;
	/* data_size bytes of prefix, padded to 8, then the value (so a
	 * program's 8-byte atomics on it are aligned). */
	uint8_t data[] __attribute__((aligned(8)));
};

struct lpm_trie {
	struct uxdp_bpf_map map;
	struct lpm_node *root;		/* published with release */
	uint32_t data_size;
	uint32_t max_prefixlen;
	uint32_t value_off;		/* data_size rounded up to 8 */
	uint64_t n_entries;		/* under lock */
	pthread_mutex_t lock;		/* writers */
};

/* The key as the kernel's struct bpf_lpm_trie_key lays it out. */
struct lpm_key {
	uint32_t prefixlen;
	uint8_t data[];
};

static inline struct lpm_trie *to_trie(const struct uxdp_bpf_map *m)
{
	return (struct lpm_trie *)m;
}

static inline struct lpm_node *load_node(struct lpm_node *const *p)
{
	/* Pairs with the writer's release in publish(): a node read here
	 * is seen whole. */
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void publish(struct lpm_node **p, struct lpm_node *n)
{
	__atomic_store_n(p, n, __ATOMIC_RELEASE);
}

/* A node's flags as a reader sees them: a delete may mark a node
 * intermediate under it (a reader then finds the entry or its parent's:
 * either is a lookup that raced with the delete). */
static inline uint32_t node_flags(const struct lpm_node *n)
{
	return __atomic_load_n(&n->flags, __ATOMIC_RELAXED);
}

static inline uint8_t *node_value(const struct lpm_trie *t,
				  struct lpm_node *n)
{
	return n->data + t->value_off;
}

static inline unsigned int bit_at(const uint8_t *data, uint32_t i)
{
	return (data[i / 8] >> (7 - i % 8)) & 1;
}

/* How many leading bits of @n's prefix and @key's agree, at most the
 * shorter of their prefix lengths. */
static uint32_t match_len(const struct lpm_trie *t, const struct lpm_node *n,
			  const struct lpm_key *key)
{
	uint32_t limit = MIN(n->prefixlen, key->prefixlen), bits = 0, i = 0;

	for (; i + 8 <= t->data_size && bits < limit; i += 8) {
		uint64_t a, b;

		memcpy(&a, n->data + i, 8);
		memcpy(&b, key->data + i, 8);
		if (a != b)
			return MIN(bits + (uint32_t)__builtin_clzll(
					__builtin_bswap64(a ^ b)), limit);
		bits += 64;
	}
	for (; i < t->data_size && bits < limit; i++) {
		uint8_t d = n->data[i] ^ key->data[i];

		if (d)
			return MIN(bits + (uint32_t)__builtin_clz(d) - 24,
				   limit);
		bits += 8;
	}
	return MIN(bits, limit);
}

/* The longest prefix of @key's that is an entry: its node, or NULL. Inside
 * a read-side section. */
static struct lpm_node *trie_lookup(const struct lpm_trie *t,
				    const struct lpm_key *key)
{
	struct lpm_node *n, *found = NULL;

	if (key->prefixlen > t->max_prefixlen)
		return NULL;
	for (n = load_node(&t->root); n;) {
		uint32_t m = match_len(t, n, key);

		if (m == t->max_prefixlen) {
			/* A whole-length match can only be an entry: an
			 * intermediate node is shorter than its children. */
			found = n;
			break;
		}
		if (m < n->prefixlen)
			break;
		if (!(node_flags(n) & NODE_IM))
			found = n;
		n = load_node(&n->child[bit_at(key->data, n->prefixlen)]);
	}
	return found;
}

/* ---- lifetime ------------------------------------------------------------ */

static void node_free_rcu(struct rcu_head *head)
{
	struct lpm_node *n = caa_container_of(head, struct lpm_node, rcu);

	xdp_rcu_after_grace();
	free(n);
}

/* @n is out of the trie: freed once no reader can hold it. The writer is
 * a registered reader thread (liburcu's rule for call_rcu): every caller
 * entered a read-side section first. */
static void node_retire(struct lpm_node *n)
{
	if (n)
		urcu_memb_call_rcu(&n->rcu, node_free_rcu);
}

static struct lpm_node *node_new(const struct lpm_trie *t, const void *value)
{
	size_t size = sizeof(struct lpm_node) + t->value_off +
		      (value ? t->map.value_size : 0);
	struct lpm_node *n = malloc(size);

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	if (value)
		memcpy(node_value(t, n), value, t->map.value_size);
	return n;
}

/* ---- writers (under t->lock) ------------------------------------------- */

/* A new entry: the kernel's trie_check_add_elem. */
static int add_entry(struct lpm_trie *t, uint64_t flags)
{
	if (flags == BPF_EXIST)
		return -ENOENT;
	if (t->n_entries == t->map.max_entries)
		return -ENOSPC;
	t->n_entries++;
	return 0;
}

static long trie_update(struct lpm_trie *t, const struct lpm_key *key,
			const void *value, uint64_t flags)
{
	struct lpm_node *n, *nn, *im = NULL, *old = NULL, **slot;
	uint32_t m = 0;
	int err = 0;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (key->prefixlen > t->max_prefixlen)
		return -EINVAL;
	nn = node_new(t, value);
	if (!nn)
		return -ENOMEM;
	nn->prefixlen = key->prefixlen;
	memcpy(nn->data, key->data, t->data_size);

	pthread_mutex_lock(&t->lock);
	/* Down as far as @key's bits agree, to the slot it belongs in. */
	for (slot = &t->root; (n = *slot); slot = &n->child[bit_at(key->data,
							n->prefixlen)]) {
		m = match_len(t, n, key);
		if (n->prefixlen != m || n->prefixlen == key->prefixlen ||
		    n->prefixlen == t->max_prefixlen)
			break;
	}
	if (!n) {
		/* An empty slot: the new entry is a leaf. */
		err = add_entry(t, flags);
		if (!err)
			publish(slot, nn);
	} else if (n->prefixlen == m) {
		/* The same prefix: replaced whole (a reader has the old node
		 * or the new one), or an intermediate node made an entry. */
		if (!(n->flags & NODE_IM))
			err = flags == BPF_NOEXIST ? -EEXIST : 0;
		else
			err = add_entry(t, flags);
		if (!err) {
			nn->child[0] = n->child[0];
			nn->child[1] = n->child[1];
			publish(slot, nn);
			old = n;
		}
	} else if (!(err = add_entry(t, flags)) && m == key->prefixlen) {
		/* A shorter prefix of @n's: the new node goes above it. */
		nn->child[bit_at(n->data, m)] = n;
		publish(slot, nn);
	} else if (!err) {
		/* They part at bit m: an intermediate node of m bits joins
		 * them. */
		im = node_new(t, NULL);
		if (!im) {
			t->n_entries--;
			err = -ENOMEM;
		} else {
			im->prefixlen = m;
			im->flags = NODE_IM;
			memcpy(im->data, n->data, t->data_size);
			im->child[bit_at(key->data, m)] = nn;
			im->child[!bit_at(key->data, m)] = n;
			publish(slot, im);
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (err)
		free(nn);
	node_retire(old);
	return err;
}

static long trie_delete(struct lpm_trie *t, const struct lpm_key *key)
{
	struct lpm_node *n, *parent = NULL, **slot, **pslot;
	uint32_t m = 0;
	int err = 0;

	if (key->prefixlen > t->max_prefixlen)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	slot = pslot = &t->root;
	while ((n = *slot)) {
		m = match_len(t, n, key);
		if (n->prefixlen != m || n->prefixlen == key->prefixlen)
			break;
		parent = n;
		pslot = slot;
		slot = &n->child[bit_at(key->data, n->prefixlen)];
	}
	if (!n || n->prefixlen != key->prefixlen || n->prefixlen != m ||
	    (n->flags & NODE_IM)) {
		err = -ENOENT;
		goto out;
	}
	t->n_entries--;
	if (n->child[0] && n->child[1]) {
		/* Still joins two subtrees: it stays, as an intermediate
		 * node (a reader may see it either way for a moment, and
		 * find the entry or its parent's). */
		__atomic_store_n(&n->flags, n->flags | NODE_IM,
				 __ATOMIC_RELAXED);
		goto out;
	}
	if (parent && (parent->flags & NODE_IM) && !n->child[0] &&
	    !n->child[1]) {
		/* A leaf under an intermediate node: both go, its sibling
		 * takes the intermediate node's place. */
		publish(pslot, parent->child[parent->child[0] == n]);
		node_retire(parent);
		node_retire(n);
		goto out;
	}
	publish(slot, n->child[0] ? n->child[0] : n->child[1]);
	node_retire(n);
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

/*
 * The entry after @key in the kernel's order: post-order (more specific
 * prefixes before less specific, child[0]'s subtree before child[1]'s),
 * intermediate nodes skipped; NULL or a key that is no entry gives the
 * first. Inside a read-side section.
 */
static int trie_next(const struct lpm_trie *t, const struct lpm_key *key,
		     struct lpm_key *next)
{
	struct lpm_node *stack[LPM_DATA_SIZE_MAX * 8 + 1];
	struct lpm_node *n, *root = load_node(&t->root), *pick = NULL;
	int top = -1;

	if (!root)
		return -ENOENT;
	if (key && key->prefixlen <= t->max_prefixlen) {
		for (n = root; n;) {
			uint32_t m = match_len(t, n, key);

			stack[++top] = n;
			if (n->prefixlen != m || n->prefixlen == key->prefixlen)
				break;
			n = load_node(&n->child[bit_at(key->data,
						       n->prefixlen)]);
		}
		if (n && n->prefixlen == key->prefixlen &&
		    !(node_flags(n) & NODE_IM)) {
			/* Up from it: the next is the leftmost of a right
			 * sibling's subtree, or the first entry above. */
			for (n = stack[top]; top > 0; n = stack[--top]) {
				struct lpm_node *p = stack[top - 1];

				if (load_node(&p->child[0]) == n &&
				    (root = load_node(&p->child[1])))
					goto leftmost;
				if (!(node_flags(p) & NODE_IM)) {
					pick = p;
					goto copy;
				}
			}
			return -ENOENT;
		}
	}
leftmost:
	/* The first entry in post-order under @root: down child[0] where
	 * there is one, else child[1]; the last entry passed. */
	for (n = root; n;) {
		if (!(node_flags(n) & NODE_IM)) {
			pick = n;
			n = load_node(&n->child[0]) ? load_node(&n->child[0]) :
			    load_node(&n->child[1]);
		} else {
			n = load_node(&n->child[0]);
		}
	}
	if (!pick)
		return -ENOENT;
copy:
	next->prefixlen = pick->prefixlen;
	memcpy(next->data, pick->data, t->data_size);
	return 0;
}

/* ---- the family ------------------------------------------------------------ */

static int lpm_alloc_check(const struct uxdp_bpf_map *m)
{
	if (!m->max_entries || !(m->map_flags & BPF_F_NO_PREALLOC) ||
	    (m->map_flags & ~LPM_CREATE_FLAGS) ||
	    ((m->map_flags & BPF_F_RDONLY_PROG) &&
	     (m->map_flags & BPF_F_WRONLY_PROG)) ||
	    ((m->map_flags & BPF_F_RDONLY) && (m->map_flags & BPF_F_WRONLY)) ||
	    m->key_size < LPM_KEY_SIZE_MIN || m->key_size > LPM_KEY_SIZE_MAX ||
	    !m->value_size || m->value_size > LPM_VALUE_MAX)
		return uxdp_fail(EINVAL, "map %s: an lpm_trie needs "
				 "BPF_F_NO_PREALLOC, max_entries above 0, a key "
				 "of %u to %u bytes (prefixlen and 1 to %u of "
				 "data), a value of 1 to %u bytes and known "
				 "flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 LPM_KEY_SIZE_MIN, LPM_KEY_SIZE_MAX,
				 LPM_DATA_SIZE_MAX, LPM_VALUE_MAX, m->key_size,
				 m->value_size, m->max_entries, m->map_flags);
	return 0;
}

static int lpm_alloc(struct uxdp_bpf_map *m)
{
	struct lpm_trie *t = to_trie(m);
	int err = uxdp_bpf_rcu_prepare(m->name);

	if (err)
		return err;
	t->data_size = m->key_size - 4;
	t->max_prefixlen = t->data_size * 8;
	t->value_off = (t->data_size + 7) & ~7U;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

/* No program runs the map and no call is in it: every node goes now. */
static void lpm_free(struct uxdp_bpf_map *m)
{
	struct lpm_trie *t = to_trie(m);
	struct lpm_node **slot, *n;

	while (t->root) {
		/* Down to a leaf, which goes; then again from the top. */
		for (slot = &t->root; (n = *slot);)
			if (n->child[0])
				slot = &n->child[0];
			else if (n->child[1])
				slot = &n->child[1];
			else
				break;
		free(n);
		*slot = NULL;
	}
	pthread_mutex_destroy(&t->lock);
}

/* A control-plane call's read-side section (its thread made a reader). */
static struct uxdp_xdp_cpu *cp_enter(void)
{
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

	if (cpu)
		xdp_rcu_lock(cpu);
	return cpu;
}

static int lpm_lookup(const struct uxdp_bpf_map *m, const void *key,
		      void *value, uint64_t flags)
{
	struct lpm_trie *t = to_trie(m);
	struct uxdp_xdp_cpu *cpu = cp_enter();
	struct lpm_node *n;

	(void)flags;
	if (!cpu)
		return -ENOMEM;
	/* A control plane's lookup is a longest-prefix match too. */
	n = trie_lookup(t, key);
	if (n)
		memcpy(value, node_value(t, n), m->value_size);
	xdp_rcu_unlock(cpu);
	return n ? 0 : -ENOENT;
}

static int lpm_update(struct uxdp_bpf_map *m, const void *key,
		      const void *value, uint64_t flags)
{
	struct uxdp_xdp_cpu *cpu = cp_enter();
	long err;

	if (!cpu)
		return -ENOMEM;
	err = trie_update(to_trie(m), key, value, flags);
	xdp_rcu_unlock(cpu);
	return (int)err;
}

static int lpm_delete(struct uxdp_bpf_map *m, const void *key)
{
	struct uxdp_xdp_cpu *cpu = cp_enter();
	long err;

	if (!cpu)
		return -ENOMEM;
	err = trie_delete(to_trie(m), key);
	xdp_rcu_unlock(cpu);
	return (int)err;
}

static int lpm_get_next_key(const struct uxdp_bpf_map *m, const void *key,
			    void *next_key)
{
	struct uxdp_xdp_cpu *cpu = cp_enter();
	int err;

	if (!cpu)
		return -ENOMEM;
	err = trie_next(to_trie(m), key, next_key);
	xdp_rcu_unlock(cpu);
	return err;
}

/* Programs: inside their run's read-side section already. */
static void *lpm_lookup_elem(struct uxdp_bpf_map *m, const void *key)
{
	struct lpm_trie *t = to_trie(m);
	struct lpm_node *n = trie_lookup(t, key);

	return n ? node_value(t, n) : NULL;
}

static long lpm_update_elem(struct uxdp_bpf_map *m, const void *key,
			    const void *value, uint64_t flags)
{
	return trie_update(to_trie(m), key, value, flags);
}

static long lpm_delete_elem(struct uxdp_bpf_map *m, const void *key)
{
	return trie_delete(to_trie(m), key);
}

const struct uxdp_bpf_map_ops uxdp_bpf_lpm_trie_ops = {
	.map_size = sizeof(struct lpm_trie),
	.rcu_reader = true,
	.map_alloc_check = lpm_alloc_check,
	.map_alloc = lpm_alloc,
	.map_free = lpm_free,
	.map_lookup = lpm_lookup,
	.map_update = lpm_update,
	.map_delete = lpm_delete,
	.map_get_next_key = lpm_get_next_key,
	.map_lookup_elem = lpm_lookup_elem,
	.map_update_elem = lpm_update_elem,
	.map_delete_elem = lpm_delete_elem,
};
