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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
