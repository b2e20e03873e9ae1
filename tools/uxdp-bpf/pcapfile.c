/* SPDX-License-Identifier: BSD-2-Clause */
/* Classic pcap files (pcapfile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcapfile.h"

#define PCAP_MAGIC_US	0xa1b2c3d4u
#define PCAP_MAGIC_NS	0xa1b23c4du
#define PCAPNG_MAGIC	0x0a0d0d0au
#define PCAP_HDR_LEN	24
#define PCAP_REC_LEN	16
#define LINKTYPE_ETHERNET 1
/* No record is larger (libpcap's own limit for a snapshot). */
#define PCAP_REC_MAX	262144u
/* A file larger than this is not a test's packets. */
#define PCAP_FILE_MAX	(256u << 20)

static uint32_t get32(const struct pcap_in *in, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return in->swapped ? __builtin_bswap32(v) : v;
}

int pcap_in_open(struct pcap_in *in, const char *path, char *why,
		 size_t len)
{
	FILE *f = fopen(path, "rb");
	uint32_t magic;
	size_t cap = 0;

	memset(in, 0, sizeof(*in));
	if (!f) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (in->size == cap) {
			uint8_t *b;

			cap = cap ? cap * 2 : 65536;
			b = cap <= PCAP_FILE_MAX ? realloc(in->buf, cap) : NULL;
			if (!b) {
				snprintf(why, len, "%s: %s", path, cap >
					 PCAP_FILE_MAX ? "larger than 256 MiB" :
					 strerror(ENOMEM));
				goto fail;
			}
			in->buf = b;
		}
		n = fread(in->buf + in->size, 1, cap - in->size, f);
		in->size += n;
		if (n)
			continue;
		if (ferror(f)) {
			snprintf(why, len, "%s: %s", path, strerror(errno ?
				 errno : EIO));
			goto fail;
		}
		break;
	}
	fclose(f);
	f = NULL;
	if (in->size < PCAP_HDR_LEN) {
		snprintf(why, len, "%s: not a pcap file (%zu bytes, shorter "
			 "than its header)", path, in->size);
		goto fail;
	}
	memcpy(&magic, in->buf, sizeof(magic));
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		in->nsec = magic == PCAP_MAGIC_NS;
	} else if (__builtin_bswap32(magic) == PCAP_MAGIC_US ||
		   __builtin_bswap32(magic) == PCAP_MAGIC_NS) {
		in->swapped = 1;
		in->nsec = __builtin_bswap32(magic) == PCAP_MAGIC_NS;
	} else if (magic == PCAPNG_MAGIC) {
		snprintf(why, len, "%s: a pcapng file: only classic pcap is "
			 "read (editcap -F pcap converts)", path);
		goto fail;
	} else {
		snprintf(why, len, "%s: not a pcap file (magic 0x%08x)", path,
			 magic);
		goto fail;
	}
	in->linktype = get32(in, in->buf + 20) & 0x0fffffff;
	if (in->linktype != LINKTYPE_ETHERNET) {
		snprintf(why, len, "%s: link type %u: only Ethernet (1) "
			 "frames are XDP's", path, in->linktype);
		goto fail;
	}
	in->at = PCAP_HDR_LEN;
	return 0;
fail:
	if (f)
		fclose(f);
	pcap_in_close(in);
	return -1;
}

int pcap_in_next(struct pcap_in *in, struct pcap_pkt *pkt, char *why,
		 size_t len)
{
	const uint8_t *r = in->buf + in->at;
	size_t left = in->size - in->at;

	if (!left)
		return 0;
	if (left < PCAP_REC_LEN) {
		snprintf(why, len, "a truncated record header at offset %zu",
			 in->at);
		return -1;
	}
	pkt->ts_sec = get32(in, r);
	pkt->ts_frac = get32(in, r + 4);
	pkt->len = get32(in, r + 8);
	pkt->orig_len = get32(in, r + 12);
	if (pkt->len > PCAP_REC_MAX || pkt->len > left - PCAP_REC_LEN) {
		snprintf(why, len, "a record of %u bytes at offset %zu, with "
			 "%zu left in the file", pkt->len, in->at,
			 left - PCAP_REC_LEN);
		return -1;
	}
	pkt->data = r + PCAP_REC_LEN;
	in->at += PCAP_REC_LEN + pkt->len;
	return 1;
}

void pcap_in_close(struct pcap_in *in)
{
	free(in->buf);
	memset(in, 0, sizeof(*in));
}

FILE *pcap_out_open(const char *path)
{
	/* In this host's order, which the magic tells a reader. */
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t zone;
		uint32_t sigfigs, snaplen, linktype;
	} h = { PCAP_MAGIC_US, 2, 4, 0, 0, PCAP_REC_MAX, LINKTYPE_ETHERNET };
	FILE *f = fopen(path, "wb");

	_Static_assert(sizeof(h) == PCAP_HDR_LEN, "the pcap header");
	if (f && fwrite(&h, sizeof(h), 1, f) != 1) {
		int err = errno ? errno : EIO;

		fclose(f);
		errno = err;
		return NULL;
	}
	return f;
}

int pcap_out_write(FILE *f, const struct pcap_pkt *pkt, int nsec)
{
	uint32_t r[4] = { pkt->ts_sec, nsec ? pkt->ts_frac / 1000 :
			  pkt->ts_frac, pkt->len, pkt->orig_len };

	if (fwrite(r, sizeof(r), 1, f) != 1 ||
	    (pkt->len && fwrite(pkt->data, pkt->len, 1, f) != 1)) {
		errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}
