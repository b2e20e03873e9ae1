/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the committed seed corpus, tests/fuzz/corpus/<harness>/<name>:
 * a few small inputs per harness that reach its main paths, plus the inputs
 * that found bugs (regress-*), so every run replays them. Run by hand after
 * changing an input format:
 *
 *	build-fuzz/tests/fuzz/fuzz_gen_corpus tests/fuzz/corpus
 *
 * The formats are the ones each harness's header comment describes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/bpf.h>

#include <uxdp/umem.h>

#include "../t_rss_key.h"

struct seed {
	uint8_t b[1024];
	size_t n;
};

static void u8(struct seed *s, unsigned v)
{
	if (s->n >= sizeof(s->b)) {
		fprintf(stderr, "gen_corpus: seed too long\n");
		exit(1);
	}
	s->b[s->n++] = (uint8_t)v;
}

static void u16(struct seed *s, unsigned v)
{
	u8(s, v & 0xff);
	u8(s, v >> 8 & 0xff);
}

static void u32(struct seed *s, uint32_t v)
{
	u16(s, v & 0xffff);
	u16(s, v >> 16);
}

static void u64(struct seed *s, uint64_t v)
{
	u32(s, (uint32_t)v);
	u32(s, (uint32_t)(v >> 32));
}

/* A string as fz_str() reads it: length byte, bytes. */
static void str(struct seed *s, const char *v)
{
	size_t i, n = strlen(v);

	u8(s, (unsigned)n);
	for (i = 0; i < n; i++)
		u8(s, (uint8_t)v[i]);
}

static const char *outdir;

static void put(const char *harness, const char *name, const struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, harness);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- fuzz_umem ----------------------------------------------------------- */

struct umem_in {
	unsigned mode;		/* area kind | 4 opts NULL | 8 raw sz */
	uint64_t area;
	unsigned size_shape;
	uint64_t size;
	unsigned chunk_shape;	/* 0 raw, else table index in the value */
	uint32_t chunk;
	unsigned hr_shape;
	uint32_t headroom;
	unsigned flags_shape;
	uint32_t flags;
	uint32_t txm;
	unsigned ring_shape;
	uint32_t fill, comp;
	unsigned sz;
};

static void umem(const char *name, const struct umem_in *in)
{
	struct seed s = { .n = 0 };

	u8(&s, in->mode);
	u64(&s, in->area);
	u8(&s, in->size_shape);
	u64(&s, in->size);
	u8(&s, in->chunk_shape);
	u32(&s, in->chunk);
	u8(&s, in->hr_shape);
	u32(&s, in->headroom);
	u8(&s, in->flags_shape);
	u32(&s, in->flags);
	u8(&s, 0);
	u32(&s, in->txm);
	u8(&s, in->ring_shape);
	u32(&s, in->fill);
	u32(&s, in->comp);
	if (in->mode & 8)
		u8(&s, in->sz);
	put("umem", name, &s);
}

static void gen_umem(void)
{
	/* chunk table: 0 default, 1 2048, 2 4096, 3 3000, 4 2047 */
	umem("aligned-1m", &(struct umem_in){
		.size_shape = 0, .size = 1 << 20, .chunk_shape = 1,
		.chunk = 2, .hr_shape = 1, .headroom = 256,
		.flags_shape = 1, .ring_shape = 1 });
	umem("unaligned-3000-maxhr", &(struct umem_in){
		.size_shape = 0, .size = 100000, .chunk_shape = 1,
		.chunk = 3, .hr_shape = 2, .headroom = 2,
		.flags_shape = 1, .flags = UXDP_UMEM_F_UNALIGNED,
		.ring_shape = 2 | 2 << 2, .fill = 6, .comp = 3 });
	umem("chunk-2047", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 4, .flags_shape = 1, .ring_shape = 1 });
	umem("headroom-over", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 1, .hr_shape = 2, .headroom = 3,
		.flags_shape = 1, .ring_shape = 1 });
	umem("heap-area-offset", &(struct umem_in){
		.mode = 2, .area = 100, .size_shape = 0, .size = 8192,
		.chunk_shape = 1, .chunk = 1, .flags_shape = 1,
		.ring_shape = 2, .fill = 4, .comp = 4 });
	umem("heap-area", &(struct umem_in){
		.mode = 1, .size_shape = 0, .size = 16384,
		.chunk_shape = 1, .chunk = 2, .flags_shape = 1,
		.ring_shape = 2, .fill = 1, .comp = 0 });
	umem("area-wraps", &(struct umem_in){
		.mode = 3, .area = 0xfffffffffff00000ULL, .size_shape = 0,
		.size = 1 << 21, .chunk_shape = 1, .chunk = 2,
		.flags_shape = 1, .ring_shape = 1 });
	umem("opts-old-small", &(struct umem_in){
		.mode = 8, .size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 1, .flags_shape = 1, .ring_shape = 1, .sz = 16 });
	umem("opts-new-tail", &(struct umem_in){
		.mode = 8, .size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 1, .flags_shape = 1, .ring_shape = 1, .sz = 48 });
	umem("txmeta-12", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 2, .flags_shape = 1,
		.flags = UXDP_UMEM_F_TX_METADATA_LEN, .txm = 12,
		.ring_shape = 1 });
	/* 8: below the 16-byte minimum (older kernels took it); 16: the
	 * smallest the kernel takes now */
	umem("txmeta-8", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 2, .flags_shape = 1,
		.flags = UXDP_UMEM_F_TX_METADATA_LEN, .txm = 8,
		.ring_shape = 1 });
	umem("txmeta-16", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 2, .flags_shape = 1,
		.flags = UXDP_UMEM_F_TX_METADATA_LEN, .txm = 16,
		.ring_shape = 1 });
	umem("hugepages-area", &(struct umem_in){
		.mode = 3, .area = 1 << 21, .size_shape = 0, .size = 1 << 21,
		.chunk_shape = 1, .chunk = 2, .flags_shape = 1,
		.flags = UXDP_UMEM_F_HUGEPAGES, .ring_shape = 1 });
	umem("ring-not-pow2", &(struct umem_in){
		.size_shape = 0, .size = 65536, .chunk_shape = 1,
		.chunk = 2, .flags_shape = 1, .ring_shape = 0, .fill = 100,
		.comp = 2048 });
}

/* ---- fuzz_ring ----------------------------------------------------------- */

enum { R_RESERVE, R_RESERVE_BATCH, R_SUBMIT, R_PUBLISH, R_PROD_CANCEL,
	R_PEEK, R_RELEASE, R_CONS_PUBLISH, R_CONS_CANCEL, R_NB_FREE,
	R_NB_AVAIL, R_COUNT, R_WAKEUP, R_REINIT, R_EVIL_PROD, R_EVIL_CONS,
	R_EVIL_ENTRY, R_EVIL_FLAGS };

static void gen_ring(void)
{
	struct seed s;
	int i;

	/* Honest traffic across the 2^32 wrap, 8 addresses. */
	s.n = 0;
	u8(&s, 3 | 32);
	u32(&s, 0xfffffff0);
	u32(&s, 0);
	for (i = 0; i < 6; i++) {
		u8(&s, R_RESERVE_BATCH); u8(&s, 5);
		u8(&s, R_SUBMIT); u8(&s, 3);
		u8(&s, R_PUBLISH);
		u8(&s, R_PEEK); u8(&s, 6);
		u8(&s, R_RELEASE); u8(&s, 2);
		u8(&s, R_CONS_PUBLISH);
	}
	u8(&s, R_COUNT);
	put("ring", "honest-wrap", &s);

	/* Descriptors, 64 entries in heap memory, bulk copies of 32. */
	s.n = 0;
	u8(&s, 6 | 8 | 16);
	u32(&s, 0);
	u32(&s, 0);
	for (i = 0; i < 5; i++) {
		u8(&s, R_RESERVE); u8(&s, 32);
		u8(&s, R_PROD_CANCEL); u8(&s, 1);
		u8(&s, R_PUBLISH);
		u8(&s, R_PEEK); u8(&s, 40);
		u8(&s, R_CONS_CANCEL); u8(&s, 3);
		u8(&s, R_CONS_PUBLISH);
		u8(&s, R_NB_FREE); u8(&s, 64);
		u8(&s, R_NB_AVAIL); u8(&s, 1);
	}
	u8(&s, R_WAKEUP); u8(&s, 1);
	u8(&s, R_REINIT); u8(&s, 0);
	u8(&s, R_WAKEUP); u8(&s, 0);
	put("ring", "desc-bulk", &s);

	/* A peer that writes garbage, but within what a ring can hold. */
	s.n = 0;
	u8(&s, 4 | 16);
	u32(&s, 0);
	u32(&s, 0);
	u8(&s, R_EVIL_ENTRY); u8(&s, 3); u8(&s, 0xee);
	u8(&s, R_EVIL_PROD); u8(&s, 0); u8(&s, 5);
	u8(&s, R_PEEK); u8(&s, 4);
	u8(&s, R_EVIL_FLAGS); u32(&s, 0xffffffff);
	u8(&s, R_WAKEUP); u8(&s, 0);
	put("ring", "peer-garbage", &s);

	/* Found on the seed: a producer index a ring and more ahead makes
	 * peek return more than the ring holds, and the bulk read runs past
	 * the ring (heap memory: ASan heap-buffer-overflow READ). */
	s.n = 0;
	u8(&s, 2 | 16);
	u32(&s, 0);
	u32(&s, 0);
	u8(&s, R_EVIL_PROD); u8(&s, 1); u32(&s, 1000);
	u8(&s, R_PEEK); u8(&s, 200);
	put("ring", "regress-peek-past-ring", &s);

	/* The same for the producer: a consumer index ahead of the producer
	 * makes reserve_batch hand out more than the ring (WRITE overflow). */
	s.n = 0;
	u8(&s, 2 | 16);
	u32(&s, 0);
	u32(&s, 0);
	u8(&s, R_EVIL_CONS); u8(&s, 1); u32(&s, 1000);
	u8(&s, R_RESERVE_BATCH); u8(&s, 200);
	put("ring", "regress-reserve-past-ring", &s);

	/* Found on the first fix: a handle attached to a ring whose peer
	 * index is already hostile caches it unchecked, and the next
	 * reserve is served from that cache (WRITE overflow). */
	s.n = 0;
	u8(&s, 2 | 16 | 32 | 64);
	u32(&s, 0);
	u32(&s, 1000);
	u8(&s, R_RESERVE_BATCH); u8(&s, 200);
	put("ring", "regress-attach-hostile-consumer", &s);

	/* The same for a consumer handle and peek (READ overflow). */
	s.n = 0;
	u8(&s, 2 | 16 | 32 | 64);
	u32(&s, 1000);
	u32(&s, 0);
	u8(&s, R_PEEK); u8(&s, 200);
	put("ring", "regress-attach-hostile-producer", &s);

	/* Found on the first fix: the clamp for a consumer index ahead of
	 * the producer counts the producer's reserved, unsubmitted slots as
	 * free; cancelling them leaves more free slots than the ring has,
	 * and the next reserve writes past it. */
	s.n = 0;
	u8(&s, 2 | 16 | 32);
	u32(&s, 3);		/* start at slot 3: the copy wraps */
	u32(&s, 0);
	u8(&s, R_RESERVE_BATCH); u8(&s, 2);
	u8(&s, R_EVIL_CONS); u8(&s, 1); u32(&s, 1000);
	u8(&s, R_RESERVE_BATCH); u8(&s, 3);
	u8(&s, R_PROD_CANCEL); u8(&s, 5);
	u8(&s, R_RESERVE); u8(&s, 6);
	put("ring", "regress-clamp-then-cancel-prod", &s);

	/* The same on the consumer side: peeked entries, a producer index
	 * far ahead, cancel, and the next peek reads past the ring. */
	s.n = 0;
	u8(&s, 2 | 16 | 32);
	u32(&s, 3);
	u32(&s, 0);
	u8(&s, R_RESERVE_BATCH); u8(&s, 2);
	u8(&s, R_PUBLISH);
	u8(&s, R_PEEK); u8(&s, 2);
	u8(&s, R_EVIL_PROD); u8(&s, 1); u32(&s, 1003);
	u8(&s, R_PEEK); u8(&s, 3);
	u8(&s, R_CONS_CANCEL); u8(&s, 5);
	u8(&s, R_PEEK); u8(&s, 6);
	put("ring", "regress-clamp-then-cancel-cons", &s);

	/* Found by a long run: the consumer index moved into slots the
	 * producer had reserved but not submitted; the producer read it,
	 * then cancelled those slots, and the consumer was ahead of it: the
	 * next reserve gave 6 slots of a 4-slot ring (WRITE overflow). The
	 * input as libFuzzer saved it. */
	{
		static const uint8_t in[] = {
			0x32, 0x02, 0x01, 0x32, 0x02, 0x84, 0x2e, 0x84, 0x84,
			0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84, 0x84,
			0x84, 0x84, 0x5b, 0x84, 0x84, 0x84, 0x84, 0xf9, 0x24,
			0x03, 0x04, 0x05, 0x00, 0x00, 0x1b, 0x04, 0x05, 0x08,
			0x28, 0x03, 0x00, 0x06,
		};

		memcpy(s.b, in, sizeof(in));
		s.n = sizeof(in);
		put("ring", "regress-cancel-into-reserved", &s);
	}
}

/* ---- fuzz_pool ----------------------------------------------------------- */

enum { P_POST, P_ALLOC, P_ALLOC_BATCH, P_FREE, P_FREE_BATCH, P_FREE_REMOTE,
	P_RELEASE, P_COMPLETE, P_READ_COMP, P_CAN_ALLOC, P_FLUSH, P_AUDIT,
	P_BUSY, P_BUFF_AT, P_RETIRE };
#define POOL1 0x80

static void pool_cfg(struct seed *s, unsigned mode, unsigned nchunks,
		     unsigned hr_shape, unsigned hr, unsigned fill_log,
		     unsigned comp_log)
{
	u8(s, mode);
	u8(s, nchunks - 1);
	u8(s, hr_shape);
	u16(s, hr);
	u8(s, fill_log | comp_log << 3);
}

/* Post @n of the application's chunks. */
static void post_good(struct seed *s, unsigned pool, unsigned n)
{
	unsigned i;

	u8(s, P_POST | pool);
	u8(s, n);
	for (i = 0; i < n; i++) {
		u8(s, 0);
		u16(s, i);
	}
}

static void gen_pool(void)
{
	struct seed s;

	/* Aligned: refill, batch, free, release, complete, read back. */
	s.n = 0;
	pool_cfg(&s, 0, 8, 0, 0, 4, 4);
	pool_cfg(&s, 2, 4, 1, 13, 3, 3);
	post_good(&s, 0, 8);
	u8(&s, P_ALLOC_BATCH); u8(&s, 70); u16(&s, 60);
	u8(&s, P_FREE_BATCH); u8(&s, 3); u8(&s, 0); u8(&s, 1); u8(&s, 2);
	u8(&s, P_RELEASE); u8(&s, 3);
	u8(&s, P_COMPLETE); u8(&s, 2); u8(&s, 0); u8(&s, 1);
	u8(&s, P_READ_COMP); u8(&s, 8);
	u8(&s, P_CAN_ALLOC); u8(&s, 4);
	u8(&s, P_ALLOC); u16(&s, 100);
	u8(&s, P_FLUSH);
	u8(&s, P_AUDIT);
	put("pool", "aligned-basic", &s);

	/* Unaligned, odd headroom, bases anywhere, offsets, bad addresses. */
	s.n = 0;
	pool_cfg(&s, 1 | 4, 6, 1, 37, 5, 2);
	pool_cfg(&s, 1 | 2, 2, 2, 3, 1, 1);
	u8(&s, P_POST); u8(&s, 6);
	u8(&s, 4); u16(&s, 1001);	/* any base */
	u8(&s, 1); u16(&s, 0x123);	/* a chunk with an offset */
	u8(&s, 3 | 0x40); u16(&s, 5);	/* past the end */
	u8(&s, 5); u16(&s, 4000);	/* the last chunk and beyond */
	u8(&s, 0); u16(&s, 0);
	u8(&s, 2); u16(&s, 1);
	u8(&s, P_ALLOC); u16(&s, 10);
	u8(&s, P_ALLOC_BATCH); u8(&s, 5); u16(&s, 0);
	u8(&s, P_RELEASE); u8(&s, 0);
	u8(&s, P_FREE); u8(&s, 1);
	u8(&s, P_ALLOC); u16(&s, 1);
	u8(&s, P_AUDIT);
	put("pool", "unaligned-odd", &s);

	/* Double frees and frees after release, local paths. */
	s.n = 0;
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	post_good(&s, 0, 4);
	u8(&s, P_ALLOC_BATCH); u8(&s, 3); u16(&s, 0);
	u8(&s, P_FREE); u8(&s, 0);
	u8(&s, P_FREE); u8(&s, 0);
	u8(&s, P_FREE_BATCH); u8(&s, 2); u8(&s, 0); u8(&s, 0);
	u8(&s, P_RELEASE); u8(&s, 1);
	u8(&s, P_FREE); u8(&s, 1);
	u8(&s, P_RELEASE); u8(&s, 1);
	u8(&s, P_RELEASE); u8(&s, 0);
	u8(&s, P_AUDIT);
	put("pool", "double-free-local", &s);

	/* Another pool's buffer through the local paths. */
	s.n = 0;
	pool_cfg(&s, 0, 2, 0, 0, 2, 2);
	pool_cfg(&s, 2, 2, 0, 0, 2, 2);
	post_good(&s, 0, 2);
	post_good(&s, POOL1, 2);
	u8(&s, P_ALLOC); u16(&s, 0);
	u8(&s, P_ALLOC | POOL1); u16(&s, 0);
	u8(&s, P_FREE_BATCH | POOL1); u8(&s, 1); u8(&s, 0);
	u8(&s, P_FREE_BATCH); u8(&s, 1); u8(&s, 1);
	u8(&s, P_BUSY);
	u8(&s, P_FREE); u8(&s, 0);
	u8(&s, P_FREE); u8(&s, 1);
	put("pool", "foreign-local", &s);

	/* Remote returns used the right way. */
	s.n = 0;
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	pool_cfg(&s, 0, 1, 0, 0, 0, 0);
	post_good(&s, 0, 4);
	u8(&s, P_ALLOC_BATCH); u8(&s, 4); u16(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 2); u8(&s, 0); u8(&s, 1);
	u8(&s, P_ALLOC); u16(&s, 0);
	u8(&s, P_CAN_ALLOC); u8(&s, 2);
	u8(&s, P_FREE_REMOTE); u8(&s, 1); u8(&s, 2);
	u8(&s, P_AUDIT);
	put("pool", "remote", &s);

	/* Found on the seed: b = alloc; free_remote(b); buff_free(b) is
	 * taken as a good free, and then x = alloc, y = alloc give x == y. */
	s.n = 0;
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	pool_cfg(&s, 0, 1, 0, 0, 0, 0);
	post_good(&s, 0, 4);
	u8(&s, P_ALLOC); u16(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 1); u8(&s, 0);
	u8(&s, P_FREE); u8(&s, 0);
	u8(&s, P_ALLOC); u16(&s, 0);
	u8(&s, P_ALLOC); u16(&s, 0);
	put("pool", "regress-remote-then-local-free", &s);

	/* Found on the seed: remote double frees fill the remote queue and
	 * a later good remote free is dropped (the buffer never returns). */
	s.n = 0;
	pool_cfg(&s, 0, 2, 0, 0, 2, 2);
	pool_cfg(&s, 0, 1, 0, 0, 0, 0);
	post_good(&s, 0, 2);
	u8(&s, P_ALLOC_BATCH); u8(&s, 2); u16(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 2); u8(&s, 0); u8(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 1); u8(&s, 1);
	u8(&s, P_AUDIT);
	put("pool", "regress-remote-double-free", &s);

	/* Found on the seed: another pool's buffer through free_remote is
	 * indexed into this pool's state array (out of bounds). */
	s.n = 0;
	pool_cfg(&s, 0, 2, 0, 0, 2, 2);
	pool_cfg(&s, 2, 2, 0, 0, 2, 2);
	post_good(&s, POOL1, 2);
	u8(&s, P_ALLOC | POOL1); u16(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 1); u8(&s, 0);
	u8(&s, P_AUDIT);
	put("pool", "regress-remote-foreign", &s);

	/* Remote frees waiting while calls that do not take them back run,
	 * then lookups by address, which do (pool.h). */
	s.n = 0;
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	pool_cfg(&s, 1, 2, 0, 0, 2, 2);
	post_good(&s, 0, 4);
	post_good(&s, POOL1, 2);
	u8(&s, P_ALLOC_BATCH); u8(&s, 3); u16(&s, 0);
	u8(&s, P_ALLOC | POOL1); u16(&s, 0);
	u8(&s, P_FREE); u8(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 2); u8(&s, 0); u8(&s, 1);
	u8(&s, 0);					/* nothing alone */
	u8(&s, P_FLUSH);
	u8(&s, P_COMPLETE); u8(&s, 0);
	u8(&s, P_BUFF_AT); u8(&s, 2); u16(&s, 7);	/* outside */
	u8(&s, P_BUFF_AT); u8(&s, 0); u16(&s, 2);
	u8(&s, P_BUFF_AT | POOL1); u8(&s, 0); u16(&s, 0);
	u8(&s, P_BUFF_AT | POOL1); u8(&s, 1); u16(&s, 100);
	put("pool", "remote-drain-points", &s);

	/* Found by a model of the pool (issue 13): the last buffer of a
	 * retired pool leaves by release, and the pool stays bound to its
	 * UMEM for ever (pool 0, retired alone), or leaks with its UMEM
	 * (pool 1, retired with it). */
	s.n = 0;
	pool_cfg(&s, 0, 4, 0, 0, 3, 3);
	pool_cfg(&s, 1, 2, 0, 0, 2, 2);
	post_good(&s, 0, 3);
	post_good(&s, POOL1, 2);
	u8(&s, P_ALLOC_BATCH); u8(&s, 3); u16(&s, 0);
	u8(&s, P_ALLOC_BATCH | POOL1); u8(&s, 2); u16(&s, 0);
	u8(&s, P_FREE_REMOTE); u8(&s, 1); u8(&s, 2);
	u8(&s, P_RETIRE); u8(&s, 0);
	u8(&s, P_RETIRE | POOL1); u8(&s, 1);
	u8(&s, P_BUSY);
	u8(&s, P_FREE_BATCH); u8(&s, 1); u8(&s, 0);
	u8(&s, P_RELEASE); u8(&s, 0);			/* a double */
	u8(&s, P_RELEASE); u8(&s, 1);			/* the last */
	u8(&s, P_RELEASE); u8(&s, 0);			/* pool 1's */
	u8(&s, P_RELEASE); u8(&s, 1);			/* its last */
	put("pool", "regress-release-after-retire", &s);
}

/* ---- fuzz_xdp ------------------------------------------------------------ */

enum { X_HEAD, X_TAIL, X_META, X_TO_FRAME, X_ROUND_TRIP, X_WRITE };

static void xdp_geom(struct seed *s, unsigned off, unsigned frame_sz,
		     unsigned headroom, unsigned meta, unsigned len,
		     unsigned flags)
{
	u8(s, off);
	u16(s, frame_sz);
	u16(s, headroom);
	u8(s, meta);
	u16(s, len);
	u8(s, flags);
	u32(s, 0x11);
	u8(s, 0x42);
}

/* A delta as pick_delta() reads it: shape 1, an int16 (% 600). */
static void delta(struct seed *s, int d)
{
	u8(s, 1);
	u16(s, (uint16_t)(int16_t)d);
}

static void gen_xdp(void)
{
	struct seed s;

	/* A pool-like buffer: 256 headroom, 8 bytes of metadata. */
	s.n = 0;
	xdp_geom(&s, 0, 2048, 256, 8, 64, 0);
	u8(&s, X_WRITE); u8(&s, 0x33);
	u8(&s, X_HEAD); delta(&s, -14);
	u8(&s, X_TAIL); delta(&s, 100);
	u8(&s, X_META); delta(&s, -4);
	u8(&s, X_META); delta(&s, -3);
	u8(&s, X_TO_FRAME);
	u8(&s, X_ROUND_TRIP);
	u8(&s, X_HEAD); delta(&s, 20);
	u8(&s, X_ROUND_TRIP);
	u8(&s, X_TAIL); delta(&s, -50);
	put("xdp", "pool-buffer", &s);

	/* No metadata support; allocator memory; limits. */
	s.n = 0;
	xdp_geom(&s, 0, 1024, 128, 0, 100, 1 | 2);
	u8(&s, X_META); delta(&s, -8);
	u8(&s, X_HEAD); delta(&s, -80);
	u8(&s, X_HEAD); delta(&s, -1);
	u8(&s, X_TAIL); u8(&s, 4);		/* INT_MAX */
	u8(&s, X_TAIL); u8(&s, 6); u8(&s, 0);	/* to the frame's end */
	u8(&s, X_ROUND_TRIP);
	put("xdp", "no-meta", &s);

	/* Too little headroom for a frame. */
	s.n = 0;
	xdp_geom(&s, 8, 600, 40, 0, 60, 0);
	u8(&s, X_TO_FRAME);
	u8(&s, X_HEAD); u8(&s, 7); u8(&s, 0);	/* to the header's end */
	u8(&s, X_META); delta(&s, 4);
	put("xdp", "small-headroom", &s);

	/* Found on the seed: data_hard_start at an odd address (unaligned
	 * UMEM mode, or an odd headroom): the frame header is stored there
	 * misaligned (UBSan: store to misaligned address). */
	s.n = 0;
	xdp_geom(&s, 3, 2048, 261, 4, 64, 0);
	u8(&s, X_TO_FRAME);
	put("xdp", "regress-odd-hard-start", &s);
}

/* ---- fuzz_prog ----------------------------------------------------------- */

enum { PP_MODULE, PP_LINKED, PP_MISSING, PP_DIR, PP_TEXT, PP_EMPTY,
	PP_BAD_ELF, PP_EMPTY_STR, PP_NULL };
enum { N_PASS, N_LONG63, N_LONG64, N_LONG85, N_LONG90, N_TAG, N_FAIL,
	N_QUIET, N_NORUN, N_LOAD, N_CREATE, N_RUN };

/* @name: -1 NULL; else a table index, with @suffix appended if given. */
static void prog(const char *file, unsigned path, int name, const char *suffix,
		 int args_mode, const char *args)
{
	struct seed s = { .n = 0 };

	u8(&s, path);
	if (name < 0) {
		u8(&s, 4);
	} else if (suffix) {
		u8(&s, 2);
		u8(&s, (unsigned)name);
		str(&s, suffix);
	} else {
		u8(&s, 1);
		u8(&s, (unsigned)name);
	}
	u8(&s, (unsigned)args_mode);
	if (args_mode)
		str(&s, args);
	put("prog", file, &s);
}

static void gen_prog(void)
{
	prog("pass", PP_MODULE, N_PASS, NULL, 0, "");
	prog("tag-args", PP_MODULE, N_TAG, NULL, 2, "x");
	prog("tag-refused", PP_MODULE, N_TAG, NULL, 1, "nope");
	prog("fail-init", PP_MODULE, N_FAIL, NULL, 0, "");
	prog("quiet-init", PP_MODULE, N_QUIET, NULL, 1, "a");
	prog("norun", PP_MODULE, N_NORUN, NULL, 0, "");
	prog("undefined", PP_MODULE, N_PASS, "_not", 0, "");
	prog("long63", PP_MODULE, N_LONG63, NULL, 0, "");
	prog("long90", PP_MODULE, N_LONG90, NULL, 0, "");
	prog("missing", PP_MISSING, N_PASS, NULL, 0, "");
	prog("dir", PP_DIR, N_PASS, NULL, 0, "");
	prog("text", PP_TEXT, N_PASS, NULL, 0, "");
	prog("empty", PP_EMPTY, N_PASS, NULL, 0, "");
	prog("bad-elf", PP_BAD_ELF, N_PASS, NULL, 0, "");
	prog("empty-path", PP_EMPTY_STR, N_PASS, NULL, 0, "");
	prog("null-path", PP_NULL, N_PASS, NULL, 0, "");
	prog("null-name", PP_MODULE, -1, NULL, 0, "");
	prog("linked-pass", PP_LINKED, N_PASS, NULL, 1, "");
	/* Found on the seed: a 64-character name loads, named as its first
	 * 63 characters. */
	prog("regress-long64", PP_MODULE, N_LONG64, NULL, 0, "");
	/* Found on the seed: the symbol name is cut at 95 bytes, so any
	 * name starting with an 85-character program's name loads it. */
	prog("regress-long85-suffix", PP_MODULE, N_LONG85, "zz", 0, "");
	/* Found on the seed: the symbol search covers the module's
	 * dependencies, so a module linked against libuxdp "defines"
	 * uxdp_prog_load and friends; loading "load" takes a function's code
	 * as a struct uxdp_prog_def. */
	prog("regress-linked-load", PP_LINKED, N_LOAD, NULL, 0, "");
}

/* ---- fuzz_xsk ------------------------------------------------------------ */

/* Post chunks [first, first + n) on the fill ring (op 0, kind 2). */
static void xsk_fill(struct seed *s, unsigned first, unsigned n)
{
	unsigned i;

	u8(s, 0);
	u8(s, n);
	for (i = 0; i < n; i++) {
		u8(s, 2);
		u8(s, first + i);
	}
}

/* Queue @n TX descriptors (op 2): mostly-fine ones in chunk c + i,
 * then one in each of the other shapes. */
static void xsk_tx(struct seed *s, unsigned c, unsigned n, int unaligned,
		   unsigned opt)
{
	unsigned i;

	u8(s, 2);
	u8(s, n + 2);
	for (i = 0; i < n; i++) {
		u8(s, c + i);
		u8(s, 2);		/* mostly fine */
		u8(s, i * 8);		/* offset */
		if (unaligned)
			u8(s, 0);	/* no offset in the high bits */
		u8(s, 12 + i);		/* len 14 + 4 * x */
		u8(s, opt);
	}
	u8(s, c);
	u8(s, 1);			/* near the chunk's end */
	u8(s, 32);
	u16(s, 200);
	u8(s, 0);
	u8(s, c);
	u8(s, 0);			/* anything */
	u32(s, 0xffffffffu);
	u32(s, 0x7fffffffu);
	u32(s, 64);
	u8(s, 4);
}

static void xsk_cycle(struct seed *s)
{
	u8(s, 4);		/* sendto */
	u8(s, 5);		/* poll the device */
	u8(s, 63);
	u8(s, 7);		/* read RX */
	u8(s, 63);
	u8(s, 6);		/* read completions */
	u8(s, 63);
	u8(s, 11);		/* check counts, audit */
}

static void gen_xsk(void)
{
	static const struct {
		const char *name;
		unsigned mode, chunks, headroom;
	} cfg[] = {
		{ "zc-aligned", 1 | 8, 12, 0 },
		{ "copy-aligned", 0, 12, 8 },
		{ "zc-unaligned-meta", 1 | 2 | 16, 20, 4 },
		{ "copy-4k-meta", 4 | 16, 8, 0 },
	};
	struct seed s;
	unsigned i, k;

	for (i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		memset(&s, 0, sizeof(s));
		u8(&s, cfg[i].mode);
		u8(&s, cfg[i].chunks);
		u8(&s, cfg[i].headroom);
		u8(&s, 4 | 4 << 3);		/* 64-entry RX and TX */
		xsk_fill(&s, 0, 8);
		for (k = 0; k < 3; k++) {
			xsk_tx(&s, 8 + k, 4, cfg[i].mode & 2, k & 1 ? 2 : 0);
			xsk_cycle(&s);
			xsk_fill(&s, 12 + k * 2, 2);
		}
		put("xsk", cfg[i].name, &s);
	}
	/* An application that lies about its TX producer and fill slots. */
	memset(&s, 0, sizeof(s));
	u8(&s, 1);
	u8(&s, 12);
	u8(&s, 0);
	u8(&s, 2 | 2 << 3);
	xsk_fill(&s, 0, 6);
	xsk_tx(&s, 6, 3, 0, 0);
	u8(&s, 9);			/* lie: TX producer */
	u32(&s, 0x80000000u);
	u8(&s, 0);
	u8(&s, 10);			/* overwrite slots */
	u32(&s, 3);
	u64(&s, 0xfffffffffffff000ull);
	u32(&s, 9000);
	u32(&s, 1);
	u64(&s, 0x123456789ull);
	xsk_cycle(&s);
	xsk_cycle(&s);
	put("xsk", "liar", &s);
	/* Found by fuzz_xsk: one unaligned base posted twice became two
	 * buffers whose frame headers were one, and the second release
	 * failed (UINT64_MAX on the RX ring). Now a redirect to a socket
	 * makes no frame. */
	memset(&s, 0, sizeof(s));
	u8(&s, 1 | 2);			/* zero-copy, unaligned */
	u8(&s, 12);
	u8(&s, 0);
	u8(&s, 4 | 4 << 3);
	u8(&s, 0);			/* fill: chunk 0, chunk 1, chunk 1 */
	u8(&s, 3);
	u8(&s, 2);
	u8(&s, 0);
	u8(&s, 2);
	u8(&s, 1);
	u8(&s, 1);
	u8(&s, 1);
	xsk_cycle(&s);
	put("xsk", "regress-unaligned-dup-fill", &s);
}

/* ---- fuzz_rss ------------------------------------------------------------ */

/* Network-order bytes, as a frame holds them. */
static void be16(struct seed *s, unsigned v)
{
	u8(s, v >> 8 & 0xff);
	u8(s, v & 0xff);
}

static void bytes(struct seed *s, const uint8_t *b, size_t n)
{
	while (n--)
		u8(s, *b++);
}

/* Mode 0 (a frame), then an Ethernet header of zero MACs and @type. */
static void rss_eth(struct seed *s, unsigned type)
{
	unsigned i;

	u8(s, 0);
	for (i = 0; i < 12; i++)
		u8(s, 0);
	be16(s, type);
}

/* IPv4, @ihl words (options zero), protocol @proto, fragment field @frag,
 * Microsoft's first IPv4 row as the tuple, 4 bytes after the ports. */
static void rss_v4(struct seed *s, unsigned ihl, unsigned proto,
		   unsigned frag)
{
	static const uint8_t sa[4] = { 66, 9, 149, 187 };
	static const uint8_t da[4] = { 161, 142, 100, 80 };
	unsigned i;

	rss_eth(s, 0x0800);
	u8(s, 0x40 | ihl);
	u8(s, 0);
	be16(s, ihl * 4 + 8);
	be16(s, 0);
	be16(s, frag);
	u8(s, 64);
	u8(s, proto);
	be16(s, 0);
	bytes(s, sa, 4);
	bytes(s, da, 4);
	for (i = 5; i < ihl; i++)
		u32(s, 0x01010101);
	be16(s, 2794);
	be16(s, 1766);
	be16(s, 8);
	be16(s, 0);
}

/* IPv6, next header @nh, Microsoft's first IPv6 row; @cut bytes of the
 * ports and what follows them left off. */
static void rss_v6(struct seed *s, unsigned nh, unsigned cut)
{
	static const uint8_t sa[16] = { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00,
					0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7 };
	static const uint8_t da[16] = { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00,
					0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1 };
	const uint8_t tail[8] = { 2794 >> 8, 2794 & 0xff, 1766 >> 8,
				  1766 & 0xff, 0, 8, 0, 0 };

	rss_eth(s, 0x86dd);
	u32(s, 0x60);
	be16(s, 8);
	u8(s, nh);
	u8(s, 64);
	bytes(s, sa, 16);
	bytes(s, da, 16);
	bytes(s, tail, 8 - cut);
}

static void gen_rss(void)
{
	static const uint8_t tuple[12] = { 66, 9, 149, 187, 161, 142, 100, 80,
					   2794 >> 8, 2794 & 0xff,
					   1766 >> 8, 1766 & 0xff };
	struct seed s;
	unsigned i;

	memset(&s, 0, sizeof(s));
	rss_v4(&s, 5, 17, 0);
	put("rss", "ipv4-udp", &s);
	memset(&s, 0, sizeof(s));
	rss_v4(&s, 5, 17, 0x2000);
	put("rss", "ipv4-fragment", &s);
	memset(&s, 0, sizeof(s));
	rss_v4(&s, 7, 6, 0);
	put("rss", "ipv4-tcp-options", &s);
	memset(&s, 0, sizeof(s));
	rss_v6(&s, 17, 0);
	put("rss", "ipv6-udp", &s);
	memset(&s, 0, sizeof(s));
	rss_v6(&s, 44, 0);
	put("rss", "ipv6-fragment", &s);
	memset(&s, 0, sizeof(s));
	rss_v6(&s, 17, 6);
	put("rss", "ipv6-cut", &s);
	/* Mode 1: key, key length, input length, input. */
	memset(&s, 0, sizeof(s));
	u8(&s, 1);
	bytes(&s, t_ms_key, 40);
	u8(&s, 40);
	u8(&s, 12);
	bytes(&s, tuple, 12);
	put("rss", "toeplitz-ms-key", &s);
	memset(&s, 0, sizeof(s));
	u8(&s, 1);
	for (i = 0; i < 40; i++)
		u8(&s, 0xff);
	u8(&s, 11);
	u8(&s, 8);
	for (i = 0; i < 8; i++)
		u8(&s, 0xaa);
	put("rss", "toeplitz-short-key", &s);
}


/* fuzz_bpf_check: flags, packet length, metadata, seed; then
 * instructions (raw, 8 bytes each). */
static void ins(struct seed *s, unsigned code, unsigned dst, unsigned src,
		int off, int32_t imm)
{
	u8(s, code);
	u8(s, dst | src << 4);
	u16(s, (uint16_t)off);
	u32(s, (uint32_t)imm);
}

static void gen_bpf_check(void)
{
	struct seed s;
	unsigned i;

	/* Parse Ethernet, IPv4, UDP below a data_end check. */
	memset(&s, 0, sizeof(s));
	u8(&s, 0);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	ins(&s, BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);
	ins(&s, BPF_LDX | BPF_MEM | BPF_W, 3, 1, 4, 0);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_DROP);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 42);
	ins(&s, BPF_JMP | BPF_JGT | BPF_X, 4, 3, 6, 0);
	ins(&s, BPF_LDX | BPF_MEM | BPF_H, 5, 2, 12, 0);
	ins(&s, BPF_JMP | BPF_JNE | BPF_K, 5, 0, 4, 8);
	ins(&s, BPF_LDX | BPF_MEM | BPF_B, 5, 2, 23, 0);
	ins(&s, BPF_JMP | BPF_JNE | BPF_K, 5, 0, 2, 17);
	ins(&s, BPF_LDX | BPF_MEM | BPF_H, 5, 2, 36, 0);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS);
	ins(&s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	put("bpf_check", "parse-udp", &s);

	/* A lookup, its null check, a value at a variable offset. */
	memset(&s, 0, sizeof(s));
	u8(&s, 0);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	ins(&s, BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);
	ins(&s, BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_IDX, 0, 0);
	ins(&s, 0, 0, 0, 0, 0);
	ins(&s, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	ins(&s, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4, 0);
	ins(&s, BPF_LDX | BPF_MEM | BPF_W, 1, 0, 0, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0);
	ins(&s, BPF_STX | BPF_ATOMIC | BPF_W, 0, 1, 4, BPF_ADD);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);
	ins(&s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	put("bpf_check", "lookup-var", &s);

	/* A bounded loop over the stack, a call, a global. */
	memset(&s, 0, sizeof(s));
	u8(&s, 0);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_K, 6, 0, 0, 0);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -64);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_X, 2, 6, 0, 0);
	ins(&s, BPF_ST | BPF_MEM | BPF_B, 2, 0, 0, 7);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_K, 6, 0, 0, 1);
	ins(&s, BPF_JMP | BPF_JLT | BPF_K, 6, 0, -6, 64);
	ins(&s, BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -8);
	ins(&s, BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1);
	ins(&s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	ins(&s, BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_MAP_IDX_VALUE, 0, 2);
	ins(&s, 0, 0, 0, 0, 8);
	ins(&s, BPF_LDX | BPF_MEM | BPF_DW, 0, 1, 0, 0);
	ins(&s, BPF_STX | BPF_MEM | BPF_DW, 2, 0, 0, 0);
	ins(&s, BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 3);
	ins(&s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	put("bpf_check", "loop-call-global", &s);

	/* A raw run's memory (the conformance suite's context). */
	memset(&s, 0, sizeof(s));
	u8(&s, 1);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	ins(&s, BPF_LDX | BPF_MEM | BPF_W, 0, 1, 4, 0);
	ins(&s, BPF_ALU64 | BPF_ADD | BPF_X, 1, 0, 0, 0);
	ins(&s, BPF_LDX | BPF_MEM | BPF_B, 0, 1, 0, 0);
	ins(&s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	put("bpf_check", "raw-mem", &s);

	/* Generated instructions around a prologue. */
	memset(&s, 0, sizeof(s));
	u8(&s, 4 | 16);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	for (i = 0; i < 64 * 8; i++)
		u8(&s, (i * 53 + 5) & 0xff);
	put("bpf_check", "generated-prologue", &s);

	/* The same below a data_end check of the packet's length. */
	memset(&s, 0, sizeof(s));
	u8(&s, 4 | 16 | 32);
	u8(&s, 40);
	u8(&s, 0);
	u8(&s, 9);
	for (i = 0; i < 48 * 8; i++)
		u8(&s, (i * 29 + 3) & 0xff);
	put("bpf_check", "generated-range", &s);

	/* Generated instructions: the same bytes each time. */
	memset(&s, 0, sizeof(s));
	u8(&s, 4);
	u8(&s, 64);
	u8(&s, 1);
	u8(&s, 7);
	for (i = 0; i < 64 * 8; i++)
		u8(&s, (i * 37 + 11) & 0xff);
	put("bpf_check", "generated", &s);
}

/* ---- fuzz_bpf_diff --------------------------------------------------------- */

/*
 * Header as the harness reads it (flags, memory length / 8 - 1, metadata
 * length / 8, budget, the memory's seed), then a stream of choices from
 * a fixed generator: each seed its own mix of contexts, functions,
 * targets, budgets and recursion, long enough for programs of some size.
 */
static void bpf_diff(const char *name, unsigned flags, unsigned mem8,
		     unsigned meta8, unsigned budget, uint32_t stream)
{
	struct seed s = { .n = 0 };

	u8(&s, flags);
	u8(&s, mem8);
	u8(&s, meta8);
	u8(&s, budget);
	u64(&s, 0x0123456789abcdefULL ^ stream);
	while (s.n < 480) {
		stream = stream * 1103515245U + 12345U;
		u8(&s, stream >> 16 & 0xff);
	}
	put("bpf_diff", name, &s);
}

static void gen_bpf_diff(void)
{
	/* flags: 1 XDP, 2/4 functions, 8/16 targets, 32 small budget,
	 * 64 recursion, 128 read-only region (and invalid metadata) */
	bpf_diff("raw-straight", 0x00, 7, 0, 0, 1);
	bpf_diff("raw-functions", 0x06, 15, 0, 0, 2);
	bpf_diff("raw-recursion", 0x46, 7, 0, 0, 3);
	bpf_diff("raw-small-budget", 0x22, 31, 0, 5, 4);
	bpf_diff("raw-tail-calls", 0x12, 7, 0, 0, 5);
	bpf_diff("xdp-meta", 0x03, 7, 2, 0, 6);
	bpf_diff("xdp-no-meta-ro-region", 0x81, 3, 0, 0, 7);
	bpf_diff("xdp-everything", 0x5f, 15, 1, 0, 8);
}

/*
 * fuzz_bpf_map: the map (a byte: bit 0 per-CPU, bit 1 LRU; key size - 1,
 * value size - 1, max_entries - 1, a flags byte whose 0 means "the flags
 * follow"), then
 * operations: what (7 kinds), which key of 40, a flags byte (non-zero:
 * one of the three update flags), and the operation's own bytes.
 */
static void map_op(struct seed *s, unsigned op, unsigned key, unsigned fl,
		   unsigned vbytes)
{
	unsigned i;

	u8(s, op);
	u8(s, key);
	u8(s, 1);	/* the common case: the flags byte picks 0..2 */
	u8(s, fl);
	for (i = 0; i < vbytes; i++)
		u8(s, 0x40 + key + i);
}

/* An LPM op: op, prefix length, flags, the data's bytes (0..3, times
 * 0x55 in the harness), which side, then the value or a bit. */
static void lpm_op(struct seed *s, unsigned op, unsigned plen, unsigned fl,
		   const unsigned char *d, unsigned ds, unsigned prog,
		   unsigned vs)
{
	unsigned i;

	u8(s, op);
	u8(s, plen);
	u8(s, 1);	/* the flags byte picks 0..2 */
	u8(s, fl);
	for (i = 0; i < ds; i++)
		u8(s, d[i]);
	u8(s, prog);
	if (op == 1 || op == 2)
		for (i = 0; i < vs; i++)
			u8(s, 0x30 + plen + i);
	else if (op >= 4)
		u8(s, plen & 1);
}

/* Nested, sibling and full-length prefixes of 4 bytes; a full trie; a
 * lookup of each length; deletes that leave intermediate nodes. */
static void gen_bpf_map_lpm(void)
{
	static const unsigned char a[4] = { 3, 1, 2, 0 }, b[4] = { 3, 1, 0, 0 };
	static const unsigned lens[] = { 8, 16, 24, 32, 0, 12, 17 };
	struct seed s = { .n = 0 };
	unsigned i;

	u8(&s, 4);		/* LPM */
	u8(&s, 0);		/* the hash's sizes, unused */
	u8(&s, 0);
	u8(&s, 0);
	u8(&s, 3);		/* 4 bytes of data */
	u8(&s, 7);		/* 8-byte values */
	u8(&s, 5);		/* 6 entries */
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		lpm_op(&s, 1, lens[i], 0, i & 1 ? b : a, 4, i & 1, 8);
	for (i = 0; i < 33; i += 4)
		lpm_op(&s, 0, i, 0, a, 4, i & 1, 0);
	lpm_op(&s, 3, 16, 0, a, 4, 0, 0);
	lpm_op(&s, 3, 24, 0, b, 4, 1, 0);
	lpm_op(&s, 2, 16, 1, b, 4, 1, 8);
	lpm_op(&s, 4, 0, 0, a, 4, 0, 0);
	lpm_op(&s, 5, 32, 0, a, 4, 0, 0);
	put("bpf_map", "lpm-nested-full", &s);
}

/* A queue and a stack (kind bit 3): the hash's three size bytes unused,
 * which, value size - 1, max_entries - 1; then operations: what (6
 * kinds), a flags byte (non-zero: the next picks one of the three update
 * flags), the side, and a push's value. Filled past full (with and
 * without BPF_EXIST), peeked, popped, asked with a key. */
static void qs_op(struct seed *s, unsigned op, unsigned fl, unsigned prog,
		  unsigned vs, unsigned tag)
{
	unsigned i;

	u8(s, op);
	u8(s, 1);
	u8(s, fl);
	u8(s, prog);
	if (op <= 1)
		for (i = 0; i < vs; i++)
			u8(s, tag + i);
}

static void gen_bpf_map_qs(void)
{
	unsigned t, k;

	for (t = 0; t < 2; t++) {
		struct seed s = { .n = 0 };

		u8(&s, 8);
		u8(&s, 0);
		u8(&s, 0);
		u8(&s, 0);
		u8(&s, t);	/* 0 queue, 1 stack */
		u8(&s, 7);	/* 8-byte values */
		u8(&s, 3);	/* 4 entries */
		for (k = 0; k < 6; k++)
			qs_op(&s, k & 1, k < 5 ? 0 : 2, k & 1, 8, 0x10 * k);
		qs_op(&s, 0, 2, 1, 8, 0x70);	/* BPF_EXIST: the oldest goes */
		qs_op(&s, 2, 0, 0, 8, 0);
		qs_op(&s, 3, 0, 1, 8, 0);
		qs_op(&s, 3, 0, 0, 8, 0);
		qs_op(&s, 4, 0, 0, 8, 0);
		qs_op(&s, 5, 0, 0, 8, 0);
		put("bpf_map", t ? "stack-full-exist" : "queue-full-exist", &s);
	}
}

static void gen_bpf_map(void)
{
	static const struct {
		const char *name;
		unsigned percpu, lru, ks, vs, max;
	} maps[] = {
		{ "hash-u32-u64-full", 0, 0, 4, 8, 4 },
		{ "hash-odd-sizes", 0, 0, 3, 5, 8 },
		{ "percpu-u32-u64", 1, 0, 4, 8, 4 },
		{ "lru-full-evicts", 0, 1, 4, 8, 4 },
		{ "lru-percpu", 1, 1, 4, 8, 4 },
	};
	unsigned i, k;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct seed s = { .n = 0 };
		unsigned vb = maps[i].vs + 7 - (maps[i].vs + 7) % 8;

		u8(&s, maps[i].percpu | maps[i].lru << 1);
		u8(&s, maps[i].ks - 1);
		u8(&s, maps[i].vs - 1);
		u8(&s, maps[i].max - 1);
		u8(&s, 1);		/* no flags */
		/* Fill past max_entries, replace, delete, read, iterate,
		 * from both sides. */
		/* A per-CPU value from the control plane is 64 CPUs'
		 * worth: those seeds update from the program's side. */
		for (k = 0; k < maps[i].max + 2; k++)
			map_op(&s, maps[i].percpu ? 2 : 1, k, 1,
			       maps[i].percpu ? maps[i].vs : vb);
		map_op(&s, 2, 0, 2, maps[i].vs);
		map_op(&s, 2, 0, 1, maps[i].vs);
		map_op(&s, 3, 1, 0, 0);
		map_op(&s, 4, 1, 0, 0);
		map_op(&s, 0, 0, 0, 0);
		map_op(&s, 5, 2, 0, 0);
		map_op(&s, 6, 2, 0, 0);
		put("bpf_map", maps[i].name, &s);
	}
	gen_bpf_map_lpm();
	gen_bpf_map_qs();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	gen_umem();
	gen_ring();
	gen_pool();
	gen_xdp();
	gen_prog();
	gen_xsk();
	gen_rss();
	gen_bpf_check();
	gen_bpf_diff();
	gen_bpf_map();
	return 0;
}
