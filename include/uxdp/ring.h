/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp rings: single-producer / single-consumer rings of 64-bit addresses
 * (fill, completion) and 16-byte descriptors (rx, tx), laid out in memory
 * exactly as the kernel lays out its mmap'd AF_XDP rings, so the same inline
 * helpers drive a ring uxdp allocated and one mapped from an AF_XDP socket.
 *
 * Shared memory (kernel's struct xdp_ring, x86-64, 64-byte lines):
 *
 *	offset   0  u32 producer       own cache line
 *	offset  64  pad                keeps the adjacent-line prefetcher from
 *	offset 128  u32 consumer         pulling producer and consumer together
 *	offset 192  pad
 *	offset 196  u32 flags          (UXDP_RING_NEED_WAKEUP)
 *	offset 256  pad
 *	offset 320  array of entries   u64 addresses or struct uxdp_desc
 *
 * Each side works through its own struct uxdp_ring handle, which caches the
 * peer's index and reloads the shared word only when the cache cannot
 * satisfy a request. Indices are free-running u32s masked on access; every
 * count is a u32 difference, so wrap-around at 2^32 needs no special case.
 *
 * Memory ordering (the kernel's four-point protocol, net/xdp/xsk_queue.h):
 *
 *	producer                              consumer
 *	(A) load-acquire consumer             (C) load-acquire producer
 *	    if there is room:                     if there are entries:
 *	    write entries                         read entries
 *	(B) store-release producer            (D) store-release consumer
 *
 *	B pairs with C: entries written before B are visible to a consumer that
 *	    observed the new producer index at C. Without it the consumer could
 *	    read a stale slot.
 *	D pairs with A: a producer that observed the new consumer index at A
 *	    knows the consumer has finished reading the released slots, so it
 *	    may overwrite them. Without it the producer could overwrite a slot
 *	    the consumer is still reading. (The kernel relies on the control
 *	    dependency here; C11 has no such notion, so A is an acquire. On
 *	    x86 both acquire and release compile to plain moves.)
 *
 * Verbs: producer reserve -> write -> submit (or cancel); consumer
 * peek -> read -> release (or cancel).
 */
#ifndef UXDP_RING_H
#define UXDP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <uxdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A packet descriptor: byte-for-byte the kernel's struct xdp_desc. */
struct uxdp_desc {
	uint64_t addr;
	uint32_t len;
	uint32_t options;
};

/* Bits in the shared flags word (XDP_RING_NEED_WAKEUP). */
#define UXDP_RING_NEED_WAKEUP	(1U << 0)

/* Bits in uxdp_desc.options (XDP_PKT_CONTD, XDP_TX_METADATA). */
#define UXDP_PKT_CONTD		(1U << 0)
#define UXDP_TX_METADATA	(1U << 1)

/*
 * Largest ring uxdp will create: 2^30 entries, as the kernel allows (up to
 * 16 GiB of descriptors; uxdp_ring_mem_alloc() maps big rings lazily).
 */
#define UXDP_RING_MAX_ENTRIES	(1U << 30)

/*
 * Where the producer, consumer, flags words and the entry array live,
 * relative to the start of the ring memory. Same fields and meaning as the
 * kernel's struct xdp_ring_offset, so the offsets returned by
 * getsockopt(XDP_MMAP_OFFSETS) can be passed through unchanged.
 */
struct uxdp_ring_offsets {
	uint64_t producer;
	uint64_t consumer;
	uint64_t desc;
	uint64_t flags;
};

/* The kernel's layout, which uxdp also uses for the rings it allocates. */
#define UXDP_RING_OFF_PRODUCER	0
#define UXDP_RING_OFF_CONSUMER	128
#define UXDP_RING_OFF_FLAGS	196
#define UXDP_RING_OFF_DESC	320

/*
 * One side's handle on a ring. Each side (producer or consumer) has its own;
 * the two share only the memory the pointers point into.
 *
 * Do not access these members directly: use the functions below.
 */
struct uxdp_ring {
	uint32_t cached_prod;
	uint32_t cached_cons;
	uint32_t mask;
	uint32_t size;
	uint32_t *producer;
	uint32_t *consumer;
	void *ring;
	uint32_t *flags;
};

/* ---- control path (out of line) ---------------------------------------- */

/*
 * Bytes of memory a ring of @entries entries of @elem_size bytes needs in the
 * kernel's layout. Returns 0 if @entries is not a power of two in
 * [1, UXDP_RING_MAX_ENTRIES] or @elem_size is not 8 or 16.
 */
size_t uxdp_ring_mem_size(uint32_t entries, uint32_t elem_size);

/*
 * Allocate zeroed, page-aligned memory for a ring (anonymous mmap). A ring
 * whose entries take at most 2 MiB is faulted in at once; a bigger one is
 * mapped lazily, with no swap reserved (MAP_NORESERVE), and costs only the
 * pages it touches: should memory run out later, touching a new page is
 * what fails (the OOM killer), not this call. Returns the memory, or NULL
 * with errno set (EINVAL: bad size, see uxdp_errmsg(); ENOMEM: the mmap
 * failed, uxdp_errmsg() gives the size).
 */
void *uxdp_ring_mem_alloc(uint32_t entries, uint32_t elem_size);

/* Free memory from uxdp_ring_mem_alloc(). NULL is a no-op. */
void uxdp_ring_mem_free(void *mem, uint32_t entries, uint32_t elem_size);

/*
 * Point a producer (or consumer) handle at ring memory @mem of @entries
 * entries. @off gives the layout; NULL means the kernel's standard layout.
 * The handle's cache starts from the shared indices, so a handle can attach
 * to a ring already in use. Returns 0, or -EINVAL (entries not a power of
 * two, or misaligned offsets).
 */
int uxdp_ring_init_prod(struct uxdp_ring *r, void *mem, uint32_t entries,
			const struct uxdp_ring_offsets *off);
int uxdp_ring_init_cons(struct uxdp_ring *r, void *mem, uint32_t entries,
			const struct uxdp_ring_offsets *off);

/* ---- data path (inline) ------------------------------------------------- */

/* Slot @idx of an address ring (fill, completion). */
UXDP_INLINE uint64_t *uxdp_ring_addr(const struct uxdp_ring *r, uint32_t idx)
{
	return &((uint64_t *)r->ring)[idx & r->mask];
}

/* Slot @idx of a descriptor ring (rx, tx). */
UXDP_INLINE struct uxdp_desc *uxdp_ring_desc(const struct uxdp_ring *r,
					     uint32_t idx)
{
	return &((struct uxdp_desc *)r->ring)[idx & r->mask];
}

/*
 * Bulk copies between a ring and an array, for @n slots starting at @idx (as
 * returned by reserve or peek): at most two memcpys, split where the ring
 * wraps, instead of masking every index through the handle (measured in
 * uxdp-bench ring: 2-4x fewer cycles per element than a slot-by-slot loop at
 * bulk 32). The caller has reserved or peeked the slots; these do no index
 * bookkeeping.
 */
UXDP_INLINE void uxdp_ring_copy_in(const struct uxdp_ring *r, uint32_t idx,
				   const void *src, uint32_t n, size_t esize)
{
	uint32_t off = idx & r->mask, first = r->size - off;
	char *ring = (char *)r->ring;

	if (uxdp_likely(first >= n)) {
		memcpy(ring + (size_t)off * esize, src, (size_t)n * esize);
		return;
	}
	memcpy(ring + (size_t)off * esize, src, (size_t)first * esize);
	memcpy(ring, (const char *)src + (size_t)first * esize,
	       (size_t)(n - first) * esize);
}

UXDP_INLINE void uxdp_ring_copy_out(const struct uxdp_ring *r, uint32_t idx,
				    void *dst, uint32_t n, size_t esize)
{
	uint32_t off = idx & r->mask, first = r->size - off;
	const char *ring = (const char *)r->ring;

	if (uxdp_likely(first >= n)) {
		memcpy(dst, ring + (size_t)off * esize, (size_t)n * esize);
		return;
	}
	memcpy(dst, ring + (size_t)off * esize, (size_t)first * esize);
	memcpy((char *)dst + (size_t)first * esize, ring,
	       (size_t)(n - first) * esize);
}

/*
 * Below this many entries a typed loop beats a memcpy call (uxdp-bench
 * ring, bulk 1: about half the cycles).
 */
#define UXDP_RING_COPY_SMALL	4

/* Write @n addresses into reserved slots idx.. (fill, completion rings). */
UXDP_INLINE void uxdp_ring_prod_write_addrs(struct uxdp_ring *r, uint32_t idx,
					    const uint64_t *src, uint32_t n)
{
	uint32_t i;

	if (n < UXDP_RING_COPY_SMALL) {
		for (i = 0; i < n; i++)
			*uxdp_ring_addr(r, idx + i) = src[i];
		return;
	}
	uxdp_ring_copy_in(r, idx, src, n, sizeof(*src));
}

/* Write @n descriptors into reserved slots idx.. (rx, tx rings). */
UXDP_INLINE void uxdp_ring_prod_write_descs(struct uxdp_ring *r, uint32_t idx,
					    const struct uxdp_desc *src,
					    uint32_t n)
{
	uint32_t i;

	if (n < UXDP_RING_COPY_SMALL) {
		for (i = 0; i < n; i++)
			*uxdp_ring_desc(r, idx + i) = src[i];
		return;
	}
	uxdp_ring_copy_in(r, idx, src, n, sizeof(*src));
}

/* Read @n addresses from peeked slots idx.. */
UXDP_INLINE void uxdp_ring_cons_read_addrs(const struct uxdp_ring *r,
					   uint32_t idx, uint64_t *dst,
					   uint32_t n)
{
	uint32_t i;

	if (n < UXDP_RING_COPY_SMALL) {
		for (i = 0; i < n; i++)
			dst[i] = *uxdp_ring_addr(r, idx + i);
		return;
	}
	uxdp_ring_copy_out(r, idx, dst, n, sizeof(*dst));
}

/* Read @n descriptors from peeked slots idx.. */
UXDP_INLINE void uxdp_ring_cons_read_descs(const struct uxdp_ring *r,
					   uint32_t idx, struct uxdp_desc *dst,
					   uint32_t n)
{
	uint32_t i;

	if (n < UXDP_RING_COPY_SMALL) {
		for (i = 0; i < n; i++)
			dst[i] = *uxdp_ring_desc(r, idx + i);
		return;
	}
	uxdp_ring_copy_out(r, idx, dst, n, sizeof(*dst));
}

/*
 * Free slots the producer can reserve, looking at the shared consumer index
 * only if the cached view shows fewer than @want. Returns the number of
 * free slots known (may exceed @want, never exceeds the ring size).
 *
 * The consumer index is written by the other side, which may be another
 * process, an application or a bug: it is checked, not trusted. A consumer
 * that claims to be ahead of the producer (it released more than it
 * peeked) makes no sense; the ring then counts as full until it does, so
 * nothing this side writes can land outside the ring, or on slots reserved
 * and not yet submitted. (The kernel gets memory safety by masking every
 * slot and capping every batch; uxdp's bulk copies need the count itself
 * bounded.) The handle's invariant, which reserve, cancel and the fast
 * path above rely on: cached_prod - cached_cons is never above the size.
 */
UXDP_INLINE uint32_t uxdp_ring_prod_nb_free(struct uxdp_ring *r, uint32_t want)
{
	uint32_t free_slots = r->size - (r->cached_prod - r->cached_cons);
	uint32_t cons;

	if (free_slots >= want)
		return free_slots;
	cons = uxdp_load_acquire(r->consumer);			/* A, pairs with D */
	if (uxdp_unlikely(r->cached_prod - cons > r->size))
		cons = r->cached_prod - r->size;	/* nonsense: full */
	r->cached_cons = cons;
	return r->size - (r->cached_prod - cons);
}

/*
 * Reserve exactly @n slots, all or nothing. On success *@idx is the first
 * slot's index. Returns @n, or 0 if fewer than @n slots are free (nothing
 * reserved).
 */
UXDP_INLINE uint32_t uxdp_ring_prod_reserve(struct uxdp_ring *r, uint32_t n,
					    uint32_t *idx)
{
	/* *idx is set even on failure, so callers never read garbage. */
	*idx = r->cached_prod;
	if (uxdp_unlikely(uxdp_ring_prod_nb_free(r, n) < n))
		return 0;
	r->cached_prod += n;
	return n;
}

/*
 * Reserve up to @n slots, best effort. *@idx is the first slot's index.
 * Returns how many were reserved, 0..@n.
 */
UXDP_INLINE uint32_t uxdp_ring_prod_reserve_batch(struct uxdp_ring *r,
						  uint32_t n, uint32_t *idx)
{
	uint32_t free_slots = uxdp_ring_prod_nb_free(r, n);

	if (free_slots < n)
		n = free_slots;
	*idx = r->cached_prod;
	r->cached_prod += n;
	return n;
}

/*
 * Publish the oldest @n reserved slots to the consumer. The entries must be
 * written before this call.
 */
UXDP_INLINE void uxdp_ring_prod_submit(struct uxdp_ring *r, uint32_t n)
{
	/* Only the producer writes *producer, so reading it plainly is safe. */
	uxdp_store_release(r->producer, *r->producer + n);	/* B, pairs with C */
}

/* Publish every reserved slot (the kernel's xskq_prod_submit). */
UXDP_INLINE void uxdp_ring_prod_publish(struct uxdp_ring *r)
{
	uxdp_store_release(r->producer, r->cached_prod);	/* B, pairs with C */
}

/* Give back the @n most recently reserved, not yet submitted slots. */
UXDP_INLINE void uxdp_ring_prod_cancel(struct uxdp_ring *r, uint32_t n)
{
	r->cached_prod -= n;
	/*
	 * A consumer index read while the slots were reserved may lie
	 * inside them (nonsense: they were never submitted, but this side
	 * cannot tell a submitted slot from a reserved one by the index).
	 * Left so, it would now be ahead of the producer: more than a ring
	 * of free slots. Full instead, as for any nonsense consumer.
	 * (fuzz_ring found it.)
	 */
	if (uxdp_unlikely(r->cached_prod - r->cached_cons > r->size))
		r->cached_cons = r->cached_prod - r->size;
}

/*
 * Entries the consumer can peek, looking at the shared producer index only
 * if the cached view shows fewer than @want. Returns the number known,
 * never more than the ring size. The producer index is the other side's:
 * one more than a ring ahead of this side makes no sense (a bug or a
 * hostile peer), and the ring then counts as empty until it does, so the
 * reader never reads past the ring. The handle's invariant: cached_prod -
 * cached_cons is never above the size, peeked entries cancelled included.
 */
UXDP_INLINE uint32_t uxdp_ring_cons_nb_avail(struct uxdp_ring *r, uint32_t want)
{
	uint32_t avail = r->cached_prod - r->cached_cons;

	if (avail >= want)
		return avail;
	avail = uxdp_load_acquire(r->producer) - r->cached_cons; /* C, pairs with B */
	if (uxdp_unlikely(avail > r->size))
		avail = 0;				/* nonsense: empty */
	r->cached_prod = r->cached_cons + avail;
	return avail;
}

/*
 * Take up to @n entries for reading, best effort. *@idx is the first
 * entry's index. The entries stay owned by the consumer until released.
 * Returns how many, 0..@n (and never more than the ring holds).
 *
 * An empty ring is the common case for a busy-polling consumer, so that
 * path loads the producer word and returns without a single store: no
 * dependency through the handle from one empty poll to the next.
 */
UXDP_INLINE uint32_t uxdp_ring_cons_peek(struct uxdp_ring *r, uint32_t n,
					 uint32_t *idx)
{
	uint32_t cons = r->cached_cons, avail = r->cached_prod - cons;

	*idx = cons;
	if (avail < n) {
		avail = uxdp_load_acquire(r->producer) - cons;	/* C, pairs with B */
		/* Empty, or a producer more than a ring ahead: see
		 * uxdp_ring_cons_nb_avail(). Nothing stored either way. */
		if (!avail || uxdp_unlikely(avail > r->size))
			return 0;
		r->cached_prod = cons + avail;
		if (avail < n)
			n = avail;
	}
	r->cached_cons = cons + n;
	return n;
}

/*
 * Hand the oldest @n peeked entries back to the producer. Reads of those
 * entries must be complete before this call.
 */
UXDP_INLINE void uxdp_ring_cons_release(struct uxdp_ring *r, uint32_t n)
{
	/* Only the consumer writes *consumer, so reading it plainly is safe. */
	uxdp_store_release(r->consumer, *r->consumer + n);	/* D, pairs with A */
}

/* Release every peeked entry (the kernel's __xskq_cons_release). */
UXDP_INLINE void uxdp_ring_cons_publish(struct uxdp_ring *r)
{
	uxdp_store_release(r->consumer, r->cached_cons);	/* D, pairs with A */
}

/* Un-peek the @n most recently peeked, not yet released entries. */
UXDP_INLINE void uxdp_ring_cons_cancel(struct uxdp_ring *r, uint32_t n)
{
	r->cached_cons -= n;
	/* The same for a producer index read ahead of what was peeked: the
	 * handle never holds more than a ring (see uxdp_ring_prod_cancel). */
	if (uxdp_unlikely(r->cached_prod - r->cached_cons > r->size))
		r->cached_prod = r->cached_cons + r->size;
}

/*
 * need_wakeup: the ring's consumer (a driver, the kernel) sets the flag when
 * it will not look at the ring again until woken, and clears it when it
 * polls again. Only that side writes the word, so a plain read-modify-write
 * is enough; it is a hint that orders nothing, so relaxed accesses suffice,
 * as in the kernel (READ_ONCE / plain stores).
 */
UXDP_INLINE bool uxdp_ring_needs_wakeup(const struct uxdp_ring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_RELAXED) &
	       UXDP_RING_NEED_WAKEUP;
}

UXDP_INLINE void uxdp_ring_set_need_wakeup(struct uxdp_ring *r)
{
	uint32_t f = __atomic_load_n(r->flags, __ATOMIC_RELAXED);

	if (!(f & UXDP_RING_NEED_WAKEUP))
		__atomic_store_n(r->flags, f | UXDP_RING_NEED_WAKEUP,
				 __ATOMIC_RELAXED);
}

UXDP_INLINE void uxdp_ring_clear_need_wakeup(struct uxdp_ring *r)
{
	uint32_t f = __atomic_load_n(r->flags, __ATOMIC_RELAXED);

	if (f & UXDP_RING_NEED_WAKEUP)
		__atomic_store_n(r->flags, f & ~UXDP_RING_NEED_WAKEUP,
				 __ATOMIC_RELAXED);
}

/*
 * Entries in the ring as the shared indices show them right now (for stats
 * and audits, not for the fast path). Returns producer - consumer.
 */
UXDP_INLINE uint32_t uxdp_ring_count(const struct uxdp_ring *r)
{
	return uxdp_load_acquire(r->producer) - uxdp_load_acquire(r->consumer);
}

#ifdef __cplusplus
}
#endif

#endif /* UXDP_RING_H */
