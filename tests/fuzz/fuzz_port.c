/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz the port-string parser (uxdp_port_parse) and the parameter helpers
 * drivers use on what it returns: a port string comes from a command line.
 *
 * Input: the first byte picks how many of the remaining bytes form the
 * string (the rest, if any, feeds the helper calls); the string is cut at
 * its first NUL, as a C caller's would be, and may be longer than the
 * parser's limit.
 *
 * Checks: a parse succeeds or returns -EINVAL with a message; on success
 * the fields are NUL-terminated, within their limits, the kind is
 * [a-z0-9_-]+, keys are non-empty and unique, and printing the port back
 * and parsing that gives the same port. uxdp_port_get_u64 either fails
 * with -EINVAL or returns a value in the bounds asked for; check_keys with
 * the port's own keys passes.
 *
 * uxdp_port_check on every input: a string that does not parse is refused
 * with the parse's error and text, one of a kind without a driver with
 * -ENODEV; otherwise 0 with no message, or a negative errno with one. For
 * the in-process kinds (null, veth, nic) the string is then opened, and
 * the open agrees: what check refused fails with the same errno and text,
 * what it passed opens, or fails only for what the string cannot decide
 * (a loop= nic that is not there, a veth end too long to name its peer
 * after, memory). Those opens are limited to strings that cost little
 * (every number a parameter other than count, pps, len and mtu gives is
 * at most 256, queues at most 4), so that an input cannot ask for
 * gigabytes. pcap and afxdp
 * strings are checked only: opening would touch files and interfaces.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#include "fuzz.h"

static void check_port(const struct uxdp_port *p)
{
	uint32_t i, k;
	const char *c;

	FZ_CHECK(memchr(p->kind, 0, sizeof(p->kind)) && p->kind[0],
		 "kind not a non-empty string");
	for (c = p->kind; *c; c++)
		FZ_CHECK(islower((unsigned char)*c) ||
			 isdigit((unsigned char)*c) || *c == '_' || *c == '-',
			 "kind '%s' has '%c'", p->kind, *c);
	FZ_CHECK(memchr(p->arg, 0, sizeof(p->arg)), "arg not terminated");
	FZ_CHECK(!strchr(p->arg, ','), "arg '%s' holds a ','", p->arg);
	FZ_CHECK(p->nparams <= UXDP_PORT_PARAMS_MAX, "%u params", p->nparams);
	for (i = 0; i < p->nparams; i++) {
		const struct uxdp_port_param *pp = &p->params[i];

		FZ_CHECK(memchr(pp->key, 0, sizeof(pp->key)) && pp->key[0],
			 "param %u: key", i);
		FZ_CHECK(memchr(pp->value, 0, sizeof(pp->value)),
			 "param %u: value not terminated", i);
		FZ_CHECK(!strchr(pp->key, ',') && !strchr(pp->key, '='),
			 "key '%s'", pp->key);
		FZ_CHECK(!strchr(pp->value, ','), "value '%s'", pp->value);
		for (k = 0; k < i; k++)
			FZ_CHECK(strcmp(p->params[k].key, pp->key),
				 "key '%s' twice", pp->key);
		FZ_CHECK(uxdp_port_get(p, pp->key) == pp->value,
			 "get(%s) is not its own value", pp->key);
	}
}

/* Print @p back as a port string: the parse of it must give @p again. */
static void round_trip(const struct uxdp_port *p)
{
	char buf[UXDP_PORT_STR_MAX * 4];
	struct uxdp_port q;
	size_t off;
	uint32_t i;
	int rc;

	off = (size_t)snprintf(buf, sizeof(buf), "%s:%s", p->kind, p->arg);
	for (i = 0; i < p->nparams; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, ",%s=%s",
					p->params[i].key, p->params[i].value);
	rc = uxdp_port_parse(buf, &q);
	/* "key" and "key=" mean the same; the reprint may be longer than the
	 * limit only if the original was at it. */
	if (off >= UXDP_PORT_STR_MAX) {
		FZ_CHECK(rc == -EINVAL, "an over-long reprint parsed");
		return;
	}
	FZ_CHECK(rc == 0, "reprint '%s' refused: %s", buf, uxdp_errmsg());
	FZ_CHECK(!strcmp(q.kind, p->kind) && !strcmp(q.arg, p->arg) &&
		 q.nparams == p->nparams, "reprint '%s' differs", buf);
	for (i = 0; i < p->nparams; i++)
		FZ_CHECK(!strcmp(q.params[i].key, p->params[i].key) &&
			 !strcmp(q.params[i].value, p->params[i].value),
			 "reprint '%s': param %u differs", buf, i);
}

/* Whether opening @p (which the check passed) costs little: see the top. */
static bool cheap(const struct uxdp_port *p)
{
	static const char *const free_keys[] = {
		"count", "pps", "len", "mtu", NULL,
	};
	const char *const *k;
	uint32_t i;
	uint64_t v;

	for (i = 0; i < p->nparams; i++) {
		const char *val = p->params[i].value;

		for (k = free_keys; *k && strcmp(*k, p->params[i].key); k++)
			;
		if (*k || !isdigit((unsigned char)val[0]))
			continue;
		/* Queues multiply everything else. */
		if (uxdp_port_get_u64(p, p->params[i].key, 0, 0,
				      strcmp(p->params[i].key, "queues") ?
				      256 : 4, &v))
			return false;
	}
	return true;
}

/* The check of @str (which parsed, or not: @parse_rc, @parse_msg), and for
 * the in-process kinds the open it must agree with. */
static void check_vs_open(const char *str, int parse_rc,
			  const char *parse_msg, const struct uxdp_port *p)
{
	char msg[512];
	struct uxdp_dev *dev;
	int rc;

	rc = uxdp_port_check(str);
	snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
	if (parse_rc) {
		FZ_CHECK(rc == parse_rc && !strcmp(msg, parse_msg),
			 "check %d '%s', the parse said %d '%s'", rc, msg,
			 parse_rc, parse_msg);
		return;
	}
	if (!uxdp_port_usage(p->kind)) {
		FZ_CHECK(rc == -ENODEV, "check of kind '%s': %d", p->kind, rc);
		return;
	}
	FZ_CHECK(rc <= 0, "check returned %d", rc);
	FZ_CHECK(rc ? msg[0] != '\0' : msg[0] == '\0',
		 "check %d with message '%s'", rc, msg);
	if (strcmp(p->kind, "null") && strcmp(p->kind, "veth") &&
	    strcmp(p->kind, "nic"))
		return;
	if (!rc && !cheap(p))
		return;
	errno = 0;
	dev = uxdp_dev_open(str, NULL);
	if (rc) {
		FZ_CHECK(!dev, "opened '%s', which check refused: %s", str,
			 msg);
		FZ_CHECK(errno == -rc && !strcmp(uxdp_errmsg(), msg),
			 "open: %d '%s', check: %d '%s'", errno,
			 uxdp_errmsg(), -rc, msg);
		return;
	}
	if (dev) {
		if (!strcmp(p->kind, "veth"))
			uxdp_dev_destroy(uxdp_veth_peer(dev));
		uxdp_dev_destroy(dev);
		return;
	}
	FZ_CHECK(errno == ENOMEM ||
		 (errno == ENODEV && uxdp_port_get(p, "loop")) ||
		 (errno == EINVAL && strstr(uxdp_errmsg(),
					    "too long to make its peer")),
		 "check passed '%s', open failed: %d '%s'", str, errno,
		 uxdp_errmsg());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	size_t len = size ? (size_t)fz_u16(&f) % (UXDP_PORT_STR_MAX + 64) : 0;
	const char *keys[UXDP_PORT_PARAMS_MAX + 1];
	struct uxdp_port p;
	char *str;
	uint32_t i;
	int rc;

	if (len > f.n)
		len = f.n;
	str = fz_xmalloc(len + 1);
	memcpy(str, f.p, len);
	str[len] = '\0';
	f.p += len;
	f.n -= len;

	rc = uxdp_port_parse(str, &p);
	if (rc) {
		char msg[512];

		FZ_CHECK(rc == -EINVAL, "parse returned %d", rc);
		FZ_CHECK(uxdp_errmsg()[0], "no message for a refusal");
		snprintf(msg, sizeof(msg), "%s", uxdp_errmsg());
		check_vs_open(str, rc, msg, NULL);
		free(str);
		return 0;
	}
	check_vs_open(str, 0, NULL, &p);
	FZ_CHECK(strlen(str) < UXDP_PORT_STR_MAX, "an over-long string parsed");
	check_port(&p);
	round_trip(&p);

	for (i = 0; i < p.nparams; i++) {
		uint64_t lo = fz_u64(&f), hi = fz_u64(&f), def = fz_u64(&f), v;

		if (lo > hi) {
			uint64_t t = lo;

			lo = hi;
			hi = t;
		}
		rc = uxdp_port_get_u64(&p, p.params[i].key, def, lo, hi, &v);
		if (rc)
			FZ_CHECK(rc == -EINVAL && strstr(uxdp_errmsg(),
							 p.params[i].key),
				 "get_u64 %d: %s", rc, uxdp_errmsg());
		else
			FZ_CHECK(v >= lo && v <= hi, "%llu outside [%llu, %llu]",
				 (unsigned long long)v, (unsigned long long)lo,
				 (unsigned long long)hi);
		(void)uxdp_port_get_flag(&p, p.params[i].key);
		keys[i] = p.params[i].key;
	}
	keys[p.nparams] = NULL;
	FZ_CHECK(uxdp_port_check_keys(&p, keys) == 0, "own keys refused");
	if (p.nparams) {
		keys[p.nparams - 1] = NULL;
		FZ_CHECK(uxdp_port_check_keys(&p, keys) == -EINVAL,
			 "a missing key accepted");
	}
	free(str);
	return 0;
}
