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

struct dev_rxq {
	struct uxdp_xdp_rxq xdp;
	struct uxdp_dev *dev;
	uint32_t index;
	/* Polling thread: sleeps on efd when idle with need_wakeup set. */
	uint32_t need_wakeup;
	int efd;
	bool thread_started;
	pthread_t thread;
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
	struct uxdp_xdp_target target;
	/* Polling threads. */
	uint32_t threads_running;
	uint32_t stop;
	int budget;
	uint32_t idle_us;
	int pin_cpu;
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

void dev_kick_slow(struct uxdp_dev *dev, uint32_t q);

/* uxdp_dev_kick(): nothing to do unless polling threads run. */
static inline void dev_kick(struct uxdp_dev *dev, uint32_t q)
{
	if (__atomic_load_n(&dev->threads_running, __ATOMIC_RELAXED))
		dev_kick_slow(dev, q);
}

#endif /* UXDP_DEV_INTERNAL_H */
