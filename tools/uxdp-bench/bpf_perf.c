/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: what an XDP eBPF program costs per packet in uxdp's JIT
 * and interpreter, against the same logic in C (the ceiling), the kernel
 * running the same object, and DPDK's librte_bpf (issue 14).
 *
 * Every benchmark program runs on the same 64-byte UDP/IPv4 packet, on up
 * to three paths:
 *
 *	dev   a null device's generator -> the program attached to it ->
 *	      its verdict carried out (DROP, PASS without a handler, TX
 *	      into the device's sink), uxdp_dev_poll() with budget 64: the
 *	      path uxdp-bench's other XDP modes measure; Mpps and ns/pkt.
 *	      The kernel: the object attached natively to a veth end in a
 *	      testbed namespace, the live-frames generator injecting from
 *	      its peer, timed until the end's XDP counted every frame
 *	run   uxdp_prog_run() in a loop on one fixed buffer: the program
 *	      and its call alone (DPDK: rte_bpf_exec, or its JIT, on a
 *	      context the bench builds)
 *	test  a test run with repeat: uxdp_bpf_prog_test_run() and the
 *	      kernel's BPF_PROG_TEST_RUN, each timed around the one call
 *	      (the kernel's own integer mean is printed beside it)
 *
 * All variants of all programs are interleaved round-robin (bench_run),
 * so a slow spell of this shared machine lands on all of them alike; the
 * ratios are taken within a round. Each side has its floor: the same
 * side on the same path running drop (return XDP_DROP at once: the
 * issue's floor; on the run and test paths pass measures the same, on a
 * device PASS is another disposition, in the kernel the whole stack). A
 * program's cost is its figure minus that floor, per round, so programs
 * are compared and not harnesses.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#include "bench.h"
#include "bpf_kernel.h"
#include "bpf_native.h"
#include "dpdk_bpf.h"
#include "instr.h"
#include "../lib/katran.h"
#include "report.h"

#define BPF_PKT_LEN	64
#define BPF_BUDGET	64
#define BPF_HEADROOM	256
#define BPF_FRAME	2048

/* ---- the programs -------------------------------------------------------- */

struct bprog {
	const char *name;	/* NAME.v3.o (NAME.v1.o for DPDK) */
	const char *func;	/* the XDP program in it */
	uint32_t verdict;	/* on the bench's packet */
	const char *what;
	bool floor;		/* an empty program: no ratio of its own */
	const char *path;	/* an object from elsewhere, for every side */
	/* Its maps as a control plane would fill them, on each side that
	 * runs it (NULL: none); such a program is not DPDK's, which has no
	 * maps to fill. */
	int (*seed)(tkatran_update_fn upd, void *ctx);
	/* It rewrites the packet (an encapsulation): not the run path,
	 * and on the test path a call (a fresh copy) per run. */
	bool dev_only;
	/* The program's own count of the packets it handled as it should
	 * (the first u64 of a per-CPU map's value, summed): the kernel's
	 * dev path checks no verdict, so this says how many of its frames
	 * did the work measured. NULL: none. */
	const char *count_map;
	uint32_t count_key;
};

#ifdef UXDP_BENCH_KATRAN_O
/* Katran's balancer with the bench's packet as a VIP's: 10.0.0.2, UDP
 * 4791 (tools/lib/katran.h has the rest). */
static int katran_seed(tkatran_update_fn upd, void *ctx)
{
	static const struct tkatran_vip vip = { 0x0a000002, 4791, 17 };

	return tkatran_config(upd, ctx, &vip, 1);
}
#endif

/* xdp-tools' objects as Debian installs them (libxdp1, xdp-tools). */
#ifndef UXDP_BENCH_XDP_TOOLS_DIR
#define UXDP_BENCH_XDP_TOOLS_DIR	"/usr/lib/x86_64-linux-gnu/bpf"
#endif

static const struct bprog bprogs[] = {
	{ "pass", "xdp_pass", UXDP_PASS, "return XDP_PASS: the dev path's "
	  "floor for PASS (in the kernel: the stack)", true },
	{ "drop", "xdp_drop", UXDP_DROP, "return XDP_DROP: the floor", true },
	{ "tx", "xdp_tx", UXDP_TX, "return XDP_TX: the dev path's floor for "
	  "TX", true },
	{ "count", "xdp_count", UXDP_PASS,
	  "three array lookups: two atomic adds, a per-CPU add" },
	{ "parse_udp", "xdp_parse_udp", UXDP_DROP,
	  "parse Ethernet/IPv4/UDP, count per port (65536-entry array)" },
	{ "macswap", "xdp_macswap", UXDP_TX, "swap the MACs, XDP_TX" },
	{ "loop", "xdp_loop", UXDP_PASS,
	  "sum the packet's 64 bytes, a bounded loop (64 back edges)" },
	{ "calls", "xdp_calls", UXDP_PASS, "three bpf-to-bpf calls" },
	{ "rodata", "xdp_rodata", UXDP_PASS,
	  "configuration in .rodata, counters in .data/.bss, a packet write" },
	{ "xsk_pick", "xdp_xsk_pick", UXDP_PASS,
	  "parse, pick an XSKMAP slot by rx queue (empty map: XDP_PASS)" },
	{ "xdpfilt_dny_udp", "xdpfilt_dny_udp", UXDP_DROP,
	  "xdp-filter, deny mode, UDP, as Debian installs it: no port "
	  "allowed, the packet dropped and counted", false,
	  UXDP_BENCH_XDP_TOOLS_DIR "/xdpfilt_dny_udp.o" },
	{ "xdpfilt_alw_udp", "xdpfilt_alw_udp", UXDP_PASS,
	  "xdp-filter, allow mode, UDP: no port denied, the packet passed "
	  "and counted", false,
	  UXDP_BENCH_XDP_TOOLS_DIR "/xdpfilt_alw_udp.o" },
#ifdef UXDP_BENCH_KATRAN_O
	{ "katran", "balancer_ingress", UXDP_TX,
	  "Katran's balancer (UXDP_KATRAN_DIR): the packet a VIP's, hashed to "
	  "one of two reals, IPIP-encapsulated, XDP_TX", false,
	  UXDP_BENCH_KATRAN_O, katran_seed, true, "stats", 0 },
#endif
};

#define NPROGS		(sizeof(bprogs) / sizeof(bprogs[0]))
#define PROG_FLOOR	1	/* drop */


enum side {
	SIDE_JIT,
	SIDE_INTERP,
	SIDE_NATIVE,
	SIDE_KERNEL,
	SIDE_DPDK_JIT,
	SIDE_DPDK_INTERP,
	NSIDES
};

static const char *const side_names[NSIDES] = {
	[SIDE_JIT] = "uxdp-jit",
	[SIDE_INTERP] = "uxdp-interp",
	[SIDE_NATIVE] = "native-c",
	[SIDE_KERNEL] = "kernel",
	[SIDE_DPDK_JIT] = "dpdk-jit",
	[SIDE_DPDK_INTERP] = "dpdk-interp",
};

enum path { PATH_DEV, PATH_RUN, PATH_TEST, NPATHS };

static const char *const path_names[NPATHS] = {
	[PATH_DEV] = "dev",
	[PATH_RUN] = "run",
	[PATH_TEST] = "test",
};

/* Which sides run on which path. */
static bool side_on_path(enum side s, enum path p)
{
	switch (p) {
	case PATH_DEV:
		return s == SIDE_JIT || s == SIDE_INTERP || s == SIDE_NATIVE ||
		       s == SIDE_KERNEL;
	case PATH_RUN:
		return s != SIDE_KERNEL;
	case PATH_TEST:
		return s == SIDE_JIT || s == SIDE_INTERP || s == SIDE_KERNEL;
	default:
		return false;
	}
}

/*
 * The floor of @p on @path: drop, except on the dev path, where the
 * verdict is carried out and the empty program of the same verdict is.
 */
static const struct bprog *floor_of(const struct bprog *p, enum path path)
{
	unsigned int i;

	if (path == PATH_DEV)
		for (i = 0; i < NPROGS; i++)
			if (bprogs[i].floor && bprogs[i].verdict == p->verdict)
				return &bprogs[i];
	return &bprogs[PROG_FLOOR];
}

/* ---- the packet and the fixed buffer -------------------------------------- */

/* 64 bytes of UDP/IPv4, 10.0.0.1:1024 -> 10.0.0.2:4791, between locally
 * administered MACs (the destination's first byte even: calls passes). */
static void bpf_packet(unsigned char *p)
{
	static const unsigned char hdr[42] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,	/* dst */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,	/* src */
		0x08, 0x00,				/* IPv4 */
		0x45, 0x00, 0x00, 0x32, 0x00, 0x01, 0x00, 0x00,
		0x40, 0x11, 0x00, 0x00,			/* ttl, udp, csum */
		10, 0, 0, 1, 10, 0, 0, 2,
		0x04, 0x00, 0x12, 0xb7, 0x00, 0x1e, 0x00, 0x00,
	};
	uint32_t sum = 0;
	unsigned int i;

	memset(p, 0, BPF_PKT_LEN);
	memcpy(p, hdr, sizeof(hdr));
	for (i = 14; i < 34; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	p[24] = (unsigned char)(~sum >> 8);
	p[25] = (unsigned char)~sum;
	for (i = 42; i < BPF_PKT_LEN; i++)
		p[i] = (unsigned char)i;
}

struct fixed_buf {
	unsigned char *frame;
	struct uxdp_rxq_info rxq;
	struct uxdp_buff buf;
};

static int fixed_buf_init(struct fixed_buf *f)
{
	memset(f, 0, sizeof(*f));
	f->frame = aligned_alloc(64, BPF_FRAME);
	if (!f->frame)
		return -ENOMEM;
	memset(f->frame, 0, BPF_FRAME);
	bpf_packet(f->frame + BPF_HEADROOM);
	f->rxq.queue_index = 0;
	f->rxq.ifindex = 1;
	f->rxq.mem.type = UXDP_MEM_ALLOC;
	f->buf.data_hard_start = f->frame;
	f->buf.data = f->frame + BPF_HEADROOM;
	f->buf.data_meta = f->buf.data;
	f->buf.data_end = f->frame + BPF_HEADROOM + BPF_PKT_LEN;
	f->buf.rxq = &f->rxq;
	f->buf.frame_sz = BPF_FRAME;
	return 0;
}

/*
 * What callgrind collects (--instructions) and what the run path times:
 * @n runs of @prog on @b, the verdicts that differ from @want counted.
 */
INSTR_LOOP uint64_t bench_instr_bpf_run(const struct uxdp_prog *prog,
					struct uxdp_buff *b, uint64_t n,
					uint32_t want);
INSTR_LOOP uint64_t bench_instr_bpf_run(const struct uxdp_prog *prog,
					struct uxdp_buff *b, uint64_t n,
					uint32_t want)
{
	uint64_t bad = 0, i;

	for (i = 0; i < n; i++)
		bad += uxdp_prog_run(prog, b) != want;
	return bad;
}

/* ---- loading ------------------------------------------------------------- */

static const char *bpf_dir(const struct bench_opts *o)
{
	if (o->bpf_dir)
		return o->bpf_dir;
#ifdef UXDP_BENCH_BPF_DIR
	return UXDP_BENCH_BPF_DIR;
#else
	return NULL;
#endif
}

static void obj_path(char *buf, size_t len, const char *dir,
		     const struct bprog *p, const char *cpu)
{
	if (p->path)
		snprintf(buf, len, "%s", p->path);
	else
		snprintf(buf, len, "%s/%s.%s.o", dir, p->name, cpu);
}

/*
 * Program @p of its object, loaded for @engine. Returns the program (a
 * reference) and the object in *@obj, or NULL with @why.
 */
static struct uxdp_prog *load_uxdp(const char *dir, const struct bprog *p,
				   uint32_t engine,
				   struct uxdp_bpf_object **obj, char *why,
				   size_t whylen)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, oo, .engine = engine);
	struct uxdp_prog *prog;
	char path[512];

	obj_path(path, sizeof(path), dir, p, "v3");
	*obj = uxdp_bpf_object_open(path, &oo);
	if (!*obj) {
		snprintf(why, whylen, "%s", uxdp_errmsg());
		return NULL;
	}
	if (uxdp_bpf_object_load(*obj)) {
		snprintf(why, whylen, "%s", uxdp_errmsg());
		uxdp_bpf_object_close(*obj);
		*obj = NULL;
		return NULL;
	}
	prog = uxdp_bpf_object_prog(*obj, p->func);
	if (!prog) {
		snprintf(why, whylen, "%s", uxdp_errmsg());
		uxdp_bpf_object_close(*obj);
		*obj = NULL;
	}
	return prog;
}

/* ---- the variants -------------------------------------------------------- */

struct bcase {
	const struct bprog *p;
	enum side side;
	enum path path;
	char label[48];
	const struct uxdp_prog *prog;	/* uxdp sides: not a reference */
	struct uxdp_dev *dev;		/* PATH_DEV */
	struct fixed_buf fb;		/* PATH_RUN */
	struct kbpf *k;			/* SIDE_KERNEL */
	struct kveth *kv;		/* SIDE_KERNEL, PATH_DEV */
	struct dpdk_bpf *dp;		/* SIDE_DPDK_* */
	const unsigned char *pkt;	/* PATH_TEST's data_in */
	double wall_sum;		/* the kernel's call, ns per run, summed */
	uint64_t sent;			/* SIDE_KERNEL: frames or calls run */
	unsigned int kns_n;
	struct bench_variant *v;
	int idx;			/* into the variant array */
};

/* The rxq counter a verdict ends in (the null device, no pass handler). */
static uint64_t verdict_count(const struct uxdp_rxq_stats *st, uint32_t v)
{
	switch (v) {
	case UXDP_DROP:
		return st->drop;
	case UXDP_PASS:
		return st->pass + st->pass_dropped;
	case UXDP_TX:
		return st->tx;
	default:
		return st->aborted;
	}
}

static int run_dev(struct bcase *c, uint64_t ops, double *out)
{
	struct uxdp_rxq_stats s0, s1;
	uint64_t done = 0, t0, t1;
	char why[192];
	int n;

	if (c->side == SIDE_KERNEL) {
		n = kveth_run(c->kv, ops, &t0, why, sizeof(why));
		if (n) {
			bench_why("%s", why);
			return n;
		}
		out[0] = bench_ns((double)t0) / (double)ops;
		c->sent += ops;
		return 0;
	}

	uxdp_dev_rxq_stats(c->dev, 0, &s0);
	t0 = bench_tsc_begin();
	while (done < ops) {
		n = uxdp_dev_poll(c->dev, 0, BPF_BUDGET);
		if (n < 0) {
			bench_why("uxdp_dev_poll: %s", strerror(-n));
			return n;
		}
		done += (uint64_t)n;
	}
	t1 = bench_tsc_end();
	uxdp_dev_rxq_stats(c->dev, 0, &s1);
	if (verdict_count(&s1, c->p->verdict) -
	    verdict_count(&s0, c->p->verdict) != done) {
		bench_why("%s: %llu of %llu packets ended as verdict %u", c->label,
			  (unsigned long long)(verdict_count(&s1, c->p->verdict) -
					       verdict_count(&s0, c->p->verdict)),
			  (unsigned long long)done, c->p->verdict);
		return -EPROTO;
	}
	out[0] = bench_ns((double)(t1 - t0)) / (double)done;
	return 0;
}

static int run_direct(struct bcase *c, uint64_t ops, double *out)
{
	uint64_t t0, t1, bad;

	t0 = bench_tsc_begin();
	bad = bench_instr_bpf_run(c->prog, &c->fb.buf, ops, c->p->verdict);
	t1 = bench_tsc_end();
	if (bad) {
		bench_why("%s: %llu of %llu runs did not return verdict %u",
			  c->label, (unsigned long long)bad,
			  (unsigned long long)ops, c->p->verdict);
		return -EPROTO;
	}
	out[0] = bench_ns((double)(t1 - t0)) / (double)ops;
	return 0;
}

/*
 * The test path for a program that rewrites its packet: a call per run,
 * each on a fresh copy (repeat 1), timed by each side itself (the
 * kernel's duration, uxdp_bpf_prog_test_run's): the same measure for
 * both, a run's own time with a clock read around it.
 */
static int run_test_fresh(struct bcase *c, uint64_t ops, double *out)
{
	uint64_t i, sum = 0, ticks;
	uint32_t retval, kns;
	int err;

	for (i = 0; i < ops; i++) {
		if (c->side == SIDE_KERNEL) {
			err = kbpf_test_run(c->k, c->pkt, BPF_PKT_LEN, 1,
					    &retval, &kns, &ticks);
			if (err) {
				bench_why("BPF_PROG_TEST_RUN: %s",
					  strerror(-err));
				return err;
			}
		} else {
			UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, t,
					  .data_in = c->pkt,
					  .data_size_in = BPF_PKT_LEN);

			err = uxdp_bpf_prog_test_run(c->prog, &t);
			if (err) {
				bench_why("uxdp_bpf_prog_test_run: %s",
					  uxdp_errmsg());
				return err;
			}
			retval = t.retval;
			kns = t.duration;
		}
		if (retval != c->p->verdict) {
			bench_why("%s: verdict %u, want %u", c->label, retval,
				  c->p->verdict);
			return -EPROTO;
		}
		sum += kns;
	}
	out[0] = (double)sum / (double)ops;
	c->sent += ops;
	return 0;
}

static int run_test(struct bcase *c, uint64_t ops, double *out)
{
	uint32_t repeat = ops > UINT32_MAX ? UINT32_MAX : (uint32_t)ops;
	uint32_t retval, kns;
	uint64_t t0, t1, ticks;
	int err;

	if (c->side == SIDE_KERNEL) {
		err = kbpf_test_run(c->k, c->pkt, BPF_PKT_LEN, repeat, &retval,
				    &kns, &ticks);
		if (err) {
			bench_why("BPF_PROG_TEST_RUN: %s", strerror(-err));
			return err;
		}
		c->kns_n++;
	} else {
		UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, t,
				  .data_in = c->pkt,
				  .data_size_in = BPF_PKT_LEN,
				  .repeat = repeat);

		t0 = bench_tsc_begin();
		err = uxdp_bpf_prog_test_run(c->prog, &t);
		t1 = bench_tsc_end();
		if (err) {
			bench_why("uxdp_bpf_prog_test_run: %s", uxdp_errmsg());
			return err;
		}
		retval = t.retval;
		ticks = t1 - t0;
	}
	if (retval != c->p->verdict) {
		bench_why("%s: verdict %u, want %u", c->label, retval,
			  c->p->verdict);
		return -EPROTO;
	}
	/*
	 * The kernel's figure is its own mean, whole ns: around the call
	 * its test run also swaps the XDP dispatcher twice (an RCU grace
	 * period each), milliseconds that no repeat count amortises. Ours
	 * has no such fixed cost, so the wall time (sub-ns) is ours.
	 */
	if (c->side == SIDE_KERNEL) {
		c->wall_sum += bench_ns((double)ticks) / (double)repeat;
		out[0] = kns;
	} else {
		out[0] = bench_ns((double)ticks) / (double)repeat;
	}
	return 0;
}

static int run_dpdk(struct bcase *c, uint64_t ops, double *out)
{
	uint64_t ticks, bad;
	int err;

	err = dpdk_bpf_loop(c->dp, c->side == SIDE_DPDK_JIT, ops,
			    c->p->verdict, &ticks, &bad);
	if (err) {
		bench_why("%s", dpdk_bpf_why(c->dp));
		return err;
	}
	if (bad) {
		bench_why("%s: %llu of %llu runs did not return verdict %u",
			  c->label, (unsigned long long)bad,
			  (unsigned long long)ops, c->p->verdict);
		return -EPROTO;
	}
	out[0] = bench_ns((double)ticks) / (double)ops;
	return 0;
}

static int run_case(void *arg, uint64_t ops, double *out)
{
	struct bcase *c = arg;

	if (bench_fail_injected(c->label))
		return -ECANCELED;
	if (c->side == SIDE_DPDK_JIT || c->side == SIDE_DPDK_INTERP)
		return run_dpdk(c, ops, out);
	switch (c->path) {
	case PATH_DEV:
		return run_dev(c, ops, out);
	case PATH_RUN:
		return run_direct(c, ops, out);
	default:
		return c->p->dev_only ? run_test_fresh(c, ops, out) :
		       run_test(c, ops, out);
	}
}

/* ---- set-up -------------------------------------------------------------- */

/* Everything one program needs on every side: loaded once, shared by its
 * paths (the JIT's and the interpreter's own objects, so their maps are
 * their own). */
struct bprog_state {
	struct uxdp_bpf_object *obj[2];	/* JIT, interpreter */
	struct uxdp_prog *prog[NSIDES];	/* JIT, interpreter, native */
	char why[NSIDES][256];		/* why a side cannot run it */
	struct kbpf *k;
	struct kveth *kv;		/* the kernel on a veth pair */
	char kv_why[256];
	int kv_err;			/* < 0: a failure, > 0: a skip */
	struct dpdk_bpf *dp;
	bool unavailable[NSIDES];	/* a skip, not a failure */
};

static unsigned int dev_seq;

static int case_setup(struct bcase *c, struct bprog_state *st,
		      const unsigned char *pkt)
{
	/* A program that rewrites the packet gets the template afresh in
	 * each (a 64-byte copy per packet, counted in its figure). */
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_template = pkt,
			  .rx_template_len = BPF_PKT_LEN,
			  .flags = c->p->dev_only ? UXDP_NULL_F_REWRITE : 0);
	char name[16];

	c->pkt = pkt;
	if (c->side == SIDE_KERNEL) {
		c->k = st->k;
		c->kv = st->kv;
		return 0;
	}
	if (c->side == SIDE_DPDK_JIT || c->side == SIDE_DPDK_INTERP) {
		c->dp = st->dp;
		return 0;
	}
	c->prog = st->prog[c->side];
	if (c->path == PATH_RUN)
		return fixed_buf_init(&c->fb);
	if (c->path != PATH_DEV)
		return 0;
	snprintf(name, sizeof(name), "bb%u.%u", (unsigned int)getpid() % 10000,
		 dev_seq++);
	c->dev = uxdp_null_create(name, &no);
	if (!c->dev)
		return -errno;
	if (uxdp_dev_attach_prog(c->dev, UXDP_ALL_QUEUES,
				 (struct uxdp_prog *)c->prog) ||
	    uxdp_dev_up(c->dev))
		return -EINVAL;
	return 0;
}

static void case_teardown(struct bcase *c)
{
	uxdp_dev_destroy(c->dev);
	free(c->fb.frame);
}

/* tools/lib/katran.h's callbacks: a map update on either side. */
static int seed_uxdp(void *ctx, const char *map, const void *key,
		     const void *value)
{
	struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(ctx, map);

	return m ? uxdp_bpf_map_update(m, key, value, BPF_ANY) : -ENOENT;
}

static int seed_kernel(void *ctx, const char *map, const void *key,
		       const void *value)
{
	return kbpf_map_update(ctx, map, key, value);
}

static void prog_state_setup(const char *dir, const struct bprog *p,
			     struct bprog_state *st, bool no_dpdk,
			     const unsigned char *pkt)
{
	uxdp_prog_fn fn;
	char path[512];
	unsigned int i;
	int err;

	memset(st, 0, sizeof(*st));
	st->prog[SIDE_JIT] = load_uxdp(dir, p, UXDP_BPF_ENGINE_JIT,
				       &st->obj[0], st->why[SIDE_JIT],
				       sizeof(st->why[0]));
	st->prog[SIDE_INTERP] = load_uxdp(dir, p, UXDP_BPF_ENGINE_INTERP,
					  &st->obj[1], st->why[SIDE_INTERP],
					  sizeof(st->why[0]));
	fn = bpf_native_fn(p->name);
	if (fn)
		st->prog[SIDE_NATIVE] = uxdp_prog_create(p->name, fn, NULL);
	if (!st->prog[SIDE_NATIVE])
		snprintf(st->why[SIDE_NATIVE], sizeof(st->why[0]), "%s",
			 fn ? uxdp_errmsg() : "no native C version (yet)");
	for (i = 0; p->seed && i < 2; i++)
		if (st->obj[i] && (err = p->seed(seed_uxdp, st->obj[i]))) {
			snprintf(st->why[i ? SIDE_INTERP : SIDE_JIT],
				 sizeof(st->why[0]), "configuring its maps: "
				 "%s", uxdp_errmsg());
			uxdp_prog_put(st->prog[i ? SIDE_INTERP : SIDE_JIT]);
			st->prog[i ? SIDE_INTERP : SIDE_JIT] = NULL;
		}
	/* A program uxdp refuses (a part-2 map) is a skip, said with the
	 * refusal; so is a kernel without privilege, and DPDK's limits. */
	st->unavailable[SIDE_JIT] = !st->prog[SIDE_JIT];
	st->unavailable[SIDE_INTERP] = !st->prog[SIDE_INTERP];
	st->unavailable[SIDE_NATIVE] = !st->prog[SIDE_NATIVE];

	obj_path(path, sizeof(path), dir, p, "v3");
	err = kbpf_load(path, p->func, &st->k, st->why[SIDE_KERNEL],
			sizeof(st->why[0]));
	if (!err && p->seed && (err = p->seed(seed_kernel, st->k))) {
		snprintf(st->why[SIDE_KERNEL], sizeof(st->why[0]),
			 "configuring its maps: %s", strerror(-err));
		kbpf_close(st->k);
		st->k = NULL;
	}
	st->unavailable[SIDE_KERNEL] = err != 0;
	if (err)
		snprintf(st->kv_why, sizeof(st->kv_why), "%s",
			 st->why[SIDE_KERNEL]);
	else
		st->kv_err = kveth_open(st->k, pkt, BPF_PKT_LEN,
					bench_env.cpu_a, &st->kv, st->kv_why,
					sizeof(st->kv_why));

	if (no_dpdk) {
		snprintf(st->why[SIDE_DPDK_JIT], sizeof(st->why[0]),
			 "--no-dpdk");
		err = 1;
	} else if (p->seed) {
		snprintf(st->why[SIDE_DPDK_JIT], sizeof(st->why[0]),
			 "its maps are a control plane's to fill; DPDK's "
			 "librte_bpf gives the program only empty ones");
		err = 1;
	} else {
		obj_path(path, sizeof(path), dir, p, "v1");
		err = dpdk_bpf_prepare(path, p->func, pkt, BPF_PKT_LEN,
				       &st->dp, st->why[SIDE_DPDK_JIT],
				       sizeof(st->why[0]));
	}
	st->unavailable[SIDE_DPDK_JIT] = err != 0;
	st->unavailable[SIDE_DPDK_INTERP] = err != 0;
	memcpy(st->why[SIDE_DPDK_INTERP], st->why[SIDE_DPDK_JIT],
	       sizeof(st->why[0]));
	if (!err && !dpdk_bpf_has_jit(st->dp)) {
		snprintf(st->why[SIDE_DPDK_JIT], sizeof(st->why[0]),
			 "rte_bpf_get_jit: no JIT code for this program");
		st->unavailable[SIDE_DPDK_JIT] = true;
	}
}

static void prog_state_teardown(struct bprog_state *st)
{
	unsigned int s;

	for (s = 0; s < NSIDES; s++)
		uxdp_prog_put(st->prog[s]);
	uxdp_bpf_object_close(st->obj[0]);
	uxdp_bpf_object_close(st->obj[1]);
	kveth_close(st->kv);
	kbpf_close(st->k);
	dpdk_bpf_free(st->dp);
}

/* ---- figures ------------------------------------------------------------- */

/* Median over rounds of (a - floor of a): ns a program adds to its side. */
static double paired_cost(const struct bench_variant *a,
			  const struct bench_variant *fa, unsigned int runs)
{
	double d[100];
	unsigned int r, n = 0;

	if (!a || !fa)
		return NAN;
	for (r = 0; r < runs && n < 100; r++) {
		double x = bench_sample(a, r, 0), f = bench_sample(fa, r, 0);

		if (!isnan(x) && !isnan(f))
			d[n++] = x - f;
	}
	return bench_median_of(d, n);
}

/* Median over rounds of (a - fa) / (b - fb), each from one round. */
static double paired_cost_ratio(const struct bench_variant *a,
				const struct bench_variant *fa,
				const struct bench_variant *b,
				const struct bench_variant *fb,
				unsigned int runs)
{
	double d[100];
	unsigned int r, n = 0;

	if (!a || !fa || !b || !fb)
		return NAN;
	for (r = 0; r < runs && n < 100; r++) {
		double x = bench_sample(a, r, 0) - bench_sample(fa, r, 0);
		double y = bench_sample(b, r, 0) - bench_sample(fb, r, 0);

		if (!isnan(x) && !isnan(y) && y > 0)
			d[n++] = x / y;
	}
	return bench_median_of(d, n);
}

/* ---- --instructions ------------------------------------------------------ */

enum { BI_RUN, BI_N };

struct bpf_instr {
	struct instr_variant iv;	/* first: bench_variant.arg */
	char label[48];
	char n[24];
	const struct bprog *p;
	enum side side;
};

static int bpf_instr_figures(const struct instr_variant *iv,
			     const struct instr_counts *c, double *out)
{
	(void)iv;
	out[BI_RUN] = instr_per_unit(c, 0, 1);
	if (!(out[BI_RUN] > 0)) {
		bench_why("nothing counted in bench_instr_bpf_run (%llu "
			  "instructions): a stripped binary?",
			  (unsigned long long)c->ir[1]);
		return -EPROTO;
	}
	return 0;
}

/*
 * uxdp-bench __instr bpf DIR PROG SIDE RUNS: the run path of PROG on SIDE
 * (uxdp-jit, uxdp-interp, native-c) counted over RUNS, then 2 x RUNS.
 */
int bpf_instr_child(int argc, char **argv)
{
	struct uxdp_bpf_object *obj = NULL;
	struct uxdp_prog *prog = NULL;
	const struct bprog *p = NULL;
	struct fixed_buf fb = { 0 };
	uint64_t n = 0, units[2], bad;
	char why[256] = "";
	unsigned int i;
	int side = -1;

	if (argc == 4) {
		for (i = 0; i < NPROGS; i++)
			if (!strcmp(argv[1], bprogs[i].name))
				p = &bprogs[i];
		for (i = 0; i <= SIDE_NATIVE; i++)
			if (!strcmp(argv[2], side_names[i]))
				side = (int)i;
		n = instr_arg_u64(argv[3]);
	}
	if (!p || side < 0 || !n) {
		fprintf(stderr, "usage: uxdp-bench " INSTR_CHILD_ARG " bpf DIR "
			"PROG uxdp-jit|uxdp-interp|native-c RUNS\n");
		return 2;
	}
	if (side == SIDE_NATIVE) {
		prog = uxdp_prog_create(p->name, bpf_native_fn(p->name), NULL);
		if (!prog)
			snprintf(why, sizeof(why), "%s", uxdp_errmsg());
	} else {
		prog = load_uxdp(argv[0], p, side == SIDE_JIT ?
				 UXDP_BPF_ENGINE_JIT : UXDP_BPF_ENGINE_INTERP,
				 &obj, why, sizeof(why));
	}
	if (!prog || fixed_buf_init(&fb)) {
		fprintf(stderr, "uxdp-bench " INSTR_CHILD_ARG " bpf %s %s: %s\n",
			p->name, argv[2], why[0] ? why : "out of memory");
		uxdp_bpf_object_close(obj);
		return 1;
	}
	bad = bench_instr_bpf_run(prog, &fb.buf, 1000, p->verdict);
	INSTR_START();
	bad += bench_instr_bpf_run(prog, &fb.buf, n, p->verdict);
	INSTR_DUMP("run N");
	bad += bench_instr_bpf_run(prog, &fb.buf, 2 * n, p->verdict);
	INSTR_DUMP("run 2N");
	INSTR_STOP();
	uxdp_prog_put(prog);
	uxdp_bpf_object_close(obj);
	free(fb.frame);
	if (bad) {
		fprintf(stderr, "uxdp-bench " INSTR_CHILD_ARG " bpf %s %s: %llu "
			"runs did not return verdict %u\n", p->name, argv[2],
			(unsigned long long)bad, p->verdict);
		return 1;
	}
	units[0] = n;
	units[1] = 2 * n;
	instr_child_units(units, 2);
	return 0;
}

/* Instructions per run of every program uxdp runs, JIT, interpreter and
 * native, with the floor's subtracted. Returns the failed variants. */
static unsigned int bpf_instructions(const struct bench_opts *o,
				     const char *dir,
				     const struct bprog_state *st)
{
	struct bpf_instr bi[NPROGS * 3];
	struct bench_variant v[NPROGS * 3];
	int at[NPROGS][3];
	unsigned int i, s, nv = 0, failed;

	if (!instr_ready()) {
		report_warn("bpf", "instructions per run skipped: %s",
			    instr_status());
		return 0;
	}
	for (i = 0; i < NPROGS; i++) {
		for (s = 0; s < 3; s++) {
			struct bpf_instr *x = &bi[nv];

			at[i][s] = -1;
			if (!st[i].prog[s])
				continue;
			memset(x, 0, sizeof(*x));
			x->p = &bprogs[i];
			x->side = (enum side)s;
			snprintf(x->label, sizeof(x->label), "bpf instr %s %s",
				 x->p->name, side_names[s]);
			snprintf(x->n, sizeof(x->n), "%llu",
				 (unsigned long long)BENCH_BPF_INSTR_OPS);
			x->iv.job = (struct instr_job){
				.group = "bpf",
				.args = { dir, x->p->name, side_names[s],
					  x->n },
				.toggle = { "bench_instr_bpf_run*" },
				.ndumps = 2,
			};
			x->iv.figures = bpf_instr_figures;
			instr_variant_init(&v[nv], &x->iv, x->label,
					   BENCH_BPF_INSTR_OPS, BI_N);
			at[i][s] = (int)nv++;
		}
	}
	failed = instr_measure(v, nv, o, "bpf");

	report_heading("bpf: instructions per run (callgrind), run path, "
		       "minus drop's");
	for (i = 0; i < NPROGS; i++) {
		for (s = 0; s < 3; s++) {
			const struct bench_variant *fv, *pv;
			struct report_row *row;
			char name[48];

			if (at[i][s] < 0 || at[PROG_FLOOR][s] < 0)
				continue;
			pv = &v[at[i][s]];
			fv = &v[at[PROG_FLOOR][s]];
			snprintf(name, sizeof(name), "%s instr", bprogs[i].name);
			row = report_add("bpf", name, side_names[s],
					 instr_median(pv, BI_RUN),
					 instr_min(pv, BI_RUN), "instr/run");
			report_part(row, "cost", instr_median(pv, BI_RUN) -
				    instr_median(fv, BI_RUN));
		}
	}
	bench_variants_free(v, nv);
	return failed;
}

/* ---- the command --------------------------------------------------------- */

static struct bench_variant *find_v(struct bcase *cs, unsigned int nc,
				    const struct bprog *p, enum side s,
				    enum path path)
{
	unsigned int i;

	for (i = 0; i < nc; i++)
		if (cs[i].p == p && cs[i].side == s && cs[i].path == path &&
		    cs[i].v && cs[i].v->nsamples)
			return cs[i].v;
	return NULL;
}

/* The safety pass's counts per program; returns the programs whose runs
 * faulted (none should: the packet is well-formed). */
static unsigned int report_safety(const struct bprog_state *st)
{
	unsigned int i, bad = 0;

	report_heading("bpf: what the safety pass proved (uxdp_bpf_prog_info)");
	for (i = 0; i < NPROGS; i++) {
		UXDP_DECLARE_OPTS(uxdp_bpf_prog_info, info);
		struct report_row *row;
		char name[48];

		if (!st[i].prog[SIDE_JIT] ||
		    uxdp_bpf_prog_info(st[i].prog[SIDE_JIT], &info))
			continue;
		snprintf(name, sizeof(name), "%s safety", bprogs[i].name);
		row = report_add("bpf", name, "uxdp", info.checked, NAN,
				 "checked");
		report_part(row, "accesses", info.accesses);
		report_part(row, "proven", info.proven);
		report_part(row, "back_edges", info.back_edges);
		report_part(row, "insns", info.insns);
		report_row_note(row, "%u instructions (%u after fixups), JIT "
				"%u bytes; %u faults in %llu runs",
				info.insns, info.xlated_insns, info.jit_size,
				(unsigned int)info.faults,
				(unsigned long long)info.runs);
		if (info.faults) {
			bench_fail("bpf", "%s: %llu runs faulted (last: insn %u)",
				   bprogs[i].name,
				   (unsigned long long)info.faults,
				   info.last_fault_insn);
			bad++;
		}
	}
	return bad;
}

static double geomean(const double *v, unsigned int n)
{
	double s = 0;
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i] > 0) {
			s += log(v[i]);
			k++;
		}
	return k ? exp(s / k) : NAN;
}

/* The targets: a's cost over b's on a path. */
static const struct ratio_def {
	const char *name;
	enum side a, b;
	enum path path;
	double limit, geomean_limit;
} ratio_defs[] = {
	{ "jit/kernel", SIDE_JIT, SIDE_KERNEL, PATH_TEST, 1.0, 0.8 },
	{ "jit/native", SIDE_JIT, SIDE_NATIVE, PATH_RUN, 1.3, 1.3 },
	{ "interp/jit", SIDE_INTERP, SIDE_JIT, PATH_RUN, 6.0, 6.0 },
};

#define NRATIOS	(sizeof(ratio_defs) / sizeof(ratio_defs[0]))

/* @d's ratio on @p: a's cost over b's, each minus its own floor. */
static double prog_ratio(struct bcase *cs, unsigned int nc,
			 const struct bprog *p, const struct ratio_def *d,
			 unsigned int runs)
{
	const struct bprog *f = floor_of(p, d->path);

	return paired_cost_ratio(find_v(cs, nc, p, d->a, d->path),
				 find_v(cs, nc, f, d->a, d->path),
				 find_v(cs, nc, p, d->b, d->path),
				 find_v(cs, nc, f, d->b, d->path), runs);
}

/*
 * Context for the interp/jit target, no limits of their own: how far a
 * peer's interpreter is from its own JIT on the same programs, and each
 * uxdp engine against DPDK's of the same kind (run path, floor
 * subtracted, as the targets are).
 */
static const struct ratio_def peer_defs[] = {
	{ "dpdk-interp/dpdk-jit", SIDE_DPDK_INTERP, SIDE_DPDK_JIT, PATH_RUN,
	  0, 0 },
	{ "uxdp-interp/dpdk-interp", SIDE_INTERP, SIDE_DPDK_INTERP, PATH_RUN,
	  0, 0 },
	{ "uxdp-jit/dpdk-jit", SIDE_JIT, SIDE_DPDK_JIT, PATH_RUN, 0, 0 },
};

#define NPEERS	(sizeof(peer_defs) / sizeof(peer_defs[0]))

/* Whether both of @d's sides ran @p on @d's path. */
static bool both_ran(struct bcase *cs, unsigned int nc, const struct bprog *p,
		     const struct ratio_def *d)
{
	return find_v(cs, nc, p, d->a, d->path) &&
	       find_v(cs, nc, p, d->b, d->path);
}

/*
 * @d's ratio for every program both sides ran, then their geomean: as
 * the targets (@target: a program without a ratio is left out),
 * or as rows named "PROG ratio" and "geomean ratio" with the ratio's
 * name the variant: one for every program both sides ran, so the rows
 * do not depend on the run's noise; a ratio that is none (a cost at
 * most 0, which a short run's noise gives) is NaN with a note.
 */
static void report_ratios(struct bcase *cs, unsigned int nc,
			  unsigned int runs, const struct ratio_def *d,
			  bool target)
{
	double r[NPROGS], g;
	unsigned int i, n = 0, rows = 0;
	struct report_row *row;
	char name[48];

	for (i = 0; i < NPROGS; i++) {
		const struct bprog *p = &bprogs[i];
		double v;

		/* pass is the floor and drop's cost is nothing on every
		 * side: neither is a ratio. */
		if (p->floor)
			continue;
		v = prog_ratio(cs, nc, p, d, runs);
		if (target) {
			if (isnan(v))
				continue;
			report_target("bpf", d->name, v, d->limit, "%s: %s "
				      "path, minus each side's floor", p->name,
				      path_names[d->path]);
			r[n++] = v;
			continue;
		}
		if (!both_ran(cs, nc, p, d))
			continue;
		snprintf(name, sizeof(name), "%s ratio", p->name);
		row = report_add("bpf", name, d->name, v > 0 ? v : NAN, NAN,
				 "x");
		if (!(v > 0))
			report_row_note(row, "no ratio: a cost at most 0 in "
					"this run");
		if (v > 0)
			r[n++] = v;
		rows++;
	}
	if (target) {
		snprintf(name, sizeof(name), "%s geomean", d->name);
		report_target("bpf", name, n ? geomean(r, n) : NAN,
			      d->geomean_limit, "%u programs", n);
	} else if (rows) {
		g = n ? geomean(r, n) : NAN;
		row = report_add("bpf", "geomean ratio", d->name, g, NAN, "x");
		report_row_note(row, "%u of %u programs", n, rows);
	}
}

static void report_figures(struct bcase *cs, unsigned int nc,
			   unsigned int runs)
{
	unsigned int i, s, pa, t;

	for (pa = 0; pa < NPATHS; pa++) {
		report_heading("bpf: %s path, ns per %s, raw and minus the "
			       "side's floor (drop)", path_names[pa],
			       pa == PATH_DEV ? "packet" : "run");
		for (i = 0; i < NPROGS; i++) {
			for (s = 0; s < NSIDES; s++) {
				struct bench_variant *v, *fv;
				struct report_row *row;
				char name[48];
				double cost;

				v = find_v(cs, nc, &bprogs[i], (enum side)s,
					   (enum path)pa);
				if (!v)
					continue;
				fv = find_v(cs, nc,
					    floor_of(&bprogs[i], (enum path)pa),
					    (enum side)s, (enum path)pa);
				cost = paired_cost(v, fv, runs);
				snprintf(name, sizeof(name), "%s %s",
					 bprogs[i].name, path_names[pa]);
				row = report_add("bpf", name, side_names[s],
						 bench_median(v, 0),
						 bench_min(v, 0),
						 pa == PATH_DEV ? "ns/pkt" :
								  "ns/run");
				report_part(row, "cost", cost);
				if (pa == PATH_DEV) {
					snprintf(name, sizeof(name), "%s dev Mpps",
						 bprogs[i].name);
					report_add("bpf", name, side_names[s],
						   1e3 / bench_median(v, 0),
						   NAN, "Mpps");
				}
				if (s == SIDE_KERNEL && pa == PATH_TEST) {
					struct bcase *c = v->arg;

					report_row_note(row, "the kernel's own "
							"mean, whole ns; around "
							"the call: %.0f ns/run",
							c->kns_n ? c->wall_sum /
							c->kns_n : NAN);
				}
			}
		}
	}

	/* The targets, on floor-subtracted figures. */
	for (t = 0; t < NRATIOS; t++)
		report_ratios(cs, nc, runs, &ratio_defs[t], true);
	report_heading("bpf: peers' ratios, run path, minus each side's "
		       "floor (context, no targets)");
	for (t = 0; t < NPEERS; t++)
		report_ratios(cs, nc, runs, &peer_defs[t], false);
}

/*
 * What the kernel's dev path did: its generator's frames are recycled
 * pages whose contents a rewriting program changed (only their pointers
 * are reset), so its figure is the real work's only as far as the
 * program's own count says. uxdp's dev path checks every verdict.
 */
static void report_counts(struct bcase *cs, unsigned int nc)
{
	unsigned int i, j;

	for (i = 0; i < nc; i++) {
		struct bcase *c = &cs[i];
		uint64_t n = 0, tested = 0, dev;

		if (c->side != SIDE_KERNEL || c->path != PATH_DEV ||
		    !c->p->count_map || !c->sent)
			continue;
		if (kbpf_map_sum_u64(c->k, c->p->count_map, c->p->count_key,
				     &n))
			continue;
		/* The object's count has the test path's calls too, each on a
		 * fresh packet whose verdict was checked. */
		for (j = 0; j < nc; j++)
			if (cs[j].p == c->p && cs[j].side == SIDE_KERNEL &&
			    cs[j].path == PATH_TEST)
				tested += cs[j].sent;
		dev = n > tested ? n - tested : 0;
		report_note("bpf", "%s on kernel, dev path: the program "
			    "counted %llu of the %llu frames sent as it should "
			    "(%.1f%%)%s", c->p->name, (unsigned long long)dev,
			    (unsigned long long)c->sent,
			    100.0 * (double)dev / (double)c->sent,
			    dev < c->sent / 100 * 99 ? ": the generator reuses "
			    "pages the program rewrote, so the rest took a "
			    "cheaper path and the figure is a floor of the "
			    "kernel's cost, not its cost; the test path's "
			    "(a fresh packet a call) is the one to compare" :
			    "");
	}
}

int bench_bpf(const struct bench_opts *o)
{
	const char *dir = bpf_dir(o);
	struct bprog_state st[NPROGS];
	struct bcase *cs;
	struct bench_variant *v;
	unsigned char pkt[BPF_PKT_LEN];
	unsigned int i, s, pa, nc = 0, nv = 0, failed = 0;
	uint64_t ops = o->ops ? o->ops : BENCH_BPF_DEFAULT_OPS;
	int ret = 0;

	report_heading("bpf: XDP eBPF programs, per packet, every engine");
	if (!dir) {
		report_warn("bpf", "skipped: this build has no eBPF objects "
			    "(needs clang and libbpf-dev; or --objects DIR)");
		return 0;
	}
	bpf_packet(pkt);
	cs = calloc(NPROGS * NSIDES * NPATHS, sizeof(*cs));
	v = calloc(NPROGS * NSIDES * NPATHS, sizeof(*v));
	if (!cs || !v) {
		free(cs);
		free(v);
		bench_fail("bpf", "out of memory");
		return 1;
	}
	for (i = 0; i < NPROGS; i++) {
		prog_state_setup(dir, &bprogs[i], &st[i], o->no_dpdk, pkt);
		for (s = 0; s < NSIDES; s++) {
			if (st[i].unavailable[s]) {
				report_note("bpf", "%s on %s: skipped: %s",
					    bprogs[i].name, side_names[s],
					    st[i].why[s]);
				continue;
			}
			for (pa = 0; pa < NPATHS; pa++) {
				struct bcase *c = &cs[nc];
				int err;

				if (!side_on_path((enum side)s, (enum path)pa))
					continue;
				if (bprogs[i].dev_only && pa == PATH_RUN) {
					if (s == SIDE_JIT)
						report_note("bpf", "%s on the "
							    "%s path: skipped: "
							    "it rewrites the "
							    "packet; the dev "
							    "and test paths "
							    "give each run a "
							    "fresh one",
							    bprogs[i].name,
							    path_names[pa]);
					continue;
				}
				if (s == SIDE_KERNEL && pa == PATH_DEV &&
				    st[i].kv_err < 0) {
					bench_fail("bpf", "%s on kernel, dev "
						   "path: %s", bprogs[i].name,
						   st[i].kv_why);
					ret = 1;
					continue;
				}
				if (s == SIDE_KERNEL && pa == PATH_DEV &&
				    !st[i].kv) {
					report_note("bpf", "%s on kernel, dev "
						    "path: skipped: %s",
						    bprogs[i].name,
						    st[i].kv_why);
					continue;
				}
				c->p = &bprogs[i];
				c->side = (enum side)s;
				c->path = (enum path)pa;
				snprintf(c->label, sizeof(c->label), "bpf %s %s %s",
					 c->p->name, path_names[pa],
					 side_names[s]);
				err = case_setup(c, &st[i], pkt);
				if (err) {
					bench_fail("bpf", "%s: set-up: %s",
						   c->label, uxdp_errmsg()[0] ?
						   uxdp_errmsg() :
						   strerror(-err));
					case_teardown(c);
					memset(c, 0, sizeof(*c));
					ret = 1;
					continue;
				}
				/* The interpreters take 5-10x as long a run:
				 * a quarter of the packets is as exact. */
				v[nv] = (struct bench_variant){
					.label = c->label,
					.run = run_case,
					.arg = c,
					.ops = s == SIDE_INTERP ||
					       s == SIDE_DPDK_INTERP ?
					       (ops + 3) / 4 : ops,
					.nmetrics = 1,
				};
				/* A call per run there: a sixteenth. */
				if (bprogs[i].dev_only && pa == PATH_TEST)
					v[nv].ops = (v[nv].ops + 15) / 16;
				c->v = &v[nv++];
				nc++;
			}
		}
	}
	report_note("bpf", "%llu packets (runs) per run, a quarter of them for "
		    "the interpreters; median of %u rounds, "
		    "all %u variants interleaved; 64-byte UDP/IPv4 packet; "
		    "programs from %s", (unsigned long long)ops, o->runs, nv,
		    dir);
	report_note("bpf", "dev: null device -> program -> verdict, "
		    "uxdp_dev_poll budget %d; run: uxdp_prog_run on one "
		    "buffer (DPDK: rte_bpf_exec on a context of u64 fields); "
		    "test: uxdp_bpf_prog_test_run / BPF_PROG_TEST_RUN with "
		    "repeat, timed around the call", BPF_BUDGET);
	report_note("bpf", "cost = figure minus the same side's drop on the "
		    "same path, per round; ratios are medians of per-round "
		    "ratios of costs; the checks cannot be turned off (no API "
		    "for it): their count is in the safety rows, their cost "
		    "in instructions with --instructions");
	report_note("bpf", "DPDK: librte_bpf (no EAL needed) runs the "
		    "-mcpu=v1 object with the packet as its argument: the "
		    "context loads of data and data_end rewritten, arrays as "
		    "memory, bpf_map_lookup_elem an external function, globals "
		    "external variables (dpdk_bpf.c)");
	for (i = 0; i < NPROGS; i++)
		report_note("bpf", "%s: %s", bprogs[i].name, bprogs[i].what);
	bench_run(v, nv, o->runs, "bpf", o->quiet);
	failed = bench_check(v, nv, "bpf");
	report_figures(cs, nc, o->runs);
	report_counts(cs, nc);
	failed += report_safety(st);
	if (o->instructions)
		failed += bpf_instructions(o, dir, st);
	report_flush();

	for (i = 0; i < nc; i++)
		case_teardown(&cs[i]);
	bench_variants_free(v, nv);
	for (i = 0; i < NPROGS; i++)
		prog_state_teardown(&st[i]);
	kveth_cleanup();
	free(cs);
	free(v);
	return failed || ret ? 1 : 0;
}
