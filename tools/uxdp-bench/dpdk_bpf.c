/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: DPDK's librte_bpf as a peer (dpdk_bpf.h).
 *
 * rte_bpf runs a program on one pointer argument whose memory its
 * validator knows the size of; loads through a pointer read from memory
 * are loads through a scalar, which it refuses. So the packet itself is
 * the argument, and the object's (-mcpu=v1) instructions are rewritten
 * before rte_bpf_load():
 *
 *	r = ctx->data		->  r = r1
 *	r = ctx->data_end	->  r = r1; r += len	(jumps fixed up)
 *
 * for the loads of the straight-line prologue, through r1 or its copies;
 * a program that reads the context anywhere else (a subprogram, after a
 * branch) or another field (data_meta, ingress_ifindex, ...) is not run
 * and the report says why. Array maps are memory of our own: an ld_imm64
 * of a map becomes its address, bpf_map_lookup_elem (helper 1) an
 * external function of index 1 (rte_bpf calls external functions by
 * their index), global data (.rodata, .data, .bss) external variables,
 * which its validator knows the size of. Other helpers, bpf-to-bpf calls
 * and whatever rte_bpf's validator refuses (back edges, JMP32) are said
 * with rte_bpf's own message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bpf_kernel.h"
#include "dpdk_bpf.h"

#if defined(UXDP_HAVE_DPDK) && defined(UXDP_HAVE_DPDK_BPF)
#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_log.h>

#define MAX_MAPS	8
#define PSEUDO_MAP_IDX	5
#define PSEUDO_MAP_VALUE_IDX	6
#define HELPER_LOOKUP	1
#define MAP_ARRAY	2	/* BPF_MAP_TYPE_ARRAY */
#define MAP_PERCPU_ARRAY	6

struct dmap {
	uint32_t type, value_size, max_entries;
	unsigned char *data;
};

struct dpdk_bpf {
	struct rte_bpf *bpf;
	struct rte_bpf_jit jit;
	unsigned char pkt[256];
	uint32_t len;
	struct dmap maps[MAX_MAPS];
	uint32_t nmaps;
	char why[256];
};

/* bpf_map_lookup_elem for arrays, called by the program (r1 map, r2 key). */
static uint64_t dmap_lookup(uint64_t m, uint64_t k, uint64_t a3, uint64_t a4,
			    uint64_t a5)
{
	const struct dmap *map = (const struct dmap *)(uintptr_t)m;
	uint32_t key = *(const uint32_t *)(uintptr_t)k;

	(void)a3, (void)a4, (void)a5;
	if (key >= map->max_entries)
		return 0;
	return (uint64_t)(uintptr_t)(map->data +
				     (size_t)key * map->value_size);
}

static bool is_jump(const struct ebpf_insn *in)
{
	uint8_t op = BPF_OP(in->code);

	return BPF_CLASS(in->code) == BPF_JMP && op != EBPF_CALL &&
	       op != EBPF_EXIT;
}

static bool is_ld_imm64(const struct ebpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | EBPF_DW);
}

/* The register an instruction writes, -1 if none. */
static int insn_dst(const struct ebpf_insn *in)
{
	switch (BPF_CLASS(in->code)) {
	case BPF_ALU:
	case EBPF_ALU64:
	case BPF_LDX:
	case BPF_LD:
		return in->dst_reg;
	case BPF_JMP:
		return BPF_OP(in->code) == EBPF_CALL ? 0 : -1;
	default:
		return -1;
	}
}

/* Whether @in reads register @r. */
static bool insn_reads(const struct ebpf_insn *in, unsigned int r)
{
	uint8_t cls = BPF_CLASS(in->code);

	if (in->src_reg == r && (cls == BPF_LDX || cls == BPF_STX ||
				 (cls != BPF_LD && BPF_SRC(in->code) == BPF_X)))
		return true;
	if (in->dst_reg != r)
		return false;
	if (cls == BPF_ST || cls == BPF_STX)
		return true;
	if (cls == BPF_JMP)
		return is_jump(in) && BPF_OP(in->code) != BPF_JA;
	if (cls == BPF_ALU || cls == EBPF_ALU64)
		return BPF_OP(in->code) != EBPF_MOV;
	return false;
}

/*
 * The rewrite (see the top of the file) of @n instructions into @out
 * (room for 2n), *@nout of them. 0, or 1 with b->why.
 */
static int rewrite(struct dpdk_bpf *b, const struct ebpf_insn *in,
		   uint32_t n, const struct kbpf_map *km, uint32_t nmaps,
		   struct rte_bpf_xsym *xs, uint32_t *nxs,
		   struct ebpf_insn *out, uint32_t *nout)
{
	uint32_t *map = calloc(n + 1, sizeof(*map));
	uint16_t ctx = 1U << 1;	/* registers holding the context */
	bool prologue = true;
	uint32_t i, o = 0;
	int ret = 1;

	if (!map)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct ebpf_insn *x = &in[i];
		int dst = insn_dst(x);

		map[i] = o;
		if (BPF_CLASS(x->code) == BPF_JMP && BPF_OP(x->code) == EBPF_CALL) {
			if (x->src_reg == EBPF_PSEUDO_CALL) {
				snprintf(b->why, sizeof(b->why), "insn %u: a "
					 "bpf-to-bpf call: rte_bpf has none", i);
				goto out;
			}
			if (x->imm != HELPER_LOOKUP) {
				snprintf(b->why, sizeof(b->why), "insn %u: "
					 "helper %d: only bpf_map_lookup_elem "
					 "is given to rte_bpf", i, x->imm);
				goto out;
			}
		}
		if (is_jump(x) || (BPF_CLASS(x->code) == BPF_JMP &&
				   BPF_OP(x->code) == EBPF_EXIT))
			prologue = false;
		if (BPF_CLASS(x->code) == BPF_LDX && (ctx >> x->src_reg & 1)) {
			if (!prologue || BPF_SIZE(x->code) != BPF_W ||
			    (x->off != 0 && x->off != 4)) {
				snprintf(b->why, sizeof(b->why), "insn %u: "
					 "reads xdp_md+%d%s: only data and "
					 "data_end before the first branch are "
					 "rewritten", i, x->off, prologue ?
					 "" : " after a branch");
				goto out;
			}
			out[o++] = (struct ebpf_insn){
				.code = EBPF_ALU64 | EBPF_MOV | BPF_X,
				.dst_reg = x->dst_reg, .src_reg = x->src_reg,
			};
			if (x->off == 4)
				out[o++] = (struct ebpf_insn){
					.code = EBPF_ALU64 | BPF_ADD | BPF_K,
					.dst_reg = x->dst_reg,
					.imm = (int32_t)b->len,
				};
			ctx &= (uint16_t)~(1U << x->dst_reg);
			continue;
		}
		{
			unsigned int r;

			for (r = 0; r < 11; r++)
				if ((ctx >> r & 1) && insn_reads(x, r) &&
				    !(x->code == (EBPF_ALU64 | EBPF_MOV | BPF_X) &&
				      prologue)) {
					snprintf(b->why, sizeof(b->why), "insn "
						 "%u: uses the context other "
						 "than to load data or data_end",
						 i);
					goto out;
				}
		}
		if (x->code == (EBPF_ALU64 | EBPF_MOV | BPF_X) &&
		    (ctx >> x->src_reg & 1))
			ctx |= (uint16_t)(1U << x->dst_reg);
		else if (dst >= 0 && dst < 16)
			ctx &= (uint16_t)~(1U << dst);
		/* A call leaves r1..r5 undefined. */
		if (BPF_CLASS(x->code) == BPF_JMP && BPF_OP(x->code) == EBPF_CALL)
			ctx &= (uint16_t)~0x3eU;
		if (is_ld_imm64(x) && i + 1 < n &&
		    (x->src_reg == PSEUDO_MAP_IDX ||
		     x->src_reg == PSEUDO_MAP_VALUE_IDX)) {
			uint32_t mi = (uint32_t)x->imm;
			uint64_t addr;

			if (mi >= nmaps || mi >= MAX_MAPS) {
				snprintf(b->why, sizeof(b->why), "insn %u: map "
					 "index %u", i, mi);
				goto out;
			}
			if (km[mi].type != MAP_ARRAY &&
			    km[mi].type != MAP_PERCPU_ARRAY) {
				snprintf(b->why, sizeof(b->why), "map %s: type "
					 "%u: only arrays", km[mi].name,
					 km[mi].type);
				goto out;
			}
			if (x->src_reg == PSEUDO_MAP_IDX) {
				addr = (uint64_t)(uintptr_t)&b->maps[mi];
			} else {
				/* Global data: an external variable, so the
				 * validator knows its size. */
				addr = (uint64_t)(uintptr_t)b->maps[mi].data +
				       (uint32_t)in[i + 1].imm;
				xs[*nxs] = (struct rte_bpf_xsym){
					.name = km[mi].name,
					.type = RTE_BPF_XTYPE_VAR,
					.var = {
						.val = (void *)(uintptr_t)addr,
						.desc = {
							.type = RTE_BPF_ARG_PTR,
							.size = km[mi].value_size -
								(uint32_t)in[i + 1].imm,
						},
					},
				};
				(*nxs)++;
			}
			out[o] = *x;
			out[o].src_reg = 0;
			out[o].imm = (int32_t)(uint32_t)addr;
			out[o + 1] = in[i + 1];
			out[o + 1].imm = (int32_t)(uint32_t)(addr >> 32);
			map[i + 1] = o + 1;
			o += 2;
			i++;
			continue;
		}
		out[o++] = *x;
		if (is_ld_imm64(x) && i + 1 < n) {
			map[i + 1] = o;
			out[o++] = in[++i];
		}
	}
	map[n] = o;
	/* Jumps: their targets moved with the insertions. */
	for (i = 0; i < n; i++) {
		const struct ebpf_insn *x = &in[i];
		int64_t t = (int64_t)i + 1 + x->off;

		if (!is_jump(x))
			continue;
		if (t < 0 || t > n) {
			snprintf(b->why, sizeof(b->why), "insn %u: jump out of "
				 "the program", i);
			goto out;
		}
		out[map[i]].off = (int16_t)((int64_t)map[t] - map[i] - 1);
	}
	*nout = o;
	ret = 0;
out:
	free(map);
	return ret;
}

int dpdk_bpf_prepare(const char *path, const char *func,
		     const unsigned char *pkt, uint32_t len,
		     struct dpdk_bpf **out, char *why, size_t whylen)
{
	struct rte_bpf_xsym xs[1 + MAX_MAPS];
	struct ebpf_insn *ins = NULL, *rw = NULL;
	struct kbpf_map *km = NULL;
	uint32_t n = 0, nmaps = 0, nrw = 0, nxs = 0, i, vmax = 8;
	struct dpdk_bpf *b;
	char logbuf[512] = "";
	FILE *logf;
	int err;

	*out = NULL;
	if (len > sizeof(b->pkt))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	memcpy(b->pkt, pkt, len);
	b->len = len;
	err = kbpf_linked_insns(path, func, (void **)&ins, &n, &km, &nmaps,
				b->why, sizeof(b->why));
	if (err)
		goto out;
	for (i = 0; i < nmaps && i < MAX_MAPS; i++) {
		size_t sz = (size_t)km[i].value_size * km[i].max_entries;
		struct dmap *m = &b->maps[i];

		m->type = km[i].type;
		m->value_size = km[i].value_size;
		m->max_entries = km[i].max_entries;
		/* One thread runs it: a per-CPU array has one slot each. */
		m->data = calloc(1, sz ? sz : 1);
		if (!m->data) {
			err = -ENOMEM;
			goto out;
		}
		if (km[i].init)
			memcpy(m->data, km[i].init,
			       km[i].init_size < sz ? km[i].init_size : sz);
		b->nmaps++;
		if (m->value_size > vmax)
			vmax = m->value_size;
	}
	xs[nxs++] = (struct rte_bpf_xsym){
		.name = "none", .type = RTE_BPF_XTYPE_FUNC,
		.func = { .val = dmap_lookup, .nb_args = 0,
			  .ret = { .type = RTE_BPF_ARG_RAW, .size = 8 } },
	};
	xs[nxs++] = (struct rte_bpf_xsym){
		.name = "bpf_map_lookup_elem", .type = RTE_BPF_XTYPE_FUNC,
		.func = {
			.val = dmap_lookup,
			.nb_args = 2,
			.args = {
				{ .type = RTE_BPF_ARG_RAW, .size = 8 },
				{ .type = RTE_BPF_ARG_PTR, .size = 4 },
			},
			/* One function for every map: the largest value. */
			.ret = { .type = RTE_BPF_ARG_PTR, .size = vmax },
		},
	};
	rw = calloc(2 * (size_t)n + 2, sizeof(*rw));
	if (!rw) {
		err = -ENOMEM;
		goto out;
	}
	err = rewrite(b, ins, n, km, nmaps, xs, &nxs, rw, &nrw);
	if (err)
		goto out;
	{
		struct rte_bpf_prm prm = {
			.ins = rw, .nb_ins = nrw, .xsym = xs, .nb_xsym = nxs,
			.prog_arg = { .type = RTE_BPF_ARG_PTR, .size = len },
		};

		/* rte_bpf says why it refuses through rte_log: catch it. */
		logf = fmemopen(logbuf, sizeof(logbuf) - 1, "w");
		if (logf)
			rte_openlog_stream(logf);
		b->bpf = rte_bpf_load(&prm);
		err = b->bpf ? 0 : -rte_errno;
		if (logf) {
			rte_openlog_stream(NULL);
			fclose(logf);
		}
	}
	if (!b->bpf) {
		char *nl;

		while ((nl = strchr(logbuf, '\n')) && nl[1])
			*nl = ' ';
		if ((nl = strchr(logbuf, '\n')))
			*nl = '\0';
		snprintf(b->why, sizeof(b->why), "rte_bpf_load refused it "
			 "(%s): %s", strerror(-err), logbuf[0] ? logbuf :
			 "no message");
		err = 1;
		goto out;
	}
	if (rte_bpf_get_jit(b->bpf, &b->jit) || !b->jit.func)
		memset(&b->jit, 0, sizeof(b->jit));
out:
	free(ins);
	free(rw);
	kbpf_maps_free(km, nmaps);
	if (err) {
		snprintf(why, whylen, "%s", b->why);
		dpdk_bpf_free(b);
		return err < 0 && err != -EINVAL ? err : 1;
	}
	*out = b;
	return 0;
}

bool dpdk_bpf_has_jit(const struct dpdk_bpf *b)
{
	return b && b->jit.func;
}

int dpdk_bpf_loop(struct dpdk_bpf *b, bool jit, uint64_t n, uint32_t want,
		  uint64_t *ticks, uint64_t *bad)
{
	uint64_t t0, t1, i, nbad = 0;

	if (jit && !b->jit.func) {
		snprintf(b->why, sizeof(b->why), "no JIT code");
		return -EOPNOTSUPP;
	}
	t0 = bench_tsc_begin();
	if (jit) {
		uint64_t (*f)(void *) = b->jit.func;

		for (i = 0; i < n; i++)
			nbad += (uint32_t)f(b->pkt) != want;
	} else {
		for (i = 0; i < n; i++)
			nbad += (uint32_t)rte_bpf_exec(b->bpf, b->pkt) != want;
	}
	t1 = bench_tsc_end();
	*ticks = t1 - t0;
	*bad = nbad;
	return 0;
}

const char *dpdk_bpf_why(const struct dpdk_bpf *b)
{
	return b ? b->why : "not prepared";
}

void dpdk_bpf_free(struct dpdk_bpf *b)
{
	uint32_t i;

	if (!b)
		return;
	if (b->bpf)
		rte_bpf_destroy(b->bpf);
	for (i = 0; i < b->nmaps; i++)
		free(b->maps[i].data);
	free(b);
}

#else /* no librte_bpf */

#ifndef UXDP_BENCH_NO_DPDK_REASON
#define UXDP_BENCH_NO_DPDK_REASON	"librte_bpf not found"
#endif

int dpdk_bpf_prepare(const char *path, const char *func,
		     const unsigned char *pkt, uint32_t len,
		     struct dpdk_bpf **out, char *why, size_t whylen)
{
	(void)path, (void)func, (void)pkt, (void)len;
	*out = NULL;
	snprintf(why, whylen, "DPDK's librte_bpf peer not built (%s)",
		 UXDP_BENCH_NO_DPDK_REASON);
	return 1;
}

bool dpdk_bpf_has_jit(const struct dpdk_bpf *b)
{
	(void)b;
	return false;
}

int dpdk_bpf_loop(struct dpdk_bpf *b, bool jit, uint64_t n, uint32_t want,
		  uint64_t *ticks, uint64_t *bad)
{
	(void)b, (void)jit, (void)n, (void)want, (void)ticks, (void)bad;
	return -EOPNOTSUPP;
}

const char *dpdk_bpf_why(const struct dpdk_bpf *b)
{
	(void)b;
	return "not built";
}

void dpdk_bpf_free(struct dpdk_bpf *b)
{
	(void)b;
}

#endif
