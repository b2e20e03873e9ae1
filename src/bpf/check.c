/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The safety pass: what each instruction of a program reads and writes,
 * what of it is proven in bounds, and what needs a run-time check. In the
 * spirit of the kernel's verifier, not its completeness: what this pass
 * cannot prove it does not refuse, it leaves to a `check` instruction
 * (fixup.c) that ends the run when the access falls outside the memory the
 * program was given. It refuses what is wrong whatever the input: bad
 * instructions, bad control flow, what the kernel would never accept of an
 * XDP program (writes to xdp_md, unchecked map values, unknown helpers).
 *
 * Two passes, chained:
 *
 *   check_structure()	every instruction valid, jumps inside their
 *			function and never into an lddw, functions from the
 *			call targets, no fall off the end, nothing
 *			unreachable, calls at most 8 deep and never recursive,
 *			maps and helpers known
 *   check_flow()		abstract interpretation over the control flow
 *			graph: a type per register and per spilled stack
 *			slot, a worklist over basic blocks joined at merges,
 *			widened when a loop keeps changing them. A function is
 *			analysed once per call string (the kernel analyses
 *			each call in its caller's state, too), so a pointer
 *			argument keeps its type in the callee. Then one more
 *			walk over the final states decides each access
 *			(proven, or which check) and refuses what must be.
 *
 * Refusals are made from the final states only (an early state of a loop
 * is narrower than its fixed point). Their messages name the program, the
 * instruction index as the loader gave it, its disassembly and the reason.
 */
#include "../internal.h"

#include <byteswap.h>
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpf_internal.h"

#define NREGS		11
#define NSLOTS		(UXDP_BPF_STACK / 8)
#define FRAME_ANY	0xff		/* a stack pointer of a frame not known */
#define ID_NONE		UINT32_MAX	/* a packet pointer no range applies to */
#define MAX_PKT_OFF	0xffff		/* the kernel's MAX_PACKET_OFF */
#define MAX_OFF		(1 << 29)	/* constant offsets tracked up to this */
#define MAX_SUBPROGS	256		/* the kernel's BPF_MAX_SUBPROGS */
#define MAX_CONTEXTS	4096		/* functions analysed per call string */
#define MAX_WORK	(1U << 22)	/* instructions interpreted, all told */
#define MAX_STATE_MEM	((size_t)256 << 20)
#define WIDEN_AFTER	8		/* changes of a loop head's state, then
					 * widen */
#define WIDEN_ACYCLIC	64		/* of any other block's (a net: every
					 * cycle has a head, so these settle
					 * once the heads do) */

#define U32_MAX_	0xffffffffULL
#define U64_MAX_	UINT64_MAX

#define CLS(c)		((c) & 0x07)
#define OP(c)		((c) & 0xf0)
#define SRCX(c)		((c) & 0x08)
#define SIZE(c)		((c) & 0x18)
#define MODE(c)		((c) & 0xe0)

/* Per instruction, structural. */
#define I_SECOND	(1U << 0)	/* an lddw's second slot */
#define I_LEADER	(1U << 1)	/* starts a basic block */
#define I_REACHED	(1U << 2)	/* reachable from its function's start */
#define I_SUBSTART	(1U << 3)	/* a function starts here */
#define I_LOOP_HEAD	(1U << 4)	/* a back edge (mark_back_edges) ends
					 * here: a block widened */

enum reg_type {
	NOT_INIT,
	SCALAR,			/* [umin, umax]; a constant when equal */
	PTR_CTX,		/* struct xdp_md (the uxdp_buff) + off */
	PTR_PKT,		/* base(id) + off; [base, base + range) proven */
	PTR_PKT_META,		/* the same from data_meta, range up to data */
	PTR_PKT_END,
	PTR_STACK,		/* frame's r10 + off + [0, umax] */
	PTR_MAP_VALUE,		/* a value of map + off + [0, umax] */
	PTR_MAP_VALUE_OR_NULL,	/* a lookup's result (id) before its check */
	CONST_MAP,		/* lddw src 5 */
	PTR_RAW,		/* a raw run's memory + off + [0, umax] */
	/* Only in a spilled slot: bytes [off, off + range) of the slot
	 * hold the constant umin (a store of fewer than 8 bytes, as a
	 * u32 map key is), the others are unknown. A fill of exactly
	 * those bytes reads the constant, any other fill an unknown
	 * scalar; a join with anything else is unknown (reg_join). */
	STACK_CONST,
};

static const char *const type_names[] = {
	[NOT_INIT] = "uninitialised", [SCALAR] = "scalar",
	[PTR_CTX] = "ctx", [PTR_PKT] = "pkt", [PTR_PKT_META] = "pkt_meta",
	[PTR_PKT_END] = "pkt_end", [PTR_STACK] = "fp",
	[PTR_MAP_VALUE] = "map_value",
	[PTR_MAP_VALUE_OR_NULL] = "map_value_or_null",
	[CONST_MAP] = "map_ptr", [PTR_RAW] = "mem",
	[STACK_CONST] = "stack_const",
};

/*
 * One register (or spilled slot). Every field is set by every constructor,
 * so two equal states compare equal bytewise (no padding: 32 bytes).
 * Pointers keep their variable part as [0, umax] above off; umax
 * U64_MAX_ means not tracked (every access through it is checked).
 */
struct reg {
	uint8_t type;		/* enum reg_type */
	uint8_t frame;		/* PTR_STACK */
	uint16_t map;		/* PTR_MAP_VALUE(_OR_NULL), CONST_MAP */
	/* (CONST_MAP's map may be MAP_PROG_ANY: one of several prog
	 * arrays, as paths that each tail-call through their own join.
	 * PTR_MAP_VALUE's may be MAP_VALUE_ANY: a value of one of several
	 * maps, as paths that each looked up their own map join (clang
	 * merges xdp-filter's "count the hit, return" tails of its IPv4
	 * and IPv6 lookups); range is then the least value_size, and
	 * frame 1 if one of them is read-only.) */
	uint32_t id;		/* PTR_PKT(_META): base; OR_NULL: the lookup */
	int32_t off;
	uint32_t range;		/* PTR_PKT(_META); MAP_VALUE_ANY's size */
	uint64_t umin, umax;
};

#define MAP_PROG_ANY	0xffff
#define MAP_VALUE_ANY	0xfffe
/* PTR_MAP_VALUE(_OR_NULL)'s map for a bpf_ringbuf_reserve() record: range
 * is its size, id the reserve (its instruction + 1; 0 after a join of two). */
#define MAP_RB_REC	0xfffd

/* State flags. */
#define ST_PKT_CHANGED	(1U << 0)	/* a helper moved the packet since the
					 * function was entered */

/* The state being interpreted: every frame's slots, dense. */
struct wstate {
	uint8_t depth;		/* frames 0..depth; depth is this function's */
	uint8_t flags;
	struct reg regs[NREGS];
	uint64_t spilled[UXDP_BPF_MAX_DEPTH];	/* per frame, per slot */
	struct reg slot[UXDP_BPF_MAX_DEPTH][NSLOTS];
};

/* A state kept at a block's start: only the spilled slots. */
struct spill {
	uint16_t at;		/* frame * NSLOTS + slot */
	struct reg r;
};
struct sstate {
	uint8_t depth, flags;
	uint16_t changes;
	uint32_t nspill;
	struct reg regs[NREGS];
	struct spill spills[];
};

/* A function analysed for one call string. */
struct actx {
	uint32_t sub;			/* the function */
	uint32_t parent;		/* its caller's context (0 for main) */
	uint32_t call_insn;		/* the call in the parent */
	uint8_t depth;
	struct sstate **blk;		/* per block of the function */
	uint8_t *queued;
	struct sstate *call_state;	/* the caller's, at the call */
	struct sstate *ret_state;	/* joined at every exit */
	uint32_t *kids;			/* (call insn, context) pairs */
	uint32_t nkids, kids_cap;
};

struct env {
	struct uxdp_bpf_build *b;
	const struct bpf_insn *insns;
	uint32_t len;
	uint8_t *iflags;
	uint16_t *insn_sub;
	uint32_t *insn_blk;
	uint32_t nsubs;
	uint32_t sub_start[MAX_SUBPROGS + 1];
	uint32_t sub_blk[MAX_SUBPROGS + 1];	/* first block of each */
	uint64_t reach[MAX_SUBPROGS][MAX_SUBPROGS / 64];
	uint32_t *blk_start;
	uint32_t nblks;
	uint16_t *map_region;
	uint32_t nregions;
	uint64_t *thr;			/* widening thresholds, sorted */
	uint32_t nthr;

	struct actx *ctx;
	uint32_t nctx, ctx_cap;
	uint64_t *heap;			/* the worklist: ctx << 32 | block */
	uint32_t nheap, heap_cap;
	uint64_t work;
	size_t mem;

	bool decide;			/* the last walk: decide and refuse */
	uint32_t stack_depth;
	uint32_t next_id;		/* the next packet id a join makes */
	struct uxdp_bpf_aux *aux;
	struct wstate cur, tmp, edge;
};

/* ---- messages ------------------------------------------------------------ */

static const char *prog_name(const struct env *e)
{
	return e->b->name ? e->b->name : "?";
}

static const char *map_name(const struct env *e, uint32_t m)
{
	if (m == MAP_PROG_ANY)
		return "(one of several prog arrays)";
	if (m == MAP_VALUE_ANY)
		return "(one of several maps)";
	if (m == MAP_RB_REC)
		return "(a ring buffer record)";
	return e->b->maps[m].name ? e->b->maps[m].name : "(unnamed)";
}

static int vfail(const struct env *e, int err, uint32_t i, const char *pre,
		 const char *fmt, va_list ap)
{
	char why[256], dis[96];

	vsnprintf(why, sizeof(why), fmt, ap);
	if (i >= e->len) {
		return uxdp_fail(err, "prog %s: %s%s", prog_name(e), pre, why);
	}
	uxdp_bpf_insn_str_at(e->insns, e->len, i, dis, sizeof(dis));
	return uxdp_fail(err, "prog %s: insn %u (%s): %s%s", prog_name(e), i,
			 dis, pre, why);
}

/* A refusal of the program at insn @i. */
static int __attribute__((format(printf, 3, 4)))
insn_fail(const struct env *e, uint32_t i, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(e, EINVAL, i, "", fmt, ap);
	va_end(ap);
	return ret;
}

/* Something this pass believed impossible: a bug, said as one. */
static int __attribute__((format(printf, 3, 4)))
internal(const struct env *e, uint32_t i, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(e, EINVAL, i, "internal error: ", fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * What the flow analysis would refuse: only in the deciding walk, over the
 * final states (the caller goes on with a safe fallback otherwise).
 */
#define REFUSE(e, i, ...)						\
	((e)->decide ? insn_fail((e), (i), __VA_ARGS__) : 0)

/*
 * Names of the kernel's helpers, by id, from the UAPI header's own list:
 * for refusals. helpers.c, which knows what uxdp implements, may define a
 * better one; this one is weak so that it wins.
 */
#define HELPER_NAME(x)	#x
static const char *const kernel_helper_names[] = {
	__BPF_FUNC_MAPPER(HELPER_NAME)
};
#undef HELPER_NAME

__attribute__((weak))
const char *uxdp_bpf_helper_name(uint32_t id, char *buf, size_t len)
{
	if (id && id < ARRAY_SIZE(kernel_helper_names))
		snprintf(buf, len, "%s", kernel_helper_names[id]);
	else
		snprintf(buf, len, "helper %u", id);
	return buf;
}

/* ---- instructions ---------------------------------------------------------- */

static bool is_jump(uint8_t code)
{
	if (CLS(code) != BPF_JMP && CLS(code) != BPF_JMP32)
		return false;
	return OP(code) != BPF_CALL && OP(code) != BPF_EXIT;
}

static bool is_uncond(uint8_t code)
{
	return OP(code) == BPF_JA;
}

static int64_t jump_target(const struct bpf_insn *in, uint32_t i)
{
	if (in->code == (BPF_JMP32 | BPF_JA))
		return (int64_t)i + 1 + in->imm;
	return (int64_t)i + 1 + in->off;
}

static bool is_local_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) &&
	       in->src_reg == BPF_PSEUDO_CALL;
}

static bool is_mem(uint8_t code)
{
	return CLS(code) == BPF_LDX || CLS(code) == BPF_ST ||
	       CLS(code) == BPF_STX;
}

/* The cpu v4 forms (RFC 9669's additions) a -mcpu=v3 object never has. */
static bool is_v4(const struct bpf_insn *in)
{
	uint8_t code = in->code;

	if (uxdp_bpf_ops[code].flags & UXDP_BPF_F_V4)
		return true;
	if (CLS(code) != BPF_ALU && CLS(code) != BPF_ALU64)
		return false;
	if (OP(code) == BPF_MOV && SRCX(code) && in->off)
		return true;
	return (OP(code) == BPF_DIV || OP(code) == BPF_MOD) && in->off == 1;
}

static uint32_t mem_size(uint8_t code)
{
	switch (SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* The helpers that move the packet: every packet pointer is stale after
 * them (the kernel's bpf_helper_changes_pkt_data(), its XDP ones). */
static bool changes_pkt(uint32_t id)
{
	return id == BPF_FUNC_xdp_adjust_head ||
	       id == BPF_FUNC_xdp_adjust_meta ||
	       id == BPF_FUNC_xdp_adjust_tail;
}

static const struct uxdp_bpf_helper tail_call_helper = {
	.id = BPF_FUNC_tail_call, .name = "tail_call",
	.args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_ANY },
	/* The kernel's RET_VOID: r0 is not readable after it (a tail call
	 * that falls through leaves it as it was). */
	.ret = UXDP_BPF_RET_VOID,
};

static const struct uxdp_bpf_helper *helper_of(const struct env *e,
					       uint32_t id)
{
	if (id == BPF_FUNC_tail_call)
		return &tail_call_helper;
	return e->b->helper ? e->b->helper(id) : NULL;
}

/* ---- the structure --------------------------------------------------------- */

static uint32_t sub_of(const struct env *e, uint32_t i)
{
	return e->insn_sub[i];
}

/* lddw: a number, a map, a map's value (libbpf's src 5 and 6). */
static int check_lddw(const struct env *e, uint32_t i)
{
	const struct uxdp_bpf_build *b = e->b;
	const struct bpf_insn *in = &e->insns[i];
	const struct uxdp_bpf_build_map *m;

	switch (in->src_reg) {
	case 0:
		return 0;
	case BPF_PSEUDO_MAP_IDX:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		break;
	default:
		return insn_fail(e, i, "lddw with src %u: only 0 (a number), "
				 "5 (a map) and 6 (a map value) are "
				 "relocated", in->src_reg);
	}
	if ((uint32_t)in->imm >= b->nmaps)
		return insn_fail(e, i, "map index %u: the program has %u maps",
				 (uint32_t)in->imm, b->nmaps);
	if (in->src_reg == BPF_PSEUDO_MAP_IDX)
		return 0;
	m = &b->maps[in->imm];
	if (!m->values || m->max_entries != 1 ||
	    (m->type && m->type != BPF_MAP_TYPE_ARRAY))
		return insn_fail(e, i, "direct value access to map %s: not "
				 "an array of one", map_name(e, in->imm));
	if ((uint32_t)in[1].imm >= m->value_size)
		return insn_fail(e, i, "offset %u past map %s's value (%u "
				 "bytes)", (uint32_t)in[1].imm,
				 map_name(e, in->imm), m->value_size);
	return 0;
}

/* Each instruction on its own: fields, maps, helpers, call targets. */
static int check_insns(struct env *e)
{
	const struct uxdp_bpf_build *b = e->b;
	bool v4 = b->flags & UXDP_BPF_BUILD_F_V4;
	uint32_t i;

	e->iflags[0] |= I_SUBSTART;
	for (i = 0; i < e->len; i++) {
		const struct bpf_insn *in = &e->insns[i];
		const char *why, *hn;
		char name[64];
		int64_t t;

		if (uxdp_bpf_insn_valid(in, e->len - i, false, &why))
			return insn_fail(e, i, "%s", why);
		if (!v4 && is_v4(in))
			return insn_fail(e, i, "a cpu v4 instruction (the "
					 "program was not loaded for v4)");
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			int ret = check_lddw(e, i);

			if (ret)
				return ret;
			e->iflags[i + 1] |= I_SECOND;
			i++;
			continue;
		}
		if (in->code != (BPF_JMP | BPF_CALL))
			continue;
		if (in->src_reg == BPF_PSEUDO_KFUNC_CALL)
			return insn_fail(e, i, "kfunc calls are not supported");
		if (in->src_reg == 0) {
			if (helper_of(e, (uint32_t)in->imm))
				continue;
			/* "helper sk_lookup_tcp", "helper 999": the name
			 * is the table's, or written to the buffer. */
			hn = uxdp_bpf_helper_name((uint32_t)in->imm, name,
						  sizeof(name));
			if (!strncmp(hn, "bpf_", 4))
				hn += 4;
			return insn_fail(e, i, "%s%s is not supported",
					 strncmp(hn, "helper ", 7) ?
					 "helper " : "", hn);
		}
		t = (int64_t)i + 1 + in->imm;
		if (t < 0 || t >= e->len)
			return insn_fail(e, i, "call to %lld: outside the "
					 "program", (long long)t);
		e->iflags[t] |= I_SUBSTART;
	}
	return 0;
}

static int check_functions(struct env *e)
{
	uint32_t i, k = 0, s;

	for (i = 0; i < e->len; i++) {
		if (!(e->iflags[i] & I_SUBSTART))
			continue;
		/* A call into an lddw's second slot. */
		if (e->iflags[i] & I_SECOND)
			return insn_fail(e, i - 1, "a call lands in the "
					 "middle of this lddw");
		if (k == MAX_SUBPROGS)
			return uxdp_fail(E2BIG, "prog %s: more than %u "
					 "functions", prog_name(e),
					 MAX_SUBPROGS);
		e->sub_start[k++] = i;
	}
	e->nsubs = k;
	e->sub_start[k] = e->len;
	for (s = 0; s < k; s++)
		for (i = e->sub_start[s]; i < e->sub_start[s + 1]; i++)
			e->insn_sub[i] = (uint16_t)s;

	/* Jumps stay inside their function, never into an lddw. */
	for (i = 0; i < e->len; i++) {
		const struct bpf_insn *in = &e->insns[i];
		int64_t t;

		if ((e->iflags[i] & I_SECOND) || !is_jump(in->code))
			continue;
		t = jump_target(in, i);
		if (t < 0 || t >= e->len)
			return insn_fail(e, i, "jump to %lld: outside the "
					 "program", (long long)t);
		if (e->iflags[t] & I_SECOND)
			return insn_fail(e, i, "jump into the middle of the "
					 "lddw at insn %lld", (long long)t - 1);
		if (sub_of(e, (uint32_t)t) != sub_of(e, i))
			return insn_fail(e, i, "jump to %lld: out of its "
					 "function", (long long)t);
	}
	/* No function falls into the next one or off the end. */
	for (s = 0; s < k; s++) {
		uint32_t last = e->sub_start[s + 1] - 1;
		const struct bpf_insn *in = &e->insns[last];

		if (e->iflags[last] & I_SECOND)
			return insn_fail(e, last - 1, "the function falls "
					 "off its end");
		if (in->code != (BPF_JMP | BPF_EXIT) &&
		    !(is_jump(in->code) && is_uncond(in->code)))
			return insn_fail(e, last, "the function falls off "
					 "its end (the last instruction is "
					 "not exit or ja)");
	}
	return 0;
}

/* Every instruction reachable from its function's start, every function
 * from main; leaders of the blocks on the way. */
static int check_reach(struct env *e)
{
	uint32_t *stack, n = 0, i, s;
	int ret = 0;

	stack = malloc((size_t)e->len * sizeof(*stack));
	if (!stack)
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 prog_name(e));
	for (s = 0; s < e->nsubs; s++) {
		stack[n++] = e->sub_start[s];
		e->iflags[e->sub_start[s]] |= I_REACHED | I_LEADER;
	}
	while (n) {
		const struct bpf_insn *in;
		uint32_t next[2], nn = 0, k;

		i = stack[--n];
		in = &e->insns[i];
		if (in->code == (BPF_JMP | BPF_EXIT)) {
			if (i + 1 < e->len)
				e->iflags[i + 1] |= I_LEADER;
		} else if (is_jump(in->code)) {
			next[nn++] = (uint32_t)jump_target(in, i);
			e->iflags[next[0]] |= I_LEADER;
			if (i + 1 < e->len)
				e->iflags[i + 1] |= I_LEADER;
			if (!is_uncond(in->code))
				next[nn++] = i + 1;
		} else {
			/* The return from a local call comes in at i + 1. */
			uint32_t w = in->code == (BPF_LD | BPF_IMM | BPF_DW) ?
				     2 : 1;

			next[nn++] = i + w;
			if (is_local_call(in))
				e->iflags[i + 1] |= I_LEADER;
		}
		for (k = 0; k < nn; k++) {
			if (e->iflags[next[k]] & I_REACHED)
				continue;
			e->iflags[next[k]] |= I_REACHED;
			stack[n++] = next[k];
		}
	}
	free(stack);
	for (i = 0; i < e->len && !ret; i++)
		if (!(e->iflags[i] & (I_REACHED | I_SECOND)))
			ret = insn_fail(e, i, "unreachable instruction");
	return ret;
}

/* The function a local call at @i goes to. */
static uint32_t callee(const struct env *e, uint32_t i)
{
	return sub_of(e, (uint32_t)((int64_t)i + 1 + e->insns[i].imm));
}

/*
 * The call graph, depth first, each function once: no recursion, every
 * function called from main, at most UXDP_BPF_MAX_DEPTH frames on any
 * chain; what each reaches (for the ids its instructions make, see
 * combine()).
 */
static int check_calls(struct env *e)
{
	uint32_t n = e->nsubs, *path, *at, *height, depth = 0, s, i;
	uint8_t *mark;		/* 1: on the path, 2: done */
	int ret = 0;

	path = calloc(4 * (size_t)n + 1, sizeof(*path));
	mark = calloc(n, 1);
	if (!path || !mark) {
		free(path);
		free(mark);
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 prog_name(e));
	}
	at = path + n + 1;
	height = at + n;
	path[0] = 0;
	at[0] = e->sub_start[0];
	mark[0] = 1;
	height[0] = 1;
	for (;;) {
		uint32_t cur = path[depth], t;

		if (at[depth] >= e->sub_start[cur + 1]) {
			uint32_t p;

			mark[cur] = 2;
			if (!depth)
				break;
			p = path[--depth];
			for (i = 0; i < MAX_SUBPROGS / 64; i++)
				e->reach[p][i] |= e->reach[cur][i];
			height[p] = MAX(height[p], height[cur] + 1);
			at[depth]++;
			continue;
		}
		i = at[depth];
		if ((e->iflags[i] & I_SECOND) || !is_local_call(&e->insns[i])) {
			at[depth]++;
			continue;
		}
		t = callee(e, i);
		e->reach[cur][t / 64] |= 1ULL << (t % 64);
		if (mark[t] == 1) {
			ret = insn_fail(e, i, "recursive call");
			break;
		}
		if (mark[t] == 2) {
			for (s = 0; s < MAX_SUBPROGS / 64; s++)
				e->reach[cur][s] |= e->reach[t][s];
			height[cur] = MAX(height[cur], height[t] + 1);
			at[depth]++;
			continue;
		}
		mark[t] = 1;
		height[t] = 1;
		path[++depth] = t;
		at[depth] = e->sub_start[t];
	}
	/* Too deep: name the call that makes frame 9, down the deepest
	 * chain. */
	if (!ret && height[0] > UXDP_BPF_MAX_DEPTH) {
		uint32_t cur = 0, frames = 1;

		for (i = e->sub_start[0]; i < e->sub_start[cur + 1]; i++) {
			if ((e->iflags[i] & I_SECOND) ||
			    !is_local_call(&e->insns[i]) ||
			    height[callee(e, i)] + 1 != height[cur])
				continue;
			if (frames == UXDP_BPF_MAX_DEPTH) {
				ret = insn_fail(e, i, "calls nest %u deep (at "
						"most %u frames)",
						frames + height[callee(e, i)],
						UXDP_BPF_MAX_DEPTH);
				break;
			}
			cur = callee(e, i);
			frames++;
			i = e->sub_start[cur] - 1;
		}
		if (!ret)
			ret = internal(e, UINT32_MAX, "call depth %u",
				       height[0]);
	}
	for (s = 0; s < n && !ret; s++) {
		e->reach[s][s / 64] |= 1ULL << (s % 64);
		if (mark[s] != 2)
			ret = insn_fail(e, e->sub_start[s], "unreachable "
					"function");
	}
	free(path);
	free(mark);
	return ret;
}

static int make_blocks(struct env *e)
{
	uint32_t i, n = 0, s;

	for (i = 0; i < e->len; i++)
		n += !!(e->iflags[i] & I_LEADER);
	e->blk_start = malloc(((size_t)n + 1) * sizeof(*e->blk_start));
	if (!e->blk_start)
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 prog_name(e));
	n = 0;
	for (i = 0; i < e->len; i++) {
		if (e->iflags[i] & I_LEADER)
			e->blk_start[n++] = i;
		e->insn_blk[i] = n - 1;
	}
	e->blk_start[n] = e->len;
	e->nblks = n;
	for (s = 0; s <= e->nsubs; s++)
		e->sub_blk[s] = s < e->nsubs ?
				e->insn_blk[e->sub_start[s]] : n;
	return 0;
}

static int check_maps(struct env *e)
{
	const struct uxdp_bpf_build *b = e->b;
	uint32_t m;

	if (b->nmaps && !b->maps)
		return internal(e, UINT32_MAX, "%u maps and no table",
				b->nmaps);
	if (b->nmaps > UINT16_MAX)
		return uxdp_fail(E2BIG, "prog %s: %u maps", prog_name(e),
				 b->nmaps);
	for (m = 0; m < b->nmaps; m++) {
		const struct uxdp_bpf_build_map *bm = &b->maps[m];

		if (!bm->values != !bm->values_size ||
		    (bm->values && bm->values_size < bm->value_size))
			return internal(e, UINT32_MAX, "map %s: value area of "
					"%llu bytes for values of %u",
					map_name(e, m),
					(unsigned long long)bm->values_size,
					bm->value_size);
		e->map_region[m] = bm->values ? (uint16_t)e->nregions++ :
				   UXDP_BPF_NO_REGION;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The constants compared with, and their neighbours: where widening
 * stops (widen_up()). */
static int make_thresholds(struct env *e)
{
	static const uint64_t tops[] = { 0xff, 0xffff, U32_MAX_, U64_MAX_ };
	uint32_t i, n = 0, k;
	uint64_t *t;

	for (i = 0; i < e->len; i++) {
		uint8_t c = e->insns[i].code;

		n += !(e->iflags[i] & I_SECOND) && is_jump(c) && !SRCX(c) &&
		     !is_uncond(c);
	}
	t = malloc(((size_t)n * 3 + ARRAY_SIZE(tops)) * sizeof(*t));
	if (!t)
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 prog_name(e));
	n = 0;
	for (i = 0; i < e->len; i++) {
		const struct bpf_insn *in = &e->insns[i];
		uint64_t v;

		if ((e->iflags[i] & I_SECOND) || !is_jump(in->code) ||
		    SRCX(in->code) || is_uncond(in->code))
			continue;
		v = CLS(in->code) == BPF_JMP ? (uint64_t)(int64_t)in->imm :
					       (uint32_t)in->imm;
		t[n++] = v - 1;
		t[n++] = v;
		t[n++] = v + 1;
	}
	for (k = 0; k < ARRAY_SIZE(tops); k++)
		t[n++] = tops[k];
	qsort(t, n, sizeof(*t), cmp_u64);
	for (i = k = 0; i < n; i++)
		if (!k || t[k - 1] != t[i])
			t[k++] = t[i];
	e->thr = t;
	e->nthr = k;
	return 0;
}

static int check_structure(struct env *e)
{
	int ret;

	ret = check_maps(e);
	if (!ret)
		ret = check_insns(e);
	if (!ret)
		ret = check_functions(e);
	if (!ret)
		ret = check_reach(e);
	if (!ret)
		ret = check_calls(e);
	if (!ret)
		ret = make_blocks(e);
	if (!ret)
		ret = make_thresholds(e);
	return ret;
}

/* ---- registers ------------------------------------------------------------- */

static struct reg scalar(uint64_t lo, uint64_t hi)
{
	return (struct reg){ .type = SCALAR, .umin = lo, .umax = hi };
}

static struct reg unknown(void)
{
	return scalar(0, U64_MAX_);
}

static struct reg ptr(uint8_t type, int32_t off)
{
	return (struct reg){ .type = type, .off = off };
}

static struct reg pkt_untracked(uint8_t type)
{
	return (struct reg){ .type = type, .id = ID_NONE, .umax = U64_MAX_ };
}

static bool is_const(const struct reg *r)
{
	return r->type == SCALAR && r->umin == r->umax;
}

/* A slot's bytes [at, at + size) (size 1, 2 or 4) hold the low bytes of
 * @k, as a store of that size wrote them. */
static struct reg stack_const(uint32_t at, uint32_t size, uint64_t k)
{
	struct reg r = ptr(STACK_CONST, (int32_t)at);

	r.range = size;
	r.umin = r.umax = k & ((1ULL << (8 * size)) - 1);
	return r;
}

static bool pkt_tracked(const struct reg *r)
{
	return (r->type == PTR_PKT || r->type == PTR_PKT_META) &&
	       r->id != ID_NONE;
}

static bool reg_eq(const struct reg *a, const struct reg *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* Pointers with a variable part: value = off + [0, umax]. */
static bool has_var(uint8_t type)
{
	return type == PTR_STACK || type == PTR_MAP_VALUE || type == PTR_RAW;
}

static struct reg untracked(struct reg r)
{
	r.off = 0;
	r.umin = 0;
	r.umax = U64_MAX_;
	return r;
}

/* The least upper bound of two pointers into the same object. */
static struct reg var_join(const struct reg *a, const struct reg *b)
{
	struct reg r = *a;
	int64_t lo, hi;

	if (a->umax > MAX_OFF || b->umax > MAX_OFF)
		return untracked(r);
	lo = MIN((int64_t)a->off, (int64_t)b->off);
	hi = MAX((int64_t)a->off + (int64_t)a->umax,
		 (int64_t)b->off + (int64_t)b->umax);
	r.off = (int32_t)lo;
	r.umax = (uint64_t)(hi - lo);
	return r;
}

/*
 * The least threshold at or above @x: a widened bound stops at the
 * constants the program compares with (and their neighbours), so a loop
 * counter widened in a loop "i < 16" is [0, 16], not every number.
 */
static uint64_t widen_up(const struct env *e, uint64_t x)
{
	uint32_t lo = 0, hi = e->nthr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e->thr[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nthr ? e->thr[lo] : U64_MAX_;
}

/* @d = @d join @s (widened, with @e: what changes goes up to a threshold
 * or to the top of its kind); whether @d changed. */
/* Whether @r is a prog array, or one of several (MAP_PROG_ANY). */
static bool is_prog_arrays(const struct env *env, const struct reg *r)
{
	return r->type == CONST_MAP &&
	       (r->map == MAP_PROG_ANY ||
		env->b->maps[r->map].type == BPF_MAP_TYPE_PROG_ARRAY);
}

/* Two map pointers to maps of one definition and a kind whose values are
 * not one region (hashes, LRU hashes, LPM tries). */
static bool like_maps(const struct env *env, const struct reg *a,
		      const struct reg *b)
{
	const struct uxdp_bpf_build_map *x, *y;

	if (a->map == MAP_PROG_ANY || b->map == MAP_PROG_ANY)
		return false;
	x = &env->b->maps[a->map];
	y = &env->b->maps[b->map];
	return x->type == y->type && x->key_size == y->key_size &&
	       x->value_size == y->value_size && !x->values && !y->values &&
	       !x->gen_lookup && !y->gen_lookup &&
	       (x->type == BPF_MAP_TYPE_HASH ||
		x->type == BPF_MAP_TYPE_PERCPU_HASH ||
		x->type == BPF_MAP_TYPE_LRU_HASH ||
		x->type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
		x->type == BPF_MAP_TYPE_LPM_TRIE);
}

/* The bytes a PTR_MAP_VALUE's value has, and whether a program may not
 * write it. */
static uint32_t value_bytes(const struct env *env, const struct reg *r)
{
	return r->map == MAP_VALUE_ANY || r->map == MAP_RB_REC ? r->range :
	       env->b->maps[r->map].value_size;
}

static bool value_rdonly(const struct env *env, const struct reg *r)
{
	return r->map == MAP_VALUE_ANY ? r->frame :
	       r->map == MAP_RB_REC ? false : env->b->maps[r->map].rdonly;
}

/* Values of two maps: one of several, as big as the smaller, read-only
 * if either is. */
static struct reg value_any(const struct env *env, const struct reg *d,
			    const struct reg *s)
{
	struct reg r = var_join(d, s);

	r.map = MAP_VALUE_ANY;
	r.id = 0;
	r.range = MIN(value_bytes(env, d), value_bytes(env, s));
	r.frame = value_rdonly(env, d) || value_rdonly(env, s);
	return r;
}

/* @d join @s; @e (widening) may be NULL, @env is the pass's. */
static bool reg_join(const struct env *e, const struct env *env,
		     struct reg *d, const struct reg *s)
{
	struct reg r;

	if (reg_eq(d, s))
		return false;
	if (d->type != s->type) {
		r = unknown();
	} else {
		switch (d->type) {
		case SCALAR:
			r = scalar(MIN(d->umin, s->umin), MAX(d->umax, s->umax));
			if (e)
				r = scalar(0, widen_up(e, r.umax));
			break;
		case PTR_PKT:
		case PTR_PKT_META:
			if (pkt_tracked(d) && d->id == s->id &&
			    d->off == s->off) {
				r = *d;
				r.range = MIN(d->range, s->range);
			} else {
				r = pkt_untracked(d->type);
			}
			break;
		case PTR_STACK:
		case PTR_MAP_VALUE:
		case PTR_RAW:
			if (d->type == PTR_MAP_VALUE &&
			    (d->map == MAP_RB_REC || s->map == MAP_RB_REC) &&
			    d->map != s->map) {
				/* A record and a map's value: a pointer
				 * submit would no longer find. */
				r = unknown();
			} else if (d->type == PTR_MAP_VALUE &&
				   (d->map != s->map ||
				    d->map == MAP_VALUE_ANY)) {
				/* (Two of several maps each: the smaller
				 * size, read-only if either is.) */
				r = value_any(env, d, s);
			} else if (d->type == PTR_MAP_VALUE &&
				   d->map == MAP_RB_REC) {
				/* Two records: the smaller's size; of one
				 * reserve, or of none known. */
				r = var_join(d, s);
				r.range = MIN(d->range, s->range);
				r.id = d->id == s->id ? d->id : 0;
			} else {
				r = var_join(d, s);
			}
			if (d->type == PTR_STACK && d->frame != s->frame)
				r.frame = FRAME_ANY;
			if (e)
				r = untracked(r);
			break;
		case CONST_MAP:
			/* Two prog arrays: clang merges the tail calls of
			 * branches into one call (the kernel's verifier
			 * takes it too, poisoning the call's map). */
			if (is_prog_arrays(env, d) && is_prog_arrays(env, s)) {
				r = *d;
				r.map = MAP_PROG_ANY;
				break;
			}
			/* Two maps of one definition, as "an inner map, or
			 * the fallback if the of-map has none" (Katran's
			 * lru_mapping): either will do for the pass, if the
			 * kind has no value region and no inline lookup
			 * that would tie the access to one of them. */
			if (like_maps(env, d, s)) {
				r = *d;
				r.map = MIN(d->map, s->map);
				break;
			}
			r = unknown();
			break;
		default:
			/* ctx at two offsets, two maps, two lookups */
			r = unknown();
			break;
		}
	}
	if (reg_eq(d, &r))
		return false;
	*d = r;
	return true;
}

/* ---- states ---------------------------------------------------------------- */

static void ws_init(struct wstate *w, uint8_t depth)
{
	uint32_t f;

	memset(w->regs, 0, sizeof(w->regs));
	w->depth = depth;
	w->flags = 0;
	for (f = 0; f <= depth; f++)
		w->spilled[f] = 0;
}

static void ws_load(struct wstate *w, const struct sstate *s)
{
	uint32_t k;

	ws_init(w, s->depth);
	w->flags = s->flags;
	memcpy(w->regs, s->regs, sizeof(w->regs));
	for (k = 0; k < s->nspill; k++) {
		uint32_t f = s->spills[k].at / NSLOTS,
			 n = s->spills[k].at % NSLOTS;

		w->spilled[f] |= 1ULL << n;
		w->slot[f][n] = s->spills[k].r;
	}
}

static void ws_copy(struct wstate *d, const struct wstate *s)
{
	uint32_t f;

	ws_init(d, s->depth);
	d->flags = s->flags;
	memcpy(d->regs, s->regs, sizeof(d->regs));
	for (f = 0; f <= s->depth; f++) {
		uint64_t m = s->spilled[f];

		d->spilled[f] = m;
		while (m) {
			uint32_t n = (uint32_t)__builtin_ctzll(m);

			m &= m - 1;
			d->slot[f][n] = s->slot[f][n];
		}
	}
}

static struct sstate *ss_make(struct env *e, const struct wstate *w,
			      const struct sstate *old, int *err)
{
	uint32_t f, n = 0;
	struct sstate *s;
	size_t size;

	for (f = 0; f <= w->depth; f++)
		n += (uint32_t)__builtin_popcountll(w->spilled[f]);
	size = sizeof(*s) + (size_t)n * sizeof(s->spills[0]);
	if (e->mem + size > MAX_STATE_MEM) {
		*err = uxdp_fail(E2BIG, "prog %s: too complex: the analysis "
				 "needs more than %zu MiB", prog_name(e),
				 MAX_STATE_MEM >> 20);
		return NULL;
	}
	s = malloc(size);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	e->mem += size;
	s->depth = w->depth;
	s->flags = w->flags;
	s->changes = old ? old->changes : 0;
	s->nspill = n;
	memcpy(s->regs, w->regs, sizeof(s->regs));
	n = 0;
	for (f = 0; f <= w->depth; f++) {
		uint64_t m = w->spilled[f];

		while (m) {
			uint32_t k = (uint32_t)__builtin_ctzll(m);

			m &= m - 1;
			s->spills[n].at = (uint16_t)(f * NSLOTS + k);
			s->spills[n].r = w->slot[f][k];
			n++;
		}
	}
	return s;
}

static void ss_free(struct env *e, struct sstate *s)
{
	if (!s)
		return;
	e->mem -= sizeof(*s) + (size_t)s->nspill * sizeof(s->spills[0]);
	free(s);
}

/*
 * Packet pointers across a join. A packet pointer is a base (its id: data,
 * or data plus what a variable add gave it) plus a constant off, with
 * [base, base + range) known to lie in the packet. Two states name their
 * bases each in their own way (a loop's first pass has data + i as data
 * itself, id 0; the next ones as the add's id), and a header parser's
 * "next header" pointer is data + 18 on one path and data + 22 on another.
 * The join groups the registers (and slots) by what they are in both
 * states: (d's id, d's off, s's id, s's off). Registers of one group had
 * one value in d and one in s, so they share an id after the join:
 *
 * - d's id and off, ranges the least of both, when the group is an id
 *   with itself at one off, or when every group of that id in d is of one
 *   id of s's at equal offs (a renaming; never for id 0, data itself,
 *   which assume() relies on);
 * - else the pointer is a base of its own (off 0): d's id when d's is
 *   already one a join made and no other group has it, else a new id
 *   above the program's length (no instruction makes those); its range is
 *   the bytes both states know lie after it (range - off, the least).
 *
 * Widening makes no new ids (those groups end untracked), so loops end.
 */
#define JOIN_GROUPS	32

struct pkt_group {
	uint8_t type;
	int32_t doff, soff;
	uint32_t did, sid;
	uint32_t rid, range;	/* the joined pointer: rid + roff */
	int32_t roff;
	bool ok;
};

/* Every tracked pair, negative offs too: a group kept renames s's base,
 * and no register of that base in s may keep the name unrenamed. */
static bool groupable(const struct reg *d, const struct reg *s)
{
	return pkt_tracked(d) && pkt_tracked(s) && d->type == s->type;
}

static struct pkt_group *group_of(struct pkt_group *g, uint32_t n,
				  const struct reg *d, const struct reg *s)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (g[k].type == d->type && g[k].did == d->id &&
		    g[k].doff == d->off && g[k].sid == s->id &&
		    g[k].soff == s->off)
			return &g[k];
	return NULL;
}

static void group_add(struct pkt_group *g, uint32_t *n, const struct reg *d,
		      const struct reg *s)
{
	if (!groupable(d, s) || group_of(g, *n, d, s) || *n == JOIN_GROUPS)
		return;
	g[(*n)++] = (struct pkt_group){
		.type = d->type, .did = d->id, .doff = d->off,
		.sid = s->id, .soff = s->off,
	};
}

/* The bytes @r is known to have after it. */
static uint32_t after(const struct reg *r, int32_t off)
{
	return r->range > (uint32_t)off ? r->range - (uint32_t)off : 0;
}

static uint32_t groups_make(struct env *ids, bool widen, struct pkt_group *g,
			    const struct wstate *d, const struct wstate *s)
{
	uint32_t n = 0, k, q, f;
	uint64_t m;

	for (k = 0; k < NREGS; k++)
		group_add(g, &n, &d->regs[k], &s->regs[k]);
	for (f = 0; f <= d->depth; f++)
		for (m = d->spilled[f] & s->spilled[f]; m; m &= m - 1) {
			uint32_t at = (uint32_t)__builtin_ctzll(m);

			group_add(g, &n, &d->slot[f][at], &s->slot[f][at]);
		}
	for (k = 0; k < n; k++) {
		struct pkt_group *x = &g[k];
		bool alone = true, same = true;

		/* same: every group of d's id is of one id of s's, at the
		 * same offs (the bases are renamed, nothing else). */
		for (q = 0; q < n; q++) {
			if (q == k || g[q].type != x->type || g[q].did != x->did)
				continue;
			alone = false;
			same &= g[q].sid == x->sid && g[q].doff == g[q].soff;
		}
		same &= x->doff == x->soff;
		if ((x->did == x->sid && x->doff == x->soff) ||
		    (same && x->did)) {
			x->rid = x->did;
			x->roff = x->doff;
			x->ok = true;
			continue;
		}
		/* A base of its own: only above its old base (a pointer below
		 * data has no bytes the range could say follow it). */
		x->roff = 0;
		if (x->doff < 0 || x->soff < 0)
			continue;
		if (alone && x->did > ids->len && !x->doff) {
			x->rid = x->did;
			x->ok = true;
		} else if (!widen && ids->next_id < ID_NONE - 1) {
			x->rid = ids->next_id++;
			x->ok = true;
		}
	}
	return n;
}

/* @d join @s at one place, as its group says. */
static bool reg_join_pkt(const struct env *e, const struct env *env,
			 struct pkt_group *g, uint32_t n, struct reg *d,
			 const struct reg *s)
{
	struct pkt_group *x;
	struct reg r;

	if (!groupable(d, s))
		return reg_join(e, env, d, s);
	x = group_of(g, n, d, s);
	r = *d;
	if (!x || !x->ok) {
		r = pkt_untracked(d->type);
	} else if (x->rid == d->id && x->roff == d->off && d->off == s->off) {
		r.range = MIN(d->range, s->range);
	} else {
		r.id = x->rid;
		r.off = x->roff;
		r.range = MIN(after(d, d->off), after(s, s->off));
	}
	if (reg_eq(d, &r))
		return false;
	*d = r;
	return true;
}

/* @d = @d join @s (the same depth; widened with @e); whether @d changed. */
static bool ws_join(const struct env *e, struct env *ids, struct wstate *d,
		    const struct wstate *s)
{
	struct pkt_group groups[JOIN_GROUPS];
	bool changed = false;
	uint32_t r, f, ng;

	ng = groups_make(ids, e != NULL, groups, d, s);
	for (r = 0; r < NREGS; r++)
		changed |= reg_join_pkt(e, ids, groups, ng, &d->regs[r],
					&s->regs[r]);
	if ((d->flags | s->flags) != d->flags) {
		d->flags |= s->flags;
		changed = true;
	}
	for (f = 0; f <= d->depth; f++) {
		uint64_t both = d->spilled[f] & s->spilled[f], m;

		if (both != d->spilled[f])
			changed = true;
		d->spilled[f] = both;
		for (m = both; m; m &= m - 1) {
			uint32_t n = (uint32_t)__builtin_ctzll(m);

			changed |= reg_join_pkt(e, ids, groups, ng,
						&d->slot[f][n],
						&s->slot[f][n]);
		}
	}
	return changed;
}

/* Apply @fn to every register and spilled slot of @w. */
#define FOR_EACH_REG(w, r, body)					\
	do {								\
		uint32_t r_##r, f_##r;					\
									\
		for (r_##r = 0; r_##r < NREGS; r_##r++) {		\
			struct reg *r = &(w)->regs[r_##r];		\
			body;						\
		}							\
		for (f_##r = 0; f_##r <= (w)->depth; f_##r++) {		\
			uint64_t m_##r = (w)->spilled[f_##r];		\
									\
			for (; m_##r; m_##r &= m_##r - 1) {		\
				struct reg *r = &(w)->slot[f_##r]	\
					[__builtin_ctzll(m_##r)];	\
				body;					\
			}						\
		}							\
	} while (0)

/*
 * Instruction i makes the value with id i + 1 (a packet pointer with a
 * variable offset, a lookup's result): what still holds the id from an
 * earlier run of the same instruction is another value now.
 */
static void demote_id(struct wstate *w, uint32_t id)
{
	FOR_EACH_REG(w, r, {
		if (pkt_tracked(r) && r->id == id)
			*r = pkt_untracked(r->type);
		else if (r->type == PTR_MAP_VALUE_OR_NULL && r->id == id)
			*r = unknown();
	});
}

/* After bpf_xdp_adjust_head() and the like: no packet pointer holds. */
static void demote_pkt(struct reg *r)
{
	if (r->type == PTR_PKT || r->type == PTR_PKT_META ||
	    r->type == PTR_PKT_END)
		*r = unknown();
}

/* A write somewhere in the stack: no spill in [lo, hi) of frame f (every
 * frame: FRAME_ANY) holds any more. */
static void clobber(struct wstate *w, uint32_t f, int64_t lo, int64_t hi)
{
	uint32_t k, from, to;

	if (lo < -UXDP_BPF_STACK)
		lo = -UXDP_BPF_STACK;
	if (hi > 0)
		hi = 0;
	if (lo >= hi)
		return;
	from = (uint32_t)((lo + UXDP_BPF_STACK) / 8);
	to = (uint32_t)((hi + UXDP_BPF_STACK + 7) / 8);
	for (k = 0; k <= w->depth; k++) {
		uint64_t m = to >= 64 ? ~0ULL : (1ULL << to) - 1;

		if (f != FRAME_ANY && f != k)
			continue;
		m &= ~((1ULL << from) - 1);
		w->spilled[k] &= ~m;
	}
}

static void clobber_all(struct wstate *w)
{
	clobber(w, FRAME_ANY, -UXDP_BPF_STACK, 0);
}

/* ---- the worklist ------------------------------------------------------------ */

static int heap_push(struct env *e, uint64_t key)
{
	uint32_t i;

	if (e->nheap == e->heap_cap) {
		uint32_t cap = e->heap_cap ? e->heap_cap * 2 : 256;
		uint64_t *h = realloc(e->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		e->heap = h;
		e->heap_cap = cap;
	}
	i = e->nheap++;
	while (i) {
		uint32_t p = (i - 1) / 2;

		if (e->heap[p] <= key)
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = key;
	return 0;
}

static uint64_t heap_pop(struct env *e)
{
	uint64_t top = e->heap[0], last = e->heap[--e->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= e->nheap)
			break;
		if (c + 1 < e->nheap && e->heap[c + 1] < e->heap[c])
			c++;
		if (last <= e->heap[c])
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->nheap)
		e->heap[i] = last;
	return top;
}

static int new_ctx(struct env *e, uint32_t sub, uint32_t parent,
		   uint32_t call, uint8_t depth, uint32_t *out)
{
	uint32_t nb = e->sub_blk[sub + 1] - e->sub_blk[sub];
	struct actx *c;

	if (e->nctx == MAX_CONTEXTS)
		return uxdp_fail(E2BIG, "prog %s: too complex: more than %u "
				 "call strings", prog_name(e), MAX_CONTEXTS);
	if (e->nctx == e->ctx_cap) {
		uint32_t cap = e->ctx_cap ? e->ctx_cap * 2 : 16;
		struct actx *a = realloc(e->ctx, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		e->ctx = a;
		e->ctx_cap = cap;
	}
	c = &e->ctx[e->nctx];
	memset(c, 0, sizeof(*c));
	c->sub = sub;
	c->parent = parent;
	c->call_insn = call;
	c->depth = depth;
	c->blk = calloc(nb, sizeof(*c->blk));
	c->queued = calloc(nb, 1);
	if (!c->blk || !c->queued) {
		free(c->blk);
		free(c->queued);
		return -ENOMEM;
	}
	*out = e->nctx++;
	return 0;
}

static int child_ctx(struct env *e, uint32_t parent, uint32_t call,
		     uint32_t *out)
{
	struct actx *p = &e->ctx[parent];
	uint32_t k, sub, id;
	int ret;

	for (k = 0; k < p->nkids; k++)
		if (p->kids[2 * k] == call) {
			*out = p->kids[2 * k + 1];
			return 0;
		}
	sub = callee(e, call);
	if (p->depth + 1 >= UXDP_BPF_MAX_DEPTH)
		return internal(e, call, "call depth");
	ret = new_ctx(e, sub, parent, call, (uint8_t)(p->depth + 1), &id);
	if (ret)
		return ret;
	p = &e->ctx[parent];	/* new_ctx may move the table */
	if (p->nkids == p->kids_cap) {
		uint32_t cap = p->kids_cap ? p->kids_cap * 2 : 4;
		uint32_t *a = realloc(p->kids, 2 * cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->kids = a;
		p->kids_cap = cap;
	}
	p->kids[2 * p->nkids] = call;
	p->kids[2 * p->nkids + 1] = id;
	p->nkids++;
	*out = id;
	return 0;
}

/*
 * Join @w into the kept state @*slot; whether it changed. @changes counts
 * the changes, so that a loop that keeps changing a state is widened.
 */
static int keep_state(struct env *e, struct sstate **slot,
		      const struct wstate *w, bool head, bool *changed)
{
	struct sstate *s;
	int err = 0;

	*changed = false;
	if (!*slot) {
		s = ss_make(e, w, NULL, &err);
	} else {
		ws_load(&e->tmp, *slot);
		if (!ws_join((*slot)->changes >= (head ? WIDEN_AFTER :
						  WIDEN_ACYCLIC) ? e : NULL,
			     e, &e->tmp, w))
			return 0;
		s = ss_make(e, &e->tmp, *slot, &err);
		if (s)
			s->changes++;
	}
	if (!s)
		return err;
	ss_free(e, *slot);
	*slot = s;
	*changed = true;
	return 0;
}

/* @w flows into instruction @t (a block's start) of context @c. */
static int flow(struct env *e, uint32_t c, uint32_t t, const struct wstate *w)
{
	struct actx *a = &e->ctx[c];
	uint32_t b = e->insn_blk[t] - e->sub_blk[a->sub];
	bool changed;
	int ret;

	if (e->decide)
		return 0;
	if (e->blk_start[e->insn_blk[t]] != t ||
	    e->insn_blk[t] < e->sub_blk[a->sub] ||
	    e->insn_blk[t] >= e->sub_blk[a->sub + 1])
		return internal(e, t, "flow into the middle of a block");
	ret = keep_state(e, &a->blk[b], w, e->iflags[t] & I_LOOP_HEAD,
			 &changed);
	if (ret || !changed || a->queued[b])
		return ret;
	a->queued[b] = 1;
	return heap_push(e, (uint64_t)c << 32 | b) ? -ENOMEM : 0;
}

/* ---- decisions ------------------------------------------------------------- */

#define PROVEN		0

/* The access at @i is proven (@kind PROVEN) or needs the check @kind;
 * joined over every context the instruction is analysed in. */
static int decide_mem(struct env *e, uint32_t i, uint8_t kind,
		      uint16_t region)
{
	struct uxdp_bpf_aux *x = &e->aux[i];

	if (!e->decide)
		return 0;
	if (x->flags & UXDP_BPF_AUX_CTX)
		return insn_fail(e, i, "the same load reads the context and "
				 "other memory");
	if (!(x->flags & UXDP_BPF_AUX_SEEN)) {
		x->flags |= UXDP_BPF_AUX_SEEN;
		x->kind = kind;
		x->region = region;
		return 0;
	}
	if (x->kind == kind && x->region == region)
		return 0;
	if (x->kind == PROVEN) {
		x->kind = kind;
		x->region = region;
	} else if (kind != PROVEN) {
		x->kind = UXDP_BPF_MEM_ANY;
		x->region = 0;
	}
	return 0;
}

static void note_stack(struct env *e, int64_t lo)
{
	if (e->decide && lo < 0 && (uint64_t)-lo > e->stack_depth)
		e->stack_depth = (uint32_t)-lo;
}

/* ---- ALU ------------------------------------------------------------------- */

static uint64_t fill_bits(uint64_t x)
{
	return x ? U64_MAX_ >> __builtin_clzll(x) : 0;
}

/* dst op= src, both constants, as the engines compute it (RFC 9669). */
static uint64_t alu_const(uint8_t op, int16_t off, uint64_t a, uint64_t b,
			  bool is64)
{
	uint64_t mask = is64 ? U64_MAX_ : U32_MAX_, r;

	a &= mask;
	b &= mask;
	switch (op) {
	case BPF_ADD: r = a + b; break;
	case BPF_SUB: r = a - b; break;
	case BPF_MUL: r = a * b; break;
	case BPF_OR: r = a | b; break;
	case BPF_AND: r = a & b; break;
	case BPF_XOR: r = a ^ b; break;
	case BPF_LSH: r = a << (b & (is64 ? 63 : 31)); break;
	case BPF_RSH: r = a >> (b & (is64 ? 63 : 31)); break;
	case BPF_ARSH:
		if (is64)
			r = (uint64_t)((int64_t)a >> (b & 63));
		else
			r = (uint32_t)((int32_t)(uint32_t)a >> (b & 31));
		break;
	case BPF_DIV:
		if (!b) {
			r = 0;
		} else if (!off) {
			r = a / b;
		} else if (is64) {
			int64_t x = (int64_t)a, y = (int64_t)b;

			r = (x == INT64_MIN && y == -1) ? a :
			    (uint64_t)(x / y);
		} else {
			int32_t x = (int32_t)a, y = (int32_t)b;

			r = (x == INT32_MIN && y == -1) ? a :
			    (uint32_t)(x / y);
		}
		break;
	case BPF_MOD:
		if (!b) {
			r = a;
		} else if (!off) {
			r = a % b;
		} else if (is64) {
			int64_t x = (int64_t)a, y = (int64_t)b;

			r = y == -1 ? 0 : (uint64_t)(x % y);
		} else {
			int32_t x = (int32_t)a, y = (int32_t)b;

			r = y == -1 ? 0 : (uint32_t)(x % y);
		}
		break;
	default:
		r = 0;
		break;
	}
	return r & mask;
}

/* The same over ranges (inputs already within the width). */
static struct reg alu_range(uint8_t op, int16_t off, const struct reg *a,
			    const struct reg *b, bool is64)
{
	uint64_t m = is64 ? U64_MAX_ : U32_MAX_;

	if (is_const(a) && is_const(b))
		return scalar(alu_const(op, off, a->umin, b->umin, is64),
			      alu_const(op, off, a->umin, b->umin, is64));
	switch (op) {
	case BPF_ADD:
		if (a->umax <= m - b->umax)
			return scalar(a->umin + b->umin, a->umax + b->umax);
		break;
	case BPF_SUB:
		if (a->umin >= b->umax)
			return scalar(a->umin - b->umax, a->umax - b->umin);
		break;
	case BPF_MUL:
		if (!a->umax || b->umax <= m / a->umax)
			return scalar(a->umin * b->umin, a->umax * b->umax);
		break;
	case BPF_DIV:
		if (off)
			break;
		if (b->umin)
			return scalar(a->umin / b->umax, a->umax / b->umin);
		return scalar(0, a->umax);
	case BPF_MOD:
		if (off)
			break;
		if (b->umin)
			return scalar(0, MIN(a->umax, b->umax - 1));
		return scalar(0, a->umax);
	case BPF_AND:
		return scalar(0, MIN(a->umax, b->umax));
	case BPF_OR:
		return scalar(MAX(a->umin, b->umin),
			      fill_bits(a->umax | b->umax));
	case BPF_XOR:
		return scalar(0, fill_bits(a->umax | b->umax));
	case BPF_LSH:
		if (is_const(b)) {
			uint32_t k = (uint32_t)(b->umin & (is64 ? 63 : 31));

			if (a->umax <= (m >> k))
				return scalar(a->umin << k, a->umax << k);
		} else if (b->umax <= (is64 ? 63U : 31U) &&
			   a->umax <= (m >> b->umax)) {
			/* A shift by a range below the width (no masking):
			 * xdp-filter's IPv6 header lengths, "len << (2 or
			 * 3)", are bounded so. */
			return scalar(a->umin << b->umin, a->umax << b->umax);
		}
		break;
	case BPF_RSH:
		if (is_const(b)) {
			uint32_t k = (uint32_t)(b->umin & (is64 ? 63 : 31));

			return scalar(a->umin >> k, a->umax >> k);
		}
		if (b->umax <= (is64 ? 63U : 31U))
			return scalar(a->umin >> b->umax, a->umax >> b->umin);
		return scalar(0, a->umax);
	case BPF_ARSH:
		if (a->umax <= (m >> 1) && is_const(b)) {
			uint32_t k = (uint32_t)(b->umin & (is64 ? 63 : 31));

			return scalar(a->umin >> k, a->umax >> k);
		}
		if (a->umax <= (m >> 1))
			return scalar(0, a->umax);
		break;
	}
	return scalar(0, m);
}

static struct reg trunc32(const struct reg *r)
{
	if (r->type == SCALAR && r->umax <= U32_MAX_)
		return *r;
	if (is_const(r))
		return scalar(r->umin & U32_MAX_, r->umin & U32_MAX_);
	return scalar(0, U32_MAX_);
}

/* The byte swaps: le, be, and v4's unconditional bswap. */
static struct reg alu_end(const struct bpf_insn *in, const struct reg *d)
{
	uint32_t bits = (uint32_t)in->imm;
	uint64_t top = bits == 64 ? U64_MAX_ : (1ULL << bits) - 1, v;
	bool swap;

	if (CLS(in->code) == BPF_ALU64)
		swap = true;
	else
		swap = SRCX(in->code) ? __BYTE_ORDER == __LITTLE_ENDIAN :
					__BYTE_ORDER == __BIG_ENDIAN;
	if (!is_const(d)) {
		if (!swap && d->type == SCALAR && d->umax <= top)
			return *d;
		return scalar(0, top);
	}
	v = d->umin & top;
	if (swap)
		v = bits == 16 ? bswap_16((uint16_t)v) :
		    bits == 32 ? bswap_32((uint32_t)v) : bswap_64(v);
	return scalar(v, v);
}

/* ptr += [s->umin, s->umax] at insn @i (ids are made from it). */
static struct reg ptr_add(struct wstate *w, uint32_t i, struct reg p,
			  const struct reg *s)
{
	uint32_t lim = (p.type == PTR_PKT || p.type == PTR_PKT_META) ?
		       MAX_PKT_OFF : MAX_OFF;

	if (s->type != SCALAR)
		return unknown();
	switch (p.type) {
	case PTR_CTX:
		if (!is_const(s))
			return unknown();
		break;
	case PTR_PKT:
	case PTR_PKT_META:
		if (!pkt_tracked(&p))
			return p;
		if (is_const(s))
			break;
		/* A new base: this pointer, whatever was added. The kernel
		 * gives it a new id too; ranges then follow the id. */
		if (p.off < 0 || s->umax > MAX_PKT_OFF)
			return pkt_untracked(p.type);
		demote_id(w, i + 1);
		p.id = i + 1;
		p.off = 0;
		p.range = 0;
		return p;
	case PTR_STACK:
	case PTR_MAP_VALUE:
	case PTR_RAW:
		if (is_const(s))
			break;
		if (p.umax > MAX_OFF || s->umax - s->umin > MAX_OFF ||
		    s->umin > MAX_OFF ||
		    p.umax + (s->umax - s->umin) > MAX_OFF ||
		    (int64_t)p.off + (int64_t)s->umin > MAX_OFF)
			return untracked(p);
		p.off += (int32_t)s->umin;
		p.umax += s->umax - s->umin;
		return p;
	default:
		return unknown();
	}
	/* A constant: negative ones too (-1 is U64_MAX_). Its size is
	 * tested before the sum: p.off + INT64_MIN overflows an int64_t
	 * (fuzz_bpf_check, UBSan, 7,708,758 executions on bb404e0). */
	{
		int64_t c = (int64_t)s->umin, o = 0;

		if (c >= -(int64_t)MAX_OFF && c <= MAX_OFF)
			o = (int64_t)p.off + c;
		if (c < -(int64_t)MAX_OFF || c > MAX_OFF ||
		    o < -(int64_t)lim || o > (int64_t)lim) {
			if (p.type == PTR_PKT || p.type == PTR_PKT_META)
				return pkt_untracked(p.type);
			return p.type == PTR_CTX ? unknown() : untracked(p);
		}
		p.off = (int32_t)o;
	}
	return p;
}

static struct reg ptr_sub(struct wstate *w, uint32_t i, struct reg p,
			  const struct reg *s)
{
	struct reg neg;

	if (s->type != SCALAR)
		return unknown();
	if (is_const(s) && s->umin != (1ULL << 63)) {
		neg = scalar(-s->umin, -s->umin);
		return ptr_add(w, i, p, &neg);
	}
	if (p.type == PTR_PKT || p.type == PTR_PKT_META)
		return pkt_untracked(p.type);
	return has_var(p.type) ? untracked(p) : unknown();
}

static int do_alu(struct env *e, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	bool is64 = CLS(in->code) == BPF_ALU64;
	uint8_t op = OP(in->code);
	struct reg *d = &w->regs[in->dst_reg], s;

	if (op != BPF_MOV && d->type == NOT_INIT) {
		if (REFUSE(e, i, "R%u is not initialised", in->dst_reg))
			return -EINVAL;
		*d = unknown();
	}
	if (op == BPF_END) {
		*d = alu_end(in, d);
		return 0;
	}
	if (SRCX(in->code)) {
		s = w->regs[in->src_reg];
		if (s.type == NOT_INIT) {
			if (REFUSE(e, i, "R%u is not initialised", in->src_reg))
				return -EINVAL;
			s = unknown();
		}
	} else {
		uint64_t k = (uint64_t)(int64_t)in->imm;

		s = is64 ? scalar(k, k) : scalar(k & U32_MAX_, k & U32_MAX_);
	}

	if (op == BPF_MOV) {
		if (SRCX(in->code) && in->off) {
			/* movsx: a scalar, exact when constant. */
			uint64_t v = s.umin;

			if (!is_const(&s)) {
				*d = scalar(0, is64 ? U64_MAX_ : U32_MAX_);
				return 0;
			}
			v = in->off == 8 ? (uint64_t)(int8_t)v :
			    in->off == 16 ? (uint64_t)(int16_t)v :
					    (uint64_t)(int32_t)v;
			if (!is64)
				v &= U32_MAX_;
			*d = scalar(v, v);
			return 0;
		}
		*d = is64 ? s : trunc32(&s);
		return 0;
	}
	if (op == BPF_NEG) {
		struct reg zero = scalar(0, 0), a = is64 ? *d : trunc32(d);

		*d = d->type == SCALAR ?
		     alu_range(BPF_SUB, 0, &zero, &a, is64) :
		     scalar(0, is64 ? U64_MAX_ : U32_MAX_);
		return 0;
	}
	if (!is64) {
		struct reg a = trunc32(d), b = trunc32(&s);

		if (d->type != SCALAR || s.type != SCALAR)
			*d = scalar(0, U32_MAX_);
		else
			*d = alu_range(op, in->off, &a, &b, false);
		return 0;
	}
	if (d->type == SCALAR && s.type == SCALAR) {
		*d = alu_range(op, in->off, d, &s, true);
		return 0;
	}
	/* Pointer arithmetic: add and subtract, the rest makes a scalar
	 * (whose accesses are then checked). */
	if (op == BPF_ADD && d->type == SCALAR)
		*d = ptr_add(w, i, s, d);
	else if (op == BPF_ADD)
		*d = ptr_add(w, i, *d, &s);
	else if (op == BPF_SUB && s.type == SCALAR)
		*d = ptr_sub(w, i, *d, &s);
	else
		*d = unknown();
	return 0;
}

/* ---- memory ------------------------------------------------------------------ */

static struct reg loaded(uint32_t size)
{
	return scalar(0, size == 8 ? U64_MAX_ : (1ULL << (8 * size)) - 1);
}

/* The context loads: which field, what it gives. */
static int ctx_load(struct env *e, uint32_t i, const struct reg *p,
		    bool write, struct reg *out)
{
	const struct bpf_insn *in = &e->insns[i];
	int32_t off = in->off;
	uint32_t size = mem_size(in->code);

	*out = unknown();
	if (write)
		return REFUSE(e, i, "write to xdp_md: the kernel would refuse "
			      "it");
	if (p->off)
		return REFUSE(e, i, "dereference of a modified context pointer "
			      "(R%u%+d)", in->src_reg, p->off);
	if (off < 0 || off >= 6 * 4)
		return REFUSE(e, i, "read past xdp_md (off %d, 24 bytes)", off);
	if (MODE(in->code) != BPF_MEM || size != 4 || off % 4)
		return REFUSE(e, i, "read of xdp_md at off %d size %u: the "
			      "kernel reads only its u32 fields", off, size);
	/* As the kernel's xdp_is_valid_access: egress_ifindex only in a
	 * DEVMAP program, which runs on egress. */
	if (off / 4 == UXDP_BPF_CTX_EGRESS_IFINDEX &&
	    !(e->b->flags & UXDP_BPF_BUILD_F_EGRESS))
		return REFUSE(e, i, "read of xdp_md.egress_ifindex outside an "
			      "xdp/devmap program: the kernel would refuse "
			      "it");
	switch (off / 4) {
	case UXDP_BPF_CTX_DATA:
		*out = ptr(PTR_PKT, 0);
		break;
	case UXDP_BPF_CTX_DATA_END:
		*out = ptr(PTR_PKT_END, 0);
		break;
	case UXDP_BPF_CTX_DATA_META:
		*out = ptr(PTR_PKT_META, 0);
		break;
	default:
		*out = scalar(0, U32_MAX_);
		break;
	}
	if (e->decide) {
		struct uxdp_bpf_aux *x = &e->aux[i];

		if ((x->flags & UXDP_BPF_AUX_SEEN) &&
		    (!(x->flags & UXDP_BPF_AUX_CTX) ||
		     x->ctx_field != off / 4))
			return insn_fail(e, i, "the same load reads the "
					 "context and other memory");
		x->flags |= UXDP_BPF_AUX_SEEN | UXDP_BPF_AUX_CTX;
		x->kind = PROVEN;
		x->ctx_field = (uint8_t)(off / 4);
	}
	return 0;
}

/*
 * Whether [p + lo, p + lo + umax + size) is proven inside what @p points
 * to (a proven stack range notes the depth).
 */
static bool proven(struct env *e, const struct reg *p, int64_t o,
		   uint64_t size, bool write)
{
	int64_t lo = (int64_t)p->off + o;

	if (size > MAX_OFF)
		return false;
	switch (p->type) {
	case PTR_PKT:
	case PTR_PKT_META:
		return pkt_tracked(p) && lo >= 0 &&
		       lo + (int64_t)size <= (int64_t)p->range;
	case PTR_STACK:
		if (p->umax > MAX_OFF || lo < -UXDP_BPF_STACK ||
		    lo + (int64_t)p->umax + (int64_t)size > 0)
			return false;
		note_stack(e, lo);
		return true;
	case PTR_MAP_VALUE:
		if (write && value_rdonly(e, p))
			return false;
		return p->umax <= MAX_OFF && lo >= 0 &&
		       lo + (int64_t)p->umax + (int64_t)size <=
		       (int64_t)value_bytes(e, p);
	default:
		return false;
	}
}

/*
 * What a fill of the @size bytes at @lo (a constant offset into frame @f,
 * inside it) reads, in *@out: a whole spilled slot's value, or the
 * constant a STACK_CONST part holds when the fill is exactly that part.
 * false: nothing known (*@out as it was).
 */
static bool slot_read(const struct wstate *w, uint32_t f, int64_t lo,
		      uint32_t size, struct reg *out)
{
	uint32_t n = (uint32_t)((lo + UXDP_BPF_STACK) / 8);
	uint32_t at = (uint32_t)((lo + UXDP_BPF_STACK) % 8);
	const struct reg *sl = &w->slot[f][n];

	if (!(w->spilled[f] >> n & 1))
		return false;
	if (sl->type == STACK_CONST) {
		if ((uint32_t)sl->off != at || sl->range != size)
			return false;
		*out = scalar(sl->umin, sl->umin);
		return true;
	}
	if (size != 8 || at)
		return false;
	*out = *sl;
	return true;
}

/* A write through @p proven inside the stack: the spills it covers go. */
static void stack_written(struct wstate *w, const struct reg *p, int64_t o,
			  uint64_t size)
{
	int64_t lo = (int64_t)p->off + o;

	if (p->type != PTR_STACK)
		return;
	if (p->umax > MAX_OFF)
		clobber_all(w);
	else
		clobber(w, p->frame, lo, lo + (int64_t)p->umax + (int64_t)size);
}

static int do_mem(struct env *e, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	uint8_t cls = CLS(in->code), mode = MODE(in->code);
	bool atomic = cls == BPF_STX && mode == BPF_ATOMIC;
	bool write = cls != BPF_LDX;
	uint32_t size = mem_size(in->code);
	uint8_t preg = cls == BPF_LDX ? in->src_reg : in->dst_reg;
	uint8_t kind = UXDP_BPF_MEM_ANY;
	uint16_t region = 0;
	struct reg p = w->regs[preg], val = scalar(0, 0), res;
	int64_t lo;
	int ret;

	res = loaded(size);
	if (cls == BPF_STX) {
		val = w->regs[in->src_reg];
		if (val.type == NOT_INIT) {
			if (REFUSE(e, i, "R%u is not initialised",
				   in->src_reg))
				return -EINVAL;
			val = unknown();
		}
	} else if (cls == BPF_ST) {
		uint64_t k = (uint64_t)(int64_t)in->imm;

		val = scalar(k, k);
	}
	if (atomic && in->imm == BPF_CMPXCHG &&
	    w->regs[BPF_REG_0].type == NOT_INIT &&
	    REFUSE(e, i, "R0 is not initialised"))
		return -EINVAL;
	if (p.type == NOT_INIT) {
		if (REFUSE(e, i, "R%u is not initialised", preg))
			return -EINVAL;
		p = unknown();
	}
	lo = (int64_t)p.off + in->off;
	/* Atomics must be aligned (frames and values are, to 8). */
	if (atomic && (p.type == PTR_STACK || p.type == PTR_MAP_VALUE) &&
	    !p.umax && lo % size &&
	    REFUSE(e, i, "misaligned atomic at off %lld size %u",
		   (long long)lo, size))
		return -EINVAL;

	switch (p.type) {
	case PTR_CTX:
		if (ctx_load(e, i, &p, write, &res))
			return -EINVAL;
		kind = PROVEN;
		break;
	case PTR_PKT_END:
		if (REFUSE(e, i, "R%u is pkt_end: data_end is not readable",
			   preg))
			return -EINVAL;
		break;
	case CONST_MAP:
		if (REFUSE(e, i, "R%u points to map %s, not to a value", preg,
			   map_name(e, p.map)))
			return -EINVAL;
		break;
	case PTR_MAP_VALUE_OR_NULL:
		if (REFUSE(e, i, "R%u may be NULL: compare the lookup's result "
			   "with 0 first", preg))
			return -EINVAL;
		break;
	case PTR_PKT:
	case PTR_PKT_META:
		if (atomic && REFUSE(e, i, "atomic operation on packet "
				     "memory: the kernel would refuse it"))
			return -EINVAL;
		kind = proven(e, &p, in->off, size, write) ? PROVEN :
		       UXDP_BPF_MEM_PKT;
		break;
	case PTR_STACK:
		kind = UXDP_BPF_MEM_STACK;
		if (p.umax == 0 && (lo < -UXDP_BPF_STACK || lo + size > 0) &&
		    REFUSE(e, i, "stack access at %lld size %u: outside the "
			   "frame [-%u, 0)", (long long)lo, size,
			   UXDP_BPF_STACK))
			return -EINVAL;
		if (!proven(e, &p, in->off, size, write)) {
			if (write)
				clobber_all(w);
			break;
		}
		kind = PROVEN;
		if (p.umax || p.frame == FRAME_ANY) {
			if (write)
				stack_written(w, &p, in->off, size);
			break;
		}
		/* A constant slot of a known frame: spill and fill. */
		{
			uint32_t f = p.frame, n = (uint32_t)((lo + 512) / 8);
			uint32_t at = (uint32_t)((lo + 512) % 8);
			bool whole = size == 8 && !at;

			if (cls == BPF_LDX) {
				if (mode == BPF_MEM)
					slot_read(w, f, lo, size, &res);
				break;
			}
			stack_written(w, &p, in->off, size);
			if (atomic || at + size > 8)
				break;
			if (whole) {
				w->spilled[f] |= 1ULL << n;
				w->slot[f][n] = val;
			} else if (is_const(&val)) {
				w->spilled[f] |= 1ULL << n;
				w->slot[f][n] = stack_const(at, size,
							    val.umin);
			}
		}
		break;
	case PTR_MAP_VALUE: {
		const struct uxdp_bpf_build_map *m;

		if (p.map == MAP_VALUE_ANY || p.map == MAP_RB_REC) {
			/* The kernel checks each path with its own map;
			 * here the access must fit every one of them. */
			if (proven(e, &p, in->off, size, write)) {
				kind = PROVEN;
				break;
			}
			/* A record is no region a check could find. */
			if (p.map == MAP_RB_REC &&
			    REFUSE(e, i, "access to a ring buffer record at off "
				   "%lld size %u%s: the record has %u bytes",
				   (long long)lo, size, p.umax ? " (and a "
				   "variable part)" : "", p.range))
				return -EINVAL;
			if (write && p.frame &&
			    REFUSE(e, i, "write into a value of one of several "
				   "maps, one of them read-only"))
				return -EINVAL;
			/* Beyond the least value: checked at run time, as
			 * a pointer this pass does not know. */
			if (write)
				clobber_all(w);
			break;
		}
		m = &e->b->maps[p.map];
		if (write && m->rdonly &&
		    REFUSE(e, i, "write into read-only map %s",
			   map_name(e, p.map)))
			return -EINVAL;
		if (proven(e, &p, in->off, size, write)) {
			kind = PROVEN;
			break;
		}
		if (p.umax == 0 &&
		    REFUSE(e, i, "access to map %s's value at off %lld size "
			   "%u: its value_size is %u", map_name(e, p.map),
			   (long long)lo, size, m->value_size))
			return -EINVAL;
		region = e->map_region[p.map];
		if (region == UXDP_BPF_NO_REGION) {
			if (REFUSE(e, i, "variable access into map %s's value, "
				   "which has no region to check it in",
				   map_name(e, p.map)))
				return -EINVAL;
			region = 0;
			break;
		}
		kind = UXDP_BPF_MEM_REGION;
		break;
	}
	case PTR_RAW:
		kind = UXDP_BPF_MEM_RAW;
		break;
	default:
		/* Where to, this pass does not know: the check says. */
		if (write)
			clobber_all(w);
		break;
	}
	if (p.type != PTR_CTX) {
		ret = decide_mem(e, i, kind, region);
		if (ret)
			return ret;
	}
	/* Frames and values are aligned to 8, so a constant offset into one
	 * was proven aligned above; any other atomic is checked for it. */
	if (atomic && e->decide &&
	    (p.umax || (p.type != PTR_STACK && p.type != PTR_MAP_VALUE)))
		e->aux[i].flags |= UXDP_BPF_AUX_ALIGN;

	if (cls == BPF_LDX) {
		if (mode == UXDP_BPF_MEMSX && p.type != PTR_CTX)
			res = unknown();
		w->regs[in->dst_reg] = res;
	} else if (atomic) {
		struct reg old = loaded(size);

		if (in->imm == BPF_CMPXCHG)
			w->regs[BPF_REG_0] = old;
		else if (in->imm & BPF_FETCH)
			w->regs[in->src_reg] = old;
	}
	return 0;
}

static int do_lddw(struct env *e, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	struct reg *d = &w->regs[in->dst_reg];
	uint64_t v;

	switch (in->src_reg) {
	case BPF_PSEUDO_MAP_IDX:
		*d = ptr(CONST_MAP, 0);
		d->map = (uint16_t)in->imm;
		break;
	case BPF_PSEUDO_MAP_IDX_VALUE:
		*d = ptr(PTR_MAP_VALUE, in[1].imm);
		d->map = (uint16_t)in->imm;
		break;
	default:
		v = (uint64_t)(uint32_t)in->imm |
		    (uint64_t)(uint32_t)in[1].imm << 32;
		*d = scalar(v, v);
		break;
	}
	return 0;
}

/* ---- calls --------------------------------------------------------------------- */

/*
 * Whether the @n bytes at stack pointer @p are known, and then what
 * (their host-order value in *@k): one store of a constant of exactly
 * those bytes is the last write to them in this state (a whole 8-byte
 * slot, or the part STACK_CONST keeps).
 */
static bool stack_known(const struct wstate *w, const struct reg *p,
			uint64_t n, uint64_t *k)
{
	struct reg r;

	if (p->type != PTR_STACK || p->umax || p->frame == FRAME_ANY ||
	    p->frame > w->depth || p->off < -UXDP_BPF_STACK ||
	    (int64_t)p->off + (int64_t)n > 0 || n > 8 ||
	    !slot_read(w, p->frame, p->off, (uint32_t)n, &r) || !is_const(&r))
		return false;
	*k = r.umin;
	return true;
}

static int do_helper(struct env *e, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	const struct uxdp_bpf_helper *h = helper_of(e, (uint32_t)in->imm);
	int map = -1;		/* the map argument's; -2: not a map */
	uint32_t a, id = (uint32_t)in->imm;
	bool key_known = false;
	uint64_t key = 0;
	char name[64];

	if (!h)
		return internal(e, i, "helper %u went away", id);
	snprintf(name, sizeof(name), "%s", h->name ? h->name : "helper");
	for (a = 0; a < 5; a++) {
		uint8_t kind = h->args[a];
		struct reg *r = &w->regs[1 + a], *sz;
		uint64_t n;

		if (kind == UXDP_BPF_ARG_NONE)
			continue;
		if (r->type == NOT_INIT) {
			if (REFUSE(e, i, "R%u (argument %u of %s) is not "
				   "initialised", a + 1, a + 1, name))
				return -EINVAL;
			if (kind == UXDP_BPF_ARG_MAP)
				map = -2;
			continue;
		}
		switch (kind) {
		case UXDP_BPF_ARG_ANY:
		case UXDP_BPF_ARG_SIZE:
			break;
		case UXDP_BPF_ARG_CTX:
			if ((r->type != PTR_CTX || r->off) &&
			    REFUSE(e, i, "R%u is %s: %s takes the context",
				   a + 1, type_names[r->type], name))
				return -EINVAL;
			break;
		case UXDP_BPF_ARG_MAP:
			if (r->type != CONST_MAP) {
				if (REFUSE(e, i, "R%u is %s: %s takes a map",
					   a + 1, type_names[r->type], name))
					return -EINVAL;
				map = -2;
				break;
			}
			if (r->map == MAP_PROG_ANY) {
				if (id != BPF_FUNC_tail_call &&
				    REFUSE(e, i, "R%u is one of several prog "
					   "arrays: only tail_call takes "
					   "one", a + 1))
					return -EINVAL;
				map = -2;
				break;
			}
			map = r->map;
			if (id == BPF_FUNC_tail_call &&
			    e->b->maps[map].type != BPF_MAP_TYPE_PROG_ARRAY &&
			    REFUSE(e, i, "tail call through map %s, not a "
				   "prog_array", map_name(e, map)))
				return -EINVAL;
			/* The kernel's check_map_func_compatibility. */
			if ((id == BPF_FUNC_redirect_map) !=
			    (e->b->maps[map].type == BPF_MAP_TYPE_DEVMAP ||
			     e->b->maps[map].type ==
			     BPF_MAP_TYPE_DEVMAP_HASH ||
			     e->b->maps[map].type == BPF_MAP_TYPE_XSKMAP) &&
			    (id == BPF_FUNC_redirect_map ||
			     id != BPF_FUNC_map_lookup_elem) &&
			    REFUSE(e, i, "%s on map %s (type %u): redirect_map "
				   "takes a devmap, a devmap_hash or an xskmap, "
				   "and those take only it and map_lookup_elem", name,
				   map_name(e, map), e->b->maps[map].type))
				return -EINVAL;
			if (id != BPF_FUNC_map_lookup_elem &&
			    (e->b->maps[map].type ==
			     BPF_MAP_TYPE_ARRAY_OF_MAPS ||
			     e->b->maps[map].type ==
			     BPF_MAP_TYPE_HASH_OF_MAPS) &&
			    REFUSE(e, i, "%s on map %s, an of-map: only "
				   "map_lookup_elem takes one", name,
				   map_name(e, map)))
				return -EINVAL;
			if ((id == BPF_FUNC_perf_event_output) !=
			    (e->b->maps[map].type ==
			     BPF_MAP_TYPE_PERF_EVENT_ARRAY) &&
			    REFUSE(e, i, "%s on map %s (type %u): "
				   "perf_event_output takes a perf_event_array, "
				   "and that takes only it", name,
				   map_name(e, map), e->b->maps[map].type))
				return -EINVAL;
			/* The ring buffer calls take a ringbuf (and it only
			 * them). */
			if ((id == BPF_FUNC_ringbuf_output ||
			     id == BPF_FUNC_ringbuf_reserve ||
			     id == BPF_FUNC_ringbuf_query) !=
			    (e->b->maps[map].type == BPF_MAP_TYPE_RINGBUF) &&
			    REFUSE(e, i, "%s on map %s (type %u): the ring "
				   "buffer calls take a ringbuf, and that takes "
				   "only them", name, map_name(e, map),
				   e->b->maps[map].type))
				return -EINVAL;
			/* Push, pop and peek take a queue or a stack, and
			 * those take only them. */
			if ((id == BPF_FUNC_map_push_elem ||
			     id == BPF_FUNC_map_pop_elem ||
			     id == BPF_FUNC_map_peek_elem) !=
			    (e->b->maps[map].type == BPF_MAP_TYPE_QUEUE ||
			     e->b->maps[map].type == BPF_MAP_TYPE_STACK) &&
			    REFUSE(e, i, "%s on map %s (type %u): push, pop "
				   "and peek take a queue or a stack, and those "
				   "take only them", name, map_name(e, map),
				   e->b->maps[map].type))
				return -EINVAL;
			if (id != BPF_FUNC_tail_call &&
			    e->b->maps[map].type == BPF_MAP_TYPE_PROG_ARRAY &&
			    REFUSE(e, i, "%s on map %s, a prog_array: only "
				   "tail_call takes one", name,
				   map_name(e, map)))
				return -EINVAL;
			break;
		case UXDP_BPF_ARG_KEY:
		case UXDP_BPF_ARG_VALUE:
		case UXDP_BPF_ARG_VALUE_WR: {
			bool wr = kind == UXDP_BPF_ARG_VALUE_WR;

			if (map == -1)
				return internal(e, i, "%s: a key or value "
						"before its map", name);
			if (map < 0)
				break;
			n = kind == UXDP_BPF_ARG_KEY ?
			    e->b->maps[map].key_size :
			    e->b->maps[map].value_size;
			if (!proven(e, r, 0, n, wr) &&
			    REFUSE(e, i, "R%u (%s) is not %llu %s bytes "
				   "of a %s for %s", a + 1,
				   type_names[r->type], (unsigned long long)n,
				   wr ? "writable" : "readable",
				   kind == UXDP_BPF_ARG_KEY ? "key" : "value",
				   name))
				return -EINVAL;
			if (kind == UXDP_BPF_ARG_KEY)
				key_known = stack_known(w, r, n, &key);
			if (wr)
				stack_written(w, r, 0, n);
			break;
		}
		case UXDP_BPF_ARG_MEM:
		case UXDP_BPF_ARG_MEM_WR:
			if (a == 4 || h->args[a + 1] != UXDP_BPF_ARG_SIZE)
				return internal(e, i, "%s: memory without a "
						"size", name);
			sz = &w->regs[2 + a];
			if (sz->type != SCALAR) {
				if (REFUSE(e, i, "R%u (a size for %s) is %s",
					   a + 2, name, type_names[sz->type]))
					return -EINVAL;
				break;
			}
			n = sz->umax;
			if (n > MAX_OFF) {
				if (REFUSE(e, i, "R%u (a size for %s) is not "
					   "bounded", a + 2, name))
					return -EINVAL;
				break;
			}
			if (n && !proven(e, r, 0, n,
					 kind == UXDP_BPF_ARG_MEM_WR)) {
				if (REFUSE(e, i, "R%u (%s) is not %llu %s "
					   "bytes for %s", a + 1,
					   type_names[r->type],
					   (unsigned long long)n,
					   kind == UXDP_BPF_ARG_MEM ?
					   "readable" : "writable", name))
					return -EINVAL;
				break;
			}
			if (n && kind == UXDP_BPF_ARG_MEM_WR)
				stack_written(w, r, 0, n);
			break;
		default:
			return internal(e, i, "%s: argument kind %u", name,
					kind);
		}
	}
	if (id == BPF_FUNC_ringbuf_submit || id == BPF_FUNC_ringbuf_discard) {
		struct reg *r1 = &w->regs[1];
		uint32_t rid = r1->id;

		if ((r1->type != PTR_MAP_VALUE || r1->map != MAP_RB_REC ||
		     r1->off || r1->umax) &&
		    REFUSE(e, i, "R1 is %s: %s takes the start of a record "
			   "from bpf_ringbuf_reserve", r1->type ==
			   PTR_MAP_VALUE && r1->map == MAP_RB_REC ?
			   "inside a ring buffer record" :
			   type_names[r1->type], name))
			return -EINVAL;
		/* The record is the ring's now: no pointer to it is one,
		 * nor any record pointer a join left without an id (it may
		 * be this one). */
		if (r1->type == PTR_MAP_VALUE && r1->map == MAP_RB_REC)
			FOR_EACH_REG(w, r, {
				if (r->type == PTR_MAP_VALUE &&
				    r->map == MAP_RB_REC &&
				    (r->id == rid || !r->id || !rid))
					*r = unknown();
			});
	}
	if (changes_pkt(id)) {
		FOR_EACH_REG(w, r, demote_pkt(r));
		w->flags |= ST_PKT_CHANGED;
	}
	if (h->ret == UXDP_BPF_RET_VALUE_OR_NULL && map == -1)
		return internal(e, i, "%s returns a value of no map", name);
	if (e->decide && id == BPF_FUNC_map_lookup_elem) {
		struct uxdp_bpf_aux *x = &e->aux[i];

		if (map < 0 || ((x->flags & UXDP_BPF_AUX_LOOKUP) &&
				x->region != (uint16_t)map))
			x->flags |= UXDP_BPF_AUX_NOLOOKUP;
		x->flags |= UXDP_BPF_AUX_LOOKUP;
		x->region = map < 0 ? 0 : (uint16_t)map;
		/* Folded only if every state has the same key (a call
		 * string reaches here once per state it has). */
		if (!key_known ||
		    ((x->flags & UXDP_BPF_AUX_KEY) && x->key != key))
			x->flags |= UXDP_BPF_AUX_KEYVAR;
		x->flags |= UXDP_BPF_AUX_KEY;
		x->key = key;
	}
	if (h->ret == UXDP_BPF_RET_VALUE_OR_NULL && map >= 0) {
		demote_id(w, i + 1);
		w->regs[0] = ptr(PTR_MAP_VALUE_OR_NULL, 0);
		w->regs[0].map = (uint16_t)map;
		w->regs[0].id = i + 1;
	} else if (h->ret == UXDP_BPF_RET_VOID) {
		w->regs[0] = ptr(NOT_INIT, 0);
	} else if (id == BPF_FUNC_ringbuf_reserve) {
		/* The kernel's ARG_CONST_ALLOC_SIZE_OR_ZERO: a known size,
		 * the record's (what its accesses are proven against). */
		const struct reg *sz = &w->regs[2];

		if ((sz->type != SCALAR || !is_const(sz) ||
		     sz->umin > MAX_OFF) &&
		    REFUSE(e, i, "R2 (ringbuf_reserve's size) is not a known "
			   "constant"))
			return -EINVAL;
		demote_id(w, i + 1);
		FOR_EACH_REG(w, r, {
			if (r->type == PTR_MAP_VALUE && r->map == MAP_RB_REC &&
			    r->id == i + 1)
				r->id = 0;
		});
		w->regs[0] = ptr(PTR_MAP_VALUE_OR_NULL, 0);
		w->regs[0].map = MAP_RB_REC;
		w->regs[0].range = is_const(sz) && sz->umin <= MAX_OFF ?
				   (uint32_t)sz->umin : 0;
		w->regs[0].id = i + 1;
	} else {
		w->regs[0] = unknown();
	}
	for (a = 1; a <= 5; a++)
		w->regs[a] = ptr(NOT_INIT, 0);
	return 0;
}

/* The caller's state after its call at @c's call_insn returned. */
static void combine(struct env *e, struct actx *c, struct wstate *out)
{
	const struct sstate *ret = c->ret_state;
	uint32_t r, f, d = c->depth;

	ws_load(out, c->call_state);
	out->regs[0] = ret->regs[0];
	for (r = 1; r <= 5; r++)
		out->regs[r] = ptr(NOT_INIT, 0);
	for (f = 0; f < d; f++)
		out->spilled[f] = 0;
	for (r = 0; r < ret->nspill; r++) {
		uint32_t at = ret->spills[r].at;

		if (at / NSLOTS >= d)
			continue;
		out->spilled[at / NSLOTS] |= 1ULL << (at % NSLOTS);
		out->slot[at / NSLOTS][at % NSLOTS] = ret->spills[r].r;
	}
	out->flags |= ret->flags;
	/* The callee's frame is gone: pointers into it are numbers. */
	FOR_EACH_REG(out, q, {
		if (q->type == PTR_STACK && q->frame >= d)
			*q = unknown();
	});
	for (r = 6; r <= 9; r++) {
		struct reg *q = &out->regs[r];
		uint32_t k;

		if (ret->flags & ST_PKT_CHANGED)
			demote_pkt(q);
		/* Values the callee's instructions made again. */
		/* (An id a join made, above len, no instruction makes
		 * again.) */
		if ((pkt_tracked(q) && q->id && q->id <= e->len) ||
		    q->type == PTR_MAP_VALUE_OR_NULL) {
			k = sub_of(e, q->id - 1);
			if (e->reach[c->sub][k / 64] >> (k % 64) & 1)
				demote_id(out, q->id);
		}
	}
}

static int do_call(struct env *e, uint32_t ci, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	uint32_t t = (uint32_t)((int64_t)i + 1 + in->imm), kid = 0, r;
	struct actx *k;
	bool changed;
	int ret;

	if (e->decide)
		return 0;
	ret = child_ctx(e, ci, i, &kid);
	if (ret)
		return ret;
	k = &e->ctx[kid];
	ret = keep_state(e, &k->call_state, w, true, &changed);
	if (ret || !changed)
		return ret;
	/* The callee starts with the arguments and a frame of its own. */
	ws_load(&e->edge, k->call_state);
	e->edge.depth = k->depth;
	e->edge.spilled[k->depth] = 0;
	e->edge.flags = 0;
	e->edge.regs[0] = ptr(NOT_INIT, 0);
	for (r = 6; r <= 9; r++)
		e->edge.regs[r] = ptr(NOT_INIT, 0);
	e->edge.regs[10] = ptr(PTR_STACK, 0);
	e->edge.regs[10].frame = k->depth;
	ret = flow(e, kid, t, &e->edge);
	if (ret || !e->ctx[kid].ret_state)
		return ret;
	combine(e, &e->ctx[kid], &e->edge);
	return flow(e, ci, i + 1, &e->edge);
}

static int do_exit(struct env *e, uint32_t ci, struct wstate *w, uint32_t i)
{
	struct actx *c = &e->ctx[ci];
	struct reg *r0 = &w->regs[0];
	bool changed;
	int ret;

	if (r0->type == NOT_INIT) {
		if (REFUSE(e, i, "R0 is not initialised at exit"))
			return -EINVAL;
		*r0 = unknown();
	}
	if (!c->depth) {
		if (e->b->ctx_kind == UXDP_BPF_CTX_XDP && r0->type != SCALAR &&
		    REFUSE(e, i, "R0 is %s at exit: an XDP program returns "
			   "an action", type_names[r0->type]))
			return -EINVAL;
		return 0;
	}
	if (r0->type == PTR_STACK && (r0->frame == c->depth ||
				      r0->frame == FRAME_ANY) &&
	    REFUSE(e, i, "returns a pointer to its own stack"))
		return -EINVAL;
	if (e->decide)
		return 0;
	ret = keep_state(e, &c->ret_state, w, true, &changed);
	if (ret || !changed || !c->call_state)
		return ret;
	combine(e, &e->ctx[ci], &e->edge);
	return flow(e, c->parent, c->call_insn + 1, &e->edge);
}

/* ---- branches ------------------------------------------------------------------ */

/* Refine a scalar by "r OP k" holding (unsigned, in @bits); false: it
 * cannot hold. */
static bool refine(struct reg *r, uint8_t op, uint64_t k, bool is64)
{
	uint64_t lo = r->umin, hi = r->umax;

	if (r->type != SCALAR)
		return true;
	if (!is64) {
		if (hi > U32_MAX_) {
			/* Only constants are decided in 32 bits. */
			if (!is_const(r))
				return true;
			lo = hi = r->umin & U32_MAX_;
		}
	}
	/* Signed compares of values both sides know to be non-negative. */
	switch (op) {
	case BPF_JSGT: case BPF_JSGE: case BPF_JSLT: case BPF_JSLE: {
		uint64_t smax = is64 ? (uint64_t)INT64_MAX : INT32_MAX;

		if (hi > smax || k > smax) {
			if (!is_const(r))
				return true;
			if (is64) {
				int64_t x = (int64_t)lo, y = (int64_t)k;

				return op == BPF_JSGT ? x > y :
				       op == BPF_JSGE ? x >= y :
				       op == BPF_JSLT ? x < y : x <= y;
			} else {
				int32_t x = (int32_t)lo, y = (int32_t)k;

				return op == BPF_JSGT ? x > y :
				       op == BPF_JSGE ? x >= y :
				       op == BPF_JSLT ? x < y : x <= y;
			}
		}
		op = op == BPF_JSGT ? BPF_JGT : op == BPF_JSGE ? BPF_JGE :
		     op == BPF_JSLT ? BPF_JLT : BPF_JLE;
		break;
	}
	}
	switch (op) {
	case BPF_JEQ:
		if (k < lo || k > hi)
			return false;
		lo = hi = k;
		break;
	case BPF_JNE:
		if (lo == hi && lo == k)
			return false;
		if (lo == k)
			lo++;
		else if (hi == k)
			hi--;
		break;
	case BPF_JGT:
		if (k >= hi)
			return false;
		lo = MAX(lo, k + 1);
		break;
	case BPF_JGE:
		if (k > hi)
			return false;
		lo = MAX(lo, k);
		break;
	case BPF_JLT:
		if (k <= lo)
			return false;
		hi = MIN(hi, k - 1);
		break;
	case BPF_JLE:
		if (k < lo)
			return false;
		hi = MIN(hi, k);
		break;
	case BPF_JSET:
		if (lo == hi)
			return (lo & k) != 0;
		return true;
	default:
		return true;
	}
	if (is64 || r->umax <= U32_MAX_)
		*r = scalar(lo, hi);
	return true;
}

/* The opposite of @op ("not (a op b)"), and @op with its sides swapped. */
static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JGT: return BPF_JLE;
	case BPF_JLE: return BPF_JGT;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JSGT: return BPF_JSLE;
	case BPF_JSLE: return BPF_JSGT;
	case BPF_JSGE: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGE;
	default: return 0;	/* jset: nothing known when not taken */
	}
}

static uint8_t swap_sides(uint8_t op)
{
	switch (op) {
	case BPF_JGT: return BPF_JLT;
	case BPF_JLT: return BPF_JGT;
	case BPF_JGE: return BPF_JLE;
	case BPF_JLE: return BPF_JGE;
	case BPF_JSGT: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGT;
	case BPF_JSGE: return BPF_JSLE;
	case BPF_JSLE: return BPF_JSGE;
	default: return op;
	}
}

/* "pkt <= pkt_end" (or "meta <= data") holds: so do @p's bytes. */
static void pkt_range(struct wstate *w, const struct reg *p)
{
	if (!pkt_tracked(p) || p->off <= 0)
		return;
	FOR_EACH_REG(w, r, {
		if (r->type == p->type && pkt_tracked(r) && r->id == p->id &&
		    r->range < (uint32_t)p->off)
			r->range = (uint32_t)p->off;
	});
}

/* After a null check: every copy of the lookup's result is one thing. */
static void null_checked(const struct env *e, struct wstate *w,
			 const struct reg *p, bool null)
{
	struct reg v = ptr(PTR_MAP_VALUE, p->off);
	uint32_t id = p->id;

	v.map = p->map;
	if (p->map == MAP_RB_REC) {
		v.range = p->range;
		v.id = p->id;
	/* An of-map's "value" is its inner map: a map pointer of the inner
	 * definition (the kernel's CONST_PTR_TO_MAP of inner_map_meta). */
	} else if (e->b->maps[p->map].inner) {
		v = ptr(CONST_MAP, 0);
		v.map = (uint16_t)(e->b->maps[p->map].inner - 1);
	}
	FOR_EACH_REG(w, r, {
		if (r->type == PTR_MAP_VALUE_OR_NULL && r->id == id)
			*r = null ? scalar(0, 0) : v;
	});
}

/*
 * What "a op b" holding teaches (pointer sides: packet ranges, null
 * checks; scalar sides: bounds); false: it cannot hold here.
 */
static bool assume(const struct env *e, struct wstate *w,
		   const struct bpf_insn *in, uint8_t op)
{
	bool is64 = CLS(in->code) == BPF_JMP, x = SRCX(in->code);
	struct reg *a = &w->regs[in->dst_reg];
	struct reg *b = x ? &w->regs[in->src_reg] : NULL;
	uint64_t k = is64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm;
	struct reg kb = scalar(k, k);

	if (!op)
		return true;
	if (!b)
		b = &kb;
	if (is64 && x) {
		const struct reg *lo = NULL;

		/* a <= b, with a in the packet and b its end (or a in the
		 * metadata and b the data). */
		if (op == BPF_JLE || op == BPF_JLT)
			lo = a;
		else if (op == BPF_JGE || op == BPF_JGT)
			lo = b;
		if (lo) {
			const struct reg *hi = lo == a ? b : a;

			if ((lo->type == PTR_PKT && hi->type == PTR_PKT_END) ||
			    (lo->type == PTR_PKT_META && hi->type == PTR_PKT &&
			     pkt_tracked(hi) && !hi->id && !hi->off)) {
				struct reg p = *lo;

				pkt_range(w, &p);
				return true;
			}
		}
	}
	/* Null checks: "r == 0" and "r != 0" of a lookup's result. */
	if (is64 && (op == BPF_JEQ || op == BPF_JNE)) {
		struct reg *p = NULL;

		if (a->type == PTR_MAP_VALUE_OR_NULL && is_const(b) &&
		    !b->umin)
			p = a;
		else if (b->type == PTR_MAP_VALUE_OR_NULL && is_const(a) &&
			 !a->umin)
			p = b;
		if (p) {
			struct reg q = *p;

			null_checked(e, w, &q, op == BPF_JEQ);
			return true;
		}
	}
	if (a->type == SCALAR && is_const(b) && b->type == SCALAR) {
		uint64_t kk = is64 ? b->umin : b->umin & U32_MAX_;

		return refine(a, op, kk, is64);
	}
	if (b->type == SCALAR && is_const(a) && a->type == SCALAR && x) {
		uint64_t kk = is64 ? a->umin : a->umin & U32_MAX_;

		return refine(b, swap_sides(op), kk, is64);
	}
	return true;
}

static int do_branch(struct env *e, uint32_t ci, struct wstate *w, uint32_t i)
{
	const struct bpf_insn *in = &e->insns[i];
	uint32_t t = (uint32_t)jump_target(in, i);
	uint8_t op = OP(in->code);
	int ret;

	if (is_uncond(in->code))
		return flow(e, ci, t, w);
	if (w->regs[in->dst_reg].type == NOT_INIT &&
	    REFUSE(e, i, "R%u is not initialised", in->dst_reg))
		return -EINVAL;
	if (SRCX(in->code) && w->regs[in->src_reg].type == NOT_INIT &&
	    REFUSE(e, i, "R%u is not initialised", in->src_reg))
		return -EINVAL;
	if (e->decide)
		return 0;
	ws_copy(&e->edge, w);
	if (assume(e, &e->edge, in, op)) {
		ret = flow(e, ci, t, &e->edge);
		if (ret)
			return ret;
	}
	if (!assume(e, w, in, negate(op)))
		return 0;
	return flow(e, ci, i + 1, w);
}

/* ---- the walk ------------------------------------------------------------------ */

/* Interpret block @b (its index in the function) of context @ci. */
static int run_block(struct env *e, uint32_t ci, uint32_t b)
{
	struct actx *c = &e->ctx[ci];
	uint32_t g = e->sub_blk[c->sub] + b, i, end = e->blk_start[g + 1];
	struct wstate *w = &e->cur;
	int ret = 0;

	ws_load(w, c->blk[b]);
	for (i = e->blk_start[g]; i < end && !ret; i++) {
		const struct bpf_insn *in = &e->insns[i];
		uint8_t cls = CLS(in->code);

		if (!e->decide && ++e->work > MAX_WORK)
			return uxdp_fail(E2BIG, "prog %s: too complex: more "
					 "than %u instructions interpreted",
					 prog_name(e), MAX_WORK);
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			ret = do_alu(e, w, i);
			break;
		case BPF_LD:
			ret = do_lddw(e, w, i);
			i++;
			break;
		case BPF_LDX:
		case BPF_ST:
		case BPF_STX:
			ret = do_mem(e, w, i);
			break;
		default:
			if (in->code == (BPF_JMP | BPF_EXIT))
				return do_exit(e, ci, w, i);
			if (is_local_call(in))
				return do_call(e, ci, w, i);
			if (in->code == (BPF_JMP | BPF_CALL)) {
				ret = do_helper(e, w, i);
				break;
			}
			return do_branch(e, ci, w, i);
		}
	}
	if (ret)
		return ret;
	/* Into the next block. */
	return flow(e, ci, end, w);
}

static int check_flow(struct env *e)
{
	struct wstate *w = &e->cur;
	uint32_t c, b, main;
	int ret;

	ret = new_ctx(e, 0, 0, UINT32_MAX, 0, &main);
	if (ret)
		return ret;
	ws_init(w, 0);
	w->regs[10] = ptr(PTR_STACK, 0);
	if (e->b->ctx_kind == UXDP_BPF_CTX_XDP) {
		w->regs[1] = ptr(PTR_CTX, 0);
	} else {
		w->regs[1] = ptr(PTR_RAW, 0);
		w->regs[2] = unknown();
	}
	ws_copy(&e->edge, w);
	ret = flow(e, main, 0, &e->edge);
	while (!ret && e->nheap) {
		uint64_t key = heap_pop(e);

		c = (uint32_t)(key >> 32);
		b = (uint32_t)key;
		e->ctx[c].queued[b] = 0;
		ret = run_block(e, c, b);
	}
	if (ret)
		return ret;

	/* The fixed point: decide each access, refuse what must be. */
	e->decide = true;
	for (c = 0; c < e->nctx && !ret; c++) {
		uint32_t nb = e->sub_blk[e->ctx[c].sub + 1] -
			      e->sub_blk[e->ctx[c].sub];

		for (b = 0; b < nb && !ret; b++)
			if (e->ctx[c].blk[b])
				ret = run_block(e, c, b);
	}
	return ret;
}

/* ---- the pipeline -------------------------------------------------------------- */

static void env_free(struct env *e)
{
	uint32_t c, b;

	for (c = 0; c < e->nctx; c++) {
		struct actx *a = &e->ctx[c];
		uint32_t nb = e->sub_blk[a->sub + 1] - e->sub_blk[a->sub];

		for (b = 0; b < nb; b++)
			ss_free(e, a->blk[b]);
		ss_free(e, a->call_state);
		ss_free(e, a->ret_state);
		free(a->blk);
		free(a->queued);
		free(a->kids);
	}
	free(e->ctx);
	free(e->heap);
	free(e->iflags);
	free(e->insn_sub);
	free(e->insn_blk);
	free(e->blk_start);
	free(e->map_region);
	free(e->thr);
	free(e->aux);
	free(e);
}

/* The successors of @i within its function (a local call's callee is a
 * function of its own): at most two, into @next; how many. */
static unsigned succs(const struct env *e, uint32_t i, uint32_t next[2])
{
	const struct bpf_insn *in = &e->insns[i];
	unsigned n = 0;

	if (in->code == (BPF_JMP | BPF_EXIT))
		return 0;
	if (is_jump(in->code)) {
		next[n++] = (uint32_t)jump_target(in, i);
		if (!is_uncond(in->code))
			next[n++] = i + 1;
		return n;
	}
	next[n++] = i + (e->iflags[i + 1 < e->len ? i + 1 : i] & I_SECOND ?
			 2 : 1);
	return n;
}

/*
 * Which instructions get a budget step (UXDP_BPF_AUX_BACK): the sources
 * of the retreating edges of a depth-first walk of each function, the
 * edges to an instruction still on the walk's stack. Every cycle of a
 * graph has one for any walk, so counting them bounds every loop; a
 * backward jump that closes no cycle (clang puts shared tails before the
 * code that jumps to them: xdp-filter has 20 such and no loop) costs
 * nothing. Jumps stay inside their function (check_structure), so the
 * walk from every instruction not yet reached, in order, is a walk of
 * each function. The instructions those edges go to are the loop heads
 * (I_LOOP_HEAD): a set that cuts every cycle, so widening only there
 * (keep_state) still ends the analysis, and a header walk without loops
 * (xdp-filter's VLAN tags: many paths into one block) keeps its packet
 * ranges however many paths join. Without the memory, every backward
 * jump, and every block a head.
 */
static void mark_back_edges(struct env *e)
{
	uint8_t *on = calloc(e->len, 1);	/* 1 on the stack, 2 done */
	uint32_t *stk = malloc(e->len * sizeof(*stk));
	uint8_t *nsucc = calloc(e->len, 1);	/* successors explored */
	uint32_t i, r, sp;

	if (!on || !stk || !nsucc) {
		/* (every backward jump: every block widened) */
		for (i = 0; i < e->len; i++) {
			e->iflags[i] |= I_LOOP_HEAD;
			if (!(e->iflags[i] & I_SECOND) &&
			    is_jump(e->insns[i].code) &&
			    jump_target(&e->insns[i], i) <= i)
				e->aux[i].flags |= UXDP_BPF_AUX_BACK;
		}
		goto out;
	}
	for (r = 0; r < e->len; r++) {
		if (on[r] || (e->iflags[r] & I_SECOND))
			continue;
		sp = 0;
		stk[sp++] = r;
		on[r] = 1;
		while (sp) {
			uint32_t next[2], t;
			unsigned n;

			i = stk[sp - 1];
			n = succs(e, i, next);
			if (nsucc[i] == n) {
				on[i] = 2;
				sp--;
				continue;
			}
			t = next[nsucc[i]++];
			/* (check_structure kept every target inside; a
			 * fall off the end is no edge) */
			if (t >= e->len)
				continue;
			if (on[t] == 1) {
				e->aux[i].flags |= UXDP_BPF_AUX_BACK;
				e->iflags[t] |= I_LOOP_HEAD;
			}
			else if (!on[t]) {
				on[t] = 1;
				stk[sp++] = t;
			}
		}
	}
out:
	free(on);
	free(stk);
	free(nsucc);
}

/* What the walk decided, as the fixups and the statistics take it. */
static void finish_aux(struct env *e)
{
	struct uxdp_bpf_check_stats *st = &e->b->stats;
	uint32_t i;

	for (i = 0; i < e->len; i++) {
		struct uxdp_bpf_aux *x = &e->aux[i];
		const struct bpf_insn *in = &e->insns[i];

		if (e->iflags[i] & I_SECOND)
			continue;
		if (x->flags & UXDP_BPF_AUX_BACK)
			st->back_edges++;
		if (!is_mem(in->code))
			continue;
		x->flags |= UXDP_BPF_AUX_MEM;
		/* Never reached by the analysis (a branch it found never
		 * taken): checked all the same. */
		if (!(x->flags & UXDP_BPF_AUX_SEEN)) {
			x->kind = UXDP_BPF_MEM_ANY;
			if (CLS(in->code) == BPF_STX &&
			    MODE(in->code) == BPF_ATOMIC)
				x->flags |= UXDP_BPF_AUX_ALIGN;
		}
		st->accesses++;
		if (x->kind == PROVEN && !(x->flags & UXDP_BPF_AUX_ALIGN))
			st->proven++;
		else
			st->checked++;
	}
}

int uxdp_bpf_prepare(struct uxdp_bpf_build *b)
{
	struct uxdp_bpf_facts facts;
	struct env *e;
	int ret;

	b->code = NULL;
	memset(&b->stats, 0, sizeof(b->stats));
	if (!b->len || !b->insns)
		return uxdp_fail(EINVAL, "prog %s: no instructions",
				 b->name ? b->name : "?");
	if (b->len > UXDP_BPF_MAX_INSNS)
		return uxdp_fail(E2BIG, "prog %s: %u instructions (at most %u)",
				 b->name ? b->name : "?", b->len,
				 UXDP_BPF_MAX_INSNS);
	if (b->ctx_kind != UXDP_BPF_CTX_XDP && b->ctx_kind != UXDP_BPF_CTX_RAW)
		return uxdp_fail(EINVAL, "prog %s: context kind %d",
				 b->name ? b->name : "?", (int)b->ctx_kind);
	e = calloc(1, sizeof(*e));
	if (!e)
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 b->name ? b->name : "?");
	e->b = b;
	e->insns = b->insns;
	e->len = b->len;
	e->next_id = b->len + 1;
	e->iflags = calloc(e->len, sizeof(*e->iflags));
	e->insn_sub = calloc(e->len, sizeof(*e->insn_sub));
	e->insn_blk = calloc(e->len, sizeof(*e->insn_blk));
	e->aux = calloc(e->len, sizeof(*e->aux));
	e->map_region = calloc(b->nmaps ? b->nmaps : 1,
			       sizeof(*e->map_region));
	if (!e->iflags || !e->insn_sub || !e->insn_blk || !e->aux ||
	    !e->map_region) {
		env_free(e);
		return uxdp_fail(ENOMEM, "prog %s: out of memory",
				 b->name ? b->name : "?");
	}
	ret = check_structure(e);
	if (!ret) {
		mark_back_edges(e);
		ret = check_flow(e);
	}
	if (ret == -ENOMEM)
		ret = uxdp_fail(ENOMEM, "prog %s: out of memory",
				prog_name(e));
	if (!ret) {
		finish_aux(e);
		facts.aux = e->aux;
		facts.map_region = e->map_region;
		facts.nregions = e->nregions;
		facts.stack_size = (e->stack_depth + 15) & ~15U;
		ret = uxdp_bpf_fixup(b, &facts);
	}
	if (ret)
		memset(&b->stats, 0, sizeof(b->stats));
	env_free(e);
	return ret;
}
