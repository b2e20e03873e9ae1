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

static struct uxdp_dev *afx_port_open(const struct uxdp_port *port,
				      const char *name)
{
	static const char *const keys[] = {
		"copy", "zerocopy", "mode", "busy_poll", "rx_size", "tx_size",
		"frames", "chunk", "shared", "group_frames", NULL,
	};
	UXDP_DECLARE_OPTS(uxdp_afxdp_opts, o);
	char ifname[IF_NAMESIZE];
	const char *at, *mode, *end;
	uint64_t v[6];
	uint32_t q1 = 0, q2 = 0;
	size_t len;
	int err;

	err = uxdp_port_check_keys(port, keys);
	if (err)
		goto fail;
	at = strchr(port->arg, '@');
	len = at ? (size_t)(at - port->arg) : strlen(port->arg);
	if (!len || len >= sizeof(ifname)) {
		err = uxdp_set_error(EINVAL, "afxdp:%s: an interface name of "
				     "1..%d characters, then @Q or @Q1-Q2",
				     port->arg, IF_NAMESIZE - 1);
		goto fail;
	}
	memcpy(ifname, port->arg, len);
	ifname[len] = '\0';
	if (at) {
		err = afx_parse_u32(at + 1, &end, &q1);
		q2 = q1;
		if (!err && *end == '-')
			err = afx_parse_u32(end + 1, &end, &q2);
		if (err || *end || q2 < q1) {
			err = uxdp_set_error(EINVAL, "afxdp:%s: queues are "
					     "@Q or @Q1-Q2 with Q1 <= Q2",
					     port->arg);
			goto fail;
		}
	}
	o.ifname = ifname;
	o.queue = q1;
	o.queues = q2 - q1 + 1;
	if (uxdp_port_get_flag(port, "copy"))
		o.flags |= UXDP_AFXDP_F_COPY;
	if (uxdp_port_get_flag(port, "zerocopy"))
		o.flags |= UXDP_AFXDP_F_ZEROCOPY;
	mode = uxdp_port_get(port, "mode");
	if (mode) {
		if (!strcmp(mode, "native")) {
			o.flags |= UXDP_AFXDP_F_NATIVE;
		} else if (!strcmp(mode, "generic") || !strcmp(mode, "skb")) {
			o.flags |= UXDP_AFXDP_F_GENERIC;
		} else {
			err = uxdp_set_error(EINVAL, "afxdp:%s: mode=%s: "
					     "native or generic", port->arg,
					     mode);
			goto fail;
		}
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
		goto fail;
	o.busy_poll_budget = (uint32_t)v[0];
	o.rx_size = (uint32_t)v[1];
	o.tx_size = (uint32_t)v[2];
	o.frames = (uint32_t)v[3];
	o.chunk_size = (uint32_t)v[4];
	o.group_frames = (uint32_t)v[5];
	o.shared = uxdp_port_get(port, "shared");
	return uxdp_afxdp_create(name, &o);
fail:
	errno = -err;
	return NULL;
}

const struct uxdp_port_driver uxdp_afxdp_port_driver = {
	.kind = "afxdp",
	.usage = "afxdp:IFNAME[@Q|@Q1-Q2][,copy|,zerocopy]"
		 "[,mode=native|generic][,busy_poll=BUDGET][,rx_size=N]"
		 "[,tx_size=N][,frames=N][,chunk=2048|4096][,shared=GROUP]"
		 "[,group_frames=N]  queues of a Linux interface, through "
		 "AF_XDP sockets",
	.open = afx_port_open,
};
