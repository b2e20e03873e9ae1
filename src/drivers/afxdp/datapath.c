/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: The datapath: receive, transmit, poll, pending work. One unit, so
 * that the hot path inlines without link-time optimisation.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

/* The (device, queue) this thread last polled: its XDP_TX goes out there. */
static __thread struct uxdp_dev *afx_tls_dev;
static __thread uint32_t afx_tls_q;

/* ---- the datapath: receive ----------------------------------------------- */

/* Keep the kernel's fill ring full from the pool (the poller). */
void afx_fill(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t room, n, idx, i, posted = 0;
	const uint32_t shift = q->um->chunk_shift;

	room = uxdp_ring_prod_nb_free(&q->fill, q->um->rx_size);
	while (room) {
		n = uxdp_pool_alloc_batch(q->pool, bufs,
					  MIN(room, (uint32_t)AFX_FILL_BATCH));
		if (!n) {
			st_add(&q->st.fill_short, 1);
			__atomic_store_n(&q->pool_dry, 1, __ATOMIC_RELAXED);
			break;
		}
		uxdp_ring_prod_reserve(&q->fill, n, &idx);
		for (i = 0; i < n; i++) {
			uint64_t addr = uxdp_buff_chunk_addr(bufs[i]);

			*uxdp_ring_addr(&q->fill, idx + i) = addr;
			q->held[addr >> shift] = bufs[i];
		}
		uxdp_ring_prod_submit(&q->fill, n);
		posted += n;
		room -= n;
	}
	if (!posted)
		return;
	__atomic_store_n(&q->pool_dry, 0, __ATOMIC_RELAXED);
	st_add(&q->st.fill_posted, posted);
	__atomic_store_n(&q->nheld, q->nheld + posted, __ATOMIC_RELAXED);
	/* The kernel sleeps on an empty fill ring until woken (zero-copy
	 * drivers set the flag; a recvfrom() runs their NAPI). */
	if (!q->wakeup || uxdp_ring_needs_wakeup(&q->fill)) {
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		st_add(&q->st.fill_kicks, 1);
	}
}

/*
 * The buffer an RX descriptor names, ready for the program, or NULL for
 * a bad descriptor (counted; a buffer it named goes back to the pool).
 */
static inline struct uxdp_buff *afx_rx_buff(struct afx_q *q,
					    const struct uxdp_desc *d,
					    uint32_t *found)
{
	const struct afx_umem *um = q->um;
	uint32_t c, off;
	struct uxdp_buff *b;

	if (uxdp_unlikely(d->addr >= um->size))
		return NULL;
	c = (uint32_t)(d->addr >> um->chunk_shift);
	b = q->held[c];
	if (uxdp_unlikely(!b))
		return NULL;
	q->held[c] = NULL;
	(*found)++;
	/* Where the data starts, from the buffer's usable start (chunk +
	 * headroom), as the kernel says: 256 normally. */
	off = (uint32_t)((char *)um->area + d->addr -
			 (char *)b->data_hard_start);
	if (uxdp_likely(off == UXDP_PACKET_HEADROOM &&
			d->len <= b->frame_sz - UXDP_PACKET_HEADROOM &&
			!d->options)) {
		uxdp_buff_set_size(b, d->len);
		return b;
	}
	if (off < sizeof(struct uxdp_frame) || off > b->frame_sz ||
	    d->len > b->frame_sz - off || d->options) {
		uxdp_buff_free(b);
		return NULL;
	}
	b->data = (char *)b->data_hard_start + off;
	b->data_meta = b->data;
	b->data_end = (char *)b->data + d->len;
	b->flags = 0;
	return b;
}

static int afx_rx(struct afx_q *q, struct uxdp_xdp_cpu *ctx, int budget)
{
	struct uxdp_desc descs[AFX_RX_BATCH];
	struct uxdp_buff *bufs[AFX_RX_BATCH];
	uint32_t idx, n, i, m, bad, taken = 0, found = 0;
	int done = 0;

	while (done < budget) {
		uint32_t want = MIN((uint32_t)(budget - done),
				    (uint32_t)AFX_RX_BATCH);
		/*
		 * Take from RX only what TX has room for: a queue that
		 * forwards out of itself then shows overload in the
		 * kernel's rx_ring_full, not as frames dropped here.
		 */
		uint32_t room = q->tx_size -
				__atomic_load_n(&q->inflight, __ATOMIC_RELAXED);

		want = MIN(want, room);
		if (!want)
			break;
		n = uxdp_ring_cons_peek(&q->rx, want, &idx);
		if (!n)
			break;
		uxdp_ring_cons_read_descs(&q->rx, idx, descs, n);
		uxdp_ring_cons_release(&q->rx, n);
		for (i = 0, m = 0; i < n; i++) {
			bufs[m] = afx_rx_buff(q, &descs[i], &found);
			m += bufs[m] != NULL;
		}
		bad = n - m;
		if (uxdp_unlikely(bad))
			st_add(&q->st.rx_bad_descs, bad);
		taken += n;
		if (m)
			uxdp_rx_run_batch(ctx, bufs, m);
		done += (int)n;
	}
	if (taken) {
		st_add(&q->st.rx_descs, taken);
		__atomic_store_n(&q->nheld, q->nheld - found, __ATOMIC_RELAXED);
	}
	return done;
}

/* ---- the datapath: transmit ---------------------------------------------- */

/*
 * Completions (TX lock): frames go home, stash buffers go back to the
 * stash. Up to AFX_COMP_BATCH per lock hold; returns how many.
 */
uint32_t afx_tx_reap(struct afx_q *q)
{
	struct uxdp_frame *frames[AFX_COMP_BATCH];
	uint32_t n, idx, i, nf = 0, total = 0;
	const uint32_t mask = q->tx_size - 1;

	do {
		uint64_t mismatch = 0, bytes = 0;

		uxdp_spin_lock(&q->tx_lock);
		n = q->sw_head - q->sw_tail;
		n = n ? uxdp_ring_cons_peek(&q->comp,
					    MIN(n, (uint32_t)AFX_COMP_BATCH),
					    &idx) : 0;
		for (i = 0; i < n; i++) {
			struct afx_txent *e = &q->sw[q->sw_tail++ & mask];

			if (uxdp_unlikely(*uxdp_ring_addr(&q->comp, idx + i) !=
					  e->addr))
				mismatch++;
			bytes += e->len;
			if (e->p & AFX_TXENT_STASH)
				q->stash[q->nstash++] = (struct uxdp_buff *)
					(e->p & ~AFX_TXENT_STASH);
			else
				frames[nf++] = (struct uxdp_frame *)e->p;
		}
		if (n) {
			uxdp_ring_cons_release(&q->comp, n);
			st_add(&q->st.tx_completed, n);
			/* Sent is what the kernel is done with (a NIC driver
			 * counts in its TX clean-up too); under the TX lock,
			 * the counters' one writer. */
			if (q->dev)
				uxdp_txq_count_sent(q->dev, q->idx, n, bytes);
			if (mismatch)
				st_add(&q->st.comp_mismatch, mismatch);
			__atomic_store_n(&q->inflight, q->sw_head - q->sw_tail,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&q->stash_cnt, q->nstash,
					 __ATOMIC_RELAXED);
		}
		uxdp_spin_unlock(&q->tx_lock);
		if (nf) {
			uxdp_frame_return_bulk(frames, nf);
			nf = 0;
		}
		total += n;
	} while (n == AFX_COMP_BATCH);
	return total;
}

static uint64_t afx_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Whether the queue's link is down as far as the datapath knows: its last
 * kick said ENETDOWN (the interface is down) or ENXIO (the interface was
 * deleted: the kernel unbound the socket). Then nothing is kicked, sent or
 * waited for, except one probe every AFX_LINK_PROBE_MS, which says when
 * the link is back. Without this, a frame left on the TX ring kept its
 * poller kicking in a loop (16 million failed sendto()s in 4 s).
 */
static bool afx_link_blocked(struct afx_q *q)
{
	uint64_t now;

	if (uxdp_likely(!__atomic_load_n(&q->link_down, __ATOMIC_RELAXED)))
		return false;
	now = afx_mono_ms();
	if (now - __atomic_load_n(&q->link_probe_ms, __ATOMIC_RELAXED) <
	    AFX_LINK_PROBE_MS)
		return true;
	/* This caller probes; another at the same moment may too. */
	__atomic_store_n(&q->link_probe_ms, now, __ATOMIC_RELAXED);
	return false;
}

/* Ring the kernel's TX doorbell once: sendto(). */
static bool afx_tx_kick_once(struct afx_q *q)
{
	int err;

	if (q->wakeup && !uxdp_ring_needs_wakeup(&q->tx))
		return false;
	st_inc_any(&q->st.tx_kicks);
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
		if (uxdp_unlikely(__atomic_load_n(&q->link_down,
						  __ATOMIC_RELAXED)))
			__atomic_store_n(&q->link_down, 0, __ATOMIC_RELAXED);
		return true;
	}
	err = errno;
	if (err == EAGAIN || err == EBUSY || err == ENOBUFS || err == EINTR) {
		st_inc_any(&q->st.tx_kick_again);
		return true;
	}
	st_inc_any(&q->st.tx_kick_errors);
	if (err == ENETDOWN || err == ENXIO) {
		__atomic_store_n(&q->link_probe_ms, afx_mono_ms(),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&q->link_down, 1, __ATOMIC_RELAXED);
	}
	return false;
}

/* Kick while the TX ring holds frames the kernel has not taken. */
static void afx_tx_kick(struct afx_q *q)
{
	int r;

	if (afx_link_blocked(q))
		return;
	for (r = 0; r < AFX_KICK_ROUNDS && uxdp_ring_count(&q->tx); r++)
		if (!afx_tx_kick_once(q))
			break;
}

/* Whether @f's memory is a buffer of @q's UMEM, and where in it. */
static inline bool afx_frame_addr(const struct afx_q *q,
				  const struct uxdp_frame *f, uint64_t *addr)
{
	const struct afx_umem *um = q->um;
	uint64_t a, end;

	if (f->mem.type != UXDP_MEM_POOL || !f->mem.owner ||
	    uxdp_pool_umem(uxdp_buff_pool((const struct uxdp_buff *)
					  f->mem.owner)) != um->umem)
		return false;
	a = (uint64_t)((char *)f->data - um->area);
	end = (a | (um->chunk_size - 1)) + 1;
	/* The kernel takes no descriptor across a chunk boundary. */
	if (a + f->len > end)
		return false;
	*addr = a;
	return true;
}

/*
 * Top the copy stash up from the pool (the poller: the pool's owner, or
 * the opener before any poller), when it is below half, back to half.
 * Stash plus stash buffers in flight never exceed tx_size, so completions
 * never overflow the stash array. Half, not a batch: the first frames
 * through a port come all at once, before its poller has run a second
 * time, and a stash of one batch ran dry under them (test_fwd_netns
 * test_two_queues lost them as txq_full).
 */
void afx_stash_topup(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t have, want, n, k;

	for (;;) {
		have = __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED) +
		       __atomic_load_n(&q->inflight, __ATOMIC_RELAXED);
		if (have >= q->tx_size / 2)
			return;
		want = MIN(q->tx_size / 2 - have, (uint32_t)AFX_FILL_BATCH);
		n = uxdp_pool_alloc_batch(q->pool, bufs, want);
		if (!n)
			return;
		uxdp_spin_lock(&q->tx_lock);
		k = MIN(n, q->tx_size - q->nstash - (q->sw_head - q->sw_tail));
		memcpy(&q->stash[q->nstash], bufs, k * sizeof(*bufs));
		q->nstash += k;
		__atomic_store_n(&q->stash_cnt, q->nstash, __ATOMIC_RELAXED);
		uxdp_spin_unlock(&q->tx_lock);
		if (k < n) {
			uxdp_pool_free_batch(q->pool, bufs + k, n - k);
			return;
		}
	}
}

/*
 * Up again, with the copy stash to stock by its pool's owner (the caller,
 * polling the queue or sending to it from a poll of another): stock it
 * and open transmits (afx_q_set_ok).
 */
static void afx_tx_arm(struct afx_q *q)
{
	afx_stash_topup(q);
	uxdp_spin_lock(&q->tx_lock);
	if (__atomic_load_n(&q->tx_arm, __ATOMIC_RELAXED)) {
		q->tx_ok = true;
		__atomic_store_n(&q->tx_arm, 0, __ATOMIC_RELAXED);
	}
	uxdp_spin_unlock(&q->tx_lock);
}

/*
 * Post up to AFX_COMP_BATCH of @frames on @q's TX ring (TX lock held,
 * queue open). Stops at the first frame it cannot take; *@why says why.
 * Copied frames go to @copied for the caller to return. Returns how many.
 */
static uint32_t afx_tx_post(struct afx_q *q, struct uxdp_frame **frames,
			    uint32_t n, struct uxdp_frame **copied,
			    uint32_t *ncopied, uint64_t *bytes,
			    enum uxdp_txq_refusal *why)
{
	const uint32_t mask = q->tx_size - 1;
	uint32_t idx, room, i, nocopy = 0, nc = 0;
	uint64_t b = 0;

	room = MIN(n, q->tx_size - (q->sw_head - q->sw_tail));
	room = uxdp_ring_prod_reserve_batch(&q->tx, room, &idx);
	for (i = 0; i < room; i++) {
		struct uxdp_frame *f = frames[i];
		struct uxdp_desc *d = uxdp_ring_desc(&q->tx, idx + i);
		struct afx_txent *e = &q->sw[(q->sw_head + i) & mask];
		uint64_t addr;

		if (uxdp_unlikely(f->len > q->max_len)) {
			*why = UXDP_TXQ_TOO_BIG;
			break;
		}
		if (afx_frame_addr(q, f, &addr)) {
			/* Ours: the kernel sends it from where it is. */
			e->p = (uintptr_t)f;
			nocopy++;
		} else {
			struct uxdp_buff *sb;

			if (uxdp_unlikely(!q->nstash)) {
				st_add(&q->st.tx_no_buffer, 1);
				break;
			}
			sb = q->stash[--q->nstash];
			memcpy((char *)sb->data_hard_start +
			       UXDP_PACKET_HEADROOM, f->data, f->len);
			addr = (uint64_t)((char *)sb->data_hard_start -
					  q->um->area) + UXDP_PACKET_HEADROOM;
			e->p = (uintptr_t)sb | AFX_TXENT_STASH;
			copied[nc++] = f;
		}
		e->addr = addr;
		e->len = f->len;
		d->addr = addr;
		d->len = f->len;
		d->options = 0;
		b += f->len;
	}
	uxdp_ring_prod_cancel(&q->tx, room - i);
	if (i) {
		uxdp_ring_prod_submit(&q->tx, i);
		q->sw_head += i;
		__atomic_store_n(&q->inflight, q->sw_head - q->sw_tail,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&q->stash_cnt, q->nstash, __ATOMIC_RELAXED);
		st_add(&q->st.tx_nocopy, nocopy);
		st_add(&q->st.tx_copy, nc);
	}
	*ncopied = nc;
	*bytes = b;
	return i;
}

int afx_xdp_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
		 uint32_t flags)
{
	struct afx_priv *priv = afx_priv(dev);
	struct uxdp_frame *copied[AFX_COMP_BATCH];
	enum uxdp_txq_refusal why = UXDP_TXQ_FULL;
	uint32_t qi, sent = 0, k, want, nc;
	uint64_t bytes;
	struct afx_q *q;

	/* The queue this thread polls on this device (XDP_TX goes back
	 * out where it came from), else spread threads over queues. */
	qi = afx_tls_dev == dev ? afx_tls_q : uxdp_thread_index();
	if (uxdp_unlikely(qi >= priv->nq))
		qi %= priv->nq;
	q = priv->q[qi];
	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, qi, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	if (uxdp_unlikely(n <= 0))
		return 0;
	/* A link known to be down takes nothing (the frames go back to
	 * the caller, counted as down), unless this call's probe finds it
	 * back. */
	if (uxdp_unlikely(afx_link_blocked(q) ||
			  (__atomic_load_n(&q->link_down, __ATOMIC_RELAXED) &&
			   !afx_tx_kick_once(q) &&
			   __atomic_load_n(&q->link_down, __ATOMIC_RELAXED)))) {
		uxdp_txq_count_refused(dev, qi, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENETDOWN;
	}
	/* The thread that owns the queue's pool sends to it before polling
	 * it since up (one thread polling both ports): it may stock the
	 * stash itself. Another thread waits for the poller. */
	if (uxdp_unlikely(__atomic_load_n(&q->tx_arm, __ATOMIC_RELAXED)) &&
	    uxdp_pool_is_owner(q->pool))
		afx_tx_arm(q);
	while (sent < (uint32_t)n) {
		want = MIN((uint32_t)n - sent, (uint32_t)AFX_COMP_BATCH);
		/*
		 * Completions first, when they would make room: in the TX
		 * ring, or in the stash that frames of another UMEM are
		 * copied into. The poller reaps too, but only once it runs;
		 * a sender that waited for it would drop what a completion
		 * already in the ring could carry.
		 */
		if (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED) +
		    want > q->tx_size ||
		    __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED) < want)
			afx_tx_reap(q);
		uxdp_spin_lock(&q->tx_lock);
		if (uxdp_unlikely(!q->tx_ok || !uxdp_dev_is_up(dev))) {
			uxdp_spin_unlock(&q->tx_lock);
			uxdp_txq_count_refused(dev, qi, UXDP_TXQ_DOWN,
					       (uint32_t)n - sent);
			if (!sent)
				return -ENETDOWN;
			why = UXDP_TXQ_DOWN;
			goto out;
		}
		k = afx_tx_post(q, frames + sent, want, copied, &nc, &bytes,
				&why);
		/* The call counts now, its frames when they complete. */
		uxdp_txq_count(dev, qi, 0, 0);
		uxdp_spin_unlock(&q->tx_lock);
		/* Copied: the originals go home at once. */
		uxdp_frame_return_bulk(copied, nc);
		sent += k;
		if (k < want)
			break;
	}
	/* Every frame not taken is counted under the reason the call
	 * stopped for. */
	if (sent < (uint32_t)n)
		uxdp_txq_count_refused(dev, qi, why, (uint32_t)n - sent);
out:
	if (flags & UXDP_XMIT_FLUSH) {
		if (sent)
			afx_tx_kick_once(q);
		/* The poller reaps the completions and kicks on. */
		uxdp_dev_kick(dev, qi);
	}
	return (int)sent;
}

/* ---- poll, pending, fd, pool --------------------------------------------- */

int afx_poll(struct uxdp_dev *dev, uint32_t qi, struct uxdp_xdp_cpu *ctx,
	     int budget)
{
	struct afx_q *q = afx_priv(dev)->q[qi];
	int done;

	afx_tls_dev = dev;
	afx_tls_q = qi;
	uxdp_spin_lock(&q->rx_lock);
	if (uxdp_unlikely(!q->polled))
		__atomic_store_n(&q->polled, 1, __ATOMIC_RELAXED);
	if (uxdp_unlikely(!q->rx_ok)) {
		uxdp_spin_unlock(&q->rx_lock);
		return 0;
	}
	if (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED)) {
		afx_tx_reap(q);
		afx_tx_kick(q);
		afx_tx_reap(q);
	}
	afx_stash_topup(q);
	if (uxdp_unlikely(__atomic_load_n(&q->tx_arm, __ATOMIC_RELAXED)))
		afx_tx_arm(q);
	afx_fill(q);
	done = afx_rx(q, ctx, budget);
	if (done)
		afx_fill(q);
	else if (q->busy_poll) {
		/* Drives the device's NAPI from here (busy polling). */
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		st_add(&q->st.rx_kicks, 1);
	}
	uxdp_spin_unlock(&q->rx_lock);
	return done;
}

/*
 * Work for an idle poller: RX descriptors, frames in flight to reap, or a
 * fill ring it could refill now that buffers came back. Shared words
 * only; rx_lock busy means down is closing the socket: no work.
 */
bool afx_rx_pending(struct uxdp_dev *dev, uint32_t qi)
{
	struct afx_q *q = afx_priv(dev)->q[qi];
	bool pending = false;

	if (!uxdp_spin_trylock(&q->rx_lock))
		return false;
	if (q->rx_ok) {
		/* Frames in flight are work while they can complete: not
		 * on a link that is down (a probe comes with the idle
		 * timeout's poll). */
		pending = uxdp_ring_count(&q->rx) ||
			  (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED) &&
			   !__atomic_load_n(&q->link_down, __ATOMIC_RELAXED));
		if (!pending && __atomic_load_n(&q->pool_dry,
						__ATOMIC_RELAXED)) {
			struct uxdp_pool_stats ps;

			pending = !uxdp_pool_stats(q->pool, &ps) &&
				  ps.remote_pending;
		}
	}
	uxdp_spin_unlock(&q->rx_lock);
	return pending;
}

int afx_rx_fd(struct uxdp_dev *dev, uint32_t qi)
{
	return afx_priv(dev)->q[qi]->epfd;
}

struct uxdp_pool *afx_rx_pool(struct uxdp_dev *dev, uint32_t qi)
{
	struct afx_q *q = afx_priv(dev)->q[qi];

	return q ? q->pool : NULL;
}
