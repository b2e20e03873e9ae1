/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_kernel_rules_probe: the running kernel's release and the form of each
 * version-dependent rule t_kernel_rules.c can ask about without a network
 * namespace (XDP_UMEM_REG, XDP_STATISTICS), one line each, for the shell
 * tests (test_compat.sh). Exit 0; 77 when there is no AF_XDP to ask.
 */
#include <errno.h>
#include <string.h>

#include "t_kernel_rules.h"

int main(void)
{
	struct t_krules k;
	int err;

	t_krules_init(&k);
	printf("kernel %s\n", k.release);
	err = t_krules_probe_umem(&k);
	if (err) {
		fprintf(stderr, "t_kernel_rules_probe: AF_XDP: %s\n",
			strerror(-err));
		return 77;
	}
	t_krules_print(&k, stdout);
	return 0;
}
