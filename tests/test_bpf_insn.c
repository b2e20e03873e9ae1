/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ISA on its own (src/bpf/insn_table.h and what expands it): every row
 * through the interpreter with edge values and RFC 9669's results (division
 * by zero, signed modulo, 32-bit zeroing, movsx, byte swaps, atomics, every
 * jump taken and not), calls and their depth, the internal rows (each check
 * kind passing and failing, the budget, tail calls and their limit), an
 * opcode no row has; the assembler (every row's disassembly assembles back
 * to it, the suite's spellings, its errors); the validity rules' refusals.
 */
#include "t_helpers.h"

#include <pthread.h>

#include <uxdp/driver.h>

#include "t_bpf.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Opcodes some case ran, for the "every row" check at the end. */
static bool seen[256];

static void mark_seen(const struct uxdp_bpf_code *code)
{
	uint32_t i;

	for (i = 0; i < code->len; i++) {
		seen[code->insns[i].code] = true;
		if (uxdp_bpf_ops[code->insns[i].code].flags & UXDP_BPF_F_WIDE)
			i++;
	}
}

/* A raw code of @text, internal rows allowed; fails the test if refused. */
static struct uxdp_bpf_code *code_of(const char *text)
{
	struct uxdp_bpf_code *code = NULL;

	if (t_bpf_asm_code("t", text, UXDP_BPF_RAW_F_INTERNAL, &code)) {
		print_error("%s\n--\n%s\n", uxdp_errmsg(), text);
		fail();
	}
	mark_seen(code);
	return code;
}

/* Memory every case gets as r1 (r2 = 64): byte i is 0x80 | i. */
#define MEM_LEN 64
static uint8_t mem[MEM_LEN];

static void mem_reset(void)
{
	unsigned int i;

	for (i = 0; i < MEM_LEN; i++)
		mem[i] = (uint8_t)(0x80 | i);
}

static uint64_t run_code(struct uxdp_bpf_code *code, struct uxdp_bpf_run *run,
			 uint64_t r1, uint64_t r2)
{
	memset(run, 0, sizeof(*run));
	run->code = code;
	run->mem = mem;
	run->mem_len = MEM_LEN;
	return uxdp_bpf_interp_run(run, r1, r2);
}

/* ---- every row, by case ---------------------------------------------------- */

struct insn_case {
	const char *name;
	const char *text;
	uint64_t r0;
};

/* Programs that check as they go end on these two: r0 1 or 0. */
#define OK_FAIL "mov %r0, 1\nexit\nfail:\nmov %r0, 0\nexit\n"

static const struct insn_case cases[] = {
	/* ---- ALU64 and ALU, add/sub/mul ---- */
	{ "ALU64_ADD_K: wraps", "lddw %r0, -1\nadd %r0, 1\nexit", 0 },
	{ "ALU64_ADD_K: imm sign-extended", "mov %r0, 0\nadd %r0, -1\nexit",
	  0xffffffffffffffffULL },
	{ "ALU64_ADD_X: into the sign bit",
	  "lddw %r0, 0x7fffffffffffffff\nmov %r1, 1\nadd %r0, %r1\nexit",
	  0x8000000000000000ULL },
	{ "ALU_ADD_K: wraps, upper half zeroed",
	  "lddw %r0, 0xffffffff00000001\nadd32 %r0, -1\nexit", 0 },
	{ "ALU_ADD_X: upper halves ignored",
	  "lddw %r0, 0x12345678ffffffff\nlddw %r1, 0x100000002\n"
	  "add32 %r0, %r1\nexit", 1 },
	{ "ALU64_SUB_K: below zero", "mov %r0, 0\nsub %r0, 1\nexit",
	  0xffffffffffffffffULL },
	{ "ALU64_SUB_X", "mov %r0, 5\nmov %r1, 7\nsub %r0, %r1\nexit",
	  0xfffffffffffffffeULL },
	{ "ALU_SUB_K: 32-bit wrap", "mov %r0, 0\nsub32 %r0, 1\nexit",
	  0xffffffffULL },
	{ "ALU_SUB_X: upper half zeroed",
	  "lddw %r0, 0xffffffff00000005\nmov %r1, 7\nsub32 %r0, %r1\nexit",
	  0xfffffffeULL },
	{ "ALU64_MUL_K: both halves", "lddw %r0, 0x100000001\nmul %r0, 3\n"
	  "exit", 0x300000003ULL },
	{ "ALU64_MUL_K: negative imm", "mov %r0, 3\nmul %r0, -2\nexit",
	  0xfffffffffffffffaULL },
	{ "ALU64_MUL_X: overflow wraps",
	  "lddw %r0, 0x8000000000000001\nmov %r1, 2\nmul %r0, %r1\nexit", 2 },
	{ "ALU_MUL_K: low half only",
	  "lddw %r0, 0xffffffff80000001\nmul32 %r0, 2\nexit", 2 },
	{ "ALU_MUL_X: 2^16 * 2^16 is 0",
	  "mov %r0, 0x10000\nmov %r1, 0x10000\nmul32 %r0, %r1\nexit", 0 },
	/* ---- division: unsigned, signed, by zero ---- */
	{ "ALU64_DIV_K", "mov %r0, 100\ndiv %r0, 7\nexit", 14 },
	{ "ALU64_DIV_K: imm -1 is 2^64-1", "lddw %r0, -1\ndiv %r0, -1\nexit",
	  1 },
	{ "ALU64_DIV_K: by 2^64-1", "mov %r0, 100\ndiv %r0, -1\nexit", 0 },
	{ "ALU64_DIV_K: by zero is 0", "mov %r0, 100\ndiv %r0, 0\nexit", 0 },
	{ "ALU64_DIV_X: by zero is 0",
	  "mov %r0, 100\nmov %r1, 0\ndiv %r0, %r1\nexit", 0 },
	{ "ALU_DIV_K: unsigned", "mov32 %r0, -1\ndiv32 %r0, 2\nexit",
	  0x7fffffffULL },
	{ "ALU_DIV_X: low halves",
	  "lddw %r0, 0x100000064\nmov %r1, 10\ndiv32 %r0, %r1\nexit", 10 },
	{ "ALU_DIV_X: a divisor of 2^32 is 0",
	  "mov %r0, 100\nlddw %r1, 0x100000000\ndiv32 %r0, %r1\nexit", 0 },
	{ "ALU_DIV_X: by zero is 0, upper half too",
	  "lddw %r0, -1\nmov %r1, 0\ndiv32 %r0, %r1\nexit", 0 },
	{ "ALU64_SDIV_X: truncates toward zero",
	  "mov %r0, -7\nmov %r1, 2\nsdiv %r0, %r1\nexit",
	  0xfffffffffffffffdULL },
	{ "ALU64_SDIV_K: negative divisor", "mov %r0, 7\nsdiv %r0, -2\nexit",
	  0xfffffffffffffffdULL },
	{ "ALU64_SDIV_K: INT64_MIN / -1 is INT64_MIN",
	  "lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit",
	  0x8000000000000000ULL },
	{ "ALU64_SDIV_X: by zero is 0",
	  "mov %r0, -7\nmov %r1, 0\nsdiv %r0, %r1\nexit", 0 },
	{ "ALU_SDIV_K: 32-bit signed", "mov32 %r0, -7\nsdiv32 %r0, 2\nexit",
	  0xfffffffdULL },
	{ "ALU_SDIV_K: INT32_MIN / -1, upper half zeroed",
	  "lddw %r0, 0xffffffff80000000\nsdiv32 %r0, -1\nexit",
	  0x80000000ULL },
	{ "ALU_SDIV_X: by zero is 0",
	  "lddw %r0, -1\nmov %r1, 0\nsdiv32 %r0, %r1\nexit", 0 },
	{ "ALU64_MOD_K", "mov %r0, 100\nmod %r0, 7\nexit", 2 },
	{ "ALU64_MOD_K: by 2^64-1", "mov %r0, 5\nmod %r0, -1\nexit", 5 },
	{ "ALU64_MOD_X: by zero leaves dst",
	  "mov %r0, -5\nmov %r1, 0\nmod %r0, %r1\nexit",
	  0xfffffffffffffffbULL },
	{ "ALU_MOD_K: unsigned", "mov32 %r0, -1\nmod32 %r0, 10\nexit", 5 },
	{ "ALU_MOD_X: by zero leaves dst, upper half zeroed",
	  "lddw %r0, 0xffffffff00000005\nmov %r1, 0\nmod32 %r0, %r1\nexit",
	  5 },
	{ "ALU64_SMOD_X: the dividend's sign",
	  "mov %r0, -7\nmov %r1, 2\nsmod %r0, %r1\nexit",
	  0xffffffffffffffffULL },
	{ "ALU64_SMOD_K: negative divisor", "mov %r0, 7\nsmod %r0, -2\nexit",
	  1 },
	{ "ALU64_SMOD_X: INT64_MIN % -1 is 0",
	  "lddw %r0, 0x8000000000000000\nmov %r1, -1\nsmod %r0, %r1\nexit",
	  0 },
	{ "ALU64_SMOD_K: by zero leaves dst", "mov %r0, -7\nsmod %r0, 0\nexit",
	  0xfffffffffffffff9ULL },
	{ "ALU_SMOD_K: 32-bit", "mov32 %r0, -7\nsmod32 %r0, 2\nexit",
	  0xffffffffULL },
	{ "ALU_SMOD_K: INT32_MIN % -1 is 0",
	  "mov32 %r0, 0x80000000\nsmod32 %r0, -1\nexit", 0 },
	{ "ALU_SMOD_X: by zero leaves dst, upper half zeroed",
	  "lddw %r0, 0xfffffffffffffff9\nmov %r1, 0\nsmod32 %r0, %r1\nexit",
	  0xfffffff9ULL },
	/* ---- bitwise ---- */
	{ "ALU64_OR_K: imm sign-extended", "mov %r0, 0\nor %r0, -2\nexit",
	  0xfffffffffffffffeULL },
	{ "ALU64_OR_X", "mov %r0, 0xf0\nmov %r1, 0x0f\nor %r0, %r1\nexit",
	  0xff },
	{ "ALU_OR_K: upper half zeroed",
	  "lddw %r0, 0xffffffff00000001\nor32 %r0, 2\nexit", 3 },
	{ "ALU_OR_X", "lddw %r0, 0xffffffff00000001\nlddw %r1, 0xff00000002\n"
	  "or32 %r0, %r1\nexit", 3 },
	{ "ALU64_AND_K: imm sign-extended", "lddw %r0, -1\nand %r0, -16\nexit",
	  0xfffffffffffffff0ULL },
	{ "ALU64_AND_X", "lddw %r0, 0xff00ff00ff00ff00\nlddw %r1, "
	  "0x0ff00ff00ff00ff0\nand %r0, %r1\nexit", 0x0f000f000f000f00ULL },
	{ "ALU_AND_K: upper half zeroed", "lddw %r0, -1\nand32 %r0, 0xf0\n"
	  "exit", 0xf0 },
	{ "ALU_AND_X", "lddw %r0, -1\nmov %r1, -1\nand32 %r0, %r1\nexit",
	  0xffffffffULL },
	{ "ALU64_XOR_K: imm sign-extended", "mov %r0, 1\nxor %r0, -1\nexit",
	  0xfffffffffffffffeULL },
	{ "ALU64_XOR_X", "lddw %r0, 0x123456789abcdef0\nmov %r1, %r0\n"
	  "xor %r0, %r1\nexit", 0 },
	{ "ALU_XOR_K: upper half zeroed", "lddw %r0, -1\nxor32 %r0, 1\nexit",
	  0xfffffffeULL },
	{ "ALU_XOR_X", "lddw %r0, 0x1ffffffff\nmov %r1, 0x0f\nxor32 %r0, %r1\n"
	  "exit", 0xfffffff0ULL },
	/* ---- shifts: counts masked to the width (RFC), K and X ---- */
	{ "ALU64_LSH_K: to the top bit", "mov %r0, 1\nlsh %r0, 63\nexit",
	  0x8000000000000000ULL },
	{ "ALU64_LSH_X: count masked to 63",
	  "mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit", 2 },
	{ "ALU_LSH_K: upper half zeroed",
	  "lddw %r0, 0xffffffff00000001\nlsh32 %r0, 31\nexit",
	  0x80000000ULL },
	{ "ALU_LSH_K: count masked to 31", "mov %r0, 1\nlsh32 %r0, 33\nexit",
	  2 },
	{ "ALU_LSH_X: count masked to 31",
	  "mov %r0, 1\nmov %r1, 33\nlsh32 %r0, %r1\nexit", 2 },
	{ "ALU64_RSH_K: logical", "lddw %r0, 0x8000000000000000\nrsh %r0, 63\n"
	  "exit", 1 },
	{ "ALU64_RSH_X: count masked", "lddw %r0, 0x8000000000000000\n"
	  "mov %r1, 127\nrsh %r0, %r1\nexit", 1 },
	{ "ALU_RSH_K: logical, upper half gone",
	  "lddw %r0, 0xffffffff80000000\nrsh32 %r0, 31\nexit", 1 },
	{ "ALU_RSH_X: count masked", "mov32 %r0, 0x80000000\nmov %r1, 63\n"
	  "rsh32 %r0, %r1\nexit", 1 },
	{ "ALU64_ARSH_K: sign fills", "lddw %r0, 0x8000000000000000\n"
	  "arsh %r0, 63\nexit", 0xffffffffffffffffULL },
	{ "ALU64_ARSH_X: count masked", "lddw %r0, 0x8000000000000000\n"
	  "mov %r1, 68\narsh %r0, %r1\nexit", 0xf800000000000000ULL },
	{ "ALU_ARSH_K: the low half's sign, upper half zeroed",
	  "mov32 %r0, 0x80000000\narsh32 %r0, 31\nexit", 0xffffffffULL },
	{ "ALU_ARSH_X", "lddw %r0, 0x180000000\nmov %r1, 4\narsh32 %r0, %r1\n"
	  "exit", 0xf8000000ULL },
	{ "ALU64_NEG: of 1", "mov %r0, 1\nneg %r0\nexit",
	  0xffffffffffffffffULL },
	{ "ALU64_NEG: INT64_MIN stays", "lddw %r0, 0x8000000000000000\n"
	  "neg %r0\nexit", 0x8000000000000000ULL },
	{ "ALU_NEG: upper half zeroed", "lddw %r0, 0xffffffff00000001\n"
	  "neg32 %r0\nexit", 0xffffffffULL },
	/* ---- moves and sign extension ---- */
	{ "ALU64_MOV_K: imm sign-extended", "mov %r0, -1\nexit",
	  0xffffffffffffffffULL },
	{ "ALU_MOV_K: zero-extended", "mov32 %r0, -1\nexit", 0xffffffffULL },
	{ "ALU64_MOV_X", "lddw %r1, 0x123456789abcdef0\nmov %r0, %r1\nexit",
	  0x123456789abcdef0ULL },
	{ "ALU_MOV_X: low half", "lddw %r1, 0x123456789abcdef0\n"
	  "mov32 %r0, %r1\nexit", 0x9abcdef0ULL },
	{ "ALU64_MOVSX_X: 8 bits", "mov %r1, 0x80\nmovsx864 %r0, %r1\nexit",
	  0xffffffffffffff80ULL },
	{ "ALU64_MOVSX_X: 16 bits", "mov %r1, 0x18000\nmovsx1664 %r0, %r1\n"
	  "exit", 0xffffffffffff8000ULL },
	{ "ALU64_MOVSX_X: 32 bits", "lddw %r1, 0x180000000\n"
	  "movsx3264 %r0, %r1\nexit", 0xffffffff80000000ULL },
	{ "ALU64_MOVSX_X: positive stays", "mov %r1, 0x17f\n"
	  "movsx864 %r0, %r1\nexit", 0x7f },
	{ "ALU_MOVSX_X: 8 bits into 32", "mov %r1, 0x180\nmovsx832 %r0, %r1\n"
	  "exit", 0xffffff80ULL },
	{ "ALU_MOVSX_X: 16 bits into 32", "lddw %r1, 0xffffffff00008000\n"
	  "movsx1632 %r0, %r1\nexit", 0xffff8000ULL },
	/* ---- byte swaps (little-endian host) ---- */
	{ "ALU_END_TO_LE: 16", "lddw %r0, 0x1122334455667788\nle16 %r0\nexit",
	  0x7788 },
	{ "ALU_END_TO_LE: 32", "lddw %r0, 0x1122334455667788\nle32 %r0\nexit",
	  0x55667788 },
	{ "ALU_END_TO_LE: 64", "lddw %r0, 0x1122334455667788\nle64 %r0\nexit",
	  0x1122334455667788ULL },
	{ "ALU_END_TO_BE: 16", "lddw %r0, 0x1122334455667788\nbe16 %r0\nexit",
	  0x8877 },
	{ "ALU_END_TO_BE: 32", "lddw %r0, 0x1122334455667788\nbe32 %r0\nexit",
	  0x88776655 },
	{ "ALU_END_TO_BE: 64", "lddw %r0, 0x1122334455667788\nbe64 %r0\nexit",
	  0x8877665544332211ULL },
	{ "ALU64_BSWAP: 16", "lddw %r0, 0x1122334455667788\nbswap16 %r0\n"
	  "exit", 0x8877 },
	{ "ALU64_BSWAP: 32", "lddw %r0, 0x1122334455667788\nbswap32 %r0\n"
	  "exit", 0x88776655 },
	{ "ALU64_BSWAP: 64", "lddw %r0, 0x1122334455667788\nbswap64 %r0\n"
	  "exit", 0x8877665544332211ULL },
	/* ---- lddw, ja, ja32, exit ---- */
	{ "LD_IMM_DW: both halves", "lddw %r0, 0x8000000000000001\nexit",
	  0x8000000000000001ULL },
	{ "LD_IMM_DW: into another register",
	  "lddw %r9, 0xfedcba9876543210\nmov %r0, %r9\nexit",
	  0xfedcba9876543210ULL },
	{ "JMP_JA: forward", "mov %r0, 1\nja +1\nmov %r0, 0\nexit", 1 },
	{ "JMP_JA: backward", "mov %r0, 0\nja +1\nexit\nadd %r0, 1\n"
	  "jlt %r0, 3, -2\nja -4", 3 },
	{ "JMP32_JA: imm, forward and back",
	  "mov %r0, 0\nja32 fwd\nback:\nadd %r0, 10\nexit\nfwd:\nadd %r0, 1\n"
	  "ja32 back", 11 },
	{ "JMP_EXIT: r0 as it is", "lddw %r0, 0xdeadbeefcafe\nexit",
	  0xdeadbeefcafeULL },
	/* ---- loads and stores (r1: bytes 0x80 | i) ---- */
	{ "LDX_MEM_B", "ldxb %r0, [%r1+1]\nexit", 0x81 },
	{ "LDX_MEM_H: unaligned", "ldxh %r0, [%r1+3]\nexit", 0x8483 },
	{ "LDX_MEM_W: unaligned", "ldxw %r0, [%r1+3]\nexit", 0x86858483ULL },
	{ "LDX_MEM_DW: unaligned", "ldxdw %r0, [%r1+5]\nexit",
	  0x8c8b8a8988878685ULL },
	{ "LDX_MEM_DW: negative offset", "add %r1, 16\nldxdw %r0, [%r1-8]\n"
	  "exit", 0x8f8e8d8c8b8a8988ULL },
	{ "LDX_MEMSX_B", "ldxsb %r0, [%r1+1]\nexit", 0xffffffffffffff81ULL },
	{ "LDX_MEMSX_H", "ldxsh %r0, [%r1+2]\nexit", 0xffffffffffff8382ULL },
	{ "LDX_MEMSX_W", "ldxsw %r0, [%r1+3]\nexit", 0xffffffff86858483ULL },
	{ "LDX_MEMSX_B: positive stays", "stb [%r10-1], 0x7f\n"
	  "ldxsb %r0, [%r10-1]\nexit", 0x7f },
	{ "ST_MEM_B: imm truncated", "stdw [%r10-8], 0\nstb [%r10-8], -1\n"
	  "ldxdw %r0, [%r10-8]\nexit", 0xff },
	{ "ST_MEM_H", "stdw [%r10-8], 0\nsth [%r10-7], 0x1234\n"
	  "ldxdw %r0, [%r10-8]\nexit", 0x123400 },
	{ "ST_MEM_W: into the packet", "stw [%r1+4], -2\nldxdw %r0, [%r1+0]\n"
	  "exit", 0xfffffffe83828180ULL },
	{ "ST_MEM_DW: imm sign-extended", "stdw [%r10-8], -2\n"
	  "ldxdw %r0, [%r10-8]\nexit", 0xfffffffffffffffeULL },
	{ "STX_MEM_B: low byte only", "stdw [%r10-8], 0\n"
	  "lddw %r2, 0x1122334455667788\nstxb [%r10-8], %r2\n"
	  "ldxdw %r0, [%r10-8]\nexit", 0x88 },
	{ "STX_MEM_H", "stdw [%r10-8], 0\nlddw %r2, 0x1122334455667788\n"
	  "stxh [%r10-6], %r2\nldxdw %r0, [%r10-8]\nexit", 0x77880000ULL },
	{ "STX_MEM_W", "stdw [%r10-8], -1\nlddw %r2, 0x1122334455667788\n"
	  "stxw [%r10-8], %r2\nldxdw %r0, [%r10-8]\nexit",
	  0xffffffff55667788ULL },
	{ "STX_MEM_DW: unaligned", "lddw %r2, 0x1122334455667788\n"
	  "stxdw [%r1+3], %r2\nldxdw %r0, [%r1+3]\nexit",
	  0x1122334455667788ULL },
	/* ---- atomics: old values zero-extended, halves untouched ---- */
	{ "STX_ATOMIC_DW ADD", "stdw [%r10-8], 5\nmov %r1, 3\n"
	  "lock add [%r10-8], %r1\njne %r1, 3, fail\nldxdw %r2, [%r10-8]\n"
	  "jne %r2, 8, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W ADD: upper half untouched", "stdw [%r10-8], -1\n"
	  "mov %r1, 1\nlock add32 [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit",
	  0xffffffff00000000ULL },
	{ "STX_ATOMIC_DW ADD|FETCH", "stdw [%r10-8], 5\nmov %r1, 3\n"
	  "lock fetch add [%r10-8], %r1\njne %r1, 5, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 8, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W ADD|FETCH: old value zero-extended",
	  "stdw [%r10-8], -1\nmov %r1, 1\nlock fetch add32 [%r10-8], %r1\n"
	  "mov %r0, %r1\nexit", 0xffffffffULL },
	{ "STX_ATOMIC_DW OR", "stdw [%r10-8], 0x10\nmov %r1, 1\n"
	  "lock or [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", 0x11 },
	{ "STX_ATOMIC_W OR|FETCH", "stdw [%r10-8], 0x10\nmov %r1, 1\n"
	  "lock fetch or32 [%r10-8], %r1\njne %r1, 0x10, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 0x11, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W OR", "stdw [%r10-8], 0\nmov %r1, -1\n"
	  "lock or32 [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit",
	  0xffffffffULL },
	{ "STX_ATOMIC_DW OR|FETCH", "stdw [%r10-8], 2\nmov %r1, 1\n"
	  "lock fetch or [%r10-8], %r1\njne %r1, 2, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 3, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_DW AND", "stdw [%r10-8], -1\nmov %r1, 0x0f\n"
	  "lock and [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", 0x0f },
	{ "STX_ATOMIC_W AND: upper half untouched", "stdw [%r10-8], -1\n"
	  "mov %r1, 0\nlock and32 [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit",
	  0xffffffff00000000ULL },
	{ "STX_ATOMIC_DW AND|FETCH", "stdw [%r10-8], 6\nmov %r1, 3\n"
	  "lock fetch and [%r10-8], %r1\njne %r1, 6, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 2, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W AND|FETCH", "stdw [%r10-8], -1\nmov %r1, 3\n"
	  "lock fetch and32 [%r10-8], %r1\nmov32 %r3, -1\njne %r1, %r3, fail\n"
	  "ldxw %r2, [%r10-8]\njne %r2, 3, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_DW XOR", "stdw [%r10-8], 5\nmov %r1, 3\n"
	  "lock xor [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit", 6 },
	{ "STX_ATOMIC_W XOR", "stdw [%r10-8], -1\nmov %r1, 1\n"
	  "lock xor32 [%r10-8], %r1\nldxdw %r0, [%r10-8]\nexit",
	  0xfffffffffffffffeULL },
	{ "STX_ATOMIC_DW XOR|FETCH", "stdw [%r10-8], 5\nmov %r1, 3\n"
	  "lock fetch xor [%r10-8], %r1\njne %r1, 5, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 6, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W XOR|FETCH", "stdw [%r10-8], 5\nmov %r1, 3\n"
	  "lock fetch xor32 [%r10-8], %r1\njne %r1, 5, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 6, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_DW XCHG", "stdw [%r10-8], 7\nmov %r1, 9\n"
	  "lock xchg [%r10-8], %r1\njne %r1, 7, fail\nldxdw %r2, [%r10-8]\n"
	  "jne %r2, 9, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W XCHG: old value zero-extended", "stdw [%r10-8], -1\n"
	  "mov %r1, 9\nlock xchg32 [%r10-8], %r1\nmov32 %r3, -1\n"
	  "jne %r1, %r3, fail\nldxdw %r2, [%r10-8]\nrsh %r2, 32\n"
	  "jne %r2, %r3, fail\nldxw %r2, [%r10-8]\njne %r2, 9, fail\n"
	  OK_FAIL, 1 },
	{ "STX_ATOMIC_DW CMPXCHG: equal, swapped", "stdw [%r10-8], 7\n"
	  "mov %r0, 7\nmov %r1, 9\nlock cmpxchg [%r10-8], %r1\n"
	  "jne %r0, 7, fail\nldxdw %r2, [%r10-8]\njne %r2, 9, fail\n"
	  OK_FAIL, 1 },
	{ "STX_ATOMIC_DW CMPXCHG: not equal, r0 the old value",
	  "stdw [%r10-8], 7\nmov %r0, 8\nmov %r1, 9\n"
	  "lock cmpxchg [%r10-8], %r1\njne %r0, 7, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 7, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W CMPXCHG: r0's low half compared, r0 zero-extended",
	  "stdw [%r10-8], 7\nlddw %r0, 0x100000007\nmov %r1, 9\n"
	  "lock cmpxchg32 [%r10-8], %r1\njne %r0, 7, fail\n"
	  "ldxdw %r2, [%r10-8]\njne %r2, 9, fail\n" OK_FAIL, 1 },
	{ "STX_ATOMIC_W CMPXCHG: not equal", "stdw [%r10-8], -1\n"
	  "mov %r0, 8\nmov %r1, 9\nlock cmpxchg32 [%r10-8], %r1\n"
	  "mov32 %r3, -1\njne %r0, %r3, fail\nldxdw %r2, [%r10-8]\n"
	  "jne %r2, -1, fail\n" OK_FAIL, 1 },
	/* ---- calls ---- */
	{ "JMP_CALL helper: r0 = r1", "mov %r1, 42\ncall 5\nexit", 42 },
	{ "JMP_CALL helper: unwind on 0 ends the run with r0 0",
	  "mov %r1, 0\ncall 5\nmov %r0, 1\nexit", 0 },
	{ "JMP_CALL helper: non-zero goes on",
	  "mov %r1, -1\ncall 5\nmov %r0, 2\nexit", 2 },
	{ "JMP_CALL local: r1-r5 in, r0 out, r6-r9 kept",
	  "mov %r1, 1\nmov %r2, 2\nmov %r3, 3\nmov %r4, 4\nmov %r5, 5\n"
	  "mov %r6, 6\nmov %r7, 7\nmov %r8, 8\nmov %r9, 9\ncall local f\n"
	  "jne %r0, 15, fail\njne %r6, 6, fail\njne %r7, 7, fail\n"
	  "jne %r8, 8, fail\njne %r9, 9, fail\n" OK_FAIL
	  "f:\nmov %r0, %r1\nadd %r0, %r2\nadd %r0, %r3\nadd %r0, %r4\n"
	  "add %r0, %r5\nmov %r6, 0\nmov %r7, 0\nmov %r8, 0\nmov %r9, 0\n"
	  "exit", 1 },
	{ "JMP_CALL local: a frame of 512 bytes below, r10 restored",
	  "stdw [%r10-8], 1\nmov %r6, %r10\ncall local f\n"
	  "jne %r0, 512, fail\njne %r6, %r10, fail\nldxdw %r2, [%r10-8]\n"
	  "jne %r2, 1, fail\n" OK_FAIL
	  "f:\nstdw [%r10-8], 2\nmov %r0, %r6\nsub %r0, %r10\nexit", 1 },
	{ "JMP_CALL local: 8 frames deep (main and 7)",
	  "mov %r1, 6\ncall local f\nmov %r0, 1\nexit\n"
	  "f:\njeq %r1, 0, +2\nsub %r1, 1\ncall local f\nexit", 1 },
};

static void test_rows(void **state)
{
	unsigned int i, bad = 0;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct uxdp_bpf_code *code = code_of(cases[i].text);
		struct uxdp_bpf_run run;
		uint64_t r0;

		mem_reset();
		r0 = run_code(code, &run, (uintptr_t)mem, MEM_LEN);
		if (run.fault || r0 != cases[i].r0) {
			print_error("%s: r0 0x%llx (fault %u at %u), want "
				    "0x%llx\n", cases[i].name,
				    (unsigned long long)r0, run.fault,
				    run.fault_pc,
				    (unsigned long long)cases[i].r0);
			bad++;
		}
		uxdp_bpf_raw_free(code);
	}
	assert_int_equal(bad, 0);
}

/* ---- conditional jumps: every one, both widths, K and X, taken and not ---- */

/*
 * What each compares: the order (signed or not) and which outcomes jump;
 * jset tests bits. The oracle for the sweep below, by the RFC's table.
 */
static const struct jcond {
	const char *mn;
	bool sgn, lt, eq, gt, set;
} jconds[] = {
	{ "jeq", false, false, true, false, false },
	{ "jne", false, true, false, true, false },
	{ "jgt", false, false, false, true, false },
	{ "jge", false, false, true, true, false },
	{ "jlt", false, true, false, false, false },
	{ "jle", false, true, true, false, false },
	{ "jsgt", true, false, false, true, false },
	{ "jsge", true, false, true, true, false },
	{ "jslt", true, true, false, false, false },
	{ "jsle", true, true, true, false, false },
	{ "jset", false, false, false, false, true },
};

static bool jcond_taken(const struct jcond *j, bool w32, uint64_t d,
			uint64_t s)
{
	if (w32 && j->sgn) {
		d = (uint64_t)(int64_t)(int32_t)d;
		s = (uint64_t)(int64_t)(int32_t)s;
	} else if (w32) {
		d = (uint32_t)d;
		s = (uint32_t)s;
	}
	if (j->set)
		return d & s;
	if (d == s)
		return j->eq;
	if (j->sgn ? (int64_t)d < (int64_t)s : d < s)
		return j->lt;
	return j->gt;
}

static void test_jumps(void **state)
{
	static const uint64_t dst[] = {
		0, 1, 2, 0xffffffffffffffffULL, 0x100000001ULL, 0x80000000ULL,
		0xffffffffULL, 0x8000000000000000ULL,
	};
	/* K: as imm (sign-extended to 64 bits); X: these and two more. */
	static const uint64_t src[] = {
		0, 1, 2, 0xffffffffffffffffULL, 0xffffffff80000000ULL,
		0x7fffffffULL, 0x100000001ULL, 0x8000000000000000ULL,
	};
	unsigned int j, w, x, di, si, bad = 0, n = 0;

	(void)state;
	for (j = 0; j < ARRAY_SIZE(jconds); j++)
	for (w = 0; w < 2; w++)
	for (x = 0; x < 2; x++)
	for (di = 0; di < ARRAY_SIZE(dst); di++)
	for (si = 0; si < ARRAY_SIZE(src) - (x ? 0 : 2); si++) {
		struct uxdp_bpf_code *code;
		struct uxdp_bpf_run run;
		char text[256], opnd[24];
		bool want = jcond_taken(&jconds[j], w, dst[di], src[si]);
		uint64_t r0;

		if (x)
			snprintf(opnd, sizeof(opnd), "%%r2");
		else
			snprintf(opnd, sizeof(opnd), "%d",
				 (int32_t)src[si]);
		snprintf(text, sizeof(text), "lddw %%r1, 0x%llx\n"
			 "lddw %%r2, 0x%llx\nmov %%r0, 1\n%s%s %%r1, %s, +1\n"
			 "mov %%r0, 0\nexit", (unsigned long long)dst[di],
			 (unsigned long long)src[si], jconds[j].mn,
			 w ? "32" : "", opnd);
		code = code_of(text);
		r0 = run_code(code, &run, 0, 0);
		if (run.fault || r0 != want) {
			print_error("JMP%s_%s_%s: 0x%llx vs 0x%llx: %s, want "
				    "%s\n", w ? "32" : "", jconds[j].mn,
				    x ? "X" : "K", (unsigned long long)dst[di],
				    (unsigned long long)src[si],
				    r0 ? "taken" : "not taken",
				    want ? "taken" : "not taken");
			bad++;
		}
		uxdp_bpf_raw_free(code);
		n++;
	}
	assert_int_equal(bad, 0);
	assert_true(n > 2000);
}

/* ja32's imm reaches past off's 16 bits. */
static void test_ja32_far(void **state)
{
	enum { FAR = 40000 };
	struct bpf_insn *insns = calloc(FAR + 3, sizeof(*insns));
	struct uxdp_bpf_code *code;
	struct uxdp_bpf_run run;
	uint32_t i;

	(void)state;
	assert_non_null(insns);
	insns[0] = (struct bpf_insn){ .code = BPF_JMP32 | BPF_JA, .imm = FAR };
	for (i = 1; i <= FAR; i++)	/* mov %r0, 0 */
		insns[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV |
					      BPF_K };
	insns[FAR + 1] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV |
					    BPF_K, .imm = 7 };
	insns[FAR + 2] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	assert_int_equal(uxdp_bpf_raw_code("far", insns, FAR + 3, 0, &code), 0);
	free(insns);
	assert_int_equal(run_code(code, &run, 0, 0), 7);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_NONE);
	uxdp_bpf_raw_free(code);
}

/* ---- calls: the depth limit ------------------------------------------------ */

static void test_call_depth(void **state)
{
	/* Every frame checks that its 512 bytes are in the stack. */
	static const char *const text =
		"call local f\nmov %r0, 1\nexit\n"
		"f:\ncheckw 8 [%r10-512] kind 2 region 0\n"
		"jeq %r1, 0, +2\nsub %r1, 1\ncall local f\nexit";
	struct uxdp_bpf_code *code = code_of(text);
	struct uxdp_bpf_run run;

	(void)state;
	/* main and 7 frames: fine */
	assert_int_equal(run_code(code, &run, 6, 0), 1);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_NONE);
	/* the 9th frame: the call that would make it faults */
	assert_int_equal(run_code(code, &run, 7, 0), 0);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_DEPTH);
	assert_int_equal(run.fault_pc, 6);
	uxdp_bpf_raw_free(code);
}

/* ---- the internal rows ----------------------------------------------------- */

static void test_ldx_ctx(void **state)
{
	struct uxdp_rxq_info rxq = { .queue_index = 3, .ifindex = 7 };
	uint8_t pkt[64];
	struct uxdp_buff b = {
		.data = pkt + 16, .data_end = pkt + 64, .data_meta = pkt + 8,
		.rxq = &rxq,
	};
	const uint64_t want[UXDP_BPF_CTX_NFIELDS] = {
		[UXDP_BPF_CTX_DATA] = (uintptr_t)b.data,
		[UXDP_BPF_CTX_DATA_END] = (uintptr_t)b.data_end,
		[UXDP_BPF_CTX_DATA_META] = (uintptr_t)b.data_meta,
		[UXDP_BPF_CTX_INGRESS_IFINDEX] = 7,
		[UXDP_BPF_CTX_RX_QUEUE_INDEX] = 3,
		[UXDP_BPF_CTX_EGRESS_IFINDEX] = 0,
	};
	int f;

	(void)state;
	for (f = 0; f < UXDP_BPF_CTX_NFIELDS; f++) {
		char text[64];
		struct uxdp_bpf_code *code;
		struct uxdp_bpf_run run;

		snprintf(text, sizeof(text),
			 "ldx_ctx %%r0, [%%r1], field %d\nexit", f);
		code = code_of(text);
		assert_int_equal(run_code(code, &run, (uintptr_t)&b, 0),
				 want[f]);
		/* No queue: the indexes read 0. */
		b.rxq = NULL;
		assert_int_equal(run_code(code, &run, (uintptr_t)&b, 0),
				 f >= UXDP_BPF_CTX_INGRESS_IFINDEX ? 0 :
				 want[f]);
		b.rxq = &rxq;
		uxdp_bpf_raw_free(code);
	}
}

static uint8_t region_rw[16], region_ro[16];
static struct uxdp_bpf_region regions[] = {
	{ .base = region_rw, .size = sizeof(region_rw) },
	{ .base = region_ro, .size = sizeof(region_ro), .rdonly = true },
};

/*
 * @insn (a check) then r0 = 1: it must pass, or fault MEM at insn 0 with
 * r0 0. The run has @ctx, the raw memory @raw (64 bytes), the regions.
 */
static void check_one(const char *insn, struct uxdp_buff *ctx, uint8_t *raw,
		      uint64_t r1, uint64_t r2, bool pass)
{
	char text[128];
	struct uxdp_bpf_code *code;
	struct uxdp_bpf_run run = { 0 };
	uint64_t r0;

	snprintf(text, sizeof(text), "%s\nmov %%r0, 1\nexit", insn);
	code = code_of(text);
	code->regions = regions;
	code->nregions = ARRAY_SIZE(regions);
	run.code = code;
	run.ctx = ctx;
	run.mem = raw;
	run.mem_len = raw ? MEM_LEN : 0;
	r0 = uxdp_bpf_interp_run(&run, r1, r2);
	if (pass && (r0 != 1 || run.fault)) {
		print_error("%s: refused (fault %u)\n", insn, run.fault);
		fail();
	}
	if (!pass && (r0 != 0 || run.fault != UXDP_BPF_FAULT_MEM ||
		      run.fault_pc != 0)) {
		print_error("%s: passed (r0 %llu, fault %u at %u)\n", insn,
			    (unsigned long long)r0, run.fault, run.fault_pc);
		fail();
	}
	uxdp_bpf_raw_free(code);
}

/* A helper that cuts the packet to 32 bytes, as adjust_tail would. */
static uint64_t cut_packet(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			   uint64_t r5)
{
	struct uxdp_buff *b = uxdp_bpf_cur->ctx;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	b->data_end = (uint8_t *)b->data + 32;
	return 1;
}

static void test_check_kinds(void **state)
{
	uint8_t pkt[64], other[16];
	struct uxdp_buff b = {
		.data = pkt + 16, .data_end = pkt + 64, .data_meta = pkt + 8,
	};
	uint64_t data = (uintptr_t)b.data, rw = (uintptr_t)region_rw;
	uint64_t ro = (uintptr_t)region_ro, raw = (uintptr_t)mem;
	uint64_t away = (uintptr_t)other;

	(void)state;
	/* PKT: [data_meta, data_end) of the context */
	check_one("checkr 4 [%r1+44] kind 1 region 0", &b, NULL, data, 0, true);
	check_one("checkr 4 [%r1+45] kind 1 region 0", &b, NULL, data, 0,
		  false);
	check_one("checkw 8 [%r1-8] kind 1 region 0", &b, NULL, data, 0, true);
	check_one("checkr 1 [%r1-9] kind 1 region 0", &b, NULL, data, 0, false);
	check_one("checkr 4 [%r1+0] kind 1 region 0", NULL, NULL, data, 0,
		  false);
	/* data_meta past data: no metadata area */
	b.data_meta = pkt + 17;
	check_one("checkr 1 [%r1-1] kind 1 region 0", &b, NULL, data, 0, false);
	check_one("checkr 1 [%r1+0] kind 1 region 0", &b, NULL, data, 0, true);
	b.data_meta = pkt + 8;
	/* an address that wraps is outside, not small */
	check_one("checkr 8 [%r1-8] kind 1 region 0", &b, NULL, 4, 0, false);
	/* STACK: every frame's 512 bytes, no more */
	check_one("checkw 8 [%r10-8] kind 2 region 0", NULL, NULL, 0, 0, true);
	check_one("checkw 1 [%r10+0] kind 2 region 0", NULL, NULL, 0, 0, false);
	check_one("checkr 8 [%r10-4096] kind 2 region 0", NULL, NULL, 0, 0,
		  true);
	check_one("checkr 1 [%r10-4097] kind 2 region 0", NULL, NULL, 0, 0,
		  false);
	/* REGION: code->regions[i]; rdonly refuses writes */
	check_one("checkw 8 [%r1+8] kind 3 region 0", NULL, NULL, rw, ro, true);
	check_one("checkw 8 [%r1+9] kind 3 region 0", NULL, NULL, rw, ro,
		  false);
	check_one("checkr 16 [%r2+0] kind 3 region 1", NULL, NULL, rw, ro,
		  true);
	check_one("checkw 1 [%r2+0] kind 3 region 1", NULL, NULL, rw, ro,
		  false);
	check_one("checkr 1 [%r2+0] kind 3 region 0", NULL, NULL, rw, ro,
		  false);
	check_one("checkr 1 [%r1+0] kind 3 region 2", NULL, NULL, rw, ro,
		  false);
	/* RAW: the run's memory */
	check_one("checkw 8 [%r1+56] kind 4 region 0", NULL, mem, raw, 0, true);
	check_one("checkw 8 [%r1+57] kind 4 region 0", NULL, mem, raw, 0,
		  false);
	check_one("checkr 1 [%r1+0] kind 4 region 0", NULL, NULL, raw, 0,
		  false);
	/* ANY: any of them, each with its own rules */
	check_one("checkr 4 [%r1+0] kind 5 region 0", &b, mem, data, 0, true);
	check_one("checkw 8 [%r10-8] kind 5 region 0", &b, mem, 0, 0, true);
	check_one("checkw 8 [%r1+0] kind 5 region 0", &b, mem, rw, 0, true);
	check_one("checkr 8 [%r1+0] kind 5 region 0", &b, mem, ro, 0, true);
	check_one("checkw 8 [%r1+0] kind 5 region 0", &b, mem, ro, 0, false);
	check_one("checkw 8 [%r1+0] kind 5 region 0", &b, mem, raw, 0, true);
	check_one("checkr 1 [%r1+0] kind 5 region 0", &b, mem, away, 0, false);
	/* an unknown kind passes nothing */
	check_one("checkr 1 [%r10-8] kind 9 region 0", &b, mem, 0, 0, false);

	/* PKT is the packet at the time of the check: a helper cut it. */
	{
		static struct uxdp_bpf_helper cut = {
			.id = 5, .name = "cut", .fn = cut_packet,
		};
		struct uxdp_bpf_code *code = code_of(
			"mov %r6, %r1\ncheckr 4 [%r6+40] kind 1 region 0\n"
			"call 5\ncheckr 4 [%r6+40] kind 1 region 0\n"
			"mov %r0, 1\nexit");
		struct uxdp_bpf_run run = { .code = code, .ctx = &b };

		code->helpers[5] = &cut;
		assert_int_equal(uxdp_bpf_interp_run(&run, data, 0), 0);
		assert_int_equal(run.fault, UXDP_BPF_FAULT_MEM);
		assert_int_equal(run.fault_pc, 3);
		uxdp_bpf_raw_free(code);
	}
}

static void test_budget(void **state)
{
	static const char *const text =
		"mov %r0, 0\nloop:\nadd %r0, 1\nbudget\njlt %r0, 10, loop\n"
		"exit";
	struct uxdp_bpf_code *code = code_of(text);
	struct uxdp_bpf_run run;

	(void)state;
	/* Ten back edges (the budget runs before each jump, taken or
	 * not): a budget of 10 is enough, and all of it is used. */
	code->budget = 10;
	assert_int_equal(run_code(code, &run, 0, 0), 10);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_NONE);
	assert_int_equal(run.budget, 0);
	/* 9: the tenth ends the run there. */
	code->budget = 9;
	assert_int_equal(run_code(code, &run, 0, 0), 0);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_BUDGET);
	assert_int_equal(run.fault_pc, 2);
	/* Each run starts with the code's budget. */
	code->budget = 10;
	assert_int_equal(run_code(code, &run, 0, 0), 10);
	uxdp_bpf_raw_free(code);
}

/*
 * Tail calls: r2 = the array, r3 = the index. A missing slot or an index
 * past the end falls through; the target runs from its start, r1 kept; the
 * 34th of a run falls through.
 */
static void test_tail_call(void **state)
{
	struct uxdp_bpf_code *caller = code_of(
		"ldxdw %r2, [%r1+8]\nldxdw %r3, [%r1+16]\ntail_call\n"
		"mov %r0, 1\nexit");
	struct uxdp_bpf_code *target = code_of(
		"ldxdw %r0, [%r1+24]\nadd %r0, 1000\nexit");
	/* Counts its runs in [r1], then calls slot [r1+16] again. */
	struct uxdp_bpf_code *self = code_of(
		"ldxdw %r0, [%r1+0]\nadd %r0, 1\nstxdw [%r1+0], %r0\n"
		"ldxdw %r2, [%r1+8]\nldxdw %r3, [%r1+16]\ntail_call\n"
		"ldxdw %r0, [%r1+0]\nexit");
	/* A tail call in a function: the function's caller gets r0. */
	struct uxdp_bpf_code *in_call = code_of(
		"call local f\nadd %r0, 100\nexit\n"
		"f:\nldxdw %r2, [%r1+8]\nldxdw %r3, [%r1+16]\ntail_call\n"
		"mov %r0, 1\nexit");
	const struct uxdp_bpf_code *slots[3] = { target, NULL, self };
	struct uxdp_bpf_prog_array arr = { .max_entries = 3, .slots = slots };
	uint64_t args[4] = { 0, (uintptr_t)&arr, 0, 7 };
	struct uxdp_bpf_run run;

	(void)state;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1007);
	assert_ptr_equal(run.code, target);
	assert_int_equal(run.tail_calls, 1);

	/* A missing program: falls through, and uses a count (the
	 * kernel's order). */
	args[2] = 1;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1);
	assert_int_equal(run.tail_calls, 1);
	assert_ptr_equal(run.code, caller);
	/* Past the end: falls through, no count. */
	args[2] = 3;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1);
	assert_int_equal(run.tail_calls, 0);
	args[2] = 0xffffffff;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1);
	/* The index is r3's low half. */
	args[2] = 0x100000000ULL;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1007);
	/* No array. */
	args[1] = 0;
	args[2] = 0;
	assert_int_equal(run_code(caller, &run, (uintptr_t)args, 0), 1);
	args[1] = (uintptr_t)&arr;

	/* 33 tail calls, then the 34th falls through: 34 runs. */
	args[0] = 0;
	args[2] = 2;
	assert_int_equal(run_code(self, &run, (uintptr_t)args, 0), 34);
	assert_int_equal(args[0], 34);
	assert_int_equal(run.tail_calls, UXDP_BPF_MAX_TAIL_CALLS);
	/* The count is per run. */
	args[0] = 0;
	assert_int_equal(run_code(self, &run, (uintptr_t)args, 0), 34);

	/* From a function: the target's exit returns to the caller of the
	 * function, in the caller's program. */
	args[2] = 0;
	assert_int_equal(run_code(in_call, &run, (uintptr_t)args, 0), 1107);
	assert_ptr_equal(run.code, in_call);

	uxdp_bpf_raw_free(caller);
	uxdp_bpf_raw_free(target);
	uxdp_bpf_raw_free(self);
	uxdp_bpf_raw_free(in_call);
}

/* An opcode no row has ends the run (FAULT_INSN), as do a register past
 * r10 and a helper slot that holds none. Neither passes raw.c, so the code is patched after. */
static void test_bad_opcode(void **state)
{
	struct uxdp_bpf_code *code = code_of("mov %r0, 1\nmov %r1, 5\n"
					     "call 5\nexit");
	struct uxdp_bpf_run run;
	unsigned int c;

	(void)state;
	assert_int_equal(run_code(code, &run, 0, 0), 5);
	for (c = 0; c < 256; c++) {
		if (uxdp_bpf_ops[c].mnemonic)
			continue;
		code->insns[1].code = (uint8_t)c;
		assert_int_equal(run_code(code, &run, 0, 0), 0);
		assert_int_equal(run.fault, UXDP_BPF_FAULT_INSN);
		assert_int_equal(run.fault_pc, 1);
	}
	/* A register past r10 (validation refuses it): no read or write
	 * past the register file (AddressSanitizer), the run ends there. */
	for (c = 11; c <= 15; c++) {
		code->insns[1] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1,
			.src_reg = (uint8_t)c };
		assert_int_equal(run_code(code, &run, 0, 0), 0);
		assert_int_equal(run.fault, UXDP_BPF_FAULT_INSN);
		assert_int_equal(run.fault_pc, 1);
		code->insns[1] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_MOV | BPF_K,
			.dst_reg = (uint8_t)c, .imm = 5 };
		assert_int_equal(run_code(code, &run, 0, 0), 0);
		assert_int_equal(run.fault, UXDP_BPF_FAULT_INSN);
		assert_int_equal(run.fault_pc, 1);
	}
	code->insns[1] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV |
					    BPF_K, .dst_reg = 1, .imm = 5 };
	code->insns[2].imm = 3;		/* an empty slot */
	assert_int_equal(run_code(code, &run, 0, 0), 0);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_INSN);
	assert_int_equal(run.fault_pc, 2);
	code->insns[2].imm = 99;	/* past the table */
	assert_int_equal(run_code(code, &run, 0, 0), 0);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_INSN);
	uxdp_bpf_raw_free(code);
}

/* A helper finds its run in uxdp_bpf_cur; it is cleared after. */
static uint64_t cur_run(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			uint64_t r5)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return (uintptr_t)uxdp_bpf_cur;
}

static void test_helper_cur(void **state)
{
	static struct uxdp_bpf_helper cur = { .id = 5, .name = "cur",
					      .fn = cur_run };
	struct uxdp_bpf_code *code = code_of("call 5\nexit");
	struct uxdp_bpf_run run;

	(void)state;
	code->helpers[5] = &cur;
	assert_null(uxdp_bpf_cur);
	assert_int_equal(run_code(code, &run, 0, 0), (uintptr_t)&run);
	assert_null(uxdp_bpf_cur);
	uxdp_bpf_raw_free(code);
}

/* thread: this thread's index (uxdp_thread_index()). */
static void test_thread_row(void **state)
{
	struct uxdp_bpf_code *code = code_of("mov %r5, 7\nthread %r5\n"
					     "mov %r0, %r5\nexit");
	struct uxdp_bpf_run run;

	(void)state;
	assert_int_equal(run_code(code, &run, 0, 0), uxdp_thread_index());
	uxdp_bpf_raw_free(code);
}

/*
 * Atomics are atomic: two threads adding to the same counters lose
 * nothing (a plain add loses some at once on two cores).
 */
#define ADDS (T_TSAN ? 20000 : 200000)

struct adder {
	struct uxdp_bpf_code *code;
	uint64_t *counter;
	pthread_barrier_t go;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;
	struct uxdp_bpf_run run = { .code = a->code };

	pthread_barrier_wait(&a->go);
	uxdp_bpf_interp_run(&run, (uintptr_t)a->counter, ADDS);
	return run.fault ? arg : NULL;
}

static void test_atomic_threads(void **state)
{
	static const char *const text =
		"mov %r3, 1\nloop:\nlock add [%r1+0], %r3\nlock add32 [%r1+8], "
		"%r3\nmov %r4, 2\nlock fetch add [%r1+16], %r4\nsub %r2, 1\n"
		"jne %r2, 0, loop\nexit";
	uint64_t counter[3] = { 0 };
	struct adder a = { code_of(text), counter };
	pthread_t t[2];
	void *ret;
	int i;

	(void)state;
	assert_int_equal(pthread_barrier_init(&a.go, NULL, 2), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, adder_main, &a),
				 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(counter[0], 2 * ADDS);
	assert_int_equal(counter[1], 2 * ADDS);
	assert_int_equal(counter[2], 4 * ADDS);
	pthread_barrier_destroy(&a.go);
	uxdp_bpf_raw_free(a.code);
}

/* ---- every row ran --------------------------------------------------------- */

static void test_every_row_ran(void **state)
{
	unsigned int c, missing = 0;

	(void)state;
	if (getenv("UXDP_TEST_FILTER") && *getenv("UXDP_TEST_FILTER"))
		skip();		/* it counts what the others ran */
	for (c = 0; c < 256; c++) {
		if (!uxdp_bpf_ops[c].mnemonic || seen[c])
			continue;
		print_error("row 0x%02x (%s) ran in no test\n", c,
			    uxdp_bpf_ops[c].mnemonic);
		missing++;
	}
	assert_int_equal(missing, 0);
}

/* ---- the assembler: every row's disassembly assembles back ----------------- */

static bool rt_seen[256];

static void round_trip(const struct bpf_insn *in)
{
	uint32_t n = uxdp_bpf_ops[in->code].flags & UXDP_BPF_F_WIDE ? 2 : 1;
	struct bpf_insn *out = NULL;
	const char *why;
	char text[128];
	uint32_t len = 0;

	uxdp_bpf_insn_str(in, text, sizeof(text));
	if (uxdp_bpf_insn_valid_ex(in, n, UXDP_BPF_VALID_INTERNAL, &why)) {
		print_error("generated an invalid insn: %s: %s\n", text, why);
		fail();
	}
	if (uxdp_bpf_asm(text, &out, &len)) {
		print_error("'%s' does not assemble: %s\n", text,
			    uxdp_errmsg());
		fail();
	}
	if (len != n || memcmp(out, in, n * sizeof(*in))) {
		print_error("'%s' assembles to another instruction "
			    "(code 0x%02x dst %u src %u off %d imm %d)\n", text,
			    out[0].code, out[0].dst_reg, out[0].src_reg,
			    out[0].off, out[0].imm);
		fail();
	}
	free(out);
	rt_seen[in->code] = true;
}

static void test_asm_round_trip(void **state)
{
	static const int32_t imms[] = { INT32_MIN, -1, 0, 1, 7, INT32_MAX };
	static const int16_t offs[] = { INT16_MIN, -8, -1, 0, 1, INT16_MAX };
	static const int32_t atomics[] = {
		BPF_ADD, BPF_ADD | BPF_FETCH, BPF_OR, BPF_OR | BPF_FETCH,
		BPF_AND, BPF_AND | BPF_FETCH, BPF_XOR, BPF_XOR | BPF_FETCH,
		BPF_XCHG, BPF_CMPXCHG,
	};
	static const int16_t movsx[] = { 0, 8, 16, 32 };
	static const int32_t widths[] = { 16, 32, 64 };
	unsigned int c, i, j;

	(void)state;
	for (c = 0; c < 256; c++) {
		const struct uxdp_bpf_op *op = &uxdp_bpf_ops[c];
		uint8_t cls = c & 0x07;
		struct bpf_insn in[2] = { { .code = (uint8_t)c } };

		if (!op->mnemonic)
			continue;
		if (!(op->flags & UXDP_BPF_F_NODST))
			in[0].dst_reg = cls == BPF_ST || cls == BPF_STX ? 10 : 3;
		if (op->flags & UXDP_BPF_F_SRC)
			in[0].src_reg = cls == BPF_LDX ? 10 : 7;

		if (c == UXDP_BPF_OP_CHECK) {
			for (i = 1; i <= UXDP_BPF_MEM_ANY; i++)
				for (j = 0; j < 2; j++) {
					in[0].dst_reg = (uint8_t)(i + 1);
					in[0].off = j ? -8 : 4;
					in[0].imm = UXDP_BPF_CHECK_IMM(j ? 8 : 1,
						i, j, j ? 7 : 0);
					round_trip(in);
				}
			/* an atomic's: the alignment too, or alone */
			for (i = 0; i <= UXDP_BPF_MEM_STACK; i += 2) {
				in[0].dst_reg = 4;
				in[0].off = -16;
				in[0].imm = UXDP_BPF_CHECK_IMM(8, i, 1, 0) |
					    UXDP_BPF_CHECK_ALIGN;
				round_trip(in);
			}
		} else if (c == UXDP_BPF_OP_LDX_CTX) {
			for (i = 0; i < UXDP_BPF_CTX_NFIELDS; i++) {
				in[0].imm = (int32_t)i;
				round_trip(in);
			}
		} else if ((cls == BPF_ALU || cls == BPF_ALU64) &&
			   (c & 0xf0) == BPF_END) {
			for (i = 0; i < ARRAY_SIZE(widths); i++) {
				in[0].imm = widths[i];
				round_trip(in);
			}
		} else if ((cls == BPF_ALU || cls == BPF_ALU64) &&
			   (c & 0xf0) == BPF_MOV &&
			   (op->flags & UXDP_BPF_F_SRC)) {
			for (i = 0; i < ARRAY_SIZE(movsx); i++) {
				in[0].off = movsx[i];
				if (movsx[i] != 32 || cls == BPF_ALU64)
					round_trip(in);
			}
		} else if (cls == BPF_ALU || cls == BPF_ALU64) {
			for (i = 0; i < ARRAY_SIZE(imms); i++)
			for (j = 0; j < 2; j++) {
				if (!(op->flags & UXDP_BPF_F_VAR_OFF) && j)
					continue;
				in[0].off = (int16_t)j;	/* sdiv, smod */
				if (op->flags & UXDP_BPF_F_IMM)
					in[0].imm = imms[i];
				round_trip(in);
			}
		} else if (c == (BPF_JMP | BPF_CALL)) {
			for (i = 0; i < ARRAY_SIZE(imms); i++)
			for (j = 0; j <= BPF_PSEUDO_KFUNC_CALL; j++) {
				in[0].src_reg = (uint8_t)j;
				in[0].imm = imms[i];
				round_trip(in);
			}
		} else if (c == (BPF_JMP32 | BPF_JA)) {
			for (i = 0; i < ARRAY_SIZE(imms); i++) {
				in[0].imm = imms[i];
				round_trip(in);
			}
		} else if (cls == BPF_JMP || cls == BPF_JMP32) {
			for (i = 0; i < ARRAY_SIZE(offs); i++)
			for (j = 0; j < ARRAY_SIZE(imms); j++) {
				if (!(op->flags & UXDP_BPF_F_JUMP) && offs[i])
					continue;
				in[0].off = op->flags & UXDP_BPF_F_JUMP ?
					    offs[i] : 0;
				if (op->flags & UXDP_BPF_F_IMM)
					in[0].imm = imms[j];
				round_trip(in);
			}
		} else if (cls == BPF_LD) {
			static const int32_t hi[] = { 0, 0x01234567, -1 };

			for (i = 0; i < ARRAY_SIZE(imms); i++)
			for (j = 0; j < ARRAY_SIZE(hi); j++) {
				in[0].src_reg = 0;
				in[0].imm = imms[i];
				in[1].imm = hi[j];
				round_trip(in);
				/* map[N] and map[N]+off (loader input) */
				in[0].src_reg = BPF_PSEUDO_MAP_IDX;
				in[1].imm = 0;
				round_trip(in);
				in[0].src_reg = BPF_PSEUDO_MAP_IDX_VALUE;
				in[1].imm = hi[j];
				round_trip(in);
			}
		} else if (cls == BPF_STX && (c & 0xe0) == BPF_ATOMIC) {
			for (i = 0; i < ARRAY_SIZE(atomics); i++)
			for (j = 0; j < ARRAY_SIZE(offs); j++) {
				in[0].imm = atomics[i];
				in[0].off = offs[j];
				round_trip(in);
			}
		} else {	/* LDX, ST, STX */
			for (i = 0; i < ARRAY_SIZE(offs); i++)
			for (j = 0; j < ARRAY_SIZE(imms); j++) {
				in[0].off = offs[i];
				if (op->flags & UXDP_BPF_F_IMM)
					in[0].imm = imms[j];
				round_trip(in);
			}
		}
		if (!rt_seen[c]) {
			print_error("row 0x%02x (%s): no round trip\n", c,
				    op->mnemonic);
			fail();
		}
	}
}

/* The suite's spellings beyond the disassembler's. */
struct asm_same {
	const char *a, *b;
};

static void test_asm_spellings(void **state)
{
	static const struct asm_same same[] = {
		{ "swap16 %r0", "bswap16 %r0" },
		{ "swap64 %r3", "bswap64 %r3" },
		{ "add64 %r0, 1", "add %r0, 1" },
		{ "mov64 %r0, %r1", "mov %r0, %r1" },
		{ "neg64 %r2", "neg %r2" },
		{ "sdiv64 %r0, -3", "sdiv %r0, -3" },
		{ "call helper 5", "call 5" },
		{ "call runtime 3", "call kfunc 3" },
		{ "ldxb %r0, [%r1]", "ldxb %r0, [%r1+0]" },
		{ "ldxb %r0, [ %r1 + 0x10 ]", "ldxb %r0, [%r1+16]" },
		{ "ldxh %r0, [%r1-0x10]", "ldxh %r0, [%r1-16]" },
		{ "ldxh %r0, [%r1+0xfff8]", "ldxh %r0, [%r1-8]" },
		{ "mov32 %r0, 0xffffffff", "mov32 %r0, -1" },
		{ "mov %r0,%r1", "mov %r0, %r1" },
		{ "stw [%r10-4],-0x10", "stw [%r10-4], -16" },
		{ "lddw %r0, -1", "lddw %r0, 0xffffffffffffffff" },
		{ "lddw %r0, 18446744073709551615", "lddw %r0, -1" },
		{ "ja +0", "ja 0x0 # a comment" },
		{ "jeq %r1, 0x7fffffff, -1", "jeq %r1, 2147483647, -1" },
		{ "lock fetch xchg [%r1+0], %r2", "lock xchg [%r1+0], %r2" },
		{ "\tmov   %r0 ,  1   ", "mov %r0, 1" },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(same); i++) {
		struct bpf_insn *a, *b;
		uint32_t na, nb;

		/* "ja 0x0" is a label, not an offset: the suite's rule. */
		if (!strncmp(same[i].b, "ja 0x0", 6)) {
			assert_int_equal(uxdp_bpf_asm(same[i].b, &b, &nb),
					 -EINVAL);
			assert_non_null(strstr(uxdp_errmsg(), "no label '0x0'"));
			continue;
		}
		if (uxdp_bpf_asm(same[i].a, &a, &na) ||
		    uxdp_bpf_asm(same[i].b, &b, &nb)) {
			print_error("'%s' / '%s': %s\n", same[i].a, same[i].b,
				    uxdp_errmsg());
			fail();
		}
		if (na != nb || memcmp(a, b, na * sizeof(*a))) {
			print_error("'%s' and '%s' differ\n", same[i].a,
				    same[i].b);
			fail();
		}
		free(a);
		free(b);
	}
}

/* Labels, comments, the implicit "exit", callx. */
static void test_asm_program(void **state)
{
	static const char *const text =
		"# a comment line\n"
		"\n"
		"  mov %r0, 0   # trailing\n"
		"top:\n"
		"jeq %r0, 3, exit\n"
		"add %r0, 1\n"
		"ja top\n"
		"exit\n"
		"after: exit\n"
		"call local after\n"
		"call %r2\n"
		"ja32 top\n";
	struct bpf_insn *in;
	uint32_t len;

	(void)state;
	assert_int_equal(uxdp_bpf_asm(text, &in, &len), 0);
	assert_int_equal(len, 9);
	assert_int_equal(in[1].code, BPF_JMP | BPF_JEQ | BPF_K);
	assert_int_equal(in[1].off, 2);		/* the first exit */
	assert_int_equal(in[3].off, -3);	/* back to top */
	assert_int_equal(in[6].code, BPF_JMP | BPF_CALL);
	assert_int_equal(in[6].src_reg, BPF_PSEUDO_CALL);
	assert_int_equal(in[6].imm, -2);	/* after: */
	/* callx: no row, assembled for the validity rules to refuse */
	assert_int_equal(in[7].code, BPF_JMP | BPF_CALL | BPF_X);
	assert_int_equal(in[7].dst_reg, 2);
	{
		char dis[32];

		uxdp_bpf_insn_str(&in[7], dis, sizeof(dis));
		assert_string_equal(dis, "call %r2");
	}
	assert_int_equal(in[8].code, BPF_JMP32 | BPF_JA);
	assert_int_equal(in[8].imm, -8);
	free(in);
	/* an explicit "exit" label wins over the first exit */
	assert_int_equal(uxdp_bpf_asm("ja exit\nexit\nexit:\nexit", &in, &len),
			 0);
	assert_int_equal(in[0].off, 1);
	free(in);
}

struct asm_bad {
	const char *text;
	const char *err;	/* uxdp_errmsg() starts so */
};

/* @err must be -EINVAL and uxdp_errmsg() begin with @b->err. */
static void expect_refusal(const struct asm_bad *b, int err)
{
	if (err != -EINVAL ||
	    strncmp(uxdp_errmsg(), b->err, strlen(b->err))) {
		print_error("'%s': %d '%s', want '%s'\n", b->text, err,
			    err ? uxdp_errmsg() : "", b->err);
		fail();
	}
}

static void test_asm_errors(void **state)
{
	static const struct asm_bad bad[] = {
		{ "mov %r0, 1\nfoo %r0\nexit", "line 2: unknown mnemonic 'foo'" },
		{ "mov %r11, 1", "line 1: bad register '%r11'" },
		{ "mov %r01, 1", "line 1: bad register '%r01'" },
		{ "mov r1, 1", "line 1: bad register 'r1'" },
		{ "mov32 %r0, 2147483648", "line 1: immediate '2147483648' out "
		  "of 32-bit range" },
		{ "mov32 %r0, -2147483649", "line 1: immediate '-2147483649' "
		  "out of 32-bit range" },
		{ "exit\nmov32 %r0, 0x100000000", "line 2: immediate "
		  "'0x100000000' out of 32-bit range" },
		{ "mov %r0, 1x", "line 1: bad immediate '1x'" },
		{ "mov %r0, 0x", "line 1: bad immediate '0x'" },
		{ "lddw %r0, 0x10000000000000000", "line 1: bad immediate" },
		{ "lddw %r0, -9223372036854775809", "line 1: immediate "
		  "'-9223372036854775809' out of 64-bit range" },
		{ "ldxb %r0, [%r1+32768]", "line 1: offset '+32768' out of "
		  "16-bit range" },
		{ "ldxb %r0, [%r1-32769]", "line 1: offset '-32769' out of" },
		{ "ldxb %r0, [%r1+0x10000]", "line 1: offset '+0x10000' out" },
		{ "ldxw %r0, %r1", "line 1: bad memory operand '%r1'" },
		{ "ldxw %r0, [%r1+2", "line 1: no ']' in '[%r1+2'" },
		{ "ldxw %r0, [%r1+2]x", "line 1: junk after ']'" },
		{ "ja nowhere\nexit", "line 1: no label 'nowhere'" },
		{ "ja 5\nexit", "line 1: no label '5'" },
		{ "a:\nexit\na:\nexit", "line 3: label 'a' defined twice" },
		{ "b-c:\nexit", "line 1: bad label 'b-c'" },
		{ "mov %r0\nexit", "line 1: mov takes 2 operands, not 1" },
		{ "mov %r0, 1 2", "line 1: mov takes 2 operands, not 3" },
		{ "exit %r0", "line 1: exit takes 0 operands, not 1" },
		{ "neg %r0, 1", "line 1: neg takes 1 operand, not 2" },
		{ "jeq %r0, 1", "line 1: jeq takes 3 operands, not 2" },
		{ "lddw %r0", "line 1: lddw takes 2 operands, not 1" },
		{ "lock", "line 1: lock takes [fetch] OP[32]" },
		{ "lock or [%r10-8]", "line 1: lock takes [fetch] OP[32]" },
		{ "lock nand [%r10-8], %r1", "line 1: unknown atomic operation "
		  "'nand'" },
		{ "lock32 [%r10-8], %r1", "line 1: unknown mnemonic 'lock32'" },
		{ "call", "line 1: call takes [helper|local|runtime] TARGET" },
		{ "call far 5", "line 1: unknown call kind 'far'" },
		{ "le8 %r0", "line 1: unknown mnemonic 'le8'" },
		{ "movsx8 %r0, %r1", "line 1: unknown mnemonic 'movsx8'" },
		{ "movsx832 %r0, 1", "line 1: movsx832 takes a register" },
		{ "checkr 4 [%r1+0] kind 16 region 0", "line 1: check size, "
		  "kind or region out of range" },
		{ "checkr 4 [%r1+0] region 0 kind 1", "line 1: check takes" },
		{ "checkw 8 [%r1+0] kind 0 region 0 aligned", "line 1: check "
		  "takes SIZE [%rN+off] kind K region R [align]" },
		{ "thread %r0, 1", "line 1: thread takes 1 operand, not 2" },
		{ "thread", "line 1: thread takes 1 operand, not 0" },
		{ "ldx_ctx %r0, [%r1+4], field 1", "line 1: ldx_ctx takes no "
		  "offset" },
		{ "mov %r0, 1 2 3 4 5 6 7 8", "line 1: too many operands" },
		{ "", "line 1: no instructions" },
		{ "# nothing\n\n", "line 3: no instructions" },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct bpf_insn *in = NULL;
		uint32_t len = 0;
		int err = uxdp_bpf_asm(bad[i].text, &in, &len);

		expect_refusal(&bad[i], err);
		assert_null(in);
	}
}

/* "@ja far", N instructions, "far: exit". */
static char *far_text(const char *ja, unsigned int n)
{
	char *text = malloc(n * 12 + 64), *p = text;
	unsigned int i;

	assert_non_null(text);
	p += sprintf(p, "%s far\n", ja);
	for (i = 0; i < n; i++)
		p += sprintf(p, "mov %%r0, 0\n");
	sprintf(p, "far:\nexit\n");
	return text;
}

/* Lines past what the assembler holds, jumps past what off holds. */
static void test_asm_limits(void **state)
{
	char *text = far_text("ja", 40000), line[600];
	struct bpf_insn *in;
	uint32_t len;

	(void)state;
	assert_int_equal(uxdp_bpf_asm(text, &in, &len), -EINVAL);
	assert_string_equal(uxdp_errmsg(), "line 1: label 'far' is 40000 "
			    "instructions away: out of a jump's reach");
	free(text);
	text = far_text("ja", 32767);
	assert_int_equal(uxdp_bpf_asm(text, &in, &len), 0);
	assert_int_equal(in[0].off, 32767);
	free(in);
	free(text);
	/* ja32 reaches it */
	text = far_text("ja32", 40000);
	assert_int_equal(uxdp_bpf_asm(text, &in, &len), 0);
	assert_int_equal(len, 40002);
	assert_int_equal(in[0].imm, 40000);
	free(in);
	free(text);

	memset(line, ' ', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line, "exit", 4);
	assert_int_equal(uxdp_bpf_asm(line, &in, &len), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "line 1: line longer than"));
}

static void test_asm_raw(void **state)
{
	struct bpf_insn *a, *r;
	uint32_t na, nr;

	(void)state;
	assert_int_equal(uxdp_bpf_asm("lddw %r0, 0x1122334455667788\nexit",
				      &a, &na), 0);
	/* words, as the suite's lddw.data */
	assert_int_equal(uxdp_bpf_asm_raw("0x5566778800000018\n"
					  "0x1122334400000000 # hi\n"
					  "0x0000000000000095\n", &r, &nr), 0);
	assert_int_equal(nr, na);
	assert_memory_equal(r, a, na * sizeof(*a));
	free(r);
	/* bytes in memory order, and the two mixed */
	assert_int_equal(uxdp_bpf_asm_raw("18 00 00 00 88 77 66 55\n"
					  "00 00 00 00 44 33 22 11\n"
					  "0x95", &r, &nr), 0);
	assert_int_equal(nr, na);
	assert_memory_equal(r, a, na * sizeof(*a));
	free(r);
	free(a);
	/* register nibbles: dst low, src high */
	assert_int_equal(uxdp_bpf_asm_raw("bf a1 fe ff 01 00 00 80", &r, &nr),
			 0);
	assert_int_equal(r[0].code, 0xbf);
	assert_int_equal(r[0].dst_reg, 1);
	assert_int_equal(r[0].src_reg, 10);
	assert_int_equal(r[0].off, -2);
	assert_int_equal(r[0].imm, (int32_t)0x80000001);
	free(r);

	assert_int_equal(uxdp_bpf_asm_raw("95 00 00", &r, &nr), -EINVAL);
	assert_string_equal(uxdp_errmsg(),
			    "line 2: 3 bytes: not whole instructions");
	assert_int_equal(uxdp_bpf_asm_raw("95 00\n0x95", &r, &nr), -EINVAL);
	assert_string_equal(uxdp_errmsg(), "line 2: word '0x95' inside an "
			    "instruction's bytes");
	assert_int_equal(uxdp_bpf_asm_raw("zz", &r, &nr), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "line 1: bad word 'zz'"));
	assert_int_equal(uxdp_bpf_asm_raw("-0x95", &r, &nr), -EINVAL);
	assert_int_equal(uxdp_bpf_asm_raw("0x10000000000000000", &r, &nr),
			 -EINVAL);
	assert_int_equal(uxdp_bpf_asm_raw("# none", &r, &nr), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "no instructions"));
}

/* ---- the validity rules' refusals ----------------------------------------- */

struct valid_bad {
	struct bpf_insn insn[2];
	uint32_t rules;
	const char *why;	/* NULL: valid */
	size_t left;		/* slots from it to the end (0: 1) */
};

#define I(c, d, s, o, i)	{ .code = (c), .dst_reg = (d), .src_reg = (s), \
				  .off = (o), .imm = (i) }
#define K_	UXDP_BPF_VALID_KERNEL
#define IN_	UXDP_BPF_VALID_INTERNAL

static void test_insn_valid(void **state)
{
	static const struct valid_bad v[] = {
		{ { I(0x8d, 2, 0, 0, 0) }, K_, "callx: out of scope 0x8d" },
		{ { I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0) }, K_,
		  "legacy packet load" },
		{ { I(BPF_LD | BPF_IND | BPF_B, 0, 1, 0, 0) }, K_,
		  "legacy packet load" },
		{ { I(BPF_JMP | 0xe0, 0, 0, 0, 0) }, K_, "may_goto" },
		{ { I(0xff, 0, 0, 0, 0) }, K_, "unknown opcode 0xff" },
		{ { I(UXDP_BPF_OP_BUDGET, 0, 0, 0, 0) }, K_, "opcode 0xe6 is "
		  "uxdp's own" },
		{ { I(UXDP_BPF_OP_BUDGET, 0, 0, 0, 0) }, IN_, NULL },
		{ { I(0xb7, 11, 0, 0, 0) }, K_, "bad register r11" },
		{ { I(0xbf, 1, 12, 0, 0) }, K_, "bad register r12" },
		{ { I(0xb7, 10, 0, 0, 0) }, K_, "r10 is read-only" },
		{ { I(0x79, 10, 1, 0, 0) }, K_, "r10 is read-only" },
		{ { I(0x7b, 10, 10, -8, 0) }, K_, NULL },
		{ { I(0x1d, 10, 1, 1, 0) }, K_, NULL },
		{ { I(0xdb, 1, 10, 0, BPF_ADD | BPF_FETCH) }, K_,
		  "r10 is read-only" },
		{ { I(0xdb, 1, 10, 0, BPF_CMPXCHG) }, K_, "r10 is read-only" },
		{ { I(0xdb, 1, 10, 0, BPF_ADD) }, K_, NULL },
		{ { I(0x07, 0, 1, 0, 1) }, K_, "src register set for a K form" },
		{ { I(0x0f, 0, 1, 0, 1) }, K_, "imm set where the opcode has "
		  "none" },
		{ { I(0x07, 0, 0, 1, 1) }, K_, "off set on an ALU instruction" },
		{ { I(0xd4, 0, 0, 0, 8) }, K_, "byte swap of 8 bits" },
		{ { I(0xd7, 0, 0, 1, 16) }, K_, "off set on a byte swap" },
		{ { I(0x3f, 0, 1, 2, 0) }, K_, "div/mod off 2" },
		{ { I(0xbc, 0, 1, 32, 0) }, K_, "movsx of 32 bits" },
		{ { I(0xbf, 0, 1, 7, 0) }, K_, "movsx of 7 bits" },
		{ { I(0xbf, 0, 1, 32, 0) }, K_, NULL },
		/* the kernel's rule, not the RFC's */
		{ { I(0x64, 0, 0, 0, 32) }, K_, "shift by 32" },
		{ { I(0x64, 0, 0, 0, 32) }, 0, NULL },
		{ { I(0x67, 0, 0, 0, 64) }, K_, "shift by 64" },
		{ { I(0xc7, 0, 0, 0, -1) }, K_, "shift by -1" },
		{ { I(0x67, 0, 0, 0, 63) }, K_, NULL },
		{ { I(0x85, 0, 3, 0, 0) }, K_, "call with src 3" },
		{ { I(0x85, 0, 0, 1, 0) }, K_, "off set on a call" },
		{ { I(0x85, 1, 0, 0, 0) }, K_, "dst register set where the "
		  "opcode has none" },
		{ { I(0x95, 0, 0, 1, 0) }, K_, "fields set on exit" },
		{ { I(0x05, 1, 0, 0, 0) }, K_, "dst register set where" },
		{ { I(0x06, 0, 0, 1, 0) }, K_, "off set on ja32" },
		{ { I(0x18, 0, 0, 0, 1) }, K_, "lddw without its second slot" },
		{ { I(0x18, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0) }, K_,
		  "lddw's second slot is not empty", 2 },
		{ { I(0x18, 0, 7, 0, 1), I(0, 0, 0, 0, 0) }, K_,
		  "lddw with src 7", 2 },
		{ { I(0x18, 0, 0, 1, 1), I(0, 0, 0, 0, 0) }, K_,
		  "off set on lddw", 2 },
		{ { I(0x18, 1, 6, 0, 1), I(0, 0, 0, 0, 4) }, K_, NULL, 2 },
		{ { I(0xc3, 1, 2, 0, 0x02) }, K_, "atomic operation 0x2" },
		{ { I(0xdb, 1, 2, 0, 0xe0) }, K_, "atomic operation 0xe0" },
		{ { I(0x61, 0, 1, 0, 1) }, K_, "imm set where" },
		{ { I(0x7a, 10, 1, -8, 0) }, K_, "src register set" },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		const struct bpf_insn *in = v[i].insn;
		const char *why = NULL;
		char dis[96];
		int err = uxdp_bpf_insn_valid_ex(in, v[i].left ?: 1,
						 v[i].rules, &why);

		uxdp_bpf_insn_str(in, dis, sizeof(dis));
		if (v[i].why ? err != -EINVAL || !strstr(why, v[i].why) :
			       err != 0) {
			print_error("#%u %s: %d '%s', want '%s'\n", i, dis, err,
				    err ? why : "", v[i].why ?: "valid");
			fail();
		}
	}
	/* uxdp_bpf_insn_valid() is the kernel's rules. */
	{
		struct bpf_insn sh = I(0x64, 0, 0, 0, 32);
		const char *why;

		assert_int_equal(uxdp_bpf_insn_valid(&sh, 1, false, &why),
				 -EINVAL);
		assert_int_equal(uxdp_bpf_insn_valid(&v[6].insn[0], 1, true,
						     &why), 0);
	}
}

/* What raw.c refuses: what would let an engine run out of the program. */
static void test_raw_refusals(void **state)
{
	static const struct asm_bad bad[] = {
		{ "ja +5\nexit", "prog t: insn 0 (ja +5): jump out of the "
		  "program" },
		{ "ja -2\nexit", "prog t: insn 0 (ja -2): jump out of" },
		{ "call local +5\nexit", "prog t: insn 0 (call local +5): "
		  "jump out of" },
		{ "ja +1\nlddw %r0, 1\nexit", "prog t: insn 0 (ja +1): jump "
		  "into the middle of a lddw" },
		{ "mov %r0, 0", "prog t: insn 0 (mov %r0, 0): runs off the "
		  "end" },
		{ "mov %r0, 0\njeq %r0, 0, -2", "prog t: insn 1 (jeq %r0, 0, "
		  "-2): runs off the end" },
		{ "lddw %r0, 1", "prog t: insn 0 (lddw %r0, 0x1): runs off" },
		{ "exit\ncall 5", "prog t: insn 1 (call 5): runs off" },
		{ "call 6\nexit", "prog t: insn 0 (call 6): no such helper" },
		{ "call runtime 1\nexit", "prog t: insn 0 (call kfunc 1): a "
		  "kfunc call needs the loader" },
		{ "lddw %r1, map[0]\nexit", "prog t: insn 0 (lddw %r1, "
		  "map[0]): a map reference needs the loader" },
		{ "budget\nexit", "prog t: insn 0 (budget): opcode 0xe6 is "
		  "uxdp's own" },
		{ "call %r2\nexit", "prog t: insn 0 (call %r2): callx: out of "
		  "scope" },
		{ "mov %r0, 1\nlsh32 %r0, 33\nexit", NULL },
	};
	struct uxdp_bpf_code *code;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = t_bpf_asm_code("t", bad[i].text, 0, &code);

		if (!bad[i].err) {
			assert_int_equal(err, 0);
			uxdp_bpf_raw_free(code);
			continue;
		}
		expect_refusal(&bad[i], err);
	}
	assert_int_equal(uxdp_bpf_raw_code("t", NULL, 0, 0, &code), -EINVAL);
	assert_string_equal(uxdp_errmsg(), "prog t: no instructions");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_jumps),
		cmocka_unit_test(test_ja32_far),
		cmocka_unit_test(test_call_depth),
		cmocka_unit_test(test_ldx_ctx),
		cmocka_unit_test(test_check_kinds),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_tail_call),
		cmocka_unit_test(test_bad_opcode),
		cmocka_unit_test(test_helper_cur),
		cmocka_unit_test(test_atomic_threads),
		cmocka_unit_test(test_thread_row),
		cmocka_unit_test(test_every_row_ran),
		cmocka_unit_test(test_asm_round_trip),
		cmocka_unit_test(test_asm_spellings),
		cmocka_unit_test(test_asm_program),
		cmocka_unit_test(test_asm_errors),
		cmocka_unit_test(test_asm_limits),
		cmocka_unit_test(test_asm_raw),
		cmocka_unit_test(test_insn_valid),
		cmocka_unit_test(test_raw_refusals),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
