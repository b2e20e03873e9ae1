/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp sockets: AF_XDP sockets for applications, on any uxdp device queue
 * (the kernel's net/xdp/xsk.c, with libxdp's xsk.h as the model for the
 * calls).
 *
 *	UMEM (uxdp_umem_create)            the memory, cut into chunks
 *	  fill ring     app -> library     chunks to receive into
 *	  comp ring     library -> app     chunks whose transmit is done
 *	socket (uxdp_xsk_create: UMEM, device, queue)
 *	  rx ring       library -> app     received packets {addr, len, opts}
 *	  tx ring       app -> library     packets to send
 *
 * Receive: a program on the queue redirects to the socket through a map
 * (uxdp_map_update(map, queue, uxdp_xsk_target(xsk)); the kernel's XSKMAP).
 * Only packets received on the queue the socket is bound to reach it. In
 * zero-copy mode the queue's driver receives into the socket's UMEM (the
 * driver refills from the fill ring with uxdp_pool_alloc_batch) and a
 * packet becomes an RX descriptor without a copy; in copy mode it is copied
 * into a chunk taken from the fill ring. The RX ring and the fill ring's
 * consumer index are published at the end of each poll.
 *
 * Transmit: the application writes TX descriptors and kicks the socket
 * (uxdp_xsk_sendto, the kernel's sendto). In copy mode the kick transmits
 * up to 32 descriptors through the device's xdp_xmit, copying each, and
 * posts their addresses on the completion ring; in zero-copy mode the
 * device's driver pulls the descriptors itself in its poll and completes
 * them when sent. Every descriptor is validated as the kernel does (length,
 * bounds, chunk crossing in aligned mode, options); an invalid one is
 * skipped and counted (tx_invalid_descs), never followed.
 *
 * The application is untrusted: every index it writes is clamped and every
 * descriptor validated, so a buggy or hostile application can corrupt only
 * its own packets, never the library's state or another socket's.
 *
 * need_wakeup (UXDP_XSK_F_NEED_WAKEUP): the TX ring's UXDP_RING_NEED_WAKEUP
 * flag says a kick is needed (always, in copy mode, as the kernel); the fill
 * ring's says a zero-copy driver stopped for want of fill entries.
 *
 * Multi-buffer packets (UXDP_PKT_CONTD) are not supported yet: a socket
 * refuses UXDP_XSK_F_SG, and TX descriptors with the option are invalid.
 */
#ifndef UXDP_XSK_H
#define UXDP_XSK_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/common.h>
#include <uxdp/dev.h>
#include <uxdp/pool.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>
#include <uxdp/xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_XSK_RING_DEFAULT	2048	/* XSK_RING_{PROD,CONS}__DEFAULT_NUM_DESCS */
/* Descriptors one copy-mode kick transmits (the kernel's TX_BATCH_SIZE). */
#define UXDP_XSK_TX_BATCH	32
/* How long a copy-mode kick waits, without progress, for a device whose
 * queue is full to take the rest of its batch (uxdp_xsk_sendto). */
#define UXDP_XSK_TX_WAIT_MS	20

/* Bind flags: the kernel's XDP_* bind flags, same bits. */
#define UXDP_XSK_F_SHARED_UMEM	(1U << 0)  /* informative: implied */
#define UXDP_XSK_F_COPY		(1U << 1)  /* force copy mode */
#define UXDP_XSK_F_ZEROCOPY	(1U << 2)  /* zero-copy or fail */
#define UXDP_XSK_F_NEED_WAKEUP	(1U << 3)  /* use the need_wakeup flags */
#define UXDP_XSK_F_SG		(1U << 4)  /* multi-buffer: not supported */
/* uxdp's own: a socket without an RX or a TX ring. */
#define UXDP_XSK_F_NO_RX	(1U << 16)
#define UXDP_XSK_F_NO_TX	(1U << 17)

/*
 * TX metadata (the kernel's struct xsk_tx_metadata, same layout): with a
 * UMEM made with UXDP_UMEM_F_TX_METADATA_LEN and tx_metadata_len >= 24, a
 * TX descriptor with UXDP_TX_METADATA has this in the bytes before its
 * packet. A checksum request is always carried out in software (uxdp
 * devices offload nothing): the one's-complement sum from csum_start to the
 * packet's end, stored at csum_start + csum_offset, where the application
 * put the pseudo-header sum. The descriptor is invalid (counted, its
 * address completed, nothing sent) when the UMEM has no metadata length,
 * when the request has flags outside UXDP_TXMD_F_VALID, or when a checksum
 * does not fit the packet. Timestamp and launch-time requests are ignored.
 */
#define UXDP_TXMD_F_TIMESTAMP	(1U << 0)	/* XDP_TXMD_FLAGS_TIMESTAMP */
#define UXDP_TXMD_F_CHECKSUM	(1U << 1)	/* XDP_TXMD_FLAGS_CHECKSUM */
#define UXDP_TXMD_F_LAUNCH_TIME	(1U << 2)	/* XDP_TXMD_FLAGS_LAUNCH_TIME */
#define UXDP_TXMD_F_VALID	(UXDP_TXMD_F_TIMESTAMP | UXDP_TXMD_F_CHECKSUM | \
				 UXDP_TXMD_F_LAUNCH_TIME)

struct uxdp_xsk_tx_metadata {
	uint64_t flags;
	union {
		struct {
			uint16_t csum_start;
			uint16_t csum_offset;
			uint64_t launch_time;
		} request;
		struct {
			uint64_t tx_timestamp;
		} completion;
	};
};

struct uxdp_xsk_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t rx_size;	/* RX ring entries, power of two; 0: 2048 */
	uint32_t tx_size;	/* TX ring entries, power of two; 0: 2048 */
	/* A socket that is not the UMEM's first has fill and completion
	 * rings of its own (the kernel's shared UMEM): their sizes; 0:
	 * enough for every chunk. */
	uint32_t fill_size;
	uint32_t comp_size;
	uint32_t flags;		/* UXDP_XSK_F_* */
	size_t :0;
};
#define uxdp_xsk_opts__last_field flags

struct uxdp_xsk;

/*
 * A socket on RX queue @queue of @dev over @umem. The first socket on a
 * UMEM uses the UMEM's fill and completion rings; every further one gets
 * its own (uxdp_xsk_fill_ring): share a UMEM between queues and devices so
 * that a redirect between them is a descriptor, not a copy. One socket per
 * (device, queue). Zero-copy needs a driver that can receive into the
 * socket's UMEM; without UXDP_XSK_F_ZEROCOPY a socket falls back to copy
 * quietly, as the kernel does (uxdp_xsk_options says which).
 * Returns the socket, or NULL with errno set and uxdp_errmsg() saying why:
 * EINVAL (bad size or flags, bad queue), EBUSY (the queue has a socket),
 * EOPNOTSUPP (zero-copy or multi-buffer asked for and not possible), ENOMEM.
 */
struct uxdp_xsk *uxdp_xsk_create(struct uxdp_umem *umem, struct uxdp_dev *dev,
				 uint32_t queue,
				 const struct uxdp_xsk_opts *opts);

/*
 * Unbind and free, also while traffic flows: the socket leaves every map,
 * a grace period passes, a zero-copy driver gives the UMEM back. Buffers
 * still in flight come home later. Returns 0, or -EDEADLK from inside a
 * poll. NULL is a no-op.
 */
int uxdp_xsk_destroy(struct uxdp_xsk *xsk);

/* The application's ends of the socket's four rings. */
struct uxdp_ring *uxdp_xsk_rx_ring(struct uxdp_xsk *xsk);	/* consumer */
struct uxdp_ring *uxdp_xsk_tx_ring(struct uxdp_xsk *xsk);	/* producer */
struct uxdp_ring *uxdp_xsk_fill_ring(struct uxdp_xsk *xsk);	/* producer */
struct uxdp_ring *uxdp_xsk_comp_ring(struct uxdp_xsk *xsk);	/* consumer */

/* The socket as a redirect target, for uxdp_map_update() (an XSKMAP). */
struct uxdp_xdp_target *uxdp_xsk_target(struct uxdp_xsk *xsk);

struct uxdp_umem *uxdp_xsk_umem(const struct uxdp_xsk *xsk);
struct uxdp_dev *uxdp_xsk_dev(const struct uxdp_xsk *xsk);
uint32_t uxdp_xsk_queue(const struct uxdp_xsk *xsk);

/*
 * The kernel's sendto() on the socket: in copy mode, transmit up to
 * UXDP_XSK_TX_BATCH descriptors from the TX ring now (a device whose queue
 * is full gets the time its poller needs to make room, as the kernel's
 * veth peer takes its frames within the call; up to UXDP_XSK_TX_WAIT_MS
 * without progress); in zero-copy mode, wake the driver. Returns 0,
 * -EAGAIN (descriptors are left: more than a batch waits, the device
 * stayed full, or the completion ring is full: kick again), -EBUSY (a
 * packet longer than the device's MTU + 18, or shorter than 14 bytes, was
 * dropped: its address is on the completion ring, the call stopped after
 * it; the kernel's answer too), -ENETDOWN, -ENOBUFS (no TX ring).
 */
int uxdp_xsk_sendto(struct uxdp_xsk *xsk);

/* The kernel's recvfrom(): wake a zero-copy driver waiting for fill
 * entries (need_wakeup). Returns 0. */
int uxdp_xsk_recvfrom(struct uxdp_xsk *xsk);

/*
 * The kernel's poll() on the socket: kick as sendto does, then report
 * POLLIN if the RX ring has entries and POLLOUT if the TX ring is at most
 * half full; wait up to @timeout_ms (-1: forever) for one of @events.
 * Returns the events that are ready (0 on timeout), or -errno.
 */
int uxdp_xsk_poll(struct uxdp_xsk *xsk, short events, int timeout_ms);

/*
 * A file descriptor to wait on in your own poll()/epoll loop: readable
 * after the socket was armed (uxdp_xsk_arm) and entries reached its RX
 * ring. Arming and checking the ring after it avoids a lost wake-up, as
 * the need_wakeup protocol does. Read it (8 bytes) to clear it.
 */
int uxdp_xsk_fd(const struct uxdp_xsk *xsk);
void uxdp_xsk_arm(struct uxdp_xsk *xsk);

/* The kernel's struct xdp_statistics, same fields. */
struct uxdp_xsk_stats {
	uint64_t rx_dropped;		/* too big, or no fill entry (copy) */
	uint64_t rx_invalid_descs;	/* never: the library writes RX */
	uint64_t tx_invalid_descs;	/* invalid TX descriptors skipped */
	uint64_t rx_ring_full;		/* RX ring full: packet dropped */
	uint64_t rx_fill_ring_empty_descs; /* fill ring found empty */
	uint64_t tx_ring_empty_descs;	/* a kick that found no TX work */
};

int uxdp_xsk_stats(const struct uxdp_xsk *xsk, struct uxdp_xsk_stats *st);

/* The kernel's XDP_OPTIONS: UXDP_XSK_OPT_ZEROCOPY if the socket is. */
#define UXDP_XSK_OPT_ZEROCOPY	(1U << 0)
uint32_t uxdp_xsk_options(const struct uxdp_xsk *xsk);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_XSK_H */
