/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The differential tests' knowledge of version-dependent kernel rules
 * (t_kernel_rules.c), without a kernel: probe answers go in by hand, and
 * kernels of other eras are simulated from their xdp_umem_reg() and
 * copy-mode TX as they were. On such a simulated kernel every difference
 * from uxdp must be explained by exactly the rules probed older, and on a
 * kernel probed current (or not probed) none may be; the same source then
 * passes on an old-rule kernel and a new-rule one, and still fails on a
 * difference nobody explained.
 */
#include "t_helpers.h"

#include <errno.h>
#include <string.h>

#include <uxdp/uxdp.h>

#include "../src/bpf/bpf_internal.h"
#include "t_kernel_rules.h"

#define BIT(r)		(1U << (r))
#define AREA		0x7f0000000000ULL	/* a number: never touched */
#define UNAL		(1U << 0)
#define META		(1U << 2)

/* Kernels by era: which UMEM rules are in their older form. */
enum era {
	ERA_6_8,	/* tx_metadata_len without a flag */
	ERA_6_12,	/* the flag; 0 and 8 taken; the old headroom rule */
	ERA_6_18_0,	/* the new headroom rule (a315e022a72d), 0 and 8 */
	ERA_NOW,	/* 1bb30b181d9f too */
	ERA_COUNT
};

static void era_rules(struct t_krules *k, enum era e)
{
	t_krules_init(k);
	k->quiet = true;
	t_krules_set(k, T_KR_UMEM_META_FLAG,
		     e == ERA_6_8 ? T_KR_OLDER : T_KR_CURRENT);
	t_krules_set(k, T_KR_UMEM_META_NOFLAG,
		     e == ERA_6_8 ? T_KR_OLDER : T_KR_CURRENT);
	/* a kernel without the flag cannot say (t_krules_probe_umem) */
	t_krules_set(k, T_KR_UMEM_META_MIN,
		     e == ERA_6_8 ? T_KR_UNPROBED :
		     e == ERA_NOW ? T_KR_CURRENT : T_KR_OLDER);
	t_krules_set(k, T_KR_UMEM_HEADROOM,
		     e <= ERA_6_12 ? T_KR_OLDER : T_KR_CURRENT);
}

/*
 * That era's XDP_UMEM_REG for a configuration whose address, length and
 * chunk size are valid: the flags, headroom and metadata checks only,
 * written from the kernel source of the time.
 */
static bool era_kernel_ok(enum era e, const struct t_umem_reg *c)
{
	uint32_t known = UNAL | (e == ERA_6_8 ? 0 : META);

	if (c->flags & ~known)
		return false;
	if (e <= ERA_6_12 ? c->headroom >= c->chunk_size - 256 :
			    c->headroom > c->chunk_size - 256 - 320 - 128)
		return false;
	if (e == ERA_6_8 || (c->flags & META)) {
		if (c->tx_metadata_len >= 256 || c->tx_metadata_len % 8)
			return false;
		if (e == ERA_NOW && c->tx_metadata_len < 16)
			return false;
	}
	return true;
}

/*
 * Every combination of flags, headroom and tx_metadata_len around the
 * edges, on each simulated era: differences are explained by the era's
 * older rules (and by exactly the ones the configuration touches), never
 * with every rule current, and the newest era has none.
 */
static void test_umem_eras(void **state)
{
	static const uint32_t flagv[] = { 0, UNAL, META, META | UNAL };
	static const int hrv[] = { 0, 255, 1000, -705, -704, -703, -512,
				   -257, -256, -1 };
	static const uint32_t chunkv[] = { 2048, 4096, 3000 };
	struct t_krules now, k;
	unsigned int diffs[ERA_COUNT] = { 0 }, explained[ERA_COUNT][T_KR_COUNT];
	unsigned int e, f, h, ci, m;
	struct t_umem_reg c;
	bool kok, uok;

	(void)state;
	memset(explained, 0, sizeof(explained));
	era_rules(&now, ERA_NOW);
	for (e = 0; e < ERA_COUNT; e++) {
		era_rules(&k, e);
		for (ci = 0; ci < 3; ci++)
		for (f = 0; f < 4; f++)
		for (h = 0; h < 10; h++)
		for (c.tx_metadata_len = 0; c.tx_metadata_len <= 264;
		     c.tx_metadata_len++) {
			c.addr = AREA;
			c.chunk_size = chunkv[ci];
			c.len = 64ULL * c.chunk_size;
			c.flags = flagv[f] | (ci == 2 ? UNAL : 0);
			c.headroom = hrv[h] < 0 ? c.chunk_size + hrv[h] :
				     (uint32_t)hrv[h];
			kok = era_kernel_ok(e, &c);
			uok = t_krules_uxdp_umem_ok(&c);
			if (kok == uok) {
				assert_int_equal(t_krules_umem_explain(
						 &k, &c, kok, uok), 0);
				continue;
			}
			diffs[e]++;
			m = t_krules_umem_explain(&k, &c, kok, uok);
			if (!m)
				fail_msg("era %u: chunk %u flags %#x headroom "
					 "%u tx_metadata_len %u: kernel %d, "
					 "uxdp %d, not explained", e,
					 c.chunk_size, c.flags, c.headroom,
					 c.tx_metadata_len, kok, uok);
			/* only rules the era has in their older form */
			assert_int_equal(m & ~(BIT(T_KR_UMEM_META_FLAG) |
					       BIT(T_KR_UMEM_META_NOFLAG) |
					       BIT(T_KR_UMEM_META_MIN) |
					       BIT(T_KR_UMEM_HEADROOM)), 0);
			for (unsigned int r = 0; r < T_KR_COUNT; r++) {
				if (m & BIT(r))
					assert_true(t_krules_older(&k, r));
				explained[e][r] += !!(m & BIT(r));
			}
			/* a kernel probed current explains nothing */
			assert_int_equal(t_krules_umem_explain(&now, &c, kok,
							       uok), 0);
		}
	}
	print_message("differences explained: 6.8 %u, 6.12 %u, 6.18.0 %u, "
		      "now %u\n", diffs[ERA_6_8], diffs[ERA_6_12],
		      diffs[ERA_6_18_0], diffs[ERA_NOW]);
	assert_int_equal(diffs[ERA_NOW], 0);
	/* the issue's CI kernel (6.18 before 1bb30b181d9f): tx_metadata_len
	 * 0 and 8 with the flag are the only differences */
	assert_true(diffs[ERA_6_18_0] > 0);
	assert_int_equal(explained[ERA_6_18_0][T_KR_UMEM_HEADROOM], 0);
	assert_int_equal(explained[ERA_6_18_0][T_KR_UMEM_META_MIN],
			 diffs[ERA_6_18_0]);
	assert_true(explained[ERA_6_12][T_KR_UMEM_HEADROOM] > 0);
	assert_true(explained[ERA_6_12][T_KR_UMEM_META_MIN] > 0);
	assert_true(explained[ERA_6_8][T_KR_UMEM_META_FLAG] > 0);
	assert_true(explained[ERA_6_8][T_KR_UMEM_META_NOFLAG] > 0);
}

/* The issue's table, by hand: what is explained and what is not. */
static void test_umem_by_hand(void **state)
{
	struct t_krules k;
	static const uint32_t issue_hr[] = { 4000, 4080, 4081 };
	struct t_umem_reg c = { .addr = AREA, .len = 256 * 4096,
				.chunk_size = 4096, .flags = META };
	unsigned int i;

	(void)state;
	t_krules_init(&k);
	k.quiet = true;
	/* not probed: nothing explained */
	c.tx_metadata_len = 8;
	assert_false(t_krules_uxdp_umem_ok(&c));
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false), 0);
	t_krules_set(&k, T_KR_UMEM_META_MIN, T_KR_OLDER);
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false),
			 BIT(T_KR_UMEM_META_MIN));
	c.tx_metadata_len = 0;
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false),
			 BIT(T_KR_UMEM_META_MIN));
	/* 12 was never a valid length; 16 never refused: mismatches */
	c.tx_metadata_len = 12;
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false), 0);
	c.tx_metadata_len = 16;
	assert_int_equal(t_krules_umem_explain(&k, &c, false, true), 0);
	/* 8 with a headroom only the older headroom rule takes: both
	 * rules, and only with both older */
	c.tx_metadata_len = 8;
	c.headroom = 4096 - 512;
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false), 0);
	t_krules_set(&k, T_KR_UMEM_HEADROOM, T_KR_OLDER);
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false),
			 BIT(T_KR_UMEM_META_MIN) | BIT(T_KR_UMEM_HEADROOM));
	/* the issue's headrooms 4000, 4080, 4081 are past even the older
	 * rule (< 4096 - 256): every kernel refuses them */
	c.tx_metadata_len = 16;
	for (i = 0; i < 3; i++) {
		c.headroom = issue_hr[i];
		assert_int_equal(t_krules_umem_explain(&k, &c, true, false),
				 0);
	}
	/* a reason neither rule has: a chunk size that is not a power of 2 */
	c.headroom = 0;
	c.chunk_size = 3000;
	assert_int_equal(t_krules_umem_explain(&k, &c, true, false), 0);
	/* agreement is never "explained" */
	c.chunk_size = 4096;
	assert_int_equal(t_krules_umem_explain(&k, &c, false, false), 0);
}

struct tx_case {
	const char *what;
	unsigned int older;		/* rules probed older */
	uint32_t len, options;
	struct t_tx_verdict kv, uv;
	unsigned int want;		/* explain's mask */
};

#define V(i, c)		{ .invalid = (i), .completed = (c) }

static void test_tx_explain(void **state)
{
	static const struct tx_case cases[] = {
		{ "zero length sent by a pre-6.6 kernel", BIT(T_KR_TX_ZERO_LEN),
		  0, 0, V(0, 1), V(1, 1), BIT(T_KR_TX_ZERO_LEN) },
		{ "... but not on a kernel probed current", 0,
		  0, 0, V(0, 1), V(1, 1), 0 },
		{ "zero length rule older, length 60", BIT(T_KR_TX_ZERO_LEN),
		  60, 0, V(0, 1), V(1, 1), 0 },
		{ "invalid, not completed, by an older kernel",
		  BIT(T_KR_TX_INVALID_COMPLETES),
		  60, 0, V(1, 0), V(1, 1), BIT(T_KR_TX_INVALID_COMPLETES) },
		{ "... probed current", 0, 60, 0, V(1, 0), V(1, 1), 0 },
		{ "zero length on 6.6..: invalid, not completed",
		  BIT(T_KR_TX_INVALID_COMPLETES),
		  0, 0, V(1, 0), V(1, 1), BIT(T_KR_TX_INVALID_COMPLETES) },
		{ "zero length on a pre-6.6 kernel, both older",
		  BIT(T_KR_TX_ZERO_LEN) | BIT(T_KR_TX_INVALID_COMPLETES),
		  0, 0, V(0, 1), V(1, 1), BIT(T_KR_TX_ZERO_LEN) },
		{ "stuck on the kernel's ring: never explained",
		  ~0U, 60, 0, V(0, 0), V(1, 1), 0 },
		{ "kernel says valid, uxdp invalid, length 60",
		  ~0U, 60, 0, V(0, 1), V(1, 1), 0 },
		{ "TX_METADATA unknown before 6.8 (with metadata)",
		  BIT(T_KR_TX_META_OPTION), 60, 2, V(1, 1), V(0, 1),
		  BIT(T_KR_TX_META_OPTION) },
		{ "TX_METADATA unknown, not completed either",
		  BIT(T_KR_TX_META_OPTION) | BIT(T_KR_TX_INVALID_COMPLETES),
		  60, 2, V(1, 0), V(0, 1),
		  BIT(T_KR_TX_META_OPTION) | BIT(T_KR_TX_INVALID_COMPLETES) },
		{ "agreement", ~0U, 60, 0, V(1, 1), V(1, 1), 0 },
	};
	struct t_krules k;
	unsigned int i, r, got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tx_case *c = &cases[i];

		t_krules_init(&k);
		for (r = T_KR_TX_ZERO_LEN; r <= T_KR_TX_INVALID_COMPLETES; r++)
			t_krules_set(&k, r, c->older & BIT(r) ? T_KR_OLDER :
							        T_KR_CURRENT);
		got = t_krules_tx_explain(&k, c->len, c->options, c->kv,
					  c->uv);
		if (got != c->want)
			fail_msg("%s: mask %#x, want %#x", c->what, got,
				 c->want);
	}
}

/* Probe answers: what each kernel's verdict on the probe descriptors and
 * the statistics length says. */
static void test_probe_answers(void **state)
{
	const struct t_tx_probe *zl = NULL, *inv = NULL, *md = NULL;
	struct t_tx_verdict v;
	struct t_krules k;
	unsigned int i;

	(void)state;
	for (i = 0; i < t_krules_tx_nprobes; i++) {
		const struct t_tx_probe *p = &t_krules_tx_probes[i];

		if (p->rule == T_KR_TX_ZERO_LEN)
			zl = p;
		else if (p->rule == T_KR_TX_INVALID_COMPLETES)
			inv = p;
		else if (p->rule == T_KR_TX_META_OPTION)
			md = p;
	}
	assert_non_null(zl);
	assert_non_null(inv);
	assert_non_null(md);
	/* the metadata probe must be last: the kernel keeps it on the ring */
	assert_ptr_equal(md, &t_krules_tx_probes[t_krules_tx_nprobes - 1]);
	assert_int_equal(zl->len, 0);
	assert_true(inv->addr >= (uint64_t)T_KR_TX_PROBE_CHUNK *
				 T_KR_TX_PROBE_CHUNKS);

	t_krules_init(&k);
	/* 6.18.44 */
	t_krules_tx_probe_answer(&k, zl, (struct t_tx_verdict){ 1, 1, 0 });
	t_krules_tx_probe_answer(&k, inv, (struct t_tx_verdict){ 1, 1, 0 });
	t_krules_tx_probe_answer(&k, md,
				 (struct t_tx_verdict){ 0, 1, EINVAL });
	assert_int_equal(k.state[T_KR_TX_ZERO_LEN], T_KR_CURRENT);
	assert_int_equal(k.state[T_KR_TX_INVALID_COMPLETES], T_KR_CURRENT);
	assert_int_equal(k.state[T_KR_TX_META_OPTION], T_KR_CURRENT);
	/* 6.1: zero length sent, invalid ones only counted, no option */
	t_krules_tx_probe_answer(&k, zl, (struct t_tx_verdict){ 0, 1, 0 });
	t_krules_tx_probe_answer(&k, inv, (struct t_tx_verdict){ 1, 0, 0 });
	t_krules_tx_probe_answer(&k, md, (struct t_tx_verdict){ 1, 0, 0 });
	assert_int_equal(k.state[T_KR_TX_ZERO_LEN], T_KR_OLDER);
	assert_int_equal(k.state[T_KR_TX_INVALID_COMPLETES], T_KR_OLDER);
	assert_int_equal(k.state[T_KR_TX_META_OPTION], T_KR_OLDER);
	/* answers that say nothing: a probe past the end counted valid, a
	 * zero-length one stuck, TX_METADATA sent */
	v = (struct t_tx_verdict){ 0, 1, 0 };
	t_krules_tx_probe_answer(&k, inv, v);
	t_krules_tx_probe_answer(&k, md, v);
	t_krules_tx_probe_answer(&k, zl, (struct t_tx_verdict){ 0, 0, 0 });
	assert_int_equal(k.state[T_KR_TX_INVALID_COMPLETES], T_KR_UNPROBED);
	assert_int_equal(k.state[T_KR_TX_META_OPTION], T_KR_UNPROBED);
	assert_int_equal(k.state[T_KR_TX_ZERO_LEN], T_KR_UNPROBED);

	t_krules_stats_answer(&k, 48);
	assert_int_equal(k.state[T_KR_STATS_V2], T_KR_CURRENT);
	t_krules_stats_answer(&k, 24);
	assert_int_equal(k.state[T_KR_STATS_V2], T_KR_OLDER);
	t_krules_stats_answer(&k, 40);
	assert_int_equal(k.state[T_KR_STATS_V2], T_KR_UNPROBED);
}

static struct bpf_insn kr_insn(uint8_t code, uint8_t dst, uint8_t src,
			       int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst,
				  .src_reg = src, .off = off, .imm = imm };
}

/*
 * The instruction rules: each probe's current answer is uxdp's own (its
 * interpreter runs the probe), the answers map to states, the release
 * decides the rule that is not probed, and a program is covered by an
 * older rule only through an instruction of that rule.
 */
static void test_bpf_rules(void **state)
{
	const struct bpf_insn mod32 = kr_insn(BPF_ALU | BPF_MOD | BPF_X, 0, 1,
					      0, 0);
	const struct bpf_insn sdiv64 = kr_insn(BPF_ALU64 | BPF_DIV | BPF_K, 0,
					       0, 1, -1);
	const struct bpf_insn smod32 = kr_insn(BPF_ALU | BPF_MOD | BPF_X, 0, 1,
					       1, 0);
	const struct bpf_insn div32 = kr_insn(BPF_ALU | BPF_DIV | BPF_X, 0, 1,
					      0, 0);
	/* a lddw whose second half looks like a mod32 */
	const struct bpf_insn lddw[2] = {
		kr_insn(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1),
		kr_insn(BPF_ALU | BPF_MOD | BPF_X, 0, 0, 0, 0),
	};
	/* The trap is decided by the release: sdiv came in 6.6. */
	static const struct {
		const char *release;
		enum t_krule_state trap;
	} releases[] = {
		{ "6.1.0-30-amd64", T_KR_UNPROBED },
		{ "6.6.50", T_KR_OLDER },
		{ "6.11.11-arch1", T_KR_OLDER },
		{ "6.12.0", T_KR_CURRENT },
		{ "7.0.1", T_KR_CURRENT },
		{ "(uname: x)", T_KR_UNPROBED },
	};
	struct t_krules k;
	unsigned int i;

	(void)state;
	for (i = 0; i < t_krules_bpf_nprobes; i++) {
		const struct t_bpf_probe *p = &t_krules_bpf_probes[i];
		const struct bpf_insn prog[] = {
			kr_insn(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0,
				(int32_t)p->a),
			kr_insn(0, 0, 0, 0, (int32_t)(p->a >> 32)),
			kr_insn(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0,
				(int32_t)p->b),
			kr_insn(0, 0, 0, 0, (int32_t)(p->b >> 32)),
			kr_insn(p->code, 0, 1, p->off, 0),
			kr_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};
		struct uxdp_bpf_code *code;
		struct uxdp_bpf_run run = { 0 };
		uint8_t mem[1];

		assert_int_not_equal(p->current, p->older);
		assert_int_equal(uxdp_bpf_raw_code("probe", prog, 6, 0, &code),
				 0);
		run.code = code;
		run.mem = mem;
		assert_int_equal(uxdp_bpf_interp_run(&run, (uintptr_t)mem, 0),
				 p->current);
		uxdp_bpf_raw_free(code);

		t_krules_init(&k);
		t_krules_bpf_probe_answer(&k, p, true, p->current);
		assert_int_equal(k.state[p->rule], T_KR_CURRENT);
		t_krules_bpf_probe_answer(&k, p, true, p->older);
		assert_int_equal(k.state[p->rule], T_KR_OLDER);
		t_krules_bpf_probe_answer(&k, p, true, p->older ^ 1);
		assert_int_equal(k.state[p->rule], T_KR_UNPROBED);
		t_krules_bpf_probe_answer(&k, p, false, p->current);
		assert_int_equal(k.state[p->rule], T_KR_UNPROBED);
	}

	for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		t_krules_init(&k);
		snprintf(k.release, sizeof(k.release), "%s",
			 releases[i].release);
		t_krules_bpf_release_rules(&k);
		assert_int_equal(k.state[T_KR_BPF_SDIV_TRAP],
				 releases[i].trap);
	}

	/* Nothing older: nothing covers. */
	t_krules_init(&k);
	assert_int_equal(t_krules_bpf_covers(&k, &mod32, 1), 0);
	assert_int_equal(t_krules_bpf_covers(&k, &sdiv64, 1), 0);
	t_krules_set(&k, T_KR_BPF_MOD32_ZERO, T_KR_OLDER);
	t_krules_set(&k, T_KR_BPF_SDIV_TRAP, T_KR_OLDER);
	t_krules_set(&k, T_KR_BPF_INTERP_SDIV32, T_KR_OLDER);
	assert_int_equal(t_krules_bpf_covers(&k, &mod32, 1),
			 BIT(T_KR_BPF_MOD32_ZERO));
	assert_int_equal(t_krules_bpf_covers(&k, &sdiv64, 1),
			 BIT(T_KR_BPF_SDIV_TRAP));
	assert_int_equal(t_krules_bpf_covers(&k, &smod32, 1),
			 BIT(T_KR_BPF_MOD32_ZERO) | BIT(T_KR_BPF_SDIV_TRAP) |
			 BIT(T_KR_BPF_INTERP_SDIV32));
	assert_int_equal(t_krules_bpf_covers(&k, &div32, 1), 0);
	assert_int_equal(t_krules_bpf_covers(&k, lddw, 2), 0);
}

/* Notes count per rule; the lines say the release and the commit. */
static void test_notes(void **state)
{
	struct t_krules k;

	(void)state;
	t_krules_init(&k);
	assert_true(k.release[0]);
	k.quiet = true;
	t_krules_note(&k, BIT(T_KR_UMEM_META_MIN) | BIT(T_KR_UMEM_HEADROOM),
		      "x");
	t_krules_note(&k, BIT(T_KR_UMEM_META_MIN), "y");
	assert_int_equal(k.explained[T_KR_UMEM_META_MIN], 2);
	assert_int_equal(k.explained[T_KR_UMEM_HEADROOM], 1);
	assert_int_equal(k.explained[T_KR_TX_ZERO_LEN], 0);
	assert_non_null(strstr(t_krule_info[T_KR_UMEM_META_MIN].commit,
			       "1bb30b181d9f"));
	for (unsigned int r = 0; r < T_KR_COUNT; r++) {
		assert_non_null(t_krule_info[r].name);
		assert_non_null(t_krule_info[r].commit);
		assert_non_null(t_krule_info[r].current);
		assert_non_null(t_krule_info[r].older);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_umem_eras),
		cmocka_unit_test(test_umem_by_hand),
		cmocka_unit_test(test_tx_explain),
		cmocka_unit_test(test_probe_answers),
		cmocka_unit_test(test_bpf_rules),
		cmocka_unit_test(test_notes),
	};

	uxdp_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
