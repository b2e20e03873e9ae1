/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to libuxdp: shared by every layer's sources, never installed. */
#ifndef UXDP_INTERNAL_H
#define UXDP_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <uxdp/common.h>

#define likely(x)	uxdp_likely(x)
#define unlikely(x)	uxdp_unlikely(x)
#define __cold		__attribute__((cold))
#define UXDP_EXPORT	UXDP_API

/*
 * Thread-locals read on the fast path. In a -fPIC library the default TLS
 * model calls __tls_get_addr() on every access (~20 instructions per frame
 * in the veth loop, measured with callgrind); initial-exec is one
 * %fs-relative load. The cost: a few bytes of the static TLS surplus glibc
 * keeps for dlopen()ed libraries, which is what it is there for.
 */
#define UXDP_TLS_FAST	__thread __attribute__((tls_model("initial-exec")))

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

static inline bool is_pow2_u64(uint64_t x)
{
	return x && !(x & (x - 1));
}

/*
 * Record why a control-path call failed (read back with uxdp_errmsg()) and
 * return -@err, so a check reads: return uxdp_fail(EINVAL, "why %u", x);
 */
int uxdp_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clear the thread's error text at the start of a control-path call. */
void uxdp_clear_err(void);

/* Print through the user's callback (uxdp_set_print). */
void uxdp_pr(enum uxdp_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A thread's identity, for "is this the owning thread?" checks on the frame
 * return path: the address of a thread-local byte is unique among live
 * threads and costs one TLS address computation to get.
 */
extern UXDP_TLS_FAST char uxdp_thread_tok;
static inline const void *uxdp_thread_id(void)
{
	return &uxdp_thread_tok;
}

/* The data path's spinlock (a pool's remote-return stack): public, for
 * drivers too. */
#include <uxdp/spinlock.h>

#endif /* UXDP_INTERNAL_H */
