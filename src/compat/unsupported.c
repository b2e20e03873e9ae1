/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the compatibility headers refuse, in one place: libxdp's program API
 * (include/uxdp/compat/xdp/libxdp.h) and libbpf's calls on a program's maps
 * (include/uxdp/compat/bpf/libbpf.h) each call uxdp_compat_unsupported()
 * with their name. When uxdp runs eBPF programs, the headers call the real
 * implementations instead and this goes.
 */
#include "../internal.h"

#include <stdarg.h>
#include <stdio.h>

#include <uxdp/compat.h>

/* libxdp_set_print()'s function, and whether one was set (NULL then
 * silences, as in libxdp). */
static uxdp_compat_print_fn libxdp_print;
static bool libxdp_print_set;

/* va_list is only to be had from a variadic function. */
static void call_print(uxdp_compat_print_fn fn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void call_print(uxdp_compat_print_fn fn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fn(0, fmt, ap);		/* LIBXDP_WARN */
	va_end(ap);
}

UXDP_EXPORT uxdp_compat_print_fn
uxdp_compat_libxdp_set_print(uxdp_compat_print_fn fn)
{
	uxdp_compat_print_fn old = __atomic_load_n(&libxdp_print,
						  __ATOMIC_ACQUIRE);

	__atomic_store_n(&libxdp_print, fn, __ATOMIC_RELEASE);
	__atomic_store_n(&libxdp_print_set, true, __ATOMIC_RELEASE);
	return old;
}

/* @msg through libxdp_set_print()'s function, or uxdp's printing. */
static void say(const char *msg)
{
	uxdp_compat_print_fn fn;

	if (!__atomic_load_n(&libxdp_print_set, __ATOMIC_ACQUIRE)) {
		uxdp_pr(UXDP_WARN, "%s", msg);
		return;
	}
	fn = __atomic_load_n(&libxdp_print, __ATOMIC_ACQUIRE);
	if (fn)
		call_print(fn, "%s", msg);
}

UXDP_EXPORT __cold int uxdp_compat_unsupported(const char *call)
{
	char msg[160];
	int err;

	err = uxdp_fail(EOPNOTSUPP, "%s: eBPF programs are not supported yet",
			call ? call : "(null)");
	/* An unmodified application cannot ask uxdp_errmsg(): say it. */
	snprintf(msg, sizeof(msg), "uxdp compat: %s (docs/compat.md)\n",
		 uxdp_errmsg());
	say(msg);
	errno = -err;
	return err;
}
