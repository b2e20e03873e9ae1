/* SPDX-License-Identifier: BSD-2-Clause */
/* The tools' signalfd (signals.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "signals.h"
#include "stats.h"

/* Never runs: see tool_signals_open(). */
static void on_signal(int sig)
{
	(void)sig;
}

int tool_signals_open(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;
	unsigned int i;
	int fd, err;

	/* Blocked first: a signal arriving between here and the signalfd
	 * waits, rather than meeting the old disposition. */
	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);	/* an errno value */
	if (err)
		return -err;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -errno;
	signal(SIGPIPE, SIG_IGN);
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void tool_wait_init(struct tool_wait *w, int sigfd, uint64_t interval_ms,
		    uint64_t duration_ms, uint64_t now)
{
	w->sigfd = sigfd;
	w->evfd = -1;
	w->interval_ns = interval_ms * 1000000ULL;
	w->now = now;
	w->next_tick = now + w->interval_ns;
	w->end = duration_ms ? now + duration_ms * 1000000ULL : 0;
}

unsigned int tool_wait(struct tool_wait *w, uint64_t check_ns, int *sig)
{
	struct pollfd pfd[2] = {
		{ .fd = w->sigfd, .events = POLLIN },
		{ .fd = w->evfd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	uint64_t now = tstats_now_ns(), wake = w->next_tick;
	unsigned int ev = 0;
	int timeout_ms;

	if (w->end && w->end < wake)
		wake = w->end;
	if (check_ns && now + check_ns < wake)
		wake = now + check_ns;
	timeout_ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
	if (poll(pfd, w->evfd >= 0 ? 2 : 1, timeout_ms) > 0 &&
	    (pfd[0].revents & POLLIN) &&
	    read(w->sigfd, &si, sizeof(si)) == sizeof(si)) {
		*sig = (int)si.ssi_signo;
		w->now = tstats_now_ns();
		return TOOL_WAIT_SIGNAL;
	}
	/* The caller reads evfd: until then it stays readable. */
	if (w->evfd >= 0 && pfd[1].revents)
		ev |= TOOL_WAIT_FD;
	now = tstats_now_ns();
	w->now = now;
	if (now >= w->next_tick) {
		ev |= TOOL_WAIT_TICK;
		w->next_tick += w->interval_ns;
		if (w->next_tick <= now)
			w->next_tick = now + w->interval_ns;
	}
	if (w->end && now >= w->end)
		ev |= TOOL_WAIT_END;
	return ev;
}
