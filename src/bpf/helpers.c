/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The helpers programs call, by id (the kernel's BPF_FUNC_*), with what the
 * safety pass must know of their arguments and result; and every helper's
 * name, from libbpf's bpf_helper_defs.h (generated at build time), so a
 * refusal names the helper a program calls whether uxdp has it or not.
 *
 * The map calls, time, random numbers, the CPU (uxdp's thread index),
 * trace_printk, moving the packet's head, metadata and tail (through the
 * xdp layer's helpers, which have the kernel's bounds), copying bytes
 * in and out of it, and csum_diff.
 * Results are the kernel's, errors included (net/core/filter.c,
 * kernel/bpf/helpers.c).
 *
 * A helper runs inside a program's run, on that run's thread: uxdp_bpf_cur
 * is the run (its program, its context, its stack).
 */
#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>

#include "bpf_internal.h"
#include "../xdp/xdp_internal.h"

#define ETH_HLEN	14
/* The kernel's ENOTSUPP (524, not EOPNOTSUPP): what bpf_xdp_adjust_meta
 * returns for a buffer without room for metadata. */
#define KERNEL_ENOTSUPP	524

static inline void *ptr(uint64_t v)
{
	return (void *)(uintptr_t)v;
}

/* ---- maps ------------------------------------------------------------------- */

static uint64_t h_map_lookup_elem(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r3, (void)r4, (void)r5;
	return (uint64_t)(uintptr_t)map->ops->map_lookup_elem(map, ptr(r2));
}

static uint64_t h_map_update_elem(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r5;
	/* The safety pass refuses it; this keeps .rodata read-only even
	 * if a program got past it. */
	if (unlikely(map->map_flags & BPF_F_RDONLY_PROG))
		return (uint64_t)-EPERM;
	return (uint64_t)map->ops->map_update_elem(map, ptr(r2), ptr(r3), r4);
}

static uint64_t h_map_delete_elem(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r3, (void)r4, (void)r5;
	if (unlikely(map->map_flags & BPF_F_RDONLY_PROG))
		return (uint64_t)-EPERM;
	return (uint64_t)map->ops->map_delete_elem(map, ptr(r2));
}

/* Queues and stacks (map_queue.c): the safety pass let only them through,
 * with value_size bytes at r2 to read (push) or write (pop, peek). */
static uint64_t h_map_push_elem(uint64_t r1, uint64_t r2, uint64_t r3,
				uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r4, (void)r5;
	if (unlikely(map->map_flags & BPF_F_RDONLY_PROG))
		return (uint64_t)-EPERM;
	return (uint64_t)map->ops->map_push_elem(map, ptr(r2), r3);
}

static uint64_t h_map_pop_elem(uint64_t r1, uint64_t r2, uint64_t r3,
			       uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r3, (void)r4, (void)r5;
	if (unlikely(map->map_flags & BPF_F_RDONLY_PROG))
		return (uint64_t)-EPERM;
	return (uint64_t)map->ops->map_pop_elem(map, ptr(r2));
}

static uint64_t h_map_peek_elem(uint64_t r1, uint64_t r2, uint64_t r3,
				uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r3, (void)r4, (void)r5;
	return (uint64_t)map->ops->map_peek_elem(map, ptr(r2));
}

/* ---- time, random numbers, the CPU --------------------------------------- */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t h_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3,
			       uint64_t r4, uint64_t r5)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t h_ktime_get_boot_ns(uint64_t r1, uint64_t r2, uint64_t r3,
				    uint64_t r4, uint64_t r5)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return clock_ns(CLOCK_BOOTTIME);
}

static uint64_t h_ktime_get_coarse_ns(uint64_t r1, uint64_t r2, uint64_t r3,
				      uint64_t r4, uint64_t r5)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

/*
 * Per thread, as the kernel's per-CPU prandom state: xorshift64*, seeded on
 * first use from the clock and the thread's own address, so threads started
 * together do not repeat each other. Not for cryptography (neither is the
 * kernel's).
 */
static __thread uint64_t prandom_state;

static uint64_t h_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	uint64_t x = prandom_state;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	if (unlikely(!x)) {
		x = clock_ns(CLOCK_MONOTONIC) ^
		    ((uint64_t)(uintptr_t)&prandom_state << 16) ^
		    0x9e3779b97f4a7c15ULL;
		if (!x)
			x = 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	prandom_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

static uint64_t h_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3,
				       uint64_t r4, uint64_t r5)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return xdp_thread_index();
}

/* ---- trace_printk --------------------------------------------------------- */

/*
 * Whether the program may read @want bytes at @p: its stack, its packet
 * (metadata included), its raw memory, or a region (map values, global
 * data). *@avail gets how many bytes it may read from @p on (for strings).
 */
static bool run_readable(const struct uxdp_bpf_run *run, uintptr_t p,
			 size_t want, size_t *avail)
{
	uintptr_t lo[3] = { 0 }, hi[3] = { 0 };
	const struct uxdp_bpf_code *code = run->code;
	uint32_t i;

	lo[0] = (uintptr_t)run->stack_lo;
	hi[0] = (uintptr_t)run->stack_hi;
	if (run->ctx) {
		const struct uxdp_buff *b = run->ctx;

		lo[1] = (uintptr_t)(b->data_meta <= b->data ? b->data_meta :
							       b->data);
		hi[1] = (uintptr_t)b->data_end;
	}
	if (run->mem) {
		lo[2] = (uintptr_t)run->mem;
		hi[2] = lo[2] + run->mem_len;
	}
	for (i = 0; i < 3; i++) {
		if (p >= lo[i] && p < hi[i] && hi[i] - p >= want) {
			*avail = hi[i] - p;
			return true;
		}
	}
	for (i = 0; code && i < code->nregions; i++) {
		uintptr_t b = (uintptr_t)code->regions[i].base;

		if (p >= b && p - b < code->regions[i].size &&
		    code->regions[i].size - (p - b) >= want) {
			*avail = (size_t)(code->regions[i].size - (p - b));
			return true;
		}
	}
	return false;
}

#define PRINTK_MAX	512	/* the kernel's MAX_BPRINTF_BUF */
#define PRINTK_ARGS	3	/* MAX_TRACE_PRINTK_VARARGS */
#define PRINTK_STR	128	/* bytes of one %s taken at most */

struct printk_out {
	char buf[PRINTK_MAX];
	size_t len;
};

static void out_add(struct printk_out *o, const char *s, size_t n)
{
	size_t room = sizeof(o->buf) - 1 - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

__attribute__((format(printf, 2, 3)))
static void out_printf(struct printk_out *o, const char *fmt, ...)
{
	char tmp[PRINTK_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(o, tmp, MIN((size_t)n, sizeof(tmp) - 1));
}

/* A string the program points at, cut where its memory ends. */
static void printk_str(const struct uxdp_bpf_run *run, uint64_t arg,
		       char *s, size_t len)
{
	size_t avail = 0, n = 0;
	const char *p = ptr(arg);

	s[0] = '\0';
	if (!run_readable(run, (uintptr_t)arg, 1, &avail))
		return;		/* the kernel prints an empty string too */
	while (n < avail && n < len - 1 && p[n]) {
		s[n] = p[n];
		n++;
	}
	s[n] = '\0';
}

/* %pI4, %pi4, %pI6, %pi6: an address the program points at. */
static int printk_ip(struct printk_out *o, const struct uxdp_bpf_run *run,
		     uint64_t arg, char v, bool dotted)
{
	const uint8_t *a = ptr(arg);
	size_t avail, i;

	if (!run_readable(run, (uintptr_t)arg, v == '4' ? 4 : 16, &avail))
		return -EINVAL;
	if (v == '4') {
		out_printf(o, dotted ? "%u.%u.%u.%u" : "%03u%03u%03u%03u",
			   a[0], a[1], a[2], a[3]);
		return 0;
	}
	for (i = 0; i < 16; i += 2)
		out_printf(o, dotted ? "%s%02x%02x" : "%s%02x%02x",
			   dotted && i ? ":" : "", a[i], a[i + 1]);
	return 0;
}

/*
 * bpf_trace_printk(fmt, fmt_size, a1, a2, a3), the kernel's rules
 * (bpf_bprintf_prepare): fmt must end within fmt_size; at most three
 * conversions, each %[flags][width][.prec] then d i u x X with up to two l,
 * c, s, p (px pK pI4 pi4 pI6 pi6 pks pus) or %%; anything else is -EINVAL
 * and nothing is printed. Pointers (%s, %pI4, ...) are read only where the
 * program may read. Printed through the print callback (UXDP_INFO), one
 * line each; returns the length of the message.
 */
static uint64_t h_trace_printk(uint64_t r1, uint64_t r2, uint64_t r3,
			       uint64_t r4, uint64_t r5)
{
	const struct uxdp_bpf_run *run = uxdp_bpf_cur;
	uint64_t args[PRINTK_ARGS] = { r3, r4, r5 };
	const char *fmt = ptr(r1), *end;
	struct printk_out o = { .len = 0 };
	size_t avail, nargs = 0, i;

	if (!run || !r2 || !run_readable(run, (uintptr_t)r1, r2, &avail))
		return (uint64_t)-EINVAL;
	end = memchr(fmt, '\0', r2);
	if (!end)
		return (uint64_t)-EINVAL;
	o.buf[0] = '\0';
	for (i = 0; fmt + i < end; i++) {
		char spec[32], str[PRINTK_STR];
		size_t s0 = i, sl, lmod = 0;
		uint64_t a;
		char c;

		if (fmt[i] != '%') {
			out_add(&o, fmt + i, 1);
			continue;
		}
		if (fmt[i + 1] == '%') {
			out_add(&o, "%", 1);
			i++;
			continue;
		}
		if (nargs == PRINTK_ARGS)
			return (uint64_t)-EINVAL;
		a = args[nargs++];
		i++;
		while (fmt + i < end && strchr("-+ #0", fmt[i]))
			i++;
		while (fmt + i < end && fmt[i] >= '0' && fmt[i] <= '9')
			i++;
		if (fmt + i < end && fmt[i] == '.') {
			i++;
			while (fmt + i < end && fmt[i] >= '0' && fmt[i] <= '9')
				i++;
		}
		if (fmt + i >= end)
			return (uint64_t)-EINVAL;
		/* The flags, width and precision as written, bounded. */
		sl = i - s0;
		if (sl > 16)
			return (uint64_t)-EINVAL;
		memcpy(spec, fmt + s0, sl);
		c = fmt[i];
		if (c == 'p') {
			char n1 = fmt + i + 1 < end ? fmt[i + 1] : '\0';
			char n2 = fmt + i + 2 < end ? fmt[i + 2] : '\0';

			if ((n1 == 'I' || n1 == 'i') && (n2 == '4' || n2 == '6')) {
				if (printk_ip(&o, run, a, n2, n1 == 'I'))
					return (uint64_t)-EINVAL;
				i += 2;
				continue;
			}
			if ((n1 == 'k' || n1 == 'u') && n2 == 's') {
				printk_str(run, a, str, sizeof(str));
				out_add(&o, str, strlen(str));
				i += 2;
				continue;
			}
			if (n1 == 'x' || n1 == 'K')
				i++;
			out_printf(&o, "0x%016llx", (unsigned long long)a);
			continue;
		}
		if (c == 's') {
			printk_str(run, a, str, sizeof(str));
			memcpy(spec + sl, "s", 2);
			out_printf(&o, spec, str);
			continue;
		}
		if (c == 'c') {
			memcpy(spec + sl, "c", 2);
			out_printf(&o, spec, (int)(unsigned char)a);
			continue;
		}
		while (fmt + i < end && fmt[i] == 'l' && lmod < 2) {
			lmod++;
			i++;
		}
		if (fmt + i >= end)
			return (uint64_t)-EINVAL;
		c = fmt[i];
		if (!strchr("diuxX", c) || !c)
			return (uint64_t)-EINVAL;
		/* Always formatted as 64-bit, narrowed first as the C type
		 * the length modifier names: %d is an int, %ld and %lld a
		 * long on a 64-bit kernel. */
		spec[sl] = 'l';
		spec[sl + 1] = 'l';
		spec[sl + 2] = c;
		spec[sl + 3] = '\0';
		if (!lmod)
			a = (c == 'd' || c == 'i') ? (uint64_t)(int64_t)(int32_t)a :
						    (uint32_t)a;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		out_printf(&o, spec, (unsigned long long)a);
#pragma GCC diagnostic pop
	}
	uxdp_pr(UXDP_INFO, "bpf_trace_printk: prog %s: %s%s",
		run->code && run->code->name ? run->code->name : "?", o.buf,
		o.len && o.buf[o.len - 1] == '\n' ? "" : "\n");
	return o.len;
}

/* ---- the packet ----------------------------------------------------------- */

static uint64_t h_xdp_adjust_head(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	return (uint64_t)(int64_t)uxdp_adjust_head(ptr(r1), (int)r2);
}

static uint64_t h_xdp_adjust_meta(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	int err = uxdp_adjust_meta(ptr(r1), (int)r2);

	(void)r3, (void)r4, (void)r5;
	if (err == -EOPNOTSUPP)
		err = -KERNEL_ENOTSUPP;
	return (uint64_t)(int64_t)err;
}

static uint64_t h_xdp_adjust_tail(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	return (uint64_t)(int64_t)uxdp_adjust_tail(ptr(r1), (int)r2);
}

/* xdp_get_buff_len(): uxdp buffers are linear (no frags). */
static uint64_t h_xdp_get_buff_len(uint64_t r1, uint64_t r2, uint64_t r3,
				   uint64_t r4, uint64_t r5)
{
	const struct uxdp_buff *b = ptr(r1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	return (uint64_t)((const char *)b->data_end - (const char *)b->data);
}

/*
 * xdp_load_bytes() and xdp_store_bytes(): @len bytes at @offset from
 * data, the kernel's errors in the kernel's order (bpf_xdp_pointer()):
 * an offset or a length past 0xffff -EFAULT, past the buffer -EINVAL.
 * uxdp buffers are linear, so no copy crosses a fragment.
 */
static long xdp_bytes(const struct uxdp_buff *b, uint64_t offset, void *buf,
		      uint64_t len, bool store)
{
	uint32_t off = (uint32_t)offset, n = (uint32_t)len;
	uint8_t *data = b->data;

	if ((off | n) > 0xffff)
		return -EFAULT;
	if ((uint64_t)off + n > (uint64_t)((uint8_t *)b->data_end - data))
		return -EINVAL;
	if (store)
		memcpy(data + off, buf, n);
	else
		memcpy(buf, data + off, n);
	return 0;
}

static uint64_t h_xdp_load_bytes(uint64_t r1, uint64_t r2, uint64_t r3,
				 uint64_t r4, uint64_t r5)
{
	(void)r5;
	return (uint64_t)xdp_bytes(ptr(r1), r2, ptr(r3), r4, false);
}

static uint64_t h_xdp_store_bytes(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	(void)r5;
	return (uint64_t)xdp_bytes(ptr(r1), r2, ptr(r3), r4, true);
}

/* ---- checksums -------------------------------------------------------------- */

/*
 * csum_diff's result is the kernel's, and the kernel's changed in 6.13
 * ("bpf_csum_diff: optimize and homogenize for all archs"): before, the
 * 32-bit csum_partial() of ~from then to, seeded (sizes multiples of 4,
 * 512 bytes in all, else -EINVAL); since, each side's csum_partial()
 * combined and folded to 16 bits, with no rule on the sizes (a size of 6
 * is summed as 6 bytes: test_bpf_kernel's csum program on 6.18). Both are ones' complement sums, equal
 * modulo 0xffff; the bits a program sees differ, so uxdp follows the
 * running kernel's rule (uname), or UXDP_BPF_CSUM_DIFF=partial32|fold16
 * (docs/semantics.md). csum_partial() is x86-64's (arch/x86/lib): 64-bit
 * words, little-endian, added with end-around carry, folded to 32 bits;
 * a buffer at an odd address is summed from the next byte and the result
 * folded to 16 bits and byte-swapped, as the kernel does.
 */
static int csum_rule_cur;	/* UXDP_BPF_CSUM_*, 0 until first use */

static inline uint64_t add64_eac(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	return s + (s < a);
}

static inline uint32_t add32_eac(uint32_t a, uint32_t b)
{
	uint32_t s = a + b;

	return s + (s < a);
}

static uint32_t fold32to16(uint32_t v)
{
	v = (v & 0xffff) + (v >> 16);
	v = (v & 0xffff) + (v >> 16);
	return v;
}

static uint32_t csum_partial(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint64_t t = sum, w;
	bool odd = (uintptr_t)p & 1;
	uint32_t r;

	if (odd) {
		if (!len)
			return sum;
		t = (uint32_t)(sum >> 8 | sum << 24);	/* ror32 by 8 */
		t += (uint64_t)p[0] << 8;
		p++;
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		t = add64_eac(t, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);	/* the tail, zero-padded */
		t = add64_eac(t, w);
	}
	r = add32_eac((uint32_t)(t >> 32), (uint32_t)t);
	if (odd) {
		r = fold32to16(r);
		r = ((r >> 8) & 0xff) | ((r & 0xff) << 8);
	}
	return r;
}

/* The kernel's csum_from32to16(): add the halves, end-around. */
static inline uint32_t csum_from32to16(uint32_t v)
{
	v += v >> 16 | v << 16;
	return v >> 16;
}

static int csum_rule(void)
{
	int r = __atomic_load_n(&csum_rule_cur, __ATOMIC_RELAXED);
	const char *env;
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (likely(r))
		return r;
	env = getenv("UXDP_BPF_CSUM_DIFF");
	if (env && !strcmp(env, "partial32"))
		r = UXDP_BPF_CSUM_PARTIAL32;
	else if (env && !strcmp(env, "fold16"))
		r = UXDP_BPF_CSUM_FOLD16;
	else if (!uname(&u) &&
		 sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
		 (major < 6 || (major == 6 && minor < 13)))
		r = UXDP_BPF_CSUM_PARTIAL32;
	else
		r = UXDP_BPF_CSUM_FOLD16;
	__atomic_store_n(&csum_rule_cur, r, __ATOMIC_RELAXED);
	return r;
}

int uxdp_bpf_csum_diff_rule(int rule)
{
	if (rule == UXDP_BPF_CSUM_PARTIAL32 || rule == UXDP_BPF_CSUM_FOLD16)
		__atomic_store_n(&csum_rule_cur, rule, __ATOMIC_RELAXED);
	return csum_rule();
}

static uint64_t h_csum_diff(uint64_t r1, uint64_t r2, uint64_t r3,
			    uint64_t r4, uint64_t r5)
{
	const uint8_t *from = ptr(r1), *to = ptr(r3);
	uint32_t fs = (uint32_t)r2, ts = (uint32_t)r4, seed = (uint32_t)r5;
	uint32_t diff[UXDP_BPF_STACK / 4], v;
	uint32_t i, j = 0;

	if (csum_rule() == UXDP_BPF_CSUM_PARTIAL32) {
		if (((fs | ts) & 3) || (uint64_t)fs + ts > sizeof(diff))
			return (uint64_t)-EINVAL;
		for (i = 0; i < fs / 4; i++, j++) {
			memcpy(&v, from + 4 * i, 4);
			diff[j] = ~v;
		}
		for (i = 0; i < ts / 4; i++, j++)
			memcpy(&diff[j], to + 4 * i, 4);
		return csum_partial((const uint8_t *)diff, fs + ts, seed);
	}
	if (fs && ts)		/* csum_sub(): add the complement */
		v = add32_eac(csum_partial(to, ts, seed),
			      ~csum_partial(from, fs, 0));
	else if (ts)
		v = csum_partial(to, ts, seed);
	else if (fs)
		v = ~csum_partial(from, fs, ~seed);
	else
		v = seed;
	return csum_from32to16(v);
}

/* ---- redirects (map_redirect.c) ----------------------------------------------- */

static uint64_t h_redirect(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			   uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	return uxdp_bpf_redirect_ifindex((uint32_t)r1, r2);
}

static uint64_t h_redirect_map(uint64_t r1, uint64_t r2, uint64_t r3,
			       uint64_t r4, uint64_t r5)
{
	struct uxdp_bpf_map *map = ptr(r1);

	(void)r4, (void)r5;
	/* The safety pass let only redirect maps through. */
	return map->ops->map_redirect(map, (uint32_t)r2, r3);
}

/* ---- perf_event_output ------------------------------------------------------------ */

/* The kernel's bpf_xdp_event_output: the flags' index (or
 * BPF_F_CURRENT_CPU) and, in bits 32..51, how many of the packet's bytes
 * follow the program's; checked in the kernel's order. */
static uint64_t h_perf_event_output(uint64_t r1, uint64_t r2, uint64_t r3,
				    uint64_t r4, uint64_t r5)
{
	const struct uxdp_buff *b = ptr(r1);
	uint64_t n = (r3 & BPF_F_CTXLEN_MASK) >> 32;

	if (unlikely(r3 & ~(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK)))
		return (uint64_t)-EINVAL;
	if (unlikely(n > (uint64_t)((const uint8_t *)b->data_end -
				    (const uint8_t *)b->data)))
		return (uint64_t)-EFAULT;
	return (uint64_t)uxdp_bpf_perf_output(ptr(r2), r3 & BPF_F_INDEX_MASK,
					      ptr(r4), r5, b->data, n);
}

/* ---- ring buffers ----------------------------------------------------------------- */

static uint64_t h_ringbuf_output(uint64_t r1, uint64_t r2, uint64_t r3,
				 uint64_t r4, uint64_t r5)
{
	(void)r5;
	return (uint64_t)uxdp_bpf_ringbuf_output(ptr(r1), ptr(r2), r3, r4);
}

static uint64_t h_ringbuf_reserve(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	(void)r4, (void)r5;
	return (uint64_t)(uintptr_t)uxdp_bpf_ringbuf_reserve(ptr(r1), r2, r3);
}

static uint64_t h_ringbuf_submit(uint64_t r1, uint64_t r2, uint64_t r3,
				 uint64_t r4, uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	uxdp_bpf_ringbuf_commit(ptr(r1), r2, false);
	return 0;
}

static uint64_t h_ringbuf_discard(uint64_t r1, uint64_t r2, uint64_t r3,
				  uint64_t r4, uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	uxdp_bpf_ringbuf_commit(ptr(r1), r2, true);
	return 0;
}

static uint64_t h_ringbuf_query(uint64_t r1, uint64_t r2, uint64_t r3,
				uint64_t r4, uint64_t r5)
{
	(void)r3, (void)r4, (void)r5;
	return uxdp_bpf_ringbuf_query(ptr(r1), r2);
}

/* ---- the table ---------------------------------------------------------------- */

#define A(x)	UXDP_BPF_ARG_##x
#define HELPER(id_, fn_, ret_, ...)					\
	{ .id = BPF_FUNC_##id_, .name = #id_, .fn = h_##fn_,		\
	  .args = { __VA_ARGS__ }, .ret = UXDP_BPF_RET_##ret_ }

static const struct uxdp_bpf_helper helpers[] = {
	HELPER(map_lookup_elem, map_lookup_elem, VALUE_OR_NULL,
	       A(MAP), A(KEY)),
	HELPER(map_update_elem, map_update_elem, INT,
	       A(MAP), A(KEY), A(VALUE), A(ANY)),
	HELPER(map_delete_elem, map_delete_elem, INT, A(MAP), A(KEY)),
	HELPER(map_push_elem, map_push_elem, INT, A(MAP), A(VALUE), A(ANY)),
	HELPER(map_pop_elem, map_pop_elem, INT, A(MAP), A(VALUE_WR)),
	HELPER(map_peek_elem, map_peek_elem, INT, A(MAP), A(VALUE_WR)),
	HELPER(ktime_get_ns, ktime_get_ns, INT, A(NONE)),
	/* As the kernel's proto: the arguments after the format are not
	 * checked (the format says how many it reads; a pointer among them
	 * is read only where the program may read). */
	HELPER(trace_printk, trace_printk, INT, A(MEM), A(SIZE)),
	HELPER(get_prandom_u32, get_prandom_u32, INT, A(NONE)),
	HELPER(get_smp_processor_id, get_smp_processor_id, INT, A(NONE)),
	HELPER(xdp_adjust_head, xdp_adjust_head, INT, A(CTX), A(ANY)),
	HELPER(xdp_adjust_meta, xdp_adjust_meta, INT, A(CTX), A(ANY)),
	HELPER(xdp_adjust_tail, xdp_adjust_tail, INT, A(CTX), A(ANY)),
	HELPER(ktime_get_boot_ns, ktime_get_boot_ns, INT, A(NONE)),
	HELPER(ktime_get_coarse_ns, ktime_get_coarse_ns, INT, A(NONE)),
	HELPER(xdp_get_buff_len, xdp_get_buff_len, INT, A(CTX)),
	HELPER(csum_diff, csum_diff, INT, A(MEM), A(SIZE), A(MEM), A(SIZE),
	       A(ANY)),
	HELPER(xdp_load_bytes, xdp_load_bytes, INT, A(CTX), A(ANY),
	       A(MEM_WR), A(SIZE)),
	HELPER(xdp_store_bytes, xdp_store_bytes, INT, A(CTX), A(ANY), A(MEM),
	       A(SIZE)),
	HELPER(redirect, redirect, INT, A(ANY), A(ANY)),
	HELPER(redirect_map, redirect_map, INT, A(MAP), A(ANY), A(ANY)),
	HELPER(perf_event_output, perf_event_output, INT, A(CTX), A(MAP),
	       A(ANY), A(MEM), A(SIZE)),
	HELPER(ringbuf_output, ringbuf_output, INT, A(MAP), A(MEM), A(SIZE),
	       A(ANY)),
	HELPER(ringbuf_query, ringbuf_query, INT, A(MAP), A(ANY)),
	/* The safety pass types reserve's result (a record of R2's size,
	 * or NULL) and checks submit's and discard's argument. */
	HELPER(ringbuf_reserve, ringbuf_reserve, INT, A(MAP), A(ANY), A(ANY)),
	HELPER(ringbuf_submit, ringbuf_submit, VOID, A(ANY), A(ANY)),
	HELPER(ringbuf_discard, ringbuf_discard, VOID, A(ANY), A(ANY)),
};

#undef HELPER
#undef A

const struct uxdp_bpf_helper *uxdp_bpf_helper_get(uint32_t id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(helpers); i++)
		if (helpers[i].id == id)
			return &helpers[i];
	return NULL;
}

/* ---- names, and why a helper is refused --------------------------------------- */

static const char *const helper_names[] = {
#define UXDP_BPF_HELPER_NAME(id, name)	[id] = name,
#include "bpf_helper_names.h"
#undef UXDP_BPF_HELPER_NAME
};

const char *uxdp_bpf_helper_name(uint32_t id, char *buf, size_t len)
{
	if (id < ARRAY_SIZE(helper_names) && helper_names[id])
		return helper_names[id];
	snprintf(buf, len, "helper %u", id);
	return buf;
}

/* What the kernel lets XDP programs call that uxdp brings in part 2. */
static const uint16_t part2_ids[] = {
	BPF_FUNC_get_numa_node_id,
	BPF_FUNC_fib_lookup, BPF_FUNC_spin_lock, BPF_FUNC_spin_unlock,
	BPF_FUNC_jiffies64, BPF_FUNC_xdp_output,
	BPF_FUNC_check_mtu, BPF_FUNC_for_each_map_elem, BPF_FUNC_snprintf,
	BPF_FUNC_timer_init, BPF_FUNC_timer_set_callback,
	BPF_FUNC_timer_start, BPF_FUNC_timer_cancel, BPF_FUNC_trace_vprintk,
	BPF_FUNC_loop, BPF_FUNC_strncmp, BPF_FUNC_map_lookup_percpu_elem,
	BPF_FUNC_dynptr_from_mem, BPF_FUNC_ringbuf_reserve_dynptr,
	BPF_FUNC_ringbuf_submit_dynptr, BPF_FUNC_ringbuf_discard_dynptr,
	BPF_FUNC_dynptr_read, BPF_FUNC_dynptr_write, BPF_FUNC_dynptr_data,
	BPF_FUNC_ktime_get_tai_ns, BPF_FUNC_user_ringbuf_drain,
};

/* What the kernel lets XDP programs call that works on kernel state:
 * sockets, syncookies, kernel memory. */
static const uint16_t kernel_ids[] = {
	BPF_FUNC_sk_lookup_tcp, BPF_FUNC_sk_lookup_udp, BPF_FUNC_sk_release,
	BPF_FUNC_skc_lookup_tcp, BPF_FUNC_tcp_check_syncookie,
	BPF_FUNC_tcp_gen_syncookie, BPF_FUNC_probe_read_kernel,
	BPF_FUNC_probe_read_kernel_str, BPF_FUNC_per_cpu_ptr,
	BPF_FUNC_this_cpu_ptr, BPF_FUNC_kptr_xchg,
	BPF_FUNC_tcp_raw_gen_syncookie_ipv4,
	BPF_FUNC_tcp_raw_gen_syncookie_ipv6,
	BPF_FUNC_tcp_raw_check_syncookie_ipv4,
	BPF_FUNC_tcp_raw_check_syncookie_ipv6,
};

static bool in_ids(const uint16_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

const char *uxdp_bpf_helper_why(uint32_t id)
{
	if (uxdp_bpf_helper_get(id))
		return "supported";
	if (in_ids(part2_ids, ARRAY_SIZE(part2_ids), id))
		return "not supported yet (issue 15 brings it)";
	if (in_ids(kernel_ids, ARRAY_SIZE(kernel_ids), id))
		return "works on kernel state (sockets, syncookies, kernel "
		       "memory) that a userspace XDP program does not have";
	if (id < ARRAY_SIZE(helper_names) && helper_names[id])
		return "not callable from XDP programs in uxdp (a helper of "
		       "other program types; the kernel's XDP set differs "
		       "by version)";
	return "no such helper";
}
