/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Example programs for uxdp-fwd --prog FILE.so:NAME, and what its tests
 * load. Build one like this (no libuxdp to link: uxdp-fwd provides the
 * helpers):
 *
 *	cc -O2 -shared -fPIC -o filter.so example_prog.c
 *	uxdp-fwd --prog ./filter.so:udp_only --prog-args dport=53 PORT PORT
 *
 * uxdp-fwd carries out a verdict as it is, except PASS, which means "let
 * it through": forwarded to the other port (or reflected on one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/xdp.h>

/* ---- udp_only: IPv4 UDP through (to one port with dport=N), the rest
 * dropped. */

struct udp_only {
	int dport;		/* -1: any */
};

static uint32_t udp_only_run(struct uxdp_buff *ctx, void *priv)
{
	const struct udp_only *u = priv;
	const unsigned char *p = ctx->data, *end = ctx->data_end;
	unsigned int ihl;

	/* Ethernet, IPv4 (0x0800), UDP (17): every read bounds-checked,
	 * as a verifier would insist. */
	if (p + 14 + 20 > end || p[12] != 0x08 || p[13] != 0x00)
		return UXDP_DROP;
	ihl = (p[14] & 0x0f) * 4u;
	if (ihl < 20 || p[14 + 9] != 17 || p + 14 + ihl + 8 > end)
		return UXDP_DROP;
	if (u->dport >= 0 &&
	    ((p[14 + ihl + 2] << 8) | p[14 + ihl + 3]) != u->dport)
		return UXDP_DROP;
	return UXDP_PASS;
}

/* args: "" or "dport=N" (0..65535); anything else is refused. */
static void *udp_only_init(const char *args)
{
	struct udp_only *u = calloc(1, sizeof(*u));
	char *end;
	long v;

	if (!u)
		return NULL;
	u->dport = -1;
	if (args && *args) {
		if (strncmp(args, "dport=", 6))
			goto bad;
		v = strtol(args + 6, &end, 10);
		if (end == args + 6 || *end || v < 0 || v > 65535)
			goto bad;
		u->dport = (int)v;
	}
	return u;
bad:
	free(u);
	errno = EINVAL;
	return NULL;
}

static void udp_only_fini(void *priv)
{
	free(priv);
}

UXDP_PROG_DEFINE(udp_only, udp_only_run, udp_only_init, udp_only_fini);

/* ---- grow: make every packet N bytes longer (args "by=N", default 4)
 * with the uxdp_adjust_tail() helper, zeroed, then let it through. */

static uint32_t grow_run(struct uxdp_buff *ctx, void *priv)
{
	int by = (int)(long)priv;

	/* The helper checks the room left; a packet it refuses is counted
	 * as aborted. */
	return uxdp_adjust_tail(ctx, by) ? UXDP_ABORTED : UXDP_PASS;
}

static void *grow_init(const char *args)
{
	long by = 4;
	char *end;

	if (args && *args) {
		if (strncmp(args, "by=", 3))
			goto bad;
		by = strtol(args + 3, &end, 10);
		if (end == args + 3 || *end || by < 1 || by > 1024)
			goto bad;
	}
	/* The number itself is the state: priv must not be NULL. */
	return (void *)by;
bad:
	errno = EINVAL;
	return NULL;
}

UXDP_PROG_DEFINE(grow, grow_run, grow_init, NULL);
