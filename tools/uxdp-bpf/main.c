/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bpf: XDP eBPF objects (clang -target bpf) as uxdp loads them.
 *
 *	uxdp-bpf dump [-d] [--json] FILE.o
 *	uxdp-bpf test [options] FILE.o[:PROG] --packet HEX | --pcap FILE
 *	uxdp-bpf check FILE.o
 *	uxdp-bpf run [--asm] [MEMORY [OPTIONS]] < PROGRAM
 *
 * dump: the programs (what the safety pass proved, the engine, the JIT's
 * code size, with -d the instructions as linked) and the maps. test: a
 * program run on packets as BPF_PROG_TEST_RUN runs it (the verdict, the
 * bytes it left), for users' own CI. check: whether every XDP program
 * loads, each refusal with its reason. run: the bpf_conformance suite's
 * plugin, a bare instruction stream on the raw path (no object, no
 * safety pass).
 *
 * Each XDP program is loaded in an object of its own (the others left
 * out), so one the loader refuses does not hide what the others are. The
 * loading is tools/lib's (bpfprog.c, shared with uxdp-fwd and uxdp-xsk);
 * the disassembly is the library's own, through its internal header (the
 * public API has no instruction stream yet).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <unistd.h>

#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

/* uxdp_bpf_program_insns(), uxdp_bpf_insn_str(), the helpers' and map
 * types' names: the library's, not exported, linked from its archive. */
#include "bpf_internal.h"

#include "bpfmaps.h"
#include "bpfprog.h"
#include "params.h"
#include "pcapfile.h"
#include "ports.h"
#include "stats.h"
#include "tool.h"

#define PROG_NAME	"uxdp-bpf"
/* What a test run takes (uxdp_bpf_test_run_opts.data_size_in): an
 * Ethernet header at least, as the kernel's. */
#define PKT_MIN		14
#define PKT_MAX		3520
/* The most entries of one map --maps shows; the rest are counted. */
#define MAPS_SHOWN	64
/* Room for what a program leaves: metadata and the packet it grew. */
#define OUT_MAX		4096

/* ---- options ------------------------------------------------------------- */

struct bpf_opts {
	struct tool_opts run;		/* json */
	bool disasm;
	bool xlated;
	bool asm_text;
	bool maps;
	bool kernel_verify;
	const char *engine;
	const char *packet;
	const char *pcap;
	const char *out;
	const char *expect;
	uint32_t repeat;
	uint32_t ifindex;
	uint32_t queue;
	struct tparam_strs map_file;	/* --map NAME=FILE.json */
	struct tparam_strs map_elem;	/* --map-elem NAME:KEY=VALUE */
	struct tparam_strs dump_map;	/* --dump-map NAME[=FILE] */
};

#define OPT(name, key, type, field, mv, lo, hi, help) \
	TPARAM(name, key, type, struct bpf_opts, field, mv, lo, hi, help)
#define OPT_ENGINE \
	OPT("engine", 'e', TPARAM_STR, engine, "ENGINE", 0, 0, TBPF_ENGINE_HELP)
#define OPT_KVERIFY \
	OPT("kernel-verify", 'k', TPARAM_FLAG, kernel_verify, NULL, 0, 0, \
	    "also put each program to the running kernel's verifier and "  \
	    "refuse what it refuses, with its reason (needs CAP_BPF and "  \
	    "CAP_PERFMON) (default: uxdp's own safety pass only)")
#define OPT_JSON(what) \
	OPT("json", 'j', TPARAM_FLAG, run.json, NULL, 0, 0, what)

static const struct tparam dump_defs[] = {
	OPT("disasm", 'd', TPARAM_FLAG, disasm, NULL, 0, 0,
	    "each program's instructions as linked (subprograms after it), "
	    "before the safety pass's fixups"),
	OPT("xlated", 'x', TPARAM_FLAG, xlated, NULL, 0, 0,
	    "each program's instructions as the engines run them: after the "
	    "fixups, with the run-time checks, the budget steps and the "
	    "inline map lookups, each with the index it came from"),
	OPT_ENGINE,
	OPT_KVERIFY,
	OPT_JSON("one JSON object on stdout (default: text)"),
	TPARAM_HELP_ROW,
};

static const struct tparam test_defs[] = {
	OPT("packet", 'p', TPARAM_STR, packet, "HEX", 0, 0,
	    "the packet, in hex (spaces and ':' between bytes are fine), 14 "
	    "(an Ethernet header) to 3520 bytes"),
	OPT("pcap", 'r', TPARAM_STR, pcap, "FILE", 0, 0,
	    "every packet of a classic pcap file of Ethernet frames, one run "
	    "each"),
	OPT("repeat", 'n', TPARAM_U32, repeat, "N", 1, 1000000000,
	    "runs per packet on the same buffer, the program's changes "
	    "carried over (as BPF_PROG_TEST_RUN's repeat); the verdict and "
	    "the bytes are the last run's (default 1)"),
	OPT_ENGINE,
	OPT("out", 'o', TPARAM_STR, out, "FILE", 0, 0,
	    "write every packet as the program left it to a pcap file "
	    "(default: none)"),
	OPT("expect", 'x', TPARAM_STR, expect, "VERDICT", 0, 0,
	    "exit 1 unless every packet's verdict is VERDICT (aborted, drop, "
	    "pass, tx or redirect, XDP_ prefix and case optional) (default: "
	    "any)"),
	OPT("maps", 'm', TPARAM_FLAG, maps, NULL, 0, 0,
	    "after the runs, every entry of the object's arrays that is not "
	    "all zero (per-CPU ones summed over the threads), for a test of "
	    "what the program counted"),
	OPT("map", 0, TPARAM_STRS, map_file, "NAME=FILE.json", 0, 0,
	    TMAP_HELP_MAP),
	OPT("map-elem", 0, TPARAM_STRS, map_elem, "NAME:KEY=VALUE", 0, 0,
	    TMAP_HELP_ELEM),
	OPT("dump-map", 0, TPARAM_STRS, dump_map, "NAME[=FILE]", 0, 0,
	    TMAP_HELP_DUMP),
	OPT_KVERIFY,
	OPT("ifindex", 0, TPARAM_U32, ifindex, "N", 0, UINT32_MAX,
	    "the context's ingress_ifindex (default 0)"),
	OPT("queue", 0, TPARAM_U32, queue, "N", 0, UINT32_MAX,
	    "the context's rx_queue_index (default 0)"),
	OPT_JSON("JSON lines on stdout: one object per packet, then one "
		 "with the totals (default: text)"),
	TPARAM_HELP_ROW,
};

static const struct tparam check_defs[] = {
	OPT_ENGINE,
	OPT_KVERIFY,
	TPARAM_HELP_ROW,
};

static const struct tparam run_defs[] = {
	OPT("asm", 'a', TPARAM_FLAG, asm_text, NULL, 0, 0,
	    "PROGRAM is the suite's assembler text (its \"-- asm\" "
	    "section: \"mov32 %r0, 1\", labels, ...), not hex"),
	OPT_ENGINE,
	TPARAM_HELP_ROW,
};

static void exit_help(FILE *f)
{
	tparams_section(f, "exit status", "0 done (dump, test) or every XDP "
			"program loads (check); 1 a program refused, a file "
			"that cannot be read, a run that failed, a verdict "
			"not the one --expect asked for, or output that "
			"could not be written; 2 bad usage.");
}

static void dump_help(FILE *f)
{
	static const char *const ex[] = { "dump -d fw.o", "dump --json fw.o",
					  NULL };

	exit_help(f);
	tparams_examples(f, PROG_NAME, ex);
}

static void test_help(FILE *f)
{
	static const char *const ex[] = {
		"test drop.o --packet 0011223344550a0b0c0d0e0f0800",
		"test fw.o:xdp_fw --pcap in.pcap --out out.pcap",
		"test fw.o --pcap attack.pcap --expect drop",
		NULL,
	};

	tparams_section(f, "output", "Per packet: its number and length, "
			"the verdict, and when the program changed the bytes "
			"(or their length), the packet as it left, in hex. "
			"Then the totals per verdict, and the program's "
			"counters: runs, aborted runs and faults (a memory "
			"access outside what the program may touch, a loop "
			"past its budget), the last fault's instruction.");
	exit_help(f);
	tparams_examples(f, PROG_NAME, ex);
}

static void check_help(FILE *f)
{
	static const char *const ex[] = { "check fw.o", NULL };

	tparams_section(f, "output", "A line per program: \"NAME: ok\" with "
			"the engine, or \"NAME: refused: \" and the loader's "
			"reason (the program, the instruction and why); "
			"programs of other types are listed as skipped.");
	exit_help(f);
	tparams_examples(f, PROG_NAME, ex);
}

static void run_help(FILE *f)
{
	static const char *const ex[] = {
		"run < prog.hex",
		"run \"00 11 22 33\" \"--engine interp\" < prog.hex",
		"run --asm --engine jit < prog.asm",
		NULL,
	};

	tparams_section(f, "the suite's runner", "bpf_conformance_runner "
			"--plugin_path PLUGIN passes MEMORY and its "
			"--plugin_options as the first two arguments: make "
			"PLUGIN a script that runs 'exec uxdp-bpf run \"$@\"'.");
	tparams_section(f, "exit status", "0 the program ran: r0 in hex on "
			"stdout; 1 it was refused, it faulted (the budget of "
			"back edges, the call depth), the JIT could not "
			"compile it (--engine jit), it ran for more than 10 s, "
			"or stdin was not a program: the reason on stderr; 2 "
			"bad usage.");
	tparams_examples(f, PROG_NAME, ex);
}

static struct tparams dump_params = {
	.prog = PROG_NAME " dump",
	.synopsis = "[options] FILE.o",
	.about = "The object's programs (section, type, instructions, the "
		 "engine and the JIT's code size, the memory accesses the "
		 "safety pass proved in bounds and those it checks at run "
		 "time, the back edges counted against the budget; a refused "
		 "program's reason) and its maps (type, key and value size, "
		 "entries).",
	TPARAMS_DEFS(dump_defs),
	.more_help = dump_help,
};

static struct tparams test_params = {
	.prog = PROG_NAME " test",
	.synopsis = "[options] FILE.o[:PROG] --packet HEX | --pcap FILE",
	.about = "Run program PROG of FILE.o (default: its first XDP "
		 "program) on each packet, as the kernel's BPF_PROG_TEST_RUN "
		 "does: a copy in a buffer of its own with 256 bytes of "
		 "headroom, nothing sent or redirected.",
	TPARAMS_DEFS(test_defs),
	.more_help = test_help,
};

static struct tparams run_params = {
	.prog = PROG_NAME " run",
	.synopsis = "[options] [MEMORY [OPTIONS]] < PROGRAM",
	.about = "The bpf_conformance suite's plugin: PROGRAM, the "
		 "instructions' bytes in hex on standard input, run on a "
		 "copy of MEMORY (hex bytes; default none) as the suite's "
		 "contract says (r1 = the memory, r2 = its length, helper 5), "
		 "with no safety pass: memory accesses are not checked, so "
		 "run only programs you trust; a run longer than 10 s is "
		 "ended. OPTIONS, the runner's --plugin_options as one word, "
		 "may hold --engine.",
	TPARAMS_DEFS(run_defs),
	.more_help = run_help,
};

static struct tparams check_params = {
	.prog = PROG_NAME " check",
	.synopsis = "[options] FILE.o",
	.about = "Load every XDP program of FILE.o, each on its own: exit 0 "
		 "if every one loads, else each refusal and exit 1.",
	TPARAMS_DEFS(check_defs),
	.more_help = check_help,
};

/* ---- what the object has -------------------------------------------------- */

/* A program type's name as libbpf spells it, for those an XDP object
 * has beside its XDP programs; else the kernel's number. */
static const char *type_name(uint32_t type, char *buf, size_t len)
{
	static const char *const names[] = {
		[BPF_PROG_TYPE_SOCKET_FILTER] = "socket_filter",
		[BPF_PROG_TYPE_KPROBE] = "kprobe",
		[BPF_PROG_TYPE_SCHED_CLS] = "sched_cls",
		[BPF_PROG_TYPE_SCHED_ACT] = "sched_act",
		[BPF_PROG_TYPE_TRACEPOINT] = "tracepoint",
		[BPF_PROG_TYPE_XDP] = "xdp",
		[BPF_PROG_TYPE_PERF_EVENT] = "perf_event",
		[BPF_PROG_TYPE_RAW_TRACEPOINT] = "raw_tracepoint",
		[BPF_PROG_TYPE_TRACING] = "tracing",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	snprintf(buf, len, "type %u", type);
	return buf;
}

/* Open @file for its list of programs and maps, or NULL after a message. */
static struct uxdp_bpf_object *open_object(const char *file)
{
	struct uxdp_bpf_object *obj = uxdp_bpf_object_open(file, NULL);

	if (!obj)
		tmsg(PROG_NAME, "%s: %s", file, tports_why(errno));
	return obj;
}

/* Program @name of @file loaded on its own, or the reason it is not. */
static int load_alone(const struct bpf_opts *o, const char *file,
		      const char *name, uint32_t engine, struct tbpf_prog *lp,
		      char *why, size_t len)
{
	struct tbpf_spec s = {
		.name = name,
		.flags = o->kernel_verify ? UXDP_BPF_F_KERNEL_VERIFY : 0,
	};

	snprintf(s.file, sizeof(s.file), "%s", file);
	return tbpf_try_load(&s, engine, lp, why, len);
}

/* ---- dump ------------------------------------------------------------------ */

/* The name of map @idx of @obj (lddw's map[N]), or NULL. */
static const char *map_name_at(const struct uxdp_bpf_object *obj,
			       int32_t idx)
{
	const struct uxdp_bpf_map *m = NULL;
	int32_t i = 0;

	while ((m = uxdp_bpf_object_next_map(obj, m)))
		if (i++ == idx)
			return uxdp_bpf_map_name(m);
	return NULL;
}

/* Instruction @i's text, with what it refers to: a map's name, a
 * helper's. Returns the slots it takes (2 for lddw). */
static unsigned int insn_text(const struct tbpf_prog *lp,
			      const struct bpf_insn *in, uint32_t left,
			      char *buf, size_t len)
{
	unsigned int slots = in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
			     left > 1 ? 2 : 1;
	char hb[64];
	const char *m;
	int n;

	n = uxdp_bpf_insn_str(in, buf, len);
	if (n < 0 || (size_t)n >= len)
		return slots;
	if (slots == 2 && (in->src_reg == BPF_PSEUDO_MAP_IDX ||
			   in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) &&
	    (m = map_name_at(lp->obj, in->imm)))
		snprintf(buf + n, len - (size_t)n, "\t; %s", m);
	else if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0)
		snprintf(buf + n, len - (size_t)n, "\t; %s",
			 uxdp_bpf_helper_name((uint32_t)in->imm, hb,
					      sizeof(hb)));
	return slots;
}

static void dump_disasm(const struct tbpf_prog *lp, bool json)
{
	uint32_t i, len = 0;
	const struct bpf_insn *insns = uxdp_bpf_program_insns(lp->bprog,
							       &len);
	char buf[256];

	if (json)
		printf(",\"disasm\":[");
	for (i = 0; insns && i < len;) {
		uint32_t at = i;

		i += insn_text(lp, &insns[i], len - i, buf, sizeof(buf));
		if (json) {
			printf("%s{\"insn\":%u,\"text\":", at ? "," : "", at);
			tjson_str(stdout, buf);
			printf("}");
		} else {
			printf("  %5u: %s\n", at, buf);
		}
	}
	if (json)
		printf("]");
}

/* What a check's kind checks against. */
static const char *check_kind(uint32_t imm)
{
	switch (UXDP_BPF_CHECK_KIND(imm)) {
	case 0:
		return "alignment only";
	case UXDP_BPF_MEM_PKT:
		return "the packet";
	case UXDP_BPF_MEM_STACK:
		return "the stack";
	case UXDP_BPF_MEM_REGION:
		return "a map's values";
	case UXDP_BPF_MEM_RAW:
		return "the raw memory";
	default:
		return "any memory the program has";
	}
}

/* The code the engines run: "  N (from M): TEXT", a check's kind and
 * a helper's name after the text. */
static void dump_xlated(const struct tbpf_prog *lp, bool json)
{
	const struct uxdp_bpf_code *c = uxdp_bpf_prog_code(lp->prog);
	char buf[256], hb[64];
	uint32_t i;

	if (json)
		printf(",\"xlated\":[");
	for (i = 0; c && i < c->len; i++) {
		const struct bpf_insn *in = &c->insns[i];
		bool wide = in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    i + 1 < c->len;
		int n = uxdp_bpf_insn_str(in, buf, sizeof(buf));

		if (n >= 0 && (size_t)n < sizeof(buf)) {
			if (in->code == UXDP_BPF_OP_CHECK)
				snprintf(buf + n, sizeof(buf) - (size_t)n,
					 "\t; %s%s", check_kind((uint32_t)
								in->imm),
					 (uint32_t)in->imm &
					 UXDP_BPF_CHECK_ALIGN ?
					 ", aligned" : "");
			else if (in->code == (BPF_JMP | BPF_CALL) &&
				 !in->src_reg && (uint32_t)in->imm <
				 c->nhelpers && c->helpers[in->imm])
				snprintf(buf + n, sizeof(buf) - (size_t)n,
					 "\t; %s", uxdp_bpf_helper_name(
						 c->helpers[in->imm]->id, hb,
						 sizeof(hb)));
		}
		if (json) {
			printf("%s{\"insn\":%u,\"from\":%u,\"text\":",
			       i ? "," : "", i, c->orig_idx[i]);
			tjson_str(stdout, buf);
			printf("}");
		} else {
			printf("  %5u (from %u): %s\n", i, c->orig_idx[i], buf);
		}
		i += wide;
	}
	if (json)
		printf("]");
}

static void dump_loaded(const struct tbpf_prog *lp,
			const struct uxdp_bpf_prog_info *in, bool json)
{
	char a[32];

	if (json) {
		printf(",\"loaded\":true,\"engine\":\"%s\",\"insns\":%u,"
		       "\"xlated_insns\":%u,\"jit_size\":%u,\"accesses\":%u,"
		       "\"proven\":%u,\"checked\":%u,\"back_edges\":%u",
		       tbpf_engine_name(in->engine), in->insns,
		       in->xlated_insns, in->jit_size, in->accesses,
		       in->proven, in->checked, in->back_edges);
		return;
	}
	printf("  %u insns (%u after fixups), engine %s", in->insns,
	       in->xlated_insns, tbpf_engine_name(in->engine));
	if (in->jit_size)
		printf(", %s bytes of machine code",
		       tstats_fmt_count(a, sizeof(a), in->jit_size));
	printf("\n  memory accesses: %u, %u proven, %u checked; back edges: "
	       "%u\n", in->accesses, in->proven, in->checked, in->back_edges);
	(void)lp;
}

static void dump_program(const struct bpf_opts *o, const char *file,
			 const struct uxdp_bpf_program *p, uint32_t engine,
			 bool first)
{
	uint32_t type = uxdp_bpf_program_type(p);
	bool xdp = type == TBPF_PROG_TYPE_XDP;
	struct uxdp_bpf_prog_info in = { .sz = sizeof(in) };
	struct tbpf_prog lp;
	char why[1024], tb[32];
	int err = -1;

	if (xdp) {
		err = load_alone(o, file, uxdp_bpf_program_name(p), engine,
				 &lp, why, sizeof(why));
		if (!err && uxdp_bpf_prog_info(lp.prog, &in)) {
			snprintf(why, sizeof(why), "info: %s",
				 tports_why(errno));
			err = -1;
		}
	}
	if (o->run.json) {
		printf("%s{\"name\":", first ? "" : ",");
		tjson_str(stdout, uxdp_bpf_program_name(p));
		printf(",\"section\":");
		tjson_str(stdout, uxdp_bpf_program_section(p));
		printf(",\"type\":%u,\"xdp\":%s", type, xdp ? "true" : "false");
	} else {
		printf("program %s: section %s, %s\n",
		       uxdp_bpf_program_name(p), uxdp_bpf_program_section(p),
		       type_name(type, tb, sizeof(tb)));
	}
	if (!xdp) {
		if (o->run.json)
			printf(",\"loaded\":false}");
		else
			printf("  not XDP: not loaded\n");
		return;
	}
	if (err) {
		if (o->run.json) {
			printf(",\"loaded\":false,\"refused\":");
			tjson_str(stdout, why);
			printf("}");
		} else {
			printf("  refused: %s\n", why);
		}
		tbpf_close(&lp);
		return;
	}
	dump_loaded(&lp, &in, o->run.json);
	if (o->disasm)
		dump_disasm(&lp, o->run.json);
	if (o->xlated)
		dump_xlated(&lp, o->run.json);
	if (o->run.json)
		printf("}");
	tbpf_close(&lp);
}

static void dump_map(const struct uxdp_bpf_map *m, bool json, bool first)
{
	char tb[64];
	const char *type = uxdp_bpf_map_type_str(uxdp_bpf_map_type(m), tb,
						 sizeof(tb));

	if (json) {
		printf("%s{\"name\":", first ? "" : ",");
		tjson_str(stdout, uxdp_bpf_map_name(m));
		printf(",\"type\":");
		tjson_str(stdout, type);
		printf(",\"type_id\":%u,\"key_size\":%u,\"value_size\":%u,"
		       "\"max_entries\":%u,\"flags\":%u}",
		       uxdp_bpf_map_type(m), uxdp_bpf_map_key_size(m),
		       uxdp_bpf_map_value_size(m),
		       uxdp_bpf_map_max_entries(m), uxdp_bpf_map_flags(m));
		return;
	}
	printf("map %s: %s, key %u, value %u, max_entries %u", uxdp_bpf_map_name(m),
	       type, uxdp_bpf_map_key_size(m), uxdp_bpf_map_value_size(m),
	       uxdp_bpf_map_max_entries(m));
	if (uxdp_bpf_map_flags(m))
		printf(", flags 0x%x", uxdp_bpf_map_flags(m));
	printf("\n");
}

static int cmd_dump(struct tool *t, struct bpf_opts *o, int argc,
		    char **argv, int first)
{
	uint32_t engine = tbpf_engine_parse(&dump_params, o->engine);
	const struct uxdp_bpf_program *p = NULL;
	const struct uxdp_bpf_map *m = NULL;
	struct uxdp_bpf_object *obj;
	const char *file;
	bool one = true;

	if (argc - first != 1)
		tparams_fail(&dump_params, "want one FILE.o");
	file = argv[first];
	obj = open_object(file);
	if (!obj)
		return 1;
	if (o->run.json) {
		printf("{\"object\":");
		tjson_str(stdout, file);
		printf(",\"programs\":[");
	}
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		dump_program(o, file, p, engine, one);
		one = false;
		tool_check_output(t);
	}
	if (o->run.json)
		printf("],\"maps\":[");
	one = true;
	while ((m = uxdp_bpf_object_next_map(obj, m))) {
		dump_map(m, o->run.json, one);
		one = false;
	}
	if (o->run.json)
		printf("]}\n");
	uxdp_bpf_object_close(obj);
	return 0;
}

/* ---- check ----------------------------------------------------------------- */

static int cmd_check(struct tool *t, struct bpf_opts *o, int argc,
		     char **argv, int first)
{
	uint32_t engine = tbpf_engine_parse(&check_params, o->engine);
	const struct uxdp_bpf_program *p = NULL;
	unsigned int nxdp = 0, refused = 0;
	struct uxdp_bpf_object *obj;
	const char *file;

	(void)t;
	if (argc - first != 1)
		tparams_fail(&check_params, "want one FILE.o");
	file = argv[first];
	obj = open_object(file);
	if (!obj)
		return 1;
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		const char *name = uxdp_bpf_program_name(p);
		struct uxdp_bpf_prog_info in = { .sz = sizeof(in) };
		struct tbpf_prog lp;
		char why[1024], tb[32];

		if (uxdp_bpf_program_type(p) != TBPF_PROG_TYPE_XDP) {
			printf("%s: skipped (section %s, %s: not XDP)\n", name,
			       uxdp_bpf_program_section(p),
			       type_name(uxdp_bpf_program_type(p), tb,
					 sizeof(tb)));
			continue;
		}
		nxdp++;
		if (load_alone(o, file, name, engine, &lp, why, sizeof(why))) {
			printf("%s: refused: %s\n", name, why);
			refused++;
		} else if (!uxdp_bpf_prog_info(lp.prog, &in)) {
			printf("%s: ok (%u insns, %s)\n", name, in.insns,
			       tbpf_engine_name(in.engine));
		} else {
			printf("%s: ok\n", name);
		}
		tbpf_close(&lp);
	}
	uxdp_bpf_object_close(obj);
	/* The lines above before the summary, also through a pipe. */
	fflush(stdout);
	if (!nxdp) {
		tmsg(PROG_NAME, "%s: no XDP program in the object", file);
		return 1;
	}
	if (refused)
		tmsg(PROG_NAME, "%s: %u of %u XDP program%s refused", file,
		     refused, nxdp, nxdp == 1 ? "" : "s");
	return refused ? 1 : 0;
}

/* ---- test ------------------------------------------------------------------- */

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/*
 * Hex bytes ("0a0b", "0a 0b", "0a:0b", lines) into @buf, at most @max.
 * Returns the count, or -1 with @why set.
 */
static long hex_bytes(const char *s, uint8_t *buf, size_t max,
		      char *why, size_t len)
{
	size_t n = 0;
	int hi = -1;

	for (; *s; s++) {
		if (isspace((unsigned char)*s) || *s == ':')
			continue;
		if (!isxdigit((unsigned char)*s)) {
			snprintf(why, len, "'%c' is not a hex digit", *s);
			return -1;
		}
		if (hi < 0) {
			hi = hexval((unsigned char)*s);
			continue;
		}
		if (n == max) {
			snprintf(why, len, "more than %zu bytes", max);
			return -1;
		}
		buf[n++] = (uint8_t)(hi << 4 | hexval((unsigned char)*s));
		hi = -1;
	}
	if (hi >= 0) {
		snprintf(why, len, "an odd number of hex digits");
		return -1;
	}
	return (long)n;
}

/* --packet HEX into @buf; its length. Bad usage exits 2. */
static uint32_t parse_hex(const char *s, uint8_t *buf)
{
	char why[64];
	long n = hex_bytes(s, buf, PKT_MAX, why, sizeof(why));

	if (n < 0)
		tparams_fail(&test_params, "--packet: %s", why);
	if (!n)
		tparams_fail(&test_params, "--packet: no bytes");
	if (n < PKT_MIN)
		tparams_fail(&test_params, "--packet: %ld byte%s: at least %u "
			     "(an Ethernet header)", n, n == 1 ? "" : "s",
			     PKT_MIN);
	return (uint32_t)n;
}

/* --expect: a verdict's name, any case, XDP_ or not. */
static int parse_verdict(const char *s)
{
	uint32_t v;

	if (!strncasecmp(s, "XDP_", 4))
		s += 4;
	for (v = 0; v < TBPF_NVERDICTS; v++)
		if (!strcasecmp(s, tbpf_verdict_name(v)))
			return (int)v;
	tparams_fail(&test_params, "--expect '%s': aborted, drop, pass, tx "
		     "or redirect", s);
}

struct test_run {
	struct tool *t;
	const struct bpf_opts *o;
	struct tbpf_prog lp;
	FILE *out;
	int expect;			/* -1: any */
	uint64_t packets, runs, changed, unexpected;
	uint64_t v[TBPF_NVERDICTS];
	uint8_t obuf[OUT_MAX];
};

static void put_hex(const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static const char *upper_verdict(uint32_t v, char *buf, size_t len)
{
	const char *n = tbpf_verdict_name(v);
	size_t i;

	snprintf(buf, len, "XDP_%s", n);
	for (i = 4; buf[i]; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
	return buf;
}

/* One packet through the program. 0, or 1 after a message. */
static int test_one(struct test_run *r, const struct pcap_pkt *pkt)
{
	const struct bpf_opts *o = r->o;
	struct uxdp_bpf_test_run_opts t = {
		.sz = sizeof(t),
		.data_in = pkt->data,
		.data_size_in = pkt->len,
		.data_out = r->obuf,
		.data_size_out = sizeof(r->obuf),
		.ingress_ifindex = o->ifindex,
		.rx_queue_index = o->queue,
		.repeat = o->repeat,
	};
	const uint8_t *data;
	uint32_t len, v;
	char vb[32];
	bool changed;
	int err;

	r->packets++;
	if (pkt->len > PKT_MAX) {
		tmsg(PROG_NAME, "packet %llu: %u bytes: a test run takes at "
		     "most %u", (unsigned long long)r->packets, pkt->len,
		     PKT_MAX);
		return 1;
	}
	err = uxdp_bpf_prog_test_run(r->lp.prog, &t);
	if (err) {
		tmsg(PROG_NAME, "packet %llu: %s", (unsigned long long)r->packets,
		     tports_why(err));
		return 1;
	}
	v = t.retval < TBPF_NVERDICTS ? t.retval : UXDP_ABORTED;
	r->v[v]++;
	r->runs += o->repeat ? o->repeat : 1;
	/* What the program left: its metadata, then the packet. */
	data = r->obuf + t.meta_size;
	len = t.data_size_out - t.meta_size;
	changed = t.meta_size || len != pkt->len ||
		  memcmp(data, pkt->data, len);
	r->changed += changed;
	if (o->run.json) {
		printf("{\"type\":\"packet\",\"index\":%llu,\"len\":%u,"
		       "\"verdict\":\"%s\",\"retval\":%u,\"ns_per_run\":%u,"
		       "\"changed\":%s", (unsigned long long)r->packets,
		       pkt->len, tbpf_verdict_name(v), t.retval, t.duration,
		       changed ? "true" : "false");
		if (changed) {
			printf(",\"out_len\":%u,\"out\":\"", len);
			put_hex(data, len);
			printf("\"");
			if (t.meta_size) {
				printf(",\"meta\":\"");
				put_hex(r->obuf, t.meta_size);
				printf("\"");
			}
		}
		printf("}\n");
	} else {
		printf("packet %llu (%u bytes): %s",
		       (unsigned long long)r->packets, pkt->len,
		       upper_verdict(v, vb, sizeof(vb)));
		if (t.retval != v)
			printf(" (returned %u)", t.retval);
		if (o->repeat > 1)
			printf(", %u runs, %u ns per run", o->repeat,
			       t.duration);
		printf("\n");
		if (changed) {
			printf("  out (%u bytes): ", len);
			put_hex(data, len);
			printf("\n");
			if (t.meta_size) {
				printf("  meta (%u bytes): ", t.meta_size);
				put_hex(r->obuf, t.meta_size);
				printf("\n");
			}
		}
	}
	tool_check_output(r->t);
	if (r->expect >= 0 && (int)v != r->expect)
		r->unexpected++;
	if (r->out) {
		struct pcap_pkt w = *pkt;

		w.data = data;
		w.len = len;
		w.orig_len = len;
		if (pcap_out_write(r->out, &w, 0)) {
			tmsg(PROG_NAME, "--out %s: %s", o->out,
			     strerror(errno));
			return 1;
		}
	}
	return 0;
}

static int test_packets(struct test_run *r)
{
	const struct bpf_opts *o = r->o;
	struct pcap_pkt pkt = { 0 };
	struct pcap_in in;
	char why[512];
	int rc = 0, n;

	if (o->packet) {
		static uint8_t buf[PKT_MAX];

		pkt.len = parse_hex(o->packet, buf);
		pkt.orig_len = pkt.len;
		pkt.data = buf;
		return test_one(r, &pkt);
	}
	if (pcap_in_open(&in, o->pcap, why, sizeof(why))) {
		tmsg(PROG_NAME, "--pcap %s", why);
		return 1;
	}
	while (!rc && (n = pcap_in_next(&in, &pkt, why, sizeof(why))) > 0)
		rc = test_one(r, &pkt);
	if (!rc && n < 0) {
		tmsg(PROG_NAME, "--pcap %s: %s", o->pcap, why);
		rc = 1;
	}
	pcap_in_close(&in);
	return rc;
}

/* A value of 1, 2, 4 or 8 bytes as a number (host order), for --maps. */
static bool value_num(const uint8_t *v, uint32_t size, uint64_t *out)
{
	uint8_t b1;
	uint16_t b2;
	uint32_t b4;

	switch (size) {
	case 1: memcpy(&b1, v, 1); *out = b1; return true;
	case 2: memcpy(&b2, v, 2); *out = b2; return true;
	case 4: memcpy(&b4, v, 4); *out = b4; return true;
	case 8: memcpy(out, v, 8); return true;
	}
	return false;
}

/* @n back into a value of @size bytes (1, 2, 4 or 8), host order. */
static void value_set(uint8_t *v, uint32_t size, uint64_t n)
{
	uint8_t b1 = (uint8_t)n;
	uint16_t b2 = (uint16_t)n;
	uint32_t b4 = (uint32_t)n;

	switch (size) {
	case 1: memcpy(v, &b1, 1); break;
	case 2: memcpy(v, &b2, 2); break;
	case 4: memcpy(v, &b4, 4); break;
	case 8: memcpy(v, &n, 8); break;
	}
}

static bool all_zero(const uint8_t *v, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		if (v[i])
			return false;
	return true;
}

/*
 * Entry @key of array @m into @val (value_size bytes; @slots has room for
 * a per-CPU value): a per-CPU array's slots summed where the value is a
 * number, else its first slot not all zero. Returns 1 if the entry is
 * not all zero, 0 if it is, -1 if it could not be read.
 */
static int map_entry(const struct uxdp_bpf_map *m, uint32_t key,
		     uint8_t *val, uint8_t *slots)
{
	uint32_t size = uxdp_bpf_map_value_size(m), stride = (size + 7) & ~7U;
	int i, ncpu = uxdp_bpf_num_possible_cpus();
	uint64_t sum = 0, n;

	if (uxdp_bpf_map_type(m) != BPF_MAP_TYPE_PERCPU_ARRAY)
		return uxdp_bpf_map_lookup(m, &key, val, 0) ? -1 :
		       !all_zero(val, size);
	if (uxdp_bpf_map_lookup(m, &key, slots, 0))
		return -1;
	memset(val, 0, size);
	for (i = 0; i < ncpu; i++) {
		const uint8_t *slot = slots + (size_t)i * stride;

		if (value_num(slot, size, &n)) {
			sum += n;
		} else if (!all_zero(slot, size)) {
			memcpy(val, slot, size);
			return 1;
		}
	}
	value_set(val, size, sum);
	return sum != 0;
}

/* One map's entries that are not all zero, at most MAPS_SHOWN of them. */
static void test_map(const struct uxdp_bpf_map *m, bool json, uint8_t *val,
		     uint8_t *slots)
{
	uint32_t size = uxdp_bpf_map_value_size(m), key, shown = 0, more = 0;
	char tb[64];
	uint64_t n;

	if (json) {
		printf("{\"name\":");
		tjson_str(stdout, uxdp_bpf_map_name(m));
		printf(",\"type\":\"%s\",\"entries\":[",
		       uxdp_bpf_map_type_str(uxdp_bpf_map_type(m), tb,
					     sizeof(tb)));
	}
	for (key = 0; key < uxdp_bpf_map_max_entries(m); key++) {
		if (map_entry(m, key, val, slots) <= 0)
			continue;
		if (shown == MAPS_SHOWN) {
			more++;
			continue;
		}
		if (json) {
			printf("%s{\"key\":%u,\"hex\":\"", shown ? "," : "",
			       key);
			put_hex(val, size);
			printf("\"");
			if (value_num(val, size, &n))
				printf(",\"value\":%llu",
				       (unsigned long long)n);
			printf("}");
		} else if (value_num(val, size, &n)) {
			printf("  %s[%u] = %llu\n", uxdp_bpf_map_name(m), key,
			       (unsigned long long)n);
		} else {
			printf("  %s[%u] = ", uxdp_bpf_map_name(m), key);
			put_hex(val, size);
			printf("\n");
		}
		shown++;
	}
	if (json)
		printf("],\"more\":%u}", more);
	else if (more)
		printf("  %s: %u more entries not zero\n", uxdp_bpf_map_name(m),
		       more);
}

/* --maps: every array of the loaded object, its entries not all zero
 * (global data are arrays of one entry too). */
static void test_maps(const struct test_run *r)
{
	const struct uxdp_bpf_map *m = NULL;
	bool json = r->o->run.json, first = true;
	size_t ncpu = (size_t)uxdp_bpf_num_possible_cpus();

	if (json)
		printf(",\"maps\":[");
	while ((m = uxdp_bpf_object_next_map(r->lp.obj, m))) {
		uint32_t type = uxdp_bpf_map_type(m);
		size_t size = uxdp_bpf_map_value_size(m);
		uint8_t *val, *slots;

		if (type != BPF_MAP_TYPE_ARRAY &&
		    type != BPF_MAP_TYPE_PERCPU_ARRAY)
			continue;
		val = malloc(size ? size : 1);
		slots = malloc(((size + 7) & ~(size_t)7) * ncpu + 1);
		if (val && slots) {
			printf("%s", json && !first ? "," : "");
			test_map(m, json, val, slots);
			first = false;
		}
		free(val);
		free(slots);
	}
	if (json)
		printf("]");
}

static void test_totals(struct test_run *r)
{
	char a[32], b[32];
	unsigned int v;

	if (r->o->run.json) {
		printf("{\"type\":\"totals\",\"packets\":%llu,\"runs\":%llu,"
		       "\"changed\":%llu,\"verdicts\":{",
		       (unsigned long long)r->packets,
		       (unsigned long long)r->runs,
		       (unsigned long long)r->changed);
		for (v = 0; v < TBPF_NVERDICTS; v++)
			printf("%s\"%s\":%llu", v ? "," : "",
			       tbpf_verdict_name(v),
			       (unsigned long long)r->v[v]);
		printf("},\"prog\":");
		tbpf_report_json(stdout, &r->lp, NULL);
		if (r->o->maps)
			test_maps(r);
		printf("}\n");
		return;
	}
	printf("totals: %s packet%s, %s changed",
	       tstats_fmt_count(a, sizeof(a), r->packets),
	       r->packets == 1 ? "" : "s",
	       tstats_fmt_count(b, sizeof(b), r->changed));
	for (v = 0; v < TBPF_NVERDICTS; v++)
		if (r->v[v])
			printf(", %s %s", tbpf_verdict_name(v),
			       tstats_fmt_count(a, sizeof(a), r->v[v]));
	printf("\n");
	tbpf_report_text(stdout, &r->lp, NULL);
	if (r->o->maps)
		test_maps(r);
}

static int cmd_test(struct tool *t, struct bpf_opts *o, int argc,
		    char **argv, int first)
{
	uint32_t engine = tbpf_engine_parse(&test_params, o->engine);
	static struct test_run r;
	static struct tmap_opts maps;
	struct tbpf_spec spec;
	int rc;

	if (argc - first != 1)
		tparams_fail(&test_params, "want one FILE.o[:PROG]");
	if (!o->packet == !o->pcap)
		tparams_fail(&test_params, "give the packets: --packet HEX or "
			     "--pcap FILE (one of them)");
	r.t = t;
	r.o = o;
	r.expect = o->expect ? parse_verdict(o->expect) : -1;
	tbpf_spec_parse(&test_params, "", argv[first], &spec);
	if (o->kernel_verify)
		spec.flags = UXDP_BPF_F_KERNEL_VERIFY;
	tmap_opts_parse(&test_params, &o->map_file, &o->map_elem,
			&o->dump_map, &maps);
	spec.maps = &maps;
	if (o->packet) {
		/* Bad hex is bad usage: said before anything is loaded. */
		static uint8_t probe[PKT_MAX];

		parse_hex(o->packet, probe);
	}
	if (tbpf_load(PROG_NAME, "", &spec, engine, &r.lp)) {
		tbpf_close(&r.lp);
		tmap_opts_free(&maps);
		return 1;
	}
	if (o->out) {
		r.out = pcap_out_open(o->out);
		if (!r.out) {
			tmsg(PROG_NAME, "--out %s: %s", o->out,
			     strerror(errno));
			tbpf_close(&r.lp);
			tmap_opts_free(&maps);
			return 1;
		}
	}
	rc = test_packets(&r);
	if (!rc)
		test_totals(&r);
	if (r.out && fclose(r.out) && !rc) {
		tmsg(PROG_NAME, "--out %s: %s", o->out, strerror(errno));
		rc = 1;
	}
	if (!rc && r.unexpected) {
		tmsg(PROG_NAME, "%llu of %llu packets not %s",
		     (unsigned long long)r.unexpected,
		     (unsigned long long)r.packets,
		     tbpf_verdict_name((uint32_t)r.expect));
		rc = 1;
	}
	/* After the totals: what the runs left in the maps. */
	if (tmap_dump_all(PROG_NAME, &maps, r.lp.obj, stdout, o->run.json))
		rc = 1;
	tbpf_close(&r.lp);
	tmap_opts_free(&maps);
	return rc;
}

/* ---- run: the conformance suite's plugin --------------------------------------- */

/* The most a plugin run takes: instructions, memory, seconds. */
#define RUN_INSNS_MAX	(1U << 16)
#define RUN_MEM_MAX	(1U << 16)
#define RUN_SECONDS	10

static void run_timeout(int sig)
{
	static const char msg[] = PROG_NAME ": the run took more than 10 s: "
				  "ended (a loop that does not end?)\n";

	(void)sig;
	/* Only what is safe in a signal handler. */
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Standard input whole, NUL-terminated (free()), or NULL after a
 * message. */
static char *read_stdin(void)
{
	size_t len = 0, cap = 0, max = RUN_INSNS_MAX * 8 * 4;
	char *buf = NULL;

	for (;;) {
		size_t n;

		if (len + 1 >= cap) {
			char *b;

			cap = cap ? cap * 2 : 4096;
			b = cap <= max ? realloc(buf, cap) : NULL;
			if (!b) {
				tmsg(PROG_NAME, "the program on stdin: %s",
				     cap > max ? "too long" : strerror(ENOMEM));
				free(buf);
				return NULL;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - 1 - len, stdin);
		len += n;
		if (!n)
			break;
	}
	if (ferror(stdin)) {
		tmsg(PROG_NAME, "reading the program: %s", strerror(errno));
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/*
 * The runner's OPTIONS (its --plugin_options, one word): "--engine E" or
 * "--engine=E" are the options this takes.
 */
static void run_plugin_options(struct bpf_opts *o, int argc, char **argv)
{
	static char words[4096], engine[32];
	char *w, *save = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		snprintf(words, sizeof(words), "%s", argv[i]);
		for (w = strtok_r(words, " \t", &save); w;
		     w = strtok_r(NULL, " \t", &save)) {
			if (!strncmp(w, "--engine=", 9)) {
				w += 9;
			} else if (!strcmp(w, "--engine") || !strcmp(w, "-e")) {
				w = strtok_r(NULL, " \t", &save);
				if (!w)
					tparams_fail(&run_params, "OPTIONS: "
						     "--engine needs a value");
			} else {
				tparams_fail(&run_params, "OPTIONS: unknown "
					     "option '%s'", w);
			}
			snprintf(engine, sizeof(engine), "%s", w);
			o->engine = engine;
		}
	}
}

/* The code, run by @engine on @mem: r0, or 1 after a message (-1). */
static int run_code(struct uxdp_bpf_code *code, uint32_t engine,
		    uint8_t *mem, uint64_t len, uint64_t *r0)
{
	struct uxdp_bpf_run run = { .code = code, .mem = mem, .mem_len = len };
	struct uxdp_bpf_jit *jit = NULL;
	int err = 0;

	if (engine != UXDP_BPF_ENGINE_INTERP) {
		err = uxdp_bpf_jit_compile(code, &jit);
		if (err && engine == UXDP_BPF_ENGINE_JIT) {
			tmsg(PROG_NAME, "jit: %s", tports_why(err));
			return -1;
		}
	}
	*r0 = jit ? uxdp_bpf_jit_run(jit, &run, (uintptr_t)mem, len) :
		    uxdp_bpf_interp_run(&run, (uintptr_t)mem, len);
	uxdp_bpf_jit_free(jit);
	if (run.fault) {
		tmsg(PROG_NAME, "the run ended at insn %u: fault %s",
		     run.fault_pc, tbpf_fault_name(run.fault));
		return -1;
	}
	return 0;
}

/* The program on stdin, as hex bytes or (--asm) the suite's assembler
 * text, into *@insns (free()). 0, or -1 after a message. */
static int program_text(const struct bpf_opts *o, const char *text,
			struct bpf_insn **insns, uint32_t *len)
{
	size_t max = RUN_INSNS_MAX * sizeof(struct bpf_insn);
	char why[128];
	long n;

	if (o->asm_text) {
		if (!uxdp_bpf_asm(text, insns, len))
			return 0;
		tmsg(PROG_NAME, "the program on stdin: %s", uxdp_errmsg());
		return -1;
	}
	*insns = malloc(max);
	if (!*insns) {
		tmsg(PROG_NAME, "%s", strerror(ENOMEM));
		return -1;
	}
	n = hex_bytes(text, (uint8_t *)*insns, max, why, sizeof(why));
	if (n > 0 && n % sizeof(struct bpf_insn) == 0) {
		*len = (uint32_t)(n / sizeof(struct bpf_insn));
		return 0;
	}
	tmsg(PROG_NAME, "the program on stdin: %s", n < 0 ? why :
	     !n ? "no instructions" :
	     "not a whole number of 8-byte instructions");
	return -1;
}

static int cmd_run(struct tool *t, struct bpf_opts *o, int argc,
		   char **argv, int first)
{
	static uint8_t mem[RUN_MEM_MAX];
	struct uxdp_bpf_code *code = NULL;
	struct bpf_insn *insns = NULL;
	uint32_t engine, len = 0;
	uint64_t r0;
	long mlen = 0;
	char why[128], *text;
	int rc = 1;

	(void)t;
	if (argc - first > 0) {
		mlen = hex_bytes(argv[first], mem, sizeof(mem), why,
				 sizeof(why));
		if (mlen < 0)
			tparams_fail(&run_params, "MEMORY: %s", why);
		run_plugin_options(o, argc - first - 1, argv + first + 1);
	}
	engine = tbpf_engine_parse(&run_params, o->engine);
	text = read_stdin();
	if (!text)
		return 1;
	if (program_text(o, text, &insns, &len))
		goto out;
	if (uxdp_bpf_raw_code("stdin", insns, len, 0, &code)) {
		tmsg(PROG_NAME, "%s", uxdp_errmsg());
		goto out;
	}
	/* The raw path counts no back edges (its code has no budget
	 * instructions): a loop that does not end is ended by the clock. */
	signal(SIGALRM, run_timeout);
	alarm(RUN_SECONDS);
	if (run_code(code, engine, mem, (uint64_t)mlen, &r0))
		goto out;
	printf("%llx\n", (unsigned long long)r0);
	rc = 0;
out:
	uxdp_bpf_raw_free(code);
	free(insns);
	free(text);
	return rc;
}

/* ---- main ------------------------------------------------------------------- */

static const struct {
	const char *name;
	struct tparams *params;
	int (*run)(struct tool *t, struct bpf_opts *o, int argc, char **argv,
		   int first);
	const char *help;
} commands[] = {
	{ "dump", &dump_params, cmd_dump,
	  "the programs (what the safety pass proved, the engine, the JIT's "
	  "size, -d the instructions) and the maps" },
	{ "test", &test_params, cmd_test,
	  "run a program on packets (--packet HEX, --pcap FILE): verdicts, "
	  "the bytes it left" },
	{ "check", &check_params, cmd_check,
	  "load every XDP program: exit 0 if all load, else each refusal" },
	{ "run", &run_params, cmd_run,
	  "the bpf_conformance suite's plugin: the program on stdin, r0 out" },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: %s COMMAND [options] FILE.o ...\n\n", PROG_NAME);
	tparams_wrap(f, 0, 0, "XDP eBPF objects as clang writes them, loaded "
		     "as uxdp runs them: no kernel, no root. Each command "
		     "takes --help.");
	fprintf(f, "\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++) {
		fprintf(f, "  %-8s", commands[i].name);
		tparams_wrap(f, 10, 10, commands[i].help);
	}
	exit_help(f);
	fprintf(f, "\nSee %s(1).\n", PROG_NAME);
}

int main(int argc, char **argv)
{
	static struct bpf_opts o;
	static struct tool t = TOOL_INIT(PROG_NAME, &o.run);
	unsigned int i;
	int first;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return tool_exit(&t, 0);
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			break;
	if (i == NCOMMANDS) {
		tmsg(PROG_NAME, "unknown command '%s' (dump, test, check, "
		     "run)",
		     argv[1]);
		fprintf(stderr, "Try '%s --help'.\n", PROG_NAME);
		return 2;
	}
	o.repeat = 1;
	/* The command's own argv: its name is argv[0] to getopt. The
	 * suite's runner calls a plugin with MEMORY (maybe empty) and its
	 * options as one word ("--engine jit"), which getopt would take for
	 * an option of that name: run takes those as they come. */
	if (commands[i].run == cmd_run && argc > 2 && argv[2][0] != '-')
		first = 1;
	else
		first = tparams_parse(commands[i].params, argc - 1, argv + 1,
				      &o);
	return tool_exit(&t, commands[i].run(&t, &o, argc - 1, argv + 1,
					     first));
}
