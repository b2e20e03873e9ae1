/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One socket's application: the rxdrop, txonly and l2fwd loops
 * (xsk_app.h). The loops have the shape of xdpsock's: per step one peek
 * of up to a batch, one reserve of as many on the ring the entries go to,
 * a write per entry, one submit and one release. Per packet rxdrop does
 * a descriptor read, an AND and a store; nothing else unless asked
 * (--touch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xsk_app.h"

const char *const xsk_app_stat_names[XSK_APP_NSTATS] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_submitted",
	"rx_empty_polls", "fill_wakeups", "tx_kicks", "tx_eagain",
	"tx_errors", "fill_starved", "fill_full", "tx_full", "sleeps",
};

/* The application's own places in an audit, beside UXDP_LOC_*. */
#define LOC_APP		UXDP_LOC_APP	/* its own free chunks */
#define LOC_RX		UXDP_LOC_OTHER	/* its RX ring, not read */
#define LOC_TX		(1U << 6)	/* its TX ring, not consumed */

/*
 * A counter of the application's: only its thread writes it, others read
 * it while it runs, so the store is atomic (relaxed: a counter orders
 * nothing); the writer's own read of it needs no atomic.
 */
#define STAT_ADD(a, field, n) \
	__atomic_store_n(&(a)->st.field, (a)->st.field + (n), __ATOMIC_RELAXED)

/* ---- the packet txonly sends --------------------------------------------- */

static uint16_t ip_csum(const unsigned char *p, unsigned int len)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Ethernet/IPv4/UDP, @len bytes (42 or more), between the addresses the
 * null generator uses (02:00:00:00:00:01 -> :02, 192.0.2.1 -> .2, UDP
 * 1024 -> 1025), zero payload, no UDP checksum (allowed over IPv4).
 */
static void build_packet(unsigned char *p, uint32_t len)
{
	static const unsigned char eth[14] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x08, 0x00,
	};
	static const unsigned char addrs[8] = { 192, 0, 2, 1, 192, 0, 2, 2 };
	static const unsigned char ports[4] = { 0x04, 0x00, 0x04, 0x01 };
	unsigned char *ip = p + 14, *udp = p + 34;
	uint32_t ip_len = len - 14, udp_len = len - 34;
	uint16_t c;

	memset(p, 0, len);
	memcpy(p, eth, sizeof(eth));
	ip[0] = 0x45;
	ip[2] = (unsigned char)(ip_len >> 8);
	ip[3] = (unsigned char)ip_len;
	ip[6] = 0x40;			/* don't fragment */
	ip[8] = 64;			/* TTL */
	ip[9] = 17;			/* UDP */
	memcpy(ip + 12, addrs, sizeof(addrs));
	c = ip_csum(ip, 20);
	ip[10] = (unsigned char)(c >> 8);
	ip[11] = (unsigned char)c;
	memcpy(udp, ports, sizeof(ports));
	udp[4] = (unsigned char)(udp_len >> 8);
	udp[5] = (unsigned char)udp_len;
}

/* ---- set-up -------------------------------------------------------------- */

static void app_free_all(struct xsk_app *a)
{
	if (a->xsk)
		uxdp_xsk_destroy(a->xsk);
	if (a->umem)
		uxdp_umem_destroy(a->umem);
	free(a->free);
	a->xsk = NULL;
	a->umem = NULL;
	a->free = NULL;
}

int xsk_app_init(struct xsk_app *a, const struct xsk_app_cfg *cfg,
		 struct uxdp_dev *dev, uint32_t queue)
{
	/* THP: the driver writes all over the UMEM (zero-copy), and huge
	 * pages spare it the TLB misses (a best effort, never a failure). */
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = cfg->frame_size,
			  .flags = UXDP_UMEM_F_THP |
				   (cfg->unaligned ? UXDP_UMEM_F_UNALIGNED : 0));
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo, .rx_size = cfg->ring_size,
			  .tx_size = cfg->ring_size, .flags = cfg->bind_flags);
	uint32_t i, idx, n;
	int err;

	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	/* As xdpsock: rxdrop has no TX ring, txonly no RX ring. */
	if (cfg->mode == XSK_APP_RXDROP)
		xo.flags |= UXDP_XSK_F_NO_TX;
	else if (cfg->mode == XSK_APP_TXONLY)
		xo.flags |= UXDP_XSK_F_NO_RX;
	a->free = malloc((size_t)cfg->frames * sizeof(*a->free));
	if (!a->free)
		return -ENOMEM;
	a->umem = uxdp_umem_create(NULL, (uint64_t)cfg->frames *
				   cfg->frame_size, &uo);
	if (!a->umem) {
		err = -errno;
		goto fail;
	}
	a->xsk = uxdp_xsk_create(a->umem, dev, queue, &xo);
	if (!a->xsk) {
		err = -errno;
		goto fail;
	}
	a->rx = uxdp_xsk_rx_ring(a->xsk);
	a->tx = uxdp_xsk_tx_ring(a->xsk);
	a->fill = uxdp_xsk_fill_ring(a->xsk);
	a->comp = uxdp_xsk_comp_ring(a->xsk);
	a->area = uxdp_umem_area(a->umem);
	a->base_mask = cfg->unaligned ? UXDP_UNALIGNED_BUF_ADDR_MASK :
		       ~(uint64_t)(cfg->frame_size - 1);
	/* Empty rings: all their slots are free. */
	a->fill_size = uxdp_ring_prod_nb_free(a->fill, UINT32_MAX);
	if (a->tx)
		a->tx_size = uxdp_ring_prod_nb_free(a->tx, UINT32_MAX);
	/* Every chunk at a multiple of the frame size, in unaligned mode
	 * too (the mode changes the addresses' encoding, not the places). */
	for (i = 0; i < cfg->frames; i++)
		a->free[i] = (uint64_t)(cfg->frames - 1 - i) * cfg->frame_size;
	a->nfree = cfg->frames;
	if (cfg->mode == XSK_APP_TXONLY) {
		for (i = 0; i < cfg->frames; i++)
			build_packet(a->area + (uint64_t)i * cfg->frame_size,
				     cfg->tx_len);
		a->tx_left = cfg->tx_count;
		return 0;
	}
	/* Receive: every chunk the fill ring takes goes on it (all of
	 * them: its default size holds the whole UMEM). */
	n = uxdp_ring_prod_reserve_batch(a->fill, a->nfree, &idx);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(a->fill, idx + i) = a->free[--a->nfree];
	uxdp_ring_prod_submit(a->fill, n);
	return 0;
fail:
	{
		/* The undoing must not lose the reason. */
		char why[256];

		snprintf(why, sizeof(why), "%s", uxdp_errmsg());
		app_free_all(a);
		if (*why)
			uxdp_set_error(-err, "%s", why);
	}
	return err;
}

int xsk_app_fini(struct xsk_app *a)
{
	int err = 0;

	if (a->xsk)
		err = uxdp_xsk_destroy(a->xsk);
	a->xsk = NULL;
	if (!err && a->umem)
		err = uxdp_umem_destroy(a->umem);
	if (!err)
		a->umem = NULL;
	free(a->free);
	a->free = NULL;
	return err;
}

/* ---- the wake-ups -------------------------------------------------------- */

static inline bool need_wakeup(const struct xsk_app *a)
{
	return a->cfg.bind_flags & UXDP_XSK_F_NEED_WAKEUP;
}

/* The fill ring says the driver stopped for want of entries: kick it. */
static inline void kick_fill(struct xsk_app *a)
{
	if (need_wakeup(a) && uxdp_ring_needs_wakeup(a->fill)) {
		uxdp_xsk_recvfrom(a->xsk);
		STAT_ADD(a, fill_wakeups, 1);
	}
}

/* Transmit (copy mode) or wake the driver (zero-copy), when the TX ring
 * asks for it; without need_wakeup, always. */
static inline void kick_tx(struct xsk_app *a)
{
	int err;

	if (need_wakeup(a) && !uxdp_ring_needs_wakeup(a->tx))
		return;
	err = uxdp_xsk_sendto(a->xsk);
	STAT_ADD(a, tx_kicks, 1);
	if (err == -EAGAIN)
		STAT_ADD(a, tx_eagain, 1);
	else if (err)
		STAT_ADD(a, tx_errors, 1);
}

/*
 * --poll, nothing received: sleep on the socket's wake-up fd until
 * entries reach the RX ring (armed first, then the ring looked at once
 * more, so no wake-up is lost), the run stops, or @timeout_ms passes.
 */
static void wait_rx(struct xsk_app *a, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = uxdp_xsk_fd(a->xsk), .events = POLLIN },
		{ .fd = a->cfg.stop_fd, .events = POLLIN },
	};
	uint64_t v;

	uxdp_xsk_arm(a->xsk);
	if (uxdp_ring_cons_nb_avail(a->rx, 1))
		return;
	if (timeout_ms < 0 && a->cfg.stop_fd < 0)
		timeout_ms = 100;
	STAT_ADD(a, sleeps, 1);
	if (poll(pfd, a->cfg.stop_fd >= 0 ? 2 : 1, timeout_ms) > 0 &&
	    read(pfd[0].fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: woken by the stop fd. */
	}
}

/* The RX ring was empty. */
static void rx_idle(struct xsk_app *a)
{
	STAT_ADD(a, rx_empty_polls, 1);
	kick_fill(a);
	/* Nothing on the fill ring and nothing to put there: the device
	 * has nowhere to receive to (in l2fwd: every chunk is out on TX). */
	if (!a->nfree &&
	    uxdp_ring_prod_nb_free(a->fill, a->fill_size) == a->fill_size)
		STAT_ADD(a, fill_starved, 1);
	if (a->cfg.poll)
		/* With transmits out, completions come back unannounced:
		 * look again soon. */
		wait_rx(a, a->outstanding ? 1 : -1);
}

/* Relaxed: the flag orders nothing; whoever set it joins the thread
 * before looking at what the loop left. */
static inline bool stopping(const uint32_t *stop)
{
	return __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/* ---- rxdrop -------------------------------------------------------------- */

static void rx_drop(struct xsk_app *a, const uint32_t *stop)
{
	uint32_t idx_rx, idx_fq, n, i;
	uint64_t bytes = 0;

	n = uxdp_ring_cons_peek(a->rx, a->cfg.batch, &idx_rx);
	if (!n) {
		rx_idle(a);
		return;
	}
	while (uxdp_ring_prod_reserve(a->fill, n, &idx_fq) != n) {
		STAT_ADD(a, fill_full, 1);
		kick_fill(a);
		if (stopping(stop)) {
			uxdp_ring_cons_cancel(a->rx, n);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(a->rx, idx_rx + i);

		if (a->cfg.touch)
			(void)*(volatile const unsigned char *)
				uxdp_umem_addr_ptr(a->area, d->addr);
		bytes += d->len;
		*uxdp_ring_addr(a->fill, idx_fq + i) = d->addr & a->base_mask;
	}
	/*
	 * The RX slots first, then the fill entries: a driver that took a
	 * chunk the moment it was posted could otherwise find the RX ring
	 * still full of the entries just read, and drop (rx_ring_full) with
	 * no more chunks out than the ring holds.
	 */
	uxdp_ring_cons_release(a->rx, n);
	uxdp_ring_prod_submit(a->fill, n);
	STAT_ADD(a, rx_packets, n);
	STAT_ADD(a, rx_bytes, bytes);
}

/* ---- txonly -------------------------------------------------------------- */

/* Completed chunks back on the stack. */
static void tx_only_complete(struct xsk_app *a)
{
	uint32_t idx, n, i;

	if (!a->outstanding)
		return;
	kick_tx(a);
	n = uxdp_ring_cons_peek(a->comp, a->cfg.batch, &idx);
	if (!n)
		return;
	for (i = 0; i < n; i++)
		a->free[a->nfree++] = *uxdp_ring_addr(a->comp, idx + i) &
				      a->base_mask;
	uxdp_ring_cons_release(a->comp, n);
	a->outstanding -= n;
	STAT_ADD(a, tx_packets, n);
}

static void tx_only(struct xsk_app *a)
{
	uint32_t idx, n, i;

	tx_only_complete(a);
	n = a->cfg.batch;
	if (a->cfg.tx_count) {
		if (!a->tx_left) {
			/* Release: pairs with xsk_app_done()'s acquire,
			 * so whoever sees done sees the final counters. */
			if (!a->outstanding)
				__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
			else if (a->cfg.poll)
				uxdp_xsk_poll(a->xsk, POLLOUT, 1);
			return;
		}
		if (a->tx_left < n)
			n = (uint32_t)a->tx_left;
	}
	if (a->nfree < n)
		n = a->nfree;
	n = n ? uxdp_ring_prod_reserve_batch(a->tx, n, &idx) : 0;
	if (!n) {
		/* Every chunk is out, or the ring is full: wait for
		 * completions (the library wakes no TX waiter: a short
		 * sleep in uxdp_xsk_poll, which kicks first). */
		STAT_ADD(a, tx_full, 1);
		if (a->cfg.poll) {
			STAT_ADD(a, sleeps, 1);
			uxdp_xsk_poll(a->xsk, POLLOUT, 1);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		struct uxdp_desc *d = uxdp_ring_desc(a->tx, idx + i);

		d->addr = a->free[--a->nfree];
		d->len = a->cfg.tx_len;
		d->options = 0;
	}
	uxdp_ring_prod_submit(a->tx, n);
	a->outstanding += n;
	if (a->cfg.tx_count)
		a->tx_left -= n;
	STAT_ADD(a, tx_submitted, n);
}

/* ---- l2fwd --------------------------------------------------------------- */

/* Completed chunks straight onto the fill ring. */
static void l2fwd_complete(struct xsk_app *a, const uint32_t *stop)
{
	uint32_t idx_cq, idx_fq, n, i;

	if (!a->outstanding)
		return;
	kick_tx(a);
	n = uxdp_ring_cons_peek(a->comp, a->cfg.batch, &idx_cq);
	if (!n)
		return;
	while (uxdp_ring_prod_reserve(a->fill, n, &idx_fq) != n) {
		STAT_ADD(a, fill_full, 1);
		kick_fill(a);
		if (stopping(stop)) {
			uxdp_ring_cons_cancel(a->comp, n);
			return;
		}
	}
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(a->fill, idx_fq + i) =
			*uxdp_ring_addr(a->comp, idx_cq + i) & a->base_mask;
	uxdp_ring_prod_submit(a->fill, n);
	uxdp_ring_cons_release(a->comp, n);
	a->outstanding -= n;
	STAT_ADD(a, tx_packets, n);
}

static inline void swap_macs(unsigned char *p)
{
	unsigned char t[6];

	memcpy(t, p, 6);
	memcpy(p, p + 6, 6);
	memcpy(p + 6, t, 6);
}

static void l2fwd(struct xsk_app *a, const uint32_t *stop)
{
	uint32_t idx_rx, idx_tx, n, i;
	uint64_t bytes = 0;

	l2fwd_complete(a, stop);
	n = uxdp_ring_cons_peek(a->rx, a->cfg.batch, &idx_rx);
	if (!n) {
		rx_idle(a);
		return;
	}
	while (uxdp_ring_prod_reserve(a->tx, n, &idx_tx) != n) {
		STAT_ADD(a, tx_full, 1);
		/* Make room: completions, and a kick to send. */
		l2fwd_complete(a, stop);
		if (stopping(stop)) {
			uxdp_ring_cons_cancel(a->rx, n);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(a->rx, idx_rx + i);
		struct uxdp_desc *t = uxdp_ring_desc(a->tx, idx_tx + i);

		if (uxdp_likely(d->len >= 12))
			swap_macs(uxdp_umem_addr_ptr(a->area, d->addr));
		t->addr = d->addr;
		t->len = d->len;
		t->options = 0;
		bytes += d->len;
	}
	uxdp_ring_prod_submit(a->tx, n);
	uxdp_ring_cons_release(a->rx, n);
	a->outstanding += n;
	STAT_ADD(a, rx_packets, n);
	STAT_ADD(a, rx_bytes, bytes);
	STAT_ADD(a, tx_submitted, n);
}

/* ---- the loop ------------------------------------------------------------ */

void xsk_app_run(struct xsk_app *a, const uint32_t *stop)
{
	/* One loop per mode: the mode is not looked at per step. */
	switch (a->cfg.mode) {
	case XSK_APP_RXDROP:
		while (!stopping(stop))
			rx_drop(a, stop);
		break;
	case XSK_APP_TXONLY:
		while (!stopping(stop) && !xsk_app_done(a))
			tx_only(a);
		break;
	case XSK_APP_L2FWD:
		while (!stopping(stop))
			l2fwd(a, stop);
		break;
	}
}

bool xsk_app_done(const struct xsk_app *a)
{
	/* Acquire: pairs with tx_only()'s release. */
	return __atomic_load_n(&a->done, __ATOMIC_ACQUIRE);
}

void xsk_app_stats_read(const struct xsk_app *a, struct xsk_app_stats *st)
{
	unsigned int i;

	for (i = 0; i < XSK_APP_NSTATS; i++) {
		uint64_t v = __atomic_load_n((const uint64_t *)&a->st + i,
					     __ATOMIC_RELAXED);

		memcpy((uint64_t *)st + i, &v, sizeof(v));
	}
}

uint64_t xsk_app_stat(const struct xsk_app_stats *st, unsigned int i)
{
	uint64_t v = 0;

	if (i < XSK_APP_NSTATS)
		memcpy(&v, (const uint64_t *)st + i, sizeof(v));
	return v;
}

/* ---- the audit ----------------------------------------------------------- */

/* Chunk of @addr marked @loc in @mine; false if it names no chunk. */
static bool mark(const struct xsk_app *a, uint8_t *mine, uint64_t addr,
		 uint8_t loc)
{
	uint64_t c = (addr & a->base_mask) / a->cfg.frame_size;

	if (c >= a->cfg.frames)
		return false;
	if (mine[c] & loc)
		mine[c] |= UXDP_LOC_DUP;
	mine[c] |= loc;
	return true;
}

int xsk_app_audit(struct xsk_app *a, struct xsk_app_audit *au)
{
	uint32_t n = a->cfg.frames, idx, k, i, bad = 0;
	uint8_t *where = calloc(n, 1), *mine = calloc(n, 1);
	int err;

	memset(au, 0, sizeof(*au));
	if (!where || !mine) {
		free(where);
		free(mine);
		return -ENOMEM;
	}
	err = uxdp_umem_audit(a->umem, where);
	if (err < 0)
		goto out;
	for (i = 0; i < a->nfree; i++)
		bad += !mark(a, mine, a->free[i], LOC_APP);
	if (a->rx) {
		/* Peeked and put back: the ring is as it was. */
		k = uxdp_ring_cons_peek(a->rx, UINT32_MAX, &idx);
		for (i = 0; i < k; i++)
			bad += !mark(a, mine,
				     uxdp_ring_desc(a->rx, idx + i)->addr,
				     LOC_RX);
		uxdp_ring_cons_cancel(a->rx, k);
	}
	if (a->tx) {
		/* Written and not consumed: the slots before the producer
		 * (a reservation of none says where that is). */
		k = a->tx_size - uxdp_ring_prod_nb_free(a->tx, a->tx_size);
		uxdp_ring_prod_reserve_batch(a->tx, 0, &idx);
		for (i = 0; i < k; i++)
			bad += !mark(a, mine,
				     uxdp_ring_desc(a->tx, idx - k + i)->addr,
				     LOC_TX);
	}
	au->chunks = n;
	for (i = 0; i < n; i++) {
		uint8_t w = where[i] | mine[i];

		/* Exactly one place: one bit, no duplicate. */
		if (!w || (w & UXDP_LOC_DUP) || (w & (w - 1))) {
			au->misplaced++;
			continue;
		}
		au->fill += w == UXDP_LOC_FILL;
		au->driver += w == UXDP_LOC_DRIVER;
		au->free_list += w == UXDP_LOC_FREE_LIST;
		au->comp += w == UXDP_LOC_COMP;
		au->rx_ring += w == LOC_RX;
		au->tx_ring += w == LOC_TX;
		au->app += w == LOC_APP;
	}
	/* An address outside the UMEM in the application's hands. */
	au->misplaced += bad;
	err = (int)au->misplaced;
out:
	free(where);
	free(mine);
	return err;
}

uint32_t xsk_app_prog_xsk(struct uxdp_buff *ctx, void *priv)
{
	return uxdp_redirect_map(priv, ctx->rxq->queue_index, UXDP_DROP);
}

uint32_t xsk_app_prog_drop(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_DROP;
}
