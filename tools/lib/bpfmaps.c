/* SPDX-License-Identifier: BSD-2-Clause */
/* An eBPF object's maps from the command line (bpfmaps.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <linux/bpf.h>

#include "bpfmaps.h"
#include "ports.h"

/* ---- the options ------------------------------------------------------------- */

static char *copy_or_die(const struct tparams *p, const char *s)
{
	char *c = strdup(s);

	if (!c)
		tparams_fail(p, "out of memory");
	return c;
}

void tmap_opts_parse(const struct tparams *p, const struct tparam_strs *map,
		     const struct tparam_strs *elem,
		     const struct tparam_strs *dump, struct tmap_opts *out)
{
	unsigned int i;
	char *eq, *colon;

	memset(out, 0, sizeof(*out));
	for (i = 0; map && i < map->n; i++) {
		struct tmap_seed *s = &out->seed[out->nseed++];

		s->opt = "--map";
		s->arg = map->v[i];
		s->buf = copy_or_die(p, map->v[i]);
		eq = strchr(s->buf, '=');
		if (!eq || eq == s->buf || !eq[1])
			tparams_fail(p, "--map '%s': want NAME=FILE.json",
				     s->arg);
		*eq = '\0';
		s->map = s->buf;
		s->file = eq + 1;
	}
	for (i = 0; elem && i < elem->n; i++) {
		struct tmap_seed *s = &out->seed[out->nseed++];

		s->opt = "--map-elem";
		s->arg = elem->v[i];
		s->buf = copy_or_die(p, elem->v[i]);
		/* The name has no ':' and the key no '=' (JSON needs none,
		 * nor does hex), so the first of each cuts. */
		colon = strchr(s->buf, ':');
		eq = colon ? strchr(colon + 1, '=') : NULL;
		if (!colon || colon == s->buf || !eq || !eq[1])
			tparams_fail(p, "--map-elem '%s': want NAME:KEY=VALUE "
				     "(NAME:=VALUE for a queue or a stack)",
				     s->arg);
		*colon = '\0';
		*eq = '\0';
		s->map = s->buf;
		s->key = colon + 1;
		s->value = eq + 1;
	}
	for (i = 0; dump && i < dump->n; i++) {
		struct tmap_dump *d = &out->dump[out->ndump++];

		d->buf = copy_or_die(p, dump->v[i]);
		eq = strchr(d->buf, '=');
		if (eq == d->buf || (eq && !eq[1]))
			tparams_fail(p, "--dump-map '%s': want NAME or "
				     "NAME=FILE", dump->v[i]);
		if (eq)
			*eq = '\0';
		d->map = d->buf;
		d->file = eq ? eq + 1 : NULL;
	}
}

bool tmap_opts_any(const struct tmap_opts *o)
{
	return o && (o->nseed || o->ndump);
}

void tmap_opts_free(struct tmap_opts *o)
{
	unsigned int i;

	for (i = 0; i < o->nseed; i++)
		free(o->seed[i].buf);
	for (i = 0; i < o->ndump; i++)
		free(o->dump[i].buf);
	o->nseed = o->ndump = 0;
}

/* ---- maps by name and kind ------------------------------------------------------- */

/* bpftool's names, by BPF_MAP_TYPE_* number. */
static const char *const type_names[] = {
	[BPF_MAP_TYPE_HASH] = "hash",
	[BPF_MAP_TYPE_ARRAY] = "array",
	[BPF_MAP_TYPE_PROG_ARRAY] = "prog_array",
	[BPF_MAP_TYPE_PERF_EVENT_ARRAY] = "perf_event_array",
	[BPF_MAP_TYPE_PERCPU_HASH] = "percpu_hash",
	[BPF_MAP_TYPE_PERCPU_ARRAY] = "percpu_array",
	[BPF_MAP_TYPE_STACK_TRACE] = "stack_trace",
	[BPF_MAP_TYPE_CGROUP_ARRAY] = "cgroup_array",
	[BPF_MAP_TYPE_LRU_HASH] = "lru_hash",
	[BPF_MAP_TYPE_LRU_PERCPU_HASH] = "lru_percpu_hash",
	[BPF_MAP_TYPE_LPM_TRIE] = "lpm_trie",
	[BPF_MAP_TYPE_ARRAY_OF_MAPS] = "array_of_maps",
	[BPF_MAP_TYPE_HASH_OF_MAPS] = "hash_of_maps",
	[BPF_MAP_TYPE_DEVMAP] = "devmap",
	[BPF_MAP_TYPE_SOCKMAP] = "sockmap",
	[BPF_MAP_TYPE_CPUMAP] = "cpumap",
	[BPF_MAP_TYPE_XSKMAP] = "xskmap",
	[BPF_MAP_TYPE_SOCKHASH] = "sockhash",
	[BPF_MAP_TYPE_CGROUP_STORAGE] = "cgroup_storage",
	[BPF_MAP_TYPE_REUSEPORT_SOCKARRAY] = "reuseport_sockarray",
	[BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE] = "percpu_cgroup_storage",
	[BPF_MAP_TYPE_QUEUE] = "queue",
	[BPF_MAP_TYPE_STACK] = "stack",
	[BPF_MAP_TYPE_SK_STORAGE] = "sk_storage",
	[BPF_MAP_TYPE_DEVMAP_HASH] = "devmap_hash",
	[BPF_MAP_TYPE_STRUCT_OPS] = "struct_ops",
	[BPF_MAP_TYPE_RINGBUF] = "ringbuf",
};

static const char *type_name(uint32_t t, char *buf, size_t len)
{
	if (t < sizeof(type_names) / sizeof(type_names[0]) && type_names[t])
		return type_names[t];
	snprintf(buf, len, "type %u", t);
	return buf;
}

static bool is_percpu(uint32_t t)
{
	return t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static bool is_keyless(uint32_t t)
{
	return t == BPF_MAP_TYPE_QUEUE || t == BPF_MAP_TYPE_STACK;
}

/* Maps whose elements are not the control plane's to write or read. */
static bool is_stream(uint32_t t)
{
	return t == BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
	       t == BPF_MAP_TYPE_RINGBUF;
}

/* By its name; a name starting with '.' (".rodata", ".bss") also finds
 * the one map whose name ends with it ("fw.rodata"). */
static struct uxdp_bpf_map *find_map(const struct uxdp_bpf_object *obj,
				     const char *name)
{
	struct uxdp_bpf_map *m = uxdp_bpf_object_find_map(obj, name), *hit;
	size_t n = strlen(name), l;

	if (m || name[0] != '.')
		return m;
	hit = NULL;
	while ((m = uxdp_bpf_object_next_map(obj, m))) {
		l = strlen(uxdp_bpf_map_name(m));
		if (l > n && !strcmp(uxdp_bpf_map_name(m) + l - n, name)) {
			if (hit)
				return NULL;
			hit = m;
		}
	}
	return hit;
}

/* "a, b, c": the object's maps, for a message. */
static void map_names(const struct uxdp_bpf_object *obj, char *buf,
		      size_t len)
{
	struct uxdp_bpf_map *m = NULL;
	size_t at = 0;

	buf[0] = '\0';
	while ((m = uxdp_bpf_object_next_map(obj, m)) && at < len) {
		int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
				 uxdp_bpf_map_name(m));

		if (n < 0)
			break;
		at += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* Global data: it has an initial value before load (and after it, a
 * live one for .data and .bss, EPERM for the frozen .rodata). */
static bool is_global(struct uxdp_bpf_map *m)
{
	size_t size;

	return uxdp_bpf_map_initial_value(m, &size) || errno == EPERM;
}

bool tmap_seeds_progs(const struct tmap_opts *o,
		      const struct uxdp_bpf_object *obj)
{
	struct uxdp_bpf_map *m;
	unsigned int i;

	for (i = 0; o && i < o->nseed; i++) {
		m = find_map(obj, o->seed[i].map);
		if (m && uxdp_bpf_map_type(m) == BPF_MAP_TYPE_PROG_ARRAY)
			return true;
	}
	return false;
}

/* ---- keys and values from JSON ------------------------------------------------------ */

/* Where a message goes: the buffer, and what it is about so far. */
struct where {
	char *why;
	size_t len;
	char what[160];		/* "--map NAME=FILE: element 3" */
};

static int fail(struct where *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct where *w, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(w->why, w->len, "%s: %s", w->what, msg);
	/* Not EBADF: tbpf_try_load() would take that for a sibling program
	 * to load and try again. */
	errno = EINVAL;
	return -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Hex digits into @out (at most @max bytes): tokens apart by spaces or
 * ':', each with an optional 0x, an even number of digits. Returns the
 * number of bytes (which may be above @max: counted, not written), or -1
 * with *@bad the character at fault.
 */
static long parse_hex(const char *s, uint8_t *out, size_t max, char *bad)
{
	size_t n = 0;
	int hi, lo;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == ':' || *s == '\n')
			s++;
		if (!*s)
			return (long)n;
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			s += 2;
		if (hexval(*s) < 0) {
			*bad = *s ? *s : 'x';	/* "0x" alone */
			return -1;
		}
		while ((hi = hexval(s[0])) >= 0) {
			lo = hexval(s[1]);
			if (lo < 0) {
				/* NUL: a digit without its pair. */
				*bad = strchr(" \t:\n", s[1]) ? '\0' : s[1];
				return -1;
			}
			if (n < max)
				out[n] = (uint8_t)(hi << 4 | lo);
			n++;
			s += 2;
		}
		if (*s && *s != ' ' && *s != '\t' && *s != ':' && *s != '\n') {
			*bad = *s;
			return -1;
		}
	}
}

/* An integer @v into @size bytes (1..8) in host order, if it fits as a
 * signed or an unsigned number of that size. */
static int put_int(struct where *w, const char *part, json_int_t v,
		   uint8_t *out, size_t size)
{
	uint64_t u = (uint64_t)v;
	size_t i;

	if (size > 8)
		return fail(w, "%s: a number for %zu bytes (at most 8: give "
			    "bytes or hex)", part, size);
	if (size < 8) {
		int64_t lo = -((int64_t)1 << (8 * size - 1));
		int64_t hi = (int64_t)((UINT64_C(1) << (8 * size)) - 1);

		if (v < lo || v > hi)
			return fail(w, "%s: %lld does not fit in %zu byte%s",
				    part, (long long)v, size,
				    size == 1 ? "" : "s");
	}
	for (i = 0; i < size; i++) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		out[i] = (uint8_t)(u >> (8 * i));
#else
		out[i] = (uint8_t)(u >> (8 * (size - 1 - i)));
#endif
	}
	return 0;
}

/* A key or value @j (bytes, hex, a number) into exactly @size bytes. */
static int get_bytes(struct where *w, const char *part, const json_t *j,
		     uint8_t *out, size_t size)
{
	size_t i, n;
	long got;
	char bad = 0;

	if (json_is_integer(j))
		return put_int(w, part, json_integer_value(j), out, size);
	if (json_is_string(j)) {
		got = parse_hex(json_string_value(j), out, size, &bad);
		if (got < 0 && !bad)
			return fail(w, "%s: \"%s\": an odd number of hex digits",
				    part, json_string_value(j));
		if (got < 0)
			return fail(w, "%s: \"%s\" is not hex (at '%c')", part,
				    json_string_value(j), bad);
		if ((size_t)got != size)
			return fail(w, "%s: want %zu bytes, have %ld", part,
				    size, got);
		return 0;
	}
	if (!json_is_array(j))
		return fail(w, "%s: want an array of bytes, a hex string or "
			    "a number", part);
	n = json_array_size(j);
	if (n != size)
		return fail(w, "%s: want %zu bytes, have %zu", part, size, n);
	for (i = 0; i < n; i++) {
		const json_t *b = json_array_get(j, i);
		json_int_t v;
		uint8_t one;

		if (json_is_integer(b)) {
			v = json_integer_value(b);
			if (v < 0 || v > 255)
				return fail(w, "%s: byte %zu: %lld is not "
					    "0..255", part, i, (long long)v);
			out[i] = (uint8_t)v;
		} else if (json_is_string(b) &&
			   parse_hex(json_string_value(b), &one, 1,
				     &bad) == 1) {
			out[i] = one;
		} else {
			return fail(w, "%s: byte %zu: want 0..255 or \"0xNN\"",
				    part, i);
		}
	}
	return 0;
}

/*
 * A value: for a prog array the name of a program of the object gives its
 * id, for an of-map the name of a map of the object its id; anything else
 * is bytes.
 */
static int get_value(struct where *w, const char *part, const json_t *j,
		     struct uxdp_bpf_map *m, struct uxdp_bpf_object *obj,
		     uint8_t *out, size_t size)
{
	uint32_t t = uxdp_bpf_map_type(m), id;
	const char *s = json_string_value(j);

	if (s && size == sizeof(id) && t == BPF_MAP_TYPE_PROG_ARRAY &&
	    uxdp_bpf_object_find_program(obj, s)) {
		struct uxdp_prog *p = uxdp_bpf_object_prog(obj, s);

		if (!p)
			return fail(w, "%s: program %s: not loaded (%s)", part,
				    s, tports_why(errno));
		id = uxdp_bpf_prog_id(p);
		uxdp_prog_put(p);
		memcpy(out, &id, sizeof(id));
		return 0;
	}
	if (s && size == sizeof(id) &&
	    (t == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	     t == BPF_MAP_TYPE_HASH_OF_MAPS) &&
	    uxdp_bpf_object_find_map(obj, s)) {
		id = uxdp_bpf_map_id(uxdp_bpf_object_find_map(obj, s));
		if (!id)
			return fail(w, "%s: map %s: not created", part, s);
		memcpy(out, &id, sizeof(id));
		return 0;
	}
	return get_bytes(w, part, j, out, size);
}

/* One element's parts, in buffers the size of the map's. */
struct elem {
	uint8_t *key;		/* NULL for a queue or a stack */
	uint8_t *value;		/* per-CPU: every CPU's slot */
	size_t vsize;		/* of @value */
};

static size_t slot_size(const struct uxdp_bpf_map *m)
{
	return ((size_t)uxdp_bpf_map_value_size(m) + 7) & ~(size_t)7;
}

static int elem_alloc(struct elem *e, const struct uxdp_bpf_map *m)
{
	uint32_t t = uxdp_bpf_map_type(m);

	e->vsize = is_percpu(t) ?
		   slot_size(m) * (size_t)uxdp_bpf_num_possible_cpus() :
		   uxdp_bpf_map_value_size(m);
	e->value = calloc(1, e->vsize ? e->vsize : 1);
	e->key = is_keyless(t) ? NULL :
		 calloc(1, uxdp_bpf_map_key_size(m) + 1);
	return !e->value || (!is_keyless(t) && !e->key) ? -ENOMEM : 0;
}

static void elem_free(struct elem *e)
{
	free(e->key);
	free(e->value);
	e->key = e->value = NULL;
}

/* "values": [{"cpu": N, "value": V}, ...], CPUs not named left zero. */
static int get_percpu(struct where *w, const json_t *vals,
		      struct uxdp_bpf_map *m, struct uxdp_bpf_object *obj,
		      struct elem *e)
{
	int ncpu = uxdp_bpf_num_possible_cpus();
	size_t slot = slot_size(m), i;
	uint8_t seen[UXDP_MAX_THREADS] = { 0 };
	char part[32];

	if (!json_is_array(vals))
		return fail(w, "values: want [{\"cpu\": N, \"value\": V}, ...]");
	for (i = 0; i < json_array_size(vals); i++) {
		const json_t *o = json_array_get(vals, i);
		const json_t *cpu = json_object_get(o, "cpu");
		const json_t *v = json_object_get(o, "value");
		json_int_t c;

		if (!json_is_object(o) || !json_is_integer(cpu) || !v ||
		    json_object_size(o) != 2)
			return fail(w, "values: entry %zu: want {\"cpu\": N, "
				    "\"value\": V}", i + 1);
		c = json_integer_value(cpu);
		if (c < 0 || c >= ncpu || c >= UXDP_MAX_THREADS)
			return fail(w, "values: cpu %lld: the possible CPUs "
				    "are 0..%d", (long long)c, ncpu - 1);
		if (seen[c]++)
			return fail(w, "values: cpu %lld twice", (long long)c);
		snprintf(part, sizeof(part), "cpu %lld: value", (long long)c);
		if (get_value(w, part, v, m, obj, e->value + (size_t)c * slot,
			      uxdp_bpf_map_value_size(m)))
			return -1;
	}
	return 0;
}

/* One {"key": K, "value": V} (or "values") object into @e. */
static int get_elem(struct where *w, const json_t *o, struct uxdp_bpf_map *m,
		    struct uxdp_bpf_object *obj, bool global, struct elem *e)
{
	uint32_t t = uxdp_bpf_map_type(m);
	const json_t *key = NULL, *value = NULL, *values = NULL, *x;
	const char *field;
	uint32_t zero = 0;
	size_t i, slot;

	if (!json_is_object(o))
		return fail(w, "want an object {\"key\": K, \"value\": V}");
	json_object_foreach((json_t *)o, field, x) {
		if (!strcmp(field, "key"))
			key = x;
		else if (!strcmp(field, "value"))
			value = x;
		else if (!strcmp(field, "values"))
			values = x;
		else if (strcmp(field, "formatted"))	/* bpftool's BTF view */
			return fail(w, "unknown field \"%s\" (want key, value, "
				    "values)", field);
	}
	if (is_keyless(t) && key)
		return fail(w, "a %s has no keys: give \"value\" only",
			    type_name(t, (char[16]){ 0 }, 16));
	if (!is_keyless(t) && !key)
		return fail(w, "no \"key\"");
	if (!value == !values)
		return fail(w, "want one of \"value\" and \"values\"");
	if (values && !is_percpu(t))
		return fail(w, "\"values\" (per CPU) for a map that is not "
			    "per-CPU");
	if (key && get_bytes(w, "key", key, e->key, uxdp_bpf_map_key_size(m)))
		return -1;
	if (global && memcmp(e->key, &zero, sizeof(zero)))
		return fail(w, "key: global data has one element, key 0");
	if (values)
		return get_percpu(w, values, m, obj, e);
	if (!is_percpu(t))
		return get_value(w, "value", value, m, obj, e->value, e->vsize);
	/* One value for every CPU. */
	slot = slot_size(m);
	if (get_value(w, "value", value, m, obj, e->value,
		      uxdp_bpf_map_value_size(m)))
		return -1;
	for (i = 1; i < (size_t)uxdp_bpf_num_possible_cpus(); i++)
		memcpy(e->value + i * slot, e->value, slot);
	return 0;
}

/* Put @e in: global data into its initial value, else an update (a push
 * for a queue or a stack). */
static int put_elem(struct where *w, struct uxdp_bpf_map *m, bool global,
		    const struct elem *e)
{
	void *init;
	size_t size;
	int err;

	if (global) {
		init = uxdp_bpf_map_initial_value(m, &size);
		if (!init || size != e->vsize)
			return fail(w, "global data: %s", init ? "size changed"
				    : tports_why(errno));
		memcpy(init, e->value, size);
		return 0;
	}
	err = uxdp_bpf_map_update(m, e->key, e->value, BPF_ANY);
	if (!err)
		return 0;
	if (*uxdp_errmsg())
		return fail(w, "%s", uxdp_errmsg());
	/* The datapath's errors come without a text: the kernel's meaning. */
	if (err == -E2BIG)
		return fail(w, "map %s is full (max_entries %u) or the key is "
			    "out of its range (E2BIG)", uxdp_bpf_map_name(m),
			    uxdp_bpf_map_max_entries(m));
	return fail(w, "map %s: update: %s", uxdp_bpf_map_name(m),
		    strerror(-err));
}

/* A --map-elem KEY or VALUE: JSON, or else bare hex. */
static json_t *cli_json(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
			       NULL);

	return j ? j : json_string(text);
}

/* The elements of seed @s into its map @m. */
static int seed_one(const struct tmap_seed *s, struct uxdp_bpf_map *m,
		    struct uxdp_bpf_object *obj, bool global, char *why,
		    size_t len)
{
	struct where w = { .why = why, .len = len };
	json_t *all, *o;
	json_error_t jerr;
	struct elem e;
	size_t i;
	int err = 0;

	snprintf(w.what, sizeof(w.what), "%s %s", s->opt, s->arg);
	if (elem_alloc(&e, m)) {
		elem_free(&e);
		return fail(&w, "out of memory");
	}
	if (s->file) {
		all = json_load_file(s->file, JSON_REJECT_DUPLICATES, &jerr);
		if (!all) {
			elem_free(&e);
			if (jerr.line > 0)
				return fail(&w, "line %d: %s", jerr.line,
					    jerr.text);
			return fail(&w, "%s", jerr.text);
		}
		if (!json_is_array(all)) {
			json_decref(all);
			elem_free(&e);
			return fail(&w, "want a JSON array of elements");
		}
	} else {
		json_t *v = cli_json(s->value);

		all = json_array();
		o = json_object();
		if (*s->key)
			json_object_set_new(o, "key", cli_json(s->key));
		/* [{"cpu":..}] for a per-CPU map: one value per CPU. */
		if (is_percpu(uxdp_bpf_map_type(m)) && json_is_array(v) &&
		    json_is_object(json_array_get(v, 0)))
			json_object_set_new(o, "values", v);
		else
			json_object_set_new(o, "value", v);
		json_array_append_new(all, o);
	}
	for (i = 0; i < json_array_size(all) && !err; i++) {
		if (s->file)
			snprintf(w.what, sizeof(w.what), "%s %s: element %zu",
				 s->opt, s->arg, i + 1);
		memset(e.value, 0, e.vsize);
		if (e.key)
			memset(e.key, 0, uxdp_bpf_map_key_size(m));
		err = get_elem(&w, json_array_get(all, i), m, obj, global, &e);
		if (!err)
			err = put_elem(&w, m, global, &e);
	}
	json_decref(all);
	elem_free(&e);
	return err;
}

/* Every map named exists and takes what it is asked for. */
static int check_names(const struct tmap_opts *o,
		       const struct uxdp_bpf_object *obj, char *why,
		       size_t len)
{
	const struct uxdp_bpf_map *m;
	char names[1024], tb[16];
	const char *opt, *arg, *name;
	unsigned int i;

	for (i = 0; i < o->nseed + o->ndump; i++) {
		if (i < o->nseed) {
			opt = o->seed[i].opt;
			arg = o->seed[i].arg;
			name = o->seed[i].map;
		} else {
			opt = "--dump-map";
			arg = o->dump[i - o->nseed].map;
			name = arg;
		}
		m = find_map(obj, name);
		if (!m) {
			map_names(obj, names, sizeof(names));
			snprintf(why, len, "%s %s: no map '%s' in the object; "
				 "its maps: %s", opt, arg, name, names);
			errno = ENOENT;
			return -1;
		}
		if (is_stream(uxdp_bpf_map_type(m))) {
			snprintf(why, len, "%s %s: a %s's records are read as "
				 "they come, not %s", opt, arg,
				 type_name(uxdp_bpf_map_type(m), tb,
					   sizeof(tb)),
				 i < o->nseed ? "written" : "dumped");
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

/* The seeds of global data (before load) or of every other map. */
static int seed_pass(const struct tmap_opts *o, struct uxdp_bpf_object *obj,
		     bool global, char *why, size_t len)
{
	struct uxdp_bpf_map *m;
	unsigned int i;

	for (i = 0; o && i < o->nseed; i++) {
		m = find_map(obj, o->seed[i].map);
		if (m && is_global(m) == global &&
		    seed_one(&o->seed[i], m, obj, global, why, len))
			return -1;
	}
	return 0;
}

int tmap_seed_global(const struct tmap_opts *o, struct uxdp_bpf_object *obj,
		     char *why, size_t len)
{
	if (!tmap_opts_any(o))
		return 0;
	if (check_names(o, obj, why, len))
		return -1;
	return seed_pass(o, obj, true, why, len);
}

int tmap_seed_maps(const struct tmap_opts *o, struct uxdp_bpf_object *obj,
		   char *why, size_t len)
{
	return seed_pass(o, obj, false, why, len);
}

/* ---- dumps ------------------------------------------------------------------------------ */

/* The bytes as ["0x0a", ...], as bpftool prints them. */
static json_t *json_bytes(const uint8_t *b, size_t n)
{
	json_t *a = json_array();
	char h[8];
	size_t i;

	for (i = 0; a && i < n; i++) {
		snprintf(h, sizeof(h), "0x%02x", b[i]);
		json_array_append_new(a, json_string(h));
	}
	return a;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* "0a 00 01", 16 bytes a line, the lines after the first indented. */
static void print_bytes(FILE *f, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%02x", !i ? "" : i % 16 ? " " : "\n      ", b[i]);
}

/*
 * A prog array's or an of-map's value is an id, which means nothing in
 * another process: the name of the object's program or map it is, which
 * --map takes (NULL if it is none of the object's).
 */
static const char *ref_name(const struct uxdp_bpf_map *m,
			    const struct uxdp_bpf_object *obj,
			    const uint8_t *value)
{
	uint32_t t = uxdp_bpf_map_type(m), id;
	const struct uxdp_bpf_program *bp = NULL;
	const struct uxdp_bpf_map *x = NULL;
	const char *name = NULL;
	struct uxdp_prog *p;

	if (uxdp_bpf_map_value_size(m) != sizeof(id))
		return NULL;
	memcpy(&id, value, sizeof(id));
	if (t == BPF_MAP_TYPE_PROG_ARRAY) {
		while (!name &&
		       (bp = uxdp_bpf_object_next_program(obj, bp))) {
			p = uxdp_bpf_program_prog(bp);
			if (p && uxdp_bpf_prog_id(p) == id)
				name = uxdp_bpf_program_name(bp);
			if (p)
				uxdp_prog_put(p);
		}
		return name;
	}
	if (t == BPF_MAP_TYPE_ARRAY_OF_MAPS || t == BPF_MAP_TYPE_HASH_OF_MAPS)
		while ((x = uxdp_bpf_object_next_map(obj, x)))
			if (uxdp_bpf_map_id(x) == id)
				return uxdp_bpf_map_name(x);
	return NULL;
}

/* One element as bpftool's JSON. */
static json_t *elem_json(const struct uxdp_bpf_map *m,
			 const struct uxdp_bpf_object *obj, const uint8_t *key,
			 const uint8_t *value)
{
	uint32_t t = uxdp_bpf_map_type(m), vs = uxdp_bpf_map_value_size(m);
	json_t *o = json_object(), *vals;
	size_t slot = slot_size(m);
	const char *ref;
	int c;

	if (key)
		json_object_set_new(o, "key",
				    json_bytes(key, uxdp_bpf_map_key_size(m)));
	if (!is_percpu(t)) {
		ref = ref_name(m, obj, value);
		json_object_set_new(o, "value", ref ? json_string(ref) :
					      json_bytes(value, vs));
		return o;
	}
	/* The CPUs with a value not all zeros (every CPU not listed holds
	 * zeros, as --map reads it); CPU 0 if none has one. */
	vals = json_array();
	for (c = 0; c < uxdp_bpf_num_possible_cpus(); c++) {
		json_t *one;

		if (all_zero(value + (size_t)c * slot, vs) &&
		    (c || !all_zero(value, slot * (size_t)
				    uxdp_bpf_num_possible_cpus())))
			continue;
		one = json_object();

		json_object_set_new(one, "cpu", json_integer(c));
		json_object_set_new(one, "value",
				    json_bytes(value + (size_t)c * slot, vs));
		json_array_append_new(vals, one);
	}
	json_object_set_new(o, "values", vals);
	return o;
}

static void elem_text(FILE *f, const struct uxdp_bpf_map *m,
		      const struct uxdp_bpf_object *obj, const uint8_t *key,
		      const uint8_t *value)
{
	const char *ref;

	uint32_t t = uxdp_bpf_map_type(m), vs = uxdp_bpf_map_value_size(m);
	size_t slot = slot_size(m);
	bool any = false;
	int c;

	if (!is_percpu(t)) {
		fputs(" ", f);
		if (key) {
			fputs(" key ", f);
			print_bytes(f, key, uxdp_bpf_map_key_size(m));
			fputs(" ", f);
		}
		fputs(" value ", f);
		print_bytes(f, value, vs);
		ref = ref_name(m, obj, value);
		if (ref)
			fprintf(f, " (%s)", ref);
		fputs("\n", f);
		return;
	}
	for (c = 0; c < uxdp_bpf_num_possible_cpus(); c++) {
		if (all_zero(value + (size_t)c * slot, vs))
			continue;
		fputs("  key ", f);
		print_bytes(f, key, uxdp_bpf_map_key_size(m));
		fprintf(f, "  cpu %d value ", c);
		print_bytes(f, value + (size_t)c * slot, vs);
		fputs("\n", f);
		any = true;
	}
	if (!any) {
		fputs("  key ", f);
		print_bytes(f, key, uxdp_bpf_map_key_size(m));
		fputs("  value ", f);
		print_bytes(f, value, vs);
		fputs(" (every CPU)\n", f);
	}
}

/* What a dump collects: the elements, in the order read. */
struct collected {
	uint8_t *keys, *values;		/* n of each, one after another */
	size_t n, cap, ksize, vsize;
};

static int collect_add(struct collected *c, const uint8_t *key,
		       const uint8_t *value)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		uint8_t *k = realloc(c->keys, cap * (c->ksize + 1));
		uint8_t *v;

		if (!k)
			return -ENOMEM;
		c->keys = k;
		v = realloc(c->values, cap * c->vsize);
		if (!v)
			return -ENOMEM;
		c->values = v;
		c->cap = cap;
	}
	if (c->ksize)
		memcpy(c->keys + c->n * c->ksize, key, c->ksize);
	memcpy(c->values + c->n * c->vsize, value, c->vsize);
	c->n++;
	return 0;
}

/*
 * Every element of @m: keys by get_next_key from the start (at most
 * max_entries of them, should a program change the map meanwhile), a
 * queue or a stack popped (a stack's then put bottom first, so that
 * --map pushes it back as it was).
 */
static int collect(struct uxdp_bpf_map *m, struct collected *c)
{
	uint32_t t = uxdp_bpf_map_type(m), max = uxdp_bpf_map_max_entries(m);
	struct elem e;
	uint8_t *prev = NULL, *next = NULL;
	size_t i;
	int err;

	memset(c, 0, sizeof(*c));
	err = elem_alloc(&e, m);
	c->ksize = is_keyless(t) ? 0 : uxdp_bpf_map_key_size(m);
	c->vsize = e.vsize;
	if (err)
		goto out;
	if (is_keyless(t)) {
		for (i = 0; i < max; i++) {
			err = uxdp_bpf_map_lookup_and_delete(m, NULL, e.value,
							     0);
			if (err == -ENOENT) {
				err = 0;
				break;
			}
			if (err || (err = collect_add(c, NULL, e.value)))
				goto out;
		}
		for (i = 0; t == BPF_MAP_TYPE_STACK && i < c->n / 2; i++) {
			uint8_t *a = c->values + i * c->vsize;
			uint8_t *b = c->values + (c->n - 1 - i) * c->vsize;

			memcpy(e.value, a, c->vsize);
			memcpy(a, b, c->vsize);
			memcpy(b, e.value, c->vsize);
		}
		goto out;
	}
	prev = calloc(1, c->ksize + 1);
	next = calloc(1, c->ksize + 1);
	if (!prev || !next) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < max; i++) {
		err = uxdp_bpf_map_get_next_key(m, i ? prev : NULL, next);
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		if (err)
			goto out;
		err = uxdp_bpf_map_lookup(m, next, e.value, 0);
		/* Gone since (a hash), or an empty slot (a prog array). */
		if (!err)
			err = collect_add(c, next, e.value);
		else if (err == -ENOENT)
			err = 0;
		if (err)
			goto out;
		memcpy(prev, next, c->ksize);
	}
out:
	free(prev);
	free(next);
	elem_free(&e);
	return err;
}

/* The array @all to @path, one element a line: as a person reads it,
 * and what --map takes. 0, or -1 with errno. */
static int write_file(const char *path, const json_t *all)
{
	FILE *f = fopen(path, "w");
	size_t i;
	char *line;
	int err = 0;

	if (!f)
		return -1;
	fputs("[", f);
	for (i = 0; i < json_array_size(all) && !err; i++) {
		line = json_dumps(json_array_get(all, i), JSON_COMPACT);
		if (!line) {
			err = ENOMEM;
			break;
		}
		fprintf(f, "%s\n  %s", i ? "," : "", line);
		free(line);
	}
	fputs(json_array_size(all) ? "\n]\n" : "]\n", f);
	if (ferror(f) && !err)
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	errno = err;
	return err ? -1 : 0;
}

static int dump_one(const char *prog, const struct tmap_dump *d,
		    struct uxdp_bpf_object *obj, FILE *out, bool json)
{
	struct uxdp_bpf_map *m = find_map(obj, d->map);
	struct collected c;
	json_t *all, *o;
	char tb[16];
	size_t i;
	int err;

	if (!m) {
		tmsg(prog, "--dump-map %s: no such map", d->map);
		return -1;
	}
	err = collect(m, &c);
	if (err) {
		tmsg(prog, "--dump-map %s: %s", d->map, tports_why(err));
		goto out;
	}
	if (!d->file && !json) {
		fprintf(out, "map %s (%s, key %u bytes, value %u bytes, "
			"max_entries %u): %zu element%s\n",
			uxdp_bpf_map_name(m),
			type_name(uxdp_bpf_map_type(m), tb, sizeof(tb)),
			uxdp_bpf_map_key_size(m), uxdp_bpf_map_value_size(m),
			uxdp_bpf_map_max_entries(m), c.n, c.n == 1 ? "" : "s");
		for (i = 0; i < c.n; i++)
			elem_text(out, m, obj, c.ksize ? c.keys + i * c.ksize : NULL,
				  c.values + i * c.vsize);
		goto out;
	}
	all = json_array();
	for (i = 0; all && i < c.n; i++)
		json_array_append_new(all,
			elem_json(m, obj, c.ksize ? c.keys + i * c.ksize : NULL,
				  c.values + i * c.vsize));
	if (!all) {
		err = -ENOMEM;
		tmsg(prog, "--dump-map %s: out of memory", d->map);
	} else if (d->file) {
		if (write_file(d->file, all)) {
			tmsg(prog, "--dump-map %s=%s: %s", d->map, d->file,
			     strerror(errno));
			err = -1;
		}
		json_decref(all);
	} else {
		char *line;

		o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o}",
			      "map", uxdp_bpf_map_name(m),
			      "type", type_name(uxdp_bpf_map_type(m), tb,
						sizeof(tb)),
			      "key_size", (int)uxdp_bpf_map_key_size(m),
			      "value_size", (int)uxdp_bpf_map_value_size(m),
			      "max_entries", (int)uxdp_bpf_map_max_entries(m),
			      "elements", all);
		line = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (line)
			fprintf(out, "%s\n", line);
		else
			err = -1;
		free(line);
		json_decref(o);
	}
out:
	free(c.keys);
	free(c.values);
	return err ? -1 : 0;
}

int tmap_dump_all(const char *prog, const struct tmap_opts *o,
		  struct uxdp_bpf_object *obj, FILE *out, bool json)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; o && obj && i < o->ndump; i++)
		if (dump_one(prog, &o->dump[i], obj, out, json))
			ret = -1;
	return ret;
}
