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
 * Needs root (CAP_BPF, CAP_PERFMON); skips loudly otherwise, and fails
 * under UXDP_CI=1.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "t_bpf.h"
#include "t_kernel_rules.h"

#ifndef UXDP_BPF_CONFORMANCE_DIR
#define UXDP_BPF_CONFORMANCE_DIR "../shared/bpf-conformance"
#endif

#define T_XDP_PASS	2
#define T_ETH_HLEN	14
#define T_LOG_SIZE	(1U << 20)

static struct t_krules krules;
static char *vlog;		/* the verifier's log, T_LOG_SIZE */

/* ---- the kernel side ------------------------------------------------------ */

/*
 * The verifier's reason: the last line of its log that is not one of the
 * statistics it ends with.
 */
static const char *log_reason(char *log)
{
	char *end = log + strlen(log), *p;

	for (;;) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			*--end = '\0';
		p = end;
		while (p > log && p[-1] != '\n')
			p--;
		if (p == log || (strncmp(p, "processed ", 10) &&
				 strncmp(p, "verification time", 17)))
			return *p ? p : "(no log)";
		end = p;
	}
}

/*
 * Load @insns as an XDP program: its fd, or -errno with the verifier's
 * reason in vlog (log_reason()).
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

	if (geteuid() != 0)
		t_skip_program("test_bpf_kernel needs root (CAP_BPF, "
			       "CAP_PERFMON) to load XDP programs into the "
			       "kernel's verifier");
	vlog = malloc(T_LOG_SIZE);
	assert_non_null(vlog);
	fd = kprog_load("kdiff_probe", pass, 2);
	if (fd < 0)
		t_skip_program("the kernel loads no XDP program here (%s: %s)",
			       strerror(-fd), log_reason(vlog));
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

/* The suite's .data files of tests/, sorted; skips loudly without it. */
static char **suite_files(size_t *n)
{
	char dir_path[1024], **v = NULL;
	struct dirent *e;
	DIR *dir;

	snprintf(dir_path, sizeof(dir_path), "%s/tests", suite_dir());
	dir = opendir(dir_path);
	if (!dir)
		t_skip_program("no conformance suite at %s (set "
			       "UXDP_BPF_CONFORMANCE_DIR)", suite_dir());
	*n = 0;
	while ((e = readdir(dir))) {
		const char *dot = strrchr(e->d_name, '.');

		if (!dot || strcmp(dot, ".data"))
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		assert_non_null(v);
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(dir);
	qsort(v, *n, sizeof(*v), cmp_str);
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
		snprintf(why, whylen, "%s", log_reason(vlog));
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
	unsigned int equal, differ, explained, kernel_vs_file;
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
	kernel_suite_run(file, insns, len, &d, r0_fd, &side[SIDE_KERNEL],
			 why[SIDE_KERNEL], sizeof(why[0]));
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
	bad = 1;
	printf("DIFFERENCE %s: %s\n", file, diff);
out:
	for (s = 0; s < SIDE_COUNT; s++)
		free(side[s].mem);
	free(insns);
	t_bpf_data_free(&d);
	return bad;
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
	       "uxdp agree against the file\n", krules.release, c.files,
	       c.refusal_files, c.kernel_ran, c.uxdp_ran, c.compared, c.equal,
	       c.differ, c.explained, c.kernel_vs_file);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance),
	};

	need_kernel_bpf();
	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
