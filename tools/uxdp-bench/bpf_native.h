/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp-bench bpf: the benchmark programs' logic as native uxdp programs
 * (C against uxdp's API, compiled with the rest of the tool): the ceiling
 * the eBPF engines are compared with. Each does what its eBPF object in
 * tests/bpf/ (or tools/uxdp-bench/bpf/) does, with its maps as C arrays.
 */
#ifndef UXDP_BENCH_BPF_NATIVE_H
#define UXDP_BENCH_BPF_NATIVE_H

#include <uxdp/uxdp.h>

/* The native program of benchmark program @name ("drop", "count", ...),
 * NULL if there is none. */
uxdp_prog_fn bpf_native_fn(const char *name);

#endif /* UXDP_BENCH_BPF_NATIVE_H */
