/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loaded eBPF program is an ordinary struct uxdp_prog (the xdp layer
 * learns nothing of eBPF): its run function calls the engine on the
 * buffer, its priv is the program's code, engine and counters, and its
 * destructor (uxdp_prog_create_ex) frees the code and the JIT's memory and
 * lets go of the object (its maps) when the last reference goes: after
 * the grace period of the detach or swap that gave the device's back.
 *
 * A run that faults (a check found an access outside, the budget ran
 * out, calls nested too deep) is an XDP_ABORTED verdict, counted with the
 * instruction as linked; the first is printed once. Counters are per
 * thread index, each thread's on its own cache line: a run adds to its
 * own with plain moves (stat_inc: relaxed, no locked instruction).
 */
#include "../internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

struct prog_stats {
	uint64_t runs;
	uint64_t aborted;
	uint64_t faults;
} __attribute__((aligned(UXDP_CACHE_LINE)));

struct bpf_loaded {
	struct prog_stats stats[UXDP_MAX_THREADS];
	struct uxdp_bpf_code *code;
	struct uxdp_bpf_jit *jit;		/* NULL: interpreted */
	uxdp_bpf_jit_fn leaf;			/* run_jit_leaf's entry */
	struct uxdp_bpf_object *obj;		/* a reference: the maps */
	const struct bpf_insn *linked;		/* the object's, for messages */
	uint32_t linked_len;
	struct uxdp_bpf_check_stats check;
	/* The last fault: kind << 32 | instruction as linked. */
	uint64_t last_fault;
	uint32_t fault_printed;
	/* A map of the object hands out elements freed after a grace
	 * period (uxdp_bpf_map_ops.rcu_reader): every run is a reader. */
	bool rcu;
	bool frags;				/* xdp.frags */
	/* The registry of ids (prog_ids), for prog arrays' values. */
	uint32_t id;				/* 0: not registered */
	struct uxdp_prog *prog;
	struct bpf_loaded *next, **pprev;
};

/*
 * Program ids: every loaded eBPF program has one, unique in the process
 * and never reused (the kernel's prog ids), which a prog array's control
 * plane takes and gives back. The registry is for the control plane only
 * (a mutex, a list): no run touches it.
 */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpf_loaded *ids_head;
static uint32_t ids_next = 1;

static int id_register(struct bpf_loaded *lp, struct uxdp_prog *prog)
{
	int err = 0;

	pthread_mutex_lock(&ids_lock);
	if (!ids_next) {
		err = uxdp_fail(ENOSPC, "prog %s: 2^32 - 1 programs loaded: "
				"no id left", prog->name);
	} else {
		lp->id = ids_next++;
		lp->prog = prog;
		lp->next = ids_head;
		lp->pprev = &ids_head;
		if (ids_head)
			ids_head->pprev = &lp->next;
		ids_head = lp;
	}
	pthread_mutex_unlock(&ids_lock);
	return err;
}

static void id_unregister(struct bpf_loaded *lp)
{
	if (!lp->id)
		return;
	pthread_mutex_lock(&ids_lock);
	*lp->pprev = lp->next;
	if (lp->next)
		lp->next->pprev = lp->pprev;
	pthread_mutex_unlock(&ids_lock);
}

UXDP_EXPORT struct uxdp_prog *uxdp_bpf_prog_get_by_id(uint32_t id)
{
	struct uxdp_prog *got = NULL;
	struct bpf_loaded *lp;

	pthread_mutex_lock(&ids_lock);
	for (lp = ids_head; lp && !got; lp = lp->next) {
		uint32_t ref;

		if (lp->id != id)
			continue;
		/* A reference unless the last one is going (its fini waits
		 * on the lock to take it off the list). */
		ref = __atomic_load_n(&lp->prog->refcnt, __ATOMIC_RELAXED);
		while (ref && !__atomic_compare_exchange_n(&lp->prog->refcnt,
				&ref, ref + 1, false, __ATOMIC_ACQUIRE,
				__ATOMIC_RELAXED))
			;
		if (ref)
			got = lp->prog;
		break;
	}
	pthread_mutex_unlock(&ids_lock);
	if (!got)
		errno = ENOENT;
	return got;
}

static const char *fault_str(uint32_t fault)
{
	switch (fault) {
	case UXDP_BPF_FAULT_MEM:
		return "a memory access outside what the program may reach";
	case UXDP_BPF_FAULT_BUDGET:
		return "the run's budget of back edges spent (a loop that "
		       "does not end?)";
	case UXDP_BPF_FAULT_DEPTH:
		return "calls nested deeper than 8 frames";
	case UXDP_BPF_FAULT_INSN:
		return "an instruction no engine has (a bug of uxdp's)";
	default:
		return "a fault";
	}
}

static inline struct prog_stats *my_stats(struct bpf_loaded *lp)
{
	return &lp->stats[xdp_thread_index() % UXDP_MAX_THREADS];
}

/* The run ended early: XDP_ABORTED, counted, the first one printed. */
static __attribute__((noinline, cold)) uint32_t
prog_fault(struct bpf_loaded *lp, const struct uxdp_bpf_run *run)
{
	/* After a tail call the fault is in the target's code: its
	 * instruction as linked is counted, its name printed. */
	const struct uxdp_bpf_code *code = run->code ? run->code : lp->code;
	bool own = code == lp->code;
	struct prog_stats *st = my_stats(lp);
	uint32_t at = run->fault_pc < code->len ? code->orig_idx[run->fault_pc] :
		      own ? lp->linked_len : code->len;
	char dis[64] = "end";

	stat_inc(&st->runs);
	stat_inc(&st->aborted);
	stat_inc(&st->faults);
	__atomic_store_n(&lp->last_fault, (uint64_t)run->fault << 32 | at,
			 __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&lp->fault_printed, 1, __ATOMIC_RELAXED))
		return UXDP_ABORTED;
	if (!own) {
		uxdp_pr(UXDP_WARN, "bpf: prog %s: in prog %s (tail-called): "
			"insn %u: %s: the run ends as XDP_ABORTED (printed "
			"once; uxdp_bpf_prog_info counts them)\n",
			lp->code->name, code->name, at, fault_str(run->fault));
		return UXDP_ABORTED;
	}
	if (at < lp->linked_len)
		uxdp_bpf_insn_str_at(lp->linked, lp->linked_len, at, dis,
				     sizeof(dis));
	uxdp_pr(UXDP_WARN, "bpf: prog %s: insn %u (%s): %s: the run ends as "
		"XDP_ABORTED (printed once; uxdp_bpf_prog_info counts them)\n",
		code->name, at, dis, fault_str(run->fault));
	return UXDP_ABORTED;
}

/* A run that ended at an exit: counted, its verdict. */
static inline uint32_t prog_count(struct bpf_loaded *lp, uint64_t r0)
{
	struct prog_stats *st = my_stats(lp);

	stat_inc(&st->runs);
	if (unlikely((uint32_t)r0 == UXDP_ABORTED))
		stat_inc(&st->aborted);
	return (uint32_t)r0;
}

static inline uint32_t prog_done(struct bpf_loaded *lp,
				 const struct uxdp_bpf_run *run, uint64_t r0)
{
	if (unlikely(run->fault))
		return prog_fault(lp, run);
	return prog_count(lp, r0);
}

/*
 * A run of a program whose maps need it inside a read-side section: a
 * poll is one already (the nesting is counted, so this costs an increment
 * there); uxdp_prog_run() and test runs from an application's thread are
 * not. NULL: the thread could not be made a reader (out of memory).
 */
static inline struct uxdp_xdp_cpu *run_enter(const struct bpf_loaded *lp,
					     bool *ok)
{
	struct uxdp_xdp_cpu *cpu;

	*ok = true;
	if (likely(!lp->rcu))
		return NULL;
	cpu = xdp_cpu_get();
	if (unlikely(!cpu))
		*ok = false;
	else
		xdp_rcu_lock(cpu);
	return cpu;
}

static inline void run_exit(const struct bpf_loaded *lp,
			    struct uxdp_xdp_cpu *cpu)
{
	if (unlikely(cpu != NULL)) {
		/* Records a ringbuf program reserved and left (a ringbuf
		 * makes its programs take this path). */
		if (unlikely(uxdp_bpf_rb_npending))
			uxdp_bpf_ringbuf_run_end(lp->code->name ?
						 lp->code->name : "?");
		xdp_rcu_unlock(cpu);
	}
}

static uint32_t run_interp(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_loaded *lp = priv;
	struct uxdp_bpf_run run;
	struct uxdp_xdp_cpu *cpu;
	uint64_t r0;
	bool ok;

	cpu = run_enter(lp, &ok);
	if (unlikely(!ok))
		return prog_count(lp, UXDP_ABORTED);
	run.code = lp->code;
	run.ctx = ctx;
	run.mem = NULL;
	run.mem_len = 0;
	r0 = uxdp_bpf_interp_run(&run, (uint64_t)(uintptr_t)ctx, 0);
	run_exit(lp, cpu);
	return prog_done(lp, &run, r0);
}

static uint32_t run_jit(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_loaded *lp = priv;
	struct uxdp_bpf_run run;
	struct uxdp_xdp_cpu *cpu;
	uint64_t r0;
	bool ok;

	cpu = run_enter(lp, &ok);
	if (unlikely(!ok))
		return prog_count(lp, UXDP_ABORTED);
	r0 = uxdp_bpf_jit_run_xdp(lp->jit, &run, ctx);
	run_exit(lp, cpu);
	return prog_done(lp, &run, r0);
}

/*
 * A JIT program that never reads its run (uxdp_bpf_jit_leaf: nothing to
 * fault, no helper): no run to fill, no uxdp_bpf_cur, only one frame of
 * stack. drop, pass, tx and the parsers whose every access was proven.
 */
static uint32_t run_jit_leaf(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_loaded *lp = priv;
	uint8_t stack[UXDP_BPF_STACK] __attribute__((aligned(16)));
	uint64_t r0;

	r0 = lp->leaf((uint64_t)(uintptr_t)ctx, 0, NULL,
		      stack + sizeof(stack));
	return prog_count(lp, r0);
}

/* The same for a leaf with bpf-to-bpf calls: a frame for every depth the
 * safety pass allows (code->depth_proven). */
static uint32_t run_jit_leaf_calls(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_loaded *lp = priv;
	uint8_t stack[UXDP_BPF_MAX_DEPTH * UXDP_BPF_STACK]
		__attribute__((aligned(16)));
	uint64_t r0;

	r0 = lp->leaf((uint64_t)(uintptr_t)ctx, 0, NULL,
		      stack + sizeof(stack));
	return prog_count(lp, r0);
}

static bool has_local_calls(const struct uxdp_bpf_code *code)
{
	uint32_t i;

	for (i = 0; i < code->len; i++)
		if (code->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    code->insns[i].src_reg == BPF_PSEUDO_CALL)
			return true;
	return false;
}

static bool tail_calls(const struct uxdp_bpf_code *code)
{
	uint32_t i;

	for (i = 0; i < code->len; i++)
		if (code->insns[i].code == UXDP_BPF_OP_TAIL_CALL)
			return true;
	return false;
}

static void loaded_free(void *priv)
{
	struct bpf_loaded *lp = priv;

	id_unregister(lp);
	/* The JIT before its code (bpf_internal.h). */
	uxdp_bpf_jit_free(lp->jit);
	uxdp_bpf_code_free(lp->code);
	uxdp_bpf_object_put(lp->obj);
	free(lp);
}

int (*uxdp_bpf_prog_jit_compile)(struct uxdp_bpf_code *code,
				 struct uxdp_bpf_jit **out) = uxdp_bpf_jit_compile;

int uxdp_bpf_prog_new(struct uxdp_bpf_object *obj, struct uxdp_bpf_build *b,
		      uint32_t engine, uint32_t linked,
		      struct uxdp_prog **out)
{
	struct bpf_loaded *lp = NULL;
	struct uxdp_prog *prog;
	uxdp_prog_fn run = run_interp;
	uint32_t i;
	int err;

	if (posix_memalign((void **)&lp, UXDP_CACHE_LINE, sizeof(*lp))) {
		uxdp_bpf_code_free(b->code);
		b->code = NULL;
		return uxdp_fail(ENOMEM, "prog %s: out of memory", b->name);
	}
	memset(lp, 0, sizeof(*lp));
	lp->code = b->code;
	b->code = NULL;
	lp->linked = b->insns;
	lp->linked_len = linked;
	lp->check = b->stats;
	for (i = 0; i < b->nmaps; i++)
		if (b->maps[i].rcu_reader)
			lp->rcu = true;
	lp->frags = !!(b->flags & UXDP_BPF_BUILD_F_FRAGS);
	/* uxdp_bpf_prepare()'s code: check_structure() bounded the calls,
	 * check_flow() refused every read of a register not yet written. */
	lp->code->depth_proven = true;
	lp->code->init_proven = true;
	if (engine != UXDP_BPF_ENGINE_INTERP) {
		err = uxdp_bpf_prog_jit_compile(lp->code, &lp->jit);
		if (err && engine == UXDP_BPF_ENGINE_JIT) {
			loaded_free(lp);
			return uxdp_fail(-err, "prog %s: the JIT cannot compile "
					 "it: %s", b->name, uxdp_errmsg());
		}
		/* The default engine falls back to the interpreter. */
		if (err) {
			uxdp_pr(UXDP_INFO, "bpf: prog %s: interpreted (the JIT: "
				"%s)\n", b->name, uxdp_errmsg());
			lp->jit = NULL;
		} else {
			lp->leaf = uxdp_bpf_jit_leaf(lp->jit);
			run = !lp->leaf ? run_jit :
			      has_local_calls(lp->code) ? run_jit_leaf_calls :
			      run_jit_leaf;
		}
	}
	if (!lp->jit && uxdp_bpf_interp_prepare(lp->code)) {
		loaded_free(lp);
		return uxdp_fail(ENOMEM, "prog %s: out of memory", b->name);
	}
	/* Its prog arrays take programs of its kind (the kernel checks the
	 * same when it loads a program that tail-calls). */
	if (tail_calls(lp->code))
		for (i = 0; i < b->nmaps; i++) {
			if (!b->maps[i].map ||
			    b->maps[i].type != BPF_MAP_TYPE_PROG_ARRAY)
				continue;
			err = uxdp_bpf_prog_array_claim(b->maps[i].map,
							b->name, !!lp->jit,
							lp->frags);
			if (err) {
				loaded_free(lp);
				return err;
			}
		}
	prog = uxdp_prog_create_ex(b->name, run, lp, loaded_free);
	if (!prog) {
		err = -errno;
		loaded_free(lp);
		return err;
	}
	err = id_register(lp, prog);
	if (err) {
		uxdp_prog_put(prog);
		return err;
	}
	/* Only now: loaded_free() lets go of it. */
	uxdp_bpf_object_get(obj);
	lp->obj = obj;
	*out = prog;
	return 0;
}

/* @prog's state if it is an eBPF program of a loaded object, else NULL. */
static struct bpf_loaded *loaded_of(const struct uxdp_prog *prog)
{
	if (!prog || (prog->run != run_interp && prog->run != run_jit &&
		      prog->run != run_jit_leaf &&
		      prog->run != run_jit_leaf_calls))
		return NULL;
	return prog->priv;
}

const struct uxdp_bpf_code *uxdp_bpf_prog_code(const struct uxdp_prog *prog)
{
	const struct bpf_loaded *lp = loaded_of(prog);

	return lp ? lp->code : NULL;
}

const struct uxdp_bpf_code *uxdp_bpf_prog_kind(const struct uxdp_prog *prog,
					       bool *jit, bool *frags)
{
	const struct bpf_loaded *lp = loaded_of(prog);

	if (!lp)
		return NULL;
	*jit = lp->jit != NULL;
	*frags = lp->frags;
	return lp->code;
}

UXDP_EXPORT uint32_t uxdp_bpf_prog_id(const struct uxdp_prog *prog)
{
	const struct bpf_loaded *lp = loaded_of(prog);

	return lp ? lp->id : 0;
}

UXDP_EXPORT int uxdp_bpf_prog_info(const struct uxdp_prog *prog,
				   struct uxdp_bpf_prog_info *info)
{
	struct bpf_loaded *lp = loaded_of(prog);
	struct uxdp_bpf_prog_info out;
	uint64_t last;
	uint32_t i;

	uxdp_clear_err();
	if (!lp)
		return uxdp_fail(EINVAL, "prog %s: not an eBPF program",
				 prog ? prog->name : "(null)");
	if (!info || !UXDP_OPTS_VALID(info, uxdp_bpf_prog_info))
		return -EINVAL;
	memset(&out, 0, sizeof(out));
	out.engine = lp->jit ? UXDP_BPF_ENGINE_JIT : UXDP_BPF_ENGINE_INTERP;
	out.insns = lp->linked_len;
	out.xlated_insns = lp->code->len;
	out.jit_size = lp->jit ? (uint32_t)uxdp_bpf_jit_size(lp->jit) : 0;
	out.accesses = lp->check.accesses;
	out.proven = lp->check.proven;
	out.checked = lp->check.checked;
	out.back_edges = lp->check.back_edges;
	for (i = 0; i < UXDP_MAX_THREADS; i++) {
		const struct prog_stats *st = &lp->stats[i];

		out.runs += stat_read(&st->runs);
		out.aborted += stat_read(&st->aborted);
		out.faults += stat_read(&st->faults);
	}
	last = __atomic_load_n(&lp->last_fault, __ATOMIC_RELAXED);
	out.last_fault = (uint32_t)(last >> 32);
	out.last_fault_insn = (uint32_t)last;
	/* The caller's struct may be older (smaller) than ours. */
	memcpy((char *)info + sizeof(info->sz), (char *)&out + sizeof(out.sz),
	       MIN(info->sz, sizeof(out)) - sizeof(out.sz));
	return 0;
}

/* ---- test runs (BPF_PROG_TEST_RUN) ------------------------------------------- */

#define TEST_FRAME	4096			/* the kernel's page */
#define TEST_HEADROOM	UXDP_PACKET_HEADROOM
#define TEST_MAX_DATA	(TEST_FRAME - TEST_HEADROOM - UXDP_FRAME_TAILROOM)
#define TEST_META_MAX	252
#define TEST_OPTS_MIN	(offsetof(struct uxdp_bpf_test_run_opts, duration) + \
			 sizeof(uint32_t))

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

UXDP_EXPORT int uxdp_bpf_prog_test_run(const struct uxdp_prog *prog,
				       struct uxdp_bpf_test_run_opts *opts)
{
	struct bpf_loaded *lp = loaded_of(prog);
	struct uxdp_rxq_info rxq;
	struct uxdp_buff b;
	uint32_t size, meta, repeat, i, verdict = 0, out;
	uint64_t t0, dt;
	uint8_t *frame;
	int err = 0;

	uxdp_clear_err();
	if (!lp)
		return uxdp_fail(EINVAL, "prog %s: not an eBPF program",
				 prog ? prog->name : "(null)");
	if (!opts || !UXDP_OPTS_VALID(opts, uxdp_bpf_test_run_opts))
		return -EINVAL;
	/* The results are written: the caller's struct must hold them. */
	if (opts->sz < TEST_OPTS_MIN)
		return uxdp_fail(EINVAL, "prog %s: test run: options of %zu "
				 "bytes, no room for the results (%zu)",
				 prog->name, opts->sz, TEST_OPTS_MIN);
	size = UXDP_OPTS_GET(opts, data_size_in, 0);
	meta = UXDP_OPTS_GET(opts, meta_size, 0);
	repeat = UXDP_OPTS_GET(opts, repeat, 1);
	/* The kernel's: metadata from the headroom in 4-byte steps, a
	 * packet at least as long as an Ethernet header. */
	if (meta % 4 || meta > TEST_META_MAX)
		return uxdp_fail(EINVAL, "prog %s: test run: %u bytes of "
				 "metadata: a multiple of 4, at most %u",
				 prog->name, meta, TEST_META_MAX);
	if (!opts->data_in || size < meta + 14 || size - meta > TEST_MAX_DATA)
		return uxdp_fail(EINVAL, "prog %s: test run: %u bytes of data "
				 "(%u of them metadata): the packet must be "
				 "14 to %u bytes", prog->name, size, meta,
				 TEST_MAX_DATA);
	if (posix_memalign((void **)&frame, UXDP_CACHE_LINE, TEST_FRAME))
		return uxdp_fail(ENOMEM, "prog %s: test run: out of memory",
				 prog->name);
	memset(frame, 0, TEST_FRAME);
	memcpy(frame + TEST_HEADROOM - meta, opts->data_in, size);
	memset(&rxq, 0, sizeof(rxq));
	rxq.ifindex = UXDP_OPTS_GET(opts, ingress_ifindex, 0);
	rxq.queue_index = UXDP_OPTS_GET(opts, rx_queue_index, 0);
	rxq.mem.type = UXDP_MEM_ALLOC;
	memset(&b, 0, sizeof(b));
	b.data_hard_start = frame;
	b.data_meta = frame + TEST_HEADROOM - meta;
	b.data = frame + TEST_HEADROOM;
	b.data_end = (uint8_t *)b.data + (size - meta);
	b.frame_sz = TEST_FRAME;
	b.rxq = &rxq;
	/* The same buffer every time: what a run changes, the next sees. */
	t0 = mono_ns();
	for (i = 0; i < repeat; i++)
		verdict = prog->run(&b, prog->priv);
	dt = mono_ns() - t0;
	opts->retval = verdict;
	opts->duration = (uint32_t)MIN(dt / repeat, (uint64_t)UINT32_MAX);
	meta = b.data_meta <= b.data ?
	       (uint32_t)((uint8_t *)b.data - (uint8_t *)b.data_meta) : 0;
	out = (uint32_t)((uint8_t *)b.data_end - (uint8_t *)b.data) + meta;
	opts->meta_size = meta;
	if (opts->data_out) {
		uint32_t room = opts->data_size_out;

		memcpy(opts->data_out, (uint8_t *)b.data - meta, MIN(room, out));
		if (room < out)
			err = uxdp_fail(ENOSPC, "prog %s: test run: %u bytes "
					"out, room for %u", prog->name, out,
					room);
	}
	opts->data_size_out = out;
	free(frame);
	return err;
}
