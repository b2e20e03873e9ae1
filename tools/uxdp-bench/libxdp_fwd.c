/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libxdp_fwd: the smallest forwarder between two interfaces on plain
 * libxdp, the yardstick of `uxdp-bench fwd` (it links neither uxdp nor
 * anything of the bench).
 *
 *	libxdp_fwd [--duration SECONDS] [--batch N] [--ring N] [--json]
 *		   IFACE_A IFACE_B
 *
 * Queue 0 of each interface gets an AF_XDP socket, both on one UMEM
 * (XDP_SHARED_UMEM: the second socket has a fill and a completion ring of
 * its own), so a packet received on one is sent on the other by its
 * address, never copied in userspace. One thread, busy polling: for each
 * direction, reap the egress socket's completions into a stack of free
 * frames, refill the ingress fill ring from that stack, move up to
 * --batch descriptors from the ingress RX ring to the egress TX ring,
 * kick the egress TX. need_wakeup is honoured on both rings it covers.
 *
 * What copy mode on veth taught (issue 8):
 *  - the fill ring can look full while the kernel is still consuming it:
 *    frames that do not fit stay in hand (the free stack), none is lost
 *    or leaked;
 *  - in copy mode the kernel transmits only inside sendto(), 32 frames a
 *    call, and always asks for a wakeup: kick every pass while the TX ring
 *    holds frames, not only after adding some, and again within the pass
 *    while frames remain (see kick());
 *  - take from RX only what the TX ring has room for: what stays in the
 *    RX ring is the kernel's to drop (counted in XDP_STATISTICS), never
 *    ours;
 *  - 8192-entry rings: a smaller RX ring overflows while the one thread
 *    is in sendto().
 *
 * At the end (SIGINT, SIGTERM or --duration) it prints its totals, per
 * interface: packets received and polls that found any (their ratio is
 * the mean RX batch), packets sent, kicks, and the kernel's
 * XDP_STATISTICS. Exit status 0, 1 on a set-up failure, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#define PROG		"libxdp_fwd"
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE
#define DEFAULT_BATCH	64
#define DEFAULT_RING	8192
#define MAX_BATCH	1024
#define KICK_ROUNDS	8	/* TX kicks a pass, at most */
#define BIND_RETRY_MS	2000	/* EBUSY re-binds, total (sock_create) */

struct port {
	const char *ifname;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx, comp;
	struct xsk_ring_prod tx, fill;
	int fd;

	uint64_t rx_packets;	/* descriptors taken from RX */
	uint64_t rx_polls;	/* RX peeks that found any */
	uint64_t tx_packets;	/* descriptors put on TX */
	uint64_t completed;
	uint64_t tx_kicks, tx_kick_errors;
	uint64_t fill_kicks;
	uint64_t fill_full;	/* refills that found the fill ring full */
	uint64_t tx_full;	/* passes that found no TX room */
};

struct fwd {
	uint32_t batch, ring, frames;
	uint64_t duration_ms;
	bool json;

	void *area;
	struct xsk_umem *umem;
	/* Frames in hand: neither on a ring nor with the kernel. */
	uint64_t *free_addr;
	uint32_t nfree;
	struct port p[2];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: " PROG " [--duration SECONDS] [--batch N] [--ring N] "
		"[--json] IFACE_A IFACE_B\n"
		"  forward between queue 0 of two interfaces, AF_XDP on one "
		"shared UMEM\n"
		"  --duration  stop after this long (default: at SIGINT or "
		"SIGTERM)\n"
		"  --batch     descriptors per RX peek, 1..%d (default %d)\n"
		"  --ring      entries of every ring, a power of two, "
		"64..65536 (default %d)\n"
		"  --json      totals as one JSON object\n",
		MAX_BATCH, DEFAULT_BATCH, DEFAULT_RING);
	exit(status);
}

static unsigned long parse_num(const char *opt, const char *s,
			       unsigned long lo, unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi || *s == '-') {
		fprintf(stderr, PROG ": %s: '%s' is not a number in %lu..%lu\n",
			opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static void parse_args(struct fwd *f, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "ring", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	f->batch = DEFAULT_BATCH;
	f->ring = DEFAULT_RING;
	while ((c = getopt_long(argc, argv, "d:b:r:jh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			f->duration_ms = 1000 * parse_num("--duration", optarg,
							  1, 86400);
			break;
		case 'b':
			f->batch = (uint32_t)parse_num("--batch", optarg, 1,
						       MAX_BATCH);
			break;
		case 'r':
			f->ring = (uint32_t)parse_num("--ring", optarg, 64,
						      65536);
			if (f->ring & (f->ring - 1)) {
				fprintf(stderr, PROG ": --ring: %u is not a "
					"power of two\n", f->ring);
				exit(2);
			}
			break;
		case 'j':
			f->json = true;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (argc - optind != 2)
		usage(2);
	f->p[0].ifname = argv[optind];
	f->p[1].ifname = argv[optind + 1];
	/*
	 * Each port: a fill ring and an RX ring the kernel may hold full,
	 * a TX and a completion ring the other direction may hold full.
	 */
	f->frames = 4 * f->ring;
}

/* ---- set-up -------------------------------------------------------------- */


/*
 * Socket @i on queue 0 of its interface: the first on the UMEM's own fill
 * and completion rings, the second on rings of its own. A queue that a
 * socket closed moments ago (by a forwarder that ran before this one)
 * stays held until the kernel's deferred release runs: EBUSY, retried
 * with backoff for up to BIND_RETRY_MS.
 */
static int sock_create(struct fwd *f, int i, const struct xsk_socket_config *sc)
{
	struct timespec t0, now, nap;
	long backoff_ms = 1, spent_ms;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		err = i ? xsk_socket__create_shared(&f->p[1].xsk,
						    f->p[1].ifname, 0, f->umem,
						    &f->p[1].rx, &f->p[1].tx,
						    &f->p[1].fill,
						    &f->p[1].comp, sc) :
			  xsk_socket__create(&f->p[0].xsk, f->p[0].ifname, 0,
					     f->umem, &f->p[0].rx,
					     &f->p[0].tx, sc);
		clock_gettime(CLOCK_MONOTONIC, &now);
		spent_ms = (now.tv_sec - t0.tv_sec) * 1000 +
			   (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (err != -EBUSY || spent_ms >= BIND_RETRY_MS)
			return err;
		nap.tv_sec = 0;
		nap.tv_nsec = backoff_ms * 1000000L;
		nanosleep(&nap, NULL);
		backoff_ms = backoff_ms * 2 > 64 ? 64 : backoff_ms * 2;
	}
}

static int setup(struct fwd *f)
{
	struct xsk_umem_config uc = {
		.fill_size = f->ring,
		.comp_size = f->ring,
		.frame_size = FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct xsk_socket_config sc = {
		.rx_size = f->ring,
		.tx_size = f->ring,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	size_t size = (size_t)f->frames * FRAME_SIZE;
	uint32_t i;
	int err;

	/* The UMEM is pinned, charged to RLIMIT_MEMLOCK. */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	f->area = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (f->area == MAP_FAILED) {
		f->area = NULL;
		fprintf(stderr, PROG ": mmap of %zu bytes: %s\n", size,
			strerror(errno));
		return -1;
	}
	f->free_addr = calloc(f->frames, sizeof(*f->free_addr));
	if (!f->free_addr) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	for (i = 0; i < f->frames; i++)
		f->free_addr[i] = (uint64_t)i * FRAME_SIZE;
	f->nfree = f->frames;

	/* The first socket uses the UMEM's fill and completion rings. */
	err = xsk_umem__create(&f->umem, f->area, size, &f->p[0].fill,
			       &f->p[0].comp, &uc);
	if (err) {
		fprintf(stderr, PROG ": UMEM: %s\n", strerror(-err));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		err = sock_create(f, i, &sc);
		if (err == -EBUSY) {
			fprintf(stderr, PROG ": socket on %s queue 0%s: still "
				"held by another AF_XDP socket after %d ms of "
				"retries\n", f->p[i].ifname,
				i ? " (shared UMEM)" : "", BIND_RETRY_MS);
			return -1;
		}
		if (err) {
			fprintf(stderr, PROG ": socket on %s queue 0%s: %s\n",
				f->p[i].ifname, i ? " (shared UMEM)" : "",
				strerror(-err));
			return -1;
		}
	}
	for (i = 0; i < 2; i++)
		f->p[i].fd = xsk_socket__fd(f->p[i].xsk);
	return 0;
}

static void teardown(struct fwd *f)
{
	int i;

	for (i = 0; i < 2; i++)
		if (f->p[i].xsk)
			xsk_socket__delete(f->p[i].xsk);
	if (f->umem)
		xsk_umem__delete(f->umem);
	if (f->area)
		munmap(f->area, (size_t)f->frames * FRAME_SIZE);
	free(f->free_addr);
}

/* ---- the loop ------------------------------------------------------------ */

/* The chunk an address (with its offset) lies in. */
static inline uint64_t chunk_of(uint64_t addr)
{
	return addr & ~(uint64_t)(FRAME_SIZE - 1);
}

/* Frames the kernel has sent on @p come back to the free stack. */
static inline void reap(struct fwd *f, struct port *p)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&p->comp, f->batch, &idx);
	if (!n)
		return;
	for (i = 0; i < n; i++)
		f->free_addr[f->nfree++] = chunk_of(*xsk_ring_cons__comp_addr(
							&p->comp, idx + i));
	xsk_ring_cons__release(&p->comp, n);
	p->completed += n;
}

/* Post what the free stack has, as far as @p's fill ring takes it. */
static inline void refill(struct fwd *f, struct port *p)
{
	uint32_t idx, n, i;

	if (!f->nfree)
		return;
	n = xsk_prod_nb_free(&p->fill, f->nfree);
	if (n > f->nfree)
		n = f->nfree;
	/* Looks full: the frames stay in hand for the next pass. */
	if (!n || xsk_ring_prod__reserve(&p->fill, n, &idx) != n) {
		p->fill_full++;
		return;
	}
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fill, idx + i) =
			f->free_addr[--f->nfree];
	xsk_ring_prod__submit(&p->fill, n);
	if (xsk_ring_prod__needs_wakeup(&p->fill)) {
		recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		p->fill_kicks++;
	}
}

/* @in's RX to @out's TX, no more than @out's TX ring has room for. */
static inline void forward(struct fwd *f, struct port *in, struct port *out)
{
	uint32_t room, n, i, rx_idx, tx_idx = 0;

	room = xsk_prod_nb_free(&out->tx, f->batch);
	if (!room) {
		out->tx_full++;
		return;
	}
	n = xsk_ring_cons__peek(&in->rx, room < f->batch ? room : f->batch,
				&rx_idx);
	if (!n)
		return;
	/* Cannot fail: the room was there and only this thread adds. */
	xsk_ring_prod__reserve(&out->tx, n, &tx_idx);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *rd = xsk_ring_cons__rx_desc(&in->rx,
								   rx_idx + i);
		struct xdp_desc *td = xsk_ring_prod__tx_desc(&out->tx,
							     tx_idx + i);

		td->addr = rd->addr;
		td->len = rd->len;
		td->options = 0;
	}
	xsk_ring_prod__submit(&out->tx, n);
	xsk_ring_cons__release(&in->rx, n);
	in->rx_packets += n;
	in->rx_polls++;
	out->tx_packets += n;
}

/*
 * While @p's TX ring holds frames, and the kernel asks for it. A copy-mode
 * kick sends at most 32 frames, inside the call: kick again while frames
 * remain, a few rounds at most. Kicking once a pass would let the TX ring
 * fill up (it drains 32 a pass), hold the RX batch to what that frees,
 * and have the kernel copy each frame out of the UMEM long after it came
 * in, out of cache.
 */
static inline void kick(struct fwd *f, struct port *p)
{
	int r;

	for (r = 0; r < KICK_ROUNDS; r++) {
		if (xsk_prod_nb_free(&p->tx, f->ring) == f->ring)
			return;
		if (!xsk_ring_prod__needs_wakeup(&p->tx))
			return;
		p->tx_kicks++;
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			continue;
		/* Busy (no skb, the device queue full): the next pass. */
		if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS &&
		    errno != ENETDOWN)
			p->tx_kick_errors++;
		return;
	}
}

static void run(struct fwd *f)
{
	uint64_t end = f->duration_ms ? now_ns() + f->duration_ms * 1000000ULL :
					0;
	uint32_t pass = 0;
	int i;

	for (i = 0; i < 2; i++)
		refill(f, &f->p[i]);
	while (!stop) {
		for (i = 0; i < 2; i++) {
			struct port *in = &f->p[i], *out = &f->p[i ^ 1];

			reap(f, out);
			refill(f, in);
			forward(f, in, out);
			kick(f, out);
		}
		/* The clock is read rarely: it is not free. */
		if (end && !(++pass & 1023) && now_ns() >= end)
			break;
	}
}

/* ---- output -------------------------------------------------------------- */

static void print_totals(struct fwd *f, double secs)
{
	uint64_t fwd = f->p[0].tx_packets + f->p[1].tx_packets;
	int i;

	if (f->json)
		printf("{\"type\":\"totals\",\"elapsed_s\":%.6f,"
		       "\"forwarded\":%llu,\"ports\":[", secs,
		       (unsigned long long)fwd);
	else
		printf(PROG ": %.3f s, forwarded %llu (%.0f pps)\n", secs,
		       (unsigned long long)fwd, secs > 0 ? fwd / secs : 0.0);
	for (i = 0; i < 2; i++) {
		struct port *p = &f->p[i];
		struct xdp_statistics st;
		socklen_t len = sizeof(st);
		double batch = p->rx_polls ?
			       (double)p->rx_packets / p->rx_polls : 0.0;

		memset(&st, 0, sizeof(st));
		if (getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
			memset(&st, 0, sizeof(st));
		if (!f->json) {
			printf("%s: rx %llu in %llu polls (%.1f batch), "
			       "tx %llu, tx kicks %llu, fill kicks %llu; "
			       "kernel: "
			       "rx_dropped %llu rx_ring_full %llu "
			       "fill_ring_empty %llu\n", p->ifname,
			       (unsigned long long)p->rx_packets,
			       (unsigned long long)p->rx_polls, batch,
			       (unsigned long long)p->tx_packets,
			       (unsigned long long)p->tx_kicks,
			       (unsigned long long)p->fill_kicks,
			       (unsigned long long)st.rx_dropped,
			       (unsigned long long)st.rx_ring_full,
			       (unsigned long long)st.rx_fill_ring_empty_descs);
			continue;
		}
		printf("%s{\"ifname\":\"%s\",\"rx_packets\":%llu,"
		       "\"rx_polls\":%llu,\"rx_batch\":%.2f,"
		       "\"tx_packets\":%llu,"
		       "\"completed\":%llu,\"tx_kicks\":%llu,"
		       "\"tx_kick_errors\":%llu,\"fill_kicks\":%llu,"
		       "\"fill_full\":%llu,\"tx_full\":%llu,"
		       "\"xdp_statistics\":{\"rx_dropped\":%llu,"
		       "\"rx_invalid_descs\":%llu,\"tx_invalid_descs\":%llu,"
		       "\"rx_ring_full\":%llu,"
		       "\"rx_fill_ring_empty_descs\":%llu,"
		       "\"tx_ring_empty_descs\":%llu}}", i ? "," : "",
		       p->ifname, (unsigned long long)p->rx_packets,
		       (unsigned long long)p->rx_polls, batch,
		       (unsigned long long)p->tx_packets,
		       (unsigned long long)p->completed,
		       (unsigned long long)p->tx_kicks,
		       (unsigned long long)p->tx_kick_errors,
		       (unsigned long long)p->fill_kicks,
		       (unsigned long long)p->fill_full,
		       (unsigned long long)p->tx_full,
		       (unsigned long long)st.rx_dropped,
		       (unsigned long long)st.rx_invalid_descs,
		       (unsigned long long)st.tx_invalid_descs,
		       (unsigned long long)st.rx_ring_full,
		       (unsigned long long)st.rx_fill_ring_empty_descs,
		       (unsigned long long)st.tx_ring_empty_descs);
	}
	if (f->json)
		printf("]}\n");
}

int main(int argc, char **argv)
{
	static struct fwd f;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t t0;
	int ret = 0;

	parse_args(&f, argc, argv);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (setup(&f)) {
		teardown(&f);
		return 1;
	}
	t0 = now_ns();
	run(&f);
	print_totals(&f, (double)(now_ns() - t0) / 1e9);
	teardown(&f);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": writing output: %s\n", strerror(errno));
		ret = 1;
	}
	return ret;
}
