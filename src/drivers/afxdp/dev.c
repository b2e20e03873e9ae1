/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: A device's life: up and down, destroy, create.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

/* ---- up and down --------------------------------------------------------- */

/*
 * Open or close a queue to its poller and to transmits. Up with a copy
 * stash still to stock (its pool's owner is a poller, who alone may
 * allocate from it) opens transmits only once that poller has stocked it
 * (tx_arm, afx_poll): until then they are refused as down, rather than
 * taken and dropped for want of a copy buffer.
 */
static void afx_q_set_ok(struct afx_q *q, bool ok, bool tx_arm)
{
	uxdp_spin_lock(&q->rx_lock);
	uxdp_spin_lock(&q->tx_lock);
	q->rx_ok = ok;
	q->tx_ok = ok && !tx_arm;
	__atomic_store_n(&q->tx_arm, ok && tx_arm, __ATOMIC_RELAXED);
	uxdp_spin_unlock(&q->tx_lock);
	uxdp_spin_unlock(&q->rx_lock);
}

static int afx_q_map(struct afx_q *q)
{
	int fd = q->fd;

	if (bpf_map_update_elem(q->ifc->xsks_fd, &q->qid, &fd, 0))
		return uxdp_set_error(errno, "afxdp %s: XSKMAP entry for "
				      "queue %u: %s", q->ifc->ifname, q->qid,
				      strerror(errno));
	q->mapped = true;
	return 0;
}

static void afx_q_unmap(struct afx_q *q)
{
	if (!q->mapped)
		return;
	bpf_map_delete_elem(q->ifc->xsks_fd, &q->qid);
	q->mapped = false;
}

/* Undo afx_open() for queues [0, @n): out of the map, sockets closed
 * where the group has no other queue up. */
static void afx_down_queues(struct afx_priv *priv, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct afx_q *q = priv->q[i];

		afx_q_set_ok(q, false, false);
		afx_q_unmap(q);
	}
	for (i = 0; i < n; i++) {
		struct afx_umem *um = priv->q[i]->um;

		if (!--um->nup)
			afx_umem_close(um);
	}
}

static void afx_warn_unbound(const struct afx_priv *priv)
{
	if (!priv->if_rxq || priv->if_rxq <= priv->nq)
		return;
	uxdp_pr(UXDP_WARN, "afxdp %s: the interface has %u RX queues and "
		"this port binds %u (%u-%u): traffic steered to the others "
		"goes to the stack, not to uxdp (uxdp_afxdp_info: "
		"no_socket). Bind @0-%u, or steer (ethtool -L %s combined "
		"%u, or flow rules)\n", priv->ifname, priv->if_rxq, priv->nq,
		priv->first, priv->first + priv->nq - 1, priv->if_rxq - 1,
		priv->ifname, priv->nq);
}

static int afx_check_iface(struct afx_priv *p, struct afx_ifinfo *fi);

/*
 * The interface was deleted and one of the same name made since (a veth
 * pair re-created, a driver reloaded): bind to the new one if it can take
 * this device's queues, as at create. Only a device whose every socket is
 * closed can move; a queue of a shared group parked with its socket still
 * open is bound to the old interface.
 */
static int afx_rebind_iface(struct afx_priv *priv, struct afx_ifinfo *fi)
{
	struct afx_iface *ifc;
	uint32_t i;
	int err;

	for (i = 0; i < priv->nq; i++)
		if (priv->q[i]->xsk)
			return uxdp_set_error(ENODEV, "afxdp %s: the interface "
					      "is gone (ifindex %d; %s now is "
					      "%d), and a socket of its shared "
					      "group is still bound to it",
					      priv->ifname, priv->ifc->ifindex,
					      priv->ifname, fi->ifindex);
	err = afx_check_iface(priv, fi);
	if (!err)
		err = afx_iface_get(&priv->ns, priv->ifname, fi->ifindex,
				    fi->rxq, &ifc);
	if (err)
		return uxdp_set_error(-err, "afxdp %s: the interface was made "
				      "again (ifindex %d, was %d): %s",
				      priv->ifname, fi->ifindex,
				      priv->ifc->ifindex, uxdp_errmsg());
	afx_iface_put(priv->ifc);
	priv->ifc = ifc;
	for (i = 0; i < priv->nq; i++)
		priv->q[i]->ifc = ifc;
	priv->if_rxq = fi->rxq;
	priv->if_txq = fi->txq;
	return 0;
}

static int afx_open(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_ifinfo fi;
	struct afx_quiet qt;
	struct afx_ns saved;
	uint32_t i, opened = 0;
	int err;

	pthread_mutex_lock(&afx_lock);
	afx_quiet_begin(&qt);
	err = afx_ns_enter(&priv->ns, &saved);
	if (err)
		goto out;
	err = afx_ifinfo(priv->ifname, &fi);
	if (err) {
		err = uxdp_set_error(ENODEV, "afxdp %s: the interface is gone",
				     priv->ifname);
		goto out_ns;
	}
	if (fi.ifindex != priv->ifc->ifindex) {
		err = afx_rebind_iface(priv, &fi);
		if (err)
			goto out_ns;
	}
	if (!fi.up) {
		err = uxdp_set_error(ENETDOWN, "afxdp %s: the interface is "
				     "down (ip link set dev %s up)",
				     priv->ifname, priv->ifname);
		goto out_ns;
	}
	if (fi.mtu != priv->mtu) {
		/* Changed since create: the same check, and TX follows. */
		uint32_t room = priv->chunk - UXDP_PACKET_HEADROOM -
				UXDP_FRAME_TAILROOM;

		if (fi.mtu + AFX_VLAN_ETH_HLEN > room) {
			err = uxdp_set_error(EINVAL, "afxdp %s: MTU %u "
					     "(changed since create) too "
					     "large for chunk=%u: at most %u",
					     priv->ifname, fi.mtu, priv->chunk,
					     room - AFX_VLAN_ETH_HLEN);
			goto out_ns;
		}
		priv->mtu = fi.mtu;
		uxdp_dev_set_mtu(dev, fi.mtu);
		for (i = 0; i < priv->nq; i++)
			priv->q[i]->max_len = fi.mtu + AFX_VLAN_ETH_HLEN;
	}
	for (i = 0; i < priv->nq; i++, opened++) {
		struct afx_q *q = priv->q[i];

		/* A group's socket may still be open (parked). */
		if (!q->xsk) {
			err = afx_sock_open(q, priv->ifname);
			if (err)
				goto out_undo;
		}
		/*
		 * Buffers on the fill ring before the socket is in the
		 * XSKMAP (the program may be on already, for another port),
		 * so what arrives right after up is received: when no thread
		 * owns the pool yet (never polled: every return to it is
		 * remote) or this one does. A pool another thread owns is
		 * that thread's to allocate from: it fills at its first poll
		 * (uxdp_dev_up kicks it).
		 */
		q->tx_arm_pending = __atomic_load_n(&q->polled,
						    __ATOMIC_RELAXED) &&
				    !uxdp_pool_is_owner(q->pool);
		if (!q->tx_arm_pending) {
			uxdp_spin_lock(&q->rx_lock);
			afx_stash_topup(q);
			afx_fill(q);
			uxdp_spin_unlock(&q->rx_lock);
		}
		q->um->nup++;
		/* Sockets go in the XSKMAP before the program goes on. */
		err = afx_q_map(q);
		if (err) {
			opened++;
			goto out_undo;
		}
	}
	err = afx_iface_attach(priv->ifc, priv->flags);
	if (err)
		goto out_undo;
	priv->ifc->up++;
	for (i = 0; i < priv->nq; i++)
		afx_q_set_ok(priv->q[i], true, priv->q[i]->tx_arm_pending);
	priv->up = true;
	afx_warn_unbound(priv);
	goto out_ns;

out_undo:
	{
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		afx_down_queues(priv, opened);
		if (!priv->ifc->up)
			afx_iface_detach(priv->ifc);
		uxdp_set_error(-err, "%s", msg);
	}
out_ns:
	afx_ns_leave(&saved);
out:
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	return err;
}

static void afx_stop(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_quiet qt;
	struct afx_ns saved;
	int err;

	pthread_mutex_lock(&afx_lock);
	if (!priv->up)
		goto out;
	afx_quiet_begin(&qt);
	err = afx_ns_enter(&priv->ns, &saved);
	if (err)
		uxdp_pr(UXDP_WARN, "afxdp %s: %s\n", priv->ifname,
			uxdp_errmsg());
	/* Program off first: nothing is redirected to a closing socket. */
	if (!--priv->ifc->up)
		afx_iface_detach(priv->ifc);
	afx_down_queues(priv, priv->nq);
	priv->up = false;
	if (!err)
		afx_ns_leave(&saved);
	afx_quiet_end(&qt);
out:
	pthread_mutex_unlock(&afx_lock);
}

/* ---- destroy ------------------------------------------------------------- */

static void afx_destroy(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	uint32_t i;

	/* Down (stop) has closed what the kernel held; what is left is
	 * memory and descriptors, in no namespace. */
	pthread_mutex_lock(&afx_lock);
	for (i = 0; priv->q && i < priv->nq; i++) {
		struct afx_q *q = priv->q[i];

		if (!q)
			continue;
		priv->q[i] = NULL;
		if (q->xsk) {
			/* Parked in a group still up: the group closes it
			 * with its own, and frees it then. */
			q->dev = NULL;
			continue;
		}
		afx_q_pool_end(q);
		afx_q_umem_put(q);
		afx_q_free(q);
	}
	free(priv->q);
	priv->q = NULL;
	if (priv->group && !--priv->group->refs)
		afx_umem_free(priv->group);
	priv->group = NULL;
	afx_iface_put(priv->ifc);
	priv->ifc = NULL;
	if (priv->ns.fd >= 0)
		close(priv->ns.fd);
	priv->ns.fd = -1;
	pthread_mutex_unlock(&afx_lock);
}

/*
 * The interface's state now, in the device's namespace: gone when no
 * interface has its name or one with another ifindex does (deleted, maybe
 * made again: not the one the sockets were bound to); down when it is
 * not up or has no carrier (a veth whose peer is down).
 */
static int afx_link(struct uxdp_dev *dev, struct uxdp_link_info *li)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_ifinfo fi;
	struct afx_ns saved;
	int err;

	pthread_mutex_lock(&afx_lock);
	err = afx_ns_enter(&priv->ns, &saved);
	if (!err) {
		err = afx_ifinfo(priv->ifname, &fi);
		afx_ns_leave(&saved);
	}
	pthread_mutex_unlock(&afx_lock);
	if (err == -ENODEV || (!err && fi.ifindex != priv->ifc->ifindex)) {
		li->state = UXDP_LINK_GONE;
		li->mtu = err ? 0 : fi.mtu;
		li->new_ifindex = err ? 0 : (uint32_t)fi.ifindex;
		return 0;
	}
	if (err)
		return uxdp_set_error(-err, "afxdp %s: link state: %s",
				      priv->ifname, strerror(-err));
	li->state = fi.up && fi.carrier ? UXDP_LINK_UP : UXDP_LINK_DOWN;
	li->mtu = fi.mtu;
	return 0;
}

const struct uxdp_dev_ops afx_ops = {
	.kind = "afxdp",
	.open = afx_open,
	.stop = afx_stop,
	.poll = afx_poll,
	.rx_pending = afx_rx_pending,
	.xdp_xmit = afx_xdp_xmit,
	.rx_fd = afx_rx_fd,
	.rx_pool = afx_rx_pool,
	.destroy = afx_destroy,
	.link = afx_link,
};

/* ---- create -------------------------------------------------------------- */

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* Options checked on their own, before anything is made. */
static int afx_check_opts(struct afx_priv *p, const char *ifname,
			  const char *group)
{
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE)
		return uxdp_set_error(EINVAL, "afxdp: interface name must be "
				      "1..%d characters", IF_NAMESIZE - 1);
	if (!p->nq || p->nq > UXDP_AFXDP_MAX_QUEUES)
		return uxdp_set_error(EINVAL, "afxdp %s: %u queues: 1..%d",
				      ifname, p->nq, UXDP_AFXDP_MAX_QUEUES);
	if (p->first > 0xffffff || p->first + p->nq > 0xffffff)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range", ifname, p->first);
	if ((p->flags & UXDP_AFXDP_F_COPY) &&
	    (p->flags & UXDP_AFXDP_F_ZEROCOPY))
		return uxdp_set_error(EINVAL, "afxdp %s: copy and zerocopy "
				      "both asked for", ifname);
	if ((p->flags & UXDP_AFXDP_F_NATIVE) &&
	    (p->flags & UXDP_AFXDP_F_GENERIC))
		return uxdp_set_error(EINVAL, "afxdp %s: native and generic "
				      "mode both asked for", ifname);
	if (p->flags & ~(UXDP_AFXDP_F_COPY | UXDP_AFXDP_F_ZEROCOPY |
			 UXDP_AFXDP_F_NATIVE | UXDP_AFXDP_F_GENERIC |
			 UXDP_AFXDP_F_NO_NEED_WAKEUP))
		return uxdp_set_error(EINVAL, "afxdp %s: unknown flags 0x%x",
				      ifname, p->flags);
	if (p->chunk != 2048 && p->chunk != 4096)
		return uxdp_set_error(EINVAL, "afxdp %s: chunk %u: 2048 or "
				      "4096", ifname, p->chunk);
	if (!is_pow2(p->rx_size) || p->rx_size < 64 ||
	    p->rx_size > AFX_MAX_RING)
		return uxdp_set_error(EINVAL, "afxdp %s: rx_size %u: a power "
				      "of two in [64, %u]", ifname, p->rx_size,
				      AFX_MAX_RING);
	if (!is_pow2(p->tx_size) || p->tx_size < 64 ||
	    p->tx_size > AFX_MAX_RING)
		return uxdp_set_error(EINVAL, "afxdp %s: tx_size %u: a power "
				      "of two in [64, %u]", ifname, p->tx_size,
				      AFX_MAX_RING);
	if (p->frames < 2 * AFX_FILL_BATCH || p->frames > AFX_MAX_FRAMES)
		return uxdp_set_error(EINVAL, "afxdp %s: frames %u: %u..%u "
				      "per queue", ifname, p->frames,
				      2 * AFX_FILL_BATCH, AFX_MAX_FRAMES);
	if (p->busy_budget > 0xffff)
		return uxdp_set_error(EINVAL, "afxdp %s: busy_poll budget %u: "
				      "at most 65535", ifname, p->busy_budget);
	if (group && (!*group || strlen(group) > UXDP_AFXDP_GROUP_NAME_MAX))
		return uxdp_set_error(EINVAL, "afxdp %s: shared group name "
				      "must be 1..%d characters", ifname,
				      UXDP_AFXDP_GROUP_NAME_MAX);
	return 0;
}

/* The interface, as it is now: there, up, queues and MTU that fit. */
static int afx_check_iface(struct afx_priv *p, struct afx_ifinfo *fi)
{
	uint32_t room = p->chunk - UXDP_PACKET_HEADROOM - UXDP_FRAME_TAILROOM;
	int err = afx_ifinfo(p->ifname, fi);

	if (err == -ENODEV)
		return uxdp_set_error(ENODEV, "afxdp %s: no such interface "
				      "(in this thread's network namespace)",
				      p->ifname);
	if (err)
		return uxdp_set_error(-err, "afxdp %s: %s", p->ifname,
				      strerror(-err));
	if (!fi->up)
		return uxdp_set_error(ENETDOWN, "afxdp %s: the interface is "
				      "down (ip link set dev %s up)",
				      p->ifname, p->ifname);
	if (fi->rxq && p->first + p->nq > fi->rxq)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range: the interface has %u RX "
				      "queue%s (0..%u)", p->ifname,
				      p->first + p->nq - 1, fi->rxq,
				      fi->rxq == 1 ? "" : "s", fi->rxq - 1);
	if (fi->txq && p->first + p->nq > fi->txq)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range: the interface has %u TX "
				      "queue%s", p->ifname,
				      p->first + p->nq - 1, fi->txq,
				      fi->txq == 1 ? "" : "s");
	if (fi->mtu + AFX_VLAN_ETH_HLEN > room)
		return uxdp_set_error(EINVAL, "afxdp %s: MTU %u too large for "
				      "chunk=%u: a frame of up to %u bytes "
				      "must fit the %u a chunk leaves after "
				      "%d bytes of headroom and %d of "
				      "tailroom; use %s (at most %u)",
				      p->ifname, fi->mtu,
				      p->chunk, fi->mtu + AFX_VLAN_ETH_HLEN,
				      room, UXDP_PACKET_HEADROOM,
				      UXDP_FRAME_TAILROOM,
				      p->chunk < 4096 ? "chunk=4096" :
				      "a smaller MTU",
				      room - AFX_VLAN_ETH_HLEN);
	return 0;
}

/* AF_XDP sockets can be made here: root, and a kernel with AF_XDP. */
static int afx_check_afxdp(void)
{
	int s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (s >= 0) {
		close(s);
		return 0;
	}
	if (errno == EPERM || errno == EACCES)
		return uxdp_set_error(EPERM, "afxdp: not permitted to create "
				      "AF_XDP sockets: run as root "
				      "(CAP_NET_RAW, CAP_BPF, CAP_NET_ADMIN)");
	if (errno == EAFNOSUPPORT)
		return uxdp_set_error(EAFNOSUPPORT, "afxdp: this kernel has no "
				      "AF_XDP (CONFIG_XDP_SOCKETS)");
	return uxdp_set_error(errno, "afxdp: socket(AF_XDP): %s",
			      strerror(errno));
}

/* The shared group, found or made (afx_lock held). */
static int afx_group_get(struct afx_priv *p, const char *name,
			 uint32_t group_frames)
{
	struct afx_umem *um = afx_group_find(name);

	if (um) {
		if (um->chunk_size != p->chunk || um->rx_size != p->rx_size ||
		    um->tx_size != p->tx_size)
			return uxdp_set_error(EINVAL, "afxdp %s: shared group "
					      "'%s' has chunk %u, rx_size %u, "
					      "tx_size %u; its ports must "
					      "match", p->ifname, name,
					      um->chunk_size, um->rx_size,
					      um->tx_size);
		um->refs++;		/* the device's own reference */
		p->group = um;
		return 0;
	}
	if (!group_frames)
		group_frames = 2 * p->frames * p->nq;
	if (group_frames < p->frames * p->nq || group_frames > AFX_MAX_FRAMES *
	    UXDP_AFXDP_MAX_QUEUES)
		return uxdp_set_error(EINVAL, "afxdp %s: group_frames %u: at "
				      "least %u (frames x queues)", p->ifname,
				      group_frames, p->frames * p->nq);
	um = afx_umem_new(name, group_frames, p->chunk, p->rx_size,
			  p->tx_size);
	if (!um)
		return -errno;
	um->reserve = uxdp_pool_create(um->umem, NULL);
	if (!um->reserve || uxdp_umem_fill_all(um->umem) < 0) {
		int err = errno ? -errno : -ENOMEM;

		afx_umem_free(um);
		return err;
	}
	um->next = afx_groups;
	afx_groups = um;
	um->refs = 1;		/* the device's own reference */
	p->group = um;
	return 0;
}

/* The default device name: the interface's, else IF@Q. */
static const char *afx_default_name(const char *ifname, uint32_t q, char *buf,
				    size_t len)
{
	if (strlen(ifname) < UXDP_IFNAMSIZ && !uxdp_dev_get_by_name(ifname))
		return ifname;
	if ((size_t)snprintf(buf, len, "%s@%u", ifname, q) < UXDP_IFNAMSIZ)
		return buf;
	return ifname;
}

UXDP_API __attribute__((cold)) struct uxdp_dev *
uxdp_afxdp_create(const char *name, const struct uxdp_afxdp_opts *opts)
{
	struct afx_priv tmp, *priv;
	struct afx_ifinfo fi;
	struct uxdp_dev *dev;
	const char *ifname, *group;
	char namebuf[UXDP_IFNAMSIZ + 16];
	struct afx_quiet qt;
	uint32_t i, group_frames;
	int err;

	uxdp_clear_error();
	if (!UXDP_OPTS_VALID(opts, uxdp_afxdp_opts)) {
		errno = EINVAL;
		return NULL;
	}
	ifname = UXDP_OPTS_GET(opts, ifname, name);
	group = UXDP_OPTS_GET(opts, shared, NULL);
	memset(&tmp, 0, sizeof(tmp));
	tmp.ns.fd = -1;
	tmp.first = UXDP_OPTS_GET(opts, queue, 0);
	tmp.nq = UXDP_OPTS_GET(opts, queues, 1);
	tmp.flags = UXDP_OPTS_GET(opts, flags, 0);
	tmp.busy_budget = UXDP_OPTS_GET(opts, busy_poll_budget, 0);
	tmp.rx_size = UXDP_OPTS_GET(opts, rx_size, UXDP_AFXDP_DEFAULT_RX_SIZE);
	tmp.tx_size = UXDP_OPTS_GET(opts, tx_size, UXDP_AFXDP_DEFAULT_TX_SIZE);
	tmp.frames = UXDP_OPTS_GET(opts, frames, tmp.rx_size + 2 * tmp.tx_size);
	tmp.chunk = UXDP_OPTS_GET(opts, chunk_size,
				  UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	group_frames = UXDP_OPTS_GET(opts, group_frames, 0);
	err = afx_check_opts(&tmp, ifname, group);
	if (err)
		goto fail;
	snprintf(tmp.ifname, sizeof(tmp.ifname), "%s", ifname);
	if (!name)
		name = afx_default_name(ifname, tmp.first, namebuf,
					sizeof(namebuf));
	err = afx_check_afxdp();
	if (!err)
		err = afx_check_iface(&tmp, &fi);
	if (err)
		goto fail;
	tmp.if_rxq = fi.rxq;
	tmp.if_txq = fi.txq;
	tmp.mtu = fi.mtu;

	dev = uxdp_dev_alloc(name, &afx_ops, tmp.nq, tmp.nq, sizeof(*priv));
	if (!dev)
		return NULL;
	priv = afx_priv(dev);
	*priv = tmp;
	uxdp_dev_set_mtu(dev, tmp.mtu);
	pthread_mutex_lock(&afx_lock);
	afx_quiet_begin(&qt);
	err = afx_ns_self(&priv->ns);
	if (err) {
		err = uxdp_set_error(-err, "afxdp: cannot open this thread's "
				     "network namespace: %s", strerror(-err));
		goto fail_locked;
	}
	err = afx_iface_get(&priv->ns, ifname, fi.ifindex, fi.rxq, &priv->ifc);
	if (err)
		goto fail_locked;
	if (group) {
		err = afx_group_get(priv, group, group_frames);
		if (err)
			goto fail_locked;
	}
	priv->q = calloc(priv->nq, sizeof(*priv->q));
	if (!priv->q) {
		err = uxdp_set_error(ENOMEM, "afxdp: out of memory");
		goto fail_locked;
	}
	for (i = 0; i < priv->nq; i++) {
		err = afx_q_create(dev, i);
		if (err)
			goto fail_locked;
	}
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	return dev;

fail_locked:
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	{
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "%s", msg);
	}
	return NULL;
fail:
	errno = -err;
	return NULL;
}
