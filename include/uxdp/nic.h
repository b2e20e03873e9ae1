/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The nic driver: a multi-queue NIC model, the in-process stand-in for an
 * ice or i40e port. Each queue pair has a "hardware" RX descriptor ring
 * that the driver posts buffers to and a "hardware" TX descriptor ring that
 * the driver posts frames to; the hardware side is simulated inline in the
 * queue's poll, just before the driver's clean loop reads what it did.
 *
 * Receive (per queue, in its poll, ice's zero-copy path):
 *   1. the hardware "DMAs" up to budget packets from the wire into posted
 *      descriptors: writes each packet into the descriptor's buffer, sets
 *      its length and its done bit; a generated packet that finds no
 *      posted descriptor is lost (rx_missed), a loop peer's waits in the
 *      wire FIFO;
 *   2. the clean loop reads done descriptors in order, sets each buffer's
 *      length (uxdp_buff_set_size) and runs the program on the batch;
 *   3. refill: once at least refill_threshold descriptors are unused, all
 *      of them are refilled in one go, from the end of the ring and then
 *      from its start when it wraps (one uxdp_pool_alloc_batch call per
 *      contiguous part, or one uxdp_pool_alloc per descriptor with
 *      UXDP_NIC_F_SINGLE_ALLOC), and the tail is bumped once. As with ice,
 *      one descriptor always stays unused: at most rx_ring - 1 are posted.
 *
 * The wire of a nic is (a) its packet generator, UDP/IPv4 flows, or (b) a
 * loop to another nic (uxdp_nic_loop): what one transmits arrives on the
 * other's wire. Either way every packet goes to the queue RSS picks for it:
 * the Toeplitz hash of its IPv4 or IPv6 (source, destination) and UDP/TCP
 * (source port, destination port), with a 40-byte key, looked up in a 128-entry
 * indirection table (hash & 127). The generator computes each flow's hash
 * once, at create time, and gives each queue the flows that map to it, so
 * queues share no generator state and scale across threads. A loop peer's
 * hardware hashes each packet it sends and puts it on that queue's wire
 * FIFO (wire_fifo packets, several senders; full: dropped and counted).
 *
 * Transmit: xdp_xmit posts frames to a TX queue's hardware ring under the
 * queue's lock (full: refused and counted); the hardware of the queue pair
 * "sends" them when RX queue q is next polled (to the loop peer, or to
 * nowhere), and the poll after that cleans the completions (frames go home
 * with uxdp_frame_return_bulk). TX queue q is serviced by the polls of RX
 * queue q, as a NIC's queue pair is by one NAPI: poll the queues of a nic
 * you transmit into.
 *
 * Memory: every queue has a UMEM and a pool of its own (frames chunks of
 * 2 KiB, 4 KiB for packets over 1472 bytes and for a nic without a
 * generator, which takes every frame up to UXDP_NIC_MAX_TX_LEN from its
 * cable); uxdp_dev_pool(dev, q) is it,
 * and uxdp_dev_audit() accounts for every chunk of each. A packet longer
 * than a receive buffer holds (its room after the XDP headroom and a
 * frame's tailroom) is dropped and counted (rx_oversize). Down gives back
 * what the rings hold: posted buffers to their pool, TX descriptors
 * completed unsent (tx_discarded), a wire FIFO's packets (drained).
 * Zero-copy AF_XDP sockets (uxdp_xsk_create with UXDP_XSK_F_ZEROCOPY) are
 * supported on every queue: the queue then receives into the socket's UMEM
 * (descriptors point at the socket's chunks, nothing is copied), its TX
 * ring pulls the socket's TX descriptors (uxdp_xsk_tx_peek_batch) and
 * completes them after the hardware sent them. need_wakeup as ice: the fill
 * ring's flag is set when a refill could not fill what it wanted or the
 * hardware ring is empty, cleared otherwise; the TX ring's flag is always
 * set, as ice (and the null driver) leave it: the poller may sleep, kick
 * it (uxdp_xsk_sendto). Binding or unbinding a socket quiesces the queue
 * (the kernel driver's queue-pair disable): the buffers the RX ring holds
 * go back to the pool they came from, the TX ring is flushed, and the next
 * poll fills the ring from the new pool.
 *
 * Threads: one thread polls a queue at a time (a poll group, uxdp_dev_start
 * or your own thread); uxdp_dev_start() pins nothing: to pin one thread per
 * queue, make one poll group per queue with UXDP_THREAD_F_PIN.
 *
 *	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 4, .flows = 1024);
 *	struct uxdp_dev *nic = uxdp_nic_create("nic0", &o);
 *
 * makes a 4-queue nic whose wire carries 1024 flows of 64-byte UDP packets
 * as fast as its queues are polled. As a port (uxdp_dev_open):
 *
 *	nic:NAME[,queues=N][,ring=N][,txring=N][,threshold=N][,frames=N]
 *	    [,flows=N][,len=BYTES][,count=N][,pps=N][,fifo=N][,single_alloc]
 *	    [,nogen][,loop=OTHER]
 *
 * the options below by the same names (ring: rx_ring, txring: tx_ring,
 * threshold: refill_threshold, len: rx_len, count: rx_count, pps: rx_pps,
 * fifo: wire_fifo, single_alloc and nogen: the flags); loop=OTHER plugs a
 * cable into the nic OTHER, which must exist and be down.
 *
 * Counters: uxdp_nic_stats() (the dev layer's stats walk has no place for a
 * driver's own); the usual rxq, txq and pool counters count too: a frame
 * refused by xdp_xmit is in the txq's full / too_big / down.
 */
#ifndef UXDP_NIC_H
#define UXDP_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uxdp/common.h>
#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_NIC_MAX_QUEUES		64
#define UXDP_NIC_DEFAULT_RING		1024	/* rx_ring and tx_ring */
#define UXDP_NIC_MIN_RING		8
#define UXDP_NIC_MAX_RING		32768
#define UXDP_NIC_DEFAULT_FLOWS		256
#define UXDP_NIC_MAX_FLOWS		65536
#define UXDP_NIC_DEFAULT_LEN		64
#define UXDP_NIC_MIN_LEN		42	/* Ethernet + IPv4 + UDP */
#define UXDP_NIC_MAX_LEN		1514	/* Ethernet, MTU 1500 */
/* Frames longer than this are refused by xdp_xmit (MTU 1500 + Ethernet +
 * a VLAN tag, as veth). */
#define UXDP_NIC_MAX_TX_LEN		1518
#define UXDP_NIC_DEFAULT_WIRE_FIFO	512
#define UXDP_NIC_RSS_KEY_LEN		40
#define UXDP_NIC_RSS_TABLE_SIZE		128

/* Refill one uxdp_pool_alloc() per descriptor instead of one
 * uxdp_pool_alloc_batch() per contiguous part of the ring: the seed's
 * "before" (xsk_buff_alloc per buffer; the buffer head is written at
 * allocation and again, data_end only, at receive). */
#define UXDP_NIC_F_SINGLE_ALLOC		(1U << 0)
/* No packet generator: the wire carries only what a loop peer sends
 * (its buffers take frames up to UXDP_NIC_MAX_TX_LEN: 4 KiB chunks). */
#define UXDP_NIC_F_NO_GEN		(1U << 1)

struct uxdp_nic_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t queues;	/* queue pairs, 1..64; 0: 1 */
	/* Descriptors per hardware RX ring and TX ring: powers of two in
	 * [8, 32768]; 0: UXDP_NIC_DEFAULT_RING. */
	uint32_t rx_ring;
	uint32_t tx_ring;
	/* Refill when at least this many RX descriptors are unused:
	 * 1..rx_ring / 2; 0: rx_ring / 4 (ice's ICE_RING_QUARTER). */
	uint32_t refill_threshold;
	/* UMEM chunks of each queue's own pool, 8..2^20 (fewer than
	 * rx_ring - 1 can never fill the ring: a starved pool); 0:
	 * 2 * rx_ring + tx_ring (a full RX ring, a full TX ring of XDP_TX
	 * frames and as many in flight elsewhere). */
	uint32_t frames;
	/* Generator: flows on the wire, 1..65536 (0: 256). Flow f (from 0)
	 * is UDP from 10.0.0.0 + f + 1 port 1024 + f % 60000 to
	 * 192.168.0.1 port 9, between 02:00:00:00:00:01 and
	 * 02:00:00:00:00:02; its payload bytes are the low byte of their
	 * offset in the packet. The wire sends the flows round robin:
	 * packet i belongs to flow i % flows. */
	uint32_t flows;
	/* Bytes per generated packet (no FCS), 42..1514; 0: 64. */
	uint32_t rx_len;
	uint32_t flags;		/* UXDP_NIC_F_* */
	/* Generate this many packets in all, then nothing (each queue gets
	 * the packets of its flows: exact); 0: no limit. Packets lost for
	 * want of a posted descriptor count too (rx_missed). */
	uint64_t rx_count;
	/* Packets per second on the wire, shared by the queues in
	 * proportion to their flows; 0: as fast as the queues are polled.
	 * A paced queue wakes its poller with a timer. */
	uint64_t rx_pps;
	/* RSS: a 40-byte Toeplitz key, NULL: the well-known key of
	 * Microsoft's "Verifying the RSS Hash Calculation" (6d 5a 56 da ..),
	 * also the default of many NICs; and a 128-entry indirection table
	 * (queue per entry, each < queues), NULL: entry i is i % queues. */
	const uint8_t *rss_key;
	const uint8_t *rss_table;
	/* Packets each queue's wire FIFO holds for a loop peer, a power of
	 * two in [8, 65536]; 0: UXDP_NIC_DEFAULT_WIRE_FIFO. */
	uint32_t wire_fifo;
	size_t :0;
};
#define uxdp_nic_opts__last_field wire_fifo

/*
 * A nic named @name (opts NULL: defaults), down. Returns it, or NULL with
 * errno set (EINVAL with uxdp_errmsg() naming the bad option, EEXIST,
 * ENOMEM). uxdp_dev_destroy() frees it, also under traffic.
 */
struct uxdp_dev *uxdp_nic_create(const char *name,
				 const struct uxdp_nic_opts *opts);

/*
 * Plug a cable between nics @a and @b (the same nic: a loopback plug):
 * from now on what one transmits arrives on the other's wire, dispatched to
 * its queues by its RSS. Either one's earlier peer is unplugged. @b NULL
 * unplugs @a. Both must be down. Returns 0, -EINVAL (not a nic) or -EBUSY
 * (up), -ENOMEM.
 */
int uxdp_nic_loop(struct uxdp_dev *a, struct uxdp_dev *b);

/*
 * Counters of one queue pair, what a NIC counts. Each field has one writer
 * at a time; a copy is consistent per field.
 */
struct uxdp_nic_stats {
	/* The wire */
	uint64_t gen_packets;	/* generated: delivered + rx_missed */
	/* Hardware receive */
	uint64_t rx_packets;	/* written into posted descriptors */
	uint64_t rx_bytes;
	/* Generated packets lost: the wire had a packet and the ring no
	 * posted descriptor (a loop peer's packets wait in the wire FIFO
	 * instead). */
	uint64_t rx_missed;
	/* A loop peer's packets dropped because the wire FIFO was full. */
	uint64_t rx_fifo_dropped;
	/* Packets longer than the receive buffer (room after headroom and
	 * frame tailroom): dropped. */
	uint64_t rx_oversize;
	/* Driver refill */
	uint64_t refills;	/* refills that posted buffers: tail bumps */
	uint64_t refill_bufs;	/* buffers posted by them */
	/* Refills whose ring part wrapped: allocated to the end, then
	 * from 0. */
	uint64_t refill_wraps;
	/* Refills that got fewer buffers than there were unused
	 * descriptors (the pool ran dry). */
	uint64_t alloc_fail;
	/* uxdp_pool_alloc_batch() calls (one per ring part), or
	 * uxdp_pool_alloc() calls with UXDP_NIC_F_SINGLE_ALLOC. */
	uint64_t alloc_calls;
	/* Hardware transmit */
	uint64_t tx_packets;	/* sent on the wire by the hardware */
	uint64_t tx_bytes;
	uint64_t tx_zc;		/* of them, from a zero-copy socket */
	/* Sent while the loop peer was down: lost on the wire. */
	uint64_t tx_carrier;
	/* A zero-copy socket's descriptors longer than
	 * UXDP_NIC_MAX_TX_LEN: completed, not sent (a MAC drops giants). */
	uint64_t tx_oversize;
	uint64_t tx_cleaned;	/* descriptors the driver completed */
	uint64_t tx_ring_full;	/* frames xdp_xmit refused: ring full */
	/* Descriptors thrown away unsent (down, a socket's switch). */
	uint64_t tx_discarded;
	/* Gauges, as of the last poll: buffers posted in the RX ring,
	 * descriptors in the TX ring. */
	uint32_t rx_posted;
	uint32_t tx_pending;
};

/*
 * Copy queue pair @q's counters into @st (q = UXDP_ALL_QUEUES: the sum).
 * Returns 0, or -EINVAL (not a nic, bad queue).
 */
int uxdp_nic_stats(const struct uxdp_dev *dev, uint32_t q,
		   struct uxdp_nic_stats *st);

/* A flow of the generator, as it appears on the wire. */
struct uxdp_nic_flow {
	uint32_t saddr;		/* IPv4 addresses, host order */
	uint32_t daddr;
	uint16_t sport;		/* UDP ports, host order */
	uint16_t dport;
	uint32_t hash;		/* its RSS hash (4-tuple) */
	uint32_t queue;		/* the queue RSS picks: table[hash & 127] */
};

/*
 * Flow @f of @dev's generator into @out. Returns 0, or -EINVAL (not a nic,
 * no such flow).
 */
int uxdp_nic_flow(const struct uxdp_dev *dev, uint32_t f,
		  struct uxdp_nic_flow *out);

/*
 * The queue of @dev that RSS picks for the packet at @pkt (@len bytes,
 * starting with its Ethernet header): the 4-tuple hash for unfragmented
 * IPv4 UDP and TCP, the 2-tuple hash for other IPv4; for IPv6 the 4-tuple
 * when UDP or TCP follows the fixed header, else the 2-tuple (extension
 * headers and fragments are not parsed); hash 0 for the rest.
 * *@hash (may be NULL) gets the hash. Returns the queue, or -EINVAL.
 */
int uxdp_nic_rss_queue(const struct uxdp_dev *dev, const void *pkt,
		       uint32_t len, uint32_t *hash);

/*
 * The Toeplitz hash of @len bytes at @data under @key (@key_len bytes, at
 * least @len + 4: a 40-byte key hashes up to 36 bytes): for each input bit,
 * most significant first, that is set, the 32 key bits starting at that
 * bit's position are XORed in. The RSS input is source address,
 * destination address (IPv4: 8 bytes, IPv6: 32), then source port,
 * destination port (IPv4: 12, IPv6: 36), all in network order. Returns the
 * hash (0 for a key too short).
 */
uint32_t uxdp_nic_toeplitz(const uint8_t *key, size_t key_len,
			   const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_NIC_H */
