/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_HASH and PERCPU_HASH (src/bpf/map_hash.c): the kernel's
 * definition checks, update flags and errors, max_entries, iteration and
 * the per-CPU layout; a random sequence of operations against a model;
 * the same sequence against the running kernel's hash map (root, libbpf's
 * bpf() wrappers; skipped loudly without them); readers that must see a
 * whole old or a whole new value while a writer replaces and deletes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "t_helpers.h"

#include <bpf/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#include "../src/internal.h"
#include "../src/bpf/bpf_internal.h"
#include "../src/xdp/xdp_internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static struct uxdp_bpf_map *new_map(uint32_t type, uint32_t key,
				    uint32_t value, uint32_t max,
				    uint32_t flags)
{
	struct uxdp_bpf_map *m = uxdp_bpf_map_new("h", type, key, value, max,
						  flags);

	assert_non_null(m);
	if (uxdp_bpf_map_create(m))
		fail_msg("create: %s", uxdp_errmsg());
	return m;
}

/* The kernel's htab_map_alloc_check(), case by case. */
static void test_definitions(void **state)
{
	static const struct {
		uint32_t type, key, value, max, flags;
		int err;
	} defs[] = {
		{ BPF_MAP_TYPE_HASH, 4, 8, 1, 0, 0 },
		{ BPF_MAP_TYPE_HASH, 0, 8, 1, 0, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 0, 1, 0, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 8, 0, 0, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 8, 1, BPF_F_NO_PREALLOC, 0 },
		{ BPF_MAP_TYPE_HASH, 4, 8, 1, BPF_F_ZERO_SEED, 0 },
		{ BPF_MAP_TYPE_HASH, 4, 8, 1, BPF_F_MMAPABLE, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 8, 1, BPF_F_NO_COMMON_LRU, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 8, 1,
		  BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG, -EINVAL },
		{ BPF_MAP_TYPE_HASH, 4, 4U << 20, 1, 0, -E2BIG },
		{ BPF_MAP_TYPE_HASH, 4, 8, (1U << 31) + 1, 0, -E2BIG },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 1, 0, 0 },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 32768, 1, 0, 0 },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 32769, 1, 0, -E2BIG },
		{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 1, BPF_F_NUMA_NODE, -EINVAL },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 1, 0, 0 },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 1, BPF_F_NO_COMMON_LRU, 0 },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 1, BPF_F_NO_PREALLOC, -524 },
		/* uxdp's limit of an LRU's preallocated slots (2^30 bytes). */
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 89478486, 0, -E2BIG },
		{ BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 1U << 31, 0, -E2BIG },
		{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 1,
		  BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE, -EINVAL },
		{ BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 1, 0, 0 },
		{ BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 32769, 1, 0, -E2BIG },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		struct uxdp_bpf_map *m;
		int err;

		m = uxdp_bpf_map_new("d", defs[i].type, defs[i].key,
				     defs[i].value, defs[i].max, defs[i].flags);
		assert_non_null(m);
		err = uxdp_bpf_map_create(m);
		if (err != defs[i].err)
			fail_msg("definition %zu: %d, want %d: %s", i, err,
				 defs[i].err, uxdp_errmsg());
		if (err)
			assert_non_null(strstr(uxdp_errmsg(), "map d"));
		uxdp_bpf_map_free(m);
	}
}

/* Flags, errors, max_entries, delete, iteration: the same for both. */
static void semantics(uint32_t type)
{
	const uint32_t max = 8;
	unsigned int ncpus = (unsigned int)uxdp_bpf_num_possible_cpus();
	bool percpu = type == BPF_MAP_TYPE_PERCPU_HASH;
	size_t vlen = percpu ? (size_t)ncpus * 8 : 8;
	struct uxdp_bpf_map *m = new_map(type, 4, 8, max, 0);
	uint64_t *v = calloc(1, vlen), *got = calloc(1, vlen);
	uint32_t k, next, seen = 0;
	int n;

	assert_non_null(v);
	assert_non_null(got);
	k = 1;
	v[0] = 11;
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), -ENOENT);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_EXIST), -ENOENT);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_NOEXIST), 0);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_NOEXIST), -EEXIST);
	v[0] = 12;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_EXIST), 0);
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), 0);
	assert_int_equal(got[0], 12);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, 3), -EINVAL);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_F_LOCK), -EINVAL);
	/* Full: a new key is -E2BIG, a replacement is not. */
	for (k = 2; k <= max; k++)
		assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_ANY), 0);
	k = max + 1;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_ANY), -E2BIG);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_NOEXIST), -E2BIG);
	k = 3;
	v[0] = 33;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_ANY), 0);
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), 0);
	assert_int_equal(got[0], 33);
	/* Every key once, in some order; then -ENOENT. */
	assert_int_equal(uxdp_bpf_map_get_next_key(m, NULL, &next), 0);
	for (n = 0; n < 20; n++) {
		assert_true(next >= 1 && next <= max);
		assert_false(seen & 1U << next);
		seen |= 1U << next;
		k = next;
		if (uxdp_bpf_map_get_next_key(m, &k, &next) == -ENOENT)
			break;
	}
	assert_int_equal(seen, ((1U << (max + 1)) - 1) & ~1U);
	/* A key not in the map: the first. */
	k = 1000;
	assert_int_equal(uxdp_bpf_map_get_next_key(m, &k, &next), 0);
	/* Delete frees a place. */
	k = 5;
	assert_int_equal(uxdp_bpf_map_delete(m, &k), 0);
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -ENOENT);
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), -ENOENT);
	k = max + 1;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_NOEXIST), 0);
	free(v);
	free(got);
	uxdp_bpf_map_free(m);
}

static void test_semantics_hash(void **state)
{
	(void)state;
	semantics(BPF_MAP_TYPE_HASH);
}

static void test_semantics_percpu(void **state)
{
	(void)state;
	semantics(BPF_MAP_TYPE_PERCPU_HASH);
}

/*
 * The per-CPU layout (value_size rounded up to 8 per CPU) and what a
 * program's calls do: its lookup gives its thread's value; its update of
 * a new key sets its value and zeroes the others; of an existing key,
 * writes its own in place and leaves the others.
 */
static void test_percpu_program(void **state)
{
	unsigned int ncpus = (unsigned int)uxdp_bpf_num_possible_cpus(), i;
	uint32_t me = uxdp_thread_index() % ncpus;
	struct uxdp_bpf_map *m = new_map(BPF_MAP_TYPE_PERCPU_HASH, 4, 12, 4, 0);
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();
	uint8_t *buf = calloc((size_t)ncpus, 16), val[12], *mine;
	uint32_t k = 7;

	(void)state;
	assert_non_null(buf);
	assert_non_null(cpu);
	for (i = 0; i < ncpus; i++)
		memset(buf + i * 16, (int)i + 1, 12);
	assert_int_equal(uxdp_bpf_map_update(m, &k, buf, 0), 0);
	memset(buf, 0, (size_t)ncpus * 16);
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, buf, 0), 0);
	for (i = 0; i < ncpus; i++) {
		assert_int_equal(buf[i * 16 + 11], i + 1);
		assert_int_equal(buf[i * 16 + 12], 0);	/* the padding */
	}
	xdp_rcu_lock(cpu);
	mine = m->ops->map_lookup_elem(m, &k);
	assert_non_null(mine);
	assert_int_equal(mine[0], me + 1);
	/* Existing: this CPU's in place. */
	memset(val, 0xaa, sizeof(val));
	assert_int_equal(m->ops->map_update_elem(m, &k, val, BPF_EXIST), 0);
	assert_int_equal(mine[11], 0xaa);
	/* New: this CPU's, the rest zero. */
	k = 8;
	assert_int_equal(m->ops->map_update_elem(m, &k, val, BPF_NOEXIST), 0);
	assert_int_equal(m->ops->map_update_elem(m, &k, val, BPF_NOEXIST),
			 -EEXIST);
	xdp_rcu_unlock(cpu);
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, buf, 0), 0);
	for (i = 0; i < ncpus; i++)
		assert_int_equal(buf[i * 16], i == me ? 0xaa : 0);
	k = 7;
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, buf, 0), 0);
	for (i = 0; i < ncpus; i++)
		assert_int_equal(buf[i * 16 + 5],
				 i == me ? 0xaa : i + 1);
	xdp_rcu_lock(cpu);
	assert_int_equal(m->ops->map_delete_elem(m, &k), 0);
	assert_null(m->ops->map_lookup_elem(m, &k));
	xdp_rcu_unlock(cpu);
	free(buf);
	uxdp_bpf_map_free(m);
}

/*
 * LRU: a new key in a full map takes the place of an element instead of
 * -E2BIG, the map never holds more than max_entries, and the bound the
 * clock gives (map_hash.c): an element a program looked up since the
 * last eviction is not the next one evicted. One key looked up before
 * every insert survives 50 turns of new keys; the flags' errors are the
 * hash's.
 */
static void lru(uint32_t type)
{
	const uint32_t max = 16;
	unsigned int ncpus = (unsigned int)uxdp_bpf_num_possible_cpus();
	bool percpu = type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	size_t vlen = percpu ? (size_t)ncpus * 8 : 8;
	struct uxdp_bpf_map *m = new_map(type, 4, 8, max, 0);
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();
	uint64_t *v = calloc(1, vlen), *got = calloc(1, vlen);
	uint32_t k, hot = 1000, next, n;
	int err;

	assert_non_null(v);
	assert_non_null(got);
	assert_non_null(cpu);
	v[0] = 7;
	assert_int_equal(uxdp_bpf_map_update(m, &hot, v, BPF_NOEXIST), 0);
	assert_int_equal(uxdp_bpf_map_update(m, &hot, v, BPF_NOEXIST),
			 -EEXIST);
	k = 1;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_EXIST), -ENOENT);
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, 3), -EINVAL);
	for (k = 0; k < 50 * max; k++) {
		xdp_rcu_lock(cpu);
		assert_non_null(m->ops->map_lookup_elem(m, &hot));
		xdp_rcu_unlock(cpu);
		v[0] = k;
		assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_NOEXIST),
				 0);
		/* The key just written is there. */
		assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), 0);
		assert_int_equal(got[0], k);
	}
	assert_int_equal(uxdp_bpf_map_lookup(m, &hot, got, 0), 0);
	assert_int_equal(got[0], 7);
	/* Full, never more: each key once. */
	n = 0;
	for (err = uxdp_bpf_map_get_next_key(m, NULL, &next); !err;
	     err = uxdp_bpf_map_get_next_key(m, &k, &next)) {
		k = next;
		assert_true(++n <= max);
	}
	assert_int_equal(n, max);
	/* The most recent max - 1 keys and the hot one: a key not looked
	 * up goes in the order it came (the clock passes them in turn). */
	for (k = 50 * max - (max - 1); k < 50 * max; k++)
		assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), 0);
	/* Delete frees a slot: no eviction for the next key. */
	k = 50 * max - 1;
	assert_int_equal(uxdp_bpf_map_delete(m, &k), 0);
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -ENOENT);
	k = 5000;
	assert_int_equal(uxdp_bpf_map_update(m, &k, v, BPF_ANY), 0);
	k = 50 * max - 2;
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, got, 0), 0);
	free(v);
	free(got);
	uxdp_bpf_map_free(m);
}

static void test_lru_hash(void **state)
{
	(void)state;
	lru(BPF_MAP_TYPE_LRU_HASH);
}

static void test_lru_percpu(void **state)
{
	(void)state;
	lru(BPF_MAP_TYPE_LRU_PERCPU_HASH);
}

/* ---- a random sequence against a model, and against the kernel -------- */

#define MODEL_KEYS	24	/* key space: more keys than places */
#define MODEL_MAX	16
#define MODEL_OPS	200000

struct model {
	bool in[MODEL_KEYS];
	uint64_t v[MODEL_KEYS];
	uint32_t n;
};

enum { OP_LOOKUP, OP_UPDATE, OP_DELETE, OP_NEXT, NOPS };

/* One random step: what it is, the key, the flags and the value. */
struct step {
	int op;
	uint32_t key;
	uint64_t flags, value;
};

static struct step step_of(uint64_t *seed)
{
	struct step s;

	s.op = (int)(t_rand(seed) % NOPS);
	s.key = (uint32_t)(t_rand(seed) % MODEL_KEYS);
	/* Mostly the three flags, sometimes a bad one. */
	s.flags = t_rand(seed) % 16 ? t_rand(seed) % 3 : 4 + t_rand(seed) % 4;
	s.value = t_rand(seed);
	return s;
}

/* The kernel's answer to @s on a model of its map. */
static int model_step(struct model *md, const struct step *s, uint64_t *out)
{
	bool in = md->in[s->key];

	switch (s->op) {
	case OP_LOOKUP:
		*out = md->v[s->key];
		return in ? 0 : -ENOENT;
	case OP_UPDATE:
		if (s->flags > BPF_EXIST)
			return -EINVAL;
		if (in && s->flags == BPF_NOEXIST)
			return -EEXIST;
		if (!in && s->flags == BPF_EXIST)
			return -ENOENT;
		if (!in && md->n == MODEL_MAX)
			return -E2BIG;
		md->n += !in;
		md->in[s->key] = true;
		md->v[s->key] = s->value;
		return 0;
	case OP_DELETE:
		if (!in)
			return -ENOENT;
		md->in[s->key] = false;
		md->n--;
		return 0;
	}
	return md->n ? 0 : -ENOENT;	/* OP_NEXT: is there a first key */
}

static int uxdp_step(struct uxdp_bpf_map *m, const struct step *s,
		     uint64_t *out)
{
	uint32_t next;
	int err;

	switch (s->op) {
	case OP_LOOKUP:
		return uxdp_bpf_map_lookup(m, &s->key, out, 0);
	case OP_UPDATE:
		return uxdp_bpf_map_update(m, &s->key, &s->value, s->flags);
	case OP_DELETE:
		return uxdp_bpf_map_delete(m, &s->key);
	}
	err = uxdp_bpf_map_get_next_key(m, NULL, &next);
	return err;
}

static void test_model(void **state)
{
	struct uxdp_bpf_map *m = new_map(BPF_MAP_TYPE_HASH, 4, 8, MODEL_MAX, 0);
	struct model md = { 0 };
	uint64_t seed = 0x5eed, a, b;
	uint32_t i, k, next, n;

	(void)state;
	for (i = 0; i < MODEL_OPS; i++) {
		struct step s = step_of(&seed);
		int want = model_step(&md, &s, &a), got = uxdp_step(m, &s, &b);

		if (want != got)
			fail_msg("step %u: op %d key %u flags %llu: %d, the "
				 "kernel's rule says %d", i, s.op, s.key,
				 (unsigned long long)s.flags, got, want);
		if (s.op == OP_LOOKUP && !got && a != b)
			fail_msg("step %u: key %u: value %llu, want %llu", i,
				 s.key, (unsigned long long)b,
				 (unsigned long long)a);
	}
	/* The contents, by iteration: the model's keys, each once. */
	n = 0;
	for (k = 0, i = uxdp_bpf_map_get_next_key(m, NULL, &next); !i;
	     i = uxdp_bpf_map_get_next_key(m, &k, &next)) {
		assert_true(next < MODEL_KEYS && md.in[next]);
		k = next;
		n++;
		assert_true(n <= md.n);
	}
	assert_int_equal(n, md.n);
	uxdp_bpf_map_free(m);
}

/* The same sequence on the running kernel's hash map: the same return
 * values and the same contents. */
static void test_kernel(void **state)
{
	struct uxdp_bpf_map *m;
	uint64_t seed = 0xbeef, a, b;
	uint32_t i, k, next, n = 0, nk = 0;
	struct utsname u;
	int fd;

	(void)state;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "uxdp_t_hash", 4, 8,
			    MODEL_MAX, NULL);
	if (fd < 0) {
		if (getenv("UXDP_CI"))
			fail_msg("bpf_map_create: %s (CI needs root and bpf)",
				 strerror(errno));
		fprintf(stderr, "SKIP test_kernel: bpf_map_create: %s (needs "
			"root)\n", strerror(errno));
		skip();
	}
	m = new_map(BPF_MAP_TYPE_HASH, 4, 8, MODEL_MAX, 0);
	for (i = 0; i < MODEL_OPS / 4; i++) {
		struct step s = step_of(&seed);
		int want, got = uxdp_step(m, &s, &b);

		switch (s.op) {
		case OP_LOOKUP:
			want = bpf_map_lookup_elem(fd, &s.key, &a);
			break;
		case OP_UPDATE:
			want = bpf_map_update_elem(fd, &s.key, &s.value,
						   s.flags);
			break;
		case OP_DELETE:
			want = bpf_map_delete_elem(fd, &s.key);
			break;
		default:
			want = bpf_map_get_next_key(fd, NULL, &next);
			break;
		}
		want = want ? -errno : 0;
		if (want != got)
			fail_msg("step %u: op %d key %u flags %llu: uxdp %d, "
				 "the kernel %d", i, s.op, s.key,
				 (unsigned long long)s.flags, got, want);
		if (s.op == OP_LOOKUP && !got && a != b)
			fail_msg("step %u: key %u: uxdp %llu, the kernel %llu",
				 i, s.key, (unsigned long long)b,
				 (unsigned long long)a);
	}
	/* The kernel's keys, each in uxdp's map with the same value. */
	for (i = bpf_map_get_next_key(fd, NULL, &next); !i;
	     i = bpf_map_get_next_key(fd, &k, &next)) {
		k = next;
		assert_int_equal(bpf_map_lookup_elem(fd, &k, &a), 0);
		assert_int_equal(uxdp_bpf_map_lookup(m, &k, &b, 0), 0);
		assert_int_equal(a, b);
		nk++;
	}
	for (i = uxdp_bpf_map_get_next_key(m, NULL, &next); !i;
	     i = uxdp_bpf_map_get_next_key(m, &k, &next)) {
		k = next;
		n++;
	}
	assert_int_equal(n, nk);
	assert_int_equal(uname(&u), 0);
	fprintf(stderr, "test_kernel: against kernel %s: %u steps equal, %u "
		"keys at the end\n", u.release, MODEL_OPS / 4, nk);
	close(fd);
	uxdp_bpf_map_free(m);
}

/* ---- readers against a writer ------------------------------------------ */

#define WORDS	8

struct race {
	struct uxdp_bpf_map *m;
	int stop;
	unsigned long reads, torn;
};

/* A program's view, in a read-side section as every run has: a value
 * found is whole, all its words the same. */
static void *reader(void *arg)
{
	struct race *r = arg;
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();
	uint64_t seed = (uint64_t)(uintptr_t)&seed;

	assert_non_null(cpu);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t k = (uint32_t)(t_rand(&seed) % 64), j;
		const uint64_t *v;

		xdp_rcu_lock(cpu);
		v = r->m->ops->map_lookup_elem(r->m, &k);
		if (v) {
			for (j = 1; j < WORDS; j++)
				if (__atomic_load_n(&v[j], __ATOMIC_RELAXED) !=
				    __atomic_load_n(&v[0], __ATOMIC_RELAXED))
					r->torn++;
		}
		xdp_rcu_unlock(cpu);
		r->reads++;
	}
	return NULL;
}

static void readers_writer(uint32_t type)
{
	struct race r[2] = { { 0 } };
	struct uxdp_bpf_map *m = new_map(type, 4, WORDS * 8, 48, 0);
	pthread_t th[2];
	uint64_t seed = 7, v[WORDS];
	uint32_t i, j, k, ops = T_TSAN ? 20000 : 300000;
	int err;

	for (i = 0; i < 2; i++) {
		r[i].m = m;
		assert_int_equal(pthread_create(&th[i], NULL, reader, &r[i]), 0);
	}
	for (i = 0; i < ops; i++) {
		k = (uint32_t)(t_rand(&seed) % 64);
		for (j = 0; j < WORDS; j++)
			v[j] = i;
		if (t_rand(&seed) % 3) {
			err = uxdp_bpf_map_update(m, &k, v, BPF_ANY);
			assert_true(err == 0 || err == -E2BIG);
		} else {
			err = uxdp_bpf_map_delete(m, &k);
			assert_true(err == 0 || err == -ENOENT);
		}
	}
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&r[i].stop, 1, __ATOMIC_RELEASE);
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].torn, 0);
		assert_true(r[i].reads > 0);
	}
	/* What is left is consistent with the last counts. */
	for (k = 0, i = 0; k < 64; k++)
		i += uxdp_bpf_map_lookup(m, &k, v, 0) == 0;
	assert_true(i <= 48);
	uxdp_bpf_map_free(m);
}

static void test_readers_writer(void **state)
{
	(void)state;
	readers_writer(BPF_MAP_TYPE_HASH);
}

/* The same for an LRU: the readers' lookups mark elements while the
 * writer's inserts into the full map evict them. */
static void test_readers_writer_lru(void **state)
{
	(void)state;
	readers_writer(BPF_MAP_TYPE_LRU_HASH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_semantics_hash),
		cmocka_unit_test(test_semantics_percpu),
		cmocka_unit_test(test_percpu_program),
		cmocka_unit_test(test_lru_hash),
		cmocka_unit_test(test_lru_percpu),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_readers_writer),
		cmocka_unit_test(test_readers_writer_lru),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
