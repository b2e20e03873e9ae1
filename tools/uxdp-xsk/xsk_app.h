/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The application side of one uxdp socket, as the kernel's xdpsock sample
 * runs it: a UMEM of its own, the chunks it holds, and the three loops
 *
 *	rxdrop   RX ring -> fill ring (received chunks go straight back)
 *	txonly   free chunks, each holding a packet -> TX ring;
 *	         completion ring -> free chunks
 *	l2fwd    RX ring -> MACs swapped -> TX ring (same socket);
 *	         completion ring -> fill ring
 *
 * each a batch of ring operations per step (peek/reserve of up to @batch
 * entries, one submit and one release), with the need_wakeup protocol and
 * counters of what the application itself saw. uxdp-xsk runs one per
 * socket on a thread of its own; uxdp-bench runs the same code.
 *
 * Every chunk of the UMEM is at all times in exactly one place: the
 * library's (fill ring, the driver, the pool's free list, the completion
 * ring) or the application's (RX ring not yet read, TX ring not yet
 * consumed, its own stack of free chunks). xsk_app_audit() checks it at a
 * quiescent point.
 */
#ifndef UXDP_XSK_APP_H
#define UXDP_XSK_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/uxdp.h>

enum xsk_app_mode { XSK_APP_RXDROP, XSK_APP_TXONLY, XSK_APP_L2FWD };

struct xsk_app_cfg {
	enum xsk_app_mode mode;
	uint32_t batch;		/* descriptors per ring operation */
	uint32_t frames;	/* UMEM chunks */
	uint32_t frame_size;	/* 2048 or 4096 */
	uint32_t ring_size;	/* RX and TX ring entries; 0: the default */
	bool unaligned;		/* UMEM in unaligned mode */
	/* UXDP_XSK_F_COPY, UXDP_XSK_F_ZEROCOPY, UXDP_XSK_F_NEED_WAKEUP */
	uint32_t bind_flags;
	bool poll;		/* sleep when idle instead of spinning */
	bool touch;		/* rxdrop: read each packet's first byte */
	uint32_t tx_len;	/* txonly: packet length */
	uint64_t tx_count;	/* txonly: packets to send; 0: no limit */
	/* Readable when the run must stop (an eventfd nobody reads): a
	 * sleeping application wakes at once. -1: none. */
	int stop_fd;
};

/*
 * What the application counts: one writer (its thread), read by others
 * at any time with relaxed loads (xsk_app_stats_read).
 */
struct xsk_app_stats {
	uint64_t rx_packets;	/* taken from the RX ring */
	uint64_t rx_bytes;
	uint64_t tx_packets;	/* completed (off the completion ring) */
	uint64_t tx_submitted;	/* put on the TX ring */
	uint64_t rx_empty_polls; /* RX ring peeks that found nothing */
	uint64_t fill_wakeups;	/* recvfrom kicks: the fill ring asked */
	uint64_t tx_kicks;	/* sendto kicks */
	uint64_t tx_eagain;	/* kicks that said -EAGAIN (more left) */
	uint64_t tx_errors;	/* kicks that failed otherwise (-ENETDOWN) */
	/* Idle with the fill ring empty and no chunk of its own to post:
	 * the device had nothing to receive into. */
	uint64_t fill_starved;
	uint64_t fill_full;	/* fill ring had no room for a batch */
	uint64_t tx_full;	/* TX ring had no room for a batch */
	uint64_t sleeps;	/* --poll: waits for the socket */
};

#define XSK_APP_NSTATS	(sizeof(struct xsk_app_stats) / sizeof(uint64_t))

/* The counters' names, in struct order. */
extern const char *const xsk_app_stat_names[XSK_APP_NSTATS];

struct xsk_app {
	struct xsk_app_cfg cfg;
	struct uxdp_umem *umem;
	struct uxdp_xsk *xsk;
	/* The socket's rings, as the application uses them. */
	struct uxdp_ring *rx, *tx, *fill, *comp;
	unsigned char *area;
	/* Descriptor address -> its chunk's base: ~(frame_size - 1) when
	 * aligned, the low 48 bits when unaligned (the base is posted on the
	 * fill ring, the offset rides in the high bits). */
	uint64_t base_mask;
	uint32_t fill_size, tx_size;
	/* Chunks in the application's hands (a stack: the chunk reused next
	 * is the one that came back last, warm in the cache). */
	uint64_t *free;
	uint32_t nfree;
	uint64_t outstanding;	/* on the TX ring or in flight */
	uint64_t tx_left;	/* txonly with a count: still to submit */
	uint32_t done;		/* txonly: all sent and completed */
	struct xsk_app_stats st __attribute__((aligned(UXDP_CACHE_LINE)));
};

/*
 * Make the UMEM and the socket on @dev queue @queue, and get the chunks
 * where the mode wants them: rxdrop and l2fwd post every chunk on the fill
 * ring; txonly writes its packet into every chunk and keeps them. Returns
 * 0, or -errno with uxdp_errmsg() saying why (everything undone).
 */
int xsk_app_init(struct xsk_app *a, const struct xsk_app_cfg *cfg,
		 struct uxdp_dev *dev, uint32_t queue);

/* Run the mode's loop until *@stop is set (or txonly is done). */
void xsk_app_run(struct xsk_app *a, const uint32_t *stop);

/* Whether txonly has sent and seen completed everything it had to. */
bool xsk_app_done(const struct xsk_app *a);

/* A copy of the counters, safe while the loop runs. */
void xsk_app_stats_read(const struct xsk_app *a, struct xsk_app_stats *st);

/* Field @i of @st. */
uint64_t xsk_app_stat(const struct xsk_app_stats *st, unsigned int i);

/* Where the UMEM's chunks are (xsk_app_audit). */
struct xsk_app_audit {
	uint32_t chunks;
	/* The library's places (uxdp_umem_audit). */
	uint32_t fill, driver, free_list, comp;
	/* The application's. */
	uint32_t rx_ring, tx_ring, app;
	/* In no place, or in more than one: a bug. */
	uint32_t misplaced;
};

/*
 * Account for every chunk: the library's places and the application's.
 * Only at a quiescent point: the loop stopped and nothing polls the queue.
 * Returns the number of misplaced chunks, or -errno.
 */
int xsk_app_audit(struct xsk_app *a, struct xsk_app_audit *au);

/* Destroy the socket and the UMEM. Returns 0 or -errno. */
int xsk_app_fini(struct xsk_app *a);

/*
 * The device's programs: xsk_app_prog_xsk redirects to the socket bound to
 * the packet's queue (priv is the XSKMAP; a queue without one drops,
 * counted in redirect_miss); xsk_app_prog_drop is txonly's (the sockets
 * receive nothing).
 */
uint32_t xsk_app_prog_xsk(struct uxdp_buff *ctx, void *priv);
uint32_t xsk_app_prog_drop(struct uxdp_buff *ctx, void *priv);

#endif /* UXDP_XSK_APP_H */
