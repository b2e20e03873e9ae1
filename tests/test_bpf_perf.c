/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PERF_EVENT_ARRAY, bpf_perf_event_output and uxdp's perf buffer
 * (src/bpf/map_perf.c): tests/bpf/perf.bpf.c's samples as libbpf's
 * perf_buffer would hand them over (the program's bytes, the packet's,
 * zero padding to perf's 8-byte words), the helper's kernel errors, the
 * control plane's, losses on a full ring, a ring per thread index (another
 * CPU's slot is -EOPNOTSUPP), and threads producing while a consumer
 * sleeps in poll: tiny rings to big ones, one or two producers, and a
 * ping-pong that makes the consumer sleep before every sample (a lost
 * wake-up is a poll that times out with a sample waiting). Both engines.
 * test_bpf_kernel compares the samples with the kernel's.
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
#define CAP		96	/* perf.bpf.c's */

struct sample_hdr {		/* perf.bpf.c's struct sample */
	uint32_t len, queue;
	uint8_t tag[8];
};

static struct uxdp_bpf_object *open_perf(uint32_t engine)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj;

	obj = uxdp_bpf_object_open(T_BPF_DIR "/perf.o", &o);
	if (!obj)
		fail_msg("open: %s", uxdp_errmsg());
	if (uxdp_bpf_object_load(obj))
		fail_msg("load: %s", uxdp_errmsg());
	return obj;
}

static uint8_t pkt[PKT_LEN];

static void run(struct uxdp_prog *p, uint32_t len, uint32_t repeat)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = pkt,
			  .data_size_in = len, .repeat = repeat,
			  .rx_queue_index = 3);

	assert_int_equal(uxdp_bpf_prog_test_run(p, &o), 0);
	assert_int_equal(o.retval, XDP_PASS);
}

/* This thread's rets[@k] (a per-CPU array). */
static int64_t ret_of(struct uxdp_bpf_object *obj, uint32_t k)
{
	int64_t v[UXDP_MAX_THREADS] = { 0 };

	assert_int_equal(uxdp_bpf_num_possible_cpus(), UXDP_MAX_THREADS);
	assert_int_equal(uxdp_bpf_map_lookup(uxdp_bpf_object_find_map(obj,
			 "rets"), &k, v, 0), 0);
	return v[uxdp_thread_index()];
}

/* Another thread's. */
static int64_t ret_of_cpu(struct uxdp_bpf_object *obj, uint32_t k,
			  uint32_t cpu)
{
	int64_t v[UXDP_MAX_THREADS] = { 0 };

	assert_int_equal(uxdp_bpf_map_lookup(uxdp_bpf_object_find_map(obj,
			 "rets"), &k, v, 0), 0);
	return v[cpu];
}

/* What the callbacks got. */
struct got {
	uint32_t n;
	uint64_t lost;
	int cpu[8];
	uint32_t size[8];
	uint8_t data[8][256];
	uint64_t total;		/* every sample, kept or not */
	uint64_t bytes;
	uint64_t by_cpu[64];	/* every sample, by its ring */
};

static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct got *g = ctx;

	__atomic_add_fetch(&g->total, 1, __ATOMIC_RELAXED);
	if (cpu >= 0 && cpu < 64)
		__atomic_add_fetch(&g->by_cpu[cpu], 1, __ATOMIC_RELEASE);
	g->bytes += size;
	if (g->n < 8) {
		g->cpu[g->n] = cpu;
		g->size[g->n] = size;
		memcpy(g->data[g->n], data, size < 256 ? size : 256);
		g->n++;
	}
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	(void)cpu;
	((struct got *)ctx)->lost += cnt;
}

static const uint32_t engines[] = { UXDP_BPF_ENGINE_INTERP,
				    UXDP_BPF_ENGINE_JIT };

/* One run's three samples, byte for byte, and the helper's errors. */
static void test_samples(void **state)
{
	size_t e;

	(void)state;
	for (e = 0; e < 2; e++) {
		struct uxdp_bpf_object *obj = open_perf(engines[e]);
		struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "perf");
		struct got ev = { 0 }, all = { 0 };
		struct uxdp_bpf_perf_buffer *pb, *pball;
		struct sample_hdr h;
		uint32_t i;

		pb = uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
			"events"), 1, on_sample, on_lost, &ev);
		pball = uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
			"events_all"), 1, on_sample, on_lost, &all);
		assert_non_null(pb);
		assert_non_null(pball);
		/* max_entries 0 in the object: the possible CPUs. */
		assert_int_equal(uxdp_bpf_map_max_entries(
			uxdp_bpf_object_find_map(obj, "events_all")),
			uxdp_bpf_num_possible_cpus());
		for (i = 0; i < PKT_LEN; i++)
			pkt[i] = (uint8_t)(0xa0 + i);
		run(p, PKT_LEN, 1);
		assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 2);
		assert_int_equal(uxdp_bpf_perf_buffer_poll(pball, 0), 1);
		/* 16 bytes and the 64 of the packet: 80, padded to 84 (4 +
		 * 84 is 88, whole words). */
		assert_int_equal(ev.size[0], 84);
		memcpy(&h, ev.data[0], sizeof(h));
		assert_int_equal(h.len, PKT_LEN);
		assert_int_equal(h.queue, 3);
		assert_int_equal(h.tag[4], 5);
		assert_memory_equal(ev.data[0] + 16, pkt, PKT_LEN);
		for (i = 80; i < 84; i++)
			assert_int_equal(ev.data[0][i], 0);
		assert_int_equal(ev.cpu[0], (int)uxdp_thread_index());
		/* Index 0, 4 bytes: 4 + 4 is a word already. */
		assert_int_equal(ev.size[1], 4);
		assert_memory_equal(ev.data[1], &h, 4);
		/* No bytes: one word of the size and 4 zero bytes. */
		assert_int_equal(all.size[0], 4);
		assert_int_equal(all.data[0][0] | all.data[0][3], 0);
		assert_int_equal(ret_of(obj, 0), 0);
		assert_int_equal(ret_of(obj, 1), 0);
		assert_int_equal(ret_of(obj, 2), -E2BIG);
		assert_int_equal(ret_of(obj, 3), -EINVAL);
		assert_int_equal(ret_of(obj, 4), -EFAULT);
		assert_int_equal(ret_of(obj, 5), 0);
		/* Past the cap, the cap's worth of the packet. */
		memset(&ev, 0, sizeof(ev));
		run(p, 14, 1);
		assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 2);
		assert_int_equal(ev.size[0], 36);	/* 16 + 14 + 2 pad */
		assert_int_equal(ev.lost, 0);
		/* Nothing left. */
		assert_int_equal(uxdp_bpf_perf_buffer_poll(pb, 10), 0);
		assert_int_equal(uxdp_bpf_perf_buffer_free(pb), 0);
		assert_int_equal(uxdp_bpf_perf_buffer_free(pball), 0);
		/* No buffer: -ENOENT, as the kernel's empty slot. */
		run(p, PKT_LEN, 1);
		assert_int_equal(ret_of(obj, 0), -ENOENT);
		uxdp_prog_put(p);
		uxdp_bpf_object_close(obj);
	}
}

/* The control plane's errors, and the buffer's. */
static void test_errors(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
			  .engine = UXDP_BPF_ENGINE_INTERP);
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_map *m;
	struct uxdp_bpf_perf_buffer *pb;
	struct uxdp_prog *p;
	struct got g = { 0 };
	uint32_t k, next, v = 0, n;

	(void)state;
	/* Before load: not a loaded map. */
	obj = uxdp_bpf_object_open(T_BPF_DIR "/perf.o", &o);
	assert_non_null(obj);
	errno = 0;
	assert_null(uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
		"events"), 1, on_sample, NULL, &g));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(uxdp_bpf_object_load(obj), 0);
	m = uxdp_bpf_object_find_map(obj, "events");
	p = uxdp_bpf_object_prog(obj, "perf");
	/* page_cnt a power of two, above 0; a sample callback; a perf
	 * array. */
	assert_null(uxdp_bpf_perf_buffer_new(m, 3, on_sample, NULL, &g));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "power of two"));
	assert_null(uxdp_bpf_perf_buffer_new(m, 0, on_sample, NULL, &g));
	assert_null(uxdp_bpf_perf_buffer_new(m, 1, NULL, NULL, &g));
	assert_null(uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
		"rets"), 1, on_sample, NULL, &g));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_bpf_perf_buffer_new(NULL, 1, on_sample, NULL, &g));
	assert_int_equal(uxdp_bpf_perf_buffer_poll(NULL, 0), -EINVAL);
	assert_int_equal(uxdp_bpf_perf_buffer_free(NULL), 0);
	/* The kernel's: no value to read; no descriptor to write. */
	k = 0;
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, &v, 0), -EOPNOTSUPP);
	assert_int_equal(uxdp_bpf_map_update(m, &k, &v, BPF_ANY),
			 -EOPNOTSUPP);
	assert_non_null(strstr(uxdp_errmsg(), "uxdp_bpf_perf_buffer_new"));
	k = 4;
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -E2BIG);
	k = 0;
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -ENOENT);
	/* Every index, as an array's. */
	n = 0;
	for (k = 0, next = 0; !uxdp_bpf_map_get_next_key(m, n ? &k : NULL,
							 &next); k = next)
		n++;
	assert_int_equal(n, 4);
	pb = uxdp_bpf_perf_buffer_new(m, 1, on_sample, on_lost, &g);
	assert_non_null(pb);
	run(p, PKT_LEN, 1);
	assert_int_equal(ret_of(obj, 0), 0);
	/* A slot deleted: the program's write is -ENOENT; the ring stays
	 * the buffer's, its samples still there. */
	k = 0;
	assert_int_equal(uxdp_bpf_map_delete(m, &k), 0);
	assert_int_equal(uxdp_bpf_map_delete(m, &k), -ENOENT);
	run(p, PKT_LEN, 1);
	assert_int_equal(ret_of(obj, 0), -ENOENT);
	assert_int_equal(ret_of(obj, 1), -ENOENT);
	assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 2);
	/* The buffer holds the map: closing the object first is fine. */
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
	assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 0);
	assert_int_equal(uxdp_bpf_perf_buffer_free(pb), 0);
}

/* A full ring loses samples and says how many; nothing else is lost. */
static void test_lost(void **state)
{
	size_t e;

	(void)state;
	for (e = 0; e < 2; e++) {
		struct uxdp_bpf_object *obj = open_perf(engines[e]);
		struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "perf");
		struct got g = { 0 };
		struct uxdp_bpf_perf_buffer *pb;
		uint32_t runs = 200;

		/* 4 KiB: a run's two samples are 8 + 84 + 4 and 8 + 4 + 4. */
		pb = uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
			"events"), 1, on_sample, on_lost, &g);
		assert_non_null(pb);
		run(p, PKT_LEN, runs);
		assert_int_equal(ret_of(obj, 0), -ENOSPC);
		assert_true(uxdp_bpf_perf_buffer_consume(pb) > 0);
		assert_true(g.lost > 0);
		assert_int_equal(g.total + g.lost, 2 * runs);
		/* Emptied, it takes samples again. */
		g.lost = 0;
		g.total = 0;
		run(p, PKT_LEN, 1);
		assert_int_equal(ret_of(obj, 0), 0);
		assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 2);
		assert_int_equal(g.lost, 0);
		assert_int_equal(uxdp_bpf_perf_buffer_free(pb), 0);
		uxdp_prog_put(p);
		uxdp_bpf_object_close(obj);
	}
}

/* ---- threads ---------------------------------------------------------------- */

struct prod {
	struct uxdp_prog *p;
	uint32_t runs, repeat;
	uint32_t index;		/* out: its thread index */
	int64_t other_cpu;	/* out: rets[1], slot 0 from it */
	/* ping-pong: wait for the consumer after each run (what it took
	 * from each ring) */
	const uint64_t *consumed;
	bool pingpong;
	uint32_t gave_up;	/* out: waits past their bound */
	const bool *stop;	/* the consumer gave up: stop producing */
	/* Producers that run together meet here once each has its index:
	 * without it, on a loaded machine the first could finish before the
	 * second starts, which then gets the same (freed) index, and its
	 * ping-pong count starts where the first one's ended. */
	pthread_barrier_t *met;
};


static void *producer(void *arg)
{
	struct prod *pr = arg;
	uint32_t i;

	pr->index = uxdp_thread_index();
	if (pr->met)
		pthread_barrier_wait(pr->met);
	for (i = 0; i < pr->runs &&
	     !__atomic_load_n(pr->stop, __ATOMIC_ACQUIRE); i++) {
		run(pr->p, PKT_LEN, pr->repeat);
		if (!pr->pingpong)
			continue;
		/* Its sample consumed before the next run, so the
		 * consumer sleeps before each one. Bounded: 10 s. */
		uint64_t until = t_now_ms() + 10000;

		while (__atomic_load_n(&pr->consumed[pr->index],
				       __ATOMIC_ACQUIRE) < (uint64_t)(i + 1)) {
			if (t_now_ms() > until ||
			    __atomic_load_n(pr->stop, __ATOMIC_ACQUIRE)) {
				pr->gave_up++;
				break;
			}
			sched_yield();
		}
	}
	return NULL;
}

/* A thread of its own writes its own ring; slot 0 from it is another
 * CPU's: -EOPNOTSUPP. */
static void test_other_cpu(void **state)
{
	struct uxdp_bpf_object *obj = open_perf(UXDP_BPF_ENGINE_JIT);
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "perf");
	struct got g = { 0 };
	struct uxdp_bpf_perf_buffer *pb;
	static const bool no_stop;
	struct prod pr = { .p = p, .runs = 1, .repeat = 1, .stop = &no_stop };
	pthread_t t;

	(void)state;
	pb = uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj, "events"),
				      1, on_sample, on_lost, &g);
	assert_non_null(pb);
	/* This thread first: index 0 is its ring, not the other's. */
	assert_int_equal(uxdp_thread_index(), 0);
	assert_int_equal(pthread_create(&t, NULL, producer, &pr), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (pr.index >= 4) {
		printf("SKIP test_other_cpu: the thread is index %u, past the "
		       "map's 4 slots\n", pr.index);
		assert_int_equal(ret_of_cpu(obj, 0, pr.index), -E2BIG);
	} else if (pr.index == 0) {
		fail_msg("a second thread got index 0 too");
	} else {
		assert_int_equal(ret_of_cpu(obj, 0, pr.index), 0);
		assert_int_equal(ret_of_cpu(obj, 1, pr.index), -EOPNOTSUPP);
		assert_int_equal(uxdp_bpf_perf_buffer_consume(pb), 1);
		assert_int_equal(g.cpu[0], (int)pr.index);
	}
	assert_int_equal(uxdp_bpf_perf_buffer_free(pb), 0);
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

struct cons {
	struct uxdp_bpf_perf_buffer *pb;
	struct got *g;
	uint64_t want;		/* samples + lost at the end */
	uint32_t timeouts_pending;	/* polls that slept past a sample */
	int timeout_ms;
};


/*
 * Producers and a polling consumer: @np producers of @runs runs of
 * @repeat each into rings of @pages pages; ping-pong or free-running.
 * Every sample arrives or is counted lost; in ping-pong none is lost and
 * no poll times out with one waiting. The samples are events_all's (one
 * a run, 16 bytes in the ring): a slot for every thread index.
 */
static void stress(uint32_t engine, size_t pages, uint32_t np, uint32_t runs,
		   uint32_t repeat, bool pingpong)
{
	struct uxdp_bpf_object *obj = open_perf(engine);
	struct uxdp_prog *p = uxdp_bpf_object_prog(obj, "perf");
	struct got g = { 0 };
	struct cons c = { 0 };
	struct prod pr[2];
	pthread_t t[2];
	pthread_barrier_t met;
	bool stop = false;
	uint64_t end;
	uint32_t i;

	c.g = &g;
	c.timeout_ms = pingpong ? 2000 : 50;
	c.pb = uxdp_bpf_perf_buffer_new(uxdp_bpf_object_find_map(obj,
		"events_all"), pages, on_sample, on_lost, &g);
	assert_non_null(c.pb);
	c.want = (uint64_t)np * runs * repeat;
	assert_int_equal(pthread_barrier_init(&met, NULL, np), 0);
	for (i = 0; i < np; i++) {
		pr[i] = (struct prod){ .p = p, .runs = runs, .repeat = repeat,
				       .consumed = g.by_cpu, .stop = &stop,
				       .pingpong = pingpong, .met = &met };
		assert_int_equal(pthread_create(&t[i], NULL, producer,
						&pr[i]), 0);
	}
	end = t_now_ms() + 20000;
	while (g.total + g.lost < c.want && t_now_ms() < end) {
		uint64_t t0 = t_now_ms();
		int n = uxdp_bpf_perf_buffer_poll(c.pb, c.timeout_ms);

		assert_true(n >= 0);
		/* A poll that slept its whole time-out and then found
		 * samples slept through their wake-up (what was there when
		 * it began, it reads before sleeping). One that returns 0
		 * early was woken by a producer that saw the flag of an
		 * earlier sleep: spurious, as libbpf's poll may be too. */
		if (pingpong && n > 0 &&
		    t_now_ms() - t0 >= (uint64_t)c.timeout_ms)
			c.timeouts_pending++;
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < np; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&met);
	/* Threads alive together have different indices (their rings). */
	if (np > 1 && pr[0].index == pr[1].index)
		fail_msg("two producers alive together share thread index %u",
			 pr[0].index);
	assert_true(uxdp_bpf_perf_buffer_consume(c.pb) >= 0);
	if (g.total + g.lost != c.want)
		fail_msg("pages %zu, %u producers, %u x %u runs%s: %llu samples "
			 "+ %llu lost, want %llu", pages, np, runs, repeat,
			 pingpong ? " (ping-pong)" : "",
			 (unsigned long long)g.total,
			 (unsigned long long)g.lost,
			 (unsigned long long)c.want);
	if (pingpong && (g.lost || c.timeouts_pending || pr[0].gave_up ||
			 (np > 1 && pr[1].gave_up)))
		fail_msg("ping-pong, pages %zu, %u producers, %u runs: %llu "
			 "lost, %u polls slept their time-out with a sample "
			 "waiting, producers gave up waiting %u and %u times, "
			 "thread indices %u and %u",
			 pages, np, runs, (unsigned long long)g.lost,
			 c.timeouts_pending, pr[0].gave_up,
			 np > 1 ? pr[1].gave_up : 0, pr[0].index,
			 np > 1 ? pr[1].index : 0);
	assert_int_equal(uxdp_bpf_perf_buffer_free(c.pb), 0);
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

static void test_threads(void **state)
{
	static const struct {
		size_t pages;
		uint32_t np, runs, repeat;
		bool pingpong;
	} m[] = {
		{ 1, 1, 2000, 1, true },	/* the consumer sleeps each time */
		{ 1, 2, 1000, 1, true },
		{ 1, 1, 100, 1024, false },	/* tiny ring, bursts: losses */
		{ 1, 2, 300, 64, false },
		{ 2, 2, 3000, 1, false },
		{ 64, 2, 100, 1024, false },
	};
	size_t i, e;

	(void)state;
	for (e = 0; e < 2; e++)
		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			stress(engines[e], m[i].pages, m[i].np, m[i].runs,
			       m[i].repeat, m[i].pingpong);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_other_cpu),
		cmocka_unit_test(test_threads),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
