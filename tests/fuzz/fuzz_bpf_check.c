/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_bpf_check: instruction streams through the safety pass and the
 * fixups (uxdp_bpf_prepare, src/bpf/check.c and fixup.c).
 *
 * Input:
 *	byte 0	flags: bit 0 a raw context (else XDP), bit 1 cpu v4 allowed,
 *		bit 2 generated instructions (else raw), bit 3 no helpers,
 *		bit 4 a prologue setting every register (r2 data, r3 its end,
 *		r4 the stack, r8 a global, r6 the context) and an epilogue
 *		(r0 = 0, exit) around the instructions; bit 5 (XDP, with
 *		bit 4) then "if r2 + K > r3 goto the epilogue", K the packet's
 *		length plus byte 2's high six bits (signed): accesses near the
 *		proven range's end, on packets that end there
 *	byte 1	the packet's (or raw memory's) length
 *	byte 2	metadata before the packet: 8 bytes times its low 2 bits
 *	byte 3	a seed for the packet's bytes
 *	then	instructions, 8 bytes each, at most 4096:
 *		raw: a struct bpf_insn as it is (code, regs, off, imm);
 *		generated: byte 0 picks one of the table's opcodes, byte 1
 *		the registers (dst low nibble, src high, each mod 11), byte 2
 *		the offset (signed; jumps take it mod 16, maps mod 24), bytes
 *		3..6 the immediate, byte 7 how: bit 0 a small immediate (byte
 *		3 signed), bits 1..2 for calls a helper / a local call / a
 *		tail call / an id as it is, for lddw src 0 / 5 / 6
 *
 * Four maps (an array of four 16-byte values, a read-only array of one,
 * a writable array of one: global data, an empty prog array) and helpers
 * that do what they say (lookup, update, ktime, adjust_head, adjust_meta,
 * adjust_tail, load_bytes, trace_printk reading its string) are offered.
 *
 * What is checked: prepare returns 0 with a code, or -EINVAL / -E2BIG with
 * no code and a message naming the program; an accepted code has
 * accesses = proven + checked, a check before exactly the checked
 * accesses, no cycle without a budget step (t_bpf_cycles.h), every instruction
 * valid (internal ones allowed), indexes before fixups in order, and
 * every jump and call landing on the first instruction made for its
 * target. Then the interpreter runs it (a budget of 4096 back edges) on
 * the packet, in a buffer that ends where the packet ends and is poisoned
 * for AddressSanitizer before the metadata (re-poisoned by the helpers
 * that move them), or on raw memory of exactly its length: an access the
 * pass proved in bounds and was not is a report; one it left to a check
 * ends the run with a fault, which must name a check.
 */
#include "fuzz.h"

#include <errno.h>
#include <sanitizer/asan_interface.h>

#include <uxdp/common.h>
#include <uxdp/xdp.h>

#include "../../src/bpf/bpf_internal.h"
#include "../t_bpf_cycles.h"

#define MAX_INSNS	4096

static uint8_t arr_values[4 * 16], ro_values[8], bss_values[64];
static uint8_t map_objs[3];
static const struct uxdp_bpf_code *no_progs[2];
static struct uxdp_bpf_prog_array progs = { 2, no_progs };

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
	{ .name = "progs", .type = BPF_MAP_TYPE_PROG_ARRAY, .key_size = 4,
	  .value_size = 4, .max_entries = 2, .map = &progs },
};
#define NMAPS	(sizeof(maps) / sizeof(maps[0]))

/* The packet buffer of the run, for the helpers that move the packet. */
static uint8_t *pkt_buf;
static size_t pkt_size;

/* Poison all of the buffer but [data_meta, data_end). */
static void poison_pkt(const struct uxdp_buff *x)
{
	uint8_t *lo = x->data_meta < x->data ? x->data_meta : x->data;

	ASAN_UNPOISON_MEMORY_REGION(pkt_buf, pkt_size);
	ASAN_POISON_MEMORY_REGION(pkt_buf, (size_t)(lo - pkt_buf));
	ASAN_POISON_MEMORY_REGION(x->data_end, (size_t)(pkt_buf + pkt_size -
					       (uint8_t *)x->data_end));
}

static uint64_t fn_zero(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			uint64_t e)
{
	(void)a, (void)b, (void)c, (void)d, (void)e;
	return 0;
}

static const struct uxdp_bpf_build_map *map_of(uint64_t p)
{
	size_t m;

	for (m = 0; m < NMAPS; m++)
		if ((uintptr_t)maps[m].map == p)
			return &maps[m];
	return NULL;
}

static uint8_t *elem(uint64_t map, uint64_t key)
{
	const struct uxdp_bpf_build_map *m = map_of(map);
	uint32_t idx;

	FZ_CHECK(m, "a helper got 0x%llx for a map", (unsigned long long)map);
	memcpy(&idx, (const void *)(uintptr_t)key, sizeof(idx));
	if (!m->values || idx >= m->max_entries)
		return NULL;
	return m->values + (size_t)idx * m->value_size;
}

static uint64_t fn_lookup(uint64_t map, uint64_t key, uint64_t c, uint64_t d,
			  uint64_t e)
{
	(void)c, (void)d, (void)e;
	return (uintptr_t)elem(map, key);
}

/* Reads the key and the whole value, as the kernel's would. */
static uint64_t fn_update(uint64_t map, uint64_t key, uint64_t value,
			  uint64_t flags, uint64_t e)
{
	uint8_t *v = elem(map, key);

	(void)flags, (void)e;
	if (!v || map_of(map)->rdonly)
		return (uint64_t)-EINVAL;
	memmove(v, (const void *)(uintptr_t)value, map_of(map)->value_size);
	return 0;
}

static uint64_t fn_adjust(uint64_t ctx, uint64_t delta, int which)
{
	struct uxdp_buff *x = (struct uxdp_buff *)(uintptr_t)ctx;
	int ret;

	ASAN_UNPOISON_MEMORY_REGION(pkt_buf, pkt_size);
	ret = which == 0 ? uxdp_adjust_head(x, (int)delta) :
	      which == 1 ? uxdp_adjust_meta(x, (int)delta) :
			   uxdp_adjust_tail(x, (int)delta);
	poison_pkt(x);
	return (uint64_t)(int64_t)ret;
}

static uint64_t fn_adjust_head(uint64_t a, uint64_t b, uint64_t c,
			       uint64_t d, uint64_t e)
{
	(void)c, (void)d, (void)e;
	return fn_adjust(a, b, 0);
}

static uint64_t fn_adjust_meta(uint64_t a, uint64_t b, uint64_t c,
			       uint64_t d, uint64_t e)
{
	(void)c, (void)d, (void)e;
	return fn_adjust(a, b, 1);
}

static uint64_t fn_adjust_tail(uint64_t a, uint64_t b, uint64_t c,
			       uint64_t d, uint64_t e)
{
	(void)c, (void)d, (void)e;
	return fn_adjust(a, b, 2);
}

/* Writes all @len bytes it was given, data or zeros. */
static uint64_t fn_load_bytes(uint64_t ctx, uint64_t off, uint64_t to,
			      uint64_t len, uint64_t e)
{
	struct uxdp_buff *x = (struct uxdp_buff *)(uintptr_t)ctx;

	(void)e;
	memset((void *)(uintptr_t)to, 0, len);
	if (off > uxdp_buff_len(x) || len > uxdp_buff_len(x) - off)
		return (uint64_t)-EFAULT;
	memcpy((void *)(uintptr_t)to, (uint8_t *)x->data + off, len);
	return 0;
}

/* Reads all @len bytes of its string. */
static uint64_t fn_printk(uint64_t s, uint64_t len, uint64_t c, uint64_t d,
			  uint64_t e)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)s;
	uint64_t sum = 0, i;

	(void)c, (void)d, (void)e;
	for (i = 0; i < len; i++)
		sum += p[i];
	return sum;
}

static const struct uxdp_bpf_helper helpers[] = {
	{ .id = BPF_FUNC_map_lookup_elem, .name = "map_lookup_elem",
	  .fn = fn_lookup, .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY },
	  .ret = UXDP_BPF_RET_VALUE_OR_NULL },
	{ .id = BPF_FUNC_map_update_elem, .name = "map_update_elem",
	  .fn = fn_update,
	  .args = { UXDP_BPF_ARG_MAP, UXDP_BPF_ARG_KEY, UXDP_BPF_ARG_VALUE,
		    UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_ktime_get_ns, .name = "ktime_get_ns", .fn = fn_zero },
	{ .id = BPF_FUNC_xdp_adjust_head, .name = "xdp_adjust_head",
	  .fn = fn_adjust_head,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_xdp_adjust_meta, .name = "xdp_adjust_meta",
	  .fn = fn_adjust_meta,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_xdp_adjust_tail, .name = "xdp_adjust_tail",
	  .fn = fn_adjust_tail,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY } },
	{ .id = BPF_FUNC_xdp_load_bytes, .name = "xdp_load_bytes",
	  .fn = fn_load_bytes,
	  .args = { UXDP_BPF_ARG_CTX, UXDP_BPF_ARG_ANY, UXDP_BPF_ARG_MEM_WR,
		    UXDP_BPF_ARG_SIZE } },
	{ .id = BPF_FUNC_trace_printk, .name = "trace_printk",
	  .fn = fn_printk, .args = { UXDP_BPF_ARG_MEM, UXDP_BPF_ARG_SIZE } },
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

/* FUZZ_BPF_CHECK_STATS=1: how many were accepted, run, faulted, at exit. */
static uint64_t n_in, n_ok, n_mem, n_budget, n_checked, n_proven;

static void print_stats(void)
{
	fprintf(stderr, "fuzz_bpf_check: %llu inputs, %llu accepted (%llu "
		"accesses proven, %llu checked), runs faulted: %llu memory, "
		"%llu budget\n", (unsigned long long)n_in,
		(unsigned long long)n_ok, (unsigned long long)n_proven,
		(unsigned long long)n_checked, (unsigned long long)n_mem,
		(unsigned long long)n_budget);
}

/* The opcodes a program may have: the table's rows, internal ones out. */
static uint8_t rows[256];
static uint32_t nrows;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint32_t c;

	(void)argc, (void)argv;
	if (getenv("FUZZ_BPF_CHECK_STATS"))
		atexit(print_stats);
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
			case 2:
				in.imm = BPF_FUNC_tail_call;
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
		if (code & BPF_X)
			in.imm = 0;
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

/* Every register set, so that generated code reads no uninitialised one. */
static uint32_t prologue(struct bpf_insn *p, bool raw)
{
#define I(c, d, s, o, i)	(struct bpf_insn){ .code = (c), .dst_reg = (d), \
					   .src_reg = (s), .off = (o), .imm = (i) }
	uint32_t n = 0;

	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	if (raw) {
		p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 1, 0, 0);
		p[n++] = I(BPF_ALU64 | BPF_ADD | BPF_X, 3, 2, 0, 0);
		p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 1, 0, 0);
	} else {
		p[n++] = I(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);
		p[n++] = I(BPF_LDX | BPF_MEM | BPF_W, 3, 1, 4, 0);
	}
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 4, 10, 0, 0);
	p[n++] = I(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, -64);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 0);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 1);
	p[n++] = I(BPF_LD | BPF_IMM | BPF_DW, 8, BPF_PSEUDO_MAP_IDX_VALUE, 0, 2);
	p[n++] = I(0, 0, 0, 0, 0);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 9, 0, 0, 14);
	p[n++] = I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0);
	return n;
#undef I
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
			/* Every atomic the pass could not prove aligned is
			 * checked for it; a check of kind 0 is of that alone. */
			FZ_CHECK(UXDP_BPF_CHECK_KIND(in->imm) ||
				 ((uint32_t)in->imm & UXDP_BPF_CHECK_ALIGN),
				 "check of kind 0 without ALIGN");
			FZ_CHECK(!((uint32_t)in->imm & UXDP_BPF_CHECK_ALIGN) ||
				 (c->insns[k + 1].code & 0xe0) == BPF_ATOMIC,
				 "ALIGN before 0x%02x", c->insns[k + 1].code);
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
			   in->code != UXDP_BPF_OP_TAIL_CALL &&
			   old->code == (BPF_JMP | BPF_CALL)) {
			/* A jump of an inline map lookup (fixup.c): inside
			 * its expansion, or to the next instruction's. */
			uint32_t o = c->orig_idx[k];

			t1 = (int64_t)k + 1 + in->off;
			FZ_CHECK(!old->src_reg && t1 > (int64_t)k &&
				 t1 <= (int64_t)first[o + 1],
				 "insn %u (a lookup of orig %u) lands on %lld",
				 k, o, (long long)t1);
			continue;
		} else if ((cls == BPF_JMP || cls == BPF_JMP32) &&
			   (in->code & 0xf0) != BPF_EXIT &&
			   in->code != UXDP_BPF_OP_TAIL_CALL) {
			bool j32 = in->code == (BPF_JMP32 | BPF_JA);

			t0 = (int64_t)c->orig_idx[k] + 1 +
			     (j32 ? old->imm : old->off);
			t1 = (int64_t)k + 1 + (j32 ? in->imm : in->off);
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
	/* Every loop spends the budget (a backward jump that closes no
	 * cycle need not). */
	{
		uint32_t from = 0, to = 0;
		int cyc = t_bpf_unbudgeted_cycle(c, &from, &to);

		FZ_CHECK(cyc == 0, "insn %u -> %u closes a cycle with no "
			 "budget step (%d)", from, to, cyc);
	}
	free(first);
}

#define HEADROOM	256	/* room for adjust_head and the frame */

/* The code on a packet (or raw memory) of @len bytes. */
static void run(struct uxdp_bpf_code *c, uint32_t len, uint32_t meta,
		uint64_t seed)
{
	static struct uxdp_rxq_info rxq = { .queue_index = 1, .ifindex = 2 };
	struct uxdp_bpf_run r = { .code = c };
	struct uxdp_buff x;
	uint32_t i;

	c->budget = 4096;
	pkt_size = HEADROOM + len;
	pkt_buf = fz_xmalloc(pkt_size);
	for (i = 0; i < pkt_size; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		pkt_buf[i] = (uint8_t)seed;
	}
	for (i = 0; i < sizeof(arr_values); i++)
		arr_values[i] = (uint8_t)(seed >> (i % 8));
	if (c->ctx_kind == UXDP_BPF_CTX_RAW) {
		uint8_t *mem = fz_xmalloc(len);

		memcpy(mem, pkt_buf, len);
		r.mem = mem;
		r.mem_len = len;
		uxdp_bpf_interp_run(&r, (uintptr_t)mem, len);
		free(mem);
	} else {
		x = (struct uxdp_buff){
			.data = pkt_buf + HEADROOM,
			.data_end = pkt_buf + HEADROOM + len,
			.data_meta = pkt_buf + HEADROOM - meta,
			.data_hard_start = pkt_buf, .rxq = &rxq,
			.frame_sz = HEADROOM + len,
		};
		poison_pkt(&x);
		r.ctx = &x;
		uxdp_bpf_interp_run(&r, (uintptr_t)&x, 0);
		ASAN_UNPOISON_MEMORY_REGION(pkt_buf, pkt_size);
	}
	FZ_CHECK(r.fault == UXDP_BPF_FAULT_NONE || r.fault == UXDP_BPF_FAULT_MEM ||
		 r.fault == UXDP_BPF_FAULT_BUDGET, "fault %u at %u", r.fault,
		 r.fault_pc);
	FZ_CHECK(r.fault != UXDP_BPF_FAULT_MEM ||
		 (r.fault_pc < c->len &&
		  c->insns[r.fault_pc].code == UXDP_BPF_OP_CHECK),
		 "a memory fault at %u, not a check", r.fault_pc);
	FZ_CHECK(r.fault != UXDP_BPF_FAULT_BUDGET ||
		 (r.fault_pc < c->len &&
		  c->insns[r.fault_pc].code == UXDP_BPF_OP_BUDGET),
		 "a budget fault at %u, not a budget", r.fault_pc);
	n_mem += r.fault == UXDP_BPF_FAULT_MEM;
	n_budget += r.fault == UXDP_BPF_FAULT_BUDGET;
	free(pkt_buf);
	pkt_buf = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t flags = fz_u8(&f), len = fz_u8(&f);
	uint8_t b2 = fz_u8(&f), meta = (uint8_t)((b2 & 3) * 8);
	uint32_t guard = UINT32_MAX;
	uint64_t seed = fz_u8(&f) | 0x100;
	struct bpf_insn *insns;
	struct uxdp_bpf_build b;
	uint32_t n = 0;
	int ret;

	insns = fz_xmalloc((MAX_INSNS + 32) * sizeof(*insns));
	if (flags & 16)
		n = prologue(insns, flags & 1);
	if ((flags & 48) == 48 && !(flags & 1)) {
		int32_t k = (int32_t)len + ((int8_t)b2 >> 2);

		insns[n++] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 5,
			.src_reg = 2 };
		insns[n++] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 5,
			.imm = k < 0 ? 0 : k };
		guard = n++;
	}
	while (fz_more(&f) && n < MAX_INSNS) {
		if (flags & 4) {
			n += gen_insn(&f, &insns[n], MAX_INSNS - n);
		} else {
			uint64_t w = fz_u64(&f);

			memcpy(&insns[n++], &w, sizeof(w));
		}
	}
	if (guard != UINT32_MAX)
		insns[guard] = (struct bpf_insn){
			.code = BPF_JMP | BPF_JGT | BPF_X, .dst_reg = 5,
			.src_reg = 3, .off = (int16_t)(n - guard - 1) };
	if (flags & 16) {
		insns[n++] = (struct bpf_insn){
			.code = BPF_ALU64 | BPF_MOV | BPF_K };
		insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
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
	n_in++;
	ret = uxdp_bpf_prepare(&b);
	if (ret) {
		FZ_CHECK(ret == -EINVAL || ret == -E2BIG, "prepare: %d (%s)",
			 ret, uxdp_errmsg());
		FZ_CHECK(!b.code, "a code with an error");
		FZ_CHECK(!strncmp(uxdp_errmsg(), "prog f: ", 8), "message: %s",
			 uxdp_errmsg());
		FZ_CHECK(!strstr(uxdp_errmsg(), "internal error"), "%s",
			 uxdp_errmsg());
		if (getenv("FUZZ_BPF_CHECK_WHY"))
			fprintf(stderr, "why: %s\n", uxdp_errmsg());
	} else {
		n_ok++;
		n_proven += b.stats.proven;
		n_checked += b.stats.checked;
		verify(&b);
		run(b.code, len, meta, seed);
		uxdp_bpf_code_free(b.code);
	}
	free(insns);
	return 0;
}
