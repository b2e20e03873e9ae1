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
 * The central driver op is xdp_xmit(dev, n, frames, flags): transmit out of
 * dev. It returns how many frames it took, 0..n (in order, stopping at the
 * first it could not take), or a negative errno on a general error (device
 * or peer down: none taken), and frees nothing: THE CALLER returns frames
 * [sent, n), or all of them on error, exactly once (the kernel's rule since
 * 5.13). Unknown flag bits give -EINVAL.
 */
#ifndef UXDP_DEV_H
#define UXDP_DEV_H

#include <stdbool.h>
#include <stdint.h>

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
	 * call stops there, so the rest of the call counts here too). */
	uint64_t too_big;
	uint64_t down;		/* frames refused: device or peer down, no prog */
	uint64_t bad_flags;	/* calls refused for unknown flags */
};

/*
 * The driver interface: each driver fills one of these (src/drivers/).
 * poll and xdp_xmit are required; the rest optional.
 */
struct uxdp_dev_ops {
	const char *kind;	/* "veth", "nic", "afxdp", "pcap", ... */
	/* Bring up / down (uxdp_dev_up/down call these). */
	int (*open)(struct uxdp_dev *dev);
	void (*stop)(struct uxdp_dev *dev);
	/*
	 * Receive up to @budget packets on RX queue @q, calling uxdp_xdp_run()
	 * for each with @cpu. Returns the packets processed (<= budget).
	 */
	int (*poll)(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *cpu,
		    int budget);
	/*
	 * Whether RX queue @q has packets waiting (for sleeping pollers).
	 * Called outside any poll, possibly while the device goes down:
	 * read shared state only, never the poller's private caches.
	 */
	bool (*rx_pending)(struct uxdp_dev *dev, uint32_t q);
	/* Transmit @n frames out of @dev; see the rule at the top. */
	int (*xdp_xmit)(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
			uint32_t flags);
	/* Free driver state (uxdp_dev_destroy). */
	void (*destroy)(struct uxdp_dev *dev);
};

/* ---- for drivers -------------------------------------------------------------- */

/*
 * Allocate a device of kind @ops with @nrxq receive and @ntxq transmit queues
 * and @priv_size bytes of driver state (uxdp_dev_priv), and register it under
 * @name (unique). Returns the device (down), or NULL with errno set (EINVAL,
 * EEXIST: name taken, ENOMEM).
 */
struct uxdp_dev *uxdp_dev_alloc(const char *name, const struct uxdp_dev_ops *ops,
				uint32_t nrxq, uint32_t ntxq, size_t priv_size);

/* The driver's state area. */
void *uxdp_dev_priv(const struct uxdp_dev *dev);

/* A driver's RX queue state for uxdp_xdp_run (stats, program, rxq info). */
struct uxdp_xdp_rxq *uxdp_dev_xdp_rxq(struct uxdp_dev *dev, uint32_t q);

/*
 * Count into TX queue @q's stats; a driver calls these inside its xdp_xmit,
 * under its own lock if it has one. @field is a member of uxdp_txq_stats.
 */
struct uxdp_txq_stats *uxdp_dev_txq_stats_ptr(struct uxdp_dev *dev, uint32_t q);

/* Wake the thread polling RX queue @q if it is asleep (cheap if not). */
void uxdp_dev_kick(struct uxdp_dev *dev, uint32_t q);

/* ---- for applications ------------------------------------------------------------- */

/* Stop threads, bring down, unregister and free. NULL is a no-op. */
void uxdp_dev_destroy(struct uxdp_dev *dev);

struct uxdp_dev *uxdp_dev_get_by_name(const char *name);
struct uxdp_dev *uxdp_dev_get_by_index(uint32_t ifindex);
const char *uxdp_dev_name(const struct uxdp_dev *dev);
const char *uxdp_dev_kind(const struct uxdp_dev *dev);
uint32_t uxdp_dev_ifindex(const struct uxdp_dev *dev);
uint32_t uxdp_dev_num_rxq(const struct uxdp_dev *dev);
uint32_t uxdp_dev_num_txq(const struct uxdp_dev *dev);

/* Bring the device up / down. Returns 0 or -errno from the driver. */
int uxdp_dev_up(struct uxdp_dev *dev);
void uxdp_dev_down(struct uxdp_dev *dev);
bool uxdp_dev_is_up(const struct uxdp_dev *dev);

/*
 * Attach @prog to RX queue @q, or to every queue with q = UXDP_ALL_QUEUES
 * (NULL detaches). Safe while traffic flows: when this returns, no poll runs
 * the old program any more. The device takes its own reference on @prog.
 * Returns 0 or -EINVAL (bad queue).
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

/* Copy queue counters (consistent per field, not across fields). */
int uxdp_dev_rxq_stats(const struct uxdp_dev *dev, uint32_t q,
		       struct uxdp_rxq_stats *st);
int uxdp_dev_txq_stats(const struct uxdp_dev *dev, uint32_t q,
		       struct uxdp_txq_stats *st);

/* ---- polling threads ---------------------------------------------------------------- */

struct uxdp_dev_thread_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	int budget;		/* per poll; 0: UXDP_NAPI_BUDGET */
	int cpu;		/* pin every thread to this CPU; -1 or 0..: see flags */
	uint32_t flags;		/* UXDP_THREAD_F_* */
	/* Idle wait before re-checking when woken by nothing, in
	 * microseconds; 0: 10000 (10 ms). */
	uint32_t idle_us;
	size_t :0;
};
#define uxdp_dev_thread_opts__last_field idle_us
#define UXDP_THREAD_F_PIN	(1U << 0)	/* pin to opts.cpu */

/*
 * Start one polling thread per RX queue. A thread polls while there is
 * work, then sleeps until uxdp_dev_kick() (a transmit into the queue with
 * UXDP_XMIT_FLUSH) or the idle timeout. Returns 0, -EALREADY, -EINVAL or
 * -errno from thread creation (nothing started then).
 */
int uxdp_dev_start(struct uxdp_dev *dev, const struct uxdp_dev_thread_opts *opts);

/* Stop and join the polling threads (the queues are left as they are). */
void uxdp_dev_stop(struct uxdp_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_DEV_H */
