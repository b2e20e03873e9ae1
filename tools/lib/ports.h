/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every tool does with port strings, devices and programs: list the
 * kinds in --help, refuse a bad port at parse time (exit 2), open a port,
 * bring it up, poll it, attach a program, each with a message that says
 * why it failed.
 */
#ifndef UXDP_TOOLS_PORTS_H
#define UXDP_TOOLS_PORTS_H

#include <stdint.h>
#include <stdio.h>

#include <uxdp/driver.h>	/* uxdp_port_parse() */
#include <uxdp/uxdp.h>

#include "params.h"
#include "stats.h"

/* The "ports" part of --help: each kind built in, its syntax (cut before a
 * '[' at column 79) and what it is. */
void tports_help(FILE *f);

/* @spec parses, names a kind built in, and that kind's driver takes its
 * argument and parameters (uxdp_port_check); else tparams_fail() (exit 2),
 * the message starting with @what ("" or "--peer: "). */
void tports_check(const struct tparams *p, const char *what,
		  const char *spec);

/* The library's reason for the last failure, or errno's when it gave
 * none (@err: an errno, either sign). */
const char *tports_why(int err);

/*
 * Create program @name from @fn/@priv and attach it to queue @q of @dev
 * (UXDP_ALL_QUEUES: every queue); the device keeps its own reference.
 * Returns 0, or -1 after a "PROG: ..." message on stderr.
 */
int tports_attach(const char *prog, struct uxdp_dev *dev, uint32_t q,
		  const char *name, uxdp_prog_fn fn, void *priv);

/*
 * The same on every RX queue of @dev, each with a private state of its
 * own: @size bytes (a multiple of UXDP_CACHE_LINE, so no two pollers
 * share a line), zeroed, the queue's at *@out + q * @size. *@out is the
 * array (NULL if it could not be had), to free once @dev is destroyed,
 * whatever the result. Returns 0, or -1 after a message.
 */
int tports_attach_each(const char *prog, struct uxdp_dev *dev,
		       const char *name, uxdp_prog_fn fn, size_t size,
		       void **out);

/* uxdp_dev_open(@str, @name), or NULL after "PROG: @whatport '@str':
 * why" (@what: "" or "--peer: "). */
struct uxdp_dev *tports_open(const char *prog, const char *what,
			     const char *str, const char *name);

/* uxdp_dev_up(), or -1 after "PROG: DEV: up: why". NULL @dev: 0. */
int tports_up(const char *prog, struct uxdp_dev *dev);

/* A poll group taking @budget packets from a queue at a time, its thread
 * pinned to @cpu (-1: not pinned); NULL after a message. */
struct uxdp_poll_group *tports_group_new(const char *prog, uint32_t budget,
					 int cpu);

/* tdev_names_read(), with a message when the library's counters are not
 * the ones its headers name (a mismatched libuxdp). 0 or -1. */
int tports_names_read(const char *prog, struct uxdp_dev *dev,
		      struct tdev_names *names);

#endif /* UXDP_TOOLS_PORTS_H */
