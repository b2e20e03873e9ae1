/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp: the Linux XDP / AF_XDP fast path as a userspace C library.
 * Umbrella header: includes every public layer header.
 */
#ifndef UXDP_UXDP_H
#define UXDP_UXDP_H

#include <uxdp/common.h>
#include <uxdp/ring.h>
#include <uxdp/umem.h>
#include <uxdp/buff.h>
#include <uxdp/pool.h>
#include <uxdp/xdp.h>
#include <uxdp/dev.h>
#include <uxdp/xsk.h>
#include <uxdp/veth.h>
#include <uxdp/null.h>
#include <uxdp/nic.h>
#include <uxdp/pcap.h>
#include <uxdp/afxdp.h>

#endif /* UXDP_UXDP_H */
