/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Redirect maps: arrays of targets a program redirects into by key (the
 * kernel's devmap; sockets will sit in the same kind of map).
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include <uxdp/xdp.h>

#include "xdp_internal.h"

struct uxdp_map {
	struct uxdp_map *next;		/* on maps, under maps_lock */
	uint32_t max_entries;
	struct uxdp_xdp_target *slot[];
};

/*
 * Every map, so a device going away can be taken out of all of them (the
 * kernel's devmap drops an entry on NETDEV_UNREGISTER the same way).
 */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uxdp_map *maps;

UXDP_EXPORT __cold struct uxdp_map *uxdp_map_create(uint32_t max_entries)
{
	struct uxdp_map *m;

	uxdp_clear_err();
	if (!max_entries || max_entries > (1U << 20)) {
		errno = -uxdp_fail(EINVAL, "map: %u entries: need 1..2^20",
				   max_entries);
		return NULL;
	}
	m = calloc(1, sizeof(*m) + max_entries * sizeof(m->slot[0]));
	if (!m) {
		errno = -uxdp_fail(ENOMEM, "map: out of memory");
		return NULL;
	}
	m->max_entries = max_entries;
	pthread_mutex_lock(&maps_lock);
	m->next = maps;
	maps = m;
	pthread_mutex_unlock(&maps_lock);
	return m;
}

UXDP_EXPORT __cold void uxdp_map_destroy(struct uxdp_map *m)
{
	struct uxdp_map **pp;

	if (!m)
		return;
	/* A program still using the map is the caller's bug; a poll that is
	 * running one now is not: wait for it. */
	if (xdp_rcu_in_reader()) {
		uxdp_pr(UXDP_WARN, "uxdp: uxdp_map_destroy() from inside a "
			"poll would wait for itself: the map is leaked\n");
		return;
	}
	pthread_mutex_lock(&maps_lock);
	for (pp = &maps; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&maps_lock);
	xdp_synchronize("map destroy");
	free(m);
}

uint32_t xdp_maps_forget(const struct uxdp_xdp_target *t)
{
	struct uxdp_map *m;
	uint32_t i, n = 0;

	pthread_mutex_lock(&maps_lock);
	for (m = maps; m; m = m->next) {
		for (i = 0; i < m->max_entries; i++) {
			if (__atomic_load_n(&m->slot[i], __ATOMIC_RELAXED) != t)
				continue;
			/* Only this slot's own value is cleared: an update
			 * racing with us wins (compare-exchange). */
			struct uxdp_xdp_target *expect = (void *)t;

			n += __atomic_compare_exchange_n(&m->slot[i], &expect,
							 NULL, false,
							 __ATOMIC_RELEASE,
							 __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&maps_lock);
	return n;
}

UXDP_EXPORT int uxdp_map_update(struct uxdp_map *m, uint32_t key,
				struct uxdp_xdp_target *t)
{
	if (key >= m->max_entries)
		return -E2BIG;
	/* Release: a program that finds @t also sees it initialised. */
	__atomic_store_n(&m->slot[key], t, __ATOMIC_RELEASE);
	return 0;
}

UXDP_EXPORT struct uxdp_xdp_target *uxdp_map_lookup(const struct uxdp_map *m,
						    uint32_t key)
{
	if (unlikely(key >= m->max_entries))
		return NULL;
	return __atomic_load_n(&m->slot[key], __ATOMIC_ACQUIRE); /* pairs above */
}

UXDP_EXPORT uint32_t uxdp_redirect_map(struct uxdp_map *m, uint32_t key,
				       uint64_t flags)
{
	struct uxdp_xdp_target *t = uxdp_map_lookup(m, key);
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	/* Empty slot: the low two bits of flags are the verdict. */
	if (unlikely(!t || !cpu)) {
		if (cpu && cpu->rxq)
			stat_inc(&cpu->rxq->stats.redirect_miss);
		return (uint32_t)(flags & 3);
	}
	cpu->ri_target = t;
	return UXDP_REDIRECT;
}
