/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_LPM_TRIE (src/bpf/map_lpm.c): the kernel's definition
 * checks; longest-prefix lookups against a model (a list of entries,
 * searched by brute force); the same random operations on the running
 * kernel's trie (root, libbpf's bpf() wrappers; skipped loudly without
 * them, failed under UXDP_CI=1): every return value equal, every lookup's
 * value, and the whole iteration in the kernel's order (get_next_key's
 * post-order) after every step; readers that see a whole old or new value
 * while a writer replaces, deletes and adds prefixes (TSan).
 *
 * Kernel versions: BPF_NOEXIST/BPF_EXIST on an LPM trie, and a
 * replacement in a full trie, changed in 6.13 (docs/semantics.md); uxdp
 * has the newer rules, and the kernel test says which it met: on an older
 * kernel the steps whose result the change explains are counted, not
 * failed.
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

struct key4 {
	uint32_t prefixlen;
	uint8_t a[4];
};

static struct uxdp_bpf_map *new_map(uint32_t key, uint32_t value,
				    uint32_t max, uint32_t flags)
{
	struct uxdp_bpf_map *m = uxdp_bpf_map_new("lpm", BPF_MAP_TYPE_LPM_TRIE,
						  key, value, max, flags);

	assert_non_null(m);
	if (uxdp_bpf_map_create(m))
		fail_msg("create: %s", uxdp_errmsg());
	return m;
}

/* The kernel's trie_alloc() checks, case by case. */
static void test_definitions(void **state)
{
	static const struct {
		uint32_t key, value, max, flags;
		int err;
	} defs[] = {
		{ 8, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 8, 8, 16, 0, -EINVAL },		/* must be no-prealloc */
		{ 8, 8, 0, BPF_F_NO_PREALLOC, -EINVAL },
		{ 4, 8, 16, BPF_F_NO_PREALLOC, -EINVAL },	/* no data */
		{ 5, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 260, 8, 16, BPF_F_NO_PREALLOC, 0 },
		{ 261, 8, 16, BPF_F_NO_PREALLOC, -EINVAL },
		{ 8, 0, 16, BPF_F_NO_PREALLOC, -EINVAL },
		{ 20, 1, 16, BPF_F_NO_PREALLOC, 0 },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED, -EINVAL },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_MMAPABLE, -EINVAL },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, 0 },
		{ 8, 8, 16, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG |
		  BPF_F_WRONLY_PROG, -EINVAL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		struct uxdp_bpf_map *m = uxdp_bpf_map_new("lpm",
			BPF_MAP_TYPE_LPM_TRIE, defs[i].key, defs[i].value,
			defs[i].max, defs[i].flags);
		int err = uxdp_bpf_map_create(m);

		if (err != defs[i].err)
			fail_msg("definition %zu (key %u value %u max %u flags "
				 "0x%x): %d, want %d (%s)", i, defs[i].key,
				 defs[i].value, defs[i].max, defs[i].flags, err,
				 defs[i].err, uxdp_errmsg());
		uxdp_bpf_map_free(m);
	}
}

/* ---- a model: the entries, searched by brute force ------------------------ */

#define MODEL_MAX	24
#define MODEL_OPS	40000

struct entry {
	uint32_t prefixlen;
	uint8_t a[4];
	uint64_t v;
};

struct model {
	struct entry e[MODEL_MAX];
	uint32_t n;
};

static bool prefix_eq(const uint8_t *x, const uint8_t *y, uint32_t bits)
{
	uint32_t i;

	for (i = 0; i < bits; i++)
		if (((x[i / 8] ^ y[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static int model_find(const struct model *md, const struct key4 *k)
{
	uint32_t i;

	for (i = 0; i < md->n; i++)
		if (md->e[i].prefixlen == k->prefixlen &&
		    prefix_eq(md->e[i].a, k->a, k->prefixlen))
			return (int)i;
	return -1;
}

static int model_lookup(const struct model *md, const struct key4 *k,
			uint64_t *v)
{
	int best = -1;
	uint32_t i;

	if (k->prefixlen > 32)
		return -ENOENT;
	for (i = 0; i < md->n; i++)
		if (md->e[i].prefixlen <= k->prefixlen &&
		    prefix_eq(md->e[i].a, k->a, md->e[i].prefixlen) &&
		    (best < 0 || md->e[i].prefixlen >
				 md->e[best].prefixlen))
			best = (int)i;
	if (best < 0)
		return -ENOENT;
	*v = md->e[best].v;
	return 0;
}

static int model_update(struct model *md, const struct key4 *k, uint64_t v,
			uint64_t flags)
{
	int at;

	if (flags > BPF_EXIST || k->prefixlen > 32)
		return -EINVAL;
	at = model_find(md, k);
	if (at >= 0) {
		if (flags == BPF_NOEXIST)
			return -EEXIST;
		memcpy(md->e[at].a, k->a, 4);	/* the new key's bits */
		md->e[at].v = v;
		return 0;
	}
	if (flags == BPF_EXIST)
		return -ENOENT;
	if (md->n == MODEL_MAX)
		return -ENOSPC;
	md->e[md->n].prefixlen = k->prefixlen;
	memcpy(md->e[md->n].a, k->a, 4);
	md->e[md->n].v = v;
	md->n++;
	return 0;
}

static int model_delete(struct model *md, const struct key4 *k)
{
	int at;

	if (k->prefixlen > 32)
		return -EINVAL;
	at = model_find(md, k);
	if (at < 0)
		return -ENOENT;
	md->e[at] = md->e[--md->n];
	return 0;
}

enum { OP_LOOKUP, OP_UPDATE, OP_DELETE, OP_NEXT, OP_N };

struct step {
	int op;
	struct key4 k;
	uint64_t v, flags;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Keys from a small space (so prefixes nest, share and collide): four
 * first bytes, lengths weighted to the common ones, now and then past 32. */
static struct step step_of(uint64_t *seed)
{
	static const uint32_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 23, 24,
					 25, 31, 32, 32, 24, 16, 8, 33 };
	uint64_t r = rnd(seed), r2 = rnd(seed);
	struct step s;

	memset(&s, 0, sizeof(s));
	s.op = (int)(r % OP_N);
	s.k.prefixlen = lens[(r >> 8) % ARRAY_SIZE(lens)];
	s.k.a[0] = (uint8_t)(10 + (r2 & 3));
	s.k.a[1] = (uint8_t)((r2 >> 2) & 0x81);
	s.k.a[2] = (uint8_t)((r2 >> 10) & 0x0f);
	s.k.a[3] = (uint8_t)(r2 >> 20);
	s.v = r2 >> 32;
	s.flags = (r >> 16) % 4 == 3 ? 7 : (r >> 16) % 4;	/* 7: bad */
	return s;
}

static int uxdp_step(struct uxdp_bpf_map *m, const struct step *s,
		     uint64_t *v)
{
	struct key4 next;

	switch (s->op) {
	case OP_LOOKUP:
		return uxdp_bpf_map_lookup(m, &s->k, v, 0);
	case OP_UPDATE:
		return uxdp_bpf_map_update(m, &s->k, &s->v, s->flags);
	case OP_DELETE:
		return uxdp_bpf_map_delete(m, &s->k);
	default:
		return uxdp_bpf_map_get_next_key(m, &s->k, &next);
	}
}

static void test_model(void **state)
{
	struct uxdp_bpf_map *m = new_map(8, 8, MODEL_MAX, BPF_F_NO_PREALLOC);
	struct model md = { .n = 0 };
	uint64_t seed = 0x5eed1, a = 0, b = 0;
	uint32_t i, n;
	int want, got;

	(void)state;
	for (i = 0; i < MODEL_OPS; i++) {
		struct step s = step_of(&seed);

		got = uxdp_step(m, &s, &b);
		switch (s.op) {
		case OP_LOOKUP:
			want = model_lookup(&md, &s.k, &a);
			break;
		case OP_UPDATE:
			want = model_update(&md, &s.k, s.v, s.flags);
			break;
		case OP_DELETE:
			want = model_delete(&md, &s.k);
			break;
		default:
			/* The order is the kernel's (test_kernel): the model
			 * knows only that an empty trie has no key, and that
			 * a key past the last is no error but -ENOENT. */
			want = !md.n ? -ENOENT : got == -ENOENT ? -ENOENT : 0;
			break;
		}
		if (want != got)
			fail_msg("step %u: op %d key %u.%u.%u.%u/%u flags %llu: "
				 "uxdp %d, the model %d", i, s.op, s.k.a[0],
				 s.k.a[1], s.k.a[2], s.k.a[3], s.k.prefixlen,
				 (unsigned long long)s.flags, got, want);
		if (s.op == OP_LOOKUP && !got && a != b)
			fail_msg("step %u: value %llu, the model %llu", i,
				 (unsigned long long)b, (unsigned long long)a);
	}
	/* Every entry once in the iteration, with its key as stored. */
	{
		struct key4 k, next;
		int e;

		n = 0;
		for (e = uxdp_bpf_map_get_next_key(m, NULL, &next); !e;
		     e = uxdp_bpf_map_get_next_key(m, &k, &next)) {
			k = next;
			assert_true(model_find(&md, &k) >= 0);
			n++;
		}
		assert_int_equal(e, -ENOENT);
		assert_int_equal(n, md.n);
	}
	fprintf(stderr, "test_model: %u steps equal to the model, %u entries "
		"at the end\n", MODEL_OPS, md.n);
	uxdp_bpf_map_free(m);
}

/* ---- the kernel's trie ------------------------------------------------------- */

/* The iteration of both, key by key, in order: 0 if the same. */
static int iter_diff(int fd, struct uxdp_bpf_map *m, char *why, size_t len)
{
	struct key4 kk, uk, kn, un;
	int ke, ue, i = 0;
	uint64_t kv, uv;

	ke = bpf_map_get_next_key(fd, NULL, &kn) ? -errno : 0;
	ue = uxdp_bpf_map_get_next_key(m, NULL, &un);
	for (;; i++) {
		if (ke != ue || (!ke && memcmp(&kn, &un, sizeof(kn)))) {
			snprintf(why, len, "iteration, key %d: kernel %d "
				 "%u.%u.%u.%u/%u, uxdp %d %u.%u.%u.%u/%u", i,
				 ke, kn.a[0], kn.a[1], kn.a[2], kn.a[3],
				 kn.prefixlen, ue, un.a[0], un.a[1], un.a[2],
				 un.a[3], un.prefixlen);
			return -1;
		}
		if (ke)
			return 0;
		/* A key as stored looks up its own value (or a longer
		 * prefix's: both sides the same). */
		if (bpf_map_lookup_elem(fd, &kn, &kv) ||
		    uxdp_bpf_map_lookup(m, &un, &uv, 0) || kv != uv) {
			snprintf(why, len, "iteration, key %d: values differ",
				 i);
			return -1;
		}
		kk = kn;
		uk = un;
		ke = bpf_map_get_next_key(fd, &kk, &kn) ? -errno : 0;
		ue = uxdp_bpf_map_get_next_key(m, &uk, &un);
	}
}

/* Which LPM update rules the kernel has: 6.13's (flags honoured) or the
 * older (flags ignored: BPF_NOEXIST on an entry there succeeds). */
static bool kernel_new_rules(int fd)
{
	struct key4 k = { 32, { 1, 2, 3, 4 } };
	uint64_t v = 1;
	bool n;

	assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
	n = bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST) && errno == EEXIST;
	assert_int_equal(bpf_map_delete_elem(fd, &k), 0);
	return n;
}

static void test_kernel(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	struct uxdp_bpf_map *m;
	uint64_t seed = 0xfeed5, a = 0, b = 0;
	uint32_t i, explained = 0;
	struct utsname u;
	char why[256];
	bool fresh;
	int fd;

	(void)state;
	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "uxdp_t_lpm", 8, 8,
			    MODEL_MAX, &o);
	if (fd < 0) {
		if (getenv("UXDP_CI"))
			fail_msg("bpf_map_create: %s (CI needs root and bpf)",
				 strerror(errno));
		fprintf(stderr, "SKIP test_kernel: bpf_map_create: %s (needs "
			"root)\n", strerror(errno));
		skip();
	}
	assert_int_equal(uname(&u), 0);
	fresh = kernel_new_rules(fd);
	fprintf(stderr, "test_kernel: kernel %s has the %s LPM update rules\n",
		u.release, fresh ? "6.13+ (BPF_NOEXIST/BPF_EXIST honoured, "
		"a full trie takes a replacement)" : "older (flags ignored, a "
		"full trie refuses every update)");
	m = new_map(8, 8, MODEL_MAX, BPF_F_NO_PREALLOC);
	for (i = 0; i < MODEL_OPS / 4; i++) {
		struct step s = step_of(&seed);
		struct key4 next;
		int want, got = uxdp_step(m, &s, &b);

		switch (s.op) {
		case OP_LOOKUP:
			want = bpf_map_lookup_elem(fd, &s.k, &a);
			break;
		case OP_UPDATE:
			want = bpf_map_update_elem(fd, &s.k, &s.v, s.flags);
			break;
		case OP_DELETE:
			want = bpf_map_delete_elem(fd, &s.k);
			break;
		default:
			want = bpf_map_get_next_key(fd, &s.k, &next);
			break;
		}
		want = want ? -errno : 0;
		if (want != got && !fresh && s.op == OP_UPDATE) {
			/* The old rules: the two sides part here for good;
			 * said, and the rest not compared. */
			explained++;
			fprintf(stderr, "test_kernel: step %u: an update the "
				"6.13 change explains (kernel %d, uxdp %d): "
				"compared up to here\n", i, want, got);
			break;
		}
		if (want != got)
			fail_msg("step %u: op %d key %u.%u.%u.%u/%u flags %llu: "
				 "uxdp %d, the kernel %d", i, s.op, s.k.a[0],
				 s.k.a[1], s.k.a[2], s.k.a[3], s.k.prefixlen,
				 (unsigned long long)s.flags, got, want);
		if (s.op == OP_LOOKUP && !got && a != b)
			fail_msg("step %u: value %llu, the kernel %llu", i,
				 (unsigned long long)b, (unsigned long long)a);
		if (s.op != OP_LOOKUP && iter_diff(fd, m, why, sizeof(why)))
			fail_msg("step %u (op %d): %s", i, s.op, why);
	}
	fprintf(stderr, "test_kernel: against kernel %s: %u steps equal (return "
		"values, values, and the whole iteration in order after each "
		"change)%s\n", u.release, i, explained ? "; stopped at a "
		"difference the kernel's version explains" : "");
	close(fd);
	uxdp_bpf_map_free(m);
}

/* ---- readers against a writer --------------------------------------------- */

#define WORDS	8

struct race {
	struct uxdp_bpf_map *m;
	int stop;
	unsigned long reads, found, torn;
};

/* A program's view, in a read-side section as every run has: a value
 * found is whole (all its words the same). */
static void *reader(void *arg)
{
	struct race *r = arg;
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();
	uint32_t i = 0;

	assert_non_null(cpu);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct key4 k = { 32, { 10, 0, (uint8_t)(i & 3),
					(uint8_t)(i >> 2) } };
		const uint64_t *v;

		xdp_rcu_lock(cpu);
		v = r->m->ops->map_lookup_elem(r->m, &k);
		if (v) {
			uint64_t w0 = __atomic_load_n(&v[0], __ATOMIC_RELAXED);

			for (int w = 1; w < WORDS; w++)
				if (__atomic_load_n(&v[w], __ATOMIC_RELAXED) !=
				    w0)
					r->torn++;
			r->found++;
		}
		xdp_rcu_unlock(cpu);
		r->reads++;
		i = (i + 1) & 1023;
	}
	return NULL;
}

static void test_readers_writer(void **state)
{
	struct uxdp_bpf_map *m = new_map(8, 8 * WORDS, 64, BPF_F_NO_PREALLOC);
	struct race r[2] = { { .m = m }, { .m = m } };
	pthread_t th[2];
	uint64_t seed = 0x77, val[WORDS];
	int i, w;

	(void)state;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, &r[i]), 0);
	for (i = 0; i < 50000; i++) {
		uint64_t x = rnd(&seed);
		struct key4 k = { (uint32_t)(16 + x % 17), { 10, 0,
				  (uint8_t)((x >> 8) & 3),
				  (uint8_t)(x >> 16) } };

		for (w = 0; w < WORDS; w++)
			val[w] = x;
		if ((x >> 40) % 3)
			(void)uxdp_bpf_map_update(m, &k, val, BPF_ANY);
		else
			(void)uxdp_bpf_map_delete(m, &k);
	}
	for (i = 0; i < 2; i++)
		__atomic_store_n(&r[i].stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].torn, 0);
	}
	fprintf(stderr, "test_readers_writer: 50000 updates and deletes under "
		"2 readers: %lu lookups, %lu found, 0 torn\n",
		r[0].reads + r[1].reads, r[0].found + r[1].found);
	uxdp_bpf_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_readers_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
