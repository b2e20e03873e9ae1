/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * null: a generator on receive, a sink on transmit (include/uxdp/null.h).
 *
 * Receive refills from the device's own pool with uxdp_pool_alloc_batch()
 * and uxdp_buff_set_size(), as a zero-copy driver does, and runs the
 * program on each buffer. The packet bytes are written once per chunk at
 * create time and not rewritten: like the kernel's live-frames generator
 * (net/bpf/test_run.c), a program that changes a packet changes it for the
 * next use of that buffer too.
 */
#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>

#include <uxdp/dev.h>
#include <uxdp/null.h>
#include <uxdp/pool.h>
#include <uxdp/umem.h>

#include "../dev/dev_internal.h"
#include "../xdp/xdp_internal.h"

#define NULL_CHUNK	2048
#define NULL_MAX_LEN	1500

struct null_priv {
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	uint32_t rx_len;
	struct uxdp_spinlock tx_lock;
};

static inline struct null_priv *null_priv(const struct uxdp_dev *dev)
{
	return dev_priv(dev);
}

static int null_poll(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *cpu,
		     int budget)
{
	struct null_priv *priv = null_priv(dev);
	struct uxdp_xdp_rxq *rxq = dev_xdp_rxq(dev, q);
	struct uxdp_buff *bufs[UXDP_NAPI_BUDGET];
	int done = 0;

	if (!priv->pool)
		return 0;
	/* The pool belongs to the thread that polls this queue. */
	if (unlikely(!uxdp_pool_is_owner(priv->pool)))
		uxdp_pool_set_owner(priv->pool);
	while (done < budget) {
		uint32_t want = (uint32_t)(budget - done), n, i;

		if (want > UXDP_NAPI_BUDGET)
			want = UXDP_NAPI_BUDGET;
		n = uxdp_pool_alloc_batch(priv->pool, bufs, want);
		if (!n)
			break;		/* every buffer is in flight */
		for (i = 0; i < n; i++)
			uxdp_buff_set_size(bufs[i], priv->rx_len);
		uxdp_xdp_run_batch(cpu, rxq, bufs, n);
		done += (int)n;
	}
	return done;
}

static bool null_rx_pending(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return null_priv(dev)->pool != NULL;
}

static int null_xdp_xmit(struct uxdp_dev *dev, int n,
			 struct uxdp_frame **frames, uint32_t flags)
{
	struct null_priv *priv = null_priv(dev);
	struct uxdp_txq_stats *st = dev_txq_stats(dev, 0);
	uint64_t bytes = 0;
	int i;

	if (unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		__atomic_fetch_add(&st->bad_flags, 1, __ATOMIC_RELAXED);
		return -EINVAL;
	}
	if (unlikely(!dev_is_up(dev))) {
		__atomic_fetch_add(&st->down, (uint64_t)n, __ATOMIC_RELAXED);
		return -ENETDOWN;
	}
	for (i = 0; i < n; i++)
		bytes += frames[i]->len;
	/* The TX queue lock a driver takes to post descriptors. */
	uxdp_spin_lock(&priv->tx_lock);
	__atomic_store_n(&st->packets, st->packets + (uint64_t)n,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&st->bytes, st->bytes + bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&st->xmit_calls, st->xmit_calls + 1,
			 __ATOMIC_RELAXED);
	uxdp_spin_unlock(&priv->tx_lock);
	/* Sent and completed at once: the frames go home. */
	uxdp_frame_return_bulk(frames, (uint32_t)n);
	return n;
}

static void null_destroy(struct uxdp_dev *dev)
{
	struct null_priv *priv = null_priv(dev);

	if (priv->pool && uxdp_pool_destroy(priv->pool))
		uxdp_pr(UXDP_WARN, "null %s: %s: leaking its buffers\n",
			uxdp_dev_name(dev), uxdp_errmsg());
	else if (priv->umem)
		uxdp_umem_destroy(priv->umem);
}

static const struct uxdp_dev_ops null_ops = {
	.kind = "null",
	.poll = null_poll,
	.rx_pending = null_rx_pending,
	.xdp_xmit = null_xdp_xmit,
	.destroy = null_destroy,
};

/* 64 bytes of Ethernet/IPv4/UDP between locally administered MACs. */
static const unsigned char default_pkt[64] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x32, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
	0x04, 0x00, 0x04, 0x01, 0x00, 0x1e, 0x00, 0x00,
};

static int null_setup_rx(struct uxdp_dev *dev, uint32_t frames,
			 const void *tmpl, uint32_t tlen)
{
	struct null_priv *priv = null_priv(dev);
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = NULL_CHUNK);
	struct uxdp_xdp_rxq *rxq = dev_xdp_rxq(dev, 0);
	struct uxdp_ring *fill;
	uint32_t i, idx, fsize = 1;
	char *area;

	while (fsize < frames)
		fsize <<= 1;
	uo.fill_size = fsize;
	priv->umem = uxdp_umem_create(NULL, (uint64_t)frames * NULL_CHUNK, &uo);
	if (!priv->umem)
		return -errno;
	priv->pool = uxdp_pool_create(priv->umem, NULL);
	if (!priv->pool)
		return -errno;
	/* Receive buffers are the pool's heads: mem POOL, owner "self". */
	rxq->info.mem.type = UXDP_MEM_POOL;
	rxq->info.mem.owner = NULL;
	uxdp_pool_set_rxq(priv->pool, &rxq->info);

	area = uxdp_umem_area(priv->umem);
	fill = uxdp_umem_fill_ring(priv->umem);
	uxdp_ring_prod_reserve(fill, frames, &idx);
	for (i = 0; i < frames; i++) {
		char *data = area + (uint64_t)i * NULL_CHUNK +
			     UXDP_PACKET_HEADROOM;

		memset(data, 0, priv->rx_len);
		memcpy(data, tmpl, MIN(tlen, priv->rx_len));
		*uxdp_ring_addr(fill, idx + i) = (uint64_t)i * NULL_CHUNK;
	}
	uxdp_ring_prod_submit(fill, frames);
	return 0;
}

UXDP_EXPORT __cold struct uxdp_dev *
uxdp_null_create(const char *name, const struct uxdp_null_opts *opts)
{
	const void *tmpl;
	uint32_t frames, len, tlen;
	struct uxdp_dev *dev;
	int err;

	uxdp_clear_err();
	if (!UXDP_OPTS_VALID(opts, uxdp_null_opts)) {
		errno = EINVAL;
		return NULL;
	}
	frames = UXDP_OPTS_GET(opts, rx_frames, 0);
	len = UXDP_OPTS_GET(opts, rx_len, 64);
	tmpl = UXDP_OPTS_GET(opts, rx_template, NULL);
	tlen = UXDP_OPTS_GET(opts, rx_template_len, 0);
	if (!tmpl) {
		tmpl = default_pkt;
		tlen = sizeof(default_pkt);
	}
	if (len < 14 || len > NULL_MAX_LEN || frames > (1U << 20)) {
		errno = -uxdp_fail(EINVAL, "null: rx_len %u (14..%d) or "
				   "rx_frames %u (<= 2^20) out of range",
				   len, NULL_MAX_LEN, frames);
		return NULL;
	}
	dev = uxdp_dev_alloc(name, &null_ops, 1, 1, sizeof(struct null_priv));
	if (!dev)
		return NULL;
	null_priv(dev)->rx_len = len;
	if (frames) {
		err = null_setup_rx(dev, frames, tmpl, tlen);
		if (err) {
			char msg[256];

			snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
			uxdp_dev_destroy(dev);
			errno = -uxdp_fail(-err, "null %s: %s", name, msg);
			return NULL;
		}
	}
	return dev;
}
