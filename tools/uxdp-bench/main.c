/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench: measure uxdp's rings and buffer pool against the seeds'
 * figures and against DPDK, on the machine at hand.
 *
 *	uxdp-bench COMMAND [options]
 *
 * Commands are a table (cmds[] below); each lives in a file of its own in
 * this directory and reports through report.h, so a new one (veth-tx,
 * redirect, ...) is a new file and one line here. Options are a table
 * too, bound to the fields of struct bench_opts; the getopt_long() tables
 * and --help are generated from it, so an option is declared exactly
 * once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uxdp/uxdp.h>

#include "bench.h"
#include "dpdk_peer.h"
#include "instr.h"
#include "plot.h"
#include "report.h"

/* ---- options ------------------------------------------------------------- */

enum opt_type {
	OPT_FLAG,		/* bool, no argument */
	OPT_U32,
	OPT_U64,		/* accepts k, M, G suffixes (x1000) */
	OPT_STR,		/* const char *, the argument as given */
	OPT_HELP,
};

struct opt_def {
	const char *name;
	int key;		/* short letter, or >= 256 for long only */
	enum opt_type type;
	size_t off;		/* field in struct bench_opts */
	const char *metavar;
	uint64_t min, max;
	const char *help;	/* ends with the default */
};

#define OPT_DEF(n, k, t, field, mv, lo, hi, h) \
	{ n, k, t, offsetof(struct bench_opts, field), mv, lo, hi, h }

enum {
	KEY_FRAMES = 256,
	KEY_CHUNK,
	KEY_JSON,
	KEY_NO_DPDK,
	KEY_SEED,
	KEY_DURATION,
	KEY_PIPELINES,
	KEY_PLOT,
	KEY_INSTRUCTIONS,
	KEY_OBJECTS,
};

static const struct opt_def opt_defs[] = {
	OPT_DEF("runs", 'r', OPT_U32, runs, "N", 1, 100,
		"runs per variant; median and min reported (default 5, "
		"demo 3)"),
	/*
	 * One range for every command: each works from 64 up. (redirect's
	 * helper once wanted 1000 packets even for the warm-up run, a
	 * sixteenth of -n, so -n below 16000 failed there.)
	 */
	OPT_DEF("ops", 'n', OPT_U64, ops, "N", 64, 10000000000ULL,
		"elements (ring), buffers (pool) or packets (veth-tx, "
		"redirect, xsk) per run, 64..10G for every command, k/M/G "
		"suffix ok (default: ring 10M, pool 2M, veth-tx 10M (kernel "
		"peer 2M), redirect 10M, xsk 2M; demo: 4M, 1M, 4M, 4M, 1M)"),
	OPT_DEF("frames", KEY_FRAMES, OPT_U32, frames, "N", 128, 1U << 20,
		"pool: UMEM chunks; the fill ring is sized to hold them "
		"(default 4096)"),
	OPT_DEF("chunk-size", KEY_CHUNK, OPT_U32, chunk_size, "BYTES", 2048,
		4096, "pool: UMEM chunk size, 2048 or 4096 (default 2048)"),
	OPT_DEF("json", KEY_JSON, OPT_FLAG, json, NULL, 0, 0,
		"print one JSON document instead of tables (default off)"),
	OPT_DEF("quiet", 'q', OPT_FLAG, quiet, NULL, 0, 0,
		"no progress on stderr, no explanatory notes (default off)"),
	OPT_DEF("no-dpdk", KEY_NO_DPDK, OPT_FLAG, no_dpdk, NULL, 0, 0,
		"skip the DPDK peers even if built (default: run them)"),
	OPT_DEF("seed", KEY_SEED, OPT_U64, seed, "N", 1, UINT64_MAX,
		"soak: seed of its random choices, to repeat a run's "
		"configurations and churn (default: from the clock, printed)"),
	OPT_DEF("duration", KEY_DURATION, OPT_U32, duration, "SECONDS", 1,
		86400, "fwd: each run's measured time (default 3); soak: "
		"start no new epoch after this long, the checks hold for what "
		"ran (default: no limit)"),
	OPT_DEF("pipelines", KEY_PIPELINES, OPT_U32, pipelines, "N", 1,
		BENCH_SOAK_MAX_PIPES,
		"soak: pipelines running at once (default 4)"),
	OPT_DEF("plot", KEY_PLOT, OPT_STR, plot_dir, "DIR", 0, 0,
		"after the command, draw its sweeps as SVG into DIR with "
		"gnuplot (NAME.dat, NAME.gp, NAME.svg): xsk then runs extra "
		"sweep variants, pool plots its batch sizes; no gnuplot: exit "
		"1 (default off)"),
	OPT_DEF("instructions", KEY_INSTRUCTIONS, OPT_FLAG, instructions,
		NULL, 0, 0,
		"pool, xsk: also count instructions per buffer / packet of "
		"single vs batched allocation, aligned and unaligned; bpf: "
		"per run of each program, JIT vs interpreter vs native C; "
		"with valgrind's callgrind (a figure load does not move; a "
		"few seconds, bpf a minute); no valgrind: exit 3 (default "
		"off; demo and all count when valgrind is installed)"),
	OPT_DEF("objects", KEY_OBJECTS, OPT_STR, bpf_dir, "DIR", 0, 0,
		"bpf: the eBPF objects (NAME.v3.o, NAME.v1.o) from DIR "
		"(default: the build tree's, built with the tool)"),
	{ "help", 'h', OPT_HELP, 0, NULL, 0, 0, "this text" },
};

#define NOPTS	(sizeof(opt_defs) / sizeof(opt_defs[0]))

/* ---- commands ------------------------------------------------------------ */

static int cmd_demo(const struct bench_opts *o);
static int cmd_all(const struct bench_opts *o);

struct bench_cmd {
	const char *name;
	const char *help;
	int (*run)(const struct bench_opts *o);
};

static const struct bench_cmd cmds[] = {
	{ "ring", "uxdp SPSC rings vs DPDK rte_ring SP/SC: 1-core, "
		  "2-thread, empty poll", bench_ring },
	{ "pool", "Rx buffer life: single vs batched allocation, aligned "
		  "vs unaligned, vs rte_mempool", bench_pool },
	{ "veth-tx", "single-core XDP_TX through a veth pair, bulk 16 vs 1, "
		     "and the same loop in the kernel (root)", bench_veth_tx },
	{ "redirect", "XDP_REDIRECT between two devices, bulk vs single "
		      "xdp_xmit, normal and retpoline (thunk) builds",
	  bench_redirect },
	{ "groups", "gen -> veth -> XDP_TX -> veth on one thread, one poll "
		    "group, or a thread per queue: what a group costs",
	  bench_groups },
	{ "fwd", "uxdp-fwd vs dpdk-testpmd vs a plain libxdp forwarder "
		 "between two veth interfaces (AF_XDP), kernel generator "
		 "(root)", bench_fwd },
	{ "xsk", "the seed's xdpsock rxdrop on the nic model: rxdrop, l2fwd, "
		 "txonly, zero-copy/copy, alloc_batch vs single refill, "
		 "aligned/unaligned, 1 vs 2 queues", bench_xsk },
	{ "bpf", "XDP eBPF programs (drop, count, parse, macswap, loop, "
		 "calls, .rodata, ...) per packet: uxdp's JIT and "
		 "interpreter on a device, a buffer and test runs, vs the "
		 "same in native C, the kernel's BPF_PROG_TEST_RUN (root) "
		 "and DPDK's librte_bpf; raw and minus each side's floor",
	  bench_bpf },
	{ "all", "every command above with full runs", cmd_all },
	{ "demo", "every command with fewer and shorter runs, then a "
		  "compact summary: the seeds' results beside ours",
	  cmd_demo },
	{ "soak", "not a benchmark: -n packets (default 10M) through "
		  "pipelines under churn, then exact accounting", bench_soak },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

#define DEMO_RING_OPS	4000000ULL
#define DEMO_POOL_OPS	1000000ULL
#define DEMO_VETH_OPS	4000000ULL
#define DEMO_REDIRECT_OPS	4000000ULL
#define DEMO_XSK_OPS		1000000ULL

/* ---- help and errors ----------------------------------------------------- */

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: uxdp-bench COMMAND [options]\n\ncommands:\n");
	for (i = 0; i < NCMDS; i++) {
		fprintf(f, "  %-9s ", cmds[i].name);
		bench_put_wrapped(f, 12, 12, cmds[i].help);
	}
	fprintf(f, "\noptions:\n");
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		char flag[48];

		if (d->key < 256)
			snprintf(flag, sizeof(flag), "-%c, --%s%s%s", d->key,
				 d->name, d->metavar ? " " : "",
				 d->metavar ? d->metavar : "");
		else
			snprintf(flag, sizeof(flag), "    --%s%s%s", d->name,
				 d->metavar ? " " : "",
				 d->metavar ? d->metavar : "");
		fprintf(f, "  %-24s ", flag);
		bench_put_wrapped(f, 27, 27, d->help);
	}
	fputc('\n', f);
	bench_put_wrapped(f, 0, 0, "Cycles are TSC ticks, calibrated to ns at "
		    "start-up. With two CPUs, 1-core tests and producers run "
		    "on the first, consumers on the second.");
	fputc('\n', f);
	bench_put_wrapped(f, 0, 0, "Exit status: 0 all that can run here ran, "
		    "also when a target is not reached or a peer is absent "
		    "(DPDK not built or --no-dpdk; dpdk-testpmd not installed; "
		    "the kernel peers or the libxdp forwarder not built, not "
		    "root, or not supported by this kernel; 2-thread tests "
		    "with one CPU), which the "
		    "output says. 1 something that should have been measured "
		    "could not be (a variant's run, a set-up or a content "
		    "check failed, a redirect helper is missing, a built DPDK "
		    "peer or a forwarder would not start): stderr says which and why, and "
		    "what did succeed is still printed; or the output could "
		    "not be written. 2 bad arguments. 3 --instructions and "
		    "no valgrind (nothing measured).");
}

/* Exiting with 2: check_output() must not turn that into 1. */
static bool arg_error;

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_args(const char *fmt, ...)
{
	va_list ap;

	arg_error = true;
	fprintf(stderr, "uxdp-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'uxdp-bench --help'.\n");
	exit(2);
}

/*
 * A decimal number with an optional k/M/G (x1000) suffix. -EINVAL if it is
 * not one, -ERANGE if it does not fit in 64 bits.
 */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t mult = 1, v;
	bool big;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s)
		return -EINVAL;
	big = errno == ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = 1000ULL;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1000000ULL;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1000000000ULL;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	if (big || (v && mult > UINT64_MAX / v))
		return -ERANGE;
	*out = v * mult;
	return 0;
}

static void set_opt(struct bench_opts *o, const struct opt_def *d,
		    const char *arg)
{
	char *field = (char *)o + d->off;
	uint64_t v;
	int err;

	switch (d->type) {
	case OPT_FLAG:
		*(bool *)field = true;
		return;
	case OPT_U32:
	case OPT_U64:
		err = parse_u64(arg, &v);
		if (err == -ERANGE)
			v = UINT64_MAX;		/* out of range, said below */
		else if (err)
			bad_args("--%s: '%s' is not a number (want %llu..%llu"
				 "%s)", d->name, arg,
				 (unsigned long long)d->min,
				 (unsigned long long)d->max,
				 d->type == OPT_U64 ? ", k/M/G suffix ok" : "");
		if (v < d->min || v > d->max)
			bad_args("--%s: %s is out of range: %llu..%llu",
				 d->name, arg, (unsigned long long)d->min,
				 (unsigned long long)d->max);
		if (d->type == OPT_U32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return;
	case OPT_STR:
		if (!*arg)
			bad_args("--%s: empty argument", d->name);
		*(const char **)field = arg;
		return;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	}
}

/*
 * getopt_long() said '?' for @arg: an unknown option, or "--json=1", a
 * value given to an option that takes none. For the latter glibc leaves
 * the option's key in optopt (0 for an unknown long option).
 */
static void __attribute__((noreturn)) bad_option(const char *arg)
{
	unsigned int i;

	if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '=')) {
		for (i = 0; i < NOPTS; i++)
			if (opt_defs[i].key == optopt)
				bad_args("option '--%s' takes no value",
					 opt_defs[i].name);
	}
	if (optopt > 0 && optopt < 256 && strncmp(arg, "--", 2))
		bad_args("unknown option '-%c'", optopt);
	bad_args("unknown option '%s'", arg);
}

static const struct bench_cmd *parse_args(int argc, char **argv,
					  struct bench_opts *o)
{
	struct option longopts[NOPTS + 1];
	char shortopts[NOPTS * 2 + 2], *sp = shortopts;
	const struct bench_cmd *cmd = NULL;
	unsigned int i;
	int c;

	*sp++ = ':';		/* report a missing argument as ':' */
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		bool arg = d->type == OPT_U32 || d->type == OPT_U64 ||
			   d->type == OPT_STR;

		longopts[i] = (struct option){
			.name = d->name,
			.has_arg = arg ? required_argument : no_argument,
			.val = d->key,
		};
		if (d->key < 256) {
			*sp++ = (char)d->key;
			if (arg)
				*sp++ = ':';
		}
	}
	memset(&longopts[NOPTS], 0, sizeof(longopts[0]));
	*sp = '\0';

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?')
			bad_option(argv[optind - 1]);
		if (c == ':')
			bad_args("option '%s' needs a value",
				 argv[optind - 1]);
		for (i = 0; i < NOPTS; i++)
			if (opt_defs[i].key == c)
				set_opt(o, &opt_defs[i], optarg);
	}
	if (optind >= argc) {
		arg_error = true;
		usage(stderr);
		exit(2);
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[optind], cmds[i].name))
			cmd = &cmds[i];
	if (!cmd)
		bad_args("unknown command '%s'", argv[optind]);
	if (optind + 1 < argc)
		bad_args("unexpected argument '%s'", argv[optind + 1]);
	if (o->instructions && cmd->run != bench_pool &&
	    cmd->run != bench_xsk && cmd->run != bench_bpf &&
	    cmd->run != cmd_demo && cmd->run != cmd_all)
		bad_args("--instructions: only pool, xsk, bpf, demo and all "
			 "count instructions");
	/* Aligned mode needs a power-of-two chunk. */
	if (o->chunk_size && o->chunk_size != 2048 && o->chunk_size != 4096)
		bad_args("--chunk-size: %u is not 2048 or 4096",
			 o->chunk_size);
	return cmd;
}

/* ---- running ------------------------------------------------------------- */

static int cmd_demo(const struct bench_opts *o)
{
	struct bench_opts d = *o;
	int ret;

	d.compact = true;
	d.ops = o->ops ? o->ops : DEMO_RING_OPS;
	ret = bench_ring(&d);
	d.ops = o->ops ? o->ops : DEMO_POOL_OPS;
	ret |= bench_pool(&d);
	d.ops = o->ops ? o->ops : DEMO_VETH_OPS;
	ret |= bench_veth_tx(&d);
	d.ops = o->ops ? o->ops : DEMO_REDIRECT_OPS;
	ret |= bench_redirect(&d);
	d.ops = o->ops ? o->ops : DEMO_XSK_OPS;
	ret |= bench_xsk(&d);
	return ret;
}

static int cmd_all(const struct bench_opts *o)
{
	return bench_ring(o) | bench_pool(o) | bench_veth_tx(o) |
	       bench_redirect(o) | bench_groups(o) | bench_fwd(o) |
	       bench_xsk(o) | bench_bpf(o);
}

static void print_header(const char *cmd, const struct bench_opts *o)
{
	report_env_str("uxdp_version", "%d.%d", UXDP_VERSION_MAJOR,
		       UXDP_VERSION_MINOR);
	report_env_num("runs", o->runs);
	report_env_num("tsc_ghz", bench_env.tsc_ghz);
	report_env_num("stamp_cost_ticks", bench_env.stamp_cost);
	report_env_num("cpus", bench_env.ncpus);
	if (o->instructions)
		report_env_str("instructions", "%s", instr_status());
	if (bench_env.pinned)
		report_env_str("pinning", "1-core and producer on CPU %d, "
			       "consumer on CPU %d", bench_env.cpu_a,
			       bench_env.cpu_b);
	else
		report_env_str("pinning", "none (%d CPU)", bench_env.ncpus);

	report_text("uxdp-bench %s (uxdp %d.%d): median and min of %u run%s "
		    "per variant, variants interleaved round-robin", cmd,
		    UXDP_VERSION_MAJOR, UXDP_VERSION_MINOR, o->runs,
		    o->runs == 1 ? "" : "s");
#if BENCH_HAVE_TSC
	report_text("clock: TSC %.3f GHz (calibrated against "
		    "CLOCK_MONOTONIC_RAW); cyc = TSC ticks, not core clocks; "
		    "a stamp costs %.0f ticks", bench_env.tsc_ghz,
		    bench_env.stamp_cost);
#else
	report_text("clock: no TSC on this architecture; cyc = ns");
#endif
	if (bench_env.pinned)
		report_text("cpus: %d; pinned: 1-core tests and producers on "
			    "CPU %d, consumers on CPU %d", bench_env.ncpus,
			    bench_env.cpu_a, bench_env.cpu_b);
	else
		report_text("cpus: %d; not pinned (two-thread tests need two "
			    "CPUs)", bench_env.ncpus);
	if (o->instructions)
		report_text("instructions: %s%s", instr_ready() ? "" :
			    "not counted: ", instr_status());
	if (o->no_dpdk)
		report_text("DPDK peer: skipped (--no-dpdk)");
	else
		report_text("DPDK peer: %s", dpdk_peer_status());
}

/*
 * At exit, whatever the path (results, --help): output that could not be
 * written is a failure, not a silent truncation (uxdp-bench ring --json >
 * /dev/full). Registered first in main(), so it runs after every other
 * exit handler.
 */
static void check_output(void)
{
	int err = report_output_error();

	errno = 0;
	if (fflush(stdout) && !err)
		err = errno ? errno : EIO;
	if (ferror(stdout) && !err)
		err = EIO;
	errno = 0;
	if (fclose(stdout) && !err)
		err = errno ? errno : EIO;
	if (err) {
		fprintf(stderr, "uxdp-bench: writing output: %s\n",
			strerror(err));
		_exit(arg_error ? 2 : 1);
	}
	/*
	 * stderr is unbuffered: a failed write (a lost progress line or
	 * failure message) has set the flag. There is nowhere to say it.
	 */
	if (ferror(stderr) && !arg_error)
		_exit(1);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	const struct bench_cmd *cmd;
	int ret;

	/* A callgrind child of --instructions (instr.h): no report. */
	if (argc > 1 && !strcmp(argv[1], INSTR_CHILD_ARG))
		return instr_child_main(argc - 2, argv + 2);
	atexit(check_output);
	cmd = parse_args(argc, argv, &o);
	if (!o.runs)
		o.runs = cmd->run == cmd_demo ? BENCH_DEMO_RUNS :
						BENCH_DEFAULT_RUNS;
	/* The library's warnings would garble a JSON document. */
	if (o.json)
		uxdp_set_print(NULL);
	/* Before any measuring: a missing gnuplot is said at once. */
	if (o.plot_dir && plot_init(o.plot_dir))
		return 1;
	/*
	 * The same for valgrind when --instructions asks for it; demo and
	 * all count when they can and say why not when they cannot.
	 */
	if (o.instructions && instr_init()) {
		fprintf(stderr, "uxdp-bench: --instructions: %s\n",
			instr_status());
		return INSTR_EXIT_NO_VALGRIND;
	}
	if (cmd->run == cmd_demo || cmd->run == cmd_all) {
		instr_init();
		o.instructions = true;
	}
	if (bench_env_init()) {
		fprintf(stderr, "uxdp-bench: FAILED: cannot calibrate the "
			"TSC\n");
		return 1;
	}
	report_init(cmd->name, o.json, o.quiet, cmd->run == cmd_demo);
	print_header(cmd->name, &o);
	report_flush();

	ret = cmd->run(&o);
	if (plot_render(o.quiet))
		ret = 1;

	/* The status may have changed: EAL starts only when first needed. */
	if (o.no_dpdk) {
		report_env_str("dpdk", "skipped (--no-dpdk)");
	} else {
		report_env_str("dpdk", "%s", dpdk_peer_status());
		if (dpdk_peer_built())
			report_text("\nDPDK peer: %s", dpdk_peer_status());
	}
	report_flush();
	report_print_summary(cmd->run == cmd_demo ?
			     "uxdp vs the seeds and peers (ratios first; < 1 "
			     "means uxdp is cheaper)" :
			     "summary (ratios first; < 1 means uxdp is "
			     "cheaper)");
	report_finish();
	return ret ? 1 : 0;
}
