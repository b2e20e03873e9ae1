/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libxdp source compatibility (include/uxdp/compat/xdp/xsk.h, built with
 * -I include/uxdp/compat): this file is written the way a libxdp
 * application is, with uxdp's own API used only to set up and look at the
 * devices around it. The ring calls and their cached-index conventions,
 * UMEM and socket creation and their errors, receive in copy and zero-copy
 * mode, the XSKMAP program's life, shared UMEM and mode inheritance,
 * sendto/recvfrom/getsockopt/setsockopt on the socket and on other
 * descriptors, poll() over a mix of both, feeds, and teardown.
 */
#define _GNU_SOURCE
#include "t_helpers.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <xdp/xsk.h>
#include <xdp/libxdp.h>
/* After the compatibility header on purpose: the order must not matter
 * (it redirects poll, sendto, ... with macros). */
#include <net/if.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include <uxdp/dev.h>
#include <uxdp/null.h>
#include <uxdp/veth.h>
#include <uxdp/xdp.h>
#include <uxdp/xsk.h>

#define T_FRAME		2048
#define T_NFRAMES	512

/* An application's state, as xdpsock keeps it. */
struct t_app {
	void *area;
	size_t len;
	struct xsk_umem *umem;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	int fd;
};

/*
 * Applications alive, so that a test that fails half-way does not leave a
 * socket behind to fail the next ones too (t_cleanup, after each test).
 * Tests keep their struct t_app static: a failed test's frame is gone by
 * the time its teardown runs.
 */
static struct t_app *t_live[4];

static void t_track(struct t_app *a, bool on)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (on ? !t_live[i] : t_live[i] == a) {
			t_live[i] = on ? a : NULL;
			return;
		}
}

static int t_cleanup(void **state)
{
	static const char *const vars[] = {
		"UXDP_COMPAT_PORTS", "UXDP_COMPAT_FEED",
		"UXDP_COMPAT_PORT_ce0", "UXDP_COMPAT_PORT_ce1",
		"UXDP_COMPAT_PORT_cr0", "UXDP_COMPAT_PORT_cs0",
		"UXDP_COMPAT_PORT_cs1", "UXDP_COMPAT_PORT_ct0",
		"UXDP_COMPAT_PORT_cn0", "UXDP_COMPAT_PORT_pm0",
		"UXDP_COMPAT_PORT_cf0", "UXDP_COMPAT_PORT_cc0",
		"UXDP_COMPAT_PORT_cl0", "UXDP_COMPAT_PORT_cp0",
		"UXDP_COMPAT_PORT_ci0", NULL,
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		struct t_app *a = t_live[i];

		if (!a)
			continue;
		xsk_socket__delete(a->xsk);
		xsk_umem__delete(a->umem);
		munmap(a->area, a->len);
		t_live[i] = NULL;
	}
	for (i = 0; vars[i]; i++)
		unsetenv(vars[i]);
	return 0;
}

static void t_umem(struct t_app *a, const struct xsk_umem_config *cfg)
{
	memset(a, 0, sizeof(*a));
	t_track(a, true);
	a->len = (size_t)T_NFRAMES * T_FRAME;
	a->area = mmap(NULL, a->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(a->area != MAP_FAILED);
	if (!cfg) {
		static const struct xsk_umem_config def = {
			.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
			.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
			.frame_size = T_FRAME,
		};

		cfg = &def;
	}
	assert_int_equal(xsk_umem__create(&a->umem, a->area, a->len, &a->fq,
					  &a->cq, cfg), 0);
}

/* Post frames [first, first + n) on @fq. */
static void t_fill(struct xsk_ring_prod *fq, uint32_t first, uint32_t n)
{
	uint32_t idx = 0, i;

	assert_int_equal(xsk_ring_prod__reserve(fq, n, &idx), n);
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(fq, idx + i) =
			(uint64_t)(first + i) * T_FRAME;
	xsk_ring_prod__submit(fq, n);
}

static int t_sock(struct t_app *a, const char *ifname, uint32_t bind,
		  uint32_t lflags, bool tx)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = lflags,
		.bind_flags = (__u16)bind,
	};
	int err = xsk_socket__create(&a->xsk, ifname, 0, a->umem, &a->rx,
				     tx ? &a->tx : NULL, &cfg);

	if (!err)
		a->fd = xsk_socket__fd(a->xsk);
	return err;
}

static void t_close(struct t_app *a)
{
	t_track(a, false);
	xsk_socket__delete(a->xsk);
	a->xsk = NULL;
	assert_int_equal(xsk_umem__delete(a->umem), 0);
	munmap(a->area, a->len);
}

/* XDP_STATISTICS, all six fields. */
static struct xdp_statistics t_stats(int fd)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	assert_int_equal(getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len),
			 0);
	assert_int_equal(len, 48);
	return st;
}

static int t_zerocopy(int fd)
{
	struct xdp_options o;
	socklen_t len = sizeof(o);

	assert_int_equal(getsockopt(fd, SOL_XDP, XDP_OPTIONS, &o, &len), 0);
	assert_int_equal(len, sizeof(o));
	return !!(o.flags & XDP_OPTIONS_ZEROCOPY);
}

/*
 * Receive until @want packets came or @ms passed, waiting in poll(),
 * recycling each buffer to the fill ring; each packet's length must be
 * @len and (with @seq) its sequence number (null's seq option, at 42) the
 * next. Returns the count.
 */
static uint32_t t_rx(struct t_app *a, uint32_t want, uint32_t len, bool seq,
		     uint64_t ms)
{
	uint64_t end = t_now_ms() + ms, next = 0;
	uint32_t got = 0, idx = 0, fidx = 0, n, i;

	while (got < want && t_now_ms() < end) {
		struct pollfd p = { .fd = a->fd, .events = POLLIN };

		if (poll(&p, 1, 50) <= 0)
			continue;
		assert_true(p.revents & POLLIN);
		n = xsk_ring_cons__peek(&a->rx, want - got < 64 ?
					want - got : 64, &idx);
		assert_true(n > 0);
		assert_int_equal(xsk_ring_prod__reserve(&a->fq, n, &fidx), n);
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(&a->rx, idx + i);
			const unsigned char *p8 = xsk_umem__get_data(a->area,
				xsk_umem__add_offset_to_addr(d->addr));
			uint64_t s;

			assert_int_equal(d->len, len);
			assert_int_equal(d->options, 0);
			assert_true(xsk_umem__extract_addr(d->addr) < a->len);
			if (seq) {
				memcpy(&s, p8 + 42, sizeof(s));
				assert_int_equal(s, next);
				next++;
			}
			*xsk_ring_prod__fill_addr(&a->fq, fidx + i) =
				xsk_umem__extract_addr(d->addr);
		}
		xsk_ring_cons__release(&a->rx, n);
		xsk_ring_prod__submit(&a->fq, n);
		got += n;
	}
	return got;
}

static struct uxdp_rxq_stats t_rxq(const char *name)
{
	struct uxdp_rxq_stats st;
	struct uxdp_dev *d = uxdp_dev_get_by_name(name);

	assert_non_null(d);
	assert_int_equal(uxdp_dev_rxq_stats(d, 0, &st), 0);
	return st;
}

/* ---- rings ------------------------------------------------------------- */

static void test_constants(void **state)
{
	(void)state;
	/* libxdp's values: an application's arithmetic on them must not
	 * change. */
	assert_int_equal(XSK_RING_CONS__DEFAULT_NUM_DESCS, 2048);
	assert_int_equal(XSK_RING_PROD__DEFAULT_NUM_DESCS, 2048);
	assert_int_equal(XSK_UMEM__DEFAULT_FRAME_SHIFT, 12);
	assert_int_equal(XSK_UMEM__DEFAULT_FRAME_SIZE, 4096);
	assert_int_equal(XSK_UMEM__DEFAULT_FRAME_HEADROOM, 0);
	assert_int_equal(XSK_UMEM__DEFAULT_FLAGS, 0);
	assert_int_equal(XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, 1);
	assert_int_equal(XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD, 1);
	assert_int_equal(XDP_SHARED_UMEM, 1);
	assert_int_equal(XDP_COPY, 2);
	assert_int_equal(XDP_ZEROCOPY, 4);
	assert_int_equal(XDP_USE_NEED_WAKEUP, 8);
	assert_int_equal(sizeof(struct xsk_socket_config), 20);
	assert_int_equal(offsetof(struct xsk_socket_config, bind_flags), 16);
	assert_int_equal(sizeof(struct xsk_ring_prod), 48);
	assert_int_equal(offsetof(struct xsk_ring_prod, flags), 40);
}

static void test_ring_calls(void **state)
{
	static struct t_app a;
	uint32_t idx = 77, i;
	const uint64_t hi = (uint64_t)5 << XSK_UNALIGNED_BUF_OFFSET_SHIFT;

	(void)state;
	t_umem(&a, NULL);
	/* libxdp's conventions, which applications may read: a producer's
	 * cached_cons is the consumer index plus the size. */
	assert_int_equal(a.fq.size, 2048);
	assert_int_equal(a.fq.mask, 2047);
	assert_int_equal(a.fq.cached_prod, 0);
	assert_int_equal(a.fq.cached_cons, 2048);
	assert_int_equal(a.cq.size, 2048);
	assert_int_equal(a.cq.cached_prod, 0);
	assert_int_equal(a.cq.cached_cons, 0);
	assert_int_equal(*a.fq.producer, 0);
	assert_int_equal(xsk_prod_nb_free(&a.fq, 1), 2048);
	assert_int_equal(xsk_ring_prod__needs_wakeup(&a.fq), 0);

	/* All or nothing, and *idx untouched on failure (libxdp). */
	assert_int_equal(xsk_ring_prod__reserve(&a.fq, 2049, &idx), 0);
	assert_int_equal(idx, 77);
	assert_int_equal(xsk_ring_prod__reserve(&a.fq, 2000, &idx), 2000);
	assert_int_equal(idx, 0);
	assert_int_equal(xsk_prod_nb_free(&a.fq, 48), 48);
	assert_int_equal(xsk_ring_prod__reserve(&a.fq, 49, &idx), 0);
	for (i = 0; i < 2000; i++)
		*xsk_ring_prod__fill_addr(&a.fq, i) = (uint64_t)i * T_FRAME;
	assert_ptr_equal(xsk_ring_prod__fill_addr(&a.fq, 2048 + 3),
			 xsk_ring_prod__fill_addr(&a.fq, 3));
	/* Nothing is visible before the submit. */
	assert_int_equal(*a.fq.producer, 0);
	xsk_ring_prod__submit(&a.fq, 2000);
	assert_int_equal(*a.fq.producer, 2000);
	assert_int_equal(a.fq.cached_prod, 2000);

	/* An empty consumer ring: peek leaves *idx alone. */
	idx = 99;
	assert_int_equal(xsk_cons_nb_avail(&a.cq, 64), 0);
	assert_int_equal(xsk_ring_cons__peek(&a.cq, 64, &idx), 0);
	assert_int_equal(idx, 99);

	/* Addresses (unaligned mode's encoding). */
	assert_int_equal(xsk_umem__extract_addr(hi | 1000), 1000);
	assert_int_equal(xsk_umem__extract_offset(hi | 1000), 5);
	assert_int_equal(xsk_umem__add_offset_to_addr(hi | 1000), 1005);
	assert_ptr_equal(xsk_umem__get_data(a.area, 100),
			 (char *)a.area + 100);
	/* As libxdp: get_data adds no offset by itself. */
	assert_ptr_equal(xsk_umem__get_data(a.area, 3), (char *)a.area + 3);
	assert_int_equal(xsk_umem__fd(a.umem), -ENOTCONN);
	assert_int_equal(xsk_umem__fd(NULL), -EINVAL);
	assert_int_equal(xsk_socket__fd(NULL), -EINVAL);
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	assert_int_equal(xsk_umem__delete(NULL), 0);
	munmap(a.area, a.len);
}

/* ---- creation errors --------------------------------------------------- */

static void test_umem_errors(void **state)
{
	struct xsk_umem_config cfg = { .frame_size = 1000 };
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_umem *u;
	size_t len = (size_t)T_NFRAMES * T_FRAME;
	char *area = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(area != MAP_FAILED);
	assert_int_equal(xsk_umem__create(NULL, area, len, &fq, &cq, NULL),
			 -EFAULT);
	assert_int_equal(xsk_umem__create(&u, NULL, len, &fq, &cq, NULL),
			 -EFAULT);
	assert_int_equal(xsk_umem__create(&u, area, len, NULL, &cq, NULL),
			 -EFAULT);
	assert_int_equal(xsk_umem__create(&u, area, len, &fq, NULL, NULL),
			 -EFAULT);
	/* The kernel's XDP_UMEM_REG rules. */
	assert_int_equal(xsk_umem__create(&u, area, len, &fq, &cq, &cfg),
			 -EINVAL);
	assert_int_equal(xsk_umem__create(&u, area + 1, len - 4096, &fq, &cq,
					  NULL), -EINVAL);
	cfg.frame_size = 2048;
	cfg.fill_size = 1000;
	assert_int_equal(xsk_umem__create(&u, area, len, &fq, &cq, &cfg),
			 -EINVAL);
	/* _with_fd: the descriptor is not used; the rest as create. */
	cfg.fill_size = 0;
	assert_int_equal(xsk_umem__create_with_fd(&u, 12345, area, len, &fq,
						  &cq, &cfg), 0);
	assert_int_equal(fq.size, 2048);
	assert_int_equal(xsk_umem__delete(u), 0);
	/* _opts: NULL with errno. */
	{
		struct xsk_umem_opts o = { .sz = sizeof(o), .size = len,
					   .frame_size = 3000 };

		errno = 0;
		assert_null(xsk_umem__create_opts(area, &fq, &cq, &o));
		assert_int_equal(errno, EINVAL);
		o.frame_size = 0;
		u = xsk_umem__create_opts(area, &fq, &cq, &o);
		assert_non_null(u);
		assert_int_equal(xsk_umem__delete(u), 0);
	}
	munmap(area, len);
}

static void test_socket_errors(void **state)
{
	struct xsk_socket_config cfg = { 0 };
	struct xsk_socket *x;
	static struct t_app a;

	(void)state;
	t_umem(&a, NULL);
	unsetenv("UXDP_COMPAT_PORT_ce0");
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, NULL), -ENODEV);
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, NULL, &a.rx, NULL,
					    NULL), -EFAULT);
	assert_int_equal(xsk_socket__create(NULL, "ce0", 0, a.umem, &a.rx,
					    NULL, NULL), -EFAULT);
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, NULL, NULL,
					    NULL), -EFAULT);
	/* Only one of fill and comp. */
	assert_int_equal(xsk_socket__create_shared(&x, "ce0", 0, a.umem,
						   &a.rx, NULL, &a.fq, NULL,
						   NULL), -EFAULT);
	/* A port string that does not parse: the driver's errno. */
	setenv("UXDP_COMPAT_PORT_ce0", "null:ce0,bogus=1", 1);
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, NULL), -EINVAL);
	assert_null(uxdp_dev_get_by_name("ce0"));
	setenv("UXDP_COMPAT_PORT_ce0", "null:ce0,count=1", 1);
	cfg.bind_flags = 1 << 7;
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, &cfg), -EINVAL);
	cfg.bind_flags = 0;
	cfg.libxdp_flags = 2;
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, &cfg), -EINVAL);
	cfg.libxdp_flags = 0;
	cfg.rx_size = 1000;
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, &cfg), -EINVAL);
	cfg.rx_size = 0;
	assert_int_equal(xsk_socket__create(&x, "ce0", 1, a.umem, &a.rx,
					    NULL, &cfg), -EINVAL);
	cfg.bind_flags = XDP_USE_SG;
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, &cfg), -EOPNOTSUPP);
	/* A device opened for a socket that failed does not stay. */
	assert_null(uxdp_dev_get_by_name("ce0"));
	/* Zero-copy forced on a device that cannot: refused (veth). */
	setenv("UXDP_COMPAT_PORT_ce1", "veth:ce1,peer=ce1p", 1);
	cfg.bind_flags = XDP_ZEROCOPY;
	assert_int_equal(xsk_socket__create(&x, "ce1", 0, a.umem, &a.rx,
					    NULL, &cfg), -EOPNOTSUPP);
	assert_null(uxdp_dev_get_by_name("ce1"));
	assert_null(uxdp_dev_get_by_name("ce1p"));
	/* The UMEM's rings were never handed out: it is still usable. */
	setenv("UXDP_COMPAT_PORTS", "x=null:x;ce2=null:ce2,count=1;y=z", 1);
	assert_int_equal(t_sock(&a, "ce2", 0, 0, false), 0);
	assert_non_null(uxdp_dev_get_by_name("ce2"));
	/* The UMEM's own rings are its first socket's. */
	assert_int_equal(xsk_socket__create(&x, "ce0", 0, a.umem, &a.rx,
					    NULL, NULL), -EFAULT);
	assert_int_equal(xsk_umem__delete(a.umem), -EBUSY);
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	assert_null(uxdp_dev_get_by_name("ce2"));
	unsetenv("UXDP_COMPAT_PORTS");
	unsetenv("UXDP_COMPAT_PORT_ce0");
	unsetenv("UXDP_COMPAT_PORT_ce1");
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);
	xsk_socket__delete(NULL);
}

/* ---- receive ----------------------------------------------------------- */

/*
 * @count packets of 100 bytes, numbered, with @nfill frames on the fill
 * ring, recycled as they come back.
 */
static void t_rx_mode(uint32_t bind, int zc, uint32_t count, uint32_t nfill)
{
	static struct t_app a;
	struct xdp_statistics st;
	char port[64];

	snprintf(port, sizeof(port), "null:cr0,count=%u,len=100,seq", count);
	setenv("UXDP_COMPAT_PORT_cr0", port, 1);
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, nfill);
	assert_int_equal(t_sock(&a, "cr0", bind | XDP_USE_NEED_WAKEUP, 0,
				false), 0);
	assert_int_equal(t_zerocopy(a.fd), zc);
	/* libxdp's: the UMEM's descriptor is its first socket's. */
	assert_int_equal(xsk_umem__fd(a.umem), a.fd);
	assert_non_null(uxdp_compat_socket_xsk((struct uxdp_compat_socket *)
					       a.xsk));
	assert_int_equal(uxdp_xsk_fd(uxdp_compat_socket_xsk(
		(struct uxdp_compat_socket *)a.xsk)), a.fd);
	/* The application's copy of the RX ring, read directly. */
	assert_int_equal(a.rx.size, 2048);
	assert_int_equal(a.rx.mask, 2047);
	assert_int_equal(t_rx(&a, count, 100, true, 10000), count);
	st = t_stats(a.fd);
	assert_int_equal(st.rx_dropped, 0);
	assert_int_equal(st.rx_ring_full, 0);
	assert_int_equal(st.rx_invalid_descs, 0);
	assert_int_equal(t_rxq("cr0").redirect, count);
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	/* The device came from the environment: it goes with the last
	 * socket. */
	assert_null(uxdp_dev_get_by_name("cr0"));
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);
	unsetenv("UXDP_COMPAT_PORT_cr0");
}

static void test_rx_copy(void **state)
{
	(void)state;
	/* Copy mode drops what finds the fill ring empty (as the kernel
	 * does), and the generator is not paced: a fill entry for every
	 * packet. */
	t_rx_mode(XDP_COPY, 0, 400, T_NFRAMES);
}

static void test_rx_zerocopy(void **state)
{
	(void)state;
	/* The null driver can: without XDP_COPY the socket is zero-copy,
	 * as on a kernel driver that supports it. Zero-copy receives into
	 * fill entries only: the generator waits for them, nothing drops,
	 * and the 256 buffers go round four times. */
	t_rx_mode(0, 1, 1000, 256);
	t_rx_mode(XDP_ZEROCOPY, 1, 1000, 256);
}

/* ---- XDP_STATISTICS and the other options ------------------------------ */

static void test_getsockopt(void **state)
{
	struct xsk_socket_config cfg = { .rx_size = 16,
					 .bind_flags = XDP_COPY };
	static struct t_app a, b;
	struct xdp_statistics st;
	uint64_t v1[3], big[8], end;
	struct xdp_options o;
	socklen_t len;
	int type, sv[2];

	(void)state;
	/* a: a 16-entry RX ring nobody reads: ring-full drops. */
	setenv("UXDP_COMPAT_PORT_cs0", "null:cs0,count=64", 1);
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 32);
	assert_int_equal(xsk_socket__create(&a.xsk, "cs0", 0, a.umem, &a.rx,
					    NULL, &cfg), 0);
	a.fd = xsk_socket__fd(a.xsk);
	end = t_now_ms() + 10000;
	do {
		st = t_stats(a.fd);
		if (st.rx_ring_full + st.rx_dropped + 16 >= 64)
			break;
		usleep(1000);
	} while (t_now_ms() < end);
	assert_int_equal(st.rx_ring_full + st.rx_dropped, 64 - 16);
	assert_true(st.rx_ring_full > 0);
	/* A drop is counted when the packet meets the full ring; the 16
	 * entries before it are published at the end of the poll (the
	 * kernel's xsk_flush does the same), so wait for those too. */
	while (__atomic_load_n(a.rx.producer, __ATOMIC_ACQUIRE) -
	       a.rx.cached_cons < 16 && t_now_ms() < end)
		usleep(1000);
	assert_int_equal(xsk_cons_nb_avail(&a.rx, 64), 16);

	/* The kernel's optlen rules. v1 (24..47 bytes): ring-full drops are
	 * folded into rx_dropped. */
	memset(v1, 0xee, sizeof(v1));
	len = 24;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, v1, &len),
			 0);
	assert_int_equal(len, 24);
	assert_int_equal(v1[0], st.rx_dropped + st.rx_ring_full);
	assert_int_equal(v1[1], 0);
	assert_int_equal(v1[2], 0);
	len = 47;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, big, &len),
			 0);
	assert_int_equal(len, 24);
	/* Longer than the struct: 48 written, the rest untouched. */
	memset(big, 0xee, sizeof(big));
	len = sizeof(big);
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, big, &len),
			 0);
	assert_int_equal(len, 48);
	assert_int_equal(big[0], st.rx_dropped);
	assert_int_equal(big[3], st.rx_ring_full);
	assert_true(big[6] == 0xeeeeeeeeeeeeeeeeULL);
	len = 23;
	errno = 0;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, big, &len),
			 -1);
	assert_int_equal(errno, EINVAL);
	len = 0;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, big, &len),
			 -1);
	assert_int_equal(errno, EINVAL);

	len = 3;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_OPTIONS, &o, &len), -1);
	assert_int_equal(errno, EINVAL);
	len = 8;
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_OPTIONS, big, &len), 0);
	assert_int_equal(len, 4);
	assert_int_equal((uint32_t)big[0], 0);	/* copy mode */
	len = sizeof(big);
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_MMAP_OFFSETS, big,
				    &len), -1);
	assert_int_equal(errno, ENOPROTOOPT);
	len = sizeof(type);
	assert_int_equal(getsockopt(a.fd, SOL_SOCKET, SO_TYPE, &type, &len),
			 0);
	assert_int_equal(type, SOCK_RAW);
	assert_int_equal(getsockopt(a.fd, SOL_SOCKET, SO_DOMAIN, &type, &len),
			 0);
	assert_int_equal(type, AF_XDP);
	assert_int_equal(getsockopt(a.fd, 0 /* SOL_IP */, 1, &type, &len), -1);
	assert_int_equal(errno, ENOPROTOOPT);
	assert_int_equal(getsockopt(a.fd, SOL_XDP, XDP_STATISTICS, big, NULL),
			 -1);
	assert_int_equal(errno, EFAULT);

	/* setsockopt: busy polling accepted, ring sizes too late. */
	type = 20;
	assert_int_equal(setsockopt(a.fd, SOL_SOCKET, SO_BUSY_POLL, &type,
				    sizeof(type)), 0);
	assert_int_equal(setsockopt(a.fd, SOL_SOCKET, SO_PREFER_BUSY_POLL,
				    &type, sizeof(type)), 0);
	assert_int_equal(setsockopt(a.fd, SOL_SOCKET, SO_BUSY_POLL, &type, 2),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(setsockopt(a.fd, SOL_XDP, XDP_RX_RING, &type,
				    sizeof(type)), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &type,
				    sizeof(type)), -1);
	assert_int_equal(errno, ENOPROTOOPT);

	/* Other descriptors reach the C library. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	len = sizeof(type);
	assert_int_equal(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len),
			 0);
	assert_int_equal(type, SOCK_DGRAM);
	type = 65536;
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &type,
				    sizeof(type)), 0);
	len = sizeof(st);
	assert_int_equal(getsockopt(sv[0], SOL_XDP, XDP_STATISTICS, &st,
				    &len), -1);
	close(sv[0]);
	close(sv[1]);

	/* b: no fill entries at all: every packet dropped (copy mode). */
	setenv("UXDP_COMPAT_PORT_cs1", "null:cs1,count=40", 1);
	t_umem(&b, NULL);
	assert_int_equal(xsk_socket__create(&b.xsk, "cs1", 0, b.umem, &b.rx,
					    NULL, &cfg), 0);
	b.fd = xsk_socket__fd(b.xsk);
	end = t_now_ms() + 10000;
	do {
		st = t_stats(b.fd);
		if (st.rx_dropped >= 40)
			break;
		usleep(1000);
	} while (t_now_ms() < end);
	assert_int_equal(st.rx_dropped, 40);
	assert_int_equal(st.rx_ring_full, 0);
	assert_true(st.rx_fill_ring_empty_descs > 0);

	t_close(&b);
	/* a's device stays while a lives. */
	assert_non_null(uxdp_dev_get_by_name("cs0"));
	t_close(&a);
	assert_null(uxdp_dev_get_by_name("cs0"));
	unsetenv("UXDP_COMPAT_PORT_cs0");
	unsetenv("UXDP_COMPAT_PORT_cs1");
}

/* ---- transmit and the other socket calls ------------------------------- */

static uint64_t peer_rx;

static uint32_t t_count(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
	if (((unsigned char *)ctx->data)[20] == 0x5a)
		__atomic_fetch_add(&peer_rx, 1, __ATOMIC_RELAXED);
	return UXDP_DROP;
}

static void test_sendto(void **state)
{
	static struct t_app a;
	struct uxdp_dev *peer;
	struct uxdp_prog *p;
	uint32_t idx = 0, i, n;
	char buf[16];
	int sv[2];

	(void)state;
	setenv("UXDP_COMPAT_PORT_ct0", "veth:ct0,peer=ct1", 1);
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 64);
	assert_int_equal(t_sock(&a, "ct0", XDP_USE_NEED_WAKEUP, 0, true), 0);
	/* Copy mode: TX always wants a kick (the kernel sets the flag). */
	assert_int_equal(xsk_ring_prod__needs_wakeup(&a.tx), 1);
	assert_int_equal(a.tx.cached_cons, a.tx.size);

	/* The far end, set up with uxdp's own API: counts what arrives. */
	peer = uxdp_dev_get_by_name("ct1");
	assert_non_null(peer);
	p = uxdp_prog_create("count", t_count, NULL);
	assert_non_null(p);
	assert_int_equal(uxdp_dev_attach_prog(peer, UXDP_ALL_QUEUES, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(peer), 0);

	/* POLLOUT: an empty TX ring is writable at once. */
	{
		struct pollfd pf = { .fd = a.fd, .events = POLLOUT };

		assert_int_equal(poll(&pf, 1, 1000), 1);
		assert_int_equal(pf.revents & POLLOUT, POLLOUT);
	}
	/* 40 packets from frames 100.. */
	n = 40;
	assert_int_equal(xsk_ring_prod__reserve(&a.tx, n, &idx), n);
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&a.tx, idx + i);
		unsigned char *pkt;

		d->addr = (uint64_t)(100 + i) * T_FRAME;
		d->len = 60;
		d->options = 0;
		pkt = xsk_umem__get_data(a.area, d->addr);
		memset(pkt, 0x5a, 60);
	}
	xsk_ring_prod__submit(&a.tx, n);
	/* A blocking send is refused, as by the kernel. */
	errno = 0;
	assert_int_equal(sendto(a.fd, NULL, 0, 0, NULL, 0), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	/* One kick sends at most 32 (the kernel's batch): EAGAIN, then the
	 * rest. */
	assert_int_equal(sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(xsk_cons_nb_avail(&a.cq, 64), 32);
	assert_int_equal(sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0), 0);
	/* libxdp's peek looks at the shared index only when what it cached
	 * is used up: 32, then the other 8. */
	assert_int_equal(xsk_ring_cons__peek(&a.cq, 64, &idx), 32);
	assert_int_equal(xsk_ring_cons__peek(&a.cq, 64, &i), 8);
	assert_int_equal(i, idx + 32);
	for (i = 0; i < 40; i++)
		assert_int_equal(*xsk_ring_cons__comp_addr(&a.cq, idx + i),
				 (uint64_t)(100 + i) * T_FRAME);
	xsk_ring_cons__release(&a.cq, 40);
	/* ct1 is not the layer's: the test polls it. */
	for (i = 0; i < 10; i++)
		uxdp_dev_poll(peer, 0, 64);
	assert_int_equal(__atomic_load_n(&peer_rx, __ATOMIC_RELAXED), 40);

	/* recvfrom: non-blocking only. */
	assert_int_equal(recvfrom(a.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL), 0);
	assert_int_equal(recvfrom(a.fd, NULL, 0, 0, NULL, NULL), -1);
	assert_int_equal(errno, EOPNOTSUPP);

	/* Other descriptors: the C library's calls. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	assert_int_equal(sendto(sv[0], "hello", 5, 0, NULL, 0), 5);
	assert_int_equal(recvfrom(sv[1], buf, sizeof(buf), 0, NULL, NULL), 5);
	assert_memory_equal(buf, "hello", 5);
	close(sv[0]);
	close(sv[1]);

	t_close(&a);
	/* The veth pair came from the environment, both ends go. */
	assert_null(uxdp_dev_get_by_name("ct0"));
	assert_null(uxdp_dev_get_by_name("ct1"));
	/* A deleted socket's descriptor is nobody's. */
	assert_int_equal(sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0), -1);
	unsetenv("UXDP_COMPAT_PORT_ct0");
}

static void test_no_tx_ring(void **state)
{
	static struct t_app a;

	(void)state;
	setenv("UXDP_COMPAT_PORT_cn0", "null:cn0,count=1", 1);
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "cn0", XDP_COPY, 0, false), 0);
	errno = 0;
	assert_int_equal(sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0), -1);
	assert_int_equal(errno, ENOBUFS);
	/* Without need_wakeup the flag is never set. */
	assert_int_equal(xsk_ring_prod__needs_wakeup(&a.fq), 0);
	t_close(&a);
	unsetenv("UXDP_COMPAT_PORT_cn0");
}

/* ---- poll() over sockets and other descriptors ------------------------- */

struct t_gen {
	struct uxdp_dev *gen;
	long delay_ms;
};

/* Emit one packet from the generator after a delay. */
static void *t_emit(void *arg)
{
	struct t_gen *g = arg;

	usleep((useconds_t)g->delay_ms * 1000);
	uxdp_dev_poll(g->gen, 0, 1);
	return NULL;
}

static uint32_t t_to_map(struct uxdp_buff *ctx, void *map)
{
	(void)ctx;
	return uxdp_redirect_map(map, 0, UXDP_DROP);
}

static void test_poll_mixed(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_len = 80);
	struct pollfd fds[20];
	struct uxdp_map *map;
	struct uxdp_prog *p;
	struct t_gen g;
	static struct t_app a;
	pthread_t th;
	int pipes[9][2], i;
	uint64_t t0;
	char c;

	(void)state;
	/* pm1 -> pm0 (the socket's), fed one packet at a time by a
	 * generator the test polls itself. */
	setenv("UXDP_COMPAT_PORT_pm0", "veth:pm0,peer=pm1", 1);
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 64);
	assert_int_equal(t_sock(&a, "pm0", XDP_COPY, 0, true), 0);
	assert_int_equal(uxdp_dev_up(uxdp_dev_get_by_name("pm1")), 0);
	g.gen = uxdp_null_create("pmg", &no);
	assert_non_null(g.gen);
	map = uxdp_map_create(1);
	assert_non_null(map);
	assert_int_equal(uxdp_map_update(map, 0, uxdp_dev_target(
		uxdp_dev_get_by_name("pm1"))), 0);
	p = uxdp_prog_create("to_pm1", t_to_map, map);
	assert_int_equal(uxdp_dev_attach_prog(g.gen, UXDP_ALL_QUEUES, p), 0);
	uxdp_prog_put(p);
	assert_int_equal(uxdp_dev_up(g.gen), 0);

	for (i = 0; i < 9; i++)
		assert_int_equal(pipe(pipes[i]), 0);
	memset(fds, 0, sizeof(fds));
	fds[0].fd = pipes[0][0];
	fds[0].events = POLLIN;
	fds[1].fd = a.fd;
	fds[1].events = POLLIN;
	fds[2].fd = -1;			/* ignored, as by poll(2) */
	fds[2].events = POLLIN;

	/* Nothing ready. */
	assert_int_equal(poll(fds, 3, 0), 0);
	assert_int_equal(fds[0].revents | fds[1].revents | fds[2].revents, 0);
	t0 = t_now_ms();
	assert_int_equal(poll(fds, 3, 60), 0);
	assert_true(t_now_ms() - t0 >= 50);

	/* The pipe alone. */
	assert_int_equal(write(pipes[0][1], "x", 1), 1);
	assert_int_equal(poll(fds, 3, 1000), 1);
	assert_int_equal(fds[0].revents, POLLIN);
	assert_int_equal(fds[1].revents, 0);
	assert_int_equal(read(pipes[0][0], &c, 1), 1);

	/* The socket alone, waking a sleeping poll(). */
	g.delay_ms = 50;
	assert_int_equal(pthread_create(&th, NULL, t_emit, &g), 0);
	t0 = t_now_ms();
	assert_int_equal(poll(fds, 3, 5000), 1);
	assert_true(t_now_ms() - t0 < 4000);
	assert_int_equal(fds[0].revents, 0);
	assert_int_equal(fds[1].revents, POLLIN);
	pthread_join(th, NULL);
	assert_int_equal(t_rx(&a, 1, 80, false, 1000), 1);

	/* Both, in a longer array (more than fit on the stack), with a
	 * socket entry asking for POLLOUT too. */
	for (i = 0; i < 20; i++) {
		fds[i].fd = pipes[i % 9][0];
		fds[i].events = POLLIN;
	}
	fds[7].fd = a.fd;
	fds[7].events = POLLIN | POLLOUT;
	fds[13].fd = a.fd;
	fds[13].events = POLLOUT;
	assert_int_equal(write(pipes[4][1], "y", 1), 1);
	uxdp_dev_poll(g.gen, 0, 1);
	t0 = t_now_ms();
	while (t_now_ms() - t0 < 3000) {
		struct pollfd one = { .fd = a.fd, .events = POLLIN };

		if (poll(&one, 1, 10) == 1)
			break;
	}
	/* Entry 4 (pipe 4), 7 (the socket, IN and OUT), 13 (OUT). */
	assert_int_equal(poll(fds, 20, 1000), 3);
	assert_int_equal(fds[4].revents, POLLIN);
	assert_int_equal(fds[7].revents, POLLIN | POLLOUT);
	assert_int_equal(fds[13].revents, POLLOUT);
	assert_int_equal(fds[0].revents | fds[1].revents | fds[5].revents, 0);

	/* A struct member named poll still works: the macro renames the
	 * member and its use alike. */
	{
		struct ops {
			int (*poll)(struct pollfd *, nfds_t, int);
		} ops = { .poll = poll };

		assert_int_equal(ops.poll(fds, 1, 0), 0);
	}

	uxdp_dev_destroy(g.gen);
	for (i = 0; i < 9; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	t_close(&a);
	uxdp_map_destroy(map);
	unsetenv("UXDP_COMPAT_PORT_pm0");
}

/* ---- the program ------------------------------------------------------- */

static void test_program(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_pps = 2000);
	struct uxdp_rxq_stats st0, st1;
	struct uxdp_dev *d;
	static struct t_app a;
	uint64_t end;
	int i;

	(void)state;
	/* A device the application made (with uxdp's API): the layer
	 * serves it but neither brings it up nor destroys it. */
	d = uxdp_null_create("cp0", &no);
	assert_non_null(d);

	/* INHIBIT_PROG_LOAD: no program, the socket receives nothing. */
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 64);
	assert_int_equal(t_sock(&a, "cp0", XDP_COPY,
				XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, false), 0);
	assert_false(uxdp_dev_is_up(d));
	assert_int_equal(uxdp_dev_up(d), 0);
	end = t_now_ms() + 5000;
	while (t_rxq("cp0").no_prog < 20 && t_now_ms() < end)
		usleep(1000);
	assert_true(t_rxq("cp0").no_prog >= 20);
	assert_int_equal(t_rxq("cp0").redirect, 0);
	assert_int_equal(xsk_cons_nb_avail(&a.rx, 64), 0);
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);

	/* Default: the program redirects to the socket. */
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 256);
	assert_int_equal(t_sock(&a, "cp0", XDP_COPY, 0, false), 0);
	assert_int_equal(t_rx(&a, 20, 64, false, 5000), 20);
	assert_true(t_rxq("cp0").redirect >= 20);
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	/* Its socket gone, the program goes, the device stays (not the
	 * layer's), no longer polled: the test polls it. */
	assert_ptr_equal(uxdp_dev_get_by_name("cp0"), d);
	st0 = t_rxq("cp0");
	for (i = 0; i < 200; i++) {
		uxdp_dev_poll(d, 0, 64);
		usleep(500);
	}
	st1 = t_rxq("cp0");
	assert_true(st1.no_prog > st0.no_prog);
	assert_int_equal(st1.redirect, st0.redirect);
	uxdp_dev_destroy(d);
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);
}

/* ---- shared UMEM ------------------------------------------------------- */

static void test_shared_umem(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_count = 60);
	struct xsk_socket_config cfg = { .bind_flags = XDP_COPY };
	struct xsk_ring_prod fq2;
	struct xsk_ring_cons cq2, rx2;
	struct xsk_socket *x2, *x3;
	static struct t_app a;
	uint32_t idx = 0, n, i, got = 0;
	uint64_t end;
	struct uxdp_dev *su1;
	int fd2;

	(void)state;
	/* su1 is the test's own, down until its socket's fill ring is
	 * stocked (the layer brings up only devices it opened). */
	setenv("UXDP_COMPAT_PORTS", "su0=null:su0,count=50", 1);
	su1 = uxdp_null_create("su1", &no);
	assert_non_null(su1);
	t_umem(&a, NULL);
	t_fill(&a.fq, 0, 128);
	assert_int_equal(xsk_socket__create(&a.xsk, "su0", 0, a.umem, &a.rx,
					    NULL, &cfg), 0);
	a.fd = xsk_socket__fd(a.xsk);
	/* The UMEM's rings went to the first socket. */
	assert_int_equal(xsk_socket__create(&x2, "su1", 0, a.umem, &rx2,
					    NULL, NULL), -EFAULT);
	/* One socket per queue. */
	assert_int_equal(xsk_socket__create_shared(&x2, "su0", 0, a.umem,
						   &rx2, NULL, &fq2, &cq2,
						   NULL), -EBUSY);
	/* A second socket with rings of its own; it asks for nothing and
	 * gets the first one's mode (the kernel's shared UMEM): copy, on a
	 * device that could do zero-copy. */
	assert_int_equal(xsk_socket__create_shared(&x2, "su1", 0, a.umem,
						   &rx2, NULL, &fq2, &cq2,
						   NULL), 0);
	fd2 = xsk_socket__fd(x2);
	assert_true(fd2 != a.fd);
	assert_int_equal(t_zerocopy(fd2), 0);
	assert_int_equal(xsk_umem__fd(a.umem), a.fd);
	assert_int_equal(fq2.size, 2048);
	assert_int_equal(fq2.cached_cons, 2048);
	assert_ptr_not_equal(fq2.ring, a.fq.ring);
	/* Its fill ring, its half of the frames. */
	t_fill(&fq2, 256, 128);
	assert_int_equal(uxdp_dev_up(su1), 0);
	assert_int_equal(t_rx(&a, 50, 64, false, 5000), 50);
	end = t_now_ms() + 5000;
	while (got < 60 && t_now_ms() < end) {
		n = xsk_ring_cons__peek(&rx2, 64, &idx);
		for (i = 0; i < n; i++) {
			uint64_t addr = xsk_ring_cons__rx_desc(&rx2,
							       idx + i)->addr;

			assert_true(addr >= 256 * T_FRAME &&
				    addr < 384 * T_FRAME);
		}
		xsk_ring_cons__release(&rx2, n);
		got += n;
		if (!n)
			usleep(1000);
	}
	assert_int_equal(got, 60);
	/* Create with the _opts call: both rings NULL means the UMEM's,
	 * gone already. */
	{
		struct xsk_socket_opts o = { .sz = sizeof(o), .rx = &rx2 };

		errno = 0;
		x3 = xsk_socket__create_opts("su1", 0, a.umem, &o);
		assert_null(x3);
		assert_int_equal(errno, EFAULT);
	}
	assert_int_equal(xsk_umem__delete(a.umem), -EBUSY);
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	/* The UMEM's descriptor is now its remaining socket's. */
	assert_int_equal(xsk_umem__fd(a.umem), fd2);
	assert_int_equal(xsk_umem__delete(a.umem), -EBUSY);
	assert_non_null(uxdp_dev_get_by_name("su0"));
	xsk_socket__delete(x2);
	assert_null(uxdp_dev_get_by_name("su0"));
	assert_ptr_equal(uxdp_dev_get_by_name("su1"), su1);
	uxdp_dev_destroy(su1);
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);
	unsetenv("UXDP_COMPAT_PORTS");
}

/* ---- feeds ------------------------------------------------------------- */

static void test_feed(void **state)
{
	struct uxdp_txq_stats ts;
	struct uxdp_dev *fgen;
	static struct t_app a;
	uint32_t idx = 0, tidx = 0, n, i, got = 0, done = 0;
	uint64_t end;

	(void)state;
	/* Bad specifications fail the socket, and leave nothing. */
	setenv("UXDP_COMPAT_PORT_cf0", "veth:cf0,peer=cf1", 1);
	t_umem(&a, NULL);
	setenv("UXDP_COMPAT_FEED", "cf1", 1);
	assert_int_equal(t_sock(&a, "cf0", 0, 0, true), -EINVAL);
	assert_null(uxdp_dev_get_by_name("cf0"));
	setenv("UXDP_COMPAT_FEED", "nosuch=null:x", 1);
	assert_int_equal(t_sock(&a, "cf0", 0, 0, true), -ENODEV);
	setenv("UXDP_COMPAT_FEED", "cf0=null:x", 1);
	assert_int_equal(t_sock(&a, "cf0", 0, 0, true), -EBUSY);
	setenv("UXDP_COMPAT_FEED", "cf1=null:x,bogus", 1);
	assert_int_equal(t_sock(&a, "cf0", 0, 0, true), -EINVAL);
	/* The inner error is wrapped, not garbled (the message once
	 * formatted into the buffer one of its arguments pointed at). */
	assert_string_equal(uxdp_errmsg(), "UXDP_COMPAT_FEED: opening "
			    "\"null:x,bogus\": port null:x: unknown "
			    "parameter 'bogus'");
	assert_null(uxdp_dev_get_by_name("cf0"));
	assert_null(uxdp_dev_get_by_name("cf1"));
	assert_null(uxdp_dev_get_by_name("x"));

	/* A generator feeds cf1 -> cf0; what the socket sends back out of
	 * cf0 reaches the generator's sink through cf1. */
	setenv("UXDP_COMPAT_FEED", "cf1=null:cfgen,count=50,len=90", 1);
	t_fill(&a.fq, 0, 256);
	assert_int_equal(t_sock(&a, "cf0", 0, 0, true), 0);
	fgen = uxdp_dev_get_by_name("cfgen");
	assert_non_null(fgen);
	/* A socket on the fed device is refused. */
	{
		struct xsk_ring_prod fq2;
		struct xsk_ring_cons cq2, rx2;
		struct xsk_socket *x2;

		assert_int_equal(xsk_socket__create_shared(&x2, "cf1", 0,
							   a.umem, &rx2, NULL,
							   &fq2, &cq2, NULL),
				 -EBUSY);
	}
	end = t_now_ms() + 10000;
	while ((got < 50 || done < 50) && t_now_ms() < end) {
		n = xsk_ring_cons__peek(&a.rx, 64, &idx);
		if (n) {
			assert_int_equal(xsk_ring_prod__reserve(&a.tx, n,
								&tidx), n);
			for (i = 0; i < n; i++)
				*xsk_ring_prod__tx_desc(&a.tx, tidx + i) =
					*xsk_ring_cons__rx_desc(&a.rx,
								idx + i);
			xsk_ring_cons__release(&a.rx, n);
			xsk_ring_prod__submit(&a.tx, n);
			got += n;
		}
		sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		n = xsk_ring_cons__peek(&a.cq, 64, &idx);
		xsk_ring_cons__release(&a.cq, n);
		done += n;
		if (!n)
			usleep(1000);
	}
	assert_int_equal(got, 50);
	assert_int_equal(done, 50);
	/* cf1's poller counts a transmit's packets, then its bytes, and
	 * the stats are read in that order: wait for both. */
	end = t_now_ms() + 5000;
	do {
		assert_int_equal(uxdp_dev_txq_stats(fgen, 0, &ts), 0);
		if (ts.packets >= 50 && ts.bytes >= 50 * 90)
			break;
		usleep(1000);
	} while (t_now_ms() < end);
	assert_int_equal(ts.packets, 50);
	assert_int_equal(ts.bytes, 50 * 90);
	t_close(&a);
	assert_null(uxdp_dev_get_by_name("cfgen"));
	assert_null(uxdp_dev_get_by_name("cf1"));
	unsetenv("UXDP_COMPAT_FEED");
	unsetenv("UXDP_COMPAT_PORT_cf0");
}

/*
 * The forwarder's order (xsk_fwd): the socket first, its fill ring stocked
 * afterwards. The feed waits for the fill entries, as a wire does not start
 * because a socket was made: however long the application takes, every
 * numbered packet arrives, in order, and nothing is dropped.
 */
static void test_feed_late_fill(void **state)
{
	static struct t_app a;
	struct xdp_statistics st;

	(void)state;
	setenv("UXDP_COMPAT_PORT_cl0", "veth:cl0,peer=cl1", 1);
	/* Fewer than the veth's ring holds: an unpaced generator. */
	setenv("UXDP_COMPAT_FEED", "cl1=null:clgen,count=200,len=100,seq", 1);
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "cl0", XDP_COPY, 0, false), 0);
	/* Long enough for an unpaced generator to send everything. */
	usleep(200 * 1000);
	assert_int_equal(t_rxq("cl0").packets, 0);
	t_fill(&a.fq, 0, T_NFRAMES);
	assert_int_equal(t_rx(&a, 200, 100, true, 10000), 200);
	st = t_stats(a.fd);
	assert_int_equal(st.rx_dropped, 0);
	assert_int_equal(st.rx_fill_ring_empty_descs, 0);
	t_close(&a);
	assert_null(uxdp_dev_get_by_name("clgen"));
	unsetenv("UXDP_COMPAT_FEED");
	unsetenv("UXDP_COMPAT_PORT_cl0");
}

/*
 * Feeds on the peers of two ports, the second without a socket when the
 * first one's starts the feeds (xsk_fwd -i cp0 -i cq0): the second port's
 * veth is opened for its peer's feed (here from UXDP_COMPAT_PORTS), its
 * socket then finds it, and each socket gets all of its feed. A fed
 * device that nothing makes fails naming the feed, not the socket's
 * device, and leaves nothing behind.
 */
static void test_feed_later_port(void **state)
{
	struct xsk_socket_config cfg = { .bind_flags = XDP_COPY };
	static struct t_app a, b;
	struct xsk_socket *x2;

	(void)state;
	setenv("UXDP_COMPAT_PORT_cp0", "veth:cp0,peer=cp1", 1);
	setenv("UXDP_COMPAT_PORTS", "cq0=veth:cq0,peer=cq1", 1);
	setenv("UXDP_COMPAT_FEED", "cp1=null:cpg,count=100,len=100,seq;"
	       "cq1=null:cqg,count=100,len=90,seq", 1);
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "cp0", XDP_COPY, 0, false), 0);
	assert_non_null(uxdp_dev_get_by_name("cq1"));
	b = a;
	assert_int_equal(xsk_socket__create_shared(&x2, "cq0", 0, a.umem,
						   &b.rx, NULL, &b.fq, &b.cq,
						   &cfg), 0);
	b.fd = xsk_socket__fd(x2);
	t_fill(&a.fq, 0, 256);
	t_fill(&b.fq, 256, 256);
	assert_int_equal(t_rx(&a, 100, 100, true, 10000), 100);
	assert_int_equal(t_rx(&b, 100, 90, true, 10000), 100);
	xsk_socket__delete(x2);
	t_close(&a);
	assert_null(uxdp_dev_get_by_name("cq0"));
	assert_null(uxdp_dev_get_by_name("cqg"));

	setenv("UXDP_COMPAT_FEED", "cz1=null:czg", 1);
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "cp0", XDP_COPY, 0, false), -ENODEV);
	assert_non_null(strstr(uxdp_errmsg(), "UXDP_COMPAT_FEED: no uxdp "
			       "device cz1 to feed"));
	assert_null(uxdp_dev_get_by_name("cp0"));
	assert_null(uxdp_dev_get_by_name("cq0"));
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);
	unsetenv("UXDP_COMPAT_FEED");
	unsetenv("UXDP_COMPAT_PORTS");
	unsetenv("UXDP_COMPAT_PORT_cp0");
}

/* Records in a pcap file (libpcap's layout, either timestamp unit). */
static int t_pcap_records(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char h[24];
	uint32_t rec[4];
	int n = 0;

	assert_non_null(f);
	assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
	while (fread(rec, sizeof(rec), 1, f) == 1) {
		assert_int_equal(fseek(f, rec[2], SEEK_CUR), 0);
		n++;
	}
	fclose(f);
	return n;
}

static void test_feed_capture(void **state)
{
	char path[] = "/tmp/uxdp-compat-XXXXXX", feed[96];
	static struct t_app a;
	uint32_t idx = 0, i, sent = 0, done = 0;
	struct uxdp_dev *d;
	uint64_t end;
	int fd;

	(void)state;
	if (!uxdp_port_usage("pcap"))
		skip();		/* built without libpcap */
	setenv("UXDP_COMPAT_PORT_cc0", "veth:cc0,peer=cc1", 1);
	t_umem(&a, NULL);
	/* A feed port whose device exists would be someone else's. */
	d = uxdp_null_create("ccx", NULL);
	assert_non_null(d);
	setenv("UXDP_COMPAT_FEED", "cc1=veth:ccx", 1);
	assert_int_equal(t_sock(&a, "cc0", 0, 0, true), -EEXIST);
	uxdp_dev_destroy(d);
	/* A veth port goes with both its ends. */
	setenv("UXDP_COMPAT_FEED", "cc1=veth:ccv,peer=ccw", 1);
	assert_int_equal(t_sock(&a, "cc0", 0, 0, true), 0);
	assert_non_null(uxdp_dev_get_by_name("ccw"));
	xsk_socket__delete(a.xsk);
	a.xsk = NULL;
	assert_null(uxdp_dev_get_by_name("ccv"));
	assert_null(uxdp_dev_get_by_name("ccw"));
	t_track(&a, false);
	assert_int_equal(xsk_umem__delete(a.umem), 0);
	munmap(a.area, a.len);

	/* A burst out of cc0, the socket deleted as soon as the last
	 * packet completes: the capture still has every one (the last
	 * socket's teardown processes what reached cc1). */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(feed, sizeof(feed), "cc1=pcap:,out=%s", path);
	setenv("UXDP_COMPAT_FEED", feed, 1);
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "cc0", XDP_COPY, 0, true), 0);
	assert_int_equal(xsk_ring_prod__reserve(&a.tx, 200, &idx), 200);
	for (i = 0; i < 200; i++) {
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&a.tx, idx + i);

		t->addr = (uint64_t)i * T_FRAME;
		t->len = 60;
		t->options = 0;
		memset(xsk_umem__get_data(a.area, t->addr), (int)i, 60);
	}
	xsk_ring_prod__submit(&a.tx, 200);
	end = t_now_ms() + 5000;
	while (done < 200 && t_now_ms() < end) {
		uint32_t n;

		sendto(a.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		n = xsk_ring_cons__peek(&a.cq, 256, &idx);
		xsk_ring_cons__release(&a.cq, n);
		done += n;
		sent++;
	}
	assert_int_equal(done, 200);
	assert_true(sent >= 7);		/* at most 32 a kick */
	t_close(&a);
	assert_int_equal(t_pcap_records(path), 200);
	unlink(path);
}

/* ---- the rest of what the kernel's samples call ------------------------ */

/* What the refusals printed, through uxdp's printing or libxdp's. */
static char said[4096];

static int t_say(enum uxdp_print_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(said);

	(void)level;
	return vsnprintf(said + n, sizeof(said) - n, fmt, ap);
}

static int t_say_libxdp(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	assert_int_equal(level, LIBXDP_WARN);
	return t_say(UXDP_WARN, fmt, ap);
}

/* @got was refused as @call: the value, errno, the message. */
#define T_REFUSED(got, want, call) do {					\
	said[0] = '\0';							\
	errno = 0;							\
	assert_true((got) == (want));					\
	assert_int_equal(errno, EOPNOTSUPP);				\
	assert_string_equal(said, "uxdp compat: " call ": eBPF "	\
			    "programs are not supported yet "		\
			    "(docs/compat.md)\n");			\
} while (0)

/* An object-making call: libxdp's error pointer. */
#define T_REFUSED_PTR(got, call) do {					\
	const void *p_;							\
									\
	said[0] = '\0';							\
	p_ = (got);							\
	assert_int_equal(libxdp_get_error(p_), -EOPNOTSUPP);		\
	assert_int_equal(errno, EOPNOTSUPP);				\
	assert_non_null(strstr(said, " " call ": "));			\
} while (0)

static void test_libxdp_refused(void **state)
{
	struct xdp_program *progs[1] = { NULL };
	uxdp_print_fn_t old = uxdp_set_print(t_say);
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .open_filename = "x.o");
	char buf[64];
	__u32 len = 0;

	(void)state;
	/* libxdp's constants and types. */
	assert_int_equal(XDP_MODE_UNSPEC, 0);
	assert_int_equal(XDP_MODE_NATIVE, 1);
	assert_int_equal(XDP_MODE_SKB, 2);
	assert_int_equal(XDP_MODE_HW, 3);
	assert_int_equal(XDP_PKT_CONTD, 1);
	assert_int_equal(XDP_TX_METADATA, 2);
	assert_int_equal(po.sz, sizeof(po));
	assert_string_equal(po.open_filename, "x.o");
	/* The error calls work. */
	assert_int_equal(libxdp_strerror(-EOPNOTSUPP, buf, sizeof(buf)), 0);
	assert_string_equal(buf, strerror(EOPNOTSUPP));
	assert_int_equal(libxdp_get_error(buf), 0);
	errno = ENOENT;
	assert_int_equal(libxdp_get_error(NULL), -ENOENT);

	/* Every program call refuses, in libxdp's convention, naming
	 * itself. The ones that make an object: an error pointer. */
	T_REFUSED_PTR(xdp_program__open_file("x.o", NULL, NULL),
		      "xdp_program__open_file");
	T_REFUSED_PTR(xdp_program__find_file("x.o", NULL, NULL),
		      "xdp_program__find_file");
	T_REFUSED_PTR(xdp_program__from_bpf_obj(NULL, NULL),
		      "xdp_program__from_bpf_obj");
	T_REFUSED_PTR(xdp_program__from_fd(3), "xdp_program__from_fd");
	T_REFUSED_PTR(xdp_program__from_id(1), "xdp_program__from_id");
	T_REFUSED_PTR(xdp_program__from_pin("/x"), "xdp_program__from_pin");
	T_REFUSED_PTR(xdp_program__clone(NULL, 0), "xdp_program__clone");
	T_REFUSED_PTR(xdp_multiprog__get_from_ifindex(1),
		      "xdp_multiprog__get_from_ifindex");
	/* libxdp's create returns NULL. */
	T_REFUSED(xdp_program__create(&po), NULL, "xdp_program__create");
	/* The others: their failure values. */
	T_REFUSED(xdp_program__attach(NULL, 1, XDP_MODE_NATIVE, 0),
		  -EOPNOTSUPP, "xdp_program__attach");
	T_REFUSED(xdp_program__detach(NULL, 1, XDP_MODE_SKB, 0), -EOPNOTSUPP,
		  "xdp_program__detach");
	T_REFUSED(xdp_program__attach_multi(progs, 1, 1, XDP_MODE_NATIVE, 0),
		  -EOPNOTSUPP, "xdp_program__attach_multi");
	T_REFUSED(xdp_program__detach_multi(progs, 1, 1, XDP_MODE_NATIVE, 0),
		  -EOPNOTSUPP, "xdp_program__detach_multi");
	T_REFUSED(xdp_program__fd(NULL), -EOPNOTSUPP, "xdp_program__fd");
	T_REFUSED(xdp_program__bpf_obj(NULL), NULL, "xdp_program__bpf_obj");
	T_REFUSED(xdp_program__btf(NULL), NULL, "xdp_program__btf");
	T_REFUSED(xdp_program__name(NULL), NULL, "xdp_program__name");
	T_REFUSED(xdp_program__tag(NULL), NULL, "xdp_program__tag");
	T_REFUSED(xdp_program__id(NULL), 0, "xdp_program__id");
	T_REFUSED(xdp_program__set_xdp_frags_support(NULL, true), -EOPNOTSUPP,
		  "xdp_program__set_xdp_frags_support");
	T_REFUSED(xdp_program__xdp_frags_support(NULL), false,
		  "xdp_program__xdp_frags_support");
	T_REFUSED(xdp_program__is_attached(NULL, 1), XDP_MODE_UNSPEC,
		  "xdp_program__is_attached");
	T_REFUSED(xdp_program__run_prio(NULL), XDP_DEFAULT_RUN_PRIO,
		  "xdp_program__run_prio");
	T_REFUSED(xdp_program__set_run_prio(NULL, 10), -EOPNOTSUPP,
		  "xdp_program__set_run_prio");
	T_REFUSED(xdp_program__chain_call_enabled(NULL, XDP_PASS), false,
		  "xdp_program__chain_call_enabled");
	T_REFUSED(xdp_program__set_chain_call_enabled(NULL, XDP_PASS, true),
		  -EOPNOTSUPP, "xdp_program__set_chain_call_enabled");
	T_REFUSED(xdp_program__print_chain_call_actions(NULL, buf,
							sizeof(buf)),
		  -EOPNOTSUPP, "xdp_program__print_chain_call_actions");
	T_REFUSED(xdp_program__pin(NULL, "/x"), -EOPNOTSUPP,
		  "xdp_program__pin");
	T_REFUSED(xdp_program__test_run(NULL, NULL, 0), -EOPNOTSUPP,
		  "xdp_program__test_run");
	T_REFUSED(libxdp_clean_references(1), -EOPNOTSUPP,
		  "libxdp_clean_references");
	T_REFUSED(xdp_multiprog__detach(NULL), -EOPNOTSUPP,
		  "xdp_multiprog__detach");
	T_REFUSED(xdp_multiprog__next_prog(NULL, NULL), NULL,
		  "xdp_multiprog__next_prog");
	T_REFUSED(xdp_multiprog__main_prog(NULL), NULL,
		  "xdp_multiprog__main_prog");
	T_REFUSED(xdp_multiprog__hw_prog(NULL), NULL,
		  "xdp_multiprog__hw_prog");
	T_REFUSED(xdp_multiprog__attach_mode(NULL), XDP_MODE_UNSPEC,
		  "xdp_multiprog__attach_mode");
	T_REFUSED(xdp_multiprog__is_legacy(NULL), false,
		  "xdp_multiprog__is_legacy");
	T_REFUSED(xdp_multiprog__program_count(NULL), -EOPNOTSUPP,
		  "xdp_multiprog__program_count");
	T_REFUSED(xdp_multiprog__xdp_frags_support(NULL), false,
		  "xdp_multiprog__xdp_frags_support");
	T_REFUSED(xdp_multiprog__xdp_dev_bound(NULL), false,
		  "xdp_multiprog__xdp_dev_bound");
	/* The libbpf calls xdpsock makes on its program's maps. */
	T_REFUSED(bpf_object__find_map_by_name(NULL, ".bss"), NULL,
		  "bpf_object__find_map_by_name");
	T_REFUSED(bpf_map__is_internal(NULL), false, "bpf_map__is_internal");
	T_REFUSED(bpf_map__fd(NULL), -EOPNOTSUPP, "bpf_map__fd");
	T_REFUSED(bpf_map_update_elem(3, &len, &len, BPF_ANY), -EOPNOTSUPP,
		  "bpf_map_update_elem");
	T_REFUSED(bpf_obj_get_info_by_fd(3, buf, &len), -EOPNOTSUPP,
		  "bpf_obj_get_info_by_fd");
	T_REFUSED(bpf_map_get_fd_by_id(1), -EOPNOTSUPP,
		  "bpf_map_get_fd_by_id");
	/* Closing what a refused call returned: nothing to say. */
	said[0] = '\0';
	xdp_program__close(xdp_program__open_file("x.o", NULL, NULL));
	said[0] = '\0';
	xdp_program__close(NULL);
	xdp_multiprog__close(NULL);
	assert_string_equal(said, "");
	/* Through libxdp_set_print's function, then nowhere. */
	assert_null(libxdp_set_print(t_say_libxdp));
	uxdp_set_print(NULL);
	T_REFUSED(xdp_program__fd(NULL), -EOPNOTSUPP, "xdp_program__fd");
	assert_ptr_equal(libxdp_set_print(NULL), t_say_libxdp);
	said[0] = '\0';
	assert_int_equal(xdp_program__fd(NULL), -EOPNOTSUPP);
	assert_string_equal(said, "");
	uxdp_set_print(old);
}

/*
 * The samples look their interface up (if_nametoindex) before they make a
 * socket, and raise RLIMIT_MEMLOCK first (refused in a container).
 */
static void test_samples_calls(void **state)
{
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	struct rlimit bad = { 2, 1 };
	static struct t_app a;
	unsigned int idx;

	(void)state;
	setenv("UXDP_COMPAT_PORT_ci0", "veth:ci0,peer=ci1", 1);
	idx = if_nametoindex("ci0");
	assert_true(idx > 0);
	assert_non_null(uxdp_dev_get_by_name("ci0"));
	assert_int_equal(idx, uxdp_dev_ifindex(uxdp_dev_get_by_name("ci0")));
	assert_int_equal(if_nametoindex("ci0"), idx);
	/* The socket's device is the one looked up, and goes with it. */
	t_umem(&a, NULL);
	assert_int_equal(t_sock(&a, "ci0", 0, 0, false), 0);
	assert_int_equal(uxdp_dev_ifindex(uxdp_dev_get_by_name("ci0")), idx);
	t_close(&a);
	assert_null(uxdp_dev_get_by_name("ci0"));
	/* The kernel's interfaces are the kernel's. */
	assert_true(if_nametoindex("lo") > 0);
	errno = 0;
	assert_int_equal(if_nametoindex("nosuch0"), 0);
	assert_int_equal(errno, ENODEV);
	unsetenv("UXDP_COMPAT_PORT_ci0");

	/* Granted or not (EPERM without CAP_SYS_RESOURCE), it works. */
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &inf), 0);
	/* Any other failure is the C library's. */
	errno = 0;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &bad), -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_constants, t_cleanup),
		cmocka_unit_test_teardown(test_ring_calls, t_cleanup),
		cmocka_unit_test_teardown(test_umem_errors, t_cleanup),
		cmocka_unit_test_teardown(test_socket_errors, t_cleanup),
		cmocka_unit_test_teardown(test_rx_copy, t_cleanup),
		cmocka_unit_test_teardown(test_rx_zerocopy, t_cleanup),
		cmocka_unit_test_teardown(test_getsockopt, t_cleanup),
		cmocka_unit_test_teardown(test_sendto, t_cleanup),
		cmocka_unit_test_teardown(test_no_tx_ring, t_cleanup),
		cmocka_unit_test_teardown(test_poll_mixed, t_cleanup),
		cmocka_unit_test_teardown(test_program, t_cleanup),
		cmocka_unit_test_teardown(test_shared_umem, t_cleanup),
		cmocka_unit_test_teardown(test_feed, t_cleanup),
		cmocka_unit_test_teardown(test_feed_capture, t_cleanup),
		cmocka_unit_test_teardown(test_feed_late_fill, t_cleanup),
		cmocka_unit_test_teardown(test_feed_later_port, t_cleanup),
		cmocka_unit_test_teardown(test_libxdp_refused, t_cleanup),
		cmocka_unit_test_teardown(test_samples_calls, t_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
