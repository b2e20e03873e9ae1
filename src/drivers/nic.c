/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic: a multi-queue NIC model with hardware descriptor rings
 * (include/uxdp/nic.h).
 *
 * Each queue pair is what ice's zero-copy path looks like from the driver:
 * an RX descriptor ring the driver posts buffers to (rx_hw: the address the
 * hardware writes to, the length and done bit it writes back) beside a
 * software ring of the buffer heads (rx_sw), refilled ice's way, and a TX
 * descriptor ring. The "hardware" is a few loops run inside the queue's
 * poll, right where the real hardware's work would become visible: before
 * the clean loop it writes up to budget packets from the wire into posted
 * descriptors, and after the refill it sends what the TX ring holds.
 *
 * Indices are free-running u32, masked on access. RX, driver side: ntu
 * (next to use: refill posts there), ntc (next to clean); hardware side:
 * tail (posted up to here: the doorbell, written once per refill) and
 * hw_head (next descriptor the hardware writes). ntc <= hw_head <= tail ==
 * ntu, and ntu - ntc <= ring - 1. TX: tx_tail (posted by xdp_xmit under the
 * queue's lock, or by the poller for a zero-copy socket), tx_head (next the
 * hardware sends), tx_ntc (next the driver cleans).
 *
 * Locks: napi_lock is held for the whole of a poll and by whoever changes
 * a queue under its poller's feet (xsk_pool_setup, stop): the kernel
 * driver's napi_disable(). tx_lock serialises TX posters (xdp_xmit from any
 * thread, the poller's zero-copy pull). A wire FIFO's lock serialises the
 * loop peer's senders. Order: napi_lock, then tx_lock or a peer's wire
 * lock; nothing takes napi_lock holding another.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/driver.h>
#include <uxdp/nic.h>
#include <uxdp/pool.h>
#include <uxdp/umem.h>

#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/* Own chunks: 2 KiB hold a packet of up to 1472 bytes with the XDP
 * headroom before it and a frame's tailroom after it; longer packets get
 * 4 KiB. */
#define NIC_CHUNK		2048
#define NIC_ROOM(chunk)		((chunk) - UXDP_PACKET_HEADROOM - \
				 UXDP_FRAME_TAILROOM)
/* A wire FIFO slot holds the longest frame xdp_xmit takes. */
#define NIC_SLOT		1536
_Static_assert(NIC_SLOT >= UXDP_NIC_MAX_TX_LEN, "a wire slot holds a frame");
/* Bytes of each flow's packet kept per flow: headers and the start of the
 * payload, written with one fixed-size copy. */
#define NIC_HDR			64
#define NIC_DD			1U	/* descriptor done (written back) */
#define NIC_BATCH		64	/* TX clean and send: stack arrays */
#define NIC_FLAGS		(UXDP_NIC_F_SINGLE_ALLOC | UXDP_NIC_F_NO_GEN)
#define NIC_DPORT		9	/* discard */
#define NIC_DADDR		0xc0a80001U	/* 192.168.0.1 */

/* The longest RSS input: IPv6 with ports (saddr, daddr, sport, dport). */
#define RSS_IN_MAX		36

struct nic_rx_desc {
	unsigned char *addr;	/* driver: where the packet goes */
	uint32_t len;		/* hardware: the packet's length */
	uint32_t status;	/* hardware: NIC_DD when written */
};

enum { NIC_TX_FRAME, NIC_TX_XSK };

struct nic_tx_desc {
	void *ptr;		/* the frame, or a packet in a socket's UMEM */
	uint32_t len;
	uint32_t kind;
};

struct nic_flow_hdr {
	unsigned char b[NIC_HDR];
};

/*
 * A queue's wire FIFO: packets a loop peer sent, waiting for descriptors.
 * Producers are the peer's pollers (any of them: RSS decides), under the
 * lock; the consumer is this queue's poller, lock-free.
 */
struct nic_wire {
	struct uxdp_spinlock lock;
	uint32_t prod;			/* under lock; store-release */
	uint32_t cons __attribute__((aligned(UXDP_CACHE_LINE)));
	uint32_t size;
	uint16_t *len;
	unsigned char *slots;		/* size * NIC_SLOT bytes */
};

struct nic_priv;

struct nic_q {
	/* ---- The poller's: one thread at a time, under napi_lock. ---- */
	struct uxdp_spinlock napi_lock;
	struct nic_priv *priv;
	uint32_t index;
	bool single;			/* UXDP_NIC_F_SINGLE_ALLOC */
	bool primed;			/* the ring was filled since up */
	struct uxdp_umem *umem;		/* ours */
	struct uxdp_pool *pool;		/* ours */
	struct uxdp_pool *rx_pool;	/* refills from: ours, the socket's */
	struct uxdp_pool *xp;		/* a zero-copy socket's, or NULL */
	void *xsk_area;			/* its UMEM */
	struct uxdp_rxq_info *info;
	struct nic_rx_desc *rx_hw;
	struct uxdp_buff **rx_sw;
	uint32_t rx_mask;
	uint32_t thresh;
	uint32_t ntu, ntc, tail, hw_head;
	uint32_t rx_room;		/* longest packet a buffer holds */
	uint32_t own_room;
	/* Generator: this queue's flows, round robin. */
	const struct nic_flow_hdr *flows;
	uint32_t nflows;
	uint32_t flow_next;
	uint32_t rx_len;
	bool gen_limited;
	uint64_t gen_limit;
	uint64_t generated;		/* relaxed: rx_pending reads it */
	/* rx_pps * nflows / flows per second; its timer is rx_fd. */
	struct uxdp_pacer pace;
	struct nic_wire *wire;		/* set while down; read acquire */
	/* TX, the poller's side. */
	struct nic_tx_desc *tx_ring;
	uint32_t tx_mask;
	uint32_t tx_head;
	uint32_t tx_ntc;		/* store-release: posters read it */

	/* ---- TX posters: any thread, under tx_lock. ---- */
	struct uxdp_spinlock tx_lock __attribute__((aligned(UXDP_CACHE_LINE)));
	uint32_t tx_tail;		/* store-release: the hardware reads */

	/* ---- Counters: one writer per field at a time. ---- */
	struct uxdp_nic_stats st __attribute__((aligned(UXDP_CACHE_LINE)));
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct nic_priv {
	struct uxdp_dev *dev;
	uint32_t nq;
	uint32_t flags;
	uint32_t rx_len;
	uint32_t nflows;
	uint32_t wire_fifo;
	uint8_t key[UXDP_NIC_RSS_KEY_LEN];
	uint8_t table[UXDP_NIC_RSS_TABLE_SIZE];
	/* The key's contribution of each value of each input byte. */
	uint32_t lut[RSS_IN_MAX][256];
	unsigned char *payload;		/* a whole packet: the shared tail */
	struct nic_flow_hdr *flow_hdrs;	/* every flow, grouped by queue */
	struct uxdp_dev *peer;		/* loop: atomic; NULL: nowhere */
	struct nic_q *q[UXDP_NIC_MAX_QUEUES];
};

/* Microsoft's example key ("Verifying the RSS Hash Calculation"), the
 * default of most NICs and of DPDK's testpmd. */
static const uint8_t nic_default_key[UXDP_NIC_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* uxdp_nic_loop() and unlink change both ends of a cable at once. */
static pthread_mutex_t nic_loop_lock = PTHREAD_MUTEX_INITIALIZER;

static inline struct nic_priv *nic_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

static bool is_nic(const struct uxdp_dev *dev)
{
	return dev && !strcmp(uxdp_dev_kind(dev), "nic");
}

/*
 * Counters: each field has one writer at a time (the poller, a lock's
 * holder); readers on other threads use relaxed loads, so a relaxed load
 * and store (plain moves) are enough and are not a data race.
 */
static inline void st_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

static inline void st_set32(uint32_t *c, uint32_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

/* ---- RSS: the Toeplitz hash ---------------------------------------------- */

/* Bit @bit of @key (bit 0: the most significant bit of key[0]). */
static inline uint32_t key_bit(const uint8_t *key, size_t bit)
{
	return (key[bit >> 3] >> (7 - (bit & 7))) & 1;
}

UXDP_API uint32_t uxdp_nic_toeplitz(const uint8_t *key, size_t key_len,
				    const void *data, size_t len)
{
	const uint8_t *in = data;
	uint32_t hash = 0, win;
	size_t i, next;
	int b;

	if (!key || (len && !data) || key_len < len + 4)
		return 0;
	/* The 32-bit window of the key lined up with the current input
	 * bit; it slides one key bit per input bit. */
	win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
	      (uint32_t)key[2] << 8 | key[3];
	next = 32;
	for (i = 0; i < len; i++) {
		for (b = 7; b >= 0; b--) {
			if ((in[i] >> b) & 1)
				hash ^= win;
			/* The key is long enough for every bit read here
			 * (checked above) except past the last input bit. */
			if (next < key_len * 8)
				win = win << 1 | key_bit(key, next);
			next++;
		}
	}
	return hash;
}

/* The 32 key bits from bit @bit on. */
static uint32_t key_window(const uint8_t *key, size_t bit)
{
	uint32_t w = 0;
	int i;

	for (i = 0; i < 32; i++)
		w = w << 1 | key_bit(key, bit + (size_t)i);
	return w;
}

/*
 * Per input position and byte value, what that byte XORs into the hash:
 * the hash is linear in the input bits, so it is the XOR of one table
 * entry per input byte (12 loads for IPv4 with ports, 36 for IPv6). Bit b
 * (7: the most significant) of byte pos XORs in the key window at bit
 * pos * 8 + 7 - b; test_nic checks the tables against uxdp_nic_toeplitz.
 */
static void rss_lut_init(struct nic_priv *p)
{
	uint32_t win[8], pos, v;
	int b;

	_Static_assert(RSS_IN_MAX + 4 <= UXDP_NIC_RSS_KEY_LEN,
		       "the key covers the longest input");
	for (pos = 0; pos < RSS_IN_MAX; pos++) {
		for (b = 0; b < 8; b++)
			win[b] = key_window(p->key, pos * 8 + 7 - (size_t)b);
		for (v = 0; v < 256; v++) {
			uint32_t h = 0;

			for (b = 0; b < 8; b++)
				if (v >> b & 1)
					h ^= win[b];
			p->lut[pos][v] = h;
		}
	}
}

static inline uint32_t rss_hash(const struct nic_priv *p, const uint8_t *in,
				uint32_t n)
{
	uint32_t h = 0, i;

	for (i = 0; i < n; i++)
		h ^= p->lut[i][in[i]];
	return h;
}

/*
 * IPv6: the 4-tuple when the fixed header is followed by UDP or TCP, the
 * 2-tuple (addresses) otherwise: an extension header, a fragment (next
 * header 44: no ports in later fragments), or ports cut off. As ixgbe and
 * i40e do without extension-header parsing.
 */
static uint32_t rss_pkt_hash6(const struct nic_priv *p, const uint8_t *pkt,
			      uint32_t len)
{
	const uint8_t *ip = pkt + 14;
	uint8_t in[RSS_IN_MAX];

	if (len < 14 + 40 || (ip[0] >> 4) != 6)
		return 0;
	memcpy(in, ip + 8, 32);
	if ((ip[6] == 6 || ip[6] == 17) && 14 + 40 + 4 <= len) {
		memcpy(in + 32, ip + 40, 4);
		return rss_hash(p, in, 36);
	}
	return rss_hash(p, in, 32);
}

/*
 * The RSS input of a packet: the 4-tuple of unfragmented IPv4 UDP or TCP,
 * the 2-tuple of other IPv4, IPv6 likewise (rss_pkt_hash6), nothing (hash
 * 0) for anything else. Every read is within @len.
 */
static uint32_t rss_pkt_hash(const struct nic_priv *p, const uint8_t *pkt,
			     uint32_t len)
{
	const uint8_t *ip = pkt + 14;
	uint32_t ihl;
	uint8_t in[RSS_IN_MAX];
	bool frag;

	if (len >= 14 && pkt[12] == 0x86 && pkt[13] == 0xdd)
		return rss_pkt_hash6(p, pkt, len);
	if (len < 14 + 20 || pkt[12] != 0x08 || pkt[13] != 0x00 ||
	    (ip[0] >> 4) != 4)
		return 0;
	ihl = (uint32_t)(ip[0] & 15) * 4;
	if (ihl < 20 || 14 + ihl > len)
		return 0;
	memcpy(in, ip + 12, 8);
	/* More fragments, or a fragment offset: no ports to hash. */
	frag = (ip[6] & 0x3f) || ip[7];
	if ((ip[9] == 6 || ip[9] == 17) && !frag && 14 + ihl + 4 <= len) {
		memcpy(in + 8, ip + ihl, 4);
		return rss_hash(p, in, 12);
	}
	return rss_hash(p, in, 8);
}

static inline uint32_t rss_queue(const struct nic_priv *p, uint32_t hash)
{
	return p->table[hash & (UXDP_NIC_RSS_TABLE_SIZE - 1)];
}

/* ---- The generator's packets --------------------------------------------- */

static void flow_tuple(const struct nic_priv *p, uint32_t f,
		       struct uxdp_nic_flow *fl)
{
	uint8_t in[RSS_IN_MAX];

	fl->saddr = 0x0a000000U | (f + 1);
	fl->daddr = NIC_DADDR;
	fl->sport = (uint16_t)(1024 + f % 60000);
	fl->dport = NIC_DPORT;
	in[0] = (uint8_t)(fl->saddr >> 24);
	in[1] = (uint8_t)(fl->saddr >> 16);
	in[2] = (uint8_t)(fl->saddr >> 8);
	in[3] = (uint8_t)fl->saddr;
	in[4] = (uint8_t)(fl->daddr >> 24);
	in[5] = (uint8_t)(fl->daddr >> 16);
	in[6] = (uint8_t)(fl->daddr >> 8);
	in[7] = (uint8_t)fl->daddr;
	in[8] = (uint8_t)(fl->sport >> 8);
	in[9] = (uint8_t)fl->sport;
	in[10] = (uint8_t)(fl->dport >> 8);
	in[11] = (uint8_t)fl->dport;
	fl->hash = rss_hash(p, in, 12);
	fl->queue = rss_queue(p, fl->hash);
}

static inline void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void put32(uint8_t *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b + 2, v);
}

/*
 * Flow @f's packet of @len bytes into @b (at least MAX(len, NIC_HDR)
 * bytes): Ethernet, IPv4 (checksummed, DF, TTL 64), UDP (no checksum, as
 * IPv4 allows), then the payload: each byte the low byte of its offset.
 */
static void flow_packet(const struct nic_priv *p, uint32_t f, uint8_t *b,
			uint32_t len)
{
	static const uint8_t macs[12] = {
		0x02, 0, 0, 0, 0, 0x02,	/* destination */
		0x02, 0, 0, 0, 0, 0x01,	/* source */
	};
	struct uxdp_nic_flow fl;
	uint32_t i, sum = 0, n = MAX(len, NIC_HDR);
	uint8_t *ip = b + 14, *udp = b + 34;

	flow_tuple(p, f, &fl);
	for (i = 0; i < n; i++)
		b[i] = (uint8_t)i;
	memcpy(b, macs, sizeof(macs));
	put16(b + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, len - 14);
	put16(ip + 4, 0);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	put16(ip + 10, 0);
	put32(ip + 12, fl.saddr);
	put32(ip + 16, fl.daddr);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum & 0xffff);
	put16(udp, fl.sport);
	put16(udp + 2, fl.dport);
	put16(udp + 4, len - 34);
	put16(udp + 6, 0);
}

/* Packets the queue's generator may put on the wire now, at most @max. */
static uint64_t gen_allowed(struct nic_q *q, uint64_t max, bool commit)
{
	uint64_t n = max;

	if (!q->nflows)
		return 0;
	if (q->gen_limited)
		n = MIN(n, q->gen_limit -
			__atomic_load_n(&q->generated, __ATOMIC_RELAXED));
	/* Once: the clock moves between two reads. */
	if (n) {
		uint64_t pace = uxdp_pacer_due(&q->pace, commit);

		n = MIN(n, pace);
	}
	return n;
}

/* ---- Receive: refill, the hardware, the clean loop ----------------------- */

static inline uint32_t rx_unused(const struct nic_q *q)
{
	return q->rx_mask - (q->ntu - q->ntc);
}

/* Up to @n buffers into @bufs, one batch call or one call per buffer. */
static inline uint32_t rx_alloc(struct nic_q *q, struct uxdp_buff **bufs,
				uint32_t n, uint64_t *calls)
{
	uint32_t i;

	if (!n)
		return 0;
	if (!q->single) {
		(*calls)++;
		return uxdp_pool_alloc_batch(q->rx_pool, bufs, n);
	}
	for (i = 0; i < n; i++) {
		struct uxdp_buff *b = uxdp_pool_alloc(q->rx_pool);

		(*calls)++;
		if (!b)
			break;
		bufs[i] = b;
	}
	return i;
}

/* Point descriptors [@slot, @slot + @n) at their buffers' data. */
static inline void rx_post(struct nic_q *q, uint32_t slot, uint32_t n)
{
	struct nic_rx_desc *d = &q->rx_hw[slot];
	struct uxdp_buff **b = &q->rx_sw[slot];
	uint32_t i;

	/* The batch path leaves data unset: where it goes is fixed by the
	 * head, as ice's precomputed xskb->dma. */
	for (i = 0; i < n; i++) {
		d[i].addr = (unsigned char *)b[i]->data_hard_start +
			    UXDP_PACKET_HEADROOM;
		d[i].status = 0;
	}
}

/*
 * Fill every unused descriptor in one go: from ntu to the end of the ring,
 * then from its start, and bump the tail once (ice_alloc_rx_bufs_zc).
 * Returns whether it got all it wanted.
 */
static bool rx_refill(struct nic_q *q)
{
	uint32_t size = q->rx_mask + 1, slot = q->ntu & q->rx_mask;
	uint32_t want = rx_unused(q), first = MIN(want, size - slot);
	uint32_t got, more = 0, total;
	uint64_t calls = 0;

	got = rx_alloc(q, &q->rx_sw[slot], first, &calls);
	rx_post(q, slot, got);
	if (got == first && want > first) {
		more = rx_alloc(q, q->rx_sw, want - first, &calls);
		rx_post(q, 0, more);
		st_add(&q->st.refill_wraps, 1);
	}
	total = got + more;
	if (total) {
		q->ntu += total;
		/*
		 * The doorbell: the hardware may use descriptors up to the
		 * tail from now on. No barrier: the "hardware" runs on this
		 * thread, in this poll (a real driver needs a write barrier
		 * before its MMIO write here).
		 */
		q->tail = q->ntu;
		st_add(&q->st.refills, 1);
		st_add(&q->st.refill_bufs, total);
	}
	if (total < want)
		st_add(&q->st.alloc_fail, 1);
	st_add(&q->st.alloc_calls, calls);
	return total == want;
}

/* The hardware: packets waiting in the wire FIFO into posted descriptors. */
static uint32_t hw_rx_wire(struct nic_q *q, struct nic_wire *w, uint32_t max,
			   uint64_t *bytes)
{
	uint32_t prod = uxdp_load_acquire(&w->prod);	/* C, pairs with B */
	uint32_t cons = w->cons, mask = w->size - 1, n = 0, oversize = 0;

	while (n < max && cons != prod) {
		uint32_t s = cons & mask, len = w->len[s];
		struct nic_rx_desc *d;

		cons++;
		if (uxdp_unlikely(len > q->rx_room)) {
			oversize++;
			continue;
		}
		d = &q->rx_hw[(q->hw_head + n) & q->rx_mask];
		memcpy(d->addr, w->slots + (size_t)s * NIC_SLOT, len);
		d->len = len;
		d->status = NIC_DD;
		*bytes += len;
		n++;
	}
	/* D, pairs with the senders' A: the slots are read. */
	uxdp_store_release(&w->cons, cons);
	if (oversize)
		st_add(&q->st.rx_oversize, oversize);
	return n;
}

/*
 * The hardware: the generator's packets into posted descriptors, each
 * flow's headers with one fixed-size copy. What finds no descriptor is
 * lost: the generator is a wire without a buffer.
 */
static uint32_t hw_rx_gen(struct nic_q *q, uint32_t max, uint32_t avail,
			  uint64_t *bytes)
{
	uint64_t offered = gen_allowed(q, max, true);
	uint32_t n = (uint32_t)MIN(offered, (uint64_t)avail), i;
	uint32_t len = q->rx_len, f = q->flow_next, nfl = q->nflows;
	const unsigned char *tailsrc = q->priv->payload + NIC_HDR;

	if (!offered) {
		/* Out of packets for now: the poller sleeps until the next
		 * tick. */
		uxdp_pacer_ack(&q->pace);
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct nic_rx_desc *d =
			&q->rx_hw[(q->hw_head + i) & q->rx_mask];

		/* Buffers hold at least NIC_HDR bytes past data (the
		 * smallest room is 128), so the copy is a constant 64
		 * bytes whatever the length. */
		memcpy(d->addr, q->flows[f].b, NIC_HDR);
		if (len > NIC_HDR)
			memcpy(d->addr + NIC_HDR, tailsrc, len - NIC_HDR);
		d->len = len;
		d->status = NIC_DD;
		if (++f == nfl)
			f = 0;
	}
	/* The packets not delivered were sent too: the flows move on. */
	q->flow_next = (uint32_t)((f + (offered - n)) % nfl);
	*bytes += (uint64_t)n * len;
	__atomic_store_n(&q->generated, q->generated + offered,
			 __ATOMIC_RELAXED);
	uxdp_pacer_sent(&q->pace, offered);
	st_add(&q->st.gen_packets, offered);
	if (offered > n)
		st_add(&q->st.rx_missed, offered - n);
	return n;
}

/* The hardware's receive: up to @budget packets into posted descriptors. */
static void hw_rx(struct nic_q *q, uint32_t budget)
{
	struct nic_wire *w = __atomic_load_n(&q->wire, __ATOMIC_ACQUIRE);
	uint32_t avail = q->tail - q->hw_head, n = 0;
	uint64_t bytes = 0;

	/* A loop peer's packets wait in the FIFO for descriptors. */
	if (w)
		n = hw_rx_wire(q, w, MIN(budget, avail), &bytes);
	q->hw_head += n;
	if (q->nflows && n < budget) {
		uint32_t k = hw_rx_gen(q, budget - n, avail - n, &bytes);

		q->hw_head += k;
		n += k;
	}
	if (n) {
		st_add(&q->st.rx_packets, n);
		st_add(&q->st.rx_bytes, bytes);
	}
}

/*
 * The driver's clean loop: done descriptors in order, at most @budget, each
 * buffer's length set, the program run on each contiguous run of the
 * software ring as it stands (no copy of the pointers).
 */
static uint32_t rx_clean(struct nic_q *q, struct uxdp_xdp_cpu *ctx,
			 uint32_t budget)
{
	uint32_t size = q->rx_mask + 1, n = 0;

	while (n < budget) {
		uint32_t s = (q->ntc + n) & q->rx_mask;
		uint32_t lim = MIN(budget - n, size - s), k;
		struct nic_rx_desc *d = &q->rx_hw[s];
		struct uxdp_buff **b = &q->rx_sw[s];

		for (k = 0; k < lim; k++) {
			if (!(d[k].status & NIC_DD))
				break;
			d[k].status = 0;
			if (q->single) {
				/* xsk_buff_alloc set data and data_meta;
				 * the old drivers wrote data_end only. */
				b[k]->data_end = (char *)b[k]->data + d[k].len;
			} else {
				uxdp_buff_set_size(b[k], d[k].len);
			}
		}
		if (!k)
			break;
		uxdp_rx_run_batch(ctx, b, k);
		n += k;
		if (k < lim)
			break;
	}
	q->ntc += n;
	return n;
}

/*
 * Every buffer the RX ring holds back to the pool it came from (down, a
 * socket's switch): no poll runs, and the pool's owner may be the poller's
 * thread, so the remote path. Packets written and not yet cleaned are
 * counted as drained.
 */
static void rx_release(struct uxdp_dev *dev, struct nic_q *q)
{
	uint32_t n = q->ntu - q->ntc, done = 0, drained = 0, i;

	while (done < n) {
		uint32_t s = (q->ntc + done) & q->rx_mask;
		uint32_t k = MIN(n - done, q->rx_mask + 1 - s);

		for (i = 0; i < k; i++) {
			if (q->rx_hw[s + i].status & NIC_DD)
				drained++;
			q->rx_hw[s + i].status = 0;
		}
		uxdp_pool_free_remote(q->rx_pool, &q->rx_sw[s], k);
		done += k;
	}
	q->ntc = q->ntu;
	q->tail = q->ntu;
	q->hw_head = q->ntu;
	q->primed = false;
	st_set32(&q->st.rx_posted, 0);
	if (drained)
		uxdp_rxq_count_drained(dev, q->index, drained);
}

/* ---- Transmit ------------------------------------------------------------ */

/* Completions: what the hardware sent goes home. Returns how many. */
static uint32_t tx_clean(struct nic_q *q)
{
	struct uxdp_frame *frames[NIC_BATCH];
	uint32_t ntc = q->tx_ntc, head = q->tx_head, n = head - ntc;
	uint32_t i, nf = 0, nx = 0;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		struct nic_tx_desc *d = &q->tx_ring[(ntc + i) & q->tx_mask];

		if (d->kind == NIC_TX_XSK) {
			nx++;
			continue;
		}
		frames[nf++] = d->ptr;
		if (nf == NIC_BATCH) {
			uxdp_frame_return_bulk(frames, nf);
			nf = 0;
		}
	}
	if (nf)
		uxdp_frame_return_bulk(frames, nf);
	/* A socket's descriptors complete in the order they were pulled. */
	if (nx)
		uxdp_xsk_tx_completed(q->xp, nx);
	/* D, pairs with the posters' A: the slots are free again. */
	uxdp_store_release(&q->tx_ntc, head);
	st_add(&q->st.tx_cleaned, n);
	return n;
}

/*
 * Zero-copy transmit: the socket's TX descriptors into the hardware ring
 * (a completion slot is reserved for each as it is pulled). As ice, the TX
 * ring's need_wakeup stays set: the poller may sleep, and the
 * application's kick is what brings it back.
 */
static uint32_t zc_xmit(struct uxdp_dev *dev, struct nic_q *q, uint32_t budget)
{
	struct uxdp_desc descs[NIC_BATCH];
	uint32_t tail, room, want, done = 0, i;
	uint64_t bytes = 0;

	uxdp_xsk_set_tx_need_wakeup(q->xp);
	uxdp_spin_lock(&q->tx_lock);
	tail = q->tx_tail;
	/* tx_ntc is this thread's own (the cleaner's). */
	room = q->tx_mask + 1 - (tail - q->tx_ntc);
	want = MIN(budget, room);
	while (done < want) {
		uint32_t n = uxdp_xsk_tx_peek_batch(q->xp, descs,
						    MIN(want - done,
							NIC_BATCH));

		if (!n)
			break;
		for (i = 0; i < n; i++) {
			struct nic_tx_desc *d =
				&q->tx_ring[(tail + done + i) & q->tx_mask];

			d->ptr = uxdp_umem_addr_ptr(q->xsk_area, descs[i].addr);
			d->len = descs[i].len;
			d->kind = NIC_TX_XSK;
			bytes += descs[i].len;
		}
		done += n;
	}
	if (done) {
		/* B, pairs with the hardware's C (same thread here, but the
		 * ring's protocol is one for every poster). */
		uxdp_store_release(&q->tx_tail, tail + done);
		uxdp_txq_count(dev, q->index, done, bytes);
	}
	uxdp_spin_unlock(&q->tx_lock);
	return done;
}

/*
 * Put @n packets on @peer's wire: each to the FIFO of the queue its RSS
 * picks, one lock per destination queue. Called by our hardware inside a
 * poll (a read-side section: @peer stays alive). The packets are copied:
 * the wire carries bytes.
 */
static void wire_send(struct nic_q *q, struct uxdp_dev *peer,
		      void *const *data, const uint32_t *len, uint32_t n)
{
	struct nic_priv *pp = nic_priv(peer);
	uint8_t dq[NIC_BATCH], done[NIC_BATCH] = { 0 };
	uint32_t i, j, lost = 0;

	for (i = 0; i < n; i++)
		dq[i] = (uint8_t)rss_queue(pp, rss_pkt_hash(pp, data[i],
							    len[i]));
	for (i = 0; i < n; i++) {
		struct nic_q *rq;
		struct nic_wire *w;
		uint32_t prod, room, drop = 0, sent = 0;

		if (done[i])
			continue;
		rq = pp->q[dq[i]];
		w = __atomic_load_n(&rq->wire, __ATOMIC_ACQUIRE);
		if (w)
			uxdp_spin_lock(&w->lock);
		/*
		 * Under the lock: the peer going down clears "up", waits,
		 * then drains the FIFO under this lock, so a send that
		 * takes it after the drain sees the peer down and leaves
		 * nothing behind.
		 */
		if (!w || !uxdp_dev_is_up(peer)) {
			for (j = i; j < n; j++)
				if (!done[j] && dq[j] == dq[i]) {
					done[j] = 1;
					lost++;
				}
			if (w)
				uxdp_spin_unlock(&w->lock);
			continue;
		}
		prod = w->prod;
		/* A, pairs with the consumer's D. */
		room = w->size - (prod - uxdp_load_acquire(&w->cons));
		for (j = i; j < n; j++) {
			uint32_t s;

			if (done[j] || dq[j] != dq[i])
				continue;
			done[j] = 1;
			if (sent == room) {
				drop++;
				continue;
			}
			s = (prod + sent) & (w->size - 1);
			memcpy(w->slots + (size_t)s * NIC_SLOT, data[j],
			       len[j]);
			w->len[s] = (uint16_t)len[j];
			sent++;
		}
		/* B, pairs with the consumer's C: the slots are written. */
		uxdp_store_release(&w->prod, prod + sent);
		if (drop)
			st_add(&rq->st.rx_fifo_dropped, drop);
		uxdp_spin_unlock(&w->lock);
		if (sent)
			uxdp_dev_kick(peer, dq[i]);
	}
	if (lost)
		st_add(&q->st.tx_carrier, lost);
}

/* The hardware's transmit: everything posted goes on the wire. */
static void hw_tx(struct nic_q *q)
{
	uint32_t tail = uxdp_load_acquire(&q->tx_tail);	/* C, pairs with B */
	uint32_t head = q->tx_head;
	struct uxdp_dev *peer;
	void *data[NIC_BATCH];
	uint32_t len[NIC_BATCH];
	uint64_t bytes = 0, zc = 0, sent = 0, giant = 0;

	if (head == tail)
		return;
	peer = __atomic_load_n(&q->priv->peer, __ATOMIC_ACQUIRE);
	while (head != tail) {
		uint32_t n = MIN(tail - head, NIC_BATCH), i, k = 0;

		for (i = 0; i < n; i++) {
			struct nic_tx_desc *d =
				&q->tx_ring[(head + i) & q->tx_mask];

			/* xdp_xmit refuses frames this long; a socket's
			 * descriptor may be up to a chunk: the MAC drops
			 * it (it completes all the same). */
			if (uxdp_unlikely(d->len > UXDP_NIC_MAX_TX_LEN)) {
				giant++;
				continue;
			}
			if (d->kind == NIC_TX_XSK) {
				data[k] = d->ptr;
				zc++;
			} else {
				data[k] = ((struct uxdp_frame *)d->ptr)->data;
			}
			len[k] = d->len;
			bytes += d->len;
			k++;
		}
		if (peer && k)
			wire_send(q, peer, data, len, k);
		sent += k;
		head += n;
	}
	q->tx_head = head;
	st_add(&q->st.tx_packets, sent);
	st_add(&q->st.tx_bytes, bytes);
	if (zc)
		st_add(&q->st.tx_zc, zc);
	if (giant)
		st_add(&q->st.tx_oversize, giant);
}

/*
 * Throw away what the TX ring holds unsent and complete everything (down,
 * a socket's switch): no poll runs. Frames go home, a socket's
 * descriptors complete (the kernel's xsk cleanup does the same).
 */
static void tx_flush(struct nic_q *q)
{
	uint32_t tail;

	uxdp_spin_lock(&q->tx_lock);
	tail = q->tx_tail;
	if (tail != q->tx_head)
		st_add(&q->st.tx_discarded, tail - q->tx_head);
	q->tx_head = tail;
	uxdp_spin_unlock(&q->tx_lock);
	tx_clean(q);
	st_set32(&q->st.tx_pending, 0);
}

static int nic_xdp_xmit(struct uxdp_dev *dev, int n,
			struct uxdp_frame **frames, uint32_t flags)
{
	struct nic_priv *p = nic_priv(dev);
	uint32_t qi = uxdp_thread_index(), tail, room, lim, i;
	uint64_t bytes = 0;
	struct nic_q *q;

	if (uxdp_unlikely(qi >= p->nq))
		qi %= p->nq;
	q = p->q[qi];
	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, qi, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	uxdp_spin_lock(&q->tx_lock);
	/* Under the lock: down clears "up", waits, then flushes the ring
	 * under this lock; a post after that sees it down. */
	if (uxdp_unlikely(!uxdp_dev_is_up(dev))) {
		uxdp_spin_unlock(&q->tx_lock);
		uxdp_txq_count_refused(dev, qi, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENETDOWN;
	}
	tail = q->tx_tail;
	/* A, pairs with the cleaner's D. */
	room = q->tx_mask + 1 - (tail - uxdp_load_acquire(&q->tx_ntc));
	lim = MIN((uint32_t)n, room);
	for (i = 0; i < lim; i++) {
		struct uxdp_frame *f = frames[i];
		struct nic_tx_desc *d = &q->tx_ring[(tail + i) & q->tx_mask];

		if (uxdp_unlikely(f->len > UXDP_NIC_MAX_TX_LEN))
			break;
		d->ptr = f;
		d->len = f->len;
		d->kind = NIC_TX_FRAME;
		bytes += f->len;
	}
	/* B, pairs with the hardware's C: the descriptors are written. */
	if (i)
		uxdp_store_release(&q->tx_tail, tail + i);
	uxdp_txq_count(dev, qi, i, bytes);
	if (i == lim && lim < (uint32_t)n)
		st_add(&q->st.tx_ring_full, (uint32_t)n - lim);
	uxdp_spin_unlock(&q->tx_lock);
	/* Every frame not taken is counted under the reason the call
	 * stopped for. */
	if (uxdp_unlikely(i < (uint32_t)n))
		uxdp_txq_count_refused(dev, qi, i < lim ? UXDP_TXQ_TOO_BIG :
				       UXDP_TXQ_FULL, (uint32_t)n - i);
	/* The doorbell: the queue pair's poller sends and cleans. */
	if (flags & UXDP_XMIT_FLUSH)
		uxdp_dev_kick(dev, qi);
	return (int)i;
}

/* ---- The poll ------------------------------------------------------------ */

static int nic_poll(struct uxdp_dev *dev, uint32_t qi, struct uxdp_xdp_cpu *ctx,
		    int budget)
{
	struct nic_q *q = nic_priv(dev)->q[qi];
	uint32_t b = (uint32_t)budget, rx, tx;
	bool ok = true;

	uxdp_spin_lock(&q->napi_lock);
	/* TX completions first (ice cleans its TX ring before RX). */
	tx = tx_clean(q);
	if (q->xp)
		tx += zc_xmit(dev, q, b);
	/* Up, or back from a socket's switch: fill the ring before the
	 * wire is let in, as a driver does when it starts a queue. */
	if (uxdp_unlikely(!q->primed)) {
		ok = rx_refill(q);
		q->primed = true;
	}
	hw_rx(q, b);
	rx = rx_clean(q, ctx, b);
	if (rx_unused(q) >= q->thresh)
		ok = rx_refill(q) && ok;
	if (q->xp) {
		/* As ice: the application must refill and kick when the
		 * refill came up short or the ring ran empty. */
		if (!ok || q->ntu == q->ntc)
			uxdp_xsk_set_rx_need_wakeup(q->xp);
		else
			uxdp_xsk_clear_rx_need_wakeup(q->xp);
		/* The fill entries taken are free for the application again,
		 * also when no packet of this poll reached the socket (whose
		 * flush would say so otherwise). */
		uxdp_pool_flush(q->xp);
	}
	hw_tx(q);
	st_set32(&q->st.rx_posted, q->ntu - q->ntc);
	st_set32(&q->st.tx_pending,
		 __atomic_load_n(&q->tx_tail, __ATOMIC_RELAXED) - q->tx_ntc);
	uxdp_spin_unlock(&q->napi_lock);
	rx += tx;
	return (int)MIN(rx, b);
}

/*
 * Whether a poll has something to do: the generator may send, a loop peer's
 * packets wait, or the TX ring holds descriptors to send or clean. Shared
 * state only (called outside any poll, also while the device goes down).
 * A generator whose buffers are all in flight still says yes, as a NIC
 * under load keeps its poller busy.
 */
static bool nic_rx_pending(struct uxdp_dev *dev, uint32_t qi)
{
	struct nic_q *q = nic_priv(dev)->q[qi];
	struct nic_wire *w = __atomic_load_n(&q->wire, __ATOMIC_ACQUIRE);

	if (gen_allowed(q, 1, false))
		return true;
	if (w && __atomic_load_n(&w->prod, __ATOMIC_ACQUIRE) !=
		 __atomic_load_n(&w->cons, __ATOMIC_RELAXED))
		return true;
	return __atomic_load_n(&q->tx_tail, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&q->tx_ntc, __ATOMIC_RELAXED);
}

static int nic_rx_fd(struct uxdp_dev *dev, uint32_t qi)
{
	return uxdp_pacer_fd(&nic_priv(dev)->q[qi]->pace);
}

static struct uxdp_pool *nic_rx_pool(struct uxdp_dev *dev, uint32_t qi)
{
	return nic_priv(dev)->q[qi]->pool;
}

/* ---- Up, down, sockets, teardown ----------------------------------------- */

static int nic_open(struct uxdp_dev *dev)
{
	struct nic_priv *p = nic_priv(dev);
	uint32_t i;

	int err;

	for (i = 0; i < p->nq; i++) {
		err = uxdp_pacer_start(&p->q[i]->pace);
		if (err)
			return uxdp_set_error(-err, "nic %s: %s",
					      uxdp_dev_name(dev),
					      uxdp_errmsg());
	}
	return 0;
}

/* Give back unprocessed what a queue's wire FIFO holds (counted drained). */
static void wire_drain(struct uxdp_dev *dev, struct nic_q *q)
{
	struct nic_wire *w = q->wire;
	uint32_t n;

	if (!w)
		return;
	uxdp_spin_lock(&w->lock);
	n = w->prod - w->cons;
	/* D: the slots are free (pairs with the senders' A). */
	uxdp_store_release(&w->cons, w->prod);
	uxdp_spin_unlock(&w->lock);
	if (n)
		uxdp_rxq_count_drained(dev, q->index, n);
}

/* Down: no poll runs (uxdp_dev_down waited). Everything the rings hold
 * goes back; the next up fills them again. */
static void nic_stop(struct uxdp_dev *dev)
{
	struct nic_priv *p = nic_priv(dev);
	uint32_t i;

	for (i = 0; i < p->nq; i++) {
		struct nic_q *q = p->q[i];

		uxdp_pacer_stop(&q->pace);
		uxdp_spin_lock(&q->napi_lock);
		rx_release(dev, q);
		tx_flush(q);
		wire_drain(dev, q);
		uxdp_spin_unlock(&q->napi_lock);
	}
}

/*
 * Zero-copy AF_XDP: receive queue @qi into @pool (NULL: back into our own).
 * The queue is quiesced with napi_lock, as ice disables the queue pair:
 * the RX ring's buffers go back to the pool they came from, the TX ring is
 * flushed (a socket's descriptors complete), and the next poll fills the
 * ring from the new pool.
 */
static int nic_xsk_pool_setup(struct uxdp_dev *dev, uint32_t qi,
			      struct uxdp_pool *pool)
{
	struct nic_priv *p = nic_priv(dev);
	struct nic_q *q = p->q[qi];
	uint32_t room = q->own_room;

	if (pool) {
		struct uxdp_umem *umem = uxdp_pool_umem(pool);

		/* The application's memory holds no frame of ours (XDP_TX
		 * of it is a copy): only the XDP headroom is reserved. */
		room = uxdp_umem_chunk_size(umem) - uxdp_umem_headroom(umem) -
		       UXDP_PACKET_HEADROOM;
		if (q->nflows && q->rx_len > room)
			return uxdp_set_error(EMSGSIZE, "nic %s: %u-byte "
					      "packets do not fit the socket's "
					      "%u-byte chunks (room %u)",
					      uxdp_dev_name(dev), q->rx_len,
					      uxdp_umem_chunk_size(umem), room);
	}
	uxdp_spin_lock(&q->napi_lock);
	rx_release(dev, q);
	tx_flush(q);
	if (pool) {
		q->info->mem.type = UXDP_MEM_XSK;
		q->info->mem.owner = NULL;
		uxdp_pool_set_rxq(pool, q->info);
		q->xsk_area = uxdp_umem_area(uxdp_pool_umem(pool));
		q->rx_pool = pool;
		q->xp = pool;
	} else {
		q->info->mem.type = UXDP_MEM_POOL;
		q->info->mem.owner = NULL;
		q->rx_pool = q->pool;
		q->xp = NULL;
		q->xsk_area = NULL;
	}
	q->rx_room = room;
	uxdp_spin_unlock(&q->napi_lock);
	return 0;
}

/* Unplug: the peer no longer finds us (before destroy's grace period). */
static void nic_unlink(struct uxdp_dev *dev)
{
	struct nic_priv *p = nic_priv(dev);
	struct uxdp_dev *peer;

	pthread_mutex_lock(&nic_loop_lock);
	peer = __atomic_exchange_n(&p->peer, NULL, __ATOMIC_ACQ_REL);
	if (peer && peer != dev)
		__atomic_store_n(&nic_priv(peer)->peer, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&nic_loop_lock);
}

static void wire_free(struct nic_wire *w)
{
	if (!w)
		return;
	free(w->len);
	free(w->slots);
	free(w);
}

static void q_free(struct uxdp_dev *dev, struct nic_q *q)
{
	if (q->rx_sw && q->rx_pool)
		rx_release(dev, q);
	if (q->tx_ring)
		tx_flush(q);
	/* Buffers of ours may still travel as frames elsewhere: the pool
	 * and its UMEM go when the last one comes home. */
	/* The UMEM is the pool's (uxdp_rxq_pool_create): it goes with it. */
	if (q->pool)
		uxdp_pool_retire(q->pool, UXDP_POOL_RETIRE_UMEM);
	uxdp_pacer_fini(&q->pace);
	wire_free(q->wire);
	free(q->rx_hw);
	free(q->rx_sw);
	free(q->tx_ring);
	free(q);
}

/* After the grace period: nothing reaches the device any more. */
static void nic_destroy(struct uxdp_dev *dev)
{
	struct nic_priv *p = nic_priv(dev);
	uint32_t i;

	nic_unlink(dev);	/* a nic whose creation failed half way */
	for (i = 0; i < UXDP_NIC_MAX_QUEUES; i++) {
		if (p->q[i])
			q_free(dev, p->q[i]);
		p->q[i] = NULL;
	}
	free(p->payload);
	free(p->flow_hdrs);
}

static const struct uxdp_dev_ops nic_ops = {
	.kind = "nic",
	.open = nic_open,
	.stop = nic_stop,
	.poll = nic_poll,
	.rx_pending = nic_rx_pending,
	.xdp_xmit = nic_xdp_xmit,
	.rx_fd = nic_rx_fd,
	.rx_pool = nic_rx_pool,
	.unlink = nic_unlink,
	.destroy = nic_destroy,
	.xsk_pool_setup = nic_xsk_pool_setup,
};

/* ---- Create -------------------------------------------------------------- */

struct nic_cfg {
	uint32_t queues, rx_ring, tx_ring, thresh, frames, flows, len, flags;
	uint32_t wire_fifo;
	uint64_t count, pps;
};

static int q_setup(struct uxdp_dev *dev, uint32_t i, const struct nic_cfg *c)
{
	struct nic_priv *p = nic_priv(dev);
	/* Room for the generator's packets; a nic without one receives only
	 * from a cable, and takes every frame xdp_xmit takes. */
	uint32_t want = c->flags & UXDP_NIC_F_NO_GEN ? UXDP_NIC_MAX_TX_LEN :
			c->len;
	uint32_t chunk = want > NIC_ROOM(NIC_CHUNK) ? 2 * NIC_CHUNK :
			 NIC_CHUNK;
	struct nic_q *q;

	if (posix_memalign((void **)&q, UXDP_CACHE_LINE, sizeof(*q)))
		return uxdp_set_error(ENOMEM, "out of memory");
	memset(q, 0, sizeof(*q));
	p->q[i] = q;
	q->priv = p;
	q->index = i;
	q->single = c->flags & UXDP_NIC_F_SINGLE_ALLOC;
	q->rx_mask = c->rx_ring - 1;
	q->tx_mask = c->tx_ring - 1;
	q->thresh = c->thresh;
	q->rx_len = c->len;
	q->own_room = NIC_ROOM(chunk);
	q->rx_room = q->own_room;
	uxdp_spin_init(&q->napi_lock);
	uxdp_spin_init(&q->tx_lock);
	q->rx_hw = calloc(c->rx_ring, sizeof(*q->rx_hw));
	q->rx_sw = calloc(c->rx_ring, sizeof(*q->rx_sw));
	q->tx_ring = calloc(c->tx_ring, sizeof(*q->tx_ring));
	if (!q->rx_hw || !q->rx_sw || !q->tx_ring)
		return uxdp_set_error(ENOMEM, "out of memory");

	/* Our own memory: a UMEM and a pool per queue. */
	q->pool = uxdp_rxq_pool_create(dev, i, c->frames, chunk);
	if (!q->pool)
		return -errno;
	q->umem = uxdp_pool_umem(q->pool);
	q->rx_pool = q->pool;
	q->info = uxdp_dev_rxq_info(dev, i);
	return 0;
}

/*
 * The generator: every flow's hash at create time, and each queue the
 * flows RSS gives it (in flow order), with its share of the count and of
 * the rate.
 */
static int gen_setup(struct nic_priv *p, const struct nic_cfg *c)
{
	uint32_t *nq_flows = NULL, *at = NULL, *qof = NULL;
	uint8_t pkt[UXDP_NIC_MAX_LEN + NIC_HDR];
	uint32_t f, i;
	int err = -ENOMEM;

	p->payload = calloc(1, MAX(c->len, NIC_HDR) + NIC_HDR);
	p->flow_hdrs = calloc(c->flows, sizeof(*p->flow_hdrs));
	nq_flows = calloc(p->nq, sizeof(*nq_flows));
	at = calloc(p->nq, sizeof(*at));
	qof = calloc(c->flows, sizeof(*qof));
	if (!p->payload || !p->flow_hdrs || !nq_flows || !at || !qof) {
		uxdp_set_error(ENOMEM, "out of memory");
		goto out;
	}
	flow_packet(p, 0, p->payload, c->len);
	for (f = 0; f < c->flows; f++) {
		struct uxdp_nic_flow fl;

		flow_tuple(p, f, &fl);
		qof[f] = fl.queue;
		nq_flows[fl.queue]++;
	}
	for (i = 1; i < p->nq; i++)
		at[i] = at[i - 1] + nq_flows[i - 1];
	for (i = 0; i < p->nq; i++) {
		struct nic_q *q = p->q[i];

		q->flows = &p->flow_hdrs[at[i]];
		q->nflows = nq_flows[i];
	}
	for (f = 0; f < c->flows; f++) {
		struct nic_q *q = p->q[qof[f]];

		flow_packet(p, f, pkt, c->len);
		memcpy(p->flow_hdrs[at[qof[f]]++].b, pkt, NIC_HDR);
		/* Packet i of the wire is flow i % flows: flow f gets
		 * count / flows, and one more if f < count % flows. */
		q->gen_limit += c->count / c->flows +
				(f < c->count % c->flows);
	}
	for (i = 0; i < p->nq; i++) {
		struct nic_q *q = p->q[i];

		q->gen_limited = c->count != 0;
		if (q->gen_limited && !q->gen_limit)
			q->nflows = 0;	/* none of its packets is sent */
		if (!c->pps || !q->nflows)
			continue;
		err = uxdp_pacer_init(&q->pace, c->pps * q->nflows, c->flows);
		if (err)
			goto out;
	}
	err = 0;
out:
	free(nq_flows);
	free(at);
	free(qof);
	return err;
}

static int check_pow2(const char *what, uint32_t v, uint32_t lo, uint32_t hi)
{
	if (v < lo || v > hi || (v & (v - 1)))
		return uxdp_set_error(EINVAL, "nic: %s %u: a power of two in "
				      "[%u, %u]", what, v, lo, hi);
	return 0;
}

static int nic_cfg_get(const struct uxdp_nic_opts *o, struct nic_cfg *c)
{
	const uint8_t *table = UXDP_OPTS_GET(o, rss_table, NULL);
	int err;
	uint32_t i;

	c->queues = UXDP_OPTS_GET(o, queues, 1);
	c->rx_ring = UXDP_OPTS_GET(o, rx_ring, UXDP_NIC_DEFAULT_RING);
	c->tx_ring = UXDP_OPTS_GET(o, tx_ring, UXDP_NIC_DEFAULT_RING);
	c->thresh = UXDP_OPTS_GET(o, refill_threshold, c->rx_ring / 4);
	c->frames = UXDP_OPTS_GET(o, frames, 2 * c->rx_ring + c->tx_ring);
	c->flows = UXDP_OPTS_GET(o, flows, UXDP_NIC_DEFAULT_FLOWS);
	c->len = UXDP_OPTS_GET(o, rx_len, UXDP_NIC_DEFAULT_LEN);
	c->flags = UXDP_OPTS_GET(o, flags, 0);
	c->count = UXDP_OPTS_GET(o, rx_count, 0);
	c->pps = UXDP_OPTS_GET(o, rx_pps, 0);
	c->wire_fifo = UXDP_OPTS_GET(o, wire_fifo, UXDP_NIC_DEFAULT_WIRE_FIFO);
	if (c->queues > UXDP_NIC_MAX_QUEUES)
		return uxdp_set_error(EINVAL, "nic: %u queues: 1..%d",
				      c->queues, UXDP_NIC_MAX_QUEUES);
	err = check_pow2("rx_ring", c->rx_ring, UXDP_NIC_MIN_RING,
			 UXDP_NIC_MAX_RING);
	if (!err)
		err = check_pow2("tx_ring", c->tx_ring, UXDP_NIC_MIN_RING,
				 UXDP_NIC_MAX_RING);
	if (!err)
		err = check_pow2("wire_fifo", c->wire_fifo, 8, 65536);
	if (err)
		return err;
	if (c->thresh > c->rx_ring / 2)
		return uxdp_set_error(EINVAL, "nic: refill_threshold %u: "
				      "1..rx_ring/2 (%u)", c->thresh,
				      c->rx_ring / 2);
	if (c->frames < UXDP_NIC_MIN_RING || c->frames > (1U << 20))
		return uxdp_set_error(EINVAL, "nic: frames %u: %d..2^20",
				      c->frames, UXDP_NIC_MIN_RING);
	if (c->flows > UXDP_NIC_MAX_FLOWS)
		return uxdp_set_error(EINVAL, "nic: flows %u: 1..%d",
				      c->flows, UXDP_NIC_MAX_FLOWS);
	if (c->len < UXDP_NIC_MIN_LEN || c->len > UXDP_NIC_MAX_LEN)
		return uxdp_set_error(EINVAL, "nic: rx_len %u: %d..%d bytes",
				      c->len, UXDP_NIC_MIN_LEN,
				      UXDP_NIC_MAX_LEN);
	if (c->flags & ~NIC_FLAGS)
		return uxdp_set_error(EINVAL, "nic: unknown flags 0x%x",
				      c->flags & ~NIC_FLAGS);
	if (c->pps > 1000000000ULL)
		return uxdp_set_error(EINVAL, "nic: rx_pps %llu: at most 10^9",
				      (unsigned long long)c->pps);
	for (i = 0; table && i < UXDP_NIC_RSS_TABLE_SIZE; i++)
		if (table[i] >= c->queues)
			return uxdp_set_error(EINVAL, "nic: rss_table[%u] = "
					      "%u: not a queue (%u queues)",
					      i, table[i], c->queues);
	return 0;
}

UXDP_API __attribute__((cold)) struct uxdp_dev *
uxdp_nic_create(const char *name, const struct uxdp_nic_opts *opts)
{
	const uint8_t *key, *table;
	struct nic_priv *p;
	struct uxdp_dev *dev;
	struct nic_cfg c;
	uint32_t i;
	int err;

	uxdp_clear_error();
	if (!UXDP_OPTS_VALID(opts, uxdp_nic_opts)) {
		errno = EINVAL;
		return NULL;
	}
	err = nic_cfg_get(opts, &c);
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = uxdp_dev_alloc(name, &nic_ops, c.queues, c.queues,
			     sizeof(struct nic_priv));
	if (!dev)
		return NULL;
	p = nic_priv(dev);
	p->dev = dev;
	/* xdp_xmit and sockets' copy transmit refuse what an MTU of 1500
	 * does not carry (UXDP_NIC_MAX_TX_LEN, with a VLAN tag). */
	uxdp_dev_set_mtu(dev, UXDP_NIC_MAX_TX_LEN - 18);
	p->nq = c.queues;
	p->flags = c.flags;
	p->rx_len = c.len;
	p->nflows = c.flows;
	p->wire_fifo = c.wire_fifo;
	key = UXDP_OPTS_GET(opts, rss_key, NULL);
	table = UXDP_OPTS_GET(opts, rss_table, NULL);
	memcpy(p->key, key ? key : nic_default_key, sizeof(p->key));
	for (i = 0; i < UXDP_NIC_RSS_TABLE_SIZE; i++)
		p->table[i] = table ? table[i] : (uint8_t)(i % c.queues);
	rss_lut_init(p);
	for (i = 0; i < c.queues; i++) {
		err = q_setup(dev, i, &c);
		if (err)
			goto err;
	}
	if (!(c.flags & UXDP_NIC_F_NO_GEN)) {
		err = gen_setup(p, &c);
		if (err)
			goto err;
	}
	return dev;
err:
	{
		char msg[UXDP_ERRMSG_MAX];

		/* Keep the reason: destroying may set another. */
		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "nic %s: %s", name, msg);
		return NULL;
	}
}

static int wire_alloc(struct nic_priv *p)
{
	uint32_t i;

	for (i = 0; i < p->nq; i++) {
		struct nic_q *q = p->q[i];
		struct nic_wire *w;

		if (q->wire)
			continue;
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		w->size = p->wire_fifo;
		w->len = calloc(w->size, sizeof(*w->len));
		w->slots = malloc((size_t)w->size * NIC_SLOT);
		if (!w->len || !w->slots) {
			free(w->len);
			free(w->slots);
			free(w);
			return -ENOMEM;
		}
		/* Release: rx_pending and senders read it without a lock. */
		__atomic_store_n(&q->wire, w, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Unplug @dev's cable; nic_loop_lock held. */
static void unplug_locked(struct uxdp_dev *dev)
{
	struct nic_priv *p = nic_priv(dev);
	struct uxdp_dev *old = __atomic_exchange_n(&p->peer, NULL,
						   __ATOMIC_ACQ_REL);

	if (old && old != dev)
		__atomic_store_n(&nic_priv(old)->peer, NULL, __ATOMIC_RELEASE);
}

UXDP_API __attribute__((cold)) int uxdp_nic_loop(struct uxdp_dev *a,
						 struct uxdp_dev *b)
{
	int err;

	uxdp_clear_error();
	if (!is_nic(a) || (b && !is_nic(b)))
		return uxdp_set_error(EINVAL, "nic loop: not a nic");
	if (uxdp_dev_is_up(a) || (b && uxdp_dev_is_up(b)))
		return uxdp_set_error(EBUSY, "nic loop: %s is up: plug cables "
				      "into nics that are down",
				      uxdp_dev_is_up(a) ? uxdp_dev_name(a) :
				      uxdp_dev_name(b));
	err = wire_alloc(nic_priv(a));
	if (!err && b)
		err = wire_alloc(nic_priv(b));
	if (err)
		return uxdp_set_error(ENOMEM, "nic loop: out of memory");
	pthread_mutex_lock(&nic_loop_lock);
	unplug_locked(a);
	if (b) {
		unplug_locked(b);
		__atomic_store_n(&nic_priv(a)->peer, b, __ATOMIC_RELEASE);
		__atomic_store_n(&nic_priv(b)->peer, a, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&nic_loop_lock);
	return 0;
}

/* ---- Queries ------------------------------------------------------------- */

static void stats_add(struct uxdp_nic_stats *dst,
		      const struct uxdp_nic_stats *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t i, n = offsetof(struct uxdp_nic_stats, rx_posted) /
		      sizeof(uint64_t);

	for (i = 0; i < n; i++)
		d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
	dst->rx_posted += __atomic_load_n(&src->rx_posted, __ATOMIC_RELAXED);
	dst->tx_pending += __atomic_load_n(&src->tx_pending, __ATOMIC_RELAXED);
}

UXDP_API int uxdp_nic_stats(const struct uxdp_dev *dev, uint32_t q,
			    struct uxdp_nic_stats *st)
{
	const struct nic_priv *p;
	uint32_t i;

	if (!is_nic(dev) || !st)
		return -EINVAL;
	p = nic_priv(dev);
	if (q != UXDP_ALL_QUEUES && q >= p->nq)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (i = 0; i < p->nq; i++)
		if (q == UXDP_ALL_QUEUES || q == i)
			stats_add(st, &p->q[i]->st);
	return 0;
}

UXDP_API int uxdp_nic_flow(const struct uxdp_dev *dev, uint32_t f,
			   struct uxdp_nic_flow *out)
{
	const struct nic_priv *p;

	if (!is_nic(dev) || !out)
		return -EINVAL;
	p = nic_priv(dev);
	if (f >= p->nflows || (p->flags & UXDP_NIC_F_NO_GEN))
		return -EINVAL;
	flow_tuple(p, f, out);
	return 0;
}

UXDP_API int uxdp_nic_rss_queue(const struct uxdp_dev *dev, const void *pkt,
				uint32_t len, uint32_t *hash)
{
	const struct nic_priv *p;
	uint32_t h;

	if (!is_nic(dev) || (!pkt && len))
		return -EINVAL;
	p = nic_priv(dev);
	h = pkt ? rss_pkt_hash(p, pkt, len) : 0;
	if (hash)
		*hash = h;
	return (int)rss_queue(p, h);
}

/* ---- nic:NAME[,queues=N][,ring=N][,...] ---------------------------------- */

/* A port string made into what uxdp_nic_create() takes, and the nic to
 * loop it to (loop=, NULL: none). */
struct nic_port {
	const char *name, *loop;
	struct uxdp_nic_opts o;
};

/*
 * @port (and @name, NULL: the argument names the device) into @np, checked
 * as the create will check it. No side effects: check and open share it;
 * whether the loop= nic exists is the open's to find out.
 */
static int nic_port_parse(const struct uxdp_port *port, const char *name,
			  struct nic_port *np)
{
	static const char *const keys[] = {
		"queues", "ring", "txring", "threshold", "frames", "flows",
		"len", "count", "pps", "fifo", "single_alloc", "nogen", "loop",
		NULL,
	};
	uint64_t queues, ring, txring, thresh, frames, flows, len, count, pps;
	uint64_t fifo;
	struct nic_cfg c;
	int err;

	memset(np, 0, sizeof(*np));
	np->o.sz = sizeof(np->o);
	np->name = name ? name : port->arg;
	np->loop = uxdp_port_get(port, "loop");
	err = uxdp_port_check_keys(port, keys);
	if (!err)
		err = uxdp_port_check_name(port, "NAME", np->name);
	if (!err && np->loop)
		err = uxdp_port_check_name(port, "loop", np->loop);
	if (!err)
		err = uxdp_port_get_u64(port, "queues", 1, 1,
					UXDP_NIC_MAX_QUEUES, &queues);
	if (!err)
		err = uxdp_port_get_u64(port, "ring", UXDP_NIC_DEFAULT_RING,
					UXDP_NIC_MIN_RING, UXDP_NIC_MAX_RING,
					&ring);
	if (!err)
		err = uxdp_port_get_u64(port, "txring", UXDP_NIC_DEFAULT_RING,
					UXDP_NIC_MIN_RING, UXDP_NIC_MAX_RING,
					&txring);
	if (!err)
		err = uxdp_port_get_u64(port, "threshold", 0, 0,
					UXDP_NIC_MAX_RING / 2, &thresh);
	if (!err)
		err = uxdp_port_get_u64(port, "frames", 0, 0, 1U << 20,
					&frames);
	if (!err)
		err = uxdp_port_get_u64(port, "flows", UXDP_NIC_DEFAULT_FLOWS,
					1, UXDP_NIC_MAX_FLOWS, &flows);
	if (!err)
		err = uxdp_port_get_u64(port, "len", UXDP_NIC_DEFAULT_LEN,
					UXDP_NIC_MIN_LEN, UXDP_NIC_MAX_LEN,
					&len);
	if (!err)
		err = uxdp_port_get_u64(port, "count", 0, 0, UINT64_MAX,
					&count);
	if (!err)
		err = uxdp_port_get_u64(port, "pps", 0, 0, 1000000000ULL, &pps);
	if (!err)
		err = uxdp_port_get_u64(port, "fifo",
					UXDP_NIC_DEFAULT_WIRE_FIFO, 8, 65536,
					&fifo);
	if (err)
		return err;
	/* The nic being made is not there to be found when loop= is
	 * looked up, and once made its name is taken: never a cable. */
	if (np->loop && !strcmp(np->loop, np->name))
		return uxdp_set_error(EINVAL, "nic:%s: loop=%s: a nic cannot "
				      "be looped to itself", port->arg,
				      np->loop);
	np->o.queues = (uint32_t)queues;
	np->o.rx_ring = (uint32_t)ring;
	np->o.tx_ring = (uint32_t)txring;
	np->o.refill_threshold = (uint32_t)thresh;
	np->o.frames = (uint32_t)frames;
	np->o.flows = (uint32_t)flows;
	np->o.rx_len = (uint32_t)len;
	np->o.rx_count = count;
	np->o.rx_pps = pps;
	np->o.wire_fifo = (uint32_t)fifo;
	if (uxdp_port_get_flag(port, "single_alloc"))
		np->o.flags |= UXDP_NIC_F_SINGLE_ALLOC;
	if (uxdp_port_get_flag(port, "nogen"))
		np->o.flags |= UXDP_NIC_F_NO_GEN;
	err = nic_cfg_get(&np->o, &c);
	if (err)
		return uxdp_set_error(-err, "port nic:%.48s: %s", port->arg,
				      uxdp_errmsg());
	return 0;
}

static int nic_port_check(const struct uxdp_port *port)
{
	struct nic_port np;

	return nic_port_parse(port, NULL, &np);
}

static struct uxdp_dev *nic_port_open(const struct uxdp_port *port,
				      const char *name)
{
	struct uxdp_dev *dev, *peer = NULL;
	struct nic_port np;
	int err;

	err = nic_port_parse(port, name, &np);
	if (!err && np.loop) {
		peer = uxdp_dev_get_by_name(np.loop);
		if (!peer || !is_nic(peer))
			err = uxdp_set_error(ENODEV, "nic:%s: loop=%s: no nic "
					     "of that name", port->arg,
					     np.loop);
	}
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = uxdp_nic_create(np.name, &np.o);
	if (!dev || !peer)
		return dev;
	err = uxdp_nic_loop(dev, peer);
	if (err) {
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "nic:%s: %s", port->arg, msg);
		return NULL;
	}
	return dev;
}

const struct uxdp_port_driver uxdp_nic_port_driver = {
	.kind = "nic",
	.usage = "nic:NAME[,queues=N][,ring=N][,txring=N][,threshold=N]"
		 "[,frames=N][,flows=N][,len=BYTES][,count=N][,pps=N]"
		 "[,fifo=N][,single_alloc][,nogen][,loop=OTHER]  multi-queue "
		 "NIC model: HW rings, RSS, a flow generator or a cable",
	.open = nic_port_open,
	.check = nic_port_check,
};
