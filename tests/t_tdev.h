/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "tdev": a scripted test driver. Its poll feeds buffers the test injected
 * to the program; its xdp_xmit returns what the test scripted (all, a
 * partial count, a negative errno) and keeps the frames it took, as a NIC's
 * TX ring would, until the test completes them. Every call is logged.
 */
#ifndef UXDP_T_TDEV_H
#define UXDP_T_TDEV_H

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#define T_TDEV_MAX	4096
#define T_TAKE_ALL	1000000

struct t_tdev {
	struct uxdp_dev *dev;
	/* Receive side: injected buffers, consumed by poll. */
	struct uxdp_buff *rx[T_TDEV_MAX];
	uint32_t rx_head, rx_tail;
	/* Transmit side: scripted returns, one per call; then T_TAKE_ALL. */
	int script[64];
	uint32_t nscript, script_pos;
	struct uxdp_frame *taken[T_TDEV_MAX];
	uint32_t ntaken;
	/* A buggy driver: report this many more frames than it took. */
	int overcount;
	struct {
		int n;
		uint32_t flags;
		int ret;
	} calls[T_TDEV_MAX];
	uint32_t ncalls;
};

static inline struct t_tdev *t_tdev_of(struct uxdp_dev *dev)
{
	return *(struct t_tdev **)uxdp_dev_priv(dev);
}

static int t_tdev_poll(struct uxdp_dev *dev, uint32_t q,
		       struct uxdp_xdp_cpu *cpu, int budget)
{
	struct t_tdev *t = t_tdev_of(dev);
	struct uxdp_rxq_info *info = uxdp_dev_rxq_info(dev, q);
	int done = 0;

	while (done < budget && t->rx_head != t->rx_tail) {
		struct uxdp_buff *b = t->rx[t->rx_head++ % T_TDEV_MAX];

		b->rxq = info;
		uxdp_rx_run(cpu, b);
		done++;
	}
	return done;
}

static int t_tdev_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
		       uint32_t flags)
{
	struct t_tdev *t = t_tdev_of(dev);
	int ret = t->script_pos < t->nscript ? t->script[t->script_pos++] :
		  T_TAKE_ALL;
	int i;

	if (flags & ~UXDP_XMIT_FLAGS_MASK)
		ret = -EINVAL;
	if (ret > n)
		ret = n;
	for (i = 0; i < ret; i++)
		t->taken[t->ntaken++] = frames[i];
	if (ret >= 0)
		ret += t->overcount;
	if (t->ncalls < T_TDEV_MAX) {
		t->calls[t->ncalls].n = n;
		t->calls[t->ncalls].flags = flags;
		t->calls[t->ncalls].ret = ret;
		t->ncalls++;
	}
	return ret;
}

static const struct uxdp_dev_ops t_tdev_ops = {
	.kind = "tdev",
	.poll = t_tdev_poll,
	.xdp_xmit = t_tdev_xmit,
};

/* A tdev named @name, up, whose rx buffers come from a pool (mem POOL). */
static inline struct t_tdev *t_tdev_create(const char *name)
{
	struct t_tdev *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->dev = uxdp_dev_alloc(name, &t_tdev_ops, 1, 1, sizeof(t));
	if (!t->dev)
		fail_msg("tdev %s: %s", name, uxdp_errmsg());
	*(struct t_tdev **)uxdp_dev_priv(t->dev) = t;
	uxdp_dev_rxq_info(t->dev, 0)->mem.type = UXDP_MEM_POOL;
	assert_int_equal(uxdp_dev_up(t->dev), 0);
	return t;
}

static inline void t_tdev_inject(struct t_tdev *t, struct uxdp_buff *b)
{
	t->rx[t->rx_tail++ % T_TDEV_MAX] = b;
}

/* Complete (return) every frame the device took; returns how many. */
static inline uint32_t t_tdev_complete(struct t_tdev *t)
{
	uint32_t n = t->ntaken;

	uxdp_frame_return_bulk(t->taken, n);
	t->ntaken = 0;
	return n;
}

static inline void t_tdev_destroy(struct t_tdev *t)
{
	t_tdev_complete(t);
	uxdp_dev_destroy(t->dev);
	free(t);
}

#endif /* UXDP_T_TDEV_H */
