/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bpf maps' operations against a model (src/bpf/map_hash.c; with
 * kind bit 2 map_lpm.c, against a brute-force list of prefixes; with bit
 * 3 map_queue.c, against a list): the
 * input picks a map (HASH, PERCPU_HASH or their LRU kinds, key and value sizes,
 * max_entries, flags that may be wrong), then a script of lookups, updates (any flags),
 * deletes and get_next_key calls from the control plane and from a
 * program's side (inside a read-side section, as a run is), over a key
 * space larger than the map. Every return value must be the kernel's rule
 * applied to the model, every value read the model's (an LRU's new key in
 * a full map evicts exactly one other key, which the model then drops),
 * and at the end an iteration must visit each of the model's keys once.
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#include "fuzz.h"

#include "../../src/internal.h"
#include "../../src/bpf/bpf_internal.h"
#include "../../src/xdp/xdp_internal.h"

#define KEYS		40
#define MAX_KEY		16
#define MAX_VALUE	32

struct model {
	bool in[KEYS];
	uint8_t *v[KEYS];	/* ncpu slots of the 8-rounded value size */
	uint32_t n;
};

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz_bpf_map: " __VA_ARGS__);	\
			fprintf(stderr, "\n");				\
			abort();					\
		}							\
	} while (0)

static void key_of(uint32_t k, uint32_t size, uint8_t *key)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		key[i] = (uint8_t)(k * 7 + i * (k + 1));
	key[0] = (uint8_t)k;
}

/* The model's key index of @key, or KEYS. */
static uint32_t index_of(const uint8_t *key, uint32_t size)
{
	uint8_t want[MAX_KEY];
	uint32_t k = key[0];

	if (k >= KEYS)
		return KEYS;
	key_of(k, size, want);
	return memcmp(want, key, size) ? KEYS : k;
}

/* ---- LPM_TRIE (src/bpf/map_lpm.c): a list of entries, by brute force ---- */

#define LPM_DATA	6			/* at most, bytes */
#define LPM_MAX		24

struct lpm_entry {
	uint32_t plen;
	uint8_t d[LPM_DATA];
	uint8_t v[MAX_VALUE];
};

struct lpm_model {
	struct lpm_entry e[LPM_MAX];
	uint32_t n, ds, vs;
};

static bool lpm_prefix_eq(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
	uint32_t i;

	for (i = 0; i < bits; i++)
		if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

/* The entry of exactly @plen/@d, or -1. */
static int lpm_find(const struct lpm_model *md, uint32_t plen,
		    const uint8_t *d)
{
	uint32_t i;

	for (i = 0; i < md->n; i++)
		if (md->e[i].plen == plen &&
		    lpm_prefix_eq(md->e[i].d, d, plen))
			return (int)i;
	return -1;
}

/* The longest entry that is a prefix of @plen/@d, or -1. */
static int lpm_best(const struct lpm_model *md, uint32_t plen,
		    const uint8_t *d)
{
	int best = -1;
	uint32_t i;

	if (plen > md->ds * 8)
		return -1;
	for (i = 0; i < md->n; i++)
		if (md->e[i].plen <= plen &&
		    lpm_prefix_eq(md->e[i].d, d, md->e[i].plen) &&
		    (best < 0 || md->e[i].plen > md->e[best].plen))
			best = (int)i;
	return best;
}

static int fuzz_lpm(struct fz *f, struct uxdp_xdp_cpu *cpu)
{
	struct lpm_model md = { .n = 0 };
	uint32_t ds = 1 + fz_pick(f, LPM_DATA), vs = 1 + fz_pick(f, MAX_VALUE);
	uint32_t max = 1 + fz_pick(f, LPM_MAX), ks = 4 + ds, ops = 0, i, n;
	uint8_t key[4 + LPM_DATA], next[4 + LPM_DATA], val[MAX_VALUE];
	uint8_t got[MAX_VALUE];
	struct uxdp_bpf_map *m;
	int err, at;

	md.ds = ds;
	md.vs = vs;
	m = uxdp_bpf_map_new("f", BPF_MAP_TYPE_LPM_TRIE, ks, vs, max,
			     BPF_F_NO_PREALLOC);
	CHECK(m, "uxdp_bpf_map_new");
	err = uxdp_bpf_map_create(m);
	CHECK(!err, "lpm create: %d: %s", err, uxdp_errmsg());
	while (fz_more(f) && ops++ < 512) {
		uint32_t op = fz_pick(f, 6), plen = fz_pick(f, ds * 8 + 2);
		uint64_t fl = fz_pick(f, 16) ? fz_pick(f, 3) : fz_u8(f);
		uint8_t *d = key + 4;
		bool prog = fz_bit(f);
		int want;
		void *pv;

		memcpy(key, &plen, 4);
		/* A small alphabet: prefixes nest and share. */
		for (i = 0; i < ds; i++)
			d[i] = (uint8_t)(fz_pick(f, 4) * 0x55);
		switch (op) {
		case 0:		/* lookup, either side */
			at = lpm_best(&md, plen, d);
			if (prog) {
				xdp_rcu_lock(cpu);
				pv = m->ops->map_lookup_elem(m, key);
				CHECK(!pv == (at < 0), "lpm program lookup /%u: "
				      "%p, the model %d", plen, pv, at);
				if (pv)
					CHECK(!memcmp(pv, md.e[at].v, vs),
					      "lpm program lookup: value");
				xdp_rcu_unlock(cpu);
				break;
			}
			err = uxdp_bpf_map_lookup(m, key, got, 0);
			CHECK(err == (at < 0 ? -ENOENT : 0), "lpm lookup /%u: %d",
			      plen, err);
			if (!err)
				CHECK(!memcmp(got, md.e[at].v, vs),
				      "lpm lookup: value");
			break;
		case 1:		/* update, either side */
		case 2:
			for (i = 0; i < vs; i++)
				val[i] = fz_u8(f);
			at = lpm_find(&md, plen, d);
			if (fl > BPF_EXIST || (fl & BPF_F_LOCK) ||
			    plen > ds * 8)
				want = -EINVAL;
			else if (at >= 0 && fl == BPF_NOEXIST)
				want = -EEXIST;
			else if (at < 0 && fl == BPF_EXIST)
				want = -ENOENT;
			else if (at < 0 && md.n == max)
				want = -ENOSPC;
			else
				want = 0;
			if (prog) {
				xdp_rcu_lock(cpu);
				err = (int)m->ops->map_update_elem(m, key, val,
								   fl);
				xdp_rcu_unlock(cpu);
			} else {
				err = uxdp_bpf_map_update(m, key, val, fl);
			}
			CHECK(err == want, "lpm update /%u flags %llu: %d, want "
			      "%d", plen, (unsigned long long)fl, err, want);
			if (err)
				break;
			if (at < 0)
				at = (int)md.n++;
			/* The key as given, its bits past plen too. */
			md.e[at].plen = plen;
			memcpy(md.e[at].d, d, ds);
			memcpy(md.e[at].v, val, vs);
			break;
		case 3:		/* delete, either side */
			at = plen > ds * 8 ? -1 : lpm_find(&md, plen, d);
			want = plen > ds * 8 ? -EINVAL : at < 0 ? -ENOENT : 0;
			if (prog) {
				xdp_rcu_lock(cpu);
				err = (int)m->ops->map_delete_elem(m, key);
				xdp_rcu_unlock(cpu);
			} else {
				err = uxdp_bpf_map_delete(m, key);
			}
			CHECK(err == want, "lpm delete /%u: %d, want %d", plen,
			      err, want);
			if (!err)
				md.e[at] = md.e[--md.n];
			break;
		default:	/* get_next_key of NULL or of a key */
			err = uxdp_bpf_map_get_next_key(m, fz_bit(f) ? key :
							NULL, next);
			if (!md.n)
				CHECK(err == -ENOENT, "lpm get_next_key: %d of "
				      "an empty trie", err);
			else
				CHECK(!err || err == -ENOENT, "lpm "
				      "get_next_key: %d", err);
			if (!err) {
				uint32_t np;

				memcpy(&np, next, 4);
				at = lpm_find(&md, np, next + 4);
				CHECK(at >= 0 && !memcmp(md.e[at].d, next + 4,
							 ds),
				      "lpm get_next_key: not an entry as "
				      "stored");
			}
			break;
		}
	}
	/* Every entry once, as stored. */
	n = 0;
	for (err = uxdp_bpf_map_get_next_key(m, NULL, next); !err;
	     err = uxdp_bpf_map_get_next_key(m, key, next)) {
		uint32_t np;

		memcpy(&np, next, 4);
		at = lpm_find(&md, np, next + 4);
		CHECK(at >= 0 && !memcmp(md.e[at].d, next + 4, ds),
		      "lpm iteration: not an entry as stored");
		memcpy(key, next, ks);
		CHECK(++n <= md.n, "lpm iteration: more than the trie's %u",
		      md.n);
	}
	CHECK(err == -ENOENT && n == md.n, "lpm iteration: %u of %u (%d)", n,
	      md.n, err);
	uxdp_bpf_map_free(m);
	return 0;
}

/*
 * Kind bit 3: a QUEUE or a STACK (map_queue.c) against a list, oldest
 * first: pushes with any flags (BPF_EXIST into a full map drops the
 * oldest), peeks and pops, from the control plane and the program's side,
 * a key where none belongs. Empty: -ENOENT and a zeroed value.
 */
#define QS_MAX	24

static int fuzz_qs(struct fz *f, struct uxdp_xdp_cpu *cpu)
{
	bool stack = fz_bit(f);
	uint32_t vs = 1 + fz_pick(f, MAX_VALUE), max = 1 + fz_pick(f, QS_MAX);
	/* got: one byte past the largest value, to see a write past it. */
	uint8_t md[QS_MAX][MAX_VALUE], val[MAX_VALUE], got[MAX_VALUE + 1];
	uint32_t n = 0, ops = 0, i;
	struct uxdp_bpf_map *m;
	int err;

	m = uxdp_bpf_map_new("f", stack ? BPF_MAP_TYPE_STACK :
			     BPF_MAP_TYPE_QUEUE, 0, vs, max, 0);
	CHECK(m, "uxdp_bpf_map_new");
	err = uxdp_bpf_map_create(m);
	CHECK(!err, "queue create: %d: %s", err, uxdp_errmsg());
	while (fz_more(f) && ops++ < 512) {
		uint32_t op = fz_pick(f, 6);
		uint64_t fl = fz_pick(f, 8) ? fz_pick(f, 3) : fz_u32(f);
		bool prog = fz_bit(f);
		int want;

		switch (op) {
		case 0:
		case 1:		/* push */
			for (i = 0; i < vs; i++)
				val[i] = fz_u8(f);
			if ((fl & BPF_NOEXIST) || fl > BPF_EXIST)
				want = -EINVAL;
			else if (n == max && !(fl & BPF_EXIST))
				want = -E2BIG;
			else
				want = 0;
			if (prog) {
				xdp_rcu_lock(cpu);
				err = (int)m->ops->map_push_elem(m, val, fl);
				xdp_rcu_unlock(cpu);
			} else {
				err = uxdp_bpf_map_update(m, NULL, val, fl);
			}
			CHECK(err == want, "push flags 0x%llx with %u of %u: "
			      "%d, want %d", (unsigned long long)fl, n, max,
			      err, want);
			if (!err) {
				if (n == max)
					memmove(md[0], md[1], --n * sizeof(md[0]));
				memcpy(md[n++], val, vs);
			}
			break;
		case 2:		/* peek */
		case 3:		/* pop */
			memset(got, 0xa5, sizeof(got));
			if (prog)
				err = (int)(op == 2 ? m->ops->map_peek_elem(m, got)
					   : m->ops->map_pop_elem(m, got));
			else
				err = op == 2 ?
				      uxdp_bpf_map_lookup(m, NULL, got, 0) :
				      uxdp_bpf_map_lookup_and_delete(m, NULL,
								     got, 0);
			if (!n) {
				CHECK(err == -ENOENT, "%s of empty: %d",
				      op == 2 ? "peek" : "pop", err);
				/* The program's side zeroes its buffer (the
				 * control plane's is not copied out). */
				for (i = 0; prog && i < vs; i++)
					CHECK(!got[i], "empty: byte %u", i);
				break;
			}
			CHECK(!err, "%s with %u: %d", op == 2 ? "peek" : "pop",
			      n, err);
			i = stack ? n - 1 : 0;
			CHECK(!memcmp(got, md[i], vs), "%s: not the model's",
			      op == 2 ? "peek" : "pop");
			CHECK(got[vs] == 0xa5, "wrote past value_size");
			if (op == 3) {
				if (!stack)
					memmove(md[0], md[1], (n - 1) *
						sizeof(md[0]));
				n--;
			}
			break;
		case 4:		/* a key, for a map without: -EINVAL */
			CHECK(uxdp_bpf_map_lookup(m, val, got, 0) == -EINVAL,
			      "lookup with a key");
			CHECK(uxdp_bpf_map_update(m, val, val, 0) == -EINVAL,
			      "update with a key");
			break;
		default:	/* delete, get_next_key: -EINVAL */
			CHECK(uxdp_bpf_map_delete(m, val) == -EINVAL,
			      "delete");
			CHECK(uxdp_bpf_map_get_next_key(m, NULL, got) ==
			      -EINVAL, "get_next_key");
			break;
		}
	}
	/* What is left pops in the model's order, then -ENOENT. */
	while (n) {
		CHECK(!uxdp_bpf_map_lookup_and_delete(m, NULL, got, 0),
		      "drain with %u", n);
		i = stack ? n - 1 : 0;
		CHECK(!memcmp(got, md[i], vs), "drain: not the model's");
		if (!stack)
			memmove(md[0], md[1], (n - 1) * sizeof(md[0]));
		n--;
	}
	CHECK(uxdp_bpf_map_lookup_and_delete(m, NULL, got, 0) == -ENOENT,
	      "drained, not empty");
	uxdp_bpf_map_free(m);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t kind = fz_u8(&f);
	bool percpu = kind & 1, lru = kind & 2;
	uint32_t type = lru ? (percpu ? BPF_MAP_TYPE_LRU_PERCPU_HASH :
				       BPF_MAP_TYPE_LRU_HASH) :
			      (percpu ? BPF_MAP_TYPE_PERCPU_HASH :
					BPF_MAP_TYPE_HASH);
	uint32_t ks = 1 + fz_pick(&f, MAX_KEY), vs = 1 + fz_pick(&f, MAX_VALUE);
	uint32_t max = 1 + fz_pick(&f, 24), flags = 0;
	uint32_t ncpu = percpu ? (uint32_t)uxdp_bpf_num_possible_cpus() : 1;
	uint32_t stride = (vs + 7) & ~7U, me, i, n, ops = 0;
	size_t vlen = (size_t)ncpu * stride;
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();
	struct uxdp_bpf_map *m;
	struct model md = { 0 };
	uint8_t key[MAX_KEY], next[MAX_KEY], *val, *got;
	int err;

	if (!cpu)
		return 0;
	if (kind & 8)
		return fuzz_qs(&f, cpu);
	if (kind & 4)
		return fuzz_lpm(&f, cpu);
	me = percpu ? xdp_thread_index() % ncpu : 0;
	if (fz_pick(&f, 8) == 0)
		flags = fz_u32(&f);
	m = uxdp_bpf_map_new("f", type, ks, vs, max, flags);
	CHECK(m, "uxdp_bpf_map_new");
	err = uxdp_bpf_map_create(m);
	if (err) {
		/* Only flags can be wrong here (an LRU's NO_PREALLOC is the
		 * kernel's ENOTSUPP, 524); the error says which map. */
		CHECK(flags && (err == -EINVAL || err == -EOPNOTSUPP ||
				(lru && err == -524)),
		      "create: %d with flags 0x%x: %s", err, flags,
		      uxdp_errmsg());
		uxdp_bpf_map_free(m);
		return 0;
	}
	/* A map the control plane may not write or read: its EPERMs are
	 * map.c's, not the family's; not this model's. */
	if (flags & (BPF_F_RDONLY | BPF_F_WRONLY)) {
		uxdp_bpf_map_free(m);
		return 0;
	}
	val = calloc(1, vlen);
	got = calloc(1, vlen);
	CHECK(val && got, "out of memory");
	while (fz_more(&f) && ops++ < 512) {
		uint32_t op = fz_pick(&f, 7), k = fz_pick(&f, KEYS);
		uint64_t fl = fz_pick(&f, 16) ? fz_pick(&f, 3) : fz_u8(&f);
		bool in;
		int want;
		void *pv;

		key_of(k, ks, key);
		in = md.in[k];
		switch (op) {
		case 0:		/* control-plane lookup */
			err = uxdp_bpf_map_lookup(m, key, got, 0);
			CHECK(err == (in ? 0 : -ENOENT), "lookup %u: %d", k,
			      err);
			if (in)
				for (i = 0; i < ncpu; i++)
					CHECK(!memcmp(got + i * stride,
						      md.v[k] + i * stride, vs),
					      "lookup %u cpu %u: value", k, i);
			break;
		case 1:		/* control-plane update */
		case 2:		/* a program's update */
			/* The control plane passes every CPU's value, a
			 * program its own. */
			for (i = 0; i < (op == 1 ? vlen : vs); i++)
				val[i] = fz_u8(&f);
			/* No bpf_spin_lock in these values: BPF_F_LOCK is
			 * as wrong as an unknown flag. */
			if ((fl & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST ||
			    (fl & BPF_F_LOCK))
				want = -EINVAL;
			else if (in && fl == BPF_NOEXIST)
				want = -EEXIST;
			else if (!in && fl == BPF_EXIST)
				want = -ENOENT;
			else if (!in && md.n == max && !lru)
				want = -E2BIG;
			else
				want = 0;
			if (op == 1) {
				err = uxdp_bpf_map_update(m, key, val, fl);
			} else {
				xdp_rcu_lock(cpu);
				err = (int)m->ops->map_update_elem(m, key, val,
								   fl);
				xdp_rcu_unlock(cpu);
			}
			CHECK(err == want, "update %u flags %llu (%s): %d, "
			      "want %d", k, (unsigned long long)fl,
			      op == 1 ? "control plane" : "program", err,
			      want);
			if (err)
				break;
			if (!in && md.n == max) {
				/* LRU, full: exactly one other key went. */
				uint32_t gone = KEYS, j;

				for (j = 0; j < KEYS; j++) {
					uint8_t kk[MAX_KEY];

					if (!md.in[j] || j == k)
						continue;
					key_of(j, ks, kk);
					if (uxdp_bpf_map_lookup(m, kk, got, 0))
					{
						CHECK(gone == KEYS, "LRU: keys "
						      "%u and %u both gone",
						      gone, j);
						gone = j;
					}
				}
				CHECK(gone < KEYS, "LRU: a full map took key "
				      "%u and evicted nothing", k);
				free(md.v[gone]);
				md.v[gone] = NULL;
				md.in[gone] = false;
				md.n--;
			}
			if (!in) {
				md.v[k] = calloc(1, vlen);
				CHECK(md.v[k], "out of memory");
				md.in[k] = true;
				md.n++;
			}
			if (op == 1) {
				for (i = 0; i < ncpu; i++)
					memcpy(md.v[k] + i * stride,
					       val + i * stride, vs);
			} else {
				/* A program's: its CPU's value; a new
				 * per-CPU element's others are zero. */
				if (!in)
					memset(md.v[k], 0, vlen);
				memcpy(md.v[k] + me * stride, val, vs);
			}
			break;
		case 3:		/* control-plane delete */
		case 4:		/* a program's delete */
			if (op == 3) {
				err = uxdp_bpf_map_delete(m, key);
			} else {
				xdp_rcu_lock(cpu);
				err = (int)m->ops->map_delete_elem(m, key);
				xdp_rcu_unlock(cpu);
			}
			CHECK(err == (in ? 0 : -ENOENT), "delete %u: %d", k,
			      err);
			if (in) {
				free(md.v[k]);
				md.v[k] = NULL;
				md.in[k] = false;
				md.n--;
			}
			break;
		case 5:		/* a program's lookup */
			xdp_rcu_lock(cpu);
			pv = m->ops->map_lookup_elem(m, key);
			CHECK(!pv == !in, "program lookup %u: %p", k, pv);
			if (pv)
				CHECK(!memcmp(pv, md.v[k] + me * stride, vs),
				      "program lookup %u: value", k);
			xdp_rcu_unlock(cpu);
			break;
		default: {	/* get_next_key of NULL, a key there or not */
			bool from = fz_bit(&f);

			err = uxdp_bpf_map_get_next_key(m, from ? key : NULL,
							next);
			/* After a key there: the next or the end; else the
			 * first, if any. */
			if (!md.n)
				CHECK(err == -ENOENT, "get_next_key: %d of an "
				      "empty map", err);
			else if (from && in)
				CHECK(!err || err == -ENOENT, "get_next_key: "
				      "%d", err);
			else
				CHECK(!err, "get_next_key: %d with %u keys",
				      err, md.n);
			if (!err) {
				i = index_of(next, ks);
				CHECK(i < KEYS && md.in[i],
				      "get_next_key: a key not in the map");
			}
			break;
		}
		}
	}
	/* Every key once. */
	n = 0;
	for (err = uxdp_bpf_map_get_next_key(m, NULL, next); !err;
	     err = uxdp_bpf_map_get_next_key(m, key, next)) {
		i = index_of(next, ks);
		CHECK(i < KEYS && md.in[i], "iteration: a key not in the map");
		memcpy(key, next, ks);
		CHECK(++n <= md.n, "iteration: more keys than the map's %u",
		      md.n);
	}
	CHECK(err == -ENOENT && n == md.n, "iteration: %u keys of %u (%d)",
	      n, md.n, err);
	for (i = 0; i < KEYS; i++)
		free(md.v[i]);
	free(val);
	free(got);
	uxdp_bpf_map_free(m);
	return 0;
}
