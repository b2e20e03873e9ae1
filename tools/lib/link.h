/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Link events for the tools' main thread: a netlink socket on the kernel's
 * link group (RTMGRP_LINK), readable when any interface of this network
 * namespace changes (up, down, carrier, MTU, deleted, made). The tools
 * then ask each port for its link (uxdp_dev_link()); a message says only
 * that something changed, so nothing in it is parsed.
 */
#ifndef UXDP_TOOLS_LINK_H
#define UXDP_TOOLS_LINK_H

/* A non-blocking netlink socket joined to RTMGRP_LINK, or -errno. */
int tool_link_open(void);

/* Read everything waiting on @fd. Returns how many messages (0: none),
 * or -errno; ENOBUFS (the kernel dropped some: something changed) counts
 * as one. */
int tool_link_drain(int fd);

#endif /* UXDP_TOOLS_LINK_H */
