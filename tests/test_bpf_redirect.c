/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DEVMAP, XSKMAP, bpf_redirect_map and bpf_redirect (src/bpf/map_redirect.c)
 * through uxdp's datapath: tests/bpf/redirect.bpf.c attached to a null
 * device whose packets go, in the poll's bulk queues, to another device,
 * by devmap slot and by ifindex; the fallback of an empty slot; a device
 * destroyed while a devmap holds it; the control plane's kernel errors.
 * Both engines. test_bpf_kernel compares the verdicts with the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "t_helpers.h"

#include <linux/bpf.h>
#include <pthread.h>

#include <uxdp/bpf.h>
#include <uxdp/null.h>
#include <uxdp/uxdp.h>

#define POLLS	8
#define BUDGET	32

static struct uxdp_bpf_object *open_obj(uint32_t engine, uint32_t ifindex)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_map *ro = NULL;
	size_t size = 0;
	void *v;

	obj = uxdp_bpf_object_open(T_BPF_DIR "/redirect.o", &o);
	if (!obj)
		fail_msg("open: %s", uxdp_errmsg());
	while ((ro = uxdp_bpf_object_next_map(obj, ro)))
		if (strstr(uxdp_bpf_map_name(ro), ".rodata"))
			break;
	assert_non_null(ro);
	v = uxdp_bpf_map_initial_value(ro, &size);
	assert_true(v && size >= 4);
	memcpy(v, &ifindex, 4);		/* target_ifindex */
	if (uxdp_bpf_object_load(obj))
		fail_msg("load: %s", uxdp_errmsg());
	return obj;
}

static struct uxdp_dev *null_dev(const char *name, bool sink)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, o,
			  .flags = sink ? UXDP_NULL_F_NO_RX : 0);
	struct uxdp_dev *d = uxdp_null_create(name, &o);

	assert_non_null(d);
	assert_int_equal(uxdp_dev_up(d), 0);
	return d;
}

/* @polls polls of @gen's queue 0: the packets, and what its counters and
 * @sink's transmit counter moved by. */
struct moved {
	uint64_t packets, redirect, drop, sent;
};

static struct moved polls(struct uxdp_dev *gen, struct uxdp_dev *sink, int n)
{
	struct uxdp_rxq_stats r0, r1;
	struct uxdp_txq_stats t0, t1;
	struct moved m = { 0 };
	int i, got;

	assert_int_equal(uxdp_dev_rxq_stats(gen, 0, &r0), 0);
	memset(&t0, 0, sizeof(t0));
	memset(&t1, 0, sizeof(t1));
	if (sink)
		assert_int_equal(uxdp_dev_txq_stats(sink, 0, &t0), 0);
	for (i = 0; i < n; i++) {
		got = uxdp_dev_poll(gen, 0, BUDGET);
		assert_true(got >= 0);
		m.packets += (uint64_t)got;
	}
	assert_int_equal(uxdp_dev_rxq_stats(gen, 0, &r1), 0);
	if (sink)
		assert_int_equal(uxdp_dev_txq_stats(sink, 0, &t1), 0);
	m.redirect = r1.redirect - r0.redirect;
	m.drop = r1.drop - r0.drop;
	m.sent = t1.packets - t0.packets;
	return m;
}

static void attach(struct uxdp_dev *d, struct uxdp_bpf_object *obj,
		   const char *name)
{
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, name);

	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, p), 0);
	uxdp_prog_put(p);
}

static void test_devmap_datapath(void **state)
{
	(void)state;
	for (int e = 0; e < 2; e++) {
		char gn[16], sn[16];
		struct uxdp_dev *gen, *sink;
		struct uxdp_bpf_object *obj;
		struct uxdp_bpf_map *devs;
		uint32_t k = 0, v[2] = { 0, 0 }, got[2];
		struct moved m;

		snprintf(gn, sizeof(gn), "rg%d.%d", e, getpid() % 1000);
		snprintf(sn, sizeof(sn), "rs%d.%d", e, getpid() % 1000);
		gen = null_dev(gn, false);
		sink = null_dev(sn, true);
		obj = open_obj(e ? UXDP_BPF_ENGINE_JIT : UXDP_BPF_ENGINE_INTERP,
			       uxdp_dev_ifindex(sink));
		devs = uxdp_bpf_object_find_map(obj, "devs");
		assert_non_null(devs);

		/* An empty slot: rdr_slot0's fallback, XDP_DROP. */
		attach(gen, obj, "rdr_slot0");
		m = polls(gen, sink, POLLS);
		assert_true(m.packets > 0);
		assert_int_equal(m.drop, m.packets);
		assert_int_equal(m.sent, 0);

		/* The sink in slot 0: every packet redirected and sent, in
		 * the poll's bulk queue. */
		v[0] = uxdp_dev_ifindex(sink);
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, BPF_ANY), 0);
		assert_int_equal(uxdp_bpf_map_lookup(devs, &k, got, 0), 0);
		assert_int_equal(got[0], v[0]);
		m = polls(gen, sink, POLLS);
		assert_int_equal(m.redirect, m.packets);
		assert_int_equal(m.sent, m.packets);

		/* bpf_redirect to the sink's ifindex (.rodata). */
		attach(gen, obj, "rdr_ifindex");
		m = polls(gen, sink, POLLS);
		assert_int_equal(m.redirect, m.packets);
		assert_int_equal(m.sent, m.packets);

		/* A program's lookup sees the entry. */
		attach(gen, obj, "rdr_lookup");
		m = polls(gen, NULL, 1);
		assert_int_equal(m.redirect, 0);

		/* The kernel's errors. */
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, BPF_NOEXIST),
				 -EEXIST);
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, 9), -EINVAL);
		k = 4;
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, BPF_ANY),
				 -E2BIG);
		assert_int_equal(uxdp_bpf_map_delete(devs, &k), -EINVAL);
		k = 1;
		v[0] = 0xfffffff;
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, BPF_ANY),
				 -EINVAL);
		v[0] = uxdp_dev_ifindex(sink);
		v[1] = 7;		/* a second-stage program */
		assert_int_equal(uxdp_bpf_map_update(devs, &k, v, BPF_ANY),
				 -EOPNOTSUPP);
		assert_int_equal(uxdp_bpf_map_lookup(devs, &k, got, 0), -ENOENT);
		assert_int_equal(uxdp_bpf_map_delete(devs, &k), 0);

		/* The sink destroyed while slot 0 holds it: the slot is
		 * empty, the fallback again. */
		attach(gen, obj, "rdr_slot0");
		uxdp_dev_destroy(sink);
		k = 0;
		assert_int_equal(uxdp_bpf_map_lookup(devs, &k, got, 0), -ENOENT);
		m = polls(gen, NULL, POLLS);
		assert_int_equal(m.drop, m.packets);

		uxdp_dev_destroy(gen);
		uxdp_bpf_object_close(obj);
	}
}

/* A poller against a writer swapping the entry in and out. */
struct churn {
	struct uxdp_dev *gen;
	const bool *stop;
	uint64_t packets;
};

static void *churn_poll(void *arg)
{
	struct churn *c = arg;

	while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
		int got = uxdp_dev_poll(c->gen, 0, BUDGET);

		assert_true(got >= 0);
		c->packets += (uint64_t)got;
	}
	return NULL;
}

/* DEVMAP_HASH: keys of any value, the kernel's errors (ifindex 0 -EINVAL,
 * a new key in a full map -E2BIG, delete of a missing key -ENOENT),
 * get_next_key over every key once, a key whose device went away gone
 * from lookups and iteration and its room taken by a new key, and a
 * poller redirecting through a key that a writer deletes and puts back. */
static void test_devmap_hash(void **state)
{
	(void)state;
	for (int e = 0; e < 2; e++) {
		char gn[16], sn[16], tn[16];
		struct uxdp_dev *gen, *sink, *tmp;
		struct uxdp_bpf_object *obj;
		struct uxdp_bpf_map *dh;
		uint32_t k = 0xdead0001, v[2] = { 0, 0 }, got[2], keys[3] = {
			7, 0xffffffff, 4 }, seen = 0, nk, i;
		struct moved m;

		snprintf(gn, sizeof(gn), "hg%d.%d", e, getpid() % 1000);
		snprintf(sn, sizeof(sn), "hs%d.%d", e, getpid() % 1000);
		snprintf(tn, sizeof(tn), "ht%d.%d", e, getpid() % 1000);
		gen = null_dev(gn, false);
		sink = null_dev(sn, true);
		tmp = null_dev(tn, true);
		obj = open_obj(e ? UXDP_BPF_ENGINE_JIT : UXDP_BPF_ENGINE_INTERP,
			       uxdp_dev_ifindex(sink));
		dh = uxdp_bpf_object_find_map(obj, "devs_h");
		assert_non_null(dh);
		attach(gen, obj, "rdr_hash");

		/* Empty: the fallback. */
		m = polls(gen, sink, POLLS);
		assert_int_equal(m.drop, m.packets);
		assert_int_equal(uxdp_bpf_map_get_next_key(dh, NULL, &nk),
				 -ENOENT);

		/* The kernel's errors before anything goes in. */
		v[0] = 0;
		assert_int_equal(uxdp_bpf_map_update(dh, &k, v, BPF_ANY),
				 -EINVAL);
		v[0] = 0xfffffff;
		assert_int_equal(uxdp_bpf_map_update(dh, &k, v, BPF_ANY),
				 -EINVAL);
		v[0] = uxdp_dev_ifindex(sink);
		assert_int_equal(uxdp_bpf_map_update(dh, &k, v, 9), -EINVAL);
		assert_int_equal(uxdp_bpf_map_delete(dh, &k), -ENOENT);
		assert_int_equal(uxdp_bpf_map_lookup(dh, &k, got, 0), -ENOENT);

		/* The sink under 0xdead0001: every packet sent. BPF_EXIST of
		 * a key not there is fine (the kernel checks only
		 * NOEXIST). */
		assert_int_equal(uxdp_bpf_map_update(dh, &k, v, BPF_EXIST), 0);
		assert_int_equal(uxdp_bpf_map_lookup(dh, &k, got, 0), 0);
		assert_int_equal(got[0], v[0]);
		m = polls(gen, sink, POLLS);
		assert_true(m.packets > 0);
		assert_int_equal(m.redirect, m.packets);
		assert_int_equal(m.sent, m.packets);
		assert_int_equal(uxdp_bpf_map_update(dh, &k, v, BPF_NOEXIST),
				 -EEXIST);

		/* Full: three more keys, then a fifth is -E2BIG. */
		for (i = 0; i < 3; i++)
			assert_int_equal(uxdp_bpf_map_update(dh, &keys[i], v,
							     BPF_NOEXIST), 0);
		nk = 12345;
		assert_int_equal(uxdp_bpf_map_update(dh, &nk, v, BPF_ANY),
				 -E2BIG);
		/* Every key once, by get_next_key from NULL. */
		for (int r = uxdp_bpf_map_get_next_key(dh, NULL, &nk); !r;
		     r = uxdp_bpf_map_get_next_key(dh, &nk, &nk)) {
			uint32_t bit = nk == k ? 1 : nk == keys[0] ? 2 :
				       nk == keys[1] ? 4 : nk == keys[2] ? 8 :
				       16;

			assert_int_equal(seen & bit, 0);
			seen |= bit;
		}
		assert_int_equal(seen, 15);

		/* A key whose device goes: not found, not listed, and its
		 * room goes to a new key. */
		v[0] = uxdp_dev_ifindex(tmp);
		assert_int_equal(uxdp_bpf_map_update(dh, &keys[1], v, BPF_ANY),
				 0);
		uxdp_dev_destroy(tmp);
		assert_int_equal(uxdp_bpf_map_lookup(dh, &keys[1], got, 0),
				 -ENOENT);
		seen = 0;
		for (int r = uxdp_bpf_map_get_next_key(dh, NULL, &nk); !r;
		     r = uxdp_bpf_map_get_next_key(dh, &nk, &nk))
			assert_int_not_equal(nk, keys[1]), seen++;
		assert_int_equal(seen, 3);
		v[0] = uxdp_dev_ifindex(sink);
		nk = 12345;
		assert_int_equal(uxdp_bpf_map_update(dh, &nk, v, BPF_ANY), 0);
		assert_int_equal(uxdp_bpf_map_delete(dh, &keys[1]), -ENOENT);

		/* Deleted: the fallback again. */
		assert_int_equal(uxdp_bpf_map_delete(dh, &k), 0);
		m = polls(gen, sink, POLLS);
		assert_int_equal(m.drop, m.packets);

		/* A poller while the key goes out and comes back: every
		 * packet is redirected and sent, or dropped by the
		 * fallback; nothing else. */
		{
			struct uxdp_rxq_stats r0, r1;
			struct uxdp_txq_stats t0, t1;
			bool stop = false;
			struct churn c = { .gen = gen, .stop = &stop };
			pthread_t th;

			assert_int_equal(uxdp_dev_rxq_stats(gen, 0, &r0), 0);
			assert_int_equal(uxdp_dev_txq_stats(sink, 0, &t0), 0);
			assert_int_equal(pthread_create(&th, NULL, churn_poll,
							&c), 0);
			for (i = 0; i < 300; i++) {
				assert_int_equal(uxdp_bpf_map_update(dh, &k, v,
								     BPF_ANY), 0);
				assert_int_equal(uxdp_bpf_map_delete(dh, &k),
						 0);
			}
			__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
			assert_int_equal(pthread_join(th, NULL), 0);
			assert_int_equal(uxdp_dev_rxq_stats(gen, 0, &r1), 0);
			assert_int_equal(uxdp_dev_txq_stats(sink, 0, &t1), 0);
			if ((r1.redirect - r0.redirect) + (r1.drop - r0.drop) !=
			    c.packets)
				fail_msg("%llu packets: %llu redirected, %llu "
					 "dropped, redirect_err %llu, no target "
					 "%llu, miss %llu, frame_err %llu, "
					 "aborted %llu",
					 (unsigned long long)c.packets,
					 (unsigned long long)(r1.redirect -
							      r0.redirect),
					 (unsigned long long)(r1.drop - r0.drop),
					 (unsigned long long)(r1.redirect_err -
							      r0.redirect_err),
					 (unsigned long long)
					 (r1.redirect_no_target -
					  r0.redirect_no_target),
					 (unsigned long long)(r1.redirect_miss -
							      r0.redirect_miss),
					 (unsigned long long)(r1.frame_err -
							      r0.frame_err),
					 (unsigned long long)(r1.aborted -
							      r0.aborted));
			assert_int_equal(r1.redirect - r0.redirect,
					 t1.packets - t0.packets);
			assert_int_equal(r1.aborted, r0.aborted);
		}
		uxdp_dev_destroy(gen);
		uxdp_dev_destroy(sink);
		uxdp_bpf_object_close(obj);
	}
}

static void test_xskmap_control_plane(void **state)
{
	struct uxdp_bpf_object *obj = open_obj(UXDP_BPF_ENGINE_DEFAULT, 0);
	struct uxdp_bpf_map *xsks = uxdp_bpf_object_find_map(obj, "xsks");
	struct uxdp_bpf_map *devs = uxdp_bpf_object_find_map(obj, "devs");
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "rdr_xsk");
	uint32_t k = 0, v = 0;
	uint8_t pkt[60] = { 0 };
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, t, .data_in = pkt,
			  .data_size_in = 60);

	(void)state;
	assert_non_null(xsks);
	assert_non_null(p);
	/* A socket is no file descriptor here: its own call. */
	assert_int_equal(uxdp_bpf_map_update(xsks, &k, &v, BPF_ANY),
			 -EOPNOTSUPP);
	assert_non_null(strstr(uxdp_errmsg(), "uxdp_bpf_xskmap_set"));
	assert_int_equal(uxdp_bpf_map_lookup(xsks, &k, &v, 0), -EOPNOTSUPP);
	assert_int_equal(uxdp_bpf_xskmap_set(xsks, 4, NULL), -E2BIG);
	assert_int_equal(uxdp_bpf_xskmap_set(devs, 0, NULL), -EINVAL);
	assert_int_equal(uxdp_bpf_xskmap_set(xsks, 0, NULL), 0);
	assert_int_equal(uxdp_bpf_map_delete(xsks, &k), 0);
	/* No socket for queue 0: the program passes. */
	assert_int_equal(uxdp_bpf_prog_test_run(p, &t), 0);
	assert_int_equal(t.retval, UXDP_PASS);
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devmap_datapath),
		cmocka_unit_test(test_xskmap_control_plane),
		cmocka_unit_test(test_devmap_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
