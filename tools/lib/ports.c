/* SPDX-License-Identifier: BSD-2-Clause */
/* Port strings and programs, the tools' way (ports.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ports.h"

/* A port syntax, cut before a '[' where it would pass column 79. */
static void put_syntax(FILE *f, const char *s, size_t len)
{
	size_t col = 2, i = 0;

	fprintf(f, "  ");
	while (i < len) {
		size_t n = 1;

		while (i + n < len && s[i + n] != '[')
			n++;
		if (col > 2 && col + n > 79) {
			fprintf(f, "\n    ");
			col = 4;
		}
		fwrite(s + i, 1, n, f);
		col += n;
		i += n;
	}
	fputc('\n', f);
}

void tports_help(FILE *f)
{
	char kinds[256], *k, *save = NULL;

	fprintf(f, "ports (KIND:ARG[,key[=value]...]), the kinds built in:\n");
	uxdp_port_kinds(kinds, sizeof(kinds));
	for (k = strtok_r(kinds, ", ", &save); k;
	     k = strtok_r(NULL, ", ", &save)) {
		const char *u = uxdp_port_usage(k), *gap;

		if (!u)
			u = k;
		/* "syntax  what it is": the syntax on lines of its own. */
		gap = strstr(u, "  ");
		put_syntax(f, u, gap ? (size_t)(gap - u) : strlen(u));
		if (gap) {
			fprintf(f, "%6s", "");
			tparams_wrap(f, 6, 6, gap);
		}
	}
}

void tports_check(const struct tparams *p, const char *what,
		  const char *spec)
{
	struct uxdp_port parsed;
	char kinds[256];

	if (uxdp_port_parse(spec, &parsed))
		tparams_fail(p, "%s%s", what, uxdp_errmsg());
	if (!uxdp_port_usage(parsed.kind)) {
		uxdp_port_kinds(kinds, sizeof(kinds));
		tparams_fail(p, "%sport '%s': unknown kind '%s' (built in: "
			     "%s)", what, spec, parsed.kind, kinds);
	}
	/* The driver's own syntax: refused here, in the words the open
	 * would have used, rather than at set-up (exit 1). */
	if (uxdp_port_check(spec))
		tparams_fail(p, "%sport '%s': %s", what, spec, uxdp_errmsg());
}

const char *tports_why(int err)
{
	return *uxdp_errmsg() ? uxdp_errmsg() : strerror(err < 0 ? -err : err);
}

int tports_attach(const char *prog, struct uxdp_dev *dev, uint32_t q,
		  const char *name, uxdp_prog_fn fn, void *priv)
{
	struct uxdp_prog *p = uxdp_prog_create(name, fn, priv);
	int err;

	if (!p) {
		tmsg(prog, "program %s: %s", name, tports_why(errno));
		return -1;
	}
	err = uxdp_dev_attach_prog(dev, q, p);
	/* The device holds its own reference. */
	uxdp_prog_put(p);
	if (err) {
		tmsg(prog, "%s: attaching %s: %s", uxdp_dev_name(dev), name,
		    tports_why(err));
		return -1;
	}
	return 0;
}

int tports_attach_each(const char *prog, struct uxdp_dev *dev,
		       const char *name, uxdp_prog_fn fn, size_t size,
		       void **out)
{
	uint32_t q, n = uxdp_dev_num_rxq(dev);
	char *priv;

	/* calloc() would not keep the cache-line alignment. */
	if (size % UXDP_CACHE_LINE || posix_memalign(out, UXDP_CACHE_LINE,
						     n * size)) {
		*out = NULL;
		tmsg(prog, "out of memory");
		return -1;
	}
	priv = *out;
	memset(priv, 0, n * size);
	for (q = 0; q < n; q++)
		if (tports_attach(prog, dev, q, name, fn, priv + q * size))
			return -1;
	return 0;
}

struct uxdp_dev *tports_open(const char *prog, const char *what,
			     const char *str, const char *name)
{
	struct uxdp_dev *dev = uxdp_dev_open(str, name);

	if (!dev)
		tmsg(prog, "%sport '%s': %s", what, str, tports_why(errno));
	return dev;
}

int tports_up(const char *prog, struct uxdp_dev *dev)
{
	int err = dev ? uxdp_dev_up(dev) : 0;

	if (err)
		tmsg(prog, "%s: up: %s", uxdp_dev_name(dev), tports_why(err));
	return err ? -1 : 0;
}

struct uxdp_poll_group *tports_group_new(const char *prog, uint32_t budget,
					 int cpu)
{
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, go, .budget = (int)budget);
	struct uxdp_poll_group *g;

	if (cpu >= 0) {
		go.flags = UXDP_THREAD_F_PIN;
		go.cpu = cpu;
	}
	g = uxdp_poll_group_create(&go);
	if (!g)
		tmsg(prog, "poll group: %s", tports_why(errno));
	return g;
}

int tports_names_read(const char *prog, struct uxdp_dev *dev,
		      struct tdev_names *names)
{
	if (!tdev_names_read(dev, names))
		return 0;
	tmsg(prog, "the library's counters are not the ones in its headers "
	    "(%s): a mismatched libuxdp?",
	    *uxdp_errmsg() ? uxdp_errmsg() : "stats walk");
	return -1;
}
