/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pcap driver. Replay: files written with libpcap's own dumper (and
 * by hand: other byte order, pcapng, a pipe) replayed through a program
 * that checks every packet's bytes and order; records too long, too short
 * and cut short; loop=N; pps pacing on a poll group (idle between ticks);
 * the end signalled by uxdp_pcap_done() and its eventfd, one poll after
 * the last packet. Capture: frames transmitted directly, from several
 * threads, by XDP_TX and by a redirect from a replaying device, read back
 * with libpcap (nanosecond magic, lengths, snap length, bytes,
 * timestamps) and with tshark if installed. Broken files: each gets a
 * clear error at create or ends the replay with a counted one, never a
 * crash. Port strings. Every replay ends with uxdp_dev_audit() clean and
 * nothing in flight.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define T_MAX_RECS	256
#define T_DEADLINE_MS	20000

static char t_dir[64];

/* A path in the test's scratch directory (rotating static buffers). */
static const char *t_path(const char *name)
{
	static char bufs[8][192];
	static unsigned int k;
	char *b = bufs[k++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", t_dir, name);
	return b;
}

static uint64_t t_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void t_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- packets and files --------------------------------------------------- */

/*
 * Packet @seq of @len bytes: Ethernet header (local MACs, ethertype
 * 0x88b5), the sequence number, then bytes that depend on seq and offset.
 * The first n bytes do not depend on len, so a record captured short
 * holds the start of the full packet.
 */
static void pkt_fill(unsigned char *p, uint32_t len, uint32_t seq)
{
	static const unsigned char eth[14] = {
		2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x88, 0xb5,
	};
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seq * 131 + i * 7 + (i >> 8));
	memcpy(p, eth, len < 14 ? len : 14);
	for (i = 0; i < 4 && 14 + i < len; i++)
		p[14 + i] = (unsigned char)(seq >> (8 * i));
}

/* One record: the packet's length and how much of it the file holds. */
struct rec {
	uint32_t len;
	uint32_t caplen;
};

static bool rec_ok(const struct rec *r)
{
	return r->caplen >= 14 && r->caplen <= UXDP_PCAP_MAX_LEN;
}

/* Write @n records (packet i is pkt_fill(.., i)) with libpcap's dumper. */
static void write_pcap(const char *path, int dlt, unsigned int prec,
		       const struct rec *recs, uint32_t n)
{
	pcap_t *d = pcap_open_dead_with_tstamp_precision(dlt, 262144, prec);
	pcap_dumper_t *w;
	unsigned char *buf = malloc(262144);
	uint32_t i;

	assert_non_null(d);
	assert_non_null(buf);
	w = pcap_dump_open(d, path);
	assert_non_null(w);
	for (i = 0; i < n; i++) {
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = 1700000000 + i,
				.tv_usec = i * 3 + 1 },
			.caplen = recs[i].caplen,
			.len = recs[i].len,
		};

		pkt_fill(buf, recs[i].caplen, i);
		pcap_dump((u_char *)w, &h, buf);
	}
	pcap_dump_close(w);
	pcap_close(d);
	free(buf);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static size_t file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return (size_t)sb.st_size;
}

/* A file read back with libpcap, nanosecond timestamps. */
struct back {
	uint32_t n;
	int dlt;
	int snaplen;
	struct {
		uint32_t len, caplen;
		uint64_t ts_ns;
		unsigned char *data;
	} r[4096];
};

static struct back *read_back(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct back *b = calloc(1, sizeof(*b));
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int rc;

	assert_non_null(b);
	p = pcap_open_offline_with_tstamp_precision(path,
			PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!p)
		fail_msg("%s: %s", path, errbuf);
	b->dlt = pcap_datalink(p);
	b->snaplen = pcap_snapshot(p);
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		assert_true(b->n < ARRAY_LEN(b->r));
		b->r[b->n].len = h->len;
		b->r[b->n].caplen = h->caplen;
		b->r[b->n].ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ULL +
				   (uint64_t)h->ts.tv_usec;
		b->r[b->n].data = malloc(h->caplen ? h->caplen : 1);
		memcpy(b->r[b->n].data, data, h->caplen);
		b->n++;
	}
	if (rc != PCAP_ERROR_BREAK)
		fail_msg("%s: record %u: %s", path, b->n, pcap_geterr(p));
	pcap_close(p);
	return b;
}

static void back_free(struct back *b)
{
	uint32_t i;

	for (i = 0; i < b->n; i++)
		free(b->r[i].data);
	free(b);
}

/* The file's first four bytes: libpcap writes its magic in host order. */
static uint32_t file_magic(const char *path)
{
	uint32_t m = 0;
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	assert_int_equal(fread(&m, 1, 4, f), 4);
	fclose(f);
	return m;
}

/* ---- the checking program ------------------------------------------------ */

/*
 * Expects the replayable records of @recs in file order, pass after pass,
 * each byte for byte; counts what it saw and what was wrong, and returns
 * @verdict (or redirects to @target).
 */
struct chk {
	const struct rec *recs;
	uint32_t nrecs;
	uint32_t pos;
	uint64_t seen;
	uint64_t bad;
	char why[160];
	uint32_t verdict;
	struct uxdp_xdp_target *target;
	unsigned char exp[4096];
};

static uint32_t chk_prog(struct uxdp_buff *ctx, void *priv)
{
	struct chk *c = priv;
	uint32_t len = uxdp_buff_len(ctx), k;
	const struct rec *r;

	for (k = 0; k < c->nrecs && !rec_ok(&c->recs[c->pos]); k++)
		c->pos = (c->pos + 1) % c->nrecs;
	r = &c->recs[c->pos];
	if (k == c->nrecs) {
		snprintf(c->why, sizeof(c->why), "packet %lu: no record to "
			 "replay", (unsigned long)c->seen);
		c->bad++;
	} else if (len != r->caplen) {
		if (!c->bad)
			snprintf(c->why, sizeof(c->why), "packet %lu: len %u, "
				 "want record %u's %u", (unsigned long)c->seen,
				 len, c->pos, r->caplen);
		c->bad++;
	} else {
		pkt_fill(c->exp, len, c->pos);
		if (memcmp(ctx->data, c->exp, len)) {
			if (!c->bad)
				snprintf(c->why, sizeof(c->why), "packet %lu "
					 "(record %u): bytes differ",
					 (unsigned long)c->seen, c->pos);
			c->bad++;
		}
	}
	c->pos = (c->pos + 1) % (c->nrecs ? c->nrecs : 1);
	c->seen++;
	if (c->target)
		return uxdp_redirect_target(c->target);
	return c->verdict;
}

static void chk_attach(struct uxdp_dev *dev, struct chk *c,
		       const struct rec *recs, uint32_t n, uint32_t verdict)
{
	struct uxdp_prog *p;

	memset(c, 0, sizeof(*c));
	c->recs = recs;
	c->nrecs = n;
	c->verdict = verdict;
	p = uxdp_prog_create("chk", chk_prog, c);
	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(dev, 0, p), 0);
	uxdp_prog_put(p);
}

static void chk_ok(const struct chk *c, uint64_t want)
{
	if (c->bad)
		fail_msg("%lu bad packets, first: %s", (unsigned long)c->bad,
			 c->why);
	assert_int_equal(c->seen, want);
}

static uint32_t count_ok(const struct rec *recs, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++)
		k += rec_ok(&recs[i]);
	return k;
}

/* Poll on this thread until the replay is done. Returns the polls. */
static int poll_until_done(struct uxdp_dev *dev, int budget)
{
	int i, r;

	for (i = 0; i < 100000 && !uxdp_pcap_done(dev); i++) {
		r = uxdp_dev_poll(dev, 0, budget);
		assert_true(r >= 0 && r <= budget);
	}
	assert_true(uxdp_pcap_done(dev));
	return i;
}

/* Every buffer of the device's pool home, none misplaced. */
static void audit_clean(struct uxdp_dev *dev, uint32_t pools)
{
	struct uxdp_dev_audit a;

	assert_int_equal(uxdp_dev_audit(dev, &a), 0);
	assert_int_equal(a.pools, pools);
	assert_int_equal(a.in_flight, 0);
	assert_int_equal(a.misplaced, 0);
}

static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static struct uxdp_dev *replay_dev(const char *name, const char *in,
				   uint64_t loops, uint64_t pps,
				   uint32_t frames)
{
	UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .in = in, .loops = loops,
			  .pps = pps, .rx_frames = frames);
	struct uxdp_dev *d = uxdp_pcap_create(name, &o);

	if (!d)
		fail_msg("uxdp_pcap_create(%s): %s", in, uxdp_errmsg());
	return d;
}

/* ---- replay -------------------------------------------------------------- */

/* Sizes around the edges; too long, too short and cut-short records. */
static const struct rec t_sizes[] = {
	{ 60, 60 }, { 64, 64 }, { 1514, 1514 }, { 3520, 3520 },
	{ 3521, 3521 },		/* one over the buffer room: skipped */
	{ 9000, 9000 },		/* a jumbo frame: skipped */
	{ 13, 13 },		/* a runt: skipped */
	{ 1000, 200 },		/* captured short: replayed as captured */
	{ 100, 100 }, { 15, 14 }, { 42, 42 },
};

static void test_replay_sizes(void **state)
{
	const char *f = t_path("sizes.pcap");
	struct uxdp_rxq_stats rs;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	uint64_t bytes = 0, v;
	struct chk c;
	uint32_t i, want = count_ok(t_sizes, ARRAY_LEN(t_sizes));
	int n;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, t_sizes,
		   ARRAY_LEN(t_sizes));
	dev = replay_dev("rp-sizes", f, 0, 0, 0);
	assert_string_equal(uxdp_dev_kind(dev), "pcap");
	chk_attach(dev, &c, t_sizes, ARRAY_LEN(t_sizes), UXDP_DROP);
	assert_false(uxdp_pcap_done(dev));
	assert_false(fd_readable(uxdp_pcap_done_fd(dev), 0));
	assert_int_equal(uxdp_dev_poll(dev, 0, 64), -ENETDOWN);
	assert_int_equal(uxdp_dev_up(dev), 0);
	/* One poll reads the whole file... */
	n = uxdp_dev_poll(dev, 0, 64);
	assert_int_equal(n, want);
	/* ...but the replay is done only at the next: that poll's frames
	 * must have been flushed first. */
	assert_false(uxdp_pcap_done(dev));
	assert_int_equal(uxdp_dev_poll(dev, 0, 64), 0);
	assert_true(uxdp_pcap_done(dev));
	assert_true(fd_readable(uxdp_pcap_done_fd(dev), 0));
	assert_int_equal(read(uxdp_pcap_done_fd(dev), &v, sizeof(v)),
			 sizeof(v));
	assert_true(uxdp_pcap_done(dev));	/* reading the fd clears it */
	assert_int_equal(uxdp_dev_poll(dev, 0, 64), 0);
	chk_ok(&c, want);

	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.records, ARRAY_LEN(t_sizes));
	assert_int_equal(st.replayed, want);
	assert_int_equal(st.too_long, 2);
	assert_int_equal(st.too_short, 1);
	assert_int_equal(st.truncated, 2);
	assert_int_equal(st.records, st.replayed + st.too_long + st.too_short);
	assert_int_equal(st.passes, 1);
	assert_int_equal(st.read_errors, 0);
	assert_string_equal(st.replay_error, "");
	for (i = 0; i < ARRAY_LEN(t_sizes); i++)
		if (rec_ok(&t_sizes[i]))
			bytes += t_sizes[i].caplen;
	assert_int_equal(st.replayed_bytes, bytes);
	assert_int_equal(uxdp_dev_rxq_stats(dev, 0, &rs), 0);
	assert_int_equal(rs.packets, want);
	assert_int_equal(rs.bytes, bytes);
	assert_int_equal(rs.drop, want);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/* Budget 1, a pool of 2 buffers, three passes: order holds throughout. */
static void test_replay_loop(void **state)
{
	const char *f = t_path("loop.pcap");
	uint32_t want = count_ok(t_sizes, ARRAY_LEN(t_sizes));
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct chk c;
	int polls;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_NANO, t_sizes,
		   ARRAY_LEN(t_sizes));
	dev = replay_dev("rp-loop", f, 3, 0, 2);
	chk_attach(dev, &c, t_sizes, ARRAY_LEN(t_sizes), UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	polls = poll_until_done(dev, 1);
	assert_true(polls >= (int)(3 * want));
	chk_ok(&c, 3 * want);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.passes, 3);
	assert_int_equal(st.replayed, 3 * want);
	assert_int_equal(st.records, 3 * ARRAY_LEN(t_sizes));
	assert_int_equal(st.too_long, 3 * 2);
	assert_int_equal(st.read_errors, 0);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);

	/* Budget over UXDP_NAPI_BUDGET, the port string's loop=3. */
	{
		char port[256];

		snprintf(port, sizeof(port), "pcap:%s,loop=3,frames=16", f);
		dev = uxdp_dev_open(port, "rp-loop2");
	}
	assert_non_null(dev);
	chk_attach(dev, &c, t_sizes, ARRAY_LEN(t_sizes), UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 200);
	chk_ok(&c, 3 * want);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/* Files that are all skipped end after one pass, whatever loop says. */
static void test_replay_nothing_to_replay(void **state)
{
	static const struct rec big[] = { { 5000, 5000 }, { 10, 10 } };
	const char *f = t_path("skipped.pcap");
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct chk c;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, big, 2);
	dev = replay_dev("rp-none", f, UXDP_PCAP_LOOP_FOREVER, 0, 0);
	chk_attach(dev, &c, big, 2, UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	assert_int_equal(uxdp_dev_poll(dev, 0, 64), 0);
	assert_true(uxdp_pcap_done(dev));
	chk_ok(&c, 0);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.passes, 1);
	assert_int_equal(st.too_long, 1);
	assert_int_equal(st.too_short, 1);
	assert_int_equal(st.replayed, 0);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);

	/* A header and no records: done at the first poll, too. */
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, big, 0);
	dev = replay_dev("rp-none", f, 5, 0, 0);
	assert_int_equal(uxdp_dev_up(dev), 0);
	assert_int_equal(uxdp_dev_poll(dev, 0, 64), 0);
	assert_true(uxdp_pcap_done(dev));
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.records, 0);
	assert_int_equal(st.passes, 1);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/* Little helpers for files written by hand. */
struct raw {
	unsigned char b[8192];
	size_t n;
	bool be;
};

static void raw_u16(struct raw *r, uint32_t v)
{
	if (r->be) {
		r->b[r->n++] = (unsigned char)(v >> 8);
		r->b[r->n++] = (unsigned char)v;
	} else {
		r->b[r->n++] = (unsigned char)v;
		r->b[r->n++] = (unsigned char)(v >> 8);
	}
}

static void raw_u32(struct raw *r, uint32_t v)
{
	if (r->be) {
		raw_u16(r, v >> 16);
		raw_u16(r, v & 0xffff);
	} else {
		raw_u16(r, v & 0xffff);
		raw_u16(r, v >> 16);
	}
}

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
	assert_true(r->n + n <= sizeof(r->b));
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

/* A pcap file header (micro magic) in @r's byte order. */
static void raw_pcap_hdr(struct raw *r, uint32_t snaplen, uint32_t dlt)
{
	raw_u32(r, 0xa1b2c3d4);
	raw_u16(r, 2);
	raw_u16(r, 4);
	raw_u32(r, 0);
	raw_u32(r, 0);
	raw_u32(r, snaplen);
	raw_u32(r, dlt);
}

static void raw_pcap_rec(struct raw *r, uint32_t caplen, uint32_t len,
			 uint32_t seq)
{
	unsigned char p[4096];

	raw_u32(r, 1700000000);
	raw_u32(r, seq);
	raw_u32(r, caplen);
	raw_u32(r, len);
	pkt_fill(p, caplen, seq);
	raw_bytes(r, p, caplen);
}

/* The other byte order, and pcapng: what libpcap reads, we replay. */
static void test_replay_formats(void **state)
{
	static const struct rec recs[] = { { 60, 60 }, { 1514, 1514 },
					   { 77, 77 } };
	const char *f = t_path("formats.pcap");
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct raw r = { .be = true };
	struct chk c;
	uint32_t i;

	(void)state;
	raw_pcap_hdr(&r, 65535, DLT_EN10MB);
	for (i = 0; i < 3; i++)
		raw_pcap_rec(&r, recs[i].caplen, recs[i].len, i);
	write_bytes(f, r.b, r.n);
	dev = replay_dev("rp-be", f, 2, 0, 0);
	chk_attach(dev, &c, recs, 3, UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 64);
	chk_ok(&c, 6);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);

	/* pcapng: section header, interface (Ethernet), enhanced packets. */
	memset(&r, 0, sizeof(r));
	raw_u32(&r, 0x0a0d0d0a);
	raw_u32(&r, 28);
	raw_u32(&r, 0x1a2b3c4d);
	raw_u16(&r, 1);
	raw_u16(&r, 0);
	raw_u32(&r, 0xffffffff);
	raw_u32(&r, 0xffffffff);
	raw_u32(&r, 28);
	raw_u32(&r, 1);
	raw_u32(&r, 20);
	raw_u16(&r, DLT_EN10MB);
	raw_u16(&r, 0);
	raw_u32(&r, 0);
	raw_u32(&r, 20);
	for (i = 0; i < 3; i++) {
		uint32_t pad = (4 - recs[i].caplen % 4) % 4;
		uint32_t tot = 32 + recs[i].caplen + pad;
		unsigned char p[2048] = { 0 };

		raw_u32(&r, 6);
		raw_u32(&r, tot);
		raw_u32(&r, 0);
		raw_u32(&r, 0);
		raw_u32(&r, i);
		raw_u32(&r, recs[i].caplen);
		raw_u32(&r, recs[i].len);
		pkt_fill(p, recs[i].caplen, i);
		raw_bytes(&r, p, recs[i].caplen + pad);
		raw_u32(&r, tot);
	}
	f = t_path("formats.pcapng");
	write_bytes(f, r.b, r.n);
	dev = replay_dev("rp-ng", f, 2, 0, 0);
	chk_attach(dev, &c, recs, 3, UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 64);
	chk_ok(&c, 6);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.passes, 2);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/* A pipe replays once; loop on it is refused, as it cannot rewind. */
static void test_replay_pipe(void **state)
{
	static const struct rec recs[] = { { 64, 64 }, { 128, 128 } };
	const char *f = t_path("pipe.pcap");
	unsigned char buf[4096];
	char path[64];
	struct uxdp_dev *dev;
	struct chk c;
	int fds[2];
	ssize_t n;
	int in;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, recs, 2);
	in = open(f, O_RDONLY);
	assert_true(in >= 0);
	n = read(in, buf, sizeof(buf));
	close(in);
	assert_true(n > 0);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], buf, (size_t)n), n);
	close(fds[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	{
		UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .in = path, .loops = 2);

		errno = 0;
		assert_null(uxdp_pcap_create("rp-pipe", &o));
		assert_int_equal(errno, ESPIPE);
		assert_non_null(strstr(uxdp_errmsg(), "not a pipe"));
	}
	dev = replay_dev("rp-pipe", path, 1, 0, 0);
	chk_attach(dev, &c, recs, 2, UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 64);
	chk_ok(&c, 2);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
	close(fds[0]);
}

/*
 * pps on a poll group: never ahead of the rate, the group sleeps between
 * ticks, done wakes the done fd. Only lower bounds on time (a loaded
 * machine is slow, never fast).
 */
static void test_replay_paced(void **state)
{
	static const struct rec recs[] = {
		{ 60, 60 }, { 61, 61 }, { 62, 62 }, { 63, 63 }, { 64, 64 },
		{ 65, 65 }, { 66, 66 }, { 67, 67 }, { 68, 68 }, { 69, 69 },
	};
	const uint64_t pps = 200;
	const char *f = t_path("paced.pcap");
	struct uxdp_poll_group_stats gs;
	struct uxdp_poll_group *g;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	uint64_t t_up, t_now, sent;
	struct chk c;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, recs, 10);
	dev = replay_dev("rp-paced", f, 3, pps, 8);
	chk_attach(dev, &c, recs, 10, UXDP_DROP);
	g = uxdp_poll_group_create(NULL);
	assert_non_null(g);
	assert_int_equal(uxdp_poll_group_add(g, dev, 0), 0);
	assert_int_equal(uxdp_poll_group_start(g), 0);
	t_up = t_now_ms();
	assert_int_equal(uxdp_dev_up(dev), 0);
	t_sleep_ms(60);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	t_now = t_now_ms();
	sent = st.replayed;
	/* The clock started inside up, after t_up. */
	if (sent > pps * (t_now - t_up) / 1000 + 1)
		fail_msg("%lu packets in %lu ms at %lu pps",
			 (unsigned long)sent, (unsigned long)(t_now - t_up),
			 (unsigned long)pps);
	assert_true(fd_readable(uxdp_pcap_done_fd(dev), T_DEADLINE_MS));
	t_now = t_now_ms();
	assert_true(uxdp_pcap_done(dev));
	/* 30 packets at 200/s: the last is due 145 ms after the first. */
	assert_true(t_now - t_up >= 29 * 1000 / pps);
	assert_int_equal(uxdp_poll_group_stats(g, &gs), 0);
	/* Idle between ticks: the group slept rather than spun. */
	if (gs.sleeps < 10)
		fail_msg("the group slept %lu times in %lu rounds",
			 (unsigned long)gs.sleeps, (unsigned long)gs.rounds);
	assert_true(gs.wakeups >= 10);
	uxdp_poll_group_destroy(g);	/* joins: the program's writes seen */
	chk_ok(&c, 30);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.replayed, 30);
	assert_int_equal(st.passes, 3);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/* ---- capture ------------------------------------------------------------- */

/* Frames from a pool of 4 KiB chunks (room for 3520 bytes). */
struct t_src {
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;
	struct uxdp_rxq_info rxq;
};

static void src_init(struct t_src *s, uint32_t nchunks)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 4096);

	memset(s, 0, sizeof(*s));
	s->umem = uxdp_umem_create(NULL, (uint64_t)nchunks * 4096, &o);
	assert_non_null(s->umem);
	s->pool = uxdp_pool_create(s->umem, NULL);
	assert_non_null(s->pool);
	s->rxq.mem.type = UXDP_MEM_POOL;
	uxdp_pool_set_rxq(s->pool, &s->rxq);
	assert_int_equal(uxdp_umem_fill_all(s->umem), (int)nchunks);
}

static struct uxdp_frame *src_frame(struct t_src *s, uint32_t len,
				    uint32_t seq)
{
	struct uxdp_buff *b = uxdp_pool_alloc(s->pool);
	struct uxdp_frame *f;

	assert_non_null(b);
	uxdp_buff_set_size(b, len);
	pkt_fill(b->data, len, seq);
	f = uxdp_buff_to_frame(b);
	assert_non_null(f);
	return f;
}

static void src_fini(struct t_src *s)
{
	struct uxdp_pool_stats st;

	assert_int_equal(uxdp_pool_stats(s->pool, &st), 0);
	assert_int_equal(st.outstanding, 0);
	assert_int_equal(uxdp_pool_destroy(s->pool), 0);
	assert_int_equal(uxdp_umem_destroy(s->umem), 0);
}

static struct uxdp_dev *capture_dev(const char *name, const char *out,
				    uint32_t snaplen)
{
	UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .out = out, .snaplen = snaplen);
	struct uxdp_dev *d = uxdp_pcap_create(name, &o);

	if (!d)
		fail_msg("uxdp_pcap_create(out=%s): %s", out, uxdp_errmsg());
	return d;
}

static const uint32_t t_cap_lens[] = { 60, 64, 1514, 3000, 14, 101, 100 };

/* Transmit t_cap_lens (seq = index) in two calls, timestamps bracketed. */
static void capture_some(struct uxdp_dev *dev, struct t_src *s,
			 uint64_t *t0, uint64_t *t1)
{
	struct uxdp_frame *fr[ARRAY_LEN(t_cap_lens)];
	uint32_t i, n = ARRAY_LEN(t_cap_lens);

	for (i = 0; i < n; i++)
		fr[i] = src_frame(s, t_cap_lens[i], i);
	*t0 = t_realtime_ns();
	assert_int_equal(uxdp_dev_xmit(dev, 3, fr, 0), 3);
	assert_int_equal(uxdp_dev_xmit(dev, (int)n - 3, fr + 3,
				       UXDP_XMIT_FLUSH), (int)n - 3);
	*t1 = t_realtime_ns();
}

static void check_back(const struct back *b, uint32_t snaplen, uint64_t t0,
		       uint64_t t1)
{
	unsigned char exp[4096];
	uint32_t i;

	assert_int_equal(b->dlt, DLT_EN10MB);
	assert_int_equal(b->snaplen, (int)snaplen);
	assert_int_equal(b->n, ARRAY_LEN(t_cap_lens));
	for (i = 0; i < b->n; i++) {
		uint32_t len = t_cap_lens[i];
		uint32_t cap = len < snaplen ? len : snaplen;

		assert_int_equal(b->r[i].len, len);
		assert_int_equal(b->r[i].caplen, cap);
		pkt_fill(exp, len, i);
		assert_memory_equal(b->r[i].data, exp, cap);
		assert_true(b->r[i].ts_ns >= t0 && b->r[i].ts_ns <= t1);
		if (i)
			assert_true(b->r[i].ts_ns >= b->r[i - 1].ts_ns);
	}
}

static void test_capture(void **state)
{
	const char *full = t_path("cap-full.pcap");
	const char *snap = t_path("cap-100.pcap");
	struct uxdp_txq_stats ts;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *a, *b;
	struct back *bk;
	struct t_src s;
	uint64_t t0, t1, bytes = 0;
	uint32_t i;

	(void)state;
	src_init(&s, 64);
	a = capture_dev("cap-full", full, 0);
	assert_true(uxdp_pcap_done(a));		/* nothing to replay */
	assert_true(fd_readable(uxdp_pcap_done_fd(a), 0));
	{
		char port[256];

		snprintf(port, sizeof(port), "pcap:,out=%s,snaplen=100", snap);
		b = uxdp_dev_open(port, "cap-100");
		assert_non_null(b);
	}
	assert_int_equal(uxdp_dev_up(a), 0);
	assert_int_equal(uxdp_dev_up(b), 0);
	capture_some(a, &s, &t0, &t1);
	/* Flushed on request: the file is complete while the device runs. */
	assert_int_equal(uxdp_pcap_flush(a), 0);
	bk = read_back(full);
	check_back(bk, UXDP_PCAP_MAX_SNAPLEN, t0, t1);
	back_free(bk);
	assert_int_equal(file_magic(full), 0xa1b23c4d);	/* nanoseconds */

	capture_some(b, &s, &t0, &t1);
	assert_int_equal(uxdp_dev_down(b), 0);		/* flushes */
	bk = read_back(snap);
	check_back(bk, 100, t0, t1);
	back_free(bk);

	assert_int_equal(uxdp_pcap_stats(b, &st), 0);
	for (i = 0; i < ARRAY_LEN(t_cap_lens); i++)
		bytes += t_cap_lens[i];
	assert_int_equal(st.captured, ARRAY_LEN(t_cap_lens));
	assert_int_equal(st.captured_bytes, bytes);
	assert_int_equal(st.snapped, 3);	/* 1514, 3000, 101 */
	assert_int_equal(st.capture_errors, 0);
	assert_string_equal(st.capture_error, "");
	assert_int_equal(st.replayed, 0);
	assert_int_equal(uxdp_dev_txq_stats(b, 0, &ts), 0);
	assert_int_equal(ts.packets, ARRAY_LEN(t_cap_lens));
	assert_int_equal(ts.bytes, bytes);
	assert_int_equal(ts.xmit_calls, 2);
	/* Down: refused, counted, the caller keeps the frames. */
	{
		struct uxdp_frame *f = src_frame(&s, 64, 0);

		assert_int_equal(uxdp_dev_xmit(b, 1, &f, 0), -ENETDOWN);
		assert_int_equal(uxdp_dev_xmit(b, 1, &f, 0x80), -EINVAL);
		uxdp_frame_return(f);
	}
	assert_int_equal(uxdp_dev_txq_stats(b, 0, &ts), 0);
	assert_int_equal(ts.down, 1);
	assert_int_equal(ts.bad_flags, 1);
	audit_clean(a, 0);
	uxdp_dev_destroy(a);
	uxdp_dev_destroy(b);
	/* Destroy wrote the rest: a is complete too. */
	bk = read_back(full);
	assert_int_equal(bk->n, ARRAY_LEN(t_cap_lens));
	back_free(bk);
	src_fini(&s);
}

/* tshark reads the capture the same: counts, lengths, ns timestamps. */
static void test_capture_tshark(void **state)
{
	const char *f = t_path("cap-tshark.pcap");
	const char *ci = getenv("UXDP_CI");
	char cmd[512], line[256];
	struct uxdp_dev *dev;
	struct back *bk;
	struct t_src s;
	uint64_t t0, t1;
	uint32_t n = 0;
	FILE *p;

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1")) {
		if (ci && *ci && *ci != '0')
			fail_msg("tshark is not installed and UXDP_CI is set "
				 "(scripts/deps.sh installs it)");
		fprintf(stderr, "\n*** SKIPPED: tshark not installed "
			"(scripts/deps.sh): captures not read with it ***\n\n");
		skip();
	}
	src_init(&s, 64);
	dev = capture_dev("cap-ts", f, 1000);
	assert_int_equal(uxdp_dev_up(dev), 0);
	capture_some(dev, &s, &t0, &t1);
	uxdp_dev_destroy(dev);
	src_fini(&s);
	bk = read_back(f);
	snprintf(cmd, sizeof(cmd), "tshark -r '%s' -T fields -E separator=, "
		 "-e frame.len -e frame.cap_len -e frame.time_epoch "
		 "-e eth.src -e eth.type 2>/dev/null", f);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned int len, cap;
		char epoch[64], src[32], type[16], want[64];

		if (sscanf(line, "%u,%u,%63[^,],%31[^,],%15s", &len, &cap,
			   epoch, src, type) != 5)
			fail_msg("tshark said '%s'", line);
		assert_true(n < bk->n);
		assert_int_equal(len, bk->r[n].len);
		assert_int_equal(cap, bk->r[n].caplen);
		snprintf(want, sizeof(want), "%lu.%09lu",
			 (unsigned long)(bk->r[n].ts_ns / 1000000000ULL),
			 (unsigned long)(bk->r[n].ts_ns % 1000000000ULL));
		assert_string_equal(epoch, want);
		assert_string_equal(src, "02:00:00:00:00:02");
		assert_string_equal(type, "0x88b5");
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, ARRAY_LEN(t_cap_lens));
	assert_int_equal(bk->n, n);
	back_free(bk);
}

/*
 * XDP_TX on a device that replays and captures: the out file is the in
 * file's replayable records, byte for byte. And a sink (no out): frames
 * counted and returned.
 */
static void test_replay_tx_to_capture(void **state)
{
	const char *in = t_path("tx-in.pcap"), *out = t_path("tx-out.pcap");
	uint32_t want = count_ok(t_sizes, ARRAY_LEN(t_sizes)), i, k;
	struct uxdp_txq_stats ts;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct back *bk;
	struct chk c;
	char port[256];

	(void)state;
	write_pcap(in, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, t_sizes,
		   ARRAY_LEN(t_sizes));
	snprintf(port, sizeof(port), "pcap:%s,out=%s,loop=2,frames=4", in, out);
	dev = uxdp_dev_open(port, "rp-tx");
	assert_non_null(dev);
	chk_attach(dev, &c, t_sizes, ARRAY_LEN(t_sizes), UXDP_TX);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 3);
	chk_ok(&c, 2 * want);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.captured, 2 * want);
	assert_int_equal(st.captured_bytes, st.replayed_bytes);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
	bk = read_back(out);
	assert_int_equal(bk->n, 2 * want);
	for (i = 0, k = 0; i < bk->n; k = (k + 1) % ARRAY_LEN(t_sizes)) {
		unsigned char exp[4096];

		if (!rec_ok(&t_sizes[k]))
			continue;
		/* A record captured short is replayed, and so written, at
		 * the length it was captured with. */
		assert_int_equal(bk->r[i].len, t_sizes[k].caplen);
		assert_int_equal(bk->r[i].caplen, t_sizes[k].caplen);
		pkt_fill(exp, t_sizes[k].caplen, k);
		assert_memory_equal(bk->r[i].data, exp, t_sizes[k].caplen);
		i++;
	}
	back_free(bk);

	/* No out file: a sink. */
	dev = replay_dev("rp-sink", in, 1, 0, 4);
	chk_attach(dev, &c, t_sizes, ARRAY_LEN(t_sizes), UXDP_TX);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 64);
	chk_ok(&c, want);
	assert_int_equal(uxdp_dev_txq_stats(dev, 0, &ts), 0);
	assert_int_equal(ts.packets, want);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.captured, 0);
	assert_int_equal(uxdp_pcap_flush(dev), 0);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

/*
 * A poll group replays into a program that redirects to a capture
 * device: the pipeline a tool builds. Then a capture device written by
 * several threads at once.
 */
static void test_replay_redirect_threaded(void **state)
{
	const char *in = t_path("rd-in.pcap"), *out = t_path("rd-out.pcap");
	uint32_t want = count_ok(t_sizes, ARRAY_LEN(t_sizes)), i, k;
	const uint64_t loops = T_TSAN ? 20 : 200;
	struct uxdp_poll_group *g;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *rp, *cap;
	struct back *bk;
	struct chk *c = calloc(1, sizeof(*c));

	(void)state;
	assert_non_null(c);
	write_pcap(in, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, t_sizes,
		   ARRAY_LEN(t_sizes));
	rp = replay_dev("rd-rp", in, loops, 0, 8);
	cap = capture_dev("rd-cap", out, 0);
	chk_attach(rp, c, t_sizes, ARRAY_LEN(t_sizes), UXDP_DROP);
	c->target = uxdp_dev_target(cap);
	assert_int_equal(uxdp_dev_up(cap), 0);
	g = uxdp_poll_group_create(NULL);
	assert_non_null(g);
	assert_int_equal(uxdp_poll_group_add(g, rp, 0), 0);
	assert_int_equal(uxdp_poll_group_start(g), 0);
	assert_int_equal(uxdp_dev_up(rp), 0);
	assert_true(fd_readable(uxdp_pcap_done_fd(rp), T_DEADLINE_MS));
	/* Done: every packet's poll has ended and its frames were sent. */
	assert_int_equal(uxdp_pcap_stats(cap, &st), 0);
	assert_int_equal(st.captured, loops * want);
	uxdp_poll_group_destroy(g);
	chk_ok(c, loops * want);
	audit_clean(rp, 1);
	uxdp_dev_destroy(rp);
	uxdp_dev_destroy(cap);
	bk = read_back(out);
	assert_int_equal(bk->n, loops * want);
	for (i = 0, k = 0; i < bk->n; k = (k + 1) % ARRAY_LEN(t_sizes)) {
		unsigned char exp[4096];

		if (!rec_ok(&t_sizes[k]))
			continue;
		assert_int_equal(bk->r[i].len, t_sizes[k].caplen);
		pkt_fill(exp, t_sizes[k].caplen, k);
		assert_memory_equal(bk->r[i].data, exp, t_sizes[k].caplen);
		i++;
	}
	back_free(bk);
	free(c);
}

#define T_TX_THREADS	3
#define T_TX_FRAMES	(T_TSAN ? 304 : 1000)	/* multiples of 8 */

struct tx_arg {
	struct uxdp_dev *dev;
	pthread_barrier_t *start;
	uint32_t id;
	int err;
};

/* Frames whose seq says which thread and which frame of it. */
static void *tx_thread(void *p)
{
	struct tx_arg *a = p;
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = 4096);
	struct uxdp_rxq_info rxq = { .mem = { .type = UXDP_MEM_POOL } };
	struct uxdp_umem *umem = uxdp_umem_create(NULL, 32 * 4096, &o);
	struct uxdp_pool *pool = umem ? uxdp_pool_create(umem, NULL) : NULL;
	uint32_t i, j;

	if (!pool || uxdp_umem_fill_all(umem) != 32) {
		a->err = 1;
		pthread_barrier_wait(a->start);
		return NULL;
	}
	uxdp_pool_set_rxq(pool, &rxq);
	/* All at once, so the transmits overlap. */
	pthread_barrier_wait(a->start);
	for (i = 0; i < T_TX_FRAMES; i += 8) {
		struct uxdp_frame *fr[8];

		for (j = 0; j < 8; j++) {
			struct uxdp_buff *b = uxdp_pool_alloc(pool);
			uint32_t seq = a->id << 16 | (i + j);

			if (!b) {
				a->err = 2;
				return NULL;
			}
			uxdp_buff_set_size(b, 60 + (i + j) % 200);
			pkt_fill(b->data, 60 + (i + j) % 200, seq);
			fr[j] = uxdp_buff_to_frame(b);
		}
		if (uxdp_dev_xmit(a->dev, 8, fr, UXDP_XMIT_FLUSH) != 8) {
			a->err = 3;
			uxdp_frame_return_bulk(fr, 8);
		}
	}
	if (uxdp_pool_destroy(pool) || uxdp_umem_destroy(umem))
		a->err = 4;
	return NULL;
}

static void test_capture_threads(void **state)
{
	const char *f = t_path("cap-threads.pcap");
	struct tx_arg args[T_TX_THREADS];
	pthread_barrier_t start;
	pthread_t th[T_TX_THREADS];
	uint32_t next[T_TX_THREADS] = { 0 };
	unsigned char exp[4096];
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct back *bk;
	uint32_t i;

	(void)state;
	dev = capture_dev("cap-th", f, 0);
	assert_int_equal(uxdp_dev_up(dev), 0);
	assert_int_equal(pthread_barrier_init(&start, NULL, T_TX_THREADS), 0);
	for (i = 0; i < T_TX_THREADS; i++) {
		args[i] = (struct tx_arg){ .dev = dev, .start = &start,
					   .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, tx_thread,
						&args[i]), 0);
	}
	for (i = 0; i < T_TX_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].err, 0);
	}
	pthread_barrier_destroy(&start);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.captured, T_TX_THREADS * T_TX_FRAMES);
	uxdp_dev_destroy(dev);
	bk = read_back(f);
	assert_int_equal(bk->n, T_TX_THREADS * T_TX_FRAMES);
	/* Each thread's frames whole and in its order, interleaved. */
	for (i = 0; i < bk->n; i++) {
		const unsigned char *d = bk->r[i].data;
		uint32_t seq = d[14] | d[15] << 8 | d[16] << 16 |
			       (uint32_t)d[17] << 24, id = seq >> 16;

		assert_true(id < T_TX_THREADS);
		assert_int_equal(seq & 0xffff, next[id]);
		assert_int_equal(bk->r[i].len, 60 + next[id] % 200);
		pkt_fill(exp, bk->r[i].len, seq);
		assert_memory_equal(d, exp, bk->r[i].len);
		next[id]++;
	}
	back_free(bk);
}

/*
 * A full disk: at create (/dev/full), and later (a file size limit): the
 * error is counted and said, every frame still goes home, nothing
 * crashes, and the file holds whole records up to where it broke.
 */
static void test_capture_write_error(void **state)
{
	const char *f = t_path("cap-fsize.pcap");
	struct rlimit old, lim;
	struct uxdp_txq_stats ts;
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct t_src s;
	uint32_t i;
	void (*prev)(int);

	(void)state;
	{
		UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .out = "/dev/full");

		errno = 0;
		assert_null(uxdp_pcap_create("cap-devfull", &o));
		assert_int_equal(errno, ENOSPC);
		assert_non_null(strstr(uxdp_errmsg(), "/dev/full"));
		assert_non_null(strstr(uxdp_errmsg(), "No space left"));
		assert_null(uxdp_dev_get_by_name("cap-devfull"));
	}

	src_init(&s, 64);
	dev = capture_dev("cap-fsize", f, 0);
	assert_int_equal(uxdp_dev_up(dev), 0);
	/* Writes past 100 KB fail with EFBIG instead of killing us. */
	prev = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 100000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (i = 0; i < 200; i++) {
		struct uxdp_frame *fr = src_frame(&s, 1514, i);

		assert_int_equal(uxdp_dev_xmit(dev, 1, &fr, 0), 1);
	}
	assert_int_equal(uxdp_pcap_flush(dev), -EIO);
	assert_non_null(strstr(uxdp_errmsg(), "File too large"));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_true(st.capture_errors > 0);
	assert_true(st.captured < 200);
	assert_int_equal(st.captured + st.capture_errors, 200);
	assert_non_null(strstr(st.capture_error, "write: File too large"));
	assert_int_equal(uxdp_dev_txq_stats(dev, 0, &ts), 0);
	assert_int_equal(ts.packets, 200);
	/* Once broken, frames are counted and not written. */
	{
		struct uxdp_frame *fr = src_frame(&s, 64, 0);

		assert_int_equal(uxdp_dev_xmit(dev, 1, &fr, 0), 1);
	}
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.captured + st.capture_errors, 201);
	assert_int_equal(uxdp_dev_down(dev), 0);
	uxdp_dev_destroy(dev);
	assert_true(file_size(f) <= 100000);
	src_fini(&s);
}

/* ---- broken files -------------------------------------------------------- */

/* uxdp_pcap_create(in=@path) fails with @err and a message with @why. */
static void bad_create(const char *path, int err, const char *why)
{
	UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .in = path);

	errno = 0;
	if (uxdp_pcap_create("bad", &o))
		fail_msg("%s: accepted", path);
	if (errno != err)
		fail_msg("%s: errno %d (%s), want %d", path, errno,
			 strerror(errno), err);
	if (!strstr(uxdp_errmsg(), why))
		fail_msg("%s: message '%s' lacks '%s'", path, uxdp_errmsg(),
			 why);
	/* Nothing left behind: the name is free again. */
	assert_null(uxdp_dev_get_by_name("bad"));
}

static void test_bad_files_at_create(void **state)
{
	static const struct rec recs[] = { { 64, 64 }, { 64, 64 } };
	const char *ok = t_path("ok.pcap"), *f = t_path("bad.pcap");
	unsigned char buf[256];
	size_t n;
	FILE *fp;

	(void)state;
	write_pcap(ok, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, recs, 2);
	bad_create(t_path("missing.pcap"), ENOENT, "No such file");
	bad_create(t_dir, EISDIR, "a directory");
	write_bytes(f, "", 0);
	bad_create(f, EINVAL, "an empty file");
	write_bytes(f, "hello, this is not a capture file\n", 34);
	bad_create(f, EINVAL, "not a valid pcap or pcapng file "
		   "(libpcap: unknown file format)");
	/* A header cut short, at two places. */
	fp = fopen(ok, "rb");
	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	assert_true(n > 24);
	write_bytes(f, buf, 10);
	bad_create(f, EINVAL, "truncated");
	write_bytes(f, buf, 2);
	bad_create(f, EINVAL, "truncated");
	/* Another link type: raw IP. */
	write_pcap(f, DLT_RAW, PCAP_TSTAMP_PRECISION_MICRO, recs, 2);
	bad_create(f, EINVAL, "link type RAW");
	write_pcap(f, DLT_NULL, PCAP_TSTAMP_PRECISION_MICRO, recs, 2);
	bad_create(f, EINVAL, "not Ethernet");
	/* The out file is the in file: refused before truncating it. */
	{
		UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .in = ok, .out = ok);
		size_t sz = file_size(ok);

		errno = 0;
		assert_null(uxdp_pcap_create("bad", &o));
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(uxdp_errmsg(),
				       "the file being replayed"));
		assert_int_equal(file_size(ok), sz);
		o.out = t_path("no/such/dir.pcap");
		errno = 0;
		assert_null(uxdp_pcap_create("bad", &o));
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(uxdp_errmsg(), "no/such/dir.pcap"));
	}
}

/* A file that is fine at create and broken further in: the replay ends
 * at the broken record with a counted error, and is done. */
static void bad_replay(const struct raw *r, uint32_t good, const char *why)
{
	const char *f = t_path("bad-rec.pcap");
	static const struct rec recs[] = { { 64, 64 }, { 65, 65 },
					   { 66, 66 } };
	struct uxdp_pcap_stats st;
	struct uxdp_dev *dev;
	struct chk c;

	write_bytes(f, r->b, r->n);
	dev = replay_dev("bad-rec", f, 3, 0, 0);
	chk_attach(dev, &c, recs, 3, UXDP_DROP);
	assert_int_equal(uxdp_dev_up(dev), 0);
	poll_until_done(dev, 64);
	chk_ok(&c, good);
	assert_int_equal(uxdp_pcap_stats(dev, &st), 0);
	assert_int_equal(st.replayed, good);
	assert_int_equal(st.read_errors, 1);
	assert_int_equal(st.passes, 0);
	if (!strstr(st.replay_error, why) || !strstr(st.replay_error, f))
		fail_msg("replay_error '%s' lacks '%s'", st.replay_error, why);
	audit_clean(dev, 1);
	uxdp_dev_destroy(dev);
}

static void test_bad_files_at_replay(void **state)
{
	struct raw r = { 0 };
	size_t whole;

	(void)state;
	raw_pcap_hdr(&r, 65535, DLT_EN10MB);
	raw_pcap_rec(&r, 64, 64, 0);
	raw_pcap_rec(&r, 65, 65, 1);
	whole = r.n;
	raw_pcap_rec(&r, 66, 66, 2);
	/* The third record's data cut short. */
	r.n -= 10;
	bad_replay(&r, 2, "truncated dump file");
	/* Its header cut short. */
	r.n = whole + 7;
	bad_replay(&r, 2, "header bytes");
	/* A record claiming 2 GB. */
	r.n = whole;
	raw_u32(&r, 1700000000);
	raw_u32(&r, 0);
	raw_u32(&r, 0x7fffffff);
	raw_u32(&r, 0x7fffffff);
	raw_bytes(&r, "abcdefgh", 8);
	bad_replay(&r, 2, "invalid packet capture length");
	/* The first record already broken. */
	r.n = 24;
	raw_u32(&r, 1700000000);
	raw_u32(&r, 0);
	raw_u32(&r, 300000);
	raw_u32(&r, 300000);
	bad_replay(&r, 0, "invalid packet capture length");
}

/* ---- port strings and the API's edges ------------------------------------ */

static void bad_port(const char *port, int err, const char *why)
{
	errno = 0;
	if (uxdp_dev_open(port, NULL))
		fail_msg("'%s' accepted", port);
	if (errno != err)
		fail_msg("'%s': errno %d, want %d (%s)", port, errno, err,
			 uxdp_errmsg());
	if (!strstr(uxdp_errmsg(), why))
		fail_msg("'%s': message '%s' lacks '%s'", port, uxdp_errmsg(),
			 why);
}

static void test_ports(void **state)
{
	static const struct rec recs[] = { { 64, 64 } };
	const char *f = t_path("port.pcap");
	struct uxdp_pcap_stats st;
	struct uxdp_dev *a, *b, *n;
	char port[300];
	const char *usage;

	(void)state;
	write_pcap(f, DLT_EN10MB, PCAP_TSTAMP_PRECISION_MICRO, recs, 1);
	usage = uxdp_port_usage("pcap");
	assert_non_null(usage);
	assert_non_null(strstr(usage, "loop="));
	assert_non_null(strstr(usage, "out="));

	/* Names picked: the first free pcapN, then the next. */
	snprintf(port, sizeof(port), "pcap:%s", f);
	a = uxdp_dev_open(port, NULL);
	assert_non_null(a);
	b = uxdp_dev_open(port, NULL);
	assert_non_null(b);
	assert_int_equal(strncmp(uxdp_dev_name(a), "pcap", 4), 0);
	assert_int_equal(strncmp(uxdp_dev_name(b), "pcap", 4), 0);
	assert_string_not_equal(uxdp_dev_name(a), uxdp_dev_name(b));
	uxdp_dev_destroy(b);
	n = uxdp_dev_open(port, "named");
	assert_non_null(n);
	assert_string_equal(uxdp_dev_name(n), "named");
	errno = 0;
	assert_null(uxdp_dev_open(port, "named"));
	assert_int_equal(errno, EEXIST);
	uxdp_dev_destroy(n);

	/* loop=forever: passes keep coming. */
	snprintf(port, sizeof(port), "pcap:%s,loop=forever,pps=0", f);
	b = uxdp_dev_open(port, "forever");
	assert_non_null(b);
	assert_int_equal(uxdp_dev_up(b), 0);
	for (int i = 0; i < 50; i++)
		assert_true(uxdp_dev_poll(b, 0, 4) >= 0);
	assert_false(uxdp_pcap_done(b));
	assert_int_equal(uxdp_pcap_stats(b, &st), 0);
	assert_true(st.passes >= 40);
	assert_int_equal(st.replayed, st.records);
	audit_clean(b, 1);
	uxdp_dev_destroy(b);
	uxdp_dev_destroy(a);

	bad_port("pcap:", EINVAL, "give a file to replay");
	bad_port("pcap:,out=", EINVAL, "out= needs a file name");
	snprintf(port, sizeof(port), "pcap:%s,bogus=1", f);
	bad_port(port, EINVAL, "unknown parameter 'bogus'");
	snprintf(port, sizeof(port), "pcap:%s,loop=abc", f);
	bad_port(port, EINVAL, "loop=abc");
	snprintf(port, sizeof(port), "pcap:%s,pps=-1", f);
	bad_port(port, EINVAL, "pps=-1");
	snprintf(port, sizeof(port), "pcap:%s,snaplen=0", f);
	bad_port(port, EINVAL, "snaplen=0");
	snprintf(port, sizeof(port), "pcap:%s,snaplen=262145", f);
	bad_port(port, EINVAL, "snaplen=262145");
	snprintf(port, sizeof(port), "pcap:%s,frames=0", f);
	bad_port(port, EINVAL, "frames=0");
	snprintf(port, sizeof(port), "pcap:%s,frames=2M", f);
	bad_port(port, EINVAL, "frames=2M");
	bad_port("pcap:/no/such/file.pcap", ENOENT,
		 "/no/such/file.pcap: No such file or directory");
}

static void test_api_edges(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_pcap_opts, o);
	struct uxdp_pcap_stats st;
	struct uxdp_dev *null_dev;

	(void)state;
	errno = 0;
	assert_null(uxdp_pcap_create("edge", NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "nothing to do"));
	o.in = "";
	assert_null(uxdp_pcap_create("edge", &o));
	assert_non_null(strstr(uxdp_errmsg(), "empty file name"));
	o.in = NULL;
	o.out = t_path("edge.pcap");
	o.snaplen = UXDP_PCAP_MAX_SNAPLEN + 1;
	assert_null(uxdp_pcap_create("edge", &o));
	assert_non_null(strstr(uxdp_errmsg(), "snaplen"));
	o.snaplen = 0;
	o.rx_frames = (1U << 20) + 1;
	assert_null(uxdp_pcap_create("edge", &o));
	assert_non_null(strstr(uxdp_errmsg(), "rx_frames"));
	o.rx_frames = 0;
	errno = 0;
	assert_null(uxdp_pcap_create("a-name-far-too-long", &o));
	assert_int_equal(errno, EINVAL);

	/* Not a pcap device. */
	null_dev = uxdp_null_create("edge-null", NULL);
	assert_non_null(null_dev);
	assert_false(uxdp_pcap_done(null_dev));
	assert_int_equal(uxdp_pcap_done_fd(null_dev), -EINVAL);
	assert_int_equal(uxdp_pcap_stats(null_dev, &st), -EINVAL);
	assert_int_equal(uxdp_pcap_flush(null_dev), -EINVAL);
	assert_false(uxdp_pcap_done(NULL));
	assert_int_equal(uxdp_pcap_stats(NULL, &st), -EINVAL);
	uxdp_dev_destroy(null_dev);
}

/* ---- set-up -------------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	snprintf(t_dir, sizeof(t_dir), "/tmp/uxdp-pcap-XXXXXX");
	return mkdtemp(t_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_sizes),
		cmocka_unit_test(test_replay_loop),
		cmocka_unit_test(test_replay_nothing_to_replay),
		cmocka_unit_test(test_replay_formats),
		cmocka_unit_test(test_replay_pipe),
		cmocka_unit_test(test_replay_paced),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_capture_tshark),
		cmocka_unit_test(test_replay_tx_to_capture),
		cmocka_unit_test(test_replay_redirect_threaded),
		cmocka_unit_test(test_capture_threads),
		cmocka_unit_test(test_capture_write_error),
		cmocka_unit_test(test_bad_files_at_create),
		cmocka_unit_test(test_bad_files_at_replay),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_api_edges),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
