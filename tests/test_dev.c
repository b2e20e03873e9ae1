/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device model and the XDP datapath through a scripted test driver
 * (t_tdev.h): every verdict on the poll path, the XDP_TX and redirect bulk
 * queues (flush at size and at the end of the poll, bulk size 1 vs 16),
 * xdp_xmit returning partial counts and errors (each frame returned exactly
 * once), the registry, and errors. Each test ends with the pool's
 * accounting: every buffer back, none twice.
 */
#define _GNU_SOURCE		/* open_memstream */
#include "t_helpers.h"

#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <string.h>

#include <uxdp/uxdp.h>

#include "t_pool.h"
#include "t_tdev.h"

#define NCHUNKS 512

/* A program whose verdict the test sets; it counts its runs. */
struct t_verdict {
	uint32_t verdict;
	uint32_t runs;
	struct uxdp_map *map;	/* for UXDP_REDIRECT via the map */
	uint32_t key;
	uint64_t flags;
	bool use_map;
};

static uint32_t t_prog_verdict(struct uxdp_buff *ctx, void *priv)
{
	struct t_verdict *v = priv;

	(void)ctx;
	v->runs++;
	if (v->verdict == UXDP_REDIRECT && v->use_map)
		return uxdp_redirect_map(v->map, v->key, v->flags);
	return v->verdict;
}

struct t_env {
	struct t_gen gen;
	struct t_tdev *in;	/* ingress */
	struct t_tdev *out;	/* redirect target */
	struct t_verdict v;
	struct uxdp_map *map;
};

static void t_env_init(struct t_env *e)
{
	struct uxdp_prog *p;

	memset(e, 0, sizeof(*e));
	t_gen_init(&e->gen, NCHUNKS);
	e->in = t_tdev_create("t-in");
	e->out = t_tdev_create("t-out");
	e->map = uxdp_map_create(4);
	assert_non_null(e->map);
	assert_int_equal(uxdp_map_update(e->map, 1,
					 uxdp_dev_target(e->out->dev)), 0);
	e->v.map = e->map;
	e->v.key = 1;
	e->v.use_map = true;
	p = uxdp_prog_create("verdict", t_prog_verdict, &e->v);
	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(e->in->dev, UXDP_ALL_QUEUES, p),
			 0);
	uxdp_prog_put(p);
}

static void t_inject(struct t_env *e, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct uxdp_buff *b = t_gen_buf(&e->gen, 64, i);

		assert_non_null(b);
		t_tdev_inject(e->in, b);
	}
}

static struct uxdp_rxq_stats t_rx(struct t_tdev *t)
{
	struct uxdp_rxq_stats st;

	assert_int_equal(uxdp_dev_rxq_stats(t->dev, 0, &st), 0);
	return st;
}

static struct uxdp_rxq_stats t_rx_dev(struct uxdp_dev *d)
{
	struct uxdp_rxq_stats st;

	assert_int_equal(uxdp_dev_rxq_stats(d, 0, &st), 0);
	return st;
}

/* Frames held by the tdevs are the only ones out of the pool. */
static void t_check_accounting(struct t_env *e)
{
	assert_int_equal(t_gen_outstanding(&e->gen),
			 e->in->ntaken + e->out->ntaken);
}

static void t_env_fini(struct t_env *e)
{
	t_check_accounting(e);
	t_tdev_destroy(e->in);
	t_tdev_destroy(e->out);
	uxdp_map_destroy(e->map);
	t_gen_fini(&e->gen);
}

/* ---- verdicts -------------------------------------------------------------- */

static uint32_t pass_seen;
static void t_pass(void *arg, struct uxdp_buff *b)
{
	uint32_t seq;

	(void)arg;
	memcpy(&seq, (char *)b->data + 14, sizeof(seq));
	pass_seen += 1 + seq;
}

static void test_pass(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_PASS;
	/* Without a handler: dropped and counted. */
	t_inject(&e, 3);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 64), 3);
	assert_int_equal(t_rx(e.in).pass_dropped, 3);
	assert_int_equal(t_rx(e.in).pass, 0);
	/* With one: it sees each packet, then the buffer goes back. */
	pass_seen = 0;
	uxdp_dev_set_pass_handler(e.in->dev, t_pass, NULL);
	t_inject(&e, 4);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 64), 4);
	assert_int_equal(pass_seen, 1 + 2 + 3 + 4);
	assert_int_equal(t_rx(e.in).pass, 4);
	assert_int_equal(t_rx(e.in).packets, 7);
	assert_int_equal(t_rx(e.in).bytes, 7 * 64);
	t_env_fini(&e);
}

static void test_drop_aborted_invalid(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_DROP;
	t_inject(&e, 5);
	uxdp_dev_poll(e.in->dev, 0, 64);
	e.v.verdict = UXDP_ABORTED;
	t_inject(&e, 2);
	uxdp_dev_poll(e.in->dev, 0, 64);
	e.v.verdict = 77;	/* not an action: ABORTED, counted */
	t_inject(&e, 3);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).drop, 5);
	assert_int_equal(t_rx(e.in).aborted, 5);
	assert_int_equal(t_rx(e.in).invalid_action, 3);
	assert_int_equal(e.in->ncalls, 0);
	t_env_fini(&e);
}

static void test_no_prog(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	assert_int_equal(uxdp_dev_attach_prog(e.in->dev, 0, NULL), 0);
	t_inject(&e, 6);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 64), 6);
	assert_int_equal(t_rx(e.in).no_prog, 6);
	assert_int_equal(e.v.runs, 0);
	t_env_fini(&e);
}

/* XDP_TX goes out of the ingress device, in bulks, FLUSH at the end. */
static void test_tx_bulk_flush(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_TX;
	t_inject(&e, 40);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 64), 40);
	/* Full at 16 twice (no doorbell), then the rest at the end. */
	assert_int_equal(e.in->ncalls, 3);
	assert_int_equal(e.in->calls[0].n, 16);
	assert_int_equal(e.in->calls[0].flags, 0);
	assert_int_equal(e.in->calls[1].n, 16);
	assert_int_equal(e.in->calls[1].flags, 0);
	assert_int_equal(e.in->calls[2].n, 8);
	assert_int_equal(e.in->calls[2].flags, UXDP_XMIT_FLUSH);
	assert_int_equal(e.in->ntaken, 40);
	assert_int_equal(t_rx(e.in).tx, 40);
	assert_int_equal(t_rx(e.in).xmit_calls, 3);
	t_check_accounting(&e);
	/* The frames are the packets, in order. */
	{
		uint32_t i, seq;

		for (i = 0; i < 40; i++) {
			memcpy(&seq, (char *)e.in->taken[i]->data + 14, 4);
			assert_int_equal(seq, i);
			assert_int_equal(e.in->taken[i]->len, 64);
		}
	}
	assert_int_equal(t_tdev_complete(e.in), 40);

	/* Exactly 16: flushed at the end, not before. */
	e.in->ncalls = 0;
	t_inject(&e, 16);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 1);
	assert_int_equal(e.in->calls[0].n, 16);
	assert_int_equal(e.in->calls[0].flags, UXDP_XMIT_FLUSH);
	t_tdev_complete(e.in);

	/* A budget smaller than the backlog: each poll flushes its own. */
	e.in->ncalls = 0;
	t_inject(&e, 10);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 4), 4);
	assert_int_equal(e.in->ncalls, 1);
	assert_int_equal(e.in->calls[0].n, 4);
	assert_int_equal(uxdp_dev_poll(e.in->dev, 0, 64), 6);
	assert_int_equal(e.in->ncalls, 2);
	t_env_fini(&e);
}

/* Bulk size 1: one xmit call per frame; a size in between. */
static void test_bulk_size_setting(void **state)
{
	struct t_env e;
	uint32_t i;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_TX;
	uxdp_dev_set_bulk(e.in->dev, 1);
	t_inject(&e, 20);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 20);
	for (i = 0; i < 20; i++)
		assert_int_equal(e.in->calls[i].n, 1);
	assert_int_equal(e.in->calls[19].flags, UXDP_XMIT_FLUSH);
	t_tdev_complete(e.in);

	e.in->ncalls = 0;
	uxdp_dev_set_bulk(e.in->dev, 5);
	t_inject(&e, 12);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 3);	/* 5, 5, 2 */
	assert_int_equal(e.in->calls[2].n, 2);
	t_tdev_complete(e.in);
	/* Out of range settings are clamped: 0 acts as 1, 1000 as 16. */
	e.in->ncalls = 0;
	uxdp_dev_set_bulk(e.in->dev, 0);
	t_inject(&e, 3);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 3);
	t_tdev_complete(e.in);
	e.in->ncalls = 0;
	uxdp_dev_set_bulk(e.in->dev, 1000);
	t_inject(&e, 40);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 3);	/* 16, 16, 8 */
	assert_int_equal(e.in->calls[0].n, UXDP_BULK_SIZE);
	t_env_fini(&e);
}

/* xmit takes part of a bulk: the rest goes back to the pool, once. */
static void test_xmit_partial(void **state)
{
	struct uxdp_pool_stats before, after;
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_TX;
	e.in->script[0] = 10;		/* of 16 */
	e.in->script[1] = 0;		/* of 16 */
	e.in->script[2] = 3;		/* of 8 */
	e.in->nscript = 3;
	t_inject(&e, 40);
	uxdp_pool_stats(e.gen.pool, &before);
	uxdp_dev_poll(e.in->dev, 0, 64);
	uxdp_pool_stats(e.gen.pool, &after);
	assert_int_equal(e.in->ntaken, 13);
	assert_int_equal(t_rx(e.in).tx, 13);
	assert_int_equal(t_rx(e.in).tx_err, 27);
	/* 27 frames freed back: exactly once each (no bad frees). */
	assert_int_equal(after.freed - before.freed, 27);
	assert_int_equal(after.bad_free, 0);
	t_env_fini(&e);
}

/* xmit fails outright: every frame of the bulk goes back. */
static void test_xmit_negative(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_TX;
	e.in->script[0] = -ENOSPC;
	e.in->script[1] = -ENXIO;
	e.in->nscript = 2;
	t_inject(&e, 20);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.in->ncalls, 2);
	assert_int_equal(e.in->ntaken, 0);
	assert_int_equal(t_rx(e.in).tx_err, 20);
	assert_int_equal(t_rx(e.in).tx, 0);
	t_env_fini(&e);
}

/* A driver returning more than it was given is clamped, not trusted. */
static void test_xmit_overcount(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_TX;
	e.in->overcount = 5;		/* takes 4, says 9 */
	t_inject(&e, 4);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).tx, 4);
	assert_int_equal(t_rx(e.in).tx_err, 0);
	t_env_fini(&e);
}

/* Redirect through a map: bulked per target, flushed at the end. */
static void test_redirect_map(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_REDIRECT;
	t_inject(&e, 20);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(e.out->ncalls, 2);
	assert_int_equal(e.out->calls[0].n, 16);
	assert_int_equal(e.out->calls[1].n, 4);
	assert_int_equal(e.out->calls[1].flags, UXDP_XMIT_FLUSH);
	assert_int_equal(e.in->ncalls, 0);
	assert_int_equal(t_rx(e.in).redirect, 20);
	assert_int_equal(e.out->ntaken, 20);
	t_check_accounting(&e);

	/* Target refuses part: counted on the ingress queue, returned. */
	e.out->script[0] = 2;
	e.out->nscript = 1;
	e.out->script_pos = 0;
	t_inject(&e, 5);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).redirect_err, 3);
	t_env_fini(&e);
}

/* An empty slot: the flags' low bits are the verdict. */
static void test_redirect_map_fallback(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_REDIRECT;
	e.v.key = 2;			/* empty */
	e.v.flags = UXDP_DROP;
	t_inject(&e, 3);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).drop, 3);
	e.v.key = 99;			/* out of range */
	e.v.flags = UXDP_TX;
	t_inject(&e, 2);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).tx, 2);
	assert_int_equal(e.out->ncalls, 0);
	assert_int_equal(uxdp_map_update(e.map, 4, NULL), -E2BIG);
	assert_null(uxdp_map_lookup(e.map, 4));
	assert_null(uxdp_map_create(0));
	assert_int_equal(errno, EINVAL);
	t_env_fini(&e);
}

/* REDIRECT without a helper having set a target: an error, dropped. */
static void test_redirect_without_target(void **state)
{
	struct t_env e;

	(void)state;
	t_env_init(&e);
	e.v.verdict = UXDP_REDIRECT;
	e.v.use_map = false;
	t_inject(&e, 4);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).redirect_no_target, 4);
	assert_int_equal(t_rx(e.in).redirect_err, 0);
	assert_int_equal(t_rx(e.in).redirect, 0);
	t_env_fini(&e);
}

/* Redirect to two targets and TX in one poll: one xmit call each. */
static uint32_t t_prog_split(struct uxdp_buff *ctx, void *priv)
{
	struct t_env *e = priv;
	uint32_t seq;

	memcpy(&seq, (char *)ctx->data + 14, 4);
	switch (seq % 3) {
	case 0:
		return UXDP_TX;
	case 1:
		return uxdp_redirect_map(e->map, 1, UXDP_ABORTED);
	default:
		return uxdp_redirect_target(uxdp_dev_target(e->in->dev));
	}
}

static void test_mixed_targets(void **state)
{
	struct uxdp_prog *p;
	struct t_env e;

	(void)state;
	t_env_init(&e);
	p = uxdp_prog_create("split", t_prog_split, &e);
	assert_int_equal(uxdp_dev_attach_prog(e.in->dev, 0, p), 0);
	uxdp_prog_put(p);
	t_inject(&e, 12);
	uxdp_dev_poll(e.in->dev, 0, 64);
	/* 4 TX and 4 redirected back to the ingress device: separate bulk
	 * queues (XDP_TX flushed first), 4 redirected to t-out. */
	assert_int_equal(e.in->ncalls, 2);
	assert_int_equal(e.in->calls[0].n, 4);
	assert_int_equal(e.in->calls[1].n, 4);
	assert_int_equal(e.out->ncalls, 1);
	assert_int_equal(e.out->calls[0].n, 4);
	assert_int_equal(t_rx(e.in).tx, 4);
	assert_int_equal(t_rx(e.in).redirect, 8);
	t_env_fini(&e);
}

/* No room for the frame header: the packet is dropped, counted. */
static uint32_t t_prog_grow_tx(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
	/* Use the whole headroom, leaving no room for a frame header. */
	ctx->data = (char *)ctx->data_hard_start + 8;
	ctx->data_meta = ctx->data;
	return UXDP_TX;
}

static void test_frame_no_headroom(void **state)
{
	struct uxdp_prog *p;
	struct t_env e;

	(void)state;
	t_env_init(&e);
	p = uxdp_prog_create("grow", t_prog_grow_tx, NULL);
	uxdp_dev_attach_prog(e.in->dev, 0, p);
	uxdp_prog_put(p);
	t_inject(&e, 3);
	uxdp_dev_poll(e.in->dev, 0, 64);
	assert_int_equal(t_rx(e.in).frame_err, 3);
	assert_int_equal(e.in->ncalls, 0);
	t_env_fini(&e);
}

/* ---- device model ---------------------------------------------------------------- */

static void test_registry(void **state)
{
	struct t_tdev *a = t_tdev_create("reg-a");
	uint32_t idx = uxdp_dev_ifindex(a->dev);

	(void)state;
	assert_true(idx > 0);
	assert_ptr_equal(uxdp_dev_get_by_name("reg-a"), a->dev);
	assert_ptr_equal(uxdp_dev_get_by_index(idx), a->dev);
	assert_string_equal(uxdp_dev_name(a->dev), "reg-a");
	assert_string_equal(uxdp_dev_kind(a->dev), "tdev");
	assert_int_equal(uxdp_dev_num_rxq(a->dev), 1);
	assert_int_equal(uxdp_dev_num_txq(a->dev), 1);
	/* Names are unique. */
	assert_null(uxdp_dev_alloc("reg-a", &t_tdev_ops, 1, 1, 0));
	assert_int_equal(errno, EEXIST);
	assert_null(uxdp_dev_alloc("a-name-far-too-long", &t_tdev_ops, 1, 1, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_dev_alloc("q0", &t_tdev_ops, 0, 1, 0));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "queues"));
	t_tdev_destroy(a);
	assert_null(uxdp_dev_get_by_name("reg-a"));
	assert_null(uxdp_dev_get_by_index(idx));
	assert_null(uxdp_dev_get_by_index(0));
}

static void test_poll_and_xmit_errors(void **state)
{
	struct t_tdev *a = t_tdev_create("err-a");
	struct uxdp_prog *p = uxdp_prog_create("v", t_prog_verdict, NULL);
	struct uxdp_rxq_stats st;

	(void)state;
	assert_int_equal(uxdp_dev_poll(a->dev, 1, 64), -EINVAL);
	assert_int_equal(uxdp_dev_poll(a->dev, 0, -1), -EINVAL);
	assert_int_equal(uxdp_dev_attach_prog(a->dev, 3, p), -EINVAL);
	uxdp_dev_down(a->dev);
	assert_false(uxdp_dev_is_up(a->dev));
	assert_int_equal(uxdp_dev_poll(a->dev, 0, 64), -ENETDOWN);
	assert_int_equal(uxdp_dev_up(a->dev), 0);
	assert_int_equal(uxdp_dev_poll(a->dev, 0, 64), 0);
	assert_int_equal(uxdp_dev_xmit(a->dev, -1, NULL, 0), -EINVAL);
	assert_int_equal(uxdp_dev_xmit(a->dev, 0, NULL, 0x80), -EINVAL);
	assert_int_equal(uxdp_dev_rxq_stats(a->dev, 5, &st), -EINVAL);
	assert_null(uxdp_prog_create(NULL, t_prog_verdict, NULL));
	assert_null(uxdp_prog_create("x", NULL, NULL));
	uxdp_prog_put(p);
	t_tdev_destroy(a);
}

/* Bad options for the null driver and the polling threads say why. */
static void test_bad_options(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_len = 10);
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, to, .flags = 1U << 7);
	struct t_tdev *a = t_tdev_create("opt-a");

	(void)state;
	assert_null(uxdp_null_create("opt-n", &no));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "rx_len"));
	/* A driver wraps the library's message in its own: the result is
	 * the two, whole, though the argument is the buffer written. */
	assert_int_equal(uxdp_set_error(EIO, "mydrv: %s (%d)", uxdp_errmsg(),
					7), -EIO);
	assert_int_equal(strncmp(uxdp_errmsg(), "mydrv: ", 7), 0);
	assert_non_null(strstr(uxdp_errmsg(), "rx_len"));
	assert_non_null(strstr(uxdp_errmsg(), " (7)"));
	no.rx_len = 64;
	no.rx_frames = (1U << 20) + 1;
	assert_null(uxdp_null_create("opt-n", &no));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_dev_get_by_name("opt-n"));
	assert_null(uxdp_map_create((1U << 20) + 1));
	assert_int_equal(errno, EINVAL);

	assert_int_equal(uxdp_dev_start(a->dev, &to), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "unknown flags"));
	to.flags = 0;
	to.budget = -1;
	assert_int_equal(uxdp_dev_start(a->dev, &to), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "budget"));
	to.budget = 0;
	assert_int_equal(uxdp_dev_start(a->dev, &to), 0);
	assert_int_equal(uxdp_dev_start(a->dev, &to), -EALREADY);
	uxdp_dev_stop(a->dev);
	t_tdev_destroy(a);
}

/* ---- counters by name (issue 7) ----------------------------------------- */

struct t_walk {
	unsigned int n[3];		/* rx, tx, pool */
	uint64_t rx_drop, rx_packets, pool_alloc;
	unsigned int stop_after;	/* 0: never */
};

static int t_walk_fn(void *arg, const struct uxdp_stat *s)
{
	struct t_walk *w = arg;
	unsigned int k = !strcmp(s->scope, "rx") ? 0 :
			 !strcmp(s->scope, "tx") ? 1 : 2;

	assert_true(!strcmp(s->scope, "rx") || !strcmp(s->scope, "tx") ||
		    !strcmp(s->scope, "pool"));
	assert_int_equal(s->queue, 0);
	assert_non_null(s->desc);
	assert_true(strlen(s->desc) > 5);
	w->n[k]++;
	if (k == 0 && !strcmp(s->name, "drop"))
		w->rx_drop = s->value;
	if (k == 0 && !strcmp(s->name, "packets"))
		w->rx_packets = s->value;
	if (k == 2 && !strcmp(s->name, "alloc"))
		w->pool_alloc = s->value;
	if (w->stop_after && w->n[0] + w->n[1] + w->n[2] == w->stop_after)
		return 42;
	return 0;
}

/*
 * Every counter of a device by name, in the structs' order: rx, tx, then
 * the pool the RX queue receives into; and a printer for them.
 */
static void test_stats_walk(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_count = 100);
	struct t_verdict v = { .verdict = UXDP_DROP };
	struct uxdp_prog *p = uxdp_prog_create("d", t_prog_verdict, &v);
	struct t_walk w = { { 0 } };
	struct uxdp_dev *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	d = uxdp_null_create("walk0", &no);
	assert_non_null(d);
	assert_int_equal(uxdp_dev_attach_prog(d, 0, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(d), 0);
	assert_int_equal(uxdp_dev_poll(d, 0, 64), 64);
	assert_int_equal(uxdp_dev_poll(d, 0, 64), 36);
	assert_int_equal(uxdp_dev_poll(d, 0, 64), 0);	/* count reached */
	assert_int_equal(uxdp_dev_stats_walk(d, t_walk_fn, &w), 0);
	assert_int_equal(w.n[0], sizeof(struct uxdp_rxq_stats) / 8);
	assert_int_equal(w.n[1], sizeof(struct uxdp_txq_stats) / 8);
	assert_int_equal(w.n[2], 12);
	assert_int_equal(w.rx_drop, 100);
	assert_int_equal(w.rx_packets, 100);
	assert_int_equal(w.pool_alloc, 100);
	memset(&w, 0, sizeof(w));
	w.stop_after = 3;
	assert_int_equal(uxdp_dev_stats_walk(d, t_walk_fn, &w), 42);
	assert_int_equal(w.n[0], 3);
	assert_int_equal(uxdp_dev_stats_walk(NULL, t_walk_fn, &w), -EINVAL);
	assert_int_equal(uxdp_dev_stats_walk(d, NULL, &w), -EINVAL);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(uxdp_dev_stats_print(d, f, 0), 0);
	fflush(f);
	assert_non_null(strstr(buf, "walk0/rx0 drop"));
	assert_non_null(strstr(buf, "walk0/pool0 alloc"));
	assert_null(strstr(buf, "redirect_miss"));	/* zero: left out */
	assert_int_equal(uxdp_dev_stats_print(d, f, UXDP_STATS_ALL |
					      UXDP_STATS_DESC), 0);
	fflush(f);
	assert_non_null(strstr(buf, "redirect_miss"));
	assert_non_null(strstr(buf, "frames received"));
	assert_int_equal(uxdp_dev_stats_print(d, f, 1U << 8), -EINVAL);
	fclose(f);
	free(buf);
	uxdp_dev_destroy(d);
}

/* ---- a driver that forgets uxdp_pool_set_rxq (issue 7, item 9) ---------- */

struct t_norxq {
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
};

static int t_norxq_poll(struct uxdp_dev *dev, uint32_t q,
			struct uxdp_xdp_cpu *cpu, int budget)
{
	struct t_norxq *t = *(struct t_norxq **)uxdp_dev_priv(dev);
	struct uxdp_buff *bufs[64];
	uint32_t n, i;

	n = uxdp_pool_alloc_batch(t->pool, bufs, budget < 64 ? budget : 64);
	for (i = 0; i < n; i++)
		uxdp_buff_set_size(bufs[i], 60);
	(void)q;
	uxdp_rx_run_batch(cpu, bufs, n);
	return (int)n;
}

static int t_norxq_xmit(struct uxdp_dev *dev, int n,
			struct uxdp_frame **frames, uint32_t flags)
{
	(void)dev, (void)n, (void)frames, (void)flags;
	return -ENXIO;
}

static const struct uxdp_dev_ops t_norxq_ops = {
	.kind = "norxq",
	.poll = t_norxq_poll,
	.xdp_xmit = t_norxq_xmit,
};

static char t_warned[512];

static int t_capture(enum uxdp_print_level level, const char *fmt,
		     va_list ap)
{
	if (level == UXDP_WARN)
		vsnprintf(t_warned, sizeof(t_warned), fmt, ap);
	return 0;
}

/*
 * Buffers handed up without their rxq used to crash the run loop (a NULL
 * dereference). Now the driver bug is reported once, with the fix, and
 * the packets are carried out as usual.
 */
static void test_driver_without_rxq(void **state)
{
	struct t_verdict v = { .verdict = UXDP_DROP };
	struct uxdp_prog *p = uxdp_prog_create("d", t_prog_verdict, &v);
	struct t_norxq t;
	struct uxdp_pool_stats ps;
	uxdp_print_fn_t old;
	struct uxdp_dev *d;

	(void)state;
	t.umem = uxdp_umem_create(NULL, 64 * 4096, NULL);
	assert_non_null(t.umem);
	t.pool = uxdp_pool_create(t.umem, NULL);
	assert_non_null(t.pool);
	assert_int_equal(uxdp_umem_fill_all(t.umem), 64);
	d = uxdp_dev_alloc("norxq0", &t_norxq_ops, 1, 1, sizeof(void *));
	assert_non_null(d);
	*(struct t_norxq **)uxdp_dev_priv(d) = &t;
	assert_int_equal(uxdp_dev_attach_prog(d, 0, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(d), 0);
	old = uxdp_set_print(t_capture);
	t_warned[0] = '\0';
	assert_int_equal(uxdp_dev_poll(d, 0, 32), 32);
	assert_non_null(strstr(t_warned, "uxdp_pool_set_rxq"));
	t_warned[0] = '\0';
	assert_int_equal(uxdp_dev_poll(d, 0, 32), 32);
	assert_string_equal(t_warned, "");	/* once per queue */
	uxdp_set_print(old);
	assert_int_equal(v.runs, 64);
	{
		struct uxdp_rxq_stats st;

		assert_int_equal(uxdp_dev_rxq_stats(d, 0, &st), 0);
		assert_int_equal(st.drop, 64);
	}
	assert_int_equal(uxdp_pool_stats(t.pool, &ps), 0);
	assert_int_equal(ps.outstanding, 0);
	uxdp_dev_destroy(d);
	assert_int_equal(uxdp_pool_destroy(t.pool), 0);
	assert_int_equal(uxdp_umem_destroy(t.umem), 0);
}

/* ---- the null generator's defaults (issue 7, item 3) -------------------- */

/* What a program saw of each generated packet. */
struct t_seen {
	uint32_t runs;
	uint32_t len_min, len_max;	/* data_end - data */
	uint32_t first_tmpl;		/* byte 0 was the template's */
	uint32_t first_mine;		/* byte 0 was this program's write */
	uint32_t body_bad;		/* bytes 1.. differ from the template */
	const uint8_t *tmpl;		/* NULL: do not compare */
	uint32_t tmpl_len;
	bool scribble;			/* overwrite byte 0 */
};

#define T_SCRIBBLE	0xee

static uint32_t t_prog_seen(struct uxdp_buff *ctx, void *priv)
{
	struct t_seen *s = priv;
	const uint8_t *d = ctx->data;
	uint32_t len = (uint32_t)((char *)ctx->data_end - (char *)ctx->data);

	if (!s->runs || len < s->len_min)
		s->len_min = len;
	if (len > s->len_max)
		s->len_max = len;
	s->runs++;
	if (s->tmpl && len >= s->tmpl_len) {
		if (d[0] == s->tmpl[0])
			s->first_tmpl++;
		else if (d[0] == T_SCRIBBLE)
			s->first_mine++;
		if (memcmp(d + 1, s->tmpl + 1, s->tmpl_len - 1))
			s->body_bad++;
	}
	if (s->scribble)
		((uint8_t *)ctx->data)[0] = T_SCRIBBLE;
	return UXDP_DROP;
}

static struct uxdp_dev *t_null_up(const char *name,
				  const struct uxdp_null_opts *o,
				  struct t_seen *s)
{
	struct uxdp_prog *p = uxdp_prog_create("seen", t_prog_seen, s);
	struct uxdp_dev *d = uxdp_null_create(name, o);

	if (!d)
		fail_msg("null %s: %s", name, uxdp_errmsg());
	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(d, 0, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(d), 0);
	return d;
}

static void t_tmpl_fill(uint8_t *t, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		t[i] = (uint8_t)(0x11 + 3 * i);
}

/* A 100-byte template gives 100-byte packets, with rx_len left at 0. */
static void test_null_len_from_template(void **state)
{
	uint8_t tmpl[100];
	UXDP_DECLARE_OPTS(uxdp_null_opts, o, .rx_template = tmpl,
			  .rx_template_len = sizeof(tmpl));
	struct t_seen s = { .tmpl = tmpl, .tmpl_len = sizeof(tmpl) };
	struct uxdp_dev *d;

	(void)state;
	t_tmpl_fill(tmpl, sizeof(tmpl));
	d = t_null_up("nlen0", &o, &s);
	assert_int_equal(uxdp_dev_poll(d, 0, 64), 64);
	assert_int_equal(s.runs, 64);
	assert_int_equal(s.len_min, 100);
	assert_int_equal(s.len_max, 100);
	assert_int_equal(s.first_tmpl, 64);
	assert_int_equal(s.body_bad, 0);
	assert_int_equal(t_rx_dev(d).bytes, 64 * 100);
	uxdp_dev_destroy(d);

	/* rx_len still overrides: cut to 60. */
	o.rx_len = 60;
	memset(&s, 0, sizeof(s));
	d = t_null_up("nlen1", &o, &s);
	assert_int_equal(uxdp_dev_poll(d, 0, 8), 8);
	assert_int_equal(s.len_min, 60);
	assert_int_equal(s.len_max, 60);
	uxdp_dev_destroy(d);
}

/* A template shorter than an Ethernet header is refused and named. */
static void test_null_short_template(void **state)
{
	uint8_t tmpl[14];
	UXDP_DECLARE_OPTS(uxdp_null_opts, o, .rx_template = tmpl,
			  .rx_template_len = 10);
	struct t_seen s = { 0 };
	struct uxdp_dev *d;

	(void)state;
	t_tmpl_fill(tmpl, sizeof(tmpl));
	errno = 0;
	assert_null(uxdp_null_create("nshort", &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "rx_template_len 10"));
	assert_null(uxdp_dev_get_by_name("nshort"));
	o.rx_template_len = 13;
	assert_null(uxdp_null_create("nshort", &o));
	assert_int_equal(errno, EINVAL);
	/* 14 bytes, the header alone, is a packet. */
	o.rx_template_len = 14;
	d = t_null_up("nshort", &o, &s);
	assert_int_equal(uxdp_dev_poll(d, 0, 4), 4);
	assert_int_equal(s.len_min, 14);
	assert_int_equal(s.len_max, 14);
	uxdp_dev_destroy(d);
}

/*
 * A program that writes byte 0 of every packet: with UXDP_NULL_F_REWRITE
 * every packet still starts with the template's byte; without it (null.h:
 * the template is written once per buffer) exactly the first use of each
 * of the rx_frames buffers does, every later one shows the program's own
 * earlier write.
 */
static void t_null_rewrite(uint32_t flags)
{
	/* Each poll takes every buffer: all are used, none twice. */
	enum { FRAMES = 8, POLLS = 40, BUDGET = FRAMES };
	uint8_t tmpl[64];
	UXDP_DECLARE_OPTS(uxdp_null_opts, o, .rx_template = tmpl,
			  .rx_template_len = sizeof(tmpl),
			  .rx_frames = FRAMES, .flags = flags);
	struct t_seen s = { .tmpl = tmpl, .tmpl_len = sizeof(tmpl),
			    .scribble = true };
	struct uxdp_dev *d;
	uint32_t i;

	t_tmpl_fill(tmpl, sizeof(tmpl));
	d = t_null_up(flags ? "nrw1" : "nrw0", &o, &s);
	for (i = 0; i < POLLS; i++)
		assert_int_equal(uxdp_dev_poll(d, 0, BUDGET), BUDGET);
	assert_int_equal(s.runs, POLLS * BUDGET);
	assert_int_equal(s.body_bad, 0);
	if (flags & UXDP_NULL_F_REWRITE) {
		assert_int_equal(s.first_tmpl, POLLS * BUDGET);
		assert_int_equal(s.first_mine, 0);
	} else {
		assert_int_equal(s.first_tmpl, FRAMES);
		assert_int_equal(s.first_mine, POLLS * BUDGET - FRAMES);
	}
	assert_int_equal(uxdp_dev_audit(d, NULL), 0);
	uxdp_dev_destroy(d);
}

static void test_null_rewrite(void **state)
{
	(void)state;
	t_null_rewrite(UXDP_NULL_F_REWRITE);
	t_null_rewrite(0);
}

static void t_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * rx_pps: polled as often as it likes for ~200 ms, the generator is never
 * ahead of the schedule (at most pps x elapsed, counted from before up)
 * and not far behind it (at least half, a loose bound for a busy machine).
 */
static void test_null_rate(void **state)
{
	const uint64_t pps = 5000;
	UXDP_DECLARE_OPTS(uxdp_null_opts, o, .rx_pps = pps);
	struct t_seen s = { 0 };
	uint64_t t0, t1, got = 0, cap, want;
	struct uxdp_dev *d;
	int r;

	(void)state;
	d = uxdp_null_create("nrate", &o);
	assert_non_null(d);
	{
		struct uxdp_prog *p = uxdp_prog_create("seen", t_prog_seen,
							&s);

		assert_int_equal(uxdp_dev_attach_prog(d, 0, p), 0);
		uxdp_prog_put(p);
	}
	t0 = t_now_ms();
	assert_int_equal(uxdp_dev_up(d), 0);
	/* Poll last, then read the clock: a stall in the sleep is caught
	 * up by the next poll (one burst holds the whole run), so only
	 * the moment between the last poll and t1 goes uncounted. */
	do {
		t_sleep_ms(1);
		do {	/* until nothing is due: a catch-up passes a budget */
			r = uxdp_dev_poll(d, 0, UXDP_NAPI_BUDGET);
			assert_true(r >= 0);
			got += (uint64_t)r;
		} while (r == UXDP_NAPI_BUDGET);
	} while (t_now_ms() - t0 < 200);
	t1 = t_now_ms();
	assert_int_equal(uxdp_null_generated(d), got);
	assert_int_equal(s.runs, got);
	/* +1 ms: t_now_ms() truncates both ends. */
	cap = pps * (t1 - t0 + 1) / 1000;
	want = pps * (t1 - t0) / 1000;
	if (got > cap || got < want / 2)
		fail_msg("%llu packets in %llu ms at %llu pps (want %llu, at "
			 "most %llu)", (unsigned long long)got,
			 (unsigned long long)(t1 - t0),
			 (unsigned long long)pps, (unsigned long long)want,
			 (unsigned long long)cap);
	uxdp_dev_destroy(d);
}

/* The pacer that null, pcap and nic share: what is due follows the rate
 * (t0 moved back by hand, so no sleeping decides the result), a backlog
 * is cut to one burst only when the poller commits, and the timer ticks
 * while started and not after stop. */
static void test_pacer(void **state)
{
	struct uxdp_pacer p, z;
	struct pollfd pfd;
	uint64_t due, t0;

	(void)state;
	assert_int_equal(uxdp_pacer_init(NULL, 1, 1), -EINVAL);

	/* Off: everything is due, no timer, every call harmless. */
	assert_int_equal(uxdp_pacer_init(&p, 0, 7), 0);
	assert_int_equal(p.fd, -1);
	assert_int_equal(uxdp_pacer_start(&p), 0);
	assert_true(uxdp_pacer_due(&p, true) == UINT64_MAX);
	uxdp_pacer_sent(&p, 5);
	uxdp_pacer_ack(&p);
	assert_int_equal(uxdp_pacer_fd(&p), -1);
	uxdp_pacer_stop(&p);
	uxdp_pacer_fini(&p);
	/* A zeroed pacer (a create that failed before init) owns nothing:
	 * its fd 0 is not a timer to wait on, nor one to close. */
	memset(&z, 0, sizeof(z));
	assert_int_equal(uxdp_pacer_fd(&z), -1);
	uxdp_pacer_fini(&z);
	assert_int_equal(z.fd, -1);

	/* 30 / 3 = 10 packets per second: slow enough that no delay of
	 * this thread below 100 ms moves a count. */
	assert_int_equal(uxdp_pacer_init(&p, 30, 3), 0);
	assert_true(p.fd >= 0);
	assert_int_equal(uxdp_pacer_fd(&p), p.fd);
	assert_int_equal(uxdp_pacer_start(&p), 0);
	p.t0 -= 25000000000ULL;			/* started 25 s ago */
	due = uxdp_pacer_due(&p, true);
	assert_true(due >= 250 && due <= 251);
	uxdp_pacer_sent(&p, 200);
	due = uxdp_pacer_due(&p, false);
	assert_true(due >= 50 && due <= 51);
	uxdp_pacer_sent(&p, due);
	assert_true(uxdp_pacer_due(&p, false) <= 1);
	/* Ahead of the clock (another thread's t0): nothing due. */
	p.t0 += 100000000000ULL;
	assert_int_equal(uxdp_pacer_due(&p, true), 0);

	/* A 200 s backlog (2000 packets): one burst. Asking leaves it; the
	 * poller's commit forgets the rest and restarts the clock. On a
	 * machine up for less than 225 s this t0 is before the clock's
	 * zero: still 225 s ago (it said "ahead" once, and failed here). */
	p.t0 -= 300000000000ULL;
	p.sent = 0;
	t0 = p.t0;
	assert_int_equal(uxdp_pacer_due(&p, false), UXDP_PACER_BURST);
	assert_int_equal(p.t0, t0);
	assert_int_equal(uxdp_pacer_due(&p, true), UXDP_PACER_BURST);
	assert_true(p.t0 > t0 + 190000000000ULL);
	assert_int_equal(p.sent, 0);
	assert_true(uxdp_pacer_due(&p, false) < UXDP_PACER_BURST);

	/* A t0 5 s before the clock's zero is in the past, whatever the
	 * machine's uptime: at 10^6 pps more than a burst is due. */
	p.t0 = 0ULL - 5000000000ULL;
	p.sent = 0;
	p.num = 1000000;
	p.den = 1;
	assert_int_equal(uxdp_pacer_due(&p, false), UXDP_PACER_BURST);
	p.num = 30;
	p.den = 3;

	/* The timer ticks (every 100 ms at 10 pps) until stopped. */
	pfd.fd = p.fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	uxdp_pacer_ack(&p);
	uxdp_pacer_stop(&p);
	uxdp_pacer_ack(&p);
	assert_int_equal(poll(&pfd, 1, 50), 0);
	uxdp_pacer_fini(&p);
	assert_int_equal(p.fd, -1);
}

/* A queue's own pool in one call: every chunk on the fill ring, the
 * queue's mem POOL, buffers that report the queue, a pool nobody owns
 * until a poller takes it; bad arguments refused with a reason. */
static void test_rxq_pool(void **state)
{
	struct t_tdev *t = t_tdev_create("rxqpool");
	struct uxdp_pool_stats st;
	struct uxdp_pool *pool;
	struct uxdp_buff *b[64];
	uint32_t n;

	(void)state;
	errno = 0;
	assert_null(uxdp_rxq_pool_create(NULL, 0, 64, 2048));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_rxq_pool_create(t->dev, 1, 64, 2048));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "no such queue"));
	assert_null(uxdp_rxq_pool_create(t->dev, 0, 0, 2048));
	assert_int_equal(errno, EINVAL);
	/* A bad chunk size is the UMEM's to refuse, and nothing leaks. */
	assert_null(uxdp_rxq_pool_create(t->dev, 0, 64, 1000));
	assert_int_equal(errno, EINVAL);
	assert_true(*uxdp_errmsg());
	assert_int_equal(uxdp_rxq_use_pool(NULL, 0, NULL), -EINVAL);
	assert_int_equal(uxdp_rxq_use_pool(t->dev, 0, NULL), -EINVAL);

	uxdp_dev_rxq_info(t->dev, 0)->mem.type = UXDP_MEM_FRAME;
	pool = uxdp_rxq_pool_create(t->dev, 0, 64, 2048);
	assert_non_null(pool);
	assert_int_equal(uxdp_rxq_use_pool(t->dev, 1, pool), -EINVAL);
	assert_int_equal(uxdp_dev_rxq_info(t->dev, 0)->mem.type,
			 UXDP_MEM_POOL);
	assert_false(uxdp_pool_is_owner(pool));
	assert_int_equal(uxdp_umem_chunk_size(uxdp_pool_umem(pool)), 2048);
	/* The poller's side: take it, and every chunk is there. */
	uxdp_pool_set_owner(pool);
	n = uxdp_pool_alloc_batch(pool, b, 64);
	assert_int_equal(n, 64);
	assert_int_equal(uxdp_pool_alloc_batch(pool, b, 1), 0);
	assert_ptr_equal(b[0]->rxq, uxdp_dev_rxq_info(t->dev, 0));
	assert_ptr_equal(b[63]->rxq, uxdp_dev_rxq_info(t->dev, 0));
	uxdp_pool_free_batch(pool, b, n);
	assert_int_equal(uxdp_pool_stats(pool, &st), 0);
	assert_int_equal(st.alloc, 64);
	assert_int_equal(st.bad_free, 0);
	uxdp_pool_retire(pool, UXDP_POOL_RETIRE_UMEM);
	t_tdev_destroy(t);
}

/* rx_count stops the generator at that count exactly, and NULL options
 * generate 64-byte packets without a limit. */
static void test_null_count_and_defaults(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, o, .rx_count = 1000,
			  .rx_frames = 16);
	struct t_seen s = { 0 };
	struct uxdp_dev *d;
	uint32_t total = 0, i;
	int r;

	(void)state;
	d = t_null_up("ncount", &o, &s);
	/* 7 does not divide 1000: the last poll is cut to 6. */
	while ((r = uxdp_dev_poll(d, 0, 7)) > 0) {
		assert_true(r == 7 || total + (uint32_t)r == 1000);
		total += (uint32_t)r;
	}
	assert_int_equal(r, 0);
	assert_int_equal(total, 1000);
	assert_int_equal(uxdp_dev_poll(d, 0, 64), 0);
	assert_int_equal(uxdp_null_generated(d), 1000);
	assert_int_equal(s.runs, 1000);
	assert_int_equal(t_rx_dev(d).packets, 1000);
	uxdp_dev_destroy(d);

	memset(&s, 0, sizeof(s));
	d = t_null_up("ndefault", NULL, &s);
	/* More than the 1024 buffers: they come back and go out again. */
	for (i = 0; i < 100; i++)
		assert_int_equal(uxdp_dev_poll(d, 0, 64), 64);
	assert_int_equal(uxdp_null_generated(d), 6400);
	assert_int_equal(s.runs, 6400);
	assert_int_equal(s.len_min, 64);
	assert_int_equal(s.len_max, 64);
	assert_int_equal(uxdp_dev_audit(d, NULL), 0);
	uxdp_dev_destroy(d);
}

/* ---- the audit can fail (issue 7, item 2) ------------------------------- */

static struct uxdp_pool *t_audit_rx_pool(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return (*(struct t_norxq **)uxdp_dev_priv(dev))->pool;
}

static const struct uxdp_dev_ops t_audit_ops = {
	.kind = "auditdev",
	.poll = t_norxq_poll,
	.xdp_xmit = t_norxq_xmit,
	.rx_pool = t_audit_rx_pool,
};

static void t_post(struct uxdp_ring *fill, uint64_t addr)
{
	uint32_t idx;

	assert_int_equal(uxdp_ring_prod_reserve(fill, 1, &idx), 1);
	*uxdp_ring_addr(fill, idx) = addr;
	uxdp_ring_prod_submit(fill, 1);
}

/*
 * uxdp_dev_audit() returns the misplaced chunks, not always 0: a chunk the
 * application never posted is in no place, one posted twice is in two.
 */
static void test_audit_finds_misplaced(void **state)
{
	enum { N = 64 };
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_frames = 32);
	struct uxdp_dev_audit a;
	struct uxdp_pool_stats ps;
	struct uxdp_ring *fill;
	struct uxdp_buff *b, *held[N];
	struct t_norxq t;
	struct uxdp_dev *d;
	uint32_t i;

	(void)state;
	t.umem = uxdp_umem_create(NULL, N * 4096, NULL);
	assert_non_null(t.umem);
	t.pool = uxdp_pool_create(t.umem, NULL);
	assert_non_null(t.pool);
	d = uxdp_dev_alloc("audit0", &t_audit_ops, 1, 1, sizeof(void *));
	assert_non_null(d);
	*(struct t_norxq **)uxdp_dev_priv(d) = &t;
	uxdp_pool_set_rxq(t.pool, uxdp_dev_rxq_info(d, 0));

	/* Chunk N - 1 kept back: found nowhere. */
	fill = uxdp_umem_fill_ring(t.umem);
	for (i = 0; i < N - 1; i++)
		t_post(fill, (uint64_t)i * 4096);
	memset(&a, 0xff, sizeof(a));
	assert_int_equal(uxdp_dev_audit(d, &a), 1);
	assert_int_equal(a.misplaced, 1);
	assert_int_equal(a.pools, 1);
	assert_int_equal(a.chunks, N);
	assert_int_equal(a.in_flight, 0);
	/* Posted: all home. One allocated is in flight, not misplaced. */
	t_post(fill, (uint64_t)(N - 1) * 4096);
	assert_int_equal(uxdp_dev_audit(d, &a), 0);
	assert_int_equal(a.misplaced, 0);
	b = uxdp_pool_alloc(t.pool);
	assert_non_null(b);
	assert_int_equal(uxdp_dev_audit(d, &a), 0);
	assert_int_equal(a.in_flight, 1);
	/* The allocated chunk posted again: in two places. */
	t_post(fill, uxdp_buff_chunk_addr(b));
	assert_int_equal(uxdp_dev_audit(d, &a), 1);
	assert_int_equal(a.misplaced, 1);
	/* The pool skips the duplicate when it reaches it: every other
	 * chunk can be allocated once, then nothing; whole again. */
	for (i = 0; i < N - 1; i++) {
		held[i] = uxdp_pool_alloc(t.pool);
		assert_non_null(held[i]);
	}
	assert_null(uxdp_pool_alloc(t.pool));
	for (i = 0; i < N - 1; i++)
		uxdp_buff_free(held[i]);
	uxdp_buff_free(b);
	assert_int_equal(uxdp_pool_stats(t.pool, &ps), 0);
	assert_int_equal(ps.fill_dup, 1);
	assert_int_equal(uxdp_dev_audit(d, &a), 0);
	assert_int_equal(a.in_flight, 0);
	uxdp_dev_destroy(d);
	assert_int_equal(uxdp_pool_destroy(t.pool), 0);
	assert_int_equal(uxdp_umem_destroy(t.umem), 0);

	/* A real driver: the null device's chunk 0 posted twice on the fill
	 * ring of its UMEM (the default ring holds 2048, room to spare). */
	d = uxdp_null_create("audit1", &no);
	assert_non_null(d);
	assert_int_equal(uxdp_dev_audit(d, &a), 0);
	assert_int_equal(a.chunks, 32);
	fill = uxdp_umem_fill_ring(uxdp_pool_umem(uxdp_dev_pool(d, 0)));
	t_post(fill, 0);
	assert_int_equal(uxdp_dev_audit(d, &a), 1);
	assert_int_equal(a.misplaced, 1);
	uxdp_dev_destroy(d);
}

/* ---- thread indices ---------------------------------------------------------- */

/*
 * A thread's index is its "CPU": its bulk queues, its per-CPU map slots,
 * its perf ring. Threads alive together have different ones; an exiting
 * thread's goes back for a later one; past UXDP_MAX_THREADS alive, a
 * thread may not transmit (-EMFILE), rather than share a live index.
 */
struct idx_wave {
	pthread_barrier_t *met;
	struct uxdp_dev *dev;
	uint32_t index;
	int xmit;		/* uxdp_dev_xmit of nothing: 0 or -EMFILE */
};

static void *idx_thread(void *arg)
{
	struct idx_wave *w = arg;

	w->xmit = uxdp_dev_xmit(w->dev, 0, NULL, 0);
	w->index = uxdp_thread_index();
	/* Every thread of the wave has its index before any exits. */
	pthread_barrier_wait(w->met);
	return NULL;
}

static void test_thread_indices(void **state)
{
	/* This thread holds one too (it polls in other tests). */
	enum { N = UXDP_MAX_THREADS - 1 };
	struct t_tdev *a = t_tdev_create("idx-a");
	static struct idx_wave w[N + 1];
	static pthread_t t[N + 1];
	pthread_barrier_t met;
	uint32_t mine = uxdp_thread_index(), round, i;

	(void)state;
	assert_true(mine < UXDP_MAX_THREADS);
	for (round = 0; round < 20; round++) {
		/* Waves of every size up to the limit; the last rounds one
		 * past it. */
		uint32_t n = round < 18 ? 1 + round * (N - 1) / 17 : N + 1;
		uint64_t seen = 1ULL << mine;
		uint32_t refused = 0;

		assert_int_equal(pthread_barrier_init(&met, NULL, n), 0);
		for (i = 0; i < n; i++) {
			w[i] = (struct idx_wave){ .met = &met, .dev = a->dev };
			assert_int_equal(pthread_create(&t[i], NULL, idx_thread,
							&w[i]), 0);
		}
		for (i = 0; i < n; i++)
			assert_int_equal(pthread_join(t[i], NULL), 0);
		pthread_barrier_destroy(&met);
		for (i = 0; i < n; i++) {
			if (w[i].xmit == -EMFILE) {
				refused++;
				continue;
			}
			assert_int_equal(w[i].xmit, 0);
			assert_true(w[i].index < UXDP_MAX_THREADS);
			if (seen & (1ULL << w[i].index))
				fail_msg("round %u, %u threads: index %u twice",
					 round, n, w[i].index);
			seen |= 1ULL << w[i].index;
		}
		/* Exactly the thread past the limit is refused. */
		assert_int_equal(refused, n > N ? n - N : 0);
	}
	assert_int_equal(uxdp_thread_index(), mine);
	t_tdev_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_drop_aborted_invalid),
		cmocka_unit_test(test_no_prog),
		cmocka_unit_test(test_tx_bulk_flush),
		cmocka_unit_test(test_bulk_size_setting),
		cmocka_unit_test(test_xmit_partial),
		cmocka_unit_test(test_xmit_negative),
		cmocka_unit_test(test_xmit_overcount),
		cmocka_unit_test(test_redirect_map),
		cmocka_unit_test(test_redirect_map_fallback),
		cmocka_unit_test(test_redirect_without_target),
		cmocka_unit_test(test_mixed_targets),
		cmocka_unit_test(test_frame_no_headroom),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_poll_and_xmit_errors),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_stats_walk),
		cmocka_unit_test(test_driver_without_rxq),
		cmocka_unit_test(test_null_len_from_template),
		cmocka_unit_test(test_null_short_template),
		cmocka_unit_test(test_null_rewrite),
		cmocka_unit_test(test_null_rate),
		cmocka_unit_test(test_pacer),
		cmocka_unit_test(test_rxq_pool),
		cmocka_unit_test(test_null_count_and_defaults),
		cmocka_unit_test(test_audit_finds_misplaced),
		cmocka_unit_test(test_thread_indices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
