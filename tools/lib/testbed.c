/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testbed: namespaces, veth pairs, XDP programs, a kernel generator and
 * raw sockets for tests and benchmarks (see testbed.h).
 *
 * Links are made and changed over rtnetlink, interface facts come from
 * ioctls, programs are a few raw BPF instructions loaded with libbpf (no
 * BPF object to build or install). Every call that acts in a namespace
 * does so from the calling thread, which enters it with setns() and goes
 * back before returning.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "testbed.h"

#define TB_MAX_NS	16
#define TB_MAX_PAIRS	32
#define TB_MAX_PROGS	32
#define TB_MAX_NAMED	64	/* process-wide, for the signal handler */
#define TB_NETNS_DIR	"/run/netns"
#define TB_NL_TIMEOUT_S	2
#define TB_GEN_BATCH	64
#define TB_GEN_SLICE_MS	10	/* a paced generator's unit of work */
#define TB_PKT_RCVBUF	(8 << 20)

struct tb_ns {
	struct tb *tb;
	char name[TB_NAME_MAX];
	int fd;
	/* Named: where it is mounted (slot in tb_named[]), else -1. */
	int named;
};

struct tb_pair {
	struct tb_ns *ns_a, *ns_b;
	char a[IF_NAMESIZE], b[IF_NAMESIZE];
	bool live;
};

struct tb_xdp {
	struct tb *tb;
	struct tb_ns *ns;
	char ifname[IF_NAMESIZE];
	int ifindex;
	int prog_fd, map_fd;
	uint32_t xdp_flags;
	bool attached;
};

struct tb {
	uint32_t flags;
	struct tb_ns *ns[TB_MAX_NS];
	uint32_t nns;
	struct tb_pair pairs[TB_MAX_PAIRS];
	uint32_t npairs;
	struct tb_xdp *progs[TB_MAX_PROGS];
};

static __thread char tb_err_buf[256];

const char *tb_errmsg(void)
{
	return tb_err_buf;
}

static int __attribute__((format(printf, 2, 3))) tb_fail(int err,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tb_err_buf, sizeof(tb_err_buf), fmt, ap);
	va_end(ap);
	return -err;
}

/* ---- named namespaces: what must not outlive us -------------------------- */

/*
 * Mount points of named namespaces, process-wide, in a fixed array the
 * signal handler can walk without locks or allocation: a slot is in use
 * while its first byte is not 0.
 */
static char tb_named[TB_MAX_NAMED][64];
static pthread_mutex_t tb_named_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tb_hooks_done;

static void tb_unmount(char *path)
{
	if (!path[0])
		return;
	umount2(path, MNT_DETACH);
	unlink(path);
	path[0] = '\0';
}

static void tb_unmount_all(void)
{
	int i;

	for (i = 0; i < TB_MAX_NAMED; i++)
		tb_unmount(tb_named[i]);
}

static const int tb_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* Async-signal-safe: umount2, unlink, signal and raise only. */
static void tb_on_signal(int sig)
{
	tb_unmount_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void tb_install_hooks(void)
{
	struct sigaction sa, cur;
	size_t i;

	if (tb_hooks_done)
		return;
	tb_hooks_done = true;
	atexit(tb_unmount_all);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tb_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(tb_signals) / sizeof(tb_signals[0]); i++) {
		/* Only where the signal would have killed us anyway: a
		 * program with its own handler cleans up with tb_close(). */
		if (sigaction(tb_signals[i], NULL, &cur) ||
		    (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
			continue;
		sigaction(tb_signals[i], &sa, NULL);
	}
}

/* Named namespaces of processes that are gone (SIGKILL, a crash). */
static void tb_remove_leftovers(void)
{
	char path[300];
	struct dirent *de;
	DIR *d = opendir(TB_NETNS_DIR);

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *p = de->d_name;
		char *end;
		long pid;

		if (strncmp(p, TB_PREFIX "-", sizeof(TB_PREFIX)))
			continue;
		pid = strtol(p + sizeof(TB_PREFIX), &end, 10);
		if (pid <= 0 || *end != '-')
			continue;
		if (!kill((pid_t)pid, 0) || errno != ESRCH)
			continue;	/* alive (or not ours to judge) */
		snprintf(path, sizeof(path), TB_NETNS_DIR "/%s", p);
		umount2(path, MNT_DETACH);
		unlink(path);
	}
	closedir(d);
}

/* ---- namespaces ---------------------------------------------------------- */

static int tb_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* no IPv6: fine */
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

struct tb_ns_req {
	const char *mount_at;		/* NULL: unnamed */
	int fd;
	int err;
	char why[128];
};

/* A thread of its own: unshare() changes the caller's namespace. */
static void *tb_ns_thread(void *arg)
{
	struct tb_ns_req *r = arg;
	int fd;

	if (unshare(CLONE_NEWNET)) {
		r->err = -errno;
		snprintf(r->why, sizeof(r->why), "unshare(CLONE_NEWNET): %s",
			 strerror(errno));
		return NULL;
	}
	/* /proc/sys/net is the namespace of the thread that opens it. */
	r->err = tb_write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6",
			       "1");
	if (!r->err)
		r->err = tb_write_file("/proc/sys/net/ipv6/conf/default/"
				       "disable_ipv6", "1");
	if (r->err) {
		snprintf(r->why, sizeof(r->why), "disabling IPv6: %s",
			 strerror(-r->err));
		return NULL;
	}
	if (r->mount_at) {
		fd = open(r->mount_at, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			  0444);
		if (fd < 0 || (close(fd), 0) ||
		    mount("/proc/thread-self/ns/net", r->mount_at, "none",
			  MS_BIND, NULL)) {
			r->err = -errno;
			snprintf(r->why, sizeof(r->why), "mounting %s: %s",
				 r->mount_at, strerror(errno));
			if (fd >= 0)
				unlink(r->mount_at);
			return NULL;
		}
	}
	r->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		r->err = -errno;
		snprintf(r->why, sizeof(r->why), "opening the namespace: %s",
			 strerror(errno));
	}
	return NULL;
}

static bool tb_name_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (!n || n >= TB_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_' || name[i] == '-'))
			return false;
	return true;
}

struct tb_ns *tb_ns_new(struct tb *tb, const char *name)
{
	struct tb_ns_req r = { .fd = -1 };
	struct tb_ns *ns;
	pthread_t th;
	uint32_t i;
	int slot = -1, err;

	if (!tb || !tb_name_ok(name)) {
		errno = -tb_fail(EINVAL, "testbed: namespace name: 1..%d of "
				 "[A-Za-z0-9_-]", TB_NAME_MAX - 1);
		return NULL;
	}
	for (i = 0; i < tb->nns; i++)
		if (!strcmp(tb->ns[i]->name, name)) {
			errno = -tb_fail(EEXIST, "testbed: namespace %s "
					 "exists", name);
			return NULL;
		}
	if (tb->nns == TB_MAX_NS) {
		errno = -tb_fail(ENOSPC, "testbed: at most %d namespaces",
				 TB_MAX_NS);
		return NULL;
	}
	ns = calloc(1, sizeof(*ns));
	if (!ns) {
		errno = -tb_fail(ENOMEM, "testbed: out of memory");
		return NULL;
	}
	snprintf(ns->name, sizeof(ns->name), "%s", name);
	ns->tb = tb;
	ns->named = -1;
	if (tb->flags & TB_F_NAMED) {
		pthread_mutex_lock(&tb_named_lock);
		for (i = 0; i < TB_MAX_NAMED && slot < 0; i++)
			if (!tb_named[i][0])
				slot = (int)i;
		if (slot >= 0)
			snprintf(tb_named[slot], sizeof(tb_named[slot]),
				 TB_NETNS_DIR "/" TB_PREFIX "-%d-%s",
				 (int)getpid(), name);
		pthread_mutex_unlock(&tb_named_lock);
		if (slot < 0) {
			free(ns);
			errno = -tb_fail(ENOSPC, "testbed: too many named "
					 "namespaces");
			return NULL;
		}
		mkdir(TB_NETNS_DIR, 0755);
		r.mount_at = tb_named[slot];
	}
	err = pthread_create(&th, NULL, tb_ns_thread, &r);
	if (!err)
		err = pthread_join(th, NULL);
	else
		snprintf(r.why, sizeof(r.why), "pthread_create: %s",
			 strerror(err));
	if (err || r.err) {
		if (slot >= 0) {
			pthread_mutex_lock(&tb_named_lock);
			tb_named[slot][0] = '\0';
			pthread_mutex_unlock(&tb_named_lock);
		}
		if (r.fd >= 0)
			close(r.fd);
		free(ns);
		err = err ? err : -r.err;
		errno = -tb_fail(err, "testbed: namespace %s: %s%s", name,
				 r.why, err == EPERM ? " (not root?)" : "");
		return NULL;
	}
	ns->fd = r.fd;
	ns->named = slot;
	tb->ns[tb->nns++] = ns;
	return ns;
}

int tb_ns_fd(const struct tb_ns *ns)
{
	return ns->fd;
}

const char *tb_ns_name(const struct tb_ns *ns)
{
	return ns->name;
}

int tb_ns_enter(const struct tb_ns *ns, int *saved)
{
	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0)
		return tb_fail(errno, "testbed: this thread's namespace: %s",
			       strerror(errno));
	if (setns(ns->fd, CLONE_NEWNET)) {
		int err = errno;

		close(*saved);
		*saved = -1;
		return tb_fail(err, "testbed: entering namespace %s: %s",
			       ns->name, strerror(err));
	}
	return 0;
}

int tb_ns_leave(int saved)
{
	int err = 0;

	if (saved < 0)
		return 0;
	if (setns(saved, CLONE_NEWNET))
		err = tb_fail(errno, "testbed: back to the thread's "
			      "namespace: %s", strerror(errno));
	close(saved);
	return err;
}

int tb_ns_run(const struct tb_ns *ns, int (*fn)(void *arg), void *arg)
{
	int saved, err, ret;

	err = tb_ns_enter(ns, &saved);
	if (err)
		return err;
	ret = fn(arg);
	err = tb_ns_leave(saved);
	return err ? err : ret;
}

/* ---- rtnetlink ----------------------------------------------------------- */

struct tb_msg {
	struct nlmsghdr *nh;
	bool overflow;
	char buf[2048] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static void tb_msg_init(struct tb_msg *m, uint16_t type, uint16_t flags,
			const struct ifinfomsg *ifi)
{
	memset(m, 0, sizeof(*m));
	m->nh = (struct nlmsghdr *)m->buf;
	m->nh->nlmsg_type = type;
	m->nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->nh->nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	memcpy(NLMSG_DATA(m->nh), ifi, sizeof(*ifi));
}

/* Append an attribute; a nest has no data and is closed by tb_nest_end. */
static struct rtattr *tb_attr(struct tb_msg *m, unsigned short type,
			      const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(m->nh->nlmsg_len);
	struct rtattr *a;

	if (m->overflow || off + RTA_SPACE(len) > sizeof(m->buf)) {
		m->overflow = true;
		return NULL;
	}
	a = (struct rtattr *)(m->buf + off);
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	m->nh->nlmsg_len = (uint32_t)(off + RTA_SPACE(len));
	return a;
}

static void tb_attr_u32(struct tb_msg *m, unsigned short type, uint32_t v)
{
	tb_attr(m, type, &v, sizeof(v));
}

static void tb_nest_end(struct tb_msg *m, struct rtattr *nest)
{
	if (nest)
		nest->rta_len = (unsigned short)(m->buf + m->nh->nlmsg_len -
						 (char *)nest);
}

/* Send @m on a netlink socket of the current namespace, wait for the ack. */
static int tb_nl_talk(struct tb_msg *m)
{
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = TB_NL_TIMEOUT_S };
	struct nlmsghdr *nh;
	int s, i, err = -ETIMEDOUT;
	ssize_t n;

	if (m->overflow)
		return -EMSGSIZE;
	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	m->nh->nlmsg_seq = 1;
	if (sendto(s, m->buf, m->nh->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < 16; i++) {	/* bounded; each recv by SO_RCVTIMEO */
		n = recv(s, buf, sizeof(buf), 0);
		if (n < 0) {
			err = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != 1 || nh->nlmsg_type != NLMSG_ERROR)
				continue;
			err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			goto out;
		}
	}
out:
	close(s);
	return err;
}

/* Run @m in @ns. */
static int tb_nl_in(struct tb_ns *ns, struct tb_msg *m)
{
	int saved, err = tb_ns_enter(ns, &saved);

	if (err)
		return err;
	err = tb_nl_talk(m);
	tb_ns_leave(saved);
	return err;
}

int tb_ifindex(struct tb_ns *ns, const char *ifname)
{
	int saved, idx, err = tb_ns_enter(ns, &saved);

	if (err)
		return err;
	idx = (int)if_nametoindex(ifname);
	tb_ns_leave(saved);
	return idx ? idx : tb_fail(ENODEV, "testbed: no %s in %s", ifname,
				   ns->name);
}

static void tb_default_mac(uint8_t mac[6], uint32_t pair, int end)
{
	static const uint8_t base[4] = { 0x02, 0x75, 0x78, 0x74 };

	memcpy(mac, base, 4);
	mac[4] = (uint8_t)pair;
	mac[5] = (uint8_t)end;
}

int tb_veth_add(struct tb *tb, struct tb_ns *ns_a, const char *a,
		struct tb_ns *ns_b, const char *b,
		const struct tb_veth_opts *o)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	uint32_t q = o && o->queues ? o->queues : 1;
	uint32_t mtu = o && o->mtu ? o->mtu : 1500;
	uint8_t ma[6], mb[6];
	struct rtattr *info, *data, *peer;
	struct tb_pair *p;
	struct tb_msg m;
	int err;

	if (!tb || !ns_a || !ns_b || !a || !b || strlen(a) >= IF_NAMESIZE ||
	    strlen(b) >= IF_NAMESIZE || !*a || !*b || q > 256)
		return tb_fail(EINVAL, "testbed: veth: bad arguments");
	if (tb->npairs == TB_MAX_PAIRS)
		return tb_fail(ENOSPC, "testbed: at most %d veth pairs",
			       TB_MAX_PAIRS);
	tb_default_mac(ma, tb->npairs, 0);
	tb_default_mac(mb, tb->npairs, 1);
	if (o && o->mac_a)
		memcpy(ma, o->mac_a, 6);
	if (o && o->mac_b)
		memcpy(mb, o->mac_b, 6);

	tb_msg_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi);
	tb_attr(&m, IFLA_IFNAME, a, strlen(a) + 1);
	tb_attr(&m, IFLA_ADDRESS, ma, 6);
	tb_attr_u32(&m, IFLA_MTU, mtu);
	tb_attr_u32(&m, IFLA_NUM_TX_QUEUES, q);
	tb_attr_u32(&m, IFLA_NUM_RX_QUEUES, q);
	info = tb_attr(&m, IFLA_LINKINFO, NULL, 0);
	tb_attr(&m, IFLA_INFO_KIND, "veth", 4);
	data = tb_attr(&m, IFLA_INFO_DATA, NULL, 0);
	peer = tb_attr(&m, VETH_INFO_PEER, &ifi, sizeof(ifi));
	tb_attr(&m, IFLA_IFNAME, b, strlen(b) + 1);
	tb_attr(&m, IFLA_ADDRESS, mb, 6);
	tb_attr_u32(&m, IFLA_MTU, mtu);
	tb_attr_u32(&m, IFLA_NUM_TX_QUEUES, q);
	tb_attr_u32(&m, IFLA_NUM_RX_QUEUES, q);
	if (ns_b != ns_a)
		tb_attr_u32(&m, IFLA_NET_NS_FD, (uint32_t)ns_b->fd);
	tb_nest_end(&m, peer);
	tb_nest_end(&m, data);
	tb_nest_end(&m, info);
	err = tb_nl_in(ns_a, &m);
	if (err)
		return tb_fail(-err, "testbed: veth %s (%s) - %s (%s): %s", a,
			       ns_a->name, b, ns_b->name, strerror(-err));
	p = &tb->pairs[tb->npairs++];
	p->ns_a = ns_a;
	p->ns_b = ns_b;
	snprintf(p->a, sizeof(p->a), "%s", a);
	snprintf(p->b, sizeof(p->b), "%s", b);
	p->live = true;
	if (o && o->down)
		return 0;
	err = tb_link_set(ns_a, a, true, 0);
	if (!err)
		err = tb_link_set(ns_b, b, true, 0);
	return err;
}

int tb_link_set(struct tb_ns *ns, const char *ifname, bool up, uint32_t mtu)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_flags = up ? IFF_UP : 0,
		.ifi_change = IFF_UP,
	};
	struct tb_msg m;
	int idx = tb_ifindex(ns, ifname), err;

	if (idx < 0)
		return idx;
	ifi.ifi_index = idx;
	tb_msg_init(&m, RTM_NEWLINK, 0, &ifi);
	if (mtu)
		tb_attr_u32(&m, IFLA_MTU, mtu);
	err = tb_nl_in(ns, &m);
	return err ? tb_fail(-err, "testbed: setting %s %s%s: %s", ifname,
			     up ? "up" : "down", mtu ? " (and its MTU)" : "",
			     strerror(-err)) : 0;
}

int tb_link_del(struct tb_ns *ns, const char *ifname)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct tb_msg m;
	uint32_t i;
	int idx = tb_ifindex(ns, ifname), err;

	if (idx < 0)
		return idx;
	ifi.ifi_index = idx;
	tb_msg_init(&m, RTM_DELLINK, 0, &ifi);
	err = tb_nl_in(ns, &m);
	if (err)
		return tb_fail(-err, "testbed: deleting %s: %s", ifname,
			       strerror(-err));
	for (i = 0; i < ns->tb->npairs; i++) {
		struct tb_pair *p = &ns->tb->pairs[i];

		if ((p->ns_a == ns && !strcmp(p->a, ifname)) ||
		    (p->ns_b == ns && !strcmp(p->b, ifname)))
			p->live = false;
	}
	return 0;
}

/* An ioctl on @ifname in @ns. */
static int tb_ioctl(struct tb_ns *ns, const char *ifname, unsigned long req,
		    struct ifreq *ifr)
{
	int saved, s, err = tb_ns_enter(ns, &saved);

	if (err)
		return err;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		err = -errno;
	} else {
		snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
		err = ioctl(s, req, ifr) ? -errno : 0;
		close(s);
	}
	tb_ns_leave(saved);
	return err;
}

int tb_link_set_queues(struct tb_ns *ns, const char *ifname, uint32_t rx,
		       uint32_t tx)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	int err;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = (void *)&ch;
	err = tb_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
	if (err)
		return tb_fail(-err, "testbed: %s: ETHTOOL_GCHANNELS: %s",
			       ifname, strerror(-err));
	ch.cmd = ETHTOOL_SCHANNELS;
	if (rx)
		ch.rx_count = rx;
	if (tx)
		ch.tx_count = tx;
	err = tb_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
	return err ? tb_fail(-err, "testbed: %s: %u rx / %u tx queues: %s",
			     ifname, rx, tx, strerror(-err)) : 0;
}

int tb_link_mac(struct tb_ns *ns, const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int err;

	memset(&ifr, 0, sizeof(ifr));
	err = tb_ioctl(ns, ifname, SIOCGIFHWADDR, &ifr);
	if (err)
		return tb_fail(-err, "testbed: %s: SIOCGIFHWADDR: %s", ifname,
			       strerror(-err));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* ETHTOOL_GSSET_INFO: how many statistics the driver has. */
static int tb_stat_count(struct tb_ns *ns, const char *ifname, uint32_t *n)
{
	union {
		struct ethtool_sset_info hdr;
		char room[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
	} si;
	struct ifreq ifr;
	int err;

	memset(&si, 0, sizeof(si));
	memset(&ifr, 0, sizeof(ifr));
	si.hdr.cmd = ETHTOOL_GSSET_INFO;
	si.hdr.sset_mask = 1ULL << ETH_SS_STATS;
	ifr.ifr_data = (void *)&si;
	err = tb_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
	if (err)
		return err;
	/* The driver's bit stays set only if it has the set. */
	*n = si.hdr.sset_mask ? si.hdr.data[0] : 0;
	return 0;
}

/*
 * The driver's counters of @ifname: the one called @name into *@value, or
 * with @name NULL every one that is not zero, printed to @out.
 */
static int tb_link_stats(struct tb_ns *ns, const char *ifname,
			 const char *name, uint64_t *value, FILE *out)
{
	struct ethtool_gstrings *gs = NULL;
	struct ethtool_stats *st = NULL;
	struct ifreq ifr;
	uint32_t n = 0, i;
	int err;

	err = tb_stat_count(ns, ifname, &n);
	if (err)
		return tb_fail(-err, "testbed: %s: ETHTOOL_GSSET_INFO: %s",
			       ifname, strerror(-err));
	/* The names and the values are read one after the other: a driver
	 * whose set changed in between (it does not for veth) is seen as
	 * the count said. */
	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + (size_t)n * sizeof(uint64_t));
	if (!gs || !st) {
		err = tb_fail(ENOMEM, "testbed: out of memory");
		goto out;
	}
	memset(&ifr, 0, sizeof(ifr));
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	ifr.ifr_data = (void *)gs;
	err = tb_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
	if (err) {
		err = tb_fail(-err, "testbed: %s: ETHTOOL_GSTRINGS: %s",
			      ifname, strerror(-err));
		goto out;
	}
	memset(&ifr, 0, sizeof(ifr));
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	ifr.ifr_data = (void *)st;
	err = tb_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
	if (err) {
		err = tb_fail(-err, "testbed: %s: ETHTOOL_GSTATS: %s", ifname,
			      strerror(-err));
		goto out;
	}
	err = name ? tb_fail(ENOENT, "testbed: %s has no counter %s", ifname,
			     name) : 0;
	for (i = 0; i < n && i < gs->len && i < st->n_stats; i++) {
		const char *s = (const char *)gs->data + i * ETH_GSTRING_LEN;

		if (!name) {
			if (st->data[i])
				fprintf(out, " %.*s %" PRIu64, ETH_GSTRING_LEN,
					s, (uint64_t)st->data[i]);
		} else if (!strncmp(s, name, ETH_GSTRING_LEN)) {
			*value = st->data[i];
			err = 0;
			break;
		}
	}
out:
	free(gs);
	free(st);
	return err;
}

int tb_link_stat(struct tb_ns *ns, const char *ifname, const char *name,
		 uint64_t *value)
{
	return tb_link_stats(ns, ifname, name, value, NULL);
}

/*
 * @ifname's counters as the stack keeps them (/proc/net/dev of @ns: what
 * reached the stack, what a veth dropped on transmit), beside the driver's:
 * a frame lost before any XDP program ran shows here only.
 */
static void tb_netdev_print(struct tb_ns *ns, const char *ifname, FILE *out)
{
	unsigned long long v[16];
	char line[512], name[64];
	int saved;
	FILE *f;

	if (tb_ns_enter(ns, &saved))
		return;
	f = fopen("/proc/thread-self/net/dev", "re");
	tb_ns_leave(saved);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon || sscanf(line, " %63[^:]", name) != 1 ||
		    strcmp(name, ifname))
			continue;
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu "
			   "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
			   &v[13], &v[14], &v[15]) == 16)
			fprintf(out, " | stack: rx_packets %llu rx_errs %llu "
				"rx_drop %llu tx_packets %llu tx_errs %llu "
				"tx_drop %llu", v[1], v[2], v[3], v[9], v[10],
				v[11]);
		break;
	}
	fclose(f);
}

int tb_link_stats_print(struct tb_ns *ns, const char *ifname, FILE *out)
{
	int err;

	fprintf(out, "%s:", ifname);
	err = tb_link_stats(ns, ifname, NULL, NULL, out);
	tb_netdev_print(ns, ifname, out);
	fputc('\n', out);
	return err;
}

int tb_xsk_count(struct tb_ns *ns)
{
	char line[512];
	int saved, n = -1, err = tb_ns_enter(ns, &saved);
	FILE *f;

	if (err)
		return err;
	/* /proc/thread-self/net: the namespace this thread is in now. */
	f = fopen("/proc/thread-self/net/protocols", "re");
	err = f ? 0 : -errno;
	tb_ns_leave(saved);
	if (!f)
		return tb_fail(-err, "testbed: /proc/net/protocols: %s",
			       strerror(-err));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "XDP ", 4) &&
		    sscanf(line + 4, "%*u %d", &n) != 1)
			n = -1;
	fclose(f);
	return n >= 0 ? n : tb_fail(ENOENT, "testbed: no AF_XDP line in "
				    "/proc/net/protocols");
}

/* ---- XDP programs: a few raw instructions -------------------------------- */

#define TB_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define I_MOV64_REG(d, s)	TB_INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define I_MOV64_IMM(d, i)	TB_INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define I_ADD64_IMM(d, i)	TB_INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define I_ADD64_REG(d, s)	TB_INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define I_ST_W(d, o, i)		TB_INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define I_LDX_DW(d, s, o)	TB_INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define I_STX_DW(d, s, o)	TB_INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define I_LDX_W(d, s, o)	TB_INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define I_LDX_H(d, s, o)	TB_INSN(BPF_LDX | BPF_MEM | BPF_H, d, s, o, 0)
#define I_STX_H(d, s, o)	TB_INSN(BPF_STX | BPF_MEM | BPF_H, d, s, o, 0)
#define I_JGT_REG(d, s, o)	TB_INSN(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define I_JEQ_IMM(d, i, o)	TB_INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define I_CALL(f)		TB_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define I_EXIT()		TB_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define I_LD_MAP_FD(d, fd) \
	TB_INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
	TB_INSN(0, 0, 0, 0, 0)

/*
 * count: map[0] = { packets, bytes } per CPU (none if @map_fd < 0: the
 * generator's, which nobody reads); then the verdict, a redirect to
 * @ifindex, or the address swap and XDP_TX.
 */
static int tb_prog_load(enum tb_prog_kind kind, uint32_t ifindex, int map_fd)
{
	static const int verdict[] = {
		[TB_PROG_PASS] = XDP_PASS, [TB_PROG_DROP] = XDP_DROP,
		[TB_PROG_TX] = XDP_TX, [TB_PROG_REDIRECT] = XDP_REDIRECT,
	};
	struct bpf_insn prog[48] = {
		I_MOV64_REG(6, 1),
		I_CALL(BPF_FUNC_xdp_get_buff_len),	/* r1: ctx */
		I_MOV64_REG(7, 0),			/* r7: length */
		I_ST_W(10, -4, 0),			/* key 0 */
		I_MOV64_REG(2, 10),
		I_ADD64_IMM(2, -4),
		I_LD_MAP_FD(1, map_fd),
		I_CALL(BPF_FUNC_map_lookup_elem),
		I_JEQ_IMM(0, 0, 6),
		I_LDX_DW(1, 0, 0),
		I_ADD64_IMM(1, 1),
		I_STX_DW(0, 1, 0),
		I_LDX_DW(1, 0, 8),
		I_ADD64_REG(1, 7),
		I_STX_DW(0, 1, 8),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, lo);
	size_t n = map_fd < 0 ? 1 : 16;	/* r6 = ctx, then the count */

	if (kind == TB_PROG_REDIRECT) {
		prog[n++] = I_MOV64_IMM(1, (int32_t)ifindex);
		prog[n++] = I_MOV64_IMM(2, 0);
		prog[n++] = I_CALL(BPF_FUNC_redirect);
	} else if (kind == TB_PROG_MACSWAP) {
		int off;

		/* r6 is still the context: r2 data, r3 data_end. The
		 * verifier wants the bound checked before any access. */
		prog[n++] = I_LDX_W(2, 6, offsetof(struct xdp_md, data));
		prog[n++] = I_LDX_W(3, 6, offsetof(struct xdp_md, data_end));
		prog[n++] = I_MOV64_REG(4, 2);
		prog[n++] = I_ADD64_IMM(4, ETH_HLEN);
		prog[n++] = I_MOV64_IMM(0, XDP_DROP);
		prog[n++] = I_JGT_REG(4, 3, 13);	/* to the exit */
		/* Destination (bytes 0-5) and source (6-11), by halves. */
		for (off = 0; off < 6; off += 2) {
			prog[n++] = I_LDX_H(4, 2, off);
			prog[n++] = I_LDX_H(5, 2, off + 6);
			prog[n++] = I_STX_H(2, 5, off);
			prog[n++] = I_STX_H(2, 4, off + 6);
		}
		prog[n++] = I_MOV64_IMM(0, XDP_TX);
	} else {
		prog[n++] = I_MOV64_IMM(0, verdict[kind]);
	}
	prog[n++] = I_EXIT();
	return bpf_prog_load(BPF_PROG_TYPE_XDP, "tb_xdp", "GPL", prog, n, &lo);
}

static void tb_xdp_free(struct tb_xdp *x)
{
	if (x->prog_fd >= 0)
		close(x->prog_fd);
	if (x->map_fd >= 0)
		close(x->map_fd);
	free(x);
}

/* A program and its counter map, loaded, not attached. */
static int tb_xdp_make(enum tb_prog_kind kind, uint32_t arg, bool count,
		       struct tb_xdp **out)
{
	struct tb_xdp *x = calloc(1, sizeof(*x));

	if (!x)
		return tb_fail(ENOMEM, "testbed: out of memory");
	x->prog_fd = -1;
	x->map_fd = !count ? -1 :
		    bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "tb_count",
				   sizeof(uint32_t), 2 * sizeof(uint64_t), 1,
				   NULL);
	if (count && x->map_fd < 0) {
		int err = errno;

		tb_xdp_free(x);
		return tb_fail(err, "testbed: BPF map: %s%s", strerror(err),
			       err == EPERM ? " (not root?)" : "");
	}
	x->prog_fd = tb_prog_load(kind, arg, x->map_fd);
	if (x->prog_fd < 0) {
		int err = -x->prog_fd;

		tb_xdp_free(x);
		return tb_fail(err, "testbed: loading an XDP program: %s",
			       strerror(err));
	}
	*out = x;
	return 0;
}

int tb_xdp_attach(struct tb_ns *ns, const char *ifname, enum tb_prog_kind kind,
		  uint32_t arg, int mode, struct tb_xdp **out)
{
	struct tb *tb = ns->tb;
	struct tb_xdp *x;
	int saved, err, slot;

	if ((unsigned int)kind > TB_PROG_MACSWAP ||
	    (mode != TB_XDP_NATIVE && mode != TB_XDP_GENERIC))
		return tb_fail(EINVAL, "testbed: bad program kind or mode");
	for (slot = 0; slot < TB_MAX_PROGS && tb->progs[slot]; slot++)
		;
	if (slot == TB_MAX_PROGS)
		return tb_fail(ENOSPC, "testbed: too many programs");
	err = tb_xdp_make(kind, arg, true, &x);
	if (err)
		return err;
	x->tb = tb;
	x->ns = ns;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	x->xdp_flags = mode == TB_XDP_NATIVE ? XDP_FLAGS_DRV_MODE :
		       XDP_FLAGS_SKB_MODE;
	err = tb_ns_enter(ns, &saved);
	if (err) {
		tb_xdp_free(x);
		return err;
	}
	x->ifindex = (int)if_nametoindex(ifname);
	err = x->ifindex ? bpf_xdp_attach(x->ifindex, x->prog_fd,
					  x->xdp_flags |
					  XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) :
			   -ENODEV;
	tb_ns_leave(saved);
	if (err) {
		tb_xdp_free(x);
		return tb_fail(-err, "testbed: attaching to %s in %s: %s",
			       ifname, ns->name, strerror(-err));
	}
	x->attached = true;
	tb->progs[slot] = x;
	*out = x;
	return 0;
}

int tb_xdp_count(const struct tb_xdp *x, uint64_t *packets, uint64_t *bytes)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t *v, p = 0, b = 0;
	uint32_t key = 0;

	if (ncpu <= 0)
		return tb_fail(EIO, "testbed: cannot count CPUs");
	v = calloc((size_t)ncpu, 2 * sizeof(uint64_t));
	if (!v)
		return tb_fail(ENOMEM, "testbed: out of memory");
	if (bpf_map_lookup_elem(x->map_fd, &key, v)) {
		int err = errno;

		free(v);
		return tb_fail(err, "testbed: reading a counter: %s",
			       strerror(err));
	}
	for (i = 0; i < ncpu; i++) {
		p += v[2 * i];
		b += v[2 * i + 1];
	}
	free(v);
	if (packets)
		*packets = p;
	if (bytes)
		*bytes = b;
	return 0;
}

void tb_xdp_detach(struct tb_xdp *x)
{
	int saved, i;

	if (!x)
		return;
	if (x->attached && !tb_ns_enter(x->ns, &saved)) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = x->prog_fd);

		/* Only if it is still ours (REPLACE checks old_prog_fd). */
		bpf_xdp_detach(x->ifindex, x->xdp_flags | XDP_FLAGS_REPLACE,
			       &ao);
		tb_ns_leave(saved);
	}
	for (i = 0; i < TB_MAX_PROGS; i++)
		if (x->tb->progs[i] == x)
			x->tb->progs[i] = NULL;
	tb_xdp_free(x);
}

int tb_xdp_query(struct tb_ns *ns, const char *ifname, uint32_t *prog_id,
		 int *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, qo);
	int saved, idx, err = tb_ns_enter(ns, &saved);

	if (err)
		return err;
	idx = (int)if_nametoindex(ifname);
	err = idx ? bpf_xdp_query(idx, 0, &qo) : -ENODEV;
	tb_ns_leave(saved);
	if (err)
		return tb_fail(-err, "testbed: querying %s: %s", ifname,
			       strerror(-err));
	if (prog_id)
		*prog_id = qo.prog_id;
	if (mode)
		*mode = qo.attach_mode == XDP_ATTACHED_NONE ? 0 :
			qo.attach_mode == XDP_ATTACHED_DRV ? TB_XDP_NATIVE :
			qo.attach_mode == XDP_ATTACHED_SKB ? TB_XDP_GENERIC :
			-1;
	return 0;
}

/* ---- the generator ------------------------------------------------------- */

static uint64_t tb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The other end of a pair this testbed made, if @ifname in @ns is one. */
static const struct tb_pair *tb_peer_of(struct tb *tb, struct tb_ns *ns,
					const char *ifname,
					struct tb_ns **pns, const char **pname)
{
	uint32_t i;

	for (i = 0; i < tb->npairs; i++) {
		const struct tb_pair *p = &tb->pairs[i];

		if (!p->live)
			continue;
		if (p->ns_a == ns && !strcmp(p->a, ifname)) {
			*pns = p->ns_b;
			*pname = p->b;
			return p;
		}
		if (p->ns_b == ns && !strcmp(p->b, ifname)) {
			*pns = p->ns_a;
			*pname = p->a;
			return p;
		}
	}
	return NULL;
}

struct tb_gen {
	struct tb_ns *ns;
	struct tb_xdp *x;		/* redirect out of the interface, or
					 * drop (o->drop) */
	uint64_t pps;
	uint32_t batch;
	int cpu;
	size_t len;
	uint8_t frame[3500];
};

/*
 * Whether this kernel runs live-frames test runs for us: once, with a
 * program that drops the frame (so the probe sends nothing). Some kernels
 * refuse them with EPERM even to root (a security policy, seen on a
 * 6.18 VM kernel): that is a kernel that cannot, -EOPNOTSUPP, as one
 * without BPF_F_TEST_XDP_LIVE_FRAMES (EINVAL), so callers skip, loudly,
 * rather than fail. 0, -EOPNOTSUPP (with the reason), or another error
 * of the probe itself (not cached).
 */
static bool tb_live_refused;	/* the probe found them refused */

static int tb_live_frames_probe(void)
{
	static int known;	/* 0: not yet; 1: yes; -EOPNOTSUPP */
	static char why[160];
	uint8_t frame[64] = { 0 };
	struct tb_xdp *x;
	int err;

	if (known > 0)
		return 0;
	if (known < 0)
		return tb_fail(EOPNOTSUPP, "%s", why);
	err = tb_xdp_make(TB_PROG_DROP, 0, false, &x);
	if (err)
		return err;
	{
		LIBBPF_OPTS(bpf_test_run_opts, tr, .data_in = frame,
			    .data_size_in = sizeof(frame), .repeat = 1,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		err = bpf_prog_test_run_opts(x->prog_fd, &tr);
		err = err ? -errno : 0;
	}
	tb_xdp_free(x);
	if (!err) {
		known = 1;
		return 0;
	}
	if (err != -EPERM && err != -EINVAL && err != -EOPNOTSUPP)
		return tb_fail(-err, "testbed: live-frames probe: %s",
			       strerror(-err));
	snprintf(why, sizeof(why), "testbed: this kernel refuses "
		 "BPF_F_TEST_XDP_LIVE_FRAMES test runs (%s%s)",
		 strerror(-err), err == -EPERM ? ", even as root: a kernel "
		 "or security policy" : ": too old?");
	known = -EOPNOTSUPP;
	tb_live_refused = true;
	return tb_fail(EOPNOTSUPP, "%s", why);
}

int tb_gen_open(struct tb *tb, struct tb_ns *ns, const char *ifname,
		const void *frame, size_t len, const struct tb_gen_opts *o,
		struct tb_gen **out)
{
	bool drop = o && o->drop;
	struct tb_gen *g;
	struct tb_ns *pns;
	const char *pname;
	uint32_t pid = 0;
	int idx, err;

	if (!tb || !ns || !ifname || !frame || len < 14 ||
	    len > sizeof(g->frame) || !out)
		return tb_fail(EINVAL, "testbed: generator: bad arguments");
	/* Where it matters: the receiving end must run XDP (see the top).
	 * A dropping generator sends nothing anywhere. */
	if (!drop && tb_peer_of(tb, ns, ifname, &pns, &pname)) {
		err = tb_xdp_query(pns, pname, &pid, NULL);
		if (err)
			return err;
		if (!pid)
			return tb_fail(ENOLINK, "testbed: %s (in %s), the peer "
				       "of %s, has no XDP program: veth would "
				       "drop every frame redirected into %s, "
				       "silently. Attach one to %s first",
				       pname, pns->name, ifname, ifname,
				       pname);
	}
	idx = tb_ifindex(ns, ifname);
	if (idx < 0)
		return idx;
	err = tb_live_frames_probe();
	if (err)
		return err;
	g = calloc(1, sizeof(*g));
	if (!g)
		return tb_fail(ENOMEM, "testbed: out of memory");
	/* Uncounted: a counter per frame would slow the generator, and
	 * its count is the caller's @count anyway. */
	err = tb_xdp_make(drop ? TB_PROG_DROP : TB_PROG_REDIRECT,
			  (uint32_t)idx, false, &g->x);
	if (err) {
		free(g);
		return err;
	}
	g->ns = ns;
	g->pps = o ? o->pps : 0;
	g->batch = o && o->batch ? o->batch : TB_GEN_BATCH;
	g->cpu = o ? o->cpu : -1;
	g->len = len;
	memcpy(g->frame, frame, len);
	*out = g;
	return 0;
}

int tb_gen_send(struct tb_gen *g, uint64_t count)
{
	uint64_t sent = 0, t0, slice;
	cpu_set_t old, one;
	bool pinned = false;
	int saved, err;

	if (!g || !count)
		return tb_fail(EINVAL, "testbed: generator: bad arguments");
	if (g->cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(g->cpu, &one);
		if (sched_getaffinity(0, sizeof(old), &old) ||
		    sched_setaffinity(0, sizeof(one), &one))
			return tb_fail(errno, "testbed: cannot run on CPU %d: "
				       "%s", g->cpu, strerror(errno));
		pinned = true;
	}
	err = tb_ns_enter(g->ns, &saved);
	if (err)
		goto out;
	/* Paced: a slice's worth per test run, then wait for the clock. */
	slice = g->pps ? g->pps * TB_GEN_SLICE_MS / 1000 : count;
	if (!slice)
		slice = 1;
	t0 = tb_now_ns();
	while (sent < count) {
		uint64_t n = count - sent < slice ? count - sent : slice;
		LIBBPF_OPTS(bpf_test_run_opts, tr, .data_in = g->frame,
			    .data_size_in = (uint32_t)g->len,
			    .repeat = (int)(n > 0x7fffffff ? 0x7fffffff : n),
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			    .batch_size = g->batch);

		err = bpf_prog_test_run_opts(g->x->prog_fd, &tr);
		if (err) {
			err = tb_fail(-err, "testbed: live-frames test run: "
				      "%s%s", strerror(-err), err == -EINVAL ?
				      " (no BPF_F_TEST_XDP_LIVE_FRAMES?)" :
				      "");
			break;
		}
		sent += (uint64_t)tr.repeat;
		if (g->pps && sent < count) {
			uint64_t due = t0 + sent * 1000000000ULL / g->pps;
			uint64_t now = tb_now_ns();

			if (due > now) {
				struct timespec ts = {
					.tv_sec = (time_t)((due - now) /
							   1000000000ULL),
					.tv_nsec = (long)((due - now) %
							  1000000000ULL),
				};

				nanosleep(&ts, NULL);
			}
		}
	}
	tb_ns_leave(saved);
out:
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
	return err;
}

void tb_gen_close(struct tb_gen *g)
{
	if (!g)
		return;
	tb_xdp_free(g->x);
	free(g);
}

/*
 * tb_gen_run() where the kernel refuses live frames: the same frames sent
 * by an AF_PACKET socket on @ifname (out of it as skbs, so the peer's XDP
 * program sees them as veth's generic path gives them), one send each,
 * paced as asked. Slower (a system call a frame) but every frame the
 * tests count still goes; a full transmit queue (ENOBUFS) is waited out,
 * at most a second a frame, so nothing is silently short.
 */
static int tb_gen_run_pkt(struct tb_ns *ns, const char *ifname,
			  const void *frame, size_t len, uint64_t count,
			  const struct tb_gen_opts *o)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	uint64_t sent, t0 = tb_now_ns(), pps = o ? o->pps : 0;
	int saved, fd, err = tb_ns_enter(ns, &saved), tries, one = 1;
	bool pinned = false;
	cpu_set_t old;

	if (err)
		return err;
	/* Protocol 0: it only sends, nothing queues up to be read. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = tb_fail(errno, "testbed: AF_PACKET socket: %s",
			      strerror(errno));
		goto out;
	}
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = tb_fail(sll.sll_ifindex ? errno : ENODEV,
			      "testbed: generator: AF_PACKET on %s in %s: %s",
			      ifname, ns->name, sll.sll_ifindex ?
			      strerror(errno) : "no such interface");
		goto out_close;
	}
	/*
	 * Which of the peer's queues a frame reaches: veth hands an skb to
	 * the peer queue of its transmit queue, which without the qdisc
	 * (PACKET_QDISC_BYPASS) and without XPS maps is the sending CPU
	 * modulo the queues (packet_pick_tx_queue() records it, and
	 * skb_tx_hash() takes it): pinned to @o->cpu, as the live frames'
	 * generator, the frames go where they would have.
	 */
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	if (o && o->cpu >= 0) {
		cpu_set_t one_cpu;

		CPU_ZERO(&one_cpu);
		CPU_SET(o->cpu, &one_cpu);
		if (sched_getaffinity(0, sizeof(old), &old) ||
		    sched_setaffinity(0, sizeof(one_cpu), &one_cpu)) {
			err = tb_fail(errno, "testbed: cannot run on CPU %d: "
				      "%s", o->cpu, strerror(errno));
			goto out_close;
		}
		pinned = true;
	}
	for (sent = 0; sent < count && !err; sent++) {
		for (tries = 0;; tries++) {
			if (send(fd, frame, len, 0) == (ssize_t)len)
				break;
			if ((errno != ENOBUFS && errno != EAGAIN) ||
			    tries == 10000) {
				err = tb_fail(errno, "testbed: generator: "
					      "send on %s: %s", ifname,
					      strerror(errno));
				break;
			}
			usleep(100);
		}
		if (pps && !err) {
			uint64_t due = t0 + (sent + 1) * 1000000000ULL / pps;
			uint64_t now = tb_now_ns();

			if (due > now + 1000000)	/* sleep a ms or more */
				usleep((useconds_t)((due - now) / 1000));
		}
	}
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
out_close:
	close(fd);
out:
	tb_ns_leave(saved);
	return err;
}

int tb_gen_run(struct tb *tb, struct tb_ns *ns, const char *ifname,
	       const void *frame, size_t len, uint64_t count,
	       const struct tb_gen_opts *o)
{
	struct tb_gen_opts go = { .cpu = -1 };
	struct tb_gen *g = NULL;	/* set when tb_gen_open() succeeds */
	int err;

	if (!count)
		return tb_fail(EINVAL, "testbed: generator: bad arguments");
	/* tb_gen_run() always sends: a dropping generator is for
	 * benchmarks, which open their own. */
	if (o) {
		go = *o;
		go.drop = false;
	}
	err = tb_gen_open(tb, ns, ifname, frame, len, &go, &g);
	if (err == -EOPNOTSUPP && tb_live_refused)
		return tb_gen_run_pkt(ns, ifname, frame, len, count, &go);
	if (err)
		return err;
	err = tb_gen_send(g, count);
	tb_gen_close(g);
	return err;
}

/* ---- raw packets --------------------------------------------------------- */

int tb_pkt_open(struct tb_ns *ns, const char *ifname, int *fd)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int saved, s, one = 1, rcvbuf = TB_PKT_RCVBUF;
	int err = tb_ns_enter(ns, &saved);

	if (err)
		return err;
	s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (s < 0) {
		err = tb_fail(errno, "testbed: AF_PACKET socket: %s",
			      strerror(errno));
		goto out;
	}
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		err = tb_fail(ENODEV, "testbed: no %s in %s", ifname,
			      ns->name);
		close(s);
		goto out;
	}
	/* Only what arrives, not what this socket (or the stack) sends. */
	setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	/* Room for a burst sent before anything is read back (the default
	 * 208 KiB holds ~100 full-size frames). */
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(s, (struct sockaddr *)&sll, sizeof(sll))) {
		err = tb_fail(errno, "testbed: binding to %s: %s", ifname,
			      strerror(errno));
		close(s);
		goto out;
	}
	*fd = s;
out:
	tb_ns_leave(saved);
	return err;
}

int tb_pkt_send(int fd, const void *frame, size_t len)
{
	ssize_t n = send(fd, frame, len, 0);

	if (n < 0)
		return tb_fail(errno, "testbed: send: %s", strerror(errno));
	return (size_t)n == len ? 0 : tb_fail(EIO, "testbed: short send");
}

int tb_pkt_stats(int fd, uint64_t *packets, uint64_t *drops)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return tb_fail(errno, "testbed: PACKET_STATISTICS: %s",
			       strerror(errno));
	*packets = st.tp_packets;
	*drops = st.tp_drops;
	return 0;
}

ssize_t tb_pkt_recv(int fd, void *buf, size_t size, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int r;

	r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return tb_fail(errno, "testbed: poll: %s", strerror(errno));
	if (!r)
		return -ETIMEDOUT;
	n = recv(fd, buf, size, MSG_DONTWAIT);
	return n < 0 ? tb_fail(errno, "testbed: recv: %s", strerror(errno)) :
		       n;
}

/* ---- test frames --------------------------------------------------------- */

static uint16_t tb_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void tb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t tb_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint8_t tb_pattern(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + (i >> 8));
}

size_t tb_frame_build(void *buf, size_t len, const uint8_t dst[6],
		      const uint8_t src[6], uint16_t sport, uint64_t seq)
{
	uint8_t *f = buf, *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	size_t i, plen = len - 42;

	if (len < 60 || len > 9000)
		return 0;
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	tb_put16(f + 12, ETH_P_IP);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	tb_put16(ip + 2, (uint16_t)(len - 14));
	ip[8] = 64;
	ip[9] = 17;				/* UDP */
	ip[12] = 198; ip[13] = 18; ip[14] = 0; ip[15] = 1;
	ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 2;
	tb_put16(ip + 10, tb_csum(ip, 20));
	tb_put16(udp, sport);
	tb_put16(udp + 2, 9);			/* discard */
	tb_put16(udp + 4, (uint16_t)(len - 34));
	tb_put16(udp + 6, 0);			/* no checksum (IPv4) */
	for (i = 0; i < 8; i++)
		pl[i] = (uint8_t)(seq >> (56 - 8 * i));
	for (i = 8; i < plen; i++)
		pl[i] = tb_pattern(seq, i);
	return len;
}

bool tb_frame_check(const void *buf, size_t len, uint64_t *seq)
{
	const uint8_t *f = buf, *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	uint64_t s = 0;
	size_t i;

	if (len < 60 || tb_get16(f + 12) != ETH_P_IP || ip[0] != 0x45 ||
	    ip[9] != 17 || tb_get16(ip + 2) != len - 14 ||
	    tb_csum(ip, 20) != 0 || tb_get16(udp + 4) != len - 34)
		return false;
	for (i = 0; i < 8; i++)
		s = s << 8 | pl[i];
	for (i = 8; i < len - 42; i++)
		if (pl[i] != tb_pattern(s, i))
			return false;
	if (seq)
		*seq = s;
	return true;
}

/* ---- open and close ------------------------------------------------------ */

int tb_open(struct tb **tbp, uint32_t flags)
{
	const char *e = getenv("UXDP_TESTBED_NAMED");
	struct tb *tb;

	if (!tbp || (flags & ~TB_F_NAMED))
		return tb_fail(EINVAL, "testbed: bad arguments");
	if (geteuid() != 0)
		return tb_fail(EPERM, "testbed: needs root (network "
			       "namespaces, veth, XDP)");
	tb = calloc(1, sizeof(*tb));
	if (!tb)
		return tb_fail(ENOMEM, "testbed: out of memory");
	tb->flags = flags;
	if (e && *e && *e != '0')
		tb->flags |= TB_F_NAMED;
	pthread_mutex_lock(&tb_named_lock);
	tb_install_hooks();
	pthread_mutex_unlock(&tb_named_lock);
	tb_remove_leftovers();
	*tbp = tb;
	return 0;
}

void tb_close(struct tb *tb)
{
	uint32_t i;

	if (!tb)
		return;
	for (i = 0; i < TB_MAX_PROGS; i++)
		tb_xdp_detach(tb->progs[i]);
	/* Deleting one end takes the other along; the namespaces would
	 * take them too, but only once nothing else holds them. */
	for (i = 0; i < tb->npairs; i++)
		if (tb->pairs[i].live)
			tb_link_del(tb->pairs[i].ns_a, tb->pairs[i].a);
	for (i = 0; i < tb->nns; i++) {
		struct tb_ns *ns = tb->ns[i];

		close(ns->fd);
		if (ns->named >= 0) {
			pthread_mutex_lock(&tb_named_lock);
			tb_unmount(tb_named[ns->named]);
			pthread_mutex_unlock(&tb_named_lock);
		}
		free(ns);
	}
	free(tb);
}
