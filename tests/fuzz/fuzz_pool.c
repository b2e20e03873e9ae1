/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_pool: operation sequences on two UMEM + pool pairs (aligned or
 * unaligned, 1..64 chunks of 2048 or 4096 bytes, any headroom), against a
 * reference model of where every buffer is.
 *
 * The script posts addresses to the fill ring (the application's chunks,
 * chunks the pool holds, out-of-range and unaligned addresses), allocates
 * one at a time and in batches (0..70), sets sizes, frees through every path
 * (uxdp_buff_free, uxdp_pool_free_batch, uxdp_pool_free_remote from the same
 * thread), releases, completes, reads the completion ring, asks
 * uxdp_pool_can_alloc, looks buffers up by address (uxdp_pool_buff_at),
 * flushes, audits, retires a pool (with or without its UMEM) and goes on
 * returning its buffers by every path, and makes deliberately bad calls:
 * double frees through every pair of paths, frees after release, and
 * freeing one pool's buffer through the other pool's free paths.
 *
 * Semantics checked (pool.h's, as fixed for remote and foreign frees):
 *  - a buffer is freed or released only while allocated; any other free or
 *    release is ignored and counted in bad_free. A remote free marks the
 *    buffer returned at once: a second return of it, by any path, is bad
 *    and is counted at once, and so is another pool's buffer, through every
 *    path. A remote free of a buffer that is on the free list or the
 *    application's is counted when the pool takes its remote returns back
 *    (the remote side cannot read the owner's state), and not before;
 *  - the pool takes remote returns back at the start of every owner call
 *    that allocates, frees, releases or looks up a buffer (alloc,
 *    alloc_batch, can_alloc, free, free_batch, release, buff_at) and in
 *    audit and destroy, and in no other call (post, complete, flush, stats
 *    leave remote_pending as it was);
 *  - uxdp_pool_buff_at() gives the allocated buffer an address names
 *    (aligned: any address in its chunk), NULL for anything else;
 *  - a retired pool takes every return (any path, release included) under
 *    its lock, counting bad ones at the call, and is gone once no buffer
 *    is out, in the call that brought the last one home: then, without
 *    UXDP_POOL_RETIRE_UMEM, its UMEM has no pool and uxdp_umem_destroy()
 *    succeeds; with it, the UMEM went too (LeakSanitizer checks both
 *    went). Until then uxdp_umem_destroy() is -EBUSY;
 *  - allocation takes the free list first, then reads fill entries in
 *    order, never more than it still needs buffers (unaligned: unused
 *    heads) and at least one when it needs any and there are some; it skips
 *    and counts out-of-range ones (fill_invalid) and, aligned, ones naming
 *    a chunk the pool holds (fill_dup). How many it read is seen through
 *    uxdp_pool_flush() and the fill ring's free slots;
 *  - the pool never hands out a buffer (or, aligned, a chunk) it has handed
 *    out and not got back; every buffer has the right address, frame_sz and
 *    pool; release gives the documented address;
 *  - the counters (alloc, freed, released, completed, fill_invalid,
 *    fill_dup, bad_free, free_list, remote_pending, outstanding) equal the
 *    model's after every step;
 *  - uxdp_pool_audit() places every chunk where the model says (checked after
 *    every step with no remote returns waiting, since the audit takes them
 *    back, and on request); with the application's chunks added, each
 *    chunk is in exactly one place whenever the script has not posted
 *    duplicates;
 *  - uxdp_pool_destroy() is -EBUSY while buffers are out, and at the end,
 *    with everything freed, it and uxdp_umem_destroy() return 0 (a retired
 *    pool's buffers are freed until it is gone).
 *
 * Input (zeros past the end): per pool, u8 mode (bit 0 unaligned, bit 1
 * chunk 4096, bit 2 extra bytes past the last chunk when unaligned), u8
 * chunks (% 64 + 1), u8 headroom shape, u16 headroom, u8 ring sizes
 * (log2 fill % 8 | log2 comp % 8 << 3); then operations: u8 opcode (bit 7
 * picks the pool) and its arguments (see run_op()).
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

#define MAX_CHUNKS	64
#define FIFO_LEN	256	/* > the largest ring (128 entries) */
#define MAX_BATCH	70
#define NPOOLS		2

enum hst {
	H_APP,		/* not the pool's (unaligned: an unused head) */
	H_ALLOC,	/* handed out */
	H_FREE,		/* on the free list */
	H_PENDING,	/* freed remotely, not yet on the free list */
};

struct head {
	struct uxdp_buff *b;
	uint64_t base;		/* chunk base (offset in the area) */
	uint8_t st;
	/* Freed remotely while not allocated: on the pool's remote stack,
	 * counted in bad_free when the pool takes it back. */
	bool qbad;
};

struct fifo {
	uint64_t e[FIFO_LEN];
	uint32_t head, len;
};

struct mp {
	int id;
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	char *area;
	uint64_t size;
	uint32_t chunk, headroom, nchunks, fill_size, comp_size;
	bool unaligned;
	struct uxdp_ring *fill, *comp;	/* the application's ends */
	struct fifo fq;		/* posted, not consumed by the pool */
	struct fifo cq;		/* completed, not read back */
	uint32_t posted;	/* fill entries the application submitted */
	uint32_t consumed;	/* ... and the pool consumed */
	struct head heads[MAX_CHUNKS];
	uint32_t nknown;
	/* uxdp_pool_retire() was called (with UXDP_POOL_RETIRE_UMEM:
	 * retire_umem); gone: the pool freed itself (pool, and with
	 * retire_umem umem, are NULL then). */
	bool retired, retire_umem, gone;
	struct uxdp_pool_stats m;	/* the model's counters */
	/* The last alloc_batch's buffers, in order: returned as they left,
	 * they take uxdp_pool_free_batch's in-place path. */
	struct uxdp_buff *last[MAX_BATCH];
	uint32_t nlast;
};

static struct mp pools[NPOOLS];
/*
 * UXDP_FUZZ_POOL_LAX=1: check only what holds whatever the counters say:
 * no buffer handed out while the script holds it, buffers inside the area,
 * destroy succeeding at the end, and the sanitizers. For seeing where a
 * model mismatch leads (a buffer handed out twice, a crash).
 */
static bool lax;

/* ---- small helpers ------------------------------------------------------- */

static void fifo_push(struct fifo *q, uint64_t v)
{
	FZ_CHECK(q->len < FIFO_LEN, "model fifo overflow");
	q->e[(q->head + q->len++) % FIFO_LEN] = v;
}

static uint64_t fifo_pop(struct fifo *q)
{
	uint64_t v = q->e[q->head];

	q->head = (q->head + 1) % FIFO_LEN;
	q->len--;
	return v;
}

static uint64_t fifo_at(const struct fifo *q, uint32_t i)
{
	return q->e[(q->head + i) % FIFO_LEN];
}

static struct head *head_of(struct mp *p, const struct uxdp_buff *b)
{
	uint32_t i;

	for (i = 0; i < p->nknown; i++)
		if (p->heads[i].b == b)
			return &p->heads[i];
	return NULL;
}

/* The pool that handed @b out, and its record of it. */
static struct mp *owner_of(const struct uxdp_buff *b, struct head **h)
{
	int i;

	for (i = 0; i < NPOOLS; i++) {
		*h = head_of(&pools[i], b);
		if (*h)
			return &pools[i];
	}
	FZ_CHECK(0, "harness: unknown buffer %p", (const void *)b);
	return NULL;
}

static uint32_t count_st(const struct mp *p, enum hst st)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->nknown; i++)
		n += p->heads[i].st == st;
	return n;
}

static bool held(uint8_t st)
{
	return st != H_APP;
}

/* Aligned: whether the pool holds the chunk at @base. */
static bool chunk_held(const struct mp *p, uint64_t base)
{
	uint32_t i;

	for (i = 0; i < p->nknown; i++)
		if (p->heads[i].base == base && held(p->heads[i].st))
			return true;
	return false;
}

/* Unaligned: heads not in use, which limits fill-ring allocation. */
static uint32_t unused_heads(const struct mp *p)
{
	uint32_t i, n = p->nchunks;

	for (i = 0; i < p->nknown; i++)
		n -= held(p->heads[i].st);
	return n;
}

/* Remote frees of buffers that were not allocated, waiting. */
static uint32_t count_qbad(const struct mp *p)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->nknown; i++)
		n += p->heads[i].qbad;
	return n;
}

/* The pool processes its remote returns: valid ones join the free list,
 * the others are counted. */
static void drain(struct mp *p)
{
	uint32_t i;

	for (i = 0; i < p->nknown; i++) {
		if (p->heads[i].st == H_PENDING) {
			p->heads[i].st = H_FREE;
			p->m.freed++;
		}
		if (p->heads[i].qbad) {
			p->heads[i].qbad = false;
			p->m.bad_free++;
		}
	}
}

/* Whether remote returns wait to be processed. */
static bool queued(const struct mp *p)
{
	return count_st(p, H_PENDING) || count_qbad(p);
}

/*
 * After an owner call that takes the remote returns back first (pool.h:
 * every call that allocates, frees, releases or looks up a buffer): none
 * may be left, and the model takes them back too, before the call's own
 * effect. In lax mode, whatever the pool did.
 */
static void drained(struct mp *p)
{
	struct uxdp_pool_stats st;

	if (!queued(p))
		return;
	FZ_CHECK(!uxdp_pool_stats(p->pool, &st), "pool_stats");
	if (st.remote_pending) {
		FZ_CHECK(lax, "pool %d: a call that takes remote returns back "
			 "left %u waiting", p->id, st.remote_pending);
		return;
	}
	drain(p);
}

/*
 * A retired pool with no buffer out is gone, freed in the call that
 * brought the last one home. Without UXDP_POOL_RETIRE_UMEM its UMEM has no
 * pool now: the harness destroys it, which says whether the pool let go.
 */
static void check_gone(struct mp *p)
{
	int rc;

	if (!p->retired || p->gone || count_st(p, H_ALLOC) ||
	    count_st(p, H_PENDING))
		return;
	p->gone = true;
	p->pool = NULL;
	if (!p->retire_umem) {
		rc = uxdp_umem_destroy(p->umem);
		FZ_CHECK(rc == 0, "pool %d: retired, every buffer back, and "
			 "its UMEM still has a pool (%d: %s)", p->id, rc,
			 uxdp_errmsg());
	}
	p->umem = NULL;
}

/* After a return to @p: a retired pool took it, and any other waiting,
 * under its lock, and may have gone with it. */
static void returned(struct mp *p)
{
	if (!p->retired || p->gone)
		return;
	drain(p);
	check_gone(p);
}

/*
 * Fill entries the pool consumed since the last look: flush makes its
 * consumer index visible, and the application's free-slot count shows it.
 */
static uint32_t fill_consumed(struct mp *p)
{
	uint32_t free_slots, cons, n;

	uxdp_pool_flush(p->pool);
	free_slots = uxdp_ring_prod_nb_free(p->fill, UINT32_MAX);
	cons = p->posted - (p->fill_size - free_slots);
	n = cons - p->consumed;
	FZ_CHECK(n <= p->fq.len, "pool %d: consumed %u fill entries, %u were "
		 "posted", p->id, n, p->fq.len);
	p->consumed = cons;
	return n;
}

/* Chunk index the audit gives an address, or -1 (see uxdp_pool_audit). */
static int audit_chunk(const struct mp *p, uint64_t addr)
{
	if (p->unaligned) {
		addr &= UXDP_UNALIGNED_BUF_ADDR_MASK;
		if (addr % p->chunk || addr >= p->size)
			return -1;
	} else {
		addr &= ~((uint64_t)p->chunk - 1);
		if (addr >= p->size)
			return -1;
	}
	return addr / p->chunk < p->nchunks ? (int)(addr / p->chunk) : -1;
}

/*
 * The chunks the application holds: those nothing else names (no buffer the
 * pool holds, no fill or completion entry). One bit per chunk in @hands.
 */
static uint64_t app_chunks(const struct mp *p)
{
	uint64_t named = 0;
	uint32_t i;
	int c;

	for (i = 0; i < p->nknown; i++) {
		c = audit_chunk(p, p->heads[i].base);
		if (held(p->heads[i].st) && c >= 0)
			named |= 1ULL << c;
	}
	for (i = 0; i < p->fq.len; i++) {
		c = audit_chunk(p, fifo_at(&p->fq, i));
		if (c >= 0)
			named |= 1ULL << c;
	}
	for (i = 0; i < p->cq.len; i++) {
		c = audit_chunk(p, fifo_at(&p->cq, i));
		if (c >= 0)
			named |= 1ULL << c;
	}
	return ~named & (p->nchunks == 64 ? ~0ULL : (1ULL << p->nchunks) - 1);
}

/* A chunk in @hands, the first from @start on; -1 if none. */
static int hands_chunk(const struct mp *p, uint64_t hands, uint32_t start)
{
	uint32_t i;

	for (i = 0; i < p->nchunks; i++) {
		uint32_t c = (start + i) % p->nchunks;

		if (hands >> c & 1)
			return (int)c;
	}
	return -1;
}

/* ---- checks -------------------------------------------------------------- */

static void check_stats(const struct mp *p)
{
	struct uxdp_pool_stats st;
	const struct uxdp_pool_stats *m = &p->m;
	uint32_t alloc = count_st(p, H_ALLOC), pend = count_st(p, H_PENDING);

	FZ_CHECK(uxdp_pool_stats(p->pool, &st) == 0, "pool_stats");
	if (lax)
		return;
	FZ_CHECK(m->alloc - m->freed - m->released == alloc + pend,
		 "harness model out of balance");
	FZ_CHECK(st.alloc == m->alloc && st.released == m->released &&
		 st.completed == m->completed,
		 "pool %d: alloc %llu released %llu completed %llu, model "
		 "%llu %llu %llu", p->id, (unsigned long long)st.alloc,
		 (unsigned long long)st.released,
		 (unsigned long long)st.completed,
		 (unsigned long long)m->alloc,
		 (unsigned long long)m->released,
		 (unsigned long long)m->completed);
	FZ_CHECK(st.bad_free == m->bad_free,
		 "pool %d: bad_free %llu, model %llu (%u to count when taken "
		 "back)", p->id, (unsigned long long)st.bad_free,
		 (unsigned long long)m->bad_free, count_qbad(p));
	FZ_CHECK(st.fill_invalid == m->fill_invalid &&
		 st.fill_dup == m->fill_dup,
		 "pool %d: fill_invalid %llu fill_dup %llu, model %llu %llu",
		 p->id, (unsigned long long)st.fill_invalid,
		 (unsigned long long)st.fill_dup,
		 (unsigned long long)m->fill_invalid,
		 (unsigned long long)m->fill_dup);
	FZ_CHECK(st.freed == m->freed && st.free_list == count_st(p, H_FREE) &&
		 st.remote_pending == pend + count_qbad(p),
		 "pool %d: freed %llu free_list %u remote_pending %u, model "
		 "%llu %u %u + %u", p->id, (unsigned long long)st.freed,
		 st.free_list, st.remote_pending, (unsigned long long)m->freed,
		 count_st(p, H_FREE), pend, count_qbad(p));
	FZ_CHECK(st.outstanding == alloc + pend &&
		 st.outstanding == st.alloc - st.freed - st.released,
		 "pool %d: outstanding %u, model %u", p->id, st.outstanding,
		 alloc + pend);
}

static void mark(uint8_t *where, int c, uint8_t loc, int *total)
{
	if (c < 0)
		return;
	if (where[c] & loc)
		where[c] |= UXDP_LOC_DUP;
	where[c] |= loc;
	(*total)++;
}

static void check_audit(struct mp *p)
{
	uint8_t got[MAX_CHUNKS], want[MAX_CHUNKS];
	int total = 0, n;
	bool clean = true;
	uint64_t hands;
	uint32_t i;

	drain(p);		/* the audit moves remote frees first */
	if (lax) {
		uxdp_pool_audit(p->pool, got);
		return;
	}
	hands = app_chunks(p);
	memset(want, 0, sizeof(want));
	for (i = 0; i < p->fq.len; i++)
		mark(want, audit_chunk(p, fifo_at(&p->fq, i)), UXDP_LOC_FILL,
		     &total);
	for (i = 0; i < p->cq.len; i++)
		mark(want, audit_chunk(p, fifo_at(&p->cq, i)), UXDP_LOC_COMP,
		     &total);
	for (i = 0; i < p->nknown; i++) {
		const struct head *h = &p->heads[i];

		if (!held(h->st))
			continue;
		mark(want, audit_chunk(p, h->base),
		     h->st == H_ALLOC ? UXDP_LOC_DRIVER : UXDP_LOC_FREE_LIST,
		     &total);
	}
	memset(got, 0xff, sizeof(got));
	n = uxdp_pool_audit(p->pool, got);
	for (i = 0; i < p->nchunks; i++) {
		FZ_CHECK(got[i] == want[i],
			 "pool %d: audit puts chunk %u at %#x, model at %#x",
			 p->id, i, got[i], want[i]);
		if (hands >> i & 1)
			want[i] |= UXDP_LOC_APP;
		if (__builtin_popcount(want[i]) != 1)
			clean = false;
	}
	FZ_CHECK(n == total, "pool %d: audit made %d placements, model %d",
		 p->id, n, total);
	/* The invariant the audit exists for, when the script kept it. */
	if (clean)
		for (i = 0; i < p->nchunks; i++)
			FZ_CHECK(__builtin_popcount(got[i] |
				 (hands >> i & 1 ? UXDP_LOC_APP : 0)) == 1,
				 "pool %d: chunk %u in %#x", p->id, i, got[i]);
}

/* A buffer the pool produced from the fill ring at @base. */
static void accept_new(struct mp *p, struct uxdp_buff *b, uint64_t base)
{
	struct head *h;
	uint32_t i;

	FZ_CHECK(b, "pool %d: missing buffer for fill address %#llx", p->id,
		 (unsigned long long)base);
	FZ_CHECK(b->data_hard_start == p->area + base + p->headroom,
		 "pool %d: buffer at offset %ld, fill entry says %#llx + "
		 "headroom %u", p->id,
		 (long)((char *)b->data_hard_start - p->area),
		 (unsigned long long)base, p->headroom);
	FZ_CHECK(uxdp_buff_pool(b) == p->pool && b->frame_sz == p->chunk -
		 p->headroom, "pool %d: wrong pool or frame_sz", p->id);
	h = head_of(p, b);
	if (h) {
		FZ_CHECK(!held(h->st),
			 "pool %d: handed out buffer %p again while it is %s",
			 p->id, (void *)b, h->st == H_ALLOC ? "allocated" :
			 h->st == H_FREE ? "on the free list" :
			 "pending remote return");
	} else {
		FZ_CHECK(p->nknown < p->nchunks,
			 "pool %d: more buffer heads than chunks", p->id);
		h = &p->heads[p->nknown++];
		h->b = b;
	}
	if (!p->unaligned)
		for (i = 0; i < p->nknown; i++)
			FZ_CHECK(p->heads[i].b == b ||
				 p->heads[i].base != base ||
				 !held(p->heads[i].st),
				 "pool %d: chunk %#llx has two live heads",
				 p->id, (unsigned long long)base);
	h->base = base;
	h->st = H_ALLOC;
}

/* A buffer the pool produced from its free list. */
static void accept_free(struct mp *p, struct uxdp_buff *b)
{
	struct head *h = b ? head_of(p, b) : NULL;

	FZ_CHECK(h && h->st == H_FREE,
		 "pool %d: %p is not on the free list (state %d)", p->id,
		 (void *)b, h ? h->st : -1);
	FZ_CHECK(b->data_hard_start == p->area + h->base + p->headroom,
		 "pool %d: a recycled buffer moved", p->id);
	h->st = H_ALLOC;
}

/* Consume one fill entry as the pool does: the base of the buffer it
 * yields, or -1 if it is skipped (and counted). */
static int64_t fill_take(struct mp *p)
{
	uint64_t a = fifo_pop(&p->fq);

	if (!p->unaligned) {
		a &= ~((uint64_t)p->chunk - 1);
		if (a >= p->size) {
			p->m.fill_invalid++;
			return -1;
		}
		if (chunk_held(p, a)) {
			p->m.fill_dup++;
			return -1;
		}
		return (int64_t)a;
	}
	a &= UXDP_UNALIGNED_BUF_ADDR_MASK;
	if (a >= p->size || a + p->chunk > p->size) {
		p->m.fill_invalid++;
		return -1;
	}
	return (int64_t)a;
}

static uint32_t max_size(const struct mp *p)
{
	return p->chunk - p->headroom - UXDP_PACKET_HEADROOM -
	       UXDP_FRAME_TAILROOM;
}

/* Give a fresh buffer a packet and write it all (ASan: the area is heap). */
static void use_buffer(const struct mp *p, struct uxdp_buff *b, uint32_t len)
{
	len %= max_size(p) + 1;
	uxdp_buff_set_size(b, len);
	FZ_CHECK((char *)b->data == (char *)b->data_hard_start +
		 UXDP_PACKET_HEADROOM && b->data_meta == b->data &&
		 uxdp_buff_len(b) == len, "set_size");
	memset(b->data, 0xc5, len);
}

/* ---- operations ---------------------------------------------------------- */

/* Lax mode: a buffer from the pool, wherever it came from. */
static void lax_accept(struct mp *p, struct uxdp_buff *b)
{
	uintptr_t hs = (uintptr_t)b->data_hard_start, a = (uintptr_t)p->area;
	struct head *h = head_of(p, b);

	FZ_CHECK(hs >= a + p->headroom &&
		 hs - a - p->headroom + p->chunk <= p->size,
		 "pool %d: buffer %p outside the area", p->id, (void *)b);
	if (h) {
		FZ_CHECK(h->st != H_ALLOC, "pool %d: handed out buffer %p "
			 "again while the script holds it", p->id, (void *)b);
	} else {
		FZ_CHECK(p->nknown < p->nchunks,
			 "pool %d: more buffer heads than chunks", p->id);
		h = &p->heads[p->nknown++];
		h->b = b;
	}
	h->base = hs - a - p->headroom;
	h->st = H_ALLOC;
	p->m.alloc++;
}

/* Lax mode: allocation with no expectations but safety. */
static void lax_alloc(struct mp *p, struct uxdp_buff **bufs, uint32_t n,
		      uint16_t len)
{
	uint32_t i, c = fill_consumed(p);

	for (i = 0; i < c; i++)
		fill_take(p);
	for (i = 0; i < n; i++)
		lax_accept(p, bufs[i]);
	for (i = 0; i < n; i++)
		use_buffer(p, bufs[i], len + i);
}

static void op_alloc(struct mp *p, struct fz *f)
{
	struct uxdp_buff *b;
	int64_t base = -1;
	uint32_t n, i;

	b = uxdp_pool_alloc(p->pool);
	drained(p);
	if (lax) {
		lax_alloc(p, &b, !!b, fz_u16(f));
		return;
	}
	n = fill_consumed(p);
	if (count_st(p, H_FREE)) {
		FZ_CHECK(!n, "pool %d: alloc read the fill ring with "
			 "buffers on the free list", p->id);
		accept_free(p, b);
	} else {
		/* Entries up to the first usable one, which is the buffer. */
		for (i = 0; i < n; i++) {
			FZ_CHECK(base < 0, "pool %d: alloc read past a usable "
				 "fill entry", p->id);
			base = fill_take(p);
		}
		if (!b) {
			FZ_CHECK(base < 0, "pool %d: no buffer from a usable "
				 "fill entry", p->id);
			FZ_CHECK(!p->fq.len ||
				 (p->unaligned && !unused_heads(p)),
				 "pool %d: alloc gave up with %u fill entries "
				 "left", p->id, p->fq.len);
			return;
		}
		FZ_CHECK(base >= 0, "pool %d: allocated %p with no usable fill "
			 "entry", p->id, (void *)b);
		accept_new(p, b, (uint64_t)base);
	}
	p->m.alloc++;
	FZ_CHECK((char *)b->data == (char *)b->data_hard_start +
		 UXDP_PACKET_HEADROOM && b->data_meta == b->data &&
		 b->data_end == b->data, "pool %d: alloc left bad pointers",
		 p->id);
	use_buffer(p, b, fz_u16(f));
}

static void op_alloc_batch(struct mp *p, struct fz *f)
{
	uint32_t max = fz_u8(f) % (MAX_BATCH + 1), got, n, n1, rem, i, j;
	struct uxdp_buff **bufs = malloc(max * sizeof(*bufs));
	uint16_t len = fz_u16(f);

	if (!bufs && max)
		abort();
	got = uxdp_pool_alloc_batch(p->pool, bufs, max);
	FZ_CHECK(got <= max, "pool %d: alloc_batch(%u) = %u", p->id, max, got);
	drained(p);
	if (lax) {
		lax_alloc(p, bufs, got, len);
		free(bufs);
		return;
	}
	n = fill_consumed(p);
	/* The free list first, ... */
	n1 = count_st(p, H_FREE);
	if (n1 > max)
		n1 = max;
	for (j = 0; j < n1; j++)
		accept_free(p, j < got ? bufs[j] : NULL);
	/* ... then what the fill entries it read give. */
	rem = max - n1;
	FZ_CHECK(n <= rem, "pool %d: alloc_batch(%u) read %u fill entries "
		 "for %u buffers", p->id, max, n, rem);
	if (rem && p->fq.len && (!p->unaligned || unused_heads(p)))
		FZ_CHECK(n, "pool %d: alloc_batch(%u) read none of %u fill "
			 "entries", p->id, max, p->fq.len);
	for (i = 0; i < n; i++) {
		int64_t base = fill_take(p);

		if (base < 0)
			continue;
		FZ_CHECK(j < got, "pool %d: alloc_batch(%u) returned %u, the "
			 "fill entries it read give more", p->id, max, got);
		accept_new(p, bufs[j++], (uint64_t)base);
	}
	FZ_CHECK(j == got, "pool %d: alloc_batch(%u) returned %u, model %u",
		 p->id, max, got, j);
	p->m.alloc += got;
	for (i = 0; i < got; i++)
		use_buffer(p, bufs[i], len + i);
	memcpy(p->last, bufs, got * sizeof(*bufs));
	p->nlast = got;
	free(bufs);
}

static void post_fill(struct mp *p, struct fz *f)
{
	uint32_t k = fz_u8(f) % 40, idx, got, i;
	uint64_t *addrs;

	got = uxdp_ring_prod_reserve_batch(p->fill, k, &idx);
	FZ_CHECK(got <= k && p->fq.len + got <= p->fill_size,
		 "pool %d: fill ring reserved %u of %u with %u posted (size "
		 "%u)", p->id, got, k, p->fq.len, p->fill_size);
	addrs = malloc(got * sizeof(*addrs));
	if (!addrs && got)
		abort();
	for (i = 0; i < got; i++) {
		uint8_t kind = fz_u8(f);
		uint64_t v = fz_u16(f), a;
		int c;

		switch (kind % 6) {
		case 0:
		case 1:	/* one of the application's chunks */
			c = hands_chunk(p, app_chunks(p), (uint32_t)v);
			a = (uint64_t)(c < 0 ? 0 : c) * p->chunk;
			if (kind % 6 == 1)	/* inside it, or offset */
				a += p->unaligned ? (v & 0xfff) << 48 :
				     v % p->chunk;
			break;
		case 2:	/* any chunk: a duplicate if the pool holds it */
			a = (v % p->nchunks) * p->chunk;
			break;
		case 3:	/* just past the end, or far away */
			a = kind & 0x40 ? p->size + (v & 0xfff) :
			    fz_u64(f);
			break;
		case 4:	/* any byte offset (unaligned: any base) */
			a = v % (p->size + p->chunk);
			break;
		default:	/* the last whole chunk and beyond */
			a = p->size - p->chunk + (v % (2 * p->chunk));
			break;
		}
		addrs[i] = a;
		fifo_push(&p->fq, a);
	}
	uxdp_ring_prod_write_addrs(p->fill, idx, addrs, got);
	uxdp_ring_prod_submit(p->fill, got);
	p->posted += got;
	free(addrs);
}

/* Buffers the script knows of, in pools that still exist. */
static uint32_t live_known(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < NPOOLS; i++)
		if (!pools[i].gone)
			n += pools[i].nknown;
	return n;
}

/* @n handles, any of either pool's (stale ones included; none of a pool
 * that is gone). */
static struct uxdp_buff **pick_handles(struct fz *f, uint32_t n)
{
	struct uxdp_buff **v = malloc(n * sizeof(*v));
	uint32_t total = live_known(), i, j, k;

	if (!v && n)
		abort();
	for (i = 0; i < n; i++) {
		k = fz_u8(f) % total;
		for (j = 0; j < NPOOLS; j++) {
			if (pools[j].gone)
				continue;
			if (k < pools[j].nknown) {
				v[i] = pools[j].heads[k].b;
				break;
			}
			k -= pools[j].nknown;
		}
	}
	return v;
}

enum how {
	RET_FREE,	/* uxdp_buff_free, uxdp_pool_free_batch */
	RET_REMOTE,	/* uxdp_pool_free_remote */
	RET_RELEASE,	/* uxdp_pool_release */
};

/*
 * The model of one return of @b, handed to pool @to (NULL: its own) @how.
 * Only an allocated buffer of the pool can be returned; anything else is
 * counted in bad_free and ignored. A remote free marks the buffer returned
 * at once (a second return of it is bad); one of a buffer that is not
 * allocated is counted when the pool processes it (see qbad). A retired
 * pool processes them in the same call (returned()).
 * Returns true if the buffer was taken.
 */
static bool model_return(struct mp *to, struct uxdp_buff *b, enum how how)
{
	struct head *h;
	struct mp *own = owner_of(b, &h);

	if (!to)
		to = own;
	if (own != to) {
		to->m.bad_free++;
		return false;
	}
	if (how == RET_REMOTE) {
		if (h->st == H_PENDING || h->qbad) {
			to->m.bad_free++;	/* queued already */
			return false;
		}
		if (h->st == H_ALLOC) {
			h->st = H_PENDING;
			return true;
		}
		h->qbad = true;
		return false;
	}
	if (h->st != H_ALLOC) {
		to->m.bad_free++;
		return false;
	}
	h->st = how == RET_FREE ? H_FREE : H_APP;
	if (how == RET_FREE)
		to->m.freed++;
	else
		to->m.released++;
	return true;
}

/* uxdp_buff_free(): a call by the owner of @b's pool (anyone's, once it
 * is retired). */
static void free_one(struct uxdp_buff *b)
{
	struct head *h;
	struct mp *own = owner_of(b, &h);

	uxdp_buff_free(b);
	drained(own);
	model_return(NULL, b, RET_FREE);
	returned(own);
}

static void op_free_local(struct fz *f)
{
	struct uxdp_buff **v = pick_handles(f, 1);

	free_one(v[0]);
	free(v);
}

/*
 * A window of the last batch allocated, in its order (the way a datapath
 * returns an XDP_DROP batch), sometimes with one entry replaced by any
 * handle or two entries swapped: batches back in place, and batches that
 * only look so after some of their buffers were freed or released alone.
 */
static struct uxdp_buff **pick_last(struct mp *p, struct fz *f, uint32_t *np)
{
	uint8_t how = fz_u8(f);
	/* Mostly the whole batch, or all but its first: what lines up with
	 * the slots after one of its buffers was released, or freed alone
	 * (pushed into the first one's slot). */
	uint32_t from = (how & 12) ? (how >> 2) & 1 : fz_u8(f);
	uint32_t n, i, j;
	struct uxdp_buff **v, **o;

	from = p->nlast ? from % p->nlast : 0;
	n = p->nlast - from;
	v = malloc((n + 1) * sizeof(*v));
	if (!v)
		abort();
	memcpy(v, p->last + from, n * sizeof(*v));
	if (n && (how & 3) == 1) {
		o = pick_handles(f, 1);
		v[fz_u8(f) % n] = o[0];
		free(o);
	} else if (n && (how & 3) == 2) {
		struct uxdp_buff *t;

		i = fz_u8(f) % n;
		j = fz_u8(f) % n;
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
	*np = n;
	return v;
}

/*
 * One buffer of a batch about to be returned goes back first on its own:
 * freed, released, or freed from "another thread" (@kind 1, 2, 3; 0 does
 * nothing). The batch then holds a buffer that is not allocated, while its
 * slots may still line up with the free list's.
 */
static void return_alone(struct mp *p, struct uxdp_buff *b, uint8_t kind)
{
	struct head *h;
	struct mp *own = owner_of(b, &h);

	switch (kind & 3) {
	case 1:
		free_one(b);
		break;
	case 2:
		uxdp_pool_release(b);
		drained(own);
		model_return(NULL, b, RET_RELEASE);
		returned(own);
		break;
	case 3:
		uxdp_pool_free_remote(p->pool, &b, 1);
		model_return(p, b, RET_REMOTE);
		returned(p);
		break;
	}
}

static void op_free_many(struct mp *p, struct fz *f, bool remote)
{
	uint32_t n = fz_u8(f) % 9, i;
	struct uxdp_buff **v = n == 8 ? pick_last(p, f, &n) :
				       pick_handles(f, n);

	if (n >= 2) {
		uint8_t kind = fz_u8(f);

		if (kind & 3)
			return_alone(p, v[1 + fz_u8(f) % (n - 1)], kind);
	}
	/* That return may have been a retired pool's last. (Handles of
	 * another pool gone that way are only compared, never followed.) */
	if (p->gone) {
		free(v);
		return;
	}
	if (remote) {
		uxdp_pool_free_remote(p->pool, v, n);
	} else {
		uxdp_pool_free_batch(p->pool, v, n);
		drained(p);
	}
	for (i = 0; i < n; i++)
		model_return(p, v[i], remote ? RET_REMOTE : RET_FREE);
	returned(p);
	free(v);
}

static void op_release(struct fz *f)
{
	struct uxdp_buff **v = pick_handles(f, 1);
	struct head *h;
	struct mp *p = owner_of(v[0], &h);
	uint64_t off, want, got;
	bool ok;

	off = (uint64_t)p->headroom + UXDP_PACKET_HEADROOM;
	want = p->unaligned ? h->base | off << UXDP_UNALIGNED_BUF_OFFSET_SHIFT :
			      h->base + off;
	got = uxdp_pool_release(v[0]);
	drained(p);
	ok = model_return(NULL, v[0], RET_RELEASE);
	FZ_CHECK(lax || got == (ok ? want : UINT64_MAX),
		 "pool %d: release gave %#llx, expected %#llx", p->id,
		 (unsigned long long)got,
		 (unsigned long long)(ok ? want : UINT64_MAX));
	returned(p);
	free(v);
}

/*
 * uxdp_pool_buff_at() of a buffer's chunk (aligned: any byte of it;
 * unaligned: its base, any offset bits), any address in or just past the
 * UMEM, or far outside: the allocated buffer there, or NULL.
 */
static void op_buff_at(struct mp *p, struct fz *f)
{
	uint8_t kind = fz_u8(f);
	uint16_t v = fz_u16(f);
	struct uxdp_buff *got, *want = NULL;
	uint64_t addr, base;
	uint32_t i;

	switch (kind % 4) {
	case 0:
		if (!p->nknown)
			return;
		base = p->heads[v % p->nknown].base;
		addr = p->unaligned ?
		       base | (uint64_t)(kind >> 2) <<
			      UXDP_UNALIGNED_BUF_OFFSET_SHIFT :
		       base + (kind >> 2) * p->chunk / 64;
		break;
	case 1:
		addr = v % (p->size + p->chunk);
		break;
	case 2:
		addr = p->size + v;
		break;
	default:
		addr = fz_u64(f);
		break;
	}
	got = uxdp_pool_buff_at(p->pool, addr);
	drained(p);
	if (lax)
		return;
	base = p->unaligned ? addr & UXDP_UNALIGNED_BUF_ADDR_MASK :
			      addr & ~((uint64_t)p->chunk - 1);
	for (i = 0; i < p->nknown; i++)
		if (p->heads[i].st == H_ALLOC && p->heads[i].base == base &&
		    (!want || p->heads[i].b == got))
			want = p->heads[i].b;
	/* Unaligned buffers may overlap (the script posts any base, twice
	 * too), and then the pool's map from base to buffer knows only one
	 * of them, or none: any allocated buffer at that base, or NULL.
	 * Aligned, the answer is exact. */
	FZ_CHECK(got == want || (p->unaligned && !got),
		 "pool %d: buff_at(%#llx) = %p, model %p", p->id,
		 (unsigned long long)addr, (void *)got, (void *)want);
}

/* uxdp_pool_retire(), bit 0: with the UMEM. The pool goes at once if
 * nothing is out (what other threads returned counts as back). */
static void op_retire(struct mp *p, struct fz *f)
{
	uint32_t flags = fz_u8(f) & 1 ? UXDP_POOL_RETIRE_UMEM : 0;

	/* Lax mode's model may be wrong about what is out: the harness
	 * would follow a freed pool. */
	if (lax)
		return;
	uxdp_pool_retire(p->pool, flags);
	p->retired = true;
	p->retire_umem = flags != 0;
	drain(p);
	check_gone(p);
}

static void op_complete(struct mp *p, struct fz *f)
{
	uint32_t n = fz_u8(f) % 17, room = p->comp_size - p->cq.len, got, i;
	uint64_t *addrs = malloc(n * sizeof(*addrs));

	if (!addrs && n)
		abort();
	for (i = 0; i < n; i++) {
		uint8_t kind = fz_u8(f);
		int c = hands_chunk(p, app_chunks(p), kind);

		/* A chunk back from TX, or whatever the caller passes. */
		addrs[i] = kind & 0x80 || c < 0 ? fz_u64(f) :
			   (uint64_t)c * p->chunk;
		if (i < room)
			fifo_push(&p->cq, addrs[i]);
	}
	got = uxdp_pool_complete(p->pool, addrs, n);
	FZ_CHECK(got == (n < room ? n : room),
		 "pool %d: complete(%u) = %u with room for %u", p->id, n, got,
		 room);
	p->m.completed += got;
	free(addrs);
}

static void op_read_comp(struct mp *p, struct fz *f)
{
	uint32_t k = fz_u8(f) % 40, idx, got, i;
	uint64_t *a = malloc(k * sizeof(*a));

	if (!a && k)
		abort();
	got = uxdp_ring_cons_peek(p->comp, k, &idx);
	FZ_CHECK(got == (k < p->cq.len ? k : p->cq.len),
		 "pool %d: completion ring gave %u of %u, %u posted", p->id,
		 got, k, p->cq.len);
	uxdp_ring_cons_read_addrs(p->comp, idx, a, got);
	uxdp_ring_cons_release(p->comp, got);
	for (i = 0; i < got; i++) {
		uint64_t want = fifo_pop(&p->cq);

		FZ_CHECK(a[i] == want, "pool %d: completion %#llx, posted "
			 "%#llx", p->id, (unsigned long long)a[i],
			 (unsigned long long)want);
	}
	free(a);
}

static void op_can_alloc(struct mp *p, struct fz *f)
{
	uint32_t n = fz_u8(f) % (MAX_BATCH + 1), fl, avail;
	bool want, got;

	got = uxdp_pool_can_alloc(p->pool, n);
	drained(p);
	if (lax)
		return;
	FZ_CHECK(!fill_consumed(p), "pool %d: can_alloc consumed fill "
		 "entries", p->id);
	fl = count_st(p, H_FREE);
	avail = p->fq.len;
	if (p->unaligned && avail > unused_heads(p))
		avail = unused_heads(p);
	want = fl >= n || avail >= n - fl;
	FZ_CHECK(got == want, "pool %d: can_alloc(%u) = %d, free list %u, "
		 "fill %u", p->id, n, got, fl, p->fq.len);
}

static void op_busy(struct mp *p)
{
	int rc;

	/* Only while buffers are out: it would succeed otherwise. */
	if (lax || !count_st(p, H_ALLOC))
		return;
	if (p->retired) {
		/* Not the pool's (no owner), but the UMEM still has it. */
		rc = uxdp_umem_destroy(p->umem);
		FZ_CHECK(rc == -EBUSY, "pool %d: umem destroy with a retired "
			 "pool that has buffers out = %d", p->id, rc);
		return;
	}
	drain(p);
	rc = uxdp_pool_destroy(p->pool);
	FZ_CHECK(rc == -EBUSY && uxdp_errmsg()[0],
		 "pool %d: destroy with buffers out = %d", p->id, rc);
	rc = uxdp_umem_destroy(p->umem);
	FZ_CHECK(rc == -EBUSY, "pool %d: umem destroy with a pool = %d",
		 p->id, rc);
}

enum {
	OP_POST,
	OP_ALLOC,
	OP_ALLOC_BATCH,
	OP_FREE,
	OP_FREE_BATCH,
	OP_FREE_REMOTE,
	OP_RELEASE,
	OP_COMPLETE,
	OP_READ_COMP,
	OP_CAN_ALLOC,
	OP_FLUSH,
	OP_AUDIT,
	OP_BUSY,
	OP_BUFF_AT,
	OP_RETIRE,
	NR_OPS
};

/* Whether @op may be made on @p: a retired pool takes returns only (and
 * its UMEM's refusal to go), one that is gone nothing. Single frees and
 * releases name their pool through the buffer. */
static bool op_allowed(const struct mp *p, uint32_t op)
{
	if (op == OP_FREE || op == OP_RELEASE || !p->retired)
		return true;
	return !p->gone && (op == OP_FREE_BATCH || op == OP_FREE_REMOTE ||
			    op == OP_BUSY);
}

static void run_op(struct fz *f)
{
	uint8_t b = fz_u8(f);
	struct mp *p = &pools[(b >> 7) & 1];
	bool any = live_known();
	uint32_t op = (b & 0x7fu) % NR_OPS;

	if (!op_allowed(p, op))
		return;
	switch (op) {
	case OP_POST:
		post_fill(p, f);
		break;
	case OP_ALLOC:
		op_alloc(p, f);
		break;
	case OP_ALLOC_BATCH:
		op_alloc_batch(p, f);
		break;
	case OP_FREE:
		if (any)
			op_free_local(f);
		break;
	case OP_FREE_BATCH:
		if (any)
			op_free_many(p, f, false);
		break;
	case OP_FREE_REMOTE:
		if (any)
			op_free_many(p, f, true);
		break;
	case OP_RELEASE:
		if (any)
			op_release(f);
		break;
	case OP_COMPLETE:
		op_complete(p, f);
		break;
	case OP_READ_COMP:
		op_read_comp(p, f);
		break;
	case OP_CAN_ALLOC:
		op_can_alloc(p, f);
		break;
	case OP_FLUSH:
		uxdp_pool_flush(p->pool);
		break;
	case OP_AUDIT:
		check_audit(p);
		break;
	case OP_BUSY:
		op_busy(p);
		break;
	case OP_BUFF_AT:
		op_buff_at(p, f);
		break;
	case OP_RETIRE:
		op_retire(p, f);
		break;
	}
}

/* ---- set-up and teardown ------------------------------------------------- */

static void pool_setup(struct mp *p, int id, struct fz *f)
{
	uint8_t mode = fz_u8(f), shape;
	uint16_t hr;
	uint8_t rings;
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o);
	uint32_t hmax;
	size_t alen;

	memset(p, 0, sizeof(*p));
	p->id = id;
	p->unaligned = mode & 1;
	p->chunk = mode & 2 ? 4096 : 2048;
	p->nchunks = fz_u8(f) % MAX_CHUNKS + 1;
	shape = fz_u8(f);
	hr = fz_u16(f);
	hmax = p->chunk - UXDP_UMEM_CHUNK_RESERVED;
	switch (shape % 4) {
	case 0:
		p->headroom = 0;
		break;
	case 1:	/* small, often odd */
		p->headroom = hr % 64;
		break;
	case 2:
		p->headroom = hmax - hr % 8;
		break;
	default:
		p->headroom = hr % (hmax + 1);
		break;
	}
	rings = fz_u8(f);
	p->fill_size = 1U << (rings & 7);
	p->comp_size = 1U << ((rings >> 3) & 7);
	p->size = (uint64_t)p->nchunks * p->chunk;
	if (p->unaligned && (mode & 4))
		p->size += hr % p->chunk;	/* a partial last chunk */

	/* A heap area of exactly the UMEM's size: ASan sees past its end. */
	alen = p->size;
	if (posix_memalign((void **)&p->area, 4096, alen))
		abort();
	memset(p->area, 0, alen);
	o.chunk_size = p->chunk;
	o.headroom = p->headroom;
	o.flags = p->unaligned ? UXDP_UMEM_F_UNALIGNED : 0;
	o.fill_size = p->fill_size;
	o.comp_size = p->comp_size;
	p->umem = uxdp_umem_create(p->area, p->size, &o);
	FZ_CHECK(p->umem, "umem_create: %s", uxdp_errmsg());
	FZ_CHECK(uxdp_umem_nchunks(p->umem) == p->nchunks, "nchunks");
	p->pool = uxdp_pool_create(p->umem, NULL);
	FZ_CHECK(p->pool, "pool_create: %s", uxdp_errmsg());
	p->fill = uxdp_umem_fill_ring(p->umem);
	p->comp = uxdp_umem_comp_ring(p->umem);
}

static void pool_teardown(struct mp *p)
{
	uint32_t i;
	int rc;

	for (i = 0; i < p->nknown; i++)
		if (p->heads[i].st == H_ALLOC)
			free_one(p->heads[i].b);
	if (p->retired) {
		/* The last of those took pool (and UMEM) with it. */
		FZ_CHECK(p->gone, "pool %d: retired, every buffer freed, and "
			 "still there", p->id);
		free(p->area);
		return;
	}
	check_stats(p);
	rc = uxdp_pool_destroy(p->pool);
	FZ_CHECK(rc == 0, "pool %d: destroy with everything freed = %d: %s",
		 p->id, rc, uxdp_errmsg());
	rc = uxdp_umem_destroy(p->umem);
	FZ_CHECK(rc == 0, "pool %d: umem destroy = %d: %s", p->id, rc,
		 uxdp_errmsg());
	free(p->area);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *l = getenv("UXDP_FUZZ_POOL_LAX");

	(void)argc;
	(void)argv;
	uxdp_set_print(NULL);
	lax = l && *l && *l != '0';
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fz f = { data, len };
	int i, ops = 0;

	for (i = 0; i < NPOOLS; i++)
		pool_setup(&pools[i], i, &f);
	while (fz_more(&f) && ops++ < 400) {
		run_op(&f);
		for (i = 0; i < NPOOLS; i++) {
			if (pools[i].gone)
				continue;
			check_stats(&pools[i]);
			/* The audit drains remote frees: keep it from doing
			 * that behind the script's back. A retired pool has
			 * no owner to audit it. */
			if (!pools[i].retired && !queued(&pools[i]))
				check_audit(&pools[i]);
		}
	}
	for (i = 0; i < NPOOLS; i++) {
		if (!pools[i].retired)
			check_audit(&pools[i]);
		pool_teardown(&pools[i]);
	}
	return 0;
}
