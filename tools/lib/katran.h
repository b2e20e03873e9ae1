/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Katran's balancer configured as its control plane would (the layouts of
 * katran/lib/bpf/balancer_structs.h, written here from their definitions):
 * a default gateway MAC, VIPs, two reals (10.1.0.1, 10.1.0.2) and each
 * VIP's consistent-hash ring of 65,537 positions alternating between them.
 * Header-only: for uxdp-bench bpf and test_bpf_kernel, on any side that
 * can update a map by name (@upd: 0 or -errno).
 */
#ifndef UXDP_TOOLS_KATRAN_H
#define UXDP_TOOLS_KATRAN_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define TKATRAN_RING	65537

typedef int (*tkatran_update_fn)(void *ctx, const char *map, const void *key,
				 const void *value);

struct tkatran_vip {
	uint32_t addr;		/* host order */
	uint16_t port;		/* host order */
	uint8_t proto;
};

static inline int tkatran_config(tkatran_update_fn upd, void *ctx,
				 const struct tkatran_vip *vips,
				 uint32_t nvips)
{
	struct {
		uint32_t addr[4];
		uint16_t port;
		uint8_t proto, pad;
	} vip;
	struct {
		uint32_t flags, vip_num;
	} meta;
	struct {
		uint32_t addr[4];
		uint8_t flags, pad[3];
	} real;
	uint64_t mac = 0x990000000002ULL;	/* 02:00:00:00:00:99 */
	uint32_t k = 0, v, i;
	int err;

	err = upd(ctx, "ctl_array", &k, &mac);
	for (v = 0; v < nvips && !err; v++) {
		memset(&vip, 0, sizeof(vip));
		vip.addr[0] = htonl(vips[v].addr);
		vip.port = htons(vips[v].port);
		vip.proto = vips[v].proto;
		meta.flags = 0;
		meta.vip_num = v;
		err = upd(ctx, "vip_map", &vip, &meta);
	}
	for (i = 1; i <= 2 && !err; i++) {
		memset(&real, 0, sizeof(real));
		real.addr[0] = htonl(0x0a010000 + i);
		err = upd(ctx, "reals", &i, &real);
	}
	for (v = 0; v < nvips && !err; v++)
		for (i = 0; i < TKATRAN_RING && !err; i++) {
			uint32_t pos = v * TKATRAN_RING + i, r = 1 + i % 2;

			err = upd(ctx, "ch_rings", &pos, &r);
		}
	return err;
}

#endif /* UXDP_TOOLS_KATRAN_H */
