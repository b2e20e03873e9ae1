/* SPDX-License-Identifier: BSD-2-Clause */
/* xdp layer internals, shared by src/xdp/ and (stats helpers) the layers above. */
#ifndef UXDP_XDP_INTERNAL_H
#define UXDP_XDP_INTERNAL_H

#include <uxdp/xdp.h>

struct uxdp_prog {
	uxdp_prog_fn run;
	void *priv;
	void (*fini)(void *priv);
	void *dl;		/* dlopen handle, if loaded */
	uint32_t refcnt;
	char name[UXDP_PROG_NAME_MAX + 1];
};

/*
 * One thread's bulk queue for one target (the kernel's xdp_dev_bulk_queue,
 * or veth's on-stack XDP_TX queue). Cache-line aligned: the queues of one
 * target for different threads sit side by side.
 */
struct uxdp_bq {
	struct uxdp_frame *q[UXDP_BULK_SIZE];
	uint32_t count;
	bool is_tx;		/* counts as XDP_TX (else redirect) */
	bool on_list;		/* linked on the thread's flush list */
	struct uxdp_xdp_target *target;
	struct uxdp_xdp_rxq *rxq;	/* ingress queue: gets the counts */
	struct uxdp_bq *next;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct uxdp_xdp_cpu {
	uint32_t id;			/* 0..UXDP_MAX_THREADS-1 */
	const struct uxdp_prog *prog;	/* the current poll's program */
	struct uxdp_xdp_rxq *rxq;	/* the current poll's queue */
	struct uxdp_xdp_target *ri_target;	/* set by the redirect helpers */
	struct uxdp_bq *flush_list;
	struct uxdp_bq tx_bq;
	/*
	 * Pool buffers dropped in this poll, handed back together when full,
	 * when the pool changes and at the end of the poll (the kernel's
	 * xdp_frame_bulk): one owner check and one call per bulk.
	 */
	struct uxdp_buff *ret_q[UXDP_BULK_SIZE];
	uint32_t ret_n;
	struct uxdp_pool *ret_pool;
};

extern UXDP_TLS_FAST struct uxdp_xdp_cpu *uxdp_tls_cpu;

/* uxdp_thread_index() without the call, for in-tree drivers. */
static inline uint32_t xdp_thread_index(void)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	return cpu ? cpu->id : uxdp_thread_index();
}

/* Hand @n heads of one pool back: lock-free on its thread, else remote. */
void xdp_pool_return(struct uxdp_buff **heads, uint32_t n);

/*
 * Counters with one writer and any number of readers: a relaxed load and
 * store compile to plain moves (no locked instruction) yet are not a data
 * race for readers on other threads.
 */
static inline void stat_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline void stat_inc(uint64_t *c)
{
	stat_add(c, 1);
}

static inline uint64_t stat_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif /* UXDP_XDP_INTERNAL_H */
