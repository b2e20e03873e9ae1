/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * veth: a pair of in-process devices (drivers/net/veth.c). xdp_xmit on one
 * side puts frame pointers on the peer's per-queue receive ring under that
 * ring's producer lock; the peer's poll drains the ring and runs its
 * program. XDP_TX on a veth transmits out of it, i.e. back to the peer.
 *
 * Ring: a uxdp ring of 64-bit entries (frame pointers). Producers are any
 * threads, serialised by the lock (the kernel's ptr_ring producer lock);
 * the consumer is the queue's single polling thread and takes no lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/driver.h>
#include <uxdp/ring.h>
#include <uxdp/veth.h>

#define VLAN_ETH_HLEN	18	/* hard_header_len + VLAN_HLEN */

struct veth_rq {
	/* Producer side: any thread, under lock. */
	struct uxdp_spinlock lock;
	struct uxdp_ring prod;
	/* Consumer side: the polling thread only. */
	struct uxdp_ring cons __attribute__((aligned(UXDP_CACHE_LINE)));
	struct uxdp_rxq_info *info;	/* every received buff points here */
	void *mem;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct veth_priv {
	struct uxdp_dev *peer;		/* atomic: cleared at destroy */
	uint32_t nrq;
	uint32_t ring_size;
	uint32_t max_len;		/* mtu + 18 */
	struct veth_rq *rq;
};

static inline struct veth_priv *veth_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

/*
 * Give back every frame still on @rq (queue going down or away), counted in
 * the queue's drained: no poll of it runs then, so this is its only writer.
 */
static void veth_rq_drain(struct uxdp_dev *dev, uint32_t q)
{
	struct veth_rq *rq = &veth_priv(dev)->rq[q];
	struct uxdp_frame *frames[UXDP_BULK_SIZE];
	uint32_t idx, n, i;

	while ((n = uxdp_ring_cons_peek(&rq->cons, UXDP_BULK_SIZE, &idx))) {
		for (i = 0; i < n; i++)
			frames[i] = (struct uxdp_frame *)(uintptr_t)
				*uxdp_ring_addr(&rq->cons, idx + i);
		uxdp_ring_cons_release(&rq->cons, n);
		uxdp_frame_return_bulk(frames, n);
		uxdp_rxq_count_drained(dev, q, n);
	}
}

static int veth_xdp_xmit(struct uxdp_dev *dev, int n,
			 struct uxdp_frame **frames, uint32_t flags)
{
	struct veth_priv *priv = veth_priv(dev);
	struct uxdp_dev *peer;
	struct veth_rq *rq;
	uint32_t q, idx, room, i;
	uint64_t bytes = 0;

	peer = __atomic_load_n(&priv->peer, __ATOMIC_ACQUIRE);
	/* The kernel's smp_processor_id() % queues. Both sides of a pair
	 * have the same number of queues, so q indexes the peer's too. */
	q = uxdp_thread_index();
	if (uxdp_unlikely(q >= priv->nrq))
		q %= priv->nrq;
	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, q, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	if (uxdp_unlikely(!peer)) {
		uxdp_txq_count_refused(dev, q, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENXIO;
	}
	rq = &veth_priv(peer)->rq[q];

	uxdp_spin_lock(&rq->lock);
	/*
	 * Under the lock: uxdp_dev_down() on the peer clears "up" before it
	 * takes this lock to drain the ring, so a transmit that gets the lock
	 * after the drain sees the peer down and cannot strand frames there.
	 * Without a program on the queue the peer would never poll it (the
	 * kernel's NAPI is off then): refuse, as veth does.
	 */
	if (uxdp_unlikely(!uxdp_dev_is_up(peer) || !uxdp_dev_is_up(dev) ||
			  !uxdp_dev_rxq_has_prog(peer, q))) {
		uxdp_spin_unlock(&rq->lock);
		uxdp_txq_count_refused(dev, q, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENXIO;
	}
	room = uxdp_ring_prod_reserve_batch(&rq->prod, (uint32_t)n, &idx);
	for (i = 0; i < room; i++) {
		if (uxdp_unlikely(frames[i]->len > priv->max_len))
			break;
		*uxdp_ring_addr(&rq->prod, idx + i) = (uint64_t)(uintptr_t)frames[i];
		bytes += frames[i]->len;
	}
	/* Stop at the first frame we could not take; give back the rest of
	 * the reservation. */
	uxdp_ring_prod_cancel(&rq->prod, room - i);
	uxdp_ring_prod_submit(&rq->prod, i);
	/* Under the lock: one writer at a time. */
	uxdp_txq_count(dev, q, i, bytes);
	uxdp_spin_unlock(&rq->lock);
	/* Every frame not taken is counted under the reason the call
	 * stopped for, so taken + full + too_big + down = offered. */
	if (uxdp_unlikely(i < (uint32_t)n))
		uxdp_txq_count_refused(dev, q, i < room ? UXDP_TXQ_TOO_BIG :
				       UXDP_TXQ_FULL, (uint32_t)n - i);

	/*
	 * The doorbell rings on every flush, whatever this call took (the
	 * kernel's veth schedules the peer's NAPI on every flush too): the
	 * bulks that filled the ring earlier in the same poll went without
	 * one, so a flush that finds the ring full is the only chance to
	 * wake a peer that went to sleep before they arrived.
	 */
	if (flags & UXDP_XMIT_FLUSH)
		uxdp_dev_kick(peer, q);
	return (int)i;
}

static int veth_poll(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *ctx,
		     int budget)
{
	struct veth_rq *rq = &veth_priv(dev)->rq[q];
	struct uxdp_frame *frames[UXDP_NAPI_BUDGET];
	struct uxdp_buff bufs[UXDP_NAPI_BUDGET], *bp[UXDP_NAPI_BUDGET];
	struct uxdp_rxq_info *info = rq->info;
	int done = 0;

	while (done < budget) {
		uint32_t want = (uint32_t)(budget - done), idx, n, i;

		if (want > UXDP_NAPI_BUDGET)
			want = UXDP_NAPI_BUDGET;
		n = uxdp_ring_cons_peek(&rq->cons, want, &idx);
		if (!n)
			break;
		uxdp_ring_cons_read_addrs(&rq->cons, idx, (uint64_t *)frames, n);
		/* Slots are free as soon as the pointers are read. */
		uxdp_ring_cons_release(&rq->cons, n);

		/*
		 * The frames' memory travels in their own headers: the queue's
		 * rxq info says UXDP_MEM_FRAME (set once, veth_setup).
		 */
		for (i = 0; i < n; i++) {
			/* Headers a few frames ahead: in L1 when we get there. */
			if (i + 4 < n)
				__builtin_prefetch(frames[i + 4]);
			uxdp_frame_to_buff(frames[i], &bufs[i]);
			bufs[i].rxq = info;
			bufs[i].txq = NULL;
			bp[i] = &bufs[i];
		}
		uxdp_rx_run_batch(ctx, bp, n);
		done += (int)n;
	}
	return done;
}

/*
 * Called by an idle polling thread outside any poll, so it may run while
 * uxdp_dev_down() drains the ring from another thread: it must not touch
 * the consumer handle's cached indices (the drain owns them then). The
 * shared words alone say whether anything is queued.
 */
static bool veth_rx_pending(struct uxdp_dev *dev, uint32_t q)
{
	return uxdp_ring_count(&veth_priv(dev)->rq[q].cons) > 0;
}

/* Down: no poll is running (uxdp_dev_down waited); give back queued frames. */
static void veth_stop(struct uxdp_dev *dev)
{
	struct veth_priv *priv = veth_priv(dev);
	uint32_t i;

	for (i = 0; i < priv->nrq; i++) {
		uxdp_spin_lock(&priv->rq[i].lock);
		veth_rq_drain(dev, i);
		uxdp_spin_unlock(&priv->rq[i].lock);
	}
}

/*
 * Destroy, before the grace period: the peer no longer finds us, so after
 * it no transmit of the peer's writes into our rings, and we no longer
 * find the peer.
 */
static void veth_unlink(struct uxdp_dev *dev)
{
	struct veth_priv *priv = veth_priv(dev);
	struct uxdp_dev *peer = __atomic_exchange_n(&priv->peer, NULL,
						    __ATOMIC_ACQ_REL);

	if (peer)
		__atomic_store_n(&veth_priv(peer)->peer, NULL, __ATOMIC_RELEASE);
}

/* Destroy, after the grace period: nothing can reach the rings now. */
static void veth_destroy(struct uxdp_dev *dev)
{
	struct veth_priv *priv = veth_priv(dev);
	uint32_t i;

	veth_unlink(dev);	/* a pair whose creation failed half way */
	if (!priv->rq)
		return;
	for (i = 0; i < priv->nrq; i++) {
		if (!priv->rq[i].mem)
			continue;
		veth_rq_drain(dev, i);
		uxdp_ring_mem_free(priv->rq[i].mem, priv->ring_size, 8);
	}
	free(priv->rq);
	priv->rq = NULL;
}

static const struct uxdp_dev_ops veth_ops = {
	.kind = "veth",
	.stop = veth_stop,
	.poll = veth_poll,
	.rx_pending = veth_rx_pending,
	.xdp_xmit = veth_xdp_xmit,
	.unlink = veth_unlink,
	.destroy = veth_destroy,
};

static int veth_setup(struct uxdp_dev *dev, uint32_t nrq, uint32_t ring_size,
		      uint32_t mtu)
{
	struct veth_priv *priv = veth_priv(dev);
	uint32_t i;

	priv->nrq = nrq;
	priv->ring_size = ring_size;
	priv->max_len = mtu + VLAN_ETH_HLEN;
	uxdp_dev_set_mtu(dev, mtu);
	if (posix_memalign((void **)&priv->rq, UXDP_CACHE_LINE,
			   nrq * sizeof(*priv->rq)))
		return uxdp_set_error(ENOMEM, "veth: out of memory");
	memset(priv->rq, 0, nrq * sizeof(*priv->rq));
	for (i = 0; i < nrq; i++) {
		struct veth_rq *rq = &priv->rq[i];

		/* Received frames keep their owner in their own header. */
		rq->info = uxdp_dev_rxq_info(dev, i);
		rq->info->mem.type = UXDP_MEM_FRAME;
		rq->mem = uxdp_ring_mem_alloc(ring_size, 8);
		if (!rq->mem)
			return -errno;
		uxdp_ring_init_prod(&rq->prod, rq->mem, ring_size, NULL);
		uxdp_ring_init_cons(&rq->cons, rq->mem, ring_size, NULL);
	}
	return 0;
}

/* The options with their defaults, checked: what the create makes and the
 * port string's parse (veth_port_parse) makes sure it would take. */
static int veth_cfg_get(const struct uxdp_veth_opts *opts, uint32_t *nq,
			uint32_t *ring, uint32_t *mtu)
{
	*nq = UXDP_OPTS_GET(opts, queues, 1);
	*ring = UXDP_OPTS_GET(opts, ring_size, UXDP_VETH_RING_SIZE);
	*mtu = UXDP_OPTS_GET(opts, mtu, 1500);
	if (*nq > 256)
		return uxdp_set_error(EINVAL, "veth: %u queues: at most 256",
				      *nq);
	if (*ring < 2 || *ring > (1U << 20) || (*ring & (*ring - 1)))
		return uxdp_set_error(EINVAL, "veth: ring_size %u: a power of "
				      "two in [2, 2^20]", *ring);
	if (*mtu < 68 || *mtu > 65535)
		return uxdp_set_error(EINVAL, "veth: mtu %u outside [68, 65535]",
				      *mtu);
	return 0;
}

UXDP_API __attribute__((cold)) int uxdp_veth_create(const char *name_a,
					const char *name_b,
					const struct uxdp_veth_opts *opts,
					struct uxdp_dev **a, struct uxdp_dev **b)
{
	uint32_t nq, ring, mtu;
	struct uxdp_dev *da, *db;
	int err;

	uxdp_clear_error();
	if (!a || !b)
		return uxdp_set_error(EINVAL, "veth: NULL result pointers");
	if (!UXDP_OPTS_VALID(opts, uxdp_veth_opts))
		return -EINVAL;
	err = veth_cfg_get(opts, &nq, &ring, &mtu);
	if (err)
		return err;
	da = uxdp_dev_alloc(name_a, &veth_ops, nq, nq, sizeof(struct veth_priv));
	if (!da)
		return -errno;
	db = uxdp_dev_alloc(name_b, &veth_ops, nq, nq, sizeof(struct veth_priv));
	err = db ? veth_setup(da, nq, ring, mtu) : -errno;
	if (!err)
		err = veth_setup(db, nq, ring, mtu);
	if (err) {
		char msg[UXDP_ERRMSG_MAX];

		/* Keep the reason: formatting uxdp_errmsg() into itself
		 * would read the buffer it writes. */
		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(da);
		uxdp_dev_destroy(db);
		return uxdp_set_error(-err, "%s", msg);
	}
	veth_priv(da)->peer = db;
	veth_priv(db)->peer = da;
	*a = da;
	*b = db;
	return 0;
}

UXDP_API struct uxdp_dev *uxdp_veth_peer(struct uxdp_dev *dev)
{
	if (strcmp(uxdp_dev_kind(dev), "veth"))
		return NULL;
	return __atomic_load_n(&veth_priv(dev)->peer, __ATOMIC_ACQUIRE);
}

/* ---- veth:NAME[,peer=NAME][,queues=N][,ring=N][,mtu=N] ------------------ */

/* A port string made into what uxdp_veth_create() takes (peer NULL: NAME
 * with a 'p' after it, named when the pair is made). */
struct veth_port {
	const char *me, *peer;
	struct uxdp_veth_opts o;
};

/*
 * @port (and @name, NULL: the argument names the end) into @vp, checked as
 * the create will check it. No side effects: check and open share it.
 */
static int veth_port_parse(const struct uxdp_port *port, const char *name,
			   struct veth_port *vp)
{
	static const char *const keys[] = {
		"peer", "queues", "ring", "mtu", NULL,
	};
	uint64_t queues, ring, mtu;
	uint32_t nq, rs, m;
	int err;

	memset(vp, 0, sizeof(*vp));
	vp->o.sz = sizeof(vp->o);
	vp->me = name ? name : port->arg;
	vp->peer = uxdp_port_get(port, "peer");
	err = uxdp_port_check_keys(port, keys);
	if (!err)
		err = uxdp_port_check_name(port, "NAME", vp->me);
	if (!err && vp->peer)
		err = uxdp_port_check_name(port, "peer", vp->peer);
	if (!err)
		err = uxdp_port_get_u64(port, "queues", 1, 1, 256, &queues);
	if (!err)
		err = uxdp_port_get_u64(port, "ring", UXDP_VETH_RING_SIZE, 2,
					1U << 20, &ring);
	if (!err)
		err = uxdp_port_get_u64(port, "mtu", 1500, 68, 65535, &mtu);
	if (err)
		return err;
	if (vp->peer && !strcmp(vp->peer, vp->me))
		return uxdp_set_error(EINVAL, "veth:%s: peer=%s: the two ends "
				      "need two names", vp->me, vp->peer);
	vp->o.queues = (uint32_t)queues;
	vp->o.ring_size = (uint32_t)ring;
	vp->o.mtu = (uint32_t)mtu;
	err = veth_cfg_get(&vp->o, &nq, &rs, &m);
	if (err)
		return uxdp_set_error(-err, "port veth:%.48s: %s", port->arg,
				      uxdp_errmsg());
	return 0;
}

static int veth_port_check(const struct uxdp_port *port)
{
	struct veth_port vp;

	return veth_port_parse(port, NULL, &vp);
}

/*
 * The end NAME of a pair, made (with its peer, default NAME + "p") unless
 * a veth NAME exists, in which case that end is returned: open
 * "veth:a,peer=b", then "veth:b".
 */
static struct uxdp_dev *veth_port_open(const struct uxdp_port *port,
				       const char *name)
{
	char peer_buf[UXDP_IFNAMSIZ];
	struct uxdp_dev *a, *b, *old;
	struct veth_port vp;
	int err;

	err = veth_port_parse(port, name, &vp);
	if (err)
		goto fail;
	old = uxdp_dev_get_by_name(vp.me);
	if (old) {
		if (strcmp(uxdp_dev_kind(old), "veth")) {
			err = uxdp_set_error(EEXIST, "veth:%s: a %s device has "
					     "that name", vp.me,
					     uxdp_dev_kind(old));
			goto fail;
		}
		return old;
	}
	/* Only a pair being made needs its peer's name: an existing end
	 * opens by its own, however long. */
	if (!vp.peer) {
		/* The result is checked, not the length beforehand: gcc
		 * without optimisation cannot tell that fits. */
		if (snprintf(peer_buf, sizeof(peer_buf), "%sp", vp.me) >=
		    (int)sizeof(peer_buf)) {
			err = uxdp_set_error(EINVAL, "veth:%s: name too long "
					     "to make its peer's; give "
					     "peer=NAME", vp.me);
			goto fail;
		}
		vp.peer = peer_buf;
	}
	err = uxdp_veth_create(vp.me, vp.peer, &vp.o, &a, &b);
	if (err)
		goto fail;
	return a;
fail:
	errno = -err;
	return NULL;
}

const struct uxdp_port_driver uxdp_veth_port_driver = {
	.kind = "veth",
	.usage = "veth:NAME[,peer=NAME][,queues=N][,ring=N][,mtu=N]  an "
		 "in-process veth end (the pair is made on first use)",
	.open = veth_port_open,
	.check = veth_port_check,
};
