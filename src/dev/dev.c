/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device model: allocation and the name registry, up/down, program
 * attach, polls (begin, driver poll, flush), transmit, stats, and a
 * destroy that is safe while traffic flows. Polling threads and poll
 * groups are in group.c.
 */
#define _GNU_SOURCE
#include "../internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <uxdp/dev.h>
#include <uxdp/pool.h>
#include <uxdp/umem.h>

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
	/* Release: dev_by_ifindex_rcu() finds it initialised. */
	__atomic_store_n(&reg[slot], dev, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

static void reg_del(struct uxdp_dev *dev)
{
	pthread_mutex_lock(&reg_lock);
	if (dev->ifindex && reg[dev->ifindex - 1] == dev)
		__atomic_store_n(&reg[dev->ifindex - 1], NULL,
				 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&reg_lock);
}

/* A poll's lookup (bpf_redirect): no lock; the device's destroy takes it
 * out of the registry and then waits for a grace period, so inside a
 * read-side section what this returns stays valid. */
struct uxdp_dev *dev_by_ifindex_rcu(uint32_t ifindex)
{
	if (!ifindex || ifindex > MAX_DEVS)
		return NULL;
	return __atomic_load_n(&reg[ifindex - 1], __ATOMIC_ACQUIRE);
}

static void dev_free_mem(struct uxdp_dev *dev)
{
	xdp_target_fini(&dev->target);
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
	dev->target.xmit = dev_target_xmit;
	if (xdp_target_init(&dev->target))
		goto err_free;
	for (i = 0; i < nrxq; i++) {
		struct dev_rxq *q = &dev->rxq[i];

		q->dev = dev;
		q->index = i;
		q->xdp.info.dev = dev;
		q->xdp.info.queue_index = i;
		q->xdp.tx_target = &dev->target;
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

UXDP_EXPORT struct uxdp_rxq_info *uxdp_dev_rxq_info(struct uxdp_dev *dev,
						   uint32_t q)
{
	return q < dev->nrxq ? &dev->rxq[q].xdp.info : NULL;
}

UXDP_EXPORT int uxdp_rxq_use_pool(struct uxdp_dev *dev, uint32_t q,
				  struct uxdp_pool *pool)
{
	struct uxdp_rxq_info *info;

	if (!dev || !pool || q >= dev->nrxq)
		return uxdp_set_error(EINVAL, "rx pool: %s", !dev ?
				      "no device" : !pool ? "no pool" :
				      "no such queue");
	info = &dev->rxq[q].xdp.info;
	/* Nobody owns the pool until a thread polls the queue: the dev
	 * layer hands it over (rx_pool) when one starts. */
	uxdp_pool_disown(pool);
	/* Received buffers are the pool's heads; owner NULL: "self". */
	info->mem.type = UXDP_MEM_POOL;
	info->mem.owner = NULL;
	uxdp_pool_set_rxq(pool, info);
	return 0;
}

UXDP_EXPORT struct uxdp_pool *uxdp_rxq_pool_create(struct uxdp_dev *dev,
						   uint32_t q, uint32_t frames,
						   uint32_t chunk_size)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = chunk_size);
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	char msg[UXDP_ERRMSG_MAX];
	int err;

	if (!dev || q >= dev->nrxq || !frames) {
		errno = -uxdp_set_error(EINVAL, "rx pool: %s",
					!dev ? "no device" :
					q >= dev->nrxq ? "no such queue" :
					"no frames");
		return NULL;
	}
	/* The fill ring holds every chunk (the UMEM's default size). */
	umem = uxdp_umem_create(NULL, (uint64_t)frames * chunk_size, &uo);
	if (!umem)
		return NULL;
	pool = uxdp_pool_create(umem, NULL);
	err = pool ? uxdp_umem_fill_all(umem) : -(errno ? errno : ENOMEM);
	if (err < 0)
		goto fail;
	uxdp_rxq_use_pool(dev, q, pool);
	return pool;
fail:
	/* The reason first: destroying clears it. */
	snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
	if (pool)
		uxdp_pool_destroy(pool);
	uxdp_umem_destroy(umem);
	errno = -uxdp_set_error(-err, "%s", msg);
	return NULL;
}

UXDP_EXPORT bool uxdp_dev_rxq_has_prog(struct uxdp_dev *dev, uint32_t q)
{
	return __atomic_load_n(&dev->rxq[q].xdp.prog, __ATOMIC_RELAXED);
}

/* ---- counters a driver updates ---------------------------------------------------- */

UXDP_EXPORT void uxdp_txq_count(struct uxdp_dev *dev, uint32_t q,
				uint32_t sent, uint64_t bytes)
{
	struct uxdp_txq_stats *st = &dev->txq[q].stats;

	/* One writer at a time (the driver's lock): plain relaxed adds. */
	stat_add(&st->packets, sent);
	stat_add(&st->bytes, bytes);
	stat_inc(&st->xmit_calls);
}

UXDP_EXPORT void uxdp_txq_count_sent(struct uxdp_dev *dev, uint32_t q,
				     uint32_t sent, uint64_t bytes)
{
	struct uxdp_txq_stats *st = &dev->txq[q].stats;

	stat_add(&st->packets, sent);
	stat_add(&st->bytes, bytes);
}

UXDP_EXPORT void uxdp_txq_count_atomic(struct uxdp_dev *dev, uint32_t q,
				       uint32_t sent, uint64_t bytes)
{
	struct uxdp_txq_stats *st = &dev->txq[q].stats;

	__atomic_fetch_add(&st->packets, sent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->xmit_calls, 1, __ATOMIC_RELAXED);
}

UXDP_EXPORT void uxdp_txq_count_refused(struct uxdp_dev *dev, uint32_t q,
					enum uxdp_txq_refusal why, uint32_t n)
{
	struct uxdp_txq_stats *st = &dev->txq[q].stats;
	uint64_t *c = why == UXDP_TXQ_FULL ? &st->full :
		      why == UXDP_TXQ_TOO_BIG ? &st->too_big :
		      why == UXDP_TXQ_DOWN ? &st->down : &st->bad_flags;

	/* Refusals happen outside any lock: an atomic add (a rare path). */
	if (n)
		__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

UXDP_EXPORT void uxdp_rxq_count_drained(struct uxdp_dev *dev, uint32_t q,
					uint32_t n)
{
	/* At down or destroy, when no poll of the queue runs. */
	stat_add(&dev->rxq[q].xdp.stats.drained, n);
}

UXDP_EXPORT __cold void uxdp_dev_destroy(struct uxdp_dev *dev)
{
	uint32_t i, forgot;

	if (!dev)
		return;
	if (xdp_rcu_in_reader()) {
		uxdp_pr(UXDP_WARN, "uxdp: dev %s: uxdp_dev_destroy() from inside "
			"a poll would wait for itself: not destroyed\n",
			dev->name);
		return;
	}
	/* Nobody polls it any more: its threads are gone, its queues are
	 * out of every group, and down waited for the polls in progress and
	 * gave back what was queued to it. */
	uxdp_dev_stop(dev);
	group_forget_dev(dev);
	uxdp_dev_down(dev);
	/* Nobody finds it any more: not by name, not through a map slot, not
	 * as a veth peer. Transmits to it fail from here on (it is down). */
	reg_del(dev);
	forgot = xdp_maps_forget(&dev->target);
	if (dev->ops->unlink)
		dev->ops->unlink(dev);
	/* Whoever found it before has finished with it: every poll and
	 * transmit that was running has ended, and with it every bulk queue
	 * holding frames for it has been flushed (refused: counted by the
	 * sender, returned to their owners). */
	xdp_synchronize("dev destroy");
	if (forgot)
		uxdp_pr(UXDP_DEBUG, "uxdp: dev %s: cleared from %u map "
			"slot(s)\n", dev->name, forgot);
	if (dev->ops->destroy)
		dev->ops->destroy(dev);
	/* No poll can run on it: no grace period needed for the programs. */
	for (i = 0; i < dev->nrxq; i++)
		uxdp_prog_put(__atomic_exchange_n(&dev->rxq[i].xdp.prog, NULL,
						  __ATOMIC_ACQ_REL));
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

UXDP_EXPORT uint32_t uxdp_dev_mtu(const struct uxdp_dev *dev)
{
	return __atomic_load_n(&dev->mtu, __ATOMIC_RELAXED);
}

UXDP_EXPORT void uxdp_dev_set_mtu(struct uxdp_dev *dev, uint32_t mtu)
{
	__atomic_store_n(&dev->mtu, mtu, __ATOMIC_RELAXED);
}

UXDP_EXPORT int uxdp_dev_link(struct uxdp_dev *dev, struct uxdp_link_info *info)
{
	if (!dev || !info)
		return uxdp_set_error(EINVAL, "uxdp_dev_link: NULL %s",
				      dev ? "info" : "device");
	info->state = UXDP_LINK_UP;
	info->mtu = uxdp_dev_mtu(dev);
	info->new_ifindex = 0;
	return dev->ops->link ? dev->ops->link(dev, info) : 0;
}

UXDP_EXPORT const char *uxdp_link_state_str(enum uxdp_link_state state)
{
	switch (state) {
	case UXDP_LINK_UP:
		return "up";
	case UXDP_LINK_DOWN:
		return "down";
	case UXDP_LINK_GONE:
		return "gone";
	}
	return "?";
}

/* ---- state, programs, handlers ------------------------------------------------------ */

UXDP_EXPORT int uxdp_dev_up(struct uxdp_dev *dev)
{
	uint32_t q;
	int err = 0;

	uxdp_clear_err();
	if (__atomic_load_n(&dev->up, __ATOMIC_ACQUIRE))
		return 0;
	if (dev->ops->open)
		err = dev->ops->open(dev);
	if (err)
		return err;
	__atomic_store_n(&dev->up, 1, __ATOMIC_RELEASE);
	/* Threads polling it sleep while it is down: wake them. Inside a
	 * read section, which keeps their groups alive. */
	{
		struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

		if (cpu)
			xdp_rcu_lock(cpu);
		for (q = 0; q < dev->nrxq; q++)
			dev_kick(dev, q);
		if (cpu)
			xdp_rcu_unlock(cpu);
	}
	return 0;
}

UXDP_EXPORT int uxdp_dev_down(struct uxdp_dev *dev)
{
	int err;

	uxdp_clear_err();
	if (xdp_rcu_in_reader())
		return xdp_synchronize("dev down");
	if (!__atomic_exchange_n(&dev->up, 0, __ATOMIC_SEQ_CST))
		return 0;
	/* No poll of it runs past this point (see uxdp_dev_poll), and no
	 * transmit that still saw it up is in progress. */
	err = xdp_synchronize("dev down");
	if (dev->ops->stop)
		dev->ops->stop(dev);
	return err;
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
		struct uxdp_prog *old;
		int err;

		if (q != UXDP_ALL_QUEUES && i != q)
			continue;
		err = xdp_rxq_set_prog(&dev->rxq[i].xdp, prog, &old);
		if (err)
			return err;
		uxdp_prog_put(old);
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
	xdp_target_set_bulk(&dev->target, bulk);
}

UXDP_EXPORT struct uxdp_xdp_target *uxdp_dev_target(struct uxdp_dev *dev)
{
	return &dev->target;
}

/* ---- datapath ------------------------------------------------------------------ */

int dev_poll_locked(struct uxdp_dev *dev, uint32_t q, int budget)
{
	struct uxdp_xdp_rxq *rxq = &dev->rxq[q].xdp;
	struct uxdp_xdp_cpu *cpu;
	int n;

	cpu = xdp_poll_begin(rxq);
	if (unlikely(!cpu))
		return -EMFILE;		/* more than UXDP_MAX_THREADS */
	/*
	 * Checked inside the read section poll_begin opened: uxdp_dev_down()
	 * clears "up" and then waits for a grace period, so either this poll
	 * sees the device down and stops here, or down waits for it to end
	 * before the driver tears the queue down.
	 */
	if (unlikely(!__atomic_load_n(&dev->up, __ATOMIC_ACQUIRE))) {
		xdp_poll_end(cpu, rxq);
		return -ENETDOWN;
	}
	/* The same for a queue being reconfigured (dev_rxq_pause): its
	 * driver is changing what the queue receives into. Acquire pairs
	 * with dev_rxq_resume's release: the new set-up is seen whole. */
	if (unlikely(__atomic_load_n(&dev->rxq[q].paused, __ATOMIC_ACQUIRE))) {
		xdp_poll_end(cpu, rxq);
		return 0;
	}
	/*
	 * The pool a queue receives into belongs to the thread polling the
	 * queue (allocation and local frees take no lock). A queue moved to
	 * another poll group, or polled by another application thread, takes
	 * its pool along: the one-thread-per-queue rule makes this the
	 * handover point.
	 */
	if (dev->ops->rx_pool) {
		struct uxdp_pool *pool = dev->ops->rx_pool(dev, q);

		if (pool && unlikely(!uxdp_pool_is_owner(pool)))
			uxdp_pool_set_owner(pool);
	}
	{
		struct uxdp_pool *xp = __atomic_load_n(&dev->rxq[q].xsk_pool,
						       __ATOMIC_ACQUIRE);

		if (unlikely(xp && !uxdp_pool_is_owner(xp)))
			uxdp_pool_set_owner(xp);
	}
	n = dev->ops->poll(dev, q, cpu, budget);
	if (n > 0)
		stat_inc(&rxq->stats.polls);
	xdp_poll_end(cpu, rxq);
	return n;
}

UXDP_EXPORT int uxdp_dev_poll(struct uxdp_dev *dev, uint32_t q, int budget)
{
	if (unlikely(q >= dev->nrxq || budget < 0))
		return -EINVAL;
	return dev_poll_locked(dev, q, budget);
}

UXDP_EXPORT int uxdp_dev_xmit(struct uxdp_dev *dev, int n,
			      struct uxdp_frame **frames, uint32_t flags)
{
	struct uxdp_xdp_cpu *cpu;
	int ret;

	if (unlikely(n < 0))
		return -EINVAL;
	cpu = xdp_cpu_get();
	if (unlikely(!cpu))
		return -EMFILE;
	/* A read section: the device (and a veth peer it writes into) stay
	 * alive for the call, even if another thread destroys one. */
	xdp_rcu_lock(cpu);
	ret = dev->ops->xdp_xmit(dev, n, frames, flags);
	xdp_rcu_unlock(cpu);
	return ret;
}

int dev_rxq_pause(struct uxdp_dev *dev, uint32_t q)
{
	__atomic_add_fetch(&dev->rxq[q].paused, 1, __ATOMIC_SEQ_CST);
	/* Every poll that did not see the flag has ended after this. */
	return xdp_synchronize("queue pause");
}

void dev_rxq_resume(struct uxdp_dev *dev, uint32_t q)
{
	__atomic_sub_fetch(&dev->rxq[q].paused, 1, __ATOMIC_RELEASE);
	/* A poller that went to sleep meanwhile looks again. */
	uxdp_dev_kick(dev, q);
}

int dev_rxq_bind_xsk_pool(struct uxdp_dev *dev, uint32_t q,
			  struct uxdp_pool *pool)
{
	struct uxdp_pool *expect = NULL;

	if (!pool) {
		__atomic_store_n(&dev->rxq[q].xsk_pool, NULL, __ATOMIC_RELEASE);
		return 0;
	}
	/* Nobody owns it until the queue's poller takes it (dev_poll). */
	uxdp_pool_disown(pool);
	if (!__atomic_compare_exchange_n(&dev->rxq[q].xsk_pool, &expect, pool,
					 false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EBUSY;
	return 0;
}

UXDP_EXPORT struct uxdp_pool *uxdp_dev_pool(struct uxdp_dev *dev, uint32_t q)
{
	if (!dev || q >= dev->nrxq || !dev->ops->rx_pool)
		return NULL;
	return dev->ops->rx_pool(dev, q);
}

UXDP_EXPORT __cold int uxdp_dev_audit(struct uxdp_dev *dev,
				      struct uxdp_dev_audit *out)
{
	struct uxdp_dev_audit a = { 0 };
	uint32_t q, k, i;

	uxdp_clear_err();
	if (!dev)
		return uxdp_fail(EINVAL, "dev: NULL device");
	for (q = 0; q < dev->nrxq; q++) {
		struct uxdp_pool *pool = uxdp_dev_pool(dev, q);
		struct uxdp_umem *umem;
		uint32_t n;
		uint8_t *where;
		int r;

		if (!pool)
			continue;
		/* Queues may share a pool: count each once. */
		for (k = 0; k < q && uxdp_dev_pool(dev, k) != pool; k++)
			;
		if (k == q)
			a.pools++;
		/* And pools a UMEM (shared UMEM, possibly with other
		 * devices): audit each UMEM once, all of its pools
		 * together, or the chunks another pool holds would look
		 * lost. */
		umem = uxdp_pool_umem(pool);
		for (k = 0; k < q; k++) {
			struct uxdp_pool *o = uxdp_dev_pool(dev, k);

			if (o && uxdp_pool_umem(o) == umem)
				break;
		}
		if (k < q)
			continue;
		n = uxdp_umem_nchunks(umem);
		where = calloc(n ? n : 1, 1);
		if (!where)
			return uxdp_fail(ENOMEM, "dev %s: audit: out of memory",
					 dev->name);
		r = uxdp_umem_audit(umem, where);
		if (r < 0) {
			free(where);
			return r;
		}
		for (i = 0; i < n; i++) {
			/* Exactly one bit, and never a chunk seen twice. */
			if (!where[i] || (where[i] & (where[i] - 1)))
				a.misplaced++;
			else if (where[i] & UXDP_LOC_DRIVER)
				a.in_flight++;
		}
		free(where);
		a.chunks += n;
	}
	if (out)
		*out = a;
	return (int)a.misplaced;
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

/* ---- kicks ------------------------------------------------------------------------- */

UXDP_EXPORT void uxdp_dev_kick(struct uxdp_dev *dev, uint32_t q)
{
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

	if (q >= dev->nrxq)
		return;
	if (cpu)
		xdp_rcu_lock(cpu);
	dev_kick(dev, q);
	if (cpu)
		xdp_rcu_unlock(cpu);
}
