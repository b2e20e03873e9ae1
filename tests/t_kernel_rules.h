/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel rules the differential tests compare that depend on the
 * kernel's version (tests t_ prefix, no cmocka). uxdp follows the current
 * form of each; a test probes the running kernel for the form it follows,
 * and a difference between the kernel and uxdp that the older form of a
 * probed rule accounts for is reported ("kernel X follows the older rule
 * here (commit)") instead of failed. Every other difference still fails.
 *
 * The probes are questions a test asks the kernel (a UMEM registration, a
 * getsockopt, one TX descriptor through a socket of the test's own); the
 * answers go in through t_krules_set() and the t_krules_*_probe_*()
 * helpers, so the classification below runs, and is unit tested
 * (test_kernel_rules), without any kernel.
 */
#ifndef UXDP_T_KERNEL_RULES_H
#define UXDP_T_KERNEL_RULES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* The installed headers may predate AF_XDP. */
#ifndef AF_XDP
#define AF_XDP		44
#endif
#ifndef SOL_XDP
#define SOL_XDP		283
#endif

enum t_krule {
	/* XDP_UMEM_REG */
	T_KR_UMEM_META_FLAG,	/* XDP_UMEM_TX_METADATA_LEN is known */
	T_KR_UMEM_META_NOFLAG,	/* tx_metadata_len ignored without it */
	T_KR_UMEM_META_MIN,	/* with it, tx_metadata_len >= 16 */
	T_KR_UMEM_HEADROOM,	/* headroom <= chunk - 256 - 320 - 128 */
	/* TX descriptors, copy mode */
	T_KR_TX_ZERO_LEN,	/* a zero-length descriptor is invalid */
	T_KR_TX_META_OPTION,	/* the TX_METADATA option bit is known */
	T_KR_TX_INVALID_COMPLETES, /* invalid descriptors are completed */
	/* XDP_STATISTICS */
	T_KR_STATS_V2,		/* six counters, 48 bytes */
	/* eBPF instructions, run by BPF_PROG_TEST_RUN */
	T_KR_BPF_MOD32_ZERO,	/* w %= 0 zero-extends dst */
	T_KR_BPF_SDIV_TRAP,	/* INT_MIN s/ -1 does not trap (x86 JIT) */
	T_KR_BPF_INTERP_SDIV32,	/* the interpreter's s32 / and % of INT_MIN */
	T_KR_COUNT
};

enum t_krule_state {
	T_KR_UNPROBED,		/* not asked, or no clear answer */
	T_KR_CURRENT,		/* follows the rule uxdp follows */
	T_KR_OLDER,		/* follows the rule's older form */
};

struct t_krule_info {
	const char *name;
	const char *commit;	/* the kernel commit that made it current */
	const char *current;	/* the rule, as uxdp follows it */
	const char *older;	/* its older form */
};

extern const struct t_krule_info t_krule_info[T_KR_COUNT];

struct t_krules {
	char release[65];			/* uname -r */
	enum t_krule_state state[T_KR_COUNT];
	unsigned int explained[T_KR_COUNT];	/* differences it explained */
	bool quiet;				/* no line per explained one */
};

/* Fill in the release; every rule unprobed. */
void t_krules_init(struct t_krules *k);
void t_krules_set(struct t_krules *k, enum t_krule r, enum t_krule_state s);
bool t_krules_older(const struct t_krules *k, enum t_krule r);
const char *t_krules_state_name(enum t_krule_state s);

/* "kernel <release>: <rule> current|older|unprobed (<commit>)", each rule. */
void t_krules_print(const struct t_krules *k, FILE *f);
/* Per rule, how many differences its older form explained. */
void t_krules_print_summary(const struct t_krules *k, FILE *f);

/*
 * Count, and print "kernel <release> follows the older rule here (<commit>):
 * <what>" for every rule in @mask (bits 1U << enum t_krule).
 */
void t_krules_note(struct t_krules *k, unsigned int mask, const char *what);

/* ---- XDP_UMEM_REG -------------------------------------------------------- */

struct t_umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;		/* the kernel's XDP_UMEM_* bits */
	uint32_t tx_metadata_len;
};

/*
 * Ask the running kernel (setsockopt(XDP_UMEM_REG) on fresh AF_XDP sockets,
 * an area of its own) which form of each UMEM rule it follows, and the
 * XDP_STATISTICS size. Returns 0, or -errno if the kernel could not be
 * asked at all (no AF_XDP, no memory); a probe with an unclear answer
 * leaves its rule unprobed.
 */
int t_krules_probe_umem(struct t_krules *k);

/*
 * A configuration on which the kernel and uxdp disagree (kernel_ok !=
 * uxdp_ok): the mask of probed-older rules whose older form gives the
 * kernel's answer (every other rule as uxdp has it: uxdp_umem_check()
 * decides those), or 0 when no such explanation exists. 0 is a mismatch.
 */
unsigned int t_krules_umem_explain(const struct t_krules *k,
				   const struct t_umem_reg *c, bool kernel_ok,
				   bool uxdp_ok);

/* uxdp's answer for @c: uxdp_umem_check() with @c's address as a number. */
bool t_krules_uxdp_umem_ok(const struct t_umem_reg *c);

/* ---- TX descriptors (copy mode) ------------------------------------------ */

/* What one TX descriptor came to: counted invalid, address completed. */
struct t_tx_verdict {
	bool invalid;
	bool completed;
	int send_err;		/* errno of the kick, 0 */
};

/*
 * The descriptors that probe the TX rules, for an aligned UMEM of
 * T_KR_TX_PROBE_CHUNKS chunks of T_KR_TX_PROBE_CHUNK bytes without a
 * metadata length, each a 60-byte frame at its address: send them in this
 * order, one at a time, on one copy-mode socket, and close it after the last
 * (the current kernel leaves that one at the head of the TX ring).
 */
#define T_KR_TX_PROBE_CHUNK	4096U
#define T_KR_TX_PROBE_CHUNKS	16U

struct t_tx_probe {
	enum t_krule rule;
	uint64_t addr;
	uint32_t len;
	uint32_t options;
};

extern const struct t_tx_probe t_krules_tx_probes[];
extern const unsigned int t_krules_tx_nprobes;

/* What the kernel did with probe @p: sets its rule's state. */
void t_krules_tx_probe_answer(struct t_krules *k, const struct t_tx_probe *p,
			      struct t_tx_verdict kv);

/*
 * A descriptor (@len, @options) on which the kernel and uxdp disagree: the
 * mask of probed-older rules whose older form turns uxdp's verdict into
 * the kernel's, or 0 (a mismatch). Only the verdict is compared here, not
 * the kick's errno.
 */
unsigned int t_krules_tx_explain(const struct t_krules *k, uint32_t len,
				 uint32_t options, struct t_tx_verdict kv,
				 struct t_tx_verdict uv);

/* ---- XDP_STATISTICS ------------------------------------------------------ */

/* The length getsockopt(XDP_STATISTICS) gave back for a 48-byte buffer. */
void t_krules_stats_answer(struct t_krules *k, unsigned int optlen);

/* ---- eBPF instructions (BPF_PROG_TEST_RUN) ------------------------------- */

struct bpf_insn;

/*
 * A probe of an instruction rule: r0 = a; r1 = b (two lddw); the ALU
 * instruction @code (BPF_ALU or BPF_ALU64 | op | BPF_X) with @off (1:
 * signed) on r0, r1; exit. The r0 each form of the rule gives. Run on the
 * kernel as the conformance programs are (the whole r0 read back).
 */
struct t_bpf_probe {
	enum t_krule rule;
	uint8_t code;
	int16_t off;
	uint64_t a, b;
	uint64_t current, older;
};

extern const struct t_bpf_probe t_krules_bpf_probes[];
extern const unsigned int t_krules_bpf_nprobes;

/* What the kernel did with probe @p: refused it (@ran false), or its r0. */
void t_krules_bpf_probe_answer(struct t_krules *k, const struct t_bpf_probe *p,
			       bool ran, uint64_t r0);

/*
 * The rules that cannot be probed without harm (T_KR_BPF_SDIV_TRAP: the
 * older kernel oopses), decided from k->release instead.
 */
void t_krules_bpf_release_rules(struct t_krules *k);

/*
 * The mask of rules probed (or decided) older that an instruction of
 * @insns falls under. A difference of such a program is explained by them;
 * one under T_KR_BPF_SDIV_TRAP must not be run in the kernel at all.
 */
unsigned int t_krules_bpf_covers(const struct t_krules *k,
				 const struct bpf_insn *insns, uint32_t len);

#endif /* UXDP_T_KERNEL_RULES_H */
