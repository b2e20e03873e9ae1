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
		FZ_CHECK(rc == -EINVAL, "parse returned %d", rc);
		FZ_CHECK(uxdp_errmsg()[0], "no message for a refusal");
		free(str);
		return 0;
	}
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
