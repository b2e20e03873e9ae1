/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every eBPF opcode uxdp knows, one row each: the only list of opcodes in
 * the bpf layer. The safety pass's whitelist and field limits, the
 * disassembler and assembler (insn.c), the interpreter's label table
 * (interp.c) and the JIT's coverage test all expand it, so a row added here
 * is one every part must handle (and a test says so when one does not).
 *
 *	X(code, mnemonic, group, flags)
 *
 * code      the opcode byte (class | op/size/mode | source)
 * mnemonic  the base of the conformance suite's assembler spelling
 *           (bpf_conformance, uBPF dialect); a row with variants chosen by
 *           off or imm (F_VAR_OFF, F_VAR_IMM) spells them in insn.c
 * group     the RFC 9669 conformance group (UXDP_BPF_G_*), or INTERNAL for
 *           the opcodes only the fixups make (never accepted from an object)
 * flags     UXDP_BPF_F_*: how the fields are used, what the checker and the
 *           engines must do with it
 *
 * What is not a row is invalid: the legacy packet loads (LD_ABS, LD_IND),
 * callx (JMP|CALL|X), the kernel's may_goto (JMP|0xe0), and every unused
 * byte. RFC 9669 section numbers are given by family.
 */
#ifndef UXDP_BPF_INSN_TABLE_H
#define UXDP_BPF_INSN_TABLE_H

/* RFC 9669 conformance groups (section 2.4). */
#define UXDP_BPF_G_BASE32	1
#define UXDP_BPF_G_BASE64	2
#define UXDP_BPF_G_ATOMIC32	3
#define UXDP_BPF_G_ATOMIC64	4
#define UXDP_BPF_G_DIVMUL32	5
#define UXDP_BPF_G_DIVMUL64	6
#define UXDP_BPF_G_INTERNAL	7	/* made by fixup.c, never loaded */

/* Row flags. */
#define UXDP_BPF_F_SRC		(1U << 0)	/* reads src_reg (the X forms) */
#define UXDP_BPF_F_IMM		(1U << 1)	/* reads imm */
#define UXDP_BPF_F_JUMP		(1U << 2)	/* off (or imm: JA32) is a jump */
#define UXDP_BPF_F_WIDE		(1U << 3)	/* two slots (lddw) */
#define UXDP_BPF_F_V4		(1U << 4)	/* cpu v4 (RFC 9669's additions) */
#define UXDP_BPF_F_VAR_OFF	(1U << 5)	/* off picks a variant (sdiv, movsx) */
#define UXDP_BPF_F_VAR_IMM	(1U << 6)	/* imm picks a variant (atomics, end) */
#define UXDP_BPF_F_LOAD		(1U << 7)	/* reads memory at src + off */
#define UXDP_BPF_F_STORE	(1U << 8)	/* writes memory at dst + off */
#define UXDP_BPF_F_NODST	(1U << 9)	/* dst_reg unused (ja, call, exit) */
#define UXDP_BPF_F_32		(1U << 10)	/* 32-bit operation (ALU, JMP32) */

#define UXDP_BPF_ALU_K		(UXDP_BPF_F_IMM | UXDP_BPF_F_32)
#define UXDP_BPF_ALU_X		(UXDP_BPF_F_SRC | UXDP_BPF_F_32)
#define UXDP_BPF_A64_K		UXDP_BPF_F_IMM
#define UXDP_BPF_A64_X		UXDP_BPF_F_SRC
#define UXDP_BPF_JMP_K		(UXDP_BPF_F_IMM | UXDP_BPF_F_JUMP)
#define UXDP_BPF_JMP_X		(UXDP_BPF_F_SRC | UXDP_BPF_F_JUMP)
#define UXDP_BPF_J32_K		(UXDP_BPF_JMP_K | UXDP_BPF_F_32)
#define UXDP_BPF_J32_X		(UXDP_BPF_JMP_X | UXDP_BPF_F_32)
#define UXDP_BPF_LDX		(UXDP_BPF_F_SRC | UXDP_BPF_F_LOAD)
#define UXDP_BPF_ST		(UXDP_BPF_F_IMM | UXDP_BPF_F_STORE)
#define UXDP_BPF_STX		(UXDP_BPF_F_SRC | UXDP_BPF_F_STORE)
#define UXDP_BPF_ATOM		(UXDP_BPF_F_SRC | UXDP_BPF_F_LOAD | \
				 UXDP_BPF_F_STORE | UXDP_BPF_F_VAR_IMM)

#define UXDP_BPF_INSNS(X)						\
	/* ---- ALU: 32-bit arithmetic (4.1), upper half zeroed ---- */	\
	X(0x04, "add32", BASE32, UXDP_BPF_ALU_K)			\
	X(0x0c, "add32", BASE32, UXDP_BPF_ALU_X)			\
	X(0x14, "sub32", BASE32, UXDP_BPF_ALU_K)			\
	X(0x1c, "sub32", BASE32, UXDP_BPF_ALU_X)			\
	X(0x24, "mul32", DIVMUL32, UXDP_BPF_ALU_K)			\
	X(0x2c, "mul32", DIVMUL32, UXDP_BPF_ALU_X)			\
	X(0x34, "div32", DIVMUL32, UXDP_BPF_ALU_K | UXDP_BPF_F_VAR_OFF)	\
	X(0x3c, "div32", DIVMUL32, UXDP_BPF_ALU_X | UXDP_BPF_F_VAR_OFF)	\
	X(0x44, "or32", BASE32, UXDP_BPF_ALU_K)				\
	X(0x4c, "or32", BASE32, UXDP_BPF_ALU_X)				\
	X(0x54, "and32", BASE32, UXDP_BPF_ALU_K)			\
	X(0x5c, "and32", BASE32, UXDP_BPF_ALU_X)			\
	X(0x64, "lsh32", BASE32, UXDP_BPF_ALU_K)			\
	X(0x6c, "lsh32", BASE32, UXDP_BPF_ALU_X)			\
	X(0x74, "rsh32", BASE32, UXDP_BPF_ALU_K)			\
	X(0x7c, "rsh32", BASE32, UXDP_BPF_ALU_X)			\
	X(0x84, "neg32", BASE32, UXDP_BPF_F_32)				\
	X(0x94, "mod32", DIVMUL32, UXDP_BPF_ALU_K | UXDP_BPF_F_VAR_OFF)	\
	X(0x9c, "mod32", DIVMUL32, UXDP_BPF_ALU_X | UXDP_BPF_F_VAR_OFF)	\
	X(0xa4, "xor32", BASE32, UXDP_BPF_ALU_K)			\
	X(0xac, "xor32", BASE32, UXDP_BPF_ALU_X)			\
	X(0xb4, "mov32", BASE32, UXDP_BPF_ALU_K)			\
	X(0xbc, "mov32", BASE32, UXDP_BPF_ALU_X | UXDP_BPF_F_VAR_OFF)	\
	X(0xc4, "arsh32", BASE32, UXDP_BPF_ALU_K)			\
	X(0xcc, "arsh32", BASE32, UXDP_BPF_ALU_X)			\
	/* byte swaps (4.2): le/be with imm 16, 32, 64 */		\
	X(0xd4, "le", BASE32, UXDP_BPF_F_IMM | UXDP_BPF_F_VAR_IMM)	\
	X(0xdc, "be", BASE32, UXDP_BPF_F_IMM | UXDP_BPF_F_VAR_IMM)	\
	/* ---- ALU64: 64-bit arithmetic (4.1) ---- */			\
	X(0x07, "add", BASE64, UXDP_BPF_A64_K)				\
	X(0x0f, "add", BASE64, UXDP_BPF_A64_X)				\
	X(0x17, "sub", BASE64, UXDP_BPF_A64_K)				\
	X(0x1f, "sub", BASE64, UXDP_BPF_A64_X)				\
	X(0x27, "mul", DIVMUL64, UXDP_BPF_A64_K)			\
	X(0x2f, "mul", DIVMUL64, UXDP_BPF_A64_X)			\
	X(0x37, "div", DIVMUL64, UXDP_BPF_A64_K | UXDP_BPF_F_VAR_OFF)	\
	X(0x3f, "div", DIVMUL64, UXDP_BPF_A64_X | UXDP_BPF_F_VAR_OFF)	\
	X(0x47, "or", BASE64, UXDP_BPF_A64_K)				\
	X(0x4f, "or", BASE64, UXDP_BPF_A64_X)				\
	X(0x57, "and", BASE64, UXDP_BPF_A64_K)				\
	X(0x5f, "and", BASE64, UXDP_BPF_A64_X)				\
	X(0x67, "lsh", BASE64, UXDP_BPF_A64_K)				\
	X(0x6f, "lsh", BASE64, UXDP_BPF_A64_X)				\
	X(0x77, "rsh", BASE64, UXDP_BPF_A64_K)				\
	X(0x7f, "rsh", BASE64, UXDP_BPF_A64_X)				\
	X(0x87, "neg", BASE64, 0)					\
	X(0x97, "mod", DIVMUL64, UXDP_BPF_A64_K | UXDP_BPF_F_VAR_OFF)	\
	X(0x9f, "mod", DIVMUL64, UXDP_BPF_A64_X | UXDP_BPF_F_VAR_OFF)	\
	X(0xa7, "xor", BASE64, UXDP_BPF_A64_K)				\
	X(0xaf, "xor", BASE64, UXDP_BPF_A64_X)				\
	X(0xb7, "mov", BASE64, UXDP_BPF_A64_K)				\
	X(0xbf, "mov", BASE64, UXDP_BPF_A64_X | UXDP_BPF_F_VAR_OFF)	\
	X(0xc7, "arsh", BASE64, UXDP_BPF_A64_K)				\
	X(0xcf, "arsh", BASE64, UXDP_BPF_A64_X)				\
	X(0xd7, "bswap", BASE64, UXDP_BPF_F_IMM | UXDP_BPF_F_VAR_IMM |	\
	  UXDP_BPF_F_V4)						\
	/* ---- JMP: 64-bit compares, calls, exit (4.3) ---- */		\
	X(0x05, "ja", BASE32, UXDP_BPF_F_JUMP | UXDP_BPF_F_NODST)	\
	X(0x15, "jeq", BASE64, UXDP_BPF_JMP_K)				\
	X(0x1d, "jeq", BASE64, UXDP_BPF_JMP_X)				\
	X(0x25, "jgt", BASE64, UXDP_BPF_JMP_K)				\
	X(0x2d, "jgt", BASE64, UXDP_BPF_JMP_X)				\
	X(0x35, "jge", BASE64, UXDP_BPF_JMP_K)				\
	X(0x3d, "jge", BASE64, UXDP_BPF_JMP_X)				\
	X(0x45, "jset", BASE64, UXDP_BPF_JMP_K)				\
	X(0x4d, "jset", BASE64, UXDP_BPF_JMP_X)				\
	X(0x55, "jne", BASE64, UXDP_BPF_JMP_K)				\
	X(0x5d, "jne", BASE64, UXDP_BPF_JMP_X)				\
	X(0x65, "jsgt", BASE64, UXDP_BPF_JMP_K)				\
	X(0x6d, "jsgt", BASE64, UXDP_BPF_JMP_X)				\
	X(0x75, "jsge", BASE64, UXDP_BPF_JMP_K)				\
	X(0x7d, "jsge", BASE64, UXDP_BPF_JMP_X)				\
	X(0xa5, "jlt", BASE64, UXDP_BPF_JMP_K)				\
	X(0xad, "jlt", BASE64, UXDP_BPF_JMP_X)				\
	X(0xb5, "jle", BASE64, UXDP_BPF_JMP_K)				\
	X(0xbd, "jle", BASE64, UXDP_BPF_JMP_X)				\
	X(0xc5, "jslt", BASE64, UXDP_BPF_JMP_K)				\
	X(0xcd, "jslt", BASE64, UXDP_BPF_JMP_X)				\
	X(0xd5, "jsle", BASE64, UXDP_BPF_JMP_K)				\
	X(0xdd, "jsle", BASE64, UXDP_BPF_JMP_X)				\
	/* call: src 0 helper (imm: id), 1 local (imm: pc-relative), */	\
	/* 2 kfunc (refused at load) */					\
	X(0x85, "call", BASE32, UXDP_BPF_F_IMM | UXDP_BPF_F_NODST)	\
	X(0x95, "exit", BASE32, UXDP_BPF_F_NODST)			\
	/* ---- JMP32: 32-bit compares (4.3) ---- */			\
	X(0x06, "ja32", BASE32, UXDP_BPF_F_JUMP | UXDP_BPF_F_NODST |	\
	  UXDP_BPF_F_IMM | UXDP_BPF_F_V4)				\
	X(0x16, "jeq32", BASE32, UXDP_BPF_J32_K)			\
	X(0x1e, "jeq32", BASE32, UXDP_BPF_J32_X)			\
	X(0x26, "jgt32", BASE32, UXDP_BPF_J32_K)			\
	X(0x2e, "jgt32", BASE32, UXDP_BPF_J32_X)			\
	X(0x36, "jge32", BASE32, UXDP_BPF_J32_K)			\
	X(0x3e, "jge32", BASE32, UXDP_BPF_J32_X)			\
	X(0x46, "jset32", BASE32, UXDP_BPF_J32_K)			\
	X(0x4e, "jset32", BASE32, UXDP_BPF_J32_X)			\
	X(0x56, "jne32", BASE32, UXDP_BPF_J32_K)			\
	X(0x5e, "jne32", BASE32, UXDP_BPF_J32_X)			\
	X(0x66, "jsgt32", BASE32, UXDP_BPF_J32_K)			\
	X(0x6e, "jsgt32", BASE32, UXDP_BPF_J32_X)			\
	X(0x76, "jsge32", BASE32, UXDP_BPF_J32_K)			\
	X(0x7e, "jsge32", BASE32, UXDP_BPF_J32_X)			\
	X(0xa6, "jlt32", BASE32, UXDP_BPF_J32_K)			\
	X(0xae, "jlt32", BASE32, UXDP_BPF_J32_X)			\
	X(0xb6, "jle32", BASE32, UXDP_BPF_J32_K)			\
	X(0xbe, "jle32", BASE32, UXDP_BPF_J32_X)			\
	X(0xc6, "jslt32", BASE32, UXDP_BPF_J32_K)			\
	X(0xce, "jslt32", BASE32, UXDP_BPF_J32_X)			\
	X(0xd6, "jsle32", BASE32, UXDP_BPF_J32_K)			\
	X(0xde, "jsle32", BASE32, UXDP_BPF_J32_X)			\
	/* ---- 64-bit immediate (5.4): src 0 imm64; 5, 6 maps ---- */	\
	X(0x18, "lddw", BASE64, UXDP_BPF_F_IMM | UXDP_BPF_F_WIDE)	\
	/* ---- loads and stores (5.1, 5.2) ---- */			\
	X(0x61, "ldxw", BASE32, UXDP_BPF_LDX)				\
	X(0x69, "ldxh", BASE32, UXDP_BPF_LDX)				\
	X(0x71, "ldxb", BASE32, UXDP_BPF_LDX)				\
	X(0x79, "ldxdw", BASE64, UXDP_BPF_LDX)				\
	X(0x81, "ldxsw", BASE32, UXDP_BPF_LDX | UXDP_BPF_F_V4)		\
	X(0x89, "ldxsh", BASE32, UXDP_BPF_LDX | UXDP_BPF_F_V4)		\
	X(0x91, "ldxsb", BASE32, UXDP_BPF_LDX | UXDP_BPF_F_V4)		\
	X(0x62, "stw", BASE32, UXDP_BPF_ST)				\
	X(0x6a, "sth", BASE32, UXDP_BPF_ST)				\
	X(0x72, "stb", BASE32, UXDP_BPF_ST)				\
	X(0x7a, "stdw", BASE64, UXDP_BPF_ST)				\
	X(0x63, "stxw", BASE32, UXDP_BPF_STX)				\
	X(0x6b, "stxh", BASE32, UXDP_BPF_STX)				\
	X(0x73, "stxb", BASE32, UXDP_BPF_STX)				\
	X(0x7b, "stxdw", BASE64, UXDP_BPF_STX)				\
	/* atomics (5.3): imm ADD/OR/AND/XOR [|FETCH], XCHG, CMPXCHG */	\
	X(0xc3, "lock32", ATOMIC32, UXDP_BPF_ATOM)			\
	X(0xdb, "lock", ATOMIC64, UXDP_BPF_ATOM)			\
	/* ---- internal: made by fixup.c (bpf_internal.h) ---- */	\
	X(0xf9, "ldx_ctx", INTERNAL, UXDP_BPF_F_SRC | UXDP_BPF_F_IMM)	\
	X(0xf6, "check", INTERNAL, UXDP_BPF_F_IMM)			\
	X(0xe6, "budget", INTERNAL, UXDP_BPF_F_NODST)			\
	X(0xf5, "tail_call", INTERNAL, UXDP_BPF_F_NODST)		\
	X(0xe7, "thread", INTERNAL, 0)

#endif /* UXDP_BPF_INSN_TABLE_H */
