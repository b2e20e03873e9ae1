/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * afxdp, built without libxdp, libbpf or a BPF-capable clang: the same
 * exports, refusing (CMakeLists.txt builds this file instead of the rest
 * of the folder).
 */
#include <errno.h>
#include <stdio.h>

#include <uxdp/afxdp.h>
#include <uxdp/driver.h>

/* Built without libxdp, libbpf or a BPF-capable clang: the same exports,
 * refusing. */

UXDP_API struct uxdp_dev *uxdp_afxdp_create(const char *name,
					    const struct uxdp_afxdp_opts *opts)
{
	(void)opts;
	uxdp_clear_error();
	errno = -uxdp_set_error(EOPNOTSUPP, "afxdp %s: uxdp was built without "
				"the afxdp driver (install libxdp-dev, "
				"libbpf-dev and clang, and rebuild)",
				name ? name : "");
	return NULL;
}

UXDP_API int uxdp_afxdp_info(struct uxdp_dev *dev, struct uxdp_afxdp_info *info)
{
	(void)dev;
	(void)info;
	return -EOPNOTSUPP;
}

UXDP_API int uxdp_afxdp_queue_stats(struct uxdp_dev *dev, uint32_t q,
				    struct uxdp_afxdp_queue_stats *st)
{
	(void)dev;
	(void)q;
	(void)st;
	return -EOPNOTSUPP;
}

UXDP_API int uxdp_afxdp_print(struct uxdp_dev *dev, FILE *f, uint32_t flags)
{
	(void)dev;
	(void)f;
	(void)flags;
	return -EOPNOTSUPP;
}

UXDP_API const char *uxdp_afxdp_xdp_mode_str(uint32_t mode)
{
	(void)mode;
	return "none";
}

UXDP_API const char *uxdp_afxdp_attach_str(uint32_t attach)
{
	(void)attach;
	return "not attached";
}
