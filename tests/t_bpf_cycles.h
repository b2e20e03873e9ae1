/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether a fixed-up code can loop without spending its budget, for the
 * tests and the fuzzers of the safety pass: every cycle of its graph must
 * pass through a budget instruction (fixup.c puts one before the source of
 * each back edge check.c's mark_back_edges() finds). With the budget
 * instructions' edges out cut, a depth-first walk must find no edge back
 * to an instruction on its stack. Local calls are an edge to the next
 * instruction: their depth, not the budget, bounds them.
 */
#ifndef UXDP_T_BPF_CYCLES_H
#define UXDP_T_BPF_CYCLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../src/bpf/bpf_internal.h"

/* 0: none; 1: the edge *@from -> *@to closes a cycle with no budget
 * step; -1: out of memory. */
static inline int t_bpf_unbudgeted_cycle(const struct uxdp_bpf_code *c,
					 uint32_t *from, uint32_t *to)
{
	uint8_t *on = calloc(c->len, 1), *nx = calloc(c->len, 1);
	uint32_t *stk = malloc(c->len * sizeof(*stk)), r, sp;
	int ret = 0;

	if (!on || !nx || !stk) {
		ret = -1;
		goto out;
	}
	for (r = 0; r < c->len && !ret; r++) {
		if (on[r])
			continue;
		sp = 0;
		stk[sp++] = r;
		on[r] = 1;
		while (sp) {
			uint32_t i = stk[sp - 1], next[2], n = 0, t;
			const struct bpf_insn *in = &c->insns[i];
			uint8_t cls = BPF_CLASS(in->code);

			if (in->code == UXDP_BPF_OP_BUDGET ||
			    in->code == (BPF_JMP | BPF_EXIT)) {
				n = 0;
			} else if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
				next[n++] = i + 2;
			} else if ((cls == BPF_JMP || cls == BPF_JMP32) &&
				   BPF_OP(in->code) != BPF_CALL &&
				   in->code != UXDP_BPF_OP_CHECK &&
				   in->code != UXDP_BPF_OP_TAIL_CALL) {
				bool j32 = in->code == (BPF_JMP32 | BPF_JA);

				next[n++] = (uint32_t)((int64_t)i + 1 +
						       (j32 ? in->imm :
							in->off));
				if (BPF_OP(in->code) != BPF_JA)
					next[n++] = i + 1;
			} else {
				next[n++] = i + 1;
			}
			if (nx[i] >= n) {
				on[i] = 2;
				sp--;
				continue;
			}
			t = next[nx[i]++];
			if (t >= c->len)
				continue;
			if (on[t] == 1) {
				*from = i;
				*to = t;
				ret = 1;
				break;
			}
			if (!on[t]) {
				on[t] = 1;
				stk[sp++] = t;
			}
		}
	}
out:
	free(on);
	free(nx);
	free(stk);
	return ret;
}

#endif
