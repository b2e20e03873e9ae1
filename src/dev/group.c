/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Poll groups: one thread polling a set of (device, queue) pairs run to
 * completion, sleeping when a whole round finds nothing (include/uxdp/dev.h).
 *
 * The set is an immutable array the thread reads once per round inside a
 * read-side section; add and remove publish a new array and free the old
 * one after a grace period, so queues join and leave while the thread runs
 * and a removed queue is never touched again once remove returns.
 *
 * Sleeping is the need_wakeup handshake of AF_XDP rings, between the
 * thread and whoever kicks it (group_kick):
 *
 *	thread                                kicker
 *	xchg(need_wakeup, 1)         (E)      submit entries to a queue
 *	look at every queue's ring            xchg(need_wakeup, 0)     (F)
 *	sleep unless something is queued      if it was 1: write eventfd
 *
 *	E and F are read-modify-writes of one word, so they are ordered one
 *	way or the other. F first: E reads 0 after F's store, synchronises
 *	with the kicker, and the look at the rings that follows sees what it
 *	submitted. E first: F reads the 1 and writes the eventfd, which ends
 *	(or prevents) the sleep. Either way a submitted entry is not slept on.
 */
#define _GNU_SOURCE
#include "../internal.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/dev.h>
#include <uxdp/pool.h>

#include "../xdp/xdp_internal.h"
#include "dev_internal.h"

/* File descriptors a sleeping group waits on beside its eventfd. */
#define PG_MAX_FDS	63

struct pg_member {
	struct uxdp_dev *dev;
	uint32_t q;
	int fd;				/* uxdp_dev_ops.rx_fd, or -1 */
};

struct pg_set {
	uint32_t n;
	struct pg_member m[];
};

struct uxdp_poll_group {
	struct pg_set *set;		/* published with release, see above */
	int budget;
	int cpu;
	uint32_t flags;
	uint32_t idle_us;
	int efd;
	pthread_t thread;
	bool running;			/* control path, under groups_lock */
	uint32_t stop;
	uint32_t started;		/* 1: thread running, 2: it failed */
	struct uxdp_poll_group_stats stats;	/* the thread writes */
	/* Written by kickers on other threads: a line of its own. */
	uint32_t need_wakeup __attribute__((aligned(UXDP_CACHE_LINE)));
};

/*
 * Guards every group's set and every queue's group pointer on the control
 * path: adding a queue checks no other group has it.
 */
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pg_set empty_set;

static inline void stat_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

/* ---- the thread ---------------------------------------------------------- */

void group_kick(struct uxdp_poll_group *g)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&g->need_wakeup, 0, __ATOMIC_SEQ_CST)) /* F */
		if (write(g->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			uxdp_pr(UXDP_WARN, "uxdp: poll group kick: %s\n",
				strerror(errno));
}

/* One pass over the queues. Returns the packets processed. */
static uint64_t pg_round(struct uxdp_poll_group *g, struct uxdp_xdp_cpu *cpu)
{
	const struct pg_set *set;
	uint64_t work = 0;
	uint32_t i;

	xdp_rcu_lock(cpu);
	set = __atomic_load_n(&g->set, __ATOMIC_ACQUIRE);
	for (i = 0; i < set->n; i++) {
		int n = dev_poll_locked(set->m[i].dev, set->m[i].q, g->budget);

		if (n > 0)
			work += (uint64_t)n;
	}
	xdp_rcu_unlock(cpu);
	return work;
}

/*
 * Whether a member queue has work queued (and, with @pfd, the driver file
 * descriptors to sleep on, after pfd[0]; *@nfd counts them).
 */
static bool pg_pending(struct uxdp_poll_group *g, struct uxdp_xdp_cpu *cpu,
		       struct pollfd *pfd, uint32_t *nfd)
{
	const struct pg_set *set;
	bool pending = false;
	uint32_t i;

	xdp_rcu_lock(cpu);
	set = __atomic_load_n(&g->set, __ATOMIC_ACQUIRE);
	for (i = 0; i < set->n && !pending; i++) {
		const struct pg_member *m = &set->m[i];

		/* A device that is down has nothing to poll, whatever its
		 * rings say: sleep until uxdp_dev_up() kicks. */
		if (!dev_is_up(m->dev))
			continue;
		pending = m->dev->ops->rx_pending &&
			  m->dev->ops->rx_pending(m->dev, m->q);
		if (pfd && m->fd >= 0 && *nfd <= PG_MAX_FDS)
			pfd[(*nfd)++] = (struct pollfd){ .fd = m->fd,
							 .events = POLLIN };
	}
	xdp_rcu_unlock(cpu);
	return pending;
}

/* Sleep until a kick, a driver fd or the timeout, unless work is queued. */
static void pg_idle(struct uxdp_poll_group *g, struct uxdp_xdp_cpu *cpu)
{
	struct pollfd pfd[PG_MAX_FDS + 1];
	struct timespec ts = {
		.tv_sec = g->idle_us / 1000000,
		.tv_nsec = (long)(g->idle_us % 1000000) * 1000,
	};
	uint32_t nfd = 1;
	uint64_t v;
	int r;

	/*
	 * Work queued already (a round that found nothing while a queue
	 * fills is common under load): back to polling without raising the
	 * flag, so kickers need not answer it with a write(), and without a
	 * system call here.
	 */
	if (pg_pending(g, cpu, NULL, NULL))
		return;
	pfd[0] = (struct pollfd){ .fd = g->efd, .events = POLLIN };
	__atomic_exchange_n(&g->need_wakeup, 1, __ATOMIC_SEQ_CST);	/* E */
	if (!pg_pending(g, cpu, pfd, &nfd) &&
	    !__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		stat_set(&g->stats.sleeps, g->stats.sleeps + 1);
		r = ppoll(pfd, nfd, &ts, NULL);
		if (r > 0)
			stat_set(&g->stats.wakeups, g->stats.wakeups + 1);
	}
	/*
	 * Take the flag back. Still 1: nobody kicked, nothing was written.
	 * 0: a kicker took it (F) and writes the eventfd: drain it, or it
	 * would end the next sleep at once. (If its write comes after this
	 * read, that next sleep ends early once: harmless.)
	 */
	if (!__atomic_exchange_n(&g->need_wakeup, 0, __ATOMIC_SEQ_CST))
		if (read(g->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: the write is yet to come. */
		}
}

static void *pg_thread(void *arg)
{
	struct uxdp_poll_group *g = arg;
	struct uxdp_xdp_cpu *cpu;

	if (g->flags & UXDP_THREAD_F_PIN) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	cpu = xdp_cpu_get();
	__atomic_store_n(&g->started, cpu ? 1 : 2, __ATOMIC_RELEASE);
	if (!cpu)
		return NULL;
	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		uint64_t work = pg_round(g, cpu);

		stat_set(&g->stats.rounds, g->stats.rounds + 1);
		if (work) {
			stat_set(&g->stats.busy_rounds,
				 g->stats.busy_rounds + 1);
			stat_set(&g->stats.packets, g->stats.packets + work);
			continue;
		}
		pg_idle(g, cpu);
	}
	return NULL;
}

/* ---- control path ------------------------------------------------------------ */

UXDP_EXPORT __cold struct uxdp_poll_group *
uxdp_poll_group_create(const struct uxdp_poll_group_opts *opts)
{
	struct uxdp_poll_group *g;
	uint32_t flags;
	int budget, err;

	uxdp_clear_err();
	if (!UXDP_OPTS_VALID(opts, uxdp_poll_group_opts)) {
		errno = EINVAL;
		return NULL;
	}
	flags = UXDP_OPTS_GET(opts, flags, 0);
	budget = UXDP_OPTS_GET(opts, budget, UXDP_NAPI_BUDGET);
	if (flags & ~UXDP_THREAD_F_PIN) {
		errno = -uxdp_fail(EINVAL, "poll group: unknown flags 0x%x",
				   flags);
		return NULL;
	}
	if (budget < 1) {
		errno = -uxdp_fail(EINVAL, "poll group: budget %d < 1", budget);
		return NULL;
	}
	if ((flags & UXDP_THREAD_F_PIN) &&
	    (UXDP_OPTS_GET(opts, cpu, 0) < 0 ||
	     UXDP_OPTS_GET(opts, cpu, 0) >= CPU_SETSIZE)) {
		errno = -uxdp_fail(EINVAL, "poll group: cpu %d out of range",
				   opts->cpu);
		return NULL;
	}
	if (posix_memalign((void **)&g, UXDP_CACHE_LINE, sizeof(*g))) {
		errno = -uxdp_fail(ENOMEM, "poll group: out of memory");
		return NULL;
	}
	memset(g, 0, sizeof(*g));
	g->budget = budget;
	g->flags = flags;
	g->cpu = UXDP_OPTS_GET(opts, cpu, 0);
	g->idle_us = UXDP_OPTS_GET(opts, idle_us, 10000);
	g->set = &empty_set;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0) {
		err = errno;
		free(g);
		errno = -uxdp_fail(err, "poll group: eventfd: %s",
				   strerror(err));
		return NULL;
	}
	return g;
}

static bool member_match(const struct pg_member *m, const struct uxdp_dev *dev,
			 uint32_t q)
{
	return m->dev == dev && (q == UXDP_ALL_QUEUES || m->q == q);
}

/*
 * The queue's pool (if its driver has one) loses its owner: the group's
 * thread may go on returning the pool's buffers while it polls the other
 * queues, and must take the locked path from now on (the handover rule in
 * uxdp_pool_disown). Its returns happen inside polls, so the grace period
 * that follows covers any lock-free return already under way.
 */
static void pg_disown(struct uxdp_dev *dev, uint32_t q)
{
	struct uxdp_pool *pool = dev->ops->rx_pool ?
				 dev->ops->rx_pool(dev, q) : NULL;
	struct uxdp_pool *xp = __atomic_load_n(&dev->rxq[q].xsk_pool,
					       __ATOMIC_ACQUIRE);

	if (pool)
		uxdp_pool_disown(pool);
	if (xp)
		uxdp_pool_disown(xp);
}

/*
 * After a queue left a group (its set published, a grace period passed:
 * the thread no longer polls it, so it cannot take the pool again), disown
 * the pools of @dev's queue @q (UXDP_ALL_QUEUES: all), and wait once more:
 * a lock-free return the thread began before the disown has ended. Then
 * the queue's next poller can take the pool.
 */
static void pg_disown_sync(struct uxdp_dev *dev, uint32_t q)
{
	uint32_t i;

	for (i = 0; i < dev->nrxq; i++)
		if (q == UXDP_ALL_QUEUES || i == q)
			pg_disown(dev, i);
	xdp_synchronize("poll group");
}

/*
 * Publish @set as the group's, then free the old one after a grace period:
 * the thread may be walking it. Under groups_lock.
 */
static void pg_publish(struct uxdp_poll_group *g, struct pg_set *set)
{
	struct pg_set *old = g->set;

	__atomic_store_n(&g->set, set, __ATOMIC_RELEASE);
	xdp_synchronize("poll group");
	if (old != &empty_set)
		free(old);
}

UXDP_EXPORT __cold int uxdp_poll_group_add(struct uxdp_poll_group *g,
					   struct uxdp_dev *dev, uint32_t q)
{
	uint32_t first = q, last = q, i, k;
	struct pg_set *set;

	uxdp_clear_err();
	if (!g || !dev)
		return uxdp_fail(EINVAL, "poll group: NULL group or device");
	if (q == UXDP_ALL_QUEUES) {
		first = 0;
		last = uxdp_dev_num_rxq(dev) - 1;
	} else if (q >= uxdp_dev_num_rxq(dev)) {
		return uxdp_fail(EINVAL, "poll group: %s has no rx queue %u",
				 uxdp_dev_name(dev), q);
	}
	if (xdp_rcu_in_reader())
		return xdp_synchronize("poll group add");
	pthread_mutex_lock(&groups_lock);
	for (i = first; i <= last; i++) {
		if (dev->rxq[i].group) {
			pthread_mutex_unlock(&groups_lock);
			return uxdp_fail(EBUSY, "poll group: %s rx queue %u is "
					 "already polled by %s",
					 uxdp_dev_name(dev), i,
					 dev->rxq[i].own_group ?
					 "a polling thread (uxdp_dev_start)" :
					 "a poll group");
		}
	}
	set = malloc(sizeof(*set) +
		     (g->set->n + last - first + 1) * sizeof(set->m[0]));
	if (!set) {
		pthread_mutex_unlock(&groups_lock);
		return uxdp_fail(ENOMEM, "poll group: out of memory");
	}
	set->n = g->set->n;
	memcpy(set->m, g->set->m, set->n * sizeof(set->m[0]));
	for (i = first; i <= last; i++) {
		k = set->n++;
		set->m[k].dev = dev;
		set->m[k].q = i;
		set->m[k].fd = dev->ops->rx_fd ? dev->ops->rx_fd(dev, i) : -1;
		/* Release: a kicker that finds the group finds it whole. */
		__atomic_store_n(&dev->rxq[i].group, g, __ATOMIC_RELEASE);
	}
	pg_publish(g, set);
	pthread_mutex_unlock(&groups_lock);
	group_kick(g);
	return 0;
}

/* Remove @dev's queue @q (or all) from @g. Under groups_lock. */
static int pg_remove_locked(struct uxdp_poll_group *g, struct uxdp_dev *dev,
			    uint32_t q)
{
	const struct pg_set *cur = g->set;
	struct pg_set *set;
	uint32_t i, n = 0;

	for (i = 0; i < cur->n; i++)
		n += member_match(&cur->m[i], dev, q);
	if (!n)
		return -ENOENT;
	set = n == cur->n ? &empty_set :
	      malloc(sizeof(*set) + (cur->n - n) * sizeof(set->m[0]));
	if (!set)
		return -ENOMEM;
	if (set != &empty_set) {
		set->n = 0;
		for (i = 0; i < cur->n; i++)
			if (!member_match(&cur->m[i], dev, q))
				set->m[set->n++] = cur->m[i];
	}
	for (i = 0; i < cur->n; i++)
		if (member_match(&cur->m[i], dev, q))
			__atomic_store_n(&dev->rxq[cur->m[i].q].group, NULL,
					 __ATOMIC_RELEASE);
	/* After the grace period the thread walks only the new set. */
	pg_publish(g, set);
	pg_disown_sync(dev, q);
	return 0;
}

UXDP_EXPORT __cold int uxdp_poll_group_remove(struct uxdp_poll_group *g,
					      struct uxdp_dev *dev, uint32_t q)
{
	int err;

	uxdp_clear_err();
	if (!g || !dev)
		return uxdp_fail(EINVAL, "poll group: NULL group or device");
	if (xdp_rcu_in_reader())
		return xdp_synchronize("poll group remove");
	pthread_mutex_lock(&groups_lock);
	err = pg_remove_locked(g, dev, q);
	pthread_mutex_unlock(&groups_lock);
	if (err == -ENOENT)
		return uxdp_fail(ENOENT, "poll group: %s rx queue %s is not in "
				 "this group", uxdp_dev_name(dev),
				 q == UXDP_ALL_QUEUES ? "(any)" : "given");
	if (err)
		return uxdp_fail(-err, "poll group: out of memory");
	return 0;
}

void group_forget_dev(struct uxdp_dev *dev)
{
	uint32_t i;

	pthread_mutex_lock(&groups_lock);
	for (i = 0; i < dev->nrxq; i++) {
		struct uxdp_poll_group *g = dev->rxq[i].group;

		if (g)
			pg_remove_locked(g, dev, i);
	}
	pthread_mutex_unlock(&groups_lock);
}

UXDP_EXPORT __cold int uxdp_poll_group_start(struct uxdp_poll_group *g)
{
	int err, state;

	uxdp_clear_err();
	if (!g)
		return uxdp_fail(EINVAL, "poll group: NULL group");
	pthread_mutex_lock(&groups_lock);
	if (g->running) {
		pthread_mutex_unlock(&groups_lock);
		return uxdp_fail(EALREADY, "poll group: already running");
	}
	__atomic_store_n(&g->stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g->started, 0, __ATOMIC_RELAXED);
	err = pthread_create(&g->thread, NULL, pg_thread, g);
	if (err) {
		pthread_mutex_unlock(&groups_lock);
		return uxdp_fail(err, "poll group: pthread_create: %s",
				 strerror(err));
	}
	/* Wait for the thread to have its per-thread state, so that running
	 * out of it is this call's error, not a silent exit. */
	while (!(state = __atomic_load_n(&g->started, __ATOMIC_ACQUIRE)))
		sched_yield();
	if (state != 1) {
		pthread_join(g->thread, NULL);
		pthread_mutex_unlock(&groups_lock);
		return uxdp_fail(EMFILE, "poll group: more than %d threads "
				 "poll or transmit", UXDP_MAX_THREADS);
	}
	g->running = true;
	pthread_mutex_unlock(&groups_lock);
	return 0;
}

UXDP_EXPORT __cold void uxdp_poll_group_stop(struct uxdp_poll_group *g)
{
	uint64_t one = 1;

	if (!g)
		return;
	pthread_mutex_lock(&groups_lock);
	if (!g->running) {
		pthread_mutex_unlock(&groups_lock);
		return;
	}
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	if (write(g->efd, &one, sizeof(one)) < 0) {
		/* Counter full: the thread is awake anyway. */
	}
	pthread_join(g->thread, NULL);
	g->running = false;
	pthread_mutex_unlock(&groups_lock);
}

UXDP_EXPORT __cold void uxdp_poll_group_destroy(struct uxdp_poll_group *g)
{
	uint32_t i;

	if (!g)
		return;
	uxdp_poll_group_stop(g);
	pthread_mutex_lock(&groups_lock);
	for (i = 0; i < g->set->n; i++)
		__atomic_store_n(&g->set->m[i].dev->rxq[g->set->m[i].q].group,
				 NULL, __ATOMIC_RELEASE);
	/* The thread is stopped: no lock-free return of it is under way,
	 * and the pools can go to their next pollers at once. */
	for (i = 0; i < g->set->n; i++)
		pg_disown(g->set->m[i].dev, g->set->m[i].q);
	/* Kickers may still hold the group: free it after a grace period. */
	pg_publish(g, &empty_set);
	pthread_mutex_unlock(&groups_lock);
	close(g->efd);
	free(g);
}

UXDP_EXPORT int uxdp_poll_group_stats(const struct uxdp_poll_group *g,
				      struct uxdp_poll_group_stats *st)
{
	if (!g || !st)
		return -EINVAL;
	st->rounds = __atomic_load_n(&g->stats.rounds, __ATOMIC_RELAXED);
	st->busy_rounds = __atomic_load_n(&g->stats.busy_rounds,
					  __ATOMIC_RELAXED);
	st->packets = __atomic_load_n(&g->stats.packets, __ATOMIC_RELAXED);
	st->sleeps = __atomic_load_n(&g->stats.sleeps, __ATOMIC_RELAXED);
	st->wakeups = __atomic_load_n(&g->stats.wakeups, __ATOMIC_RELAXED);
	return 0;
}

/* ---- a polling thread per queue: uxdp_dev_start --------------------------------- */

UXDP_EXPORT __cold void uxdp_dev_stop(struct uxdp_dev *dev)
{
	uint32_t i;

	for (i = 0; i < dev->nrxq; i++) {
		struct uxdp_poll_group *g = dev->rxq[i].own_group;

		if (!g)
			continue;
		uxdp_poll_group_destroy(g);
		dev->rxq[i].own_group = NULL;
	}
}

UXDP_EXPORT __cold int uxdp_dev_start(struct uxdp_dev *dev,
				      const struct uxdp_poll_group_opts *opts)
{
	struct uxdp_poll_group *g;
	uint32_t i;
	int err;

	uxdp_clear_err();
	if (!dev)
		return uxdp_fail(EINVAL, "dev: NULL device");
	if (!uxdp_dev_is_up(dev))
		return uxdp_fail(ENETDOWN, "dev %s: down: bring it up "
				 "(uxdp_dev_up) before starting its threads",
				 uxdp_dev_name(dev));
	for (i = 0; i < dev->nrxq; i++) {
		if (dev->rxq[i].own_group)
			return uxdp_fail(EALREADY, "dev %s: threads already "
					 "running", uxdp_dev_name(dev));
		if (__atomic_load_n(&dev->rxq[i].group, __ATOMIC_ACQUIRE))
			return uxdp_fail(EBUSY, "dev %s: rx queue %u is in a "
					 "poll group", uxdp_dev_name(dev), i);
	}
	for (i = 0; i < dev->nrxq; i++) {
		g = uxdp_poll_group_create(opts);
		if (!g) {
			err = -errno;
			goto err;
		}
		dev->rxq[i].own_group = g;
		err = uxdp_poll_group_add(g, dev, i);
		if (!err)
			err = uxdp_poll_group_start(g);
		if (err)
			goto err;
	}
	return 0;
err:
	{
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_stop(dev);
		return uxdp_fail(-err, "%s", msg);
	}
}
