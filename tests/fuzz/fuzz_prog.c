/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_prog: the program loader's string inputs. uxdp_prog_load(path, name,
 * args) with the path picked from a fixed set (the two modules of
 * fuzz_progs.c, a missing file, a directory, files that are not shared
 * objects, "" and NULL) and name and args arbitrary NUL-terminated byte
 * strings (or NULL).
 *
 * Checks:
 *  - a load succeeds exactly for a name the module defines (exactly, and
 *    only in the module itself, not in a library it links), with a
 *    function, whose init accepts the args; the program's name is the name
 *    asked for; it runs on a dummy buffer with the verdict and effect the
 *    module gives it; uxdp_prog_get/put count references and the last put
 *    frees it (LeakSanitizer checks each input);
 *  - every other load returns NULL with an error text and the errno xdp.h
 *    lists for the case (a bad name: EINVAL or ENAMETOOLONG; a missing
 *    file ENOENT, a directory EISDIR, not ELF ENOEXEC, a broken ELF file
 *    ELIBBAD; no such program ENOENT; init's own errno, or EINVAL).
 *
 * Input: u8 path (% NR_PATHS), u8 name mode, name bytes, u8 args mode, args
 * bytes (see LLVMFuzzerTestOneInput()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"
#include "fuzz_progs.h"

#define NAME_MAX_LEN	160
#define ARGS_MAX_LEN	64

static const struct {
	const char *name;
	enum fp_kind kind;
} progs[] = {
	{ "pass", FP_PLAIN },
	{ FP_STR(FP_LONG63), FP_PLAIN },
	{ FP_STR(FP_LONG64), FP_PLAIN },
	{ FP_STR(FP_LONG85), FP_PLAIN },
	{ FP_STR(FP_LONG90), FP_PLAIN },
	{ "tag", FP_TAG },
	{ "fail", FP_FAIL },
	{ "quiet", FP_QUIET },
	{ "norun", FP_NORUN },
	/* Not defined by the modules, but by libuxdp itself. */
	{ "load", FP_NONE },
	{ "create", FP_NONE },
	{ "run", FP_NONE },
};
#define NR_PROGS (sizeof(progs) / sizeof(progs[0]))

enum {
	P_MODULE,
	P_MODULE_LINKED,
	P_MISSING,
	P_DIR,
	P_TEXT,
	P_EMPTY,
	P_BAD_ELF,
	P_EMPTY_STR,
	P_NULL,
	NR_PATHS
};

static char tmpdir[256];
static char paths[NR_PATHS][300];
static void *keep[2];	/* the modules stay loaded between inputs */

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "fuzz_prog: cannot write %s\n", path);
		exit(1);
	}
}

static void cleanup(void)
{
	unlink(paths[P_TEXT]);
	unlink(paths[P_EMPTY]);
	unlink(paths[P_BAD_ELF]);
	rmdir(paths[P_DIR]);
	rmdir(tmpdir);
	if (keep[0])
		dlclose(keep[0]);
	if (keep[1])
		dlclose(keep[1]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char bad_elf[] = "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0"
				      "\3\0\76\0\1\0\0\0";
	const char *t = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	uxdp_set_print(NULL);
	snprintf(tmpdir, sizeof(tmpdir), "%s/uxdp-fuzz-prog.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("fuzz_prog: mkdtemp");
		exit(1);
	}
	snprintf(paths[P_MODULE], sizeof(paths[0]), "%s", FUZZ_PROGS_SO);
	snprintf(paths[P_MODULE_LINKED], sizeof(paths[0]), "%s",
		 FUZZ_PROGS_LINKED_SO);
	snprintf(paths[P_MISSING], sizeof(paths[0]), "%s/missing.so", tmpdir);
	snprintf(paths[P_DIR], sizeof(paths[0]), "%s/dir.so", tmpdir);
	snprintf(paths[P_TEXT], sizeof(paths[0]), "%s/text.so", tmpdir);
	snprintf(paths[P_EMPTY], sizeof(paths[0]), "%s/empty.so", tmpdir);
	snprintf(paths[P_BAD_ELF], sizeof(paths[0]), "%s/bad.so", tmpdir);
	paths[P_EMPTY_STR][0] = '\0';
	if (mkdir(paths[P_DIR], 0700)) {
		perror("fuzz_prog: mkdir");
		exit(1);
	}
	write_file(paths[P_TEXT], "not a shared object\n", 20);
	write_file(paths[P_EMPTY], "", 0);
	/* A truncated ELF header. */
	write_file(paths[P_BAD_ELF], bad_elf, sizeof(bad_elf) - 1);
	atexit(cleanup);

	/* Loading a module once per input is slow and adds nothing: keep
	 * both mapped, so each uxdp_prog_load() only takes a reference. */
	keep[0] = dlopen(paths[P_MODULE], RTLD_NOW | RTLD_LOCAL);
	keep[1] = dlopen(paths[P_MODULE_LINKED], RTLD_NOW | RTLD_LOCAL);
	if (!keep[0] || !keep[1]) {
		fprintf(stderr, "fuzz_prog: cannot load the modules: %s\n",
			dlerror());
		exit(1);
	}
	return 0;
}

/* Index of @name in progs[] if it is exactly one of them, else -1. */
static int find_prog(const char *name)
{
	size_t i;

	for (i = 0; i < NR_PROGS; i++)
		if (!strcmp(progs[i].name, name))
			return (int)i;
	return -1;
}

/* xdp.h: a name is 1..63 letters, digits and '_'. */
static int name_errno(const char *name)
{
	size_t i, len = strlen(name);

	if (!len)
		return EINVAL;
	if (len > 63)
		return ENAMETOOLONG;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return EINVAL;
	}
	return 0;
}

/* xdp.h: why a path does not load (0: it does). */
static int path_errno(uint32_t path_i)
{
	switch (path_i) {
	case P_MISSING:
		return ENOENT;
	case P_DIR:
		return EISDIR;
	case P_TEXT:
	case P_EMPTY:
		return ENOEXEC;
	case P_BAD_ELF:
		return ELIBBAD;
	default:	/* the modules, and "" (the program itself) */
		return 0;
	}
}

/* What loading program @k (-1: undefined) from a loadable path gives. */
static int prog_errno(uint32_t path_i, int k, const char *args)
{
	bool module = path_i == P_MODULE || path_i == P_MODULE_LINKED;

	if (!module || k < 0)
		return ENOENT;
	switch (progs[k].kind) {
	case FP_PLAIN:
		return 0;
	case FP_TAG:
		return !args || !strncmp(args, "tag=", 4) ? 0 : EINVAL;
	case FP_FAIL:
		return ENOTSUP;
	case FP_QUIET:
		return EINVAL;
	default:	/* no function, or not defined by the module */
		return ENOENT;
	}
}

static void run_loaded(struct uxdp_prog *p, int k, const char *args)
{
	unsigned char *mem = fz_xmalloc(64);
	struct uxdp_buff b;
	uint32_t verdict;

	memset(mem, 0xab, 64);
	memset(&b, 0, sizeof(b));
	b.data_hard_start = mem;
	b.data = mem + 16;
	b.data_meta = b.data;
	b.data_end = mem + 48;
	b.frame_sz = 64;
	verdict = uxdp_prog_run(p, &b);
	if (progs[k].kind == FP_TAG) {
		FZ_CHECK(verdict == FP_TAG_VERDICT, "tag returned %u", verdict);
		FZ_CHECK(mem[16] == (unsigned char)(args ? args[4] : '-'),
			 "tag wrote %#x", mem[16]);
	} else {
		FZ_CHECK(verdict == UXDP_PASS, "%s returned %u",
			 progs[k].name, verdict);
	}
	free(mem);
	FZ_CHECK(uxdp_prog_get(p) == p, "prog_get");
	uxdp_prog_put(p);
	uxdp_prog_put(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fz f = { data, len };
	uint32_t path_i = fz_pick(&f, NR_PATHS);
	uint8_t name_mode = fz_u8(&f), args_mode;
	char name[NAME_MAX_LEN + 1], args[ARGS_MAX_LEN + 1];
	const char *path = path_i == P_NULL ? NULL : paths[path_i];
	const char *name_p = name, *args_p = args;
	struct uxdp_prog *p;
	int k, err, want, alt = 0;
	size_t l;

	switch (name_mode % 5) {
	case 0:	/* any bytes */
		fz_str(&f, name, NAME_MAX_LEN);
		break;
	case 1:	/* a name from the table */
		snprintf(name, sizeof(name), "%s",
			 progs[fz_pick(&f, NR_PROGS)].name);
		break;
	case 2:	/* a name from the table with bytes after it */
		l = (size_t)snprintf(name, sizeof(name), "%s",
				     progs[fz_pick(&f, NR_PROGS)].name);
		fz_str(&f, name + l, NAME_MAX_LEN - l);
		break;
	case 3:	/* a prefix of a name from the table */
		l = (size_t)snprintf(name, sizeof(name), "%s",
				     progs[fz_pick(&f, NR_PROGS)].name);
		name[fz_u8(&f) % (l + 1)] = '\0';
		break;
	default:
		name_p = NULL;
		break;
	}
	args_mode = fz_u8(&f);
	if (args_mode % 3 == 0) {
		args_p = NULL;
	} else {
		l = 0;
		if (args_mode % 3 == 2)	/* "tag=" and then anything */
			l = (size_t)snprintf(args, sizeof(args), "tag=");
		fz_str(&f, args + l, ARGS_MAX_LEN - l);
	}

	/*
	 * The errno xdp.h gives for this call (0: it loads). When both the
	 * name and the path are bad, either may be reported.
	 */
	k = name_p ? find_prog(name_p) : -1;
	if (!path || !name_p) {
		want = EINVAL;
	} else {
		want = name_errno(name_p);
		alt = path_errno(path_i);
		if (!want)
			want = alt ? alt : prog_errno(path_i, k, args_p);
		else if (!alt)
			alt = want;
	}
	if (!alt)
		alt = want;

	errno = 0;
	p = uxdp_prog_load(path, name_p, args_p);
	err = errno;
	if (p) {
		FZ_CHECK(!want, "loaded '%s' from %s (args '%s'): expected "
			 "errno %d", name_p, path, args_p ? args_p : "NULL",
			 want);
		FZ_CHECK(!strcmp(uxdp_prog_name(p), name_p),
			 "loaded '%s' (%zu bytes) as '%s'", name_p,
			 strlen(name_p), uxdp_prog_name(p));
		run_loaded(p, k, args_p);
		return 0;
	}
	FZ_CHECK(want, "'%s' from %s (args '%s') did not load (errno %d): %s",
		 name_p, path, args_p ? args_p : "NULL", err, uxdp_errmsg());
	FZ_CHECK(err == want || err == alt,
		 "load of '%s' from %s: errno %d (%s), expected %d: %s",
		 name_p ? name_p : "NULL", path ? path : "NULL", err,
		 strerror(err), want, uxdp_errmsg());
	FZ_CHECK(uxdp_errmsg()[0], "load of '%s' from %s failed without an "
		 "error text", name_p ? name_p : "NULL", path ? path : "NULL");
	return 0;
}
