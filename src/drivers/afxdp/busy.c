/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: who holds a queue that a bind found busy.
 *
 * The kernel says only EBUSY, and without CONFIG_XDP_SOCKETS_DIAG (Debian's
 * kernels and this one lack it) nothing tells which socket is bound to
 * which queue. What can be found out: which processes have an AF_XDP
 * socket open in this network namespace. A socket's family is not in
 * /proc, so each socket descriptor of a process in the namespace is
 * borrowed with pidfd_getfd() (root, or ptrace rights over the process)
 * and asked for SO_DOMAIN, then closed again: a duplicate, so the owner's
 * socket is untouched. When no process has one, the queue is held by a
 * socket already closed: the kernel releases a socket's hold on its queue
 * in deferred work, after close() returned.
 *
 * Only the failure path calls this, once, after the bind retries are
 * spent: its cost (a walk of /proc) does not matter.
 */
#include "afxdp_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

#define AFX_BUSY_MAX_PIDS	8	/* processes named in the message */

static bool afx_same_ns(int pid, const struct stat *ns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return !stat(path, &st) && st.st_dev == ns->st_dev &&
	       st.st_ino == ns->st_ino;
}

/* Whether process @pid has an AF_XDP socket open: 1, 0, or -errno when
 * its descriptors cannot be looked at. */
static int afx_has_xsk(int pid)
{
	char path[64], fdpath[64], link[64];
	struct dirent *de;
	int pidfd, found = 0, err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err = -errno;
		closedir(d);
		return err;
	}
	while (!found && (de = readdir(d))) {
		int fd, dom, num = atoi(de->d_name);
		socklen_t len = sizeof(dom);
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", pid, num);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "socket:[", 8))
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, num, 0);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		found = !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) &&
			dom == AF_XDP;
		close(fd);
	}
	close(pidfd);
	closedir(d);
	return found ? 1 : err;
}

static void afx_comm(int pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		n = 0;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

void afx_busy_holders(char *buf, size_t len, bool others_only)
{
	char comm[32];
	struct dirent *de;
	struct stat ns;
	size_t off = 0;
	int named = 0, more = 0, unseen = 0, r, pid;
	DIR *d;

	buf[0] = '\0';
	/* This thread's namespace: the caller is in the device's. */
	if (stat("/proc/thread-self/ns/net", &ns) ||
	    !(d = opendir("/proc"))) {
		snprintf(buf, len, "; who holds it cannot be told here "
			 "(no /proc)");
		return;
	}
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if ((others_only && pid == getpid()) || !afx_same_ns(pid, &ns))
			continue;
		r = afx_has_xsk(pid);
		if (r < 0) {
			unseen++;
			continue;
		}
		if (!r)
			continue;
		if (named == AFX_BUSY_MAX_PIDS) {
			more++;
			continue;
		}
		afx_comm(pid, comm, sizeof(comm));
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off,
						"%s pid %d (%s%s)",
						named ? "," : "; AF_XDP sockets "
						"in this network namespace are "
						"open in", pid, comm,
						pid == getpid() ? ", this process"
						: "");
		named++;
	}
	closedir(d);
	if (more && off < len)
		off += (size_t)snprintf(buf + off, len - off, " and %d more",
					more);
	if (!named && !unseen) {
		snprintf(buf, len, "; no process has an AF_XDP socket open in "
			 "this network namespace: a socket closed moments ago "
			 "still holds it (the kernel releases a queue after "
			 "close returns); try again");
		return;
	}
	if (unseen && off < len)
		snprintf(buf + off, len - off, "%s%d process%s whose "
			 "descriptors cannot be looked at (no ptrace rights)",
			 named ? "; and " : "; who holds it cannot be told: ",
			 unseen, unseen == 1 ? "" : "es");
}
