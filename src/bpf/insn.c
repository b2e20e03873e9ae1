/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * insn_table.h's expansions: the table by opcode byte, the field limits of
 * each row (what an instruction may hold), and the disassembler in the
 * conformance suite's spelling. Every other part asks these; none keeps an
 * opcode list of its own.
 */
#include "../internal.h"

#include <stdio.h>

#include "bpf_internal.h"

#define OP_ROW(code, mn, grp, fl)					\
	[code] = { .mnemonic = (mn), .group = UXDP_BPF_G_##grp,		\
		   .flags = (fl) },
const struct uxdp_bpf_op uxdp_bpf_ops[256] = {
	UXDP_BPF_INSNS(OP_ROW)
};
#undef OP_ROW

#define INSN_CLASS(c)	((c) & 0x07)
#define INSN_OP(c)	((c) & 0xf0)
#define INSN_SIZE(c)	((c) & 0x18)
#define INSN_MODE(c)	((c) & 0xe0)

static bool atomic_imm_ok(int32_t imm)
{
	switch (imm) {
	case BPF_ADD: case BPF_ADD | BPF_FETCH:
	case BPF_OR: case BPF_OR | BPF_FETCH:
	case BPF_AND: case BPF_AND | BPF_FETCH:
	case BPF_XOR: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: case BPF_CMPXCHG:
		return true;
	}
	return false;
}

/* A named reason for an opcode byte no row has. */
static const char *unknown_why(uint8_t code)
{
	uint8_t cls = INSN_CLASS(code);

	if ((cls == BPF_LD) && (INSN_MODE(code) == BPF_ABS ||
				INSN_MODE(code) == BPF_IND))
		return "legacy packet load (LD_ABS/LD_IND): not for XDP";
	if (code == (BPF_JMP | BPF_CALL | BPF_X))
		return "callx: out of scope";
	if (code == (BPF_JMP | 0xe0))
		return "may_goto: not supported";
	return "unknown opcode";
}

int uxdp_bpf_insn_valid(const struct bpf_insn *in, size_t left, bool internal,
			const char **why)
{
	return uxdp_bpf_insn_valid_ex(in, left, UXDP_BPF_VALID_KERNEL |
				      (internal ? UXDP_BPF_VALID_INTERNAL : 0),
				      why);
}

int uxdp_bpf_insn_valid_ex(const struct bpf_insn *in, size_t left,
			   uint32_t rules, const char **why)
{
	bool internal = rules & UXDP_BPF_VALID_INTERNAL;
	const struct uxdp_bpf_op *op = &uxdp_bpf_ops[in->code];
	uint8_t code = in->code, cls = INSN_CLASS(code);
	static __thread char buf[64];

#define BAD(...)							\
	do {								\
		snprintf(buf, sizeof(buf), __VA_ARGS__);		\
		*why = buf;						\
		return -EINVAL;						\
	} while (0)

	if (!op->mnemonic)
		BAD("%s 0x%02x", unknown_why(code), code);
	if (op->group == UXDP_BPF_G_INTERNAL && !internal)
		BAD("opcode 0x%02x is uxdp's own, not eBPF", code);
	if (in->dst_reg > 10 || in->src_reg > 10)
		BAD("bad register r%u", in->dst_reg > 10 ? in->dst_reg :
		    in->src_reg);
	/* r10 is read-only: only stores through it, and its reads. */
	if (in->dst_reg == 10 && !(op->flags & (UXDP_BPF_F_STORE |
						UXDP_BPF_F_NODST)) &&
	    cls != BPF_JMP && cls != BPF_JMP32)
		BAD("r10 is read-only");
	if ((op->flags & UXDP_BPF_F_NODST) && in->dst_reg)
		BAD("dst register set where the opcode has none");
	if (!(op->flags & UXDP_BPF_F_SRC) && in->src_reg &&
	    code != (BPF_LD | BPF_IMM | BPF_DW) &&
	    code != (BPF_JMP | BPF_CALL))
		BAD("src register set for a K form");
	if (!(op->flags & UXDP_BPF_F_IMM) && in->imm &&
	    !(op->flags & UXDP_BPF_F_VAR_IMM) &&
	    code != (BPF_STX | BPF_ATOMIC | BPF_W) &&
	    code != (BPF_STX | BPF_ATOMIC | BPF_DW))
		BAD("imm set where the opcode has none");

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (INSN_OP(code) == BPF_END) {
			if (in->imm != 16 && in->imm != 32 && in->imm != 64)
				BAD("byte swap of %d bits", in->imm);
			if (in->off)
				BAD("off set on a byte swap");
			break;
		}
		if (INSN_OP(code) == BPF_DIV || INSN_OP(code) == BPF_MOD) {
			if (in->off != 0 && in->off != 1)
				BAD("div/mod off %d (0 unsigned, 1 signed)",
				    in->off);
			break;
		}
		if (INSN_OP(code) == BPF_MOV && (op->flags & UXDP_BPF_F_SRC)) {
			bool ok = in->off == 0 || in->off == 8 ||
				  in->off == 16 ||
				  (cls == BPF_ALU64 && in->off == 32);

			if (!ok)
				BAD("movsx of %d bits", in->off);
			break;
		}
		if (in->off)
			BAD("off set on an ALU instruction");
		/* The RFC masks the count (the conformance suite's
		 * lsh32-imm-high shifts by 60); the kernel refuses it. */
		if ((rules & UXDP_BPF_VALID_KERNEL) &&
		    (INSN_OP(code) == BPF_LSH || INSN_OP(code) == BPF_RSH ||
		     INSN_OP(code) == BPF_ARSH) && !(op->flags & UXDP_BPF_F_SRC)
		    && (uint32_t)in->imm >= (cls == BPF_ALU ? 32U : 64U))
			BAD("shift by %d", in->imm);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (code == (BPF_JMP | BPF_CALL)) {
			if (in->src_reg > BPF_PSEUDO_KFUNC_CALL)
				BAD("call with src %u", in->src_reg);
			if (in->off)
				BAD("off set on a call");
			break;
		}
		if (code == (BPF_JMP | BPF_EXIT)) {
			if (in->off || in->imm || in->src_reg || in->dst_reg)
				BAD("fields set on exit");
			break;
		}
		if (INSN_OP(code) == BPF_JA && cls == BPF_JMP && in->imm)
			BAD("imm set on ja (ja32 takes imm)");
		if (INSN_OP(code) == BPF_JA && cls == BPF_JMP32 && in->off)
			BAD("off set on ja32 (it takes imm)");
		break;
	case BPF_LD:
		/* lddw only: the second slot has code 0 and no registers. */
		if (left < 2)
			BAD("lddw without its second slot");
		if (in[1].code || in[1].dst_reg || in[1].src_reg || in[1].off)
			BAD("lddw's second slot is not empty");
		if (in->off)
			BAD("off set on lddw");
		if (in->src_reg > BPF_PSEUDO_MAP_IDX_VALUE)
			BAD("lddw with src %u", in->src_reg);
		break;
	case BPF_STX:
		if (INSN_MODE(code) == BPF_ATOMIC && !atomic_imm_ok(in->imm))
			BAD("atomic operation 0x%x", (uint32_t)in->imm);
		/* A fetch writes the old value to src. */
		if (INSN_MODE(code) == BPF_ATOMIC && (in->imm & BPF_FETCH) &&
		    in->src_reg == 10)
			BAD("r10 is read-only");
		break;
	default:
		break;
	}
	return 0;
#undef BAD
}

/* ---- the disassembler ----------------------------------------------------- */

const char *const uxdp_bpf_atomic_names[16] = {
	[BPF_ADD >> 4] = "add", [BPF_OR >> 4] = "or", [BPF_AND >> 4] = "and",
	[BPF_XOR >> 4] = "xor", [BPF_XCHG >> 4] = "xchg",
	[BPF_CMPXCHG >> 4] = "cmpxchg",
};

int uxdp_bpf_insn_str(const struct bpf_insn *in, char *buf, size_t len)
{
	const struct uxdp_bpf_op *op = &uxdp_bpf_ops[in->code];
	uint8_t code = in->code, cls = INSN_CLASS(code);
	const char *mn = op->mnemonic;
	bool x = op->flags & UXDP_BPF_F_SRC;

	/* callx has no row, but refusals name it as the suite spells it. */
	if (code == (BPF_JMP | BPF_CALL | BPF_X))
		return snprintf(buf, len, "call %%r%u", in->dst_reg);
	if (!mn)
		return snprintf(buf, len, "<bad opcode 0x%02x>", code);
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (INSN_OP(code) == BPF_END)
			return snprintf(buf, len, "%s%d %%r%u", mn, in->imm,
					in->dst_reg);
		if (INSN_OP(code) == BPF_NEG || code == UXDP_BPF_OP_THREAD)
			return snprintf(buf, len, "%s %%r%u", mn, in->dst_reg);
		if ((INSN_OP(code) == BPF_DIV || INSN_OP(code) == BPF_MOD) &&
		    in->off == 1)
			return x ? snprintf(buf, len, "s%s %%r%u, %%r%u", mn,
					    in->dst_reg, in->src_reg) :
				   snprintf(buf, len, "s%s %%r%u, %d", mn,
					    in->dst_reg, in->imm);
		if (INSN_OP(code) == BPF_MOV && x && in->off)
			return snprintf(buf, len, "movsx%d%s %%r%u, %%r%u",
					in->off, cls == BPF_ALU ? "32" : "64",
					in->dst_reg, in->src_reg);
		return x ? snprintf(buf, len, "%s %%r%u, %%r%u", mn,
				    in->dst_reg, in->src_reg) :
			   snprintf(buf, len, "%s %%r%u, %d", mn, in->dst_reg,
				    in->imm);
	case BPF_JMP:
	case BPF_JMP32:
		if (code == (BPF_JMP | BPF_CALL))
			return in->src_reg == BPF_PSEUDO_CALL ?
			       snprintf(buf, len, "call local %+d", in->imm) :
			       in->src_reg == BPF_PSEUDO_KFUNC_CALL ?
			       snprintf(buf, len, "call kfunc %d", in->imm) :
			       snprintf(buf, len, "call %d", in->imm);
		if (code == (BPF_JMP | BPF_EXIT) ||
		    op->group == UXDP_BPF_G_INTERNAL) {
			if (code == UXDP_BPF_OP_CHECK)
				return snprintf(buf, len, "check%s %u [%%r%u%+d] "
						"kind %u region %u%s",
						(uint32_t)in->imm &
						UXDP_BPF_CHECK_WRITE ? "w" : "r",
						UXDP_BPF_CHECK_SIZE(in->imm),
						in->dst_reg, in->off,
						UXDP_BPF_CHECK_KIND(in->imm),
						UXDP_BPF_CHECK_REGION(in->imm),
						(uint32_t)in->imm &
						UXDP_BPF_CHECK_ALIGN ?
						" align" : "");
			return snprintf(buf, len, "%s", mn);
		}
		if (INSN_OP(code) == BPF_JA)
			return cls == BPF_JMP32 ?
			       snprintf(buf, len, "%s %+d", mn, in->imm) :
			       snprintf(buf, len, "%s %+d", mn, in->off);
		return x ? snprintf(buf, len, "%s %%r%u, %%r%u, %+d", mn,
				    in->dst_reg, in->src_reg, in->off) :
			   snprintf(buf, len, "%s %%r%u, %d, %+d", mn,
				    in->dst_reg, in->imm, in->off);
	case BPF_LD:
		if (in->src_reg == BPF_PSEUDO_MAP_IDX)
			return snprintf(buf, len, "lddw %%r%u, map[%d]",
					in->dst_reg, in->imm);
		if (in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
			return snprintf(buf, len, "lddw %%r%u, map[%d]%+d",
					in->dst_reg, in->imm, in[1].imm);
		return snprintf(buf, len, "lddw %%r%u, 0x%llx", in->dst_reg,
				(unsigned long long)((uint64_t)(uint32_t)in->imm |
						     (uint64_t)(uint32_t)in[1].imm
						     << 32));
	case BPF_LDX:
		if (code == UXDP_BPF_OP_LDX_CTX)
			return snprintf(buf, len, "ldx_ctx %%r%u, [%%r%u], "
					"field %d", in->dst_reg, in->src_reg,
					in->imm);
		return snprintf(buf, len, "%s %%r%u, [%%r%u%+d]", mn,
				in->dst_reg, in->src_reg, in->off);
	case BPF_ST:
		return snprintf(buf, len, "%s [%%r%u%+d], %d", mn, in->dst_reg,
				in->off, in->imm);
	case BPF_STX:
		if (INSN_MODE(code) == BPF_ATOMIC) {
			const char *w = INSN_SIZE(code) == BPF_W ? "32" : "";
			/* xchg and cmpxchg always fetch: no "fetch" */
			bool fetch = (in->imm & BPF_FETCH) &&
				     in->imm != BPF_XCHG &&
				     in->imm != BPF_CMPXCHG;

			return snprintf(buf, len, "lock %s%s%s [%%r%u%+d], %%r%u",
					fetch ? "fetch " : "",
					uxdp_bpf_atomic_names[((uint32_t)in->imm
							       >> 4) & 15] ?: "?",
					w, in->dst_reg, in->off, in->src_reg);
		}
		return snprintf(buf, len, "%s [%%r%u%+d], %%r%u", mn,
				in->dst_reg, in->off, in->src_reg);
	}
	return snprintf(buf, len, "<bad class>");
}

int uxdp_bpf_insn_str_at(const struct bpf_insn *insns, uint32_t n,
			 uint32_t i, char *buf, size_t len)
{
	struct bpf_insn two[2] = { { 0 } };

	if (i >= n)
		return snprintf(buf, len, "end");
	if (i + 1 < n)
		return uxdp_bpf_insn_str(&insns[i], buf, len);
	/* Found by fuzz_bpf_elf: a cut-off lddw's message read past the
	 * program. */
	two[0] = insns[i];
	return uxdp_bpf_insn_str(two, buf, len);
}

bool uxdp_bpf_match_ld16(const struct bpf_insn *in, uint32_t n,
			 struct uxdp_bpf_ld16 *m)
{
	const uint8_t ldxb = BPF_LDX | BPF_MEM | BPF_B;

	if (n < 4 || in[0].code != ldxb || in[2].code != ldxb ||
	    in[1].code != (BPF_ALU | BPF_LSH | BPF_K) || in[1].imm != 8 ||
	    in[3].code != (BPF_ALU | BPF_OR | BPF_X))
		return false;
	m->a = in[0].dst_reg;
	m->b = in[2].dst_reg;
	m->p = in[0].src_reg;
	m->k = in[2].off;
	return m->a <= 9 && m->b <= 9 && m->p <= 10 && m->a != m->p &&
	       m->a != m->b && in[2].src_reg == m->p &&
	       (int32_t)in[0].off == (int32_t)m->k + 1 &&
	       in[1].dst_reg == m->a && in[1].off == 0 &&
	       in[3].dst_reg == m->a && in[3].src_reg == m->b &&
	       in[3].off == 0;
}

bool uxdp_bpf_match_mov_add(const struct bpf_insn *in, uint32_t n,
			    struct uxdp_bpf_mov_add *m)
{
	uint8_t cls;

	if (n < 2)
		return false;
	cls = BPF_CLASS(in[0].code);
	if ((cls != BPF_ALU64 && cls != BPF_ALU) ||
	    in[0].code != (cls | BPF_MOV | BPF_X) || in[0].off ||
	    in[0].dst_reg > 9 || in[0].src_reg > 10 ||
	    in[1].dst_reg != in[0].dst_reg || in[1].off)
		return false;
	m->alu64 = cls == BPF_ALU64;
	m->dst = in[0].dst_reg;
	m->src = in[0].src_reg;
	m->imm = in[1].imm;
	if (in[1].code == (cls | BPF_ADD | BPF_X)) {
		if (in[1].src_reg > 10)
			return false;
		m->is_reg = true;
		m->reg = in[1].src_reg == m->dst ? m->src : in[1].src_reg;
		return true;
	}
	m->is_reg = false;
	m->reg = 0;
	return in[1].code == (cls | BPF_ADD | BPF_K);
}
