/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device model: allocation and the name registry, up/down, program
 * attach, polls (begin, driver poll, flush), transmit, stats and the optional
 * polling threads.
 */
#define _GNU_SOURCE
#include "../internal.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uxdp/dev.h>

#include "../xdp/xdp_internal.h"
#include "dev_internal.h"

#define MAX_DEVS 1024

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uxdp_dev *reg[MAX_DEVS];	/* by ifindex - 1 */

/* ---- allocation and registry ----------------------------------------------------- */

static int dev_target_xmit(struct uxdp_xdp_target *t, int n,
			   struct uxdp_frame **frames, uint32_t flags)
{
	struct uxdp_dev *dev = (struct uxdp_dev *)
		((char *)t - offsetof(struct uxdp_dev, target));

	return dev->ops->xdp_xmit(dev, n, frames, flags);
}

static int reg_add(struct uxdp_dev *dev)
{
	uint32_t i, slot = MAX_DEVS;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < MAX_DEVS; i++) {
		if (reg[i] && !strcmp(reg[i]->name, dev->name)) {
			pthread_mutex_unlock(&reg_lock);
			return uxdp_fail(EEXIST, "dev: name '%s' is taken",
					 dev->name);
		}
		if (!reg[i] && slot == MAX_DEVS)
			slot = i;
	}
	if (slot == MAX_DEVS) {
		pthread_mutex_unlock(&reg_lock);
		return uxdp_fail(ENOSPC, "dev: more than %d devices", MAX_DEVS);
	}
	dev->ifindex = slot + 1;
	reg[slot] = dev;
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

static void reg_del(struct uxdp_dev *dev)
{
	pthread_mutex_lock(&reg_lock);
	if (dev->ifindex && reg[dev->ifindex - 1] == dev)
		reg[dev->ifindex - 1] = NULL;
	pthread_mutex_unlock(&reg_lock);
}

static void dev_free_mem(struct uxdp_dev *dev)
{
	uint32_t i;

	if (dev->rxq)
		for (i = 0; i < dev->nrxq; i++)
			if (dev->rxq[i].efd >= 0)
				close(dev->rxq[i].efd);
	uxdp_xdp_target_fini(&dev->target);
	free(dev->rxq);
	free(dev->txq);
	free(dev->priv);
	free(dev);
}

UXDP_EXPORT __cold struct uxdp_dev *
uxdp_dev_alloc(const char *name, const struct uxdp_dev_ops *ops,
	       uint32_t nrxq, uint32_t ntxq, size_t priv_size)
{
	struct uxdp_dev *dev;
	uint32_t i;
	int err;

	uxdp_clear_err();
	if (!name || !*name || strlen(name) >= UXDP_IFNAMSIZ) {
		err = uxdp_fail(EINVAL, "dev: name must be 1..%d characters",
				UXDP_IFNAMSIZ - 1);
		goto err;
	}
	if (!ops || !ops->poll || !ops->xdp_xmit) {
		err = uxdp_fail(EINVAL, "dev %s: driver lacks poll or xdp_xmit",
				name);
		goto err;
	}
	if (!nrxq || !ntxq || nrxq > 256 || ntxq > 256) {
		err = uxdp_fail(EINVAL, "dev %s: %u rx / %u tx queues: need "
				"1..256 each", name, nrxq, ntxq);
		goto err;
	}
	err = uxdp_fail(ENOMEM, "dev %s: out of memory", name);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		goto err;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	dev->ops = ops;
	dev->nrxq = nrxq;
	dev->ntxq = ntxq;
	if (posix_memalign((void **)&dev->rxq, UXDP_CACHE_LINE,
			   nrxq * sizeof(*dev->rxq)))
		dev->rxq = NULL;
	if (posix_memalign((void **)&dev->txq, UXDP_CACHE_LINE,
			   ntxq * sizeof(*dev->txq)))
		dev->txq = NULL;
	if (priv_size && posix_memalign(&dev->priv, UXDP_CACHE_LINE, priv_size))
		dev->priv = NULL;
	if (!dev->rxq || !dev->txq || (priv_size && !dev->priv)) {
		free(dev->rxq);
		dev->rxq = NULL;
		goto err_free;
	}
	memset(dev->rxq, 0, nrxq * sizeof(*dev->rxq));
	memset(dev->txq, 0, ntxq * sizeof(*dev->txq));
	if (priv_size)
		memset(dev->priv, 0, priv_size);
	for (i = 0; i < nrxq; i++)
		dev->rxq[i].efd = -1;
	dev->target.xmit = dev_target_xmit;
	if (uxdp_xdp_target_init(&dev->target))
		goto err_free;
	for (i = 0; i < nrxq; i++) {
		struct dev_rxq *q = &dev->rxq[i];

		q->dev = dev;
		q->index = i;
		q->xdp.info.dev = dev;
		q->xdp.info.queue_index = i;
		q->xdp.tx_target = &dev->target;
		q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (q->efd < 0) {
			err = uxdp_fail(errno, "dev %s: eventfd failed", name);
			goto err_free;
		}
	}
	err = reg_add(dev);
	if (err)
		goto err_free;
	for (i = 0; i < nrxq; i++)
		dev->rxq[i].xdp.info.ifindex = dev->ifindex;
	uxdp_clear_err();
	return dev;

err_free:
	dev_free_mem(dev);
err:
	errno = -err;
	return NULL;
}

UXDP_EXPORT void *uxdp_dev_priv(const struct uxdp_dev *dev)
{
	return dev_priv(dev);
}

UXDP_EXPORT struct uxdp_xdp_rxq *uxdp_dev_xdp_rxq(struct uxdp_dev *dev,
						  uint32_t q)
{
	return dev_xdp_rxq(dev, q);
}

UXDP_EXPORT struct uxdp_txq_stats *uxdp_dev_txq_stats_ptr(struct uxdp_dev *dev,
							  uint32_t q)
{
	return dev_txq_stats(dev, q % dev->ntxq);
}

UXDP_EXPORT __cold void uxdp_dev_destroy(struct uxdp_dev *dev)
{
	uint32_t i;

	if (!dev)
		return;
	uxdp_dev_stop(dev);
	uxdp_dev_down(dev);
	reg_del(dev);
	if (dev->ops->destroy)
		dev->ops->destroy(dev);
	for (i = 0; i < dev->nrxq; i++)
		uxdp_prog_put(uxdp_xdp_rxq_set_prog(&dev->rxq[i].xdp, NULL));
	dev_free_mem(dev);
}

UXDP_EXPORT struct uxdp_dev *uxdp_dev_get_by_name(const char *name)
{
	struct uxdp_dev *dev = NULL;
	uint32_t i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < MAX_DEVS && !dev; i++)
		if (reg[i] && !strcmp(reg[i]->name, name))
			dev = reg[i];
	pthread_mutex_unlock(&reg_lock);
	return dev;
}

UXDP_EXPORT struct uxdp_dev *uxdp_dev_get_by_index(uint32_t ifindex)
{
	struct uxdp_dev *dev = NULL;

	pthread_mutex_lock(&reg_lock);
	if (ifindex && ifindex <= MAX_DEVS)
		dev = reg[ifindex - 1];
	pthread_mutex_unlock(&reg_lock);
	return dev;
}

UXDP_EXPORT const char *uxdp_dev_name(const struct uxdp_dev *dev)
{
	return dev->name;
}

UXDP_EXPORT const char *uxdp_dev_kind(const struct uxdp_dev *dev)
{
	return dev->ops->kind ? dev->ops->kind : "?";
}

UXDP_EXPORT uint32_t uxdp_dev_ifindex(const struct uxdp_dev *dev)
{
	return dev->ifindex;
}

UXDP_EXPORT uint32_t uxdp_dev_num_rxq(const struct uxdp_dev *dev)
{
	return dev->nrxq;
}

UXDP_EXPORT uint32_t uxdp_dev_num_txq(const struct uxdp_dev *dev)
{
	return dev->ntxq;
}

/* ---- state, programs, handlers ------------------------------------------------------ */

UXDP_EXPORT int uxdp_dev_up(struct uxdp_dev *dev)
{
	int err = 0;

	uxdp_clear_err();
	if (__atomic_load_n(&dev->up, __ATOMIC_ACQUIRE))
		return 0;
	if (dev->ops->open)
		err = dev->ops->open(dev);
	if (!err)
		__atomic_store_n(&dev->up, 1, __ATOMIC_RELEASE);
	return err;
}

UXDP_EXPORT void uxdp_dev_down(struct uxdp_dev *dev)
{
	uint32_t i;

	if (!__atomic_exchange_n(&dev->up, 0, __ATOMIC_SEQ_CST))
		return;
	/* No poll runs past this point (see uxdp_dev_poll). */
	for (i = 0; i < dev->nrxq; i++)
		uxdp_xdp_rxq_sync(&dev->rxq[i].xdp);
	if (dev->ops->stop)
		dev->ops->stop(dev);
}

UXDP_EXPORT bool uxdp_dev_is_up(const struct uxdp_dev *dev)
{
	return dev_is_up(dev);
}

UXDP_EXPORT int uxdp_dev_attach_prog(struct uxdp_dev *dev, uint32_t q,
				     struct uxdp_prog *prog)
{
	uint32_t i;

	uxdp_clear_err();
	if (q != UXDP_ALL_QUEUES && q >= dev->nrxq)
		return uxdp_fail(EINVAL, "dev %s: no rx queue %u", dev->name, q);
	for (i = 0; i < dev->nrxq; i++) {
		if (q != UXDP_ALL_QUEUES && i != q)
			continue;
		uxdp_prog_put(uxdp_xdp_rxq_set_prog(&dev->rxq[i].xdp, prog));
	}
	return 0;
}

UXDP_EXPORT void uxdp_dev_set_pass_handler(struct uxdp_dev *dev,
					   uxdp_pass_fn fn, void *arg)
{
	uint32_t i;

	/* Set before traffic flows; a poll reads both fields plainly. */
	for (i = 0; i < dev->nrxq; i++) {
		dev->rxq[i].xdp.pass_arg = arg;
		dev->rxq[i].xdp.pass = fn;
	}
}

UXDP_EXPORT void uxdp_dev_set_bulk(struct uxdp_dev *dev, uint32_t bulk)
{
	uxdp_xdp_target_set_bulk(&dev->target, bulk);
}

UXDP_EXPORT struct uxdp_xdp_target *uxdp_dev_target(struct uxdp_dev *dev)
{
	return &dev->target;
}

/* ---- datapath ------------------------------------------------------------------ */

UXDP_EXPORT int uxdp_dev_poll(struct uxdp_dev *dev, uint32_t q, int budget)
{
	struct uxdp_xdp_rxq *rxq;
	struct uxdp_xdp_cpu *cpu;
	int n;

	if (unlikely(q >= dev->nrxq || budget < 0))
		return -EINVAL;
	rxq = &dev->rxq[q].xdp;
	cpu = uxdp_xdp_poll_begin(rxq);
	if (unlikely(!cpu))
		return -EMFILE;		/* more than UXDP_MAX_THREADS */
	/*
	 * Checked after poll_begin made the sequence odd, both seq_cst, so
	 * uxdp_dev_down() either stops this poll here or waits for it to end
	 * before the driver tears the queue down.
	 */
	if (unlikely(!__atomic_load_n(&dev->up, __ATOMIC_SEQ_CST))) {
		uxdp_xdp_poll_end(cpu, rxq);
		return -ENETDOWN;
	}
	n = dev->ops->poll(dev, q, cpu, budget);
	uxdp_xdp_poll_end(cpu, rxq);
	return n;
}

UXDP_EXPORT int uxdp_dev_xmit(struct uxdp_dev *dev, int n,
			      struct uxdp_frame **frames, uint32_t flags)
{
	if (unlikely(n < 0))
		return -EINVAL;
	return dev->ops->xdp_xmit(dev, n, frames, flags);
}

static void copy_stats(uint64_t *dst, const uint64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = stat_read(&src[i]);
}

UXDP_EXPORT int uxdp_dev_rxq_stats(const struct uxdp_dev *dev, uint32_t q,
				   struct uxdp_rxq_stats *st)
{
	if (!dev || !st || q >= dev->nrxq)
		return -EINVAL;
	copy_stats((uint64_t *)st, (const uint64_t *)&dev->rxq[q].xdp.stats,
		   sizeof(*st) / sizeof(uint64_t));
	return 0;
}

UXDP_EXPORT int uxdp_dev_txq_stats(const struct uxdp_dev *dev, uint32_t q,
				   struct uxdp_txq_stats *st)
{
	if (!dev || !st || q >= dev->ntxq)
		return -EINVAL;
	copy_stats((uint64_t *)st, (const uint64_t *)&dev->txq[q].stats,
		   sizeof(*st) / sizeof(uint64_t));
	return 0;
}

/* ---- polling threads --------------------------------------------------------------- */

UXDP_EXPORT void uxdp_dev_kick(struct uxdp_dev *dev, uint32_t q)
{
	dev_kick(dev, q);
}

void dev_kick_slow(struct uxdp_dev *dev, uint32_t q)
{
	struct dev_rxq *rq = &dev->rxq[q];
	uint64_t one = 1;
	/*
	 * A Dekker handshake with rxq_thread_idle(), done with read-modify-
	 * writes on need_wakeup alone (both seq_cst, so they are totally
	 * ordered): if the poller's exchange came first we read its 1 and
	 * wake it; if ours came first, the poller's exchange reads our value
	 * and so synchronises with us, and its ring check that follows sees
	 * the entries the producer submitted before calling us.
	 */
	if (__atomic_exchange_n(&rq->need_wakeup, 0, __ATOMIC_SEQ_CST))
		if (write(rq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			uxdp_pr(UXDP_WARN, "uxdp: kick %s/%u: %s\n", dev->name,
				q, strerror(errno));
}

static void rxq_thread_idle(struct uxdp_dev *dev, struct dev_rxq *rq)
{
	struct pollfd pfd = { .fd = rq->efd, .events = POLLIN };
	uint64_t v;

	__atomic_exchange_n(&rq->need_wakeup, 1, __ATOMIC_SEQ_CST); /* see kick */
	if (!(dev->ops->rx_pending && dev->ops->rx_pending(dev, rq->index)) &&
	    !__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE))
		poll(&pfd, 1, (int)((dev->idle_us + 999) / 1000));
	if (read(rq->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: timed out or woken by nothing; fine. */
	}
	__atomic_store_n(&rq->need_wakeup, 0, __ATOMIC_RELAXED);
}

static void *rxq_thread(void *arg)
{
	struct dev_rxq *rq = arg;
	struct uxdp_dev *dev = rq->dev;

	if (dev->pin_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(dev->pin_cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		int n = uxdp_dev_poll(dev, rq->index, dev->budget);

		if (n <= 0)
			rxq_thread_idle(dev, rq);
	}
	return NULL;
}

UXDP_EXPORT __cold int uxdp_dev_start(struct uxdp_dev *dev,
				      const struct uxdp_dev_thread_opts *opts)
{
	uint32_t i, flags;
	int err;

	uxdp_clear_err();
	if (!UXDP_OPTS_VALID(opts, uxdp_dev_thread_opts))
		return -EINVAL;
	if (dev->threads_running)
		return uxdp_fail(EALREADY, "dev %s: threads already running",
				 dev->name);
	flags = UXDP_OPTS_GET(opts, flags, 0);
	if (flags & ~UXDP_THREAD_F_PIN)
		return uxdp_fail(EINVAL, "dev %s: unknown thread flags 0x%x",
				 dev->name, flags);
	dev->budget = UXDP_OPTS_GET(opts, budget, UXDP_NAPI_BUDGET);
	dev->idle_us = UXDP_OPTS_GET(opts, idle_us, 10000);
	dev->pin_cpu = (flags & UXDP_THREAD_F_PIN) ? UXDP_OPTS_GET(opts, cpu, 0)
						   : -1;
	if (dev->budget < 1)
		return uxdp_fail(EINVAL, "dev %s: budget %d < 1", dev->name,
				 dev->budget);
	__atomic_store_n(&dev->stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&dev->threads_running, 1, __ATOMIC_RELEASE);
	for (i = 0; i < dev->nrxq; i++) {
		err = pthread_create(&dev->rxq[i].thread, NULL, rxq_thread,
				     &dev->rxq[i]);
		if (err) {
			uxdp_dev_stop(dev);
			return uxdp_fail(err, "dev %s: pthread_create: %s",
					 dev->name, strerror(err));
		}
		dev->rxq[i].thread_started = true;
	}
	return 0;
}

UXDP_EXPORT __cold void uxdp_dev_stop(struct uxdp_dev *dev)
{
	uint64_t one = 1;
	uint32_t i;

	if (!__atomic_load_n(&dev->threads_running, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < dev->nrxq; i++) {
		struct dev_rxq *rq = &dev->rxq[i];

		if (!rq->thread_started)
			continue;
		if (write(rq->efd, &one, sizeof(one)) < 0) {
			/* Full counter: the thread is awake anyway. */
		}
		pthread_join(rq->thread, NULL);
		rq->thread_started = false;
	}
	__atomic_store_n(&dev->threads_running, 0, __ATOMIC_RELEASE);
}
