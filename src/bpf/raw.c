/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A code straight from instructions, without the safety pass or the
 * fixups: how the conformance suite and the ISA's own tests reach the
 * engines. Memory is not protected here (the suite's programs touch only
 * their memory and stack); what is checked is what an engine needs to stay
 * inside the instruction stream: valid instructions, jumps and calls that
 * land on one, no way to run off the end, helper calls to the one helper
 * there is.
 */
#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "bpf_internal.h"

/* The suite's helper 5: r0 = r1; in uBPF's "unwind" convention a zero
 * return ends the program with r0 = 0 (UXDP_BPF_HELPER_UNWIND). */
static uint64_t raw_unwind(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			   uint64_t r5)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	return r1;
}

static const struct uxdp_bpf_helper raw_helper = {
	.id = UXDP_BPF_RAW_HELPER,
	.name = "unwind",
	.fn = raw_unwind,
	.args = { UXDP_BPF_ARG_ANY },
	.ret = UXDP_BPF_RET_INT,
	.flags = UXDP_BPF_HELPER_UNWIND,
};

#define RAW_NHELPERS	(UXDP_BPF_RAW_HELPER + 1)

static int raw_fail(const char *name, const struct bpf_insn *insns,
		    uint32_t len, uint32_t i, const char *why)
{
	char dis[96];

	uxdp_bpf_insn_str_at(insns, len, i, dis, sizeof(dis));
	return uxdp_fail(EINVAL, "prog %s: insn %u (%s): %s", name, i, dis,
			 why);
}

/* Whether @in at @i may go elsewhere than the next one, and where. */
static bool raw_target(const struct bpf_insn *in, uint32_t i, int64_t *t)
{
	uint8_t cls = in->code & 0x07;

	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	if (in->code == (BPF_JMP | BPF_CALL)) {
		*t = (int64_t)i + 1 + in->imm;
		return in->src_reg == BPF_PSEUDO_CALL;
	}
	/* ja32 jumps by imm, the rest by off. */
	*t = (int64_t)i + 1 + (in->code == (BPF_JMP32 | BPF_JA) ? in->imm :
			       in->off);
	return uxdp_bpf_ops[in->code].flags & UXDP_BPF_F_JUMP;
}

static int raw_shape(const char *name, const struct bpf_insn *insns,
		     uint32_t len, uint32_t flags, uint8_t *second)
{
	uint32_t rules = flags & UXDP_BPF_RAW_F_INTERNAL ?
			 UXDP_BPF_VALID_INTERNAL : 0;
	const struct bpf_insn *last;
	const char *why;
	uint32_t i;

	for (i = 0; i < len; i++) {
		const struct bpf_insn *in = &insns[i];

		if (uxdp_bpf_insn_valid_ex(in, len - i, rules, &why))
			return raw_fail(name, insns, len, i, why);
		if (uxdp_bpf_ops[in->code].flags & UXDP_BPF_F_WIDE) {
			if (in->src_reg)
				return raw_fail(name, insns, len, i, "a map "
						"reference needs the loader");
			second[++i] = 1;
		}
	}
	for (i = 0; i < len; i++) {
		const struct bpf_insn *in = &insns[i];
		int64_t t = 0;
		bool jumps = raw_target(in, i, &t);

		if (second[i])
			continue;
		if (in->code == (BPF_JMP | BPF_CALL) &&
		    in->src_reg == BPF_PSEUDO_KFUNC_CALL)
			return raw_fail(name, insns, len, i, "a kfunc call needs "
					"the loader");
		if (in->code == (BPF_JMP | BPF_CALL) && !in->src_reg &&
		    in->imm != UXDP_BPF_RAW_HELPER)
			return raw_fail(name, insns, len, i, "no such helper (a "
					"raw program has helper 5 only)");
		if (jumps && (t < 0 || t >= len))
			return raw_fail(name, insns, len, i, "jump out of the "
					"program");
		if (jumps && second[t])
			return raw_fail(name, insns, len, i, "jump into the middle "
					"of a lddw");
	}
	/* Every other instruction goes on to the next one. */
	last = &insns[len - 1];
	if (second[len - 1] || (last->code != (BPF_JMP | BPF_EXIT) &&
				last->code != (BPF_JMP | BPF_JA) &&
				last->code != (BPF_JMP32 | BPF_JA)))
		return raw_fail(name, insns, len, len - 1 - second[len - 1],
				"runs off the end of the program");
	return 0;
}

int uxdp_bpf_raw_code(const char *name, const struct bpf_insn *insns,
		      uint32_t len, uint32_t flags,
		      struct uxdp_bpf_code **out)
{
	struct uxdp_bpf_code *code;
	size_t nlen, size;
	uint8_t *second;
	uint32_t i;
	char *p;
	int err;

	name = name ?: "raw";
	if (!len)
		return uxdp_fail(EINVAL, "prog %s: no instructions", name);
	if (len > UXDP_BPF_MAX_INSNS)
		return uxdp_fail(E2BIG, "prog %s: %u instructions (at most %u)",
				 name, len, UXDP_BPF_MAX_INSNS);
	second = calloc(len, 1);
	if (!second)
		return uxdp_fail(ENOMEM, "prog %s: out of memory", name);
	err = raw_shape(name, insns, len, flags, second);
	free(second);
	if (err)
		return err;

	/* One block, widest alignment first: the code, its instructions,
	 * the helper table, orig_idx, the name. */
	nlen = strlen(name) + 1;
	size = sizeof(*code) + (size_t)len * sizeof(*insns) +
	       RAW_NHELPERS * sizeof(*code->helpers) +
	       (size_t)len * sizeof(uint32_t) + nlen;
	code = calloc(1, size);
	if (!code)
		return uxdp_fail(ENOMEM, "prog %s: out of memory", name);
	p = (char *)(code + 1);
	code->insns = (struct bpf_insn *)p;
	memcpy(code->insns, insns, (size_t)len * sizeof(*insns));
	p += (size_t)len * sizeof(*insns);
	code->helpers = (const struct uxdp_bpf_helper **)p;
	code->helpers[UXDP_BPF_RAW_HELPER] = &raw_helper;
	code->nhelpers = RAW_NHELPERS;
	p += RAW_NHELPERS * sizeof(*code->helpers);
	code->orig_idx = (uint32_t *)p;
	for (i = 0; i < len; i++)
		code->orig_idx[i] = i;
	p += (size_t)len * sizeof(uint32_t);
	memcpy(p, name, nlen);
	code->name = p;
	code->len = len;
	code->stack_size = UXDP_BPF_STACK;
	code->ctx_kind = UXDP_BPF_CTX_RAW;
	code->budget = UXDP_BPF_RAW_BUDGET;
	*out = code;
	return 0;
}

void uxdp_bpf_raw_free(struct uxdp_bpf_code *code)
{
	free(code);
}
