/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdpsock_mini: a small xdpsock (the kernel's AF_XDP sample), written
 * against libxdp's <xdp/xsk.h> and the socket calls only, nothing of
 * uxdp's, so that one source builds two ways:
 *
 *	cc xdpsock_mini.c -lxdp -lbpf			kernel AF_XDP, libxdp
 *	cc -I<prefix>/include/uxdp/compat -I<prefix>/include \
 *	   xdpsock_mini.c -luxdp			uxdp devices, in process
 *
 * (docs/compat.md: which device an interface name is under uxdp.)
 *
 * Modes: rxdrop (-r, the default) counts what arrives and gives the
 * buffers straight back; l2fwd (-l) swaps the Ethernet addresses and sends
 * each packet back out of the queue it came in on. It stops after -n
 * packets (and, in l2fwd, once they have all been sent), after -d seconds,
 * or on SIGINT/SIGTERM, and prints its totals one "name value" a line:
 * packets, bytes, an FNV-1a hash of what was received (length and bytes of
 * each packet, in order), the socket's XDP_STATISTICS, and whether it
 * ended up in zero-copy mode. "ready" is printed once the socket is bound
 * and its fill ring stocked.
 *
 * Exit status: 0; 1 on an error; 3 when -n packets did not arrive in time.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/if_link.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xdp/xsk.h>

#define NUM_FRAMES	XSK_RING_PROD__DEFAULT_NUM_DESCS
#define MAX_BATCH	256

struct app {
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *area;
	size_t area_len;
	int fd;
	/* options */
	const char *ifname;
	uint32_t queue;
	bool l2fwd;
	bool use_poll;
	bool need_wakeup;
	uint32_t frame_size;
	uint32_t batch;
	uint64_t count;
	unsigned int seconds;
	/* totals */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t hash;
	uint32_t outstanding;	/* sent, not yet completed */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "xdpsock_mini: %s: %s\n", what, strerror(err));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xdpsock_mini -i IFNAME [-q QUEUE] [-r|-l] [-n COUNT] "
		"[-d SECONDS]\n"
		"                    [-p] [-c|-z] [-W] [-S] [-f FRAME_SIZE] "
		"[-b BATCH]\n"
		"  -r rxdrop (default)   -l l2fwd (swap MACs, send back)\n"
		"  -n stop after COUNT packets   -d give up after SECONDS "
		"(10)\n"
		"  -p wait in poll()   -c copy mode   -z zero-copy mode\n"
		"  -W no need_wakeup   -S generic (skb) XDP\n");
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* FNV-1a, 64 bits, over the length (4 bytes, little-endian) and bytes. */
static uint64_t fnv1a(uint64_t h, const unsigned char *p, uint32_t len)
{
	unsigned char l[4] = { (unsigned char)len, (unsigned char)(len >> 8),
			       (unsigned char)(len >> 16),
			       (unsigned char)(len >> 24) };
	uint32_t i;

	for (i = 0; i < 4; i++)
		h = (h ^ l[i]) * 0x100000001b3ULL;
	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Buffers back to the fill ring. The ring has room for every frame, so
 * this reserve succeeds; a failure means lost buffers. */
static void refill(struct app *a, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx, i;

	if (!n)
		return;
	if (xsk_prod_nb_free(&a->fq, n) < n ||
	    xsk_ring_prod__reserve(&a->fq, n, &idx) != n)
		die("fill ring full", ENOSPC);
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&a->fq, idx + i) = addrs[i];
	xsk_ring_prod__submit(&a->fq, n);
}

static void kick_tx(struct app *a)
{
	if (sendto(a->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return;
	/* The kernel's answers for "not now": try again later. */
	if (errno == EAGAIN || errno == ENOBUFS || errno == EBUSY ||
	    errno == ENETDOWN)
		return;
	die("sendto", errno);
}

/* Kick transmission and take completed buffers back to the fill ring. */
static void complete_tx(struct app *a)
{
	uint64_t addrs[MAX_BATCH];
	uint32_t idx, n, i;

	if (!a->outstanding)
		return;
	if (!a->need_wakeup || xsk_ring_prod__needs_wakeup(&a->tx))
		kick_tx(a);
	n = xsk_ring_cons__peek(&a->cq, a->batch, &idx);
	for (i = 0; i < n; i++)
		addrs[i] = *xsk_ring_cons__comp_addr(&a->cq, idx + i);
	xsk_ring_cons__release(&a->cq, n);
	refill(a, addrs, n);
	a->outstanding -= n;
}

static void swap_macs(unsigned char *eth)
{
	unsigned char t[6];

	memcpy(t, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, t, 6);
}

/* One batch from the RX ring. Returns how many packets it had. */
static uint32_t rx_batch(struct app *a)
{
	uint64_t addrs[MAX_BATCH];
	uint32_t idx, tidx = 0, n, i;

	n = xsk_ring_cons__peek(&a->rx, a->batch, &idx);
	if (!n) {
		/* Wake a driver waiting for fill entries (need_wakeup). */
		if (!a->need_wakeup || xsk_ring_prod__needs_wakeup(&a->fq))
			recvfrom(a->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		return 0;
	}
	if (a->l2fwd)
		while (xsk_ring_prod__reserve(&a->tx, n, &tidx) < n) {
			complete_tx(a);
			if (stop) {
				/* Leave them on the ring, unread. */
				xsk_ring_cons__cancel(&a->rx, n);
				return 0;
			}
		}
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&a->rx,
								  idx + i);
		uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
		unsigned char *pkt = xsk_umem__get_data(a->area, addr);

		a->hash = fnv1a(a->hash, pkt, d->len);
		a->rx_bytes += d->len;
		if (a->l2fwd) {
			struct xdp_desc *t = xsk_ring_prod__tx_desc(&a->tx,
								    tidx + i);

			swap_macs(pkt);
			t->addr = d->addr;
			t->len = d->len;
			t->options = 0;
			a->tx_bytes += d->len;
		} else {
			addrs[i] = xsk_umem__extract_addr(d->addr);
		}
	}
	xsk_ring_cons__release(&a->rx, n);
	a->rx_packets += n;
	if (a->l2fwd) {
		xsk_ring_prod__submit(&a->tx, n);
		a->tx_packets += n;
		a->outstanding += n;
		complete_tx(a);
	} else {
		refill(a, addrs, n);
	}
	return n;
}

static void setup(struct app *a, uint32_t bind_flags, uint32_t xdp_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_size = a->frame_size,
		.frame_headroom = XSK_UMEM__DEFAULT_FRAME_HEADROOM,
		.flags = XSK_UMEM__DEFAULT_FLAGS,
	};
	struct xsk_socket_config scfg;
	uint64_t addrs[NUM_FRAMES];
	uint32_t i;
	int err;

	a->area_len = (size_t)NUM_FRAMES * a->frame_size;
	a->area = mmap(NULL, a->area_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->area == MAP_FAILED)
		die("mmap", errno);
	err = xsk_umem__create(&a->umem, a->area, a->area_len, &a->fq,
			       &a->cq, &ucfg);
	if (err)
		die("xsk_umem__create", -err);
	/* Stock the fill ring before binding, as xdpsock does: nothing that
	 * arrives after the bind finds it empty. */
	for (i = 0; i < NUM_FRAMES; i++)
		addrs[i] = (uint64_t)i * a->frame_size;
	refill(a, addrs, NUM_FRAMES);

	memset(&scfg, 0, sizeof(scfg));
	scfg.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS;
	scfg.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS;
	scfg.xdp_flags = xdp_flags;
	scfg.bind_flags = (__u16)bind_flags;
	err = xsk_socket__create(&a->xsk, a->ifname, a->queue, a->umem,
				 &a->rx, a->l2fwd ? &a->tx : NULL, &scfg);
	if (err)
		die("xsk_socket__create", -err);
	a->fd = xsk_socket__fd(a->xsk);
	if (a->fd < 0)
		die("xsk_socket__fd", -a->fd);
}

static void report(struct app *a, bool timed_out)
{
	struct xdp_statistics st;
	struct xdp_options opts;
	socklen_t len = sizeof(st);

	printf("rx_packets %" PRIu64 "\n", a->rx_packets);
	printf("rx_bytes %" PRIu64 "\n", a->rx_bytes);
	printf("rx_hash 0x%016" PRIx64 "\n", a->hash);
	printf("tx_packets %" PRIu64 "\n", a->tx_packets);
	printf("tx_bytes %" PRIu64 "\n", a->tx_bytes);
	printf("tx_outstanding %u\n", a->outstanding);
	memset(&st, 0, sizeof(st));
	if (getsockopt(a->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		die("getsockopt(XDP_STATISTICS)", errno);
	printf("rx_dropped %llu\n", (unsigned long long)st.rx_dropped);
	printf("rx_invalid_descs %llu\n",
	       (unsigned long long)st.rx_invalid_descs);
	printf("tx_invalid_descs %llu\n",
	       (unsigned long long)st.tx_invalid_descs);
	printf("rx_ring_full %llu\n", (unsigned long long)st.rx_ring_full);
	printf("rx_fill_ring_empty_descs %llu\n",
	       (unsigned long long)st.rx_fill_ring_empty_descs);
	printf("tx_ring_empty_descs %llu\n",
	       (unsigned long long)st.tx_ring_empty_descs);
	len = sizeof(opts);
	if (getsockopt(a->fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		die("getsockopt(XDP_OPTIONS)", errno);
	printf("zerocopy %d\n", !!(opts.flags & XDP_OPTIONS_ZEROCOPY));
	if (timed_out)
		printf("timeout 1\n");
}

int main(int argc, char **argv)
{
	struct app a = {
		.frame_size = XSK_UMEM__DEFAULT_FRAME_SIZE,
		.batch = 64,
		.seconds = 10,
		.need_wakeup = true,
		.hash = 0xcbf29ce484222325ULL,
	};
	uint32_t bind_flags = 0, xdp_flags = 0;
	bool timed_out = false;
	double deadline;
	int opt, err;

	while ((opt = getopt(argc, argv, "i:q:rln:d:pczWSf:b:h")) != -1) {
		switch (opt) {
		case 'i': a.ifname = optarg; break;
		case 'q': a.queue = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': a.l2fwd = false; break;
		case 'l': a.l2fwd = true; break;
		case 'n': a.count = strtoull(optarg, NULL, 0); break;
		case 'd': a.seconds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'p': a.use_poll = true; break;
		case 'c': bind_flags |= XDP_COPY; break;
		case 'z': bind_flags |= XDP_ZEROCOPY; break;
		case 'W': a.need_wakeup = false; break;
		case 'S': xdp_flags |= XDP_FLAGS_SKB_MODE; break;
		case 'f': a.frame_size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b': a.batch = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!a.ifname || optind != argc || !a.batch || a.batch > MAX_BATCH)
		usage();
	if (a.need_wakeup)
		bind_flags |= XDP_USE_NEED_WAKEUP;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	setup(&a, bind_flags, xdp_flags);
	printf("ready\n");
	fflush(stdout);

	deadline = now() + a.seconds;
	while (!stop && !(a.count && a.rx_packets >= a.count)) {
		if (now() >= deadline) {
			timed_out = a.count != 0;
			break;
		}
		if (a.use_poll) {
			struct pollfd pfd = { .fd = a.fd, .events = POLLIN };
			int rc = poll(&pfd, 1, 100);

			if (rc < 0 && errno != EINTR)
				die("poll", errno);
			if (rc <= 0) {
				complete_tx(&a);
				continue;
			}
		}
		rx_batch(&a);
		complete_tx(&a);
	}
	/* l2fwd: everything received goes out before the totals. */
	while (a.outstanding && !stop && now() < deadline + 2) {
		complete_tx(&a);
		if (a.outstanding)
			usleep(100);
	}
	report(&a, timed_out);
	xsk_socket__delete(a.xsk);
	err = xsk_umem__delete(a.umem);
	if (err)
		die("xsk_umem__delete", -err);
	munmap(a.area, a.area_len);
	return timed_out ? 3 : 0;
}
