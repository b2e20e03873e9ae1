/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp: The port string: afxdp:IFNAME[@Q|@Q1-Q2][,...].
 * How the driver works: afxdp_internal.h.
 */
#include "afxdp_internal.h"

/* ---- afxdp:IFNAME[@Q|@Q1-Q2][,...] --------------------------------------- */

static int afx_parse_u32(const char *s, const char **end, uint32_t *out)
{
	unsigned long v;
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || v > 0xffffff)
		return -EINVAL;
	*out = (uint32_t)v;
	*end = e;
	return 0;
}

/* A port string made into what uxdp_afxdp_create() takes. */
struct afx_port {
	char ifname[IF_NAMESIZE];	/* o.ifname points here */
	struct uxdp_afxdp_opts o;
};

static bool afx_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/*
 * @port into @ap, checked as far as the string decides: everything the
 * create checks of its options before it looks at the interface, said in
 * the string's terms. No side effects: check and open share it, so a
 * string the check passes fails at create only for what the system says
 * (no such interface, not permitted, a queue the interface lacks).
 */
static int afx_port_parse(const struct uxdp_port *port, struct afx_port *ap)
{
	static const char *const keys[] = {
		"copy", "zerocopy", "mode", "busy_poll", "rx_size", "tx_size",
		"frames", "chunk", "shared", "group_frames", NULL,
	};
	const char *at, *mode, *end, *shared;
	uint64_t v[6];
	uint32_t q1 = 0, q2 = 0;
	size_t len;
	int err;

	memset(ap, 0, sizeof(*ap));
	ap->o.sz = sizeof(ap->o);
	err = uxdp_port_check_keys(port, keys);
	if (err)
		return err;
	at = strchr(port->arg, '@');
	len = at ? (size_t)(at - port->arg) : strlen(port->arg);
	if (!len || len >= sizeof(ap->ifname))
		return uxdp_set_error(EINVAL, "afxdp:%s: an interface name of "
				      "1..%d characters, then @Q or @Q1-Q2",
				      port->arg, IF_NAMESIZE - 1);
	memcpy(ap->ifname, port->arg, len);
	ap->ifname[len] = '\0';
	if (at) {
		err = afx_parse_u32(at + 1, &end, &q1);
		q2 = q1;
		if (!err && *end == '-')
			err = afx_parse_u32(end + 1, &end, &q2);
		if (err || *end || q2 < q1)
			return uxdp_set_error(EINVAL, "afxdp:%s: queues are "
					      "@Q or @Q1-Q2 with Q1 <= Q2",
					      port->arg);
		if (q2 - q1 >= UXDP_AFXDP_MAX_QUEUES)
			return uxdp_set_error(EINVAL, "afxdp:%s: %u queues: "
					      "at most %d on one port",
					      port->arg, q2 - q1 + 1,
					      UXDP_AFXDP_MAX_QUEUES);
		if (q2 >= 0xffffff)
			return uxdp_set_error(EINVAL, "afxdp:%s: queue %u out "
					      "of range", port->arg, q2);
	}
	ap->o.ifname = ap->ifname;
	ap->o.queue = q1;
	ap->o.queues = q2 - q1 + 1;
	if (uxdp_port_get_flag(port, "copy"))
		ap->o.flags |= UXDP_AFXDP_F_COPY;
	if (uxdp_port_get_flag(port, "zerocopy"))
		ap->o.flags |= UXDP_AFXDP_F_ZEROCOPY;
	if ((ap->o.flags & UXDP_AFXDP_F_COPY) &&
	    (ap->o.flags & UXDP_AFXDP_F_ZEROCOPY))
		return uxdp_set_error(EINVAL, "afxdp:%s: copy and zerocopy "
				      "both asked for", port->arg);
	mode = uxdp_port_get(port, "mode");
	if (mode) {
		if (!strcmp(mode, "native"))
			ap->o.flags |= UXDP_AFXDP_F_NATIVE;
		else if (!strcmp(mode, "generic") || !strcmp(mode, "skb"))
			ap->o.flags |= UXDP_AFXDP_F_GENERIC;
		else
			return uxdp_set_error(EINVAL, "afxdp:%s: mode=%s: "
					      "native or generic", port->arg,
					      mode);
	}
	err = uxdp_port_get_u64(port, "busy_poll", 0, 1, 65535, &v[0]);
	if (!err)
		err = uxdp_port_get_u64(port, "rx_size", 0, 64, AFX_MAX_RING,
					&v[1]);
	if (!err)
		err = uxdp_port_get_u64(port, "tx_size", 0, 64, AFX_MAX_RING,
					&v[2]);
	if (!err)
		err = uxdp_port_get_u64(port, "frames", 0, 2 * AFX_FILL_BATCH,
					AFX_MAX_FRAMES, &v[3]);
	if (!err)
		err = uxdp_port_get_u64(port, "chunk", 0, 2048, 4096, &v[4]);
	if (!err)
		err = uxdp_port_get_u64(port, "group_frames", 0,
					2 * AFX_FILL_BATCH,
					(uint64_t)AFX_MAX_FRAMES *
					UXDP_AFXDP_MAX_QUEUES, &v[5]);
	if (err)
		return err;
	if (v[1] && !afx_pow2(v[1]))
		return uxdp_set_error(EINVAL, "afxdp:%s: rx_size=%s: a power "
				      "of two", port->arg,
				      uxdp_port_get(port, "rx_size"));
	if (v[2] && !afx_pow2(v[2]))
		return uxdp_set_error(EINVAL, "afxdp:%s: tx_size=%s: a power "
				      "of two", port->arg,
				      uxdp_port_get(port, "tx_size"));
	if (v[4] && v[4] != 2048 && v[4] != 4096)
		return uxdp_set_error(EINVAL, "afxdp:%s: chunk=%s: 2048 or "
				      "4096", port->arg,
				      uxdp_port_get(port, "chunk"));
	shared = uxdp_port_get(port, "shared");
	if (shared && (!*shared || strlen(shared) > UXDP_AFXDP_GROUP_NAME_MAX))
		return uxdp_set_error(EINVAL, "afxdp:%s: shared=: a group "
				      "name of 1..%d characters", port->arg,
				      UXDP_AFXDP_GROUP_NAME_MAX);
	ap->o.busy_poll_budget = (uint32_t)v[0];
	ap->o.rx_size = (uint32_t)v[1];
	ap->o.tx_size = (uint32_t)v[2];
	ap->o.frames = (uint32_t)v[3];
	ap->o.chunk_size = (uint32_t)v[4];
	ap->o.group_frames = (uint32_t)v[5];
	ap->o.shared = shared;
	return 0;
}

static int afx_port_check(const struct uxdp_port *port)
{
	struct afx_port ap;

	return afx_port_parse(port, &ap);
}

static struct uxdp_dev *afx_port_open(const struct uxdp_port *port,
				      const char *name)
{
	struct afx_port ap;
	int err;

	err = afx_port_parse(port, &ap);
	if (err) {
		errno = -err;
		return NULL;
	}
	return uxdp_afxdp_create(name, &ap.o);
}

const struct uxdp_port_driver uxdp_afxdp_port_driver = {
	.kind = "afxdp",
	.usage = "afxdp:IFNAME[@Q|@Q1-Q2][,copy|,zerocopy]"
		 "[,mode=native|generic][,busy_poll=BUDGET][,rx_size=N]"
		 "[,tx_size=N][,frames=N][,chunk=2048|4096][,shared=GROUP]"
		 "[,group_frames=N]  queues of a Linux interface, through "
		 "AF_XDP sockets",
	.open = afx_port_open,
	.check = afx_port_check,
};
