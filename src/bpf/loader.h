/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loader's own pieces (loader.c, elf.c, core.c): what uxdp reads of
 * the ELF itself, before and beside libbpf. The rest of the layer sees the
 * loader through bpf_internal.h.
 */
#ifndef UXDP_BPF_LOADER_H
#define UXDP_BPF_LOADER_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- elf.c: the object's structure, checked -------------------------------- */

/* A call relocated against a function the object does not define. */
struct uxdp_bpf_elf_call {
	uint32_t sec;			/* the code section */
	uint32_t insn;			/* instruction index in it */
	const char *name;		/* the function (in the ELF buffer) */
};

struct uxdp_bpf_elf {
	uint8_t *data;			/* the object, writable (CO-RE) */
	size_t size;
	const char *obj;		/* for messages */
	const Elf64_Shdr *sh;
	uint32_t nsec;
	const char *shstr;
	uint32_t symtab;
	const Elf64_Sym *syms;
	uint32_t nsyms;
	const char *strtab;
	struct uxdp_bpf_elf_call *calls;
	uint32_t ncalls, calls_cap;
};

/*
 * Check @data as a BPF object (64-bit little-endian ET_REL for EM_BPF;
 * sections, names, symbols and code relocations within the file) and fill
 * @e over it. Returns 0 or -EINVAL/-ENOMEM with the reason.
 */
int uxdp_bpf_elf_parse(struct uxdp_bpf_elf *e, uint8_t *data, size_t size,
		       const char *obj);
void uxdp_bpf_elf_fini(struct uxdp_bpf_elf *e);

const char *uxdp_bpf_elf_sec_name(const struct uxdp_bpf_elf *e, uint32_t i);
/* The first section named @name, or -1. */
int uxdp_bpf_elf_find_sec(const struct uxdp_bpf_elf *e, const char *name);
/* Section @i's bytes (NULL, size 0 for NOBITS). */
uint8_t *uxdp_bpf_elf_sec_data(const struct uxdp_bpf_elf *e, uint32_t i,
			       uint64_t *size);
bool uxdp_bpf_elf_is_code(const struct uxdp_bpf_elf *e, uint32_t i);
const char *uxdp_bpf_elf_sym_name(const struct uxdp_bpf_elf *e,
				  const Elf64_Sym *sym);

/* ---- btf.c: the object's BTF ------------------------------------------------ */

/*
 * Check .BTF (@size bytes at @data) as far as libbpf relies on it: header,
 * strings, records, every type id named, no typedef loops. 0 or -EINVAL
 * with the reason (-E2BIG, -ENOMEM).
 */
int uxdp_bpf_btf_check(const uint8_t *data, uint64_t size, const char *obj);

/* ---- core.c: CO-RE relocations -------------------------------------------- */

/*
 * An instruction CO-RE could not relocate is made a call to helper
 * CORE_POISON + k (as libbpf does), k indexing the reasons: a program that
 * contains one is refused at load with reasons[k].
 */
#define UXDP_BPF_CORE_POISON	0x0bad2310
#define UXDP_BPF_CORE_MAX_FAIL	4096

struct uxdp_bpf_core_fails {
	char **reasons;
	uint32_t n;
};

/*
 * Apply the CO-RE relocations of .BTF.ext to the code of @e in place:
 * struct xdp_md against the kernel's UAPI layout (<linux/bpf.h>), every
 * other type against the object's own BTF (UAPI and wire-format types have
 * one layout). What cannot be resolved is poisoned and explained in @f.
 * Returns 0, or -EINVAL (a malformed .BTF.ext, with the reason), -ENOMEM.
 */
int uxdp_bpf_core_relocate(struct uxdp_bpf_elf *e,
			   struct uxdp_bpf_core_fails *f);
void uxdp_bpf_core_fails_free(struct uxdp_bpf_core_fails *f);

#endif /* UXDP_BPF_LOADER_H */
