/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp's stand-in for libbpf's <bpf/bpf.h>: the one for <bpf/libbpf.h>
 * in this directory includes both of libbpf's headers (when installed)
 * before it redirects the calls it refuses, so it serves for this one too.
 */
#ifndef UXDP_COMPAT_BPF_BPF_H
#define UXDP_COMPAT_BPF_BPF_H

#include <bpf/libbpf.h>

#endif /* UXDP_COMPAT_BPF_BPF_H */
