/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bpf layer's loader: the eBPF corpus of tests/bpf/ (built by clang at
 * build time) opened from files and from memory, linked with no bpf()
 * system call, its maps and global data, CO-RE, the refusals and their
 * messages, and the objects Debian installs (/usr/lib/<triplet>/bpf/).
 *
 * T_BPF_DUMP=NAME prints the linked instructions of corpus object NAME.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "t_helpers.h"

#include <uxdp/bpf.h>
#include <uxdp/driver.h>
#include <uxdp/null.h>
#include <uxdp/uxdp.h>

#include "../src/bpf/bpf_internal.h"

#ifndef T_BPF_DIR
#error "T_BPF_DIR: the built corpus"
#endif

#define DEBIAN_BPF_DIR	"/usr/lib/x86_64-linux-gnu/bpf"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char path_buf[512];

static const char *corpus(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s.o", T_BPF_DIR, name);
	return path_buf;
}

static uint8_t *read_all(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;

	assert_int_equal(stat(path, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), st.st_size);
	fclose(f);
	*size = (size_t)st.st_size;
	return buf;
}

static struct uxdp_bpf_object *open_corpus(const char *name)
{
	struct uxdp_bpf_object *obj = uxdp_bpf_object_open(corpus(name), NULL);

	if (!obj)
		fail_msg("open %s: %s", name, uxdp_errmsg());
	return obj;
}

static void dump(struct uxdp_bpf_object *obj)
{
	struct uxdp_bpf_program *p = NULL;
	struct uxdp_bpf_map *m = NULL;
	char buf[64];
	uint32_t i, len;

	while ((m = uxdp_bpf_object_next_map(obj, m)))
		printf("map %s type %u key %u value %u max %u flags 0x%x\n",
		       uxdp_bpf_map_name(m), uxdp_bpf_map_type(m),
		       uxdp_bpf_map_key_size(m), uxdp_bpf_map_value_size(m),
		       uxdp_bpf_map_max_entries(m), uxdp_bpf_map_flags(m));
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		const struct bpf_insn *in = uxdp_bpf_program_insns(p, &len);
		UXDP_DECLARE_OPTS(uxdp_bpf_prog_info, info);
		struct uxdp_prog *prog = uxdp_bpf_program_prog(p);

		printf("prog %s sec %s type %u attach %u\n",
		       uxdp_bpf_program_name(p), uxdp_bpf_program_section(p),
		       uxdp_bpf_program_type(p),
		       uxdp_bpf_program_attach_type(p));
		if (prog && !uxdp_bpf_prog_info(prog, &info))
			printf("  engine %s, %u insns (%u after fixups), jit %u "
			       "bytes; accesses %u: %u proven, %u checked; "
			       "%u back edges\n",
			       info.engine == UXDP_BPF_ENGINE_JIT ? "jit" :
								     "interp",
			       info.insns, info.xlated_insns, info.jit_size,
			       info.accesses, info.proven, info.checked,
			       info.back_edges);
		uxdp_prog_put(prog);
		for (i = 0; in && i < len; i++) {
			uxdp_bpf_insn_str(&in[i], buf, sizeof(buf));
			printf("  %3u: %02x %u %u %5d %11d  %s\n", i, in[i].code,
			       in[i].dst_reg, in[i].src_reg, in[i].off,
			       in[i].imm, buf);
		}
	}
}

static void load_ok(struct uxdp_bpf_object *obj)
{
	int err = uxdp_bpf_object_load(obj);

	if (err)
		fail_msg("load %s: %d %s", uxdp_bpf_object_name(obj), err,
			 uxdp_errmsg());
}

/* The instructions of program @name as linked. */
static const struct bpf_insn *linked(struct uxdp_bpf_object *obj,
				     const char *name, uint32_t *len)
{
	struct uxdp_bpf_program *p = uxdp_bpf_object_find_program(obj, name);
	const struct bpf_insn *in;

	assert_non_null(p);
	in = uxdp_bpf_program_insns(p, len);
	assert_non_null(in);
	assert_true(*len > 0);
	return in;
}

static const char *const corpus_objs[] = {
	"drop", "pass", "count", "count.v1", "parse_udp", "parse_udp.v1",
	"macswap", "loop", "loop.v1", "calls", "calls.v1", "rodata", "core",
	"sections", "oob", "helpers", "adjust", "printk", "ctx",
#ifdef T_BPF_HAVE_V4
	/* clang 18 or later at -mcpu=v4 (tests/CMakeLists.txt). */
	"count.v4", "parse_udp.v4", "loop.v4", "calls.v4", "macswap.v4",
	"core.v4", "rodata.v4",
#endif
};

/* Every corpus object opens from its file and from memory (a buffer
 * freed right after) with the same programs and maps. */
static void test_open_file_and_mem(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(corpus_objs); i++) {
		struct uxdp_bpf_object *f, *m;
		struct uxdp_bpf_program *pf = NULL, *pm = NULL;
		struct uxdp_bpf_map *mf = NULL, *mm = NULL;
		UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
				  .object_name = "mem");
		uint8_t *buf;
		size_t size;

		f = open_corpus(corpus_objs[i]);
		buf = read_all(corpus(corpus_objs[i]), &size);
		o.object_name = uxdp_bpf_object_name(f);
		m = uxdp_bpf_object_open_mem(buf, size, &o);
		memset(buf, 0, size);
		free(buf);
		assert_non_null(m);
		assert_string_equal(uxdp_bpf_object_name(m),
				    uxdp_bpf_object_name(f));
		for (;;) {
			pf = uxdp_bpf_object_next_program(f, pf);
			pm = uxdp_bpf_object_next_program(m, pm);
			if (!pf || !pm)
				break;
			assert_string_equal(uxdp_bpf_program_name(pf),
					    uxdp_bpf_program_name(pm));
			assert_string_equal(uxdp_bpf_program_section(pf),
					    uxdp_bpf_program_section(pm));
		}
		assert_null(pf);
		assert_null(pm);
		for (;;) {
			mf = uxdp_bpf_object_next_map(f, mf);
			mm = uxdp_bpf_object_next_map(m, mm);
			if (!mf || !mm)
				break;
			assert_string_equal(uxdp_bpf_map_name(mf),
					    uxdp_bpf_map_name(mm));
		}
		assert_null(mf);
		assert_null(mm);
		/* Both link to the same instructions. */
		load_ok(f);
		load_ok(m);
		pf = pm = NULL;
		while ((pf = uxdp_bpf_object_next_program(f, pf))) {
			const struct bpf_insn *a, *b;
			uint32_t la, lb;

			pm = uxdp_bpf_object_next_program(m, pm);
			a = uxdp_bpf_program_insns(pf, &la);
			b = uxdp_bpf_program_insns(pm, &lb);
			assert_int_equal(la, lb);
			if (la)
				assert_memory_equal(a, b, la * sizeof(*a));
		}
		uxdp_bpf_object_close(f);
		uxdp_bpf_object_close(m);
	}
}

static void test_open_errors(void **state)
{
	static const uint8_t junk[64] = "this is not an ELF file";
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o);
	char dir[] = "/tmp/t_bpf_load_XXXXXX";
	uint8_t *buf;
	size_t size;

	(void)state;
	errno = 0;
	assert_null(uxdp_bpf_object_open(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(uxdp_bpf_object_open("/nonexistent/x.o", NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(mkdtemp(dir));
	assert_null(uxdp_bpf_object_open(dir, NULL));
	assert_int_equal(errno, EISDIR);
	rmdir(dir);
	assert_null(uxdp_bpf_object_open_mem(junk, sizeof(junk), NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "not an ELF file"));
	assert_null(uxdp_bpf_object_open_mem(NULL, 10, NULL));
	assert_int_equal(errno, EINVAL);
	/* An ELF file for another machine: this test program itself. */
	buf = read_all("/proc/self/exe", &size);
	assert_null(uxdp_bpf_object_open_mem(buf, size, NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "not a BPF object"));
	free(buf);
	/* Cut short: the section headers are gone. */
	buf = read_all(corpus("count"), &size);
	assert_null(uxdp_bpf_object_open_mem(buf, size / 2, NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "outside the file"));
	free(buf);
	/* Options. */
	o.flags = 2;	/* no such flag */
	assert_null(uxdp_bpf_object_open(corpus("drop"), &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "flags"));
	o.flags = 0;
	o.engine = 7;
	assert_null(uxdp_bpf_object_open(corpus("drop"), &o));
	assert_int_equal(errno, EINVAL);
	o.engine = 0;
	o.sz = 2;
	assert_null(uxdp_bpf_object_open(corpus("drop"), &o));
	assert_int_equal(errno, EINVAL);
}

/* Every section name an XDP program has; programs of other types are
 * there but skipped, and the map only they use is left out. */
static void test_sections(void **state)
{
	static const struct {
		const char *name, *sec;
		uint32_t attach;
	} want[] = {
		{ "sec_xdp", "xdp", BPF_XDP },
		{ "sec_frags", "xdp.frags", BPF_XDP },
		{ "sec_devmap", "xdp/devmap", BPF_XDP_DEVMAP },
		{ "sec_cpumap", "xdp/cpumap", BPF_XDP_CPUMAP },
		{ "sec_old", "xdp_prog", BPF_XDP },
	};
	struct uxdp_bpf_object *obj = open_corpus("sections");
	struct uxdp_bpf_program *p;
	struct uxdp_bpf_map *m;
	uint64_t v = 0;
	uint32_t k = 0;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		p = uxdp_bpf_object_find_program(obj, want[i].name);
		assert_non_null(p);
		assert_string_equal(uxdp_bpf_program_section(p), want[i].sec);
		assert_int_equal(uxdp_bpf_program_type(p), BPF_PROG_TYPE_XDP);
		assert_int_equal(uxdp_bpf_program_attach_type(p),
				 want[i].attach);
		assert_true(uxdp_bpf_program_autoload(p));
	}
	p = uxdp_bpf_object_find_program(obj, "sec_tp");
	assert_non_null(p);
	assert_int_equal(uxdp_bpf_program_type(p), BPF_PROG_TYPE_TRACEPOINT);
	assert_false(uxdp_bpf_program_autoload(p));
	assert_int_equal(uxdp_bpf_program_set_autoload(p, true), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "not an XDP program"));
	p = uxdp_bpf_object_find_program(obj, "sec_tc");
	assert_int_equal(uxdp_bpf_program_type(p), BPF_PROG_TYPE_SCHED_CLS);
	assert_false(uxdp_bpf_program_autoload(p));
	assert_null(uxdp_bpf_object_find_program(obj, "nope"));
	assert_int_equal(errno, ENOENT);
	/* Before load there is nothing to run. */
	assert_null(uxdp_bpf_object_prog(obj, "sec_xdp"));
	assert_int_equal(errno, EAGAIN);

	load_ok(obj);
	/* Skipped programs are not linked. */
	assert_null(uxdp_bpf_program_insns(
		uxdp_bpf_object_find_program(obj, "sec_tp"), &k));
	assert_int_equal(uxdp_bpf_program_set_autoload(
		uxdp_bpf_object_find_program(obj, "sec_xdp"), false), -EINVAL);
	/* The hash map only the tracepoint uses is created all the same
	 * (libbpf creates every map), and empty. */
	m = uxdp_bpf_object_find_map(obj, "exceptions");
	assert_non_null(m);
	assert_int_equal(uxdp_bpf_map_type(m), BPF_MAP_TYPE_HASH);
	k = 0;
	assert_int_equal(uxdp_bpf_map_lookup(m, &k, &v, 0), -ENOENT);
	uxdp_bpf_object_close(obj);
}

/* An XDP program left out by the caller is not linked. */
static void test_autoload_off(void **state)
{
	struct uxdp_bpf_object *obj = open_corpus("sections");
	struct uxdp_bpf_program *p = NULL;
	uint32_t len;

	(void)state;
	while ((p = uxdp_bpf_object_next_program(obj, p)))
		if (strcmp(uxdp_bpf_program_name(p), "sec_frags") &&
		    uxdp_bpf_program_autoload(p))
			assert_int_equal(uxdp_bpf_program_set_autoload(p,
								false), 0);
	load_ok(obj);
	p = uxdp_bpf_object_find_program(obj, "sec_frags");
	assert_non_null(uxdp_bpf_program_insns(p, &len));
	assert_int_equal(len, 2);
	p = uxdp_bpf_object_find_program(obj, "sec_xdp");
	assert_null(uxdp_bpf_program_insns(p, &len));
	uxdp_bpf_object_close(obj);

	/* All off: nothing to load, said so. */
	obj = open_corpus("pass");
	p = uxdp_bpf_object_find_program(obj, "xdp_pass");
	assert_int_equal(uxdp_bpf_program_set_autoload(p, false), 0);
	assert_int_equal(uxdp_bpf_object_load(obj), -ENOENT);
	assert_non_null(strstr(uxdp_errmsg(), "no XDP program"));
	assert_int_equal(uxdp_bpf_object_load(obj), -EINVAL);
	uxdp_bpf_object_close(obj);
}

static bool is_lddw(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/* count: maps by index (lddw src 5), the array created, the kernel's
 * control plane on ARRAY and PERCPU_ARRAY. */
static void test_count_maps(void **state)
{
	struct uxdp_bpf_object *obj = open_corpus("count");
	struct uxdp_bpf_map *counters, *per_cpu;
	int ncpus = uxdp_bpf_num_possible_cpus();
	const struct bpf_insn *in;
	uint64_t v, *pv;
	uint32_t k, nk, len, i, refs[2] = { 0 };

	(void)state;
	counters = uxdp_bpf_object_find_map(obj, "counters");
	per_cpu = uxdp_bpf_object_find_map(obj, "per_cpu");
	assert_non_null(counters);
	assert_non_null(per_cpu);
	assert_ptr_equal(uxdp_bpf_object_next_map(obj, NULL), counters);
	assert_ptr_equal(uxdp_bpf_object_next_map(obj, counters), per_cpu);
	assert_null(uxdp_bpf_object_next_map(obj, per_cpu));
	assert_int_equal(uxdp_bpf_map_type(counters), BPF_MAP_TYPE_ARRAY);
	assert_int_equal(uxdp_bpf_map_key_size(counters), 4);
	assert_int_equal(uxdp_bpf_map_value_size(counters), 8);
	assert_int_equal(uxdp_bpf_map_max_entries(counters), 2);
	assert_int_equal(uxdp_bpf_map_type(per_cpu),
			 BPF_MAP_TYPE_PERCPU_ARRAY);
	/* Not created before load; not global data. */
	k = 0;
	assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, 0), -EINVAL);
	assert_null(uxdp_bpf_map_initial_value(counters, NULL));
	assert_int_equal(errno, EINVAL);

	load_ok(obj);
	in = linked(obj, "xdp_count", &len);
	for (i = 0; i < len; i++) {
		if (!is_lddw(&in[i]))
			continue;
		assert_int_equal(in[i].src_reg, BPF_PSEUDO_MAP_IDX);
		assert_in_range(in[i].imm, 0, 1);
		refs[in[i].imm]++;
		i++;
	}
	assert_int_equal(refs[0], 2);
	assert_int_equal(refs[1], 1);

	/* ARRAY: every element exists and starts at zero. */
	for (k = 0; k < 2; k++) {
		v = 1;
		assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, 0), 0);
		assert_int_equal(v, 0);
	}
	k = 2;
	assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, 0), -ENOENT);
	v = 42;
	assert_int_equal(uxdp_bpf_map_update(counters, &k, &v, BPF_ANY),
			 -E2BIG);
	k = 1;
	assert_int_equal(uxdp_bpf_map_update(counters, &k, &v, BPF_NOEXIST),
			 -EEXIST);
	assert_int_equal(uxdp_bpf_map_update(counters, &k, &v, BPF_F_LOCK),
			 -EINVAL);
	assert_int_equal(uxdp_bpf_map_update(counters, &k, &v, 8), -EINVAL);
	assert_int_equal(uxdp_bpf_map_update(counters, &k, &v, BPF_EXIST), 0);
	v = 0;
	assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, 0), 0);
	assert_int_equal(v, 42);
	assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, BPF_F_LOCK),
			 -EINVAL);
	assert_int_equal(uxdp_bpf_map_lookup(counters, &k, &v, 2), -EINVAL);
	assert_int_equal(uxdp_bpf_map_delete(counters, &k), -EINVAL);
	/* get_next_key: NULL and out of range give 0, the last ENOENT. */
	assert_int_equal(uxdp_bpf_map_get_next_key(counters, NULL, &nk), 0);
	assert_int_equal(nk, 0);
	k = 0;
	assert_int_equal(uxdp_bpf_map_get_next_key(counters, &k, &nk), 0);
	assert_int_equal(nk, 1);
	k = 1;
	assert_int_equal(uxdp_bpf_map_get_next_key(counters, &k, &nk),
			 -ENOENT);
	k = 99;
	assert_int_equal(uxdp_bpf_map_get_next_key(counters, &k, &nk), 0);
	assert_int_equal(nk, 0);

	/* PERCPU_ARRAY: a slot per possible CPU, 8-byte rounded. */
	assert_int_equal(ncpus, UXDP_MAX_THREADS);
	pv = calloc((size_t)ncpus, sizeof(*pv));
	assert_non_null(pv);
	for (i = 0; i < (uint32_t)ncpus; i++)
		pv[i] = 1000 + i;
	k = 0;
	assert_int_equal(uxdp_bpf_map_update(per_cpu, &k, pv, BPF_ANY), 0);
	memset(pv, 0, (size_t)ncpus * sizeof(*pv));
	assert_int_equal(uxdp_bpf_map_lookup(per_cpu, &k, pv, 0), 0);
	for (i = 0; i < (uint32_t)ncpus; i++)
		assert_int_equal(pv[i], 1000 + i);
	k = 1;
	assert_int_equal(uxdp_bpf_map_lookup(per_cpu, &k, pv, 0), -ENOENT);
	assert_int_equal(uxdp_bpf_map_update(per_cpu, &k, pv, 0), -E2BIG);
	k = 0;
	assert_int_equal(uxdp_bpf_map_update(per_cpu, &k, pv, BPF_NOEXIST),
			 -EEXIST);
	free(pv);
	uxdp_bpf_object_close(obj);
}

/* A per-CPU value of 12 bytes is laid out in 16-byte slots for the user,
 * and a program's lookup sees the calling thread's slot. */
static void test_percpu_layout(void **state)
{
	struct uxdp_bpf_map *m;
	struct uxdp_bpf_build_map bm;
	int ncpus = uxdp_bpf_num_possible_cpus();
	uint8_t *buf;
	uint32_t k = 3, i;
	void *mine;

	(void)state;
	m = uxdp_bpf_map_new("pc", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 12, 4, 0);
	assert_non_null(m);
	assert_int_equal(uxdp_bpf_map_create(m), 0);
	buf = calloc((size_t)ncpus, 16);
	assert_non_null(buf);
	for (i = 0; i < (uint32_t)ncpus; i++)
		memset(buf + i * 16, (int)i + 1, 12);
	assert_int_equal(m->ops->map_update(m, &k, buf, 0), 0);
	memset(buf, 0, (size_t)ncpus * 16);
	assert_int_equal(m->ops->map_lookup(m, &k, buf, 0), 0);
	for (i = 0; i < (uint32_t)ncpus; i++)
		assert_int_equal(buf[i * 16 + 11], i + 1);
	mine = m->ops->map_lookup_elem(m, &k);
	assert_non_null(mine);
	assert_int_equal(*(uint8_t *)mine, uxdp_thread_index() + 1);
	/* Every value lies in the one area the safety pass bounds. */
	uxdp_bpf_map_build(m, &bm);
	assert_true((uint8_t *)mine >= bm.values &&
		    (uint8_t *)mine + 12 <= bm.values + bm.values_size);
	k = 4;
	assert_null(m->ops->map_lookup_elem(m, &k));
	free(buf);
	uxdp_bpf_map_free(m);
}

/* The kernel's checks of an array's definition. */
static void test_array_definitions(void **state)
{
	static const struct {
		uint32_t type, key, value, max, flags;
		int err;
	} defs[] = {
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, 0 },
		{ BPF_MAP_TYPE_ARRAY, 8, 8, 1, 0, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY, 4, 0, 1, 0, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 0, 0, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_MMAPABLE, 0 },
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_NO_PREALLOC, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 1,
		  BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG, -EINVAL },
		{ BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_WRONLY_PROG, -EOPNOTSUPP },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, BPF_F_MMAPABLE, -EINVAL },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 32769, 1, 0, -E2BIG },
		{ BPF_MAP_TYPE_ARRAY, 4, 1U << 20, 1U << 20, 0, -E2BIG },
		{ BPF_MAP_TYPE_CPUMAP, 4, 8, 1, 0, -EOPNOTSUPP },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		struct uxdp_bpf_map *m;

		m = uxdp_bpf_map_new("d", defs[i].type, defs[i].key,
				     defs[i].value, defs[i].max, defs[i].flags);
		assert_non_null(m);
		if (uxdp_bpf_map_create(m) != defs[i].err)
			fail_msg("definition %zu: %s", i, uxdp_errmsg());
		uxdp_bpf_map_free(m);
	}
}

/* Global data: set before load, as skeletons do; .rodata frozen after. */
static void test_global_data(void **state)
{
	struct uxdp_bpf_object *obj = open_corpus("rodata");
	struct uxdp_bpf_map *ro, *cfg, *data, *bss;
	uint8_t *val;
	uint64_t v;
	size_t size;
	uint32_t k = 0;

	(void)state;
	ro = uxdp_bpf_object_find_map(obj, "rodata.rodata");
	cfg = uxdp_bpf_object_find_map(obj, ".rodata.cfg");
	data = uxdp_bpf_object_find_map(obj, "rodata.data");
	bss = uxdp_bpf_object_find_map(obj, "rodata.bss");
	assert_non_null(ro);
	assert_non_null(cfg);
	assert_non_null(data);
	assert_non_null(bss);
	assert_true(uxdp_bpf_map_flags(ro) & BPF_F_RDONLY_PROG);
	assert_true(uxdp_bpf_map_flags(cfg) & BPF_F_RDONLY_PROG);
	assert_false(uxdp_bpf_map_flags(data) & BPF_F_RDONLY_PROG);
	/* .rodata: __u32 verdict at 0, __u8 mark at 4: the defaults. */
	val = uxdp_bpf_map_initial_value(ro, &size);
	assert_non_null(val);
	assert_int_equal(size, 5);
	assert_int_equal(*(uint32_t *)val, XDP_PASS);
	assert_int_equal(val[4], 0xab);
	*(uint32_t *)val = XDP_DROP;
	val[4] = 0x5a;
	val = uxdp_bpf_map_initial_value(data, &size);
	assert_non_null(val);
	assert_int_equal(size, 8);
	assert_int_equal(*(uint64_t *)val, 1);
	*(uint64_t *)val = 3;

	load_ok(obj);
	/* What was set is what the program starts with. */
	val = calloc(1, 8);
	assert_int_equal(uxdp_bpf_map_lookup(ro, &k, val, 0), 0);
	assert_int_equal(*(uint32_t *)val, XDP_DROP);
	assert_int_equal(val[4], 0x5a);
	assert_int_equal(uxdp_bpf_map_lookup(cfg, &k, val, 0), 0);
	assert_int_equal(*(uint32_t *)val, 7);
	assert_int_equal(uxdp_bpf_map_lookup(data, &k, &v, 0), 0);
	assert_int_equal(v, 3);
	/* Frozen: neither the map calls nor the pointer write it. */
	assert_int_equal(uxdp_bpf_map_update(ro, &k, val, 0), -EPERM);
	assert_non_null(strstr(uxdp_errmsg(), "frozen"));
	assert_int_equal(uxdp_bpf_map_update(cfg, &k, val, 0), -EPERM);
	assert_null(uxdp_bpf_map_initial_value(ro, &size));
	assert_int_equal(errno, EPERM);
	/* .data and .bss: live, writable from both sides. */
	v = 9;
	assert_int_equal(uxdp_bpf_map_update(data, &k, &v, 0), 0);
	val = (free(val), uxdp_bpf_map_initial_value(data, &size));
	assert_non_null(val);
	assert_int_equal(*(uint64_t *)val, 9);
	val = uxdp_bpf_map_initial_value(bss, &size);
	assert_non_null(val);
	assert_int_equal(*(uint64_t *)val, 0);
	uxdp_bpf_object_close(obj);
}

/* bpf-to-bpf calls: subprograms appended after the program, each call
 * landing on the first instruction of one. */
static void test_calls_linked(void **state)
{
	const char *const names[] = { "calls", "calls.v1" };
	size_t n;

	(void)state;
	for (n = 0; n < ARRAY_SIZE(names); n++) {
		struct uxdp_bpf_object *obj = open_corpus(names[n]);
		const struct bpf_insn *in;
		uint32_t len, i, calls = 0;

		load_ok(obj);
		in = linked(obj, "xdp_calls", &len);
		for (i = 0; i < len; i++) {
			int64_t t = (int64_t)i + 1 + in[i].imm;

			if (in[i].code != (BPF_JMP | BPF_CALL) ||
			    in[i].src_reg != BPF_PSEUDO_CALL)
				continue;
			calls++;
			assert_true(t > i && t < len);
			/* The instruction before a subprogram is an exit. */
			assert_int_equal(in[t - 1].code, BPF_JMP | BPF_EXIT);
		}
		assert_int_equal(calls, 3);
		uxdp_bpf_object_close(obj);
	}
}

/* CO-RE on flavours of xdp_md: the kernel's offsets and sizes. */
static void test_core_relocated(void **state)
{
	struct uxdp_bpf_object *obj = open_corpus("core");
	const struct bpf_insn *in;
	uint32_t len, i, ctx_loads = 0;

	(void)state;
	load_ok(obj);
	in = linked(obj, "xdp_core", &len);
	for (i = 0; i < len; i++) {
		uint8_t cls = BPF_CLASS(in[i].code);

		/* Every load through r1 (the context here) is a u32 at an
		 * offset of struct xdp_md: the 64-bit flavour's ldxdw
		 * became ldxw, the shuffled offsets the UAPI's. */
		if (cls == BPF_LDX && in[i].src_reg == BPF_REG_1) {
			assert_int_equal(in[i].code, BPF_LDX | BPF_MEM | BPF_W);
			assert_true(in[i].off == 0 || in[i].off == 4 ||
				    in[i].off == 16);
			ctx_loads++;
		}
		/* bpf_core_field_exists() became 1 (mov r3, 1). */
		assert_false(in[i].code == (BPF_JMP | BPF_CALL) &&
			     in[i].src_reg == 0);
	}
	assert_int_equal(ctx_loads, 5);
	uxdp_bpf_object_close(obj);
}

/* -mcpu=v1 objects have no 32-bit jumps; the v3 ones do. */
/* An instruction only cpu v4 has: sign-extending load or move, signed
 * division or modulo, an unconditional byte swap, a 32-bit-offset ja. */
static bool insn_v4(const struct bpf_insn *in)
{
	uint8_t c = in->code;

	if (BPF_CLASS(c) == BPF_LDX && BPF_MODE(c) == UXDP_BPF_MEMSX)
		return true;
	if ((BPF_CLASS(c) == BPF_ALU || BPF_CLASS(c) == BPF_ALU64) &&
	    BPF_OP(c) == BPF_MOV && in->off)
		return true;
	if ((BPF_CLASS(c) == BPF_ALU || BPF_CLASS(c) == BPF_ALU64) &&
	    (BPF_OP(c) == BPF_DIV || BPF_OP(c) == BPF_MOD) && in->off == 1)
		return true;
	if (c == (BPF_ALU64 | BPF_END))
		return true;
	return c == (BPF_JMP32 | BPF_JA);
}

static void test_cpu_versions(void **state)
{
	const char *const names[] = { "parse_udp", "parse_udp.v1",
#ifdef T_BPF_HAVE_V4
				      "parse_udp.v4",
#endif
	};
	size_t n;

	(void)state;
	for (n = 0; n < ARRAY_SIZE(names); n++) {
		struct uxdp_bpf_object *obj = open_corpus(names[n]);
		const struct bpf_insn *in;
		uint32_t len, i, jmp32 = 0, v4 = 0;

		load_ok(obj);
		in = linked(obj, "xdp_parse_udp", &len);
		for (i = 0; i < len; i++) {
			jmp32 += BPF_CLASS(in[i].code) == BPF_JMP32;
			v4 += insn_v4(&in[i]);
		}
		if (n == 1)
			assert_int_equal(jmp32, 0);
		else
			assert_true(jmp32 > 0);
		/* v4's byte swaps (bpf_ntohs) are its own instruction. */
		if (n == 2)
			assert_true(v4 > 0);
		else
			assert_int_equal(v4, 0);
		uxdp_bpf_object_close(obj);
	}
#ifndef T_BPF_HAVE_V4
	/* Loudly: the cpu v4 objects need clang 18 or later (clang-19). */
	print_message("  cpu v4 objects not built: no clang-19 or clang-18 "
		      "(scripts/deps.sh installs clang-19)\n");
	if (getenv("UXDP_CI") && strcmp(getenv("UXDP_CI"), "0"))
		fail_msg("UXDP_CI: cpu v4 objects must be built here");
#endif
}

/*
 * The objects fuzz_bpf_elf found (tests/fuzz/corpus/bpf_elf/regress-*): each
 * is refused with its errno and a message saying why, at open or at load,
 * never a crash.
 */
static void test_fuzz_regressions(void **state)
{
	static const struct {
		const char *file;
		bool at_load;
		int err;
		const char *msg;
	} r[] = {
		{ "regress-misaligned-code", false, EINVAL,
		  "not 8-byte aligned" },
		{ "regress-huge-bss", false, E2BIG,
		  "more than an array value may hold (4194304)" },
		{ "regress-call-no-reloc", false, EINVAL,
		  "the call at instruction 0 has no relocation" },
		{ "regress-call-reloc-skipped-name", false, EINVAL,
		  "its relocation is in .rel.debug_addr, a section libbpf "
		  "skips by its name" },
		{ "regress-struct-ops-in-maps", true, EOPNOTSUPP,
		  "map port_count: a struct_ops map" },
		{ "regress-cut-lddw-message", true, EINVAL,
		  "(lddw %r1, 0x0): an lddw without its second half" },
		{ "regress-rel-target-section-0", false, EINVAL,
		  "section 0 is not the null section" },
		{ "regress-symtab-names-in-section-0", false, EINVAL,
		  "section 0 is not the null section" },
	};
	char path[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		struct uxdp_bpf_object *obj;
		int err;

		snprintf(path, sizeof(path), "%s/%s", T_BPF_REGRESS_DIR,
			 r[i].file);
		errno = 0;
		obj = uxdp_bpf_object_open(path, NULL);
		if (r[i].at_load) {
			if (!obj)
				fail_msg("%s: open: %s", r[i].file,
					 uxdp_errmsg());
			err = uxdp_bpf_object_load(obj);
			uxdp_bpf_object_close(obj);
		} else {
			if (obj)
				fail_msg("%s: opened", r[i].file);
			err = -errno;
		}
		assert_int_equal(err, -r[i].err);
		if (!strstr(uxdp_errmsg(), r[i].msg))
			fail_msg("%s: '%s' lacks '%s'", r[i].file,
				 uxdp_errmsg(), r[i].msg);
	}
}

/* One program per refusal class: the errno, and a message naming the
 * program, the instruction and the reason. */
static void test_refusals(void **state)
{
	static const struct {
		const char *obj;
		int err;
		const char *msg[3];
	} r[] = {
		{ "refuse_fib", -EOPNOTSUPP, { "prog refuse_fib: "
		  "insn ", "helper bpf_fib_lookup (69)", "issue 15 brings it" } },
		{ "refuse_cpumap", -EOPNOTSUPP, { "prog refuse_cpumap: insn ",
		  "map cpus (type cpumap)", "not supported yet" } },
		{ "refuse_socket", -EOPNOTSUPP, { "prog refuse_socket: insn ",
		  "helper bpf_sk_lookup_tcp (84)", "kernel state" } },
		{ "refuse_nonxdp", -EOPNOTSUPP, { "prog refuse_nonxdp: insn 0 "
		  "(call 14)", "bpf_get_current_pid_tgid",
		  "not callable from XDP programs in uxdp" } },
		{ "refuse_kfunc", -EOPNOTSUPP, { "prog refuse_kfunc: insn ",
		  "kfunc bpf_xdp_metadata_rx_timestamp", NULL } },
		{ "refuse_ksym", -EOPNOTSUPP, { "prog refuse_ksym: insn 0 "
		  "(lddw", "kernel variable", NULL } },
		{ "refuse_callback", -EOPNOTSUPP, { "prog refuse_callback: "
		  "insn ", "callback", "issue 15 brings it" } },
		{ "refuse_core", -EOPNOTSUPP, { "prog refuse_core: insn 0 ",
		  "CO-RE relocation", "no field 'rx_hash'" } },
		{ "refuse_egress", -EINVAL, { "prog refuse_egress: insn 0 "
		  "(ldxw %r", "egress_ifindex outside an xdp/devmap program",
		  "the kernel would refuse" } },
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		struct uxdp_bpf_object *obj = open_corpus(r[i].obj);
		int err = uxdp_bpf_object_load(obj);

		if (err != r[i].err)
			fail_msg("%s: %d %s", r[i].obj, err, uxdp_errmsg());
		for (j = 0; j < 3 && r[i].msg[j]; j++)
			if (!strstr(uxdp_errmsg(), r[i].msg[j]))
				fail_msg("%s: '%s' lacks '%s'", r[i].obj,
					 uxdp_errmsg(), r[i].msg[j]);
		/* A failed load leaves only close. */
		assert_int_equal(uxdp_bpf_object_load(obj), -EINVAL);
		assert_null(uxdp_bpf_object_prog(obj, NULL));
		uxdp_bpf_object_close(obj);
	}
}

/*
 * The objects Debian installs (libxdp1, xdp-tools): what loads and why the
 * rest is refused. xdp-filter's TCP and UDP variants use only PERCPU_ARRAY
 * maps; the others PERCPU_HASHes too.
 */
static void test_debian_objects(void **state)
{
	static const struct {
		const char *file;
		int err;
		const char *msg;
	} d[] = {
		{ "xdp-dispatcher.o", 0, NULL },
		{ "xdpfilt_alw_tcp.o", 0, NULL },
		{ "xdpfilt_alw_udp.o", 0, NULL },
		{ "xdpfilt_dny_tcp.o", 0, NULL },
		{ "xdpfilt_dny_udp.o", 0, NULL },
		{ "xdpfilt_alw_all.o", 0, NULL },
		{ "xdpfilt_alw_eth.o", 0, NULL },
		{ "xdpfilt_alw_ip.o", 0, NULL },
		{ "xdpfilt_dny_all.o", 0, NULL },
		{ "xdpfilt_dny_eth.o", 0, NULL },
		{ "xdpfilt_dny_ip.o", 0, NULL },
		{ "xsk_def_xdp_prog.o", 0, NULL },
		{ "xsk_def_xdp_prog_5.3.o", 0, NULL },
		{ "xdpdump_xdp.o", 0, NULL },
		{ "xdpdump_bpf.o", -ENOENT, "no XDP program to load: "
		  "trace_on_entry (fentry/func)" },
	};
	char path[256];
	size_t i, found = 0;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(d); i++) {
		struct uxdp_bpf_object *obj;
		int err;

		snprintf(path, sizeof(path), DEBIAN_BPF_DIR "/%s", d[i].file);
		if (access(path, R_OK))
			continue;
		found++;
		obj = uxdp_bpf_object_open(path, NULL);
		if (!obj)
			fail_msg("%s: %s", d[i].file, uxdp_errmsg());
		if (!d[i].err) {
			load_ok(obj);
		} else {
			err = uxdp_bpf_object_load(obj);
			if (err != d[i].err || !strstr(uxdp_errmsg(), d[i].msg))
				fail_msg("%s: %d %s", d[i].file, err,
					 uxdp_errmsg());
		}
		uxdp_bpf_object_close(obj);
	}
	if (!found)
		skip();		/* libxdp1 and xdp-tools not installed */
}

/*
 * Open and load make no bpf() system call: a child process with a seccomp
 * filter that traps bpf() counts the calls (SIGSYS) and reports them.
 */
static volatile sig_atomic_t bpf_calls;

static void on_sigsys(int sig)
{
	(void)sig;
	bpf_calls++;
}

static void test_no_bpf_syscall(void **state)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = ARRAY_SIZE(f), .filter = f };
	const char *const objs[] = { "count", "rodata", "core", "calls",
				     "sections", "refuse_fib" };
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		size_t i;

		signal(SIGSYS, on_sigsys);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
			_exit(200);
		/* The filter works: a bpf() call is counted. */
		syscall(__NR_bpf, 0, NULL, 0);
		if (bpf_calls != 1)
			_exit(201);
		bpf_calls = 0;
		for (i = 0; i < ARRAY_SIZE(objs); i++) {
			struct uxdp_bpf_object *obj;

			obj = uxdp_bpf_object_open(corpus(objs[i]), NULL);
			if (!obj)
				_exit(202);
			uxdp_bpf_object_load(obj);
			uxdp_bpf_object_close(obj);
		}
		_exit(bpf_calls > 100 ? 100 : (int)bpf_calls);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Every helper of libbpf's bpf_helper_defs.h by its name; others by
 * number. */
static void test_helper_names(void **state)
{
	char line[512], buf[32];
	FILE *f;
	unsigned n = 0;

	(void)state;
	assert_string_equal(uxdp_bpf_helper_name(0, buf, sizeof(buf)),
			    "helper 0");
	assert_string_equal(uxdp_bpf_helper_name(99999, buf, sizeof(buf)),
			    "helper 99999");
	assert_string_equal(uxdp_bpf_helper_name(BPF_FUNC_xdp_adjust_head,
						 buf, sizeof(buf)),
			    "bpf_xdp_adjust_head");
	f = fopen(T_BPF_HELPER_DEFS, "r");
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f)) {
		char name[128];
		unsigned id;
		char *p = strstr(line, "(*bpf_");

		if (!p || !strstr(line, "= (void *) ") ||
		    sscanf(p, "(*%127[a-z0-9_])", name) != 1 ||
		    sscanf(strstr(line, "= (void *) "), "= (void *) %u",
			   &id) != 1)
			continue;
		assert_string_equal(uxdp_bpf_helper_name(id, buf,
							 sizeof(buf)), name);
		n++;
	}
	fclose(f);
	assert_true(n >= 211);
	/* What part 1 has, with the checker's view of the arguments. */
	assert_non_null(uxdp_bpf_helper_get(BPF_FUNC_map_lookup_elem));
	assert_int_equal(uxdp_bpf_helper_get(BPF_FUNC_map_lookup_elem)->ret,
			 UXDP_BPF_RET_VALUE_OR_NULL);
	assert_int_equal(uxdp_bpf_helper_get(BPF_FUNC_trace_printk)->args[1],
			 UXDP_BPF_ARG_SIZE);
	assert_non_null(uxdp_bpf_helper_get(BPF_FUNC_redirect_map));
	assert_int_equal(uxdp_bpf_helper_get(BPF_FUNC_redirect_map)->args[0],
			 UXDP_BPF_ARG_MAP);
	assert_null(uxdp_bpf_helper_get(BPF_FUNC_fib_lookup));
	assert_null(uxdp_bpf_helper_get(0));
}

/* An array's lookup as instructions: bounds, scale, base; with a known
 * key, folded. */
static void test_gen_lookup(void **state)
{
	struct bpf_insn insn[UXDP_BPF_GEN_LOOKUP_MAX];
	struct uxdp_bpf_build_map bm;
	struct uxdp_bpf_map *m;
	uint32_t n, key = 7;
	uint64_t base;

	(void)state;
	m = uxdp_bpf_map_new("a", BPF_MAP_TYPE_ARRAY, 4, 20, 10, 0);
	assert_int_equal(uxdp_bpf_map_create(m), 0);
	uxdp_bpf_map_build(m, &bm);
	n = uxdp_bpf_map_gen_lookup(&bm, NULL, insn);
	assert_int_equal(n, 8);
	base = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	assert_int_equal(base, (uintptr_t)m->values);
	assert_int_equal(insn[3].code, BPF_JMP | BPF_JGE | BPF_K);
	assert_int_equal(insn[3].imm, 10);
	assert_int_equal(insn[4].code, BPF_ALU64 | BPF_MUL | BPF_K);
	assert_int_equal(insn[4].imm, 24);	/* 20 rounded up to 8 */
	/* A known key: the element's address, or NULL out of range. */
	n = uxdp_bpf_map_gen_lookup(&bm, &key, insn);
	assert_int_equal(n, 2);
	assert_int_equal(insn[0].code, BPF_LD | BPF_DW | BPF_IMM);
	assert_int_equal(insn[0].dst_reg, BPF_REG_0);
	base = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	assert_int_equal(base, (uintptr_t)m->values + 7 * 24);
	key = 10;
	n = uxdp_bpf_map_gen_lookup(&bm, &key, insn);
	assert_int_equal(n, 1);
	assert_int_equal(insn[0].code, BPF_ALU64 | BPF_MOV | BPF_K);
	assert_int_equal(insn[0].dst_reg, BPF_REG_0);
	assert_int_equal(insn[0].imm, 0);
	uxdp_bpf_map_free(m);
	/* Per-CPU arrays: then this thread's block. */
	m = uxdp_bpf_map_new("p", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 20, 3, 0);
	assert_int_equal(uxdp_bpf_map_create(m), 0);
	uxdp_bpf_map_build(m, &bm);
	n = uxdp_bpf_map_gen_lookup(&bm, NULL, insn);
	assert_int_equal(n, 11);
	base = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	assert_int_equal(base, (uintptr_t)m->values);
	assert_int_equal(insn[3].code, BPF_JMP | BPF_JGE | BPF_K);
	assert_int_equal(insn[3].imm, 3);
	assert_int_equal(insn[3].off, 6);	/* to mov r0, 0 */
	assert_int_equal(insn[4].code, BPF_ALU64 | BPF_MUL | BPF_K);
	assert_int_equal(insn[4].imm, 24);
	assert_int_equal(insn[6].code, UXDP_BPF_OP_THREAD);
	assert_int_equal(insn[7].code, BPF_ALU64 | BPF_LSH | BPF_K);
	assert_int_equal(insn[7].imm, 7);	/* 72 bytes, in whole lines */
	assert_int_equal(insn[10].code, BPF_ALU64 | BPF_MOV | BPF_K);
	key = 2;
	n = uxdp_bpf_map_gen_lookup(&bm, &key, insn);
	assert_int_equal(n, 5);
	base = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	assert_int_equal(base, (uintptr_t)m->values + 2 * 24);
	assert_int_equal(insn[2].code, UXDP_BPF_OP_THREAD);
	assert_int_equal(insn[3].imm, 7);
	assert_int_equal(insn[4].code, BPF_ALU64 | BPF_ADD | BPF_X);
	key = 3;
	assert_int_equal(uxdp_bpf_map_gen_lookup(&bm, &key, insn), 1);
	uxdp_bpf_map_free(m);
}

/* ---- running: uxdp_bpf_prog_test_run through both engines ---------------- */

static const uint32_t engines[] = { UXDP_BPF_ENGINE_INTERP,
				    UXDP_BPF_ENGINE_JIT };

/* test_NAME runs NAME(engine) on each engine in turn. */
#define T_EACH_ENGINE(name)						\
	static void test_##name(void **state)				\
	{								\
		size_t e;						\
									\
		(void)state;						\
		for (e = 0; e < ARRAY_SIZE(engines); e++)		\
			name(engines[e]);				\
	}

static struct uxdp_bpf_object *open_engine(const char *name, uint32_t engine)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	struct uxdp_bpf_object *obj = uxdp_bpf_object_open(corpus(name), &o);

	if (!obj)
		fail_msg("open %s: %s", name, uxdp_errmsg());
	return obj;
}

/* Object @name loaded on @engine, and its program @prog (NULL: the
 * first) as a new reference. */
static struct uxdp_prog *load_engine(const char *name, uint32_t engine,
				     const char *prog,
				     struct uxdp_bpf_object **objp)
{
	struct uxdp_bpf_object *obj = open_engine(name, engine);
	struct uxdp_prog *p;

	load_ok(obj);
	p = uxdp_bpf_object_prog(obj, prog);
	if (!p)
		fail_msg("%s: no prog %s: %s", name, prog ? prog : "(first)",
			 uxdp_errmsg());
	*objp = obj;
	return p;
}

static void unload(struct uxdp_prog *p, struct uxdp_bpf_object *obj)
{
	uxdp_prog_put(p);
	uxdp_bpf_object_close(obj);
}

/* A test packet: Ethernet (dst 02:..:01, src 02:..:02, @proto), then the
 * bytes 0, 1, 2, ... up to @len. */
static void t_packet(uint8_t *pkt, uint32_t len, uint16_t proto)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	uint32_t i;

	for (i = 0; i < len; i++)
		pkt[i] = (uint8_t)i;
	memcpy(pkt, macs, sizeof(macs));
	pkt[12] = (uint8_t)(proto >> 8);
	pkt[13] = (uint8_t)proto;
}

/* Ethernet, IPv4 (ihl 5, UDP) and UDP to @port, @len bytes in all. */
static void t_udp_packet(uint8_t *pkt, uint32_t len, uint16_t port)
{
	t_packet(pkt, len, ETH_P_IP);
	pkt[14] = 0x45;
	pkt[23] = IPPROTO_UDP;
	pkt[36] = (uint8_t)(port >> 8);
	pkt[37] = (uint8_t)port;
}

struct t_run {
	uint32_t verdict;
	uint32_t len;		/* packet bytes out, metadata not counted */
	uint32_t meta;
	uint8_t out[512];	/* metadata, then the packet */
};

static struct t_run run_ex(struct uxdp_prog *p, const void *pkt,
			   uint32_t len, uint32_t queue, uint32_t repeat)
{
	struct t_run r;
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = pkt,
			  .data_size_in = len, .data_out = r.out,
			  .data_size_out = sizeof(r.out),
			  .rx_queue_index = queue, .repeat = repeat);

	memset(&r, 0, sizeof(r));
	if (uxdp_bpf_prog_test_run(p, &o))
		fail_msg("test run %s: %s", uxdp_prog_name(p), uxdp_errmsg());
	r.verdict = o.retval;
	r.meta = o.meta_size;
	assert_true(o.data_size_out >= o.meta_size);
	r.len = o.data_size_out - o.meta_size;
	return r;
}

static struct t_run run1(struct uxdp_prog *p, const void *pkt, uint32_t len)
{
	return run_ex(p, pkt, len, 0, 1);
}

static uint64_t array_u64(struct uxdp_bpf_object *obj, const char *map,
			  uint32_t k)
{
	struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(obj, map);
	uint64_t v = 0;

	assert_non_null(m);
	if (uxdp_bpf_map_lookup(m, &k, &v, 0))
		fail_msg("lookup %s[%u]: %s", map, k, uxdp_errmsg());
	return v;
}

static void info_of(struct uxdp_prog *p, struct uxdp_bpf_prog_info *info)
{
	memset(info, 0, sizeof(*info));
	info->sz = sizeof(*info);
	if (uxdp_bpf_prog_info(p, info))
		fail_msg("info %s: %s", uxdp_prog_name(p), uxdp_errmsg());
}

/* drop, pass, macswap, calls, core: the verdict and the packet out. */
static void run_verdicts(uint32_t engine)
{
	uint8_t pkt[128], want[128];
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_prog_info info;
	struct uxdp_prog *p;
	struct t_run r;

	t_packet(pkt, 64, ETH_P_IP);
	p = load_engine("drop", engine, NULL, &obj);
	r = run1(p, pkt, 64);
	assert_int_equal(r.verdict, XDP_DROP);
	assert_int_equal(r.len, 64);
	assert_memory_equal(r.out, pkt, 64);
	info_of(p, &info);
	assert_int_equal(info.engine, engine);
	assert_int_equal(info.runs, 1);
	assert_int_equal(info.faults, 0);
	assert_int_equal(info.jit_size > 0,
			 engine == UXDP_BPF_ENGINE_JIT);
	unload(p, obj);

	p = load_engine("pass", engine, NULL, &obj);
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	unload(p, obj);

	/* macswap: the addresses swapped, the rest as it was. */
	p = load_engine("macswap", engine, NULL, &obj);
	memcpy(want, pkt, 64);
	memcpy(want, pkt + 6, 6);
	memcpy(want + 6, pkt, 6);
	r = run1(p, pkt, 64);
	assert_int_equal(r.verdict, XDP_TX);
	assert_int_equal(r.len, 64);
	assert_int_equal(r.meta, 0);
	assert_memory_equal(r.out, want, 64);
	/* Shorter than an Ethernet header cannot be given; exactly
	 * one is swapped. */
	r = run1(p, pkt, 14);
	assert_int_equal(r.verdict, XDP_TX);
	assert_memory_equal(r.out, want, 14);
	unload(p, obj);

	/* calls: odd first byte and long: TX; even: PASS; short:
	 * DROP. */
	p = load_engine("calls", engine, NULL, &obj);
	pkt[0] = 3;
	assert_int_equal(run1(p, pkt, 60).verdict, XDP_TX);
	assert_int_equal(run1(p, pkt, 59).verdict, XDP_DROP);
	pkt[0] = 2;
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	unload(p, obj);

	/* core: the length and the queue through CO-RE flavours. */
	p = load_engine("core", engine, NULL, &obj);
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	assert_int_equal(run1(p, pkt, 65).verdict, XDP_TX);
	assert_int_equal(run_ex(p, pkt, 64, 1, 1).verdict, XDP_DROP);
	unload(p, obj);
}
T_EACH_ENGINE(run_verdicts)

/* count, parse_udp, loop: what the maps hold after. */
static void run_maps(uint32_t engine)
{
	uint8_t pkt[128];
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_map *pc;
	struct uxdp_prog *p;
	uint64_t *pv, sum;
	uint32_t k = 0, i;
	int n;

	/* count: packets and bytes; the per-CPU count in this
	 * thread's slot only. */
	p = load_engine("count", engine, NULL, &obj);
	t_packet(pkt, 100, ETH_P_IP);
	assert_int_equal(run_ex(p, pkt, 100, 0, 3).verdict, XDP_PASS);
	assert_int_equal(run1(p, pkt, 60).verdict, XDP_PASS);
	assert_int_equal(array_u64(obj, "counters", 0), 4);
	assert_int_equal(array_u64(obj, "counters", 1), 3 * 100 + 60);
	n = uxdp_bpf_num_possible_cpus();
	pv = calloc((size_t)n, sizeof(*pv));
	assert_non_null(pv);
	pc = uxdp_bpf_object_find_map(obj, "per_cpu");
	assert_int_equal(uxdp_bpf_map_lookup(pc, &k, pv, 0), 0);
	for (i = 0, sum = 0; i < (uint32_t)n; i++)
		sum += pv[i];
	assert_int_equal(sum, 4);
	assert_int_equal(pv[uxdp_thread_index()], 4);
	free(pv);
	unload(p, obj);

	/* parse_udp: UDP dropped and counted by port; truncated
	 * headers and other protocols passed, nothing counted. */
	p = load_engine("parse_udp", engine, NULL, &obj);
	t_udp_packet(pkt, 64, 53);
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_DROP);
	assert_int_equal(run1(p, pkt, 42).verdict, XDP_DROP);
	assert_int_equal(array_u64(obj, "port_count", 53), 2);
	assert_int_equal(run1(p, pkt, 41).verdict, XDP_PASS);
	assert_int_equal(run1(p, pkt, 33).verdict, XDP_PASS);
	assert_int_equal(run1(p, pkt, 14).verdict, XDP_PASS);
	pkt[14] = 0x46;		/* options: not parsed */
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	pkt[14] = 0x45;
	pkt[23] = IPPROTO_TCP;
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	t_udp_packet(pkt, 64, 0xffff);
	pkt[12] = 0x86;		/* IPv6 */
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_PASS);
	pkt[12] = 0x08;
	assert_int_equal(run1(p, pkt, 64).verdict, XDP_DROP);
	assert_int_equal(array_u64(obj, "port_count", 53), 2);
	assert_int_equal(array_u64(obj, "port_count", 0xffff), 1);
	unload(p, obj);

	/* loop: the sum of the first 64 bytes, or of all. */
	p = load_engine("loop", engine, NULL, &obj);
	t_packet(pkt, 100, ETH_P_IP);
	for (i = 0, sum = 0; i < 64; i++)
		sum += pkt[i];
	assert_int_equal(run1(p, pkt, 100).verdict, XDP_PASS);
	assert_int_equal(array_u64(obj, "sum", 0), sum);
	for (i = 0, sum = 0; i < 20; i++)
		sum += pkt[i];
	assert_int_equal(run1(p, pkt, 20).verdict, XDP_PASS);
	assert_int_equal(array_u64(obj, "sum", 0), sum);
	unload(p, obj);
}
T_EACH_ENGINE(run_maps)

/* hash_ports: a HASH counted by port (inserted, added to, deleted by a
 * program) and a PERCPU_HASH by protocol; what the control plane reads. */
static void run_hash(uint32_t engine)
{
	uint8_t pkt[64];
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_map *ports, *protos;
	struct uxdp_prog *p;
	uint64_t v, *pv;
	uint32_t proto = IPPROTO_UDP, i;
	uint16_t port;
	int n = uxdp_bpf_num_possible_cpus();

	p = load_engine("hash_ports", engine, NULL, &obj);
	ports = uxdp_bpf_object_find_map(obj, "ports");
	protos = uxdp_bpf_object_find_map(obj, "protos");
	assert_non_null(ports);
	assert_non_null(protos);
	t_udp_packet(pkt, sizeof(pkt), 9);
	for (i = 0; i < 5; i++)
		assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict,
				 i < 3 ? XDP_PASS : XDP_DROP);
	port = 9;
	assert_int_equal(uxdp_bpf_map_lookup(ports, &port, &v, 0), 0);
	assert_int_equal(v, 5);
	/* Port 7 deletes port 9's count: it starts again. */
	t_udp_packet(pkt, sizeof(pkt), 7);
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_PASS);
	assert_int_equal(uxdp_bpf_map_lookup(ports, &port, &v, 0), -ENOENT);
	/* The map holds 4 ports: a fifth is refused, still passed. */
	for (i = 0; i < 6; i++) {
		t_udp_packet(pkt, sizeof(pkt), (uint16_t)(100 + i));
		assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_PASS);
	}
	port = 104;
	assert_int_equal(uxdp_bpf_map_lookup(ports, &port, &v, 0), -ENOENT);
	port = 103;
	assert_int_equal(uxdp_bpf_map_lookup(ports, &port, &v, 0), 0);
	assert_int_equal(v, 1);
	/* The control plane sets a count; the program adds to it. */
	v = 10;
	assert_int_equal(uxdp_bpf_map_update(ports, &port, &v, BPF_EXIST), 0);
	t_udp_packet(pkt, sizeof(pkt), 103);
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_DROP);
	assert_int_equal(uxdp_bpf_map_lookup(ports, &port, &v, 0), 0);
	assert_int_equal(v, 11);
	/* Every packet was UDP/IPv4: 13 in this thread's slot. */
	pv = calloc((size_t)n, sizeof(*pv));
	assert_non_null(pv);
	assert_int_equal(uxdp_bpf_map_lookup(protos, &proto, pv, 0), 0);
	for (i = 0, v = 0; i < (uint32_t)n; i++)
		v += pv[i];
	assert_int_equal(v, 13);
	assert_int_equal(pv[uxdp_thread_index() % (uint32_t)n], 13);
	free(pv);
	unload(p, obj);
}
T_EACH_ENGINE(run_hash)

/* The ones' complement sum of @n bytes as 16-bit words in memory order
 * (little-endian on this host), modulo 0xffff: what every rule of
 * csum_diff must agree with once folded. */
static uint32_t ones16(const uint8_t *p, uint32_t n)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] | (uint32_t)p[i + 1] << 8;
	if (n & 1)
		s += p[n - 1];
	return (uint32_t)(s % 0xffff);
}

static uint32_t mod16(uint64_t v)
{
	return (uint32_t)((v & 0xffffffff) % 0xffff);
}

/*
 * csum.o's six calls under each rule (helpers.c): the results are the
 * sums the RFC defines, modulo 0xffff (the kernel's own result is
 * test_bpf_kernel's to compare, on the rule of the kernel it runs on):
 * fold16's at most 16 bits and a size of 6 summed (a pull: its sum
 * taken away); partial32's -EINVAL for it. The bytes are chosen so no sum is 0 modulo 0xffff.
 */
static void run_csum(uint32_t engine)
{
	static const int rules[] = { UXDP_BPF_CSUM_FOLD16,
				     UXDP_BPF_CSUM_PARTIAL32 };
	int saved = uxdp_bpf_csum_diff_rule(0);
	uint8_t pkt[128], inv[8];
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uint32_t seed, i, want[5];
	size_t r;

	for (i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 37 + 11);
	memcpy(&seed, pkt, 4);
	seed %= 0xffff;
	/* diff: ~from (4 bytes) + to */
	for (i = 0; i < 4; i++)
		inv[i] = (uint8_t)~pkt[4 + i];
	want[0] = (ones16(inv, 4) + ones16(pkt + 8, 4)) % 0xffff;
	want[1] = (ones16(pkt + 12, 20) + seed) % 0xffff;
	/* pull at an odd address: minus the bytes, as words from there */
	want[2] = (seed + 0xffff - ones16(pkt + 13, 8)) % 0xffff;
	want[3] = (seed + ones16(pkt + 21, 16) + 0xffff -
		   ones16(pkt + 5, 12)) % 0xffff;
	want[4] = seed;
	for (r = 0; r < ARRAY_SIZE(rules); r++) {
		struct t_run o;
		uint64_t v[6];

		uxdp_bpf_csum_diff_rule(rules[r]);
		p = load_engine("csum", engine, NULL, &obj);
		o = run1(p, pkt, sizeof(pkt));
		assert_int_equal(o.verdict, XDP_TX);
		memcpy(v, o.out + 64, sizeof(v));
		for (i = 0; i < 5; i++) {
			if (rules[r] == UXDP_BPF_CSUM_FOLD16)
				assert_true(v[i] <= 0xffff);
			else
				assert_true(v[i] <= 0xffffffff);
			if (mod16(v[i]) != want[i])
				fail_msg("rule %d call %u: 0x%llx, want 0x%x "
					 "modulo 0xffff", rules[r], i,
					 (unsigned long long)v[i], want[i]);
		}
		if (rules[r] == UXDP_BPF_CSUM_FOLD16)
			assert_int_equal(mod16(v[5]),
					 (0xffff - ones16(pkt + 4, 6)) % 0xffff);
		else
			assert_int_equal((int64_t)v[5], -EINVAL);
		unload(p, obj);
	}
	uxdp_bpf_csum_diff_rule(saved);
}
T_EACH_ENGINE(run_csum)

/* bytes.o: xdp_load_bytes and xdp_store_bytes, their errors by the
 * kernel's rules (test_bpf_kernel compares them with the kernel's). */
static void run_bytes(uint32_t engine)
{
	uint8_t pkt[64];
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	struct t_run o;
	int64_t r[4];
	uint32_t i;

	p = load_engine("bytes", engine, NULL, &obj);
	for (i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(100 + i);
	pkt[0] = 10;		/* load 8 at 40 */
	pkt[1] = 2;		/* store them at 4 */
	o = run1(p, pkt, sizeof(pkt));
	assert_int_equal(o.verdict, XDP_TX);
	memcpy(r, o.out + 32, sizeof(r));
	assert_int_equal(r[0], 0);
	assert_int_equal(r[1], 0);
	assert_int_equal(r[2], -EFAULT);
	assert_int_equal(r[3], 0);
	/* buf: bytes 40..43, then the packet's last 4 (60..63) */
	for (i = 0; i < 4; i++) {
		assert_int_equal(o.out[4 + i], 100 + 40 + i);
		assert_int_equal(o.out[8 + i], 100 + 60 + i);
	}
	pkt[0] = 15;		/* 60 + 8 > 64 */
	pkt[1] = 29;		/* 58 + 8 > 64 */
	o = run1(p, pkt, sizeof(pkt));
	memcpy(r, o.out + 32, sizeof(r));
	assert_int_equal(r[0], -EINVAL);
	assert_int_equal(r[3], -EINVAL);
	unload(p, obj);
}
T_EACH_ENGINE(run_bytes)

/* Global data set before load, as a skeleton sets it, is what the
 * program reads; .data and .bss stay live after. */
static void run_global_data(uint32_t engine)
{
	uint8_t pkt[64];
	struct uxdp_bpf_object *obj = open_engine("rodata", engine);
	struct uxdp_bpf_map *ro, *data, *bss;
	uint8_t *rv;
	uint64_t *dv, *bv;
	struct uxdp_prog *p;
	struct t_run r;
	size_t size;

	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	ro = uxdp_bpf_object_find_map(obj, "rodata.rodata");
	data = uxdp_bpf_object_find_map(obj, "rodata.data");
	bss = uxdp_bpf_object_find_map(obj, "rodata.bss");
	rv = uxdp_bpf_map_initial_value(ro, &size);
	assert_non_null(rv);
	*(uint32_t *)rv = XDP_TX;	/* verdict */
	rv[4] = 0x5a;			/* mark */
	dv = uxdp_bpf_map_initial_value(data, &size);
	assert_non_null(dv);
	*dv = 3;			/* step */
	load_ok(obj);
	p = uxdp_bpf_object_prog(obj, "xdp_rodata");
	assert_non_null(p);
	r = run1(p, pkt, sizeof(pkt));
	assert_int_equal(r.verdict, XDP_TX);
	assert_int_equal(r.out[0], 0x5a);
	assert_memory_equal(r.out + 1, pkt + 1, sizeof(pkt) - 1);
	/* runs += step + extra (.rodata.cfg's 7). */
	bv = uxdp_bpf_map_initial_value(bss, &size);
	assert_non_null(bv);
	assert_int_equal(*bv, 3 + 7);
	dv = uxdp_bpf_map_initial_value(data, &size);
	assert_non_null(dv);
	*dv = 5;
	run1(p, pkt, sizeof(pkt));
	assert_int_equal(*bv, 3 + 7 + 5 + 7);
	unload(p, obj);
}
T_EACH_ENGINE(run_global_data)

/* The packet helpers: metadata, head and tail moved, and the kernel's
 * errors for the moves it refuses. */
static void run_adjust(uint32_t engine)
{
	const uint32_t meta = 0xfeedf00d;
	uint8_t pkt[64];
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	struct t_run r;

	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	p = load_engine("adjust", engine, NULL, &obj);
	r = run1(p, pkt, sizeof(pkt));
	assert_int_equal(r.verdict, XDP_PASS);
	assert_int_equal(r.meta, 4);
	assert_memory_equal(r.out, &meta, 4);
	/* 2 bytes in front, 3 cut at the end. */
	assert_int_equal(r.len, sizeof(pkt) + 2 - 3);
	assert_int_equal(r.out[4], 0xaa);
	assert_int_equal(r.out[5], 0xbb);
	assert_memory_equal(r.out + 6, pkt, sizeof(pkt) - 3);
	assert_int_equal((int64_t)array_u64(obj, "errs", 0), -EINVAL);
	assert_int_equal((int64_t)array_u64(obj, "errs", 1), -EINVAL);
	assert_int_equal((int64_t)array_u64(obj, "errs", 2), -EACCES);
	unload(p, obj);
}
T_EACH_ENGINE(run_adjust)

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The helpers that return a value: the clocks, the thread index as the
 * CPU, the buffer's length, the arrays' errors. */
static void run_helpers(uint32_t engine)
{
	uint8_t pkt[80];
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uint64_t mono0, boot0, coarse0, mono1, boot1, coarse1, rnd;
	int i, same = 0;

	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	p = load_engine("helpers", engine, NULL, &obj);
	mono0 = clock_ns(CLOCK_MONOTONIC);
	boot0 = clock_ns(CLOCK_BOOTTIME);
	coarse0 = clock_ns(CLOCK_MONOTONIC_COARSE);
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_PASS);
	mono1 = clock_ns(CLOCK_MONOTONIC);
	boot1 = clock_ns(CLOCK_BOOTTIME);
	coarse1 = clock_ns(CLOCK_MONOTONIC_COARSE);
	assert_in_range(array_u64(obj, "out", 0), mono0, mono1);
	assert_in_range(array_u64(obj, "out", 1), boot0, boot1);
	assert_in_range(array_u64(obj, "out", 2), coarse0, coarse1);
	assert_int_equal(array_u64(obj, "out", 4), uxdp_thread_index());
	assert_int_equal(array_u64(obj, "out", 5), sizeof(pkt));
	assert_int_equal((int64_t)array_u64(obj, "out", 6), -E2BIG);
	assert_int_equal((int64_t)array_u64(obj, "out", 7), -EINVAL);
	/* Random: not the same value four runs in a row. */
	rnd = array_u64(obj, "out", 3);
	assert_true(rnd <= UINT32_MAX);
	for (i = 0; i < 3; i++) {
		run1(p, pkt, sizeof(pkt));
		same += array_u64(obj, "out", 3) == rnd;
	}
	assert_true(same < 3);
	unload(p, obj);
}
T_EACH_ENGINE(run_helpers)

/* What the print callback was given, and how often. */
static char printed[4096];
static unsigned printed_n;

static int capture_print(enum uxdp_print_level level, const char *fmt,
			 va_list ap)
{
	size_t len = strlen(printed);

	(void)level;
	if (len + 1 < sizeof(printed))
		vsnprintf(printed + len, sizeof(printed) - len, fmt, ap);
	printed_n++;
	return 0;
}

/* Capture from now; returns the callback to put back after. */
static uxdp_print_fn_t capture_start(void)
{
	printed[0] = '\0';
	printed_n = 0;
	return uxdp_set_print(capture_print);
}

/* bpf_printk through the print callback; a format the kernel refuses is
 * -EINVAL and prints nothing. */
static void run_printk(uint32_t engine)
{
	uint8_t pkt[64];
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uxdp_print_fn_t old;

	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	p = load_engine("printk", engine, NULL, &obj);
	old = capture_start();
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_PASS);
	uxdp_set_print(old);
	assert_string_equal(printed, "bpf_trace_printk: prog xdp_printk: "
			    "len 64 first 02 ok\n");
	assert_int_equal(printed_n, 1);
	unload(p, obj);
}
T_EACH_ENGINE(run_printk)

/* The index of the last instruction with opcode @code in @name. */
static uint32_t last_insn(struct uxdp_bpf_object *obj, const char *name,
			  uint8_t code)
{
	const struct bpf_insn *in;
	uint32_t len, i, at = UINT32_MAX;

	in = linked(obj, name, &len);
	for (i = 0; i < len; i++)
		if (in[i].code == code)
			at = i;
	assert_true(at != UINT32_MAX);
	return at;
}

/*
 * oob: a packet read at an index from the packet is checked at run time:
 * in bounds it runs, outside the run ends XDP_ABORTED, counted, with the
 * instruction, printed once. A loop that never ends stops on the budget.
 */
static void run_faults(uint32_t engine)
{
	uint8_t pkt[64];
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o,
			  .engine = engine, .budget = 1000);
	struct uxdp_bpf_prog_info info;
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uxdp_print_fn_t old;
	const struct bpf_insn *in;
	char want[128];
	uint32_t at, len;

	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	p = load_engine("oob", engine, "oob_read", &obj);
	info_of(p, &info);
	assert_true(info.checked >= 1);
	assert_int_equal(info.last_fault, UXDP_BPF_FAULT_NONE);
	at = last_insn(obj, "oob_read", BPF_LDX | BPF_MEM | BPF_B);
	pkt[0] = 20;		/* pkt[20] = 20: DROP */
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_DROP);
	pkt[0] = 10;		/* a MAC byte, 0: PASS */
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_PASS);
	pkt[0] = 63;
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_DROP);
	old = capture_start();
	pkt[0] = 64;		/* one past the end */
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict,
			 XDP_ABORTED);
	pkt[0] = 255;
	assert_int_equal(run_ex(p, pkt, sizeof(pkt), 0, 5).verdict,
			 XDP_ABORTED);
	uxdp_set_print(old);
	info_of(p, &info);
	assert_int_equal(info.runs, 3 + 1 + 5);
	assert_int_equal(info.faults, 6);
	assert_int_equal(info.aborted, 6);
	assert_int_equal(info.last_fault, UXDP_BPF_FAULT_MEM);
	assert_int_equal(info.last_fault_insn, at);
	assert_int_equal(printed_n, 1);
	snprintf(want, sizeof(want), "bpf: prog oob_read: insn %u (ldxb ",
		 at);
	if (!strstr(printed, want) || !strstr(printed, "XDP_ABORTED"))
		fail_msg("printed '%s', want '%s'", printed, want);
	unload(p, obj);

	/* forever, with a budget of 1000 back edges: the loop's body
	 * runs 1001 times, then the run ends. */
	obj = uxdp_bpf_object_open(corpus("oob"), &o);
	assert_non_null(obj);
	load_ok(obj);
	p = uxdp_bpf_object_prog(obj, "forever");
	assert_non_null(p);
	old = capture_start();
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict,
			 XDP_ABORTED);
	uxdp_set_print(old);
	assert_int_equal(array_u64(obj, "spins", 0), 1001);
	info_of(p, &info);
	assert_int_equal(info.faults, 1);
	assert_int_equal(info.last_fault, UXDP_BPF_FAULT_BUDGET);
	assert_true(info.back_edges >= 1);
	/* Named by the backward jump the budget was spent on. */
	in = linked(obj, "forever", &len);
	assert_true(info.last_fault_insn < len);
	assert_true(BPF_CLASS(in[info.last_fault_insn].code) ==
		    BPF_JMP ||
		    BPF_CLASS(in[info.last_fault_insn].code) ==
		    BPF_JMP32);
	assert_true(in[info.last_fault_insn].off < 0);
	assert_non_null(strstr(printed, "budget"));
	unload(p, obj);

	/* The default budget ends it too. */
	p = load_engine("oob", engine, "forever", &obj);
	old = capture_start();
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict,
			 XDP_ABORTED);
	uxdp_set_print(old);
	assert_int_equal(array_u64(obj, "spins", 0),
			 UXDP_BPF_DEFAULT_BUDGET + 1);
	unload(p, obj);
}
T_EACH_ENGINE(run_faults)

/* Every memory access of macswap and parse_udp is below a data_end check
 * or into a map value of known size: all proven, none checked. */
static void test_proven(void **state)
{
	static const char *const names[] = { "macswap", "parse_udp",
					     "count", "drop" };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		struct uxdp_bpf_prog_info info;
		struct uxdp_bpf_object *obj;
		struct uxdp_prog *p;

		p = load_engine(names[i], UXDP_BPF_ENGINE_DEFAULT, NULL, &obj);
		info_of(p, &info);
		if (info.checked || info.proven != info.accesses)
			fail_msg("%s: %u accesses, %u proven, %u checked",
				 names[i], info.accesses, info.proven,
				 info.checked);
		if (strcmp(names[i], "drop"))
			assert_true(info.accesses > 0);
		assert_int_equal(info.back_edges, 0);
		uxdp_prog_put(p);
		uxdp_bpf_object_close(obj);
	}
}

static uint32_t t_c_prog(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx, (void)priv;
	return XDP_PASS;
}

static int refuse_jit(struct uxdp_bpf_code *code, struct uxdp_bpf_jit **out)
{
	(void)code;
	*out = NULL;
	return uxdp_set_error(E2BIG, "prog %s: jit: refused by the test",
			      code->name);
}

/* The engine: the JIT by default on x86-64, the interpreter when asked
 * or when the JIT refuses; JIT asked for and refused fails the load. */
static void test_engines(void **state)
{
	int (*jit)(struct uxdp_bpf_code *, struct uxdp_bpf_jit **);
	struct uxdp_bpf_prog_info info;
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p;
	uint8_t pkt[64];

	(void)state;
	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	p = load_engine("macswap", UXDP_BPF_ENGINE_DEFAULT, NULL, &obj);
	info_of(p, &info);
#if defined(__x86_64__)
	assert_int_equal(info.engine, UXDP_BPF_ENGINE_JIT);
	assert_true(info.jit_size > 0);
#else
	assert_int_equal(info.engine, UXDP_BPF_ENGINE_INTERP);
#endif
	assert_true(info.xlated_insns >= info.insns);
	unload(p, obj);

	p = load_engine("macswap", UXDP_BPF_ENGINE_INTERP, NULL, &obj);
	info_of(p, &info);
	assert_int_equal(info.engine, UXDP_BPF_ENGINE_INTERP);
	assert_int_equal(info.jit_size, 0);
	unload(p, obj);

	/* A JIT refusal: the default falls back, JIT fails the load. */
	jit = uxdp_bpf_prog_jit_compile;
	uxdp_bpf_prog_jit_compile = refuse_jit;
	p = load_engine("macswap", UXDP_BPF_ENGINE_DEFAULT, NULL, &obj);
	info_of(p, &info);
	assert_int_equal(info.engine, UXDP_BPF_ENGINE_INTERP);
	assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, XDP_TX);
	unload(p, obj);
	obj = open_engine("macswap", UXDP_BPF_ENGINE_JIT);
	assert_int_equal(uxdp_bpf_object_load(obj), -E2BIG);
	assert_non_null(strstr(uxdp_errmsg(), "refused by the test"));
	assert_null(uxdp_bpf_object_prog(obj, NULL));
	uxdp_bpf_object_close(obj);
	uxdp_bpf_prog_jit_compile = jit;

	/* Not an eBPF program; bad arguments. */
	p = uxdp_prog_create("c_prog", t_c_prog, NULL);
	assert_non_null(p);
	info.sz = sizeof(info);
	assert_int_equal(uxdp_bpf_prog_info(p, &info), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "prog c_prog: not an eBPF"));
	assert_int_equal(uxdp_bpf_prog_info(NULL, &info), -EINVAL);
	uxdp_prog_put(p);
	p = load_engine("drop", UXDP_BPF_ENGINE_DEFAULT, NULL, &obj);
	assert_int_equal(uxdp_bpf_prog_info(p, NULL), -EINVAL);
	info.sz = 1;
	assert_int_equal(uxdp_bpf_prog_info(p, &info), -EINVAL);
	/* An older, shorter struct gets its fields only. */
	memset(&info, 0xa5, sizeof(info));
	info.sz = offsetof(struct uxdp_bpf_prog_info, insns);
	assert_int_equal(uxdp_bpf_prog_info(p, &info), 0);
	assert_true(info.engine == UXDP_BPF_ENGINE_JIT ||
		    info.engine == UXDP_BPF_ENGINE_INTERP);
	assert_int_equal(info.insns, 0xa5a5a5a5);
	unload(p, obj);
}

/* The context's fields from the test run's options, metadata in and
 * out, and the options' errors. */
static void run_context(uint32_t engine)
{
	const uint32_t meta = 0x11223344;
	uint8_t in[4 + 64], out[128];
	UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, o, .data_in = in,
			  .data_size_in = sizeof(in), .meta_size = 4,
			  .data_out = out, .data_size_out = sizeof(out),
			  .ingress_ifindex = 7, .rx_queue_index = 3);
	struct uxdp_bpf_test_run_opts bad;
	struct uxdp_bpf_object *obj;
	struct uxdp_prog *p, *c;

	memcpy(in, &meta, 4);
	t_packet(in + 4, 64, ETH_P_IP);
	p = load_engine("ctx", engine, NULL, &obj);
	assert_int_equal(uxdp_bpf_prog_test_run(p, &o), 0);
	assert_int_equal(o.retval, XDP_PASS);
	assert_int_equal(o.meta_size, 4);
	assert_int_equal(o.data_size_out, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(array_u64(obj, "fields", 0), 7);
	assert_int_equal(array_u64(obj, "fields", 1), 3);
	assert_int_equal(array_u64(obj, "fields", 2), 0);
	assert_int_equal(array_u64(obj, "fields", 3), 64);
	assert_int_equal(array_u64(obj, "fields", 4), meta);
	/* No metadata: none seen, none out. */
	assert_int_equal(run1(p, in + 4, 64).meta, 0);
	assert_int_equal(array_u64(obj, "fields", 4), 0);

	/* data_out too small: ENOSPC, the size needed, the first bytes. */
	bad = o;
	memset(out, 0, sizeof(out));
	bad.data_size_out = 10;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -ENOSPC);
	assert_int_equal(bad.data_size_out, sizeof(in));
	assert_memory_equal(out, in, 10);
	assert_int_equal(out[10], 0);
	/* Metadata not a multiple of 4, or past 252; a packet shorter than
	 * an Ethernet header; no data. */
	bad = o;
	bad.meta_size = 3;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	bad.meta_size = 256;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	bad = o;
	bad.meta_size = 0;
	bad.data_size_in = 13;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	bad.data_size_in = 3521;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	bad = o;
	bad.data_in = NULL;
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	assert_int_equal(uxdp_bpf_prog_test_run(p, NULL), -EINVAL);
	bad = o;
	bad.sz = offsetof(struct uxdp_bpf_test_run_opts, retval);
	assert_int_equal(uxdp_bpf_prog_test_run(p, &bad), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "no room for the results"));
	/* Not an eBPF program. */
	c = uxdp_prog_create("c_prog", t_c_prog, NULL);
	assert_non_null(c);
	assert_int_equal(uxdp_bpf_prog_test_run(c, &o), -EINVAL);
	assert_non_null(strstr(uxdp_errmsg(), "not an eBPF program"));
	uxdp_prog_put(c);
	unload(p, obj);
}
T_EACH_ENGINE(run_context)

/* Ethernet, IPv4 and TCP (no options) from port 1234 to @port. */
static void t_tcp_packet(uint8_t *pkt, uint32_t len, uint16_t port)
{
	t_packet(pkt, len, ETH_P_IP);
	pkt[14] = 0x45;
	pkt[23] = IPPROTO_TCP;
	pkt[34] = 1234 >> 8;
	pkt[35] = 1234 & 0xff;
	pkt[36] = (uint8_t)(port >> 8);
	pkt[37] = (uint8_t)port;
	pkt[46] = 5 << 4;		/* data offset */
}

/*
 * xdp-filter as Debian installs it (xdpfilt_dny_tcp.o, xdpfilt_alw_tcp.o):
 * with no port in filter_ports, deny mode (everything denied but what the
 * map lets through) drops a TCP packet and allow mode passes it; with its
 * destination port marked (xdp-filter's MAP_FLAG_DST | MAP_FLAG_TCP on
 * every CPU, keyed by the port in network order as its "port" command
 * writes it), the opposite, and the hit counted in this thread's slot.
 */
static void run_xdp_filter(uint32_t engine)
{
	static const struct {
		const char *file;
		uint32_t miss, hit;
	} f[] = {
		{ "xdpfilt_dny_tcp.o", XDP_DROP, XDP_PASS },
		{ "xdpfilt_alw_tcp.o", XDP_PASS, XDP_DROP },
	};
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, o, .engine = engine);
	int ncpus = uxdp_bpf_num_possible_cpus();
	uint8_t pkt[64];
	char path[256];
	size_t i;

	t_tcp_packet(pkt, sizeof(pkt), 80);
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		struct uxdp_bpf_object *obj;
		struct uxdp_bpf_map *ports, *stats;
		struct uxdp_prog *p;
		uint64_t *v;
		uint32_t k = htons(80);
		int c;

		snprintf(path, sizeof(path), DEBIAN_BPF_DIR "/%s", f[i].file);
		if (access(path, R_OK))
			skip();		/* xdp-tools not installed */
		obj = uxdp_bpf_object_open(path, &o);
		assert_non_null(obj);
		load_ok(obj);
		p = uxdp_bpf_object_prog(obj, NULL);
		assert_non_null(p);
		assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, f[i].miss);
		ports = uxdp_bpf_object_find_map(obj, "filter_ports");
		assert_non_null(ports);
		v = calloc((size_t)ncpus, sizeof(*v));
		assert_non_null(v);
		for (c = 0; c < ncpus; c++)
			v[c] = 0x2 | 0x4;	/* MAP_FLAG_DST | MAP_FLAG_TCP */
		assert_int_equal(uxdp_bpf_map_update(ports, &k, v, BPF_ANY), 0);
		assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, f[i].hit);
		/* Another port is still a miss. */
		t_tcp_packet(pkt, sizeof(pkt), 81);
		assert_int_equal(run1(p, pkt, sizeof(pkt)).verdict, f[i].miss);
		t_tcp_packet(pkt, sizeof(pkt), 80);
		assert_int_equal(uxdp_bpf_map_lookup(ports, &k, v, 0), 0);
		for (c = 0; c < ncpus; c++)
			if (c != (int)uxdp_thread_index())
				assert_int_equal(v[c], 0x6);
		assert_true(v[uxdp_thread_index()] > 0x6);
		free(v);
		/* xdp_stats_map: per verdict, this thread's packets and
		 * bytes (struct datarec). */
		v = calloc((size_t)ncpus, 2 * sizeof(*v));
		assert_non_null(v);
		stats = uxdp_bpf_object_find_map(obj, "xdp_stats_map");
		assert_non_null(stats);
		k = f[i].miss;
		assert_int_equal(uxdp_bpf_map_lookup(stats, &k, v, 0), 0);
		assert_int_equal(v[2 * uxdp_thread_index()], 2);
		assert_int_equal(v[2 * uxdp_thread_index() + 1], 2 * 64);
		k = f[i].hit;
		assert_int_equal(uxdp_bpf_map_lookup(stats, &k, v, 0), 0);
		assert_int_equal(v[2 * uxdp_thread_index()], 1);
		free(v);
		unload(p, obj);
	}
}
T_EACH_ENGINE(run_xdp_filter)

/* Every map of @a equal to the same map of @b, value by value (maps the
 * load left out are skipped: neither has them). */
static void maps_equal(struct uxdp_bpf_object *a, struct uxdp_bpf_object *b)
{
	struct uxdp_bpf_map *ma = NULL, *mb = NULL;
	size_t vsz = (size_t)uxdp_bpf_num_possible_cpus() * 64;
	uint8_t *va = malloc(vsz), *vb = malloc(vsz);

	assert_non_null(va);
	assert_non_null(vb);
	while ((ma = uxdp_bpf_object_next_map(a, ma))) {
		uint32_t k, max = uxdp_bpf_map_max_entries(ma);
		size_t sz = uxdp_bpf_map_value_size(ma);

		mb = uxdp_bpf_object_next_map(b, mb);
		assert_non_null(mb);
		assert_true(sz <= 64);
		if (uxdp_bpf_map_type(ma) == BPF_MAP_TYPE_PERCPU_ARRAY)
			sz = (sz + 7) / 8 * 8 * vsz / 64;
		for (k = 0; k < max; k++) {
			int ea = uxdp_bpf_map_lookup(ma, &k, va, 0);
			int eb = uxdp_bpf_map_lookup(mb, &k, vb, 0);

			assert_int_equal(ea, eb);
			if (ea)
				break;
			if (memcmp(va, vb, sz))
				fail_msg("map %s: key %u differs",
					 uxdp_bpf_map_name(ma), k);
		}
	}
	free(va);
	free(vb);
}

/*
 * The interpreter and the JIT on every program of every corpus object,
 * over the same random packets (some of them Ethernet/IPv4/UDP with random
 * ports and lengths): the same verdict, packet and metadata out, and the
 * same maps after. helpers' map holds times and random numbers: its
 * verdicts are compared, not its map.
 */
static void test_engines_agree(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, oi,
			  .engine = UXDP_BPF_ENGINE_INTERP, .budget = 1000);
	UXDP_DECLARE_OPTS(uxdp_bpf_object_opts, oj,
			  .engine = UXDP_BPF_ENGINE_JIT, .budget = 1000);
	uxdp_print_fn_t old;
	uint8_t pkt[256];
	unsigned seed = 14;
	size_t i;

	(void)state;
	old = capture_start();
	for (i = 0; i < ARRAY_SIZE(corpus_objs); i++) {
		struct uxdp_bpf_object *a, *b;
		struct uxdp_bpf_program *pa = NULL, *pb = NULL;

		a = uxdp_bpf_object_open(corpus(corpus_objs[i]), &oi);
		b = uxdp_bpf_object_open(corpus(corpus_objs[i]), &oj);
		assert_non_null(a);
		assert_non_null(b);
		load_ok(a);
		load_ok(b);
		while ((pa = uxdp_bpf_object_next_program(a, pa))) {
			struct uxdp_prog *xa, *xb;
			int n;

			pb = uxdp_bpf_object_next_program(b, pb);
			xa = uxdp_bpf_program_prog(pa);
			xb = uxdp_bpf_program_prog(pb);
			if (!xa) {		/* not an XDP program */
				assert_null(xb);
				continue;
			}
			for (n = 0; n < 64; n++) {
				uint32_t len = 14 + (uint32_t)rand_r(&seed) %
					       (sizeof(pkt) - 14), j;
				struct t_run ra, rb;

				for (j = 0; j < len; j++)
					pkt[j] = (uint8_t)rand_r(&seed);
				if (n % 2 && len >= 42)
					t_udp_packet(pkt, len,
						     (uint16_t)rand_r(&seed));
				pkt[0] = (uint8_t)(n % 3 ? pkt[0] : 255);
				ra = run_ex(xa, pkt, len, (uint32_t)n % 2, 1);
				rb = run_ex(xb, pkt, len, (uint32_t)n % 2, 1);
				if (ra.verdict != rb.verdict || ra.len != rb.len ||
				    ra.meta != rb.meta ||
				    memcmp(ra.out, rb.out, ra.meta + ra.len))
					fail_msg("%s: %s: packet %d (%u bytes): "
						 "%u/%u bytes %u vs %u/%u %u",
						 corpus_objs[i],
						 uxdp_prog_name(xa), n, len,
						 ra.meta, ra.len, ra.verdict,
						 rb.meta, rb.len, rb.verdict);
			}
			uxdp_prog_put(xa);
			uxdp_prog_put(xb);
		}
		if (strcmp(corpus_objs[i], "helpers"))
			maps_equal(a, b);
		uxdp_bpf_object_close(a);
		uxdp_bpf_object_close(b);
	}
	uxdp_set_print(old);
}

/* Several programs of one object, and two objects of one file with maps
 * of their own, side by side in one process. */
static void test_several(void **state)
{
	static const struct {
		const char *name;
		uint32_t verdict;
	} want[] = {
		{ "sec_xdp", XDP_PASS }, { "sec_frags", XDP_DROP },
		{ "sec_devmap", XDP_TX }, { "sec_cpumap", XDP_ABORTED },
		{ "sec_old", XDP_REDIRECT },
	};
	struct uxdp_prog *p[ARRAY_SIZE(want)], *c1, *c2;
	struct uxdp_bpf_object *obj, *o1, *o2;
	uint8_t pkt[64];
	size_t i;

	(void)state;
	t_packet(pkt, sizeof(pkt), ETH_P_IP);
	obj = open_corpus("sections");
	load_ok(obj);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		p[i] = uxdp_bpf_object_prog(obj, want[i].name);
		assert_non_null(p[i]);
		assert_string_equal(uxdp_prog_name(p[i]), want[i].name);
	}
	/* The object's handles go; the programs it gave out stay. */
	uxdp_bpf_object_close(obj);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		struct uxdp_bpf_prog_info info;

		assert_int_equal(run1(p[i], pkt, sizeof(pkt)).verdict,
				 want[i].verdict);
		/* An XDP_ABORTED the program returns is counted, not as a
		 * fault. */
		info_of(p[i], &info);
		assert_int_equal(info.runs, 1);
		assert_int_equal(info.aborted,
				 want[i].verdict == XDP_ABORTED);
		assert_int_equal(info.faults, 0);
		uxdp_prog_put(p[i]);
	}

	c1 = load_engine("count", UXDP_BPF_ENGINE_JIT, NULL, &o1);
	c2 = load_engine("count", UXDP_BPF_ENGINE_INTERP, NULL, &o2);
	run_ex(c1, pkt, sizeof(pkt), 0, 2);
	run_ex(c2, pkt, sizeof(pkt), 0, 5);
	run_ex(c1, pkt, sizeof(pkt), 0, 1);
	assert_int_equal(array_u64(o1, "counters", 0), 3);
	assert_int_equal(array_u64(o2, "counters", 0), 5);
	uxdp_prog_put(c1);
	uxdp_prog_put(c2);
	uxdp_bpf_object_close(o1);
	uxdp_bpf_object_close(o2);
}

static uint64_t runs_of(struct uxdp_prog *p)
{
	struct uxdp_bpf_prog_info info;

	info_of(p, &info);
	return info.runs;
}

struct t_passed {
	uint64_t n;
	uint64_t marked;	/* first byte 0x5a: the program's write */
};

static void t_on_pass(void *arg, struct uxdp_buff *b)
{
	struct t_passed *tp = arg;

	tp->n++;
	tp->marked += ((uint8_t *)b->data)[0] == 0x5a;
}

/*
 * The verdicts through a driver: macswap's XDP_TX leaves by the null
 * device's transmit queue; rodata's writes to the packet (its mark, set
 * before load) reach the pass handler with XDP_PASS.
 */
static void test_attached_verdicts(void **state)
{
	struct uxdp_bpf_object *o1, *o2;
	struct t_passed tp = { 0 };
	struct uxdp_prog *p1, *p2;
	struct uxdp_rxq_stats rs;
	struct uxdp_txq_stats ts;
	struct uxdp_bpf_map *ro;
	char name[UXDP_IFNAMSIZ];
	struct uxdp_dev *d;
	uint8_t *rv;
	size_t size;
	int i;

	(void)state;
	snprintf(name, sizeof(name), "bpfv%d", (int)getpid() % 100000);
	d = uxdp_null_create(name, NULL);
	if (!d) {
		fail_msg("null %s: %s", name, uxdp_errmsg());
		return;
	}
	uxdp_dev_set_pass_handler(d, t_on_pass, &tp);
	p1 = load_engine("macswap", UXDP_BPF_ENGINE_DEFAULT, NULL, &o1);
	o2 = open_engine("rodata", UXDP_BPF_ENGINE_INTERP);
	ro = uxdp_bpf_object_find_map(o2, "rodata.rodata");
	rv = uxdp_bpf_map_initial_value(ro, &size);
	assert_non_null(rv);
	rv[4] = 0x5a;
	load_ok(o2);
	p2 = uxdp_bpf_object_prog(o2, NULL);
	assert_non_null(p2);

	assert_int_equal(uxdp_dev_attach_prog(d, 0, p1), 0);
	assert_int_equal(uxdp_dev_up(d), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(uxdp_dev_poll(d, 0, 32), 32);
	assert_int_equal(uxdp_dev_rxq_stats(d, 0, &rs), 0);
	assert_int_equal(uxdp_dev_txq_stats(d, 0, &ts), 0);
	assert_int_equal(rs.tx, 128);
	assert_int_equal(ts.packets, 128);
	assert_int_equal(runs_of(p1), 128);

	assert_int_equal(uxdp_dev_attach_prog(d, 0, p2), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(uxdp_dev_poll(d, 0, 32), 32);
	assert_int_equal(tp.n, 128);
	assert_int_equal(tp.marked, 128);
	assert_int_equal(runs_of(p1), 128);
	assert_int_equal(uxdp_dev_audit(d, NULL), 0);

	uxdp_dev_destroy(d);
	unload(p1, o1);
	unload(p2, o2);
}

/*
 * Loaded programs on a device: two count programs (two objects, one on
 * each engine) swapped on a null device under traffic from its polling
 * thread. When a swap returns the old program runs no more; the first
 * object is closed while its program runs, and the program's last
 * reference goes while the device runs the other (ASan: no run after its
 * code is freed, nothing leaked). Every packet is counted by exactly one.
 */
static void test_attached_swap(void **state)
{
	UXDP_DECLARE_OPTS(uxdp_null_opts, no, .rx_pps = 200000);
	UXDP_DECLARE_OPTS(uxdp_poll_group_opts, go, .idle_us = 1000);
	struct uxdp_bpf_object *o1, *o2;
	struct uxdp_prog *p1, *p2, *cur, *old;
	struct uxdp_rxq_stats st;
	uint64_t r1_final, r2, was, n;
	struct uxdp_dev *d;
	char name[UXDP_IFNAMSIZ];
	int i;

	(void)state;
	snprintf(name, sizeof(name), "bpfl%d", (int)getpid() % 100000);
	d = uxdp_null_create(name, &no);
	if (!d) {
		fail_msg("null %s: %s", name, uxdp_errmsg());
		return;
	}
	p1 = load_engine("count", UXDP_BPF_ENGINE_DEFAULT, NULL, &o1);
	p2 = load_engine("count", UXDP_BPF_ENGINE_INTERP, NULL, &o2);
	assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, p1), 0);
	assert_int_equal(uxdp_dev_up(d), 0);
	assert_int_equal(uxdp_dev_start(d, &go), 0);
	/* Closed while attached: the program and its maps live on. */
	uxdp_bpf_object_close(o1);
	T_WAIT_FOR(runs_of(p1) >= 200, 10000);
	assert_true(runs_of(p1) >= 200);

	cur = p1;
	for (i = 0; i < 10; i++) {
		old = cur;
		cur = cur == p1 ? p2 : p1;
		was = runs_of(cur);
		assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, cur),
				 0);
		n = runs_of(old);
		T_WAIT_FOR(runs_of(cur) >= was + 50, 10000);
		assert_true(runs_of(cur) >= was + 50);
		/* Swapped out: not one run more. */
		assert_int_equal(runs_of(old), n);
	}
	/* p2 runs; p1's last reference goes with it swapped out. */
	if (cur != p2)
		assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, p2),
				 0);
	r1_final = runs_of(p1);
	uxdp_prog_put(p1);
	was = runs_of(p2);
	T_WAIT_FOR(runs_of(p2) >= was + 200, 10000);
	uxdp_dev_stop(d);
	r2 = runs_of(p2);
	assert_true(r2 >= was + 200);

	assert_int_equal(uxdp_dev_rxq_stats(d, 0, &st), 0);
	assert_int_equal(st.packets, r1_final + r2);
	assert_int_equal(st.pass_dropped, st.packets);
	assert_int_equal(st.aborted, 0);
	assert_int_equal(array_u64(o2, "counters", 0), r2);
	assert_int_equal(array_u64(o2, "counters", 1), 64 * r2);
	assert_int_equal(uxdp_dev_audit(d, NULL), 0);

	assert_int_equal(uxdp_dev_attach_prog(d, UXDP_ALL_QUEUES, NULL), 0);
	uxdp_prog_put(p2);
	uxdp_bpf_object_close(o2);
	uxdp_dev_destroy(d);
}

/* T_BPF_DUMP=NAME (a corpus object, or a path): what the loader made. */
static void test_dump(void **state)
{
	const char *name = getenv("T_BPF_DUMP");
	struct uxdp_bpf_object *obj;
	int err;

	(void)state;
	if (!name || !*name)
		skip();
	obj = strchr(name, '/') ? uxdp_bpf_object_open(name, NULL) :
				  open_corpus(name);
	assert_non_null(obj);
	err = uxdp_bpf_object_load(obj);
	printf("load: %d %s\n", err, uxdp_errmsg());
	dump(obj);
	uxdp_bpf_object_close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_file_and_mem),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_autoload_off),
		cmocka_unit_test(test_count_maps),
		cmocka_unit_test(test_percpu_layout),
		cmocka_unit_test(test_array_definitions),
		cmocka_unit_test(test_global_data),
		cmocka_unit_test(test_calls_linked),
		cmocka_unit_test(test_core_relocated),
		cmocka_unit_test(test_cpu_versions),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_fuzz_regressions),
		cmocka_unit_test(test_debian_objects),
		cmocka_unit_test(test_no_bpf_syscall),
		cmocka_unit_test(test_helper_names),
		cmocka_unit_test(test_gen_lookup),
		cmocka_unit_test(test_run_verdicts),
		cmocka_unit_test(test_run_maps),
		cmocka_unit_test(test_run_hash),
		cmocka_unit_test(test_run_csum),
		cmocka_unit_test(test_run_bytes),
		cmocka_unit_test(test_run_global_data),
		cmocka_unit_test(test_run_adjust),
		cmocka_unit_test(test_run_helpers),
		cmocka_unit_test(test_run_printk),
		cmocka_unit_test(test_run_faults),
		cmocka_unit_test(test_proven),
		cmocka_unit_test(test_engines),
		cmocka_unit_test(test_run_context),
		cmocka_unit_test(test_run_xdp_filter),
		cmocka_unit_test(test_engines_agree),
		cmocka_unit_test(test_several),
		cmocka_unit_test(test_attached_verdicts),
		cmocka_unit_test(test_attached_swap),
		cmocka_unit_test(test_dump),
	};

	t_test_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
