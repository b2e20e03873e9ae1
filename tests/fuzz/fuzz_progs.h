/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The programs fuzz_progs.c defines and fuzz_prog.c expects, by name. The
 * long names sit at the loader's limits: 63 characters (the longest that
 * fits a 64-byte name buffer), 64, 85 ("uxdp_prog_" + 85 fills a 96-byte
 * symbol buffer) and 90.
 */
#ifndef UXDP_FUZZ_PROGS_H
#define UXDP_FUZZ_PROGS_H

#define FP_CAT_(a, b)	a##b
#define FP_CAT(a, b)	FP_CAT_(a, b)
#define FP_STR_(x)	#x
#define FP_STR(x)	FP_STR_(x)

#define FP_X10	xxxxxxxxxx
#define FP_X20	FP_CAT(FP_X10, FP_X10)
#define FP_X50	FP_CAT(FP_CAT(FP_X20, FP_X20), FP_X10)

#define FP_LONG63	FP_CAT(FP_CAT(long63_, FP_X50), xxxxxx)
#define FP_LONG64	FP_CAT(FP_CAT(long64_, FP_X50), xxxxxxx)
#define FP_LONG85	FP_CAT(FP_CAT(FP_CAT(long85_, FP_X50), \
				      FP_CAT(FP_X10, FP_X10)), xxxxxxxx)
#define FP_LONG90	FP_CAT(FP_CAT(FP_CAT(long90_, FP_X50), \
				      FP_CAT(FP_X10, FP_X10)), \
			       FP_CAT(FP_X10, xxx))

/* What each program's init does with its args. */
enum fp_kind {
	FP_PLAIN,	/* no init: always loads; returns UXDP_PASS */
	FP_TAG,		/* args NULL or "tag=...": loads; else EINVAL */
	FP_FAIL,	/* init refuses with ENOTSUP */
	FP_QUIET,	/* init refuses without setting errno */
	FP_NORUN,	/* a definition without a function: never loads */
	FP_NONE,	/* not defined by the modules */
};

/* The verdict FP_TAG returns; it writes args[4] (or '-') to data[0]. */
#define FP_TAG_VERDICT	3	/* UXDP_TX */

#endif /* UXDP_FUZZ_PROGS_H */
