/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bpf layer's own interfaces: what the loader hands the safety pass,
 * what the safety pass and the fixups hand the engines, and what an engine
 * run looks like. The public face is include/uxdp/bpf.h.
 *
 * The pipeline, one file a step:
 *
 *	loader.c	libbpf parses the ELF, BTF and maps (gen_loader: no
 *			bpf() call); programs by name, maps made here,
 *			global data; one struct uxdp_bpf_build per program
 *	check.c		the safety pass: what each instruction reads and
 *			writes, proven or not, with the reason a refusal names
 *	fixup.c		the rewrites both engines share (xdp_md loads, map
 *			and helper references, run-time checks, back-edge
 *			budget, tail calls): a struct uxdp_bpf_code; nothing
 *			edits a program after it
 *	interp.c	the reference engine
 *	jit_x86_64.c	the JIT; any failure to compile leaves the
 *			interpreter running
 *	helpers.c	helpers by id; map.c and map_<family>.c the maps
 *	insn.c		insn_table.h's expansions: validity, mnemonics,
 *			the disassembler; asm.c the assembler
 *	raw.c		a code straight from instructions, no safety pass:
 *			the conformance suite's and the ISA tests' path
 *
 * Nothing below the bpf layer knows it exists: a loaded program is an
 * ordinary struct uxdp_prog (src/xdp), its redirects the xdp layer's.
 */
#ifndef UXDP_BPF_INTERNAL_H
#define UXDP_BPF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <linux/bpf.h>		/* struct bpf_insn, BPF_* field values */

#include <uxdp/bpf.h>
#include <uxdp/buff.h>
#include <uxdp/xdp.h>

#include "insn_table.h"

/* ---- the ISA: what older UAPI headers lack (cpu v4) ----------------------- */

#define UXDP_BPF_MEMSX		0x80	/* LDX mode: sign-extending load */
#define UXDP_BPF_MAX_INSNS	(1U << 20)	/* the kernel's limit, too */
#define UXDP_BPF_STACK		512	/* bytes per frame */
#define UXDP_BPF_MAX_DEPTH	8	/* call frames, main included */
#define UXDP_BPF_MAX_TAIL_CALLS	33	/* MAX_TAIL_CALL_CNT */

/* One row of insn_table.h, by opcode byte (insn.c). */
struct uxdp_bpf_op {
	const char *mnemonic;	/* NULL: not an opcode */
	uint8_t group;		/* UXDP_BPF_G_* */
	uint16_t flags;		/* UXDP_BPF_F_* */
};
extern const struct uxdp_bpf_op uxdp_bpf_ops[256];

/*
 * Whether @insn (and, for lddw, the slot after it) has fields its row
 * allows: registers 0..10 (dst not 10 where written), the variants off or
 * imm may pick, the sizes of byte swaps, the unused fields zero. Internal
 * rows only with @internal. Returns 0, or -EINVAL with @why set to a short
 * reason ("unknown opcode 0x8d (callx)", "bad register r11").
 */
int uxdp_bpf_insn_valid(const struct bpf_insn *insn, size_t left,
			bool internal, const char **why);

/* The instruction in the conformance suite's spelling ("ldxw %r2,
 * [%r1+4]"); returns the length snprintf would. */
int uxdp_bpf_insn_str(const struct bpf_insn *insn, char *buf, size_t len);
/* The same for instruction @i of @n at @insns: a lddw that is the last
 * one is shown with a zero second half rather than read past the end. */
int uxdp_bpf_insn_str_at(const struct bpf_insn *insns, uint32_t n,
			 uint32_t i, char *buf, size_t len);

/*
 * The little-endian u16 load that clang writes where a field may be
 * unaligned (eth->h_proto, a MAC's halves), four instructions at insns:
 *
 *	ldxb	a, [p + k + 1]
 *	lsh32	a, 8
 *	ldxb	b, [p + k]
 *	or32	a, b
 *
 * with a neither p nor b: a = the u16 at p + k, b = its first byte. Both
 * engines run it as one step (insn.c). Returns whether insns[0..n) start
 * with it, and a, b, p, k.
 */
struct uxdp_bpf_ld16 {
	uint8_t a, b, p;
	int16_t k;
};
bool uxdp_bpf_match_ld16(const struct bpf_insn *insns, uint32_t n,
			 struct uxdp_bpf_ld16 *m);

/*
 * How clang computes a pointer or an index (p = data + i; q = p + 1), two
 * instructions at insns, both 64-bit or both 32-bit:
 *
 *	mov	dst, src
 *	add	dst, reg | imm
 *
 * that both engines run as one step (a lea in the JIT). Returns whether
 * insns[0..n) start with it, and in *m the width, dst, src and the add's
 * operand: the immediate, or the register it reads once the mov is done
 * (src when the add reads dst, which is src by then).
 */
struct uxdp_bpf_mov_add {
	bool alu64, is_reg;
	uint8_t dst, src, reg;
	int32_t imm;
};
bool uxdp_bpf_match_mov_add(const struct bpf_insn *insns, uint32_t n,
			    struct uxdp_bpf_mov_add *m);

/*
 * uxdp_bpf_insn_valid() with its rules chosen: UXDP_BPF_VALID_INTERNAL
 * allows the internal rows, UXDP_BPF_VALID_KERNEL adds the rules the
 * kernel's verifier keeps beyond RFC 9669 (a shift by an immediate of the
 * operand's width or more: the RFC masks it, the kernel refuses it).
 * uxdp_bpf_insn_valid() is both of them, internal as asked; the raw path
 * (raw.c) runs the conformance suite by the RFC alone.
 */
#define UXDP_BPF_VALID_INTERNAL	(1U << 0)
#define UXDP_BPF_VALID_KERNEL	(1U << 1)
int uxdp_bpf_insn_valid_ex(const struct bpf_insn *insn, size_t left,
			   uint32_t rules, const char **why);

/* The atomic operations by imm >> 4 ("add", "xchg", ...; NULL: none): the
 * disassembler's spelling and the assembler's. */
extern const char *const uxdp_bpf_atomic_names[16];

/* ---- internal instructions (group INTERNAL), made by fixup.c only -------- */

/*
 * ldx_ctx: dst = field imm of the XDP context in src (a struct uxdp_buff
 * pointer): the rewrite of a u32 load from struct xdp_md. One instruction
 * for one, so no jump moves.
 */
#define UXDP_BPF_OP_LDX_CTX	0xf9
enum uxdp_bpf_ctx_field {
	UXDP_BPF_CTX_DATA,		/* xdp_md.data: buff->data */
	UXDP_BPF_CTX_DATA_END,		/* data_end: buff->data_end */
	UXDP_BPF_CTX_DATA_META,		/* data_meta: buff->data_meta */
	UXDP_BPF_CTX_INGRESS_IFINDEX,	/* buff->rxq->ifindex */
	UXDP_BPF_CTX_RX_QUEUE_INDEX,	/* buff->rxq->queue_index */
	UXDP_BPF_CTX_EGRESS_IFINDEX,	/* the egress device's (0: none) */
	UXDP_BPF_CTX_NFIELDS,
};

/* What ldx_ctx loads: the one definition both engines use (the JIT inlines
 * the first three, calls this for the rest). */
static inline uint64_t uxdp_bpf_ctx_load(const struct uxdp_buff *b, int field)
{
	switch (field) {
	case UXDP_BPF_CTX_DATA:
		return (uint64_t)(uintptr_t)b->data;
	case UXDP_BPF_CTX_DATA_END:
		return (uint64_t)(uintptr_t)b->data_end;
	case UXDP_BPF_CTX_DATA_META:
		return (uint64_t)(uintptr_t)b->data_meta;
	case UXDP_BPF_CTX_INGRESS_IFINDEX:
		return b->rxq ? b->rxq->ifindex : 0;
	case UXDP_BPF_CTX_RX_QUEUE_INDEX:
		return b->rxq ? b->rxq->queue_index : 0;
	default:
		return 0;	/* egress: set for second-stage programs (part 2) */
	}
}

/*
 * check: the access of the next instruction, [dst + off, + size), must lie
 * in memory of the kind imm names; else the run ends (XDP_ABORTED, the
 * fault counted with this instruction's index). Inserted by fixup.c before
 * every access the safety pass could not prove.
 */
#define UXDP_BPF_OP_CHECK	0xf6
#define UXDP_BPF_CHECK_SIZE(imm)	((uint32_t)(imm) & 0xff)
#define UXDP_BPF_CHECK_KIND(imm)	(((uint32_t)(imm) >> 8) & 0xf)
#define UXDP_BPF_CHECK_WRITE		(1U << 12)
/* An atomic's check: the address must also be a multiple of the size. A
 * locked instruction across two cache lines takes a bus lock, which stalls
 * every CPU of the machine (and this kernel's split-lock mitigation makes
 * the process sleep): the kernel's verifier refuses misaligned atomics, so
 * no program it accepts does one. With kind 0 (bounds proven) the check is
 * of the alignment alone. */
#define UXDP_BPF_CHECK_ALIGN		(1U << 13)
#define UXDP_BPF_CHECK_REGION(imm)	((uint32_t)(imm) >> 16)
#define UXDP_BPF_CHECK_IMM(size, kind, write, region)			\
	((int32_t)((uint32_t)(size) | (uint32_t)(kind) << 8 |		\
		   ((write) ? UXDP_BPF_CHECK_WRITE : 0) |		\
		   (uint32_t)(region) << 16))
enum uxdp_bpf_mem_kind {
	UXDP_BPF_MEM_PKT = 1,	/* [data_meta, data_end) of the context now */
	UXDP_BPF_MEM_STACK,	/* the run's stack, every frame */
	UXDP_BPF_MEM_REGION,	/* code->regions[CHECK_REGION] */
	UXDP_BPF_MEM_RAW,	/* a raw run's memory (r1, r2 at entry) */
	UXDP_BPF_MEM_ANY,	/* any of the above (provenance unknown) */
};

/* thread: dst = the running thread's index, 0..UXDP_BPF_NR_CPUS-1 (what a
 * per-CPU map calls the CPU: xdp_thread_index()). In the inline lookup of
 * a PERCPU_ARRAY, as the kernel's BPF_MOV64_PERCPU_REG in its own. */
#define UXDP_BPF_OP_THREAD	0xe7

/* budget: one back edge taken; when the run's budget is spent it ends
 * (fault BUDGET). Before every backward jump. */
#define UXDP_BPF_OP_BUDGET	0xe6

/* tail_call: bpf_tail_call(ctx, r2 = prog array, r3 = index). A missing
 * slot or the 34th tail call of a run falls through (r0 unchanged), as the
 * kernel's; else the target runs from its start, in this frame, with r1. */
#define UXDP_BPF_OP_TAIL_CALL	0xf5

/* ---- helpers -------------------------------------------------------------- */

typedef uint64_t (*uxdp_bpf_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3,
				       uint64_t r4, uint64_t r5);

/* What the safety pass knows of an argument and of the result. */
enum uxdp_bpf_arg {
	UXDP_BPF_ARG_NONE,		/* not passed */
	UXDP_BPF_ARG_ANY,		/* any initialised value */
	UXDP_BPF_ARG_CTX,		/* the context pointer */
	UXDP_BPF_ARG_MAP,		/* a map (lddw src 5) */
	UXDP_BPF_ARG_KEY,		/* key_size readable bytes */
	UXDP_BPF_ARG_VALUE,		/* value_size readable bytes */
	UXDP_BPF_ARG_VALUE_WR,		/* value_size writable bytes (may be
					 * uninitialised: the helper fills) */
	UXDP_BPF_ARG_MEM,		/* readable, size in the next argument */
	UXDP_BPF_ARG_MEM_WR,		/* writable, size in the next argument */
	UXDP_BPF_ARG_SIZE,		/* the size of the one before */
};
enum uxdp_bpf_ret {
	UXDP_BPF_RET_INT,		/* a scalar */
	UXDP_BPF_RET_VALUE_OR_NULL,	/* a map value of arg 1's map, or 0 */
	UXDP_BPF_RET_VOID,		/* nothing: r0 not readable after */
};

#define UXDP_BPF_HELPER_UNWIND	(1U << 0)	/* 0 ends the run (r0 = 0):
						 * the conformance suite's
						 * helper 5 */

struct uxdp_bpf_helper {
	uint32_t id;			/* BPF_FUNC_* */
	const char *name;		/* "map_lookup_elem" */
	uxdp_bpf_helper_fn fn;
	uint8_t args[5];		/* enum uxdp_bpf_arg */
	uint8_t ret;			/* enum uxdp_bpf_ret */
	uint32_t flags;			/* UXDP_BPF_HELPER_* */
};

/* ---- code: what both engines run ----------------------------------------- */

/* Memory a program may reach besides its packet and stack: a map's value
 * area, a global-data section. */
struct uxdp_bpf_region {
	uint8_t *base;
	uint64_t size;
	bool rdonly;			/* .rodata, BPF_F_RDONLY_PROG */
};

enum uxdp_bpf_ctx_kind {
	UXDP_BPF_CTX_XDP,		/* r1 = struct uxdp_buff * */
	UXDP_BPF_CTX_RAW,		/* r1 = memory, r2 = its length */
};

/*
 * A program after fixups, immutable: the instructions (calls to helpers
 * have imm = an index into helpers[]; lddw of a map or a value has src 0
 * and the host address), where each came from, and what they may reach.
 */
struct uxdp_bpf_code {
	const char *name;
	struct bpf_insn *insns;
	uint32_t len;
	uint32_t *orig_idx;		/* index before fixups, per insn */
	const struct uxdp_bpf_helper **helpers;	/* call imm indexes it */
	uint32_t nhelpers;
	struct uxdp_bpf_region *regions;
	uint32_t nregions;
	uint32_t stack_size;		/* per frame, <= UXDP_BPF_STACK */
	enum uxdp_bpf_ctx_kind ctx_kind;
	uint64_t budget;		/* back edges per run */
	/* Set by whoever owns a code the safety pass accepted (prog.c):
	 * its bpf-to-bpf calls nest at most UXDP_BPF_MAX_DEPTH frames on
	 * every path (check_structure), so without tail calls the JIT needs
	 * no depth test at run time. A raw code (the conformance plugin's,
	 * no pass) keeps the test. */
	bool depth_proven;
	/* Set with it: the pass refused every read of a register before
	 * its first write (helpers' unused arguments are not read), so the
	 * JIT's prologue need not zero any to match the interpreter's start
	 * at 0. */
	bool init_proven;
	/* The JIT's, once compiled: an entry a tail call may jump to
	 * (past the prologue). NULL: interpreted. */
	void *jit_tail_entry;
	/* The interpreter's decoded form (uxdp_bpf_interp_prepare()),
	 * owned, freed with the code; NULL: decoded for each run. */
	void *interp;
};

/*
 * A program array, as a tail call sees it (part 2's PROG_ARRAY embeds it):
 * slots read with acquire, swapped under a grace period. All JIT or all
 * interpreted, checked when a slot is set.
 */
struct uxdp_bpf_prog_array {
	uint32_t max_entries;
	const struct uxdp_bpf_code **slots;
};

/* ---- a run ---------------------------------------------------------------- */

/* enum uxdp_bpf_fault (UXDP_BPF_FAULT_*) is public: <uxdp/bpf.h>, which
 * a program's info reports it through. */

/*
 * One run of a program on one thread. The engine entry points fill what
 * they need; a helper finds its run in uxdp_bpf_cur.
 */
struct uxdp_bpf_run {
	const struct uxdp_bpf_code *code;
	struct uxdp_buff *ctx;		/* XDP */
	uint8_t *mem;			/* RAW */
	uint64_t mem_len;
	uint8_t *stack_lo, *stack_hi;	/* for MEM_STACK checks */
	uint64_t budget;		/* back edges left */
	uint32_t tail_calls;
	/* On a fault: which, and where (the index after fixups; orig_idx
	 * gives the one before). */
	uint32_t fault;			/* enum uxdp_bpf_fault */
	uint32_t fault_pc;
};

/* Defined in interp.c; initial-exec, as UXDP_TLS_FAST (src/internal.h),
 * since helpers read it on every call. */
extern __thread struct uxdp_bpf_run *uxdp_bpf_cur
	__attribute__((tls_model("initial-exec")));

/*
 * The interpreter: r0 at exit, or 0 with run->fault set. The caller fills
 * run->code and the context (ctx for XDP, mem and mem_len for RAW); the
 * engine sets the rest (stack bounds, budget from code->budget, no tail
 * calls yet, no fault). The stack is the thread's own (interp.c), so a
 * thread runs one program at a time.
 */
uint64_t uxdp_bpf_interp_run(struct uxdp_bpf_run *run, uint64_t r1,
			     uint64_t r2);

/*
 * Decode @code once for the interpreter (code->interp): each instruction
 * as its row's label, its registers and operands, so a run dispatches
 * without decoding. A code not prepared is decoded for each run (and each
 * tail call into it); a run that cannot get the memory for that ends with
 * UXDP_BPF_FAULT_INSN at 0. 0 or -ENOMEM.
 */
int uxdp_bpf_interp_prepare(struct uxdp_bpf_code *code);

/* The JIT (x86-64 only: elsewhere compile returns -EOPNOTSUPP). */
struct uxdp_bpf_jit;
int uxdp_bpf_jit_compile(struct uxdp_bpf_code *code,
			 struct uxdp_bpf_jit **out);
uint64_t uxdp_bpf_jit_run(const struct uxdp_bpf_jit *jit,
			  struct uxdp_bpf_run *run, uint64_t r1, uint64_t r2);
size_t uxdp_bpf_jit_size(const struct uxdp_bpf_jit *jit);
void uxdp_bpf_jit_free(struct uxdp_bpf_jit *jit);

/* ---- from the loader to the engines: the safety pass and the fixups ------ */

/* A map as the safety pass and the fixups see it (the loader's own
 * struct holds the rest). */
struct uxdp_bpf_build_map {
	const char *name;
	uint32_t type;			/* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries;
	uint32_t map_flags;		/* BPF_F_*, the definition's */
	void *map;			/* the struct uxdp_bpf_map */
	void *lddw;			/* what lddw src 5 becomes (NULL: map) */
	uint8_t *values;		/* array-like: the value area, contiguous */
	uint64_t values_size;		/* max_entries * value_size (0: none) */
	bool rdonly;			/* the program may not write values */
	/* map is a struct uxdp_bpf_map whose family has an inline lookup
	 * (uxdp_bpf_map_build() says; a build of anything else, as the
	 * tests' stand-ins, leaves it false and the lookups calls). */
	bool gen_lookup;
	/* Its family's rcu_reader: a program using it runs as a reader. */
	bool rcu_reader;
	/* An of-map: 1 + the index in the build's maps of its inner map's
	 * definition (what a lookup's result is, after its null check);
	 * 0 for any other map (so a build's zeroed stand-ins have none). */
	uint32_t inner;
};

struct uxdp_bpf_check_stats {
	uint32_t accesses;		/* memory accesses in the program */
	uint32_t proven;		/* proven in bounds: no run-time check */
	uint32_t checked;		/* a check instruction before each */
	uint32_t back_edges;		/* budget instructions */
};

/* The largest value an array map holds: the kernel's KMALLOC_MAX_SIZE on
 * x86-64 (4 MiB), which array_map_alloc_check() enforces. */
#define UXDP_BPF_VALUE_MAX	(4U << 20)

#define UXDP_BPF_BUILD_F_V4	(1U << 0)	/* cpu v4 instructions allowed */
/* A DEVMAP second-stage program (BPF_XDP_DEVMAP): the only kind the kernel
 * lets read xdp_md.egress_ifindex. */
#define UXDP_BPF_BUILD_F_EGRESS	(1U << 1)
/* Multi-buffer (xdp.frags): a prog_array holds programs of one kind. */
#define UXDP_BPF_BUILD_F_FRAGS	(1U << 2)

struct uxdp_bpf_build {
	/* In. */
	const char *name;		/* program name, for every message */
	const struct bpf_insn *insns;	/* as libbpf linked them */
	uint32_t len;
	enum uxdp_bpf_ctx_kind ctx_kind;
	const struct uxdp_bpf_build_map *maps;	/* lddw src 5/6 imm indexes */
	uint32_t nmaps;
	/* The helpers this program may call: NULL for an id that is not
	 * one (the refusal names it from uxdp_bpf_helper_name()). */
	const struct uxdp_bpf_helper *(*helper)(uint32_t id);
	uint32_t flags;			/* UXDP_BPF_BUILD_F_* */
	uint64_t budget;		/* 0: the default */
	/* Out. */
	struct uxdp_bpf_code *code;
	struct uxdp_bpf_check_stats stats;
};

/*
 * The safety pass, then the fixups: @b->code on success (free it with
 * uxdp_bpf_code_free()), else -EINVAL (or -ENOMEM, -E2BIG) and
 * uxdp_errmsg() as "prog NAME: insn N (DISASSEMBLY): REASON".
 */
int uxdp_bpf_prepare(struct uxdp_bpf_build *b);
void uxdp_bpf_code_free(struct uxdp_bpf_code *code);

/* A helper's name by id for messages, known or not ("helper 999"). */
const char *uxdp_bpf_helper_name(uint32_t id, char *buf, size_t len);

/* ---- jit_x86_64.c: the JIT's reading of the run, and what it shows ------ */

/*
 * What uxdp_bpf_jit_run() does with a run (the interpreter agrees, and
 * the differential tests hold both to it):
 *
 * - It fills the run: code; ctx = r1 (XDP) or mem = r1, mem_len = r2
 *   (RAW), the other NULL/0 (the interpreter takes them from the caller:
 *   fill them the same); stack_lo/hi; budget = code->budget; tail_calls,
 *   fault and fault_pc 0. uxdp_bpf_cur is the run while it runs (the
 *   previous value after). r0 and r3..r9 start at 0 (the JIT zeroes
 *   those the code names, all of them when it tail-calls: no other can be
 *   read).
 * - Stack: one block of UXDP_BPF_MAX_DEPTH * UXDP_BPF_STACK bytes; r10
 *   starts at stack_hi and a bpf-to-bpf call moves it down by the calling
 *   code's stack_size. The contents at entry are unspecified. The call
 *   that would make a 9th frame faults DEPTH at the call. After a call,
 *   r6..r9 and r10 are the caller's, r1..r5 what the callee left, and
 *   run->code the caller's (a tail call in the callee changed it).
 * - check (kinds): PKT is [data_meta, data_end) when data_meta <= data,
 *   else [data, data_end), of run->ctx (an XDP program only: elsewhere it
 *   always faults); STACK the whole block above; RAW [mem, mem +
 *   mem_len); REGION code->regions[n] of the code running (a write to a
 *   read-only one faults); ANY any of these (the writable regions only,
 *   for a write). The end is computed without wrapping. A fault: fault =
 *   MEM, fault_pc = the check's index, r0 = 0.
 * - budget: run->budget is what is left; the budget instruction that
 *   finds it 0 faults BUDGET (so code->budget back edges are allowed),
 *   and the run ends with budget 0.
 * - A helper with UXDP_BPF_HELPER_UNWIND that returns 0 ends the run
 *   from any depth with r0 = 0 and no fault.
 * - tail_call: a NULL array, an index >= max_entries or tail_calls at
 *   UXDP_BPF_MAX_TAIL_CALLS fall through uncounted; else tail_calls goes
 *   up, and an empty slot, or a slot whose code has no jit_tail_entry,
 *   falls through (r0 unchanged). Otherwise run->code = the target and
 *   it runs from its first instruction in the same frame (r10), with the
 *   registers as they are (r1 the context). Its exit in frame 0 ends the
 *   run; deeper, it returns to the caller of the frame. The JIT cannot
 *   run an interpreted target, the interpreter runs any: an array is all
 *   one or the other (checked when a slot is set).
 * - Past the last instruction: fault INSN, fault_pc = len.
 *
 * Free a JIT before its code: uxdp_bpf_jit_free() clears the code's
 * jit_tail_entry if it is still this JIT's.
 */

/* The image, where instruction @idx starts in it (idx == len: the end of
 * the body), and how many passes compiling took (the last, writing one
 * included): for tests and `uxdp-bpf dump`. */
const void *uxdp_bpf_jit_image(const struct uxdp_bpf_jit *jit);
uint32_t uxdp_bpf_jit_insn_off(const struct uxdp_bpf_jit *jit, uint32_t idx);
unsigned uxdp_bpf_jit_passes(const struct uxdp_bpf_jit *jit);

/*
 * A run without a run: the image's entry when the code never reads the
 * run (no check, budget, call, tail call, nor a way past its last
 * instruction: nothing can fault or needs uxdp_bpf_cur), else NULL. Call
 * it as fn(r1, r2, NULL, fp) with fp the end of UXDP_BPF_STACK bytes of
 * stack (one frame: the code makes no calls); r0 is the result and
 * nothing can fault. For prog.c's fast path: the run a caller would
 * otherwise fill is never read.
 */
/*
 * prog.c's run of an XDP program: uxdp_bpf_jit_run() with the run filled
 * by the JIT's own prologue, as far as the code reads it (code, ctx, mem
 * = NULL, the stack, the budget and tail_calls if the code reads them,
 * fault and fault_pc); the rest (mem_len, an unread budget or tail_calls)
 * left as it was. Not for a leaf (uxdp_bpf_jit_leaf), which fills none.
 */
uint64_t uxdp_bpf_jit_run_xdp(const struct uxdp_bpf_jit *jit,
			      struct uxdp_bpf_run *run, struct uxdp_buff *ctx);

typedef uint64_t (*uxdp_bpf_jit_fn)(uint64_t r1, uint64_t r2,
				    struct uxdp_bpf_run *run, uint8_t *fp);
uxdp_bpf_jit_fn uxdp_bpf_jit_leaf(const struct uxdp_bpf_jit *jit);

/* From which pass an instruction that would shrink is padded with NOPs
 * instead, so that the sizes settle (10; tests lower it to run the
 * padded layouts). */
extern unsigned uxdp_bpf_jit_pad_pass;

/* ---- asm.c, raw.c: programs from text, run without the safety pass ------- */

/*
 * The conformance suite's assembler dialect (uBPF's), one instruction or
 * label a line: "mov32 %r0, 0", "ldxb %r0, [%r1+0x2]", "lddw %r0, 0x1122",
 * "lock fetch add32 [%r10-4], %r1", "jeq %r1, 3, +2" or a label ("name:";
 * "exit" names the first exit unless defined), "call 5", "call local NAME",
 * "call %r2" (callx: assembled, for the validity rules to refuse), "#"
 * comments. Every uxdp_bpf_insn_str() spelling assembles back to its
 * instruction, the internal rows' included. Mnemonics are the table's
 * (insn_table.h) with the suite's variants (sdiv, movsx832, le16, swap16,
 * add64, ...). Fields are range-checked, not validated: that is
 * uxdp_bpf_insn_valid()'s. 0 with *@insns (free()) and *@len, else -EINVAL
 * and uxdp_errmsg() "line N: REASON", or -ENOMEM.
 */
int uxdp_bpf_asm(const char *text, struct bpf_insn **insns, uint32_t *len);

/*
 * The suite's "-- raw" form: 64-bit instruction words in hex ("0x...18",
 * the word the instruction is in host order) or its bytes in memory order
 * as two-digit hex ("18 00 00 00 88 77 66 55"), mixed, "#" comments.
 * Returns as uxdp_bpf_asm().
 */
int uxdp_bpf_asm_raw(const char *text, struct bpf_insn **insns,
		     uint32_t *len);

/*
 * A code for the engines straight from instructions, with no safety pass
 * and no fixups: for the conformance suite and the ISA's own tests. What
 * the engines rely on is still checked: each instruction valid by the RFC
 * (UXDP_BPF_VALID_INTERNAL with UXDP_BPF_RAW_F_INTERNAL), every jump and
 * local call inside the program and not into a lddw, no lddw of a map, a
 * helper call only to UXDP_BPF_RAW_HELPER, the last instruction an exit or
 * a ja. The code is RAW (r1 = memory, r2 = its length), one 512-byte frame
 * a call, no regions, code->budget UXDP_BPF_RAW_BUDGET; a test may change
 * those fields before running it. Back edges are counted only at the
 * budget instructions the fixups insert, and a raw code has none: a loop
 * that never ends runs for ever here (uxdp-bpf run ends it with an alarm;
 * the budget is there for a test that puts budget rows in by hand).
 * Memory accesses are not checked either: run only trusted programs on
 * memory they may touch. 0 with *@out, else
 * -EINVAL and uxdp_errmsg() "prog NAME: insn N (DISASSEMBLY): REASON", or
 * -ENOMEM. Free with uxdp_bpf_raw_free().
 */
#define UXDP_BPF_RAW_F_INTERNAL	(1U << 0)	/* the internal rows too */
#define UXDP_BPF_RAW_HELPER	5	/* the suite's: r0 = r1, unwinds on 0 */
#define UXDP_BPF_RAW_BUDGET	(1ULL << 32)
int uxdp_bpf_raw_code(const char *name, const struct bpf_insn *insns,
		      uint32_t len, uint32_t flags,
		      struct uxdp_bpf_code **out);
void uxdp_bpf_raw_free(struct uxdp_bpf_code *code);

/* ---- check.c -> fixup.c: what the safety pass decided (check.c) --------- */

/* Back edges a run may take when the loader asks for no other budget:
 * as many as the kernel's verifier would walk instructions (its
 * BPF_COMPLEXITY_LIMIT_INSNS), so no loop it accepts runs out. */
#define UXDP_BPF_DEFAULT_BUDGET	(1ULL << 20)

#define UXDP_BPF_NO_REGION	UINT16_MAX	/* a map with no value area */

/* Per instruction of the program as loaded. */
struct uxdp_bpf_aux {
	uint16_t flags;		/* UXDP_BPF_AUX_* */
	uint8_t kind;		/* a memory access: 0 proven, else the
				 * check it needs (enum uxdp_bpf_mem_kind) */
	uint8_t ctx_field;	/* AUX_CTX: enum uxdp_bpf_ctx_field */
	uint16_t region;	/* kind REGION: index in code->regions */
	uint64_t key;		/* AUX_KEY: the lookup's key, its bytes */
};
#define UXDP_BPF_AUX_SEEN	(1U << 0)	/* reached by the analysis */
#define UXDP_BPF_AUX_MEM	(1U << 1)	/* a load, store or atomic */
#define UXDP_BPF_AUX_CTX	(1U << 2)	/* a u32 load from xdp_md */
#define UXDP_BPF_AUX_BACK	(1U << 3)	/* a backward jump */
#define UXDP_BPF_AUX_ALIGN	(1U << 4)	/* an atomic not proven aligned:
						 * checked (CHECK_ALIGN) */
/* A bpf_map_lookup_elem() of one map in every state (its index in
 * region): fixup.c puts the map family's inline lookup in its place. */
#define UXDP_BPF_AUX_LOOKUP	(1U << 5)
#define UXDP_BPF_AUX_NOLOOKUP	(1U << 6)	/* of another map too, or none */
/* The lookup's key is known: the same constant bytes (key_size, at most
 * 8, stored to the stack as one constant) in every state. KEYVAR: not in
 * some state, or another constant. */
#define UXDP_BPF_AUX_KEY	(1U << 7)
#define UXDP_BPF_AUX_KEYVAR	(1U << 8)

struct uxdp_bpf_facts {
	const struct uxdp_bpf_aux *aux;		/* b->len of them */
	const uint16_t *map_region;		/* per map, or NO_REGION */
	uint32_t nregions;
	uint32_t stack_size;	/* bytes below r10 any frame reaches */
};

/* The rewrites (fixup.c): b->code from b's instructions and the facts. */
int uxdp_bpf_fixup(struct uxdp_bpf_build *b, const struct uxdp_bpf_facts *f);

/* ==== loader.c, map.c, map_array.c, map_hash.c, helpers.c, prog.c ========= */

/* ---- maps: map.c, one file per family, map_types.h lists the types ------- */

/* Per-CPU maps have a value per uxdp thread index (uxdp_thread_index()). */
#define UXDP_BPF_NR_CPUS	UXDP_MAX_THREADS

struct uxdp_bpf_map;

/*
 * A map family (the kernel's struct bpf_map_ops), grouped by caller. Errors
 * are the kernel's for the same call, as negative errnos.
 */
struct uxdp_bpf_map_ops {
	size_t map_size;	/* the family's struct, struct uxdp_bpf_map first */
	/* Lookups hand out elements that a delete frees after a grace
	 * period: a program using the map runs inside a read-side section
	 * (bpf/prog.c), and the family's control-plane calls take one. */
	bool rcu_reader;

	/* The loader: whether the definition is one the family takes (the
	 * kernel's map_alloc_check: -EINVAL, -E2BIG with uxdp_fail()'s
	 * reason), then the storage, zeroed; free undoes alloc. */
	int (*map_alloc_check)(const struct uxdp_bpf_map *map);
	int (*map_alloc)(struct uxdp_bpf_map *map);
	void (*map_free)(struct uxdp_bpf_map *map);

	/* The control plane (uxdp_bpf_map_*; map.c checked the map is
	 * created and the caller may read or write). Per-CPU values in the
	 * user's layout (include/uxdp/bpf.h). */
	int (*map_lookup)(const struct uxdp_bpf_map *map, const void *key,
			  void *value, uint64_t flags);
	int (*map_update)(struct uxdp_bpf_map *map, const void *key,
			  const void *value, uint64_t flags);
	int (*map_delete)(struct uxdp_bpf_map *map, const void *key);
	int (*map_get_next_key)(const struct uxdp_bpf_map *map,
				const void *key, void *next_key);

	/* Programs (the helpers; fast path, any thread): this CPU's value
	 * for per-CPU maps. */
	void *(*map_lookup_elem)(struct uxdp_bpf_map *map, const void *key);
	long (*map_update_elem)(struct uxdp_bpf_map *map, const void *key,
				const void *value, uint64_t flags);
	long (*map_delete_elem)(struct uxdp_bpf_map *map, const void *key);

	/*
	 * Optional: map_lookup_elem as instructions (the kernel's
	 * map_gen_lookup), for fixup.c to put in place of the call: r1 = the
	 * map (as lddw src 5 gives it), r2 = the key; r0 = the value or 0;
	 * r1..r5 may be clobbered, as by a call. @key: NULL, or the key's
	 * key_size bytes when the safety pass knows them (the same in every
	 * state: the lookup may be folded for them). Writes at most
	 * UXDP_BPF_GEN_LOOKUP_MAX instructions and returns how many.
	 */
	uint32_t (*map_gen_lookup)(const struct uxdp_bpf_map *map,
				   const void *key, struct bpf_insn *insn);

	/* Optional: what lddw src 5 of the map gives a program, when not
	 * the map itself (a prog_array's struct uxdp_bpf_prog_array). */
	void *(*map_lddw)(struct uxdp_bpf_map *map);

	/* Redirect maps (map_redirect.c): bpf_redirect_map's verdict, the
	 * target set for the poll. */
	uint32_t (*map_redirect)(struct uxdp_bpf_map *map, uint32_t key,
				 uint64_t flags);

	/* Queues and stacks (map_queue.c): the helpers bpf_map_push_elem,
	 * _pop_elem and _peek_elem, with the kernel's results. */
	long (*map_push_elem)(struct uxdp_bpf_map *map, const void *value,
			      uint64_t flags);
	long (*map_pop_elem)(struct uxdp_bpf_map *map, void *value);
	long (*map_peek_elem)(struct uxdp_bpf_map *map, void *value);

	/* Optional: the control plane's lookup_and_delete (the kernel's
	 * BPF_MAP_LOOKUP_AND_DELETE_ELEM); NULL: -EOPNOTSUPP. */
	int (*map_lookup_and_delete)(struct uxdp_bpf_map *map,
				     const void *key, void *value,
				     uint64_t flags);
};
#define UXDP_BPF_GEN_LOOKUP_MAX	16

struct uxdp_bpf_map {
	const struct uxdp_bpf_map_ops *ops;	/* NULL: a type uxdp lacks */
	/* References: its object's (or uxdp_bpf_map_open()'s caller's),
	 * and every of-map slot that holds it. uxdp_bpf_map_free() puts. */
	uint32_t refcnt;
	uint32_t id;			/* once created; never reused */
	struct uxdp_bpf_map *id_next;	/* map.c's registry */
	/* An of-map's inner map definition: a handle with no storage, what
	 * every map put in it must match (the kernel's inner_map_meta). */
	struct uxdp_bpf_map *inner;
	char *name;
	uint32_t type;			/* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries;
	uint32_t map_flags;		/* BPF_F_* */
	uint32_t idx;			/* the object's, as lddw src 5/6 imm */
	bool internal;			/* global data */
	bool frozen;			/* the control plane may not write */
	bool created;			/* the storage exists */
	/* Array-like families: every value, contiguous (what the safety
	 * pass bounds an access through a value pointer to). */
	uint8_t *values;
	uint64_t values_size;
	/* Global data before load: the initial value (libbpf's buffer,
	 * loader.c); NULL otherwise. */
	void *init;
	size_t init_size;
};

/* libbpf's spelling of a map type ("percpu_hash"), or "type N" in @buf. */
const char *uxdp_bpf_map_type_str(uint32_t type, char *buf, size_t len);
/* The family's ops of @type, NULL if uxdp has none. */
const struct uxdp_bpf_map_ops *uxdp_bpf_map_type_ops(uint32_t type);
/* A map handle of @type (storage comes with uxdp_bpf_map_create). NULL:
 * out of memory. */
struct uxdp_bpf_map *uxdp_bpf_map_new(const char *name, uint32_t type,
				      uint32_t key_size, uint32_t value_size,
				      uint32_t max_entries, uint32_t map_flags);
/* Check the definition and allocate (and give it an id). -EOPNOTSUPP for
 * a type without ops. */
int uxdp_bpf_map_create(struct uxdp_bpf_map *map);
/* A reference more; uxdp_bpf_map_free() puts one (the last frees). */
struct uxdp_bpf_map *uxdp_bpf_map_get(struct uxdp_bpf_map *map);
/* A family's own inner map (of-maps' hash): no id, so the control plane
 * cannot reach it by uxdp_bpf_map_get_by_id(). */
void uxdp_bpf_map_unlist(struct uxdp_bpf_map *map);
void uxdp_bpf_map_free(struct uxdp_bpf_map *map);
/* What the safety pass and the fixups see of @map. */
void uxdp_bpf_map_build(struct uxdp_bpf_map *map,
			struct uxdp_bpf_build_map *out);
/* For fixup.c: the family's inline lookup of @m (0: none, call it). */
uint32_t uxdp_bpf_map_gen_lookup(const struct uxdp_bpf_build_map *m,
				 const void *key, struct bpf_insn *insn);

extern const struct uxdp_bpf_map_ops uxdp_bpf_array_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_percpu_array_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_hash_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_percpu_hash_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_lru_hash_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_lru_percpu_hash_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_prog_array_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_lpm_trie_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_array_of_maps_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_hash_of_maps_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_devmap_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_xskmap_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_devmap_hash_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_perf_event_array_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_ringbuf_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_queue_ops;
extern const struct uxdp_bpf_map_ops uxdp_bpf_stack_ops;

/*
 * A map's own lock for what cannot go without one (a ring buffer's
 * reserve, a queue's head and tail): the kernel's raw spin lock, held
 * for a copy. Unlike the kernel's, its holder can be preempted: a waiter
 * spins a while, then yields the CPU to it rather than burn its slice.
 */
struct uxdp_bpf_spinlock {
	uint32_t v;
};

static inline void uxdp_bpf_spin_init(struct uxdp_bpf_spinlock *l)
{
	l->v = 0;
}

void uxdp_bpf_spin_lock_slow(struct uxdp_bpf_spinlock *l);

static inline void uxdp_bpf_spin_lock(struct uxdp_bpf_spinlock *l)
{
	/* Acquire: what the last holder wrote under the lock is seen. */
	if (__builtin_expect(__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE),
			     0))
		uxdp_bpf_spin_lock_slow(l);
}

static inline void uxdp_bpf_spin_unlock(struct uxdp_bpf_spinlock *l)
{
	/* Release: what this holder wrote is seen by the next. */
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* bpf_ringbuf_output and bpf_ringbuf_query (map_ringbuf.c), the kernel's
 * results: output 0, -EINVAL (flags), -EAGAIN (no room). */
long uxdp_bpf_ringbuf_output(struct uxdp_bpf_map *map, const void *data,
			     uint64_t size, uint64_t flags);
uint64_t uxdp_bpf_ringbuf_query(struct uxdp_bpf_map *map, uint64_t flags);
/* bpf_ringbuf_reserve (the record, or NULL), _submit and _discard
 * (@discard); run_end: the records this thread's run left, discarded
 * (prog.c, when uxdp_bpf_rb_npending says there are any). */
void *uxdp_bpf_ringbuf_reserve(struct uxdp_bpf_map *map, uint64_t size,
			       uint64_t flags);
void uxdp_bpf_ringbuf_commit(void *data, uint64_t flags, bool discard);
extern __thread uint32_t uxdp_bpf_rb_npending;
void uxdp_bpf_ringbuf_run_end(const char *prog);

/*
 * bpf_perf_event_output (map_perf.c): @msize bytes at @meta, then @psize
 * at @pkt, as one sample into slot @index (BPF_F_CURRENT_CPU: this
 * thread's index) of PERF_EVENT_ARRAY @map. 0, or the kernel's errors:
 * -E2BIG (index past max_entries; uxdp's too: a record past perf's 64 KiB),
 * -ENOENT (no ring there), -EOPNOTSUPP (another CPU's ring), -ENOSPC (the
 * ring is full: counted as lost).
 */
/* The consumers' polls (map_perf.c, map_ringbuf.c): milliseconds of
 * CLOCK_MONOTONIC, and what poll(2) should wait of @timeout_ms (-1: for
 * ever) that ends at @deadline. */
static inline uint64_t uxdp_bpf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline int uxdp_bpf_ms_left(int timeout_ms, uint64_t deadline)
{
	uint64_t now;

	if (timeout_ms < 0)
		return -1;
	now = uxdp_bpf_now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

long uxdp_bpf_perf_output(struct uxdp_bpf_map *map, uint64_t index,
			  const void *meta, uint64_t msize, const void *pkt,
			  uint64_t psize);

/* bpf_redirect(ifindex, flags) (map_redirect.c): the verdict, the device
 * of @ifindex set as the poll's target. */
uint32_t uxdp_bpf_redirect_ifindex(uint32_t ifindex, uint64_t flags);

/* An array's get_next_key (every index; map_array.c), for every family
 * indexed by a u32 below max_entries. */
int uxdp_bpf_array_next_key(const struct uxdp_bpf_map *m, const void *key,
			    void *next_key);

/*
 * ThreadSanitizer sees none of liburcu's own ordering (the library is not
 * built for it): not the hand-off of retired memory to its call_rcu
 * thread, nor a lock-free table's publication of a node. Whoever hands
 * memory over releases it first; the callback (or the reader) acquires it.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define uxdp_tsan_release(p)	__tsan_release(p)
#define uxdp_tsan_acquire(p)	__tsan_acquire(p)
#else
#define uxdp_tsan_release(p)	do { (void)(p); } while (0)
#define uxdp_tsan_acquire(p)	do { (void)(p); } while (0)
#endif

/*
 * liburcu's call_rcu() for a family that retires memory with it: its
 * fork hooks installed once for the process (liburcu leaves that to the
 * application; without them a child's call_rcu thread is gone and its
 * retired memory never freed). 0, or a negative errno naming @map.
 */
int uxdp_bpf_rcu_prepare(const char *map);

/*
 * PROG_ARRAY (map_prog_array.c). claim: a loaded program of this kind
 * (engine, xdp.frags) tail-calls through @map: the first kind the map
 * sees is its owner's, any other -EINVAL (the kernel's bpf_map_owner; 0
 * for a map of another type). set: slot @idx holds @prog, a reference
 * taken over (NULL empties it; the old one is put after a grace period):
 * 0, -E2BIG, -EINVAL (not an eBPF program, or not the owner's kind),
 * -ENOMEM. clear: every slot emptied (the object's close).
 */
int uxdp_bpf_prog_array_claim(struct uxdp_bpf_map *map, const char *prog,
			      bool jit, bool frags);
int uxdp_bpf_prog_array_set(struct uxdp_bpf_map *map, uint32_t idx,
			    struct uxdp_prog *prog);
void uxdp_bpf_prog_array_clear(struct uxdp_bpf_map *map);

/* ---- helpers.c -------------------------------------------------------------- */

/* The helpers uxdp has (part 1), by id: what struct uxdp_bpf_build's
 * helper callback is. NULL for any other id. */
const struct uxdp_bpf_helper *uxdp_bpf_helper_get(uint32_t id);
/*
 * bpf_csum_diff's rule (helpers.c): the kernel's before 6.13, a 32-bit
 * csum_partial() of ~from then to (sizes multiples of 4, at most 512 in
 * all); since, folded to 16 bits with no rule on the sizes. The running
 * kernel's by default, or UXDP_BPF_CSUM_DIFF=partial32|fold16. @rule one
 * of them sets it (tests); any other value only reads it.
 */
enum { UXDP_BPF_CSUM_PARTIAL32 = 1, UXDP_BPF_CSUM_FOLD16 };
int uxdp_bpf_csum_diff_rule(int rule);

/* Why helper @id is refused, for a message: "not supported until part 2
 * of issue 14", "needs kernel state uxdp does not have", ... */
const char *uxdp_bpf_helper_why(uint32_t id);

/* ---- loader.c and prog.c ------------------------------------------------------ */

struct uxdp_bpf_object;
/* Objects are counted: the user's handle and every loaded program. */
void uxdp_bpf_object_get(struct uxdp_bpf_object *obj);
void uxdp_bpf_object_put(struct uxdp_bpf_object *obj);

/*
 * A loaded program from a prepared build (b->code, taken over: freed with
 * the program, also on failure): the engine chosen, a struct uxdp_prog
 * holding a reference on @obj, in *@out. @linked is the instruction count
 * as linked. Returns 0, -EOPNOTSUPP (the JIT asked for and none), -ENOMEM.
 */
int uxdp_bpf_prog_new(struct uxdp_bpf_object *obj, struct uxdp_bpf_build *b,
		      uint32_t engine, uint32_t linked,
		      struct uxdp_prog **out);

/* The JIT's compile as uxdp_bpf_prog_new() calls it: tests put a refusal
 * here to see the default engine fall back to the interpreter. */
extern int (*uxdp_bpf_prog_jit_compile)(struct uxdp_bpf_code *code,
					struct uxdp_bpf_jit **out);

/* A program of an object as linked, for tests and tools: the instructions
 * with lddw src 5/6 map references (NULL before load). */
const struct bpf_insn *uxdp_bpf_program_insns(const struct uxdp_bpf_program *p,
					      uint32_t *len);

/* A loaded eBPF program's code after the fixups (what the engines run),
 * for tools: NULL if @prog is no eBPF program. */
const struct uxdp_bpf_code *uxdp_bpf_prog_code(const struct uxdp_prog *prog);

/* For a prog_array: @prog's code and kind (JIT or interpreted, xdp.frags),
 * NULL if it is no eBPF program. */
const struct uxdp_bpf_code *uxdp_bpf_prog_kind(const struct uxdp_prog *prog,
					       bool *jit, bool *frags);

/* ---- kverify.c: UXDP_BPF_F_KERNEL_VERIFY --------------------------------- */

/*
 * Put program @name (@insns as linked: maps as lddw src 5/6 by index into
 * @maps) to the running kernel's verifier as an XDP program of
 * @attach_type (@section "xdp.frags...": with frags), its maps created in
 * the kernel as @maps define them. 0 if the kernel accepts it; -EINVAL if
 * its verifier refuses it (the reason from its log in uxdp_errmsg(), the
 * whole log through the print callback); -EPERM without CAP_BPF; other
 * errors (a map the kernel cannot create, -ENOMEM) as they come;
 * -EOPNOTSUPP without libbpf. Nothing stays in the kernel.
 */
int uxdp_bpf_kverify(const char *name, const char *section,
		     uint32_t attach_type, const struct bpf_insn *insns,
		     uint32_t len, const struct uxdp_bpf_build_map *maps,
		     uint32_t nmaps);

/*
 * The verifier's reason in its @log: the last line that is not one of the
 * statistics it ends with (@log is cut there). Also for the kernel tests.
 */
const char *uxdp_bpf_kverify_reason(char *log);

#endif /* UXDP_BPF_INTERNAL_H */
