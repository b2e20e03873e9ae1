/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared test helpers (t_ prefix). Include after cmocka's prerequisites. */
#ifndef UXDP_T_HELPERS_H
#define UXDP_T_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include <time.h>

/* Threaded tests run fewer iterations under TSan, which is ~10x slower. */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define T_TSAN 1
#else
#define T_TSAN 0
#endif

/* Milliseconds on CLOCK_MONOTONIC, for deadlines. */
static inline uint64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Until @cond holds, polling every millisecond, at most @ms: for a value
 * another thread moves. The caller asserts @cond after, so a timeout
 * fails there, with the value in the message.
 */
#define T_WAIT_FOR(cond, ms)						\
	do {								\
		uint64_t t_wait_end_ = t_now_ms() + (ms);		\
		const struct timespec t_wait_ms_ = { 0, 1000000 };	\
									\
		while (!(cond) && t_now_ms() < t_wait_end_)		\
			nanosleep(&t_wait_ms_, NULL);			\
	} while (0)

/*
 * UXDP_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's
 * wildcards), for repeating one test of a program by hand: call before
 * cmocka_run_group_tests.
 */
static inline void t_test_filter(void)
{
	const char *f = getenv("UXDP_TEST_FILTER");

	if (f && *f)
		cmocka_set_test_filter(f);
}

/* CTest's SKIP_RETURN_CODE: the whole program could not run here. */
#define T_EXIT_SKIP 77

/*
 * Skip the whole program loudly: say why on stderr and exit 77. On CI
 * (UXDP_CI=1 in the environment) a skip is a failure instead: CI machines
 * are root with AF_XDP, so a skip there means something is broken.
 */
static inline __attribute__((noreturn, format(printf, 1, 2)))
void t_skip_program(const char *fmt, ...)
{
	const char *ci = getenv("UXDP_CI");
	va_list ap;

	fprintf(stderr, "\n*** SKIPPED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " ***\n\n");
	if (ci && *ci && *ci != '0') {
		fprintf(stderr, "UXDP_CI is set: a skip is a failure here\n");
		exit(1);
	}
	exit(T_EXIT_SKIP);
}

/* A fixed-seed xorshift PRNG so every run is reproducible. */
static inline uint64_t t_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Resident pages of this process: /proc/self/statm, second field. */
static inline long t_rss_pages(void)
{
	long size, rss = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &rss), 2);
	fclose(f);
	return rss;
}

#endif /* UXDP_T_HELPERS_H */
