/* SPDX-License-Identifier: BSD-2-Clause */
/* Error text, the print callback and option-struct validation. */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include "../internal.h"

/* Room for a reason with a list in it (a busy queue names its holders). */
static __thread char err_buf[UXDP_ERRMSG_MAX];
UXDP_TLS_FAST char uxdp_thread_tok;

UXDP_EXPORT const char *uxdp_errmsg(void)
{
	return err_buf;
}

void uxdp_clear_err(void)
{
	err_buf[0] = '\0';
}

UXDP_EXPORT void uxdp_clear_error(void)
{
	err_buf[0] = '\0';
}

/*
 * Format into a scratch buffer first: callers wrap an inner error as
 * uxdp_fail(e, "opening %s: %s", port, uxdp_errmsg()), and vsnprintf
 * into the buffer one of its own arguments points at is undefined (it
 * garbled such messages in practice).
 */
static void set_msg(const char *fmt, va_list ap)
{
	char tmp[sizeof(err_buf)];

	/* Terminated even if vsnprintf fails (a bad format for the locale). */
	tmp[0] = '\0';
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	tmp[sizeof(tmp) - 1] = '\0';
	memcpy(err_buf, tmp, sizeof(err_buf));
}

int uxdp_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(fmt, ap);
	va_end(ap);
	return -err;
}

UXDP_EXPORT int uxdp_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(fmt, ap);
	va_end(ap);
	return -err;
}

static int default_print(enum uxdp_print_level level, const char *fmt,
			 va_list ap)
{
	if (level != UXDP_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uxdp_print_fn_t print_fn = default_print;

UXDP_EXPORT uxdp_print_fn_t uxdp_set_print(uxdp_print_fn_t fn)
{
	uxdp_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

UXDP_EXPORT void uxdp_pr(enum uxdp_print_level level, const char *fmt, ...)
{
	uxdp_print_fn_t fn = print_fn;
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

UXDP_EXPORT bool uxdp_opts_valid(const void *opts, size_t user_sz, size_t known_end,
		     const char *name)
{
	const unsigned char *p = opts;
	size_t i;

	if (user_sz < sizeof(size_t)) {
		uxdp_fail(EINVAL, "%s: sz is %zu; use UXDP_DECLARE_OPTS", name,
			  user_sz);
		return false;
	}
	for (i = known_end; i < user_sz; i++) {
		if (p[i]) {
			uxdp_fail(EINVAL,
				  "%s: unknown non-zero byte at offset %zu "
				  "(built against a newer uxdp?)", name, i);
			return false;
		}
	}
	return true;
}
