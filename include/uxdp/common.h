/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp common definitions: compiler helpers, the two atomic wrappers every
 * ring uses, option-struct helpers and error reporting.
 *
 * Do not include this header directly; include <uxdp/uxdp.h> or the layer
 * header you need (<uxdp/ring.h>, <uxdp/umem.h>, <uxdp/pool.h>).
 */
#ifndef UXDP_COMMON_H
#define UXDP_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UXDP_VERSION_MAJOR 0
#define UXDP_VERSION_MINOR 1

#define uxdp_likely(x)		__builtin_expect(!!(x), 1)
#define uxdp_unlikely(x)	__builtin_expect(!!(x), 0)

/* Hot-path helpers are inline in the headers and also exported as symbols
 * (see src/ring/ring.c) so language bindings can call them.
 */
#ifndef UXDP_INLINE
#define UXDP_INLINE static inline __attribute__((always_inline))
#endif

#define UXDP_CACHE_LINE 64

/* Threads that may poll or transmit at once (each gets per-thread state). */
#define UXDP_MAX_THREADS 64

/*
 * The only two atomic operations the rings use. Every use site carries a
 * label (A, B, C, D) that refers to the ordering diagram at the top of
 * <uxdp/ring.h>.
 */
#define uxdp_load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define uxdp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

/*
 * Option structs start with their own size and grow at the tail. Zero means
 * "use the default". A caller built against a newer header may pass a larger
 * struct; the library rejects it only if the bytes it does not know are
 * non-zero.
 */
/*
 * The padding must be zero too (the library checks every byte past the
 * fields it knows, and a struct's tail padding is where a newer field
 * would go), and C leaves the padding of an initialised automatic struct
 * unspecified: clang leaves stack garbage there. So zero the whole object
 * first, then assign the initialised copy, as libbpf's LIBBPF_OPTS does
 * ([bpf] libbpf_common.h).
 */
#define UXDP_DECLARE_OPTS(type, name, ...)				\
	struct type name = ({						\
		__builtin_memset(&name, 0, sizeof(struct type));	\
		(struct type){ .sz = sizeof(struct type), __VA_ARGS__ };	\
	})

/*
 * For code that takes such a struct (the library, drivers): whether @opts
 * (NULL is fine) is acceptable, given the struct declares its last field
 * with `#define type__last_field field`. Sets uxdp_errmsg() when not.
 */
bool uxdp_opts_valid(const void *opts, size_t user_sz, size_t known_end,
		     const char *name);

#define UXDP_OPTS_VALID(opts, type)					\
	(!(opts) || uxdp_opts_valid((opts), (opts)->sz,			\
				    offsetof(struct type, type##__last_field) + \
				    sizeof((opts)->type##__last_field), #type))
/* Field @f of @opts, or @def if the caller's struct is too small or f is 0. */
#define UXDP_OPTS_GET(opts, f, def)					\
	(((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), f) +	\
	  sizeof((opts)->f) && (opts)->f) ? (opts)->f : (def))

/* Marks a definition as part of libuxdp's ABI (the library is built with
 * hidden visibility; src/libuxdp.map lists the names). */
#define UXDP_API	__attribute__((visibility("default")))

/*
 * Error text of the last failed uxdp call in this thread ("" if none). Control
 * path calls that fail set it along with their -errno / errno so a caller can
 * say *why* a configuration was refused. Returns a pointer to thread-local
 * storage, valid until the next failing call in this thread, at most
 * UXDP_ERRMSG_MAX bytes with its NUL (a copy kept across another call fits
 * in a buffer of that size).
 */
#define UXDP_ERRMSG_MAX	512
const char *uxdp_errmsg(void);

/*
 * For drivers and other code reporting through uxdp_errmsg(): record why a
 * call failed and return -@err, as in
 *	return uxdp_set_error(EINVAL, "mydrv: bad size %u", n);
 * and clear the text at the start of a control-path call.
 */
int uxdp_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void uxdp_clear_error(void);

enum uxdp_print_level {
	UXDP_WARN,
	UXDP_INFO,
	UXDP_DEBUG,
};

typedef int (*uxdp_print_fn_t)(enum uxdp_print_level level, const char *fmt,
			       va_list ap);

/*
 * The library never prints on its own. Warnings go through this callback;
 * the default prints UXDP_WARN to stderr and drops the rest. Pass NULL to
 * silence everything. Returns the previous callback.
 */
uxdp_print_fn_t uxdp_set_print(uxdp_print_fn_t fn);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_COMMON_H */
