/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench fwd: uxdp-fwd between two kernel interfaces (the afxdp
 * driver) against DPDK's dpdk-testpmd (two net_af_xdp ports, io mode)
 * and against a minimal forwarder on plain libxdp (libxdp_fwd.c), on one
 * veth testbed, with the same pinning, the variants interleaved.
 *
 *	namespace gen        namespace dut                namespace rcv
 *	  s0  ----veth---->  d0  [forwarder]  d1 ----veth---->  r1
 *	  live frames        AF_XDP, copy mode               count, XDP_DROP
 *	  (CPU A)            (CPU B: the DUT)                 (the counter)
 *
 * The generator is the testbed's: BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES redirecting 64-byte frames out of s0, on a
 * thread pinned to CPU A, as fast as the kernel goes. Frames arrive on d0
 * as XDP frames: d0's NAPI runs in the generator's softirq, on CPU A, so
 * the copy into the forwarder's UMEM is the generator's work, not the
 * DUT's; what d0's socket cannot take (its RX ring full) the kernel drops
 * there, counted. The forwarder runs as a child process in the dut
 * namespace, every thread of it on CPU B: it moves descriptors from d0's
 * RX ring to d1's TX ring and kicks d1, whose copy-mode transmit (an skb
 * per frame, veth's xmit, r1's NAPI and its program) runs in the DUT's
 * system calls on CPU B. r1's program counts what got through.
 *
 * Each run: start the forwarder, wait until it has XDP programs on d0
 * and d1, start the generator, wait for the first frames at r1 and half
 * a second more, then measure --duration seconds: forwarded Mpps = frames
 * r1 counted / the time; the DUT's CPU time (utime + stime of the child,
 * /proc/PID/stat, all its threads; with tick-based accounting the softirq
 * work done in its system calls is charged to it too) times the TSC rate,
 * over the frames forwarded, is its cycles per packet; offered Mpps is
 * what the generator injected in the same time. Then the forwarder is
 * stopped (SIGINT; testpmd: end of its standard input) and prints its
 * totals, from which the mean RX batch (packets per poll that found any)
 * comes. perf counters are not used: this VM has none (perf stat says
 * "not supported" for cycles), so cycles are TSC ticks of CPU time.
 * UXDP_BENCH_FWD_LOG=FILE keeps each run's DUT output (see dut_log()).
 *
 * Every DUT uses 8192-entry rings, batches of 64 and no
 * SO_PREFER_BUSY_POLL (testpmd's busy_budget=0: uxdp-fwd and libxdp_fwd
 * do not set it by default). testpmd and libxdp_fwd spin on their rings;
 * uxdp-fwd's poll thread sleeps in ppoll() after a round that found no
 * work. The sockets are in copy mode: veth has no zero-copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/uxdp.h>
#include <uxdp/driver.h>	/* uxdp_port_usage(): is afxdp built in? */

#include "bench.h"
#include "report.h"
#ifdef UXDP_BENCH_HAVE_TESTBED
#include "testbed.h"
#endif

#define FWD_DEFAULT_DURATION	3	/* seconds per run */
/* Longest waits, ms: DUT start to its programs on d0 and d1; generator
 * start to the first frames at r1; then before measuring; a stop asked to
 * the DUT exiting; its programs leaving d0 and d1. */
#define FWD_READY_MS		20000
#define FWD_FIRST_MS		10000
#define FWD_SETTLE_MS		500
#define FWD_STOP_MS		10000
#define FWD_CLEAR_MS		5000
#define FWD_BUSY_MS		2000	/* restarts of a DUT that met EBUSY */
#define FWD_SLICE		16384	/* frames per generator run */
#define FWD_FRAME_LEN		64
#define FWD_RING		"8192"
#define FWD_BATCH		"64"
#define FWD_OUT_MAX		(256 * 1024)

enum { M_MPPS, M_CYC, M_BATCH, M_OFFERED, M_CPU, M_NMETRICS };

enum dut_kind { DUT_UXDP, DUT_UXDP_SHARED, DUT_TESTPMD, DUT_LIBXDP,
		DUT_NKINDS };

static const char *const dut_label[DUT_NKINDS] = {
	[DUT_UXDP] = "uxdp-fwd",
	[DUT_UXDP_SHARED] = "uxdp-fwd shared",
	[DUT_TESTPMD] = "dpdk-testpmd",
	[DUT_LIBXDP] = "libxdp_fwd",
};

#ifdef UXDP_BENCH_HAVE_TESTBED

/* The testbed, set up by the first run (a failure is that run's). */
struct fwd_bed {
	struct tb *tb;
	struct tb_ns *gen, *dut, *rcv;
	struct tb_xdp *r1;		/* count, drop */
	uint8_t frame[FWD_FRAME_LEN];
	int err;			/* set-up failed: every run fails */
	bool unavailable;		/* ... because this kernel cannot */
	char why[192];
};

struct fwd_case {
	struct fwd_bed *bed;
	enum dut_kind kind;
	char exe[PATH_MAX];
	uint64_t duration_ms;
	char batch_why[128];	/* why its RX batch is n/a, if it is */
};

/* The generator thread: injects until told to stop. */
struct fwd_gen {
	struct tb_gen *g;
	volatile int stop;		/* set by the main thread */
	uint64_t sent;			/* read by the main thread */
	int err;
	char why[192];
};

/* A forwarder process of ours. */
struct fwd_dut {
	pid_t pid;
	int out;			/* memfd: its stdout and stderr */
	int in;				/* the write end of its stdin */
	bool exited;
	int status;
};

/* ---- small helpers ------------------------------------------------------- */

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* @dir/@name into @out if it is an executable file. */
static bool exe_at(const char *dir, const char *name, char *out, size_t len)
{
	struct stat st;
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n > 0 && (size_t)n < len && !stat(out, &st) &&
	       S_ISREG(st.st_mode) && !access(out, X_OK);
}

/*
 * Where a forwarder is: $@env if set (for tests: a stand-in), else next
 * to this binary (an install, or the build tree for the helpers built
 * here), else @built (the build tree's path), else in $PATH if
 * @in_path. Returns false with @out saying where it looked.
 */
static bool find_exe(const char *env, const char *name, const char *built,
		     bool in_path, char *out, size_t len)
{
	const char *e = getenv(env);
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (e && *e) {
		snprintf(out, len, "%s", e);
		return !access(out, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (exe_at(self, name, out, len))
				return true;
		}
	}
	if (built && built[0] && !access(built, X_OK)) {
		snprintf(out, len, "%s", built);
		return true;
	}
	if (in_path && bench_exe_in_path(name, out, len))
		return true;
	snprintf(out, len, "%s", name);
	return false;
}

/* The number after @key in @s (from @from on), NAN if none. */
static double num_after(const char *s, const char *from, const char *key)
{
	const char *p = from ? strstr(s, from) : s;
	char *end;
	double v;

	if (!p || !(p = strstr(p, key)))
		return NAN;
	p += strlen(key);
	while (*p == ' ' || *p == ':' || *p == '"')
		p++;
	v = strtod(p, &end);
	return end == p ? NAN : v;
}

/* ---- the testbed --------------------------------------------------------- */

static bool fwd_cannot(int err)
{
	return err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */;
}

static void bed_teardown(struct fwd_bed *b)
{
	tb_close(b->tb);	/* the program, the pairs, the namespaces */
	b->tb = NULL;
}

static int bed_setup(struct fwd_bed *b)
{
	static const uint8_t mac_s0[6] = { 0x02, 0x75, 0x78, 0x66, 0x00, 0x01 };
	static const uint8_t mac_d0[6] = { 0x02, 0x75, 0x78, 0x66, 0x00, 0x02 };
	struct tb_veth_opts in = { .queues = 1, .mac_a = mac_s0,
				   .mac_b = mac_d0 };
	struct tb_veth_opts out = { .queues = 1 };
	int err;

	tb_frame_build(b->frame, sizeof(b->frame), mac_d0, mac_s0, 9, 0);
	err = tb_open(&b->tb, 0);
	if (!err) {
		b->gen = tb_ns_new(b->tb, "gen");
		b->dut = b->gen ? tb_ns_new(b->tb, "dut") : NULL;
		b->rcv = b->dut ? tb_ns_new(b->tb, "rcv") : NULL;
		err = b->rcv ? 0 : -errno;
	}
	if (!err)
		err = tb_veth_add(b->tb, b->gen, "s0", b->dut, "d0", &in);
	if (!err)
		err = tb_veth_add(b->tb, b->dut, "d1", b->rcv, "r1", &out);
	if (!err)
		err = tb_xdp_attach(b->rcv, "r1", TB_PROG_DROP, 0,
				    TB_XDP_NATIVE, &b->r1);
	if (err) {
		b->err = err;
		b->unavailable = fwd_cannot(err);
		snprintf(b->why, sizeof(b->why), "%s", tb_errmsg());
		bed_teardown(b);
	}
	return err;
}

/* Whether d0 or d1 runs an XDP program; -errno if it cannot tell. */
static int bed_progs(struct fwd_bed *b, bool *d0, bool *d1)
{
	uint32_t id0 = 0, id1 = 0;
	int err = tb_xdp_query(b->dut, "d0", &id0, NULL);

	if (!err)
		err = tb_xdp_query(b->dut, "d1", &id1, NULL);
	*d0 = id0 != 0;
	*d1 = id1 != 0;
	return err;
}

static int r1_count(struct fwd_bed *b, uint64_t *n)
{
	return tb_xdp_count(b->r1, n, NULL);
}

/* ---- the DUT: a child process in the dut namespace, on CPU B ------------- */

static void dut_argv(const struct fwd_case *c, char **argv, char *buf,
		     size_t len)
{
	int cpu = bench_env.cpu_b, n = 0;
	char *cpus = buf, *lcores = buf + 16;

	(void)len;
	snprintf(cpus, 16, "%d", cpu);
	snprintf(lcores, 32, "(0,1)@%d", cpu);
	argv[n++] = (char *)c->exe;
	switch (c->kind) {
	case DUT_UXDP:
	case DUT_UXDP_SHARED:
		argv[n++] = "--prog";
		argv[n++] = "fwd";
		argv[n++] = "--cpus";
		argv[n++] = cpus;
		argv[n++] = "--batch";		/* rx_size = tx_size */
		argv[n++] = FWD_RING;
		argv[n++] = "--budget";
		argv[n++] = FWD_BATCH;
		argv[n++] = "--json";
		argv[n++] = "--quiet";
		if (c->kind == DUT_UXDP_SHARED) {
			argv[n++] = "afxdp:d0,shared=fwd";
			argv[n++] = "afxdp:d1,shared=fwd";
		} else {
			argv[n++] = "afxdp:d0";
			argv[n++] = "afxdp:d1";
		}
		break;
	case DUT_TESTPMD:
		/* Lcore 0 (main: waits on stdin) and 1 (forwards), both on
		 * CPU B; plain memory (no hugepages here), no files. */
		argv[n++] = "--lcores";
		argv[n++] = lcores;
		argv[n++] = "--no-huge";
		argv[n++] = "-m";
		argv[n++] = "1024";
		argv[n++] = "--no-pci";
		argv[n++] = "--no-shconf";
		argv[n++] = "--no-telemetry";
		argv[n++] = "--vdev";
		argv[n++] = "net_af_xdp0,iface=d0,start_queue=0,"
			    "queue_count=1,busy_budget=0";
		argv[n++] = "--vdev";
		argv[n++] = "net_af_xdp1,iface=d1,start_queue=0,"
			    "queue_count=1,busy_budget=0";
		argv[n++] = "--";
		argv[n++] = "--forward-mode=io";
		argv[n++] = "--auto-start";
		argv[n++] = "--nb-cores=1";
		argv[n++] = "--rxd=" FWD_RING;
		argv[n++] = "--txd=" FWD_RING;
		argv[n++] = "--burst=" FWD_BATCH;
		argv[n++] = "--total-num-mbufs=65536";
		argv[n++] = "--record-burst-stats";
		argv[n++] = "--no-mlockall";
		break;
	case DUT_LIBXDP:
		argv[n++] = "--json";
		argv[n++] = "--batch";
		argv[n++] = FWD_BATCH;
		argv[n++] = "--ring";
		argv[n++] = FWD_RING;
		argv[n++] = "d0";
		argv[n++] = "d1";
		break;
	case DUT_NKINDS:
		break;
	}
	argv[n] = NULL;
}

static int dut_start(struct fwd_bed *b, const struct fwd_case *c,
		     struct fwd_dut *d)
{
	char *argv[40], buf[64];
	int in[2], err;
	cpu_set_t one;
	pid_t parent;

	memset(d, 0, sizeof(*d));
	d->pid = -1;
	d->in = -1;
	dut_argv(c, argv, buf, sizeof(buf));
	d->out = memfd_create("uxdp-bench-dut", MFD_CLOEXEC);
	if (d->out < 0)
		return -errno;
	if (pipe2(in, O_CLOEXEC)) {
		err = -errno;
		close(d->out);
		return err;
	}
	CPU_ZERO(&one);
	CPU_SET(bench_env.cpu_b, &one);
	parent = getpid();
	d->pid = fork();
	if (d->pid < 0) {
		err = -errno;
		close(in[0]);
		close(in[1]);
		close(d->out);
		return err;
	}
	if (!d->pid) {
		/* The child: async-signal-safe calls only, then exec. It
		 * dies with us, however we die: no forwarder spins on. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent ||
		    setns(tb_ns_fd(b->dut), CLONE_NEWNET) ||
		    sched_setaffinity(0, sizeof(one), &one) ||
		    dup2(in[0], 0) < 0 || dup2(d->out, 1) < 0 ||
		    dup2(d->out, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	d->in = in[1];
	return 0;
}

/* Has it exited? (reaps it if so) */
static bool dut_gone(struct fwd_dut *d)
{
	if (!d->exited && d->pid > 0 &&
	    waitpid(d->pid, &d->status, WNOHANG) == d->pid)
		d->exited = true;
	return d->exited;
}

/* Ask it to stop, wait (bounded), then insist. Only our child, by PID. */
static void dut_stop(const struct fwd_case *c, struct fwd_dut *d)
{
	uint64_t t0 = mono_ms();

	if (d->pid <= 0)
		return;
	/* testpmd ends at the end of its input (it prints its statistics
	 * then); the others at SIGINT. */
	if (d->in >= 0) {
		close(d->in);
		d->in = -1;
	}
	if (c->kind != DUT_TESTPMD && !dut_gone(d))
		kill(d->pid, SIGINT);
	while (!dut_gone(d) && mono_ms() - t0 < FWD_STOP_MS)
		sleep_ms(5);
	if (!dut_gone(d)) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, &d->status, 0);
		d->exited = true;
		d->status = -1;		/* say it had to be killed */
	}
}

/* What it printed (stdout and stderr), NUL-terminated; free() it. */
static char *dut_output(struct fwd_dut *d)
{
	char *s = malloc(FWD_OUT_MAX + 1);
	ssize_t n, got = 0;

	if (!s)
		return NULL;
	if (lseek(d->out, 0, SEEK_SET) == 0) {
		while (got < FWD_OUT_MAX &&
		       (n = read(d->out, s + got, FWD_OUT_MAX - got)) > 0)
			got += n;
	}
	s[got] = '\0';
	return s;
}

/* It said its queue was busy (EBUSY, in any tool's words). */
static bool dut_busy(struct fwd_dut *d)
{
	char *out = dut_output(d);
	bool busy = out && (strstr(out, "resource busy") ||
			    strstr(out, "still held") ||
			    strstr(out, "EBUSY"));

	free(out);
	return busy;
}

static void dut_close(struct fwd_dut *d)
{
	if (d->in >= 0)
		close(d->in);
	if (d->out >= 0)
		close(d->out);
	d->in = d->out = -1;
}

/* Its last line of output, for a failure message. */
static void last_line(const char *s, char *out, size_t len)
{
	const char *end = s + strlen(s), *p;

	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (p = end; p > s && p[-1] != '\n'; p--)
		;
	snprintf(out, len, "%.*s", (int)(end - p), p);
}

static void dut_why(const struct fwd_case *c, struct fwd_dut *d,
		    const char *what)
{
	char *out = dut_output(d), line[160] = "";

	if (out)
		last_line(out, line, sizeof(line));
	if (d->status == -1)
		bench_why("%s %s; killed (would not stop); last said: %s",
			  dut_label[c->kind], what, line);
	else if (WIFSIGNALED(d->status))
		bench_why("%s %s; killed by signal %d; last said: %s",
			  dut_label[c->kind], what, WTERMSIG(d->status), line);
	else
		bench_why("%s %s; exit status %d%s; last said: %s",
			  dut_label[c->kind], what, WEXITSTATUS(d->status),
			  WEXITSTATUS(d->status) == 127 ? " (cannot exec)" :
			  WEXITSTATUS(d->status) == 126 ?
			  " (cannot enter the namespace or pin)" : "", line);
	free(out);
}

/* utime + stime of process @pid, in clock ticks; -1 if unreadable. */
static long long proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* After the command name, which may hold anything but ends at the
	 * last ')': state is field 3, utime 14, stime 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/*
 * The DUT's mean RX batch on d0 from what it printed: uxdp-fwd's and
 * libxdp_fwd's totals say it (the first port's rx_batch). testpmd's
 * forward statistics give port 0's RX packets, and port 1's TX bursts:
 * in io mode each RX burst that found packets is sent as one TX burst
 * on the other port, so those are port 0's non-empty RX bursts. (Its RX
 * burst line gives the empty share in whole percent only, which at 99%
 * empty polls says nothing.) NAN, and @why, if not there.
 */
static double dut_batch(const struct fwd_case *c, const char *out,
			char *why, size_t len)
{
	const char *p0 = "Forward statistics for port 0";
	const char *p1 = "Forward statistics for port 1";
	double pkts, bursts, v;

	switch (c->kind) {
	case DUT_UXDP:
	case DUT_UXDP_SHARED:
	case DUT_LIBXDP:
		v = num_after(out, "\"type\":\"totals\"", "\"rx_batch\"");
		if (isnan(v))
			snprintf(why, len, "no totals with rx_batch in its "
				 "output");
		return v;
	case DUT_TESTPMD:
		pkts = num_after(out, p0, "RX-packets:");
		bursts = num_after(out, p1, "TX-bursts :");
		if (isnan(pkts) || isnan(bursts) || bursts <= 0) {
			snprintf(why, len, "no burst statistics in its output "
				 "(--record-burst-stats)");
			return NAN;
		}
		return pkts / bursts;
	case DUT_NKINDS:
		break;
	}
	return NAN;
}

/*
 * UXDP_BENCH_FWD_LOG=FILE: each run's figures and everything its DUT
 * printed, appended to FILE, to look into afterwards (kicks, the kernel's
 * drop counters, testpmd's own statistics).
 */
static void dut_log(const struct fwd_case *c, const char *text,
		    const double *out, uint64_t ms)
{
	const char *path = getenv("UXDP_BENCH_FWD_LOG");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "==== %s: %llu ms: %.3f Mpps, %.1f cyc/pkt, batch %.2f, "
		"offered %.3f Mpps, DUT CPU %.1f%%\n%s\n", dut_label[c->kind],
		(unsigned long long)ms, out[M_MPPS], out[M_CYC], out[M_BATCH],
		out[M_OFFERED], out[M_CPU], text);
	fclose(f);
}

/* ---- the generator thread ------------------------------------------------ */

static void *gen_thread(void *arg)
{
	struct fwd_gen *g = arg;
	int err;

	while (!__atomic_load_n(&g->stop, __ATOMIC_RELAXED)) {
		err = tb_gen_send(g->g, FWD_SLICE);
		if (err) {
			g->err = err;
			snprintf(g->why, sizeof(g->why), "%s", tb_errmsg());
			break;
		}
		/* Read by the main thread for the offered rate. */
		__atomic_store_n(&g->sent, g->sent + FWD_SLICE,
				 __ATOMIC_RELAXED);
	}
	return NULL;
}

/* ---- one run ------------------------------------------------------------- */

/* Wait until d0 and d1 have no program left (a DUT's teardown). */
static int wait_clear(struct fwd_bed *b, const char **which)
{
	uint64_t t0 = mono_ms();
	bool d0, d1;
	int err;

	do {
		err = bed_progs(b, &d0, &d1);
		if (err || (!d0 && !d1))
			break;
		sleep_ms(10);
	} while (mono_ms() - t0 < FWD_CLEAR_MS);
	*which = d0 ? "d0" : "d1";
	return err ? err : (d0 || d1) ? -EBUSY : 0;
}

static int fwd_case_run(void *arg, uint64_t ops, double *out)
{
	struct fwd_case *c = arg;
	struct fwd_bed *b = c->bed;
	struct fwd_gen gen = { 0 };
	struct bench_thread *th = NULL;
	struct tb_gen_opts go = { .cpu = -1 };
	uint64_t t0 = 0, t1 = 0, c0 = 0, c1 = 0, s0 = 0, s1 = 0, start;
	uint64_t ms = ops, busy_t0;
	long long u0 = -1, u1 = -1;
	const char *which;
	struct fwd_dut d;
	double secs, fwd, cpu_s;
	char why[128], *text;
	bool d0, d1;
	int err;

	if (!b->tb && !b->err)
		bed_setup(b);
	if (b->err) {
		if (b->unavailable) {
			bench_why("this kernel cannot run it: %s", b->why);
			return BENCH_UNAVAILABLE;
		}
		bench_why("%s", b->why);
		return b->err;
	}
	err = wait_clear(b, &which);
	if (err) {
		bench_why("%s has an XDP program before %s starts (%s)",
			  which, dut_label[c->kind],
			  err == -EBUSY ? "a forwarder's, left behind" :
			  tb_errmsg());
		return err;
	}
	busy_t0 = mono_ms();
again:
	err = dut_start(b, c, &d);
	if (err) {
		bench_why("cannot start %s: %s", c->exe, strerror(-err));
		return err;
	}

	/* Ready: its programs on d0 and d1 (sockets bound before). */
	start = mono_ms();
	for (;;) {
		if (dut_gone(&d)) {
			/* The last forwarder's sockets may still hold the
			 * queues (the kernel releases them after close):
			 * a DUT that gave up on EBUSY by itself (testpmd
			 * does not retry) is started again, for a while. */
			if (dut_busy(&d) &&
			    mono_ms() - busy_t0 < FWD_BUSY_MS) {
				dut_close(&d);
				sleep_ms(50);
				goto again;
			}
			dut_why(c, &d, "exited before it was ready");
			err = -ECHILD;
			goto out;
		}
		err = bed_progs(b, &d0, &d1);
		if (err || (d0 && d1))
			break;
		if (mono_ms() - start > FWD_READY_MS) {
			dut_stop(c, &d);
			dut_why(c, &d, "attached no XDP program to d0 and d1 "
				"in 20 s");
			err = -ETIMEDOUT;
			goto out;
		}
		sleep_ms(10);
	}
	if (err) {
		bench_why("%s", tb_errmsg());
		goto out_stop;
	}

	err = tb_gen_open(b->tb, b->gen, "s0", b->frame, sizeof(b->frame),
			  &go, &gen.g);
	if (!err)
		err = bench_spawn(&th, bench_env.cpu_a, gen_thread, &gen);
	if (err && !gen.g && fwd_cannot(err)) {
		/* No live frames here: a kernel that cannot, as below. */
		bench_why("this kernel cannot run it: %s", tb_errmsg());
		err = BENCH_UNAVAILABLE;
		goto out_stop;
	}
	if (err) {
		bench_why("generator: %s", gen.g ? strerror(-err) :
			  tb_errmsg());
		goto out_stop;
	}

	/* Frames through, then a little more: the DUT's caches warm,
	 * its rings in their steady state. */
	err = r1_count(b, &c0);
	start = mono_ms();
	while (!err) {
		err = r1_count(b, &c1);
		if (err || c1 != c0 || gen.err || dut_gone(&d))
			break;
		if (mono_ms() - start > FWD_FIRST_MS) {
			err = -ETIMEDOUT;
			break;
		}
		sleep_ms(5);
	}
	if (!err && !gen.err && !dut_gone(&d))
		sleep_ms(FWD_SETTLE_MS);

	/* The measurement. */
	if (!err && !gen.err && !dut_gone(&d)) {
		u0 = proc_cpu_ticks(d.pid);
		s0 = __atomic_load_n(&gen.sent, __ATOMIC_RELAXED);
		t0 = bench_tsc_begin();
		err = r1_count(b, &c0);
		sleep_ms((unsigned int)ms);
		if (!err)
			err = r1_count(b, &c1);
		/*
		 * The DUT forwarded before (above), so a window with
		 * nothing in it, or nothing offered, is a DUT or generator
		 * that was not scheduled for all of it: under a loaded
		 * ctest -j2, the warm-up's 1/16 of a second forwarded
		 * nothing, and once the generator sent nothing in a whole
		 * second. Not a loss (r1 counts what arrives;
		 * test_fwd_netns counts every frame): the window grows
		 * until both moved, and the rates are over all of it.
		 * Bounded as the first frame's wait is.
		 */
		start = mono_ms();
		while (!err && (c1 == c0 ||
				__atomic_load_n(&gen.sent, __ATOMIC_RELAXED) ==
				s0) &&
		       !gen.err && !dut_gone(&d) &&
		       mono_ms() - start < FWD_FIRST_MS) {
			sleep_ms(50);
			err = r1_count(b, &c1);
		}
		t1 = bench_tsc_end();
		s1 = __atomic_load_n(&gen.sent, __ATOMIC_RELAXED);
		u1 = proc_cpu_ticks(d.pid);
	}

	__atomic_store_n(&gen.stop, 1, __ATOMIC_RELAXED);
	bench_join(th);
	th = NULL;
	if (gen.err) {
		dut_stop(c, &d);
		if (fwd_cannot(gen.err)) {
			bench_why("this kernel cannot run it: %s", gen.why);
			err = BENCH_UNAVAILABLE;
		} else {
			bench_why("generator: %s", gen.why);
			err = gen.err;
		}
		goto out;
	}
	if (dut_gone(&d)) {
		dut_why(c, &d, "exited while forwarding");
		err = -ECHILD;
		goto out;
	}
	if (err) {
		dut_stop(c, &d);
		if (err == -ETIMEDOUT)
			dut_why(c, &d, "forwarded nothing to r1 in 10 s");
		else
			bench_why("reading r1's counter: %s", tb_errmsg());
		goto out;
	}
	dut_stop(c, &d);
	if (d.status == -1) {
		dut_why(c, &d, "stopped");
		err = -ETIMEDOUT;
		goto out;
	}
	if (u0 < 0 || u1 < 0) {
		bench_why("cannot read /proc/%d/stat", (int)d.pid);
		err = -EIO;
		goto out;
	}

	secs = bench_ns((double)(t1 - t0)) / 1e9;
	fwd = (double)(c1 - c0);
	cpu_s = (double)(u1 - u0) / (double)sysconf(_SC_CLK_TCK);
	if (fwd <= 0) {
		bench_why("%s forwarded nothing in the measured %.1f s",
			  dut_label[c->kind], secs);
		err = -EIO;
		goto out;
	}
	out[M_MPPS] = fwd / secs / 1e6;
	out[M_CYC] = cpu_s * bench_env.tsc_ghz * 1e9 / fwd;
	out[M_OFFERED] = (double)(s1 - s0) / secs / 1e6;
	out[M_CPU] = 100.0 * cpu_s / secs;
	text = dut_output(&d);
	out[M_BATCH] = text ? dut_batch(c, text, why, sizeof(why)) : NAN;
	if (isnan(out[M_BATCH]))
		snprintf(c->batch_why, sizeof(c->batch_why), "%s",
			 text ? why : "its output could not be read");
	if (text)
		dut_log(c, text, out, ms);
	free(text);
	err = 0;
	goto out;

out_stop:
	if (th) {
		__atomic_store_n(&gen.stop, 1, __ATOMIC_RELAXED);
		bench_join(th);
	}
	dut_stop(c, &d);
out:
	tb_gen_close(gen.g);
	dut_close(&d);
	return err;
}

#endif /* UXDP_BENCH_HAVE_TESTBED */

/* ---- the command --------------------------------------------------------- */

#ifdef UXDP_BENCH_HAVE_TESTBED
#ifndef UXDP_BENCH_UXDP_FWD
#define UXDP_BENCH_UXDP_FWD ""
#endif

static const char *const target_what[2][2] = {
	{ "uxdp-fwd / testpmd Mpps", "uxdp-fwd / testpmd cyc/pkt" },
	{ "uxdp-fwd / libxdp_fwd Mpps", "uxdp-fwd / libxdp_fwd cyc/pkt" },
};

static void fwd_report(struct bench_variant *v, struct fwd_case *cases,
		       unsigned int nv)
{
	struct bench_variant *uxdp = NULL, *peer;
	struct report_row *row;
	unsigned int i, j;

	for (i = 0; i < nv; i++) {
		double batch = bench_median(&v[i], M_BATCH);

		if (v[i].err || !v[i].nsamples)
			continue;
		row = report_add("fwd", dut_label[cases[i].kind],
				 cases[i].kind == DUT_TESTPMD ? "dpdk" :
				 cases[i].kind == DUT_LIBXDP ? "libxdp" :
				 "uxdp", bench_median(&v[i], M_MPPS),
				 bench_min(&v[i], M_MPPS), "Mpps");
		report_part(row, "cyc/pkt", bench_median(&v[i], M_CYC));
		report_part(row, "rx batch", batch);
		report_part(row, "offered Mpps",
			    bench_median(&v[i], M_OFFERED));
		report_part(row, "DUT CPU %", bench_median(&v[i], M_CPU));
		report_summarise(row);
		if (isnan(batch) && cases[i].batch_why[0])
			report_note("fwd", "%s: rx batch n/a: %s",
				    dut_label[cases[i].kind],
				    cases[i].batch_why);
		if (cases[i].kind == DUT_UXDP)
			uxdp = &v[i];
	}
	if (!uxdp || uxdp->err)
		return;
	/* Ratios within each round (run back to back), then the median. */
	for (j = 0; j < 2; j++) {
		enum dut_kind k = j ? DUT_LIBXDP : DUT_TESTPMD;
		double rm, rc;

		for (peer = NULL, i = 0; i < nv; i++)
			if (cases[i].kind == k && !v[i].err && v[i].nsamples)
				peer = &v[i];
		if (!peer) {
			report_target_min("fwd", target_what[j][0], NAN,
					  j ? 0.9 : 1.0, "%s did not run",
					  dut_label[k]);
			report_target("fwd", target_what[j][1], NAN,
				      j ? 1.1 : 1.0, "%s did not run",
				      dut_label[k]);
			continue;
		}
		rm = bench_paired_ratio(uxdp, peer, M_MPPS);
		rc = bench_paired_ratio(uxdp, peer, M_CYC);
		row = report_add("fwd", j ? "uxdp-fwd / libxdp_fwd" :
				 "uxdp-fwd / testpmd", "uxdp", rm, NAN, "x");
		report_part(row, "cyc/pkt ratio", rc);
		report_row_note(row, "median of per-round ratios");
		report_summarise(row);
		report_target_min("fwd", target_what[j][0], rm, j ? 0.9 : 1.0,
				  "%.2f vs %.2f Mpps",
				  bench_median(uxdp, M_MPPS),
				  bench_median(peer, M_MPPS));
		report_target("fwd", target_what[j][1], rc, j ? 1.1 : 1.0,
			      "%.0f vs %.0f cyc/pkt",
			      bench_median(uxdp, M_CYC),
			      bench_median(peer, M_CYC));
	}
}
#endif

int bench_fwd(const struct bench_opts *o)
{
#ifndef UXDP_BENCH_HAVE_TESTBED
	(void)o;
	report_heading("fwd: forwarders between two veth interfaces");
	report_warn("fwd", "skipped: not built (needs libbpf-dev at build "
		    "time for the testbed)");
	report_flush();
	return 0;
#else
	uint64_t ms = (uint64_t)(o->duration ? o->duration :
				 FWD_DEFAULT_DURATION) * 1000;
	struct fwd_case cases[DUT_NKINDS];
	struct bench_variant v[DUT_NKINDS];
	struct fwd_bed bed;
	unsigned int nv = 0, k;
	int ret = 0;

	report_heading("fwd: s0 -(live frames)-> d0 [DUT, AF_XDP copy mode] "
		       "d1 -> r1 (count, drop); %llu s per run",
		       (unsigned long long)ms / 1000);
	if (geteuid() != 0) {
		report_warn("fwd", "skipped: needs root (namespaces, veth, XDP "
			    "programs, AF_XDP sockets, BPF_PROG_TEST_RUN)");
		report_flush();
		return 0;
	}
	if (bench_env.ncpus < 2 || !bench_env.pinned) {
		report_warn("fwd", "skipped: needs two CPUs, one for the "
			    "generator and one for the DUT");
		report_flush();
		return 0;
	}
	memset(&bed, 0, sizeof(bed));
	memset(v, 0, sizeof(v));
	for (k = 0; k < DUT_NKINDS; k++) {
		struct fwd_case *c = &cases[nv];
		bool found = false;
		const char *skip = NULL;

		memset(c, 0, sizeof(*c));
		c->bed = &bed;
		c->kind = (enum dut_kind)k;
		c->duration_ms = ms;
		switch (k) {
		case DUT_UXDP:
		case DUT_UXDP_SHARED:
			found = find_exe("UXDP_BENCH_UXDP_FWD", "uxdp-fwd",
					 UXDP_BENCH_UXDP_FWD, false, c->exe,
					 sizeof(c->exe));
			if (!uxdp_port_usage("afxdp"))
				skip = "libuxdp was built without the afxdp "
				       "driver (needs libxdp-dev)";
			break;
		case DUT_TESTPMD:
			if (o->no_dpdk)
				skip = "--no-dpdk";
			found = find_exe("UXDP_BENCH_TESTPMD", "dpdk-testpmd",
					 NULL, true, c->exe, sizeof(c->exe));
			break;
		case DUT_LIBXDP:
			found = find_exe("UXDP_BENCH_LIBXDP_FWD",
					 "uxdp-bench-libxdp-fwd", NULL, false,
					 c->exe, sizeof(c->exe));
			break;
		}
		if (!skip && !found)
			skip = k == DUT_TESTPMD ?
			       "dpdk-testpmd not found in $PATH (Debian: "
			       "apt-get install dpdk-dev)" :
			       k == DUT_LIBXDP ?
			       "uxdp-bench-libxdp-fwd not found next to "
			       "uxdp-bench (built when libxdp-dev is found)" :
			       "uxdp-fwd not found (built with "
			       "UXDP_BUILD_TOOLS)";
		if (skip) {
			report_warn("fwd", "%s skipped: %s", dut_label[k],
				    skip);
			continue;
		}
		v[nv].label = dut_label[k];
		v[nv].run = fwd_case_run;
		v[nv].arg = c;
		/* The run's measured milliseconds; the warm-up pass gets a
		 * sixteenth of that. */
		v[nv].ops = ms;
		v[nv].nmetrics = M_NMETRICS;
		nv++;
	}
	report_env_num("fwd_duration_s", (double)ms / 1000);
	report_flush();
	bench_run(v, nv, o->runs, "fwd", o->quiet);
	if (bench_check(v, nv, "fwd"))
		ret = 1;
	fwd_report(v, cases, nv);
	report_note("fwd", "generator: BPF_PROG_TEST_RUN live frames, 64 "
		    "bytes, out of s0 on CPU %d; DUT on CPU %d (every thread); "
		    "r1 counts and drops. cyc/pkt = the DUT's CPU time "
		    "(utime+stime, /proc/PID/stat) x TSC rate / frames r1 "
		    "counted; no perf counters on this VM. offered = what the "
		    "generator injected meanwhile: above the forwarded rate, "
		    "the DUT (not the generator) was the limit. rx batch = "
		    "d0's packets per RX poll that found any, over the whole "
		    "run (testpmd: port 0's RX packets / port 1's TX bursts, "
		    "one per non-empty RX burst in io mode)", bench_env.cpu_a,
		    bench_env.cpu_b);
	report_note("fwd", "every DUT: 8192-entry rings, batch 64, copy mode "
		    "(veth has no zero-copy), no SO_PREFER_BUSY_POLL. "
		    "testpmd and libxdp_fwd spin on their rings; uxdp-fwd's "
		    "poll thread polls while there is work and sleeps in "
		    "ppoll() on the sockets after a round that found none, so "
		    "below saturation only the spinners' cyc/pkt include idle "
		    "polling. uxdp-fwd: one UMEM per port (frames copied from "
		    "d0's into d1's), uxdp-fwd shared: one UMEM for both "
		    "(shared=); libxdp_fwd: one shared UMEM; testpmd: each "
		    "port's UMEM over the one mempool (no copy)");
	bench_variants_free(v, nv);
	bed_teardown(&bed);
	report_flush();
	return ret;
#endif
}
