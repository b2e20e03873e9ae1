/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test helpers for the bpf layer (t_bpf_ prefix): the conformance suite's
 * .data files (../shared/bpf-conformance/README.md has the format), and
 * programs from assembler text through the raw path (src/bpf/raw.c).
 * Include after t_helpers.h.
 */
#ifndef UXDP_T_BPF_H
#define UXDP_T_BPF_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uxdp/common.h>

#include "../src/bpf/bpf_internal.h"

/* One .data file, its sections as text (NULL: absent). */
struct t_bpf_data {
	char *asm_text;
	char *raw_text;
	uint8_t *mem;
	size_t mem_len;
	bool has_result;
	uint64_t result;
	bool has_error;
	char *error;		/* the expected refusal's text ("" if none) */
};

static inline void t_bpf_data_free(struct t_bpf_data *d)
{
	free(d->asm_text);
	free(d->raw_text);
	free(d->mem);
	free(d->error);
	memset(d, 0, sizeof(*d));
}

/* Append @line and a newline to the growing string *@s. */
static inline int t_bpf_append(char **s, const char *line)
{
	size_t have = *s ? strlen(*s) : 0, n = strlen(line);
	char *p = realloc(*s, have + n + 2);

	if (!p)
		return -ENOMEM;
	memcpy(p + have, line, n);
	p[have + n] = '\n';
	p[have + n + 1] = '\0';
	*s = p;
	return 0;
}

static inline char *t_bpf_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Read @path into @d. 0, or -EINVAL with @why set: an unknown section, a
 * bad byte in mem, a bad result, no program (neither asm nor raw).
 */
static inline int t_bpf_data_read(const char *path, struct t_bpf_data *d,
				  char *why, size_t whylen)
{
	enum { S_NONE, S_ASM, S_RAW, S_MEM, S_RESULT, S_ERROR, S_IGNORE }
		sec = S_NONE;
	char line[1024], *res = NULL;
	FILE *f = fopen(path, "r");
	int err = 0, lineno = 0;

	memset(d, 0, sizeof(*d));
	if (!f) {
		snprintf(why, whylen, "open: %s", strerror(errno));
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *s = line, *tok;

		lineno++;
		if (!strncmp(s, "--", 2)) {
			char *name = t_bpf_trim(s + 2);

			if (!strcmp(name, "asm"))
				sec = S_ASM;
			else if (!strcmp(name, "raw"))
				sec = S_RAW;
			else if (!strcmp(name, "mem"))
				sec = S_MEM;
			else if (!strcmp(name, "result"))
				sec = S_RESULT;
			else if (!strcmp(name, "error"))
				sec = S_ERROR;
			else if (!strcmp(name, "c") ||
				 !strcmp(name, "no register offset"))
				sec = S_IGNORE;
			else {
				snprintf(why, whylen, "line %d: unknown "
					 "section '%s'", lineno, name);
				err = -EINVAL;
			}
			if (sec == S_ERROR)
				d->has_error = true;
			continue;
		}
		switch (sec) {
		case S_ASM:
			err = t_bpf_append(&d->asm_text, s);
			break;
		case S_RAW:
			err = t_bpf_append(&d->raw_text, s);
			break;
		case S_MEM:
			s[strcspn(s, "#")] = '\0';
			for (tok = strtok(s, " \t\r\n"); tok && !err;
			     tok = strtok(NULL, " \t\r\n")) {
				char *end;
				unsigned long b = strtoul(tok, &end, 16);
				uint8_t *p;

				if (*end || b > 0xff || strlen(tok) > 2) {
					snprintf(why, whylen, "line %d: bad "
						 "byte '%s'", lineno, tok);
					err = -EINVAL;
					break;
				}
				p = realloc(d->mem, d->mem_len + 1);
				if (!p) {
					err = -ENOMEM;
					break;
				}
				d->mem = p;
				d->mem[d->mem_len++] = (uint8_t)b;
			}
			break;
		case S_RESULT:
			s[strcspn(s, "#")] = '\0';
			s = t_bpf_trim(s);
			if (*s && !res) {
				res = strdup(s);
				if (!res)
					err = -ENOMEM;
			}
			break;
		case S_ERROR:
			s[strcspn(s, "#")] = '\0';
			s = t_bpf_trim(s);
			if (*s && !d->error) {
				d->error = strdup(s);
				if (!d->error)
					err = -ENOMEM;
			}
			break;
		default:
			break;
		}
	}
	fclose(f);
	if (!err && res) {
		char *end;

		errno = 0;
		d->result = strtoull(res, &end, strncmp(res, "0x", 2) ? 10 : 16);
		if (*end || errno || res[0] == '-') {
			snprintf(why, whylen, "bad result '%s'", res);
			err = -EINVAL;
		}
		d->has_result = true;
	}
	free(res);
	if (!err && !d->asm_text && !d->raw_text) {
		snprintf(why, whylen, "no program (no asm or raw section)");
		err = -EINVAL;
	}
	if (!err && !d->has_result && !d->has_error) {
		snprintf(why, whylen, "no result or error section");
		err = -EINVAL;
	}
	if (err)
		t_bpf_data_free(d);
	return err;
}

/*
 * Assemble @text and build a raw code of it (flags: UXDP_BPF_RAW_F_*):
 * 0, or the error with uxdp_errmsg() saying why.
 */
static inline int t_bpf_asm_code(const char *name, const char *text,
				 uint32_t flags, struct uxdp_bpf_code **code)
{
	struct bpf_insn *insns;
	uint32_t len;
	int err = uxdp_bpf_asm(text, &insns, &len);

	if (err)
		return err;
	err = uxdp_bpf_raw_code(name, insns, len, flags, code);
	free(insns);
	return err;
}

#endif /* UXDP_T_BPF_H */
