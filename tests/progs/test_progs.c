/* SPDX-License-Identifier: BSD-2-Clause */
/* Programs for uxdp_prog_load() tests, built as a loadable module. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/xdp.h>

/* "count": stamps its run counter (from priv) into the packet. */
static uint32_t count_run(struct uxdp_buff *ctx, void *priv)
{
	uint64_t *n = priv;

	(*n)++;
	if ((char *)ctx->data + 22 <= (char *)ctx->data_end)
		memcpy((char *)ctx->data + 14, n, sizeof(*n));
	return UXDP_PASS;
}

/* args: "start=N" sets the first value; anything else is refused. */
static void *count_init(const char *args)
{
	uint64_t *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (args && *args) {
		if (strncmp(args, "start=", 6)) {
			free(n);
			errno = EINVAL;
			return NULL;
		}
		*n = strtoull(args + 6, NULL, 10);
	}
	return n;
}

static void count_fini(void *priv)
{
	free(priv);
}

UXDP_PROG_DEFINE(count, count_run, count_init, count_fini);

/* "drop": no state at all. */
static uint32_t drop_run(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_DROP;
}

UXDP_PROG_DEFINE(drop, drop_run, NULL, NULL);

/*
 * Programs named at and past the name limit (t_prog_names.h). Each returns
 * its own verdict, so a test that loads one by mistake can tell which.
 */
#include "t_prog_names.h"

/* Expands the name macro before UXDP_PROG_DEFINE pastes it. */
#define T_PROG_DEFINE(name_, run_) \
	UXDP_PROG_DEFINE(name_, run_, NULL, NULL)

static uint32_t name63_run(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_TX;
}

static uint32_t name64_run(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_REDIRECT;
}

static uint32_t name85_run(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_ABORTED;
}

T_PROG_DEFINE(T_PROG_NAME63, name63_run);
T_PROG_DEFINE(T_PROG_NAME64, name64_run);
T_PROG_DEFINE(T_PROG_NAME85, name85_run);
