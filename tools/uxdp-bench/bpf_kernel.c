/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: the kernel's side (bpf_kernel.h), with libbpf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int err;

	libbpf_set_print(kbpf_print);
	obj = bpf_object__open_file(path, NULL);
	err = libbpf_get_error(obj);
	if (err) {
		snprintf(why, whylen, "%s: libbpf cannot open it: %s", path,
			 strerror(-err));
		return NULL;
	}
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

#else /* !UXDP_BENCH_HAVE_LIBBPF */

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
