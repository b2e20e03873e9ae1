/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The in-tree drivers that open ports by name (uxdp_dev_open): each driver
 * defines its struct uxdp_port_driver; the optional ones are here only when
 * their dependency was found at build time.
 */
#include <stddef.h>

#include <uxdp/driver.h>

extern const struct uxdp_port_driver uxdp_nic_port_driver;
extern const struct uxdp_port_driver uxdp_null_port_driver;
extern const struct uxdp_port_driver uxdp_veth_port_driver;
#ifdef UXDP_HAVE_PCAP
extern const struct uxdp_port_driver uxdp_pcap_port_driver;
#endif
#ifdef UXDP_HAVE_AFXDP
extern const struct uxdp_port_driver uxdp_afxdp_port_driver;
#endif

extern const struct uxdp_port_driver *const uxdp_builtin_ports[];
const struct uxdp_port_driver *const uxdp_builtin_ports[] = {
	&uxdp_null_port_driver,
	&uxdp_veth_port_driver,
	&uxdp_nic_port_driver,
#ifdef UXDP_HAVE_PCAP
	&uxdp_pcap_port_driver,
#endif
#ifdef UXDP_HAVE_AFXDP
	&uxdp_afxdp_port_driver,
#endif
	NULL,
};
