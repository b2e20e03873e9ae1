/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CO-RE relocations (BPF "compile once, run everywhere"): clang records,
 * for each instruction that depends on a type's layout, which field of
 * which type it means (.BTF.ext, struct bpf_core_relo); the loader puts the
 * target's value in. libbpf in gen_loader mode only records them for the
 * kernel to apply, so uxdp applies them itself, to the object's code in
 * place, before libbpf links it (every copy of a subprogram then carries
 * the result).
 *
 * The target is uxdp's, not a kernel's: struct xdp_md is the UAPI's
 * (<linux/bpf.h>: u32 fields, what the context rewrite expects), matched by
 * field name as libbpf matches against vmlinux BTF, so an object built
 * with any flavour of it (struct xdp_md___local, bpftime's 64-bit one) gets
 * the kernel's offsets and load sizes. Every other type is its own target:
 * a program reaches memory only through its packet, stack and maps, whose
 * types (headers, wire formats, its own structs) have the layout it was
 * built with. What has no answer here is poisoned, as libbpf poisons, and
 * refused at load if a program contains it: a type id in a kernel's BTF
 * (TYPE_ID_TARGET), a field xdp_md does not have, an access into xdp_md
 * deeper than its fields, a bitfield.
 *
 * .BTF.ext is untrusted: every count, offset and index is checked before
 * use. The BTF itself is parsed and validated by libbpf (btf__new).
 */
#include "../internal.h"

#ifdef UXDP_HAVE_LIBBPF

#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>

#include "bpf_internal.h"
#include "loader.h"

#define BTF_EXT_MAGIC	0xeB9F
#define CORE_SPEC_MAX	64		/* libbpf's BPF_CORE_SPEC_MAX_LEN */

/* The .BTF.ext header, as far as CO-RE needs it. */
struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len;
	uint32_t line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

struct core_relo {
	uint32_t insn_off, type_id, access_str_off, kind;
};

/* struct xdp_md as the kernel has it. */
static const struct {
	const char *name;
	uint32_t off;
} xdp_md_fields[] = {
	{ "data", offsetof(struct xdp_md, data) },
	{ "data_end", offsetof(struct xdp_md, data_end) },
	{ "data_meta", offsetof(struct xdp_md, data_meta) },
	{ "ingress_ifindex", offsetof(struct xdp_md, ingress_ifindex) },
	{ "rx_queue_index", offsetof(struct xdp_md, rx_queue_index) },
	{ "egress_ifindex", offsetof(struct xdp_md, egress_ifindex) },
};
#define XDP_MD_FIELD_SIZE	4	/* every field a __u32 */

struct core_ctx {
	struct uxdp_bpf_elf *e;
	struct btf *btf;
	struct uxdp_bpf_core_fails *f;
	const char *sec;		/* of the relocation at hand */
	uint32_t idx;			/* its number in the section */
};

static const char *kind_str(uint32_t kind)
{
	static const char *const names[] = {
		"byte_off", "byte_sz", "field_exists", "signed", "lshift_u64",
		"rshift_u64", "local_type_id", "target_type_id",
		"type_exists", "type_size", "enumval_exists", "enumval_value",
		"type_matches",
	};

	return kind < ARRAY_SIZE(names) ? names[kind] : "unknown";
}

/* Record why relocation @r cannot be applied and poison its instruction
 * (both halves of an lddw): a call to a helper that does not exist. */
__attribute__((format(printf, 4, 5)))
static int poison(struct core_ctx *c, struct bpf_insn *insn, bool wide,
		  const char *fmt, ...)
{
	struct uxdp_bpf_core_fails *f = c->f;
	char why[160], **r;
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (f->n >= UXDP_BPF_CORE_MAX_FAIL)
		return uxdp_fail(E2BIG, "%s: more than %u CO-RE relocations "
				 "uxdp cannot apply", c->e->obj,
				 UXDP_BPF_CORE_MAX_FAIL);
	r = realloc(f->reasons, (f->n + 1) * sizeof(*r));
	if (!r)
		return uxdp_fail(ENOMEM, "%s: out of memory", c->e->obj);
	f->reasons = r;
	n = snprintf(NULL, 0, "CO-RE relocation %s #%u: %s", c->sec, c->idx,
		     why);
	r[f->n] = malloc((size_t)n + 1);
	if (!r[f->n])
		return uxdp_fail(ENOMEM, "%s: out of memory", c->e->obj);
	snprintf(r[f->n], (size_t)n + 1, "CO-RE relocation %s #%u: %s",
		 c->sec, c->idx, why);
	insn[0] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
				     .imm = (int32_t)(UXDP_BPF_CORE_POISON +
						      f->n) };
	if (wide)
		insn[1] = insn[0];
	f->n++;
	return 0;
}

/* A type with modifiers and typedefs taken off (bounded: BTF may loop). */
static const struct btf_type *skip_mods(const struct btf *btf, uint32_t id,
					uint32_t *out_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	int depth;

	for (depth = 0; t && depth < 32; depth++) {
		if (!btf_is_mod(t) && !btf_is_typedef(t))
			break;
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (t && (btf_is_mod(t) || btf_is_typedef(t)))
		return NULL;
	if (out_id)
		*out_id = id;
	return t;
}

/* The name up to a flavour suffix ("xdp_md___local" is "xdp_md"), as
 * libbpf's bpf_core_essential_name_len(). */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name);
	long i;

	/* X___Y, X and Y not underscores: the last one found from the end. */
	for (i = (long)n - 5; i >= 0; i--)
		if (name[i] != '_' && name[i + 1] == '_' &&
		    name[i + 2] == '_' && name[i + 3] == '_' &&
		    name[i + 4] != '_')
			return (size_t)i + 1;
	return n;
}

static bool is_xdp_md(const struct btf *btf, const struct btf_type *t)
{
	const char *name;

	if (!t || !btf_is_struct(t))
		return false;
	name = btf__name_by_offset(btf, t->name_off);
	return name && essential_len(name) == 6 && !strncmp(name, "xdp_md", 6);
}

/* "0:3:1" into numbers. Returns how many, or -1 if malformed. */
static int parse_access(const char *s, uint32_t *spec)
{
	int n = 0;

	if (!s || !*s)
		return -1;
	while (*s) {
		uint64_t v = 0;

		if (*s < '0' || *s > '9' || n == CORE_SPEC_MAX)
			return -1;
		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (uint64_t)(*s++ - '0');
			if (v > UINT32_MAX)
				return -1;
		}
		spec[n++] = (uint32_t)v;
		if (*s == ':')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/* The field a relocation on struct xdp_md names: local (the object's
 * flavour) and target (the UAPI's). */
struct field_res {
	uint32_t local_off, local_size;
	bool local_signed;
	bool exists;			/* in the target */
	uint32_t targ_off, targ_size;
};

static int xdp_md_field(struct core_ctx *c, const struct btf_type *t,
			const uint32_t *spec, int n, struct field_res *r,
			const char **why)
{
	const struct btf_member *m;
	const struct btf_type *mt;
	const char *name;
	uint32_t mid;
	size_t i;
	int64_t sz;

	memset(r, 0, sizeof(*r));
	if (spec[0]) {
		*why = "an access to xdp_md[n], past the one context";
		return -1;
	}
	if (n == 1) {			/* the whole struct */
		r->local_size = t->size;
		r->exists = true;
		r->targ_size = sizeof(struct xdp_md);
		return 0;
	}
	if (n > 2) {
		*why = "an access inside a field of xdp_md (its fields are "
		       "scalars)";
		return -1;
	}
	if (spec[1] >= btf_vlen(t)) {
		*why = "a field index past the struct's fields";
		return -1;
	}
	m = btf_members(t) + spec[1];
	if (btf_member_bitfield_size(t, spec[1])) {
		*why = "a bitfield of xdp_md";
		return -1;
	}
	mt = skip_mods(c->btf, m->type, &mid);
	sz = btf__resolve_size(c->btf, mid);
	if (!mt || sz <= 0 || sz > 8) {
		*why = "a field of xdp_md that is not a scalar";
		return -1;
	}
	r->local_off = btf_member_bit_offset(t, spec[1]) / 8;
	r->local_size = (uint32_t)sz;
	r->local_signed = btf_is_int(mt) &&
			  (btf_int_encoding(mt) & BTF_INT_SIGNED);
	name = btf__name_by_offset(c->btf, m->name_off);
	for (i = 0; name && i < ARRAY_SIZE(xdp_md_fields); i++) {
		if (strcmp(name, xdp_md_fields[i].name))
			continue;
		r->exists = true;
		r->targ_off = xdp_md_fields[i].off;
		r->targ_size = XDP_MD_FIELD_SIZE;
	}
	return 0;
}

/* Whether every field of the object's xdp_md is one the UAPI's has. */
static bool xdp_md_matches(const struct btf *btf, const struct btf_type *t)
{
	const struct btf_member *m = btf_members(t);
	uint32_t i;
	size_t j;

	for (i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, m[i].name_off);
		bool found = false;

		for (j = 0; name && j < ARRAY_SIZE(xdp_md_fields); j++)
			found |= !strcmp(name, xdp_md_fields[j].name);
		if (!found)
			return false;
	}
	return true;
}

/*
 * Put @targ in place of @local in @insn, as libbpf's bpf_core_patch_insn():
 * an ALU immediate, a memory offset (with the load or store size changed to
 * the target field's, for FIELD_BYTE_OFFSET), or an lddw's 64-bit value.
 * The instruction must hold @local: anything else is a malformed object.
 */
static int patch_insn(struct core_ctx *c, struct bpf_insn *insn, bool wide,
		      uint32_t kind, uint64_t local, uint64_t targ,
		      uint32_t local_sz, uint32_t targ_sz, bool sign)
{
	uint8_t cls = BPF_CLASS(insn->code);

	if (wide) {
		uint64_t v = (uint32_t)insn[0].imm |
			     (uint64_t)(uint32_t)insn[1].imm << 32;

		if (v != local)
			return poison(c, insn, true, "lddw holds %llu, not the "
				      "local %s %llu", (unsigned long long)v,
				      kind_str(kind),
				      (unsigned long long)local);
		insn[0].imm = (int32_t)(uint32_t)targ;
		insn[1].imm = (int32_t)(uint32_t)(targ >> 32);
		return 0;
	}
	if (cls == BPF_ALU || cls == BPF_ALU64) {
		if (BPF_SRC(insn->code) != BPF_K ||
		    (uint64_t)(int64_t)insn->imm != local ||
		    targ > INT32_MAX)
			return poison(c, insn, false, "%s on an ALU "
				      "instruction that does not hold the "
				      "local value %llu", kind_str(kind),
				      (unsigned long long)local);
		insn->imm = (int32_t)targ;
		return 0;
	}
	if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
		static const uint8_t sizes[] = { [1] = BPF_B, [2] = BPF_H,
						 [4] = BPF_W, [8] = BPF_DW };
		static const uint8_t bytes[] = { [BPF_W >> 3] = 4,
						 [BPF_H >> 3] = 2,
						 [BPF_B >> 3] = 1,
						 [BPF_DW >> 3] = 8 };
		uint8_t isz = bytes[BPF_SIZE(insn->code) >> 3];

		if (kind != BPF_CORE_FIELD_BYTE_OFFSET ||
		    (uint64_t)(int64_t)insn->off != local || targ > INT16_MAX)
			return poison(c, insn, false, "%s on a memory "
				      "instruction with offset %d (local "
				      "offset %llu)", kind_str(kind),
				      insn->off, (unsigned long long)local);
		insn->off = (int16_t)targ;
		if (local_sz == targ_sz)
			return 0;
		/* The field is narrower or wider in the target: load it
		 * with its own size (unsigned scalars only, as libbpf). */
		if (isz != local_sz || sign || BPF_MODE(insn->code) != BPF_MEM ||
		    (targ_sz != 1 && targ_sz != 2 && targ_sz != 4 &&
		     targ_sz != 8))
			return poison(c, insn, false, "a %u-byte field of %u "
				      "bytes in the target, on an access "
				      "that cannot change size", local_sz,
				      targ_sz);
		insn->code = (uint8_t)(cls | BPF_MODE(insn->code) |
				       sizes[targ_sz]);
		return 0;
	}
	return poison(c, insn, false, "%s on an instruction that has no "
		      "field for it (opcode 0x%02x)", kind_str(kind),
		      insn->code);
}

static int relocate_xdp_md(struct core_ctx *c, struct bpf_insn *insn,
			   bool wide, const struct core_relo *cr,
			   const struct btf_type *t, const uint32_t *spec,
			   int n)
{
	struct field_res r;
	uint64_t local = 0, targ = 0;
	const char *why = NULL;

	switch (cr->kind) {
	case BPF_CORE_FIELD_BYTE_OFFSET:
	case BPF_CORE_FIELD_BYTE_SIZE:
	case BPF_CORE_FIELD_EXISTS:
	case BPF_CORE_FIELD_SIGNED:
	case BPF_CORE_FIELD_LSHIFT_U64:
	case BPF_CORE_FIELD_RSHIFT_U64:
		if (xdp_md_field(c, t, spec, n, &r, &why))
			return poison(c, insn, wide, "struct xdp_md: %s", why);
		if (!r.exists && cr->kind != BPF_CORE_FIELD_EXISTS)
			return poison(c, insn, wide, "struct xdp_md has no "
				      "field '%s' in the kernel's UAPI "
				      "(<linux/bpf.h>)",
				      btf__name_by_offset(c->btf,
					btf_members(t)[spec[1]].name_off));
		break;
	case BPF_CORE_TYPE_ID_LOCAL:
		return 0;		/* the object's own id: as it is */
	case BPF_CORE_TYPE_EXISTS:
	case BPF_CORE_TYPE_MATCHES:
		local = 1;
		targ = cr->kind == BPF_CORE_TYPE_EXISTS ||
		       xdp_md_matches(c->btf, t);
		return patch_insn(c, insn, wide, cr->kind, local, targ, 0, 0,
				  false);
	case BPF_CORE_TYPE_SIZE:
		return patch_insn(c, insn, wide, cr->kind, t->size,
				  sizeof(struct xdp_md), 0, 0, false);
	default:
		return poison(c, insn, wide, "%s relocation on struct xdp_md",
			      kind_str(cr->kind));
	}
	switch (cr->kind) {
	case BPF_CORE_FIELD_BYTE_OFFSET:
		local = r.local_off;
		targ = r.targ_off;
		break;
	case BPF_CORE_FIELD_BYTE_SIZE:
		local = r.local_size;
		targ = r.targ_size;
		break;
	case BPF_CORE_FIELD_EXISTS:
		local = 1;
		targ = r.exists;
		break;
	case BPF_CORE_FIELD_SIGNED:
		local = r.local_signed;
		targ = 0;		/* every UAPI field is a __u32 */
		break;
	case BPF_CORE_FIELD_LSHIFT_U64:	/* little-endian, not a bitfield */
		local = 64 - r.local_size * 8;
		targ = 64 - r.targ_size * 8;
		break;
	case BPF_CORE_FIELD_RSHIFT_U64:
		local = 64 - r.local_size * 8;
		targ = 64 - r.targ_size * 8;
		break;
	}
	return patch_insn(c, insn, wide, cr->kind, local, targ, r.local_size,
			  r.targ_size, r.local_signed);
}

static int relocate_one(struct core_ctx *c, uint8_t *code, uint64_t size,
			const struct core_relo *cr)
{
	uint32_t spec[CORE_SPEC_MAX], root_id;
	const struct btf_type *t;
	struct bpf_insn *insn;
	const char *access;
	bool wide;
	int n;

	/* Malformed relocations refuse the object: libbpf would too. */
	if (cr->insn_off % 8 || cr->insn_off >= size)
		return uxdp_fail(EINVAL, "%s: CO-RE relocation %s #%u: "
				 "instruction offset %u is not in the section "
				 "(%llu bytes)", c->e->obj, c->sec, c->idx,
				 cr->insn_off, (unsigned long long)size);
	insn = (struct bpf_insn *)(code + cr->insn_off);
	wide = insn->code == (BPF_LD | BPF_IMM | BPF_DW);
	if (wide && cr->insn_off + 16 > size)
		return uxdp_fail(EINVAL, "%s: CO-RE relocation %s #%u: a "
				 "cut-off lddw", c->e->obj, c->sec, c->idx);
	if (cr->kind > BPF_CORE_TYPE_MATCHES)
		return poison(c, insn, wide, "unknown kind %u", cr->kind);
	if (!cr->type_id || cr->type_id >= btf__type_cnt(c->btf))
		return poison(c, insn, wide, "type id %u is not in the "
			      "object's BTF", cr->type_id);
	access = btf__name_by_offset(c->btf, cr->access_str_off);
	n = parse_access(access, spec);
	if (n < 0)
		return poison(c, insn, wide, "bad access string '%.32s'",
			      access ? access : "");
	t = skip_mods(c->btf, cr->type_id, &root_id);
	if (is_xdp_md(c->btf, t))
		return relocate_xdp_md(c, insn, wide, cr, t, spec, n);
	/* Any other type is its own target: what clang wrote stands. */
	if (cr->kind == BPF_CORE_TYPE_ID_TARGET)
		return poison(c, insn, wide, "the type id of '%s' in a "
			      "kernel's BTF: uxdp has no kernel BTF",
			      t ? btf__name_by_offset(c->btf, t->name_off) :
				  "?");
	return 0;
}

int uxdp_bpf_core_relocate(struct uxdp_bpf_elf *e,
			   struct uxdp_bpf_core_fails *f)
{
	struct core_ctx c = { .e = e, .f = f };
	struct btf_ext_hdr h;
	uint64_t btf_sz, ext_sz, left;
	uint8_t *btf_data, *ext, *p;
	uint32_t rec_size;
	int bi, xi, err = 0;

	xi = uxdp_bpf_elf_find_sec(e, ".BTF.ext");
	if (xi < 0)
		return 0;
	ext = uxdp_bpf_elf_sec_data(e, (uint32_t)xi, &ext_sz);
	memset(&h, 0, sizeof(h));
	if (ext_sz < 8)
		return uxdp_fail(EINVAL, "%s: .BTF.ext of %llu bytes", e->obj,
				 (unsigned long long)ext_sz);
	memcpy(&h, ext, MIN(ext_sz, sizeof(h)));
	if (h.magic != BTF_EXT_MAGIC || h.version != 1 || h.hdr_len < 24 ||
	    h.hdr_len > ext_sz)
		return uxdp_fail(EINVAL, "%s: .BTF.ext: bad header (magic "
				 "0x%x, version %u, %u bytes)", e->obj,
				 h.magic, h.version, h.hdr_len);
	/* Older objects have no CO-RE part in the header. */
	if (h.hdr_len < sizeof(h)) {
		h.core_relo_off = 0;
		h.core_relo_len = 0;
	}
	if (!h.core_relo_len)
		return 0;
	left = ext_sz - h.hdr_len;
	if (h.core_relo_off > left || h.core_relo_len > left - h.core_relo_off
	    || h.core_relo_len < 4)
		return uxdp_fail(EINVAL, "%s: .BTF.ext: CO-RE relocations "
				 "(%u bytes at %u) outside the section",
				 e->obj, h.core_relo_len, h.core_relo_off);
	bi = uxdp_bpf_elf_find_sec(e, ".BTF");
	if (bi < 0)
		return uxdp_fail(EINVAL, "%s: CO-RE relocations without .BTF",
				 e->obj);
	btf_data = uxdp_bpf_elf_sec_data(e, (uint32_t)bi, &btf_sz);
	if (!btf_data || btf_sz > UINT32_MAX)
		return uxdp_fail(EINVAL, "%s: .BTF has no data", e->obj);
	c.btf = btf__new(btf_data, (uint32_t)btf_sz);
	if (!c.btf)
		return uxdp_fail(EINVAL, "%s: .BTF: libbpf cannot read it "
				 "(%s), so the CO-RE relocations cannot be "
				 "applied", e->obj, strerror(errno));

	p = ext + h.hdr_len + h.core_relo_off;
	left = h.core_relo_len;
	memcpy(&rec_size, p, 4);
	p += 4;
	left -= 4;
	if (rec_size < sizeof(struct core_relo) || rec_size > 1024 ||
	    rec_size % 4) {
		err = uxdp_fail(EINVAL, "%s: .BTF.ext: CO-RE records of %u "
				"bytes", e->obj, rec_size);
		goto out;
	}
	while (left && !err) {
		uint32_t name_off, num, i;
		uint64_t code_sz;
		uint8_t *code;
		int si;

		if (left < 8) {
			err = uxdp_fail(EINVAL, "%s: .BTF.ext: a cut-off CO-RE "
					"section header", e->obj);
			break;
		}
		memcpy(&name_off, p, 4);
		memcpy(&num, p + 4, 4);
		p += 8;
		left -= 8;
		if ((uint64_t)num * rec_size > left) {
			err = uxdp_fail(EINVAL, "%s: .BTF.ext: %u CO-RE records "
					"of %u bytes in %llu", e->obj, num,
					rec_size, (unsigned long long)left);
			break;
		}
		c.sec = btf__name_by_offset(c.btf, name_off);
		si = c.sec ? uxdp_bpf_elf_find_sec(e, c.sec) : -1;
		if (si < 0 || !uxdp_bpf_elf_is_code(e, (uint32_t)si)) {
			err = uxdp_fail(EINVAL, "%s: .BTF.ext: CO-RE "
					"relocations for '%.64s', not a code "
					"section of the object", e->obj,
					c.sec ? c.sec : "?");
			break;
		}
		code = uxdp_bpf_elf_sec_data(e, (uint32_t)si, &code_sz);
		for (i = 0; i < num && !err; i++) {
			struct core_relo cr;

			memcpy(&cr, p + (uint64_t)i * rec_size, sizeof(cr));
			c.idx = i;
			err = relocate_one(&c, code, code_sz, &cr);
		}
		p += (uint64_t)num * rec_size;
		left -= (uint64_t)num * rec_size;
	}
out:
	btf__free(c.btf);
	return err;
}

void uxdp_bpf_core_fails_free(struct uxdp_bpf_core_fails *f)
{
	uint32_t i;

	for (i = 0; i < f->n; i++)
		free(f->reasons[i]);
	free(f->reasons);
	f->reasons = NULL;
	f->n = 0;
}

#endif /* UXDP_HAVE_LIBBPF */
