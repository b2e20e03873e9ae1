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
	/* Depth of RCU read-side sections this thread is in (xdp_rcu_lock). */
	uint32_t rcu_nest;
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

/*
 * Grace periods: what keeps a device, a program or a map alive while a
 * thread may still be using it (the kernel's RCU, from liburcu).
 *
 * Readers are polls and transmits: uxdp_xdp_poll_begin() .. poll_end(),
 * uxdp_dev_xmit(), and a poll group's walk over its queues. A writer
 * unpublishes an object (clears a map slot, swaps a program, takes a device
 * off a list), calls xdp_synchronize(), and may then free it: every reader
 * that could have found the object has finished.
 *
 * The flavour is liburcu's membarrier one (urcu-memb): its read side is a
 * couple of thread-local stores with no fence, and a thread out of a read
 * section needs no bookkeeping at all. QSBR, whose read side is free, would
 * make every thread that ever polls report quiescent states or go offline
 * around each call (measured here at ~180 cycles per offline+online pair),
 * and uxdp_dev_poll() is called from application threads uxdp does not
 * control; the memb read side costs ~20 cycles per poll, about what the
 * per-queue sequence count it replaces cost.
 *
 * Nesting is counted here, so only the outermost section calls into the
 * library. A thread must be registered (uxdp_xdp_cpu_get() does it).
 */
void xdp_rcu_read_lock_slow(struct uxdp_xdp_cpu *cpu);
void xdp_rcu_read_unlock_slow(struct uxdp_xdp_cpu *cpu);

static inline void xdp_rcu_lock(struct uxdp_xdp_cpu *cpu)
{
	if (!cpu->rcu_nest++)
		xdp_rcu_read_lock_slow(cpu);
}

static inline void xdp_rcu_unlock(struct uxdp_xdp_cpu *cpu)
{
	if (!--cpu->rcu_nest)
		xdp_rcu_read_unlock_slow(cpu);
}

/* Whether the calling thread is inside a read-side section. */
static inline bool xdp_rcu_in_reader(void)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	return cpu && cpu->rcu_nest;
}

/*
 * Wait for a grace period. Must not be called from inside a read section
 * (from a program, a pass handler, a driver's poll or xmit): that would
 * wait for itself. Returns 0, or -EDEADLK (with uxdp_errmsg() set) when
 * called from one, having waited for nothing.
 */
int xdp_synchronize(const char *who);

/* uxdp_thread_index() without the call, for in-tree drivers. */
static inline uint32_t xdp_thread_index(void)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	return cpu ? cpu->id : uxdp_thread_index();
}

/*
 * Clear every map slot that holds @t (a device going away). Returns how
 * many. The caller then waits a grace period before freeing @t.
 */
uint32_t xdp_maps_forget(const struct uxdp_xdp_target *t);

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
