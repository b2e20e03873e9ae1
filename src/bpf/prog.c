/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loaded eBPF program as a struct uxdp_prog: its run, its counters and
 * its test runs. The engines are not in this tree yet (the safety pass and
 * the interpreter come from h-bpf-check and h-bpf-isa), so no program is
 * one yet: every call here says so.
 */
#include "../internal.h"

#include <uxdp/bpf.h>

#include "bpf_internal.h"

UXDP_EXPORT int uxdp_bpf_prog_info(const struct uxdp_prog *prog,
				   struct uxdp_bpf_prog_info *info)
{
	(void)info;
	uxdp_clear_err();
	return uxdp_fail(EINVAL, "prog %s: not an eBPF program",
			 prog ? uxdp_prog_name(prog) : "(null)");
}

UXDP_EXPORT int uxdp_bpf_prog_test_run(const struct uxdp_prog *prog,
				       struct uxdp_bpf_test_run_opts *opts)
{
	(void)opts;
	uxdp_clear_err();
	return uxdp_fail(EINVAL, "prog %s: not an eBPF program",
			 prog ? uxdp_prog_name(prog) : "(null)");
}
