/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel peer of uxdp's veth XDP_TX loop (see kpeer_veth.h).
 *
 * The loop, and how it maps to the uxdp loop
 * ------------------------------------------
 * All of it runs on CPU 0, in the calling thread and in the softirqs that
 * thread raises, inside a private network namespace holding one veth pair
 * vA <-> vB (1 queue each, both up, native XDP on both):
 *
 *   uxdp (in-process)                    kernel peer (this file)
 *   -----------------                    -----------------------
 *   generator: a frame from the pool,    BPF_PROG_TEST_RUN with
 *   handed to veth A's xdp_xmit          BPF_F_TEST_XDP_LIVE_FRAMES, batch
 *   (bulks of 16, flushed at the end     64: kpeer_gen_redirect runs on a
 *   of the batch)                        page_pool frame and returns
 *                                        bpf_redirect(vA); the redirect
 *                                        goes to the per-CPU device bulk
 *                                        queue (16), sent when full and by
 *                                        xdp_do_flush() at the end of each
 *                                        batch: veth_xdp_xmit() on vA puts
 *                                        the frames on vB's ptr_ring (256)
 *                                        and, on the flush, schedules vB's
 *                                        NAPI
 *   B's poll: B's program swaps the      local_bh_enable() at the end of
 *   MACs, XDP_TX -> bulk queue ->        the batch runs NET_RX softirq on
 *   flush -> A's ring                    the same CPU: veth_poll on vB runs
 *                                        kpeer_b_swap_tx (swap MACs,
 *                                        XDP_TX); veth's XDP_TX bulk queue
 *                                        (16) is flushed into vA's ring
 *                                        and vA's NAPI scheduled
 *   A's poll: A's program counts and     veth_poll on vA runs
 *   drops; the frame goes back to the    kpeer_a_count_drop (per-CPU
 *   pool                                 counter, XDP_DROP); the frame is
 *                                        returned to the test run's
 *                                        page_pool, which the generator
 *                                        allocates from again
 *
 * No ctx_in is passed: the test run's frames then "arrive" on the
 * namespace's loopback, whose namespace is also where bpf_redirect()'s
 * ifindex is looked up (the caller's: hence the thread joins the namespace
 * rather than a child doing the work). ctx_in.ingress_ifindex = vA with a
 * generator returning XDP_TX would take the same path: live mode turns
 * XDP_TX into a redirect to the ingress device.
 *
 * The "generator only" variant runs kpeer_gen_drop (XDP_DROP) instead: the
 * injection ceiling (page_pool alloc + program + page_pool recycle). The
 * "one hop" variant redirects out of vA as in the loop, but vB's program is
 * kpeer_b_drop: generator + one veth xmit + one veth poll.
 *
 * What is measured: the CLOCK_MONOTONIC wall time of one
 * bpf_prog_test_run_opts() call (repeat = frames), i.e. the syscall, the
 * test run's page_pool set-up and teardown, the first-use copy of the
 * frame into each new page, and per frame everything above, including the
 * softirq work on vB and vA, which runs inside the call (on each batch's
 * local_bh_enable(); if the softirq budget runs out, in ksoftirqd/0, on
 * the same CPU, still mostly inside the call). Loop Mpps = frames counted
 * by vA's program / that time. Frames still in the rings when the call
 * returns (at most two rings, 2 x 256, against millions) are waited for
 * and counted, but the time they take after the return is not.
 *
 * The test run yields the CPU when the scheduler asks (cond_resched), so
 * other tasks on CPU 0 add to the wall time: res->preemptions counts the
 * involuntary switches inside the measured calls (0 on a quiet CPU).
 *
 * Not measured: namespace, veth and program set-up and teardown, reading
 * the counters, the wait for stragglers, and the warm-up run of each
 * variant. Not in either loop: sockets, skbs, the IP stack, any qdisc
 * (XDP frames only; no frame ever reaches the stack).
 *
 * Clean-up: the namespace has no name (unshare(CLONE_NEWNET) in the
 * calling thread, which goes back with setns() at the end), so nothing
 * appears in `ip netns list` and nothing can outlive the process: when the
 * thread has left and the sockets are closed, the kernel frees the
 * namespace, and with it the veth pair and the programs attached to it.
 * The pair is also deleted explicitly before leaving.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kpeer_veth.h"

#define KP_IF_A		"uxdp-kpA"
#define KP_IF_B		"uxdp-kpB"
#define KP_CPU		0
#define KP_BATCH	64		/* NAPI_POLL_WEIGHT, the kernel default */
#define KP_FRAME_LEN	64		/* Ethernet + IPv4 + UDP, no FCS */
#define KP_WARMUP	262144		/* frames, per variant, not measured */
#define KP_SETTLE_MS	500		/* longest wait for frames in flight */
#define KP_NL_TIMEOUT_S	2		/* longest wait for a netlink answer */

static const unsigned char kp_mac_a[6] = { 0x02, 0x75, 0x78, 0x64, 0x70, 0x0a };
static const unsigned char kp_mac_b[6] = { 0x02, 0x75, 0x78, 0x64, 0x70, 0x0b };

static volatile sig_atomic_t kp_signal;

/* veth's ethtool -S names and values for one device. */
struct kp_estats {
	unsigned int n;
	char *names;			/* n x ETH_GSTRING_LEN */
	struct ethtool_stats *st;	/* n values */
};

/* Per-run readings of veth's counters. */
struct kp_vstats {
	__u64 b_rx, b_tx, b_tx_err, a_xmit_err;
};

struct kp {
	struct kpeer_veth_result *res;

	cpu_set_t old_mask;
	bool pinned;

	struct sigaction old_sa[2];
	bool sa_installed[2];

	int orig_ns;			/* the thread's namespace, to go back to */
	bool in_ns;
	int nl;				/* rtnetlink, in our namespace */
	__u32 seq;
	int ioc;			/* for SIOCETHTOOL, in our namespace */
	int if_a, if_b;
	bool veth;
	struct kp_estats es_a, es_b;
	bool estats_ok;

	struct bpf_object *obj;
	int fd_gen_redirect, fd_gen_drop, fd_b_swap_tx, fd_b_drop, fd_a_count;
	int count_map;
	int ncpus;
	__u64 *percpu;

	unsigned char frame[KP_FRAME_LEN];
	__u64 preempt;			/* involuntary switches in test runs */
};

static const int kp_signals[2] = { SIGINT, SIGTERM };

static int kp_fail(struct kp *kp, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kp->res->note, sizeof(kp->res->note), fmt, ap);
	va_end(ap);
	return err;
}

/* libbpf's own errors (4000 + n) become -EINVAL, with libbpf's words. */
static int kp_bpf_err(int err, char *buf, size_t size)
{
	libbpf_strerror(err, buf, size);
	return err <= -4000 && err > -4100 ? -EINVAL : err;
}

static double kp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void kp_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);	/* a signal only shortens it */
}

/* ---- signals ------------------------------------------------------------ */

static void kp_on_signal(int sig)
{
	kp_signal = sig;
}

/* Catch SIGINT/SIGTERM while we run, but only where they would kill us. */
static void kp_sig_install(struct kp *kp)
{
	struct sigaction sa, cur;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kp_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;		/* no SA_RESTART: let syscalls see EINTR */

	for (i = 0; i < 2; i++) {
		if (sigaction(kp_signals[i], NULL, &cur))
			continue;
		if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
			continue;
		if (!sigaction(kp_signals[i], &sa, &kp->old_sa[i]))
			kp->sa_installed[i] = true;
	}
}

static void kp_sig_restore(struct kp *kp)
{
	int i;

	for (i = 0; i < 2; i++)
		if (kp->sa_installed[i])
			sigaction(kp_signals[i], &kp->old_sa[i], NULL);
}

/* ---- rtnetlink ---------------------------------------------------------- */

struct kp_msg {
	struct nlmsghdr *nh;
	bool overflow;
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
};

static void kp_msg_init(struct kp_msg *m, __u16 type, __u16 flags,
			const struct ifinfomsg *ifi)
{
	memset(m, 0, sizeof(*m));
	m->nh = (struct nlmsghdr *)m->buf;
	m->nh->nlmsg_type = type;
	m->nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->nh->nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	memcpy(NLMSG_DATA(m->nh), ifi, sizeof(*ifi));
}

/* Append an attribute; a nest is one with no data, closed by kp_end(). */
static struct rtattr *kp_attr(struct kp_msg *m, unsigned short type,
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
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	m->nh->nlmsg_len = off + RTA_SPACE(len);
	return a;
}

static void kp_end(struct kp_msg *m, struct rtattr *nest)
{
	if (nest)
		nest->rta_len = m->buf + m->nh->nlmsg_len - (char *)nest;
}

/* Send @m, wait for its ack. Returns 0 or a negative errno. */
static int kp_nl_talk(struct kp *kp, struct kp_msg *m)
{
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nh;
	int i;
	ssize_t n;

	if (m->overflow)
		return -EMSGSIZE;
	m->nh->nlmsg_seq = ++kp->seq;
	if (sendto(kp->nl, m->buf, m->nh->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return -errno;

	for (i = 0; i < 16; i++) {	/* bounded; each recv by SO_RCVTIMEO */
		n = recv(kp->nl, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != kp->seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error;	/* 0: the ack */
			}
		}
	}
	return -ETIMEDOUT;
}

static int kp_veth_add(struct kp *kp)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *peer;
	struct kp_msg m;
	__u32 one = 1;

	kp_msg_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi);
	kp_attr(&m, IFLA_IFNAME, KP_IF_A, sizeof(KP_IF_A));
	kp_attr(&m, IFLA_ADDRESS, kp_mac_a, sizeof(kp_mac_a));
	kp_attr(&m, IFLA_NUM_TX_QUEUES, &one, sizeof(one));
	kp_attr(&m, IFLA_NUM_RX_QUEUES, &one, sizeof(one));
	info = kp_attr(&m, IFLA_LINKINFO, NULL, 0);
	kp_attr(&m, IFLA_INFO_KIND, "veth", 4);
	data = kp_attr(&m, IFLA_INFO_DATA, NULL, 0);
	peer = kp_attr(&m, VETH_INFO_PEER, &ifi, sizeof(ifi));
	kp_attr(&m, IFLA_IFNAME, KP_IF_B, sizeof(KP_IF_B));
	kp_attr(&m, IFLA_ADDRESS, kp_mac_b, sizeof(kp_mac_b));
	kp_attr(&m, IFLA_NUM_TX_QUEUES, &one, sizeof(one));
	kp_attr(&m, IFLA_NUM_RX_QUEUES, &one, sizeof(one));
	kp_end(&m, peer);
	kp_end(&m, data);
	kp_end(&m, info);
	return kp_nl_talk(kp, &m);
}

static int kp_link_up(struct kp *kp, int ifindex)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_index = ifindex,
		.ifi_flags = IFF_UP,
		.ifi_change = IFF_UP,
	};
	struct kp_msg m;

	kp_msg_init(&m, RTM_NEWLINK, 0, &ifi);
	return kp_nl_talk(kp, &m);
}

static int kp_link_del(struct kp *kp, int ifindex)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_index = ifindex,
	};
	struct kp_msg m;

	kp_msg_init(&m, RTM_DELLINK, 0, &ifi);
	return kp_nl_talk(kp, &m);
}

/*
 * No IPv6 in our namespace: otherwise the stack sends its own packets (MLD
 * reports, router solicitations) out of the pair when it comes up, which
 * veth hands to the XDP programs too, and they would be counted. /proc/sys
 * /net is the opening thread's namespace, so this touches no other.
 */
static int kp_no_ipv6(void)
{
	static const char *const path[] = {
		"/proc/sys/net/ipv6/conf/all/disable_ipv6",
		"/proc/sys/net/ipv6/conf/default/disable_ipv6",
	};
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = open(path[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* no IPv6 in this kernel */
			return -errno;
		}
		if (write(fd, "1", 1) != 1) {
			int err = -errno;

			close(fd);
			return err;
		}
		close(fd);
	}
	return 0;
}

/* ---- veth's own counters (ethtool -S) ----------------------------------- */

static int kp_ethtool(struct kp *kp, const char *ifname, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(kp->ioc, SIOCETHTOOL, &ifr) ? -errno : 0;
}

static int kp_estats_init(struct kp *kp, const char *ifname,
			  struct kp_estats *es)
{
	/* ethtool_sset_info and room for the one count asked for */
	__u64 ssbuf[(sizeof(struct ethtool_sset_info) + sizeof(__u32) + 7) / 8];
	struct ethtool_sset_info *ss = (struct ethtool_sset_info *)ssbuf;
	struct ethtool_gstrings *gs;
	unsigned int n;
	int err;

	memset(ssbuf, 0, sizeof(ssbuf));
	ss->cmd = ETHTOOL_GSSET_INFO;
	ss->sset_mask = 1ULL << ETH_SS_STATS;
	err = kp_ethtool(kp, ifname, ss);
	if (err)
		return err;
	if (!(ss->sset_mask & (1ULL << ETH_SS_STATS)) || !ss->data[0] ||
	    ss->data[0] > 4096)
		return -EOPNOTSUPP;
	n = ss->data[0];

	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	es->st = calloc(1, sizeof(*es->st) + (size_t)n * sizeof(__u64));
	if (!gs || !es->st) {
		free(gs);
		return -ENOMEM;
	}
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	err = kp_ethtool(kp, ifname, gs);
	if (err || gs->len != n) {
		free(gs);
		return err ? err : -EIO;
	}
	es->names = malloc((size_t)n * ETH_GSTRING_LEN);
	if (!es->names) {
		free(gs);
		return -ENOMEM;
	}
	memcpy(es->names, gs->data, (size_t)n * ETH_GSTRING_LEN);
	free(gs);
	es->n = n;
	return 0;
}

static void kp_estats_free(struct kp_estats *es)
{
	free(es->names);
	free(es->st);
	memset(es, 0, sizeof(*es));
}

static int kp_estats_read(struct kp *kp, const char *ifname,
			  struct kp_estats *es)
{
	es->st->cmd = ETHTOOL_GSTATS;
	es->st->n_stats = es->n;
	return kp_ethtool(kp, ifname, es->st);
}

/* Sum of the counters named @prefix<queue>@suffix ("rx_queue_", "_xdp_tx"). */
static __u64 kp_estat(const struct kp_estats *es, const char *prefix,
		      const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	__u64 sum = 0;
	unsigned int i;

	for (i = 0; i < es->n; i++) {
		const char *name = es->names + (size_t)i * ETH_GSTRING_LEN;
		size_t len = strnlen(name, ETH_GSTRING_LEN);

		if (len > pl + sl && !strncmp(name, prefix, pl) &&
		    !strcmp(name + len - sl, suffix))
			sum += es->st->data[i];
	}
	return sum;
}

static int kp_vstats(struct kp *kp, struct kp_vstats *v)
{
	memset(v, 0, sizeof(*v));
	if (!kp->estats_ok)
		return -ENODATA;
	if (kp_estats_read(kp, KP_IF_A, &kp->es_a) ||
	    kp_estats_read(kp, KP_IF_B, &kp->es_b))
		return -EIO;
	v->b_rx = kp_estat(&kp->es_b, "rx_queue_", "_xdp_packets");
	v->b_tx = kp_estat(&kp->es_b, "rx_queue_", "_xdp_tx");
	v->b_tx_err = kp_estat(&kp->es_b, "rx_queue_", "_xdp_tx_errors");
	v->a_xmit_err = kp_estat(&kp->es_a, "tx_queue_", "_xdp_xmit_errors");
	return 0;
}

/* ---- the frame ---------------------------------------------------------- */

static void kp_put16(unsigned char *p, unsigned int v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Ethernet (vA -> vB) / IPv4 198.18.0.1 -> 198.18.0.2 / UDP 9 -> 9. */
static void kp_build_frame(unsigned char *f)
{
	unsigned char *ip = f + 14, *udp = ip + 20;
	unsigned int sum = 0;
	int i;

	memset(f, 0, KP_FRAME_LEN);
	memcpy(f, kp_mac_b, 6);
	memcpy(f + 6, kp_mac_a, 6);
	kp_put16(f + 12, 0x0800);

	ip[0] = 0x45;
	kp_put16(ip + 2, KP_FRAME_LEN - 14);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 198; ip[13] = 18; ip[14] = 0; ip[15] = 1;
	ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 2;
	for (i = 0; i < 20; i += 2)
		sum += (ip[i] << 8) | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	kp_put16(ip + 10, ~sum & 0xffff);

	kp_put16(udp, 9);
	kp_put16(udp + 2, 9);
	kp_put16(udp + 4, KP_FRAME_LEN - 14 - 20);
	for (i = 42; i < KP_FRAME_LEN; i++)
		f[i] = 'u';
}

/* ---- BPF ---------------------------------------------------------------- */

/* Set the .rodata variable @name of the opened (not yet loaded) object. */
static int kp_set_rodata_u32(struct bpf_object *obj, const char *name,
			     __u32 val)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	const void *init;
	struct btf *btf;
	size_t size;
	char *data;
	int id, i, err;

	map = bpf_object__find_map_by_name(obj, ".rodata");
	btf = bpf_object__btf(obj);
	if (!map || !btf)
		return -ENOENT;
	init = bpf_map__initial_value(map, &size);
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (!init || id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != sizeof(val) || vs->offset + vs->size > size)
			return -EINVAL;
		data = malloc(size);
		if (!data)
			return -ENOMEM;
		memcpy(data, init, size);
		memcpy(data + vs->offset, &val, sizeof(val));
		err = bpf_map__set_initial_value(map, data, size);
		free(data);
		return err;
	}
	return -ENOENT;
}

static int kp_prog_fd(struct kp *kp, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(kp->obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

static int kp_load(struct kp *kp, const char *path)
{
	struct bpf_map *map;
	char why[128];
	int err;

	kp->obj = bpf_object__open_file(path, NULL);
	if (!kp->obj) {
		err = kp_bpf_err(-errno, why, sizeof(why));
		return kp_fail(kp, err, "cannot open BPF object %s: %s", path,
			       why);
	}
	err = kp_set_rodata_u32(kp->obj, "kpeer_a_ifindex", kp->if_a);
	if (err)
		return kp_fail(kp, err, "BPF object %s has no kpeer_a_ifindex "
			       "in .rodata (not veth_loop.bpf.o?)", path);
	err = bpf_object__load(kp->obj);
	if (err) {
		err = kp_bpf_err(err, why, sizeof(why));
		return kp_fail(kp, err, "BPF object load failed: %s (libbpf "
			       "said more on stderr)", why);
	}

	kp->fd_gen_redirect = kp_prog_fd(kp, "kpeer_gen_redirect");
	kp->fd_gen_drop = kp_prog_fd(kp, "kpeer_gen_drop");
	kp->fd_b_swap_tx = kp_prog_fd(kp, "kpeer_b_swap_tx");
	kp->fd_b_drop = kp_prog_fd(kp, "kpeer_b_drop");
	kp->fd_a_count = kp_prog_fd(kp, "kpeer_a_count_drop");
	map = bpf_object__find_map_by_name(kp->obj, "kpeer_a_count");
	kp->count_map = map ? bpf_map__fd(map) : -ENOENT;
	if (kp->fd_gen_redirect < 0 || kp->fd_gen_drop < 0 ||
	    kp->fd_b_swap_tx < 0 || kp->fd_b_drop < 0 || kp->fd_a_count < 0 ||
	    kp->count_map < 0)
		return kp_fail(kp, -ENOENT, "BPF object %s lacks a kpeer_* "
			       "program or the kpeer_a_count map", path);

	kp->ncpus = libbpf_num_possible_cpus();
	if (kp->ncpus <= 0)
		return kp_fail(kp, -EIO, "cannot count possible CPUs");
	kp->percpu = calloc(kp->ncpus, sizeof(__u64));
	if (!kp->percpu)
		return kp_fail(kp, -ENOMEM, "out of memory");
	return 0;
}

/* Attach @fd to @ifindex in native (driver) mode, check that it is. */
static int kp_attach(struct kp *kp, int ifindex, int fd, const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err;

	err = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		return kp_fail(kp, err, "no native XDP on veth (attach to %s: "
			       "%s)", ifname, strerror(-err));
	err = bpf_xdp_query(ifindex, XDP_FLAGS_DRV_MODE, &q);
	if (err || q.attach_mode != XDP_ATTACHED_DRV)
		return kp_fail(kp, err ? err : -EOPNOTSUPP, "no native XDP on "
			       "veth (%s: attach mode %u)", ifname,
			       (unsigned int)q.attach_mode);
	return 0;
}

static int kp_count(struct kp *kp, __u64 *out)
{
	__u32 key = 0;
	__u64 sum = 0;
	int i;

	if (bpf_map_lookup_elem(kp->count_map, &key, kp->percpu))
		return -errno;
	for (i = 0; i < kp->ncpus; i++)
		sum += kp->percpu[i];
	*out = sum;
	return 0;
}

/* One test run of @frames live frames through @prog_fd; *@secs its time. */
static int kp_inject(struct kp *kp, int prog_fd, __u64 frames, double *secs)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = kp->frame,
		    .data_size_in = sizeof(kp->frame),
		    .repeat = (int)frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .batch_size = KP_BATCH);
	struct rusage ru0, ru1;
	double t0, t1;
	int err;

	getrusage(RUSAGE_THREAD, &ru0);
	t0 = kp_now();
	err = bpf_prog_test_run_opts(prog_fd, &o);
	t1 = kp_now();
	getrusage(RUSAGE_THREAD, &ru1);
	*secs = t1 - t0;
	kp->preempt += ru1.ru_nivcsw - ru0.ru_nivcsw;
	return err;
}

/*
 * Wait (bounded) until @read's value has grown by @want from @base, or has
 * stopped moving for 5 ms. Returns the growth.
 */
static __u64 kp_settle(struct kp *kp, int (*read)(struct kp *, __u64 *),
		       __u64 base, __u64 want)
{
	__u64 cur = base, last = base;
	int i, still = 0;

	for (i = 0; i < KP_SETTLE_MS; i++) {
		if (read(kp, &cur))
			break;
		if (cur - base >= want || kp_signal)
			break;
		if (i && cur == last) {
			if (++still >= 5)
				break;
		} else {
			still = 0;
		}
		last = cur;
		kp_sleep_ms(1);
	}
	return cur - base;
}

static int kp_read_b_rx(struct kp *kp, __u64 *out)
{
	struct kp_vstats v;
	int err = kp_vstats(kp, &v);

	*out = v.b_rx;
	return err;
}

/* ---- the measurement ---------------------------------------------------- */

static int kp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void kp_summary(double *v, int n, double *med, double *min,
		       double *max)
{
	qsort(v, n, sizeof(*v), kp_cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int kp_inject_err(struct kp *kp, int err, const char *what)
{
	if (err == -EINTR || kp_signal)
		return kp_fail(kp, -EINTR, "interrupted by a signal (%s)",
			       what);
	if (err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */)
		return kp_fail(kp, err, "BPF_F_TEST_XDP_LIVE_FRAMES "
			       "unsupported (%s: %s)", what, strerror(-err));
	return kp_fail(kp, err, "test run failed (%s): %s", what,
		       strerror(-err));
}

static int kp_measure(struct kp *kp, __u64 frames, int runs)
{
	struct kpeer_veth_result *res = kp->res;
	double loop[KPEER_VETH_MAX_RUNS], gen[KPEER_VETH_MAX_RUNS];
	double hop[KPEER_VETH_MAX_RUNS], secs;
	__u64 warm = frames < KP_WARMUP ? frames : KP_WARMUP;
	__u64 c0, got, b0, b_tx = 0, b_tx_err = 0, a_xmit_err = 0;
	struct kp_vstats v0, v1;
	bool vs_ok = kp->estats_ok;
	int r, err;

	/* Warm-up, which also probes for live frames; not measured. */
	err = kp_inject(kp, kp->fd_gen_drop, warm, &secs);
	if (err)
		return kp_inject_err(kp, err, "generator only");
	err = kp_inject(kp, kp->fd_gen_redirect, warm, &secs);
	if (err)
		return kp_inject_err(kp, err, "loop");
	got = kp_settle(kp, kp_count, 0, warm);
	if (!got)
		return kp_fail(kp, -EIO, "no frame came back to vA in the "
			       "warm-up (%llu sent)", (unsigned long long)warm);

	kp->preempt = 0;
	for (r = 0; r < runs; r++) {
		if (kp_signal)
			return kp_fail(kp, -EINTR, "interrupted by a signal");

		/* Generator only. */
		err = kp_inject(kp, kp->fd_gen_drop, frames, &secs);
		if (err)
			return kp_inject_err(kp, err, "generator only");
		gen[r] = frames / secs / 1e6;

		/* One hop: vB drops. */
		err = kp_attach(kp, kp->if_b, kp->fd_b_drop, KP_IF_B);
		if (err)
			return err;
		if (vs_ok && kp_read_b_rx(kp, &b0))
			vs_ok = false;
		err = kp_inject(kp, kp->fd_gen_redirect, frames, &secs);
		if (err)
			return kp_inject_err(kp, err, "one hop");
		got = vs_ok ? kp_settle(kp, kp_read_b_rx, b0, frames) : frames;
		hop[r] = got / secs / 1e6;
		err = kp_attach(kp, kp->if_b, kp->fd_b_swap_tx, KP_IF_B);
		if (err)
			return err;

		/* The full loop. */
		if (vs_ok && kp_vstats(kp, &v0))
			vs_ok = false;
		if (kp_count(kp, &c0))
			return kp_fail(kp, -EIO, "cannot read the vA counter");
		err = kp_inject(kp, kp->fd_gen_redirect, frames, &secs);
		if (err)
			return kp_inject_err(kp, err, "loop");
		got = kp_settle(kp, kp_count, c0, frames);
		loop[r] = got / secs / 1e6;
		res->frames += frames;
		res->looped += got;
		if (vs_ok && !kp_vstats(kp, &v1)) {
			b_tx += v1.b_tx - v0.b_tx;
			b_tx_err += v1.b_tx_err - v0.b_tx_err;
			a_xmit_err += v1.a_xmit_err - v0.a_xmit_err;
		} else {
			vs_ok = false;
		}
		res->runs = r + 1;
	}

	kp_summary(loop, runs, &res->mpps_loop_median, &res->mpps_loop_min,
		   &res->mpps_loop_max);
	kp_summary(gen, runs, &res->mpps_gen_only_median,
		   &res->mpps_gen_only_min, &res->mpps_gen_only_max);
	kp_summary(hop, runs, &res->mpps_hop_median, &res->mpps_hop_min,
		   &res->mpps_hop_max);
	res->b_xdp_tx = vs_ok ? b_tx : UINT64_MAX;
	res->b_xdp_tx_errors = vs_ok ? b_tx_err : UINT64_MAX;
	res->a_xmit_errors = vs_ok ? a_xmit_err : UINT64_MAX;
	res->preemptions = kp->preempt;

	if (res->looped == res->frames)
		snprintf(res->note, sizeof(res->note), "ok: %llu/%llu frames "
			 "looped; cpu %d, batch %d, veth 1 queue, %d-byte "
			 "frames", (unsigned long long)res->looped,
			 (unsigned long long)res->frames, KP_CPU, KP_BATCH,
			 KP_FRAME_LEN);
	else
		snprintf(res->note, sizeof(res->note), "ok, with loss: "
			 "%llu/%llu frames looped (%llu lost: vA xmit errors "
			 "%llu, vB XDP_TX errors %llu)",
			 (unsigned long long)res->looped,
			 (unsigned long long)res->frames,
			 (unsigned long long)(res->frames - res->looped),
			 (unsigned long long)a_xmit_err,
			 (unsigned long long)b_tx_err);
	return 0;
}

/* ---- set-up and teardown ------------------------------------------------ */

static int kp_setup(struct kp *kp, const char *path)
{
	struct timeval tv = { .tv_sec = KP_NL_TIMEOUT_S };
	cpu_set_t one;
	int err;

	/* Everything below, and the softirqs it raises, on CPU 0. */
	if (sched_getaffinity(0, sizeof(kp->old_mask), &kp->old_mask))
		return kp_fail(kp, -errno, "sched_getaffinity: %s",
			       strerror(errno));
	CPU_ZERO(&one);
	CPU_SET(KP_CPU, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return kp_fail(kp, -errno, "cannot pin to CPU %d: %s", KP_CPU,
			       strerror(errno));
	kp->pinned = true;

	/* A fresh, unnamed namespace for this thread. */
	kp->orig_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (kp->orig_ns < 0)
		return kp_fail(kp, -errno, "cannot open this thread's netns: "
			       "%s", strerror(errno));
	if (unshare(CLONE_NEWNET))
		return kp_fail(kp, -errno, "unshare(CLONE_NEWNET): %s",
			       strerror(errno));
	kp->in_ns = true;

	kp->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (kp->nl < 0)
		return kp_fail(kp, -errno, "rtnetlink socket: %s",
			       strerror(errno));
	setsockopt(kp->nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	kp->ioc = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	err = kp_no_ipv6();
	if (err)
		return kp_fail(kp, err, "cannot disable IPv6 in the namespace: "
			       "%s", strerror(-err));
	err = kp_veth_add(kp);
	if (err)
		return kp_fail(kp, err, "cannot create the veth pair: %s",
			       strerror(-err));
	kp->veth = true;
	kp->if_a = if_nametoindex(KP_IF_A);
	kp->if_b = if_nametoindex(KP_IF_B);
	if (!kp->if_a || !kp->if_b)
		return kp_fail(kp, -ENODEV, "veth pair created but not found");
	err = kp_link_up(kp, kp->if_a);
	if (!err)
		err = kp_link_up(kp, kp->if_b);
	if (err)
		return kp_fail(kp, err, "cannot set the veth pair up: %s",
			       strerror(-err));

	kp->estats_ok = kp->ioc >= 0 &&
			!kp_estats_init(kp, KP_IF_A, &kp->es_a) &&
			!kp_estats_init(kp, KP_IF_B, &kp->es_b);

	err = kp_load(kp, path);
	if (err)
		return err;

	/* vB first: vA's xmit into vB's ring needs vB's NAPI, and back. */
	err = kp_attach(kp, kp->if_b, kp->fd_b_swap_tx, KP_IF_B);
	if (!err)
		err = kp_attach(kp, kp->if_a, kp->fd_a_count, KP_IF_A);
	return err;
}

/* Undo whatever kp_setup() did; safe at any point of it. */
static void kp_teardown(struct kp *kp)
{
	int err;

	if (kp->veth) {
		err = kp_link_del(kp, kp->if_a);	/* takes vB along */
		if (err && !kp->res->note[0])
			kp_fail(kp, err, "deleting the veth pair: %s",
				strerror(-err));
	}
	bpf_object__close(kp->obj);
	free(kp->percpu);
	kp_estats_free(&kp->es_a);
	kp_estats_free(&kp->es_b);
	if (kp->ioc >= 0)
		close(kp->ioc);
	if (kp->nl >= 0)
		close(kp->nl);
	if (kp->in_ns && setns(kp->orig_ns, CLONE_NEWNET)) {
		/* Cannot happen short of a kernel bug; say so loudly. */
		fprintf(stderr, "kpeer_veth: cannot return to the original "
			"network namespace: %s\n", strerror(errno));
	}
	if (kp->orig_ns >= 0)
		close(kp->orig_ns);
	if (kp->pinned)
		sched_setaffinity(0, sizeof(kp->old_mask), &kp->old_mask);
}

int kpeer_veth_run(const char *bpf_obj_path, uint64_t frames_per_run,
		   int runs, struct kpeer_veth_result *res)
{
	struct kp kp;
	int err, sig;

	if (!res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	res->cpu = KP_CPU;
	res->batch_size = KP_BATCH;
	memset(&kp, 0, sizeof(kp));
	kp.res = res;
	kp.orig_ns = kp.nl = kp.ioc = -1;

	if (!bpf_obj_path)
		return kp_fail(&kp, -EINVAL, "no BPF object path");
	if (!frames_per_run || frames_per_run > 0x7fffffff)
		return kp_fail(&kp, -EINVAL, "frames_per_run must be "
			       "1..2147483647");
	if (runs < 1 || runs > KPEER_VETH_MAX_RUNS)
		return kp_fail(&kp, -EINVAL, "runs must be 1..%d",
			       KPEER_VETH_MAX_RUNS);
	if (geteuid() != 0)
		return kp_fail(&kp, -EPERM, "not root");
	if (access(bpf_obj_path, R_OK))
		return kp_fail(&kp, -errno, "cannot read BPF object %s: %s",
			       bpf_obj_path, strerror(errno));

	kp_build_frame(kp.frame);
	kp_signal = 0;
	kp_sig_install(&kp);

	err = kp_setup(&kp, bpf_obj_path);
	if (!err && kp_signal)
		err = kp_fail(&kp, -EINTR, "interrupted by a signal");
	if (!err)
		err = kp_measure(&kp, frames_per_run, runs);
	kp_teardown(&kp);

	kp_sig_restore(&kp);
	sig = kp_signal;
	if (sig)
		raise(sig);	/* now with its own action, everything undone */
	return err;
}
