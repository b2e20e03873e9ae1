/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Buffers to frames and back, and returning memory to its owner: a pool
 * buffer to its pool (lock-free on the pool's thread, the pool's return lock
 * from any other), anything else to its allocator.
 */
#include "../internal.h"

#include <uxdp/pool.h>
#include <uxdp/xdp.h>

#include "xdp_internal.h"

/* The pool head behind a POOL-type buffer (see struct uxdp_mem_info). */
static inline struct uxdp_buff *mem_pool_head(const struct uxdp_mem_info *mem,
					      struct uxdp_buff *buf)
{
	return mem->owner ? (struct uxdp_buff *)mem->owner : buf;
}

/* Give pool buffers back: free list on the owner thread, else remote. */
void xdp_pool_return(struct uxdp_buff **heads, uint32_t n)
{
	struct uxdp_pool *pool = uxdp_buff_pool(heads[0]);

	if (likely(uxdp_pool_is_owner(pool)))
		uxdp_pool_free_batch(pool, heads, n);
	else
		uxdp_pool_free_remote(pool, heads, n);
}

static inline void mem_return(const struct uxdp_mem_info *mem,
			      struct uxdp_buff *head, void *hard_start)
{
	if (mem->type == UXDP_MEM_POOL) {
		xdp_pool_return(&head, 1);
	} else {
		struct uxdp_mem_allocator *a = mem->owner;

		a->free(a, hard_start);
	}
}

UXDP_EXPORT void uxdp_frame_return(struct uxdp_frame *f)
{
	/* Read the fields before handing the memory back: it holds f. */
	struct uxdp_mem_info mem = f->mem;

	mem_return(&mem, mem.owner, f);
}

UXDP_EXPORT void uxdp_buff_return(struct uxdp_buff *buf)
{
	const struct uxdp_mem_info *mem = &buf->rxq->mem;

	if (mem->type == UXDP_MEM_FRAME) {
		uxdp_frame_return(buf->data_hard_start);
		return;
	}
	mem_return(mem, mem_pool_head(mem, buf),
		   uxdp_frame_at(buf->data_hard_start));
}

UXDP_EXPORT void uxdp_frame_return_bulk(struct uxdp_frame **frames,
					uint32_t n)
{
	struct uxdp_buff *heads[UXDP_BULK_SIZE];
	struct uxdp_pool *cur = NULL;
	uint32_t i, k = 0;

	/*
	 * Consecutive frames of one pool go back in one call (one lock from a
	 * foreign thread): the xdp_return_frame_bulk idea.
	 */
	for (i = 0; i < n; i++) {
		struct uxdp_frame *f = frames[i];
		struct uxdp_buff *head;

		if (f->mem.type != UXDP_MEM_POOL) {
			uxdp_frame_return(f);
			continue;
		}
		head = f->mem.owner;
		if (k && (uxdp_buff_pool(head) != cur || k == UXDP_BULK_SIZE)) {
			xdp_pool_return(heads, k);
			k = 0;
		}
		cur = uxdp_buff_pool(head);
		heads[k++] = head;
	}
	if (k)
		xdp_pool_return(heads, k);
}
