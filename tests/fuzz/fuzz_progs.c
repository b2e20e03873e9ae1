/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Programs for fuzz_prog, built as two loadable modules: a plain one, and
 * (FUZZ_PROGS_LINKED) one linked against the shared libuxdp, as a module
 * calling the helpers would be; that one also brings libuxdp's own
 * uxdp_prog_* functions into the loader's symbol search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/xdp.h>

#include "fuzz_progs.h"

/* Expands the name macros before UXDP_PROG_DEFINE pastes them. */
#define FP_DEFINE(name, run, init, fini) UXDP_PROG_DEFINE(name, run, init, fini)

static uint32_t pass_run(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
#ifdef FUZZ_PROGS_LINKED
	/* A no-op move: only here to need a libuxdp symbol. */
	(void)uxdp_adjust_head(ctx, 0);
#else
	(void)ctx;
#endif
	return UXDP_PASS;
}

FP_DEFINE(pass, pass_run, NULL, NULL);
FP_DEFINE(FP_LONG63, pass_run, NULL, NULL);
FP_DEFINE(FP_LONG64, pass_run, NULL, NULL);
FP_DEFINE(FP_LONG85, pass_run, NULL, NULL);
FP_DEFINE(FP_LONG90, pass_run, NULL, NULL);

/* "tag": args NULL or "tag=..."; writes args[4] to the packet's first byte. */
static void *tag_init(const char *args)
{
	char *t;

	if (args && strncmp(args, "tag=", 4)) {
		errno = EINVAL;
		return NULL;
	}
	t = strdup(args ? args : "tag=-");
	if (!t)
		errno = ENOMEM;
	return t;
}

static uint32_t tag_run(struct uxdp_buff *ctx, void *priv)
{
	const char *t = priv;

	if (ctx->data < ctx->data_end)
		*(char *)ctx->data = t[4];
	return FP_TAG_VERDICT;
}

static void tag_fini(void *priv)
{
	free(priv);
}

FP_DEFINE(tag, tag_run, tag_init, tag_fini);

static void *fail_init(const char *args)
{
	(void)args;
	errno = ENOTSUP;
	return NULL;
}

FP_DEFINE(fail, pass_run, fail_init, NULL);

static void *quiet_init(const char *args)
{
	(void)args;
	errno = 0;
	return NULL;
}

FP_DEFINE(quiet, pass_run, quiet_init, NULL);

/* A definition with no function: the loader must refuse it. */
FP_DEFINE(norun, NULL, NULL, NULL);
