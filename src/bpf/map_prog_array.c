/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_PROG_ARRAY (the kernel's prog_array in kernel/bpf/arraymap.c):
 * the programs bpf_tail_call() jumps to, by index.
 *
 * Two arrays side by side: the programs' code, which a tail call reads
 * (struct uxdp_bpf_prog_array, what lddw of the map gives the engines),
 * and the struct uxdp_prog each slot holds a reference on, which only
 * writers touch. A writer publishes the new code with a release store
 * and gives up the old program's reference after waiting for a grace
 * period: a run is a read-side section (the family is rcu_reader), so a
 * run that read the old code finishes with it before its program can be
 * freed. (Waiting, not call_rcu: the put may free a whole object.)
 *
 * The control plane's values are program ids (uxdp_bpf_prog_id()), as a
 * kernel prog array's lookups from user space return ids; an update names
 * the program by id where the kernel's takes a file descriptor.
 *
 * Which programs may share an array is the kernel's rule (its
 * bpf_map_owner): the first program that goes in, or the first loaded
 * program that tail-calls through the map, sets the engine and whether
 * it takes multi-buffer frames (xdp.frags); any other program is refused
 * with -EINVAL. Here it also keeps the JIT's tail calls to JIT code: a
 * JIT's tail call jumps into its target's image.
 *
 * A program held in an array of its own object would keep the object
 * alive for ever (object -> map -> program -> object): as the kernel
 * empties a prog array when the last user reference to it goes, closing
 * the object (uxdp_bpf_object_close) empties its arrays; programs still
 * attached keep running, and their tail calls fall through.
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

/* The most slots one array may have: a userspace limit of uxdp's, as the
 * arrays' 1 GiB of values (16 bytes a slot here). */
#define PROG_ARRAY_MAX_ENTRIES	(1U << 26)

struct prog_array {
	struct uxdp_bpf_map map;
	struct uxdp_bpf_prog_array view;	/* the engines' */
	struct uxdp_prog **progs;		/* the references, by slot */
	pthread_mutex_t lock;			/* writers */
	/* The owner's kind: set once (under lock), read under lock. */
	bool owned;
	bool owner_jit;
	bool owner_frags;
};

static inline struct prog_array *to_pa(const struct uxdp_bpf_map *m)
{
	return (struct prog_array *)m;
}

/* The kernel's fd_array_map_alloc_check on top of array_map_alloc_check. */
#define PROG_ARRAY_CREATE_FLAGS	(BPF_F_NUMA_NODE | BPF_F_RDONLY |	\
				 BPF_F_WRONLY)

static int pa_alloc_check(const struct uxdp_bpf_map *m)
{
	if (!m->max_entries || m->key_size != 4 || m->value_size != 4 ||
	    (m->map_flags & ~PROG_ARRAY_CREATE_FLAGS))
		return uxdp_fail(EINVAL, "map %s: a prog_array needs key_size "
				 "4, value_size 4, max_entries above 0 and "
				 "known flags (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 m->key_size, m->value_size, m->max_entries,
				 m->map_flags);
	if (m->max_entries > PROG_ARRAY_MAX_ENTRIES)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: uxdp allows a "
				 "prog_array at most %u", m->name,
				 m->max_entries, PROG_ARRAY_MAX_ENTRIES);
	return 0;
}

static int pa_alloc(struct uxdp_bpf_map *m)
{
	struct prog_array *pa = to_pa(m);

	pa->view.max_entries = m->max_entries;
	pa->view.slots = calloc(m->max_entries, sizeof(*pa->view.slots));
	pa->progs = calloc(m->max_entries, sizeof(*pa->progs));
	if (!pa->view.slots || !pa->progs) {
		free(pa->view.slots);
		free(pa->progs);
		pa->view.slots = NULL;
		pa->progs = NULL;
		return uxdp_fail(ENOMEM, "map %s: out of memory for %u slots",
				 m->name, m->max_entries);
	}
	pthread_mutex_init(&pa->lock, NULL);
	return 0;
}

/* Nothing runs the map any more (its object's last program is gone, after
 * its grace period): the references go now. */
static void pa_free(struct uxdp_bpf_map *m)
{
	struct prog_array *pa = to_pa(m);
	uint32_t i;

	if (!pa->progs)
		return;
	for (i = 0; i < m->max_entries; i++)
		uxdp_prog_put(pa->progs[i]);
	free(pa->progs);
	free(pa->view.slots);
	pthread_mutex_destroy(&pa->lock);
}

/* Whether a program of this kind may go in (or tail-call through) @pa,
 * the first one setting the kind. Under pa->lock. */
static int pa_compatible(struct prog_array *pa, const char *prog, bool jit,
			 bool frags)
{
	if (!pa->owned) {
		pa->owned = true;
		pa->owner_jit = jit;
		pa->owner_frags = frags;
		return 0;
	}
	if (pa->owner_jit != jit || pa->owner_frags != frags)
		return uxdp_fail(EINVAL, "map %s: prog %s (%s%s) does not go "
				 "with the programs of this prog_array (%s%s)",
				 pa->map.name, prog, jit ? "JIT" : "interpreted",
				 frags ? ", xdp.frags" : "",
				 pa->owner_jit ? "JIT" : "interpreted",
				 pa->owner_frags ? ", xdp.frags" : "");
	return 0;
}

int uxdp_bpf_prog_array_claim(struct uxdp_bpf_map *m, const char *prog,
			      bool jit, bool frags)
{
	struct prog_array *pa = to_pa(m);
	int err;

	if (m->type != BPF_MAP_TYPE_PROG_ARRAY || !m->created)
		return 0;
	pthread_mutex_lock(&pa->lock);
	err = pa_compatible(pa, prog, jit, frags);
	pthread_mutex_unlock(&pa->lock);
	return err;
}

/*
 * Slot @idx holds @prog (a reference taken over; NULL: empty). 0, or
 * -EINVAL (incompatible: the reference given back), -EDEADLK (from inside
 * a read-side section, which the grace period would wait for), -ENOENT
 * (@prog NULL for an empty slot and @must_exist).
 *
 * The old program is put here, after the grace period, not from liburcu's
 * call_rcu thread: its last reference can free an object, and with it
 * maps whose own teardown registers the thread and retires memory, which
 * is the caller's to do, not that thread's.
 */
static int pa_set(struct prog_array *pa, uint32_t idx, struct uxdp_prog *prog,
		  bool must_exist)
{
	const struct uxdp_bpf_code *code = NULL;
	struct uxdp_prog *old;
	bool jit = false, frags = false;
	int err = 0;

	if (prog) {
		code = uxdp_bpf_prog_kind(prog, &jit, &frags);
		if (!code) {
			err = uxdp_fail(EINVAL, "map %s: prog %s is not an "
					"eBPF program", pa->map.name,
					prog->name);
			uxdp_prog_put(prog);
			return err;
		}
	}
	if (xdp_rcu_in_reader()) {
		uxdp_prog_put(prog);
		return uxdp_fail(EDEADLK, "map %s: a prog_array changed from "
				 "inside a poll or a run would wait for itself",
				 pa->map.name);
	}
	pthread_mutex_lock(&pa->lock);
	if (prog)
		err = pa_compatible(pa, prog->name, jit, frags);
	old = pa->progs[idx];
	if (!err && !prog && !old && must_exist)
		err = -ENOENT;
	if (!err) {
		pa->progs[idx] = prog;
		/* Release: a tail call that reads the new code (acquire)
		 * sees it whole; the old code stays valid for a run that
		 * read it until the grace period below. */
		__atomic_store_n(&pa->view.slots[idx], code, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pa->lock);
	if (err) {
		uxdp_prog_put(prog);
		return err;
	}
	/* Not in a reader (checked above): this cannot fail. */
	if (old && !xdp_synchronize("prog_array"))
		uxdp_prog_put(old);
	return 0;
}

int uxdp_bpf_prog_array_set(struct uxdp_bpf_map *m, uint32_t idx,
			    struct uxdp_prog *prog)
{
	if (idx >= m->max_entries) {
		uxdp_prog_put(prog);
		return uxdp_fail(E2BIG, "map %s: slot %u of %u", m->name, idx,
				 m->max_entries);
	}
	return pa_set(to_pa(m), idx, prog, false);
}

void uxdp_bpf_prog_array_clear(struct uxdp_bpf_map *m)
{
	uint32_t i;

	if (m->type != BPF_MAP_TYPE_PROG_ARRAY || !m->created)
		return;
	for (i = 0; i < m->max_entries; i++)
		pa_set(to_pa(m), i, NULL, false);
}

/* ---- the control plane: values are program ids ------------------------- */

static int pa_lookup(const struct uxdp_bpf_map *m, const void *key,
		     void *value, uint64_t flags)
{
	struct prog_array *pa = to_pa(m);
	uint32_t idx, id = 0;

	(void)flags;
	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->max_entries)
		return -ENOENT;
	pthread_mutex_lock(&pa->lock);
	if (pa->progs[idx])
		id = uxdp_bpf_prog_id(pa->progs[idx]);
	pthread_mutex_unlock(&pa->lock);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, sizeof(id));
	return 0;
}

static int pa_update(struct uxdp_bpf_map *m, const void *key,
		     const void *value, uint64_t flags)
{
	struct uxdp_prog *prog;
	uint32_t idx, id;

	memcpy(&idx, key, sizeof(idx));
	memcpy(&id, value, sizeof(id));
	/* The kernel's order: flags, index, then the program. */
	if (flags != BPF_ANY)
		return uxdp_fail(EINVAL, "map %s: update: a prog_array takes "
				 "BPF_ANY only (flags 0x%llx)", m->name,
				 (unsigned long long)flags);
	if (idx >= m->max_entries)
		return uxdp_fail(E2BIG, "map %s: update: slot %u of %u",
				 m->name, idx, m->max_entries);
	prog = uxdp_bpf_prog_get_by_id(id);
	if (!prog)
		return uxdp_fail(ENOENT, "map %s: update: no eBPF program has "
				 "id %u", m->name, id);
	return pa_set(to_pa(m), idx, prog, false);
}

static int pa_delete(struct uxdp_bpf_map *m, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->max_entries)
		return -E2BIG;
	return pa_set(to_pa(m), idx, NULL, true);
}

static void *pa_lddw(struct uxdp_bpf_map *m)
{
	return &to_pa(m)->view;
}

/* Programs reach the map only through bpf_tail_call (the safety pass
 * refuses the map calls on it, as the kernel's verifier does). */
const struct uxdp_bpf_map_ops uxdp_bpf_prog_array_ops = {
	.map_size = sizeof(struct prog_array),
	.rcu_reader = true,
	.map_alloc_check = pa_alloc_check,
	.map_alloc = pa_alloc,
	.map_free = pa_free,
	.map_lookup = pa_lookup,
	.map_update = pa_update,
	.map_delete = pa_delete,
	.map_get_next_key = uxdp_bpf_array_next_key,
	.map_lddw = pa_lddw,
};
