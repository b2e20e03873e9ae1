/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The x86-64 JIT on its own (src/bpf/jit_x86_64.c), on programs built by
 * hand as a struct uxdp_bpf_code: every row of insn_table.h compiles;
 * ALU, byte swaps and jumps against a reference written from RFC 9669 on
 * edge values and with the registers x86 treats specially (rax, rdx and
 * rcx are r0, r3 and r4); loads, stores and atomics; jumps at the rel8
 * edges and the passes that settle them; helpers, bpf-to-bpf calls and
 * their depth; every kind of check, the budget, tail calls, context
 * loads; refusals; and that the code is never writable and executable at
 * once. UXDP_BPF_JIT_BENCH=1 also times both engines on a few programs
 * (ns per run, best of three; printed, never asserted);
 * UXDP_BPF_JIT_BENCH_PROG=NAME runs one, UXDP_BPF_JIT_BENCH_ROUNDS=N
 * sets the runs (few, to count instructions under callgrind).
 */
#include "t_helpers.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#include "../src/bpf/bpf_internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#if !defined(__x86_64__)
int main(void)
{
	t_skip_program("the JIT is x86-64 only");
}
#else

/* ---- building programs ----------------------------------------------------- */

#define I(c, d, s, o, i)						\
	((struct bpf_insn){ .code = (uint8_t)(c), .dst_reg = (d),	\
			    .src_reg = (s), .off = (int16_t)(o),	\
			    .imm = (int32_t)(i) })
#define ALU64_K(op, d, i)	I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_X(op, d, s)	I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_K(op, d, i)	I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32_X(op, d, s)	I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define MOV64_K(d, i)		ALU64_K(BPF_MOV, d, i)
#define MOV64_X(d, s)		ALU64_X(BPF_MOV, d, s)
#define JMP_K(op, d, i, o)	I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP_X(op, d, s, o)	I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JA(o)			I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JA32(i)			I(BPF_JMP32 | BPF_JA, 0, 0, 0, i)
#define LDX(sz, d, s, o)	I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define LDXS(sz, d, s, o)	I(BPF_LDX | UXDP_BPF_MEMSX | (sz), d, s, o, 0)
#define STX(sz, d, s, o)	I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i)		I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ATOMIC(sz, d, s, o, op)	I(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define CALL(i)			I(BPF_JMP | BPF_CALL, 0, 0, 0, i)
#define CALL_LOCAL(rel)		I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define EXIT			I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define CHECK(d, o, imm)	I(UXDP_BPF_OP_CHECK, d, 0, o, imm)
#define BUDGET			I(UXDP_BPF_OP_BUDGET, 0, 0, 0, 0)
#define TAIL_CALL		I(UXDP_BPF_OP_TAIL_CALL, 0, 0, 0, 0)
#define LDX_CTX(d, s, f)	I(UXDP_BPF_OP_LDX_CTX, d, s, 0, f)

struct tp {
	struct bpf_insn *in;
	uint32_t n, cap;
};

static void tp_add(struct tp *p, struct bpf_insn in)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->in = realloc(p->in, p->cap * sizeof(*p->in));
		assert_non_null(p->in);
	}
	p->in[p->n++] = in;
}

#define A(p, ...)							\
	do {								\
		const struct bpf_insn a_[] = { __VA_ARGS__ };		\
		size_t k_;						\
									\
		for (k_ = 0; k_ < sizeof(a_) / sizeof(a_[0]); k_++)	\
			tp_add((p), a_[k_]);				\
	} while (0)

static void tp_lddw(struct tp *p, int dst, uint64_t v)
{
	tp_add(p, I(BPF_LD | BPF_IMM | BPF_DW, dst, 0, 0, (uint32_t)v));
	tp_add(p, I(0, 0, 0, 0, (uint32_t)(v >> 32)));
}

static void tp_free(struct tp *p)
{
	free(p->in);
	memset(p, 0, sizeof(*p));
}

/* A raw program (r1 = memory, r2 = its length), as the conformance
 * suite runs them. */
static struct uxdp_bpf_code t_code(struct tp *p)
{
	struct uxdp_bpf_code c = {
		.name = "t",
		.insns = p->in,
		.len = p->n,
		.stack_size = UXDP_BPF_STACK,
		.ctx_kind = UXDP_BPF_CTX_RAW,
		.budget = 1000000,
	};

	return c;
}

struct tres {
	uint64_t r0;
	uint32_t fault, fault_pc;
};

static struct uxdp_bpf_jit *t_compile(struct uxdp_bpf_code *c)
{
	struct uxdp_bpf_jit *jit = NULL;
	int err = uxdp_bpf_jit_compile(c, &jit);

	if (err)
		fail_msg("compile: %d %s", err, uxdp_errmsg());
	assert_non_null(jit);
	return jit;
}

static struct tres t_run_code(struct uxdp_bpf_code *c, void *mem, size_t len)
{
	struct uxdp_bpf_jit *jit = t_compile(c);
	struct uxdp_bpf_run run = { 0 };
	struct tres r;

	r.r0 = uxdp_bpf_jit_run(jit, &run, (uint64_t)(uintptr_t)mem, len);
	r.fault = run.fault;
	r.fault_pc = run.fault_pc;
	uxdp_bpf_jit_free(jit);
	return r;
}

static struct tres t_run(struct tp *p, void *mem, size_t len)
{
	struct uxdp_bpf_code c = t_code(p);

	return t_run_code(&c, mem, len);
}

/* The same through the interpreter: decoded for the run alone, or
 * (@prepared) once, as a loaded program is (uxdp_bpf_interp_prepare). */
static struct tres t_run_interp(struct tp *p, void *mem, size_t len,
				bool prepared)
{
	struct uxdp_bpf_code c = t_code(p);
	struct uxdp_bpf_run run = { .code = &c, .mem = mem, .mem_len = len };
	struct tres r;

	if (prepared)
		assert_int_equal(uxdp_bpf_interp_prepare(&c), 0);
	r.r0 = uxdp_bpf_interp_run(&run, (uint64_t)(uintptr_t)mem, len);
	r.fault = run.fault;
	r.fault_pc = run.fault_pc;
	free(c.interp);
	return r;
}

/* Engine 0 the JIT, 1 the interpreter, 2 the prepared interpreter. */
static struct tres t_run_on(int engine, struct tp *p, void *mem, size_t len)
{
	return engine ? t_run_interp(p, mem, len, engine == 2) :
		t_run(p, mem, len);
}

/* The end of a program that dumps r0..r9 to the memory r1 held at entry
 * (saved at [r10-8] by tp_begin_dump). */
static __attribute__((unused)) void tp_begin_dump(struct tp *p)
{
	A(p, STX(BPF_DW, 10, 1, -8));
}

static __attribute__((unused)) void tp_end_dump(struct tp *p)
{
	int k;

	for (k = 0; k < 10; k++)
		A(p, STX(BPF_DW, 10, k, -16 - 8 * k));
	A(p, LDX(BPF_DW, 1, 10, -8));
	for (k = 0; k < 10; k++)
		A(p, LDX(BPF_DW, 2, 10, -16 - 8 * k),
		  STX(BPF_DW, 1, 2, 8 * k));
	A(p, MOV64_K(0, 0), EXIT);
}

/* ---- every row ------------------------------------------------------------ */

static uint64_t h_sum5(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		       uint64_t e)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e;
}

static const struct uxdp_bpf_helper helper_sum5 = {
	.id = 1000, .name = "sum5", .fn = h_sum5,
};

/* One valid instance of the row @code, then exit. */
static void row_instance(struct tp *p, uint8_t code, uint16_t flags)
{
	struct bpf_insn in = I(code, 1, (flags & UXDP_BPF_F_SRC) ? 2 : 0, 0,
			       (flags & UXDP_BPF_F_IMM) ? 3 : 0);
	uint8_t cls = BPF_CLASS(code);

	if (cls == BPF_ALU || cls == BPF_ALU64) {
		if (BPF_OP(code) == BPF_END)
			in.imm = 16;
	} else if (code == (BPF_JMP | BPF_CALL)) {
		in = CALL(0);
	} else if (code == (BPF_JMP | BPF_EXIT)) {
		in = EXIT;
	} else if (code == (BPF_JMP | BPF_JA)) {
		in = JA(0);
	} else if (code == (BPF_JMP32 | BPF_JA)) {
		in = JA32(0);
	} else if (code == UXDP_BPF_OP_CHECK) {
		in = CHECK(10, -8, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_STACK, 1,
						      0));
	} else if (code == UXDP_BPF_OP_BUDGET) {
		in = BUDGET;
	} else if (code == UXDP_BPF_OP_TAIL_CALL) {
		in = TAIL_CALL;
	} else if (code == UXDP_BPF_OP_LDX_CTX) {
		in = LDX_CTX(2, 1, UXDP_BPF_CTX_DATA);
	} else if (code == (BPF_LD | BPF_IMM | BPF_DW)) {
		tp_lddw(p, 1, 0x123456789ULL);
		A(p, EXIT);
		return;
	} else if (cls == BPF_STX || cls == BPF_ST) {
		in.dst_reg = 10;
		in.off = -8;
		if (BPF_MODE(code) == BPF_ATOMIC)
			in.imm = BPF_ADD;
	} else if (cls == BPF_JMP || cls == BPF_JMP32) {
		in.off = 0;
	}
	tp_add(p, in);
	A(p, EXIT);
}

#define ROW(code, mn, grp, fl) { code, mn, fl },
static const struct {
	uint8_t code;
	const char *mn;
	uint16_t flags;
} rows[] = {
	UXDP_BPF_INSNS(ROW)
};
#undef ROW

/* Every opcode the table has, the interpreter's rows and the internal
 * ones, compiles: a row added to insn_table.h needs a case in the JIT. */
static void test_rows_all_compile(void **state)
{
	const struct uxdp_bpf_helper *helpers[] = { &helper_sum5 };
	size_t r;

	(void)state;
	assert_true(ARRAY_SIZE(rows) >= 123);
	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit = NULL;
		int err;

		row_instance(&p, rows[r].code, rows[r].flags);
		c = t_code(&p);
		c.helpers = helpers;
		c.nhelpers = 1;
		err = uxdp_bpf_jit_compile(&c, &jit);
		if (err)
			fail_msg("row 0x%02x (%s): %d %s", rows[r].code,
				 rows[r].mn, err, uxdp_errmsg());
		assert_true(uxdp_bpf_jit_size(jit) > 0);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}

/* ---- the reference ALU (RFC 9669 section 4.1) ----------------------------- */

static uint64_t ref_alu(uint8_t code, int16_t off, uint64_t d, uint64_t s)
{
	bool w = BPF_CLASS(code) == BPF_ALU64;
	unsigned mask = w ? 63 : 31;
	uint64_t r = 0;

	if (!w) {
		d = (uint32_t)d;
		s = (uint32_t)s;
	}
	switch (BPF_OP(code)) {
	case BPF_ADD: r = d + s; break;
	case BPF_SUB: r = d - s; break;
	case BPF_MUL: r = d * s; break;
	case BPF_OR: r = d | s; break;
	case BPF_AND: r = d & s; break;
	case BPF_XOR: r = d ^ s; break;
	case BPF_LSH: r = d << (s & mask); break;
	case BPF_RSH: r = d >> (s & mask); break;
	case BPF_ARSH:
		r = w ? (uint64_t)((int64_t)d >> (s & mask)) :
			(uint32_t)((int32_t)(uint32_t)d >> (s & mask));
		break;
	case BPF_NEG: r = 0 - d; break;
	case BPF_DIV:
		if (!s)
			r = 0;
		else if (!off)
			r = d / s;
		else if (w)
			r = (int64_t)s == -1 ? 0 - d :
			    (uint64_t)((int64_t)d / (int64_t)s);
		else
			r = (int32_t)s == -1 ? 0 - d :
			    (uint32_t)((int32_t)d / (int32_t)s);
		break;
	case BPF_MOD:
		if (!s)
			r = d;
		else if (!off)
			r = d % s;
		else if (w)
			r = (int64_t)s == -1 ? 0 :
			    (uint64_t)((int64_t)d % (int64_t)s);
		else
			r = (int32_t)s == -1 ? 0 :
			    (uint32_t)((int32_t)d % (int32_t)s);
		break;
	case BPF_MOV:
		switch (off) {
		case 8: r = (uint64_t)(int64_t)(int8_t)s; break;
		case 16: r = (uint64_t)(int64_t)(int16_t)s; break;
		case 32: r = (uint64_t)(int64_t)(int32_t)s; break;
		default: r = s; break;
		}
		break;
	}
	return w ? r : (uint32_t)r;
}

static const uint64_t edge[] = {
	0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0x7f, 0x80, 0xff, 0x7fff, 0x8000,
	0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL,
	0xfffffffffffffffeULL, 0xfffffffffffffff9ULL, 0x123456789abcdef0ULL,
	0xffffffff80000000ULL, 0x00000000ffffff80ULL,
};

static const int32_t edge_imm[] = {
	0, 1, -1, 2, 3, 7, 31, 63, 0x7f, 0x80, -128, -129, 0x7fff, 0x8000,
	0xffff, 0x10000, INT32_MAX, INT32_MIN, -7, 0x12345678,
};

/* (dst, src) pairs: every special x86 register as dst, src and both. */
static const uint8_t reg_pairs[][2] = {
	{ 1, 2 }, { 0, 3 }, { 3, 0 }, { 4, 1 }, { 1, 4 }, { 3, 4 }, { 4, 3 },
	{ 0, 0 }, { 3, 3 }, { 4, 4 }, { 6, 9 }, { 9, 6 }, { 5, 0 }, { 0, 5 },
	{ 7, 8 }, { 0, 4 }, { 4, 0 }, { 2, 2 }, { 8, 3 }, { 3, 7 },
};

/* A register neither @a nor @b nor the base: the memory's. */
static int free_reg(int a, int b, int c)
{
	int r;

	for (r = 1; r <= 9; r++)
		if (r != a && r != b && r != c)
			return r;
	return -1;
}

/*
 * One program per (row, register pair): every value pair (or immediate)
 * through the operation, the result, the source after and sentinels in
 * r0, r3 and r4 (where not used) stored per case. Checked against
 * ref_alu.
 */
#define CASE_WORDS 5
static void alu_run(uint8_t code, int16_t off, int dst, int src)
{
	bool x = BPF_SRC(code) == BPF_X;
	bool w = BPF_CLASS(code) == BPF_ALU64;
	uint8_t op = BPF_OP(code);
	size_t na = ARRAY_SIZE(edge), nb = x ? ARRAY_SIZE(edge) :
		ARRAY_SIZE(edge_imm), a, b, k = 0, ncases;
	int base = free_reg(dst, src, -1);
	const int sent[3] = { 0, 3, 4 };
	struct tp p = { 0 };
	uint64_t *mem;
	struct tres r;
	int s;

	if (!x)
		src = -1;
	ncases = na * nb;
	mem = calloc(ncases * CASE_WORDS, 8);
	assert_non_null(mem);
	A(&p, MOV64_X(base, 1));
	for (a = 0; a < na; a++) {
		for (b = 0; b < nb; b++) {
			/* Shifts by an immediate of the width or more too:
			 * the RFC masks the count. */
			int32_t imm = x || op == BPF_NEG ? 0 : edge_imm[b];

			for (s = 0; s < 3; s++)
				if (sent[s] != dst && sent[s] != src &&
				    sent[s] != base)
					A(&p, MOV64_K(sent[s], 0x5e5e0000 + s));
			tp_lddw(&p, dst, edge[a]);
			if (x && src != dst)
				tp_lddw(&p, src, edge[b]);
			tp_add(&p, I(code, dst, x ? src : 0, off, imm));
			A(&p, STX(BPF_DW, base, dst, (int16_t)(k * 40)));
			if (x)
				A(&p, STX(BPF_DW, base, src,
					  (int16_t)(k * 40 + 8)));
			for (s = 0; s < 3; s++)
				if (sent[s] != dst && sent[s] != src &&
				    sent[s] != base)
					A(&p, STX(BPF_DW, base, sent[s],
						  (int16_t)(k * 40 + 16 +
							    8 * s)));
			k++;
		}
	}
	A(&p, MOV64_K(0, 0), EXIT);
	r = t_run(&p, mem, ncases * CASE_WORDS * 8);
	assert_int_equal(r.fault, 0);
	for (k = 0, a = 0; a < na; a++) {
		for (b = 0; b < nb; b++, k++) {
			uint64_t d = edge[a], sv, want;
			int32_t imm = x || op == BPF_NEG ? 0 : edge_imm[b];
			uint64_t *c = &mem[k * CASE_WORDS];

			if (x)
				sv = src == dst ? d : edge[b];
			else
				sv = w ? (uint64_t)(int64_t)imm : (uint32_t)imm;
			want = ref_alu(code, off, d, sv);
			if (c[0] != want)
				fail_msg("%s 0x%02x off %d r%d, %s%d: "
					 "0x%" PRIx64 ", 0x%" PRIx64
					 " -> 0x%" PRIx64 ", want 0x%" PRIx64,
					 w ? "alu64" : "alu32", code, off, dst,
					 x ? "r" : "imm ", x ? src : imm, d,
					 sv, c[0], want);
			if (x && src != dst && c[1] != edge[b])
				fail_msg("0x%02x r%d, r%d: the source changed "
					 "to 0x%" PRIx64, code, dst, src, c[1]);
			for (s = 0; s < 3; s++)
				if (sent[s] != dst && sent[s] != src &&
				    sent[s] != base &&
				    c[2 + s] != 0x5e5e0000ULL + s)
					fail_msg("0x%02x r%d, r%d: r%d clobbered: "
						 "0x%" PRIx64, code, dst, src,
						 sent[s], c[2 + s]);
		}
	}
	tp_free(&p);
	free(mem);
}

static void alu_rows(bool x)
{
	size_t r, q;

	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		uint8_t code = rows[r].code, cls = BPF_CLASS(code);
		uint8_t op = BPF_OP(code);
		int16_t offs[4] = { 0 };
		int noffs = 1, o;

		if (cls != BPF_ALU && cls != BPF_ALU64)
			continue;
		if (op == BPF_END || (BPF_SRC(code) == BPF_X) != x ||
		    code == UXDP_BPF_OP_THREAD)
			continue;
		if (op == BPF_NEG && x)
			continue;
		if (op == BPF_DIV || op == BPF_MOD) {
			offs[1] = 1;
			noffs = 2;
		} else if (op == BPF_MOV && x) {
			offs[1] = 8;
			offs[2] = 16;
			offs[3] = 32;
			noffs = cls == BPF_ALU64 ? 4 : 3;
		}
		for (o = 0; o < noffs; o++)
			for (q = 0; q < ARRAY_SIZE(reg_pairs); q++)
				alu_run(code, offs[o], reg_pairs[q][0],
					x ? reg_pairs[q][1] : 0);
	}
}

static void test_alu_x_edges(void **state)
{
	(void)state;
	alu_rows(true);
}

static void test_alu_k_edges(void **state)
{
	(void)state;
	alu_rows(false);
}

/* ---- byte swaps (4.2) ------------------------------------------------------ */

static uint64_t ref_end(uint8_t code, int32_t bits, uint64_t d)
{
	bool swap = BPF_CLASS(code) == BPF_ALU64 ||
		    BPF_SRC(code) == BPF_TO_BE;

	switch (bits) {
	case 16:
		return swap ? __builtin_bswap16((uint16_t)d) : (uint16_t)d;
	case 32:
		return swap ? __builtin_bswap32((uint32_t)d) : (uint32_t)d;
	default:
		return swap ? __builtin_bswap64(d) : d;
	}
}

static void test_end_swaps(void **state)
{
	static const uint8_t codes[] = { 0xd4, 0xdc, 0xd7 };
	static const int32_t bits[] = { 16, 32, 64 };
	size_t c, b, v;
	int reg;

	(void)state;
	for (c = 0; c < ARRAY_SIZE(codes); c++)
		for (b = 0; b < ARRAY_SIZE(bits); b++)
			for (reg = 0; reg <= 9; reg++)
				for (v = 0; v < ARRAY_SIZE(edge); v++) {
					struct tp p = { 0 };
					uint64_t want = ref_end(codes[c],
								bits[b],
								edge[v]);
					struct tres r;

					tp_lddw(&p, reg, edge[v]);
					tp_add(&p, I(codes[c], reg, 0, 0,
						     bits[b]));
					A(&p, MOV64_X(0, reg), EXIT);
					r = t_run(&p, NULL, 0);
					if (r.r0 != want)
						fail_msg("0x%02x %d r%d 0x%" PRIx64
							 ": 0x%" PRIx64 ", want "
							 "0x%" PRIx64, codes[c],
							 bits[b], reg, edge[v],
							 r.r0, want);
					tp_free(&p);
				}
}

/* ---- conditional jumps (4.3) ---------------------------------------------- */

static bool ref_jmp(uint8_t code, uint64_t d, uint64_t s)
{
	if (BPF_CLASS(code) == BPF_JMP32) {
		d = (uint32_t)d;
		s = (uint32_t)s;
		switch (BPF_OP(code)) {
		case BPF_JSGT: return (int32_t)d > (int32_t)s;
		case BPF_JSGE: return (int32_t)d >= (int32_t)s;
		case BPF_JSLT: return (int32_t)d < (int32_t)s;
		case BPF_JSLE: return (int32_t)d <= (int32_t)s;
		}
	}
	switch (BPF_OP(code)) {
	case BPF_JEQ: return d == s;
	case BPF_JNE: return d != s;
	case BPF_JSET: return d & s;
	case BPF_JGT: return d > s;
	case BPF_JGE: return d >= s;
	case BPF_JLT: return d < s;
	case BPF_JLE: return d <= s;
	case BPF_JSGT: return (int64_t)d > (int64_t)s;
	case BPF_JSGE: return (int64_t)d >= (int64_t)s;
	case BPF_JSLT: return (int64_t)d < (int64_t)s;
	case BPF_JSLE: return (int64_t)d <= (int64_t)s;
	}
	fail_msg("no reference for jump 0x%02x", code);
	return false;
}

/* Per case: jcc +1 over "ja +1" to "stb [base + k], 1". */
static void jmp_run(uint8_t code, int dst, int src)
{
	bool x = BPF_SRC(code) == BPF_X;
	bool w = BPF_CLASS(code) == BPF_JMP;
	size_t na = ARRAY_SIZE(edge), nb = x ? na : ARRAY_SIZE(edge_imm);
	size_t a, b, k = 0;
	int base = free_reg(dst, src, -1);
	struct tp p = { 0 };
	uint8_t *mem = calloc(na * nb, 1);
	struct tres r;

	assert_non_null(mem);
	A(&p, MOV64_X(base, 1));
	for (a = 0; a < na; a++)
		for (b = 0; b < nb; b++, k++) {
			tp_lddw(&p, dst, edge[a]);
			if (x && src != dst)
				tp_lddw(&p, src, edge[b]);
			tp_add(&p, I(code, dst, x ? src : 0, 1,
				     x ? 0 : edge_imm[b]));
			A(&p, JA(1), ST(BPF_B, base, (int16_t)k, 1));
		}
	A(&p, MOV64_K(0, 0), EXIT);
	r = t_run(&p, mem, na * nb);
	assert_int_equal(r.fault, 0);
	for (k = 0, a = 0; a < na; a++)
		for (b = 0; b < nb; b++, k++) {
			uint64_t sv = x ? (src == dst ? edge[a] : edge[b]) :
				      (uint64_t)(int64_t)edge_imm[b];
			bool want = ref_jmp(code, edge[a], sv);

			if (mem[k] != want)
				fail_msg("%s 0x%02x r%d 0x%" PRIx64 ", %s 0x%"
					 PRIx64 ": %s, want %s",
					 w ? "jmp" : "jmp32", code, dst, edge[a],
					 x ? "reg" : "imm", sv,
					 mem[k] ? "taken" : "not",
					 want ? "taken" : "not");
		}
	tp_free(&p);
	free(mem);
}

static void test_jmp_edges(void **state)
{
	size_t r, q;

	(void)state;
	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		uint8_t code = rows[r].code, cls = BPF_CLASS(code);

		if ((cls != BPF_JMP && cls != BPF_JMP32) ||
		    !(rows[r].flags & (UXDP_BPF_F_SRC | UXDP_BPF_F_IMM)) ||
		    BPF_OP(code) == BPF_JA || BPF_OP(code) == BPF_CALL ||
		    rows[r].flags & UXDP_BPF_F_NODST ||
		    uxdp_bpf_ops[code].group == UXDP_BPF_G_INTERNAL)
			continue;
		for (q = 0; q < ARRAY_SIZE(reg_pairs); q += 3)
			jmp_run(code, reg_pairs[q][0], reg_pairs[q][1]);
	}
}

/* ---- lddw and mov immediates ---------------------------------------------- */

static void test_lddw_mov(void **state)
{
	size_t v;
	int reg;

	(void)state;
	for (reg = 0; reg <= 9; reg++) {
		for (v = 0; v < ARRAY_SIZE(edge); v++) {
			struct tp p = { 0 };

			tp_lddw(&p, reg, edge[v]);
			A(&p, MOV64_X(0, reg), EXIT);
			assert_int_equal(t_run(&p, NULL, 0).r0, edge[v]);
			tp_free(&p);
		}
		for (v = 0; v < ARRAY_SIZE(edge_imm); v++) {
			struct tp p = { 0 };

			/* Upper bits set first: mov32 must clear them. */
			tp_lddw(&p, reg, 0xdeadbeefcafef00dULL);
			A(&p, ALU32_K(BPF_MOV, reg, edge_imm[v]),
			  MOV64_X(0, reg), EXIT);
			assert_int_equal(t_run(&p, NULL, 0).r0,
					 (uint32_t)edge_imm[v]);
			tp_free(&p);
			tp_lddw(&p, reg, 0xdeadbeefcafef00dULL);
			A(&p, MOV64_K(reg, edge_imm[v]), MOV64_X(0, reg),
			  EXIT);
			assert_int_equal(t_run(&p, NULL, 0).r0,
					 (uint64_t)(int64_t)edge_imm[v]);
			tp_free(&p);
		}
	}
}

/* ---- loads and stores (5.1, 5.2) ------------------------------------------ */

static bool is_in8(int64_t d)
{
	return d >= -128 && d <= 127;
}

static const uint8_t sizes[4] = { BPF_B, BPF_H, BPF_W, BPF_DW };

static unsigned size_bytes(uint8_t sz)
{
	return sz == BPF_B ? 1 : sz == BPF_H ? 2 : sz == BPF_W ? 4 : 8;
}

/*
 * mov dst, src; add dst, src2|imm, which the JIT emits as one lea and the
 * interpreter runs as one dispatch: on each engine, every
 * dst, every src (r10 too: rbp, and r7's r13, have no plain base form),
 * every src2 (dst itself: the sum is then src + src), edge immediates,
 * both widths. Each case sets r0..r9 to known values, runs the pair and
 * stores r0..r10 (so r10's value is known); only dst may change.
 */
#define FUSE_WORDS 11
static const int32_t fuse_imm[] = { 0, 1, -1, 127, 128, -129,
				    INT32_MAX, INT32_MIN };

static uint64_t fuse_val(int r)
{
	return 0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1);
}

static void fuse_run(int engine, bool w, int dst)
{
	uint8_t cls = w ? BPF_ALU64 : BPF_ALU;
	int base = dst == 1 ? 2 : 1, src, r;
	size_t ncases = 11 * (11 + ARRAY_SIZE(fuse_imm)), k = 0, m;
	struct tp p = { 0 };
	uint64_t *mem = calloc(ncases * FUSE_WORDS, 8);
	struct tres res;

	assert_non_null(mem);
	if (base != 1)
		A(&p, MOV64_X(base, 1));
	for (src = 0; src <= 10; src++) {
		for (m = 0; m < 11 + ARRAY_SIZE(fuse_imm); m++, k++) {
			for (r = 0; r <= 9; r++)
				if (r != base)
					tp_lddw(&p, r, fuse_val(r));
			tp_add(&p, I(cls | BPF_MOV | BPF_X, dst, src, 0, 0));
			if (m < 11)
				tp_add(&p, I(cls | BPF_ADD | BPF_X, dst,
					     (int)m, 0, 0));
			else
				tp_add(&p, I(cls | BPF_ADD | BPF_K, dst, 0, 0,
					     fuse_imm[m - 11]));
			for (r = 0; r <= 10; r++)
				if (r != base)
					A(&p, STX(BPF_DW, base, r,
						  (int16_t)((k * FUSE_WORDS +
							     r) * 8)));
			/* The base, where its slot is, for the check. */
			A(&p, STX(BPF_DW, base, base,
				  (int16_t)((k * FUSE_WORDS + base) * 8)));
		}
	}
	A(&p, MOV64_K(0, 0), EXIT);
	res = t_run_on(engine, &p, mem, ncases * FUSE_WORDS * 8);
	assert_int_equal(res.fault, 0);
	for (k = 0, src = 0; src <= 10; src++) {
		for (m = 0; m < 11 + ARRAY_SIZE(fuse_imm); m++, k++) {
			const uint64_t *c = &mem[k * FUSE_WORDS];
			uint64_t v[11], a, b, want;

			for (r = 0; r <= 9; r++)
				v[r] = r == base ? (uint64_t)(uintptr_t)mem :
					fuse_val(r);
			v[10] = c[10];
			a = v[src];
			if (m < 11)
				b = (int)m == dst ? a : v[m];
			else
				b = (uint64_t)(int64_t)fuse_imm[m - 11];
			want = w ? a + b : (uint32_t)(a + b);
			if (c[dst] != want)
				fail_msg("engine %d: %s mov r%d, r%d; add r%d, "
					 "%s%lld: 0x%" PRIx64 ", want 0x%"
					 PRIx64, engine,
					 w ? "alu64" : "alu32", dst, src, dst,
					 m < 11 ? "r" : "",
					 m < 11 ? (long long)m :
					 (long long)fuse_imm[m - 11], c[dst],
					 want);
			for (r = 0; r <= 9; r++)
				if (r != dst && c[r] != v[r])
					fail_msg("engine %d: mov r%d, r%d; add: "
						 "r%d clobbered: 0x%" PRIx64,
						 engine, dst, src, r, c[r]);
		}
	}
	tp_free(&p);
	free(mem);
}

/*
 * mov dst, src; add dst, imm; jcc a, b (jgt, jge, jlt, jle, dst on either
 * side), which the interpreter runs as one dispatch: taken and not, at
 * the edges of the comparison, forward and backward; and jumps onto the
 * add and onto the jcc, which then run alone. Every engine.
 */
static void test_fused_bound(void **state)
{
	static const uint8_t ops[] = { BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE };
	static const int32_t adds[] = { 13, 14, 15 };	/* r3 - r1: 14 */
	int e, side, entry;
	size_t o, k;

	(void)state;
	for (e = 0; e < 3; e++)
	for (o = 0; o < ARRAY_SIZE(ops); o++)
	for (k = 0; k < ARRAY_SIZE(adds); k++)
	for (side = 0; side < 2; side++)
	for (entry = 0; entry < 3; entry++) {
		/* r1 = 100, r2 = 114 (the end); r4 = r1 + adds[k] then
		 * r4 op r2 (side 0) or r2 op r4 (side 1). entry 1 jumps
		 * onto the add (r4 = 50 + adds[k]), 2 onto the jcc (r4 =
		 * 50). Taken: r0 = 1; not: r0 = 2; backward: a taken jump
		 * lands on a tail that sets r0 = 1 too. */
		uint64_t r4 = entry == 0 ? 100 + (uint64_t)adds[k] :
			      entry == 1 ? 50 + (uint64_t)adds[k] : 50;
		uint64_t a = side ? 114 : r4, b = side ? r4 : 114;
		bool taken = ops[o] == BPF_JGT ? a > b : ops[o] == BPF_JGE ?
			     a >= b : ops[o] == BPF_JLT ? a < b : a <= b;
		uint8_t jc = (uint8_t)(BPF_JMP | ops[o] | BPF_X);
		int back;

		for (back = 0; back < 2; back++) {
			struct tp p = { 0 };
			struct tres r;

			A(&p, MOV64_K(1, 100), MOV64_K(2, 114),
			  MOV64_K(4, 50), JA(back ? 3 : 0));
			if (back)	/* the target of the backward jump */
				A(&p, MOV64_K(0, 1), EXIT, JA(0));
			/* entry: skip the mov (1) or the mov and add (2) */
			A(&p, JA((int16_t)entry),
			  MOV64_X(4, 1), ALU64_K(BPF_ADD, 4, adds[k]),
			  I(jc, side ? 2 : 4, side ? 4 : 2,
			    (int16_t)(back ? -7 : 2), 0),
			  MOV64_K(0, 2), EXIT,
			  MOV64_K(0, 1), EXIT);
			r = t_run_on(e, &p, NULL, 0);
			assert_int_equal(r.fault, 0);
			if (r.r0 != (taken ? 1U : 2U))
				fail_msg("engine %d op 0x%x add %d side %d "
					 "entry %d back %d: r0 %llu", e,
					 ops[o], adds[k], side, entry, back,
					 (unsigned long long)r.r0);
			tp_free(&p);
		}
	}
}

/*
 * The unaligned u16 load (ldxb a, [p+k+1]; lsh32 a, 8; ldxb b, [p+k];
 * or32 a, b), which both engines run as one step: every a, b and p (b may
 * be p; p r10 too), and the shapes that must not fuse (a = b,
 * another offset, a shift by 16), each against the four instructions
 * worked out here; then jumps onto the second, third and fourth. Every
 * engine.
 */
static void ld16_case(int e, int a, int b, int pr, int16_t koff, int16_t aoff,
		      uint8_t lsh, int entry)
{
	uint8_t buf[64];
	uint64_t out[12] = { 0 }, reg[11], *m;
	struct tp p = { 0 };
	struct tres r;
	int k, base = 1, st;

	for (k = 0; k < 64; k++)
		buf[k] = (uint8_t)(0xa0 + k * 7);
	/* r1 = out (the base for the results), p = buf + 16 (or r10 with
	 * buf's bytes copied below it), every other register a constant. */
	if (a == base || b == base || pr == base)
		base = 9;
	if (a == base || b == base || pr == base)
		base = 8;
	if (base != 1)
		A(&p, MOV64_X(base, 1));
	for (k = 0; k <= 9; k++) {
		if (k == base)
			continue;
		reg[k] = 0x1000 + (uint64_t)k;
		A(&p, MOV64_K(k, (int32_t)reg[k]));
	}
	if (pr == 10) {
		for (k = 0; k < 32; k++)
			A(&p, ST(BPF_B, 10, (int16_t)(k - 32), buf[16 + k]));
	} else {
		tp_lddw(&p, pr, (uint64_t)(uintptr_t)(buf + 16));
		reg[pr] = (uint64_t)(uintptr_t)(buf + 16);
	}
	A(&p, JA((int16_t)entry),
	  LDX(BPF_B, a, pr, aoff), I(BPF_ALU | BPF_LSH | BPF_K, a, 0, 0, lsh),
	  LDX(BPF_B, b, pr, koff), ALU32_X(BPF_OR, a, b),
	  STX(BPF_DW, base, a, 0), STX(BPF_DW, base, b, 8));
	for (k = 0; k <= 9; k++)	/* and every other register */
		if (k != base)
			A(&p, STX(BPF_DW, base, k, (int16_t)(16 + 8 * k)));
	A(&p, MOV64_K(0, 0), EXIT);
	r = t_run_on(e, &p, out, sizeof(out));
	assert_int_equal(r.fault, 0);
	/* The four from instruction @entry on, one at a time. */
	m = reg;
	if (pr == 10)
		m[10] = 0;	/* its bytes are buf's: index from buf + 48 */
	for (st = entry; st < 4; st++) {
		const uint8_t *q = pr == 10 ? buf + 48 : buf + 16;
		uint64_t pv = pr == 10 ? 0 : m[pr];

		(void)pv;
		switch (st) {
		case 0: m[a] = q[aoff]; break;
		case 1: m[a] = (uint32_t)(m[a] << (lsh & 31)); break;
		case 2: m[b] = q[koff]; break;
		case 3: m[a] = (uint32_t)(m[a] | m[b]); break;
		}
	}
	for (k = 0; k <= 9; k++)
		if (k != base && k != a && k != b &&
		    out[2 + k] != m[k])
			fail_msg("engine %d: a r%d b r%d p r%d: r%d clobbered: "
				 "0x%" PRIx64, e, a, b, pr, k, out[2 + k]);
	if (out[0] != m[a] || out[1] != m[b])
		fail_msg("engine %d: a r%d b r%d p r%d k %d/%d lsh %u entry %d:"
			 " a 0x%" PRIx64 " b 0x%" PRIx64 ", want 0x%" PRIx64
			 " 0x%" PRIx64, e, a, b, pr, aoff, koff, lsh, entry,
			 out[0], out[1], m[a], m[b]);
	tp_free(&p);
}

static void test_fused_ld16(void **state)
{
	int e, a, b, pr, entry;

	(void)state;
	for (e = 0; e < 3; e++) {
		for (a = 0; a <= 9; a++)
			for (b = 0; b <= 9; b++)
				for (pr = 2; pr <= 10; pr += 4) {
					if (a == pr)
						continue;
					ld16_case(e, a, b, pr, -4, -3, 8, 0);
					if (pr != 10)
						ld16_case(e, a, b, pr, 5, 6, 8,
							  0);
				}
		/* Not the idiom: another offset, another shift. */
		ld16_case(e, 3, 4, 2, 4, 6, 8, 0);
		ld16_case(e, 3, 4, 2, 4, 5, 16, 0);
		for (entry = 1; entry <= 3; entry++)
			ld16_case(e, 3, 4, 2, 4, 5, 8, entry);
	}
}

/* The bounds test on values at the edges: r1 + imm (imm sign-extended)
 * against r2, unsigned, 64 bits; r10 as the source too. */
static void bound_case(int e, uint8_t op, int src, uint64_t r1v, int32_t imm,
		       uint64_t r2v)
{
	struct tp p = { 0 };
	struct tres r;
	uint64_t q;
	bool taken;

	tp_lddw(&p, 1, r1v);
	tp_lddw(&p, 2, r2v);
	A(&p, MOV64_X(4, src), ALU64_K(BPF_ADD, 4, imm),
	  I(BPF_JMP | op | BPF_X, 4, 2, 4, 0),
	  /* not taken: r0 = r4 - r10 when src is r10, else 2 */
	  MOV64_K(0, 2));
	if (src == 10)
		A(&p, MOV64_X(0, 4), ALU64_X(BPF_SUB, 0, 10));
	else
		A(&p, MOV64_K(0, 2), MOV64_K(0, 2));
	A(&p, EXIT, MOV64_K(0, 1), EXIT);
	r = t_run_on(e, &p, NULL, 0);
	assert_int_equal(r.fault, 0);
	if (src == 10) {
		/* r10's value is the engine's: jlt against 0 is never
		 * taken, and r0 tells what r4 was. */
		if (r.r0 != (uint64_t)(int64_t)imm)
			fail_msg("engine %d: mov r4, r10; add r4, %d: r4 - r10 "
				 "= 0x%llx", e, imm,
				 (unsigned long long)r.r0);
		tp_free(&p);
		return;
	}
	q = r1v + (uint64_t)(int64_t)imm;
	taken = op == BPF_JGT ? q > r2v : op == BPF_JGE ? q >= r2v :
		op == BPF_JLT ? q < r2v : q <= r2v;
	if (r.r0 != (taken ? 1U : 2U))
		fail_msg("engine %d: op 0x%x: 0x%llx + %d vs 0x%llx: r0 %llu",
			 e, op, (unsigned long long)r1v, imm,
			 (unsigned long long)r2v, (unsigned long long)r.r0);
	tp_free(&p);
}

static void test_fused_bound_edges(void **state)
{
	static const uint8_t ops[] = { BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE };
	static const uint64_t v1[] = { 0, 1, 0xffffffff00000000ULL,
				       0x7fffffffffffffffULL, ~0ULL,
				       0x00000000ffffffffULL };
	static const int32_t imm[] = { -1, 1, 0, INT32_MIN, INT32_MAX };
	static const int64_t d[] = { -1, 0, 1 };
	size_t o, a, b, c;
	int e;

	(void)state;
	for (e = 0; e < 3; e++) {
		for (o = 0; o < ARRAY_SIZE(ops); o++)
			for (a = 0; a < ARRAY_SIZE(v1); a++)
				for (b = 0; b < ARRAY_SIZE(imm); b++)
					for (c = 0; c < ARRAY_SIZE(d); c++)
						bound_case(e, ops[o], 1, v1[a],
							   imm[b], v1[a] +
							   (uint64_t)(int64_t)
							   imm[b] +
							   (uint64_t)d[c]);
		for (b = 0; b < ARRAY_SIZE(imm); b++)
			bound_case(e, BPF_JLT, 10, 0, imm[b], 0);
	}
}

static void test_fused_mov_add(void **state)
{
	static const struct { int off; uint32_t want; } land[] = {
		{ 0, 7 + 5 },	/* the mov runs: r0 = r2 + 5 */
		{ 1, 3 + 5 },	/* a jump skips it: r0 = r0 + 5 */
	};
	int dst, e;
	size_t i;

	(void)state;
	for (e = 0; e < 3; e++) {
		for (dst = 0; dst <= 9; dst++) {
			fuse_run(e, true, dst);
			fuse_run(e, false, dst);
		}
		/* A jump onto the add: the pair must not be fused. */
		for (i = 0; i < ARRAY_SIZE(land); i++) {
			struct tp p = { 0 };
			struct tres r;

			A(&p, MOV64_K(0, 3), MOV64_K(2, 7),
			  JA((int16_t)land[i].off),
			  MOV64_X(0, 2), ALU64_K(BPF_ADD, 0, 5), EXIT);
			r = t_run_on(e, &p, NULL, 0);
			assert_int_equal(r.fault, 0);
			assert_int_equal(r.r0, land[i].want);
			tp_free(&p);
		}
		/* A bpf-to-bpf call and a ja32 (its offset in imm) onto
		 * the add: r0 = 3 + 5 either way. */
		for (i = 0; i < 2; i++) {
			struct tp p = { 0 };
			struct tres r;

			if (i == 0)
				A(&p, MOV64_K(2, 7), MOV64_K(0, 3),
				  CALL_LOCAL(2), EXIT,
				  MOV64_X(0, 2), ALU64_K(BPF_ADD, 0, 5), EXIT);
			else
				A(&p, MOV64_K(2, 7), MOV64_K(0, 3), JA32(1),
				  MOV64_X(0, 2), ALU64_K(BPF_ADD, 0, 5), EXIT);
			r = t_run_on(e, &p, NULL, 0);
			assert_int_equal(r.fault, 0);
			if (r.r0 != 8)
				fail_msg("engine %d: %s onto the add: r0 %llu",
					 e, i ? "ja32" : "a call",
					 (unsigned long long)r.r0);
			tp_free(&p);
		}
	}
	/* And the JIT did fuse: the add takes no code of its own. */
	{
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;

		A(&p, MOV64_X(0, 1), ALU64_K(BPF_ADD, 0, 5), EXIT);
		c = t_code(&p);
		jit = t_compile(&c);
		assert_int_equal(uxdp_bpf_jit_insn_off(jit, 2),
				 uxdp_bpf_jit_insn_off(jit, 1));
		assert_true(uxdp_bpf_jit_insn_off(jit, 1) >
			    uxdp_bpf_jit_insn_off(jit, 0));
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}

/*
 * The lea a fused mov+add becomes, byte for byte, where x86 has special
 * cases: r7 is r13 and r10 is rbp, which as a base have no form without a
 * displacement (lea swaps such a base into the index, or adds a zero
 * disp8 when both are); a 32-bit pair has no REX.W; an add of dst reads
 * src twice. (r0 rax, r1 rdi, r2 rsi, r6 rbx.)
 */
static void test_fused_lea_bytes(void **state)
{
	static const struct {
		struct bpf_insn mov, add;
		uint8_t len, bytes[5];
	} c[] = {
		{ MOV64_X(0, 1), ALU64_K(BPF_ADD, 0, 5), 4,
		  { 0x48, 0x8d, 0x47, 0x05 } },		/* lea rax, [rdi+5] */
		{ MOV64_X(0, 1), ALU64_X(BPF_ADD, 0, 2), 4,
		  { 0x48, 0x8d, 0x04, 0x37 } },		/* lea rax, [rdi+rsi] */
		{ ALU32_X(BPF_MOV, 0, 1), ALU32_K(BPF_ADD, 0, 5), 3,
		  { 0x8d, 0x47, 0x05 } },		/* lea eax, [rdi+5] */
		{ MOV64_X(0, 7), ALU64_X(BPF_ADD, 0, 2), 4,
		  { 0x4a, 0x8d, 0x04, 0x2e } },		/* lea rax, [rsi+r13] */
		{ MOV64_X(0, 10), ALU64_X(BPF_ADD, 0, 7), 5,
		  { 0x4a, 0x8d, 0x44, 0x2d, 0x00 } },	/* [rbp+r13+0] */
		{ MOV64_X(6, 10), ALU64_K(BPF_ADD, 6, -8), 4,
		  { 0x48, 0x8d, 0x5d, 0xf8 } },		/* lea rbx, [rbp-8] */
		{ MOV64_X(0, 2), ALU64_X(BPF_ADD, 0, 0), 4,
		  { 0x48, 0x8d, 0x04, 0x36 } },		/* lea rax, [rsi+rsi] */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code code;
		struct uxdp_bpf_jit *jit;
		const uint8_t *at;
		uint32_t len;

		A(&p, c[i].mov, c[i].add, MOV64_K(0, 0), EXIT);
		code = t_code(&p);
		jit = t_compile(&code);
		at = (const uint8_t *)uxdp_bpf_jit_image(jit) +
		     uxdp_bpf_jit_insn_off(jit, 0);
		len = uxdp_bpf_jit_insn_off(jit, 2) -
		      uxdp_bpf_jit_insn_off(jit, 0);
		if (len != c[i].len || memcmp(at, c[i].bytes, len))
			fail_msg("case %zu: %u bytes %02x %02x %02x %02x %02x, "
				 "want %u", i, len, at[0], at[1], at[2],
				 len > 3 ? at[3] : 0, len > 4 ? at[4] : 0,
				 c[i].len);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}


/* Every size through every base register (r7 is r13 and r10 rbp, which
 * have no disp-less form) and offsets 0, small, large and negative. */
static void test_ldx_st_stx(void **state)
{
	static const int16_t offs[] = { 0, 8, 120, 128, 400 };
	uint8_t mem[2048];
	size_t z, o;
	int base, val, sx;

	(void)state;
	for (z = 0; z < 4; z++) {
		uint8_t sz = sizes[z];
		unsigned n = size_bytes(sz);

		for (base = 1; base <= 9; base++) {
			for (o = 0; o < ARRAY_SIZE(offs); o++) {
				int16_t off = offs[o];
				uint64_t pat = 0x8182838485868788ULL, want;
				struct tp p = { 0 };
				struct tres r;

				val = base == 2 ? 3 : 2;
				sx = base == 6 ? 7 : 6;
				/* base = mem + 512, so negative offsets too */
				memset(mem, 0, sizeof(mem));
				A(&p, MOV64_X(base, 1),
				  ALU64_K(BPF_ADD, base, 512));
				tp_lddw(&p, val, pat);
				A(&p, STX(sz, base, val, off),
				  ST(sz, base, -off - 16, -2),
				  LDX(sz, 0, base, off));
				if (sz != BPF_DW)
					A(&p, LDXS(sz, sx, base, off),
					  STX(BPF_DW, base, sx, -off - 32));
				A(&p, EXIT);
				r = t_run(&p, mem, sizeof(mem));
				assert_int_equal(r.fault, 0);
				want = n == 8 ? pat : pat & ((1ULL << (8 * n)) - 1);
				if (r.r0 != want)
					fail_msg("ldx size %u base r%d off %d: 0x%"
						 PRIx64, n, base, off, r.r0);
				assert_memory_equal(&mem[512 + off], &pat, n);
				/* st: the immediate, sign-extended to the size */
				{
					uint64_t m1 = UINT64_MAX, got = 0;

					memcpy(&got, &mem[512 - off - 16], n);
					assert_int_equal(got, n == 8 ? m1 - 1 :
							 (m1 - 1) &
							 ((1ULL << (8 * n)) - 1));
				}
				if (sz != BPF_DW) {
					int64_t got_sx;

					memcpy(&got_sx, &mem[512 - off - 32], 8);
					want = n == 1 ? (uint64_t)(int64_t)(int8_t)pat :
					       n == 2 ? (uint64_t)(int64_t)(int16_t)pat :
					       (uint64_t)(int64_t)(int32_t)pat;
					assert_int_equal((uint64_t)got_sx, want);
				}
				tp_free(&p);
			}
		}
	}
	/* stxb from each register: rsi/rdi/rbp need a REX prefix to be
	 * sil/dil/bpl and not dh/bh/ch. */
	for (val = 0; val <= 10; val++) {
		struct tp p = { 0 };
		int b = val == 1 ? 2 : 1;

		memset(mem, 0, sizeof(mem));
		if (b != 1)
			A(&p, MOV64_X(b, 1));
		if (val != 10)
			tp_lddw(&p, val, 0x1122334455667700ULL | (unsigned)val);
		A(&p, STX(BPF_B, b, val, 5), STX(BPF_H, b, val, 6),
		  MOV64_K(0, 0), EXIT);
		assert_int_equal(t_run(&p, mem, sizeof(mem)).fault, 0);
		if (val != 10) {
			assert_int_equal(mem[5], val);
			assert_int_equal(mem[6], val);
			assert_int_equal(mem[7], 0x77);
		}
		tp_free(&p);
	}
}

/* ---- atomics (5.3) --------------------------------------------------------- */

static void test_atomics(void **state)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
		BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH,
		BPF_XOR | BPF_FETCH, BPF_XCHG, BPF_CMPXCHG,
	};
	static const uint8_t pairs[][2] = {
		{ 1, 2 }, { 1, 0 }, { 0, 2 }, { 3, 4 }, { 4, 3 }, { 6, 9 },
		{ 7, 0 }, { 2, 2 },
	};
	static const uint64_t vals[][3] = {	/* memory, src, r0 */
		{ 0x00000000f0f0f0f0ULL, 0x0f0f0f0f33333333ULL,
		  0x1111111100000000ULL },
		{ 0xffffffffffffffffULL, 1, 0xffffffffffffffffULL },
		{ 0x123456789abcdef0ULL, 0x8000000080000000ULL,
		  0x123456789abcdef0ULL },
		{ 0x00000000deadbeefULL, 0xcafe, 0xaaaaaaaadeadbeefULL },
	};
	size_t o, q, v, z;

	(void)state;
	for (z = 0; z < 2; z++)
	for (o = 0; o < ARRAY_SIZE(ops); o++)
	for (q = 0; q < ARRAY_SIZE(pairs); q++)
	for (v = 0; v < ARRAY_SIZE(vals); v++) {
		bool w = z == 1;
		int dst = pairs[q][0], src = pairs[q][1], k;
		int32_t op = ops[o];
		uint64_t mem[16] = { 0 }, regs[10], m, old, s, r0;
		uint64_t mask = w ? UINT64_MAX : UINT32_MAX;
		struct tp p = { 0 };

		if (dst == src || (op == BPF_CMPXCHG && (src == 0 || dst == 0)))
			continue;
		mem[12] = vals[v][0];
		tp_begin_dump(&p);
		for (k = 0; k <= 9; k++)
			if (k != 1)
				tp_lddw(&p, k, 0xa0a0a0a000000000ULL | k);
		A(&p, MOV64_X(dst, 1), ALU64_K(BPF_ADD, dst, 96 - 8));
		tp_lddw(&p, src, vals[v][1]);
		if (src != 0 && dst != 0)
			tp_lddw(&p, 0, vals[v][2]);
		A(&p, ATOMIC(w ? BPF_DW : BPF_W, dst, src, 8, op));
		tp_end_dump(&p);
		assert_int_equal(t_run(&p, mem, sizeof(mem)).fault, 0);
		memcpy(regs, mem, sizeof(regs));
		/* the reference */
		old = vals[v][0] & mask;
		s = vals[v][1];
		r0 = src == 0 ? vals[v][1] : vals[v][2];
		switch (op & ~BPF_FETCH) {
		case BPF_ADD: m = old + s; break;
		case BPF_OR: m = old | s; break;
		case BPF_AND: m = old & s; break;
		case BPF_XOR: m = old ^ s; break;
		default: m = 0; break;
		}
		if (op == BPF_XCHG)
			m = s;
		if (op == BPF_CMPXCHG) {
			m = (r0 & mask) == old ? s : old;
			r0 = old;
		}
		m &= mask;
		if (!w)
			m |= vals[v][0] & ~mask;	/* the other half */
		if (mem[12] != m)
			fail_msg("atomic%s 0x%x [r%d], r%d, mem 0x%" PRIx64
				 " src 0x%" PRIx64 ": mem 0x%" PRIx64
				 ", want 0x%" PRIx64, w ? "64" : "32", op, dst,
				 src, vals[v][0], s, mem[12], m);
		if (((op & BPF_FETCH) || op == BPF_XCHG) && op != BPF_CMPXCHG) {
			if (regs[src] != old)
				fail_msg("atomic%s 0x%x [r%d], r%d: fetched 0x%"
					 PRIx64 ", want 0x%" PRIx64,
					 w ? "64" : "32", op, dst, src,
					 regs[src], old);
		} else if (regs[src] != s) {
			fail_msg("atomic 0x%x: src changed", op);
		}
		if (op == BPF_CMPXCHG && regs[0] != r0)
			fail_msg("cmpxchg%s [r%d], r%d, r0 0x%" PRIx64
				 ": r0 0x%" PRIx64 ", want 0x%" PRIx64,
				 w ? "64" : "32", dst, src, vals[v][2],
				 regs[0], r0);
		if (op != BPF_CMPXCHG && src != 0 && dst != 0 &&
		    regs[0] != vals[v][2])
			fail_msg("atomic 0x%x [r%d], r%d: r0 clobbered 0x%"
				 PRIx64, op, dst, src, regs[0]);
		for (k = 2; k <= 9; k++)
			if (k != dst && k != src &&
			    regs[k] != (0xa0a0a0a000000000ULL | k))
				fail_msg("atomic 0x%x [r%d], r%d: r%d clobbered",
					 op, dst, src, k);
		tp_free(&p);
	}
}

/* ---- jump encodings: rel8 edges, passes, long jumps ----------------------- */

/* Fillers of 3 and 4 bytes (add32 r2, 1 and add r2, 1: measured below)
 * that make up @bytes. */
static void tp_fill(struct tp *p, unsigned bytes)
{
	while (bytes % 4) {
		A(p, ALU32_K(BPF_ADD, 2, 1));
		bytes -= 3;
	}
	for (; bytes; bytes -= 4)
		A(p, ALU64_K(BPF_ADD, 2, 1));
}

static uint32_t isize(const struct uxdp_bpf_jit *jit, uint32_t i)
{
	return uxdp_bpf_jit_insn_off(jit, i + 1) - uxdp_bpf_jit_insn_off(jit, i);
}

/* The distance that decides rel8 for the jump ending instruction @i
 * (after a compare of @cmp_len bytes), to @t: forward, the code it jumps
 * over; backward, from the end of its rel8 form. */
static int64_t rel8_dist(const struct uxdp_bpf_jit *jit, uint32_t i,
			 uint32_t t, uint32_t cmp_len)
{
	if (t > i)
		return (int64_t)uxdp_bpf_jit_insn_off(jit, t) -
		       uxdp_bpf_jit_insn_off(jit, i + 1);
	return (int64_t)uxdp_bpf_jit_insn_off(jit, t) -
	       (uxdp_bpf_jit_insn_off(jit, i) + cmp_len + 2);
}

/*
 * A forward ja and jeq over fillers of 120..136 bytes, and a backward jne
 * over as many: each jump is rel8 exactly when the distance fits (127
 * forward, -128 backward are the last that do), and every one lands.
 */
static void test_jump_rel8_edges(void **state)
{
	bool seen[4][2] = { { false } };
	unsigned fill;

	(void)state;
	for (fill = 112; fill <= 140; fill++) {
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		struct tp p = { 0 };
		uint32_t j1, j2, t1, t2, loop, j3, f0, f1;
		int64_t d;

		/* ja +N over the fillers */
		A(&p, MOV64_K(2, 0), MOV64_K(3, 2));
		j1 = p.n;
		A(&p, JA(0));
		f0 = p.n;
		tp_fill(&p, fill);
		t1 = p.n;
		p.in[j1].off = (int16_t)(t1 - j1 - 1);
		/* jeq r2, 0, +N: cmp is a test (3 bytes) */
		j2 = p.n;
		A(&p, JMP_K(BPF_JEQ, 2, 0, 0));
		tp_fill(&p, fill);
		t2 = p.n;
		p.in[j2].off = (int16_t)(t2 - j2 - 1);
		/* a loop of two rounds back over the fillers */
		loop = p.n;
		tp_fill(&p, fill - 16);
		A(&p, ALU64_K(BPF_SUB, 3, 1));
		j3 = p.n;
		A(&p, JMP_K(BPF_JNE, 3, 0, (int16_t)(loop - j3 - 1)));
		f1 = p.n;
		A(&p, MOV64_X(0, 2), EXIT);
		c = t_code(&p);
		jit = t_compile(&c);
		/* the fillers are the sizes tp_fill counts on */
		assert_int_equal(uxdp_bpf_jit_insn_off(jit, t1) -
				 uxdp_bpf_jit_insn_off(jit, f0), fill);
		d = rel8_dist(jit, j1, t1, 0);
		assert_int_equal(isize(jit, j1), is_in8(d) ? 2 : 5);
		seen[0][is_in8(d)] |= d == 127 || d == 128;
		d = rel8_dist(jit, j2, t2, 3);
		assert_int_equal(isize(jit, j2), 3 + (is_in8(d) ? 2 : 6));
		seen[1][is_in8(d)] |= d == 127 || d == 128;
		d = rel8_dist(jit, j3, loop, 3);
		assert_int_equal(isize(jit, j3), 3 + (is_in8(d) ? 2 : 6));
		seen[2][is_in8(d)] |= d == -128 || d == -129;
		/* Ran: the jumps skipped their fillers; the loop's went
		 * twice over its own. */
		assert_int_equal(uxdp_bpf_jit_run(jit, &run, 0, 0),
				 2 * (f1 - loop - 2));
		assert_int_equal(run.fault, 0);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
	/* Each edge was met from both sides. */
	assert_true(seen[0][0] && seen[0][1]);
	assert_true(seen[1][0] && seen[1][1]);
	assert_true(seen[2][0] && seen[2][1]);
}

/* A tiny reference for the programs below: mul/add of r0 by K, ja, and
 * jset r0, K. */
static uint64_t ref_chain(const struct bpf_insn *in, uint32_t n)
{
	uint64_t r0 = 0;
	uint32_t pc = 0;

	while (pc < n) {
		const struct bpf_insn *i = &in[pc++];

		switch (i->code) {
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r0 = (uint64_t)(int64_t)i->imm;
			break;
		case BPF_ALU64 | BPF_MUL | BPF_K:
			r0 *= (uint64_t)(int64_t)i->imm;
			break;
		case BPF_ALU64 | BPF_ADD | BPF_K:
			r0 += (uint64_t)(int64_t)i->imm;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->off;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			if (r0 & (uint64_t)(int64_t)i->imm)
				pc += i->off;
			break;
		case BPF_JMP | BPF_EXIT:
			return r0;
		}
	}
	return ~0ULL;
}

/*
 * Nested and overlapping forward jumps whose sizes depend on each other:
 * they settle in more than two passes, every jump ends rel8 exactly
 * when it fits, and the program computes what the reference does.
 */
static void jump_chains(unsigned pad_pass)
{
	unsigned seed, max_passes = 0;

	uxdp_bpf_jit_pad_pass = pad_pass;
	for (seed = 1; seed <= 200; seed++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		uint32_t n = 60 + seed % 80, i, k;
		uint64_t want, got;
		unsigned x = seed * 2654435761U;

		A(&p, MOV64_K(0, 0));
		for (i = 1; i < n; i++) {
			x = x * 1103515245U + 12345U;
			switch ((x >> 16) % 4) {
			case 0:
				A(&p, ALU64_K(BPF_MUL, 0, 3));
				break;
			case 1:
				A(&p, ALU64_K(BPF_ADD, 0, (int32_t)(x >> 20)));
				break;
			case 2:
				/* forward over 1..40 instructions */
				A(&p, JA((int16_t)(1 + (x >> 8) % 40)));
				break;
			default:
				A(&p, I(BPF_JMP | BPF_JSET | BPF_K, 0, 0,
					(int16_t)(1 + (x >> 8) % 40),
					1 << ((x >> 4) % 8)));
				break;
			}
		}
		A(&p, EXIT);
		/* Clamp jumps to the exit. */
		for (i = 0; i < n; i++)
			if (BPF_CLASS(p.in[i].code) == BPF_JMP &&
			    i + 1 + p.in[i].off > n)
				p.in[i].off = (int16_t)(n - i - 1);
		want = ref_chain(p.in, p.n);
		c = t_code(&p);
		jit = t_compile(&c);
		got = uxdp_bpf_jit_run(jit, &run, 0, 0);
		if (got != want)
			fail_msg("seed %u: 0x%" PRIx64 ", want 0x%" PRIx64,
				 seed, got, want);
		for (k = 0; k < n; k++) {
			uint32_t t = k + 1 + p.in[k].off, cmp;
			int64_t d;

			if (BPF_CLASS(p.in[k].code) != BPF_JMP ||
			    p.in[k].code == (BPF_JMP | BPF_EXIT) ||
			    t == k + 1)
				continue;
			cmp = p.in[k].code == (BPF_JMP | BPF_JA) ? 0 : 7;
			d = rel8_dist(jit, k, t, cmp);
			if (pad_pass < 10)
				continue;	/* padded: sizes as they froze */
			if (isize(jit, k) != cmp + (is_in8(d) ? 2U :
						    cmp ? 6U : 5U))
				fail_msg("seed %u insn %u: %u bytes for a "
					 "distance of %" PRId64, seed, k,
					 isize(jit, k), d);
		}
		if (uxdp_bpf_jit_passes(jit) > max_passes)
			max_passes = uxdp_bpf_jit_passes(jit);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
	uxdp_bpf_jit_pad_pass = 10;
	/* The guess, then shrinking rounds, then the checked pass. */
	if (pad_pass >= 10)
		assert_true(max_passes >= 4);
}

static void test_jump_convergence(void **state)
{
	(void)state;
	jump_chains(10);
}

/* The NOP-padding fallback (normally from pass 10 only), from the first
 * passes: the frozen layouts are bigger and still right. */
static void test_jump_padded(void **state)
{
	(void)state;
	jump_chains(1);
	jump_chains(2);
	jump_chains(3);
}

/* rel32 both ways: ja32 over 40000 instructions, a jne back over 30000. */
static void test_jump_long(void **state)
{
	struct tp p = { 0 };
	uint32_t i;
	struct tres r;

	(void)state;
	A(&p, MOV64_K(2, 0), MOV64_K(3, 2), JA32(40000));
	for (i = 0; i < 40000; i++)
		A(&p, ALU64_K(BPF_ADD, 2, 1000));
	for (i = 0; i < 30000; i++)
		A(&p, ALU64_K(BPF_ADD, 2, 1));
	A(&p, ALU64_K(BPF_SUB, 3, 1), JMP_K(BPF_JNE, 3, 0, -30002),
	  MOV64_X(0, 2), EXIT);
	r = t_run(&p, NULL, 0);
	assert_int_equal(r.fault, 0);
	assert_int_equal(r.r0, 60000);
	tp_free(&p);
}

/* ---- helpers ---------------------------------------------------------------- */

static struct uxdp_bpf_run *seen_cur;

static uint64_t h_cur(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	(void)b, (void)c, (void)d, (void)e;
	seen_cur = uxdp_bpf_cur;
	return a;
}

/* rsp % 16 at a helper's entry: 8 when its caller kept the ABI's
 * alignment. Assembly, so the compiler cannot know the answer. */
uint64_t t_rsp_mod16(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		     uint64_t e);
__asm__(".text\n"
	".globl t_rsp_mod16\n"
	".type t_rsp_mod16, @function\n"
	"t_rsp_mod16:\n"
	"\tmov %rsp, %rax\n"
	"\tand $15, %rax\n"
	"\tret\n"
	".size t_rsp_mod16, .-t_rsp_mod16\n");

static uint64_t h_echo(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		       uint64_t e)
{
	(void)b, (void)c, (void)d, (void)e;
	return a;
}

static const struct uxdp_bpf_helper helper_cur = {
	.id = 1001, .name = "cur", .fn = h_cur,
};
static const struct uxdp_bpf_helper helper_align = {
	.id = 1002, .name = "align", .fn = t_rsp_mod16,
};
static const struct uxdp_bpf_helper helper_unwind = {
	.id = 5, .name = "unwind", .fn = h_echo,
	.flags = UXDP_BPF_HELPER_UNWIND,
};

/* The budget left, as the helper's run has it; and one spent. */
static uint64_t h_budget(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			 uint64_t e)
{
	(void)a, (void)b, (void)c, (void)d, (void)e;
	if (uxdp_bpf_cur->budget)
		uxdp_bpf_cur->budget--;
	return uxdp_bpf_cur->budget;
}
static const struct uxdp_bpf_helper helper_budget = {
	.id = 1003, .name = "budget", .fn = h_budget,
};
/* r3 ^ r4 ^ r5 as the helper gets them (trace_printk formats them
 * whatever its prototype declares). */
static uint64_t h_args345(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			  uint64_t e)
{
	(void)a, (void)b;
	return c ^ d ^ e;
}
static const struct uxdp_bpf_helper helper_args345 = {
	.id = 1004, .name = "args345", .fn = h_args345,
};
static const struct uxdp_bpf_helper *const t_helpers[] = {
	&helper_sum5, &helper_cur, &helper_align, &helper_unwind,
	&helper_budget, &helper_args345,
};
enum { H_SUM5, H_CUR, H_ALIGN, H_UNWIND, H_BUDGET, H_ARGS345 };

static struct uxdp_bpf_code t_code_h(struct tp *p)
{
	struct uxdp_bpf_code c = t_code(p);

	c.helpers = (const struct uxdp_bpf_helper **)t_helpers;
	c.nhelpers = ARRAY_SIZE(t_helpers);
	return c;
}

static struct tres t_run_h(struct tp *p, void *mem, size_t len)
{
	struct uxdp_bpf_code c = t_code_h(p);

	return t_run_code(&c, mem, len);
}

/* Five arguments in r1..r5, the result in r0, r6..r9 kept, the run in
 * uxdp_bpf_cur, and the stack aligned for the ABI at every call, in main
 * and one frame down. */
static void test_helper_calls(void **state)
{
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;
	struct uxdp_bpf_run run = { 0 };
	uint64_t mem[10];
	struct tp p = { 0 };
	uint32_t call;
	int k;

	(void)state;
	tp_begin_dump(&p);
	for (k = 7; k <= 9; k++)
		tp_lddw(&p, k, 0x6060606060606060ULL + k);
	A(&p, MOV64_K(1, 1), MOV64_K(2, 2), MOV64_K(3, 3), MOV64_K(4, 4),
	  MOV64_K(5, 5), CALL(H_SUM5), MOV64_X(6, 0),
	  CALL(H_ALIGN), STX(BPF_DW, 10, 0, -400));
	call = p.n;
	A(&p, CALL_LOCAL(0), LDX(BPF_DW, 5, 10, -400));
	tp_end_dump(&p);
	/* the callee: r0 = its rsp % 16 * 1000 + cur(7); r6 clobbered */
	p.in[call].imm = (int32_t)(p.n - call - 1);
	A(&p, CALL(H_ALIGN), MOV64_X(6, 0), MOV64_K(1, 7), CALL(H_CUR),
	  ALU64_K(BPF_MUL, 6, 1000), ALU64_X(BPF_ADD, 0, 6), EXIT);
	c = t_code_h(&p);
	jit = t_compile(&c);
	seen_cur = NULL;
	uxdp_bpf_jit_run(jit, &run, (uint64_t)(uintptr_t)mem, sizeof(mem));
	assert_int_equal(run.fault, 0);
	assert_ptr_equal(seen_cur, &run);
	assert_null(uxdp_bpf_cur);		/* restored after the run */
	assert_int_equal(mem[6], 1 + 4 + 9 + 16 + 25);
	assert_int_equal(mem[5], 8);		/* main */
	assert_int_equal(mem[0], 8 * 1000 + 7);	/* the callee */
	for (k = 7; k <= 9; k++)
		assert_int_equal(mem[k], 0x6060606060606060ULL + k);
	uxdp_bpf_jit_free(jit);
	tp_free(&p);
}

/* A helper flagged UNWIND that returns 0 ends the run with r0 = 0, from
 * main and from 5 frames down; non-zero, the program goes on. */
static void test_helper_unwind(void **state)
{
	int depth, arg;

	(void)state;
	for (depth = 0; depth <= 5; depth += 5)
		for (arg = 0; arg <= 1; arg++) {
			struct tp p = { 0 };
			struct tres r;
			int k;

			/* main and depth-1 callees: call the next one */
			for (k = 0; k < depth; k++)
				A(&p, CALL_LOCAL(1), EXIT);
			A(&p, MOV64_K(1, arg ? -1 : 0), CALL(H_UNWIND),
			  MOV64_K(0, 2), EXIT);
			if (!depth) {
				r = t_run_h(&p, NULL, 0);
			} else {
				/* main also adds to r0 after its call */
				struct tp q = { 0 };

				A(&q, CALL_LOCAL(2), ALU64_K(BPF_ADD, 0, 100),
				  EXIT);
				for (k = 0; k < (int)p.n; k++)
					tp_add(&q, p.in[k]);
				r = t_run_h(&q, NULL, 0);
				tp_free(&q);
			}
			assert_int_equal(r.fault, 0);
			assert_int_equal(r.r0, arg ? (depth ? 102 : 2) : 0);
			tp_free(&p);
		}
}

/* ---- bpf-to-bpf calls ---------------------------------------------------- */

/*
 * f(r1 = n): n == 0 ? 0 : f(n - 1) + 1, each frame writing its own
 * [r10-8] and checking it after the call: up to 8 frames (main's
 * included) run; the call that would make a 9th faults DEPTH.
 */
static void test_local_call_depth(void **state)
{
	static const uint32_t stack_sizes[] = { 512, 64, 0 };
	uint64_t n;
	size_t z;

	(void)state;
	for (z = 0; z < ARRAY_SIZE(stack_sizes); z++)
	for (n = 0; n <= 8; n++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		uint64_t r0;

		A(&p, MOV64_K(1, (int32_t)n), MOV64_K(6, 77), CALL_LOCAL(2),
		  ALU64_X(BPF_ADD, 0, 6), EXIT,
		  /* 5: f */
		  JMP_K(BPF_JNE, 1, 0, 2),
		  MOV64_K(0, 0), EXIT,
		  STX(BPF_DW, 10, 1, -8),
		  MOV64_X(6, 1),			/* r6: the callee's */
		  ALU64_K(BPF_SUB, 1, 1),
		  CALL_LOCAL(-7),			/* 11 */
		  LDX(BPF_DW, 2, 10, -8),
		  JMP_X(BPF_JEQ, 2, 6, 2),		/* frame intact */
		  MOV64_K(0, 1000), EXIT,
		  ALU64_K(BPF_ADD, 0, 1), EXIT);
		c = t_code(&p);
		c.stack_size = stack_sizes[z];
		jit = t_compile(&c);
		r0 = uxdp_bpf_jit_run(jit, &run, 0, 0);
		/* main, then f(n) .. f(0): n + 2 frames; with no stack,
		 * every frame is at one r10 and [r10-8] is shared */
		if (n + 2 <= UXDP_BPF_MAX_DEPTH) {
			assert_int_equal(run.fault, 0);
			assert_int_equal(r0, stack_sizes[z] || n < 2 ? n + 77 :
					 1000 + 77);
		} else {
			assert_int_equal(run.fault, UXDP_BPF_FAULT_DEPTH);
			assert_int_equal(run.fault_pc, 11);
			assert_int_equal(r0, 0);
		}
		/* A raw code reads its run for the depth: no leaf. */
		assert_null(uxdp_bpf_jit_leaf(jit));
		uxdp_bpf_jit_free(jit);
		/* The pass's depth (prog.c sets depth_proven): no test, a
		 * leaf on exactly the frames the depth needs, in a heap
		 * buffer (AddressSanitizer sees a frame past them). */
		if (n + 2 <= UXDP_BPF_MAX_DEPTH) {
			size_t len = (size_t)UXDP_BPF_MAX_DEPTH *
				     UXDP_BPF_STACK;
			uint8_t *stk = aligned_alloc(16, len);
			uxdp_bpf_jit_fn fn;

			assert_non_null(stk);
			c.depth_proven = true;
			jit = t_compile(&c);
			fn = uxdp_bpf_jit_leaf(jit);
			assert_non_null(fn);
			assert_int_equal(fn(0, 0, NULL, stk + len),
					 stack_sizes[z] || n < 2 ? n + 77 :
					 1000 + 77);
			uxdp_bpf_jit_free(jit);
			free(stk);
		}
		tp_free(&p);
	}
}

/* The callee's r10 is stack_size below, its stack its own; the caller's
 * stack is reachable through a pointer; r6..r9 come back as they were. */
static void local_call_frames(uint32_t stack_size)
{
	struct uxdp_bpf_code c;
	uint64_t mem[10];
	struct tp p = { 0 };
	struct tres r;
	int k;

	tp_begin_dump(&p);
	for (k = 6; k <= 9; k++)
		A(&p, MOV64_K(k, 600 + k));
	A(&p, ST(BPF_DW, 10, -16, 1234), MOV64_X(1, 10),
	  CALL_LOCAL(0));
	tp_end_dump(&p);
	{
		uint32_t i;

		for (i = 0; i < p.n; i++)
			if (p.in[i].code == (BPF_JMP | BPF_CALL))
				p.in[i].imm = (int32_t)(p.n - i - 1);
	}
	/* callee: r0 = caller's r10 - own r10; clobber r6..r9, its own
	 * [r10-16], and write the caller's [r10-24] */
	A(&p, MOV64_X(0, 1), ALU64_X(BPF_SUB, 0, 10),
	  MOV64_K(6, 0), MOV64_K(7, 0), MOV64_K(8, 0), MOV64_K(9, 0),
	  ST(BPF_DW, 10, -16, 99), ST(BPF_DW, 1, -24, 55), EXIT);
	/* main reads back [r10-16] and [r10-24] before its dump: insert
	 * them after the call */
	{
		struct tp q = { 0 };
		uint32_t i, call = 0;

		for (i = 0; i < p.n; i++) {
			tp_add(&q, p.in[i]);
			if (p.in[i].code == (BPF_JMP | BPF_CALL)) {
				call = i;
				A(&q, LDX(BPF_DW, 2, 10, -16),
				  LDX(BPF_DW, 3, 10, -24));
			}
		}
		q.in[call].imm += 2;
		c = t_code(&q);
		c.stack_size = stack_size;
		r = t_run_code(&c, mem, sizeof(mem));
		tp_free(&q);
	}
	assert_int_equal(r.fault, 0);
	assert_int_equal(mem[0], stack_size);
	assert_int_equal(mem[2], 1234);
	assert_int_equal(mem[3], 55);
	for (k = 6; k <= 9; k++)
		assert_int_equal(mem[k], 600 + k);
	tp_free(&p);
}

static void test_local_call_frames(void **state)
{
	(void)state;
	local_call_frames(UXDP_BPF_STACK);
	local_call_frames(64);
}

/*
 * With the depth proven a call saves only what its callee may change
 * (the JIT's callee_saves()): every set of r6..r9 a callee writes (and
 * one written only by an atomic's fetch into its src), written in the
 * callee or in a function it calls, with and without a helper below (rsp
 * 16-aligned there: the pad depends on the pushes), with and without a
 * stack: r6..r9 and r10 (its frame's contents) come back as they were,
 * and both ways of calling give the same.
 */
static void test_local_call_saves(void **state)
{
	static const uint32_t fsizes[] = { 0, 64, UXDP_BPF_STACK };
	unsigned mask, helper, nested, proven, fetch, k;
	size_t z;

	(void)state;
	for (z = 0; z < ARRAY_SIZE(fsizes); z++)
	for (mask = 0; mask < 16; mask++)
	for (helper = 0; helper <= 1; helper++)
	for (nested = 0; nested <= 1; nested++)
	for (fetch = 0; fetch <= (fsizes[z] && !mask); fetch++)
	for (proven = 0; proven <= 1; proven++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		uint64_t mem[10];
		uint32_t call_f, call_g = 0, f;
		struct tres r;

		tp_begin_dump(&p);
		for (k = 6; k <= 9; k++)
			A(&p, MOV64_K(k, 600 + k));
		if (fsizes[z])
			A(&p, ST(BPF_DW, 10, -96, 4321));
		call_f = p.n;
		A(&p, CALL_LOCAL(0));
		if (fsizes[z])
			A(&p, LDX(BPF_DW, 5, 10, -96));
		tp_end_dump(&p);
		f = p.n;
		p.in[call_f].imm = (int32_t)(f - call_f - 1);
		/* f: writes r6..r9 of mask (the last one in g when
		 * nested), its own [r10-96] */
		for (k = 0; k < 4; k++)
			if (mask & 1U << k && !(nested && k == 3))
				A(&p, MOV64_K(6 + k, (int32_t)k + 1));
		if (fsizes[z])
			A(&p, ST(BPF_DW, 10, -96, 77));
		if (fetch)
			A(&p, ATOMIC(BPF_DW, 10, 6, -96,
				     BPF_ADD | BPF_FETCH));
		if (nested) {
			call_g = p.n;
			A(&p, CALL_LOCAL(0), EXIT);
			p.in[call_g].imm = (int32_t)(p.n - call_g - 1);
			if (mask & 8)
				A(&p, MOV64_K(9, 99));
		}
		if (helper)
			A(&p, CALL(H_ALIGN));	/* r0 = rsp % 16: 8 */
		else
			A(&p, MOV64_K(0, 8));
		A(&p, EXIT);
		c = t_code_h(&p);
		c.stack_size = fsizes[z];
		c.depth_proven = proven;
		r = t_run_code(&c, mem, sizeof(mem));
		if (r.fault || mem[0] != 8 ||
		    (fsizes[z] && mem[5] != 4321) || mem[6] != 606 ||
		    mem[7] != 607 || mem[8] != 608 || mem[9] != 609)
			fail_msg("stack %u mask %x helper %u nested %u fetch "
				 "%u proven %u: fault %u r0 %" PRIu64 " r5 %"
				 PRIu64 " r6..r9 %" PRIu64 " %" PRIu64 " %"
				 PRIu64 " %" PRIu64, fsizes[z], mask, helper,
				 nested, fetch, proven, r.fault, mem[0],
				 mem[5], mem[6], mem[7], mem[8], mem[9]);
		tp_free(&p);
	}
}

/* ---- checks ------------------------------------------------------------------ */

struct check_case {
	int kind;
	int64_t off;			/* from the kind's base */
	uint32_t size;
	bool write;
	bool ok;
	bool abs;			/* off is the address itself */
};

/*
 * check + the access it guards, the address in r6 = base + off: per
 * kind, the first and last bytes allowed, one past each end, and an
 * address that wraps. RAW and REGION bases are their memory, STACK the
 * block's top (frame 0's r10), PKT data_meta, ANY the RAW or PKT one.
 */
static void run_check(const struct check_case *cc, int ctx_kind,
		      struct uxdp_bpf_region *regions, uint32_t nregions)
{
	struct tp p = { 0 };
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;
	struct uxdp_bpf_run run = { 0 };
	uint8_t raw[64];
	uint8_t pkt[128];
	struct uxdp_buff b = {
		.data = pkt + 16, .data_meta = pkt + 8, .data_end = pkt + 80,
	};
	uint64_t r0;
	uint8_t sz = cc->size == 1 ? BPF_B : cc->size == 2 ? BPF_H :
		     cc->size == 4 ? BPF_W : BPF_DW;
	const int16_t disp = 8;
	uint32_t chk;

	/* r2 = the kind's base; r6 = base + off - disp */
	switch (cc->kind) {
	case UXDP_BPF_MEM_STACK:
		A(&p, MOV64_X(2, 10));
		break;
	case UXDP_BPF_MEM_ANY:
		if (ctx_kind == UXDP_BPF_CTX_RAW) {
			A(&p, MOV64_X(2, 1));
			break;
		}
		__attribute__((fallthrough));	/* the packet */
	case UXDP_BPF_MEM_PKT:
		A(&p, LDX_CTX(2, 1, UXDP_BPF_CTX_DATA_META));
		break;
	case UXDP_BPF_MEM_REGION:
		tp_lddw(&p, 2, (uint64_t)(uintptr_t)regions[0].base);
		break;
	default:
		A(&p, MOV64_X(2, 1));
		break;
	}
	A(&p, MOV64_X(6, 2));
	if (cc->abs)
		A(&p, MOV64_K(6, 0));
	tp_lddw(&p, 7, (uint64_t)(cc->off - disp));
	A(&p, ALU64_X(BPF_ADD, 6, 7), MOV64_K(0, 5));
	chk = p.n;
	A(&p, CHECK(6, disp, UXDP_BPF_CHECK_IMM(cc->size, cc->kind, cc->write,
						0)));
	if (cc->write)
		A(&p, ST(sz, 6, disp, 0x11));
	else
		A(&p, LDX(sz, 0, 6, disp), MOV64_K(0, 7));
	A(&p, EXIT);
	c = t_code(&p);
	c.ctx_kind = ctx_kind;
	c.regions = regions;
	c.nregions = nregions;
	jit = t_compile(&c);
	r0 = uxdp_bpf_jit_run(jit, &run, ctx_kind == UXDP_BPF_CTX_XDP ?
			      (uint64_t)(uintptr_t)&b :
			      (uint64_t)(uintptr_t)raw, sizeof(raw));
	if (cc->ok != (run.fault == 0))
		fail_msg("kind %d off %" PRId64 " size %u %s: fault %u, want %s",
			 cc->kind, cc->off, cc->size, cc->write ? "w" : "r",
			 run.fault, cc->ok ? "none" : "MEM");
	if (cc->ok) {
		assert_int_equal(r0, cc->write ? 5 : 7);
	} else {
		assert_int_equal(run.fault, UXDP_BPF_FAULT_MEM);
		assert_int_equal(run.fault_pc, chk);
		assert_int_equal(r0, 0);
	}
	uxdp_bpf_jit_free(jit);
	tp_free(&p);
}

static void test_checks(void **state)
{
	static uint8_t reg_rw[100], reg_ro[100];
	struct uxdp_bpf_region regions[2] = {
		{ reg_rw, sizeof(reg_rw), false },
		{ reg_ro, sizeof(reg_ro), true },
	};
	const int64_t stk = (int64_t)UXDP_BPF_MAX_DEPTH * UXDP_BPF_STACK;
	const struct check_case raw[] = {
		{ UXDP_BPF_MEM_RAW, 0, 8, false, true },
		{ UXDP_BPF_MEM_RAW, 56, 8, true, true },
		{ UXDP_BPF_MEM_RAW, 57, 8, false, false },
		{ UXDP_BPF_MEM_RAW, 63, 1, true, true },
		{ UXDP_BPF_MEM_RAW, 64, 1, false, false },
		{ UXDP_BPF_MEM_RAW, -1, 1, false, false },
		{ UXDP_BPF_MEM_RAW, -(1LL << 62), 8, false, false },
		{ UXDP_BPF_MEM_STACK, -8, 8, true, true },
		{ UXDP_BPF_MEM_STACK, -1, 1, false, true },
		{ UXDP_BPF_MEM_STACK, -4, 8, false, false },
		{ UXDP_BPF_MEM_STACK, 0, 1, false, false },
		{ UXDP_BPF_MEM_STACK, -stk, 8, true, true },
		{ UXDP_BPF_MEM_STACK, -stk - 1, 2, false, false },
		/* -4 + 8 wraps to 4: past neither end without the carry */
		{ UXDP_BPF_MEM_STACK, -4, 8, false, false, true },
		{ UXDP_BPF_MEM_REGION, 92, 8, true, true },
		{ UXDP_BPF_MEM_REGION, 93, 8, false, false },
		{ UXDP_BPF_MEM_REGION, -1, 1, false, false },
		{ UXDP_BPF_MEM_REGION, (int64_t)(UINT64_MAX >> 1), 8, false,
		  false },
		{ UXDP_BPF_MEM_ANY, 0, 8, true, true },		/* raw */
		{ UXDP_BPF_MEM_ANY, 60, 8, true, false },
		{ UXDP_BPF_MEM_PKT, 0, 1, false, false },	/* not XDP */
	};
	/* base: data_meta = data - 8, data_end = data + 64 */
	const struct check_case pkt[] = {
		{ UXDP_BPF_MEM_PKT, 0, 8, true, true },
		{ UXDP_BPF_MEM_PKT, -1, 1, false, false },
		{ UXDP_BPF_MEM_PKT, 68, 4, false, true },
		{ UXDP_BPF_MEM_PKT, 69, 4, false, false },
		{ UXDP_BPF_MEM_PKT, 72, 1, false, false },
		{ UXDP_BPF_MEM_ANY, 71, 1, false, true },
		{ UXDP_BPF_MEM_ANY, 72, 1, false, false },
		{ UXDP_BPF_MEM_RAW, 0, 1, false, false },	/* not RAW */
		{ UXDP_BPF_MEM_PKT, -4, 8, false, false, true },
	};
	struct tp p = { 0 };
	size_t k;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(raw); k++)
		run_check(&raw[k], UXDP_BPF_CTX_RAW, regions, 2);
	for (k = 0; k < ARRAY_SIZE(pkt); k++)
		run_check(&pkt[k], UXDP_BPF_CTX_XDP, regions, 2);
	/* Metadata not valid (data_meta past data): the packet starts at
	 * data. And r0..r9 come through checks that call out (ANY) and
	 * those that do not. */
	{
		uint8_t bytes[32];
		struct uxdp_buff mb = {
			.data = bytes + 8, .data_meta = bytes + 9,
			.data_end = bytes + 24,
		};
		static const int kinds[] = {
			UXDP_BPF_MEM_PKT, UXDP_BPF_MEM_ANY,
		};
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		uint64_t mem[10];
		size_t q;
		int r;

		for (q = 0; q < ARRAY_SIZE(kinds); q++) {
			A(&p, MOV64_X(6, 1));
			tp_lddw(&p, 1, (uint64_t)(uintptr_t)mem);
			tp_begin_dump(&p);
			A(&p, LDX_CTX(9, 6, UXDP_BPF_CTX_DATA));
			for (r = 0; r <= 8; r++)
				if (r != 6)
					A(&p, MOV64_K(r, 700 + r));
			A(&p, CHECK(9, 0, UXDP_BPF_CHECK_IMM(1, kinds[q], 0, 0)),
			  LDX(BPF_B, 9, 9, 0));
			tp_end_dump(&p);
			c = t_code(&p);
			c.ctx_kind = UXDP_BPF_CTX_XDP;
			jit = t_compile(&c);
			bytes[8] = 0xab;
			uxdp_bpf_jit_run(jit, &run, (uint64_t)(uintptr_t)&mb, 0);
			assert_int_equal(run.fault, 0);
			assert_int_equal(mem[9], 0xab);
			for (r = 0; r <= 8; r++)
				if (r != 6)
					assert_int_equal(mem[r], 700 + r);
			uxdp_bpf_jit_free(jit);
			tp_free(&p);
		}
	}
	/* r10 itself as the checked register */
	A(&p, MOV64_K(0, 9),
	  CHECK(10, -8, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_STACK, 1, 0)),
	  STX(BPF_DW, 10, 0, -8), LDX(BPF_DW, 0, 10, -8), EXIT);
	assert_int_equal(t_run(&p, NULL, 0).r0, 9);
	tp_free(&p);
}

/*
 * An atomic's check with ALIGN (bpf_internal.h): the address must be a
 * multiple of the size as well, or the run ends at the check (a misaligned
 * locked instruction is a bus lock); kind 0 checks the alignment alone.
 * Every kind, both sizes, every offset in a word, through the JIT and the
 * interpreter: the same fault at the same check, the same memory after.
 */
static void test_check_align(void **state)
{
	static uint64_t region[8] __attribute__((aligned(64)));
	struct uxdp_bpf_region regions[1] = {
		{ (uint8_t *)region, sizeof(region), false },
	};
	static const int kinds[] = {
		0, UXDP_BPF_MEM_RAW, UXDP_BPF_MEM_STACK, UXDP_BPF_MEM_REGION,
		UXDP_BPF_MEM_ANY,
	};
	uint64_t raw[8] __attribute__((aligned(64)));
	size_t k, q;
	int off, e;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(kinds); k++)
	for (q = 0; q < 2; q++)
	for (off = 0; off <= 12; off++) {
		uint32_t size = q ? 8 : 4, chk;
		struct uxdp_bpf_run run[2];
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct tp p = { 0 };
		uint64_t r0[2], mem[2][8];
		bool ok = off % (int)size == 0;

		switch (kinds[k]) {
		case UXDP_BPF_MEM_STACK:
			A(&p, MOV64_X(2, 10), ALU64_K(BPF_ADD, 2, -32));
			break;
		case 0:
		case UXDP_BPF_MEM_REGION:
			tp_lddw(&p, 2, (uint64_t)(uintptr_t)region);
			break;
		default:
			A(&p, MOV64_X(2, 1));
			break;
		}
		A(&p, MOV64_X(6, 2), ALU64_K(BPF_ADD, 6, off), MOV64_K(3, 1),
		  MOV64_K(0, 5));
		chk = p.n;
		A(&p, CHECK(6, 0, UXDP_BPF_CHECK_IMM(size, kinds[k], 1, 0) |
			    UXDP_BPF_CHECK_ALIGN),
		  ATOMIC(q ? BPF_DW : BPF_W, 6, 3, 0, BPF_ADD), MOV64_K(0, 7),
		  EXIT);
		c = t_code(&p);
		c.regions = regions;
		c.nregions = 1;
		jit = t_compile(&c);
		for (e = 0; e < 2; e++) {
			memset(raw, 0, sizeof(raw));
			memset(region, 0, sizeof(region));
			run[e] = (struct uxdp_bpf_run){
				.code = &c, .mem = (uint8_t *)raw,
				.mem_len = sizeof(raw),
			};
			r0[e] = e ? uxdp_bpf_interp_run(&run[e], (uintptr_t)raw,
							sizeof(raw)) :
				uxdp_bpf_jit_run(jit, &run[e],
						 (uintptr_t)raw, sizeof(raw));
			memcpy(mem[e], kinds[k] == UXDP_BPF_MEM_RAW ||
			       kinds[k] == UXDP_BPF_MEM_ANY ? raw : region,
			       sizeof(mem[e]));
			if (ok != (run[e].fault == 0))
				fail_msg("%s: kind %d size %u off %d: fault %u, "
					 "want %s", e ? "interp" : "jit",
					 kinds[k], size, off, run[e].fault,
					 ok ? "none" : "MEM");
			if (!ok) {
				assert_int_equal(run[e].fault,
						 UXDP_BPF_FAULT_MEM);
				assert_int_equal(run[e].fault_pc, chk);
				assert_int_equal(r0[e], 0);
			} else {
				assert_int_equal(r0[e], 7);
			}
		}
		assert_memory_equal(mem[0], mem[1], sizeof(mem[0]));
		if (ok && kinds[k] != UXDP_BPF_MEM_STACK)
			assert_int_equal(((uint8_t *)mem[0])[off], 1);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}

/*
 * thread: the running thread's index, as uxdp_thread_index() gives it, in
 * every eBPF register, from both engines; first in a thread that has no
 * index yet (the JIT's slow path gives it one), then again (the inline
 * read), and the other registers come through the slow path's call.
 */
struct thread_arg {
	struct uxdp_bpf_code *code;
	struct uxdp_bpf_jit *jit;
	uint64_t got[2][2];	/* [run][engine] */
	uint64_t mem[10];
	uint32_t want;
};

static void *thread_main(void *arg)
{
	struct thread_arg *t = arg;
	int k;

	for (k = 0; k < 2; k++) {
		struct uxdp_bpf_run run = { .code = t->code,
					    .mem = (uint8_t *)t->mem,
					    .mem_len = sizeof(t->mem) };

		t->got[k][0] = uxdp_bpf_jit_run(t->jit, &run,
						(uintptr_t)t->mem,
						sizeof(t->mem));
		run = (struct uxdp_bpf_run){ .code = t->code,
					     .mem = (uint8_t *)t->mem,
					     .mem_len = sizeof(t->mem) };
		t->got[k][1] = uxdp_bpf_interp_run(&run, (uintptr_t)t->mem,
						   sizeof(t->mem));
	}
	t->want = uxdp_thread_index();
	return NULL;
}

static void test_thread(void **state)
{
	struct uxdp_bpf_code c;
	struct thread_arg t[3];
	pthread_t th[3];
	struct tp p = { 0 };
	int d, r, k, e;

	(void)state;
	for (d = 0; d <= 9; d++) {
		A(&p, MOV64_X(6, 1));
		tp_begin_dump(&p);
		for (r = 0; r <= 9; r++)
			if (r != d && r != 6)
				A(&p, MOV64_K(r, 900 + r));
		A(&p, I(UXDP_BPF_OP_THREAD, d, 0, 0, 0));
		tp_end_dump(&p);
		A(&p, LDX(BPF_DW, 0, 6, 8 * d), EXIT);
		c = t_code(&p);
		for (k = 0; k < 3; k++) {
			memset(&t[k], 0, sizeof(t[k]));
			t[k].code = &c;
			t[k].jit = t_compile(&c);
			assert_int_equal(pthread_create(&th[k], NULL,
							thread_main, &t[k]), 0);
			/* one after the other: each a new index */
			assert_int_equal(pthread_join(th[k], NULL), 0);
			for (r = 0; r < 2; r++)
				for (e = 0; e < 2; e++)
					assert_int_equal(t[k].got[r][e],
							 t[k].want);
			for (r = 0; r <= 9; r++)
				if (r != d && r != 6)
					assert_int_equal(t[k].mem[r], 900 + r);
			uxdp_bpf_jit_free(t[k].jit);
		}
		tp_free(&p);
	}
	/* The thread that ran here: its own index. */
	A(&p, I(UXDP_BPF_OP_THREAD, 0, 0, 0, 0), EXIT);
	assert_int_equal(t_run(&p, NULL, 0).r0, uxdp_thread_index());
	tp_free(&p);
}

/* A region: a write to a read-only one faults, a read does not; ANY
 * reaches a writable region and refuses a read-only one for a write. */
static void test_check_regions(void **state)
{
	static uint8_t ro[16] = { 42 };
	static uint8_t rw[16];
	struct uxdp_bpf_region regions[2] = {
		{ rw, sizeof(rw), false }, { ro, sizeof(ro), true },
	};
	static const struct {
		int region, kind;
		bool write, ok;
	} cases[] = {
		{ 1, UXDP_BPF_MEM_REGION, false, true },
		{ 1, UXDP_BPF_MEM_REGION, true, false },
		{ 0, UXDP_BPF_MEM_REGION, true, true },
		{ 1, UXDP_BPF_MEM_ANY, false, true },
		{ 1, UXDP_BPF_MEM_ANY, true, false },
		{ 0, UXDP_BPF_MEM_ANY, true, true },
	};
	size_t k;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct tres r;

		tp_lddw(&p, 2, (uint64_t)(uintptr_t)regions[cases[k].region].base);
		A(&p, MOV64_K(0, 1),
		  CHECK(2, 8, UXDP_BPF_CHECK_IMM(8, cases[k].kind,
						 cases[k].write,
						 cases[k].region)));
		if (cases[k].write)
			A(&p, ST(BPF_DW, 2, 8, 3));
		else
			A(&p, LDX(BPF_B, 0, 2, 0));
		A(&p, EXIT);
		c = t_code(&p);
		c.regions = regions;
		c.nregions = 2;
		r = t_run_code(&c, NULL, 0);
		assert_int_equal(r.fault, cases[k].ok ? 0 : UXDP_BPF_FAULT_MEM);
		if (!cases[k].ok)
			assert_int_equal(r.fault_pc, 3);
		else
			assert_int_equal(r.r0, cases[k].write ? 1 : 42);
		tp_free(&p);
	}
	assert_int_equal(ro[8], 0);
	assert_int_equal(rw[8], 3);
}

/* ---- budget ------------------------------------------------------------------- */

static void test_budget(void **state)
{
	uint64_t budget;

	(void)state;
	for (budget = 9; budget <= 11; budget++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		uint64_t r0;

		/* 10 rounds: 10 budget instructions */
		A(&p, MOV64_K(0, 0), ALU64_K(BPF_ADD, 0, 1), BUDGET,
		  JMP_K(BPF_JNE, 0, 10, -3), EXIT);
		c = t_code(&p);
		c.budget = budget;
		jit = t_compile(&c);
		r0 = uxdp_bpf_jit_run(jit, &run, 0, 0);
		if (budget >= 10) {
			assert_int_equal(run.fault, 0);
			assert_int_equal(r0, 10);
			assert_int_equal(run.budget, budget - 10);
		} else {
			assert_int_equal(run.fault, UXDP_BPF_FAULT_BUDGET);
			assert_int_equal(run.fault_pc, 2);
			assert_int_equal(run.budget, 0);
			assert_int_equal(r0, 0);
		}
		/* a second run starts with the whole budget again */
		r0 = uxdp_bpf_jit_run(jit, &run, 0, 0);
		assert_int_equal(run.fault, budget >= 10 ? 0 :
				 UXDP_BPF_FAULT_BUDGET);
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}

/* ---- tail calls --------------------------------------------------------------- */

/* A program that counts its runs in mem[0] and tail-calls slot r3 of
 * @arr, then returns the count + 1000 * r0-at-fall-through marker. */
/*
 * The budget in a register (a loop whose code leaves one of r6..r9 free):
 * the JIT against the interpreter on r0, the fault and its index and the
 * budget left, with budgets that end the loop early, on its last pass and
 * not at all, for a plain loop, a loop that calls a helper (r6 its
 * counter: the budget moves to r7's register), one whose helper reads
 * the run's budget and spends some, one that calls a function
 * with a loop of its own (the depth proven: both share the register), one
 * that a failed check ends, one an UNWIND helper ends, and a loop entered
 * by a tail call from a program that keeps its budget in the run.
 */
enum { BR_PLAIN, BR_HELPER, BR_CALL, BR_CHECK, BR_UNWIND, BR_SEEN, BR_TAIL,
       BR_N };

static void tp_budget_loop(struct tp *p, int kind, int32_t n)
{
	uint32_t call = 0;

	switch (kind) {
	case BR_PLAIN:
		A(p, MOV64_K(0, 0), ALU64_K(BPF_ADD, 0, 1), BUDGET,
		  JMP_K(BPF_JNE, 0, n, -3), EXIT);
		break;
	case BR_HELPER:
		A(p, MOV64_K(6, 0), ALU64_K(BPF_ADD, 6, 1), MOV64_X(1, 6),
		  MOV64_K(2, 0), MOV64_K(3, 0), MOV64_K(4, 0), MOV64_K(5, 0),
		  CALL(H_SUM5), BUDGET, JMP_K(BPF_JNE, 6, n, -9),
		  ALU64_X(BPF_ADD, 0, 6), EXIT);
		break;
	case BR_CALL:
		call = p->n + 2;
		A(p, MOV64_K(6, 0), ALU64_K(BPF_ADD, 6, 1), CALL_LOCAL(0),
		  BUDGET, JMP_K(BPF_JNE, 6, n, -4), ALU64_X(BPF_ADD, 0, 6),
		  EXIT);
		p->in[call].imm = (int32_t)(p->n - call - 1);
		/* the callee: three passes of its own */
		A(p, MOV64_K(0, 0), ALU64_K(BPF_ADD, 0, 1), BUDGET,
		  JMP_K(BPF_JNE, 0, 3, -3), EXIT);
		break;
	case BR_CHECK:
		/* r3 = mem + r0 * 8: the check fails on the 5th pass */
		A(p, MOV64_K(0, 0), MOV64_X(3, 0), ALU64_K(BPF_LSH, 3, 3),
		  ALU64_X(BPF_ADD, 3, 1),
		  CHECK(3, 0, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_RAW, false,
						 0)),
		  LDX(BPF_DW, 4, 3, 0), ALU64_K(BPF_ADD, 0, 1), BUDGET,
		  JMP_K(BPF_JNE, 0, n, -9), EXIT);
		break;
	case BR_SEEN:
		/* r7 += the budget a helper reads (and spends one of) */
		A(p, MOV64_K(6, 0), MOV64_K(7, 0), ALU64_K(BPF_ADD, 6, 1),
		  CALL(H_BUDGET), ALU64_X(BPF_ADD, 7, 0), BUDGET,
		  JMP_K(BPF_JNE, 6, n, -5), MOV64_X(0, 7), EXIT);
		break;
	case BR_UNWIND:
		/* unwind(n - 4 - r6) returns 0 on the 4th pass */
		A(p, MOV64_K(6, 0), ALU64_K(BPF_ADD, 6, 1), MOV64_K(1, n - 4),
		  ALU64_X(BPF_SUB, 1, 6), CALL(H_UNWIND), BUDGET,
		  JMP_K(BPF_JNE, 6, n, -6), MOV64_X(0, 6), EXIT);
		break;
	}
}

static void budget_reg_case(int kind, uint64_t budget)
{
	const struct uxdp_bpf_code *slots[1] = { NULL };
	struct uxdp_bpf_prog_array arr = { 1, slots };
	struct tp p = { 0 }, pt = { 0 };
	struct uxdp_bpf_code c, target;
	struct uxdp_bpf_jit *jit, *jtarget = NULL;
	struct uxdp_bpf_run ri = { 0 }, rj = { 0 };
	uint64_t mem[4] = { 0 }, r0i, r0j;
	const int32_t n = 10;

	if (kind == BR_TAIL) {
		/* three passes here, then the plain loop of the target */
		tp_budget_loop(&pt, BR_PLAIN, n);
		target = t_code_h(&pt);
		target.budget = budget;
		jtarget = t_compile(&target);
		slots[0] = &target;
		A(&p, MOV64_K(6, 0), ALU64_K(BPF_ADD, 6, 1), BUDGET,
		  JMP_K(BPF_JNE, 6, 3, -3));
		tp_lddw(&p, 2, (uint64_t)(uintptr_t)&arr);
		A(&p, MOV64_K(3, 0), TAIL_CALL, MOV64_K(0, 77), EXIT);
	} else {
		tp_budget_loop(&p, kind, n);
	}
	c = t_code_h(&p);
	c.budget = budget;
	c.depth_proven = kind == BR_CALL;
	jit = t_compile(&c);
	r0j = uxdp_bpf_jit_run(jit, &rj, (uint64_t)(uintptr_t)mem,
			       sizeof(mem));
	ri.code = &c;
	ri.mem = (uint8_t *)mem;
	ri.mem_len = sizeof(mem);
	r0i = uxdp_bpf_interp_run(&ri, (uint64_t)(uintptr_t)mem, sizeof(mem));
	if (r0i != r0j || ri.fault != rj.fault ||
	    ri.fault_pc != rj.fault_pc || ri.budget != rj.budget)
		fail_msg("kind %d budget %" PRIu64 ": interp r0 %" PRIu64
			 " fault %u at %u budget %" PRIu64 ", jit r0 %" PRIu64
			 " fault %u at %u budget %" PRIu64, kind, budget, r0i,
			 ri.fault, ri.fault_pc, ri.budget, r0j, rj.fault,
			 rj.fault_pc, rj.budget);
	uxdp_bpf_jit_free(jit);
	uxdp_bpf_jit_free(jtarget);
	tp_free(&p);
	tp_free(&pt);
}

static void test_budget_reg(void **state)
{
	static const uint64_t budgets[] = { 1, 2, 9, 10, 11, 12, 30, 39,
					    40, 41, 1000 };
	size_t b;
	int kind;

	(void)state;
	for (kind = 0; kind < BR_N; kind++)
		for (b = 0; b < ARRAY_SIZE(budgets); b++)
			budget_reg_case(kind, budgets[b]);
}

static void tp_tail_self(struct tp *p, struct uxdp_bpf_prog_array *arr,
			 int32_t slot)
{
	A(p, MOV64_K(0, 3), LDX(BPF_DW, 6, 1, 0), ALU64_K(BPF_ADD, 6, 1),
	  STX(BPF_DW, 1, 6, 0));
	tp_lddw(p, 2, (uint64_t)(uintptr_t)arr);
	A(p, MOV64_K(3, slot), TAIL_CALL,
	  ALU64_K(BPF_MUL, 0, 1000), ALU64_X(BPF_ADD, 0, 6), EXIT);
}

static void test_tail_calls(void **state)
{
	const struct uxdp_bpf_code *slots[3] = { NULL };
	struct uxdp_bpf_prog_array arr = { 3, slots };
	struct uxdp_bpf_code self, target, nojit;
	struct uxdp_bpf_jit *jself, *jtarget;
	struct tp ps = { 0 }, pt = { 0 };
	struct uxdp_bpf_run run = { 0 };
	uint64_t mem[2], r0;

	(void)state;
	/* the target: r0 = 42 + mem[0] (r1 is still the memory) */
	A(&pt, LDX(BPF_DW, 0, 1, 0), ALU64_K(BPF_ADD, 0, 42), EXIT);
	target = t_code(&pt);
	jtarget = t_compile(&target);
	assert_ptr_equal(target.jit_tail_entry,
			 (const uint8_t *)uxdp_bpf_jit_image(jtarget) +
			 uxdp_bpf_jit_insn_off(jtarget, 0));
	nojit = target;
	nojit.jit_tail_entry = NULL;

	/* slot 0: itself, 33 times, then the fall-through */
	tp_tail_self(&ps, &arr, 0);
	self = t_code(&ps);
	jself = t_compile(&self);
	slots[0] = &self;
	slots[1] = &target;
	slots[2] = &nojit;
	memset(mem, 0, sizeof(mem));
	r0 = uxdp_bpf_jit_run(jself, &run, (uint64_t)(uintptr_t)mem, 16);
	assert_int_equal(run.fault, 0);
	assert_int_equal(mem[0], 1 + UXDP_BPF_MAX_TAIL_CALLS);
	assert_int_equal(run.tail_calls, UXDP_BPF_MAX_TAIL_CALLS);
	assert_int_equal(r0, 3000 + 1 + UXDP_BPF_MAX_TAIL_CALLS);
	assert_ptr_equal(run.code, &self);
	uxdp_bpf_jit_free(jself);
	tp_free(&ps);

	/* slot 1: the target runs in place of the caller */
	tp_tail_self(&ps, &arr, 1);
	self = t_code(&ps);
	jself = t_compile(&self);
	memset(mem, 0, sizeof(mem));
	r0 = uxdp_bpf_jit_run(jself, &run, (uint64_t)(uintptr_t)mem, 16);
	assert_int_equal(run.fault, 0);
	assert_int_equal(r0, 43);
	assert_int_equal(run.tail_calls, 1);
	assert_ptr_equal(run.code, &target);
	uxdp_bpf_jit_free(jself);
	tp_free(&ps);

	/* slot 2 (no JIT entry) and an empty slot: counted, fall through;
	 * an index past the end, and a NULL array: not counted */
	{
		static const struct {
			int32_t slot;
			bool null_array;
			uint32_t counted;
		} cases[] = {
			{ 2, false, 1 }, { 2, false, 1 }, { 3, false, 0 },
			{ -1, false, 0 }, { 0, true, 0 },
		};
		size_t k;

		slots[0] = NULL;
		for (k = 0; k < ARRAY_SIZE(cases); k++) {
			if (k == 1)
				slots[2] = NULL;
			tp_tail_self(&ps, cases[k].null_array ? NULL : &arr,
				     cases[k].slot);
			self = t_code(&ps);
			jself = t_compile(&self);
			memset(mem, 0, sizeof(mem));
			r0 = uxdp_bpf_jit_run(jself, &run,
					      (uint64_t)(uintptr_t)mem, 16);
			assert_int_equal(run.fault, 0);
			assert_int_equal(r0, 3001);
			assert_int_equal(run.tail_calls, cases[k].counted);
			uxdp_bpf_jit_free(jself);
			tp_free(&ps);
		}
	}

	/* from a bpf-to-bpf call: the target's exit returns to the caller */
	slots[1] = &target;
	A(&ps, CALL_LOCAL(2), ALU64_K(BPF_ADD, 0, 100), EXIT);
	tp_lddw(&ps, 2, (uint64_t)(uintptr_t)&arr);
	A(&ps, MOV64_K(3, 1), TAIL_CALL, MOV64_K(0, -1), EXIT);
	self = t_code(&ps);
	jself = t_compile(&self);
	memset(mem, 0, sizeof(mem));
	mem[0] = 5;
	r0 = uxdp_bpf_jit_run(jself, &run, (uint64_t)(uintptr_t)mem, 16);
	assert_int_equal(run.fault, 0);
	assert_int_equal(r0, 5 + 42 + 100);
	assert_ptr_equal(run.code, &self);	/* the caller's again */
	uxdp_bpf_jit_free(jself);
	tp_free(&ps);

	uxdp_bpf_jit_free(jtarget);
	assert_null(target.jit_tail_entry);	/* cleared with the JIT */
	tp_free(&pt);
}

/* ---- context loads ------------------------------------------------------------ */

static void test_ldx_ctx(void **state)
{
	struct uxdp_rxq_info rxq = { .queue_index = 3, .ifindex = 17 };
	uint8_t pkt[64];
	struct uxdp_buff b = {
		.data = pkt + 8, .data_end = pkt + 60, .data_meta = pkt + 4,
		.rxq = &rxq,
	};
	const int32_t fields[] = {
		UXDP_BPF_CTX_DATA, UXDP_BPF_CTX_DATA_END,
		UXDP_BPF_CTX_DATA_META, UXDP_BPF_CTX_INGRESS_IFINDEX,
		UXDP_BPF_CTX_RX_QUEUE_INDEX, UXDP_BPF_CTX_EGRESS_IFINDEX, 99,
	};
	size_t f;
	int dst, k;

	(void)state;
	for (f = 0; f < ARRAY_SIZE(fields); f++)
		for (dst = 0; dst <= 9; dst++)
			for (k = 0; k < 2; k++) {
				struct tp p = { 0 };
				struct uxdp_bpf_code c;
				struct uxdp_bpf_jit *jit;
				struct uxdp_bpf_run run = { 0 };
				uint64_t mem[10], want;
				int s;

				b.rxq = k ? NULL : &rxq;
				/* the context in r6, sentinels elsewhere */
				A(&p, MOV64_X(6, 1));
				tp_lddw(&p, 1, (uint64_t)(uintptr_t)mem);
				tp_begin_dump(&p);
				for (s = 0; s <= 9; s++)
					if (s != 6)
						A(&p, MOV64_K(s, 500 + s));
				A(&p, LDX_CTX(dst, 6, fields[f]));
				tp_end_dump(&p);
				c = t_code(&p);
				c.ctx_kind = UXDP_BPF_CTX_XDP;
				jit = t_compile(&c);
				uxdp_bpf_jit_run(jit, &run,
						 (uint64_t)(uintptr_t)&b, 0);
				assert_int_equal(run.fault, 0);
				want = uxdp_bpf_ctx_load(&b, fields[f]);
				assert_int_equal(mem[dst], want);
				for (s = 0; s <= 9; s++)
					if (s != dst && s != 6)
						assert_int_equal(mem[s],
								 500 + s);
				uxdp_bpf_jit_free(jit);
				tp_free(&p);
			}
	assert_int_equal(uxdp_bpf_ctx_load(&b, UXDP_BPF_CTX_DATA_END),
			 (uint64_t)(uintptr_t)(pkt + 60));
}

/* ---- the end, refusals, memory ------------------------------------------------ */

/* A run starts with r0 and r3..r9 zero, as in the interpreter, whatever
 * the caller's registers held (r3 the run's address, r4 the stack's). */
static void test_regs_zero(void **state)
{
	uint64_t mem[10];
	struct tp p = { 0 };
	int k;

	(void)state;
	tp_begin_dump(&p);
	tp_end_dump(&p);
	/* tp_end_dump's mov r0, 0 comes last: r0 is read before it */
	assert_int_equal(t_run(&p, mem, sizeof(mem)).fault, 0);
	for (k = 0; k <= 9; k++)
		if (k != 1 && k != 2)
			assert_int_equal(mem[k], 0);
	assert_int_equal(mem[1], (uintptr_t)mem);
	assert_int_equal(mem[2], sizeof(mem));
	tp_free(&p);
}

/* With the pass's word that nothing reads a register before writing it
 * (init_proven), the prologue zeroes none but a helper's r3..r5: the same
 * results from code a few bytes shorter (xor r, r per register: 2 or 3
 * bytes). */
static void test_regs_init_proven(void **state)
{
	uint64_t mem[10];
	struct tp p = { 0 };
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *zeroing, *lean;
	struct uxdp_bpf_run run = { 0 };
	int k;

	(void)state;
	tp_begin_dump(&p);
	for (k = 0; k <= 9; k++)
		if (k != 1)
			A(&p, MOV64_K(k, 40 + k));
	tp_end_dump(&p);
	c = t_code(&p);
	zeroing = t_compile(&c);
	c.init_proven = true;
	lean = t_compile(&c);
	assert_true(uxdp_bpf_jit_size(lean) + 2 * 8 <=
		    uxdp_bpf_jit_size(zeroing));
	uxdp_bpf_jit_run(lean, &run, (uint64_t)(uintptr_t)mem, sizeof(mem));
	assert_int_equal(run.fault, 0);
	for (k = 0; k <= 9; k++)
		if (k != 1)
			assert_int_equal(mem[k], 40 + k);
	uxdp_bpf_jit_free(zeroing);
	uxdp_bpf_jit_free(lean);
	tp_free(&p);

	/* A helper's undeclared arguments stay zero: a helper called with
	 * r3..r5 never written sees 0, not the JIT's entry registers (the
	 * run's address among them), as the interpreter gives it. */
	memset(&p, 0, sizeof(p));
	A(&p, CALL(H_ARGS345), EXIT);
	c = t_code_h(&p);
	c.init_proven = true;
	lean = t_compile(&c);
	assert_int_equal(uxdp_bpf_jit_run(lean, &run, (uint64_t)(uintptr_t)mem,
					  sizeof(mem)), 0);
	uxdp_bpf_jit_free(lean);
	tp_free(&p);
}

static void test_fall_off_end(void **state)
{
	struct tp p = { 0 };
	struct tres r;

	(void)state;
	A(&p, MOV64_K(0, 1), ALU64_K(BPF_ADD, 0, 1));
	r = t_run(&p, NULL, 0);
	assert_int_equal(r.fault, UXDP_BPF_FAULT_INSN);
	assert_int_equal(r.fault_pc, 2);
	assert_int_equal(r.r0, 0);
	tp_free(&p);
}

static void expect_refusal(struct tp *p, uint32_t nregions,
			   const char *what)
{
	struct uxdp_bpf_code c = t_code_h(p);
	struct uxdp_bpf_jit *jit = (void *)1;
	uint32_t orig[8] = { 10, 11, 12, 13, 14, 15, 16, 17 };
	static uint8_t r0[8];
	struct uxdp_bpf_region reg = { r0, sizeof(r0), false };
	int err;

	assert_true(p->n <= 8);
	c.orig_idx = orig;
	c.regions = nregions ? &reg : NULL;
	c.nregions = nregions;
	c.name = "fw";
	err = uxdp_bpf_jit_compile(&c, &jit);
	assert_int_equal(err, -EINVAL);
	assert_null(jit);
	if (!strstr(uxdp_errmsg(), what))
		fail_msg("error \"%s\" does not say \"%s\"", uxdp_errmsg(),
			 what);
	assert_non_null(strstr(uxdp_errmsg(), "prog fw: insn 1"));
	assert_null(c.jit_tail_entry);
	tp_free(p);
}

static void test_refusals(void **state)
{
	struct tp p = { 0 };
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;

	(void)state;
	A(&p, MOV64_K(0, 0), I(BPF_JMP | BPF_CALL | BPF_X, 0, 1, 0, 0), EXIT);
	expect_refusal(&p, 0, "callx");
	A(&p, MOV64_K(0, 0), I(0x8e, 0, 0, 0, 0), EXIT);
	expect_refusal(&p, 0, "unknown opcode 0x8e");
	A(&p, MOV64_K(0, 0));
	tp_lddw(&p, 1, 5);
	p.in[1].src_reg = BPF_PSEUDO_MAP_IDX;
	A(&p, EXIT);
	expect_refusal(&p, 0, "lddw of a map");
	A(&p, MOV64_K(0, 0), CALL(ARRAY_SIZE(t_helpers)), EXIT);
	expect_refusal(&p, 0, "helper slot");
	A(&p, MOV64_K(0, 0), I(BPF_JMP | BPF_CALL, 0, 2, 0, 1), EXIT);
	expect_refusal(&p, 0, "kfunc");
	A(&p, MOV64_K(0, 0), JA(5), EXIT);
	expect_refusal(&p, 0, "jump to outside");
	A(&p, MOV64_K(0, 0), JA(-3), EXIT);
	expect_refusal(&p, 0, "jump to outside");
	A(&p, MOV64_K(0, 0), JA(1));
	tp_lddw(&p, 1, 5);
	A(&p, EXIT);
	expect_refusal(&p, 0, "jump to outside");	/* mid-lddw */
	A(&p, MOV64_K(0, 0), CALL_LOCAL(7), EXIT);
	expect_refusal(&p, 0, "call to outside");
	A(&p, MOV64_K(0, 0),
	  CHECK(1, 0, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_REGION, 0, 1)),
	  EXIT);
	expect_refusal(&p, 1, "region");
	A(&p, MOV64_K(0, 0), CHECK(1, 0, UXDP_BPF_CHECK_IMM(8, 9, 0, 0)),
	  EXIT);
	expect_refusal(&p, 0, "unknown kind");
	A(&p, MOV64_K(0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 11, 1, 0, 0), EXIT);
	expect_refusal(&p, 0, "bad register");
	/* no instructions */
	c = t_code(&p);
	jit = (void *)1;
	assert_int_equal(uxdp_bpf_jit_compile(&c, &jit), -EINVAL);
	assert_null(jit);
}

/* Where the image is mapped, its permissions in /proc/self/maps. */
static bool maps_perms(const void *addr, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char pr[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, pr) != 3)
			continue;
		if ((uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
			memcpy(perms, pr, 5);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The code is read-execute while compiled (never writable and executable
 * at once), no mapping in the process is both, and free unmaps it. */
/* A leaf (no check, budget, call or way past the end) runs without a
 * run, on one frame of stack, with every register it names and the
 * stack as in a full run; anything that reads the run is no leaf. */
static void test_leaf(void **state)
{
	static const struct bpf_insn not_leaf[][3] = {
		{ BUDGET, MOV64_K(0, 1), EXIT },
		{ CHECK(10, -8, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_STACK, 0, 0)),
		  MOV64_K(0, 1), EXIT },
		{ CALL(H_SUM5), MOV64_K(0, 1), EXIT },
		{ MOV64_K(0, 1), EXIT, MOV64_K(0, 2) },	/* falls off */
	};
	uint8_t stack[UXDP_BPF_STACK] __attribute__((aligned(16)));
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;
	struct uxdp_bpf_run run = { 0 };
	uxdp_bpf_jit_fn fn;
	uint64_t mem = 0x1000;
	struct tp p = { 0 };
	unsigned k;

	(void)state;
	/* r0 = mem[0] + 5 * 3 + 2 through the stack and r6..r9 */
	A(&p, LDX(BPF_DW, 6, 1, 0), MOV64_K(7, 5), STX(BPF_DW, 10, 7, -8),
	  LDX(BPF_DW, 8, 10, -8), MOV64_X(9, 8), ALU64_K(BPF_MUL, 9, 3),
	  ST(BPF_DW, 10, -512, 2), LDX(BPF_DW, 0, 10, -512),
	  ALU64_X(BPF_ADD, 0, 9), ALU64_X(BPF_ADD, 0, 6), EXIT);
	c = t_code(&p);
	jit = t_compile(&c);
	fn = uxdp_bpf_jit_leaf(jit);
	assert_non_null(fn);
	assert_int_equal(fn((uint64_t)(uintptr_t)&mem, 8, NULL,
			    stack + sizeof(stack)), 0x1000 + 15 + 2);
	assert_int_equal(uxdp_bpf_jit_run(jit, &run, (uint64_t)(uintptr_t)&mem,
					  8), 0x1000 + 15 + 2);
	assert_int_equal(run.fault, 0);
	uxdp_bpf_jit_free(jit);
	tp_free(&p);
	for (k = 0; k < ARRAY_SIZE(not_leaf); k++) {
		struct tp q = { 0 };
		unsigned i;

		for (i = 0; i < 3; i++)
			tp_add(&q, not_leaf[k][i]);
		c = t_code_h(&q);
		jit = t_compile(&c);
		if (uxdp_bpf_jit_leaf(jit))
			fail_msg("program %u: a leaf", k);
		uxdp_bpf_jit_free(jit);
		tp_free(&q);
	}
}

/* uxdp_bpf_jit_run_xdp: the prologue fills the run (the caller's is
 * garbage): a packet and a stack check pass, the budget counts from the
 * code's, and a fault reports its kind and index; helpers see the run. */
static void test_run_xdp(void **state)
{
	uint8_t pkt[64] = { 7 };
	struct uxdp_buff b = {
		.data = pkt, .data_meta = pkt, .data_end = pkt + sizeof(pkt),
	};
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;
	struct uxdp_bpf_run run;
	struct tp p = { 0 };
	uint64_t r0;
	unsigned k;

	(void)state;
	/* r6 = pkt[0] (checked), a stack slot (checked), a budget, then
	 * a check of the byte past the packet (insn 10: the fault) or,
	 * patched below, of its last byte and r0 = cur(7) + r6 */
	A(&p, LDX_CTX(2, 1, UXDP_BPF_CTX_DATA),
	  CHECK(2, 0, UXDP_BPF_CHECK_IMM(1, UXDP_BPF_MEM_PKT, 0, 0)),
	  LDX(BPF_B, 6, 2, 0),
	  ST(BPF_DW, 10, -8, 1),
	  CHECK(10, -8, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_STACK, 0, 0)),
	  LDX(BPF_DW, 7, 10, -8),
	  BUDGET,
	  JMP_K(BPF_JEQ, 7, 1, 2),
	  MOV64_K(0, 0), EXIT,
	  CHECK(2, 64, UXDP_BPF_CHECK_IMM(1, UXDP_BPF_MEM_PKT, 0, 0)),
	  MOV64_K(1, 7), CALL(H_CUR), ALU64_X(BPF_ADD, 0, 6), EXIT);
	c = t_code_h(&p);
	c.ctx_kind = UXDP_BPF_CTX_XDP;
	c.budget = 5;
	jit = t_compile(&c);
	assert_null(uxdp_bpf_jit_leaf(jit));
	memset(&run, 0xa5, sizeof(run));
	r0 = uxdp_bpf_jit_run_xdp(jit, &run, &b);
	assert_int_equal(run.fault, UXDP_BPF_FAULT_MEM);
	assert_int_equal(run.fault_pc, 10);
	assert_int_equal(r0, 0);
	assert_int_equal(run.budget, 4);
	assert_ptr_equal(run.code, &c);
	assert_ptr_equal(run.ctx, &b);
	assert_null(run.mem);
	/* the same without the failing check: the helper sees the run */
	p.in[10] = CHECK(2, 63, UXDP_BPF_CHECK_IMM(1, UXDP_BPF_MEM_PKT, 0, 0));
	uxdp_bpf_jit_free(jit);
	jit = t_compile(&c);
	for (k = 0; k < 2; k++) {
		memset(&run, 0xa5, sizeof(run));
		seen_cur = NULL;
		r0 = uxdp_bpf_jit_run_xdp(jit, &run, &b);
		assert_int_equal(run.fault, 0);
		assert_ptr_equal(seen_cur, &run);
		assert_null(uxdp_bpf_cur);
		assert_int_equal(r0, 7 + 7);
	}
	uxdp_bpf_jit_free(jit);
	tp_free(&p);
}

static void test_memory_wx(void **state)
{
	struct tp p = { 0 };
	struct uxdp_bpf_code c;
	struct uxdp_bpf_jit *jit;
	const void *img;
	char perms[5];
	FILE *f;
	char line[512];

	(void)state;
	A(&p, MOV64_K(0, 1), EXIT);
	c = t_code(&p);
	jit = t_compile(&c);
	img = uxdp_bpf_jit_image(jit);
	assert_true(maps_perms(img, perms));
	assert_string_equal(perms, "r-xp");
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char pr[5];

		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, pr) == 3 &&
		    pr[1] == 'w' && pr[2] == 'x')
			fail_msg("writable and executable: %s", line);
	}
	fclose(f);
	uxdp_bpf_jit_free(jit);
	assert_false(maps_perms(img, perms) && perms[2] == 'x');
	tp_free(&p);
}

/* ---- the engines timed (UXDP_BPF_JIT_BENCH=1; no assertion on time) ---- */

struct bench_prog {
	const char *name;
	void (*build)(struct tp *p, uint8_t *region);
	int ctx_kind;
};

#define PKT_LEN 64

/* XDP_DROP */
static void b_drop(struct tp *p, uint8_t *region)
{
	(void)region;
	A(p, MOV64_K(0, 1), EXIT);
}

/* Ethernet + IPv4 + UDP parse, count per UDP port (low byte) in an
 * array: the bounds test the kernel's verifier wants, then a checked
 * atomic add on the region. */
static void b_parse_count(struct tp *p, uint8_t *region)
{
	A(p, LDX_CTX(2, 1, UXDP_BPF_CTX_DATA),
	  LDX_CTX(3, 1, UXDP_BPF_CTX_DATA_END),
	  MOV64_X(4, 2), ALU64_K(BPF_ADD, 4, 42),
	  JMP_X(BPF_JGT, 4, 3, 12),			/* short: pass */
	  LDX(BPF_H, 5, 2, 12),
	  JMP_K(BPF_JNE, 5, 0x0008, 10),		/* not IPv4 */
	  LDX(BPF_B, 5, 2, 23),
	  JMP_K(BPF_JNE, 5, 17, 8),			/* not UDP */
	  LDX(BPF_B, 5, 2, 37),			/* dst port, low byte */
	  ALU64_K(BPF_LSH, 5, 3));
	tp_lddw(p, 6, (uint64_t)(uintptr_t)region);
	A(p, ALU64_X(BPF_ADD, 6, 5), MOV64_K(7, 1),
	  CHECK(6, 0, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_REGION, 1, 0)),
	  ATOMIC(BPF_DW, 6, 7, 0, BPF_ADD),
	  MOV64_K(0, 1), EXIT,
	  MOV64_K(0, 2), EXIT);
}

/* Swap the MAC addresses, XDP_TX. */
static void b_macswap(struct tp *p, uint8_t *region)
{
	(void)region;
	A(p, LDX_CTX(2, 1, UXDP_BPF_CTX_DATA),
	  LDX_CTX(3, 1, UXDP_BPF_CTX_DATA_END),
	  MOV64_X(4, 2), ALU64_K(BPF_ADD, 4, 14),
	  JMP_X(BPF_JGT, 4, 3, 9),
	  LDX(BPF_W, 5, 2, 0), LDX(BPF_H, 6, 2, 4),
	  LDX(BPF_W, 7, 2, 6), LDX(BPF_H, 8, 2, 10),
	  STX(BPF_W, 2, 7, 0), STX(BPF_H, 2, 8, 4),
	  STX(BPF_W, 2, 5, 6), STX(BPF_H, 2, 6, 10),
	  MOV64_K(0, 3), EXIT, MOV64_K(0, 2), EXIT);
}

/* A bounded loop: a checksum of the packet's 64 bytes, 8 at a time,
 * the budget row before the back edge. */
static void b_loop(struct tp *p, uint8_t *region)
{
	(void)region;
	A(p, LDX_CTX(2, 1, UXDP_BPF_CTX_DATA), MOV64_K(0, 0), MOV64_K(3, 8),
	  CHECK(2, 0, UXDP_BPF_CHECK_IMM(8, UXDP_BPF_MEM_PKT, 0, 0)),
	  LDX(BPF_DW, 4, 2, 0), ALU64_X(BPF_ADD, 0, 4),
	  ALU64_K(BPF_ADD, 2, 8), ALU64_K(BPF_SUB, 3, 1), BUDGET,
	  JMP_K(BPF_JNE, 3, 0, -7),
	  ALU64_K(BPF_AND, 0, 3), EXIT);
}

/* bpf-to-bpf calls: main calls f four times; f does a little ALU. */
static void b_calls(struct tp *p, uint8_t *region)
{
	int k;

	(void)region;
	A(p, MOV64_K(6, 0));
	for (k = 0; k < 4; k++)
		A(p, MOV64_K(1, k), CALL_LOCAL(2 * (3 - k) + 2),
		  ALU64_X(BPF_ADD, 6, 0));
	A(p, MOV64_X(0, 6), ALU64_K(BPF_AND, 0, 3), EXIT);
	/* f(r1) = r1 * 7 + 3 */
	A(p, MOV64_X(0, 1), ALU64_K(BPF_MUL, 0, 7), ALU64_K(BPF_ADD, 0, 3),
	  EXIT);
}

/* 96 ALU operations of every kind, division included. */
static void b_alu(struct tp *p, uint8_t *region)
{
	static const uint8_t ops[] = {
		BPF_ADD, BPF_MUL, BPF_XOR, BPF_RSH, BPF_OR, BPF_DIV, BPF_SUB,
		BPF_LSH, BPF_AND, BPF_MOD, BPF_ARSH, BPF_ADD,
	};
	int k;

	(void)region;
	A(p, MOV64_K(0, 12345), MOV64_K(2, 7), MOV64_K(3, 3));
	for (k = 0; k < 96; k++) {
		uint8_t op = ops[k % ARRAY_SIZE(ops)];

		if (op == BPF_RSH || op == BPF_LSH || op == BPF_ARSH)
			A(p, ALU64_K(op, 0, 3));
		else if (k & 1)
			A(p, ALU32_X(op, 0, k & 2 ? 2 : 3));
		else
			A(p, ALU64_X(op, 0, k & 2 ? 2 : 3));
	}
	A(p, EXIT);
}

static uint64_t t_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_bench(void **state)
{
	static const struct bench_prog progs[] = {
		{ "drop", b_drop, UXDP_BPF_CTX_XDP },
		{ "parse+count", b_parse_count, UXDP_BPF_CTX_XDP },
		{ "macswap", b_macswap, UXDP_BPF_CTX_XDP },
		{ "loop8", b_loop, UXDP_BPF_CTX_XDP },
		{ "calls4", b_calls, UXDP_BPF_CTX_XDP },
		{ "alu96", b_alu, UXDP_BPF_CTX_XDP },
	};
	const char *env = getenv("UXDP_BPF_JIT_BENCH");
	const char *only = getenv("UXDP_BPF_JIT_BENCH_PROG");
	const char *nr = getenv("UXDP_BPF_JIT_BENCH_ROUNDS");
	static uint8_t region[256 * 8];
	struct uxdp_bpf_region reg = { region, sizeof(region), false };
	uint8_t pkt[PKT_LEN] = {
		[12] = 0x08, [13] = 0x00, [23] = 17, [37] = 53,
	};
	struct uxdp_buff b = {
		.data = pkt, .data_end = pkt + PKT_LEN, .data_meta = pkt,
	};
	unsigned rounds = nr && atoi(nr) > 0 ? (unsigned)atoi(nr) : 2000000;
	size_t k;

	(void)state;
	if (!env || !*env)
		skip();
	printf("%-12s %10s %10s %8s %10s\n", "program", "jit ns", "interp ns",
	       "ratio", "jit bytes");
	for (k = 0; k < ARRAY_SIZE(progs); k++) {
		struct tp p = { 0 };
		struct uxdp_bpf_code c;
		struct uxdp_bpf_jit *jit;
		struct uxdp_bpf_run run = { 0 };
		uint64_t t0, tj = UINT64_MAX, ti = UINT64_MAX, r0j = 0, r0i = 0;
		unsigned i, rep;

		if (only && *only && strcmp(only, progs[k].name))
			continue;
		progs[k].build(&p, region);
		c = t_code(&p);
		c.ctx_kind = progs[k].ctx_kind;
		c.regions = &reg;
		c.nregions = 1;
		jit = t_compile(&c);
		/* best of 3, each 2M runs (the machine is shared) */
		for (rep = 0; rep < 3; rep++) {
			t0 = t_ns();
			for (i = 0; i < rounds; i++)
				r0j = uxdp_bpf_jit_run(jit, &run,
						       (uintptr_t)&b, 0);
			t0 = t_ns() - t0;
			tj = t0 < tj ? t0 : tj;
			assert_int_equal(run.fault, 0);
			t0 = t_ns();
			for (i = 0; i < rounds; i++) {
				run.code = &c;
				run.ctx = &b;
				r0i = uxdp_bpf_interp_run(&run, (uintptr_t)&b,
							  0);
			}
			t0 = t_ns() - t0;
			ti = t0 < ti ? t0 : ti;
			assert_int_equal(run.fault, 0);
		}
		assert_int_equal(r0i, r0j);
		printf("%-12s %10.2f %10.2f %7.1fx %10zu\n", progs[k].name,
		       (double)tj / rounds, (double)ti / rounds,
		       (double)ti / (double)tj, uxdp_bpf_jit_size(jit));
		uxdp_bpf_jit_free(jit);
		tp_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_all_compile),
		cmocka_unit_test(test_alu_x_edges),
		cmocka_unit_test(test_alu_k_edges),
		cmocka_unit_test(test_end_swaps),
		cmocka_unit_test(test_jmp_edges),
		cmocka_unit_test(test_lddw_mov),
		cmocka_unit_test(test_fused_mov_add),
		cmocka_unit_test(test_fused_lea_bytes),
		cmocka_unit_test(test_fused_bound),
		cmocka_unit_test(test_fused_bound_edges),
		cmocka_unit_test(test_fused_ld16),
		cmocka_unit_test(test_ldx_st_stx),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_check_align),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_jump_rel8_edges),
		cmocka_unit_test(test_jump_convergence),
		cmocka_unit_test(test_jump_padded),
		cmocka_unit_test(test_jump_long),
		cmocka_unit_test(test_helper_calls),
		cmocka_unit_test(test_helper_unwind),
		cmocka_unit_test(test_local_call_depth),
		cmocka_unit_test(test_local_call_frames),
		cmocka_unit_test(test_local_call_saves),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_check_regions),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_budget_reg),
		cmocka_unit_test(test_tail_calls),
		cmocka_unit_test(test_ldx_ctx),
		cmocka_unit_test(test_regs_zero),
		cmocka_unit_test(test_regs_init_proven),
		cmocka_unit_test(test_fall_off_end),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_run_xdp),
		cmocka_unit_test(test_memory_wx),
		cmocka_unit_test(test_bench),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* __x86_64__ */
