/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: queues of a Linux interface as a uxdp device, through the
 * kernel's AF_XDP sockets (include/uxdp/afxdp.h says what it does; this
 * comment says how).
 *
 * Buffers. The kernel's UMEM is a uxdp UMEM: the same area, registered
 * with xsk_umem__create(). Each queue has a uxdp pool over it. The pool's
 * own fill ring gets the queue's chunks once, at create; from then on the
 * poller takes buffers with uxdp_pool_alloc_batch() and posts their chunk
 * addresses on the KERNEL's fill ring, remembering each buffer by chunk
 * (held[]). An RX descriptor names a chunk; held[] gives back the buffer,
 * which must be one we posted (else the descriptor is counted and
 * skipped). The kernel puts the packet at chunk + headroom + 256, where
 * uxdp_buff_set_size() puts data too; a descriptor that says otherwise is
 * followed (within the chunk) rather than assumed.
 *
 * So the kernel's buffers are, to uxdp, buffers allocated to the driver:
 * in flight. Down closes the sockets, and every buffer in held[], in the
 * TX software ring and in the copy stash goes back to its pool; a device
 * that is down has 0 in flight (uxdp_dev_audit), and up binds again.
 *
 * Transmit. Under the queue's TX lock: a frame in this queue's UMEM goes
 * on the kernel's TX ring by address; another frame is copied into a
 * buffer from the stash (buffers of the queue's pool the poller keeps
 * topped up: only the pool's owner may allocate from it) and given back
 * at once. A software ring beside the TX ring remembers, in TX order, what
 * each descriptor was (a frame to return, or a stash buffer to put back);
 * completions come in that order. Copy-mode TX moves only when kicked
 * (sendto; need_wakeup is set on every check in copy mode) and at most 32
 * frames per kick, so the poller keeps kicking while the TX ring holds
 * frames the kernel has not taken, and keeps polling (rx_pending) while
 * frames are in flight, to reap their completions.
 *
 * Threads. The poller owns held[], the fill and RX rings and the pool; it
 * holds rx_lock for each poll, which stop takes too (a grace period already
 * separates them; the lock makes that visible to TSan and costs two
 * uncontended atomics per poll). TX ring, completion ring, software ring
 * and stash: tx_lock. Control paths (create, up, down, destroy, info):
 * afx_lock, one for the driver, which also guards the registries of
 * interfaces (one program and XSKMAP per interface, shared by every port
 * on it) and of shared-UMEM groups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/afxdp.h>
#include <uxdp/driver.h>
#include <uxdp/pool.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>

#ifdef UXDP_HAVE_AFXDP

#include <net/if.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/magic.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

/* The XDP program, built at build time from bpf/xsk_redirect.bpf.c. */
extern const unsigned char uxdp_afxdp_bpf_obj[];
extern const size_t uxdp_afxdp_bpf_obj_len;

#define AFX_PROG_NAME		"uxdp_xsk_redirect"
#define AFX_MAP_XSKS		"uxdp_xsks"
#define AFX_MAP_MISS		"uxdp_xsk_miss"

#define AFX_RX_BATCH		64	/* descriptors per RX peek */
#define AFX_FILL_BATCH		64	/* buffers per fill-ring post */
#define AFX_COMP_BATCH		64	/* completions per TX-lock hold */
/* Kicks per poll while the TX ring holds frames: copy mode moves at most
 * 32 per sendto(), so this is up to 256 frames a poll. */
#define AFX_KICK_ROUNDS		8
#define AFX_BIND_RETRY_MS	1000	/* EBUSY re-binds, total */
#define AFX_TX_DRAIN_MS		100	/* waiting for completions at close */
#define AFX_VLAN_ETH_HLEN	18	/* a frame is at most MTU + this */
#define AFX_MIN_MAP_ENTRIES	64
#define AFX_MAX_RING		(1U << 16)
#define AFX_MAX_FRAMES		(1U << 20)

#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/* ---- counters ------------------------------------------------------------ */

/*
 * One writer per counter (the poller, or whoever holds the TX lock) and
 * readers anywhere: relaxed loads and stores, as the pool's counters.
 * Kicks happen on any thread: those are atomic adds.
 */
static inline void st_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

static inline void st_inc_any(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static inline uint64_t st_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

struct afx_qstats {
	uint64_t rx_descs, rx_bad_descs, fill_posted, fill_short;
	uint64_t fill_kicks, rx_kicks;
	uint64_t tx_nocopy, tx_copy, tx_completed, tx_no_buffer;
	uint64_t comp_mismatch;
	uint64_t tx_kicks, tx_kick_again, tx_kick_errors;
};

/* ---- state --------------------------------------------------------------- */

/* A network namespace, by handle and identity. */
struct afx_ns {
	int fd;
	dev_t dev;
	ino_t ino;
};

/*
 * An interface some device binds: its XSKMAP and miss counters (made at
 * the first create), and the program, attached while a device on it is
 * up.
 */
struct afx_iface {
	struct afx_iface *next;
	dev_t ns_dev;
	ino_t ns_ino;
	int ifindex;
	char ifname[IF_NAMESIZE];
	int refs;			/* devices on it */
	int up;				/* devices up on it */
	int xsks_fd, miss_fd;
	uint32_t map_entries;
	int ncpus;
	/* While attached. */
	struct bpf_object *obj;
	struct xdp_program *xprog;	/* when libxdp attached it */
	int prog_fd;
	int link_fd;			/* bpf_link: the attachment */
	uint32_t prog_id;		/* ours (not a dispatcher's) */
	uint32_t attach;		/* enum uxdp_afxdp_attach */
	uint32_t xdp_flags;		/* XDP_FLAGS_DRV_MODE or _SKB_MODE */
	bool attached;
};

struct afx_q;

/*
 * A UMEM: one per queue, or one per shared group. Its kernel registration
 * (and every socket on it) lives while one of its queues is up.
 */
struct afx_umem {
	struct afx_umem *next;		/* groups only */
	char name[UXDP_AFXDP_GROUP_NAME_MAX + 1];	/* "": a queue's own */
	int refs;			/* queues over it, orphans included */
	struct uxdp_umem *umem;
	/* Groups: the UMEM's first pool, where chunks no queue has taken
	 * wait (on its fill ring), so every chunk is always somewhere. */
	struct uxdp_pool *reserve;
	bool retired;			/* a pool went with buffers out */
	char *area;
	uint64_t size;
	uint32_t nchunks, chunk_size, chunk_shift;
	uint32_t rx_size, tx_size;	/* fill = rx_size, comp = tx_size */
	/* Kernel side. */
	struct xsk_umem *kumem;
	/* The registration's own fill and completion rings: its first
	 * socket uses them (libxdp's rule), the others get their own. */
	struct xsk_ring_prod kfill;
	struct xsk_ring_cons kcomp;
	bool krings_taken;
	int nup;			/* queues up (in an XSKMAP) */
	struct afx_q *socks;		/* queues with a socket */
};

/* What a TX descriptor was: a frame (returned on completion) or, with
 * the low bit set, a stash buffer (put back). */
struct afx_txent {
	uintptr_t p;
	uint64_t addr;
};
#define AFX_TXENT_STASH	((uintptr_t)1)

struct afx_q {
	/* ---- Set at create. */
	struct uxdp_dev *dev;		/* NULL once destroyed (orphan) */
	struct afx_umem *um;
	struct afx_iface *ifc;
	struct uxdp_pool *pool;
	uint32_t idx, qid;
	uint32_t rx_size, tx_size;
	uint32_t bind_flags;
	uint32_t busy_budget;
	uint32_t max_len;		/* largest frame TX takes */
	uint64_t *chunks;		/* group: the chunks it took */
	uint32_t nchunks;
	int epfd;			/* rx_fd: the socket, once bound */
	struct afx_q *sock_next;	/* in um->socks */

	/* ---- The socket: control path (afx_lock). */
	struct xsk_socket *xsk;
	int fd;
	struct xsk_ring_cons xrx;
	struct xsk_ring_prod xtx;
	struct xsk_ring_prod xfill;	/* when not the registration's */
	struct xsk_ring_cons xcomp;
	bool mapped;			/* in the XSKMAP */
	bool zc;
	struct xdp_statistics kbase;	/* closed sockets' statistics */

	/* ---- The poller's (rx_lock). */
	struct uxdp_spinlock rx_lock __attribute__((aligned(UXDP_CACHE_LINE)));
	bool rx_ok;			/* socket open, device up */
	bool busy_poll, wakeup;
	struct uxdp_ring rx, fill;
	/*
	 * By chunk: posted to the kernel and not yet back. Not
	 * uxdp_pool_buff_at(): to the pool, "allocated" also covers the TX
	 * copy stash and buffers already received (in a program, in another
	 * device's TX ring, in a socket), so an RX descriptor the kernel got
	 * wrong (a chunk never posted, or one it gave back already) would
	 * hand such a buffer out a second time. held[] is also how down
	 * finds the kernel's share to take back.
	 */
	struct uxdp_buff **held;
	uint32_t nheld;			/* read relaxed by stats */
	uint32_t pool_dry;		/* last refill found the pool empty */
	uint32_t polled;		/* a poll ran: the pool has an owner */

	/* ---- Transmit (tx_lock). */
	struct uxdp_spinlock tx_lock __attribute__((aligned(UXDP_CACHE_LINE)));
	bool tx_ok;
	struct uxdp_ring tx, comp;
	struct afx_txent *sw;
	uint32_t sw_head, sw_tail;
	struct uxdp_buff **stash;
	uint32_t nstash;
	/* Mirrors for lock-free readers (rx_pending, the poller). */
	uint32_t inflight;		/* sw_head - sw_tail */
	uint32_t stash_cnt;		/* nstash */

	struct afx_qstats st;
};

struct afx_priv {
	struct afx_ns ns;
	struct afx_iface *ifc;
	struct afx_umem *group;		/* shared=, else NULL */
	char ifname[IF_NAMESIZE];
	uint32_t first, nq;
	uint32_t flags, busy_budget;
	uint32_t rx_size, tx_size, frames, chunk;
	uint32_t if_rxq, if_txq, mtu;
	bool up;
	struct afx_q **q;
};

static pthread_mutex_t afx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct afx_iface *afx_ifaces;
static struct afx_umem *afx_groups;

/* The (device, queue) this thread last polled: its XDP_TX goes out there. */
static __thread struct uxdp_dev *afx_tls_dev;
static __thread uint32_t afx_tls_q;

static const struct uxdp_dev_ops afx_ops;

static inline struct afx_priv *afx_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

/* ---- libbpf's and libxdp's own log lines --------------------------------- */

static int afx_debug = -1;

static bool afx_debugging(void)
{
	if (afx_debug < 0) {
		const char *e = getenv("UXDP_AFXDP_DEBUG");

		afx_debug = e && *e && *e != '0';
	}
	return afx_debug;
}

static void afx_fwd(const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	uxdp_pr(UXDP_WARN, "afxdp: %s", line);
}

static int afx_bpf_print(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	(void)level;
	if (afx_debugging())
		afx_fwd(fmt, ap);
	return 0;
}

static int afx_xdp_print(enum libxdp_print_level level, const char *fmt,
			 va_list ap)
{
	(void)level;
	if (afx_debugging())
		afx_fwd(fmt, ap);
	return 0;
}

/* Quiet libraries for the length of a control call (under afx_lock). */
struct afx_quiet {
	libbpf_print_fn_t bpf;
	libxdp_print_fn_t xdp;
};

static void afx_quiet_begin(struct afx_quiet *qt)
{
	qt->bpf = libbpf_set_print(afx_bpf_print);
	qt->xdp = libxdp_set_print(afx_xdp_print);
}

static void afx_quiet_end(struct afx_quiet *qt)
{
	libbpf_set_print(qt->bpf);
	libxdp_set_print(qt->xdp);
}

/* ---- namespaces ---------------------------------------------------------- */

static int afx_ns_self(struct afx_ns *ns)
{
	struct stat st;

	ns->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns->fd < 0)
		return -errno;
	if (fstat(ns->fd, &st)) {
		int err = -errno;

		close(ns->fd);
		ns->fd = -1;
		return err;
	}
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	return 0;
}

/*
 * Move the calling thread into @ns for a control call; *@saved is where
 * to go back to (-1: it was there already). Returns 0 or -errno.
 */
static int afx_ns_enter(const struct afx_ns *ns, struct afx_ns *saved)
{
	int err = afx_ns_self(saved);

	if (err)
		return uxdp_set_error(-err, "afxdp: cannot open this thread's "
				      "network namespace: %s", strerror(-err));
	if (saved->dev == ns->dev && saved->ino == ns->ino) {
		close(saved->fd);
		saved->fd = -1;
		return 0;
	}
	if (setns(ns->fd, CLONE_NEWNET)) {
		err = errno;
		close(saved->fd);
		saved->fd = -1;
		return uxdp_set_error(err, "afxdp: cannot enter the device's "
				      "network namespace: %s", strerror(err));
	}
	return 0;
}

static void afx_ns_leave(struct afx_ns *saved)
{
	if (saved->fd < 0)
		return;
	if (setns(saved->fd, CLONE_NEWNET))
		uxdp_pr(UXDP_WARN, "afxdp: cannot return to the thread's "
			"network namespace: %s\n", strerror(errno));
	close(saved->fd);
	saved->fd = -1;
}

/* ---- interface facts (ioctl, in the current namespace) ------------------- */

struct afx_ifinfo {
	int ifindex;
	bool up;
	uint32_t mtu;
	uint32_t rxq, txq;		/* 0: unknown */
	char driver[32];
};

static int afx_ifinfo(const char *ifname, struct afx_ifinfo *fi)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int s, err = 0;

	memset(fi, 0, sizeof(*fi));
	fi->ifindex = (int)if_nametoindex(ifname);
	if (!fi->ifindex)
		return -ENODEV;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0)
		fi->up = ifr.ifr_flags & IFF_UP;
	else
		err = -errno;
	if (!err && ioctl(s, SIOCGIFMTU, &ifr) == 0)
		fi->mtu = (uint32_t)ifr.ifr_mtu;
	else if (!err)
		err = -errno;
	/* Queue counts: what ethtool -l says. veth reports rx and tx
	 * counts, NICs mostly combined channels. Unknown stays 0. */
	ifr.ifr_data = (void *)&ch;
	if (!err && ioctl(s, SIOCETHTOOL, &ifr) == 0) {
		fi->rxq = ch.rx_count + ch.combined_count;
		fi->txq = ch.tx_count + ch.combined_count;
	}
	ifr.ifr_data = (void *)&di;
	if (!err && ioctl(s, SIOCETHTOOL, &ifr) == 0)
		snprintf(fi->driver, sizeof(fi->driver), "%s", di.driver);
	close(s);
	return err;
}

static bool afx_bpffs_mounted(void)
{
	struct statfs sf;

	return !statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC;
}

/* ---- the interface registry: maps and the program ------------------------ */

static struct afx_iface *afx_iface_find(const struct afx_ns *ns, int ifindex)
{
	struct afx_iface *i;

	for (i = afx_ifaces; i; i = i->next)
		if (i->ns_dev == ns->dev && i->ns_ino == ns->ino &&
		    i->ifindex == ifindex)
			return i;
	return NULL;
}

static void afx_iface_free(struct afx_iface *ifc)
{
	if (ifc->xsks_fd >= 0)
		close(ifc->xsks_fd);
	if (ifc->miss_fd >= 0)
		close(ifc->miss_fd);
	free(ifc);
}

/* The interface's entry, made with its maps on first use (in its ns). */
static int afx_iface_get(const struct afx_ns *ns, const char *ifname,
			 int ifindex, uint32_t rxq, struct afx_iface **out)
{
	struct afx_iface *ifc = afx_iface_find(ns, ifindex);
	int err;

	if (ifc) {
		ifc->refs++;
		*out = ifc;
		return 0;
	}
	ifc = calloc(1, sizeof(*ifc));
	if (!ifc)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	ifc->ns_dev = ns->dev;
	ifc->ns_ino = ns->ino;
	ifc->ifindex = ifindex;
	snprintf(ifc->ifname, sizeof(ifc->ifname), "%s", ifname);
	ifc->prog_fd = -1;
	ifc->link_fd = -1;
	ifc->map_entries = MAX(rxq, AFX_MIN_MAP_ENTRIES);
	ifc->ncpus = libbpf_num_possible_cpus();
	if (ifc->ncpus <= 0)
		ifc->ncpus = 1;
	ifc->xsks_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, AFX_MAP_XSKS,
				      sizeof(uint32_t), sizeof(uint32_t),
				      ifc->map_entries, NULL);
	ifc->miss_fd = -1;
	if (ifc->xsks_fd >= 0)
		ifc->miss_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY,
					      AFX_MAP_MISS, sizeof(uint32_t),
					      sizeof(uint64_t),
					      ifc->map_entries, NULL);
	if (ifc->xsks_fd < 0 || ifc->miss_fd < 0) {
		err = -errno;
		afx_iface_free(ifc);
		if (err == -EPERM || err == -EACCES)
			return uxdp_set_error(EPERM, "afxdp: not permitted to "
					      "create BPF maps: run as root "
					      "(CAP_BPF and CAP_NET_ADMIN)");
		return uxdp_set_error(-err, "afxdp: cannot create the XSKMAP: "
				      "%s", strerror(-err));
	}
	ifc->refs = 1;
	ifc->next = afx_ifaces;
	afx_ifaces = ifc;
	*out = ifc;
	return 0;
}

static void afx_iface_put(struct afx_iface *ifc)
{
	struct afx_iface **pp;

	if (!ifc || --ifc->refs)
		return;
	for (pp = &afx_ifaces; *pp; pp = &(*pp)->next)
		if (*pp == ifc) {
			*pp = ifc->next;
			break;
		}
	afx_iface_free(ifc);
}

/* Packets passed for lack of a socket on queue @qid (all CPUs). */
static uint64_t afx_iface_miss(const struct afx_iface *ifc, uint32_t qid)
{
	uint64_t vals[ifc->ncpus], sum = 0;
	int i;

	if (qid >= ifc->map_entries ||
	    bpf_map_lookup_elem(ifc->miss_fd, &qid, vals))
		return 0;
	for (i = 0; i < ifc->ncpus; i++)
		sum += vals[i];
	return sum;
}

/* A fresh object from the embedded bytes, its maps ours. */
static struct bpf_object *afx_obj_open(struct afx_iface *ifc)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "uxdp_afxdp");
	struct bpf_object *obj;
	struct bpf_map *m;
	int err;

	obj = bpf_object__open_mem(uxdp_afxdp_bpf_obj, uxdp_afxdp_bpf_obj_len,
				   &oo);
	if (!obj)
		return NULL;
	m = bpf_object__find_map_by_name(obj, AFX_MAP_XSKS);
	err = m ? bpf_map__reuse_fd(m, ifc->xsks_fd) : -ENOENT;
	m = bpf_object__find_map_by_name(obj, AFX_MAP_MISS);
	if (!err)
		err = m ? bpf_map__reuse_fd(m, ifc->miss_fd) : -ENOENT;
	if (err) {
		bpf_object__close(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static uint32_t afx_prog_id(int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * How to attach, for tests: UXDP_AFXDP_ATTACH=libxdp (keep libxdp's single
 * program too), =netlink (bpf_xdp_attach only); default: see
 * afx_iface_attach().
 */
enum { AFX_ATTACH_AUTO, AFX_ATTACH_FORCE_LIBXDP, AFX_ATTACH_FORCE_NETLINK };

static int afx_attach_policy(void)
{
	const char *e = getenv("UXDP_AFXDP_ATTACH");

	if (e && !strcmp(e, "libxdp"))
		return AFX_ATTACH_FORCE_LIBXDP;
	if (e && !strcmp(e, "netlink"))
		return AFX_ATTACH_FORCE_NETLINK;
	return AFX_ATTACH_AUTO;
}

static void afx_attach_undo(struct afx_iface *ifc)
{
	if (ifc->xprog)
		xdp_program__close(ifc->xprog);
	bpf_object__close(ifc->obj);
	ifc->xprog = NULL;
	ifc->obj = NULL;
	ifc->prog_fd = -1;
	ifc->prog_id = 0;
	ifc->attach = UXDP_AFXDP_ATTACH_NONE;
}

/*
 * libxdp: worth it for its multi-program dispatcher, which lets other
 * programs share the interface. When the dispatcher cannot be used
 * (no bpffs, or a kernel it fails on) libxdp attaches our program alone
 * over netlink; unless asked to keep that, it is undone here and a
 * bpf_link used instead, which the kernel detaches however we exit.
 */
static int afx_attach_libxdp(struct afx_iface *ifc, uint32_t xdp_flags,
			     bool keep_single)
{
	enum xdp_attach_mode mode = xdp_flags & XDP_FLAGS_SKB_MODE ?
				    XDP_MODE_SKB : XDP_MODE_NATIVE;
	LIBBPF_OPTS(bpf_xdp_query_opts, qo);
	struct xdp_program *xp;
	struct bpf_object *obj;
	int err;

	obj = afx_obj_open(ifc);
	if (!obj)
		return -errno;
	{
		DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .obj = obj,
				    .prog_name = AFX_PROG_NAME);

		xp = xdp_program__create(&xo);
	}
	err = libxdp_get_error(xp);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	err = xdp_program__attach(xp, ifc->ifindex, mode, 0);
	if (err) {
		xdp_program__close(xp);
		bpf_object__close(obj);
		return err;
	}
	ifc->obj = obj;
	ifc->xprog = xp;
	ifc->prog_fd = xdp_program__fd(xp);
	ifc->prog_id = xdp_program__id(xp);
	ifc->xdp_flags = xdp_flags;
	/* The interface runs a dispatcher that calls our program, or our
	 * program itself. */
	if (!bpf_xdp_query(ifc->ifindex, 0, &qo) && qo.prog_id &&
	    qo.prog_id != ifc->prog_id) {
		ifc->attach = UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER;
		return 0;
	}
	ifc->attach = UXDP_AFXDP_ATTACH_LIBXDP_SINGLE;
	if (keep_single)
		return 0;
	xdp_program__detach(xp, ifc->ifindex, mode, 0);
	afx_attach_undo(ifc);
	return -ENOTSUP;
}

/* libbpf: our program, loaded as plain XDP. */
static int afx_load_plain(struct afx_iface *ifc)
{
	struct bpf_program *p;
	int err;

	ifc->obj = afx_obj_open(ifc);
	if (!ifc->obj)
		return -errno;
	err = bpf_object__load(ifc->obj);
	p = bpf_object__find_program_by_name(ifc->obj, AFX_PROG_NAME);
	ifc->prog_fd = !err && p ? bpf_program__fd(p) : -1;
	if (ifc->prog_fd < 0) {
		afx_attach_undo(ifc);
		return err ? err : -ENOENT;
	}
	ifc->prog_id = afx_prog_id(ifc->prog_fd);
	return 0;
}

/*
 * A bpf_link: the attachment is a file descriptor, and the kernel
 * detaches the program when it closes, also when the process dies of
 * SIGINT or SIGKILL. Fails with EBUSY if a program is attached already.
 */
static int afx_attach_link(struct afx_iface *ifc, uint32_t xdp_flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = xdp_flags);
	int err = afx_load_plain(ifc);

	if (err)
		return err;
	ifc->link_fd = bpf_link_create(ifc->prog_fd, ifc->ifindex, BPF_XDP,
				       &lo);
	if (ifc->link_fd < 0) {
		err = ifc->link_fd;
		ifc->link_fd = -1;
		afx_attach_undo(ifc);
		return err;
	}
	ifc->xdp_flags = xdp_flags;
	ifc->attach = UXDP_AFXDP_ATTACH_LIBBPF_LINK;
	return 0;
}

/* Netlink (bpf_xdp_attach), only if the interface runs no program. */
static int afx_attach_netlink(struct afx_iface *ifc, uint32_t xdp_flags)
{
	int err = afx_load_plain(ifc);

	if (err)
		return err;
	err = bpf_xdp_attach(ifc->ifindex, ifc->prog_fd,
			     xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		afx_attach_undo(ifc);
		return err;
	}
	ifc->xdp_flags = xdp_flags;
	ifc->attach = UXDP_AFXDP_ATTACH_LIBBPF;
	return 0;
}

/*
 * Attach: native first (unless generic only), then generic (unless
 * native only). In each mode: libxdp's dispatcher when bpffs is there
 * for it, else a bpf_link, else netlink. Called in the interface's
 * namespace. Returns 0 or -errno with a message.
 */
static int afx_iface_attach(struct afx_iface *ifc, uint32_t flags)
{
	static const uint32_t modes[2] = { XDP_FLAGS_DRV_MODE,
					   XDP_FLAGS_SKB_MODE };
	int policy = afx_attach_policy();
	bool use_libxdp = policy == AFX_ATTACH_FORCE_LIBXDP ||
			  (policy == AFX_ATTACH_AUTO && afx_bpffs_mounted());
	int err = 0, first_err = 0, m;

	if (ifc->attached)
		return 0;
	for (m = 0; m < 2; m++) {
		if ((m == 0 && (flags & UXDP_AFXDP_F_GENERIC)) ||
		    (m == 1 && (flags & UXDP_AFXDP_F_NATIVE)))
			continue;
		err = -ENOTSUP;
		if (use_libxdp)
			err = afx_attach_libxdp(ifc, modes[m], policy ==
						AFX_ATTACH_FORCE_LIBXDP);
		if (err && policy == AFX_ATTACH_AUTO)
			err = afx_attach_link(ifc, modes[m]);
		/* Kernels before 5.9 have no XDP links. */
		if (err && err != -EBUSY && err != -EEXIST && err != -EPERM &&
		    policy != AFX_ATTACH_FORCE_LIBXDP)
			err = afx_attach_netlink(ifc, modes[m]);
		if (!err)
			break;
		if (!first_err)
			first_err = err;
		/* Someone else's program: no mode will do. */
		if (err == -EBUSY || err == -EEXIST || err == -EPERM)
			break;
	}
	if (err) {
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);

		if (err == -EPERM || err == -EACCES)
			return uxdp_set_error(EPERM, "afxdp %s: not permitted "
					      "to load or attach XDP programs: "
					      "run as root (CAP_BPF, "
					      "CAP_NET_ADMIN)", ifc->ifname);
		if ((err == -EBUSY || err == -EEXIST) &&
		    !bpf_xdp_query(ifc->ifindex, 0, &qo) && qo.prog_id)
			return uxdp_set_error(EBUSY, "afxdp %s: the interface "
					      "runs XDP program id %u, not "
					      "ours and not libxdp's: "
					      "detach it first (ip link set "
					      "dev %s xdp off)", ifc->ifname,
					      qo.prog_id, ifc->ifname);
		return uxdp_set_error(EOPNOTSUPP, "afxdp %s: cannot attach "
				      "the XDP program in %s mode: %s",
				      ifc->ifname,
				      flags & UXDP_AFXDP_F_NATIVE ? "native" :
				      flags & UXDP_AFXDP_F_GENERIC ? "generic" :
				      "native or generic",
				      strerror(-(first_err ? first_err : err)));
	}
	ifc->attached = true;
	return 0;
}

/* Detach our program, and only ours (in the interface's namespace). */
static void afx_iface_detach(struct afx_iface *ifc)
{
	int err = 0;

	if (!ifc->attached)
		return;
	if (ifc->attach == UXDP_AFXDP_ATTACH_LIBBPF_LINK) {
		/* The link is the attachment: closing it detaches exactly
		 * what we attached. */
		close(ifc->link_fd);
		ifc->link_fd = -1;
	} else if (ifc->xprog) {
		enum xdp_attach_mode mode = XDP_MODE_NATIVE;

		if (ifc->xdp_flags & XDP_FLAGS_SKB_MODE)
			mode = XDP_MODE_SKB;
		err = xdp_program__detach(ifc->xprog, ifc->ifindex, mode, 0);
		if (err)
			uxdp_pr(UXDP_WARN, "afxdp %s: libxdp could not detach "
				"our program: %s\n", ifc->ifname,
				strerror(-err));
	} else {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao,
			    .old_prog_fd = ifc->prog_fd);
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);

		err = bpf_xdp_query(ifc->ifindex, (int)ifc->xdp_flags, &qo);
		/* REPLACE with old_prog_fd: the kernel detaches only if the
		 * program there is still ours. */
		if (!err && qo.prog_id == ifc->prog_id)
			err = bpf_xdp_detach(ifc->ifindex, ifc->xdp_flags |
					     XDP_FLAGS_REPLACE, &ao);
		else if (!err && qo.prog_id)
			uxdp_pr(UXDP_WARN, "afxdp %s: the interface runs "
				"program id %u, not ours (%u): left alone\n",
				ifc->ifname, qo.prog_id, ifc->prog_id);
		if (err && err != -ENODEV)
			uxdp_pr(UXDP_WARN, "afxdp %s: detaching our program: "
				"%s\n", ifc->ifname, strerror(-err));
	}
	afx_attach_undo(ifc);
	ifc->attached = false;
}

/* ---- UMEMs --------------------------------------------------------------- */

static struct afx_umem *afx_group_find(const char *name)
{
	struct afx_umem *um;

	for (um = afx_groups; um; um = um->next)
		if (!strcmp(um->name, name))
			return um;
	return NULL;
}

static struct afx_umem *afx_umem_new(const char *name, uint32_t nchunks,
				     uint32_t chunk, uint32_t rx_size,
				     uint32_t tx_size)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = chunk);
	struct afx_umem *um = calloc(1, sizeof(*um));

	if (!um) {
		uxdp_set_error(ENOMEM, "afxdp: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(um->name, sizeof(um->name), "%s", name ? name : "");
	um->nchunks = nchunks;
	um->chunk_size = chunk;
	um->chunk_shift = (uint32_t)__builtin_ctz(chunk);
	um->rx_size = rx_size;
	um->tx_size = tx_size;
	um->size = (uint64_t)nchunks * chunk;
	/* uxdp maps the area (page aligned) and unmaps it when the UMEM
	 * goes, which is after the kernel has let go of it. */
	um->umem = uxdp_umem_create(NULL, um->size, &uo);
	if (!um->umem) {
		int err = errno;

		free(um);
		errno = err;
		return NULL;
	}
	um->area = uxdp_umem_area(um->umem);
	return um;
}

/*
 * The UMEM's end, once no queue uses it. Pools retired with buffers out
 * destroy it themselves when the last comes home (RETIRE_UMEM).
 */
static void afx_umem_free(struct afx_umem *um)
{
	struct afx_umem **pp;

	for (pp = &afx_groups; *pp; pp = &(*pp)->next)
		if (*pp == um) {
			*pp = um->next;
			break;
		}
	if (um->reserve) {
		uxdp_pool_set_owner(um->reserve);
		if (um->retired)
			uxdp_pool_retire(um->reserve, UXDP_POOL_RETIRE_UMEM);
		else if (!uxdp_pool_destroy(um->reserve))
			uxdp_umem_destroy(um->umem);
	} else if (!um->retired) {
		uxdp_umem_destroy(um->umem);
	}
	free(um);
}

/*
 * Give @q @n chunks of its group's UMEM: taken from the reserve pool
 * (allocated, then released: the application's again) and posted on
 * @q's pool's fill ring. All or nothing.
 */
static int afx_group_take(struct afx_umem *um, struct afx_q *q, uint32_t n)
{
	struct uxdp_ring *rfq = uxdp_pool_fill_ring(um->reserve);
	struct uxdp_ring *fq = uxdp_pool_fill_ring(q->pool);
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t got = 0, k, idx;

	q->chunks = calloc(n, sizeof(*q->chunks));
	if (!q->chunks)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	uxdp_pool_set_owner(um->reserve);
	while (got < n) {
		k = uxdp_pool_alloc_batch(um->reserve, bufs,
					  MIN(n - got, AFX_FILL_BATCH));
		if (!k)
			break;
		while (k--) {
			q->chunks[got++] = uxdp_buff_chunk_addr(bufs[k]);
			uxdp_pool_release(bufs[k]);
		}
	}
	if (got == n && uxdp_ring_prod_reserve(fq, n, &idx)) {
		uxdp_ring_prod_write_addrs(fq, idx, q->chunks, n);
		uxdp_ring_prod_submit(fq, n);
		q->nchunks = n;
		return 0;
	}
	/* Back where they were: on the reserve's fill ring, which has room
	 * for every chunk. */
	if (got && uxdp_ring_prod_reserve(rfq, got, &idx)) {
		uxdp_ring_prod_write_addrs(rfq, idx, q->chunks, got);
		uxdp_ring_prod_submit(rfq, got);
	}
	free(q->chunks);
	q->chunks = NULL;
	return uxdp_set_error(ENOSPC, "afxdp: shared UMEM '%s' has %u free "
			      "chunks; a queue needs %u (a bigger "
			      "group_frames= on its first port, or fewer "
			      "frames=)", um->name, got, n);
}

/* A queue's chunks back to the group's reserve (its pool is gone). */
static void afx_group_give_back(struct afx_umem *um, struct afx_q *q)
{
	struct uxdp_ring *rfq = uxdp_pool_fill_ring(um->reserve);
	uint32_t idx;

	if (q->nchunks && uxdp_ring_prod_reserve(rfq, q->nchunks, &idx)) {
		uxdp_ring_prod_write_addrs(rfq, idx, q->chunks, q->nchunks);
		uxdp_ring_prod_submit(rfq, q->nchunks);
	}
}

/* ---- queue memory -------------------------------------------------------- */

static void afx_q_free(struct afx_q *q)
{
	if (!q)
		return;
	if (q->epfd >= 0)
		close(q->epfd);
	free(q->held);
	free(q->sw);
	free(q->stash);
	free(q->chunks);
	free(q);
}

/*
 * The queue's pool, its end: destroyed if every buffer is home (a group
 * then takes its chunks back), else retired to go when they are.
 */
static void afx_q_pool_end(struct afx_q *q)
{
	struct afx_umem *um = q->um;

	if (!q->pool)
		return;
	if (!uxdp_pool_destroy(q->pool)) {
		if (um->reserve)
			afx_group_give_back(um, q);
	} else {
		um->retired = true;
		uxdp_pool_retire(q->pool, UXDP_POOL_RETIRE_UMEM);
	}
	q->pool = NULL;
}

/* A queue's UMEM reference, dropped (freeing the UMEM at the last). */
static void afx_q_umem_put(struct afx_q *q)
{
	struct afx_umem *um = q->um;

	q->um = NULL;
	if (um && !--um->refs)
		afx_umem_free(um);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1U << 31))
		p <<= 1;
	return p;
}

static int afx_q_create(struct uxdp_dev *dev, uint32_t i)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_umem *um = priv->group;
	struct afx_q *q;
	int err;

	q = calloc(1, sizeof(*q));
	if (!q)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	priv->q[i] = q;
	q->dev = dev;
	q->idx = i;
	q->qid = priv->first + i;
	q->fd = -1;
	q->epfd = -1;
	q->ifc = priv->ifc;
	q->rx_size = priv->rx_size;
	q->tx_size = priv->tx_size;
	q->busy_budget = priv->busy_budget;
	q->max_len = priv->mtu + AFX_VLAN_ETH_HLEN;
	q->wakeup = !(priv->flags & UXDP_AFXDP_F_NO_NEED_WAKEUP);
	q->bind_flags = q->wakeup ? XDP_USE_NEED_WAKEUP : 0;
	if (priv->flags & UXDP_AFXDP_F_COPY)
		q->bind_flags |= XDP_COPY;
	if (priv->flags & UXDP_AFXDP_F_ZEROCOPY)
		q->bind_flags |= XDP_ZEROCOPY;
	uxdp_spin_init(&q->rx_lock);
	uxdp_spin_init(&q->tx_lock);
	/* The poll group waits on this: stable for the device's life,
	 * while sockets come and go with up and down. */
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return uxdp_set_error(errno, "afxdp: epoll_create1: %s",
				      strerror(errno));

	if (um) {
		um->refs++;
		q->um = um;
	} else {
		um = afx_umem_new(NULL, priv->frames, priv->chunk,
				  priv->rx_size, priv->tx_size);
		if (!um)
			return -errno;
		um->refs = 1;
		q->um = um;
	}
	if (um->reserve) {
		UXDP_DECLARE_OPTS(uxdp_pool_opts, po,
				  .fill_size = pow2_at_least(priv->frames),
				  .comp_size = 64);

		q->pool = uxdp_pool_create(um->umem, &po);
		if (!q->pool)
			return -errno;
		err = afx_group_take(um, q, priv->frames);
		if (err)
			return err;
	} else {
		q->pool = uxdp_pool_create(um->umem, NULL);
		if (!q->pool)
			return -errno;
		err = uxdp_umem_fill_all(um->umem);
		if (err < 0)
			return err;
	}
	uxdp_rxq_use_pool(dev, i, q->pool);

	q->held = calloc(um->nchunks, sizeof(*q->held));
	q->sw = calloc(q->tx_size, sizeof(*q->sw));
	q->stash = calloc(q->tx_size, sizeof(*q->stash));
	if (!q->held || !q->sw || !q->stash)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	return 0;
}

/* ---- sockets ------------------------------------------------------------- */

static int afx_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

static uint64_t afx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void afx_kst_add(struct xdp_statistics *a,
			const struct xdp_statistics *b)
{
	a->rx_dropped += b->rx_dropped;
	a->rx_invalid_descs += b->rx_invalid_descs;
	a->tx_invalid_descs += b->tx_invalid_descs;
	a->rx_ring_full += b->rx_ring_full;
	a->rx_fill_ring_empty_descs += b->rx_fill_ring_empty_descs;
	a->tx_ring_empty_descs += b->tx_ring_empty_descs;
}

static int afx_kst_read(const struct afx_q *q, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	if (q->fd < 0)
		return -ENOTCONN;
	if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, st, &len))
		return -errno;
	return 0;
}

/* A uxdp ring handle over a ring libxdp mapped. */
static void afx_ring_attach(struct uxdp_ring *r, void *desc, uint32_t size,
			    const struct xdp_ring_offset *off, bool prod)
{
	struct uxdp_ring_offsets o = {
		.producer = off->producer, .consumer = off->consumer,
		.desc = off->desc, .flags = off->flags,
	};
	void *mem = (char *)desc - off->desc;

	if (prod)
		uxdp_ring_init_prod(r, mem, size, &o);
	else
		uxdp_ring_init_cons(r, mem, size, &o);
}

static int afx_setsockopt_int(int fd, int opt, int val)
{
	return setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)) ? -errno : 0;
}

/* Register @um with the kernel, if it is not (in the device's ns). */
static int afx_umem_register(struct afx_umem *um)
{
	struct xsk_umem_config cfg = {
		.fill_size = um->rx_size,
		.comp_size = um->tx_size,
		.frame_size = um->chunk_size,
		.frame_headroom = uxdp_umem_headroom(um->umem),
		.flags = 0,
	};
	int err;

	if (um->kumem)
		return 0;
	err = xsk_umem__create(&um->kumem, um->area, um->size, &um->kfill,
			       &um->kcomp, &cfg);
	if (!err)
		return 0;
	um->kumem = NULL;
	if (err == -EPERM || err == -EACCES)
		return uxdp_set_error(EPERM, "afxdp: not permitted to create "
				      "AF_XDP sockets: run as root "
				      "(CAP_NET_RAW)");
	if (err == -ENOBUFS || err == -ENOMEM)
		return uxdp_set_error(ENOBUFS, "afxdp: the kernel could not "
				      "pin the %llu-byte UMEM: raise "
				      "RLIMIT_MEMLOCK (ulimit -l) or use "
				      "fewer frames=",
				      (unsigned long long)um->size);
	return uxdp_set_error(-err, "afxdp: XDP_UMEM_REG: %s", strerror(-err));
}

static void afx_sock_close(struct afx_q *q);

/* Drop @um's kernel registration if no socket is on it. */
static void afx_umem_unregister_idle(struct afx_umem *um)
{
	if (um->socks || !um->kumem)
		return;
	xsk_umem__delete(um->kumem);
	um->kumem = NULL;
	um->krings_taken = false;
}

/*
 * Bind @q's socket. A queue whose last socket closed a moment ago may
 * still be held by the kernel (the release is deferred): EBUSY, retried
 * with backoff for up to AFX_BIND_RETRY_MS.
 */
static int afx_sock_open(struct afx_q *q, const char *ifname)
{
	struct afx_umem *um = q->um;
	struct xsk_socket_config cfg = {
		.rx_size = q->rx_size,
		.tx_size = q->tx_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = (uint16_t)q->bind_flags,
	};
	struct xsk_ring_prod *fill;
	struct xsk_ring_cons *comp;
	struct xdp_mmap_offsets off;
	struct xdp_options xo;
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len;
	uint64_t t0 = afx_now_ms();
	long backoff = 1;
	bool first;
	int err;

	err = afx_umem_register(um);
	if (err)
		return err;
	first = !um->krings_taken;
	fill = first ? &um->kfill : &q->xfill;
	comp = first ? &um->kcomp : &q->xcomp;
	for (;;) {
		err = xsk_socket__create_shared(&q->xsk, ifname, q->qid,
						um->kumem, &q->xrx, &q->xtx,
						fill, comp, &cfg);
		if (err != -EBUSY || afx_now_ms() - t0 >= AFX_BIND_RETRY_MS)
			break;
		afx_sleep_ms(backoff);
		backoff = MIN(backoff * 2, 64);
	}
	if (err) {
		q->xsk = NULL;
		afx_umem_unregister_idle(um);
		if (err == -EBUSY)
			return uxdp_set_error(EBUSY, "afxdp %s: queue %u is "
					      "busy: another AF_XDP socket is "
					      "bound to it (retried for %d ms)",
					      ifname, q->qid,
					      AFX_BIND_RETRY_MS);
		if ((err == -EOPNOTSUPP || err == -EPROTONOSUPPORT) &&
		    (q->bind_flags & XDP_ZEROCOPY))
			return uxdp_set_error(EOPNOTSUPP, "afxdp %s: no "
					      "zero-copy AF_XDP on this "
					      "interface (use copy, or leave "
					      "the choice to the kernel)",
					      ifname);
		if (err == -EINVAL)
			return uxdp_set_error(EINVAL, "afxdp %s: the kernel "
					      "refused to bind queue %u "
					      "(queue out of range, or a ring "
					      "size it does not take)", ifname,
					      q->qid);
		return uxdp_set_error(-err, "afxdp %s: AF_XDP socket on queue "
				      "%u: %s", ifname, q->qid,
				      strerror(-err));
	}
	if (first)
		um->krings_taken = true;
	q->fd = xsk_socket__fd(q->xsk);
	q->sock_next = um->socks;
	um->socks = q;

	len = sizeof(off);
	if (getsockopt(q->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len)) {
		err = uxdp_set_error(errno, "afxdp: XDP_MMAP_OFFSETS: %s",
				     strerror(errno));
		goto abort;
	}
	afx_ring_attach(&q->rx, q->xrx.ring, q->rx_size, &off.rx, false);
	afx_ring_attach(&q->tx, q->xtx.ring, q->tx_size, &off.tx, true);
	afx_ring_attach(&q->fill, fill->ring, um->rx_size, &off.fr, true);
	afx_ring_attach(&q->comp, comp->ring, um->tx_size, &off.cr, false);

	len = sizeof(xo);
	q->zc = !getsockopt(q->fd, SOL_XDP, XDP_OPTIONS, &xo, &len) &&
		(xo.flags & XDP_OPTIONS_ZEROCOPY);
	if (q->busy_budget) {
		err = afx_setsockopt_int(q->fd, SO_PREFER_BUSY_POLL, 1);
		if (!err)
			err = afx_setsockopt_int(q->fd, SO_BUSY_POLL, 20);
		if (!err)
			err = afx_setsockopt_int(q->fd, SO_BUSY_POLL_BUDGET,
						 (int)q->busy_budget);
		if (err) {
			err = uxdp_set_error(-err, "afxdp %s: busy polling "
					     "(SO_PREFER_BUSY_POLL, "
					     "SO_BUSY_POLL_BUDGET %u): %s",
					     ifname, q->busy_budget,
					     strerror(-err));
			goto abort;
		}
		q->busy_poll = true;
	}
	ev.data.u32 = q->idx;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->fd, &ev)) {
		err = uxdp_set_error(errno, "afxdp: epoll_ctl: %s",
				     strerror(errno));
		goto abort;
	}
	return 0;
abort:
	afx_sock_close(q);
	afx_umem_unregister_idle(um);
	return err;
}

/* Return @n buffers of @q's pool from any thread. */
static void afx_return_bufs(struct afx_q *q, struct uxdp_buff **bufs,
			    uint32_t n)
{
	if (n)
		uxdp_pool_free_remote(q->pool, bufs, n);
}

static uint32_t afx_tx_reap(struct afx_q *q);

/*
 * Close @q's socket and give back every buffer the kernel held: posted
 * on the fill ring or waiting on the RX ring (held[]), in flight on TX
 * (the software ring), and the copy stash. Waits a little for TX
 * completions first, so frames in flight go home through them.
 */
static void afx_sock_close(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	struct uxdp_frame *frames[AFX_FILL_BATCH];
	struct xdp_statistics kst;
	struct afx_q **pp;
	uint64_t t0 = afx_now_ms();
	uint32_t i, n = 0, nf = 0;

	if (!q->xsk)
		return;
	while (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED) &&
	       afx_now_ms() - t0 < AFX_TX_DRAIN_MS) {
		if (uxdp_ring_count(&q->tx))
			sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		if (!afx_tx_reap(q))
			afx_sleep_ms(1);
	}
	if (!afx_kst_read(q, &kst))
		afx_kst_add(&q->kbase, &kst);
	epoll_ctl(q->epfd, EPOLL_CTL_DEL, q->fd, NULL);
	xsk_socket__delete(q->xsk);
	q->xsk = NULL;
	q->fd = -1;
	q->zc = false;
	q->busy_poll = false;
	for (pp = &q->um->socks; *pp; pp = &(*pp)->sock_next)
		if (*pp == q) {
			*pp = q->sock_next;
			break;
		}

	/* The kernel's part of the buffers is ours again. */
	for (i = 0; i < q->um->nchunks; i++) {
		if (!q->held[i])
			continue;
		bufs[n++] = q->held[i];
		q->held[i] = NULL;
		if (n == AFX_FILL_BATCH) {
			afx_return_bufs(q, bufs, n);
			n = 0;
		}
	}
	afx_return_bufs(q, bufs, n);
	__atomic_store_n(&q->nheld, 0, __ATOMIC_RELAXED);
	n = 0;
	for (; q->sw_tail != q->sw_head; q->sw_tail++) {
		struct afx_txent *e = &q->sw[q->sw_tail & (q->tx_size - 1)];

		if (e->p & AFX_TXENT_STASH) {
			q->stash[q->nstash++] = (struct uxdp_buff *)
						(e->p & ~AFX_TXENT_STASH);
		} else {
			frames[nf++] = (struct uxdp_frame *)e->p;
			if (nf == AFX_FILL_BATCH) {
				uxdp_frame_return_bulk(frames, nf);
				nf = 0;
			}
		}
	}
	uxdp_frame_return_bulk(frames, nf);
	__atomic_store_n(&q->inflight, 0, __ATOMIC_RELAXED);
	while (q->nstash) {
		n = MIN(q->nstash, (uint32_t)AFX_FILL_BATCH);
		q->nstash -= n;
		afx_return_bufs(q, &q->stash[q->nstash], n);
	}
	__atomic_store_n(&q->stash_cnt, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->pool_dry, 0, __ATOMIC_RELAXED);
}

/*
 * Close every socket on @um and its registration: its last queue went
 * down. Orphans (queues of destroyed devices) go with them.
 */
static void afx_umem_close(struct afx_umem *um)
{
	while (um->socks) {
		struct afx_q *q = um->socks;

		afx_sock_close(q);
		/* An orphan's device holds no reference on the group, but
		 * the device going down now does: um outlives this loop. */
		if (!q->dev) {
			afx_q_pool_end(q);
			afx_q_umem_put(q);
			afx_q_free(q);
		}
	}
	afx_umem_unregister_idle(um);
}

/* ---- the datapath: receive ----------------------------------------------- */

/* Keep the kernel's fill ring full from the pool (the poller). */
static void afx_fill(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t room, n, idx, i, posted = 0;
	const uint32_t shift = q->um->chunk_shift;

	room = uxdp_ring_prod_nb_free(&q->fill, q->um->rx_size);
	while (room) {
		n = uxdp_pool_alloc_batch(q->pool, bufs,
					  MIN(room, (uint32_t)AFX_FILL_BATCH));
		if (!n) {
			st_add(&q->st.fill_short, 1);
			__atomic_store_n(&q->pool_dry, 1, __ATOMIC_RELAXED);
			break;
		}
		uxdp_ring_prod_reserve(&q->fill, n, &idx);
		for (i = 0; i < n; i++) {
			uint64_t addr = uxdp_buff_chunk_addr(bufs[i]);

			*uxdp_ring_addr(&q->fill, idx + i) = addr;
			q->held[addr >> shift] = bufs[i];
		}
		uxdp_ring_prod_submit(&q->fill, n);
		posted += n;
		room -= n;
	}
	if (!posted)
		return;
	__atomic_store_n(&q->pool_dry, 0, __ATOMIC_RELAXED);
	st_add(&q->st.fill_posted, posted);
	__atomic_store_n(&q->nheld, q->nheld + posted, __ATOMIC_RELAXED);
	/* The kernel sleeps on an empty fill ring until woken (zero-copy
	 * drivers set the flag; a recvfrom() runs their NAPI). */
	if (!q->wakeup || uxdp_ring_needs_wakeup(&q->fill)) {
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		st_add(&q->st.fill_kicks, 1);
	}
}

/*
 * The buffer an RX descriptor names, ready for the program, or NULL for
 * a bad descriptor (counted; a buffer it named goes back to the pool).
 */
static inline struct uxdp_buff *afx_rx_buff(struct afx_q *q,
					    const struct uxdp_desc *d,
					    uint32_t *found)
{
	const struct afx_umem *um = q->um;
	uint32_t c, off;
	struct uxdp_buff *b;

	if (uxdp_unlikely(d->addr >= um->size))
		return NULL;
	c = (uint32_t)(d->addr >> um->chunk_shift);
	b = q->held[c];
	if (uxdp_unlikely(!b))
		return NULL;
	q->held[c] = NULL;
	(*found)++;
	/* Where the data starts, from the buffer's usable start (chunk +
	 * headroom), as the kernel says: 256 normally. */
	off = (uint32_t)((char *)um->area + d->addr -
			 (char *)b->data_hard_start);
	if (uxdp_likely(off == UXDP_PACKET_HEADROOM &&
			d->len <= b->frame_sz - UXDP_PACKET_HEADROOM &&
			!d->options)) {
		uxdp_buff_set_size(b, d->len);
		return b;
	}
	if (off < sizeof(struct uxdp_frame) || off > b->frame_sz ||
	    d->len > b->frame_sz - off || d->options) {
		uxdp_buff_free(b);
		return NULL;
	}
	b->data = (char *)b->data_hard_start + off;
	b->data_meta = b->data;
	b->data_end = (char *)b->data + d->len;
	b->flags = 0;
	return b;
}

static int afx_rx(struct afx_q *q, struct uxdp_xdp_cpu *ctx, int budget)
{
	struct uxdp_desc descs[AFX_RX_BATCH];
	struct uxdp_buff *bufs[AFX_RX_BATCH];
	uint32_t idx, n, i, m, bad, taken = 0, found = 0;
	int done = 0;

	while (done < budget) {
		uint32_t want = MIN((uint32_t)(budget - done),
				    (uint32_t)AFX_RX_BATCH);
		/*
		 * Take from RX only what TX has room for: a queue that
		 * forwards out of itself then shows overload in the
		 * kernel's rx_ring_full, not as frames dropped here.
		 */
		uint32_t room = q->tx_size -
				__atomic_load_n(&q->inflight, __ATOMIC_RELAXED);

		want = MIN(want, room);
		if (!want)
			break;
		n = uxdp_ring_cons_peek(&q->rx, want, &idx);
		if (!n)
			break;
		uxdp_ring_cons_read_descs(&q->rx, idx, descs, n);
		uxdp_ring_cons_release(&q->rx, n);
		for (i = 0, m = 0; i < n; i++) {
			bufs[m] = afx_rx_buff(q, &descs[i], &found);
			m += bufs[m] != NULL;
		}
		bad = n - m;
		if (uxdp_unlikely(bad))
			st_add(&q->st.rx_bad_descs, bad);
		taken += n;
		if (m)
			uxdp_rx_run_batch(ctx, bufs, m);
		done += (int)n;
	}
	if (taken) {
		st_add(&q->st.rx_descs, taken);
		__atomic_store_n(&q->nheld, q->nheld - found, __ATOMIC_RELAXED);
	}
	return done;
}

/* ---- the datapath: transmit ---------------------------------------------- */

/*
 * Completions (TX lock): frames go home, stash buffers go back to the
 * stash. Up to AFX_COMP_BATCH per lock hold; returns how many.
 */
static uint32_t afx_tx_reap(struct afx_q *q)
{
	struct uxdp_frame *frames[AFX_COMP_BATCH];
	uint32_t n, idx, i, nf = 0, total = 0;
	const uint32_t mask = q->tx_size - 1;

	do {
		uint64_t mismatch = 0;

		uxdp_spin_lock(&q->tx_lock);
		n = q->sw_head - q->sw_tail;
		n = n ? uxdp_ring_cons_peek(&q->comp,
					    MIN(n, (uint32_t)AFX_COMP_BATCH),
					    &idx) : 0;
		for (i = 0; i < n; i++) {
			struct afx_txent *e = &q->sw[q->sw_tail++ & mask];

			if (uxdp_unlikely(*uxdp_ring_addr(&q->comp, idx + i) !=
					  e->addr))
				mismatch++;
			if (e->p & AFX_TXENT_STASH)
				q->stash[q->nstash++] = (struct uxdp_buff *)
					(e->p & ~AFX_TXENT_STASH);
			else
				frames[nf++] = (struct uxdp_frame *)e->p;
		}
		if (n) {
			uxdp_ring_cons_release(&q->comp, n);
			st_add(&q->st.tx_completed, n);
			if (mismatch)
				st_add(&q->st.comp_mismatch, mismatch);
			__atomic_store_n(&q->inflight, q->sw_head - q->sw_tail,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&q->stash_cnt, q->nstash,
					 __ATOMIC_RELAXED);
		}
		uxdp_spin_unlock(&q->tx_lock);
		if (nf) {
			uxdp_frame_return_bulk(frames, nf);
			nf = 0;
		}
		total += n;
	} while (n == AFX_COMP_BATCH);
	return total;
}

/* Ring the kernel's TX doorbell once: sendto(). */
static bool afx_tx_kick_once(struct afx_q *q)
{
	if (q->wakeup && !uxdp_ring_needs_wakeup(&q->tx))
		return false;
	st_inc_any(&q->st.tx_kicks);
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return true;
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS ||
	    errno == EINTR) {
		st_inc_any(&q->st.tx_kick_again);
		return true;
	}
	st_inc_any(&q->st.tx_kick_errors);
	return false;
}

/* Kick while the TX ring holds frames the kernel has not taken. */
static void afx_tx_kick(struct afx_q *q)
{
	int r;

	for (r = 0; r < AFX_KICK_ROUNDS && uxdp_ring_count(&q->tx); r++)
		if (!afx_tx_kick_once(q))
			break;
}

/* Whether @f's memory is a buffer of @q's UMEM, and where in it. */
static inline bool afx_frame_addr(const struct afx_q *q,
				  const struct uxdp_frame *f, uint64_t *addr)
{
	const struct afx_umem *um = q->um;
	uint64_t a, end;

	if (f->mem.type != UXDP_MEM_POOL || !f->mem.owner ||
	    uxdp_pool_umem(uxdp_buff_pool((const struct uxdp_buff *)
					  f->mem.owner)) != um->umem)
		return false;
	a = (uint64_t)((char *)f->data - um->area);
	end = (a | (um->chunk_size - 1)) + 1;
	/* The kernel takes no descriptor across a chunk boundary. */
	if (a + f->len > end)
		return false;
	*addr = a;
	return true;
}

/*
 * Top the copy stash up from the pool (the poller: the pool's owner, or
 * the opener before any poller), when it is below half, back to half.
 * Stash plus stash buffers in flight never exceed tx_size, so completions
 * never overflow the stash array. Half, not a batch: the first frames
 * through a port come all at once, before its poller has run a second
 * time, and a stash of one batch ran dry under them (test_fwd_netns
 * test_two_queues lost them as txq_full).
 */
static void afx_stash_topup(struct afx_q *q)
{
	struct uxdp_buff *bufs[AFX_FILL_BATCH];
	uint32_t have, want, n, k;

	for (;;) {
		have = __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED) +
		       __atomic_load_n(&q->inflight, __ATOMIC_RELAXED);
		if (have >= q->tx_size / 2)
			return;
		want = MIN(q->tx_size / 2 - have, (uint32_t)AFX_FILL_BATCH);
		n = uxdp_pool_alloc_batch(q->pool, bufs, want);
		if (!n)
			return;
		uxdp_spin_lock(&q->tx_lock);
		k = MIN(n, q->tx_size - q->nstash - (q->sw_head - q->sw_tail));
		memcpy(&q->stash[q->nstash], bufs, k * sizeof(*bufs));
		q->nstash += k;
		__atomic_store_n(&q->stash_cnt, q->nstash, __ATOMIC_RELAXED);
		uxdp_spin_unlock(&q->tx_lock);
		if (k < n) {
			uxdp_pool_free_batch(q->pool, bufs + k, n - k);
			return;
		}
	}
}

/*
 * Post up to AFX_COMP_BATCH of @frames on @q's TX ring (TX lock held,
 * queue open). Stops at the first frame it cannot take; *@why says why.
 * Copied frames go to @copied for the caller to return. Returns how many.
 */
static uint32_t afx_tx_post(struct afx_q *q, struct uxdp_frame **frames,
			    uint32_t n, struct uxdp_frame **copied,
			    uint32_t *ncopied, uint64_t *bytes,
			    enum uxdp_txq_refusal *why)
{
	const uint32_t mask = q->tx_size - 1;
	uint32_t idx, room, i, nocopy = 0, nc = 0;
	uint64_t b = 0;

	room = MIN(n, q->tx_size - (q->sw_head - q->sw_tail));
	room = uxdp_ring_prod_reserve_batch(&q->tx, room, &idx);
	for (i = 0; i < room; i++) {
		struct uxdp_frame *f = frames[i];
		struct uxdp_desc *d = uxdp_ring_desc(&q->tx, idx + i);
		struct afx_txent *e = &q->sw[(q->sw_head + i) & mask];
		uint64_t addr;

		if (uxdp_unlikely(f->len > q->max_len)) {
			*why = UXDP_TXQ_TOO_BIG;
			break;
		}
		if (afx_frame_addr(q, f, &addr)) {
			/* Ours: the kernel sends it from where it is. */
			e->p = (uintptr_t)f;
			nocopy++;
		} else {
			struct uxdp_buff *sb;

			if (uxdp_unlikely(!q->nstash)) {
				st_add(&q->st.tx_no_buffer, 1);
				break;
			}
			sb = q->stash[--q->nstash];
			memcpy((char *)sb->data_hard_start +
			       UXDP_PACKET_HEADROOM, f->data, f->len);
			addr = (uint64_t)((char *)sb->data_hard_start -
					  q->um->area) + UXDP_PACKET_HEADROOM;
			e->p = (uintptr_t)sb | AFX_TXENT_STASH;
			copied[nc++] = f;
		}
		e->addr = addr;
		d->addr = addr;
		d->len = f->len;
		d->options = 0;
		b += f->len;
	}
	uxdp_ring_prod_cancel(&q->tx, room - i);
	if (i) {
		uxdp_ring_prod_submit(&q->tx, i);
		q->sw_head += i;
		__atomic_store_n(&q->inflight, q->sw_head - q->sw_tail,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&q->stash_cnt, q->nstash, __ATOMIC_RELAXED);
		st_add(&q->st.tx_nocopy, nocopy);
		st_add(&q->st.tx_copy, nc);
	}
	*ncopied = nc;
	*bytes = b;
	return i;
}

static int afx_xdp_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
			uint32_t flags)
{
	struct afx_priv *priv = afx_priv(dev);
	struct uxdp_frame *copied[AFX_COMP_BATCH];
	enum uxdp_txq_refusal why = UXDP_TXQ_FULL;
	uint32_t qi, sent = 0, k, want, nc;
	uint64_t bytes;
	struct afx_q *q;

	/* The queue this thread polls on this device (XDP_TX goes back
	 * out where it came from), else spread threads over queues. */
	qi = afx_tls_dev == dev ? afx_tls_q : uxdp_thread_index();
	if (uxdp_unlikely(qi >= priv->nq))
		qi %= priv->nq;
	q = priv->q[qi];
	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, qi, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	if (uxdp_unlikely(n <= 0))
		return 0;
	while (sent < (uint32_t)n) {
		want = MIN((uint32_t)n - sent, (uint32_t)AFX_COMP_BATCH);
		/*
		 * Completions first, when they would make room: in the TX
		 * ring, or in the stash that frames of another UMEM are
		 * copied into. The poller reaps too, but only once it runs;
		 * a sender that waited for it would drop what a completion
		 * already in the ring could carry.
		 */
		if (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED) +
		    want > q->tx_size ||
		    __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED) < want)
			afx_tx_reap(q);
		uxdp_spin_lock(&q->tx_lock);
		if (uxdp_unlikely(!q->tx_ok || !uxdp_dev_is_up(dev))) {
			uxdp_spin_unlock(&q->tx_lock);
			uxdp_txq_count_refused(dev, qi, UXDP_TXQ_DOWN,
					       (uint32_t)n - sent);
			if (!sent)
				return -ENETDOWN;
			why = UXDP_TXQ_DOWN;
			goto out;
		}
		k = afx_tx_post(q, frames + sent, want, copied, &nc, &bytes,
				&why);
		uxdp_txq_count(dev, qi, k, bytes);
		uxdp_spin_unlock(&q->tx_lock);
		/* Copied: the originals go home at once. */
		uxdp_frame_return_bulk(copied, nc);
		sent += k;
		if (k < want)
			break;
	}
	/* Every frame not taken is counted under the reason the call
	 * stopped for. */
	if (sent < (uint32_t)n)
		uxdp_txq_count_refused(dev, qi, why, (uint32_t)n - sent);
out:
	if (flags & UXDP_XMIT_FLUSH) {
		if (sent)
			afx_tx_kick_once(q);
		/* The poller reaps the completions and kicks on. */
		uxdp_dev_kick(dev, qi);
	}
	return (int)sent;
}

/* ---- poll, pending, fd, pool --------------------------------------------- */

static int afx_poll(struct uxdp_dev *dev, uint32_t qi, struct uxdp_xdp_cpu *ctx,
		    int budget)
{
	struct afx_q *q = afx_priv(dev)->q[qi];
	int done;

	afx_tls_dev = dev;
	afx_tls_q = qi;
	uxdp_spin_lock(&q->rx_lock);
	if (uxdp_unlikely(!q->polled))
		__atomic_store_n(&q->polled, 1, __ATOMIC_RELAXED);
	if (uxdp_unlikely(!q->rx_ok)) {
		uxdp_spin_unlock(&q->rx_lock);
		return 0;
	}
	if (__atomic_load_n(&q->inflight, __ATOMIC_RELAXED)) {
		afx_tx_reap(q);
		afx_tx_kick(q);
		afx_tx_reap(q);
	}
	afx_stash_topup(q);
	afx_fill(q);
	done = afx_rx(q, ctx, budget);
	if (done)
		afx_fill(q);
	else if (q->busy_poll) {
		/* Drives the device's NAPI from here (busy polling). */
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		st_add(&q->st.rx_kicks, 1);
	}
	uxdp_spin_unlock(&q->rx_lock);
	return done;
}

/*
 * Work for an idle poller: RX descriptors, frames in flight to reap, or a
 * fill ring it could refill now that buffers came back. Shared words
 * only; rx_lock busy means down is closing the socket: no work.
 */
static bool afx_rx_pending(struct uxdp_dev *dev, uint32_t qi)
{
	struct afx_q *q = afx_priv(dev)->q[qi];
	bool pending = false;

	if (!uxdp_spin_trylock(&q->rx_lock))
		return false;
	if (q->rx_ok) {
		pending = uxdp_ring_count(&q->rx) ||
			  __atomic_load_n(&q->inflight, __ATOMIC_RELAXED);
		if (!pending && __atomic_load_n(&q->pool_dry,
						__ATOMIC_RELAXED)) {
			struct uxdp_pool_stats ps;

			pending = !uxdp_pool_stats(q->pool, &ps) &&
				  ps.remote_pending;
		}
	}
	uxdp_spin_unlock(&q->rx_lock);
	return pending;
}

static int afx_rx_fd(struct uxdp_dev *dev, uint32_t qi)
{
	return afx_priv(dev)->q[qi]->epfd;
}

static struct uxdp_pool *afx_rx_pool(struct uxdp_dev *dev, uint32_t qi)
{
	struct afx_q *q = afx_priv(dev)->q[qi];

	return q ? q->pool : NULL;
}

/* ---- up and down --------------------------------------------------------- */

static void afx_q_set_ok(struct afx_q *q, bool ok)
{
	uxdp_spin_lock(&q->rx_lock);
	uxdp_spin_lock(&q->tx_lock);
	q->rx_ok = ok;
	q->tx_ok = ok;
	uxdp_spin_unlock(&q->tx_lock);
	uxdp_spin_unlock(&q->rx_lock);
}

static int afx_q_map(struct afx_q *q)
{
	int fd = q->fd;

	if (bpf_map_update_elem(q->ifc->xsks_fd, &q->qid, &fd, 0))
		return uxdp_set_error(errno, "afxdp %s: XSKMAP entry for "
				      "queue %u: %s", q->ifc->ifname, q->qid,
				      strerror(errno));
	q->mapped = true;
	return 0;
}

static void afx_q_unmap(struct afx_q *q)
{
	if (!q->mapped)
		return;
	bpf_map_delete_elem(q->ifc->xsks_fd, &q->qid);
	q->mapped = false;
}

/* Undo afx_open() for queues [0, @n): out of the map, sockets closed
 * where the group has no other queue up. */
static void afx_down_queues(struct afx_priv *priv, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct afx_q *q = priv->q[i];

		afx_q_set_ok(q, false);
		afx_q_unmap(q);
	}
	for (i = 0; i < n; i++) {
		struct afx_umem *um = priv->q[i]->um;

		if (!--um->nup)
			afx_umem_close(um);
	}
}

static void afx_warn_unbound(const struct afx_priv *priv)
{
	if (!priv->if_rxq || priv->if_rxq <= priv->nq)
		return;
	uxdp_pr(UXDP_WARN, "afxdp %s: the interface has %u RX queues and "
		"this port binds %u (%u-%u): traffic steered to the others "
		"goes to the stack, not to uxdp (uxdp_afxdp_info: "
		"no_socket). Bind @0-%u, or steer (ethtool -L %s combined "
		"%u, or flow rules)\n", priv->ifname, priv->if_rxq, priv->nq,
		priv->first, priv->first + priv->nq - 1, priv->if_rxq - 1,
		priv->ifname, priv->nq);
}

static int afx_open(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_ifinfo fi;
	struct afx_quiet qt;
	struct afx_ns saved;
	uint32_t i, opened = 0;
	int err;

	pthread_mutex_lock(&afx_lock);
	afx_quiet_begin(&qt);
	err = afx_ns_enter(&priv->ns, &saved);
	if (err)
		goto out;
	err = afx_ifinfo(priv->ifname, &fi);
	if (err || fi.ifindex != priv->ifc->ifindex) {
		err = uxdp_set_error(ENODEV, "afxdp %s: the interface is gone",
				     priv->ifname);
		goto out_ns;
	}
	if (!fi.up) {
		err = uxdp_set_error(ENETDOWN, "afxdp %s: the interface is "
				     "down (ip link set dev %s up)",
				     priv->ifname, priv->ifname);
		goto out_ns;
	}
	if (fi.mtu != priv->mtu) {
		/* Changed since create: the same check, and TX follows. */
		uint32_t room = priv->chunk - UXDP_PACKET_HEADROOM -
				UXDP_FRAME_TAILROOM;

		if (fi.mtu + AFX_VLAN_ETH_HLEN > room) {
			err = uxdp_set_error(EINVAL, "afxdp %s: MTU %u "
					     "(changed since create) too "
					     "large for chunk=%u: at most %u",
					     priv->ifname, fi.mtu, priv->chunk,
					     room - AFX_VLAN_ETH_HLEN);
			goto out_ns;
		}
		priv->mtu = fi.mtu;
		uxdp_dev_set_mtu(dev, fi.mtu);
		for (i = 0; i < priv->nq; i++)
			priv->q[i]->max_len = fi.mtu + AFX_VLAN_ETH_HLEN;
	}
	for (i = 0; i < priv->nq; i++, opened++) {
		struct afx_q *q = priv->q[i];

		/* A group's socket may still be open (parked). */
		if (!q->xsk) {
			err = afx_sock_open(q, priv->ifname);
			if (err)
				goto out_undo;
		}
		/*
		 * Buffers on the fill ring before the socket is in the
		 * XSKMAP (the program may be on already, for another port),
		 * so what arrives right after up is received: when no thread
		 * owns the pool yet (never polled: every return to it is
		 * remote) or this one does. A pool another thread owns is
		 * that thread's to allocate from: it fills at its first poll
		 * (uxdp_dev_up kicks it).
		 */
		if (!__atomic_load_n(&q->polled, __ATOMIC_RELAXED) ||
		    uxdp_pool_is_owner(q->pool)) {
			uxdp_spin_lock(&q->rx_lock);
			afx_stash_topup(q);
			afx_fill(q);
			uxdp_spin_unlock(&q->rx_lock);
		}
		q->um->nup++;
		/* Sockets go in the XSKMAP before the program goes on. */
		err = afx_q_map(q);
		if (err) {
			opened++;
			goto out_undo;
		}
	}
	err = afx_iface_attach(priv->ifc, priv->flags);
	if (err)
		goto out_undo;
	priv->ifc->up++;
	for (i = 0; i < priv->nq; i++)
		afx_q_set_ok(priv->q[i], true);
	priv->up = true;
	afx_warn_unbound(priv);
	goto out_ns;

out_undo:
	{
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		afx_down_queues(priv, opened);
		if (!priv->ifc->up)
			afx_iface_detach(priv->ifc);
		uxdp_set_error(-err, "%s", msg);
	}
out_ns:
	afx_ns_leave(&saved);
out:
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	return err;
}

static void afx_stop(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	struct afx_quiet qt;
	struct afx_ns saved;
	int err;

	pthread_mutex_lock(&afx_lock);
	if (!priv->up)
		goto out;
	afx_quiet_begin(&qt);
	err = afx_ns_enter(&priv->ns, &saved);
	if (err)
		uxdp_pr(UXDP_WARN, "afxdp %s: %s\n", priv->ifname,
			uxdp_errmsg());
	/* Program off first: nothing is redirected to a closing socket. */
	if (!--priv->ifc->up)
		afx_iface_detach(priv->ifc);
	afx_down_queues(priv, priv->nq);
	priv->up = false;
	if (!err)
		afx_ns_leave(&saved);
	afx_quiet_end(&qt);
out:
	pthread_mutex_unlock(&afx_lock);
}

/* ---- destroy ------------------------------------------------------------- */

static void afx_destroy(struct uxdp_dev *dev)
{
	struct afx_priv *priv = afx_priv(dev);
	uint32_t i;

	/* Down (stop) has closed what the kernel held; what is left is
	 * memory and descriptors, in no namespace. */
	pthread_mutex_lock(&afx_lock);
	for (i = 0; priv->q && i < priv->nq; i++) {
		struct afx_q *q = priv->q[i];

		if (!q)
			continue;
		priv->q[i] = NULL;
		if (q->xsk) {
			/* Parked in a group still up: the group closes it
			 * with its own, and frees it then. */
			q->dev = NULL;
			continue;
		}
		afx_q_pool_end(q);
		afx_q_umem_put(q);
		afx_q_free(q);
	}
	free(priv->q);
	priv->q = NULL;
	if (priv->group && !--priv->group->refs)
		afx_umem_free(priv->group);
	priv->group = NULL;
	afx_iface_put(priv->ifc);
	priv->ifc = NULL;
	if (priv->ns.fd >= 0)
		close(priv->ns.fd);
	priv->ns.fd = -1;
	pthread_mutex_unlock(&afx_lock);
}

static const struct uxdp_dev_ops afx_ops = {
	.kind = "afxdp",
	.open = afx_open,
	.stop = afx_stop,
	.poll = afx_poll,
	.rx_pending = afx_rx_pending,
	.xdp_xmit = afx_xdp_xmit,
	.rx_fd = afx_rx_fd,
	.rx_pool = afx_rx_pool,
	.destroy = afx_destroy,
};

/* ---- create -------------------------------------------------------------- */

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* Options checked on their own, before anything is made. */
static int afx_check_opts(struct afx_priv *p, const char *ifname,
			  const char *group)
{
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE)
		return uxdp_set_error(EINVAL, "afxdp: interface name must be "
				      "1..%d characters", IF_NAMESIZE - 1);
	if (!p->nq || p->nq > UXDP_AFXDP_MAX_QUEUES)
		return uxdp_set_error(EINVAL, "afxdp %s: %u queues: 1..%d",
				      ifname, p->nq, UXDP_AFXDP_MAX_QUEUES);
	if (p->first > 0xffffff || p->first + p->nq > 0xffffff)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range", ifname, p->first);
	if ((p->flags & UXDP_AFXDP_F_COPY) &&
	    (p->flags & UXDP_AFXDP_F_ZEROCOPY))
		return uxdp_set_error(EINVAL, "afxdp %s: copy and zerocopy "
				      "both asked for", ifname);
	if ((p->flags & UXDP_AFXDP_F_NATIVE) &&
	    (p->flags & UXDP_AFXDP_F_GENERIC))
		return uxdp_set_error(EINVAL, "afxdp %s: native and generic "
				      "mode both asked for", ifname);
	if (p->flags & ~(UXDP_AFXDP_F_COPY | UXDP_AFXDP_F_ZEROCOPY |
			 UXDP_AFXDP_F_NATIVE | UXDP_AFXDP_F_GENERIC |
			 UXDP_AFXDP_F_NO_NEED_WAKEUP))
		return uxdp_set_error(EINVAL, "afxdp %s: unknown flags 0x%x",
				      ifname, p->flags);
	if (p->chunk != 2048 && p->chunk != 4096)
		return uxdp_set_error(EINVAL, "afxdp %s: chunk %u: 2048 or "
				      "4096", ifname, p->chunk);
	if (!is_pow2(p->rx_size) || p->rx_size < 64 ||
	    p->rx_size > AFX_MAX_RING)
		return uxdp_set_error(EINVAL, "afxdp %s: rx_size %u: a power "
				      "of two in [64, %u]", ifname, p->rx_size,
				      AFX_MAX_RING);
	if (!is_pow2(p->tx_size) || p->tx_size < 64 ||
	    p->tx_size > AFX_MAX_RING)
		return uxdp_set_error(EINVAL, "afxdp %s: tx_size %u: a power "
				      "of two in [64, %u]", ifname, p->tx_size,
				      AFX_MAX_RING);
	if (p->frames < 2 * AFX_FILL_BATCH || p->frames > AFX_MAX_FRAMES)
		return uxdp_set_error(EINVAL, "afxdp %s: frames %u: %u..%u "
				      "per queue", ifname, p->frames,
				      2 * AFX_FILL_BATCH, AFX_MAX_FRAMES);
	if (p->busy_budget > 0xffff)
		return uxdp_set_error(EINVAL, "afxdp %s: busy_poll budget %u: "
				      "at most 65535", ifname, p->busy_budget);
	if (group && (!*group || strlen(group) > UXDP_AFXDP_GROUP_NAME_MAX))
		return uxdp_set_error(EINVAL, "afxdp %s: shared group name "
				      "must be 1..%d characters", ifname,
				      UXDP_AFXDP_GROUP_NAME_MAX);
	return 0;
}

/* The interface, as it is now: there, up, queues and MTU that fit. */
static int afx_check_iface(struct afx_priv *p, struct afx_ifinfo *fi)
{
	uint32_t room = p->chunk - UXDP_PACKET_HEADROOM - UXDP_FRAME_TAILROOM;
	int err = afx_ifinfo(p->ifname, fi);

	if (err == -ENODEV)
		return uxdp_set_error(ENODEV, "afxdp %s: no such interface "
				      "(in this thread's network namespace)",
				      p->ifname);
	if (err)
		return uxdp_set_error(-err, "afxdp %s: %s", p->ifname,
				      strerror(-err));
	if (!fi->up)
		return uxdp_set_error(ENETDOWN, "afxdp %s: the interface is "
				      "down (ip link set dev %s up)",
				      p->ifname, p->ifname);
	if (fi->rxq && p->first + p->nq > fi->rxq)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range: the interface has %u RX "
				      "queue%s (0..%u)", p->ifname,
				      p->first + p->nq - 1, fi->rxq,
				      fi->rxq == 1 ? "" : "s", fi->rxq - 1);
	if (fi->txq && p->first + p->nq > fi->txq)
		return uxdp_set_error(EINVAL, "afxdp %s: queue %u out of "
				      "range: the interface has %u TX "
				      "queue%s", p->ifname,
				      p->first + p->nq - 1, fi->txq,
				      fi->txq == 1 ? "" : "s");
	if (fi->mtu + AFX_VLAN_ETH_HLEN > room)
		return uxdp_set_error(EINVAL, "afxdp %s: MTU %u too large for "
				      "chunk=%u: a frame of up to %u bytes "
				      "must fit the %u a chunk leaves after "
				      "%d bytes of headroom and %d of "
				      "tailroom; use %s (at most %u)",
				      p->ifname, fi->mtu,
				      p->chunk, fi->mtu + AFX_VLAN_ETH_HLEN,
				      room, UXDP_PACKET_HEADROOM,
				      UXDP_FRAME_TAILROOM,
				      p->chunk < 4096 ? "chunk=4096" :
				      "a smaller MTU",
				      room - AFX_VLAN_ETH_HLEN);
	return 0;
}

/* AF_XDP sockets can be made here: root, and a kernel with AF_XDP. */
static int afx_check_afxdp(void)
{
	int s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (s >= 0) {
		close(s);
		return 0;
	}
	if (errno == EPERM || errno == EACCES)
		return uxdp_set_error(EPERM, "afxdp: not permitted to create "
				      "AF_XDP sockets: run as root "
				      "(CAP_NET_RAW, CAP_BPF, CAP_NET_ADMIN)");
	if (errno == EAFNOSUPPORT)
		return uxdp_set_error(EAFNOSUPPORT, "afxdp: this kernel has no "
				      "AF_XDP (CONFIG_XDP_SOCKETS)");
	return uxdp_set_error(errno, "afxdp: socket(AF_XDP): %s",
			      strerror(errno));
}

/* The shared group, found or made (afx_lock held). */
static int afx_group_get(struct afx_priv *p, const char *name,
			 uint32_t group_frames)
{
	struct afx_umem *um = afx_group_find(name);

	if (um) {
		if (um->chunk_size != p->chunk || um->rx_size != p->rx_size ||
		    um->tx_size != p->tx_size)
			return uxdp_set_error(EINVAL, "afxdp %s: shared group "
					      "'%s' has chunk %u, rx_size %u, "
					      "tx_size %u; its ports must "
					      "match", p->ifname, name,
					      um->chunk_size, um->rx_size,
					      um->tx_size);
		um->refs++;		/* the device's own reference */
		p->group = um;
		return 0;
	}
	if (!group_frames)
		group_frames = 2 * p->frames * p->nq;
	if (group_frames < p->frames * p->nq || group_frames > AFX_MAX_FRAMES *
	    UXDP_AFXDP_MAX_QUEUES)
		return uxdp_set_error(EINVAL, "afxdp %s: group_frames %u: at "
				      "least %u (frames x queues)", p->ifname,
				      group_frames, p->frames * p->nq);
	um = afx_umem_new(name, group_frames, p->chunk, p->rx_size,
			  p->tx_size);
	if (!um)
		return -errno;
	um->reserve = uxdp_pool_create(um->umem, NULL);
	if (!um->reserve || uxdp_umem_fill_all(um->umem) < 0) {
		int err = errno ? -errno : -ENOMEM;

		afx_umem_free(um);
		return err;
	}
	um->next = afx_groups;
	afx_groups = um;
	um->refs = 1;		/* the device's own reference */
	p->group = um;
	return 0;
}

/* The default device name: the interface's, else IF@Q. */
static const char *afx_default_name(const char *ifname, uint32_t q, char *buf,
				    size_t len)
{
	if (strlen(ifname) < UXDP_IFNAMSIZ && !uxdp_dev_get_by_name(ifname))
		return ifname;
	if ((size_t)snprintf(buf, len, "%s@%u", ifname, q) < UXDP_IFNAMSIZ)
		return buf;
	return ifname;
}

UXDP_API __attribute__((cold)) struct uxdp_dev *
uxdp_afxdp_create(const char *name, const struct uxdp_afxdp_opts *opts)
{
	struct afx_priv tmp, *priv;
	struct afx_ifinfo fi;
	struct uxdp_dev *dev;
	const char *ifname, *group;
	char namebuf[UXDP_IFNAMSIZ + 16];
	struct afx_quiet qt;
	uint32_t i, group_frames;
	int err;

	uxdp_clear_error();
	if (!UXDP_OPTS_VALID(opts, uxdp_afxdp_opts)) {
		errno = EINVAL;
		return NULL;
	}
	ifname = UXDP_OPTS_GET(opts, ifname, name);
	group = UXDP_OPTS_GET(opts, shared, NULL);
	memset(&tmp, 0, sizeof(tmp));
	tmp.ns.fd = -1;
	tmp.first = UXDP_OPTS_GET(opts, queue, 0);
	tmp.nq = UXDP_OPTS_GET(opts, queues, 1);
	tmp.flags = UXDP_OPTS_GET(opts, flags, 0);
	tmp.busy_budget = UXDP_OPTS_GET(opts, busy_poll_budget, 0);
	tmp.rx_size = UXDP_OPTS_GET(opts, rx_size, UXDP_AFXDP_DEFAULT_RX_SIZE);
	tmp.tx_size = UXDP_OPTS_GET(opts, tx_size, UXDP_AFXDP_DEFAULT_TX_SIZE);
	tmp.frames = UXDP_OPTS_GET(opts, frames, tmp.rx_size + 2 * tmp.tx_size);
	tmp.chunk = UXDP_OPTS_GET(opts, chunk_size,
				  UXDP_UMEM_DEFAULT_CHUNK_SIZE);
	group_frames = UXDP_OPTS_GET(opts, group_frames, 0);
	err = afx_check_opts(&tmp, ifname, group);
	if (err)
		goto fail;
	snprintf(tmp.ifname, sizeof(tmp.ifname), "%s", ifname);
	if (!name)
		name = afx_default_name(ifname, tmp.first, namebuf,
					sizeof(namebuf));
	err = afx_check_afxdp();
	if (!err)
		err = afx_check_iface(&tmp, &fi);
	if (err)
		goto fail;
	tmp.if_rxq = fi.rxq;
	tmp.if_txq = fi.txq;
	tmp.mtu = fi.mtu;

	dev = uxdp_dev_alloc(name, &afx_ops, tmp.nq, tmp.nq, sizeof(*priv));
	if (!dev)
		return NULL;
	priv = afx_priv(dev);
	*priv = tmp;
	uxdp_dev_set_mtu(dev, tmp.mtu);
	pthread_mutex_lock(&afx_lock);
	afx_quiet_begin(&qt);
	err = afx_ns_self(&priv->ns);
	if (err) {
		err = uxdp_set_error(-err, "afxdp: cannot open this thread's "
				     "network namespace: %s", strerror(-err));
		goto fail_locked;
	}
	err = afx_iface_get(&priv->ns, ifname, fi.ifindex, fi.rxq, &priv->ifc);
	if (err)
		goto fail_locked;
	if (group) {
		err = afx_group_get(priv, group, group_frames);
		if (err)
			goto fail_locked;
	}
	priv->q = calloc(priv->nq, sizeof(*priv->q));
	if (!priv->q) {
		err = uxdp_set_error(ENOMEM, "afxdp: out of memory");
		goto fail_locked;
	}
	for (i = 0; i < priv->nq; i++) {
		err = afx_q_create(dev, i);
		if (err)
			goto fail_locked;
	}
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	return dev;

fail_locked:
	afx_quiet_end(&qt);
	pthread_mutex_unlock(&afx_lock);
	{
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "%s", msg);
	}
	return NULL;
fail:
	errno = -err;
	return NULL;
}

/* ---- what was obtained --------------------------------------------------- */

static struct afx_priv *afx_priv_of(struct uxdp_dev *dev)
{
	if (!dev || strcmp(uxdp_dev_kind(dev), "afxdp"))
		return NULL;
	return afx_priv(dev);
}

static uint32_t afx_mode_of(uint8_t attach_mode)
{
	switch (attach_mode) {
	case XDP_ATTACHED_NONE:
		return UXDP_AFXDP_XDP_NONE;
	case XDP_ATTACHED_DRV:
		return UXDP_AFXDP_XDP_NATIVE;
	case XDP_ATTACHED_SKB:
		return UXDP_AFXDP_XDP_GENERIC;
	default:
		return UXDP_AFXDP_XDP_OTHER;
	}
}

UXDP_API int uxdp_afxdp_info(struct uxdp_dev *dev, struct uxdp_afxdp_info *info)
{
	struct afx_priv *priv = afx_priv_of(dev);
	struct afx_iface *ifc;
	struct afx_quiet qt;
	struct afx_ns saved;
	uint32_t i;

	uxdp_clear_error();
	if (!priv || !info)
		return uxdp_set_error(EINVAL, "afxdp: not an afxdp device");
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&afx_lock);
	ifc = priv->ifc;
	snprintf(info->ifname, sizeof(info->ifname), "%s", priv->ifname);
	info->ifindex = (uint32_t)ifc->ifindex;
	info->if_rx_queues = priv->if_rxq;
	info->if_tx_queues = priv->if_txq;
	info->first_queue = priv->first;
	info->queues = priv->nq;
	info->mtu = priv->mtu;
	info->up = priv->up;
	info->bpffs = afx_bpffs_mounted();
	info->need_wakeup = !(priv->flags & UXDP_AFXDP_F_NO_NEED_WAKEUP);
	info->chunk_size = priv->chunk;
	info->frames = priv->frames;
	info->rx_size = priv->rx_size;
	info->tx_size = priv->tx_size;
	if (priv->group) {
		info->shared = true;
		snprintf(info->group, sizeof(info->group), "%s",
			 priv->group->name);
	}
	for (i = 0; i < ifc->map_entries; i++)
		info->no_socket += afx_iface_miss(ifc, i);
	if (priv->up) {
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);
		int v = 0;
		socklen_t len = sizeof(v);
		struct afx_q *q0 = priv->q[0];

		info->attach = ifc->attach;
		afx_quiet_begin(&qt);
		if (!afx_ns_enter(&priv->ns, &saved)) {
			if (!bpf_xdp_query(ifc->ifindex, 0, &qo)) {
				info->xdp_mode = afx_mode_of(qo.attach_mode);
				info->prog_id = qo.prog_id;
			}
			afx_ns_leave(&saved);
		}
		afx_quiet_end(&qt);
		info->zerocopy = true;
		for (i = 0; i < priv->nq; i++)
			info->zerocopy &= priv->q[i]->zc;
		if (q0->fd >= 0 &&
		    !getsockopt(q0->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &v,
				&len))
			info->busy_poll = v;
		len = sizeof(v);
		/* The kernel sets SO_BUSY_POLL_BUDGET but does not say it
		 * back (ENOPROTOOPT): then it is the value we set. */
		if (info->busy_poll)
			info->busy_poll_budget =
				!getsockopt(q0->fd, SOL_SOCKET,
					    SO_BUSY_POLL_BUDGET, &v, &len) ?
				(uint32_t)v : q0->busy_budget;
	}
	pthread_mutex_unlock(&afx_lock);
	return 0;
}

UXDP_API int uxdp_afxdp_queue_stats(struct uxdp_dev *dev, uint32_t qi,
				    struct uxdp_afxdp_queue_stats *st)
{
	struct afx_priv *priv = afx_priv_of(dev);
	struct xdp_statistics k, cur;
	const struct afx_qstats *s;
	struct afx_q *q;

	uxdp_clear_error();
	if (!priv || !st || qi >= priv->nq)
		return uxdp_set_error(EINVAL, "afxdp: not an afxdp device, or "
				      "no queue %u", qi);
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&afx_lock);
	q = priv->q[qi];
	s = &q->st;
	st->queue = q->qid;
	st->bound = q->xsk != NULL;
	st->zerocopy = q->zc;
	k = q->kbase;
	if (q->xsk && !afx_kst_read(q, &cur))
		afx_kst_add(&k, &cur);
	st->rx_dropped = k.rx_dropped;
	st->rx_invalid_descs = k.rx_invalid_descs;
	st->tx_invalid_descs = k.tx_invalid_descs;
	st->rx_ring_full = k.rx_ring_full;
	st->rx_fill_ring_empty_descs = k.rx_fill_ring_empty_descs;
	st->tx_ring_empty_descs = k.tx_ring_empty_descs;
	st->no_socket = afx_iface_miss(q->ifc, q->qid);
	st->rx_descs = st_get(&s->rx_descs);
	st->rx_bad_descs = st_get(&s->rx_bad_descs);
	st->fill_posted = st_get(&s->fill_posted);
	st->fill_short = st_get(&s->fill_short);
	st->fill_kicks = st_get(&s->fill_kicks);
	st->rx_kicks = st_get(&s->rx_kicks);
	st->tx_nocopy = st_get(&s->tx_nocopy);
	st->tx_copy = st_get(&s->tx_copy);
	st->tx_completed = st_get(&s->tx_completed);
	st->tx_kicks = st_get(&s->tx_kicks);
	st->tx_kick_again = st_get(&s->tx_kick_again);
	st->tx_kick_errors = st_get(&s->tx_kick_errors);
	st->tx_no_buffer = st_get(&s->tx_no_buffer);
	st->comp_mismatch = st_get(&s->comp_mismatch);
	st->tx_in_flight = __atomic_load_n(&q->inflight, __ATOMIC_RELAXED);
	st->tx_stash = __atomic_load_n(&q->stash_cnt, __ATOMIC_RELAXED);
	st->kernel_held = __atomic_load_n(&q->nheld, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&afx_lock);
	return 0;
}

UXDP_API const char *uxdp_afxdp_xdp_mode_str(uint32_t mode)
{
	switch (mode) {
	case UXDP_AFXDP_XDP_NONE:
		return "none";
	case UXDP_AFXDP_XDP_NATIVE:
		return "native";
	case UXDP_AFXDP_XDP_GENERIC:
		return "generic";
	case UXDP_AFXDP_XDP_OTHER:
		return "other";
	}
	return "?";
}

UXDP_API const char *uxdp_afxdp_attach_str(uint32_t attach)
{
	switch (attach) {
	case UXDP_AFXDP_ATTACH_NONE:
		return "not attached";
	case UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER:
		return "libxdp dispatcher";
	case UXDP_AFXDP_ATTACH_LIBXDP_SINGLE:
		return "libxdp, no dispatcher";
	case UXDP_AFXDP_ATTACH_LIBBPF_LINK:
		return "bpf_link";
	case UXDP_AFXDP_ATTACH_LIBBPF:
		return "netlink (bpf_xdp_attach)";
	}
	return "?";
}

/* One "scope name value" line, if non-zero or asked for all. */
struct afx_line {
	const char *scope, *name;
	uint64_t v;
};

static int afx_pline(FILE *f, uint32_t flags, const struct afx_line *l)
{
	if (!l->v && !(flags & UXDP_STATS_ALL))
		return 0;
	return fprintf(f, "  %-7s %-26s %llu\n", l->scope, l->name,
		       (unsigned long long)l->v) < 0 ? -EIO : 0;
}

UXDP_API int uxdp_afxdp_print(struct uxdp_dev *dev, FILE *f, uint32_t flags)
{
	struct uxdp_afxdp_info in;
	uint32_t i;
	int err;

	if (!f)
		return -EINVAL;
	err = uxdp_afxdp_info(dev, &in);
	if (err)
		return err;
	if (fprintf(f, "%s: afxdp %s queues %u-%u (interface: %u rx / %u tx "
		    "queues, mtu %u)%s\n"
		    "  xdp %s, prog id %u, attached by %s%s\n"
		    "  %s, need_wakeup %s, busy_poll %s (budget %u)\n"
		    "  chunk %u, %u frames/queue, rx/fill %u, tx/comp %u%s%s\n",
		    uxdp_dev_name(dev), in.ifname, in.first_queue,
		    in.first_queue + in.queues - 1, in.if_rx_queues,
		    in.if_tx_queues, in.mtu, in.up ? "" : ", down",
		    uxdp_afxdp_xdp_mode_str(in.xdp_mode), in.prog_id,
		    uxdp_afxdp_attach_str(in.attach),
		    in.bpffs ? "" : " (no bpffs at /sys/fs/bpf: libxdp's "
		    "dispatcher needs mount -t bpf bpf /sys/fs/bpf)",
		    in.up ? (in.zerocopy ? "zero-copy" : "copy") : "unbound",
		    in.need_wakeup ? "on" : "off", in.busy_poll ? "on" : "off",
		    in.busy_poll_budget, in.chunk_size, in.frames, in.rx_size,
		    in.tx_size, in.shared ? ", shared UMEM " : "",
		    in.shared ? in.group : "") < 0)
		return -EIO;
	if (in.no_socket && fprintf(f, "  passed to the stack, no socket on "
				    "their queue: %llu\n",
				    (unsigned long long)in.no_socket) < 0)
		return -EIO;
	for (i = 0; i < in.queues; i++) {
		struct uxdp_afxdp_queue_stats q;
		struct uxdp_rxq_stats rs;
		struct uxdp_txq_stats ts;

		if (uxdp_afxdp_queue_stats(dev, i, &q) ||
		    uxdp_dev_rxq_stats(dev, i, &rs) ||
		    uxdp_dev_txq_stats(dev, i, &ts))
			return -EINVAL;
		if (fprintf(f, " %s/%u (interface queue %u)%s\n",
			    uxdp_dev_name(dev), i, q.queue,
			    q.bound ? "" : ", not bound") < 0)
			return -EIO;
		err = 0;
		{
			const struct afx_line lines[] = {
				{ "kernel", "rx_dropped", q.rx_dropped },
				{ "kernel", "rx_invalid_descs",
				  q.rx_invalid_descs },
				{ "kernel", "tx_invalid_descs",
				  q.tx_invalid_descs },
				{ "kernel", "rx_ring_full", q.rx_ring_full },
				{ "kernel", "rx_fill_ring_empty_descs",
				  q.rx_fill_ring_empty_descs },
				{ "kernel", "tx_ring_empty_descs",
				  q.tx_ring_empty_descs },
				{ "prog", "no_socket", q.no_socket },
				{ "driver", "rx_descs", q.rx_descs },
				{ "driver", "rx_bad_descs", q.rx_bad_descs },
				{ "driver", "fill_posted", q.fill_posted },
				{ "driver", "fill_short", q.fill_short },
				{ "driver", "fill_kicks", q.fill_kicks },
				{ "driver", "rx_kicks", q.rx_kicks },
				{ "driver", "tx_nocopy", q.tx_nocopy },
				{ "driver", "tx_copy", q.tx_copy },
				{ "driver", "tx_completed", q.tx_completed },
				{ "driver", "tx_kicks", q.tx_kicks },
				{ "driver", "tx_kick_again", q.tx_kick_again },
				{ "driver", "tx_kick_errors",
				  q.tx_kick_errors },
				{ "driver", "tx_no_buffer", q.tx_no_buffer },
				{ "driver", "comp_mismatch", q.comp_mismatch },
				{ "driver", "tx_in_flight", q.tx_in_flight },
				{ "driver", "tx_stash", q.tx_stash },
				{ "driver", "kernel_held", q.kernel_held },
				{ "uxdp", "rx packets", rs.packets },
				{ "uxdp", "rx drop", rs.drop },
				{ "uxdp", "rx pass", rs.pass },
				{ "uxdp", "rx tx", rs.tx },
				{ "uxdp", "rx redirect", rs.redirect },
				{ "uxdp", "rx tx_err", rs.tx_err },
				{ "uxdp", "rx redirect_err", rs.redirect_err },
				{ "uxdp", "tx packets", ts.packets },
				{ "uxdp", "tx full", ts.full },
				{ "uxdp", "tx too_big", ts.too_big },
				{ "uxdp", "tx down", ts.down },
			};
			size_t k;

			for (k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
				err |= afx_pline(f, flags, &lines[k]);
		}
		if (err)
			return -EIO;
	}
	return 0;
}

/* ---- afxdp:IFNAME[@Q|@Q1-Q2][,...] --------------------------------------- */

static int afx_parse_u32(const char *s, const char **end, uint32_t *out)
{
	unsigned long v;
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || v > 0xffffff)
		return -EINVAL;
	*out = (uint32_t)v;
	*end = e;
	return 0;
}

static struct uxdp_dev *afx_port_open(const struct uxdp_port *port,
				      const char *name)
{
	static const char *const keys[] = {
		"copy", "zerocopy", "mode", "busy_poll", "rx_size", "tx_size",
		"frames", "chunk", "shared", "group_frames", NULL,
	};
	UXDP_DECLARE_OPTS(uxdp_afxdp_opts, o);
	char ifname[IF_NAMESIZE];
	const char *at, *mode, *end;
	uint64_t v[6];
	uint32_t q1 = 0, q2 = 0;
	size_t len;
	int err;

	err = uxdp_port_check_keys(port, keys);
	if (err)
		goto fail;
	at = strchr(port->arg, '@');
	len = at ? (size_t)(at - port->arg) : strlen(port->arg);
	if (!len || len >= sizeof(ifname)) {
		err = uxdp_set_error(EINVAL, "afxdp:%s: an interface name of "
				     "1..%d characters, then @Q or @Q1-Q2",
				     port->arg, IF_NAMESIZE - 1);
		goto fail;
	}
	memcpy(ifname, port->arg, len);
	ifname[len] = '\0';
	if (at) {
		err = afx_parse_u32(at + 1, &end, &q1);
		q2 = q1;
		if (!err && *end == '-')
			err = afx_parse_u32(end + 1, &end, &q2);
		if (err || *end || q2 < q1) {
			err = uxdp_set_error(EINVAL, "afxdp:%s: queues are "
					     "@Q or @Q1-Q2 with Q1 <= Q2",
					     port->arg);
			goto fail;
		}
	}
	o.ifname = ifname;
	o.queue = q1;
	o.queues = q2 - q1 + 1;
	if (uxdp_port_get_flag(port, "copy"))
		o.flags |= UXDP_AFXDP_F_COPY;
	if (uxdp_port_get_flag(port, "zerocopy"))
		o.flags |= UXDP_AFXDP_F_ZEROCOPY;
	mode = uxdp_port_get(port, "mode");
	if (mode) {
		if (!strcmp(mode, "native")) {
			o.flags |= UXDP_AFXDP_F_NATIVE;
		} else if (!strcmp(mode, "generic") || !strcmp(mode, "skb")) {
			o.flags |= UXDP_AFXDP_F_GENERIC;
		} else {
			err = uxdp_set_error(EINVAL, "afxdp:%s: mode=%s: "
					     "native or generic", port->arg,
					     mode);
			goto fail;
		}
	}
	err = uxdp_port_get_u64(port, "busy_poll", 0, 1, 65535, &v[0]);
	if (!err)
		err = uxdp_port_get_u64(port, "rx_size", 0, 64, AFX_MAX_RING,
					&v[1]);
	if (!err)
		err = uxdp_port_get_u64(port, "tx_size", 0, 64, AFX_MAX_RING,
					&v[2]);
	if (!err)
		err = uxdp_port_get_u64(port, "frames", 0, 2 * AFX_FILL_BATCH,
					AFX_MAX_FRAMES, &v[3]);
	if (!err)
		err = uxdp_port_get_u64(port, "chunk", 0, 2048, 4096, &v[4]);
	if (!err)
		err = uxdp_port_get_u64(port, "group_frames", 0,
					2 * AFX_FILL_BATCH,
					(uint64_t)AFX_MAX_FRAMES *
					UXDP_AFXDP_MAX_QUEUES, &v[5]);
	if (err)
		goto fail;
	o.busy_poll_budget = (uint32_t)v[0];
	o.rx_size = (uint32_t)v[1];
	o.tx_size = (uint32_t)v[2];
	o.frames = (uint32_t)v[3];
	o.chunk_size = (uint32_t)v[4];
	o.group_frames = (uint32_t)v[5];
	o.shared = uxdp_port_get(port, "shared");
	return uxdp_afxdp_create(name, &o);
fail:
	errno = -err;
	return NULL;
}

const struct uxdp_port_driver uxdp_afxdp_port_driver = {
	.kind = "afxdp",
	.usage = "afxdp:IFNAME[@Q|@Q1-Q2][,copy|,zerocopy]"
		 "[,mode=native|generic][,busy_poll=BUDGET][,rx_size=N]"
		 "[,tx_size=N][,frames=N][,chunk=2048|4096][,shared=GROUP]"
		 "[,group_frames=N]  queues of a Linux interface, through "
		 "AF_XDP sockets",
	.open = afx_port_open,
};

#else /* !UXDP_HAVE_AFXDP */

/* Built without libxdp, libbpf or a BPF-capable clang: the same exports,
 * refusing. */

UXDP_API struct uxdp_dev *uxdp_afxdp_create(const char *name,
					    const struct uxdp_afxdp_opts *opts)
{
	(void)opts;
	uxdp_clear_error();
	errno = -uxdp_set_error(EOPNOTSUPP, "afxdp %s: uxdp was built without "
				"the afxdp driver (install libxdp-dev, "
				"libbpf-dev and clang, and rebuild)",
				name ? name : "");
	return NULL;
}

UXDP_API int uxdp_afxdp_info(struct uxdp_dev *dev, struct uxdp_afxdp_info *info)
{
	(void)dev;
	(void)info;
	return -EOPNOTSUPP;
}

UXDP_API int uxdp_afxdp_queue_stats(struct uxdp_dev *dev, uint32_t q,
				    struct uxdp_afxdp_queue_stats *st)
{
	(void)dev;
	(void)q;
	(void)st;
	return -EOPNOTSUPP;
}

UXDP_API int uxdp_afxdp_print(struct uxdp_dev *dev, FILE *f, uint32_t flags)
{
	(void)dev;
	(void)f;
	(void)flags;
	return -EOPNOTSUPP;
}

UXDP_API const char *uxdp_afxdp_xdp_mode_str(uint32_t mode)
{
	(void)mode;
	return "none";
}

UXDP_API const char *uxdp_afxdp_attach_str(uint32_t attach)
{
	(void)attach;
	return "not attached";
}

#endif /* UXDP_HAVE_AFXDP */
