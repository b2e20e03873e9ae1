/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AF_XDP sockets (include/uxdp/xsk.h): binding, receive (the socket is a
 * redirect target), copy-mode transmit on the application's kick, the
 * zero-copy driver side (TX pull, completions, need_wakeup), statistics and
 * the wake-up file descriptor.
 *
 * Who runs what:
 *   receive   the poller of the bound queue, inside its poll (the bulk
 *             queue flush calls xsk_rcv); it owns the socket's pool there
 *   copy TX   the thread that kicks (uxdp_xsk_sendto), under tx_lock, as
 *             the kernel's sendto runs the generic xmit under xs->mutex
 *   ZC TX     the device's driver, in its poll (uxdp_xsk_tx_peek_batch)
 *
 * The application writes the TX ring's producer, the fill ring's producer,
 * and the RX and completion rings' consumers: all of them reach uxdp only
 * through the ring helpers, which clamp them, and every TX descriptor is
 * validated before anything follows it.
 */
#include "../internal.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/driver.h>
#include <uxdp/xsk.h>

#include "../xdp/xdp_internal.h"
#include "../dev/dev_internal.h"
#include "../pool/pool_internal.h"

#define XSK_FLAGS	(UXDP_XSK_F_SHARED_UMEM | UXDP_XSK_F_COPY | \
			 UXDP_XSK_F_ZEROCOPY | UXDP_XSK_F_NEED_WAKEUP | \
			 UXDP_XSK_F_SG | UXDP_XSK_F_NO_RX | UXDP_XSK_F_NO_TX)
#define XSK_OPTIONS_OK	(UXDP_PKT_CONTD | UXDP_TX_METADATA)

/*
 * Copy-mode transmit buffers: a slab of their own, so a frame in flight
 * (queued on another device for a while) does not hold a UMEM chunk, and
 * the chunk completes as soon as it is copied. Frames made from them are
 * UXDP_MEM_ALLOC; their free() may run on any thread, hence the lock. The
 * slab outlives its socket while buffers are out: the last one back frees
 * it (as uxdp_pool_retire does for pools).
 */
struct xsk_txbufs {
	struct uxdp_mem_allocator alloc;	/* first: container_of */
	pthread_spinlock_t lock;
	char *slab;
	size_t buf_size;
	uint32_t total;
	uint32_t nfree;
	void **free;
	bool dying;
};

struct uxdp_xsk {
	struct uxdp_xdp_target target;	/* the XSKMAP entry */
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	struct uxdp_dev *dev;
	uint32_t queue;
	uint32_t flags;
	bool zc;
	bool need_wakeup;
	uint32_t rx_frame_size;		/* room for a received packet */
	uint64_t umem_size;
	uint32_t chunk_size;
	uint32_t tx_meta_len;		/* the UMEM's tx_metadata_len */
	bool unaligned;

	/* RX ring: the queue's poller produces, the application consumes. */
	void *rx_mem;
	uint32_t rx_size;
	struct uxdp_ring rx_prod;
	struct uxdp_ring rx_app;
	/* TX ring: the application produces; a kick (copy) or the driver
	 * (zero-copy) consumes. */
	void *tx_mem;
	uint32_t tx_size;
	struct uxdp_ring tx_cons;
	struct uxdp_ring tx_app;
	pthread_mutex_t tx_lock;
	struct xsk_txbufs *txb;
	/* Zero-copy: completion slots staged by the TX pull, not posted. */
	uint32_t comp_staged;

	/* Wake-up: an eventfd written when RX entries are published to an
	 * application that armed it (the need_wakeup handshake). */
	int efd;
	uint32_t armed;

	struct uxdp_xsk_stats st;	/* relaxed atomics */
};

static inline void xstat_add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static inline struct uxdp_xsk *target_xsk(struct uxdp_xdp_target *t)
{
	return (struct uxdp_xsk *)((char *)t - offsetof(struct uxdp_xsk,
							 target));
}

/* ---- copy-mode TX buffers ------------------------------------------------------ */

static void txbufs_free_slab(struct xsk_txbufs *b)
{
	pthread_spin_destroy(&b->lock);
	free(b->free);
	free(b->slab);
	free(b);
}

static void txbufs_put(struct uxdp_mem_allocator *a, void *frame)
{
	struct xsk_txbufs *b = (struct xsk_txbufs *)a;
	/* The frame is at the buffer's start (8-aligned, see txbufs_get). */
	bool last;

	pthread_spin_lock(&b->lock);
	b->free[b->nfree++] = frame;
	last = b->dying && b->nfree == b->total;
	pthread_spin_unlock(&b->lock);
	if (last)
		txbufs_free_slab(b);
}

static struct xsk_txbufs *txbufs_create(uint32_t n, uint32_t chunk_size)
{
	struct xsk_txbufs *b = calloc(1, sizeof(*b));
	uint32_t i;

	if (!b)
		return NULL;
	/* Frame header and XDP headroom, the packet, the frame tailroom. */
	b->buf_size = (UXDP_PACKET_HEADROOM + chunk_size + UXDP_FRAME_TAILROOM +
		       63) & ~(size_t)63;
	b->total = n;
	b->alloc.free = txbufs_put;
	if (pthread_spin_init(&b->lock, PTHREAD_PROCESS_PRIVATE) ||
	    posix_memalign((void **)&b->slab, UXDP_CACHE_LINE,
			   b->buf_size * n) ||
	    !(b->free = calloc(n, sizeof(*b->free)))) {
		free(b->slab);
		free(b);
		return NULL;
	}
	for (i = 0; i < n; i++)
		b->free[i] = b->slab + (size_t)i * b->buf_size;
	b->nfree = n;
	return b;
}

static void *txbufs_get(struct xsk_txbufs *b)
{
	void *p = NULL;

	pthread_spin_lock(&b->lock);
	if (b->nfree)
		p = b->free[--b->nfree];
	pthread_spin_unlock(&b->lock);
	return p;
}

/* The socket goes: free the slab now, or when the last buffer is back. */
static void txbufs_retire(struct xsk_txbufs *b)
{
	bool now;

	if (!b)
		return;
	pthread_spin_lock(&b->lock);
	b->dying = true;
	now = b->nfree == b->total;
	pthread_spin_unlock(&b->lock);
	if (now)
		txbufs_free_slab(b);
}

/* ---- descriptors ---------------------------------------------------------------- */

/*
 * The kernel's xp_validate_desc for single-buffer sockets (6.6 and later,
 * with the newest kernels' underflow check): a length; the packet, and the
 * @m bytes of TX metadata before it, inside the UMEM; not across a chunk
 * boundary in aligned mode; only known option bits, and no CONTD (no
 * multi-buffer here). Sets *@off to the packet's byte offset in the UMEM.
 */
static bool desc_valid(const struct uxdp_xsk *xsk, const struct uxdp_desc *d,
		       uint64_t *off)
{
	uint64_t a, len = d->len, m = xsk->tx_meta_len;

	if (!len || (d->options & ~XSK_OPTIONS_OK) ||
	    (d->options & UXDP_PKT_CONTD))
		return false;
	if (!xsk->unaligned) {
		uint64_t csz = xsk->chunk_size;

		if (d->addr < m)
			return false;
		a = d->addr - m;
		if ((a & (csz - 1)) + len + m > csz || a >= xsk->umem_size)
			return false;
		*off = d->addr;
		return true;
	}
	if (len + m > xsk->chunk_size)
		return false;
	a = uxdp_umem_addr_offset(d->addr);
	if (a < m)
		return false;
	a -= m;
	if (a >= xsk->umem_size || a + len + m > xsk->umem_size)
		return false;
	*off = a + m;
	return true;
}

/* Internet checksum of @len bytes, folded, not complemented. */
static uint16_t csum_fold_bytes(const unsigned char *p, uint32_t len)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * A descriptor with UXDP_TX_METADATA: the request in the tx_metadata_len
 * bytes before the packet (struct uxdp_xsk_tx_metadata; with a shorter
 * metadata length the kernel reads the struct all the same, into the
 * packet, and so does this, never past the UMEM). As the kernel, the
 * request is refused when there is no metadata area at all, when it asks
 * for flags that do not exist, and when a checksum would not fit the
 * packet; refused descriptors are invalid here (the kernel fails sendto
 * with -EINVAL and leaves the descriptor at the head of the ring, see
 * docs/semantics.md). A checksum request is carried out in software (uxdp
 * devices offload nothing; the kernel does the same with
 * UXDP_UMEM_F_TX_SW_CSUM): the 16-bit one's-complement sum from csum_start
 * to the end, stored at csum_start + csum_offset, where the application
 * left the pseudo-header sum. Timestamps and launch times are ignored.
 */
static bool tx_metadata(const struct uxdp_xsk *xsk, const void *umem_pkt,
			unsigned char *pkt, uint32_t len)
{
	const char *md_at = (const char *)umem_pkt - xsk->tx_meta_len;
	const char *end = (const char *)uxdp_umem_area(xsk->umem) +
			  xsk->umem_size;
	struct uxdp_xsk_tx_metadata md = { 0 };
	uint16_t c;

	if (!xsk->tx_meta_len)
		return false;
	memcpy(&md, md_at, MIN(sizeof(md), (size_t)(end - md_at)));
	if (md.flags & ~(uint64_t)UXDP_TXMD_F_VALID)
		return false;
	if (!(md.flags & UXDP_TXMD_F_CHECKSUM))
		return true;
	if ((uint32_t)md.request.csum_start + md.request.csum_offset + 2 > len)
		return false;
	c = (uint16_t)~csum_fold_bytes(pkt + md.request.csum_start,
				       len - md.request.csum_start);
	if (!c)
		c = 0xffff;		/* CSUM_MANGLED_0 */
	pkt[md.request.csum_start + md.request.csum_offset] = (uint8_t)(c >> 8);
	pkt[md.request.csum_start + md.request.csum_offset + 1] = (uint8_t)c;
	return true;
}

/* ---- receive: the socket as a redirect target ----------------------------------- */

/*
 * The end of a poll that gave the socket packets (the kernel's xsk_flush):
 * publish the RX ring and the fill ring's consumer, then wake an
 * application that armed the fd.
 */
static void xsk_target_flush(struct uxdp_xdp_target *t)
{
	struct uxdp_xsk *xsk = target_xsk(t);
	uint64_t one = 1;

	uxdp_pool_flush(xsk->pool);
	if (xsk->rx_prod.cached_prod == *xsk->rx_prod.producer)
		return;
	uxdp_ring_prod_publish(&xsk->rx_prod);		/* B, pairs with C */
	/* The other half of uxdp_xsk_arm's handshake: the producer was
	 * published before this exchange, which orders it. */
	if (__atomic_exchange_n(&xsk->armed, 0, __ATOMIC_SEQ_CST))
		if (write(xsk->efd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is full; it is readable. */
		}
}

/*
 * One redirected buffer into the RX ring (the kernel's xsk_rcv). Zero-copy
 * (a buffer of the socket's own pool): the buffer itself becomes the
 * descriptor, at wherever the program left the packet. Otherwise the
 * metadata and packet are copied into a chunk from the fill ring, at the
 * kernel's offsets (data at hard_start + 256, metadata right before).
 * Returns 0 (kept), 1 (the caller gives the buffer back: copied, or dropped
 * and counted as the kernel counts it), or -EINVAL for a buffer that was
 * not received on the socket's queue.
 */
static int xsk_target_rcv(struct uxdp_xdp_target *t, struct uxdp_buff *buf)
{
	struct uxdp_xsk *xsk = target_xsk(t);
	const struct uxdp_rxq_info *rxq = buf->rxq;
	const char *data = buf->data, *meta = buf->data_meta;
	uint32_t len = (uint32_t)((const char *)buf->data_end - data);
	uint32_t metasize = meta <= data ? (uint32_t)(data - meta) : 0;
	struct uxdp_buff *nb;
	struct uxdp_desc *d;
	uint32_t idx;
	uint64_t addr;

	if (unlikely(rxq->dev != xsk->dev || rxq->queue_index != xsk->queue ||
		     !xsk->rx_mem))
		return -EINVAL;
	if (unlikely(len + metasize > xsk->rx_frame_size)) {
		xstat_add(&xsk->st.rx_dropped, 1);
		return 1;
	}
	if (rxq->mem.type == UXDP_MEM_XSK) {
		struct uxdp_buff *head = rxq->mem.owner ? rxq->mem.owner : buf;

		if (likely(uxdp_buff_pool(head) == xsk->pool)) {
			if (!uxdp_ring_prod_reserve(&xsk->rx_prod, 1, &idx)) {
				xstat_add(&xsk->st.rx_ring_full, 1);
				return 1;
			}
			/* The program may have moved the packet: the
			 * handle is taken from where data is now. */
			head->data = buf->data;
			addr = uxdp_pool_release(head);
			if (unlikely(addr == UINT64_MAX)) {
				/* Not allocated (a pool bug, counted in
				 * its bad_free): deliver nothing. */
				uxdp_ring_prod_cancel(&xsk->rx_prod, 1);
				xstat_add(&xsk->st.rx_dropped, 1);
				return 0;
			}
			d = uxdp_ring_desc(&xsk->rx_prod, idx);
			d->addr = addr;
			d->len = len;
			d->options = 0;
			return 0;
		}
	}
	nb = uxdp_pool_alloc(xsk->pool);
	if (!nb) {
		xstat_add(&xsk->st.rx_dropped, 1);
		return 1;
	}
	if (!uxdp_ring_prod_reserve(&xsk->rx_prod, 1, &idx)) {
		uxdp_buff_free(nb);
		xstat_add(&xsk->st.rx_ring_full, 1);
		return 1;
	}
	memcpy((char *)nb->data - metasize, data - metasize, len + metasize);
	d = uxdp_ring_desc(&xsk->rx_prod, idx);
	d->addr = uxdp_pool_release(nb);
	d->len = len;
	d->options = 0;
	return 1;
}

/* Frames are never sent to a socket: redirects call xsk_target_rcv. */
static int xsk_target_xmit(struct uxdp_xdp_target *t, int n,
			   struct uxdp_frame **frames, uint32_t flags)
{
	(void)t;
	(void)n;
	(void)frames;
	(void)flags;
	return -EOPNOTSUPP;
}

/* ---- copy-mode transmit ------------------------------------------------------------ */

/* Room on the completion ring of the socket's pool. */
static uint32_t comp_room(struct uxdp_xsk *xsk, uint32_t want)
{
	return uxdp_ring_prod_nb_free(&xsk->pool->cq, want);
}

/*
 * A frame in TX buffer @mem holding a copy of the packet at @off in the
 * UMEM, with its metadata request carried out. NULL (and @mem given back)
 * if the request does not fit the packet.
 */
static struct uxdp_frame *tx_frame(struct uxdp_xsk *xsk, void *mem,
				   uint64_t off, const struct uxdp_desc *d)
{
	struct uxdp_rxq_info info = {
		.dev = xsk->dev,
		.queue_index = xsk->queue,
		.mem = { .type = UXDP_MEM_ALLOC, .owner = &xsk->txb->alloc },
	};
	struct uxdp_buff b = {
		.data_hard_start = mem,
		.data = (char *)mem + UXDP_PACKET_HEADROOM,
		.rxq = &info,
		.frame_sz = (uint32_t)xsk->txb->buf_size,
	};
	const char *src = (const char *)uxdp_umem_area(xsk->umem) + off;

	memcpy(b.data, src, d->len);
	if ((d->options & UXDP_TX_METADATA) &&
	    !tx_metadata(xsk, src, b.data, d->len)) {
		txbufs_put(&xsk->txb->alloc, mem);
		return NULL;
	}
	b.data_end = (char *)b.data + d->len;
	b.data_meta = b.data;
	return uxdp_buff_to_frame(&b);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * The device took only part of a kick's frames: its queue is full until its
 * poller drains it. The kernel's copy-mode sendto hands every frame to the
 * device before it returns, and with a veth the peer takes it in the same
 * call (its NAPI runs in the sender's softirq), so an application that
 * kicks once per batch (xdpsock) never meets a full veth there. Give the
 * poller the time to make room, as long as it makes progress, and send the
 * rest: what the kernel would have sent by now is sent by now. Bounded by
 * UXDP_XSK_TX_WAIT_MS without progress (a queue nobody polls, or polled by
 * this very thread); then the rest stays on the TX ring, -EAGAIN.
 * Returns how many more the device took.
 */
static int tx_wait_room(struct uxdp_xsk *xsk, struct uxdp_frame **frames,
			int n)
{
	const struct timespec nap = { 0, 20000 };	/* 20 us */
	uint64_t idle_from = now_ns();
	unsigned int tries = 0;
	int done = 0, r;

	while (done < n && now_ns() - idle_from <
	       (uint64_t)UXDP_XSK_TX_WAIT_MS * 1000000) {
		/* A poller on this CPU needs it; one elsewhere, a moment. */
		if (tries++ < 8)
			sched_yield();
		else
			nanosleep(&nap, NULL);
		r = uxdp_dev_xmit(xsk->dev, n - done, frames + done,
				  UXDP_XMIT_FLUSH);
		if (r < 0 || !uxdp_dev_is_up(xsk->dev))
			break;		/* refused outright: no use waiting */
		if (r > 0) {
			done += r;
			idle_from = now_ns();
			tries = 0;
		}
	}
	return done;
}

/*
 * The kernel's __xsk_generic_xmit, a bulk at a time: up to
 * UXDP_XSK_TX_BATCH descriptors, as many as the completion ring has room
 * for. The valid ones are copied and sent in one xdp_xmit; what the device
 * did not take goes back on the TX ring (the consumer index is rewound to
 * the first unsent descriptor) and the call says -EAGAIN. Every descriptor
 * consumed completes, in ring order: a sent one at once (the packet was
 * copied), an invalid one too (counted in tx_invalid_descs; the kernel
 * returns invalid descriptors' addresses this way since 6.x, checked by
 * test_xsk_kernel against the running kernel), and one longer than the
 * device sends or shorter than an Ethernet header (dropped, counted in
 * the device's too_big, the call ends there with -EBUSY).
 */
static int xsk_tx_copy(struct uxdp_xsk *xsk)
{
	struct uxdp_frame *frames[UXDP_XSK_TX_BATCH];
	/* Every descriptor looked at, in ring order: its address, and
	 * for those that became frames, which one. */
	uint64_t addrs[UXDP_XSK_TX_BATCH];
	uint32_t ord_of[UXDP_XSK_TX_BATCH];	/* frame -> position */
	uint32_t idx, n, i, k = 0, nord = 0, ninv = 0, room, cut;
	uint32_t inv_before[UXDP_XSK_TX_BATCH];	/* frame -> invalid before */
	uint32_t mtu = uxdp_dev_mtu(xsk->dev);
	/* Longest frame the device sends: its MTU, an Ethernet header and
	 * a VLAN tag (the kernel's is_skb_forwardable). */
	uint64_t max_len = mtu ? (uint64_t)mtu + 18 : UINT64_MAX;
	bool drop = false;
	int sent, err = 0;

	n = uxdp_ring_cons_nb_avail(&xsk->tx_cons, UXDP_XSK_TX_BATCH + 1);
	if (!n) {
		xstat_add(&xsk->st.tx_ring_empty_descs, 1);
		return 0;
	}
	if (n > UXDP_XSK_TX_BATCH) {
		n = UXDP_XSK_TX_BATCH;
		err = -EAGAIN;		/* more than a batch waits */
	}
	room = comp_room(xsk, n);
	if (room < n) {
		n = room;		/* the application must reap */
		err = -EAGAIN;
		if (!n)
			return err;
	}
	n = uxdp_ring_cons_peek(&xsk->tx_cons, n, &idx);
	for (i = 0; i < n; i++) {
		struct uxdp_desc d = *uxdp_ring_desc(&xsk->tx_cons, idx + i);
		uint64_t off;
		void *mem;

		if (!desc_valid(xsk, &d, &off)) {
			addrs[nord++] = d.addr;
			ninv++;
			continue;
		}
		mem = txbufs_get(xsk->txb);
		if (!mem) {
			err = -EAGAIN;	/* every TX buffer is in flight */
			break;
		}
		frames[k] = tx_frame(xsk, mem, off, &d);
		if (!frames[k]) {
			/* A metadata request refused. */
			addrs[nord++] = d.addr;
			ninv++;
			continue;
		}
		if (unlikely(d.len > max_len || d.len < 14)) {
			/* Built, but more than the device sends, or not
			 * even an Ethernet header: as the kernel (the
			 * device drops it), the packet is dropped, its
			 * address completes, and the call ends with
			 * -EBUSY. */
			uxdp_frame_return(frames[k]);
			drop = true;
			addrs[nord++] = d.addr;
			break;
		}
		ord_of[k] = nord;
		inv_before[k] = ninv;
		addrs[nord++] = d.addr;
		k++;
	}
	/* Consumed so far: the nord descriptors looked at. */
	cut = nord;
	sent = k ? uxdp_dev_xmit(xsk->dev, (int)k, frames, UXDP_XMIT_FLUSH) : 0;
	if (sent < 0)
		sent = 0;
	if (sent > (int)k)
		sent = (int)k;
	if (sent < (int)k && sent >= 0 && uxdp_dev_is_up(xsk->dev))
		sent += tx_wait_room(xsk, frames + sent, (int)k - sent);
	if (sent < (int)k) {
		/* The device is busy (ring full, down): the rest goes with a
		 * later kick, from the first unsent frame on. Invalid
		 * descriptors before it were consumed; later ones were not. */
		uxdp_frame_return_bulk(frames + sent, k - (uint32_t)sent);
		cut = ord_of[sent];
		ninv = inv_before[sent];
		drop = false;		/* not reached: it stays too */
		err = -EAGAIN;
	}
	/* Positions are ring positions from idx: rewind to the cut. */
	uxdp_ring_cons_cancel(&xsk->tx_cons, n - cut);
	uxdp_ring_cons_publish(&xsk->tx_cons);		/* D, pairs with A */
	if (ninv)
		xstat_add(&xsk->st.tx_invalid_descs, ninv);
	if (drop) {
		uxdp_txq_count_refused(xsk->dev, xsk->queue %
				       uxdp_dev_num_txq(xsk->dev),
				       UXDP_TXQ_TOO_BIG, 1);
		err = -EBUSY;
	}
	/* Room was reserved for all n: these fit. */
	if (cut)
		uxdp_pool_complete(xsk->pool, addrs, cut);
	return err;
}

UXDP_EXPORT int uxdp_xsk_sendto(struct uxdp_xsk *xsk)
{
	int err;

	if (!xsk->tx_mem)
		return -ENOBUFS;
	if (!uxdp_dev_is_up(xsk->dev))
		return -ENETDOWN;
	if (xsk->zc) {
		/* The driver pulls the descriptors in its poll: wake it. */
		uxdp_dev_kick(xsk->dev, xsk->queue);
		return 0;
	}
	pthread_mutex_lock(&xsk->tx_lock);
	err = xsk_tx_copy(xsk);
	pthread_mutex_unlock(&xsk->tx_lock);
	return err;
}

UXDP_EXPORT int uxdp_xsk_recvfrom(struct uxdp_xsk *xsk)
{
	/* A zero-copy driver that stopped for want of fill entries polls
	 * again when kicked; copy mode receives without a kick. */
	if (xsk->zc)
		uxdp_dev_kick(xsk->dev, xsk->queue);
	return 0;
}

/* ---- waiting ---------------------------------------------------------------------- */

static short xsk_ready(struct uxdp_xsk *xsk, short events)
{
	short r = 0;

	if ((events & POLLIN) && xsk->rx_mem &&
	    uxdp_ring_count(&xsk->rx_app))
		r |= POLLIN;
	/* POLLOUT while the TX ring is at most half full (xsk_tx_writeable). */
	if ((events & POLLOUT) && xsk->tx_mem &&
	    uxdp_ring_count(&xsk->tx_app) <= xsk->tx_size / 2)
		r |= POLLOUT;
	return r;
}

UXDP_EXPORT void uxdp_xsk_arm(struct uxdp_xsk *xsk)
{
	/* Before the caller's last look at the RX ring; see xsk_target_flush. */
	__atomic_exchange_n(&xsk->armed, 1, __ATOMIC_SEQ_CST);
}

UXDP_EXPORT int uxdp_xsk_poll(struct uxdp_xsk *xsk, short events,
			      int timeout_ms)
{
	struct pollfd pfd = { .fd = xsk->efd, .events = POLLIN };
	uint64_t v;
	short r;
	int rc;

	/* As the kernel's xsk_poll: a poll kicks the TX path first. */
	if (xsk->tx_mem && uxdp_ring_count(&xsk->tx_app))
		uxdp_xsk_sendto(xsk);
	r = xsk_ready(xsk, events);
	if (r || !timeout_ms)
		return r;
	uxdp_xsk_arm(xsk);
	r = xsk_ready(xsk, events);
	if (!r) {
		rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (read(xsk->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: timed out. */
		}
		if (xsk->tx_mem && uxdp_ring_count(&xsk->tx_app))
			uxdp_xsk_sendto(xsk);
		r = xsk_ready(xsk, events);
	}
	__atomic_store_n(&xsk->armed, 0, __ATOMIC_RELAXED);
	return r;
}

UXDP_EXPORT int uxdp_xsk_fd(const struct uxdp_xsk *xsk)
{
	return xsk->efd;
}

/* ---- the zero-copy driver's side ------------------------------------------------- */

static inline struct uxdp_xsk *pool_xsk(struct uxdp_pool *pool)
{
	return uxdp_pool_user(pool);
}

UXDP_EXPORT uint32_t uxdp_xsk_tx_peek_batch(struct uxdp_pool *pool,
					    struct uxdp_desc *descs,
					    uint32_t max)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);
	uint32_t idx, n, i, k = 0, invalid = 0, cidx;

	if (unlikely(!xsk || !xsk->tx_mem))
		return 0;
	/* The completion ring is the backpressure: the kernel buffers
	 * nothing, and neither does this. */
	n = uxdp_ring_cons_nb_avail(&xsk->tx_cons, max);
	n = MIN(n, max);
	n = MIN(n, comp_room(xsk, n));
	if (!n) {
		xstat_add(&xsk->st.tx_ring_empty_descs, 1);
		return 0;
	}
	n = uxdp_ring_cons_peek(&xsk->tx_cons, n, &idx);
	for (i = 0; i < n; i++) {
		struct uxdp_desc d = *uxdp_ring_desc(&xsk->tx_cons, idx + i);
		uint64_t off;

		if (!desc_valid(xsk, &d, &off)) {
			invalid++;
			continue;
		}
		if (d.options & UXDP_TX_METADATA) {
			/* The offload a NIC would do on the wire, done
			 * in place: the driver sends the UMEM's bytes. */
			char *pkt = (char *)uxdp_umem_area(xsk->umem) + off;

			if (!tx_metadata(xsk, pkt, (unsigned char *)pkt,
					 d.len)) {
				invalid++;
				continue;
			}
		}
		descs[k++] = d;
	}
	uxdp_ring_cons_publish(&xsk->tx_cons);		/* D, pairs with A */
	if (invalid)
		xstat_add(&xsk->st.tx_invalid_descs, invalid);
	/* Stage the addresses on the completion ring now, in TX order;
	 * uxdp_xsk_tx_completed() publishes them as the driver finishes. */
	if (k) {
		k = uxdp_ring_prod_reserve_batch(&pool->cq, k, &cidx);
		for (i = 0; i < k; i++)
			*uxdp_ring_addr(&pool->cq, cidx + i) = descs[i].addr;
		xsk->comp_staged += k;
	}
	return k;
}

UXDP_EXPORT void uxdp_xsk_tx_completed(struct uxdp_pool *pool, uint32_t n)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);

	if (unlikely(!xsk || n > xsk->comp_staged))
		n = xsk ? xsk->comp_staged : 0;
	if (!n)
		return;
	xsk->comp_staged -= n;
	uxdp_ring_prod_submit(&pool->cq, n);		/* B, pairs with C */
	pool_count_completed(pool, n);
}

static void ring_flag(struct uxdp_ring *r, bool set)
{
	if (set)
		uxdp_ring_set_need_wakeup(r);
	else
		uxdp_ring_clear_need_wakeup(r);
}

UXDP_EXPORT void uxdp_xsk_set_rx_need_wakeup(struct uxdp_pool *pool)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);

	if (xsk && xsk->need_wakeup)
		ring_flag(&pool->fq, true);
}

UXDP_EXPORT void uxdp_xsk_clear_rx_need_wakeup(struct uxdp_pool *pool)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);

	if (xsk && xsk->need_wakeup)
		ring_flag(&pool->fq, false);
}

UXDP_EXPORT void uxdp_xsk_set_tx_need_wakeup(struct uxdp_pool *pool)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);

	if (xsk && xsk->need_wakeup && xsk->tx_mem)
		ring_flag(&xsk->tx_cons, true);
}

UXDP_EXPORT void uxdp_xsk_clear_tx_need_wakeup(struct uxdp_pool *pool)
{
	struct uxdp_xsk *xsk = pool_xsk(pool);

	if (xsk && xsk->need_wakeup && xsk->tx_mem)
		ring_flag(&xsk->tx_cons, false);
}

/* ---- create / destroy --------------------------------------------------------------- */

static int ring_pair(void **mem, uint32_t size, struct uxdp_ring *lib,
		     struct uxdp_ring *app, bool lib_produces)
{
	*mem = uxdp_ring_mem_alloc(size, sizeof(struct uxdp_desc));
	if (!*mem)
		return -errno;
	if (lib_produces) {
		uxdp_ring_init_prod(lib, *mem, size, NULL);
		uxdp_ring_init_cons(app, *mem, size, NULL);
	} else {
		uxdp_ring_init_cons(lib, *mem, size, NULL);
		uxdp_ring_init_prod(app, *mem, size, NULL);
	}
	return 0;
}

static void xsk_free(struct uxdp_xsk *xsk)
{
	if (xsk->rx_mem)
		uxdp_ring_mem_free(xsk->rx_mem, xsk->rx_size,
				   sizeof(struct uxdp_desc));
	if (xsk->tx_mem)
		uxdp_ring_mem_free(xsk->tx_mem, xsk->tx_size,
				   sizeof(struct uxdp_desc));
	if (xsk->efd >= 0)
		close(xsk->efd);
	txbufs_retire(xsk->txb);
	xdp_target_fini(&xsk->target);
	pthread_mutex_destroy(&xsk->tx_lock);
	free(xsk);
}

static int ring_size_ok(uint32_t n)
{
	return is_pow2_u64(n) && n <= UXDP_RING_MAX_ENTRIES;
}

UXDP_EXPORT __cold struct uxdp_xsk *
uxdp_xsk_create(struct uxdp_umem *umem, struct uxdp_dev *dev, uint32_t queue,
		const struct uxdp_xsk_opts *opts)
{
	UXDP_DECLARE_OPTS(uxdp_pool_opts, po);
	struct uxdp_xsk *xsk;
	char why[256];
	uint32_t flags;
	int err;

	uxdp_clear_err();
	if (!umem || !dev) {
		errno = -uxdp_fail(EINVAL, "xsk: NULL umem or device");
		return NULL;
	}
	/* Binding waits for the queue's polls: not from inside one. */
	if (xdp_rcu_in_reader()) {
		errno = -xdp_synchronize("xsk create");
		return NULL;
	}
	if (!UXDP_OPTS_VALID(opts, uxdp_xsk_opts)) {
		errno = EINVAL;
		return NULL;
	}
	flags = UXDP_OPTS_GET(opts, flags, 0);
	if (flags & ~XSK_FLAGS) {
		errno = -uxdp_fail(EINVAL, "xsk: unknown flags 0x%x",
				   flags & ~XSK_FLAGS);
		return NULL;
	}
	if ((flags & UXDP_XSK_F_COPY) && (flags & UXDP_XSK_F_ZEROCOPY)) {
		errno = -uxdp_fail(EINVAL, "xsk: copy and zero-copy both "
				   "asked for");
		return NULL;
	}
	if (flags & UXDP_XSK_F_SG) {
		errno = -uxdp_fail(EOPNOTSUPP, "xsk: multi-buffer packets "
				   "(UXDP_XSK_F_SG) are not supported yet");
		return NULL;
	}
	if ((flags & UXDP_XSK_F_NO_RX) && (flags & UXDP_XSK_F_NO_TX)) {
		errno = -uxdp_fail(EINVAL, "xsk: a socket needs an RX or a TX "
				   "ring");
		return NULL;
	}
	if (queue >= uxdp_dev_num_rxq(dev)) {
		errno = -uxdp_fail(EINVAL, "xsk: %s has no queue %u (it has "
				   "%u)", uxdp_dev_name(dev), queue,
				   uxdp_dev_num_rxq(dev));
		return NULL;
	}
	xsk = calloc(1, sizeof(*xsk));
	if (!xsk) {
		errno = -uxdp_fail(ENOMEM, "xsk: out of memory");
		return NULL;
	}
	xsk->efd = -1;
	pthread_mutex_init(&xsk->tx_lock, NULL);
	xsk->umem = umem;
	xsk->dev = dev;
	xsk->queue = queue;
	xsk->flags = flags;
	xsk->need_wakeup = flags & UXDP_XSK_F_NEED_WAKEUP;
	xsk->umem_size = uxdp_umem_size(umem);
	xsk->chunk_size = uxdp_umem_chunk_size(umem);
	xsk->unaligned = uxdp_umem_unaligned(umem);
	xsk->tx_meta_len = umem->tx_metadata_len;
	xsk->rx_frame_size = xsk->chunk_size - uxdp_umem_headroom(umem) -
			     UXDP_PACKET_HEADROOM;
	xsk->rx_size = flags & UXDP_XSK_F_NO_RX ? 0 :
		       UXDP_OPTS_GET(opts, rx_size, UXDP_XSK_RING_DEFAULT);
	xsk->tx_size = flags & UXDP_XSK_F_NO_TX ? 0 :
		       UXDP_OPTS_GET(opts, tx_size, UXDP_XSK_RING_DEFAULT);
	if ((xsk->rx_size && !ring_size_ok(xsk->rx_size)) ||
	    (xsk->tx_size && !ring_size_ok(xsk->tx_size))) {
		err = uxdp_fail(EINVAL, "xsk: rx_size %u / tx_size %u: powers "
				"of two <= 2^30", xsk->rx_size, xsk->tx_size);
		goto err_free;
	}
	err = uxdp_fail(ENOMEM, "xsk: out of memory");
	if (xsk->rx_size &&
	    ring_pair(&xsk->rx_mem, xsk->rx_size, &xsk->rx_prod, &xsk->rx_app,
		      true))
		goto err_free;
	if (xsk->tx_size &&
	    ring_pair(&xsk->tx_mem, xsk->tx_size, &xsk->tx_cons, &xsk->tx_app,
		      false))
		goto err_free;
	xsk->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (xsk->efd < 0)
		goto err_free;
	xsk->target.xmit = xsk_target_xmit;
	xsk->target.rcv = xsk_target_rcv;
	xsk->target.flush = xsk_target_flush;
	if (xdp_target_init(&xsk->target))
		goto err_free;
	if (xsk->tx_size) {
		/* Twice the ring: a full ring's worth may be in flight while
		 * the next is copied. */
		xsk->txb = txbufs_create(2 * MIN(xsk->tx_size, 4096U),
					 xsk->chunk_size);
		if (!xsk->txb)
			goto err_free;
		/* The kernel starts TX with the flag set: the first sendto
		 * always kicks; in copy mode nothing ever clears it. */
		if (xsk->need_wakeup)
			uxdp_ring_set_need_wakeup(&xsk->tx_cons);
	}

	po.fill_size = UXDP_OPTS_GET(opts, fill_size, 0);
	po.comp_size = UXDP_OPTS_GET(opts, comp_size, 0);
	xsk->pool = uxdp_pool_create(umem, &po);
	if (!xsk->pool) {
		err = -errno;
		goto err_free;
	}
	uxdp_pool_set_user(xsk->pool, xsk);
	/* The pool's owner is the bound queue's poller (receive runs there). */
	err = dev_rxq_bind_xsk_pool(dev, queue, xsk->pool);
	if (err) {
		err = uxdp_fail(EBUSY, "xsk: %s queue %u already has a socket",
				uxdp_dev_name(dev), queue);
		goto err_pool;
	}

	/*
	 * Zero-copy when the driver can, unless copy was asked for. The
	 * driver switches the queue's memory with no poll of it running:
	 * the queue is paused around the call (the kernel's napi_disable
	 * around ndo_bpf(XDP_SETUP_XSK_POOL)).
	 */
	if (!(flags & UXDP_XSK_F_COPY) && dev->ops->xsk_pool_setup) {
		err = dev_rxq_pause(dev, queue);
		if (!err)
			err = dev->ops->xsk_pool_setup(dev, queue, xsk->pool);
		dev_rxq_resume(dev, queue);
		if (!err)
			xsk->zc = true;
		else if (flags & UXDP_XSK_F_ZEROCOPY)
			goto err_bind;
	} else if (flags & UXDP_XSK_F_ZEROCOPY) {
		err = uxdp_fail(EOPNOTSUPP, "xsk: %s (%s) cannot do zero-copy",
				uxdp_dev_name(dev), uxdp_dev_kind(dev));
		goto err_bind;
	}
	uxdp_clear_err();
	return xsk;

err_bind:
	dev_rxq_bind_xsk_pool(dev, queue, NULL);
err_pool:
	/* The undoing must not lose the reason. */
	snprintf(why, sizeof(why), "%s", uxdp_errmsg());
	uxdp_pool_destroy(xsk->pool);
	uxdp_fail(-err, "%s", why);
err_free:
	xsk_free(xsk);
	errno = -err;
	return NULL;
}

UXDP_EXPORT __cold int uxdp_xsk_destroy(struct uxdp_xsk *xsk)
{
	int err;

	uxdp_clear_err();
	if (!xsk)
		return 0;
	if (xdp_rcu_in_reader())
		return xdp_synchronize("xsk destroy");
	/* Out of every map, then nobody redirects to it any more. */
	xdp_maps_forget(&xsk->target);
	err = xdp_synchronize("xsk destroy");
	if (err)
		return err;
	if (xsk->zc) {
		/* The driver stops receiving into the UMEM and gives back
		 * what its ring held, with no poll of the queue running. */
		dev_rxq_pause(xsk->dev, xsk->queue);
		xsk->dev->ops->xsk_pool_setup(xsk->dev, xsk->queue, NULL);
		dev_rxq_resume(xsk->dev, xsk->queue);
	}
	dev_rxq_bind_xsk_pool(xsk->dev, xsk->queue, NULL);
	/* No poller takes the pool after this: the last grace period. */
	xdp_synchronize("xsk destroy");
	uxdp_pool_set_user(xsk->pool, NULL);
	/* Nobody else touches its owner's side now: take it to tear down. */
	uxdp_pool_set_owner(xsk->pool);
	/* Buffers may still be out (a zero-copy frame on another device):
	 * the pool frees itself when they are back. */
	if (uxdp_pool_destroy(xsk->pool))
		uxdp_pool_retire(xsk->pool, 0);
	xsk_free(xsk);
	uxdp_clear_err();
	return 0;
}

/* ---- accessors and statistics ------------------------------------------------------- */

UXDP_EXPORT struct uxdp_ring *uxdp_xsk_rx_ring(struct uxdp_xsk *xsk)
{
	return xsk->rx_mem ? &xsk->rx_app : NULL;
}

UXDP_EXPORT struct uxdp_ring *uxdp_xsk_tx_ring(struct uxdp_xsk *xsk)
{
	return xsk->tx_mem ? &xsk->tx_app : NULL;
}

UXDP_EXPORT struct uxdp_ring *uxdp_xsk_fill_ring(struct uxdp_xsk *xsk)
{
	return uxdp_pool_fill_ring(xsk->pool);
}

UXDP_EXPORT struct uxdp_ring *uxdp_xsk_comp_ring(struct uxdp_xsk *xsk)
{
	return uxdp_pool_comp_ring(xsk->pool);
}

UXDP_EXPORT struct uxdp_xdp_target *uxdp_xsk_target(struct uxdp_xsk *xsk)
{
	return &xsk->target;
}

UXDP_EXPORT struct uxdp_umem *uxdp_xsk_umem(const struct uxdp_xsk *xsk)
{
	return xsk->umem;
}

UXDP_EXPORT struct uxdp_dev *uxdp_xsk_dev(const struct uxdp_xsk *xsk)
{
	return xsk->dev;
}

UXDP_EXPORT uint32_t uxdp_xsk_queue(const struct uxdp_xsk *xsk)
{
	return xsk->queue;
}

UXDP_EXPORT uint32_t uxdp_xsk_options(const struct uxdp_xsk *xsk)
{
	return xsk->zc ? UXDP_XSK_OPT_ZEROCOPY : 0;
}

UXDP_EXPORT int uxdp_xsk_stats(const struct uxdp_xsk *xsk,
			       struct uxdp_xsk_stats *st)
{
	struct uxdp_pool_stats ps;

	if (!xsk || !st)
		return -EINVAL;
	st->rx_dropped = __atomic_load_n(&xsk->st.rx_dropped, __ATOMIC_RELAXED);
	st->rx_invalid_descs = 0;
	st->tx_invalid_descs = __atomic_load_n(&xsk->st.tx_invalid_descs,
					       __ATOMIC_RELAXED);
	st->rx_ring_full = __atomic_load_n(&xsk->st.rx_ring_full,
					   __ATOMIC_RELAXED);
	st->tx_ring_empty_descs = __atomic_load_n(&xsk->st.tx_ring_empty_descs,
						  __ATOMIC_RELAXED);
	/* The kernel's fq->queue_empty_descs: the pool's fill_empty. */
	uxdp_pool_stats(xsk->pool, &ps);
	st->rx_fill_ring_empty_descs = ps.fill_empty;
	return 0;
}
