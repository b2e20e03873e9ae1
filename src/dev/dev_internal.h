/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device structure and the inline accessors in-tree drivers use on
 * their fast paths (the kernel's netdev_priv() idea). Out-of-tree drivers
 * use the out-of-line uxdp_dev_* functions in <uxdp/dev.h>, which wrap
 * these.
 */
#ifndef UXDP_DEV_INTERNAL_H
#define UXDP_DEV_INTERNAL_H

#include <pthread.h>

#include <uxdp/dev.h>

#include "../xdp/xdp_internal.h"

struct dev_rxq {
	struct uxdp_xdp_rxq xdp;
	struct uxdp_dev *dev;
	uint32_t index;
	/*
	 * The poll group polling this queue, or NULL: set and cleared under
	 * the group lock, read by kicks from any thread inside a read-side
	 * section (a group is freed only after a grace period).
	 */
	struct uxdp_poll_group *group;
	/* The group uxdp_dev_start() made for this queue alone. */
	struct uxdp_poll_group *own_group;
	/*
	 * The pool of the AF_XDP socket bound to this queue, if any: its
	 * owner is the queue's poller too (copy-mode receive allocates from
	 * it there), handed over as rx_pool's is. Set by the socket layer.
	 */
	struct uxdp_pool *xsk_pool;
	/* Non-zero while the queue is reconfigured (dev_rxq_pause): polls
	 * skip it. */
	uint32_t paused;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct dev_txq {
	struct uxdp_txq_stats stats;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct uxdp_dev {
	char name[UXDP_IFNAMSIZ];
	uint32_t ifindex;
	const struct uxdp_dev_ops *ops;
	uint32_t nrxq;
	uint32_t ntxq;
	struct dev_rxq *rxq;
	struct dev_txq *txq;
	uint32_t up;
	uint32_t mtu;			/* uxdp_dev_set_mtu(); 0: no limit */
	struct uxdp_xdp_target target;
	void *priv;
};

static inline void *dev_priv(const struct uxdp_dev *dev)
{
	return dev->priv;
}

static inline struct uxdp_xdp_rxq *dev_xdp_rxq(struct uxdp_dev *dev,
					       uint32_t q)
{
	return &dev->rxq[q].xdp;
}

/* @q must be a valid TX queue index (no modulo on the fast path). */
static inline struct uxdp_txq_stats *dev_txq_stats(struct uxdp_dev *dev,
						   uint32_t q)
{
	return &dev->txq[q].stats;
}

static inline bool dev_is_up(const struct uxdp_dev *dev)
{
	return __atomic_load_n(&dev->up, __ATOMIC_ACQUIRE);
}

/* Wake the poll group's thread if it sleeps (group.c). */
void group_kick(struct uxdp_poll_group *g);

/*
 * uxdp_dev_kick(): wake whoever polls RX queue @q, if it sleeps. Called
 * inside a read-side section (a transmit), which keeps the group alive.
 */
static inline void dev_kick(struct uxdp_dev *dev, uint32_t q)
{
	struct uxdp_poll_group *g = __atomic_load_n(&dev->rxq[q].group,
						    __ATOMIC_ACQUIRE);

	if (g)
		group_kick(g);
}

/*
 * One poll of @dev's queue @q by a thread already in a read-side section
 * (uxdp_dev_poll's body). Returns packets processed or -errno.
 */
int dev_poll_locked(struct uxdp_dev *dev, uint32_t q, int budget);

/*
 * Stop polls of queue @q (they return at once, doing nothing) and wait
 * until none is running: the kernel's napi_disable around a queue's
 * reconfiguration. Nests. Returns 0, or -EDEADLK from inside a poll (the
 * queue stays paused: resume it). dev_rxq_resume undoes one pause and
 * wakes the queue's poller.
 */
int dev_rxq_pause(struct uxdp_dev *dev, uint32_t q);
void dev_rxq_resume(struct uxdp_dev *dev, uint32_t q);

/*
 * Bind @pool as queue @q's socket pool (NULL unbinds). Returns 0, or -EBUSY
 * if another is bound. The socket layer calls it; the pool's owner follows
 * the queue's poller from then on.
 */
int dev_rxq_bind_xsk_pool(struct uxdp_dev *dev, uint32_t q,
			  struct uxdp_pool *pool);

/* Take every queue of @dev out of its poll group (destroy). */
void group_forget_dev(struct uxdp_dev *dev);

/* The device of @ifindex, or NULL, for a caller inside a read-side
 * section (dev.c): no lock. */
struct uxdp_dev *dev_by_ifindex_rcu(uint32_t ifindex);

#endif /* UXDP_DEV_INTERNAL_H */
