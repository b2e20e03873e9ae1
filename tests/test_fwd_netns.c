/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-fwd end to end, on real interfaces: three private network
 * namespaces and two kernel veth pairs (tools/lib/testbed.h),
 *
 *	S: s0 ======= d0 :D: d1 ======= r1 :R
 *
 * with uxdp-fwd running in D as a child process (setns, then exec of the
 * binary CMake names) on afxdp:d0 and afxdp:d1. Raw sockets in S and R
 * send known frames (60 to 1514 bytes, each with its sequence number and a
 * pattern derived from it) and check that every one arrives exactly once,
 * byte for byte. Then: reflect with macswap, two queues per port (frames
 * steered to each queue), pcap replay into a veth and capture from one
 * (read back by tshark), bad input (a message, a non-zero exit), and
 * teardown: after SIGINT and after a failed start no XDP program is left
 * on d0 or d1 and no AF_XDP socket in D.
 *
 * Bounded: every uxdp-fwd gets --duration (and SIGKILL from here if it
 * overstays), every wait has a deadline, every traffic loop a count. A
 * failing test still kills its uxdp-fwd (by PID) and removes its
 * namespaces in its teardown; they have no name (unless
 * UXDP_TESTBED_NAMED=1, then /run/netns is checked) and go with this
 * process however it ends.
 *
 * Needs root and AF_XDP: otherwise it skips (exit 77), loudly, and fails
 * under UXDP_CI=1.
 *
 *	test_fwd_netns [UXDP_FWD]	(default: the one CMake built)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include "t_helpers.h"
#include "testbed.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef T_UXDP_FWD
#define T_UXDP_FWD ""
#endif

/* Longest wait for traffic. Frames that miss it are lost, not slow: the
 * 32 once put down to a slow machine were dropped by uxdp-fwd (an empty
 * copy stash), and a failure now prints every party's counters. */
#define T_DEADLINE_MS	5000
#define T_LINGER_MS	150	/* then this long for duplicates */
#define T_UP_MS		20000	/* most a start may take */
#define T_EXIT_MS	20000	/* and an exit */
#define T_LIMIT		"40"	/* uxdp-fwd --duration, always */
#define T_WINDOW	32	/* frames sent ahead of those received */
#define T_NOBODY	65534
#define T_MAX_FRAME	1514

extern char **environ;

static const char *t_fwd;		/* the uxdp-fwd binary */
static char t_tshark[4096];		/* tshark, if installed */

/* ---- per-test environment ------------------------------------------------ */

struct t_env {
	struct tb *tb;
	struct tb_ns *s, *d, *r;
	uint8_t mac_s0[6], mac_d0[6], mac_d1[6], mac_r1[6];
	int fd_s, fd_r;			/* raw sockets on s0 and r1 */
	pid_t pid;			/* uxdp-fwd while it runs */
	int status;			/* its wait status, once gone */
	char dir[64];			/* files of this test */
	char out[128], err[128];	/* uxdp-fwd's stdout and stderr */
	char obuf[32768], ebuf[8192];	/* what they held at its end */
	int fds;			/* open before the set-up */
};

/* Descriptors this process has open. */
static int t_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;		/* less the directory's own */
}

static int t_env_setup(struct t_env *e, uint32_t queues)
{
	struct tb_veth_opts vo = { .queues = queues };
	int err;

	memset(e, 0, sizeof(*e));
	e->fds = t_fds();
	e->fd_s = e->fd_r = -1;
	snprintf(e->dir, sizeof(e->dir), "/tmp/t_fwd_netns.XXXXXX");
	if (!mkdtemp(e->dir)) {
		e->dir[0] = '\0';
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(e->out, sizeof(e->out), "%s/fwd.out", e->dir);
	snprintf(e->err, sizeof(e->err), "%s/fwd.err", e->dir);
	err = tb_open(&e->tb, 0);
	if (!err) {
		e->s = tb_ns_new(e->tb, "S");
		e->d = e->s ? tb_ns_new(e->tb, "D") : NULL;
		e->r = e->d ? tb_ns_new(e->tb, "R") : NULL;
		err = e->r ? 0 : -errno;
	}
	if (!err)
		err = tb_veth_add(e->tb, e->s, "s0", e->d, "d0", &vo);
	if (!err)
		err = tb_veth_add(e->tb, e->d, "d1", e->r, "r1", &vo);
	if (!err)
		err = tb_link_mac(e->s, "s0", e->mac_s0);
	if (!err)
		err = tb_link_mac(e->d, "d0", e->mac_d0);
	if (!err)
		err = tb_link_mac(e->d, "d1", e->mac_d1);
	if (!err)
		err = tb_link_mac(e->r, "r1", e->mac_r1);
	if (!err)
		err = tb_pkt_open(e->s, "s0", &e->fd_s);
	if (!err)
		err = tb_pkt_open(e->r, "r1", &e->fd_r);
	if (err)
		fprintf(stderr, "testbed: %s\n", tb_errmsg());
	return err;
}

/* Named namespaces of this process still mounted (UXDP_TESTBED_NAMED). */
static int t_named_left(void)
{
	char prefix[64];
	struct dirent *de;
	DIR *d = opendir("/run/netns");
	int n = 0;

	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "%s-%d-", TB_PREFIX, (int)getpid());
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			fprintf(stderr, "left behind: /run/netns/%s\n",
				de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static void t_rm_dir(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (!dir[0] || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dir);
}

static void t_env_teardown(struct t_env *e)
{
	/* Only the process this test started, by its PID. */
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		waitpid(e->pid, NULL, 0);
		e->pid = 0;
	}
	if (e->fd_s >= 0)
		close(e->fd_s);
	if (e->fd_r >= 0)
		close(e->fd_r);
	tb_close(e->tb);
	t_rm_dir(e->dir);
}

static int setup_q(void **state, uint32_t queues)
{
	struct t_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	if (t_env_setup(e, queues)) {
		/* No teardown follows a failed setup. */
		t_env_teardown(e);
		free(e);
		return -1;
	}
	*state = e;
	return 0;
}

static int setup_1q(void **state)
{
	return setup_q(state, 1);
}

static int setup_2q(void **state)
{
	return setup_q(state, 2);
}

static int teardown(void **state)
{
	struct t_env *e = *state;
	int fds = e->fds, left;

	t_env_teardown(e);
	free(e);
	/*
	 * Nothing of this test may outlive it: an unnamed namespace lives
	 * as long as something holds it (a descriptor of it or of a socket
	 * in it, a process in it), a named one as long as its mount.
	 */
	left = t_fds() - fds;
	if (left)
		fprintf(stderr, "%d descriptors left open\n", left);
	return left || t_named_left() ? -1 : 0;
}

/* ---- running uxdp-fwd ---------------------------------------------------- */

#define T_F_NOCAPS	(1U << 0)	/* uid 0, but no capability at all */
#define T_F_NOBODY	(1U << 1)	/* uid and gid nobody */
#define T_F_NETLINK	(1U << 2)	/* UXDP_AFXDP_ATTACH=netlink */

#define T_ARGS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/*
 * In the child, between fork and exec: async-signal-safe calls only. It
 * dies with this process (however that ends, say a CTest timeout), not
 * only at the end of its --duration.
 */
static void __attribute__((noreturn))
t_child_exec(pid_t parent, int nsfd, int ofd, int efd, unsigned int flags,
	     char **argv, char **envp)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) ||
	    getppid() != parent)
		_exit(126);
	if (setns(nsfd, CLONE_NEWNET) || dup2(ofd, 1) < 0 ||
	    dup2(efd, 2) < 0)
		_exit(126);
	if (flags & T_F_NOCAPS) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];
		int c;

		/* uid 0 gets the bounding set back at exec: empty it
		 * first (EINVAL past the last capability is fine). */
		for (c = 0; c < 64; c++)
			prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			_exit(125);
	}
	if ((flags & T_F_NOBODY) &&
	    (setgroups(0, NULL) ||
	     setresgid(T_NOBODY, T_NOBODY, T_NOBODY) ||
	     setresuid(T_NOBODY, T_NOBODY, T_NOBODY)))
		_exit(125);
	execve(argv[0], argv, envp);
	_exit(127);
}

/* uxdp-fwd ARGS in D, in the background; its output goes to files. */
static void t_fwd_start(struct t_env *e, unsigned int flags,
			const char *const *args)
{
	static const char attach[] = "UXDP_AFXDP_ATTACH=";
	char *argv[40], *envp[512];
	size_t n = 0, k = 0, i;
	pid_t pid, self = getpid();
	int ofd, efd;

	assert_true(e->pid == 0);
	argv[n++] = (char *)t_fwd;
	for (i = 0; args[i]; i++) {
		assert_true(n < 39);
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	/* Our environment, but the attach mode is the test's to choose. */
	for (i = 0; environ[i] && k < 500; i++)
		if (strncmp(environ[i], attach, sizeof(attach) - 1))
			envp[k++] = environ[i];
	if (flags & T_F_NETLINK)
		envp[k++] = (char *)"UXDP_AFXDP_ATTACH=netlink";
	envp[k] = NULL;

	ofd = open(e->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	efd = open(e->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(ofd >= 0 && efd >= 0);
	e->obuf[0] = e->ebuf[0] = '\0';
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		t_child_exec(self, tb_ns_fd(e->d), ofd, efd, flags, argv,
			     envp);
	close(ofd);
	close(efd);
	e->pid = pid;
}

static void t_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Whether uxdp-fwd has gone (its status in e->status, output read). */
static bool t_fwd_gone(struct t_env *e)
{
	pid_t p = waitpid(e->pid, &e->status, WNOHANG);

	assert_true(p >= 0);
	if (!p)
		return false;
	e->pid = 0;
	t_slurp(e->out, e->obuf, sizeof(e->obuf));
	t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
	return true;
}

/* Until uxdp-fwd goes, at most T_EXIT_MS; then it is killed, and fails. */
static void t_fwd_wait(struct t_env *e)
{
	uint64_t t0 = t_now_ms();

	/* e->pid 0: t_fwd_started() saw it go, and kept what it left. */
	while (e->pid && !t_fwd_gone(e)) {
		if (t_now_ms() - t0 > T_EXIT_MS) {
			kill(e->pid, SIGKILL);
			waitpid(e->pid, NULL, 0);
			e->pid = 0;
			fail_msg("uxdp-fwd still running after %d ms: killed",
				 T_EXIT_MS);
		}
		usleep(2000);
	}
}

/* Until uxdp-fwd is up: its header (printed once the ports are up and the
 * poll threads run) is out. */
static void t_fwd_ready(struct t_env *e)
{
	uint64_t t0 = t_now_ms();

	for (;;) {
		t_slurp(e->out, e->obuf, sizeof(e->obuf));
		if (strstr(e->obuf, "; Ctrl-C stops"))
			return;
		if (t_fwd_gone(e))
			fail_msg("uxdp-fwd went before it was up (status "
				 "0x%x): %s", e->status, e->ebuf);
		if (t_now_ms() - t0 > T_UP_MS)
			fail_msg("uxdp-fwd not up after %d ms", T_UP_MS);
		usleep(2000);
	}
}

/*
 * Until uxdp-fwd is up (its header is out) or gone already (a short run
 * ends by itself; t_fwd_wait() then finds it reaped), at most T_UP_MS: a
 * traffic deadline must not also pay for its start.
 */
static void t_fwd_started(struct t_env *e)
{
	uint64_t t0 = t_now_ms();

	for (;;) {
		t_slurp(e->out, e->obuf, sizeof(e->obuf));
		if (strstr(e->obuf, "; Ctrl-C stops") || t_fwd_gone(e))
			return;
		if (t_now_ms() - t0 > T_UP_MS)
			fail_msg("uxdp-fwd not up after %d ms", T_UP_MS);
		usleep(2000);
	}
}

static void t_fwd_stop(struct t_env *e, int sig)
{
	assert_int_equal(kill(e->pid, sig), 0);
	t_fwd_wait(e);
}

/* Exited with @code (not killed by a signal), and no sanitizer spoke (an
 * ASan build of uxdp-fwd reports and exits 1, as a set-up failure does). */
static void t_exit_is(const struct t_env *e, int code)
{
	if (!WIFEXITED(e->status) || WEXITSTATUS(e->status) != code)
		fail_msg("uxdp-fwd: status 0x%x, want exit %d; stderr: %s",
			 e->status, code, e->ebuf);
	if (strstr(e->ebuf, "Sanitizer") || strstr(e->ebuf, "runtime error"))
		fail_msg("uxdp-fwd: %s", e->ebuf);
}

/* ---- what the kernel says ------------------------------------------------ */

static uint32_t t_prog_on(struct t_env *e, const char *ifname)
{
	uint32_t id = 1;

	assert_int_equal(tb_xdp_query(e->d, ifname, &id, NULL), 0);
	return id;
}

static int t_xsks(struct t_env *e)
{
	int n = tb_xsk_count(e->d);

	if (n < 0)
		fail_msg("%s", tb_errmsg());
	return n;
}

static uint64_t t_stat(struct tb_ns *ns, const char *ifname,
		       const char *name)
{
	uint64_t v = 0;

	if (tb_link_stat(ns, ifname, name, &v))
		fail_msg("%s", tb_errmsg());
	return v;
}

/*
 * After uxdp-fwd: d0 runs program @id0 and d1 @id1 (0: none), and no
 * AF_XDP socket is open in D. The kernel frees a dead process's files
 * before its parent hears of it; deferred work is allowed for all the
 * same, up to 2 s.
 */
static void t_left_only(struct t_env *e, uint32_t id0, uint32_t id1)
{
	uint64_t t0 = t_now_ms();

	while ((t_prog_on(e, "d0") != id0 || t_prog_on(e, "d1") != id1 ||
		t_xsks(e)) && t_now_ms() - t0 < 2000)
		usleep(2000);
	assert_int_equal(t_prog_on(e, "d0"), id0);
	assert_int_equal(t_prog_on(e, "d1"), id1);
	assert_int_equal(t_xsks(e), 0);
}

static void t_clean(struct t_env *e)
{
	t_left_only(e, 0, 0);
}

/* ---- uxdp-fwd's output --------------------------------------------------- */

/* The next number at or after *@p on this line ("1,234" is 1234). */
static bool t_num(const char **p, uint64_t *v)
{
	const char *s = *p;

	while (*s && *s != '\n' && (*s < '0' || *s > '9'))
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (*v = 0; (*s >= '0' && *s <= '9') || *s == ','; s++)
		if (*s != ',')
			*v = *v * 10 + (uint64_t)(*s - '0');
	*p = s;
	return true;
}

/* "received N, forwarded N (R pps), dropped N" */
static void t_totals(const struct t_env *e, uint64_t rx, uint64_t fwd,
		     uint64_t drop)
{
	const char *p = strstr(e->obuf, "\nreceived ");
	uint64_t r = 0, f = 0, rate = 0, d = 0;

	if (p)
		p++;
	if (!p || !t_num(&p, &r) || !t_num(&p, &f) || !t_num(&p, &rate) ||
	    !t_num(&p, &d))
		fail_msg("no totals line in: %s", e->obuf);
	if (r != rx || f != fwd || d != drop)
		fail_msg("totals: received %" PRIu64 ", forwarded %" PRIu64
			 ", dropped %" PRIu64 "; want %" PRIu64 ", %" PRIu64
			 ", %" PRIu64 "\n%s", r, f, d, rx, fwd, drop, e->obuf);
}

/* A port's line in the totals: "NAME  N rx  N fwd  N tx  N drop". */
static void t_port_totals(const struct t_env *e, const char *name,
			  uint64_t rx, uint64_t fwd, uint64_t tx)
{
	const char *p = strstr(e->obuf, "totals after");
	uint64_t v[4] = { 0 };
	char key[32];
	int i;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = p ? strstr(p, key) : NULL;
	if (!p)
		fail_msg("no totals for %s in: %s", name, e->obuf);
	p += strlen(key);
	for (i = 0; i < 4; i++)
		if (!t_num(&p, &v[i]))
			fail_msg("bad totals for %s in: %s", name, e->obuf);
	if (v[0] != rx || v[1] != fwd || v[2] != tx || v[3] != 0)
		fail_msg("%s: %" PRIu64 " rx %" PRIu64 " fwd %" PRIu64 " tx %"
			 PRIu64 " drop; want %" PRIu64 " %" PRIu64 " %" PRIu64
			 " 0\n%s", name, v[0], v[1], v[2], v[3], rx, fwd, tx,
			 e->obuf);
}

/*
 * uxdp-fwd's stderr (read now) has the line saying what the kernel gave
 * afxdp port @name: an XDP mode the kernel reports (veth has native XDP;
 * generic would do too), copy mode (veth has no zero-copy),
 * need_wakeup, and interface queue 0 of 1 bound.
 */
static void t_mode_line(struct t_env *e, const char *name)
{
	char key[64], line[256];
	const char *p, *nl;
	size_t len;

	if (e->pid)
		t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
	snprintf(key, sizeof(key), "uxdp-fwd: %s: XDP ", name);
	p = strstr(e->ebuf, key);
	if (!p)
		fail_msg("no \"%s\" line on stderr: %s", key, e->ebuf);
	nl = strchr(p, '\n');
	len = nl ? (size_t)(nl - p) : strlen(p);
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, p, len);
	line[len] = '\0';
	p = line + strlen(key);
	if (strncmp(p, "native (", 8) && strncmp(p, "generic (", 9))
		fail_msg("%s: no XDP mode: %s", name, line);
	if (!strstr(line, "), copy mode, need_wakeup on, queue 0 bound (of "
		    "1)"))
		fail_msg("%s: not copy mode, need_wakeup, queue 0 of 1: %s",
			 name, line);
}

/*
 * Counter @key of afxdp port @name in the text totals: on the "  kernel:"
 * lines that follow the port's line ("rx_ring_full 0, ...").
 */
static uint64_t t_kernel_total(const struct t_env *e, const char *name,
			       const char *key)
{
	const char *p = strstr(e->obuf, "totals after");
	char pkey[32], kkey[64];
	uint64_t v;

	snprintf(pkey, sizeof(pkey), "\n%s ", name);
	p = p ? strstr(p, pkey) : NULL;
	if (!p)
		fail_msg("no totals for %s in: %s", name, e->obuf);
	snprintf(kkey, sizeof(kkey), " %s ", key);
	/* The port's own lines: those indented below its line. */
	for (p = strchr(p + 1, '\n'); p && !strncmp(p, "\n  ", 3);
	     p = strchr(p + 1, '\n')) {
		const char *end = strchr(p + 1, '\n'), *k;

		if (strncmp(p, "\n  kernel:", 10))
			continue;
		k = strstr(p, kkey);
		if (k && (!end || k < end) && t_num(&k, &v))
			return v;
	}
	fail_msg("%s: no kernel %s in the totals: %s", name, key, e->obuf);
	return 0;
}

static void t_out_has(const struct t_env *e, const char *needle)
{
	if (!strstr(e->obuf, needle))
		fail_msg("no \"%s\" in uxdp-fwd's output: %s", needle,
			 e->obuf);
}

/* uxdp-fwd ARGS fails: exit @code, stderr says @needle; nothing left. */
static void t_fwd_fails(struct t_env *e, unsigned int flags,
			const char *const *args, int code, const char *needle)
{
	t_fwd_start(e, flags, args);
	t_fwd_wait(e);
	t_exit_is(e, code);
	if (!strstr(e->ebuf, needle))
		fail_msg("uxdp-fwd %s ...: stderr lacks \"%s\": %s", args[0],
			 needle, e->ebuf);
	/* The message is one line, named for the tool. */
	if (strncmp(e->ebuf, "uxdp-fwd: ", 10))
		fail_msg("stderr does not start with \"uxdp-fwd: \": %s",
			 e->ebuf);
	t_clean(e);
}

/* ---- traffic ------------------------------------------------------------- */

static const uint32_t t_sizes[] = { 60, 64, 128, 512, 1024, 1514 };
#define T_NSIZES	(sizeof(t_sizes) / sizeof(t_sizes[0]))

/*
 * A known set: frame i is t_sizes[i % 6] bytes, sequence number seq0 + i,
 * from @src to @dst, UDP source port 1000 + i % 16 (16 flows, for RSS-like
 * spreading). Expected back as sent, or with the Ethernet addresses
 * swapped.
 */
struct t_flow {
	int tx, rx;			/* raw sockets (tx -1: no sending) */
	const uint8_t *dst, *src;
	bool swapped;
	uint64_t seq0;
	uint32_t n;
};

static size_t t_frame(uint8_t *f, const struct t_flow *fl, uint32_t i,
		      bool as_received)
{
	bool sw = as_received && fl->swapped;

	return tb_frame_build(f, t_sizes[i % T_NSIZES], sw ? fl->src : fl->dst,
			      sw ? fl->dst : fl->src, (uint16_t)(1000 + i % 16),
			      fl->seq0 + i);
}

struct t_got {
	uint32_t sent;
	uint32_t got;		/* frames of the set, byte-exact, once */
	uint32_t dup;		/* one of the set again */
	uint32_t changed;	/* one of the set, but not byte-exact */
	uint32_t other;		/* not of the set */
	uint64_t ms;		/* how long the exchange took */
};

/* Frame @f of @len bytes against the set: counted in @g. */
static void t_classify(const struct t_flow *fl, uint8_t *seen,
		       const uint8_t *f, size_t len, struct t_got *g)
{
	uint8_t want[T_MAX_FRAME];
	uint64_t seq;
	uint32_t i;

	if (!tb_frame_check(f, len, &seq) || seq < fl->seq0 ||
	    seq - fl->seq0 >= fl->n) {
		g->other++;
		return;
	}
	i = (uint32_t)(seq - fl->seq0);
	if (len != t_frame(want, fl, i, true) || memcmp(f, want, len)) {
		g->changed++;
		return;
	}
	if (seen[i]) {
		g->dup++;
		return;
	}
	seen[i] = 1;
	g->got++;
}

/*
 * Send the set from fl->tx (at most T_WINDOW ahead of what has arrived,
 * so no queue on the way overflows) and take what arrives at fl->rx,
 * until all of it has and T_LINGER_MS more passed quietly (duplicates), or
 * T_DEADLINE_MS.
 */
static void t_exchange(const struct t_flow *fl, struct t_got *g)
{
	uint8_t *seen = calloc(fl->n, 1), f[2048];
	uint64_t t0 = t_now_ms(), done_at = 0;
	bool stalled = false;

	assert_non_null(seen);
	memset(g, 0, sizeof(*g));
	while (t_now_ms() - t0 < T_DEADLINE_MS) {
		ssize_t len;

		if (fl->tx >= 0 && g->sent < fl->n &&
		    (g->sent - g->got < T_WINDOW || stalled)) {
			len = (ssize_t)t_frame(f, fl, g->sent, false);
			assert_int_equal(tb_pkt_send(fl->tx, f, (size_t)len),
					 0);
			g->sent++;
			stalled = false;
			continue;
		}
		if (g->got == fl->n && !done_at)
			done_at = t_now_ms();
		if (done_at && t_now_ms() - done_at >= T_LINGER_MS)
			break;
		len = tb_pkt_recv(fl->rx, f, sizeof(f), 20);
		if (len == -ETIMEDOUT) {
			/* A frame lost must not hold the rest back. */
			stalled = true;
			continue;
		}
		assert_true(len > 0);
		t_classify(fl, seen, f, (size_t)len, g);
	}
	g->ms = t_now_ms() - t0;
	free(seen);
}

/*
 * What every party counted, for a failure that lost frames: the driver
 * counters of the four veth ends, the test's own packet sockets (a drop
 * there is the test's receiver losing them), and uxdp-fwd's totals after a
 * SIGINT (per port and queue, with the kernel's XDP_STATISTICS of each
 * socket). The frames are then somewhere these counters name.
 */
static void t_report_loss(struct t_env *e)
{
	uint64_t pk, dr;

	fprintf(stderr, "# --- where the frames went ---\n# ");
	tb_link_stats_print(e->s, "s0", stderr);
	fprintf(stderr, "# ");
	tb_link_stats_print(e->d, "d0", stderr);
	fprintf(stderr, "# ");
	tb_link_stats_print(e->d, "d1", stderr);
	fprintf(stderr, "# ");
	tb_link_stats_print(e->r, "r1", stderr);
	if (!tb_pkt_stats(e->fd_s, &pk, &dr))
		fprintf(stderr, "# packet socket on s0: %" PRIu64 " queued, %"
			PRIu64 " dropped\n", pk, dr);
	if (!tb_pkt_stats(e->fd_r, &pk, &dr))
		fprintf(stderr, "# packet socket on r1: %" PRIu64 " queued, %"
			PRIu64 " dropped\n", pk, dr);
	{
		uint8_t f[2048];
		uint64_t seq;
		ssize_t n;
		int k = 0;

		while ((n = tb_pkt_recv(e->fd_r, f, sizeof(f), 200)) > 0) {
			k++;
			fprintf(stderr, "# late on r1: %zd bytes seq %lld\n", n,
				tb_frame_check(f, (size_t)n, &seq) ?
				(long long)seq : -1LL);
		}
		fprintf(stderr, "# %d frames were still queued on r1\n", k);
	}
	if (e->pid > 0 && !kill(e->pid, SIGINT)) {
		uint64_t t0 = t_now_ms();

		while (!t_fwd_gone(e) && t_now_ms() - t0 < T_EXIT_MS)
			usleep(2000);
		t_slurp(e->out, e->obuf, sizeof(e->obuf));
		t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
		fprintf(stderr, "# uxdp-fwd's stdout:\n%s\n# its stderr:\n%s\n",
			e->obuf, e->ebuf);
	}
}

/* The whole set arrived, each frame once and unchanged, and nothing else;
 * otherwise the counters of every party, and a failure. */
static void t_exactly(struct t_env *e, const struct t_flow *fl,
		      const struct t_got *g, const char *what)
{
	if (g->got != fl->n || g->dup || g->changed || g->other ||
	    (fl->tx >= 0 && g->sent != fl->n)) {
		t_report_loss(e);
		fail_msg("%s: sent %u of %u; %u arrived whole, %u twice, %u "
			 "changed, %u others, in %llu ms", what, g->sent,
			 fl->n, g->got, g->dup, g->changed, g->other,
			 (unsigned long long)g->ms);
	}
}

/* Nothing arrives at @fd for @ms. */
static void t_silent(int fd, int ms)
{
	uint8_t f[2048];
	ssize_t len = tb_pkt_recv(fd, f, sizeof(f), ms);

	if (len != -ETIMEDOUT)
		fail_msg("a frame of %zd bytes where none was due", len);
}

/* ---- forward and reflect ------------------------------------------------- */

/* S -> R and R -> S through uxdp-fwd afxdp:d0 afxdp:d1: every frame of
 * each set once, whole; the totals say so too; nothing left after. */
static void test_forward(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 50 * T_NSIZES;
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 0, .n = n,
	};
	struct t_flow rs = {
		.tx = e->fd_r, .rx = e->fd_s, .dst = e->mac_s0,
		.src = e->mac_r1, .seq0 = 100000, .n = n,
	};
	struct t_got g;

	static const char *const ports[] = { "d0", "d1" };
	unsigned int i;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "afxdp:d0", "afxdp:d1"));
	t_fwd_ready(e);
	t_out_has(e, "forwarding d0 <-> d1 with fwd, 1 poll thread");
	assert_true(t_prog_on(e, "d0") != 0);
	assert_true(t_prog_on(e, "d1") != 0);
	assert_int_equal(t_xsks(e), 2);
	/* What the kernel gave each port, said once it is up. */
	t_mode_line(e, "d0");
	t_mode_line(e, "d1");

	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R");
	t_exchange(&rs, &g);
	t_exactly(e, &rs, &g, "R -> S");

	t_fwd_stop(e, SIGINT);
	t_exit_is(e, 0);
	t_out_has(e, "(stopped by SIGINT)");
	t_totals(e, 2 * n, 2 * n, 0);
	t_port_totals(e, "d0", n, n, n);
	t_port_totals(e, "d1", n, n, n);
	/* The kernel's counters of each port's socket, next to uxdp's: the
	 * ring overflows are there (any number), and the driver gave the
	 * kernel no bad descriptor and every packet found its socket. */
	for (i = 0; i < 2; i++) {
		t_kernel_total(e, ports[i], "rx_ring_full");
		t_kernel_total(e, ports[i], "rx_fill_ring_empty_descs");
		t_kernel_total(e, ports[i], "rx_dropped");
		assert_int_equal(t_kernel_total(e, ports[i],
						"rx_invalid_descs"), 0);
		assert_int_equal(t_kernel_total(e, ports[i],
						"tx_invalid_descs"), 0);
		assert_int_equal(t_kernel_total(e, ports[i], "no_socket"), 0);
	}
	t_clean(e);
}

/* ---- JSON ---------------------------------------------------------------- */

/* Until uxdp-fwd's stdout has @needle (--json prints no header). */
static void t_fwd_ready_for(struct t_env *e, const char *needle)
{
	uint64_t t0 = t_now_ms();

	for (;;) {
		t_slurp(e->out, e->obuf, sizeof(e->obuf));
		if (strstr(e->obuf, needle))
			return;
		if (t_fwd_gone(e))
			fail_msg("uxdp-fwd went before it was up (status "
				 "0x%x): %s", e->status, e->ebuf);
		if (t_now_ms() - t0 > T_UP_MS)
			fail_msg("uxdp-fwd: no %s after %d ms", needle,
				 T_UP_MS);
		usleep(2000);
	}
}

/*
 * Port @name's object in the JSON line @line: from its "name" to the next
 * port's (or the line's end), copied into @buf.
 */
static void t_json_port(const char *line, const char *name, char *buf,
			size_t size)
{
	char key[64];
	const char *p, *end;
	size_t len;

	snprintf(key, sizeof(key), "{\"name\":\"%s\"", name);
	p = strstr(line, key);
	if (!p) {
		fail_msg("no port %s in: %s", name, line);
		return;	/* not reached; GCC does not know fail_msg */
	}
	end = strstr(p + 1, "{\"name\":");
	len = end ? (size_t)(end - p) : strcspn(p, "\n");
	if (len >= size)
		fail_msg("port %s: %zu bytes of JSON, more than %zu", name,
			 len, size - 1);
	memcpy(buf, p, len);
	buf[len] = '\0';
}

/* The number after "@key": in @obj (the first such key). */
static uint64_t t_json_u64(const char *obj, const char *key)
{
	char k[64];
	const char *p;
	uint64_t v = 0;	/* fail_msg() does not return; GCC cannot tell */

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = obj ? strstr(obj, k) : NULL;
	if (!p || (p += strlen(k), *p < '0' || *p > '9') || !t_num(&p, &v))
		fail_msg("no number \"%s\" in: %s", key, obj ? obj : "-");
	return v;
}

/*
 * --json -v, forwarding: stdout holds JSON lines only (-v's driver report
 * goes to stderr with the mode lines); every interval object and the
 * totals carry each afxdp port's kernel counters, the totals also what
 * the kernel gave and the counters per queue.
 */
static void test_forward_json(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 20 * T_NSIZES;
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 900000, .n = n,
	};
	static const char *const ports[] = { "d0", "d1" };
	char obj[8192], want[64];
	const char *line, *totals = NULL;
	unsigned int i, intervals = 0;
	struct t_got g;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "--json", "-v", "-i", "0.5",
				 "afxdp:d0", "afxdp:d1"));
	t_fwd_ready_for(e, "\"type\":\"interval\"");
	t_mode_line(e, "d0");
	t_mode_line(e, "d1");
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R");
	t_fwd_stop(e, SIGINT);
	t_exit_is(e, 0);

	for (line = e->obuf; *line; line += strcspn(line, "\n") + 1) {
		size_t len = strcspn(line, "\n");
		char *l = strndup(line, len);

		assert_non_null(l);
		if (l[0] != '{' || l[len - 1] != '}')
			fail_msg("not a JSON object: %s", l);
		if (strstr(l, "\"type\":\"interval\"")) {
			intervals++;
			for (i = 0; i < 2; i++) {
				t_json_port(l, ports[i], obj, sizeof(obj));
				if (!strstr(obj, "\"afxdp\":{\"kernel\":{"))
					fail_msg("interval: %s has no kernel "
						 "counters: %s", ports[i], obj);
				t_json_u64(obj, "rx_ring_full");
			}
		}
		free(l);
		if (!line[len])
			break;
	}
	assert_true(intervals >= 1);
	totals = strstr(e->obuf, "{\"type\":\"totals\"");
	if (!totals)
		fail_msg("no totals in: %s", e->obuf);
	assert_int_equal(t_json_u64(totals, "received"), n);
	for (i = 0; i < 2; i++) {
		t_json_port(totals, ports[i], obj, sizeof(obj));
		if (!strstr(obj, "\"afxdp\":{\"ifname\":"))
			fail_msg("totals: %s has no afxdp member: %s",
				 ports[i], obj);
		if (!strstr(obj, "\"xdp_mode\":\"native\"") &&
		    !strstr(obj, "\"xdp_mode\":\"generic\""))
			fail_msg("totals: %s: no XDP mode: %s", ports[i], obj);
		if (!strstr(obj, "\"zerocopy\":false"))
			fail_msg("totals: %s: not copy mode: %s", ports[i],
				 obj);
		assert_int_equal(t_json_u64(obj, "queues"), 1);
		assert_int_equal(t_json_u64(obj, "if_rx_queues"), 1);
		/* The sums, then queue 0's. */
		t_json_u64(strstr(obj, "\"kernel\":{"), "rx_ring_full");
		assert_int_equal(t_json_u64(strstr(obj, "\"kernel\":{"),
					    "rx_invalid_descs"), 0);
		if (!strstr(obj, "\"per_queue\":[{\"queue\":0,"))
			fail_msg("totals: %s: no queue 0: %s", ports[i], obj);
		t_json_u64(strstr(obj, "\"per_queue\":"), "rx_ring_full");
		/* -v: the driver's report, on stderr. */
		snprintf(want, sizeof(want), "%s: afxdp %s queues 0-0",
			 ports[i], ports[i]);
		if (!strstr(e->ebuf, want))
			fail_msg("-v: no \"%s\" on stderr: %s", want, e->ebuf);
	}
	t_clean(e);
}

/* One port: uxdp-fwd --prog macswap afxdp:d0 sends every frame back to S
 * with its addresses swapped, and nothing to R. */
static void test_reflect_macswap(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 50 * T_NSIZES;
	struct t_flow ss = {
		.tx = e->fd_s, .rx = e->fd_s, .dst = e->mac_d0,
		.src = e->mac_s0, .swapped = true, .seq0 = 200000, .n = n,
	};
	struct t_got g;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "--prog", "macswap",
				 "afxdp:d0"));
	t_fwd_ready(e);
	t_out_has(e, "reflecting on d0 with macswap");
	assert_true(t_prog_on(e, "d0") != 0);
	assert_int_equal(t_prog_on(e, "d1"), 0);
	assert_int_equal(t_xsks(e), 1);

	t_exchange(&ss, &g);
	t_exactly(e, &ss, &g, "S -> d0 -> S");
	t_silent(e->fd_r, 50);

	t_fwd_stop(e, SIGINT);
	t_exit_is(e, 0);
	t_totals(e, n, n, 0);
	t_port_totals(e, "d0", n, n, n);
	t_clean(e);
}

/* ---- two queues ---------------------------------------------------------- */

/*
 * Copies of two frames, @na of seq @sa and @nb of seq @sb, arrive at @fd:
 * exactly that many of each, whole, and nothing else.
 */
static void t_copies(int fd, uint64_t sa, uint32_t na, uint64_t sb,
		     uint32_t nb, size_t len)
{
	uint32_t a = 0, b = 0, other = 0;
	uint64_t t0 = t_now_ms(), done_at = 0, seq;
	uint8_t f[2048];

	while (t_now_ms() - t0 < T_DEADLINE_MS) {
		ssize_t n;

		if (a >= na && b >= nb && !done_at)
			done_at = t_now_ms();
		if (done_at && t_now_ms() - done_at >= T_LINGER_MS)
			break;
		n = tb_pkt_recv(fd, f, sizeof(f), 20);
		if (n == -ETIMEDOUT)
			continue;
		assert_true(n > 0);
		if ((size_t)n != len || !tb_frame_check(f, (size_t)n, &seq))
			other++;
		else if (seq == sa)
			a++;
		else if (seq == sb)
			b++;
		else
			other++;
	}
	if (a != na || b != nb || other)
		fail_msg("copies: %u of seq %" PRIu64 " (want %u), %u of %"
			 PRIu64 " (want %u), %u others", a, sa, na, b, sb, nb,
			 other);
}

/* Frames redirected to each RX queue of @ifname, read now. */
static void t_queue_redirects(struct t_env *e, const char *ifname,
			      uint64_t q[2])
{
	q[0] = t_stat(e->d, ifname, "rx_queue_0_xdp_redirect");
	q[1] = t_stat(e->d, ifname, "rx_queue_1_xdp_redirect");
}

/*
 * Kernel generator frames from @ns out of @ifname, @na on CPU 0 and @nb on
 * CPU 1: veth hands a frame redirected into it to the peer's RX queue
 * (CPU % queues), so queue 0 of uxdp-fwd's port gets @na, queue 1 @nb.
 */
static void t_gen_two_cpus(struct t_env *e, struct tb_ns *ns,
			   const char *ifname, const uint8_t *dst,
			   const uint8_t *src, uint64_t sa, uint32_t na,
			   uint64_t sb, uint32_t nb, size_t len)
{
	struct tb_gen_opts go = { .cpu = 0 };
	uint8_t f[T_MAX_FRAME];

	tb_frame_build(f, len, dst, src, 3000, sa);
	if (tb_gen_run(e->tb, ns, ifname, f, len, na, &go))
		fail_msg("%s", tb_errmsg());
	go.cpu = 1;
	tb_frame_build(f, len, dst, src, 3001, sb);
	if (tb_gen_run(e->tb, ns, ifname, f, len, nb, &go))
		fail_msg("%s", tb_errmsg());
}

/*
 * Two queues per port, two poll threads: a socket on each queue of d0 and
 * d1. Raw frames of 16 flows (veth picks the peer's RX queue from the
 * sender's TX queue, chosen by the flow hash: both queues get some, the
 * split depends on the boot's hash key), then generator frames pinned to each
 * CPU (an exact split: queue = CPU): every frame arrives once, and each
 * queue redirected exactly what was steered to it. Both ways.
 */
static void test_two_queues(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 50 * T_NSIZES, na = 400, nb = 600;
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 300000, .n = n,
	};
	uint64_t q0[2], q1[2];
	struct t_got g;
	bool two_cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 2;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "-v", "--queues", "2",
				 "--threads", "2", "afxdp:d0", "afxdp:d1"));
	t_fwd_ready(e);
	t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
	/* Queue-major, round-robin: thread 0 gets d0's queues, 1 d1's. */
	if (!strstr(e->ebuf, "thread 0 polls d0 queue 1") ||
	    !strstr(e->ebuf, "thread 1 polls d1 queue 1"))
		fail_msg("set-up: %s", e->ebuf);
	t_out_has(e, "2 poll threads");
	assert_int_equal(t_xsks(e), 4);

	/* Raw frames: spread by the flow hash. */
	t_queue_redirects(e, "d0", q0);
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, 2 queues");
	t_queue_redirects(e, "d0", q1);
	fprintf(stderr, "# raw frames of 16 flows: d0 queue 0 got %" PRIu64
		", queue 1 %" PRIu64 "\n", q1[0] - q0[0], q1[1] - q0[1]);
	assert_int_equal(q1[0] - q0[0] + q1[1] - q0[1], n);
	/* 16 flows all on one queue: odds of 2^-15 per boot's hash key. */
	assert_true(q1[0] > q0[0] && q1[1] > q0[1]);

	if (!two_cpus) {
		fprintf(stderr, "# one CPU: no generator frames steered to "
			"queue 1\n");
		t_fwd_stop(e, SIGINT);
		t_exit_is(e, 0);
		t_totals(e, n, n, 0);
		t_clean(e);
		return;
	}
	/* Generator frames: queue = CPU, exactly. S -> R. */
	t_queue_redirects(e, "d0", q0);
	t_gen_two_cpus(e, e->s, "s0", e->mac_r1, e->mac_s0, 400001, na,
		       400002, nb, 128);
	t_copies(e->fd_r, 400001, na, 400002, nb, 128);
	t_queue_redirects(e, "d0", q1);
	assert_int_equal(q1[0] - q0[0], na);
	assert_int_equal(q1[1] - q0[1], nb);
	/* R -> S, through d1's queues. */
	t_queue_redirects(e, "d1", q0);
	t_gen_two_cpus(e, e->r, "r1", e->mac_s0, e->mac_r1, 400003, nb,
		       400004, na, 1024);
	t_copies(e->fd_s, 400003, nb, 400004, na, 1024);
	t_queue_redirects(e, "d1", q1);
	assert_int_equal(q1[0] - q0[0], nb);
	assert_int_equal(q1[1] - q0[1], na);

	t_fwd_stop(e, SIGINT);
	t_exit_is(e, 0);
	t_totals(e, n + 2 * (na + nb), n + 2 * (na + nb), 0);
	t_port_totals(e, "d0", n + na + nb, n + na + nb, na + nb);
	t_port_totals(e, "d1", na + nb, na + nb, n + na + nb);
	t_clean(e);
}

/* ---- links that go down or away ------------------------------------------- */

/* Until uxdp-fwd's stderr has @needle, at most T_UP_MS. */
static void t_err_has(struct t_env *e, const char *needle)
{
	uint64_t t0 = t_now_ms();

	for (;;) {
		t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
		if (strstr(e->ebuf, needle))
			return;
		if (t_now_ms() - t0 > T_UP_MS)
			fail_msg("no \"%s\" on uxdp-fwd's stderr in %d ms: %s",
				 needle, T_UP_MS, e->ebuf);
		usleep(2000);
	}
}

/* How many times @needle is on uxdp-fwd's stderr so far. */
static unsigned t_err_count(struct t_env *e, const char *needle)
{
	const char *p;
	unsigned n = 0;

	t_slurp(e->err, e->ebuf, sizeof(e->ebuf));
	for (p = e->ebuf; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Wait for @needle to be said once more than the @before times it was. */
static void t_err_more(struct t_env *e, const char *needle, unsigned before)
{
	uint64_t t0 = t_now_ms();

	while (t_err_count(e, needle) <= before) {
		if (t_now_ms() - t0 > T_UP_MS)
			fail_msg("no new \"%s\" on uxdp-fwd's stderr in %d ms: "
				 "%s", needle, T_UP_MS, e->ebuf);
		usleep(2000);
	}
}

/* uxdp-fwd's CPU time so far, in ms (every thread), from /proc. */
static uint64_t t_fwd_cpu_ms(const struct t_env *e)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)e->pid);
	t_slurp(path, buf, sizeof(buf));
	p = strrchr(buf, ')');
	assert_non_null(p);
	/* After the name: state, then fields 4..13, then utime, stime. */
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
				"%*u %*u %llu %llu", &ut, &st), 2);
	return (ut + st) * 1000 / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* Send @n frames of @fl (numbered from @first) without waiting. */
static void t_blast(const struct t_flow *fl, uint32_t first, uint32_t n)
{
	uint8_t f[T_MAX_FRAME];
	uint32_t i;

	for (i = first; i < first + n; i++) {
		size_t len = t_frame(f, fl, i, false);

		assert_int_equal(tb_pkt_send(fl->tx, f, len), 0);
	}
}

/*
 * The egress port's link goes down under traffic, comes back, changes its
 * MTU, then its interface is deleted. Each change is said once on stderr;
 * while down, what arrives for it is dropped and counted (txq_down), and
 * uxdp-fwd neither spins (CPU) nor kicks in a loop (the driver's
 * tx_kicks, with -v); back up, frames go through again and none of those
 * sent while it was down arrives late; deleted, uxdp-fwd says so and
 * exits 1, with its totals, leaving nothing behind. With --wait-link it
 * waits instead, and binds to the interface made again.
 */
static void test_link_down_and_gone(void **state)
{
	struct t_env *e = *state;
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 500000, .n = 120,
	};
	struct t_flow dead = sr;
	struct t_got g;
	uint64_t cpu0, t0, wall, cpu;
	const char *p;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "-v", "-i", "0.2",
				 "afxdp:d0", "afxdp:d1"));
	t_fwd_ready(e);
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, before");

	/* Down, with frames coming for it all along. */
	assert_int_equal(tb_link_set(e->d, "d1", false, 0), 0);
	t_err_has(e, "uxdp-fwd: d1: link down: frames for it are dropped");
	dead.seq0 = 510000;
	cpu0 = t_fwd_cpu_ms(e);
	t0 = t_now_ms();
	t_blast(&dead, 0, 200);
	usleep(800000);
	t_blast(&dead, 200, 100);
	usleep(200000);
	wall = t_now_ms() - t0;
	cpu = t_fwd_cpu_ms(e) - cpu0;
	if (cpu > wall / 3)
		fail_msg("uxdp-fwd used %" PRIu64 " ms of CPU in %" PRIu64
			 " ms with a port down", cpu, wall);

	/* Up: said, bound again, and only new frames arrive. */
	assert_int_equal(tb_link_set(e->d, "d1", true, 0), 0);
	t_err_has(e, "uxdp-fwd: d1: link up: bound again, forwarding");
	sr.seq0 = 520000;
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, after the link came back");

	/* A smaller MTU: said, bound again, and it forwards on. */
	assert_int_equal(tb_link_set(e->d, "d1", true, 1400), 0);
	t_err_has(e, "uxdp-fwd: d1: MTU 1500 -> 1400: binding again");
	t_err_has(e, "uxdp-fwd: d1: MTU changed: bound again, forwarding");
	sr.seq0 = 530000;
	sr.n = 60;	/* t_sizes[] up to 1024: under the MTU */
	t_exchange(&sr, &g);

	/* Deleted: said, and the run ends with status 1 and its totals. */
	assert_int_equal(tb_link_del(e->d, "d1"), 0);
	t_fwd_wait(e);
	t_exit_is(e, 1);
	if (!strstr(e->ebuf, "uxdp-fwd: d1: the interface is gone (deleted): "
		    "stopping (--wait-link waits for it)"))
		fail_msg("deleted, but: %s", e->ebuf);
	t_out_has(e, "(stopped by interface gone)");
	/* The report has the MTU the port had at the end. */
	t_out_has(e, "tx queues, mtu 1400)");
	/* Each change was said once. */
	p = strstr(e->ebuf, "d1: link down");
	assert_non_null(p);
	assert_null(strstr(p + 1, "d1: link down"));
	/* The 300 sent while down were counted, as dropped for a port that
	 * is down, and kicks stayed few (no loop on the dead port). */
	t_out_has(e, "txq_down");
	if (t_kernel_total(e, "d0", "rx_dropped") > 0)
		fprintf(stderr, "# the kernel dropped some on d0\n");
	p = strstr(e->obuf, "totals after");
	assert_non_null(p);
	p = strstr(p, "\nd1 ");
	assert_non_null(p);
	{
		const char *q = strstr(e->obuf, "\n d1/0 "), *k;
		uint64_t kicks = 0;

		k = q ? strstr(q, "driver  tx_kicks") : NULL;
		if (!k)
			fail_msg("no tx_kicks for d1/0 in: %s", e->obuf);
		k += strlen("driver  tx_kicks");
		assert_true(t_num(&k, &kicks));
		/* One or two a frame forwarded, a probe every 250 ms:
		 * hundreds. Kicking in a loop: millions. */
		fprintf(stderr, "# d1/0: %" PRIu64 " kicks in all\n", kicks);
		if (kicks > 2000)
			fail_msg("d1: %" PRIu64 " kicks: %s", kicks, e->obuf);
	}
	fprintf(stderr, "# uxdp-fwd said:\n%s", e->ebuf);
	/* Nothing of uxdp-fwd left on d0 (d1 is gone). */
	assert_int_equal(t_prog_on(e, "d0"), 0);
	assert_int_equal(t_xsks(e), 0);
	t_rm_dir(e->dir);
}

/* --wait-link: d1 deleted and made again; uxdp-fwd binds to the new one
 * once its link is up (made up, and made down then brought up in steps). */
static void test_link_wait(void **state)
{
	struct t_env *e = *state;
	struct tb_veth_opts vo = { .mac_a = e->mac_d1, .mac_b = e->mac_r1 };
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 600000, .n = 60,
	};
	struct t_got g;
	static const char gone[] = "uxdp-fwd: d1: the interface is gone";
	static const char nobind[] = "uxdp-fwd: d1: the interface is back, but "
				     "it cannot be bound";
	static const char wait[] = "uxdp-fwd: d1: the interface is back, its "
				   "link down: waiting for it";
	static const char up[] = "uxdp-fwd: d1: link up: bound again, "
				 "forwarding";
	unsigned n_gone, n_nobind, n_wait, n_up;

	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "--wait-link", "afxdp:d0",
				 "afxdp:d1"));
	t_fwd_ready(e);
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, before");
	close(e->fd_r);
	e->fd_r = -1;
	assert_int_equal(tb_link_del(e->d, "d1"), 0);
	t_err_has(e, "uxdp-fwd: d1: the interface is gone (deleted): waiting "
		  "for one of that name (--wait-link)");
	usleep(300000);
	assert_false(t_fwd_gone(e));
	assert_int_equal(tb_veth_add(e->tb, e->d, "d1", e->r, "r1", &vo), 0);
	assert_int_equal(tb_pkt_open(e->r, "r1", &e->fd_r), 0);
	/* Bound once its link is up: at once ("the interface is back:
	 * bound again") or, when uxdp-fwd saw it before r1 was up, after
	 * "its link down: waiting for it" ("link up: bound again"). */
	t_err_has(e, "uxdp-fwd: d1: the interface is back");
	t_err_has(e, "bound again, forwarding");
	sr.rx = e->fd_r;
	sr.seq0 = 610000;
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, to the interface made again");
	/* Made again with its link down (both ends down): bound only once
	 * it is up, so nothing sent after that is dropped as down. */
	close(e->fd_r);
	e->fd_r = -1;
	n_gone = t_err_count(e, gone);
	n_nobind = t_err_count(e, nobind);
	n_wait = t_err_count(e, wait);
	n_up = t_err_count(e, up);
	assert_int_equal(tb_link_del(e->d, "d1"), 0);
	t_err_more(e, gone, n_gone);
	vo.down = true;
	assert_int_equal(tb_veth_add(e->tb, e->d, "d1", e->r, "r1", &vo), 0);
	t_err_more(e, nobind, n_nobind);
	/* d1 up, r1 down: bound, no carrier, so down again and waiting */
	assert_int_equal(tb_link_set(e->d, "d1", true, 0), 0);
	t_err_more(e, wait, n_wait);
	assert_int_equal(tb_link_set(e->r, "r1", true, 0), 0);
	assert_int_equal(tb_pkt_open(e->r, "r1", &e->fd_r), 0);
	t_err_more(e, up, n_up);
	sr.rx = e->fd_r;
	sr.seq0 = 620000;
	t_exchange(&sr, &g);
	t_exactly(e, &sr, &g, "S -> R, to the interface made again down");
	t_fwd_stop(e, SIGINT);
	t_exit_is(e, 0);
	t_clean(e);
}

/* ---- pcap ---------------------------------------------------------------- */

static void t_put32(FILE *f, uint32_t v)
{
	assert_int_equal(fwrite(&v, sizeof(v), 1, f), 1);
}

/* The set as a pcap file (microseconds, this host's byte order). */
static void t_pcap_write(const char *path, const struct t_flow *fl)
{
	FILE *f = fopen(path, "wbe");
	uint8_t frame[T_MAX_FRAME];
	uint32_t i;

	assert_non_null(f);
	t_put32(f, 0xa1b2c3d4);
	t_put32(f, 2 | 4 << 16);	/* version 2.4 */
	t_put32(f, 0);			/* thiszone */
	t_put32(f, 0);			/* sigfigs */
	t_put32(f, 65535);		/* snaplen */
	t_put32(f, 1);			/* Ethernet */
	for (i = 0; i < fl->n; i++) {
		uint32_t len = (uint32_t)t_frame(frame, fl, i, false);

		t_put32(f, 1700000000 + i);
		t_put32(f, i);
		t_put32(f, len);
		t_put32(f, len);
		assert_int_equal(fwrite(frame, len, 1, f), 1);
	}
	assert_int_equal(fclose(f), 0);
}

/* pcap:IN afxdp:d1: the file's packets come out of d1 into R, each once,
 * byte for byte; --count ends the run once all were replayed. */
static void test_pcap_replay(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 20 * T_NSIZES;
	struct t_flow fl = {
		.tx = -1, .rx = e->fd_r, .dst = e->mac_r1, .src = e->mac_d1,
		.seq0 = 500000, .n = n,
	};
	char in[160], port[200], count[16];
	struct t_got g;

	snprintf(in, sizeof(in), "%s/in.pcap", e->dir);
	snprintf(port, sizeof(port), "pcap:%s", in);
	snprintf(count, sizeof(count), "%u", n);
	t_pcap_write(in, &fl);
	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "-c", count, port,
				 "afxdp:d1"));
	t_fwd_started(e);	/* R's socket keeps what comes meanwhile */
	t_exchange(&fl, &g);
	t_exactly(e, &fl, &g, "pcap -> d1 -> R");
	t_fwd_wait(e);
	t_exit_is(e, 0);
	t_out_has(e, "(stopped by count)");
	t_totals(e, n, n, 0);
	t_port_totals(e, "d1", 0, 0, n);
	t_clean(e);
}

/* One record of a pcap file as written by the pcap driver. */
struct t_rec {
	uint32_t caplen, len;
	uint8_t data[T_MAX_FRAME];
};

/* The records of the pcap file @path (any byte order, us or ns). */
static uint32_t t_pcap_read(const char *path, struct t_rec *recs,
			    uint32_t max)
{
	FILE *f = fopen(path, "rbe");
	uint32_t hdr[6], rh[4], n = 0, i;
	bool swap;

	assert_non_null(f);
	assert_int_equal(fread(hdr, sizeof(hdr), 1, f), 1);
	swap = hdr[0] == 0xd4c3b2a1 || hdr[0] == 0x4d3cb2a1;
	if (!swap && hdr[0] != 0xa1b2c3d4 && hdr[0] != 0xa1b23c4d)
		fail_msg("%s: magic 0x%08x: not pcap", path, hdr[0]);
	while (fread(rh, sizeof(rh), 1, f) == 1) {
		for (i = 0; swap && i < 4; i++)
			rh[i] = __builtin_bswap32(rh[i]);
		if (n == max || rh[2] > T_MAX_FRAME)
			fail_msg("%s: record %u: %u bytes, or too many", path,
				 n, rh[2]);
		recs[n].caplen = rh[2];
		recs[n].len = rh[3];
		assert_int_equal(fread(recs[n].data, rh[2], 1, f), 1);
		n++;
	}
	assert_true(feof(f));
	fclose(f);
	return n;
}

/* Run @argv (stdout to @out, stderr dropped), at most T_EXIT_MS. Returns
 * its wait status. */
static int t_cmd(char *const argv[], const char *out)
{
	uint64_t t0 = t_now_ms();
	pid_t pid, p, self = getpid();
	int st = 0, fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) ||
		    getppid() != self)
			_exit(126);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	while (!(p = waitpid(pid, &st, WNOHANG))) {
		if (t_now_ms() - t0 > T_EXIT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("%s: still running after %d ms: killed",
				 argv[0], T_EXIT_MS);
		}
		usleep(5000);
	}
	assert_int_equal(p, pid);
	return st;
}

/* Read back by tshark: the same records, lengths and bytes, in order. */
static void t_tshark_check(const char *pcap, const char *dir,
			   const struct t_rec *recs, uint32_t n)
{
	char out[160], line[256], *argv_f[] = {
		t_tshark, (char *)"-r", (char *)pcap, (char *)"-T",
		(char *)"fields", (char *)"-e", (char *)"frame.len",
		(char *)"-e", (char *)"frame.cap_len", NULL,
	};
	char *argv_x[] = { t_tshark, (char *)"-r", (char *)pcap,
			   (char *)"-x", NULL };
	uint8_t *got = calloc(n ? n : 1, T_MAX_FRAME);
	uint32_t *glen = calloc(n ? n : 1, sizeof(uint32_t));
	uint32_t i = 0, len, cap;
	int64_t cur = -1;
	FILE *f;

	assert_true(got && glen);
	snprintf(out, sizeof(out), "%s/tshark.out", dir);
	/* Count and lengths. */
	assert_int_equal(t_cmd(argv_f, out), 0);
	f = fopen(out, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %u", &len, &cap) != 2)
			fail_msg("tshark: \"%s\"", line);
		if (i >= n || len != recs[i].len || cap != recs[i].caplen)
			fail_msg("tshark: frame %u: %u bytes (%u captured), "
				 "want %u (%u)", i + 1, len, cap,
				 i < n ? recs[i].len : 0,
				 i < n ? recs[i].caplen : 0);
		i++;
	}
	fclose(f);
	if (i != n)
		fail_msg("tshark read %u frames, the file has %u", i, n);
	/* Bytes: its hex dump, "OOOO  xx xx ... xx   ascii", a frame
	 * starting at offset 0000. */
	assert_int_equal(t_cmd(argv_x, out), 0);
	f = fopen(out, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int off, b;
		const char *p = line + 6;
		int k;

		if (strlen(line) < 8 || sscanf(line, "%4x", &off) != 1 ||
		    line[4] != ' ' || line[5] != ' ')
			continue;
		if (off == 0)
			cur++;
		if (cur < 0 || cur >= (int64_t)n)
			fail_msg("tshark: more frames in the dump than %u", n);
		for (k = 0; k < 16 && p[0] != ' ' &&
		     sscanf(p, "%2x", &b) == 1; k++, p += 3) {
			if (off + (unsigned int)k >= T_MAX_FRAME)
				fail_msg("tshark: frame too long");
			got[(size_t)cur * T_MAX_FRAME + off + k] = (uint8_t)b;
			if (off + (unsigned int)k + 1 > glen[cur])
				glen[cur] = off + (unsigned int)k + 1;
		}
	}
	fclose(f);
	if (cur + 1 != (int64_t)n)
		fail_msg("tshark dumped %" PRId64 " frames, want %u", cur + 1,
			 n);
	for (i = 0; i < n; i++)
		if (glen[i] != recs[i].caplen ||
		    memcmp(got + (size_t)i * T_MAX_FRAME, recs[i].data,
			   recs[i].caplen))
			fail_msg("tshark: frame %u: other bytes (%u of %u)",
				 i + 1, glen[i], recs[i].caplen);
	free(got);
	free(glen);
}

/* afxdp:d0 pcap:,out=OUT: what S sends is in the file, each frame once,
 * whole (count, lengths, bytes), by our reading and by tshark's. */
static void test_pcap_capture(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 20 * T_NSIZES, i, got = 0;
	struct t_flow fl = {
		.tx = e->fd_s, .rx = -1, .dst = e->mac_d0, .src = e->mac_s0,
		.seq0 = 600000, .n = n,
	};
	char out[160], port[200], count[16];
	uint8_t *seen = calloc(n, 1), f[T_MAX_FRAME];
	struct t_rec *recs = calloc(n + 1, sizeof(*recs));
	uint64_t seq;
	const char *ci = getenv("UXDP_CI");

	assert_true(seen && recs);
	snprintf(out, sizeof(out), "%s/out.pcap", e->dir);
	snprintf(port, sizeof(port), "pcap:,out=%s", out);
	snprintf(count, sizeof(count), "%u", n);
	t_fwd_start(e, 0, T_ARGS("-d", T_LIMIT, "-c", count, "afxdp:d0",
				 port));
	t_fwd_ready(e);
	for (i = 0; i < n; i++) {
		size_t len = t_frame(f, &fl, i, false);

		assert_int_equal(tb_pkt_send(e->fd_s, f, len), 0);
		/* Paced: the veth's ring toward d0 holds 256. */
		if (i % 32 == 31)
			usleep(2000);
	}
	t_fwd_wait(e);
	t_exit_is(e, 0);
	t_out_has(e, "(stopped by count)");
	t_totals(e, n, n, 0);

	/* Our reading: the set, each once, byte for byte, whole. */
	assert_int_equal(t_pcap_read(out, recs, n + 1), n);
	for (i = 0; i < n; i++) {
		const struct t_rec *r = &recs[i];
		uint32_t k;

		if (r->caplen != r->len ||
		    !tb_frame_check(r->data, r->caplen, &seq) ||
		    seq < fl.seq0 || seq - fl.seq0 >= n)
			fail_msg("record %u: not of the set (%u of %u bytes)",
				 i, r->caplen, r->len);
		k = (uint32_t)(seq - fl.seq0);
		if (r->caplen != t_frame(f, &fl, k, true) ||
		    memcmp(r->data, f, r->caplen) || seen[k]++)
			fail_msg("record %u (seq %" PRIu64 "): changed or "
				 "twice", i, seq);
		got++;
	}
	assert_int_equal(got, n);

	if (t_tshark[0]) {
		t_tshark_check(out, e->dir, recs, n);
	} else if (ci && *ci && *ci != '0') {
		fail_msg("tshark not found, and UXDP_CI is set");
	} else {
		fprintf(stderr, "\n*** SKIPPED: tshark not installed: the "
			"capture is not read back by tshark ***\n\n");
	}
	free(seen);
	free(recs);
	t_clean(e);
}

/* ---- bad input ----------------------------------------------------------- */

/* Bytes @data to a file @name of the test's directory; its path in @path. */
static void t_file(const struct t_env *e, const char *name, const void *data,
		   size_t len, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", e->dir, name);
	f = fopen(path, "wbe");
	assert_non_null(f);
	assert_true(!len || fwrite(data, len, 1, f) == 1);
	assert_int_equal(fclose(f), 0);
}

/* Each a message saying what is wrong and a non-zero exit (2: usage, 1:
 * set-up), and nothing left on d0 or d1 or in D. */
static void test_bad_input(void **state)
{
	struct t_env *e = *state;
	static const uint8_t junk[64] = "this is no capture file at all";
	static const uint8_t head[10] = { 0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4 };
	char path[160], port[200];

	/* Usage. */
	t_fwd_fails(e, 0, T_ARGS("foo:x"), 2, "unknown kind 'foo'");
	t_fwd_fails(e, 0, T_ARGS("--bogus", "afxdp:d0"), 2,
		    "unknown option '--bogus'");
	t_fwd_fails(e, 0, T_ARGS("--batch", "100", "afxdp:d0"), 2,
		    "--batch: 100 is not a power of two");
	t_fwd_fails(e, 0, T_ARGS("--queues", "0", "afxdp:d0"), 2,
		    "--queues: 0 is out of range");
	t_fwd_fails(e, 0, T_ARGS("--copy", "--zero-copy", "afxdp:d0"), 2,
		    "--copy and --zero-copy exclude each other");
	t_fwd_fails(e, 0, T_ARGS("afxdp:d0", "afxdp:d1", "afxdp:d0"), 2,
		    "3 ports given");
	/* A port string its driver refuses is usage too (issue 13). */
	t_fwd_fails(e, 0, T_ARGS("afxdp:d0,bogus=1"), 2,
		    "port 'afxdp:d0,bogus=1': port afxdp:d0: unknown "
		    "parameter 'bogus'");
	/* Ports that cannot be opened. */
	t_fwd_fails(e, 0, T_ARGS("afxdp:nosuch0"), 1,
		    "port 'afxdp:nosuch0': afxdp nosuch0: no such interface");
	t_fwd_fails(e, 0, T_ARGS("afxdp:d0@7"), 1,
		    "afxdp d0: queue 7 out of range: the interface has 1 RX "
		    "queue (0..0)");
	t_fwd_fails(e, 0, T_ARGS("--queues", "2", "afxdp:d0"), 1,
		    "queue 1 out of range");
	t_fwd_fails(e, 0, T_ARGS("--batch", "32", "afxdp:d0"), 2,
		    "--batch: 32 is out of range: 64..65536");
	/* Capture files that are not. */
	t_file(e, "junk.pcap", junk, sizeof(junk), path, sizeof(path));
	snprintf(port, sizeof(port), "pcap:%s", path);
	t_fwd_fails(e, 0, T_ARGS(port, "afxdp:d1"), 1,
		    "not a valid pcap or pcapng file");
	t_file(e, "short.pcap", head, sizeof(head), path, sizeof(path));
	snprintf(port, sizeof(port), "pcap:%s", path);
	t_fwd_fails(e, 0, T_ARGS(port, "afxdp:d1"), 1, "truncated");
	t_file(e, "empty.pcap", NULL, 0, path, sizeof(path));
	snprintf(port, sizeof(port), "pcap:%s", path);
	t_fwd_fails(e, 0, T_ARGS(port, "afxdp:d1"), 1, "an empty file");
	snprintf(port, sizeof(port), "pcap:%s/none.pcap", e->dir);
	t_fwd_fails(e, 0, T_ARGS(port, "afxdp:d1"), 1,
		    "No such file or directory");
}

/*
 * A capture cut short in its last record: the records before it are
 * replayed, whole, and the broken one is not; uxdp-fwd stops at the end
 * of the replay, says what broke, and exits 1.
 */
static void test_pcap_truncated_record(void **state)
{
	struct t_env *e = *state;
	uint32_t n = 2 * T_NSIZES;
	struct t_flow fl = {
		.tx = -1, .rx = e->fd_r, .dst = e->mac_r1, .src = e->mac_d1,
		.seq0 = 700000, .n = n,
	};
	char in[160], port[200];
	struct stat st;
	struct t_got g;

	snprintf(in, sizeof(in), "%s/cut.pcap", e->dir);
	snprintf(port, sizeof(port), "pcap:%s", in);
	t_pcap_write(in, &fl);
	/* The last record (1514 bytes) loses its last 100. */
	assert_int_equal(stat(in, &st), 0);
	assert_int_equal(truncate(in, st.st_size - 100), 0);
	t_fwd_start(e, 0, T_ARGS("-d", "1", port, "afxdp:d1"));
	t_fwd_started(e);
	fl.n = n - 1;
	t_exchange(&fl, &g);
	t_exactly(e, &fl, &g, "the records before the cut");
	t_fwd_wait(e);
	t_exit_is(e, 1);
	t_totals(e, n - 1, n - 1, 0);
	assert_non_null(strstr(e->obuf, "end of replay"));
	assert_non_null(strstr(e->ebuf, "replay stopped after"));
	t_clean(e);
}

/* Not permitted: root without capabilities, and nobody. */
static void test_not_root(void **state)
{
	struct t_env *e = *state;

	t_fwd_fails(e, T_F_NOCAPS, T_ARGS("afxdp:d0"), 1,
		    "not permitted to create AF_XDP sockets: run as root");
	t_fwd_fails(e, T_F_NOBODY, T_ARGS("afxdp:d0", "afxdp:d1"), 1,
		    "not permitted to create AF_XDP sockets: run as root");
}

/* ---- teardown ------------------------------------------------------------ */

/*
 * With the program attached over netlink, only uxdp-fwd's own teardown
 * takes it off (a bpf_link would go with the process anyway): after
 * SIGINT and SIGTERM nothing is left. Then the control: a uxdp-fwd killed
 * with SIGKILL leaves its programs, and the same checks see them.
 */
static void test_teardown_signals(void **state)
{
	struct t_env *e = *state;
	struct t_flow sr = {
		.tx = e->fd_s, .rx = e->fd_r, .dst = e->mac_r1,
		.src = e->mac_s0, .seq0 = 800000, .n = 4 * T_NSIZES,
	};
	static const int sigs[] = { SIGINT, SIGTERM };
	struct t_got g;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		t_fwd_start(e, T_F_NETLINK, T_ARGS("-d", T_LIMIT, "afxdp:d0",
						   "afxdp:d1"));
		t_fwd_ready(e);
		assert_true(t_prog_on(e, "d0") != 0);
		assert_true(t_prog_on(e, "d1") != 0);
		assert_int_equal(t_xsks(e), 2);
		t_exchange(&sr, &g);
		t_exactly(e, &sr, &g, "S -> R");
		t_fwd_stop(e, sigs[i]);
		t_exit_is(e, 0);
		t_out_has(e, i ? "(stopped by SIGTERM)" :
			  "(stopped by SIGINT)");
		t_clean(e);
	}

	/* The control: no teardown at all. */
	t_fwd_start(e, T_F_NETLINK, T_ARGS("-d", T_LIMIT, "afxdp:d0",
					   "afxdp:d1"));
	t_fwd_ready(e);
	t_fwd_stop(e, SIGKILL);
	assert_true(WIFSIGNALED(e->status));
	assert_true(t_prog_on(e, "d0") != 0);
	assert_true(t_prog_on(e, "d1") != 0);
	/* (Sockets go with the process whatever: the kernel closes them.) */
	assert_int_equal(t_xsks(e), 0);
}

/*
 * The first port comes up (its program attached), the second fails: the
 * first is taken down again, and a program that is not uxdp-fwd's stays
 * as it was. Both attach modes.
 */
static void test_teardown_failed_start(void **state)
{
	struct t_env *e = *state;
	static const unsigned int modes[] = { 0, T_F_NETLINK };
	struct tb_xdp *x;
	uint32_t foreign;
	unsigned int i;
	char want[128];

	for (i = 0; i < 2; i++) {
		/* veth has no zero-copy: d1 fails at up, after d0. */
		t_fwd_fails(e, modes[i],
			    T_ARGS("afxdp:d0", "afxdp:d1,zerocopy"), 1,
			    "d1: up: afxdp d1: no zero-copy AF_XDP on this "
			    "interface");
		/* d1 runs someone else's program: EBUSY at up. */
		assert_int_equal(tb_xdp_attach(e->d, "d1", TB_PROG_PASS, 0,
					       TB_XDP_NATIVE, &x), 0);
		foreign = t_prog_on(e, "d1");
		t_fwd_start(e, modes[i], T_ARGS("afxdp:d0", "afxdp:d1"));
		t_fwd_wait(e);
		t_exit_is(e, 1);
		snprintf(want, sizeof(want), "d1: up: afxdp d1: the interface "
			 "runs XDP program id %u, not ours", foreign);
		if (!strstr(e->ebuf, want))
			fail_msg("stderr lacks \"%s\": %s", want, e->ebuf);
		t_left_only(e, 0, foreign);
		tb_xdp_detach(x);
		/* Gone before anything was up. */
		t_fwd_fails(e, modes[i], T_ARGS("afxdp:d0", "afxdp:nosuch1"),
			    1, "port 'afxdp:nosuch1'");
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forward, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_forward_json, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_reflect_macswap,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_two_queues, setup_2q,
						teardown),
		cmocka_unit_test_setup_teardown(test_link_down_and_gone,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_link_wait, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_pcap_replay, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_pcap_capture, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_pcap_truncated_record,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_not_root, setup_1q,
						teardown),
		cmocka_unit_test_setup_teardown(test_teardown_signals,
						setup_1q, teardown),
		cmocka_unit_test_setup_teardown(test_teardown_failed_start,
						setup_1q, teardown),
	};
	const char *path = getenv("PATH");
	int s;

	t_fwd = argc > 1 ? argv[1] : T_UXDP_FWD;
	if (!t_fwd[0] || access(t_fwd, X_OK))
		t_skip_program("no uxdp-fwd to run (%s)", t_fwd[0] ? t_fwd :
			       "built without tools");
	if (geteuid() != 0)
		t_skip_program("test_fwd_netns needs root (namespaces, veth, "
			       "AF_XDP, BPF)");
	s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s < 0)
		t_skip_program("no AF_XDP sockets here: %s", strerror(errno));
	close(s);
	/* tshark, by PATH. */
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(t_tshark, sizeof(t_tshark), "%.*s/tshark", (int)n,
			 path);
		if (n && !access(t_tshark, X_OK))
			break;
		t_tshark[0] = '\0';
		path += n + (path[n] == ':');
	}
	/* The uxdp-fwd under test must be where the message says. */
	fprintf(stderr, "# uxdp-fwd: %s; tshark: %s\n", t_fwd,
		t_tshark[0] ? t_tshark : "none");
	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
