/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ARRAY_OF_MAPS and HASH_OF_MAPS (src/bpf/map_of_maps.c) with
 * tests/bpf/ofmaps.bpf.c on both engines: static initialisers; the
 * control plane's map ids, flags and errors; the inner definition every
 * map put in must match; maps of no object (uxdp_bpf_map_open) and of
 * another object, living as long as a slot holds them; readers running
 * the program through a slot a writer keeps swapping (TSan, ASan: a map is
 * freed only after the grace period). test_bpf_kernel compares the same
 * object with the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "t_helpers.h"

#include <linux/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

static struct uxdp_bpf_object *open_obj(uint32_t engine)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj;

	obj = uxdp_bpf_object_open(T_BPF_DIR "/ofmaps.o", &o);
	if (!obj)
		fail_msg("open: %s", uxdp_errmsg());
	if (uxdp_bpf_object_load(obj))
		fail_msg("load: %s", uxdp_errmsg());
	return obj;
}

static struct uxdp_bpf_map *map_of(struct uxdp_bpf_object *obj,
				   const char *name)
{
	struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(obj, name);

	assert_non_null(m);
	return m;
}

/* An IPv4 frame from 10.0.0.@src to 10.0.0.@dst. */
static void frame(uint8_t *b, uint8_t src, uint8_t dst)
{
	memset(b, 0, 60);
	memset(b, 0xff, 6);
	b[12] = 0x08;
	b[14] = 0x45;
	b[22] = 64;		/* ttl: 64 % 3 == 1, lru_one's key */
	b[23] = 17;
	b[26] = 10;
	b[29] = src;
	b[30] = 10;
	b[33] = dst;
}

static uint32_t run(struct uxdp_prog *prog, uint8_t src, uint8_t dst)
{
	uint8_t in[60];
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = in,
			  .data_size_in = 60);

	frame(in, src, dst);
	if (uxdp_bpf_prog_test_run(prog, &o))
		fail_msg("test run: %s", uxdp_errmsg());
	return o.retval;
}

static uint64_t get64(const struct uxdp_bpf_map *m, uint32_t k)
{
	uint64_t v = 0;

	assert_int_equal(uxdp_bpf_map_lookup(m, &k, &v, 0), 0);
	return v;
}

static void test_array_of_maps(void **state)
{
	(void)state;
	for (int e = 0; e < 2; e++) {
		struct uxdp_bpf_object *obj = open_obj(e ? UXDP_BPF_ENGINE_JIT :
						       UXDP_BPF_ENGINE_INTERP);
		struct uxdp_bpf_map *outer = map_of(obj, "outer_arr"), *mine;
		struct uxdp_prog *prog = uxdp_bpf_object_prog(obj, NULL);
		uint32_t k, id, bad;

		/* The initialiser's slots. */
		k = 0;
		assert_int_equal(uxdp_bpf_map_lookup(outer, &k, &id, 0), 0);
		assert_int_equal(id, uxdp_bpf_map_id(map_of(obj, "arr_a")));
		k = 2;
		assert_int_equal(uxdp_bpf_map_lookup(outer, &k, &id, 0), 0);
		assert_int_equal(id, uxdp_bpf_map_id(map_of(obj, "arr_b")));
		k = 1;
		assert_int_equal(uxdp_bpf_map_lookup(outer, &k, &id, 0),
				 -ENOENT);
		/* dst .2 -> arr_b, src .3 -> its key 3. */
		assert_int_equal(run(prog, 3, 2), UXDP_TX);
		assert_int_equal(get64(map_of(obj, "arr_b"), 3), 1);
		assert_int_equal(run(prog, 3, 1), UXDP_PASS);	/* empty */

		/* A map of no object in slot 1; the caller's handle goes,
		 * the slot's reference keeps it. */
		mine = uxdp_bpf_map_open(BPF_MAP_TYPE_ARRAY, "mine", 4, 8, 4,
					 0);
		assert_non_null(mine);
		id = uxdp_bpf_map_id(mine);
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &id, BPF_ANY),
				 0);
		uxdp_bpf_map_close(mine);
		assert_int_equal(run(prog, 2, 1), UXDP_TX);
		mine = uxdp_bpf_map_get_by_id(id);
		assert_non_null(mine);
		assert_int_equal(get64(mine, 2), 1);
		uxdp_bpf_map_close(mine);

		/* The kernel's errors. */
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &id,
						     BPF_NOEXIST), -EINVAL);
		k = 4;
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &id, BPF_ANY),
				 -E2BIG);
		k = 1;
		bad = 0xfffffff0;
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &bad, BPF_ANY),
				 -ENOENT);
		/* Not of the inner definition: size, type, of-map. */
		mine = uxdp_bpf_map_open(BPF_MAP_TYPE_ARRAY, "big", 4, 8, 5, 0);
		bad = uxdp_bpf_map_id(mine);
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &bad, BPF_ANY),
				 -EINVAL);
		assert_non_null(strstr(uxdp_errmsg(), "inner definition"));
		uxdp_bpf_map_close(mine);
		mine = uxdp_bpf_map_open(BPF_MAP_TYPE_HASH, "h", 4, 8, 4, 0);
		bad = uxdp_bpf_map_id(mine);
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &bad, BPF_ANY),
				 -EINVAL);
		uxdp_bpf_map_close(mine);
		bad = uxdp_bpf_map_id(outer);
		assert_int_equal(uxdp_bpf_map_update(outer, &k, &bad, BPF_ANY),
				 -EINVAL);
		assert_null(uxdp_bpf_map_open(BPF_MAP_TYPE_ARRAY_OF_MAPS, "o",
					      4, 4, 4, 0));
		assert_int_equal(errno, EINVAL);

		/* Delete: the map goes with the slot's reference. */
		assert_int_equal(uxdp_bpf_map_delete(outer, &k), 0);
		assert_int_equal(uxdp_bpf_map_delete(outer, &k), -ENOENT);
		assert_null(uxdp_bpf_map_get_by_id(id));
		assert_int_equal(run(prog, 2, 1), UXDP_PASS);
		uxdp_prog_put(prog);
		uxdp_bpf_object_close(obj);
	}
}

static void test_hash_of_maps(void **state)
{
	struct uxdp_bpf_object *obj = open_obj(UXDP_BPF_ENGINE_DEFAULT);
	struct uxdp_bpf_object *two = open_obj(UXDP_BPF_ENGINE_DEFAULT);
	struct uxdp_bpf_map *outer = map_of(obj, "outer_hash"), *m[4];
	struct uxdp_prog *prog = uxdp_bpf_object_prog(obj, NULL);
	uint32_t k, id, ids[4];
	int i;

	(void)state;
	/* The hash under a hash of maps (its values are map pointers) has
	 * no id: no map of that name is a plain hash. */
	for (id = 1; id <= uxdp_bpf_map_id(outer) + 8; id++) {
		struct uxdp_bpf_map *x = uxdp_bpf_map_get_by_id(id);

		if (x && !strcmp(uxdp_bpf_map_name(x), "outer_hash"))
			assert_int_equal(uxdp_bpf_map_type(x),
					 BPF_MAP_TYPE_HASH_OF_MAPS);
		uxdp_bpf_map_close(x);
	}
	k = 1;
	assert_int_equal(uxdp_bpf_map_lookup(outer, &k, &id, 0), 0);
	assert_int_equal(id, uxdp_bpf_map_id(map_of(obj, "lru_one")));
	/* ttl 64: key 1, lru_one; the fallback untouched. */
	run(prog, 1, 1);
	assert_int_equal(get64(map_of(obj, "res"), 2), 1);
	assert_int_equal(get64(map_of(obj, "res"), 3), 0);
	for (i = 0; i < 4; i++) {
		m[i] = uxdp_bpf_map_open(BPF_MAP_TYPE_LRU_HASH, "l", 4, 8, 8, 0);
		assert_non_null(m[i]);
		ids[i] = uxdp_bpf_map_id(m[i]);
	}
	k = 0;
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[0], BPF_NOEXIST),
			 0);
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[1], BPF_NOEXIST),
			 -EEXIST);
	k = 3;
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[1], BPF_EXIST),
			 -ENOENT);
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[1], BPF_ANY), 0);
	k = 2;
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[2], BPF_ANY), 0);
	k = 9;		/* four keys: full */
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &ids[3], BPF_ANY),
			 -E2BIG);
	/* Another object's map: it outlives its object in the slot. */
	id = uxdp_bpf_map_id(map_of(two, "lru_one"));
	k = 2;
	assert_int_equal(uxdp_bpf_map_update(outer, &k, &id, BPF_EXIST), 0);
	uxdp_bpf_object_close(two);
	for (i = 0; i < 4; i++)
		uxdp_bpf_map_close(m[i]);
	assert_null(uxdp_bpf_map_get_by_id(ids[2]));	/* replaced: gone */
	m[0] = uxdp_bpf_map_get_by_id(id);
	assert_non_null(m[0]);
	uxdp_bpf_map_close(m[0]);
	/* Iteration over the hash's keys: 0, 1, 2, 3 in some order. */
	{
		uint32_t cur, next, seen = 0;
		int err;

		for (err = uxdp_bpf_map_get_next_key(outer, NULL, &next); !err;
		     err = uxdp_bpf_map_get_next_key(outer, &cur, &next)) {
			cur = next;
			seen |= 1U << cur;
		}
		assert_int_equal(seen, 0xf);
	}
	k = 2;
	assert_int_equal(uxdp_bpf_map_delete(outer, &k), 0);
	assert_null(uxdp_bpf_map_get_by_id(id));
	uxdp_prog_put(prog);
	uxdp_bpf_object_close(obj);
	/* Closing the object let go of the maps in its slots. */
	assert_null(uxdp_bpf_map_get_by_id(ids[0]));
	assert_null(uxdp_bpf_map_get_by_id(ids[1]));
}

/* ---- readers against a writer that swaps the slot ------------------------- */

struct reader {
	struct uxdp_prog *prog;
	volatile bool *stop;
	unsigned long runs, tx, pass, bad;
};

static void *reader(void *arg)
{
	struct reader *r = arg;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t v = run(r->prog, 0, 1);

		r->runs++;
		if (v == UXDP_TX)
			r->tx++;
		else if (v == UXDP_PASS)
			r->pass++;
		else
			r->bad++;
	}
	return NULL;
}

static void test_swap_under_runs(void **state)
{
	/* One reader: the program's own counters are plain, and two runs
	 * of it at once would race on them (the program's race, which TSan
	 * would rightly report); the writer's swaps are what is tested. */
	enum { READERS = 1, SWAPS = 5000 };
	struct uxdp_bpf_object *obj = open_obj(UXDP_BPF_ENGINE_DEFAULT);
	struct uxdp_bpf_map *outer = map_of(obj, "outer_arr");
	struct reader r[READERS];
	pthread_t th[READERS];
	volatile bool stop = false;
	unsigned long runs = 0, tx = 0;
	uint32_t k = 1;
	int i;

	(void)state;
	for (i = 0; i < READERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].prog = uxdp_bpf_object_prog(obj, NULL);
		r[i].stop = &stop;
		assert_int_equal(pthread_create(&th[i], NULL, reader, &r[i]), 0);
	}
	for (i = 0; i < SWAPS; i++) {
		if (i % 3 == 2) {
			assert_int_equal(uxdp_bpf_map_delete(outer, &k), 0);
		} else {
			/* A new map each time, whose only reference is the
			 * slot's: each replace frees one under the readers. */
			struct uxdp_bpf_map *m = uxdp_bpf_map_open(
				BPF_MAP_TYPE_ARRAY, "swap", 4, 8, 4, 0);
			uint32_t id = uxdp_bpf_map_id(m);

			assert_int_equal(uxdp_bpf_map_update(outer, &k, &id,
							     BPF_ANY), 0);
			uxdp_bpf_map_close(m);
		}
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].bad, 0);
		runs += r[i].runs;
		tx += r[i].tx;
		uxdp_prog_put(r[i].prog);
	}
	printf("%d swaps of a fresh inner map under %d readers: %lu runs, %lu "
	       "through a map\n", SWAPS, READERS, runs, tx);
	uxdp_bpf_object_close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_of_maps),
		cmocka_unit_test(test_hash_of_maps),
		cmocka_unit_test(test_swap_under_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
