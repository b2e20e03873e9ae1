/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp's stand-in for libbpf's <bpf/libbpf.h> (and, through <bpf/bpf.h>
 * in this directory, for that one too), for AF_XDP applications built
 * against uxdp's compatibility headers (-I<prefix>/include/uxdp/compat).
 *
 * libbpf's own headers are included when they are installed, so every
 * libbpf type and declaration is libbpf's; without them, the few types
 * <xdp/libxdp.h> names are declared here, opaque. Then the libbpf calls
 * that the kernel's AF_XDP samples make on their own program's maps
 * (xdpsock's multi-socket path) are redirected, with object-like macros as
 * <xdp/xsk.h> redirects sendto, to refusals like those of <xdp/libxdp.h>:
 * uxdp runs no eBPF programs yet, so there is no map to look at. With
 * them, such an application links with -luxdp alone; it needs -lbpf
 * only for libbpf calls not listed here (docs/compat.md).
 */
#ifndef UXDP_COMPAT_BPF_LIBBPF_H
#define UXDP_COMPAT_BPF_LIBBPF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>

/* libbpf's headers, if installed: both, before any macro below, so that
 * their declarations keep libbpf's names. */
#if !defined(UXDP_COMPAT_NO_LIBBPF) && defined(__has_include_next)
#if __has_include_next(<bpf/libbpf.h>)
#include_next <bpf/libbpf.h>
#include_next <bpf/bpf.h>
#define UXDP_COMPAT_HAVE_LIBBPF	1
#endif
#endif

#include <uxdp/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef UXDP_COMPAT_HAVE_LIBBPF
/* Without libbpf: what <xdp/libxdp.h> and the redirected calls name. */
struct bpf_object;
struct bpf_object_open_opts;
struct bpf_map;
struct bpf_program;
struct bpf_test_run_opts;
struct btf;
#ifndef LIBBPF_OPTS
#define LIBBPF_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#endif
#ifndef DECLARE_LIBBPF_OPTS
#define DECLARE_LIBBPF_OPTS LIBBPF_OPTS
#endif
#endif

/* ---- refused: calls on the maps of a program uxdp cannot load ----------- */

static inline struct bpf_map *
uxdp_compat_bpf_object__find_map_by_name(const struct bpf_object *obj,
					 const char *name)
{
	(void)obj;
	(void)name;
	uxdp_compat_unsupported("bpf_object__find_map_by_name");
	return NULL;
}

static inline bool uxdp_compat_bpf_map__is_internal(const struct bpf_map *map)
{
	(void)map;
	uxdp_compat_unsupported("bpf_map__is_internal");
	return false;
}

static inline int uxdp_compat_bpf_map__fd(const struct bpf_map *map)
{
	(void)map;
	return uxdp_compat_unsupported("bpf_map__fd");
}

static inline int uxdp_compat_bpf_map_update_elem(int fd, const void *key,
						  const void *value,
						  __u64 flags)
{
	(void)fd;
	(void)key;
	(void)value;
	(void)flags;
	return uxdp_compat_unsupported("bpf_map_update_elem");
}

static inline int uxdp_compat_bpf_obj_get_info_by_fd(int bpf_fd, void *info,
						     __u32 *info_len)
{
	(void)bpf_fd;
	(void)info;
	(void)info_len;
	return uxdp_compat_unsupported("bpf_obj_get_info_by_fd");
}

static inline int uxdp_compat_bpf_map_get_fd_by_id(__u32 id)
{
	(void)id;
	return uxdp_compat_unsupported("bpf_map_get_fd_by_id");
}

#define bpf_object__find_map_by_name \
	uxdp_compat_bpf_object__find_map_by_name
#define bpf_map__is_internal		uxdp_compat_bpf_map__is_internal
#define bpf_map__fd			uxdp_compat_bpf_map__fd
#define bpf_map_update_elem		uxdp_compat_bpf_map_update_elem
#define bpf_obj_get_info_by_fd		uxdp_compat_bpf_obj_get_info_by_fd
#define bpf_map_get_fd_by_id		uxdp_compat_bpf_map_get_fd_by_id

#ifdef __cplusplus
}
#endif

#endif /* UXDP_COMPAT_BPF_LIBBPF_H */
