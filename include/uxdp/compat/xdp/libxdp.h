/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp's stand-in for libxdp's <xdp/libxdp.h>: the names, types and
 * constants of libxdp's program API, so that an AF_XDP application that
 * includes it (the kernel's xdpsock and AF_XDP forwarder do) builds with
 * -luxdp alone:
 *
 *	cc -I<prefix>/include/uxdp/compat -I<prefix>/include app.c -luxdp
 *
 * uxdp runs no eBPF programs yet, so every call that would load, attach,
 * detach or look at one is refused: it prints "uxdp compat: CALL: eBPF
 * programs are not supported yet", sets errno to EOPNOTSUPP and returns
 * what libxdp returns on failure (an error pointer from the calls that
 * make an object, which libxdp_get_error() decodes; NULL, false, 0 or a
 * negative errno from the others). An application's own program is not
 * needed for the usual path: xsk_socket__create() attaches uxdp's
 * equivalent of libxdp's built-in XSK program (see <xdp/xsk.h>).
 *
 * The refusals are the section "the program API" below, each one a call
 * of uxdp_compat_unsupported(): the eBPF work replaces that section with
 * the real calls. docs/compat.md lists what is refused and why.
 */
#ifndef UXDP_COMPAT_XDP_LIBXDP_H
#define UXDP_COMPAT_XDP_LIBXDP_H

/* libxdp's guard: the real header, if also on the path, stays out. */
#ifndef __LIBXDP_LIBXDP_H
#define __LIBXDP_LIBXDP_H
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
/* As libxdp's header does; in this directory, uxdp's stand-ins, which
 * bring libbpf's own headers in when they are installed. */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include <uxdp/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef XDP_ALWAYS_INLINE
#define XDP_ALWAYS_INLINE static inline __attribute__((__always_inline__))
#endif
/* The refusals look at none of their arguments. */
#define UXDP_COMPAT_UNUSED	__attribute__((__unused__))
#define UXDP_CU			UXDP_COMPAT_UNUSED

/* ---- constants and types ------------------------------------------------ */

/* The environment libxdp reads (uxdp does not). */
#define XDP_BPFFS_ENVVAR	"LIBXDP_BPFFS"
#define XDP_BPFFS_MOUNT_ENVVAR	"LIBXDP_BPFFS_AUTOMOUNT"
#define XDP_OBJECT_ENVVAR	"LIBXDP_OBJECT_PATH"

#define XDP_ATTACH_DEVBIND	(1 << 0)
#define XDP_ATTACH_FLAGS	(XDP_ATTACH_DEVBIND)

/* From libxdp's xdp_helpers.h, which its header includes. */
#ifndef XDP_DEFAULT_RUN_PRIO
#define XDP_DEFAULT_RUN_PRIO		50
#endif
#ifndef XDP_DEFAULT_CHAIN_CALL_ACTIONS
#define XDP_DEFAULT_CHAIN_CALL_ACTIONS	(1 << XDP_PASS)
#endif

enum xdp_attach_mode {
	XDP_MODE_UNSPEC = 0,
	XDP_MODE_NATIVE,
	XDP_MODE_SKB,
	XDP_MODE_HW
};

enum libxdp_print_level {
	LIBXDP_WARN,
	LIBXDP_INFO,
	LIBXDP_DEBUG,
};

typedef int (*libxdp_print_fn_t)(enum libxdp_print_level level,
				 const char *, va_list ap);

/* Opaque, as in libxdp; no call here ever makes one. */
struct xdp_program;
struct xdp_multiprog;

/* libxdp's xdp_program__create() options (set exactly one source). */
struct xdp_program_opts {
	size_t sz;
	struct bpf_object *obj;
	struct bpf_object_open_opts *opts;
	const char *prog_name;
	const char *find_filename;
	const char *open_filename;
	const char *pin_path;
	__u32 id;
	int fd;
	size_t :0;
};
#define xdp_program_opts__last_field fd

#define DECLARE_LIBXDP_OPTS DECLARE_LIBBPF_OPTS

/* ---- errors -------------------------------------------------------------- */

/*
 * libxdp encodes an error in the pointer the calls that make an object
 * return (the kernel's ERR_PTR: the top 4095 addresses); these decode it.
 */
#define UXDP_COMPAT_MAX_ERRNO	4095

XDP_ALWAYS_INLINE void *uxdp_compat_err_ptr(int err)
{
	errno = -err;
	return (void *)(intptr_t)err;
}

XDP_ALWAYS_INLINE bool uxdp_compat_is_err(const void *p)
{
	return (uintptr_t)p >= (uintptr_t)-UXDP_COMPAT_MAX_ERRNO;
}

/* 0 for an object; its error for an error pointer; -errno for NULL. */
XDP_ALWAYS_INLINE long libxdp_get_error(const void *ptr)
{
	if (ptr && !uxdp_compat_is_err(ptr))
		return 0;
	if (ptr)
		errno = (int)-(intptr_t)ptr;
	return -errno;
}

/* The text of error @err (negative or not) in @buf: 0, or -EINVAL. */
XDP_ALWAYS_INLINE int libxdp_strerror(int err, char *buf, size_t size)
{
	int e = err < 0 ? -err : err;

	if (!buf || !size)
		return -EINVAL;
	snprintf(buf, size, "%s", strerror(e));
	return 0;
}

/* Where the refusals' messages go (NULL: nowhere); returns the last. */
XDP_ALWAYS_INLINE libxdp_print_fn_t libxdp_set_print(libxdp_print_fn_t fn)
{
	return (libxdp_print_fn_t)uxdp_compat_libxdp_set_print(
		(uxdp_compat_print_fn)fn);
}

/* ---- the program API: refused until uxdp runs eBPF programs ------------ */

/* A call that makes an object: libxdp's error pointer. */
#define UXDP_COMPAT_REFUSE_PTR(call)					\
	uxdp_compat_err_ptr(uxdp_compat_unsupported(call))
/* A call that looks at an object: NULL, errno set. */
#define UXDP_COMPAT_REFUSE_NULL(call)					\
	(uxdp_compat_unsupported(call), (void *)0)

XDP_ALWAYS_INLINE int libxdp_clean_references(int ifindex)
{
	(void)ifindex;
	return uxdp_compat_unsupported("libxdp_clean_references");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__from_bpf_obj(struct bpf_object *obj, const char *section_name)
{
	(void)obj;
	(void)section_name;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__from_bpf_obj");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__find_file(const char *filename, const char *section_name,
		       struct bpf_object_open_opts *opts)
{
	(void)filename;
	(void)section_name;
	(void)opts;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__find_file");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__open_file(const char *filename, const char *section_name,
		       struct bpf_object_open_opts *opts)
{
	(void)filename;
	(void)section_name;
	(void)opts;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__open_file");
}

XDP_ALWAYS_INLINE struct xdp_program *xdp_program__from_fd(int fd)
{
	(void)fd;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__from_fd");
}

XDP_ALWAYS_INLINE struct xdp_program *xdp_program__from_id(__u32 prog_id)
{
	(void)prog_id;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__from_id");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__from_pin(const char *pin_path)
{
	(void)pin_path;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__from_pin");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__clone(struct xdp_program *xdp_prog, unsigned int flags)
{
	(void)xdp_prog;
	(void)flags;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_PTR("xdp_program__clone");
}

/* NULL, as libxdp's xdp_program__create does (not an error pointer). */
XDP_ALWAYS_INLINE struct xdp_program *
xdp_program__create(struct xdp_program_opts *opts)
{
	(void)opts;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_NULL("xdp_program__create");
}

/* Nothing to close: no call made one. Quiet, as cleanup paths call it
 * with whatever the opening call returned. */
XDP_ALWAYS_INLINE void xdp_program__close(struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
}

XDP_ALWAYS_INLINE int xdp_program__test_run(struct xdp_program *xdp_prog,
					    struct bpf_test_run_opts *opts,
					    unsigned int flags)
{
	(void)xdp_prog;
	(void)opts;
	(void)flags;
	return uxdp_compat_unsupported("xdp_program__test_run");
}

XDP_ALWAYS_INLINE enum xdp_attach_mode
xdp_program__is_attached(const struct xdp_program *xdp_prog, int ifindex)
{
	(void)xdp_prog;
	(void)ifindex;
	uxdp_compat_unsupported("xdp_program__is_attached");
	return XDP_MODE_UNSPEC;
}

XDP_ALWAYS_INLINE const char *
xdp_program__name(const struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	return (const char *)UXDP_COMPAT_REFUSE_NULL("xdp_program__name");
}

XDP_ALWAYS_INLINE const unsigned char *
xdp_program__tag(const struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	return (const unsigned char *)
		UXDP_COMPAT_REFUSE_NULL("xdp_program__tag");
}

XDP_ALWAYS_INLINE struct bpf_object *
xdp_program__bpf_obj(struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	return (struct bpf_object *)
		UXDP_COMPAT_REFUSE_NULL("xdp_program__bpf_obj");
}

XDP_ALWAYS_INLINE const struct btf *
xdp_program__btf(struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	return (const struct btf *)UXDP_COMPAT_REFUSE_NULL("xdp_program__btf");
}

XDP_ALWAYS_INLINE uint32_t xdp_program__id(const struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	uxdp_compat_unsupported("xdp_program__id");
	return 0;
}

XDP_ALWAYS_INLINE int xdp_program__fd(const struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	return uxdp_compat_unsupported("xdp_program__fd");
}

XDP_ALWAYS_INLINE unsigned int
xdp_program__run_prio(const struct xdp_program *xdp_prog)
{
	(void)xdp_prog;
	uxdp_compat_unsupported("xdp_program__run_prio");
	return XDP_DEFAULT_RUN_PRIO;
}

XDP_ALWAYS_INLINE int xdp_program__set_run_prio(struct xdp_program *xdp_prog,
						unsigned int run_prio)
{
	(void)xdp_prog;
	(void)run_prio;
	return uxdp_compat_unsupported("xdp_program__set_run_prio");
}

XDP_ALWAYS_INLINE bool
xdp_program__chain_call_enabled(const struct xdp_program *xdp_prog,
				enum xdp_action action)
{
	(void)xdp_prog;
	(void)action;
	uxdp_compat_unsupported("xdp_program__chain_call_enabled");
	return false;
}

XDP_ALWAYS_INLINE int
xdp_program__set_chain_call_enabled(struct xdp_program *prog,
				    unsigned int action, bool enabled)
{
	(void)prog;
	(void)action;
	(void)enabled;
	return uxdp_compat_unsupported("xdp_program__set_chain_call_enabled");
}

XDP_ALWAYS_INLINE int
xdp_program__print_chain_call_actions(const struct xdp_program *prog,
				      char *buf, size_t buf_len)
{
	(void)prog;
	(void)buf;
	(void)buf_len;
	return uxdp_compat_unsupported(
		"xdp_program__print_chain_call_actions");
}

XDP_ALWAYS_INLINE bool
xdp_program__xdp_frags_support(const struct xdp_program *prog)
{
	(void)prog;
	uxdp_compat_unsupported("xdp_program__xdp_frags_support");
	return false;
}

XDP_ALWAYS_INLINE int
xdp_program__set_xdp_frags_support(struct xdp_program *prog, bool frags)
{
	(void)prog;
	(void)frags;
	return uxdp_compat_unsupported("xdp_program__set_xdp_frags_support");
}

XDP_ALWAYS_INLINE int xdp_program__pin(struct xdp_program *xdp_prog,
				       const char *pin_path)
{
	(void)xdp_prog;
	(void)pin_path;
	return uxdp_compat_unsupported("xdp_program__pin");
}

/* Two pairs of calls with one signature each. */
#define UXDP_COMPAT_REFUSE_ATTACH(call)					\
XDP_ALWAYS_INLINE int call(struct xdp_program *xdp_prog UXDP_CU,	\
			   int ifindex UXDP_CU,				\
			   enum xdp_attach_mode mode UXDP_CU,		\
			   unsigned int flags UXDP_CU)			\
{									\
	return uxdp_compat_unsupported(#call);				\
}
#define UXDP_COMPAT_REFUSE_ATTACH_MULTI(call)				\
XDP_ALWAYS_INLINE int call(struct xdp_program **progs UXDP_CU,		\
			   size_t num_progs UXDP_CU, int ifindex UXDP_CU, \
			   enum xdp_attach_mode mode UXDP_CU,		\
			   unsigned int flags UXDP_CU)			\
{									\
	return uxdp_compat_unsupported(#call);				\
}
UXDP_COMPAT_REFUSE_ATTACH(xdp_program__attach)
UXDP_COMPAT_REFUSE_ATTACH(xdp_program__detach)
UXDP_COMPAT_REFUSE_ATTACH_MULTI(xdp_program__attach_multi)
UXDP_COMPAT_REFUSE_ATTACH_MULTI(xdp_program__detach_multi)
#undef UXDP_COMPAT_REFUSE_ATTACH
#undef UXDP_COMPAT_REFUSE_ATTACH_MULTI

XDP_ALWAYS_INLINE struct xdp_multiprog *
xdp_multiprog__get_from_ifindex(int ifindex)
{
	(void)ifindex;
	return (struct xdp_multiprog *)
		UXDP_COMPAT_REFUSE_PTR("xdp_multiprog__get_from_ifindex");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_multiprog__next_prog(const struct xdp_program *prog,
			 const struct xdp_multiprog *mp)
{
	(void)prog;
	(void)mp;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_NULL("xdp_multiprog__next_prog");
}

/* Quiet, as xdp_program__close. */
XDP_ALWAYS_INLINE void xdp_multiprog__close(struct xdp_multiprog *mp)
{
	(void)mp;
}

XDP_ALWAYS_INLINE int xdp_multiprog__detach(struct xdp_multiprog *mp)
{
	(void)mp;
	return uxdp_compat_unsupported("xdp_multiprog__detach");
}

XDP_ALWAYS_INLINE enum xdp_attach_mode
xdp_multiprog__attach_mode(const struct xdp_multiprog *mp)
{
	(void)mp;
	uxdp_compat_unsupported("xdp_multiprog__attach_mode");
	return XDP_MODE_UNSPEC;
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_multiprog__main_prog(const struct xdp_multiprog *mp)
{
	(void)mp;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_NULL("xdp_multiprog__main_prog");
}

XDP_ALWAYS_INLINE struct xdp_program *
xdp_multiprog__hw_prog(const struct xdp_multiprog *mp)
{
	(void)mp;
	return (struct xdp_program *)
		UXDP_COMPAT_REFUSE_NULL("xdp_multiprog__hw_prog");
}

/* The questions about a multiprog: no. */
#define UXDP_COMPAT_REFUSE_MP_BOOL(call)				\
XDP_ALWAYS_INLINE bool call(const struct xdp_multiprog *mp UXDP_CU)	\
{									\
	uxdp_compat_unsupported(#call);					\
	return false;							\
}
UXDP_COMPAT_REFUSE_MP_BOOL(xdp_multiprog__is_legacy)
UXDP_COMPAT_REFUSE_MP_BOOL(xdp_multiprog__xdp_frags_support)
UXDP_COMPAT_REFUSE_MP_BOOL(xdp_multiprog__xdp_dev_bound)
#undef UXDP_COMPAT_REFUSE_MP_BOOL

XDP_ALWAYS_INLINE int
xdp_multiprog__program_count(const struct xdp_multiprog *mp UXDP_CU)
{
	return uxdp_compat_unsupported("xdp_multiprog__program_count");
}

#undef UXDP_COMPAT_REFUSE_PTR
#undef UXDP_COMPAT_REFUSE_NULL
#undef UXDP_CU

#ifdef __cplusplus
}
#endif

#endif /* UXDP_COMPAT_XDP_LIBXDP_H */
