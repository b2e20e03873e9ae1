/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_xdp: the program helpers and frame conversion of <uxdp/xdp.h> on a
 * buffer whose geometry comes from the input: data_hard_start at any byte
 * offset (as in unaligned UMEM mode), any headroom, metadata size and packet
 * length, metadata supported or not. A script applies uxdp_adjust_head /
 * _tail / _meta with arbitrary deltas and uxdp_buff_to_frame /
 * uxdp_frame_to_buff round trips.
 *
 * Checks after every call:
 *  - it succeeds exactly when the bounds xdp.h documents allow the move, and
 *    returns the documented error otherwise;
 *  - a failed call changes nothing: the buff and every byte of the buffer;
 *  - a successful one moves exactly what it says (adjust_head carries the
 *    metadata bytes along, adjust_tail zeroes what it grows, adjust_meta
 *    touches no memory), and every pointer stays inside the buffer;
 *  - buff_to_frame writes only the frame header at data_hard_start, with the
 *    right fields; frame_to_buff gives back the same data, length and
 *    metadata (bytes included).
 * The buffer is a heap block of exactly the frame's size, so ASan sees a
 * write past it; UBSan sees misaligned accesses.
 *
 * Input (little-endian, zeros past the end):
 *	u8 hard start offset (% 16), u16 frame_sz, u16 headroom, u8 metadata
 *	length, u16 packet length, u8 flags (bit 0 metadata unsupported,
 *	bits 1-2 memory type, bit 3 owner set), u32 buff flags, u8 fill byte
 *	then operations: u8 opcode and its arguments (see run_op())
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

#define ETH_HLEN	14
#define META_MAX	252
#define FRAME_HDR	sizeof(struct uxdp_frame)

struct xt {
	unsigned char *mem;	/* the heap block */
	size_t mem_len;
	unsigned char *snap;	/* its bytes before the current call */
	struct uxdp_buff b;
	struct uxdp_buff b_snap;
	struct uxdp_rxq_info rxq;	/* what the buffer came in on */
	struct uxdp_rxq_info rxq_frame;	/* for buffers from frames */
};

static char dummy_dev;
static struct uxdp_mem_allocator dummy_alloc;

static uintptr_t P(const void *p)
{
	return (uintptr_t)p;
}

/*
 * Where the frame header goes (xdp.h, uxdp_frame_at): the first 8-byte
 * boundary at or after data_hard_start, since it holds pointers. The helpers
 * keep data and metadata clear of it.
 */
static uintptr_t frame_at(const struct uxdp_buff *b)
{
	return (P(b->data_hard_start) + 7) & ~(uintptr_t)7;
}

static bool meta_ok(const struct uxdp_buff *b)
{
	return P(b->data_meta) <= P(b->data);
}

static uintptr_t metalen(const struct uxdp_buff *b)
{
	return meta_ok(b) ? P(b->data) - P(b->data_meta) : 0;
}

static void snapshot(struct xt *x)
{
	memcpy(x->snap, x->mem, x->mem_len);
	x->b_snap = x->b;
}

static void check_unchanged(const struct xt *x, const char *what, int rc)
{
	FZ_CHECK(!memcmp(&x->b, &x->b_snap, sizeof(x->b)),
		 "%s failed (%d) but changed the buff", what, rc);
	FZ_CHECK(!memcmp(x->mem, x->snap, x->mem_len),
		 "%s failed (%d) but changed the buffer", what, rc);
}

/* Bytes outside [from, to) of the block are as they were. */
static void check_mem_outside(const struct xt *x, uintptr_t from,
			      uintptr_t to, const char *what)
{
	size_t a = from - P(x->mem), z = to - P(x->mem);

	FZ_CHECK(!memcmp(x->mem, x->snap, a) &&
		 !memcmp(x->mem + z, x->snap + z, x->mem_len - z),
		 "%s changed bytes it does not own", what);
}

/* Every pointer inside the block, in order. */
static void check_inside(const struct xt *x, const char *what)
{
	const struct uxdp_buff *b = &x->b;
	uintptr_t lo = P(x->mem), hi = lo + x->mem_len;

	FZ_CHECK(P(b->data_hard_start) >= lo &&
		 P(b->data_hard_start) + b->frame_sz <= hi,
		 "%s: hard start/frame_sz outside the buffer", what);
	FZ_CHECK(P(b->data) >= P(b->data_hard_start) &&
		 P(b->data) <= P(b->data_end) &&
		 P(b->data_end) <= P(b->data_hard_start) + b->frame_sz,
		 "%s: data %#lx end %#lx outside [%#lx, +%u]", what,
		 (unsigned long)P(b->data), (unsigned long)P(b->data_end),
		 (unsigned long)P(b->data_hard_start), b->frame_sz);
	if (meta_ok(b))
		FZ_CHECK(P(b->data_meta) >= P(b->data_hard_start),
			 "%s: metadata before the buffer", what);
	else
		FZ_CHECK(P(b->data_meta) == P(b->data) + 1,
			 "%s: unsupported metadata marker lost", what);
}

static int pick_delta(struct fz *f, const struct xt *x)
{
	uint8_t shape = fz_u8(f);

	switch (shape % 8) {
	case 0:
		return (int8_t)fz_u8(f);
	case 1:
	case 2:
		return (int16_t)fz_u16(f) % 600;
	case 3:
		return (int)fz_u32(f);
	case 4:
		return shape & 8 ? INT_MIN : INT_MAX;
	case 5:	/* 4-byte steps, as metadata moves */
		return ((int8_t)fz_u8(f)) * 4;
	case 6:	/* to just around the end of the frame */
		return (int)(x->b.frame_sz) - (int)(P(x->b.data_end) -
			     P(x->b.data_hard_start)) - UXDP_FRAME_TAILROOM +
			     (int8_t)fz_u8(f) % 4;
	default:	/* to just around the frame header */
		return (int)FRAME_HDR + (int)metalen(&x->b) -
		       (int)(P(x->b.data) - P(x->b.data_hard_start)) +
		       (int8_t)fz_u8(f) % 4;
	}
}

static void op_head(struct xt *x, int delta)
{
	struct uxdp_buff *b = &x->b;
	uintptr_t mlen = metalen(b), nd = P(b->data) + (intptr_t)delta;
	bool ok = nd >= frame_at(b) + FRAME_HDR + mlen &&
		  nd + ETH_HLEN <= P(b->data_end);
	int rc;

	snapshot(x);
	rc = uxdp_adjust_head(b, delta);
	if (!ok) {
		FZ_CHECK(rc == -EINVAL, "adjust_head(%d) = %d, expected "
			 "-EINVAL", delta, rc);
		check_unchanged(x, "adjust_head", rc);
		return;
	}
	FZ_CHECK(rc == 0, "adjust_head(%d) = %d, in bounds", delta, rc);
	FZ_CHECK(P(b->data) == nd && b->data_end == x->b_snap.data_end,
		 "adjust_head(%d) moved the wrong pointers", delta);
	FZ_CHECK(P(b->data_meta) == P(x->b_snap.data_meta) + (intptr_t)delta,
		 "adjust_head(%d) did not carry data_meta along", delta);
	/* The metadata bytes moved with it; nothing else was written. */
	if (mlen) {
		FZ_CHECK(!memcmp(b->data_meta, x->snap +
				 (P(x->b_snap.data_meta) - P(x->mem)), mlen),
			 "adjust_head(%d) lost the metadata", delta);
		check_mem_outside(x, P(b->data_meta), P(b->data_meta) + mlen,
				  "adjust_head");
	} else {
		check_mem_outside(x, P(x->mem), P(x->mem), "adjust_head");
	}
	check_inside(x, "adjust_head");
}

static void op_tail(struct xt *x, int delta)
{
	struct uxdp_buff *b = &x->b;
	uintptr_t hs = P(b->data_hard_start), ne = P(b->data_end) +
						  (intptr_t)delta;
	bool ok = ne + UXDP_FRAME_TAILROOM <= hs + b->frame_sz &&
		  ne >= P(b->data) + ETH_HLEN;
	uintptr_t i;
	int rc;

	snapshot(x);
	rc = uxdp_adjust_tail(b, delta);
	if (!ok) {
		FZ_CHECK(rc == -EINVAL, "adjust_tail(%d) = %d, expected "
			 "-EINVAL", delta, rc);
		check_unchanged(x, "adjust_tail", rc);
		return;
	}
	FZ_CHECK(rc == 0, "adjust_tail(%d) = %d, in bounds", delta, rc);
	FZ_CHECK(P(b->data_end) == ne && b->data == x->b_snap.data &&
		 b->data_meta == x->b_snap.data_meta,
		 "adjust_tail(%d) moved the wrong pointers", delta);
	if (delta > 0) {
		for (i = P(x->b_snap.data_end); i < ne; i++)
			FZ_CHECK(!*(unsigned char *)i,
				 "adjust_tail(%d) left old bytes in the growth",
				 delta);
		check_mem_outside(x, P(x->b_snap.data_end), ne, "adjust_tail");
	} else {
		check_mem_outside(x, P(x->mem), P(x->mem), "adjust_tail");
	}
	check_inside(x, "adjust_tail");
}

static void op_meta(struct xt *x, int delta)
{
	struct uxdp_buff *b = &x->b;
	uintptr_t nm = P(b->data_meta) + (intptr_t)delta;
	uintptr_t hs = P(b->data_hard_start), d = P(b->data);
	int expect, rc;

	if (!meta_ok(b))
		expect = -EOPNOTSUPP;
	else if (nm < frame_at(b) + FRAME_HDR || nm > d)
		expect = -EINVAL;
	else if ((d - nm) % 4 || d - nm > META_MAX)
		expect = -EACCES;
	else
		expect = 0;
	snapshot(x);
	rc = uxdp_adjust_meta(b, delta);
	FZ_CHECK(rc == expect, "adjust_meta(%d) = %d, expected %d (meta "
		 "%ld bytes, headroom %ld)", delta, rc, expect,
		 (long)(d - P(x->b_snap.data_meta)), (long)(d - hs));
	if (rc) {
		check_unchanged(x, "adjust_meta", rc);
		return;
	}
	FZ_CHECK(P(b->data_meta) == nm && b->data == x->b_snap.data &&
		 b->data_end == x->b_snap.data_end,
		 "adjust_meta(%d) moved the wrong pointers", delta);
	check_mem_outside(x, P(x->mem), P(x->mem), "adjust_meta");
	check_inside(x, "adjust_meta");
}

/* buff_to_frame, and with @back frame_to_buff: the buff becomes the one
 * made from the frame, as a driver receiving it would see it. */
static void op_frame(struct xt *x, bool back)
{
	struct uxdp_buff *b = &x->b, nb;
	uintptr_t hs = P(b->data_hard_start), d = P(b->data);
	uintptr_t fa = frame_at(b), end = hs + b->frame_sz;
	uintptr_t mlen = metalen(b), len = P(b->data_end) - d;
	const struct uxdp_rxq_info *rxq = b->rxq;
	struct uxdp_mem_info old_mem;
	struct uxdp_frame *f;
	bool ok = d >= fa + mlen + FRAME_HDR &&
		  P(b->data_end) + UXDP_FRAME_TAILROOM <= end;

	snapshot(x);
	/* Whatever the header's mem field held before (a frame's owner); the
	 * block may end before a whole header fits. */
	memset(&old_mem, 0, sizeof(old_mem));
	if (fa + FRAME_HDR <= P(x->mem) + x->mem_len)
		memcpy(&old_mem, x->snap + (fa - P(x->mem)) +
		       offsetof(struct uxdp_frame, mem), sizeof(old_mem));
	f = uxdp_buff_to_frame(b);
	if (!ok) {
		FZ_CHECK(!f, "buff_to_frame made a frame without room "
			 "(header at +%lu, data at +%lu, meta %lu, end room "
			 "%ld)", (unsigned long)(fa - hs),
			 (unsigned long)(d - hs), (unsigned long)mlen,
			 (long)(end - P(b->data_end)));
		check_unchanged(x, "buff_to_frame", 0);
		return;
	}
	FZ_CHECK(P(f) == fa, "buff_to_frame: frame at %p, not %p (hard "
		 "start %p)", (void *)f, (void *)fa, (void *)hs);
	FZ_CHECK(!memcmp(b, &x->b_snap, sizeof(*b)),
		 "buff_to_frame changed the buff");
	check_mem_outside(x, fa, fa + FRAME_HDR, "buff_to_frame");
	/* frame_sz counts from the header: the buffer's end stays put. */
	FZ_CHECK(P(f->data) == d && f->len == len &&
		 f->headroom == d - fa - FRAME_HDR && f->metasize == mlen &&
		 fa + f->frame_sz == end && f->flags == b->flags &&
		 f->dev_rx == rxq->dev,
		 "buff_to_frame: wrong frame fields");
	if (rxq->mem.type == UXDP_MEM_FRAME) {
		FZ_CHECK(!memcmp(&f->mem, &old_mem, sizeof(old_mem)),
			 "buff_to_frame overwrote the frame's owner");
	} else {
		void *owner = rxq->mem.owner;

		if (rxq->mem.type == UXDP_MEM_POOL && !owner)
			owner = b;
		FZ_CHECK(f->mem.type == rxq->mem.type && f->mem.owner == owner,
			 "buff_to_frame: wrong owner");
	}
	if (!back)
		return;

	memset(&nb, 0x5a, sizeof(nb));
	uxdp_frame_to_buff(f, &nb);
	nb.rxq = &x->rxq_frame;
	nb.txq = NULL;
	FZ_CHECK(P(nb.data_hard_start) == fa && nb.data == b->data &&
		 nb.data_end == b->data_end && P(nb.data_meta) == d - mlen &&
		 P(nb.data_hard_start) + nb.frame_sz == end &&
		 nb.flags == b->flags,
		 "frame_to_buff did not give back data, len and metadata");
	/* Metadata and packet bytes survived the header being written. */
	FZ_CHECK(!memcmp(nb.data_meta, x->snap + (d - mlen - P(x->mem)),
			 mlen + len), "round trip changed the packet");
	x->b = nb;
	check_inside(x, "frame_to_buff");
}

enum {
	OP_HEAD,
	OP_TAIL,
	OP_META,
	OP_TO_FRAME,
	OP_ROUND_TRIP,
	OP_WRITE,
	NR_OPS
};

static void run_op(struct xt *x, struct fz *f)
{
	uint8_t op = fz_u8(f) % NR_OPS;
	size_t n;

	switch (op) {
	case OP_HEAD:
		op_head(x, pick_delta(f, x));
		break;
	case OP_TAIL:
		op_tail(x, pick_delta(f, x));
		break;
	case OP_META:
		op_meta(x, pick_delta(f, x));
		break;
	case OP_TO_FRAME:
		op_frame(x, false);
		break;
	case OP_ROUND_TRIP:
		op_frame(x, true);
		break;
	case OP_WRITE:
		/* New packet and metadata bytes, as a program writes them. */
		n = P(x->b.data_end) - P(x->b.data) + metalen(&x->b);
		memset((char *)x->b.data - metalen(&x->b), fz_u8(f), n);
		break;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	uxdp_set_print(NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint32_t off = fz_u8(&f) % 16;
	uint32_t frame_sz = fz_u16(&f) % 4353;
	uint32_t headroom = fz_u16(&f), mlen = fz_u8(&f), len = fz_u16(&f);
	uint8_t fl = fz_u8(&f);
	uint32_t bflags = fz_u32(&f);
	struct xt x;
	char *hs;
	int ops = 0;

	memset(&x, 0, sizeof(x));
	headroom %= frame_sz + 1;
	len %= frame_sz - headroom + 1;
	if (mlen > headroom)
		mlen = headroom;
	x.mem_len = off + frame_sz;
	x.mem = fz_xmalloc(x.mem_len);
	x.snap = fz_xmalloc(x.mem_len);
	memset(x.mem, fz_u8(&f), x.mem_len);

	x.rxq.dev = (struct uxdp_dev *)(void *)&dummy_dev;
	x.rxq.queue_index = 3;
	x.rxq.mem.type = (fl >> 1) % 3;
	if (x.rxq.mem.type == UXDP_MEM_ALLOC || (fl & 8))
		x.rxq.mem.owner = &dummy_alloc;
	x.rxq_frame = x.rxq;
	x.rxq_frame.mem.type = UXDP_MEM_FRAME;
	x.rxq_frame.mem.owner = NULL;

	hs = (char *)x.mem + off;
	x.b.data_hard_start = hs;
	x.b.data = hs + headroom;
	x.b.data_end = hs + headroom + len;
	/* data_meta past data: this buffer does not support metadata. */
	x.b.data_meta = fl & 1 ? hs + headroom + 1 : hs + headroom - mlen;
	x.b.frame_sz = frame_sz;
	x.b.flags = bflags;
	x.b.rxq = &x.rxq;
	if (fl & 1 && headroom == frame_sz) {
		/* data + 1 would point past the block: not a real buffer. */
		x.b.data_meta = x.b.data;
	}

	while (fz_more(&f) && ops++ < 200)
		run_op(&x, &f);

	free(x.snap);
	free(x.mem);
	return 0;
}
