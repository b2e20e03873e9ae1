/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz the nic model's RSS: the packet parser that picks a queue for every
 * frame a loop peer sends (uxdp_nic_rss_queue, the path nic_wire_put takes),
 * and the Toeplitz function itself (uxdp_nic_toeplitz).
 *
 * Input: the first byte's low bit picks the mode.
 *   0: the rest is a frame, any bytes (at most 2048). An independent parse
 *      here (IPv4: version, IHL >= 5 within the frame, the fragment bits,
 *      TCP/UDP ports within the frame; IPv6: version, next header TCP/UDP
 *      right after the fixed header, ports within the frame) gives the RSS
 *      input; the library's hash and queue must equal a bit-by-bit Toeplitz
 *      over that input with the default key, looked up in the default table
 *      (hash & 127, modulo the queue count).
 *   1: a 40-byte key, a key length byte, an input length byte, then input
 *      bytes: uxdp_nic_toeplitz must equal the bit-by-bit model, and be 0
 *      when the key is shorter than the input plus 4.
 * Every read of the library stays within the frame (ASan: the frame is a
 * heap copy of exactly its length).
 */
#include <errno.h>
#include <stdbool.h>

#include <uxdp/uxdp.h>

#include "fuzz.h"
/* Microsoft's verification key, the nic's default: t_ms_key. */
#include "../t_rss_key.h"

#define NQ	4

static struct uxdp_dev *nic;


/* The definition, one bit at a time: for every set input bit i (most
 * significant first), XOR in key bits i .. i+31. */
static uint32_t model_toeplitz(const uint8_t *key, size_t key_len,
			       const uint8_t *in, size_t len)
{
	uint32_t h = 0;
	size_t i, k;

	if (key_len < len + 4)
		return 0;
	for (i = 0; i < len * 8; i++) {
		uint32_t w = 0;

		if (!(in[i / 8] >> (7 - i % 8) & 1))
			continue;
		for (k = 0; k < 32; k++) {
			size_t bit = i + k;

			w = w << 1 | (key[bit / 8] >> (7 - bit % 8) & 1);
		}
		h ^= w;
	}
	return h;
}

/* The RSS input of @f, as nic.h documents it; its length (0: hash 0). */
static size_t model_input(const uint8_t *f, size_t len, uint8_t in[36])
{
	const uint8_t *ip = f + 14;

	if (len < 14)
		return 0;
	if (f[12] == 0x08 && f[13] == 0x00) {
		size_t ihl;
		bool frag;

		if (len < 14 + 20 || ip[0] >> 4 != 4)
			return 0;
		ihl = (size_t)(ip[0] & 15) * 4;
		if (ihl < 20 || 14 + ihl > len)
			return 0;
		memcpy(in, ip + 12, 8);
		frag = (ip[6] & 0x3f) || ip[7];
		if ((ip[9] == 6 || ip[9] == 17) && !frag &&
		    14 + ihl + 4 <= len) {
			memcpy(in + 8, ip + ihl, 4);
			return 12;
		}
		return 8;
	}
	if (f[12] == 0x86 && f[13] == 0xdd) {
		if (len < 14 + 40 || ip[0] >> 4 != 6)
			return 0;
		memcpy(in, ip + 8, 32);
		if ((ip[6] == 6 || ip[6] == 17) && 14 + 40 + 4 <= len) {
			memcpy(in + 32, ip + 40, 4);
			return 36;
		}
		return 32;
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	UXDP_DECLARE_OPTS(uxdp_nic_opts, o, .queues = NQ,
			  .flags = UXDP_NIC_F_NO_GEN, .frames = 64);

	(void)argc;
	(void)argv;
	uxdp_set_print(NULL);
	nic = uxdp_nic_create("fzrss", &o);
	FZ_CHECK(nic, "nic: %s", uxdp_errmsg());
	return 0;
}

static void fuzz_frame(const uint8_t *data, size_t size)
{
	uint8_t *f, in[36];
	uint32_t h = 1, want;
	size_t n;
	int q;

	if (size > 2048)
		size = 2048;
	f = malloc(size ? size : 1);
	FZ_CHECK(f, "out of memory");
	memcpy(f, data, size);
	n = model_input(f, size, in);
	want = n ? model_toeplitz(t_ms_key, sizeof(t_ms_key), in, n) : 0;
	q = uxdp_nic_rss_queue(nic, f, (uint32_t)size, &h);
	FZ_CHECK(h == want, "hash 0x%08x, model 0x%08x (input %zu bytes)", h,
		 want, n);
	FZ_CHECK(q == (int)((want & 127) % NQ), "queue %d for hash 0x%08x", q,
		 want);
	free(f);
}

static void fuzz_function(struct fz *z)
{
	uint8_t key[40], in[64];
	size_t key_len, len, i;
	uint32_t h;

	for (i = 0; i < sizeof(key); i++)
		key[i] = fz_u8(z);
	key_len = fz_pick(z, 41);
	len = fz_pick(z, 41);
	for (i = 0; i < len; i++)
		in[i] = fz_u8(z);
	h = uxdp_nic_toeplitz(key, key_len, in, len);
	FZ_CHECK(h == model_toeplitz(key, key_len, in, len),
		 "toeplitz 0x%08x, model 0x%08x (key %zu, input %zu)", h,
		 model_toeplitz(key, key_len, in, len), key_len, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz z = { data, size };

	if (!size)
		return 0;
	if (data[0] & 1) {
		fz_u8(&z);
		fuzz_function(&z);
	} else {
		fuzz_frame(data + 1, size - 1);
	}
	return 0;
}
