/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --instructions: run a child under callgrind, read its dumps (instr.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "instr.h"

/*
 * A child is a few seconds of callgrind; one that runs this long is
 * stuck (a loop that never reaches its count), and is killed.
 */
#define INSTR_TIMEOUT_MS	300000ULL
#define INSTR_OUT_MAX		8192

/* Without the header the children's client requests are no-ops. */
#ifdef UXDP_BENCH_HAVE_CALLGRIND
#define INSTR_BUILT	1
#else
#define INSTR_BUILT	0
#endif

static struct {
	bool ready;
	char valgrind[PATH_MAX];
	char self[PATH_MAX];
	char status[256];
	/*
	 * The CPUs we may run on, taken before bench_env_init() pins the
	 * main thread: a child would inherit that one CPU, and the children
	 * meant to run side by side would take turns on it.
	 */
	cpu_set_t cpus;
	bool have_cpus;
} ins;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Everything written to @fd (a memfd), NUL-terminated, at most len - 1. */
static void read_all(int fd, char *buf, size_t len)
{
	ssize_t n, got = 0;

	buf[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
}

/* The last non-empty line of @s, for a one-line reason. */
static const char *last_line(char *s)
{
	char *e = s + strlen(s), *b;

	while (e > s && (e[-1] == '\n' || e[-1] == ' '))
		*--e = '\0';
	b = strrchr(s, '\n');
	return b ? b + 1 : s;
}

/*
 * Start @argv (argv[0] a path) with stdout and stderr into @out and @err.
 * Returns its PID, or -errno.
 */
static pid_t start_child(char *const *argv, int out, int err)
{
	pid_t pid, parent = getpid();

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		/* Async-signal-safe calls only, then exec. It dies with
		 * us, however we die. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent ||
		    (ins.have_cpus &&
		     sched_setaffinity(0, sizeof(ins.cpus), &ins.cpus)) ||
		    dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/*
 * Whether @pid, started at @t0, has ended: its wait status into *@status
 * (-ETIMEDOUT if it ran past INSTR_TIMEOUT_MS and was killed, -errno if
 * it cannot be waited for).
 */
static bool child_done(pid_t pid, uint64_t t0, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);

	if (r == pid)
		return true;
	if (r < 0 && errno != EINTR) {
		*status = -errno;
		return true;
	}
	if (mono_ms() - t0 > INSTR_TIMEOUT_MS) {
		/* Our own child, by its PID. */
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		*status = -ETIMEDOUT;
		return true;
	}
	return false;
}

/* Run @argv to its end; its wait status, or -errno. */
static int run_child(char *const *argv, int out, int err)
{
	pid_t pid = start_child(argv, out, err);
	uint64_t t0 = mono_ms();
	int status;

	if (pid < 0)
		return pid;
	while (!child_done(pid, t0, &status))
		usleep(10000);
	return status;
}

int instr_init(void)
{
	char out[256], *argv[3];
	const char *env = getenv("UXDP_BENCH_VALGRIND");
	int fd_out = -1, fd_err = -1, st;
	ssize_t n;

	if (ins.ready)
		return 0;
	ins.have_cpus = !sched_getaffinity(0, sizeof(ins.cpus), &ins.cpus);
	if (!INSTR_BUILT) {
		snprintf(ins.status, sizeof(ins.status), "this uxdp-bench was "
			 "built without valgrind/callgrind.h (Debian: apt-get "
			 "install valgrind, then build again)");
		return -1;
	}
	if (env && *env) {
		snprintf(ins.valgrind, sizeof(ins.valgrind), "%s", env);
		if (access(ins.valgrind, X_OK)) {
			snprintf(ins.status, sizeof(ins.status), "%.128s "
				 "(UXDP_BENCH_VALGRIND): %s", env,
				 strerror(errno));
			return -1;
		}
	} else if (!bench_exe_in_path("valgrind", ins.valgrind,
				      sizeof(ins.valgrind))) {
		snprintf(ins.status, sizeof(ins.status), "valgrind not found "
			 "in PATH (Debian: apt-get install valgrind; "
			 "scripts/deps.sh installs it)");
		return -1;
	}
	n = readlink("/proc/self/exe", ins.self, sizeof(ins.self) - 1);
	if (n <= 0) {
		snprintf(ins.status, sizeof(ins.status), "cannot find this "
			 "program (/proc/self/exe): %s", strerror(errno));
		return -1;
	}
	ins.self[n] = '\0';

	/* It runs, and says what it is. */
	argv[0] = ins.valgrind;
	argv[1] = (char *)"--version";
	argv[2] = NULL;
	fd_out = memfd_create("uxdp-bench-valgrind", MFD_CLOEXEC);
	fd_err = memfd_create("uxdp-bench-valgrind", MFD_CLOEXEC);
	st = fd_out < 0 || fd_err < 0 ? -errno : run_child(argv, fd_out,
							    fd_err);
	if (st >= 0)
		read_all(fd_out, out, sizeof(out));
	if (fd_out >= 0)
		close(fd_out);
	if (fd_err >= 0)
		close(fd_err);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(ins.status, sizeof(ins.status), "%.128s --version "
			 "failed (%s)", ins.valgrind, st < 0 ? strerror(-st) :
			 "non-zero exit");
		return -1;
	}
	snprintf(ins.status, sizeof(ins.status), "callgrind of %.64s (%.160s)",
		 last_line(out), ins.valgrind);
	ins.ready = true;
	return 0;
}

bool instr_ready(void)
{
	return ins.ready;
}

const char *instr_status(void)
{
	return ins.status[0] ? ins.status : "not checked";
}

/* The Ir "totals:" of dump file @path; 0 with errno set if none. */
static uint64_t dump_totals(const char *path)
{
	char line[512];
	uint64_t v = 0;
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "totals:", 7)) {
			v = strtoull(line + 7, NULL, 10);
			found = true;
		}
	fclose(f);
	errno = found ? 0 : ENODATA;
	return v;
}

static void remove_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dir);
}

/* "units: A B ..." from the child's stdout into @c; the count read. */
static unsigned int parse_units(const char *s, struct instr_counts *c)
{
	const char *p = strstr(s, "units:");
	unsigned int n = 0;
	char *end;

	if (!p)
		return 0;
	p += 6;
	while (n < INSTR_MAX_DUMPS) {
		uint64_t v = strtoull(p, &end, 10);

		if (end == p)
			break;
		c->units[n++] = v;
		p = end;
	}
	return n;
}

/* One child under way (instr_start -> instr_done -> instr_finish). */
struct instr_child {
	const struct instr_job *job;
	pid_t pid;
	int fd_out, fd_err;
	int status;
	uint64_t t0;
	char dir[PATH_MAX];
};

static void child_clean(struct instr_child *ch)
{
	if (ch->fd_out >= 0)
		close(ch->fd_out);
	if (ch->fd_err >= 0)
		close(ch->fd_err);
	ch->fd_out = ch->fd_err = -1;
	if (ch->dir[0])
		remove_dir(ch->dir);
	ch->dir[0] = '\0';
}

/* Start @job under callgrind. 0, or -errno with bench_why(). */
static int instr_start(const struct instr_job *job, struct instr_child *ch)
{
	char outfile[PATH_MAX + 32], toggles[INSTR_MAX_TOGGLES][96];
	char *argv[24];
	const char *tmp = getenv("TMPDIR");
	unsigned int a = 0, i;
	int err;

	memset(ch, 0, sizeof(*ch));
	ch->job = job;
	ch->fd_out = ch->fd_err = -1;
	if (!ins.ready) {
		bench_why("%s", instr_status());
		return -ENOENT;
	}
	snprintf(ch->dir, sizeof(ch->dir), "%s/uxdp-bench-instr.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(ch->dir)) {
		err = -errno;
		bench_why("mkdtemp %s: %s", ch->dir, strerror(errno));
		ch->dir[0] = '\0';
		return err;
	}
	snprintf(outfile, sizeof(outfile), "--callgrind-out-file=%s/cg",
		 ch->dir);
	argv[a++] = ins.valgrind;
	argv[a++] = (char *)"--tool=callgrind";
	argv[a++] = (char *)"-q";
	/* Nothing is instrumented before the child asks (set-up and the
	 * warm-up run at valgrind's plain speed), and then only what the
	 * toggle functions run is collected. */
	argv[a++] = (char *)"--instr-atstart=no";
	argv[a++] = (char *)"--collect-atstart=no";
	argv[a++] = (char *)"--dump-instr=no";
	argv[a++] = (char *)"--dump-line=no";
	for (i = 0; i < INSTR_MAX_TOGGLES && job->toggle[i]; i++) {
		snprintf(toggles[i], sizeof(toggles[i]), "--toggle-collect=%s",
			 job->toggle[i]);
		argv[a++] = toggles[i];
	}
	argv[a++] = outfile;
	argv[a++] = ins.self;
	argv[a++] = (char *)INSTR_CHILD_ARG;
	argv[a++] = (char *)job->group;
	for (i = 0; i < INSTR_MAX_ARGS && job->args[i]; i++)
		argv[a++] = (char *)job->args[i];
	argv[a] = NULL;

	ch->fd_out = memfd_create("uxdp-bench-instr", MFD_CLOEXEC);
	ch->fd_err = memfd_create("uxdp-bench-instr", MFD_CLOEXEC);
	if (ch->fd_out < 0 || ch->fd_err < 0) {
		err = -errno;
		bench_why("memfd: %s", strerror(errno));
		child_clean(ch);
		return err;
	}
	ch->t0 = mono_ms();
	ch->pid = start_child(argv, ch->fd_out, ch->fd_err);
	if (ch->pid < 0) {
		err = ch->pid;
		bench_why("fork: %s", strerror(-err));
		child_clean(ch);
		return err;
	}
	return 0;
}

/* Whether the child has ended (reaped if so). */
static bool instr_done(struct instr_child *ch)
{
	return child_done(ch->pid, ch->t0, &ch->status);
}

/* An ended child's counts into @c. 0, or -errno with bench_why(). */
static int instr_finish(struct instr_child *ch, struct instr_counts *c)
{
	char out[INSTR_OUT_MAX], err[INSTR_OUT_MAX], path[PATH_MAX + 48];
	const struct instr_job *job = ch->job;
	int st = ch->status, ret = 0;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	read_all(ch->fd_out, out, sizeof(out));
	read_all(ch->fd_err, err, sizeof(err));
	if (st < 0) {
		ret = st;
		bench_why("callgrind child: %s", st == -ETIMEDOUT ?
			  "still running after 300 s, killed" :
			  strerror(-st));
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		ret = -EPROTO;
		if (WIFSIGNALED(st))
			bench_why("callgrind child killed by signal %d: %.120s",
				  WTERMSIG(st), last_line(err));
		else
			bench_why("callgrind child exited with status %d%s: "
				  "%.120s", WEXITSTATUS(st),
				  WEXITSTATUS(st) == 127 ? " (cannot exec "
				  "valgrind)" : "", last_line(err));
		goto out;
	}
	if (parse_units(out, c) != job->ndumps) {
		ret = -EPROTO;
		bench_why("callgrind child did not say what it counted "
			  "(want %u passes): %.120s", job->ndumps,
			  last_line(out));
		goto out;
	}
	for (i = 0; i < job->ndumps; i++) {
		/* Dumps are numbered from 1, in the order they were made. */
		snprintf(path, sizeof(path), "%s/cg.%u", ch->dir, i + 1);
		c->ir[i] = dump_totals(path);
		if (errno) {
			ret = -ENODATA;
			bench_why("callgrind wrote no totals for pass %u "
				  "(%s)", i + 1, path);
			goto out;
		}
	}
out:
	child_clean(ch);
	return ret;
}

/* @v is dropped: bench_check() will say why (what bench_why() said). */
static void fail_variant(struct bench_variant *v, int err)
{
	v->err = err;
	snprintf(v->why, sizeof(v->why), "%s", bench_last_why());
}

/* The variant's figures from one child's counts, as its next sample. */
static void record(struct bench_variant *v, const struct instr_counts *c)
{
	const struct instr_variant *iv = v->arg;
	double *out = &v->samples[v->nsamples * BENCH_MAX_METRICS];
	unsigned int m;
	int err;

	for (m = 0; m < v->nmetrics; m++)
		out[m] = NAN;
	err = iv->figures(iv, c, out);
	if (err)
		fail_variant(v, err);
	else
		v->nsamples++;
}

unsigned int instr_run(struct bench_variant *v, unsigned int nv,
		       unsigned int runs, const char *what, bool quiet)
{
	unsigned int njobs = nv * runs, next = 0, done = 0, ok = 0, i;
	unsigned int width = ins.have_cpus ? (unsigned int)
			     CPU_COUNT(&ins.cpus) : 1;
	struct instr_child ch[INSTR_MAX_PARALLEL];
	int slot_of[INSTR_MAX_PARALLEL];

	if (!width)
		width = 1;
	if (width > INSTR_MAX_PARALLEL)
		width = INSTR_MAX_PARALLEL;
	bench_run_prepare(v, nv, runs);
	for (i = 0; i < width; i++)
		slot_of[i] = -1;
	bench_progress(quiet, "  %s: %u variants x %u callgrind run%s, %u at "
		       "a time ", what, nv, runs, runs == 1 ? "" : "s", width);
	/* Job j is run j / nv of variant j % nv: round-robin, as bench_run. */
	while (done < njobs) {
		bool waited = false;

		for (i = 0; i < width; i++) {
			struct bench_variant *x;
			struct instr_counts c;
			int err;

			if (slot_of[i] < 0 && next < njobs) {
				x = &v[next % nv];
				slot_of[i] = (int)(next++ % nv);
				bench_why("%s", "");
				if (x->err)
					err = x->err;
				else if (bench_fail_injected(x->label))
					err = -ECANCELED;
				else
					err = instr_start(&((const struct
						instr_variant *)x->arg)->job,
						&ch[i]);
				if (err) {
					if (!x->err)
						fail_variant(x, err);
					slot_of[i] = -1;
					done++;
					continue;
				}
			}
			if (slot_of[i] < 0 || !instr_done(&ch[i]))
				continue;
			x = &v[slot_of[i]];
			err = instr_finish(&ch[i], &c);
			if (err && !x->err)
				fail_variant(x, err);
			else if (!x->err)
				record(x, &c);
			slot_of[i] = -1;
			done++;
			waited = true;
			bench_progress(quiet, ".");
		}
		if (!waited)
			usleep(10000);
	}
	bench_progress(quiet, "\n");
	for (i = 0; i < nv; i++)
		ok += !v[i].err && v[i].nsamples;
	return ok;
}

void instr_variant_init(struct bench_variant *v, struct instr_variant *iv,
			const char *label, uint64_t ops,
			unsigned int nmetrics)
{
	*v = (struct bench_variant){
		.label = label,
		.arg = iv,
		.ops = ops,
		.nmetrics = nmetrics,
	};
}

unsigned int instr_measure(struct bench_variant *v, unsigned int nv,
			   const struct bench_opts *o, const char *group)
{
	/* The counts do not move: a second child only shows that they
	 * do not, and the demo, which wants it short, has one. */
	unsigned int runs = o->compact ? 1 : o->runs < 2 ? o->runs : 2;
	char what[48];

	snprintf(what, sizeof(what), "%s instructions", group);
	instr_run(v, nv, runs, what, o->quiet);
	return bench_check(v, nv, group);
}

double instr_median(const struct bench_variant *v, unsigned int metric)
{
	return !v->err && v->nsamples ? bench_median(v, metric) : NAN;
}

double instr_min(const struct bench_variant *v, unsigned int metric)
{
	return !v->err && v->nsamples ? bench_min(v, metric) : NAN;
}

double instr_spread(const struct bench_variant *v, unsigned int metric)
{
	double lo = NAN, hi = NAN;
	unsigned int r;

	for (r = 0; r < v->nsamples; r++) {
		double x = bench_sample(v, r, metric);

		if (isnan(x))
			continue;
		if (isnan(lo) || x < lo)
			lo = x;
		if (isnan(hi) || x > hi)
			hi = x;
	}
	return hi - lo;
}

double instr_per_unit(const struct instr_counts *c, unsigned int a,
		      unsigned int b)
{
	if (c->units[b] <= c->units[a] || c->ir[b] < c->ir[a])
		return NAN;
	return (double)(c->ir[b] - c->ir[a]) /
	       (double)(c->units[b] - c->units[a]);
}

/* ---- in the child -------------------------------------------------------- */

uint64_t instr_arg_u64(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? 0 : (uint64_t)v;
}

void instr_child_units(const uint64_t *units, unsigned int n)
{
	unsigned int i;

	printf("units:");
	for (i = 0; i < n; i++)
		printf(" %llu", (unsigned long long)units[i]);
	printf("\n");
	fflush(stdout);
}

int instr_child_main(int argc, char **argv)
{
	if (argc >= 1 && !strcmp(argv[0], "xsk"))
		return xsk_instr_child(argc - 1, argv + 1);
	if (argc >= 1 && !strcmp(argv[0], "pool"))
		return pool_instr_child(argc - 1, argv + 1);
	if (argc >= 1 && !strcmp(argv[0], "bpf"))
		return bpf_instr_child(argc - 1, argv + 1);
	fprintf(stderr, "uxdp-bench %s: not a command of a callgrind child "
		"(xsk, pool, bpf); uxdp-bench --instructions runs these itself\n",
		argc >= 1 ? argv[0] : "(none)");
	return 2;
}
