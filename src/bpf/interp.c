/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The interpreter: the reference engine, any architecture, RFC 9669 at
 * cpu v4 plus the internal rows the fixups make.
 *
 * Dispatch is a computed goto through a 256-entry table of label addresses
 * that insn_table.h expands: one label per row, and every byte no row has
 * on one label that ends the run (FAULT_INSN: the safety pass keeps it
 * unreachable, and a library does not abort). The body behind each label
 * is expanded from the same table: ROW() writes one chain of tests on the
 * row's opcode and flags, which are constants there, so the compiler keeps
 * only the branch that row takes. The semantics below therefore read by
 * class, operation and source, as the RFC gives them, and there is no
 * second opcode list here to fall out of step with the table (a row that
 * matches no branch runs into the FAULT_INSN label, and test_bpf_insn
 * runs every row).
 *
 * A code runs decoded (uxdp_bpf_interp_prepare(), or for the run alone):
 * an array of struct interp_insn, one per instruction slot, each its
 * row's label address, its two register indexes and its operands, so
 * dispatch is one load of the next label and one indirect jump, with no
 * opcode table lookup and no bit fields to take apart. The array has the
 * instructions' indexes, so jumps, calls and fault indexes are the same.
 *
 * No flags of its own: GCC 12 keeps one indirect jump per label here (187
 * in the function at -O2), and -fno-gcse, the kernel's remedy for its
 * interpreter, measured slower (bpf_conformance's call_local 47 against
 * 58 ns a run, prime 1049 against 1354; best of 40).
 */
#include <errno.h>
#include <stdlib.h>

#include "../internal.h"

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

#define INSN_CLASS(c)	((c) & 0x07)
#define INSN_SIZE(c)	((c) & 0x18)
#define INSN_MODE(c)	((c) & 0xe0)
#define INSN_OP(c)	((c) & 0xf0)
#define INSN_SRC(c)	((c) & 0x08)

#define __inl		inline __attribute__((always_inline))

/* Initial-exec (bpf_internal.h): one %fs-relative load for helpers. */
__thread struct uxdp_bpf_run *uxdp_bpf_cur
	__attribute__((tls_model("initial-exec")));

/* One instruction slot, decoded: 16 bytes. A register index above 10
 * (which validation refuses) decodes to the bad label; an lddw's second
 * slot keeps its imm and is never dispatched. */
struct interp_insn {
	const void *label;
	int32_t imm;
	int16_t off;
	uint8_t dst, src;
};

/* What a bpf-to-bpf call saves: the callee-saved registers, the frame
 * pointer, where to return, and in which program (a tail call in a
 * function changes it) and its decoded form. */
struct interp_frame {
	const struct interp_insn *ret, *base;
	const struct uxdp_bpf_code *code;
	uint64_t r6, r7, r8, r9, r10;
};

/* The label table and the bad label, from uxdp_bpf_interp_run(NULL). */
static const void *const *interp_jt;
static const void *interp_bad;
/* The fused pairs' labels (fuse_pair()), published with the others. */
enum {
	FUSE_ADD64_X, FUSE_ADD64_K, FUSE_ADD32_X, FUSE_ADD32_K,
	FUSE_BOUND_JGT, FUSE_BOUND_JGE, FUSE_BOUND_JLT, FUSE_BOUND_JLE,
	FUSE_LD16,
	NFUSE
};
static const void *interp_fuse[NFUSE];

/* A fused label: stored (relaxed) before interp_jt's release, which
 * decode() acquires first; atomic because a second thread's first call
 * may be storing the same values again (TSan; a review found it). */
static const void *fuse_label(int f)
{
	return __atomic_load_n(&interp_fuse[f], __ATOMIC_RELAXED);
}

/*
 * Instructions @i and @i + 1 as one dispatch: mov dst, src; add dst,
 * src2|imm, how clang computes a pointer or an index (p = data + i; q =
 * p + 1). The fused slot keeps dst and src and takes the add's operand
 * in imm: the immediate, or the register the add reads, which is src
 * when the add reads dst (dst = src by then). The add's own slot stays as
 * it was, so a jump onto the add still runs the add alone: unlike the
 * JIT, no jump target stops a fusion. Returns whether @out[@i] became the
 * pair.
 */
static bool fuse_pair(const struct uxdp_bpf_code *code, uint32_t i,
		      struct interp_insn *out);

/*
 * The bounds test every packet parser has, three instructions at @i:
 *
 *	mov	dst, src		(q = p + n)
 *	add	dst, imm
 *	jgt	a, b, +off		(if q > data_end: jgt, jge, jlt or jle,
 *					 64 bits, registers; a or b is dst)
 *
 * as one dispatch: @out[@i] becomes the mov with the add's immediate, and
 * its label reads the jump's registers and offset from the third slot.
 * The other two slots stay as they were, so a jump onto either runs it
 * alone. Returns the slots it took: 3, or 0.
 */
static uint32_t fuse_bound(const struct uxdp_bpf_code *code, uint32_t i,
			   struct interp_insn *out)
{
	const struct bpf_insn *a = &code->insns[i], *b = a + 1, *c = a + 2;
	int f;

	if (i + 2 >= code->len ||
	    a->code != (BPF_ALU64 | BPF_MOV | BPF_X) || a->off ||
	    a->dst_reg > 9 || a->src_reg > 10 ||
	    b->code != (BPF_ALU64 | BPF_ADD | BPF_K) ||
	    b->dst_reg != a->dst_reg || b->off ||
	    c->dst_reg > 10 || c->src_reg > 10 ||
	    (c->dst_reg != a->dst_reg && c->src_reg != a->dst_reg))
		return 0;
	switch (c->code) {
	case BPF_JMP | BPF_JGT | BPF_X: f = FUSE_BOUND_JGT; break;
	case BPF_JMP | BPF_JGE | BPF_X: f = FUSE_BOUND_JGE; break;
	case BPF_JMP | BPF_JLT | BPF_X: f = FUSE_BOUND_JLT; break;
	case BPF_JMP | BPF_JLE | BPF_X: f = FUSE_BOUND_JLE; break;
	default: return 0;
	}
	out[i].label = fuse_label(f);
	out[i].imm = b->imm;
	return 3;
}

static bool fuse_pair(const struct uxdp_bpf_code *code, uint32_t i,
		      struct interp_insn *out)
{
	struct uxdp_bpf_mov_add m;

	if (!uxdp_bpf_match_mov_add(&code->insns[i], code->len - i, &m))
		return false;
	if (m.is_reg) {
		out[i].label = fuse_label(m.alu64 ? FUSE_ADD64_X :
					  FUSE_ADD32_X);
		out[i].imm = m.reg;
	} else {
		out[i].label = fuse_label(m.alu64 ? FUSE_ADD64_K :
					  FUSE_ADD32_K);
		out[i].imm = m.imm;
	}
	return true;
}

static void decode(const struct uxdp_bpf_code *code, struct interp_insn *out)
{
	const void *const *jt;
	const void *bad;
	uint32_t i;

	/* Published by uxdp_bpf_interp_run(NULL): bad first, then jt. */
	jt = __atomic_load_n(&interp_jt, __ATOMIC_ACQUIRE);
	if (!jt) {
		uxdp_bpf_interp_run(NULL, 0, 0);
		jt = __atomic_load_n(&interp_jt, __ATOMIC_ACQUIRE);
	}
	bad = __atomic_load_n(&interp_bad, __ATOMIC_RELAXED);

	for (i = 0; i < code->len; i++) {
		const struct bpf_insn *in = &code->insns[i];
		bool wide = in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    i + 1 < code->len;

		out[i] = (struct interp_insn){
			.label = in->dst_reg > 10 || in->src_reg > 10 ?
				 bad : jt[in->code],
			.imm = in->imm, .off = in->off,
			.dst = in->dst_reg, .src = in->src_reg,
		};
		if (wide) {
			i++;
			out[i] = (struct interp_insn){
				.label = bad, .imm = code->insns[i].imm,
			};
		}
	}
	for (i = 0; i + 1 < code->len; i++) {
		struct uxdp_bpf_ld16 m;
		uint32_t n;

		if (code->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++;	/* not its second slot */
		} else if (uxdp_bpf_match_ld16(&code->insns[i],
					       code->len - i, &m)) {
			/* a = the u16, b (in imm) its first byte; the
			 * other three slots stay as they were. */
			out[i] = (struct interp_insn){
				.label = fuse_label(FUSE_LD16), .imm = m.b,
				.off = m.k, .dst = m.a, .src = m.p,
			};
			i += 3;
		} else if ((n = fuse_bound(code, i, out)))
			i += n - 1;
		else if (fuse_pair(code, i, out))
			i++;
	}
}

/* @code decoded: its own, or one made for this run, kept in
 * @tmp[(*@ntmp)++] to be freed at its end (NULL: no memory). */
static const struct interp_insn *decoded(const struct uxdp_bpf_code *code,
					 struct interp_insn **tmp,
					 uint32_t *ntmp)
{
	struct interp_insn *d;

	if (likely(code->interp != NULL))
		return code->interp;
	d = malloc((size_t)code->len * sizeof(*d));
	if (!d)
		return NULL;
	decode(code, d);
	tmp[(*ntmp)++] = d;
	return d;
}

/* ---- the operations, by field ---------------------------------------------- */

/*
 * ALU on @T (uint64_t or uint32_t, whose signed twin is @S; a 32-bit
 * result is zero-extended by the caller's assignment, so its upper half is
 * 0). Division by zero gives 0 and modulo by zero leaves dst; the signed
 * forms (off 1) truncate toward zero, and INT_MIN / -1 (which C leaves
 * undefined) is INT_MIN, its remainder 0. Shift counts are masked to the
 * width, as the RFC says (x86 does the same; C does not). mov's off is
 * movsx's width (32 only at 64 bits, by the validity rules).
 */
#define DEFINE_ALU(name, T, S, mask)					\
static __inl T name(uint8_t op, T d, T s, int16_t off)			\
{									\
	switch (op) {							\
	case BPF_ADD:							\
		return d + s;						\
	case BPF_SUB:							\
		return d - s;						\
	case BPF_MUL:							\
		return d * s;						\
	case BPF_DIV:							\
		if (!s)							\
			return 0;					\
		if (!off)						\
			return d / s;					\
		if ((S)s == -1)						\
			return -d;	/* INT_MIN stays itself */	\
		return (T)((S)d / (S)s);				\
	case BPF_MOD:							\
		if (!s)							\
			return d;					\
		if (!off)						\
			return d % s;					\
		if ((S)s == -1)						\
			return 0;					\
		return (T)((S)d % (S)s);				\
	case BPF_OR:							\
		return d | s;						\
	case BPF_AND:							\
		return d & s;						\
	case BPF_LSH:							\
		return d << (s & (mask));				\
	case BPF_RSH:							\
		return d >> (s & (mask));				\
	case BPF_ARSH:							\
		return (T)((S)d >> (s & (mask)));			\
	case BPF_NEG:							\
		return -d;						\
	case BPF_XOR:							\
		return d ^ s;						\
	case BPF_MOV:							\
		if (off == 8)						\
			return (T)(S)(int8_t)s;				\
		if (off == 16)						\
			return (T)(S)(int16_t)s;			\
		if (off == 32)						\
			return (T)(S)(int32_t)s;			\
		return s;						\
	}								\
	__builtin_unreachable();					\
}
DEFINE_ALU(alu64, uint64_t, int64_t, 63)
DEFINE_ALU(alu32, uint32_t, int32_t, 31)

/*
 * Byte swaps, imm the width: le and be (class ALU) convert between the
 * host's order and the one named, keeping the low imm bits and zeroing the
 * rest; bswap (class ALU64) swaps whatever the host is.
 */
static __inl uint64_t endian(uint8_t c, uint64_t d, int32_t imm)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	bool swap = INSN_CLASS(c) == BPF_ALU64 || INSN_SRC(c) == BPF_TO_BE;
#else
	bool swap = INSN_CLASS(c) == BPF_ALU64 || INSN_SRC(c) == BPF_TO_LE;
#endif

	if (imm == 16)
		return swap ? __builtin_bswap16((uint16_t)d) : (uint16_t)d;
	if (imm == 32)
		return swap ? __builtin_bswap32((uint32_t)d) : (uint32_t)d;
	return swap ? __builtin_bswap64(d) : d;
}

/* The conditional jumps' comparisons, on @T (signed twin @S). */
#define DEFINE_JCOND(name, T, S)					\
static __inl bool name(uint8_t op, T d, T s)				\
{									\
	switch (op) {							\
	case BPF_JEQ:							\
		return d == s;						\
	case BPF_JGT:							\
		return d > s;						\
	case BPF_JGE:							\
		return d >= s;						\
	case BPF_JSET:							\
		return d & s;						\
	case BPF_JNE:							\
		return d != s;						\
	case BPF_JSGT:							\
		return (S)d > (S)s;					\
	case BPF_JSGE:							\
		return (S)d >= (S)s;					\
	case BPF_JLT:							\
		return d < s;						\
	case BPF_JLE:							\
		return d <= s;						\
	case BPF_JSLT:							\
		return (S)d < (S)s;					\
	case BPF_JSLE:							\
		return (S)d <= (S)s;					\
	}								\
	__builtin_unreachable();					\
}
DEFINE_JCOND(jcond64, uint64_t, int64_t)
DEFINE_JCOND(jcond32, uint32_t, int32_t)

/* Loads and stores of any alignment (memcpy of a constant size is one
 * move); MEMSX loads sign-extend. */
static __inl uint64_t load(uint8_t c, uint64_t a)
{
	const void *p = (const void *)(uintptr_t)a;
	bool sx = INSN_MODE(c) == UXDP_BPF_MEMSX;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;
	uint8_t v8;

	switch (INSN_SIZE(c)) {
	case BPF_B:
		memcpy(&v8, p, 1);
		return sx ? (uint64_t)(int64_t)(int8_t)v8 : v8;
	case BPF_H:
		memcpy(&v16, p, 2);
		return sx ? (uint64_t)(int64_t)(int16_t)v16 : v16;
	case BPF_W:
		memcpy(&v32, p, 4);
		return sx ? (uint64_t)(int64_t)(int32_t)v32 : v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

static __inl void store(uint8_t c, uint64_t a, uint64_t v)
{
	void *p = (void *)(uintptr_t)a;
	uint32_t v32 = (uint32_t)v;
	uint16_t v16 = (uint16_t)v;
	uint8_t v8 = (uint8_t)v;

	switch (INSN_SIZE(c)) {
	case BPF_B:
		memcpy(p, &v8, 1);
		return;
	case BPF_H:
		memcpy(p, &v16, 2);
		return;
	case BPF_W:
		memcpy(p, &v32, 4);
		return;
	}
	memcpy(p, &v, 8);
}

/* ---- run-time checks (internal row check) ---------------------------------- */

/* [a, a + size) inside [lo, hi), without overflow. */
static __inl bool mem_in(uint64_t a, uint64_t size, uintptr_t lo, uintptr_t hi)
{
	return a >= lo && a <= hi && size <= hi - a;
}

static __inl bool mem_pkt(const struct uxdp_buff *b, uint64_t a,
			  uint32_t size)
{
	uintptr_t meta, data;

	if (!b)
		return false;
	/* data_meta past data: no metadata area */
	meta = (uintptr_t)b->data_meta;
	data = (uintptr_t)b->data;
	return mem_in(a, size, meta < data ? meta : data,
		      (uintptr_t)b->data_end);
}

static bool mem_region(const struct uxdp_bpf_region *r, uint64_t a,
		       uint32_t size, bool write)
{
	uintptr_t base = (uintptr_t)r->base;

	return !(write && r->rdonly) && r->size <= UINTPTR_MAX - base &&
	       mem_in(a, size, base, base + (uintptr_t)r->size);
}

/* The slow kinds, and any: out of line. */
static __attribute__((noinline)) bool
mem_other(const struct uxdp_bpf_run *run, const struct uxdp_bpf_code *code,
	  uint64_t a, uint32_t imm)
{
	uint32_t size = UXDP_BPF_CHECK_SIZE(imm);
	uint32_t kind = UXDP_BPF_CHECK_KIND(imm);
	uint32_t ri = UXDP_BPF_CHECK_REGION(imm);
	bool write = imm & UXDP_BPF_CHECK_WRITE;
	uint32_t i;

	switch (kind) {
	case UXDP_BPF_MEM_REGION:
		return ri < code->nregions &&
		       mem_region(&code->regions[ri], a, size, write);
	case UXDP_BPF_MEM_RAW:
		return run->mem && mem_in(a, size, (uintptr_t)run->mem,
					  (uintptr_t)run->mem + run->mem_len);
	case UXDP_BPF_MEM_ANY:
		if (mem_pkt(run->ctx, a, size) ||
		    mem_in(a, size, (uintptr_t)run->stack_lo,
			   (uintptr_t)run->stack_hi) ||
		    (run->mem && mem_in(a, size, (uintptr_t)run->mem,
					(uintptr_t)run->mem + run->mem_len)))
			return true;
		for (i = 0; i < code->nregions; i++)
			if (mem_region(&code->regions[i], a, size, write))
				return true;
		return false;
	}
	return false;
}

static __inl bool mem_ok(const struct uxdp_bpf_run *run,
			 const struct uxdp_bpf_code *code, uint64_t a,
			 uint32_t imm)
{
	uint32_t size = UXDP_BPF_CHECK_SIZE(imm);

	/* An atomic's (bpf_internal.h): sizes are 4 and 8. */
	if ((imm & UXDP_BPF_CHECK_ALIGN) && (a & (size - 1)))
		return false;
	switch (UXDP_BPF_CHECK_KIND(imm)) {
	case 0:
		return imm & UXDP_BPF_CHECK_ALIGN;	/* the alignment only */
	case UXDP_BPF_MEM_PKT:
		return mem_pkt(run->ctx, a, size);
	case UXDP_BPF_MEM_STACK:
		return mem_in(a, size, (uintptr_t)run->stack_lo,
			      (uintptr_t)run->stack_hi);
	}
	return mem_other(run, code, a, imm);
}

/* ---- the engine ----------------------------------------------------------- */

#define DST	reg[insn->dst]
#define SRC	reg[insn->src]
#define IMM	insn->imm
#define OFF	insn->off
/* The second operand: src, or imm sign-extended to 64 bits (a 32-bit
 * operation takes the low half of either). */
#define OPND(fl)	((fl) & UXDP_BPF_F_SRC ? SRC : (uint64_t)(int64_t)IMM)
/* off where the row has variants by it (sdiv, movsx), else 0, so the
 * others keep no test of it. */
#define VOFF(fl)	((fl) & UXDP_BPF_F_VAR_OFF ? OFF : 0)
#define IS_ALU(c)	(INSN_CLASS(c) == BPF_ALU || INSN_CLASS(c) == BPF_ALU64)
#define IS_JMP(c)	(INSN_CLASS(c) == BPF_JMP || INSN_CLASS(c) == BPF_JMP32)

#define CONT	do { insn++; goto *insn->label; } while (0)

#define ROW_LABEL(c, mn, grp, fl)	[c] = &&op_##c,

/* One label's body: every test below folds to a constant at its row. */
#define ROW(c, mn, grp, fl)						\
op_##c:									\
	if ((c) == UXDP_BPF_OP_LDX_CTX) {				\
		DST = uxdp_bpf_ctx_load((const struct uxdp_buff *)	\
					(uintptr_t)SRC, IMM);		\
		CONT;							\
	}								\
	if ((c) == UXDP_BPF_OP_CHECK)					\
		goto do_check;						\
	if ((c) == UXDP_BPF_OP_THREAD) {				\
		DST = xdp_thread_index() % UXDP_BPF_NR_CPUS;		\
		CONT;							\
	}								\
	if ((c) == UXDP_BPF_OP_BUDGET)					\
		goto do_budget;						\
	if ((c) == UXDP_BPF_OP_TAIL_CALL)				\
		goto do_tail_call;						\
	if (IS_ALU(c) && INSN_OP(c) == BPF_END) {			\
		DST = endian(c, DST, IMM);				\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_ALU64) {				\
		DST = alu64(INSN_OP(c), DST, OPND(fl), VOFF(fl));	\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_ALU) {					\
		DST = alu32(INSN_OP(c), (uint32_t)DST,			\
			    (uint32_t)OPND(fl), VOFF(fl));		\
		CONT;							\
	}								\
	if ((c) == (BPF_JMP | BPF_CALL))				\
		goto do_call;						\
	if ((c) == (BPF_JMP | BPF_EXIT))				\
		goto do_exit;						\
	if ((c) == (BPF_JMP | BPF_JA)) {				\
		insn += OFF;						\
		CONT;							\
	}								\
	if ((c) == (BPF_JMP32 | BPF_JA)) {	/* ja32: imm */		\
		insn += IMM;						\
		CONT;							\
	}								\
	if (IS_JMP(c) && ((fl) & UXDP_BPF_F_JUMP)) {			\
		if (INSN_CLASS(c) == BPF_JMP ?				\
		    jcond64(INSN_OP(c), DST, OPND(fl)) :		\
		    jcond32(INSN_OP(c), (uint32_t)DST,			\
			    (uint32_t)OPND(fl)))			\
			insn += OFF;					\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_LD) {	/* lddw: src 0 after fixups */	\
		DST = (uint64_t)(uint32_t)insn[0].imm |			\
		      (uint64_t)(uint32_t)insn[1].imm << 32;		\
		insn++;							\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_LDX) {					\
		DST = load(c, SRC + (uint64_t)(int64_t)OFF);		\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_ST) {					\
		store(c, DST + (uint64_t)(int64_t)OFF,			\
		      (uint64_t)(int64_t)IMM);				\
		CONT;							\
	}								\
	if (INSN_CLASS(c) == BPF_STX && INSN_MODE(c) == BPF_ATOMIC &&	\
	    INSN_SIZE(c) == BPF_W)					\
		goto do_atomic32;						\
	if (INSN_CLASS(c) == BPF_STX && INSN_MODE(c) == BPF_ATOMIC)	\
		goto do_atomic64;						\
	if (INSN_CLASS(c) == BPF_STX) {					\
		store(c, DST + (uint64_t)(int64_t)OFF, SRC);		\
		CONT;							\
	}								\
	goto op_bad;

uint64_t uxdp_bpf_interp_run(struct uxdp_bpf_run *run, uint64_t r1,
			     uint64_t r2)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
	static const void *const jt[256] = {
		[0 ... 255] = &&op_bad,
		UXDP_BPF_INSNS(ROW_LABEL)
	};
#pragma GCC diagnostic pop
	static const void *const fj[NFUSE] = {
		[FUSE_ADD64_X] = &&fuse_add64_x,
		[FUSE_ADD64_K] = &&fuse_add64_k,
		[FUSE_ADD32_X] = &&fuse_add32_x,
		[FUSE_ADD32_K] = &&fuse_add32_k,
		[FUSE_BOUND_JGT] = &&fuse_bound_jgt,
		[FUSE_BOUND_JGE] = &&fuse_bound_jge,
		[FUSE_BOUND_JLT] = &&fuse_bound_jlt,
		[FUSE_BOUND_JLE] = &&fuse_bound_jle,
		[FUSE_LD16] = &&fuse_ld16,
	};
	const struct uxdp_bpf_code *code;
	const struct interp_insn *insn, *base;
	/* Decoded for this run: the program's and its tail calls' */
	struct interp_insn *tmp[UXDP_BPF_MAX_TAIL_CALLS + 1];
	uint32_t ntmp = 0, t;
	struct uxdp_bpf_run *prev;
	struct interp_frame frames[UXDP_BPF_MAX_DEPTH - 1], *f;
	/* Zeroed one by one below: "= { 0 }" here became a rep stos,
	 * whose start-up cost was 80% of a short program's run. */
	uint64_t reg[MAX_BPF_REG];
	uint32_t depth = 0;
	/*
	 * The program's stack, every frame of a run, on ours as the kernel's
	 * interpreter has it. Not in TLS: libuxdp has initial-exec variables,
	 * so all of its TLS comes from the static block, and 4 KiB there
	 * made a dlopen() of the library fail ("cannot allocate memory in
	 * static TLS block", test_xdp under ASan). Not cleared: the safety
	 * pass refuses a read of stack the program did not write.
	 */
	uint8_t stack[UXDP_BPF_MAX_DEPTH * UXDP_BPF_STACK]
		__attribute__((aligned(16)));

	if (unlikely(!run)) {
		/* uxdp_bpf_interp_prepare()'s call: the labels. */
		__atomic_store_n(&interp_bad, &&op_bad, __ATOMIC_RELAXED);
		for (t = 0; t < NFUSE; t++)
			__atomic_store_n(&interp_fuse[t], fj[t],
					 __ATOMIC_RELAXED);
		__atomic_store_n(&interp_jt, jt, __ATOMIC_RELEASE);
		return 0;
	}
	code = run->code;
	prev = uxdp_bpf_cur;
	run->stack_lo = stack;
	run->stack_hi = stack + sizeof(stack);
	run->budget = code->budget;
	run->tail_calls = 0;
	run->fault = UXDP_BPF_FAULT_NONE;
	run->fault_pc = 0;
	reg[BPF_REG_0] = 0;
	reg[BPF_REG_1] = r1;
	reg[BPF_REG_2] = r2;
	reg[BPF_REG_3] = 0;
	reg[BPF_REG_4] = 0;
	reg[BPF_REG_5] = 0;
	reg[BPF_REG_6] = 0;
	reg[BPF_REG_7] = 0;
	reg[BPF_REG_8] = 0;
	reg[BPF_REG_9] = 0;
	reg[BPF_REG_10] = (uintptr_t)run->stack_hi;
	uxdp_bpf_cur = run;
	base = decoded(code, tmp, &ntmp);
	if (unlikely(!base)) {
		run->fault = UXDP_BPF_FAULT_INSN;
		reg[BPF_REG_0] = 0;
		goto out;
	}
	insn = base;
	goto *insn->label;

	UXDP_BPF_INSNS(ROW)

	/* The fused pairs (fuse_pair()): mov dst, src; add dst, x. Two
	 * slots, one dispatch. */
#define FUSE_ADD(name, T, opnd)						\
name:									\
	DST = (T)(SRC + (opnd));					\
	insn += 2;							\
	goto *insn->label;
	FUSE_ADD(fuse_add64_x, uint64_t, reg[IMM])
	FUSE_ADD(fuse_add64_k, uint64_t, (uint64_t)(int64_t)IMM)
	FUSE_ADD(fuse_add32_x, uint32_t, reg[IMM])
	FUSE_ADD(fuse_add32_k, uint32_t, (uint64_t)(int64_t)IMM)
#undef FUSE_ADD
	/* mov; add imm; jcc (fuse_bound()): the jump is the third slot's,
	 * its offset from there. */
#define FUSE_BOUND(name, op)						\
name:									\
	DST = SRC + (uint64_t)(int64_t)IMM;				\
	insn += reg[insn[2].dst] op reg[insn[2].src] ? 3 + insn[2].off : 3; \
	goto *insn->label;
	FUSE_BOUND(fuse_bound_jgt, >)
	FUSE_BOUND(fuse_bound_jge, >=)
	FUSE_BOUND(fuse_bound_jlt, <)
	FUSE_BOUND(fuse_bound_jle, <=)
#undef FUSE_BOUND
	/* The unaligned u16 load (uxdp_bpf_match_ld16()), in bytes as the
	 * program has it, so on any host. b may be p: read before either
	 * is written. */
fuse_ld16:
	{
		const uint8_t *m = (const uint8_t *)(uintptr_t)
			(SRC + (uint64_t)(int64_t)OFF);
		uint64_t lo = m[0], hi = m[1];

		reg[IMM] = lo;
		DST = lo | hi << 8;
		insn += 4;
		goto *insn->label;
	}

	/*
	 * Atomics on @T at dst + off. The fetching forms are fully ordered,
	 * the others relaxed, as the kernel's; maps are shared between
	 * threads. A fetch puts the old value (zero-extended) in src;
	 * cmpxchg compares with r0 and puts the old value there, equal or
	 * not.
	 */
#define ATOMIC(T)							\
	{								\
		T *p = (T *)(uintptr_t)(DST + (uint64_t)(int64_t)OFF);	\
		T s = (T)SRC, old;					\
									\
		/* The safety pass proves or checks alignment (a	\
		 * misaligned lock is a bus lock); this is the engine's	\
		 * own guard, a fault here is the pass's mistake. */	\
		if (unlikely((uintptr_t)p & (sizeof(T) - 1))) {	\
			run->fault = UXDP_BPF_FAULT_MEM;		\
			goto fault;					\
		}							\
		switch (IMM) {						\
		case BPF_ADD:						\
			__atomic_fetch_add(p, s, __ATOMIC_RELAXED);	\
			break;						\
		case BPF_OR:						\
			__atomic_fetch_or(p, s, __ATOMIC_RELAXED);	\
			break;						\
		case BPF_AND:						\
			__atomic_fetch_and(p, s, __ATOMIC_RELAXED);	\
			break;						\
		case BPF_XOR:						\
			__atomic_fetch_xor(p, s, __ATOMIC_RELAXED);	\
			break;						\
		case BPF_ADD | BPF_FETCH:				\
			SRC = __atomic_fetch_add(p, s, __ATOMIC_SEQ_CST); \
			break;						\
		case BPF_OR | BPF_FETCH:				\
			SRC = __atomic_fetch_or(p, s, __ATOMIC_SEQ_CST); \
			break;						\
		case BPF_AND | BPF_FETCH:				\
			SRC = __atomic_fetch_and(p, s, __ATOMIC_SEQ_CST); \
			break;						\
		case BPF_XOR | BPF_FETCH:				\
			SRC = __atomic_fetch_xor(p, s, __ATOMIC_SEQ_CST); \
			break;						\
		case BPF_XCHG:						\
			SRC = __atomic_exchange_n(p, s, __ATOMIC_SEQ_CST); \
			break;						\
		case BPF_CMPXCHG:					\
			old = (T)reg[BPF_REG_0];			\
			__atomic_compare_exchange_n(p, &old, s, false,	\
						    __ATOMIC_SEQ_CST,	\
						    __ATOMIC_SEQ_CST);	\
			reg[BPF_REG_0] = old;				\
			break;						\
		default:						\
			goto op_bad;					\
		}							\
		CONT;							\
	}
do_atomic32:
	ATOMIC(uint32_t)
do_atomic64:
	ATOMIC(uint64_t)

do_call:
	if (insn->src == BPF_PSEUDO_CALL) {
		/* A function of the program: a new frame below this one. */
		if (unlikely(depth == UXDP_BPF_MAX_DEPTH - 1)) {
			run->fault = UXDP_BPF_FAULT_DEPTH;
			goto fault;
		}
		f = &frames[depth++];
		f->ret = insn;
		f->base = base;
		f->code = code;
		f->r6 = reg[BPF_REG_6];
		f->r7 = reg[BPF_REG_7];
		f->r8 = reg[BPF_REG_8];
		f->r9 = reg[BPF_REG_9];
		f->r10 = reg[BPF_REG_10];
		reg[BPF_REG_10] -= code->stack_size;
		insn += IMM;
		CONT;
	} else {
		/* A helper: imm is its slot in code->helpers. */
		uint32_t slot = (uint32_t)IMM;
		const struct uxdp_bpf_helper *h;

		if (unlikely(insn->src || slot >= code->nhelpers ||
			     !(h = code->helpers[slot])))
			goto op_bad;
		reg[BPF_REG_0] = h->fn(reg[BPF_REG_1], reg[BPF_REG_2],
				       reg[BPF_REG_3], reg[BPF_REG_4],
				       reg[BPF_REG_5]);
		if (unlikely((h->flags & UXDP_BPF_HELPER_UNWIND) &&
			     !reg[BPF_REG_0]))
			goto out;
		CONT;
	}

do_exit:
	if (depth) {
		f = &frames[--depth];
		reg[BPF_REG_6] = f->r6;
		reg[BPF_REG_7] = f->r7;
		reg[BPF_REG_8] = f->r8;
		reg[BPF_REG_9] = f->r9;
		reg[BPF_REG_10] = f->r10;
		insn = f->ret;
		base = f->base;
		code = f->code;
		run->code = code;
		CONT;
	}
	goto out;

do_tail_call: {
	/* The kernel's order: the index, then the count (which a missing
	 * program still uses up), then the slot. */
	const struct uxdp_bpf_prog_array *arr =
		(const struct uxdp_bpf_prog_array *)(uintptr_t)reg[BPF_REG_2];
	uint32_t idx = (uint32_t)reg[BPF_REG_3];
	const struct uxdp_bpf_code *next;

	if (unlikely(!arr || idx >= arr->max_entries))
		CONT;
	if (unlikely(run->tail_calls >= UXDP_BPF_MAX_TAIL_CALLS))
		CONT;
	run->tail_calls++;
	/* Pairs with the release of the slot's update. */
	next = __atomic_load_n(&arr->slots[idx], __ATOMIC_ACQUIRE);
	if (!next)
		CONT;
	code = next;
	run->code = code;
	base = decoded(code, tmp, &ntmp);
	if (unlikely(!base)) {
		run->fault = UXDP_BPF_FAULT_INSN;
		run->fault_pc = 0;
		reg[BPF_REG_0] = 0;
		goto out;
	}
	insn = base;
	goto *insn->label;
}

do_check:
	if (unlikely(!mem_ok(run, code, DST + (uint64_t)(int64_t)OFF,
			     (uint32_t)IMM))) {
		run->fault = UXDP_BPF_FAULT_MEM;
		goto fault;
	}
	CONT;

do_budget:
	if (unlikely(!run->budget)) {
		run->fault = UXDP_BPF_FAULT_BUDGET;
		goto fault;
	}
	run->budget--;
	CONT;

op_bad:
	run->fault = UXDP_BPF_FAULT_INSN;
fault:
	run->fault_pc = (uint32_t)(insn - base);
	reg[BPF_REG_0] = 0;
out:
	uxdp_bpf_cur = prev;
	for (t = 0; t < ntmp; t++)
		free(tmp[t]);
	return reg[BPF_REG_0];
}

int uxdp_bpf_interp_prepare(struct uxdp_bpf_code *code)
{
	struct interp_insn *d;

	if (code->interp)
		return 0;
	d = malloc((size_t)code->len * sizeof(*d));
	if (!d)
		return -ENOMEM;
	decode(code, d);
	code->interp = d;
	return 0;
}
