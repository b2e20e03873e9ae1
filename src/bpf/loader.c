/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Objects: what clang writes, opened with libbpf and loaded with no bpf()
 * system call.
 *
 * open:  elf.c checks the file's structure (libbpf 1.1 trusts too much of
 *        it), core.c applies the CO-RE relocations in place, then libbpf
 *        parses the ELF, the BTF, the maps and the relocations
 *        (bpf_object__open_mem). Programs of unknown type (old-style section
 *        names) become XDP programs; programs of other types are skipped.
 * load:  libbpf links in gen_loader mode (bpf_object__gen_loader before
 *        bpf_object__load): it records the syscalls a light skeleton would
 *        make instead of making them, and leaves each program's
 *        instructions linked (subprograms appended) with maps as lddw
 *        src 5 (the map) and src 6 (a value in it) by libbpf's map index.
 *        Then uxdp creates the maps, refuses what it does not have (by
 *        program, instruction and reason), and hands each program to the
 *        safety pass and an engine (prog.c).
 *
 * libbpf's own messages go to the print callback only with UXDP_BPF_DEBUG
 * set (as the afxdp driver's), but its first warning of a call is kept for
 * the error text when it fails.
 */
#include "../internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uxdp/bpf.h>

#include "bpf_internal.h"
#include "loader.h"

#ifdef UXDP_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

/* The largest object file read: Katran's balancer is 200 KiB. */
#define OBJ_MAX_SIZE	(256U << 20)

enum obj_state {
	OBJ_OPEN,		/* programs and maps visible, settable */
	OBJ_LOADED,		/* programs loaded; libbpf's object gone */
	OBJ_FAILED,		/* a load failed: only close is left */
};

struct uxdp_bpf_program {
	struct uxdp_bpf_object *obj;
	struct bpf_program *lp;		/* libbpf's, until load ends */
	char *name;
	char *section;
	uint32_t type;			/* BPF_PROG_TYPE_*, XDP if forced */
	uint32_t attach_type;
	bool xdp;			/* an XDP program: uxdp loads it */
	bool autoload;
	/* Where its code starts in the ELF (-1: not found), and how many
	 * instructions are its own: calls to kfuncs are named from there. */
	int sec;
	uint32_t sec_off;
	uint32_t main_len;
	/* After load: the instructions as linked, and the program. */
	struct bpf_insn *insns;
	uint32_t len;
	struct uxdp_prog *prog;		/* the object's own reference */
};

struct kfunc_call {
	uint32_t sec, insn;
	char *name;
};

/* A prog array's or an of-map's slot the object sets at load, as its
 * static initialiser names it (".values = { [1] = &prog }" or "&map", in
 * .rel.maps): a program, or (of-maps) a map of the object. */
struct prog_slot {
	uint32_t map, slot, prog;
	bool is_map;
};

struct uxdp_bpf_object {
	uint32_t refcnt;		/* the handle + each live program */
	enum obj_state state;
	char *name;
	uint32_t engine;
	uint32_t flags;			/* UXDP_BPF_F_* */
	uint64_t budget;
#ifdef UXDP_HAVE_LIBBPF
	struct bpf_object *lobj;
#endif
	struct uxdp_bpf_program *progs;
	uint32_t nprogs;
	struct uxdp_bpf_map **maps;	/* libbpf's order: lddw imm */
	uint32_t nmaps;
	struct uxdp_bpf_core_fails core;
	struct kfunc_call *kfuncs;
	uint32_t nkfuncs;
	struct prog_slot *slots;
	uint32_t nslots;
};

/* ---- references ---------------------------------------------------------- */

void uxdp_bpf_object_get(struct uxdp_bpf_object *obj)
{
	__atomic_fetch_add(&obj->refcnt, 1, __ATOMIC_RELAXED);
}

static void obj_free(struct uxdp_bpf_object *obj)
{
	uint32_t i;

	for (i = 0; i < obj->nprogs; i++) {
		free(obj->progs[i].name);
		free(obj->progs[i].section);
		free(obj->progs[i].insns);
	}
	free(obj->progs);
	for (i = 0; i < obj->nmaps; i++)
		uxdp_bpf_map_free(obj->maps[i]);
	free(obj->maps);
	for (i = 0; i < obj->nkfuncs; i++)
		free(obj->kfuncs[i].name);
	free(obj->kfuncs);
	free(obj->slots);
	uxdp_bpf_core_fails_free(&obj->core);
	free(obj->name);
	free(obj);
}

void uxdp_bpf_object_put(struct uxdp_bpf_object *obj)
{
	/* acq_rel: the last put sees every program's writes to the maps
	 * before they are freed. */
	if (obj && !__atomic_sub_fetch(&obj->refcnt, 1, __ATOMIC_ACQ_REL))
		obj_free(obj);
}

/* ---- programs and maps: the handles -------------------------------------- */

UXDP_EXPORT const char *uxdp_bpf_object_name(const struct uxdp_bpf_object *obj)
{
	return obj->name;
}

UXDP_EXPORT struct uxdp_bpf_program *
uxdp_bpf_object_next_program(const struct uxdp_bpf_object *obj,
			     const struct uxdp_bpf_program *prev)
{
	uint32_t i = prev ? (uint32_t)(prev - obj->progs) + 1 : 0;

	return i < obj->nprogs ? &obj->progs[i] : NULL;
}

UXDP_EXPORT struct uxdp_bpf_program *
uxdp_bpf_object_find_program(const struct uxdp_bpf_object *obj,
			     const char *name)
{
	uint32_t i;

	for (i = 0; name && i < obj->nprogs; i++)
		if (!strcmp(obj->progs[i].name, name))
			return &obj->progs[i];
	errno = ENOENT;
	return NULL;
}

UXDP_EXPORT const char *uxdp_bpf_program_name(const struct uxdp_bpf_program *p)
{
	return p->name;
}

UXDP_EXPORT const char *
uxdp_bpf_program_section(const struct uxdp_bpf_program *p)
{
	return p->section;
}

UXDP_EXPORT uint32_t uxdp_bpf_program_type(const struct uxdp_bpf_program *p)
{
	return p->type;
}

UXDP_EXPORT uint32_t
uxdp_bpf_program_attach_type(const struct uxdp_bpf_program *p)
{
	return p->attach_type;
}

UXDP_EXPORT bool uxdp_bpf_program_autoload(const struct uxdp_bpf_program *p)
{
	return p->autoload;
}

UXDP_EXPORT int uxdp_bpf_program_set_autoload(struct uxdp_bpf_program *p,
					      bool load)
{
	uxdp_clear_err();
	if (p->obj->state != OBJ_OPEN)
		return uxdp_fail(EINVAL, "prog %s: autoload set after load",
				 p->name);
	if (load && !p->xdp)
		return uxdp_fail(EINVAL, "prog %s: section %s is not an XDP "
				 "program; uxdp loads only XDP programs",
				 p->name, p->section);
	p->autoload = load;
	return 0;
}

UXDP_EXPORT struct uxdp_prog *
uxdp_bpf_program_prog(const struct uxdp_bpf_program *p)
{
	uxdp_clear_err();
	if (p->obj->state != OBJ_LOADED) {
		errno = -uxdp_fail(EAGAIN, "prog %s: the object is not loaded",
				   p->name);
		return NULL;
	}
	if (!p->prog) {
		errno = -uxdp_fail(ENOENT, "prog %s: not loaded (%s)", p->name,
				   p->xdp ? "autoload was off" :
				   "not an XDP program");
		return NULL;
	}
	return uxdp_prog_get(p->prog);
}

UXDP_EXPORT struct uxdp_prog *
uxdp_bpf_object_prog(const struct uxdp_bpf_object *obj, const char *name)
{
	uint32_t i;

	uxdp_clear_err();
	if (name) {
		const struct uxdp_bpf_program *p;

		p = uxdp_bpf_object_find_program(obj, name);
		if (!p) {
			errno = -uxdp_fail(ENOENT, "%s: no program %s",
					   obj->name, name);
			return NULL;
		}
		return uxdp_bpf_program_prog(p);
	}
	if (obj->state != OBJ_LOADED) {
		errno = -uxdp_fail(EAGAIN, "%s: not loaded", obj->name);
		return NULL;
	}
	for (i = 0; i < obj->nprogs; i++)
		if (obj->progs[i].prog)
			return uxdp_prog_get(obj->progs[i].prog);
	errno = -uxdp_fail(ENOENT, "%s: no program loaded", obj->name);
	return NULL;
}

const struct bpf_insn *uxdp_bpf_program_insns(const struct uxdp_bpf_program *p,
					      uint32_t *len)
{
	*len = p->len;
	return p->insns;
}

UXDP_EXPORT struct uxdp_bpf_map *
uxdp_bpf_object_next_map(const struct uxdp_bpf_object *obj,
			 const struct uxdp_bpf_map *prev)
{
	uint32_t i = prev ? prev->idx + 1 : 0;

	return i < obj->nmaps ? obj->maps[i] : NULL;
}

UXDP_EXPORT struct uxdp_bpf_map *
uxdp_bpf_object_find_map(const struct uxdp_bpf_object *obj, const char *name)
{
	uint32_t i;

	for (i = 0; name && i < obj->nmaps; i++)
		if (!strcmp(obj->maps[i]->name, name))
			return obj->maps[i];
	errno = ENOENT;
	return NULL;
}

UXDP_EXPORT void *uxdp_bpf_map_initial_value(struct uxdp_bpf_map *map,
					     size_t *size)
{
	uxdp_clear_err();
	if (!map->internal) {
		errno = -uxdp_fail(EINVAL, "map %s: not global data",
				   map->name);
		return NULL;
	}
	if (!map->created) {
		if (!map->init) {
			errno = -uxdp_fail(EINVAL, "map %s: no initial value "
					   "(a failed load?)", map->name);
			return NULL;
		}
		if (size)
			*size = map->init_size;
		return map->init;
	}
	if (map->frozen) {
		errno = -uxdp_fail(EPERM, "map %s: read-only, frozen at load",
				   map->name);
		return NULL;
	}
	if (size)
		*size = map->value_size;
	return map->values;
}

/* ---- closing ----------------------------------------------------------------- */

UXDP_EXPORT void uxdp_bpf_object_close(struct uxdp_bpf_object *obj)
{
	uint32_t i;

	if (!obj)
		return;
#ifdef UXDP_HAVE_LIBBPF
	bpf_object__close(obj->lobj);
	obj->lobj = NULL;
#endif
	for (i = 0; i < obj->nmaps; i++) {
		obj->maps[i]->init = NULL;
		obj->maps[i]->init_size = 0;
		/* The kernel empties a prog array when its last user
		 * reference goes: here the object's handle. A program in
		 * its own object's array would otherwise hold the object
		 * for ever. */
		uxdp_bpf_prog_array_clear(obj->maps[i]);
	}
	/* The programs' references go; each that is still attached or held
	 * keeps the object (its maps) until its own last reference. */
	for (i = 0; i < obj->nprogs; i++) {
		struct uxdp_prog *prog = obj->progs[i].prog;

		obj->progs[i].prog = NULL;
		uxdp_prog_put(prog);
	}
	uxdp_bpf_object_put(obj);
}

#ifdef UXDP_HAVE_LIBBPF

/* ---- libbpf's messages ------------------------------------------------------- */

/*
 * libbpf's print callback is one for the process: calls into libbpf take
 * this lock, so two objects opened at once do not swap each other's
 * callback or warning.
 */
static pthread_mutex_t lbpf_lock = PTHREAD_MUTEX_INITIALIZER;
static char lbpf_warn[256];		/* the call's first warning */
static int lbpf_debug = -1;

static int lbpf_print(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	if (level == LIBBPF_WARN && !lbpf_warn[0])
		snprintf(lbpf_warn, sizeof(lbpf_warn), "%s", line);
	if (lbpf_debug < 0) {
		const char *e = getenv("UXDP_BPF_DEBUG");

		lbpf_debug = e && *e && *e != '0';
	}
	if (lbpf_debug)
		uxdp_pr(UXDP_WARN, "bpf: libbpf: %s\n", line);
	return 0;
}

static libbpf_print_fn_t lbpf_begin(void)
{
	pthread_mutex_lock(&lbpf_lock);
	lbpf_warn[0] = '\0';
	return libbpf_set_print(lbpf_print);
}

/* Ends the section; the warning is copied to @why first (may be NULL). */
static void lbpf_end(libbpf_print_fn_t old, char *why, size_t len)
{
	if (why)
		snprintf(why, len, "%s", lbpf_warn[0] ? lbpf_warn :
			 "no message");
	libbpf_set_print(old);
	pthread_mutex_unlock(&lbpf_lock);
}

/* ---- open --------------------------------------------------------------------- */

static int read_file(const char *path, uint8_t **out, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return uxdp_fail(errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return uxdp_fail(EINVAL, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > OBJ_MAX_SIZE) {
		close(fd);
		return uxdp_fail(E2BIG, "%s: %lld bytes, more than the %u an "
				 "object may have", path,
				 (long long)st.st_size, OBJ_MAX_SIZE);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return uxdp_fail(ENOMEM, "%s: out of memory", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			free(buf);
			goto fail;
		}
		got += (size_t)n;
	}
	close(fd);
	*out = buf;
	*size = got;
	return 0;
fail:
	close(fd);
	return uxdp_fail(err, "%s: %s", path, strerror(err));
}

/* libbpf's name for an object from a file: the base name up to its first
 * dot ("xdp_pass.bpf.o" is "xdp_pass"), which prefixes its global data
 * maps' names. */
static char *name_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;
	char *name;

	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	if (!n) {
		base = "obj";
		n = 3;
	}
	name = malloc(n + 1);
	if (name) {
		memcpy(name, base, n);
		name[n] = '\0';
	}
	return name;
}

static int kfuncs_take(struct uxdp_bpf_object *obj,
		       const struct uxdp_bpf_elf *e)
{
	uint32_t i;

	if (!e->ncalls)
		return 0;
	obj->kfuncs = calloc(e->ncalls, sizeof(*obj->kfuncs));
	if (!obj->kfuncs)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj->name);
	for (i = 0; i < e->ncalls; i++) {
		obj->kfuncs[i].sec = e->calls[i].sec;
		obj->kfuncs[i].insn = e->calls[i].insn;
		obj->kfuncs[i].name = strdup(e->calls[i].name);
		if (!obj->kfuncs[i].name)
			return uxdp_fail(ENOMEM, "%s: out of memory",
					 obj->name);
		obj->nkfuncs++;
	}
	return 0;
}

/* Where program @p starts in the ELF: the function symbol of its name in a
 * section of its section's name. */
static void prog_find_code(struct uxdp_bpf_program *p,
			   const struct uxdp_bpf_elf *e)
{
	uint32_t i;

	p->sec = -1;
	for (i = 1; i < e->nsyms; i++) {
		const Elf64_Sym *sym = &e->syms[i];

		if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
		    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= e->nsec ||
		    strcmp(uxdp_bpf_elf_sym_name(e, sym), p->name) ||
		    strcmp(uxdp_bpf_elf_sec_name(e, sym->st_shndx),
			   p->section))
			continue;
		p->sec = sym->st_shndx;
		p->sec_off = (uint32_t)(sym->st_value / 8);
		return;
	}
}

static int progs_take(struct uxdp_bpf_object *obj,
		      const struct uxdp_bpf_elf *e)
{
	struct bpf_program *lp;
	uint32_t n = 0;

	bpf_object__for_each_program(lp, obj->lobj)
		n++;
	obj->progs = calloc(n ? n : 1, sizeof(*obj->progs));
	if (!obj->progs)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj->name);
	bpf_object__for_each_program(lp, obj->lobj) {
		struct uxdp_bpf_program *p = &obj->progs[obj->nprogs];
		enum bpf_prog_type type = bpf_program__type(lp);

		p->obj = obj;
		p->lp = lp;
		p->name = strdup(bpf_program__name(lp));
		p->section = strdup(bpf_program__section_name(lp));
		obj->nprogs++;
		if (!p->name || !p->section)
			return uxdp_fail(ENOMEM, "%s: out of memory",
					 obj->name);
		/* An old-style section name ("xdp_prog", "prog") leaves the
		 * type unknown to libbpf: uxdp loads XDP programs only, so
		 * that is what it is (as ip and xdp-loader force it). */
		if (type == BPF_PROG_TYPE_UNSPEC) {
			type = BPF_PROG_TYPE_XDP;
			bpf_program__set_type(lp, type);
			bpf_program__set_expected_attach_type(lp, BPF_XDP);
		}
		p->type = type;
		p->attach_type = bpf_program__expected_attach_type(lp);
		p->xdp = type == BPF_PROG_TYPE_XDP;
		p->autoload = p->xdp && bpf_program__autoload(lp);
		p->main_len = (uint32_t)bpf_program__insn_cnt(lp);
		prog_find_code(p, e);
		if (!p->xdp)
			uxdp_pr(UXDP_INFO, "bpf: %s: prog %s (section %s) is "
				"not an XDP program: skipped\n", obj->name,
				p->name, p->section);
	}
	return 0;
}

static int maps_take(struct uxdp_bpf_object *obj)
{
	struct bpf_map *lm;
	uint32_t n = 0;

	bpf_object__for_each_map(lm, obj->lobj)
		n++;
	obj->maps = calloc(n ? n : 1, sizeof(*obj->maps));
	if (!obj->maps)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj->name);
	bpf_object__for_each_map(lm, obj->lobj) {
		struct uxdp_bpf_map *m;

		m = uxdp_bpf_map_new(bpf_map__name(lm), bpf_map__type(lm),
				     bpf_map__key_size(lm),
				     bpf_map__value_size(lm),
				     bpf_map__max_entries(lm),
				     bpf_map__map_flags(lm));
		if (!m)
			return uxdp_fail(ENOMEM, "%s: out of memory",
					 obj->name);
		m->idx = obj->nmaps;
		obj->maps[obj->nmaps++] = m;
		m->internal = bpf_map__is_internal(lm);
		/* As libbpf at load: a perf_event_array's sizes default to
		 * an int each, its max_entries to the possible CPUs. */
		if (m->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY) {
			if (!m->key_size)
				m->key_size = 4;
			if (!m->value_size)
				m->value_size = 4;
			if (!m->max_entries)
				m->max_entries = UXDP_BPF_NR_CPUS;
		}
		/* An of-map's inner definition (libbpf's inner map, from
		 * __array(values, ...)): what its maps must match. */
		if (bpf_map__inner_map(lm)) {
			struct bpf_map *im = bpf_map__inner_map(lm);

			m->inner = uxdp_bpf_map_new(bpf_map__name(im),
						    bpf_map__type(im),
						    bpf_map__key_size(im),
						    bpf_map__value_size(im),
						    bpf_map__max_entries(im),
						    bpf_map__map_flags(im));
			if (!m->inner)
				return uxdp_fail(ENOMEM, "%s: out of memory",
						 obj->name);
		}
		/* libbpf 1.1 says const, but the buffer is its writable
		 * copy of the section: what skeletons write before load. */
		if (m->internal)
			m->init = (void *)bpf_map__initial_value(lm,
							       &m->init_size);
		/* Pinning is uxdp's own (part 2), never the kernel's. */
		bpf_map__set_pin_path(lm, NULL);
	}
	return 0;
}

/* A BTF type past its modifiers and typedefs (a bounded walk: the BTF
 * was checked, but a loop of typedefs is not the walk's to follow). */
static const struct btf_type *btf_skip_mods(const struct btf *btf,
					    uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	int n;

	for (n = 0; t && n < 32; n++) {
		if (!btf_is_mod(t) && !btf_is_typedef(t))
			return t;
		t = btf__type_by_id(btf, t->type);
	}
	return NULL;
}

/* Where @map's initialiser starts in .maps: its variable's offset and its
 * "values" member's. -1 if the BTF does not say. */
static int64_t map_values_off(const struct btf *btf, int datasec,
			      const char *map, uint64_t *var_end)
{
	const struct btf_type *sec = btf__type_by_id(btf, (uint32_t)datasec);
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	uint32_t i, j;

	for (i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *var = btf__type_by_id(btf, vi->type);
		const struct btf_type *st;
		const struct btf_member *m;
		const char *name;

		if (!var || !btf_is_var(var))
			continue;
		name = btf__name_by_offset(btf, var->name_off);
		if (!name || strcmp(name, map))
			continue;
		st = btf_skip_mods(btf, var->type);
		if (!st || !btf_is_struct(st))
			return -1;
		m = btf_members(st);
		for (j = 0; j < btf_vlen(st); j++, m++) {
			const char *mn = btf__name_by_offset(btf, m->name_off);

			if (mn && !strcmp(mn, "values")) {
				*var_end = (uint64_t)vi->offset + vi->size;
				return (int64_t)vi->offset +
				       btf_member_bit_offset(st, j) / 8;
			}
		}
		return -1;
	}
	return -1;
}

/*
 * The static initialisers of prog arrays: relocations in .rel.maps, each
 * a pointer in a map's "values" array to a program's function symbol.
 * libbpf reads them too (and fills the slots when it loads, which uxdp
 * does not ask of it); here they are checked again (the file is
 * untrusted), and remembered for uxdp's load. An initialiser of another
 * map type (of-maps) is left for the map's own refusal.
 */
static int slots_take(struct uxdp_bpf_object *obj,
		      const struct uxdp_bpf_elf *e, uint32_t relsec)
{
	const struct btf *btf = bpf_object__btf(obj->lobj);
	int datasec;
	uint32_t i, k;

	for (i = relsec; i && i < e->nsec; i = 0) {
		const Elf64_Shdr *sh = &e->sh[i];
		const Elf64_Rel *rel;
		uint64_t n, j;
		datasec = btf ? btf__find_by_name_kind(btf, ".maps",
						       BTF_KIND_DATASEC) : -1;
		rel = (const Elf64_Rel *)(e->data + sh->sh_offset);
		n = sh->sh_size / sizeof(*rel);
		for (j = 0; j < n; j++) {
			uint32_t symi = (uint32_t)ELF64_R_SYM(rel[j].r_info);
			const Elf64_Sym *sym;
			struct uxdp_bpf_map *m = NULL;
			struct prog_slot *ns;
			uint64_t end = 0;
			int64_t voff = -1;

			if (symi >= e->nsyms || datasec < 0)
				return uxdp_fail(EINVAL, "%s: .maps: relocation "
						 "%llu: symbol %u of %u, or no "
						 "BTF for .maps", obj->name,
						 (unsigned long long)j, symi,
						 e->nsyms);
			sym = &e->syms[symi];
			for (k = 0; k < obj->nmaps && voff < 0; k++) {
				if (obj->maps[k]->internal)
					continue;
				voff = map_values_off(btf, datasec,
						      obj->maps[k]->name, &end);
				if (voff >= 0 &&
				    (rel[j].r_offset < (uint64_t)voff ||
				     rel[j].r_offset >= end))
					voff = -1;
				if (voff >= 0)
					m = obj->maps[k];
			}
			if (!m)
				return uxdp_fail(EINVAL, "%s: .maps: relocation "
						 "%llu at %llu is in no map's "
						 "values", obj->name,
						 (unsigned long long)j,
						 (unsigned long long)
						 rel[j].r_offset);
			if (m->type != BPF_MAP_TYPE_PROG_ARRAY &&
			    m->type != BPF_MAP_TYPE_ARRAY_OF_MAPS &&
			    m->type != BPF_MAP_TYPE_HASH_OF_MAPS)
				continue;
			ns = realloc(obj->slots, (obj->nslots + 1) *
				     sizeof(*ns));
			if (!ns)
				return uxdp_fail(ENOMEM, "%s: out of memory",
						 obj->name);
			obj->slots = ns;
			ns = &ns[obj->nslots];
			ns->map = m->idx;
			ns->slot = (uint32_t)MIN((rel[j].r_offset -
						  (uint64_t)voff) / 8,
						 UINT32_MAX);
			if ((rel[j].r_offset - (uint64_t)voff) % 8 ||
			    ns->slot >= m->max_entries)
				return uxdp_fail(EINVAL, "%s: map %s: an "
						 "initialiser at byte %llu of "
						 "its values: not slot 0..%u",
						 obj->name, m->name,
						 (unsigned long long)
						 (rel[j].r_offset -
						  (uint64_t)voff),
						 m->max_entries - 1);
			ns->is_map = m->type != BPF_MAP_TYPE_PROG_ARRAY;
			if (ns->is_map) {
				/* An of-map's: a map of the object, by the
				 * symbol's name. */
				const char *sn = uxdp_bpf_elf_sym_name(e, sym);

				for (k = 0; k < obj->nmaps; k++)
					if (!obj->maps[k]->internal &&
					    !strcmp(obj->maps[k]->name, sn))
						break;
				if (k == obj->nmaps)
					return uxdp_fail(EINVAL, "%s: map %s: "
							 "slot %u names %s, no "
							 "map of the object",
							 obj->name, m->name,
							 ns->slot, sn);
				ns->prog = k;
				obj->nslots++;
				continue;
			}
			for (k = 0; k < obj->nprogs; k++)
				if (obj->progs[k].sec >= 0 &&
				    (uint32_t)obj->progs[k].sec ==
				    sym->st_shndx &&
				    obj->progs[k].sec_off == sym->st_value / 8)
					break;
			if (k == obj->nprogs || ELF64_ST_TYPE(sym->st_info) !=
			    STT_FUNC)
				return uxdp_fail(EINVAL, "%s: map %s: slot %u "
						 "names %s, no program of the "
						 "object", obj->name, m->name,
						 ns->slot,
						 uxdp_bpf_elf_sym_name(e, sym));
			ns->prog = k;
			obj->nslots++;
		}
	}
	return 0;
}

/*
 * libbpf 1.1 fills prog arrays' slots itself at load, and refuses to in
 * gen_loader mode (the whole load fails): the relocations of .maps are
 * hidden from it (the section's type made SHT_NULL, which it skips) and
 * read by slots_take() instead. The section's index, or 0.
 */
static uint32_t maps_rel_hide(struct uxdp_bpf_elf *e)
{
	int sec = uxdp_bpf_elf_find_sec(e, ".maps");
	uint32_t i;

	for (i = 1; sec > 0 && i < e->nsec; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)&e->sh[i];

		if (sh->sh_type == SHT_REL && sh->sh_info == (uint32_t)sec) {
			sh->sh_type = SHT_NULL;
			return i;
		}
	}
	return 0;
}

/* After the programs: the prog arrays' initialisers (libbpf's order). A
 * slot naming a program that is not loaded fails the load, as libbpf's
 * update of its slot with no file descriptor does. */
static int obj_init_slots(struct uxdp_bpf_object *obj)
{
	uint32_t i;
	int err;

	for (i = 0; i < obj->nslots; i++) {
		const struct prog_slot *ps = &obj->slots[i];
		struct uxdp_bpf_map *m = obj->maps[ps->map];
		struct uxdp_bpf_program *p = &obj->progs[ps->prog];

		if (!m->created)
			continue;
		if (ps->is_map) {
			struct uxdp_bpf_map *in = obj->maps[ps->prog];
			uint32_t id = in->id;

			if (m->key_size != 4)
				return uxdp_fail(EINVAL, "%s: map %s: an "
						 "initialiser needs 4-byte "
						 "keys (key_size %u)",
						 obj->name, m->name,
						 m->key_size);
			/* The control plane's own update: the inner map's
			 * id, the kernel's checks. */
			if (!in->created)
				return uxdp_fail(EINVAL, "%s: map %s: slot %u "
						 "is map %s, which was not "
						 "made", obj->name, m->name,
						 ps->slot, in->name);
			err = m->ops->map_update(m, &ps->slot, &id, BPF_ANY);
			if (err)
				return err;
			continue;
		}
		if (!p->prog)
			return uxdp_fail(EBADF, "%s: map %s: slot %u is prog "
					 "%s, which is not loaded (autoload "
					 "off, or not XDP)", obj->name,
					 m->name, ps->slot, p->name);
		err = uxdp_bpf_prog_array_set(m, ps->slot,
					      uxdp_prog_get(p->prog));
		if (err)
			return err;
	}
	return 0;
}

static struct uxdp_bpf_object *obj_open(uint8_t *elf, size_t size,
					char *name,
					const struct uxdp_bpf_object_opts *opts)
{
	LIBBPF_OPTS(bpf_object_open_opts, lopts);
	struct uxdp_bpf_object *obj;
	struct uxdp_bpf_elf e;
	libbpf_print_fn_t old;
	uint32_t relmaps;
	char why[256];
	int err;

	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		err = uxdp_fail(ENOMEM, "bpf: out of memory");
		goto fail_name;
	}
	obj->refcnt = 1;
	obj->name = name;
	obj->engine = UXDP_OPTS_GET(opts, engine, UXDP_BPF_ENGINE_DEFAULT);
	obj->flags = UXDP_OPTS_GET(opts, flags, 0);
	obj->budget = UXDP_OPTS_GET(opts, budget, 0);
	err = uxdp_bpf_elf_parse(&e, elf, size, name);
	if (err)
		goto fail_obj;
	err = uxdp_bpf_core_relocate(&e, &obj->core);
	if (!err)
		err = kfuncs_take(obj, &e);
	if (err)
		goto fail_elf;
	lopts.object_name = name;
	relmaps = maps_rel_hide(&e);
	old = lbpf_begin();
	obj->lobj = bpf_object__open_mem(elf, size, &lopts);
	err = obj->lobj ? 0 : -errno;
	if (!err)
		err = progs_take(obj, &e);
	if (!err)
		err = maps_take(obj);
	if (!err)
		err = slots_take(obj, &e, relmaps);
	lbpf_end(old, why, sizeof(why));
	if (!obj->lobj) {
		err = uxdp_fail(EINVAL, "%s: libbpf cannot open it: %s", name,
				why);
		goto fail_elf;
	}
	if (err)
		goto fail_elf;
	uxdp_bpf_elf_fini(&e);
	free(elf);
	return obj;

fail_elf:
	uxdp_bpf_elf_fini(&e);
fail_obj:
	obj->name = NULL;
	uxdp_bpf_object_close(obj);
fail_name:
	free(name);
	free(elf);
	errno = -err;
	return NULL;
}

static int opts_check(const struct uxdp_bpf_object_opts *opts)
{
	if (!UXDP_OPTS_VALID(opts, uxdp_bpf_object_opts))
		return -EINVAL;
	if (UXDP_OPTS_GET(opts, engine, 0) > UXDP_BPF_ENGINE_JIT)
		return uxdp_fail(EINVAL, "bpf: engine %u is not one of "
				 "enum uxdp_bpf_engine", opts->engine);
	if (UXDP_OPTS_GET(opts, flags, 0) & ~UXDP_BPF_F_KERNEL_VERIFY)
		return uxdp_fail(EINVAL, "bpf: flags 0x%x: unknown ones",
				 opts->flags);
	return 0;
}

UXDP_EXPORT struct uxdp_bpf_object *
uxdp_bpf_object_open(const char *path,
		     const struct uxdp_bpf_object_opts *opts)
{
	uint8_t *elf = NULL;
	size_t size = 0;
	char *name;
	int err;

	uxdp_clear_err();
	if (!path) {
		errno = -uxdp_fail(EINVAL, "bpf: NULL path");
		return NULL;
	}
	err = opts_check(opts);
	if (!err)
		err = read_file(path, &elf, &size);
	if (err) {
		errno = -err;
		return NULL;
	}
	name = UXDP_OPTS_GET(opts, object_name, NULL) ?
	       strdup(opts->object_name) : name_from_path(path);
	if (!name) {
		free(elf);
		errno = -uxdp_fail(ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	return obj_open(elf, size, name, opts);
}

UXDP_EXPORT struct uxdp_bpf_object *
uxdp_bpf_object_open_mem(const void *buf, size_t size,
			 const struct uxdp_bpf_object_opts *opts)
{
	uint8_t *elf;
	char *name;
	int err;

	uxdp_clear_err();
	if (!buf) {
		errno = -uxdp_fail(EINVAL, "bpf: NULL buffer");
		return NULL;
	}
	err = opts_check(opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (size > OBJ_MAX_SIZE) {
		errno = -uxdp_fail(E2BIG, "bpf: %zu bytes, more than the %u "
				   "an object may have", size, OBJ_MAX_SIZE);
		return NULL;
	}
	/* Our own copy: CO-RE writes to it. */
	elf = malloc(size ? size : 1);
	name = strdup(UXDP_OPTS_GET(opts, object_name, "mem"));
	if (!elf || !name) {
		free(elf);
		free(name);
		errno = -uxdp_fail(ENOMEM, "bpf: out of memory");
		return NULL;
	}
	memcpy(elf, buf, size);
	return obj_open(elf, size, name, opts);
}

/* ---- load ------------------------------------------------------------------------- */

__attribute__((format(printf, 4, 5)))
static int insn_fail(int err, const struct uxdp_bpf_program *p, uint32_t i,
		     const char *fmt, ...)
{
	char dis[64], why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	uxdp_bpf_insn_str_at(p->insns, p->len, i, dis, sizeof(dis));
	return uxdp_fail(err, "prog %s: insn %u (%s): %s", p->name, i, dis,
			 why);
}

/* libbpf links every program to load, making no system call. */
static int obj_link(struct uxdp_bpf_object *obj)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	libbpf_print_fn_t old;
	uint32_t i, nload = 0;
	char why[256];
	int err;

	for (i = 0; i < obj->nprogs; i++) {
		struct uxdp_bpf_program *p = &obj->progs[i];

		bpf_program__set_autoload(p->lp, p->autoload);
		nload += p->autoload;
	}
	if (!nload) {
		char list[160] = "";
		size_t len = 0;

		for (i = 0; i < obj->nprogs && len < sizeof(list); i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%s (%s)", i ? ", " : "",
						obj->progs[i].name,
						obj->progs[i].section);
		return uxdp_fail(ENOENT, "%s: no XDP program to load%s%s",
				 obj->name, obj->nprogs ? ": " : "", list);
	}
	/* libbpf 1.1 links a struct_ops map with the kernel's BTF, at load,
	 * whether or not a program uses it, and reads the struct it expects
	 * from the .struct_ops section: a map declared in .maps with that
	 * type has none (fuzz_bpf_elf: a NULL dereference in libbpf). */
	for (i = 0; i < obj->nmaps; i++)
		if (obj->maps[i]->type == BPF_MAP_TYPE_STRUCT_OPS)
			return uxdp_fail(EOPNOTSUPP, "%s: map %s: a struct_ops "
					 "map, which is not XDP's (uxdp loads "
					 "XDP programs only)", obj->name,
					 obj->maps[i]->name);
	old = lbpf_begin();
	err = bpf_object__gen_loader(obj->lobj, &gen);
	if (!err)
		err = bpf_object__load(obj->lobj);
	lbpf_end(old, why, sizeof(why));
	if (err)
		return uxdp_fail(EINVAL, "%s: libbpf cannot link it: %s",
				 obj->name, why);
	for (i = 0; i < obj->nprogs; i++) {
		struct uxdp_bpf_program *p = &obj->progs[i];
		const struct bpf_insn *insns;
		size_t n;

		if (!p->autoload)
			continue;
		insns = bpf_program__insns(p->lp);
		n = bpf_program__insn_cnt(p->lp);
		if (!insns || !n || n > UXDP_BPF_MAX_INSNS)
			return uxdp_fail(n ? E2BIG : EINVAL, "prog %s: %zu "
					 "instructions (at most %u)", p->name,
					 n, UXDP_BPF_MAX_INSNS);
		p->insns = malloc(n * sizeof(*insns));
		if (!p->insns)
			return uxdp_fail(ENOMEM, "prog %s: out of memory",
					 p->name);
		memcpy(p->insns, insns, n * sizeof(*insns));
		p->len = (uint32_t)n;
	}
	return 0;
}

static bool is_lddw(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/*
 * Every map a loaded program names must be one uxdp has; a map none names
 * is left out with a note (xdp-bench's tracepoints use maps its XDP
 * programs do not), the rest are created with their initial values.
 */
static int obj_create_maps(struct uxdp_bpf_object *obj)
{
	char tb[24];
	uint32_t i, j;
	bool *used;
	int err = 0;

	used = calloc(obj->nmaps ? obj->nmaps : 1, sizeof(*used));
	if (!used)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj->name);
	for (i = 0; i < obj->nprogs && !err; i++) {
		struct uxdp_bpf_program *p = &obj->progs[i];

		for (j = 0; j < p->len && !err; j++) {
			const struct bpf_insn *insn = &p->insns[j];
			struct uxdp_bpf_map *m;

			if (!is_lddw(insn))
				continue;
			if (j + 1 >= p->len) {
				err = insn_fail(EINVAL, p, j, "an lddw without "
						"its second half");
				break;
			}
			if (insn->src_reg == BPF_PSEUDO_MAP_IDX ||
			    insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
				if ((uint32_t)insn->imm >= obj->nmaps) {
					err = insn_fail(EINVAL, p, j, "map %u "
							"of %u", insn->imm,
							obj->nmaps);
					break;
				}
				m = obj->maps[insn->imm];
				if (!m->ops)
					err = insn_fail(EOPNOTSUPP, p, j,
						"map %s (type %s): not "
						"supported yet (uxdp has "
						"array, percpu_array, the "
						"four hashes, prog_array, "
						"lpm_trie and global data)", m->name,
						uxdp_bpf_map_type_str(m->type,
							tb, sizeof(tb)));
				used[insn->imm] = true;
			}
			j++;
		}
	}
	for (i = 0; i < obj->nmaps && !err; i++) {
		struct uxdp_bpf_map *m = obj->maps[i];

		if (!m->ops) {
			uxdp_pr(UXDP_INFO, "bpf: %s: map %s (type %s) is used "
				"by no program loaded: left out\n", obj->name,
				m->name, uxdp_bpf_map_type_str(m->type, tb,
							       sizeof(tb)));
			continue;
		}
		err = uxdp_bpf_map_create(m);
		if (err)
			break;
		if (m->internal && m->init)
			memcpy(m->values, m->init,
			       MIN(m->init_size, (size_t)m->value_size));
		/* libbpf freezes .rodata and .kconfig once set: the control
		 * plane cannot change what the program may rely on. */
		if (m->internal && (m->map_flags & BPF_F_RDONLY_PROG))
			m->frozen = true;
	}
	free(used);
	return err;
}

/* Which kfunc the call at @i of @p is: exactly, in the program's own code;
 * else the object's only one. NULL when it cannot be told. */
static const char *kfunc_name(const struct uxdp_bpf_object *obj,
			      const struct uxdp_bpf_program *p, uint32_t i)
{
	const char *one = NULL;
	uint32_t k;

	for (k = 0; p->sec >= 0 && i < p->main_len && k < obj->nkfuncs; k++)
		if (obj->kfuncs[k].sec == (uint32_t)p->sec &&
		    obj->kfuncs[k].insn == p->sec_off + i)
			return obj->kfuncs[k].name;
	for (k = 0; k < obj->nkfuncs; k++) {
		if (one && strcmp(one, obj->kfuncs[k].name))
			return NULL;
		one = obj->kfuncs[k].name;
	}
	return one;
}

/*
 * What uxdp refuses before the safety pass sees a program, with the reason
 * it is refused: helpers it has not (by name), kfuncs, kernel symbols,
 * callbacks, CO-RE relocations it could not apply.
 */
static int prog_scan(const struct uxdp_bpf_object *obj,
		     const struct uxdp_bpf_program *p)
{
	char nb[24];
	uint32_t i;

	for (i = 0; i < p->len; i++) {
		const struct bpf_insn *insn = &p->insns[i];
		uint32_t id = (uint32_t)insn->imm;

		if (insn->code == (BPF_JMP | BPF_CALL)) {
			if (insn->src_reg == BPF_PSEUDO_KFUNC_CALL) {
				const char *k = kfunc_name(obj, p, i);

				return insn_fail(EOPNOTSUPP, p, i, "calls "
						 "kfunc %s: kfuncs are kernel "
						 "functions, which uxdp does "
						 "not have", k ? k : "(one of "
						 "the object's)");
			}
			if (insn->src_reg != 0)
				continue;	/* bpf-to-bpf call */
			if (id >= UXDP_BPF_CORE_POISON &&
			    id - UXDP_BPF_CORE_POISON < obj->core.n)
				return insn_fail(EOPNOTSUPP, p, i, "%s",
					obj->core.reasons[id -
						UXDP_BPF_CORE_POISON]);
			/* bpf_tail_call is the engines' own (the safety
			 * pass and the fixups know it), no helper. */
			if (id != BPF_FUNC_tail_call &&
			    !uxdp_bpf_helper_get(id))
				return insn_fail(EOPNOTSUPP, p, i,
						 "helper %s (%u): %s",
						 uxdp_bpf_helper_name(id, nb,
								      sizeof(nb)),
						 id, uxdp_bpf_helper_why(id));
			continue;
		}
		if (!is_lddw(insn))
			continue;
		switch (insn->src_reg) {
		case 0:
		case BPF_PSEUDO_MAP_IDX:
		case BPF_PSEUDO_MAP_IDX_VALUE:
			break;
		case BPF_PSEUDO_BTF_ID:
			return insn_fail(EOPNOTSUPP, p, i, "a kernel variable "
					 "(extern __ksym): there is no kernel "
					 "memory in userspace");
		case BPF_PSEUDO_FUNC:
			return insn_fail(EOPNOTSUPP, p, i, "a callback "
					 "function (bpf_loop, bpf_timer, "
					 "for_each_map_elem): not supported "
					 "yet (issue 15 brings it)");
		default:
			return insn_fail(EINVAL, p, i, "lddw with src %u (a "
					 "map by file descriptor is the "
					 "kernel's)", insn->src_reg);
		}
		i++;
	}
	return 0;
}

/* The safety pass and the fixups, then the engine: a struct uxdp_prog. */
static int prog_finish(struct uxdp_bpf_object *obj,
		       struct uxdp_bpf_program *p, struct uxdp_bpf_build *b)
{
	int err = uxdp_bpf_prepare(b);

	if (err)
		return err;
	return uxdp_bpf_prog_new(obj, b, obj->engine, p->len, &p->prog);
}

static int obj_load_progs(struct uxdp_bpf_object *obj)
{
	struct uxdp_bpf_build_map *bm;
	uint32_t i, j, nbm;
	int err = 0;

	/* The object's maps, then its of-maps' inner definitions (what the
	 * safety pass knows an of-map's lookup result by). */
	for (i = 0, nbm = obj->nmaps; i < obj->nmaps; i++)
		nbm += obj->maps[i]->inner != NULL;
	bm = calloc(nbm ? nbm : 1, sizeof(*bm));
	if (!bm)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj->name);
	for (i = 0, j = obj->nmaps; i < obj->nmaps; i++) {
		uxdp_bpf_map_build(obj->maps[i], &bm[i]);
		/* A map left out is no map: no program refers to it. */
		if (!obj->maps[i]->created) {
			bm[i].map = NULL;
			bm[i].lddw = NULL;
		}
		if (obj->maps[i]->inner && obj->maps[i]->created) {
			uxdp_bpf_map_build(obj->maps[i]->inner, &bm[j]);
			bm[i].inner = j + 1;
			j++;
		} else if (obj->maps[i]->inner) {
			j++;
		}
	}
	for (i = 0; i < obj->nprogs && !err; i++) {
		struct uxdp_bpf_program *p = &obj->progs[i];
		struct uxdp_bpf_build b = {
			.name = p->name,
			.insns = p->insns,
			.len = p->len,
			.ctx_kind = UXDP_BPF_CTX_XDP,
			.maps = bm,
			.nmaps = nbm,
			.helper = uxdp_bpf_helper_get,
			/* cpu v4 as the kernel since 6.6 accepts it. */
			.flags = UXDP_BPF_BUILD_F_V4 |
				 (p->attach_type == BPF_XDP_DEVMAP ?
				  UXDP_BPF_BUILD_F_EGRESS : 0) |
				 (!strncmp(p->section, "xdp.frags", 9) ?
				  UXDP_BPF_BUILD_F_FRAGS : 0),
			.budget = obj->budget,
		};

		if (!p->autoload)
			continue;
		err = prog_scan(obj, p);
		if (!err && (obj->flags & UXDP_BPF_F_KERNEL_VERIFY))
			err = uxdp_bpf_kverify(p->name, p->section,
					       p->attach_type, p->insns, p->len,
					       bm, nbm);
		if (!err)
			err = prog_finish(obj, p, &b);
	}
	free(bm);
	return err;
}

UXDP_EXPORT int uxdp_bpf_object_load(struct uxdp_bpf_object *obj)
{
	uint32_t i;
	int err;

	uxdp_clear_err();
	if (!obj)
		return uxdp_fail(EINVAL, "bpf: NULL object");
	if (obj->state != OBJ_OPEN)
		return uxdp_fail(EINVAL, "%s: %s", obj->name,
				 obj->state == OBJ_LOADED ? "loaded already" :
				 "a load failed: close it");
	err = obj_link(obj);
	if (!err)
		err = obj_create_maps(obj);
	if (!err)
		err = obj_load_progs(obj);
	if (!err)
		err = obj_init_slots(obj);
	if (err) {
		obj->state = OBJ_FAILED;
		for (i = 0; i < obj->nmaps; i++)
			uxdp_bpf_prog_array_clear(obj->maps[i]);
		for (i = 0; i < obj->nprogs; i++) {
			struct uxdp_prog *prog = obj->progs[i].prog;

			obj->progs[i].prog = NULL;
			uxdp_prog_put(prog);
		}
	} else {
		obj->state = OBJ_LOADED;
	}
	/* libbpf's object is done with either way; the initial values were
	 * its memory. */
	bpf_object__close(obj->lobj);
	obj->lobj = NULL;
	for (i = 0; i < obj->nprogs; i++)
		obj->progs[i].lp = NULL;
	for (i = 0; i < obj->nmaps; i++) {
		obj->maps[i]->init = NULL;
		obj->maps[i]->init_size = 0;
	}
	return err;
}

#else /* !UXDP_HAVE_LIBBPF */

static struct uxdp_bpf_object *no_libbpf(void)
{
	errno = -uxdp_fail(EOPNOTSUPP, "bpf: libuxdp was built without "
			   "libbpf (libbpf-dev), which reads BPF objects");
	return NULL;
}

UXDP_EXPORT struct uxdp_bpf_object *
uxdp_bpf_object_open(const char *path,
		     const struct uxdp_bpf_object_opts *opts)
{
	(void)path;
	(void)opts;
	return no_libbpf();
}

UXDP_EXPORT struct uxdp_bpf_object *
uxdp_bpf_object_open_mem(const void *buf, size_t size,
			 const struct uxdp_bpf_object_opts *opts)
{
	(void)buf;
	(void)size;
	(void)opts;
	return no_libbpf();
}

UXDP_EXPORT int uxdp_bpf_object_load(struct uxdp_bpf_object *obj)
{
	(void)obj;
	return uxdp_fail(EOPNOTSUPP, "bpf: built without libbpf");
}

#endif /* UXDP_HAVE_LIBBPF */
