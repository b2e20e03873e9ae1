/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz the pcap driver's replay with hostile capture files: a file is
 * untrusted input (a tool replays whatever it is given).
 *
 * Input: the bytes of the file, as they are (pcap, pcapng, or anything).
 * They go into a memfd, opened by path (/proc/self/fd/N) as a user's file
 * would be. Inputs whose size is a multiple of 3 are replayed twice
 * (loop=2), the others once; the poll budget is 1 + size % 64; the device
 * has 4 receive buffers, so they are recycled all the time.
 *
 * The reference is libpcap reading the same file on its own: the records
 * it returns and whether it ends with an error.
 *
 * Checks: uxdp_pcap_create() succeeds exactly when libpcap opens the file
 * and its link type is Ethernet, and otherwise fails with an errno and a
 * message. Polling ends (done) within a bounded number of polls. A program
 * compares every byte of every packet with the next replayable reference
 * record (14..UXDP_PCAP_MAX_LEN bytes captured), pass after pass, so the
 * order, lengths and contents are exact. The counters agree: records =
 * replayed + too_long + too_short, replayed = what the program saw = the
 * queue's packets; a file libpcap reads to its end gives every pass
 * (loop times the replayable records, or one pass of none), one with a
 * broken record gives the records before it, read_errors 1, a message,
 * and no completed pass. uxdp_dev_audit() is clean with nothing in flight.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"

struct ref {
	uint32_t n;		/* records */
	uint32_t cap;
	uint32_t *caplen;
	size_t *off;		/* where each record's bytes are in data */
	unsigned char *data;
	size_t len, size;
	bool error;		/* ended with an error, not at EOF */
};

static void ref_add(struct ref *r, const struct pcap_pkthdr *h,
		    const u_char *pkt)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->caplen = realloc(r->caplen, r->cap * sizeof(*r->caplen));
		r->off = realloc(r->off, r->cap * sizeof(*r->off));
		FZ_CHECK(r->caplen && r->off, "out of memory");
	}
	/* Allocated from the first record on, even of 0 bytes: the
	 * program compares against data + off. */
	while (!r->data || r->len + h->caplen > r->size) {
		r->size = r->size ? 2 * r->size : 4096;
		r->data = realloc(r->data, r->size);
		FZ_CHECK(r->data, "out of memory");
	}
	r->caplen[r->n] = h->caplen;
	r->off[r->n] = r->len;
	memcpy(r->data + r->len, pkt, h->caplen);
	r->len += h->caplen;
	r->n++;
}

static void ref_free(struct ref *r)
{
	free(r->caplen);
	free(r->off);
	free(r->data);
}

static bool replayable(uint32_t caplen)
{
	return caplen >= 14 && caplen <= UXDP_PCAP_MAX_LEN;
}

/* The program: every packet against the next replayable record. */
struct seen {
	const struct ref *ref;
	uint32_t pos;
	uint64_t n;
	uint64_t bad;
	uint64_t sum;
};

static uint32_t check_prog(struct uxdp_buff *ctx, void *priv)
{
	struct seen *s = priv;
	const struct ref *r = s->ref;
	uint32_t len = uxdp_buff_len(ctx), k;
	const unsigned char *d = ctx->data;

	for (k = 0; k < r->n && !replayable(r->caplen[s->pos]); k++)
		s->pos = (s->pos + 1) % r->n;
	if (k == r->n || len != r->caplen[s->pos] ||
	    memcmp(d, r->data + r->off[s->pos], len))
		s->bad++;
	/* Every byte once more, on its own: ASan sees a short buffer. */
	for (k = 0; k < len; k++)
		s->sum += d[k];
	s->pos = r->n ? (s->pos + 1) % r->n : 0;
	s->n++;
	return s->n & 1 ? UXDP_DROP : UXDP_ABORTED;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint32_t loops = size % 3 ? 1 : 2;
	const int budget = 1 + (int)(size % 64);
	char path[64], errbuf[PCAP_ERRBUF_SIZE];
	struct ref ref = { 0 };
	struct seen seen = { .ref = &ref };
	struct uxdp_pcap_stats st;
	struct uxdp_rxq_stats rs;
	struct uxdp_dev_audit au;
	struct pcap_pkthdr *h;
	struct uxdp_prog *prog;
	struct uxdp_dev *dev;
	const u_char *pkt;
	uint64_t ok = 0, polls, max_polls;
	bool expect;
	pcap_t *p;
	int fd, rc;

	fd = memfd_create("fuzz.pcap", MFD_CLOEXEC);
	FZ_CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	FZ_CHECK(write(fd, data, size) == (ssize_t)size, "write: %s",
		 strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	/* The reference. */
	p = pcap_open_offline_with_tstamp_precision(path,
			PCAP_TSTAMP_PRECISION_NANO, errbuf);
	expect = p && pcap_datalink(p) == DLT_EN10MB;
	if (expect) {
		while ((rc = pcap_next_ex(p, &h, &pkt)) == 1)
			ref_add(&ref, h, pkt);
		ref.error = rc != PCAP_ERROR_BREAK;
	}
	if (p)
		pcap_close(p);

	{
		UXDP_DECLARE_OPTS(uxdp_pcap_opts, o, .in = path,
				  .loops = loops, .rx_frames = 4);

		errno = 0;
		dev = uxdp_pcap_create("fz-pcap", &o);
	}
	if (!expect) {
		FZ_CHECK(!dev, "a file libpcap refuses (or not Ethernet) was "
			 "accepted");
		FZ_CHECK(errno > 0 && *uxdp_errmsg(), "errno %d, message '%s'",
			 errno, uxdp_errmsg());
		goto out;
	}
	FZ_CHECK(dev, "a file libpcap reads was refused: %s", uxdp_errmsg());
	prog = uxdp_prog_create("check", check_prog, &seen);
	FZ_CHECK(prog, "prog");
	FZ_CHECK(!uxdp_dev_attach_prog(dev, 0, prog), "attach");
	uxdp_prog_put(prog);
	FZ_CHECK(!uxdp_dev_up(dev), "up: %s", uxdp_errmsg());

	/* Each poll reads one record at least, or ends the replay. */
	max_polls = (uint64_t)(ref.n + 2) * loops + 2;
	for (polls = 0; polls < max_polls && !uxdp_pcap_done(dev); polls++) {
		rc = uxdp_dev_poll(dev, 0, budget);
		FZ_CHECK(rc >= 0 && rc <= budget, "poll: %d", rc);
	}
	FZ_CHECK(uxdp_pcap_done(dev), "not done after %lu polls",
		 (unsigned long)polls);

	FZ_CHECK(!uxdp_pcap_stats(dev, &st), "stats");
	FZ_CHECK(st.records == st.replayed + st.too_long + st.too_short,
		 "records %lu != replayed %lu + too_long %lu + too_short %lu",
		 (unsigned long)st.records, (unsigned long)st.replayed,
		 (unsigned long)st.too_long, (unsigned long)st.too_short);
	FZ_CHECK(!seen.bad, "%lu packets differ from libpcap's records",
		 (unsigned long)seen.bad);
	FZ_CHECK(seen.n == st.replayed, "program saw %lu, replayed %lu",
		 (unsigned long)seen.n, (unsigned long)st.replayed);
	FZ_CHECK(!uxdp_dev_rxq_stats(dev, 0, &rs) && rs.packets == st.replayed,
		 "queue packets %lu, replayed %lu", (unsigned long)rs.packets,
		 (unsigned long)st.replayed);
	for (uint32_t i = 0; i < ref.n; i++)
		ok += replayable(ref.caplen[i]);
	if (ref.error) {
		FZ_CHECK(st.read_errors == 1 && st.replay_error[0] &&
			 st.passes == 0, "a broken file: read_errors %lu, "
			 "passes %lu, '%s'", (unsigned long)st.read_errors,
			 (unsigned long)st.passes, st.replay_error);
		FZ_CHECK(st.records == ref.n && st.replayed == ok,
			 "records %lu/%u, replayed %lu/%lu before the error",
			 (unsigned long)st.records, ref.n,
			 (unsigned long)st.replayed, (unsigned long)ok);
	} else {
		uint64_t passes = ok ? loops : 1;

		FZ_CHECK(st.read_errors == 0 && !st.replay_error[0],
			 "a sound file: '%s'", st.replay_error);
		FZ_CHECK(st.passes == passes && st.records == ref.n * passes &&
			 st.replayed == ok * passes,
			 "passes %lu/%lu, records %lu/%lu, replayed %lu/%lu",
			 (unsigned long)st.passes, (unsigned long)passes,
			 (unsigned long)st.records,
			 (unsigned long)(ref.n * passes),
			 (unsigned long)st.replayed,
			 (unsigned long)(ok * passes));
	}
	FZ_CHECK(uxdp_dev_audit(dev, &au) == 0 && au.in_flight == 0 &&
		 au.pools == 1, "audit: %u misplaced, %u in flight",
		 au.misplaced, au.in_flight);
	uxdp_dev_destroy(dev);
out:
	ref_free(&ref);
	close(fd);
	return 0;
}
