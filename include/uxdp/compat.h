/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source compatibility with libxdp's <xdp/xsk.h>: what the library exports
 * for the compatibility header include/uxdp/compat/xdp/xsk.h, which an
 * application written against libxdp finds instead of libxdp's when built
 * with -I<prefix>/include/uxdp/compat (docs/compat.md).
 *
 * Applications do not call these directly: the compatibility header maps
 * libxdp's names onto them (xsk_umem__create -> uxdp_compat_umem_create,
 * ...) and redirects sendto/recvfrom/poll/getsockopt/setsockopt to the
 * uxdp_compat_* versions below, which serve a compat socket's descriptor
 * and pass every other descriptor to the C library unchanged.
 *
 * What the layer does for an unmodified application:
 *   - an interface name is a uxdp device of that name, or one opened from a
 *     port string named by the environment (UXDP_COMPAT_PORT_<name>,
 *     UXDP_COMPAT_PORTS);
 *   - unless XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, the device gets a program
 *     that redirects each packet to the socket of its receive queue (libxdp's
 *     XSKMAP program), removed with the device's last socket;
 *   - a device it serves is polled by a poll group of its own (the kernel's
 *     NAPI: the application never polls a device);
 *   - UXDP_COMPAT_FEED cross-connects a port (a pcap replay and capture)
 *     with a device, to feed a program with packets (once its sockets have
 *     fill entries) and collect what it sends;
 *   - if_nametoindex() knows uxdp devices, and RLIMIT_MEMLOCK refused
 *     does not stop an application (a uxdp UMEM locks nothing);
 *   - libxdp's program API and libbpf's map calls are refused by name
 *     (uxdp_compat_unsupported);
 *   - when the process's last compat socket is deleted, everything the
 *     layer opened or started is torn down.
 *
 * Ring structs: the application's struct xsk_ring_prod / xsk_ring_cons are
 * laid out as struct uxdp_ring (the compatibility header checks), and the
 * calls below write them whole (memcpy), with libxdp's conventions for the
 * cached indices: a producer's cached_cons is the consumer index plus the
 * ring size.
 */
#ifndef UXDP_COMPAT_H
#define UXDP_COMPAT_H

#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <uxdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uxdp_compat_umem;
struct uxdp_compat_socket;
struct uxdp_xsk;

/* libxdp's struct xsk_umem_config / xsk_umem_opts: 0 means the default. */
struct uxdp_compat_umem_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint64_t size;		/* bytes of the area */
	uint32_t fill_size;	/* 0: 2048 */
	uint32_t comp_size;	/* 0: 2048 */
	uint32_t frame_size;	/* 0: 4096 */
	uint32_t frame_headroom;
	uint32_t flags;		/* XDP_UMEM_* (UXDP_UMEM_F_*, same bits) */
	uint32_t tx_metadata_len;
	size_t :0;
};
#define uxdp_compat_umem_opts__last_field tx_metadata_len

/* libxdp's struct xsk_socket_config / xsk_socket_opts. */
#define UXDP_COMPAT_INHIBIT_PROG_LOAD	(1U << 0) /* XSK_LIBXDP_FLAGS__... */

struct uxdp_compat_socket_opts {
	size_t sz;		/* set by UXDP_DECLARE_OPTS */
	uint32_t rx_size;	/* 0: 2048 */
	uint32_t tx_size;	/* 0: 2048 */
	uint32_t libxdp_flags;	/* UXDP_COMPAT_INHIBIT_PROG_LOAD */
	uint32_t xdp_flags;	/* XDP_FLAGS_*: accepted, see docs/compat.md */
	uint32_t bind_flags;	/* XDP_COPY, XDP_ZEROCOPY, ... (kernel bits) */
	size_t :0;
};
#define uxdp_compat_socket_opts__last_field bind_flags

/*
 * libxdp's xsk_umem__create: register @area (page aligned, @opts->size
 * bytes) and write the application's fill and completion ring structs
 * @fill and @comp. Returns 0 and the UMEM in *@umem, or -EFAULT (NULL
 * argument), -EINVAL (a configuration the kernel refuses), -ENOMEM.
 */
int uxdp_compat_umem_create(struct uxdp_compat_umem **umem, void *area,
			    void *fill, void *comp,
			    const struct uxdp_compat_umem_opts *opts);

/* libxdp's xsk_umem__delete: 0, or -EBUSY while sockets use it. */
int uxdp_compat_umem_delete(struct uxdp_compat_umem *umem);

/*
 * libxdp's xsk_umem__fd: the descriptor of the UMEM's first socket (in
 * libxdp they are the same descriptor); -EINVAL for NULL, -ENOTCONN before
 * any socket exists.
 */
int uxdp_compat_umem_fd(const struct uxdp_compat_umem *umem);

/*
 * libxdp's xsk_socket__create_shared: a socket on queue @queue of the
 * device named @ifname, writing the application's ring structs @rx and
 * @tx (either may be NULL, not both) and, for a socket with fill and
 * completion rings of its own, @fill and @comp (both NULL: the ones given
 * to uxdp_compat_umem_create, usable by the UMEM's first socket only).
 * Returns 0 and the socket in *@xsk, or -errno as libxdp would: EFAULT
 * (NULL arguments, no fill/comp rings for a later socket), ENODEV (no
 * such device), EINVAL, EBUSY (the queue has a socket), EOPNOTSUPP,
 * ENOMEM. A failure is also printed (UXDP_WARN), with the reason, since an
 * unmodified application cannot ask uxdp_errmsg().
 */
int uxdp_compat_socket_create(struct uxdp_compat_socket **xsk,
			      const char *ifname, uint32_t queue,
			      struct uxdp_compat_umem *umem, void *rx,
			      void *tx, void *fill, void *comp,
			      const struct uxdp_compat_socket_opts *opts);

/* libxdp's xsk_socket__delete. NULL is a no-op. */
void uxdp_compat_socket_delete(struct uxdp_compat_socket *xsk);

/* libxdp's xsk_socket__fd: the socket's descriptor, or -EINVAL for NULL. */
int uxdp_compat_socket_fd(const struct uxdp_compat_socket *xsk);

/* The uxdp socket underneath, for applications that also use uxdp's own
 * API (uxdp_xsk_target() for a program of their own, ...). */
struct uxdp_xsk *uxdp_compat_socket_xsk(struct uxdp_compat_socket *xsk);

/*
 * The socket calls. On a compat socket's descriptor they do what the
 * kernel does on an AF_XDP socket (returning -1 with errno set on error);
 * on any other descriptor they are the C library's. poll() may mix both
 * kinds in one array.
 *
 *   sendto      kick transmission (needs MSG_DONTWAIT, as in the kernel)
 *   recvfrom    wake a zero-copy receive waiting for fill entries
 *   poll        POLLIN: RX entries; POLLOUT: TX ring at most half full;
 *               kicks transmission first, as the kernel's does
 *   getsockopt  SOL_XDP: XDP_STATISTICS (the kernel's optlen rules),
 *               XDP_OPTIONS; SOL_SOCKET: SO_TYPE, SO_DOMAIN, SO_PROTOCOL,
 *               SO_ERROR; anything else ENOPROTOOPT
 *   setsockopt  SOL_SOCKET busy-poll options accepted (the device is
 *               polled anyway); SOL_XDP ring and UMEM options EBUSY (the
 *               socket is bound); anything else ENOPROTOOPT
 */
ssize_t uxdp_compat_sendto(int fd, const void *buf, size_t len, int flags,
			   const void *addr, socklen_t addrlen);
ssize_t uxdp_compat_recvfrom(int fd, void *buf, size_t len, int flags,
			     void *addr, socklen_t *addrlen);
int uxdp_compat_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int uxdp_compat_getsockopt(int fd, int level, int optname, void *optval,
			   socklen_t *optlen);
int uxdp_compat_setsockopt(int fd, int level, int optname,
			   const void *optval, socklen_t optlen);

/*
 * if_nametoindex() for the compatibility headers, which redirect it here:
 * the index of the uxdp device named @name, opening it first when the
 * environment names a port for it (as xsk_socket__create would: an
 * application looks its interface up before it makes a socket); else the
 * C library's answer for a kernel interface of that name; 0 and errno
 * ENODEV when neither exists.
 */
unsigned int uxdp_compat_if_nametoindex(const char *name);

/*
 * setrlimit() for the compatibility headers: the C library's, except that
 * RLIMIT_MEMLOCK refused (EPERM: no CAP_SYS_RESOURCE, as in a container)
 * succeeds, with a warning the first time. libxdp applications raise that
 * limit for the kernel's UMEM and quit when they cannot; a uxdp UMEM is
 * ordinary memory.
 */
struct rlimit;
int uxdp_compat_setrlimit(int resource, const struct rlimit *rlim);

/*
 * What uxdp does not support yet, refused in one place: libxdp's program
 * API (include/uxdp/compat/xdp/libxdp.h) and the libbpf calls on a
 * program's maps (include/uxdp/compat/bpf/libbpf.h) call this with their
 * name. It prints "uxdp compat: CALL: eBPF programs are not supported
 * yet" (through the function given to libxdp_set_print() if there was
 * one, else as a uxdp warning), sets errno to EOPNOTSUPP and returns
 * -EOPNOTSUPP; the headers turn that into each call's own convention.
 */
int uxdp_compat_unsupported(const char *call);

/*
 * libxdp_set_print(): the function the refusals' messages go to instead of
 * uxdp's printing (level 0 is libxdp's LIBXDP_WARN); NULL silences them.
 * Returns the previous one (NULL until one was set).
 */
typedef int (*uxdp_compat_print_fn)(int level, const char *fmt, va_list ap);
uxdp_compat_print_fn uxdp_compat_libxdp_set_print(uxdp_compat_print_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_COMPAT_H */
