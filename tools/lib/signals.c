/* SPDX-License-Identifier: BSD-2-Clause */
/* The tools' signalfd (signals.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>

#include "signals.h"

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
