/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The buffer pool: batched and single allocation from the fill ring, the
 * free list, release to the application, and accounting.
 *
 * Each head carries a state byte (enum buf_state) in a dense array beside
 * the heads. It is what makes double frees and duplicate fill addresses
 * harmless, and what the audit counts. It costs one byte store per
 * allocation into an array 1/64th the size of the heads; the heads
 * themselves are still not written on the aligned allocation path.
 */
#include "../internal.h"

#include "pool_internal.h"

static inline uint32_t head_idx(const struct uxdp_pool *p,
				const struct uxdp_pool_buff *pb)
{
	return (uint32_t)(pb - p->heads);
}

static inline struct uxdp_pool_buff *to_pool_buff(struct uxdp_buff *b)
{
	return (struct uxdp_pool_buff *)b;
}

static void pool_drain_remote(struct uxdp_pool *p);

/*
 * Fill-ring entries available, refreshing the cached producer only when the
 * cache holds fewer than @want. On a refresh, first publish what we have
 * consumed so the application can post into those slots again (the kernel's
 * single-peek path does the same).
 */
static inline uint32_t fq_avail(struct uxdp_ring *fq, uint32_t want)
{
	uint32_t avail = fq->cached_prod - fq->cached_cons;

	if (avail >= want)
		return avail;
	uxdp_ring_cons_publish(fq);			/* D, pairs with A */
	fq->cached_prod = uxdp_load_acquire(fq->producer);	/* C, pairs with B */
	return fq->cached_prod - fq->cached_cons;
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
	if (umem->pool) {
		err = uxdp_fail(EBUSY, "pool: the umem already has a pool");
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
	p->state = calloc(p->nheads, 1);
	p->free_list = calloc(p->nheads, sizeof(*p->free_list));
	p->remote.stack = calloc(p->nheads, sizeof(*p->remote.stack));
	if (!p->state || !p->free_list || !p->remote.stack)
		goto err_arrays;
	if (p->unaligned) {
		p->free_heads = calloc(p->nheads, sizeof(*p->free_heads));
		if (!p->free_heads)
			goto err_arrays;
	}
	pool_init_heads(p);
	p->owner = uxdp_thread_id();

	/* The pool is the fill ring's consumer and the completion ring's
	 * producer; the application holds the other ends in the umem. */
	uxdp_ring_init_cons(&p->fq, umem->fill_mem, umem->fill_size, NULL);
	uxdp_ring_init_prod(&p->cq, umem->comp_mem, umem->comp_size, NULL);
	umem->pool = p;
	uxdp_clear_err();
	return p;

err_arrays:
	free(p->remote.stack);
	free(p->free_heads);
	free(p->free_list);
	free(p->state);
	free(p->heads);
err_pool:
	free(p);
err:
	errno = -err;
	return NULL;
}

UXDP_EXPORT __cold int uxdp_pool_destroy(struct uxdp_pool *p)
{
	uint64_t out;

	uxdp_clear_err();
	if (!p)
		return 0;
	pool_drain_remote(p);
	out = p->n_alloc - p->n_freed - p->n_released;
	if (out)
		return uxdp_fail(EBUSY,
				 "pool: %llu buffers still allocated; free or "
				 "release them first",
				 (unsigned long long)out);
	/* Entries consumed from the fill ring become visible as consumed. */
	uxdp_ring_cons_publish(&p->fq);
	p->umem->pool = NULL;
	free(p->remote.stack);
	free(p->free_heads);
	free(p->free_list);
	free(p->state);
	free(p->heads);
	free(p);
	return 0;
}

UXDP_EXPORT struct uxdp_umem *uxdp_pool_umem(const struct uxdp_pool *p)
{
	return p->umem;
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
 * Move buffers other threads returned onto the free list. Owner only. The
 * lock's acquire orders our reads of the stack after the pushers' writes.
 */
static __attribute__((noinline)) void pool_drain_remote(struct uxdp_pool *p)
{
	uint32_t i, n;

	uxdp_spin_lock(&p->remote.lock);
	n = p->remote.cnt;
	for (i = 0; i < n; i++) {
		struct uxdp_pool_buff *pb = p->remote.stack[i];
		uint32_t h = head_idx(p, pb);

		if (unlikely(p->state[h] != BUF_DRIVER)) {
			p->n_bad_free++;
			continue;
		}
		p->state[h] = BUF_FREE;
		p->free_list[p->free_list_cnt++] = pb;
		p->n_freed++;
	}
	__atomic_store_n(&p->remote.cnt, 0, __ATOMIC_RELAXED);
	p->n_bad_free += p->remote.overflow;
	p->remote.overflow = 0;
	uxdp_spin_unlock(&p->remote.lock);
}

/*
 * Cheap check on the allocation path: a relaxed peek at the count is only a
 * hint (a push racing with it is picked up next time); the lock in
 * pool_drain_remote() does the ordering.
 */
static inline void pool_maybe_drain_remote(struct uxdp_pool *p)
{
	if (unlikely(__atomic_load_n(&p->remote.cnt, __ATOMIC_RELAXED)))
		pool_drain_remote(p);
}

UXDP_EXPORT void uxdp_pool_free_remote(struct uxdp_pool *p,
				       struct uxdp_buff **bufs, uint32_t n)
{
	uint32_t i, cnt;

	uxdp_spin_lock(&p->remote.lock);
	cnt = p->remote.cnt;
	for (i = 0; i < n; i++) {
		/* Each head can be here at most once unless it is freed
		 * twice; the drain counts those, this bounds them. */
		if (unlikely(cnt == p->nheads)) {
			p->remote.overflow += n - i;
			break;
		}
		p->remote.stack[cnt++] = to_pool_buff(bufs[i]);
	}
	__atomic_store_n(&p->remote.cnt, cnt, __ATOMIC_RELAXED);
	uxdp_spin_unlock(&p->remote.lock);
}

/*
 * Ownership moves between threads only at a handover point the caller
 * arranges (the old owner no longer allocates or frees); the field is
 * atomic so that others reading it during the move see one value or the
 * other, not a torn one.
 */
UXDP_EXPORT void uxdp_pool_set_owner(struct uxdp_pool *p)
{
	__atomic_store_n(&p->owner, uxdp_thread_id(), __ATOMIC_RELEASE);
}

UXDP_EXPORT bool uxdp_pool_is_owner(const struct uxdp_pool *p)
{
	return __atomic_load_n(&p->owner, __ATOMIC_RELAXED) == uxdp_thread_id();
}

/* ---- allocation ------------------------------------------------------------ */

static inline uint32_t alloc_from_free_list(struct uxdp_pool *p,
					    struct uxdp_buff **bufs,
					    uint32_t max)
{
	struct uxdp_pool_buff **fl = p->free_list, *heads = p->heads;
	uint32_t cnt = p->free_list_cnt, n = MIN(max, cnt), i;
	uint8_t *state = p->state;

	/*
	 * LIFO: the most recently freed buffer is the warmest in cache. The
	 * fields live in locals: the byte stores to state[] may alias
	 * anything, and would otherwise reload every one of them per buffer.
	 */
	for (i = 0; i < n; i++) {
		struct uxdp_pool_buff *pb = fl[--cnt];

		state[pb - heads] = BUF_DRIVER;
		bufs[i] = &pb->xdp;
	}
	p->free_list_cnt = cnt;
	return n;
}

/*
 * Map up to @max fill-ring entries to heads. Every entry read is consumed,
 * valid or not; invalid and duplicate ones are counted and skipped (their
 * chunk stays with the application). Returns the buffers produced.
 */
static uint32_t alloc_from_fq_aligned(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t max)
{
	uint32_t avail = fq_avail(&p->fq, max);
	uint32_t idx = p->fq.cached_cons, i, n = 0;
	/* Locals: see alloc_from_free_list(). */
	const uint64_t *ring = p->fq.ring, mask = p->chunk_mask;
	const uint64_t size = p->addrs_cnt;
	const uint32_t rmask = p->fq.mask, shift = p->chunk_shift;
	struct uxdp_pool_buff *heads = p->heads;
	uint8_t *state = p->state;
	uint64_t invalid = 0, dup = 0;

	if (avail < max)
		max = avail;
	for (i = 0; i < max; i++) {
		uint64_t addr = ring[(idx + i) & rmask] & mask;
		uint32_t h;

		if (unlikely(addr >= size)) {
			invalid++;
			continue;
		}
		h = (uint32_t)(addr >> shift);
		if (unlikely(state[h] != BUF_APP)) {
			dup++;
			continue;
		}
		state[h] = BUF_DRIVER;
		bufs[n++] = &heads[h].xdp;
	}
	p->fq.cached_cons = idx + max;
	p->n_fill_invalid += invalid;
	p->n_fill_dup += dup;
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

	pb->xdp.data_hard_start = p->addrs + addr + p->headroom;
	p->state[head_idx(p, pb)] = BUF_DRIVER;
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
			p->n_fill_invalid++;
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

	if (!p->free_list_cnt)
		pool_maybe_drain_remote(p);
	if (unlikely(p->free_list_cnt)) {
		n1 = alloc_from_free_list(p, bufs, max);
		if (n1 == max)
			goto out;
		max -= n1;
		bufs += n1;
	}
	n2 = p->unaligned ? alloc_from_fq_unaligned(p, bufs, max) :
			    alloc_from_fq_aligned(p, bufs, max);
	if (!n2)
		p->n_fill_empty++;
	n1 += n2;
out:
	p->n_alloc += n1;
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
			p->n_fill_empty++;
			return NULL;
		}
		addr = *uxdp_ring_addr(fq, fq->cached_cons++);
		if (p->unaligned) {
			addr &= UXDP_UNALIGNED_BUF_ADDR_MASK;
			if (likely(unaligned_addr_ok(p, addr)))
				return unaligned_take_head(p, addr);
			p->n_fill_invalid++;
		} else {
			uint32_t h;

			addr &= p->chunk_mask;
			if (unlikely(addr >= p->addrs_cnt)) {
				p->n_fill_invalid++;
				continue;
			}
			h = (uint32_t)(addr >> p->chunk_shift);
			if (unlikely(p->state[h] != BUF_APP)) {
				p->n_fill_dup++;
				continue;
			}
			p->state[h] = BUF_DRIVER;
			return &p->heads[h];
		}
	}
}

UXDP_EXPORT struct uxdp_buff *uxdp_pool_alloc(struct uxdp_pool *p)
{
	struct uxdp_pool_buff *pb;

	if (!p->free_list_cnt)
		pool_maybe_drain_remote(p);
	if (p->free_list_cnt) {
		pb = p->free_list[--p->free_list_cnt];
		p->state[head_idx(p, pb)] = BUF_DRIVER;
	} else {
		pb = alloc_one_from_fq(p);
		if (!pb)
			return NULL;
	}
	p->n_alloc++;
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

	if (p->free_list_cnt < n)
		pool_maybe_drain_remote(p);
	if (p->free_list_cnt >= n)
		return true;
	req = n - p->free_list_cnt;
	avail = fq_avail(&p->fq, req);
	if (!avail)
		p->n_fill_empty++;
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

static inline bool take_allocated(struct uxdp_pool *p, uint32_t h)
{
	if (unlikely(p->state[h] != BUF_DRIVER)) {
		p->n_bad_free++;
		return false;
	}
	return true;
}

UXDP_EXPORT void uxdp_buff_free(struct uxdp_buff *buf)
{
	struct uxdp_pool_buff *pb = to_pool_buff(buf);

	uxdp_pool_free_batch(pb->pool, &buf, 1);
}

UXDP_EXPORT void uxdp_pool_free_batch(struct uxdp_pool *p,
				      struct uxdp_buff **bufs, uint32_t n)
{
	/* Locals: see alloc_from_free_list(). */
	struct uxdp_pool_buff **fl = p->free_list;
	uintptr_t heads = (uintptr_t)p->heads;
	uint32_t cnt = p->free_list_cnt, i, freed = 0, nheads = p->nheads;
	uint8_t *state = p->state;

	for (i = 0; i < n; i++) {
		struct uxdp_pool_buff *pb = to_pool_buff(bufs[i]);
		uint64_t h = ((uintptr_t)pb - heads) / sizeof(*pb);

		/* Only an allocated buffer of this pool can be freed: another
		 * pool's buffer, a second free or a free after release is
		 * counted and ignored. The free list cannot overflow: each
		 * head is on it at most once. */
		if (unlikely(h >= nheads || state[h] != BUF_DRIVER)) {
			p->n_bad_free++;
			continue;
		}
		state[h] = BUF_FREE;
		fl[cnt++] = pb;
		freed++;
	}
	p->free_list_cnt = cnt;
	p->n_freed += freed;
}

UXDP_EXPORT uint64_t uxdp_pool_release(struct uxdp_buff *buf)
{
	struct uxdp_pool_buff *pb = to_pool_buff(buf);
	struct uxdp_pool *p = pb->pool;
	uint32_t h = head_idx(p, pb);
	uint64_t addr, offset;

	if (!take_allocated(p, h))
		return UINT64_MAX;
	p->state[h] = BUF_APP;
	p->n_released++;
	addr = (uint64_t)((char *)buf->data - p->addrs);
	if (!p->unaligned)
		return addr;
	/* Unaligned: chunk base in the low bits, data offset in the high. */
	offset = (uint64_t)((char *)buf->data - (char *)buf->data_hard_start) +
		 p->headroom;
	p->free_heads[p->free_heads_cnt++] = pb;
	return (addr - offset) | (offset << UXDP_UNALIGNED_BUF_OFFSET_SHIFT);
}

UXDP_EXPORT uint32_t uxdp_pool_complete(struct uxdp_pool *p,
					const uint64_t *addrs, uint32_t n)
{
	uint32_t idx, i;

	n = uxdp_ring_prod_reserve_batch(&p->cq, n, &idx);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(&p->cq, idx + i) = addrs[i];
	uxdp_ring_prod_submit(&p->cq, n);
	p->n_completed += n;
	return n;
}

/* ---- stats and audit ---------------------------------------------------------- */

UXDP_EXPORT int uxdp_pool_stats(const struct uxdp_pool *p,
				struct uxdp_pool_stats *st)
{
	if (!p || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->alloc = p->n_alloc;
	st->freed = p->n_freed;
	st->released = p->n_released;
	st->completed = p->n_completed;
	st->fill_empty = p->n_fill_empty;
	st->fill_invalid = p->n_fill_invalid;
	st->fill_dup = p->n_fill_dup;
	st->bad_free = p->n_bad_free;
	st->free_list = p->free_list_cnt;
	st->remote_pending = __atomic_load_n(&p->remote.cnt, __ATOMIC_RELAXED);
	st->outstanding = (uint32_t)(p->n_alloc - p->n_freed - p->n_released);
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

UXDP_EXPORT int uxdp_pool_audit(struct uxdp_pool *p, uint8_t *where)
{
	uint32_t i, prod, cons;
	int total = 0;

	if (!p || !where)
		return -EINVAL;
	pool_drain_remote(p);
	memset(where, 0, p->umem->nchunks);

	/* Fill ring: what the pool has not consumed yet. */
	prod = uxdp_load_acquire(p->fq.producer);
	for (i = p->fq.cached_cons; i != prod; i++)
		total += audit_mark(p, where, *uxdp_ring_addr(&p->fq, i),
				    UXDP_LOC_FILL);

	/* Completion ring: posted, not yet released by the application. */
	cons = uxdp_load_acquire(p->cq.consumer);
	prod = uxdp_load_acquire(p->cq.producer);
	for (i = cons; i != prod; i++)
		total += audit_mark(p, where, *uxdp_ring_addr(&p->cq, i),
				    UXDP_LOC_COMP);

	/* Heads the pool holds: allocated, or on the free list. */
	for (i = 0; i < p->nheads; i++) {
		const struct uxdp_pool_buff *pb = &p->heads[i];
		uint64_t base;

		if (p->state[i] == BUF_APP)
			continue;
		base = (uint64_t)((char *)pb->xdp.data_hard_start - p->addrs) -
		       p->headroom;
		total += audit_mark(p, where, base,
				    p->state[i] == BUF_FREE ?
				    UXDP_LOC_FREE_LIST : UXDP_LOC_DRIVER);
	}
	return total;
}
