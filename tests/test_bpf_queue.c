/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * QUEUE and STACK (src/bpf/map_queue.c): the kernel's definition checks,
 * the control plane's push, peek and pop with the kernel's errors, a
 * random walk of operations against a model (both types, sizes 1 to 9,
 * BPF_EXIST into full maps), tests/bpf/queue.bpf.c on both engines
 * against the same model, and threads pushing and popping one map at
 * once: every value pushed is popped once or left in the map, none twice,
 * none made up. test_bpf_kernel compares queue.bpf.c with the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "t_helpers.h"

#include <linux/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

static struct uxdp_bpf_map *qs_open(uint32_t type, uint32_t vs, uint32_t n)
{
	struct uxdp_bpf_map *m = uxdp_bpf_map_open(type, "q", 0, vs, n, 0);

	if (!m)
		fail_msg("open: %s", uxdp_errmsg());
	return m;
}

/* ---- definitions --------------------------------------------------------- */

static void test_definitions(void **state)
{
	static const struct {
		uint32_t type, key, value, max, flags;
		int err;
	} d[] = {
		{ BPF_MAP_TYPE_QUEUE, 0, 4, 1, 0, 0 },
		{ BPF_MAP_TYPE_STACK, 0, 4, 1, 0, 0 },
		{ BPF_MAP_TYPE_QUEUE, 4, 4, 1, 0, -EINVAL },	/* a key */
		{ BPF_MAP_TYPE_STACK, 0, 0, 1, 0, -EINVAL },
		{ BPF_MAP_TYPE_QUEUE, 0, 4, 0, 0, -EINVAL },
		{ BPF_MAP_TYPE_QUEUE, 0, 4, 1, BPF_F_NO_PREALLOC, -EINVAL },
		{ BPF_MAP_TYPE_STACK, 0, 4, 1, BPF_F_MMAPABLE, -EINVAL },
		{ BPF_MAP_TYPE_QUEUE, 0, 4, 1, BPF_F_RDONLY_PROG, 0 },
		{ BPF_MAP_TYPE_QUEUE, 0, (4U << 20) + 1, 1, 0, -E2BIG },
		{ BPF_MAP_TYPE_STACK, 0, 1U << 20, 4096, 0, -E2BIG },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct uxdp_bpf_map *m = uxdp_bpf_map_open(d[i].type, "d",
			d[i].key, d[i].value, d[i].max, d[i].flags);
		int err = m ? 0 : -errno;

		if (err != d[i].err)
			fail_msg("definition %zu: %d, want %d (%s)", i, err,
				 d[i].err, uxdp_errmsg());
		if (m)
			uxdp_bpf_map_close(m);
	}
}

/* ---- the control plane ----------------------------------------------------- */

static void test_control_plane(void **state)
{
	struct uxdp_bpf_map *q = qs_open(BPF_MAP_TYPE_QUEUE, 4, 3);
	struct uxdp_bpf_map *s = qs_open(BPF_MAP_TYPE_STACK, 4, 3);
	uint32_t v, i, key = 0, next;

	(void)state;
	for (i = 1; i <= 3; i++) {
		assert_int_equal(uxdp_bpf_map_update(q, NULL, &i, BPF_ANY), 0);
		assert_int_equal(uxdp_bpf_map_update(s, NULL, &i, 0), 0);
	}
	/* Full: -E2BIG, and nothing changes. */
	v = 9;
	assert_int_equal(uxdp_bpf_map_update(q, NULL, &v, 0), -E2BIG);
	assert_int_equal(uxdp_bpf_map_update(s, NULL, &v, 0), -E2BIG);
	/* Flags the kernel refuses. */
	assert_int_equal(uxdp_bpf_map_update(q, NULL, &v, BPF_NOEXIST),
			 -EINVAL);
	assert_int_equal(uxdp_bpf_map_update(q, NULL, &v, 4), -EINVAL);
	/* A key, for maps that have none: -EINVAL, said why. */
	assert_int_equal(uxdp_bpf_map_update(q, &key, &v, 0), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "pass NULL"));
	assert_int_equal(uxdp_bpf_map_lookup(q, &key, &v, 0), -EINVAL);
	assert_int_equal(uxdp_bpf_map_lookup_and_delete(q, &key, &v, 0),
			 -EINVAL);
	assert_int_equal(uxdp_bpf_map_lookup(q, NULL, NULL, 0), -EINVAL);
	/* delete and get_next_key: -EINVAL (the kernel's). */
	assert_int_equal(uxdp_bpf_map_delete(q, &key), -EINVAL);
	assert_int_equal(uxdp_bpf_map_get_next_key(q, NULL, &next), -EINVAL);
	/* lookup_and_delete takes no flags for these. */
	assert_int_equal(uxdp_bpf_map_lookup_and_delete(q, NULL, &v,
							BPF_F_LOCK), -EINVAL);
	/* Peek: the oldest for a queue, the newest for a stack. */
	assert_int_equal(uxdp_bpf_map_lookup(q, NULL, &v, 0), 0);
	assert_int_equal(v, 1);
	assert_int_equal(uxdp_bpf_map_lookup(s, NULL, &v, 0), 0);
	assert_int_equal(v, 3);
	/* BPF_EXIST into a full map: the oldest goes, for both. */
	v = 4;
	assert_int_equal(uxdp_bpf_map_update(q, NULL, &v, BPF_EXIST), 0);
	assert_int_equal(uxdp_bpf_map_update(s, NULL, &v, BPF_EXIST), 0);
	{
		static const uint32_t wq[] = { 2, 3, 4 }, ws[] = { 4, 3, 2 };

		for (i = 0; i < 3; i++) {
			assert_int_equal(uxdp_bpf_map_lookup_and_delete(q,
					 NULL, &v, 0), 0);
			assert_int_equal(v, wq[i]);
			assert_int_equal(uxdp_bpf_map_lookup_and_delete(s,
					 NULL, &v, 0), 0);
			assert_int_equal(v, ws[i]);
		}
	}
	/* Empty: -ENOENT. */
	assert_int_equal(uxdp_bpf_map_lookup(q, NULL, &v, 0), -ENOENT);
	assert_int_equal(uxdp_bpf_map_lookup_and_delete(s, NULL, &v, 0),
			 -ENOENT);
	uxdp_bpf_map_close(q);
	uxdp_bpf_map_close(s);

	/* lookup_and_delete of other types: not yet, said so. */
	{
		struct uxdp_bpf_map *a = uxdp_bpf_map_open(BPF_MAP_TYPE_ARRAY,
							   "a", 4, 4, 1, 0);

		assert_non_null(a);
		assert_int_equal(uxdp_bpf_map_lookup_and_delete(a, &key, &v,
								0), -EOPNOTSUPP);
		assert_non_null(strstr(uxdp_errmsg(), "lookup_and_delete"));
		uxdp_bpf_map_close(a);
	}
	/* A read-only map: no push, no pop. */
	{
		struct uxdp_bpf_map *r = uxdp_bpf_map_open(BPF_MAP_TYPE_QUEUE,
			"r", 0, 4, 2, BPF_F_RDONLY);

		assert_non_null(r);
		assert_int_equal(uxdp_bpf_map_update(r, NULL, &v, 0), -EPERM);
		assert_int_equal(uxdp_bpf_map_lookup_and_delete(r, NULL, &v,
								0), -EPERM);
		assert_int_equal(uxdp_bpf_map_lookup(r, NULL, &v, 0), -ENOENT);
		uxdp_bpf_map_close(r);
	}
}

/* ---- against a model -------------------------------------------------------- */

/* The model: a plain array, oldest first. */
struct model {
	uint64_t v[16];
	uint32_t n, max;
	bool stack;
};

static int m_push(struct model *m, uint64_t v, uint64_t flags)
{
	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	if (m->n == m->max) {
		if (!(flags & BPF_EXIST))
			return -E2BIG;
		memmove(m->v, m->v + 1, (m->n - 1) * sizeof(m->v[0]));
		m->n--;
	}
	m->v[m->n++] = v;
	return 0;
}

static int m_get(struct model *m, uint64_t *v, bool del)
{
	if (!m->n) {
		*v = 0;
		return -ENOENT;
	}
	if (m->stack) {
		*v = m->v[m->n - 1];
		if (del)
			m->n--;
	} else {
		*v = m->v[0];
		if (del)
			memmove(m->v, m->v + 1, --m->n * sizeof(m->v[0]));
	}
	return 0;
}

static void test_model(void **state)
{
	static const uint64_t flags[] = { BPF_ANY, BPF_EXIST, BPF_NOEXIST, 4 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	uint32_t type, max, step;

	(void)state;
	for (type = 0; type < 2; type++)
		for (max = 1; max <= 9; max++) {
			struct model m = { .max = max, .stack = type };
			struct uxdp_bpf_map *q = qs_open(type ?
				BPF_MAP_TYPE_STACK : BPF_MAP_TYPE_QUEUE, 8, max);

			for (step = 0; step < 4000; step++) {
				uint64_t r = t_rand(&seed), v = r >> 8, got,
					 want;
				int e, we;

				switch (r % 4) {
				case 0:
				case 1:
					e = uxdp_bpf_map_update(q, NULL, &v,
						flags[(r >> 4) % 4]);
					we = m_push(&m, v, flags[(r >> 4) % 4]);
					got = want = 0;
					break;
				case 2:
					got = ~0ULL;
					e = uxdp_bpf_map_lookup(q, NULL, &got, 0);
					we = m_get(&m, &want, false);
					break;
				default:
					got = ~0ULL;
					e = uxdp_bpf_map_lookup_and_delete(q,
						NULL, &got, 0);
					we = m_get(&m, &want, true);
					break;
				}
				if (e != we || (!e && got != want))
					fail_msg("%s of %u, step %u (op %llu): "
						 "%d value %llx, model %d value "
						 "%llx",
						 type ? "stack" : "queue", max,
						 step, (unsigned long long)(r % 4),
						 e, (unsigned long long)got, we,
						 (unsigned long long)want);
			}
			uxdp_bpf_map_close(q);
		}
}

/* ---- a program ---------------------------------------------------------------- */

static uint64_t ret(struct uxdp_bpf_object *obj, uint32_t k)
{
	uint64_t v = 0;

	assert_int_equal(uxdp_bpf_map_lookup(uxdp_bpf_object_find_map(obj,
			 "rets"), &k, &v, 0), 0);
	return v;
}

/*
 * queue.bpf.c on packets of lengths 60..99: its results against the
 * model (the queue of lengths, 4 deep; the stack of records, 3 deep).
 */
static void test_program(void **state)
{
	static const uint32_t engines[] = { UXDP_BPF_ENGINE_INTERP,
					    UXDP_BPF_ENGINE_JIT };
	size_t e;

	(void)state;
	for (e = 0; e < 2; e++) {
		UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
				  .engine = engines[e]);
		struct uxdp_bpf_object *obj;
		struct uxdp_prog *p;
		struct model mq = { .max = 4 }, ms = { .max = 3,
						       .stack = true };
		uint8_t pkt[128];
		uint32_t len, n = 0;

		obj = uxdp_bpf_object_open(T_BPF_DIR "/queue.o", &o);
		if (!obj || uxdp_bpf_object_load(obj))
			fail_msg("queue.o: %s", uxdp_errmsg());
		p = uxdp_bpf_object_prog(obj, "queue");
		assert_non_null(p);
		for (len = 60; len < 100; len++) {
			UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, r,
					  .data_in = pkt, .data_size_in = len);
			uint64_t v, rec;

			memset(pkt, (int)len, sizeof(pkt));
			assert_int_equal(uxdp_bpf_prog_test_run(p, &r), 0);
			assert_int_equal(r.retval, len & 2 ? XDP_DROP :
				XDP_PASS);
			n++;
			/* The stack's records stand in the model as their
			 * length; their head bytes are the length too. */
			assert_int_equal(ret(obj, 0),
				(uint64_t)(int64_t)m_push(&mq, len,
					len & 1 ? BPF_EXIST : 0));
			assert_int_equal(ret(obj, 1),
				(uint64_t)(int64_t)m_push(&ms, len, 0));
			assert_int_equal(ret(obj, 2), (uint64_t)-EINVAL);
			assert_int_equal(ret(obj, 3), (uint64_t)-EINVAL);
			if (n % 3 == 0) {
				int we = m_get(&mq, &v, true);

				assert_int_equal(ret(obj, 4),
						 (uint64_t)(int64_t)we);
				assert_int_equal(ret(obj, 5), v);
				we = m_get(&ms, &rec, true);
				assert_int_equal(ret(obj, 6),
						 (uint64_t)(int64_t)we);
				assert_int_equal(ret(obj, 7), rec);
				assert_int_equal(ret(obj, 8), rec ?
					0x0101010101010101ULL * rec : 0);
			}
			assert_int_equal(ret(obj, 9), (uint64_t)(int64_t)
					 m_get(&mq, &v, false));
			assert_int_equal(ret(obj, 10), v);
			assert_int_equal(ret(obj, 11), (uint64_t)(int64_t)
					 m_get(&ms, &rec, false));
			assert_int_equal(ret(obj, 12), rec);
			/* The empty map: -ENOENT, the buffer zeroed. */
			assert_int_equal(ret(obj, 13), (uint64_t)-ENOENT);
			assert_int_equal(ret(obj, 14), 0);
			assert_int_equal(ret(obj, 15), (uint64_t)-ENOENT);
		}
		uxdp_prog_put(p);
		uxdp_bpf_object_close(obj);
	}
}

/* ---- threads ------------------------------------------------------------------- */

#define T_PUSHERS	2
#define T_POPPERS	2

struct qs_thread {
	struct uxdp_bpf_map *m;
	uint32_t id, count;
	uint8_t *seen;		/* poppers: a byte per value, shared */
	uint64_t popped, pushed, dup, bogus;
	const bool *done;
};

/* Values are id << 24 | i: whose, and which. */
static void *pusher(void *arg)
{
	struct qs_thread *t = arg;
	uint32_t i = 0;

	while (i < t->count) {
		uint64_t v = (uint64_t)t->id << 24 | i;
		int e = uxdp_bpf_map_update(t->m, NULL, &v, 0);

		if (!e) {
			i++;
			t->pushed++;
		} else if (e != -E2BIG) {
			t->bogus++;
			break;
		} else {
			sched_yield();
		}
	}
	return NULL;
}

static void take(struct qs_thread *t, uint64_t v, uint32_t count)
{
	uint64_t who = v >> 24, i = v & 0xffffff;

	if (who >= T_PUSHERS || i >= count) {
		t->bogus++;
		return;
	}
	if (__atomic_exchange_n(&t->seen[who * count + i], 1,
				__ATOMIC_RELAXED))
		t->dup++;
	t->popped++;
}

static void *popper(void *arg)
{
	struct qs_thread *t = arg;
	uint64_t v;

	for (;;) {
		int e = uxdp_bpf_map_lookup_and_delete(t->m, NULL, &v, 0);

		if (!e) {
			take(t, v, t->count);
		} else if (e != -ENOENT) {
			t->bogus++;
			break;
		} else if (__atomic_load_n(t->done, __ATOMIC_ACQUIRE)) {
			break;
		} else {
			sched_yield();
		}
	}
	return NULL;
}

static void stress(uint32_t type, uint32_t max, uint32_t count)
{
	struct uxdp_bpf_map *m = qs_open(type, 8, max);
	struct qs_thread t[T_PUSHERS + T_POPPERS];
	pthread_t th[T_PUSHERS + T_POPPERS];
	uint8_t *seen = calloc(T_PUSHERS, count);
	uint64_t pushed = 0, popped = 0, v;
	bool done = false;
	uint32_t i;

	assert_non_null(seen);
	for (i = 0; i < T_PUSHERS + T_POPPERS; i++) {
		t[i] = (struct qs_thread){ .m = m, .id = i, .count = count,
					   .seen = seen, .done = &done };
		assert_int_equal(pthread_create(&th[i], NULL, i < T_PUSHERS ?
						pusher : popper, &t[i]), 0);
	}
	for (i = 0; i < T_PUSHERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	__atomic_store_n(&done, true, __ATOMIC_RELEASE);
	for (; i < T_PUSHERS + T_POPPERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	/* What the poppers left (they stop once the map is empty after
	 * the pushers ended, so nothing should be). */
	while (!uxdp_bpf_map_lookup_and_delete(m, NULL, &v, 0))
		take(&t[T_PUSHERS], v, count);
	for (i = 0; i < T_PUSHERS + T_POPPERS; i++) {
		if (t[i].dup || t[i].bogus)
			fail_msg("%s of %u: thread %u: %llu popped twice, "
				 "%llu not pushed", type == BPF_MAP_TYPE_STACK ?
				 "stack" : "queue", max, i,
				 (unsigned long long)t[i].dup,
				 (unsigned long long)t[i].bogus);
		pushed += t[i].pushed;
		popped += t[i].popped;
	}
	if (pushed != (uint64_t)T_PUSHERS * count || popped != pushed)
		fail_msg("%s of %u: %llu pushed, %llu popped, want %u each",
			 type == BPF_MAP_TYPE_STACK ? "stack" : "queue", max,
			 (unsigned long long)pushed, (unsigned long long)popped,
			 T_PUSHERS * count);
	free(seen);
	uxdp_bpf_map_close(m);
}

static void test_threads(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 64, 4096 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		stress(BPF_MAP_TYPE_QUEUE, sizes[i], 20000);
		stress(BPF_MAP_TYPE_STACK, sizes[i], 20000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_control_plane),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_program),
		cmocka_unit_test(test_threads),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
