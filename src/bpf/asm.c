/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The assembler of the conformance suite's dialect (bpf_conformance's,
 * after uBPF's): text to struct bpf_insn, for tests and tools. It knows
 * spellings, not opcodes: a mnemonic is looked up in uxdp_bpf_ops
 * (insn_table.h), and the variants the suite spells apart (sdiv, movsx832,
 * le16, lock fetch add32, checkw) are the same rows with off or imm set,
 * as uxdp_bpf_insn_str() prints them. Fields are range-checked here; what
 * an instruction may hold is uxdp_bpf_insn_valid()'s to say, so a test can
 * assemble what the validity rules must refuse (callx, a bad movsx).
 */
#include "../internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpf_internal.h"

#define INSN_CLASS(c)	((c) & 0x07)
#define INSN_OP(c)	((c) & 0xf0)
#define INSN_MODE(c)	((c) & 0xe0)

#define ASM_LINE_MAX	512	/* characters a line */
#define ASM_TOK_MAX	8	/* operands a line (check has 6) */
#define ASM_NAME_MAX	64	/* characters a label */

struct asm_label {
	char name[ASM_NAME_MAX];
	uint32_t pc;
};

/* A jump or a local call naming a label: resolved once all are known. */
struct asm_ref {
	char name[ASM_NAME_MAX];
	uint32_t pc;
	uint32_t line;
};

struct asm_state {
	struct bpf_insn *insns;
	uint32_t len, cap;
	struct asm_label *labels;
	uint32_t nlabels, cap_labels;
	struct asm_ref *refs;
	uint32_t nrefs, cap_refs;
	uint32_t line;
	int64_t first_exit;	/* the suite's implicit label "exit" */
};

static __attribute__((format(printf, 2, 3)))
int asm_err(const struct asm_state *st, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return uxdp_fail(EINVAL, "line %u: %s", st->line, msg);
}

/* Room for one more of @size bytes in *@arr (*@cap grows by doubling). */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, (size_t)c * size);
	if (!p)
		return uxdp_fail(ENOMEM, "assembler: out of memory");
	*arr = p;
	*cap = c;
	return 0;
}

static int emit(struct asm_state *st, const struct bpf_insn *in, uint32_t n)
{
	uint32_t i;
	int err;

	for (i = 0; i < n; i++) {
		if (st->len >= UXDP_BPF_MAX_INSNS)
			return asm_err(st, "more than %u instructions",
				       UXDP_BPF_MAX_INSNS);
		err = grow((void **)&st->insns, &st->cap, st->len,
			   sizeof(*st->insns));
		if (err)
			return err;
		st->insns[st->len++] = in[i];
	}
	return 0;
}

/* ---- operands ------------------------------------------------------------- */

/* [+-]decimal or [+-]0xhex: the sign and the magnitude, exactly. */
static bool parse_num(const char *s, bool *neg, bool *hex, uint64_t *mag)
{
	unsigned int base = 10;
	uint64_t v = 0;

	*neg = false;
	if (*s == '+' || *s == '-')
		*neg = *s++ == '-';
	*hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (*hex) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*mag = v;
	return true;
}

/*
 * A signed field of @bits bits, as the suite writes them: decimal within
 * the signed range, hex up to the unsigned one (0xfff8 is -8 in an off),
 * a negative hex within the signed one.
 */
static int get_signed(const struct asm_state *st, const char *tok,
		      unsigned int bits, const char *what, int64_t *out)
{
	uint64_t smax = (1ULL << (bits - 1)) - 1, umax = (1ULL << bits) - 1;
	bool neg, hex;
	uint64_t mag;

	if (!parse_num(tok, &neg, &hex, &mag))
		return asm_err(st, "bad %s '%s'", what, tok);
	if (neg ? mag > smax + 1 : mag > (hex ? umax : smax))
		return asm_err(st, "%s '%s' out of %u-bit range", what, tok,
			       bits);
	if (neg)
		*out = -(int64_t)mag;
	else if (mag > smax)
		*out = (int64_t)mag - (int64_t)(umax + 1);
	else
		*out = (int64_t)mag;
	return 0;
}

static int get_imm(const struct asm_state *st, const char *tok, int32_t *imm)
{
	int64_t v;
	int err = get_signed(st, tok, 32, "immediate", &v);

	*imm = (int32_t)v;
	return err;
}

static int get_off(const struct asm_state *st, const char *tok, int16_t *off)
{
	int64_t v;
	int err = get_signed(st, tok, 16, "offset", &v);

	*off = (int16_t)v;
	return err;
}

/* lddw's: any 64-bit pattern, in hex or decimal, or a negative decimal. */
static int get_imm64(const struct asm_state *st, const char *tok,
		     uint64_t *out)
{
	bool neg, hex;
	uint64_t mag;

	if (!parse_num(tok, &neg, &hex, &mag))
		return asm_err(st, "bad immediate '%s'", tok);
	if (neg && mag > 1ULL << 63)
		return asm_err(st, "immediate '%s' out of 64-bit range", tok);
	*out = neg ? -mag : mag;
	return 0;
}

static int get_reg(const struct asm_state *st, const char *tok, uint8_t *reg)
{
	const char *s = tok;
	unsigned int r = 0;

	if (s[0] != '%' || s[1] != 'r' || !s[2])
		return asm_err(st, "bad register '%s'", tok);
	for (s += 2; *s; s++) {
		if (*s < '0' || *s > '9' || r > 10)
			return asm_err(st, "bad register '%s'", tok);
		r = r * 10 + (unsigned int)(*s - '0');
	}
	if (r > 10 || (tok[2] == '0' && tok[3]))
		return asm_err(st, "bad register '%s'", tok);
	*reg = (uint8_t)r;
	return 0;
}

/* "[%rN]", "[%rN+off]", "[%rN-off]". */
static int get_mem(const struct asm_state *st, const char *tok, uint8_t *reg,
		   int16_t *off)
{
	char buf[48], *sign;
	size_t n = strlen(tok);
	int err;

	if (n < 3 || tok[0] != '[' || tok[n - 1] != ']' || n - 2 >= sizeof(buf))
		return asm_err(st, "bad memory operand '%s' (want [%%rN+off])",
			       tok);
	memcpy(buf, tok + 1, n - 2);
	buf[n - 2] = '\0';
	sign = strpbrk(buf, "+-");
	*off = 0;
	if (sign) {
		err = get_off(st, sign, off);
		if (err)
			return err;
		*sign = '\0';
	}
	return get_reg(st, buf, reg);
}

static bool is_reg(const char *tok)
{
	return tok[0] == '%';
}

/* A jump's or local call's target: "+N", "-N" or a label. */
static int get_target(struct asm_state *st, const char *tok, bool wide,
		      int32_t *rel)
{
	struct asm_ref *ref;
	size_t n = strlen(tok);
	int16_t off;
	int err;

	if (tok[0] == '+' || tok[0] == '-') {
		if (wide)
			return get_imm(st, tok, rel);
		err = get_off(st, tok, &off);
		*rel = off;
		return err;
	}
	if (n >= ASM_NAME_MAX)
		return asm_err(st, "label '%.20s...' too long", tok);
	err = grow((void **)&st->refs, &st->cap_refs, st->nrefs,
		   sizeof(*st->refs));
	if (err)
		return err;
	ref = &st->refs[st->nrefs++];
	memcpy(ref->name, tok, n + 1);
	ref->pc = st->len;
	ref->line = st->line;
	*rel = 0;
	return 0;
}

/* ---- mnemonics ------------------------------------------------------------ */

/*
 * The opcode of the row spelled @mn (@n characters) whose source is a
 * register if @x; a row with one form answers either way. -1: none.
 */
static int row_find(const char *mn, size_t n, bool x)
{
	int c, any = -1;

	for (c = 0; c < 256; c++) {
		const char *m = uxdp_bpf_ops[c].mnemonic;

		if (!m || strlen(m) != n || memcmp(m, mn, n))
			continue;
		if (!!(uxdp_bpf_ops[c].flags & UXDP_BPF_F_SRC) == x)
			return c;
		any = c;
	}
	return any;
}

enum asm_variant {
	V_NONE,
	V_END,		/* le16, be32, bswap64: imm is the width */
	V_MOVSX,	/* movsx832: off is the width */
	V_SIGNED,	/* sdiv, smod: off 1 */
	V_CHECK,	/* checkr, checkw */
};

struct asm_mn {
	int code;
	enum asm_variant var;
	int arg;
};

/* A row by name, or its signed form (sdiv32: div32 with off 1). */
static bool mn_plain(const char *mn, size_t n, bool x, struct asm_mn *m)
{
	int c = row_find(mn, n, x);

	if (c >= 0) {
		m->code = c;
		return true;
	}
	if (n > 1 && mn[0] == 's') {
		c = row_find(mn + 1, n - 1, x);
		if (c >= 0 && (uxdp_bpf_ops[c].flags & UXDP_BPF_F_VAR_OFF) &&
		    (INSN_OP(c) == BPF_DIV || INSN_OP(c) == BPF_MOD)) {
			m->code = c;
			m->var = V_SIGNED;
			return true;
		}
	}
	return false;
}

static int width_of(const char *s)
{
	if (!strcmp(s, "16"))
		return 16;
	if (!strcmp(s, "32"))
		return 32;
	if (!strcmp(s, "64"))
		return 64;
	return 0;
}

static bool mn_resolve(const char *mn, bool x, struct asm_mn *m)
{
	const char *chk = uxdp_bpf_ops[UXDP_BPF_OP_CHECK].mnemonic;
	size_t n = strlen(mn), cn = strlen(chk);
	char alias[32];
	int c;

	m->var = V_NONE;
	m->arg = 0;
	/* The suite's older name of bswap. */
	if (!strncmp(mn, "swap", 4) && n < sizeof(alias) - 1) {
		snprintf(alias, sizeof(alias), "b%s", mn);
		mn = alias;
		n++;
	}
	/* The byte swaps: the row's name and the width. */
	for (c = 0; c < 256; c++) {
		const char *r = uxdp_bpf_ops[c].mnemonic;
		size_t rn = r ? strlen(r) : 0;

		if (!r || (INSN_CLASS(c) != BPF_ALU &&
			   INSN_CLASS(c) != BPF_ALU64) ||
		    INSN_OP(c) != BPF_END || n <= rn || memcmp(mn, r, rn) ||
		    !width_of(mn + rn))
			continue;
		m->code = c;
		m->var = V_END;
		m->arg = width_of(mn + rn);
		return true;
	}
	/* movsx<from><to>: mov with off the width it extends from. */
	if (!strncmp(mn, "movsx", 5) && n > 7) {
		int to = width_of(mn + n - 2);
		char from[8];

		if ((to != 32 && to != 64) || n - 7 >= sizeof(from))
			return false;
		memcpy(from, mn + 5, n - 7);
		from[n - 7] = '\0';
		m->code = (to == 32 ? BPF_ALU : BPF_ALU64) | BPF_MOV | BPF_X;
		m->var = V_MOVSX;
		m->arg = atoi(from);
		return uxdp_bpf_ops[m->code].mnemonic && m->arg > 0 &&
		       strspn(from, "0123456789") == strlen(from);
	}
	/* check: r or w for the access it checks. */
	if (n == cn + 1 && !memcmp(mn, chk, cn) &&
	    (mn[cn] == 'r' || mn[cn] == 'w')) {
		m->code = UXDP_BPF_OP_CHECK;
		m->var = V_CHECK;
		m->arg = mn[cn] == 'w';
		return true;
	}
	if (mn_plain(mn, n, x, m))
		return true;
	/* add64, mov64, sdiv64: the ALU64 rows by their width. */
	if (n > 2 && width_of(mn + n - 2) == 64 &&
	    mn_plain(mn, n - 2, x, m) && INSN_CLASS(m->code) == BPF_ALU64)
		return true;
	return false;
}

/* ---- instructions --------------------------------------------------------- */

#define WANT(k)								\
	do {								\
		if (nop != (k))						\
			return asm_err(st, "%s takes %d operand%s, not %d", \
				       mn, (k), (k) == 1 ? "" : "s", nop); \
	} while (0)

/* lock [fetch] OP[32] [dst+off], src */
static int asm_lock(struct asm_state *st, char **op, int nop)
{
	struct bpf_insn in = { 0 };
	bool fetch = nop == 4 && !strcmp(op[0], "fetch");
	char row[16], name[16];
	uint8_t dst, src;
	size_t n;
	int i, c, err;

	if (nop != 3 + fetch)
		return asm_err(st, "lock takes [fetch] OP[32] [%%rN+off], %%rN "
			       "(%d operands given)", nop);
	op += fetch;
	n = strlen(op[0]);
	if (n >= sizeof(name))
		return asm_err(st, "unknown atomic operation '%s'", op[0]);
	memcpy(name, op[0], n + 1);
	snprintf(row, sizeof(row), "lock");
	if (n > 2 && width_of(name + n - 2) == 32) {
		name[n - 2] = '\0';
		snprintf(row, sizeof(row), "lock32");
	}
	for (i = 0; i < 16; i++)
		if (uxdp_bpf_atomic_names[i] &&
		    !strcmp(uxdp_bpf_atomic_names[i], name))
			break;
	if (i == 16)
		return asm_err(st, "unknown atomic operation '%s'", op[0]);
	c = row_find(row, strlen(row), true);
	if (c < 0)
		return asm_err(st, "unknown mnemonic '%s'", row);
	in.code = (uint8_t)c;
	in.imm = i << 4;
	/* xchg and cmpxchg always fetch. */
	if (fetch || (in.imm | BPF_FETCH) == BPF_XCHG ||
	    (in.imm | BPF_FETCH) == BPF_CMPXCHG)
		in.imm |= BPF_FETCH;
	err = get_mem(st, op[1], &dst, &in.off);
	if (!err)
		err = get_reg(st, op[2], &src);
	if (err)
		return err;
	in.dst_reg = dst & 0xf;
	in.src_reg = src & 0xf;
	return emit(st, &in, 1);
}

/*
 * call N, call helper N: a helper; call local +N or NAME: a function of
 * the program; call runtime N (the suite's) or kfunc N (the
 * disassembler's): a kfunc; call %rN, call helper %rN: callx, which no row
 * has (the register in dst, as the suite writes it).
 */
static int asm_call(struct asm_state *st, const char *mn, char **op, int nop)
{
	struct bpf_insn in = { .code = BPF_JMP | BPF_CALL };
	const char *mode, *target;
	uint8_t reg;
	int err;

	if (nop != 1 && nop != 2)
		return asm_err(st, "%s takes [helper|local|runtime] TARGET", mn);
	mode = nop == 2 ? op[0] : "helper";
	target = op[nop - 1];
	if (!strcmp(mode, "helper") && is_reg(target)) {
		err = get_reg(st, target, &reg);
		in.code |= BPF_X;
		in.dst_reg = reg & 0xf;
	} else if (!strcmp(mode, "helper")) {
		err = get_imm(st, target, &in.imm);
	} else if (!strcmp(mode, "local")) {
		in.src_reg = BPF_PSEUDO_CALL;
		err = get_target(st, target, true, &in.imm);
	} else if (!strcmp(mode, "runtime") || !strcmp(mode, "kfunc")) {
		in.src_reg = BPF_PSEUDO_KFUNC_CALL;
		err = get_imm(st, target, &in.imm);
	} else {
		err = asm_err(st, "unknown call kind '%s'", mode);
	}
	return err ?: emit(st, &in, 1);
}

/* lddw %rN, imm64 | map[N] | map[N]+off */
static int asm_lddw(struct asm_state *st, struct bpf_insn *in, char **op)
{
	const char *v = op[1];
	uint64_t imm = 0;
	int err;

	if (!strncmp(v, "map[", 4)) {
		char num[24];
		const char *e = strchr(v, ']');
		size_t n = e ? (size_t)(e - v - 4) : 0;

		if (!e || !n || n >= sizeof(num))
			return asm_err(st, "bad map reference '%s'", v);
		memcpy(num, v + 4, n);
		num[n] = '\0';
		err = get_imm(st, num, &in[0].imm);
		if (err)
			return err;
		in[0].src_reg = BPF_PSEUDO_MAP_IDX;
		if (e[1]) {
			in[0].src_reg = BPF_PSEUDO_MAP_IDX_VALUE;
			if (e[1] != '+' && e[1] != '-')
				return asm_err(st, "bad map reference '%s'", v);
			err = get_imm(st, e + 1, &in[1].imm);
		}
		return err;
	}
	err = get_imm64(st, v, &imm);
	in[0].imm = (int32_t)(uint32_t)imm;
	in[1].imm = (int32_t)(uint32_t)(imm >> 32);
	return err;
}

/* checkr|checkw SIZE [%rN+off] kind K region R [align] */
static int asm_check(struct asm_state *st, struct bpf_insn *in, bool write,
		     char **op, int nop, uint8_t *reg)
{
	bool align = nop == 7 && !strcmp(op[6], "align");
	int32_t size, kind, region;
	int err;

	if ((nop != 6 && !align) || strcmp(op[2], "kind") ||
	    strcmp(op[4], "region"))
		return asm_err(st, "check takes SIZE [%%rN+off] kind K "
			       "region R [align]");
	err = get_imm(st, op[0], &size) ?: get_mem(st, op[1], reg, &in->off)
	      ?: get_imm(st, op[3], &kind) ?: get_imm(st, op[5], &region);
	if (err)
		return err;
	if ((uint32_t)size > 0xff || (uint32_t)kind > 0xf ||
	    (uint32_t)region > 0xffff)
		return asm_err(st, "check size, kind or region out of range");
	in->imm = UXDP_BPF_CHECK_IMM(size, kind, write, region) |
		  (align ? UXDP_BPF_CHECK_ALIGN : 0);
	return 0;
}

static int asm_insn(struct asm_state *st, const char *mn, char **op, int nop)
{
	struct bpf_insn in[2] = { { 0 } };
	bool x = nop >= 2 && is_reg(op[1]);
	struct asm_mn m;
	uint8_t cls, dst = 0, src = 0;
	int32_t rel = 0;
	int err = 0;

	if (!strcmp(mn, "lock"))
		return asm_lock(st, op, nop);
	if (!strcmp(mn, "call"))
		return asm_call(st, mn, op, nop);
	if (!mn_resolve(mn, x, &m))
		return asm_err(st, "unknown mnemonic '%s'", mn);
	in[0].code = (uint8_t)m.code;
	cls = INSN_CLASS(m.code);

	if (m.code == UXDP_BPF_OP_CHECK) {
		err = asm_check(st, &in[0], m.arg, op, nop, &dst);
	} else if (m.code == UXDP_BPF_OP_LDX_CTX) {
		/* ldx_ctx %rD, [%rS], field F */
		int16_t off;

		if (nop != 4 || strcmp(op[2], "field"))
			return asm_err(st, "%s takes %%rN, [%%rN], field F",
				       mn);
		err = get_reg(st, op[0], &dst) ?:
		      get_mem(st, op[1], &src, &off) ?:
		      get_imm(st, op[3], &in[0].imm);
		if (!err && off)
			err = asm_err(st, "%s takes no offset", mn);
	} else if (m.code == UXDP_BPF_OP_THREAD) {
		WANT(1);
		err = get_reg(st, op[0], &dst);
	} else if (m.code == (BPF_JMP | BPF_EXIT) ||
		   uxdp_bpf_ops[m.code].group == UXDP_BPF_G_INTERNAL) {
		WANT(0);
		if (m.code == (BPF_JMP | BPF_EXIT) && st->first_exit < 0)
			st->first_exit = st->len;
	} else if (cls == BPF_ALU || cls == BPF_ALU64) {
		if (m.var == V_END || INSN_OP(m.code) == BPF_NEG) {
			WANT(1);
			in[0].imm = m.var == V_END ? m.arg : 0;
			err = get_reg(st, op[0], &dst);
		} else {
			WANT(2);
			err = get_reg(st, op[0], &dst);
			if (!err && x)
				err = get_reg(st, op[1], &src);
			else if (!err && m.var == V_MOVSX)
				err = asm_err(st, "%s takes a register", mn);
			else if (!err)
				err = get_imm(st, op[1], &in[0].imm);
			in[0].off = (int16_t)(m.var == V_SIGNED ? 1 :
					      m.var == V_MOVSX ? m.arg : 0);
		}
	} else if (cls == BPF_JMP || cls == BPF_JMP32) {
		if (INSN_OP(m.code) == BPF_JA) {
			WANT(1);
			err = get_target(st, op[0], cls == BPF_JMP32, &rel);
			if (cls == BPF_JMP32)
				in[0].imm = rel;
			else
				in[0].off = (int16_t)rel;
		} else {
			WANT(3);
			err = get_reg(st, op[0], &dst);
			if (!err && x)
				err = get_reg(st, op[1], &src);
			else if (!err)
				err = get_imm(st, op[1], &in[0].imm);
			if (!err)
				err = get_target(st, op[2], false, &rel);
			in[0].off = (int16_t)rel;
		}
	} else if (cls == BPF_LD) {
		WANT(2);
		err = get_reg(st, op[0], &dst) ?: asm_lddw(st, in, op);
		in[0].dst_reg = dst & 0xf;
		return err ?: emit(st, in, 2);
	} else if (cls == BPF_LDX) {
		WANT(2);
		err = get_reg(st, op[0], &dst) ?:
		      get_mem(st, op[1], &src, &in[0].off);
	} else if (cls == BPF_ST) {
		WANT(2);
		err = get_mem(st, op[0], &dst, &in[0].off) ?:
		      get_imm(st, op[1], &in[0].imm);
	} else if (cls == BPF_STX && INSN_MODE(m.code) != BPF_ATOMIC) {
		WANT(2);
		err = get_mem(st, op[0], &dst, &in[0].off) ?:
		      get_reg(st, op[1], &src);
	} else {
		/* lock and lock32 are spelled "lock [fetch] OP[32]". */
		return asm_err(st, "unknown mnemonic '%s'", mn);
	}
	if (err)
		return err;
	in[0].dst_reg = dst & 0xf;
	in[0].src_reg = src & 0xf;
	return emit(st, in, 1);
}

/* ---- lines ---------------------------------------------------------------- */

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

/* Operands split at blanks and commas; a [...] is one, blanks dropped. */
static int tokenize(const struct asm_state *st, char *s, char **tok)
{
	int n = 0;

	for (;;) {
		while (is_sep(*s))
			s++;
		if (!*s)
			return n;
		if (n == ASM_TOK_MAX)
			return asm_err(st, "too many operands");
		tok[n++] = s;
		if (*s == '[') {
			char *e = strchr(s, ']'), *w = s, *r;

			if (!e)
				return asm_err(st, "no ']' in '%s'", s);
			if (e[1] && !is_sep(e[1]))
				return asm_err(st, "junk after ']' in '%s'", s);
			for (r = s; r <= e; r++)
				if (*r != ' ' && *r != '\t')
					*w++ = *r;
			s = e[1] ? e + 2 : e + 1;
			*w = '\0';
			continue;
		}
		while (*s && !is_sep(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int asm_label(struct asm_state *st, const char *name)
{
	size_t n = strlen(name);
	uint32_t i;
	int err;

	if (!n || n >= ASM_NAME_MAX || name[0] == '+' || name[0] == '-' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$") != n)
		return asm_err(st, "bad label '%s'", name);
	for (i = 0; i < st->nlabels; i++)
		if (!strcmp(st->labels[i].name, name))
			return asm_err(st, "label '%s' defined twice", name);
	err = grow((void **)&st->labels, &st->cap_labels, st->nlabels,
		   sizeof(*st->labels));
	if (err)
		return err;
	memcpy(st->labels[st->nlabels].name, name, n + 1);
	st->labels[st->nlabels++].pc = st->len;
	return 0;
}

static int asm_line(struct asm_state *st, char *s)
{
	char *tok[ASM_TOK_MAX + 1], *mn, *colon;
	int n, err;

	while (*s == ' ' || *s == '\t')
		s++;
	/* "name:" before an instruction, or alone. */
	colon = strchr(s, ':');
	if (colon && (size_t)(colon - s) == strcspn(s, " \t,:")) {
		*colon = '\0';
		err = asm_label(st, s);
		if (err)
			return err;
		s = colon + 1;
		while (*s == ' ' || *s == '\t')
			s++;
	}
	if (!*s)
		return 0;
	mn = s;
	s += strcspn(s, " \t");
	if (*s)
		*s++ = '\0';
	n = tokenize(st, s, tok);
	if (n < 0)
		return n;
	return asm_insn(st, mn, tok, n);
}

/* Each line of @text through @fn, "#" comments and CRs gone. */
static int for_lines(struct asm_state *st, const char *text,
		     int (*fn)(struct asm_state *, char *))
{
	char buf[ASM_LINE_MAX];
	const char *p = text;
	int err;

	for (st->line = 1; *p; st->line++) {
		size_t n = strcspn(p, "\n"), k;

		if (n >= sizeof(buf))
			return asm_err(st, "line longer than %zu characters",
				       sizeof(buf) - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		k = strcspn(buf, "#\r");
		buf[k] = '\0';
		while (k && (buf[k - 1] == ' ' || buf[k - 1] == '\t'))
			buf[--k] = '\0';
		err = fn(st, buf);
		if (err)
			return err;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int resolve_refs(struct asm_state *st)
{
	uint32_t i, j;

	for (i = 0; i < st->nrefs; i++) {
		struct asm_ref *ref = &st->refs[i];
		struct bpf_insn *in = &st->insns[ref->pc];
		int64_t target = -1, rel;

		for (j = 0; j < st->nlabels; j++)
			if (!strcmp(st->labels[j].name, ref->name))
				target = st->labels[j].pc;
		if (target < 0 && !strcmp(ref->name, "exit"))
			target = st->first_exit;
		st->line = ref->line;
		if (target < 0)
			return asm_err(st, "no label '%s'", ref->name);
		rel = target - (int64_t)ref->pc - 1;
		/* ja32 and local calls take imm; the rest off. */
		if (in->code == (BPF_JMP32 | BPF_JA) ||
		    in->code == (BPF_JMP | BPF_CALL)) {
			in->imm = (int32_t)rel;
		} else {
			if (rel < INT16_MIN || rel > INT16_MAX)
				return asm_err(st, "label '%s' is %lld "
					       "instructions away: out of "
					       "a jump's reach", ref->name,
					       (long long)rel);
			in->off = (int16_t)rel;
		}
	}
	return 0;
}

static int asm_finish(struct asm_state *st, int err, struct bpf_insn **insns,
		      uint32_t *len)
{
	if (!err && !st->len)
		err = asm_err(st, "no instructions");
	free(st->labels);
	free(st->refs);
	if (err) {
		free(st->insns);
		return err;
	}
	*insns = st->insns;
	*len = st->len;
	return 0;
}

int uxdp_bpf_asm(const char *text, struct bpf_insn **insns, uint32_t *len)
{
	struct asm_state st = { .first_exit = -1 };
	int err;

	err = for_lines(&st, text, asm_line);
	if (!err)
		err = resolve_refs(&st);
	return asm_finish(&st, err, insns, len);
}

/* ---- raw words ------------------------------------------------------------ */

struct raw_state {
	struct asm_state st;	/* first: for_lines() hands it out */
	uint8_t *bytes;
	uint32_t n, cap;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int raw_byte(struct raw_state *rs, uint8_t b)
{
	int err;

	if (rs->n / 8 >= UXDP_BPF_MAX_INSNS)
		return asm_err(&rs->st, "more than %u instructions",
			       UXDP_BPF_MAX_INSNS);
	err = grow((void **)&rs->bytes, &rs->cap, rs->n, 1);
	if (!err)
		rs->bytes[rs->n++] = b;
	return err;
}

static int raw_line(struct asm_state *st, char *s)
{
	struct raw_state *rs = (struct raw_state *)st;
	char *tok[ASM_TOK_MAX * 4];
	int i, n, err;

	/* Up to 32 words a line: plenty for either form. */
	for (n = 0; n < (int)ARRAY_SIZE(tok); ) {
		while (is_sep(*s))
			s++;
		if (!*s)
			break;
		tok[n++] = s;
		s += strcspn(s, " \t,");
		if (*s)
			*s++ = '\0';
	}
	while (is_sep(*s))
		s++;
	if (*s)
		return asm_err(st, "too many words");
	for (i = 0; i < n; i++) {
		const char *t = tok[i];
		bool neg, hex;
		uint64_t w;
		int b;

		if (strlen(t) == 2 && hexval(t[0]) >= 0 && hexval(t[1]) >= 0) {
			err = raw_byte(rs, (uint8_t)(hexval(t[0]) << 4 |
						     hexval(t[1])));
			if (err)
				return err;
			continue;
		}
		if (!parse_num(t, &neg, &hex, &w) || !hex || neg ||
		    t[0] == '+')
			return asm_err(st, "bad word '%s' (0x and 16 hex "
				       "digits, or bytes as 2)", t);
		if (rs->n % 8)
			return asm_err(st, "word '%s' inside an instruction's "
				       "bytes", t);
		/* The word the instruction is, in host order, as the
		 * suite reads it. */
		for (b = 0; b < 8; b++) {
			err = raw_byte(rs, (uint8_t)(w >> (8 * b)));
			if (err)
				return err;
		}
	}
	return 0;
}

int uxdp_bpf_asm_raw(const char *text, struct bpf_insn **insns,
		     uint32_t *len)
{
	struct raw_state rs = { .st.first_exit = -1 };
	uint32_t i;
	int err;

	err = for_lines(&rs.st, text, raw_line);
	if (!err && rs.n % 8)
		err = asm_err(&rs.st, "%u bytes: not whole instructions",
			      rs.n);
	for (i = 0; !err && i < rs.n / 8; i++) {
		const uint8_t *b = rs.bytes + 8 * i;
		struct bpf_insn in = {
			.code = b[0],
			.dst_reg = b[1] & 0xf,
			.src_reg = b[1] >> 4,
			.off = (int16_t)(b[2] | b[3] << 8),
			.imm = (int32_t)((uint32_t)b[4] | (uint32_t)b[5] << 8 |
					 (uint32_t)b[6] << 16 |
					 (uint32_t)b[7] << 24),
		};

		err = emit(&rs.st, &in, 1);
	}
	free(rs.bytes);
	return asm_finish(&rs.st, err, insns, len);
}
