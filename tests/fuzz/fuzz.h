/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared helpers for the libFuzzer harnesses: a reader that turns the input
 * into numbers (past the end it reads zeros, so every input is a complete
 * script), and a check that stops the run with a message libFuzzer saves the
 * input for.
 */
#ifndef UXDP_FUZZ_H
#define UXDP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static inline uint16_t fz_u16(struct fz *f)
{
	uint16_t v = fz_u8(f);

	return (uint16_t)(v | fz_u8(f) << 8);
}

static inline uint32_t fz_u32(struct fz *f)
{
	uint32_t v = fz_u16(f);

	return v | (uint32_t)fz_u16(f) << 16;
}

static inline uint64_t fz_u64(struct fz *f)
{
	uint64_t v = fz_u32(f);

	return v | (uint64_t)fz_u32(f) << 32;
}

/* A boolean from one byte's low bit. */
static inline int fz_bit(struct fz *f)
{
	return fz_u8(f) & 1;
}

/* One of @n values 0..n-1 (n <= 256). */
static inline uint32_t fz_pick(struct fz *f, uint32_t n)
{
	return n ? fz_u8(f) % n : 0;
}

static inline int fz_more(const struct fz *f)
{
	return f->n != 0;
}

/*
 * Up to @max bytes into @buf as a NUL-terminated string: a length byte, then
 * the bytes. Embedded NULs end the string early, as they would for a caller.
 */
static inline void fz_str(struct fz *f, char *buf, size_t max)
{
	size_t len = fz_u8(f), i;

	if (len > max)
		len = max;
	for (i = 0; i < len; i++)
		buf[i] = (char)fz_u8(f);
	buf[len] = '\0';
}

/*
 * A failed check: say what and where, then abort so libFuzzer records the
 * input as a crash. Harness checks are not assert()s: they must not vanish
 * under NDEBUG.
 */
#define FZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "\n%s:%d: check failed: %s\n  ",\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

/* An allocation failure in the harness itself: not a finding. */
static inline void *fz_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "fuzz harness: out of memory (%zu bytes)\n", n);
		abort();
	}
	return p;
}

#endif /* UXDP_FUZZ_H */
