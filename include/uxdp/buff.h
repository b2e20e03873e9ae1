/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * struct uxdp_buff: one packet buffer while a driver and an XDP program work
 * on it (the kernel's struct xdp_buff). The pool hands these out; the xdp
 * layer runs programs on them and turns them into frames.
 *
 *	data_hard_start   start of the usable buffer (after user headroom)
 *	data_meta         metadata start; == data means "supported, empty"
 *	data              packet start
 *	data_end          one past the packet's last byte
 *	frame_sz          bytes from data_hard_start to the end of the buffer
 *
 * Include <uxdp/pool.h> or <uxdp/uxdp.h> rather than this header.
 */
#ifndef UXDP_BUFF_H
#define UXDP_BUFF_H

#include <stdint.h>

#include <uxdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uxdp_rxq_info;
struct uxdp_txq_info;

struct uxdp_buff {
	void *data;
	void *data_end;
	void *data_meta;
	void *data_hard_start;
	struct uxdp_rxq_info *rxq;
	struct uxdp_txq_info *txq;
	uint32_t frame_sz;
	uint32_t flags;
};

/* Bytes between data and data_end. */
UXDP_INLINE uint32_t uxdp_buff_len(const struct uxdp_buff *b)
{
	return (uint32_t)((char *)b->data_end - (char *)b->data);
}

#ifdef __cplusplus
}
#endif

#endif /* UXDP_BUFF_H */
