/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The safety pass and the fixups (src/bpf/check.c, fixup.c), in the style
 * of the kernel's selftests test_verifier.c: a table of programs, each
 * accepted with the counts the pass must report (accesses, proven,
 * checked, back edges) or refused with the reason it must give. Every
 * accepted program's fixed-up code is then checked on its own: every
 * instruction valid, every jump and call landing on what was inserted
 * before its old target, every inserted instruction carrying the index of
 * the one it guards.
 */
#include "t_helpers.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include <uxdp/common.h>
#include <uxdp/xdp.h>

#include "t_bpf.h"
#include "t_bpf_cycles.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))

/* ---- instruction builders ------------------------------------------------ */

#define INSN(c, d, s, o, i)						\
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s),	\
			    .off = (o), .imm = (i) })
#define MOV64_IMM(d, k)		INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, k)
#define MOV64_REG(d, s)		INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_IMM(d, k)		INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, k)
#define ALU64_IMM(op, d, k)	INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, k)
#define ALU64_REG(op, d, s)	INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, k)	INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, k)
#define LDX(sz, d, s, o)	INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o)	INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, k)		INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, k)
#define ATOMIC(sz, op, d, s, o)	INSN(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define JMP_IMM(op, d, k, o)	INSN(BPF_JMP | (op) | BPF_K, d, 0, o, k)
#define JMP_REG(op, d, s, o)	INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, k, o)	INSN(BPF_JMP32 | (op) | BPF_K, d, 0, o, k)
#define JA(o)			INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(id)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_LOCAL(rel)		INSN(BPF_JMP | BPF_CALL, 0, 1, 0, rel)
#define EXIT			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LDDW(d, v)							\
	INSN(BPF_LD | BPF_IMM | BPF_DW, d, 0, 0, (int32_t)(uint32_t)(v)),	\
	INSN(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define LD_MAP(d, m)							\
	INSN(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_IDX, 0, m),	\
	INSN(0, 0, 0, 0, 0)
#define LD_MAP_VALUE(d, m, o)						\
	INSN(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_IDX_VALUE, 0, m),	\
	INSN(0, 0, 0, 0, o)

/* The xdp_md fields. */
#define CTX_DATA(d)		LDX(BPF_W, d, 1, 0)
#define CTX_END(d)		LDX(BPF_W, d, 1, 4)
#define CTX_META(d)		LDX(BPF_W, d, 1, 8)

/* A map lookup of key 0 from the stack: r0 = lookup(map m, &(u32)0). */
#define LOOKUP0(m)							\
	ST(BPF_W, 10, -4, 0),						\
	MOV64_REG(2, 10),						\
	ALU64_IMM(BPF_ADD, 2, -4),					\
	LD_MAP(1, m),							\
	CALL(BPF_FUNC_map_lookup_elem)

/* ---- maps and helpers ---------------------------------------------------- */

enum { M_ARR, M_RODATA, M_BSS, M_PROGS, M_HASH, M_RB, M_QUEUE, NMAPS };

static uint8_t arr_values[4 * 16], rodata_values[8], bss_values[64];
static uint8_t fake_map[NMAPS];
static const struct uxdp_bpf_code *no_progs[4];
static struct uxdp_bpf_prog_array prog_array = { 4, no_progs };

static const struct uxdp_bpf_build_map test_maps[NMAPS] = {
	[M_ARR] = { .name = "arr", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
		    .value_size = 16, .max_entries = 4,
		    .map = &fake_map[M_ARR], .values = arr_values,
		    .values_size = sizeof(arr_values) },
	[M_RODATA] = { .name = ".rodata", .type = BPF_MAP_TYPE_ARRAY,
		       .key_size = 4, .value_size = 8, .max_entries = 1,
		       .map = &fake_map[M_RODATA], .values = rodata_values,
		       .values_size = sizeof(rodata_values), .rdonly = true },
	[M_BSS] = { .name = ".bss", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
		    .value_size = 64, .max_entries = 1,
		    .map = &fake_map[M_BSS], .values = bss_values,
		    .values_size = sizeof(bss_values) },
	/* What a tail call takes its programs from (bpf_internal.h). */
	[M_PROGS] = { .name = "progs", .type = BPF_MAP_TYPE_PROG_ARRAY,
		      .key_size = 4, .value_size = 4, .max_entries = 4,
		      .map = &prog_array },
	[M_HASH] = { .name = "hash", .type = BPF_MAP_TYPE_HASH,
		     .key_size = 8, .value_size = 8, .max_entries = 16,
		     .map = &fake_map[M_HASH] },
	/* Its reserve gives NULL (fn_none): runs take the NULL path. */
	[M_RB] = { .name = "rb", .type = BPF_MAP_TYPE_RINGBUF,
		   .max_entries = 4096, .map = &fake_map[M_RB] },
	/* Its pop and peek (fn_fill) write 8 bytes of 0x5a. */
	[M_QUEUE] = { .name = "q", .type = BPF_MAP_TYPE_QUEUE,
		      .value_size = 8, .max_entries = 4,
		      .map = &fake_map[M_QUEUE] },
};

static uint64_t fn_none(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			uint64_t e)
{
	(void)a, (void)b, (void)c, (void)d, (void)e;
	return 0;
}

/* An array's lookup: the value's address, or 0. */
static uint64_t fn_lookup(uint64_t map, uint64_t key, uint64_t c, uint64_t d,
			  uint64_t e)
{
	uint32_t m, idx;

	(void)c, (void)d, (void)e;
	for (m = 0; m < NMAPS; m++)
		if ((uintptr_t)test_maps[m].map == map)
			break;
	if (m == NMAPS || !test_maps[m].values)
		return 0;
	memcpy(&idx, (const void *)(uintptr_t)key, sizeof(idx));
	if (idx >= test_maps[m].max_entries)
		return 0;
	return (uintptr_t)(test_maps[m].values +
			   (size_t)idx * test_maps[m].value_size);
}

/* A queue's pop: value_size bytes written. */
static uint64_t fn_fill(uint64_t map, uint64_t to, uint64_t c, uint64_t d,
			uint64_t e)
{
	(void)map, (void)c, (void)d, (void)e;
	memset((void *)(uintptr_t)to, 0x5a, 8);
	return 0;
}

static uint64_t fn_adjust_head(uint64_t ctx, uint64_t delta, uint64_t c,
			       uint64_t d, uint64_t e)
{
	(void)c, (void)d, (void)e;
	return (uint64_t)(int64_t)uxdp_adjust_head(
		(struct uxdp_buff *)(uintptr_t)ctx, (int)delta);
}

static uint64_t fn_load_bytes(uint64_t ctx, uint64_t off, uint64_t to,
			      uint64_t len, uint64_t e)
{
	struct uxdp_buff *x = (struct uxdp_buff *)(uintptr_t)ctx;

	(void)e;
	if (off > uxdp_buff_len(x) || len > uxdp_buff_len(x) - off)
		return (uint64_t)-EFAULT;
	memcpy((void *)(uintptr_t)to, (uint8_t *)x->data + off, len);
	return 0;
}

static const struct uxdp_bpf_helper test_helpers[] = {
	{ .id = BPF_FUNC_map_lookup_elem, .name = "map_lookup_elem",
	  .fn = fn_lookup,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY },
	  .ret = UXDP_BPF_RET_VALUE_OR_NULL },
	{ .id = BPF_FUNC_map_update_elem, .name = "map_update_elem",
	  .fn = fn_none,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY, UXDP_BPF_ARG_VALUE,
		    UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_ktime_get_ns, .name = "ktime_get_ns", .fn = fn_none },
	{ .id = BPF_FUNC_xdp_adjust_head, .name = "xdp_adjust_head",
	  .fn = fn_adjust_head,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_redirect_map, .name = "redirect_map", .fn = fn_none,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_ANY, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_xdp_load_bytes, .name = "xdp_load_bytes",
	  .fn = fn_load_bytes,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY, UXDP_BPF_ARG_MEM_WR,
		    UXDP_BPF_ARG_SIZE } },
	{ .id = BPF_FUNC_trace_printk, .name = "trace_printk", .fn = fn_none,
	  .args = { UXDP_BPF_ARG_MEM, UXDP_BPF_ARG_SIZE } },
	{ .id = BPF_FUNC_ringbuf_reserve, .name = "ringbuf_reserve",
	  .fn = fn_none,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_ANY, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_map_push_elem, .name = "map_push_elem",
	  .fn = fn_none,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_VALUE, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_map_pop_elem, .name = "map_pop_elem", .fn = fn_fill,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_VALUE_WR } },
	{ .id = BPF_FUNC_ringbuf_submit, .name = "ringbuf_submit",
	  .fn = fn_none, .args = { UXDP_BPF_ARG_ANY, UXDP_BPF_ARG_ANY },
	  .ret = UXDP_BPF_RET_VOID },
};

static const struct uxdp_bpf_helper *test_helper(uint32_t id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(test_helpers); i++)
		if (test_helpers[i].id == id)
			return &test_helpers[i];
	return NULL;
}

/* ---- the table ----------------------------------------------------------- */

#define MAX_T_INSNS	64

enum { ACCEPT, REJECT };

/*
 * A run of an accepted program by the interpreter: on the test packet
 * (or, raw, memory) cut to @len with one byte changed, arr's value 0
 * starting with the u32 @arr0; r0, or the fault and the instruction
 * (before fixups) that took it.
 */
struct trun {
	bool on;
	uint16_t len;
	int16_t patch_at;	/* -1: none */
	uint8_t patch;
	uint32_t arr0;
	uint64_t r0;
	uint32_t fault;		/* enum uxdp_bpf_fault */
	uint32_t fault_at;
};
#define RUN(len, at, v, a0, r)		{ true, len, at, v, a0, r, 0, 0 }
#define FAULT(len, at, v, a0, f, i)	{ true, len, at, v, a0, 0,	\
					  UXDP_BPF_FAULT_##f, i }

/* Expected counts: accesses, proven, checked, back edges. */
struct counts {
	uint32_t accesses, proven, checked, back_edges;
};

struct tcase {
	const char *name;
	struct bpf_insn insns[MAX_T_INSNS];
	int result;
	const char *err;		/* REJECT: a substring of the message */
	struct counts stats;		/* ACCEPT */
	enum uxdp_bpf_ctx_kind ctx;
	uint32_t flags;			/* UXDP_BPF_BUILD_F_* */
	int errnum;			/* REJECT: 0 means EINVAL */
	struct trun runs[3];		/* ACCEPT */
};

#define C(a, p, c, b)	{ a, p, c, b }

/* for (i = 0; i < 16 && data + i + 1 <= data_end; i++) r0 += data[i + @o];
 * returns i (insn 9 is the load). */
#define PKT_LOOP(o)							\
	CTX_END(2), CTX_DATA(1), MOV64_IMM(3, 0), MOV64_IMM(0, 0),	\
	MOV64_REG(4, 1), ALU64_REG(BPF_ADD, 4, 3), MOV64_REG(5, 4),	\
	ALU64_IMM(BPF_ADD, 5, 1), JMP_REG(BPF_JGT, 5, 2, 4),		\
	LDX(BPF_B, 4, 4, o), ALU64_REG(BPF_ADD, 0, 4),			\
	ALU64_IMM(BPF_ADD, 3, 1), JMP_IMM(BPF_JNE, 3, 16, -9),		\
	MOV64_REG(0, 3), EXIT

/* r0 = the u16 at data + ((data[0] & 7) << r6), r6 = 2 if data[0] is 0,
 * else @alt, below "that + 2 <= data_end" (insn 17); 1 if it is not. */
#define SHIFT_PKT(alt)							\
	CTX_DATA(2), CTX_END(3), MOV64_IMM(0, 1), MOV64_REG(4, 2),	\
	ALU64_IMM(BPF_ADD, 4, 1), JMP_REG(BPF_JGT, 4, 3, 12),		\
	LDX(BPF_B, 5, 2, 0), MOV64_IMM(6, 2), JMP_IMM(BPF_JEQ, 5, 0, 1),	\
	MOV64_IMM(6, alt), ALU64_IMM(BPF_AND, 5, 7),			\
	ALU64_REG(BPF_LSH, 5, 6), MOV64_REG(4, 2),			\
	ALU64_REG(BPF_ADD, 4, 5), MOV64_REG(7, 4),			\
	ALU64_IMM(BPF_ADD, 7, 2), JMP_REG(BPF_JGT, 7, 3, 1),		\
	LDX(BPF_H, 0, 4, 0), EXIT

/* The next header after an optional 4-byte tag: data + 14 or data + 18
 * as byte 12 says, joined; then "next + 2 <= data_end" and a u16 at
 * next + @o (insn 14). */
#define NEXT_HDR(o)							\
	CTX_DATA(2), CTX_END(3), MOV64_IMM(0, 1), MOV64_REG(4, 2),	\
	ALU64_IMM(BPF_ADD, 4, 14), JMP_REG(BPF_JGT, 4, 3, 9),		\
	LDX(BPF_B, 5, 2, 12), MOV64_REG(6, 2), ALU64_IMM(BPF_ADD, 6, 14),	\
	JMP_IMM(BPF_JNE, 5, 0x81, 1), ALU64_IMM(BPF_ADD, 6, 4),		\
	MOV64_REG(7, 6), ALU64_IMM(BPF_ADD, 7, 2),			\
	JMP_REG(BPF_JGT, 7, 3, 1), LDX(BPF_H, 0, 6, o), EXIT

static const struct tcase cases[] = {
	/* ---- accepted: the usual XDP patterns ---- */
	{
		"pass",
		{ MOV64_IMM(0, XDP_PASS), EXIT },
		ACCEPT, NULL, C(0, 0, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	{
		"parse eth/ipv4/udp below one data_end check: all proven",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 42),
			JMP_REG(BPF_JGT, 4, 3, 8),
			LDX(BPF_H, 5, 2, 12),
			JMP_IMM(BPF_JNE, 5, 0x0008, 6),
			LDX(BPF_B, 5, 2, 23),
			JMP_IMM(BPF_JNE, 5, 17, 4),
			LDX(BPF_H, 5, 2, 36),
			MOV64_IMM(0, XDP_PASS),
			JMP_IMM(BPF_JNE, 5, 0x3500, 1),
			MOV64_IMM(0, XDP_DROP),
			EXIT,
		},
		ACCEPT, NULL, C(5, 5, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_DROP), RUN(64, 37, 0x50, 0, XDP_PASS), RUN(41, -1, 0, 0, XDP_DROP) },
	},
	{
		"data_end checked header by header (end on the left)",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JLT, 3, 4, 6),	/* end < eth + 14 */
			LDX(BPF_H, 5, 2, 12),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 34),
			JMP_REG(BPF_JGE, 3, 4, 1),	/* end >= ip + 20 */
			JA(1),
			LDX(BPF_B, 0, 2, 23),
			EXIT,
		},
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 17), RUN(20, -1, 0, 0, XDP_DROP) },
	},
	{
		/* data + i on the first pass is data itself (id 0), then
		 * data + i of the add's id: the join pairs them, so the range
		 * "data + i + 1 <= data_end" gives reaches data[i]. */
		"a loop over the packet, data + i checked each pass: proven",
		{
			PKT_LOOP(0),
		},
		ACCEPT, NULL, C(3, 3, 0, 1),
		.runs = { RUN(64, -1, 0, 0, 16), RUN(5, -1, 0, 0, 5),
			  RUN(0, -1, 0, 0, 0) },
	},
	{
		/* The same loop, but the access one byte further than the
		 * check: checked, and it faults at the packet's end. */
		"a loop reading data[i + 1] below data + i + 1 <= end: checked",
		{
			PKT_LOOP(1),
		},
		ACCEPT, NULL, C(3, 2, 1, 1),
		.runs = { RUN(64, -1, 0, 0, 16), FAULT(5, -1, 0, 0, MEM, 9) },
	},
	{
		/* data + 14 and data + 18 join into a pointer of its own:
		 * the check of it that follows proves the read. */
		"a next-header pointer at two offsets, checked after the join",
		{ NEXT_HDR(0) },
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0x0045), RUN(64, 12, 0x81, 0, 0x0100),
			  RUN(15, -1, 0, 0, 1) },
	},
	{
		"the same, read two bytes past what the check gives: checked",
		{ NEXT_HDR(2) },
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x3200), FAULT(16, -1, 0, 0, MEM, 14),
			  FAULT(20, 12, 0x81, 0, MEM, 14) },
	},
	{
		/* r4 is data + a (id X) on one path, data + b (id Y) on the
		 * other; r9 = data + a - 4 holds X on both. Renaming Y to X
		 * for r4 would let "r4 + 2 <= end" prove [r9 + 4], which on
		 * the second path is data + a, not r4: r4 gets a base of its
		 * own, and r9's access stays checked. */
		"a join never renames a base a pointer below it still names",
		{
			CTX_DATA(2), CTX_END(3), MOV64_IMM(0, 1),
			MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
			JMP_REG(BPF_JGT, 4, 3, 19),
			LDX(BPF_B, 5, 2, 0), ALU64_IMM(BPF_AND, 5, 3),
			MOV64_REG(7, 2), ALU64_REG(BPF_ADD, 7, 5),
			LDX(BPF_B, 6, 2, 1), ALU64_IMM(BPF_AND, 6, 3),
			MOV64_REG(8, 2), ALU64_REG(BPF_ADD, 8, 6),
			MOV64_REG(9, 7), ALU64_IMM(BPF_ADD, 9, -4),
			MOV64_REG(4, 7), MOV64_IMM(7, 0),
			LDX(BPF_B, 1, 2, 2), JMP_IMM(BPF_JEQ, 1, 0, 1),
			MOV64_REG(4, 8),
			MOV64_REG(5, 4), ALU64_IMM(BPF_ADD, 5, 2),
			JMP_REG(BPF_JGT, 5, 3, 1),
			LDX(BPF_B, 0, 9, 4),
			EXIT,
		},
		ACCEPT, NULL, C(6, 5, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x01), RUN(64, 2, 0, 0, 0x00) },
	},
	{
		"a packet load with no data_end check: checked",
		{ CTX_DATA(2), LDX(BPF_B, 0, 2, 0), EXIT },
		ACCEPT, NULL, C(2, 1, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x02), FAULT(0, -1, 0, 0, MEM, 1) },
	},
	{
		"a packet load past the checked range: checked",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 1),
			LDX(BPF_H, 0, 2, 13),		/* 13..15 > 14 */
			EXIT,
		},
		ACCEPT, NULL, C(3, 2, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x4500), FAULT(14, -1, 0, 0, MEM, 6) },
	},
	{
		"the range holds only on the checked branch",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 2),
			LDX(BPF_H, 0, 2, 12),		/* proven */
			EXIT,
			LDX(BPF_H, 0, 2, 12),		/* past data_end */
			EXIT,
		},
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x0008), FAULT(10, -1, 0, 0, MEM, 7) },
	},
	{
		"metadata below data: proven",
		{
			CTX_META(2),
			CTX_DATA(3),
			MOV64_IMM(0, XDP_PASS),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 4),
			JMP_REG(BPF_JGT, 4, 3, 1),
			LDX(BPF_W, 0, 2, 0),
			EXIT,
		},
		ACCEPT, NULL, C(3, 3, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	{
		"a variable IP header length: proven past its own check",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 34),
			JMP_REG(BPF_JGT, 4, 3, 10),
			LDX(BPF_B, 5, 2, 14),		/* version, ihl */
			ALU64_IMM(BPF_AND, 5, 0xf),
			ALU64_IMM(BPF_LSH, 5, 2),
			ALU64_IMM(BPF_ADD, 2, 14),
			ALU64_REG(BPF_ADD, 2, 5),	/* l4 = ip + ihl * 4 */
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 8),
			JMP_REG(BPF_JGT, 4, 3, 2),
			LDX(BPF_H, 0, 2, 2),		/* udp dest */
			LDX(BPF_B, 0, 4, -1),		/* via the copy */
			EXIT,
		},
		ACCEPT, NULL, C(5, 5, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0xcd), RUN(40, -1, 0, 0, XDP_DROP), RUN(64, 14, 0x46, 0, 'd') },
	},
	{
		"a packet pointer spilled and filled keeps its range",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 3),
			STX(BPF_DW, 10, 2, -8),
			LDX(BPF_DW, 6, 10, -8),
			LDX(BPF_B, 0, 6, 13),
			EXIT,
		},
		ACCEPT, NULL, C(5, 5, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0), RUN(13, -1, 0, 0, XDP_DROP) },
	},
	{
		"map lookup, null check, constant offset: proven",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 1),
			LDX(BPF_DW, 0, 0, 8),
			EXIT,
		},
		ACCEPT, NULL, C(2, 2, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0x0f0e0d0c0b0a0908ULL) },
	},
	{
		"map value checked through a copy",
		{
			LOOKUP0(M_ARR),
			MOV64_REG(6, 0),
			JMP_IMM(BPF_JNE, 6, 0, 2),
			MOV64_IMM(0, 0),
			EXIT,
			MOV64_IMM(1, 1),
			ATOMIC(BPF_DW, BPF_ADD, 0, 1, 0),
			ATOMIC(BPF_DW, BPF_ADD, 6, 1, 8),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(3, 3, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	/* Values of two maps joined: clang merges xdp-filter's "count
	 * the hit, return" tails of its IPv4 and IPv6 lookups, and the
	 * kernel checks each path; a write that fits both is proven
	 * (it was a pointer the pass did not know, checked at run time,
	 * and a hash's value is no region: the run ended XDP_ABORTED). */
	{
		"values of two maps joined, a write fitting both: proven",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JNE, 0, 0, 2),
			MOV64_IMM(0, 0),
			EXIT,
			MOV64_REG(1, 0),
			LDX(BPF_W, 6, 0, 0),
			JMP_IMM(BPF_JEQ, 6, 0, 2),
			LD_MAP_VALUE(1, M_BSS, 0),
			/* Writes what it read: the table's values stay. */
			LDX(BPF_DW, 0, 1, 8),
			STX(BPF_DW, 1, 0, 8),
			EXIT,
		},
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0x0f0e0d0c0b0a0908ULL) },
	},
	{
		"values of two maps joined, past the smaller one: checked",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JNE, 0, 0, 2),
			MOV64_IMM(0, 0),
			EXIT,
			MOV64_REG(1, 0),
			LDX(BPF_W, 6, 0, 0),
			JMP_IMM(BPF_JEQ, 6, 0, 2),
			LD_MAP_VALUE(1, M_BSS, 0),
			LDX(BPF_DW, 0, 1, 16),
			EXIT,
		},
		ACCEPT, NULL, C(3, 2, 1, 0),
		/* arr's value 1, in arr's region. */
		.runs = { RUN(64, -1, 0, 0, 0x1716151413121110ULL) },
	},
	/* Two joins of several maps' values joined again: the smallest
	 * size and read-only if any is, whichever arrives first (the left
	 * one's size and writability were kept). */
	{
		"values of several maps joined twice, one read-only, written",
		{
			LDX(BPF_W, 6, 1, 16),
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JNE, 0, 0, 2),
			MOV64_IMM(0, 0),
			EXIT,
			MOV64_REG(7, 0),
			JMP_IMM(BPF_JSET, 6, 1, 5),
			/* arr's value or bss: 16 bytes, writable */
			MOV64_REG(1, 7),
			JMP_IMM(BPF_JSET, 6, 2, 2),
			LD_MAP_VALUE(1, M_BSS, 0),
			JA(6),
			/* bss or .rodata: 8 bytes, read-only */
			LD_MAP_VALUE(1, M_BSS, 0),
			JMP_IMM(BPF_JSET, 6, 4, 2),
			LD_MAP_VALUE(1, M_RODATA, 0),
			JA(0),
			ST(BPF_W, 1, 0, 7),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "write into a value of one of several maps, one of "
			"them read-only",
	},
	{
		"values of two maps joined, one read-only, written",
		{
			LDX(BPF_W, 6, 1, 16),
			LD_MAP_VALUE(1, M_RODATA, 0),
			JMP_IMM(BPF_JEQ, 6, 0, 2),
			LD_MAP_VALUE(1, M_BSS, 0),
			ST(BPF_W, 1, 0, 7),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "write into a value of one of several maps, one of "
			"them read-only",
	},
	/* Queues and stacks: pop writes value_size bytes (uninitialised
	 * before: the helper fills them), push reads them; only push, pop
	 * and peek take a queue, and they take nothing else. */
	{
		"a queue popped into the stack, the value read after",
		{
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
			LD_MAP(1, M_QUEUE), CALL(BPF_FUNC_map_pop_elem),
			LDX(BPF_DW, 0, 10, -8),
			ALU64_IMM(BPF_AND, 0, 3),
			EXIT,
		},
		ACCEPT, NULL, C(1, 1, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0x5a & 3) },
	},
	{
		"a queue popped into 4 bytes of stack",
		{
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
			LD_MAP(1, M_QUEUE), CALL(BPF_FUNC_map_pop_elem),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "R2 (fp) is not 8 writable bytes of a value for "
			"map_pop_elem",
	},
	{
		"a queue popped into read-only data",
		{
			LOOKUP0(M_RODATA),
			JMP_IMM(BPF_JEQ, 0, 0, 4),
			MOV64_REG(2, 0),
			LD_MAP(1, M_QUEUE), CALL(BPF_FUNC_map_pop_elem),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "writable bytes of a value for map_pop_elem",
	},
	{
		"a queue looked up",
		{
			LOOKUP0(M_QUEUE),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "map_lookup_elem on map q (type 22): push, pop and peek "
			"take a queue or a stack",
	},
	{
		"an array pushed into",
		{
			ST(BPF_DW, 10, -16, 0),
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
			LD_MAP(1, M_ARR), MOV64_IMM(3, 0),
			CALL(BPF_FUNC_map_push_elem),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "map_push_elem on map arr (type 2): push, pop and peek "
			"take a queue or a stack",
	},
	/* bpf_ringbuf_reserve: a record of a known size, proven against
	 * it; submit takes its start. */
	{
		"a ring buffer record written inside its size: proven",
		{
			LD_MAP(1, M_RB), MOV64_IMM(2, 16), MOV64_IMM(3, 0),
			CALL(BPF_FUNC_ringbuf_reserve),
			JMP_IMM(BPF_JEQ, 0, 0, 4),
			ST(BPF_DW, 0, 8, 1),
			MOV64_REG(1, 0), MOV64_IMM(2, 0),
			CALL(BPF_FUNC_ringbuf_submit),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(1, 1, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	{
		"a ring buffer record written past its size",
		{
			LD_MAP(1, M_RB), MOV64_IMM(2, 16), MOV64_IMM(3, 0),
			CALL(BPF_FUNC_ringbuf_reserve),
			JMP_IMM(BPF_JEQ, 0, 0, 4),
			ST(BPF_W, 0, 16, 1),
			MOV64_REG(1, 0), MOV64_IMM(2, 0),
			CALL(BPF_FUNC_ringbuf_submit),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "access to a ring buffer record at off 16 size 4: the "
			"record has 16 bytes",
	},
	{
		"a ring buffer record of a size not known",
		{
			LDX(BPF_W, 2, 1, 16), LD_MAP(1, M_RB), MOV64_IMM(3, 0),
			CALL(BPF_FUNC_ringbuf_reserve),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "R2 (ringbuf_reserve's size) is not a known constant",
	},
	{
		"a ring buffer record submitted from its inside",
		{
			LD_MAP(1, M_RB), MOV64_IMM(2, 16), MOV64_IMM(3, 0),
			CALL(BPF_FUNC_ringbuf_reserve),
			JMP_IMM(BPF_JEQ, 0, 0, 4),
			MOV64_REG(1, 0), ALU64_IMM(BPF_ADD, 1, 4),
			MOV64_IMM(2, 0),
			CALL(BPF_FUNC_ringbuf_submit),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "R1 is inside a ring buffer record: ringbuf_submit takes "
			"the start of a record",
	},
	{
		"a scalar submitted as a record",
		{
			MOV64_IMM(1, 0), MOV64_IMM(2, 0),
			CALL(BPF_FUNC_ringbuf_submit),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		REJECT, "R1 is scalar: ringbuf_submit takes the start of a "
			"record from bpf_ringbuf_reserve",
	},
	{
		"map value at a variable offset: checked",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 4),
			LDX(BPF_W, 1, 0, 0),
			ALU64_REG(BPF_ADD, 0, 1),
			LDX(BPF_B, 0, 0, 0),
			EXIT,
			EXIT,
		},
		ACCEPT, NULL, C(3, 2, 1, 0),
		.runs = { RUN(64, -1, 0, 20, 20), FAULT(64, -1, 0, 100000, MEM, 9) },
	},
	{
		"map value at a bounded variable offset: proven",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 5),
			LDX(BPF_W, 1, 0, 0),
			ALU64_IMM(BPF_AND, 1, 7),
			ALU64_REG(BPF_ADD, 0, 1),
			LDX(BPF_B, 0, 0, 8),		/* 8 + 7 + 1 <= 16 */
			EXIT,
			EXIT,
		},
		ACCEPT, NULL, C(3, 3, 0, 0),
		.runs = { RUN(64, -1, 0, 2, 10) },
	},
	{
		"map value indexed below a compare: proven",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 6),
			LDX(BPF_W, 1, 0, 0),
			JMP_IMM(BPF_JGE, 1, 4, 4),
			ALU64_IMM(BPF_LSH, 1, 2),
			ALU64_REG(BPF_ADD, 0, 1),
			LDX(BPF_W, 0, 0, 0),		/* 3 * 4 + 4 <= 16 */
			EXIT,
			MOV64_IMM(0, 0),
			EXIT,
		},
		ACCEPT, NULL, C(3, 3, 0, 0),
		.runs = { RUN(64, -1, 0, 1, 0x07060504), RUN(64, -1, 0, 4, 0) },
	},
	{
		"global data: .rodata read, .bss written",
		{
			LD_MAP_VALUE(1, M_RODATA, 0),
			LDX(BPF_DW, 2, 1, 0),
			LD_MAP_VALUE(3, M_BSS, 16),
			STX(BPF_DW, 3, 2, 40),		/* 16 + 40 + 8 <= 64 */
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(2, 2, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	{
		"stack at a variable offset: checked",
		{
			CTX_DATA(2),
			LDX(BPF_B, 3, 2, 0),		/* checked (pkt) */
			MOV64_REG(4, 10),
			ALU64_IMM(BPF_ADD, 4, -64),
			ALU64_REG(BPF_ADD, 4, 3),	/* r10 - 64 + [0, 255] */
			ST(BPF_B, 4, 0, 1),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(3, 1, 2, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS), FAULT(64, 0, 0xff, 0, MEM, 5) },
	},
	{
		"stack at a bounded variable offset: proven",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 1),
			JMP_REG(BPF_JGT, 4, 3, 6),
			LDX(BPF_B, 3, 2, 0),
			ALU64_IMM(BPF_AND, 3, 31),
			MOV64_REG(4, 10),
			ALU64_IMM(BPF_ADD, 4, -32),
			ALU64_REG(BPF_ADD, 4, 3),
			ST(BPF_B, 4, 0, 1),
			EXIT,
		},
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_DROP) },
	},
	{
		"a bounded loop gets a budget",
		{
			MOV64_IMM(0, 0),
			MOV64_IMM(1, 0),
			ALU64_IMM(BPF_ADD, 0, 3),
			ALU64_IMM(BPF_ADD, 1, 1),
			JMP_IMM(BPF_JLT, 1, 10, -3),
			ALU64_IMM(BPF_AND, 0, 3),
			EXIT,
		},
		ACCEPT, NULL, C(0, 0, 0, 1),
		.runs = { RUN(0, -1, 0, 0, 2) },
	},
	{
		"a loop over a map value, indexed by its counter: proven",
		{
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 9),
			MOV64_IMM(1, 0),
			MOV64_IMM(3, 0),
			MOV64_REG(2, 0),		/* loop: */
			ALU64_REG(BPF_ADD, 2, 1),
			LDX(BPF_B, 4, 2, 0),
			ALU64_REG(BPF_ADD, 3, 4),
			ALU64_IMM(BPF_ADD, 1, 1),
			JMP_IMM(BPF_JLT, 1, 16, -6),
			MOV64_REG(0, 3),
			EXIT,
		},
		ACCEPT, NULL, C(2, 2, 0, 1),
		.runs = { RUN(64, -1, 0, 0, 114) },
	},
	{
		"an unbounded loop is accepted (the budget ends it)",
		{ MOV64_IMM(0, 0), JA(-1) },
		ACCEPT, NULL, C(0, 0, 0, 1),
		.runs = { FAULT(0, -1, 0, 0, BUDGET, 1) },
	},
	{
		"a shift by a register below the width keeps its bound: a packet offset",
		{ SHIFT_PKT(3) },
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 0x3200), RUN(17, -1, 0, 0, 1) },
	},
	{
		"a shift by a register that may reach the width bounds nothing: checked",
		{ SHIFT_PKT(64) },
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0x0201) },
	},
	{
		"twelve paths into one block, no loop: not widened, the offset stays bounded",
		{
			CTX_DATA(2),
			CTX_END(3),
			ST(BPF_DW, 10, -16, 7),
			ST(BPF_DW, 10, -8, 7),
			MOV64_IMM(0, 0),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 1),
			JMP_REG(BPF_JGT, 4, 3, 42),		/* to 50 */
			LDX(BPF_B, 5, 2, 0),
			JMP_IMM(BPF_JEQ, 5, 101, 12),
			JMP_IMM(BPF_JEQ, 5, 102, 13),
			JMP_IMM(BPF_JEQ, 5, 103, 14),
			JMP_IMM(BPF_JEQ, 5, 104, 15),
			JMP_IMM(BPF_JEQ, 5, 105, 16),
			JMP_IMM(BPF_JEQ, 5, 106, 17),
			JMP_IMM(BPF_JEQ, 5, 107, 18),
			JMP_IMM(BPF_JEQ, 5, 108, 19),
			JMP_IMM(BPF_JEQ, 5, 109, 20),
			JMP_IMM(BPF_JEQ, 5, 110, 21),
			JMP_IMM(BPF_JEQ, 5, 111, 22),
			JMP_IMM(BPF_JEQ, 5, 112, 23),
			JA(24),		/* 21: to 46 */
			MOV64_IMM(0, 1),
			JA(22),
			MOV64_IMM(0, 2),
			JA(20),
			MOV64_IMM(0, 3),
			JA(18),
			MOV64_IMM(0, 4),
			JA(16),
			MOV64_IMM(0, 5),
			JA(14),
			MOV64_IMM(0, 6),
			JA(12),
			MOV64_IMM(0, 7),
			JA(10),
			MOV64_IMM(0, 8),
			JA(8),
			MOV64_IMM(0, 9),
			JA(6),
			MOV64_IMM(0, 10),
			JA(4),
			MOV64_IMM(0, 11),
			JA(2),
			MOV64_IMM(0, 12),
			JA(0),
			MOV64_REG(6, 10),		/* 46: the join */
			ALU64_IMM(BPF_ADD, 6, -16),
			ALU64_REG(BPF_ADD, 6, 0),
			LDX(BPF_B, 0, 6, 0),		/* fp - 16 + [0, 12] */
			EXIT,
		},
		ACCEPT, NULL, C(6, 6, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 7), RUN(64, 0, 105, 0, 0) },
	},
	{
		"a backward jump that closes no cycle costs no budget",
		{
			MOV64_IMM(0, 0),
			JA(2),				/* to 4 */
			MOV64_IMM(0, 2),		/* 2: a shared tail */
			EXIT,
			MOV64_IMM(0, 1),		/* 4 */
			JA(-4),				/* to 2: no loop */
		},
		ACCEPT, NULL, C(0, 0, 0, 0),
		.runs = { RUN(0, -1, 0, 0, 2) },
	},
	{
		"a loop the walk closes on a fall-through is budgeted there",
		{
			MOV64_IMM(0, 0),
			JA(2),				/* to 4 */
			ALU64_IMM(BPF_ADD, 0, 1),	/* 2: the body */
			MOV64_REG(1, 0),		/* 3 */
			JMP_IMM(BPF_JLT, 0, 5, -3),	/* 4: to 2 */
			EXIT,
		},
		ACCEPT, NULL, C(0, 0, 0, 1),
		.runs = { RUN(0, -1, 0, 0, 5) },
	},
	{
		"a loop closed on the fall-through of a checked access: budget, then check",
		{
			CTX_DATA(2),
			MOV64_IMM(0, 0),
			JA(1),				/* to 4 */
			LDX(BPF_B, 3, 2, 0),		/* 3: checked */
			ALU64_IMM(BPF_ADD, 0, 1),	/* 4 */
			JMP_IMM(BPF_JLT, 0, 5, -3),	/* to 3 */
			EXIT,
		},
		ACCEPT, NULL, C(2, 1, 1, 1),
		.runs = { RUN(64, -1, 0, 0, 5) },
	},
	{
		"an unbounded loop closed on a fall-through: the budget ends it",
		{
			MOV64_IMM(0, 0),
			JA(1),				/* to 3 */
			ALU64_IMM(BPF_ADD, 0, 1),	/* 2 */
			JA(-2),				/* 3: to 2 */
		},
		ACCEPT, NULL, C(0, 0, 0, 1),
		.runs = { FAULT(0, -1, 0, 0, BUDGET, 2) },
	},
	{
		"bpf-to-bpf: the callee reads the context and a packet pointer",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 2),
			MOV64_REG(2, 2),
			CALL_LOCAL(1),
			EXIT,
			/* f(ctx, data): */
			LDX(BPF_W, 3, 1, 16),		/* rx_queue_index */
			LDX(BPF_H, 0, 2, 12),		/* proven in main */
			ALU64_REG(BPF_ADD, 0, 3),
			EXIT,
		},
		ACCEPT, NULL, C(4, 4, 0, 0),
		.runs = { RUN(64, -1, 0, 0, 11), RUN(10, -1, 0, 0, XDP_DROP) },
	},
	{
		"bpf-to-bpf: a callee's write through a pointer kills the "
		"caller's spill",
		{
			CTX_DATA(2),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 7),
			STX(BPF_DW, 10, 2, -8),		/* spill data */
			MOV64_REG(1, 10),
			ALU64_IMM(BPF_ADD, 1, -8),
			CALL_LOCAL(4),
			LDX(BPF_DW, 6, 10, -8),		/* a number now */
			LDX(BPF_B, 0, 6, 0),		/* checked */
			MOV64_IMM(0, XDP_PASS),
			EXIT,
			/* f(p): *p = 0x1234 */
			ST(BPF_DW, 1, 0, 0x1234),
			MOV64_IMM(0, 0),
			EXIT,
		},
		ACCEPT, NULL, C(6, 5, 1, 0),
		.runs = { FAULT(64, -1, 0, 0, MEM, 11) },
	},
	{
		"xdp_adjust_head makes every packet pointer stale",
		{
			MOV64_REG(6, 1),
			CTX_DATA(7),
			CTX_END(3),
			MOV64_IMM(0, XDP_DROP),
			MOV64_REG(4, 7),
			ALU64_IMM(BPF_ADD, 4, 14),
			JMP_REG(BPF_JGT, 4, 3, 5),
			LDX(BPF_B, 0, 7, 0),		/* proven */
			MOV64_IMM(2, 4),
			CALL(BPF_FUNC_xdp_adjust_head),
			LDX(BPF_B, 0, 7, 0),		/* checked */
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { FAULT(64, -1, 0, 0, MEM, 10) },
	},
	{
		"a helper writes into the stack: the spill there goes",
		{
			MOV64_REG(6, 1),
			CTX_DATA(2),
			STX(BPF_DW, 10, 2, -16),
			MOV64_REG(1, 6),
			MOV64_IMM(2, 0),
			MOV64_REG(3, 10),
			ALU64_IMM(BPF_ADD, 3, -16),
			MOV64_IMM(4, 16),
			CALL(BPF_FUNC_xdp_load_bytes),
			LDX(BPF_DW, 2, 10, -16),
			LDX(BPF_B, 0, 2, 0),		/* unknown: checked */
			EXIT,
		},
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { FAULT(64, -1, 0, 0, MEM, 10) },
	},
	{
		"trace_printk of a .rodata string",
		{
			LD_MAP_VALUE(1, M_RODATA, 0),
			MOV64_IMM(2, 8),
			CALL(BPF_FUNC_trace_printk),
			MOV64_IMM(0, XDP_PASS),
			EXIT,
		},
		ACCEPT, NULL, C(0, 0, 0, 0),
		.runs = { RUN(64, -1, 0, 0, XDP_PASS) },
	},
	{
		"redirect_map through an array (the kernel's map rule)",
		{
			MOV64_REG(6, 1),
			LD_MAP(2, M_PROGS),
			MOV64_IMM(3, 1),
			CALL(BPF_FUNC_tail_call),
			LD_MAP(1, M_ARR),
			MOV64_IMM(2, 0),
			MOV64_IMM(3, 0),
			CALL(BPF_FUNC_redirect_map),
			EXIT,
		},
		REJECT, "redirect_map takes a devmap, a devmap_hash or an xskmap",
		.runs = { RUN(64, -1, 0, 0, 0) },
	},
	{
		"a branch never taken: its access is checked all the same",
		{
			MOV64_IMM(0, 0),
			JMP_IMM(BPF_JNE, 0, 0, 1),
			EXIT,
			LDX(BPF_B, 0, 5, 0),		/* r5 never set */
			EXIT,
		},
		ACCEPT, NULL, C(1, 0, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 0) },
	},
	{
		"a register set on one path only: read as a number",
		{
			CTX_DATA(2),
			LDX(BPF_B, 3, 2, 0),
			JMP_IMM(BPF_JEQ, 3, 0, 1),
			MOV64_IMM(4, 1),
			MOV64_REG(0, 4),
			EXIT,
		},
		ACCEPT, NULL, C(2, 1, 1, 0),
		.runs = { RUN(64, -1, 0, 0, 1) },
	},
	{
		"an atomic on the stack and a cmpxchg",
		{
			ST(BPF_DW, 10, -8, 0),
			MOV64_IMM(1, 5),
			ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 10, 1, -8),
			MOV64_IMM(0, 0),
			ATOMIC(BPF_W, BPF_CMPXCHG, 10, 1, -8),
			ALU64_IMM(BPF_AND, 0, 3),
			EXIT,
		},
		ACCEPT, NULL, C(3, 3, 0, 0),
		.runs = { RUN(0, -1, 0, 0, 1) },
	},
	{
		"raw context: memory from r1 is checked, the stack proven",
		{
			LDX(BPF_W, 0, 1, 4),
			STX(BPF_DW, 10, 0, -8),
			LDX(BPF_DW, 0, 10, -8),
			EXIT,
		},
		ACCEPT, NULL, C(3, 2, 1, 0), UXDP_BPF_CTX_RAW,
		.runs = { RUN(8, -1, 0, 0, 0x00020100), FAULT(6, -1, 0, 0, MEM, 0) },
	},
	{
		"cpu v4 with the flag",
		{
			MOV64_IMM(0, 1),
			INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 0, 8, 0),
			EXIT,
		},
		ACCEPT, NULL, C(0, 0, 0, 0), UXDP_BPF_CTX_RAW,
		UXDP_BPF_BUILD_F_V4,
		.runs = { RUN(0, -1, 0, 0, 1) },
	},

	/* ---- refused: what the kernel refuses of an XDP program ---- */
	{
		"write to xdp_md",
		{ ST(BPF_W, 1, 0, 0), MOV64_IMM(0, 2), EXIT },
		REJECT, "insn 0 (stw [%r1+0], 0): write to xdp_md: the kernel "
			"would refuse it",
	},
	{
		"atomic on xdp_md",
		{ MOV64_IMM(2, 1), ATOMIC(BPF_W, BPF_ADD, 1, 2, 12),
		  MOV64_IMM(0, 2), EXIT },
		REJECT, "insn 1 (lock add32 [%r1+12], %r2): write to xdp_md",
	},
	{
		"read past xdp_md",
		{ LDX(BPF_W, 0, 1, 24), EXIT },
		REJECT, "insn 0 (ldxw %r0, [%r1+24]): read past xdp_md",
	},
	{
		"read of half an xdp_md field",
		{ LDX(BPF_H, 0, 1, 0), EXIT },
		REJECT, "kernel reads only its u32 fields",
	},
	{
		"read of xdp_md through a moved pointer",
		{ ALU64_IMM(BPF_ADD, 1, 4), LDX(BPF_W, 0, 1, 0), EXIT },
		REJECT, "insn 1 (ldxw %r0, [%r1+0]): dereference of a modified "
			"context pointer",
	},
	{
		"an uninitialised register",
		{ MOV64_REG(0, 5), EXIT },
		REJECT, "insn 0 (mov %r0, %r5): R5 is not initialised",
	},
	{
		"an uninitialised pointer",
		{ LDX(BPF_B, 0, 4, 0), EXIT },
		REJECT, "R4 is not initialised",
	},
	{
		"r0 uninitialised at exit",
		{ EXIT },
		REJECT, "insn 0 (exit): R0 is not initialised at exit",
	},
	{
		"returning a pointer from an XDP program",
		{ CTX_DATA(0), EXIT },
		REJECT, "R0 is pkt at exit: an XDP program returns an action",
	},
	{
		"a map value used before its null check",
		{ LOOKUP0(M_ARR), LDX(BPF_DW, 0, 0, 0), EXIT },
		REJECT, "insn 6 (ldxdw %r0, [%r0+0]): R0 may be NULL",
	},
	{
		"a null check of another lookup's result",
		{
			LOOKUP0(M_ARR),
			MOV64_REG(6, 0),
			LOOKUP0(M_ARR),
			JMP_IMM(BPF_JEQ, 0, 0, 1),
			LDX(BPF_DW, 0, 6, 0),
			EXIT,
		},
		REJECT, "insn 14 (ldxdw %r0, [%r6+0]): R6 may be NULL",
	},
	{
		"a map value read past value_size",
		{ LOOKUP0(M_ARR), JMP_IMM(BPF_JEQ, 0, 0, 1),
		  LDX(BPF_DW, 0, 0, 9), EXIT },
		REJECT, "access to map arr's value at off 9 size 8: its "
			"value_size is 16",
	},
	{
		"a write into .rodata",
		{ LD_MAP_VALUE(1, M_RODATA, 0), ST(BPF_B, 1, 3, 0),
		  MOV64_IMM(0, 0), EXIT },
		REJECT, "insn 2 (stb [%r1+3], 0): write into read-only map "
			".rodata",
	},
	{
		"a stack write below the frame",
		{ ST(BPF_DW, 10, -520, 0), MOV64_IMM(0, 0), EXIT },
		REJECT, "stack access at -520 size 8: outside the frame",
	},
	{
		"a stack read above r10",
		{ LDX(BPF_W, 0, 10, -2), EXIT },
		REJECT, "stack access at -2 size 4: outside the frame",
	},
	{
		"a read through data_end",
		{ CTX_END(2), LDX(BPF_B, 0, 2, -1), EXIT },
		REJECT, "R2 is pkt_end",
	},
	{
		"a read through a map pointer",
		{ LD_MAP(2, M_ARR), LDX(BPF_W, 0, 2, 0), EXIT },
		REJECT, "R2 points to map arr, not to a value",
	},
	{
		"an atomic on the packet",
		{
			CTX_DATA(2), CTX_END(3), MOV64_REG(4, 2),
			ALU64_IMM(BPF_ADD, 4, 8), MOV64_IMM(0, 1),
			JMP_REG(BPF_JGT, 4, 3, 1),
			ATOMIC(BPF_DW, BPF_ADD, 2, 0, 0),
			EXIT,
		},
		REJECT, "atomic operation on packet memory",
	},
	{
		"a misaligned atomic on the stack",
		{ ST(BPF_DW, 10, -16, 0), MOV64_IMM(1, 1),
		  ATOMIC(BPF_W, BPF_ADD, 10, 1, -10), MOV64_IMM(0, 0), EXIT },
		REJECT, "insn 2 (lock add32 [%r10-10], %r1): misaligned atomic "
			"at off -10 size 4",
	},
	{
		/* In bounds, which the pass proves, but at an offset it does
		 * not know the alignment of: a check of the alignment alone
		 * (a misaligned locked add is a bus lock). */
		"an atomic at a variable offset into a value: alignment checked",
		{ CTX_DATA(2), CTX_END(3), MOV64_IMM(0, 2), MOV64_REG(4, 2),
		  ALU64_IMM(BPF_ADD, 4, 1), JMP_REG(BPF_JGT, 4, 3, 7),
		  LDX(BPF_B, 5, 2, 0), ALU64_IMM(BPF_AND, 5, 0x34),
		  LD_MAP_VALUE(3, M_BSS, 0), ALU64_REG(BPF_ADD, 3, 5),
		  MOV64_IMM(4, 1), ATOMIC(BPF_DW, BPF_ADD, 3, 4, 0), EXIT },
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { RUN(64, 0, 0x30, 0, 2), FAULT(64, 0, 0x04, 0, MEM, 12),
			  FAULT(64, 0, 0x14, 0, MEM, 12) },
	},
	{
		"a 4-byte atomic at a variable offset: 4-aligned passes",
		{ CTX_DATA(2), CTX_END(3), MOV64_IMM(0, 2), MOV64_REG(4, 2),
		  ALU64_IMM(BPF_ADD, 4, 1), JMP_REG(BPF_JGT, 4, 3, 7),
		  LDX(BPF_B, 5, 2, 0), ALU64_IMM(BPF_AND, 5, 0x36),
		  LD_MAP_VALUE(3, M_BSS, 0), ALU64_REG(BPF_ADD, 3, 5),
		  MOV64_IMM(4, 1), ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 3, 4, 0),
		  EXIT },
		ACCEPT, NULL, C(4, 3, 1, 0),
		.runs = { RUN(64, 0, 0x04, 0, 2), FAULT(64, 0, 0x02, 0, MEM, 12),
			  RUN(64, 0, 0x34, 0, 2) },
	},
	{
		"a key that is not memory",
		{ MOV64_IMM(2, 0), LD_MAP(1, M_ARR),
		  CALL(BPF_FUNC_map_lookup_elem), MOV64_IMM(0, 0), EXIT },
		REJECT, "insn 3 (call 1): R2 (scalar) is not 4 readable bytes "
			"of a key for map_lookup_elem",
	},
	{
		"a key past the stack",
		{ MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -2), LD_MAP(1, M_ARR),
		  CALL(BPF_FUNC_map_lookup_elem), MOV64_IMM(0, 0), EXIT },
		REJECT, "R2 (fp) is not 4 readable bytes of a key",
	},
	{
		"a helper argument uninitialised",
		{ LD_MAP(1, M_ARR), CALL(BPF_FUNC_map_lookup_elem),
		  MOV64_IMM(0, 0), EXIT },
		REJECT, "R2 (argument 2 of map_lookup_elem) is not initialised",
	},
	{
		"a helper that wants the context",
		{ MOV64_IMM(1, 0), MOV64_IMM(2, 0),
		  CALL(BPF_FUNC_xdp_adjust_head), MOV64_IMM(0, 0), EXIT },
		REJECT, "R1 is scalar: xdp_adjust_head takes the context",
	},
	{
		"a helper size with no bound",
		{ MOV64_REG(6, 1), CTX_DATA(2), LDX(BPF_DW, 4, 10, -8),
		  MOV64_REG(1, 6), MOV64_IMM(2, 0), MOV64_REG(3, 10),
		  ALU64_IMM(BPF_ADD, 3, -16), CALL(BPF_FUNC_xdp_load_bytes),
		  MOV64_IMM(0, 0), EXIT },
		REJECT, "R4 (a size for xdp_load_bytes) is not bounded",
	},
	{
		"a tail call through an array",
		{ LD_MAP(2, M_ARR), MOV64_IMM(3, 0), CALL(BPF_FUNC_tail_call),
		  MOV64_IMM(0, 0), EXIT },
		REJECT, "tail call through map arr, not a prog_array",
	},
	{
		"a hash value at a variable offset (no region)",
		{ ST(BPF_DW, 10, -8, 0), MOV64_REG(2, 10),
		  ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, M_HASH),
		  CALL(BPF_FUNC_map_lookup_elem), JMP_IMM(BPF_JEQ, 0, 0, 3),
		  LDX(BPF_B, 1, 0, 0), ALU64_REG(BPF_ADD, 0, 1),
		  LDX(BPF_B, 0, 0, 0), EXIT },
		REJECT, "variable access into map hash's value",
	},
	{
		"a kfunc call",
		{ INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1234),
		  EXIT },
		REJECT, "insn 0 (call kfunc 1234): kfunc calls are not supported",
	},
	{
		"a helper out of scope, by name",
		{ CALL(BPF_FUNC_sk_lookup_tcp), EXIT },
		REJECT, "insn 0 (call 84): helper sk_lookup_tcp is not supported",
	},
	{
		"a helper no kernel has",
		{ CALL(100000), EXIT },
		REJECT, "helper 100000 is not supported",
	},
	{
		"lddw of a map by fd",
		{ INSN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 3),
		  INSN(0, 0, 0, 0, 0), MOV64_IMM(0, 0), EXIT },
		REJECT, "lddw with src 1",
	},
	{
		"lddw of a map the program does not have",
		{ LD_MAP(1, NMAPS), MOV64_IMM(0, 0), EXIT },
		REJECT, "map index 7: the program has 7 maps",
	},
	{
		"direct value access to an array of four",
		{ LD_MAP_VALUE(1, M_ARR, 0), MOV64_IMM(0, 0), EXIT },
		REJECT, "direct value access to map arr: not an array of one",
	},
	{
		"direct value access past the value",
		{ LD_MAP_VALUE(1, M_BSS, 64), MOV64_IMM(0, 0), EXIT },
		REJECT, "offset 64 past map .bss's value (64 bytes)",
	},
	{
		"an unknown opcode",
		{ INSN(0x8d, 0, 1, 0, 0), EXIT },
		REJECT, "insn 0 (call %r0): callx",
	},
	{
		"a legacy packet load",
		{ INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 12), EXIT },
		REJECT, "legacy packet load",
	},
	{
		"an internal opcode in the input",
		{ INSN(UXDP_BPF_OP_BUDGET, 0, 0, 0, 0), MOV64_IMM(0, 0), EXIT },
		REJECT, "uxdp's own",
	},
	{
		"cpu v4 without the flag",
		{ MOV64_IMM(0, 1), INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 0, 8, 0),
		  EXIT },
		REJECT, "insn 1 (movsx864 %r0, %r0): a cpu v4 instruction",
	},
	{
		"a jump out of the program",
		{ MOV64_IMM(0, 0), JA(5), EXIT },
		REJECT, "insn 1 (ja +5): jump to 7: outside the program",
	},
	{
		"a jump into the middle of an lddw",
		{ MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, 1), LDDW(1, 1ULL << 40),
		  EXIT },
		REJECT, "jump into the middle of the lddw at insn 2",
	},
	{
		"falling off the end",
		{ MOV64_IMM(0, 0), MOV64_IMM(1, 0) },
		REJECT, "insn 1 (mov %r1, 0): the function falls off its end",
	},
	{
		"an unreachable instruction",
		{ MOV64_IMM(0, 0), EXIT, MOV64_IMM(0, 1), EXIT },
		REJECT, "insn 2 (mov %r0, 1): unreachable instruction",
	},
	{
		"a jump into another function",
		{ MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, 2), CALL_LOCAL(1),
		  EXIT, MOV64_IMM(0, 0), EXIT },
		REJECT, "insn 1 (jeq %r0, 0, +2): jump to 4: out of its "
			"function",
	},
	{
		"a call into an lddw",
		{ CALL_LOCAL(2), EXIT, LDDW(0, 1), EXIT },
		REJECT, "insn 2 (lddw %r0, 0x1): a call lands in the middle",
	},
	{
		"recursion",
		{ MOV64_IMM(0, 0), CALL_LOCAL(1), EXIT, CALL_LOCAL(-1), EXIT },
		REJECT, "insn 3 (call local -1): recursive call",
	},
	{
		"calls nine frames deep",
		{
			MOV64_IMM(0, 0), CALL_LOCAL(1), EXIT,
			CALL_LOCAL(1), EXIT,	/* 2 */
			CALL_LOCAL(1), EXIT,	/* 3 */
			CALL_LOCAL(1), EXIT,	/* 4 */
			CALL_LOCAL(1), EXIT,	/* 5 */
			CALL_LOCAL(1), EXIT,	/* 6 */
			CALL_LOCAL(1), EXIT,	/* 7 */
			CALL_LOCAL(1), EXIT,	/* 8 */
			MOV64_IMM(0, 0), EXIT,	/* 9 */
		},
		REJECT, "insn 15 (call local +1): calls nest 9 deep (at most 8 "
			"frames)",
	},
	{
		"a callee returning its own stack",
		{ CALL_LOCAL(2), MOV64_IMM(0, 0), EXIT,
		  MOV64_REG(0, 10), ALU64_IMM(BPF_ADD, 0, -8), EXIT },
		REJECT, "insn 5 (exit): returns a pointer to its own stack",
	},
	{
		"one load reading the context and the packet",
		{
			CTX_DATA(6), CALL_LOCAL(4), MOV64_REG(1, 6),
			CALL_LOCAL(2), MOV64_IMM(0, 0), EXIT,
			LDX(BPF_W, 0, 1, 0), EXIT,
		},
		REJECT, "insn 6 (ldxw %r0, [%r1+0]): the same load reads the "
			"context and other memory",
	},
};

/* ---- running a case ------------------------------------------------------ */

static uint32_t case_len(const struct tcase *t)
{
	uint32_t n = MAX_T_INSNS;

	while (n && !t->insns[n - 1].code && !t->insns[n - 1].imm)
		n--;
	return n;
}

static void build_of(const struct tcase *t, struct uxdp_bpf_build *b)
{
	memset(b, 0, sizeof(*b));
	b->name = "t";
	b->insns = t->insns;
	b->len = case_len(t);
	b->ctx_kind = t->ctx;
	b->maps = test_maps;
	b->nmaps = NMAPS;
	b->helper = test_helper;
	b->flags = t->flags;
}

/* The first instruction made for program instruction @orig. */
static uint32_t first_of(const struct uxdp_bpf_code *c, uint32_t orig)
{
	uint32_t k;

	for (k = 0; k < c->len; k++)
		if (c->orig_idx[k] == orig)
			return k;
	return UINT32_MAX;
}


static void assert_no_unbudgeted_cycle(const char *name,
				       const struct uxdp_bpf_code *c)
{
	uint32_t from = 0, to = 0;
	int ret = t_bpf_unbudgeted_cycle(c, &from, &to);

	assert_int_not_equal(ret, -1);
	if (ret)
		fail_msg("%s: insn %u -> %u closes a cycle with no budget "
			 "step", name, from, to);
}

/*
 * The fixed-up code against its program: instructions valid (internal
 * ones allowed), in program order, every jump and call aimed at the
 * first instruction made for its old target, checks only before
 * accesses, budgets only before backward jumps.
 */
static void verify_code(const struct tcase *t, const struct uxdp_bpf_build *b)
{
	const struct uxdp_bpf_code *c = b->code;
	uint32_t k, checks = 0, budgets = 0;

	assert_non_null(c);
	assert_string_equal(c->name, "t");
	assert_true(c->len >= b->len);
	assert_true(c->stack_size <= UXDP_BPF_STACK);
	assert_true(c->budget == UXDP_BPF_DEFAULT_BUDGET);
	for (k = 0; k < c->len; k++) {
		const struct bpf_insn *in = &c->insns[k];
		const struct bpf_insn *old = &b->insns[c->orig_idx[k]];
		const char *why = NULL;
		int64_t t0, t1;

		assert_true(c->orig_idx[k] < b->len);
		if (k)
			assert_true(c->orig_idx[k] >= c->orig_idx[k - 1]);
		if (uxdp_bpf_insn_valid(in, c->len - k, true, &why))
			fail_msg("%s: insn %u: %s", t->name, k, why);
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			assert_int_equal(in->src_reg, 0);
			assert_int_equal(c->orig_idx[k + 1], c->orig_idx[k] + 1);
			k++;	/* its second slot */
			continue;
		}
		if (in->code == UXDP_BPF_OP_CHECK) {
			uint8_t nc = BPF_CLASS(c->insns[k + 1].code);

			checks++;
			assert_int_equal(c->orig_idx[k + 1], c->orig_idx[k]);
			/* right before the access it guards */
			if (nc != BPF_LDX && nc != BPF_ST && nc != BPF_STX)
				fail_msg("%s: check at %u before 0x%02x",
					 t->name, k, c->insns[k + 1].code);
			continue;
		}
		if (in->code == UXDP_BPF_OP_BUDGET) {
			budgets++;
			continue;
		}
		if (in->code == (BPF_JMP | BPF_CALL) &&
		    in->src_reg == BPF_PSEUDO_CALL) {
			t0 = (int64_t)c->orig_idx[k] + 1 + old->imm;
			t1 = (int64_t)k + 1 + in->imm;
		} else if ((BPF_CLASS(in->code) == BPF_JMP ||
			    BPF_CLASS(in->code) == BPF_JMP32) &&
			   BPF_OP(in->code) != BPF_CALL &&
			   BPF_OP(in->code) != BPF_EXIT &&
			   in->code != UXDP_BPF_OP_TAIL_CALL) {
			bool j32 = in->code == (BPF_JMP32 | BPF_JA);

			t0 = (int64_t)c->orig_idx[k] + 1 +
			     (j32 ? old->imm : old->off);
			t1 = (int64_t)k + 1 + (j32 ? in->imm : in->off);
		} else {
			continue;
		}
		assert_true(t1 >= 0 && t1 < c->len);
		if ((uint32_t)t1 != first_of(c, (uint32_t)t0))
			fail_msg("%s: insn %u jumps to %lld, wants %u", t->name,
				 k, (long long)t1, first_of(c, (uint32_t)t0));
	}
	assert_int_equal(checks, b->stats.checked);
	assert_int_equal(budgets, b->stats.back_edges);
	assert_no_unbudgeted_cycle(t->name, c);
}

/* The test packet: Ethernet, IPv4, UDP from port 12345 to 53. */
static const uint8_t test_pkt[64] = {
	0x02, 0x00, 0x01, 0x02, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x32, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
	0x30, 0x39, 0x00, 0x35, 0x00, 0x1e, 0xab, 0xcd,
	'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n',
	'o', 'p', 'q', 'r', 's', 't', 'u', 'v',
};

#define T_HEADROOM	256

static struct uxdp_rxq_info test_rxq = { .queue_index = 3, .ifindex = 7 };

/*
 * Run @c as @r says. The buffer ends where the packet does, so a read or
 * write past it that no check stopped is AddressSanitizer's to see.
 */
static void run_one(const struct tcase *t, const struct uxdp_bpf_code *c,
		    const struct trun *r)
{
	uint8_t *buf = malloc(T_HEADROOM + r->len + 1), *pkt;
	struct uxdp_bpf_run run = { .code = c };
	struct uxdp_buff x;
	uint64_t r0;
	uint32_t i;

	assert_non_null(buf);
	pkt = buf + T_HEADROOM;
	memcpy(pkt, test_pkt, MIN(r->len, sizeof(test_pkt)));
	if (r->patch_at >= 0)
		pkt[r->patch_at] = r->patch;
	for (i = 0; i < sizeof(arr_values); i++)
		arr_values[i] = (uint8_t)i;
	memcpy(arr_values, &r->arr0, sizeof(r->arr0));
	memset(bss_values, 0, sizeof(bss_values));
	if (c->ctx_kind == UXDP_BPF_CTX_RAW) {
		/* Raw memory is the packet itself, nothing around it. */
		memmove(buf, pkt, r->len);
		run.mem = buf;
		run.mem_len = r->len;
		r0 = uxdp_bpf_interp_run(&run, (uintptr_t)buf, r->len);
	} else {
		x = (struct uxdp_buff){
			.data = pkt, .data_end = pkt + r->len, .data_meta = pkt,
			.data_hard_start = buf, .rxq = &test_rxq,
			.frame_sz = T_HEADROOM + r->len,
		};
		run.ctx = &x;
		r0 = uxdp_bpf_interp_run(&run, (uintptr_t)&x, 0);
	}
	if (run.fault != r->fault)
		fail_msg("%s: len %u: fault %u at %u (insn %u), want %u", t->name,
			 r->len, run.fault, run.fault_pc,
			 run.fault ? c->orig_idx[run.fault_pc] : 0, r->fault);
	if (run.fault && c->orig_idx[run.fault_pc] != r->fault_at)
		fail_msg("%s: len %u: fault at insn %u, want %u", t->name,
			 r->len, c->orig_idx[run.fault_pc], r->fault_at);
	if (!run.fault && r0 != r->r0)
		fail_msg("%s: len %u: r0 0x%llx, want 0x%llx", t->name, r->len,
			 (unsigned long long)r0, (unsigned long long)r->r0);
	free(buf);
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct tcase *t = &cases[i];
		struct uxdp_bpf_build b;
		int ret;

		build_of(t, &b);
		ret = uxdp_bpf_prepare(&b);
		if (t->result == REJECT) {
			int want = t->errnum ? t->errnum : EINVAL;

			if (ret != -want)
				fail_msg("%s: prepare %d, want %d (%s)", t->name,
					 ret, -want, ret ? uxdp_errmsg() : "");
			assert_null(b.code);
			if (!strstr(uxdp_errmsg(), t->err))
				fail_msg("%s: \"%s\" does not say \"%s\"",
					 t->name, uxdp_errmsg(), t->err);
			assert_true(!strncmp(uxdp_errmsg(), "prog t: ", 8));
			if (getenv("T_VERBOSE"))
				print_message("%s\n", uxdp_errmsg());
			continue;
		}
		if (ret)
			fail_msg("%s: refused: %s", t->name, uxdp_errmsg());
		if (b.stats.accesses != t->stats.accesses ||
		    b.stats.proven != t->stats.proven ||
		    b.stats.checked != t->stats.checked ||
		    b.stats.back_edges != t->stats.back_edges)
			fail_msg("%s: accesses %u proven %u checked %u back "
				 "edges %u; want %u %u %u %u", t->name,
				 b.stats.accesses, b.stats.proven,
				 b.stats.checked, b.stats.back_edges,
				 t->stats.accesses, t->stats.proven,
				 t->stats.checked, t->stats.back_edges);
		assert_int_equal(b.stats.accesses,
				 b.stats.proven + b.stats.checked);
		if (getenv("T_VERBOSE"))
			print_message("%-70.70s %u/%u/%u/%u\n", t->name,
				      b.stats.accesses, b.stats.proven,
				      b.stats.checked, b.stats.back_edges);
		verify_code(t, &b);
		for (size_t k = 0; k < ARRAY_SIZE(t->runs) && t->runs[k].on;
		     k++)
			run_one(t, b.code, &t->runs[k]);
		uxdp_bpf_code_free(b.code);
	}
}

/* ---- the rewrites, one by one -------------------------------------------- */

static struct uxdp_bpf_code *prepare_ok(const struct bpf_insn *insns,
					uint32_t len, struct uxdp_bpf_build *b)
{
	memset(b, 0, sizeof(*b));
	b->name = "t";
	b->insns = insns;
	b->len = len;
	b->maps = test_maps;
	b->nmaps = NMAPS;
	b->helper = test_helper;
	if (uxdp_bpf_prepare(b))
		fail_msg("refused: %s", uxdp_errmsg());
	return b->code;
}

static void test_rewrites(void **state)
{
	const struct bpf_insn prog[] = {
		CTX_DATA(2),			/* 0: ldx_ctx data */
		LDX(BPF_W, 3, 1, 12),		/* 1: ldx_ctx ifindex */
		LD_MAP(1, M_ARR),		/* 2: the map's address */
		LD_MAP_VALUE(4, M_BSS, 8),	/* 4: the value's */
		CALL(BPF_FUNC_ktime_get_ns),	/* 6: slot 0 */
		ST(BPF_W, 10, -4, 0),
		MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4),
		LD_MAP(1, M_ARR),
		CALL(BPF_FUNC_map_lookup_elem),	/* 12: slot 1 */
		CALL(BPF_FUNC_ktime_get_ns),	/* 13: slot 0 again */
		MOV64_IMM(0, 2),
		EXIT,
	};
	struct uxdp_bpf_build b;
	struct uxdp_bpf_code *c;
	uint64_t v;

	(void)state;
	c = prepare_ok(prog, ARRAY_SIZE(prog), &b);
	/* Nothing unproven, no loop: one for one. */
	assert_int_equal(c->len, ARRAY_SIZE(prog));
	assert_int_equal(c->insns[0].code, UXDP_BPF_OP_LDX_CTX);
	assert_int_equal(c->insns[0].imm, UXDP_BPF_CTX_DATA);
	assert_int_equal(c->insns[0].dst_reg, 2);
	assert_int_equal(c->insns[0].src_reg, 1);
	assert_int_equal(c->insns[1].imm, UXDP_BPF_CTX_INGRESS_IFINDEX);
	v = (uint32_t)c->insns[2].imm | (uint64_t)(uint32_t)c->insns[3].imm << 32;
	assert_int_equal(c->insns[2].src_reg, 0);
	assert_ptr_equal((void *)(uintptr_t)v, &fake_map[M_ARR]);
	v = (uint32_t)c->insns[4].imm | (uint64_t)(uint32_t)c->insns[5].imm << 32;
	assert_int_equal(c->insns[4].src_reg, 0);
	assert_ptr_equal((void *)(uintptr_t)v, bss_values + 8);
	assert_int_equal(c->nhelpers, 2);
	assert_int_equal(c->insns[6].imm, 0);
	assert_int_equal(c->insns[12].imm, 1);
	assert_int_equal(c->insns[13].imm, 0);
	assert_ptr_equal(c->helpers[0], test_helper(BPF_FUNC_ktime_get_ns));
	assert_ptr_equal(c->helpers[1],
			 test_helper(BPF_FUNC_map_lookup_elem));
	/* Regions: the maps with a value area, in map order. */
	assert_int_equal(c->nregions, 3);
	assert_ptr_equal(c->regions[0].base, arr_values);
	assert_true(c->regions[1].rdonly);
	assert_ptr_equal(c->regions[2].base, bss_values);
	assert_int_equal(c->regions[2].size, sizeof(bss_values));
	assert_int_equal(c->stack_size, 16);	/* 4 bytes, rounded */
	uxdp_bpf_code_free(c);
}

static void test_checks_and_budget(void **state)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(0, 0),		/* 0 */
		CTX_DATA(2),			/* 1 */
		LDX(BPF_B, 3, 2, 5),		/* 2: check pkt, then it */
		JMP_IMM(BPF_JEQ, 3, 0, 2),	/* 3: over 4, 5 */
		ALU64_IMM(BPF_ADD, 0, 1),	/* 4: loop: */
		JMP_IMM(BPF_JLT, 0, 5, -2),	/* 5: budget, then it */
		LOOKUP0(M_ARR),			/* 6..11 */
		JMP_IMM(BPF_JEQ, 0, 0, 4),	/* 12 */
		LDX(BPF_W, 1, 0, 0),		/* 13 */
		ALU64_REG(BPF_ADD, 0, 1),	/* 14 */
		ST(BPF_H, 0, 2, 7),		/* 15: check region 0, write */
		MOV64_IMM(0, 0),		/* 16 */
		EXIT,				/* 17 */
	};
	struct uxdp_bpf_build b;
	struct uxdp_bpf_code *c;
	uint32_t k;

	(void)state;
	c = prepare_ok(prog, ARRAY_SIZE(prog), &b);
	assert_int_equal(b.stats.checked, 2);
	assert_int_equal(b.stats.back_edges, 1);
	assert_int_equal(c->len, ARRAY_SIZE(prog) + 3);
	/* The packet byte: check r2+5, 1 byte, packet, read. */
	assert_int_equal(c->insns[2].code, UXDP_BPF_OP_CHECK);
	assert_int_equal(c->insns[2].dst_reg, 2);
	assert_int_equal(c->insns[2].off, 5);
	assert_int_equal(c->insns[2].imm,
			 UXDP_BPF_CHECK_IMM(1, UXDP_BPF_MEM_PKT, false, 0));
	assert_int_equal(c->orig_idx[2], 2);
	assert_int_equal(c->orig_idx[3], 2);
	/* The jump over the loop lands after it, on the lookup. */
	assert_int_equal(c->insns[4].off, 3);
	assert_int_equal(c->orig_idx[4 + 1 + 3], 6);
	/* The budget before the back edge; the edge goes back to 4. */
	assert_int_equal(c->insns[6].code, UXDP_BPF_OP_BUDGET);
	assert_int_equal(c->orig_idx[6], 5);
	assert_int_equal(c->insns[7].off, -3);
	assert_int_equal(c->orig_idx[7 - 3 + 1], 4);
	/* The store at a variable offset into arr's value. */
	for (k = 0; k < c->len && c->orig_idx[k] != 15; k++)
		;
	assert_int_equal(c->insns[k].code, UXDP_BPF_OP_CHECK);
	assert_int_equal(c->insns[k].dst_reg, 0);
	assert_int_equal(c->insns[k].off, 2);
	assert_int_equal(c->insns[k].imm,
			 UXDP_BPF_CHECK_IMM(2, UXDP_BPF_MEM_REGION, true, 0));
	assert_int_equal(c->insns[k + 1].code, BPF_ST | BPF_MEM | BPF_H);
	/* The null check's jump lands on the check, not past it. */
	assert_int_equal(c->orig_idx[first_of(c, 12)], 12);
	assert_int_equal(first_of(c, 12) + 1 + c->insns[first_of(c, 12)].off,
			 first_of(c, 17));
	uxdp_bpf_code_free(c);
}

/* A jump whose offset no longer fits in 16 bits once checks go in. */
static void test_jump_too_far(void **state)
{
	uint32_t n = 16000, i = 0;
	struct bpf_insn *p = calloc(2 * n + 8, sizeof(*p));
	struct uxdp_bpf_build b;

	(void)state;
	assert_non_null(p);
	p[i++] = MOV64_IMM(0, 0);
	p[i++] = CTX_DATA(2);
	p[i++] = JMP_IMM(BPF_JEQ, 0, 1, (int16_t)(2 * n));
	while (i < 2 * n + 3) {
		p[i++] = LDX(BPF_B, 3, 2, 0);	/* each checked */
		p[i++] = ALU64_REG(BPF_ADD, 0, 3);
	}
	p[i++] = EXIT;
	memset(&b, 0, sizeof(b));
	b.name = "t";
	b.insns = p;
	b.len = i;
	b.helper = test_helper;
	assert_int_equal(uxdp_bpf_prepare(&b), -E2BIG);
	assert_non_null(strstr(uxdp_errmsg(), "insn 2: the jump spans"));
	assert_null(b.code);
	free(p);
}

/* Inputs a loader should never pass, refused all the same. */
static void test_bad_builds(void **state)
{
	const struct bpf_insn ok[] = { MOV64_IMM(0, 0), EXIT };
	struct uxdp_bpf_build_map bad = test_maps[M_ARR];
	struct uxdp_bpf_build b;

	(void)state;
	memset(&b, 0, sizeof(b));
	b.name = "t";
	assert_int_equal(uxdp_bpf_prepare(&b), -EINVAL);
	assert_string_equal(uxdp_errmsg(), "prog t: no instructions");
	b.insns = ok;
	b.len = UXDP_BPF_MAX_INSNS + 1;
	assert_int_equal(uxdp_bpf_prepare(&b), -E2BIG);
	b.len = 2;
	b.ctx_kind = 7;
	assert_int_equal(uxdp_bpf_prepare(&b), -EINVAL);
	b.ctx_kind = UXDP_BPF_CTX_XDP;
	b.nmaps = 1;
	assert_int_equal(uxdp_bpf_prepare(&b), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "internal error"));
	bad.values_size = 8;			/* less than one value */
	b.maps = &bad;
	assert_int_equal(uxdp_bpf_prepare(&b), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "internal error: map arr"));
	/* No helper lookup: every helper is refused, by name. */
	{
		const struct bpf_insn call[] = {
			CALL(BPF_FUNC_ktime_get_ns), EXIT
		};

		b.maps = NULL;
		b.nmaps = 0;
		b.insns = call;
		assert_int_equal(uxdp_bpf_prepare(&b), -EINVAL);
		assert_non_null(strstr(uxdp_errmsg(),
				       "helper ktime_get_ns is not supported"));
	}
	assert_null(b.code);
	assert_int_equal(b.stats.accesses, 0);
}

/* ---- the conformance suite, through the safety pass --------------------- */

#ifndef UXDP_BPF_CONFORMANCE_DIR
#define UXDP_BPF_CONFORMANCE_DIR "../shared/bpf-conformance"
#endif

static uint64_t fn_unwind(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			  uint64_t e)
{
	(void)b, (void)c, (void)d, (void)e;
	return a;
}

static const struct uxdp_bpf_helper unwind_helper = {
	.id = UXDP_BPF_RAW_HELPER, .name = "unwind", .fn = fn_unwind,
	.args = { UXDP_BPF_ARG_ANY }, .flags = UXDP_BPF_HELPER_UNWIND,
};

static const struct uxdp_bpf_helper *suite_helper(uint32_t id)
{
	return id == UXDP_BPF_RAW_HELPER ? &unwind_helper : NULL;
}

/* r0 and the memory after a run of @c on a copy of @d's memory. */
static uint64_t suite_run(const struct uxdp_bpf_code *c,
			  const struct t_bpf_data *d, uint8_t *mem,
			  struct uxdp_bpf_run *run)
{
	if (d->mem_len)		/* d->mem is NULL then: memcpy may not */
		memcpy(mem, d->mem, d->mem_len);
	*run = (struct uxdp_bpf_run){ .code = c, .mem = mem,
				      .mem_len = d->mem_len };
	return uxdp_bpf_interp_run(run, (uintptr_t)mem, d->mem_len);
}

/*
 * Every program of the suite as a raw-context program through the safety
 * pass and the fixups: accepted (the kernel's own refusals aside: shifts
 * by an immediate of the operand's width or more), and run by the
 * interpreter to the same r0 and the same memory as the same program
 * without them (the raw path), which is the suite's result.
 */
static void test_conformance(void **state)
{
	const char *dir_name = getenv("UXDP_BPF_CONFORMANCE_DIR");
	uint32_t n = 0, passed = 0, kernel = 0, scope = 0;
	struct uxdp_bpf_check_stats sum = { 0 };
	char path[1024], why[512];
	struct dirent *de;
	DIR *dir;

	(void)state;
	if (!dir_name || !*dir_name)
		dir_name = UXDP_BPF_CONFORMANCE_DIR;
	snprintf(path, sizeof(path), "%s/tests", dir_name);
	dir = opendir(path);
	if (!dir) {
		const char *ci = getenv("UXDP_CI");

		fprintf(stderr, "*** no conformance suite at %s (set "
			"UXDP_BPF_CONFORMANCE_DIR) ***\n", path);
		if (ci && *ci && *ci != '0')
			fail_msg("UXDP_CI is set: a skip is a failure here");
		skip();
	}
	while ((de = readdir(dir))) {
		struct uxdp_bpf_code *raw = NULL;
		struct uxdp_bpf_run run1, run2;
		struct uxdp_bpf_build b;
		struct bpf_insn *insns;
		struct t_bpf_data d;
		uint8_t *m1, *m2;
		uint64_t r1, r2;
		uint32_t len, i;
		size_t nl = strlen(de->d_name);

		if (nl < 6 || strcmp(de->d_name + nl - 5, ".data"))
			continue;
		snprintf(path, sizeof(path), "%s/tests/%s", dir_name,
			 de->d_name);
		if (t_bpf_data_read(path, &d, why, sizeof(why)))
			fail_msg("%s: %s", de->d_name, why);
		n++;
		if (d.asm_text ? uxdp_bpf_asm(d.asm_text, &insns, &len) :
				 uxdp_bpf_asm_raw(d.raw_text, &insns, &len))
			fail_msg("%s: %s", de->d_name, uxdp_errmsg());
		memset(&b, 0, sizeof(b));
		b.name = de->d_name;
		b.insns = insns;
		b.len = len;
		b.ctx_kind = UXDP_BPF_CTX_RAW;
		b.helper = suite_helper;
		b.flags = UXDP_BPF_BUILD_F_V4;
		if (uxdp_bpf_prepare(&b)) {
			if (strstr(uxdp_errmsg(), ": shift by "))
				kernel++;
			else if (strstr(uxdp_errmsg(), "callx") ||
				 strstr(uxdp_errmsg(), "legacy packet load"))
				scope++;
			else
				fail_msg("%s", uxdp_errmsg());
			free(insns);
			t_bpf_data_free(&d);
			continue;
		}
		if (uxdp_bpf_raw_code(de->d_name, insns, len, 0, &raw))
			fail_msg("%s: the raw path refused it: %s", de->d_name,
				 uxdp_errmsg());
		m1 = malloc(d.mem_len + 1);
		m2 = malloc(d.mem_len + 1);
		assert_true(m1 && m2);
		r1 = suite_run(b.code, &d, m1, &run1);
		r2 = suite_run(raw, &d, m2, &run2);
		if (run1.fault || run2.fault)
			fail_msg("%s: fault %u at insn %u (raw: %u)", de->d_name,
				 run1.fault, b.code->orig_idx[run1.fault_pc],
				 run2.fault);
		if (r1 != r2 || memcmp(m1, m2, d.mem_len))
			fail_msg("%s: r0 0x%llx, unchecked 0x%llx", de->d_name,
				 (unsigned long long)r1,
				 (unsigned long long)r2);
		if (d.has_result && r1 != d.result)
			fail_msg("%s: r0 0x%llx, the suite says 0x%llx",
				 de->d_name, (unsigned long long)r1,
				 (unsigned long long)d.result);
		for (i = 0; i < b.code->len; i++)
			assert_true(b.code->orig_idx[i] < len);
		sum.accesses += b.stats.accesses;
		sum.proven += b.stats.proven;
		sum.checked += b.stats.checked;
		sum.back_edges += b.stats.back_edges;
		passed++;
		free(m1);
		free(m2);
		uxdp_bpf_raw_free(raw);
		uxdp_bpf_code_free(b.code);
		free(insns);
		t_bpf_data_free(&d);
	}
	closedir(dir);
	print_message("conformance through the safety pass: %u of %u pass, "
		      "%u refused as the kernel would, %u out of scope; "
		      "accesses %u: %u proven, %u checked; %u back edges\n",
		      passed, n, kernel, scope, sum.accesses, sum.proven,
		      sum.checked, sum.back_edges);
	assert_true(n > 300);
	assert_int_equal(passed + kernel + scope, n);
}

/* ---- lookups with a known key -------------------------------------------- */

/*
 * A lookup whose key the pass knows is folded to the value's address (or
 * 0); anything that may have changed the key's bytes since its one
 * constant store keeps the array's own bounds test. Each program runs on
 * both engines (the JIT where there is one) with real maps: the folded
 * and the unfolded alike give the value the key names.
 */
#define KEY_TAIL_AT(m, o)						\
	MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, o), LD_MAP(1, m),	\
	CALL(BPF_FUNC_map_lookup_elem), JMP_IMM(BPF_JNE, 0, 0, 2),	\
	MOV64_IMM(0, 999), EXIT, LDX(BPF_DW, 0, 0, 0), EXIT
#define KEY_TAIL(m)	KEY_TAIL_AT(m, -4)
#define RXQ(d)		LDX(BPF_W, d, 1, 16)	/* 3 here */

enum { K_ARR, K_PCPU, K_NMAPS };

struct kcase {
	const char *name;
	struct bpf_insn insns[MAX_T_INSNS];
	bool folded;
	uint64_t r0;
};

static const struct kcase kcases[] = {
	{ "constant", { ST(BPF_W, 10, -4, 2), KEY_TAIL(K_ARR) }, true, 102 },
	{ "out of range", { ST(BPF_W, 10, -4, 9), KEY_TAIL(K_ARR) }, true,
	  999 },
	{ "from a register", { MOV32_IMM(3, 1), STX(BPF_W, 10, 3, -4),
			       KEY_TAIL(K_ARR) }, true, 101 },
	{ "unknown", { RXQ(3), STX(BPF_W, 10, 3, -4), KEY_TAIL(K_ARR) },
	  false, 103 },
	{ "two paths, two keys",
	  { RXQ(3), JMP_IMM(BPF_JEQ, 3, 3, 2), ST(BPF_W, 10, -4, 2), JA(1),
	    ST(BPF_W, 10, -4, 1), KEY_TAIL(K_ARR) }, false, 101 },
	{ "two paths, one key",
	  { RXQ(3), JMP_IMM(BPF_JEQ, 3, 3, 2), ST(BPF_W, 10, -4, 1), JA(1),
	    ST(BPF_W, 10, -4, 1), KEY_TAIL(K_ARR) }, true, 101 },
	{ "a byte changed after", { ST(BPF_W, 10, -4, 1), RXQ(3),
				    STX(BPF_B, 10, 3, -4), KEY_TAIL(K_ARR) },
	  false, 103 },
	{ "a constant byte after", { ST(BPF_W, 10, -4, 1),
				     ST(BPF_B, 10, -4, 2), KEY_TAIL(K_ARR) },
	  false, 102 },
	{ "the slot's other half", { ST(BPF_W, 10, -4, 1),
				     ST(BPF_W, 10, -8, 3), KEY_TAIL(K_ARR) },
	  false, 101 },
	{ "two halves", { ST(BPF_H, 10, -4, 1), ST(BPF_H, 10, -2, 0),
			  KEY_TAIL(K_ARR) }, false, 101 },
	{ "an 8-byte store", { MOV64_IMM(3, 2), STX(BPF_DW, 10, 3, -8),
			       KEY_TAIL_AT(K_ARR, -8) }, false, 102 },
	{ "an atomic after", { ST(BPF_W, 10, -4, 1), MOV64_IMM(3, 1),
			       ATOMIC(BPF_W, BPF_ADD, 10, 3, -4),
			       KEY_TAIL(K_ARR) }, false, 102 },
	{ "a helper writes it",
	  { MOV64_REG(6, 1), ST(BPF_W, 10, -4, 1), MOV64_REG(1, 6),
	    MOV64_IMM(2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -4),
	    MOV64_IMM(4, 4), CALL(BPF_FUNC_xdp_load_bytes), KEY_TAIL(K_ARR) },
	  false, 103 },
	{ "a variable store",
	  { ST(BPF_W, 10, -4, 1), RXQ(3), ALU64_IMM(BPF_AND, 3, 1),
	    ALU64_IMM(BPF_LSH, 3, 2), MOV64_REG(4, 10),
	    ALU64_IMM(BPF_ADD, 4, -8), ALU64_REG(BPF_ADD, 4, 3),
	    MOV64_IMM(5, 3), STX(BPF_W, 4, 5, 0), KEY_TAIL(K_ARR) }, false,
	  103 },
	{ "in a callee, the caller's key",
	  { ST(BPF_W, 10, -4, 2), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -4),
	    CALL_LOCAL(1), EXIT, MOV64_REG(2, 1), LD_MAP(1, K_ARR),
	    CALL(BPF_FUNC_map_lookup_elem), JMP_IMM(BPF_JNE, 0, 0, 2),
	    MOV64_IMM(0, 999), EXIT, LDX(BPF_DW, 0, 0, 0), EXIT }, true, 102 },
	/* One lookup reached in two call strings, a key in each: the
	 * join of states does not see it, the two visits do. */
	{ "in a callee, two callers' keys",
	  { ST(BPF_W, 10, -4, 1), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -4),
	    CALL_LOCAL(7), MOV64_REG(6, 0), ST(BPF_W, 10, -4, 2),
	    MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -4), CALL_LOCAL(2),
	    ALU64_REG(BPF_ADD, 0, 6), EXIT, MOV64_REG(2, 1), LD_MAP(1, K_ARR),
	    CALL(BPF_FUNC_map_lookup_elem), JMP_IMM(BPF_JNE, 0, 0, 2),
	    MOV64_IMM(0, 999), EXIT, LDX(BPF_DW, 0, 0, 0), EXIT }, false,
	  203 },
	{ "per-CPU", { ST(BPF_W, 10, -4, 1), KEY_TAIL(K_PCPU) }, true, 55 },
	{ "per-CPU, out of range", { ST(BPF_W, 10, -4, 5), KEY_TAIL(K_PCPU) },
	  true, 999 },
};

/* Whether @c still reads a lookup's key (the array's inline form). */
static bool reads_key(const struct uxdp_bpf_code *c)
{
	uint32_t i;

	for (i = 0; i < c->len; i++)
		if (c->insns[i].code == (BPF_LDX | BPF_W | BPF_MEM) &&
		    c->insns[i].dst_reg == 0 && c->insns[i].src_reg == 2)
			return true;
	return false;
}

static void test_known_keys(void **state)
{
	uint64_t pcpu[UXDP_BPF_NR_CPUS], v;
	struct uxdp_bpf_build_map bm[K_NMAPS];
	struct uxdp_bpf_map *m[K_NMAPS];
	uint8_t pkt[64] = { 3, 0, 0, 0 };
	uint32_t k, i;
	size_t t;

	(void)state;
	m[K_ARR] = uxdp_bpf_map_new("arr", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	m[K_PCPU] = uxdp_bpf_map_new("pcpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8,
				     2, 0);
	for (k = 0; k < K_NMAPS; k++) {
		assert_non_null(m[k]);
		assert_int_equal(uxdp_bpf_map_create(m[k]), 0);
		uxdp_bpf_map_build(m[k], &bm[k]);
		assert_true(bm[k].gen_lookup);
	}
	for (k = 0; k < 4; k++) {
		v = 100 + k;
		assert_int_equal(m[K_ARR]->ops->map_update(m[K_ARR], &k, &v,
							   BPF_ANY), 0);
	}
	for (i = 0; i < UXDP_BPF_NR_CPUS; i++)
		pcpu[i] = 55;
	k = 1;
	assert_int_equal(m[K_PCPU]->ops->map_update(m[K_PCPU], &k, pcpu,
						    BPF_ANY), 0);

	for (t = 0; t < ARRAY_SIZE(kcases); t++) {
		const struct kcase *kc = &kcases[t];
		struct uxdp_bpf_build b = {
			.name = kc->name, .insns = kc->insns,
			.ctx_kind = UXDP_BPF_CTX_XDP, .maps = bm,
			.nmaps = K_NMAPS, .helper = test_helper,
		};
		struct uxdp_bpf_jit *jit = NULL;
		struct uxdp_bpf_run run;
		struct uxdp_buff x;
		uint64_t r0;
		int err;

		for (b.len = MAX_T_INSNS; b.len && !kc->insns[b.len - 1].code;
		     b.len--)
			;
		if (uxdp_bpf_prepare(&b))
			fail_msg("%s: refused: %s", kc->name, uxdp_errmsg());
		if (reads_key(b.code) == kc->folded)
			fail_msg("%s: folded %d, want %d", kc->name,
				 !reads_key(b.code), kc->folded);
		x = (struct uxdp_buff){
			.data = pkt, .data_end = pkt + sizeof(pkt),
			.data_meta = pkt, .data_hard_start = pkt,
			.rxq = &test_rxq, .frame_sz = sizeof(pkt),
		};
		memset(&run, 0, sizeof(run));
		run.code = b.code;
		run.ctx = &x;
		r0 = uxdp_bpf_interp_run(&run, (uintptr_t)&x, 0);
		if (run.fault || r0 != kc->r0)
			fail_msg("%s: interp: r0 %llu fault %u, want %llu",
				 kc->name, (unsigned long long)r0, run.fault,
				 (unsigned long long)kc->r0);
		err = uxdp_bpf_jit_compile(b.code, &jit);
		if (err != -EOPNOTSUPP) {
			assert_int_equal(err, 0);
			r0 = uxdp_bpf_jit_run(jit, &run, (uintptr_t)&x, 0);
			if (run.fault || r0 != kc->r0)
				fail_msg("%s: jit: r0 %llu fault %u, want "
					 "%llu", kc->name,
					 (unsigned long long)r0, run.fault,
					 (unsigned long long)kc->r0);
			uxdp_bpf_jit_free(jit);
		}
		uxdp_bpf_code_free(b.code);
	}
	for (k = 0; k < K_NMAPS; k++)
		uxdp_bpf_map_free(m[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_rewrites),
		cmocka_unit_test(test_checks_and_budget),
		cmocka_unit_test(test_jump_too_far),
		cmocka_unit_test(test_bad_builds),
		cmocka_unit_test(test_conformance),
		cmocka_unit_test(test_known_keys),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
