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

/* Give pool buffers back: free list on the owner thread, else remote. */
void xdp_pool_return(struct uxdp_buff **heads, uint32_t n)
{
	struct uxdp_pool *pool = uxdp_buff_pool(heads[0]);

	if (likely(uxdp_pool_is_owner(pool)))
		uxdp_pool_free_batch(pool, heads, n);
	else
		uxdp_pool_free_remote(pool, heads, n);
}

/* Memory that is not a pool's goes back to its allocator. */
static void alloc_return(const struct uxdp_mem_info *mem, void *hard_start)
{
	struct uxdp_mem_allocator *a = mem->owner;

	a->free(a, hard_start);
}

UXDP_EXPORT void uxdp_frame_return(struct uxdp_frame *f)
{
	/* Read the fields before handing the memory back: it holds f. */
	struct uxdp_mem_info mem = f->mem;
	struct uxdp_buff *head;

	if (xdp_mem_is_pool(&mem)) {
		head = xdp_mem_pool_head(&mem, NULL);
		xdp_pool_return(&head, 1);
	} else {
		alloc_return(&mem, f);
	}
}

UXDP_EXPORT void uxdp_buff_return(struct uxdp_buff *buf)
{
	const struct uxdp_mem_info *mem = xdp_buff_mem(buf);
	struct uxdp_buff *head;

	if (xdp_mem_is_pool(mem)) {
		head = xdp_mem_pool_head(mem, buf);
		xdp_pool_return(&head, 1);
	} else if (mem != &buf->rxq->mem) {
		/* A frame of an allocator's memory: its header names it. */
		uxdp_frame_return(buf->data_hard_start);
	} else {
		alloc_return(mem, uxdp_frame_at(buf->data_hard_start));
	}
}

UXDP_EXPORT void uxdp_frame_return_bulk(struct uxdp_frame **frames,
					uint32_t n)
{
	struct uxdp_buff *q[UXDP_BULK_SIZE];
	struct xdp_ret_bulk rb;
	uint32_t i;

	/* Consecutive frames of one pool go back in one call (one lock from
	 * a foreign thread). */
	rb.n = 0;
	for (i = 0; i < n; i++) {
		struct uxdp_frame *f = frames[i];

		if (unlikely(!xdp_mem_is_pool(&f->mem))) {
			uxdp_frame_return(f);
			continue;
		}
		xdp_ret_bulk_add(&rb, q, xdp_mem_pool_head(&f->mem, NULL));
	}
	xdp_ret_bulk_flush(&rb, q);
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

