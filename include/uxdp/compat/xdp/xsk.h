/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp's stand-in for libxdp's <xdp/xsk.h>: an application written against
 * libxdp's AF_XDP socket API builds unchanged against it and runs on uxdp
 * devices, in process, without root, a NIC or kernel AF_XDP:
 *
 *	cc -I<prefix>/include/uxdp/compat -I<prefix>/include app.c -luxdp
 *
 * The same names, types, constants and ring semantics as libxdp's header
 * (including the cached-index conventions of its ring structs), written
 * for uxdp; docs/compat.md lists what is provided, what is not and why,
 * and the environment variables that name devices.
 *
 * Every translation unit that calls sendto, recvfrom, poll, getsockopt or
 * setsockopt on a socket's descriptor, if_nametoindex on a uxdp device's
 * name, or setrlimit for RLIMIT_MEMLOCK (which uxdp does not need, and a
 * container refuses) must include this header: it redirects those seven
 * (object-like macros, so a struct member named poll keeps working) to
 * uxdp_compat_* functions, which serve compat sockets and uxdp devices
 * and pass everything else to the C library. The system headers declaring
 * them are included first, so including <poll.h>, <sys/socket.h>,
 * <net/if.h> or <sys/resource.h> after this header is harmless.
 *
 * <xdp/libxdp.h> beside this one has libxdp's program API (refused: uxdp
 * runs no eBPF programs yet) and <bpf/libbpf.h> the libbpf calls the
 * kernel's AF_XDP samples make on a program's maps (refused too).
 */
#ifndef UXDP_COMPAT_XDP_XSK_H
#define UXDP_COMPAT_XDP_XSK_H

/* libxdp's guards: the real header, if also on the path, stays out. */
#ifndef __LIBBPF_XSK_H
#define __LIBBPF_XSK_H
#endif
#ifndef __LIBXDP_XSK_H
#define __LIBXDP_XSK_H
#endif

#include <errno.h>
/* Declares if_nametoindex, redirected below; not after <linux/if.h>,
 * which it cannot follow (and which declares no if_nametoindex). */
#ifndef _LINUX_IF_H
#include <net/if.h>
#endif
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
/* The kernel's UAPI definitions (struct xdp_desc, XDP_* flags and socket
 * options, struct xdp_statistics), as libxdp's header provides them; and
 * <linux/bpf.h> (XDP_PASS, XDP_PACKET_HEADROOM...), which libxdp's brings
 * in through libbpf.h. Definitions only: no kernel support is needed. */
#include <linux/bpf.h>
#include <linux/if_xdp.h>

#include <uxdp/compat.h>
#include <uxdp/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef XDP_ALWAYS_INLINE
#define XDP_ALWAYS_INLINE static inline __attribute__((__always_inline__))
#endif

/* Older UAPI headers (Linux 6.1's, Debian 12's) lack these; the values
 * are the kernel's. XDP_PKT_CONTD and XDP_TX_METADATA are bits of
 * struct xdp_desc's options. */
#ifndef XDP_USE_SG
#define XDP_USE_SG			(1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD			(1 << 0)
#endif
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA			(1 << 1)
#endif
#ifndef XDP_UMEM_TX_SW_CSUM
#define XDP_UMEM_TX_SW_CSUM		(1 << 1)
#endif
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN	(1 << 2)
#endif

/*
 * The rings. Same members as libxdp's (an application may read them), laid
 * out as struct uxdp_ring, which the library writes them as. Conventions,
 * libxdp's: cached_prod / cached_cons cache the shared producer / consumer
 * indices; for a producer ring cached_cons is the consumer index plus
 * size, so that its free space is cached_cons - cached_prod.
 */
struct xsk_ring_prod {
	__u32 cached_prod;
	__u32 cached_cons;
	__u32 mask;
	__u32 size;
	__u32 *producer;
	__u32 *consumer;
	void *ring;
	__u32 *flags;
};

struct xsk_ring_cons {
	__u32 cached_prod;
	__u32 cached_cons;
	__u32 mask;
	__u32 size;
	__u32 *producer;
	__u32 *consumer;
	void *ring;
	__u32 *flags;
};

#if defined(__cplusplus)
#define XSK_COMPAT_ASSERT(c, m)	static_assert(c, m)
#else
#define XSK_COMPAT_ASSERT(c, m)	_Static_assert(c, m)
#endif
#define XSK_COMPAT_SAME(t, f)						\
	XSK_COMPAT_ASSERT(offsetof(struct t, f) ==			\
			  offsetof(struct uxdp_ring, f),		\
			  #t "." #f " is where struct uxdp_ring has it")
XSK_COMPAT_ASSERT(sizeof(struct xsk_ring_prod) == sizeof(struct uxdp_ring),
		  "struct xsk_ring_prod is a struct uxdp_ring");
XSK_COMPAT_ASSERT(sizeof(struct xsk_ring_cons) == sizeof(struct uxdp_ring),
		  "struct xsk_ring_cons is a struct uxdp_ring");
XSK_COMPAT_SAME(xsk_ring_prod, cached_prod);
XSK_COMPAT_SAME(xsk_ring_prod, cached_cons);
XSK_COMPAT_SAME(xsk_ring_prod, mask);
XSK_COMPAT_SAME(xsk_ring_prod, size);
XSK_COMPAT_SAME(xsk_ring_prod, producer);
XSK_COMPAT_SAME(xsk_ring_prod, consumer);
XSK_COMPAT_SAME(xsk_ring_prod, ring);
XSK_COMPAT_SAME(xsk_ring_prod, flags);
XSK_COMPAT_SAME(xsk_ring_cons, cached_prod);
XSK_COMPAT_SAME(xsk_ring_cons, cached_cons);
XSK_COMPAT_SAME(xsk_ring_cons, mask);
XSK_COMPAT_SAME(xsk_ring_cons, size);
XSK_COMPAT_SAME(xsk_ring_cons, producer);
XSK_COMPAT_SAME(xsk_ring_cons, consumer);
XSK_COMPAT_SAME(xsk_ring_cons, ring);
XSK_COMPAT_SAME(xsk_ring_cons, flags);
XSK_COMPAT_ASSERT(sizeof(struct xdp_desc) == sizeof(struct uxdp_desc),
		  "struct xdp_desc is a struct uxdp_desc");
XSK_COMPAT_ASSERT(XDP_PKT_CONTD == UXDP_PKT_CONTD &&
		  XDP_TX_METADATA == UXDP_TX_METADATA,
		  "descriptor options are uxdp's");
#undef XSK_COMPAT_SAME

/* Opaque: the library's struct uxdp_compat_umem / uxdp_compat_socket. */
struct xsk_umem;
struct xsk_socket;

/* ---- ring access (the application's side; the library is the peer) ----- */

XDP_ALWAYS_INLINE __u64 *xsk_ring_prod__fill_addr(struct xsk_ring_prod *fill,
						  __u32 idx)
{
	return &((__u64 *)fill->ring)[idx & fill->mask];
}

XDP_ALWAYS_INLINE const __u64 *
xsk_ring_cons__comp_addr(const struct xsk_ring_cons *comp, __u32 idx)
{
	return &((const __u64 *)comp->ring)[idx & comp->mask];
}

XDP_ALWAYS_INLINE struct xdp_desc *
xsk_ring_prod__tx_desc(struct xsk_ring_prod *tx, __u32 idx)
{
	return &((struct xdp_desc *)tx->ring)[idx & tx->mask];
}

XDP_ALWAYS_INLINE const struct xdp_desc *
xsk_ring_cons__rx_desc(const struct xsk_ring_cons *rx, __u32 idx)
{
	return &((const struct xdp_desc *)rx->ring)[idx & rx->mask];
}

/* The library sets and clears the flag with relaxed atomics: a hint that
 * orders nothing (see uxdp_ring_needs_wakeup). */
XDP_ALWAYS_INLINE int xsk_ring_prod__needs_wakeup(const struct xsk_ring_prod *r)
{
	return !!(__atomic_load_n(r->flags, __ATOMIC_RELAXED) &
		  XDP_RING_NEED_WAKEUP);
}

/*
 * Free slots, looking at the shared consumer index only when the cached
 * view has fewer than @nb. The acquire load pairs with the library's
 * release of the consumer index: slots it has released are done being
 * read before they are handed out again (uxdp/ring.h, A pairs with D).
 */
XDP_ALWAYS_INLINE __u32 xsk_prod_nb_free(struct xsk_ring_prod *r, __u32 nb)
{
	__u32 room = r->cached_cons - r->cached_prod;

	if (room >= nb)
		return room;
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE) +
			 r->size;
	return r->cached_cons - r->cached_prod;
}

/*
 * Entries to read, at most @nb, looking at the shared producer index only
 * when the cached view is empty. The acquire load pairs with the library's
 * release of the producer index: the entries are written before they are
 * seen (uxdp/ring.h, C pairs with B).
 */
XDP_ALWAYS_INLINE __u32 xsk_cons_nb_avail(struct xsk_ring_cons *r, __u32 nb)
{
	__u32 n = r->cached_prod - r->cached_cons;

	if (!n) {
		r->cached_prod = __atomic_load_n(r->producer,
						 __ATOMIC_ACQUIRE);
		n = r->cached_prod - r->cached_cons;
	}
	return n < nb ? n : nb;
}

/* Reserve exactly @nb slots, or none (returns 0). */
XDP_ALWAYS_INLINE __u32 xsk_ring_prod__reserve(struct xsk_ring_prod *prod,
					       __u32 nb, __u32 *idx)
{
	if (xsk_prod_nb_free(prod, nb) < nb)
		return 0;
	*idx = prod->cached_prod;
	prod->cached_prod += nb;
	return nb;
}

/* Publish @nb written slots. Release: the entries are visible before the
 * index that hands them over (B, pairs with the library's C). */
XDP_ALWAYS_INLINE void xsk_ring_prod__submit(struct xsk_ring_prod *prod,
					     __u32 nb)
{
	__u32 p = __atomic_load_n(prod->producer, __ATOMIC_RELAXED);

	__atomic_store_n(prod->producer, p + nb, __ATOMIC_RELEASE);
}

/* Take up to @nb entries; *@idx is set only when some are returned. */
XDP_ALWAYS_INLINE __u32 xsk_ring_cons__peek(struct xsk_ring_cons *cons,
					    __u32 nb, __u32 *idx)
{
	__u32 n = xsk_cons_nb_avail(cons, nb);

	if (n) {
		*idx = cons->cached_cons;
		cons->cached_cons += n;
	}
	return n;
}

/* Un-peek the last @nb entries peeked and not yet released. */
XDP_ALWAYS_INLINE void xsk_ring_cons__cancel(struct xsk_ring_cons *cons,
					     __u32 nb)
{
	cons->cached_cons -= nb;
}

/* Hand @nb read entries back. Release: the reads are done before the
 * library may overwrite the slots (D, pairs with the library's A). */
XDP_ALWAYS_INLINE void xsk_ring_cons__release(struct xsk_ring_cons *cons,
					      __u32 nb)
{
	__u32 c = __atomic_load_n(cons->consumer, __ATOMIC_RELAXED);

	__atomic_store_n(cons->consumer, c + nb, __ATOMIC_RELEASE);
}

/* ---- UMEM addresses ---------------------------------------------------- */

/* The byte @addr names: no unaligned-mode offset is added (as libxdp). */
XDP_ALWAYS_INLINE void *xsk_umem__get_data(void *umem_area, __u64 addr)
{
	return (char *)umem_area + addr;
}

XDP_ALWAYS_INLINE __u64 xsk_umem__extract_addr(__u64 addr)
{
	return addr & XSK_UNALIGNED_BUF_ADDR_MASK;
}

XDP_ALWAYS_INLINE __u64 xsk_umem__extract_offset(__u64 addr)
{
	return addr >> XSK_UNALIGNED_BUF_OFFSET_SHIFT;
}

XDP_ALWAYS_INLINE __u64 xsk_umem__add_offset_to_addr(__u64 addr)
{
	return xsk_umem__extract_addr(addr) + xsk_umem__extract_offset(addr);
}

/* ---- configuration ----------------------------------------------------- */

#define XSK_RING_CONS__DEFAULT_NUM_DESCS	2048
#define XSK_RING_PROD__DEFAULT_NUM_DESCS	2048
#define XSK_UMEM__DEFAULT_FRAME_SHIFT		12	/* 4096 bytes */
#define XSK_UMEM__DEFAULT_FRAME_SIZE \
	(1 << XSK_UMEM__DEFAULT_FRAME_SHIFT)
#define XSK_UMEM__DEFAULT_FRAME_HEADROOM	0
#define XSK_UMEM__DEFAULT_FLAGS			0
#define XSK_UMEM__DEFAULT_TX_METADATA_LEN	0

struct xsk_umem_config {
	__u32 fill_size;
	__u32 comp_size;
	__u32 frame_size;
	__u32 frame_headroom;
	__u32 flags;
};

/* Newer libxdp's option struct (sz first; 0 fields take defaults). */
struct xsk_umem_opts {
	size_t sz;
	int fd;
	__u64 size;
	__u32 fill_size;
	__u32 comp_size;
	__u32 frame_size;
	__u32 frame_headroom;
	__u32 flags;
	__u32 tx_metadata_len;
	size_t :0;
};
#define xsk_umem_opts__last_field tx_metadata_len

#define XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD	(1 << 0)
#define XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD	(1 << 0)

struct xsk_socket_config {
	__u32 rx_size;
	__u32 tx_size;
	union {
		__u32 libbpf_flags;
		__u32 libxdp_flags;
	};
	__u32 xdp_flags;
	__u16 bind_flags;
};

struct xsk_socket_opts {
	size_t sz;
	struct xsk_ring_cons *rx;
	struct xsk_ring_prod *tx;
	struct xsk_ring_prod *fill;
	struct xsk_ring_cons *comp;
	__u32 rx_size;
	__u32 tx_size;
	__u32 libxdp_flags;
	__u32 xdp_flags;
	__u16 bind_flags;
	size_t :0;
};
#define xsk_socket_opts__last_field bind_flags

/* ---- UMEM and socket calls --------------------------------------------- */

/* The part of an option struct a caller built against an older header
 * passed (its sz), field by field; newer fields read as 0. */
#define XSK_COMPAT_OPT(o, f)						\
	((o) && (o)->sz >= offsetof(__typeof__(*(o)), f) + sizeof((o)->f) ? \
	 (o)->f : 0)

XDP_ALWAYS_INLINE int
xsk_umem__create_with_fd(struct xsk_umem **umem, int fd, void *umem_area,
			 __u64 size, struct xsk_ring_prod *fill,
			 struct xsk_ring_cons *comp,
			 const struct xsk_umem_config *config)
{
	struct uxdp_compat_umem_opts o;

	/* uxdp sockets have descriptors of their own: @fd is not used. */
	(void)fd;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.size = size;
	if (config) {
		o.fill_size = config->fill_size;
		o.comp_size = config->comp_size;
		o.frame_size = config->frame_size;
		o.frame_headroom = config->frame_headroom;
		o.flags = config->flags;
	}
	if (!umem)
		return -EFAULT;
	return uxdp_compat_umem_create((struct uxdp_compat_umem **)umem,
				       umem_area, fill, comp, &o);
}

XDP_ALWAYS_INLINE int xsk_umem__create(struct xsk_umem **umem,
				       void *umem_area, __u64 size,
				       struct xsk_ring_prod *fill,
				       struct xsk_ring_cons *comp,
				       const struct xsk_umem_config *config)
{
	return xsk_umem__create_with_fd(umem, 0, umem_area, size, fill, comp,
					config);
}

/* Returns the UMEM, or NULL with errno set. Without opts->size the area's
 * size is unknown: libxdp then asks only for a page-aligned area, uxdp
 * needs the size (EINVAL). */
XDP_ALWAYS_INLINE struct xsk_umem *
xsk_umem__create_opts(void *umem_area, struct xsk_ring_prod *fill,
		      struct xsk_ring_cons *comp, struct xsk_umem_opts *opts)
{
	struct uxdp_compat_umem_opts o;
	struct xsk_umem *umem = NULL;
	int err;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.size = XSK_COMPAT_OPT(opts, size);
	o.fill_size = XSK_COMPAT_OPT(opts, fill_size);
	o.comp_size = XSK_COMPAT_OPT(opts, comp_size);
	o.frame_size = XSK_COMPAT_OPT(opts, frame_size);
	o.frame_headroom = XSK_COMPAT_OPT(opts, frame_headroom);
	o.flags = XSK_COMPAT_OPT(opts, flags);
	o.tx_metadata_len = XSK_COMPAT_OPT(opts, tx_metadata_len);
	err = uxdp_compat_umem_create((struct uxdp_compat_umem **)&umem,
				      umem_area, fill, comp, &o);
	if (err) {
		errno = -err;
		return NULL;
	}
	return umem;
}

XDP_ALWAYS_INLINE int
xsk_socket__create_shared(struct xsk_socket **xsk_ptr, const char *ifname,
			  __u32 queue_id, struct xsk_umem *umem,
			  struct xsk_ring_cons *rx, struct xsk_ring_prod *tx,
			  struct xsk_ring_prod *fill,
			  struct xsk_ring_cons *comp,
			  const struct xsk_socket_config *config)
{
	struct uxdp_compat_socket_opts o;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	if (config) {
		o.rx_size = config->rx_size;
		o.tx_size = config->tx_size;
		o.libxdp_flags = config->libxdp_flags;
		o.xdp_flags = config->xdp_flags;
		o.bind_flags = config->bind_flags;
	}
	if (!xsk_ptr)
		return -EFAULT;
	return uxdp_compat_socket_create((struct uxdp_compat_socket **)xsk_ptr,
					 ifname, queue_id,
					 (struct uxdp_compat_umem *)umem,
					 rx, tx, fill, comp, &o);
}

XDP_ALWAYS_INLINE int xsk_socket__create(struct xsk_socket **xsk_ptr,
					 const char *ifname, __u32 queue_id,
					 struct xsk_umem *umem,
					 struct xsk_ring_cons *rx,
					 struct xsk_ring_prod *tx,
					 const struct xsk_socket_config *config)
{
	/* NULL fill and completion rings: the UMEM's (libxdp's fill_save). */
	return xsk_socket__create_shared(xsk_ptr, ifname, queue_id, umem, rx,
					 tx, NULL, NULL, config);
}

/* Returns the socket, or NULL with errno set. */
XDP_ALWAYS_INLINE struct xsk_socket *
xsk_socket__create_opts(const char *ifname, __u32 queue_id,
			struct xsk_umem *umem, struct xsk_socket_opts *opts)
{
	struct uxdp_compat_socket_opts o;
	struct xsk_socket *xsk = NULL;
	int err;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.rx_size = XSK_COMPAT_OPT(opts, rx_size);
	o.tx_size = XSK_COMPAT_OPT(opts, tx_size);
	o.libxdp_flags = XSK_COMPAT_OPT(opts, libxdp_flags);
	o.xdp_flags = XSK_COMPAT_OPT(opts, xdp_flags);
	o.bind_flags = XSK_COMPAT_OPT(opts, bind_flags);
	err = uxdp_compat_socket_create((struct uxdp_compat_socket **)&xsk,
					ifname, queue_id,
					(struct uxdp_compat_umem *)umem,
					XSK_COMPAT_OPT(opts, rx),
					XSK_COMPAT_OPT(opts, tx),
					XSK_COMPAT_OPT(opts, fill),
					XSK_COMPAT_OPT(opts, comp), &o);
	if (err) {
		errno = -err;
		return NULL;
	}
	return xsk;
}

/* 0, or -EBUSY while a socket uses the UMEM. */
XDP_ALWAYS_INLINE int xsk_umem__delete(struct xsk_umem *umem)
{
	return uxdp_compat_umem_delete((struct uxdp_compat_umem *)umem);
}

XDP_ALWAYS_INLINE void xsk_socket__delete(struct xsk_socket *xsk)
{
	uxdp_compat_socket_delete((struct uxdp_compat_socket *)xsk);
}

XDP_ALWAYS_INLINE int xsk_umem__fd(const struct xsk_umem *umem)
{
	return uxdp_compat_umem_fd((const struct uxdp_compat_umem *)umem);
}

XDP_ALWAYS_INLINE int xsk_socket__fd(const struct xsk_socket *xsk)
{
	return uxdp_compat_socket_fd((const struct uxdp_compat_socket *)xsk);
}

/*
 * A BPF XSKMAP of the application's own: there is no BPF here. A uxdp
 * application that wants its own program puts uxdp_xsk_target(
 * uxdp_compat_socket_xsk(xsk)) in a uxdp_map instead (docs/compat.md).
 */
XDP_ALWAYS_INLINE int xsk_setup_xdp_prog(int ifindex, int *xsks_map_fd)
{
	(void)ifindex;
	(void)xsks_map_fd;
	return -EOPNOTSUPP;
}

XDP_ALWAYS_INLINE int xsk_socket__update_xskmap(struct xsk_socket *xsk,
						int xsks_map_fd)
{
	(void)xsk;
	(void)xsks_map_fd;
	return -EOPNOTSUPP;
}

#undef XSK_COMPAT_ASSERT

/* ---- the socket's descriptor ------------------------------------------- */

#define sendto		uxdp_compat_sendto
#define recvfrom	uxdp_compat_recvfrom
#define poll		uxdp_compat_poll
#define getsockopt	uxdp_compat_getsockopt
#define setsockopt	uxdp_compat_setsockopt
/* Interfaces: a uxdp device's index (the kernel knows none of them). */
#define if_nametoindex	uxdp_compat_if_nametoindex
/* libxdp applications raise RLIMIT_MEMLOCK for the kernel's UMEM and
 * quit when refused (as in a container); uxdp locks no memory. */
#define setrlimit	uxdp_compat_setrlimit

#ifdef __cplusplus
}
#endif

#endif /* UXDP_COMPAT_XDP_XSK_H */
