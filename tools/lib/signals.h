/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the tools stop: SIGINT, SIGTERM and SIGHUP read from a signalfd by
 * the main thread, never delivered to a handler.
 */
#ifndef UXDP_TOOLS_SIGNALS_H
#define UXDP_TOOLS_SIGNALS_H

#include <stdint.h>

/*
 * Block SIGINT, SIGTERM and SIGHUP in the calling thread (call it before
 * any thread exists: they inherit the mask, so only the signalfd ever
 * takes these signals), give them a handler that never runs (so they are
 * ours also when a shell started the tool in the background with SIGINT
 * ignored), ignore SIGPIPE (a reader gone is a write error to report and
 * a clean teardown, not death with ports or sockets attached), and return
 * a non-blocking signalfd for the three, or -errno.
 */
int tool_signals_open(void);

/*
 * The tools' main-thread loop: sleep on the signalfd until a signal, the
 * next stats tick, the end of a run's duration, or (when the caller has
 * something to check, a count) the next check.
 */
struct tool_wait {
	int sigfd;
	int evfd;		/* another fd to wake on (link events), or -1 */
	uint64_t interval_ns;	/* between stats ticks */
	uint64_t next_tick;	/* ns, CLOCK_MONOTONIC (tstats_now_ns) */
	uint64_t end;		/* ns; 0: no duration */
	uint64_t now;		/* when tool_wait() last returned */
};

enum {
	TOOL_WAIT_SIGNAL = 1,	/* *sig is the signal: stop */
	TOOL_WAIT_TICK = 2,	/* print an interval line (now) */
	TOOL_WAIT_END = 4,	/* the duration is over */
	TOOL_WAIT_FD = 8,	/* evfd is readable */
};

/* Start at @now: the first tick an interval later, the end after
 * @duration_ms (0: none). No evfd: set w->evfd after, to wake on it. */
void tool_wait_init(struct tool_wait *w, int sigfd, uint64_t interval_ms,
		    uint64_t duration_ms, uint64_t now);

/*
 * Sleep until the next event, at most @check_ns (0: no check wanted).
 * Returns TOOL_WAIT_* bits; none when only the check is due. A tick is
 * reported before an end at the same moment, so the last interval is
 * printed before the totals; after a stall the next tick comes an interval
 * from now, not in a burst.
 */
unsigned int tool_wait(struct tool_wait *w, uint64_t check_ns, int *sig);

#endif /* UXDP_TOOLS_SIGNALS_H */
