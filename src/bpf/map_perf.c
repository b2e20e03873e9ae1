/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_PERF_EVENT_ARRAY (the kernel's perf_event_array in
 * kernel/bpf/arraymap.c, bpf_perf_event_output in kernel/trace/bpf_trace.c
 * and its XDP form in net/core/filter.c) and the consumer a control plane
 * reads it with (libbpf's perf_buffer, as uxdp_bpf_perf_buffer_*).
 *
 * A slot per CPU holds a ring, as the kernel's holds a perf event opened
 * on that CPU: uxdp's CPUs are its thread indices, so ring i is written
 * only by the thread whose index is i (a program writing another CPU's
 * slot gets the kernel's -EOPNOTSUPP) and read only by the consumer. One
 * producer and one consumer: the ring needs no lock, only the release of
 * its head after the record's bytes and of its tail after they were read.
 *
 * A record is what libbpf hands its sample callback: the program's bytes,
 * then the packet's (the upper 32 bits of the flags), zero-padded so that
 * with the u32 size in front they fill whole 8-byte words (perf's raw
 * sample); the callback's size is the padded one, as libbpf's. In the
 * ring, an 8-byte header (the size, the record's kind) and the payload.
 * A record that does not fit is lost and counted, as perf's; the
 * consumer reports the count to its lost callback after that ring's
 * records (perf puts a LOST record in the stream instead: the count is
 * the same, its place among the samples may differ).
 *
 * Wake-ups: a consumer about to sleep sets the buffer's waiting flag, a
 * producer that published a record (or lost one) and finds it set clears
 * it and writes the buffer's eventfd. Each side stores, then loads what
 * the other stores (producer: head, then the flag; consumer: the flag,
 * then head): all four are sequentially consistent, so the two stores
 * are in one order both sides see, and either the producer sees the flag
 * or the consumer's look after setting it sees the record. No wake-up is
 * lost, and a producer pays a syscall only when someone sleeps. (On
 * x86-64 the producer's seq_cst store is an xchg, as a fence would be;
 * the loads are plain.)
 */
#include "../internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

/* The kernel's fd_array_map_alloc_check, and BPF_F_PRESERVE_ELEMS. */
#define PERF_CREATE_FLAGS	(BPF_F_NUMA_NODE | BPF_F_RDONLY |	\
				 BPF_F_WRONLY | BPF_F_PRESERVE_ELEMS)
#define PERF_MAX_ENTRIES	(1U << 20)
#define PERF_PAGE		4096U
#define PERF_MAX_PAGES		(1U << 16)	/* 256 MiB a ring */
/* perf's record size is a u16: header, u32 size, padded bytes. */
#define PERF_MAX_RECORD		0xfff8U

enum { REC_SAMPLE = 1 };

struct rec_hdr {
	uint32_t size;		/* the payload's, padded (libbpf's size) */
	uint32_t kind;
};

struct perf_ring {
	/* The producer's (the thread whose index is cpu). */
	uint64_t head __attribute__((aligned(UXDP_CACHE_LINE)));
	uint64_t lost;
	/* The consumer's. */
	uint64_t tail __attribute__((aligned(UXDP_CACHE_LINE)));
	uint64_t lost_told;
	/* Set at creation. */
	struct uxdp_bpf_perf_buffer *pb __attribute__((aligned(UXDP_CACHE_LINE)));
	uint32_t cpu;
	uint64_t size;		/* a power of two, a multiple of 8 */
	uint8_t *data;
};

struct uxdp_bpf_perf_buffer {
	/* Set by a sleeping consumer, cleared by the producer waking it. */
	uint32_t waiting __attribute__((aligned(UXDP_CACHE_LINE)));
	int efd __attribute__((aligned(UXDP_CACHE_LINE)));
	struct uxdp_bpf_map *map;	/* a reference */
	uxdp_bpf_perf_sample_fn sample_cb;
	uxdp_bpf_perf_lost_fn lost_cb;
	void *ctx;
	uint32_t nrings;
	struct perf_ring **rings;	/* by CPU */
	uint8_t *scratch;		/* a record that wraps, made whole */
};

struct perf_map {
	struct uxdp_bpf_map map;
	struct perf_ring **slots;	/* published with release */
};

static inline struct perf_map *to_pm(const struct uxdp_bpf_map *m)
{
	return (struct perf_map *)m;
}

/* ---- the map ------------------------------------------------------------------ */

static int pm_alloc_check(const struct uxdp_bpf_map *m)
{
	if (!m->max_entries || m->key_size != 4 || m->value_size != 4 ||
	    (m->map_flags & ~PERF_CREATE_FLAGS))
		return uxdp_fail(EINVAL, "map %s: a perf_event_array needs "
				 "key_size 4, value_size 4, max_entries above "
				 "0 and known flags (key_size %u, value_size "
				 "%u, max_entries %u, map_flags 0x%x)", m->name,
				 m->key_size, m->value_size, m->max_entries,
				 m->map_flags);
	if (m->max_entries > PERF_MAX_ENTRIES)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: uxdp allows a "
				 "perf_event_array at most %u", m->name,
				 m->max_entries, PERF_MAX_ENTRIES);
	return 0;
}

static int pm_alloc(struct uxdp_bpf_map *m)
{
	struct perf_map *pm = to_pm(m);

	pm->slots = calloc(m->max_entries, sizeof(*pm->slots));
	if (!pm->slots)
		return uxdp_fail(ENOMEM, "map %s: out of memory for %u slots",
				 m->name, m->max_entries);
	return 0;
}

/* No perf buffer is left (each holds a reference on the map). */
static void pm_free(struct uxdp_bpf_map *m)
{
	free(to_pm(m)->slots);
}

/* The kernel's syscall lookup of a perf_event_array has no value to give
 * (its ENOTSUPP); an update would take a perf event's descriptor. */
static int pm_lookup(const struct uxdp_bpf_map *m, const void *key,
		     void *value, uint64_t flags)
{
	(void)key, (void)value, (void)flags;
	return uxdp_fail(EOPNOTSUPP, "map %s: a perf_event_array's slots "
			 "have no value to read", m->name);
}

static int pm_update(struct uxdp_bpf_map *m, const void *key,
		     const void *value, uint64_t flags)
{
	(void)key, (void)value, (void)flags;
	return uxdp_fail(EOPNOTSUPP, "map %s: a perf_event_array's slots are "
			 "filled by uxdp_bpf_perf_buffer_new() (there is no "
			 "perf event descriptor to put in one)", m->name);
}

/* The kernel's fd_array_map_delete_elem: the slot's ring stays its
 * buffer's (freed with it); the program's writes to it get -ENOENT. */
static int pm_delete(struct uxdp_bpf_map *m, const void *key)
{
	uint32_t k;

	memcpy(&k, key, 4);
	if (k >= m->max_entries)
		return -E2BIG;
	return __atomic_exchange_n(&to_pm(m)->slots[k], NULL,
				   __ATOMIC_ACQ_REL) ? 0 : -ENOENT;
}

const struct uxdp_bpf_map_ops uxdp_bpf_perf_event_array_ops = {
	.map_size = sizeof(struct perf_map),
	/* A run writing a ring is a read-side section, so the buffer's
	 * free (after a grace period) waits for it, in a poll or not. */
	.rcu_reader = true,
	.map_alloc_check = pm_alloc_check,
	.map_alloc = pm_alloc,
	.map_free = pm_free,
	.map_lookup = pm_lookup,
	.map_update = pm_update,
	.map_delete = pm_delete,
	.map_get_next_key = uxdp_bpf_array_next_key,
	/* No map_*_elem: the safety pass lets no map call through a
	 * perf_event_array (as prog arrays). */
};

/* ---- the producer (a program's bpf_perf_event_output) ------------------------- */

static void ring_put(struct perf_ring *r, uint64_t at, const void *src,
		     uint64_t n)
{
	uint64_t off = at & (r->size - 1), first = r->size - off;

	if (!n)
		return;
	if (first > n)
		first = n;
	memcpy(r->data + off, src, first);
	if (first < n)
		memcpy(r->data, (const uint8_t *)src + first, n - first);
}

/* At most 11 bytes: a sample's padding (up to 7) and the 4 after it. */
static void ring_zero(struct perf_ring *r, uint64_t at, uint64_t n)
{
	static const uint8_t zero[16];

	ring_put(r, at, zero, n);
}

static void wake(struct uxdp_bpf_perf_buffer *pb)
{
	uint64_t one = 1;

	/* Seq_cst, after the seq_cst store of the head (or the lost
	 * count): see the top of the file. The exchange makes one producer
	 * the one that writes. */
	if (!__atomic_load_n(&pb->waiting, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(&pb->waiting, 0, __ATOMIC_ACQ_REL))
		return;
	if (write(pb->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so it is readable anyway. */
	}
}

long uxdp_bpf_perf_output(struct uxdp_bpf_map *map, uint64_t index,
			  const void *meta, uint64_t msize, const void *pkt,
			  uint64_t psize)
{
	uint32_t cpu = xdp_thread_index();
	struct perf_ring *r;
	struct rec_hdr h;
	uint64_t sum = msize + psize, head, tail, total;

	if (index == BPF_F_CURRENT_CPU)
		index = cpu;
	if (index >= map->max_entries)
		return -E2BIG;
	/* Acquire: pairs with the release of the buffer's publication, so
	 * the ring is seen set up. */
	r = __atomic_load_n(&to_pm(map)->slots[index], __ATOMIC_ACQUIRE);
	if (!r)
		return -ENOENT;
	/* The kernel's event->oncpu != cpu. */
	if (r->cpu != cpu)
		return -EOPNOTSUPP;
	h.size = (uint32_t)(((sum + 4 + 7) & ~7ULL) - 4);
	h.kind = REC_SAMPLE;
	total = sizeof(h) + h.size + 4;
	if (sum > PERF_MAX_RECORD || total > PERF_MAX_RECORD)
		return -E2BIG;
	head = r->head;
	/* Acquire: the consumer read the bytes before this tail before it
	 * stored it, so they may be written over. */
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (head - tail + total > r->size) {
		/* One producer: a plain increment, stored seq_cst before
		 * wake() looks at the flag. */
		__atomic_store_n(&r->lost, r->lost + 1, __ATOMIC_SEQ_CST);
		wake(r->pb);
		return -ENOSPC;
	}
	ring_put(r, head, &h, sizeof(h));
	ring_put(r, head + sizeof(h), meta, msize);
	ring_put(r, head + sizeof(h) + msize, pkt, psize);
	ring_zero(r, head + sizeof(h) + sum, total - sizeof(h) - sum);
	/* Release (seq_cst is more): the record's bytes before the head
	 * that shows them; seq_cst for wake()'s load of the flag. */
	__atomic_store_n(&r->head, head + total, __ATOMIC_SEQ_CST);
	wake(r->pb);
	return 0;
}

/* ---- the consumer --------------------------------------------------------------- */

static void ring_get(const struct perf_ring *r, uint64_t at, void *dst,
		     uint64_t n)
{
	uint64_t off = at & (r->size - 1), first = r->size - off;

	if (first > n)
		first = n;
	memcpy(dst, r->data + off, first);
	if (first < n)
		memcpy((uint8_t *)dst + first, r->data, n - first);
}

/* Every record of @r to the callback, then its losses: how many records. */
static int ring_consume(struct uxdp_bpf_perf_buffer *pb, struct perf_ring *r)
{
	/* Acquire (seq_cst is more): pairs with the producer's store of
	 * the head; seq_cst after poll's store of the flag. */
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_SEQ_CST);
	uint64_t tail = r->tail, lost;
	int n = 0;

	while (tail < head) {
		struct rec_hdr h;
		uint64_t off;
		void *data;

		ring_get(r, tail, &h, sizeof(h));
		/* Written by uxdp's own producer: a size past the ring is a
		 * bug, stopped here rather than read past. */
		if (h.kind != REC_SAMPLE ||
		    sizeof(h) + (uint64_t)h.size + 4 > head - tail) {
			uxdp_pr(UXDP_WARN, "bpf: perf buffer of map %s, CPU %u: "
				"a broken record at %llu: the ring is reset\n",
				pb->map->name, r->cpu,
				(unsigned long long)tail);
			tail = head;
			break;
		}
		off = (tail + sizeof(h)) & (r->size - 1);
		if (off + h.size <= r->size) {
			data = r->data + off;
		} else {
			ring_get(r, tail + sizeof(h), pb->scratch, h.size);
			data = pb->scratch;
		}
		pb->sample_cb(pb->ctx, (int)r->cpu, data, h.size);
		tail += sizeof(h) + h.size + 4;
		/* Release: the bytes were read before the producer may
		 * write over them. */
		__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
		n++;
	}
	lost = __atomic_load_n(&r->lost, __ATOMIC_SEQ_CST);
	if (lost != r->lost_told) {
		if (pb->lost_cb)
			pb->lost_cb(pb->ctx, (int)r->cpu, lost - r->lost_told);
		r->lost_told = lost;
	}
	return n;
}

UXDP_EXPORT int uxdp_bpf_perf_buffer_consume(struct uxdp_bpf_perf_buffer *pb)
{
	uint32_t i;
	int n = 0;

	if (!pb)
		return -EINVAL;
	for (i = 0; i < pb->nrings; i++)
		n += ring_consume(pb, pb->rings[i]);
	return n;
}

UXDP_EXPORT int uxdp_bpf_perf_buffer_poll(struct uxdp_bpf_perf_buffer *pb,
					  int timeout_ms)
{
	struct pollfd p;
	uint64_t v;
	int n, ret;

	uint64_t deadline;

	if (!pb)
		return -EINVAL;
	n = uxdp_bpf_perf_buffer_consume(pb);
	if (n || !timeout_ms)
		return n;
	deadline = uxdp_bpf_now_ms() + (uint64_t)(timeout_ms > 0 ?
						   timeout_ms : 0);
	p.fd = pb->efd;
	p.events = POLLIN;
	for (;;) {
		/* A count a producer left after an earlier sleep ended. */
		if (read(pb->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nothing left. */
		}
		/* Seq_cst: the flag before the rings' heads are looked at
		 * again (see the top of the file). */
		__atomic_store_n(&pb->waiting, 1, __ATOMIC_SEQ_CST);
		n = uxdp_bpf_perf_buffer_consume(pb);
		if (n)
			break;
		ret = poll(&p, 1, uxdp_bpf_ms_left(timeout_ms, deadline));
		if (ret < 0) {
			__atomic_store_n(&pb->waiting, 0, __ATOMIC_RELAXED);
			return -errno;
		}
		n = uxdp_bpf_perf_buffer_consume(pb);
		/* Woken with nothing: a producer's wake-up meant for an
		 * earlier sleep. Sleep again for what is left. */
		if (n || !ret || !uxdp_bpf_ms_left(timeout_ms, deadline))
			break;
	}
	__atomic_store_n(&pb->waiting, 0, __ATOMIC_RELAXED);
	return n;
}

static void pb_destroy(struct uxdp_bpf_perf_buffer *pb)
{
	uint32_t i;

	for (i = 0; i < pb->nrings; i++)
		if (pb->rings[i]) {
			free(pb->rings[i]->data);
			free(pb->rings[i]);
		}
	free(pb->rings);
	free(pb->scratch);
	if (pb->efd >= 0)
		close(pb->efd);
	if (pb->map)
		uxdp_bpf_map_free(pb->map);
	free(pb);
}

UXDP_EXPORT struct uxdp_bpf_perf_buffer *
uxdp_bpf_perf_buffer_new(struct uxdp_bpf_map *map, size_t page_cnt,
			 uxdp_bpf_perf_sample_fn sample_cb,
			 uxdp_bpf_perf_lost_fn lost_cb, void *ctx)
{
	struct uxdp_bpf_perf_buffer *pb;
	uint64_t size;
	uint32_t i;

	if (!map || map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
	    !map->created) {
		uxdp_fail(EINVAL, "perf buffer: %s%s is not a loaded "
			  "perf_event_array", map ? "map " : "no map",
			  map ? map->name : "");
		errno = EINVAL;
		return NULL;
	}
	if (!sample_cb || !page_cnt || (page_cnt & (page_cnt - 1)) ||
	    page_cnt > PERF_MAX_PAGES) {
		uxdp_fail(EINVAL, "perf buffer of map %s: %s", map->name,
			  !sample_cb ? "no sample callback" :
			  "page_cnt must be a power of two, at most 65536");
		errno = EINVAL;
		return NULL;
	}
	size = (uint64_t)page_cnt * PERF_PAGE;
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		goto nomem;
	pb->efd = -1;
	pb->map = map;
	uxdp_bpf_map_get(map);
	pb->sample_cb = sample_cb;
	pb->lost_cb = lost_cb;
	pb->ctx = ctx;
	pb->nrings = map->max_entries < UXDP_BPF_NR_CPUS ? map->max_entries :
		     UXDP_BPF_NR_CPUS;
	pb->rings = calloc(pb->nrings, sizeof(*pb->rings));
	pb->scratch = malloc(size);
	pb->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!pb->rings || !pb->scratch || pb->efd < 0)
		goto nomem;
	for (i = 0; i < pb->nrings; i++) {
		struct perf_ring *r;

		if (posix_memalign((void **)&r, UXDP_CACHE_LINE, sizeof(*r)))
			goto nomem;
		memset(r, 0, sizeof(*r));
		pb->rings[i] = r;
		r->pb = pb;
		r->cpu = i;
		r->size = size;
		/* calloc: pages a CPU never writes are never touched. */
		r->data = calloc(1, size);
		if (!r->data)
			goto nomem;
	}
	/* Release: each ring set up before a program can find it (the
	 * producer's acquire). The slot's earlier ring, a buffer's before
	 * this one, stays that buffer's. */
	for (i = 0; i < pb->nrings; i++)
		__atomic_store_n(&to_pm(map)->slots[i], pb->rings[i],
				 __ATOMIC_RELEASE);
	return pb;
nomem:
	uxdp_fail(ENOMEM, "perf buffer of map %s: out of memory for %u rings "
		  "of %zu pages", map->name, pb ? pb->nrings : 0, page_cnt);
	if (pb)
		pb_destroy(pb);
	errno = ENOMEM;
	return NULL;
}

UXDP_EXPORT int uxdp_bpf_perf_buffer_free(struct uxdp_bpf_perf_buffer *pb)
{
	uint32_t i;
	int err;

	if (!pb)
		return 0;
	if (xdp_rcu_in_reader())
		return uxdp_fail(EDEADLK, "perf buffer of map %s: freed from "
				 "inside a poll or a program run (it waits "
				 "for them): nothing was freed",
				 pb->map->name);
	/* Out of the slots that still hold its rings (a buffer made since
	 * may hold them now), then a grace period: a run that found a ring
	 * has finished writing it. */
	for (i = 0; i < pb->nrings; i++) {
		struct perf_ring *r = pb->rings[i];

		__atomic_compare_exchange_n(&to_pm(pb->map)->slots[i], &r,
					    NULL, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
	err = xdp_synchronize("perf buffer");
	if (err)
		return err;
	pb_destroy(pb);
	return 0;
}
