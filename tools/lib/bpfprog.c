/* SPDX-License-Identifier: BSD-2-Clause */
/* eBPF objects the tools' way (bpfprog.h). */
#include <errno.h>
#include <string.h>

#include "bpfmaps.h"
#include "bpfprog.h"
#include "ports.h"
#include "stats.h"

/* ---- FILE.o[:NAME] and --engine ------------------------------------------ */

static bool ends_in_o(const char *s, size_t len)
{
	return len > 2 && s[len - 2] == '.' && s[len - 1] == 'o';
}

/* Where NAME starts in FILE.o:NAME, or NULL: all of @spec is the file. */
static const char *name_part(const char *spec)
{
	const char *colon = strrchr(spec, ':');

	return colon && ends_in_o(spec, (size_t)(colon - spec)) ? colon + 1 :
	       NULL;
}

bool tbpf_spec_is_object(const char *spec)
{
	const char *name = name_part(spec);

	return name || ends_in_o(spec, strlen(spec));
}

void tbpf_spec_parse(const struct tparams *p, const char *what,
		     const char *spec, struct tbpf_spec *out)
{
	const char *name = name_part(spec);
	size_t len = name ? (size_t)(name - 1 - spec) : strlen(spec);
	const char *sep = *what ? " " : "";

	if (!len)
		tparams_fail(p, "%s%s'%s': no object file", what, sep, spec);
	if (name && !*name)
		tparams_fail(p, "%s%s'%s': FILE.o:NAME with no NAME (leave "
			     "out the ':' for the object's first XDP "
			     "program)", what, sep, spec);
	if (len >= sizeof(out->file))
		tparams_fail(p, "%s%sfile name longer than %zu characters",
			     what, *what ? ": " : "", sizeof(out->file) - 1);
	memcpy(out->file, spec, len);
	out->file[len] = '\0';
	out->name = name;
	out->flags = 0;
	out->maps = NULL;
}

static const char *const engine_names[] = {
	[UXDP_BPF_ENGINE_DEFAULT] = "default",
	[UXDP_BPF_ENGINE_INTERP] = "interp",
	[UXDP_BPF_ENGINE_JIT] = "jit",
};

uint32_t tbpf_engine_parse(const struct tparams *p, const char *s)
{
	uint32_t i;

	if (!s)
		return UXDP_BPF_ENGINE_DEFAULT;
	for (i = 0; i < sizeof(engine_names) / sizeof(engine_names[0]); i++)
		if (!strcmp(s, engine_names[i]))
			return i;
	tparams_fail(p, "--engine '%s': interp, jit or default", s);
}

const char *tbpf_engine_name(uint32_t engine)
{
	return engine < sizeof(engine_names) / sizeof(engine_names[0]) ?
	       engine_names[engine] : "?";
}

/* ---- an object's program, loaded -------------------------------------------- */

void tbpf_xdp_names(const struct uxdp_bpf_object *obj, char *buf,
		    size_t len)
{
	const struct uxdp_bpf_program *p = NULL;
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		int n;

		if (uxdp_bpf_program_type(p) != TBPF_PROG_TYPE_XDP)
			continue;
		n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
			     uxdp_bpf_program_name(p));
		if (n < 0 || (size_t)n >= len - at)
			break;	/* cut: a message, not data */
		at += (size_t)n;
	}
}

/* The program @s asks for, or NULL with the reason in @why. */
static struct uxdp_bpf_program *pick(const struct tbpf_prog *out,
				     const struct tbpf_spec *s, char *why,
				     size_t len)
{
	struct uxdp_bpf_program *p = NULL;
	char names[512];

	if (!s->name) {
		while ((p = uxdp_bpf_object_next_program(out->obj, p)))
			if (uxdp_bpf_program_type(p) == TBPF_PROG_TYPE_XDP)
				return p;
		snprintf(why, len, "no XDP program in the object");
		return NULL;
	}
	p = uxdp_bpf_object_find_program(out->obj, s->name);
	tbpf_xdp_names(out->obj, names, sizeof(names));
	if (!p) {
		snprintf(why, len, "no program '%s' in %s; its XDP programs: "
			 "%s", s->name, s->file, *names ? names : "none");
		return NULL;
	}
	if (uxdp_bpf_program_type(p) != TBPF_PROG_TYPE_XDP) {
		snprintf(why, len, "program '%s' (section '%s') is not an XDP "
			 "program; its XDP programs: %s", s->name,
			 uxdp_bpf_program_section(p), *names ? names : "none");
		return NULL;
	}
	return p;
}

static int try_load(const struct tbpf_spec *s, uint32_t engine, bool alone,
		    struct tbpf_prog *out, char *why, size_t len)
{
	struct uxdp_bpf_object_opts opts = {
		.sz = sizeof(opts),
		.engine = engine,
		.flags = s->flags,
	};
	struct uxdp_bpf_program *p, *q = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(out->spec, sizeof(out->spec), "%s%s%s", s->file,
		 s->name ? ":" : "", s->name ? s->name : "");
	out->obj = uxdp_bpf_object_open(s->file, &opts);
	if (!out->obj) {
		const char *m = tports_why(errno);
		size_t n = strlen(s->file);

		/* The library names the file; the message does already. */
		if (!strncmp(m, s->file, n) && !strncmp(m + n, ": ", 2))
			m += n + 2;
		snprintf(why, len, "%s", m);
		return -1;
	}
	p = pick(out, s, why, len);
	if (!p)
		return -1;
	/* A prog array seeded by name takes the object's other programs. */
	if (tmap_seeds_progs(s->maps, out->obj))
		alone = false;
	/* Only this one: a sibling the loader would refuse does not stand
	 * in its way. Programs of other types are never loaded. */
	while (alone && (q = uxdp_bpf_object_next_program(out->obj, q)))
		if (q != p &&
		    uxdp_bpf_program_type(q) == TBPF_PROG_TYPE_XDP &&
		    uxdp_bpf_program_set_autoload(q, false))
			goto fail;
	if (s->maps && tmap_seed_global(s->maps, out->obj, why, len))
		return -1;
	err = uxdp_bpf_object_load(out->obj);
	if (err) {
		errno = -err;
		goto fail;
	}
	out->prog = uxdp_bpf_program_prog(p);
	if (!out->prog)
		goto fail;
	if (s->maps && tmap_seed_maps(s->maps, out->obj, why, len))
		return -1;
	out->bprog = p;
	out->name = uxdp_bpf_program_name(p);
	return 0;
fail:
	err = errno;
	snprintf(why, len, "%s", tports_why(err));
	errno = err;
	return -1;
}

int tbpf_try_load(const struct tbpf_spec *s, uint32_t engine,
		  struct tbpf_prog *out, char *why, size_t len)
{
	if (!try_load(s, engine, true, out, why, len))
		return 0;
	/* EBADF: a prog array's initialiser names a sibling, which must be
	 * loaded too (as libbpf's load says): all of them, then. */
	if (errno != EBADF)
		return -1;
	tbpf_close(out);
	return try_load(s, engine, false, out, why, len);
}

int tbpf_load(const char *prog, const char *what, const struct tbpf_spec *s,
	      uint32_t engine, struct tbpf_prog *out)
{
	char why[1024];

	if (!tbpf_try_load(s, engine, out, why, sizeof(why)))
		return 0;
	tmsg(prog, "%s%s%s: %s", what, *what ? " " : "", out->spec, why);
	return -1;
}

void tbpf_close(struct tbpf_prog *p)
{
	if (p->prog)
		uxdp_prog_put(p->prog);
	uxdp_bpf_object_close(p->obj);
	p->prog = NULL;
	p->obj = NULL;
}

/* ---- verdicts ------------------------------------------------------------------ */

static const char *const verdict_names[TBPF_NVERDICTS] = {
	[UXDP_ABORTED] = "aborted",
	[UXDP_DROP] = "drop",
	[UXDP_PASS] = "pass",
	[UXDP_TX] = "tx",
	[UXDP_REDIRECT] = "redirect",
};

const char *tbpf_verdict_name(uint32_t v)
{
	return v < TBPF_NVERDICTS ? verdict_names[v] : "?";
}

void tbpf_counts_sum(const struct tbpf_qcount *c, unsigned int n,
		     uint64_t out[TBPF_NVERDICTS])
{
	unsigned int i, v;

	memset(out, 0, TBPF_NVERDICTS * sizeof(out[0]));
	for (i = 0; c && i < n; i++)
		for (v = 0; v < TBPF_NVERDICTS; v++)
			out[v] += __atomic_load_n(&c[i].v[v],
						  __ATOMIC_RELAXED);
}

/* ---- the report ----------------------------------------------------------------- */

static const char *const fault_names[] = {
	[UXDP_BPF_FAULT_NONE] = "none",
	[UXDP_BPF_FAULT_MEM] = "mem",
	[UXDP_BPF_FAULT_BUDGET] = "budget",
	[UXDP_BPF_FAULT_DEPTH] = "depth",
	[UXDP_BPF_FAULT_INSN] = "insn",
};

const char *tbpf_fault_name(uint32_t fault)
{
	return fault < sizeof(fault_names) / sizeof(fault_names[0]) ?
	       fault_names[fault] : "?";
}

static int info_of(const struct tbpf_prog *p, struct uxdp_bpf_prog_info *in)
{
	memset(in, 0, sizeof(*in));
	in->sz = sizeof(*in);
	return p->prog ? uxdp_bpf_prog_info(p->prog, in) : -EINVAL;
}

int tbpf_report_text(FILE *f, const struct tbpf_prog *p, const uint64_t *v)
{
	struct uxdp_bpf_prog_info in;
	char a[32], b[32];
	unsigned int i;
	bool first = true;

	if (info_of(p, &in))
		return -1;
	fprintf(f, "  bpf %s (%s): %s run%s", p->name,
		tbpf_engine_name(in.engine),
		tstats_fmt_count(a, sizeof(a), in.runs),
		in.runs == 1 ? "" : "s");
	for (i = 0; v && i < TBPF_NVERDICTS; i++) {
		if (!v[i])
			continue;
		fprintf(f, "%s %s %s", first ? ":" : ",", verdict_names[i],
			tstats_fmt_count(a, sizeof(a), v[i]));
		first = false;
	}
	fprintf(f, "; aborted %s, faults %s",
		tstats_fmt_count(a, sizeof(a), in.aborted),
		tstats_fmt_count(b, sizeof(b), in.faults));
	if (in.faults)
		fprintf(f, " (last: %s at insn %u)",
			tbpf_fault_name(in.last_fault), in.last_fault_insn);
	fputc('\n', f);
	return 0;
}

int tbpf_report_json(FILE *f, const struct tbpf_prog *p, const uint64_t *v)
{
	struct uxdp_bpf_prog_info in;
	unsigned int i;

	if (info_of(p, &in))
		return -1;
	fprintf(f, "{\"name\":");
	tjson_str(f, p->name);
	fprintf(f, ",\"object\":");
	tjson_str(f, p->spec);
	fprintf(f, ",\"engine\":\"%s\",\"runs\":%llu",
		tbpf_engine_name(in.engine), (unsigned long long)in.runs);
	if (v) {
		fprintf(f, ",\"verdicts\":{");
		for (i = 0; i < TBPF_NVERDICTS; i++)
			fprintf(f, "%s\"%s\":%llu", i ? "," : "",
				verdict_names[i], (unsigned long long)v[i]);
		fputc('}', f);
	}
	fprintf(f, ",\"aborted\":%llu,\"faults\":%llu,\"last_fault\":\"%s\"",
		(unsigned long long)in.aborted, (unsigned long long)in.faults,
		tbpf_fault_name(in.last_fault));
	if (in.faults)
		fprintf(f, ",\"last_fault_insn\":%u", in.last_fault_insn);
	fputc('}', f);
	return 0;
}
