/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A packet source for datapath tests: a UMEM + pool whose chunks are all on
 * the fill ring, handing out buffers with a 64-byte test frame in them.
 */
#ifndef UXDP_T_POOL_H
#define UXDP_T_POOL_H

#include <string.h>

#include <uxdp/uxdp.h>

struct t_gen {
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	struct uxdp_rxq_info rxq;	/* mem POOL: the buff is the head */
	uint32_t nchunks;
};

static inline void t_gen_init(struct t_gen *g, uint32_t nchunks)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 2048,
			  .fill_size = 4096);
	struct uxdp_ring *fill;
	uint32_t idx, i;

	memset(g, 0, sizeof(*g));
	g->nchunks = nchunks;
	g->umem = uxdp_umem_create(NULL, (uint64_t)nchunks * 2048, &o);
	assert_non_null(g->umem);
	g->pool = uxdp_pool_create(g->umem, NULL);
	assert_non_null(g->pool);
	g->rxq.mem.type = UXDP_MEM_POOL;
	uxdp_pool_set_rxq(g->pool, &g->rxq);
	fill = uxdp_umem_fill_ring(g->umem);
	assert_int_equal(uxdp_ring_prod_reserve(fill, nchunks, &idx), nchunks);
	for (i = 0; i < nchunks; i++)
		*uxdp_ring_addr(fill, idx + i) = (uint64_t)i * 2048;
	uxdp_ring_prod_submit(fill, nchunks);
}

/* A buffer holding a @len-byte frame: dst MAC 02:..:01, src 02:..:02,
 * then @seq in the first payload bytes. NULL when the pool is empty. */
static inline struct uxdp_buff *t_gen_buf(struct t_gen *g, uint32_t len,
					  uint32_t seq)
{
	static const unsigned char hdr[14] = {
		2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00,
	};
	struct uxdp_buff *b = uxdp_pool_alloc(g->pool);

	if (!b)
		return NULL;
	uxdp_buff_set_size(b, len);
	memcpy(b->data, hdr, sizeof(hdr));
	memcpy((char *)b->data + 14, &seq, sizeof(seq));
	return b;
}

/* A frame made from t_gen_buf(). */
static inline struct uxdp_frame *t_gen_frame(struct t_gen *g, uint32_t len,
					     uint32_t seq)
{
	struct uxdp_buff *b = t_gen_buf(g, len, seq);

	assert_non_null(b);
	return uxdp_buff_to_frame(b);
}

static inline uint32_t t_gen_outstanding(struct t_gen *g)
{
	struct uxdp_pool_stats st;
	uint8_t *where = malloc(g->nchunks);

	/* The audit also picks up frees other threads made. */
	assert_true(uxdp_pool_audit(g->pool, where) >= 0);
	free(where);
	assert_int_equal(uxdp_pool_stats(g->pool, &st), 0);
	return st.outstanding;
}

static inline void t_gen_fini(struct t_gen *g)
{
	assert_int_equal(t_gen_outstanding(g), 0);
	assert_int_equal(uxdp_pool_destroy(g->pool), 0);
	assert_int_equal(uxdp_umem_destroy(g->umem), 0);
}

#endif /* UXDP_T_POOL_H */
