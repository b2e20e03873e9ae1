/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: UMEMs (a queue's own, or a shared group's) and the memory of a queue.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

struct afx_umem *afx_groups;

/* ---- UMEMs --------------------------------------------------------------- */

struct afx_umem *afx_group_find(const char *name)
{
	struct afx_umem *um;

	for (um = afx_groups; um; um = um->next)
		if (!strcmp(um->name, name))
			return um;
	return NULL;
}

struct afx_umem *afx_umem_new(const char *name, uint32_t nchunks,
			      uint32_t chunk, uint32_t rx_size,
			      uint32_t tx_size)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = chunk);
	struct afx_umem *um = calloc(1, sizeof(*um));

	if (!um) {
		uxdp_set_error(ENOMEM, "afxdp: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(um->name, sizeof(um->name), "%s", name ? name : "");
	um->nchunks = nchunks;
	um->chunk_size = chunk;
	um->chunk_shift = (uint32_t)__builtin_ctz(chunk);
	um->rx_size = rx_size;
	um->tx_size = tx_size;
	um->size = (uint64_t)nchunks * chunk;
	/* uxdp maps the area (page aligned) and unmaps it when the UMEM
	 * goes, which is after the kernel has let go of it. */
	um->umem = uxdp_umem_create(NULL, um->size, &uo);
	if (!um->umem) {
		int err = errno;

		free(um);
		errno = err;
		return NULL;
	}
	um->area = uxdp_umem_area(um->umem);
	return um;
}

/*
 * The UMEM's end, once no queue uses it. Pools retired with buffers out
 * destroy it themselves when the last comes home (RETIRE_UMEM).
 */
void afx_umem_free(struct afx_umem *um)
{
	struct afx_umem **pp;

	for (pp = &afx_groups; *pp; pp = &(*pp)->next)
		if (*pp == um) {
			*pp = um->next;
			break;
		}
	if (um->reserve) {
		uxdp_pool_set_owner(um->reserve);
		if (um->retired)
			uxdp_pool_retire(um->reserve, UXDP_POOL_RETIRE_UMEM);
		else if (!uxdp_pool_destroy(um->reserve))
			uxdp_umem_destroy(um->umem);
	} else if (!um->retired) {
		uxdp_umem_destroy(um->umem);
	}
	free(um);
}

/*
 * Give @q @n chunks of its group's UMEM: taken from the reserve pool
 * (allocated, then released: the application's again) and posted on
 * @q's pool's fill ring. All or nothing.
 */
static int afx_group_take(struct afx_umem *um, struct afx_q *q, uint32_t n)
{
	struct uxdp_ring *rfq = uxdp_pool_fill_ring(um->reserve);
	struct uxdp_ring *fq = uxdp_pool_fill_ring(q->pool);
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t got = 0, k, idx;

	q->chunks = calloc(n, sizeof(*q->chunks));
	if (!q->chunks)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	uxdp_pool_set_owner(um->reserve);
	while (got < n) {
		k = uxdp_pool_alloc_batch(um->reserve, bufs,
					  MIN(n - got, AFX_FILL_BATCH));
		if (!k)
			break;
		while (k--) {
			q->chunks[got++] = uxdp_buff_chunk_addr(bufs[k]);
			uxdp_pool_release(bufs[k]);
		}
	}
	if (got == n && uxdp_ring_prod_reserve(fq, n, &idx)) {
		uxdp_ring_prod_write_addrs(fq, idx, q->chunks, n);
		uxdp_ring_prod_submit(fq, n);
		q->nchunks = n;
		return 0;
	}
	/* Back where they were: on the reserve's fill ring, which has room
	 * for every chunk. */
	if (got && uxdp_ring_prod_reserve(rfq, got, &idx)) {
		uxdp_ring_prod_write_addrs(rfq, idx, q->chunks, got);
		uxdp_ring_prod_submit(rfq, got);
	}
	free(q->chunks);
	q->chunks = NULL;
	return uxdp_set_error(ENOSPC, "afxdp: shared UMEM '%s' has %u free "
			      "chunks; a queue needs %u (a bigger "
			      "group_frames= on its first port, or fewer "
			      "frames=)", um->name, got, n);
}

/* A queue's chunks back to the group's reserve (its pool is gone). */
static void afx_group_give_back(struct afx_umem *um, struct afx_q *q)
{
	struct uxdp_ring *rfq = uxdp_pool_fill_ring(um->reserve);
	uint32_t idx;

	if (q->nchunks && uxdp_ring_prod_reserve(rfq, q->nchunks, &idx)) {
		uxdp_ring_prod_write_addrs(rfq, idx, q->chunks, q->nchunks);
		uxdp_ring_prod_submit(rfq, q->nchunks);
	}
}

/* ---- queue memory -------------------------------------------------------- */

void afx_q_free(struct afx_q *q)
{
	if (!q)
		return;
	if (q->epfd >= 0)
		close(q->epfd);
	free(q->held);
	free(q->sw);
	free(q->stash);
	free(q->chunks);
	free(q);
}

/*
 * The queue's pool, its end: destroyed if every buffer is home (a group
 * then takes its chunks back), else retired to go when they are.
 */
void afx_q_pool_end(struct afx_q *q)
{
	struct afx_umem *um = q->um;

	if (!q->pool)
		return;
	if (!uxdp_pool_destroy(q->pool)) {
		if (um->reserve)
			afx_group_give_back(um, q);
	} else {
		um->retired = true;
		uxdp_pool_retire(q->pool, UXDP_POOL_RETIRE_UMEM);
	}
	q->pool = NULL;
}

/* A queue's UMEM reference, dropped (freeing the UMEM at the last). */
void afx_q_umem_put(struct afx_q *q)
{
	struct afx_umem *um = q->um;

	q->um = NULL;
	if (um && !--um->refs)
		afx_umem_free(um);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1U << 31))
		p <<= 1;
	return p;
}

int afx_q_create(struct uxdp_dev *dev, uint32_t i)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_umem *um = priv->group;
	struct afx_q *q;
	int err;

	q = calloc(1, sizeof(*q));
	if (!q)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	priv->q[i] = q;
	q->dev = dev;
	q->idx = i;
	q->qid = priv->first + i;
	q->fd = -1;
	q->epfd = -1;
	q->ifc = priv->ifc;
	q->rx_size = priv->rx_size;
	q->tx_size = priv->tx_size;
	q->busy_budget = priv->busy_budget;
	q->max_len = priv->mtu + AFX_VLAN_ETH_HLEN;
	q->wakeup = !(priv->flags & UXDP_AFXDP_F_NO_NEED_WAKEUP);
	q->bind_flags = q->wakeup ? XDP_USE_NEED_WAKEUP : 0;
	if (priv->flags & UXDP_AFXDP_F_COPY)
		q->bind_flags |= XDP_COPY;
	if (priv->flags & UXDP_AFXDP_F_ZEROCOPY)
		q->bind_flags |= XDP_ZEROCOPY;
	uxdp_spin_init(&q->rx_lock);
	uxdp_spin_init(&q->tx_lock);
	/* The poll group waits on this: stable for the device's life,
	 * while sockets come and go with up and down. */
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return uxdp_set_error(errno, "afxdp: epoll_create1: %s",
				      strerror(errno));

	if (um) {
		um->refs++;
		q->um = um;
	} else {
		um = afx_umem_new(NULL, priv->frames, priv->chunk,
				  priv->rx_size, priv->tx_size);
		if (!um)
			return -errno;
		um->refs = 1;
		q->um = um;
	}
	if (um->reserve) {
		UXDP_DECLARE_OPTS(uxdp_pool_opts, po,
				  .fill_size = pow2_at_least(priv->frames),
				  .comp_size = 64);

		q->pool = uxdp_pool_create(um->umem, &po);
		if (!q->pool)
			return -errno;
		err = afx_group_take(um, q, priv->frames);
		if (err)
			return err;
	} else {
		q->pool = uxdp_pool_create(um->umem, NULL);
		if (!q->pool)
			return -errno;
		err = uxdp_umem_fill_all(um->umem);
		if (err < 0)
			return err;
	}
	uxdp_rxq_use_pool(dev, i, q->pool);

	q->held = calloc(um->nchunks, sizeof(*q->held));
	q->sw = calloc(q->tx_size, sizeof(*q->sw));
	q->stash = calloc(q->tx_size, sizeof(*q->stash));
	if (!q->held || !q->sw || !q->stash)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	return 0;
}
