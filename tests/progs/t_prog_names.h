/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Program names at and past uxdp_prog_load()'s 63-character limit, shared by
 * the module that defines them (test_progs.c) and the test that asks for
 * them (test_xdp.c). Identifiers, not strings: UXDP_PROG_DEFINE pastes them.
 */
#ifndef UXDP_T_PROG_NAMES_H
#define UXDP_T_PROG_NAMES_H

/* 63 characters: the longest name that loads. */
#define T_PROG_NAME63 \
	max_name_abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd
/* 64 characters: used to load, reporting its name cut to 63. */
#define T_PROG_NAME64 \
	long_name_abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd
/*
 * 85 characters: what a longer name used to be cut to ("uxdp_prog_" plus
 * 85 filled a 96-byte symbol buffer), loading this program instead.
 */
#define T_PROG_NAME85 \
	collide_01234567890123456789012345678901234567890123456789012345678901234567890123456

#define T_STR_(x)	#x
#define T_STR(x)	T_STR_(x)

#endif /* UXDP_T_PROG_NAMES_H */
