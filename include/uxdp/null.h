/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The null driver: a device for benchmarks, tests and trying things out.
 * Its receive side is a packet generator: every poll "receives" up to
 * budget copies of a template packet, from a pool of its own, like a NIC on
 * a saturated wire (or at a set rate, or a set number of packets). Its
 * transmit side is a sink whose TX completes at once: frames are counted
 * under the TX queue lock, as a real driver posts them, and returned to
 * their owner.
 *
 *	struct uxdp_dev *gen = uxdp_null_create("gen0", NULL);
 *
 * makes a generator of 64-byte UDP/IPv4 packets with 1024 buffers in
 * flight at most, and a sink.
 */
#ifndef UXDP_NULL_H
#define UXDP_NULL_H

#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_NULL_DEFAULT_FRAMES	1024
#define UXDP_NULL_MAX_LEN		1500

/* Copy the template into each packet as it is handed out, so a program
 * that rewrites packets never sees its own earlier writes (costs a copy
 * per packet; without it the template is written once per buffer, as the
 * kernel's live-frames generator does). */
#define UXDP_NULL_F_REWRITE	(1U << 0)
/* Write a 64-bit sequence number (host order, from 0) at seq_offset in
 * each packet as it is handed out. */
#define UXDP_NULL_F_SEQ		(1U << 1)
/* No receive side: a sink only (no UMEM, no pool). */
#define UXDP_NULL_F_NO_RX	(1U << 2)

struct uxdp_null_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	/* Receive buffers: UMEM chunks of 2 KiB (4 KiB for packets over
	 * 1472 bytes, so that a redirected frame keeps its tailroom), the
	 * packets that can be in flight at once; 0:
	 * UXDP_NULL_DEFAULT_FRAMES. */
	uint32_t rx_frames;
	/* Bytes per packet; 0: the template's length. Longer than the
	 * template: zero-padded; shorter: cut. 14..UXDP_NULL_MAX_LEN. */
	uint32_t rx_len;
	/* The packet; NULL: 64 bytes of UDP/IPv4 between locally
	 * administered MACs. At least 14 bytes (an Ethernet header). */
	const void *rx_template;
	uint32_t rx_template_len;
	uint32_t flags;		/* UXDP_NULL_F_* */
	/* Generate this many packets, then nothing (the queue goes idle and
	 * its poller sleeps); 0: no limit. */
	uint64_t rx_count;
	/* Packets per second, 0: as fast as the queue is polled. A paced
	 * generator wakes its poller with a timer (uxdp_dev_ops.rx_fd). */
	uint64_t rx_pps;
	/* With UXDP_NULL_F_SEQ: where the sequence number goes; 0: 42, the
	 * UDP payload of the default template. */
	uint32_t seq_offset;
	size_t :0;
};
#define uxdp_null_opts__last_field seq_offset

/*
 * A null device named @name with one RX and one TX queue, down. Returns it,
 * or NULL with errno set (EINVAL with uxdp_errmsg(), EEXIST, ENOMEM).
 * uxdp_dev_destroy() frees it; buffers of its still in flight elsewhere
 * (another device's ring) come home later, and its memory is freed then.
 */
struct uxdp_dev *uxdp_null_create(const char *name,
				  const struct uxdp_null_opts *opts);

/* Packets the generator has handed out so far (0 for a sink). */
uint64_t uxdp_null_generated(struct uxdp_dev *dev);

/*
 * A generator with a count has handed out all of it: its queue stays idle
 * from now on. False without a count (it never ends), for a sink, and for
 * a device that is not a null device. The last packets may still be on
 * their way (another device's ring, a socket's RX ring) when it turns true.
 */
bool uxdp_null_done(struct uxdp_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_NULL_H */
