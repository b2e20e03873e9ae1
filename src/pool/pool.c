/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The buffer pool: batched and single allocation from the fill ring, the
 * free list, release to the application, frees from other threads, and
 * accounting.
 *
 * Every head has a word in fpos[] that says where it is (see
 * pool_internal.h): the application's, allocated, or on the free list. It
 * is what makes double frees, frees of another pool's buffer and duplicate
 * fill addresses counted no-ops instead of a buffer handed out twice, and
 * what the audit counts. Membership of the free list is positional (a
 * sparse set), so allocating from the free list writes nothing per buffer;
 * a free checks and writes one word beside the free-list slot it fills, or,
 * when a batch comes back the way it left, compares it with the slots it
 * left and writes nothing at all.
 *
 * Threading. The owner (uxdp_pool_set_owner) alone changes a head's state,
 * the free list, the fill ring's consumer side and the counters, with no
 * lock. Other threads return buffers only through uxdp_pool_free_remote():
 * a stack under the remote lock, which the owner takes back at the start
 * of every call that looks at buffer state (pool_sync_remote()). From
 * uxdp_pool_retire() on there is no owner: every return, by any path and
 * from any thread, changes that state under the remote lock, and the one
 * that leaves no buffer out frees the pool.
 */
#include "../internal.h"

#include "pool_internal.h"

static inline struct uxdp_pool_buff *to_pool_buff(struct uxdp_buff *b)
{
	return (struct uxdp_pool_buff *)b;
}

/*
 * Counters have one writer (the owner, or the remote lock's holder once
 * retired) and any number of readers (uxdp_pool_stats from any thread): a
 * relaxed load and store are plain moves, yet not a data race.
 */
static inline void pstat_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

static inline uint64_t pstat_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* The free list's count, published the same way for uxdp_pool_stats(). */
static inline void set_free_cnt(struct uxdp_pool *p, uint32_t cnt)
{
	__atomic_store_n(&p->free_list_cnt, cnt, __ATOMIC_RELAXED);
}

static void pool_drain_remote(struct uxdp_pool *p);
static void pool_drain_remote_locked(struct uxdp_pool *p);
static void pool_free_mem(struct uxdp_pool *p);

/*
 * The head index of a buffer pointer, or a value >= nheads when the pointer
 * is not one of this pool's heads (outside the array, or inside it but not
 * at the start of a head). A rotate folds both checks into one compare:
 * low bits left over from the division land in the top bits.
 */
static inline uint64_t head_index(const struct uxdp_pool *p, const void *b)
{
	uint64_t off = (uint64_t)((uintptr_t)b - (uintptr_t)p->heads);

	_Static_assert(sizeof(struct uxdp_pool_buff) == 64,
		       "head_index() divides by rotating by 6");
	return (off >> 6) | (off << 58);
}

/*
 * Whether head @h, with fpos @pos, is on a free list holding @cnt entries:
 * its recorded position is in use and the slot there is still it.
 */
static inline bool on_free_list(const struct uxdp_pool *p, uint32_t h,
				uint32_t pos, uint32_t cnt)
{
	return pos < cnt && p->free_list[pos] == &p->heads[h];
}

/*
 * What an unused free-list slot holds: not NULL, which a caller may pass by
 * mistake, but the address of an object no caller has (pool_internal.h).
 */
static const struct uxdp_pool_buff slot_empty_obj;
#define SLOT_EMPTY	((struct uxdp_pool_buff *)&slot_empty_obj)

/*
 * A head leaves its recorded position @pos for good (pushed at the count,
 * or released): the slot may still hold it, so it may no longer be clean.
 * dirty_top keeps the highest such slot + 2, which maps FPOS_HELD and
 * FPOS_APP (not slots) to 0 and 1: one add and a max, no branch, no look
 * at the slot. Coarse on purpose: a slot below the count counts too, and is
 * harmless (see dirty_below()).
 */
static inline uint32_t dirty_add(uint32_t top, uint32_t pos)
{
	uint32_t t = pos + 2;	/* wraps for FPOS_HELD and FPOS_APP */

	return t > top ? t : top;
}

/* Whether every slot that may be unclean lies below count @cnt. */
static inline bool dirty_below(uint32_t top, uint64_t cnt)
{
	return top < cnt + 2;
}

/* Whether head @h is allocated: neither the application's nor free. */
static inline bool is_allocated(const struct uxdp_pool *p, uint32_t h)
{
	uint32_t pos = p->fpos[h];

	return pos != FPOS_APP && !on_free_list(p, h, pos, p->free_list_cnt);
}

/*
 * Fill-ring entries available, refreshing the cached producer only when the
 * cache holds fewer than @want. On a refresh, first publish what we have
 * consumed so the application can post into those slots again (the kernel's
 * single-peek path does the same). The application writes the producer
 * index: uxdp_ring_cons_nb_avail() clamps it to the ring.
 */
static inline uint32_t fq_avail(struct uxdp_ring *fq, uint32_t want)
{
	if (fq->cached_prod - fq->cached_cons >= want)
		return fq->cached_prod - fq->cached_cons;
	uxdp_ring_cons_publish(fq);			/* D, pairs with A */
	return uxdp_ring_cons_nb_avail(fq, want);
}

/* ---- create / destroy ---------------------------------------------------- */

static void pool_init_heads(struct uxdp_pool *p)
{
	uint32_t frame_sz = p->chunk_size - p->headroom;
	uint32_t i;

	for (i = 0; i < p->nheads; i++) {
		struct uxdp_pool_buff *pb = &p->heads[i];

		pb->pool = p;
		pb->xdp.frame_sz = frame_sz;
		p->fpos[i] = FPOS_APP;
		if (p->unaligned) {
			/* Placed on every allocation; stack of unused heads. */
			p->free_heads[i] = pb;
		} else {
			/* The aligned fast path: chunk i always uses head i,
			 * so its address is set once, here. */
			pb->xdp.data_hard_start = p->addrs +
				(uint64_t)i * p->chunk_size + p->headroom;
		}
	}
	p->free_heads_cnt = p->unaligned ? p->nheads : 0;
}

UXDP_EXPORT __cold struct uxdp_pool *
uxdp_pool_create(struct uxdp_umem *umem, const struct uxdp_pool_opts *opts)
{
	struct uxdp_pool *p;
	uint32_t fill, comp, i;
	size_t heads_len;
	int err;

	uxdp_clear_err();
	if (!umem) {
		err = uxdp_fail(EINVAL, "pool: NULL umem");
		goto err;
	}
	if (!UXDP_OPTS_VALID(opts, uxdp_pool_opts)) {
		err = -EINVAL;
		goto err;
	}
	if (UXDP_OPTS_GET(opts, flags, 0)) {
		err = uxdp_fail(EINVAL, "pool: unknown flags 0x%x", opts->flags);
		goto err;
	}
	/* A head's position word also holds FPOS_HELD and FPOS_APP: positions
	 * must stay below them (the kernel's limit, 2^32-1 chunks, is one
	 * more than that allows). */
	if (umem->nchunks >= FPOS_HELD) {
		err = uxdp_fail(EINVAL, "pool: the UMEM has %u chunks; a pool "
				"takes at most %u", umem->nchunks,
				FPOS_HELD - 1);
		goto err;
	}
	fill = UXDP_OPTS_GET(opts, fill_size, 0);
	comp = UXDP_OPTS_GET(opts, comp_size, 0);
	if ((fill && (!is_pow2_u64(fill) || fill > UXDP_RING_MAX_ENTRIES)) ||
	    (comp && (!is_pow2_u64(comp) || comp > UXDP_RING_MAX_ENTRIES))) {
		err = uxdp_fail(EINVAL, "pool: fill_size %u / comp_size %u: "
				"powers of two <= 2^30, or 0", fill, comp);
		goto err;
	}

	err = uxdp_fail(ENOMEM, "pool: out of memory");
	if (posix_memalign((void **)&p, UXDP_CACHE_LINE, sizeof(*p)))
		goto err;
	memset(p, 0, sizeof(*p));
	p->umem = umem;
	p->nheads = umem->nchunks;
	p->addrs = umem->area;
	p->addrs_cnt = umem->size;
	p->chunk_size = umem->chunk_size;
	p->chunk_mask = ~((uint64_t)umem->chunk_size - 1);
	p->chunk_shift = (uint32_t)__builtin_ctz(umem->chunk_size);
	p->headroom = umem->headroom;
	p->unaligned = umem->flags & UXDP_UMEM_F_UNALIGNED;

	heads_len = (size_t)p->nheads * sizeof(*p->heads);
	if (posix_memalign((void **)&p->heads, UXDP_CACHE_LINE, heads_len))
		goto err_pool;
	memset(p->heads, 0, heads_len);
	p->fpos = calloc(p->nheads, sizeof(*p->fpos));
	p->free_list = calloc(p->nheads, sizeof(*p->free_list));
	p->remote.stack = calloc(p->nheads, sizeof(*p->remote.stack));
	p->remote.pending = calloc(p->nheads, 1);
	if (!p->fpos || !p->free_list || !p->remote.stack || !p->remote.pending)
		goto err_arrays;
	for (i = 0; i < p->nheads; i++)
		p->free_list[i] = SLOT_EMPTY;
	p->dirty_top = 0;
	if (p->unaligned) {
		p->free_heads = calloc(p->nheads, sizeof(*p->free_heads));
		p->by_base = calloc((p->addrs_cnt >> UNALIGNED_BASE_SHIFT) + 1,
				    sizeof(*p->by_base));
		if (!p->free_heads || !p->by_base)
			goto err_arrays;
	}
	pool_init_heads(p);
	p->owner = uxdp_thread_id();

	/*
	 * The first pool takes the UMEM's own fill and completion rings; a
	 * further one (shared UMEM: another device or queue) gets a pair of
	 * its own, as the kernel wants one per (device, queue). The pool is
	 * the fill ring's consumer and the completion ring's producer; the
	 * application holds the other ends (uxdp_pool_fill_ring()).
	 */
	pthread_mutex_lock(&umem->lock);
	if (!umem->rings_taken) {
		umem->rings_taken = true;
		p->rings = &umem->rings;
	} else {
		err = pool_rings_alloc(&p->own_rings,
				       pool_ring_size(fill, umem->size,
						      umem->chunk_size),
				       pool_ring_size(comp, umem->size,
						      umem->chunk_size));
		if (err) {
			pthread_mutex_unlock(&umem->lock);
			uxdp_fail(-err, "pool: rings: out of memory");
			goto err_arrays;
		}
		p->rings = &p->own_rings;
	}
	p->next = umem->pools;
	umem->pools = p;
	umem->npools++;
	pthread_mutex_unlock(&umem->lock);
	uxdp_ring_init_cons(&p->fq, p->rings->fill_mem, p->rings->fill_size,
			    NULL);
	uxdp_ring_init_prod(&p->cq, p->rings->comp_mem, p->rings->comp_size,
			    NULL);
	uxdp_clear_err();
	return p;

err_arrays:
	pool_free_mem(p);
	goto err;
err_pool:
	free(p);
err:
	errno = -err;
	return NULL;
}

static void pool_free_mem(struct uxdp_pool *p)
{
	free(p->remote.pending);
	free(p->remote.stack);
	free(p->free_heads);
	free(p->by_base);
	free(p->free_list);
	free(p->fpos);
	free(p->heads);
	free(p);
}

static inline uint64_t pool_outstanding(const struct uxdp_pool *p)
{
	return p->n_alloc - p->n_freed - p->n_released;
}

/* Unbind from the UMEM and free (no buffer is out). */
static void pool_teardown(struct uxdp_pool *p)
{
	struct uxdp_umem *umem = p->umem;
	uint32_t flags = p->retire_flags;
	struct uxdp_pool **pp;
	bool last;

	/* Entries consumed from the fill ring become visible as consumed. */
	uxdp_ring_cons_publish(&p->fq);
	pthread_mutex_lock(&umem->lock);
	for (pp = &umem->pools; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	umem->npools--;
	if (p->rings == &umem->rings)
		umem->rings_taken = false;	/* kept for the next pool */
	else
		pool_rings_free(&p->own_rings);
	/*
	 * A UMEM shared by several retiring pools goes with the last of
	 * them. Decided here, under the lock: the last pools may finish on
	 * different threads at once, and only one may destroy it.
	 */
	if (flags & UXDP_POOL_RETIRE_UMEM)
		umem->retire = true;
	last = umem->retire && !umem->npools;
	if (last)
		umem->retire = false;
	pthread_mutex_unlock(&umem->lock);
	pool_free_mem(p);
	if (last)
		uxdp_umem_destroy(umem);
}

UXDP_EXPORT __cold int uxdp_pool_destroy(struct uxdp_pool *p)
{
	uint64_t out;

	uxdp_clear_err();
	if (!p)
		return 0;
	if (p->retired)
		return uxdp_fail(EINVAL, "pool: retired; it frees itself");
	pool_drain_remote(p);
	out = pool_outstanding(p);
	if (out)
		return uxdp_fail(EBUSY,
				 "pool: %llu buffers still allocated; return "
				 "them first, or let uxdp_pool_retire() free "
				 "the pool when they come back",
				 (unsigned long long)out);
	pool_teardown(p);
	return 0;
}

UXDP_EXPORT __cold void uxdp_pool_retire(struct uxdp_pool *p, uint32_t flags)
{
	bool done;

	if (!p)
		return;
	uxdp_spin_lock(&p->remote.lock);
	/*
	 * From here on nobody owns the pool: every return goes through
	 * uxdp_pool_free_remote(), serialised by the lock, and the one that
	 * brings the last buffer home frees the pool. The owner's fields
	 * (free list, counters) are touched only under the lock from now on.
	 */
	__atomic_store_n(&p->owner, NULL, __ATOMIC_RELEASE);
	p->retired = true;
	p->retire_flags = flags;
	pool_drain_remote_locked(p);
	done = !pool_outstanding(p);
	uxdp_spin_unlock(&p->remote.lock);
	if (done)
		pool_teardown(p);
}

UXDP_EXPORT struct uxdp_umem *uxdp_pool_umem(const struct uxdp_pool *p)
{
	return p->umem;
}

UXDP_EXPORT void uxdp_pool_set_user(struct uxdp_pool *p, void *user)
{
	__atomic_store_n(&p->user, user, __ATOMIC_RELEASE);
}

UXDP_EXPORT void *uxdp_pool_user(const struct uxdp_pool *p)
{
	return __atomic_load_n(&p->user, __ATOMIC_ACQUIRE);
}

UXDP_EXPORT struct uxdp_ring *uxdp_pool_fill_ring(struct uxdp_pool *p)
{
	return &p->rings->fill;
}

UXDP_EXPORT struct uxdp_ring *uxdp_pool_comp_ring(struct uxdp_pool *p)
{
	return &p->rings->comp;
}

UXDP_EXPORT __cold int uxdp_pool_fill_range(struct uxdp_pool *p,
					    uint32_t first, uint32_t n)
{
	uxdp_clear_err();
	if (first > p->nheads || n > p->nheads - first)
		return uxdp_fail(EINVAL, "pool: chunks [%u, %u + %u) outside "
				 "the UMEM's %u", first, first, n, p->nheads);
	return pool_rings_post(&p->rings->fill, p->chunk_size, first, n);
}

UXDP_EXPORT void uxdp_pool_set_rxq(struct uxdp_pool *p,
				   struct uxdp_rxq_info *rxq)
{
	uint32_t i;

	for (i = 0; i < p->nheads; i++)
		p->heads[i].xdp.rxq = rxq;
}

/* ---- frees from other threads ---------------------------------------------- */

/*
 * Move buffers other threads returned onto the free list. Called with the
 * remote lock held, by the owner (pool_drain_remote) or, once the pool is
 * retired and has no owner, by whoever holds the lock. The lock's acquire
 * orders our reads of the stack after the pushers' writes.
 */
static void pool_drain_remote_locked(struct uxdp_pool *p)
{
	uint32_t i, n = p->remote.cnt;

	for (i = 0; i < n; i++) {
		struct uxdp_pool_buff *pb = p->remote.stack[i];
		uint32_t h = (uint32_t)(pb - p->heads);	/* checked at push */

		p->remote.pending[h] = 0;
		/* Freed by the owner or released since it was pushed? Then
		 * this push was the second return: counted, not repeated. */
		if (unlikely(!is_allocated(p, h))) {
			pstat_add(&p->n_bad_free, 1);
			continue;
		}
		p->dirty_top = dirty_add(p->dirty_top, p->fpos[h]);
		p->fpos[h] = p->free_list_cnt;
		p->free_list[p->free_list_cnt] = pb;
		set_free_cnt(p, p->free_list_cnt + 1);
		pstat_add(&p->n_freed, 1);
		pstat_add(&p->n_remote, 1);
	}
	if (dirty_below(p->dirty_top, p->free_list_cnt))
		p->dirty_top = 0;
	__atomic_store_n(&p->remote.cnt, 0, __ATOMIC_RELAXED);
	pstat_add(&p->n_bad_free, p->remote.bad);
	__atomic_store_n(&p->remote.bad, 0, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) void pool_drain_remote(struct uxdp_pool *p)
{
	uxdp_spin_lock(&p->remote.lock);
	pool_drain_remote_locked(p);
	uxdp_spin_unlock(&p->remote.lock);
}

/*
 * The owner takes back what other threads returned at the start of every
 * call that allocates, frees, releases or looks up a buffer (alloc,
 * alloc_batch, can_alloc, uxdp_buff_free, free_batch, release, buff_at),
 * whatever its arguments, and audit and destroy always drain. Such a call
 * sees every remote free made before it, so a remote free followed by a
 * local one (or a release) of the same buffer is caught as the double free
 * it is, whatever the timing. flush, complete, stats and the accessors look
 * at no buffer's state and leave the returns queued. A relaxed peek is
 * enough to see a push that happened before the call; one racing with it
 * is picked up next time, and the lock in the drain does the ordering.
 */
static inline void pool_sync_remote(struct uxdp_pool *p)
{
	if (unlikely(__atomic_load_n(&p->remote.cnt, __ATOMIC_RELAXED)))
		pool_drain_remote(p);
}

UXDP_EXPORT void uxdp_pool_free_remote(struct uxdp_pool *p,
				       struct uxdp_buff **bufs, uint32_t n)
{
	uint32_t i, cnt;
	bool done = false;

	uxdp_spin_lock(&p->remote.lock);
	cnt = p->remote.cnt;
	for (i = 0; i < n; i++) {
		uint64_t h = head_index(p, bufs[i]);

		/* Another pool's buffer, or one already on its way back:
		 * counted now, never queued, so the stack holds each head at
		 * most once and never overflows. Whether the buffer is still
		 * allocated is the owner's to check when it drains. */
		if (unlikely(h >= p->nheads || p->remote.pending[h])) {
			/* Relaxed atomic: uxdp_pool_stats() reads it unlocked. */
			__atomic_store_n(&p->remote.bad, p->remote.bad + 1,
					 __ATOMIC_RELAXED);
			continue;
		}
		p->remote.pending[h] = 1;
		p->remote.stack[cnt++] = to_pool_buff(bufs[i]);
	}
	__atomic_store_n(&p->remote.cnt, cnt, __ATOMIC_RELAXED);
	if (unlikely(p->retired)) {
		pool_drain_remote_locked(p);
		done = !pool_outstanding(p);
	}
	uxdp_spin_unlock(&p->remote.lock);
	if (unlikely(done))
		pool_teardown(p);
}

/*
 * Ownership moves between threads only at a handover point the caller
 * arranges (the old owner no longer allocates or frees); the field is
 * atomic so that others reading it during the move see one value or the
 * other, not a torn one.
 */
UXDP_EXPORT void uxdp_pool_set_owner(struct uxdp_pool *p)
{
	if (!p->retired)
		__atomic_store_n(&p->owner, uxdp_thread_id(),
				 __ATOMIC_RELEASE);
}

UXDP_EXPORT void uxdp_pool_disown(struct uxdp_pool *p)
{
	__atomic_store_n(&p->owner, NULL, __ATOMIC_RELEASE);
}

UXDP_EXPORT bool uxdp_pool_is_owner(const struct uxdp_pool *p)
{
	return __atomic_load_n(&p->owner, __ATOMIC_RELAXED) == uxdp_thread_id();
}

/* ---- allocation ------------------------------------------------------------ */

/*
 * The most recently freed buffers, the warmest in cache: the top @n of the
 * free list, in one copy (struct uxdp_buff is the first member of a head,
 * so the pointers are the same). Nothing is written per buffer: the heads'
 * positions now lie at or above the new count, which is what "allocated"
 * means (see on_free_list()).
 */
static inline uint32_t alloc_from_free_list(struct uxdp_pool *p,
					    struct uxdp_buff **bufs,
					    uint32_t max)
{
	uint32_t n = MIN(max, p->free_list_cnt);

	set_free_cnt(p, p->free_list_cnt - n);
	memcpy(bufs, &p->free_list[p->free_list_cnt], n * sizeof(*bufs));
	return n;
}

/*
 * Map up to @max fill-ring entries to heads. Every entry read is consumed,
 * valid or not; invalid and duplicate ones are counted and skipped (their
 * chunk stays with the application). As the kernel, one call reads at most
 * nheads entries. Returns the buffers produced.
 */
static uint32_t alloc_from_fq_aligned(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t max)
{
	uint32_t avail, idx, i, n = 0;
	/* Locals: the stores to fpos[] may alias anything, and would
	 * otherwise reload every one of these per buffer. */
	const uint64_t *ring = p->fq.ring, mask = p->chunk_mask;
	const uint64_t size = p->addrs_cnt;
	const uint32_t rmask = p->fq.mask, shift = p->chunk_shift;
	struct uxdp_pool_buff *heads = p->heads;
	uint32_t *fpos = p->fpos;
	uint64_t invalid = 0, dup = 0;

	if (max > p->nheads)
		max = p->nheads;
	avail = fq_avail(&p->fq, max);
	if (avail < max)
		max = avail;
	idx = p->fq.cached_cons;
	for (i = 0; i < max; i++) {
		uint64_t addr = ring[(idx + i) & rmask] & mask;
		uint32_t h;

		if (unlikely(addr >= size)) {
			invalid++;
			continue;
		}
		h = (uint32_t)(addr >> shift);
		/* Any state but the application's: the pool holds the chunk
		 * already (posted twice, or never given back). */
		if (unlikely(fpos[h] != FPOS_APP)) {
			dup++;
			continue;
		}
		fpos[h] = FPOS_HELD;
		bufs[n++] = &heads[h].xdp;
	}
	p->fq.cached_cons = idx + max;
	pstat_add(&p->n_fill_invalid, invalid);
	pstat_add(&p->n_fill_dup, dup);
	return n;
}

static inline bool unaligned_addr_ok(const struct uxdp_pool *p, uint64_t addr)
{
	/* One contiguous mapping: no page-contiguity check is needed. */
	return addr < p->addrs_cnt && addr + p->chunk_size <= p->addrs_cnt;
}

static inline struct uxdp_pool_buff *unaligned_take_head(struct uxdp_pool *p,
							 uint64_t addr)
{
	struct uxdp_pool_buff *pb = p->free_heads[--p->free_heads_cnt];
	uint32_t h = (uint32_t)(pb - p->heads);

	pb->xdp.data_hard_start = p->addrs + addr + p->headroom;
	p->fpos[h] = FPOS_HELD;
	/* Held buffers do not overlap and are at least 2 KiB long, so no two
	 * share a base >> 11: a direct map, for uxdp_pool_buff_at(). */
	p->by_base[addr >> UNALIGNED_BASE_SHIFT] = h + 1;
	return pb;
}

static uint32_t alloc_from_fq_unaligned(struct uxdp_pool *p,
					struct uxdp_buff **bufs, uint32_t max)
{
	uint32_t avail, idx, i, n = 0;

	if (max > p->free_heads_cnt)
		max = p->free_heads_cnt;
	avail = fq_avail(&p->fq, max);
	if (avail < max)
		max = avail;
	idx = p->fq.cached_cons;
	for (i = 0; i < max; i++) {
		/* The fill ring uses the base only; an offset is ignored. */
		uint64_t addr = *uxdp_ring_addr(&p->fq, idx + i) &
				UXDP_UNALIGNED_BUF_ADDR_MASK;

		if (unlikely(!unaligned_addr_ok(p, addr))) {
			pstat_add(&p->n_fill_invalid, 1);
			continue;
		}
		bufs[n++] = &unaligned_take_head(p, addr)->xdp;
	}
	p->fq.cached_cons = idx + max;
	return n;
}

UXDP_EXPORT uint32_t uxdp_pool_alloc_batch(struct uxdp_pool *p,
					   struct uxdp_buff **bufs, uint32_t max)
{
	uint32_t n1 = 0, n2;

	pool_sync_remote(p);
	if (p->free_list_cnt) {
		n1 = alloc_from_free_list(p, bufs, max);
		if (n1 == max)
			goto out;
		max -= n1;
		bufs += n1;
	}
	n2 = p->unaligned ? alloc_from_fq_unaligned(p, bufs, max) :
			    alloc_from_fq_aligned(p, bufs, max);
	/* As the kernel: counts attempts that got nothing from the fill
	 * ring, even when the free list gave some, and even for max == 0. */
	if (!n2)
		pstat_add(&p->n_fill_empty, 1);
	n1 += n2;
out:
	pstat_add(&p->n_alloc, n1);
	return n1;
}

/* One fill-ring entry to a head, the single-buffer way (__xp_alloc). */
static struct uxdp_pool_buff *alloc_one_from_fq(struct uxdp_pool *p)
{
	struct uxdp_ring *fq = &p->fq;

	if (p->unaligned && !p->free_heads_cnt)
		return NULL;
	for (;;) {
		uint64_t addr;

		if (fq->cached_prod == fq->cached_cons && !fq_avail(fq, 1)) {
			pstat_add(&p->n_fill_empty, 1);
			return NULL;
		}
		addr = *uxdp_ring_addr(fq, fq->cached_cons++);
		if (p->unaligned) {
			addr &= UXDP_UNALIGNED_BUF_ADDR_MASK;
			if (likely(unaligned_addr_ok(p, addr)))
				return unaligned_take_head(p, addr);
			pstat_add(&p->n_fill_invalid, 1);
		} else {
			uint32_t h;

			addr &= p->chunk_mask;
			if (unlikely(addr >= p->addrs_cnt)) {
				pstat_add(&p->n_fill_invalid, 1);
				continue;
			}
			h = (uint32_t)(addr >> p->chunk_shift);
			if (unlikely(p->fpos[h] != FPOS_APP)) {
				pstat_add(&p->n_fill_dup, 1);
				continue;
			}
			p->fpos[h] = FPOS_HELD;
			return &p->heads[h];
		}
	}
}

UXDP_EXPORT struct uxdp_buff *uxdp_pool_alloc(struct uxdp_pool *p)
{
	struct uxdp_pool_buff *pb;

	pool_sync_remote(p);
	if (p->free_list_cnt) {
		pb = p->free_list[p->free_list_cnt - 1];
		set_free_cnt(p, p->free_list_cnt - 1);
	} else {
		pb = alloc_one_from_fq(p);
		if (!pb)
			return NULL;
	}
	pstat_add(&p->n_alloc, 1);
	/* The single path sets the pointers, as xsk_buff_alloc does. */
	pb->xdp.data = (char *)pb->xdp.data_hard_start + UXDP_PACKET_HEADROOM;
	pb->xdp.data_meta = pb->xdp.data;
	pb->xdp.data_end = pb->xdp.data;
	pb->xdp.flags = 0;
	return &pb->xdp;
}

UXDP_EXPORT bool uxdp_pool_can_alloc(struct uxdp_pool *p, uint32_t n)
{
	uint32_t req, avail;

	pool_sync_remote(p);
	if (p->free_list_cnt >= n)
		return true;
	req = n - p->free_list_cnt;
	avail = fq_avail(&p->fq, req);
	if (!avail)
		pstat_add(&p->n_fill_empty, 1);
	/* Unaligned mode is also limited by unused heads (the kernel does not
	 * check this; it would fail the allocation later instead). */
	if (p->unaligned && avail > p->free_heads_cnt)
		avail = p->free_heads_cnt;
	return avail >= req;
}

UXDP_EXPORT void uxdp_pool_flush(struct uxdp_pool *p)
{
	uxdp_ring_cons_publish(&p->fq);			/* D, pairs with A */
}

/* ---- return paths ----------------------------------------------------------- */

/*
 * Whether @bufs are, pointer for pointer, the free-list slots from the count
 * up, those slots clean (see pool_internal.h). The cheap refusals inline,
 * before any call: slots that may be unclean, a first buffer that is not
 * the slot's (a batch that came back in another order). Then the last one,
 * and the rest with a memcmp, out of line.
 */
static __attribute__((noinline)) bool
batch_in_place_rest(struct uxdp_buff *const *bufs,
		    struct uxdp_pool_buff *const *slots, uint32_t n)
{
	return (void *)bufs[n - 1] == (void *)slots[n - 1] &&
	       !memcmp(bufs, slots, (size_t)n * sizeof(*slots));
}

static inline bool batch_in_place(const struct uxdp_pool *p,
				  struct uxdp_buff *const *bufs, uint32_t n,
				  uint64_t cnt)
{
	struct uxdp_pool_buff *const *fl = p->free_list;

	/* struct uxdp_buff is a head's first member: same pointers. */
	_Static_assert(offsetof(struct uxdp_pool_buff, xdp) == 0,
		       "free-list slots compare equal to buffer pointers");
	if (n > p->nheads - cnt || !dirty_below(p->dirty_top, cnt) ||
	    (void *)bufs[0] != (void *)fl[cnt])
		return false;
	return batch_in_place_rest(bufs, fl + cnt, n);
}

/* Buffer by buffer: what every free comes to when the batch is not back in
 * place as a whole. */
static inline __attribute__((always_inline)) void
free_each(struct uxdp_pool *p, struct uxdp_buff **bufs, uint32_t n)
{
	/* Locals: see alloc_from_fq_aligned(). */
	struct uxdp_pool_buff **fl = p->free_list;
	uint32_t *fpos = p->fpos;
	uintptr_t heads = (uintptr_t)p->heads;
	/* 64-bit count: it indexes without a zero-extension per buffer. */
	uint64_t cnt = p->free_list_cnt, bad = 0, nheads = p->nheads;
	uint32_t i, top0 = p->dirty_top, top = top0;

	/* Two per iteration: measured 7% fewer cycles per buffer than one
	 * (a 64-buffer drop cycle), the loop's own overhead halved. */
#pragma GCC unroll 2
	for (i = 0; i < n; i++) {
		struct uxdp_pool_buff *pb = to_pool_buff(bufs[i]);
		uint64_t off = (uint64_t)((uintptr_t)pb - heads);
		uint64_t h = (off >> 6) | (off << 58);	/* see head_index() */
		uint32_t pos;
		bool member;

		/* Another pool's buffer (or not a head at all). */
		if (unlikely(h >= nheads)) {
			bad++;
			continue;
		}
		/*
		 * Buffers usually come back in the order they left, each to
		 * the slot it was popped from: its recorded position is the
		 * count and the slot still holds it. Then it is allocated
		 * (not at a position below the count, not the application's)
		 * and taking it back is the count alone, no store at all.
		 */
		pos = fpos[h];
		if (likely(pos == cnt && fl[cnt] == pb)) {
			cnt++;
			continue;
		}
		/* Otherwise only an allocated buffer can be freed: not one on
		 * the free list already (a second free), not the
		 * application's (a free after release, or never allocated). */
		member = pos < cnt && fl[pos] == pb;
		if (unlikely(member || pos == FPOS_APP)) {
			bad++;
			continue;
		}
		/* It leaves the slot it was popped from. */
		top = dirty_add(top, pos);
		fpos[h] = (uint32_t)cnt;
		fl[cnt++] = pb;
	}
	/* Once the count has passed them, those slots are clean again (each
	 * was written by a push or checked in place); nothing is written
	 * when nothing changed, the usual case. */
	if (dirty_below(top, cnt))
		top = 0;
	if (top != top0)
		p->dirty_top = top;
	pstat_add(&p->n_freed, n - bad);
	pstat_add(&p->n_bad_free, bad);
	set_free_cnt(p, (uint32_t)cnt);
}

/* One buffer, the checks of free_each() without its loop. */
static inline void free_one(struct uxdp_pool *p, struct uxdp_pool_buff *pb)
{
	uint64_t cnt = p->free_list_cnt, h = head_index(p, pb);
	uint32_t pos, top;

	if (unlikely(h >= p->nheads))
		goto bad;
	pos = p->fpos[h];
	if (likely(pos == cnt && p->free_list[cnt] == pb))
		goto out;				/* in place */
	if (unlikely((pos < cnt && p->free_list[pos] == pb) ||
		     pos == FPOS_APP))
		goto bad;
	top = dirty_add(p->dirty_top, pos);
	if (top != p->dirty_top)
		p->dirty_top = top;
	p->fpos[h] = (uint32_t)cnt;
	p->free_list[cnt] = pb;
out:
	pstat_add(&p->n_freed, 1);
	set_free_cnt(p, (uint32_t)(cnt + 1));
	return;
bad:
	pstat_add(&p->n_bad_free, 1);
}

UXDP_EXPORT void uxdp_buff_free(struct uxdp_buff *buf)
{
	struct uxdp_pool_buff *pb = to_pool_buff(buf);
	struct uxdp_pool *p = pb->pool;

	if (unlikely(p->retired)) {
		uxdp_pool_free_remote(p, &buf, 1);
		return;
	}
	pool_sync_remote(p);
	free_one(p, pb);
}

UXDP_EXPORT void uxdp_pool_free_batch(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t n)
{
	if (unlikely(p->retired)) {
		/* Nobody owns a retired pool: the remote path's lock orders
		 * this return against the others. */
		uxdp_pool_free_remote(p, bufs, n);
		return;
	}
	pool_sync_remote(p);
	/*
	 * The common case whole: a batch (XDP_DROP's, a completion's) that
	 * comes back in the order it was popped, each buffer to its own clean
	 * slot. That proves every one ours, allocated and distinct; taking
	 * them back is the count alone (measured: a 64-buffer drop cycle,
	 * 1.9 -> 0.6 cycles per buffer). From 16 up, where a memcmp beats
	 * the loop.
	 */
	if (n >= 16 && batch_in_place(p, bufs, n, p->free_list_cnt)) {
		pstat_add(&p->n_freed, n);
		set_free_cnt(p, p->free_list_cnt + n);
		if (p->dirty_top)
			p->dirty_top = 0;	/* below the count already */
		return;
	}
	if (n == 1)
		free_one(p, to_pool_buff(bufs[0]));
	else
		free_each(p, bufs, n);
}

/* The descriptor address of a buffer's data (xp_get_handle). */
static inline uint64_t buff_handle(const struct uxdp_pool *p,
				   const struct uxdp_buff *buf)
{
	uint64_t addr = (uint64_t)((char *)buf->data - p->addrs), offset;

	if (!p->unaligned)
		return addr;
	/* Unaligned: chunk base in the low bits, data offset in the high. */
	offset = (uint64_t)((char *)buf->data - (char *)buf->data_hard_start) +
		 p->headroom;
	return (addr - offset) | (offset << UXDP_UNALIGNED_BUF_OFFSET_SHIFT);
}

/*
 * Hand head @pb to the application: the state change of a release, by the
 * owner, or under the remote lock once the pool is retired. Returns the
 * descriptor address, or UINT64_MAX (counted) if @pb is not allocated.
 */
static inline uint64_t release_head(struct uxdp_pool *p,
				    struct uxdp_pool_buff *pb)
{
	uint64_t h = head_index(p, pb), addr;

	if (unlikely(h >= p->nheads || !is_allocated(p, (uint32_t)h))) {
		pstat_add(&p->n_bad_free, 1);
		return UINT64_MAX;
	}
	p->dirty_top = dirty_add(p->dirty_top, p->fpos[h]);
	p->fpos[h] = FPOS_APP;
	pstat_add(&p->n_released, 1);
	addr = buff_handle(p, &pb->xdp);
	if (p->unaligned) {
		p->by_base[(addr & UXDP_UNALIGNED_BUF_ADDR_MASK) >>
			   UNALIGNED_BASE_SHIFT] = 0;
		p->free_heads[p->free_heads_cnt++] = pb;
	}
	return addr;
}

/*
 * A release after uxdp_pool_retire(): a return like the others. The chunk
 * goes to the application, so the pool no longer waits for it; taken under
 * the lock every return takes now, and the one that leaves nothing out
 * frees the pool (and maybe the UMEM: the address is computed before).
 */
static __attribute__((noinline)) uint64_t
pool_release_retired(struct uxdp_pool *p, struct uxdp_pool_buff *pb)
{
	uint64_t addr;
	bool done;

	uxdp_spin_lock(&p->remote.lock);
	addr = release_head(p, pb);
	done = addr != UINT64_MAX && !pool_outstanding(p);
	uxdp_spin_unlock(&p->remote.lock);
	if (done)
		pool_teardown(p);
	return addr;
}

UXDP_EXPORT uint64_t uxdp_pool_release(struct uxdp_buff *buf)
{
	struct uxdp_pool_buff *pb = to_pool_buff(buf);
	struct uxdp_pool *p = pb->pool;

	if (unlikely(p->retired))
		return pool_release_retired(p, pb);
	pool_sync_remote(p);
	return release_head(p, pb);
}

UXDP_EXPORT uint64_t uxdp_buff_umem_addr(const struct uxdp_buff *buf)
{
	return buff_handle(uxdp_buff_pool(buf), buf);
}

UXDP_EXPORT uint64_t uxdp_buff_chunk_addr(const struct uxdp_buff *buf)
{
	const struct uxdp_pool *p = uxdp_buff_pool(buf);

	return (uint64_t)((char *)buf->data_hard_start - p->addrs) -
	       p->headroom;
}

UXDP_EXPORT struct uxdp_buff *uxdp_pool_buff_at(struct uxdp_pool *p,
						uint64_t addr)
{
	uint64_t h;

	/* First, whatever @addr is: the same rule as every other call that
	 * looks at buffer state (see pool_sync_remote()). */
	pool_sync_remote(p);
	if (!p->unaligned) {
		addr &= p->chunk_mask;
		if (unlikely(addr >= p->addrs_cnt))
			return NULL;
		h = addr >> p->chunk_shift;
	} else {
		uint64_t base = addr & UXDP_UNALIGNED_BUF_ADDR_MASK;
		uint32_t k;

		if (unlikely(base >= p->addrs_cnt))
			return NULL;
		k = p->by_base[base >> UNALIGNED_BASE_SHIFT];
		if (!k)
			return NULL;
		h = k - 1;
		if (uxdp_buff_chunk_addr(&p->heads[h].xdp) != base)
			return NULL;
	}
	return is_allocated(p, (uint32_t)h) ? &p->heads[h].xdp : NULL;
}

UXDP_EXPORT uint32_t uxdp_pool_complete(struct uxdp_pool *p,
					const uint64_t *addrs, uint32_t n)
{
	uint32_t idx;

	n = uxdp_ring_prod_reserve_batch(&p->cq, n, &idx);
	uxdp_ring_prod_write_addrs(&p->cq, idx, addrs, n);
	uxdp_ring_prod_submit(&p->cq, n);
	pstat_add(&p->n_completed, n);
	return n;
}

/* ---- stats and audit ---------------------------------------------------------- */

UXDP_EXPORT int uxdp_pool_stats(const struct uxdp_pool *p,
				struct uxdp_pool_stats *st)
{
	if (!p || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->alloc = pstat_read(&p->n_alloc);
	st->freed = pstat_read(&p->n_freed);
	st->released = pstat_read(&p->n_released);
	st->completed = pstat_read(&p->n_completed);
	st->fill_empty = pstat_read(&p->n_fill_empty);
	st->fill_invalid = pstat_read(&p->n_fill_invalid);
	st->fill_dup = pstat_read(&p->n_fill_dup);
	/* Remote double frees count from the moment they are caught. */
	st->remote_freed = pstat_read(&p->n_remote);
	st->bad_free = pstat_read(&p->n_bad_free) +
		       __atomic_load_n(&p->remote.bad, __ATOMIC_RELAXED);
	st->free_list = __atomic_load_n(&p->free_list_cnt, __ATOMIC_RELAXED);
	st->remote_pending = __atomic_load_n(&p->remote.cnt, __ATOMIC_RELAXED);
	st->outstanding = (uint32_t)(st->alloc - st->freed - st->released);
	return 0;
}

/* Chunk index of an address, or -1 if it names no whole chunk. */
static int64_t audit_chunk(const struct uxdp_pool *p, uint64_t addr)
{
	if (p->unaligned) {
		addr &= UXDP_UNALIGNED_BUF_ADDR_MASK;
		if (addr % p->chunk_size || addr >= p->addrs_cnt)
			return -1;
	} else {
		addr &= p->chunk_mask;
		if (addr >= p->addrs_cnt)
			return -1;
	}
	return (int64_t)(addr / p->chunk_size);
}

static int audit_mark(const struct uxdp_pool *p, uint8_t *where,
		      uint64_t addr, uint8_t loc)
{
	int64_t c = audit_chunk(p, addr);

	if (c < 0 || c >= p->umem->nchunks)
		return 0;
	if (where[c] & loc)
		where[c] |= UXDP_LOC_DUP;
	where[c] |= loc;
	return 1;
}

/*
 * Entries between @from and the other side's index @to, clamped to the
 * ring: the application writes the fill producer and the completion
 * consumer, and the audit must not walk 2^32 slots because of it.
 */
static uint32_t audit_span(const struct uxdp_ring *r, uint32_t from,
			   uint32_t to)
{
	return to - from > r->size ? r->size : to - from;
}

/* The audit of one pool, OR-ed into @where (a chunk seen twice: DUP). */
static int pool_audit_into(struct uxdp_pool *p, uint8_t *where)
{
	uint32_t i, n, from;
	int total = 0;

	pool_drain_remote(p);

	/* Fill ring: what the pool has not consumed yet. */
	from = p->fq.cached_cons;
	n = audit_span(&p->fq, from, uxdp_load_acquire(p->fq.producer));
	for (i = 0; i < n; i++)
		total += audit_mark(p, where, *uxdp_ring_addr(&p->fq, from + i),
				    UXDP_LOC_FILL);

	/* Completion ring: posted, not yet released by the application. */
	from = uxdp_load_acquire(p->cq.consumer);
	n = audit_span(&p->cq, from, uxdp_load_acquire(p->cq.producer));
	for (i = 0; i < n; i++)
		total += audit_mark(p, where, *uxdp_ring_addr(&p->cq, from + i),
				    UXDP_LOC_COMP);

	/* Heads the pool holds: allocated, or on the free list. */
	for (i = 0; i < p->nheads; i++) {
		const struct uxdp_pool_buff *pb = &p->heads[i];
		uint32_t pos = p->fpos[i];
		uint64_t base;

		if (pos == FPOS_APP)
			continue;
		base = (uint64_t)((char *)pb->xdp.data_hard_start - p->addrs) -
		       p->headroom;
		total += audit_mark(p, where, base,
				    on_free_list(p, i, pos, p->free_list_cnt) ?
				    UXDP_LOC_FREE_LIST : UXDP_LOC_DRIVER);
	}
	return total;
}

UXDP_EXPORT int uxdp_pool_audit(struct uxdp_pool *p, uint8_t *where)
{
	if (!p || !where)
		return -EINVAL;
	memset(where, 0, p->umem->nchunks);
	return pool_audit_into(p, where);
}

UXDP_EXPORT int uxdp_umem_audit(struct uxdp_umem *umem, uint8_t *where)
{
	uint8_t *one;
	struct uxdp_pool *p;
	uint32_t i;
	int total = 0;

	if (!umem || !where)
		return -EINVAL;
	one = malloc(umem->nchunks ? umem->nchunks : 1);
	if (!one)
		return -ENOMEM;
	memset(where, 0, umem->nchunks);
	/* Each pool's places, merged: a chunk two pools hold (posted to two
	 * fill rings, which the kernel allows too) shows up as DUP. */
	pthread_mutex_lock(&umem->lock);
	for (p = umem->pools; p; p = p->next) {
		memset(one, 0, umem->nchunks);
		total += pool_audit_into(p, one);
		for (i = 0; i < umem->nchunks; i++) {
			if (where[i] && one[i])
				where[i] |= UXDP_LOC_DUP;
			where[i] |= one[i];
		}
	}
	pthread_mutex_unlock(&umem->lock);
	free(one);
	return total;
}
