/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A module that cannot load: it calls a function nothing defines. A MODULE
 * library links with the reference unresolved; dlopen(RTLD_NOW) then fails
 * ("undefined symbol"), which uxdp_prog_load() must report as ELIBBAD.
 */
#include <uxdp/xdp.h>

/* Defined nowhere, on purpose. */
extern uint32_t t_prog_undefined_function(struct uxdp_buff *ctx);

static uint32_t undef_run(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
	return t_prog_undefined_function(ctx);
}

UXDP_PROG_DEFINE(undef, undef_run, NULL, NULL);
