/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp devices: the device model drivers plug into (the kernel's
 * net_device + NAPI + ndo_xdp_xmit).
 *
 * A device has N receive and M transmit queues and a name in a registry.
 * Each receive queue is polled NAPI-style: uxdp_dev_poll(dev, q, budget)
 * processes at most budget packets, running the queue's program on each, and
 * flushes the poll's bulk queues before it returns. One thread polls a given
 * queue at a time; uxdp_dev_start() can run one polling thread per queue.
 *
 * Transmitting out of a device (uxdp_dev_xmit, the driver's xdp_xmit)
 * returns how many frames it took, 0..n (in order, stopping at the first it
 * could not take), or a negative errno on a general error (device or peer
 * down: none taken), and frees nothing: THE CALLER returns frames [sent,
 * n), or all of them on error, exactly once (the kernel's rule since 5.13).
 * Unknown flag bits give -EINVAL.
 *
 * This header is for applications; drivers include <uxdp/driver.h>.
 */
#ifndef UXDP_DEV_H
#define UXDP_DEV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uxdp/common.h>
#include <uxdp/xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_IFNAMSIZ		16
#define UXDP_NAPI_BUDGET	64	/* NAPI_POLL_WEIGHT */

struct uxdp_dev;

/* Transmit queue counters (frames handed to xdp_xmit of this device). */
struct uxdp_txq_stats {
	uint64_t packets;	/* frames taken */
	uint64_t bytes;
	uint64_t xmit_calls;	/* xdp_xmit calls (one lock each) */
	uint64_t full;		/* frames refused: queue/ring full */
	/* Frames refused from the first one longer than the MTU allows (the
	 * call stops there, so the rest of the call counts here too); also
	 * a socket's packets dropped for their length (over the MTU, or
	 * shorter than an Ethernet header). */
	uint64_t too_big;
	uint64_t down;		/* frames refused: device or peer down, no prog */
	uint64_t bad_flags;	/* calls refused for unknown flags */
};

/* Drivers: <uxdp/driver.h> (struct uxdp_dev_ops and the calls drivers make). */
struct uxdp_dev_ops;

/* ---- for applications ------------------------------------------------------------- */

/*
 * Open a device from a port string, the way every uxdp tool names ports:
 *
 *	KIND:ARG[,key[=value]...]
 *
 *	null:gen0[,count=N,len=N,pps=N,frames=N,seq]   generator / sink
 *	veth:NAME                                       an in-process veth end
 *	pcap:FILE[,...]                                 replay / capture
 *	afxdp:IFNAME@Q[-Q][,...]                        a Linux interface
 *
 * (uxdp_port_usage() has each kind's full line.) @name is the uxdp device
 * name; NULL lets the driver pick one. Returns the device, down, or NULL
 * with errno set and uxdp_errmsg() saying why: EINVAL (a malformed string,
 * an unknown or bad parameter), ENODEV (no driver of that kind built in),
 * or the driver's own error. The string is length-checked throughout.
 */
struct uxdp_dev *uxdp_dev_open(const char *port, const char *name);

/*
 * Whether uxdp_dev_open(@port, NULL) would accept @port as far as the
 * string decides: it parses, names a kind there is a driver for, and that
 * driver takes its argument, its parameters and their values. Nothing is
 * opened, created or registered. Returns 0, or the error the open would
 * fail with (-EINVAL, -ENODEV for a kind without a driver) and the same
 * uxdp_errmsg(). What only opening can tell (no such interface or file, a
 * name taken) is the open's. For reading a command line: a string this
 * refuses is bad usage, not a failed set-up.
 */
int uxdp_port_check(const char *port);

/* The kinds uxdp_dev_open() knows, "null, veth, ..." (cut to @len). */
void uxdp_port_kinds(char *buf, size_t len);

/* The usage line of port kind @kind, or NULL if there is no such kind. */
const char *uxdp_port_usage(const char *kind);

/*
 * Destroy a device, also while traffic flows: stop its polling threads and
 * take its queues out of their poll groups, bring it down (frames queued to
 * it are given back and counted in its rxq stats' drained), take it out of
 * the registry and of every redirect map, wait for a grace period, and
 * free it. When this returns no thread touches the device: transmits and
 * redirects that would have reached it fail and are counted (the sender's
 * tx_err / redirect_err / redirect_miss, the map's fallback verdict).
 * Frames of the device's own buffers still travelling elsewhere come home
 * later and free its memory then (uxdp_pool_retire()). Must not be called
 * from inside a poll (a program, a pass handler): it warns and does
 * nothing then. NULL is a no-op.
 */
void uxdp_dev_destroy(struct uxdp_dev *dev);

struct uxdp_dev *uxdp_dev_get_by_name(const char *name);
struct uxdp_dev *uxdp_dev_get_by_index(uint32_t ifindex);
const char *uxdp_dev_name(const struct uxdp_dev *dev);
const char *uxdp_dev_kind(const struct uxdp_dev *dev);
uint32_t uxdp_dev_ifindex(const struct uxdp_dev *dev);
uint32_t uxdp_dev_num_rxq(const struct uxdp_dev *dev);
uint32_t uxdp_dev_num_txq(const struct uxdp_dev *dev);
/*
 * The largest packet the device transmits, Ethernet header not counted
 * (the kernel's dev->mtu): a frame longer than mtu + 18 (the header and a
 * VLAN tag) is refused by xdp_xmit and dropped by a socket's transmit.
 * 0: no limit (null, pcap).
 */
uint32_t uxdp_dev_mtu(const struct uxdp_dev *dev);

/*
 * The link under a device: for a driver on a Linux interface (afxdp), the
 * interface's state as the kernel has it (IFF_UP and the carrier, the
 * kernel's netif_running() and netif_carrier_ok()), whether it still
 * exists, and its MTU now. In-process devices are always UP, with the
 * MTU they enforce.
 */
enum uxdp_link_state {
	UXDP_LINK_UP,		/* up, with carrier: frames move */
	UXDP_LINK_DOWN,		/* down, or no carrier: nothing moves */
	UXDP_LINK_GONE,		/* the interface it is bound to was deleted */
};

struct uxdp_link_info {
	enum uxdp_link_state state;
	uint32_t mtu;		/* the interface's now; 0: unknown or gone */
	/* GONE, and an interface of the same name exists now (made again):
	 * its ifindex; down and up binds the device to it. 0: none. */
	uint32_t new_ifindex;
};

/*
 * Ask the driver for the link's state now (a control call: any thread;
 * for afxdp a few ioctls in the device's namespace). Returns 0, or -errno
 * when it cannot tell. What to do with it is the application's: a port
 * whose link went down keeps frames the kernel has not sent in its
 * rings, and uxdp_dev_down() gives them back (counted in drained); after
 * UXDP_LINK_UP again, uxdp_dev_up() binds anew. Meanwhile a queue whose
 * kernel socket says the link is down refuses transmits (counted as
 * down) and its poller stops kicking it, so no thread spins on it.
 */
int uxdp_dev_link(struct uxdp_dev *dev, struct uxdp_link_info *info);
const char *uxdp_link_state_str(enum uxdp_link_state state);

/*
 * Bring the device up / down. up returns 0 or -errno from the driver, and
 * wakes the threads that poll the device. down waits for polls and
 * transmits in progress to end (a grace period), then the driver gives back
 * every frame still queued to the device (counted in drained); it returns
 * 0, or -EDEADLK when called from inside a poll, where it would wait for
 * itself (nothing changes then).
 */
int uxdp_dev_up(struct uxdp_dev *dev);
int uxdp_dev_down(struct uxdp_dev *dev);
bool uxdp_dev_is_up(const struct uxdp_dev *dev);

/*
 * Attach @prog to RX queue @q, or to every queue with q = UXDP_ALL_QUEUES
 * (NULL detaches). Safe while traffic flows: when this returns, no poll runs
 * the old program any more. The device takes its own reference on @prog,
 * so the caller may uxdp_prog_put() its own right after. Returns 0,
 * -EINVAL (bad queue), or -EDEADLK from inside a poll.
 */
#define UXDP_ALL_QUEUES UINT32_MAX
int uxdp_dev_attach_prog(struct uxdp_dev *dev, uint32_t q,
			 struct uxdp_prog *prog);

/*
 * Where UXDP_PASS packets go (all RX queues): @fn is called with the packet,
 * which is returned to its owner after the call. Without one, PASS packets
 * are dropped and counted (pass_dropped).
 */
void uxdp_dev_set_pass_handler(struct uxdp_dev *dev, uxdp_pass_fn fn,
			       void *arg);

/*
 * Poll RX queue @q once: up to @budget packets, then flush the XDP_TX and
 * redirect bulk queues. Only one thread may poll a given queue at a time.
 * Returns the packets processed, or -EINVAL (bad queue or budget),
 * -ENETDOWN, -EMFILE (more than UXDP_MAX_THREADS threads have polled).
 */
int uxdp_dev_poll(struct uxdp_dev *dev, uint32_t q, int budget);

/*
 * Transmit @n frames out of @dev (the driver's xdp_xmit). Returns how many
 * were taken, or a negative errno if none were. The caller returns frames
 * [sent, n) (or all on error) with uxdp_frame_return_bulk().
 */
int uxdp_dev_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
		  uint32_t flags);

/*
 * Frames per xdp_xmit call when XDP_TX or XDP_REDIRECT sends to this device:
 * 1 (no bulking) .. UXDP_BULK_SIZE (16, the default).
 */
void uxdp_dev_set_bulk(struct uxdp_dev *dev, uint32_t bulk);

/* The device as a redirect target, for uxdp_map_update(). */
struct uxdp_xdp_target *uxdp_dev_target(struct uxdp_dev *dev);

/* The pool RX queue @q receives into, or NULL (a driver without one). */
struct uxdp_pool *uxdp_dev_pool(struct uxdp_dev *dev, uint32_t q);

/* Where the chunks of a device's own pools are (uxdp_dev_audit). */
struct uxdp_dev_audit {
	uint32_t pools;		/* distinct pools of the device's queues */
	uint32_t chunks;	/* chunks of the UMEMs they use */
	/* Allocated: frames in flight (another device's ring, a bulk queue,
	 * a socket, the application's hands). */
	uint32_t in_flight;
	/* Found in no place, or in more than one: always a bug. */
	uint32_t misplaced;
};

/*
 * Account for every buffer of the device's own pools: uxdp_umem_audit() on
 * each UMEM they use, which covers every pool on that UMEM (other queues'
 * and, for a UMEM shared with other devices, theirs too: they must be
 * quiescent as well). At a quiescent point, with nothing polling, every
 * chunk must be in exactly one place. Fills *@a (may be NULL) and returns
 * the number of misplaced chunks (0 is the answer a test wants), or
 * -EINVAL, -ENOMEM. A device without pools of its own reports zeros.
 */
int uxdp_dev_audit(struct uxdp_dev *dev, struct uxdp_dev_audit *a);

/* One counter, as uxdp_dev_stats_walk() hands it over. */
struct uxdp_stat {
	const char *scope;	/* "rx", "tx" or "pool" */
	uint32_t queue;		/* the queue (a pool: its first RX queue) */
	const char *name;	/* the field's name in its stats struct */
	const char *desc;	/* what it counts, a short line */
	uint64_t value;
};

typedef int (*uxdp_stat_fn)(void *arg, const struct uxdp_stat *stat);

/*
 * Call @fn for every counter of @dev: each RX queue's uxdp_rxq_stats, each
 * TX queue's uxdp_txq_stats, then the uxdp_pool_stats of each pool its RX
 * queues receive into, field by field in declaration order. A non-zero
 * return from @fn stops the walk and is returned; otherwise 0, or -EINVAL.
 */
int uxdp_dev_stats_walk(struct uxdp_dev *dev, uxdp_stat_fn fn, void *arg);

#define UXDP_STATS_ALL	(1U << 0)	/* zeros too */
#define UXDP_STATS_DESC	(1U << 1)	/* with what each counts */
/*
 * Print @dev's counters to @f, one a line: "NAME/rx0 drop 1234". Only the
 * non-zero ones unless UXDP_STATS_ALL. Returns 0, -EINVAL or -EIO.
 */
int uxdp_dev_stats_print(struct uxdp_dev *dev, FILE *f, uint32_t flags);

/* Copy queue counters (consistent per field, not across fields). */
int uxdp_dev_rxq_stats(const struct uxdp_dev *dev, uint32_t q,
		       struct uxdp_rxq_stats *st);
int uxdp_dev_txq_stats(const struct uxdp_dev *dev, uint32_t q,
		       struct uxdp_txq_stats *st);

/* ---- polling threads and poll groups ------------------------------------------------ */

/*
 * A poll group is one thread polling a set of (device, queue) pairs, each in
 * turn, run to completion (testpmd puts several ports on one lcore the same
 * way). When a whole round finds no work the thread sleeps until a kick (a
 * transmit into one of its queues with UXDP_XMIT_FLUSH, a device coming
 * up), a driver file descriptor (uxdp_dev_ops.rx_fd) or the idle timeout.
 * A queue is polled by at most one group at a time.
 */
struct uxdp_poll_group;

struct uxdp_poll_group_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	int budget;		/* per queue per round; 0: UXDP_NAPI_BUDGET */
	int cpu;		/* with UXDP_THREAD_F_PIN: the CPU to run on */
	uint32_t flags;		/* UXDP_THREAD_F_* */
	/* Longest sleep before looking again when nothing wakes the
	 * thread, in microseconds; 0: 10000 (10 ms). */
	uint32_t idle_us;
	size_t :0;
};
#define uxdp_poll_group_opts__last_field idle_us
#define UXDP_THREAD_F_PIN	(1U << 0)	/* pin to opts.cpu */

/* Counters of a poll group (its thread is the only writer). */
struct uxdp_poll_group_stats {
	uint64_t rounds;	/* passes over the queues */
	uint64_t busy_rounds;	/* rounds that found work */
	uint64_t packets;	/* packets processed */
	uint64_t sleeps;	/* times the thread went to sleep */
	uint64_t wakeups;	/* sleeps ended by a kick or a driver fd */
};

/*
 * An empty group, not running. @opts may be NULL. Returns it, or NULL with
 * errno set (EINVAL with uxdp_errmsg(), ENOMEM, EMFILE).
 */
struct uxdp_poll_group *uxdp_poll_group_create(
	const struct uxdp_poll_group_opts *opts);

/*
 * Poll RX queue @q of @dev (UXDP_ALL_QUEUES: every one) in the group, at
 * any time, running or not. Returns 0, -EINVAL (bad queue), or -EBUSY if a
 * queue is already polled by a group or a polling thread (nothing added).
 */
int uxdp_poll_group_add(struct uxdp_poll_group *g, struct uxdp_dev *dev,
			uint32_t q);

/*
 * Stop polling @dev's queue @q (UXDP_ALL_QUEUES: all of them). When this
 * returns the group's thread no longer touches it. Returns 0, -ENOENT (not
 * in this group) or -EDEADLK from inside a poll.
 */
int uxdp_poll_group_remove(struct uxdp_poll_group *g, struct uxdp_dev *dev,
			   uint32_t q);

/* Start the group's thread. Returns 0, -EALREADY, or -errno. */
int uxdp_poll_group_start(struct uxdp_poll_group *g);

/* Stop and join the thread (the queues stay in the group). */
void uxdp_poll_group_stop(struct uxdp_poll_group *g);

/* Stop, remove every queue and free. NULL is a no-op. */
void uxdp_poll_group_destroy(struct uxdp_poll_group *g);

/* Copy the group's counters. Returns 0 or -EINVAL. */
int uxdp_poll_group_stats(const struct uxdp_poll_group *g,
			  struct uxdp_poll_group_stats *st);

/*
 * Start one polling thread per RX queue: a poll group of one queue each,
 * every one made with @opts. So UXDP_THREAD_F_PIN pins all of the device's
 * polling threads to the one CPU opts.cpu; to give each queue a CPU of its
 * own, create a poll group per queue (uxdp_poll_group_create with its own
 * cpu, uxdp_poll_group_add, uxdp_poll_group_start) instead.
 * Returns 0, -ENETDOWN (the device is down: bring it up first),
 * -EALREADY, -EBUSY (a queue is in a poll group), -EINVAL, or -errno from
 * thread creation (nothing started then).
 */
int uxdp_dev_start(struct uxdp_dev *dev, const struct uxdp_poll_group_opts *opts);

/* Stop and join the polling threads (the queues are left as they are). */
void uxdp_dev_stop(struct uxdp_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_DEV_H */
