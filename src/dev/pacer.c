/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Pacing for drivers whose queues make their own packets (null, pcap, nic).
 *
 * What is due is num / den packets per second since t0, less what was sent
 * since t0; the poller adds to sent as it makes packets. After a stall the
 * backlog is capped at one burst: the poller that sees more moves t0 to
 * now and forgets the rest, so a generator paused by a slow program does
 * not flood the next poll. t0 and sent are relaxed atomics: the poller is
 * their only writer, and an rx_pending check on another thread only needs
 * an answer that is right or a little late (the timer wakes it again).
 *
 * The timerfd is what lets an idle poller sleep: it ticks about once per
 * packet (no faster than every 100 us, no slower than once a second) and
 * the poller consumes the ticks when nothing is due.
 */
#include "../internal.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/driver.h>

#define PACER_TICK_MIN_NS	100000ULL
#define NSEC			1000000000ULL

static uint64_t pacer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

UXDP_API int uxdp_pacer_init(struct uxdp_pacer *p, uint64_t num, uint64_t den)
{
	if (!p)
		return uxdp_set_error(EINVAL, "pacer: NULL");
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!num)
		return 0;
	p->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->fd < 0) {
		p->fd = -1;
		return uxdp_set_error(errno, "timerfd_create: %s",
				      strerror(errno));
	}
	p->num = num;
	p->den = den ? den : 1;
	return 0;
}

/* A zeroed pacer has num 0 and owns no descriptor: a driver's destroy may
 * run before its create got as far as uxdp_pacer_init(). */
UXDP_API void uxdp_pacer_fini(struct uxdp_pacer *p)
{
	if (p && p->num && p->fd >= 0)
		close(p->fd);
	if (p) {
		p->num = 0;
		p->fd = -1;
	}
}

UXDP_API int uxdp_pacer_start(struct uxdp_pacer *p)
{
	struct itimerspec its;
	uint64_t tick;

	if (!p || !p->num)
		return 0;
	__atomic_store_n(&p->t0, pacer_now(), __ATOMIC_RELAXED);
	__atomic_store_n(&p->sent, 0, __ATOMIC_RELAXED);
	/* One tick per packet, within [100 us, 1 s]. */
	tick = (uint64_t)((unsigned __int128)p->den * NSEC / p->num);
	tick = MIN(MAX(tick, PACER_TICK_MIN_NS), NSEC);
	its.it_interval.tv_sec = (time_t)(tick / NSEC);
	its.it_interval.tv_nsec = (long)(tick % NSEC);
	its.it_value = its.it_interval;
	if (timerfd_settime(p->fd, 0, &its, NULL))
		return uxdp_set_error(errno, "timerfd_settime: %s",
				      strerror(errno));
	return 0;
}

UXDP_API void uxdp_pacer_stop(struct uxdp_pacer *p)
{
	struct itimerspec off = { 0 };

	if (p && p->num)
		timerfd_settime(p->fd, 0, &off, NULL);
}

UXDP_API uint64_t uxdp_pacer_due(struct uxdp_pacer *p, bool commit)
{
	uint64_t t0, sent, now, due;

	if (!p->num)
		return UINT64_MAX;
	t0 = __atomic_load_n(&p->t0, __ATOMIC_RELAXED);
	sent = __atomic_load_n(&p->sent, __ATOMIC_RELAXED);
	now = pacer_now();
	/* The distance, not the order of the two readings: a t0 moved back
	 * past the clock's zero (a machine up for less time than the
	 * backlog, as a test makes one) is still in the past. */
	if ((int64_t)(now - t0) < 0)
		return 0;	/* another thread's t0, a moment ahead */
	due = (uint64_t)((unsigned __int128)(now - t0) * p->num /
			 ((unsigned __int128)p->den * NSEC));
	if (due <= sent)
		return 0;
	if (due - sent > UXDP_PACER_BURST) {
		if (commit) {
			/* Forget what was missed beyond one burst. */
			__atomic_store_n(&p->t0, now, __ATOMIC_RELAXED);
			__atomic_store_n(&p->sent, 0, __ATOMIC_RELAXED);
		}
		return UXDP_PACER_BURST;
	}
	return due - sent;
}

UXDP_API void uxdp_pacer_sent(struct uxdp_pacer *p, uint64_t n)
{
	if (p->num)
		__atomic_store_n(&p->sent, p->sent + n, __ATOMIC_RELAXED);
}

UXDP_API int uxdp_pacer_fd(const struct uxdp_pacer *p)
{
	return p && p->num ? p->fd : -1;
}

UXDP_API void uxdp_pacer_ack(struct uxdp_pacer *p)
{
	uint64_t ticks;

	if (p->num && read(p->fd, &ticks, sizeof(ticks)) < 0) {
		/* EAGAIN: no tick pending. */
	}
}
