/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_bpf_diff: the interpreter against the JIT (x86-64) on random valid
 * programs generated from insn_table.h, as the fixups would hand them over
 * (internal rows included): the same r0, the same fault and where, the
 * same memory after, the same tail-call count and budget left; never a
 * crash.
 *
 * A program is one main function, up to three bpf-to-bpf functions and up
 * to two tail-call targets, each a block of units: an ALU or byte-swap row
 * on any operands, lddw, thread, loads and stores (every size, MEMSX) at
 * offsets inside the memory or the function's 64-byte frame, atomics
 * (aligned), accesses through r8 = base + (scalar & mask) guarded by a
 * check of every kind (out of bounds or, for atomics, misaligned on
 * purpose: both must fault MEM at the check),
 * forward jumps of every conditional row to a later unit of the block,
 * loops (a counter, the budget row before the back edge), helper calls
 * (five arguments; one with UNWIND; one that reads uxdp_bpf_cur), local
 * calls (with recursion, the depth fault; without, and without tail
 * calls, the depth proven: the JIT's lean saves), tail calls (a slot, an empty
 * one, one past the end; the 33 limit), ldx_ctx, exit.
 *
 * Registers keep both engines' states comparable: r0..r5 are scalars any
 * unit writes (r1..r5 set again after every call, since a helper leaves
 * them unspecified), r6 and r7 are scalars only loops write (their
 * counters), r8 is a pointer only used as a base, r9 the memory's base,
 * r10 the frame. Every function writes its frame before anything reads
 * it; no value derived from r10 reaches memory or r0 (the engines' stacks
 * are at different addresses). Both runs use the same memory, reset from
 * the input before each.
 *
 * Input (zeros past the end): u8 flags (bit 0 XDP context, bits 1-2
 * functions, bits 3-4 tail-call targets, bit 5 a small budget, bit 6
 * recursion, bit 7 a read-only region and, without metadata, data_meta
 * past data), u8 memory length / 8 - 1, u8 metadata length / 8, u8
 * budget, u64 the seed of the memory's and the region's bytes, then the
 * choices the generator reads as it goes (units, registers, immediates).
 * FUZZ_BPF_DIFF_TRACE=1 prints one line per input: sizes and outcome.
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "../../src/bpf/bpf_internal.h"
#include "fuzz.h"

#if !defined(__x86_64__)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;	/* the JIT is x86-64 only */
}
#else

#define MAX_INSNS	6000
#define MAX_UNITS	48
#define FRAME		64	/* each function's stack_size, all written */
#define NFUNC		3
#define NTARGET		2
#define REGION_LEN	64
#define HEADROOM	32

#define I(c, d, s, o, i)						\
	((struct bpf_insn){ .code = (uint8_t)(c), .dst_reg = (d),	\
			    .src_reg = (s), .off = (int16_t)(o),	\
			    .imm = (int32_t)(i) })

/* ---- the environment both engines run in ---------------------------------- */

struct env {
	bool xdp;
	uint8_t *buf;			/* RAW: the memory; XDP: the buffer */
	uint8_t *buf_init;
	size_t buf_len;
	uint32_t mem_len;		/* bytes at r9: RAW memory or packet */
	uint32_t meta_len;		/* XDP: metadata bytes below r9 */
	struct uxdp_buff buff;
	struct uxdp_rxq_info rxq;
	uint8_t region[REGION_LEN], region_init[REGION_LEN];
	struct uxdp_bpf_region reg;
	struct uxdp_bpf_prog_array arr;
	const struct uxdp_bpf_code *slots[3];
};

static uint64_t env_ctx(const struct env *e)
{
	return e->xdp ? (uint64_t)(uintptr_t)&e->buff :
			(uint64_t)(uintptr_t)e->buf;
}

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t h_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	return a * 0x9e3779b97f4a7c15ULL + (b ^ (c << 7)) - d * 3 + (e >> 1);
}

static uint64_t h_echo(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		       uint64_t e)
{
	(void)b, (void)c, (void)d, (void)e;
	return a;
}

/* What a helper sees of its run: the same in both engines. */
static uint64_t h_cur(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	const struct uxdp_bpf_run *run = uxdp_bpf_cur;

	(void)b, (void)c, (void)d, (void)e;
	FZ_CHECK(run, "helper called without uxdp_bpf_cur");
	return run->budget ^ (uint64_t)run->tail_calls << 40 ^ a;
}

static const struct uxdp_bpf_helper helper_mix = {
	.id = 1, .name = "mix", .fn = h_mix,
};
static const struct uxdp_bpf_helper helper_unwind = {
	.id = 5, .name = "unwind", .fn = h_echo,
	.flags = UXDP_BPF_HELPER_UNWIND,
};
static const struct uxdp_bpf_helper helper_cur = {
	.id = 2, .name = "cur", .fn = h_cur,
};
static const struct uxdp_bpf_helper *helpers[] = {
	&helper_mix, &helper_unwind, &helper_cur,
};

/* ---- the rows the generator picks from ---------------------------------------- */

static uint8_t alu_rows[64], jmp_rows[64];
static unsigned nalu, njmp;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned c;

	(void)argc;
	(void)argv;
	for (c = 0; c < 256; c++) {
		const struct uxdp_bpf_op *op = &uxdp_bpf_ops[c];
		uint8_t cls = BPF_CLASS(c);

		if (!op->mnemonic || op->group == UXDP_BPF_G_INTERNAL)
			continue;
		if ((cls == BPF_ALU || cls == BPF_ALU64) &&
		    BPF_OP(c) != BPF_END)
			alu_rows[nalu++] = (uint8_t)c;
		if ((cls == BPF_JMP || cls == BPF_JMP32) &&
		    (op->flags & UXDP_BPF_F_JUMP) && BPF_OP(c) != BPF_JA)
			jmp_rows[njmp++] = (uint8_t)c;
	}
	return 0;
}

/* ---- generation ----------------------------------------------------------------- */

struct prog {
	struct bpf_insn in[MAX_INSNS];
	uint32_t n;
	uint32_t fn_start[NFUNC];
	uint32_t call_at[512];
	uint8_t call_fn[512];
	uint32_t ncalls;
};

struct gen {
	struct fz *f;
	struct env *e;
	struct prog *p;
	uint32_t nfuncs, ntargets;
	int fn;				/* -1: main */
	bool recursion;
	bool calls;			/* local calls allowed here */
	unsigned fn_calls;		/* emitted in this function */
	bool full;			/* out of room: only exits now */
};

static void emit(struct gen *g, struct bpf_insn in)
{
	if (g->p->n >= MAX_INSNS - 128) {
		g->full = true;
		if (g->p->n >= MAX_INSNS - 2)
			return;
	}
	g->p->in[g->p->n++] = in;
}

static void emit_lddw(struct gen *g, int dst, uint64_t v)
{
	emit(g, I(BPF_LD | BPF_IMM | BPF_DW, dst, 0, 0, (uint32_t)v));
	emit(g, I(0, 0, 0, 0, (uint32_t)(v >> 32)));
}

static int wreg(struct gen *g)
{
	return (int)fz_pick(g->f, 6);		/* r0..r5 */
}

static int rreg(struct gen *g)
{
	return (int)fz_pick(g->f, 8);		/* r0..r7 */
}

static int32_t gen_imm(struct gen *g)
{
	static const int32_t edge[] = {
		0, 1, -1, 2, 7, 8, 16, 31, 32, 63, 64, 0x7f, 0x80, -128,
		0xffff, INT32_MAX, INT32_MIN,
	};
	uint8_t k = fz_u8(g->f);

	if (k < 128)
		return edge[k % (sizeof(edge) / sizeof(edge[0]))];
	return (int32_t)fz_u32(g->f);
}

static const uint8_t sizes[4] = { BPF_B, BPF_H, BPF_W, BPF_DW };

static unsigned size_len(uint8_t sz)
{
	return sz == BPF_B ? 1 : sz == BPF_H ? 2 : sz == BPF_W ? 4 : 8;
}

static void gen_alu(struct gen *g)
{
	uint8_t c = alu_rows[fz_pick(g->f, nalu)];
	bool x = BPF_SRC(c) == BPF_X, w = BPF_CLASS(c) == BPF_ALU64;
	int16_t off = 0;

	if (BPF_OP(c) == BPF_DIV || BPF_OP(c) == BPF_MOD) {
		off = (int16_t)fz_pick(g->f, 2);
	} else if (BPF_OP(c) == BPF_MOV && x) {
		static const int16_t mo[4] = { 0, 8, 16, 32 };

		off = mo[fz_pick(g->f, w ? 4 : 3)];
	}
	if (BPF_OP(c) == BPF_NEG)
		emit(g, I(c, wreg(g), 0, 0, 0));
	else
		emit(g, I(c, wreg(g), x ? rreg(g) : 0, off, x ? 0 : gen_imm(g)));
}

static void gen_end(struct gen *g)
{
	static const uint8_t codes[3] = { 0xd4, 0xdc, 0xd7 };
	static const int32_t bits[3] = { 16, 32, 64 };

	emit(g, I(codes[fz_pick(g->f, 3)], wreg(g), 0, 0,
		  bits[fz_pick(g->f, 3)]));
}

/* An offset for @len bytes at a base: the memory at r9 (RAW memory, or
 * the packet with its metadata below), or the frame below r10; aligned
 * to @align. Returns the base register. */
static int gen_place(struct gen *g, unsigned len, unsigned align,
		     int16_t *off)
{
	const struct env *e = g->e;
	int64_t lo, hi, o;

	if (fz_bit(g->f)) {
		lo = -(int64_t)e->meta_len;
		hi = (int64_t)e->mem_len - len;
		o = lo + (int64_t)(fz_u16(g->f) % (uint64_t)(hi - lo + 1));
		*off = (int16_t)(o - (o % align + align) % align);
		if (*off < lo)
			*off = (int16_t)(*off + align);
		return 9;
	}
	o = -(int64_t)FRAME + (int64_t)(fz_u8(g->f) % (FRAME - len + 1));
	*off = (int16_t)(o - (o % align + align) % align);
	return 10;
}

static void gen_mem(struct gen *g)
{
	uint8_t sz = sizes[fz_pick(g->f, 4)];
	unsigned len = size_len(sz);
	int16_t off;
	int base = gen_place(g, len, 1, &off);

	switch (fz_pick(g->f, 4)) {
	case 0:
		emit(g, I(BPF_LDX | BPF_MEM | sz, wreg(g), base, off, 0));
		break;
	case 1:
		if (sz == BPF_DW)
			sz = BPF_W;
		emit(g, I(BPF_LDX | UXDP_BPF_MEMSX | sz, wreg(g), base, off,
			  0));
		break;
	case 2:
		emit(g, I(BPF_ST | BPF_MEM | sz, base, 0, off, gen_imm(g)));
		break;
	default:
		emit(g, I(BPF_STX | BPF_MEM | sz, base, rreg(g), off, 0));
		break;
	}
}

static int32_t gen_atomic_op(struct gen *g)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH,
		BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH, BPF_XOR | BPF_FETCH,
		BPF_XCHG, BPF_CMPXCHG,
	};

	return ops[fz_pick(g->f, sizeof(ops) / sizeof(ops[0]))];
}

static void gen_atomic(struct gen *g)
{
	bool w = fz_bit(g->f);
	int16_t off;
	int base = gen_place(g, w ? 8 : 4, w ? 8 : 4, &off);

	emit(g, I(BPF_STX | BPF_ATOMIC | (w ? BPF_DW : BPF_W), base, wreg(g),
		  off, gen_atomic_op(g)));
}

/*
 * r8 = a base + (a scalar & mask), then a check of the next access and
 * the access: past the end on purpose often enough. STACK's base is r10 -
 * 32, so above the frame (a caller's, or past stack_hi in main) too.
 */
static void gen_checked(struct gen *g)
{
	static const int32_t masks[] = { 7, 15, 63, 127, 255, 511 };
	const struct env *e = g->e;
	int kind, t = wreg(g), op = (int)fz_pick(g->f, 4);
	uint8_t sz = sizes[fz_pick(g->f, 4)];
	bool atomic = op == 3, write = op >= 2;
	int32_t mask = masks[fz_pick(g->f, 6)];
	int16_t off = (int16_t)((int)fz_pick(g->f, 5) * 8 - 16);
	unsigned k = fz_pick(g->f, 4);

	if (atomic) {
		sz = fz_bit(g->f) ? BPF_DW : BPF_W;
		/* Misaligned on purpose one time in four: the check's
		 * ALIGN must fault it in both engines. */
		if (fz_pick(g->f, 4))
			mask &= ~7;
	}
	kind = k == 0 ? (e->xdp ? UXDP_BPF_MEM_PKT : UXDP_BPF_MEM_RAW) :
	       k == 1 ? UXDP_BPF_MEM_STACK : k == 2 ? UXDP_BPF_MEM_REGION :
	       UXDP_BPF_MEM_ANY;
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, t, rreg(g), 0, 0));
	emit(g, I(BPF_ALU64 | BPF_AND | BPF_K, t, 0, 0, mask));
	/* ANY: on one of the others' bases */
	switch (kind == UXDP_BPF_MEM_ANY ? (int)fz_pick(g->f, 3) : k) {
	case 0:
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 8, 9, 0, 0));
		break;
	case 1:
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 8, 10, 0, 0));
		emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, -32));
		break;
	default:
		emit_lddw(g, 8, (uint64_t)(uintptr_t)e->region);
		break;
	}
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_X, 8, t, 0, 0));
	emit(g, I(UXDP_BPF_OP_CHECK, 8, 0, off,
		  UXDP_BPF_CHECK_IMM(size_len(sz), kind, write, 0) |
		  (atomic ? UXDP_BPF_CHECK_ALIGN : 0)));
	switch (op) {
	case 0:
		emit(g, I(BPF_LDX | BPF_MEM | sz, wreg(g), 8, off, 0));
		break;
	case 1:
		emit(g, I(BPF_ST | BPF_MEM | sz, 8, 0, off, gen_imm(g)));
		break;
	case 2:
		emit(g, I(BPF_STX | BPF_MEM | sz, 8, rreg(g), off, 0));
		break;
	default:
		emit(g, I(BPF_STX | BPF_ATOMIC | sz, 8, wreg(g), off,
			  gen_atomic_op(g)));
		break;
	}
}

/* After a call r1..r5 are unspecified: every one set again. */
static void reset_args(struct gen *g)
{
	int r;

	for (r = 1; r <= 5; r++)
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, gen_imm(g)));
}

static void gen_helper(struct gen *g)
{
	unsigned h = fz_pick(g->f, 3);

	if (h == 1 && fz_pick(g->f, 4) == 0)
		emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 0));
	emit(g, I(BPF_JMP | BPF_CALL, 0, 0, 0, h));
	reset_args(g);
}

/*
 * A call to a later function, or with recursion to any. Calls are not
 * budgeted, so with recursion a function makes at most three and none in
 * a loop: at most 3^8 calls a run before the depth ends every chain.
 */
static void gen_local_call(struct gen *g, int loops)
{
	struct prog *p = g->p;
	uint32_t first = g->recursion || g->fn < 0 ? 0 : (uint32_t)g->fn + 1;
	uint32_t to;

	if (!g->calls || first >= g->nfuncs || p->ncalls == 512 ||
	    (g->recursion && (loops || g->fn_calls == 3)))
		return;
	g->fn_calls++;
	to = first + fz_pick(g->f, g->nfuncs - first);
	p->call_at[p->ncalls] = p->n;
	p->call_fn[p->ncalls++] = (uint8_t)to;
	emit(g, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0));
	reset_args(g);
}

static void gen_tail_call(struct gen *g)
{
	emit_lddw(g, 1, env_ctx(g->e));
	emit_lddw(g, 2, (uint64_t)(uintptr_t)&g->e->arr);
	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, fz_pick(g->f, 4)));
	emit(g, I(UXDP_BPF_OP_TAIL_CALL, 0, 0, 0, 0));
	reset_args(g);
}

static void gen_ldx_ctx(struct gen *g)
{
	if (!g->e->xdp)
		return;
	emit_lddw(g, 8, env_ctx(g->e));
	emit(g, I(UXDP_BPF_OP_LDX_CTX, wreg(g), 8, 0,
		  UXDP_BPF_CTX_INGRESS_IFINDEX + fz_pick(g->f, 4)));
}

static void gen_block(struct gen *g, unsigned max_units, int loops);

static void gen_loop(struct gen *g, int loops)
{
	int ctr = loops ? 7 : 6;
	uint32_t body;
	int64_t back;

	emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, ctr, 0, 0,
		  1 + fz_pick(g->f, 6)));
	body = g->p->n;
	gen_block(g, MAX_UNITS / 3, loops + 1);
	emit(g, I(BPF_ALU64 | BPF_ADD | BPF_K, ctr, 0, 0, -1));
	emit(g, I(UXDP_BPF_OP_BUDGET, 0, 0, 0, 0));
	back = (int64_t)body - (g->p->n + 1);
	emit(g, I(BPF_JMP | BPF_JNE | BPF_K, ctr, 0, back, 0));
}

/*
 * A block of units; a jump goes to the start of a later unit of the same
 * block (or its end), so none lands inside a unit or a loop.
 */
static void gen_block(struct gen *g, unsigned max_units, int loops)
{
	uint32_t start[MAX_UNITS + 1], jat[MAX_UNITS];
	unsigned jto[MAX_UNITS], nj = 0, n, u, k;

	n = 1 + fz_pick(g->f, max_units);
	for (u = 0; u < n; u++) {
		start[u] = g->p->n;
		if (g->full || !fz_more(g->f))
			break;
		switch (fz_pick(g->f, 16)) {
		case 0: case 1: case 2:
			gen_alu(g);
			break;
		case 3:
			gen_end(g);
			break;
		case 4:
			/* thread (an inline per-CPU lookup's) now and then */
			if (fz_pick(g->f, 8) == 0)
				emit(g, I(UXDP_BPF_OP_THREAD, wreg(g), 0, 0, 0));
			else
				emit_lddw(g, wreg(g), fz_u64(g->f));
			break;
		case 5: case 6:
			gen_mem(g);
			break;
		case 7:
			gen_atomic(g);
			break;
		case 8: case 9:
			gen_checked(g);
			break;
		case 10: case 11: {
			bool ja = fz_pick(g->f, 4) == 0;
			uint8_t c = ja ? (fz_bit(g->f) ? BPF_JMP32 | BPF_JA :
					  BPF_JMP | BPF_JA) :
				    jmp_rows[fz_pick(g->f, njmp)];
			bool x = BPF_SRC(c) == BPF_X;

			jat[nj] = g->p->n;
			jto[nj++] = u + 1 + fz_pick(g->f, n - u);
			if (ja)
				emit(g, I(c, 0, 0, 0, 0));
			else
				emit(g, I(c, rreg(g), x ? rreg(g) : 0, 0,
					  x ? 0 : gen_imm(g)));
			break;
		}
		case 12:
			if (loops < 2)
				gen_loop(g, loops);
			break;
		case 13:
			if (fz_bit(g->f))
				gen_helper(g);
			else
				gen_local_call(g, loops);
			break;
		case 14:
			if (fz_pick(g->f, 4) == 0)
				emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
			else
				gen_ldx_ctx(g);
			break;
		default:
			if (g->ntargets && fz_pick(g->f, 3) == 0)
				gen_tail_call(g);
			else
				gen_alu(g);
			break;
		}
	}
	n = u;
	start[n] = g->p->n;
	for (k = 0; k < nj; k++) {
		struct bpf_insn *in = &g->p->in[jat[k]];
		int64_t rel = (int64_t)start[jto[k] > n ? n : jto[k]] -
			      (jat[k] + 1);

		if (in->code == (BPF_JMP32 | BPF_JA))
			in->imm = (int32_t)rel;
		else
			in->off = (int16_t)rel;
	}
}

/* Every register r0..r7 set, r9 the memory, the frame written. */
static void gen_prologue(struct gen *g, bool entry)
{
	int r, k;

	if (entry) {
		if (g->e->xdp)
			emit(g, I(UXDP_BPF_OP_LDX_CTX, 9, 1, 0,
				  UXDP_BPF_CTX_DATA));
		else
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_X, 9, 1, 0, 0));
		for (r = 0; r <= 7; r++)
			emit(g, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0,
				  gen_imm(g)));
	}
	for (k = 1; k <= FRAME / 8; k++)
		emit(g, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8 * k,
			  gen_imm(g)));
}

/* main (with its functions after it), or a tail-call target. */
static void gen_prog(struct gen *g, struct prog *p, bool with_funcs)
{
	uint32_t k;

	g->p = p;
	g->full = false;
	g->calls = with_funcs;
	g->fn_calls = 0;
	p->n = 0;
	p->ncalls = 0;
	g->fn = -1;
	gen_prologue(g, true);
	gen_block(g, MAX_UNITS, 0);
	emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	for (k = 0; with_funcs && k < g->nfuncs; k++) {
		g->fn = (int)k;
		g->fn_calls = 0;
		p->fn_start[k] = p->n;
		gen_prologue(g, false);
		gen_block(g, MAX_UNITS / 2, 0);
		emit(g, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	}
	/* emit() keeps room for the exits; then the calls' targets */
	for (k = 0; k < p->ncalls; k++)
		p->in[p->call_at[k]].imm = (int32_t)(p->fn_start[p->call_fn[k]] -
						     p->call_at[k] - 1);
	if (!with_funcs)
		for (k = 0; k < p->ncalls; k++)
			FZ_CHECK(0, "a call without functions");
}

/* ---- running ------------------------------------------------------------------- */

/* The memory's bytes: a few input bytes make all of them. */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct result {
	uint64_t r0, budget;
	uint32_t fault, fault_pc, tail_calls;
	const struct uxdp_bpf_code *code;
	uint8_t *buf;
	uint8_t region[REGION_LEN];
};

static void env_reset(struct env *e)
{
	memcpy(e->buf, e->buf_init, e->buf_len);
	memcpy(e->region, e->region_init, REGION_LEN);
}

static void run_engine(struct env *e, const struct uxdp_bpf_code *code,
		       const struct uxdp_bpf_jit *jit, struct result *r)
{
	struct uxdp_bpf_run run = { .code = code };
	uint64_t r1 = env_ctx(e), r2 = e->xdp ? 0 : e->mem_len;

	env_reset(e);
	if (e->xdp) {
		run.ctx = &e->buff;
	} else {
		run.mem = e->buf;
		run.mem_len = e->mem_len;
	}
	r->r0 = jit ? uxdp_bpf_jit_run(jit, &run, r1, r2) :
		      uxdp_bpf_interp_run(&run, r1, r2);
	FZ_CHECK(uxdp_bpf_cur == NULL, "uxdp_bpf_cur left set");
	r->fault = run.fault;
	r->fault_pc = run.fault_pc;
	r->tail_calls = run.tail_calls;
	r->budget = run.budget;
	r->code = run.code;
	r->buf = fz_xmalloc(e->buf_len);
	memcpy(r->buf, e->buf, e->buf_len);
	memcpy(r->region, e->region, REGION_LEN);
}

static void dump(const char *what, const struct prog *p)
{
	char line[128];
	uint32_t i;

	fprintf(stderr, "%s (%u instructions):\n", what, p->n);
	for (i = 0; i < p->n; i++) {
		uxdp_bpf_insn_str(&p->in[i], line, sizeof(line));
		fprintf(stderr, "  %4u: %s\n", i, line);
		if (p->in[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
}

static void code_init(struct uxdp_bpf_code *c, const char *name,
		      struct prog *p, struct env *e, uint64_t budget)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->insns = p->in;
	c->len = p->n;
	c->helpers = helpers;
	c->nhelpers = sizeof(helpers) / sizeof(helpers[0]);
	c->regions = &e->reg;
	c->nregions = 1;
	c->stack_size = FRAME;
	c->ctx_kind = e->xdp ? UXDP_BPF_CTX_XDP : UXDP_BPF_CTX_RAW;
	c->budget = budget;
}

static void check_valid(const struct prog *p, const char *what)
{
	const char *why;
	uint32_t i;

	for (i = 0; i < p->n; i++) {
		if (uxdp_bpf_insn_valid_ex(&p->in[i], p->n - i,
					   UXDP_BPF_VALID_INTERNAL, &why)) {
			dump(what, p);
			FZ_CHECK(0, "generated an invalid insn %u: %s", i, why);
		}
		if (p->in[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	static struct prog progs[1 + NTARGET];
	struct uxdp_bpf_code codes[1 + NTARGET];
	struct uxdp_bpf_jit *jits[1 + NTARGET] = { NULL };
	struct gen g = { .f = &f };
	struct env *e = calloc(1, sizeof(*e));
	struct result ri, rj;
	uint8_t flags = fz_u8(&f);
	uint64_t budget, seed;
	uint32_t k, t;
	int err;

	FZ_CHECK(e, "out of memory");
	e->xdp = flags & 1;
	g.e = e;
	g.nfuncs = (flags >> 1) & 3;
	g.ntargets = (flags >> 3) & 3;
	if (g.ntargets > NTARGET)
		g.ntargets = NTARGET;
	g.recursion = flags & 0x40;
	e->mem_len = 8 * (1 + fz_pick(&f, 32));
	e->meta_len = e->xdp ? 8 * fz_pick(&f, 4) : 0;
	budget = fz_u8(&f);
	if (!(flags & 0x20))
		budget = 4096;
	/* XDP: headroom, metadata, packet, tailroom; RAW: the memory */
	e->buf_len = e->xdp ? HEADROOM + e->meta_len + e->mem_len + 32 :
			      e->mem_len;
	e->buf = fz_xmalloc(e->buf_len);
	e->buf_init = fz_xmalloc(e->buf_len);
	seed = fz_u64(&f);
	for (k = 0; k < e->buf_len; k++)
		e->buf_init[k] = (uint8_t)splitmix(&seed);
	for (k = 0; k < REGION_LEN; k++)
		e->region_init[k] = (uint8_t)splitmix(&seed);
	e->reg = (struct uxdp_bpf_region){ e->region, REGION_LEN,
					   (flags & 0x80) != 0 };
	if (e->xdp) {
		uint8_t *d = e->buf + HEADROOM + e->meta_len;

		e->rxq.ifindex = 7;
		e->rxq.queue_index = 3;
		e->buff = (struct uxdp_buff){
			.data = d, .data_end = d + e->mem_len,
			/* no metadata: sometimes "not supported" */
			.data_meta = e->meta_len ? d - e->meta_len :
				     d + (flags & 0x80 ? 1 : 0),
			.data_hard_start = e->buf, .rxq = &e->rxq,
		};
	}
	e->arr.max_entries = 3;
	e->arr.slots = e->slots;

	/* tail-call targets first, then main */
	for (t = 0; t < g.ntargets; t++)
		gen_prog(&g, &progs[1 + t], false);
	gen_prog(&g, &progs[0], true);
	for (t = 0; t <= g.ntargets; t++) {
		check_valid(&progs[t], "program");
		code_init(&codes[t], t ? "target" : "main", &progs[t], e,
			  budget);
	}
	/* Without recursion calls go only to later functions, at most
	 * nfuncs + 1 frames: the depth a safety pass would prove, so the
	 * JIT's calls save only what each callee writes (prog.c sets this
	 * for a program the pass accepted). Not with tail calls: a target
	 * runs in its caller's frame. */
	if (!g.recursion && !g.ntargets && g.nfuncs + 1 <= UXDP_BPF_MAX_DEPTH)
		codes[0].depth_proven = true;
	/* slots: the targets, then an empty one; index 3 is past the end */
	for (t = 0; t < g.ntargets; t++)
		e->slots[t] = &codes[1 + t];

	for (t = 0; t <= g.ntargets; t++) {
		err = uxdp_bpf_jit_compile(&codes[t], &jits[t]);
		if (err) {
			dump("program", &progs[t]);
			FZ_CHECK(0, "the JIT refused: %d %s", err,
				 uxdp_errmsg());
		}
	}
	run_engine(e, &codes[0], NULL, &ri);
	run_engine(e, &codes[0], jits[0], &rj);

	if (ri.r0 != rj.r0 || ri.fault != rj.fault ||
	    ri.fault_pc != rj.fault_pc || ri.tail_calls != rj.tail_calls ||
	    ri.budget != rj.budget || ri.code != rj.code ||
	    memcmp(ri.buf, rj.buf, e->buf_len) ||
	    memcmp(ri.region, rj.region, REGION_LEN)) {
		for (t = 0; t <= g.ntargets; t++)
			dump(t ? "target" : "main", &progs[t]);
		for (k = 0; k < e->buf_len; k++)
			if (ri.buf[k] != rj.buf[k])
				fprintf(stderr, "memory [%u]: interpreter 0x%02x,"
					" jit 0x%02x\n", k, ri.buf[k],
					rj.buf[k]);
		for (k = 0; k < REGION_LEN; k++)
			if (ri.region[k] != rj.region[k])
				fprintf(stderr, "region [%u]: interpreter 0x%02x,"
					" jit 0x%02x\n", k, ri.region[k],
					rj.region[k]);
		FZ_CHECK(0, "interpreter r0 0x%llx fault %u at %u (%s), "
			 "tail calls %u, budget %llu; jit r0 0x%llx fault %u "
			 "at %u (%s), tail calls %u, budget %llu",
			 (unsigned long long)ri.r0, ri.fault, ri.fault_pc,
			 ri.code ? ri.code->name : "?", ri.tail_calls,
			 (unsigned long long)ri.budget,
			 (unsigned long long)rj.r0, rj.fault, rj.fault_pc,
			 rj.code ? rj.code->name : "?", rj.tail_calls,
			 (unsigned long long)rj.budget);
	}
	if (getenv("FUZZ_BPF_DIFF_TRACE"))
		fprintf(stderr, "%s, %u+%u insns, %u functions, %u targets: "
			"r0 0x%llx fault %u at %u, %u tail calls, budget %llu "
			"left\n", e->xdp ? "xdp" : "raw", progs[0].n,
			g.ntargets ? progs[1].n : 0, g.nfuncs, g.ntargets,
			(unsigned long long)ri.r0, ri.fault, ri.fault_pc,
			ri.tail_calls, (unsigned long long)ri.budget);
	for (t = 0; t <= g.ntargets; t++)
		uxdp_bpf_jit_free(jits[t]);
	free(ri.buf);
	free(rj.buf);
	free(e->buf);
	free(e->buf_init);
	free(e);
	return 0;
}

#endif /* __x86_64__ */
