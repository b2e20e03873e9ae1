/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Classic pcap files, read and written whole by uxdp-bpf test: the
 * packets a program is tried on, and what it left of them. No libpcap:
 * the format is two fixed headers, and the tool must build without it.
 */
#ifndef UXDP_BPF_PCAPFILE_H
#define UXDP_BPF_PCAPFILE_H

#include <stdint.h>
#include <stdio.h>

struct pcap_pkt {
	uint32_t ts_sec, ts_frac;	/* as the file has them */
	uint32_t len;			/* captured bytes at data */
	uint32_t orig_len;
	const uint8_t *data;
};

struct pcap_in {
	uint8_t *buf;			/* the whole file */
	size_t size, at;
	int swapped;			/* written on the other endianness */
	int nsec;			/* ts_frac is nanoseconds */
	uint32_t linktype;
};

/*
 * Read all of @path. Returns 0, or -1 with @why filled: the open or read
 * error, not a pcap file (a pcapng one named as such), a bad header.
 */
int pcap_in_open(struct pcap_in *in, const char *path, char *why,
		 size_t len);
/* The next packet: 1, 0 at the end, -1 with @why (a truncated record). */
int pcap_in_next(struct pcap_in *in, struct pcap_pkt *pkt, char *why,
		 size_t len);
void pcap_in_close(struct pcap_in *in);

/* A new file at @path (Ethernet, microseconds, this host's order): the
 * stream or NULL with errno. */
FILE *pcap_out_open(const char *path);
/* One record; 0, or -1 with errno. */
int pcap_out_write(FILE *f, const struct pcap_pkt *pkt, int nsec);

#endif /* UXDP_BPF_PCAPFILE_H */
