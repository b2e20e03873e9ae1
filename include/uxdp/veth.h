/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The veth driver: a pair of in-process devices. Transmitting on one
 * (uxdp_dev_xmit, XDP_TX, a redirect) puts the frames on the peer's receive
 * ring for the queue (thread index % queues), under that ring's producer
 * lock: one lock per xmit call, the cost bulking amortises. The peer's poll
 * drains the ring and runs its program. As in the kernel, a peer that is
 * down or has no program on that queue refuses frames (-ENXIO), and they
 * are counted and returned by the sender.
 */
#ifndef UXDP_VETH_H
#define UXDP_VETH_H

#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_VETH_RING_SIZE	256	/* VETH_RING_SIZE */

struct uxdp_veth_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t queues;	/* rx = tx queues per side; 0: 1 */
	uint32_t ring_size;	/* per rx queue, power of two; 0: 256 */
	uint32_t mtu;		/* 0: 1500; frames over mtu + 18 are refused */
	size_t :0;
};
#define uxdp_veth_opts__last_field mtu

/*
 * Create the pair @name_a <-> @name_b (both down). Returns 0 and the devices
 * in *@a, *@b, or -errno (EINVAL with uxdp_errmsg(), EEXIST, ENOMEM).
 * Destroy each with uxdp_dev_destroy(), in any order, also while the other
 * end transmits: from then on the survivor's transmits fail with -ENXIO
 * (counted in its txq stats' down) and frames queued to the destroyed end
 * are given back (its rxq stats' drained).
 */
int uxdp_veth_create(const char *name_a, const char *name_b,
		     const struct uxdp_veth_opts *opts, struct uxdp_dev **a,
		     struct uxdp_dev **b);

/* The other end of a veth device, or NULL once it is destroyed. */
struct uxdp_dev *uxdp_veth_peer(struct uxdp_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_VETH_H */
