/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-xsk: AF_XDP sockets on any uxdp port, as the kernel's xdpsock
 * sample runs them: rxdrop, txonly or l2fwd.
 *
 *	uxdp-xsk [options] PORT
 *
 * One socket per queue asked for (--queue), each with a UMEM of its own
 * and an application thread running the mode's loop (xsk_app.c). The
 * device side is the tool's too: a program on PORT redirects each packet
 * to the socket of its queue through a redirect map used as the XSKMAP
 * (key: the packet's queue), and a poll group per socket queue polls the
 * device. With --prog FILE.o[:NAME], an eBPF object's program runs first
 * and what it passes goes to the socket (tools/lib/bpfprog.c loads it).
 * The main thread only waits for a signal, the stats tick or the end, and
 * prints.
 *
 * With --peer, a second port at the far end of PORT's wire (veth:NAMEp for
 * veth:NAME): the tool counts what arrives there, the sockets' transmits.
 * With --feed, a generator per socket sends into the peer, so a port that
 * makes no traffic of its own (a veth) has some, on every queue.
 *
 * The file reads top to bottom: options, programs, state, parsing, setup,
 * the run loop's steps with their output, teardown; main() itself, its run
 * loop and what every tool reports of a port are tools/lib's (tool.c,
 * report.c), shared with uxdp-fwd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uxdp/uxdp.h>
/* uxdp_port_parse(): port strings are checked before anything opens. */
#include <uxdp/driver.h>

#include "bpfprog.h"
#include "params.h"
#include "ports.h"
#include "report.h"
#include "stats.h"
#include "tool.h"
#include "xsk_app.h"
#include "xskstats.h"

#define PROG_NAME	"uxdp-xsk"
/* Sockets: each has an application and a poll thread, and a feed's;
 * with the peer's, 3 * 16 + 1 of the library's 64 thread slots. */
#define MAX_SOCKS	16
/* How often --count and the end of txonly are checked, and the run
 * loop's longest sleep then. */
#define COUNT_CHECK_MS	10
/* At the end, how long the peer may take to receive what PORT sent. */
#define PEER_SETTLE_MS	2000
/* Devices a port may make along (a veth port: its peer) are found among
 * the ifindexes below this. */
#define DEV_SCAN_MAX	1024
/* The -v lines' name column: "  rx.packets      1,000". */
#define NAME_COLS	28

/* ---- options ------------------------------------------------------------- */

struct xsk_opts {
	bool rxdrop, txonly, l2fwd;
	const char *queue;
	bool copy, zero_copy;
	uint32_t batch;
	uint32_t frames;
	uint32_t frame_size;
	uint32_t ring_size;
	bool unaligned;
	bool need_wakeup, no_need_wakeup;
	bool poll;
	bool touch;
	uint32_t tx_len;
	uint64_t tx_count;
	const char *cpus;
	const char *app_cpus;
	uint32_t budget;
	const char *peer;
	const char *feed;
	const char *prog;	/* FILE.o[:NAME] */
	const char *engine;
	struct tool_opts run;	/* count: packets received (txonly sent) */
};

#define OPT(name, key, type, field, mv, lo, hi, help) \
	TPARAM(name, key, type, struct xsk_opts, field, mv, lo, hi, help)

static const struct tparam opt_defs[] = {
	OPT("rxdrop", 'r', TPARAM_FLAG, rxdrop, NULL, 0, 0,
	    "receive and drop: each chunk goes straight back to the fill "
	    "ring (the default mode)"),
	OPT("txonly", 't', TPARAM_FLAG, txonly, NULL, 0, 0,
	    "send the same UDP packet from every chunk, as fast as the "
	    "completions come back; the sockets have no RX ring"),
	OPT("l2fwd", 'l', TPARAM_FLAG, l2fwd, NULL, 0, 0,
	    "swap the Ethernet addresses of each packet received and send it "
	    "back out of the same socket"),
	OPT("queue", 'Q', TPARAM_STR, queue, "LIST", 0, 0,
	    "the queues of PORT to open a socket on, one socket (with its "
	    "own UMEM, application thread and poll thread) per queue, e.g. "
	    "0 or 0-3 or 0,2 (default 0)"),
	OPT("copy", 0, TPARAM_FLAG, copy, NULL, 0, 0,
	    "copy mode: every packet copied between the device's buffers "
	    "and the UMEM (default: zero-copy where the driver can)"),
	OPT("zero-copy", 0, TPARAM_FLAG, zero_copy, NULL, 0, 0,
	    "zero-copy mode: the driver receives into and sends from the "
	    "UMEM; fail where it cannot"),
	OPT("batch", 'b', TPARAM_U32, batch, "N", 1, 65536,
	    "descriptors per ring operation (peek, reserve), at most "
	    "--ring-size (default 64)"),
	OPT("frames", 'F', TPARAM_U32, frames, "N", 16, 1U << 20,
	    "UMEM chunks per socket (default 4096)"),
	OPT("frame-size", 'f', TPARAM_U32, frame_size, "BYTES", 2048, 4096,
	    "UMEM chunk size, 2048 or 4096 (default 4096)"),
	OPT("ring-size", 0, TPARAM_U32, ring_size, "N", 16, 1U << 20,
	    "entries of each socket's RX and TX rings, a power of two "
	    "(default 2048); the fill and completion rings hold every chunk"),
	OPT("unaligned", 'u', TPARAM_FLAG, unaligned, NULL, 0, 0,
	    "UMEM in unaligned mode: descriptors carry the chunk's base and "
	    "the packet's offset apart (default aligned)"),
	OPT("need-wakeup", 0, TPARAM_FLAG, need_wakeup, NULL, 0, 0,
	    "bind with need_wakeup: kick the socket only when its rings say "
	    "so (the default)"),
	OPT("no-need-wakeup", 'm', TPARAM_FLAG, no_need_wakeup, NULL, 0, 0,
	    "bind without need_wakeup: kick TX after every batch, never "
	    "kick RX"),
	OPT("poll", 'p', TPARAM_FLAG, poll, NULL, 0, 0,
	    "when idle, sleep on the socket (its wake-up fd; txonly: "
	    "uxdp_xsk_poll) instead of spinning (default: busy polling)"),
	OPT("touch", 0, TPARAM_FLAG, touch, NULL, 0, 0,
	    "rxdrop: read the first byte of every packet (default: the data "
	    "is not touched)"),
	OPT("tx-len", 's', TPARAM_U32, tx_len, "BYTES", 42, 4096,
	    "txonly: packet length, at most --frame-size (default 64)"),
	OPT("tx-count", 'C', TPARAM_U64, tx_count, "N", 1, UINT64_MAX,
	    "txonly: packets each socket sends; the run ends when every "
	    "socket has sent them and seen them completed (default: no "
	    "limit)"),
	OPT("cpus", 0, TPARAM_STR, cpus, "LIST", 0, 0,
	    "pin the poll thread of the i-th queue to the i-th CPU of LIST "
	    "(\"0,2-3\"), one CPU per queue (default: not pinned)"),
	OPT("app-cpus", 0, TPARAM_STR, app_cpus, "LIST", 0, 0,
	    "pin the application thread of the i-th queue to the i-th CPU "
	    "of LIST (default: not pinned)"),
	OPT("budget", 0, TPARAM_U32, budget, "N", 1, 4096,
	    "packets a poll thread takes from its queue at a time (default "
	    "64, NAPI's)"),
	OPT("peer", 'P', TPARAM_STR, peer, "PORT", 0, 0,
	    "the far end of PORT's wire, opened in this process (veth:NAMEp "
	    "for veth:NAME): its packets are counted, with the Ethernet "
	    "addresses they carry (default none)"),
	OPT("feed", 0, TPARAM_STR, feed, "PORT", 0, 0,
	    "a generator sending into PORT through --peer, opened once per "
	    "socket (each on a thread of its own, so a peer that picks the "
	    "queue by thread, as veth does, spreads them): traffic for a "
	    "port that makes none (default none)"),
	OPT("prog", 0, TPARAM_STR, prog, "FILE.o[:NAME]", 0, 0,
	    "an XDP eBPF object's program (NAME, default its first) run on "
	    "every packet of PORT before the sockets: XDP_PASS delivers it "
	    "to its queue's socket, the other verdicts are carried out as "
	    "they are (default: every packet to its queue's socket)"),
	OPT("engine", 'e', TPARAM_STR, engine, "ENGINE", 0, 0,
	    "--prog's engine: jit, interp, or default (the JIT where there "
	    "is one, else the interpreter) (default default)"),
	TOOL_OPT_DURATION(struct xsk_opts, run),
	OPT("count", 'c', TPARAM_U64, run.count, "N", 0, UINT64_MAX,
	    "stop once the sockets have received N packets in all (txonly: "
	    "sent); checked every 10 ms, so the totals may show a few more "
	    "(default 0: no limit). A port whose source ends (null with "
	    "count=, a pcap replay) stops the run 50 ms after its end, N "
	    "reached or not"),
	TOOL_OPT_INTERVAL(struct xsk_opts, run),
	TOOL_OPT_JSON(struct xsk_opts, run),
	OPT("extra-stats", 'v', TPARAM_FLAG, run.verbose, NULL, 0, 0,
	    "every socket statistic (uxdp_xsk_stats) and the application's "
	    "own counters, the devices' non-zero counters, and at the end "
	    "the audit of every UMEM chunk; the set-up on stderr"),
	TOOL_OPT_QUIET(struct xsk_opts, run),
	TPARAM_HELP_ROW,
};

static void more_help(FILE *f);

static struct tparams params = {
	.prog = PROG_NAME,
	.synopsis = "[options] PORT",
	.about = "Open an AF_XDP socket on each queue asked for of PORT (any "
		 "port string) and run xdpsock's rxdrop, txonly or l2fwd on "
		 "it: live rx/s and tx/s per socket every interval, totals at "
		 "the end.",
	TPARAMS_DEFS(opt_defs),
	.more_help = more_help,
};

/* ---- programs ------------------------------------------------------------ */

/*
 * --prog FILE.o: PORT's program per queue. The eBPF program decides; what
 * it passes goes to the queue's socket, as the default program sends
 * everything (the socket is this tool's stack). Its verdicts are counted
 * for the report at the end, one writer per queue.
 */
struct bpf_queue {
	struct tbpf_qcount n;
	struct uxdp_prog *prog;
	struct uxdp_map *xskmap;
} __attribute__((aligned(UXDP_CACHE_LINE)));

static uint32_t prog_bpf(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_queue *q = priv;
	uint32_t v = uxdp_prog_run(q->prog, ctx);

	tbpf_count(&q->n, v);
	return v == UXDP_PASS ? xsk_app_prog_xsk(ctx, q->xskmap) : v;
}

/* A feed's program: out of the peer, into PORT. */
static uint32_t prog_feed(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return uxdp_redirect_map(priv, 0, UXDP_DROP);
}

/*
 * The peer's program, per queue: count what the sockets sent, and keep
 * the Ethernet addresses of the first packet; packets whose addresses
 * differ from those are counted apart. Written by the queue's poller,
 * read once the pollers have stopped.
 */
struct peer_count {
	uint64_t packets;
	uint64_t bytes;
	uint64_t other;		/* addresses not the first packet's */
	unsigned char macs[12];	/* destination, source */
	bool have;
} __attribute__((aligned(UXDP_CACHE_LINE)));

static uint32_t prog_peer(struct uxdp_buff *ctx, void *priv)
{
	struct peer_count *c = priv;
	const unsigned char *p = ctx->data;
	uint64_t len = (uint64_t)((const char *)ctx->data_end -
				  (const char *)ctx->data);

	c->packets++;
	c->bytes += len;
	if (len < 12) {
		c->other++;
	} else if (!c->have) {
		memcpy(c->macs, p, 12);
		c->have = true;
	} else if (memcmp(c->macs, p, 12)) {
		c->other++;
	}
	return UXDP_DROP;
}

/* ---- state --------------------------------------------------------------- */

/* A device the tool opened, and what the output says of it. */
struct port {
	struct tport tp;
	struct uxdp_poll_group *group;	/* peer and feeds: their own */
};

struct sock {
	uint32_t queue;
	struct xsk_app app;
	bool app_ok;			/* xsk_app_init succeeded */
	bool zc;			/* uxdp_xsk_options() said so */
	pthread_t thread;
	bool running;
	int app_cpu;			/* -1: not pinned */
	const uint32_t *stop;		/* the tool's stop flag */
	uint32_t *ready;		/* threads that have their index */
	struct uxdp_poll_group *group;
	struct xsk_app_stats last;	/* at the previous tick */
	struct uxdp_xsk_stats xlast;
	struct xsk_app_stats total;
	struct uxdp_xsk_stats xtotal;
	struct xsk_app_audit audit;
	int audit_err;
};

struct xsk_tool {
	struct tool tool;		/* the run (tools/lib/tool.h) */
	struct xsk_opts o;
	enum xsk_app_mode mode;
	uint32_t bind_flags;
	uint32_t queues[MAX_SOCKS];
	unsigned int nsocks;
	uint32_t cpus[MAX_SOCKS], app_cpus[MAX_SOCKS];
	unsigned int ncpus, napp_cpus;

	struct port port;
	struct port peer;
	struct port feeds[MAX_SOCKS];
	unsigned int nfeeds;
	/* The ifindexes in use before the ports opened: a device that was
	 * not there then and is at the end was made along by a port (a veth
	 * port's peer) and goes with them. */
	bool before[DEV_SCAN_MAX];
	bool scanned;
	struct tdev_names names;
	struct uxdp_map *xskmap;
	struct uxdp_map *feedmap;
	struct peer_count *peer_counts;
	uint32_t peer_nrxq;
	struct tbpf_spec bpf_spec;	/* --prog */
	struct tbpf_prog bpf;
	struct bpf_queue *bpfq;		/* one per RX queue of PORT */
	uint32_t bpf_nrxq;

	struct sock *socks;

	/* PORT is a source that ends (a generator with a count, a pcap
	 * replay): the run stops after its end, --count reached or not
	 * (packets the socket dropped never arrive). */
	bool finite;
	bool pcap_replay;
	uint64_t source_end;		/* ns: its end seen, stop then */

	uint32_t stop_flag;		/* the application threads' stop */
	uint32_t app_ready;		/* application threads registered */
	int stop_fd;			/* readable once they must stop */
};

static struct xsk_tool *xsk_of(struct tool *tool)
{
	return tool_container_of(tool, struct xsk_tool, tool);
}

/* ---- help ---------------------------------------------------------------- */

static void more_help(FILE *f)
{
	static const char *const examples[] = {
		"--zero-copy -c 10M null:gen,count=10M",
		"--txonly -C 1M null:sink,sink",
		"--l2fwd --queue 0-1 --peer veth:vp --feed null:f,pps=1M "
		"veth:v,queues=2",
		"--poll afxdp:eth0@0",
		"--prog filter.o:xdp_filter -c 1M null:gen,count=1M",
		NULL,
	};

	tports_help(f);
	tparams_section(f, "output", "Per interval and socket: rx/s packets "
			"the application took from the RX ring, tx/s packets "
			"whose transmit completed; with more than one socket, "
			"their total. -v adds the socket's statistics and the "
			"application's counters, and at the end the audit of "
			"every UMEM chunk. Totals at the end.");
	tparams_section(f, "exit status", "0 stopped by SIGINT, SIGTERM, "
			"SIGHUP, --duration, --count, --tx-count or the end of "
			"PORT's source; 1 a port, "
			"socket or thread could not be set up, or the output "
			"could not be written; 2 bad usage (a port string its "
			"kind refuses among it).");
	tparams_examples(f, PROG_NAME, examples);
}

/* ---- parsing what the table cannot check --------------------------------- */

static void parse_queues(struct xsk_tool *t)
{
	const char *s = t->o.queue ? t->o.queue : "0";
	unsigned int i, j;
	int n;

	n = tparams_parse_list(s, 65535, t->queues, MAX_SOCKS);
	if (n == -E2BIG)
		tparams_fail(&params, "--queue: more than %d queues",
			     MAX_SOCKS);
	if (n == -ERANGE)
		tparams_fail(&params, "--queue '%s': queues are 0..65535", s);
	if (n < 0)
		tparams_fail(&params, "--queue '%s': want a queue or a list "
			     "like 0-3 or 0,2", s);
	t->nsocks = (unsigned int)n;
	for (i = 0; i < t->nsocks; i++)
		for (j = 0; j < i; j++)
			if (t->queues[i] == t->queues[j])
				tparams_fail(&params, "--queue '%s': queue %u "
					     "twice (one socket per queue)", s,
					     t->queues[i]);
}

/* An option that only one mode takes. */
static void mode_only(const struct xsk_tool *t, const char *opt,
		      enum xsk_app_mode mode, const char *mode_opt)
{
	if (tparams_given(&params, opt) && t->mode != mode)
		tparams_fail(&params, "--%s applies to --%s only", opt,
			     mode_opt);
}

static void parse_args(struct tool *tool, int argc, char **argv)
{
	struct xsk_tool *t = xsk_of(tool);
	struct xsk_opts *o = &t->o;
	int first;

	o->batch = 64;
	o->frames = 4096;
	o->frame_size = 4096;
	o->ring_size = UXDP_XSK_RING_DEFAULT;
	o->tx_len = 64;
	o->budget = UXDP_NAPI_BUDGET;
	o->run.interval = 1000;
	first = tparams_parse(&params, argc, argv, o);

	if (o->rxdrop + o->txonly + o->l2fwd > 1)
		tparams_fail(&params, "--rxdrop, --txonly and --l2fwd exclude "
			     "each other");
	t->mode = o->txonly ? XSK_APP_TXONLY : o->l2fwd ? XSK_APP_L2FWD :
		  XSK_APP_RXDROP;
	if (o->copy && o->zero_copy)
		tparams_fail(&params, "--copy and --zero-copy exclude each "
			     "other");
	if (o->need_wakeup && o->no_need_wakeup)
		tparams_fail(&params, "--need-wakeup and --no-need-wakeup "
			     "exclude each other");
	if (o->frame_size != 2048 && o->frame_size != 4096)
		tparams_fail(&params, "--frame-size %u: 2048 or 4096",
			     o->frame_size);
	if (o->ring_size & (o->ring_size - 1))
		tparams_fail(&params, "--ring-size: %u is not a power of two",
			     o->ring_size);
	if (o->batch > o->ring_size)
		tparams_fail(&params, "--batch %u is more than --ring-size %u",
			     o->batch, o->ring_size);
	mode_only(t, "tx-len", XSK_APP_TXONLY, "txonly");
	mode_only(t, "tx-count", XSK_APP_TXONLY, "txonly");
	mode_only(t, "touch", XSK_APP_RXDROP, "rxdrop");
	if (o->tx_len > o->frame_size)
		tparams_fail(&params, "--tx-len %u does not fit a %u-byte "
			     "frame", o->tx_len, o->frame_size);
	t->bind_flags = (o->copy ? UXDP_XSK_F_COPY : 0) |
			(o->zero_copy ? UXDP_XSK_F_ZEROCOPY : 0) |
			(o->no_need_wakeup ? 0 : UXDP_XSK_F_NEED_WAKEUP);
	parse_queues(t);
	if (o->cpus) {
		t->ncpus = tparams_parse_cpus(&params, "cpus", o->cpus,
					      t->cpus, MAX_SOCKS);
		if (t->ncpus != t->nsocks)
			tparams_fail(&params, "--cpus lists %u CPU%s for %u "
				     "queue%s: one per queue", t->ncpus,
				     t->ncpus == 1 ? "" : "s", t->nsocks,
				     t->nsocks == 1 ? "" : "s");
	}
	if (o->app_cpus) {
		t->napp_cpus = tparams_parse_cpus(&params, "app-cpus",
						  o->app_cpus, t->app_cpus,
						  MAX_SOCKS);
		if (t->napp_cpus != t->nsocks)
			tparams_fail(&params, "--app-cpus lists %u CPU%s for "
				     "%u queue%s: one per queue", t->napp_cpus,
				     t->napp_cpus == 1 ? "" : "s", t->nsocks,
				     t->nsocks == 1 ? "" : "s");
	}
	if (o->feed && !o->peer)
		tparams_fail(&params, "--feed sends through --peer: give both");
	if (o->feed && t->mode == XSK_APP_TXONLY)
		tparams_fail(&params, "--feed: txonly sockets receive nothing");
	if (o->prog) {
		if (t->mode == XSK_APP_TXONLY)
			tparams_fail(&params, "--prog: txonly sockets receive "
				     "nothing");
		tbpf_spec_parse(&params, "--prog", o->prog, &t->bpf_spec);
	}
	if (o->engine && !o->prog)
		tparams_fail(&params, "--engine: only with --prog FILE.o");
	tbpf_engine_parse(&params, o->engine);
	if (first >= argc)
		tparams_fail(&params, "no PORT given");
	if (argc - first > 1)
		tparams_fail(&params, "one PORT only ('%s' is one too many)",
			     argv[first + 1]);
	t->port.tp.spec = argv[first];
	tports_check(&params, "", t->port.tp.spec);
	if (o->peer) {
		t->peer.tp.spec = o->peer;
		tports_check(&params, "--peer: ", o->peer);
	}
	if (o->feed)
		tports_check(&params, "--feed: ", o->feed);
}

/* ---- setup --------------------------------------------------------------- */

static int open_port(struct port *pt, const char *spec, const char *name,
		     const char *what)
{
	pt->tp.spec = pt->tp.str = spec;
	pt->tp.dev = tports_open(PROG_NAME, what, spec, name);
	return pt->tp.dev ? 0 : -1;
}

/* Which ifindexes hold a device now. */
static void dev_scan(bool *present)
{
	uint32_t i;

	for (i = 1; i <= DEV_SCAN_MAX; i++)
		present[i - 1] = uxdp_dev_get_by_index(i) != NULL;
}

static int open_ports(struct xsk_tool *t)
{
	/* ARG cut to leave room for two digits (MAX_SOCKS), in a buffer
	 * the compiler can see any number fits. */
	char name[UXDP_IFNAMSIZ + 16];
	struct uxdp_port parsed;
	unsigned int i;

	dev_scan(t->before);
	t->scanned = true;
	if (open_port(&t->port, t->port.tp.spec, NULL, ""))
		return -1;
	/* A pcap port with nothing to replay is done from the start
	 * (capture only): not a source that ends. */
	t->pcap_replay = !strcmp(uxdp_dev_kind(t->port.tp.dev), "pcap") &&
			 !uxdp_pcap_done(t->port.tp.dev);
	t->finite = t->mode != XSK_APP_TXONLY &&
		    (t->pcap_replay ||
		     !strcmp(uxdp_dev_kind(t->port.tp.dev), "null"));
	tool_note(&t->tool, "port %s: device %s (%s), %u RX / %u TX queues",
		  t->port.tp.spec, uxdp_dev_name(t->port.tp.dev),
		  uxdp_dev_kind(t->port.tp.dev),
		  uxdp_dev_num_rxq(t->port.tp.dev),
		  uxdp_dev_num_txq(t->port.tp.dev));
	if (t->o.peer) {
		if (open_port(&t->peer, t->o.peer, NULL, "--peer: "))
			return -1;
		if (t->peer.tp.dev == t->port.tp.dev) {
			tmsg(PROG_NAME, "--peer '%s' is PORT itself (%s)",
			     t->o.peer, uxdp_dev_name(t->port.tp.dev));
			t->peer.tp.dev = NULL;
			return -1;
		}
		tool_note(&t->tool, "peer %s: device %s (%s), %u RX queues",
			  t->o.peer, uxdp_dev_name(t->peer.tp.dev),
			  uxdp_dev_kind(t->peer.tp.dev),
			  uxdp_dev_num_rxq(t->peer.tp.dev));
	}
	if (t->o.feed) {
		/* One device per socket, each its own name: the port's
		 * ARG with the socket's number after it. */
		uxdp_port_parse(t->o.feed, &parsed);
		for (i = 0; i < t->nsocks; i++) {
			const char *nm = NULL;

			if (t->nsocks > 1) {
				snprintf(name, sizeof(name), "%.*s%u",
					 UXDP_IFNAMSIZ - 3, parsed.arg, i);
				nm = name;
			}
			if (open_port(&t->feeds[i], t->o.feed, nm, "--feed: "))
				return -1;
			t->nfeeds++;
			if (t->feeds[i].tp.dev == t->port.tp.dev ||
			    t->feeds[i].tp.dev == t->peer.tp.dev) {
				tmsg(PROG_NAME, "--feed '%s' is PORT or --peer "
				     "(%s)", t->o.feed,
				     uxdp_dev_name(t->feeds[i].tp.dev));
				t->feeds[i].tp.dev = NULL;
				return -1;
			}
			tool_note(&t->tool, "feed %u: device %s (%s)", i,
				  uxdp_dev_name(t->feeds[i].tp.dev),
				  uxdp_dev_kind(t->feeds[i].tp.dev));
		}
	}
	return tports_names_read(PROG_NAME, t->port.tp.dev, &t->names);
}

/* --prog: load it, attach it to every RX queue of PORT. The port is not
 * up yet: each queue knows its program and map before it runs. */
static int setup_bpf(struct xsk_tool *t)
{
	uint32_t q;

	if (tbpf_load(PROG_NAME, "--prog", &t->bpf_spec,
		      tbpf_engine_parse(&params, t->o.engine), &t->bpf))
		return -1;
	t->bpf_nrxq = uxdp_dev_num_rxq(t->port.tp.dev);
	if (tports_attach_each(PROG_NAME, t->port.tp.dev, t->bpf.name,
			       prog_bpf, sizeof(*t->bpfq), (void **)&t->bpfq))
		return -1;
	for (q = 0; q < t->bpf_nrxq; q++) {
		t->bpfq[q].prog = t->bpf.prog;
		t->bpfq[q].xskmap = t->xskmap;
	}
	return 0;
}

static int setup_sockets(struct xsk_tool *t)
{
	struct xsk_app_cfg cfg = {
		.mode = t->mode,
		.batch = t->o.batch,
		.frames = t->o.frames,
		.frame_size = t->o.frame_size,
		.ring_size = t->o.ring_size,
		.unaligned = t->o.unaligned,
		.bind_flags = t->bind_flags,
		.poll = t->o.poll,
		.touch = t->o.touch,
		.tx_len = t->o.tx_len,
		.tx_count = t->o.tx_count,
		.stop_fd = t->stop_fd,
	};
	unsigned int i;
	int err;

	/* One slot per RX queue: the key is the packet's queue. */
	t->xskmap = uxdp_map_create(uxdp_dev_num_rxq(t->port.tp.dev));
	if (!t->xskmap) {
		tmsg(PROG_NAME, "XSKMAP: %s", tports_why(errno));
		return -1;
	}
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];

		err = xsk_app_init(&s->app, &cfg, t->port.tp.dev, s->queue);
		if (err) {
			tmsg(PROG_NAME, "socket on %s queue %u: %s",
			     uxdp_dev_name(t->port.tp.dev), s->queue,
			     tports_why(err));
			return -1;
		}
		s->app_ok = true;
		s->zc = uxdp_xsk_options(s->app.xsk) & UXDP_XSK_OPT_ZEROCOPY;
		if (t->mode != XSK_APP_TXONLY &&
		    uxdp_map_update(t->xskmap, s->queue,
				    uxdp_xsk_target(s->app.xsk))) {
			tmsg(PROG_NAME, "XSKMAP: %s", tports_why(EINVAL));
			return -1;
		}
		tool_note(&t->tool, "socket on %s queue %u: %s, %u frames of "
			  "%u bytes%s", uxdp_dev_name(t->port.tp.dev), s->queue,
			  s->zc ? "zero-copy" : "copy", t->o.frames,
			  t->o.frame_size, t->o.unaligned ? ", unaligned" : "");
	}
	if (t->mode == XSK_APP_TXONLY)
		return tports_attach(PROG_NAME, t->port.tp.dev, UXDP_ALL_QUEUES,
				     "drop", xsk_app_prog_drop, NULL);
	if (t->o.prog)
		return setup_bpf(t);
	return tports_attach(PROG_NAME, t->port.tp.dev, UXDP_ALL_QUEUES, "xsk",
			     xsk_app_prog_xsk, t->xskmap);
}

static int setup_peer(struct xsk_tool *t)
{
	unsigned int i;

	if (!t->peer.tp.dev)
		return 0;
	t->peer_nrxq = uxdp_dev_num_rxq(t->peer.tp.dev);
	/* Per queue: each counter has one writer. */
	if (tports_attach_each(PROG_NAME, t->peer.tp.dev, "peer", prog_peer,
			       sizeof(*t->peer_counts),
			       (void **)&t->peer_counts))
		return -1;
	if (!t->nfeeds)
		return 0;
	t->feedmap = uxdp_map_create(1);
	if (!t->feedmap ||
	    uxdp_map_update(t->feedmap, 0, uxdp_dev_target(t->peer.tp.dev))) {
		tmsg(PROG_NAME, "feed map: %s", tports_why(errno));
		return -1;
	}
	for (i = 0; i < t->nfeeds; i++)
		if (tports_attach(PROG_NAME, t->feeds[i].tp.dev,
				  UXDP_ALL_QUEUES, "feed", prog_feed,
				  t->feedmap))
			return -1;
	return 0;
}

static struct uxdp_poll_group *group_start(const struct xsk_tool *t,
					   struct uxdp_dev *dev, uint32_t q,
					   int cpu)
{
	struct uxdp_poll_group *g;
	int err;

	g = tports_group_new(PROG_NAME, t->o.budget, cpu);
	if (!g)
		return NULL;
	err = uxdp_poll_group_add(g, dev, q);
	if (!err)
		err = uxdp_poll_group_start(g);
	if (err) {
		tmsg(PROG_NAME, "polling %s: %s", uxdp_dev_name(dev),
		     tports_why(err));
		uxdp_poll_group_destroy(g);
		return NULL;
	}
	return g;
}

static void *app_thread(void *arg)
{
	struct sock *s = arg;

	if (s->app_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s->app_cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	/* The thread index a transmit would take anyway (the library's
	 * smp_processor_id), taken now, before any poll thread starts:
	 * see setup(). */
	uxdp_thread_index();
	/* Release, with setup()'s acquire: the index is taken before the
	 * main thread starts the poll threads. (The index registry has its
	 * own lock; this orders the two threads' steps, nothing else.) */
	__atomic_fetch_add(s->ready, 1, __ATOMIC_RELEASE);
	xsk_app_run(&s->app, s->stop);
	return NULL;
}

static int setup(struct tool *tool)
{
	struct xsk_tool *t = xsk_of(tool);
	unsigned int i;
	int err;

	/* posix_memalign: struct xsk_app has a cache-aligned member. */
	if (posix_memalign((void **)&t->socks, UXDP_CACHE_LINE,
			   t->nsocks * sizeof(*t->socks))) {
		t->socks = NULL;
		tmsg(PROG_NAME, "out of memory");
		return -1;
	}
	memset(t->socks, 0, t->nsocks * sizeof(*t->socks));
	for (i = 0; i < t->nsocks; i++) {
		t->socks[i].queue = t->queues[i];
		t->socks[i].app_cpu = t->napp_cpus ? (int)t->app_cpus[i] : -1;
		t->socks[i].stop = &t->stop_flag;
		t->socks[i].ready = &t->app_ready;
	}
	t->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (t->stop_fd < 0) {
		tmsg(PROG_NAME, "eventfd: %s", strerror(errno));
		return -1;
	}
	if (open_ports(t) || setup_sockets(t) || setup_peer(t))
		return -1;
	if (tports_up(PROG_NAME, t->port.tp.dev) ||
	    tports_up(PROG_NAME, t->peer.tp.dev))
		return -1;
	for (i = 0; i < t->nfeeds; i++)
		if (tports_up(PROG_NAME, t->feeds[i].tp.dev))
			return -1;
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];

		err = pthread_create(&s->thread, NULL, app_thread, s);
		if (err) {
			tmsg(PROG_NAME, "application thread: %s",
			     strerror(err));
			return -1;
		}
		s->running = true;
	}
	/*
	 * Thread indexes, the lowest free one to each thread as it first
	 * polls or transmits: the application threads', then each poll
	 * thread's as it starts (uxdp_poll_group_start() waits for that),
	 * the feeds' last, one after the other. So the feeds' indexes are
	 * consecutive, and a peer that picks the queue by the sender's
	 * index (veth) gives each feed a queue of its own: an application
	 * transmitting for the first time in between would take one.
	 */
	while (__atomic_load_n(&t->app_ready, __ATOMIC_ACQUIRE) < t->nsocks)
		sched_yield();
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];

		s->group = group_start(t, t->port.tp.dev, s->queue,
				       t->ncpus ? (int)t->cpus[i] : -1);
		if (!s->group)
			return -1;
		tool_note(&t->tool, "poll thread %u%s polls %s queue %u", i,
			  t->ncpus ? " (pinned)" : "",
			  uxdp_dev_name(t->port.tp.dev), s->queue);
	}
	if (t->peer.tp.dev) {
		t->peer.group = group_start(t, t->peer.tp.dev, UXDP_ALL_QUEUES,
					    -1);
		if (!t->peer.group)
			return -1;
	}
	/* Last, one after the other (above). */
	for (i = 0; i < t->nfeeds; i++) {
		t->feeds[i].group = group_start(t, t->feeds[i].tp.dev,
						UXDP_ALL_QUEUES, -1);
		if (!t->feeds[i].group)
			return -1;
	}
	return 0;
}

/* ---- output -------------------------------------------------------------- */

static const char *bind_name(const struct sock *s)
{
	return s->zc ? "zero-copy" : "copy";
}

static const char *mode_name(enum xsk_app_mode m)
{
	return m == XSK_APP_TXONLY ? "txonly" : m == XSK_APP_L2FWD ? "l2fwd" :
	       "rxdrop";
}

#define FMT(buf, v, ns) tstats_fmt(buf, sizeof(buf), v, ns)

/* "q0 zero-copy  14,880,952 rx/s  0 tx/s"; @ns == 0: totals. */
static void print_sock_text(const char *name, const char *bind, uint64_t rx,
			    uint64_t tx, uint64_t ns)
{
	const char *unit = ns ? "/s" : "";
	char a[32], b[32];

	printf("%-6s %-9s %15s rx%-2s %15s tx%s\n", name, bind,
	       FMT(a, rx, ns), unit, FMT(b, tx, ns), unit);
}

/* -v: every socket statistic and application counter. */
static void print_extra_text(const struct uxdp_xsk_stats *x,
			     const struct xsk_app_stats *ap, uint64_t ns)
{
	unsigned int i;

	for (i = 0; i < TXSK_NSTATS; i++)
		tport_text_line(stdout, "xsk", txsk_fields[i].name,
				txsk_stat(x, i), ns, NAME_COLS);
	for (i = 0; i < XSK_APP_NSTATS; i++)
		tport_text_line(stdout, "app", xsk_app_stat_names[i],
				xsk_app_stat(ap, i), ns, NAME_COLS);
}

/* A device's line, and with -v its non-zero counters. */
static void print_dev_text(const struct xsk_tool *t, const char *role,
			   const struct port *pt,
			   const struct tdev_counters *d, uint64_t ns)
{
	const char *unit = ns ? "/s" : "";
	char a[32], b[32];

	printf("%s %s (%s): %s rx%s, %s tx%s\n", role,
	       uxdp_dev_name(pt->tp.dev), uxdp_dev_kind(pt->tp.dev),
	       FMT(a, d->rx.packets, ns), unit, FMT(b, d->tx.packets, ns),
	       unit);
	if (t->o.run.verbose)
		tport_text_counters(stdout, &t->names, d, ns, NAME_COLS);
}

static void json_xsk(const struct uxdp_xsk_stats *x)
{
	printf("\"xsk\":{");
	txsk_json(stdout, "", x);
	printf("}");
}

static void json_app(const struct xsk_app_stats *ap)
{
	unsigned int i;

	printf("\"app\":{");
	for (i = 0; i < XSK_APP_NSTATS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", xsk_app_stat_names[i],
		       (unsigned long long)xsk_app_stat(ap, i));
	printf("}");
}

/* "name":..,"kind":..,"port":..,"rx":{...},"tx":{...} */
static void json_dev(const struct xsk_tool *t, const struct port *pt,
		     const struct tdev_counters *d)
{
	tport_json_id(stdout, &pt->tp);
	printf(",");
	tport_json_counters(stdout, &t->names, d);
}

/* The devices' counters over the interval (and new "last" samples). */
static void dev_interval(const struct xsk_tool *t, struct port *pt,
			 const char *role, uint64_t ns, bool *first)
{
	struct tdev_counters d;

	if (!pt->tp.dev || tport_delta(&pt->tp, &d))
		return;
	if (!t->o.run.json) {
		/* The devices' rates only with -v: the sockets' are the
		 * point. */
		if (t->o.run.verbose)
			print_dev_text(t, role, pt, &d, ns);
		return;
	}
	printf("%s{\"role\":\"%s\",", *first ? "" : ",", role);
	*first = false;
	json_dev(t, pt, &d);
	printf(",\"rx_pps\":%.1f,\"tx_pps\":%.1f}",
	       tstats_rate(d.rx.packets, ns), tstats_rate(d.tx.packets, ns));
}

static void print_interval(struct tool *tool, uint64_t ns)
{
	struct xsk_tool *t = xsk_of(tool);
	uint64_t rx = 0, tx = 0;
	bool first = true;
	unsigned int i;
	char name[16];

	if (t->o.run.json)
		printf("\"sockets\":[");
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];
		struct xsk_app_stats ap, dap;
		struct uxdp_xsk_stats x, dx;

		xsk_app_stats_read(&s->app, &ap);
		uxdp_xsk_stats(s->app.xsk, &x);
		tstats_words_sub(&dap, &ap, &s->last, XSK_APP_NSTATS);
		tstats_words_sub(&dx, &x, &s->xlast, TXSK_NSTATS);
		s->last = ap;
		s->xlast = x;
		rx += dap.rx_packets;
		tx += dap.tx_packets;
		if (!t->o.run.json) {
			snprintf(name, sizeof(name), "q%u", s->queue);
			print_sock_text(name, bind_name(s), dap.rx_packets,
					dap.tx_packets, ns);
			if (t->o.run.verbose)
				print_extra_text(&dx, &dap, ns);
			continue;
		}
		printf("%s{\"queue\":%u,\"rx_pps\":%.1f,\"tx_pps\":%.1f,",
		       i ? "," : "", s->queue,
		       tstats_rate(dap.rx_packets, ns),
		       tstats_rate(dap.tx_packets, ns));
		json_xsk(&dx);
		printf(",");
		json_app(&dap);
		printf("}");
	}
	if (t->o.run.json)
		printf("],\"rx_pps\":%.1f,\"tx_pps\":%.1f,\"devices\":[",
		       tstats_rate(rx, ns), tstats_rate(tx, ns));
	else if (t->nsocks > 1)
		print_sock_text("total", "", rx, tx, ns);
	dev_interval(t, &t->port, "port", ns, &first);
	dev_interval(t, &t->peer, "peer", ns, &first);
	for (i = 0; i < t->nfeeds; i++)
		dev_interval(t, &t->feeds[i], "feed", ns, &first);
	if (t->o.run.json)
		printf("]}\n");
}

static void print_header(struct tool *tool)
{
	const struct xsk_tool *t = xsk_of(tool);
	unsigned int i;

	printf(PROG_NAME ": %s on %s (%s), queue%s", mode_name(t->mode),
	       uxdp_dev_name(t->port.tp.dev), uxdp_dev_kind(t->port.tp.dev),
	       t->nsocks == 1 ? "" : "s");
	for (i = 0; i < t->nsocks; i++)
		printf("%s %u %s", i ? "," : "", t->socks[i].queue,
		       bind_name(&t->socks[i]));
	printf("; batch %u, %u frames of %u bytes%s, %s, %s", t->o.batch,
	       t->o.frames, t->o.frame_size,
	       t->o.unaligned ? " (unaligned)" : "",
	       t->o.no_need_wakeup ? "no need_wakeup" : "need_wakeup",
	       t->o.poll ? "poll" : "busy polling");
}

static void fmt_macs(char *buf, size_t len, const unsigned char *m)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

/* The peer's program counts, over its queues: the addresses of the
 * first queue that saw a packet; the others' count as other if they
 * differ. */
struct peer_sum {
	uint64_t packets, bytes, other;
	char dst[18], src[18];
	bool have;
};

static void peer_sum(const struct xsk_tool *t, struct peer_sum *ps)
{
	const unsigned char *ref = NULL;
	uint32_t q;

	memset(ps, 0, sizeof(*ps));
	for (q = 0; q < t->peer_nrxq; q++) {
		const struct peer_count *c = &t->peer_counts[q];

		ps->packets += c->packets;
		ps->bytes += c->bytes;
		ps->other += c->other;
		if (!c->have)
			continue;
		if (!ref)
			ref = c->macs;
		else if (memcmp(ref, c->macs, 12))
			ps->other += c->packets - c->other;
	}
	if (ref) {
		ps->have = true;
		fmt_macs(ps->dst, sizeof(ps->dst), ref);
		fmt_macs(ps->src, sizeof(ps->src), ref + 6);
	}
}

static void print_dev_totals_text(const struct xsk_tool *t, const char *role,
				  const struct port *pt)
{
	print_dev_text(t, role, pt, &pt->tp.total, 0);
	if (t->o.run.verbose)
		tport_text_pool(stdout, &pt->tp, NAME_COLS);
}

static void json_dev_totals(const struct xsk_tool *t, const char *role,
			    const struct port *pt)
{
	printf("{\"role\":\"%s\",", role);
	json_dev(t, pt, &pt->tp.total);
	tport_json_pool(stdout, &pt->tp);
	tport_json_audit(stdout, &pt->tp);
	if (pt == &t->peer) {
		struct peer_sum ps;

		peer_sum(t, &ps);
		printf(",\"received\":{\"packets\":%llu,\"bytes\":%llu,"
		       "\"other\":%llu",
		       (unsigned long long)ps.packets,
		       (unsigned long long)ps.bytes,
		       (unsigned long long)ps.other);
		if (ps.have)
			printf(",\"dst\":\"%s\",\"src\":\"%s\"", ps.dst,
			       ps.src);
		printf("}");
	}
	printf("}");
}

static void print_totals(struct tool *tool, uint64_t ns)
{
	struct xsk_tool *t = xsk_of(tool);
	uint64_t rx = 0, tx = 0, rx_bytes = 0;
	unsigned int i;
	char a[32], b[32], c[32], d[32], name[16];
	uint64_t bv[TBPF_NVERDICTS];

	tbpf_counts_sum(t->bpfq ? &t->bpfq->n : NULL, t->bpf_nrxq, bv);
	for (i = 0; i < t->nsocks; i++) {
		rx += t->socks[i].total.rx_packets;
		rx_bytes += t->socks[i].total.rx_bytes;
		tx += t->socks[i].total.tx_packets;
	}
	if (!t->o.run.json) {
		for (i = 0; i < t->nsocks; i++) {
			struct sock *s = &t->socks[i];
			const struct xsk_app_audit *au = &s->audit;

			snprintf(name, sizeof(name), "q%u", s->queue);
			print_sock_text(name, bind_name(s),
					s->total.rx_packets,
					s->total.tx_packets, 0);
			if (!t->o.run.verbose)
				continue;
			print_extra_text(&s->xtotal, &s->total, 0);
			if (!s->audit_err)
				printf("  audit: %u chunks: %u fill, %u "
				       "driver, %u free list, %u comp, %u rx "
				       "ring, %u tx ring, %u app; %u "
				       "misplaced\n", au->chunks, au->fill,
				       au->driver, au->free_list, au->comp,
				       au->rx_ring, au->tx_ring, au->app,
				       au->misplaced);
		}
		if (t->nsocks > 1)
			print_sock_text("total", "", rx, tx, 0);
		print_dev_totals_text(t, "port", &t->port);
		if (t->peer.tp.dev) {
			struct peer_sum ps;

			print_dev_totals_text(t, "peer", &t->peer);
			peer_sum(t, &ps);
			printf("  received %s packets", tstats_fmt_count(
			       a, sizeof(a), ps.packets));
			if (ps.have)
				printf(", to %s from %s", ps.dst, ps.src);
			printf(", %s with other addresses\n",
			       tstats_fmt_count(b, sizeof(b), ps.other));
		}
		for (i = 0; i < t->nfeeds; i++)
			print_dev_totals_text(t, "feed", &t->feeds[i]);
		printf("received %s (%s pps), sent %s (%s pps)\n",
		       tstats_fmt_count(a, sizeof(a), rx),
		       tstats_fmt_rate(b, sizeof(b), rx, ns),
		       tstats_fmt_count(c, sizeof(c), tx),
		       tstats_fmt_rate(d, sizeof(d), tx, ns));
		if (t->bpf.prog)
			tbpf_report_text(stdout, &t->bpf, bv);
		return;
	}
	printf(",\"mode\":\"%s\",\"batch\":%u,\"frames\":%u,"
	       "\"frame_size\":%u,\"unaligned\":%s,\"need_wakeup\":%s,"
	       "\"poll\":%s,\"rx_packets\":%llu,\"rx_bytes\":%llu,"
	       "\"tx_packets\":%llu,\"rx_pps\":%.1f,\"tx_pps\":%.1f,"
	       "\"sockets\":[", mode_name(t->mode), t->o.batch, t->o.frames,
	       t->o.frame_size, t->o.unaligned ? "true" : "false",
	       t->o.no_need_wakeup ? "false" : "true",
	       t->o.poll ? "true" : "false", (unsigned long long)rx,
	       (unsigned long long)rx_bytes, (unsigned long long)tx,
	       tstats_rate(rx, ns), tstats_rate(tx, ns));
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];
		const struct xsk_app_audit *au = &s->audit;

		printf("%s{\"queue\":%u,\"bind\":\"%s\",", i ? "," : "",
		       s->queue, bind_name(s));
		json_xsk(&s->xtotal);
		printf(",");
		json_app(&s->total);
		if (!s->audit_err)
			printf(",\"audit\":{\"chunks\":%u,\"fill\":%u,"
			       "\"driver\":%u,\"free_list\":%u,\"comp\":%u,"
			       "\"rx_ring\":%u,\"tx_ring\":%u,\"app\":%u,"
			       "\"misplaced\":%u}", au->chunks, au->fill,
			       au->driver, au->free_list, au->comp,
			       au->rx_ring, au->tx_ring, au->app,
			       au->misplaced);
		printf("}");
	}
	printf("],\"port\":");
	json_dev_totals(t, "port", &t->port);
	if (t->peer.tp.dev) {
		printf(",\"peer\":");
		json_dev_totals(t, "peer", &t->peer);
	}
	printf(",\"feeds\":[");
	for (i = 0; i < t->nfeeds; i++) {
		printf("%s", i ? "," : "");
		json_dev_totals(t, "feed", &t->feeds[i]);
	}
	printf("]");
	if (t->bpf.prog) {
		printf(",\"bpf\":");
		tbpf_report_json(stdout, &t->bpf, bv);
	}
	printf("}\n");
}

#undef FMT

/* ---- the run loop -------------------------------------------------------- */

/* What --count counts: packets received (txonly: sent). */
static uint64_t done_total(struct tool *tool)
{
	const struct xsk_tool *t = xsk_of(tool);
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < t->nsocks; i++) {
		const struct xsk_app *a = &t->socks[i].app;

		n += __atomic_load_n(t->mode == XSK_APP_TXONLY ?
				     &a->st.tx_packets : &a->st.rx_packets,
				     __ATOMIC_RELAXED);
	}
	return n;
}

static bool all_sent(const struct xsk_tool *t)
{
	unsigned int i;

	for (i = 0; i < t->nsocks; i++)
		if (!xsk_app_done(&t->socks[i].app))
			return false;
	return true;
}

/*
 * The run loop's (tools/lib/tool.c) first samples: the counters the first
 * interval is taken from. The checks of --count and --tx-count: every
 * 10 ms.
 */
static void run_start(struct tool *tool)
{
	struct xsk_tool *t = xsk_of(tool);
	unsigned int i;

	tdev_counters_read(t->port.tp.dev, &t->port.tp.last);
	if (t->peer.tp.dev)
		tdev_counters_read(t->peer.tp.dev, &t->peer.tp.last);
	for (i = 0; i < t->nfeeds; i++)
		tdev_counters_read(t->feeds[i].tp.dev, &t->feeds[i].tp.last);
	if (t->o.run.count || t->o.tx_count || t->finite)
		tool->check_ns = COUNT_CHECK_MS * 1000000ULL;
}

/* PORT's source handed out its last packet (false if it never ends). */
static bool source_done(const struct xsk_tool *t)
{
	struct uxdp_dev *dev = t->port.tp.dev;

	return t->pcap_replay ? uxdp_pcap_done(dev) : uxdp_null_done(dev);
}

static const char *run_check(struct tool *tool, unsigned int ev)
{
	struct xsk_tool *t = xsk_of(tool);
	uint64_t now = tool->wait.now;

	if (t->o.tx_count && all_sent(t))
		return "tx-count";
	if (ev & TOOL_WAIT_END)
		return TOOL_STOP_DURATION;
	/* Without this, -c N null:g,count=N ran for ever once the socket
	 * dropped one (rx_ring_full): the count can no longer be met. */
	return tool_drain_after(t->finite && source_done(t), &t->source_end,
				now, "end of source");
}

/* ---- teardown ------------------------------------------------------------ */

/*
 * Before the peer's poll thread stops: what PORT sent is on its way to the
 * peer (in an in-process veth's ring, a kernel queue), and the peer's
 * thread is still taking it. Wait until the peer has received as many as
 * PORT transmitted, at most PEER_SETTLE_MS: a --tx-count run stopped at
 * once left up to a ring of them to the peer's down (counted in drained,
 * and missing from what the peer received).
 */
static void peer_settle(struct xsk_tool *t)
{
	struct tdev_counters pc, pp;
	uint64_t t0 = tstats_now_ns();
	const struct timespec ms = { 0, 1000000 };

	if (!t->peer.tp.dev || !t->peer.group)
		return;
	while (!tdev_counters_read(t->port.tp.dev, &pc) &&
	       !tdev_counters_read(t->peer.tp.dev, &pp) &&
	       pp.rx.packets < pc.tx.packets &&
	       tstats_now_ns() - t0 < PEER_SETTLE_MS * 1000000ULL)
		nanosleep(&ms, NULL);
}

/*
 * In an order that loses nothing: the feeds first (no more traffic in),
 * then the application threads (nothing touches the sockets' rings), then
 * the poll threads (nothing polls), then every device down. What is left
 * in flight is where the audit finds it.
 */
static void stop_all(struct xsk_tool *t)
{
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < t->nfeeds; i++) {
		uxdp_poll_group_destroy(t->feeds[i].group);
		t->feeds[i].group = NULL;
	}
	/* Published before the eventfd write that wakes the sleepers, so
	 * they find it set when they wake; what the threads did is ordered
	 * by the joins below, not by this. */
	__atomic_store_n(&t->stop_flag, 1, __ATOMIC_RELEASE);
	if (t->stop_fd >= 0 && write(t->stop_fd, &one, sizeof(one)) < 0) {
		/* Cannot fail: one write to a fresh eventfd. */
	}
	for (i = 0; t->socks && i < t->nsocks; i++) {
		if (t->socks[i].running)
			pthread_join(t->socks[i].thread, NULL);
		t->socks[i].running = false;
	}
	for (i = 0; t->socks && i < t->nsocks; i++) {
		uxdp_poll_group_destroy(t->socks[i].group);
		t->socks[i].group = NULL;
	}
	peer_settle(t);
	uxdp_poll_group_destroy(t->peer.group);
	t->peer.group = NULL;
}

/* Down, then the totals, the pool counters and the audit. */
static void dev_totals(struct port *pt)
{
	if (!pt->tp.dev)
		return;
	uxdp_dev_down(pt->tp.dev);
	tport_final(PROG_NAME, &pt->tp);
}

static void collect_totals(struct tool *tool)
{
	struct xsk_tool *t = xsk_of(tool);
	unsigned int i;
	int n;

	stop_all(t);
	dev_totals(&t->port);
	dev_totals(&t->peer);
	for (i = 0; i < t->nfeeds; i++)
		dev_totals(&t->feeds[i]);
	for (i = 0; i < t->nsocks; i++) {
		struct sock *s = &t->socks[i];

		xsk_app_stats_read(&s->app, &s->total);
		uxdp_xsk_stats(s->app.xsk, &s->xtotal);
		n = xsk_app_audit(&s->app, &s->audit);
		s->audit_err = n < 0;
		if (n < 0)
			tmsg(PROG_NAME, "socket on queue %u: audit: %s",
			     s->queue, strerror(-n));
		else if (n)
			tmsg(PROG_NAME, "WARNING: socket on queue %u: %u of %u "
			     "UMEM chunks misplaced (in no place or in two): a "
			     "bug, please report it", s->queue,
			     s->audit.misplaced, s->audit.chunks);
	}
	if (t->mode == XSK_APP_TXONLY && t->port.tp.total.rx.packets)
		tmsg(PROG_NAME, "txonly: %s received %llu packets and dropped "
		     "them (a generator? null:NAME,sink is a sink only)",
		     uxdp_dev_name(t->port.tp.dev),
		     (unsigned long long)t->port.tp.total.rx.packets);
}

static void teardown(struct tool *tool)
{
	struct xsk_tool *t = xsk_of(tool);
	unsigned int i;
	int err;

	stop_all(t);
	/* The sockets before their device. */
	for (i = 0; t->socks && i < t->nsocks; i++) {
		if (!t->socks[i].app_ok)
			continue;
		err = xsk_app_fini(&t->socks[i].app);
		if (err)
			tmsg(PROG_NAME, "socket on queue %u: %s",
			     t->socks[i].queue, tports_why(err));
	}
	for (i = 0; i < t->nfeeds; i++)
		uxdp_dev_destroy(t->feeds[i].tp.dev);
	uxdp_dev_destroy(t->peer.tp.dev);
	uxdp_dev_destroy(t->port.tp.dev);
	/* And what they made along (a veth port's peer). */
	for (i = 1; t->scanned && i <= DEV_SCAN_MAX; i++) {
		struct uxdp_dev *d = uxdp_dev_get_by_index(i);

		if (d && !t->before[i - 1])
			uxdp_dev_destroy(d);
	}
	uxdp_map_destroy(t->xskmap);
	uxdp_map_destroy(t->feedmap);
	free(t->peer_counts);
	free(t->bpfq);
	tbpf_close(&t->bpf);
	free(t->socks);
	if (t->stop_fd >= 0)
		close(t->stop_fd);
}

static const struct tool_ops xsk_ops = {
	.parse = parse_args,
	.setup = setup,
	.header = print_header,
	.start = run_start,
	.interval = print_interval,
	.count = done_total,
	.check = run_check,
	.collect = collect_totals,
	.totals = print_totals,
	.teardown = teardown,
};

int main(int argc, char **argv)
{
	static struct xsk_tool t = {
		.tool = TOOL_INIT(PROG_NAME, &t.o.run),
		.stop_fd = -1,
	};

	return tool_main(&t.tool, &xsk_ops, argc, argv);
}
