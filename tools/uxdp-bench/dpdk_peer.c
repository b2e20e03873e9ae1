/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The DPDK peers (see dpdk_peer.h). Compiled with DPDK's own flags from
 * pkg-config, as a DPDK application would be; without UXDP_HAVE_DPDK only
 * the "not built" stubs at the bottom remain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dpdk_peer.h"
#include "ring_elem.h"

#ifdef UXDP_HAVE_DPDK

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_version.h>

struct dpdk_ring {
	struct rte_ring *r;
	uint32_t esize;
};

struct dpdk_mempool {
	struct rte_mempool *mp;
	void **objs;
	uint32_t nobjs;
};

static struct {
	int state;		/* 0: not tried, 1: up, -1: failed */
	char status[512];
	char args[192];
	unsigned int seq;	/* for unique ring and pool names */
} peer;

bool dpdk_peer_built(void)
{
	return true;
}

const char *dpdk_peer_status(void)
{
	if (!peer.state)
		snprintf(peer.status, sizeof(peer.status),
			 "%s, EAL not started (started only when a DPDK case "
			 "runs)", rte_version());
	return peer.status;
}

const char *dpdk_peer_eal_args(void)
{
	return peer.args;
}

#ifndef UXDP_BENCH_DPDK_CFLAGS
#define UXDP_BENCH_DPDK_CFLAGS ""
#endif

const char *dpdk_peer_cflags(void)
{
	return UXDP_BENCH_DPDK_CFLAGS;
}

int dpdk_peer_start(int cpu, unsigned int mem_mb)
{
	char lcore[16], mem[16];
	/*
	 * No hugepages are reserved on the machines this runs on, hence
	 * --no-huge. --in-memory would be the natural way to leave no files
	 * behind, but EAL refuses it with --no-huge (which implies legacy
	 * memory mode); --no-shconf gives the same here: no shared config,
	 * no runtime directory. Telemetry would start a socket thread; PCI
	 * scanning is pointless for rings and mempools.
	 */
	char *argv[] = {
		"uxdp-bench", "--no-huge", "--no-pci", "-m", mem,
		"--no-shconf", "--no-telemetry", "-l", lcore,
		"--log-level=error", NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1, i;
	size_t off = 0;

	if (peer.state)
		return peer.state > 0 ? 0 : -1;
	snprintf(lcore, sizeof(lcore), "%d", cpu < 0 ? 0 : cpu);
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	for (i = 1; i < argc && off < sizeof(peer.args); i++)
		off += (size_t)snprintf(peer.args + off,
					sizeof(peer.args) - off, "%s%s",
					i > 1 ? " " : "", argv[i]);
	/* rte_eal_init() may reorder argv; it gets a copy. */
	{
		char *copy[sizeof(argv) / sizeof(argv[0])];

		memcpy(copy, argv, sizeof(argv));
		/* EAL's console log has gone to stdout in some releases;
		 * stdout carries the tables or the JSON document. */
		rte_openlog_stream(stderr);
		if (rte_eal_init(argc, copy) < 0) {
			snprintf(peer.status, sizeof(peer.status),
				 "%s, EAL init failed: %s (args: %s); "
				 "uxdp-only results", rte_version(),
				 rte_strerror(rte_errno), peer.args);
			peer.state = -1;
			return -1;
		}
	}
	peer.state = 1;
	snprintf(peer.status, sizeof(peer.status),
		 "%s, EAL up on lcore %u (args: %s)", rte_version(),
		 rte_lcore_id(), peer.args);
	return 0;
}

/* ---- rte_ring ------------------------------------------------------------ */

struct dpdk_ring *dpdk_ring_create(uint32_t esize, uint32_t count)
{
	struct dpdk_ring *dr = calloc(1, sizeof(*dr));
	char name[RTE_RING_NAMESIZE];

	if (!dr)
		return NULL;
	snprintf(name, sizeof(name), "uxb_r%u", peer.seq++);
	dr->esize = esize;
	dr->r = rte_ring_create_elem(name, esize, count, SOCKET_ID_ANY,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!dr->r) {
		fprintf(stderr, "uxdp-bench: rte_ring_create_elem: %s\n",
			rte_strerror(rte_errno));
		free(dr);
		return NULL;
	}
	return dr;
}

void dpdk_ring_free(struct dpdk_ring *dr)
{
	if (!dr)
		return;
	rte_ring_free(dr->r);
	free(dr);
}

/*
 * The loops take the element size as a constant, as an application would
 * write them, so DPDK's copy helpers are specialised for 8 or 16 bytes.
 * Only the bulk size is a run-time value.
 */
static inline __attribute__((always_inline)) int
ring_1core_loop(struct rte_ring *r, const void *src, void *dst,
		unsigned int esize, uint32_t bulk, uint64_t iters)
{
	uint64_t k;

	for (k = 0; k < iters; k++) {
		if (rte_ring_enqueue_bulk_elem(r, src, esize, bulk,
					       NULL) != bulk)
			return -EIO;
		if (rte_ring_dequeue_bulk_elem(r, dst, esize, bulk,
					       NULL) != bulk)
			return -EIO;
	}
	return 0;
}

int dpdk_ring_1core(struct dpdk_ring *dr, const void *src, void *dst,
		    uint32_t bulk, uint64_t iters, uint64_t *ticks)
{
	uint32_t n = bench_opaque_u32(bulk);
	uint64_t t0, t1;
	int err;

	t0 = bench_tsc_begin();
	if (dr->esize == 8)
		err = ring_1core_loop(dr->r, src, dst, 8, n, iters);
	else
		err = ring_1core_loop(dr->r, src, dst, 16, n, iters);
	t1 = bench_tsc_end();
	*ticks = t1 - t0;
	return err;
}

static inline __attribute__((always_inline)) uint64_t
ring_poll_loop(struct rte_ring *r, void *dst, unsigned int esize,
	       uint32_t bulk, uint64_t polls)
{
	uint64_t k, got = 0;

	for (k = 0; k < polls; k++)
		got += rte_ring_dequeue_bulk_elem(r, dst, esize, bulk, NULL);
	return got;
}

int dpdk_ring_poll(struct dpdk_ring *dr, void *dst, uint32_t bulk,
		   uint64_t polls, uint64_t *ticks)
{
	uint32_t n = bench_opaque_u32(bulk);
	uint64_t t0, t1, got;

	t0 = bench_tsc_begin();
	if (dr->esize == 8)
		got = ring_poll_loop(dr->r, dst, 8, n, polls);
	else
		got = ring_poll_loop(dr->r, dst, 16, n, polls);
	t1 = bench_tsc_end();
	*ticks = t1 - t0;
	return got ? -EIO : 0;
}

void dpdk_ring_produce(struct dpdk_ring *dr, uint32_t bulk, uint64_t total)
{
	uint32_t n = bench_opaque_u32(bulk), i;
	uint64_t seq;

	if (dr->esize == 8) {
		uint64_t src[64];

		for (seq = 0; seq < total; seq += n) {
			for (i = 0; i < n; i++)
				src[i] = ring_elem8_val(seq + i);
			while (!rte_ring_enqueue_bulk_elem(dr->r, src, 8, n,
							   NULL))
				bench_cpu_relax();
		}
	} else {
		struct ring_elem16 src[64];

		for (seq = 0; seq < total; seq += n) {
			for (i = 0; i < n; i++)
				ring_elem16_fill(&src[i], seq + i);
			while (!rte_ring_enqueue_bulk_elem(dr->r, src, 16, n,
							   NULL))
				bench_cpu_relax();
		}
	}
}

uint64_t dpdk_ring_consume(struct dpdk_ring *dr, uint32_t bulk,
			   uint64_t total)
{
	uint32_t n = bench_opaque_u32(bulk), i;
	uint64_t seq, bad = 0;

	if (dr->esize == 8) {
		uint64_t dst[64];

		for (seq = 0; seq < total; seq += n) {
			while (!rte_ring_dequeue_bulk_elem(dr->r, dst, 8, n,
							   NULL))
				bench_cpu_relax();
			for (i = 0; i < n; i++)
				bad += dst[i] != ring_elem8_val(seq + i);
		}
	} else {
		struct ring_elem16 dst[64];

		for (seq = 0; seq < total; seq += n) {
			while (!rte_ring_dequeue_bulk_elem(dr->r, dst, 16, n,
							   NULL))
				bench_cpu_relax();
			for (i = 0; i < n; i++)
				bad += ring_elem16_bad(&dst[i], seq + i);
		}
	}
	return bad;
}

/* ---- rte_mempool --------------------------------------------------------- */

struct dpdk_mempool *dpdk_mempool_create(uint32_t n, uint32_t obj_size,
					 uint32_t cache)
{
	struct dpdk_mempool *dm = calloc(1, sizeof(*dm));
	char name[RTE_MEMPOOL_NAMESIZE];

	if (!dm)
		return NULL;
	dm->objs = calloc(n, sizeof(*dm->objs));
	if (!dm->objs)
		goto err;
	dm->nobjs = n;
	snprintf(name, sizeof(name), "uxb_mp%u", peer.seq++);
	dm->mp = rte_mempool_create(name, n, obj_size, cache, 0, NULL, NULL,
				    NULL, NULL, SOCKET_ID_ANY,
				    RTE_MEMPOOL_F_SP_PUT |
				    RTE_MEMPOOL_F_SC_GET);
	if (!dm->mp) {
		fprintf(stderr, "uxdp-bench: rte_mempool_create: %s\n",
			rte_strerror(rte_errno));
		goto err;
	}
	return dm;
err:
	free(dm->objs);
	free(dm);
	return NULL;
}

void dpdk_mempool_free(struct dpdk_mempool *dm)
{
	if (!dm)
		return;
	rte_mempool_free(dm->mp);
	free(dm->objs);
	free(dm);
}

bool dpdk_mempool_cached(struct dpdk_mempool *dm)
{
	return rte_lcore_id() != LCORE_ID_ANY &&
	       rte_mempool_default_cache(dm->mp, rte_lcore_id());
}

int dpdk_mempool_cycle(struct dpdk_mempool *dm, uint32_t bulk, uint32_t round,
		       uint64_t rounds, uint64_t *ticks)
{
	uint32_t n = bench_opaque_u32(bulk), per = bench_opaque_u32(round), j;
	void **objs = dm->objs;
	uint64_t k, t0, t1;
	int err = 0;

	if (per > dm->nobjs)
		return -EINVAL;
	t0 = bench_tsc_begin();
	for (k = 0; k < rounds; k++) {
		for (j = 0; j < per; j += n)
			if (rte_mempool_get_bulk(dm->mp, objs + j, n)) {
				err = -ENOMEM;
				goto out;
			}
		for (j = 0; j < per; j += n)
			rte_mempool_put_bulk(dm->mp, objs + j, n);
	}
out:
	t1 = bench_tsc_end();
	*ticks = t1 - t0;
	if (err)	/* give back what the failed round got */
		rte_mempool_put_bulk(dm->mp, objs, j);
	return err;
}

#else /* !UXDP_HAVE_DPDK */

#ifndef UXDP_BENCH_NO_DPDK_REASON
#define UXDP_BENCH_NO_DPDK_REASON "libdpdk-dev missing"
#endif

bool dpdk_peer_built(void)
{
	return false;
}

const char *dpdk_peer_status(void)
{
	return "not built (" UXDP_BENCH_NO_DPDK_REASON ")";
}

const char *dpdk_peer_eal_args(void)
{
	return "";
}

const char *dpdk_peer_cflags(void)
{
	return "";
}

int dpdk_peer_start(int cpu, unsigned int mem_mb)
{
	(void)cpu;
	(void)mem_mb;
	return -1;
}

struct dpdk_ring *dpdk_ring_create(uint32_t esize, uint32_t count)
{
	(void)esize;
	(void)count;
	return NULL;
}

void dpdk_ring_free(struct dpdk_ring *r)
{
	(void)r;
}

int dpdk_ring_1core(struct dpdk_ring *r, const void *src, void *dst,
		    uint32_t bulk, uint64_t iters, uint64_t *ticks)
{
	(void)r, (void)src, (void)dst, (void)bulk, (void)iters, (void)ticks;
	return -ENOTSUP;
}

int dpdk_ring_poll(struct dpdk_ring *r, void *dst, uint32_t bulk,
		   uint64_t polls, uint64_t *ticks)
{
	(void)r, (void)dst, (void)bulk, (void)polls, (void)ticks;
	return -ENOTSUP;
}

void dpdk_ring_produce(struct dpdk_ring *r, uint32_t bulk, uint64_t total)
{
	(void)r, (void)bulk, (void)total;
}

uint64_t dpdk_ring_consume(struct dpdk_ring *r, uint32_t bulk, uint64_t total)
{
	(void)r, (void)bulk;
	return total;
}

struct dpdk_mempool *dpdk_mempool_create(uint32_t n, uint32_t obj_size,
					 uint32_t cache)
{
	(void)n, (void)obj_size, (void)cache;
	return NULL;
}

void dpdk_mempool_free(struct dpdk_mempool *mp)
{
	(void)mp;
}

bool dpdk_mempool_cached(struct dpdk_mempool *mp)
{
	(void)mp;
	return false;
}

int dpdk_mempool_cycle(struct dpdk_mempool *mp, uint32_t bulk, uint32_t round,
		       uint64_t rounds, uint64_t *ticks)
{
	(void)mp, (void)bulk, (void)round, (void)rounds, (void)ticks;
	return -ENOTSUP;
}

#endif /* UXDP_HAVE_DPDK */
