/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The nic driver (include/uxdp/nic.h): the Toeplitz hash against the
 * published verification vectors, RSS spreading flows as the indirection
 * table says, the refill threshold, batched and single allocation, every
 * packet's content, a poll group per queue (pinned) and a thread per queue,
 * two nics looped, zero-copy and copy-mode AF_XDP sockets on a nic queue,
 * transmit, down/up and destroy under traffic, a stress matrix, port
 * strings. Every buffer is accounted for (uxdp_dev_audit) after each.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <uxdp/uxdp.h>

#include "t_rss_key.h"	/* t_ms_key */

#define T_MAXQ		UXDP_NIC_MAX_QUEUES
#define T_CHUNK		2048

static void t_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static const char *t_name(char *buf, const char *prefix)
{
	static unsigned int nr;

	snprintf(buf, UXDP_IFNAMSIZ, "%s%u", prefix, nr++);
	return buf;
}

static struct uxdp_dev *t_nic(const struct uxdp_nic_opts *o)
{
	char n[UXDP_IFNAMSIZ];
	struct uxdp_dev *d = uxdp_nic_create(t_name(n, "nic"), o);

	if (!d)
		fail_msg("uxdp_nic_create: %s", uxdp_errmsg());
	return d;
}

static struct uxdp_nic_stats t_st(const struct uxdp_dev *d, uint32_t q)
{
	struct uxdp_nic_stats st;

	assert_int_equal(uxdp_nic_stats(d, q, &st), 0);
	return st;
}

/* Down, then every chunk of every queue's pool at home, none missing. */
static void t_audit_down(struct uxdp_dev *d)
{
	struct uxdp_dev_audit a;

	assert_int_equal(uxdp_dev_down(d), 0);
	assert_int_equal(uxdp_dev_audit(d, &a), 0);
	assert_int_equal(a.misplaced, 0);
	assert_int_equal(a.in_flight, 0);
	assert_int_equal(a.pools, uxdp_dev_num_rxq(d));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* Packets per flow when the wire sends @count round robin over @flows. */
static uint64_t t_flow_count(uint64_t count, uint32_t flows, uint32_t f)
{
	return count / flows + (f < count % flows);
}

/* ---- the checking program ------------------------------------------------ */

struct t_qrx {
	uint64_t pkts;
	uint64_t bytes;
	uint64_t bad;
	uint64_t digest;
	uint64_t cpu_bad;
	uint64_t zc_bad;
	uint32_t pos;		/* where in flows[] the next packet should be */
	uint32_t nflows;
	uint32_t *flows;	/* this queue's flows, in the order sent */
	char why[160];
} __attribute__((aligned(64)));

struct t_rx {
	struct uxdp_dev *gen;	/* whose flows the packets are */
	struct uxdp_dev *rxdev;	/* check the queue by its RSS */
	uint32_t len;		/* the length every packet has, 0: any */
	uint32_t verdict;
	bool order;		/* round robin over each queue's flows */
	struct uxdp_map *map;	/* redirect to slot queue, if set */
	/* Zero-copy check: packets of this queue lie in [lo, hi). */
	uint32_t zc_q;
	const char *zc_lo, *zc_hi;
	bool zc_want;		/* inside (zero-copy) or outside (copy) */
	int cpu[T_MAXQ];	/* -1: any */
	/* Every packet's flow, in arrival order (one queue only). */
	uint32_t *rec;
	uint32_t nrec;
	struct t_qrx q[T_MAXQ];
};

static struct t_rx *t_rx_new(struct uxdp_dev *gen, struct uxdp_dev *rxdev,
			     uint32_t len, uint32_t verdict)
{
	struct t_rx *r;
	uint32_t i, f;

	r = aligned_alloc(64, sizeof(*r));
	assert_non_null(r);
	memset(r, 0, sizeof(*r));
	r->gen = gen;
	r->rxdev = rxdev;
	r->len = len;
	r->verdict = verdict;
	r->zc_q = UINT32_MAX;
	for (i = 0; i < T_MAXQ; i++)
		r->cpu[i] = -1;
	if (!gen)
		return r;
	/* Each queue's flows in flow order: the order the wire sends. */
	for (i = 0; i < uxdp_dev_num_rxq(gen); i++) {
		r->q[i].flows = calloc(UXDP_NIC_MAX_FLOWS, sizeof(uint32_t));
		assert_non_null(r->q[i].flows);
	}
	for (f = 0;; f++) {
		struct uxdp_nic_flow fl;

		if (uxdp_nic_flow(gen, f, &fl))
			break;
		assert_true(fl.queue < uxdp_dev_num_rxq(gen));
		r->q[fl.queue].flows[r->q[fl.queue].nflows++] = f;
	}
	r->order = true;
	return r;
}

static void t_rx_free(struct t_rx *r)
{
	uint32_t i;

	for (i = 0; i < T_MAXQ; i++)
		free(r->q[i].flows);
	free(r);
}

/* Why packet @p (@len bytes) received on queue @q is wrong, or NULL. */
static const char *t_check(struct t_rx *r, uint32_t q, const uint8_t *p,
			   uint32_t len, char *buf, size_t bufsz)
{
	static const uint8_t macs[12] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1,
	};
	const uint8_t *ip = p + 14, *udp = p + 34;
	uint32_t sum = 0, i, f;

	if (r->len && len != r->len)
		return "length";
	if (len < 42)
		return "short";
	if (memcmp(p, macs, 12) || get16(p + 12) != 0x0800)
		return "ethernet header";
	if (ip[0] != 0x45 || get16(ip + 2) != len - 14 ||
	    get16(ip + 6) != 0x4000 || ip[8] != 64 || ip[9] != 17)
		return "ip header";
	for (i = 0; i < 20; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	if (sum != 0xffff)
		return "ip checksum";
	if (get32(ip + 16) != 0xc0a80001)
		return "destination address";
	f = get32(ip + 12) - 0x0a000001;
	if (f >= UXDP_NIC_MAX_FLOWS)
		return "source address";
	if (get16(udp) != 1024 + f % 60000 || get16(udp + 2) != 9 ||
	    get16(udp + 4) != len - 34 || get16(udp + 6) != 0)
		return "udp header";
	for (i = 42; i < len; i++)
		if (p[i] != (uint8_t)i) {
			snprintf(buf, bufsz, "payload byte %u", i);
			return buf;
		}
	if (r->gen) {
		struct uxdp_nic_flow fl;

		if (uxdp_nic_flow(r->gen, f, &fl))
			return "no such flow";
		if (fl.saddr != get32(ip + 12) || fl.sport != get16(udp))
			return "flow tuple";
		if (fl.queue != q) {
			snprintf(buf, bufsz, "flow %u on queue %u, RSS says %u",
				 f, q, fl.queue);
			return buf;
		}
	}
	if (r->rxdev) {
		int rq = uxdp_nic_rss_queue(r->rxdev, p, len, NULL);

		if (rq != (int)q) {
			snprintf(buf, bufsz, "packet on queue %u, RSS says %d",
				 q, rq);
			return buf;
		}
	}
	if (r->order && r->q[q].nflows) {
		struct t_qrx *s = &r->q[q];

		if (s->flows[s->pos] != f) {
			snprintf(buf, bufsz, "queue %u: flow %u, expected %u",
				 q, f, s->flows[s->pos]);
			return buf;
		}
		s->pos = s->pos + 1 == s->nflows ? 0 : s->pos + 1;
	}
	return NULL;
}

static uint32_t t_prog(struct uxdp_buff *ctx, void *priv)
{
	struct t_rx *r = priv;
	uint32_t q = ctx->rxq->queue_index, len = uxdp_buff_len(ctx), i;
	struct t_qrx *s = &r->q[q];
	const uint8_t *p = ctx->data;
	char buf[120];
	const char *why;
	uint64_t h = 1469598103934665603ULL;

	why = t_check(r, q, p, len, buf, sizeof(buf));
	if (why && !s->bad++)
		snprintf(s->why, sizeof(s->why), "%s", why);
	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	s->digest = s->digest * 31 + h;
	s->pkts++;
	s->bytes += len;
	if (r->rec && len >= 30)
		r->rec[r->nrec++] = get32(p + 26) - 0x0a000001;
	if (r->cpu[q] >= 0 && sched_getcpu() != r->cpu[q])
		s->cpu_bad++;
	if (q == r->zc_q) {
		bool in = (const char *)p >= r->zc_lo &&
			  (const char *)p < r->zc_hi;

		if (in != r->zc_want)
			s->zc_bad++;
	}
	if (r->map)
		return uxdp_redirect_map(r->map, q, UXDP_DROP);
	return r->verdict;
}

static void t_attach(struct uxdp_dev *d, struct t_rx *r)
{
	struct uxdp_prog *p = uxdp_prog_create("t_nic", t_prog, r);

	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, p), 0);
	uxdp_prog_put(p);
}

/* No queue saw a bad packet. */
static void t_rx_ok(struct t_rx *r)
{
	uint32_t i;

	for (i = 0; i < T_MAXQ; i++) {
		if (r->q[i].bad)
			fail_msg("queue %u: %llu bad packets, first: %s", i,
				 (unsigned long long)r->q[i].bad, r->q[i].why);
		assert_int_equal(r->q[i].cpu_bad, 0);
		assert_int_equal(r->q[i].zc_bad, 0);
	}
}

static uint64_t t_rx_total(const struct t_rx *r)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < T_MAXQ; i++)
		n += r->q[i].pkts;
	return n;
}

/* Poll every queue of @d until its generator sent @count (and nothing is
 * left to receive), failing after @max rounds. */
static void t_run(struct uxdp_dev *d, uint64_t count, int budget, int max)
{
	uint32_t q;
	int i;

	for (i = 0; i < max; i++) {
		for (q = 0; q < uxdp_dev_num_rxq(d); q++)
			assert_true(uxdp_dev_poll(d, q, budget) >= 0);
		if (t_st(d, UXDP_ALL_QUEUES).gen_packets == count)
			return;
	}
	fail_msg("generated %llu of %llu in %d rounds",
		 (unsigned long long)t_st(d, UXDP_ALL_QUEUES).gen_packets,
		 (unsigned long long)count, max);
}

/* ---- RSS ----------------------------------------------------------------- */

struct t_vec {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t h2, h4;
};

/*
 * The IPv4 rows of Microsoft's "Verifying the RSS Hash Calculation"
 * (learn.microsoft.com/windows-hardware/drivers/network/
 * verifying-the-rss-hash-calculation, formerly msdn ff571021), with the
 * key above: the "IPv4 only" (2-tuple) and "IPv4 with TCP" (4-tuple)
 * columns. The same table is in Intel's 82599 datasheet (7.1.2.8.3, "RSS
 * Verification Suite"); found through the search tool in copies that agree
 * (DPDK app/test/test_thash.c, a FreeBSD harness printing the MS columns).
 */
static const struct t_vec t_vecs[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766,
	  0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739,
	  0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024,
	  0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217,
	  0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303,
	  0x5d1809c5, 0x10e828a2 },
};

/* The IPv6 rows of the same page ("IPv6 only", "IPv6 with TCP"). */
static const struct t_vec t_vecs6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
	  0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
	  0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf",
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

static void t_tuple6(const struct t_vec *v, uint8_t in[36])
{
	assert_int_equal(inet_pton(AF_INET6, v->src, in), 1);
	assert_int_equal(inet_pton(AF_INET6, v->dst, in + 16), 1);
	in[32] = (uint8_t)(v->sport >> 8);
	in[33] = (uint8_t)v->sport;
	in[34] = (uint8_t)(v->dport >> 8);
	in[35] = (uint8_t)v->dport;
}

/* An Ethernet/IPv6 packet, next header @nh, the tuple @in (ports right
 * after the fixed header); returns its length. */
static uint32_t t_pkt6(uint8_t *b, const uint8_t in[36], uint8_t nh)
{
	uint8_t *ip = b + 14;

	memset(b, 0, 128);
	b[12] = 0x86;
	b[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 8;			/* payload length */
	ip[6] = nh;
	ip[7] = 64;
	memcpy(ip + 8, in, 32);
	memcpy(ip + 40, in + 32, 4);
	return 14 + 40 + 8;
}

static void t_tuple(const struct t_vec *v, uint8_t in[12])
{
	assert_int_equal(inet_pton(AF_INET, v->src, in), 1);
	assert_int_equal(inet_pton(AF_INET, v->dst, in + 4), 1);
	in[8] = (uint8_t)(v->sport >> 8);
	in[9] = (uint8_t)v->sport;
	in[10] = (uint8_t)(v->dport >> 8);
	in[11] = (uint8_t)v->dport;
}

/* An Ethernet/IPv4 packet with @ihl words of header, protocol @proto,
 * the tuple @in, fragment field @frag; returns its length. */
static uint32_t t_pkt(uint8_t *b, const uint8_t in[12], uint8_t proto,
		      uint32_t ihl, uint16_t frag)
{
	uint8_t *ip = b + 14;

	memset(b, 0, 128);
	b[12] = 0x08;
	ip[0] = (uint8_t)(0x40 | ihl);
	ip[6] = (uint8_t)(frag >> 8);
	ip[7] = (uint8_t)frag;
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, in, 8);
	memcpy(ip + ihl * 4, in + 8, 4);
	return 14 + ihl * 4 + 8;
}

static void test_toeplitz_vectors(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o4, .queues = 4);
	struct uxdp_dev *d;
	uint8_t in[12], pkt[128];
	uint32_t i, h, len;

	(void)state;
	for (i = 0; i < sizeof(t_vecs) / sizeof(t_vecs[0]); i++) {
		t_tuple(&t_vecs[i], in);
		assert_int_equal(uxdp_nic_toeplitz(t_ms_key, 40, in, 8),
				 t_vecs[i].h2);
		assert_int_equal(uxdp_nic_toeplitz(t_ms_key, 40, in, 12),
				 t_vecs[i].h4);
	}
	/* A key must cover the input and 4 bytes more. */
	assert_int_equal(uxdp_nic_toeplitz(t_ms_key, 11, in, 8), 0);
	assert_int_not_equal(uxdp_nic_toeplitz(t_ms_key, 12, in, 8), 0);

	/* The driver's own path (a table per input byte) on packets, on 4
	 * queues: the default table sends hash h to queue (h & 127) % 4. */
	d = t_nic(&o4);
	for (i = 0; i < sizeof(t_vecs) / sizeof(t_vecs[0]); i++) {
		t_tuple(&t_vecs[i], in);
		len = t_pkt(pkt, in, 6, 5, 0);		/* TCP */
		assert_int_equal(uxdp_nic_rss_queue(d, pkt, len, &h),
				 (int)(t_vecs[i].h4 & 127) % 4);
		assert_int_equal(h, t_vecs[i].h4);
		len = t_pkt(pkt, in, 17, 5, 0);		/* UDP */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs[i].h4);
		len = t_pkt(pkt, in, 17, 7, 0);		/* IP options */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs[i].h4);
		len = t_pkt(pkt, in, 17, 5, 0x2000);	/* more fragments */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs[i].h2);
		len = t_pkt(pkt, in, 17, 5, 0x0010);	/* a later fragment */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs[i].h2);
		len = t_pkt(pkt, in, 1, 5, 0);		/* ICMP: 2-tuple */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs[i].h2);
		/* Ports cut off: the 2-tuple. */
		uxdp_nic_rss_queue(d, pkt, 14 + 20 + 2, &h);
		assert_int_equal(h, t_vecs[i].h2);
		pkt[12] = 0x86;				/* not IPv4: 0 */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, 0);
	}
	assert_int_equal(uxdp_nic_rss_queue(d, pkt, 10, &h), 0);
	assert_int_equal(h, 0);
	assert_int_equal(uxdp_nic_rss_queue(d, NULL, 10, &h), -EINVAL);

	/* IPv6: the function, then the driver's tables on packets. */
	for (i = 0; i < sizeof(t_vecs6) / sizeof(t_vecs6[0]); i++) {
		uint8_t in6[36];

		t_tuple6(&t_vecs6[i], in6);
		assert_int_equal(uxdp_nic_toeplitz(t_ms_key, 40, in6, 32),
				 t_vecs6[i].h2);
		assert_int_equal(uxdp_nic_toeplitz(t_ms_key, 40, in6, 36),
				 t_vecs6[i].h4);
		len = t_pkt6(pkt, in6, 6);		/* TCP */
		assert_int_equal(uxdp_nic_rss_queue(d, pkt, len, &h),
				 (int)(t_vecs6[i].h4 & 127) % 4);
		assert_int_equal(h, t_vecs6[i].h4);
		len = t_pkt6(pkt, in6, 17);		/* UDP */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs6[i].h4);
		len = t_pkt6(pkt, in6, 44);		/* a fragment */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs6[i].h2);
		len = t_pkt6(pkt, in6, 0);		/* hop-by-hop first */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs6[i].h2);
		len = t_pkt6(pkt, in6, 58);		/* ICMPv6 */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, t_vecs6[i].h2);
		/* Ports cut off: the 2-tuple; addresses cut off: 0. */
		len = t_pkt6(pkt, in6, 17);
		uxdp_nic_rss_queue(d, pkt, 14 + 40 + 3, &h);
		assert_int_equal(h, t_vecs6[i].h2);
		uxdp_nic_rss_queue(d, pkt, 14 + 39, &h);
		assert_int_equal(h, 0);
		uxdp_nic_rss_queue(d, pkt, 13, &h);
		assert_int_equal(h, 0);
		pkt[14] = 0x40;				/* not version 6 */
		uxdp_nic_rss_queue(d, pkt, len, &h);
		assert_int_equal(h, 0);
	}
	uxdp_dev_destroy(d);
}

/*
 * Every flow lands on table[hash & 127], the hash being the Toeplitz hash
 * of its 4-tuple; the packets of each queue are exactly its flows'. A
 * custom table and a custom key move them.
 */
static void t_spread(const uint8_t *key, const uint8_t *table, uint32_t nq)
{
	const uint32_t flows = 1024, per = 3;
	const uint64_t count = (uint64_t)flows * per;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = nq, .flows = flows,
			  .rx_count = count, .rx_ring = 256, .rss_key = key,
			  .rss_table = table);
	uint64_t want[T_MAXQ] = { 0 };
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r;
	uint32_t f, q;

	for (f = 0; f < flows; f++) {
		struct uxdp_nic_flow fl;
		uint8_t in[12];

		assert_int_equal(uxdp_nic_flow(d, f, &fl), 0);
		assert_int_equal(fl.saddr, 0x0a000001 + f);
		in[0] = 10;
		in[1] = (uint8_t)((f + 1) >> 16);
		in[2] = (uint8_t)((f + 1) >> 8);
		in[3] = (uint8_t)(f + 1);
		in[4] = 192;
		in[5] = 168;
		in[6] = 0;
		in[7] = 1;
		in[8] = (uint8_t)((1024 + f) >> 8);
		in[9] = (uint8_t)(1024 + f);
		in[10] = 0;
		in[11] = 9;
		assert_int_equal(fl.hash, uxdp_nic_toeplitz(key ? key :
							     t_ms_key, 40,
							     in, 12));
		assert_int_equal(fl.queue, table ? table[fl.hash & 127] :
					   (fl.hash & 127) % nq);
		want[fl.queue] += per;
	}
	{
		struct uxdp_nic_flow fl;

		assert_int_equal(uxdp_nic_flow(d, flows, &fl), -EINVAL);
		assert_int_equal(uxdp_nic_flow(d, flows - 1, &fl), 0);
	}
	r = t_rx_new(d, NULL, 64, UXDP_DROP);
	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	t_run(d, count, 64, 10000);
	t_rx_ok(r);
	for (q = 0; q < nq; q++) {
		assert_int_equal(r->q[q].pkts, want[q]);
		assert_int_equal(t_st(d, q).rx_packets, want[q]);
		/* The default key and table spread 1024 flows over every
		 * queue (the symmetric key does not: 16/290/137/581). */
		if (!table && !key)
			assert_true(want[q] >= per * flows / nq / 2);
	}
	assert_int_equal(t_rx_total(r), count);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	t_rx_free(r);
}

static void test_rss_spread(void **state)
{
	uint8_t table[128], key[40];
	uint32_t i;

	(void)state;
	t_spread(NULL, NULL, 4);
	t_spread(NULL, NULL, 3);
	/* Everything to queue 2. */
	memset(table, 2, sizeof(table));
	t_spread(NULL, table, 4);
	/* Reversed: each flow moves to 3 - its default queue. */
	for (i = 0; i < 128; i++)
		table[i] = (uint8_t)(3 - i % 4);
	t_spread(NULL, table, 4);
	/* The symmetric key (6d5a repeated): other hashes, other queues. */
	for (i = 0; i < 40; i++)
		key[i] = i & 1 ? 0x5a : 0x6d;
	t_spread(key, NULL, 4);
}

/* ---- refill -------------------------------------------------------------- */

/*
 * Poll one queue step by step and watch every refill: it happens only when
 * at least @thresh descriptors are unused, fills all of them (>= thresh)
 * with one tail bump, never posts more than ring - 1, wraps.
 */
static void t_refill(uint32_t ring, uint32_t thresh, int budget)
{
	const uint64_t count = 4000;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_ring = ring,
			  .refill_threshold = thresh, .rx_count = count,
			  .flows = 7);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	struct uxdp_nic_stats a = t_st(d, 0), b;
	int i;

	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	for (i = 0; i < 100000 && a.gen_packets < count; i++) {
		uint64_t refills, bufs;

		assert_true(uxdp_dev_poll(d, 0, budget) >= 0);
		b = t_st(d, 0);
		refills = b.refills - a.refills;
		bufs = b.refill_bufs - a.refill_bufs;
		assert_true(b.rx_posted <= ring - 1);
		assert_int_equal(b.rx_missed, 0);
		if (i == 0) {
			/* Priming: the whole ring, then maybe a refill. */
			assert_true(refills >= 1 && refills <= 2);
		} else if (refills) {
			assert_int_equal(refills, 1);
			assert_true(bufs >= thresh);
			/* All that was unused: the ring is full again. */
			assert_int_equal(b.rx_posted, ring - 1);
		} else {
			/* No refill: fewer than thresh were unused. */
			assert_true(ring - 1 - b.rx_posted < thresh);
		}
		a = b;
	}
	assert_int_equal(a.gen_packets, count);
	assert_int_equal(a.rx_packets, count);
	assert_int_equal(t_rx_total(r), count);
	t_rx_ok(r);
	/* 4000 packets through a small ring: the refills wrapped, each
	 * with one batch call per part, and never fell short. */
	assert_true(a.refill_wraps > 0);
	assert_int_equal(a.alloc_calls, a.refills + a.refill_wraps);
	assert_int_equal(a.alloc_fail, 0);
	assert_int_equal(a.refill_bufs, count + a.rx_posted);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	t_rx_free(r);
}

static void test_refill_threshold(void **state)
{
	(void)state;
	t_refill(64, 16, 8);
	t_refill(64, 1, 8);
	t_refill(64, 32, 32);
	t_refill(256, 64, 60);
	t_refill(256, 128, 1);
}

/*
 * A starved pool (fewer buffers than the ring): the ring runs dry, the
 * wire's packets are lost and counted, the refills fall short and say so,
 * and every packet is either received or missed.
 */
static void test_refill_starved(void **state)
{
	const uint64_t count = 3000;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_ring = 256,
			  .refill_threshold = 16, .frames = 24,
			  .rx_count = count, .flows = 5);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	struct uxdp_nic_stats st, prev;
	uint64_t pos = 0, seen = 0, k;
	int i;

	(void)state;
	/* A lost packet leaves a gap in the flows' order: check it poll
	 * by poll instead. The wire sends flows 0..4 round robin; a poll
	 * delivers the first of the packets it offers, loses the rest. */
	r->order = false;
	r->rec = calloc(count, sizeof(*r->rec));
	assert_non_null(r->rec);
	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	prev = t_st(d, 0);
	for (i = 0; i < 100000 && prev.gen_packets < count; i++) {
		assert_true(uxdp_dev_poll(d, 0, 64) >= 0);
		st = t_st(d, 0);
		assert_int_equal(r->nrec, st.rx_packets);
		for (k = 0; k < st.rx_packets - prev.rx_packets; k++)
			assert_int_equal(r->rec[seen + k], (pos + k) % 5);
		seen = st.rx_packets;
		pos += st.gen_packets - prev.gen_packets;
		prev = st;
	}
	st = t_st(d, 0);
	assert_true(st.rx_missed > 0);
	assert_true(st.alloc_fail > 0);
	assert_true(st.rx_posted <= 24);
	assert_int_equal(st.rx_packets + st.rx_missed, count);
	assert_int_equal(t_rx_total(r), st.rx_packets);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	free(r->rec);
	t_rx_free(r);
}

/* One uxdp_pool_alloc per buffer or one batch call: the same packets. */
static void test_single_vs_batch(void **state)
{
	const uint64_t count = 5000;
	uint64_t digest[2][4], pkts[2][4];
	struct uxdp_nic_stats st[2];
	int mode;
	uint32_t q;

	(void)state;
	for (mode = 0; mode < 2; mode++) {
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 3, .flows = 50,
				  .rx_count = count, .rx_ring = 128,
				  .refill_threshold = 32, .rx_len = 100,
				  .flags = mode ? UXDP_NIC_F_SINGLE_ALLOC : 0);
		struct uxdp_dev *d = t_nic(&o);
		struct t_rx *r = t_rx_new(d, NULL, 100, UXDP_DROP);

		t_attach(d, r);
		assert_int_equal(uxdp_dev_up(d), 0);
		t_run(d, count, 32, 10000);
		t_rx_ok(r);
		assert_int_equal(t_rx_total(r), count);
		for (q = 0; q < 3; q++) {
			digest[mode][q] = r->q[q].digest;
			pkts[mode][q] = r->q[q].pkts;
		}
		st[mode] = t_st(d, UXDP_ALL_QUEUES);
		t_audit_down(d);
		uxdp_dev_destroy(d);
		t_rx_free(r);
	}
	for (q = 0; q < 3; q++) {
		assert_int_equal(pkts[0][q], pkts[1][q]);
		assert_true(digest[0][q] == digest[1][q]);
	}
	/* Batch: one call per ring part; single: one per buffer. */
	assert_int_equal(st[0].alloc_calls, st[0].refills + st[0].refill_wraps);
	assert_int_equal(st[1].alloc_calls, st[1].refill_bufs);
	assert_int_equal(st[0].refill_bufs, st[1].refill_bufs);
}

/* Every byte of every packet, at lengths from the minimum to 1514. */
static void test_content(void **state)
{
	static const uint32_t lens[] = { 42, 60, 64, 65, 127, 1000, 1472,
					 1473, 1514 };
	uint32_t i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2, .flows = 37,
				  .rx_count = 500, .rx_len = lens[i],
				  .rx_ring = 128);
		struct uxdp_dev *d = t_nic(&o);
		struct t_rx *r = t_rx_new(d, NULL, lens[i], UXDP_DROP);

		t_attach(d, r);
		assert_int_equal(uxdp_dev_up(d), 0);
		t_run(d, 500, 64, 1000);
		t_rx_ok(r);
		assert_int_equal(t_rx_total(r), 500);
		assert_int_equal(t_st(d, UXDP_ALL_QUEUES).rx_bytes,
				 500ULL * lens[i]);
		t_audit_down(d);
		uxdp_dev_destroy(d);
		t_rx_free(r);
	}
}

/* ---- threads ------------------------------------------------------------- */

/* Wait until @d's generator sent @count and its queues received it all. */
static void t_wait_gen(struct uxdp_dev *d, uint64_t count)
{
	uint64_t deadline = t_now_ms() + 60000;
	struct uxdp_nic_stats st;

	do {
		st = t_st(d, UXDP_ALL_QUEUES);
		if (st.gen_packets == count && st.rx_packets +
		    st.rx_missed == count)
			return;
		t_sleep_ms(1);
	} while (t_now_ms() < deadline);
	fail_msg("generated %llu, received %llu of %llu",
		 (unsigned long long)st.gen_packets,
		 (unsigned long long)st.rx_packets, (unsigned long long)count);
}

/* The CPUs this process may run on. */
static uint32_t t_cpus(int *cpus, uint32_t max)
{
	cpu_set_t set;
	uint32_t n = 0;
	int c;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	assert_true(n > 0);
	return n;
}

/*
 * A poll group per queue, each pinned to a CPU (uxdp_dev_start pins
 * nothing): every packet of queue q is processed on q's CPU, and each
 * queue gets exactly its flows' packets.
 */
static void test_group_per_queue_pinned(void **state)
{
	const uint32_t nq = 4, flows = 256;
	const uint64_t count = T_TSAN ? 20000 : 400000;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = nq, .flows = flows,
			  .rx_count = count, .rx_ring = 512);
	struct uxdp_poll_group *g[4];
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	uint64_t want[4] = { 0 };
	int cpus[64];
	uint32_t ncpu = t_cpus(cpus, 64), q, f;

	(void)state;
	for (f = 0; f < flows; f++) {
		struct uxdp_nic_flow fl;

		assert_int_equal(uxdp_nic_flow(d, f, &fl), 0);
		want[fl.queue] += t_flow_count(count, flows, f);
	}
	for (q = 0; q < nq; q++) {
		UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po,
				  .flags = UXDP_THREAD_F_PIN,
				  .cpu = cpus[q % ncpu], .budget = 64);

		r->cpu[q] = cpus[q % ncpu];
		g[q] = uxdp_poll_group_create(&po);
		assert_non_null(g[q]);
		assert_int_equal(uxdp_poll_group_add(g[q], d, q), 0);
	}
	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	for (q = 0; q < nq; q++)
		assert_int_equal(uxdp_poll_group_start(g[q]), 0);
	t_wait_gen(d, count);
	for (q = 0; q < nq; q++)
		uxdp_poll_group_destroy(g[q]);
	t_rx_ok(r);
	for (q = 0; q < nq; q++) {
		struct uxdp_nic_stats st = t_st(d, q);

		/* Enough buffers: nothing lost, every queue exact. */
		assert_int_equal(st.rx_missed, 0);
		assert_int_equal(r->q[q].pkts, want[q]);
		assert_int_equal(st.rx_packets, want[q]);
		assert_true(want[q] > 0);
	}
	t_audit_down(d);
	uxdp_dev_destroy(d);
	t_rx_free(r);
}

/* uxdp_dev_start: a thread per queue, the same exact counts. */
static void test_thread_per_queue(void **state)
{
	const uint32_t nq = 3, flows = 100;
	const uint64_t count = T_TSAN ? 20000 : 300000;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = nq, .flows = flows,
			  .rx_count = count, .rx_ring = 256,
			  .refill_threshold = 16);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	uint64_t want[3] = { 0 };
	uint32_t q, f;

	(void)state;
	for (f = 0; f < flows; f++) {
		struct uxdp_nic_flow fl;

		assert_int_equal(uxdp_nic_flow(d, f, &fl), 0);
		want[fl.queue] += t_flow_count(count, flows, f);
	}
	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	assert_int_equal(uxdp_dev_start(d, NULL), 0);
	t_wait_gen(d, count);
	uxdp_dev_stop(d);
	t_rx_ok(r);
	for (q = 0; q < nq; q++)
		assert_int_equal(r->q[q].pkts, want[q]);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	t_rx_free(r);
}

/*
 * A paced wire: 1000 packets at 10000 per second over two queues take at
 * least 100 ms (never faster: the rate only ever holds packets back), and
 * the pollers sleep between the timer's ticks rather than spin.
 */
static void test_paced(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2, .flows = 10,
			  .rx_count = 1000, .rx_pps = 10000);
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po, .idle_us = 1000000);
	struct uxdp_poll_group *g = uxdp_poll_group_create(&po);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	struct uxdp_poll_group_stats gs;
	uint64_t t0, ms;

	(void)state;
	assert_non_null(g);
	assert_int_equal(uxdp_poll_group_add(g, d, UXDP_ALL_QUEUES), 0);
	t_attach(d, r);
	assert_int_equal(uxdp_dev_up(d), 0);
	t0 = t_now_ms();
	assert_int_equal(uxdp_poll_group_start(g), 0);
	t_wait_gen(d, 1000);
	ms = t_now_ms() - t0;
	assert_int_equal(uxdp_poll_group_stats(g, &gs), 0);
	uxdp_poll_group_destroy(g);
	assert_true(ms >= 90);
	/* Woken by the timer (a driver fd), not by the idle timeout. */
	assert_true(gs.sleeps > 0);
	assert_true(gs.wakeups > 0);
	assert_int_equal(t_st(d, UXDP_ALL_QUEUES).rx_missed, 0);
	assert_int_equal(t_rx_total(r), 1000);
	t_rx_ok(r);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	t_rx_free(r);
}

/* ---- loop ---------------------------------------------------------------- */

/* Frames given back unprocessed at down, all queues (rxq stats). */
static uint64_t t_drained(struct uxdp_dev *d)
{
	struct uxdp_rxq_stats rs;
	uint64_t n = 0;
	uint32_t q;

	for (q = 0; q < uxdp_dev_num_rxq(d); q++) {
		assert_int_equal(uxdp_dev_rxq_stats(d, q, &rs), 0);
		n += rs.drained;
	}
	return n;
}

/*
 * Two nics looped: A generates and transmits back out (XDP_TX), B
 * receives exactly what A sent, each packet on the queue B's RSS picks.
 * Then B's FIFO overflows (B not polled), and B down loses what A sends.
 */
static void test_loop(void **state)
{
	const uint64_t count = 6000;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, oa, .flows = 97, .rx_count = count,
			  .rx_ring = 256);
	UXDP_DECLARE_OPTS(uxdp_nic_opts, ob, .queues = 4, .rx_ring = 256,
			  .flags = UXDP_NIC_F_NO_GEN, .wire_fifo = 256);
	struct uxdp_dev *a = t_nic(&oa), *b = t_nic(&ob);
	struct t_rx *ra = t_rx_new(a, NULL, 64, UXDP_TX);
	struct t_rx *rb = t_rx_new(NULL, b, 64, UXDP_DROP);
	struct uxdp_nic_stats sa, sb;
	uint32_t q;
	int i;

	(void)state;
	/* Plugging needs both down; a nic that is up says EBUSY. */
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_nic_loop(a, b), -EBUSY);
	assert_int_equal(uxdp_dev_down(a), 0);
	assert_int_equal(uxdp_nic_loop(a, b), 0);
	t_attach(a, ra);
	t_attach(b, rb);
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	for (i = 0; i < 20000; i++) {
		assert_true(uxdp_dev_poll(a, 0, 64) >= 0);
		for (q = 0; q < 4; q++)
			assert_true(uxdp_dev_poll(b, q, 64) >= 0);
		if (t_st(b, UXDP_ALL_QUEUES).rx_packets == count &&
		    t_st(a, 0).tx_pending == 0)
			break;
	}
	sa = t_st(a, 0);
	sb = t_st(b, UXDP_ALL_QUEUES);
	assert_int_equal(sa.rx_packets, count);
	assert_int_equal(sa.tx_packets, count);
	assert_int_equal(sa.tx_bytes, count * 64);
	assert_int_equal(sa.tx_cleaned, count);
	assert_int_equal(sb.rx_packets, count);
	assert_int_equal(sb.rx_fifo_dropped, 0);
	assert_int_equal(t_rx_total(rb), count);
	t_rx_ok(ra);
	t_rx_ok(rb);
	for (q = 0; q < 4; q++) {
		assert_true(rb->q[q].pkts > 0);
		assert_int_equal(t_st(b, q).rx_packets, rb->q[q].pkts);
	}

	/* B's FIFOs hold 256 each: a second sender C, polled alone,
	 * overflows them. */
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, oc, .flows = 97,
				  .rx_count = 3000, .rx_ring = 512);
		struct uxdp_dev *c = t_nic(&oc);
		struct t_rx *rc = t_rx_new(c, NULL, 64, UXDP_TX);
		uint64_t got;

		assert_int_equal(uxdp_dev_down(b), 0);
		assert_int_equal(uxdp_nic_loop(c, b), 0);  /* unplugs a */
		assert_int_equal(uxdp_dev_up(b), 0);
		t_attach(c, rc);
		assert_int_equal(uxdp_dev_up(c), 0);
		for (i = 0; i < 1000; i++)
			assert_true(uxdp_dev_poll(c, 0, 64) >= 0);
		assert_int_equal(t_st(c, 0).tx_packets, 3000);
		sb = t_st(b, UXDP_ALL_QUEUES);
		assert_true(sb.rx_fifo_dropped > 0);
		/* B takes a little of what waits, then goes down: the rest
		 * is given back unprocessed (drained), not kept for later. */
		for (q = 0; q < 4; q++)
			uxdp_dev_poll(b, q, 16);
		got = t_st(b, UXDP_ALL_QUEUES).rx_packets - count;
		assert_true(got > 0 && got <= 4 * 16);
		assert_int_equal(uxdp_dev_down(b), 0);
		sb = t_st(b, UXDP_ALL_QUEUES);
		assert_int_equal(got + t_drained(b) + sb.rx_fifo_dropped, 3000);
		assert_true(t_drained(b) > 0);
		assert_int_equal(uxdp_dev_up(b), 0);
		for (i = 0; i < 10; i++)
			for (q = 0; q < 4; q++)
				uxdp_dev_poll(b, q, 64);
		assert_int_equal(t_st(b, UXDP_ALL_QUEUES).rx_packets,
				 count + got);
		/* B down: what a third sender E sends is lost. */
		assert_int_equal(uxdp_dev_down(b), 0);
		{
			UXDP_DECLARE_OPTS(uxdp_nic_opts, od, .flows = 3,
					  .rx_count = 100);
			struct uxdp_dev *e = t_nic(&od);
			struct t_rx *re = t_rx_new(e, NULL, 64, UXDP_TX);

			assert_int_equal(uxdp_nic_loop(e, b), 0);
			t_attach(e, re);
			assert_int_equal(uxdp_dev_up(e), 0);
			for (i = 0; i < 10; i++)
				uxdp_dev_poll(e, 0, 64);
			assert_int_equal(t_st(e, 0).tx_packets, 100);
			assert_int_equal(t_st(e, 0).tx_carrier, 100);
			t_audit_down(e);
			uxdp_dev_destroy(e);
			t_rx_free(re);
		}
		t_audit_down(c);
		uxdp_dev_destroy(c);
		t_rx_free(rc);
	}
	t_audit_down(a);
	t_audit_down(b);
	/* a was unplugged when c took b: its transmits go nowhere. */
	uxdp_dev_destroy(a);
	uxdp_dev_destroy(b);
	t_rx_free(ra);
	t_rx_free(rb);
}

/*
 * Full-size frames over a cable: a receiver without a generator takes
 * them all; one whose buffers hold only its own 64-byte packets drops and
 * counts them (rx_oversize).
 */
static void test_loop_big(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, oa, .flows = 9, .rx_count = 100,
			  .rx_len = 1514);
	UXDP_DECLARE_OPTS(uxdp_nic_opts, ob, .flags = UXDP_NIC_F_NO_GEN);
	UXDP_DECLARE_OPTS(uxdp_nic_opts, oc, .flows = 1, .rx_count = 1);
	struct uxdp_dev *a = t_nic(&oa), *b = t_nic(&ob), *c = t_nic(&oc);
	struct t_rx *ra = t_rx_new(a, NULL, 1514, UXDP_TX);
	struct t_rx *rb = t_rx_new(NULL, b, 1514, UXDP_DROP);
	struct t_rx *rc = t_rx_new(c, NULL, 64, UXDP_DROP);
	struct uxdp_nic_stats st;
	int i;

	(void)state;
	assert_int_equal(uxdp_nic_loop(a, b), 0);
	t_attach(a, ra);
	t_attach(b, rb);
	t_attach(c, rc);
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	for (i = 0; i < 10; i++) {
		uxdp_dev_poll(a, 0, 64);
		uxdp_dev_poll(b, 0, 64);
	}
	assert_int_equal(t_st(a, 0).tx_packets, 100);
	st = t_st(b, 0);
	assert_int_equal(st.rx_packets, 100);
	assert_int_equal(st.rx_bytes, 100 * 1514);
	assert_int_equal(st.rx_oversize, 0);
	t_rx_ok(rb);
	/* The same cable into c: 2 KiB chunks, room 1472. */
	assert_int_equal(uxdp_dev_down(a), 0);
	assert_int_equal(uxdp_dev_down(b), 0);
	assert_int_equal(uxdp_nic_loop(a, c), 0);
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, od, .flows = 9,
				  .rx_count = 50, .rx_len = 1514);
		struct uxdp_dev *e = t_nic(&od);
		struct t_rx *re = t_rx_new(e, NULL, 1514, UXDP_TX);

		assert_int_equal(uxdp_nic_loop(e, c), 0);
		t_attach(e, re);
		assert_int_equal(uxdp_dev_up(e), 0);
		assert_int_equal(uxdp_dev_up(c), 0);
		for (i = 0; i < 10; i++) {
			uxdp_dev_poll(e, 0, 64);
			uxdp_dev_poll(c, 0, 64);
		}
		st = t_st(c, 0);
		assert_int_equal(st.rx_oversize, 50);
		assert_int_equal(st.rx_packets, 1);	/* its own */
		t_rx_ok(rc);
		t_audit_down(e);
		uxdp_dev_destroy(e);
		t_rx_free(re);
	}
	t_audit_down(a);
	t_audit_down(b);
	t_audit_down(c);
	uxdp_dev_destroy(a);
	uxdp_dev_destroy(b);
	uxdp_dev_destroy(c);
	t_rx_free(ra);
	t_rx_free(rb);
	t_rx_free(rc);
}

/* ---- transmit ------------------------------------------------------------ */

struct t_alloc {
	struct uxdp_mem_allocator a;
	uint64_t freed;
};

static void t_alloc_free(struct uxdp_mem_allocator *a, void *hard_start)
{
	__atomic_fetch_add(&((struct t_alloc *)a)->freed, 1, __ATOMIC_RELAXED);
	free(hard_start);
}

/* A heap frame holding flow 0's packet of a nic with default options. */
static struct uxdp_frame *t_frame(struct t_alloc *al, uint32_t len)
{
	struct uxdp_frame *f = aligned_alloc(64, 2048);
	uint8_t *data;

	assert_non_null(f);
	memset(f, 0, 2048);
	data = (uint8_t *)f + UXDP_PACKET_HEADROOM;
	f->data = data;
	f->len = len;
	f->headroom = (uint16_t)(UXDP_PACKET_HEADROOM - sizeof(*f));
	f->frame_sz = 2048;
	f->mem.type = UXDP_MEM_ALLOC;
	f->mem.owner = &al->a;
	return f;
}

static uint64_t t_txq_sum(struct uxdp_dev *d, int field)
{
	uint64_t n = 0;
	uint32_t q;

	for (q = 0; q < uxdp_dev_num_txq(d); q++) {
		struct uxdp_txq_stats st;

		assert_int_equal(uxdp_dev_txq_stats(d, q, &st), 0);
		n += field == 0 ? st.packets : field == 1 ? st.full :
		     field == 2 ? st.too_big : st.down;
	}
	return n;
}

/*
 * xdp_xmit posts to the hardware TX ring (full: refused, counted), the
 * hardware sends at the next poll, the poll after that completes (frames
 * go home); down throws away what is posted and unsent.
 */
static void test_xmit(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2, .tx_ring = 16,
			  .flags = UXDP_NIC_F_NO_GEN);
	struct t_alloc al = { .a.free = t_alloc_free };
	struct uxdp_frame *fr[24];
	struct uxdp_dev *d = t_nic(&o);
	struct uxdp_nic_stats st;
	int i, n;

	(void)state;
	for (i = 0; i < 24; i++)
		fr[i] = t_frame(&al, 64 + i);
	/* Down: refused. */
	assert_int_equal(uxdp_dev_xmit(d, 4, fr, 0), -ENETDOWN);
	assert_int_equal(t_txq_sum(d, 3), 4);
	assert_int_equal(uxdp_dev_up(d), 0);
	assert_int_equal(uxdp_dev_xmit(d, 1, fr, 2), -EINVAL);
	/* 16 fit, 4 are refused: ring full. */
	n = uxdp_dev_xmit(d, 20, fr, UXDP_XMIT_FLUSH);
	assert_int_equal(n, 16);
	assert_int_equal(t_txq_sum(d, 0), 16);
	assert_int_equal(t_txq_sum(d, 1), 4);
	st = t_st(d, UXDP_ALL_QUEUES);
	assert_int_equal(st.tx_ring_full, 4);
	/* Nothing is sent until the queue pair is polled. */
	assert_int_equal(st.tx_packets, 0);
	for (i = 0; i < 2; i++)
		assert_true(uxdp_dev_poll(d, (uint32_t)i, 64) >= 0);
	st = t_st(d, UXDP_ALL_QUEUES);
	assert_int_equal(st.tx_packets, 16);
	assert_int_equal(st.tx_cleaned, 0);
	assert_int_equal(__atomic_load_n(&al.freed, __ATOMIC_RELAXED), 0);
	for (i = 0; i < 2; i++)
		uxdp_dev_poll(d, (uint32_t)i, 64);
	st = t_st(d, UXDP_ALL_QUEUES);
	assert_int_equal(st.tx_cleaned, 16);
	assert_int_equal(__atomic_load_n(&al.freed, __ATOMIC_RELAXED), 16);
	/* The four refused are ours to return; send them now, then one
	 * too long (stops the call there). */
	n = uxdp_dev_xmit(d, 4, &fr[16], 0);
	assert_int_equal(n, 4);
	fr[20]->len = UXDP_NIC_MAX_TX_LEN + 1;
	assert_int_equal(uxdp_dev_xmit(d, 4, &fr[20], 0), 0);
	assert_int_equal(t_txq_sum(d, 2), 4);
	/* Down before any poll: the four posted are discarded, returned. */
	assert_int_equal(uxdp_dev_down(d), 0);
	st = t_st(d, UXDP_ALL_QUEUES);
	assert_int_equal(st.tx_discarded, 4);
	assert_int_equal(st.tx_packets, 16);
	assert_int_equal(__atomic_load_n(&al.freed, __ATOMIC_RELAXED), 20);
	uxdp_frame_return_bulk(&fr[20], 4);
	assert_int_equal(__atomic_load_n(&al.freed, __ATOMIC_RELAXED), 24);
	uxdp_dev_destroy(d);
}

/* ---- AF_XDP -------------------------------------------------------------- */

static struct uxdp_umem *t_umem(uint32_t nchunks)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = T_CHUNK);
	struct uxdp_umem *u = uxdp_umem_create(NULL,
					       (uint64_t)nchunks * T_CHUNK, &o);

	assert_non_null(u);
	return u;
}

static void t_fill(struct uxdp_ring *fill, uint32_t first, uint32_t n)
{
	uint32_t idx, i;

	assert_int_equal(uxdp_ring_prod_reserve(fill, n, &idx), n);
	for (i = 0; i < n; i++)
		*uxdp_ring_addr(fill, idx + i) =
			(uint64_t)(first + i) * T_CHUNK;
	uxdp_ring_prod_submit(fill, n);
}

/* RX descriptors off the socket, each checked; chunks noted in @seen. */
static uint32_t t_drain(struct uxdp_xsk *x, struct t_rx *r, uint32_t q,
			uint8_t *seen, uint32_t lo, uint32_t hi)
{
	struct uxdp_ring *rx = uxdp_xsk_rx_ring(x);
	char *area = uxdp_umem_area(uxdp_xsk_umem(x));
	uint32_t idx, n, i;
	char buf[120];

	n = uxdp_ring_cons_peek(rx, 4096, &idx);
	for (i = 0; i < n; i++) {
		const struct uxdp_desc *d = uxdp_ring_desc(rx, idx + i);
		uint64_t c = d->addr / T_CHUNK;
		const char *why;

		assert_int_equal(d->addr % T_CHUNK, UXDP_PACKET_HEADROOM);
		assert_true(c >= lo && c < hi);
		if (seen) {
			assert_int_equal(seen[c], 0);
			seen[c] = 1;
		}
		r->order = false;
		why = t_check(r, q, (const uint8_t *)area + d->addr, d->len,
			      buf, sizeof(buf));
		if (why)
			fail_msg("descriptor %u: %s", i, why);
	}
	uxdp_ring_cons_release(rx, n);
	return n;
}

/*
 * A zero-copy socket on queue 1 of a 2-queue nic: the queue receives into
 * the socket's chunks (the program sees the packet in the socket's UMEM:
 * no copy), need_wakeup follows the refill, TX pulls the socket's
 * descriptors and completes them in order; destroying the socket gives
 * back every chunk the ring held.
 */
static void test_xsk_zc(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2, .flows = 64,
			  .rx_ring = 64, .refill_threshold = 16);
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo, .flags = UXDP_XSK_F_ZEROCOPY |
			  UXDP_XSK_F_NEED_WAKEUP, .rx_size = 512);
	struct uxdp_umem *u = t_umem(256);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	struct uxdp_pool_stats own0, own1;
	uint8_t seen[256] = { 0 };
	struct uxdp_ring *fill, *tx, *cq;
	struct uxdp_nic_stats st;
	struct uxdp_xsk *x;
	uint32_t got = 0, idx, i;
	int k;

	(void)state;
	r->map = uxdp_map_create(2);
	assert_non_null(r->map);
	x = uxdp_xsk_create(u, d, 1, &xo);
	if (!x)
		fail_msg("xsk_create: %s", uxdp_errmsg());
	assert_true(uxdp_xsk_options(x) & UXDP_XSK_OPT_ZEROCOPY);
	assert_int_equal(uxdp_map_update(r->map, 1, uxdp_xsk_target(x)), 0);
	r->zc_q = 1;
	r->zc_lo = uxdp_umem_area(u);
	r->zc_hi = r->zc_lo + 256 * T_CHUNK;
	r->zc_want = true;
	t_attach(d, r);
	fill = uxdp_xsk_fill_ring(x);
	/* 32 chunks for a ring that takes 63: the refill falls short. */
	t_fill(fill, 10, 32);
	assert_int_equal(uxdp_pool_stats(uxdp_dev_pool(d, 1), &own0), 0);
	assert_int_equal(uxdp_dev_up(d), 0);
	assert_true(uxdp_dev_poll(d, 1, 64) > 0);
	got += t_drain(x, r, 1, seen, 10, 42);
	assert_int_equal(got, 32);
	assert_true(uxdp_ring_needs_wakeup(fill));
	st = t_st(d, 1);
	assert_int_equal(st.rx_packets, 32);
	assert_int_equal(st.rx_missed, st.gen_packets - 32);
	assert_int_equal(st.rx_posted, 0);
	/* Plenty now: the ring fills, the flag clears. */
	t_fill(fill, 42, 150);
	assert_true(uxdp_dev_poll(d, 1, 64) >= 0);	/* refills */
	assert_false(uxdp_ring_needs_wakeup(fill));
	assert_int_equal(t_st(d, 1).rx_posted, 63);
	for (k = 0; k < 2; k++) {
		assert_true(uxdp_dev_poll(d, 1, 64) > 0);
		got += t_drain(x, r, 1, seen, 10, 192);
	}
	/* 63 posted, 64 on the wire: 63 a poll. */
	assert_int_equal(got, 32 + 126);
	/* Our own pool was not touched: nothing copied. */
	assert_int_equal(uxdp_pool_stats(uxdp_dev_pool(d, 1), &own1), 0);
	assert_int_equal(own1.alloc, own0.alloc);
	t_rx_ok(r);
	assert_int_equal(r->q[1].pkts, got);

	/* TX: ten descriptors out of chunks 200.. (flow 0's packet). */
	tx = uxdp_xsk_tx_ring(x);
	cq = uxdp_xsk_comp_ring(x);
	assert_int_equal(uxdp_ring_prod_reserve(tx, 10, &idx), 10);
	for (i = 0; i < 10; i++) {
		struct uxdp_desc *dd = uxdp_ring_desc(tx, idx + i);

		dd->addr = (uint64_t)(200 + i) * T_CHUNK;
		dd->len = 60 + i;
		dd->options = 0;
	}
	uxdp_ring_prod_submit(tx, 10);
	assert_int_equal(uxdp_xsk_sendto(x), 0);
	for (k = 0; k < 3; k++)
		uxdp_dev_poll(d, 1, 64);
	st = t_st(d, 1);
	assert_int_equal(st.tx_zc, 10);
	assert_int_equal(st.tx_packets, 10);
	assert_true(uxdp_ring_needs_wakeup(tx));
	assert_int_equal(uxdp_ring_cons_peek(cq, 64, &idx), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(*uxdp_ring_addr(cq, idx + i),
				 (uint64_t)(200 + i) * T_CHUNK);
	uxdp_ring_cons_release(cq, 10);

	/* The fill ring ran dry meanwhile; 8 more, and the HW ring holds
	 * socket chunks. Then the socket goes: all of them come back. */
	t_fill(fill, 192, 8);
	uxdp_dev_poll(d, 1, 64);
	assert_int_equal(t_st(d, 1).rx_posted, 8);
	t_drain(x, r, 1, NULL, 10, 200);
	assert_int_equal(uxdp_map_update(r->map, 1, NULL), 0);
	assert_int_equal(uxdp_xsk_destroy(x), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);
	/* Back on our own memory. */
	r->zc_q = UINT32_MAX;
	uxdp_dev_poll(d, 1, 64);
	uxdp_dev_poll(d, 1, 64);
	assert_int_equal(uxdp_pool_stats(uxdp_dev_pool(d, 1), &own1), 0);
	assert_true(own1.alloc > own0.alloc);
	t_rx_ok(r);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	uxdp_map_destroy(r->map);
	t_rx_free(r);
}

/*
 * A zero-copy socket under both refill styles: the batch refill (one
 * uxdp_pool_alloc_batch() per ring part) and UXDP_NIC_F_SINGLE_ALLOC (one
 * uxdp_pool_alloc() per buffer), both out of the socket's fill ring. The
 * application recycles every chunk at once, so the ring never runs short:
 * every generated packet arrives, and every chunk is in one place after.
 */
static void t_xsk_zc_alloc(bool single)
{
	const uint32_t count = 4000, nchunks = 1024;
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .flows = 16, .rx_count = count,
			  .rx_ring = 256, .refill_threshold = 32,
			  .flags = single ? UXDP_NIC_F_SINGLE_ALLOC : 0);
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo, .flags = UXDP_XSK_F_ZEROCOPY |
			  UXDP_XSK_F_NEED_WAKEUP, .rx_size = 2048);
	struct uxdp_umem *u = t_umem(nchunks);
	struct uxdp_dev *d = t_nic(&o);
	struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
	struct uxdp_ring *fill, *rx;
	struct uxdp_nic_stats st;
	struct uxdp_xsk *x;
	uint32_t got = 0, idx, fidx, n, i, k;
	uint8_t *where;

	r->map = uxdp_map_create(1);
	assert_non_null(r->map);
	x = uxdp_xsk_create(u, d, 0, &xo);
	if (!x)
		fail_msg("xsk_create: %s", uxdp_errmsg());
	assert_true(uxdp_xsk_options(x) & UXDP_XSK_OPT_ZEROCOPY);
	assert_int_equal(uxdp_map_update(r->map, 0, uxdp_xsk_target(x)), 0);
	r->zc_q = 0;
	r->zc_lo = uxdp_umem_area(u);
	r->zc_hi = r->zc_lo + (size_t)nchunks * T_CHUNK;
	r->zc_want = true;
	t_attach(d, r);
	fill = uxdp_xsk_fill_ring(x);
	rx = uxdp_xsk_rx_ring(x);
	t_fill(fill, 0, nchunks);
	assert_int_equal(uxdp_dev_up(d), 0);
	for (k = 0; k < 1000 && got < count; k++) {
		uxdp_dev_poll(d, 0, 64);
		/* Each chunk straight back to the fill ring. */
		n = uxdp_ring_cons_peek(rx, 4096, &idx);
		assert_int_equal(uxdp_ring_prod_reserve(fill, n, &fidx), n);
		for (i = 0; i < n; i++) {
			const struct uxdp_desc *dd = uxdp_ring_desc(rx, idx + i);

			assert_int_equal(dd->len, UXDP_NIC_DEFAULT_LEN);
			*uxdp_ring_addr(fill, fidx + i) =
				dd->addr - dd->addr % T_CHUNK;
		}
		uxdp_ring_cons_release(rx, n);
		uxdp_ring_prod_submit(fill, n);
		got += n;
	}
	assert_int_equal(got, count);
	st = t_st(d, 0);
	assert_int_equal(st.gen_packets, count);
	assert_int_equal(st.rx_packets, count);
	assert_int_equal(st.rx_missed, 0);
	assert_int_equal(st.alloc_fail, 0);
	/* Every buffer received was posted by a refill, plus what is
	 * posted now. */
	assert_int_equal(st.refill_bufs, count + st.rx_posted);
	if (single) {
		assert_int_equal(st.alloc_calls, st.refill_bufs);
	} else {
		assert_int_equal(st.alloc_calls, st.refills + st.refill_wraps);
		assert_true(st.alloc_calls < st.refill_bufs);
	}
	t_rx_ok(r);
	assert_int_equal(r->q[0].pkts, count);
	/* The socket's UMEM: each chunk on the fill ring, posted, or on the
	 * pool's free list, once. */
	where = calloc(nchunks, 1);
	assert_non_null(where);
	assert_int_equal(uxdp_umem_audit(u, where), nchunks);
	for (i = 0; i < nchunks; i++) {
		uint8_t w = where[i];

		if (!w || (w & (w - 1)) ||
		    (w & ~(UXDP_LOC_FILL | UXDP_LOC_DRIVER |
			   UXDP_LOC_FREE_LIST)))
			fail_msg("chunk %u in places 0x%x", i, w);
	}
	free(where);
	assert_int_equal(uxdp_map_update(r->map, 0, NULL), 0);
	assert_int_equal(uxdp_xsk_destroy(x), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);
	t_audit_down(d);
	uxdp_dev_destroy(d);
	uxdp_map_destroy(r->map);
	t_rx_free(r);
}

static void test_xsk_zc_alloc_modes(void **state)
{
	(void)state;
	t_xsk_zc_alloc(false);
	t_xsk_zc_alloc(true);
}

/* A zero-copy socket's TX on a looped nic arrives at the peer; a copy-mode
 * socket receives copies (the program sees our own buffers). */
static void test_xsk_tx_loop_and_copy(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, oa, .flags = UXDP_NIC_F_NO_GEN);
	UXDP_DECLARE_OPTS(uxdp_nic_opts, ob, .queues = 2,
			  .flags = UXDP_NIC_F_NO_GEN);
	UXDP_DECLARE_OPTS(uxdp_nic_opts, oc, .flows = 8, .rx_count = 40);
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, zo, .flags = UXDP_XSK_F_ZEROCOPY);
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, co, .flags = UXDP_XSK_F_COPY);
	struct uxdp_umem *u = t_umem(64), *u2 = t_umem(64);
	struct uxdp_dev *a = t_nic(&oa), *b = t_nic(&ob), *c = t_nic(&oc);
	struct t_rx *rb = t_rx_new(NULL, b, 0, UXDP_DROP);
	struct t_rx *rc = t_rx_new(c, NULL, 64, UXDP_DROP);
	struct uxdp_xsk *x, *y;
	struct uxdp_ring *tx;
	uint32_t idx, i, got = 0;
	int k;

	(void)state;
	assert_int_equal(uxdp_nic_loop(a, b), 0);
	t_attach(b, rb);
	x = uxdp_xsk_create(u, a, 0, &zo);
	assert_non_null(x);
	/* Packets of c's flows, written by the application into its UMEM. */
	for (i = 0; i < 8; i++) {
		struct uxdp_nic_flow fl;
		uint8_t *p = (uint8_t *)uxdp_umem_area(u) +
			     (uint64_t)i * T_CHUNK;
		uint32_t j, sum = 0;

		assert_int_equal(uxdp_nic_flow(c, i, &fl), 0);
		for (j = 0; j < 100; j++)
			p[j] = (uint8_t)j;
		memcpy(p, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
		memcpy(p + 14, "\x45\0\0\x56\0\0\x40\0\x40\x11\0\0", 12);
		p[26] = (uint8_t)(fl.saddr >> 24);
		p[27] = (uint8_t)(fl.saddr >> 16);
		p[28] = (uint8_t)(fl.saddr >> 8);
		p[29] = (uint8_t)fl.saddr;
		memcpy(p + 30, "\xc0\xa8\0\x01", 4);
		for (j = 14; j < 34; j += 2)
			sum += get16(p + j);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		p[24] = (uint8_t)(~sum >> 8);
		p[25] = (uint8_t)~sum;
		p[34] = (uint8_t)(fl.sport >> 8);
		p[35] = (uint8_t)fl.sport;
		memcpy(p + 36, "\0\x09\0\x42\0\0", 6);
	}
	tx = uxdp_xsk_tx_ring(x);
	assert_int_equal(uxdp_ring_prod_reserve(tx, 9, &idx), 9);
	for (i = 0; i < 8; i++)
		*uxdp_ring_desc(tx, idx + i) = (struct uxdp_desc){
			(uint64_t)i * T_CHUNK, 100, 0 };
	/* A valid descriptor (it fits its chunk) too long for the wire:
	 * dropped by the hardware, completed all the same. */
	*uxdp_ring_desc(tx, idx + 8) = (struct uxdp_desc){ 20 * T_CHUNK,
							   2000, 0 };
	uxdp_ring_prod_submit(tx, 9);
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	assert_int_equal(uxdp_xsk_sendto(x), 0);
	for (k = 0; k < 4; k++) {
		uxdp_dev_poll(a, 0, 64);
		uxdp_dev_poll(b, 0, 64);
		uxdp_dev_poll(b, 1, 64);
	}
	assert_int_equal(t_st(a, 0).tx_zc, 8);
	assert_int_equal(t_st(a, 0).tx_packets, 8);
	assert_int_equal(t_st(a, 0).tx_oversize, 1);
	assert_int_equal(uxdp_ring_cons_peek(uxdp_xsk_comp_ring(x), 64, &idx),
			 9);
	uxdp_ring_cons_release(uxdp_xsk_comp_ring(x), 9);
	assert_int_equal(t_st(b, UXDP_ALL_QUEUES).rx_packets, 8);
	t_rx_ok(rb);
	assert_int_equal(t_rx_total(rb), 8);
	assert_int_equal(uxdp_dev_down(a), 0);
	assert_int_equal(uxdp_xsk_destroy(x), 0);
	assert_int_equal(uxdp_umem_destroy(u), 0);

	/* Copy mode on c: the program runs on our own buffers. */
	rc->map = uxdp_map_create(1);
	y = uxdp_xsk_create(u2, c, 0, &co);
	assert_non_null(y);
	assert_false(uxdp_xsk_options(y) & UXDP_XSK_OPT_ZEROCOPY);
	assert_int_equal(uxdp_map_update(rc->map, 0, uxdp_xsk_target(y)), 0);
	rc->zc_q = 0;
	rc->zc_lo = uxdp_umem_area(u2);
	rc->zc_hi = rc->zc_lo + 64 * T_CHUNK;
	rc->zc_want = false;
	t_attach(c, rc);
	t_fill(uxdp_xsk_fill_ring(y), 0, 64);
	assert_int_equal(uxdp_dev_up(c), 0);
	for (k = 0; k < 4; k++) {
		uxdp_dev_poll(c, 0, 64);
		got += t_drain(y, rc, 0, NULL, 0, 64);
	}
	assert_int_equal(got, 40);
	t_rx_ok(rc);
	t_audit_down(c);
	assert_int_equal(uxdp_xsk_destroy(y), 0);
	assert_int_equal(uxdp_umem_destroy(u2), 0);
	t_audit_down(b);
	uxdp_dev_destroy(a);
	uxdp_dev_destroy(b);
	uxdp_dev_destroy(c);
	uxdp_map_destroy(rc->map);
	t_rx_free(rb);
	t_rx_free(rc);
}

/* ---- under traffic ------------------------------------------------------- */

/*
 * Two nics looped, each generating without limit and sending everything
 * back out (XDP_TX), a thread per queue: down/up again and again, and each
 * time it is down every buffer of the downed one is at home. Then one is
 * destroyed under traffic; the other carries on.
 */
static void test_down_up_destroy_under_traffic(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2, .flows = 64,
			  .rx_ring = 128, .tx_ring = 64, .wire_fifo = 128);
	struct uxdp_dev *a = t_nic(&o), *b = t_nic(&o);
	struct t_rx *ra = t_rx_new(NULL, a, 64, UXDP_TX);
	struct t_rx *rb = t_rx_new(NULL, b, 64, UXDP_TX);
	struct uxdp_dev_audit au;
	struct uxdp_nic_stats s0, s1;
	int i, rounds = T_TSAN ? 5 : 30;

	(void)state;
	ra->order = rb->order = false;
	assert_int_equal(uxdp_nic_loop(a, b), 0);
	t_attach(a, ra);
	t_attach(b, rb);
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	assert_int_equal(uxdp_dev_start(a, NULL), 0);
	assert_int_equal(uxdp_dev_start(b, NULL), 0);
	for (i = 0; i < rounds; i++) {
		struct uxdp_dev *d = i & 1 ? a : b;

		t_sleep_ms(3);
		assert_int_equal(uxdp_dev_down(d), 0);
		/* Its pollers see it down and leave its pools alone. */
		assert_int_equal(uxdp_dev_audit(d, &au), 0);
		assert_int_equal(au.in_flight, 0);
		assert_int_equal(t_st(d, UXDP_ALL_QUEUES).rx_posted, 0);
		assert_int_equal(t_st(d, UXDP_ALL_QUEUES).tx_pending, 0);
		assert_int_equal(uxdp_dev_up(d), 0);
	}
	/* Traffic flows both ways again (a deadline, not a sleep: a loaded
	 * machine may not run the pollers for a while). */
	T_WAIT_FOR(t_st(a, UXDP_ALL_QUEUES).tx_packets > 0 &&
		   t_st(b, UXDP_ALL_QUEUES).rx_packets > 0, 10000);
	s0 = t_st(a, UXDP_ALL_QUEUES);
	assert_true(s0.tx_packets > 0);
	assert_true(t_st(b, UXDP_ALL_QUEUES).rx_packets > 0);
	/* b goes away while both run; a carries on. */
	uxdp_dev_destroy(b);
	T_WAIT_FOR(t_st(a, UXDP_ALL_QUEUES).rx_packets > s0.rx_packets,
		   10000);
	s1 = t_st(a, UXDP_ALL_QUEUES);
	assert_true(s1.rx_packets > s0.rx_packets);
	uxdp_dev_stop(a);
	t_rx_ok(ra);
	t_rx_ok(rb);
	t_audit_down(a);
	uxdp_dev_destroy(a);
	t_rx_free(ra);
	t_rx_free(rb);
}

/*
 * A null generator redirects into a nic whose pollers run: the frames
 * wait in the nic's TX ring until sent. Destroying the nic under traffic
 * returns every one of them to the null's pool.
 */
static uint32_t t_prog_redir(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return uxdp_redirect_map(priv, 0, UXDP_DROP);
}

static int t_stop_null;

static void *t_null_loop(void *arg)
{
	struct uxdp_dev *g = arg;

	while (!__atomic_load_n(&t_stop_null, __ATOMIC_ACQUIRE))
		uxdp_dev_poll(g, 0, 64);
	return NULL;
}

static void test_destroy_with_frames_queued(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2,
			  .flags = UXDP_NIC_F_NO_GEN, .tx_ring = 256);
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_frames = 512);
	struct uxdp_dev *n = t_nic(&o);
	struct uxdp_dev *g = uxdp_null_create("nicgen0", &no);
	struct uxdp_map *map = uxdp_map_create(1);
	struct uxdp_prog *p;
	struct uxdp_dev_audit au;
	pthread_t th;

	(void)state;
	assert_non_null(g);
	assert_non_null(map);
	assert_int_equal(uxdp_map_update(map, 0, uxdp_dev_target(n)), 0);
	p = uxdp_prog_create("redir", t_prog_redir, map);
	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(g, 0, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(n), 0);
	assert_int_equal(uxdp_dev_up(g), 0);
	assert_int_equal(uxdp_dev_start(n, NULL), 0);
	__atomic_store_n(&t_stop_null, 0, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&th, NULL, t_null_loop, g), 0);
	T_WAIT_FOR(t_st(n, UXDP_ALL_QUEUES).tx_packets > 0, 10000);
	assert_true(t_st(n, UXDP_ALL_QUEUES).tx_packets > 0);
	uxdp_dev_destroy(n);
	t_sleep_ms(5);
	__atomic_store_n(&t_stop_null, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(uxdp_dev_down(g), 0);
	assert_int_equal(uxdp_dev_audit(g, &au), 0);
	assert_int_equal(au.in_flight, 0);
	uxdp_dev_destroy(g);
	uxdp_map_destroy(map);
}

/* ---- stress -------------------------------------------------------------- */

/*
 * Ring sizes 64..4096, thresholds 1..ring/2, budgets 1..1024, one queue
 * polled by hand: after every poll the ring is never over-posted and every
 * generated packet is received or missed; at the end all of them are
 * accounted for and every buffer is home.
 */
static void test_stress_matrix(void **state)
{
	static const uint32_t rings[] = { 64, 256, 1024, 4096 };
	static const int budgets[] = { 1, 7, 64, 1024 };
	const uint64_t count = T_TSAN ? 1500 : 6000;
	uint32_t ri, ti, bi;

	(void)state;
	for (ri = 0; ri < 4; ri++)
	for (ti = 0; ti < 3; ti++)
	for (bi = 0; bi < 4; bi++) {
		uint32_t ring = rings[ri];
		uint32_t thr = ti == 0 ? 1 : ti == 1 ? ring / 8 : ring / 2;
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_ring = ring,
				  .refill_threshold = thr, .rx_count = count,
				  .flows = 13, .tx_ring = 64,
				  .flags = bi & 1 ?
				  UXDP_NIC_F_SINGLE_ALLOC : 0);
		struct uxdp_dev *d = t_nic(&o);
		struct t_rx *r = t_rx_new(d, NULL, 64,
					  bi == 2 ? UXDP_TX : UXDP_DROP);
		struct uxdp_nic_stats st;
		int i;

		r->order = false;	/* misses leave gaps */
		t_attach(d, r);
		assert_int_equal(uxdp_dev_up(d), 0);
		for (i = 0; i < 1000000; i++) {
			assert_true(uxdp_dev_poll(d, 0, budgets[bi]) >= 0);
			st = t_st(d, 0);
			if (st.rx_posted > ring - 1)
				fail_msg("ring %u: %u posted", ring,
					 st.rx_posted);
			assert_int_equal(st.gen_packets,
					 st.rx_packets + st.rx_missed);
			if (st.gen_packets == count && !st.tx_pending)
				break;
		}
		assert_int_equal(st.gen_packets, count);
		assert_int_equal(t_rx_total(r), st.rx_packets);
		/* A budget the ring can take loses nothing. */
		if ((uint32_t)budgets[bi] <= ring - thr)
			assert_int_equal(st.rx_missed, 0);
		if (bi == 2) {
			struct uxdp_rxq_stats rs;

			/* Sent and completed, or refused (TX ring full). */
			assert_int_equal(uxdp_dev_rxq_stats(d, 0, &rs), 0);
			assert_int_equal(st.tx_cleaned + rs.tx_err,
					 st.rx_packets);
			assert_int_equal(st.tx_packets, st.tx_cleaned);
		}
		t_rx_ok(r);
		t_audit_down(d);
		uxdp_dev_destroy(d);
		t_rx_free(r);
	}
}

/* The same under poll groups: budgets 1 and 1024, rings 64 and 4096. */
static void test_stress_threaded(void **state)
{
	const uint64_t count = T_TSAN ? 10000 : 100000;
	int v;

	(void)state;
	for (v = 0; v < 4; v++) {
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2,
				  .rx_ring = v & 1 ? 4096 : 64,
				  .refill_threshold = v & 1 ? 2048 : 1,
				  .rx_count = count, .flows = 31);
		UXDP_DECLARE_OPTS(uxdp_poll_group_opts, po,
				  .budget = v & 2 ? 1024 : 1);
		struct uxdp_dev *d = t_nic(&o);
		struct t_rx *r = t_rx_new(d, NULL, 64, UXDP_DROP);
		struct uxdp_nic_stats st;

		r->order = false;
		t_attach(d, r);
		assert_int_equal(uxdp_dev_up(d), 0);
		assert_int_equal(uxdp_dev_start(d, &po), 0);
		t_wait_gen(d, count);
		uxdp_dev_stop(d);
		st = t_st(d, UXDP_ALL_QUEUES);
		assert_int_equal(st.rx_packets + st.rx_missed, count);
		assert_int_equal(t_rx_total(r), st.rx_packets);
		t_rx_ok(r);
		t_audit_down(d);
		uxdp_dev_destroy(d);
		t_rx_free(r);
	}
}

/* ---- configuration ------------------------------------------------------- */

static void t_bad_opts(const struct uxdp_nic_opts *o, const char *msg)
{
	assert_null(uxdp_nic_create("nicbad", o));
	assert_int_equal(errno, EINVAL);
	if (!strstr(uxdp_errmsg(), msg))
		fail_msg("error \"%s\" does not say \"%s\"", uxdp_errmsg(),
			 msg);
	assert_null(uxdp_dev_get_by_name("nicbad"));
}

static void test_create_errors(void **state)
{
	uint8_t table[128];
	struct uxdp_nic_stats st;
	struct uxdp_dev *v1, *v2;

	(void)state;
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 65);
		t_bad_opts(&o, "queues");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_ring = 100);
		t_bad_opts(&o, "rx_ring");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .tx_ring = 4);
		t_bad_opts(&o, "tx_ring");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_ring = 64,
				  .refill_threshold = 33);
		t_bad_opts(&o, "refill_threshold");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_len = 41);
		t_bad_opts(&o, "rx_len");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .rx_len = 1515);
		t_bad_opts(&o, "rx_len");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .flows = 65537);
		t_bad_opts(&o, "flows");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .flags = 1U << 9);
		t_bad_opts(&o, "flags");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .frames = 3);
		t_bad_opts(&o, "frames");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .wire_fifo = 100);
		t_bad_opts(&o, "wire_fifo");
	}
	{
		UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = 2,
				  .rss_table = table);
		memset(table, 0, sizeof(table));
		table[77] = 2;
		t_bad_opts(&o, "rss_table[77]");
	}
	/* Not a nic. */
	assert_int_equal(uxdp_veth_create("nicv0", "nicv1", NULL, &v1, &v2), 0);
	assert_int_equal(uxdp_nic_stats(v1, 0, &st), -EINVAL);
	assert_int_equal(uxdp_nic_loop(v1, NULL), -EINVAL);
	assert_int_equal(uxdp_nic_flow(v1, 0, NULL), -EINVAL);
	assert_int_equal(uxdp_nic_rss_queue(v1, table, 64, NULL), -EINVAL);
	uxdp_dev_destroy(v1);
	uxdp_dev_destroy(v2);
	{
		struct uxdp_dev *d = t_nic(NULL);

		assert_int_equal(uxdp_nic_stats(d, 1, &st), -EINVAL);
		assert_int_equal(uxdp_nic_stats(d, 0, &st), 0);
		assert_int_equal(uxdp_dev_num_rxq(d), 1);
		/* A second nic of the same name. */
		assert_null(uxdp_nic_create(uxdp_dev_name(d), NULL));
		assert_int_equal(errno, EEXIST);
		uxdp_dev_destroy(d);
	}
}

static void t_bad_port(const char *s, int err, const char *msg)
{
	assert_null(uxdp_dev_open(s, NULL));
	assert_int_equal(errno, err);
	if (!strstr(uxdp_errmsg(), msg))
		fail_msg("%s: error \"%s\" does not say \"%s\"", s,
			 uxdp_errmsg(), msg);
	assert_null(uxdp_dev_get_by_name("nicpx"));
}

static void test_port(void **state)
{
	struct uxdp_dev *a, *b, *nul;
	struct t_rx *ra, *rb;
	struct uxdp_nic_stats st;
	const char *usage = uxdp_port_usage("nic");
	int i;

	(void)state;
	assert_non_null(usage);
	assert_non_null(strstr(usage, "loop=OTHER"));
	assert_non_null(strstr(usage, "single_alloc"));
	a = uxdp_dev_open("nic:nicpa,queues=4,ring=256,txring=1024,"
			  "threshold=32,frames=1024,flows=100,len=128,"
			  "count=500,single_alloc", NULL);
	if (!a)
		fail_msg("open: %s", uxdp_errmsg());
	assert_string_equal(uxdp_dev_kind(a), "nic");
	assert_string_equal(uxdp_dev_name(a), "nicpa");
	assert_int_equal(uxdp_dev_num_rxq(a), 4);
	assert_int_equal(uxdp_dev_num_txq(a), 4);
	b = uxdp_dev_open("nic:nicpb,nogen,queues=2,fifo=1024,loop=nicpa",
			  NULL);
	if (!b)
		fail_msg("open: %s", uxdp_errmsg());
	{
		struct uxdp_nic_flow fl;

		/* nogen: no flows. */
		assert_int_equal(uxdp_nic_flow(b, 0, &fl), -EINVAL);
		assert_int_equal(uxdp_nic_flow(a, 99, &fl), 0);
		assert_int_equal(uxdp_nic_flow(a, 100, &fl), -EINVAL);
	}
	ra = t_rx_new(a, NULL, 128, UXDP_TX);
	rb = t_rx_new(NULL, b, 128, UXDP_DROP);
	t_attach(a, ra);
	t_attach(b, rb);
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	for (i = 0; i < 100; i++) {
		uint32_t q;

		for (q = 0; q < 4; q++)
			uxdp_dev_poll(a, q, 64);
		for (q = 0; q < 2; q++)
			uxdp_dev_poll(b, q, 64);
	}
	st = t_st(a, UXDP_ALL_QUEUES);
	assert_int_equal(st.gen_packets, 500);
	assert_int_equal(st.rx_packets, 500);
	/* single_alloc: one call per buffer; threshold 32 of 256. */
	assert_int_equal(st.alloc_calls, st.refill_bufs);
	assert_int_equal(t_st(b, UXDP_ALL_QUEUES).rx_packets, 500);
	t_rx_ok(ra);
	t_rx_ok(rb);
	t_audit_down(a);
	t_audit_down(b);
	uxdp_dev_destroy(b);
	uxdp_dev_destroy(a);
	t_rx_free(ra);
	t_rx_free(rb);

	t_bad_port("nic:nicpx,queues=65", EINVAL, "queues");
	t_bad_port("nic:nicpx,ring=100", EINVAL, "power of two");
	t_bad_port("nic:nicpx,ring=64,threshold=33", EINVAL,
		   "refill_threshold");
	t_bad_port("nic:nicpx,bogus=1", EINVAL, "bogus");
	t_bad_port("nic:nicpx,len=20", EINVAL, "len");
	t_bad_port("nic:nicpx,fifo=3", EINVAL, "fifo");
	t_bad_port("nic:nicpx,loop=nosuch", ENODEV, "nosuch");
	nul = uxdp_null_create("nicpnull", NULL);
	assert_non_null(nul);
	t_bad_port("nic:nicpx,loop=nicpnull", ENODEV, "no nic");
	uxdp_dev_destroy(nul);
	/* A peer that is up cannot be plugged: the new nic is undone. */
	a = uxdp_dev_open("nic:nicpc", NULL);
	assert_non_null(a);
	assert_int_equal(uxdp_dev_up(a), 0);
	t_bad_port("nic:nicpx,loop=nicpc", EBUSY, "up");
	uxdp_dev_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toeplitz_vectors),
		cmocka_unit_test(test_rss_spread),
		cmocka_unit_test(test_refill_threshold),
		cmocka_unit_test(test_refill_starved),
		cmocka_unit_test(test_single_vs_batch),
		cmocka_unit_test(test_content),
		cmocka_unit_test(test_group_per_queue_pinned),
		cmocka_unit_test(test_thread_per_queue),
		cmocka_unit_test(test_paced),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_loop_big),
		cmocka_unit_test(test_xmit),
		cmocka_unit_test(test_xsk_zc),
		cmocka_unit_test(test_xsk_zc_alloc_modes),
		cmocka_unit_test(test_xsk_tx_loop_and_copy),
		cmocka_unit_test(test_down_up_destroy_under_traffic),
		cmocka_unit_test(test_destroy_with_frames_queued),
		cmocka_unit_test(test_stress_matrix),
		cmocka_unit_test(test_stress_threaded),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
