/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_xsk: an AF_XDP socket (include/uxdp/xsk.h) driven by an application
 * that writes anything into the four rings it owns: TX descriptors and the
 * TX producer, fill addresses and the fill producer, the RX and completion
 * consumers. The socket sits on a null device (a generator on receive, a
 * sink on transmit), zero-copy or copy, over an aligned or unaligned UMEM
 * of 2 or 4 KiB chunks with any headroom and TX metadata length.
 *
 * Checked while the application is honest (it has only ever moved its
 * indices the way a correct application does):
 *  - every TX descriptor is judged as an independent model of the kernel's
 *    xp_validate_desc judges it: in copy mode every descriptor completes
 *    in ring order (invalid ones too, as the kernel's generic transmit
 *    does), in zero-copy the valid ones; the device sent exactly the valid
 *    ones (packets and bytes; copy mode drops those under 14 bytes);
 *    tx_invalid_descs counts the rest;
 *  - every RX descriptor names a chunk the application posted and does not
 *    hold, inside the UMEM, with the generator's length; a chunk is never
 *    delivered twice without being posted again (unless the script posted
 *    a duplicate, which the kernel does not catch either);
 *  - with the device idle and every descriptor read, each chunk is in one
 *    place (uxdp_umem_audit() plus what the application holds).
 * Always (the application lying or not): no crash, no out-of-bounds access
 * or undefined behaviour (ASan, UBSan), no leak (LSan), and teardown
 * succeeds: the socket, the device and the UMEM all go.
 *
 * Input (zeros past the end): u8 mode (bit 0 zero-copy, bit 1 unaligned,
 * bit 2 chunk 4096, bit 3 need_wakeup, bit 4 tx metadata), u8 chunks
 * (% 32 + 4), u8 headroom (* 8), u8 ring sizes (log2 rx % 6 + 2, log2 tx
 * % 6 + 2, 3 bits each); then operations: u8 opcode and its arguments
 * (see run_op()).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

#define MAX_CHUNKS	36
#define MAX_TX		4096	/* descriptors judged per input */

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz_xsk: " __VA_ARGS__);	\
			fprintf(stderr, "\n");				\
			abort();					\
		}							\
	} while (0)

struct st {
	struct uxdp_umem *umem;
	struct uxdp_dev *dev;
	struct uxdp_xsk *xsk;
	struct uxdp_map *map;
	struct uxdp_ring *rx, *tx, *fill, *cq;
	uint8_t *area;
	uint64_t size;
	uint32_t chunk, nchunks, headroom, meta, rx_size, tx_size;
	bool unaligned, zc;
	/* honest: the application never lied about an index, so the rings
	 * hold what the model says. rx_exact: the fill ring held only whole
	 * chunks the model tracks, posted once. tx_exact: every TX verdict
	 * is known in advance (a metadata request depends on UMEM bytes the
	 * datapath itself writes, so a TX_METADATA descriptor with a
	 * metadata length ends exactness). */
	bool honest, rx_exact, tx_exact;

	/* Chunks: 0 the application's, 1 posted or the library's. */
	uint8_t posted[MAX_CHUNKS];
	/* TX descriptors submitted and not yet consumed, with their verdict;
	 * valid ones wait for their completion in order. */
	uint64_t tx_addr[MAX_TX];
	uint32_t tx_len[MAX_TX];
	bool tx_ok[MAX_TX];
	uint32_t tx_head, tx_tail;	/* [head, tail) submitted */
	uint32_t comp_next;		/* next valid one to complete */
	uint64_t want_invalid, want_pkts, want_bytes;
};

static uint32_t f_rx_pkt_len = 64;

/* FUZZ_XSK_TRACE=1: say what each step does, to follow a saved input. */
static int trace = -1;
#define TRACE(...)							\
	do {								\
		if (trace)						\
			fprintf(stderr, __VA_ARGS__);			\
	} while (0)

static uint32_t prog_xsk(struct uxdp_buff *ctx, void *map)
{
	(void)ctx;
	return uxdp_redirect_map(map, 0, UXDP_DROP);
}

/* The kernel's rule, written from kernel-semantics.md, not from xsk.c. */
static bool model_valid(const struct st *s, uint64_t addr, uint32_t len,
			uint32_t options)
{
	uint64_t m = s->meta, a;

	if (len == 0 || (options & ~3U) || (options & 1U))
		return false;
	/* TX_METADATA without a metadata area: refused (the kernel fails
	 * sendto with EINVAL; uxdp counts it invalid, docs/semantics.md). */
	if ((options & 2U) && !m)
		return false;
	if (!s->unaligned) {
		if (addr < m)
			return false;
		a = addr - m;
		if ((a % s->chunk) + len + m > s->chunk)
			return false;
		return a < s->size;
	}
	if ((uint64_t)len + m > s->chunk)
		return false;
	a = (addr & ((1ULL << 48) - 1)) + (addr >> 48);
	if (a < m)
		return false;
	a -= m;
	return a < s->size && a + len + m <= s->size;
}

/* Chunk index of an RX or fill address (aligned: any address in it). */
static int64_t chunk_of(const struct st *s, uint64_t addr)
{
	uint64_t a = s->unaligned ? (addr & ((1ULL << 48) - 1)) : addr;

	if (s->unaligned && a % s->chunk)
		return -1;
	if (a >= (uint64_t)s->nchunks * s->chunk)
		return -1;
	return (int64_t)(a / s->chunk);
}

static void post_fill(struct st *s, struct fz *f)
{
	uint32_t n = fz_pick(f, 40), idx, i, k = 0;
	uint64_t addrs[40];
	int64_t marked[40];

	for (i = 0; i < n; i++) {
		uint32_t kind = fz_pick(f, 4);
		uint32_t c = fz_pick(f, s->nchunks);
		int64_t rc;

		marked[k] = -1;
		if (kind == 0) {
			/* Any address: out of range (the pool skips and
			 * counts it), or a chunk by another name. */
			addrs[k] = fz_u64(f);
			if (fz_bit(f))
				addrs[k] %= s->size + 4096;
			rc = chunk_of(s, addrs[k]);
			if (rc >= 0 && !s->posted[rc]) {
				s->posted[rc] = 1;
				marked[k] = rc;
			} else if (rc >= 0 || (s->unaligned &&
						(addrs[k] & ((1ULL << 48) - 1)) <
						s->size)) {
				/* Posted twice, or (unaligned) a buffer
				 * that is no chunk: not tracked. */
				s->rx_exact = false;
			}
			k++;
			continue;
		}
		if (kind == 1 && s->posted[c]) {
			/* A chunk already posted: a duplicate. */
			s->rx_exact = false;
			addrs[k++] = (uint64_t)c * s->chunk;
			continue;
		}
		if (s->posted[c])
			continue;
		s->posted[c] = 1;
		marked[k] = c;
		addrs[k++] = (uint64_t)c * s->chunk;
	}
	if (!k)
		return;
	if (!uxdp_ring_prod_reserve(s->fill, k, &idx)) {
		/* No room: the chunks stay the application's. */
		for (i = 0; i < k; i++)
			if (marked[i] >= 0)
				s->posted[marked[i]] = 0;
		return;
	}
	for (i = 0; i < k; i++) {
		*uxdp_ring_addr(s->fill, idx + i) = addrs[i];
		TRACE("  fill 0x%llx\n", (unsigned long long)addrs[i]);
	}
	uxdp_ring_prod_submit(s->fill, k);
}

static void post_tx(struct st *s, struct fz *f)
{
	uint32_t n = fz_pick(f, 40), idx, i;

	if (!n || !uxdp_ring_prod_reserve(s->tx, n, &idx))
		return;
	for (i = 0; i < n; i++) {
		struct uxdp_desc d;
		uint32_t c = fz_pick(f, s->nchunks + 2);

		switch (fz_pick(f, 4)) {
		case 0:		/* anything */
			d.addr = fz_u64(f);
			d.len = fz_u32(f);
			d.options = fz_u8(f);
			break;
		case 1:		/* near a chunk edge */
			d.addr = (uint64_t)c * s->chunk + s->chunk -
				 fz_u8(f);
			d.len = fz_u16(f) % (s->chunk + 64);
			d.options = fz_pick(f, 3);
			break;
		default:	/* mostly fine */
			d.addr = (uint64_t)c * s->chunk + s->meta +
				 (uint64_t)fz_u8(f);
			if (s->unaligned && fz_bit(f))
				d.addr |= (uint64_t)fz_u16(f) << 48;
			d.len = 14 + fz_u8(f) * 4;
			d.options = fz_bit(f) ? 2 : 0;
			break;
		}
		*uxdp_ring_desc(s->tx, idx + i) = d;
		TRACE("  tx 0x%llx len %u opt %u\n",
		      (unsigned long long)d.addr, d.len, d.options);
		if (s->meta && (d.options & 2))
			s->tx_exact = false;
		if (s->tx_tail - s->tx_head < MAX_TX) {
			uint32_t j = s->tx_tail++ % MAX_TX;

			s->tx_addr[j] = d.addr;
			s->tx_len[j] = d.len;
			s->tx_ok[j] = model_valid(s, d.addr, d.len, d.options);
		} else {
			s->tx_exact = false;
		}
	}
	uxdp_ring_prod_submit(s->tx, n);
}

/* Read the completion ring: in order, the valid descriptors. */
static void reap_comp(struct st *s, struct fz *f)
{
	uint32_t n = fz_pick(f, 64) + 1, idx, i;

	n = uxdp_ring_cons_peek(s->cq, n, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = *uxdp_ring_addr(s->cq, idx + i);

		if (s->honest && s->tx_exact) {
			/* Copy mode completes every descriptor it consumes,
			 * invalid ones too (as the kernel's generic
			 * transmit); a zero-copy driver's pull skips the
			 * invalid ones. */
			while (s->zc && s->comp_next != s->tx_tail &&
			       !s->tx_ok[s->comp_next % MAX_TX])
				s->comp_next++;
			CHECK(s->comp_next != s->tx_tail,
			      "completion 0x%llx with nothing valid sent",
			      (unsigned long long)a);
			CHECK(a == s->tx_addr[s->comp_next % MAX_TX],
			      "completion 0x%llx, want 0x%llx",
			      (unsigned long long)a,
			      (unsigned long long)s->tx_addr[s->comp_next %
							     MAX_TX]);
			s->comp_next++;
		}
	}
	uxdp_ring_cons_release(s->cq, n);
}

/* Read RX descriptors; give some chunks straight back to the fill ring. */
static void reap_rx(struct st *s, struct fz *f)
{
	uint32_t n = fz_pick(f, 64) + 1, idx, i;

	n = uxdp_ring_cons_peek(s->rx, n, &idx);
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(s->rx, idx + i);
		uint64_t off = s->unaligned ?
			(d->addr & ((1ULL << 48) - 1)) + (d->addr >> 48) :
			d->addr;
		int64_t c = chunk_of(s, s->unaligned ? d->addr :
				     d->addr - d->addr % s->chunk);

		TRACE("  rx 0x%llx len %u\n", (unsigned long long)d->addr,
		      d->len);
		CHECK(off + d->len <= s->size, "RX desc 0x%llx len %u past "
		      "the %llu-byte UMEM", (unsigned long long)d->addr,
		      d->len, (unsigned long long)s->size);
		CHECK(d->options == 0, "RX desc options 0x%x", d->options);
		if (!s->honest)
			continue;
		CHECK(d->len == f_rx_pkt_len, "RX len %u", d->len);
		if (!s->rx_exact)
			continue;
		CHECK(c >= 0, "RX addr 0x%llx names no chunk",
		      (unsigned long long)d->addr);
		CHECK(s->posted[c] == 1, "RX chunk %lld not posted",
		      (long long)c);
		s->posted[c] = 0;	/* the application's again */
	}
	uxdp_ring_cons_release(s->rx, n);
}

/* The TX ring is empty: everything submitted was judged. */
static void check_tx_counts(struct st *s)
{
	struct uxdp_xsk_stats xs;
	struct uxdp_txq_stats ts;

	if (!s->honest || !s->tx_exact || uxdp_ring_count(s->tx))
		return;
	uxdp_xsk_stats(s->xsk, &xs);
	uxdp_dev_txq_stats(s->dev, 0, &ts);
	while (s->tx_head != s->tx_tail) {
		uint32_t j = s->tx_head++ % MAX_TX;

		if (s->tx_ok[j]) {
			/* Copy mode drops a packet shorter than an Ethernet
			 * header (completed, not sent), as the kernel's
			 * veth does. */
			if (!s->zc && s->tx_len[j] < 14)
				continue;
			s->want_pkts++;
			s->want_bytes += s->tx_len[j];
		} else {
			s->want_invalid++;
		}
	}
	CHECK(xs.tx_invalid_descs == s->want_invalid,
	      "tx_invalid_descs %llu, model %llu",
	      (unsigned long long)xs.tx_invalid_descs,
	      (unsigned long long)s->want_invalid);
	CHECK(ts.packets == s->want_pkts && ts.bytes == s->want_bytes,
	      "sent %llu/%llu bytes, model %llu/%llu",
	      (unsigned long long)ts.packets, (unsigned long long)ts.bytes,
	      (unsigned long long)s->want_pkts,
	      (unsigned long long)s->want_bytes);
}

static void audit(struct st *s)
{
	uint8_t where[MAX_CHUNKS] = { 0 };
	uint32_t i, idx, n;

	if (!s->honest || !s->rx_exact)
		return;
	/* Completions are TX addresses, and two may name one chunk: read
	 * them all first (checked as usual), so the audit sees none. */
	while (uxdp_ring_count(s->cq)) {
		struct fz z = { NULL, 0 };

		reap_comp(s, &z);
	}
	CHECK(uxdp_umem_audit(s->umem, where) >= 0, "audit failed");
	/* What is on the RX ring unread is the application's to read. */
	n = uxdp_ring_cons_peek(s->rx, s->rx_size, &idx);
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(s->rx, idx + i);
		int64_t c = chunk_of(s, s->unaligned ? d->addr :
				     d->addr - d->addr % s->chunk);

		if (c >= 0)
			where[c] |= UXDP_LOC_OTHER;
	}
	uxdp_ring_cons_cancel(s->rx, n);
	for (i = 0; i < s->nchunks; i++) {
		uint8_t w = where[i];

		/* The completion ring holds TX addresses, which the model
		 * does not own: chunks are the application's to send. */
		w &= (uint8_t)~UXDP_LOC_COMP;
		if (!s->posted[i])
			w |= UXDP_LOC_APP;
		CHECK(w && !(w & (w - 1)) && !(w & UXDP_LOC_DUP),
		      "chunk %u in places 0x%x (posted %u)", i, w,
		      s->posted[i]);
	}
}

static void run_op(struct st *s, struct fz *f)
{
	uint32_t v, op = fz_u8(f) % 12;

	TRACE("op %u\n", op);
	switch (op) {
	case 0:
	case 1:
		post_fill(s, f);
		break;
	case 2:
	case 3:
		post_tx(s, f);
		break;
	case 4: {
		int err = uxdp_xsk_sendto(s->xsk);

		CHECK(err == 0 || err == -EAGAIN || err == -EBUSY,
		      "sendto %d", err);
		break;
	}
	case 5:
		uxdp_dev_poll(s->dev, 0, (int)fz_pick(f, 80) + 1);
		break;
	case 6:
		reap_comp(s, f);
		break;
	case 7:
		reap_rx(s, f);
		break;
	case 8:
		uxdp_xsk_recvfrom(s->xsk);
		CHECK(uxdp_xsk_poll(s->xsk, POLLIN | POLLOUT, 0) >= 0,
		      "poll failed");
		break;
	case 9:		/* the application lies about one index */
		v = fz_u32(f);
		switch (fz_pick(f, 4)) {
		case 0:
			__atomic_store_n(s->tx->producer, v, __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(s->fill->producer, v,
					 __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(s->rx->consumer, v, __ATOMIC_RELEASE);
			break;
		default:
			__atomic_store_n(s->cq->consumer, v, __ATOMIC_RELEASE);
			break;
		}
		s->honest = false;
		break;
	case 10:	/* overwrite ring slots behind the library's back */
		v = fz_u32(f);
		uxdp_ring_desc(s->tx, v)->addr = fz_u64(f);
		uxdp_ring_desc(s->tx, v)->len = fz_u32(f);
		*uxdp_ring_addr(s->fill, fz_u32(f)) = fz_u64(f);
		s->honest = false;
		break;
	default:
		check_tx_counts(s);
		audit(s);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct st *s = calloc(1, sizeof(*s));
	uint8_t mode, rs;
	int ops = 0;

	if (!s)
		return 0;
	if (trace < 0)
		trace = getenv("FUZZ_XSK_TRACE") != NULL;
	mode = fz_u8(&f);
	s->zc = mode & 1;
	s->unaligned = mode & 2;
	s->chunk = mode & 4 ? 4096 : 2048;
	s->nchunks = fz_u8(&f) % 32 + 4;
	s->headroom = (uint32_t)fz_u8(&f) * 8 % 512;
	s->meta = mode & 16 ? 24 : 0;
	rs = fz_u8(&f);
	s->rx_size = 1U << (rs % 6 + 2);
	s->tx_size = 1U << ((rs >> 3) % 6 + 2);
	s->size = (uint64_t)s->nchunks * s->chunk;
	s->honest = s->rx_exact = s->tx_exact = true;
	{
		UXDP_DECLARE_OPTS(uxdp_umem_opts, uo, .chunk_size = s->chunk,
				  .headroom = s->headroom,
				  .flags = (s->unaligned ? UXDP_UMEM_F_UNALIGNED :
					    0) | (s->meta ?
					    UXDP_UMEM_F_TX_METADATA_LEN : 0),
				  .tx_metadata_len = s->meta);
		UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_count = 5000,
				  .rx_frames = 64);
		UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo,
				  .rx_size = s->rx_size, .tx_size = s->tx_size,
				  .flags = (s->zc ? UXDP_XSK_F_ZEROCOPY :
					    UXDP_XSK_F_COPY) |
					   (mode & 8 ? UXDP_XSK_F_NEED_WAKEUP :
					    0));
		struct uxdp_prog *p;

		s->umem = uxdp_umem_create(NULL, s->size, &uo);
		CHECK(s->umem, "umem: %s", uxdp_errmsg());
		s->dev = uxdp_null_create("fz0", &no);
		CHECK(s->dev, "null: %s", uxdp_errmsg());
		s->xsk = uxdp_xsk_create(s->umem, s->dev, 0, &xo);
		CHECK(s->xsk, "xsk: %s", uxdp_errmsg());
		s->map = uxdp_map_create(1);
		CHECK(s->map && !uxdp_map_update(s->map, 0,
						 uxdp_xsk_target(s->xsk)),
		      "map");
		p = uxdp_prog_create("fz", prog_xsk, s->map);
		CHECK(p && !uxdp_dev_attach_prog(s->dev, 0, p), "prog");
		uxdp_prog_put(p);
		CHECK(!uxdp_dev_up(s->dev), "up");
	}
	s->area = uxdp_umem_area(s->umem);
	s->rx = uxdp_xsk_rx_ring(s->xsk);
	s->tx = uxdp_xsk_tx_ring(s->xsk);
	s->fill = uxdp_xsk_fill_ring(s->xsk);
	s->cq = uxdp_xsk_comp_ring(s->xsk);
	/* TX metadata areas stay zero (no request): judged by the model
	 * without a checksum rule. */
	while (fz_more(&f) && ops++ < 2000)
		run_op(s, &f);
	/* Drain what an honest application would, then the checks. */
	if (s->honest && s->tx_exact) {
		int i;

		for (i = 0; i < 1000 && uxdp_ring_count(s->tx); i++) {
			struct fz z = { NULL, 0 };

			uxdp_xsk_sendto(s->xsk);
			if (s->zc)
				uxdp_dev_poll(s->dev, 0, 64);
			reap_comp(s, &z);
		}
		check_tx_counts(s);
	}
	uxdp_dev_down(s->dev);
	CHECK(!uxdp_xsk_destroy(s->xsk), "xsk destroy");
	uxdp_map_destroy(s->map);
	uxdp_dev_destroy(s->dev);
	CHECK(!uxdp_umem_destroy(s->umem), "umem destroy: %s", uxdp_errmsg());
	free(s);
	return 0;
}
