/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: What was obtained: uxdp_afxdp_info(), per-queue statistics and the
 * report uxdp_afxdp_print() writes.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

/* ---- what was obtained --------------------------------------------------- */

static struct afx_priv *afx_priv_of(struct uxdp_dev *dev)
{
	if (!dev || strcmp(uxdp_dev_kind(dev), "afxdp"))
		return NULL;
	return afx_priv(dev);
}

static uint32_t afx_mode_of(uint8_t attach_mode)
{
	switch (attach_mode) {
	case XDP_ATTACHED_NONE:
		return UXDP_AFXDP_XDP_NONE;
	case XDP_ATTACHED_DRV:
		return UXDP_AFXDP_XDP_NATIVE;
	case XDP_ATTACHED_SKB:
		return UXDP_AFXDP_XDP_GENERIC;
	default:
		return UXDP_AFXDP_XDP_OTHER;
	}
}

UXDP_API int uxdp_afxdp_info(struct uxdp_dev *dev, struct uxdp_afxdp_info *info)
{
	struct afx_priv *priv = afx_priv_of(dev);
	struct afx_iface *ifc;
	struct afx_quiet qt;
	struct afx_ns saved;
	uint32_t i;

	uxdp_clear_error();
	if (!priv || !info)
		return uxdp_set_error(EINVAL, "afxdp: not an afxdp device");
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&afx_lock);
	ifc = priv->ifc;
	snprintf(info->ifname, sizeof(info->ifname), "%s", priv->ifname);
	info->ifindex = (uint32_t)ifc->ifindex;
	info->if_rx_queues = priv->if_rxq;
	info->if_tx_queues = priv->if_txq;
	info->first_queue = priv->first;
	info->queues = priv->nq;
	info->mtu = priv->mtu;
	info->up = priv->up;
	info->bpffs = afx_bpffs_mounted();
	info->need_wakeup = !(priv->flags & UXDP_AFXDP_F_NO_NEED_WAKEUP);
	info->chunk_size = priv->chunk;
	info->frames = priv->frames;
	info->rx_size = priv->rx_size;
	info->tx_size = priv->tx_size;
	if (priv->group) {
		info->shared = true;
		snprintf(info->group, sizeof(info->group), "%s",
			 priv->group->name);
	}
	for (i = 0; i < ifc->map_entries; i++)
		info->no_socket += afx_iface_miss(ifc, i);
	if (priv->up) {
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);
		int v = 0;
		socklen_t len = sizeof(v);
		struct afx_q *q0 = priv->q[0];

		info->attach = ifc->attach;
		afx_quiet_begin(&qt);
		if (!afx_ns_enter(&priv->ns, &saved)) {
			if (!bpf_xdp_query(ifc->ifindex, 0, &qo)) {
				info->xdp_mode = afx_mode_of(qo.attach_mode);
				info->prog_id = qo.prog_id;
			}
			afx_ns_leave(&saved);
		}
		afx_quiet_end(&qt);
		info->zerocopy = true;
		for (i = 0; i < priv->nq; i++)
			info->zerocopy &= priv->q[i]->zc;
		if (q0->fd >= 0 &&
		    !getsockopt(q0->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &v,
				&len))
			info->busy_poll = v;
		len = sizeof(v);
		/* The kernel sets SO_BUSY_POLL_BUDGET but does not say it
		 * back (ENOPROTOOPT): then it is the value we set. */
		if (info->busy_poll)
			info->busy_poll_budget =
				!getsockopt(q0->fd, SOL_SOCKET,
					    SO_BUSY_POLL_BUDGET, &v, &len) ?
				(uint32_t)v : q0->busy_budget;
	}
	pthread_mutex_unlock(&afx_lock);
	return 0;
}

UXDP_API int uxdp_afxdp_queue_stats(struct uxdp_dev *dev, uint32_t qi,
				    struct uxdp_afxdp_queue_stats *st)
{
	struct afx_priv *priv = afx_priv_of(dev);
	struct xdp_statistics k, cur;
	const struct afx_qstats *s;
	struct afx_q *q;

	uxdp_clear_error();
	if (!priv || !st || qi >= priv->nq)
		return uxdp_set_error(EINVAL, "afxdp: not an afxdp device, or "
				      "no queue %u", qi);
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&afx_lock);
	q = priv->q[qi];
	s = &q->st;
	st->queue = q->qid;
	st->bound = q->xsk != NULL;
	st->zerocopy = q->zc;
	k = q->kbase;
	if (q->xsk && !afx_kst_read(q, &cur))
		afx_kst_add(&k, &cur);
	st->rx_dropped = k.rx_dropped;
	st->rx_invalid_descs = k.rx_invalid_descs;
	st->tx_invalid_descs = k.tx_invalid_descs;
	st->rx_ring_full = k.rx_ring_full;
	st->rx_fill_ring_empty_descs = k.rx_fill_ring_empty_descs;
	st->tx_ring_empty_descs = k.tx_ring_empty_descs;
	st->no_socket = afx_iface_miss(q->ifc, q->qid);
	st->rx_descs = st_get(&s->rx_descs);
	st->rx_bad_descs = st_get(&s->rx_bad_descs);
	st->fill_posted = st_get(&s->fill_posted);
	st->fill_short = st_get(&s->fill_short);
	st->fill_kicks = st_get(&s->fill_kicks);
	st->rx_kicks = st_get(&s->rx_kicks);
	st->tx_nocopy = st_get(&s->tx_nocopy);
	st->tx_copy = st_get(&s->tx_copy);
	st->tx_completed = st_get(&s->tx_completed);
	st->tx_kicks = st_get(&s->tx_kicks);
	st->tx_kick_again = st_get(&s->tx_kick_again);
	st->tx_kick_errors = st_get(&s->tx_kick_errors);
	st->tx_no_buffer = st_get(&s->tx_no_buffer);
	st->comp_mismatch = st_get(&s->comp_mismatch);
	st->tx_in_flight = __atomic_load_n(&q->inflight, __ATOMIC_RELAXED);
	st->tx_stash = __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED);
	st->kernel_held = __atomic_load_n(&q->nheld, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&afx_lock);
	return 0;
}

UXDP_API const char *uxdp_afxdp_xdp_mode_str(uint32_t mode)
{
	switch (mode) {
	case UXDP_AFXDP_XDP_NONE:
		return "none";
	case UXDP_AFXDP_XDP_NATIVE:
		return "native";
	case UXDP_AFXDP_XDP_GENERIC:
		return "generic";
	case UXDP_AFXDP_XDP_OTHER:
		return "other";
	}
	return "?";
}

UXDP_API const char *uxdp_afxdp_attach_str(uint32_t attach)
{
	switch (attach) {
	case UXDP_AFXDP_ATTACH_NONE:
		return "not attached";
	case UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER:
		return "libxdp dispatcher";
	case UXDP_AFXDP_ATTACH_LIBXDP_SINGLE:
		return "libxdp, no dispatcher";
	case UXDP_AFXDP_ATTACH_LIBBPF_LINK:
		return "bpf_link";
	case UXDP_AFXDP_ATTACH_LIBBPF:
		return "netlink (bpf_xdp_attach)";
	}
	return "?";
}

/* One "scope name value" line, if non-zero or asked for all. */
struct afx_line {
	const char *scope, *name;
	uint64_t v;
};

static int afx_pline(FILE *f, uint32_t flags, const struct afx_line *l)
{
	if (!l->v && !(flags & UXDP_STATS_ALL))
		return 0;
	return fprintf(f, "  %-7s %-26s %llu\n", l->scope, l->name,
		       (unsigned long long)l->v) < 0 ? -EIO : 0;
}

UXDP_API int uxdp_afxdp_print(struct uxdp_dev *dev, FILE *f, uint32_t flags)
{
	struct uxdp_afxdp_info in;
	uint32_t i;
	int err;

	if (!f)
		return -EINVAL;
	err = uxdp_afxdp_info(dev, &in);
	if (err)
		return err;
	if (fprintf(f, "%s: afxdp %s queues %u-%u (interface: %u rx / %u tx "
		    "queues, mtu %u)%s\n"
		    "  xdp %s, prog id %u, attached by %s%s\n"
		    "  %s, need_wakeup %s, busy_poll %s (budget %u)\n"
		    "  chunk %u, %u frames/queue, rx/fill %u, tx/comp %u%s%s\n",
		    uxdp_dev_name(dev), in.ifname, in.first_queue,
		    in.first_queue + in.queues - 1, in.if_rx_queues,
		    in.if_tx_queues, in.mtu, in.up ? "" : ", down",
		    uxdp_afxdp_xdp_mode_str(in.xdp_mode), in.prog_id,
		    uxdp_afxdp_attach_str(in.attach),
		    in.bpffs ? "" : " (no bpffs at /sys/fs/bpf: libxdp's "
		    "dispatcher needs mount -t bpf bpf /sys/fs/bpf)",
		    in.up ? (in.zerocopy ? "zero-copy" : "copy") : "unbound",
		    in.need_wakeup ? "on" : "off", in.busy_poll ? "on" : "off",
		    in.busy_poll_budget, in.chunk_size, in.frames, in.rx_size,
		    in.tx_size, in.shared ? ", shared UMEM " : "",
		    in.shared ? in.group : "") < 0)
		return -EIO;
	if (in.no_socket && fprintf(f, "  passed to the stack, no socket on "
				    "their queue: %llu\n",
				    (unsigned long long)in.no_socket) < 0)
		return -EIO;
	for (i = 0; i < in.queues; i++) {
		struct uxdp_afxdp_queue_stats q;
		struct uxdp_rxq_stats rs;
		struct uxdp_txq_stats ts;

		if (uxdp_afxdp_queue_stats(dev, i, &q) ||
		    uxdp_dev_rxq_stats(dev, i, &rs) ||
		    uxdp_dev_txq_stats(dev, i, &ts))
			return -EINVAL;
		if (fprintf(f, " %s/%u (interface queue %u)%s\n",
			    uxdp_dev_name(dev), i, q.queue,
			    q.bound ? "" : ", not bound") < 0)
			return -EIO;
		err = 0;
		{
			const struct afx_line lines[] = {
				{ "kernel", "rx_dropped", q.rx_dropped },
				{ "kernel", "rx_invalid_descs",
				  q.rx_invalid_descs },
				{ "kernel", "tx_invalid_descs",
				  q.tx_invalid_descs },
				{ "kernel", "rx_ring_full", q.rx_ring_full },
				{ "kernel", "rx_fill_ring_empty_descs",
				  q.rx_fill_ring_empty_descs },
				{ "kernel", "tx_ring_empty_descs",
				  q.tx_ring_empty_descs },
				{ "prog", "no_socket", q.no_socket },
				{ "driver", "rx_descs", q.rx_descs },
				{ "driver", "rx_bad_descs", q.rx_bad_descs },
				{ "driver", "fill_posted", q.fill_posted },
				{ "driver", "fill_short", q.fill_short },
				{ "driver", "fill_kicks", q.fill_kicks },
				{ "driver", "rx_kicks", q.rx_kicks },
				{ "driver", "tx_nocopy", q.tx_nocopy },
				{ "driver", "tx_copy", q.tx_copy },
				{ "driver", "tx_completed", q.tx_completed },
				{ "driver", "tx_kicks", q.tx_kicks },
				{ "driver", "tx_kick_again", q.tx_kick_again },
				{ "driver", "tx_kick_errors",
				  q.tx_kick_errors },
				{ "driver", "tx_no_buffer", q.tx_no_buffer },
				{ "driver", "comp_mismatch", q.comp_mismatch },
				{ "driver", "tx_in_flight", q.tx_in_flight },
				{ "driver", "tx_stash", q.tx_stash },
				{ "driver", "kernel_held", q.kernel_held },
				{ "uxdp", "rx packets", rs.packets },
				{ "uxdp", "rx drop", rs.drop },
				{ "uxdp", "rx pass", rs.pass },
				{ "uxdp", "rx tx", rs.tx },
				{ "uxdp", "rx redirect", rs.redirect },
				{ "uxdp", "rx tx_err", rs.tx_err },
				{ "uxdp", "rx redirect_err", rs.redirect_err },
				{ "uxdp", "tx packets", ts.packets },
				{ "uxdp", "tx full", ts.full },
				{ "uxdp", "tx too_big", ts.too_big },
				{ "uxdp", "tx down", ts.down },
			};
			size_t k;

			for (k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
				err |= afx_pline(f, flags, &lines[k]);
		}
		if (err)
			return -EIO;
	}
	return 0;
}
