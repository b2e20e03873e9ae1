/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * null: a generator on receive, a sink on transmit (include/uxdp/null.h).
 *
 * Receive refills from the device's own pool with uxdp_pool_alloc_batch()
 * and uxdp_buff_set_size(), as a zero-copy driver does, and runs the
 * program on each buffer. The packet is written once per chunk at create
 * time, like the kernel's live-frames generator (net/bpf/test_run.c), so a
 * program that changes a packet changes it for the next use of that buffer
 * too, unless UXDP_NULL_F_REWRITE asks for a fresh copy per packet.
 * A count limit and a packet rate make the queue go idle between packets,
 * so its poller sleeps; a paced one is woken by a timerfd (rx_fd).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/driver.h>
#include <uxdp/null.h>
#include <uxdp/pool.h>
#include <uxdp/umem.h>
#include <uxdp/xsk.h>

#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/*
 * Chunks of 2 KiB hold packets up to 1472 bytes with the XDP headroom
 * before and the frame tailroom after (what a redirect needs); longer
 * packets get 4 KiB chunks.
 */
#define NULL_CHUNK		2048
#define NULL_CHUNK_ROOM		(NULL_CHUNK - UXDP_PACKET_HEADROOM - \
				 UXDP_FRAME_TAILROOM)
#define NULL_SEQ_OFFSET		42	/* UDP payload of the default packet */
#define NULL_FLAGS		(UXDP_NULL_F_REWRITE | UXDP_NULL_F_SEQ | \
				 UXDP_NULL_F_NO_RX)

struct null_priv {
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	uint32_t rx_len;
	uint32_t flags;
	uint32_t seq_offset;
	uint64_t count;			/* 0: no limit */
	/* Written by the polling thread, read by anyone (relaxed). */
	uint64_t generated;
	struct uxdp_pacer pace;		/* rx_pps; its timer is rx_fd */
	unsigned char *tmpl;		/* rx_len bytes, zero-padded */
	struct uxdp_spinlock tx_lock;
	/*
	 * Zero-copy AF_XDP (xsk_pool_setup): the socket's pool, received
	 * into instead of our own, and whose TX ring we drain. Written on
	 * the control path with a grace period after it, read by the poller.
	 */
	struct uxdp_pool *xsk_pool;
};

static inline struct null_priv *null_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

/* Packets the queue may generate now, at most @budget. */
static uint64_t null_allowed(struct null_priv *priv, uint64_t budget,
			     bool commit)
{
	uint64_t n = budget;

	if (priv->count) {
		uint64_t left = priv->count -
			__atomic_load_n(&priv->generated, __ATOMIC_RELAXED);

		n = MIN(n, left);
	}
	if (n) {
		/* Once: the clock moves between two calls (MIN would make
		 * them), and a poll then overshoots its budget and the count. */
		uint64_t pace = uxdp_pacer_due(&priv->pace, commit);

		n = MIN(n, pace);
	}
	return n;
}

/* Rewrite what the flags ask for, as each buffer is handed out. */
static void null_fill(struct null_priv *priv, uint32_t flags,
		      struct uxdp_buff **bufs, uint32_t n)
{
	uint64_t seq = priv->generated;
	uint32_t i;

	for (i = 0; i < n; i++) {
		unsigned char *d = bufs[i]->data;

		if (flags & UXDP_NULL_F_REWRITE)
			memcpy(d, priv->tmpl, priv->rx_len);
		if (flags & UXDP_NULL_F_SEQ)
			memcpy(d + priv->seq_offset, &seq, sizeof(seq));
		seq++;
	}
}

/*
 * Zero-copy transmit: a sink sends at once, so every descriptor the socket
 * offers completes in the same poll. The TX ring's need_wakeup stays set
 * (as ice leaves it): the poller may sleep between rounds, and only a kick
 * from the application (uxdp_xsk_sendto) is sure to bring it back.
 */
static int null_zc_tx(struct uxdp_dev *dev, struct uxdp_pool *xp, int budget)
{
	struct null_priv *priv = null_priv(dev);
	struct uxdp_desc descs[UXDP_NAPI_BUDGET];
	uint64_t bytes = 0;
	uint32_t n, i;

	uxdp_xsk_set_tx_need_wakeup(xp);
	n = uxdp_xsk_tx_peek_batch(xp, descs,
				   (uint32_t)MIN(budget, UXDP_NAPI_BUDGET));
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		bytes += descs[i].len;
	uxdp_spin_lock(&priv->tx_lock);
	uxdp_txq_count(dev, 0, n, bytes);
	uxdp_spin_unlock(&priv->tx_lock);
	uxdp_xsk_tx_completed(xp, n);
	return (int)n;
}

static int null_poll(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *ctx,
		     int budget)
{
	struct null_priv *priv = null_priv(dev);
	struct uxdp_buff *bufs[UXDP_NAPI_BUDGET];
	struct uxdp_pool *pool = priv->pool, *xp;
	uint32_t flags = priv->flags;
	uint64_t allowed;
	int done = 0, tx = 0;

	(void)q;		/* one queue */
	/* Acquire: the socket's pool is set up before it is published. */
	xp = __atomic_load_n(&priv->xsk_pool, __ATOMIC_ACQUIRE);
	if (xp) {
		/* The socket's chunks hold no packet: write it every time.
		 * A NO_RX generator only transmits. */
		pool = priv->pool ? xp : NULL;
		flags |= UXDP_NULL_F_REWRITE;
		tx = null_zc_tx(dev, xp, budget);
	}
	if (!pool)
		return tx;
	/* The dev layer made this thread the pool's owner (rx_pool, or the
	 * queue's socket pool). */
	allowed = null_allowed(priv, (uint64_t)budget, true);
	if (!allowed) {
		/* Out of packets for now: the poller sleeps until the next
		 * tick. */
		uxdp_pacer_ack(&priv->pace);
		return tx;
	}
	while ((uint64_t)done < allowed) {
		uint32_t want = (uint32_t)MIN(allowed - (uint64_t)done,
					      UXDP_NAPI_BUDGET), n, i;

		n = uxdp_pool_alloc_batch(pool, bufs, want);
		if (xp) {
			/* need_wakeup: the fill ring ran dry, and only the
			 * application refilling and kicking restarts us. */
			if (n < want)
				uxdp_xsk_set_rx_need_wakeup(xp);
			else
				uxdp_xsk_clear_rx_need_wakeup(xp);
		}
		if (!n)
			break;		/* every buffer is in flight */
		for (i = 0; i < n; i++)
			uxdp_buff_set_size(bufs[i], priv->rx_len);
		if (flags & (UXDP_NULL_F_REWRITE | UXDP_NULL_F_SEQ))
			null_fill(priv, flags, bufs, n);
		/* Counted before the program runs: a program that reads the
		 * count sees its own packets in it. */
		__atomic_store_n(&priv->generated, priv->generated + n,
				 __ATOMIC_RELAXED);
		uxdp_pacer_sent(&priv->pace, n);
		uxdp_rx_run_batch(ctx, bufs, n);
		done += (int)n;
	}
	return done + tx;
}

/*
 * Whether a poll would generate something: only shared state (the count,
 * the clock, the pool's free list is the poller's own and is not read).
 * A generator whose every buffer is in flight still says yes; whoever
 * returns them is not the one to wake it, so its poller keeps polling,
 * as a NIC under load would.
 */
static bool null_rx_pending(struct uxdp_dev *dev, uint32_t q)
{
	struct null_priv *priv = null_priv(dev);

	(void)q;
	return priv->pool && null_allowed(priv, 1, false);
}

static int null_rx_fd(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return uxdp_pacer_fd(&null_priv(dev)->pace);
}

/* Up: a paced generator starts its clock and its timer. */
static int null_open(struct uxdp_dev *dev)
{
	int err = uxdp_pacer_start(&null_priv(dev)->pace);

	if (err)
		return uxdp_set_error(-err, "null %s: %s", uxdp_dev_name(dev),
				      uxdp_errmsg());
	return 0;
}

static void null_stop(struct uxdp_dev *dev)
{
	uxdp_pacer_stop(&null_priv(dev)->pace);
}

static int null_xdp_xmit(struct uxdp_dev *dev, int n,
			 struct uxdp_frame **frames, uint32_t flags)
{
	struct null_priv *priv = null_priv(dev);
	uint64_t bytes = 0;
	int i;

	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, 0, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	if (uxdp_unlikely(!uxdp_dev_is_up(dev))) {
		uxdp_txq_count_refused(dev, 0, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENETDOWN;
	}
	for (i = 0; i < n; i++)
		bytes += frames[i]->len;
	/* The TX queue lock a driver takes to post descriptors. */
	uxdp_spin_lock(&priv->tx_lock);
	uxdp_txq_count(dev, 0, (uint32_t)n, bytes);
	uxdp_spin_unlock(&priv->tx_lock);
	/* Sent and completed at once: the frames go home. */
	uxdp_frame_return_bulk(frames, (uint32_t)n);
	return n;
}

/*
 * Buffers of ours may still travel as frames (queued on another device, a
 * socket): the pool and its UMEM go when the last one comes home.
 */
static void null_destroy(struct uxdp_dev *dev)
{
	struct null_priv *priv = null_priv(dev);

	/* The UMEM is the pool's (uxdp_rxq_pool_create): it goes with it. */
	if (priv->pool)
		uxdp_pool_retire(priv->pool, UXDP_POOL_RETIRE_UMEM);
	uxdp_pacer_fini(&priv->pace);
	free(priv->tmpl);
}

static struct uxdp_pool *null_rx_pool(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return null_priv(dev)->pool;
}

/*
 * Zero-copy: generate into the socket's UMEM. Nothing is held between
 * polls (every buffer a poll allocates goes to the program in it), so
 * there is nothing to give back on the way out.
 */
static int null_xsk_pool_setup(struct uxdp_dev *dev, uint32_t q,
			       struct uxdp_pool *pool)
{
	struct null_priv *priv = null_priv(dev);
	struct uxdp_umem *umem;
	uint32_t room;

	struct uxdp_rxq_info *info = uxdp_dev_rxq_info(dev, q);

	if (!pool) {
		__atomic_store_n(&priv->xsk_pool, NULL, __ATOMIC_RELEASE);
		/* No poll runs now (the caller's contract): our own pool's
		 * buffers are plain pool buffers again. */
		info->mem.type = UXDP_MEM_POOL;
		return 0;
	}
	umem = uxdp_pool_umem(pool);
	room = uxdp_umem_chunk_size(umem) - uxdp_umem_headroom(umem) -
	       UXDP_PACKET_HEADROOM;
	if (!(priv->flags & UXDP_NULL_F_NO_RX) && priv->rx_len > room)
		return uxdp_set_error(EMSGSIZE, "null %s: %u-byte packets do "
				      "not fit the socket's %u-byte chunks "
				      "(room %u)", uxdp_dev_name(dev),
				      priv->rx_len, uxdp_umem_chunk_size(umem),
				      room);
	/* Its buffers are received on our queue, owned by the pool, and
	 * are the application's memory (UXDP_MEM_XSK: no frame headers of
	 * the library's go there; XDP_TX of one is a copy). */
	info->mem.type = UXDP_MEM_XSK;
	uxdp_pool_set_rxq(pool, info);
	__atomic_store_n(&priv->xsk_pool, pool, __ATOMIC_RELEASE);
	return 0;
}

static const struct uxdp_dev_ops null_ops = {
	.xsk_pool_setup = null_xsk_pool_setup,
	.kind = "null",
	.open = null_open,
	.stop = null_stop,
	.rx_pool = null_rx_pool,
	.rx_fd = null_rx_fd,
	.poll = null_poll,
	.rx_pending = null_rx_pending,
	.xdp_xmit = null_xdp_xmit,
	.destroy = null_destroy,
};

/* 64 bytes of Ethernet/IPv4/UDP between locally administered MACs. */
static const unsigned char default_pkt[64] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x32, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb6, 0xb7,
	0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
	0x04, 0x00, 0x04, 0x01, 0x00, 0x1e, 0x00, 0x00,
};

static int null_setup_rx(struct uxdp_dev *dev, uint32_t frames)
{
	struct null_priv *priv = null_priv(dev);
	uint32_t chunk = priv->rx_len > NULL_CHUNK_ROOM ? 2 * NULL_CHUNK :
			 NULL_CHUNK;
	uint32_t i;
	char *area;

	priv->pool = uxdp_rxq_pool_create(dev, 0, frames, chunk);
	if (!priv->pool)
		return -errno;
	priv->umem = uxdp_pool_umem(priv->pool);
	/* The packet, once per buffer; REWRITE copies it again per use.
	 * Nothing is allocated before the first poll. */
	area = uxdp_umem_area(priv->umem);
	for (i = 0; i < frames; i++)
		memcpy(area + (uint64_t)i * chunk + UXDP_PACKET_HEADROOM,
		       priv->tmpl, priv->rx_len);
	return 0;
}

/* The options with their defaults, checked: what the create makes and the
 * port string's parse (null_port_parse) makes sure it would take. */
struct null_cfg {
	const void *tmpl;
	uint32_t frames, len, tlen, flags, seq_off;
};

static int null_cfg_get(const struct uxdp_null_opts *opts, struct null_cfg *c)
{
	c->flags = UXDP_OPTS_GET(opts, flags, 0);
	c->frames = UXDP_OPTS_GET(opts, rx_frames, UXDP_NULL_DEFAULT_FRAMES);
	c->tmpl = UXDP_OPTS_GET(opts, rx_template, NULL);
	c->tlen = UXDP_OPTS_GET(opts, rx_template_len, 0);
	c->seq_off = UXDP_OPTS_GET(opts, seq_offset, NULL_SEQ_OFFSET);
	if (!c->tmpl) {
		c->tmpl = default_pkt;
		c->tlen = sizeof(default_pkt);
	}
	c->len = UXDP_OPTS_GET(opts, rx_len, c->tlen);
	if (c->flags & ~NULL_FLAGS)
		return uxdp_set_error(EINVAL, "null: unknown flags 0x%x",
				      c->flags & ~NULL_FLAGS);
	if (c->tlen < 14 || c->tlen > UXDP_NULL_MAX_LEN)
		return uxdp_set_error(EINVAL, "null: rx_template_len %u: a "
				      "packet needs 14 (an Ethernet header) to "
				      "%d bytes", c->tlen, UXDP_NULL_MAX_LEN);
	if (c->len < 14 || c->len > UXDP_NULL_MAX_LEN)
		return uxdp_set_error(EINVAL, "null: rx_len %u out of range "
				      "(14..%d)", c->len, UXDP_NULL_MAX_LEN);
	if (c->frames > (1U << 20))
		return uxdp_set_error(EINVAL, "null: rx_frames %u out of range "
				      "(1..2^20)", c->frames);
	if ((c->flags & UXDP_NULL_F_SEQ) && c->seq_off + 8 > c->len)
		return uxdp_set_error(EINVAL, "null: seq_offset %u: the 8-byte "
				      "sequence number must fit in %u-byte "
				      "packets", c->seq_off, c->len);
	return 0;
}

UXDP_API __attribute__((cold)) struct uxdp_dev *
uxdp_null_create(const char *name, const struct uxdp_null_opts *opts)
{
	struct null_priv *priv;
	struct uxdp_dev *dev;
	struct null_cfg c;
	int err;

	uxdp_clear_error();
	if (!UXDP_OPTS_VALID(opts, uxdp_null_opts)) {
		errno = EINVAL;
		return NULL;
	}
	err = null_cfg_get(opts, &c);
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = uxdp_dev_alloc(name, &null_ops, 1, 1, sizeof(struct null_priv));
	if (!dev)
		return NULL;
	priv = null_priv(dev);
	uxdp_spin_init(&priv->tx_lock);
	priv->rx_len = c.len;
	priv->flags = c.flags;
	priv->seq_offset = c.seq_off;
	priv->count = UXDP_OPTS_GET(opts, rx_count, 0);
	err = -ENOMEM;
	priv->tmpl = calloc(1, c.len);
	if (!priv->tmpl) {
		uxdp_set_error(ENOMEM, "null %s: out of memory", name);
		goto err;
	}
	memcpy(priv->tmpl, c.tmpl, MIN(c.tlen, c.len));
	/* A sink generates nothing: no rate, no timer. */
	err = uxdp_pacer_init(&priv->pace, c.flags & UXDP_NULL_F_NO_RX ? 0 :
			      UXDP_OPTS_GET(opts, rx_pps, 0), 1);
	if (err)
		goto err;
	if (!(c.flags & UXDP_NULL_F_NO_RX)) {
		err = null_setup_rx(dev, c.frames);
		if (err)
			goto err;
	}
	return dev;
err:
	{
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "null %s: %s", name, msg);
		return NULL;
	}
}

UXDP_API uint64_t uxdp_null_generated(struct uxdp_dev *dev)
{
	if (!dev || strcmp(uxdp_dev_kind(dev), "null"))
		return 0;
	return __atomic_load_n(&null_priv(dev)->generated, __ATOMIC_RELAXED);
}

UXDP_API bool uxdp_null_done(struct uxdp_dev *dev)
{
	const struct null_priv *priv;

	if (!dev || strcmp(uxdp_dev_kind(dev), "null"))
		return false;
	priv = null_priv(dev);
	return priv->count && __atomic_load_n(&priv->generated,
					      __ATOMIC_RELAXED) >= priv->count;
}

/* ---- null:NAME[,count=N,len=N,pps=N,frames=N,seq,rewrite,sink] ------------- */

/* A port string made into what uxdp_null_create() takes. */
struct null_port {
	const char *name;
	struct uxdp_null_opts o;
};

/*
 * @port (and @name, NULL: the argument names the device) into @np, checked
 * as the create will check it. No side effects: check and open share it,
 * so a string the check passes is one the create takes.
 */
static int null_port_parse(const struct uxdp_port *port, const char *name,
			   struct null_port *np)
{
	static const char *const keys[] = {
		"count", "len", "pps", "frames", "seq", "rewrite", "sink", NULL,
	};
	uint64_t count, len, pps, frames;
	struct null_cfg c;
	int err;

	memset(np, 0, sizeof(*np));
	np->o.sz = sizeof(np->o);
	np->name = name ? name : port->arg;
	err = uxdp_port_check_keys(port, keys);
	if (!err)
		err = uxdp_port_check_name(port, "NAME", np->name);
	if (!err)
		err = uxdp_port_get_u64(port, "count", 0, 0, UINT64_MAX, &count);
	if (!err)
		err = uxdp_port_get_u64(port, "len", 0, 14, UXDP_NULL_MAX_LEN,
					&len);
	if (!err)
		err = uxdp_port_get_u64(port, "pps", 0, 0, 1000000000ULL, &pps);
	if (!err)
		err = uxdp_port_get_u64(port, "frames", 0, 1, 1U << 20,
					&frames);
	if (err)
		return err;
	np->o.rx_count = count;
	np->o.rx_len = (uint32_t)len;
	np->o.rx_pps = pps;
	np->o.rx_frames = (uint32_t)frames;
	if (uxdp_port_get_flag(port, "seq"))
		np->o.flags |= UXDP_NULL_F_SEQ;
	if (uxdp_port_get_flag(port, "rewrite"))
		np->o.flags |= UXDP_NULL_F_REWRITE;
	if (uxdp_port_get_flag(port, "sink"))
		np->o.flags |= UXDP_NULL_F_NO_RX;
	/* In the string's terms what null_cfg_get() would say of seq_offset,
	 * which the string cannot set. */
	if ((np->o.flags & UXDP_NULL_F_SEQ) && len &&
	    len < NULL_SEQ_OFFSET + 8)
		return uxdp_set_error(EINVAL, "port null:%.48s: seq needs "
				      "len=%d or more (the sequence number "
				      "is 8 bytes at offset %d)", port->arg,
				      NULL_SEQ_OFFSET + 8, NULL_SEQ_OFFSET);
	err = null_cfg_get(&np->o, &c);
	if (err)
		return uxdp_set_error(-err, "port null:%.48s: %s", port->arg,
				      uxdp_errmsg());
	return 0;
}

static int null_port_check(const struct uxdp_port *port)
{
	struct null_port np;

	return null_port_parse(port, NULL, &np);
}

static struct uxdp_dev *null_port_open(const struct uxdp_port *port,
				       const char *name)
{
	struct null_port np;
	int err;

	err = null_port_parse(port, name, &np);
	if (err) {
		errno = -err;
		return NULL;
	}
	return uxdp_null_create(np.name, &np.o);
}

const struct uxdp_port_driver uxdp_null_port_driver = {
	.kind = "null",
	.usage = "null:NAME[,count=N][,len=BYTES][,pps=N][,frames=N][,seq]"
		 "[,rewrite][,sink]  generator of UDP packets and sink",
	.open = null_port_open,
	.check = null_port_check,
};
