/* SPDX-License-Identifier: BSD-2-Clause */
/* A tool's main thread (tool.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "tool.h"

void tool_note(const struct tool *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->o->verbose)
		return;
	va_start(ap, fmt);
	tmsg_v(t->prog, fmt, ap);
	va_end(ap);
}

void tool_check_output(struct tool *t)
{
	int err = tstats_flush(stdout);

	if (err && !t->out_err) {
		t->out_err = err;
		t->stop = TOOL_STOP_OUTPUT;
	}
}

int tool_exit(struct tool *t, int status)
{
	if (!t->out_err && fclose(stdout))
		t->out_err = errno ? errno : EIO;
	if (t->out_err) {
		tmsg(t->prog, "writing output: %s", strerror(t->out_err));
		status = 1;
	}
	return status;
}

const char *tool_drain_after(bool ended, uint64_t *deadline, uint64_t now,
			     const char *why)
{
	if (!ended)
		return NULL;
	if (!*deadline) {
		*deadline = now + TOOL_DRAIN_MS * 1000000ULL;
		return NULL;
	}
	return now >= *deadline ? why : NULL;
}

const char *tool_signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" :
	       "SIGHUP";
}

static void header(struct tool *t, const struct tool_ops *ops)
{
	char n[32];

	if (!t->o->json && !t->o->quiet) {
		ops->header(t);
		if (t->o->count)
			printf(", until %s packets",
			       tstats_fmt_count(n, sizeof(n), t->o->count));
		if (t->o->duration)
			printf(", for %llu.%03llu s",
			       (unsigned long long)t->o->duration / 1000,
			       (unsigned long long)t->o->duration % 1000);
		printf("; Ctrl-C stops\n");
	}
	tool_check_output(t);
}

static void interval(struct tool *t, const struct tool_ops *ops)
{
	uint64_t now = t->wait.now, ns = now - t->t_last;

	t->seq++;
	if (t->o->json)
		printf("{\"type\":\"interval\",\"seq\":%llu,\"time_s\":%.3f,"
		       "\"interval_s\":%.6f,", (unsigned long long)t->seq,
		       (double)(now - t->t_start) / 1e9, (double)ns / 1e9);
	ops->interval(t, ns);
	t->t_last = now;
	tool_check_output(t);
}

/*
 * Wait for the next thing to do: a signal, the stats tick, the end of
 * --duration, or (every check_ns) the next check of the count and the
 * tool's own end. The tool's threads do the work; this one only reads
 * their counters and prints.
 */
static void run(struct tool *t, const struct tool_ops *ops)
{
	t->t_start = t->t_last = tstats_now_ns();
	tool_wait_init(&t->wait, t->sigfd, t->o->interval, t->o->duration,
		       t->t_start);
	if (ops->start)
		ops->start(t);
	while (!t->stop) {
		unsigned int ev;
		int sig = 0;

		ev = tool_wait(&t->wait, t->check_ns, &sig);
		if (ev & TOOL_WAIT_SIGNAL) {
			t->stop = tool_signal_name(sig);
			break;
		}
		if (ops->event) {
			ops->event(t, ev);
			if (t->stop)
				break;
		}
		/* The last interval is printed before a stop at the same
		 * moment (-d 2 -i 1: two lines, then the totals). */
		if ((ev & TOOL_WAIT_TICK) && !t->o->quiet)
			interval(t, ops);
		if (t->stop)
			break;
		if (t->o->count && ops->count(t) >= t->o->count)
			t->stop = TOOL_STOP_COUNT;
		else if (ops->check)
			t->stop = ops->check(t, ev);
		else if (ev & TOOL_WAIT_END)
			t->stop = TOOL_STOP_DURATION;
	}
}

static void totals(struct tool *t, const struct tool_ops *ops, uint64_t ns)
{
	/* Only set-up failures end a run without a reason, and they print
	 * no totals. */
	const char *why = t->stop ? t->stop : "setup";

	if (!t->o->json) {
		printf("totals after %.3f s (stopped by %s):\n",
		       (double)ns / 1e9, why);
	} else {
		printf("{\"type\":\"totals\",\"elapsed_s\":%.6f,\"stop\":",
		       (double)ns / 1e9);
		tjson_str(stdout, why);
	}
	ops->totals(t, ns);
	tool_check_output(t);
}

int tool_main(struct tool *t, const struct tool_ops *ops, int argc,
	      char **argv)
{
	uint64_t ns;
	int status = 0;

	ops->parse(t, argc, argv);
	t->sigfd = tool_signals_open();
	if (t->sigfd < 0) {
		tmsg(t->prog, "signals: %s", strerror(-t->sigfd));
		return 1;
	}
	if (ops->setup(t)) {
		ops->teardown(t);
		close(t->sigfd);
		return 1;
	}
	header(t, ops);
	run(t, ops);
	ns = tstats_now_ns() - t->t_start;
	ops->collect(t);
	if (!t->out_err)
		totals(t, ops, ns);
	if (ops->status)
		status = ops->status(t);
	ops->teardown(t);
	close(t->sigfd);
	return tool_exit(t, status);
}
