/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The object's BTF (.BTF), checked before libbpf reads it. libbpf 1.1
 * (Debian 12's) checks that each type record fits, but not what the
 * records say: a type naming a type id that is not there is followed into
 * a NULL pointer, and a chain of typedefs and modifiers that loops is
 * followed for ever (both found by tests/fuzz/fuzz_bpf_elf.c). Later
 * libbpf validates more (btf_sanity_check, 1.2+); this is the part of the
 * kernel's own BTF checks (kernel/bpf/btf.c) that libbpf's walks rely on:
 *
 *   - the header, and the type and string areas within the section;
 *   - the strings start and end with a NUL, and every name offset is in
 *     them;
 *   - every record is of a known kind and fits, with its members;
 *   - every type id a record names exists, and is of the kind it must be
 *     (a function's type is a prototype, a section's entries variables or
 *     functions);
 *   - no chain of typedefs, modifiers and type tags comes back to itself.
 */
#include "../internal.h"

#include <linux/btf.h>
#include <stdlib.h>

#include "bpf_internal.h"
#include "loader.h"

/* Types one object may have (the kernel's BTF_MAX_TYPE). */
#define BTF_MAX_TYPES	0x000fffff

struct btf_check {
	const char *obj;
	const uint8_t *types;		/* the type area */
	uint32_t types_len;
	uint32_t str_len;
	const char *str;
	uint32_t n;			/* types, void (0) not counted */
	uint32_t *off;			/* offset of type id i in types[] */
};

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The bytes that follow a type record of @kind with @vlen entries; -1 for
 * a kind uxdp does not know. */
static int64_t kind_extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (int64_t)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (int64_t)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (int64_t)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (int64_t)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (int64_t)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/* Type @id's record, copied: the section may sit at any alignment. */
static struct btf_type type_at(const struct btf_check *c, uint32_t id)
{
	struct btf_type t;

	memcpy(&t, c->types + c->off[id], sizeof(t));
	return t;
}

static uint32_t kind_of(const struct btf_check *c, uint32_t id)
{
	return id ? BTF_INFO_KIND(type_at(c, id).info) : BTF_KIND_UNKN;
}

static int name_ok(const struct btf_check *c, uint32_t id, uint32_t name_off)
{
	if (name_off >= c->str_len)
		return uxdp_fail(EINVAL, "%s: .BTF: type %u: a name at %u, past "
				 "the %u bytes of strings", c->obj, id,
				 name_off, c->str_len);
	return 0;
}

/* Type id @ref, named by type @id, exists (0, void, only if @void_ok). */
static int ref_ok(const struct btf_check *c, uint32_t id, uint32_t ref,
		  bool void_ok)
{
	if (ref > c->n || (!ref && !void_ok))
		return uxdp_fail(EINVAL, "%s: .BTF: type %u names type %u (of "
				 "%u)", c->obj, id, ref, c->n);
	return 0;
}

static bool is_chain(uint32_t kind)
{
	return kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_VOLATILE ||
	       kind == BTF_KIND_CONST || kind == BTF_KIND_RESTRICT ||
	       kind == BTF_KIND_TYPE_TAG;
}

static int check_type(const struct btf_check *c, uint32_t id)
{
	const struct btf_type tt = type_at(c, id), *t = &tt;
	const uint8_t *extra = c->types + c->off[id] + sizeof(tt);
	uint32_t kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
	uint32_t i;
	int err = name_ok(c, id, t->name_off);

	if (err)
		return err;
	switch (kind) {
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return ref_ok(c, id, t->type, true);
	case BTF_KIND_FUNC:
		err = ref_ok(c, id, t->type, false);
		if (!err && kind_of(c, t->type) != BTF_KIND_FUNC_PROTO)
			err = uxdp_fail(EINVAL, "%s: .BTF: function %u's type "
					"%u is not a prototype", c->obj, id,
					t->type);
		return err;
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return ref_ok(c, id, t->type, false);
	case BTF_KIND_ARRAY:
		err = ref_ok(c, id, rd32(extra + offsetof(struct btf_array,
							  type)), false);
		if (!err)
			err = ref_ok(c, id, rd32(extra +
				offsetof(struct btf_array, index_type)), false);
		return err;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < vlen && !err; i++) {
			const uint8_t *m = extra + i * sizeof(struct btf_member);

			err = name_ok(c, id, rd32(m + offsetof(struct btf_member,
							       name_off)));
			if (!err)
				err = ref_ok(c, id, rd32(m +
					offsetof(struct btf_member, type)),
					false);
		}
		return err;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: {
		size_t step = kind == BTF_KIND_ENUM ? sizeof(struct btf_enum) :
					sizeof(struct btf_enum64);

		for (i = 0; i < vlen && !err; i++)
			err = name_ok(c, id, rd32(extra + i * step));
		return err;
	}
	case BTF_KIND_FUNC_PROTO:
		err = ref_ok(c, id, t->type, true);
		for (i = 0; i < vlen && !err; i++) {
			const uint8_t *p = extra + i * sizeof(struct btf_param);

			err = name_ok(c, id, rd32(p + offsetof(struct btf_param,
							       name_off)));
			/* A last parameter of type void is "...". */
			if (!err)
				err = ref_ok(c, id, rd32(p +
					offsetof(struct btf_param, type)),
					i + 1 == vlen);
		}
		return err;
	case BTF_KIND_DATASEC:
		for (i = 0; i < vlen && !err; i++) {
			uint32_t ref = rd32(extra + i *
				sizeof(struct btf_var_secinfo) +
				offsetof(struct btf_var_secinfo, type));
			uint32_t k;

			err = ref_ok(c, id, ref, false);
			if (err)
				break;
			k = kind_of(c, ref);
			if (k != BTF_KIND_VAR && k != BTF_KIND_FUNC)
				err = uxdp_fail(EINVAL, "%s: .BTF: section %u "
						"entry %u is type %u, not a "
						"variable", c->obj, id, i, ref);
		}
		return err;
	default:			/* INT, FWD, FLOAT */
		return 0;
	}
}

/* A chain of typedefs and modifiers longer than there are types loops. */
static int check_chains(const struct btf_check *c)
{
	uint32_t id;

	for (id = 1; id <= c->n; id++) {
		uint32_t cur = id, steps = 0;

		while (cur && is_chain(kind_of(c, cur))) {
			if (++steps > c->n)
				return uxdp_fail(EINVAL, "%s: .BTF: type %u is "
						 "a typedef or modifier of "
						 "itself", c->obj, id);
			cur = type_at(c, cur).type;
		}
	}
	return 0;
}

int uxdp_bpf_btf_check(const uint8_t *data, uint64_t size, const char *obj)
{
	struct btf_check c = { .obj = obj };
	struct btf_header h;
	uint64_t pos, cap = 64;
	uint32_t id;
	int err = 0;

	if (size < sizeof(h))
		return uxdp_fail(EINVAL, "%s: .BTF of %llu bytes", obj,
				 (unsigned long long)size);
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION ||
	    h.hdr_len < sizeof(h) || h.hdr_len > size)
		return uxdp_fail(EINVAL, "%s: .BTF: bad header (magic 0x%x, "
				 "version %u, %u bytes)", obj, h.magic,
				 h.version, h.hdr_len);
	size -= h.hdr_len;
	if (h.type_off % 4 || h.type_off > size ||
	    h.type_len > size - h.type_off || h.type_len % 4 ||
	    h.str_off > size || h.str_len > size - h.str_off ||
	    (uint64_t)h.type_off + h.type_len > h.str_off)
		return uxdp_fail(EINVAL, "%s: .BTF: types (%u at %u) or "
				 "strings (%u at %u) outside the section or "
				 "overlapping", obj, h.type_len, h.type_off,
				 h.str_len, h.str_off);
	c.types = data + h.hdr_len + h.type_off;
	c.types_len = h.type_len;
	c.str = (const char *)data + h.hdr_len + h.str_off;
	c.str_len = h.str_len;
	if (!c.str_len || c.str[0] || c.str[c.str_len - 1])
		return uxdp_fail(EINVAL, "%s: .BTF: the strings do not start "
				 "and end with a NUL", obj);
	c.off = malloc((cap + 1) * sizeof(*c.off));
	if (!c.off)
		return uxdp_fail(ENOMEM, "%s: out of memory", obj);
	for (pos = 0; pos < c.types_len;) {
		struct btf_type tt, *t = &tt;
		int64_t extra;

		if (c.types_len - pos < sizeof(*t)) {
			err = uxdp_fail(EINVAL, "%s: .BTF: a cut-off type "
					"record at %llu", obj,
					(unsigned long long)pos);
			break;
		}
		memcpy(t, c.types + pos, sizeof(*t));
		extra = kind_extra(BTF_INFO_KIND(t->info),
				   BTF_INFO_VLEN(t->info));
		if (extra < 0 ||
		    (uint64_t)extra > c.types_len - pos - sizeof(*t)) {
			err = uxdp_fail(EINVAL, "%s: .BTF: type %u: kind %u "
					"with %u entries: %s", obj, c.n + 1,
					BTF_INFO_KIND(t->info),
					BTF_INFO_VLEN(t->info),
					extra < 0 ? "unknown" : "cut off");
			break;
		}
		if (c.n == BTF_MAX_TYPES) {
			err = uxdp_fail(E2BIG, "%s: .BTF: more than %u types",
					obj, BTF_MAX_TYPES);
			break;
		}
		if (c.n + 1 > cap) {
			uint32_t *o;

			cap *= 2;
			o = realloc(c.off, (cap + 1) * sizeof(*o));
			if (!o) {
				err = uxdp_fail(ENOMEM, "%s: out of memory",
						obj);
				break;
			}
			c.off = o;
		}
		c.off[++c.n] = (uint32_t)pos;
		pos += sizeof(*t) + (uint64_t)extra;
	}
	for (id = 1; !err && id <= c.n; id++)
		err = check_type(&c, id);
	if (!err)
		err = check_chains(&c);
	free(c.off);
	return err;
}
