/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * BPF_MAP_TYPE_RINGBUF (the kernel's kernel/bpf/ringbuf.c): one ring that
 * every thread's programs write (bpf_ringbuf_output, bpf_ringbuf_query)
 * and one consumer reads, as libbpf's ring_buffer (uxdp_bpf_ring_buffer_*).
 *
 * The kernel's layout and rules: a record is an 8-byte header (the
 * length, with BUSY while it is being written and DISCARD for a record to
 * skip; the kernel's page offset, unused here) and the data, rounded up to
 * 8; max_entries is the data area's size, a power of two of whole pages.
 * The data area is mapped twice, back to back (a memfd), so a record that
 * runs past the end is contiguous, as the kernel maps its pages twice.
 *
 * Producers reserve under a spin lock (the kernel's raw spin lock: a few
 * instructions to move the producer position and write a BUSY header),
 * copy outside it and commit by clearing BUSY with a release store; the
 * consumer stops at the first BUSY record. A reservation that would let
 * the producer position run more than the ring's size minus one past the
 * consumer's, or past the oldest record still being written, fails (the
 * kernel's -EAGAIN for output).
 *
 * Wake-ups as map_perf.c's: a consumer about to sleep sets the map's
 * waiting flag, and a commit that finds it set writes the map's eventfd;
 * the commit's store and the flag's load, the flag's store and the
 * consumer's load of the producer position, are sequentially consistent
 * (see map_perf.c). BPF_RB_NO_WAKEUP wakes no one; BPF_RB_FORCE_WAKEUP
 * is the default here (uxdp wakes a sleeping consumer at every commit,
 * where the kernel's default wakes it only for the record it was
 * waiting at: the same for a consumer that reads everything it is woken
 * for).
 */
#define _GNU_SOURCE	/* memfd_create */
#include "../internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

#define RB_HDR		8U
#define RB_PAGE		4096U
/* The kernel's RINGBUF_MAX_DATA_SZ is about 64 GiB; uxdp's 1 GiB. */
#define RB_MAX_SIZE	(1U << 30)
#define RB_MAX_RECORD	(UINT32_MAX / 4)	/* RINGBUF_MAX_RECORD_SZ */

struct rb_map {
	struct uxdp_bpf_map map;
	/* The consumer's position, its own line. */
	uint64_t cons_pos __attribute__((aligned(UXDP_CACHE_LINE)));
	uint32_t waiting;
	/* The producers': under lock. */
	uint64_t prod_pos __attribute__((aligned(UXDP_CACHE_LINE)));
	uint64_t pend_pos;
	struct uxdp_bpf_spinlock lock;
	/* Set at creation. */
	uint8_t *data __attribute__((aligned(UXDP_CACHE_LINE)));
	uint64_t mask;
	int efd;
};

static inline struct rb_map *to_rb(const struct uxdp_bpf_map *m)
{
	return (struct rb_map *)m;
}

static inline uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* ---- the map ------------------------------------------------------------------ */

static int rb_alloc_check(const struct uxdp_bpf_map *m)
{
	uint32_t n = m->max_entries;

	if (m->key_size || m->value_size || !n || (n & (n - 1)) ||
	    n % RB_PAGE || (m->map_flags & ~BPF_F_NUMA_NODE))
		return uxdp_fail(EINVAL, "map %s: a ringbuf needs key_size 0, "
				 "value_size 0, max_entries a power of two of "
				 "whole 4 KiB pages, and no flags but "
				 "BPF_F_NUMA_NODE (key_size %u, value_size %u, "
				 "max_entries %u, map_flags 0x%x)", m->name,
				 m->key_size, m->value_size, n, m->map_flags);
	if (n > RB_MAX_SIZE)
		return uxdp_fail(E2BIG, "map %s: max_entries %u: uxdp's "
				 "ringbufs have at most %u bytes", m->name, n,
				 RB_MAX_SIZE);
	return 0;
}

static int rb_alloc(struct uxdp_bpf_map *m)
{
	struct rb_map *rb = to_rb(m);
	size_t size = m->max_entries;
	uint8_t *area = MAP_FAILED;
	int fd, err = ENOMEM;

	rb->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fd = memfd_create("uxdp-ringbuf", MFD_CLOEXEC);
	if (rb->efd < 0 || fd < 0 || ftruncate(fd, (off_t)size))
		goto fail;
	/* Twice the size reserved, then the same pages in both halves. */
	area = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (area == MAP_FAILED ||
	    mmap(area, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED ||
	    mmap(area + size, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		goto fail;
	close(fd);
	rb->data = area;
	rb->mask = size - 1;
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	if (area != MAP_FAILED)
		munmap(area, 2 * size);
	if (fd >= 0)
		close(fd);
	if (rb->efd >= 0)
		close(rb->efd);
	rb->efd = -1;
	return uxdp_fail(err, "map %s: %u bytes of ring: %s", m->name,
			 m->max_entries, strerror(err));
}

static void rb_free(struct uxdp_bpf_map *m)
{
	struct rb_map *rb = to_rb(m);

	if (rb->data)
		munmap(rb->data, 2 * (size_t)m->max_entries);
	if (rb->efd >= 0)
		close(rb->efd);
}

/* The kernel's syscalls on a ringbuf: none of the element commands. */
static int rb_lookup(const struct uxdp_bpf_map *m, const void *key,
		     void *value, uint64_t flags)
{
	(void)key, (void)value, (void)flags;
	return uxdp_fail(EOPNOTSUPP, "map %s: a ringbuf has no elements "
			 "(read it with uxdp_bpf_ring_buffer_new)", m->name);
}

static int rb_update(struct uxdp_bpf_map *m, const void *key,
		     const void *value, uint64_t flags)
{
	return rb_lookup(m, key, (void *)value, flags);
}

static int rb_delete(struct uxdp_bpf_map *m, const void *key)
{
	return rb_lookup(m, key, NULL, 0);
}

static int rb_get_next_key(const struct uxdp_bpf_map *m, const void *key,
			   void *next_key)
{
	(void)next_key;
	return rb_lookup(m, key, NULL, 0);
}

const struct uxdp_bpf_map_ops uxdp_bpf_ringbuf_ops = {
	.map_size = sizeof(struct rb_map),
	/* Not for a grace period: so that a run has its end (run_exit),
	 * where the records it left are discarded. */
	.rcu_reader = true,
	.map_alloc_check = rb_alloc_check,
	.map_alloc = rb_alloc,
	.map_free = rb_free,
	.map_lookup = rb_lookup,
	.map_update = rb_update,
	.map_delete = rb_delete,
	.map_get_next_key = rb_get_next_key,
	/* No map_*_elem: the safety pass lets only the ring buffer calls
	 * take a ringbuf. */
};

/* ---- the producers ------------------------------------------------------------- */

static void rb_lock(struct rb_map *rb)
{
	uxdp_bpf_spin_lock(&rb->lock);
}

static void rb_unlock(struct rb_map *rb)
{
	uxdp_bpf_spin_unlock(&rb->lock);
}

/* The kernel's __bpf_ringbuf_reserve: the record's data, or NULL. */
static void *rb_reserve(struct rb_map *rb, uint64_t size)
{
	uint64_t len, cons, prod, pend, new_prod;
	uint32_t *hdr;

	if (size > RB_MAX_RECORD)
		return NULL;
	len = round8(size + RB_HDR);
	if (len > rb->mask + 1)
		return NULL;
	rb_lock(rb);
	/* Acquire: the consumer read the records before this position
	 * before it stored it. Read under the lock, not before it as the
	 * kernel does: a waiter here may sleep (the lock yields to a
	 * preempted holder), and a position read before that sleep is far
	 * behind the producer's after it, a full ring that is not (a
	 * spurious -EAGAIN test_bpf_ringbuf's ping-pong found under TSan,
	 * 4 runs in 27). */
	cons = __atomic_load_n(&rb->cons_pos, __ATOMIC_ACQUIRE);
	prod = rb->prod_pos;
	/* Past the records written since (BUSY clear): the oldest still
	 * being written bounds the producer as the consumer does. */
	pend = rb->pend_pos;
	while (pend < prod) {
		uint32_t l = __atomic_load_n((uint32_t *)(rb->data +
					     (pend & rb->mask)),
					     __ATOMIC_ACQUIRE);

		uint64_t step = round8((l & ~BPF_RINGBUF_DISCARD_BIT) +
				       RB_HDR);

		/* A header past the producer (a program's stray write
		 * into a record it gave up): stop at it. */
		if ((l & BPF_RINGBUF_BUSY_BIT) || step > prod - pend)
			break;
		pend += step;
	}
	rb->pend_pos = pend;
	new_prod = prod + len;
	if (new_prod - cons > rb->mask || new_prod - pend > rb->mask) {
		rb_unlock(rb);
		return NULL;
	}
	hdr = (uint32_t *)(rb->data + (prod & rb->mask));
	hdr[1] = 0;
	__atomic_store_n(&hdr[0], (uint32_t)size | BPF_RINGBUF_BUSY_BIT,
			 __ATOMIC_RELAXED);
	/* Release: the BUSY header before the position that shows it (the
	 * consumer stops at it). */
	__atomic_store_n(&rb->prod_pos, new_prod, __ATOMIC_RELEASE);
	rb_unlock(rb);
	return hdr + 2;
}

/* Not inlined: GCC 12 then warns of a write into "a region of size 0"
 * through rb (a -Wstringop-overflow false positive). */
static __attribute__((noinline)) void rb_commit(struct rb_map *rb,
						void *data, uint64_t flags,
						bool discard)
{
	uint32_t *hdr = (uint32_t *)data - 2;
	uint32_t len = __atomic_load_n(hdr, __ATOMIC_RELAXED);
	uint64_t one = 1;

	len &= ~BPF_RINGBUF_BUSY_BIT;
	if (discard)
		len |= BPF_RINGBUF_DISCARD_BIT;
	/* Seq_cst (release is what the consumer needs: the data before
	 * the header that says it is done) before the flag's load. */
	__atomic_store_n(hdr, len, __ATOMIC_SEQ_CST);
	if ((flags & BPF_RB_NO_WAKEUP) ||
	    !__atomic_load_n(&rb->waiting, __ATOMIC_SEQ_CST) ||
	    !__atomic_exchange_n(&rb->waiting, 0, __ATOMIC_ACQ_REL))
		return;
	if (write(rb->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so it is readable anyway. */
	}
}

/*
 * bpf_ringbuf_reserve's records not yet submitted or discarded, per
 * thread: a program's run is on one thread, and its end (prog.c's
 * run_exit) discards what the program left (the kernel's verifier refuses
 * such a program; here a record left BUSY would stop the consumer for
 * ever). A submit or discard of a record not here (twice, or not a
 * reservation) does nothing.
 */
#define RB_PENDING	16

struct rb_pending {
	struct rb_map *rb;
	void *data;
};

static __thread struct rb_pending rb_pending[RB_PENDING];
__thread uint32_t uxdp_bpf_rb_npending;

void *uxdp_bpf_ringbuf_reserve(struct uxdp_bpf_map *map, uint64_t size,
			       uint64_t flags)
{
	struct rb_map *rb = to_rb(map);
	void *rec;

	if (unlikely(flags) || uxdp_bpf_rb_npending == RB_PENDING)
		return NULL;
	rec = rb_reserve(rb, size);
	if (rec)
		rb_pending[uxdp_bpf_rb_npending++] = (struct rb_pending){
			rb, rec };
	return rec;
}

void uxdp_bpf_ringbuf_commit(void *data, uint64_t flags, bool discard)
{
	uint32_t i;

	for (i = uxdp_bpf_rb_npending; i-- > 0;)
		if (rb_pending[i].data == data) {
			struct rb_map *rb = rb_pending[i].rb;

			rb_pending[i] = rb_pending[--uxdp_bpf_rb_npending];
			rb_commit(rb, data, flags, discard);
			return;
		}
}

void uxdp_bpf_ringbuf_run_end(const char *prog)
{
	static bool said;
	uint32_t n = uxdp_bpf_rb_npending;

	while (uxdp_bpf_rb_npending) {
		struct rb_pending *p = &rb_pending[--uxdp_bpf_rb_npending];

		rb_commit(p->rb, p->data, 0, true);
	}
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		uxdp_pr(UXDP_WARN, "bpf: prog %s: %u ring buffer record%s "
			"reserved and neither submitted nor discarded: "
			"discarded at the end of the run (printed once)\n",
			prog, n, n == 1 ? "" : "s");
}

long uxdp_bpf_ringbuf_output(struct uxdp_bpf_map *map, const void *data,
			     uint64_t size, uint64_t flags)
{
	struct rb_map *rb = to_rb(map);
	void *rec;

	if (unlikely(flags & ~(uint64_t)(BPF_RB_NO_WAKEUP |
					 BPF_RB_FORCE_WAKEUP)))
		return -EINVAL;
	rec = rb_reserve(rb, size);
	if (!rec)
		return -EAGAIN;
	memcpy(rec, data, size);
	rb_commit(rb, rec, flags, false);
	return 0;
}

uint64_t uxdp_bpf_ringbuf_query(struct uxdp_bpf_map *map, uint64_t flags)
{
	struct rb_map *rb = to_rb(map);
	uint64_t cons = __atomic_load_n(&rb->cons_pos, __ATOMIC_ACQUIRE);
	uint64_t prod = __atomic_load_n(&rb->prod_pos, __ATOMIC_ACQUIRE);

	switch (flags) {
	case BPF_RB_AVAIL_DATA:
		return prod - cons;
	case BPF_RB_RING_SIZE:
		return rb->mask + 1;
	case BPF_RB_CONS_POS:
		return cons;
	case BPF_RB_PROD_POS:
		return prod;
	default:
		return 0;
	}
}

/* ---- the consumer --------------------------------------------------------------- */

struct rb_ring {
	struct rb_map *rb;		/* a reference */
	uxdp_bpf_ring_sample_fn cb;
	void *ctx;
};

struct uxdp_bpf_ring_buffer {
	struct rb_ring *rings;
	uint32_t n;
	struct pollfd *pfds;
};

/* Every committed record of @r to its callback: how many (discarded
 * ones not counted), or the callback's negative result. */
static int64_t ring_consume(struct rb_ring *r)
{
	struct rb_map *rb = r->rb;
	uint64_t cons = rb->cons_pos, prod;
	int64_t n = 0;

	/* Seq_cst (acquire is what the records need) after poll's store of
	 * the flag. */
	prod = __atomic_load_n(&rb->prod_pos, __ATOMIC_SEQ_CST);
	while (cons < prod) {
		uint32_t *hdr = (uint32_t *)(rb->data + (cons & rb->mask));
		/* Acquire: the record's bytes before its cleared BUSY
		 * (seq_cst: the commit's store against poll's flag). */
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_SEQ_CST);
		int err;

		uint64_t step = round8((len & ~BPF_RINGBUF_DISCARD_BIT) +
				       RB_HDR);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		/* Programs write records in place: a header a stray write
		 * broke is not followed past what was produced. */
		if (step > prod - cons) {
			uxdp_pr(UXDP_WARN, "bpf: ringbuf %s: a broken record "
				"header at %llu: the rest produced is skipped\n",
				rb->map.name, (unsigned long long)cons);
			__atomic_store_n(&rb->cons_pos, prod,
					 __ATOMIC_RELEASE);
			return n;
		}
		cons += step;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			err = r->cb(r->ctx, hdr + 2, len);
			if (err < 0) {
				/* As libbpf: the record counts as read. */
				__atomic_store_n(&rb->cons_pos, cons,
						 __ATOMIC_RELEASE);
				return err;
			}
			n++;
		}
		/* Release: the record was read before a producer may write
		 * over it. */
		__atomic_store_n(&rb->cons_pos, cons, __ATOMIC_RELEASE);
	}
	return n;
}

static int clamp_count(int64_t n)
{
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

UXDP_EXPORT int uxdp_bpf_ring_buffer_consume(struct uxdp_bpf_ring_buffer *rbuf)
{
	int64_t n = 0, got;
	uint32_t i;

	if (!rbuf)
		return -EINVAL;
	for (i = 0; i < rbuf->n; i++) {
		got = ring_consume(&rbuf->rings[i]);
		if (got < 0)
			return (int)got;
		n += got;
	}
	return clamp_count(n);
}

static void set_waiting(struct uxdp_bpf_ring_buffer *rbuf, uint32_t v)
{
	uint32_t i;

	for (i = 0; i < rbuf->n; i++)
		__atomic_store_n(&rbuf->rings[i].rb->waiting, v,
				 __ATOMIC_SEQ_CST);
}

UXDP_EXPORT int uxdp_bpf_ring_buffer_poll(struct uxdp_bpf_ring_buffer *rbuf,
					  int timeout_ms)
{
	uint64_t v, deadline;
	uint32_t i;
	int n, ret;

	if (!rbuf)
		return -EINVAL;
	n = uxdp_bpf_ring_buffer_consume(rbuf);
	if (n || !timeout_ms)
		return n;
	deadline = uxdp_bpf_now_ms() + (uint64_t)(timeout_ms > 0 ?
						   timeout_ms : 0);
	for (;;) {
		for (i = 0; i < rbuf->n; i++)
			if (read(rbuf->rings[i].rb->efd, &v, sizeof(v)) < 0) {
				/* EAGAIN: no count left from an earlier
				 * sleep. */
			}
		/* The flags before the positions are looked at again (see
		 * the top of the file). */
		set_waiting(rbuf, 1);
		n = uxdp_bpf_ring_buffer_consume(rbuf);
		if (n)
			break;
		ret = poll(rbuf->pfds, rbuf->n,
			   uxdp_bpf_ms_left(timeout_ms, deadline));
		if (ret < 0) {
			set_waiting(rbuf, 0);
			return -errno;
		}
		n = uxdp_bpf_ring_buffer_consume(rbuf);
		/* Woken with nothing (a wake-up meant for an earlier
		 * sleep): sleep again for what is left. */
		if (n || !ret || !uxdp_bpf_ms_left(timeout_ms, deadline))
			break;
	}
	set_waiting(rbuf, 0);
	return n;
}

UXDP_EXPORT int uxdp_bpf_ring_buffer_add(struct uxdp_bpf_ring_buffer *rbuf,
					 struct uxdp_bpf_map *map,
					 uxdp_bpf_ring_sample_fn sample_cb,
					 void *ctx)
{
	struct rb_ring *rings;
	struct pollfd *pfds;

	if (!rbuf || !map || map->type != BPF_MAP_TYPE_RINGBUF ||
	    !map->created || !sample_cb)
		return uxdp_fail(EINVAL, "ring buffer: %s%s%s", !map ? "no map" :
				 "map ", map ? map->name : "", map &&
				 !sample_cb ? ": no sample callback" :
				 map ? " is not a loaded ringbuf" : "");
	rings = realloc(rbuf->rings, (rbuf->n + 1) * sizeof(*rings));
	if (!rings)
		return uxdp_fail(ENOMEM, "ring buffer: out of memory");
	rbuf->rings = rings;
	pfds = realloc(rbuf->pfds, (rbuf->n + 1) * sizeof(*pfds));
	if (!pfds)
		return uxdp_fail(ENOMEM, "ring buffer: out of memory");
	rbuf->pfds = pfds;
	rings[rbuf->n] = (struct rb_ring){ to_rb(uxdp_bpf_map_get(map)),
					   sample_cb, ctx };
	pfds[rbuf->n] = (struct pollfd){ .fd = to_rb(map)->efd,
					 .events = POLLIN };
	rbuf->n++;
	return 0;
}

UXDP_EXPORT struct uxdp_bpf_ring_buffer *
uxdp_bpf_ring_buffer_new(struct uxdp_bpf_map *map,
			 uxdp_bpf_ring_sample_fn sample_cb, void *ctx)
{
	struct uxdp_bpf_ring_buffer *rbuf = calloc(1, sizeof(*rbuf));
	int err;

	if (!rbuf) {
		uxdp_fail(ENOMEM, "ring buffer: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	err = uxdp_bpf_ring_buffer_add(rbuf, map, sample_cb, ctx);
	if (err) {
		uxdp_bpf_ring_buffer_free(rbuf);
		errno = -err;
		return NULL;
	}
	return rbuf;
}

/* Nothing of the maps' is freed here (the references keep them), so no
 * grace period is needed: a run still writing finds its map alive. */
UXDP_EXPORT void uxdp_bpf_ring_buffer_free(struct uxdp_bpf_ring_buffer *rbuf)
{
	uint32_t i;

	if (!rbuf)
		return;
	for (i = 0; i < rbuf->n; i++)
		uxdp_bpf_map_free(&rbuf->rings[i].rb->map);
	free(rbuf->rings);
	free(rbuf->pfds);
	free(rbuf);
}
