/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: queues of a Linux interface as a uxdp device, through the
 * kernel's AF_XDP sockets (include/uxdp/afxdp.h says what it does; this
 * comment says how, and the files of this folder each take one part:
 *
 *	iface.c		libbpf's log, namespaces, interface facts, and the
 *			interface registry: XSKMAP, miss counters, the program
 *	umem.c		UMEMs (a queue's own, shared groups) and queue memory
 *	sock.c		AF_XDP sockets: bind, close, kernel statistics
 *	busy.c		who holds a queue a bind found busy
 *	datapath.c	receive, transmit, poll: the hot path, one unit
 *	dev.c		up and down, destroy, create: the device's life
 *	info.c		what was obtained: info, queue stats, the report
 *	port.c		the afxdp: port string
 *	stub.c		the same exports, refusing, when built without it).
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
#ifndef UXDP_AFXDP_INTERNAL_H
#define UXDP_AFXDP_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

/* The XDP program, built at build time from xsk_redirect.bpf.c. */
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
/* EBUSY re-binds, total: a socket closed by another process (a forwarder
 * restarted) releases its queue in the kernel's deferred work, which a
 * loaded machine can hold up for a second or more. */
#define AFX_BIND_RETRY_MS	2000
#define AFX_TX_DRAIN_MS		100	/* waiting for completions at close */
#define AFX_LINK_PROBE_MS	250	/* a down link's kick, at most this often */
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
	uint32_t len;			/* counted as sent at completion */
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
	/* Up, but the copy stash is the poller's to stock first: it opens
	 * transmits at its next poll (afx_q_set_ok). tx_arm_pending: what
	 * up decided, under afx_lock. */
	uint32_t tx_arm;
	bool tx_arm_pending;
	struct uxdp_ring tx, comp;
	struct afx_txent *sw;
	uint32_t sw_head, sw_tail;
	struct uxdp_buff **stash;
	uint32_t nstash;
	/* Mirrors for lock-free readers (rx_pending, the poller). */
	uint32_t inflight;		/* sw_head - sw_tail */
	uint32_t stash_cnt;		/* nstash */
	/* The last kick said the link is down (ENETDOWN, ENXIO): no kicks,
	 * no transmits, no waiting for completions, but a probe every
	 * AFX_LINK_PROBE_MS (datapath.c). Cleared by a kick that works and
	 * by a new socket. Relaxed: a late reader kicks once too often. */
	uint32_t link_down;
	uint64_t link_probe_ms;

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

/* The driver's lock, and the registries it guards (iface.c, umem.c). */
extern pthread_mutex_t afx_lock;
extern struct afx_iface *afx_ifaces;
extern struct afx_umem *afx_groups;

extern const struct uxdp_dev_ops afx_ops;	/* dev.c */

static inline struct afx_priv *afx_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

/* Quiet libraries for the length of a control call (under afx_lock). */
struct afx_quiet {
	libbpf_print_fn_t bpf;
	libxdp_print_fn_t xdp;
};

struct afx_ifinfo {
	int ifindex;
	bool up;
	bool carrier;			/* netif_carrier_ok (iface.c) */
	uint32_t mtu;
	uint32_t rxq, txq;		/* 0: unknown */
	char driver[32];
};

/* iface.c */
void afx_quiet_begin(struct afx_quiet *qt);
void afx_quiet_end(struct afx_quiet *qt);
int afx_ns_self(struct afx_ns *ns);
int afx_ns_enter(const struct afx_ns *ns, struct afx_ns *saved);
void afx_ns_leave(struct afx_ns *saved);
int afx_ifinfo(const char *ifname, struct afx_ifinfo *fi);
bool afx_bpffs_mounted(void);
int afx_iface_get(const struct afx_ns *ns, const char *ifname,
		  int ifindex, uint32_t rxq, struct afx_iface **out);
void afx_iface_put(struct afx_iface *ifc);
uint64_t afx_iface_miss(const struct afx_iface *ifc, uint32_t qid);
int afx_iface_attach(struct afx_iface *ifc, uint32_t flags);
void afx_iface_detach(struct afx_iface *ifc);

/* umem.c */
struct afx_umem *afx_group_find(const char *name);
struct afx_umem *afx_umem_new(const char *name, uint32_t nchunks,
			      uint32_t chunk, uint32_t rx_size,
			      uint32_t tx_size);
void afx_umem_free(struct afx_umem *um);
void afx_q_free(struct afx_q *q);
void afx_q_pool_end(struct afx_q *q);
void afx_q_umem_put(struct afx_q *q);
int afx_q_create(struct uxdp_dev *dev, uint32_t i);

/* sock.c */
void afx_kst_add(struct xdp_statistics *a,
		 const struct xdp_statistics *b);
int afx_kst_read(const struct afx_q *q, struct xdp_statistics *st);
int afx_sock_open(struct afx_q *q, const char *ifname);
void afx_umem_close(struct afx_umem *um);

/* busy.c: "; AF_XDP sockets in this namespace are open in pid N (comm)"
 * or why no process could be named, for a bind's EBUSY message; with
 * @others_only, this process left out. */
void afx_busy_holders(char *buf, size_t len, bool others_only);

/* datapath.c */
uint32_t afx_tx_reap(struct afx_q *q);
void afx_fill(struct afx_q *q);
void afx_stash_topup(struct afx_q *q);
int afx_xdp_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
		 uint32_t flags);
int afx_poll(struct uxdp_dev *dev, uint32_t qi, struct uxdp_xdp_cpu *ctx,
	     int budget);
bool afx_rx_pending(struct uxdp_dev *dev, uint32_t qi);
int afx_rx_fd(struct uxdp_dev *dev, uint32_t qi);
struct uxdp_pool *afx_rx_pool(struct uxdp_dev *dev, uint32_t qi);

#endif /* UXDP_AFXDP_INTERNAL_H */
