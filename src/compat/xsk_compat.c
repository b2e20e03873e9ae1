/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libxdp source compatibility (include/uxdp/compat.h, and the header
 * applications include, include/uxdp/compat/xdp/xsk.h): libxdp's UMEM and
 * socket calls on uxdp sockets, the socket calls on their descriptors, and
 * what the kernel and libxdp do behind an AF_XDP application's back: the
 * XSKMAP program, polling the device, and (for tests) a feed of packets.
 *
 * State, all of it process-wide:
 *   devices   one struct compat_dev per device the layer serves: its poll
 *             group and its XSKMAP program; devices the layer opened from a
 *             port string (and a veth's peer that came with one) are listed
 *             in owned[] and destroyed with the last socket
 *   feeds     UXDP_COMPAT_FEED cross-connections, set up with the first
 *             socket, each sending once the sockets it feeds have fill
 *             entries (a detached starter thread looks), stopped with
 *             the last
 *   sockets   the descriptor table: which descriptors are compat sockets
 *
 * Locks: compat_lock (a mutex) serialises the control path (create,
 * delete, teardown). fd_lock (a rwlock) guards the descriptor table: the
 * socket calls hold it for reading while they use a socket, and a delete
 * takes it for writing to remove the socket, so no call still uses a
 * socket being destroyed. poll() drops it while it sleeps. Order:
 * compat_lock, then fd_lock. fd_lock prefers writers: a busy sendto loop
 * in one thread must not starve a delete in another.
 */
#define _GNU_SOURCE		/* PTHREAD_RWLOCK_WRITER_NONRECURSIVE_... */
#include "../internal.h"

#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <uxdp/compat.h>
#include <uxdp/dev.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>
#include <uxdp/veth.h>
#include <uxdp/xdp.h>
#include <uxdp/xsk.h>

/* Kernel values, for UAPI headers too old to have them. */
#ifndef SOL_XDP
#define SOL_XDP			283
#endif
#ifndef AF_XDP
#define AF_XDP			44
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL		46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif
#ifndef XDP_USE_SG
#define XDP_USE_SG		(1 << 4)
#endif

/* XSK_RING_{PROD,CONS}__DEFAULT_NUM_DESCS, XSK_UMEM__DEFAULT_FRAME_SIZE */
#define COMPAT_RING_DEFAULT	2048
#define COMPAT_FRAME_DEFAULT	4096
#define COMPAT_BIND_FLAGS	(XDP_SHARED_UMEM | XDP_COPY | XDP_ZEROCOPY | \
				 XDP_USE_NEED_WAKEUP | XDP_USE_SG)
#define COMPAT_MAX_OWNED	64
/* Bytes of the kernel's struct xdp_statistics: v1 (3 counters), all 6. */
#define STATS_V1_LEN		(3 * sizeof(uint64_t))
#define STATS_LEN		(6 * sizeof(uint64_t))

_Static_assert(XDP_SHARED_UMEM == UXDP_XSK_F_SHARED_UMEM &&
	       XDP_COPY == UXDP_XSK_F_COPY &&
	       XDP_ZEROCOPY == UXDP_XSK_F_ZEROCOPY &&
	       XDP_USE_NEED_WAKEUP == UXDP_XSK_F_NEED_WAKEUP &&
	       XDP_USE_SG == UXDP_XSK_F_SG,
	       "uxdp's bind flags are the kernel's");
_Static_assert(XDP_UMEM_UNALIGNED_CHUNK_FLAG == UXDP_UMEM_F_UNALIGNED,
	       "uxdp's UMEM flags are the kernel's");
_Static_assert(sizeof(struct xdp_desc) == sizeof(struct uxdp_desc),
	       "descriptors are the kernel's");

struct compat_dev {
	struct compat_dev *next;
	struct uxdp_dev *dev;
	struct uxdp_poll_group *group;	/* ours; NULL: polled by others */
	bool polled;			/* polling was seen to */
	/* The XSKMAP program: slot q holds the socket of queue q. */
	struct uxdp_map *xskmap;
	uint32_t nprog;			/* sockets in the map */
	uint32_t nsock;
	bool fed;			/* a feed's device */
};

struct compat_feed {
	struct compat_feed *next;
	struct compat_dev *cd;		/* the device fed */
	struct uxdp_dev *port;		/* the feeding port's device */
	struct uxdp_dev *port_peer;	/* a veth port's other end */
	struct uxdp_poll_group *group;	/* polls port */
	struct uxdp_map *to_dev;	/* slot 0: cd->dev */
	struct uxdp_map *to_port;	/* slot 0: port */
	bool started;			/* group polls port: it sends */
};

struct uxdp_compat_umem {
	struct uxdp_umem *umem;
	/* The application's ring structs from create: the first socket's. */
	void *fill_save;
	void *comp_save;
	uint32_t fill_size;
	uint32_t comp_size;
	uint32_t refcount;		/* sockets */
	/* What a later socket inherits from the first (the kernel's shared
	 * UMEM): its mode, as it ended up, and need_wakeup. */
	uint32_t inherit;
};

struct uxdp_compat_socket {
	struct uxdp_xsk *xsk;
	struct uxdp_compat_umem *cu;
	struct compat_dev *cd;
	uint32_t queue;
	int fd;
	bool in_map;			/* in its device's XSKMAP */
};

static pthread_mutex_t compat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct compat_dev *devs;
static struct compat_feed *feeds;
static struct uxdp_dev *owned[COMPAT_MAX_OWNED];
static uint32_t nowned;
static bool atexit_done;

#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
static pthread_rwlock_t fd_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
static pthread_rwlock_t fd_lock = PTHREAD_RWLOCK_INITIALIZER;
#endif
static struct uxdp_compat_socket **socks;	/* creation order */
/* nsocks is also read outside the lock, relaxed (have_socks). */
static uint32_t nsocks, socks_cap;

/* ---- configuration from the environment -------------------------------- */

/*
 * Find entry @name in a list "NAME=VALUE;NAME=VALUE..." and copy its value
 * into @buf. Returns @buf, or NULL if absent or too long.
 */
static const char *list_lookup(const char *list, const char *name, char *buf,
			       size_t len)
{
	size_t nl = strlen(name);
	const char *p = list, *end, *eq;

	while (p && *p) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && (size_t)(eq - p) == nl && !memcmp(p, name, nl) &&
		    (size_t)(end - eq) <= len) {
			memcpy(buf, eq + 1, (size_t)(end - eq - 1));
			buf[end - eq - 1] = '\0';
			return buf;
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

/*
 * The port string that makes device @name: UXDP_COMPAT_PORT_<name> (each
 * character of the name that cannot be in a shell variable's name replaced
 * by '_'), else the NAME=PORT entry of UXDP_COMPAT_PORTS.
 */
static const char *port_for(const char *name, char *buf, size_t len)
{
	char var[64];
	const char *v;
	size_t i, k;

	k = (size_t)snprintf(var, sizeof(var), "UXDP_COMPAT_PORT_");
	for (i = 0; name[i] && k + 1 < sizeof(var); i++, k++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_';

		var[k] = ok ? c : '_';
	}
	var[k] = '\0';
	v = getenv(var);
	if (v && *v && strlen(v) < len) {
		memcpy(buf, v, strlen(v) + 1);
		return buf;
	}
	v = getenv("UXDP_COMPAT_PORTS");
	return v ? list_lookup(v, name, buf, len) : NULL;
}

/* ---- devices ----------------------------------------------------------- */

static bool is_owned(const struct uxdp_dev *dev)
{
	uint32_t i;

	for (i = 0; i < nowned; i++)
		if (owned[i] == dev)
			return true;
	return false;
}

static struct compat_dev *dev_find(const struct uxdp_dev *dev)
{
	struct compat_dev *cd;

	for (cd = devs; cd; cd = cd->next)
		if (cd->dev == dev)
			return cd;
	return NULL;
}

/*
 * The device named @name: one that exists, or one opened from the port
 * string the environment names for it (then owned: destroyed at the end,
 * with a veth peer that came along). Returns it, or NULL with the error in
 * *@err and uxdp_errmsg().
 */
static struct compat_dev *dev_get(const char *name, int *err)
{
	struct uxdp_dev *dev = uxdp_dev_get_by_name(name), *peer;
	struct compat_dev *cd;
	char port[512];

	if (!dev) {
		if (strlen(name) >= UXDP_IFNAMSIZ) {
			*err = uxdp_fail(ENODEV, "no device %s (names are "
					 "shorter than %d)", name,
					 UXDP_IFNAMSIZ);
			return NULL;
		}
		if (!port_for(name, port, sizeof(port))) {
			*err = uxdp_fail(ENODEV, "no uxdp device %s: create "
					 "it, or name a port for it in "
					 "UXDP_COMPAT_PORT_%s or "
					 "UXDP_COMPAT_PORTS", name, name);
			return NULL;
		}
		if (nowned + 2 > COMPAT_MAX_OWNED) {
			*err = uxdp_fail(ENOSPC, "compat: more than %d devices "
					 "opened", COMPAT_MAX_OWNED);
			return NULL;
		}
		dev = uxdp_dev_open(port, name);
		if (!dev) {
			int e = errno ? errno : EINVAL;
			char why[256];

			snprintf(why, sizeof(why), "%s", uxdp_errmsg());
			*err = uxdp_fail(e, "opening \"%s\" for %s: %s", port,
					 name, why);
			return NULL;
		}
		owned[nowned++] = dev;
		/* A veth end comes with its peer: it was made here too (had
		 * it existed, making the pair would have failed). */
		peer = uxdp_veth_peer(dev);
		if (peer)
			owned[nowned++] = peer;
	}
	cd = dev_find(dev);
	if (cd)
		return cd;
	cd = calloc(1, sizeof(*cd));
	if (!cd) {
		*err = uxdp_fail(ENOMEM, "compat: out of memory");
		return NULL;
	}
	cd->dev = dev;
	cd->next = devs;
	devs = cd;
	return cd;
}

/*
 * See that @cd is polled: bring up a device the layer owns, then give it a
 * poll group of its own (the kernel's NAPI). A device whose queues are
 * polled already (-EBUSY: the application runs its own poller) is left to
 * that poller.
 */
static int dev_poll(struct compat_dev *cd)
{
	struct uxdp_poll_group *g;
	int err;

	if (cd->polled)
		return 0;
	if (is_owned(cd->dev) && !uxdp_dev_is_up(cd->dev)) {
		err = uxdp_dev_up(cd->dev);
		if (err)
			return uxdp_fail(-err, "compat: bringing %s up: %s",
					 uxdp_dev_name(cd->dev), uxdp_errmsg());
	}
	g = uxdp_poll_group_create(NULL);
	if (!g)
		return uxdp_fail(errno, "compat: poll group for %s: %s",
				 uxdp_dev_name(cd->dev), uxdp_errmsg());
	err = uxdp_poll_group_add(g, cd->dev, UXDP_ALL_QUEUES);
	if (err == -EBUSY) {
		uxdp_poll_group_destroy(g);
		cd->polled = true;
		return 0;
	}
	if (!err)
		err = uxdp_poll_group_start(g);
	if (err) {
		uxdp_poll_group_destroy(g);
		return uxdp_fail(-err, "compat: polling %s: %s",
				 uxdp_dev_name(cd->dev), uxdp_errmsg());
	}
	cd->group = g;
	cd->polled = true;
	return 0;
}

static void dev_unpoll(struct compat_dev *cd)
{
	uxdp_poll_group_destroy(cd->group);
	cd->group = NULL;
	cd->polled = false;
}

/* libxdp's default program: each packet to the socket of its RX queue,
 * the stack (UXDP_PASS) when that queue has none. */
static uint32_t xsk_def_prog(struct uxdp_buff *ctx, void *map)
{
	return uxdp_redirect_map(map, ctx->rxq->queue_index, UXDP_PASS);
}

static int attach(struct uxdp_dev *dev, const char *name, uxdp_prog_fn fn,
		  void *priv)
{
	struct uxdp_prog *p = uxdp_prog_create(name, fn, priv);
	int err;

	if (!p)
		return -errno;
	err = uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, p);
	uxdp_prog_put(p);
	return err;
}

/* Put @s in its device's XSKMAP, attaching the program with the first. */
static int prog_get(struct uxdp_compat_socket *s)
{
	struct compat_dev *cd = s->cd;
	int err;

	if (!cd->nprog) {
		cd->xskmap = uxdp_map_create(uxdp_dev_num_rxq(cd->dev));
		if (!cd->xskmap)
			return uxdp_fail(errno, "compat: XSKMAP for %s: %s",
					 uxdp_dev_name(cd->dev),
					 uxdp_errmsg());
		err = attach(cd->dev, "xsk_def_prog", xsk_def_prog,
			     cd->xskmap);
		if (err) {
			uxdp_map_destroy(cd->xskmap);
			cd->xskmap = NULL;
			return uxdp_fail(-err, "compat: program on %s: %s",
					 uxdp_dev_name(cd->dev),
					 uxdp_errmsg());
		}
	}
	cd->nprog++;
	uxdp_map_update(cd->xskmap, s->queue, uxdp_xsk_target(s->xsk));
	s->in_map = true;
	return 0;
}

/* Take @s out of the map; the last one out removes the program. */
static void prog_put(struct uxdp_compat_socket *s)
{
	struct compat_dev *cd = s->cd;

	if (!s->in_map)
		return;
	s->in_map = false;
	uxdp_map_update(cd->xskmap, s->queue, NULL);
	if (--cd->nprog)
		return;
	uxdp_dev_attach_prog(cd->dev, UXDP_ALL_QUEUES, NULL);
	uxdp_map_destroy(cd->xskmap);
	cd->xskmap = NULL;
}

/* ---- feeds ------------------------------------------------------------- */

static uint32_t feed_prog(struct uxdp_buff *ctx, void *map)
{
	(void)ctx;
	return uxdp_redirect_map(map, 0, UXDP_DROP);
}

/*
 * Stop a feed so that its capture is complete: stop polling the fed
 * device, then poll it here until its queues are empty (frames sent to it
 * before this reach the port), then destroy the port, which closes its
 * files.
 */
static void feed_stop(struct compat_feed *f)
{
	struct uxdp_dev *dev = f->cd->dev;
	uint32_t q, i;

	uxdp_poll_group_destroy(f->group);
	f->group = NULL;
	/* Only a device whose poller was ours: another poller may still be
	 * polling it (one poller per queue). */
	if (f->cd->group) {
		dev_unpoll(f->cd);
		for (q = 0; q < uxdp_dev_num_rxq(dev); q++)
			for (i = 0; i < 1024; i++)
				if (uxdp_dev_poll(dev, q,
						  UXDP_NAPI_BUDGET) <= 0)
					break;
	}
	uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, NULL);
	uxdp_dev_destroy(f->port);
	uxdp_dev_destroy(f->port_peer);
	uxdp_map_destroy(f->to_dev);
	uxdp_map_destroy(f->to_port);
	f->cd->fed = false;
	free(f);
}

/*
 * Whether the device a port string names (its argument, "veth:NAME,...")
 * exists: opening such a port would hand back that device (veth does),
 * which is not the feed's to destroy.
 */
static bool port_dev_exists(const char *port)
{
	const char *a = strchr(port, ':'), *end;
	char name[UXDP_IFNAMSIZ];

	if (!a++)
		return false;
	end = strchr(a, ',');
	if (!end)
		end = a + strlen(a);
	if (end == a || (size_t)(end - a) >= sizeof(name))
		return false;
	memcpy(name, a, (size_t)(end - a));
	name[end - a] = '\0';
	return uxdp_dev_get_by_name(name) != NULL;
}

/* Open device @other from the environment, if not there yet: 1 if @want
 * exists then, 0 if not, -1 (*@err set) if @other could not be opened. */
static int feed_dev_open(const char *other, const char *want, int *err)
{
	if (!uxdp_dev_get_by_name(other) && !dev_get(other, err))
		return -1;
	return uxdp_dev_get_by_name(want) != NULL;
}

/*
 * The device a feed names, which may be none the environment names itself:
 * the peer of a veth that UXDP_COMPAT_PORT_<name> or UXDP_COMPAT_PORTS
 * makes, whose socket the application has not made yet (feeds start with
 * the first socket). Then every device the environment names is opened, in
 * its order, until the fed one exists; they are the layer's, as if
 * xsk_socket__create had opened them. A name in UXDP_COMPAT_PORT_<name>
 * with characters that had to be replaced cannot be told from the
 * variable, and is left to UXDP_COMPAT_PORTS.
 */
static struct compat_dev *feed_dev_get(const char *name, int *err)
{
	extern char **environ;
	const char *pfx = "UXDP_COMPAT_PORT_", *p, *end, *eq;
	char port[512], other[UXDP_IFNAMSIZ];
	size_t pl = strlen(pfx), n;
	int found;
	char **v;

	if (uxdp_dev_get_by_name(name) || port_for(name, port, sizeof(port)))
		return dev_get(name, err);
	/* The per-name variables, then the list. */
	for (v = environ; v && *v; v++) {
		eq = strchr(*v, '=');
		if (strncmp(*v, pfx, pl) || !eq || eq == *v + pl)
			continue;
		n = (size_t)(eq - *v) - pl;
		if (n >= sizeof(other))
			continue;
		memcpy(other, *v + pl, n);
		other[n] = '\0';
		found = feed_dev_open(other, name, err);
		if (found)
			return found > 0 ? dev_get(name, err) : NULL;
	}
	for (p = getenv("UXDP_COMPAT_PORTS"); p && *p;
	     p = *end ? end + 1 : end) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq || eq == p || (size_t)(eq - p) >= sizeof(other))
			continue;
		memcpy(other, p, (size_t)(eq - p));
		other[eq - p] = '\0';
		found = feed_dev_open(other, name, err);
		if (found)
			return found > 0 ? dev_get(name, err) : NULL;
	}
	*err = uxdp_fail(ENODEV, "UXDP_COMPAT_FEED: no uxdp device %s to "
			 "feed, and no port the environment names makes it: "
			 "name one for it in UXDP_COMPAT_PORT_%s or "
			 "UXDP_COMPAT_PORTS, or the veth whose peer it is",
			 name, name);
	return NULL;
}

/*
 * Whether feed @f may start: the device its packets arrive on, the fed
 * veth's peer, has a socket, and each of its sockets that receives has had
 * fill entries posted. A socket that only transmits cannot lose anything.
 * Any other fed device sends its packets where no socket can be (a fed
 * device has none): nothing to wait for. Called with compat_lock held,
 * which socket creation and deletion hold too.
 */
static bool feed_ready(const struct compat_feed *f)
{
	struct uxdp_dev *to = uxdp_veth_peer(f->cd->dev);
	struct uxdp_ring *fq;
	uint32_t i, nsock = 0;

	if (!to)
		return true;
	for (i = 0; i < nsocks; i++) {
		if (socks[i]->cd->dev != to)
			continue;
		nsock++;
		if (!uxdp_xsk_rx_ring(socks[i]->xsk))
			continue;
		/* The producer index counts every entry ever posted. */
		fq = uxdp_xsk_fill_ring(socks[i]->xsk);
		if (!fq || !uxdp_load_acquire(fq->producer))
			return false;
	}
	return nsock > 0;
}

/* Start the feeds that may; returns how many still wait. compat_lock. */
static uint32_t feeds_check(void)
{
	struct compat_feed *f;
	uint32_t waiting = 0;
	int err;

	for (f = feeds; f; f = f->next) {
		if (f->started)
			continue;
		if (!feed_ready(f)) {
			waiting++;
			continue;
		}
		f->started = true;
		err = uxdp_poll_group_start(f->group);
		if (err)
			uxdp_pr(UXDP_WARN, "uxdp compat: UXDP_COMPAT_FEED: "
				"polling %s: %s\n", uxdp_dev_name(f->port),
				uxdp_errmsg());
	}
	return waiting;
}

/*
 * A feed waiting for its application is started by a thread of its own
 * that looks every millisecond: the application posts fill entries
 * without calling into the library. Detached; teardown ends it by moving
 * to a new generation, which it sees under compat_lock before it looks at
 * any feed (so nothing waits for it with the lock held).
 */
static uint64_t starter_gen;
static bool starter_running;

static void *feed_starter(void *arg)
{
	uint64_t gen = (uint64_t)(uintptr_t)arg;
	const struct timespec ms = { 0, 1000000 };

	pthread_mutex_lock(&compat_lock);
	while (gen == starter_gen && feeds_check()) {
		pthread_mutex_unlock(&compat_lock);
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&compat_lock);
	}
	if (gen == starter_gen)
		starter_running = false;
	pthread_mutex_unlock(&compat_lock);
	return NULL;
}

/* Start what may start, and the starter for the rest. compat_lock. */
static void feeds_kick(void)
{
	struct compat_feed *f;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (!feeds_check() || starter_running)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, feed_starter,
			     (void *)(uintptr_t)starter_gen);
	pthread_attr_destroy(&attr);
	if (err) {
		uxdp_pr(UXDP_WARN, "uxdp compat: UXDP_COMPAT_FEED: no thread "
			"to start the feeds (%s): starting them now\n",
			strerror(err));
		for (f = feeds; f; f = f->next)
			if (!f->started && !uxdp_poll_group_start(f->group))
				f->started = true;
		return;
	}
	starter_running = true;
}

/* One "DEV=PORT" of UXDP_COMPAT_FEED (@spec is cut at its '='). */
static int feed_start(char *spec)
{
	char *port = strchr(spec, '=');
	struct compat_feed *f;
	struct compat_dev *cd;
	int err = 0;

	if (!port || port == spec || !port[1])
		return uxdp_fail(EINVAL, "UXDP_COMPAT_FEED: \"%s\" is not "
				 "DEVICE=PORT", spec);
	*port++ = '\0';
	cd = feed_dev_get(spec, &err);
	if (!cd)
		return err;
	if (cd->nsock || cd->fed)
		return uxdp_fail(EBUSY, "UXDP_COMPAT_FEED: %s has sockets or "
				 "a feed already", spec);
	if (port_dev_exists(port))
		return uxdp_fail(EEXIST, "UXDP_COMPAT_FEED: the device of "
				 "\"%s\" exists already", port);
	f = calloc(1, sizeof(*f));
	if (!f)
		return uxdp_fail(ENOMEM, "compat: out of memory");
	f->cd = cd;
	f->port = uxdp_dev_open(port, NULL);
	if (!f->port) {
		err = uxdp_fail(errno ? errno : EINVAL, "UXDP_COMPAT_FEED: "
				"opening \"%s\": %s", port, uxdp_errmsg());
		free(f);
		return err;
	}
	f->port_peer = uxdp_veth_peer(f->port);
	f->to_dev = uxdp_map_create(1);
	f->to_port = uxdp_map_create(1);
	if (!f->to_dev || !f->to_port) {
		err = uxdp_fail(ENOMEM, "compat: out of memory");
		goto fail;
	}
	uxdp_map_update(f->to_dev, 0, uxdp_dev_target(cd->dev));
	uxdp_map_update(f->to_port, 0, uxdp_dev_target(f->port));
	err = attach(cd->dev, "compat_feed_out", feed_prog, f->to_port);
	if (!err)
		err = attach(f->port, "compat_feed_in", feed_prog, f->to_dev);
	if (err) {
		err = uxdp_fail(-err, "UXDP_COMPAT_FEED: programs: %s",
				uxdp_errmsg());
		goto fail;
	}
	cd->fed = true;
	/* The fed device first, so that nothing the port sends finds it
	 * down; then the port, which starts replaying. */
	err = dev_poll(cd);
	if (!err && !uxdp_dev_is_up(cd->dev))
		err = uxdp_dev_up(cd->dev);
	if (!err)
		err = uxdp_dev_up(f->port);
	if (err) {
		err = uxdp_fail(-err, "UXDP_COMPAT_FEED: %s", uxdp_errmsg());
		goto fail;
	}
	/* Polled, so sending, only once the application can receive
	 * (feeds_check): a wire does not start because a socket was made. */
	f->group = uxdp_poll_group_create(NULL);
	err = f->group ? uxdp_poll_group_add(f->group, f->port,
					     UXDP_ALL_QUEUES) : -errno;
	if (err) {
		err = uxdp_fail(-err, "UXDP_COMPAT_FEED: polling %s: %s", port,
				uxdp_errmsg());
		goto fail;
	}
	f->next = feeds;
	feeds = f;
	return 0;
fail:
	feed_stop(f);
	return err;
}

/* Every feed of UXDP_COMPAT_FEED ("DEV=PORT;DEV=PORT..."), or none. */
static int feeds_start(void)
{
	const char *env = getenv("UXDP_COMPAT_FEED");
	char *list, *p, *next;
	int err = 0;

	if (!env || !*env)
		return 0;
	list = strdup(env);
	if (!list)
		return uxdp_fail(ENOMEM, "compat: out of memory");
	for (p = list; p && *p && !err; p = next) {
		next = strchr(p, ';');
		if (next)
			*next++ = '\0';
		if (*p)
			err = feed_start(p);
	}
	free(list);
	return err;
}

/* ---- the end ----------------------------------------------------------- */

/*
 * The last socket is gone: stop the feeds (completing their captures), stop
 * polling, destroy what the layer opened. Called with compat_lock held.
 */
static void teardown(void)
{
	struct compat_dev *cd;
	uint32_t i;

	starter_gen++;			/* the starter, if any, ends */
	starter_running = false;
	while (feeds) {
		struct compat_feed *f = feeds;

		feeds = f->next;
		feed_stop(f);
	}
	while (devs) {
		cd = devs;
		devs = cd->next;
		dev_unpoll(cd);
		free(cd);
	}
	for (i = nowned; i-- > 0;)
		uxdp_dev_destroy(owned[i]);
	nowned = 0;
}

/*
 * exit() with sockets still open: stop the polling threads before the C
 * library and uxdp's own state go away under them, and complete the feeds'
 * captures. Sockets and UMEMs are left to the process's end. Skipped if
 * another thread is inside a control call (it would wait for it forever).
 */
static void compat_atexit(void)
{
	struct compat_dev *cd;

	if (pthread_mutex_trylock(&compat_lock))
		return;
	starter_gen++;
	starter_running = false;
	while (feeds) {
		struct compat_feed *f = feeds;

		feeds = f->next;
		feed_stop(f);
	}
	for (cd = devs; cd; cd = cd->next)
		if (cd->group)
			dev_unpoll(cd);
	pthread_mutex_unlock(&compat_lock);
}

/* ---- UMEM -------------------------------------------------------------- */

/*
 * Write the application's ring struct @dst (laid out as struct uxdp_ring)
 * from the library-side handle @lib, with libxdp's conventions: both
 * cached indices from the shared words, plus the ring size on a producer's
 * cached_cons. memcpy: @dst has the application's type, not ours.
 */
static void app_ring_write(void *dst, const struct uxdp_ring *lib, bool prod)
{
	struct uxdp_ring r = *lib;

	r.cached_prod = uxdp_load_acquire(r.producer);
	r.cached_cons = uxdp_load_acquire(r.consumer);
	if (prod)
		r.cached_cons += r.size;
	memcpy(dst, &r, sizeof(r));
}

UXDP_EXPORT __cold int
uxdp_compat_umem_create(struct uxdp_compat_umem **umem_out, void *area,
			void *fill, void *comp,
			const struct uxdp_compat_umem_opts *opts)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, uo);
	struct uxdp_compat_umem *cu;
	struct uxdp_umem *u;
	uint64_t size;
	int err;

	uxdp_clear_err();
	if (!umem_out || !area || !fill || !comp)
		return uxdp_fail(EFAULT, "xsk_umem__create: NULL argument");
	if (!UXDP_OPTS_VALID(opts, uxdp_compat_umem_opts))
		return -EINVAL;
	size = UXDP_OPTS_GET(opts, size, 0);
	uo.chunk_size = UXDP_OPTS_GET(opts, frame_size, COMPAT_FRAME_DEFAULT);
	uo.headroom = UXDP_OPTS_GET(opts, frame_headroom, 0);
	uo.flags = UXDP_OPTS_GET(opts, flags, 0);
	uo.tx_metadata_len = UXDP_OPTS_GET(opts, tx_metadata_len, 0);
	uo.fill_size = UXDP_OPTS_GET(opts, fill_size, COMPAT_RING_DEFAULT);
	uo.comp_size = UXDP_OPTS_GET(opts, comp_size, COMPAT_RING_DEFAULT);
	/* uxdp's own flags (huge pages) are not the kernel's: refused. */
	if (uo.flags & ~(UXDP_UMEM_F_UNALIGNED | UXDP_UMEM_F_TX_SW_CSUM |
			 UXDP_UMEM_F_TX_METADATA_LEN)) {
		err = uxdp_fail(EINVAL, "xsk_umem__create: unknown flags 0x%x",
				uo.flags);
		goto warn;
	}
	u = uxdp_umem_create(area, size, &uo);
	if (!u) {
		err = -errno;
		goto warn;
	}
	cu = calloc(1, sizeof(*cu));
	if (!cu) {
		uxdp_umem_destroy(u);
		return uxdp_fail(ENOMEM, "compat: out of memory");
	}
	cu->umem = u;
	cu->fill_size = uo.fill_size;
	cu->comp_size = uo.comp_size;
	cu->fill_save = fill;
	cu->comp_save = comp;
	app_ring_write(fill, uxdp_umem_fill_ring(u), true);
	app_ring_write(comp, uxdp_umem_comp_ring(u), false);
	*umem_out = cu;
	return 0;
warn:
	uxdp_pr(UXDP_WARN, "uxdp compat: xsk_umem__create: %s\n",
		uxdp_errmsg());
	return err;
}

UXDP_EXPORT __cold int uxdp_compat_umem_delete(struct uxdp_compat_umem *cu)
{
	int err = 0;

	uxdp_clear_err();
	if (!cu)
		return 0;
	pthread_mutex_lock(&compat_lock);
	if (cu->refcount)
		err = uxdp_fail(EBUSY, "xsk_umem__delete: %u sockets use the "
				"UMEM", cu->refcount);
	else
		err = uxdp_umem_destroy(cu->umem);
	pthread_mutex_unlock(&compat_lock);
	if (!err)
		free(cu);
	return err;
}

UXDP_EXPORT int uxdp_compat_umem_fd(const struct uxdp_compat_umem *cu)
{
	int fd = -ENOTCONN;
	uint32_t i;

	if (!cu)
		return -EINVAL;
	pthread_rwlock_rdlock(&fd_lock);
	for (i = 0; i < nsocks; i++)
		if (socks[i]->cu == cu) {
			fd = socks[i]->fd;
			break;
		}
	pthread_rwlock_unlock(&fd_lock);
	return fd;
}

/* ---- sockets ----------------------------------------------------------- */

static int socks_add(struct uxdp_compat_socket *s)
{
	struct uxdp_compat_socket **n;

	pthread_rwlock_wrlock(&fd_lock);
	if (nsocks == socks_cap) {
		uint32_t cap = socks_cap ? 2 * socks_cap : 16;

		n = realloc(socks, cap * sizeof(*n));
		if (!n) {
			pthread_rwlock_unlock(&fd_lock);
			return uxdp_fail(ENOMEM, "compat: out of memory");
		}
		socks = n;
		socks_cap = cap;
	}
	socks[nsocks] = s;
	__atomic_store_n(&nsocks, nsocks + 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&fd_lock);
	return 0;
}

/* Out of the table; when this returns no socket call uses @s. */
static void socks_del(struct uxdp_compat_socket *s)
{
	uint32_t i;

	pthread_rwlock_wrlock(&fd_lock);
	for (i = 0; i < nsocks; i++)
		if (socks[i] == s) {
			memmove(&socks[i], &socks[i + 1],
				(nsocks - i - 1) * sizeof(*socks));
			__atomic_store_n(&nsocks, nsocks - 1,
					 __ATOMIC_RELAXED);
			break;
		}
	pthread_rwlock_unlock(&fd_lock);
}

/* With fd_lock held. */
static struct uxdp_compat_socket *sock_find(int fd)
{
	uint32_t i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < nsocks; i++)
		if (socks[i]->fd == fd)
			return socks[i];
	return NULL;
}

/* Whether any compat socket exists: the other descriptors' fast path. A
 * socket made by another thread right now cannot be this call's. */
static inline bool have_socks(void)
{
	return __atomic_load_n(&nsocks, __ATOMIC_RELAXED) != 0;
}

static void sock_delete_locked(struct uxdp_compat_socket *s)
{
	socks_del(s);
	prog_put(s);
	uxdp_xsk_destroy(s->xsk);
	s->cu->refcount--;
	s->cd->nsock--;
	free(s);
	if (!nsocks)
		teardown();
}

UXDP_EXPORT __cold int
uxdp_compat_socket_create(struct uxdp_compat_socket **out, const char *ifname,
			  uint32_t queue, struct uxdp_compat_umem *cu,
			  void *rx, void *tx, void *fill, void *comp,
			  const struct uxdp_compat_socket_opts *opts)
{
	UXDP_DECLARE_OPTS(uxdp_xsk_opts, xo);
	struct uxdp_compat_socket *s = NULL;
	struct compat_dev *cd;
	uint32_t bind, lflags;
	bool first_ever;
	int err = 0;

	uxdp_clear_err();
	if (!out || !cu || !ifname || (!rx && !tx) || (!fill != !comp))
		return uxdp_fail(EFAULT, "xsk_socket__create: NULL argument "
				 "(or only one of fill and comp)");
	if (!UXDP_OPTS_VALID(opts, uxdp_compat_socket_opts))
		return -EINVAL;
	lflags = UXDP_OPTS_GET(opts, libxdp_flags, 0);
	bind = UXDP_OPTS_GET(opts, bind_flags, 0);
	pthread_mutex_lock(&compat_lock);
	if (lflags & ~UXDP_COMPAT_INHIBIT_PROG_LOAD) {
		err = uxdp_fail(EINVAL, "xsk_socket__create: unknown libxdp "
				"flags 0x%x", lflags);
		goto fail;
	}
	if (bind & ~COMPAT_BIND_FLAGS) {
		err = uxdp_fail(EINVAL, "xsk_socket__create: unknown bind "
				"flags 0x%x", bind);
		goto fail;
	}
	if (!fill) {
		fill = cu->fill_save;
		comp = cu->comp_save;
	}
	if (!fill) {
		err = uxdp_fail(EFAULT, "xsk_socket__create: the UMEM's fill "
				"and completion rings are its first socket's; "
				"give this one its own "
				"(xsk_socket__create_shared)");
		goto fail;
	}
	cd = dev_get(ifname, &err);
	if (!cd)
		goto fail;
	if (cd->fed) {
		err = uxdp_fail(EBUSY, "xsk_socket__create: %s is fed by "
				"UXDP_COMPAT_FEED", ifname);
		goto fail;
	}
	/* A later socket on the UMEM takes the first one's mode, as the
	 * kernel binds a shared UMEM's sockets, whatever it asked for. */
	xo.flags = cu->refcount ? cu->inherit : bind & ~XDP_SHARED_UMEM;
	if (!rx)
		xo.flags |= UXDP_XSK_F_NO_RX;
	if (!tx)
		xo.flags |= UXDP_XSK_F_NO_TX;
	xo.rx_size = UXDP_OPTS_GET(opts, rx_size, COMPAT_RING_DEFAULT);
	xo.tx_size = UXDP_OPTS_GET(opts, tx_size, COMPAT_RING_DEFAULT);
	xo.fill_size = cu->fill_size;
	xo.comp_size = cu->comp_size;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = uxdp_fail(ENOMEM, "compat: out of memory");
		goto fail;
	}
	s->cu = cu;
	s->cd = cd;
	s->queue = queue;
	s->xsk = uxdp_xsk_create(cu->umem, cd->dev, queue, &xo);
	if (!s->xsk) {
		err = -errno;
		goto fail;
	}
	s->fd = uxdp_xsk_fd(s->xsk);
	if (!cu->refcount) {
		bool zc = uxdp_xsk_options(s->xsk) & UXDP_XSK_OPT_ZEROCOPY;

		cu->inherit = (zc ? UXDP_XSK_F_ZEROCOPY : UXDP_XSK_F_COPY) |
			      (bind & XDP_USE_NEED_WAKEUP);
	}

	/* The application's rings. The fill and completion rings given to
	 * xsk_umem__create are the UMEM's, which the UMEM's first socket
	 * uses: that struct is left as the application has it (it may have
	 * filled already), or copied to the structs this call was given
	 * (libxdp's create_shared). Any other socket has rings of its own. */
	if (rx)
		app_ring_write(rx, uxdp_xsk_rx_ring(s->xsk), false);
	if (tx)
		app_ring_write(tx, uxdp_xsk_tx_ring(s->xsk), true);
	if (cu->fill_save &&
	    uxdp_xsk_fill_ring(s->xsk) == uxdp_umem_fill_ring(cu->umem)) {
		if (fill != cu->fill_save) {
			memcpy(fill, cu->fill_save, sizeof(struct uxdp_ring));
			memcpy(comp, cu->comp_save, sizeof(struct uxdp_ring));
		}
	} else {
		app_ring_write(fill, uxdp_xsk_fill_ring(s->xsk), true);
		app_ring_write(comp, uxdp_xsk_comp_ring(s->xsk), false);
	}

	if (!(lflags & UXDP_COMPAT_INHIBIT_PROG_LOAD)) {
		err = prog_get(s);
		if (err)
			goto fail_xsk;
	}
	err = dev_poll(cd);
	if (err)
		goto fail_prog;
	err = socks_add(s);
	if (err)
		goto fail_prog;
	first_ever = nsocks == 1;
	cu->refcount++;
	cd->nsock++;
	if (first_ever) {
		if (!atexit_done && !atexit(compat_atexit))
			atexit_done = true;
		err = feeds_start();
		if (err) {
			char why[256];

			/* Undo all, the reason kept. */
			snprintf(why, sizeof(why), "%s", uxdp_errmsg());
			sock_delete_locked(s);
			uxdp_fail(-err, "%s", why);
			s = NULL;
			goto fail;
		}
	}
	/* A feed waiting for this socket's fill entries may start now, or
	 * when they come. */
	if (feeds)
		feeds_kick();
	/* Handed out: a later socket needs rings of its own (libxdp). */
	cu->fill_save = NULL;
	cu->comp_save = NULL;
	pthread_mutex_unlock(&compat_lock);
	*out = s;
	uxdp_clear_err();
	return 0;

fail_prog:
	prog_put(s);
fail_xsk:
	{
		char why[256];

		snprintf(why, sizeof(why), "%s", uxdp_errmsg());
		uxdp_xsk_destroy(s->xsk);
		uxdp_fail(-err, "%s", why);
	}
fail:
	free(s);
	if (!nsocks) {
		/* Nothing else is left: a device opened for nothing goes
		 * again, and the reason stays. */
		char why[256];

		snprintf(why, sizeof(why), "%s", uxdp_errmsg());
		teardown();
		uxdp_fail(-err, "%s", why);
	}
	pthread_mutex_unlock(&compat_lock);
	uxdp_pr(UXDP_WARN, "uxdp compat: xsk_socket__create(%s, %u): %s\n",
		ifname ? ifname : "(null)", queue, uxdp_errmsg());
	return err;
}

UXDP_EXPORT __cold void uxdp_compat_socket_delete(struct uxdp_compat_socket *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&compat_lock);
	sock_delete_locked(s);
	pthread_mutex_unlock(&compat_lock);
}

UXDP_EXPORT int uxdp_compat_socket_fd(const struct uxdp_compat_socket *s)
{
	return s ? s->fd : -EINVAL;
}

UXDP_EXPORT struct uxdp_xsk *
uxdp_compat_socket_xsk(struct uxdp_compat_socket *s)
{
	return s ? s->xsk : NULL;
}

/* ---- interfaces ------------------------------------------------------- */

/*
 * A uxdp device is an interface the kernel does not know: answer for it,
 * opening the one the environment names (kept until the last socket goes,
 * as if xsk_socket__create had opened it), so that the index stays the
 * device's. Anything else is the kernel's.
 */
UXDP_EXPORT unsigned int uxdp_compat_if_nametoindex(const char *name)
{
	struct compat_dev *cd = NULL;
	struct uxdp_dev *dev;
	unsigned int idx = 0;
	char port[512];
	int err = 0;

	if (!name) {
		errno = EFAULT;
		return 0;
	}
	pthread_mutex_lock(&compat_lock);
	dev = uxdp_dev_get_by_name(name);
	if (!dev && strlen(name) < UXDP_IFNAMSIZ &&
	    port_for(name, port, sizeof(port))) {
		cd = dev_get(name, &err);
		if (!cd)
			uxdp_pr(UXDP_WARN, "uxdp compat: if_nametoindex(%s): "
				"%s\n", name, uxdp_errmsg());
		dev = cd ? cd->dev : NULL;
	}
	if (dev)
		idx = uxdp_dev_ifindex(dev);
	pthread_mutex_unlock(&compat_lock);
	if (idx)
		return idx;
	if (err) {
		errno = -err;
		return 0;
	}
	return if_nametoindex(name);
}

UXDP_EXPORT int uxdp_compat_setrlimit(int resource, const struct rlimit *rlim)
{
	static bool said;

	if (!setrlimit(resource, rlim))
		return 0;
	if (resource != RLIMIT_MEMLOCK || errno != EPERM)
		return -1;
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		uxdp_pr(UXDP_WARN, "uxdp compat: setrlimit(RLIMIT_MEMLOCK): "
			"not permitted here; uxdp locks no memory, carrying "
			"on\n");
	errno = 0;
	return 0;
}

/* ---- the socket calls -------------------------------------------------- */

/* The kernel's checks, in its order (net/xdp/xsk.c __xsk_sendmsg). */
static int sock_sendto(struct uxdp_compat_socket *s, int flags)
{
	if (!uxdp_dev_is_up(uxdp_xsk_dev(s->xsk)))
		return -ENETDOWN;
	if (!(flags & MSG_DONTWAIT))
		return -EOPNOTSUPP;	/* a blocking send: never supported */
	if (!uxdp_xsk_tx_ring(s->xsk))
		return -ENOBUFS;
	return uxdp_xsk_sendto(s->xsk);
}

static int sock_recvfrom(struct uxdp_compat_socket *s, int flags)
{
	if (!uxdp_dev_is_up(uxdp_xsk_dev(s->xsk)))
		return -ENETDOWN;
	if (!uxdp_xsk_rx_ring(s->xsk))
		return -ENOBUFS;
	if (!(flags & MSG_DONTWAIT))
		return -EOPNOTSUPP;
	return uxdp_xsk_recvfrom(s->xsk);
}

/*
 * @op on @fd's socket when @fd is one of ours (*@ours says whether), under
 * the table's read lock: 0, or -1 with errno as the socket call would.
 */
static ssize_t sock_call(int fd, int flags,
			 int (*op)(struct uxdp_compat_socket *, int),
			 bool *ours)
{
	struct uxdp_compat_socket *s;
	int err = 0;

	*ours = false;
	if (!have_socks())
		return 0;
	pthread_rwlock_rdlock(&fd_lock);
	s = sock_find(fd);
	if (s) {
		*ours = true;
		err = op(s, flags);
	}
	pthread_rwlock_unlock(&fd_lock);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

UXDP_EXPORT ssize_t uxdp_compat_sendto(int fd, const void *buf, size_t len,
				       int flags, const void *addr,
				       socklen_t addrlen)
{
	bool ours;
	ssize_t r = sock_call(fd, flags, sock_sendto, &ours);

	if (ours)
		return r;
	return sendto(fd, buf, len, flags, (const struct sockaddr *)addr,
		      addrlen);
}

UXDP_EXPORT ssize_t uxdp_compat_recvfrom(int fd, void *buf, size_t len,
					 int flags, void *addr,
					 socklen_t *addrlen)
{
	bool ours;
	ssize_t r = sock_call(fd, flags, sock_recvfrom, &ours);

	if (ours)
		return r;
	return recvfrom(fd, buf, len, flags, (struct sockaddr *)addr,
			addrlen);
}

/* Copy an int option out as the kernel's sock_getsockopt does: at most
 * *optlen bytes of it, *optlen set to what was written. */
static int put_int(void *optval, socklen_t *optlen, int v)
{
	socklen_t n = *optlen < sizeof(v) ? *optlen : sizeof(v);

	memcpy(optval, &v, n);
	*optlen = n;
	return 0;
}

static int sock_getsockopt(struct uxdp_compat_socket *s, int level,
			   int optname, void *optval, socklen_t *optlen)
{
	if (!optlen || (!optval && *optlen))
		return -EFAULT;
	if ((int)*optlen < 0)
		return -EINVAL;
	if (level == SOL_SOCKET) {
		switch (optname) {
		case SO_TYPE:
			return put_int(optval, optlen, SOCK_RAW);
		case SO_DOMAIN:
			return put_int(optval, optlen, AF_XDP);
		case SO_PROTOCOL:
		case SO_ERROR:
			return put_int(optval, optlen, 0);
		}
		return -ENOPROTOOPT;
	}
	if (level != SOL_XDP)
		return -ENOPROTOOPT;
	if (optname == XDP_STATISTICS) {
		struct uxdp_xsk_stats st;
		uint64_t v[6];
		size_t n;

		/* The kernel's rules: shorter than v1 (rx_dropped,
		 * rx_invalid_descs, tx_invalid_descs) is an error; up to
		 * all six fields v1, with ring-full drops folded into
		 * rx_dropped; the whole struct otherwise. */
		if (*optlen < STATS_V1_LEN)
			return -EINVAL;
		uxdp_xsk_stats(s->xsk, &st);
		v[0] = st.rx_dropped;
		v[1] = st.rx_invalid_descs;
		v[2] = st.tx_invalid_descs;
		v[3] = st.rx_ring_full;
		v[4] = st.rx_fill_ring_empty_descs;
		v[5] = st.tx_ring_empty_descs;
		if (*optlen < STATS_LEN) {
			v[0] += st.rx_ring_full;
			n = STATS_V1_LEN;
		} else {
			n = STATS_LEN;
		}
		memcpy(optval, v, n);
		*optlen = (socklen_t)n;
		return 0;
	}
	if (optname == XDP_OPTIONS) {
		uint32_t flags = 0;

		if (*optlen < sizeof(flags))
			return -EINVAL;
		if (uxdp_xsk_options(s->xsk) & UXDP_XSK_OPT_ZEROCOPY)
			flags |= XDP_OPTIONS_ZEROCOPY;
		memcpy(optval, &flags, sizeof(flags));
		*optlen = sizeof(flags);
		return 0;
	}
	/* XDP_MMAP_OFFSETS among them: the rings cannot be mmap'd. */
	return -ENOPROTOOPT;
}

static int sock_setsockopt(int level, int optname, socklen_t optlen)
{
	if (level == SOL_SOCKET) {
		switch (optname) {
		case SO_BUSY_POLL:
		case SO_PREFER_BUSY_POLL:
		case SO_BUSY_POLL_BUDGET:
			/* The device is polled by its own thread already. */
			return optlen < sizeof(int) ? -EINVAL : 0;
		}
		return -ENOPROTOOPT;
	}
	if (level != SOL_XDP)
		return -ENOPROTOOPT;
	switch (optname) {
	case XDP_RX_RING:
	case XDP_TX_RING:
	case XDP_UMEM_REG:
	case XDP_UMEM_FILL_RING:
	case XDP_UMEM_COMPLETION_RING:
		return -EBUSY;		/* the socket is bound */
	}
	return -ENOPROTOOPT;
}

UXDP_EXPORT int uxdp_compat_getsockopt(int fd, int level, int optname,
				       void *optval, socklen_t *optlen)
{
	struct uxdp_compat_socket *s;
	int err;

	if (have_socks()) {
		pthread_rwlock_rdlock(&fd_lock);
		s = sock_find(fd);
		if (s) {
			err = sock_getsockopt(s, level, optname, optval,
					      optlen);
			pthread_rwlock_unlock(&fd_lock);
			if (err) {
				errno = -err;
				return -1;
			}
			return 0;
		}
		pthread_rwlock_unlock(&fd_lock);
	}
	return getsockopt(fd, level, optname, optval, optlen);
}

UXDP_EXPORT int uxdp_compat_setsockopt(int fd, int level, int optname,
				       const void *optval, socklen_t optlen)
{
	bool mine = false;
	int err = 0;

	if (have_socks()) {
		pthread_rwlock_rdlock(&fd_lock);
		if (sock_find(fd)) {
			mine = true;
			err = optval || !optlen ?
			      sock_setsockopt(level, optname, optlen) : -EFAULT;
		}
		pthread_rwlock_unlock(&fd_lock);
	}
	if (!mine)
		return setsockopt(fd, level, optname, optval, optlen);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/* ---- poll -------------------------------------------------------------- */

/*
 * What the kernel's xsk_poll reports for @s, after what it does first:
 * transmit (copy mode: pending TX descriptors go out; zero-copy: the driver
 * is woken) and, for a zero-copy socket whose driver waits for fill
 * entries, a wake-up. *@tick is set when POLLOUT is wanted and not ready:
 * only a later kick can make room, so the caller must not sleep long.
 */
static short sock_ready(struct uxdp_compat_socket *s, short events,
			bool *tick)
{
	short want = 0, ev = 0;
	struct uxdp_ring *fq;
	int r;

	if (events & (POLLIN | POLLRDNORM))
		want |= POLLIN;
	if (events & (POLLOUT | POLLWRNORM))
		want |= POLLOUT;
	r = uxdp_xsk_poll(s->xsk, want, 0);
	if (uxdp_xsk_options(s->xsk) & UXDP_XSK_OPT_ZEROCOPY) {
		fq = uxdp_xsk_fill_ring(s->xsk);
		if (fq && uxdp_ring_needs_wakeup(fq))
			uxdp_xsk_recvfrom(s->xsk);
	}
	if (r < 0)
		return POLLERR;
	if (r & POLLIN)
		ev |= POLLIN | POLLRDNORM;
	if (r & POLLOUT)
		ev |= POLLOUT | POLLWRNORM;
	if ((want & POLLOUT) && !(r & POLLOUT))
		*tick = true;
	return ev & events;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One pass over @fds under fd_lock: which entries are sockets (@is_sock),
 * their readiness in revents (other entries' revents cleared), and @pf
 * made the array to sleep on (a socket's entry: its descriptor, POLLIN,
 * for the wake-up an arm asks for). @arm: arm every socket before looking,
 * so that entries published after the look still end the sleep
 * (uxdp_xsk_arm). Returns the sockets found ready, or -1 if no entry is a
 * socket.
 */
static int poll_pass(struct pollfd *fds, nfds_t n, struct pollfd *pf,
		     bool *is_sock, bool arm, bool *tick)
{
	struct uxdp_compat_socket *s;
	int ready = 0, found = 0;
	nfds_t i;

	pthread_rwlock_rdlock(&fd_lock);
	for (i = 0; i < n; i++) {
		pf[i] = fds[i];
		pf[i].revents = 0;
		fds[i].revents = 0;
		s = sock_find(fds[i].fd);
		is_sock[i] = s != NULL;
		if (!s)
			continue;
		found++;
		pf[i].events = POLLIN;
		if (arm)
			uxdp_xsk_arm(s->xsk);
		fds[i].revents = sock_ready(s, fds[i].events, tick);
		if (fds[i].revents)
			ready++;
	}
	pthread_rwlock_unlock(&fd_lock);
	return found ? ready : -1;
}

/*
 * After the sleep: the other entries' results; for the sockets, clear the
 * wake-ups that fired and look again (one deleted meanwhile is POLLNVAL,
 * as a closed descriptor would be).
 */
static void poll_collect(struct pollfd *fds, nfds_t n, struct pollfd *pf,
			 const bool *is_sock, bool *tick)
{
	struct uxdp_compat_socket *s;
	uint64_t v;
	nfds_t i;

	pthread_rwlock_rdlock(&fd_lock);
	for (i = 0; i < n; i++) {
		if (!is_sock[i]) {
			fds[i].revents = pf[i].revents;
			continue;
		}
		s = sock_find(fds[i].fd);
		if (!s) {
			fds[i].revents = POLLNVAL;
			continue;
		}
		if (pf[i].revents & POLLIN)
			if (read(s->fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: another poller took it. */
			}
		fds[i].revents = sock_ready(s, fds[i].events, tick);
	}
	pthread_rwlock_unlock(&fd_lock);
}

/*
 * The kernel's poll() over sockets and other descriptors alike: look at the
 * sockets (kicking them as the kernel does); if none is ready and the
 * caller will wait, arm them and look again; then sleep in the C library's
 * poll() on the other descriptors and the sockets' wake-up descriptors
 * together (not at all if a socket is ready: the others are only looked
 * at), and collect. A wake-up that finds nothing ready (another thread
 * took the entries) sleeps again until the deadline.
 */
UXDP_EXPORT int uxdp_compat_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct pollfd pf_stack[16], *pf = pf_stack;
	bool is_stack[16], *is_sock = is_stack;
	int64_t deadline = timeout > 0 ? now_ms() + timeout : 0, left;
	int ready, rc, wait, count;
	bool tick;
	nfds_t i;

	if (!have_socks() || !fds)
		return poll(fds, n, timeout);
	if (n > 16) {
		pf = calloc(n, sizeof(*pf));
		is_sock = calloc(n, sizeof(*is_sock));
		if (!pf || !is_sock) {
			free(pf);
			free(is_sock);
			errno = ENOMEM;
			return -1;
		}
	}
	for (;;) {
		tick = false;
		ready = poll_pass(fds, n, pf, is_sock, false, &tick);
		if (!ready && timeout) {
			tick = false;
			ready = poll_pass(fds, n, pf, is_sock, true, &tick);
		}
		if (ready < 0) {
			/* No socket among them (any more). */
			count = poll(fds, n, timeout);
			break;
		}
		left = deadline - now_ms();
		wait = ready || !timeout ? 0 : timeout < 0 ? -1 :
		       left > 0 ? (int)left : 0;
		/* Only a kick makes TX room: look again soon. */
		if (tick && (wait < 0 || wait > 1))
			wait = 1;
		rc = poll(pf, n, wait);
		if (rc < 0) {
			count = -1;
			break;
		}
		tick = false;
		poll_collect(fds, n, pf, is_sock, &tick);
		count = 0;
		for (i = 0; i < n; i++)
			if (fds[i].revents)
				count++;
		if (count || !timeout || (timeout > 0 && now_ms() >= deadline))
			break;
	}
	if (pf != pf_stack) {
		free(pf);
		free(is_sock);
	}
	return count;
}
