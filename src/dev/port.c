/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Devices by name: one parser for port strings ("afxdp:eth0@0-3,copy",
 * "pcap:in.pcap,loop=3", "veth:v0", "null:gen,count=1M") and one table of
 * the drivers that open them, used by every tool.
 *
 *	port   = kind ":" arg *( "," param )
 *	param  = key [ "=" value ]
 *
 * The arg may not contain ','; values may be empty; a key without '=' is a
 * flag (value ""). Everything is length-checked: a port string comes from a
 * command line, and is untrusted. What the arg and the parameters mean is
 * each driver's: its check op says whether it takes them (uxdp_port_check,
 * when a tool reads its command line), its open the same and then opens.
 */
#include "../internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <uxdp/driver.h>

#define MAX_DRIVERS	16

static pthread_mutex_t drivers_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct uxdp_port_driver *drivers[MAX_DRIVERS];
static uint32_t ndrivers;

/*
 * The in-tree drivers' openers, listed where the drivers are
 * (src/drivers/builtin.c): the dev layer knows the list, not the drivers.
 * Registered the first time anything asks.
 */
extern const struct uxdp_port_driver *const uxdp_builtin_ports[];

static void register_builtins(void)
{
	const struct uxdp_port_driver *const *d;

	for (d = uxdp_builtin_ports; *d && ndrivers < MAX_DRIVERS; d++)
		drivers[ndrivers++] = *d;
}

static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

UXDP_EXPORT __cold int uxdp_port_register(const struct uxdp_port_driver *drv)
{
	uint32_t i;
	int err = 0;

	uxdp_clear_err();
	if (!drv || !drv->kind || !*drv->kind || !drv->open)
		return uxdp_fail(EINVAL, "port: a driver needs a kind and open");
	if (strlen(drv->kind) >= UXDP_PORT_KIND_MAX)
		return uxdp_fail(EINVAL, "port: kind '%.16s...' too long",
				 drv->kind);
	pthread_once(&builtins_once, register_builtins);
	pthread_mutex_lock(&drivers_lock);
	for (i = 0; i < ndrivers; i++)
		if (!strcmp(drivers[i]->kind, drv->kind))
			err = uxdp_fail(EEXIST, "port: kind '%s' is taken",
					drv->kind);
	if (!err && ndrivers == MAX_DRIVERS)
		err = uxdp_fail(ENOSPC, "port: more than %d kinds", MAX_DRIVERS);
	if (!err)
		drivers[ndrivers++] = drv;
	pthread_mutex_unlock(&drivers_lock);
	return err;
}

static const struct uxdp_port_driver *find_driver(const char *kind)
{
	const struct uxdp_port_driver *d = NULL;
	uint32_t i;

	pthread_once(&builtins_once, register_builtins);
	pthread_mutex_lock(&drivers_lock);
	for (i = 0; i < ndrivers && !d; i++)
		if (!strcmp(drivers[i]->kind, kind))
			d = drivers[i];
	pthread_mutex_unlock(&drivers_lock);
	return d;
}

/* The kinds known, "a, b, c", for error messages and --help. */
UXDP_EXPORT void uxdp_port_kinds(char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	pthread_once(&builtins_once, register_builtins);
	if (!len)
		return;
	buf[0] = '\0';
	pthread_mutex_lock(&drivers_lock);
	for (i = 0; i < ndrivers && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				 drivers[i]->kind);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	pthread_mutex_unlock(&drivers_lock);
}

UXDP_EXPORT const char *uxdp_port_usage(const char *kind)
{
	const struct uxdp_port_driver *d = kind ? find_driver(kind) : NULL;

	return d ? d->usage : NULL;
}

/* ---- parsing ---------------------------------------------------------------- */

static int copy_field(char *dst, size_t cap, const char *src, size_t len,
		      const char *what, const char *str)
{
	if (len >= cap)
		return uxdp_fail(EINVAL, "port '%.64s': %s longer than %zu "
				 "characters", str, what, cap - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

UXDP_EXPORT int uxdp_port_parse(const char *str, struct uxdp_port *port)
{
	const char *colon, *p, *end;
	int err;

	uxdp_clear_err();
	if (!str || !port)
		return uxdp_fail(EINVAL, "port: NULL string");
	memset(port, 0, sizeof(*port));
	if (strnlen(str, UXDP_PORT_STR_MAX) == UXDP_PORT_STR_MAX)
		return uxdp_fail(EINVAL, "port: longer than %d characters",
				 UXDP_PORT_STR_MAX - 1);
	colon = strchr(str, ':');
	if (!colon || colon == str)
		return uxdp_fail(EINVAL, "port '%.64s': want KIND:ARG[,key=value"
				 "...], e.g. afxdp:eth0@0 or pcap:in.pcap", str);
	err = copy_field(port->kind, sizeof(port->kind), str,
			 (size_t)(colon - str), "the kind", str);
	if (err)
		return err;
	for (p = port->kind; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
		    *p != '_' && *p != '-')
			return uxdp_fail(EINVAL, "port '%.64s': kind '%s' has "
					 "'%c'", str, port->kind, *p);
	p = colon + 1;
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	err = copy_field(port->arg, sizeof(port->arg), p, (size_t)(end - p),
			 "the argument", str);
	if (err)
		return err;
	while (*end == ',') {
		const char *k = end + 1, *eq, *v;
		struct uxdp_port_param *pp;
		uint32_t i;

		end = strchr(k, ',');
		if (!end)
			end = k + strlen(k);
		if (end == k)
			return uxdp_fail(EINVAL, "port '%.64s': empty parameter",
					 str);
		if (port->nparams == UXDP_PORT_PARAMS_MAX)
			return uxdp_fail(EINVAL, "port '%.64s': more than %d "
					 "parameters", str,
					 UXDP_PORT_PARAMS_MAX);
		pp = &port->params[port->nparams];
		eq = memchr(k, '=', (size_t)(end - k));
		v = eq ? eq + 1 : end;
		err = copy_field(pp->key, sizeof(pp->key), k,
				 (size_t)((eq ? eq : end) - k), "a key", str);
		if (!err)
			err = copy_field(pp->value, sizeof(pp->value), v,
					 (size_t)(end - v), "a value", str);
		if (err)
			return err;
		if (!pp->key[0])
			return uxdp_fail(EINVAL, "port '%.64s': a parameter "
					 "without a key", str);
		for (i = 0; i < port->nparams; i++)
			if (!strcmp(port->params[i].key, pp->key))
				return uxdp_fail(EINVAL, "port '%.64s': '%s' "
						 "given twice", str, pp->key);
		port->nparams++;
	}
	return 0;
}

UXDP_EXPORT const char *uxdp_port_get(const struct uxdp_port *port,
				      const char *key)
{
	uint32_t i;

	for (i = 0; i < port->nparams; i++)
		if (!strcmp(port->params[i].key, key))
			return port->params[i].value;
	return NULL;
}

UXDP_EXPORT int uxdp_port_check_keys(const struct uxdp_port *port,
				     const char *const *keys)
{
	uint32_t i, k;

	for (i = 0; i < port->nparams; i++) {
		for (k = 0; keys && keys[k]; k++)
			if (!strcmp(port->params[i].key, keys[k]))
				break;
		if (!keys || !keys[k])
			return uxdp_fail(EINVAL, "port %s:%.48s: unknown "
					 "parameter '%s'", port->kind, port->arg,
					 port->params[i].key);
	}
	return 0;
}

/* A number with an optional k/M/G (x1000) suffix; all of it digits. */
static int parse_num(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'k': case 'K': mult = 1000ULL; p++; break;
	case 'm': case 'M': mult = 1000000ULL; p++; break;
	case 'g': case 'G': mult = 1000000000ULL; p++; break;
	}
	if (*p)
		return -EINVAL;
	if (v && mult > UINT64_MAX / v)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

UXDP_EXPORT int uxdp_port_get_u64(const struct uxdp_port *port,
				  const char *key, uint64_t def, uint64_t min,
				  uint64_t max, uint64_t *out)
{
	const char *v = uxdp_port_get(port, key);
	uint64_t n;

	if (!v) {
		*out = def;
		return 0;
	}
	if (parse_num(v, &n) || n < min || n > max)
		return uxdp_fail(EINVAL, "port %s:%.48s: %s=%.32s: want a "
				 "number in [%" PRIu64 ", %" PRIu64 "] (k/M/G "
				 "suffix ok)", port->kind, port->arg, key, v,
				 min, max);
	*out = n;
	return 0;
}

UXDP_EXPORT bool uxdp_port_get_flag(const struct uxdp_port *port,
				    const char *key)
{
	const char *v = uxdp_port_get(port, key);

	return v && (!*v || !strcmp(v, "1") || !strcmp(v, "yes") ||
		     !strcmp(v, "on"));
}

/* ---- opening ------------------------------------------------------------------ */

UXDP_EXPORT int uxdp_port_check_name(const struct uxdp_port *port,
				     const char *what, const char *name)
{
	if (!name || !*name)
		return uxdp_fail(EINVAL, "port %s:%.48s: no %s (a device name "
				 "of 1..%d characters)", port->kind, port->arg,
				 what, UXDP_IFNAMSIZ - 1);
	if (strlen(name) >= UXDP_IFNAMSIZ)
		return uxdp_fail(EINVAL, "port %s:%.48s: %s '%.48s' is longer "
				 "than a device name may be (%d characters)",
				 port->kind, port->arg, what, name,
				 UXDP_IFNAMSIZ - 1);
	return 0;
}

/* ---- checking and opening ------------------------------------------------------ */

/* Parse @str and find its kind's driver: what check and open share. */
static int port_lookup(const char *str, struct uxdp_port *port,
		       const struct uxdp_port_driver **drv)
{
	char kinds[128];
	int err;

	err = uxdp_port_parse(str, port);
	if (err)
		return err;
	*drv = find_driver(port->kind);
	if (!*drv) {
		uxdp_port_kinds(kinds, sizeof(kinds));
		return uxdp_fail(ENODEV, "port '%.64s': no driver of kind '%s' "
				 "(built: %s)", str, port->kind, kinds);
	}
	uxdp_clear_err();
	return 0;
}

UXDP_EXPORT __cold int uxdp_port_check(const char *str)
{
	const struct uxdp_port_driver *drv;
	struct uxdp_port port;
	int err;

	err = port_lookup(str, &port, &drv);
	if (err || !drv->check)
		return err;
	err = drv->check(&port);
	if (err > 0)
		err = -err;	/* a driver that returned errno's sign */
	if (err && !*uxdp_errmsg())
		uxdp_fail(-err, "port '%.64s': refused by the %s driver", str,
			  port.kind);
	return err;
}

UXDP_EXPORT __cold struct uxdp_dev *uxdp_dev_open(const char *str,
						  const char *name)
{
	const struct uxdp_port_driver *drv;
	struct uxdp_port port;
	struct uxdp_dev *dev;
	int err;

	err = port_lookup(str, &port, &drv);
	if (err) {
		errno = -err;
		return NULL;
	}
	dev = drv->open(&port, name);
	if (!dev && !errno)
		errno = EINVAL;
	return dev;
}
