/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: AF_XDP sockets: binding a queue (EBUSY retried), closing it with
 * its buffers taken back, and the kernel's statistics.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

/* ---- sockets ------------------------------------------------------------- */

static int afx_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

static uint64_t afx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void afx_kst_add(struct xdp_statistics *a,
		 const struct xdp_statistics *b)
{
	a->rx_dropped += b->rx_dropped;
	a->rx_invalid_descs += b->rx_invalid_descs;
	a->tx_invalid_descs += b->tx_invalid_descs;
	a->rx_ring_full += b->rx_ring_full;
	a->rx_fill_ring_empty_descs += b->rx_fill_ring_empty_descs;
	a->tx_ring_empty_descs += b->tx_ring_empty_descs;
}

int afx_kst_read(const struct afx_q *q, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	if (q->fd < 0)
		return -ENOTCONN;
	if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, st, &len))
		return -errno;
	return 0;
}

/* A uxdp ring handle over a ring libxdp mapped. */
static void afx_ring_attach(struct uxdp_ring *r, void *desc, uint32_t size,
			    const struct xdp_ring_offset *off, bool prod)
{
	struct uxdp_ring_offsets o = {
		.producer = off->producer, .consumer = off->consumer,
		.desc = off->desc, .flags = off->flags,
	};
	void *mem = (char *)desc - off->desc;

	if (prod)
		uxdp_ring_init_prod(r, mem, size, &o);
	else
		uxdp_ring_init_cons(r, mem, size, &o);
}

static int afx_setsockopt_int(int fd, int opt, int val)
{
	return setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)) ? -errno : 0;
}

/* Register @um with the kernel, if it is not (in the device's ns). */
static int afx_umem_register(struct afx_umem *um)
{
	struct xsk_umem_config cfg = {
		.fill_size = um->rx_size,
		.comp_size = um->tx_size,
		.frame_size = um->chunk_size,
		.frame_headroom = uxdp_umem_headroom(um->umem),
		.flags = 0,
	};
	int err;

	if (um->kumem)
		return 0;
	err = xsk_umem__create(&um->kumem, um->area, um->size, &um->kfill,
			       &um->kcomp, &cfg);
	if (!err)
		return 0;
	um->kumem = NULL;
	if (err == -EPERM || err == -EACCES)
		return uxdp_set_error(EPERM, "afxdp: not permitted to create "
				      "AF_XDP sockets: run as root "
				      "(CAP_NET_RAW)");
	if (err == -ENOBUFS || err == -ENOMEM)
		return uxdp_set_error(ENOBUFS, "afxdp: the kernel could not "
				      "pin the %llu-byte UMEM: raise "
				      "RLIMIT_MEMLOCK (ulimit -l) or use "
				      "fewer frames=",
				      (unsigned long long)um->size);
	return uxdp_set_error(-err, "afxdp: XDP_UMEM_REG: %s", strerror(-err));
}

static void afx_sock_close(struct afx_q *q);

/* Drop @um's kernel registration if no socket is on it. */
static void afx_umem_unregister_idle(struct afx_umem *um)
{
	if (um->socks || !um->kumem)
		return;
	xsk_umem__delete(um->kumem);
	um->kumem = NULL;
	um->krings_taken = false;
}

/*
 * Bind @q's socket. A queue whose last socket closed a moment ago may
 * still be held by the kernel (the release is deferred): EBUSY, retried
 * with backoff for up to AFX_BIND_RETRY_MS.
 */
int afx_sock_open(struct afx_q *q, const char *ifname)
{
	struct afx_umem *um = q->um;
	struct xsk_socket_config cfg = {
		.rx_size = q->rx_size,
		.tx_size = q->tx_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = (uint16_t)q->bind_flags,
	};
	struct xsk_ring_prod *fill;
	struct xsk_ring_cons *comp;
	struct xdp_mmap_offsets off;
	struct xdp_options xo;
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len;
	uint64_t t0 = afx_now_ms();
	long backoff = 1;
	bool first;
	int err;

	err = afx_umem_register(um);
	if (err)
		return err;
	first = !um->krings_taken;
	fill = first ? &um->kfill : &q->xfill;
	comp = first ? &um->kcomp : &q->xcomp;
	for (;;) {
		err = xsk_socket__create_shared(&q->xsk, ifname, q->qid,
						um->kumem, &q->xrx, &q->xtx,
						fill, comp, &cfg);
		if (err != -EBUSY || afx_now_ms() - t0 >= AFX_BIND_RETRY_MS)
			break;
		afx_sleep_ms(backoff);
		backoff = MIN(backoff * 2, 64);
	}
	if (err) {
		q->xsk = NULL;
		afx_umem_unregister_idle(um);
		if (err == -EBUSY) {
			char who[320];

			afx_busy_holders(who, sizeof(who), false);
			return uxdp_set_error(EBUSY, "afxdp %s: queue %u is "
					      "still held by another AF_XDP "
					      "socket after %d ms of retries%s",
					      ifname, q->qid,
					      AFX_BIND_RETRY_MS, who);
		}
		if ((err == -EOPNOTSUPP || err == -EPROTONOSUPPORT) &&
		    (q->bind_flags & XDP_ZEROCOPY))
			return uxdp_set_error(EOPNOTSUPP, "afxdp %s: no "
					      "zero-copy AF_XDP on this "
					      "interface (use copy, or leave "
					      "the choice to the kernel)",
					      ifname);
		if (err == -EINVAL)
			return uxdp_set_error(EINVAL, "afxdp %s: the kernel "
					      "refused to bind queue %u "
					      "(queue out of range, or a ring "
					      "size it does not take)", ifname,
					      q->qid);
		return uxdp_set_error(-err, "afxdp %s: AF_XDP socket on queue "
				      "%u: %s", ifname, q->qid,
				      strerror(-err));
	}
	if (first)
		um->krings_taken = true;
	q->fd = xsk_socket__fd(q->xsk);
	__atomic_store_n(&q->link_down, 0, __ATOMIC_RELAXED);
	q->sock_next = um->socks;
	um->socks = q;

	len = sizeof(off);
	if (getsockopt(q->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len)) {
		err = uxdp_set_error(errno, "afxdp: XDP_MMAP_OFFSETS: %s",
				     strerror(errno));
		goto abort;
	}
	afx_ring_attach(&q->rx, q->xrx.ring, q->rx_size, &off.rx, false);
	afx_ring_attach(&q->tx, q->xtx.ring, q->tx_size, &off.tx, true);
	afx_ring_attach(&q->fill, fill->ring, um->rx_size, &off.fr, true);
	afx_ring_attach(&q->comp, comp->ring, um->tx_size, &off.cr, false);

	len = sizeof(xo);
	q->zc = !getsockopt(q->fd, SOL_XDP, XDP_OPTIONS, &xo, &len) &&
		(xo.flags & XDP_OPTIONS_ZEROCOPY);
	if (q->busy_budget) {
		err = afx_setsockopt_int(q->fd, SO_PREFER_BUSY_POLL, 1);
		if (!err)
			err = afx_setsockopt_int(q->fd, SO_BUSY_POLL, 20);
		if (!err)
			err = afx_setsockopt_int(q->fd, SO_BUSY_POLL_BUDGET,
						 (int)q->busy_budget);
		if (err) {
			err = uxdp_set_error(-err, "afxdp %s: busy polling "
					     "(SO_PREFER_BUSY_POLL, "
					     "SO_BUSY_POLL_BUDGET %u): %s",
					     ifname, q->busy_budget,
					     strerror(-err));
			goto abort;
		}
		q->busy_poll = true;
	}
	ev.data.u32 = q->idx;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->fd, &ev)) {
		err = uxdp_set_error(errno, "afxdp: epoll_ctl: %s",
				     strerror(errno));
		goto abort;
	}
	return 0;
abort:
	afx_sock_close(q);
	afx_umem_unregister_idle(um);
	return err;
}

/* Return @n buffers of @q's pool from any thread. */
static void afx_return_bufs(struct afx_q *q, struct uxdp_buff **bufs,
			    uint32_t n)
{
	if (n)
		uxdp_pool_free_remote(q->pool, bufs, n);
}


/*
 * Close @q's socket and give back every buffer the kernel held: posted
 * on the fill ring or waiting on the RX ring (held[]), in flight on TX
 * (the software ring), and the copy stash. Waits a little for TX
 * completions first, so frames in flight go home through them.
 */
static void afx_sock_close(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	struct uxdp_frame *frames[AFX_FILL_BATCH];
	struct xdp_statistics kst;
	struct afx_q **pp;
	uint64_t t0 = afx_now_ms();
	uint32_t i, n = 0, nf = 0;

	if (!q->xsk)
		return;
	while (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED) &&
	       afx_now_ms() - t0 < AFX_TX_DRAIN_MS) {
		if (uxdp_ring_count(&q->tx))
			sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		if (!afx_tx_reap(q))
			afx_sleep_ms(1);
	}
	/* What the kernel never took (the link was down, say) was not
	 * sent: given back here, counted in drained as every frame still
	 * queued to a device that goes down. */
	if (q->dev && q->sw_head != q->sw_tail)
		uxdp_rxq_count_drained(q->dev, q->idx,
				       q->sw_head - q->sw_tail);
	if (!afx_kst_read(q, &kst))
		afx_kst_add(&q->kbase, &kst);
	epoll_ctl(q->epfd, EPOLL_CTL_DEL, q->fd, NULL);
	xsk_socket__delete(q->xsk);
	q->xsk = NULL;
	q->fd = -1;
	q->zc = false;
	q->busy_poll = false;
	for (pp = &q->um->socks; *pp; pp = &(*pp)->sock_next)
		if (*pp == q) {
			*pp = q->sock_next;
			break;
		}

	/* The kernel's part of the buffers is ours again. */
	for (i = 0; i < q->um->nchunks; i++) {
		if (!q->held[i])
			continue;
		bufs[n++] = q->held[i];
		q->held[i] = NULL;
		if (n == AFX_FILL_BATCH) {
			afx_return_bufs(q, bufs, n);
			n = 0;
		}
	}
	afx_return_bufs(q, bufs, n);
	__atomic_store_n(&q->nheld, 0, __ATOMIC_RELAXED);
	n = 0;
	for (; q->sw_tail != q->sw_head; q->sw_tail++) {
		struct afx_txent *e = &q->sw[q->sw_tail & (q->tx_size - 1)];

		if (e->p & AFX_TXENT_STASH) {
			q->stash[q->nstash++] = (struct uxdp_buff *)
						(e->p & ~AFX_TXENT_STASH);
		} else {
			frames[nf++] = (struct uxdp_frame *)e->p;
			if (nf == AFX_FILL_BATCH) {
				uxdp_frame_return_bulk(frames, nf);
				nf = 0;
			}
		}
	}
	uxdp_frame_return_bulk(frames, nf);
	__atomic_store_n(&q->inflight, 0, __ATOMIC_RELAXED);
	while (q->nstash) {
		n = MIN(q->nstash, (uint32_t)AFX_FILL_BATCH);
		q->nstash -= n;
		afx_return_bufs(q, &q->stash[q->nstash], n);
	}
	__atomic_store_n(&q->stash_cnt, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->pool_dry, 0, __ATOMIC_RELAXED);
}

/*
 * Close every socket on @um and its registration: its last queue went
 * down. Orphans (queues of destroyed devices) go with them.
 */
void afx_umem_close(struct afx_umem *um)
{
	while (um->socks) {
		struct afx_q *q = um->socks;

		afx_sock_close(q);
		/* An orphan's device holds no reference on the group, but
		 * the device going down now does: um outlives this loop. */
		if (!q->dev) {
			afx_q_pool_end(q);
			afx_q_umem_put(q);
			afx_q_free(q);
		}
	}
	afx_umem_unregister_idle(um);
}
