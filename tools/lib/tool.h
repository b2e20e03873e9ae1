/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The main thread of a uxdp tool that runs until told to stop (uxdp-fwd,
 * uxdp-xsk): the options they all have, their messages, why a run stopped,
 * the checks of what was written to stdout, and main() itself, whose
 * steps the tool fills in (struct tool_ops):
 *
 *	options -> signals (signals.h) -> setup -> the header line -> the
 *	run loop (an interval line every --interval until a signal,
 *	--duration, --count or the tool's own end) -> collect (threads
 *	stopped, ports down, final counters) -> the totals -> status ->
 *	teardown -> stdout closed: a write that failed is an error (exit
 *	1), said once.
 *
 * A tool that does one thing and exits (uxdp-bpf) takes tool_exit()
 * alone, and says what it has to say with tmsg() (params.h) as every tool
 * does.
 *
 *	struct my_tool {
 *		struct tool tool;
 *		struct my_opts o;	(with a struct tool_opts run)
 *		...
 *	};
 *
 *	int main(int argc, char **argv)
 *	{
 *		static struct my_tool m = {
 *			.tool = TOOL_INIT("my-tool", &m.o.run),
 *		};
 *
 *		return tool_main(&m.tool, &my_ops, argc, argv);
 *	}
 *
 * and each step finds its struct my_tool with tool_container_of().
 */
#ifndef UXDP_TOOLS_TOOL_H
#define UXDP_TOOLS_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "signals.h"

/* The struct holding @ptr, its member @member. */
#define tool_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- the options every such tool has ------------------------------------- */

struct tool_opts {
	uint64_t duration;	/* ms; 0: until a signal */
	uint64_t count;		/* of what the tool counts; 0: no limit */
	uint64_t interval;	/* ms between two interval lines */
	bool json;		/* JSON lines on stdout */
	bool quiet;		/* no header, no interval lines */
	bool verbose;		/* -v: notes on stderr, every counter */
};

/* Their rows, for the tool's table, where it wants them in --help. --count
 * and -v say what the tool counts and shows: the tool's own rows (bound
 * to @m.count and @m.verbose). */
#define TOOL_OPT_DURATION(stype, m)					\
	TPARAM("duration", 'd', TPARAM_MSEC, stype, m.duration, "SECONDS", \
	       0, 365ULL * 86400 * 1000,				\
	       "stop after this long, exit status 0 (default 0: run until " \
	       "SIGINT or SIGTERM)")
#define TOOL_OPT_INTERVAL(stype, m)					\
	TPARAM("interval", 'i', TPARAM_MSEC, stype, m.interval, "SECONDS", \
	       100, 3600 * 1000, "seconds between two stats lines "	\
	       "(default 1)")
#define TOOL_OPT_JSON(stype, m)						\
	TPARAM("json", 'j', TPARAM_FLAG, stype, m.json, NULL, 0, 0,	\
	       "JSON lines on stdout: one object per interval, then one " \
	       "with the totals (default: text)")
#define TOOL_OPT_QUIET(stype, m)					\
	TPARAM("quiet", 'q', TPARAM_FLAG, stype, m.quiet, NULL, 0, 0,	\
	       "no header and no per-interval output, only the totals")

/* ---- the run's state ------------------------------------------------------- */

/* Why a run stopped, as the totals say it ("stopped by count"); a tool
 * has reasons of its own too ("tx-count"). A signal's is its name. */
#define TOOL_STOP_DURATION	"duration"
#define TOOL_STOP_COUNT		"count"
#define TOOL_STOP_OUTPUT	"output error"

struct tool {
	const char *prog;		/* "uxdp-fwd": every message's */
	const struct tool_opts *o;	/* in the tool's options */
	int sigfd;			/* -1 until tool_main() opens it */
	const char *stop;		/* NULL while the run goes on */
	int out_err;			/* errno of a failed write to stdout */
	uint64_t t_start, t_last;	/* ns: the run's start, last tick */
	uint64_t seq;			/* interval lines printed */
	/* The run loop's wait. A tool's start hook may set check_ns (how
	 * often its count and check hooks want to run; 0: only at ticks)
	 * and wait.evfd (an fd to wake on: TOOL_WAIT_FD). */
	struct tool_wait wait;
	uint64_t check_ns;
};

#define TOOL_INIT(name, opts)	{ .prog = (name), .o = (opts), .sigfd = -1 }

/* ---- messages and output ---------------------------------------------------- */

/* tmsg() (params.h) with -v only: the set-up, notes about options. */
void tool_note(const struct tool *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line of stdout is complete: push it out, and if anything written so
 * far was lost, remember the first error and stop the run. */
void tool_check_output(struct tool *t);

/*
 * At the very end: close stdout (what a failed write left in its buffer
 * fails now) and, if any write to it failed, say so once and make the
 * exit status 1. Returns the exit status, @status otherwise.
 */
int tool_exit(struct tool *t, int status);

/* ---- main() ---------------------------------------------------------------- */

/*
 * The tool's steps; those marked optional may be NULL. Each is given the
 * struct tool in the tool's own struct (tool_container_of()).
 */
struct tool_ops {
	/* The options, from @argv into the tool's struct: bad usage ends
	 * the process (tparams_fail(), exit 2). */
	void (*parse)(struct tool *t, int argc, char **argv);
	/* Ports, programs, threads. 0, or -1 after a message: then
	 * teardown, and exit status 1. */
	int (*setup)(struct tool *t);
	/* The header line, without its end (", until N packets, for S s;
	 * Ctrl-C stops"): text output without --quiet only. */
	void (*header)(struct tool *t);
	/* Optional: first samples, just before the loop (t_start set). */
	void (*start)(struct tool *t);
	/* Optional: every wake-up but a signal's, with its TOOL_WAIT_*
	 * bits, before the interval line (uxdp-fwd: link events). */
	void (*event)(struct tool *t, unsigned int ev);
	/* The interval line's body over @ns: with --json after
	 * {"type":"interval","seq":N,"time_s":S,"interval_s":S, up to its
	 * end ("}\n"). */
	void (*interval)(struct tool *t, uint64_t ns);
	/* What --count counts so far. */
	uint64_t (*count)(struct tool *t);
	/* Optional: after the count, whether the run is over: a stop reason
	 * or NULL. @ev has TOOL_WAIT_END once --duration is over; without
	 * this hook that is TOOL_STOP_DURATION. */
	const char *(*check)(struct tool *t, unsigned int ev);
	/* The threads stopped, the ports down, the final counters read. */
	void (*collect)(struct tool *t);
	/* The totals' body over @ns, after "totals after S s (stopped by
	 * R):\n", or with --json after {"type":"totals","elapsed_s":S,
	 * "stop":R, up to the end of the line. Not called once output
	 * failed. */
	void (*totals)(struct tool *t, uint64_t ns);
	/* Optional: after the totals, 1 if the run did not do what was
	 * asked (a file not written), else 0. */
	int (*status)(struct tool *t);
	/* Everything freed, also after a failed setup. */
	void (*teardown)(struct tool *t);
};

/* Run the tool on @argv. Returns the exit status. */
int tool_main(struct tool *t, const struct tool_ops *ops, int argc,
	      char **argv);

/* "SIGINT", "SIGTERM", "SIGHUP" (the signals a tool stops on). */
const char *tool_signal_name(int sig);

/* How long a tool runs on after its source ended (a replay's, a finite
 * generator's last packet handed out): frames in flight drain. */
#define TOOL_DRAIN_MS	50

/*
 * For a check hook: once @ended (the source is done), @why when
 * TOOL_DRAIN_MS have passed since the first call that saw it end (kept in
 * *@deadline, 0 until then), else NULL.
 */
const char *tool_drain_after(bool ended, uint64_t *deadline, uint64_t now,
			     const char *why);

#endif /* UXDP_TOOLS_TOOL_H */
