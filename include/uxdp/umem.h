/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp UMEM: one registered memory area cut into chunks, with the fill queue
 * the application posts free chunks on and the completion queue it gets
 * transmitted chunks back from. The rules for what is a valid area are the
 * running Linux kernel's rules for setsockopt(XDP_UMEM_REG), check for check
 * (tests/test_umem_kernel.c compares the two).
 *
 * Chunk layout (chunk base B):
 *
 *	B                      user headroom (opts.headroom bytes)
 *	B + headroom           data_hard_start
 *	                       UXDP_PACKET_HEADROOM (256) bytes; metadata
 *	                       sits at its end, just before data
 *	B + headroom + 256     data: the packet
 *
 * Addresses are byte offsets into the area. In aligned mode (the default) any
 * address inside a chunk names that chunk. In unaligned mode a buffer may
 * start anywhere; descriptors carry the base in the low 48 bits and an offset
 * to the data in the upper 16 bits (UXDP_UNALIGNED_*).
 */
#ifndef UXDP_UMEM_H
#define UXDP_UMEM_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/common.h>
#include <uxdp/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_PACKET_HEADROOM		256	/* XDP_PACKET_HEADROOM */
#define UXDP_UMEM_MIN_CHUNK_SIZE	2048	/* XDP_UMEM_MIN_CHUNK_SIZE */
#define UXDP_UMEM_MAX_CHUNK_SIZE	4096	/* PAGE_SIZE on x86-64 */
#define UXDP_UMEM_DEFAULT_CHUNK_SIZE	4096
#define UXDP_UMEM_DEFAULT_RING_SIZE	2048	/* fill and completion, at least */

/*
 * Room a chunk must keep beyond the headroom: the XDP headroom, the tailroom
 * the kernel reserves for struct skb_shared_info (SKB_DATA_ALIGN'ed, 320 bytes
 * on x86-64) and at least 128 bytes of packet. The largest valid headroom is
 * chunk_size - UXDP_UMEM_CHUNK_RESERVED (the kernel's rule since a315e022a72d;
 * older kernels allowed up to chunk_size - 257).
 */
#define UXDP_SKB_SHINFO_SIZE		320
#define UXDP_MIN_PACKET_ROOM		128
#define UXDP_UMEM_CHUNK_RESERVED \
	(UXDP_PACKET_HEADROOM + UXDP_SKB_SHINFO_SIZE + UXDP_MIN_PACKET_ROOM)

/*
 * With UXDP_UMEM_F_TX_METADATA_LEN, tx_metadata_len must be at least this
 * (the request's 8-byte flags and one 8-byte field; the launch-time request
 * needs sizeof(struct uxdp_xsk_tx_metadata), 24), below 256 and a multiple
 * of 8. The kernel's rule since 1bb30b181d9f ("xsk: require at least 16
 * bytes of TX metadata", August 2026, also in 6.18.y); older kernels took
 * 0 and 8 too.
 */
#define UXDP_TX_METADATA_MIN_LEN	16
#define UXDP_TX_METADATA_MAX_LEN	248

/* Unaligned-mode address encoding (XSK_UNALIGNED_BUF_*). */
#define UXDP_UNALIGNED_BUF_OFFSET_SHIFT	48
#define UXDP_UNALIGNED_BUF_ADDR_MASK \
	((1ULL << UXDP_UNALIGNED_BUF_OFFSET_SHIFT) - 1)

/* UMEM flags. The low ones are the kernel's XDP_UMEM_* flags, same values. */
#define UXDP_UMEM_F_UNALIGNED		(1U << 0)  /* XDP_UMEM_UNALIGNED_CHUNK_FLAG */
#define UXDP_UMEM_F_TX_SW_CSUM		(1U << 1)  /* XDP_UMEM_TX_SW_CSUM */
#define UXDP_UMEM_F_TX_METADATA_LEN	(1U << 2)  /* XDP_UMEM_TX_METADATA_LEN */
/* uxdp's own: back an area uxdp allocates with 2 MiB huge pages (fail if none). */
#define UXDP_UMEM_F_HUGEPAGES		(1U << 16)
/*
 * uxdp's own: place an area uxdp allocates (area == NULL) 2 MiB aligned and
 * advise MADV_HUGEPAGE, so that where transparent huge pages are enabled
 * ("madvise" or "always") the kernel backs it with them; a best effort,
 * never a failure. For zero-copy datapaths, which write all over the UMEM:
 * uxdp-bench xsk's two queues ran 1.11x faster with it. Ignored with
 * UXDP_UMEM_F_HUGEPAGES.
 */
#define UXDP_UMEM_F_THP			(1U << 17)

struct uxdp_umem_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t chunk_size;	/* 0: UXDP_UMEM_DEFAULT_CHUNK_SIZE */
	uint32_t headroom;	/* user headroom before data_hard_start */
	uint32_t flags;		/* UXDP_UMEM_F_* */
	/* Bytes of TX metadata before each TX packet: 16 to 248, a multiple
	 * of 8 (UXDP_TX_METADATA_MIN_LEN). As in the kernel, read only when
	 * UXDP_UMEM_F_TX_METADATA_LEN is set. */
	uint32_t tx_metadata_len;
	/* Fill / completion ring entries (powers of two); 0: enough for every
	 * chunk, and at least UXDP_UMEM_DEFAULT_RING_SIZE. */
	uint32_t fill_size;
	uint32_t comp_size;
	size_t :0;
};
#define uxdp_umem_opts__last_field comp_size

struct uxdp_umem;

/*
 * Register @size bytes at @area as a UMEM. @area must be page aligned and stay
 * mapped until uxdp_umem_destroy(); pass NULL to have uxdp mmap (and later
 * unmap) the area itself. @opts may be NULL for all defaults.
 *
 * Returns the UMEM, or NULL with errno set: EINVAL for a configuration the
 * kernel would refuse (uxdp_errmsg() says which rule), ENOMEM.
 */
struct uxdp_umem *uxdp_umem_create(void *area, uint64_t size,
				   const struct uxdp_umem_opts *opts);

/*
 * Check a configuration without creating anything: the same rules, in the
 * same order, as uxdp_umem_create() and the kernel's XDP_UMEM_REG. @area is
 * only looked at as a number. Returns 0, or -EINVAL with uxdp_errmsg() set.
 */
int uxdp_umem_check(const void *area, uint64_t size,
		    const struct uxdp_umem_opts *opts);

/*
 * Tear down a UMEM. Returns 0, or -EBUSY if a pool is still bound to it
 * (nothing is freed then).
 */
int uxdp_umem_destroy(struct uxdp_umem *umem);

/*
 * Post every chunk on the fill ring (chunk i at i * chunk_size), the first
 * thing every pool user does. All or nothing: returns the number posted,
 * or -ENOSPC if the ring has no room for all of them.
 */
int uxdp_umem_fill_all(struct uxdp_umem *umem);

/* The application's producer handle on the fill ring. */
struct uxdp_ring *uxdp_umem_fill_ring(struct uxdp_umem *umem);
/* The application's consumer handle on the completion ring. */
struct uxdp_ring *uxdp_umem_comp_ring(struct uxdp_umem *umem);

void *uxdp_umem_area(const struct uxdp_umem *umem);
uint64_t uxdp_umem_size(const struct uxdp_umem *umem);
uint32_t uxdp_umem_chunk_size(const struct uxdp_umem *umem);
uint32_t uxdp_umem_headroom(const struct uxdp_umem *umem);
/* Whole chunks in the area (size / chunk_size). */
uint32_t uxdp_umem_nchunks(const struct uxdp_umem *umem);
bool uxdp_umem_unaligned(const struct uxdp_umem *umem);

/*
 * Application helpers for descriptor addresses. In aligned mode an address is
 * a plain offset; in unaligned mode base (low 48 bits) plus offset (high 16).
 */
UXDP_INLINE uint64_t uxdp_umem_addr_offset(uint64_t addr)
{
	return (addr & UXDP_UNALIGNED_BUF_ADDR_MASK) +
	       (addr >> UXDP_UNALIGNED_BUF_OFFSET_SHIFT);
}

/* Pointer to the byte @addr (an RX/TX descriptor address) names in @area. */
UXDP_INLINE void *uxdp_umem_addr_ptr(void *area, uint64_t addr)
{
	/* In aligned mode the high bits are zero, so one formula serves both. */
	return (char *)area + uxdp_umem_addr_offset(addr);
}

#ifdef __cplusplus
}
#endif

#endif /* UXDP_UMEM_H */
