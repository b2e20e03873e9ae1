/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pcap driver: a device whose receive side replays a capture file and
 * whose transmit side writes one. With it a program can be run over a
 * recorded trace, and what a program transmits or redirects can be looked
 * at with tcpdump or Wireshark. Built when libpcap is found at build time
 * (Debian: libpcap-dev); without it uxdp_pcap_create() fails with
 * EOPNOTSUPP and there is no "pcap" port kind. This header does not need
 * libpcap.
 *
 * A pcap device has one RX queue (the replay) and one TX queue (the
 * capture); either side may be left out.
 *
 * Port strings (uxdp_dev_open(), every uxdp tool):
 *
 *	pcap:IN[,loop=N|forever][,pps=N][,out=OUT][,snaplen=N][,frames=N]
 *	pcap:,out=OUT[,snaplen=N]		capture only
 *
 *	IN	the file to replay. pcap (microsecond or nanosecond) or
 *		pcapng, as libpcap reads them, any byte order; link type
 *		Ethernet (DLT_EN10MB) only. A file name may not contain ','
 *		(it ends the argument). A pipe (/dev/stdin) works with
 *		loop=1; its reads wait for the writer, and the poller with
 *		them.
 *	loop	passes over the file: 0 or 1 once (the default), N, or
 *		"forever".
 *	pps	packets per second, 0 (the default): as fast as the queue is
 *		polled.
 *	out	the file to write: pcap with nanosecond timestamps, link type
 *		Ethernet. Created or truncated; never the file being
 *		replayed. Without out=, transmitted frames are counted in the
 *		TX queue's stats and dropped (a sink).
 *	snaplen	bytes of each frame written, 1..262144 (the default, as
 *		tcpdump's): a longer frame is cut in the file, its record
 *		keeping the length it had (caplen < len), as tcpdump does.
 *	frames	receive buffers, 1..2^20 (default 1024): the packets that can
 *		be in flight at once.
 *	Numbers take k/M/G suffixes (x1000). With uxdp_dev_open()'s name
 *	NULL the device is named pcap0, pcap1, ... (the first free).
 *
 *	pcap:trace.pcap,loop=3,pps=10k	the file three times, 10^4 packets/s
 *	pcap:,out=/tmp/out.pcap,snaplen=128
 *
 * Replay. Each poll reads up to budget records (buffered by libpcap's
 * stdio stream: one read(2) per few KiB, on the polling thread) and copies
 * each into a buffer of the device's own pool, then runs the queue's
 * program on them in one batch. Buffers are 4 KiB UMEM chunks, so a packet
 * may be up to UXDP_PCAP_MAX_LEN (3520) bytes: 4096, less the 256-byte XDP
 * headroom and the 320-byte frame tailroom every uxdp buffer keeps.
 * Records are never cut or padded:
 *   - longer than UXDP_PCAP_MAX_LEN: skipped, counted in too_long;
 *   - fewer than 14 bytes captured (no Ethernet header): skipped, counted
 *     in too_short (no driver hands a program a runt);
 *   - captured short (caplen < len, a capture with a snap length):
 *     replayed as captured, caplen bytes, counted in truncated.
 * Timestamps in the file are not used: packets go out as fast as polled
 * or at pps. At the end of a pass the file is opened again from the start
 * for the next one; a pass that replayed no packet at all ends the replay
 * (every further pass would be the same).
 *
 * The end. When the last pass is done (or a broken record ended it), the
 * device's replay is "done": uxdp_pcap_done() turns true, the descriptor
 * of uxdp_pcap_done_fd() becomes readable, and the RX queue stays idle, so
 * its poller sleeps. Done is declared by the poll after the one that
 * replayed the last packet, so by then that poll has ended: its XDP_TX and
 * redirected frames have been handed to their devices' xdp_xmit. A tool
 * that replays a file through a program waits for done, then stops:
 *
 *	dev = uxdp_dev_open("pcap:trace.pcap", NULL);
 *	uxdp_dev_attach_prog(dev, 0, prog);
 *	uxdp_dev_up(dev);
 *	uxdp_dev_start(dev, NULL);
 *	struct pollfd pfd = { uxdp_pcap_done_fd(dev), POLLIN };
 *	poll(&pfd, 1, -1);
 *	uxdp_pcap_stats(dev, &st);	(st.replayed, st.replay_error, ...)
 *	uxdp_dev_destroy(dev);
 *
 * A device with nothing to replay is done from the start.
 *
 * Capture. xdp_xmit writes every frame it is given to the out file (one
 * record each: the frame's length, at most snaplen bytes of it, and the
 * time it was written, CLOCK_REALTIME in nanoseconds), under a mutex
 * (several threads may transmit at once), and returns them all, as a NIC
 * whose TX completes at once. Records go through a 64 KiB stdio buffer,
 * written out when it fills, at least every 100 ms while frames keep
 * coming, at uxdp_pcap_flush(), when the device goes down, and when it is
 * destroyed: after uxdp_dev_down() or uxdp_dev_destroy() the file is
 * complete. A write error (a full disk) is reported in capture_error and
 * by uxdp_pcap_flush(); from then on frames are counted in capture_errors
 * and not written, and the file ends where the error hit (records still in
 * the buffer then, up to 64 KiB of them, are lost with it: captured counts
 * frames handed to the file, not those known to be on disk).
 *
 * Errors known when the device is created make uxdp_pcap_create() (and
 * uxdp_dev_open()) fail, with uxdp_errmsg() naming the file and saying
 * why: a missing or unreadable file (ENOENT, EACCES, ...), a directory
 * (EISDIR), an empty file, one that is not pcap or pcapng, a truncated
 * file header, a link type other than Ethernet (EINVAL, with libpcap's
 * words), loop on a pipe (ESPIPE), an out file that cannot be created or
 * written (its errno). Opened as a port, a replay file that is not there
 * (pcap:FILE without out=, ENOENT) adds the likely mistake to the message:
 * "pcap:FILE replays FILE; to capture, use pcap:,out=FILE". What the
 * string alone decides (a key, a number, out= empty, no file at all) is
 * refused without looking at any file, by uxdp_port_check() as by the
 * open. Errors in the records are met while replaying: a
 * record cut short by the end of the file, or one claiming more bytes than
 * any capture can hold, ends the replay (done), counted in read_errors
 * with libpcap's words in replay_error.
 */
#ifndef UXDP_PCAP_H
#define UXDP_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uxdp/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_PCAP_DEFAULT_FRAMES	1024
/* Longest packet replayed: a 4 KiB chunk less UXDP_PACKET_HEADROOM and
 * UXDP_FRAME_TAILROOM. */
#define UXDP_PCAP_MAX_LEN		3520
/* Largest snap length (libpcap's and tcpdump's), the default. */
#define UXDP_PCAP_MAX_SNAPLEN		262144
/* opts.loops: replay until the device is destroyed. */
#define UXDP_PCAP_LOOP_FOREVER		UINT64_MAX

struct uxdp_pcap_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	/* The file to replay; NULL: none (the RX queue never receives). */
	const char *in;
	/* The file to write; NULL: transmitted frames are counted and
	 * dropped. At least one of in and out. */
	const char *out;
	/* Passes over @in: 0 or 1 once, UXDP_PCAP_LOOP_FOREVER. */
	uint64_t loops;
	/* Packets per second, 0: as fast as the queue is polled. A paced
	 * replay wakes its poller with a timer (uxdp_dev_ops.rx_fd). */
	uint64_t pps;
	/* Bytes of each frame written, 1..UXDP_PCAP_MAX_SNAPLEN; 0: the
	 * maximum. */
	uint32_t snaplen;
	/* Receive buffers (4 KiB each), 1..2^20; 0:
	 * UXDP_PCAP_DEFAULT_FRAMES. */
	uint32_t rx_frames;
	size_t :0;
};
#define uxdp_pcap_opts__last_field rx_frames

/*
 * A pcap device named @name with one RX queue (replaying @opts->in) and
 * one TX queue (writing @opts->out), down. Returns it, or NULL with errno
 * set and uxdp_errmsg() saying why (see the top of this header; EEXIST:
 * the name is taken; EOPNOTSUPP: uxdp was built without libpcap).
 * uxdp_dev_destroy() flushes and closes the files and frees it.
 */
struct uxdp_dev *uxdp_pcap_create(const char *name,
				  const struct uxdp_pcap_opts *opts);

/*
 * Whether the replay has ended (see "The end" above): every pass done, or
 * a broken record. True for a device with nothing to replay; false for a
 * device that is not a pcap device. Once true, whatever the queue's
 * program wrote while replaying is visible to the caller (an acquire).
 */
bool uxdp_pcap_done(struct uxdp_dev *dev);

/*
 * A file descriptor (an eventfd) that becomes readable when the replay
 * ends, for poll() beside other descriptors; reading it clears it, but
 * uxdp_pcap_done() stays true. Owned by the device (closed by
 * uxdp_dev_destroy()). Returns it, or -EINVAL (not a pcap device).
 */
int uxdp_pcap_done_fd(struct uxdp_dev *dev);

/* Counters of a pcap device; each is consistent on its own. */
struct uxdp_pcap_stats {
	/* Replay (RX queue 0): records = replayed + too_long + too_short. */
	uint64_t records;	/* records read, every pass */
	uint64_t replayed;	/* records handed to the queue as packets */
	uint64_t replayed_bytes;
	uint64_t passes;	/* passes over the file completed */
	uint64_t too_long;	/* skipped: over UXDP_PCAP_MAX_LEN bytes */
	uint64_t too_short;	/* skipped: under 14 bytes captured */
	uint64_t truncated;	/* replayed as captured, caplen < len */
	uint64_t read_errors;	/* broken records that ended the replay */
	/* Capture (TX queue 0). */
	uint64_t captured;	/* frames written to the out file */
	uint64_t captured_bytes;	/* their full lengths (not cut) */
	uint64_t snapped;	/* of those, cut at snaplen */
	uint64_t capture_errors;	/* frames lost to a write error */
	/* What ended the replay early, what broke the capture: "" if
	 * nothing did. */
	char replay_error[128];
	char capture_error[128];
};

/* Copy @dev's counters into *@st. Returns 0, or -EINVAL (not a pcap
 * device). */
int uxdp_pcap_stats(struct uxdp_dev *dev, struct uxdp_pcap_stats *st);

/*
 * Write the records buffered for the out file now, from any thread (say,
 * before reading the file while the device runs). Returns 0 (also when
 * there is no out file), -EIO if writing failed now or before
 * (uxdp_errmsg() says how), or -EINVAL (not a pcap device).
 */
int uxdp_pcap_flush(struct uxdp_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_PCAP_H */
