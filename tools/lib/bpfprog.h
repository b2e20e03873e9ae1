/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * eBPF objects the tools' way (uxdp-bpf, and --prog FILE.o[:NAME] of
 * uxdp-fwd and uxdp-xsk): the FILE.o[:NAME] string, --engine, opening and
 * loading one program of an object with a message that says why it could
 * not be had, its verdicts counted per queue, and what it did, reported at
 * the end as text or JSON.
 *
 * Only the public API (<uxdp/bpf.h>): a loaded program is an ordinary
 * struct uxdp_prog, run with uxdp_prog_run().
 */
#ifndef UXDP_TOOLS_BPFPROG_H
#define UXDP_TOOLS_BPFPROG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#include "params.h"

struct tmap_opts;

/* The kernel's BPF_PROG_TYPE_XDP (enum bpf_prog_type). */
#define TBPF_PROG_TYPE_XDP	6

/* ---- FILE.o[:NAME] and --engine ------------------------------------------ */

struct tbpf_spec {
	char file[4096];
	const char *name;	/* NULL: the object's first XDP program */
	uint32_t flags;		/* the object's UXDP_BPF_F_* */
	/* --map, --map-elem (bpfmaps.h): seeded at load; NULL: none. */
	const struct tmap_opts *maps;
};

/*
 * Whether @spec names an eBPF object: its file part (before a last ':'
 * that follows ".o", else all of it) ends in ".o".
 */
bool tbpf_spec_is_object(const char *spec);

/*
 * Split @spec into @out: FILE.o:NAME at the last ':' when what is before
 * it ends in ".o", else all of it is the file. An empty file or name, or a
 * file name too long, is bad usage: tparams_fail() with @what ("--prog")
 * in front (exit 2).
 */
void tbpf_spec_parse(const struct tparams *p, const char *what,
		     const char *spec, struct tbpf_spec *out);

/* The --engine row's help, and its value: "default" (or NULL), "interp"
 * or "jit" into enum uxdp_bpf_engine; else tparams_fail() (exit 2). */
#define TBPF_ENGINE_HELP						\
	"the eBPF engine: jit, interp, or default (the JIT where there is " \
	"one, else the interpreter) (default default)"
uint32_t tbpf_engine_parse(const struct tparams *p, const char *s);
/* "interp", "jit", "default". */
const char *tbpf_engine_name(uint32_t engine);

/* ---- an object's program, loaded -------------------------------------------- */

struct tbpf_prog {
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *prog;		/* our reference */
	struct uxdp_bpf_program *bprog;	/* the same, in obj */
	const char *name;		/* the program's (in obj) */
	char spec[4200];		/* "FILE.o:NAME", for messages */
};

/*
 * Open @s->file with @engine, leave out every program but the one asked
 * for (so that a sibling the loader refuses is no obstacle), load it, and
 * take its struct uxdp_prog into @out. Returns 0, or -1 after a message
 * on stderr, "PROG: WHAT FILE[:NAME]: why": the file's open error, an
 * unknown name (with the names of the object's XDP programs), a program
 * that is not XDP, an object with no XDP program, or the loader's reason
 * for a refusal, or why a seed of @s->maps could not go in (then every
 * program is loaded if one names a prog array, since its values are the
 * object's programs). @out is cleared first and safe to tbpf_close()
 * after.
 */
int tbpf_load(const char *prog, const char *what, const struct tbpf_spec *s,
	      uint32_t engine, struct tbpf_prog *out);
/* The same, quiet: -1 with the reason in @why instead. */
int tbpf_try_load(const struct tbpf_spec *s, uint32_t engine,
		  struct tbpf_prog *out, char *why, size_t len);
void tbpf_close(struct tbpf_prog *p);

/* "xdp_a, xdp_b": the names of @obj's XDP programs into @buf. */
void tbpf_xdp_names(const struct uxdp_bpf_object *obj, char *buf,
		    size_t len);

/* ---- verdicts ------------------------------------------------------------------ */

#define TBPF_NVERDICTS	(UXDP_ACTION_MAX + 1)

/* "aborted", "drop", "pass", "tx", "redirect" (the JSON keys too). */
const char *tbpf_verdict_name(uint32_t v);

/* One queue's verdict counts: written by its poller only, read by the main
 * thread, on a line of its own so two pollers do not share one. */
struct tbpf_qcount {
	uint64_t v[TBPF_NVERDICTS];
} __attribute__((aligned(UXDP_CACHE_LINE)));

/* Count verdict @v (as uxdp_prog_run() returns it: at most
 * UXDP_ACTION_MAX). One writer; the main thread reads while it runs, so
 * both sides use (relaxed) atomics. */
static inline void tbpf_count(struct tbpf_qcount *c, uint32_t v)
{
	if (v < TBPF_NVERDICTS)
		__atomic_store_n(&c->v[v], c->v[v] + 1, __ATOMIC_RELAXED);
}

/* The sum over @n queues' counts into @out. */
void tbpf_counts_sum(const struct tbpf_qcount *c, unsigned int n,
		     uint64_t out[TBPF_NVERDICTS]);

/* ---- the report ----------------------------------------------------------------- */

/*
 * What @p did: its engine, runs, verdict totals (@v, NULL: not counted),
 * runs aborted and ended by a fault, the last fault and its instruction.
 * Text: "  bpf NAME (ENGINE): R runs: pass N, drop N, ...; aborted A,
 * faults F (last: mem at insn I)\n". JSON: "{"name":...,"engine":...,
 * "runs":R,"verdicts":{...},"aborted":A,"faults":F,...}" (no newline).
 * Returns 0, or -1 if the library would not say (not an eBPF program).
 */
int tbpf_report_text(FILE *f, const struct tbpf_prog *p,
		     const uint64_t *v);
int tbpf_report_json(FILE *f, const struct tbpf_prog *p,
		     const uint64_t *v);

/* "mem", "budget", "depth", "insn", "none" (enum uxdp_bpf_fault). */
const char *tbpf_fault_name(uint32_t fault);

#endif /* UXDP_TOOLS_BPFPROG_H */
