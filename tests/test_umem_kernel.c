/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Differential test: the running kernel is the reference for what a valid
 * UMEM is. Every configuration is registered with setsockopt(XDP_UMEM_REG) on
 * a fresh AF_XDP socket and checked with uxdp_umem_check() (and, where the
 * area is real memory, uxdp_umem_create()); both must accept or both reject.
 * The same for ring sizes: XDP_UMEM_FILL_RING / _COMPLETION_RING / XDP_RX_RING
 * / XDP_TX_RING against uxdp_ring_mem_size(), uxdp_ring_mem_alloc() and the
 * UMEM's fill_size / comp_size.
 *
 * Last, the ring layout: the offsets getsockopt(XDP_MMAP_OFFSETS) reports
 * must be UXDP_RING_OFF_*, and a uxdp producer handle on the kernel's own
 * mmap'd fill ring must move the producer word the kernel reads.
 *
 * Only accept/reject is compared, not which rule fired: the kernel says
 * nothing but EINVAL.
 *
 * Some rules changed between kernel versions (t_kernel_rules.h: the
 * metadata flag, the 16-byte metadata minimum, the headroom limit). The
 * test asks the running kernel which form of each it follows, prints the
 * release and the answers, and a difference that the older form of a rule
 * the kernel follows accounts for is reported ("kernel X follows the older
 * rule here") instead of counted; every other difference fails.
 *
 * Kernel errors other than EINVAL (ENOMEM, ENOBUFS, EFAULT, ...) mean the
 * question could not be asked; such configurations are printed and
 * skipped, and more than a few percent of them fail the test.
 *
 * Needs root and AF_XDP; otherwise the program skips (exit 77), loudly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "t_helpers.h"
#include "t_kernel_rules.h"

#include <uxdp/uxdp.h>

/*
 * From the kernel's uapi <linux/if_xdp.h>. The installed header may predate
 * tx_metadata_len, so the struct is ours: the v3 layout, 32 bytes like v2
 * after padding. The kernel reads tx_metadata_len only with the
 * XDP_UMEM_TX_METADATA_LEN flag.
 */
#define T_XDP_RX_RING			2
#define T_XDP_TX_RING			3
#define T_XDP_UMEM_REG			4
#define T_XDP_UMEM_FILL_RING		5
#define T_XDP_UMEM_COMPLETION_RING	6

#define T_XDP_MMAP_OFFSETS		1

/* mmap page offsets of the four rings (XDP_PGOFF_*, XDP_UMEM_PGOFF_*). */
#define T_XDP_PGOFF_RX_RING			0ULL
#define T_XDP_PGOFF_TX_RING			0x80000000ULL
#define T_XDP_UMEM_PGOFF_FILL_RING		0x100000000ULL
#define T_XDP_UMEM_PGOFF_COMPLETION_RING	0x180000000ULL

/* struct xdp_ring_offset / xdp_mmap_offsets, the layout with flags (v2). */
struct t_xdp_ring_offset {
	uint64_t producer;
	uint64_t consumer;
	uint64_t desc;
	uint64_t flags;
};

struct t_xdp_mmap_offsets {
	struct t_xdp_ring_offset rx;
	struct t_xdp_ring_offset tx;
	struct t_xdp_ring_offset fr;	/* fill */
	struct t_xdp_ring_offset cr;	/* completion */
};

#define T_XDP_UMEM_UNALIGNED		(1U << 0)
#define T_XDP_UMEM_TX_SW_CSUM		(1U << 1)
#define T_XDP_UMEM_TX_METADATA_LEN	(1U << 2)

struct t_xdp_umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};
_Static_assert(sizeof(struct t_xdp_umem_reg) == 32, "xdp_umem_reg v3 layout");

#define T_ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define T_PAGE			4096ULL
#define T_MIB			(1ULL << 20)
/*
 * The one real area every configuration lives in. The largest offset used is
 * one page, so any length up to 64 MiB is backed by memory the kernel can
 * pin: a kernel answer is then about validation, never about the memory.
 */
#define T_AREA_SIZE		(64 * T_MIB + T_PAGE)

#define T_SEED			0x5eed0000cafef00dULL
#define T_NRANDOM		400
/* More skipped ("could not ask") configurations than this percentage fail. */
#define T_MAX_SKIP_PCT		3

static char *t_area;
/* The running kernel's release and the form of each rule it follows. */
static struct t_krules t_kr;
/* UXDP_TEST_VERBOSE=1: print every configuration and both answers */
static bool t_verbose;

struct t_tally {
	unsigned int configs;
	unsigned int accepted;	/* by the kernel */
	unsigned int rejected;	/* by the kernel, EINVAL */
	unsigned int mismatches;
	unsigned int skipped;	/* kernel error other than EINVAL */
	unsigned int older;	/* differences an older kernel rule explains */
};

/* Both UMEM differential tests add to this for the summary line. */
static struct t_tally t_total;

struct t_cfg {
	const char *what;	/* why an edge case is here; NULL for random */
	uint64_t addr;		/* offset in t_area; raw: the address */
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
	/* addr is a bare number, len is not backed: uxdp_umem_check() only */
	bool raw;
};

static uint64_t t_cfg_addr(const struct t_cfg *c)
{
	return c->raw ? c->addr : (uint64_t)(uintptr_t)(t_area + c->addr);
}

static const char *t_errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "E?";
}

static void t_cfg_print(const char *tag, unsigned int i, const struct t_cfg *c)
{
	if (c->raw)
		printf("  [%s %u%s%s] addr=%#" PRIx64, tag, i,
		       c->what ? ": " : "", c->what ? c->what : "", c->addr);
	else
		printf("  [%s %u%s%s] addr=area+%" PRIu64, tag, i,
		       c->what ? ": " : "", c->what ? c->what : "", c->addr);
	printf(" (%#" PRIx64 ") len=%" PRIu64 " (%#" PRIx64 ") chunk_size=%u "
	       "headroom=%u flags=%#x tx_metadata_len=%u%s\n",
	       t_cfg_addr(c), c->len, c->len, c->chunk_size, c->headroom,
	       c->flags, c->tx_metadata_len, c->raw ? " (check only)" : "");
}

/* Returns 0 (accepted), -EINVAL (rejected) or another -errno (not asked). */
static int t_kernel_umem_reg(int fd, uint64_t addr, const struct t_cfg *c)
{
	struct t_xdp_umem_reg reg = {
		.addr = addr,
		.len = c->len,
		.chunk_size = c->chunk_size,
		.headroom = c->headroom,
		.flags = c->flags,
		.tx_metadata_len = c->tx_metadata_len,
	};

	if (setsockopt(fd, SOL_XDP, T_XDP_UMEM_REG, &reg, sizeof(reg)))
		return -errno;
	return 0;
}

/* One configuration on its own socket, closed again before returning. */
static int t_kernel_verdict(const struct t_cfg *c)
{
	int fd, ret;

	fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0)
		return -errno;
	ret = t_kernel_umem_reg(fd, t_cfg_addr(c), c);
	close(fd);
	return ret;
}

static void t_opts_from_cfg(struct uxdp_umem_opts *o, const struct t_cfg *c)
{
	o->chunk_size = c->chunk_size;
	o->headroom = c->headroom;
	o->flags = c->flags;
	o->tx_metadata_len = c->tx_metadata_len;
}

/*
 * Ask both sides about @c and tally the answer. Returns false on a mismatch
 * (already printed with the whole configuration).
 */
static bool t_diff_one(const struct t_cfg *c, const char *tag, unsigned int i,
		       struct t_tally *t)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, opts);
	void *area = (void *)(uintptr_t)t_cfg_addr(c);
	char check_msg[256];
	int kret, uret, cerr = 0;
	struct uxdp_umem *umem;
	bool ok = true;

	t->configs++;
	kret = t_kernel_verdict(c);
	if (kret && kret != -EINVAL) {
		printf("SKIP (kernel said %s, not a validation answer)\n",
		       t_errname(-kret));
		t_cfg_print(tag, i, c);
		t->skipped++;
		return true;
	}
	if (kret)
		t->rejected++;
	else
		t->accepted++;

	t_opts_from_cfg(&opts, c);
	uret = uxdp_umem_check(area, c->len, &opts);
	snprintf(check_msg, sizeof(check_msg), "%s", uxdp_errmsg());

	if (uret && uret != -EINVAL) {
		printf("MISMATCH: uxdp_umem_check returned %d (%s), not 0 or "
		       "-EINVAL: %s\n", uret, t_errname(-uret), check_msg);
		ok = false;
	} else if (!kret != !uret) {
		const struct t_umem_reg reg = {
			.addr = t_cfg_addr(c), .len = c->len,
			.chunk_size = c->chunk_size, .headroom = c->headroom,
			.flags = c->flags,
			.tx_metadata_len = c->tx_metadata_len,
		};
		unsigned int older = t_krules_umem_explain(&t_kr, &reg, !kret,
							   !uret);
		char what[320];

		snprintf(what, sizeof(what), "%s %u%s%s: kernel %s, uxdp %s%s",
			 tag, i, c->what ? " " : "", c->what ? c->what : "",
			 kret ? "EINVAL" : "ok", uret ? "EINVAL: " : "ok",
			 uret ? check_msg : "");
		if (older) {
			t_krules_note(&t_kr, older, what);
			t->older++;
		} else {
			printf("MISMATCH: kernel %s, uxdp_umem_check %s%s\n",
			       kret ? "rejected (EINVAL)" : "accepted",
			       uret ? "rejected (EINVAL): " : "accepted",
			       uret ? check_msg : "");
			ok = false;
		}
	}

	/* create must agree with check; it only reads memory it accepts */
	if (!c->raw) {
		umem = uxdp_umem_create(area, c->len, &opts);
		if (!umem)
			cerr = errno;
		if (!umem != !!uret || (!umem && cerr != EINVAL)) {
			printf("MISMATCH: uxdp_umem_check %s but "
			       "uxdp_umem_create %s (%s: %s)\n",
			       uret ? "rejected" : "accepted",
			       umem ? "succeeded" : "failed",
			       umem ? "-" : t_errname(cerr),
			       umem ? "" : uxdp_errmsg());
			ok = false;
		}
		if (umem) {
			if (uxdp_umem_nchunks(umem) != c->len / c->chunk_size ||
			    uxdp_umem_area(umem) != area ||
			    uxdp_umem_size(umem) != c->len) {
				printf("MISMATCH: umem geometry: nchunks %u "
				       "size %" PRIu64 "\n",
				       uxdp_umem_nchunks(umem),
				       uxdp_umem_size(umem));
				ok = false;
			}
			if (uxdp_umem_destroy(umem)) {
				printf("MISMATCH: uxdp_umem_destroy failed: "
				       "%s\n", uxdp_errmsg());
				ok = false;
			}
		}
	}
	if (!ok) {
		t_cfg_print(tag, i, c);
		t->mismatches++;
	} else if (t_verbose) {
		printf("kernel %s, uxdp %s%s\n", kret ? "EINVAL" : "ok",
		       uret ? "EINVAL: " : "ok", uret ? check_msg : "");
		t_cfg_print(tag, i, c);
	}
	return ok;
}

static void t_tally_add(struct t_tally *sum, const struct t_tally *t)
{
	sum->configs += t->configs;
	sum->accepted += t->accepted;
	sum->rejected += t->rejected;
	sum->mismatches += t->mismatches;
	sum->skipped += t->skipped;
	sum->older += t->older;
}

static void t_tally_finish(const char *what, const struct t_tally *t)
{
	printf("%s (kernel %s): %u configs, %u accepted, %u rejected, %u "
	       "mismatches, %u skipped, %u where the kernel follows an older "
	       "rule\n", what, t_kr.release, t->configs, t->accepted,
	       t->rejected, t->mismatches, t->skipped, t->older);
	t_tally_add(&t_total, t);
	assert_int_equal(t->mismatches, 0);
	assert_true(t->skipped * 100 <= t->configs * T_MAX_SKIP_PCT);
	/* a run where nothing was accepted compared nothing useful */
	assert_true(t->accepted > 0);
	assert_true(t->rejected > 0);
}

/* ---- hand-written edge cases --------------------------------------------- */

#define KB4		4096U
#define UNAL		T_XDP_UMEM_UNALIGNED
#define CSUM		T_XDP_UMEM_TX_SW_CSUM
#define META		T_XDP_UMEM_TX_METADATA_LEN

/* what, offset, len, chunk_size, headroom, flags, tx_metadata_len */
#define E(w, o, l, cs, hr, fl, tm) \
	{ .what = (w), .addr = (o), .len = (l), .chunk_size = (cs), \
	  .headroom = (hr), .flags = (fl), .tx_metadata_len = (tm) }
/* a bare address that never touches memory: uxdp_umem_check() only */
#define R(w, a, l, cs, fl) \
	{ .what = (w), .addr = (a), .len = (l), .chunk_size = (cs), \
	  .flags = (fl), .raw = true }

static const struct t_cfg t_edges[] = {
	E("defaults", 0, 64 * KB4, KB4, 0, 0, 0),
	/* chunk_size: [2048, PAGE_SIZE], power of two unless unaligned */
	E("chunk 2047", 0, 64 * KB4, 2047, 0, 0, 0),
	E("chunk 2047 unal", 0, 64 * KB4, 2047, 0, UNAL, 0),
	E("chunk 2048", 0, 64 * KB4, 2048, 0, 0, 0),
	E("chunk 2049", 0, 64 * KB4, 2049, 0, 0, 0),
	E("chunk 2049 unal", 0, 64 * KB4, 2049, 0, UNAL, 0),
	E("chunk 3000", 0, 64 * KB4, 3000, 0, 0, 0),
	E("chunk 3000 unal", 0, 64 * KB4, 3000, 0, UNAL, 0),
	E("chunk 3000 unal, exact", 0, 3000 * 7, 3000, 0, UNAL, 0),
	E("chunk 3072 unal", 0, 3072 * 16, 3072, 0, UNAL, 0),
	E("chunk 4095", 0, 64 * KB4, 4095, 0, 0, 0),
	E("chunk 4095 unal", 0, 64 * KB4, 4095, 0, UNAL, 0),
	E("chunk 4096 unal", 0, 64 * KB4, KB4, 0, UNAL, 0),
	E("chunk 4097", 0, 64 * KB4, 4097, 0, 0, 0),
	E("chunk 4097 unal", 0, 64 * KB4, 4097, 0, UNAL, 0),
	E("chunk 8192", 0, 64 * KB4, 8192, 0, 0, 0),
	E("chunk 8192 unal", 0, 64 * KB4, 8192, 0, UNAL, 0),
	E("chunk 1024", 0, 64 * KB4, 1024, 0, 0, 0),
	E("chunk 65536", 0, 64 * KB4, 65536, 0, 0, 0),
	E("chunk 2^31", 0, 64 * KB4, 1U << 31, 0, 0, 0),
	E("chunk 2^32-1 unal", 0, 64 * KB4, 0xffffffffU, 0, UNAL, 0),
	/* headroom: at most chunk_size - 704 (256 + 320 + 128) */
	E("hr 1", 0, 64 * KB4, KB4, 1, 0, 0),
	E("hr 256", 0, 64 * KB4, KB4, 256, 0, 0),
	E("hr chunk-705", 0, 64 * KB4, KB4, KB4 - 705, 0, 0),
	E("hr chunk-704", 0, 64 * KB4, KB4, KB4 - 704, 0, 0),
	E("hr chunk-703", 0, 64 * KB4, KB4, KB4 - 703, 0, 0),
	E("hr chunk-512", 0, 64 * KB4, KB4, KB4 - 512, 0, 0),
	E("hr chunk-257", 0, 64 * KB4, KB4, KB4 - 257, 0, 0),
	E("hr chunk-256", 0, 64 * KB4, KB4, KB4 - 256, 0, 0),
	E("hr chunk-255", 0, 64 * KB4, KB4, KB4 - 255, 0, 0),
	E("hr chunk-1", 0, 64 * KB4, KB4, KB4 - 1, 0, 0),
	E("hr chunk", 0, 64 * KB4, KB4, KB4, 0, 0),
	E("hr chunk+1", 0, 64 * KB4, KB4, KB4 + 1, 0, 0),
	E("hr 2^32-1", 0, 64 * KB4, KB4, 0xffffffffU, 0, 0),
	E("hr 2048-705", 0, 64 * KB4, 2048, 2048 - 705, 0, 0),
	E("hr 2048-704", 0, 64 * KB4, 2048, 2048 - 704, 0, 0),
	E("hr 2048-703", 0, 64 * KB4, 2048, 2048 - 703, 0, 0),
	E("hr 2048-256", 0, 64 * KB4, 2048, 2048 - 256, 0, 0),
	E("hr 2048", 0, 64 * KB4, 2048, 2048, 0, 0),
	E("hr 3000-705 unal", 0, 64 * KB4, 3000, 3000 - 705, UNAL, 0),
	E("hr 3000-704 unal", 0, 64 * KB4, 3000, 3000 - 704, UNAL, 0),
	E("hr 3000-703 unal", 0, 64 * KB4, 3000, 3000 - 703, UNAL, 0),
	E("hr 3000-256 unal", 0, 64 * KB4, 3000, 3000 - 256, UNAL, 0),
	E("hr 2049-704 unal", 0, 64 * KB4, 2049, 2049 - 704, UNAL, 0),
	E("hr 2049-703 unal", 0, 64 * KB4, 2049, 2049 - 703, UNAL, 0),
	/* flags */
	E("flag tx_sw_csum", 0, 64 * KB4, KB4, 0, CSUM, 0),
	E("flags unal|csum", 0, 64 * KB4, KB4, 0, UNAL | CSUM, 0),
	E("flag meta, 0", 0, 64 * KB4, KB4, 0, META, 0),
	E("flag meta, 8", 0, 64 * KB4, KB4, 0, META, 8),
	E("flag meta, 12", 0, 64 * KB4, KB4, 0, META, 12),
	/* 16..248 with the flag since 1bb30b181d9f; 0 and 8 before */
	E("flag meta, 16", 0, 64 * KB4, KB4, 0, META, 16),
	E("flag meta, 17", 0, 64 * KB4, KB4, 0, META, 17),
	E("flag meta, 24", 0, 64 * KB4, KB4, 0, META, 24),
	E("unal|meta, 16", 0, 64 * KB4, KB4, 0, UNAL | META, 16),
	E("unal|meta, 8", 0, 64 * KB4, 3000, 0, UNAL | META, 8),
	E("no flag, meta 8", 0, 64 * KB4, KB4, 0, 0, 8),
	E("meta 16 + hr 4000", 0, 64 * KB4, KB4, 4000, META, 16),
	E("meta 16 + hr 4080", 0, 64 * KB4, KB4, 4080, META, 16),
	E("meta 16 + hr 4081", 0, 64 * KB4, KB4, 4081, META, 16),
	E("meta 16 + max hr", 0, 64 * KB4, KB4, KB4 - 704, META, 16),
	E("meta 8 + max hr", 0, 64 * KB4, KB4, KB4 - 704, META, 8),
	E("flag meta, 248", 0, 64 * KB4, KB4, 0, META, 248),
	E("flag meta, 255", 0, 64 * KB4, KB4, 0, META, 255),
	E("flag meta, 256", 0, 64 * KB4, KB4, 0, META, 256),
	E("flag meta, 264", 0, 64 * KB4, KB4, 0, META, 264),
	E("flag meta, 2^32-8", 0, 64 * KB4, KB4, 0, META, 0xfffffff8U),
	E("no flag, meta 12", 0, 64 * KB4, KB4, 0, 0, 12),
	E("no flag, meta 255", 0, 64 * KB4, KB4, 0, 0, 255),
	E("no flag, meta 256", 0, 64 * KB4, KB4, 0, 0, 256),
	E("no flag, meta 2^32-1", 0, 64 * KB4, KB4, 0, 0, 0xffffffffU),
	E("csum|meta 248", 0, 64 * KB4, KB4, 0, CSUM | META, 248),
	E("all three, meta 8", 0, 64 * KB4, 2048, 0, UNAL | CSUM | META, 8),
	E("all three, meta 12", 0, 64 * KB4, 2048, 0, UNAL | CSUM | META, 12),
	E("meta 248 + max hr", 0, 64 * KB4, KB4, KB4 - 704, META, 248),
	E("flag 1<<3", 0, 64 * KB4, KB4, 0, 1U << 3, 0),
	E("flag 1<<3 | unal", 0, 64 * KB4, KB4, 0, (1U << 3) | UNAL, 0),
	E("flag 1<<4", 0, 64 * KB4, KB4, 0, 1U << 4, 0),
	E("flag 1<<16 (uxdp hugepages)", 0, 64 * KB4, KB4, 0, 1U << 16, 0),
	E("flag 1<<16 | unal", 0, 64 * KB4, KB4, 0, (1U << 16) | UNAL, 0),
	E("flag 1<<31", 0, 64 * KB4, KB4, 0, 1U << 31, 0),
	E("flags all ones", 0, 64 * KB4, KB4, 0, 0xffffffffU, 0),
	/* length */
	E("len 0", 0, 0, KB4, 0, 0, 0),
	E("len 0 unal", 0, 0, KB4, 0, UNAL, 0),
	E("len 1", 0, 1, 2048, 0, 0, 0),
	E("len chunk-1", 0, KB4 - 1, KB4, 0, 0, 0),
	E("len chunk-1 unal", 0, KB4 - 1, KB4, 0, UNAL, 0),
	E("len one chunk", 0, KB4, KB4, 0, 0, 0),
	E("len one 2K chunk", 0, 2048, 2048, 0, 0, 0),
	E("len 2K, chunk 4K", 0, 2048, KB4, 0, 0, 0),
	E("len chunk+1", 0, KB4 + 1, KB4, 0, 0, 0),
	E("len chunk+1 unal", 0, KB4 + 1, KB4, 0, UNAL, 0),
	E("len 3 x 2K", 0, 3 * 2048, 2048, 0, 0, 0),
	E("len 3 x 2K, chunk 4K", 0, 3 * 2048, KB4, 0, 0, 0),
	E("len 3 x 2K, chunk 4K unal", 0, 3 * 2048, KB4, 0, UNAL, 0),
	E("len 5 MiB", 0, 5 * T_MIB, KB4, 0, 0, 0),
	E("len 5 MiB + 100 unal", 0, 5 * T_MIB + 100, 3000, 0, UNAL, 0),
	E("len 64 MiB", 0, 64 * T_MIB, 2048, 0, 0, 0),
	E("len 64 MiB + page", 0, T_AREA_SIZE, KB4, 0, 0, 0),
	E("len 64 MiB + page - 1 unal", 0, T_AREA_SIZE - 1, KB4, 0, UNAL, 0),
	/* address */
	E("area+1", 1, 64 * KB4, KB4, 0, 0, 0),
	E("area+64", 64, 64 * KB4, KB4, 0, 0, 0),
	E("area+2048", 2048, 64 * KB4, 2048, 0, 0, 0),
	E("area+2048 unal", 2048, 64 * KB4, 2048, 0, UNAL, 0),
	E("area+4095", 4095, 64 * KB4, KB4, 0, 0, 0),
	E("area+4096", 4096, 64 * KB4, KB4, 0, 0, 0),
	E("area+4096 64 MiB", 4096, 64 * T_MIB, KB4, 0, 0, 0),
	/* pure arithmetic, never touches memory */
	R("addr+len wraps", 0xfffffffffffff000ULL, 0x2000, KB4, 0),
	R("addr+len == 2^64", 0xfffffffffffff000ULL, 0x1000, KB4, 0),
	R("addr+len wraps unal", 0xfffffffffffff000ULL, 0x3000, KB4, UNAL),
	R("misaligned and wraps", 0xfffffffffffff800ULL, 0x2000, 2048, 0),
};

/* R() placeholder for the address of t_area, filled in at run time */
#define T_AREA_ADDR	(~0ULL)

/* Rejects that must come from the page and chunk counts alone. */
static const struct t_cfg t_arith[] = {
	R("len 2^45: over 2^32 pages", T_AREA_ADDR, 1ULL << 45, KB4, 0),
	R("len 2^45 unal", T_AREA_ADDR, 1ULL << 45, KB4, UNAL),
	R("len 2^44: 2^32 pages", T_AREA_ADDR, 1ULL << 44, KB4, 0),
	/* ceil(len / PAGE) = 2^32 but len / chunk = 2^32 - 1: only npgs */
	R("len 2^44-4095 unal", T_AREA_ADDR, (1ULL << 44) - 4095, KB4, UNAL),
	/* 2^31 pages but 2^32 chunks of 2048 */
	R("len 2^43, chunk 2K: 2^32 chunks", T_AREA_ADDR, 1ULL << 43, 2048, 0),
	R("len 2^43 unal", T_AREA_ADDR, 1ULL << 43, 2048, UNAL),
	R("len 2^64-1", T_AREA_ADDR, ~0ULL, KB4, UNAL),
};

static void test_umem_reg_edges(void **state)
{
	struct t_tally t = { 0 };
	unsigned int i;

	(void)state;
	for (i = 0; i < T_ARRAY_SIZE(t_edges); i++)
		t_diff_one(&t_edges[i], "edge", i, &t);
	t_tally_finish("umem edge cases", &t);
}

static void test_umem_reg_arith(void **state)
{
	struct t_tally t = { 0 };
	struct t_cfg c;
	unsigned int i;

	(void)state;
	for (i = 0; i < T_ARRAY_SIZE(t_arith); i++) {
		c = t_arith[i];
		if (c.addr == T_AREA_ADDR)
			c.addr = (uint64_t)(uintptr_t)t_area;
		t_diff_one(&c, "arith", i, &t);
	}
	/* the kernel must refuse every one of these, and with EINVAL */
	printf("umem arithmetic: %u configs, %u rejected, %u mismatches, "
	       "%u skipped\n", t.configs, t.rejected, t.mismatches, t.skipped);
	t_tally_add(&t_total, &t);
	assert_int_equal(t.mismatches, 0);
	assert_int_equal(t.skipped, 0);
	assert_int_equal(t.rejected, t.configs);
}

/* ---- random configurations ----------------------------------------------- */

static uint32_t t_pick(uint64_t *s, const uint32_t *v, size_t n)
{
	return v[t_rand(s) % n];
}

static uint64_t t_below(uint64_t *s, uint64_t n)
{
	return n ? t_rand(s) % n : 0;
}

/*
 * A valid configuration (by the rules as documented), then zero to two
 * fields moved to an edge value. Single-fault configurations test one rule
 * each instead of hiding behind whichever rule the kernel checks first; the
 * valid ones make sure acceptance is compared as often as rejection.
 */
static void t_random_base(uint64_t *s, struct t_cfg *c)
{
	static const uint32_t extra_flags[] = {
		0, 0, T_XDP_UMEM_TX_SW_CSUM, T_XDP_UMEM_TX_METADATA_LEN,
		T_XDP_UMEM_TX_SW_CSUM | T_XDP_UMEM_TX_METADATA_LEN,
	};
	uint64_t max_len;
	uint32_t cs;

	memset(c, 0, sizeof(*c));
	if (t_below(s, 5) < 2) {
		c->flags = T_XDP_UMEM_UNALIGNED;
		cs = 2048 + (uint32_t)t_below(s, 2049);
	} else {
		cs = t_below(s, 2) ? 4096 : 2048;
	}
	c->chunk_size = cs;
	c->flags |= t_pick(s, extra_flags, T_ARRAY_SIZE(extra_flags));
	if (c->flags & T_XDP_UMEM_TX_METADATA_LEN)
		c->tx_metadata_len = 8 * (uint32_t)t_below(s, 32);
	else
		c->tx_metadata_len = (uint32_t)t_rand(s);	/* ignored */
	c->headroom = (uint32_t)t_below(s, cs - 704 + 1);
	if (t_below(s, 3))
		c->headroom &= 0xff;
	c->addr = t_below(s, 4) ? 0 : T_PAGE;

	max_len = T_AREA_SIZE - c->addr;
	if (!t_below(s, 6))
		c->len = max_len / cs;		/* as big as fits */
	else if (t_below(s, 3))
		c->len = 1 + t_below(s, 64);	/* a few chunks */
	else
		c->len = 1 + t_below(s, max_len / cs); /* to 64 MiB */
	c->len *= cs;
	if (c->flags & T_XDP_UMEM_UNALIGNED)
		c->len += t_below(s, cs);		/* a partial chunk */
	if (c->len > max_len)
		c->len -= cs;
}

static void t_random_mutate(uint64_t *s, struct t_cfg *c)
{
	static const uint32_t chunks[] = {
		2047, 2048, 2049, 3000, 4095, 4096, 4097, 8192, 1024, 2560,
		3072, 65536, 0xffffffffU,
	};
	static const uint32_t flagv[] = {
		0, T_XDP_UMEM_UNALIGNED, T_XDP_UMEM_TX_SW_CSUM,
		T_XDP_UMEM_TX_METADATA_LEN, 1U << 3, 1U << 4, 1U << 16,
		1U << 31,
	};
	static const uint32_t metav[] = { 0, 8, 12, 16, 248, 255, 256, 264,
					  7 };
	static const int hr_delta[] = {
		-705, -704, -703, -512, -257, -256, -255, -1, 0, 1,
	};
	static const uint32_t offs[] = { 0, 1, 64, 2048, 4095, 4096 };
	uint64_t max_len;
	uint32_t cs = c->chunk_size;

	switch (t_below(s, 6)) {
	case 0:
		c->chunk_size = t_pick(s, chunks, T_ARRAY_SIZE(chunks));
		break;
	case 1:
		switch (t_below(s, 4)) {
		case 0:
			c->flags ^= t_pick(s, flagv, T_ARRAY_SIZE(flagv));
			break;
		case 1:
			c->flags = t_pick(s, flagv, T_ARRAY_SIZE(flagv));
			break;
		case 2:
			c->flags |= 1U << t_below(s, 32);
			break;
		default:
			c->flags = (uint32_t)t_rand(s);
			break;
		}
		break;
	case 2:
		c->tx_metadata_len = t_pick(s, metav, T_ARRAY_SIZE(metav));
		if (t_below(s, 2))
			c->flags |= T_XDP_UMEM_TX_METADATA_LEN;
		break;
	case 3:
		switch (t_below(s, 3)) {
		case 0:
			c->headroom = cs + (uint32_t)t_below(s, 2 * cs);
			break;
		case 1:
			/* between the classic rule and the current one */
			c->headroom = cs - 703 + (uint32_t)t_below(s, 447);
			break;
		default:
			c->headroom = cs + hr_delta[t_below(s,
					T_ARRAY_SIZE(hr_delta))];
			break;
		}
		break;
	case 4:
		max_len = T_AREA_SIZE - c->addr;
		switch (t_below(s, 7)) {
		case 0:
			c->len = 0;
			break;
		case 1:
			c->len = cs - 1 - t_below(s, cs / 2);
			break;
		case 2:
			c->len = cs;
			break;
		case 3:
			c->len += 1 + t_below(s, cs - 1);
			break;
		case 4:
			c->len = (1 + t_below(s, 8)) * T_MIB;
			break;
		case 5:
			c->len = max_len;
			break;
		default:
			c->len = 1 + t_below(s, max_len);
			break;
		}
		if (c->len > max_len)
			c->len = max_len;
		break;
	default:
		c->addr = t_pick(s, offs, T_ARRAY_SIZE(offs));
		max_len = T_AREA_SIZE - c->addr;
		if (c->len > max_len)
			c->len = max_len;
		break;
	}
}

static void t_random_cfg(uint64_t *s, struct t_cfg *c)
{
	unsigned int n;

	t_random_base(s, c);
	n = (unsigned int)t_below(s, 10);
	n = n < 3 ? 0 : n < 8 ? 1 : 2;
	while (n--)
		t_random_mutate(s, c);
}

static void test_umem_reg_random(void **state)
{
	uint64_t seed = T_SEED;
	struct t_tally t = { 0 };
	struct t_cfg c;
	unsigned int i;

	(void)state;
	for (i = 0; i < T_NRANDOM; i++) {
		t_random_cfg(&seed, &c);
		t_diff_one(&c, "random", i, &t);
	}
	t_tally_finish("umem random", &t);
}

/* ---- ring sizes ---------------------------------------------------------- */

enum t_ring_kind { T_RING_FILL, T_RING_COMP, T_RING_RX, T_RING_TX };

static const struct {
	const char *name;
	int optname;
	uint32_t elem_size;
	enum t_ring_kind kind;
} t_rings[] = {
	{ "fill", T_XDP_UMEM_FILL_RING, sizeof(uint64_t), T_RING_FILL },
	{ "completion", T_XDP_UMEM_COMPLETION_RING, sizeof(uint64_t),
	  T_RING_COMP },
	{ "rx", T_XDP_RX_RING, sizeof(struct uxdp_desc), T_RING_RX },
	{ "tx", T_XDP_TX_RING, sizeof(struct uxdp_desc), T_RING_TX },
};

static const uint32_t t_ring_sizes[] = {
	0, 1, 2, 3, 64, 1000, 1024, 4096, 1U << 20,
};

/*
 * Kernel: a fresh socket with a 16-chunk UMEM registered, then the ring
 * option. Returns 0, -EINVAL, or another -errno (not asked).
 */
static int t_kernel_ring(int optname, uint32_t entries)
{
	const struct t_cfg umem = {
		.len = 16 * T_PAGE,
		.chunk_size = 4096,
	};
	int fd, ret, n = (int)entries;

	fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0)
		return -errno;
	ret = t_kernel_umem_reg(fd, t_cfg_addr(&umem), &umem);
	if (ret) {
		printf("  UMEM registration for the ring test: %s\n",
		       t_errname(-ret));
		/* not a ring answer: never let it read as EINVAL */
		ret = -ENOTCONN;
		goto out;
	}
	if (setsockopt(fd, SOL_XDP, optname, &n, sizeof(n)))
		ret = -errno;
out:
	close(fd);
	return ret;
}

/*
 * uxdp's answer for one ring size, from every call that takes one. Prints
 * and returns -1 if they disagree among themselves.
 */
static int t_uxdp_ring(enum t_ring_kind kind, uint32_t elem_size,
		       uint32_t entries)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, opts);
	bool size_ok, alloc_ok, umem_ok;
	struct uxdp_umem *umem;
	int err = 0, uret;
	void *mem;

	size_ok = uxdp_ring_mem_size(entries, elem_size) != 0;
	mem = uxdp_ring_mem_alloc(entries, elem_size);
	alloc_ok = mem != NULL;
	if (!mem)
		err = errno;
	uxdp_ring_mem_free(mem, entries, elem_size);
	if (size_ok != alloc_ok || (!alloc_ok && err != EINVAL)) {
		printf("  uxdp_ring_mem_size says %s, uxdp_ring_mem_alloc "
		       "%s (%s: %s)\n", size_ok ? "valid" : "invalid",
		       alloc_ok ? "succeeded" : "failed",
		       alloc_ok ? "-" : t_errname(err), uxdp_errmsg());
		return -1;
	}
	if (kind != T_RING_FILL && kind != T_RING_COMP)
		return size_ok;

	if (kind == T_RING_FILL)
		opts.fill_size = entries;
	else
		opts.comp_size = entries;
	uret = uxdp_umem_check(t_area, 16 * T_PAGE, &opts);
	umem = uxdp_umem_create(t_area, 16 * T_PAGE, &opts);
	umem_ok = umem != NULL;
	if (umem)
		assert_int_equal(uxdp_umem_destroy(umem), 0);
	if (!uret != umem_ok) {
		printf("  uxdp_umem_check %s, uxdp_umem_create %s: %s\n",
		       uret ? "rejected" : "accepted",
		       umem_ok ? "succeeded" : "failed", uxdp_errmsg());
		return -1;
	}
	/* 0 is uxdp's "default" (2048) in the options, the kernel's EINVAL */
	if (!entries) {
		if (!umem_ok) {
			printf("  uxdp_umem_check refused %s_size 0 (should "
			       "mean the default): %s\n",
			       kind == T_RING_FILL ? "fill" : "comp",
			       uxdp_errmsg());
			return -1;
		}
		return size_ok;
	}
	if (umem_ok != size_ok) {
		printf("  uxdp_ring_mem_size says %s, uxdp_umem_check %s: %s\n",
		       size_ok ? "valid" : "invalid",
		       umem_ok ? "accepted" : "rejected", uxdp_errmsg());
		return -1;
	}
	return size_ok;
}

static void test_ring_sizes(void **state)
{
	unsigned int r, i, n = 0, mismatches = 0, skipped = 0;
	uint32_t entries;
	int kret, uok;

	(void)state;
	for (r = 0; r < T_ARRAY_SIZE(t_rings); r++) {
		for (i = 0; i < T_ARRAY_SIZE(t_ring_sizes); i++) {
			entries = t_ring_sizes[i];
			n++;
			kret = t_kernel_ring(t_rings[r].optname, entries);
			if (kret && kret != -EINVAL) {
				printf("SKIP ring %s size %u: kernel said "
				       "%s\n", t_rings[r].name, entries,
				       t_errname(-kret));
				skipped++;
				continue;
			}
			uok = t_uxdp_ring(t_rings[r].kind,
					  t_rings[r].elem_size, entries);
			if (uok < 0 || uok != !kret)
				mismatches++;
			else if (!t_verbose)
				continue;
			printf("%sring %s size %u: kernel %s, uxdp %s\n",
			       uok < 0 || uok != !kret ? "MISMATCH " : "",
			       t_rings[r].name, entries,
			       kret ? "rejected (EINVAL)" : "accepted",
			       uok < 0 ? "inconsistent" :
			       uok ? "accepted" : "rejected");
		}
	}
	printf("ring sizes: %u probes, %u mismatches, %u skipped\n", n,
	       mismatches, skipped);
	assert_int_equal(mismatches, 0);
	assert_true(skipped * 100 <= n * T_MAX_SKIP_PCT);
}

/* ---- ring layout --------------------------------------------------------- */

#define T_LAYOUT_ENTRIES	64
#define T_LAYOUT_PUSH		5

/* A socket with a 16-chunk UMEM and all four rings, T_LAYOUT_ENTRIES each. */
static int t_layout_socket(void)
{
	static const int opts[] = {
		T_XDP_UMEM_FILL_RING, T_XDP_UMEM_COMPLETION_RING,
		T_XDP_RX_RING, T_XDP_TX_RING,
	};
	const struct t_cfg umem = { .len = 16 * T_PAGE, .chunk_size = 4096 };
	int fd, ret, n = T_LAYOUT_ENTRIES;
	unsigned int i;

	fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0)
		fail_msg("socket(AF_XDP): %s", strerror(errno));
	ret = t_kernel_umem_reg(fd, t_cfg_addr(&umem), &umem);
	if (ret)
		fail_msg("XDP_UMEM_REG: %s", strerror(-ret));
	for (i = 0; i < T_ARRAY_SIZE(opts); i++) {
		if (setsockopt(fd, SOL_XDP, opts[i], &n, sizeof(n)))
			fail_msg("ring option %d, %d entries: %s", opts[i], n,
				 strerror(errno));
	}
	return fd;
}

static void t_check_ring_offsets(const char *name,
				 const struct t_xdp_ring_offset *o)
{
	printf("  %-10s producer %3" PRIu64 " consumer %3" PRIu64 " flags %3"
	       PRIu64 " desc %3" PRIu64 "\n", name, o->producer, o->consumer,
	       o->flags, o->desc);
	assert_int_equal(o->producer, UXDP_RING_OFF_PRODUCER);
	assert_int_equal(o->consumer, UXDP_RING_OFF_CONSUMER);
	assert_int_equal(o->flags, UXDP_RING_OFF_FLAGS);
	assert_int_equal(o->desc, UXDP_RING_OFF_DESC);
}

/*
 * uxdp's ring layout is the kernel's: ask the kernel, then drive the
 * kernel's fill ring with the uxdp producer API and read the producer word
 * through a second mapping of the same kernel pages.
 */
static void test_ring_layout(void **state)
{
	struct t_xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	size_t len = uxdp_ring_mem_size(T_LAYOUT_ENTRIES, sizeof(uint64_t));
	volatile uint32_t *kprod;
	const uint64_t *kaddrs;
	uint64_t addrs[T_LAYOUT_PUSH];
	struct uxdp_ring r;
	char *mem, *view;
	uint32_t idx, start, i;
	int fd;

	(void)state;
	fd = t_layout_socket();
	memset(&off, 0xff, sizeof(off));
	if (getsockopt(fd, SOL_XDP, T_XDP_MMAP_OFFSETS, &off, &optlen))
		fail_msg("getsockopt(XDP_MMAP_OFFSETS): %s", strerror(errno));
	/* A shorter answer is the v1 layout, without flags: not ours. */
	assert_int_equal(optlen, sizeof(off));
	t_check_ring_offsets("rx", &off.rx);
	t_check_ring_offsets("tx", &off.tx);
	t_check_ring_offsets("fill", &off.fr);
	t_check_ring_offsets("completion", &off.cr);

	/* The kernel's ring is exactly uxdp's size for these entries. */
	assert_int_equal(len, UXDP_RING_OFF_DESC +
			 T_LAYOUT_ENTRIES * sizeof(uint64_t));
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, fd,
		   (off_t)T_XDP_UMEM_PGOFF_FILL_RING);
	if (mem == MAP_FAILED)
		fail_msg("mmap of the fill ring: %s", strerror(errno));
	view = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
		    (off_t)T_XDP_UMEM_PGOFF_FILL_RING);
	if (view == MAP_FAILED)
		fail_msg("second mmap of the fill ring: %s", strerror(errno));
	assert_ptr_not_equal(view, mem);

	/* Where the kernel says, not where uxdp assumes. */
	kprod = (volatile uint32_t *)(view + off.fr.producer);
	kaddrs = (const uint64_t *)(view + off.fr.desc);
	start = *kprod;
	assert_int_equal(start, 0);	/* a fresh ring */

	assert_int_equal(uxdp_ring_init_prod(&r, mem, T_LAYOUT_ENTRIES, NULL),
			 0);
	for (i = 0; i < T_LAYOUT_PUSH; i++)
		addrs[i] = (uint64_t)(i + 3) * 4096;
	assert_int_equal(uxdp_ring_prod_reserve(&r, T_LAYOUT_PUSH, &idx),
			 T_LAYOUT_PUSH);
	uxdp_ring_prod_write_addrs(&r, idx, addrs, T_LAYOUT_PUSH);
	assert_int_equal(*kprod, start);	/* not before submit */
	uxdp_ring_prod_submit(&r, T_LAYOUT_PUSH);
	assert_int_equal(*kprod, start + T_LAYOUT_PUSH);
	for (i = 0; i < T_LAYOUT_PUSH; i++)
		assert_int_equal(kaddrs[(start + i) % T_LAYOUT_ENTRIES],
				 addrs[i]);

	/* One more through the other verb: still counted exactly. */
	assert_int_equal(uxdp_ring_prod_reserve(&r, 1, &idx), 1);
	uxdp_ring_prod_write_addrs(&r, idx, addrs, 1);
	uxdp_ring_prod_publish(&r);
	assert_int_equal(*kprod, start + T_LAYOUT_PUSH + 1);
	/* The producer never wrote the consumer's word or the flags. */
	assert_int_equal(*(volatile uint32_t *)(view + off.fr.consumer), 0);
	assert_int_equal(*(volatile uint32_t *)(view + off.fr.flags), 0);

	assert_int_equal(munmap(view, len), 0);
	assert_int_equal(munmap(mem, len), 0);
	close(fd);
}

/* ---- fixtures and main --------------------------------------------------- */

static int t_setup(void **state)
{
	void *p;

	(void)state;
	p = mmap(NULL, T_AREA_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		printf("mmap of %llu bytes: %s\n", T_AREA_SIZE,
		       strerror(errno));
		return -1;
	}
	t_area = p;
	return 0;
}

static int t_teardown(void **state)
{
	(void)state;
	printf("umem differential against kernel %s: %u configs, %u "
	       "accepted, %u rejected, %u mismatches, %u skipped, %u where "
	       "the kernel follows an older rule\n", t_kr.release,
	       t_total.configs, t_total.accepted, t_total.rejected,
	       t_total.mismatches, t_total.skipped, t_total.older);
	t_krules_print_summary(&t_kr, stdout);
	munmap(t_area, T_AREA_SIZE);
	t_area = NULL;
	return 0;
}

static void t_require_af_xdp(void)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	int fd;

	if (geteuid() != 0)
		t_skip_program("not root: registering AF_XDP UMEMs needs root");
	fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0) {
		if (errno == EAFNOSUPPORT || errno == EPERM ||
		    errno == EACCES)
			t_skip_program("socket(AF_XDP): %s: no kernel AF_XDP "
				       "here", strerror(errno));
		fprintf(stderr, "socket(AF_XDP): %s\n", strerror(errno));
		exit(1);
	}
	close(fd);
	/*
	 * Pinned UMEM pages count against RLIMIT_MEMLOCK without
	 * CAP_IPC_LOCK. Best effort: a failure shows up as ENOBUFS skips.
	 */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_umem_reg_edges),
		cmocka_unit_test(test_umem_reg_arith),
		cmocka_unit_test(test_umem_reg_random),
		cmocka_unit_test(test_ring_sizes),
		cmocka_unit_test(test_ring_layout),
	};
	const char *v = getenv("UXDP_TEST_VERBOSE");
	int err;

	t_require_af_xdp();
	t_verbose = v && *v && *v != '0';
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Which form of each version-dependent rule this kernel follows. */
	t_krules_init(&t_kr);
	err = t_krules_probe_umem(&t_kr);
	if (err) {
		fprintf(stderr, "probing the kernel's UMEM rules: %s\n",
			strerror(-err));
		return 1;
	}
	printf("comparing against kernel %s\n", t_kr.release);
	t_krules_print(&t_kr, stdout);
	return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
