/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Differential test of the bpf layer against the running kernel, with
 * BPF_PROG_TEST_RUN only (nothing is attached, nothing transmitted).
 *
 * The conformance suite (../shared/bpf-conformance, or
 * UXDP_BPF_CONFORMANCE_DIR): each program is loaded into the kernel as an
 * XDP program, wrapped so that it sees the suite's calling convention:
 *
 *	prologue	r2 = data_end; r1 = data; check data + L <= data_end
 *			(L: the file's memory length), r2 = L
 *	epilogue	the program's r0 (all 64 bits) stored in a one-entry
 *			array map, r0 = XDP_PASS
 *	program		as the file has it, each exit of the main function a
 *			jump to the epilogue, each call of the suite's helper 5
 *			a call of an appended subprogram "r0 = r1"
 *
 * and run on the file's memory as the packet (padded to the 14 bytes the
 * kernel wants at least). The kernel's r0 and memory after are compared
 * with both of uxdp's engines (the raw path, as test_bpf_conformance runs
 * them) and with the file's result. What the kernel's verifier refuses is
 * counted and named with its log's last line, never compared.
 *
 * A difference where the kernel ran the program fails the test, unless a
 * rule of t_kernel_rules.h that the running kernel follows in its older
 * form explains it; the rules are probed, and printed with the release.
 *
 * The corpus (tests/bpf/, built): each XDP program that the kernel's
 * verifier accepts (loaded alone by libbpf, maps in the kernel) and uxdp
 * loads, through BPF_PROG_TEST_RUN and uxdp_bpf_prog_test_run() on both
 * engines with the same packets: valid frames, each cut at every header
 * boundary, random bytes from a printed seed (UXDP_BPF_KDIFF_SEED repeats
 * it), some with metadata and the ifindex and queues of a veth in a
 * namespace of the test's own in the context. Verdict, output bytes and
 * length and metadata must agree packet by packet, and every array (global
 * data too) after the program's packets, and after every packet where the
 * object's arrays are small (what ctx and helpers store of each run).
 *
 * UXDP_BPF_F_KERNEL_VERIFY: with it, uxdp loads an object exactly when it
 * loads it without and the kernel accepts its XDP programs, and a refusal
 * carries the kernel's reason.
 *
 * Needs root, or CAP_BPF and CAP_PERFMON (pointers in the suite's
 * programs); skips loudly otherwise, and fails under UXDP_CI=1.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "t_bpf.h"
#include "t_kernel_rules.h"
#include "../tools/lib/katran.h"

#ifndef UXDP_BPF_CONFORMANCE_DIR
#define UXDP_BPF_CONFORMANCE_DIR "../shared/bpf-conformance"
#endif

#define T_XDP_PASS	2
#define T_ETH_HLEN	14
#define T_LOG_SIZE	(1U << 20)
#define T_DEBIAN_BPF_DIR "/usr/lib/x86_64-linux-gnu/bpf"

static struct t_krules krules;
static char *vlog;		/* the verifier's log, T_LOG_SIZE */

/* ---- the kernel side ------------------------------------------------------ */

/*
 * Load @insns as an XDP program: its fd, or -errno with the verifier's
 * reason in vlog (uxdp_bpf_kverify_reason()).
 */
static int kprog_load(const char *name, const struct bpf_insn *insns,
		      uint32_t len)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = vlog,
		    .log_size = T_LOG_SIZE, .log_level = 0);
	char kname[16];
	int fd;

	snprintf(kname, sizeof(kname), "%.15s", name);
	for (char *c = kname; *c; c++)
		if (!isalnum((unsigned char)*c))
			*c = '_';
	vlog[0] = '\0';
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, kname, "GPL", insns, len, &o);
	if (fd >= 0)
		return fd;
	fd = -errno;
	if (!vlog[0]) {
		/* Again with the log on, for the reason. */
		o.log_level = 1;
		bpf_prog_load(BPF_PROG_TYPE_XDP, kname, "GPL", insns, len, &o);
	}
	if (!vlog[0])
		snprintf(vlog, T_LOG_SIZE, "%s", strerror(-fd));
	return fd;
}

/* One BPF_PROG_TEST_RUN: 0 or -errno; out and *out_len get data_out. */
static int kprog_run(int fd, const void *in, uint32_t in_len, void *out,
		     uint32_t *out_len, uint32_t *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = in_len, .data_out = out,
		    .data_size_out = *out_len, .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*out_len = o.data_size_out;
	*retval = o.retval;
	return 0;
}

/*
 * Can this process load and run XDP programs? Skips the whole program,
 * loudly, if not.
 */
static void need_kernel_bpf(void)
{
	const struct bpf_insn pass[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0,
		  .imm = T_XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint8_t pkt[64] = { 0 }, out[64];
	uint32_t out_len = sizeof(out), ret = 0;
	int fd, err;

	vlog = malloc(T_LOG_SIZE);
	assert_non_null(vlog);
	fd = kprog_load("kdiff_probe", pass, 2);
	if (fd < 0)
		t_skip_program("the kernel loads no XDP program for this "
			       "process (%s: %s): test_bpf_kernel needs root, "
			       "or CAP_BPF and CAP_PERFMON", strerror(-fd),
			       uxdp_bpf_kverify_reason(vlog));
	err = kprog_run(fd, pkt, sizeof(pkt), out, &out_len, &ret);
	close(fd);
	if (err || ret != T_XDP_PASS)
		t_skip_program("BPF_PROG_TEST_RUN does not run XDP programs "
			       "here (%s, retval %u)", strerror(-err), ret);
	t_krules_init(&krules);
}

/* ---- the conformance suite ------------------------------------------------ */

static const char *suite_dir(void)
{
	const char *env = getenv("UXDP_BPF_CONFORMANCE_DIR");

	return env && *env ? env : UXDP_BPF_CONFORMANCE_DIR;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of @path whose names end in @ext, sorted; NULL: no folder. */
static char **dir_files(const char *path, const char *ext, size_t *n)
{
	char **v = NULL;
	struct dirent *e;
	DIR *dir = opendir(path);

	*n = 0;
	if (!dir)
		return NULL;
	while ((e = readdir(dir))) {
		const char *dot = strrchr(e->d_name, '.');

		if (!dot || strcmp(dot, ext))
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		assert_non_null(v);
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(dir);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* The suite's .data files of tests/, sorted; skips loudly without it. */
static char **suite_files(size_t *n)
{
	char path[1024], **v;

	snprintf(path, sizeof(path), "%s/tests", suite_dir());
	v = dir_files(path, ".data", n);
	if (!v)
		t_skip_program("no conformance suite at %s (set "
			       "UXDP_BPF_CONFORMANCE_DIR)", suite_dir());
	return v;
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src,
			    int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst,
				  .src_reg = src, .off = off, .imm = imm };
}

/*
 * The wrapper's layout, in insns: the prologue (0..6), a failed check
 * (r0 = 0, on into the epilogue), the epilogue, then the program.
 */
#define WRAP_FAIL	7
#define WRAP_EPI	8
#define WRAP_HEAD	13

/*
 * @prog (@len insns, the suite's convention, @mem_len bytes of memory) as
 * an XDP program for the kernel, r0 going to the map @r0_fd: a new array
 * in *@out, its length in *@out_len.
 */
static int wrap_suite_prog(const struct bpf_insn *prog, uint32_t len,
			   uint32_t mem_len, int r0_fd, struct bpf_insn **out,
			   uint32_t *out_len)
{
	uint32_t main_end = len, i, n = 0, helper_at;
	bool helper5 = false;
	struct bpf_insn *w;

	/* The main function ends where the first subprogram starts. */
	for (i = 0; i < len; i++) {
		const struct bpf_insn *in = &prog[i];

		if (in->code == (BPF_JMP | BPF_CALL) &&
		    in->src_reg == BPF_PSEUDO_CALL) {
			int64_t t = (int64_t)i + 1 + in->imm;

			if (t > 0 && t < main_end)
				main_end = (uint32_t)t;
		}
		if (in->code == (BPF_JMP | BPF_CALL) && !in->src_reg &&
		    in->imm == UXDP_BPF_RAW_HELPER)
			helper5 = true;
	}
	w = calloc(WRAP_HEAD + len + 2, sizeof(*w));
	if (!w)
		return -ENOMEM;
	/* r2 = data_end, r1 = data; r1 + L <= r2 or fail; r2 = L. */
	w[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 4, 0);
	w[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 1, 1, 0, 0);
	w[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, (int32_t)mem_len);
	w[n++] = insn(BPF_JMP | BPF_JGT | BPF_X, 1, 2, WRAP_FAIL - 4, 0);
	w[n++] = insn(BPF_ALU64 | BPF_SUB | BPF_K, 1, 0, 0, (int32_t)mem_len);
	w[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)mem_len);
	w[n++] = insn(BPF_JMP | BPF_JA, 0, 0, WRAP_HEAD - 7, 0);
	assert_int_equal(n, WRAP_FAIL);
	w[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	/* The epilogue: the map's value = r0; r0 = XDP_PASS; exit. */
	w[n++] = insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0,
		      r0_fd);
	w[n++] = insn(0, 0, 0, 0, 0);
	w[n++] = insn(BPF_STX | BPF_MEM | BPF_DW, 1, 0, 0, 0);
	w[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, T_XDP_PASS);
	w[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	assert_int_equal(n, WRAP_HEAD);
	helper_at = WRAP_HEAD + len;
	for (i = 0; i < len; i++) {
		struct bpf_insn in = prog[i];
		uint32_t at = WRAP_HEAD + i;

		if (i < main_end && in.code == (BPF_JMP | BPF_EXIT))
			in = insn(BPF_JMP | BPF_JA, 0, 0,
				  (int16_t)((int64_t)WRAP_EPI -
					    (int64_t)(at + 1)), 0);
		else if (in.code == (BPF_JMP | BPF_CALL) && !in.src_reg &&
			 in.imm == UXDP_BPF_RAW_HELPER)
			in = insn(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0,
				  (int32_t)helper_at - (int32_t)(at + 1));
		w[n++] = in;
		/* The second half of a lddw is not an instruction. */
		if (prog[i].code == (BPF_LD | BPF_IMM | BPF_DW) && i + 1 < len)
			w[n++] = prog[++i];
	}
	if (helper5) {
		w[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0);
		w[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
	*out = w;
	*out_len = n;
	return 0;
}

/* What one side made of a suite program. */
struct suite_side {
	bool ran;
	uint64_t r0;
	uint8_t *mem;		/* the memory after, mem_len bytes */
};

enum { SIDE_KERNEL, SIDE_INTERP, SIDE_JIT, SIDE_COUNT };
static const char *const side_name[SIDE_COUNT] = {
	"kernel", "interpreter", "jit",
};

/* Run @code on a copy of @d's memory with one of uxdp's engines. */
static void uxdp_suite_run(struct uxdp_bpf_code *code, int side,
			   const struct t_bpf_data *d, struct suite_side *s,
			   char *why, size_t whylen)
{
	struct uxdp_bpf_run run = { .code = code, .mem_len = d->mem_len };
	struct uxdp_bpf_jit *jit = NULL;

	s->mem = calloc(1, d->mem_len + 1);
	assert_non_null(s->mem);
	memcpy(s->mem, d->mem ?: (uint8_t *)"", d->mem_len);
	run.mem = s->mem;
	if (side == SIDE_INTERP) {
		s->r0 = uxdp_bpf_interp_run(&run, (uintptr_t)s->mem,
					    d->mem_len);
	} else {
		if (uxdp_bpf_jit_compile(code, &jit)) {
			snprintf(why, whylen, "the JIT refused it: %s",
				 uxdp_errmsg());
			return;
		}
		s->r0 = uxdp_bpf_jit_run(jit, &run, (uintptr_t)s->mem,
					 d->mem_len);
		uxdp_bpf_jit_free(jit);
	}
	if (run.fault) {
		snprintf(why, whylen, "%s: fault %u at insn %u",
			 side_name[side], run.fault, run.fault_pc);
		return;
	}
	s->ran = true;
}

/* The kernel's run of @prog on @d's memory; its verifier's reason in @why. */
static void kernel_suite_run(const char *file, const struct bpf_insn *prog,
			     uint32_t len, const struct t_bpf_data *d,
			     int r0_fd, struct suite_side *s, char *why,
			     size_t whylen)
{
	const uint64_t poison = 0x5a5a5a5a5a5a5a5aULL;
	uint32_t pkt_len = d->mem_len < T_ETH_HLEN ? T_ETH_HLEN :
			   (uint32_t)d->mem_len;
	uint32_t wlen = 0, out_len = pkt_len, retval = 0, key = 0;
	uint8_t *pkt = calloc(1, pkt_len), *out = calloc(1, pkt_len);
	struct bpf_insn *w = NULL;
	int fd, err;

	assert_non_null(pkt);
	assert_non_null(out);
	memcpy(pkt, d->mem ?: (uint8_t *)"", d->mem_len);
	assert_int_equal(wrap_suite_prog(prog, len, d->mem_len, r0_fd, &w,
					 &wlen), 0);
	fd = kprog_load(file, w, wlen);
	free(w);
	if (fd < 0) {
		snprintf(why, whylen, "%s", uxdp_bpf_kverify_reason(vlog));
		goto out;
	}
	assert_int_equal(bpf_map_update_elem(r0_fd, &key, &poison, BPF_ANY),
			 0);
	err = kprog_run(fd, pkt, pkt_len, out, &out_len, &retval);
	close(fd);
	if (err || retval != T_XDP_PASS || out_len != pkt_len) {
		snprintf(why, whylen, "BPF_PROG_TEST_RUN: %s, retval %u, "
			 "%u bytes out", strerror(-err), retval, out_len);
		goto out;
	}
	assert_int_equal(bpf_map_lookup_elem(r0_fd, &key, &s->r0), 0);
	s->mem = out;
	out = NULL;
	s->ran = true;
out:
	free(pkt);
	free(out);
}

/* Counts of the suite's run through the kernel. */
struct suite_counts {
	unsigned int files, refusal_files, kernel_ran, uxdp_ran, compared;
	unsigned int equal, differ, explained, kernel_vs_file, not_run;
};

/*
 * One file: 1 if it shows an unexplained difference between the kernel and
 * uxdp (printed), else 0.
 */
static int suite_file(const char *file, int r0_fd, struct suite_counts *c)
{
	struct suite_side side[SIDE_COUNT] = { 0 };
	char path[1024], why[SIDE_COUNT][512] = { "" }, diff[1024] = "";
	struct uxdp_bpf_code *code = NULL;
	struct bpf_insn *insns = NULL;
	struct t_bpf_data d;
	uint32_t len = 0;
	unsigned int rules;
	int s, bad = 0;

	snprintf(path, sizeof(path), "%s/tests/%s", suite_dir(), file);
	if (t_bpf_data_read(path, &d, why[0], sizeof(why[0]))) {
		printf("FAIL %s: unreadable: %s\n", file, why[0]);
		return 1;
	}
	c->files++;
	if (d.asm_text ? uxdp_bpf_asm(d.asm_text, &insns, &len) :
			 uxdp_bpf_asm_raw(d.raw_text, &insns, &len)) {
		printf("FAIL %s: uxdp's assembler: %s\n", file, uxdp_errmsg());
		t_bpf_data_free(&d);
		return 1;
	}
	rules = t_krules_bpf_covers(&krules, insns, len);
	if (rules & 1U << T_KR_BPF_SDIV_TRAP) {
		/* It could oops this kernel: not run there. */
		c->not_run++;
		t_krules_note(&krules, 1U << T_KR_BPF_SDIV_TRAP, file);
		snprintf(why[SIDE_KERNEL], sizeof(why[0]), "not run");
	} else {
		kernel_suite_run(file, insns, len, &d, r0_fd,
				 &side[SIDE_KERNEL], why[SIDE_KERNEL],
				 sizeof(why[0]));
	}
	if (!uxdp_bpf_raw_code(file, insns, len, 0, &code)) {
		uxdp_suite_run(code, SIDE_INTERP, &d, &side[SIDE_INTERP],
			       why[SIDE_INTERP], sizeof(why[0]));
		uxdp_suite_run(code, SIDE_JIT, &d, &side[SIDE_JIT],
			       why[SIDE_JIT], sizeof(why[0]));
		uxdp_bpf_raw_free(code);
	} else {
		snprintf(why[SIDE_INTERP], sizeof(why[0]), "refused: %s",
			 uxdp_errmsg());
	}
	c->kernel_ran += side[SIDE_KERNEL].ran;
	c->uxdp_ran += side[SIDE_INTERP].ran && side[SIDE_JIT].ran;
	if (d.has_error) {
		/* Expected to be refused: nothing to compare. */
		c->refusal_files++;
		printf("%s: expects a refusal: kernel %s%s%s, uxdp %s\n", file,
		       side[SIDE_KERNEL].ran ? "ran it" : "refused it (",
		       side[SIDE_KERNEL].ran ? "" : why[SIDE_KERNEL],
		       side[SIDE_KERNEL].ran ? "" : ")",
		       side[SIDE_INTERP].ran ? "ran it" : "refused it");
		goto out;
	}
	if (!side[SIDE_KERNEL].ran) {
		printf("kernel refused %s: %s\n", file, why[SIDE_KERNEL]);
		goto out;
	}
	c->compared++;
	for (s = SIDE_INTERP; s < SIDE_COUNT && !diff[0]; s++) {
		const struct suite_side *k = &side[SIDE_KERNEL], *u = &side[s];

		if (!u->ran)
			snprintf(diff, sizeof(diff), "the kernel ran it (r0 "
				 "0x%" PRIx64 "), uxdp's %s did not: %s", k->r0,
				 side_name[s], why[s][0] ? why[s] :
				 why[SIDE_INTERP]);
		else if (u->r0 != k->r0)
			snprintf(diff, sizeof(diff), "r0: kernel 0x%" PRIx64
				 ", %s 0x%" PRIx64 " (the file: 0x%" PRIx64
				 ")", k->r0, side_name[s], u->r0, d.result);
		else if (d.mem_len && memcmp(u->mem, k->mem, d.mem_len)) {
			size_t i = 0;

			while (u->mem[i] == k->mem[i])
				i++;
			snprintf(diff, sizeof(diff), "memory after, byte %zu: "
				 "kernel 0x%02x, %s 0x%02x", i, k->mem[i],
				 side_name[s], u->mem[i]);
		}
	}
	if (!diff[0]) {
		c->equal++;
		if (side[SIDE_KERNEL].r0 != d.result) {
			/* uxdp and the kernel agree against the file */
			c->kernel_vs_file++;
			printf("%s: kernel and uxdp agree on r0 0x%" PRIx64
			       ", the file says 0x%" PRIx64 "\n", file,
			       side[SIDE_KERNEL].r0, d.result);
		}
		goto out;
	}
	c->differ++;
	if (rules) {
		char what[1300];

		/* An older rule of this kernel covers the program. */
		c->explained++;
		snprintf(what, sizeof(what), "%s: %s", file, diff);
		t_krules_note(&krules, rules, what);
		goto out;
	}
	bad = 1;
	printf("DIFFERENCE %s: %s\n", file, diff);
out:
	for (s = 0; s < SIDE_COUNT; s++)
		free(side[s].mem);
	free(insns);
	t_bpf_data_free(&d);
	return bad;
}

/*
 * Which form of each instruction rule the kernel follows: the probes run
 * as suite programs (no memory), the rest decided by the release.
 */
static void probe_rules(int r0_fd)
{
	struct t_bpf_data none = { 0 };
	unsigned int i;
	int fd;

	t_krules_bpf_release_rules(&krules);
	for (i = 0; i < t_krules_bpf_nprobes; i++) {
		const struct t_bpf_probe *p = &t_krules_bpf_probes[i];
		const struct bpf_insn prog[] = {
			insn(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, (int32_t)p->a),
			insn(0, 0, 0, 0, (int32_t)(p->a >> 32)),
			insn(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, (int32_t)p->b),
			insn(0, 0, 0, 0, (int32_t)(p->b >> 32)),
			insn(p->code, 0, 1, p->off, 0),
			insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};
		struct suite_side k = { 0 };
		char why[512];

		kernel_suite_run(t_krule_info[p->rule].name, prog, 6, &none,
				 r0_fd, &k, why, sizeof(why));
		t_krules_bpf_probe_answer(&krules, p, k.ran, k.r0);
		free(k.mem);
	}
	fd = open("/proc/sys/net/core/bpf_jit_enable", O_RDONLY);
	if (fd >= 0) {
		char v[8] = "";

		if (read(fd, v, sizeof(v) - 1) > 0)
			printf("kernel %s: bpf_jit_enable %s", krules.release,
			       v);
		close(fd);
	}
	t_krules_print(&krules, stdout);
}

static void test_conformance(void **state)
{
	struct suite_counts c = { 0 };
	size_t n, i;
	char **files = suite_files(&n);
	unsigned int bad = 0;
	int r0_fd;

	(void)state;
	assert_true(n > 300);	/* the suite has 313: not a partial copy */
	r0_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "kdiff_r0", 4, 8, 1, NULL);
	assert_true(r0_fd >= 0);
	probe_rules(r0_fd);
	for (i = 0; i < n; i++) {
		bad += suite_file(files[i], r0_fd, &c);
		free(files[i]);
	}
	free(files);
	close(r0_fd);
	printf("conformance against kernel %s: %u tests (%u expect a "
	       "refusal), %u accepted by the kernel's verifier, %u run by "
	       "both uxdp engines; of the %u compared: %u equal, %u differ "
	       "(%u explained by an older kernel rule); %u where kernel and "
	       "uxdp agree against the file; %u not run in the kernel (an "
	       "older rule)\n", krules.release, c.files, c.refusal_files,
	       c.kernel_ran, c.uxdp_ran, c.compared, c.equal, c.differ,
	       c.explained, c.kernel_vs_file, c.not_run);
	t_krules_print_summary(&krules, stdout);
	assert_int_equal(bad, 0);
}

/* ---- the corpus ----------------------------------------------------------- */

#ifdef T_BPF_DIR

#include <uxdp/bpf.h>

#define T_PKT_MAX	3520	/* the kernel's: 4096 - 256 - 320 */
#define T_RANDOM_PKTS	200

/* One test packet: bytes, length, metadata in front, the context. */
struct t_pkt {
	uint8_t data[T_PKT_MAX];
	uint32_t len;		/* metadata included */
	uint32_t meta;
	uint32_t ifindex;	/* lo's, or a device's (ctx_dev()) */
	uint32_t rxq;
	const char *what;
};

struct t_pkts {
	struct t_pkt *v;
	unsigned int n, cap;
};

static struct t_pkt *pkt_add(struct t_pkts *p, const char *what)
{
	struct t_pkt *k;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	k = &p->v[p->n++];
	memset(k, 0, sizeof(*k));
	k->what = what;
	/* The kernel's test run is always on a device: its namespace's lo
	 * when ctx_in names none. Name it, on both sides (ctx_default()
	 * looks at the unnamed case). */
	k->ifindex = 1;
	return k;
}

static uint16_t csum16(const uint8_t *b, size_t n)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (n & 1)
		sum += (uint32_t)b[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * A valid frame into @b: Ethernet (with a VLAN tag if @vlan), then by
 * @l3: 4 IPv4 (@ihl words of header, @proto 17 UDP / 6 TCP / 1 ICMP), 6
 * IPv6 (UDP), 0 ARP; @payload bytes after the L4 header. Its length, and
 * the header boundaries in @cut (the offsets where each header ends).
 */
static uint32_t frame(uint8_t *b, bool vlan, int l3, unsigned int ihl,
		      uint8_t proto, uint16_t dport, uint32_t payload,
		      uint32_t *cut, unsigned int *ncut)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	uint32_t off = 12, l4len, i;

	*ncut = 0;
	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	if (vlan) {
		put16(b + off, 0x8100);
		put16(b + off + 2, 42);
		off += 4;
	}
	put16(b + off, l3 == 4 ? 0x0800 : l3 == 6 ? 0x86dd : 0x0806);
	off += 2;
	cut[(*ncut)++] = off;
	if (!l3) {		/* an ARP request */
		static const uint8_t arp[28] = {
			0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1,
			0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
		};

		memcpy(b + off, arp, sizeof(arp));
		off += sizeof(arp);
		cut[(*ncut)++] = off;
		return off;
	}
	l4len = (proto == 6 ? 20 : 8) + payload;
	if (l3 == 4) {
		uint8_t *ip = b + off;

		memset(ip, 0, ihl * 4);
		ip[0] = (uint8_t)(0x40 | ihl);
		put16(ip + 2, (uint16_t)(ihl * 4 + l4len));
		ip[8] = 64;
		ip[9] = proto;
		ip[12] = 10, ip[15] = 1;
		ip[16] = 10, ip[19] = 2;
		for (i = 20; i < ihl * 4; i++)
			ip[i] = 1;	/* options: no-ops */
		put16(ip + 10, csum16(ip, ihl * 4));
		off += ihl * 4;
	} else {
		uint8_t *ip = b + off;

		memset(ip, 0, 40);
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)l4len);
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0xfd, ip[23] = 1;
		ip[24] = 0xfd, ip[39] = 2;
		off += 40;
	}
	cut[(*ncut)++] = off;
	put16(b + off, 40000);
	put16(b + off + 2, dport);
	if (proto == 6) {
		memset(b + off + 4, 0, 16);
		b[off + 12] = 5 << 4;
		b[off + 13] = 0x02;	/* SYN */
	} else {
		put16(b + off + 4, (uint16_t)l4len);
		put16(b + off + 6, 0);
	}
	off += proto == 6 ? 20 : 8;
	cut[(*ncut)++] = off;
	for (i = 0; i < payload; i++)
		b[off + i] = (uint8_t)(i * 7 + 3);
	return off + payload;
}

/* The device whose ifindex and queues the context names. */
struct t_ctx_dev {
	uint32_t ifindex;
	uint32_t nrxq;
};

/*
 * A device with 4 queues for the context: a veth pair in a network
 * namespace of this process's own (nothing is sent on it; the namespace
 * goes with the process). Failing that, lo and its one queue.
 */
static struct t_ctx_dev ctx_dev(void)
{
	struct t_ctx_dev d = { 1, 1 };
	char cmd[160], name[16];

	snprintf(name, sizeof(name), "kd%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip link add %s numrxqueues 4 type veth "
		 "peer name %sp numrxqueues 4", name, name);
	if (unshare(CLONE_NEWNET) || system(cmd) ||
	    !(d.ifindex = if_nametoindex(name))) {
		printf("no veth in a namespace of our own (%s): the context "
		       "names lo, queue 0\n", strerror(errno));
		d.ifindex = 1;
		return d;
	}
	d.nrxq = 4;
	printf("context: %s (ifindex %u, 4 queues) in a namespace of this "
	       "process\n", name, d.ifindex);
	return d;
}

/*
 * Every packet a program gets: valid frames, each cut at every header
 * boundary (and a byte either side), random bytes from @seed, some with
 * metadata in front and @dev's ifindex and queues in the context.
 */
static void make_pkts(struct t_pkts *p, uint64_t seed,
		      const struct t_ctx_dev *dev)
{
	static const struct {
		const char *what;
		bool vlan;
		int l3;
		unsigned int ihl;
		uint8_t proto;
		uint16_t dport;
		uint32_t payload;
	} shapes[] = {
		{ "ipv4/udp 53", false, 4, 5, 17, 53, 18 },
		{ "ipv4/udp 4789", false, 4, 5, 17, 4789, 100 },
		{ "ipv4/udp 0", false, 4, 5, 17, 0, 0 },
		{ "ipv4/udp 65535", false, 4, 5, 17, 65535, 6 },
		{ "ipv4/tcp 80", false, 4, 5, 6, 80, 10 },
		{ "ipv4/icmp", false, 4, 5, 1, 0, 24 },
		{ "ipv4+options/udp", false, 4, 7, 17, 53, 18 },
		{ "vlan/ipv4/udp", true, 4, 5, 17, 53, 18 },
		{ "ipv6/udp", false, 6, 0, 17, 53, 18 },
		{ "arp", false, 0, 0, 0, 0, 0 },
		{ "ipv4/udp 1500", false, 4, 5, 17, 9, 1472 },
		{ "ipv4/udp largest", false, 4, 5, 17, 9, T_PKT_MAX - 42 },
	};
	uint32_t cut[8];
	unsigned int i, j, ncut;
	uint64_t r = seed;
	struct t_pkt *k;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct t_pkt whole;

		k = pkt_add(p, shapes[i].what);
		k->len = frame(k->data, shapes[i].vlan, shapes[i].l3,
			       shapes[i].ihl, shapes[i].proto,
			       shapes[i].dport, shapes[i].payload, cut, &ncut);
		whole = *k;
		for (j = 0; j < ncut; j++) {
			int d;

			for (d = -1; d <= 1; d++) {
				uint32_t len = cut[j] + (uint32_t)d;

				if (len < T_ETH_HLEN || len >= whole.len)
					continue;
				k = pkt_add(p, "truncated");
				*k = whole;
				k->what = "truncated";
				k->len = len;
			}
		}
	}
	for (i = 0; i < T_RANDOM_PKTS; i++) {
		uint32_t b;

		k = pkt_add(p, "random");
		k->len = T_ETH_HLEN + (uint32_t)(t_rand(&r) % 200);
		for (b = 0; b < k->len; b++)
			k->data[b] = (uint8_t)t_rand(&r);
		/* Half of them a valid start, so the parsers go deeper. */
		if (i & 1) {
			uint8_t hdr[64];

			frame(hdr, false, 4, 5, t_rand(&r) & 1 ? 17 : 6,
			      (uint16_t)t_rand(&r), 0, cut, &ncut);
			memcpy(k->data, hdr, k->len < cut[2] ? k->len : cut[2]);
			k->what = "random after a valid header";
		}
	}
	/* Shorter than an Ethernet header: both must refuse it. */
	pkt_add(p, "too short")->len = T_ETH_HLEN - 1;
	k = pkt_add(p, "too short after metadata");
	k->len = 4 + T_ETH_HLEN - 1;
	k->meta = 4;
	/* Metadata and a device's context on every 5th one (not the
	 * largest), its queues in turn. */
	for (i = 0; i < p->n; i += 5) {
		uint32_t meta = 4 * (1 + i % 8);

		k = &p->v[i];
		if (k->meta || k->len + meta > T_PKT_MAX)
			continue;
		memmove(k->data + meta, k->data, k->len);
		for (j = 0; j < meta; j++)
			k->data[j] = (uint8_t)(0xc0 + j);
		k->meta = meta;
		k->len += meta;
		k->ifindex = dev->ifindex;
		k->rxq = (i / 5) % dev->nrxq;
	}
}

/* What one side made of one packet. */
struct t_out {
	int err;		/* of the run itself (-errno) */
	uint32_t verdict;
	uint32_t len;		/* metadata included */
	uint32_t meta;
	uint8_t data[T_PKT_MAX + 256];
};

static void kernel_pkt(int fd, const struct t_pkt *k, struct t_out *o)
{
	struct xdp_md ctx_in = {
		.data = k->meta, .data_end = k->len,
		.ingress_ifindex = k->ifindex, .rx_queue_index = k->rxq,
	}, ctx_out = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = k->data,
		    .data_size_in = k->len, .data_out = o->data,
		    .data_size_out = sizeof(o->data), .ctx_in = &ctx_in,
		    .ctx_size_in = sizeof(ctx_in), .ctx_out = &ctx_out,
		    .ctx_size_out = sizeof(ctx_out), .repeat = 1);

	memset(o, 0, sizeof(*o));
	if (bpf_prog_test_run_opts(fd, &t)) {
		o->err = -errno;
		return;
	}
	o->verdict = t.retval;
	o->len = t.data_size_out;
	o->meta = ctx_out.data;
}

static void uxdp_pkt(const struct uxdp_prog *prog, const struct t_pkt *k,
		     struct t_out *o)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, t, .data_in = k->data,
			  .data_size_in = k->len, .meta_size = k->meta,
			  .data_out = o->data, .data_size_out = sizeof(o->data),
			  .ingress_ifindex = k->ifindex,
			  .rx_queue_index = k->rxq);

	memset(o, 0, sizeof(*o));
	o->err = uxdp_bpf_prog_test_run(prog, &t);
	o->verdict = t.retval;
	o->len = t.data_size_out;
	o->meta = t.meta_size;
}

/* The difference between @a and @b (the kernel's), in @why; 0: none. */
static int out_diff(const struct t_out *kern, const struct t_out *u,
		    char *why, size_t whylen)
{
	uint32_t i;

	if (kern->err || u->err) {
		if ((kern->err != 0) == (u->err != 0))
			return 0;	/* both refused the packet */
		snprintf(why, whylen, "run: kernel %s, uxdp %s",
			 strerror(-kern->err), strerror(-u->err));
		return 1;
	}
	if (kern->verdict != u->verdict) {
		snprintf(why, whylen, "verdict: kernel %u, uxdp %u",
			 kern->verdict, u->verdict);
		return 1;
	}
	if (kern->meta != u->meta) {
		snprintf(why, whylen, "data_meta: kernel %u bytes, uxdp %u",
			 kern->meta, u->meta);
		return 1;
	}
	for (i = 0; i < kern->len && i < u->len; i++)
		if (kern->data[i] != u->data[i]) {
			snprintf(why, whylen, "output byte %u: kernel 0x%02x, "
				 "uxdp 0x%02x", i, kern->data[i], u->data[i]);
			return 1;
		}
	if (kern->len != u->len) {
		snprintf(why, whylen, "output length: kernel %u, uxdp %u",
			 kern->len, u->len);
		return 1;
	}
	return 0;
}

/*
 * Map entries whose values differ by nature, not compared: what the
 * program stored there is the time, a random number or a CPU's number.
 */
static const struct {
	const char *object, *map;
	uint32_t first, last;
	const char *why;
} unlike_entries[] = {
	{ "helpers", "out", 0, 4, "the time (3 clocks), get_prandom_u32, "
	  "the CPU's number (uxdp's thread index)" },
	/* Katran's new-connection rate: v2 is when its second began. */
	{ "balancer", "stats", 512 + 2, 512 + 2, "bpf_ktime_get_ns()" },
};

#define ARRAY_CMP_MAX	(1U << 18)

static const char *unlike_entry(const char *obj, const char *map,
				uint32_t key)
{
	size_t i;

	for (i = 0; i < sizeof(unlike_entries) / sizeof(unlike_entries[0]);
	     i++)
		if (!strncmp(obj, unlike_entries[i].object,
			     strlen(unlike_entries[i].object)) &&
		    strchr(".", obj[strlen(unlike_entries[i].object)]) &&
		    !strcmp(map, unlike_entries[i].map) &&
		    key >= unlike_entries[i].first &&
		    key <= unlike_entries[i].last)
			return unlike_entries[i].why;
	return NULL;
}

/* The value of a per-CPU slot array summed over CPUs, word by word. */
static void percpu_sum(const uint8_t *v, int ncpu, uint32_t value_size,
		       uint8_t *sum)
{
	uint32_t stride = (value_size + 7) & ~7U, w;
	int c;

	memset(sum, 0, stride);
	for (c = 0; c < ncpu; c++)
		for (w = 0; w < stride; w += 8) {
			uint64_t a, b;

			memcpy(&a, sum + w, 8);
			memcpy(&b, v + (size_t)c * stride + w, 8);
			a += b;
			memcpy(sum + w, &a, 8);
		}
}

/*
 * A hash of @uobj against the kernel's (@fd): the same keys, each with the
 * same value (per-CPU values summed over the CPUs); 0 or 1 difference.
 */
static unsigned int hash_diff(const char *oname, const char *where,
			      const struct uxdp_bpf_map *m, int fd)
{
	bool percpu = uxdp_bpf_map_type(m) == BPF_MAP_TYPE_PERCPU_HASH;
	uint32_t ks = uxdp_bpf_map_key_size(m), vs = uxdp_bpf_map_value_size(m);
	size_t stride = (vs + 7) & ~7U;
	int kcpus = libbpf_num_possible_cpus();
	int ucpus = uxdp_bpf_num_possible_cpus();
	uint8_t *key = calloc(2, ks), *next = key + ks;
	uint8_t *kv = calloc((size_t)kcpus, stride);
	uint8_t *uv = calloc((size_t)ucpus, stride);
	uint8_t *ksum = calloc(2, stride), *usum = ksum + stride;
	unsigned int nk = 0, nu = 0, bad = 0;
	const char *name = uxdp_bpf_map_name(m);
	bool first = true;
	int ue;

	assert_true(key && kv && uv && ksum);
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ks);
		nk++;
		if (bpf_map_lookup_elem(fd, key, kv))
			continue;	/* deleted meanwhile: not here */
		ue = uxdp_bpf_map_lookup(m, key, uv, 0);
		if (ue) {
			printf("DIFFERENCE %s %s: map %s: a key of the "
			       "kernel's: uxdp %d\n", oname, where, name, ue);
			bad = 1;
			break;
		}
		if (percpu) {
			percpu_sum(kv, kcpus, vs, ksum);
			percpu_sum(uv, ucpus, vs, usum);
		} else {
			memcpy(ksum, kv, vs);
			memcpy(usum, uv, vs);
		}
		if (memcmp(ksum, usum, vs)) {
			printf("DIFFERENCE %s %s: map %s: a key's value%s "
			       "differs\n", oname, where, name,
			       percpu ? " (summed over CPUs)" : "");
			bad = 1;
			break;
		}
	}
	for (first = true; !bad && !uxdp_bpf_map_get_next_key(m, first ?
							       NULL : key,
							       next);
	     first = false) {
		memcpy(key, next, ks);
		nu++;
	}
	if (!bad && nu != nk) {
		printf("DIFFERENCE %s %s: map %s: the kernel has %u keys, "
		       "uxdp %u\n", oname, where, name, nk, nu);
		bad = 1;
	}
	free(key);
	free(kv);
	free(uv);
	free(ksum);
	return bad;
}

/*
 * Every array and hash of @uobj against the kernel's map of the same name
 * in @kobj: the number of differences (the first of each map printed).
 */
/* The kernel's name of its map of id @id (15 characters at most), or
 * "-". */
static void kernel_map_name(uint32_t id, char *buf, size_t len)
{
	struct bpf_map_info info;
	uint32_t ilen = sizeof(info);
	int fd = bpf_map_get_fd_by_id(id);

	snprintf(buf, len, "-");
	memset(&info, 0, sizeof(info));
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(buf, len, "%s", info.name);
	if (fd >= 0)
		close(fd);
}

/* An of-map (4-byte keys: every key 0..max_entries-1): the same map, by
 * name (ids are each side's own), in the same slots. */
static unsigned int ofmap_diff(const char *oname, const char *where,
			       const struct uxdp_bpf_map *m, int fd)
{
	uint32_t key, n = uxdp_bpf_map_max_entries(m);
	const char *name = uxdp_bpf_map_name(m);

	if (uxdp_bpf_map_key_size(m) != 4)
		return 0;
	for (key = 0; key < n; key++) {
		uint32_t kid = 0, uid = 0;
		int ke = bpf_map_lookup_elem(fd, &key, &kid) ? -errno : 0;
		int ue = uxdp_bpf_map_lookup(m, &key, &uid, 0);
		struct uxdp_bpf_map *um = ue ? NULL : uxdp_bpf_map_get_by_id(uid);
		char kn[32] = "-", un[32] = "-";

		if (!ke)
			kernel_map_name(kid, kn, sizeof(kn));
		if (um)
			snprintf(un, sizeof(un), "%.15s", uxdp_bpf_map_name(um));
		uxdp_bpf_map_close(um);
		if (ke != ue || strcmp(kn, un)) {
			printf("DIFFERENCE %s %s: of-map %s key %u: kernel %d "
			       "(%s), uxdp %d (%s)\n", oname, where, name, key,
			       ke, kn, ue, un);
			return 1;
		}
	}
	return 0;
}

/* An LPM trie: the same keys in the same order (get_next_key's, the
 * kernel's post-order), each with the same value. */
static unsigned int trie_diff(const char *oname, const char *where,
			      const struct uxdp_bpf_map *m, int fd)
{
	uint32_t ks = uxdp_bpf_map_key_size(m), vs = uxdp_bpf_map_value_size(m);
	uint8_t *kk = calloc(4, ks), *uk = kk + ks, *kn = uk + ks,
		*un = kn + ks, *kv = calloc(2, vs), *uv = kv + vs;
	const char *name = uxdp_bpf_map_name(m);
	unsigned int bad = 0, i;
	int ke, ue;

	assert_true(kk && kv);
	ke = bpf_map_get_next_key(fd, NULL, kn) ? -errno : 0;
	ue = uxdp_bpf_map_get_next_key(m, NULL, un);
	for (i = 0;; i++) {
		if (ke != ue || (!ke && memcmp(kn, un, ks))) {
			printf("DIFFERENCE %s %s: lpm trie %s, key %u of the "
			       "iteration: kernel %d, uxdp %d%s\n", oname,
			       where, name, i, ke, ue, ke || ue ? "" :
			       " (other keys)");
			bad = 1;
			break;
		}
		if (ke)
			break;
		ke = bpf_map_lookup_elem(fd, kn, kv) ? -errno : 0;
		ue = uxdp_bpf_map_lookup(m, un, uv, 0);
		if (ke || ue || memcmp(kv, uv, vs)) {
			printf("DIFFERENCE %s %s: lpm trie %s, key %u: lookup "
			       "kernel %d, uxdp %d, or the values differ\n",
			       oname, where, name, i, ke, ue);
			bad = 1;
			break;
		}
		memcpy(kk, kn, ks);
		memcpy(uk, un, ks);
		ke = bpf_map_get_next_key(fd, kk, kn) ? -errno : 0;
		ue = uxdp_bpf_map_get_next_key(m, uk, un);
	}
	free(kk);
	free(kv);
	return bad;
}

/* The name of the program with kernel id @id in @kobj, or NULL. */
static const char *kernel_prog_by_id(struct bpf_object *kobj, uint32_t id)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, kobj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(p) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) &&
		    info.id == id)
			return bpf_program__name(p);
	}
	return NULL;
}

/* A prog array's slots: the same program (by name; the ids are each
 * side's own) or empty on both. */
static unsigned int slots_diff(const char *oname, const char *where,
			       const struct uxdp_bpf_map *m,
			       struct bpf_object *kobj, int fd)
{
	uint32_t key, n = uxdp_bpf_map_max_entries(m);
	const char *name = uxdp_bpf_map_name(m);

	for (key = 0; key < n; key++) {
		uint32_t kid = 0, uid = 0;
		int ke = bpf_map_lookup_elem(fd, &key, &kid) ? -errno : 0;
		int ue = uxdp_bpf_map_lookup(m, &key, &uid, 0);
		const char *kn = ke ? NULL : kernel_prog_by_id(kobj, kid);
		struct uxdp_prog *up = ue ? NULL : uxdp_bpf_prog_get_by_id(uid);
		const char *un = up ? uxdp_prog_name(up) : NULL;
		bool same = ke == ue && (!kn) == (!un) &&
			    (!kn || !strcmp(kn, un));

		if (!same)
			printf("DIFFERENCE %s %s: prog array %s slot %u: "
			       "kernel %d (%s), uxdp %d (%s)\n", oname, where,
			       name, key, ke, kn ? kn : "-", ue, un ? un : "-");
		uxdp_prog_put(up);
		if (!same)
			return 1;
	}
	return 0;
}

/*
 * A queue's or a stack's values, in the order pops give them: both sides
 * popped empty, compared, and pushed back (a stack in reverse) so the
 * next packet finds them as they were.
 */
#define QS_CMP_MAX	64

static unsigned int qs_diff(const char *oname, const char *where,
			    struct uxdp_bpf_map *m, int fd)
{
	uint32_t vs = uxdp_bpf_map_value_size(m), nk = 0, nu = 0, i;
	bool stack = uxdp_bpf_map_type(m) == BPF_MAP_TYPE_STACK;
	uint8_t *kv = calloc(QS_CMP_MAX, vs), *uv = calloc(QS_CMP_MAX, vs);
	unsigned int bad = 0;

	assert_true(kv && uv);
	while (nk < QS_CMP_MAX &&
	       !bpf_map_lookup_and_delete_elem(fd, NULL, kv + nk * vs))
		nk++;
	while (nu < QS_CMP_MAX &&
	       !uxdp_bpf_map_lookup_and_delete(m, NULL, uv + nu * vs, 0))
		nu++;
	if (nk != nu) {
		printf("DIFFERENCE %s %s: map %s: the kernel's holds %u "
		       "values, uxdp's %u\n", oname, where,
		       uxdp_bpf_map_name(m), nk, nu);
		bad++;
	} else {
		for (i = 0; i < nk; i++)
			if (memcmp(kv + i * vs, uv + i * vs, vs)) {
				printf("DIFFERENCE %s %s: map %s: pop %u "
				       "differs\n", oname, where,
				       uxdp_bpf_map_name(m), i);
				bad++;
				break;
			}
	}
	for (i = 0; i < nk; i++) {
		uint32_t j = stack ? nk - 1 - i : i;

		assert_int_equal(bpf_map_update_elem(fd, NULL, kv + j * vs,
						     BPF_ANY), 0);
	}
	for (i = 0; i < nu; i++) {
		uint32_t j = stack ? nu - 1 - i : i;

		assert_int_equal(uxdp_bpf_map_update(m, NULL, uv + j * vs,
						     BPF_ANY), 0);
	}
	free(kv);
	free(uv);
	return bad;
}

static unsigned int maps_diff(const char *oname, const char *where,
			      struct bpf_object *kobj,
			      const struct uxdp_bpf_object *uobj)
{
	const struct uxdp_bpf_map *m = NULL;
	unsigned int bad = 0;

	while ((m = uxdp_bpf_object_next_map(uobj, m))) {
		uint32_t type = uxdp_bpf_map_type(m), vs, n, key;
		bool percpu = type == BPF_MAP_TYPE_PERCPU_ARRAY;
		const char *name = uxdp_bpf_map_name(m);
		int kcpus = libbpf_num_possible_cpus();
		int ucpus = uxdp_bpf_num_possible_cpus();
		struct bpf_map *km;
		uint8_t *kv, *uv, *ks, *us;
		size_t stride;
		int fd;

		if (type != BPF_MAP_TYPE_ARRAY && !percpu &&
		    type != BPF_MAP_TYPE_HASH &&
		    type != BPF_MAP_TYPE_PERCPU_HASH &&
		    type != BPF_MAP_TYPE_PROG_ARRAY &&
		    type != BPF_MAP_TYPE_LPM_TRIE &&
		    type != BPF_MAP_TYPE_ARRAY_OF_MAPS &&
		    type != BPF_MAP_TYPE_HASH_OF_MAPS &&
		    type != BPF_MAP_TYPE_QUEUE && type != BPF_MAP_TYPE_STACK)
			continue;
		km = bpf_object__find_map_by_name(kobj, name);
		fd = km ? bpf_map__fd(km) : -1;
		if (fd < 0) {
			printf("DIFFERENCE %s %s: map %s: the kernel has no "
			       "such map\n", oname, where, name);
			bad++;
			continue;
		}
		if (type == BPF_MAP_TYPE_PROG_ARRAY) {
			bad += slots_diff(oname, where, m, kobj, fd);
			continue;
		}
		if (type == BPF_MAP_TYPE_LPM_TRIE) {
			bad += trie_diff(oname, where, m, fd);
			continue;
		}
		if (type == BPF_MAP_TYPE_QUEUE || type == BPF_MAP_TYPE_STACK) {
			bad += qs_diff(oname, where, (struct uxdp_bpf_map *)m,
				       fd);
			continue;
		}
		if (type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
		    type == BPF_MAP_TYPE_HASH_OF_MAPS) {
			bad += ofmap_diff(oname, where, m, fd);
			continue;
		}
		if (type == BPF_MAP_TYPE_HASH ||
		    type == BPF_MAP_TYPE_PERCPU_HASH) {
			bad += hash_diff(oname, where, m, fd);
			continue;
		}
		vs = uxdp_bpf_map_value_size(m);
		n = uxdp_bpf_map_max_entries(m);
		/* A syscall a key: the first 2^18 of a huge array (Katran's
		 * ch_rings has 2^25, which only its control plane writes). */
		if (n > ARRAY_CMP_MAX)
			n = ARRAY_CMP_MAX;
		stride = (vs + 7) & ~7U;
		kv = calloc((size_t)(percpu ? kcpus : 1), stride);
		uv = calloc((size_t)(percpu ? ucpus : 1), stride);
		ks = calloc(1, stride);
		us = calloc(1, stride);
		assert_true(kv && uv && ks && us);
		for (key = 0; key < n; key++) {
			const char *unlike = unlike_entry(oname, name, key);
			int ke = bpf_map_lookup_elem(fd, &key, kv) ? -errno : 0;
			int ue = uxdp_bpf_map_lookup(m, &key, uv, 0);

			if (ke || ue) {
				printf("DIFFERENCE %s %s: map %s key %u: "
				       "lookup: kernel %d, uxdp %d\n", oname,
				       where, name, key, ke, ue);
				bad++;
				break;
			}
			if (percpu) {
				percpu_sum(kv, kcpus, vs, ks);
				percpu_sum(uv, ucpus, vs, us);
			} else {
				memcpy(ks, kv, vs);
				memcpy(us, uv, vs);
			}
			if (!memcmp(ks, us, vs))
				continue;
			if (unlike)
				continue;
			for (uint32_t b = 0; b < vs; b++)
				if (ks[b] != us[b]) {
					printf("DIFFERENCE %s %s: map %s key "
					       "%u%s, byte %u: kernel 0x%02x, "
					       "uxdp 0x%02x\n", oname, where,
					       name, key, percpu ?
					       " (summed over CPUs)" : "", b,
					       ks[b], us[b]);
					break;
				}
			bad++;
			break;
		}
		free(kv);
		free(uv);
		free(ks);
		free(us);
	}
	return bad;
}

/* Whether @obj's arrays are few enough entries to compare every packet. */
static bool arrays_small(const struct uxdp_bpf_object *obj)
{
	const struct uxdp_bpf_map *m = NULL;
	uint64_t entries = 0;

	while ((m = uxdp_bpf_object_next_map(obj, m)))
		if (uxdp_bpf_map_type(m) != BPF_MAP_TYPE_PERF_EVENT_ARRAY &&
		    uxdp_bpf_map_type(m) != BPF_MAP_TYPE_RINGBUF)
			entries += uxdp_bpf_map_max_entries(m);
	return entries <= 64;
}

struct corpus_counts {
	unsigned int objects, programs, kernel_refused, uxdp_refused;
	unsigned int no_test_run, compared, runs, equal, differ;
	unsigned int samples;		/* perf samples compared (both engines) */
	unsigned int verdicts[5];	/* the kernel's, of compared runs */
};

/* @path's program @pname alone, into the kernel: its object, or NULL. */
static struct bpf_object *kernel_open(const char *path, const char *pname,
				       bool all, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .kernel_log_buf = vlog,
		    .kernel_log_size = T_LOG_SIZE, .kernel_log_level = 0);
	struct bpf_object *obj = bpf_object__open_file(path, &o);
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	if (!obj) {
		snprintf(why, whylen, "libbpf cannot open it: %s",
			 strerror(errno));
		return NULL;
	}
	/* Pinned by name (xdp-filter's maps): each run its own maps, not
	 * a bpffs file a run before left, nor one for the next. */
	bpf_object__for_each_map(m, obj)
		bpf_map__set_pin_path(m, NULL);
	bpf_object__for_each_program(p, obj) {
		bool it = all || !strcmp(bpf_program__name(p), pname);

		bpf_program__set_autoload(p, it);
		/* An old-style section name ("xdp_prog"): the type forced,
		 * as uxdp does and as such objects' loaders did. */
		if (it && bpf_program__type(p) == BPF_PROG_TYPE_UNSPEC)
			bpf_program__set_type(p, BPF_PROG_TYPE_XDP);
	}
	vlog[0] = '\0';
	err = bpf_object__load(obj);
	if (err) {
		snprintf(why, whylen, "%s (%s)", uxdp_bpf_kverify_reason(vlog),
			 strerror(-err));
		bpf_object__close(obj);
		/* A prog array's initialiser names a sibling, so all of the
		 * object's programs load (libbpf: -EBADF otherwise). */
		if (err == -EBADF && !all)
			return kernel_open(path, pname, true, why, whylen);
		return NULL;
	}
	return obj;
}

static struct bpf_object *kernel_open_one(const char *path,
					  const char *pname, char *why,
					  size_t whylen)
{
	return kernel_open(path, pname, false, why, whylen);
}

/* The same in uxdp, on @engine: its object, or NULL with @why. */
static struct uxdp_bpf_object *uxdp_open(const char *path, const char *pname,
					 uint32_t engine, bool all, int *err,
					 char *why, size_t whylen)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj = uxdp_bpf_object_open(path, &o);
	struct uxdp_bpf_program *p = NULL;

	*err = 0;
	if (!obj) {
		*err = -errno;
		snprintf(why, whylen, "%s", uxdp_errmsg());
		return NULL;
	}
	while (!all && (p = uxdp_bpf_object_next_program(obj, p)))
		if (uxdp_bpf_program_autoload(p))
			uxdp_bpf_program_set_autoload(p,
				!strcmp(uxdp_bpf_program_name(p), pname));
	*err = uxdp_bpf_object_load(obj);
	if (*err) {
		snprintf(why, whylen, "%s", uxdp_errmsg());
		uxdp_bpf_object_close(obj);
		/* As the kernel's side: a prog array's initialiser. */
		if (*err == -EBADF && !all)
			return uxdp_open(path, pname, engine, true, err, why,
					 whylen);
		return NULL;
	}
	return obj;
}

static struct uxdp_bpf_object *uxdp_open_one(const char *path,
					     const char *pname,
					     uint32_t engine, int *err,
					     char *why, size_t whylen)
{
	return uxdp_open(path, pname, engine, false, err, why, whylen);
}

/*
 * Prog array slots the corpus's control plane fills (an object's own
 * initialisers fill the rest), the same on both sides: object (NAME of
 * NAME.o and NAME.v1.o), map, slot, program.
 */
static const struct {
	const char *obj, *map;
	uint32_t slot;
	const char *prog;
} dyn_slots[] = {
	{ "tail", "jmp_dyn", 0, "tail_dyn" },
};

static bool same_obj(const char *oname, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(oname, name, n) && (!oname[n] || oname[n] == '.');
}

/* Fill @kobj's and @uobj's dynamic slots; a program of the slot's that
 * is not loaded (the one under test loaded alone) leaves it empty on both. */
static void dyn_fill(const char *oname, struct bpf_object *kobj,
		     struct uxdp_bpf_object *uobj)
{
	size_t i;

	for (i = 0; i < sizeof(dyn_slots) / sizeof(dyn_slots[0]); i++) {
		struct bpf_program *kp;
		struct bpf_map *km;
		struct uxdp_prog *up;
		int kfd;
		uint32_t uid;

		if (!same_obj(oname, dyn_slots[i].obj))
			continue;
		kp = bpf_object__find_program_by_name(kobj, dyn_slots[i].prog);
		km = bpf_object__find_map_by_name(kobj, dyn_slots[i].map);
		up = uxdp_bpf_object_prog(uobj, dyn_slots[i].prog);
		kfd = kp ? bpf_program__fd(kp) : -1;
		if (kfd < 0 || !km || bpf_map__fd(km) < 0 || !up) {
			uxdp_prog_put(up);
			continue;
		}
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(km),
			&dyn_slots[i].slot, &kfd, BPF_ANY), 0);
		uid = uxdp_bpf_prog_id(up);
		assert_int_equal(uxdp_bpf_map_update(uxdp_bpf_object_find_map(
			uobj, dyn_slots[i].map), &dyn_slots[i].slot, &uid,
			BPF_ANY), 0);
		uxdp_prog_put(up);
	}
}

/* @value at @key of map @map on both sides (the kernel's twice is the
 * same update). */
static void seed_both(struct bpf_object *kobj, struct uxdp_bpf_object *uobj,
		      const char *map, const void *key, const void *value)
{
	struct bpf_map *km = bpf_object__find_map_by_name(kobj, map);
	struct uxdp_bpf_map *um = uxdp_bpf_object_find_map(uobj, map);

	assert_non_null(km);
	assert_non_null(um);
	if (bpf_map_update_elem(bpf_map__fd(km), key, value, BPF_ANY))
		fail_msg("seed %s: the kernel: %s", map, strerror(errno));
	if (uxdp_bpf_map_update(um, key, value, BPF_ANY))
		fail_msg("seed %s: uxdp: %s", map, uxdp_errmsg());
}

/* Both sides' update of map @map (tools/lib/katran.h's callback). */
struct seed_ctx {
	struct bpf_object *kobj;
	struct uxdp_bpf_object *uobj;
};

static int seed_upd(void *ctx, const char *map, const void *key,
		    const void *value)
{
	struct seed_ctx *c = ctx;

	seed_both(c->kobj, c->uobj, map, key, value);
	return 0;
}

/* Katran's balancer configured (tools/lib/katran.h): VIPs on the corpus's
 * destination 10.0.0.2, TCP 80 and UDP 53. */
static void katran_seed(const char *oname, struct bpf_object *kobj,
			struct uxdp_bpf_object *uobj)
{
	static const struct tkatran_vip vips[] = {
		{ 0x0a000002, 80, 6 }, { 0x0a000002, 53, 17 },
	};
	struct seed_ctx c = { kobj, uobj };

	if (same_obj(oname, "balancer"))
		assert_int_equal(tkatran_config(seed_upd, &c, vips, 2), 0);
}

/*
 * Per-CPU @value at @key of @map on both sides, in CPU 0's slot only:
 * the test runs pinned to CPU 0 (the kernel's test run runs where its
 * caller does) and uxdp's test run is thread index 0, so a program reads
 * the value and the other CPUs' zeros keep the sums comparable.
 */
static void seed_cpu0(struct bpf_object *kobj, struct uxdp_bpf_object *uobj,
		      const char *map, const void *key, uint64_t value)
{
	struct bpf_map *km = bpf_object__find_map_by_name(kobj, map);
	struct uxdp_bpf_map *um = uxdp_bpf_object_find_map(uobj, map);
	int kcpus = libbpf_num_possible_cpus();
	int ucpus = uxdp_bpf_num_possible_cpus();
	uint64_t *kv = calloc((size_t)kcpus, 8), *uv = calloc((size_t)ucpus, 8);

	assert_non_null(km);
	assert_non_null(um);
	assert_true(kv && uv);
	kv[0] = uv[0] = value;
	if (bpf_map_update_elem(bpf_map__fd(km), key, kv, BPF_ANY))
		fail_msg("seed %s: the kernel: %s", map, strerror(errno));
	if (uxdp_bpf_map_update(um, key, uv, BPF_ANY))
		fail_msg("seed %s: uxdp: %s", map, uxdp_errmsg());
	free(kv);
	free(uv);
}

/*
 * xdp-filter's rules (its common_kern_user.h: a u64 per key, flags in the
 * low bits, a hit counter from bit 6) for the packets of make_pkts(): some
 * hit, some miss by direction or protocol, so every lookup path of the
 * objects runs and their counters move. The ports are keyed in network
 * order (the programs use the header's 16 bits as the u32 key).
 */
#define FILT_SRC	(1U << 0)
#define FILT_DST	(1U << 1)
#define FILT_TCP	(1U << 2)
#define FILT_UDP	(1U << 3)

static void xdpfilt_seed(const char *oname, struct bpf_object *kobj,
			 struct uxdp_bpf_object *uobj)
{
	static const struct {
		uint16_t port;
		uint64_t flags;
	} ports[] = {
		{ 53, FILT_DST | FILT_UDP },	/* hits UDP 53 */
		{ 80, FILT_DST | FILT_UDP },	/* TCP 80: the wrong protocol */
		{ 40000, FILT_SRC | FILT_TCP },	/* every TCP frame's source */
		{ 4789, FILT_SRC | FILT_UDP },	/* a destination: misses */
	};
	static const uint8_t mac_dst[6] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t ip6_src[16] = { 0xfd, [15] = 1 };
	static const uint8_t ip6_dst[16] = { 0xfd, [15] = 2 };
	uint8_t ip4_src[4] = { 10, 0, 0, 1 }, ip4_dst[4] = { 10, 0, 0, 2 };
	uint32_t k, ip4;
	size_t i;

	if (strncmp(oname, "xdpfilt_", 8))
		return;
	if (bpf_object__find_map_by_name(kobj, "filter_ports"))
		for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
			k = htons(ports[i].port);
			seed_cpu0(kobj, uobj, "filter_ports", &k,
				  ports[i].flags);
		}
	if (bpf_object__find_map_by_name(kobj, "filter_ipv4")) {
		/* Both addresses found, in the other direction: IPv4 and
		 * ARP miss (a value whose flags fail the mask) and go on to
		 * the ports; IPv6's destination hits. */
		memcpy(&ip4, ip4_src, 4);
		seed_cpu0(kobj, uobj, "filter_ipv4", &ip4, FILT_DST);
		memcpy(&ip4, ip4_dst, 4);
		seed_cpu0(kobj, uobj, "filter_ipv4", &ip4, FILT_SRC);
	}
	if (bpf_object__find_map_by_name(kobj, "filter_ipv6")) {
		seed_cpu0(kobj, uobj, "filter_ipv6", ip6_dst, FILT_DST);
		seed_cpu0(kobj, uobj, "filter_ipv6", ip6_src, FILT_DST);
	}
	if (bpf_object__find_map_by_name(kobj, "filter_ethernet"))
		seed_cpu0(kobj, uobj, "filter_ethernet", mac_dst, FILT_SRC);
}

/*
 * xdpdump's capture configuration (its .data: the ifindex to capture on,
 * the snap length, a program index for the metadata): the device of the
 * packets that name one, 128 bytes, 7.
 */
static void xdpdump_seed(const char *oname, struct bpf_object *kobj,
			 struct uxdp_bpf_object *uobj, const struct t_pkts *pkts)
{
	uint32_t cfg[3] = { 0, 128, 7 }, key = 0, i;

	if (!same_obj(oname, "xdpdump_xdp"))
		return;
	for (i = 0; i < pkts->n && !cfg[0]; i++)
		cfg[0] = pkts->v[i].ifindex;
	seed_both(kobj, uobj, "xdpdump_.data", &key, cfg);
}

/*
 * Perf samples: every PERF_EVENT_ARRAY of the object read on both sides,
 * the kernel's by libbpf's perf_buffer (a perf event per CPU), uxdp's by
 * its own; each run's samples in order, compared byte for byte with the
 * size libbpf gives (padded: see perf_open()), and the losses.
 */
#define T_PERF_MAPS	4
#define T_SAMPLES	16
#define T_SAMPLE_MAX	512

struct t_samples {
	uint32_t n, more;	/* kept, and beyond T_SAMPLES */
	uint64_t lost;
	struct {
		uint32_t map, size;
		uint8_t data[T_SAMPLE_MAX];
	} v[T_SAMPLES];
};

struct t_sink {
	struct t_samples *to;
	uint32_t map;
};

struct t_perf {
	uint32_t n;
	char names[T_PERF_MAPS][64];
	bool ring[T_PERF_MAPS];		/* a RINGBUF (else perf) */
	struct perf_buffer *k[T_PERF_MAPS];
	struct uxdp_bpf_perf_buffer *u[2][T_PERF_MAPS];
	struct ring_buffer *kr[T_PERF_MAPS];
	struct uxdp_bpf_ring_buffer *ur[2][T_PERF_MAPS];
	struct t_sink ksink[T_PERF_MAPS], usink[2][T_PERF_MAPS];
	struct t_samples ks, us[2];
};

static void sink_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct t_sink *k = ctx;
	struct t_samples *t = k->to;

	(void)cpu;
	if (t->n == T_SAMPLES) {
		t->more++;
		return;
	}
	t->v[t->n].map = k->map;
	t->v[t->n].size = size;
	memcpy(t->v[t->n].data, data, size < T_SAMPLE_MAX ? size :
	       T_SAMPLE_MAX);
	t->n++;
}

static void sink_lost(void *ctx, int cpu, uint64_t cnt)
{
	(void)cpu;
	((struct t_sink *)ctx)->to->lost += cnt;
}

static void k_sample(void *ctx, int cpu, void *data, __u32 size)
{
	sink_sample(ctx, cpu, data, size);
}

static void k_lost(void *ctx, int cpu, __u64 cnt)
{
	sink_lost(ctx, cpu, cnt);
}

static int ring_sample(void *ctx, void *data, size_t size)
{
	sink_sample(ctx, 0, data, (uint32_t)size);
	return 0;
}

static void perf_open(struct t_perf *tp, struct bpf_object *kobj,
		      struct uxdp_bpf_object *const uobj[2])
{
	const struct uxdp_bpf_map *m = NULL;
	uint32_t e;

	memset(tp, 0, sizeof(*tp));
	while ((m = uxdp_bpf_object_next_map(uobj[0], m))) {
		const char *name = uxdp_bpf_map_name(m);
		struct bpf_map *km;
		uint32_t i = tp->n;

		if (uxdp_bpf_map_type(m) != BPF_MAP_TYPE_PERF_EVENT_ARRAY &&
		    uxdp_bpf_map_type(m) != BPF_MAP_TYPE_RINGBUF)
			continue;
		assert_true(i < T_PERF_MAPS);
		snprintf(tp->names[i], sizeof(tp->names[i]), "%s", name);
		km = bpf_object__find_map_by_name(kobj, name);
		assert_non_null(km);
		tp->ksink[i] = (struct t_sink){ &tp->ks, i };
		if (uxdp_bpf_map_type(m) == BPF_MAP_TYPE_RINGBUF) {
			tp->ring[i] = true;
			tp->kr[i] = ring_buffer__new(bpf_map__fd(km),
						     ring_sample,
						     &tp->ksink[i], NULL);
			if (!tp->kr[i])
				fail_msg("ring_buffer__new(%s): %s", name,
					 strerror(errno));
			for (e = 0; e < 2; e++) {
				tp->usink[e][i] =
					(struct t_sink){ &tp->us[e], i };
				tp->ur[e][i] = uxdp_bpf_ring_buffer_new(
					uxdp_bpf_object_find_map(uobj[e],
								 name),
					ring_sample, &tp->usink[e][i]);
				if (!tp->ur[e][i])
					fail_msg("uxdp_bpf_ring_buffer_new(%s): "
						 "%s", name, uxdp_errmsg());
			}
			tp->n++;
			continue;
		}
		/* The kernel skips a sample's padding, leaving what its ring
		 * held there (uxdp zeroes it): a ring that never wraps in
		 * one program's packets (304 of at most a few hundred bytes
		 * of samples each) holds zeros, so every byte compares. */
		tp->k[i] = perf_buffer__new(bpf_map__fd(km), 128, k_sample,
					    k_lost, &tp->ksink[i], NULL);
		if (!tp->k[i])
			fail_msg("perf_buffer__new(%s): %s", name,
				 strerror(errno));
		for (e = 0; e < 2; e++) {
			tp->usink[e][i] = (struct t_sink){ &tp->us[e], i };
			tp->u[e][i] = uxdp_bpf_perf_buffer_new(
				uxdp_bpf_object_find_map(uobj[e], name), 8,
				sink_sample, sink_lost, &tp->usink[e][i]);
			if (!tp->u[e][i])
				fail_msg("uxdp_bpf_perf_buffer_new(%s): %s",
					 name, uxdp_errmsg());
		}
		tp->n++;
	}
}

/* One side's samples since the last drain: the kernel's (@e -1) or an
 * engine's. */
static void perf_drain(struct t_perf *tp, int e)
{
	struct t_samples *t = e < 0 ? &tp->ks : &tp->us[e];
	uint32_t i;

	t->n = t->more = 0;
	t->lost = 0;
	for (i = 0; i < tp->n; i++)
		if (tp->ring[i])
			assert_true((e < 0 ? ring_buffer__consume(tp->kr[i]) :
				     uxdp_bpf_ring_buffer_consume(
					     tp->ur[e][i])) >= 0);
		else
			assert_true((e < 0 ? perf_buffer__consume(tp->k[i]) :
				     uxdp_bpf_perf_buffer_consume(
					     tp->u[e][i])) >= 0);
}

static int samples_diff(const struct t_perf *tp, int e, char *why,
			size_t len)
{
	const struct t_samples *k = &tp->ks, *u = &tp->us[e];
	uint32_t i, b;

	if (k->n != u->n || k->more != u->more || k->lost != u->lost) {
		snprintf(why, len, "perf samples: kernel %u (%u lost), uxdp %u "
			 "(%u lost)", k->n + k->more, (unsigned)k->lost,
			 u->n + u->more, (unsigned)u->lost);
		return 1;
	}
	for (i = 0; i < k->n; i++) {
		if (k->v[i].map != u->v[i].map ||
		    k->v[i].size != u->v[i].size) {
			snprintf(why, len, "perf sample %u: kernel %u bytes into "
				 "%s, uxdp %u into %s", i, k->v[i].size,
				 tp->names[k->v[i].map], u->v[i].size,
				 tp->names[u->v[i].map]);
			return 1;
		}
		for (b = 0; b < k->v[i].size && b < T_SAMPLE_MAX; b++)
			if (k->v[i].data[b] != u->v[i].data[b]) {
				snprintf(why, len, "perf sample %u (%s, %u "
					 "bytes), byte %u: kernel 0x%02x, uxdp "
					 "0x%02x", i, tp->names[k->v[i].map],
					 k->v[i].size, b, k->v[i].data[b],
					 u->v[i].data[b]);
				return 1;
			}
	}
	return 0;
}

static void perf_close(struct t_perf *tp)
{
	uint32_t i, e;

	for (i = 0; i < tp->n; i++) {
		if (tp->ring[i]) {
			ring_buffer__free(tp->kr[i]);
			for (e = 0; e < 2; e++)
				uxdp_bpf_ring_buffer_free(tp->ur[e][i]);
			continue;
		}
		perf_buffer__free(tp->k[i]);
		for (e = 0; e < 2; e++)
			assert_int_equal(uxdp_bpf_perf_buffer_free(tp->u[e][i]),
					 0);
	}
	tp->n = 0;
}

static const char *const engine_name[] = {
	[UXDP_BPF_ENGINE_INTERP] = "interpreter", [UXDP_BPF_ENGINE_JIT] = "jit",
};

/*
 * One program of one object through the kernel and both engines: the
 * number of unexplained differences.
 */
static unsigned int corpus_prog(const char *oname, const char *path,
				const char *pname, const struct t_pkts *pkts,
				struct corpus_counts *c)
{
	static struct t_out kout, uout;
	static struct t_perf tp;
	struct uxdp_bpf_object *uobj[2] = { NULL, NULL };
	struct uxdp_prog *uprog[2] = { NULL, NULL };
	char why[1024];
	struct bpf_object *kobj;
	unsigned int bad = 0, pkt_bad = 0, i, e;
	bool per_pkt;
	int fd, err;

	c->programs++;
	kobj = kernel_open_one(path, pname, why, sizeof(why));
	if (!kobj) {
		c->kernel_refused++;
		printf("%s %s: the kernel refuses it: %s\n", oname, pname,
		       why);
		return 0;
	}
	fd = bpf_program__fd(bpf_object__find_program_by_name(kobj, pname));
	for (e = 0; e < 2; e++) {
		uobj[e] = uxdp_open_one(path, pname, e ? UXDP_BPF_ENGINE_JIT :
					UXDP_BPF_ENGINE_INTERP, &err, why,
					sizeof(why));
		if (!uobj[e]) {
			/* What uxdp does not have yet is named, not a
			 * difference; any other refusal of what the kernel
			 * accepts is. */
			printf("%s %s: the kernel loads it, uxdp %s: %s\n",
			       oname, pname, err == -EOPNOTSUPP ?
			       "does not have what it needs" :
			       "REFUSES it", why);
			if (err != -EOPNOTSUPP) {
				printf("DIFFERENCE %s %s: refused by uxdp "
				       "only\n", oname, pname);
				bad++;
			}
			c->uxdp_refused++;
			goto out;
		}
		uprog[e] = uxdp_bpf_object_prog(uobj[e], pname);
		assert_non_null(uprog[e]);
		/* The kernel twice: the same. */
		dyn_fill(oname, kobj, uobj[e]);
		katran_seed(oname, kobj, uobj[e]);
		xdpfilt_seed(oname, kobj, uobj[e]);
		xdpdump_seed(oname, kobj, uobj[e], pkts);
	}
	perf_open(&tp, kobj, uobj);
	/* The kernel test-runs no devmap or cpumap program. */
	kernel_pkt(fd, &pkts->v[0], &kout);
	if (kout.err == -EINVAL &&
	    bpf_program__expected_attach_type(
		bpf_object__find_program_by_name(kobj, pname)) != BPF_XDP) {
		c->no_test_run++;
		printf("%s %s: BPF_PROG_TEST_RUN does not run this kind "
		       "(attach type %u): loaded, not compared\n", oname,
		       pname, bpf_program__expected_attach_type(
				bpf_object__find_program_by_name(kobj, pname)));
		goto out;
	}
	c->compared++;
	per_pkt = arrays_small(uobj[0]);
	for (i = 0; i < pkts->n; i++) {
		const struct t_pkt *k = &pkts->v[i];
		char where[128];

		if (i)
			kernel_pkt(fd, k, &kout);
		perf_drain(&tp, -1);
		if (!kout.err && kout.verdict < 5)
			c->verdicts[kout.verdict]++;
		for (e = 0; e < 2; e++) {
			uxdp_pkt(uprog[e], k, &uout);
			perf_drain(&tp, (int)e);
			c->runs++;
			c->samples += tp.us[e].n;
			if (!out_diff(&kout, &uout, why, sizeof(why)) &&
			    !samples_diff(&tp, (int)e, why, sizeof(why))) {
				c->equal++;
				continue;
			}
			c->differ++;
			bad++;
			if (++pkt_bad > 10)
				continue;	/* counted, said at the end */
			printf("DIFFERENCE %s %s (%s), packet %u (%s, %u "
			       "bytes, %u of metadata): %s\n", oname, pname,
			       engine_name[e ? UXDP_BPF_ENGINE_JIT :
					   UXDP_BPF_ENGINE_INTERP], i, k->what,
			       k->len, k->meta, why);
		}
		/* Until the first difference: the rest follow from it. */
		for (e = 0; e < 2 && per_pkt; e++) {
			unsigned int d;

			snprintf(where, sizeof(where), "%s (%s), after packet "
				 "%u", pname, engine_name[e ?
				 UXDP_BPF_ENGINE_JIT : UXDP_BPF_ENGINE_INTERP],
				 i);
			d = maps_diff(oname, where, kobj, uobj[e]);
			bad += d;
			per_pkt = !d;
		}
	}
	if (pkt_bad > 10)
		printf("DIFFERENCE %s %s: %u more runs differ\n", oname,
		       pname, pkt_bad - 10);
	for (e = 0; e < 2; e++) {
		char where[128];

		snprintf(where, sizeof(where), "%s (%s), after %u packets",
			 pname, engine_name[e ? UXDP_BPF_ENGINE_JIT :
					    UXDP_BPF_ENGINE_INTERP], pkts->n);
		bad += maps_diff(oname, where, kobj, uobj[e]);
	}
	printf("%s %s: %u packets through the kernel and both engines: %s\n",
	       oname, pname, pkts->n, bad ? "DIFFERENT" : "the same verdicts, "
	       "packets, metadata and maps");
out:
	perf_close(&tp);
	for (e = 0; e < 2; e++) {
		uxdp_prog_put(uprog[e]);
		uxdp_bpf_object_close(uobj[e]);
	}
	bpf_object__close(kobj);
	return bad;
}

/* libbpf's warnings about the refused objects go to the log reason. */
static int quiet_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/*
 * A context that names no device: the kernel runs the program on its
 * namespace's lo, so ingress_ifindex reads lo's (1); uxdp's test run has
 * no device behind it. What each presents is printed; a difference here is
 * of uxdp_bpf_prog_test_run()'s default, not of the engines, and is
 * reported, not failed. Any other difference of the run fails.
 */
static unsigned int ctx_default(const struct t_pkts *pkts)
{
	static struct t_out kout, uout;
	char path[1024], why[1024];
	struct t_pkt k = pkts->v[0];
	struct uxdp_bpf_object *uobj;
	struct uxdp_prog *uprog;
	struct bpf_object *kobj;
	uint64_t kseen = 0, useen = 0;
	uint32_t key = 0;
	int err, fd;

	snprintf(path, sizeof(path), "%s/kdiff_ctx.o", T_BPF_DIR);
	kobj = kernel_open_one(path, "kdiff_ctx", why, sizeof(why));
	uobj = uxdp_open_one(path, "kdiff_ctx", UXDP_BPF_ENGINE_INTERP, &err,
			     why, sizeof(why));
	assert_non_null(kobj);
	assert_non_null(uobj);
	k.ifindex = 0;
	kernel_pkt(bpf_program__fd(bpf_object__find_program_by_name(kobj,
			"kdiff_ctx")), &k, &kout);
	uprog = uxdp_bpf_object_prog(uobj, "kdiff_ctx");
	uxdp_pkt(uprog, &k, &uout);
	uxdp_prog_put(uprog);
	fd = bpf_map__fd(bpf_object__find_map_by_name(kobj, "seen"));
	assert_int_equal(bpf_map_lookup_elem(fd, &key, &kseen), 0);
	assert_int_equal(uxdp_bpf_map_lookup(uxdp_bpf_object_find_map(uobj,
			 "seen"), &key, &useen, 0), 0);
	uxdp_bpf_object_close(uobj);
	bpf_object__close(kobj);
	if (kseen != useen)
		printf("known difference (uxdp_bpf_prog_test_run's default, "
		       "not the engines'): a context naming no device reads "
		       "ingress_ifindex %" PRIu64 " in the kernel (its lo), %"
		       PRIu64 " in uxdp\n", kseen, useen);
	else
		printf("a context naming no device reads ingress_ifindex %"
		       PRIu64 " on both\n", kseen);
	if (!out_diff(&kout, &uout, why, sizeof(why)))
		return 0;
	printf("DIFFERENCE kdiff_ctx without a device: %s\n", why);
	return 1;
}

/* Every XDP program of every @dir/NAME.o through corpus_prog(): the
 * differences; @c counts. */
static unsigned int corpus_dir(const char *dir, const struct t_pkts *pkts,
			       struct corpus_counts *c)
{
	unsigned int bad = 0;
	size_t n, i;
	char **files = dir_files(dir, ".o", &n);

	assert_non_null(files);
	for (i = 0; i < n; i++) {
		char path[1024], oname[256];
		struct uxdp_bpf_object *obj;
		const struct uxdp_bpf_program *p = NULL;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		snprintf(oname, sizeof(oname), "%s", files[i]);
		oname[strlen(oname) - 2] = '\0';	/* NAME or NAME.v1 */
		c->objects++;
		obj = uxdp_bpf_object_open(path, NULL);
		if (!obj) {
			printf("%s: uxdp cannot open it: %s\n", files[i],
			       uxdp_errmsg());
			bad++;
			continue;
		}
		while ((p = uxdp_bpf_object_next_program(obj, p))) {
			if (uxdp_bpf_program_type(p) != BPF_PROG_TYPE_XDP)
				continue;
			bad += corpus_prog(oname, path,
					   uxdp_bpf_program_name(p), pkts, c);
		}
		uxdp_bpf_object_close(obj);
		free(files[i]);
	}
	free(files);
	return bad;
}

static uint64_t kdiff_seed(void)
{
	const char *env = getenv("UXDP_BPF_KDIFF_SEED");

	return env && *env ? strtoull(env, NULL, 0) :
	       (uint64_t)time(NULL) * 2654435761ULL | 1;
}

static void say_counts(const char *what, const struct corpus_counts *c,
		       const struct t_pkts *pkts, unsigned int bad)
{
	printf("%s against kernel %s: %u objects, %u XDP programs: %u "
	       "refused by the kernel, %u loaded by the kernel that uxdp "
	       "refuses, %u the kernel cannot test-run; %u compared over %u "
	       "packets each: %u runs (both engines), %u equal, %u differ "
	       "(the kernel's verdicts: %u aborted, %u drop, %u pass, %u tx, "
	       "%u redirect; %u perf and ring buffer records compared); %u differences in "
	       "all\n", what, krules.release,
	       c->objects, c->programs, c->kernel_refused, c->uxdp_refused,
	       c->no_test_run, c->compared, pkts->n, c->runs, c->equal,
	       c->differ, c->verdicts[0], c->verdicts[1], c->verdicts[2],
	       c->verdicts[3], c->verdicts[4], c->samples, bad);
}

/*
 * The test on CPU 0: the kernel's test run runs where its caller does, and
 * uxdp's is thread index 0, so BPF_F_CURRENT_CPU, index 0 and a per-CPU
 * map's slot 0 are the same on both sides. @was gets what to restore.
 */
static void pin_cpu0(cpu_set_t *was)
{
	cpu_set_t cpus;

	assert_int_equal(sched_getaffinity(0, sizeof(*was), was), 0);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	assert_int_equal(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
}

static void test_corpus(void **state)
{
	cpu_set_t was;
	struct corpus_counts c = { 0 };
	struct t_pkts pkts = { 0 };
	struct t_ctx_dev dev;
	uint64_t seed = kdiff_seed();
	unsigned int bad;

	(void)state;
	libbpf_set_print(quiet_libbpf);
	dev = ctx_dev();
	make_pkts(&pkts, seed, &dev);
	printf("corpus: objects from %s, %u packets per program, random "
	       "ones from seed 0x%" PRIx64 " (UXDP_BPF_KDIFF_SEED=0x%" PRIx64
	       " repeats them)\n", T_BPF_DIR, pkts.n, seed, seed);
	pin_cpu0(&was);
	bad = corpus_dir(T_BPF_DIR, &pkts, &c);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	assert_true(c.objects > 10);
	/* perf.bpf.c's samples were compared. */
	assert_true(c.samples > 0);
	bad += ctx_default(&pkts);
	free(pkts.v);
	libbpf_set_print(NULL);
	say_counts("corpus", &c, &pkts, bad);
	assert_int_equal(bad, 0);
}

/*
 * The objects Debian's libxdp1 and xdp-tools install, as the kernel runs
 * them: xdp-filter's twelve (rules from xdpfilt_seed()), the AF_XDP
 * default programs (an empty XSKMAP: redirect_map's fallback), the
 * dispatcher, xdpdump's. Every program the kernel loads must run in uxdp
 * and agree, or be named as what uxdp lacks.
 */
static void test_debian(void **state)
{
	struct corpus_counts c = { 0 };
	struct t_pkts pkts = { 0 };
	struct t_ctx_dev dev;
	uint64_t seed = kdiff_seed();
	cpu_set_t was;
	unsigned int bad;

	(void)state;
	if (access(T_DEBIAN_BPF_DIR, R_OK)) {
		printf("SKIP test_debian: no %s (Debian's libxdp1 and "
		       "xdp-tools install it)\n", T_DEBIAN_BPF_DIR);
		if (getenv("UXDP_CI"))
			fail_msg("UXDP_CI=1: %s must be there", T_DEBIAN_BPF_DIR);
		skip();
	}
	/* Per-CPU seeds in CPU 0's slot (seed_cpu0()). */
	pin_cpu0(&was);
	libbpf_set_print(quiet_libbpf);
	dev = ctx_dev();
	make_pkts(&pkts, seed, &dev);
	printf("debian: objects from %s, %u packets per program, seed 0x%"
	       PRIx64 "\n", T_DEBIAN_BPF_DIR, pkts.n, seed);
	bad = corpus_dir(T_DEBIAN_BPF_DIR, &pkts, &c);
	free(pkts.v);
	libbpf_set_print(NULL);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	say_counts("debian", &c, &pkts, bad);
	/* xdp-filter's twelve at least were compared, and xdpdump's
	 * captures. */
	assert_true(c.compared >= 12);
	assert_true(c.samples > 0);
	assert_int_equal(bad, 0);
}

/* ---- UXDP_BPF_F_KERNEL_VERIFY --------------------------------------------- */

static bool kv_log_seen;	/* the verifier's log came to the callback */

static int kv_print(enum uxdp_print_level level, const char *fmt, va_list ap)
{
	char line[256];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (level == UXDP_INFO && strstr(line, "refuses it; its log:"))
		kv_log_seen = true;
	return 0;
}

/* uxdp's load of @path on the interpreter, with @flags: 0 or -errno. */
static int uxdp_load_flags(const char *path, uint32_t flags, char *why,
			   size_t whylen)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
			  .engine = UXDP_BPF_ENGINE_INTERP, .flags = flags);
	struct uxdp_bpf_object *obj = uxdp_bpf_object_open(path, &o);
	int err;

	if (!obj)
		return -errno;
	err = uxdp_bpf_object_load(obj);
	snprintf(why, whylen, "%s", err ? uxdp_errmsg() : "");
	uxdp_bpf_object_close(obj);
	return err;
}

/*
 * With the flag, uxdp loads an object exactly when it loads it without the
 * flag and the kernel accepts each of its XDP programs; a refusal names
 * the kernel's reason, the kernel's own (as libbpf's load of the same
 * program gives it), and its log goes to the print callback.
 */
static void test_kernel_verify(void **state)
{
	unsigned int objs = 0, refused = 0, bad = 0;
	uxdp_print_fn_t old;
	size_t n, i;
	char **files = dir_files(T_BPF_DIR, ".o", &n);

	(void)state;
	assert_non_null(files);
	libbpf_set_print(quiet_libbpf);
	old = uxdp_set_print(kv_print);
	for (i = 0; i < n; i++) {
		char path[1024], plain_why[1024], why[1024], kwhy[1024] = "";
		const struct uxdp_bpf_program *p = NULL;
		struct uxdp_bpf_object *obj;
		bool kernel_all = true;
		int plain, flagged;

		snprintf(path, sizeof(path), "%s/%s", T_BPF_DIR, files[i]);
		obj = uxdp_bpf_object_open(path, NULL);
		assert_non_null(obj);
		while ((p = uxdp_bpf_object_next_program(obj, p))) {
			struct bpf_object *k;

			if (uxdp_bpf_program_type(p) != BPF_PROG_TYPE_XDP)
				continue;
			k = kernel_open_one(path, uxdp_bpf_program_name(p),
					    why, sizeof(why));
			if (!k && kernel_all) {
				kernel_all = false;
				snprintf(kwhy, sizeof(kwhy), "%s", why);
				/* the reason, without libbpf's errno */
				kwhy[strcspn(kwhy, "(")] = '\0';
			}
			bpf_object__close(k);
		}
		uxdp_bpf_object_close(obj);
		plain = uxdp_load_flags(path, 0, plain_why, sizeof(plain_why));
		kv_log_seen = false;
		flagged = uxdp_load_flags(path, UXDP_BPF_F_KERNEL_VERIFY, why,
					  sizeof(why));
		objs++;
		refused += flagged != 0;
		if (!plain && kernel_all && !flagged)
			continue;
		if (plain) {
			/* uxdp refuses it on its own: the same refusal */
			if (flagged != plain) {
				printf("FAIL %s: %d without the flag (%s), %d "
				       "with it (%s)\n", files[i], plain,
				       plain_why, flagged, why);
				bad++;
			}
			continue;
		}
		if (!kernel_all && flagged == -EINVAL &&
		    strstr(why, "the verifier of kernel") &&
		    kwhy[0] && strstr(why, t_bpf_trim(kwhy)) && kv_log_seen) {
			printf("%s: with UXDP_BPF_F_KERNEL_VERIFY: %s\n",
			       files[i], why);
			continue;
		}
		printf("FAIL %s: the kernel %s it (%s); with the flag uxdp: "
		       "%d (%s)%s\n", files[i], kernel_all ? "accepts" :
		       "refuses", kwhy, flagged, why, kv_log_seen ? "" :
		       ", no log");
		bad++;
	}
	uxdp_set_print(old);
	libbpf_set_print(NULL);
	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
	printf("UXDP_BPF_F_KERNEL_VERIFY on kernel %s: %u objects, %u "
	       "refused with the flag, %u wrong\n", krules.release, objs,
	       refused, bad);
	assert_int_equal(bad, 0);
}

#ifdef T_KATRAN_O
/* Flows to Katran's VIPs: TCP to 10.0.0.2:80 (SYN or not) and UDP to
 * :53 from many clients and ports, each flow twice (the second finds the
 * LRU's entry), and ICMP echo requests to the VIP. */
static void katran_flows(struct t_pkts *p, uint64_t seed)
{
	uint32_t cut[8], i, rep;
	unsigned int ncut;
	uint64_t r = seed;

	for (i = 0; i < 120; i++) {
		int kind = (int)(t_rand(&r) % 5);
		uint32_t src = 0x0a020000 | (uint32_t)(t_rand(&r) & 0xffff);
		uint16_t sport = (uint16_t)(1024 + t_rand(&r) % 60000);
		uint8_t flags = t_rand(&r) & 1 ? 0x02 : 0x10;
		struct t_pkt *k = pkt_add(p, "katran flow");
		uint8_t *ip = k->data + 14;

		k->len = frame(k->data, false, 4, 5, kind == 4 ? 1 :
			       kind >= 2 ? 17 : 6, kind >= 2 ? 53 : 80, 16, cut,
			       &ncut);
		ip[12] = (uint8_t)(src >> 24), ip[13] = (uint8_t)(src >> 16);
		ip[14] = (uint8_t)(src >> 8), ip[15] = (uint8_t)src;
		put16(ip + 10, 0);
		put16(ip + 10, csum16(ip, 20));
		if (kind == 4) {
			ip[20] = 8;		/* echo request */
			ip[21] = 0;
		} else {
			put16(ip + 20, sport);
			if (kind < 2)
				ip[33] = flags;
		}
		for (rep = 1; rep < 2; rep++) {
			struct t_pkt again = *k;	/* pkt_add may move it */

			again.what = "katran flow again";
			*pkt_add(p, again.what) = again;
		}
	}
}
#endif

/*
 * Katran's balancer (built from UXDP_KATRAN_DIR's checkout), configured
 * (katran_seed), through the kernel and both engines on the corpus's
 * packets: the TCP 80 and UDP 53 ones are its VIPs' and come out
 * encapsulated for a real (XDP_TX), its ICMP ones are answered, the rest
 * passed; verdicts, bytes and maps (its stats; the LRUs' times are each
 * side's own and are not compared) the same.
 */
static void test_katran(void **state)
{
#ifdef T_KATRAN_O
	struct corpus_counts c = { 0 };
	struct t_pkts pkts = { 0 };
	struct t_ctx_dev dev;
	unsigned int bad;

	(void)state;
	libbpf_set_print(quiet_libbpf);
	dev = ctx_dev();
	make_pkts(&pkts, 0x6b617472616eULL, &dev);
	katran_flows(&pkts, 0x6b617472616eULL);
	bad = corpus_prog("balancer", T_KATRAN_O, "balancer_ingress", &pkts,
			  &c);
	free(pkts.v);
	libbpf_set_print(NULL);
	printf("katran against kernel %s: %u packets (the kernel's verdicts: "
	       "%u aborted, %u drop, %u pass, %u tx, %u redirect), %u runs "
	       "(both engines), %u equal, %u differ\n", krules.release,
	       pkts.n, c.verdicts[0], c.verdicts[1], c.verdicts[2],
	       c.verdicts[3], c.verdicts[4], c.runs, c.equal, c.differ);
	/* The VIPs' packets were balanced, not all passed. */
	assert_true(c.verdicts[3] > 0);
	assert_int_equal(c.compared, 1);
	assert_int_equal(bad, 0);
#else
	(void)state;
	printf("SKIP test_katran: no Katran checkout given (cmake "
	       "-DUXDP_KATRAN_DIR=PATH: facebookincubator/katran)\n");
	skip();
#endif
}

#endif /* T_BPF_DIR */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance),
#ifdef T_BPF_DIR
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_debian),
		cmocka_unit_test(test_kernel_verify),
		cmocka_unit_test(test_katran),
#endif
	};

	need_kernel_bpf();
	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
