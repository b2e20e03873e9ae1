/* SPDX-License-Identifier: BSD-2-Clause */
/* The tools' link events (link.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "link.h"

int tool_link_open(void)
{
	struct sockaddr_nl sa;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_LINK;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int tool_link_drain(int fd)
{
	char buf[8192];
	int n = 0;

	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (len > 0) {
			n++;
			continue;
		}
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && errno == ENOBUFS) {
			/* Messages lost: something changed all the same. */
			n++;
			continue;
		}
		if (len < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		return n;
	}
}
