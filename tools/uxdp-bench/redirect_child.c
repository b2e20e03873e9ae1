/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench-redirect[-thunk] BULK PACKETS: run the redirect loop once and
 * print "ns_per_pkt calls_per_pkt packets". `uxdp-bench redirect` runs the
 * normal and the thunk builds of this program in turn; it is not meant to
 * be run by hand (but can be).
 */
#include <stdio.h>
#include <stdlib.h>

#include <uxdp/uxdp.h>

#include "redirect_loop.h"

int main(int argc, char **argv)
{
	struct redirect_result r;
	unsigned long bulk;
	unsigned long long n;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BULK PACKETS\n", argv[0]);
		return 2;
	}
	bulk = strtoul(argv[1], &end, 10);
	if (*end || bulk < 1 || bulk > UXDP_BULK_SIZE) {
		fprintf(stderr, "%s: BULK must be 1..%d\n", argv[0],
			UXDP_BULK_SIZE);
		return 2;
	}
	/*
	 * Any count works: the loop polls whole budgets until it has sent at
	 * least @n and divides by what it did send. uxdp-bench's warm-up runs
	 * ask for a sixteenth of -n, so a floor here above 1 made small -n
	 * values fail.
	 */
	n = strtoull(argv[2], &end, 10);
	if (*end || argv[2][0] < '0' || argv[2][0] > '9' || n < 1) {
		fprintf(stderr, "%s: PACKETS must be a number >= 1\n",
			argv[0]);
		return 2;
	}
	if (redirect_loop_run((uint32_t)bulk, n, &r)) {
		fprintf(stderr, "%s: %s\n", argv[0], uxdp_errmsg());
		return 1;
	}
	printf("%.4f %.4f %llu\n", r.ns_per_pkt, r.calls_per_pkt,
	       (unsigned long long)r.packets);
	return 0;
}
