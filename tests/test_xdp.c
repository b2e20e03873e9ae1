/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The xdp layer on its own: buffers to frames and back, returning memory to
 * its owner (pool, foreign thread, allocator; single and bulk), the helpers'
 * bounds, programs from functions and from shared objects, maps.
 */
#include "t_helpers.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <uxdp/uxdp.h>

#include "t_pool.h"

#define NCHUNKS 64

/* ---- frames ------------------------------------------------------------------ */

static void test_buff_to_frame(void **state)
{
	struct t_gen g;
	struct uxdp_buff *b, back;
	struct uxdp_frame *f;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	b = t_gen_buf(&g, 100, 7);
	assert_non_null(b);
	assert_int_equal(uxdp_adjust_meta(b, -8), 0);
	memset(b->data_meta, 0x5a, 8);
	f = uxdp_buff_to_frame(b);
	assert_non_null(f);
	assert_ptr_equal(f, b->data_hard_start);	/* in place */
	assert_ptr_equal(f->data, b->data);
	assert_int_equal(f->len, 100);
	assert_int_equal(f->metasize, 8);
	/* As the kernel: headroom counts the metadata too. */
	assert_int_equal(f->headroom,
			 UXDP_PACKET_HEADROOM - sizeof(struct uxdp_frame));
	assert_int_equal(f->frame_sz, b->frame_sz);
	assert_int_equal(f->mem.type, UXDP_MEM_POOL);
	assert_ptr_equal(f->mem.owner, b);	/* the head itself */

	memset(&back, 0, sizeof(back));
	uxdp_frame_to_buff(f, &back);
	assert_ptr_equal(back.data_hard_start, b->data_hard_start);
	assert_ptr_equal(back.data, b->data);
	assert_ptr_equal(back.data_end, b->data_end);
	assert_ptr_equal(back.data_meta, b->data_meta);
	assert_int_equal(((unsigned char *)back.data_meta)[7], 0x5a);
	uxdp_frame_return(f);
	t_gen_fini(&g);
}

static void test_frame_needs_room(void **state)
{
	struct t_gen g;
	struct uxdp_buff *b;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	b = t_gen_buf(&g, 64, 0);
	/* Headroom just too small for the header plus metadata. */
	b->data = (char *)b->data_hard_start + sizeof(struct uxdp_frame) + 3;
	b->data_meta = (char *)b->data - 4;
	assert_null(uxdp_buff_to_frame(b));
	b->data_meta = b->data;
	assert_non_null(uxdp_buff_to_frame(b));	/* exactly enough */
	uxdp_buff_set_size(b, 64);
	/* Tailroom: the end must stay clear of the last 320 bytes. */
	b->data_end = (char *)b->data_hard_start + b->frame_sz -
		      UXDP_FRAME_TAILROOM + 1;
	assert_null(uxdp_buff_to_frame(b));
	b->data_end = (char *)b->data_end - 1;
	assert_non_null(uxdp_buff_to_frame(b));
	uxdp_buff_free(b);
	t_gen_fini(&g);
}

/* A foreign thread returns frames: they go back through the remote path. */
struct t_ret_arg {
	struct uxdp_frame **frames;
	uint32_t n;
	bool bulk;
};

static void *t_return_thread(void *arg)
{
	struct t_ret_arg *a = arg;
	uint32_t i;

	if (a->bulk) {
		uxdp_frame_return_bulk(a->frames, a->n);
	} else {
		for (i = 0; i < a->n; i++)
			uxdp_frame_return(a->frames[i]);
	}
	return NULL;
}

static void test_return_from_other_thread(void **state)
{
	struct uxdp_frame *frames[40];
	struct uxdp_pool_stats st;
	struct t_ret_arg a = { frames, 40, true };
	struct t_gen g;
	pthread_t th;
	uint32_t i;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	for (i = 0; i < 40; i++)
		frames[i] = t_gen_frame(&g, 64, i);
	assert_int_equal(pthread_create(&th, NULL, t_return_thread, &a), 0);
	pthread_join(th, NULL);
	uxdp_pool_stats(g.pool, &st);
	assert_int_equal(st.remote_pending, 40);
	assert_int_equal(st.outstanding, 40);

	for (i = 0; i < 10; i++)
		frames[i] = t_gen_frame(&g, 64, i);
	a.n = 10;
	a.bulk = false;
	assert_int_equal(pthread_create(&th, NULL, t_return_thread, &a), 0);
	pthread_join(th, NULL);
	t_gen_fini(&g);		/* audit picks up all 50; outstanding 0 */
}

/* Allocator memory: free() gets the hard start, once per frame. */
struct t_alloc {
	struct uxdp_mem_allocator a;
	void *freed[64];
	uint32_t nfreed;
};

static void t_alloc_free(struct uxdp_mem_allocator *a, void *hard_start)
{
	struct t_alloc *t = (struct t_alloc *)a;

	t->freed[t->nfreed++] = hard_start;
}

static void test_return_to_allocator_and_bulk_mix(void **state)
{
	static char bufs[4][2048] __attribute__((aligned(64)));
	struct t_alloc alloc = { .a.free = t_alloc_free };
	struct uxdp_rxq_info rxq = {
		.mem = { .type = UXDP_MEM_ALLOC, .owner = &alloc.a },
	};
	struct uxdp_frame *mix[12];
	struct t_gen g1, g2;
	struct uxdp_buff b;
	uint32_t i;

	(void)state;
	t_gen_init(&g1, NCHUNKS);
	t_gen_init(&g2, NCHUNKS);
	for (i = 0; i < 4; i++) {
		memset(&b, 0, sizeof(b));
		b.data_hard_start = bufs[i];
		b.frame_sz = sizeof(bufs[i]);
		b.rxq = &rxq;
		uxdp_buff_set_size(&b, 60);
		mix[i * 3] = uxdp_buff_to_frame(&b);
		assert_non_null(mix[i * 3]);
		mix[i * 3 + 1] = t_gen_frame(&g1, 64, i);
		mix[i * 3 + 2] = t_gen_frame(i & 1 ? &g2 : &g1, 64, i);
	}
	uxdp_frame_return_bulk(mix, 12);
	assert_int_equal(alloc.nfreed, 4);
	for (i = 0; i < 4; i++)
		assert_ptr_equal(alloc.freed[i], bufs[i]);

	/* A buff that never became a frame, allocator memory. */
	memset(&b, 0, sizeof(b));
	b.data_hard_start = bufs[0];
	b.frame_sz = sizeof(bufs[0]);
	b.rxq = &rxq;
	uxdp_buff_set_size(&b, 60);
	uxdp_buff_return(&b);
	assert_int_equal(alloc.nfreed, 5);
	t_gen_fini(&g1);	/* 6 frames from g1, 2 from g2: all back */
	t_gen_fini(&g2);
}

/* ---- helpers ------------------------------------------------------------------ */

static void test_adjust_head(void **state)
{
	struct t_gen g;
	struct uxdp_buff *b;
	char *data0;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	b = t_gen_buf(&g, 64, 0);
	data0 = b->data;
	assert_int_equal(uxdp_adjust_meta(b, -4), 0);
	memcpy(b->data_meta, "META", 4);

	/* Grow at the front: metadata moves along. */
	assert_int_equal(uxdp_adjust_head(b, -20), 0);
	assert_ptr_equal(b->data, data0 - 20);
	assert_memory_equal(b->data_meta, "META", 4);
	assert_int_equal(uxdp_buff_len(b), 84);
	/* Shrink down to exactly 14 bytes of packet. */
	assert_int_equal(uxdp_adjust_head(b, 84 - 14), 0);
	assert_int_equal(uxdp_buff_len(b), 14);
	assert_int_equal(uxdp_adjust_head(b, 1), -EINVAL);
	/* The front limit: frame header + metadata must still fit. */
	uxdp_buff_set_size(b, 64);
	assert_int_equal(uxdp_adjust_head(b, -(int)(UXDP_PACKET_HEADROOM -
					sizeof(struct uxdp_frame))), 0);
	assert_int_equal(uxdp_adjust_head(b, -1), -EINVAL);
	uxdp_buff_set_size(b, 64);
	assert_int_equal(uxdp_adjust_meta(b, -8), 0);
	assert_int_equal(uxdp_adjust_head(b, -(int)(UXDP_PACKET_HEADROOM -
					sizeof(struct uxdp_frame)) + 7), -EINVAL);
	assert_int_equal(uxdp_adjust_head(b, -(int)(UXDP_PACKET_HEADROOM -
					sizeof(struct uxdp_frame)) + 8), 0);
	/* Unsupported metadata (data_meta == data + 1) stays unsupported,
	 * whichever way the head moves. */
	uxdp_buff_set_size(b, 64);
	b->data_meta = (char *)b->data + 1;
	assert_int_equal(uxdp_adjust_head(b, -10), 0);
	assert_ptr_equal(b->data_meta, (char *)b->data + 1);
	assert_int_equal(uxdp_adjust_head(b, 30), 0);
	assert_ptr_equal(b->data_meta, (char *)b->data + 1);
	uxdp_buff_free(b);
	t_gen_fini(&g);
}

static void test_adjust_tail(void **state)
{
	struct t_gen g;
	struct uxdp_buff *b;
	int room;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	b = t_gen_buf(&g, 64, 0);
	memset((char *)b->data_end, 0xee, 32);
	assert_int_equal(uxdp_adjust_tail(b, 32), 0);
	assert_int_equal(uxdp_buff_len(b), 96);
	assert_int_equal(((unsigned char *)b->data)[95], 0);	/* zeroed */
	assert_int_equal(uxdp_adjust_tail(b, -82), 0);
	assert_int_equal(uxdp_buff_len(b), 14);
	assert_int_equal(uxdp_adjust_tail(b, -1), -EINVAL);
	room = (int)((char *)b->data_hard_start + b->frame_sz -
		     UXDP_FRAME_TAILROOM - (char *)b->data_end);
	assert_int_equal(uxdp_adjust_tail(b, room + 1), -EINVAL);
	assert_int_equal(uxdp_adjust_tail(b, room), 0);
	uxdp_buff_free(b);
	t_gen_fini(&g);
}

static void test_adjust_meta(void **state)
{
	struct t_gen g;
	struct uxdp_buff *b;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	b = t_gen_buf(&g, 64, 0);
	assert_int_equal(uxdp_adjust_meta(b, -3), -EACCES);	/* not x4 */
	assert_int_equal(uxdp_adjust_meta(b, 4), -EINVAL);	/* past data */
	/* Up to the frame header at the buffer's start: 208 bytes here. */
	assert_int_equal(uxdp_adjust_meta(b, -208), 0);
	assert_int_equal(uxdp_adjust_meta(b, 208), 0);
	assert_int_equal(uxdp_adjust_meta(b, -212), -EINVAL);
	/* With the packet moved back, more than 252 bytes is refused. */
	assert_int_equal(uxdp_adjust_head(b, 48), 0);
	assert_int_equal(uxdp_adjust_meta(b, -252), 0);
	assert_int_equal(uxdp_adjust_meta(b, 252), 0);
	assert_int_equal(uxdp_adjust_meta(b, -256), -EACCES);
	/* Not past the frame header at the buffer's start. */
	uxdp_buff_set_size(b, 64);
	assert_int_equal(uxdp_adjust_head(b, -150), 0);
	assert_int_equal(uxdp_adjust_meta(b, -100), -EINVAL);
	assert_int_equal(uxdp_adjust_meta(b, -56), 0);
	assert_int_equal(uxdp_adjust_meta(b, -4), -EINVAL);
	b->data_meta = (char *)b->data + 1;
	assert_int_equal(uxdp_adjust_meta(b, -4), -EOPNOTSUPP);
	uxdp_buff_free(b);
	t_gen_fini(&g);
}

/* ---- programs ---------------------------------------------------------------- */

static uint32_t t_prog_pass(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return priv ? UXDP_TX : UXDP_PASS;
}

static void test_prog_create_and_refs(void **state)
{
	struct uxdp_prog *p = uxdp_prog_create("a-very-long-program-name", t_prog_pass,
					       (void *)1);
	struct uxdp_buff b;

	(void)state;
	assert_non_null(p);
	assert_string_equal(uxdp_prog_name(p), "a-very-long-program-name");
	memset(&b, 0, sizeof(b));
	assert_int_equal(uxdp_prog_run(p, &b), UXDP_TX);
	assert_ptr_equal(uxdp_prog_get(p), p);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_prog_run(p, &b), UXDP_TX);	/* still alive */
	uxdp_prog_put(p);
	uxdp_prog_put(NULL);
}

static void test_prog_load(void **state)
{
	struct uxdp_prog *p;
	struct t_gen g;
	struct uxdp_buff *b;
	uint64_t v;

	(void)state;
	t_gen_init(&g, NCHUNKS);
	p = uxdp_prog_load(T_PROGS_SO, "count", "start=100");
	if (!p)
		fail_msg("load: %s", uxdp_errmsg());
	assert_string_equal(uxdp_prog_name(p), "count");
	b = t_gen_buf(&g, 64, 0);
	assert_int_equal(uxdp_prog_run(p, b), UXDP_PASS);
	assert_int_equal(uxdp_prog_run(p, b), UXDP_PASS);
	memcpy(&v, (char *)b->data + 14, sizeof(v));
	assert_int_equal(v, 102);
	uxdp_prog_put(p);	/* fini frees priv: ASan would see a leak */

	p = uxdp_prog_load(T_PROGS_SO, "drop", NULL);
	assert_non_null(p);
	assert_int_equal(uxdp_prog_run(p, b), UXDP_DROP);
	uxdp_prog_put(p);

	/* Errors say what is missing. */
	assert_null(uxdp_prog_load(T_PROGS_SO, "nosuch", NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(uxdp_errmsg(), "uxdp_prog_nosuch"));
	assert_null(uxdp_prog_load("/nonexistent/progs.so", "count", NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(uxdp_errmsg(), "cannot load"));
	assert_null(uxdp_prog_load(T_PROGS_SO, "count", "bogus"));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "refused"));
	assert_null(uxdp_prog_load(NULL, "count", NULL));
	uxdp_buff_free(b);
	t_gen_fini(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buff_to_frame),
		cmocka_unit_test(test_frame_needs_room),
		cmocka_unit_test(test_return_from_other_thread),
		cmocka_unit_test(test_return_to_allocator_and_bulk_mix),
		cmocka_unit_test(test_adjust_head),
		cmocka_unit_test(test_adjust_tail),
		cmocka_unit_test(test_adjust_meta),
		cmocka_unit_test(test_prog_create_and_refs),
		cmocka_unit_test(test_prog_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
