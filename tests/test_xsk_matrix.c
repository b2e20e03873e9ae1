/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's AF_XDP selftest matrix (tools/testing/selftests/bpf/
 * xskxceiver.c and prog_tests/test_xsk.c), its intent ported to uxdp: a
 * TX socket on one end of a pair, an RX socket on the other, a stream of
 * numbered packets between them, and every received packet checked for
 * length, payload and offset. docs/xsk-selftests.md lists every case of
 * the kernel's matrix with its status here.
 *
 * Modes: copy mode over a uxdp veth pair (veth has no zero-copy, as in the
 * kernel), and zero-copy over two nic devices plugged into each other (the
 * kernel's run on a NIC in loopback), aligned and unaligned UMEMs. After
 * each case the UMEM audit must place every chunk once (the accounting
 * invariant).
 *
 * Packets follow xskxceiver: an Ethernet header, then 32-bit words
 * (pkt_nb << 16 | word index) to the end; the receiver checks each.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <uxdp/uxdp.h>

#define M_FRAMES	1024	/* UMEM frames per socket (xskxceiver: 1024) */

/* The pair a case runs on: false, a veth pair and copy-mode sockets;
 * true, two looped nics and zero-copy sockets (set per group, main()). */
static bool m_zc;
/* UMEM mode of the group: false, aligned chunks; true, unaligned
 * (UXDP_UMEM_F_UNALIGNED). m_default() takes it; set per group, main(). */
static bool m_unaligned;
/* nic hardware ring size for the zero-copy pair; 0: the default. */
static uint32_t m_nic_ring;
#define M_BATCH		64
#define M_PKTS		4096	/* packets per stream (xskxceiver: 4096) */

/* ---- configuration of one case ---------------------------------------------- */

struct m_cfg {
	uint32_t frame_size;	/* chunk size */
	bool unaligned;
	uint32_t headroom;	/* UMEM (frame) headroom */
	uint32_t pkt_len;
	uint32_t npkts;
	uint32_t rx_size;	/* RX ring; 0: default */
	bool poll_rx, poll_tx;	/* drive with uxdp_xsk_poll */
	bool no_release_rx;	/* STAT_RX_FULL: never read the RX ring */
	bool no_fill;		/* STAT_FILL_EMPTY */
	bool invalid_half;	/* STAT_TX_INVALID: every other len 9001 */
	int32_t tail_delta;	/* XDP_ADJUST_TAIL_*: program moves the end */
	int32_t unaligned_off;	/* SEND_RECEIVE_UNALIGNED: -32 */
};

static void m_default(struct m_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->frame_size = 4096;
	c->unaligned = m_unaligned;
	c->pkt_len = 64;
	c->npkts = M_PKTS;
}

/* ---- one end: a veth device with a socket ------------------------------------ */

struct m_end {
	struct uxdp_dev *dev;
	struct uxdp_umem *umem;
	struct uxdp_xsk *xsk;
	struct uxdp_map *map;
	uint32_t frames;
	uint64_t size;
	/* TX side: the next frame to write a packet into (a ring of the
	 * UMEM's frames; completions come back in order). */
	uint32_t tx_next, tx_outstanding;
	/* RX side: the next packet number expected. */
	uint32_t rx_expect;
	uint64_t rx_bytes;
	int32_t tail_delta;
	uint32_t batch;		/* descriptors per ring operation; 0: 64 */
};

struct m_pair {
	struct m_end e[2];	/* e[0] transmits, e[1] receives (BIDIR: both) */
	struct m_cfg cfg;
};

static uint32_t m_prog(struct uxdp_buff *ctx, void *priv)
{
	struct m_end *e = priv;

	if (e->tail_delta && uxdp_adjust_tail(ctx, e->tail_delta))
		return UXDP_ABORTED;
	return uxdp_redirect_map(e->map, ctx->rxq->queue_index, UXDP_DROP);
}

static const char *m_name(char *buf, char side)
{
	static unsigned int nr;

	snprintf(buf, UXDP_IFNAMSIZ, "mx%c%u", side, nr++ / 2);
	return buf;
}

static void m_end_sock(struct m_end *e, const struct m_cfg *c,
		       uint32_t xflags)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = c->frame_size,
			  .headroom = c->headroom,
			  .flags = c->unaligned ? UXDP_UMEM_F_UNALIGNED : 0);
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo, .rx_size = c->rx_size,
			  .flags = xflags);

	e->frames = M_FRAMES;
	e->size = (uint64_t)M_FRAMES * c->frame_size;
	e->umem = uxdp_umem_create(NULL, e->size, &uo);
	if (!e->umem)
		fail_msg("umem: %s", uxdp_errmsg());
	e->xsk = uxdp_xsk_create(e->umem, e->dev, 0, &xo);
	if (!e->xsk)
		fail_msg("xsk: %s", uxdp_errmsg());
	e->map = uxdp_map_create(1);
	assert_non_null(e->map);
	assert_int_equal(uxdp_map_update(e->map, 0, uxdp_xsk_target(e->xsk)),
			 0);
	e->tail_delta = c->tail_delta;
}

/* Frame i's base address in the UMEM. */
static uint64_t m_frame(const struct m_cfg *c, uint32_t i)
{
	return (uint64_t)i * c->frame_size;
}

static void m_fill(struct m_end *e, const struct m_cfg *c)
{
	struct uxdp_ring *fill = uxdp_xsk_fill_ring(e->xsk);
	uint32_t n = e->frames, idx, i;

	if (c->no_fill)
		return;
	assert_int_equal(uxdp_ring_prod_reserve(fill, n, &idx), n);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(fill, idx + i) = m_frame(c, i);
	uxdp_ring_prod_submit(fill, n);
}

static void m_pair_up(struct m_pair *p, const struct m_cfg *c, bool bidir)
{
	/* An MTU for the biggest single-buffer packet a 4K frame holds. */
	UXDP_DECLARE_OPTS(uxdp_veth_opts, vo, .ring_size = 2048, .mtu = 3800);
	char na[UXDP_IFNAMSIZ], nb[UXDP_IFNAMSIZ];
	struct uxdp_prog *prog;
	int k;

	memset(p, 0, sizeof(*p));
	p->cfg = *c;
	if (m_zc) {
		/* No generators: the wire carries what the other sends. */
		UXDP_DECLARE_OPTS(uxdp_nic_opts, no, .flags = UXDP_NIC_F_NO_GEN,
				  .rx_ring = m_nic_ring, .tx_ring = m_nic_ring);

		p->e[0].dev = uxdp_nic_create(m_name(na, 'a'), &no);
		p->e[1].dev = uxdp_nic_create(m_name(nb, 'b'), &no);
		assert_non_null(p->e[0].dev);
		assert_non_null(p->e[1].dev);
		assert_int_equal(uxdp_nic_loop(p->e[0].dev, p->e[1].dev), 0);
	} else {
		assert_int_equal(uxdp_veth_create(m_name(na, 'a'),
						  m_name(nb, 'b'), &vo,
						  &p->e[0].dev, &p->e[1].dev),
				 0);
	}
	for (k = 0; k < 2; k++) {
		uint32_t xf = UXDP_XSK_F_NEED_WAKEUP |
			      (m_zc ? UXDP_XSK_F_ZEROCOPY : UXDP_XSK_F_COPY);

		if (!bidir)
			xf |= k == 0 ? UXDP_XSK_F_NO_RX : UXDP_XSK_F_NO_TX;
		m_end_sock(&p->e[k], c, xf);
		/* A veth end takes frames only with a program on it. */
		prog = uxdp_prog_create("m", m_prog, &p->e[k]);
		assert_non_null(prog);
		assert_int_equal(uxdp_dev_attach_prog(p->e[k].dev,
						      UXDP_ALL_QUEUES, prog),
				 0);
		uxdp_prog_put(prog);
		assert_int_equal(uxdp_dev_up(p->e[k].dev), 0);
		if (bidir || k == 1)
			m_fill(&p->e[k], c);
	}
}

static void m_audit(struct m_end *e, const struct m_cfg *c);

/* Every case ends here: the accounting invariant is checked on both ends
 * first, while the devices are still up and hold what they hold. */
static void m_pair_down(struct m_pair *p)
{
	int k;

	for (k = 0; k < 2; k++)
		m_audit(&p->e[k], &p->cfg);
	for (k = 0; k < 2; k++) {
		uxdp_dev_down(p->e[k].dev);
		assert_int_equal(uxdp_xsk_destroy(p->e[k].xsk), 0);
		uxdp_map_destroy(p->e[k].map);
	}
	for (k = 0; k < 2; k++) {
		uxdp_dev_destroy(p->e[k].dev);
		assert_int_equal(uxdp_umem_destroy(p->e[k].umem), 0);
	}
}

/* ---- packets ------------------------------------------------------------------ */

static void m_write_pkt(void *dst, uint32_t len, uint32_t nb)
{
	static const unsigned char eth[14] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5,
	};
	uint32_t w, i;

	memcpy(dst, eth, 14);
	for (i = 0; 14 + (i + 1) * 4 <= len; i++) {
		w = nb << 16 | (i & 0xffff);
		memcpy((char *)dst + 14 + i * 4, &w, 4);
	}
}

/* Whether @p holds packet @nb of @len bytes. */
static bool m_check_pkt(const void *p, uint32_t len, uint32_t nb)
{
	uint32_t w, i;

	if (memcmp(p, "\x02\x00\x00\x00\x00\x02", 6))
		return false;
	for (i = 0; 14 + (i + 1) * 4 <= len; i++) {
		memcpy(&w, (const char *)p + 14 + i * 4, 4);
		if (w != (nb << 16 | (i & 0xffff)))
			return false;
	}
	return true;
}

/* The length packet @nb is sent with (STAT_TX_INVALID: odd ones 9001). */
static uint32_t m_len(const struct m_cfg *c, uint32_t nb)
{
	return c->invalid_half && (nb & 1) ? 9001 : c->pkt_len;
}

/* Reap completions: they free UMEM frames for the next packets. */
static void m_reap(struct m_end *e)
{
	struct uxdp_ring *cq = uxdp_xsk_comp_ring(e->xsk);
	uint32_t idx, n;

	n = uxdp_ring_cons_peek(cq, 4096, &idx);
	uxdp_ring_cons_release(cq, n);
	e->tx_outstanding -= n;
}

/*
 * Queue up to a batch of packets [*next, npkts). Packets are written at
 * the frame's start (+ unaligned_off in the unaligned case, so half of
 * them straddle a page boundary). Invalid ones complete never and count.
 */
static uint32_t m_tx_batch(struct m_end *e, const struct m_cfg *c,
			   uint32_t *next)
{
	struct uxdp_ring *tx = uxdp_xsk_tx_ring(e->xsk);
	void *area = uxdp_umem_area(e->umem);
	uint32_t n = e->batch ? e->batch : M_BATCH, idx, i;

	if (n > c->npkts - *next)
		n = c->npkts - *next;
	/* Pacing: no more in flight than the UMEM has frames. */
	if (n > e->frames - e->tx_outstanding)
		n = e->frames - e->tx_outstanding;
	if (!n || !uxdp_ring_prod_reserve(tx, n, &idx))
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t nb = *next + i, len = m_len(c, nb);
		uint64_t addr = m_frame(c, e->tx_next);
		struct uxdp_desc *d = uxdp_ring_desc(tx, idx + i);

		d->len = len;
		d->options = 0;
		if (len > c->frame_size) {
			/* Invalid: never sent, so it takes no frame
			 * (nothing is written); copy mode completes it,
			 * a zero-copy driver's pull does not. */
			d->addr = 0;
			if (!m_zc)
				e->tx_outstanding++;
			continue;
		}
		if (c->unaligned && (nb & 1) && e->tx_next)
			addr += (uint64_t)(int64_t)c->unaligned_off;
		e->tx_next = (e->tx_next + 1) % e->frames;
		m_write_pkt((char *)area + addr, len, nb);
		d->addr = addr;
		e->tx_outstanding++;
	}
	uxdp_ring_prod_submit(tx, n);
	*next += n;
	return n;
}

/* Read the RX ring and check each packet; refill. Returns packets read. */
static uint32_t m_rx(struct m_end *e, const struct m_cfg *c)
{
	struct uxdp_ring *rx = uxdp_xsk_rx_ring(e->xsk);
	struct uxdp_ring *fill = uxdp_xsk_fill_ring(e->xsk);
	void *area = uxdp_umem_area(e->umem);
	uint32_t idx, fidx, n, i;

	if (c->no_release_rx)
		return 0;
	n = uxdp_ring_cons_peek(rx, e->batch ? e->batch : M_BATCH, &idx);
	if (!n)
		return 0;
	assert_int_equal(uxdp_ring_prod_reserve(fill, n, &fidx), n);
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(rx, idx + i);
		uint32_t want = c->pkt_len + (uint32_t)c->tail_delta;
		uint64_t off = uxdp_umem_addr_offset(d->addr);
		uint64_t base = c->unaligned ?
			(d->addr & UXDP_UNALIGNED_BUF_ADDR_MASK) :
			d->addr - d->addr % c->frame_size;

		/* STAT_TX_INVALID: the odd ones never left. */
		if (c->invalid_half && (e->rx_expect & 1))
			e->rx_expect++;
		if (d->len != want)
			fail_msg("packet %u: len %u, want %u", e->rx_expect,
				 d->len, want);
		/* xskxceiver's offset check: headroom + 256 into the frame. */
		if (off - base != c->headroom + UXDP_PACKET_HEADROOM)
			fail_msg("packet %u at offset %llu, want %u",
				 e->rx_expect, (unsigned long long)(off - base),
				 c->headroom + UXDP_PACKET_HEADROOM);
		if (!m_check_pkt(uxdp_umem_addr_ptr(area, d->addr),
				 want < c->pkt_len ? want : c->pkt_len,
				 e->rx_expect))
		{
			const unsigned char *q = uxdp_umem_addr_ptr(area,
								    d->addr);
			uint32_t w0;

			memcpy(&w0, q + 14, 4);
			fprintf(stderr, "packet %u: bad payload (len %u, "
				"first word 0x%08x, dst %02x, addr 0x%llx)\n",
				e->rx_expect, d->len, w0, q[0],
				(unsigned long long)d->addr);
			fail();
		}
		/* Grown by the program: the new bytes are zeros. */
		if (want > c->pkt_len) {
			const unsigned char *t = uxdp_umem_addr_ptr(area,
								    d->addr);
			uint32_t k;

			for (k = c->pkt_len; k < want; k++)
				if (t[k])
					fail_msg("packet %u: grown byte %u "
						 "is 0x%x", e->rx_expect, k,
						 t[k]);
		}
		e->rx_expect++;
		e->rx_bytes += d->len;
		*uxdp_ring_addr(fill, fidx + i) = base;
	}
	uxdp_ring_cons_release(rx, n);
	uxdp_ring_prod_submit(fill, n);
	return n;
}

/* Every chunk in one place: the pool's, or the RX ring (the app's). */
static void m_audit(struct m_end *e, const struct m_cfg *c)
{
	uint32_t n = uxdp_umem_nchunks(e->umem), i, idx, k;
	uint8_t *where = calloc(n, 1);
	struct uxdp_ring *rx = uxdp_xsk_rx_ring(e->xsk);

	assert_non_null(where);
	assert_true(uxdp_umem_audit(e->umem, where) >= 0);
	if (rx) {
		k = uxdp_ring_cons_peek(rx, 1U << 16, &idx);
		for (i = 0; i < k; i++) {
			uint64_t a = uxdp_ring_desc(rx, idx + i)->addr, ch;

			a = c->unaligned ? (a & UXDP_UNALIGNED_BUF_ADDR_MASK) :
			    a;
			ch = a / c->frame_size;
			if (ch >= n)
				fail_msg("RX descriptor 0x%llx outside the "
					 "UMEM", (unsigned long long)a);
			/* Twice on the RX ring: handed out twice. */
			if (where[ch] & UXDP_LOC_OTHER)
				where[ch] |= UXDP_LOC_DUP;
			where[ch] |= UXDP_LOC_OTHER;
		}
		uxdp_ring_cons_cancel(rx, k);
	}
	for (i = 0; i < n; i++) {
		uint8_t w = where[i] & (uint8_t)~(UXDP_LOC_COMP |
						  UXDP_LOC_DUP);

		/* Seen twice in one place is a chunk handed out twice,
		 * except on the completion ring: a frame may be sent again
		 * (the same address, or 0 for an invalid descriptor) before
		 * its last completion was reaped. */
		if ((where[i] & UXDP_LOC_DUP) && !(where[i] & UXDP_LOC_COMP))
			fail_msg("chunk %u twice in place 0x%x", i, where[i]);

		/* A chunk the application never posted (TX side, or
		 * no_fill) is its own. */
		if (!w)
			w = UXDP_LOC_APP;
		if (w & (w - 1))
			fail_msg("chunk %u in places 0x%x", i, where[i]);
	}
	free(where);
}

/*
 * Run a stream from e[0] to e[1] (and back, bidir) single-threaded:
 * transmit a batch, kick, poll the receiving device, read, until every
 * packet is read or @deadline_ms passes. Returns packets received.
 */
static uint32_t m_stream_batch(struct m_pair *p, int from, int to,
			       uint32_t batch);

static uint32_t m_stream(struct m_pair *p, int from, int to)
{
	return m_stream_batch(p, from, to, M_BATCH);
}

static uint32_t m_stream_batch(struct m_pair *p, int from, int to,
			       uint32_t batch)
{
	struct m_end *tx = &p->e[from], *rx = &p->e[to];
	const struct m_cfg *c = &p->cfg;
	uint32_t next = 0, got = 0, want = c->invalid_half ? c->npkts / 2 :
					   c->npkts;
	uint64_t deadline = t_now_ms() + 10000;

	tx->tx_next = tx->tx_outstanding = 0;
	rx->rx_expect = 0;
	tx->batch = rx->batch = batch;
	while (got < want && t_now_ms() < deadline) {
		int ev;

		m_tx_batch(tx, c, &next);
		if (c->poll_tx) {
			ev = uxdp_xsk_poll(tx->xsk, POLLOUT, 1000);
			assert_true(ev >= 0);
		} else if (uxdp_ring_needs_wakeup(uxdp_xsk_tx_ring(tx->xsk))) {
			int err = uxdp_xsk_sendto(tx->xsk);

			assert_true(err == 0 || err == -EAGAIN);
		}
		/* A nic's TX ring is serviced by its own polls: the pull
		 * from the socket, the send onto the wire. */
		if (m_zc)
			uxdp_dev_poll(tx->dev, 0, M_BATCH);
		m_reap(tx);
		uxdp_dev_poll(rx->dev, 0, M_BATCH);
		if (c->poll_rx) {
			ev = uxdp_xsk_poll(rx->xsk, POLLIN, 0);
			assert_true(ev >= 0);
			if (!(ev & POLLIN) && next == c->npkts &&
			    !uxdp_ring_count(uxdp_xsk_tx_ring(tx->xsk)))
				break;	/* nothing more will come */
		}
		got += m_rx(rx, c);
		if (c->no_release_rx || c->no_fill) {
			if (next == c->npkts &&
			    !uxdp_ring_count(uxdp_xsk_tx_ring(tx->xsk)))
				break;
		}
	}
	return got;
}

static struct uxdp_xsk_stats m_st(struct m_end *e)
{
	struct uxdp_xsk_stats st;

	assert_int_equal(uxdp_xsk_stats(e->xsk, &st), 0);
	return st;
}

/* The standard case: npkts sent, all received and checked, audit. */
static void m_run(const struct m_cfg *c)
{
	struct m_pair p;
	uint32_t got;

	m_pair_up(&p, c, false);
	got = m_stream(&p, 0, 1);
	assert_int_equal(got, c->npkts);
	assert_int_equal(p.e[1].rx_expect, c->npkts);
	m_pair_down(&p);
}

/* ---- the cases ----------------------------------------------------------------- */

static void test_send_receive(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	m_run(&c);
}

static void test_send_receive_2k_frame(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.frame_size = 2048;
	m_run(&c);
}

static void test_send_receive_many(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.npkts = 20000;
	m_run(&c);
}

static void test_send_receive_single_pkt(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.npkts = 1;
	m_run(&c);
}

/* Packets of every size up to the largest a 4K frame holds here. */
static void test_send_receive_sizes(void **state)
{
	static const uint32_t lens[] = { 60, 64, 128, 1024, 1500, 3000 };
	struct m_cfg c;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		/* The nic's MTU is 1500 (veth's is raised for this test). */
		if (m_zc && lens[i] > 1514)
			continue;
		m_default(&c);
		c.pkt_len = lens[i];
		c.npkts = 512;
		m_run(&c);
	}
}

/* SEND_RECEIVE_UNALIGNED: every other packet 32 bytes before its frame,
 * across the page boundary (unaligned mode only). */
static void test_send_receive_unaligned(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.unaligned = true;
	c.unaligned_off = -32;
	m_run(&c);
}

static void test_poll_rx_tx(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.poll_rx = c.poll_tx = true;
	m_run(&c);
}

/* POLL_RXQ_FULL: no traffic, poll(POLLIN) times out. POLL_TXQ_FULL: a TX
 * ring filled while nothing consumes it (its device is down), poll(POLLOUT)
 * times out. */
static void test_poll_timeouts(void **state)
{
	struct m_cfg c;
	struct m_pair p;
	struct uxdp_ring *tx;
	uint32_t idx, n, i;
	uint64_t t0;

	(void)state;
	m_default(&c);
	m_pair_up(&p, &c, false);
	t0 = t_now_ms();
	assert_int_equal(uxdp_xsk_poll(p.e[1].xsk, POLLIN, 100), 0);
	assert_true(t_now_ms() - t0 >= 90);
	uxdp_dev_down(p.e[0].dev);
	/* The TX ring full of one packet, many times. */
	tx = uxdp_xsk_tx_ring(p.e[0].xsk);
	m_write_pkt(uxdp_umem_area(p.e[0].umem), 64, 0);
	n = uxdp_ring_prod_reserve_batch(tx, UXDP_XSK_RING_DEFAULT, &idx);
	assert_int_equal(n, UXDP_XSK_RING_DEFAULT);
	for (i = 0; i < n; i++)
		*uxdp_ring_desc(tx, idx + i) = (struct uxdp_desc){ 0, 64, 0 };
	uxdp_ring_prod_submit(tx, n);
	t0 = t_now_ms();
	assert_int_equal(uxdp_xsk_poll(p.e[0].xsk, POLLOUT, 100), 0);
	assert_true(t_now_ms() - t0 >= 90);
	/* Down, the descriptors were not consumed: they go once it is up
	 * (each kick sends 32; the receiver takes them). */
	assert_int_equal(uxdp_dev_up(p.e[0].dev), 0);
	for (i = 0; i < 200 && uxdp_ring_count(tx) > n / 2; i++) {
		uxdp_xsk_sendto(p.e[0].xsk);
		m_reap(&p.e[0]);
		uxdp_dev_poll(p.e[1].dev, 0, M_BATCH);
	}
	assert_int_equal(uxdp_xsk_poll(p.e[0].xsk, POLLOUT, 0), POLLOUT);
	m_pair_down(&p);
}

/* UMEM_HEADROOM: a frame headroom of 128 moves every packet by it. */
static void test_umem_headroom(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.headroom = 128;
	m_run(&c);
}

/* BIDIRECTIONAL: a stream each way, then the directions swapped. */
static void test_bidirectional(void **state)
{
	struct m_cfg c;
	struct m_pair p;

	(void)state;
	m_default(&c);
	c.npkts = 2048;
	m_pair_up(&p, &c, true);
	assert_int_equal(m_stream(&p, 0, 1), c.npkts);
	assert_int_equal(m_stream(&p, 1, 0), c.npkts);
	assert_int_equal(m_stream(&p, 0, 1), c.npkts);
	m_pair_down(&p);
}

/* STAT_RX_DROPPED: 256-byte packets; a headroom that leaves 192 bytes of
 * room for every other one... here every packet is too big for one
 * socket's frames: rx_dropped counts them all. */
static void test_stat_rx_dropped(void **state)
{
	struct m_cfg c;
	struct m_pair p;
	uint32_t next = 0;
	int i;

	(void)state;
	m_default(&c);
	c.frame_size = 2048;
	c.pkt_len = 1400;
	c.npkts = 100;
	m_pair_up(&p, &c, false);
	/* The receiver's frames: 2048 - headroom - 256 < 1400. */
	uxdp_dev_down(p.e[1].dev);
	assert_int_equal(uxdp_xsk_destroy(p.e[1].xsk), 0);
	uxdp_map_destroy(p.e[1].map);
	assert_int_equal(uxdp_umem_destroy(p.e[1].umem), 0);
	c.headroom = 512;
	m_end_sock(&p.e[1], &c, UXDP_XSK_F_NO_TX);
	m_fill(&p.e[1], &c);
	assert_int_equal(uxdp_dev_up(p.e[1].dev), 0);
	c.headroom = 0;
	for (i = 0; i < 100 && (next < c.npkts ||
				uxdp_ring_count(uxdp_xsk_tx_ring(p.e[0].xsk)));
	     i++) {
		m_tx_batch(&p.e[0], &c, &next);
		uxdp_xsk_sendto(p.e[0].xsk);
		m_reap(&p.e[0]);
		uxdp_dev_poll(p.e[1].dev, 0, M_BATCH);
	}
	uxdp_dev_poll(p.e[1].dev, 0, M_BATCH);
	assert_int_equal(m_st(&p.e[1]).rx_dropped, c.npkts);
	assert_int_equal(uxdp_ring_count(uxdp_xsk_rx_ring(p.e[1].xsk)), 0);
	m_pair_down(&p);
}

/* STAT_TX_INVALID: every other packet 9001 bytes long. */
static void test_stat_tx_invalid(void **state)
{
	struct m_cfg c;
	struct m_pair p;

	(void)state;
	m_default(&c);
	c.invalid_half = true;
	m_pair_up(&p, &c, false);
	assert_int_equal(m_stream(&p, 0, 1), c.npkts / 2);
	assert_int_equal(m_st(&p.e[0]).tx_invalid_descs, c.npkts / 2);
	m_pair_down(&p);
}

/* STAT_RX_FULL: 1536 sent, the RX ring never read: what does not fit is
 * counted in rx_ring_full (the fill ring has entries to spare, or the
 * copy would be counted in rx_dropped instead). */
static void test_stat_rx_full(void **state)
{
	struct m_cfg c;
	struct m_pair p;

	(void)state;
	m_default(&c);
	/* 1024 frames on the fill ring, an RX ring of half that. */
	c.rx_size = 512;
	c.npkts = 1536;
	c.no_release_rx = true;
	m_pair_up(&p, &c, false);
	m_stream(&p, 0, 1);
	assert_true(m_st(&p.e[1]).rx_ring_full > 0);
	assert_int_equal(m_st(&p.e[1]).rx_ring_full +
			 uxdp_ring_count(uxdp_xsk_rx_ring(p.e[1].xsk)),
			 c.npkts);
	m_pair_down(&p);
}

/* STAT_FILL_EMPTY: the fill ring never populated. */
static void test_stat_fill_empty(void **state)
{
	struct m_cfg c;
	struct m_pair p;

	(void)state;
	m_default(&c);
	c.no_fill = true;
	c.npkts = 256;
	m_pair_up(&p, &c, false);
	assert_int_equal(m_stream(&p, 0, 1), 0);
	assert_true(m_st(&p.e[1]).rx_fill_ring_empty_descs > 0);
	assert_int_equal(m_st(&p.e[1]).rx_dropped, c.npkts);
	m_pair_down(&p);
}

/* XDP_PROG_CLEANUP, adapted (one socket per queue here): a stream, then
 * the socket replaced by a new one in the same map slot, another stream. */
static void test_prog_cleanup(void **state)
{
	struct m_cfg c;
	struct m_pair p;

	(void)state;
	m_default(&c);
	c.npkts = 1024;
	m_pair_up(&p, &c, false);
	assert_int_equal(m_stream(&p, 0, 1), c.npkts);
	assert_int_equal(uxdp_xsk_destroy(p.e[1].xsk), 0);
	assert_null(uxdp_map_lookup(p.e[1].map, 0));
	uxdp_map_destroy(p.e[1].map);
	assert_int_equal(uxdp_umem_destroy(p.e[1].umem), 0);
	m_end_sock(&p.e[1], &c, UXDP_XSK_F_NO_TX);
	m_fill(&p.e[1], &c);
	assert_int_equal(m_stream(&p, 0, 1), c.npkts);
	m_pair_down(&p);
}

/* XDP_ADJUST_TAIL_SHRINK / _GROW: the program moves the end by -4 / +4. */
static void test_adjust_tail(void **state)
{
	struct m_cfg c;

	(void)state;
	m_default(&c);
	c.pkt_len = 128;
	c.tail_delta = -4;
	m_run(&c);
	c.tail_delta = 4;
	m_run(&c);
}

/* TX_QUEUE_CONSUMER: 33 packets; one sendto moves the TX consumer by
 * exactly 32 (copy mode's batch). */
static void test_tx_queue_consumer(void **state)
{
	struct m_cfg c;
	struct m_pair p;
	uint32_t next = 0;
	struct uxdp_ring *tx;

	(void)state;
	m_default(&c);
	c.npkts = 33;
	m_pair_up(&p, &c, false);
	tx = uxdp_xsk_tx_ring(p.e[0].xsk);
	assert_int_equal(m_tx_batch(&p.e[0], &c, &next), 33);
	assert_int_equal(uxdp_xsk_sendto(p.e[0].xsk), -EAGAIN);
	assert_int_equal(uxdp_ring_count(tx), 1);
	assert_int_equal(uxdp_xsk_sendto(p.e[0].xsk), 0);
	assert_int_equal(uxdp_ring_count(tx), 0);
	m_pair_down(&p);
}

/* TEARDOWN: ten set-ups and teardowns, a stream each. */
static void test_teardown(void **state)
{
	struct m_cfg c;
	int i;

	(void)state;
	m_default(&c);
	c.npkts = 256;
	for (i = 0; i < 10; i++)
		m_run(&c);
}

/* Invalid descriptors over a real pair: 4001-byte frames, unaligned,
 * a UMEM whose end is not page aligned (UNALIGNED_INV_DESC_4001_FRAME_SIZE):
 * a packet straddling the end is invalid, one ending at it valid. */
static void test_inv_desc_4001(void **state)
{
	struct m_cfg c;
	struct m_pair p;
	struct uxdp_ring *tx;
	uint32_t idx;
	uint64_t end;
	void *area;

	(void)state;
	m_default(&c);
	c.frame_size = 4001;
	c.unaligned = true;
	m_pair_up(&p, &c, false);
	end = p.e[0].size;
	area = uxdp_umem_area(p.e[0].umem);
	m_write_pkt((char *)area + end - 64, 64, 0);
	tx = uxdp_xsk_tx_ring(p.e[0].xsk);
	assert_int_equal(uxdp_ring_prod_reserve(tx, 3, &idx), 3);
	*uxdp_ring_desc(tx, idx) = (struct uxdp_desc){ end - 64, 64, 0 };
	*uxdp_ring_desc(tx, idx + 1) = (struct uxdp_desc){ end - 63, 64, 0 };
	*uxdp_ring_desc(tx, idx + 2) = (struct uxdp_desc){ 0, 4002, 0 };
	uxdp_ring_prod_submit(tx, 3);
	assert_int_equal(uxdp_xsk_sendto(p.e[0].xsk), 0);
	assert_int_equal(m_st(&p.e[0]).tx_invalid_descs, 2);
	uxdp_dev_poll(p.e[1].dev, 0, M_BATCH);
	assert_int_equal(uxdp_ring_count(uxdp_xsk_rx_ring(p.e[1].xsk)), 1);
	m_pair_down(&p);
}

/* RUN_TO_COMPLETION with threads: the receiving device polled by its own
 * thread, the receiver sleeping in poll() on its socket. */
struct m_rx_thread {
	struct m_pair *p;
	uint32_t got;
};

static void *m_rx_thread_fn(void *arg)
{
	struct m_rx_thread *t = arg;
	struct m_end *rx = &t->p->e[1];
	uint64_t deadline = t_now_ms() + 10000;

	while (t->got < t->p->cfg.npkts && t_now_ms() < deadline) {
		if (uxdp_xsk_poll(rx->xsk, POLLIN, 1000) & POLLIN)
			__atomic_store_n(&t->got,
					 t->got + m_rx(rx, &t->p->cfg),
					 __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_threaded_poll(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po, .idle_us = 20000000);
	struct m_cfg c;
	struct m_pair p;
	struct m_rx_thread t = { .p = &p };
	pthread_t th;
	uint32_t next = 0;
	uint64_t deadline;

	(void)state;
	m_default(&c);
	c.npkts = T_TSAN ? 2048 : 16384;
	m_pair_up(&p, &c, false);
	assert_int_equal(uxdp_dev_start(p.e[1].dev, &po), 0);
	if (m_zc)
		assert_int_equal(uxdp_dev_start(p.e[0].dev, &po), 0);
	assert_int_equal(pthread_create(&th, NULL, m_rx_thread_fn, &t), 0);
	deadline = t_now_ms() + 10000;
	while (next < c.npkts && t_now_ms() < deadline) {
		/* xskxceiver's pacing: no more in flight than the
		 * receiver's UMEM holds, or copy mode drops for want of
		 * fill entries (rx_dropped), as the kernel's would. The
		 * nic holds what finds no descriptor in its wire FIFO
		 * (512), and drops past that (rx_fifo_dropped), as a NIC
		 * out of descriptors drops. */
		if (next - __atomic_load_n(&t.got, __ATOMIC_ACQUIRE) >
		    (m_zc ? UXDP_NIC_DEFAULT_WIRE_FIFO : M_FRAMES) - M_BATCH) {
			if (uxdp_ring_count(uxdp_xsk_tx_ring(p.e[0].xsk)))
				uxdp_xsk_sendto(p.e[0].xsk);
			m_reap(&p.e[0]);
			sched_yield();
			continue;
		}
		m_tx_batch(&p.e[0], &c, &next);
		if (uxdp_ring_needs_wakeup(uxdp_xsk_tx_ring(p.e[0].xsk)))
			uxdp_xsk_sendto(p.e[0].xsk);
		m_reap(&p.e[0]);
	}
	while (uxdp_ring_count(uxdp_xsk_tx_ring(p.e[0].xsk)) &&
	       t_now_ms() < deadline)
		uxdp_xsk_sendto(p.e[0].xsk);
	pthread_join(th, NULL);
	uxdp_dev_stop(p.e[1].dev);
	if (m_zc)
		uxdp_dev_stop(p.e[0].dev);
	assert_int_equal(t.got, c.npkts);
	assert_int_equal(m_st(&p.e[1]).rx_dropped, 0);
	m_pair_down(&p);
}

/*
 * HW_SW_MIN_RING_SIZE / HW_SW_MAX_RING_SIZE (zero-copy on the nic): the
 * hardware rings at their smallest (8 descriptors) and largest (32768),
 * streams in batches of 1 and then of 63 descriptors.
 */
static void m_ring_size_run(uint32_t ring)
{
	struct m_cfg c;
	struct m_pair p;
	uint32_t got;

	m_nic_ring = ring;
	m_default(&c);
	c.npkts = 2048;
	m_pair_up(&p, &c, false);
	/* Batch 1: one descriptor per round. */
	got = m_stream_batch(&p, 0, 1, 1);
	assert_int_equal(got, c.npkts);
	got = m_stream_batch(&p, 0, 1, 63);
	assert_int_equal(got, c.npkts);
	m_pair_down(&p);
	m_nic_ring = 0;
}

static void test_hw_sw_min_ring_size(void **state)
{
	(void)state;
	m_ring_size_run(UXDP_NIC_MIN_RING);
}

static void test_hw_sw_max_ring_size(void **state)
{
	(void)state;
	m_ring_size_run(UXDP_NIC_MAX_RING);
}

static int m_group(bool zc, bool unaligned)
{
	m_zc = zc;
	m_unaligned = unaligned;
	return 0;
}

static int m_group_copy(void **state)
{
	(void)state;
	return m_group(false, false);
}

static int m_group_copy_unaligned(void **state)
{
	(void)state;
	return m_group(false, true);
}

static int m_group_zc(void **state)
{
	(void)state;
	return m_group(true, false);
}

static int m_group_zc_unaligned(void **state)
{
	(void)state;
	return m_group(true, true);
}

/*
 * The cases of every group: copy (veth) and zero-copy (nic loop), each
 * with an aligned and an unaligned UMEM (m_default() takes the group's).
 */
#define M_ALL_GROUPS							\
	cmocka_unit_test(test_send_receive),				\
	cmocka_unit_test(test_send_receive_2k_frame),			\
	cmocka_unit_test(test_send_receive_many),			\
	cmocka_unit_test(test_send_receive_single_pkt),			\
	cmocka_unit_test(test_send_receive_sizes),			\
	cmocka_unit_test(test_poll_rx_tx),				\
	cmocka_unit_test(test_umem_headroom),				\
	cmocka_unit_test(test_bidirectional),				\
	cmocka_unit_test(test_stat_tx_invalid),				\
	cmocka_unit_test(test_stat_rx_full),				\
	cmocka_unit_test(test_prog_cleanup),				\
	cmocka_unit_test(test_adjust_tail),				\
	cmocka_unit_test(test_teardown),				\
	cmocka_unit_test(test_threaded_poll)

/*
 * Copy mode only (aligned and unaligned): what a zero-copy driver does
 * otherwise. poll_timeouts takes the TX device down under a full ring
 * (the nic's own TX ring would hold them); stat_rx_dropped and
 * stat_fill_empty count the copy's drops (a nic out of fill entries drops
 * in its FIFO, rx_fifo_dropped); tx_queue_consumer checks copy mode's TX
 * batch of 32.
 */
#define M_COPY_ONLY							\
	cmocka_unit_test(test_poll_timeouts),				\
	cmocka_unit_test(test_stat_rx_dropped),				\
	cmocka_unit_test(test_stat_fill_empty),				\
	cmocka_unit_test(test_tx_queue_consumer)

/* The nic's hardware ring sizes: zero-copy only, both UMEM modes. */
#define M_ZC_ONLY							\
	cmocka_unit_test(test_hw_sw_min_ring_size),			\
	cmocka_unit_test(test_hw_sw_max_ring_size)

int main(void)
{
	/* Unaligned-only cases are not in the aligned groups: they need
	 * addresses an aligned UMEM refuses (32 B before a frame; 4001-byte
	 * chunks). */
	const struct CMUnitTest copy[] = { M_ALL_GROUPS, M_COPY_ONLY };
	const struct CMUnitTest copy_unaligned[] = {
		M_ALL_GROUPS, M_COPY_ONLY,
		cmocka_unit_test(test_send_receive_unaligned),
		/* Copy only: it checks the copy path's verdicts and
		 * completions of one sendto (test_xsk.c covers zero-copy's
		 * invalid descriptors). */
		cmocka_unit_test(test_inv_desc_4001),
	};
	const struct CMUnitTest zc[] = { M_ALL_GROUPS, M_ZC_ONLY };
	const struct CMUnitTest zc_unaligned[] = {
		M_ALL_GROUPS, M_ZC_ONLY,
		cmocka_unit_test(test_send_receive_unaligned),
	};
	int fails;

	fails = cmocka_run_group_tests_name("copy (veth), aligned", copy,
					    m_group_copy, NULL);
	fails += cmocka_run_group_tests_name("copy (veth), unaligned",
					     copy_unaligned,
					     m_group_copy_unaligned, NULL);
	fails += cmocka_run_group_tests_name("zero-copy (nic loop), aligned",
					     zc, m_group_zc, NULL);
	fails += cmocka_run_group_tests_name("zero-copy (nic loop), unaligned",
					     zc_unaligned,
					     m_group_zc_unaligned, NULL);
	return fails;
}
