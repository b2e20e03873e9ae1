/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: libbpf's and libxdp's log lines, namespaces, interface facts, and
 * the interface registry: one XSKMAP, miss counter map and program per
 * interface, shared by every port on it.
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

pthread_mutex_t afx_lock = PTHREAD_MUTEX_INITIALIZER;
struct afx_iface *afx_ifaces;

/* ---- libbpf's and libxdp's own log lines --------------------------------- */

static int afx_debug = -1;

static bool afx_debugging(void)
{
	if (afx_debug < 0) {
		const char *e = getenv("UXDP_AFXDP_DEBUG");

		afx_debug = e && *e && *e != '0';
	}
	return afx_debug;
}

static void afx_fwd(const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	uxdp_pr(UXDP_WARN, "afxdp: %s", line);
}

static int afx_bpf_print(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	(void)level;
	if (afx_debugging())
		afx_fwd(fmt, ap);
	return 0;
}

static int afx_xdp_print(enum libxdp_print_level level, const char *fmt,
			 va_list ap)
{
	(void)level;
	if (afx_debugging())
		afx_fwd(fmt, ap);
	return 0;
}


void afx_quiet_begin(struct afx_quiet *qt)
{
	qt->bpf = libbpf_set_print(afx_bpf_print);
	qt->xdp = libxdp_set_print(afx_xdp_print);
}

void afx_quiet_end(struct afx_quiet *qt)
{
	libbpf_set_print(qt->bpf);
	libxdp_set_print(qt->xdp);
}

/* ---- namespaces ---------------------------------------------------------- */

int afx_ns_self(struct afx_ns *ns)
{
	struct stat st;

	ns->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns->fd < 0)
		return -errno;
	if (fstat(ns->fd, &st)) {
		int err = -errno;

		close(ns->fd);
		ns->fd = -1;
		return err;
	}
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	return 0;
}

/*
 * Move the calling thread into @ns for a control call; *@saved is where
 * to go back to (-1: it was there already). Returns 0 or -errno.
 */
int afx_ns_enter(const struct afx_ns *ns, struct afx_ns *saved)
{
	int err = afx_ns_self(saved);

	if (err)
		return uxdp_set_error(-err, "afxdp: cannot open this thread's "
				      "network namespace: %s", strerror(-err));
	if (saved->dev == ns->dev && saved->ino == ns->ino) {
		close(saved->fd);
		saved->fd = -1;
		return 0;
	}
	if (setns(ns->fd, CLONE_NEWNET)) {
		err = errno;
		close(saved->fd);
		saved->fd = -1;
		return uxdp_set_error(err, "afxdp: cannot enter the device's "
				      "network namespace: %s", strerror(err));
	}
	return 0;
}

void afx_ns_leave(struct afx_ns *saved)
{
	if (saved->fd < 0)
		return;
	if (setns(saved->fd, CLONE_NEWNET))
		uxdp_pr(UXDP_WARN, "afxdp: cannot return to the thread's "
			"network namespace: %s\n", strerror(errno));
	close(saved->fd);
	saved->fd = -1;
}

/* ---- interface facts (ioctl, in the current namespace) ------------------- */


int afx_ifinfo(const char *ifname, struct afx_ifinfo *fi)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int s, err = 0;

	memset(fi, 0, sizeof(*fi));
	fi->ifindex = (int)if_nametoindex(ifname);
	if (!fi->ifindex)
		return -ENODEV;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		struct ethtool_value link = { .cmd = ETHTOOL_GLINK };
		struct ifreq lr = ifr;

		fi->up = ifr.ifr_flags & IFF_UP;
		/*
		 * Carrier: what the kernel's transmit checks
		 * (netif_carrier_ok), from ethtool's link (most drivers
		 * answer with the carrier; veth does). Not IFF_RUNNING:
		 * that is the operstate, which linkwatch updates up to a
		 * second late, so an interface just brought up looked down.
		 */
		lr.ifr_data = (void *)&link;
		fi->carrier = ioctl(s, SIOCETHTOOL, &lr) == 0 ? link.data != 0 :
			      (ifr.ifr_flags & IFF_RUNNING) != 0;
	}
	else
		err = -errno;
	if (!err && ioctl(s, SIOCGIFMTU, &ifr) == 0)
		fi->mtu = (uint32_t)ifr.ifr_mtu;
	else if (!err)
		err = -errno;
	/* Queue counts: what ethtool -l says. veth reports rx and tx
	 * counts, NICs mostly combined channels. Unknown stays 0. */
	ifr.ifr_data = (void *)&ch;
	if (!err && ioctl(s, SIOCETHTOOL, &ifr) == 0) {
		fi->rxq = ch.rx_count + ch.combined_count;
		fi->txq = ch.tx_count + ch.combined_count;
	}
	ifr.ifr_data = (void *)&di;
	if (!err && ioctl(s, SIOCETHTOOL, &ifr) == 0)
		snprintf(fi->driver, sizeof(fi->driver), "%s", di.driver);
	close(s);
	return err;
}

bool afx_bpffs_mounted(void)
{
	struct statfs sf;

	return !statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC;
}

/* ---- the interface registry: maps and the program ------------------------ */

static struct afx_iface *afx_iface_find(const struct afx_ns *ns, int ifindex)
{
	struct afx_iface *i;

	for (i = afx_ifaces; i; i = i->next)
		if (i->ns_dev == ns->dev && i->ns_ino == ns->ino &&
		    i->ifindex == ifindex)
			return i;
	return NULL;
}

static void afx_iface_free(struct afx_iface *ifc)
{
	if (ifc->xsks_fd >= 0)
		close(ifc->xsks_fd);
	if (ifc->miss_fd >= 0)
		close(ifc->miss_fd);
	free(ifc);
}

/* The interface's entry, made with its maps on first use (in its ns). */
int afx_iface_get(const struct afx_ns *ns, const char *ifname,
		  int ifindex, uint32_t rxq, struct afx_iface **out)
{
	struct afx_iface *ifc = afx_iface_find(ns, ifindex);
	int err;

	if (ifc) {
		ifc->refs++;
		*out = ifc;
		return 0;
	}
	ifc = calloc(1, sizeof(*ifc));
	if (!ifc)
		return uxdp_set_error(ENOMEM, "afxdp: out of memory");
	ifc->ns_dev = ns->dev;
	ifc->ns_ino = ns->ino;
	ifc->ifindex = ifindex;
	snprintf(ifc->ifname, sizeof(ifc->ifname), "%s", ifname);
	ifc->prog_fd = -1;
	ifc->link_fd = -1;
	ifc->map_entries = MAX(rxq, AFX_MIN_MAP_ENTRIES);
	ifc->ncpus = libbpf_num_possible_cpus();
	if (ifc->ncpus <= 0)
		ifc->ncpus = 1;
	ifc->xsks_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, AFX_MAP_XSKS,
				      sizeof(uint32_t), sizeof(uint32_t),
				      ifc->map_entries, NULL);
	ifc->miss_fd = -1;
	if (ifc->xsks_fd >= 0)
		ifc->miss_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY,
					      AFX_MAP_MISS, sizeof(uint32_t),
					      sizeof(uint64_t),
					      ifc->map_entries, NULL);
	if (ifc->xsks_fd < 0 || ifc->miss_fd < 0) {
		err = -errno;
		afx_iface_free(ifc);
		if (err == -EPERM || err == -EACCES)
			return uxdp_set_error(EPERM, "afxdp: not permitted to "
					      "create BPF maps: run as root "
					      "(CAP_BPF and CAP_NET_ADMIN)");
		return uxdp_set_error(-err, "afxdp: cannot create the XSKMAP: "
				      "%s", strerror(-err));
	}
	ifc->refs = 1;
	ifc->next = afx_ifaces;
	afx_ifaces = ifc;
	*out = ifc;
	return 0;
}

void afx_iface_put(struct afx_iface *ifc)
{
	struct afx_iface **pp;

	if (!ifc || --ifc->refs)
		return;
	for (pp = &afx_ifaces; *pp; pp = &(*pp)->next)
		if (*pp == ifc) {
			*pp = ifc->next;
			break;
		}
	afx_iface_free(ifc);
}

/* Packets passed for lack of a socket on queue @qid (all CPUs). */
uint64_t afx_iface_miss(const struct afx_iface *ifc, uint32_t qid)
{
	uint64_t vals[ifc->ncpus], sum = 0;
	int i;

	if (qid >= ifc->map_entries ||
	    bpf_map_lookup_elem(ifc->miss_fd, &qid, vals))
		return 0;
	for (i = 0; i < ifc->ncpus; i++)
		sum += vals[i];
	return sum;
}

/* A fresh object from the embedded bytes, its maps ours. */
static struct bpf_object *afx_obj_open(struct afx_iface *ifc)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "uxdp_afxdp");
	struct bpf_object *obj;
	struct bpf_map *m;
	int err;

	obj = bpf_object__open_mem(uxdp_afxdp_bpf_obj, uxdp_afxdp_bpf_obj_len,
				   &oo);
	if (!obj)
		return NULL;
	m = bpf_object__find_map_by_name(obj, AFX_MAP_XSKS);
	err = m ? bpf_map__reuse_fd(m, ifc->xsks_fd) : -ENOENT;
	m = bpf_object__find_map_by_name(obj, AFX_MAP_MISS);
	if (!err)
		err = m ? bpf_map__reuse_fd(m, ifc->miss_fd) : -ENOENT;
	if (err) {
		bpf_object__close(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static uint32_t afx_prog_id(int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * How to attach, for tests: UXDP_AFXDP_ATTACH=libxdp (keep libxdp's single
 * program too), =netlink (bpf_xdp_attach only); default: see
 * afx_iface_attach().
 */
enum { AFX_ATTACH_AUTO, AFX_ATTACH_FORCE_LIBXDP, AFX_ATTACH_FORCE_NETLINK };

static int afx_attach_policy(void)
{
	const char *e = getenv("UXDP_AFXDP_ATTACH");

	if (e && !strcmp(e, "libxdp"))
		return AFX_ATTACH_FORCE_LIBXDP;
	if (e && !strcmp(e, "netlink"))
		return AFX_ATTACH_FORCE_NETLINK;
	return AFX_ATTACH_AUTO;
}

static void afx_attach_undo(struct afx_iface *ifc)
{
	if (ifc->xprog)
		xdp_program__close(ifc->xprog);
	bpf_object__close(ifc->obj);
	ifc->xprog = NULL;
	ifc->obj = NULL;
	ifc->prog_fd = -1;
	ifc->prog_id = 0;
	ifc->attach = UXDP_AFXDP_ATTACH_NONE;
}

/*
 * libxdp: worth it for its multi-program dispatcher, which lets other
 * programs share the interface. When the dispatcher cannot be used
 * (no bpffs, or a kernel it fails on) libxdp attaches our program alone
 * over netlink; unless asked to keep that, it is undone here and a
 * bpf_link used instead, which the kernel detaches however we exit.
 */
static int afx_attach_libxdp(struct afx_iface *ifc, uint32_t xdp_flags,
			     bool keep_single)
{
	enum xdp_attach_mode mode = xdp_flags & XDP_FLAGS_SKB_MODE ?
				    XDP_MODE_SKB : XDP_MODE_NATIVE;
	LIBBPF_OPTS(bpf_xdp_query_opts, qo);
	struct xdp_program *xp;
	struct bpf_object *obj;
	int err;

	obj = afx_obj_open(ifc);
	if (!obj)
		return -errno;
	{
		DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .obj = obj,
				    .prog_name = AFX_PROG_NAME);

		xp = xdp_program__create(&xo);
	}
	err = libxdp_get_error(xp);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	err = xdp_program__attach(xp, ifc->ifindex, mode, 0);
	if (err) {
		xdp_program__close(xp);
		bpf_object__close(obj);
		return err;
	}
	ifc->obj = obj;
	ifc->xprog = xp;
	ifc->prog_fd = xdp_program__fd(xp);
	ifc->prog_id = xdp_program__id(xp);
	ifc->xdp_flags = xdp_flags;
	/* The interface runs a dispatcher that calls our program, or our
	 * program itself. */
	if (!bpf_xdp_query(ifc->ifindex, 0, &qo) && qo.prog_id &&
	    qo.prog_id != ifc->prog_id) {
		ifc->attach = UXDP_AFXDP_ATTACH_LIBXDP_DISPATCHER;
		return 0;
	}
	ifc->attach = UXDP_AFXDP_ATTACH_LIBXDP_SINGLE;
	if (keep_single)
		return 0;
	xdp_program__detach(xp, ifc->ifindex, mode, 0);
	afx_attach_undo(ifc);
	return -ENOTSUP;
}

/* libbpf: our program, loaded as plain XDP. */
static int afx_load_plain(struct afx_iface *ifc)
{
	struct bpf_program *p;
	int err;

	ifc->obj = afx_obj_open(ifc);
	if (!ifc->obj)
		return -errno;
	err = bpf_object__load(ifc->obj);
	p = bpf_object__find_program_by_name(ifc->obj, AFX_PROG_NAME);
	ifc->prog_fd = !err && p ? bpf_program__fd(p) : -1;
	if (ifc->prog_fd < 0) {
		afx_attach_undo(ifc);
		return err ? err : -ENOENT;
	}
	ifc->prog_id = afx_prog_id(ifc->prog_fd);
	return 0;
}

/*
 * A bpf_link: the attachment is a file descriptor, and the kernel
 * detaches the program when it closes, also when the process dies of
 * SIGINT or SIGKILL. Fails with EBUSY if a program is attached already.
 */
static int afx_attach_link(struct afx_iface *ifc, uint32_t xdp_flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = xdp_flags);
	int err = afx_load_plain(ifc);

	if (err)
		return err;
	ifc->link_fd = bpf_link_create(ifc->prog_fd, ifc->ifindex, BPF_XDP,
				       &lo);
	if (ifc->link_fd < 0) {
		err = ifc->link_fd;
		ifc->link_fd = -1;
		afx_attach_undo(ifc);
		return err;
	}
	ifc->xdp_flags = xdp_flags;
	ifc->attach = UXDP_AFXDP_ATTACH_LIBBPF_LINK;
	return 0;
}

/* Netlink (bpf_xdp_attach), only if the interface runs no program. */
static int afx_attach_netlink(struct afx_iface *ifc, uint32_t xdp_flags)
{
	int err = afx_load_plain(ifc);

	if (err)
		return err;
	err = bpf_xdp_attach(ifc->ifindex, ifc->prog_fd,
			     xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		afx_attach_undo(ifc);
		return err;
	}
	ifc->xdp_flags = xdp_flags;
	ifc->attach = UXDP_AFXDP_ATTACH_LIBBPF;
	return 0;
}

/* Whether program @id is uxdp's XSKMAP program (by its name, which the
 * kernel keeps to BPF_OBJ_NAME_LEN - 1 characters). */
static bool afx_prog_is_uxdps(uint32_t id)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool ours;

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	ours = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       !strncmp(info.name, AFX_PROG_NAME, sizeof(info.name) - 1);
	close(fd);
	return ours;
}

/*
 * Attach: native first (unless generic only), then generic (unless
 * native only). In each mode: libxdp's dispatcher when bpffs is there
 * for it, else a bpf_link, else netlink. Called in the interface's
 * namespace. Returns 0 or -errno with a message.
 */
int afx_iface_attach(struct afx_iface *ifc, uint32_t flags)
{
	static const uint32_t modes[2] = { XDP_FLAGS_DRV_MODE,
					   XDP_FLAGS_SKB_MODE };
	int policy = afx_attach_policy();
	bool use_libxdp = policy == AFX_ATTACH_FORCE_LIBXDP ||
			  (policy == AFX_ATTACH_AUTO && afx_bpffs_mounted());
	int err = 0, first_err = 0, m;

	if (ifc->attached)
		return 0;
	for (m = 0; m < 2; m++) {
		if ((m == 0 && (flags & UXDP_AFXDP_F_GENERIC)) ||
		    (m == 1 && (flags & UXDP_AFXDP_F_NATIVE)))
			continue;
		err = -ENOTSUP;
		if (use_libxdp)
			err = afx_attach_libxdp(ifc, modes[m], policy ==
						AFX_ATTACH_FORCE_LIBXDP);
		if (err && policy == AFX_ATTACH_AUTO)
			err = afx_attach_link(ifc, modes[m]);
		/* Kernels before 5.9 have no XDP links. */
		if (err && err != -EBUSY && err != -EEXIST && err != -EPERM &&
		    policy != AFX_ATTACH_FORCE_LIBXDP)
			err = afx_attach_netlink(ifc, modes[m]);
		if (!err)
			break;
		if (!first_err)
			first_err = err;
		/* Someone else's program: no mode will do. */
		if (err == -EBUSY || err == -EEXIST || err == -EPERM)
			break;
	}
	if (err) {
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);

		if (err == -EPERM || err == -EACCES)
			return uxdp_set_error(EPERM, "afxdp %s: not permitted "
					      "to load or attach XDP programs: "
					      "run as root (CAP_BPF, "
					      "CAP_NET_ADMIN)", ifc->ifname);
		if ((err == -EBUSY || err == -EEXIST) &&
		    !bpf_xdp_query(ifc->ifindex, 0, &qo) && qo.prog_id) {
			char who[320];

			if (!afx_prog_is_uxdps(qo.prog_id))
				return uxdp_set_error(EBUSY, "afxdp %s: the "
						      "interface runs XDP "
						      "program id %u, not ours "
						      "and not libxdp's: detach "
						      "it first (ip link set "
						      "dev %s xdp off)",
						      ifc->ifname, qo.prog_id,
						      ifc->ifname);
			/* uxdp's own program, of another process: the
			 * XSKMAP is that process's, so its queues are too. */
			afx_busy_holders(who, sizeof(who), true);
			return uxdp_set_error(EBUSY, "afxdp %s: another uxdp "
					      "process serves this interface "
					      "(its XDP program, id %u, is "
					      "attached)%s. One process "
					      "serves an interface: give it "
					      "every queue wanted (afxdp:%s@Q1-"
					      "Q2), or stop it first",
					      ifc->ifname, qo.prog_id, who,
					      ifc->ifname);
		}
		return uxdp_set_error(EOPNOTSUPP, "afxdp %s: cannot attach "
				      "the XDP program in %s mode: %s",
				      ifc->ifname,
				      flags & UXDP_AFXDP_F_NATIVE ? "native" :
				      flags & UXDP_AFXDP_F_GENERIC ? "generic" :
				      "native or generic",
				      strerror(-(first_err ? first_err : err)));
	}
	ifc->attached = true;
	return 0;
}

/* Detach our program, and only ours (in the interface's namespace). */
void afx_iface_detach(struct afx_iface *ifc)
{
	int err = 0;

	if (!ifc->attached)
		return;
	if (ifc->attach == UXDP_AFXDP_ATTACH_LIBBPF_LINK) {
		/* The link is the attachment: closing it detaches exactly
		 * what we attached. */
		close(ifc->link_fd);
		ifc->link_fd = -1;
	} else if (ifc->xprog) {
		enum xdp_attach_mode mode = XDP_MODE_NATIVE;

		if (ifc->xdp_flags & XDP_FLAGS_SKB_MODE)
			mode = XDP_MODE_SKB;
		err = xdp_program__detach(ifc->xprog, ifc->ifindex, mode, 0);
		if (err)
			uxdp_pr(UXDP_WARN, "afxdp %s: libxdp could not detach "
				"our program: %s\n", ifc->ifname,
				strerror(-err));
	} else {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao,
			    .old_prog_fd = ifc->prog_fd);
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);

		err = bpf_xdp_query(ifc->ifindex, (int)ifc->xdp_flags, &qo);
		/* REPLACE with old_prog_fd: the kernel detaches only if the
		 * program there is still ours. */
		if (!err && qo.prog_id == ifc->prog_id)
			err = bpf_xdp_detach(ifc->ifindex, ifc->xdp_flags |
					     XDP_FLAGS_REPLACE, &ao);
		else if (!err && qo.prog_id)
			uxdp_pr(UXDP_WARN, "afxdp %s: the interface runs "
				"program id %u, not ours (%u): left alone\n",
				ifc->ifname, qo.prog_id, ifc->prog_id);
		if (err && err != -ENODEV)
			uxdp_pr(UXDP_WARN, "afxdp %s: detaching our program: "
				"%s\n", ifc->ifname, strerror(-err));
	}
	afx_attach_undo(ifc);
	ifc->attached = false;
}
