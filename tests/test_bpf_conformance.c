/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bpf_conformance suite (../shared/bpf-conformance, or
 * UXDP_BPF_CONFORMANCE_DIR) through every engine: each .data file of tests/
 * assembled (asm and raw agreeing where a file has both), built on the raw
 * path (src/bpf/raw.c: helper 5 with unwind, 512-byte frames) and run with
 * r1 = a writable copy of its memory, r2 = its length; r0 must be its
 * result. What the issue puts out of scope (callx, the legacy packet
 * loads) is counted and named, never hidden. Every file of negative/ must
 * not pass: refused by the parser, the assembler or the validity rules, or
 * run to a result other than the one it claims.
 *
 * Engines are a list: the interpreter, and the JIT (x86-64).
 */
#include "t_helpers.h"

#include <dirent.h>

#include "t_bpf.h"

#ifndef UXDP_BPF_CONFORMANCE_DIR
#define UXDP_BPF_CONFORMANCE_DIR "../shared/bpf-conformance"
#endif

/* An engine: optional preparation of a code (a JIT compiles), a run. */
struct t_engine {
	const char *name;
	int (*prepare)(struct uxdp_bpf_code *code, void **state);
	uint64_t (*run)(void *state, struct uxdp_bpf_run *run, uint64_t r1,
			uint64_t r2);
	void (*release)(void *state);
};

static uint64_t interp_run(void *state, struct uxdp_bpf_run *run,
			   uint64_t r1, uint64_t r2)
{
	(void)state;
	return uxdp_bpf_interp_run(run, r1, r2);
}

/* The JIT: compiled once per file, any refusal a failure (x86-64). */
static int jit_prepare(struct uxdp_bpf_code *code, void **state)
{
	return uxdp_bpf_jit_compile(code, (struct uxdp_bpf_jit **)state);
}

static uint64_t jit_run(void *state, struct uxdp_bpf_run *run, uint64_t r1,
			uint64_t r2)
{
	return uxdp_bpf_jit_run(state, run, r1, r2);
}

static void jit_release(void *state)
{
	uxdp_bpf_jit_free(state);
}

static const struct t_engine engines[] = {
	{ "interpreter", NULL, interp_run, NULL },
	{ "jit", jit_prepare, jit_run, jit_release },
};

static const char *suite_dir(void)
{
	const char *env = getenv("UXDP_BPF_CONFORMANCE_DIR");

	return env && *env ? env : UXDP_BPF_CONFORMANCE_DIR;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .data files of @sub, sorted; NULL if the folder is missing. */
static char **list_data(const char *sub, size_t *n)
{
	char path[1024], **names = NULL;
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%s", suite_dir(), sub);
	dir = opendir(path);
	*n = 0;
	if (!dir)
		return NULL;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".data"))
			continue;
		names = realloc(names, (*n + 1) * sizeof(*names));
		assert_non_null(names);
		names[*n] = strdup(e->d_name);
		assert_non_null(names[*n]);
		(*n)++;
	}
	closedir(dir);
	qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

static void free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

/* What the issue leaves out, by instruction; NULL: in scope. */
static const char *out_of_scope(const struct bpf_insn *insns, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		uint8_t c = insns[i].code;

		if (c == (BPF_JMP | BPF_CALL | BPF_X))
			return "callx";
		if ((c & 0x07) == BPF_LD && ((c & 0xe0) == BPF_ABS ||
					     (c & 0xe0) == BPF_IND))
			return "legacy packet load";
	}
	return NULL;
}

enum outcome {
	O_PASS,
	O_FAIL,
	O_SCOPE,	/* out of scope, named in why */
	/* How a test did not pass (the negative tests' counts). */
	O_PARSE,
	O_ASM,
	O_VALID,
	O_RAN,
};

/* The program of @d: asm, raw, or both (then they must agree). */
static enum outcome assemble(const struct t_bpf_data *d,
			     struct bpf_insn **insns, uint32_t *len,
			     char *why, size_t whylen)
{
	struct bpf_insn *a = NULL, *r = NULL;
	uint32_t alen = 0, rlen = 0;

	if (d->asm_text && uxdp_bpf_asm(d->asm_text, &a, &alen)) {
		snprintf(why, whylen, "asm: %s", uxdp_errmsg());
		return O_ASM;
	}
	if (d->raw_text && uxdp_bpf_asm_raw(d->raw_text, &r, &rlen)) {
		snprintf(why, whylen, "raw: %s", uxdp_errmsg());
		free(a);
		return O_ASM;
	}
	if (a && r && (alen != rlen || memcmp(a, r, alen * sizeof(*a)))) {
		snprintf(why, whylen, "asm and raw sections differ");
		free(a);
		free(r);
		return O_FAIL;
	}
	if (a && r)
		free(r);
	*insns = a ?: r;
	*len = a ? alen : rlen;
	return O_PASS;
}

/*
 * Run @file of @sub on @eng: how far it got. *@refuse: the file expects a
 * refusal (an error section).
 */
static enum outcome run_one(const struct t_engine *eng, const char *sub,
			    const char *file, bool *refuse, char *why,
			    size_t whylen)
{
	struct uxdp_bpf_code *code = NULL;
	struct t_bpf_data d;
	struct bpf_insn *insns = NULL;
	uint32_t len = 0;
	enum outcome o;
	const char *scope;
	char path[1024];
	void *state = NULL;

	snprintf(path, sizeof(path), "%s/%s/%s", suite_dir(), sub, file);
	*refuse = false;
	if (t_bpf_data_read(path, &d, why, whylen))
		return O_PARSE;
	*refuse = d.has_error;
	o = assemble(&d, &insns, &len, why, whylen);
	if (o != O_PASS)
		goto out;
	scope = out_of_scope(insns, len);
	if (uxdp_bpf_raw_code(file, insns, len, 0, &code)) {
		snprintf(why, whylen, "%s", uxdp_errmsg());
		o = O_VALID;
		if (scope) {
			snprintf(why, whylen, "%s (refused: %s)", scope,
				 uxdp_errmsg());
			o = O_SCOPE;
		}
		goto out;
	}
	if (scope) {
		/* Refusing it is the validity rules' job. */
		snprintf(why, whylen, "%s was not refused", scope);
		o = O_FAIL;
		goto out;
	}
	if (eng->prepare && eng->prepare(code, &state)) {
		snprintf(why, whylen, "%s refused it: %s", eng->name,
			 uxdp_errmsg());
		o = O_FAIL;
		goto out;
	}
	{
		uint8_t *mem = malloc(d.mem_len ? d.mem_len : 1);
		struct uxdp_bpf_run run = {
			.code = code, .mem = mem, .mem_len = d.mem_len,
		};
		uint64_t r0;

		assert_non_null(mem);
		if (d.mem_len)
			memcpy(mem, d.mem, d.mem_len);
		r0 = eng->run(state, &run, (uintptr_t)mem, d.mem_len);
		free(mem);
		o = O_RAN;
		if (run.fault)
			snprintf(why, whylen, "fault %u at insn %u", run.fault,
				 run.fault_pc);
		else if (d.has_error)
			snprintf(why, whylen, "ran (r0 0x%llx), expected "
				 "refusal '%s'", (unsigned long long)r0,
				 d.error ?: "");
		else if (r0 != d.result)
			snprintf(why, whylen, "r0 0x%llx, expected 0x%llx",
				 (unsigned long long)r0,
				 (unsigned long long)d.result);
		else
			o = O_PASS;
	}
out:
	if (state && eng->release)
		eng->release(state);
	uxdp_bpf_raw_free(code);
	free(insns);
	t_bpf_data_free(&d);
	return o;
}

static void need_suite(void)
{
	char path[1024];
	DIR *dir;

	snprintf(path, sizeof(path), "%s/tests", suite_dir());
	dir = opendir(path);
	if (!dir)
		t_skip_program("no conformance suite at %s (set "
			       "UXDP_BPF_CONFORMANCE_DIR)", suite_dir());
	closedir(dir);
}

static void test_engine(const struct t_engine *eng)
{
	size_t n, i, passed = 0, scope = 0, failed = 0;
	char **names = list_data("tests", &n), why[512];

	assert_non_null(names);
	assert_true(n > 300);	/* the suite has 313: not a partial copy */
	for (i = 0; i < n; i++) {
		bool refuse;
		enum outcome o = run_one(eng, "tests", names[i], &refuse, why,
					 sizeof(why));

		/* One that expects a refusal passes by any (uxdp's texts
		 * are its own, not uBPF's). */
		if (refuse && (o == O_ASM || o == O_VALID))
			o = O_PASS;
		if (o == O_PASS) {
			passed++;
		} else if (o == O_SCOPE) {
			scope++;
			printf("out of scope: %s: %s\n", names[i], why);
		} else {
			failed++;
			printf("FAIL (%s) %s: %s\n", eng->name, names[i], why);
		}
	}
	printf("conformance (%s): %zu passed / %zu in scope, %zu out of "
	       "scope\n", eng->name, passed, n - scope, scope);
	free_names(names, n);
	assert_int_equal(failed, 0);
	assert_int_equal(passed + scope, n);
}

static void test_interpreter(void **state)
{
	(void)state;
	test_engine(&engines[0]);
}

static void test_jit(void **state)
{
	(void)state;
#if defined(__x86_64__)
	test_engine(&engines[1]);
#else
	skip();		/* the JIT is x86-64 only */
#endif
}

/* Every negative test must fail to pass, and the counts say how. */
static void test_negative(void **state)
{
	size_t n, i, count[O_RAN + 1] = { 0 }, passed = 0;
	char **names = list_data("negative", &n), why[512];

	(void)state;
	assert_non_null(names);
	assert_true(n > 50);
	for (i = 0; i < n; i++) {
		bool refuse;
		enum outcome o = run_one(&engines[0], "negative", names[i],
					 &refuse, why, sizeof(why));

		count[o]++;
		if (o == O_PASS || o == O_SCOPE) {
			passed++;
			printf("PASSED (must not): negative/%s\n", names[i]);
		} else {
			printf("negative/%s: %s\n", names[i], why);
		}
	}
	printf("conformance negative: %zu of %zu refused or wrong (parser %zu, "
	       "assembler %zu, validity %zu, ran to another result %zu, "
	       "other %zu)\n", n - passed, n, count[O_PARSE], count[O_ASM],
	       count[O_VALID], count[O_RAN], count[O_FAIL]);
	free_names(names, n);
	assert_int_equal(passed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interpreter),
		cmocka_unit_test(test_jit),
		cmocka_unit_test(test_negative),
	};

	need_suite();
	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
