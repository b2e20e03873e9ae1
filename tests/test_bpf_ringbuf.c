/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RINGBUF, bpf_ringbuf_output, bpf_ringbuf_query and uxdp's ring buffer
 * (src/bpf/map_ringbuf.c): tests/bpf/ringbuf.bpf.c's records as libbpf's
 * ring_buffer hands them over, the helpers' kernel errors and the query's
 * positions, definitions the kernel refuses, a full ring (-EAGAIN) that
 * empties, a callback that stops the read, a ring read by a buffer of
 * two maps, and threads writing one ring while a consumer sleeps in poll
 * (ping-pong: every record arrives, and a poll that sleeps its time-out
 * with a record waiting is a lost wake-up; free-running: the ring may
 * fill, and every byte the producers took is read as whole records).
 * Both engines. test_bpf_kernel compares
 * the records with the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "t_helpers.h"

#include <linux/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#define PKT_LEN		64
#define REC		24	/* ringbuf.bpf.c's struct record */

static const uint32_t engines[] = { UXDP_BPF_ENGINE_INTERP,
				    UXDP_BPF_ENGINE_JIT };

static struct uxdp_bpf_object *open_rb(uint32_t engine)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj;

	obj = uxdp_bpf_object_open(T_BPF_DIR "/ringbuf.o", &o);
	if (!obj)
		fail_msg("open: %s", uxdp_errmsg());
	if (uxdp_bpf_object_load(obj))
		fail_msg("load: %s", uxdp_errmsg());
	return obj;
}

static void run(struct uxdp_prog *p, const uint8_t *pkt, uint32_t len,
		uint32_t q)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = pkt,
			  .data_size_in = len, .rx_queue_index = q);

	assert_int_equal(uxdp_bpf_prog_test_run(p, &o), 0);
	assert_int_equal(o.retval, XDP_PASS);
}

/* This thread's rets[@k] (a per-CPU array). */
static int64_t ret_of(struct uxdp_bpf_object *obj, uint32_t k)
{
	int64_t v[UXDP_MAX_THREADS] = { 0 };

	assert_int_equal(uxdp_bpf_map_lookup(uxdp_bpf_object_find_map(obj,
			 "rets"), &k, v, 0), 0);
	return v[uxdp_thread_index()];
}

struct got {
	uint64_t n;		/* every record */
	uint32_t kept;
	size_t size[8];
	uint8_t data[8][REC];
	int stop_after;		/* return -7 at this record (0: never) */
	uint64_t by_q[4];	/* threads: woken records by queue */
	uint64_t woken;		/* records written with a wake-up (24 bytes) */
	uint64_t small;		/* the 5-byte ones */
};

static int on_rec(void *ctx, void *data, size_t size)
{
	struct got *g = ctx;

	uint32_t q;

	__atomic_add_fetch(&g->n, 1, __ATOMIC_RELEASE);
	/* The records written with a wake-up, by queue (the producer). */
	if (size == REC) {
		memcpy(&q, (uint8_t *)data + 4, 4);
		if (q < 4)
			__atomic_add_fetch(&g->by_q[q], 1, __ATOMIC_RELEASE);
		g->woken++;
	} else if (size == 5) {
		g->small++;
	}
	if (g->kept < 8) {
		g->size[g->kept] = size;
		memcpy(g->data[g->kept], data, size < REC ? size : REC);
		g->kept++;
	}
	if (g->stop_after && g->n == (uint64_t)g->stop_after)
		return -7;
	return 0;
}

static void test_records(void **state)
{
	uint8_t pkt[PKT_LEN];
	size_t e, i;

	(void)state;
	for (i = 0; i < PKT_LEN; i++)
		pkt[i] = (uint8_t)(0x30 + i);
	for (e = 0; e < 2; e++) {
		struct uxdp_bpf_object *obj = open_rb(engines[e]);
		struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "ringbuf");
		struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(obj, "rb");
		struct uxdp_bpf_ring_buffer *rb;
		struct got g = { 0 };
		uint32_t v[2];

		rb = uxdp_bpf_ring_buffer_new(m, on_rec, &g);
		assert_non_null(rb);
		run(p, pkt, PKT_LEN, 2);
		/* 24 bytes (32 in the ring), 5 (16), the rest refused. */
		assert_int_equal(ret_of(obj, 0), 0);
		assert_int_equal(ret_of(obj, 1), 0);
		assert_int_equal(ret_of(obj, 2), -EINVAL);
		assert_int_equal(ret_of(obj, 3), -EAGAIN);
		assert_int_equal(ret_of(obj, 4), 48);
		assert_int_equal(ret_of(obj, 5), 4096);
		assert_int_equal(ret_of(obj, 6), 0);
		assert_int_equal(ret_of(obj, 7), 48);
		assert_int_equal(ret_of(obj, 8), 0);
		assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), 2);
		assert_int_equal(g.size[0], REC);
		assert_int_equal(g.size[1], 5);
		memcpy(v, g.data[0], 8);
		assert_int_equal(v[0], PKT_LEN);
		assert_int_equal(v[1], 2);
		assert_memory_equal(g.data[0] + 8, pkt, 16);
		assert_memory_equal(g.data[1], g.data[0], 5);
		/* The consumer's position moved: the next run sees it. */
		run(p, pkt, 14, 0);
		assert_int_equal(ret_of(obj, 6), 48);
		assert_int_equal(ret_of(obj, 4), 48);
		assert_int_equal(ret_of(obj, 7), 96);
		/* Too short for the head: zeros. */
		assert_int_equal(uxdp_bpf_ring_buffer_poll(rb, 100), 2);
		assert_int_equal(g.data[2][8] | g.data[2][23], 0);
		assert_int_equal(uxdp_bpf_ring_buffer_poll(rb, 10), 0);
		uxdp_bpf_ring_buffer_free(rb);
		uxdp_prog_put(p);
		uxdp_bpf_object_close(obj);
	}
}

static void test_errors(void **state)
{
	struct uxdp_bpf_object *obj = open_rb(UXDP_BPF_ENGINE_JIT);
	struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(obj, "rb"), *x;
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "ringbuf");
	struct uxdp_bpf_ring_buffer *rb;
	struct got g = { 0 }, g2 = { 0 };
	uint8_t pkt[PKT_LEN] = { 0 };
	uint32_t k = 0, v = 0;
	int i;

	(void)state;
	/* The kernel's definitions: no key or value, a power of two of
	 * whole pages. */
	x = uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 0, 0, 4095, 0);
	assert_null(x);
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 4, 0, 4096,
				      0));
	assert_null(uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 0, 0, 12288,
				      0));
	assert_null(uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 0, 0, 4096,
				      BPF_F_NO_PREALLOC));
	assert_null(uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 0, 0,
				      1U << 31, 0));
	assert_int_equal(errno, E2BIG);
	x = uxdp_bpf_map_open(BPF_MAP_TYPE_RINGBUF, "r", 0, 0, 8192, 0);
	assert_non_null(x);
	/* No element commands. A ringbuf has no keys: given one, -EINVAL
	 * first (the kernel's __bpf_copy_key). */
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, &v, 0), -EINVAL);
	assert_int_equal(uxdp_bpf_map_lookup(m, NULL, &v, 0), -EOPNOTSUPP);
	assert_int_equal(uxdp_bpf_map_update(m, &k, &v, 0), -EINVAL);
	assert_int_equal(uxdp_bpf_map_update(m, NULL, &v, 0), -EOPNOTSUPP);
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -EOPNOTSUPP);
	assert_int_equal(uxdp_bpf_map_get_next_key(m, NULL, &k), -EOPNOTSUPP);
	/* A buffer of a ringbuf, with a callback. */
	assert_null(uxdp_bpf_ring_buffer_new(NULL, on_rec, &g));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_bpf_ring_buffer_new(m, NULL, &g));
	assert_null(uxdp_bpf_ring_buffer_new(uxdp_bpf_object_find_map(obj,
		"rets"), on_rec, &g));
	assert_non_null(strstr(uxdp_errmsg(), "not a loaded ringbuf"));
	assert_int_equal(uxdp_bpf_ring_buffer_poll(NULL, 0), -EINVAL);
	uxdp_bpf_ring_buffer_free(NULL);
	/* Full: 4096 bytes less one take 127 records of 32 bytes (the
	 * 24-byte ones) and 16-byte ones after; then -EAGAIN. */
	for (i = 0; i < 100; i++)
		run(p, pkt, PKT_LEN, 0);
	assert_int_equal(ret_of(obj, 0), -EAGAIN);
	assert_true(ret_of(obj, 4) > 4096 - 48);
	rb = uxdp_bpf_ring_buffer_new(m, on_rec, &g);
	assert_non_null(rb);
	/* A second map in the same buffer. */
	assert_int_equal(uxdp_bpf_ring_buffer_add(rb, x, on_rec, &g2), 0);
	assert_int_equal(uxdp_bpf_ring_buffer_add(rb, NULL, on_rec, &g2),
			 -EINVAL);
	/* A callback's error stops the read, its record read. */
	g.stop_after = 3;
	assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), -7);
	g.stop_after = 0;
	assert_true(uxdp_bpf_ring_buffer_consume(rb) > 100);
	run(p, pkt, PKT_LEN, 0);
	assert_int_equal(ret_of(obj, 0), 0);
	assert_int_equal(ret_of(obj, 4), 48);
	assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), 2);
	assert_int_equal(g2.n, 0);
	/* The buffer holds the maps: the object and x may go first. */
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
	uxdp_bpf_map_close(x);
	assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), 0);
	uxdp_bpf_ring_buffer_free(rb);
}

/*
 * ringbuf_leak.bpf.c leaves a reservation on short packets: the run's end
 * discards it (the kernel refuses such a program), so the consumer reads
 * the long packets' records after it; said once.
 */
static void test_left(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
			  .engine = UXDP_BPF_ENGINE_JIT);
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_ring_buffer *rb;
	struct uxdp_prog *p;
	struct got g = { 0 };
	uint8_t pkt[PKT_LEN] = { 0 };
	uint32_t v;
	int i;

	(void)state;
	obj = uxdp_bpf_object_open(T_BPF_DIR "/ringbuf_leak.o", &o);
	assert_non_null(obj);
	assert_int_equal(uxdp_bpf_object_load(obj), 0);
	p = uxdp_bpf_object_prog(obj, "ringbuf_leak");
	rb = uxdp_bpf_ring_buffer_new(uxdp_bpf_object_find_map(obj, "rb"),
				      on_rec, &g);
	assert_non_null(rb);
	/* More left than the ring holds: each discarded, so the reader
	 * passes over them (a discarded record takes its room until
	 * then, as the kernel's). */
	for (i = 0; i < 600; i++) {
		run(p, pkt, 20, 0);
		if (i % 200 == 199)
			assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), 0);
	}
	run(p, pkt, PKT_LEN, 0);
	assert_int_equal(uxdp_bpf_ring_buffer_consume(rb), 1);
	memcpy(&v, g.data[0], 4);
	assert_int_equal(v, PKT_LEN);
	uxdp_bpf_ring_buffer_free(rb);
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

/* ---- threads ---------------------------------------------------------------- */


struct prod {
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uint32_t id, runs;
	bool pingpong;
	const uint64_t *consumed;
	const bool *stop;
	uint32_t gave_up;
	bool finished;
};

static void *producer(void *arg)
{
	struct prod *pr = arg;
	uint8_t pkt[PKT_LEN] = { 0 };
	uint32_t i;

	for (i = 0; i < pr->runs && !__atomic_load_n(pr->stop,
						     __ATOMIC_ACQUIRE); i++) {
		/* The records' queue is the producer; ping-pong waits for
		 * the 24-byte one (the 5-byte one wakes no one). Results
		 * are not read here: a per-CPU lookup reads the other
		 * producer's slot as it writes it. */
		run(pr->p, pkt, 16 + i % 48, pr->id);
		if (!pr->pingpong)
			continue;
		uint64_t until = t_now_ms() + 10000;

		while (__atomic_load_n(&pr->consumed[pr->id],
				       __ATOMIC_ACQUIRE) < (uint64_t)i + 1) {
			if (t_now_ms() > until ||
			    __atomic_load_n(pr->stop, __ATOMIC_ACQUIRE)) {
				pr->gave_up++;
				break;
			}
			sched_yield();
		}
	}
	__atomic_store_n(&pr->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

static void stress(uint32_t engine, uint32_t np, uint32_t runs, bool pingpong)
{
	struct uxdp_bpf_object *obj = open_rb(engine);
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "ringbuf");
	struct uxdp_bpf_ring_buffer *rb;
	struct got g = { 0 };
	struct prod pr[2];
	pthread_t t[2];
	bool stop = false;
	uint32_t i, slept = 0;
	uint64_t end, want, taken;

	rb = uxdp_bpf_ring_buffer_new(uxdp_bpf_object_find_map(obj, "rb"),
				      on_rec, &g);
	assert_non_null(rb);
	for (i = 0; i < np; i++) {
		pr[i] = (struct prod){ .obj = obj, .p = p, .id = i,
				       .runs = runs, .pingpong = pingpong,
				       .consumed = g.by_q, .stop = &stop };
		assert_int_equal(pthread_create(&t[i], NULL, producer,
						&pr[i]), 0);
	}
	end = t_now_ms() + 20000;
	/* Until the producers are done and their records read. */
	for (;;) {
		uint64_t t0 = t_now_ms(), woken = g.woken;
		bool done = true;
		int n;

		for (i = 0; i < np; i++)
			done &= __atomic_load_n(&pr[i].finished,
						__ATOMIC_ACQUIRE);
		if (done || t_now_ms() > end)
			break;
		n = uxdp_bpf_ring_buffer_poll(rb, pingpong ? 500 : 20);
		assert_true(n >= 0);
		/* A poll that slept its whole time-out and then found
		 * records written with a wake-up slept through it (what was
		 * there when it began, it reads before sleeping). The
		 * 5-byte ones are BPF_RB_NO_WAKEUP: one may rightly wait
		 * for the time-out, as in the kernel. */
		if (pingpong && g.woken > woken && t_now_ms() - t0 >= 500)
			slept++;
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < np; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_true(uxdp_bpf_ring_buffer_consume(rb) >= 0);
	/* One more run here, the ring empty: its queries say where the
	 * positions are (before its own 48 bytes, for the consumer's). */
	run(p, (const uint8_t[PKT_LEN]){ 0 }, PKT_LEN, 3);
	taken = 32 * g.woken + 16 * g.small;
	want = pingpong ? 2ULL * np * runs : g.n;
	if (g.n != want || g.n != g.woken + g.small ||
	    ret_of(obj, 6) != (int64_t)taken ||
	    ret_of(obj, 7) != (int64_t)taken + 48 ||
	    (pingpong && (slept || pr[0].gave_up ||
			  (np > 1 && pr[1].gave_up))))
		fail_msg("%u producers, %u runs%s: %llu records read (%llu "
			 "of 24 bytes, %llu of 5), want %llu; positions: "
			 "consumer %lld, producer %lld, the records read "
			 "%llu; %u polls slept their time-out with a record "
			 "waiting, producers gave up waiting %u and %u "
			 "times", np, runs, pingpong ? " (ping-pong)" : "",
			 (unsigned long long)g.n,
			 (unsigned long long)g.woken,
			 (unsigned long long)g.small,
			 (unsigned long long)want, (long long)ret_of(obj, 6),
			 (long long)ret_of(obj, 7) - 48,
			 (unsigned long long)taken, slept, pr[0].gave_up,
			 np > 1 ? pr[1].gave_up : 0);
	uxdp_bpf_ring_buffer_free(rb);
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

static void test_threads(void **state)
{
	size_t e;

	(void)state;
	for (e = 0; e < 2; e++) {
		stress(engines[e], 1, 2000, true);
		stress(engines[e], 2, 1000, true);
		stress(engines[e], 1, 5000, false);	/* may fill: -EAGAIN */
		stress(engines[e], 2, 5000, false);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_left),
		cmocka_unit_test(test_threads),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
