/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The afxdp driver: queues of a Linux interface as a uxdp device, through
 * the kernel's AF_XDP sockets (set up with libxdp and libbpf). Built when
 * libxdp, libbpf and a clang that can compile BPF are found at build time;
 * without them uxdp_afxdp_create() fails with EOPNOTSUPP and there is no
 * "afxdp" port kind. This header needs neither library.
 *
 * Each bound interface queue Q1..Q2 is one RX and one TX queue of the
 * device (uxdp queue i is interface queue Q1 + i), with one AF_XDP socket.
 *
 * Memory. Every socket's UMEM is a uxdp UMEM, registered with the kernel
 * as it is (same area, chunk size, headroom), and each queue receives
 * into a uxdp pool over it. The driver keeps the kernel's fill ring full
 * with uxdp_pool_alloc_batch(), turns RX descriptors back into those
 * buffers and runs the queue's program on them in one batch. Without
 * shared= every queue has a UMEM of its own; ports naming the same
 * shared=GROUP (any interface, same process) share one UMEM and one
 * kernel registration (XDP_SHARED_UMEM), so a redirect between them is a
 * descriptor moved, not bytes copied.
 *
 * Transmit (XDP_TX, redirects, uxdp_dev_xmit): a frame whose memory is a
 * buffer of this queue's UMEM is sent by its address, no copy; any other
 * frame is copied into a buffer of the queue's pool and given back at
 * once. The TX queue is (the queue this thread last polled on this
 * device, else thread index % queues); frames go home when the kernel
 * completes them (in order). Completions are reaped by the queue's poll,
 * which therefore keeps polling while frames are in flight.
 *
 * need_wakeup: sockets are bound with XDP_USE_NEED_WAKEUP, and the driver
 * wakes the kernel only when it asks, on the two rings it asks on: a
 * sendto() for the TX ring (in copy mode that is every time: the kernel
 * transmits only when kicked, 32 frames per kick, so the poller kicks on
 * while the TX ring holds frames), a recvfrom() for the fill ring. The RX
 * and completion rings are the driver's to consume: a sleeping poller is
 * woken by the socket's POLLIN (uxdp_dev_ops.rx_fd), and a queue with
 * frames in flight keeps being polled until they complete.
 *
 * The kernel side lives while the device is up: uxdp_dev_up() binds the
 * sockets (a bind refused with EBUSY, the queue not yet released by a
 * socket closed a moment ago, is retried with backoff for up to 2 s),
 * puts them in the XSKMAP, then attaches the XDP program that redirects
 * each queue's packets to its socket (packets of queues without a socket
 * go to the stack, counted). uxdp_dev_down() detaches the program (only
 * ours: it checks the attached program is), closes the sockets and gives
 * every buffer the kernel held back to the pools, so a device that is
 * down has nothing in the kernel and no buffer in flight; a failed up
 * leaves nothing behind either. In a shared group the sockets and the
 * registration close when the group's last port goes down (the kernel's
 * shared UMEM is tied to its first socket); a port that goes down before
 * the others keeps its sockets, out of the XSKMAP, until then.
 *
 * The program: with libxdp when bpffs is mounted at /sys/fs/bpf and
 * libxdp's multi-program dispatcher works (other programs can then share
 * the interface); otherwise (no bpffs: mount -t bpf bpf /sys/fs/bpf; or
 * the dispatcher fails to load, as on some kernels, which libxdp handles
 * by attaching a single program) as a libbpf bpf_link, which the kernel
 * detaches by itself when the process exits however it exits (SIGINT,
 * SIGKILL); and on kernels without XDP links (before 5.9) with
 * bpf_xdp_attach over netlink. The fallbacks are quiet (info() says
 * which was used). Native (driver) mode first; generic (skb) mode if the
 * driver has no native XDP, or when asked. libbpf's and libxdp's own log
 * lines are dropped unless UXDP_AFXDP_DEBUG=1 is in the environment
 * (then they go to the uxdp print callback as warnings); for tests,
 * UXDP_AFXDP_ATTACH=netlink or =libxdp forces one way. With a netlink or
 * libxdp attachment a process that dies without uxdp_dev_destroy() (no
 * handler for SIGINT) leaves the program on the interface.
 *
 * Port strings (uxdp_dev_open(), every uxdp tool):
 *
 *	afxdp:IFNAME[@Q|@Q1-Q2][,copy|,zerocopy][,mode=native|generic]
 *	      [,busy_poll=BUDGET][,rx_size=N][,tx_size=N][,frames=N]
 *	      [,chunk=2048|4096][,shared=GROUP][,group_frames=N]
 *
 *	@Q, @Q1-Q2  interface queues to bind (default @0)
 *	copy        XDP_COPY; zerocopy: XDP_ZEROCOPY (fails where the
 *	            driver has none, e.g. veth). Default: the kernel's choice
 *	            (zero-copy where it can, copy otherwise).
 *	mode        native or generic XDP only (default: native, falling
 *	            back to generic)
 *	busy_poll   SO_PREFER_BUSY_POLL with this SO_BUSY_POLL_BUDGET
 *	rx_size     kernel RX and fill ring entries (default 8192: holds a
 *	            stall of the polling thread at line rate; 2048 lost
 *	            packets on veth at 0.5 Mpps)
 *	tx_size     kernel TX and completion ring entries (default 2048)
 *	frames      UMEM chunks per queue (default rx_size + 2 * tx_size:
 *	            the fill ring, the copy stash, frames in flight)
 *	chunk       chunk size (default 4096; 2048 fits frames up to 1472
 *	            bytes, i.e. an MTU of at most 1454)
 *	shared      share one UMEM with the other ports naming GROUP
 *	group_frames  chunks of the group's UMEM, set by its first port
 *	            (default: twice what that port needs)
 *
 * With uxdp_dev_open()'s name NULL the device is named IFNAME (or
 * IFNAME@Q if that is taken).
 *
 * Errors at create (errno, uxdp_errmsg() says more): EPERM (not root:
 * AF_XDP sockets need CAP_NET_RAW, the program CAP_BPF and
 * CAP_NET_ADMIN), EAFNOSUPPORT (no AF_XDP in the kernel), ENODEV (no such
 * interface in the calling thread's network namespace), ENETDOWN (the
 * interface is down), EINVAL (a queue out of range, with the interface's
 * queue count; an MTU too large for the chunk; a bad option), ENOMEM,
 * ENOSPC (a shared group's UMEM has no room left). At uxdp_dev_up():
 * EOPNOTSUPP (zerocopy asked for, not available; or no XDP mode works),
 * EBUSY (the queue is bound by someone else: the message names the
 * processes with AF_XDP sockets open in the namespace, or says none has
 * one and the kernel is still releasing a closed socket's hold; or
 * another program that is not libxdp's is attached), ENOBUFS (the kernel could not pin the UMEM:
 * raise RLIMIT_MEMLOCK or use fewer frames).
 *
 * Namespaces: the interface is looked up in the network namespace of the
 * thread that creates the device; up, down and destroy enter that
 * namespace themselves, from whatever thread calls them.
 */
#ifndef UXDP_AFXDP_H
#define UXDP_AFXDP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uxdp/common.h>
#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_AFXDP_DEFAULT_RX_SIZE	8192
#define UXDP_AFXDP_DEFAULT_TX_SIZE	2048
#define UXDP_AFXDP_MAX_QUEUES		64	/* bound by one port */
#define UXDP_AFXDP_GROUP_NAME_MAX	31

/* Option flags. */
#define UXDP_AFXDP_F_COPY		(1U << 0)	/* XDP_COPY only */
#define UXDP_AFXDP_F_ZEROCOPY		(1U << 1)	/* XDP_ZEROCOPY only */
#define UXDP_AFXDP_F_NATIVE		(1U << 2)	/* native XDP only */
#define UXDP_AFXDP_F_GENERIC		(1U << 3)	/* generic XDP only */
/* Bind without XDP_USE_NEED_WAKEUP: kick the kernel on every TX and
 * every fill instead of only when it asks. */
#define UXDP_AFXDP_F_NO_NEED_WAKEUP	(1U << 4)

struct uxdp_afxdp_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	/* The interface; NULL: the device's name. */
	const char *ifname;
	uint32_t queue;		/* first interface queue */
	uint32_t queues;	/* how many; 0: 1 */
	uint32_t flags;		/* UXDP_AFXDP_F_* */
	/* SO_BUSY_POLL_BUDGET with SO_PREFER_BUSY_POLL; 0: no busy polling. */
	uint32_t busy_poll_budget;
	/* Kernel ring entries, powers of two; 0: the defaults above. */
	uint32_t rx_size;	/* RX and fill */
	uint32_t tx_size;	/* TX and completion */
	uint32_t frames;	/* UMEM chunks per queue */
	uint32_t chunk_size;	/* 2048 or 4096 (default) */
	/* Share one UMEM with the other ports naming this group. */
	const char *shared;
	uint32_t group_frames;	/* the group's UMEM chunks (first port) */
	size_t :0;
};
#define uxdp_afxdp_opts__last_field group_frames

/*
 * A device named @name (NULL: the interface name) for queues of the
 * interface in @opts (NULL @opts or ifname: @name is the interface).
 * Checks everything it can without binding: privileges, the interface,
 * its state, queues and MTU, and makes the XSKMAP. Returns the device,
 * down, or NULL with errno set (see the top of this header).
 */
struct uxdp_dev *uxdp_afxdp_create(const char *name,
				   const struct uxdp_afxdp_opts *opts);

/* XDP attach modes, as read back from the kernel. */
enum uxdp_afxdp_xdp_mode {
	UXDP_AFXDP_XDP_NONE = 0,	/* nothing attached (device down) */
	UXDP_AFXDP_XDP_NATIVE,		/* XDP_ATTACHED_DRV */
	UXDP_AFXDP_XDP_GENERIC,		/* XDP_ATTACHED_SKB */
	UXDP_AFXDP_XDP_OTHER,		/* offloaded, or several modes */
};

/* How the program went on. */
enum uxdp_afxdp_attach {
	UXDP_AFXDP_ATTACH_NONE = 0,
	UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER,	/* libxdp multi-program */
	UXDP_AFXDP_ATTACH_LIBXDP_SINGLE,	/* libxdp, no dispatcher */
	/* libbpf's bpf_link: the kernel detaches it when the process
	 * exits, whatever ends it (SIGINT, SIGKILL) */
	UXDP_AFXDP_ATTACH_LIBBPF_LINK,
	UXDP_AFXDP_ATTACH_LIBBPF,		/* bpf_xdp_attach (netlink) */
};

/* What the driver obtained, read back from the kernel where it can be. */
struct uxdp_afxdp_info {
	char ifname[UXDP_IFNAMSIZ];
	uint32_t ifindex;
	/* The interface's queue counts (ETHTOOL_GCHANNELS; 0: unknown). */
	uint32_t if_rx_queues, if_tx_queues;
	uint32_t first_queue, queues;	/* bound by this device */
	uint32_t mtu;
	bool up;			/* sockets bound and in the XSKMAP */
	/* Read back while up (bpf_xdp_query): the mode the interface runs
	 * XDP in, the id of the program it runs (libxdp's dispatcher when
	 * one is used), and how it was attached. */
	uint32_t xdp_mode;		/* enum uxdp_afxdp_xdp_mode */
	uint32_t prog_id;
	uint32_t attach;		/* enum uxdp_afxdp_attach */
	bool bpffs;			/* bpffs mounted at /sys/fs/bpf */
	/* Every bound socket reports XDP_OPTIONS_ZEROCOPY (else: copy). */
	bool zerocopy;
	bool need_wakeup;		/* bound with XDP_USE_NEED_WAKEUP */
	/* Read back with getsockopt: SO_PREFER_BUSY_POLL; the budget is
	 * the one set (the kernel does not report SO_BUSY_POLL_BUDGET). */
	bool busy_poll;
	uint32_t busy_poll_budget;
	uint32_t chunk_size, frames;	/* frames: per queue */
	uint32_t rx_size, tx_size;	/* RX = fill, TX = completion */
	bool shared;
	char group[UXDP_AFXDP_GROUP_NAME_MAX + 1];
	/* Packets the program passed to the stack because their queue has
	 * no socket of ours, over every queue of the interface. */
	uint64_t no_socket;
};

/*
 * Counters of one queue: the kernel's XDP_STATISTICS (summed over every
 * bind of the queue), next to the driver's own. uxdp's queue counters
 * are uxdp_dev_rxq_stats() / uxdp_dev_txq_stats().
 */
struct uxdp_afxdp_queue_stats {
	uint32_t queue;			/* interface queue */
	bool bound;
	bool zerocopy;
	/* XDP_STATISTICS */
	uint64_t rx_dropped;		/* dropped for other reasons */
	uint64_t rx_invalid_descs;
	uint64_t tx_invalid_descs;
	uint64_t rx_ring_full;		/* RX ring full: the poller lagged */
	uint64_t rx_fill_ring_empty_descs;	/* no buffer on the fill ring */
	uint64_t tx_ring_empty_descs;
	/* The program's: passed to the stack, no socket on the queue. */
	uint64_t no_socket;
	/* The driver's */
	uint64_t rx_descs;		/* RX descriptors taken */
	uint64_t rx_bad_descs;		/* naming no buffer we posted, or
					 * out of its chunk: skipped */
	uint64_t fill_posted;		/* buffers posted on the fill ring */
	uint64_t fill_short;		/* refills the pool could not cover */
	uint64_t fill_kicks;		/* wakeups for the fill ring */
	uint64_t rx_kicks;		/* busy-poll recvfrom()s */
	uint64_t tx_nocopy;		/* frames sent from their own buffer */
	uint64_t tx_copy;		/* frames copied into one of ours */
	uint64_t tx_completed;
	uint64_t tx_kicks;		/* sendto()s */
	uint64_t tx_kick_again;		/* ... that said EAGAIN/EBUSY/ENOBUFS */
	uint64_t tx_kick_errors;	/* ... that failed otherwise */
	uint64_t tx_no_buffer;		/* copies refused: no buffer free */
	uint64_t comp_mismatch;		/* completions out of order */
	uint32_t tx_in_flight;		/* sent, not yet completed */
	uint32_t tx_stash;		/* buffers ready for copies */
	uint32_t kernel_held;		/* buffers the kernel holds (fill+RX) */
};

/*
 * Fill @info for afxdp device @dev. Returns 0, or -EINVAL (not an afxdp
 * device) or -EOPNOTSUPP (built without afxdp).
 */
int uxdp_afxdp_info(struct uxdp_dev *dev, struct uxdp_afxdp_info *info);

/*
 * Counters of RX/TX queue @q (0-based, uxdp's numbering) of afxdp device
 * @dev. Returns 0, -EINVAL or -EOPNOTSUPP.
 */
int uxdp_afxdp_queue_stats(struct uxdp_dev *dev, uint32_t q,
			   struct uxdp_afxdp_queue_stats *st);

/*
 * Print what uxdp_afxdp_info() says and, per queue, the kernel's
 * XDP_STATISTICS next to the driver's and uxdp's counters (non-zero ones
 * unless UXDP_STATS_ALL), to @f. Returns 0, -EINVAL, -EIO or -EOPNOTSUPP.
 */
int uxdp_afxdp_print(struct uxdp_dev *dev, FILE *f, uint32_t flags);

/* Names, for printing: "native", "libxdp dispatcher", ... */
const char *uxdp_afxdp_xdp_mode_str(uint32_t mode);
const char *uxdp_afxdp_attach_str(uint32_t attach);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_AFXDP_H */
