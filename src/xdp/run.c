/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Running programs and carrying out their verdicts: per-thread state, the
 * XDP_TX and redirect bulk queues, and the flush at the end of each poll.
 *
 * Bulk queues belong to one thread (the kernel's per-CPU queues), so they
 * need no lock; the target's xmit takes whatever lock the target needs, once
 * per flush: that is the cost bulking amortises.
 */
#include "../internal.h"

#include <pthread.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include <uxdp/pool.h>
#include <uxdp/xdp.h>

#include "xdp_internal.h"

/* ---- per-thread state --------------------------------------------------------- */

static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cpu_ids_used;		/* bit i: id i taken (UXDP_MAX_THREADS) */
static pthread_key_t cpu_key;
static pthread_once_t cpu_key_once = PTHREAD_ONCE_INIT;
UXDP_TLS_FAST struct uxdp_xdp_cpu *uxdp_tls_cpu;

static void cpu_release(void *arg)
{
	struct uxdp_xdp_cpu *cpu = arg;

	/* A thread leaving mid-section would stall every grace period. */
	if (cpu->rcu_nest) {
		uxdp_pr(UXDP_WARN, "uxdp: thread %u exits inside a poll or "
			"transmit\n", cpu->id);
		cpu->rcu_nest = 1;
		xdp_rcu_unlock(cpu);
	}
	urcu_memb_unregister_thread();
	pthread_mutex_lock(&cpu_lock);
	cpu_ids_used &= ~(1ULL << cpu->id);
	pthread_mutex_unlock(&cpu_lock);
	/* A later destructor of this thread that polls again gets a new
	 * state (and this destructor again), not the freed one. The index
	 * goes back to the pool: a thread started after this one exits may
	 * get it. */
	uxdp_tls_cpu = NULL;
	free(cpu);
}

static void cpu_key_init(void)
{
	pthread_key_create(&cpu_key, cpu_release);
}

static __attribute__((noinline, cold)) struct uxdp_xdp_cpu *cpu_create(void)
{
	struct uxdp_xdp_cpu *cpu;
	int id;

	pthread_once(&cpu_key_once, cpu_key_init);
	cpu = calloc(1, sizeof(*cpu));
	if (!cpu)
		return NULL;
	pthread_mutex_lock(&cpu_lock);
	id = cpu_ids_used == ~0ULL ? -1 : __builtin_ctzll(~cpu_ids_used);
	if (id >= 0)
		cpu_ids_used |= 1ULL << id;
	pthread_mutex_unlock(&cpu_lock);
	if (id < 0) {
		uxdp_pr(UXDP_WARN, "uxdp: more than %d polling threads\n",
			UXDP_MAX_THREADS);
		free(cpu);
		return NULL;
	}
	cpu->id = (uint32_t)id;
	/* Every thread that polls or transmits is an RCU reader; it leaves
	 * the registry when it exits (cpu_release, the key's destructor). */
	urcu_memb_register_thread();
	pthread_setspecific(cpu_key, cpu);
	uxdp_tls_cpu = cpu;
	return cpu;
}

/* ---- grace periods (see xdp_internal.h) ------------------------------------- */

#if defined(__SANITIZE_THREAD__)
/*
 * TSan cannot see the ordering liburcu gets from membarrier(): tell it that
 * whatever a reader did before leaving its section happens before what a
 * writer does after the grace period that waited for it.
 */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char rcu_hb;
#define rcu_hb_release()	__tsan_release(&rcu_hb)
#define rcu_hb_acquire()	__tsan_acquire(&rcu_hb)
#else
#define rcu_hb_release()	do { } while (0)
#define rcu_hb_acquire()	do { } while (0)
#endif

void xdp_rcu_read_lock_slow(struct uxdp_xdp_cpu *cpu)
{
	(void)cpu;
	urcu_memb_read_lock();
}

void xdp_rcu_read_unlock_slow(struct uxdp_xdp_cpu *cpu)
{
	(void)cpu;
	rcu_hb_release();
	urcu_memb_read_unlock();
}

void xdp_rcu_after_grace(void)
{
	rcu_hb_acquire();
}

int xdp_synchronize(const char *who)
{
	if (xdp_rcu_in_reader())
		return uxdp_fail(EDEADLK,
				 "%s: called from inside a poll or transmit (a "
				 "program, a pass handler, a driver): it would "
				 "wait for itself", who);
	urcu_memb_synchronize_rcu();
	rcu_hb_acquire();
	return 0;
}

struct uxdp_xdp_cpu *xdp_cpu_get(void)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	return likely(cpu) ? cpu : cpu_create();
}

UXDP_EXPORT uint32_t uxdp_thread_index(void)
{
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

	return cpu ? cpu->id : 0;
}

/* ---- targets and their bulk queues ---------------------------------------------- */

__cold int xdp_target_init(struct uxdp_xdp_target *t)
{
	if (posix_memalign((void **)&t->bqs, UXDP_CACHE_LINE,
			   UXDP_MAX_THREADS * sizeof(*t->bqs)))
		return -ENOMEM;
	memset(t->bqs, 0, UXDP_MAX_THREADS * sizeof(*t->bqs));
	if (!t->bulk)
		t->bulk = UXDP_BULK_SIZE;
	return 0;
}

__cold void xdp_target_fini(struct uxdp_xdp_target *t)
{
	free(t->bqs);
	t->bqs = NULL;
}

void xdp_target_set_bulk(struct uxdp_xdp_target *t,
					  uint32_t bulk)
{
	bulk = bulk < 1 ? 1 : bulk > UXDP_BULK_SIZE ? UXDP_BULK_SIZE : bulk;
	__atomic_store_n(&t->bulk, bulk, __ATOMIC_RELAXED);
}

/*
 * Send everything queued in one xmit call and give back what the target did
 * not take: the kernel's bq_xmit_all. The target frees nothing (5.13+ rule);
 * frames [sent, n) are returned here, exactly once.
 */
static __attribute__((noinline)) void bq_flush(struct uxdp_bq *bq,
					      uint32_t flags)
{
	struct uxdp_rxq_stats *st;
	int n = (int)bq->count, sent;

	if (!n)
		return;
	st = &bq->rxq->stats;
	bq->count = 0;
	sent = bq->target->xmit(bq->target, n, bq->q, flags);
	stat_inc(&st->xmit_calls);
	if (unlikely(sent < 0))
		sent = 0;
	else if (unlikely(sent > n))	/* a driver bug; do not double free */
		sent = n;
	if (unlikely(sent < n))
		uxdp_frame_return_bulk(bq->q + sent, (uint32_t)(n - sent));
	if (bq->is_tx) {
		stat_add(&st->tx, (uint64_t)sent);
		stat_add(&st->tx_err, (uint64_t)(n - sent));
	} else {
		stat_add(&st->redirect, (uint64_t)sent);
		stat_add(&st->redirect_err, (uint64_t)(n - sent));
	}
}

static inline void bq_enqueue(struct uxdp_xdp_cpu *cpu, struct uxdp_bq *bq,
			      struct uxdp_frame *f)
{
	uint32_t bulk = __atomic_load_n(&bq->target->bulk, __ATOMIC_RELAXED);

	/* Full: send this bulk now, without the doorbell (as the kernel). */
	if (unlikely(bq->count >= bulk))
		bq_flush(bq, 0);
	if (!bq->count && !bq->on_list) {
		bq->on_list = true;
		bq->next = cpu->flush_list;
		cpu->flush_list = bq;
	}
	bq->q[bq->count++] = f;
}

static __attribute__((noinline)) void bq_repoint(struct uxdp_bq *bq,
						  struct uxdp_xdp_rxq *rxq,
						  struct uxdp_xdp_target *t,
						  bool is_tx)
{
	/* A new target for the thread's XDP_TX queue, or a new ingress
	 * queue: send what the old pairing holds first. */
	bq_flush(bq, UXDP_XMIT_FLUSH);
	bq->target = t;
	bq->rxq = rxq;
	bq->is_tx = is_tx;
}

static inline void xdp_enqueue(struct uxdp_xdp_cpu *cpu,
			       struct uxdp_xdp_rxq *rxq,
			       struct uxdp_xdp_target *t,
			       struct uxdp_frame *f, bool is_tx)
{
	struct uxdp_bq *bq = is_tx ? &cpu->tx_bq : &t->bqs[cpu->id];

	if (unlikely(bq->target != t || bq->rxq != rxq))
		bq_repoint(bq, rxq, t, is_tx);
	bq_enqueue(cpu, bq, f);
}


/* ---- polls ---------------------------------------------------------------------- */

struct uxdp_xdp_cpu *xdp_poll_begin(struct uxdp_xdp_rxq *rxq)
{
	struct uxdp_xdp_cpu *cpu = xdp_cpu_get();

	if (unlikely(!cpu))
		return NULL;
	/*
	 * A poll is a read-side section: the program read here, the targets
	 * its verdicts reach and the devices it transmits to stay alive until
	 * poll_end, however they are swapped or destroyed meanwhile. Acquire
	 * pairs with the release of the setter's exchange: a program that is
	 * found is seen initialised.
	 */
	xdp_rcu_lock(cpu);
	cpu->prog = __atomic_load_n(&rxq->prog, __ATOMIC_ACQUIRE);
	cpu->rxq = rxq;
	return cpu;
}

/* Return a buffer that did not become a frame, batching pool buffers. */
static inline void ret_buff(struct uxdp_xdp_cpu *cpu, struct uxdp_buff *buf)
{
	const struct uxdp_mem_info *mem = xdp_buff_mem(buf);

	if (unlikely(!xdp_mem_is_pool(mem))) {
		uxdp_buff_return(buf);
		return;
	}
	xdp_ret_bulk_add(&cpu->ret, cpu->ret_q, xdp_mem_pool_head(mem, buf));
}

void xdp_poll_end(struct uxdp_xdp_cpu *cpu,
				   struct uxdp_xdp_rxq *rxq)
{
	struct uxdp_bq *bq, *next;

	xdp_ret_bulk_flush(&cpu->ret, cpu->ret_q);
	/* XDP_TX first, then redirects (veth_poll, then xdp_do_flush). */
	bq_flush(&cpu->tx_bq, UXDP_XMIT_FLUSH);
	cpu->tx_bq.on_list = false;
	for (bq = cpu->flush_list; bq; bq = next) {
		next = bq->next;
		if (bq != &cpu->tx_bq) {
			bq_flush(bq, UXDP_XMIT_FLUSH);
			/* A socket publishes what this poll gave it. */
			if (bq->target->flush)
				bq->target->flush(bq->target);
		}
		bq->on_list = false;
		bq->next = NULL;
	}
	cpu->flush_list = NULL;
	cpu->prog = NULL;
	cpu->rxq = NULL;
	(void)rxq;
	xdp_rcu_unlock(cpu);
}

int xdp_rxq_set_prog(struct uxdp_xdp_rxq *rxq,
				      struct uxdp_prog *prog,
				      struct uxdp_prog **old)
{
	int err;

	uxdp_clear_err();
	if (xdp_rcu_in_reader())
		return xdp_synchronize("attach program");
	uxdp_prog_get(prog);
	/* Release: a poll that finds @prog sees it initialised. */
	*old = __atomic_exchange_n(&rxq->prog, prog, __ATOMIC_ACQ_REL);
	/* Every poll that may have read the old program has ended. */
	err = xdp_synchronize("attach program");
	return err;
}

/* ---- verdicts --------------------------------------------------------------------- */

UXDP_EXPORT uint32_t uxdp_redirect_target(struct uxdp_xdp_target *t)
{
	struct uxdp_xdp_cpu *cpu = uxdp_tls_cpu;

	if (unlikely(!cpu || !t))
		return UXDP_ABORTED;
	cpu->ri_target = t;
	return UXDP_REDIRECT;
}

/*
 * Counts of one batch, kept in locals and added to the queue's stats once
 * per batch: the stats line is written once, not three times per packet.
 * XDP_TX and XDP_REDIRECT are counted when their bulk queue is flushed
 * (sent or not); the rare verdicts go straight to the stats.
 */
struct run_counts {
	uint64_t packets, bytes, pass, drop, aborted, rcv, rcv_err;
};

static inline void counts_flush(struct uxdp_rxq_stats *st,
				const struct run_counts *c)
{
	stat_add(&st->packets, c->packets);
	stat_add(&st->bytes, c->bytes);
	if (c->pass)
		stat_add(&st->pass, c->pass);
	if (c->drop)
		stat_add(&st->drop, c->drop);
	if (c->aborted)
		stat_add(&st->aborted, c->aborted);
	if (c->rcv)
		stat_add(&st->redirect, c->rcv);
	if (c->rcv_err)
		stat_add(&st->redirect_err, c->rcv_err);
}

/*
 * A redirect to a target that takes buffers (a socket): no frame, no bulk
 * queue; the target goes on the thread's flush list (its per-thread bulk
 * queue, empty, is the list node) so that it publishes at the poll's end.
 */
static inline void run_rcv(struct uxdp_xdp_cpu *cpu, struct uxdp_xdp_rxq *rxq,
			   struct uxdp_xdp_target *t, struct uxdp_buff *buf,
			   struct run_counts *c)
{
	struct uxdp_bq *bq = &t->bqs[cpu->id];
	int r = t->rcv(t, buf);

	if (unlikely(r < 0)) {
		c->rcv_err++;
		ret_buff(cpu, buf);
		return;
	}
	c->rcv++;
	if (r)
		ret_buff(cpu, buf);
	if (!bq->on_list) {
		bq->target = t;
		bq->rxq = rxq;
		bq->is_tx = false;
		bq->on_list = true;
		bq->next = cpu->flush_list;
		cpu->flush_list = bq;
	}
}

static inline __attribute__((always_inline)) uint32_t
run_one(struct uxdp_xdp_cpu *cpu, struct uxdp_xdp_rxq *rxq,
	const struct uxdp_prog *prog, struct uxdp_buff *buf,
	struct run_counts *c)
{
	struct uxdp_rxq_stats *st = &rxq->stats;
	struct uxdp_xdp_target *t;
	struct uxdp_frame *f;
	uint32_t act;

	c->bytes += uxdp_buff_len(buf);
	cpu->ri_target = NULL;
	act = prog->run(buf, prog->priv);
	/*
	 * An if-chain, hottest verdicts first, rather than a switch: the
	 * switch's jump table is an indirect branch, which a retpoline build
	 * (the seed's setting, uxdp-bench redirect) turns into a thunk.
	 */
	if (likely(act == UXDP_TX)) {
		f = uxdp_buff_to_frame(buf);
		if (unlikely(!f || !rxq->tx_target))
			goto frame_err;
		xdp_enqueue(cpu, rxq, rxq->tx_target, f, true);
		return UXDP_TX;
	}
	if (act == UXDP_REDIRECT) {
		t = cpu->ri_target;
		if (unlikely(!t)) {
			stat_inc(&st->redirect_no_target);
			goto drop;
		}
		if (t->rcv) {
			run_rcv(cpu, rxq, t, buf, c);
			return UXDP_REDIRECT;
		}
		f = uxdp_buff_to_frame(buf);
		if (unlikely(!f))
			goto frame_err;
		xdp_enqueue(cpu, rxq, t, f, false);
		return UXDP_REDIRECT;
	}
	if (act == UXDP_DROP) {
		c->drop++;
		goto drop;
	}
	if (act == UXDP_PASS) {
		if (rxq->pass) {
			c->pass++;
			rxq->pass(rxq->pass_arg, buf);
		} else {
			stat_inc(&st->pass_dropped);
		}
		ret_buff(cpu, buf);
		return UXDP_PASS;
	}
	/* UXDP_ABORTED, or not a verdict at all (counted as both). */
	if (act != UXDP_ABORTED)
		stat_inc(&st->invalid_action);
	c->aborted++;
	ret_buff(cpu, buf);
	return UXDP_ABORTED;
frame_err:
	stat_inc(&st->frame_err);
drop:
	ret_buff(cpu, buf);
	return UXDP_DROP;
}

/* No program: every packet is dropped and counted (no_prog). */
static __attribute__((noinline)) void run_no_prog(struct uxdp_xdp_cpu *cpu,
						  struct uxdp_xdp_rxq *rxq,
						  struct uxdp_buff **bufs,
						  uint32_t n)
{
	uint64_t bytes = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		bytes += uxdp_buff_len(bufs[i]);
		ret_buff(cpu, bufs[i]);
	}
	stat_add(&rxq->stats.packets, n);
	stat_add(&rxq->stats.bytes, bytes);
	stat_add(&rxq->stats.no_prog, n);
}

/*
 * A driver handed up buffers whose rxq is not the queue's (it forgot
 * uxdp_pool_set_rxq(), or never set buff->rxq): the verdicts would follow
 * a NULL or foreign pointer. Say so once per queue and point them at it;
 * its memory info then says who owns them.
 */
static __attribute__((noinline, cold)) void
fix_rxq(struct uxdp_xdp_rxq *rxq, struct uxdp_buff **bufs, uint32_t n)
{
	uint32_t i;

	if (!__atomic_exchange_n(&rxq->warned, 1, __ATOMIC_RELAXED))
		uxdp_pr(UXDP_WARN, "uxdp: ifindex %u rx queue %u: the driver "
			"hands up buffers whose rxq is not the queue's (pool "
			"buffers: call uxdp_pool_set_rxq() with "
			"&uxdp_dev_xdp_rxq(dev, q)->info); fixed up\n",
			rxq->info.ifindex, rxq->info.queue_index);
	for (i = 0; i < n; i++)
		bufs[i]->rxq = &rxq->info;
}

/*
 * The queue being polled is the context's (set by xdp_poll_begin): a driver
 * passes only the context it was given.
 */
UXDP_EXPORT uint32_t uxdp_rx_run(struct uxdp_xdp_cpu *cpu,
				 struct uxdp_buff *buf)
{
	struct uxdp_xdp_rxq *rxq = cpu->rxq;
	const struct uxdp_prog *prog = cpu->prog;
	struct run_counts c = { .packets = 1 };
	uint32_t act;

	if (unlikely(buf->rxq != &rxq->info))
		fix_rxq(rxq, &buf, 1);
	if (unlikely(!prog)) {
		run_no_prog(cpu, rxq, &buf, 1);
		return UXDP_DROP;
	}
	act = run_one(cpu, rxq, prog, buf, &c);
	counts_flush(&rxq->stats, &c);
	return act;
}

UXDP_EXPORT void uxdp_rx_run_batch(struct uxdp_xdp_cpu *cpu,
				   struct uxdp_buff **bufs, uint32_t n)
{
	struct uxdp_xdp_rxq *rxq = cpu->rxq;
	const struct uxdp_prog *prog = cpu->prog;
	struct run_counts c = { .packets = n };
	uint32_t i;

	/* One buffer stands for the batch: a driver sets all or none. */
	if (unlikely(n && bufs[0]->rxq != &rxq->info))
		fix_rxq(rxq, bufs, n);
	if (unlikely(!prog)) {
		run_no_prog(cpu, rxq, bufs, n);
		return;
	}
	for (i = 0; i < n; i++) {
		/* The next packet's first line, while this one runs. */
		if (i + 1 < n)
			__builtin_prefetch(bufs[i + 1]->data);
		run_one(cpu, rxq, prog, bufs[i], &c);
	}
	counts_flush(&rxq->stats, &c);
}
