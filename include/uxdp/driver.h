/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp driver interface: what a driver implements (struct uxdp_dev_ops) and
 * every uxdp call a driver may make, grouped by the driver code that makes
 * it, as the kernel's xdp_sock_drv.h groups its calls. The in-tree drivers
 * (src/drivers/: veth, null, afxdp, pcap) use this header and the public
 * layer headers only, exactly as an out-of-tree driver would.
 *
 * The contract in brief:
 *   - poll(dev, q, ctx, budget) receives up to budget packets on RX queue q
 *     and hands them to uxdp_rx_run_batch(ctx, ...). One thread polls a
 *     queue at a time; that thread owns the queue's pool (the dev layer
 *     hands the pool over when the polling thread changes, see rx_pool).
 *   - xdp_xmit(dev, n, frames, flags) takes frames in order, stops at the
 *     first it cannot take, returns how many it took (or -errno if none)
 *     and frees nothing: the caller returns frames [sent, n). Any thread may
 *     call it; it is inside a read-side section, so the device and the
 *     devices it reaches (a veth peer) stay alive for the call.
 *   - Buffers received into a pool carry their queue in buff->rxq
 *     (uxdp_rxq_pool_create(), or uxdp_rxq_use_pool() for a pool the
 *     driver made); frames remember their owner and go home through
 *     uxdp_frame_return_bulk() from any thread.
 */
#ifndef UXDP_DRIVER_H
#define UXDP_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/common.h>
#include <uxdp/dev.h>
#include <uxdp/pool.h>
#include <uxdp/spinlock.h>
#include <uxdp/xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The poll context: the calling thread's per-poll datapath state (bulk
 * queues, pending redirect, the queue being polled). Opaque; a driver gets
 * one as poll()'s argument and passes it on.
 */
struct uxdp_xdp_cpu;

/* ---- What a driver implements --------------------------------------------------- */

struct uxdp_dev_ops {
	const char *kind;	/* "veth", "null", "afxdp", "pcap", ... */
	/* Bring up / down (uxdp_dev_up, uxdp_dev_down). down calls stop
	 * after a grace period: no poll or transmit of the device runs. */
	int (*open)(struct uxdp_dev *dev);
	void (*stop)(struct uxdp_dev *dev);
	/*
	 * Receive up to @budget packets on RX queue @q and run them with
	 * uxdp_rx_run_batch(@ctx, ...). Returns the packets processed
	 * (<= budget), or -errno.
	 */
	int (*poll)(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *ctx,
		    int budget);
	/*
	 * Whether RX queue @q has packets waiting (for sleeping pollers).
	 * Called outside any poll, possibly while the device goes down:
	 * read shared state only, never the poller's private caches.
	 */
	bool (*rx_pending)(struct uxdp_dev *dev, uint32_t q);
	/* Transmit @n frames out of @dev; see the contract at the top. */
	int (*xdp_xmit)(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
			uint32_t flags);
	/*
	 * A file descriptor that becomes readable when RX queue @q has work
	 * (a kernel socket, a timer), for a sleeping poller to wait on beside
	 * its kick; -1 if none. Asked once, when the queue joins a poll group.
	 * The driver consumes whatever makes it readable in its poll.
	 */
	int (*rx_fd)(struct uxdp_dev *dev, uint32_t q);
	/*
	 * The pool RX queue @q receives into, if the driver has one of its
	 * own (uxdp_dev_pool(), uxdp_dev_audit(), and the ownership handover
	 * to the polling thread); NULL otherwise.
	 */
	struct uxdp_pool *(*rx_pool)(struct uxdp_dev *dev, uint32_t q);
	/*
	 * uxdp_dev_destroy(), before its grace period: take the device out of
	 * wherever other devices find it (a veth peer's pointer), so that
	 * after the grace period nobody can reach it.
	 */
	void (*unlink)(struct uxdp_dev *dev);
	/* Free driver state (uxdp_dev_destroy, after the grace period). */
	void (*destroy)(struct uxdp_dev *dev);
	/*
	 * Zero-copy AF_XDP (uxdp/xsk.h): from now on receive RX queue @q
	 * into @pool, the socket's (refill with uxdp_pool_alloc_batch from
	 * it, as ice does), and pull the socket's TX descriptors yourself
	 * (uxdp_xsk_tx_peek_batch); NULL: back to your own memory, every
	 * buffer of the socket's pool given back. While receiving into the
	 * socket's pool, the queue's rxq info says UXDP_MEM_XSK (the memory
	 * is the application's: the library puts no frame header there).
	 * Called with no poll of queue @q running and none starting until
	 * it returns (the queue is paused around the call, as the kernel
	 * disables NAPI), so the queue's state is the driver's alone. A
	 * driver without it gives copy mode only.
	 */
	int (*xsk_pool_setup)(struct uxdp_dev *dev, uint32_t q,
			      struct uxdp_pool *pool);
	/*
	 * The link under the device, for uxdp_dev_link() (a control call,
	 * any thread, up or down): its state and MTU into @info. NULL: the
	 * link is always up, with the device's MTU.
	 */
	int (*link)(struct uxdp_dev *dev, struct uxdp_link_info *info);
};

/* ---- Set-up: the driver's create function ------------------------------------ */

/*
 * Allocate a device of kind @ops with @nrxq receive and @ntxq transmit queues
 * and @priv_size bytes of zeroed driver state (uxdp_dev_priv), and register
 * it under @name (unique). Returns the device (down), or NULL with errno set
 * (EINVAL, EEXIST: name taken, ENOMEM).
 */
struct uxdp_dev *uxdp_dev_alloc(const char *name, const struct uxdp_dev_ops *ops,
				uint32_t nrxq, uint32_t ntxq, size_t priv_size);

/* The driver's state area (cache-line aligned). */
void *uxdp_dev_priv(const struct uxdp_dev *dev);

/*
 * RX queue @q's information, which every buffer received on it points to
 * (buff->rxq): pass it to uxdp_pool_set_rxq() for a pool's buffers, and set
 * its mem member to say who owns received memory (UXDP_MEM_POOL for pool
 * heads, UXDP_MEM_FRAME for frames received from elsewhere).
 */
struct uxdp_rxq_info *uxdp_dev_rxq_info(struct uxdp_dev *dev, uint32_t q);

/*
 * RX queue @q receives into @pool's heads (the kernel's
 * xdp_rxq_info_reg_mem_model() with MEM_TYPE_PAGE_POOL): the queue's mem is
 * UXDP_MEM_POOL, every buffer of @pool reports the queue, and the pool is
 * left disowned until the dev layer hands it to the thread that polls @q
 * (return it from the rx_pool op); returns until then are remote.
 * Returns 0, or -EINVAL (no device or pool, no such queue).
 */
int uxdp_rxq_use_pool(struct uxdp_dev *dev, uint32_t q,
		      struct uxdp_pool *pool);

/*
 * A pool of the device's own for RX queue @q (the kernel's
 * page_pool_create() for a queue): a UMEM of @frames chunks of
 * @chunk_size bytes, every chunk on the pool's fill ring, used by the
 * queue as uxdp_rxq_use_pool() says. Returns the pool (its UMEM:
 * uxdp_pool_umem()), or NULL with errno set and uxdp_errmsg() saying why.
 * It goes with uxdp_pool_retire(pool, UXDP_POOL_RETIRE_UMEM) when the
 * last of its buffers is home.
 */
struct uxdp_pool *uxdp_rxq_pool_create(struct uxdp_dev *dev, uint32_t q,
				       uint32_t frames, uint32_t chunk_size);

/* The MTU the device enforces on transmit (uxdp_dev_mtu), if any: set it
 * at create and when it changes. */
void uxdp_dev_set_mtu(struct uxdp_dev *dev, uint32_t mtu);

/* Errors: uxdp_set_error() and uxdp_clear_error() in <uxdp/common.h>. */

/*
 * Messages (warnings a driver cannot return as an error: a queue without a
 * socket, a fallback taken) go through the application's print callback
 * (uxdp_set_print); the default prints UXDP_WARN to stderr.
 */
void uxdp_pr(enum uxdp_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- Receive: the driver's poll ---------------------------------------------- */

/*
 * Run the queue's program on @n buffers received together and carry out
 * each verdict: PASS goes to the pass handler, DROP and ABORTED return the
 * buffer, TX and REDIRECT turn it into a frame on a bulk queue (flushed when
 * full and when the poll ends). A queue without a program drops (counted).
 * The buffers are the datapath's from here on.
 */
void uxdp_rx_run_batch(struct uxdp_xdp_cpu *ctx, struct uxdp_buff **bufs,
		       uint32_t n);

/* uxdp_rx_run_batch() for one buffer. Returns the verdict carried out. */
uint32_t uxdp_rx_run(struct uxdp_xdp_cpu *ctx, struct uxdp_buff *buf);

/* Frames given back unprocessed when RX queue @q went down (drained). */
void uxdp_rxq_count_drained(struct uxdp_dev *dev, uint32_t q, uint32_t n);

/* ---- Transmit: the driver's xdp_xmit ------------------------------------------ */

/*
 * The calling thread's index, 0..UXDP_MAX_THREADS-1 (smp_processor_id):
 * spread transmitting threads over TX queues with it.
 */
uint32_t uxdp_thread_index(void);

/* Whether @dev is up (cheap: one load). */
bool uxdp_dev_is_up(const struct uxdp_dev *dev);

/* Whether RX queue @q of @dev has a program (its NAPI would be on). */
bool uxdp_dev_rxq_has_prog(struct uxdp_dev *dev, uint32_t q);

/*
 * Count a transmit call into TX queue @q's stats: @sent frames of @bytes
 * taken, one xdp_xmit call. Counters have one writer at a time: call it
 * under the queue's lock (a driver without one uses the atomic form).
 */
void uxdp_txq_count(struct uxdp_dev *dev, uint32_t q, uint32_t sent,
		    uint64_t bytes);
void uxdp_txq_count_atomic(struct uxdp_dev *dev, uint32_t q, uint32_t sent,
			   uint64_t bytes);

/* Why frames were refused, for uxdp_txq_count_refused(). */
enum uxdp_txq_refusal {
	UXDP_TXQ_FULL,		/* queue or ring full */
	UXDP_TXQ_TOO_BIG,	/* from the first frame over the MTU on */
	UXDP_TXQ_DOWN,		/* device or peer down, no program */
	UXDP_TXQ_BAD_FLAGS,	/* unknown xmit flags: counts the call */
};

/*
 * Count @sent frames of @bytes as sent, without counting a call: for a
 * driver that counts frames when the hardware (or the kernel) is done
 * with them, and its xdp_xmit calls with uxdp_txq_count(dev, q, 0, 0).
 * The same one-writer rule.
 */
void uxdp_txq_count_sent(struct uxdp_dev *dev, uint32_t q, uint32_t sent,
			 uint64_t bytes);

/* Count @n frames refused for @why, from any thread (an atomic add). */
void uxdp_txq_count_refused(struct uxdp_dev *dev, uint32_t q,
			    enum uxdp_txq_refusal why, uint32_t n);

/* Wake whoever polls RX queue @q of @dev if it sleeps (cheap if not):
 * the doorbell after queueing frames to it, on every UXDP_XMIT_FLUSH. */
void uxdp_dev_kick(struct uxdp_dev *dev, uint32_t q);

/* ---- Zero-copy AF_XDP sockets: the driver side (kernel xdp_sock_drv.h) ---------- */

/*
 * Up to @max TX descriptors of the socket bound to @pool, validated as the
 * kernel does (invalid ones are skipped and counted), into @descs; a
 * completion slot is reserved for each. The addresses are UMEM addresses
 * (uxdp_umem_addr_ptr gives the data). Returns how many, 0..@max.
 */
uint32_t uxdp_xsk_tx_peek_batch(struct uxdp_pool *pool, struct uxdp_desc *descs,
				uint32_t max);

/* @n of the descriptors peeked are sent: post them on the completion ring,
 * in the order peeked (the kernel's xsk_tx_completed). */
void uxdp_xsk_tx_completed(struct uxdp_pool *pool, uint32_t n);

/* need_wakeup, as the kernel's xsk_set/clear_{rx,tx}_need_wakeup: set on
 * the fill ring when refill stopped for want of entries, on the TX ring
 * when the driver will not look at it until kicked. No-ops for a socket
 * bound without UXDP_XSK_F_NEED_WAKEUP. */
void uxdp_xsk_set_rx_need_wakeup(struct uxdp_pool *pool);
void uxdp_xsk_clear_rx_need_wakeup(struct uxdp_pool *pool);
void uxdp_xsk_set_tx_need_wakeup(struct uxdp_pool *pool);
void uxdp_xsk_clear_tx_need_wakeup(struct uxdp_pool *pool);

/* ---- Opening by port string (uxdp_dev_open, uxdp_port_check) ------------------- */

#define UXDP_PORT_STR_MAX	512
#define UXDP_PORT_KIND_MAX	16
#define UXDP_PORT_ARG_MAX	256
#define UXDP_PORT_PARAMS_MAX	16

/* A parsed port string: KIND:ARG[,key[=value]...]. */
struct uxdp_port {
	char kind[UXDP_PORT_KIND_MAX];
	char arg[UXDP_PORT_ARG_MAX];
	uint32_t nparams;
	struct uxdp_port_param {
		char key[32];
		char value[UXDP_PORT_ARG_MAX];
	} params[UXDP_PORT_PARAMS_MAX];
};

/*
 * A driver that opens ports of one kind.
 *
 * A port string is checked twice: when a tool reads its command line
 * (uxdp_port_check(), a bad string is bad usage) and when it is opened.
 * The two must agree, so a driver parses the string into its create
 * options in one function that both check and open call, and open then
 * creates from those options:
 *
 *	parse(port, name, &opts)  the argument, keys and values into the
 *				  create's options, checked; pure
 *	check(port)		  parse(port, NULL, &opts)
 *	open(port, name)	  parse(port, name, &opts), then create
 *
 * Whatever the string alone decides is the parse's: the argument, unknown
 * keys, each value and how values go together, the options the create
 * would refuse, a device name the string gives (uxdp_port_check_name()).
 * What only opening can tell stays open's: no such interface or file, a
 * name taken, a device to loop to that is not there.
 */
struct uxdp_port_driver {
	const char *kind;	/* before the ':' */
	const char *usage;	/* one line: "pcap:FILE[,loop=N]..." */
	/* Open @port as a device named @name (NULL: pick one). Returns the
	 * device, down, or NULL with errno and uxdp_set_error() set. */
	struct uxdp_dev *(*open)(const struct uxdp_port *port,
				 const char *name);
	/*
	 * Whether open(@port, NULL) would accept @port as far as the string
	 * decides (above). No side effects: nothing opened, created or
	 * registered, no file or interface looked at. Returns 0, or what
	 * open would fail with: a negative errno and uxdp_set_error() with
	 * the same text. NULL: uxdp_port_check() only parses.
	 */
	int (*check)(const struct uxdp_port *port);
};

/*
 * Add a driver's port kind (the in-tree ones are there already). Returns 0,
 * -EEXIST (the kind is taken), -EINVAL, -ENOSPC.
 */
int uxdp_port_register(const struct uxdp_port_driver *drv);

/* Parse @str into @port. Returns 0 or -EINVAL (uxdp_errmsg() says why). */
int uxdp_port_parse(const char *str, struct uxdp_port *port);

/* The value of parameter @key ("" for a bare flag), or NULL if absent. */
const char *uxdp_port_get(const struct uxdp_port *port, const char *key);

/* Whether flag @key is set ("key", "key=1", "key=yes", "key=on"). */
bool uxdp_port_get_flag(const struct uxdp_port *port, const char *key);

/*
 * Parameter @key as a number in [@min, @max] (k/M/G suffixes: x1000), or
 * @def if absent. Returns 0 or -EINVAL with a message naming the range.
 */
int uxdp_port_get_u64(const struct uxdp_port *port, const char *key,
		      uint64_t def, uint64_t min, uint64_t max, uint64_t *out);

/* -EINVAL (naming the first) if @port has a key not in NULL-ended @keys. */
int uxdp_port_check_keys(const struct uxdp_port *port,
			 const char *const *keys);

/*
 * -EINVAL, with a message naming @port and @what ("NAME", "peer"), unless
 * @name is one uxdp_dev_alloc() takes: 1..UXDP_IFNAMSIZ-1 characters
 * (NULL counts as empty). For the name a port string gives a device.
 */
int uxdp_port_check_name(const struct uxdp_port *port, const char *what,
			 const char *name);

/* ---- Pacing a generator or a replay ------------------------------------------- */

/*
 * A packet rate for a queue that makes its own packets (null's generator,
 * pcap's replay, nic's wire): how many are due now, and a timerfd that
 * wakes an idle poller when more are (return it from the rx_fd op).
 * After a stall it catches up by at most UXDP_PACER_BURST packets rather
 * than bursting everything missed. One poller commits; anyone may ask.
 */
#define UXDP_PACER_BURST	1024

struct uxdp_pacer {
	uint64_t num, den;	/* num / den packets per second; num 0: off */
	uint64_t t0;		/* ns, CLOCK_MONOTONIC (relaxed atomics) */
	uint64_t sent;		/* packets since t0 (relaxed atomics) */
	int fd;			/* timerfd when num; read uxdp_pacer_fd() */
};

/*
 * Set up a rate of @num / @den packets per second (@num 0: unpaced, no
 * timer; @den 0 means 1). Returns 0, or a negative errno with
 * uxdp_errmsg() saying why. The timer is armed by uxdp_pacer_start().
 */
int uxdp_pacer_init(struct uxdp_pacer *p, uint64_t num, uint64_t den);
/* Close the timer. Safe on a zeroed pacer (a create that failed early). */
void uxdp_pacer_fini(struct uxdp_pacer *p);
/* The device went up: the clock starts now, the timer ticks (at most
 * every 100 us, at least every second). 0 or a negative errno. */
int uxdp_pacer_start(struct uxdp_pacer *p);
/* The device went down: the timer stops. */
void uxdp_pacer_stop(struct uxdp_pacer *p);
/*
 * Packets due now, at most UXDP_PACER_BURST; UINT64_MAX when unpaced.
 * With @commit (the poller only) a stall's backlog beyond one burst is
 * forgotten; without it the call changes nothing (an rx_pending check on
 * any thread).
 */
uint64_t uxdp_pacer_due(struct uxdp_pacer *p, bool commit);
/* The poller made @n packets (counted against what is due). */
void uxdp_pacer_sent(struct uxdp_pacer *p, uint64_t n);
/* The poller consumes the timer's ticks, so an idle sleep waits for the
 * next one. */
void uxdp_pacer_ack(struct uxdp_pacer *p);
/* What the rx_fd op returns: the timer, or -1 when unpaced (also for a
 * pacer still zeroed: fd 0 there is not ours). */
int uxdp_pacer_fd(const struct uxdp_pacer *p);

/* ---- A lock for transmit paths ------------------------------------------------ */

/* struct uxdp_spinlock, uxdp_spin_lock() and friends: <uxdp/spinlock.h>,
 * included above. */

/* ---- Buffers and UMEM addresses ------------------------------------------------- */

/*
 * In <uxdp/pool.h>, the pool layer's own header, under "For drivers":
 * uxdp_buff_umem_addr(), uxdp_buff_chunk_addr(), uxdp_pool_buff_at(), with
 * uxdp_pool_alloc_batch(), uxdp_buff_set_size() and the rest of the
 * refill path.
 */

#ifdef __cplusplus
}
#endif

#endif /* UXDP_DRIVER_H */
