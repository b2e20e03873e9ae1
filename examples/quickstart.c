/* The README's example: one Rx buffer's life through a uxdp pool. */
#include <stdio.h>
#include <string.h>
#include <uxdp/uxdp.h>

int main(void)
{
	struct uxdp_umem *umem = uxdp_umem_create(NULL, 1 << 20, NULL);
	if (!umem)
		return fprintf(stderr, "umem: %s\n", uxdp_errmsg()), 1;
	struct uxdp_pool *pool = uxdp_pool_create(umem, NULL);
	struct uxdp_ring *fill = uxdp_umem_fill_ring(umem);
	uint32_t idx, n = uxdp_umem_nchunks(umem), i;

	/* Application: post every chunk on the fill ring. */
	uxdp_ring_prod_reserve(fill, n, &idx);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(fill, idx + i) = (uint64_t)i * 4096;
	uxdp_ring_prod_submit(fill, n);

	/* Driver: refill 64 Rx slots at once, "receive" into the first. */
	struct uxdp_buff *bufs[64];
	uint32_t got = uxdp_pool_alloc_batch(pool, bufs, 64);
	uxdp_buff_set_size(bufs[0], 5);
	memcpy(bufs[0]->data, "hello", 5);

	/* Hand it to the application: it gets an address into the UMEM. */
	uint64_t addr = uxdp_pool_release(bufs[0]);
	printf("got %u buffers; packet at %#llx: %.5s\n", got,
	       (unsigned long long)addr,
	       (char *)uxdp_umem_addr_ptr(uxdp_umem_area(umem), addr));

	uxdp_pool_free_batch(pool, bufs + 1, got - 1);
	uxdp_pool_destroy(pool);
	return uxdp_umem_destroy(umem);
}
