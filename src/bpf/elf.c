/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The object file, read by uxdp before libbpf sees it: an object is
 * untrusted input, and libbpf 1.1 (Debian 12's) trusts more of the ELF than
 * it should (section data that is not there, offsets past the end). This
 * checks the structure libbpf walks, so what reaches it is well formed,
 * and gives the loader what it needs of the ELF itself: sections by name
 * (CO-RE patches instructions in place, core.c), symbols, and the calls
 * relocated against functions the object does not define (kfuncs), which
 * libbpf leaves unnamed once linked.
 *
 * Every offset and count is checked against the buffer before use,
 * overflow-safely; a refusal says what is wrong and where.
 */
#include "../internal.h"

#include <elf.h>
#include <stdlib.h>

#include "bpf_internal.h"
#include "loader.h"

/* Whether [off, off + len) lies within @size, without overflowing. */
static inline bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

const char *uxdp_bpf_elf_sec_name(const struct uxdp_bpf_elf *e, uint32_t i)
{
	if (i >= e->nsec)
		return "";
	return e->shstr + e->sh[i].sh_name;
}

int uxdp_bpf_elf_find_sec(const struct uxdp_bpf_elf *e, const char *name)
{
	uint32_t i;

	for (i = 1; i < e->nsec; i++)
		if (!strcmp(uxdp_bpf_elf_sec_name(e, i), name))
			return (int)i;
	return -1;
}

uint8_t *uxdp_bpf_elf_sec_data(const struct uxdp_bpf_elf *e, uint32_t i,
			       uint64_t *size)
{
	if (i >= e->nsec || e->sh[i].sh_type == SHT_NOBITS) {
		*size = 0;
		return NULL;
	}
	*size = e->sh[i].sh_size;
	return e->data + e->sh[i].sh_offset;
}

bool uxdp_bpf_elf_is_code(const struct uxdp_bpf_elf *e, uint32_t i)
{
	return i < e->nsec && e->sh[i].sh_type == SHT_PROGBITS &&
	       (e->sh[i].sh_flags & SHF_EXECINSTR);
}

const char *uxdp_bpf_elf_sym_name(const struct uxdp_bpf_elf *e,
				  const Elf64_Sym *sym)
{
	return e->strtab + sym->st_name;
}

/* A string table: in the file, ending in a NUL (so every name in it ends). */
static int check_strtab(const struct uxdp_bpf_elf *e, uint32_t i,
			const char *what)
{
	const Elf64_Shdr *s = &e->sh[i];

	if (!i || i >= e->nsec || s->sh_type != SHT_STRTAB || !s->sh_size ||
	    !in_bounds(s->sh_offset, s->sh_size, e->size) ||
	    e->data[s->sh_offset + s->sh_size - 1] != '\0')
		return uxdp_fail(EINVAL, "%s: %s (section %u) is not a string "
				 "table ending in a NUL", e->obj, what, i);
	return 0;
}

/* The sections libbpf makes global data maps of. */
static bool is_global_data(const char *name)
{
	return !strcmp(name, ".data") || !strcmp(name, ".bss") ||
	       !strcmp(name, ".rodata") || !strncmp(name, ".data.", 6) ||
	       !strncmp(name, ".rodata.", 8);
}

static int check_sections(struct uxdp_bpf_elf *e)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->data;
	uint32_t i;
	int err;

	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return uxdp_fail(EINVAL, "%s: section headers of %u bytes, not "
				 "%zu", e->obj, eh->e_shentsize,
				 sizeof(Elf64_Shdr));
	/* 0 means extended numbering (the count in section 0), which no
	 * BPF object needs; refuse it rather than read it. */
	if (!eh->e_shnum || eh->e_shnum >= SHN_LORESERVE)
		return uxdp_fail(EINVAL, "%s: %u sections", e->obj,
				 eh->e_shnum);
	if (eh->e_shoff % 8 ||
	    !in_bounds(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr),
		       e->size))
		return uxdp_fail(EINVAL, "%s: section headers at %llu are "
				 "outside the file (%zu bytes)", e->obj,
				 (unsigned long long)eh->e_shoff, e->size);
	e->sh = (const Elf64_Shdr *)(e->data + eh->e_shoff);
	e->nsec = eh->e_shnum;
	/*
	 * Section 0 is the null section, its header all zeros (extended
	 * numbering, refused above, is what else it may hold). Nothing
	 * below bounds-checks it, and what points at it (a symbol table's
	 * name table, a relocation's target) must find nothing there:
	 * fuzz_bpf_elf found a read past the file through a symbol table
	 * linked to a section 0 typed as a string table, and libbpf 1.1
	 * reading through a NULL when a relocation section targets a
	 * section 0 flagged as code.
	 */
	if (memcmp(&e->sh[0], &(Elf64_Shdr){ 0 }, sizeof(Elf64_Shdr)))
		return uxdp_fail(EINVAL, "%s: section 0 is not the null "
				 "section", e->obj);
	for (i = 1; i < e->nsec; i++) {
		const Elf64_Shdr *s = &e->sh[i];

		if (s->sh_type != SHT_NOBITS &&
		    !in_bounds(s->sh_offset, s->sh_size, e->size))
			return uxdp_fail(EINVAL, "%s: section %u: %llu bytes "
					 "at %llu, outside the file (%zu "
					 "bytes)", e->obj, i,
					 (unsigned long long)s->sh_size,
					 (unsigned long long)s->sh_offset,
					 e->size);
		if (s->sh_link >= e->nsec)
			return uxdp_fail(EINVAL, "%s: section %u links to "
					 "section %u of %u", e->obj, i,
					 s->sh_link, e->nsec);
	}
	if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= e->nsec)
		return uxdp_fail(EINVAL, "%s: no section names (e_shstrndx "
				 "%u)", e->obj, eh->e_shstrndx);
	err = check_strtab(e, eh->e_shstrndx, "the section name table");
	if (err)
		return err;
	e->shstr = (const char *)e->data + e->sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < e->nsec; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const char *name;

		if (s->sh_name >= e->sh[eh->e_shstrndx].sh_size)
			return uxdp_fail(EINVAL, "%s: section %u: name at %u is "
					 "outside the name table", e->obj, i,
					 s->sh_name);
		name = uxdp_bpf_elf_sec_name(e, i);
		if (uxdp_bpf_elf_is_code(e, i) && s->sh_size % 8)
			return uxdp_fail(EINVAL, "%s: section %s: %llu bytes "
					 "of code, not whole instructions",
					 e->obj, name,
					 (unsigned long long)s->sh_size);
		/* Instructions are read in place (found by fuzz_bpf_elf:
		 * a misaligned struct bpf_insn, UBSan); clang aligns code
		 * to 8. */
		if (uxdp_bpf_elf_is_code(e, i) && s->sh_offset % 8)
			return uxdp_fail(EINVAL, "%s: section %s: code at "
					 "offset %llu, not 8-byte aligned",
					 e->obj, name,
					 (unsigned long long)s->sh_offset);
		/* Global data becomes one array element of the section's
		 * size, and the kernel's arrays take values of at most
		 * KMALLOC_MAX_SIZE (array_map_alloc_check): a larger one
		 * would never load there, and a skeleton's write of its
		 * initial value touched all of it here (fuzz_bpf_elf: a
		 * .bss of 3.6 GB, out of memory). */
		if (is_global_data(name) &&
		    s->sh_size > UXDP_BPF_VALUE_MAX)
			return uxdp_fail(E2BIG, "%s: section %s: %llu bytes "
					 "of global data, more than an array "
					 "value may hold (%u)", e->obj, name,
					 (unsigned long long)s->sh_size,
					 UXDP_BPF_VALUE_MAX);
		/* libbpf 1.1 reads these without checking they have data
		 * (fixed in libbpf 1.2). */
		if ((!strcmp(name, ".BTF") || !strcmp(name, ".BTF.ext") ||
		     !strcmp(name, ".maps") || !strcmp(name, "license") ||
		     !strcmp(name, "version")) &&
		    (s->sh_type != SHT_PROGBITS || !s->sh_size))
			return uxdp_fail(EINVAL, "%s: section %s has no data",
					 e->obj, name);
	}
	return 0;
}

static int check_symbols(struct uxdp_bpf_elf *e)
{
	const Elf64_Shdr *s = NULL, *str;
	uint32_t i, n = 0;
	int err;

	for (i = 1; i < e->nsec; i++) {
		if (e->sh[i].sh_type != SHT_SYMTAB)
			continue;
		s = &e->sh[i];
		e->symtab = i;
		n++;
	}
	if (n != 1)
		return uxdp_fail(EINVAL, "%s: %u symbol tables (a BPF object "
				 "has one)", e->obj, n);
	if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_size % sizeof(Elf64_Sym)
	    || s->sh_offset % 8)
		return uxdp_fail(EINVAL, "%s: symbol table of %llu bytes in "
				 "entries of %llu", e->obj,
				 (unsigned long long)s->sh_size,
				 (unsigned long long)s->sh_entsize);
	err = check_strtab(e, s->sh_link, "the symbol name table");
	if (err)
		return err;
	str = &e->sh[s->sh_link];
	e->syms = (const Elf64_Sym *)(e->data + s->sh_offset);
	e->nsyms = (uint32_t)MIN(s->sh_size / sizeof(Elf64_Sym), UINT32_MAX);
	e->strtab = (const char *)e->data + str->sh_offset;
	for (i = 0; i < e->nsyms; i++) {
		const Elf64_Sym *sym = &e->syms[i];
		uint16_t shndx = sym->st_shndx;

		if (sym->st_name >= str->sh_size)
			return uxdp_fail(EINVAL, "%s: symbol %u: name outside "
					 "the name table", e->obj, i);
		if (shndx >= e->nsec && shndx != SHN_ABS &&
		    shndx != SHN_COMMON)
			return uxdp_fail(EINVAL, "%s: symbol %s: section %u of "
					 "%u", e->obj,
					 uxdp_bpf_elf_sym_name(e, sym), shndx,
					 e->nsec);
		/* A function must lie within its section, on instructions. */
		if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
		    shndx != SHN_UNDEF && shndx < e->nsec &&
		    uxdp_bpf_elf_is_code(e, shndx) &&
		    (sym->st_value % 8 || sym->st_size % 8 ||
		     !in_bounds(sym->st_value, sym->st_size,
				e->sh[shndx].sh_size)))
			return uxdp_fail(EINVAL, "%s: function %s: %llu bytes "
					 "at %llu of section %s (%llu bytes)",
					 e->obj, uxdp_bpf_elf_sym_name(e, sym),
					 (unsigned long long)sym->st_size,
					 (unsigned long long)sym->st_value,
					 uxdp_bpf_elf_sec_name(e, shndx),
					 (unsigned long long)
					 e->sh[shndx].sh_size);
	}
	return 0;
}

/* A call relocated against a function the object does not have: a kfunc
 * (libbpf turns it into a kfunc call and forgets the name). */
static int note_extern_call(struct uxdp_bpf_elf *e, uint32_t sec,
			    uint32_t insn, const char *name)
{
	struct uxdp_bpf_elf_call *c;

	if (e->ncalls == e->calls_cap) {
		uint32_t cap = e->calls_cap ? e->calls_cap * 2 : 8;

		c = realloc(e->calls, cap * sizeof(*c));
		if (!c)
			return uxdp_fail(ENOMEM, "%s: out of memory", e->obj);
		e->calls = c;
		e->calls_cap = cap;
	}
	e->calls[e->ncalls++] = (struct uxdp_bpf_elf_call){
		.sec = sec, .insn = insn, .name = name };
	return 0;
}

/*
 * Whether libbpf 1.1 reads relocation section @i at all: it skips, by
 * name alone and whatever their target, what it takes for DWARF
 * (".debug_*", ".rel.debug_*") and the relocations of .BTF and .BTF.ext.
 * A code section's relocations in a section of such a name are none to
 * libbpf (fuzz_bpf_elf: ".rel.xdp" renamed ".rel.debug_addr").
 */
static bool libbpf_reads_rel(const struct uxdp_bpf_elf *e, uint32_t i)
{
	const char *name = uxdp_bpf_elf_sec_name(e, i);

	if (!strncmp(name, ".debug_", 7))
		return false;
	if (strncmp(name, ".rel", 4))
		return true;
	name += 4;
	return strncmp(name, ".debug_", 7) && strcmp(name, ".BTF") &&
	       strcmp(name, ".BTF.ext");
}

/* The relocation section with a relocation at byte @off of code section
 * @sec, among those libbpf reads (@read) or among those it skips; 0 if
 * none (the relocation sections were checked by check_relocs). */
static uint32_t reloc_sec(const struct uxdp_bpf_elf *e, uint32_t sec,
			  uint64_t off, bool read)
{
	uint32_t i;
	uint64_t j, n;

	for (i = 1; i < e->nsec; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const Elf64_Rel *rel;

		if (s->sh_type != SHT_REL || s->sh_info != sec ||
		    libbpf_reads_rel(e, i) != read)
			continue;
		rel = (const Elf64_Rel *)(e->data + s->sh_offset);
		n = s->sh_size / sizeof(*rel);
		for (j = 0; j < n; j++)
			if (rel[j].r_offset == off)
				return i;
	}
	return 0;
}

/*
 * A bpf-to-bpf call without a relocation is one clang writes only to a
 * static function of the same section, and libbpf then looks for the
 * callee in .text whatever the caller's section: only .text may have
 * them. Elsewhere libbpf 1.1 links the program to a function it is not
 * (fuzz_bpf_elf: a program's relocation section turned into another
 * type, its "call -1" left; libbpf freed its line info twice; or given a
 * name libbpf skips, when a program with no relocation of its own that
 * calls two functions with none made libbpf realloc() its relocations to
 * zero bytes, which frees them, and free them again on close).
 */
static int check_calls(const struct uxdp_bpf_elf *e)
{
	uint32_t i, skipped;
	uint64_t k;

	for (i = 1; i < e->nsec; i++) {
		const char *name = uxdp_bpf_elf_sec_name(e, i);
		uint64_t n = e->sh[i].sh_size / sizeof(struct bpf_insn);

		if (!uxdp_bpf_elf_is_code(e, i) || !strcmp(name, ".text"))
			continue;
		for (k = 0; k < n; k++) {
			struct bpf_insn insn;

			memcpy(&insn, e->data + e->sh[i].sh_offset + k * 8,
			       sizeof(insn));
			if (insn.code != (BPF_JMP | BPF_CALL) ||
			    insn.src_reg != BPF_PSEUDO_CALL ||
			    reloc_sec(e, i, k * 8, true))
				continue;
			skipped = reloc_sec(e, i, k * 8, false);
			if (skipped)
				return uxdp_fail(EINVAL, "%s: section %s: the "
						 "call at instruction %llu has "
						 "no relocation libbpf reads "
						 "(its relocation is in %s, a "
						 "section libbpf skips by its "
						 "name)", e->obj, name,
						 (unsigned long long)k,
						 uxdp_bpf_elf_sec_name(e,
								       skipped));
			return uxdp_fail(EINVAL, "%s: section %s: the call at "
					 "instruction %llu has no relocation "
					 "(clang writes one for every call "
					 "out of a program's section)",
					 e->obj, name, (unsigned long long)k);
		}
	}
	return 0;
}

static int check_relocs(struct uxdp_bpf_elf *e)
{
	uint32_t i, j;
	int err;

	for (i = 1; i < e->nsec; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		const Elf64_Rel *rel;
		const char *name = uxdp_bpf_elf_sec_name(e, i);
		uint32_t target = s->sh_info, n;

		if (s->sh_type != SHT_REL)
			continue;
		if (s->sh_entsize != sizeof(Elf64_Rel) ||
		    s->sh_size % sizeof(Elf64_Rel) || s->sh_offset % 8 ||
		    s->sh_link != e->symtab || target >= e->nsec)
			return uxdp_fail(EINVAL, "%s: relocation section %s: "
					 "bad entries, symbol table or target",
					 e->obj, name);
		/* libbpf reads only the relocations of code sections (and
		 * .rel.BTF* as nothing); check those. */
		if (!uxdp_bpf_elf_is_code(e, target))
			continue;
		rel = (const Elf64_Rel *)(e->data + s->sh_offset);
		n = (uint32_t)MIN(s->sh_size / sizeof(*rel), UINT32_MAX);
		for (j = 0; j < n; j++) {
			uint32_t symi = (uint32_t)ELF64_R_SYM(rel[j].r_info);
			const struct bpf_insn *insn;
			const Elf64_Sym *sym;

			if (symi >= e->nsyms)
				return uxdp_fail(EINVAL, "%s: %s: relocation "
						 "%u names symbol %u of %u",
						 e->obj, name, j, symi,
						 e->nsyms);
			if (rel[j].r_offset % 8 ||
			    !in_bounds(rel[j].r_offset, sizeof(*insn),
				       e->sh[target].sh_size))
				return uxdp_fail(EINVAL, "%s: %s: relocation "
						 "%u at %llu, not an "
						 "instruction of %s", e->obj,
						 name, j, (unsigned long long)
						 rel[j].r_offset,
						 uxdp_bpf_elf_sec_name(e,
								       target));
			insn = (const struct bpf_insn *)(e->data +
				e->sh[target].sh_offset + rel[j].r_offset);
			/* A 16-byte lddw must have its second half too. */
			if (insn->code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    !in_bounds(rel[j].r_offset, 2 * sizeof(*insn),
				       e->sh[target].sh_size))
				return uxdp_fail(EINVAL, "%s: %s: relocation "
						 "%u on a cut-off lddw",
						 e->obj, name, j);
			sym = &e->syms[symi];
			if (insn->code == (BPF_JMP | BPF_CALL) &&
			    sym->st_shndx == SHN_UNDEF && symi) {
				err = note_extern_call(e, target,
					(uint32_t)(rel[j].r_offset / 8),
					uxdp_bpf_elf_sym_name(e, sym));
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static int check_btf(const struct uxdp_bpf_elf *e)
{
	int i = uxdp_bpf_elf_find_sec(e, ".BTF");
	uint64_t size;
	uint8_t *data;

	if (i < 0)
		return 0;
	data = uxdp_bpf_elf_sec_data(e, (uint32_t)i, &size);
	return uxdp_bpf_btf_check(data, size, e->obj);
}

int uxdp_bpf_elf_parse(struct uxdp_bpf_elf *e, uint8_t *data, size_t size,
		       const char *obj)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
	int err;

	memset(e, 0, sizeof(*e));
	e->data = data;
	e->size = size;
	e->obj = obj;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return uxdp_fail(EINVAL, "%s: not an ELF file", obj);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return uxdp_fail(EINVAL, "%s: a 32-bit ELF file; BPF objects "
				 "are 64-bit", obj);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return uxdp_fail(EINVAL, "%s: a big-endian object (clang "
				 "-target bpfeb); uxdp runs little-endian "
				 "ones (-target bpf on this host)", obj);
	if (eh->e_machine != EM_BPF)
		return uxdp_fail(EINVAL, "%s: an ELF file for machine %u, not "
				 "a BPF object (EM_BPF, clang -target bpf)",
				 obj, eh->e_machine);
	if (eh->e_type != ET_REL)
		return uxdp_fail(EINVAL, "%s: ELF type %u: a BPF object is "
				 "relocatable (ET_REL, clang -c)", obj,
				 eh->e_type);
	err = check_sections(e);
	if (!err)
		err = check_symbols(e);
	if (!err)
		err = check_relocs(e);
	if (!err)
		err = check_calls(e);
	if (!err)
		err = check_btf(e);
	if (err)
		uxdp_bpf_elf_fini(e);
	return err;
}

void uxdp_bpf_elf_fini(struct uxdp_bpf_elf *e)
{
	free(e->calls);
	e->calls = NULL;
	e->ncalls = e->calls_cap = 0;
}
