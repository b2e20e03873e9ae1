/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_ring: one ring, a producer and a consumer handle on the same memory,
 * driven by a script of operations, with a hostile peer: between operations
 * the script may overwrite the shared producer, consumer and flags words and
 * any entry with arbitrary values (shared memory with another process or the
 * kernel gives it that power).
 *
 * Checks after every operation:
 *  - no call returns more than the ring size, reserve/peek never return more
 *    than asked (reserve: exactly 0 or n);
 *  - the bulk copies (uxdp_ring_prod_write_* / uxdp_ring_cons_read_*) move
 *    exactly the returned count between the ring and a heap array sized to
 *    the request, so ASan sees any overrun of the array; with the ring in
 *    heap memory (one of the two modes) it sees overruns of the ring too;
 *  - while the peer has been honest (no overwrite yet), every count is the
 *    exact one a correct SPSC ring gives, and the consumer reads what the
 *    producer wrote at each index, in order.
 *
 * Input (little-endian, zeros past the end):
 *	u8  config: bits 0-2 log2(entries) % 7 (1..64 entries); bit 3
 *	    descriptor ring (else addresses); bit 4 ring memory from malloc
 *	    (else uxdp_ring_mem_alloc); bit 5 start indices from the input;
 *	    bit 6 producer and consumer start apart (hostile)
 *	u32 start producer, u32 start consumer (bit 5 / 6)
 *	then operations: u8 opcode, then its arguments (see run_op())
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

struct rt {
	uint32_t size;
	uint32_t esize;		/* 8 or 16 */
	bool desc;
	bool heap;
	void *mem;
	struct uxdp_ring p;	/* producer handle */
	struct uxdp_ring c;	/* consumer handle */
	uint32_t *w_prod;	/* the shared words, as the peer sees them */
	uint32_t *w_cons;
	uint32_t *w_flags;
	char *entries;
	/* The application's own bookkeeping: what each handle holds. */
	uint32_t p_res;		/* reserved, not submitted */
	uint32_t c_peek;	/* peeked, not released */
	/* While honest: the shared indices as a correct ring leaves them. */
	bool honest;
	uint32_t m_prod;
	uint32_t m_cons;
};

/* What the producer writes at index @i (checked by the consumer). */
static uint64_t val(uint32_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ 0x5a5a;
}

/* A request size: mostly around the ring size, sometimes anything. */
static uint32_t pick_n(struct fz *f, const struct rt *r)
{
	uint8_t v = fz_u8(f);

	if (v & 0x80)
		return v;
	return v % (2 * r->size + 5);
}

static void *alloc_elems(const struct rt *r, uint32_t n)
{
	/* Exactly n elements, so ASan flags a copy of one more. */
	void *a = malloc((size_t)n * r->esize);

	if (!a && n)
		abort();
	return a;
}

/* Real free slots / available entries, from the honest model. */
static uint32_t m_free(const struct rt *r)
{
	return r->size - (r->m_prod + r->p_res - r->m_cons);
}

static uint32_t m_avail(const struct rt *r)
{
	return r->m_prod - (r->m_cons + r->c_peek);
}

static void produce(struct rt *r, uint32_t n, bool exact)
{
	uint32_t idx = 0xdeadbeef, got, i, want_idx = r->m_prod + r->p_res;
	uint32_t expect = 0;
	void *src = alloc_elems(r, n);

	if (r->honest) {
		expect = m_free(r) < n ? (exact ? 0 : m_free(r)) : n;
	}
	got = exact ? uxdp_ring_prod_reserve(&r->p, n, &idx) :
		      uxdp_ring_prod_reserve_batch(&r->p, n, &idx);
	/* Fill and copy exactly what the ring handed out: an overrun of the
	 * ring or the array shows up here, under ASan, before the checks. */
	if (got <= n) {
		for (i = 0; i < got; i++) {
			if (r->desc) {
				struct uxdp_desc *d = src;

				d[i].addr = val(idx + i);
				d[i].len = idx + i;
				d[i].options = ~(idx + i);
			} else {
				((uint64_t *)src)[i] = val(idx + i);
			}
		}
		if (r->desc)
			uxdp_ring_prod_write_descs(&r->p, idx, src, got);
		else
			uxdp_ring_prod_write_addrs(&r->p, idx, src, got);
	}
	FZ_CHECK(got <= n, "reserve%s(%u) returned %u",
		 exact ? "" : "_batch", n, got);
	FZ_CHECK(got <= r->size, "reserve%s(%u) returned %u, ring size %u",
		 exact ? "" : "_batch", n, got, r->size);
	if (exact)
		FZ_CHECK(got == 0 || got == n, "reserve(%u) returned %u", n,
			 got);
	if (r->honest) {
		FZ_CHECK(got == expect, "reserve%s(%u) returned %u, expected "
			 "%u", exact ? "" : "_batch", n, got, expect);
		FZ_CHECK(idx == want_idx, "reserve idx %u, expected %u", idx,
			 want_idx);
	}
	r->p_res += got;
	free(src);
}

static void consume(struct rt *r, uint32_t n)
{
	uint32_t idx = 0xdeadbeef, got, i, want_idx = r->m_cons + r->c_peek;
	uint32_t expect = 0;
	void *dst = alloc_elems(r, n);

	if (r->honest)
		expect = m_avail(r) < n ? m_avail(r) : n;
	got = uxdp_ring_cons_peek(&r->c, n, &idx);
	if (got <= n) {
		if (r->desc)
			uxdp_ring_cons_read_descs(&r->c, idx, dst, got);
		else
			uxdp_ring_cons_read_addrs(&r->c, idx, dst, got);
	}
	FZ_CHECK(got <= n, "peek(%u) returned %u", n, got);
	FZ_CHECK(got <= r->size, "peek(%u) returned %u, ring size %u", n,
		 got, r->size);
	if (r->honest) {
		FZ_CHECK(got == expect, "peek(%u) returned %u, expected %u", n,
			 got, expect);
		FZ_CHECK(idx == want_idx, "peek idx %u, expected %u", idx,
			 want_idx);
		for (i = 0; i < got; i++) {
			uint32_t k = idx + i;

			if (r->desc) {
				const struct uxdp_desc *d = dst;

				FZ_CHECK(d[i].addr == val(k) && d[i].len == k &&
					 d[i].options == ~k,
					 "entry %u read back wrong", k);
			} else {
				FZ_CHECK(((uint64_t *)dst)[i] == val(k),
					 "entry %u read back wrong", k);
			}
		}
	}
	r->c_peek += got;
	free(dst);
}

enum {
	OP_RESERVE,
	OP_RESERVE_BATCH,
	OP_SUBMIT,
	OP_PUBLISH,
	OP_PROD_CANCEL,
	OP_PEEK,
	OP_RELEASE,
	OP_CONS_PUBLISH,
	OP_CONS_CANCEL,
	OP_NB_FREE,
	OP_NB_AVAIL,
	OP_COUNT,
	OP_WAKEUP,
	OP_REINIT,
	OP_EVIL_PROD,		/* the peer writes the producer word */
	OP_EVIL_CONS,		/* ... the consumer word */
	OP_EVIL_ENTRY,		/* ... an entry */
	OP_EVIL_FLAGS,		/* ... the flags word */
	NR_OPS
};

static void run_op(struct rt *r, struct fz *f)
{
	uint8_t op = fz_u8(f) % NR_OPS;
	uint32_t n, k, got;

	switch (op) {
	case OP_RESERVE:
		produce(r, pick_n(f, r), true);
		break;
	case OP_RESERVE_BATCH:
		produce(r, pick_n(f, r), false);
		break;
	case OP_SUBMIT:
		/* The application submits only what it reserved. */
		k = r->p_res ? fz_u8(f) % (r->p_res + 1) : 0;
		uxdp_ring_prod_submit(&r->p, k);
		r->p_res -= k;
		r->m_prod += k;
		break;
	case OP_PUBLISH:
		uxdp_ring_prod_publish(&r->p);
		r->m_prod += r->p_res;
		r->p_res = 0;
		break;
	case OP_PROD_CANCEL:
		k = r->p_res ? fz_u8(f) % (r->p_res + 1) : 0;
		uxdp_ring_prod_cancel(&r->p, k);
		r->p_res -= k;
		break;
	case OP_PEEK:
		consume(r, pick_n(f, r));
		break;
	case OP_RELEASE:
		k = r->c_peek ? fz_u8(f) % (r->c_peek + 1) : 0;
		uxdp_ring_cons_release(&r->c, k);
		r->c_peek -= k;
		r->m_cons += k;
		break;
	case OP_CONS_PUBLISH:
		uxdp_ring_cons_publish(&r->c);
		r->m_cons += r->c_peek;
		r->c_peek = 0;
		break;
	case OP_CONS_CANCEL:
		k = r->c_peek ? fz_u8(f) % (r->c_peek + 1) : 0;
		uxdp_ring_cons_cancel(&r->c, k);
		r->c_peek -= k;
		break;
	case OP_NB_FREE:
		n = pick_n(f, r);
		got = uxdp_ring_prod_nb_free(&r->p, n);
		FZ_CHECK(got <= r->size, "prod_nb_free(%u) = %u, ring size %u",
			 n, got, r->size);
		if (r->honest)
			FZ_CHECK(got <= m_free(r) &&
				 (got >= n || got == m_free(r)),
				 "prod_nb_free(%u) = %u, %u free", n, got,
				 m_free(r));
		break;
	case OP_NB_AVAIL:
		n = pick_n(f, r);
		got = uxdp_ring_cons_nb_avail(&r->c, n);
		FZ_CHECK(got <= r->size, "cons_nb_avail(%u) = %u, ring size %u",
			 n, got, r->size);
		if (r->honest)
			FZ_CHECK(got <= m_avail(r) &&
				 (got >= n || got == m_avail(r)),
				 "cons_nb_avail(%u) = %u, %u available", n, got,
				 m_avail(r));
		break;
	case OP_COUNT:
		got = uxdp_ring_count(&r->c);
		if (r->honest)
			FZ_CHECK(got == r->m_prod - r->m_cons,
				 "count %u, expected %u", got,
				 r->m_prod - r->m_cons);
		break;
	case OP_WAKEUP:
		if (fz_bit(f))
			uxdp_ring_set_need_wakeup(&r->c);
		else
			uxdp_ring_clear_need_wakeup(&r->c);
		FZ_CHECK(uxdp_ring_needs_wakeup(&r->p) ==
			 !!(*r->w_flags & UXDP_RING_NEED_WAKEUP),
			 "needs_wakeup disagrees with the flags word");
		break;
	case OP_REINIT:
		/* Attach a fresh handle to the ring in use: it starts from
		 * the shared words, forgetting what the old one held. */
		if (fz_bit(f)) {
			FZ_CHECK(!uxdp_ring_init_prod(&r->p, r->mem, r->size,
						      NULL), "init_prod");
			r->p_res = 0;
		} else {
			FZ_CHECK(!uxdp_ring_init_cons(&r->c, r->mem, r->size,
						      NULL), "init_cons");
			r->c_peek = 0;
		}
		break;
	case OP_EVIL_PROD:
		*r->w_prod = fz_bit(f) ? fz_u32(f) : *r->w_prod + fz_u8(f);
		r->honest = false;
		break;
	case OP_EVIL_CONS:
		*r->w_cons = fz_bit(f) ? fz_u32(f) : *r->w_cons + fz_u8(f);
		r->honest = false;
		break;
	case OP_EVIL_ENTRY:
		k = fz_u8(f) % r->size;
		memset(r->entries + (size_t)k * r->esize, fz_u8(f), r->esize);
		r->honest = false;
		break;
	case OP_EVIL_FLAGS:
		*r->w_flags = fz_u32(f);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fz f = { data, len };
	uint8_t cfg = fz_u8(&f);
	uint32_t start_p = fz_u32(&f), start_c = fz_u32(&f);
	struct rt r;
	size_t mem_len;
	int ops = 0;

	memset(&r, 0, sizeof(r));
	r.size = 1U << ((cfg & 7) % 7);
	r.desc = cfg & 8;
	r.heap = cfg & 16;
	r.esize = r.desc ? sizeof(struct uxdp_desc) : sizeof(uint64_t);
	mem_len = uxdp_ring_mem_size(r.size, r.esize);
	FZ_CHECK(mem_len == UXDP_RING_OFF_DESC + (size_t)r.size * r.esize,
		 "ring_mem_size(%u, %u) = %zu", r.size, r.esize, mem_len);
	if (r.heap) {
		/* Exactly the ring's bytes, so ASan sees an overrun. */
		if (posix_memalign(&r.mem, UXDP_CACHE_LINE, mem_len))
			abort();
		memset(r.mem, 0, mem_len);
	} else {
		r.mem = uxdp_ring_mem_alloc(r.size, r.esize);
		FZ_CHECK(r.mem, "ring_mem_alloc(%u, %u): %s", r.size, r.esize,
			 uxdp_errmsg());
	}
	r.w_prod = (uint32_t *)((char *)r.mem + UXDP_RING_OFF_PRODUCER);
	r.w_cons = (uint32_t *)((char *)r.mem + UXDP_RING_OFF_CONSUMER);
	r.w_flags = (uint32_t *)((char *)r.mem + UXDP_RING_OFF_FLAGS);
	r.entries = (char *)r.mem + UXDP_RING_OFF_DESC;
	r.honest = true;
	if (cfg & 32) {
		/* Start anywhere in the u32 index space (wrap-around). */
		*r.w_prod = start_p;
		*r.w_cons = cfg & 64 ? start_c : start_p;
		r.honest = !(cfg & 64) || start_c == start_p;
	}
	r.m_prod = *r.w_prod;
	r.m_cons = *r.w_cons;
	FZ_CHECK(!uxdp_ring_init_prod(&r.p, r.mem, r.size, NULL), "init_prod");
	FZ_CHECK(!uxdp_ring_init_cons(&r.c, r.mem, r.size, NULL), "init_cons");

	while (fz_more(&f) && ops++ < 1000)
		run_op(&r, &f);

	if (r.heap)
		free(r.mem);
	else
		uxdp_ring_mem_free(r.mem, r.size, r.esize);
	return 0;
}
