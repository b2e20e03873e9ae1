/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring memory and handle set-up. The data-path helpers are inline in
 * <uxdp/ring.h> (exported as symbols too, by src/common/inline.c).
 */
#include "../internal.h"

#include <sys/mman.h>

#include <uxdp/ring.h>

static size_t ring_hdr_size(void)
{
	return UXDP_RING_OFF_DESC;
}

UXDP_EXPORT size_t uxdp_ring_mem_size(uint32_t entries, uint32_t elem_size)
{
	if (!is_pow2_u64(entries) || entries > UXDP_RING_MAX_ENTRIES)
		return 0;
	if (elem_size != sizeof(uint64_t) && elem_size != sizeof(struct uxdp_desc))
		return 0;
	return ring_hdr_size() + (size_t)entries * elem_size;
}

static size_t page_round(size_t len)
{
	return (len + 4095) & ~(size_t)4095;
}

/*
 * Rings whose entry array is at most this big are populated when mapped:
 * 2^18 addresses or 2^17 descriptors, far past the usual 2048 and the sizes
 * real queues use. For them, faulting in every page up front costs at most
 * ~512 page faults (well under a millisecond) and keeps first-touch faults
 * off the data path. Bigger rings (up to 16 GiB at 2^30 descriptors) are
 * mapped lazily and without a swap reservation: populating them would take
 * seconds to minutes and all that memory, although a ring is rarely filled
 * near its size, and a mistyped size should not cost either.
 */
#define RING_POPULATE_MAX	(2U << 20)

UXDP_EXPORT __cold void *uxdp_ring_mem_alloc(uint32_t entries,
					     uint32_t elem_size)
{
	size_t len = uxdp_ring_mem_size(entries, elem_size);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *mem;

	uxdp_clear_err();
	if (!len) {
		errno = -uxdp_fail(EINVAL,
				   "ring: %u entries of %u bytes: entries must be "
				   "a power of two in [1, 2^30], elements 8 or 16 "
				   "bytes", entries, elem_size);
		return NULL;
	}
	if (len - ring_hdr_size() <= RING_POPULATE_MAX)
		flags |= MAP_POPULATE;
	else
		flags |= MAP_NORESERVE;
	mem = mmap(NULL, page_round(len), PROT_READ | PROT_WRITE, flags, -1,
		   0);
	if (mem == MAP_FAILED) {
		errno = -uxdp_fail(ENOMEM,
				   "ring: mmap of %zu bytes (%u entries of %u "
				   "bytes) failed: %s", page_round(len),
				   entries, elem_size, strerror(errno));
		return NULL;
	}
	return mem;
}

UXDP_EXPORT __cold void uxdp_ring_mem_free(void *mem, uint32_t entries,
					   uint32_t elem_size)
{
	size_t len = uxdp_ring_mem_size(entries, elem_size);

	if (mem && len)
		munmap(mem, page_round(len));
}

static const struct uxdp_ring_offsets std_offsets = {
	.producer = UXDP_RING_OFF_PRODUCER,
	.consumer = UXDP_RING_OFF_CONSUMER,
	.desc = UXDP_RING_OFF_DESC,
	.flags = UXDP_RING_OFF_FLAGS,
};

static int ring_init(struct uxdp_ring *r, void *mem, uint32_t entries,
		     const struct uxdp_ring_offsets *off)
{
	char *base = mem;

	uxdp_clear_err();
	if (!r || !mem)
		return uxdp_fail(EINVAL, "ring: NULL handle or memory");
	if (!is_pow2_u64(entries) || entries > UXDP_RING_MAX_ENTRIES)
		return uxdp_fail(EINVAL,
				 "ring: %u entries: must be a power of two in "
				 "[1, 2^30]", entries);
	if (!off)
		off = &std_offsets;
	if ((off->producer | off->consumer | off->flags) & 3 || off->desc & 7)
		return uxdp_fail(EINVAL, "ring: misaligned offsets");
	memset(r, 0, sizeof(*r));
	r->mask = entries - 1;
	r->size = entries;
	r->producer = (uint32_t *)(base + off->producer);
	r->consumer = (uint32_t *)(base + off->consumer);
	r->flags = (uint32_t *)(base + off->flags);
	r->ring = base + off->desc;
	return 0;
}

UXDP_EXPORT __cold int uxdp_ring_init_prod(struct uxdp_ring *r, void *mem,
					   uint32_t entries,
					   const struct uxdp_ring_offsets *off)
{
	int err = ring_init(r, mem, entries, off);

	if (err)
		return err;
	/* The producer owns *producer; start from the consumer's last word,
	 * checked as uxdp_ring_prod_nb_free() checks it: attaching to a ring
	 * whose consumer makes no sense starts full, never over-full. */
	r->cached_prod = uxdp_load_acquire(r->producer);
	r->cached_cons = uxdp_load_acquire(r->consumer);	/* A */
	if (r->cached_prod - r->cached_cons > r->size)
		r->cached_cons = r->cached_prod - r->size;
	return 0;
}

UXDP_EXPORT __cold int uxdp_ring_init_cons(struct uxdp_ring *r, void *mem,
					   uint32_t entries,
					   const struct uxdp_ring_offsets *off)
{
	int err = ring_init(r, mem, entries, off);

	if (err)
		return err;
	r->cached_cons = uxdp_load_acquire(r->consumer);
	r->cached_prod = uxdp_load_acquire(r->producer);	/* C */
	/* A producer more than a ring ahead: empty (uxdp_ring_cons_nb_avail). */
	if (r->cached_prod - r->cached_cons > r->size)
		r->cached_prod = r->cached_cons;
	return 0;
}
