/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What --map FILE.json and --map-elem NAME:KEY=VALUE read (tools/lib/
 * bpfmaps.c), from anyone: the input picks one of the committed corpus
 * objects (queues and stacks, arrays and per-CPU arrays, global data, prog
 * arrays, of-maps, an LPM trie) and one of its maps, then is the JSON file
 * (or KEY and VALUE, split at the first newline). Seeding must end in 0 or
 * -1 with a message, never overrun a key or value; then every map of the
 * object is dumped (text, JSON, and to a file that is read back in), which
 * must also end cleanly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uxdp/bpf.h>

#include "fuzz.h"
#include "bpfmaps.h"

static const char *const objs[] = { "queue", "count", "rodata", "tail",
				    "ofmaps", "lpm" };
#define NOBJ (sizeof(objs) / sizeof(objs[0]))

/* Each object twice: opened (global data are seeded before load) and
 * loaded (every other map). */
static struct uxdp_bpf_object *opened[NOBJ], *loaded[NOBJ];
static FILE *devnull;
static char dumpfile[64];

static int quiet(enum uxdp_print_level l, const char *fmt, va_list ap)
{
	(void)l;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[512];
	unsigned int i;

	(void)argc;
	(void)argv;
	uxdp_set_print(quiet);
	for (i = 0; i < NOBJ; i++) {
		snprintf(path, sizeof(path), "%s/%s.bpf-obj", FUZZ_OBJ_DIR,
			 objs[i]);
		opened[i] = uxdp_bpf_object_open(path, NULL);
		loaded[i] = uxdp_bpf_object_open(path, NULL);
		if (!opened[i] || !loaded[i] ||
		    uxdp_bpf_object_load(loaded[i])) {
			fprintf(stderr, "fuzz_bpf_mapfile: %s: %s\n", path,
				uxdp_errmsg());
			abort();
		}
	}
	devnull = fopen("/dev/null", "w");
	snprintf(dumpfile, sizeof(dumpfile), "/tmp/fuzz_bpf_mapfile.%d.json",
		 (int)getpid());
	return devnull ? 0 : -1;
}

/* The @n-th map of @obj (by order), wrapping. */
static const char *nth_map(struct uxdp_bpf_object *obj, unsigned int n)
{
	struct uxdp_bpf_map *m = NULL, *first = uxdp_bpf_object_next_map(obj,
									   NULL);
	unsigned int i;

	if (!first)
		return NULL;
	m = first;
	for (i = 0; i < n; i++) {
		m = uxdp_bpf_object_next_map(obj, m);
		if (!m)
			m = first;
	}
	return uxdp_bpf_map_name(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	unsigned int o = fz_u8(&f) % NOBJ, which = fz_u8(&f);
	bool elem = which & 0x80, json = which & 0x40;
	struct uxdp_bpf_object *obj = loaded[o];
	static struct tmap_opts opts;
	char why[1024], path[64], *text, *nl;
	struct tmap_seed *s = &opts.seed[0];
	int fd = -1;

	memset(&opts, 0, sizeof(opts));
	s->map = nth_map(obj, which & 0x3f);
	if (!s->map)
		return 0;
	text = malloc(f.n + 1);
	if (!text)
		return 0;
	memcpy(text, f.p, f.n);
	text[f.n] = '\0';
	s->arg = "fuzz";
	if (elem) {
		s->opt = "--map-elem";
		nl = strchr(text, '\n');
		s->key = text;
		s->value = nl ? nl + 1 : "";
		if (nl)
			*nl = '\0';
	} else {
		s->opt = "--map";
		fd = memfd_create("fuzz_bpf_mapfile", MFD_CLOEXEC);
		if (fd < 0 || write(fd, f.p, f.n) != (ssize_t)f.n) {
			if (fd >= 0)
				close(fd);
			free(text);
			return 0;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		s->file = path;
	}
	opts.nseed = 1;
	/* Global data: into the opened copy's initial value; the rest into
	 * the loaded one (its global maps are skipped by tmap_seed_maps). */
	if (!tmap_seed_global(&opts, opened[o], why, sizeof(why)))
		(void)tmap_seed_maps(&opts, obj, why, sizeof(why));
	/* Both must leave a message or nothing: the buffer is a string. */
	why[sizeof(why) - 1] = '\0';

	/* Every map out: as text or JSON lines, then to a file, read back. */
	opts.nseed = 0;
	opts.ndump = 1;
	opts.dump[0].map = s->map;
	opts.dump[0].file = NULL;
	(void)tmap_dump_all("fuzz", &opts, obj, devnull, json);
	opts.dump[0].file = dumpfile;
	if (!tmap_dump_all("fuzz", &opts, obj, devnull, json)) {
		opts.ndump = 0;
		opts.nseed = 1;
		s->opt = "--map";
		s->file = dumpfile;
		/* What a dump wrote, --map takes: a queue's or a stack's
		 * elements fit (the dump drained it), a hash's are its own. */
		if (tmap_seed_maps(&opts, obj, why, sizeof(why))) {
			fprintf(stderr, "fuzz_bpf_mapfile: a dump of %s does "
				"not seed back: %s\n", s->map, why);
			abort();
		}
	}
	if (fd >= 0)
		close(fd);
	free(text);
	return 0;
}
