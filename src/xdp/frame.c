/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Buffers to frames and back, and returning memory to its owner: a pool
 * buffer to its pool (lock-free on the pool's thread, the pool's return lock
 * from any other), anything else to its allocator.
 */
#include "../internal.h"

#include <stdlib.h>
#include <string.h>

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
	/* A socket's buffers are pool buffers too (frames never are XSK:
	 * they are copies). */
	if (mem->type == UXDP_MEM_POOL || mem->type == UXDP_MEM_XSK) {
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

/* Heap memory for copied frames: free() takes it back, on any thread. */
static void heap_free(struct uxdp_mem_allocator *a, void *hard_start)
{
	(void)a;
	free(hard_start);
}

static struct uxdp_mem_allocator heap_allocator = { .free = heap_free };

UXDP_EXPORT struct uxdp_frame *uxdp_frame_copy_buff(struct uxdp_buff *buf)
{
	const char *data = buf->data, *meta = buf->data_meta;
	uint32_t len = (uint32_t)((const char *)buf->data_end - data);
	uint32_t metasize = meta <= data ? (uint32_t)(data - meta) : 0;
	struct uxdp_rxq_info info = {
		.dev = buf->rxq->dev,
		.queue_index = buf->rxq->queue_index,
		.ifindex = buf->rxq->ifindex,
		.mem = { .type = UXDP_MEM_ALLOC, .owner = &heap_allocator },
	};
	/* The usual headroom, or more for a header and long metadata. */
	uint32_t hr = (uint32_t)(sizeof(struct uxdp_frame) + metasize + 7) &
		      ~7U;
	uint32_t sz;
	char *mem;
	struct uxdp_buff b;
	struct uxdp_frame *f;

	if (hr < UXDP_PACKET_HEADROOM)
		hr = UXDP_PACKET_HEADROOM;
	sz = hr + len + UXDP_FRAME_TAILROOM;
	/* malloc()ed memory is 16-byte aligned: the header goes at its
	 * start, which is what the allocator's free() gets back. */
	mem = malloc(sz);
	if (!mem)
		return NULL;
	b = (struct uxdp_buff){
		.data_hard_start = mem,
		.data = mem + hr,
		.data_end = mem + hr + len,
		.data_meta = mem + hr - metasize,
		.rxq = &info,
		.frame_sz = sz,
		.flags = buf->flags,
	};
	memcpy(b.data_meta, data - metasize, metasize + len);
	f = uxdp_buff_to_frame(&b);
	if (!f) {
		free(mem);
		return NULL;
	}
	uxdp_buff_return(buf);
	return f;
}

