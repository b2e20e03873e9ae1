/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcap: replay a capture file on receive, write one on transmit
 * (include/uxdp/pcap.h has the user's side).
 *
 * Files are read and written with libpcap, which knows every variant of
 * the formats (byte orders, micro/nanosecond pcap, pcapng) and the limits
 * that keep a hostile file from making it allocate without bound. Without
 * libpcap at build time (no UXDP_HAVE_PCAP) this file still defines the
 * public functions, failing with EOPNOTSUPP, so libuxdp exports the same
 * symbols however it was built.
 *
 * Replay follows null.c: a pool of the device's own over a UMEM, buffers
 * allocated in batches from it by the polling thread (which owns the
 * pool), one uxdp_rx_run_batch() per batch, a timerfd for a paced replay.
 * The pcap_t is the poller's alone: only poll, create and destroy (after
 * the device's grace period) touch it. Each pass over the file has its
 * own pcap_t, on a fresh descriptor for the file rewound to its start: a
 * pcapng reader keeps per-interface state that a plain seek would not
 * reset.
 *
 * Capture writes through a libpcap dumper on a stdio stream of ours (so
 * open errors keep their errno) under a mutex shared by every transmitting
 * thread; stdio's buffer makes it one write(2) per 64 KiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/driver.h>
#include <uxdp/pcap.h>
#include <uxdp/pool.h>
#include <uxdp/umem.h>

#ifdef UXDP_HAVE_PCAP

#include <pcap/pcap.h>

#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/* File-local names start pd_ ("pcap device"): pcap_ is libpcap's. */

/* 4 KiB chunks: a 1514-byte frame does not fit the 1472 bytes a 2 KiB
 * chunk leaves after the XDP headroom and the frame tailroom. */
#define PCAP_CHUNK		4096
#define PCAP_ETH_HLEN		14
/* The out file's stdio buffer, and how stale it may get under traffic. */
#define PCAP_OUT_BUF		(64 * 1024)
#define PCAP_FLUSH_NS		100000000ULL

_Static_assert(UXDP_PCAP_MAX_LEN == PCAP_CHUNK - UXDP_PACKET_HEADROOM -
	       UXDP_FRAME_TAILROOM, "UXDP_PCAP_MAX_LEN is the chunk's room");

struct pd_priv {
	/* ---- Replay: set at create, then the polling thread's. */
	struct uxdp_umem *umem;
	struct uxdp_pool *pool;		/* NULL: nothing to replay */
	pcap_t *rd;			/* this pass; NULL once ended */
	int in_fd;			/* the file, rewound for each pass */
	char *in_path;
	uint64_t loops;			/* UXDP_PCAP_LOOP_FOREVER: no end */
	uint64_t pps;			/* 0: unpaced */
	uint64_t pass_records;		/* records read in this pass */
	uint64_t pass_replayed;		/* packets replayed in this pass */
	int done_fd;			/* eventfd, written once at the end */
	/* Written by the poller, read by rx_pending and anyone (atomics). */
	uint32_t eof;			/* ended; done at the next poll */
	uint32_t done;			/* release/acquire, see finish */
	struct uxdp_pacer pace;		/* pps; its timer is rx_fd */

	/* ---- Capture: under tx_lock. */
	pthread_mutex_t tx_lock;
	pcap_t *dead;			/* the dumper's link type and snaplen */
	pcap_dumper_t *dumper;		/* NULL: frames are counted, dropped */
	FILE *out_fp;
	char *out_path;
	uint32_t snaplen;
	bool write_failed;
	uint64_t last_flush_ns;		/* CLOCK_REALTIME */

	/* ---- Counters: one writer each (the poller, or whoever holds
	 * tx_lock), read by uxdp_pcap_stats() with atomic loads. The error
	 * strings are under err_lock. */
	struct uxdp_pcap_stats st;
	pthread_mutex_t err_lock;
};

static inline struct pd_priv *pd_priv(const struct uxdp_dev *dev)
{
	return uxdp_dev_priv(dev);
}

/* A counter with one writer at a time, read concurrently by stats. */
static inline void cnt_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Keep the first error of a kind for uxdp_pcap_stats(). */
static void note_error(struct pd_priv *priv, char *slot, const char *msg)
{
	pthread_mutex_lock(&priv->err_lock);
	if (!slot[0])
		snprintf(slot, sizeof(priv->st.replay_error), "%s", msg);
	pthread_mutex_unlock(&priv->err_lock);
}

/* ---- replay -------------------------------------------------------------- */

/* Open the next pass: a pcap_t on a new descriptor of the input. */
static int replay_open_pass(struct uxdp_dev *dev, struct pd_priv *priv)
{
	const char *name = uxdp_dev_name(dev), *path = priv->in_path;
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	const char *dlt_name;
	pcap_t *rd;
	FILE *fp;
	int fd, dlt, err;

	fd = fcntl(priv->in_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return uxdp_set_error(errno, "pcap %s: %s: dup: %s", name, path,
				      strerror(errno));
	fp = fdopen(fd, "rb");
	if (!fp) {
		err = errno;
		close(fd);
		return uxdp_set_error(err, "pcap %s: %s: %s", name, path,
				      strerror(err));
	}
	rd = pcap_fopen_offline_with_tstamp_precision(fp,
			PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!rd) {
		/* libpcap leaves the stream to us when it fails. */
		err = ferror(fp) ? EIO : EINVAL;
		fclose(fp);
		if (err == EIO)
			return uxdp_set_error(EIO, "pcap %s: %s: cannot read "
					      "it (libpcap: %s)", name, path,
					      errbuf);
		return uxdp_set_error(EINVAL, "pcap %s: %s: not a valid pcap "
				      "or pcapng file (libpcap: %s)", name,
				      path, errbuf);
	}
	dlt = pcap_datalink(rd);
	if (dlt != DLT_EN10MB) {
		dlt_name = pcap_datalink_val_to_name(dlt);
		pcap_close(rd);
		return uxdp_set_error(EINVAL, "pcap %s: %s: link type %s (%d), "
				      "not Ethernet (EN10MB): only Ethernet "
				      "captures can be replayed", name, path,
				      dlt_name ? dlt_name : "unknown", dlt);
	}
	priv->rd = rd;
	priv->pass_records = 0;
	priv->pass_replayed = 0;
	return 0;
}

static void replay_close(struct pd_priv *priv)
{
	if (priv->rd)
		pcap_close(priv->rd);
	priv->rd = NULL;
}

/* A read error ends the replay: counted, and said in replay_error. */
static void replay_fail(struct pd_priv *priv, const char *msg)
{
	note_error(priv, priv->st.replay_error, msg);
	cnt_add(&priv->st.read_errors, 1);
	replay_close(priv);
}

/*
 * The next record, over passes. Returns 1 with *@hdr and *@pkt (valid
 * until the next call), 0 when the replay has ended, -1 when a broken
 * record ended it.
 */
static int replay_next(struct uxdp_dev *dev, struct pd_priv *priv,
		       struct pcap_pkthdr **hdr, const u_char **pkt)
{
	char msg[sizeof(priv->st.replay_error)];
	int r;

	for (;;) {
		if (!priv->rd)
			return 0;
		r = pcap_next_ex(priv->rd, hdr, pkt);
		if (r == 1) {
			priv->pass_records++;
			return 1;
		}
		if (r != PCAP_ERROR_BREAK)
			break;
		/* The end of the file: a pass done. */
		cnt_add(&priv->st.passes, 1);
		if (!priv->pass_replayed ||
		    (priv->loops != UXDP_PCAP_LOOP_FOREVER &&
		     priv->st.passes >= priv->loops)) {
			replay_close(priv);
			return 0;
		}
		replay_close(priv);
		if (lseek(priv->in_fd, 0, SEEK_SET) < 0) {
			snprintf(msg, sizeof(msg), "pcap %s: %s: rewind: %s",
				 uxdp_dev_name(dev), priv->in_path,
				 strerror(errno));
			replay_fail(priv, msg);
			return -1;
		}
		if (replay_open_pass(dev, priv)) {
			/* The file changed under us. */
			replay_fail(priv, uxdp_errmsg());
			return -1;
		}
	}
	snprintf(msg, sizeof(msg), "pcap %s: %s: record %" PRIu64 " of pass %"
		 PRIu64 ": %s", uxdp_dev_name(dev), priv->in_path,
		 priv->pass_records + 1, priv->st.passes + 1,
		 r == PCAP_ERROR ? pcap_geterr(priv->rd) : "unexpected result");
	replay_fail(priv, msg);
	return -1;
}

/*
 * The replay is over: say so. The release store makes everything the
 * polls before wrote (the programs' state, the counters) visible to
 * whoever sees done with an acquire load (uxdp_pcap_done).
 */
static void replay_finish(struct pd_priv *priv)
{
	uint64_t one = 1;

	if (__atomic_load_n(&priv->done, __ATOMIC_RELAXED))
		return;
	uxdp_pacer_stop(&priv->pace);
	__atomic_store_n(&priv->done, 1, __ATOMIC_RELEASE);
	if (write(priv->done_fd, &one, sizeof(one)) < 0) {
		/* Only EAGAIN (a counter near overflow) is possible. */
	}
}

static int pd_poll(struct uxdp_dev *dev, uint32_t q, struct uxdp_xdp_cpu *ctx,
		   int budget)
{
	struct pd_priv *priv = pd_priv(dev);
	struct uxdp_buff *bufs[UXDP_NAPI_BUDGET];
	uint64_t allowed, reads = 0;
	bool end = false;
	int done = 0;

	(void)q;		/* one queue */
	if (!priv->pool || __atomic_load_n(&priv->done, __ATOMIC_RELAXED)) {
		uxdp_pacer_ack(&priv->pace);
		return 0;
	}
	if (__atomic_load_n(&priv->eof, __ATOMIC_RELAXED)) {
		/* The poll that replayed the last packets has ended, its
		 * frames flushed: now the replay is done. */
		replay_finish(priv);
		return 0;
	}
	allowed = MIN((uint64_t)budget, uxdp_pacer_due(&priv->pace, true));
	if (!allowed) {
		uxdp_pacer_ack(&priv->pace);
		return 0;
	}
	/* The dev layer made this thread the pool's owner (rx_pool). Reads
	 * are bounded by the budget too, so a file of records that are all
	 * skipped still returns to the poller now and then. */
	while ((uint64_t)done < allowed && reads < (uint64_t)budget && !end) {
		uint32_t want = (uint32_t)MIN(allowed - (uint64_t)done,
					      UXDP_NAPI_BUDGET), n, got = 0;
		uint64_t bytes = 0, trunc = 0, lng = 0, shrt = 0, nrec = 0;

		n = uxdp_pool_alloc_batch(priv->pool, bufs, want);
		if (!n)
			break;		/* every buffer is in flight */
		while (got < n && reads < (uint64_t)budget) {
			struct pcap_pkthdr *h;
			const u_char *pkt;

			if (replay_next(dev, priv, &h, &pkt) != 1) {
				end = true;
				break;
			}
			reads++;
			nrec++;
			/* caplen is what the file holds; libpcap checked
			 * it against its own buffer. Never cut, never pad. */
			if (h->caplen < PCAP_ETH_HLEN) {
				shrt++;
				continue;
			}
			if (h->caplen > UXDP_PCAP_MAX_LEN) {
				lng++;
				continue;
			}
			if (h->caplen < h->len)
				trunc++;
			uxdp_buff_set_size(bufs[got], h->caplen);
			memcpy(bufs[got]->data, pkt, h->caplen);
			bytes += h->caplen;
			got++;
			priv->pass_replayed++;
		}
		if (got < n)
			uxdp_pool_free_batch(priv->pool, bufs + got, n - got);
		/* Counted before the program runs, as null.c does. */
		cnt_add(&priv->st.records, nrec);
		cnt_add(&priv->st.replayed, got);
		cnt_add(&priv->st.replayed_bytes, bytes);
		cnt_add(&priv->st.too_long, lng);
		cnt_add(&priv->st.too_short, shrt);
		cnt_add(&priv->st.truncated, trunc);
		uxdp_pacer_sent(&priv->pace, got);
		if (got)
			uxdp_rx_run_batch(ctx, bufs, got);
		done += (int)got;
	}
	if (end) {
		/* A poll that replayed nothing has nothing to flush. */
		if (!done)
			replay_finish(priv);
		else
			__atomic_store_n(&priv->eof, 1, __ATOMIC_RELAXED);
	}
	return done;
}

/*
 * Whether a poll would do something: only shared state (the flags, the
 * clock). A replay whose every buffer is in flight still says yes, as
 * null.c's generator does.
 */
static bool pd_rx_pending(struct uxdp_dev *dev, uint32_t q)
{
	struct pd_priv *priv = pd_priv(dev);

	(void)q;
	if (!priv->pool || __atomic_load_n(&priv->done, __ATOMIC_RELAXED))
		return false;
	if (__atomic_load_n(&priv->eof, __ATOMIC_RELAXED))
		return true;
	return uxdp_pacer_due(&priv->pace, false) > 0;
}

static int pd_rx_fd(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return uxdp_pacer_fd(&pd_priv(dev)->pace);
}

static struct uxdp_pool *pd_rx_pool(struct uxdp_dev *dev, uint32_t q)
{
	(void)q;
	return pd_priv(dev)->pool;
}

/* ---- capture ------------------------------------------------------------- */

/* The out file failed: keep why, write nothing more. Under tx_lock. */
static void capture_fail(struct uxdp_dev *dev, struct pd_priv *priv,
			 int err, const char *what)
{
	char msg[sizeof(priv->st.capture_error)];

	priv->write_failed = true;
	snprintf(msg, sizeof(msg), "pcap %s: %s: %s: %s", uxdp_dev_name(dev),
		 priv->out_path, what, strerror(err));
	note_error(priv, priv->st.capture_error, msg);
}

/* Write out what stdio buffered. Under tx_lock. Returns 0 or -EIO. */
static int capture_flush(struct uxdp_dev *dev, struct pd_priv *priv)
{
	if (!priv->dumper)
		return 0;
	if (priv->write_failed)
		return -EIO;
	if (pcap_dump_flush(priv->dumper)) {
		capture_fail(dev, priv, errno, "write");
		return -EIO;
	}
	priv->last_flush_ns = clock_ns(CLOCK_REALTIME);
	return 0;
}

/* One record per frame. Under tx_lock. */
static void capture_write(struct uxdp_dev *dev, struct pd_priv *priv,
			  int n, struct uxdp_frame **frames)
{
	uint64_t ns = 0, bytes = 0, snapped = 0;
	struct pcap_pkthdr h;
	int i;

	if (priv->write_failed) {
		cnt_add(&priv->st.capture_errors, (uint64_t)n);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct uxdp_frame *f = frames[i];

		ns = clock_ns(CLOCK_REALTIME);
		/* tv_usec holds nanoseconds: the dumper was opened with
		 * nanosecond precision (the file's magic says so). */
		h.ts.tv_sec = (time_t)(ns / 1000000000ULL);
		h.ts.tv_usec = (suseconds_t)(ns % 1000000000ULL);
		h.len = f->len;
		h.caplen = MIN(f->len, priv->snaplen);
		pcap_dump((u_char *)priv->dumper, &h, f->data);
		/* pcap_dump() reports nothing: the stream's error flag
		 * says whether this record (or the buffer it flushed)
		 * failed to go out. */
		if (ferror(priv->out_fp)) {
			capture_fail(dev, priv, errno, "write");
			cnt_add(&priv->st.capture_errors, (uint64_t)(n - i));
			break;
		}
		bytes += f->len;
		snapped += h.caplen < h.len;
	}
	cnt_add(&priv->st.captured, (uint64_t)i);
	cnt_add(&priv->st.captured_bytes, bytes);
	cnt_add(&priv->st.snapped, snapped);
	/* Under steady traffic the file lags by at most PCAP_FLUSH_NS (a
	 * clock stepped back flushes once, early). */
	if (n > 0 && !priv->write_failed &&
	    ns - priv->last_flush_ns >= PCAP_FLUSH_NS)
		capture_flush(dev, priv);
}

static int pd_xdp_xmit(struct uxdp_dev *dev, int n, struct uxdp_frame **frames,
		       uint32_t flags)
{
	struct pd_priv *priv = pd_priv(dev);
	uint64_t bytes = 0;
	int i;

	if (uxdp_unlikely(flags & ~UXDP_XMIT_FLAGS_MASK)) {
		uxdp_txq_count_refused(dev, 0, UXDP_TXQ_BAD_FLAGS, 1);
		return -EINVAL;
	}
	if (uxdp_unlikely(!uxdp_dev_is_up(dev))) {
		uxdp_txq_count_refused(dev, 0, UXDP_TXQ_DOWN, (uint32_t)n);
		return -ENETDOWN;
	}
	for (i = 0; i < n; i++)
		bytes += frames[i]->len;
	pthread_mutex_lock(&priv->tx_lock);
	uxdp_txq_count(dev, 0, (uint32_t)n, bytes);
	if (priv->dumper)
		capture_write(dev, priv, n, frames);
	pthread_mutex_unlock(&priv->tx_lock);
	/* Written (or counted) and completed: the frames go home. */
	uxdp_frame_return_bulk(frames, (uint32_t)n);
	return n;
}

/* ---- device ops ---------------------------------------------------------- */

/* Up: a paced replay starts its clock and its timer. */
static int pd_open(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_priv(dev);
	int err;

	if (__atomic_load_n(&priv->done, __ATOMIC_RELAXED))
		return 0;
	err = uxdp_pacer_start(&priv->pace);
	if (err)
		return uxdp_set_error(-err, "pcap %s: %s", uxdp_dev_name(dev),
				      uxdp_errmsg());
	return 0;
}

/* Down: no poll or transmit runs; stop the timer, write the file out. */
static void pd_stop(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_priv(dev);

	uxdp_pacer_stop(&priv->pace);
	pthread_mutex_lock(&priv->tx_lock);
	capture_flush(dev, priv);
	pthread_mutex_unlock(&priv->tx_lock);
}

/*
 * After the grace period: nobody polls or transmits. Buffers of ours may
 * still travel as frames elsewhere: the pool and its UMEM go when the last
 * one comes home.
 */
static void pd_destroy(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_priv(dev);

	/* The UMEM is the pool's (uxdp_rxq_pool_create): it goes with it. */
	if (priv->pool)
		uxdp_pool_retire(priv->pool, UXDP_POOL_RETIRE_UMEM);
	replay_close(priv);
	if (priv->in_fd >= 0)
		close(priv->in_fd);
	if (priv->dumper) {
		/* Errors here have nobody left to tell: uxdp_pcap_flush()
		 * or uxdp_dev_down() before destroy reports them. */
		capture_flush(dev, priv);
		pcap_dump_close(priv->dumper);	/* closes out_fp */
	}
	if (priv->dead)
		pcap_close(priv->dead);
	uxdp_pacer_fini(&priv->pace);
	if (priv->done_fd >= 0)
		close(priv->done_fd);
	free(priv->in_path);
	free(priv->out_path);
	pthread_mutex_destroy(&priv->tx_lock);
	pthread_mutex_destroy(&priv->err_lock);
}

static const struct uxdp_dev_ops pd_ops = {
	.kind = "pcap",
	.open = pd_open,
	.stop = pd_stop,
	.rx_pool = pd_rx_pool,
	.rx_fd = pd_rx_fd,
	.poll = pd_poll,
	.rx_pending = pd_rx_pending,
	.xdp_xmit = pd_xdp_xmit,
	.destroy = pd_destroy,
};

/* ---- create -------------------------------------------------------------- */

static int replay_setup_pool(struct uxdp_dev *dev, uint32_t frames)
{
	struct pd_priv *priv = pd_priv(dev);

	priv->pool = uxdp_rxq_pool_create(dev, 0, frames, PCAP_CHUNK);
	if (!priv->pool)
		return -errno;
	priv->umem = uxdp_pool_umem(priv->pool);
	return 0;
}

static int replay_setup(struct uxdp_dev *dev, const char *path,
			uint32_t frames)
{
	struct pd_priv *priv = pd_priv(dev);
	const char *name = uxdp_dev_name(dev);
	struct stat sb;
	int err;

	priv->in_path = strdup(path);
	if (!priv->in_path)
		return uxdp_set_error(ENOMEM, "pcap %s: out of memory", name);
	priv->in_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (priv->in_fd < 0)
		return uxdp_set_error(errno, "pcap %s: %s: %s", name, path,
				      strerror(errno));
	if (fstat(priv->in_fd, &sb))
		return uxdp_set_error(errno, "pcap %s: %s: %s", name, path,
				      strerror(errno));
	if (S_ISDIR(sb.st_mode))
		return uxdp_set_error(EISDIR, "pcap %s: %s: a directory, not a "
				      "pcap file", name, path);
	if (S_ISREG(sb.st_mode) && !sb.st_size)
		return uxdp_set_error(EINVAL, "pcap %s: %s: an empty file, "
				      "not a pcap file", name, path);
	if (priv->loops > 1 && lseek(priv->in_fd, 0, SEEK_CUR) < 0)
		return uxdp_set_error(ESPIPE, "pcap %s: %s: looping needs a "
				      "file that can be read again from the "
				      "start, not a pipe", name, path);
	err = replay_open_pass(dev, priv);
	if (err)
		return err;
	err = uxdp_pacer_init(&priv->pace, priv->pps, 1);
	if (err)
		return uxdp_set_error(-err, "pcap %s: %s", name, uxdp_errmsg());
	err = replay_setup_pool(dev, frames);
	if (err) {
		char msg[200];

		/* Copied first: uxdp_set_error() writes where it points. */
		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		return uxdp_set_error(-err, "pcap %s: receive buffers: %s",
				      name, msg);
	}
	return 0;
}

static int capture_setup(struct uxdp_dev *dev, const char *path)
{
	struct pd_priv *priv = pd_priv(dev);
	const char *name = uxdp_dev_name(dev);
	struct stat in_sb, out_sb;
	FILE *fp;

	/* Opening for writing truncates: refuse before, not after. */
	if (priv->in_fd >= 0 && !fstat(priv->in_fd, &in_sb) &&
	    !stat(path, &out_sb) && in_sb.st_dev == out_sb.st_dev &&
	    in_sb.st_ino == out_sb.st_ino)
		return uxdp_set_error(EINVAL, "pcap %s: out=%s is the file "
				      "being replayed", name, path);
	priv->out_path = strdup(path);
	if (!priv->out_path)
		return uxdp_set_error(ENOMEM, "pcap %s: out of memory", name);
	fp = fopen(path, "wbe");
	if (!fp)
		return uxdp_set_error(errno, "pcap %s: %s: %s", name, path,
				      strerror(errno));
	/* Before any I/O on the stream; on failure stdio's default stays. */
	if (setvbuf(fp, NULL, _IOFBF, PCAP_OUT_BUF)) {
		/* A smaller buffer only means more write(2)s. */
	}
	priv->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB,
			(int)priv->snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!priv->dead) {
		fclose(fp);
		return uxdp_set_error(ENOMEM, "pcap %s: out of memory", name);
	}
	/*
	 * Writes the file header into the stream's buffer. It fails only
	 * when that write fails, which a buffered 24 bytes cannot; libpcap
	 * (1.10) has closed the stream if it does.
	 */
	priv->dumper = pcap_dump_fopen(priv->dead, fp);
	if (!priv->dumper)
		return uxdp_set_error(EIO, "pcap %s: %s: %s", name, path,
				      pcap_geterr(priv->dead));
	priv->out_fp = fp;
	/* The header on disk now: a file that cannot be written fails the
	 * create (a full disk, /dev/full), not the first transmit. */
	if (pcap_dump_flush(priv->dumper))
		return uxdp_set_error(errno, "pcap %s: %s: write: %s", name,
				      path, strerror(errno));
	priv->last_flush_ns = clock_ns(CLOCK_REALTIME);
	return 0;
}

/* The options with their defaults, checked (@nm names the device in
 * messages): what the create makes and the port string's parse
 * (pd_port_parse) makes sure it would take. */
static int pd_cfg_get(const char *nm, const struct uxdp_pcap_opts *opts,
		      const char **in, const char **out, uint32_t *frames,
		      uint32_t *snaplen)
{
	*in = UXDP_OPTS_GET(opts, in, NULL);
	*out = UXDP_OPTS_GET(opts, out, NULL);
	*frames = UXDP_OPTS_GET(opts, rx_frames, UXDP_PCAP_DEFAULT_FRAMES);
	*snaplen = UXDP_OPTS_GET(opts, snaplen, UXDP_PCAP_MAX_SNAPLEN);
	if (!*in && !*out)
		return uxdp_set_error(EINVAL, "pcap %s: nothing to do: give a "
				      "file to replay (in) or to write (out)",
				      nm);
	if ((*in && !**in) || (*out && !**out))
		return uxdp_set_error(EINVAL, "pcap %s: an empty file name",
				      nm);
	if (*snaplen > UXDP_PCAP_MAX_SNAPLEN)
		return uxdp_set_error(EINVAL, "pcap %s: snaplen %u out of "
				      "range (1..%d)", nm, *snaplen,
				      UXDP_PCAP_MAX_SNAPLEN);
	if (*frames > (1U << 20))
		return uxdp_set_error(EINVAL, "pcap %s: rx_frames %u out of "
				      "range (1..2^20)", nm, *frames);
	return 0;
}

UXDP_API __attribute__((cold)) struct uxdp_dev *
uxdp_pcap_create(const char *name, const struct uxdp_pcap_opts *opts)
{
	const char *in, *out, *nm = name ? name : "";
	uint32_t frames, snaplen;
	struct pd_priv *priv;
	struct uxdp_dev *dev;
	int err;

	uxdp_clear_error();
	if (!UXDP_OPTS_VALID(opts, uxdp_pcap_opts)) {
		errno = EINVAL;
		return NULL;
	}
	err = pd_cfg_get(nm, opts, &in, &out, &frames, &snaplen);
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = uxdp_dev_alloc(name, &pd_ops, 1, 1, sizeof(struct pd_priv));
	if (!dev)
		return NULL;
	priv = pd_priv(dev);
	priv->in_fd = -1;
	pthread_mutex_init(&priv->tx_lock, NULL);
	pthread_mutex_init(&priv->err_lock, NULL);
	priv->loops = UXDP_OPTS_GET(opts, loops, 1);
	priv->pps = UXDP_OPTS_GET(opts, pps, 0);
	priv->snaplen = snaplen;
	priv->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (priv->done_fd < 0) {
		err = uxdp_set_error(errno, "pcap %s: eventfd: %s", nm,
				     strerror(errno));
		goto err;
	}
	if (in) {
		err = replay_setup(dev, in, frames);
		if (err)
			goto err;
	}
	if (out) {
		err = capture_setup(dev, out);
		if (err)
			goto err;
	}
	if (!in)
		replay_finish(priv);	/* nothing to replay: done already */
	return dev;
err:
	{
		char msg[UXDP_ERRMSG_MAX];

		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		uxdp_dev_destroy(dev);
		errno = -uxdp_set_error(-err, "%s", msg);
		return NULL;
	}
}

static struct pd_priv *pd_dev(struct uxdp_dev *dev)
{
	if (!dev || strcmp(uxdp_dev_kind(dev), "pcap"))
		return NULL;
	return pd_priv(dev);
}

UXDP_API bool uxdp_pcap_done(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_dev(dev);

	/* Pairs with the release in replay_finish(). */
	return priv && __atomic_load_n(&priv->done, __ATOMIC_ACQUIRE);
}

UXDP_API int uxdp_pcap_done_fd(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_dev(dev);

	return priv ? priv->done_fd : -EINVAL;
}

UXDP_API int uxdp_pcap_stats(struct uxdp_dev *dev, struct uxdp_pcap_stats *st)
{
	struct pd_priv *priv = pd_dev(dev);

	if (!priv || !st)
		return -EINVAL;
#define LD(f)	st->f = __atomic_load_n(&priv->st.f, __ATOMIC_RELAXED)
	LD(records);
	LD(replayed);
	LD(replayed_bytes);
	LD(passes);
	LD(too_long);
	LD(too_short);
	LD(truncated);
	LD(read_errors);
	LD(captured);
	LD(captured_bytes);
	LD(snapped);
	LD(capture_errors);
#undef LD
	pthread_mutex_lock(&priv->err_lock);
	memcpy(st->replay_error, priv->st.replay_error,
	       sizeof(st->replay_error));
	memcpy(st->capture_error, priv->st.capture_error,
	       sizeof(st->capture_error));
	pthread_mutex_unlock(&priv->err_lock);
	return 0;
}

UXDP_API int uxdp_pcap_flush(struct uxdp_dev *dev)
{
	struct pd_priv *priv = pd_dev(dev);
	int err;

	uxdp_clear_error();
	if (!priv)
		return uxdp_set_error(EINVAL, "pcap: not a pcap device");
	pthread_mutex_lock(&priv->tx_lock);
	err = capture_flush(dev, priv);
	pthread_mutex_unlock(&priv->tx_lock);
	if (err) {
		char msg[sizeof(priv->st.capture_error)];

		pthread_mutex_lock(&priv->err_lock);
		memcpy(msg, priv->st.capture_error, sizeof(msg));
		pthread_mutex_unlock(&priv->err_lock);
		return uxdp_set_error(EIO, "%s", msg);
	}
	return 0;
}

/* ---- pcap:IN[,loop=N|forever,pps=N,out=OUT,snaplen=N,frames=N] ----------- */

/* A port string made into what uxdp_pcap_create() takes. */
struct pd_port {
	const char *name;	/* NULL: the first free pcapN */
	struct uxdp_pcap_opts o;
};

/*
 * @port (and @name) into @pp, checked as the create will check it. No side
 * effects: check and open share it; whether the files can be read or
 * written is the open's to find out.
 */
static int pd_port_parse(const struct uxdp_port *port, const char *name,
			 struct pd_port *pp)
{
	static const char *const keys[] = {
		"loop", "pps", "out", "snaplen", "frames", NULL,
	};
	uint64_t loops, pps, snaplen, frames;
	const char *loop = uxdp_port_get(port, "loop");
	const char *in, *out;
	uint32_t f, sl;
	int err;

	memset(pp, 0, sizeof(*pp));
	pp->o.sz = sizeof(pp->o);
	pp->name = name;
	err = uxdp_port_check_keys(port, keys);
	if (!err && name)
		err = uxdp_port_check_name(port, "name", name);
	if (!err && loop && !strcmp(loop, "forever"))
		loops = UXDP_PCAP_LOOP_FOREVER;
	else if (!err)
		err = uxdp_port_get_u64(port, "loop", 1, 0,
					UXDP_PCAP_LOOP_FOREVER - 1, &loops);
	if (!err)
		err = uxdp_port_get_u64(port, "pps", 0, 0, 1000000000ULL, &pps);
	if (!err)
		err = uxdp_port_get_u64(port, "snaplen", 0, 1,
					UXDP_PCAP_MAX_SNAPLEN, &snaplen);
	if (!err)
		err = uxdp_port_get_u64(port, "frames", 0, 1, 1U << 20,
					&frames);
	if (err)
		return err;
	pp->o.in = port->arg[0] ? port->arg : NULL;
	pp->o.out = uxdp_port_get(port, "out");
	if (pp->o.out && !*pp->o.out)
		return uxdp_set_error(EINVAL, "port pcap:%.48s: out= needs a "
				      "file name", port->arg);
	if (!pp->o.in && !pp->o.out)
		return uxdp_set_error(EINVAL, "port pcap: give a file to "
				      "replay (pcap:FILE) or to write "
				      "(pcap:,out=FILE)");
	pp->o.loops = loops;
	pp->o.pps = pps;
	pp->o.snaplen = (uint32_t)snaplen;
	pp->o.rx_frames = (uint32_t)frames;
	err = pd_cfg_get(name ? name : "", &pp->o, &in, &out, &f, &sl);
	if (err)
		return uxdp_set_error(-err, "port pcap:%.48s: %s", port->arg,
				      uxdp_errmsg());
	return 0;
}

static int pd_port_check(const struct uxdp_port *port)
{
	struct pd_port pp;

	return pd_port_parse(port, NULL, &pp);
}

static struct uxdp_dev *pd_port_create(struct pd_port *pp)
{
	char auto_name[UXDP_IFNAMSIZ];
	struct uxdp_dev *dev;
	unsigned int i;

	if (pp->name)
		return uxdp_pcap_create(pp->name, &pp->o);
	/* A file name is no device name: take the first free pcapN. */
	for (i = 0; i < 1000; i++) {
		snprintf(auto_name, sizeof(auto_name), "pcap%u", i);
		if (uxdp_dev_get_by_name(auto_name))
			continue;
		dev = uxdp_pcap_create(auto_name, &pp->o);
		if (dev || errno != EEXIST)
			return dev;	/* EEXIST: taken meanwhile */
	}
	errno = -uxdp_set_error(EEXIST, "port pcap:%.48s: pcap0..pcap999 are "
				"all taken: give the device a name",
				pp->o.in ? pp->o.in : "");
	return NULL;
}

static struct uxdp_dev *pd_port_open(const struct uxdp_port *port,
				     const char *name)
{
	struct uxdp_dev *dev;
	struct pd_port pp;
	int err;

	err = pd_port_parse(port, name, &pp);
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = pd_port_create(&pp);
	/*
	 * pcap:out.pcap where out.pcap is not there is most often a capture
	 * asked for the way a replay is: say how to ask for one. Only
	 * without out=: with it, the capture is there already.
	 */
	if (!dev && errno == ENOENT && pp.o.in && !pp.o.out &&
	    access(pp.o.in, F_OK) && errno == ENOENT) {
		errno = -uxdp_set_error(ENOENT, "%s (pcap:FILE replays FILE; "
					"to capture, use pcap:,out=FILE)",
					uxdp_errmsg());
		return NULL;
	}
	return dev;
}

const struct uxdp_port_driver uxdp_pcap_port_driver = {
	.kind = "pcap",
	.usage = "pcap:IN[,loop=N|forever][,pps=N][,out=OUT][,snaplen=N]"
		 "[,frames=N]  replay IN, write transmitted frames to OUT "
		 "(pcap:,out=OUT: capture only)",
	.open = pd_port_open,
	.check = pd_port_check,
};

#else /* !UXDP_HAVE_PCAP */

/* Built without libpcap: the same exports, refusing. */

UXDP_API struct uxdp_dev *uxdp_pcap_create(const char *name,
					   const struct uxdp_pcap_opts *opts)
{
	(void)opts;
	uxdp_clear_error();
	errno = -uxdp_set_error(EOPNOTSUPP, "pcap %s: uxdp was built without "
				"libpcap (install libpcap-dev and rebuild)",
				name ? name : "");
	return NULL;
}

UXDP_API bool uxdp_pcap_done(struct uxdp_dev *dev)
{
	(void)dev;
	return false;
}

UXDP_API int uxdp_pcap_done_fd(struct uxdp_dev *dev)
{
	(void)dev;
	return -EINVAL;
}

UXDP_API int uxdp_pcap_stats(struct uxdp_dev *dev, struct uxdp_pcap_stats *st)
{
	(void)dev;
	(void)st;
	return -EINVAL;
}

UXDP_API int uxdp_pcap_flush(struct uxdp_dev *dev)
{
	(void)dev;
	return -EINVAL;
}

#endif /* UXDP_HAVE_PCAP */
