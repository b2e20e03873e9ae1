/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rewrites both engines share, in one pass over a program the safety
 * pass (check.c) accepted, as the kernel's convert_ctx_accesses() and
 * do_misc_fixups() do after its verifier:
 *
 *	ldxw from xdp_md	-> ldx_ctx (one for one)
 *	lddw map, map value	-> the host address (src 0)
 *	call helper id		-> call slot (an index into code->helpers)
 *	call bpf_tail_call	-> tail_call
 *	call map_lookup_elem	-> the map family's lookup as instructions,
 *				   where it has one (arrays) and the map is
 *				   one and the same in every state; with a
 *				   key the safety pass knows (the same
 *				   constant in every state), folded to the
 *				   value's address or 0
 *	an unproven access	-> check, then the access
 *	a backward jump		-> budget, then the jump
 *
 * Inserted instructions go before the one they guard and take its index
 * before fixups (orig_idx), so a fault names the instruction the program
 * has; every jump and call that lands on an instruction lands on what was
 * inserted before it. Nothing edits the code after this.
 */
#include "../internal.h"

#include <stdlib.h>
#include <string.h>

#include "bpf_internal.h"

#define CLS(c)		((c) & 0x07)
#define OP(c)		((c) & 0xf0)

static bool is_lddw(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW);
}

static bool is_jump(uint8_t code)
{
	if (CLS(code) != BPF_JMP && CLS(code) != BPF_JMP32)
		return false;
	return OP(code) != BPF_CALL && OP(code) != BPF_EXIT;
}

static uint32_t access_size(uint8_t code)
{
	switch (code & 0x18) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

static void set_imm64(struct bpf_insn *in, uint64_t v)
{
	in[0].src_reg = 0;
	in[0].imm = (int32_t)(uint32_t)v;
	in[1].imm = (int32_t)(uint32_t)(v >> 32);
}

/* The helper table: one slot per helper called, in order of first call. */
static int helper_slot(struct uxdp_bpf_code *code, uint32_t *cap,
		       const struct uxdp_bpf_helper *h)
{
	uint32_t k;

	for (k = 0; k < code->nhelpers; k++)
		if (code->helpers[k] == h)
			return (int)k;
	if (code->nhelpers == *cap) {
		uint32_t n = *cap ? *cap * 2 : 8;
		const struct uxdp_bpf_helper **a =
			realloc(code->helpers, n * sizeof(*a));

		if (!a)
			return -ENOMEM;
		code->helpers = a;
		*cap = n;
	}
	code->helpers[code->nhelpers] = h;
	return (int)code->nhelpers++;
}

/* The instruction at @i, rewritten into @out (two slots for lddw). */
static int rewrite(const struct uxdp_bpf_build *b, const struct uxdp_bpf_aux *x,
		   uint32_t i, struct bpf_insn *out, struct uxdp_bpf_code *code,
		   uint32_t *hcap)
{
	const struct bpf_insn *in = &b->insns[i];
	int slot;

	out[0] = in[0];
	if (is_lddw(in)) {
		const struct uxdp_bpf_build_map *m;

		out[1] = in[1];
		if (!in->src_reg)
			return 0;
		m = &b->maps[in->imm];
		if (in->src_reg == BPF_PSEUDO_MAP_IDX)
			set_imm64(out, (uint64_t)(uintptr_t)
				  (m->lddw ? m->lddw : m->map));
		else
			set_imm64(out, (uint64_t)(uintptr_t)
				  (m->values + (uint32_t)in[1].imm));
		return 0;
	}
	if (x->flags & UXDP_BPF_AUX_CTX) {
		out[0] = (struct bpf_insn){
			.code = UXDP_BPF_OP_LDX_CTX, .dst_reg = in->dst_reg,
			.src_reg = in->src_reg, .imm = x->ctx_field,
		};
		return 0;
	}
	if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg)
		return 0;
	if (in->imm == BPF_FUNC_tail_call) {
		out[0] = (struct bpf_insn){ .code = UXDP_BPF_OP_TAIL_CALL };
		return 0;
	}
	slot = helper_slot(code, hcap, b->helper((uint32_t)in->imm));
	if (slot < 0)
		return slot;
	out[0].imm = slot;
	return 0;
}

/* Whether the access @x describes is checked at run time: its bounds or,
 * for an atomic, its alignment. */
static bool needs_check(const struct uxdp_bpf_aux *x)
{
	return (x->flags & UXDP_BPF_AUX_MEM) &&
	       (x->kind || (x->flags & UXDP_BPF_AUX_ALIGN));
}

/* How many instructions the map family's inline lookup takes in place of
 * the call at @x (0: none, the call stays), written to @out. */
static uint32_t inline_lookup(const struct uxdp_bpf_build *b,
			      const struct uxdp_bpf_aux *x,
			      struct bpf_insn *out)
{
	bool known = (x->flags & (UXDP_BPF_AUX_KEY | UXDP_BPF_AUX_KEYVAR)) ==
		     UXDP_BPF_AUX_KEY;

	if ((x->flags & (UXDP_BPF_AUX_LOOKUP | UXDP_BPF_AUX_NOLOOKUP)) !=
	    UXDP_BPF_AUX_LOOKUP || x->region >= b->nmaps)
		return 0;
	return uxdp_bpf_map_gen_lookup(&b->maps[x->region],
				       known ? &x->key : NULL, out);
}

/* The check guarding the access at @in. */
static struct bpf_insn check_insn(const struct bpf_insn *in,
				  const struct uxdp_bpf_aux *x)
{
	bool load = CLS(in->code) == BPF_LDX;

	return (struct bpf_insn){
		.code = UXDP_BPF_OP_CHECK,
		.dst_reg = load ? in->src_reg : in->dst_reg,
		.off = in->off,
		.imm = UXDP_BPF_CHECK_IMM(access_size(in->code), x->kind,
					  !load, x->kind == UXDP_BPF_MEM_REGION ?
					  x->region : 0) |
		       (x->flags & UXDP_BPF_AUX_ALIGN ? UXDP_BPF_CHECK_ALIGN :
			0),
	};
}

void uxdp_bpf_code_free(struct uxdp_bpf_code *code)
{
	if (!code)
		return;
	free((char *)code->name);
	free(code->insns);
	free(code->orig_idx);
	free(code->helpers);
	free(code->regions);
	free(code->interp);
	free(code);
}

/* Every jump and call of the program, aimed again. */
static int retarget(const struct uxdp_bpf_build *b, const uint32_t *start,
		    const uint32_t *pos, struct uxdp_bpf_code *code)
{
	uint32_t i;

	for (i = 0; i < b->len; i++) {
		const struct bpf_insn *in = &b->insns[i];
		struct bpf_insn *out = &code->insns[pos[i]];
		int64_t t, off;

		if (is_lddw(in)) {
			i++;
			continue;
		}
		if (is_jump(in->code))
			t = (int64_t)i + 1 + (in->code == (BPF_JMP32 | BPF_JA) ?
					      in->imm : in->off);
		else if (in->code == (BPF_JMP | BPF_CALL) &&
			 in->src_reg == BPF_PSEUDO_CALL)
			t = (int64_t)i + 1 + in->imm;
		else
			continue;
		if (t < 0 || t >= b->len)
			return uxdp_fail(EINVAL, "prog %s: insn %u: internal "
					 "error: jump to %lld", b->name ?
					 b->name : "?", i, (long long)t);
		off = (int64_t)start[t] - pos[i] - 1;
		if (in->code == (BPF_JMP32 | BPF_JA) || !is_jump(in->code)) {
			out->imm = (int32_t)off;
		} else if (off < INT16_MIN || off > INT16_MAX) {
			return uxdp_fail(E2BIG, "prog %s: insn %u: the jump "
					 "spans %lld instructions after the "
					 "checks (at most %d)", b->name ?
					 b->name : "?", i, (long long)off,
					 INT16_MAX);
		} else {
			out->off = (int16_t)off;
		}
	}
	return 0;
}

int uxdp_bpf_fixup(struct uxdp_bpf_build *b, const struct uxdp_bpf_facts *f)
{
	const struct uxdp_bpf_aux *aux = f->aux;
	struct bpf_insn gen[UXDP_BPF_GEN_LOOKUP_MAX];
	uint32_t *start, *pos, i, n = 0, m, hcap = 0, gl;
	struct uxdp_bpf_code *code;
	int ret = -ENOMEM;

	start = malloc(((size_t)b->len + 1) * sizeof(*start));
	pos = malloc(((size_t)b->len + 1) * sizeof(*pos));
	code = calloc(1, sizeof(*code));
	if (!start || !pos || !code)
		goto out;
	/* Where each instruction goes, after what is inserted before it. */
	for (i = 0; i < b->len; i++) {
		start[i] = n;
		if (needs_check(&aux[i]))
			n++;
		if (aux[i].flags & UXDP_BPF_AUX_BACK)
			n++;
		pos[i] = n;
		gl = inline_lookup(b, &aux[i], gen);
		n += gl ? gl : 1;
		if (is_lddw(&b->insns[i])) {
			i++;
			start[i] = pos[i] = n++;
		}
	}
	start[b->len] = pos[b->len] = n;

	code->name = strdup(b->name ? b->name : "?");
	code->insns = calloc(n, sizeof(*code->insns));
	code->orig_idx = calloc(n, sizeof(*code->orig_idx));
	code->regions = calloc(f->nregions ? f->nregions : 1,
			       sizeof(*code->regions));
	if (!code->name || !code->insns || !code->orig_idx || !code->regions)
		goto out;
	code->len = n;
	code->nregions = f->nregions;
	code->stack_size = f->stack_size;
	code->ctx_kind = b->ctx_kind;
	code->budget = b->budget ? b->budget : UXDP_BPF_DEFAULT_BUDGET;
	for (m = 0; m < b->nmaps; m++) {
		const struct uxdp_bpf_build_map *bm = &b->maps[m];
		uint16_t r = f->map_region[m];

		if (r == UXDP_BPF_NO_REGION)
			continue;
		code->regions[r] = (struct uxdp_bpf_region){
			.base = bm->values, .size = bm->values_size,
			.rdonly = bm->rdonly,
		};
	}

	for (i = 0; i < b->len; i++) {
		const struct bpf_insn *in = &b->insns[i];
		uint32_t k = start[i];

		/* The budget first: a back edge's source may be an access
		 * (a loop the walk closes on its fall-through), and a check
		 * guards the instruction right after it. */
		if (aux[i].flags & UXDP_BPF_AUX_BACK)
			code->insns[k++] = (struct bpf_insn){
				.code = UXDP_BPF_OP_BUDGET,
			};
		if (needs_check(&aux[i]))
			code->insns[k++] = check_insn(in, &aux[i]);
		for (k = start[i]; k <= pos[i]; k++)
			code->orig_idx[k] = i;
		gl = inline_lookup(b, &aux[i], gen);
		if (gl) {
			/* (Its jumps stay inside it or land on the next.) */
			memcpy(&code->insns[pos[i]], gen, gl * sizeof(*gen));
			for (k = pos[i]; k < pos[i] + gl; k++)
				code->orig_idx[k] = i;
			continue;
		}
		ret = rewrite(b, &aux[i], i, &code->insns[pos[i]], code, &hcap);
		if (ret)
			goto out;
		if (is_lddw(in)) {
			i++;
			code->orig_idx[pos[i]] = i;
		}
	}
	ret = retarget(b, start, pos, code);
out:
	free(start);
	free(pos);
	if (ret) {
		uxdp_bpf_code_free(code);
		return ret == -ENOMEM ? uxdp_fail(ENOMEM, "prog %s: out of "
						  "memory", b->name ? b->name :
						  "?") : ret;
	}
	b->code = code;
	return 0;
}
