/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: the kernel's side (bpf_kernel.h), with libbpf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bpf_kernel.h"

void kbpf_maps_free(struct kbpf_map *maps, uint32_t n)
{
	uint32_t i;

	if (!maps)
		return;
	for (i = 0; i < n; i++) {
		free(maps[i].name);
		free(maps[i].init);
	}
	free(maps);
}

#ifdef UXDP_BENCH_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct kbpf {
	struct bpf_object *obj;
	int fd;
};

/* libbpf's messages would garble the report; UXDP_BPF_DEBUG=1 shows
 * them, as the bpf layer's. */
static int kbpf_print(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	static int debug = -1;

	if (debug < 0) {
		const char *d = getenv("UXDP_BPF_DEBUG");

		debug = d && *d && strcmp(d, "0");
	}
	if (!debug || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static struct bpf_object *kbpf_open(const char *path, const char *func,
				    struct bpf_program **prog, char *why,
				    size_t whylen)
{
	struct bpf_program *p;
	struct bpf_object *obj;
	struct bpf_map *m;
	int err;

	libbpf_set_print(kbpf_print);
	obj = bpf_object__open_file(path, NULL);
	err = libbpf_get_error(obj);
	if (err) {
		snprintf(why, whylen, "%s: libbpf cannot open it: %s", path,
			 strerror(-err));
		return NULL;
	}
	/* Maps pinned by name (xdp-tools') are the bench's own here: no
	 * bpffs needed, nothing left behind, nothing shared. */
	bpf_object__for_each_map(m, obj)
		bpf_map__set_pin_path(m, NULL);
	*prog = NULL;
	bpf_object__for_each_program(p, obj) {
		bool mine = !strcmp(bpf_program__name(p), func);

		bpf_program__set_autoload(p, mine);
		if (mine)
			*prog = p;
	}
	if (!*prog) {
		snprintf(why, whylen, "%s: no program %s", path, func);
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

int kbpf_load(const char *path, const char *func, struct kbpf **out,
	      char *why, size_t whylen)
{
	struct bpf_program *prog;
	struct kbpf *k;
	int err;

	*out = NULL;
	if (geteuid() != 0) {
		snprintf(why, whylen, "not root: BPF_PROG_TEST_RUN needs "
			 "CAP_BPF and CAP_NET_ADMIN");
		return 1;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->obj = kbpf_open(path, func, &prog, why, whylen);
	if (!k->obj) {
		free(k);
		return -EINVAL;
	}
	err = bpf_object__load(k->obj);
	if (err) {
		snprintf(why, whylen, "%s: the kernel refused %s: %s (run "
			 "with UXDP_BPF_DEBUG=1 for the verifier's log)", path,
			 func, strerror(-err));
		kbpf_close(k);
		return err < 0 ? err : -EINVAL;
	}
	k->fd = bpf_program__fd(prog);
	*out = k;
	return 0;
}

void kbpf_close(struct kbpf *k)
{
	if (!k)
		return;
	bpf_object__close(k->obj);
	free(k);
}

int kbpf_test_run(struct kbpf *k, const void *pkt, uint32_t len,
		  uint32_t repeat, uint32_t *retval, uint32_t *kns,
		  uint64_t *ticks)
{
	unsigned char out[256];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = pkt, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out),
		    .repeat = repeat);
	uint64_t t0, t1;
	int err;

	t0 = bench_tsc_begin();
	err = bpf_prog_test_run_opts(k->fd, &t);
	t1 = bench_tsc_end();
	if (err)
		return -errno;
	*retval = t.retval;
	*kns = t.duration;
	*ticks = t1 - t0;
	return 0;
}

int kbpf_linked_insns(const char *path, const char *func, void **insns,
		      uint32_t *ninsns, struct kbpf_map **maps, uint32_t *nmaps,
		      char *why, size_t whylen)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	struct kbpf_map *km = NULL;
	const struct bpf_insn *in;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *m;
	uint32_t n = 0, i = 0;
	size_t cnt;
	int err;

	*insns = NULL;
	*maps = NULL;
	obj = kbpf_open(path, func, &prog, why, whylen);
	if (!obj)
		return -EINVAL;
	/* The light-skeleton loader: libbpf links and relocates, records
	 * what it would do in a loader program, and calls no bpf(). */
	err = bpf_object__gen_loader(obj, &gen);
	if (!err)
		err = bpf_object__load(obj);
	if (err) {
		snprintf(why, whylen, "%s: libbpf could not link %s: %s", path,
			 func, strerror(-err));
		goto out;
	}
	in = bpf_program__insns(prog);
	cnt = bpf_program__insn_cnt(prog);
	bpf_object__for_each_map(m, obj)
		n++;
	km = calloc(n + 1, sizeof(*km));
	*insns = malloc(cnt * sizeof(*in));
	if (!km || !*insns) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(*insns, in, cnt * sizeof(*in));
	bpf_object__for_each_map(m, obj) {
		struct kbpf_map *k = &km[i++];
		const void *init;
		size_t sz = 0;

		k->name = strdup(bpf_map__name(m));
		k->type = bpf_map__type(m);
		k->value_size = bpf_map__value_size(m);
		k->max_entries = bpf_map__max_entries(m);
		init = bpf_map__initial_value(m, &sz);
		if (init && sz) {
			k->init = malloc(sz);
			if (k->init) {
				memcpy(k->init, init, sz);
				k->init_size = sz;
			}
		}
		if (!k->name || (init && sz && !k->init)) {
			err = -ENOMEM;
			goto out;
		}
	}
	*ninsns = (uint32_t)cnt;
	*maps = km;
	*nmaps = n;
	km = NULL;
out:
	kbpf_maps_free(km, n);
	if (err) {
		free(*insns);
		*insns = NULL;
	}
	bpf_object__close(obj);
	return err;
}

#ifdef UXDP_BENCH_HAVE_TESTBED
#include <linux/if_link.h>
#include <net/if.h>

#include "testbed.h"

/* One testbed and namespace for every pair of the command. */
static struct tb *kv_tb;
static struct tb_ns *kv_ns;
static unsigned int kv_pairs, kv_open;

struct kveth {
	char a[16], b[16];
	int fd;
	struct tb_gen *gen;
};

static int kveth_attach(void *arg)
{
	struct kveth *v = arg;
	unsigned int ifindex = if_nametoindex(v->b);

	if (!ifindex)
		return -errno;
	return bpf_xdp_attach((int)ifindex, v->fd, XDP_FLAGS_DRV_MODE, NULL);
}

int kveth_open(struct kbpf *k, const void *pkt, uint32_t len, int cpu,
	       struct kveth **out, char *why, size_t whylen)
{
	struct tb_gen_opts go = { .cpu = cpu };
	struct tb_veth_opts vo = { .queues = 1 };
	struct kveth *v;
	int err;

	*out = NULL;
	if (!k) {
		snprintf(why, whylen, "the kernel did not load it");
		return 1;
	}
	if (!kv_tb) {
		err = tb_open(&kv_tb, 0);
		if (!err) {
			kv_ns = tb_ns_new(kv_tb, "bpf");
			err = kv_ns ? 0 : -errno;
		}
		if (err) {
			snprintf(why, whylen, "netns testbed: %s", tb_errmsg());
			tb_close(kv_tb);
			kv_tb = NULL;
			return err == -EPERM ? 1 : err;
		}
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->fd = k->fd;
	snprintf(v->a, sizeof(v->a), "bpfa%u", kv_pairs);
	snprintf(v->b, sizeof(v->b), "bpfb%u", kv_pairs++);
	kv_open++;
	err = tb_veth_add(kv_tb, kv_ns, v->a, kv_ns, v->b, &vo);
	if (err) {
		snprintf(why, whylen, "veth pair: %s", tb_errmsg());
	} else {
		err = tb_ns_run(kv_ns, kveth_attach, v);
		if (err)
			snprintf(why, whylen, "attaching to %s (native XDP): "
				 "%s", v->b, strerror(-err));
	}
	if (!err) {
		err = tb_gen_open(kv_tb, kv_ns, v->a, pkt, len, &go, &v->gen);
		if (err) {
			snprintf(why, whylen, "live-frames generator: %s",
				 tb_errmsg());
			if (err == -EOPNOTSUPP)
				err = 1;
		}
	}
	if (err) {
		kveth_close(v);
		return err;
	}
	*out = v;
	return 0;
}

static int kveth_seen(struct kveth *v, uint64_t *n)
{
	return tb_link_stat(kv_ns, v->b, "rx_queue_0_xdp_packets", n);
}

int kveth_run(struct kveth *v, uint64_t count, uint64_t *ticks, char *why,
	      size_t whylen)
{
	const struct timespec us = { .tv_nsec = 100000 };
	uint64_t c0, c = 0, last, t0, t1;
	int err, still = 0, i;

	err = kveth_seen(v, &c0);
	if (err) {
		snprintf(why, whylen, "%s: no rx_queue_0_xdp_packets: %s", v->b,
			 strerror(-err));
		return err;
	}
	t0 = bench_tsc_begin();
	err = tb_gen_send(v->gen, count);
	if (err) {
		snprintf(why, whylen, "generator: %s", tb_errmsg());
		return err;
	}
	/* The far end's NAPI may still be at work: until every frame is
	 * counted, or the count stops moving for 5 ms (at most 2 s). */
	last = c0;
	for (i = 0; i < 20000; i++) {
		err = kveth_seen(v, &c);
		if (err || c - c0 >= count)
			break;
		still = c == last ? still + 1 : 0;
		if (still >= 50)
			break;
		last = c;
		nanosleep(&us, NULL);
	}
	t1 = bench_tsc_end();
	if (c - c0 < count) {
		snprintf(why, whylen, "%s: its XDP saw %llu of %llu frames",
			 v->b, (unsigned long long)(c - c0),
			 (unsigned long long)count);
		return -EIO;
	}
	*ticks = t1 - t0;
	return 0;
}

void kveth_close(struct kveth *v)
{
	if (!v)
		return;
	tb_gen_close(v->gen);
	tb_link_del(kv_ns, v->a);
	free(v);
	kv_open--;
}

void kveth_cleanup(void)
{
	if (kv_open || !kv_tb)
		return;
	tb_close(kv_tb);
	kv_tb = NULL;
	kv_ns = NULL;
}

#endif /* UXDP_BENCH_HAVE_TESTBED */

int kbpf_map_update(struct kbpf *k, const char *map, const void *key,
		    const void *value)
{
	struct bpf_map *m = bpf_object__find_map_by_name(k->obj, map);

	if (!m || bpf_map__fd(m) < 0)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(m), key, value, BPF_ANY) ?
	       -errno : 0;
}

int kbpf_map_sum_u64(struct kbpf *k, const char *map, uint32_t key,
		     uint64_t *sum)
{
	struct bpf_map *m = bpf_object__find_map_by_name(k->obj, map);
	int ncpu = libbpf_num_possible_cpus(), c;
	uint32_t vs, stride;
	uint8_t *v;

	if (!m || bpf_map__fd(m) < 0 || ncpu <= 0)
		return -ENOENT;
	vs = bpf_map__value_size(m);
	stride = (vs + 7) & ~7U;
	if (vs < 8)
		return -EINVAL;
	v = calloc((size_t)ncpu, stride);
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(m), &key, v)) {
		free(v);
		return -errno;
	}
	*sum = 0;
	for (c = 0; c < ncpu; c++) {
		uint64_t w;

		memcpy(&w, v + (size_t)c * stride, 8);
		*sum += w;
	}
	free(v);
	return 0;
}

#else /* !UXDP_BENCH_HAVE_LIBBPF */

int kbpf_map_sum_u64(struct kbpf *k, const char *map, uint32_t key,
		     uint64_t *sum)
{
	(void)k, (void)map, (void)key, (void)sum;
	return -EOPNOTSUPP;
}

int kbpf_map_update(struct kbpf *k, const char *map, const void *key,
		    const void *value)
{
	(void)k, (void)map, (void)key, (void)value;
	return -EOPNOTSUPP;
}

int kbpf_load(const char *path, const char *func, struct kbpf **out,
	      char *why, size_t whylen)
{
	(void)path;
	(void)func;
	*out = NULL;
	snprintf(why, whylen, "not built (needs libbpf-dev)");
	return 1;
}

void kbpf_close(struct kbpf *k)
{
	(void)k;
}

int kbpf_test_run(struct kbpf *k, const void *pkt, uint32_t len,
		  uint32_t repeat, uint32_t *retval, uint32_t *kns,
		  uint64_t *ticks)
{
	(void)k, (void)pkt, (void)len, (void)repeat, (void)retval;
	(void)kns, (void)ticks;
	return -EOPNOTSUPP;
}

int kbpf_linked_insns(const char *path, const char *func, void **insns,
		      uint32_t *ninsns, struct kbpf_map **maps, uint32_t *nmaps,
		      char *why, size_t whylen)
{
	(void)path, (void)func, (void)ninsns, (void)nmaps;
	*insns = NULL;
	*maps = NULL;
	snprintf(why, whylen, "not built (needs libbpf-dev)");
	return -EOPNOTSUPP;
}

#endif

#ifndef UXDP_BENCH_HAVE_TESTBED

int kveth_open(struct kbpf *k, const void *pkt, uint32_t len, int cpu,
	       struct kveth **out, char *why, size_t whylen)
{
	(void)k, (void)pkt, (void)len, (void)cpu;
	*out = NULL;
	snprintf(why, whylen, "not built (needs libbpf-dev and the netns testbed)");
	return 1;
}

int kveth_run(struct kveth *v, uint64_t count, uint64_t *ticks, char *why,
	      size_t whylen)
{
	(void)v, (void)count, (void)ticks, (void)why, (void)whylen;
	return -EOPNOTSUPP;
}

void kveth_close(struct kveth *v)
{
	(void)v;
}

void kveth_cleanup(void)
{
}

#endif
