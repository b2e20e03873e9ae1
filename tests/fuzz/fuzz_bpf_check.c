/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_bpf_check: instruction streams through the safety pass and the
 * fixups (uxdp_bpf_prepare, src/bpf/check.c and fixup.c).
 *
 * Input:
 *	byte 0	flags: bit 0 a raw context (else XDP), bit 1 cpu v4 allowed,
 *		bit 2 generated instructions (else raw), bit 3 no helpers
 *	then	instructions, 8 bytes each, at most 4096:
 *		raw: a struct bpf_insn as it is (code, regs, off, imm);
 *		generated: byte 0 picks one of the table's opcodes, byte 1
 *		the registers (dst low nibble, src high, each mod 11), byte 2
 *		the offset (signed; jumps take it mod 16, maps mod 24), bytes
 *		3..6 the immediate, byte 7 how: bit 0 a small immediate (byte
 *		3 signed), bits 1..2 for calls a helper / a local call / an id
 *		as it is, for lddw src 0 / 5 / 6
 *
 * Three maps (an array of four 16-byte values, a read-only array of one,
 * a writable array of one: global data) and four helpers (lookup, update,
 * ktime, adjust_head) are offered.
 *
 * What is checked: prepare returns 0 with a code, or -EINVAL / -E2BIG with
 * no code and a message naming the program; an accepted code has
 * accesses = proven + checked, a check before exactly the checked
 * accesses and a budget before each backward jump, every instruction
 * valid (internal ones allowed), indexes before fixups in order, and
 * every jump and call landing on the first instruction made for its
 * target.
 */
#include "fuzz.h"

#include <errno.h>

#include <uxdp/common.h>

#include "../../src/bpf/bpf_internal.h"

#define MAX_INSNS	4096

static uint8_t arr_values[4 * 16], ro_values[8], bss_values[64];
static uint8_t map_objs[3];

static const struct uxdp_bpf_build_map maps[] = {
	{ .name = "arr", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
	  .value_size = 16, .max_entries = 4, .map = &map_objs[0],
	  .values = arr_values, .values_size = sizeof(arr_values) },
	{ .name = ".rodata", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
	  .value_size = 8, .max_entries = 1, .map = &map_objs[1],
	  .values = ro_values, .values_size = sizeof(ro_values),
	  .rdonly = true },
	{ .name = ".bss", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
	  .value_size = 64, .max_entries = 1, .map = &map_objs[2],
	  .values = bss_values, .values_size = sizeof(bss_values) },
};
#define NMAPS	(sizeof(maps) / sizeof(maps[0]))

static uint64_t fn_zero(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			uint64_t e)
{
	(void)a, (void)b, (void)c, (void)d, (void)e;
	return 0;
}

static const struct uxdp_bpf_helper helpers[] = {
	{ .id = BPF_FUNC_map_lookup_elem, .name = "map_lookup_elem",
	  .fn = fn_zero, .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY },
	  .ret = UXDP_BPF_RET_VALUE_OR_NULL },
	{ .id = BPF_FUNC_map_update_elem, .name = "map_update_elem",
	  .fn = fn_zero,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY, UXDP_BPF_ARG_VALUE,
		    UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_ktime_get_ns, .name = "ktime_get_ns", .fn = fn_zero },
	{ .id = BPF_FUNC_xdp_adjust_head, .name = "xdp_adjust_head",
	  .fn = fn_zero, .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY } },
};
#define NHELPERS	(sizeof(helpers) / sizeof(helpers[0]))

static const struct uxdp_bpf_helper *helper(uint32_t id)
{
	size_t i;

	for (i = 0; i < NHELPERS; i++)
		if (helpers[i].id == id)
			return &helpers[i];
	return NULL;
}

/* The opcodes a program may have: the table's rows, internal ones out. */
static uint8_t rows[256];
static uint32_t nrows;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint32_t c;

	(void)argc, (void)argv;
	for (c = 0; c < 256; c++)
		if (uxdp_bpf_ops[c].mnemonic &&
		    uxdp_bpf_ops[c].group != UXDP_BPF_G_INTERNAL)
			rows[nrows++] = (uint8_t)c;
	return 0;
}

/* One instruction from 8 bytes, made likely to be valid. */
static uint32_t gen_insn(struct fz *f, struct bpf_insn *out, uint32_t left)
{
	uint8_t code = rows[fz_u8(f) % nrows], r = fz_u8(f);
	int8_t off = (int8_t)fz_u8(f);
	uint32_t imm = fz_u32(f);
	uint8_t how = fz_u8(f);
	uint8_t cls = code & 7, op = code & 0xf0;
	struct bpf_insn in = { .code = code, .dst_reg = (r & 15) % 11,
			       .src_reg = (r >> 4) % 11 };

	in.imm = (how & 1) ? (int8_t)imm : (int32_t)imm;
	if (!(uxdp_bpf_ops[code].flags & UXDP_BPF_F_SRC))
		in.src_reg = 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op == BPF_END)
			in.imm = 16 << (imm % 3);
		else if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
			in.imm &= cls == BPF_ALU ? 31 : 63;
		if (op == BPF_DIV || op == BPF_MOD)
			in.off = off & 1;
		if (op == BPF_MOV && (code & BPF_X))
			in.off = (off & 3) * 8 == 24 ? 32 : (off & 3) * 8;
		if (!(uxdp_bpf_ops[code].flags & UXDP_BPF_F_IMM) &&
		    op != BPF_END)
			in.imm = 0;
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (code == (BPF_JMP | BPF_CALL)) {
			switch ((how >> 1) & 3) {
			case 0:
				in.imm = (int32_t)helpers[imm % NHELPERS].id;
				break;
			case 1:
				in.src_reg = BPF_PSEUDO_CALL;
				in.imm = off % 16;
				break;
			default:
				break;
			}
			in.dst_reg = 0;
			break;
		}
		if (code == (BPF_JMP | BPF_EXIT)) {
			in = (struct bpf_insn){ .code = code };
			break;
		}
		if (code == (BPF_JMP32 | BPF_JA)) {
			in = (struct bpf_insn){ .code = code, .imm = off % 16 };
			break;
		}
		in.off = off % 16;
		if (code == (BPF_JMP | BPF_JA))
			in = (struct bpf_insn){ .code = code, .off = off % 16 };
		break;
	case BPF_LD:
		if (left < 2) {
			*out = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
			return 1;
		}
		in.src_reg = ((how >> 1) & 3) == 1 ? BPF_PSEUDO_MAP_IDX :
			     ((how >> 1) & 3) == 2 ? BPF_PSEUDO_MAP_IDX_VALUE : 0;
		if (in.src_reg)
			in.imm = (int32_t)(imm % NMAPS);
		out[0] = in;
		out[1] = (struct bpf_insn){ .imm = in.src_reg ==
					    BPF_PSEUDO_MAP_IDX_VALUE ?
					    (uint8_t)off % 24 : fz_u8(f) };
		return 2;
	default:
		/* Loads, stores, atomics: offsets near what is there. */
		in.off = off;
		if (cls == BPF_STX && (code & 0xe0) == BPF_ATOMIC) {
			static const int32_t ops[] = {
				BPF_ADD, BPF_OR, BPF_AND, BPF_XOR,
				BPF_ADD | BPF_FETCH, BPF_OR | BPF_FETCH,
				BPF_AND | BPF_FETCH, BPF_XOR | BPF_FETCH,
				BPF_XCHG, BPF_CMPXCHG,
			};

			in.imm = ops[imm % 10];
		} else if (cls != BPF_ST) {
			in.imm = 0;
		}
		break;
	}
	*out = in;
	return 1;
}

/* The first instruction made for each one of the program (first[len] is
 * the code's length). */
static void firsts(const struct uxdp_bpf_code *c, uint32_t len,
		   uint32_t *first)
{
	uint32_t k;

	for (k = 0; k <= len; k++)
		first[k] = UINT32_MAX;
	for (k = c->len; k--;)
		first[c->orig_idx[k]] = k;
	first[len] = c->len;
}

static void verify(const struct uxdp_bpf_build *b)
{
	const struct uxdp_bpf_code *c = b->code;
	const struct uxdp_bpf_check_stats *st = &b->stats;
	uint32_t *first, k, checks = 0, budgets = 0;

	FZ_CHECK(c && c->len >= b->len, "code %p", (const void *)c);
	FZ_CHECK(st->accesses == st->proven + st->checked,
		 "accesses %u proven %u checked %u", st->accesses, st->proven,
		 st->checked);
	FZ_CHECK(c->stack_size <= UXDP_BPF_STACK, "stack %u", c->stack_size);
	first = fz_xmalloc(((size_t)b->len + 1) * sizeof(*first));
	firsts(c, b->len, first);
	for (k = 0; k < c->len; k++) {
		const struct bpf_insn *in = &c->insns[k];
		const struct bpf_insn *old;
		const char *why = NULL;
		int64_t t0, t1;
		uint8_t cls = in->code & 7;

		FZ_CHECK(c->orig_idx[k] < b->len, "orig_idx[%u] %u", k,
			 c->orig_idx[k]);
		FZ_CHECK(!k || c->orig_idx[k] >= c->orig_idx[k - 1],
			 "orig_idx out of order at %u", k);
		old = &b->insns[c->orig_idx[k]];
		FZ_CHECK(!uxdp_bpf_insn_valid(in, c->len - k, true, &why),
			 "insn %u: %s", k, why);
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			FZ_CHECK(!in->src_reg, "lddw src %u left", in->src_reg);
			k++;
			continue;
		}
		if (in->code == UXDP_BPF_OP_CHECK) {
			uint8_t nc = c->insns[k + 1].code & 7;

			checks++;
			FZ_CHECK(nc == BPF_LDX || nc == BPF_ST || nc == BPF_STX,
				 "check before 0x%02x", c->insns[k + 1].code);
			continue;
		}
		if (in->code == UXDP_BPF_OP_BUDGET) {
			budgets++;
			continue;
		}
		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg) {
			FZ_CHECK(in->src_reg == BPF_PSEUDO_CALL, "call src %u",
				 in->src_reg);
			t0 = (int64_t)c->orig_idx[k] + 1 + old->imm;
			t1 = (int64_t)k + 1 + in->imm;
		} else if (in->code == (BPF_JMP | BPF_CALL)) {
			FZ_CHECK((uint32_t)in->imm < c->nhelpers,
				 "helper slot %d of %u", in->imm, c->nhelpers);
			continue;
		} else if ((cls == BPF_JMP || cls == BPF_JMP32) &&
			   (in->code & 0xf0) != BPF_EXIT &&
			   in->code != UXDP_BPF_OP_TAIL_CALL) {
			bool j32 = in->code == (BPF_JMP32 | BPF_JA);

			t0 = (int64_t)c->orig_idx[k] + 1 +
			     (j32 ? old->imm : old->off);
			t1 = (int64_t)k + 1 + (j32 ? in->imm : in->off);
			FZ_CHECK(t0 > c->orig_idx[k] ||
				 (k && c->insns[k - 1].code ==
				  UXDP_BPF_OP_BUDGET),
				 "back edge at %u without a budget", k);
		} else {
			continue;
		}
		FZ_CHECK(t0 >= 0 && t0 < b->len && t1 == first[t0],
			 "insn %u (orig %u) lands on %lld, not %u", k,
			 c->orig_idx[k], (long long)t1,
			 t0 >= 0 && t0 < b->len ? first[t0] : 0);
	}
	FZ_CHECK(checks == st->checked, "%u checks, %u checked", checks,
		 st->checked);
	FZ_CHECK(budgets == st->back_edges, "%u budgets, %u back edges",
		 budgets, st->back_edges);
	free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t flags = fz_u8(&f);
	struct bpf_insn *insns;
	struct uxdp_bpf_build b;
	uint32_t n = 0;
	int ret;

	insns = fz_xmalloc(MAX_INSNS * sizeof(*insns));
	while (fz_more(&f) && n < MAX_INSNS) {
		if (flags & 4) {
			n += gen_insn(&f, &insns[n], MAX_INSNS - n);
		} else {
			uint64_t w = fz_u64(&f);

			memcpy(&insns[n++], &w, sizeof(w));
		}
	}
	memset(&b, 0, sizeof(b));
	b.name = "f";
	b.insns = insns;
	b.len = n;
	b.ctx_kind = flags & 1 ? UXDP_BPF_CTX_RAW : UXDP_BPF_CTX_XDP;
	b.maps = maps;
	b.nmaps = NMAPS;
	b.helper = flags & 8 ? NULL : helper;
	b.flags = flags & 2 ? UXDP_BPF_BUILD_F_V4 : 0;
	ret = uxdp_bpf_prepare(&b);
	if (ret) {
		FZ_CHECK(ret == -EINVAL || ret == -E2BIG, "prepare: %d (%s)",
			 ret, uxdp_errmsg());
		FZ_CHECK(!b.code, "a code with an error");
		FZ_CHECK(!strncmp(uxdp_errmsg(), "prog f: ", 8), "message: %s",
			 uxdp_errmsg());
		FZ_CHECK(!strstr(uxdp_errmsg(), "internal error"), "%s",
			 uxdp_errmsg());
	} else {
		verify(&b);
		uxdp_bpf_code_free(b.code);
	}
	free(insns);
	return 0;
}
