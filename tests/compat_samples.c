/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's AF_XDP samples in miniature (xdp-project/bpf-examples:
 * AF_XDP-forwarding/xsk_fwd.c and AF_XDP-example/xdpsock.c, which cannot be
 * copied here): their includes, and the calls they make beyond <xdp/xsk.h>,
 * in their order. tests/test_compat.sh builds it against uxdp's
 * compatibility headers with -luxdp alone, as a user would build the
 * samples, and runs it on uxdp veth pairs fed from a pcap file.
 *
 *   compat_samples [-P] [-s MS] [-n COUNT] -i IF [-i IF]...
 *
 * Default (xsk_fwd's path): raise RLIMIT_MEMLOCK and look every interface
 * up, as both samples do; one UMEM, a socket per interface with rings of
 * its own (xsk_socket__create_shared) and libxdp's built-in program;
 * then, MS milliseconds later, each fill ring stocked (xsk_fwd fills after
 * creating the socket). Every packet received on port i is sent out of
 * port i + 1 (the last to the first), as xsk_fwd's ports_tx, until each
 * port has received COUNT; then the totals, one line per port, and the
 * program detached at exit as xsk_fwd does (xdp_multiprog__*).
 * -P: xdpsock's path for its own program (xdp_program__open_file ...), which
 * uxdp refuses: the message, exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xdp/xsk.h>
#include <xdp/libxdp.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#define MAX_PORTS	4
#define NFRAMES		4096
#define FRAME		XSK_UMEM__DEFAULT_FRAME_SIZE
#define RING		XSK_RING_PROD__DEFAULT_NUM_DESCS
#define BURST		32

struct port {
	const char *ifname;
	int ifindex;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx, cq;
	struct xsk_ring_prod tx, fq;
	unsigned long rx_pkts, tx_pkts, done;
	/* Frames of its own, given back through its fill ring. */
	uint64_t first;
};

static struct port ports[MAX_PORTS];
static int nports;
static void *area;
static struct xsk_umem *umem;
static struct xsk_ring_prod umem_fq;
static struct xsk_ring_cons umem_cq;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xdpsock's load_xdp_program() and enter_xsks_into_map(), to the first
 * refusal. */
static int own_program(int ifindex)
{
	struct xdp_program *prog;
	struct bpf_map *map;
	char msg[256];
	int err;

	prog = xdp_program__open_file("xdpsock_kern.o", NULL, NULL);
	err = libxdp_get_error(prog);
	if (err) {
		libxdp_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "ERROR: program loading failed: %s\n", msg);
		return 1;
	}
	err = xdp_program__set_xdp_frags_support(prog, false);
	if (!err)
		err = xdp_program__attach(prog, ifindex, XDP_MODE_NATIVE, 0);
	map = bpf_object__find_map_by_name(xdp_program__bpf_obj(prog), ".bss");
	if (!err && map && bpf_map__is_internal(map))
		err = bpf_map_update_elem(bpf_map__fd(map), &ifindex, &ifindex,
					  BPF_ANY);
	fprintf(stderr, "ERROR: the program: %s\n", strerror(-err));
	xdp_program__close(prog);
	return 1;
}

static void port_init(struct port *p, uint32_t nr)
{
	struct xsk_socket_config cfg = {
		.rx_size = RING,
		.tx_size = RING,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	int err;

	p->first = (uint64_t)nr * (NFRAMES / MAX_PORTS);
	err = xsk_socket__create_shared(&p->xsk, p->ifname, 0, umem, &p->rx,
					&p->tx, &p->fq, &p->cq, &cfg);
	if (err) {
		fprintf(stderr, "ERROR: xsk_socket__create(%s): %s\n",
			p->ifname, strerror(-err));
		exit(1);
	}
}

/* xsk_fwd's order: the fill ring after the socket. */
static void port_fill(struct port *p)
{
	uint32_t n = NFRAMES / MAX_PORTS / 2, idx = 0, i;

	if (xsk_ring_prod__reserve(&p->fq, n, &idx) != n) {
		fprintf(stderr, "ERROR: fill ring of %s\n", p->ifname);
		exit(1);
	}
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) =
			(p->first + i) * FRAME;
	xsk_ring_prod__submit(&p->fq, n);
}

/* Completions of @p's transmits go back to @p's fill ring (the frames
 * came from it through a receive on another port, and are returned to the
 * port that owns them: that one's fill ring). */
static void port_reap(struct port *p)
{
	uint32_t idx = 0, fidx = 0, n, i, k;

	n = xsk_ring_cons__peek(&p->cq, BURST, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&p->cq, idx + i);
		struct port *o = &ports[a / FRAME / (NFRAMES / MAX_PORTS)];

		for (k = 0; xsk_ring_prod__reserve(&o->fq, 1, &fidx) != 1; k++)
			if (k > 1000000)
				exit(3);
		*xsk_ring_prod__fill_addr(&o->fq, fidx) = a;
		xsk_ring_prod__submit(&o->fq, 1);
	}
	xsk_ring_cons__release(&p->cq, n);
	p->done += n;
}

/* One burst in on @p, out on @o. */
static void forward(struct port *p, struct port *o)
{
	uint32_t idx = 0, tidx = 0, n, i;

	n = xsk_ring_cons__peek(&p->rx, BURST, &idx);
	if (!n) {
		if (xsk_ring_prod__needs_wakeup(&p->fq)) {
			struct pollfd pfd = { xsk_socket__fd(p->xsk), POLLIN,
					       0 };

			poll(&pfd, 1, 0);
		}
		return;
	}
	while (xsk_ring_prod__reserve(&o->tx, n, &tidx) != n) {
		sendto(xsk_socket__fd(o->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
		port_reap(o);
	}
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx,
								  idx + i);
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&o->tx, tidx + i);

		if (d->options & XDP_PKT_CONTD) {
			fprintf(stderr, "ERROR: a multi-buffer packet\n");
			exit(1);
		}
		t->addr = d->addr;
		t->len = d->len;
		t->options = 0;
	}
	xsk_ring_cons__release(&p->rx, n);
	xsk_ring_prod__submit(&o->tx, n);
	p->rx_pkts += n;
	o->tx_pkts += n;
	if (xsk_ring_prod__needs_wakeup(&o->tx))
		sendto(xsk_socket__fd(o->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/* xsk_fwd's remove_xdp_program(). */
static void remove_program(void)
{
	struct xdp_multiprog *mp;
	int i, err;

	for (i = 0; i < nports; i++) {
		mp = xdp_multiprog__get_from_ifindex(
			if_nametoindex(ports[i].ifname));
		if (libxdp_get_error(mp) || !mp) {
			printf("no XDP program loaded on %s\n",
			       ports[i].ifname);
			continue;
		}
		err = xdp_multiprog__detach(mp);
		if (err)
			printf("cannot detach: %s\n", strerror(-err));
		xdp_multiprog__close(mp);
	}
}

int main(int argc, char **argv)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	struct xsk_umem_config ucfg = {
		.fill_size = RING,
		.comp_size = RING,
		.frame_size = FRAME,
	};
	unsigned long count = 0;
	bool own = false, left;
	uint64_t end;
	int i, c, sleep_ms = 0;

	while ((c = getopt(argc, argv, "i:n:s:P")) != -1) {
		switch (c) {
		case 'i':
			if (nports == MAX_PORTS)
				return 2;
			ports[nports++].ifname = optarg;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			sleep_ms = atoi(optarg);
			break;
		case 'P':
			own = true;
			break;
		default:
			return 2;
		}
	}
	if (!nports)
		return 2;
	/* Both samples: quit when refused. */
	if (setrlimit(RLIMIT_MEMLOCK, &r)) {
		fprintf(stderr, "ERROR: setrlimit(RLIMIT_MEMLOCK) \"%s\"\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < nports; i++) {
		ports[i].ifindex = (int)if_nametoindex(ports[i].ifname);
		if (!ports[i].ifindex) {
			fprintf(stderr, "ERROR: interface \"%s\" does not "
				"exist\n", ports[i].ifname);
			return 1;
		}
	}
	if (own)
		return own_program(ports[0].ifindex);

	area = mmap(NULL, (size_t)NFRAMES * FRAME, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED ||
	    xsk_umem__create(&umem, area, (uint64_t)NFRAMES * FRAME, &umem_fq,
			     &umem_cq, &ucfg)) {
		fprintf(stderr, "ERROR: UMEM\n");
		return 1;
	}
	for (i = 0; i < nports; i++)
		port_init(&ports[i], (uint32_t)i);
	if (sleep_ms)
		usleep((useconds_t)sleep_ms * 1000);
	for (i = 0; i < nports; i++)
		port_fill(&ports[i]);
	printf("ready\n");
	fflush(stdout);

	end = now_ms() + 20000;
	do {
		left = false;
		for (i = 0; i < nports; i++) {
			struct port *o = &ports[(i + 1) % nports];

			forward(&ports[i], o);
			port_reap(o);
			if (ports[i].rx_pkts < count ||
			    ports[i].done < ports[i].tx_pkts)
				left = true;
		}
		/* What a kick left on a TX ring goes with the next. */
		for (i = 0; i < nports; i++)
			if (ports[i].done < ports[i].tx_pkts)
				sendto(xsk_socket__fd(ports[i].xsk), NULL, 0,
				       MSG_DONTWAIT, NULL, 0);
	} while (left && now_ms() < end);

	for (i = 0; i < nports; i++)
		printf("port %d %s rx %lu tx %lu completed %lu\n", i,
		       ports[i].ifname, ports[i].rx_pkts, ports[i].tx_pkts,
		       ports[i].done);
	for (i = 0; i < nports; i++)
		xsk_socket__delete(ports[i].xsk);
	if (xsk_umem__delete(umem))
		return 1;
	munmap(area, (size_t)NFRAMES * FRAME);
	remove_program();
	return left ? 1 : 0;
}
