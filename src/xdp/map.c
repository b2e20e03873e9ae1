/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Redirect maps: arrays of targets a program redirects into by key (the
 * kernel's devmap; sockets will sit in the same kind of map).
 */
#include "../internal.h"

#include <stdlib.h>

#include <uxdp/xdp.h>

#include "xdp_internal.h"

struct uxdp_map {
	uint32_t max_entries;
	struct uxdp_xdp_target *slot[];
};

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
	return m;
}

UXDP_EXPORT __cold void uxdp_map_destroy(struct uxdp_map *m)
{
	free(m);
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
	if (unlikely(!t || !cpu))
		return (uint32_t)(flags & 3);
	cpu->ri_target = t;
	return UXDP_REDIRECT;
}
