/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The benchmark programs in C (see bpf_native.h). Written as a user would
 * write them against uxdp's API, not tuned beyond that: the same checks
 * (every header against data_end), the same map updates (an atomic add
 * where the eBPF program has one), the same verdicts. The arrays live in
 * this file; per-CPU values are per uxdp thread index, as the bpf layer's
 * PERCPU_ARRAY is.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <stdint.h>
#include <string.h>

#include <uxdp/driver.h>
#include <uxdp/uxdp.h>

#include "bpf_native.h"

/* noinline and non-static (as the eBPF subprograms of calls.bpf.c). */
#define NATIVE_SUB	__attribute__((noinline, used))

static uint64_t count_counters[2];
static uint64_t count_per_cpu[UXDP_MAX_THREADS];
static uint64_t parse_port_count[65536];
static uint64_t loop_sum;
/* rodata.bpf.c's globals: .rodata (configuration), .rodata.cfg, .data,
 * .bss. volatile as the eBPF program's const volatile: read every run. */
static const volatile uint32_t rodata_verdict = UXDP_PASS;
static const volatile uint8_t rodata_mark = 0xab;
static const volatile uint32_t rodata_extra = 7;
static uint64_t rodata_step = 1;
static uint64_t rodata_runs;

static uint32_t native_drop(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_DROP;
}

static uint32_t native_pass(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_PASS;
}

static uint32_t native_tx(struct uxdp_buff *ctx, void *priv)
{
	(void)ctx;
	(void)priv;
	return UXDP_TX;
}

static uint32_t native_count(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
	__atomic_fetch_add(&count_counters[0], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&count_counters[1], uxdp_buff_len(ctx),
			   __ATOMIC_RELAXED);
	count_per_cpu[uxdp_thread_index() % UXDP_MAX_THREADS]++;
	return UXDP_PASS;
}

static uint32_t native_parse_udp(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *data = ctx->data, *end = ctx->data_end;
	const struct ethhdr *eth = (const void *)data;
	const struct iphdr *ip;
	const struct udphdr *udp;

	(void)priv;
	if (data + sizeof(*eth) > end || eth->h_proto != htons(ETH_P_IP))
		return UXDP_PASS;
	ip = (const void *)(eth + 1);
	if ((const unsigned char *)(ip + 1) > end || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return UXDP_PASS;
	udp = (const void *)(ip + 1);
	if ((const unsigned char *)(udp + 1) > end)
		return UXDP_PASS;
	__atomic_fetch_add(&parse_port_count[ntohs(udp->dest)], 1,
			   __ATOMIC_RELAXED);
	return UXDP_DROP;
}

static uint32_t native_macswap(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *d = ctx->data, t[ETH_ALEN];

	(void)priv;
	if (d + ETH_HLEN > (unsigned char *)ctx->data_end)
		return UXDP_DROP;
	memcpy(t, d, ETH_ALEN);
	memcpy(d, d + ETH_ALEN, ETH_ALEN);
	memcpy(d + ETH_ALEN, t, ETH_ALEN);
	return UXDP_TX;
}

static uint32_t native_loop(struct uxdp_buff *ctx, void *priv)
{
	const unsigned char *data = ctx->data, *end = ctx->data_end;
	uint64_t s = 0;
	int i;

	(void)priv;
	/* As the eBPF program: not unrolled, not vectorised. */
#pragma GCC unroll 1
	for (i = 0; i < 64; i++) {
		if (data + i + 1 > end)
			break;
		s += data[i];
		__asm__ volatile("" : "+r"(s));
	}
	loop_sum = s;
	return UXDP_PASS;
}

NATIVE_SUB int bench_native_pkt_len(const struct uxdp_buff *ctx);
NATIVE_SUB int bench_native_pkt_len(const struct uxdp_buff *ctx)
{
	return (int)uxdp_buff_len(ctx);
}

NATIVE_SUB int bench_native_odd(uint32_t v);
NATIVE_SUB int bench_native_odd(uint32_t v)
{
	return v & 1;
}

NATIVE_SUB int bench_native_classify(const struct uxdp_buff *ctx);
NATIVE_SUB int bench_native_classify(const struct uxdp_buff *ctx)
{
	const unsigned char *data = ctx->data;

	if (bench_native_pkt_len(ctx) < 60 ||
	    data + 1 > (const unsigned char *)ctx->data_end)
		return UXDP_DROP;
	return bench_native_odd(data[0]) ? UXDP_TX : UXDP_PASS;
}

static uint32_t native_calls(struct uxdp_buff *ctx, void *priv)
{
	(void)priv;
	return (uint32_t)bench_native_classify(ctx);
}

static uint32_t native_rodata(struct uxdp_buff *ctx, void *priv)
{
	unsigned char *data = ctx->data;

	(void)priv;
	rodata_runs += rodata_step + rodata_extra;
	if (data + 1 <= (unsigned char *)ctx->data_end)
		data[0] = rodata_mark;
	return rodata_verdict;
}

static const struct {
	const char *name;
	uxdp_prog_fn fn;
} natives[] = {
	{ "drop", native_drop },
	{ "pass", native_pass },
	{ "tx", native_tx },
	{ "count", native_count },
	{ "parse_udp", native_parse_udp },
	{ "macswap", native_macswap },
	{ "loop", native_loop },
	{ "calls", native_calls },
	{ "rodata", native_rodata },
};

uxdp_prog_fn bpf_native_fn(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(natives) / sizeof(natives[0]); i++)
		if (!strcmp(natives[i].name, name))
			return natives[i].fn;
	return NULL;
}
