/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-fwd: forward packets between two ports, or reflect them on one,
 * running an XDP-style program on every packet.
 *
 *	uxdp-fwd [options] PORT [PORT]
 *
 * One port: its program sends every packet back out of it (XDP_TX). Two
 * ports A and B: A's program redirects to B through a one-slot redirect
 * map, B's to A, each with its own map. Poll groups (one thread each, one
 * by default) poll every RX queue; the main thread only waits for a
 * signal, the stats tick or the end, and prints.
 *
 * The file reads top to bottom: options, ports, programs, setup, the run
 * loop's steps with their output, teardown. main() itself and its run loop
 * (tool.c), option parsing (params.c), ports and their reports (ports.c,
 * report.c), the kernel's socket counters (xskstats.c) and the counter
 * plumbing (stats.c) live in tools/lib/, shared with the other tools.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uxdp/uxdp.h>
/* uxdp_port_parse(): the one parser of port strings, which the options
 * below edit (--queues, --copy, ...). */
#include <uxdp/driver.h>

#include "bpfmaps.h"
#include "bpfprog.h"
#include "link.h"
#include "params.h"
#include "ports.h"
#include "report.h"
#include "stats.h"
#include "tool.h"
#include "xskstats.h"

#define PROG_NAME	"uxdp-fwd"
#define MAX_PORTS	2
#define MAX_THREADS	64
/* How often --count is checked, and the run loop's longest sleep. */
#define COUNT_CHECK_MS	10
/* The ports' links are asked at every link event, and this often in any
 * case (a netlink message the kernel could not queue is a change missed). */
#define LINK_CHECK_MS	500
/* The -v lines' name column: "  rx.packets      1,000". */
#define NAME_COLS	23

/* ---- options ------------------------------------------------------------- */

struct fwd_opts {
	const char *prog;	/* built-in, FILE.so:NAME or FILE.o[:NAME] */
	const char *prog_args;
	const char *engine;	/* FILE.o only */
	struct tparam_strs map_file, map_elem, dump_map;	/* FILE.o only */
	struct tool_opts run;	/* count: packets received */
	uint32_t threads;
	const char *cpus;
	uint32_t budget;
	uint32_t bulk;
	uint32_t queues;	/* kernel and veth ports only */
	uint32_t batch;		/* afxdp ports only */
	uint32_t busy_poll;	/* afxdp ports only */
	bool copy, zero_copy;	/* afxdp ports only */
	bool wait_link;
};

#define OPT(name, key, type, field, mv, lo, hi, help) \
	TPARAM(name, key, type, struct fwd_opts, field, mv, lo, hi, help)

static const struct tparam opt_defs[] = {
	OPT("prog", 'p', TPARAM_STR, prog, "PROG", 0, 0,
	    "the program run on every packet: fwd, macswap, drop, count, "
	    "FILE.so:NAME, a program built with UXDP_PROG_DEFINE, or "
	    "FILE.o[:NAME], an XDP eBPF object's program (default fwd)"),
	OPT("prog-args", 'a', TPARAM_STR, prog_args, "ARGS", 0, 0,
	    "passed to a FILE.so:NAME program's init (default none)"),
	OPT("engine", 'e', TPARAM_STR, engine, "ENGINE", 0, 0,
	    "a FILE.o program's engine: jit, interp, or default (the JIT "
	    "where there is one, else the interpreter) (default default)"),
	OPT("map", 0, TPARAM_STRS, map_file, "NAME=FILE.json", 0, 0,
	    "a FILE.o program's map: " TMAP_HELP_MAP),
	OPT("map-elem", 0, TPARAM_STRS, map_elem, "NAME:KEY=VALUE", 0, 0,
	    "a FILE.o program's map: " TMAP_HELP_ELEM),
	OPT("dump-map", 0, TPARAM_STRS, dump_map, "NAME[=FILE]", 0, 0,
	    "a FILE.o program's map: " TMAP_HELP_DUMP),
	TOOL_OPT_DURATION(struct fwd_opts, run),
	OPT("count", 'c', TPARAM_U64, run.count, "N", 0, UINT64_MAX,
	    "stop once the ports have received N packets in all, each "
	    "given its verdict; checked every 10 ms, so the totals may show "
	    "a few more (default 0: no limit)"),
	TOOL_OPT_INTERVAL(struct fwd_opts, run),
	OPT("threads", 't', TPARAM_U32, threads, "N", 1, MAX_THREADS,
	    "poll threads; the ports' RX queues are dealt round-robin to "
	    "them (default 1: one thread polls every queue)"),
	OPT("cpus", 0, TPARAM_STR, cpus, "LIST", 0, 0,
	    "pin poll thread i to the i-th CPU of LIST (\"0,2-3\"); sets "
	    "--threads to the number of CPUs listed (default: not pinned)"),
	OPT("budget", 0, TPARAM_U32, budget, "N", 1, 4096,
	    "packets polled from one queue at a time before the next queue "
	    "(default 64, NAPI's)"),
	OPT("bulk", 0, TPARAM_U32, bulk, "N", 1, UXDP_BULK_SIZE,
	    "frames per transmit call into the egress port, 1 (no bulking) "
	    "to 16 (default 16)"),
	OPT("queues", 0, TPARAM_U32, queues, "N", 1, 256,
	    "RX queues per port: an afxdp port without @Q gets @0-(N-1), a "
	    "veth port without queues= gets queues=N; other kinds have no "
	    "such choice (default: the port's own)"),
	OPT("batch", 'b', TPARAM_U32, batch, "N", 64, 65536,
	    "afxdp ports: size of the kernel's RX and TX rings (rx_size=N, "
	    "tx_size=N), a power of two: the most packets the kernel can "
	    "batch up between two polls (default: the driver's)"),
	OPT("busy-poll", 0, TPARAM_U32, busy_poll, "BUDGET", 1, 65535,
	    "afxdp ports: busy polling, BUDGET packets per busy poll "
	    "(busy_poll=BUDGET) (default off)"),
	OPT("copy", 0, TPARAM_FLAG, copy, NULL, 0, 0,
	    "afxdp ports: copy mode (default: zero-copy where the driver "
	    "can)"),
	OPT("zero-copy", 0, TPARAM_FLAG, zero_copy, NULL, 0, 0,
	    "afxdp ports: zero-copy mode, fail where the driver cannot"),
	TOOL_OPT_JSON(struct fwd_opts, run),
	TOOL_OPT_QUIET(struct fwd_opts, run),
	OPT("wait-link", 0, TPARAM_FLAG, wait_link, NULL, 0, 0,
	    "a port whose interface is deleted: wait for one of that name "
	    "to come back and bind to it (default: say so and exit, status "
	    "1)"),
	OPT("verbose", 'v', TPARAM_FLAG, run.verbose, NULL, 0, 0,
	    "every non-zero counter, the set-up on stderr, notes about "
	    "options that do not apply to a port"),
	TPARAM_HELP_ROW,
};

static void more_help(FILE *f);

static struct tparams params = {
	.prog = PROG_NAME,
	.synopsis = "[options] PORT [PORT]",
	.about = "With one PORT, reflect: every packet goes back out of the "
		 "port it came in on (XDP_TX). With two, forward each way "
		 "between them (XDP_REDIRECT through a redirect map). The "
		 "program decides per packet; live stats every interval, "
		 "totals at the end.",
	TPARAMS_DEFS(opt_defs),
	.more_help = more_help,
};

/* ---- programs ------------------------------------------------------------ */

/*
 * What a program on a port needs: where "forward" goes. The other port's
 * redirect map, or NULL when reflecting (XDP_TX out of the same port).
 */
struct fwd_priv {
	struct uxdp_map *map;
	struct uxdp_prog *user;	/* a FILE.so:NAME program */
};

static inline uint32_t forward(const struct fwd_priv *p)
{
	/* Slot 0 holds the other port. Were it empty (the port destroyed
	 * under us), the fallback verdict drops the packet, and the miss
	 * is counted (redirect_miss). */
	return p->map ? uxdp_redirect_map(p->map, 0, UXDP_DROP) : UXDP_TX;
}

static uint32_t prog_fwd(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	return forward(priv);
}

static uint32_t prog_macswap(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *eth = ctx->data, tmp[6];

	if (eth + 14 > (unsigned char *)ctx->data_end)
		return UXDP_ABORTED;	/* counted: not an Ethernet frame */
	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);
	return forward(priv);
}

static uint32_t prog_drop(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_DROP;
}

/* The count program's counters: one per RX queue, each written by the
 * queue's poller only and read by the main thread, on a line of its own
 * so two pollers do not share one. */
struct qcount {
	uint64_t packets;
	uint64_t bytes;
} __attribute__((aligned(UXDP_CACHE_LINE)));

static uint32_t prog_count(struct uxdp_buff *ctx, void *priv)
{
	struct qcount *c = priv;
	uint64_t len = (uint64_t)((char *)ctx->data_end - (char *)ctx->data);

	/* One writer: a plain add would do, but the main thread reads
	 * while this runs, so both sides use (relaxed) atomics. */
	__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->bytes, c->bytes + len, __ATOMIC_RELAXED);
	return UXDP_DROP;
}

/*
 * A program from a shared object or an eBPF object: its verdicts are
 * carried out as they are, except PASS. A forwarder has no stack to pass a packet to, so PASS
 * means "let it through": forwarded to the other port, or reflected. A
 * program that drops what it does not like and passes the rest is a
 * filter between the two ports.
 */
static uint32_t prog_file(struct uxdp_buff *ctx, void *priv)
{
	const struct fwd_priv *p = priv;
	uint32_t v = uxdp_prog_run(p->user, ctx);

	return v == UXDP_PASS ? forward(p) : v;
}

/* An eBPF program's queue: its verdicts counted (the report at the end),
 * the port's fwd_priv for where PASS goes. */
struct bpf_queue {
	struct tbpf_qcount n;
	const struct fwd_priv *p;
} __attribute__((aligned(UXDP_CACHE_LINE)));

static uint32_t prog_bpf(struct uxdp_buff *ctx, void *priv)
{
	struct bpf_queue *q = priv;
	uint32_t v = uxdp_prog_run(q->p->user, ctx);

	tbpf_count(&q->n, v);
	return v == UXDP_PASS ? forward(q->p) : v;
}

enum prog_id {
	PROG_FWD, PROG_MACSWAP, PROG_DROP, PROG_COUNT, PROG_FILE, PROG_BPF
};

static const struct {
	const char *name;
	uxdp_prog_fn fn;
	const char *help;
} builtin_progs[] = {
	[PROG_FWD] = { "fwd", prog_fwd,
		       "forward to the other port, or reflect (XDP_TX) on "
		       "one" },
	[PROG_MACSWAP] = { "macswap", prog_macswap,
			   "swap the Ethernet source and destination, then "
			   "forward as fwd does" },
	[PROG_DROP] = { "drop", prog_drop, "drop every packet" },
	[PROG_COUNT] = { "count", prog_count,
			 "count packets and bytes per port (in the "
			 "program), then drop" },
};

#define NBUILTIN	(sizeof(builtin_progs) / sizeof(builtin_progs[0]))

/* ---- state --------------------------------------------------------------- */

/*
 * The kernel's counters of an afxdp port: XDP_STATISTICS of its AF_XDP
 * sockets, summed over its queues (xskstats.h), and the driver program's
 * count of packets it passed to the stack because their queue had no
 * socket: counter k of the output is socket counter k, then no_socket.
 */
struct kcounters {
	struct uxdp_xsk_stats x;
	uint64_t no_socket;
};

#define KS_N	(TXSK_NSTATS + 1)
/* Subtracted as words (tstats_words_sub). */
_Static_assert(sizeof(struct kcounters) == KS_N * sizeof(uint64_t),
	       "struct kcounters is not all 64-bit counters");

static const char *kstat_name(unsigned int k)
{
	return k < TXSK_NSTATS ? txsk_fields[k].name : "no_socket";
}

/* A packet or a descriptor lost, or a packet that went elsewhere. */
static bool kstat_loss(unsigned int k)
{
	return k < TXSK_NSTATS ? txsk_fields[k].loss : true;
}

static uint64_t kstat_value(const struct kcounters *kc, unsigned int k)
{
	return k < TXSK_NSTATS ? txsk_stat(&kc->x, k) : kc->no_socket;
}

struct port {
	/* spec as given, str with the options applied; its counters at the
	 * previous tick and at the end, pool counters and audit. */
	struct tport tp;
	char str[UXDP_PORT_STR_MAX];
	char kind[UXDP_PORT_KIND_MAX];
	/* Opening a veth port makes the pair: the other end is ours to
	 * destroy too (unless it is the other port). */
	struct uxdp_dev *veth_peer;
	struct uxdp_map *map;		/* holds the other port */
	struct fwd_priv priv;
	struct qcount *counts;		/* --prog count: one per RX queue */
	struct bpf_queue *bpfq;		/* --prog FILE.o: one per RX queue */
	uint32_t nrxq;

	/* A pcap port with a file to replay: the tool stops when every
	 * such port is done (uxdp_pcap_done). */
	bool replay;

	/* An afxdp port: what the driver obtained from the kernel, read
	 * once the port is up, and the kernel's counters of its sockets
	 * (at the previous tick, and at the end, in all and per queue). */
	bool afxdp;
	bool xinfo_ok, ktotal_ok;
	struct uxdp_afxdp_info xinfo;
	struct kcounters klast, ktotal;
	struct uxdp_afxdp_queue_stats xq[UXDP_AFXDP_MAX_QUEUES];
	uint32_t nxq;
	/* -v: uxdp_afxdp_print() while still up, shown after the totals. */
	char *xdump;
	size_t xdump_len;

	/* The link under the port, as last seen (check_links()): a port
	 * whose link went down or away is down (its frames given back and
	 * counted, nothing polled or kicked) until the link is back. */
	struct uxdp_link_info link;
	bool link_down;			/* we took the port down for it */
	bool up_failed;			/* said once, until it works */
};

struct fwd {
	struct tool tool;		/* the run (tools/lib/tool.h) */
	struct fwd_opts o;
	enum prog_id prog_id;
	char prog_file[UXDP_PORT_STR_MAX];	/* FILE of FILE.so:NAME */
	const char *prog_name;			/* NAME of FILE.so:NAME */
	struct uxdp_prog *user;			/* loaded from prog_file */
	struct tbpf_spec bpf_spec;		/* --prog FILE.o[:NAME] */
	struct tbpf_prog bpf;			/* loaded from it */
	struct tmap_opts maps;			/* --map, --dump-map */

	struct port ports[MAX_PORTS];
	unsigned int nports;
	struct tdev_names names;

	uint32_t cpus[MAX_THREADS];
	unsigned int ncpus;
	struct uxdp_poll_group *groups[MAX_THREADS];
	unsigned int ngroups;		/* running */
	unsigned int nthreads;		/* as set up, for the output */

	int linkfd;			/* link events (tools/lib/link.h) */
	uint64_t link_next;		/* ns: when links are asked next */
	bool replay;			/* a port replays a pcap file */
	uint64_t replay_end;		/* ns: all replayed, stop then */
	bool link_gone;			/* a port's interface deleted */
};

static struct fwd *fwd_of(struct tool *t)
{
	return tool_container_of(t, struct fwd, tool);
}

/* ---- help ---------------------------------------------------------------- */

static void more_help(FILE *f)
{
	static const char *const examples[] = {
		"afxdp:eth0 afxdp:eth1",
		"--prog macswap afxdp:eth0@0",
		"--prog ./filter.so:udp_only afxdp:eth0 afxdp:eth1",
		"--prog xdp_fw.o:xdp_fw afxdp:eth0 afxdp:eth1",
		"--count 5M null:gen,count=5M null:sink,sink",
		NULL,
	};
	unsigned int i;

	tports_help(f);
	fprintf(f, "\nprograms (--prog):\n");
	for (i = 0; i < NBUILTIN; i++) {
		fprintf(f, "  %-13s", builtin_progs[i].name);
		tparams_wrap(f, 15, 15, builtin_progs[i].help);
	}
	fprintf(f, "  FILE.so:NAME\n%15s", "");
	tparams_wrap(f, 15, 15, "the program NAME of FILE (a path with '/', "
		     "or a name the dynamic loader searches for): DROP, TX, "
		     "ABORTED and REDIRECT are carried out as they are, PASS "
		     "forwards (or reflects)");
	fprintf(f, "  FILE.o[:NAME]\n%15s", "");
	tparams_wrap(f, 15, 15, "the XDP program NAME (default: the first) "
		     "of an eBPF object as clang writes it, run by --engine: "
		     "its verdicts as FILE.so's (XDP_TX goes back out of the "
		     "port it came in on); its runs, verdicts and faults are "
		     "in the totals");
	tparams_section(f, "output", "Per interval and port: rx/s received, "
			"fwd/s sent on by the program (XDP_TX or "
			"XDP_REDIRECT), tx/s sent out of the port, drop/s lost "
			"to a verdict or an error, and the mean RX batch "
			"(packets per poll that found any). Non-zero drop "
			"reasons always show; -v shows every non-zero counter. "
			"Totals at the end.");
	tparams_section(f, "exit status", "0 stopped by SIGINT, SIGTERM, "
			"SIGHUP, --duration, --count or the end of every pcap "
			"replay; 1 a port, program or thread could not be set "
			"up, a pcap file could not be read to its end or "
			"written, the output could not be written, or a port's "
			"interface was deleted (without --wait-link); 2 bad "
			"usage (a port string its kind refuses among it).");
	tparams_section(f, "links", "A port whose link goes down goes down "
			"with it (frames for it dropped and counted as down) "
			"and binds again when the link is back, or when its "
			"MTU changes; each change is said once on stderr.");
	tparams_examples(f, PROG_NAME, examples);
}

/* ---- parsing what the table cannot check --------------------------------- */

/* --prog: a built-in name, FILE.o[:NAME], or FILE.so:NAME (split at the
 * last ':'). */
static void parse_prog(struct fwd *f)
{
	const char *spec = f->o.prog ? f->o.prog : "fwd";
	const char *colon;
	unsigned int i;

	if (tbpf_spec_is_object(spec)) {
		tbpf_spec_parse(&params, "--prog", spec, &f->bpf_spec);
		if (f->o.prog_args)
			tparams_fail(&params, "--prog-args: an eBPF program "
				     "takes no arguments");
		/* Checked here: bad usage before any port opens. */
		tbpf_engine_parse(&params, f->o.engine);
		tmap_opts_parse(&params, &f->o.map_file, &f->o.map_elem,
				&f->o.dump_map, &f->maps);
		f->bpf_spec.maps = &f->maps;
		f->prog_id = PROG_BPF;
		return;
	}
	if (f->o.engine)
		tparams_fail(&params, "--engine: only for an eBPF program "
			     "(--prog FILE.o[:NAME])");
	if (f->o.map_file.n || f->o.map_elem.n || f->o.dump_map.n)
		tparams_fail(&params, "--%s: only for an eBPF program "
			     "(--prog FILE.o[:NAME])",
			     f->o.map_file.n ? "map" : f->o.map_elem.n ?
			     "map-elem" : "dump-map");
	for (i = 0; i < NBUILTIN; i++) {
		if (!strcmp(spec, builtin_progs[i].name)) {
			f->prog_id = (enum prog_id)i;
			if (f->o.prog_args)
				tparams_fail(&params, "--prog-args: the "
					     "built-in program '%s' takes no "
					     "arguments", spec);
			return;
		}
	}
	colon = strrchr(spec, ':');
	if (!colon)
		tparams_fail(&params, "--prog '%s': not a built-in program "
			     "(fwd, macswap, drop, count) nor FILE.so:NAME "
			     "nor FILE.o[:NAME]",
			     spec);
	if (colon == spec || !colon[1])
		tparams_fail(&params, "--prog '%s': want FILE.so:NAME, with "
			     "both parts", spec);
	if ((size_t)(colon - spec) >= sizeof(f->prog_file))
		tparams_fail(&params, "--prog: file name longer than %zu "
			     "characters", sizeof(f->prog_file) - 1);
	memcpy(f->prog_file, spec, (size_t)(colon - spec));
	f->prog_file[colon - spec] = '\0';
	f->prog_name = colon + 1;
	f->prog_id = PROG_FILE;
}

/* --cpus 0,2-3: each must be one this process may run on. */
static void parse_cpus(struct fwd *f)
{
	f->ncpus = tparams_parse_cpus(&params, "cpus", f->o.cpus, f->cpus,
				      MAX_THREADS);
	if (tparams_given(&params, "threads") && f->o.threads != f->ncpus)
		tparams_fail(&params, "--threads %u but --cpus lists %u CPU%s",
			     f->o.threads, f->ncpus, f->ncpus == 1 ? "" : "s");
	f->o.threads = f->ncpus;
}

/* ---- ports: the options that belong to a port kind ----------------------- */

/*
 * The kernel-port options become the port's own parameters: the afxdp
 * kind takes afxdp:IFNAME[@Q|@Q1-Q2][,copy|,zerocopy][,busy_poll=N]
 * [,rx_size=N][,tx_size=N], veth takes queues=N. What a port says itself
 * wins over an option. An option that applies to no port at all is an
 * error: the user asked for something that cannot happen. One that
 * applies to one port but not the other is noted with -v.
 */
enum port_opt { PO_QUEUES, PO_COPY, PO_BATCH, PO_BUSY_POLL, PO_N };

static const char *const po_name[PO_N] = {
	[PO_QUEUES] = "queues",
	[PO_COPY] = "copy",		/* or zero-copy */
	[PO_BATCH] = "batch",
	[PO_BUSY_POLL] = "busy-poll",
};

struct port_edit {
	char head[UXDP_PORT_STR_MAX];	/* KIND:ARG[@queues] */
	char tail[UXDP_PORT_STR_MAX];	/* ,params (the port's, then ours) */
};

static void edit_append(struct port *pt, struct port_edit *e,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void edit_append(struct port *pt, struct port_edit *e,
			const char *fmt, ...)
{
	size_t len = strlen(e->tail);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(e->tail + len, sizeof(e->tail) - len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(e->tail) - len)
		tparams_fail(&params, "port '%s': too long with the options' "
			     "parameters added", pt->tp.spec);
}

static void port_prepare(struct fwd *f, struct port *pt, bool applies[PO_N])
{
	const struct fwd_opts *o = &f->o;
	struct uxdp_port parsed;
	struct port_edit e = { { 0 } };
	const char *rest;
	bool afxdp, veth;
	int n;

	tports_check(&params, "", pt->tp.spec);
	uxdp_port_parse(pt->tp.spec, &parsed);	/* checked: it parses */
	snprintf(pt->kind, sizeof(pt->kind), "%s", parsed.kind);
	afxdp = !strcmp(parsed.kind, "afxdp");
	veth = !strcmp(parsed.kind, "veth");

	/* What follows KIND:ARG in the string given: the port's params. */
	rest = pt->tp.spec + strlen(parsed.kind) + 1 + strlen(parsed.arg);
	snprintf(e.head, sizeof(e.head), "%s:%s", parsed.kind, parsed.arg);
	snprintf(e.tail, sizeof(e.tail), "%s", rest);

	if (o->queues) {
		if (afxdp && strchr(parsed.arg, '@')) {
			applies[PO_QUEUES] = true;
			tool_note(&f->tool, "port %s names its queues; "
				  "--queues left out for it", pt->tp.spec);
		} else if (afxdp) {
			size_t len = strlen(e.head);

			applies[PO_QUEUES] = true;
			if (o->queues == 1)
				n = snprintf(e.head + len, sizeof(e.head) - len,
					     "@0");
			else
				n = snprintf(e.head + len, sizeof(e.head) - len,
					     "@0-%u", o->queues - 1);
			if (n < 0 || (size_t)n >= sizeof(e.head) - len)
				tparams_fail(&params, "port '%s': too long",
					     pt->tp.spec);
		} else if (veth) {
			applies[PO_QUEUES] = true;
			if (uxdp_port_get(&parsed, "queues"))
				tool_note(&f->tool, "port %s sets queues "
					  "itself; --queues left out for it",
					  pt->tp.spec);
			else
				edit_append(pt, &e, ",queues=%u", o->queues);
		} else {
			tool_note(&f->tool, "--queues does not apply to %s "
				  "port %s", parsed.kind, pt->tp.spec);
		}
	}
	if (o->copy || o->zero_copy) {
		if (!afxdp) {
			tool_note(&f->tool, "--%s does not apply to %s port %s",
				  o->copy ? "copy" : "zero-copy", parsed.kind,
				  pt->tp.spec);
		} else {
			applies[PO_COPY] = true;
			if (uxdp_port_get(&parsed, "copy") ||
			    uxdp_port_get(&parsed, "zerocopy"))
				tool_note(&f->tool, "port %s chooses copy or "
					  "zero-copy itself; --%s left out for "
					  "it", pt->tp.spec,
					  o->copy ? "copy" : "zero-copy");
			else
				edit_append(pt, &e, ",%s",
					    o->copy ? "copy" : "zerocopy");
		}
	}
	if (o->batch) {
		if (!afxdp) {
			tool_note(&f->tool, "--batch does not apply to %s port "
				  "%s", parsed.kind, pt->tp.spec);
		} else {
			applies[PO_BATCH] = true;
			if (!uxdp_port_get(&parsed, "rx_size"))
				edit_append(pt, &e, ",rx_size=%u", o->batch);
			if (!uxdp_port_get(&parsed, "tx_size"))
				edit_append(pt, &e, ",tx_size=%u", o->batch);
		}
	}
	if (o->busy_poll) {
		if (!afxdp) {
			tool_note(&f->tool, "--busy-poll does not apply to %s "
				  "port %s", parsed.kind, pt->tp.spec);
		} else {
			applies[PO_BUSY_POLL] = true;
			if (uxdp_port_get(&parsed, "busy_poll"))
				tool_note(&f->tool, "port %s sets busy_poll "
					  "itself; --busy-poll left out for it",
					  pt->tp.spec);
			else
				edit_append(pt, &e, ",busy_poll=%u",
					    o->busy_poll);
		}
	}
	n = snprintf(pt->str, sizeof(pt->str), "%s%s", e.head, e.tail);
	if (n < 0 || (size_t)n >= sizeof(pt->str))
		tparams_fail(&params, "port '%s': too long with the options' "
			     "parameters added", pt->tp.spec);
	/* What the options added is checked as the open will see it. */
	if (strcmp(pt->str, pt->tp.spec))
		tports_check(&params, "", pt->str);
}

static void parse_ports(struct fwd *f, int argc, char **argv, int first)
{
	bool applies[PO_N] = { false };
	bool wanted[PO_N];
	unsigned int i;

	if (first >= argc)
		tparams_fail(&params, "no PORT given (one to reflect, two to "
			     "forward between)");
	if (argc - first > MAX_PORTS)
		tparams_fail(&params, "%d ports given: one to reflect, two to "
			     "forward between ('%s' is one too many)",
			     argc - first, argv[first + MAX_PORTS]);
	f->nports = (unsigned int)(argc - first);
	wanted[PO_QUEUES] = f->o.queues;
	wanted[PO_COPY] = f->o.copy || f->o.zero_copy;
	wanted[PO_BATCH] = f->o.batch;
	wanted[PO_BUSY_POLL] = f->o.busy_poll;
	for (i = 0; i < f->nports; i++) {
		f->ports[i].tp.spec = argv[first + i];
		f->ports[i].tp.str = f->ports[i].str;
		port_prepare(f, &f->ports[i], applies);
	}
	for (i = 0; i < PO_N; i++) {
		const char *name = po_name[i];

		if (i == PO_COPY && f->o.zero_copy)
			name = "zero-copy";
		if (wanted[i] && !applies[i])
			tparams_fail(&params, "--%s applies to %s ports only, "
				     "and no port is one", name,
				     i == PO_QUEUES ? "afxdp and veth" :
				     "afxdp");
	}
}

static void parse_args(struct tool *t, int argc, char **argv)
{
	struct fwd *f = fwd_of(t);
	int first;

	first = tparams_parse(&params, argc, argv, &f->o);
	if (f->o.copy && f->o.zero_copy)
		tparams_fail(&params, "--copy and --zero-copy exclude each "
			     "other");
	if (f->o.batch & (f->o.batch - 1))
		tparams_fail(&params, "--batch: %u is not a power of two",
			     f->o.batch);
	if (!f->o.run.interval)
		f->o.run.interval = 1000;
	if (!f->o.threads)
		f->o.threads = 1;
	if (f->o.cpus)
		parse_cpus(f);
	parse_prog(f);
	parse_ports(f, argc, argv, first);
}

/* ---- afxdp ports: what the kernel gave ----------------------------------- */

/*
 * The kernel's counters of afxdp port @pt, summed over its queues, into
 * @kc; each queue's into @perq too, if given (room for pt->nxq). Works up
 * or down: the driver keeps the counts of sockets it closed.
 */
static int afxdp_counters_read(const struct port *pt, struct kcounters *kc,
			       struct uxdp_afxdp_queue_stats *perq)
{
	struct uxdp_afxdp_queue_stats st;
	struct uxdp_afxdp_info in;
	struct uxdp_xsk_stats x;
	uint32_t q;

	memset(kc, 0, sizeof(*kc));
	for (q = 0; q < pt->nxq; q++) {
		if (uxdp_afxdp_queue_stats(pt->tp.dev, q, &st))
			return -1;
		txsk_from_afxdp(&st, &x);
		tstats_words_add(&kc->x, &x, TXSK_NSTATS);
		if (perq)
			perq[q] = st;
	}
	/* Per port, no_socket counts every queue of the interface, the
	 * ones not bound too: that is where packets went to the stack
	 * instead of to uxdp (a queue's own count is in perq). */
	if (uxdp_afxdp_info(pt->tp.dev, &in))
		return -1;
	kc->no_socket = in.no_socket;
	return 0;
}

/*
 * Once afxdp port @pt is up: what the driver obtained (XDP mode, how the
 * program went on, copy or zero-copy, need_wakeup, the queues bound of
 * the interface's), kept for the JSON totals and said in one line on
 * stderr, unless --quiet. The numbers a user would otherwise dig out
 * with ip link and ethtool.
 */
static void afxdp_report_up(const struct fwd *f, struct port *pt)
{
	const struct uxdp_afxdp_info *in = &pt->xinfo;
	const char *name = uxdp_dev_name(pt->tp.dev);

	if (uxdp_afxdp_info(pt->tp.dev, &pt->xinfo)) {
		tmsg(PROG_NAME, "%s: what the kernel gave cannot be read: %s",
		     name, uxdp_errmsg());
		return;
	}
	pt->xinfo_ok = true;
	if (f->o.run.quiet)
		return;
	fprintf(stderr, PROG_NAME ": %s: XDP %s (%s), %s mode, need_wakeup "
		"%s, ", name, uxdp_afxdp_xdp_mode_str(in->xdp_mode),
		uxdp_afxdp_attach_str(in->attach),
		in->zerocopy ? "zero-copy" : "copy",
		in->need_wakeup ? "on" : "off");
	if (in->queues == 1)
		fprintf(stderr, "queue %u", in->first_queue);
	else
		fprintf(stderr, "queues %u-%u", in->first_queue,
			in->first_queue + in->queues - 1);
	if (in->if_rx_queues)
		fprintf(stderr, " bound (of %u)", in->if_rx_queues);
	else
		fprintf(stderr, " bound (of an unknown number)");
	if (strcmp(in->ifname, name))
		fprintf(stderr, " on %s", in->ifname);
	if (in->busy_poll)
		fprintf(stderr, ", busy_poll budget %u", in->busy_poll_budget);
	if (in->shared)
		fprintf(stderr, ", shared UMEM %s", in->group);
	fputc('\n', stderr);
}

/* -v: the driver's own report, taken while the port is still up (the
 * XDP mode and the sockets are gone once it is down). */
static void afxdp_dump(struct port *pt)
{
	FILE *m = open_memstream(&pt->xdump, &pt->xdump_len);

	if (!m)
		return;
	if (uxdp_afxdp_print(pt->tp.dev, m, 0)) {
		fclose(m);
		free(pt->xdump);
		pt->xdump = NULL;
		return;
	}
	if (fclose(m)) {
		free(pt->xdump);
		pt->xdump = NULL;
	}
}

/* ---- setup --------------------------------------------------------------- */

static int open_ports(struct fwd *f)
{
	unsigned int i;

	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];

		pt->tp.dev = tports_open(PROG_NAME, "", pt->str, NULL);
		if (!pt->tp.dev)
			return -1;
		pt->nrxq = uxdp_dev_num_rxq(pt->tp.dev);
		if (!strcmp(uxdp_dev_kind(pt->tp.dev), "veth"))
			pt->veth_peer = uxdp_veth_peer(pt->tp.dev);
		/* A pcap port with nothing to replay is done from the
		 * start (capture only). */
		pt->replay = !strcmp(uxdp_dev_kind(pt->tp.dev), "pcap") &&
			     !uxdp_pcap_done(pt->tp.dev);
		pt->afxdp = !strcmp(uxdp_dev_kind(pt->tp.dev), "afxdp");
		if (pt->afxdp)
			pt->nxq = pt->nrxq < UXDP_AFXDP_MAX_QUEUES ?
				  pt->nrxq : UXDP_AFXDP_MAX_QUEUES;
		tool_note(&f->tool, "port %s: device %s (%s), %u RX / %u TX "
			  "queues", pt->str, uxdp_dev_name(pt->tp.dev),
			  uxdp_dev_kind(pt->tp.dev), pt->nrxq,
			  uxdp_dev_num_txq(pt->tp.dev));
	}
	if (f->nports == 2 && f->ports[0].tp.dev == f->ports[1].tp.dev) {
		tmsg(PROG_NAME, "ports '%s' and '%s' are the same device, %s",
		     f->ports[0].tp.spec, f->ports[1].tp.spec,
		     uxdp_dev_name(f->ports[0].tp.dev));
		/* Destroyed once, at teardown, with its peer. */
		f->ports[1].tp.dev = NULL;
		f->ports[1].veth_peer = NULL;
		return -1;
	}
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];
		unsigned int j;

		/* "veth:a,peer=b veth:b": b is both a's peer and a port. */
		for (j = 0; j < f->nports; j++)
			if (pt->veth_peer == f->ports[j].tp.dev)
				pt->veth_peer = NULL;
	}
	return tports_names_read(PROG_NAME, f->ports[0].tp.dev, &f->names);
}

static int setup_progs(struct fwd *f)
{
	unsigned int i;

	if (f->prog_id == PROG_FILE) {
		f->user = uxdp_prog_load(f->prog_file, f->prog_name,
					 f->o.prog_args);
		if (!f->user) {
			tmsg(PROG_NAME, "--prog %s:%s: %s", f->prog_file,
			     f->prog_name, tports_why(errno));
			return -1;
		}
	}
	if (f->prog_id == PROG_BPF) {
		if (tbpf_load(PROG_NAME, "--prog", &f->bpf_spec,
			      tbpf_engine_parse(&params, f->o.engine),
			      &f->bpf))
			return -1;
		f->user = uxdp_prog_get(f->bpf.prog);
	}
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];
		struct port *other = &f->ports[f->nports - 1 - i];

		if (f->nports == 2) {
			pt->map = uxdp_map_create(1);
			if (!pt->map ||
			    uxdp_map_update(pt->map, 0,
					    uxdp_dev_target(other->tp.dev))) {
				tmsg(PROG_NAME, "redirect map: %s",
				     uxdp_errmsg());
				return -1;
			}
		}
		pt->priv.map = pt->map;
		pt->priv.user = f->user;
		/* The egress port's transmit calls: one per --bulk frames. */
		if (f->o.bulk)
			uxdp_dev_set_bulk(other->tp.dev, f->o.bulk);

		if (f->prog_id == PROG_COUNT) {
			/* Per queue: each counter has one writer. */
			if (tports_attach_each(PROG_NAME, pt->tp.dev, "count",
					       prog_count, sizeof(*pt->counts),
					       (void **)&pt->counts))
				return -1;
		} else if (f->prog_id == PROG_BPF) {
			uint32_t q;

			/* Per queue: each verdict count has one writer. The
			 * ports are not up yet: nothing runs before the
			 * queues know their port. */
			if (tports_attach_each(PROG_NAME, pt->tp.dev,
					       f->bpf.name, prog_bpf,
					       sizeof(*pt->bpfq),
					       (void **)&pt->bpfq))
				return -1;
			for (q = 0; q < pt->nrxq; q++)
				pt->bpfq[q].p = &pt->priv;
		} else if (f->prog_id == PROG_FILE) {
			if (tports_attach(PROG_NAME, pt->tp.dev,
					  UXDP_ALL_QUEUES, f->prog_name,
					  prog_file, &pt->priv))
				return -1;
		} else {
			if (tports_attach(PROG_NAME, pt->tp.dev,
					  UXDP_ALL_QUEUES,
					  builtin_progs[f->prog_id].name,
					  builtin_progs[f->prog_id].fn,
					  &pt->priv))
				return -1;
		}
	}
	return 0;
}

static int setup_groups(struct fwd *f)
{
	unsigned int i, npairs = 0, maxq = 0, g;
	uint32_t q;
	int err;

	for (i = 0; i < f->nports; i++) {
		npairs += f->ports[i].nrxq;
		if (f->ports[i].nrxq > maxq)
			maxq = f->ports[i].nrxq;
	}
	f->ngroups = f->o.threads;
	if (f->ngroups > npairs) {
		tmsg(PROG_NAME, "%u poll threads asked for, but the ports have "
		     "%u RX queue%s: using %u", f->ngroups, npairs,
		     npairs == 1 ? "" : "s", npairs);
		f->ngroups = npairs;
	}
	for (g = 0; g < f->ngroups; g++) {
		int cpu = f->ncpus ? (int)f->cpus[g] : -1;

		f->groups[g] = tports_group_new(PROG_NAME, f->o.budget, cpu);
		if (!f->groups[g])
			return -1;
	}
	/*
	 * Queue-major, round-robin: with two ports and two threads, each
	 * port gets a thread of its own; with more queues, queue i of every
	 * port lands on the same thread, so both directions share its load.
	 */
	g = 0;
	for (q = 0; q < maxq; q++) {
		for (i = 0; i < f->nports; i++) {
			struct port *pt = &f->ports[i];

			if (q >= pt->nrxq)
				continue;
			err = uxdp_poll_group_add(f->groups[g], pt->tp.dev, q);
			if (err) {
				tmsg(PROG_NAME, "poll %s queue %u: %s",
				     uxdp_dev_name(pt->tp.dev), q,
				     tports_why(err));
				return -1;
			}
			tool_note(&f->tool, "thread %u%s polls %s queue %u", g,
				  f->ncpus ? " (pinned)" : "",
				  uxdp_dev_name(pt->tp.dev), q);
			g = (g + 1) % f->ngroups;
		}
	}
	f->nthreads = f->ngroups;
	for (g = 0; g < f->ngroups; g++) {
		err = uxdp_poll_group_start(f->groups[g]);
		if (err) {
			tmsg(PROG_NAME, "starting poll thread %u: %s", g,
			     tports_why(err));
			return -1;
		}
	}
	return 0;
}

static int setup(struct tool *t)
{
	struct fwd *f = fwd_of(t);
	unsigned int i;

	if (open_ports(f) || setup_progs(f))
		return -1;
	for (i = 0; i < f->nports; i++)
		if (tports_up(PROG_NAME, f->ports[i].tp.dev))
			return -1;
	/* Said once every port is up: a failed start says only what
	 * failed. */
	for (i = 0; i < f->nports; i++)
		if (f->ports[i].afxdp)
			afxdp_report_up(f, &f->ports[i]);
	return setup_groups(f);
}

/* ---- output -------------------------------------------------------------- */

/* Lost to a verdict or an error: every frame received ends in exactly one
 * of pass, pass_dropped, drop, tx, redirect, aborted, no_prog, tx_err,
 * redirect_err, redirect_no_target, frame_err (uxdp_rxq_stats). */
static uint64_t rx_lost(const struct uxdp_rxq_stats *rx)
{
	return rx->pass_dropped + rx->drop + rx->aborted + rx->no_prog +
	       rx->tx_err + rx->redirect_err + rx->redirect_no_target +
	       rx->frame_err;
}

static uint64_t rx_fwd(const struct uxdp_rxq_stats *rx)
{
	return rx->tx + rx->redirect;
}

static double rx_batch(const struct uxdp_rxq_stats *rx)
{
	return rx->polls ? (double)rx->packets / (double)rx->polls : 0.0;
}

/* The drop reasons shown whenever they are not zero. */
static const struct {
	const char *label;
	bool tx;		/* in uxdp_txq_stats */
	size_t off;
} reasons[] = {
#define RX_REASON(f) { #f, false, offsetof(struct uxdp_rxq_stats, f) }
#define TX_REASON(f) { "txq_" #f, true, offsetof(struct uxdp_txq_stats, f) }
	RX_REASON(drop),
	RX_REASON(aborted),
	RX_REASON(tx_err),
	RX_REASON(redirect_err),
	RX_REASON(redirect_miss),
	RX_REASON(redirect_no_target),
	RX_REASON(no_prog),
	RX_REASON(frame_err),
	RX_REASON(pass_dropped),
	RX_REASON(drained),
	TX_REASON(full),
	TX_REASON(too_big),
	TX_REASON(down),
	TX_REASON(bad_flags),
#undef RX_REASON
#undef TX_REASON
};

static uint64_t reason_value(const struct tdev_counters *c, unsigned int i)
{
	const char *base = reasons[i].tx ? (const char *)&c->tx :
					   (const char *)&c->rx;
	uint64_t v;

	memcpy(&v, base + reasons[i].off, sizeof(v));
	return v;
}

/*
 * One port's line: rx/s, fwd/s, tx/s, drop/s and the mean RX batch over
 * @ns; with @ns == 0, plain totals. Then the non-zero drop reasons and,
 * with -v, every non-zero counter.
 */
static void print_port_text(const struct fwd *f, const char *name,
			    const struct tdev_counters *d, uint64_t ns)
{
	const char *unit = ns ? "/s" : "";
	char a[32], b[32], c[32], e[32];
	unsigned int i, shown = 0;

#define FMT(buf, v) tstats_fmt(buf, sizeof(buf), v, ns)
	printf("%-10s %13s rx%-2s %13s fwd%-2s %13s tx%-2s %11s drop%-2s "
	       "%5.1f batch\n", name, FMT(a, d->rx.packets), unit,
	       FMT(b, rx_fwd(&d->rx)), unit, FMT(c, d->tx.packets), unit,
	       FMT(e, rx_lost(&d->rx)), unit, rx_batch(&d->rx));
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		uint64_t v = reason_value(d, i);

		if (!v)
			continue;
		printf("%s %s %s%s", shown++ ? "," : "  drops:",
		       reasons[i].label, FMT(a, v), unit);
	}
	if (shown)
		putchar('\n');
#undef FMT
	if (f->o.run.verbose)
		tport_text_counters(stdout, &f->names, d, ns, NAME_COLS);
}

/*
 * An afxdp port's kernel counters: "  kernel: rx_dropped N, ...", lines
 * cut before column 80. Over @ns, as rates, only the non-zero ones, and
 * of those only losses unless -v (the interval lines, like the drops);
 * with @ns == 0 every one, as counts (the totals).
 */
static void print_kernel_text(const struct fwd *f, const struct kcounters *kc,
			      uint64_t ns)
{
	const char *lead = "  kernel:";
	unsigned int k, col = 0, shown = 0;
	char v[32], item[80];

	for (k = 0; k < KS_N; k++) {
		uint64_t val = kstat_value(kc, k);
		int n;

		if (ns && (!val || (!kstat_loss(k) && !f->o.run.verbose)))
			continue;
		n = snprintf(item, sizeof(item), " %s %s%s", kstat_name(k),
			     tstats_fmt(v, sizeof(v), val, ns), ns ? "/s" : "");
		if (n < 0)
			continue;
		if (shown && col + (unsigned int)n + 1 > 79) {
			printf(",\n");
			col = 0;
		} else if (shown) {
			putchar(',');
			col++;
		}
		if (!col)
			col = (unsigned int)printf("%s", lead);
		col += (unsigned int)printf("%s", item);
		shown++;
	}
	if (shown)
		putchar('\n');
}

/* "kernel":{"rx_dropped":N,...} */
static void print_kernel_json(const struct kcounters *kc)
{
	printf("\"kernel\":{");
	txsk_json(stdout, "", &kc->x);
	printf(",\"no_socket\":%llu}", (unsigned long long)kc->no_socket);
}

/* The totals' "afxdp" member: what the driver obtained once up, the
 * kernel's counters in all, and per queue. */
static void print_afxdp_json(const struct port *pt)
{
	const struct uxdp_afxdp_info *in = &pt->xinfo;
	uint32_t q;

	printf(",\"afxdp\":{");
	if (pt->xinfo_ok) {
		printf("\"ifname\":");
		tjson_str(stdout, in->ifname);
		printf(",\"xdp_mode\":");
		tjson_str(stdout, uxdp_afxdp_xdp_mode_str(in->xdp_mode));
		printf(",\"attach\":");
		tjson_str(stdout, uxdp_afxdp_attach_str(in->attach));
		printf(",\"prog_id\":%u,\"zerocopy\":%s,\"need_wakeup\":%s,"
		       "\"busy_poll\":%s,\"busy_poll_budget\":%u,"
		       "\"first_queue\":%u,\"queues\":%u,"
		       "\"if_rx_queues\":%u,\"if_tx_queues\":%u,"
		       "\"rx_size\":%u,\"tx_size\":%u,\"frames\":%u,"
		       "\"chunk_size\":%u,\"shared\":",
		       in->prog_id, in->zerocopy ? "true" : "false",
		       in->need_wakeup ? "true" : "false",
		       in->busy_poll ? "true" : "false", in->busy_poll_budget,
		       in->first_queue, in->queues, in->if_rx_queues,
		       in->if_tx_queues, in->rx_size, in->tx_size, in->frames,
		       in->chunk_size);
		if (in->shared)
			tjson_str(stdout, in->group);
		else
			printf("null");
		printf(",");
	}
	if (pt->ktotal_ok) {
		print_kernel_json(&pt->ktotal);
		printf(",\"per_queue\":[");
		for (q = 0; q < pt->nxq; q++) {
			struct uxdp_xsk_stats x;

			txsk_from_afxdp(&pt->xq[q], &x);
			printf("%s{\"queue\":%u", q ? "," : "",
			       pt->xq[q].queue);
			txsk_json(stdout, ",", &x);
			printf(",\"no_socket\":%llu}",
			       (unsigned long long)pt->xq[q].no_socket);
		}
		printf("]");
	}
	printf("}");
}

static void print_port_json_head(const struct port *pt)
{
	printf("{");
	tport_json_id(stdout, &pt->tp);
}

static void print_interval(struct tool *t, uint64_t ns)
{
	struct fwd *f = fwd_of(t);
	unsigned int i, shown = 0;

	if (f->o.run.json)
		printf("\"ports\":[");
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];
		struct tdev_counters d;
		struct kcounters now_k, dk;
		bool k_ok = false;

		if (tport_delta(&pt->tp, &d))
			continue;	/* bad queue: cannot happen here */
		if (pt->afxdp && !afxdp_counters_read(pt, &now_k, NULL)) {
			tstats_words_sub(&dk, &now_k, &pt->klast, KS_N);
			pt->klast = now_k;
			k_ok = true;
		}
		if (!f->o.run.json) {
			print_port_text(f, uxdp_dev_name(pt->tp.dev), &d, ns);
			if (k_ok)
				print_kernel_text(f, &dk, ns);
			continue;
		}
		printf("%s", shown++ ? "," : "");
		print_port_json_head(pt);
		printf(",\"rx_pps\":%.1f,\"fwd_pps\":%.1f,\"tx_pps\":%.1f,"
		       "\"drop_pps\":%.1f,\"rx_batch\":%.2f,",
		       tstats_rate(d.rx.packets, ns),
		       tstats_rate(rx_fwd(&d.rx), ns),
		       tstats_rate(d.tx.packets, ns),
		       tstats_rate(rx_lost(&d.rx), ns), rx_batch(&d.rx));
		tport_json_counters(stdout, &f->names, &d);
		if (k_ok) {
			printf(",\"afxdp\":{");
			print_kernel_json(&dk);
			printf("}");
		}
		printf("}");
	}
	if (f->o.run.json)
		printf("]}\n");
}

/*
 * A replay that stopped on a broken record, or a capture that could not
 * be written: said on stderr, and the exit status is 1 (the totals above
 * are right, the files are not what was asked for).
 */
static int pcap_errors(const struct fwd *f)
{
	struct uxdp_pcap_stats st;
	unsigned int i;
	int bad = 0;

	for (i = 0; i < f->nports; i++) {
		const struct port *pt = &f->ports[i];

		if (!pt->tp.dev || strcmp(uxdp_dev_kind(pt->tp.dev), "pcap") ||
		    uxdp_pcap_stats(pt->tp.dev, &st))
			continue;
		if (st.replay_error[0]) {
			tmsg(PROG_NAME, "port '%s': replay stopped after %llu "
			     "records: %s", pt->tp.spec,
			     (unsigned long long)st.records, st.replay_error);
			bad = 1;
		}
		if (st.capture_error[0]) {
			tmsg(PROG_NAME, "port '%s': capture: %s (%llu frames "
			     "not written)", pt->tp.spec, st.capture_error,
			     (unsigned long long)st.capture_errors);
			bad = 1;
		}
	}
	return bad;
}

static void print_header(struct tool *t)
{
	const struct fwd *f = fwd_of(t);
	const char *prog = f->prog_id >= PROG_FILE ? f->o.prog :
			   builtin_progs[f->prog_id].name;

	if (f->nports == 1)
		printf(PROG_NAME ": reflecting on %s with %s",
		       uxdp_dev_name(f->ports[0].tp.dev), prog);
	else
		printf(PROG_NAME ": forwarding %s <-> %s with %s",
		       uxdp_dev_name(f->ports[0].tp.dev),
		       uxdp_dev_name(f->ports[1].tp.dev), prog);
	printf(", %u poll thread%s", f->nthreads, f->nthreads == 1 ? "" : "s");
}

/* An eBPF program's verdicts over both ports, into @v. */
static void bpf_verdicts(const struct fwd *f, uint64_t v[TBPF_NVERDICTS])
{
	uint64_t one[TBPF_NVERDICTS];
	unsigned int i, k;

	memset(v, 0, TBPF_NVERDICTS * sizeof(v[0]));
	for (i = 0; i < f->nports; i++) {
		tbpf_counts_sum(&f->ports[i].bpfq->n, f->ports[i].nrxq, one);
		for (k = 0; k < TBPF_NVERDICTS; k++)
			v[k] += one[k];
	}
}

/* The totals, read after the poll threads stopped and the ports went
 * down: final, and they add up. */
static void print_totals(struct tool *t, uint64_t ns)
{
	struct fwd *f = fwd_of(t);
	uint64_t received = 0, forwarded = 0, lost = 0, passed = 0, kdrop = 0;
	uint64_t bv[TBPF_NVERDICTS];
	char a[32], b[32], c[32], r[32];
	unsigned int i, j;

	for (i = 0; i < f->nports; i++) {
		const struct port *pt = &f->ports[i];
		const struct uxdp_rxq_stats *rx = &pt->tp.total.rx;

		received += rx->packets;
		forwarded += rx_fwd(rx);
		lost += rx_lost(rx);
		passed += rx->pass;
		/* What the kernel dropped before uxdp could receive it: no
		 * fill buffer (rx_dropped) or a full RX ring. */
		if (pt->ktotal_ok)
			kdrop += pt->ktotal.x.rx_dropped +
				 pt->ktotal.x.rx_ring_full;
	}
	lost += kdrop;
	if (f->prog_id == PROG_BPF)
		bpf_verdicts(f, bv);
	if (!f->o.run.json) {
		for (i = 0; i < f->nports; i++) {
			struct port *pt = &f->ports[i];

			print_port_text(f, uxdp_dev_name(pt->tp.dev),
					&pt->tp.total, 0);
			if (pt->ktotal_ok)
				print_kernel_text(f, &pt->ktotal, 0);
			if (pt->counts) {
				uint64_t p = 0, bytes = 0;

				for (j = 0; j < pt->nrxq; j++) {
					p += pt->counts[j].packets;
					bytes += pt->counts[j].bytes;
				}
				printf("  counted %s packets, %s bytes\n",
				       tstats_fmt_count(a, sizeof(a), p),
				       tstats_fmt_count(b, sizeof(b), bytes));
			}
			if (f->o.run.verbose)
				tport_text_pool(stdout, &pt->tp, NAME_COLS);
		}
		printf("received %s, forwarded %s (%s pps), dropped %s",
		       tstats_fmt_count(a, sizeof(a), received),
		       tstats_fmt_count(b, sizeof(b), forwarded),
		       tstats_fmt_rate(r, sizeof(r), forwarded, ns),
		       tstats_fmt_count(c, sizeof(c), lost));
		if (kdrop)
			printf(" (%s of them by the kernel, before uxdp "
			       "received them)",
			       tstats_fmt_count(a, sizeof(a), kdrop));
		printf("\n");
		if (f->prog_id == PROG_BPF)
			tbpf_report_text(stdout, &f->bpf, bv);
		for (i = 0; i < f->nports; i++)
			if (f->ports[i].xdump)
				fwrite(f->ports[i].xdump, 1,
				       f->ports[i].xdump_len, stdout);
		return;
	}
	printf(",\"prog\":");
	tjson_str(stdout, f->prog_id >= PROG_FILE ? f->o.prog :
		  builtin_progs[f->prog_id].name);
	printf(",\"mode\":\"%s\",\"threads\":%u,\"received\":%llu,"
	       "\"forwarded\":%llu,\"passed\":%llu,\"dropped\":%llu,"
	       "\"kernel_dropped\":%llu,\"fwd_pps\":%.1f,\"ports\":[",
	       f->nports == 1 ? "reflect" : "forward", f->nthreads,
	       (unsigned long long)received, (unsigned long long)forwarded,
	       (unsigned long long)passed, (unsigned long long)lost,
	       (unsigned long long)kdrop, tstats_rate(forwarded, ns));
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];

		printf("%s", i ? "," : "");
		print_port_json_head(pt);
		printf(",\"rx_batch\":%.2f,", rx_batch(&pt->tp.total.rx));
		tport_json_counters(stdout, &f->names, &pt->tp.total);
		tport_json_pool(stdout, &pt->tp);
		if (pt->counts) {
			uint64_t p = 0, bytes = 0;

			for (j = 0; j < pt->nrxq; j++) {
				p += pt->counts[j].packets;
				bytes += pt->counts[j].bytes;
			}
			printf(",\"counted\":{\"packets\":%llu,\"bytes\":%llu}",
			       (unsigned long long)p,
			       (unsigned long long)bytes);
		}
		tport_json_audit(stdout, &pt->tp);
		if (pt->afxdp)
			print_afxdp_json(pt);
		printf("}");
	}
	printf("]");
	if (f->prog_id == PROG_BPF) {
		printf(",\"bpf\":");
		tbpf_report_json(stdout, &f->bpf, bv);
	}
	printf("}\n");
	/* -v: the drivers' reports, where they keep the JSON lines whole. */
	for (i = 0; i < f->nports; i++)
		if (f->ports[i].xdump)
			fwrite(f->ports[i].xdump, 1, f->ports[i].xdump_len,
			       stderr);
}

/* ---- the run loop -------------------------------------------------------- */

/* What --count counts: packets received. */
static uint64_t rx_total(struct tool *t)
{
	const struct fwd *f = fwd_of(t);
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < f->nports; i++)
		n += tdev_rx_packets(f->ports[i].tp.dev);
	return n;
}

/* Every replaying port is done (false if none replays). */
static bool replays_done(const struct fwd *f)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->nports; i++) {
		if (!f->ports[i].replay)
			continue;
		if (!uxdp_pcap_done(f->ports[i].tp.dev))
			return false;
		n++;
	}
	return n > 0;
}

/* ---- links ---------------------------------------------------------------- */

/* Bring a port back up after its link: said once when it works, once
 * when it does not (it is tried again at the next check). */
static void port_relink(struct port *pt, const char *why)
{
	const char *name = uxdp_dev_name(pt->tp.dev);

	if (uxdp_dev_up(pt->tp.dev)) {
		if (!pt->up_failed)
			tmsg(PROG_NAME, "%s: %s, but it cannot be bound: %s; "
			     "trying again at every link change", name, why,
			     uxdp_errmsg());
		pt->up_failed = true;
		return;
	}
	tmsg(PROG_NAME, "%s: %s: bound again, forwarding", name, why);
	pt->link_down = false;
	pt->up_failed = false;
}

/*
 * An interface made again: bind the port to it, then ask its link. Such an
 * interface comes up in steps (made, set up, and for a veth its peer set
 * up), and a port bound before it has its carrier would go down at the
 * next check, dropping what came meanwhile: until the link is up the port
 * stays down, and the check that sees it up binds it ("link up").
 */
static void port_back(struct port *pt)
{
	const char *name = uxdp_dev_name(pt->tp.dev);
	struct uxdp_link_info li;

	if (uxdp_dev_up(pt->tp.dev)) {
		port_relink(pt, "the interface is back");	/* says why */
		return;
	}
	if (!uxdp_dev_link(pt->tp.dev, &li) && li.state != UXDP_LINK_UP) {
		uxdp_dev_down(pt->tp.dev);
		tmsg(PROG_NAME, "%s: the interface is back, its link down: "
		     "waiting for it", name);
		pt->link = li;
		pt->link_down = true;
		pt->up_failed = false;
		return;
	}
	tmsg(PROG_NAME, "%s: the interface is back: bound again, forwarding",
	     name);
	pt->link_down = false;
	pt->up_failed = false;
}

/*
 * Ask every port for its link and act on what changed: down (no carrier,
 * or the interface down), the port goes down too, so what its kernel
 * rings hold comes back counted (drained) and nothing polls or kicks it;
 * up again, it binds again; the MTU changed, it binds again to take the
 * new one; deleted, the run stops (status 1) unless --wait-link, which
 * waits for an interface of that name and binds to it. Each change is
 * said once.
 */
static void check_links(struct fwd *f)
{
	unsigned int i;

	for (i = 0; i < f->nports && !f->tool.stop; i++) {
		struct port *pt = &f->ports[i];
		const char *name = uxdp_dev_name(pt->tp.dev);
		struct uxdp_link_info li, was = pt->link;

		if (uxdp_dev_link(pt->tp.dev, &li))
			continue;	/* cannot tell now: ask again later */
		pt->link = li;
		if (li.state == UXDP_LINK_GONE && !li.new_ifindex) {
			if (was.state == UXDP_LINK_GONE && !was.new_ifindex)
				continue;
			if (!f->o.wait_link) {
				tmsg(PROG_NAME, "%s: the interface is gone "
				     "(deleted): stopping (--wait-link waits "
				     "for it)", name);
				f->tool.stop = "interface gone";
				f->link_gone = true;
				return;
			}
			tmsg(PROG_NAME, "%s: the interface is gone (deleted): "
			     "waiting for one of that name (--wait-link)",
			     name);
			if (!pt->link_down)
				uxdp_dev_down(pt->tp.dev);
			pt->link_down = true;
			continue;
		}
		if (li.state == UXDP_LINK_GONE) {
			/* Made again: down (if it was not) and up binds the
			 * device to the new interface. */
			if (!pt->link_down) {
				tmsg(PROG_NAME, "%s: the interface was deleted "
				     "and made again", name);
				uxdp_dev_down(pt->tp.dev);
				pt->link_down = true;
			}
			port_back(pt);
			continue;
		}
		if (li.state == UXDP_LINK_DOWN) {
			if (!pt->link_down) {
				tmsg(PROG_NAME, "%s: link down: frames for it "
				     "are dropped (counted as down) until it "
				     "is back", name);
				uxdp_dev_down(pt->tp.dev);
				pt->link_down = true;
			}
			continue;
		}
		/* Up. */
		if (pt->link_down) {
			port_relink(pt, "link up");
		} else if (was.mtu && li.mtu != was.mtu) {
			tmsg(PROG_NAME, "%s: MTU %u -> %u: binding again", name,
			     was.mtu, li.mtu);
			uxdp_dev_down(pt->tp.dev);
			pt->link_down = true;
			port_relink(pt, "MTU changed");
		}
	}
}

/*
 * The run loop's (tools/lib/tool.c) first samples: the counters the first
 * interval is taken from, the ports' links. The checks: --count and the
 * end of every replay every 10 ms, the links at every link event and
 * every LINK_CHECK_MS in any case.
 */
static void run_start(struct tool *t)
{
	struct fwd *f = fwd_of(t);
	unsigned int i;

	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];

		f->replay |= pt->replay;
		tdev_counters_read(pt->tp.dev, &pt->tp.last);
		if (pt->afxdp)
			afxdp_counters_read(pt, &pt->klast, NULL);
		if (uxdp_dev_link(pt->tp.dev, &pt->link))
			pt->link.state = UXDP_LINK_UP;
	}
	f->linkfd = tool_link_open();
	if (f->linkfd < 0)
		tool_note(&f->tool, "no link events (netlink: %s): links are "
			  "asked every %d ms", strerror(-f->linkfd),
			  LINK_CHECK_MS);
	t->wait.evfd = f->linkfd;
	f->link_next = t->t_start + LINK_CHECK_MS * 1000000ULL;
	t->check_ns = f->o.run.count || f->replay ?
		      COUNT_CHECK_MS * 1000000ULL : LINK_CHECK_MS * 1000000ULL;
}

static void run_event(struct tool *t, unsigned int ev)
{
	struct fwd *f = fwd_of(t);
	uint64_t now = t->wait.now;

	if ((ev & TOOL_WAIT_FD) || now >= f->link_next) {
		if (ev & TOOL_WAIT_FD)
			tool_link_drain(f->linkfd);
		f->link_next = now + LINK_CHECK_MS * 1000000ULL;
		check_links(f);
	}
}

static const char *run_check(struct tool *t, unsigned int ev)
{
	struct fwd *f = fwd_of(t);
	uint64_t now = t->wait.now;

	if (ev & TOOL_WAIT_END)
		return TOOL_STOP_DURATION;
	/* Done means the last packets were handed to their devices; give
	 * the far side a moment to pass them on (a veth peer's poll, a
	 * kernel ring). */
	return tool_drain_after(f->replay && replays_done(f), &f->replay_end,
				now, "end of replay");
}

/* ---- teardown ------------------------------------------------------------ */

/*
 * In an order that leaves nothing behind: the poll threads first (nothing
 * polls or transmits any more), then every port down (frames queued to a
 * port come home, counted in its drained), then the final counters and the
 * audit, then the devices (their drivers detach what they attached), the
 * maps (no program uses them once the devices are gone) and the loaded
 * program.
 */
static void stop_groups(struct fwd *f)
{
	unsigned int g;

	for (g = 0; g < f->ngroups; g++)
		uxdp_poll_group_destroy(f->groups[g]);
	f->ngroups = 0;
}

static void collect_totals(struct tool *t)
{
	struct fwd *f = fwd_of(t);
	unsigned int i;

	stop_groups(f);
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];

		if (pt->tp.dev && pt->afxdp && f->o.run.verbose)
			afxdp_dump(pt);
		if (pt->tp.dev)
			uxdp_dev_down(pt->tp.dev);
	}
	for (i = 0; i < f->nports; i++) {
		struct port *pt = &f->ports[i];
		uint64_t sum;

		tport_final(PROG_NAME, &pt->tp);
		/* Down: the sockets are closed, their counts final. */
		pt->ktotal_ok = pt->afxdp &&
				!afxdp_counters_read(pt, &pt->ktotal, pt->xq);
		/* Every received frame ends in exactly one outcome. */
		sum = pt->tp.total.rx.pass + rx_fwd(&pt->tp.total.rx) +
		      rx_lost(&pt->tp.total.rx);
		if (sum != pt->tp.total.rx.packets)
			tmsg(PROG_NAME, "WARNING: %s: %llu packets received "
			     "but %llu outcomes counted: a libuxdp bug",
			     uxdp_dev_name(pt->tp.dev),
			     (unsigned long long)pt->tp.total.rx.packets,
			     (unsigned long long)sum);
	}
}

/* Said after the totals: the pcap files' errors, a port gone. */
static int run_status(struct tool *t)
{
	struct fwd *f = fwd_of(t);

	int bad = pcap_errors(f) || f->link_gone;

	/* The pollers are stopped: the maps are as the run left them. */
	if (f->prog_id == PROG_BPF &&
	    tmap_dump_all(PROG_NAME, &f->maps, f->bpf.obj, stdout,
			  f->o.run.json))
		bad = 1;
	return bad;
}

static void teardown(struct tool *t)
{
	struct fwd *f = fwd_of(t);
	unsigned int i;

	stop_groups(f);
	for (i = 0; i < f->nports; i++) {
		uxdp_dev_destroy(f->ports[i].tp.dev);
		uxdp_dev_destroy(f->ports[i].veth_peer);
		f->ports[i].tp.dev = NULL;
	}
	for (i = 0; i < f->nports; i++) {
		uxdp_map_destroy(f->ports[i].map);
		free(f->ports[i].counts);
		free(f->ports[i].bpfq);
		free(f->ports[i].xdump);
	}
	if (f->user)
		uxdp_prog_put(f->user);
	tbpf_close(&f->bpf);
	tmap_opts_free(&f->maps);
	if (f->linkfd >= 0)
		close(f->linkfd);
}

static const struct tool_ops fwd_ops = {
	.parse = parse_args,
	.setup = setup,
	.header = print_header,
	.start = run_start,
	.event = run_event,
	.interval = print_interval,
	.count = rx_total,
	.check = run_check,
	.collect = collect_totals,
	.totals = print_totals,
	.status = run_status,
	.teardown = teardown,
};

int main(int argc, char **argv)
{
	static struct fwd f = {
		.tool = TOOL_INIT(PROG_NAME, &f.o.run),
		.linkfd = -1,
	};

	return tool_main(&f.tool, &fwd_ops, argc, argv);
}
