/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_PROG_ARRAY and bpf_tail_call (src/bpf/map_prog_array.c,
 * the engines' tail calls): tests/bpf/tail.bpf.c on both engines. Static
 * initialisers; the control plane's ids, flags and errors; the limit of
 * 33 tail calls; a tail call from a subprogram; falling through; the
 * kind rule (engine) between arrays and programs; an array that holds a
 * program of another object; closing the object empties its arrays (and
 * leaks nothing: ASan's leak check sees a cycle); readers running through
 * a slot a writer keeps swapping (TSan, ASan: the old program is freed
 * only after the grace period). test_bpf_kernel compares the same object
 * with the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "t_helpers.h"

#include <linux/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#define ENGINES	2

static const uint32_t engines[ENGINES] = {
	UXDP_BPF_ENGINE_INTERP, UXDP_BPF_ENGINE_JIT,
};

static struct uxdp_bpf_object *open_tail(uint32_t engine)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj;

	obj = uxdp_bpf_object_open(T_BPF_DIR "/tail.o", &o);
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

static uint32_t id_of(struct uxdp_bpf_object *obj, const char *prog)
{
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, prog);
	uint32_t id;

	assert_non_null(p);
	id = uxdp_bpf_prog_id(p);
	uxdp_prog_put(p);
	assert_true(id != 0);
	return id;
}

/* res[k], summed over the CPUs (a per-CPU array: the readers below run
 * the programs from two threads). */
static uint64_t res(struct uxdp_bpf_object *obj, uint32_t k)
{
	int n = uxdp_bpf_num_possible_cpus(), c;
	uint64_t *v = calloc((size_t)n, sizeof(*v)), sum = 0;

	assert_non_null(v);
	assert_int_equal(uxdp_bpf_map_lookup(map_of(obj, "res"), &k, v, 0), 0);
	for (c = 0; c < n; c++)
		sum += v[c];
	free(v);
	return sum;
}

/* The chain's length for the last IPv4 packet (a plain array). */
static uint64_t chain(struct uxdp_bpf_object *obj)
{
	uint64_t v = 0;
	uint32_t k = 0;

	assert_int_equal(uxdp_bpf_map_lookup(map_of(obj, "chain"), &k, &v, 0),
			 0);
	return v;
}

/* Ethernet frames of 60 bytes: IPv4/UDP, IPv4/TCP, IPv6, VLAN, ARP,
 * another type. */
enum { P_UDP, P_TCP, P_V6, P_VLAN, P_ARP, P_OTHER };

static uint32_t frame(uint8_t *b, int kind)
{
	static const uint16_t types[] = {
		[P_UDP] = 0x0800, [P_TCP] = 0x0800, [P_V6] = 0x86dd,
		[P_VLAN] = 0x8100, [P_ARP] = 0x0806, [P_OTHER] = 0x88b5,
	};

	memset(b, 0, 60);
	memset(b, 0xff, 6);
	b[6] = 0x02;
	b[11] = 0x01;
	b[12] = (uint8_t)(types[kind] >> 8);
	b[13] = (uint8_t)types[kind];
	b[14] = 0x45;
	b[23] = kind == P_UDP ? 17 : 6;
	return 60;
}

/* One run of @prog on a frame of @kind: the verdict; the bytes out in
 * @out (60). */
static uint32_t run(struct uxdp_prog *prog, int kind, uint8_t *out)
{
	uint8_t in[60];
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = in,
			  .data_size_in = frame(in, kind), .data_out = out,
			  .data_size_out = 60);

	if (uxdp_bpf_prog_test_run(prog, &o))
		fail_msg("test run: %s", uxdp_errmsg());
	assert_int_equal(o.data_size_out, 60);
	return o.retval;
}

/* The static initialiser, the ways a tail call goes, the limit. */
static void test_static_and_runs(void **state)
{
	(void)state;
	for (int e = 0; e < ENGINES; e++) {
		struct uxdp_bpf_object *obj = open_tail(engines[e]);
		struct uxdp_bpf_map *jmp = map_of(obj, "jmp_static");
		struct uxdp_prog *entry = uxdp_bpf_object_prog(obj, "tail_entry");
		uint32_t k, id, next;
		uint8_t out[60], in[60];

		/* Slots 1, 2 and 4 hold what the initialiser names. */
		k = 1;
		assert_int_equal(uxdp_bpf_map_lookup(jmp, &k, &id, 0), 0);
		assert_int_equal(id, id_of(obj, "tail_ipv4"));
		k = 2;
		assert_int_equal(uxdp_bpf_map_lookup(jmp, &k, &id, 0), 0);
		assert_int_equal(id, id_of(obj, "tail_chain"));
		k = 4;
		assert_int_equal(uxdp_bpf_map_lookup(jmp, &k, &id, 0), 0);
		assert_int_equal(id, id_of(obj, "tail_sub"));
		k = 0;
		assert_int_equal(uxdp_bpf_map_lookup(jmp, &k, &id, 0), -ENOENT);
		k = 5;
		assert_int_equal(uxdp_bpf_map_lookup(jmp, &k, &id, 0), -ENOENT);
		/* Iteration as an array's: every index. */
		assert_int_equal(uxdp_bpf_map_get_next_key(jmp, NULL, &next), 0);
		assert_int_equal(next, 0);
		k = 3;
		assert_int_equal(uxdp_bpf_map_get_next_key(jmp, &k, &next), 0);
		assert_int_equal(next, 4);
		k = 4;
		assert_int_equal(uxdp_bpf_map_get_next_key(jmp, &k, &next),
				 -ENOENT);

		/* UDP: entry -> ipv4 (MACs swapped) -> chain, which calls
		 * itself until the 33rd tail call: 32 runs of it. */
		assert_int_equal(run(entry, P_UDP, out), UXDP_PASS);
		frame(in, P_UDP);
		assert_memory_equal(out, in + 6, 6);
		assert_memory_equal(out + 6, in, 6);
		assert_int_equal(out[14], 32);
		assert_int_equal(res(obj, 0), 1);
		assert_int_equal(res(obj, 1), 1);
		assert_int_equal(res(obj, 2), 32);
		assert_int_equal(chain(obj), 32);
		assert_int_equal(res(obj, 4), 0);
		/* A second packet: the count is per run. */
		assert_int_equal(run(entry, P_UDP, out), UXDP_PASS);
		assert_int_equal(res(obj, 2), 64);
		assert_int_equal(chain(obj), 32);
		/* TCP: ipv4's own verdict. */
		assert_int_equal(run(entry, P_TCP, out), UXDP_TX);
		assert_int_equal(res(obj, 1), 3);
		/* A subprogram's tail call: tail_sub's 7 back in the caller. */
		assert_int_equal(run(entry, P_VLAN, out), UXDP_TX);
		assert_int_equal(res(obj, 6), 1);
		/* Fall through: an empty slot, an index out of range, and
		 * jmp_dyn, which nothing filled. */
		assert_int_equal(run(entry, P_ARP, out), UXDP_PASS);
		assert_int_equal(run(entry, P_OTHER, out), UXDP_PASS);
		assert_int_equal(run(entry, P_V6, out), UXDP_PASS);
		assert_int_equal(res(obj, 4), 3);
		assert_int_equal(res(obj, 5), 0);
		uxdp_prog_put(entry);
		uxdp_bpf_object_close(obj);
	}
}

/* The control plane: ids in, ids out, the kernel's flags and errors. */
static void test_control_plane(void **state)
{
	(void)state;
	for (int e = 0; e < ENGINES; e++) {
		struct uxdp_bpf_object *obj = open_tail(engines[e]);
		struct uxdp_bpf_map *dyn = map_of(obj, "jmp_dyn");
		struct uxdp_prog *entry = uxdp_bpf_object_prog(obj, "tail_entry");
		uint32_t id = id_of(obj, "tail_dyn"), k = 0, got = 0;
		uint8_t out[60];
		struct uxdp_prog *p;

		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &id,
						     BPF_NOEXIST), -EINVAL);
		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &id, BPF_EXIST),
				 -EINVAL);
		k = 2;
		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &id, BPF_ANY),
				 -E2BIG);
		k = 0;
		got = 0;
		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &got, BPF_ANY),
				 -ENOENT);
		got = 0xfffffff0;
		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &got, BPF_ANY),
				 -ENOENT);
		assert_int_equal(uxdp_bpf_map_delete(dyn, &k), -ENOENT);
		assert_int_equal(run(entry, P_V6, out), UXDP_PASS);

		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &id, BPF_ANY), 0);
		assert_int_equal(uxdp_bpf_map_lookup(dyn, &k, &got, 0), 0);
		assert_int_equal(got, id);
		assert_int_equal(run(entry, P_V6, out), UXDP_TX);
		assert_int_equal(out[0], 0x00);		/* 0xff flipped */
		assert_int_equal(res(obj, 5), 1);
		/* Again: the same program replaces itself. */
		assert_int_equal(uxdp_bpf_map_update(dyn, &k, &id, BPF_ANY), 0);
		assert_int_equal(run(entry, P_V6, out), UXDP_TX);
		assert_int_equal(uxdp_bpf_map_delete(dyn, &k), 0);
		assert_int_equal(uxdp_bpf_map_delete(dyn, &k), -ENOENT);
		assert_int_equal(uxdp_bpf_map_lookup(dyn, &k, &got, 0), -ENOENT);
		k = 7;
		assert_int_equal(uxdp_bpf_map_delete(dyn, &k), -E2BIG);
		assert_int_equal(run(entry, P_V6, out), UXDP_PASS);
		assert_int_equal(res(obj, 5), 2);

		/* An id is its program's, found again while it lives. */
		p = uxdp_bpf_prog_get_by_id(id);
		assert_non_null(p);
		assert_string_equal(uxdp_prog_name(p), "tail_dyn");
		assert_int_equal(uxdp_bpf_prog_id(p), id);
		uxdp_prog_put(p);
		assert_int_equal(uxdp_bpf_prog_id(NULL), 0);
		uxdp_prog_put(entry);
		uxdp_bpf_object_close(obj);
		/* Gone with its object, once the deleted slot's reference
		 * has gone after its grace period (liburcu's call_rcu
		 * thread: waited for up to 10 s); the id is not reused. */
		for (int ms = 0; ms < 10000; ms++) {
			p = uxdp_bpf_prog_get_by_id(id);
			if (!p)
				break;
			uxdp_prog_put(p);
			usleep(1000);
		}
		assert_null(uxdp_bpf_prog_get_by_id(id));
		assert_int_equal(errno, ENOENT);
	}
}

static uint32_t c_pass(struct uxdp_buff *b, void *priv)
{
	(void)b, (void)priv;
	return UXDP_PASS;
}

/* Programs of another object, of the same kind; of another, refused. */
static void test_kinds_and_objects(void **state)
{
	struct uxdp_bpf_object *interp = open_tail(UXDP_BPF_ENGINE_INTERP);
	struct uxdp_bpf_object *jit = open_tail(UXDP_BPF_ENGINE_JIT);
	struct uxdp_bpf_object *other = open_tail(UXDP_BPF_ENGINE_JIT);
	struct uxdp_prog *entry = uxdp_bpf_object_prog(jit, "tail_entry");
	struct uxdp_prog *c_prog;
	uint32_t k = 0, id;
	uint8_t out[60];

	(void)state;
	/* The interpreter's arrays take no JIT program, and back. */
	id = id_of(jit, "tail_dyn");
	assert_int_equal(uxdp_bpf_map_update(map_of(interp, "jmp_dyn"), &k, &id,
					     BPF_ANY), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "does not go with"));
	id = id_of(interp, "tail_dyn");
	assert_int_equal(uxdp_bpf_map_update(map_of(jit, "jmp_dyn"), &k, &id,
					     BPF_ANY), -EINVAL);
	/* Another object's program: it runs, and outlives its object. */
	id = id_of(other, "tail_dyn");
	assert_int_equal(uxdp_bpf_map_update(map_of(jit, "jmp_dyn"), &k, &id,
					     BPF_ANY), 0);
	uxdp_bpf_object_close(other);
	assert_int_equal(run(entry, P_V6, out), UXDP_TX);
	assert_int_equal(res(jit, 5), 0);	/* other's res, not jit's */
	/* What is no eBPF program has no id. */
	c_prog = uxdp_prog_create("c", c_pass, NULL);
	assert_non_null(c_prog);
	assert_int_equal(uxdp_bpf_prog_id(c_prog), 0);
	uxdp_prog_put(c_prog);
	/* Closing the object empties its arrays: the entry (held here)
	 * still runs, its tail calls fall through. */
	uxdp_bpf_object_close(jit);
	assert_int_equal(run(entry, P_UDP, out), UXDP_PASS);
	assert_int_equal(run(entry, P_V6, out), UXDP_PASS);
	uxdp_prog_put(entry);
	uxdp_bpf_object_close(interp);
}

/* ---- readers against a writer that swaps the slot ------------------------- */

struct reader {
	struct uxdp_prog *entry;
	volatile bool *stop;
	unsigned long runs, tx, pass, bad;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	uint8_t in[60], out[60];

	frame(in, P_V6);
	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = in,
				  .data_size_in = 60, .data_out = out,
				  .data_size_out = 60);

		if (uxdp_bpf_prog_test_run(r->entry, &o)) {
			r->bad++;
			continue;
		}
		r->runs++;
		/* The slot's program (byte 0 flipped) or the fall-through
		 * (unchanged): nothing else. */
		if (o.retval == UXDP_TX && out[0] == 0x00)
			r->tx++;
		else if (o.retval == UXDP_PASS && out[0] == 0xff)
			r->pass++;
		else
			r->bad++;
	}
	return NULL;
}

static void test_swap_under_runs(void **state)
{
	enum { READERS = 2, SWAPS = 20000 };

	(void)state;
	for (int e = 0; e < ENGINES; e++) {
		struct uxdp_bpf_object *obj = open_tail(engines[e]);
		struct uxdp_bpf_object *two = open_tail(engines[e]);
		struct uxdp_bpf_map *dyn = map_of(obj, "jmp_dyn");
		uint32_t ids[2] = { id_of(obj, "tail_dyn"), id_of(two, "tail_dyn") };
		struct reader r[READERS];
		pthread_t th[READERS];
		volatile bool stop = false;
		unsigned long runs = 0, tx = 0, pass = 0;
		uint32_t k = 0;
		int i;

		for (i = 0; i < READERS; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].entry = uxdp_bpf_object_prog(obj, "tail_entry");
			r[i].stop = &stop;
			assert_int_equal(pthread_create(&th[i], NULL, reader,
							&r[i]), 0);
		}
		/* Swap between two programs (one of another object, which is
		 * closed half-way: the slot's reference keeps it), delete,
		 * set again. */
		for (i = 0; i < SWAPS; i++) {
			if (i == SWAPS / 2) {
				uxdp_bpf_object_close(two);
				two = NULL;
			}
			if (i % 3 == 2)
				assert_int_equal(uxdp_bpf_map_delete(dyn, &k), 0);
			else
				assert_int_equal(uxdp_bpf_map_update(dyn, &k,
					&ids[two ? i % 3 : 0], BPF_ANY), 0);
		}
		__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
		for (i = 0; i < READERS; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(r[i].bad, 0);
			runs += r[i].runs;
			tx += r[i].tx;
			pass += r[i].pass;
			uxdp_prog_put(r[i].entry);
		}
		printf("%s: %d swaps under %d readers: %lu runs, %lu through the "
		       "slot, %lu falling through, 0 torn\n",
		       engines[e] == UXDP_BPF_ENGINE_JIT ? "jit" : "interpreter",
		       SWAPS, READERS, runs, tx, pass);
		uxdp_bpf_object_close(obj);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_and_runs),
		cmocka_unit_test(test_control_plane),
		cmocka_unit_test(test_kinds_and_objects),
		cmocka_unit_test(test_swap_under_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
