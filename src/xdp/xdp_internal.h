/* SPDX-License-Identifier: BSD-2-Clause */
/* xdp layer internals, shared by src/xdp/ and (stats helpers) the layers above. */
#ifndef UXDP_XDP_INTERNAL_H
#define UXDP_XDP_INTERNAL_H

#include <uxdp/driver.h>
#include <uxdp/pool.h>
#include <uxdp/xdp.h>


/*
 * Something frames can be transmitted to in bulk: a device (the dev layer
 * embeds one per device), or a socket (rcv below). xmit follows the kernel's
 * ndo_xdp_xmit rule (5.13+): it sends frames in order, stops at the first it
 * cannot send, and returns how many it sent, or a negative errno if it sent
 * none; it frees nothing. The caller returns frames [sent, n) exactly once.
 * Unknown flag bits make it return -EINVAL.
 */
struct uxdp_xdp_target {
	int (*xmit)(struct uxdp_xdp_target *t, int n,
		    struct uxdp_frame **frames, uint32_t flags);
	/*
	 * A target that takes buffers as they are (an AF_XDP socket, the
	 * kernel's xsk_rcv): a redirect to it calls this instead of making a
	 * frame. Returns 0 if it kept the buffer, 1 if the caller gives the
	 * buffer back (the target copied it, or dropped it and counted the
	 * drop itself), or -errno if it refused it (redirect_err). flush
	 * runs once at the end of every poll that called rcv (the kernel's
	 * xsk_flush from xdp_do_flush). NULL for devices.
	 */
	int (*rcv)(struct uxdp_xdp_target *t, struct uxdp_buff *buf);
	void (*flush)(struct uxdp_xdp_target *t);
	/* Frames per bulk queue for this target, 1..UXDP_BULK_SIZE
	 * (1 = no bulking: one xmit call per frame). */
	uint32_t bulk;
	/* Per-thread bulk queues, allocated by xdp_target_init. */
	struct uxdp_bq *bqs;
};

/* Set up @t's per-thread bulk queues. Returns 0 or -ENOMEM. */
int xdp_target_init(struct uxdp_xdp_target *t);
/* Free them. The target must not be in use (no thread has frames queued). */
void xdp_target_fini(struct uxdp_xdp_target *t);
/* Set the bulk size (clamped to 1..UXDP_BULK_SIZE). */
void xdp_target_set_bulk(struct uxdp_xdp_target *t, uint32_t bulk);

/*
 * Everything the xdp layer keeps per receive queue. The dev layer embeds one
 * per RX queue and passes it to xdp_poll_begin(); the driver's poll then
 * hands its buffers to uxdp_rx_run_batch().
 */
struct uxdp_xdp_rxq {
	struct uxdp_rxq_info info;
	struct uxdp_prog *prog;		/* RCU-like: see xdp_rxq_set_prog */
	/* Where XDP_TX frames go: the ingress device's own target. */
	struct uxdp_xdp_target *tx_target;
	uxdp_pass_fn pass;
	void *pass_arg;
	uint32_t warned;		/* a driver bug was reported */
	struct uxdp_rxq_stats stats;
};

/*
 * Attach @prog (NULL detaches) while traffic flows. The polling thread picks
 * the new program up at its next poll; when this returns, no poll is still
 * running the old program (a grace period), so the caller may drop its
 * reference. *@old gets the previous program (the caller now owns that
 * reference). Returns 0, or -EDEADLK from inside a poll (a program or a
 * pass handler), where it would wait for itself; nothing changes then.
 */
int xdp_rxq_set_prog(struct uxdp_xdp_rxq *rxq, struct uxdp_prog *prog,
			  struct uxdp_prog **old);

/*
 * Per-thread datapath state (the kernel's per-CPU bulk queues and
 * bpf_redirect_info): the thread's slot in every target's bulk queues, the
 * pending redirect, and the list of queues to flush at the end of the poll.
 * Opaque; each polling thread gets its own on first use.
 */
struct uxdp_xdp_cpu;

/* The calling thread's state (created on first use). NULL only when more
 * than UXDP_MAX_THREADS threads have polled. */
struct uxdp_xdp_cpu *xdp_cpu_get(void);

/*
 * Mark the start/end of one poll of @rxq by the calling thread. Between
 * them the thread is in a read-side section: programs, maps and devices it
 * reaches stay alive until end. end flushes every bulk queue the poll
 * filled (XDP_TX first, then redirects), with UXDP_XMIT_FLUSH. The dev
 * layer calls these around each driver poll.
 */
struct uxdp_xdp_cpu *xdp_poll_begin(struct uxdp_xdp_rxq *rxq);
void xdp_poll_end(struct uxdp_xdp_cpu *cpu, struct uxdp_xdp_rxq *rxq);



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

/*
 * Pool buffers on their way home, batched per pool (the kernel's
 * xdp_frame_bulk): consecutive buffers of one pool go back in one
 * xdp_pool_return() call, so one owner check and, from a foreign thread,
 * one lock per batch. Used by the datapath's drops (per thread, across a
 * poll) and by uxdp_frame_return_bulk() (on the stack, one call). The
 * heads themselves sit in a separate array of UXDP_BULK_SIZE, passed to
 * each call: the array escapes into xdp_pool_return(), and were the count
 * beside it, an on-stack batch would have its count and pool stored to
 * memory for every buffer instead of kept in registers.
 */
struct xdp_ret_bulk {
	uint32_t n;
	struct uxdp_pool *pool;		/* of the n heads, when n > 0 */
};

struct uxdp_xdp_cpu {
	uint32_t id;			/* 0..UXDP_MAX_THREADS-1 */
	/* Depth of RCU read-side sections this thread is in (xdp_rcu_lock). */
	uint32_t rcu_nest;
	const struct uxdp_prog *prog;	/* the current poll's program */
	struct uxdp_xdp_rxq *rxq;	/* the current poll's queue */
	struct uxdp_xdp_target *ri_target;	/* set by the redirect helpers */
	struct uxdp_bq *flush_list;
	struct uxdp_bq tx_bq;
	/* Pool buffers dropped in this poll, handed back when the batch
	 * fills, when the pool changes and at the end of the poll. */
	struct uxdp_buff *ret_q[UXDP_BULK_SIZE];
	struct xdp_ret_bulk ret;
};

extern UXDP_TLS_FAST struct uxdp_xdp_cpu *uxdp_tls_cpu;

/*
 * Grace periods: what keeps a device, a program or a map alive while a
 * thread may still be using it (the kernel's RCU, from liburcu).
 *
 * Readers are polls and transmits: xdp_poll_begin() .. poll_end(),
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
 * library. A thread must be registered (xdp_cpu_get() does it).
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

/* For a call_rcu() callback: what every reader did before the grace
 * period ended happens before it (only ThreadSanitizer needs telling). */
void xdp_rcu_after_grace(void);

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
 * Finding where memory goes home, for every return path: the mem info that
 * names the owner (xdp_buff_mem), whether that owner is a pool
 * (xdp_mem_is_pool; else it is an allocator), and then the pool head
 * (xdp_mem_pool_head). Separate steps so that a caller's test of the type
 * is the only branch: a frame's head is just its owner.
 */

/* Who owns @buf's memory: a buffer made from a frame (UXDP_MEM_FRAME) has
 * the owner in the frame header at data_hard_start. */
static inline const struct uxdp_mem_info *xdp_buff_mem(
	const struct uxdp_buff *buf)
{
	const struct uxdp_mem_info *mem = &buf->rxq->mem;

	if (mem->type == UXDP_MEM_FRAME)
		mem = &((const struct uxdp_frame *)buf->data_hard_start)->mem;
	return mem;
}

/* Whether @mem (not UXDP_MEM_FRAME) is a pool's: a socket's buffers
 * (UXDP_MEM_XSK) are pool buffers too. */
static inline bool xdp_mem_is_pool(const struct uxdp_mem_info *mem)
{
	return mem->type == UXDP_MEM_POOL || mem->type == UXDP_MEM_XSK;
}

/*
 * The pool head that pool memory @mem goes home to. @self stands for it
 * when @mem names none (a driver receiving into pool heads leaves owner
 * NULL); a frame's header always names its owner, so frames pass NULL.
 */
static inline struct uxdp_buff *xdp_mem_pool_head(
	const struct uxdp_mem_info *mem, struct uxdp_buff *self)
{
	return mem->owner ? (struct uxdp_buff *)mem->owner : self;
}

/* Hand back what @rb holds in @q (xdp_flush_frame_bulk). */
static inline void xdp_ret_bulk_flush(struct xdp_ret_bulk *rb,
				      struct uxdp_buff **q)
{
	if (rb->n) {
		xdp_pool_return(q, rb->n);
		rb->n = 0;
	}
}

/*
 * Queue pool head @head (from xdp_mem_pool_head) in @rb's array @q (of
 * UXDP_BULK_SIZE), handing the batch back first if it is full or holds
 * another pool's buffers (xdp_return_frame_bulk). The caller flushes.
 */
static inline void xdp_ret_bulk_add(struct xdp_ret_bulk *rb,
				    struct uxdp_buff **q,
				    struct uxdp_buff *head)
{
	struct uxdp_pool *pool = uxdp_buff_pool(head);

	if (rb->n && (pool != rb->pool || rb->n == UXDP_BULK_SIZE)) {
		xdp_pool_return(q, rb->n);
		rb->n = 0;
	}
	rb->pool = pool;
	q[rb->n++] = head;
}

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
