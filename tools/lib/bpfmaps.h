/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An eBPF object's maps from the command line (--map, --map-elem and
 * --dump-map of uxdp-fwd and uxdp-bpf): elements seeded from a JSON file
 * or one KEY=VALUE at a time before the program first runs, and a map's
 * contents printed (or written to a file) when the tool ends.
 *
 * The file is what `bpftool map dump -j` prints, so a dump seeds again:
 *
 *   [ {"key": ["0x0a","0x00","0x00","0x01"], "value": ["0x01","0x00"]},
 *     {"key": 7, "value": "01 00"},
 *     {"key": 3, "values": [{"cpu": 0, "value": 5}, {"cpu": 1, "value": 6}]},
 *     {"value": 42} ]
 *
 * A key or value is an array of bytes (numbers 0..255 or hex strings
 * "0x0a"), a string of hex digits (spaces and a 0x in front allowed), or
 * an integer stored in host order in a field of at most 8 bytes. Per-CPU
 * maps take "values" per CPU (CPUs not named get zeros) or one "value" for
 * all; queues and stacks take values only, pushed in order; a prog array's
 * value may be the name of a program of the object (its id goes in).
 * Global data (OBJ.bss, OBJ.data, OBJ.rodata, .data.NAME, ...) is a
 * one-element array whose key 0 is written before the object loads, so a
 * `volatile const` setting in .rodata can be given too.
 *
 * Only the public API (<uxdp/bpf.h>) and jansson for the JSON.
 */
#ifndef UXDP_TOOLS_BPFMAPS_H
#define UXDP_TOOLS_BPFMAPS_H

#include <stdbool.h>
#include <stdio.h>

#include <uxdp/bpf.h>

#include "params.h"

#define TMAP_HELP_MAP							\
	"before the program runs, put the elements of FILE.json (an array " \
	"of {\"key\":K,\"value\":V} as bpftool map dump -j prints) into " \
	"the object's map NAME; repeatable (default none)"
#define TMAP_HELP_ELEM							\
	"put one element into map NAME: KEY and VALUE each a number (host " \
	"order), [bytes], or hex (0x0a000001, \"0a 00 00 01\"); KEY " \
	"empty for a queue or a stack, VALUE a program's name for a prog " \
	"array; repeatable, after --map (default none)"
#define TMAP_HELP_DUMP							\
	"at the end, print map NAME's elements (or write them to FILE as " \
	"JSON that --map reads back); repeatable (default none)"

/* One --map or --map-elem: which map, and what goes in. */
struct tmap_seed {
	char *buf;		/* the option's text, copied and cut in parts */
	const char *opt;	/* "--map" or "--map-elem" */
	const char *arg;	/* its argument as given (argv), for messages */
	const char *map;	/* the map's name */
	const char *file;	/* --map: the JSON file, else NULL */
	const char *key;	/* --map-elem: the KEY text (may be "") */
	const char *value;	/* --map-elem: the VALUE text */
};

/* One --dump-map. */
struct tmap_dump {
	char *buf;
	const char *map;
	const char *file;	/* NULL: stdout */
};

struct tmap_opts {
	struct tmap_seed seed[2 * TPARAM_STRS_MAX];
	unsigned int nseed;
	struct tmap_dump dump[TPARAM_STRS_MAX];
	unsigned int ndump;
};

/*
 * From the option lists (--map, --map-elem, --dump-map; any may be NULL)
 * into @out: each string split, bad shapes are bad usage (tparams_fail(),
 * exit 2). Nothing is read yet: files are read by tmap_seed_*().
 */
void tmap_opts_parse(const struct tparams *p, const struct tparam_strs *map,
		     const struct tparam_strs *elem,
		     const struct tparam_strs *dump, struct tmap_opts *out);

/* Whether any option was given. */
bool tmap_opts_any(const struct tmap_opts *o);
/* Let go of what tmap_opts_parse() copied. */
void tmap_opts_free(struct tmap_opts *o);

/*
 * Whether a seed names a prog array of @obj (opened, not loaded): its
 * values are programs of the object, so all of them are to be loaded.
 */
bool tmap_seeds_progs(const struct tmap_opts *o,
		      const struct uxdp_bpf_object *obj);

/*
 * Seed @obj's maps: tmap_seed_global() before uxdp_bpf_object_load() (the
 * global data: their initial values), tmap_seed_maps() after it (every
 * other map, by uxdp_bpf_map_update() with BPF_ANY, or a push). Each also
 * checks that every map named exists (the first call) and is of a kind it
 * can take. Returns 0, or -1 with the reason in @why ("--map NAME=FILE:
 * element 3: key: want 4 bytes, have 2").
 */
int tmap_seed_global(const struct tmap_opts *o, struct uxdp_bpf_object *obj,
		     char *why, size_t len);
int tmap_seed_maps(const struct tmap_opts *o, struct uxdp_bpf_object *obj,
		   char *why, size_t len);

/*
 * The --dump-map output: for each, the map's elements. To a file: the JSON
 * array (as bpftool map dump -j). To @out: with @json, one line
 * {"map":NAME,"type":T,"elements":[...]}, else a header line and one line
 * per element, "  key 0a 00 00 01  value 01 00 ..." (per-CPU: one line per
 * CPU with a value not all zeros). A queue or stack is drained to be read.
 * Returns 0, or -1 after a message "PROG: --dump-map NAME: why" on stderr.
 */
int tmap_dump_all(const char *prog, const struct tmap_opts *o,
		  struct uxdp_bpf_object *obj, FILE *out, bool json);

#endif /* UXDP_TOOLS_BPFMAPS_H */
