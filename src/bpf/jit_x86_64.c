/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The x86-64 JIT: a struct uxdp_bpf_code (after fixups) to native code.
 * Any failure (an opcode without a case here, an image too large, no
 * memory) returns -errno with a reason, and the caller keeps the
 * interpreter. On other architectures compile() says so (-EOPNOTSUPP).
 *
 * Registers: eBPF r0..r10 live in the registers the System V ABI gives a
 * call's result and arguments, so a helper call needs no moves:
 *
 *	r0 rax   r1 rdi   r2 rsi   r3 rdx   r4 rcx   r5 r8
 *	r6 rbx   r7 r13   r8 r14   r9 r15   r10 rbp
 *
 * r12 holds the struct uxdp_bpf_run for the whole run (callee-saved, so
 * helpers keep it); r9, r10 and r11 are scratch inside one instruction.
 *
 * Frames. The eBPF stack is not interleaved with the native one: the run
 * gets one block of UXDP_BPF_MAX_DEPTH * UXDP_BPF_STACK bytes in
 * uxdp_bpf_jit_run()'s native frame, [run->stack_lo, run->stack_hi), and
 * r10 starts at stack_hi. A STACK check may then allow the whole block
 * (every frame, as a pointer into a caller's stack is legal) without ever
 * reaching a return address or a saved register. A bpf-to-bpf call
 * pushes r6..r9 and r10, moves r10 down by the calling code's stack_size
 * (as the interpreter does) and makes a native call. Each frame pushes
 * 48 bytes on the native stack, so the depth is rsp's distance from the
 * rsp the prologue saved: the call that would make a 9th frame faults
 * (DEPTH). The prologue calls the body, so every exit is a ret: to its
 * caller, or from frame 0 to the epilogue. Eight frames of at most 512 bytes
 * fit the block whatever sizes a chain of tail calls mixes.
 *
 * The image:
 *
 *	prologue	push the callee-saved registers the code uses, r12 =
 *			run, r10 = stack_hi, the body's rsp saved at
 *			[stack_hi] (the 8 bytes above the block, outside
 *			every check), the registers it may read zeroed:
 *			each only if the code needs it (jit_frame()); then
 *			call the body, and the epilogue
 *	tail entry	code->jit_tail_entry: where tail calls land
 *	body		one native sequence per instruction; addrs[i] is
 *			where instruction i ends
 *	fall-off	a run past the last instruction: fault INSN
 *	common		a fault: run->fault and fault_pc from r10d/r11d,
 *			r0 = 0; then the unwind: rsp back to the saved
 *			one, ret to the epilogue
 *	stubs		one per instruction that may fault (check, budget,
 *			bpf-to-bpf call): fault kind and index, jump to
 *			common; the fast path only has a jcc to it
 *
 * Sizes: each pass emits every instruction into a scratch buffer, taking
 * forward jump targets from the previous pass (the first assumes the
 * largest size everywhere) and backward ones from this pass, and uses a
 * rel8 jump wherever the distance fits. As code only shrinks, the passes
 * settle; from pass uxdp_bpf_jit_pad_pass (10) on, an instruction that
 * would shrink is padded with NOPs to stop any oscillation. The last pass writes the code into memory mapped RW, must
 * land every instruction where the settled pass did, and the memory is
 * then made RX: it is never writable and executable at once.
 */
#include "../internal.h"

#include <stdint.h>
#include <stdlib.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

#if defined(__x86_64__)

#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
	RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

static const uint8_t reg_map[11] = {
	RAX, RDI, RSI, RDX, RCX, R8, RBX, R13, R14, R15, RBP,
};

#define RUN		R12	/* struct uxdp_bpf_run *, the whole run */
#define AUX		R11	/* scratch within one instruction */
#define AUX2		R10
#define AUX3		R9

/* x86 condition codes (the low nibble of jcc/setcc/cmovcc). */
enum {
	CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4, CC_NE = 0x5, CC_BE = 0x6,
	CC_A = 0x7, CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe, CC_G = 0xf,
	CC_JMP = -1,		/* an unconditional jmp */
};

/* Prefix and operand flags of one encoded instruction. */
#define X_W	(1U << 0)	/* REX.W: 64-bit operand */
#define X_66	(1U << 1)	/* operand-size prefix: 16-bit */
#define X_BREG	(1U << 2)	/* the reg field names a byte register */
#define X_BRM	(1U << 3)	/* the rm field names a byte register */
#define X_LOCK	(1U << 4)

#define JIT_TMP		192	/* bytes one instruction may take */
#define JIT_PASSES	20
#define JIT_STUB_LEN	17	/* mov r10d, imm32; mov r11d, imm32; jmp rel32 */
#define JIT_MAX_IMAGE	(256U << 20)
#define FRAME		UXDP_BPF_STACK

unsigned uxdp_bpf_jit_pad_pass = 10;

struct uxdp_bpf_jit {
	struct uxdp_bpf_code *code;
	uint8_t *image;
	size_t size;			/* bytes of code */
	size_t map_len;			/* bytes mapped */
	uint32_t *addrs;		/* end of each instruction */
	uint32_t prologue;		/* where instruction 0 starts */
	uint32_t tail;			/* where a tail call enters */
	unsigned passes;
	uxdp_bpf_jit_fn entry;
	bool leaf;			/* the code never reads the run */
	bool cur;			/* helpers may run: uxdp_bpf_cur */
};

/* One compilation. */
struct jit {
	struct uxdp_bpf_code *code;
	uint32_t *addrs;		/* the previous pass's ends */
	uint32_t *naddrs;		/* this pass's */
	uint32_t prologue;
	/* Offsets of the shared tail, previous pass (o*) and this one. */
	uint32_t ocommon, ounwind, ostubs;
	uint32_t ncommon, nunwind, nstubs;
	/* Fault sites: kind and index per stub, numbered in code order. */
	uint8_t *site_kind;
	uint32_t *site_pc;
	uint32_t nsites;
	uint8_t *image;			/* the last pass only */
	uint32_t pos;			/* this pass: where buf starts */
	bool pad;
	uint8_t buf[JIT_TMP];
	uint32_t n;
	bool overflow;
	uint32_t idx;			/* instruction being emitted */
	bool bad_jump;			/* last pass: a rel8 out of reach */
	bool tail_calls;		/* the code has a tail_call */
	bool helpers;			/* and helper calls */
	bool budgets;			/* and budget instructions */
	/* What the prologue sets up (jit_frame()): the callee-saved
	 * registers it pushes (a bit per native register), the eBPF
	 * registers it zeroes, whether the code uses the run (r12 and the
	 * saved rsp) and r10 (rbp). */
	uint16_t save;
	uint16_t zero;
	bool need_run;
	bool local_calls;		/* bpf-to-bpf calls */
	bool need_fp;
	/* The native register the budget lives in (jit_frame()), -1: in
	 * run->budget. */
	int breg;
	uint32_t tail;			/* the prologue's tail entry */
	/* Per bpf-to-bpf call target, what a call to it saves
	 * (callee_saves()); NULL: the full five-push frame. */
	uint8_t *call_save;
	/* Per instruction, whether a jump or a call may land on it
	 * (mark_targets()): two instructions fuse into one native
	 * sequence only when nothing lands on the second. */
	uint8_t *target;
};

/* ---- encoders ------------------------------------------------------------- */

/* The scratch buffer out: to the image on the last pass. */
static void flush(struct jit *j)
{
	if (j->image)
		memcpy(j->image + j->pos, j->buf, j->n);
	j->pos += j->n;
	j->n = 0;
}


static inline bool is_imm8(int64_t v)
{
	return v >= -128 && v <= 127;
}

static inline bool is_simm32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void emit1(struct jit *j, uint8_t b)
{
	if (j->n < JIT_TMP)
		j->buf[j->n++] = b;
	else
		j->overflow = true;
}

static void emit2(struct jit *j, uint16_t v)
{
	emit1(j, (uint8_t)v);
	emit1(j, (uint8_t)(v >> 8));
}

static void emit4(struct jit *j, uint32_t v)
{
	emit2(j, (uint16_t)v);
	emit2(j, (uint16_t)(v >> 16));
}

static void emit8(struct jit *j, uint64_t v)
{
	emit4(j, (uint32_t)v);
	emit4(j, (uint32_t)(v >> 32));
}

/* An opcode of 1..3 bytes, written as its bytes in order: 0x0fb6. */
static void emit_op(struct jit *j, uint32_t op)
{
	if (op > 0xffff)
		emit1(j, (uint8_t)(op >> 16));
	if (op > 0xff)
		emit1(j, (uint8_t)(op >> 8));
	emit1(j, (uint8_t)op);
}

/* LOCK, 66, then REX when one is needed: a 64-bit operand, a register
 * past rdi, or spl..dil as a byte register (without REX, ah..bh). */
static void emit_pfx(struct jit *j, unsigned f, int reg, int index, int rm)
{
	uint8_t rex = 0x40;

	if (f & X_LOCK)
		emit1(j, 0xf0);
	if (f & X_66)
		emit1(j, 0x66);
	if (f & X_W)
		rex |= 8;
	if (reg & 8)
		rex |= 4;
	if (index & 8)
		rex |= 2;
	if (rm & 8)
		rex |= 1;
	if (rex != 0x40 || ((f & X_BREG) && reg >= 4 && reg <= 7) ||
	    ((f & X_BRM) && rm >= 4 && rm <= 7))
		emit1(j, rex);
}

/* op reg, rm with both registers (mod 11). @reg may be a /digit. */
static void emit_rr(struct jit *j, unsigned f, uint32_t op, int reg, int rm)
{
	emit_pfx(j, f, reg, 0, rm);
	emit_op(j, op);
	emit1(j, (uint8_t)(0xc0 | (reg & 7) << 3 | (rm & 7)));
}

/* The ModRM (and SIB, displacement) of [base + disp]. rbp and r13 have
 * no mod-00 form; rsp and r12 need a SIB byte. */
static void emit_modrm_mem(struct jit *j, int reg, int base, int32_t disp)
{
	uint8_t mod;

	if (disp == 0 && (base & 7) != RBP)
		mod = 0;
	else if (is_imm8(disp))
		mod = 1;
	else
		mod = 2;
	emit1(j, (uint8_t)(mod << 6 | (reg & 7) << 3 | (base & 7)));
	if ((base & 7) == RSP)
		emit1(j, 0x24);
	if (mod == 1)
		emit1(j, (uint8_t)disp);
	else if (mod == 2)
		emit4(j, (uint32_t)disp);
}

/* op reg, [base + disp]. */
static void emit_rm(struct jit *j, unsigned f, uint32_t op, int reg, int base,
		    int32_t disp)
{
	emit_pfx(j, f & ~X_BRM, reg, 0, base);
	emit_op(j, op);
	emit_modrm_mem(j, reg, base, disp);
}

/* lea dst, [base + index] (@f: X_W for 64 bits, else 32 bits of the sum,
 * zero-extended). rbp and r13 have no mod-00 base form, so they go in the
 * index, where they may (rsp, which cannot, is never an eBPF register). */
static void emit_lea_rr(struct jit *j, unsigned f, int dst, int base,
			int index)
{
	bool disp8;

	if ((base & 7) == RBP && (index & 7) != RBP) {
		int t = base;

		base = index;
		index = t;
	}
	disp8 = (base & 7) == RBP;
	emit_pfx(j, f, dst, index, base);
	emit1(j, 0x8d);
	emit1(j, (uint8_t)((disp8 ? 0x44 : 0x04) | (dst & 7) << 3));
	emit1(j, (uint8_t)((index & 7) << 3 | (base & 7)));
	if (disp8)
		emit1(j, 0);
}

/* mov dst, src (64-bit), nothing when they are one register. */
static void emit_mov64(struct jit *j, int dst, int src)
{
	if (dst != src)
		emit_rr(j, X_W, 0x89, src, dst);
}

/* mov dst32, src32: also the zero extension of a register. */
static void emit_mov32(struct jit *j, int dst, int src)
{
	emit_rr(j, 0, 0x89, src, dst);
}

/* dst = a 64-bit constant, in the shortest form. */
static void emit_mov_imm64(struct jit *j, int dst, uint64_t v)
{
	if (v == 0) {
		emit_rr(j, 0, 0x31, dst, dst);		/* xor r32, r32 */
	} else if (v <= UINT32_MAX) {
		emit_pfx(j, 0, 0, 0, dst);		/* mov r32, imm32 */
		emit1(j, (uint8_t)(0xb8 | (dst & 7)));
		emit4(j, (uint32_t)v);
	} else if (is_simm32((int64_t)v)) {
		emit_rr(j, X_W, 0xc7, 0, dst);		/* sign-extended */
		emit4(j, (uint32_t)v);
	} else {
		emit_pfx(j, X_W, 0, 0, dst);		/* movabs */
		emit1(j, (uint8_t)(0xb8 | (dst & 7)));
		emit8(j, v);
	}
}

/* An ALU group-1 operation (/digit) with an immediate, imm8 when it fits. */
static void emit_alu_imm(struct jit *j, unsigned f, int digit, int rm,
			 int32_t imm)
{
	if (is_imm8(imm)) {
		emit_rr(j, f, 0x83, digit, rm);
		emit1(j, (uint8_t)imm);
	} else {
		emit_rr(j, f, 0x81, digit, rm);
		emit4(j, (uint32_t)imm);
	}
}

/* The same on [base + disp]. */
static void emit_alu_imm_mem(struct jit *j, unsigned f, int digit, int base,
			     int32_t disp, int32_t imm)
{
	if (is_imm8(imm)) {
		emit_rm(j, f, 0x83, digit, base, disp);
		emit1(j, (uint8_t)imm);
	} else {
		emit_rm(j, f, 0x81, digit, base, disp);
		emit4(j, (uint32_t)imm);
	}
}

static void emit_push(struct jit *j, int r)
{
	emit_pfx(j, 0, 0, 0, r);
	emit1(j, (uint8_t)(0x50 | (r & 7)));
}

static void emit_pop(struct jit *j, int r)
{
	emit_pfx(j, 0, 0, 0, r);
	emit1(j, (uint8_t)(0x58 | (r & 7)));
}

/* call through a register: helpers live in libuxdp or the application,
 * which a rel32 from an mmap'd page may not reach. */
static void emit_call_abs(struct jit *j, const void *fn)
{
	emit_mov_imm64(j, RAX, (uint64_t)(uintptr_t)fn);
	emit_rr(j, 0, 0xff, 2, RAX);			/* call rax */
}

/* Where this pass is about to write the next byte. */
static uint32_t here(const struct jit *j)
{
	return j->pos + j->n;
}

/* jcc (or jmp, CC_JMP) to an offset in the image, rel8 if @rel8. */
static void emit_jump_to(struct jit *j, int cc, uint32_t to, bool rel8)
{
	int64_t from = here(j);

	if (rel8) {
		/* Only the last pass's offsets are exact: there a rel8 that
		 * does not fit would be wrong code, so refuse it. */
		if (j->image && !is_imm8((int64_t)to - (from + 2)))
			j->bad_jump = true;
		emit1(j, cc == CC_JMP ? 0xeb : (uint8_t)(0x70 | cc));
		emit1(j, (uint8_t)((int64_t)to - (from + 2)));
	} else if (cc == CC_JMP) {
		emit1(j, 0xe9);
		emit4(j, (uint32_t)((int64_t)to - (from + 5)));
	} else {
		emit1(j, 0x0f);
		emit1(j, (uint8_t)(0x80 | cc));
		emit4(j, (uint32_t)((int64_t)to - (from + 6)));
	}
}

/* The same, rel8 when it fits. */
static void emit_jump(struct jit *j, int cc, uint32_t to)
{
	emit_jump_to(j, cc, to, is_imm8((int64_t)to - (here(j) + 2)));
}

/* A short jump to a label later in this instruction: returns the byte to
 * patch(). The sequences are all far below 128 bytes. */
static uint32_t emit_fwd8(struct jit *j, int cc)
{
	emit1(j, cc == CC_JMP ? 0xeb : (uint8_t)(0x70 | cc));
	emit1(j, 0);
	return j->n - 1;
}

static void patch8(struct jit *j, uint32_t at)
{
	if (j->n - (at + 1) > 127)
		j->overflow = true;
	else
		j->buf[at] = (uint8_t)(j->n - (at + 1));
}

/* A short jump back to @label, a j->n of this instruction. */
static void emit_back8(struct jit *j, int cc, uint32_t label)
{
	emit1(j, (uint8_t)(0x70 | cc));
	emit1(j, (uint8_t)(label - (j->n + 1)));
}

/* Recommended multi-byte NOPs, to pad an instruction to its old size. */
static void emit_nops(struct jit *j, uint32_t len)
{
	static const uint8_t nops[8][8] = {
		{ 0x90 },
		{ 0x66, 0x90 },
		{ 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	while (len) {
		uint32_t k = len > 8 ? 8 : len, i;

		for (i = 0; i < k; i++)
			emit1(j, nops[k - 1][i]);
		len -= k;
	}
}

/* ---- the layout ----------------------------------------------------------- */

/* Where instruction @i starts, as the previous pass laid it out. */
static uint32_t insn_start(const struct jit *j, uint32_t i)
{
	return i ? j->addrs[i - 1] : j->prologue;
}

/* Where instruction @i starts: this pass's layout for one already
 * emitted (a backward target, exact), else the previous pass's. */
static uint32_t target_start(const struct jit *j, uint32_t i)
{
	if (i <= j->idx)
		return i ? j->naddrs[i - 1] : j->prologue;
	return insn_start(j, i);
}

/*
 * The jump that ends instruction j->idx, to instruction @t. Forward, the
 * distance is the code between this instruction's end and the target as
 * the previous pass laid it out, which does not depend on this jump's
 * own size: so one that was rel32 becomes rel8 as soon as what it jumps
 * over fits. Backward, the target is laid out in this pass already.
 * Once instructions are padded, the previous end may lie past the jump's,
 * so then the distance is taken from here.
 */
static void emit_insn_jump(struct jit *j, int cc, uint32_t t)
{
	uint32_t to = target_start(j, t);
	int64_t d;

	/* Padded, the previous end is past this jump's: measure exactly. */
	if (t > j->idx && !j->pad)
		d = (int64_t)to - j->addrs[j->idx];
	else
		d = (int64_t)to - (here(j) + 2);
	emit_jump_to(j, cc, to, is_imm8(d));
}

/* A fault site of this instruction: its stub, where the previous pass
 * put the stubs. */
static uint32_t new_site(struct jit *j, enum uxdp_bpf_fault kind)
{
	uint32_t s = j->nsites++;

	j->site_kind[s] = (uint8_t)kind;
	j->site_pc[s] = j->idx;
	return j->ostubs + s * JIT_STUB_LEN;
}

#define RUN_OFF(f)	((int32_t)offsetof(struct uxdp_bpf_run, f))
#define BUFF_OFF(f)	((int32_t)offsetof(struct uxdp_buff, f))

/* The callee-saved registers a prologue may push, in push order. */
static const uint8_t saved_regs[] = { RBP, RBX, R12, R13, R14, R15 };

static unsigned frame_pushes(const struct jit *j)
{
	unsigned k, n = 0;

	for (k = 0; k < sizeof(saved_regs); k++)
		n += !!(j->save & 1U << saved_regs[k]);
	return n;
}

/* The epilogue: undo the prologue's pushes and return r0. Only in the
 * prologue's own block: the body returns to it (emit_prologue). */
static void emit_epilogue(struct jit *j)
{
	int k;

	if (frame_pushes(j) % 2)
		emit_alu_imm(j, X_W, 0, RSP, 8);	/* add rsp, 8 */
	for (k = (int)sizeof(saved_regs) - 1; k >= 0; k--)
		if (j->save & 1U << saved_regs[k])
			emit_pop(j, saved_regs[k]);
	emit1(j, 0xc3);
}

/* A qword store of a sign-extended imm32: mov qword [base + disp], imm. */
static void emit_st_imm64(struct jit *j, int base, int32_t disp, int32_t imm)
{
	emit_rm(j, X_W, 0xc7, 0, base, disp);
	emit4(j, (uint32_t)imm);
}

/*
 * r12 = run, and the run filled as far as the code reads it: code, the
 * context (ctx for XDP, mem and mem_len for RAW, the other NULL), the
 * stack's bounds from fp, the budget from the code (when a budget
 * instruction or a tail call's target may read it), no tail calls yet,
 * no fault, and the body's rsp at [fp], below the call's return address.
 * uxdp_bpf_jit_run() fills all of it before the call too; prog.c's
 * uxdp_bpf_jit_run_xdp() leaves it to this.
 */
static void emit_fill_run(struct jit *j)
{
	bool xdp = j->code->ctx_kind == UXDP_BPF_CTX_XDP;

	emit_mov64(j, RUN, RDX);
	emit_mov_imm64(j, AUX, (uint64_t)(uintptr_t)j->code);
	emit_rm(j, X_W, 0x89, AUX, RUN, RUN_OFF(code));
	if (xdp) {
		emit_rm(j, X_W, 0x89, RDI, RUN, RUN_OFF(ctx));
		emit_st_imm64(j, RUN, RUN_OFF(mem), 0);
	} else {
		emit_st_imm64(j, RUN, RUN_OFF(ctx), 0);
		emit_rm(j, X_W, 0x89, RDI, RUN, RUN_OFF(mem));
		emit_rm(j, X_W, 0x89, RSI, RUN, RUN_OFF(mem_len));
	}
	emit_rm(j, X_W, 0x89, RCX, RUN, RUN_OFF(stack_hi));
	emit_rm(j, X_W, 0x8d, AUX2, RCX,
		-(int32_t)(UXDP_BPF_MAX_DEPTH * FRAME));	/* lea r10 */
	emit_rm(j, X_W, 0x89, AUX2, RUN, RUN_OFF(stack_lo));
	if (j->breg >= 0) {
		emit_rm(j, X_W, 0x8b, j->breg, AUX,
			(int32_t)offsetof(struct uxdp_bpf_code, budget));
	} else if (j->budgets || j->tail_calls) {
		emit_rm(j, X_W, 0x8b, AUX2, AUX,
			(int32_t)offsetof(struct uxdp_bpf_code, budget));
		emit_rm(j, X_W, 0x89, AUX2, RUN, RUN_OFF(budget));
	}
	if (j->tail_calls) {
		emit_rm(j, 0, 0xc7, 0, RUN, RUN_OFF(tail_calls));
		emit4(j, 0);
	}
	emit_rm(j, 0, 0xc7, 0, RUN, RUN_OFF(fault));
	emit4(j, UXDP_BPF_FAULT_NONE);
	emit_rm(j, 0, 0xc7, 0, RUN, RUN_OFF(fault_pc));
	emit4(j, 0);
	emit_rm(j, X_W, 0x8d, AUX, RSP, -8);		/* lea r11 */
	emit_rm(j, X_W, 0x89, AUX, RCX, 0);		/* mov [rcx], r11 */
}

/*
 * Entered as uint64_t fn(r1, r2, run, fp), fp = run->stack_hi. The
 * prologue pushes only the callee-saved registers the code uses (all of
 * them when it tail-calls: a tail-called program runs in this frame with
 * whatever registers it uses), sets r12 = run and saves the body's rsp at
 * [fp] only when the code reads the run (a check, a budget, a call, a
 * fault it can reach), zeroes the eBPF registers the code may read before
 * writing them (as the interpreter's start at 0; else they would hold the
 * caller's registers, the run's address among them), and then CALLS the
 * body: every exit is a plain ret, to a bpf-to-bpf caller or, from frame
 * 0, to the epilogue right after this call, whichever program of a chain
 * of tail calls exits. The pushes, the pad and the call leave the body's
 * rsp 16-byte aligned for every helper call.
 */
static void emit_prologue(struct jit *j)
{
	unsigned k, n = frame_pushes(j);
	uint32_t call;

	for (k = 0; k < sizeof(saved_regs); k++)
		if (j->save & 1U << saved_regs[k])
			emit_push(j, saved_regs[k]);
	if (n % 2)
		emit_alu_imm(j, X_W, 5, RSP, 8);	/* sub rsp, 8 */
	if (j->need_run) {
		flush(j);			/* JIT_TMP bytes a part */
		emit_fill_run(j);
		flush(j);
	}
	if (j->need_fp)
		emit_mov64(j, RBP, RCX);
	for (k = 0; k <= 9; k++)
		if (j->zero & 1U << k)
			emit_mov_imm64(j, reg_map[k], 0);
	emit1(j, 0xe8);					/* call the body */
	call = here(j);
	emit4(j, 0);
	emit_epilogue(j);
	/* The tail entry: a tail call from another program lands here, in
	 * its frame, with the budget in its run. */
	j->tail = here(j);
	if (j->breg >= 0)
		emit_rm(j, X_W, 0x8b, j->breg, RUN, RUN_OFF(budget));
	/* rel32 from the end of the call to the body, here */
	memcpy(j->buf + (call - j->pos), &(uint32_t){ here(j) - call - 4 }, 4);
}

/*
 * What the code needs of the frame, from its instructions: a tail call
 * makes the full frame (every register saved and zeroed, the run, r10);
 * else the registers the instructions name (as dst or src: a superset of
 * what they read), r3..r5 too when a helper call may read them, the run
 * for every instruction that reads it or may fault, and a program that
 * could run past its last instruction (its fault needs the run).
 */
static void jit_frame(struct jit *j)
{
	const struct uxdp_bpf_code *code = j->code;
	const struct bpf_insn *last = &code->insns[code->len - 1];
	uint16_t named = 1U << 0;	/* exit reads r0 */
	bool calls = false;
	uint32_t i;
	unsigned r;

	for (i = 0; i < code->len; i++) {
		const struct bpf_insn *in = &code->insns[i];

		named |= (uint16_t)(1U << in->dst_reg | 1U << in->src_reg);
		switch (in->code) {
		case UXDP_BPF_OP_BUDGET:
			j->budgets = true;
			/* fall through */
		case UXDP_BPF_OP_CHECK:
			j->need_run = true;
			break;
		case UXDP_BPF_OP_TAIL_CALL:
		case BPF_JMP | BPF_CALL:
			calls = true;
			if (in->code == (BPF_JMP | BPF_CALL) &&
			    in->src_reg == BPF_PSEUDO_CALL) {
				j->need_fp = true;
				/* (the depth test reads the run) */
				j->local_calls = true;
			} else {
				j->need_run = true;
				if (in->code == (BPF_JMP | BPF_CALL))
					j->helpers = true;
			}
			break;
		}
	}
	if (last->code != (BPF_JMP | BPF_EXIT) &&
	    last->code != (BPF_JMP | BPF_JA) &&
	    last->code != (BPF_JMP32 | BPF_JA))
		j->need_run = true;
	if (calls)
		named |= 1U << 3 | 1U << 4 | 1U << 5;
	if (j->local_calls && !(code->depth_proven && !j->tail_calls))
		j->need_run = true;
	if (j->tail_calls) {
		named = 0x3ff;
		j->need_run = true;
		j->need_fp = true;
	}
	if (named & 1U << 10)
		j->need_fp = true;
	/* r1 and r2 are the arguments: never zeroed. When the pass proved
	 * that nothing reads a register before writing it, only r3..r5 of
	 * code that calls helpers: a helper may read arguments its prototype does
	 * not declare (trace_printk formats r3..r5), and unzeroed they would
	 * be the run's address, fp and the caller's r8. */
	j->zero = named & (uint16_t)~(1U << 1 | 1U << 2 | 1U << 10);
	if (code->init_proven)
		j->zero &= j->helpers ? (uint16_t)(1U << 3 | 1U << 4 | 1U << 5) :
			   0;
	j->save = 0;
	for (r = 6; r <= 9; r++)
		if (named & 1U << r)
			j->save |= (uint16_t)(1U << reg_map[r]);
	if (j->need_run)
		j->save |= 1U << RUN;
	/* (A bpf-to-bpf call's pushes of r6..r9 give back what they took:
	 * only the registers the code names change.) */
	if (j->need_fp)
		j->save |= 1U << RBP;
	/*
	 * The budget in a register when one of r6..r9 is free (the code
	 * never names it): a back edge is then sub and jb, not a
	 * read-modify-write of run->budget, whose store-to-load latency
	 * chained every pass of a loop. Every exit and the unwind (which
	 * every fault ends in) write it back to the run, and every helper
	 * call has it there and reads it back; the tail entry reads it
	 * from there. Not with tail calls (the full frame) nor with the depth
	 * test's five-push calls, which would restore it.
	 */
	j->breg = -1;
	if (j->budgets && !j->tail_calls &&
	    (!j->local_calls || code->depth_proven))
		for (r = 6; r <= 9; r++)
			if (!(named & 1U << r)) {
				j->breg = reg_map[r];
				j->save |= (uint16_t)(1U << reg_map[r]);
				break;
			}
}

/* ---- ALU ------------------------------------------------------------------ */

/* dst op= divisor with RFC 9669's results: x / 0 = 0, x % 0 = x (the
 * upper half zeroed for 32 bits), and signed INT_MIN / -1 = INT_MIN,
 * INT_MIN % -1 = 0, which idiv would trap on (#DE). @src < 0: the
 * immediate. */
static void emit_divmod(struct jit *j, bool w, bool mod, bool sgn, int dst,
			int src, int32_t imm)
{
	unsigned fw = w ? X_W : 0;
	uint32_t to_zero = 0, to_neg1 = 0, to_done = 0, to_done2 = 0;
	int res;

	if (src < 0) {
		if (imm == 0) {
			if (!mod)
				emit_rr(j, 0, 0x31, dst, dst);
			else if (!w)
				emit_mov32(j, dst, dst);
			return;
		}
		if (sgn && imm == -1) {
			if (!mod)
				emit_rr(j, fw, 0xf7, 3, dst);	/* neg */
			else
				emit_rr(j, 0, 0x31, dst, dst);
			return;
		}
		if (w)
			emit_mov_imm64(j, AUX, (uint64_t)(int64_t)imm);
		else
			emit_mov_imm64(j, AUX, (uint32_t)imm);
	} else {
		if (w)
			emit_mov64(j, AUX, src);
		else
			emit_mov32(j, AUX, src);
		emit_rr(j, fw, 0x85, AUX, AUX);		/* test */
		to_zero = emit_fwd8(j, CC_E);
		if (sgn) {
			emit_alu_imm(j, fw, 7, AUX, -1);	/* cmp aux, -1 */
			to_neg1 = emit_fwd8(j, CC_E);
		}
	}
	/* div takes rdx:rax (r3:r0): keep them in r10 and r9. */
	if (dst != RAX)
		emit_mov64(j, AUX2, RAX);
	if (dst != RDX)
		emit_mov64(j, AUX3, RDX);
	emit_mov64(j, RAX, dst);
	if (sgn) {
		if (w)
			emit1(j, 0x48);
		emit1(j, 0x99);				/* cqo / cdq */
	} else {
		emit_rr(j, 0, 0x31, RDX, RDX);
	}
	emit_rr(j, fw, 0xf7, sgn ? 7 : 6, AUX);		/* (i)div aux */
	res = mod ? RDX : RAX;
	if (w)
		emit_mov64(j, AUX, res);
	else
		emit_mov32(j, AUX, res);
	if (dst != RAX)
		emit_mov64(j, RAX, AUX2);
	if (dst != RDX)
		emit_mov64(j, RDX, AUX3);
	emit_mov64(j, dst, AUX);
	if (src < 0)
		return;
	to_done = emit_fwd8(j, CC_JMP);
	patch8(j, to_zero);
	if (!mod)
		emit_rr(j, 0, 0x31, dst, dst);
	else if (!w)
		emit_mov32(j, dst, dst);
	if (sgn) {
		to_done2 = emit_fwd8(j, CC_JMP);
		patch8(j, to_neg1);
		if (!mod)
			emit_rr(j, fw, 0xf7, 3, dst);
		else
			emit_rr(j, 0, 0x31, dst, dst);
		patch8(j, to_done2);
	}
	patch8(j, to_done);
}

/* A shift by a register: the count must be in cl, and r4 lives in rcx. */
static void emit_shift_x(struct jit *j, unsigned fw, int digit, int dst,
			 int src)
{
	if (src == RCX) {
		emit_rr(j, fw, 0xd3, digit, dst);
		return;
	}
	emit_mov64(j, AUX, RCX);
	emit_mov32(j, RCX, src);
	if (dst == RCX) {
		/* 32-bit: the shift of r11d zero-extended it already. */
		emit_rr(j, fw, 0xd3, digit, AUX);
		emit_mov64(j, RCX, AUX);
	} else {
		emit_rr(j, fw, 0xd3, digit, dst);
		emit_mov64(j, RCX, AUX);
	}
}

/* Byte swaps: END (le/be by its source bit) and ALU64 bswap. */
static int emit_end(struct jit *j, const struct bpf_insn *in, int dst)
{
	bool swap = BPF_CLASS(in->code) == BPF_ALU64 ||
		    BPF_SRC(in->code) == BPF_TO_BE;

	switch (in->imm) {
	case 16:
		if (swap) {
			emit_rr(j, X_66, 0xc1, 0, dst);	/* rol dst16, 8 */
			emit1(j, 8);
		}
		emit_rr(j, 0, 0x0fb7, dst, dst);	/* movzx dst32, dst16 */
		return 0;
	case 32:
		if (swap) {
			emit_pfx(j, 0, 0, 0, dst);	/* bswap dst32 */
			emit1(j, 0x0f);
			emit1(j, (uint8_t)(0xc8 | (dst & 7)));
		} else {
			emit_mov32(j, dst, dst);
		}
		return 0;
	case 64:
		if (swap) {
			emit_pfx(j, X_W, 0, 0, dst);
			emit1(j, 0x0f);
			emit1(j, (uint8_t)(0xc8 | (dst & 7)));
		}
		return 0;
	}
	return -1;
}

static int emit_alu(struct jit *j, const struct bpf_insn *in)
{
	/* ModRM opcodes "op rm, reg" and group-1 digits, by BPF_OP >> 4. */
	static const uint8_t op_rr[16] = {
		[BPF_ADD >> 4] = 0x01, [BPF_SUB >> 4] = 0x29,
		[BPF_OR >> 4] = 0x09, [BPF_AND >> 4] = 0x21,
		[BPF_XOR >> 4] = 0x31,
	};
	static const uint8_t op_digit[16] = {
		[BPF_ADD >> 4] = 0, [BPF_SUB >> 4] = 5, [BPF_OR >> 4] = 1,
		[BPF_AND >> 4] = 4, [BPF_XOR >> 4] = 6,
		[BPF_LSH >> 4] = 4, [BPF_RSH >> 4] = 5, [BPF_ARSH >> 4] = 7,
	};
	bool w = BPF_CLASS(in->code) == BPF_ALU64;
	unsigned fw = w ? X_W : 0;
	bool x = BPF_SRC(in->code) == BPF_X;
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];
	uint8_t op = BPF_OP(in->code);
	int32_t imm = in->imm;

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
	case BPF_OR:
	case BPF_AND:
	case BPF_XOR:
		if (x)
			emit_rr(j, fw, op_rr[op >> 4], src, dst);
		else
			emit_alu_imm(j, fw, op_digit[op >> 4], dst, imm);
		return 0;
	case BPF_MUL:
		if (x) {
			emit_rr(j, fw, 0x0faf, dst, src);	/* imul dst, src */
		} else if (is_imm8(imm)) {
			emit_rr(j, fw, 0x6b, dst, dst);
			emit1(j, (uint8_t)imm);
		} else {
			emit_rr(j, fw, 0x69, dst, dst);
			emit4(j, (uint32_t)imm);
		}
		return 0;
	case BPF_DIV:
	case BPF_MOD:
		emit_divmod(j, w, op == BPF_MOD, in->off == 1, dst,
			    x ? src : -1, imm);
		return 0;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		if (x) {
			emit_shift_x(j, fw, op_digit[op >> 4], dst, src);
		} else {
			/* The count is masked as the hardware masks cl. */
			uint8_t c = (uint8_t)(imm & (w ? 63 : 31));

			if (!c) {
				if (!w)
					emit_mov32(j, dst, dst);
			} else {
				emit_rr(j, fw, 0xc1, op_digit[op >> 4], dst);
				emit1(j, c);
			}
		}
		return 0;
	case BPF_NEG:
		emit_rr(j, fw, 0xf7, 3, dst);
		return 0;
	case BPF_MOV:
		if (!x) {
			if (w)
				emit_mov_imm64(j, dst, (uint64_t)(int64_t)imm);
			else
				emit_mov_imm64(j, dst, (uint32_t)imm);
			return 0;
		}
		switch (in->off) {
		case 0:
			if (w)
				emit_mov64(j, dst, src);
			else
				emit_mov32(j, dst, src);
			return 0;
		case 8:					/* movsx */
			emit_rr(j, fw | X_BRM, 0x0fbe, dst, src);
			return 0;
		case 16:
			emit_rr(j, fw, 0x0fbf, dst, src);
			return 0;
		case 32:
			if (!w)
				return -1;
			emit_rr(j, X_W, 0x63, dst, src);	/* movsxd */
			return 0;
		}
		return -1;
	case BPF_END:
		return emit_end(j, in, dst);
	}
	return -1;
}

/* ---- jumps ---------------------------------------------------------------- */

static int jmp_cc(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return CC_E;
	case BPF_JNE: return CC_NE;
	case BPF_JSET: return CC_NE;
	case BPF_JGT: return CC_A;
	case BPF_JGE: return CC_AE;
	case BPF_JLT: return CC_B;
	case BPF_JLE: return CC_BE;
	case BPF_JSGT: return CC_G;
	case BPF_JSGE: return CC_GE;
	case BPF_JSLT: return CC_L;
	case BPF_JSLE: return CC_LE;
	}
	return -2;
}

static int emit_cond_jmp(struct jit *j, const struct bpf_insn *in,
			 uint32_t target)
{
	unsigned fw = BPF_CLASS(in->code) == BPF_JMP ? X_W : 0;
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];
	uint8_t op = BPF_OP(in->code);
	int cc = jmp_cc(op);

	if (cc == -2)
		return -1;
	if (target == j->idx + 1)
		return 0;		/* to the next: nothing to decide */
	if (BPF_SRC(in->code) == BPF_X) {
		if (op == BPF_JSET)
			emit_rr(j, fw, 0x85, src, dst);		/* test */
		else
			emit_rr(j, fw, 0x39, src, dst);		/* cmp dst, src */
	} else if (op == BPF_JSET) {
		emit_rr(j, fw, 0xf7, 0, dst);		/* test dst, imm32 */
		emit4(j, (uint32_t)in->imm);
	} else if (in->imm == 0) {
		/* test r, r sets the flags cmp r, 0 would (CF = OF = 0). */
		emit_rr(j, fw, 0x85, dst, dst);
	} else {
		emit_alu_imm(j, fw, 7, dst, in->imm);	/* cmp dst, imm */
	}
	emit_insn_jump(j, cc, target);
	return 0;
}

/* r11 = the bytes bpf-to-bpf calls have pushed: 48 a frame (five
 * registers and the return address) below the rsp the prologue saved. */
#define CALL_PUSH	48
static void emit_call_depth(struct jit *j)
{
	emit_rm(j, X_W, 0x8b, AUX, RUN, RUN_OFF(stack_hi));
	emit_rm(j, X_W, 0x8b, AUX, AUX, 0);
	emit_rr(j, X_W, 0x29, RSP, AUX);		/* sub r11, rsp */
}

/* What callee_saves() records per call target: r6..r9 (bit n - 6) that
 * the call may write, and whether it may reach a C function, which wants
 * rsp 16-aligned. */
#define CS_REGS		0x0fU
#define CS_C_CALL	0x10U
#define CS_DONE		0x80U	/* (plan_call_saves(): computed) */

/* The pushes of a call to a target with saves @cs, in push order. */
static const uint8_t cs_regs[4] = { RBX, R13, R14, R15 };	/* r6..r9 */

/*
 * A bpf-to-bpf call. With the depth proven and no tail calls
 * (j->call_save), it saves only what the callee may change: the r6..r9
 * its instructions (and theirs it calls) write, r10 moved down and back
 * with two lea, and 8 bytes of pad only where the pushes and the return
 * address would leave rsp misaligned for a C call below. Else it is the
 * frame the depth test measures: r6..r9 and r10 pushed (five pushes and
 * the return address keep rsp 16-aligned, 48 bytes a frame), r10 this
 * code's stack_size down, as the interpreter does; the call that would
 * make a 9th frame faults; after the return, run->code is this code
 * again, if the callee may have tail-called another.
 */
static void emit_local_call(struct jit *j, uint32_t target)
{
	uint32_t to = target_start(j, target);
	int32_t fs = (int32_t)j->code->stack_size;
	unsigned k, n = 0;
	uint8_t cs;
	int64_t d;

	if (j->call_save) {
		cs = j->call_save[target];
		for (k = 0; k < 4; k++)
			if (cs & 1U << k) {
				emit_push(j, cs_regs[k]);
				n++;
			}
		/* Every push and the call are 8 bytes: rsp is aligned
		 * again in the callee when their count is even. */
		if ((cs & CS_C_CALL) && n % 2 == 0)
			emit_alu_imm(j, X_W, 5, RSP, 8);	/* sub rsp, 8 */
		if (fs)
			emit_rm(j, X_W, 0x8d, RBP, RBP, -fs);	/* lea */
		d = (int64_t)to - (here(j) + 5);
		emit1(j, 0xe8);
		emit4(j, (uint32_t)d);
		if (fs)
			emit_rm(j, X_W, 0x8d, RBP, RBP, fs);
		if ((cs & CS_C_CALL) && n % 2 == 0)
			emit_alu_imm(j, X_W, 0, RSP, 8);	/* add rsp, 8 */
		for (k = 4; k-- > 0;)
			if (cs & 1U << k)
				emit_pop(j, cs_regs[k]);
		return;
	}
	if (!j->code->depth_proven || j->tail_calls) {
		uint32_t stub = new_site(j, UXDP_BPF_FAULT_DEPTH);

		emit_call_depth(j);
		emit_alu_imm(j, X_W, 7, AUX,
			     CALL_PUSH * (UXDP_BPF_MAX_DEPTH - 1));
		emit_jump(j, CC_AE, stub);
	}
	emit_push(j, RBX);
	emit_push(j, R13);
	emit_push(j, R14);
	emit_push(j, R15);
	emit_push(j, RBP);
	if (fs)
		emit_rm(j, X_W, 0x8d, RBP, RBP, -fs);	/* lea */
	d = (int64_t)to - (here(j) + 5);
	emit1(j, 0xe8);
	emit4(j, (uint32_t)d);
	emit_pop(j, RBP);
	emit_pop(j, R15);
	emit_pop(j, R14);
	emit_pop(j, R13);
	emit_pop(j, RBX);
	if (j->tail_calls) {
		emit_mov_imm64(j, AUX, (uint64_t)(uintptr_t)j->code);
		emit_rm(j, X_W, 0x89, AUX, RUN, RUN_OFF(code));
	}
}

/* exit: a return, to a bpf-to-bpf caller or, in frame 0, to the
 * prologue's epilogue (emit_prologue). */
static void emit_exit(struct jit *j)
{
	if (j->breg >= 0)		/* the budget back in the run */
		emit_rm(j, X_W, 0x89, j->breg, RUN, RUN_OFF(budget));
	emit1(j, 0xc3);
}

static int emit_helper_call(struct jit *j, const struct bpf_insn *in,
			    const char **why)
{
	const struct uxdp_bpf_code *code = j->code;
	const struct uxdp_bpf_helper *h;

	if (in->imm < 0 || (uint32_t)in->imm >= code->nhelpers ||
	    !code->helpers || !(h = code->helpers[in->imm]) || !h->fn) {
		*why = "call of a helper slot the program does not have";
		return -1;
	}
	/* A helper sees the run as it is (a test's reads the budget; a
	 * helper may spend it): the budget register goes to the run around
	 * the call, and comes back from it. */
	if (j->breg >= 0)
		emit_rm(j, X_W, 0x89, j->breg, RUN, RUN_OFF(budget));
	emit_call_abs(j, (const void *)h->fn);
	if (j->breg >= 0)
		emit_rm(j, X_W, 0x8b, j->breg, RUN, RUN_OFF(budget));
	if (h->flags & UXDP_BPF_HELPER_UNWIND) {
		emit_rr(j, X_W, 0x85, RAX, RAX);
		emit_jump(j, CC_E, j->ounwind);
	}
	return 0;
}

/*
 * tail_call(r1 = ctx, r2 = array, r3 = index): the kernel's order. An
 * index past the end or a 34th tail call falls through without counting;
 * else the count goes up, and an empty slot (or one without a JIT entry,
 * which a checked array never has) falls through. r0 is untouched when
 * it falls through.
 */
static void emit_tail_call(struct jit *j)
{
	uint32_t out[5], k;

	emit_rr(j, X_W, 0x85, RSI, RSI);
	out[0] = emit_fwd8(j, CC_E);
	emit_mov32(j, AUX2, RDX);
	emit_rm(j, 0, 0x3b, AUX2, RSI,
		(int32_t)offsetof(struct uxdp_bpf_prog_array, max_entries));
	out[1] = emit_fwd8(j, CC_AE);
	emit_alu_imm_mem(j, 0, 7, RUN, RUN_OFF(tail_calls),
			 UXDP_BPF_MAX_TAIL_CALLS);
	out[2] = emit_fwd8(j, CC_AE);
	emit_alu_imm_mem(j, 0, 0, RUN, RUN_OFF(tail_calls), 1);
	emit_rm(j, X_W, 0x8b, AUX, RSI,
		(int32_t)offsetof(struct uxdp_bpf_prog_array, slots));
	/* mov r11, [r11 + r10 * 8] */
	emit_pfx(j, X_W, AUX, AUX2, AUX);
	emit1(j, 0x8b);
	emit1(j, (uint8_t)(0x04 | (AUX & 7) << 3));
	emit1(j, (uint8_t)(0xc0 | (AUX2 & 7) << 3 | (AUX & 7)));
	emit_rr(j, X_W, 0x85, AUX, AUX);
	out[3] = emit_fwd8(j, CC_E);
	emit_rm(j, X_W, 0x8b, AUX2, AUX,
		(int32_t)offsetof(struct uxdp_bpf_code, jit_tail_entry));
	emit_rr(j, X_W, 0x85, AUX2, AUX2);
	out[4] = emit_fwd8(j, CC_E);
	emit_rm(j, X_W, 0x89, AUX, RUN, RUN_OFF(code));	/* run->code */
	emit_rr(j, 0, 0xff, 4, AUX2);			/* jmp r10 */
	for (k = 0; k < 5; k++)
		patch8(j, out[k]);
}

/* budget: one back edge; the (budget + 1)th faults. */
static void emit_budget(struct jit *j)
{
	uint32_t stub = new_site(j, UXDP_BPF_FAULT_BUDGET);

	if (j->breg >= 0)
		emit_alu_imm(j, X_W, 5, j->breg, 1);		/* sub breg, 1 */
	else
		emit_alu_imm_mem(j, X_W, 5, RUN, RUN_OFF(budget), 1);
	emit_jump(j, CC_B, stub);
}

/* ---- memory --------------------------------------------------------------- */

/* Loads, by size (BPF_SIZE >> 3), plain and sign-extending. */
static const uint32_t ldx_op[4] = { 0x8b, 0x0fb7, 0x0fb6, 0x8b };
static const uint32_t ldsx_op[4] = { 0x63, 0x0fbf, 0x0fbe, 0 };

static int emit_ldx(struct jit *j, const struct bpf_insn *in)
{
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];
	unsigned sz = BPF_SIZE(in->code) >> 3;

	if (BPF_MODE(in->code) == BPF_MEM) {
		emit_rm(j, sz == BPF_DW >> 3 ? X_W : 0, ldx_op[sz], dst, src,
			in->off);
		return 0;
	}
	if (BPF_MODE(in->code) == UXDP_BPF_MEMSX && sz != BPF_DW >> 3) {
		emit_rm(j, X_W, ldsx_op[sz], dst, src, in->off);
		return 0;
	}
	return -1;
}

static int emit_st(struct jit *j, const struct bpf_insn *in)
{
	int dst = reg_map[in->dst_reg];

	switch (BPF_SIZE(in->code)) {
	case BPF_B:
		emit_rm(j, 0, 0xc6, 0, dst, in->off);
		emit1(j, (uint8_t)in->imm);
		return 0;
	case BPF_H:
		emit_rm(j, X_66, 0xc7, 0, dst, in->off);
		emit2(j, (uint16_t)in->imm);
		return 0;
	case BPF_W:
		emit_rm(j, 0, 0xc7, 0, dst, in->off);
		emit4(j, (uint32_t)in->imm);
		return 0;
	case BPF_DW:
		emit_rm(j, X_W, 0xc7, 0, dst, in->off);	/* sign-extended */
		emit4(j, (uint32_t)in->imm);
		return 0;
	}
	return -1;
}

static void emit_stx(struct jit *j, const struct bpf_insn *in)
{
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];

	switch (BPF_SIZE(in->code)) {
	case BPF_B:
		emit_rm(j, X_BREG, 0x88, src, dst, in->off);
		break;
	case BPF_H:
		emit_rm(j, X_66, 0x89, src, dst, in->off);
		break;
	case BPF_W:
		emit_rm(j, 0, 0x89, src, dst, in->off);
		break;
	default:
		emit_rm(j, X_W, 0x89, src, dst, in->off);
		break;
	}
}

/*
 * Atomics. add/or/and/xor are one locked instruction; add|fetch is xadd;
 * or/and/xor|fetch a cmpxchg loop (rax is r0: kept in r10 meanwhile);
 * xchg is implicitly locked; cmpxchg compares with r0 in rax. The 32-bit
 * forms leave their register zero-extended, as RFC 9669 asks, except
 * cmpxchg, which keeps rax's upper half when it succeeds: a mov fixes it.
 */
static int emit_atomic(struct jit *j, const struct bpf_insn *in)
{
	static const uint8_t op_rr[16] = {
		[BPF_ADD >> 4] = 0x01, [BPF_OR >> 4] = 0x09,
		[BPF_AND >> 4] = 0x21, [BPF_XOR >> 4] = 0x31,
	};
	bool w = BPF_SIZE(in->code) == BPF_DW;
	unsigned fw = w ? X_W : 0;
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];
	int32_t imm = in->imm;
	uint32_t loop;
	int val;

	switch (imm) {
	case BPF_ADD:
	case BPF_OR:
	case BPF_AND:
	case BPF_XOR:
		emit_rm(j, fw | X_LOCK, op_rr[imm >> 4], src, dst, in->off);
		return 0;
	case BPF_ADD | BPF_FETCH:
		emit_rm(j, fw | X_LOCK, 0x0fc1, src, dst, in->off);
		return 0;
	case BPF_XCHG:
		emit_rm(j, fw, 0x87, src, dst, in->off);
		return 0;
	case BPF_CMPXCHG:
		emit_rm(j, fw | X_LOCK, 0x0fb1, src, dst, in->off);
		if (!w)
			emit_mov32(j, RAX, RAX);
		return 0;
	case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH:
	case BPF_XOR | BPF_FETCH:
		emit_rm(j, X_W, 0x8d, AUX3, dst, in->off);	/* lea r9 */
		emit_mov64(j, AUX2, RAX);
		val = src == RAX ? AUX2 : src;
		emit_rm(j, fw, 0x8b, RAX, AUX3, 0);
		loop = j->n;
		emit_mov64(j, AUX, RAX);
		emit_rr(j, fw, op_rr[(imm & ~BPF_FETCH) >> 4], val, AUX);
		emit_rm(j, fw | X_LOCK, 0x0fb1, AUX, AUX3, 0);
		emit_back8(j, CC_NE, loop);
		if (src != RAX) {
			emit_mov64(j, src, RAX);
			emit_mov64(j, RAX, AUX2);
		}
		return 0;
	}
	return -1;
}

/* ---- internal instructions ---------------------------------------------- */

static uint64_t jit_ctx_load(const struct uxdp_buff *b, uint32_t field)
{
	return uxdp_bpf_ctx_load(b, (int)field);
}

static bool in_range(uint64_t addr, uint32_t size, const void *lo,
		     const void *hi)
{
	uint64_t l = (uint64_t)(uintptr_t)lo, h = (uint64_t)(uintptr_t)hi;

	return addr >= l && addr + size >= addr && addr + size <= h;
}

/* What a check of kind ANY allows: the packet (an XDP run; from
 * data_meta when the buffer has valid metadata, else from data), the
 * stack, a raw run's memory, and every region (the writable ones for a
 * write). 1 when it is in one of them. */
static uint64_t jit_check_any(const struct uxdp_bpf_run *run, uint64_t addr,
			      uint32_t imm)
{
	const struct uxdp_bpf_code *code = run->code;
	uint32_t size = UXDP_BPF_CHECK_SIZE(imm), r;
	bool write = imm & UXDP_BPF_CHECK_WRITE;

	if (code->ctx_kind == UXDP_BPF_CTX_XDP && run->ctx) {
		const struct uxdp_buff *b = run->ctx;
		const void *lo = b->data_meta <= b->data ? b->data_meta :
			b->data;

		if (in_range(addr, size, lo, b->data_end))
			return 1;
	}
	if (in_range(addr, size, run->stack_lo, run->stack_hi))
		return 1;
	if (code->ctx_kind == UXDP_BPF_CTX_RAW && run->mem &&
	    in_range(addr, size, run->mem, run->mem + run->mem_len))
		return 1;
	for (r = 0; r < code->nregions; r++) {
		const struct uxdp_bpf_region *g = &code->regions[r];

		if (write && g->rdonly)
			continue;
		if (in_range(addr, size, g->base, g->base + g->size))
			return 1;
	}
	return 0;
}

/* A call to C from the middle of an instruction: r0..r5 are kept (six
 * pushes keep rsp aligned), the result lands in r11. The arguments are
 * set by @args, after the pushes, before the call. */
static void emit_c_call_begin(struct jit *j)
{
	emit_push(j, RAX);
	emit_push(j, RDI);
	emit_push(j, RSI);
	emit_push(j, RDX);
	emit_push(j, RCX);
	emit_push(j, R8);
}

static void emit_c_call_end(struct jit *j, const void *fn)
{
	emit_call_abs(j, fn);
	emit_mov64(j, AUX, RAX);
	emit_pop(j, R8);
	emit_pop(j, RCX);
	emit_pop(j, RDX);
	emit_pop(j, RSI);
	emit_pop(j, RDI);
	emit_pop(j, RAX);
}

/* thread's slow path: a thread that has no index yet gets one. */
static uint64_t jit_thread_index(void)
{
	return xdp_thread_index();
}

/*
 * The offset of uxdp_tls_cpu from the thread pointer (%fs:0). The variable
 * is initial-exec: it lies in the static TLS block, at one offset from
 * every thread's pointer, so the code can read it as %fs:offset.
 */
static int64_t tls_cpu_offset(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int64_t)((uintptr_t)&uxdp_tls_cpu - tp);
}

/*
 * thread (bpf_internal.h): xdp_thread_index() % UXDP_BPF_NR_CPUS inline.
 *
 *	mov	r11, fs:[&uxdp_tls_cpu]
 *	test	r11, r11
 *	jz	1f
 *	mov	r11d, [r11 + id]
 *	jmp	2f
 * 1:	(the registers saved) call jit_thread_index; r11 = rax
 * 2:	and	r11d, NR_CPUS - 1
 *	mov	dst, r11
 */
static int emit_thread(struct jit *j, const struct bpf_insn *in,
		       const char **why)
{
	int64_t off = tls_cpu_offset();
	uint32_t slow, done;

	_Static_assert((UXDP_BPF_NR_CPUS & (UXDP_BPF_NR_CPUS - 1)) == 0,
		       "the thread's index is masked");
	if (!is_simm32(off)) {
		*why = "thread-local storage out of a 32-bit reach";
		return -1;
	}
	emit1(j, 0x64);					/* fs: */
	emit1(j, 0x4c);					/* REX.W R */
	emit1(j, 0x8b);
	emit1(j, (uint8_t)((AUX & 7) << 3 | 4));	/* [disp32] */
	emit1(j, 0x25);
	emit4(j, (uint32_t)off);
	emit_rr(j, X_W, 0x85, AUX, AUX);
	slow = emit_fwd8(j, CC_E);
	emit_rm(j, 0, 0x8b, AUX, AUX,
		(int32_t)offsetof(struct uxdp_xdp_cpu, id));
	done = emit_fwd8(j, CC_JMP);
	patch8(j, slow);
	emit_c_call_begin(j);
	emit_c_call_end(j, (const void *)jit_thread_index);
	patch8(j, done);
	emit_alu_imm(j, 0, 4, AUX, UXDP_BPF_NR_CPUS - 1);	/* and */
	emit_mov64(j, reg_map[in->dst_reg], AUX);
	return 0;
}

static void emit_ldx_ctx(struct jit *j, const struct bpf_insn *in)
{
	int dst = reg_map[in->dst_reg], src = reg_map[in->src_reg];

	switch (in->imm) {
	case UXDP_BPF_CTX_DATA:
		emit_rm(j, X_W, 0x8b, dst, src, BUFF_OFF(data));
		return;
	case UXDP_BPF_CTX_DATA_END:
		emit_rm(j, X_W, 0x8b, dst, src, BUFF_OFF(data_end));
		return;
	case UXDP_BPF_CTX_DATA_META:
		emit_rm(j, X_W, 0x8b, dst, src, BUFF_OFF(data_meta));
		return;
	}
	emit_c_call_begin(j);
	emit_mov64(j, RDI, src);
	emit_mov_imm64(j, RSI, (uint32_t)in->imm);
	emit_c_call_end(j, (const void *)jit_ctx_load);
	emit_mov64(j, dst, AUX);
}

/* The end of an access: r11 += size, to the stub if that wraps (carry)
 * or passes the bound at [base + disp]. */
static void emit_end_check(struct jit *j, uint32_t stub, uint32_t size,
			   int base, int32_t disp)
{
	emit_alu_imm(j, X_W, 0, AUX, (int32_t)size);
	emit_jump(j, CC_B, stub);
	emit_rm(j, X_W, 0x3b, AUX, base, disp);
	emit_jump(j, CC_A, stub);
}

/*
 * check: [dst + off, + size) inside the kind's memory, else the stub.
 * r11 = the address; each kind compares it with its bounds, the end
 * computed with add so that a wrap (jc) is caught too.
 */
static int emit_check(struct jit *j, const struct bpf_insn *in,
		      const char **why)
{
	const struct uxdp_bpf_code *code = j->code;
	uint32_t imm = (uint32_t)in->imm, size = UXDP_BPF_CHECK_SIZE(imm);
	uint32_t kind = UXDP_BPF_CHECK_KIND(imm);
	uint32_t stub, ok, region = UXDP_BPF_CHECK_REGION(imm);
	bool write = imm & UXDP_BPF_CHECK_WRITE;
	int dst = reg_map[in->dst_reg];
	const struct uxdp_bpf_region *g;

	switch (kind) {
	case 0:
		if (!(imm & UXDP_BPF_CHECK_ALIGN)) {
			*why = "check of nothing";
			return -1;
		}
		break;
	case UXDP_BPF_MEM_PKT:
	case UXDP_BPF_MEM_STACK:
	case UXDP_BPF_MEM_RAW:
	case UXDP_BPF_MEM_ANY:
		break;
	case UXDP_BPF_MEM_REGION:
		if (region >= code->nregions || !code->regions) {
			*why = "check of a region the program does not have";
			return -1;
		}
		break;
	default:
		*why = "check of an unknown kind of memory";
		return -1;
	}
	stub = new_site(j, UXDP_BPF_FAULT_MEM);
	if (imm & UXDP_BPF_CHECK_ALIGN) {
		/* An atomic's address, a multiple of its size (4 or 8). */
		emit_rm(j, X_W, 0x8d, AUX, dst, in->off);	/* lea r11 */
		emit_rr(j, 0, 0xf7, 0, AUX);			/* test r11d */
		emit4(j, size - 1);
		emit_jump(j, CC_NE, stub);
		if (kind == 0)
			return 0;
	}
	if (kind == UXDP_BPF_MEM_ANY) {
		emit_c_call_begin(j);
		emit_rm(j, X_W, 0x8d, RSI, dst, in->off);	/* before rdi */
		emit_mov64(j, RDI, RUN);
		emit_mov_imm64(j, RDX, imm);
		emit_c_call_end(j, (const void *)jit_check_any);
		emit_rr(j, 0, 0x85, AUX, AUX);
		emit_jump(j, CC_E, stub);
		return 0;
	}
	/* (RAW outside a raw run: mem is NULL, mem_len 0 or, in prog.c's
	 * runs, not filled; either way nothing passes.) */
	if ((kind == UXDP_BPF_MEM_PKT && code->ctx_kind != UXDP_BPF_CTX_XDP) ||
	    (kind == UXDP_BPF_MEM_RAW && code->ctx_kind != UXDP_BPF_CTX_RAW) ||
	    (kind == UXDP_BPF_MEM_REGION && write &&
	     code->regions[region].rdonly)) {
		emit_jump(j, CC_JMP, stub);
		return 0;
	}
	emit_rm(j, X_W, 0x8d, AUX, dst, in->off);		/* lea r11 */
	switch (kind) {
	case UXDP_BPF_MEM_PKT:
		emit_rm(j, X_W, 0x8b, AUX2, RUN, RUN_OFF(ctx));
		emit_rr(j, X_W, 0x85, AUX2, AUX2);
		emit_jump(j, CC_E, stub);
		/* lo = data_meta, or data when the metadata is not valid */
		emit_rm(j, X_W, 0x8b, AUX3, AUX2, BUFF_OFF(data_meta));
		emit_rm(j, X_W, 0x3b, AUX3, AUX2, BUFF_OFF(data));
		ok = emit_fwd8(j, CC_BE);
		emit_rm(j, X_W, 0x8b, AUX3, AUX2, BUFF_OFF(data));
		patch8(j, ok);
		emit_rr(j, X_W, 0x39, AUX3, AUX);		/* cmp r11, r9 */
		emit_jump(j, CC_B, stub);
		emit_end_check(j, stub, size, AUX2, BUFF_OFF(data_end));
		return 0;
	case UXDP_BPF_MEM_STACK:
		emit_rm(j, X_W, 0x3b, AUX, RUN, RUN_OFF(stack_lo));
		emit_jump(j, CC_B, stub);
		emit_end_check(j, stub, size, RUN, RUN_OFF(stack_hi));
		return 0;
	case UXDP_BPF_MEM_RAW:
		/* r11 -= mem: then [0, mem_len) */
		emit_rm(j, X_W, 0x2b, AUX, RUN, RUN_OFF(mem));
		emit_jump(j, CC_B, stub);
		emit_end_check(j, stub, size, RUN, RUN_OFF(mem_len));
		return 0;
	case UXDP_BPF_MEM_REGION:
		/* r11 -= base: then [0, size), the size a constant */
		g = &code->regions[region];
		emit_mov_imm64(j, AUX2, (uint64_t)(uintptr_t)g->base);
		emit_rr(j, X_W, 0x29, AUX2, AUX);		/* sub r11, r10 */
		emit_jump(j, CC_B, stub);
		emit_alu_imm(j, X_W, 0, AUX, (int32_t)size);
		emit_jump(j, CC_B, stub);
		if (g->size <= INT32_MAX) {
			emit_alu_imm(j, X_W, 7, AUX, (int32_t)g->size);
		} else {
			emit_mov_imm64(j, AUX2, g->size);
			emit_rr(j, X_W, 0x39, AUX2, AUX);
		}
		emit_jump(j, CC_A, stub);
		return 0;
	}
	return -1;
}

/* ---- one instruction ------------------------------------------------------ */

/* Where a jump or a local call at @i with relative @rel lands, checked. */
static bool target_ok(const struct uxdp_bpf_code *code, uint32_t i,
		      int64_t rel, uint32_t *t)
{
	int64_t to = (int64_t)i + 1 + rel;

	if (to < 0 || to >= code->len)
		return false;
	/* Not into the second slot of a lddw. */
	if (to > 0 && code->insns[to - 1].code == (BPF_LD | BPF_IMM | BPF_DW))
		return false;
	*t = (uint32_t)to;
	return true;
}

/* ---- two instructions as one --------------------------------------------- */

static void mark(uint8_t *target, uint32_t len, uint32_t i, int64_t rel)
{
	int64_t to = (int64_t)i + 1 + rel;

	if (to >= 0 && to < len)
		target[to] = 1;
}

/* j->target: every instruction a jump or a bpf-to-bpf call may land on.
 * More than that (the internal jumps' offsets are taken as targets too)
 * only costs a fusion. */
static void mark_targets(struct jit *j)
{
	const struct uxdp_bpf_code *code = j->code;
	uint32_t i;

	for (i = 0; i < code->len; i++) {
		const struct bpf_insn *in = &code->insns[i];
		uint8_t cls = BPF_CLASS(in->code);

		if (cls != BPF_JMP && cls != BPF_JMP32)
			continue;
		if (in->code == (BPF_JMP | BPF_CALL)) {
			if (in->src_reg == BPF_PSEUDO_CALL)
				mark(j->target, code->len, i, in->imm);
			continue;
		}
		mark(j->target, code->len, i, in->off);
		if (in->code == (BPF_JMP32 | BPF_JA))
			mark(j->target, code->len, i, in->imm);
	}
}

/*
 * Instructions from @i on as one native sequence, when nothing lands on
 * any but the first: returns how many, or 0 when @i goes alone.
 *
 * Not the unaligned u16 load that the interpreter fuses
 * (uxdp_bpf_match_ld16()): as one u16 load it read two bytes the program
 * had stored one by one (macswap, run after run on one buffer), and the
 * store could not forward to the wider load: macswap's cost went from
 * 1.0 to 2.3 ns (uxdp-bench bpf, c11fa44). Byte loads cost the JIT little.
 *
 * mov dst, src; add dst, src2|imm is how clang computes a pointer or an
 * index (p = data + i; q = p + 1): one lea. In 32 bits too: lea's 32-bit
 * form keeps the low half of the sum, zero-extended, as alu32 does.
 */
static uint32_t emit_fused(struct jit *j, uint32_t i)
{
	const struct uxdp_bpf_code *code = j->code;
	struct uxdp_bpf_mov_add m;
	unsigned f;

	if (i + 1 >= code->len || j->target[i + 1] ||
	    !uxdp_bpf_match_mov_add(&code->insns[i], code->len - i, &m) ||
	    m.dst == m.src)
		return 0;
	f = m.alu64 ? X_W : 0;
	if (m.is_reg)
		emit_lea_rr(j, f, reg_map[m.dst], reg_map[m.src],
			    reg_map[m.reg]);
	else
		emit_rm(j, f, 0x8d, reg_map[m.dst], reg_map[m.src],
			m.imm);				/* sign-extended */
	return 2;
}

/* ---- what a bpf-to-bpf call saves ---------------------------------------- */

/* Whether the JIT's code for @in may call a C function (emit_call_abs):
 * a helper, and the internal instructions whose slow paths are C. Keep
 * it beside every emit_call_abs() user. */
static bool may_call_c(const struct bpf_insn *in)
{
	switch (in->code) {
	case BPF_JMP | BPF_CALL:
		return in->src_reg != BPF_PSEUDO_CALL;
	case UXDP_BPF_OP_CHECK:		/* jit_check_any */
	case UXDP_BPF_OP_THREAD:	/* jit_thread_index */
	case UXDP_BPF_OP_LDX_CTX:	/* jit_ctx_load */
	case UXDP_BPF_OP_TAIL_CALL:
		return true;
	}
	return false;
}

/* The r6..r9 that @in may write (CS_REGS bits). Every class but the
 * stores and the jumps writes its dst (the internal ldx_ctx and thread
 * too); an atomic with fetch, xchg included, writes its src. */
static uint8_t insn_writes(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), w = 0;

	if (cls != BPF_ST && cls != BPF_STX && cls != BPF_JMP &&
	    cls != BPF_JMP32 && in->dst_reg >= 6 && in->dst_reg <= 9)
		w |= (uint8_t)(1U << (in->dst_reg - 6));
	if (cls == BPF_STX && BPF_MODE(in->code) == BPF_ATOMIC &&
	    in->src_reg >= 6 && in->src_reg <= 9)
		w |= (uint8_t)(1U << (in->src_reg - 6));
	return w;
}

/*
 * What a call to @t saves: the union of insn_writes() and may_call_c()
 * over every instruction reachable from @t, following jumps, falling
 * through, into the functions it calls and past those calls, each path
 * ending at an exit. A superset of what the call can do (a callee's exit
 * ends the walk of the callee's path only), which is all that matters:
 * anything it cannot follow makes the answer everything.
 */
static uint8_t callee_saves(const struct uxdp_bpf_code *code, uint32_t t,
			    uint8_t *seen, uint32_t *stack)
{
	uint32_t sp = 0, i, to;
	uint8_t cs = 0;

	memset(seen, 0, code->len);
	stack[sp++] = t;
	seen[t] = 1;
	while (sp) {
		const struct bpf_insn *in;
		uint32_t next[2];
		unsigned nn = 0, k;
		uint8_t cls;

		i = stack[--sp];
		in = &code->insns[i];
		cls = BPF_CLASS(in->code);
		cs |= insn_writes(in);
		if (may_call_c(in))
			cs |= CS_C_CALL;
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			next[nn++] = i + 2;
		} else if (in->code == (BPF_JMP | BPF_EXIT)) {
			/* the path ends */
		} else if (in->code == (BPF_JMP | BPF_CALL) &&
			   in->src_reg == BPF_PSEUDO_CALL) {
			if (!target_ok(code, i, in->imm, &to))
				return CS_REGS | CS_C_CALL;
			next[nn++] = to;
			next[nn++] = i + 1;
		} else if (in->code == (BPF_JMP | BPF_JA) ||
			   in->code == (BPF_JMP32 | BPF_JA)) {
			if (!target_ok(code, i, cls == BPF_JMP ? in->off :
				       in->imm, &to))
				return CS_REGS | CS_C_CALL;
			next[nn++] = to;
		} else if ((cls == BPF_JMP || cls == BPF_JMP32) &&
			   in->code != (BPF_JMP | BPF_CALL) &&
			   in->code != UXDP_BPF_OP_CHECK &&
			   in->code != UXDP_BPF_OP_BUDGET &&
			   in->code != UXDP_BPF_OP_TAIL_CALL) {
			if (!target_ok(code, i, in->off, &to))
				return CS_REGS | CS_C_CALL;
			next[nn++] = to;
			next[nn++] = i + 1;
		} else {
			next[nn++] = i + 1;
		}
		for (k = 0; k < nn; k++) {
			if (next[k] >= code->len)
				return CS_REGS | CS_C_CALL;
			if (!seen[next[k]]) {
				seen[next[k]] = 1;
				stack[sp++] = next[k];
			}
		}
	}
	return cs;
}

/* j->call_save for every call target, when the calls need no depth test
 * (the pass proved it) and no tail call runs another program's code in
 * these frames; else it stays NULL (the five-push frame). */
static int plan_call_saves(struct jit *j)
{
	const struct uxdp_bpf_code *code = j->code;
	uint8_t *seen;
	uint32_t *stack, i, t;

	if (!j->local_calls || !code->depth_proven || j->tail_calls)
		return 0;
	j->call_save = calloc(code->len, 1);
	seen = malloc(code->len);
	stack = malloc(code->len * sizeof(*stack));
	if (!j->call_save || !seen || !stack) {
		free(seen);
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < code->len; i++) {
		const struct bpf_insn *in = &code->insns[i];

		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++;
			continue;
		}
		if (in->code != (BPF_JMP | BPF_CALL) ||
		    in->src_reg != BPF_PSEUDO_CALL)
			continue;
		if (!target_ok(code, i, in->imm, &t))
			continue;	/* emit_insn refuses it */
		if (!(j->call_save[t] & CS_DONE))	/* once a target */
			j->call_save[t] = callee_saves(code, t, seen,
						       stack) | CS_DONE;
	}
	free(seen);
	free(stack);
	return 0;
}

/* Emit instruction @i; *@slots is how many it takes (2 for lddw). On a
 * refusal, -1 with @why set. */
static int emit_insn(struct jit *j, uint32_t i, uint32_t *slots,
		     const char **why)
{
	const struct uxdp_bpf_code *code = j->code;
	const struct bpf_insn *in = &code->insns[i];
	uint8_t cls = BPF_CLASS(in->code);
	uint32_t t;

	*slots = emit_fused(j, i);
	if (*slots)
		return 0;
	*slots = 1;
	switch (in->code) {
	case UXDP_BPF_OP_LDX_CTX:
		emit_ldx_ctx(j, in);
		return 0;
	case UXDP_BPF_OP_CHECK:
		return emit_check(j, in, why);
	case UXDP_BPF_OP_THREAD:
		return emit_thread(j, in, why);
	case UXDP_BPF_OP_BUDGET:
		emit_budget(j);
		return 0;
	case UXDP_BPF_OP_TAIL_CALL:
		emit_tail_call(j);
		return 0;
	case BPF_LD | BPF_IMM | BPF_DW:
		if (in->src_reg) {
			*why = "lddw of a map or value the fixups left";
			return -1;
		}
		emit_mov_imm64(j, reg_map[in->dst_reg],
			       (uint64_t)(uint32_t)in[0].imm |
			       (uint64_t)(uint32_t)in[1].imm << 32);
		*slots = 2;
		return 0;
	case BPF_JMP | BPF_EXIT:
		emit_exit(j);
		return 0;
	case BPF_JMP | BPF_CALL:
		if (in->src_reg == BPF_PSEUDO_CALL) {
			if (!target_ok(code, i, in->imm, &t)) {
				*why = "call to outside the program";
				return -1;
			}
			emit_local_call(j, t);
			return 0;
		}
		if (in->src_reg) {
			*why = "kfunc call";
			return -1;
		}
		return emit_helper_call(j, in, why);
	case BPF_JMP | BPF_JA:
	case BPF_JMP32 | BPF_JA:
		if (!target_ok(code, i, cls == BPF_JMP ? in->off : in->imm,
			       &t)) {
			*why = "jump to outside the program";
			return -1;
		}
		if (t != i + 1)
			emit_insn_jump(j, CC_JMP, t);
		return 0;
	}
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (emit_alu(j, in) == 0)
			return 0;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (!target_ok(code, i, in->off, &t)) {
			*why = "jump to outside the program";
			return -1;
		}
		if (emit_cond_jmp(j, in, t) == 0)
			return 0;
		break;
	case BPF_LDX:
		if (emit_ldx(j, in) == 0)
			return 0;
		break;
	case BPF_ST:
		if (BPF_MODE(in->code) == BPF_MEM && emit_st(j, in) == 0)
			return 0;
		break;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_MEM) {
			emit_stx(j, in);
			return 0;
		}
		if (BPF_MODE(in->code) == BPF_ATOMIC &&
		    (BPF_SIZE(in->code) == BPF_W ||
		     BPF_SIZE(in->code) == BPF_DW) &&
		    emit_atomic(j, in) == 0)
			return 0;
		break;
	}
	/* insn_table.h has a row this switch does not: add it here too. */
	*why = "no JIT case for this opcode";
	return -1;
}

/* ---- passes --------------------------------------------------------------- */

static int insn_fail(const struct jit *j, uint32_t i, int err,
		     const char *why)
{
	const struct uxdp_bpf_code *code = j->code;
	char dis[96];

	uxdp_bpf_insn_str_at(code->insns, code->len, i, dis, sizeof(dis));
	return uxdp_fail(err, "prog %s: insn %u (%s): jit: %s",
			 code->name ? code->name : "?",
			 code->orig_idx ? code->orig_idx[i] : i, dis, why);
}

/* One pass over the program into naddrs (and image, on the last). */
static int jit_pass(struct jit *j)
{
	const struct uxdp_bpf_code *code = j->code;
	uint32_t i, s, slots;
	const char *why = NULL;

	j->pos = 0;
	j->n = 0;
	j->nsites = 0;
	j->overflow = false;
	emit_prologue(j);
	flush(j);
	for (i = 0; i < code->len; i += slots) {
		j->idx = i;
		if (emit_insn(j, i, &slots, &why))
			return insn_fail(j, i, EINVAL, why);
		if (j->pad) {
			uint32_t old = j->addrs[i] - insn_start(j, i);

			if (j->n < old)
				emit_nops(j, old - j->n);
		}
		if (j->overflow)
			return insn_fail(j, i, E2BIG, "native code too long");
		flush(j);
		for (s = 0; s < slots; s++)	/* a lddw's or a fusion's */
			j->naddrs[i + s] = j->pos;
		if (j->pos > JIT_MAX_IMAGE)
			return uxdp_fail(E2BIG, "prog %s: jit: image past %u "
					 "bytes", code->name ? code->name : "?",
					 JIT_MAX_IMAGE);
	}
	/* Past the last instruction (the safety pass does not allow it). */
	emit_mov_imm64(j, AUX2, UXDP_BPF_FAULT_INSN);
	emit_rr(j, 0, 0xc7, 0, AUX);
	emit4(j, code->len);
	flush(j);
	/* A fault: r10d = kind, r11d = index. */
	j->ncommon = j->pos;
	emit_rm(j, 0, 0x89, AUX2, RUN, RUN_OFF(fault));
	emit_rm(j, 0, 0x89, AUX, RUN, RUN_OFF(fault_pc));
	{
		uint32_t skip;

		/* A spent budget reads 0, not the wrapped count. */
		emit_alu_imm(j, 0, 7, AUX2, UXDP_BPF_FAULT_BUDGET);
		skip = emit_fwd8(j, CC_NE);
		emit_rm(j, X_W, 0xc7, 0, RUN, RUN_OFF(budget));
		emit4(j, 0);
		if (j->breg >= 0)	/* (the unwind after stores it) */
			emit_rr(j, 0, 0x31, j->breg, j->breg);
		patch8(j, skip);
	}
	emit_rr(j, 0, 0x31, RAX, RAX);
	flush(j);
	/* The unwind from any depth: rsp as the body's frame 0 had it (the
	 * prologue saved it when the code reads the run, as every way here
	 * does), then the return to the epilogue. */
	j->nunwind = j->pos;
	if (j->breg >= 0)
		emit_rm(j, X_W, 0x89, j->breg, RUN, RUN_OFF(budget));
	emit_rm(j, X_W, 0x8b, AUX, RUN, RUN_OFF(stack_hi));
	emit_rm(j, X_W, 0x8b, RSP, AUX, 0);
	emit1(j, 0xc3);
	flush(j);
	j->nstubs = j->pos;
	for (s = 0; s < j->nsites; s++) {
		emit1(j, 0x41);				/* mov r10d, kind */
		emit1(j, 0xb8 | (AUX2 & 7));
		emit4(j, j->site_kind[s]);
		emit1(j, 0x41);				/* mov r11d, pc */
		emit1(j, 0xb8 | (AUX & 7));
		emit4(j, j->site_pc[s]);
		emit1(j, 0xe9);
		emit4(j, (uint32_t)((int64_t)j->ncommon - (here(j) + 4)));
		flush(j);
	}
	if (j->overflow)
		return uxdp_fail(EFAULT, "prog %s: jit: the shared tail overflowed "
				 "(a bug)", code->name ? code->name : "?");
	if (j->pos > JIT_MAX_IMAGE)
		return uxdp_fail(E2BIG, "prog %s: jit: image past %u bytes",
				 code->name ? code->name : "?", JIT_MAX_IMAGE);
	return 0;
}

/* Whether this pass laid everything out where the previous one did. */
static bool settled(const struct jit *j)
{
	return !memcmp(j->addrs, j->naddrs, j->code->len * sizeof(*j->addrs)) &&
	       j->ocommon == j->ncommon && j->ounwind == j->nunwind &&
	       j->ostubs == j->nstubs;
}

static void next_pass(struct jit *j)
{
	uint32_t *t = j->addrs;

	j->addrs = j->naddrs;
	j->naddrs = t;
	j->ocommon = j->ncommon;
	j->ounwind = j->nunwind;
	j->ostubs = j->nstubs;
}

/* The prologue's length (with its epilogue): where the tail entry is. */
static uint32_t prologue_len(const struct jit *from)
{
	struct jit j = { .n = 0 };

	j.save = from->save;
	j.zero = from->zero;
	j.need_run = from->need_run;
	j.need_fp = from->need_fp;
	j.code = from->code;
	j.budgets = from->budgets;
	j.tail_calls = from->tail_calls;
	j.breg = from->breg;
	emit_prologue(&j);
	return j.pos + j.n;
}

int uxdp_bpf_jit_compile(struct uxdp_bpf_code *code,
			 struct uxdp_bpf_jit **out)
{
	struct jit j = { .code = code };
	struct uxdp_bpf_jit *jit = NULL;
	uint32_t i, slots, pass;
	const char *why;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), total;
	int err;

	*out = NULL;
	if (!code || !code->insns || !code->len)
		return uxdp_fail(EINVAL, "prog %s: jit: no instructions",
				 code && code->name ? code->name : "?");
	if (code->stack_size > UXDP_BPF_STACK)
		return uxdp_fail(EINVAL, "prog %s: jit: a stack of %u bytes, "
				 "more than %u", code->name ? code->name : "?",
				 code->stack_size, UXDP_BPF_STACK);
	if (code->len > UXDP_BPF_MAX_INSNS)
		return uxdp_fail(E2BIG, "prog %s: jit: %u instructions, more "
				 "than %u", code->name ? code->name : "?",
				 code->len, UXDP_BPF_MAX_INSNS);
	/* The fields every encoder relies on (registers 0..10 above all),
	 * by the RFC's rules: a shift by the width or more is masked here
	 * as the RFC says, so the kernel's refusal of it is not needed. */
	for (i = 0; i < code->len; i += slots) {
		slots = code->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) ?
			2 : 1;
		if (code->insns[i].code == UXDP_BPF_OP_TAIL_CALL)
			j.tail_calls = true;
		if (uxdp_bpf_insn_valid_ex(&code->insns[i], code->len - i,
					   UXDP_BPF_VALID_INTERNAL, &why))
			return insn_fail(&j, i, EINVAL, why);
	}
	j.addrs = calloc(code->len, sizeof(*j.addrs));
	j.naddrs = calloc(code->len, sizeof(*j.naddrs));
	j.site_kind = calloc(code->len, sizeof(*j.site_kind));
	j.site_pc = calloc(code->len, sizeof(*j.site_pc));
	j.target = calloc(code->len, sizeof(*j.target));
	jit = calloc(1, sizeof(*jit));
	if (!j.addrs || !j.naddrs || !j.site_kind || !j.site_pc ||
	    !j.target || !jit) {
		err = uxdp_fail(ENOMEM, "prog %s: jit: out of memory",
				code->name ? code->name : "?");
		goto fail;
	}
	/* The first pass's guess: every instruction as long as it may be. */
	mark_targets(&j);
	jit_frame(&j);
	if (plan_call_saves(&j)) {
		err = uxdp_fail(ENOMEM, "prog %s: jit: out of memory",
				code->name ? code->name : "?");
		goto fail;
	}
	j.prologue = prologue_len(&j);
	for (i = 0; i < code->len; i++)
		j.addrs[i] = j.prologue + (i + 1) * JIT_TMP;
	j.ocommon = j.addrs[code->len - 1] + 64;
	j.ounwind = j.ocommon + 64;
	j.ostubs = j.ounwind + 64;
	for (pass = 1; ; pass++) {
		j.pad = pass >= uxdp_bpf_jit_pad_pass;
		err = jit_pass(&j);
		if (err)
			goto fail;
		if (settled(&j))
			break;
		if (pass == JIT_PASSES) {
			err = uxdp_fail(EAGAIN, "prog %s: jit: the code size "
					"did not settle in %u passes",
					code->name ? code->name : "?",
					JIT_PASSES);
			goto fail;
		}
		next_pass(&j);
	}
	total = j.pos;
	jit->map_len = (total + page - 1) / page * page;
	jit->image = mmap(NULL, jit->map_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit->image == MAP_FAILED) {
		jit->image = NULL;
		err = uxdp_fail(errno, "prog %s: jit: mmap of %zu bytes: %s",
				code->name ? code->name : "?", jit->map_len,
				strerror(errno));
		goto fail;
	}
	/* int3 past the code, then the last pass, which must land every
	 * instruction where the settled one did. */
	memset(jit->image, 0xcc, jit->map_len);
	j.image = jit->image;
	err = jit_pass(&j);
	if (err)
		goto fail;
	if (!settled(&j) || j.pos != total || j.bad_jump) {
		err = uxdp_fail(EFAULT, "prog %s: jit: the last pass moved the "
				"code (a bug)", code->name ? code->name : "?");
		goto fail;
	}
	if (mprotect(jit->image, jit->map_len, PROT_READ | PROT_EXEC)) {
		err = uxdp_fail(errno, "prog %s: jit: mprotect: %s",
				code->name ? code->name : "?", strerror(errno));
		goto fail;
	}
	jit->code = code;
	jit->size = total;
	jit->addrs = j.addrs;
	jit->prologue = j.prologue;
	jit->passes = pass + 1;
	jit->entry = (uxdp_bpf_jit_fn)(void *)jit->image;
	jit->leaf = !j.need_run;
	jit->cur = j.helpers || j.tail_calls;
	jit->tail = j.tail;
	code->jit_tail_entry = jit->image + j.tail;
	free(j.naddrs);
	free(j.site_kind);
	free(j.site_pc);
	free(j.target);
	free(j.call_save);
	*out = jit;
	return 0;
fail:
	if (jit && jit->image)
		munmap(jit->image, jit->map_len);
	free(jit);
	free(j.addrs);
	free(j.naddrs);
	free(j.site_kind);
	free(j.site_pc);
	free(j.target);
	free(j.call_save);
	return err;
}

/* Every frame of a run, and above them the saved native rsp. */
struct jit_stack {
	uint8_t frames[UXDP_BPF_MAX_DEPTH * FRAME];
	uint64_t rsp;
} __attribute__((aligned(16)));

/* The code on the run's stack, with uxdp_bpf_cur while a helper may
 * run. */
static __attribute__((always_inline)) inline uint64_t
jit_enter(const struct uxdp_bpf_jit *jit, struct uxdp_bpf_run *run,
	  struct jit_stack *st, uint64_t r1, uint64_t r2)
{
	uint8_t *fp = st->frames + sizeof(st->frames);
	struct uxdp_bpf_run *prev;
	uint64_t r0;

	if (!jit->cur)
		return jit->entry(r1, r2, run, fp);
	prev = uxdp_bpf_cur;
	uxdp_bpf_cur = run;
	r0 = jit->entry(r1, r2, run, fp);
	uxdp_bpf_cur = prev;
	return r0;
}

uint64_t uxdp_bpf_jit_run(const struct uxdp_bpf_jit *jit,
			  struct uxdp_bpf_run *run, uint64_t r1, uint64_t r2)
{
	const struct uxdp_bpf_code *code = jit->code;
	struct jit_stack st;

	run->code = code;
	if (code->ctx_kind == UXDP_BPF_CTX_XDP) {
		run->ctx = (struct uxdp_buff *)(uintptr_t)r1;
		run->mem = NULL;
		run->mem_len = 0;
	} else {
		run->ctx = NULL;
		run->mem = (uint8_t *)(uintptr_t)r1;
		run->mem_len = r2;
	}
	run->budget = code->budget;
	run->tail_calls = 0;
	run->fault = UXDP_BPF_FAULT_NONE;
	run->fault_pc = 0;
	run->stack_lo = st.frames;
	run->stack_hi = st.frames + sizeof(st.frames);
	return jit_enter(jit, run, &st, r1, r2);
}

uint64_t uxdp_bpf_jit_run_xdp(const struct uxdp_bpf_jit *jit,
			      struct uxdp_bpf_run *run, struct uxdp_buff *ctx)
{
	struct jit_stack st;

	/* The prologue fills the run (emit_fill_run). */
	return jit_enter(jit, run, &st, (uint64_t)(uintptr_t)ctx, 0);
}

uxdp_bpf_jit_fn uxdp_bpf_jit_leaf(const struct uxdp_bpf_jit *jit)
{
	return jit && jit->leaf ? jit->entry : NULL;
}

size_t uxdp_bpf_jit_size(const struct uxdp_bpf_jit *jit)
{
	return jit ? jit->size : 0;
}

void uxdp_bpf_jit_free(struct uxdp_bpf_jit *jit)
{
	if (!jit)
		return;
	if (jit->code->jit_tail_entry == jit->image + jit->tail)
		jit->code->jit_tail_entry = NULL;
	munmap(jit->image, jit->map_len);
	free(jit->addrs);
	free(jit);
}

const void *uxdp_bpf_jit_image(const struct uxdp_bpf_jit *jit)
{
	return jit->image;
}

uint32_t uxdp_bpf_jit_insn_off(const struct uxdp_bpf_jit *jit, uint32_t idx)
{
	if (idx == 0)
		return jit->prologue;
	if (idx > jit->code->len)
		idx = jit->code->len;
	return jit->addrs[idx - 1];
}

unsigned uxdp_bpf_jit_passes(const struct uxdp_bpf_jit *jit)
{
	return jit->passes;
}

#else /* !__x86_64__ */

unsigned uxdp_bpf_jit_pad_pass = 10;

int uxdp_bpf_jit_compile(struct uxdp_bpf_code *code,
			 struct uxdp_bpf_jit **out)
{
	*out = NULL;
	return uxdp_fail(EOPNOTSUPP, "prog %s: jit: x86-64 only; the "
			 "interpreter runs it", code && code->name ?
			 code->name : "?");
}

uint64_t uxdp_bpf_jit_run(const struct uxdp_bpf_jit *jit,
			  struct uxdp_bpf_run *run, uint64_t r1, uint64_t r2)
{
	(void)jit;
	(void)r1;
	(void)r2;
	run->fault = UXDP_BPF_FAULT_INSN;
	run->fault_pc = 0;
	return 0;
}

uint64_t uxdp_bpf_jit_run_xdp(const struct uxdp_bpf_jit *jit,
			      struct uxdp_bpf_run *run, struct uxdp_buff *ctx)
{
	return uxdp_bpf_jit_run(jit, run, (uint64_t)(uintptr_t)ctx, 0);
}

uxdp_bpf_jit_fn uxdp_bpf_jit_leaf(const struct uxdp_bpf_jit *jit)
{
	(void)jit;
	return NULL;
}

size_t uxdp_bpf_jit_size(const struct uxdp_bpf_jit *jit)
{
	(void)jit;
	return 0;
}

void uxdp_bpf_jit_free(struct uxdp_bpf_jit *jit)
{
	(void)jit;
}

const void *uxdp_bpf_jit_image(const struct uxdp_bpf_jit *jit)
{
	(void)jit;
	return NULL;
}

uint32_t uxdp_bpf_jit_insn_off(const struct uxdp_bpf_jit *jit, uint32_t idx)
{
	(void)jit;
	(void)idx;
	return 0;
}

unsigned uxdp_bpf_jit_passes(const struct uxdp_bpf_jit *jit)
{
	(void)jit;
	return 0;
}

#endif /* __x86_64__ */
