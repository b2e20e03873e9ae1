/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The null driver: a device for benchmarks and tests. Its receive side is a
 * packet generator (every poll "receives" up to budget copies of a template
 * packet from a pool of its own, like a NIC on a saturated wire); its
 * transmit side is a sink whose TX completes at once (frames are counted
 * under the TX queue lock, as a real driver posts them, and returned to
 * their owner).
 */
#ifndef UXDP_NULL_H
#define UXDP_NULL_H

#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uxdp_null_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	/* Receive buffers (UMEM chunks of 2 KiB); 0: no receive side. */
	uint32_t rx_frames;
	/* Bytes per generated packet; 0: 64. At most 1500. */
	uint32_t rx_len;
	/* The packet, copied once into every buffer; NULL: a UDP/IPv4
	 * frame between locally administered MACs. */
	const void *rx_template;
	uint32_t rx_template_len;
	size_t :0;
};
#define uxdp_null_opts__last_field rx_template_len

/*
 * A null device named @name with one RX and one TX queue, down. Returns it,
 * or NULL with errno set (EINVAL with uxdp_errmsg(), EEXIST, ENOMEM).
 * uxdp_dev_destroy() frees it; its receive buffers must all be back (no
 * frames of it queued anywhere) by then.
 */
struct uxdp_dev *uxdp_null_create(const char *name,
				  const struct uxdp_null_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_NULL_H */
