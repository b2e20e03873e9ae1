/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The version-dependent kernel rules the differential tests compare: what
 * each is now and was before, the probe that tells which one the running
 * kernel follows, and whether the older form of the probed rules explains
 * a difference. See t_kernel_rules.h and docs/semantics.md.
 */
#define _GNU_SOURCE
#include "t_kernel_rules.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <uxdp/uxdp.h>

#define KR_XDP_UMEM_REG		4
#define KR_XDP_STATISTICS	7
#define KR_UMEM_META_FLAG	(1U << 2)	/* XDP_UMEM_TX_METADATA_LEN */
#define KR_TX_METADATA		(1U << 1)	/* XDP_TX_METADATA */
#define KR_PACKET_HEADROOM	256U		/* XDP_PACKET_HEADROOM */

const struct t_krule_info t_krule_info[T_KR_COUNT] = {
	[T_KR_UMEM_META_FLAG] = {
		"umem_meta_flag",
		"d5e726d9143c, after 6.9",
		"XDP_UMEM_TX_METADATA_LEN (0x4) is a UMEM flag",
		"0x4 is an unknown flag: EINVAL",
	},
	[T_KR_UMEM_META_NOFLAG] = {
		"umem_meta_noflag",
		"d5e726d9143c, after 6.9",
		"tx_metadata_len is read only with flag 0x4",
		"6.8-6.9: tx_metadata_len read without a flag (< 256, "
		"multiple of 8)",
	},
	[T_KR_UMEM_META_MIN] = {
		"umem_meta_min",
		"1bb30b181d9f, 2026-08; 6.18.y 642c6e73fce1",
		"with flag 0x4, tx_metadata_len 16..248, a multiple of 8",
		"with flag 0x4, tx_metadata_len 0..248, a multiple of 8",
	},
	[T_KR_UMEM_HEADROOM] = {
		"umem_headroom",
		"a315e022a72d, 2026-04; in 6.18.y",
		"headroom <= chunk_size - 256 - 320 - 128",
		"headroom < chunk_size - 256",
	},
	[T_KR_TX_ZERO_LEN] = {
		"tx_zero_len",
		"07428da9e25a, 6.6",
		"a zero-length TX descriptor is invalid",
		"a zero-length TX descriptor is sent",
	},
	[T_KR_TX_META_OPTION] = {
		"tx_meta_option",
		"48eb03dd2630, 6.8",
		"XDP_TX_METADATA is a TX option (no metadata area: sendto "
		"EINVAL, the descriptor stays)",
		"XDP_TX_METADATA is an unknown option: the descriptor is "
		"invalid",
	},
	[T_KR_TX_INVALID_COMPLETES] = {
		"tx_invalid_completes",
		"2026, with the TX descriptor reclaim work (72f2b4516faf, "
		"f49d99eaee7c); in 6.18.44",
		"copy mode completes an invalid TX descriptor's address",
		"copy mode consumes an invalid TX descriptor, no completion",
	},
	[T_KR_STATS_V2] = {
		"stats_v2",
		"8aa5a33578e9, 5.9",
		"XDP_STATISTICS has six counters (48 bytes)",
		"XDP_STATISTICS has three counters (24 bytes)",
	},
	[T_KR_BPF_MOD32_ZERO] = {
		"bpf_mod32_zero",
		"9b00f1b78809, 2021",
		"w %= 0 leaves w and zeroes the upper half (RFC 9669)",
		"w %= 0 skips the instruction: the upper half stays",
	},
	[T_KR_BPF_SDIV_TRAP] = {
		"bpf_sdiv_trap",
		"7dd34d7b7dcf, 6.12 (CVE-2024-49888); by release, not probed",
		"INT_MIN s/ -1 is INT_MIN, INT_MIN s% -1 is 0",
		"6.6-6.11: INT_MIN s/ -1 and s% -1 trap in the x86 JIT (an "
		"oops): such programs are not run there",
	},
	[T_KR_BPF_INTERP_SDIV32] = {
		"bpf_interp_sdiv32",
		"2026-04 (CVE-2026-31525)",
		"32-bit s/ and s% of INT_MIN are exact in the interpreter too",
		"the interpreter takes abs(INT_MIN) as INT_MIN sign-extended: "
		"wrong quotient and remainder (the JIT was right)",
	},
};

void t_krules_init(struct t_krules *k)
{
	struct utsname u;

	memset(k, 0, sizeof(*k));
	if (uname(&u))
		snprintf(k->release, sizeof(k->release), "(uname: %s)",
			 strerror(errno));
	else
		snprintf(k->release, sizeof(k->release), "%s", u.release);
}

void t_krules_set(struct t_krules *k, enum t_krule r, enum t_krule_state s)
{
	k->state[r] = s;
}

bool t_krules_older(const struct t_krules *k, enum t_krule r)
{
	return k->state[r] == T_KR_OLDER;
}

const char *t_krules_state_name(enum t_krule_state s)
{
	return s == T_KR_CURRENT ? "current" :
	       s == T_KR_OLDER ? "older" : "unprobed";
}

void t_krules_print(const struct t_krules *k, FILE *f)
{
	unsigned int r;

	for (r = 0; r < T_KR_COUNT; r++) {
		if (k->state[r] == T_KR_UNPROBED)
			continue;
		fprintf(f, "kernel %s: %s %s (%s: %s)\n", k->release,
			t_krule_info[r].name, t_krules_state_name(k->state[r]),
			t_krule_info[r].commit,
			k->state[r] == T_KR_OLDER ? t_krule_info[r].older :
						    t_krule_info[r].current);
	}
}

void t_krules_print_summary(const struct t_krules *k, FILE *f)
{
	unsigned int r;

	for (r = 0; r < T_KR_COUNT; r++)
		if (k->explained[r])
			fprintf(f, "kernel %s follows the older rule %s (%s) "
				"in %u of the differences\n", k->release,
				t_krule_info[r].name, t_krule_info[r].commit,
				k->explained[r]);
}

void t_krules_note(struct t_krules *k, unsigned int mask, const char *what)
{
	unsigned int r;

	for (r = 0; r < T_KR_COUNT; r++) {
		if (!(mask & 1U << r))
			continue;
		k->explained[r]++;
		if (!k->quiet)
			printf("kernel %s follows the older rule here (%s, %s: "
			       "%s): %s\n", k->release, t_krule_info[r].commit,
			       t_krule_info[r].name, t_krule_info[r].older,
			       what);
	}
}

/* ---- XDP_UMEM_REG -------------------------------------------------------- */

/*
 * The older form of each UMEM rule: whether it rejects @c, and how to move
 * @c into the current form's range with nothing else changed (only when
 * the older form accepts it). uxdp_umem_check() then answers for every
 * other rule.
 */
static bool umem_older_rejects(enum t_krule r, const struct t_umem_reg *c)
{
	bool meta = c->flags & KR_UMEM_META_FLAG;

	switch (r) {
	case T_KR_UMEM_META_FLAG:
		return meta;
	case T_KR_UMEM_META_NOFLAG:
		return !meta && (c->tx_metadata_len >= 256 ||
				 c->tx_metadata_len % 8);
	case T_KR_UMEM_META_MIN:
		return meta && (c->tx_metadata_len >= 256 ||
				c->tx_metadata_len % 8);
	case T_KR_UMEM_HEADROOM:
		/* u32 arithmetic, as the kernel's check */
		return c->headroom >= c->chunk_size - KR_PACKET_HEADROOM;
	default:
		return false;
	}
}

static bool umem_conform(enum t_krule r, struct t_umem_reg *c)
{
	switch (r) {
	case T_KR_UMEM_META_MIN:
		if (!(c->flags & KR_UMEM_META_FLAG) ||
		    c->tx_metadata_len >= UXDP_TX_METADATA_MIN_LEN)
			return false;
		c->tx_metadata_len = UXDP_TX_METADATA_MIN_LEN;
		return true;
	case T_KR_UMEM_HEADROOM:
		if ((uint64_t)c->headroom + UXDP_UMEM_CHUNK_RESERVED <=
		    c->chunk_size)
			return false;
		c->headroom = 0;
		return true;
	default:
		return false;
	}
}

bool t_krules_uxdp_umem_ok(const struct t_umem_reg *c)
{
	UXDP_DECLARE_OPTS(uxdp_umem_opts, o, .chunk_size = c->chunk_size,
			  .headroom = c->headroom, .flags = c->flags,
			  .tx_metadata_len = c->tx_metadata_len);

	return !uxdp_umem_check((const void *)(uintptr_t)c->addr, c->len, &o);
}

unsigned int t_krules_umem_explain(const struct t_krules *k,
				   const struct t_umem_reg *c, bool kernel_ok,
				   bool uxdp_ok)
{
	struct t_umem_reg moved = *c;
	unsigned int mask = 0, r;
	bool older_ok = true;

	if (kernel_ok == uxdp_ok)
		return 0;
	for (r = T_KR_UMEM_META_FLAG; r <= T_KR_UMEM_HEADROOM; r++) {
		if (!t_krules_older(k, r))
			continue;
		if (umem_older_rejects(r, c)) {
			older_ok = false;
			mask |= 1U << r;
		} else if (umem_conform(r, &moved)) {
			mask |= 1U << r;
		}
	}
	if (!mask)
		return 0;
	if (older_ok)
		older_ok = t_krules_uxdp_umem_ok(&moved);
	return older_ok == kernel_ok ? mask : 0;
}

/* 0, -EINVAL, or another -errno (not an answer). */
static int umem_reg(void *area, const struct t_umem_reg *c)
{
	struct {
		uint64_t addr, len;
		uint32_t chunk_size, headroom, flags, tx_metadata_len;
	} reg = {
		(uint64_t)(uintptr_t)area, c->len, c->chunk_size,
		c->headroom, c->flags, c->tx_metadata_len,
	};
	int fd, ret = 0;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_XDP, KR_XDP_UMEM_REG, &reg, sizeof(reg)))
		ret = -errno;
	close(fd);
	return ret;
}

/* Rule @r is current if the kernel answers @current_ok for @c. */
static void umem_probe(struct t_krules *k, void *area, enum t_krule r,
		       const struct t_umem_reg *c, bool current_ok)
{
	int ret = umem_reg(area, c);

	if (ret && ret != -EINVAL)
		k->state[r] = T_KR_UNPROBED;
	else
		k->state[r] = !ret == current_ok ? T_KR_CURRENT : T_KR_OLDER;
}

void t_krules_stats_answer(struct t_krules *k, unsigned int optlen)
{
	k->state[T_KR_STATS_V2] = optlen == 48 ? T_KR_CURRENT :
				  optlen == 24 ? T_KR_OLDER : T_KR_UNPROBED;
}

int t_krules_probe_umem(struct t_krules *k)
{
	const size_t len = 16 * 4096;
	struct t_umem_reg c = { .len = len, .chunk_size = 4096 };
	uint64_t st[6];
	socklen_t optlen = sizeof(st);
	void *area;
	int fd;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* An unbound socket has its counters too: all zero. */
	if (!getsockopt(fd, SOL_XDP, KR_XDP_STATISTICS, st, &optlen))
		t_krules_stats_answer(k, optlen);
	close(fd);

	area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	c.flags = KR_UMEM_META_FLAG;
	c.tx_metadata_len = 16;
	umem_probe(k, area, T_KR_UMEM_META_FLAG, &c, true);
	c.flags = 0;
	c.tx_metadata_len = 12;
	umem_probe(k, area, T_KR_UMEM_META_NOFLAG, &c, true);
	/* Only a kernel that knows the flag can say. */
	c.flags = KR_UMEM_META_FLAG;
	c.tx_metadata_len = 8;
	if (k->state[T_KR_UMEM_META_FLAG] == T_KR_CURRENT)
		umem_probe(k, area, T_KR_UMEM_META_MIN, &c, false);
	c.flags = 0;
	c.tx_metadata_len = 0;
	c.headroom = 4096 - 512;	/* between the two rules */
	umem_probe(k, area, T_KR_UMEM_HEADROOM, &c, false);
	munmap(area, len);
	return 0;
}

/* ---- TX descriptors (copy mode) ------------------------------------------ */

const struct t_tx_probe t_krules_tx_probes[] = {
	{ T_KR_TX_ZERO_LEN, T_KR_TX_PROBE_CHUNK, 0, 0 },
	/* past the UMEM's end: invalid under every rule */
	{ T_KR_TX_INVALID_COMPLETES,
	  (uint64_t)T_KR_TX_PROBE_CHUNK * (T_KR_TX_PROBE_CHUNKS + 1), 60, 0 },
	/* last: the current kernel leaves it at the head of the ring */
	{ T_KR_TX_META_OPTION, 3 * T_KR_TX_PROBE_CHUNK, 60, KR_TX_METADATA },
};
const unsigned int t_krules_tx_nprobes =
	sizeof(t_krules_tx_probes) / sizeof(t_krules_tx_probes[0]);

void t_krules_tx_probe_answer(struct t_krules *k, const struct t_tx_probe *p,
			      struct t_tx_verdict kv)
{
	enum t_krule_state s = T_KR_UNPROBED;

	switch (p->rule) {
	case T_KR_TX_ZERO_LEN:
		if (kv.invalid)
			s = T_KR_CURRENT;
		else if (kv.completed)
			s = T_KR_OLDER;
		break;
	case T_KR_TX_INVALID_COMPLETES:
		if (kv.invalid)
			s = kv.completed ? T_KR_CURRENT : T_KR_OLDER;
		break;
	case T_KR_TX_META_OPTION:
		if (kv.invalid)
			s = T_KR_OLDER;
		else if (kv.send_err == EINVAL)
			s = T_KR_CURRENT;
		break;
	default:
		break;
	}
	k->state[p->rule] = s;
}

unsigned int t_krules_tx_explain(const struct t_krules *k, uint32_t len,
				 uint32_t options, struct t_tx_verdict kv,
				 struct t_tx_verdict uv)
{
	struct t_tx_verdict want = uv;
	unsigned int mask = 0;

	if (kv.invalid == uv.invalid && kv.completed == uv.completed)
		return 0;
	/* Older rules first that decide validity, then completion. */
	if (t_krules_older(k, T_KR_TX_ZERO_LEN) && !len && want.invalid) {
		/* sent (or dropped by the device): completed either way */
		want.invalid = false;
		want.completed = true;
		mask |= 1U << T_KR_TX_ZERO_LEN;
	}
	if (t_krules_older(k, T_KR_TX_META_OPTION) &&
	    (options & KR_TX_METADATA) && !want.invalid) {
		want.invalid = true;
		want.completed = true;
		mask |= 1U << T_KR_TX_META_OPTION;
	}
	if (t_krules_older(k, T_KR_TX_INVALID_COMPLETES) && want.invalid &&
	    want.completed) {
		want.completed = false;
		mask |= 1U << T_KR_TX_INVALID_COMPLETES;
	}
	if (kv.invalid != want.invalid || kv.completed != want.completed)
		return 0;
	return mask;
}

/* ---- eBPF instructions (BPF_PROG_TEST_RUN) ------------------------------- */

const struct t_bpf_probe t_krules_bpf_probes[] = {
	/* w0 = 5 with the upper half set, w0 %= 0 */
	{ T_KR_BPF_MOD32_ZERO, BPF_ALU | BPF_MOD | BPF_X, 0,
	  0xffffffff00000005ULL, 0, 5, 0xffffffff00000005ULL },
	/* INT_MIN s/ 2: -2^30; abs() of it sign-extended gives +2^30 */
	{ T_KR_BPF_INTERP_SDIV32, BPF_ALU | BPF_DIV | BPF_X, 1,
	  0x80000000ULL, 2, 0xc0000000ULL, 0x40000000ULL },
};
const unsigned int t_krules_bpf_nprobes =
	sizeof(t_krules_bpf_probes) / sizeof(t_krules_bpf_probes[0]);

void t_krules_bpf_probe_answer(struct t_krules *k, const struct t_bpf_probe *p,
			       bool ran, uint64_t r0)
{
	enum t_krule_state s = T_KR_UNPROBED;

	if (ran && r0 == p->current)
		s = T_KR_CURRENT;
	else if (ran && r0 == p->older)
		s = T_KR_OLDER;
	k->state[p->rule] = s;
}

void t_krules_bpf_release_rules(struct t_krules *k)
{
	unsigned int major = 0, minor = 0;
	enum t_krule_state s = T_KR_UNPROBED;

	/* Before 6.6 there is no sdiv to trap (the verifier refuses it);
	 * a fixed 6.6-6.11 stable kernel is taken as older all the same:
	 * not running a program loses less than an oops. */
	if (sscanf(k->release, "%u.%u", &major, &minor) == 2) {
		unsigned int v = major * 1000 + minor;

		if (v >= 6012)
			s = T_KR_CURRENT;
		else if (v >= 6006)
			s = T_KR_OLDER;
	}
	k->state[T_KR_BPF_SDIV_TRAP] = s;
}

unsigned int t_krules_bpf_covers(const struct t_krules *k,
				 const struct bpf_insn *insns, uint32_t len)
{
	unsigned int mask = 0;
	uint32_t i;

	for (i = 0; i < len; i++) {
		uint8_t c = insns[i].code, cls = c & 0x07, op = c & 0xf0;
		bool alu = cls == BPF_ALU || cls == BPF_ALU64;
		bool sdivmod = alu && (op == BPF_DIV || op == BPF_MOD) &&
			       insns[i].off == 1;

		if (c == (BPF_LD | BPF_IMM | BPF_DW))
			i++;	/* a lddw's second half */
		else if (cls == BPF_ALU && op == BPF_MOD &&
			 t_krules_older(k, T_KR_BPF_MOD32_ZERO))
			mask |= 1U << T_KR_BPF_MOD32_ZERO;
		if (sdivmod && t_krules_older(k, T_KR_BPF_SDIV_TRAP))
			mask |= 1U << T_KR_BPF_SDIV_TRAP;
		if (sdivmod && cls == BPF_ALU &&
		    t_krules_older(k, T_KR_BPF_INTERP_SDIV32))
			mask |= 1U << T_KR_BPF_INTERP_SDIV32;
	}
	return mask;
}
