/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A complete uxdp program: a generator feeds a veth pair whose far end
 * reflects every packet (XDP_TX with the MACs swapped), and the near end
 * counts what comes back. One poll group thread runs all three devices.
 *
 *	gen (null) --redirect via map--> veth0 ==> veth1 (swap MACs, XDP_TX)
 *	                                 veth0 <== veth1
 *	veth0: count and drop
 *
 * Build: cc veth_reflect.c $(pkg-config --cflags --libs uxdp)
 * Run:   ./veth_reflect [packets]		(default 1000000)
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uxdp/uxdp.h>

/* veth1: turn the packet around and send it back out of veth1. */
static uint32_t reflect(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *eth = ctx->data, tmp[6];

	(void)priv;
	if (eth + 14 > (unsigned char *)ctx->data_end)
		return UXDP_ABORTED;
	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);
	return UXDP_TX;
}

/* The generator: everything to slot 0 of the map (drop if it is empty). */
static uint32_t to_veth(struct uxdp_buff *ctx, void *map)
{
	(void)ctx;
	return uxdp_redirect_map(map, 0, UXDP_DROP);
}

/* veth0: count what came back. The poll group's thread is the only
 * writer; main reads it while the thread runs, hence the atomics. */
static uint32_t count(struct uxdp_buff *ctx, void *counter)
{
	(void)ctx;
	__atomic_fetch_add((uint64_t *)counter, 1, __ATOMIC_RELAXED);
	return UXDP_DROP;
}

/* Attach a program; the device keeps its own reference. */
static void attach(struct uxdp_dev *dev, const char *name, uxdp_prog_fn fn,
		   void *priv)
{
	struct uxdp_prog *prog = uxdp_prog_create(name, fn, priv);

	if (!prog || uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, prog))
		errx(1, "attach %s: %s", name, uxdp_errmsg());
	uxdp_prog_put(prog);
}

int main(int argc, char **argv)
{
	uint64_t want = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	UXDP_DECLARE_OPTS(uxdp_null_opts, gen_opts, .rx_count = want);
	struct uxdp_dev *gen, *veth0, *veth1;
	struct uxdp_poll_group *group;
	struct uxdp_dev_audit audit;
	struct uxdp_map *map;
	uint64_t back = 0;
	time_t deadline;

	if (!want)
		errx(2, "usage: veth_reflect [packets > 0]");
	/* Packets get in through the generator: 64-byte UDP frames, at most
	 * 1024 in flight (its pool), want of them in all. */
	gen = uxdp_null_create("gen0", &gen_opts);
	if (!gen)
		errx(1, "null: %s", uxdp_errmsg());
	if (uxdp_veth_create("veth0", "veth1", NULL, &veth0, &veth1))
		errx(1, "veth: %s", uxdp_errmsg());
	map = uxdp_map_create(1);
	if (!map || uxdp_map_update(map, 0, uxdp_dev_target(veth0)))
		errx(1, "map: %s", uxdp_errmsg());

	attach(gen, "to_veth", to_veth, map);
	attach(veth1, "reflect", reflect, NULL);
	attach(veth0, "count", count, &back);
	if (uxdp_dev_up(veth0) || uxdp_dev_up(veth1) || uxdp_dev_up(gen))
		errx(1, "up: %s", uxdp_errmsg());

	/* One thread polls all three in turn (uxdp_dev_start() would start
	 * a thread per queue instead: three threads for two CPUs here). */
	group = uxdp_poll_group_create(NULL);
	if (!group || uxdp_poll_group_add(group, gen, 0) ||
	    uxdp_poll_group_add(group, veth0, 0) ||
	    uxdp_poll_group_add(group, veth1, 0) ||
	    uxdp_poll_group_start(group))
		errx(1, "poll group: %s", uxdp_errmsg());

	deadline = time(NULL) + 60;
	while (__atomic_load_n(&back, __ATOMIC_RELAXED) < want &&
	       time(NULL) < deadline) {
		struct timespec ms = { .tv_nsec = 1000000 };

		nanosleep(&ms, NULL);
	}

	/*
	 * Teardown. Stop polling first; then destroy the veths: frames still
	 * queued to them go back to the generator's pool (counted in their
	 * rxq stats as drained). The generator's buffers are then all home,
	 * which the audit checks, and it goes last. (Any order is safe: a
	 * generator destroyed first frees its memory when its last buffer
	 * comes home.)
	 */
	uxdp_poll_group_destroy(group);
	uxdp_dev_stats_print(veth1, stdout, 0);
	uxdp_dev_destroy(veth0);
	uxdp_dev_destroy(veth1);
	if (uxdp_dev_audit(gen, &audit) < 0)
		errx(1, "audit: %s", uxdp_errmsg());
	uxdp_dev_stats_print(gen, stdout, 0);
	printf("reflected %llu of %llu packets; audit: %u misplaced, %u in "
	       "flight, %u chunks\n", (unsigned long long)back,
	       (unsigned long long)want, audit.misplaced, audit.in_flight,
	       audit.chunks);
	uxdp_dev_destroy(gen);
	uxdp_map_destroy(map);
	return back == want && !audit.misplaced && !audit.in_flight ? 0 : 1;
}
