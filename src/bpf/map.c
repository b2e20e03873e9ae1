/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Maps: the handle every family embeds, the types (map_types.h) and the
 * control plane's calls (include/uxdp/bpf.h), with the checks the kernel's
 * syscall layer makes before a family sees the call (kernel/bpf/syscall.c:
 * permissions, BPF_F_LOCK), so a family only checks its own rules.
 */
#include "../internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "map_types.h"

static const struct {
	uint32_t type;
	const char *name;
	const struct uxdp_bpf_map_ops *ops;
} map_types[] = {
#define MAP_TYPE_ROW(type_, name_, ops_) { type_, name_, ops_ },
	UXDP_BPF_MAP_TYPES(MAP_TYPE_ROW)
#undef MAP_TYPE_ROW
};

const char *uxdp_bpf_map_type_str(uint32_t type, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map_types); i++)
		if (map_types[i].type == type)
			return map_types[i].name;
	snprintf(buf, len, "type %u", type);
	return buf;
}

const struct uxdp_bpf_map_ops *uxdp_bpf_map_type_ops(uint32_t type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map_types); i++)
		if (map_types[i].type == type)
			return map_types[i].ops;
	return NULL;
}

struct uxdp_bpf_map *uxdp_bpf_map_new(const char *name, uint32_t type,
				      uint32_t key_size, uint32_t value_size,
				      uint32_t max_entries, uint32_t map_flags)
{
	const struct uxdp_bpf_map_ops *ops = uxdp_bpf_map_type_ops(type);
	struct uxdp_bpf_map *map;

	map = calloc(1, ops ? ops->map_size : sizeof(*map));
	if (!map)
		return NULL;
	map->name = strdup(name ? name : "");
	if (!map->name) {
		free(map);
		return NULL;
	}
	map->ops = ops;
	map->refcnt = 1;
	map->type = type;
	map->key_size = key_size;
	map->value_size = value_size;
	map->max_entries = max_entries;
	map->map_flags = map_flags;
	return map;
}

static int id_register(struct uxdp_bpf_map *map);
static void id_unregister(struct uxdp_bpf_map *map);

int uxdp_bpf_map_create(struct uxdp_bpf_map *map)
{
	char tb[16];
	int err;

	if (map->created)
		return 0;
	if (!map->ops)
		return uxdp_fail(EOPNOTSUPP, "map %s: type %s is not supported "
				 "yet (uxdp has array, percpu_array, the "
				 "four hashes, prog_array, lpm_trie, the "
				 "of-maps, devmap, xskmap, perf_event_array, "
				 "ringbuf, queue, stack and global data)", map->name,
				 uxdp_bpf_map_type_str(map->type, tb,
						       sizeof(tb)));
	/* BPF_F_RDONLY_PROG with BPF_F_WRONLY_PROG, or the same for the
	 * control plane: every family refuses it (bpf_map_flags_access_ok). */
	if ((map->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)) ==
	    (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG) ||
	    (map->map_flags & (BPF_F_RDONLY | BPF_F_WRONLY)) ==
	    (BPF_F_RDONLY | BPF_F_WRONLY))
		return uxdp_fail(EINVAL, "map %s: read-only and write-only at "
				 "once (map_flags 0x%x)", map->name,
				 map->map_flags);
	/* A program that may only write a map would need the safety pass
	 * to refuse its reads; nothing uses it for XDP. */
	if (map->map_flags & BPF_F_WRONLY_PROG)
		return uxdp_fail(EOPNOTSUPP, "map %s: BPF_F_WRONLY_PROG is not "
				 "supported", map->name);
	err = map->ops->map_alloc_check(map);
	if (!err)
		err = map->ops->map_alloc(map);
	if (!err) {
		err = id_register(map);
		if (err)
			map->ops->map_free(map);
	}
	if (!err)
		map->created = true;
	return err;
}

void uxdp_bpf_map_unlist(struct uxdp_bpf_map *map)
{
	id_unregister(map);
	map->id = 0;
}

struct uxdp_bpf_map *uxdp_bpf_map_get(struct uxdp_bpf_map *map)
{
	if (map)
		__atomic_fetch_add(&map->refcnt, 1, __ATOMIC_RELAXED);
	return map;
}

void uxdp_bpf_map_free(struct uxdp_bpf_map *map)
{
	/* acq_rel: the last put sees every other user's writes. */
	if (!map || __atomic_sub_fetch(&map->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	id_unregister(map);
	if (map->created)
		map->ops->map_free(map);
	uxdp_bpf_map_free(map->inner);
	free(map->name);
	free(map);
}

/* ---- ids: the kernel's map ids, for of-maps' values ------------------------ */

/* Every created map, by id (never reused), for the control plane only. */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uxdp_bpf_map *ids_head;
static uint32_t ids_next = 1;

static int id_register(struct uxdp_bpf_map *map)
{
	int err = 0;

	pthread_mutex_lock(&ids_lock);
	if (!ids_next) {
		err = uxdp_fail(ENOSPC, "map %s: 2^32 - 1 maps made: no id "
				"left", map->name);
	} else {
		map->id = ids_next++;
		map->id_next = ids_head;
		ids_head = map;
	}
	pthread_mutex_unlock(&ids_lock);
	return err;
}

static void id_unregister(struct uxdp_bpf_map *map)
{
	struct uxdp_bpf_map **pp;

	if (!map->id)
		return;
	pthread_mutex_lock(&ids_lock);
	for (pp = &ids_head; *pp; pp = &(*pp)->id_next)
		if (*pp == map) {
			*pp = map->id_next;
			break;
		}
	pthread_mutex_unlock(&ids_lock);
}

UXDP_EXPORT uint32_t uxdp_bpf_map_id(const struct uxdp_bpf_map *map)
{
	return map ? map->id : 0;
}

UXDP_EXPORT struct uxdp_bpf_map *uxdp_bpf_map_get_by_id(uint32_t id)
{
	struct uxdp_bpf_map *m, *got = NULL;

	pthread_mutex_lock(&ids_lock);
	for (m = ids_head; m && id; m = m->id_next) {
		uint32_t ref;

		if (m->id != id)
			continue;
		/* A reference unless the last one is going (it waits on
		 * the lock to leave the list). */
		ref = __atomic_load_n(&m->refcnt, __ATOMIC_RELAXED);
		while (ref && !__atomic_compare_exchange_n(&m->refcnt, &ref,
				ref + 1, false, __ATOMIC_ACQUIRE,
				__ATOMIC_RELAXED))
			;
		if (ref)
			got = m;
		break;
	}
	pthread_mutex_unlock(&ids_lock);
	if (!got)
		errno = ENOENT;
	return got;
}

UXDP_EXPORT struct uxdp_bpf_map *
uxdp_bpf_map_open(uint32_t type, const char *name, uint32_t key_size,
		  uint32_t value_size, uint32_t max_entries,
		  uint32_t map_flags)
{
	struct uxdp_bpf_map *map;
	int err;

	uxdp_clear_err();
	/* Of-maps need their inner map's definition: from an object only. */
	if (type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	    type == BPF_MAP_TYPE_HASH_OF_MAPS) {
		errno = -uxdp_fail(EINVAL, "map %s: an of-map is made from an "
				   "object (its inner map's definition is "
				   "in the BTF)", name ? name : "");
		return NULL;
	}
	map = uxdp_bpf_map_new(name, type, key_size, value_size, max_entries,
			       map_flags);
	if (!map) {
		errno = -uxdp_fail(ENOMEM, "map %s: out of memory",
				   name ? name : "");
		return NULL;
	}
	err = uxdp_bpf_map_create(map);
	if (err) {
		uxdp_bpf_map_free(map);
		errno = -err;
		return NULL;
	}
	return map;
}

UXDP_EXPORT void uxdp_bpf_map_close(struct uxdp_bpf_map *map)
{
	uxdp_bpf_map_free(map);
}

void uxdp_bpf_map_build(struct uxdp_bpf_map *map,
			struct uxdp_bpf_build_map *out)
{
	memset(out, 0, sizeof(*out));
	out->name = map->name;
	out->type = map->type;
	out->key_size = map->key_size;
	out->value_size = map->value_size;
	out->max_entries = map->max_entries;
	out->map_flags = map->map_flags;
	out->map = map;
	out->lddw = map->created && map->ops->map_lddw ?
		    map->ops->map_lddw(map) : map;
	out->values = map->values;
	out->values_size = map->values_size;
	out->rdonly = !!(map->map_flags & BPF_F_RDONLY_PROG);
	out->gen_lookup = map->created && map->ops->map_gen_lookup;
	out->rcu_reader = map->ops && map->ops->rcu_reader;
}

uint32_t uxdp_bpf_map_gen_lookup(const struct uxdp_bpf_build_map *m,
				 const void *key, struct bpf_insn *insn)
{
	const struct uxdp_bpf_map *map = m->map;

	if (!m->gen_lookup || !map || !map->created ||
	    !map->ops->map_gen_lookup)
		return 0;
	return map->ops->map_gen_lookup(map, key, insn);
}

/* A fork while a family has retired memory waiting: liburcu's call_rcu
 * thread does not survive into the child, whose retired memory would then
 * never be freed (and test_bpf_load's seccomp child once waited for
 * ever). The flavour's fork hooks stop it before and restart it in both
 * processes after; liburcu leaves installing them to the application, so
 * the first family that needs them does it for every later fork. */
static pthread_once_t rcu_atfork_once = PTHREAD_ONCE_INIT;
static int rcu_atfork_err;

static void rcu_atfork(void)
{
	rcu_atfork_err = pthread_atfork(urcu_memb_call_rcu_before_fork,
					urcu_memb_call_rcu_after_fork_parent,
					urcu_memb_call_rcu_after_fork_child);
}

int uxdp_bpf_rcu_prepare(const char *map)
{
	pthread_once(&rcu_atfork_once, rcu_atfork);
	if (rcu_atfork_err)
		return uxdp_fail(rcu_atfork_err, "map %s: pthread_atfork: %s",
				 map, strerror(rcu_atfork_err));
	return 0;
}

/* ---- maps' own locks (bpf_internal.h) ---------------------------------------- */

void uxdp_bpf_spin_lock_slow(struct uxdp_bpf_spinlock *l)
{
	unsigned int spins = 0;

	do {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
			/* ~100 ns a pause: a holder that runs is done
			 * within the first few; one that does not is off
			 * its CPU, and may need this one. */
			if (++spins < 256)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	} while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE));
}

/* ---- the control plane ----------------------------------------------------- */

static int map_usable(const struct uxdp_bpf_map *map, const char *op)
{
	if (!map)
		return uxdp_fail(EINVAL, "bpf map %s: NULL map", op);
	if (!map->created)
		return uxdp_fail(EINVAL, "map %s: %s: not created (before "
				 "uxdp_bpf_object_load, or left out by it: "
				 "no loaded program uses it)", map->name, op);
	return 0;
}

/* As map_get_sys_perms(): a frozen map, or one created BPF_F_RDONLY, is
 * not the control plane's to write; BPF_F_WRONLY not to read. */
static int map_writable(const struct uxdp_bpf_map *map, const char *op)
{
	if (map->frozen || (map->map_flags & BPF_F_RDONLY))
		return uxdp_fail(EPERM, "map %s: %s: read-only%s", map->name,
				 op, map->frozen ? " (frozen)" : "");
	return 0;
}

static int map_readable(const struct uxdp_bpf_map *map, const char *op)
{
	if (map->map_flags & BPF_F_WRONLY)
		return uxdp_fail(EPERM, "map %s: %s: write-only", map->name,
				 op);
	return 0;
}

/* A map with keys takes one; a queue or a stack (key_size 0) takes none
 * (the kernel's __bpf_copy_key: a key for a keyless map is -EINVAL). */
static int map_key_arg(const struct uxdp_bpf_map *map, const void *key,
		       const void *value, const char *op)
{
	if (!value)
		return uxdp_fail(EINVAL, "map %s: %s: NULL value", map->name,
				 op);
	if (map->key_size && !key)
		return uxdp_fail(EINVAL, "map %s: %s: NULL key", map->name, op);
	if (!map->key_size && key)
		return uxdp_fail(EINVAL, "map %s: %s: a key for a map without "
				 "keys (a queue or a stack: pass NULL)",
				 map->name, op);
	return 0;
}

/* No family of part 1 has values with a bpf_spin_lock. */
static int map_lock_flag(const struct uxdp_bpf_map *map, uint64_t flags,
			 const char *op)
{
	if (flags & BPF_F_LOCK)
		return uxdp_fail(EINVAL, "map %s: %s: BPF_F_LOCK without a "
				 "bpf_spin_lock in the value", map->name, op);
	return 0;
}

UXDP_EXPORT int uxdp_bpf_map_lookup(const struct uxdp_bpf_map *map,
				    const void *key, void *value,
				    uint64_t flags)
{
	int err;

	uxdp_clear_err();
	err = map_usable(map, "lookup");
	if (!err)
		err = map_readable(map, "lookup");
	if (err)
		return err;
	if (flags & ~(uint64_t)BPF_F_LOCK)
		return uxdp_fail(EINVAL, "map %s: lookup: unknown flags 0x%llx",
				 map->name, (unsigned long long)flags);
	err = map_lock_flag(map, flags, "lookup");
	if (err)
		return err;
	err = map_key_arg(map, key, value, "lookup");
	if (err)
		return err;
	return map->ops->map_lookup(map, key, value, flags);
}

UXDP_EXPORT int uxdp_bpf_map_update(struct uxdp_bpf_map *map,
				    const void *key, const void *value,
				    uint64_t flags)
{
	int err;

	uxdp_clear_err();
	err = map_usable(map, "update");
	if (!err)
		err = map_writable(map, "update");
	if (!err)
		err = map_lock_flag(map, flags, "update");
	if (err)
		return err;
	err = map_key_arg(map, key, value, "update");
	if (err)
		return err;
	return map->ops->map_update(map, key, value, flags);
}

UXDP_EXPORT int uxdp_bpf_map_lookup_and_delete(struct uxdp_bpf_map *map,
					       const void *key, void *value,
					       uint64_t flags)
{
	char tb[16];
	int err;

	uxdp_clear_err();
	err = map_usable(map, "lookup_and_delete");
	if (!err)
		err = map_readable(map, "lookup_and_delete");
	if (!err)
		err = map_writable(map, "lookup_and_delete");
	if (!err)
		err = map_key_arg(map, key, value, "lookup_and_delete");
	if (err)
		return err;
	if (!map->ops->map_lookup_and_delete)
		return uxdp_fail(EOPNOTSUPP, "map %s: lookup_and_delete of a "
				 "%s is not supported (uxdp has it for queues "
				 "and stacks)", map->name,
				 uxdp_bpf_map_type_str(map->type, tb,
						       sizeof(tb)));
	return map->ops->map_lookup_and_delete(map, key, value, flags);
}

UXDP_EXPORT int uxdp_bpf_map_delete(struct uxdp_bpf_map *map,
				    const void *key)
{
	int err;

	uxdp_clear_err();
	err = map_usable(map, "delete");
	if (!err)
		err = map_writable(map, "delete");
	if (err)
		return err;
	if (!key)
		return uxdp_fail(EINVAL, "map %s: delete: NULL key", map->name);
	return map->ops->map_delete(map, key);
}

UXDP_EXPORT int uxdp_bpf_map_get_next_key(const struct uxdp_bpf_map *map,
					  const void *key, void *next_key)
{
	int err;

	uxdp_clear_err();
	err = map_usable(map, "get_next_key");
	if (!err)
		err = map_readable(map, "get_next_key");
	if (err)
		return err;
	if (!next_key)
		return uxdp_fail(EINVAL, "map %s: get_next_key: NULL next_key",
				 map->name);
	return map->ops->map_get_next_key(map, key, next_key);
}

UXDP_EXPORT int uxdp_bpf_num_possible_cpus(void)
{
	return UXDP_BPF_NR_CPUS;
}

UXDP_EXPORT const char *uxdp_bpf_map_name(const struct uxdp_bpf_map *map)
{
	return map->name;
}

UXDP_EXPORT uint32_t uxdp_bpf_map_type(const struct uxdp_bpf_map *map)
{
	return map->type;
}

UXDP_EXPORT uint32_t uxdp_bpf_map_key_size(const struct uxdp_bpf_map *map)
{
	return map->key_size;
}

UXDP_EXPORT uint32_t uxdp_bpf_map_value_size(const struct uxdp_bpf_map *map)
{
	return map->value_size;
}

UXDP_EXPORT uint32_t uxdp_bpf_map_max_entries(const struct uxdp_bpf_map *map)
{
	return map->max_entries;
}

UXDP_EXPORT uint32_t uxdp_bpf_map_flags(const struct uxdp_bpf_map *map)
{
	return map->map_flags;
}
