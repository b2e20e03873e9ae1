/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_bpf_elf: an eBPF object file, any bytes: random ones, and (from the
 * corpus: objects clang built from tests/bpf/) mutated ones, with their
 * ELF headers, sections, symbols, relocations, BTF, .BTF.ext CO-RE
 * records, maps and code cut, shifted and overwritten.
 *
 * The input is the object itself, opened from memory
 * (uxdp_bpf_object_open_mem). When it opens: every program and map is
 * walked, each global data area written (its initial value, as a skeleton
 * would), the object loaded, and each program it loaded run once on a
 * 64-byte packet (uxdp_bpf_prog_test_run); then closed.
 *
 * Checks:
 *  - a refused open or load returns NULL/-errno with an error text, never
 *    a crash, a hang or a leak (ASan, UBSan, LeakSanitizer);
 *  - an opened object has a name, and every program and map a name (and a
 *    program a section); a global data area's size is the map's
 *    value_size;
 *  - a loaded program runs to a verdict or a fault, never past its
 *    memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <uxdp/bpf.h>
#include <uxdp/uxdp.h>

#include "fuzz.h"

static int quiet(enum uxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Notes on skipped programs and left-out maps, and trace_printk:
	 * not what this checks. */
	uxdp_set_print(quiet);
	return 0;
}

static void walk(struct uxdp_bpf_object *obj)
{
	struct uxdp_bpf_program *p = NULL;
	struct uxdp_bpf_map *m = NULL;

	FZ_CHECK(uxdp_bpf_object_name(obj) != NULL, "object without a name");
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		FZ_CHECK(uxdp_bpf_program_name(p) &&
			 uxdp_bpf_program_section(p),
			 "program without a name or section");
		FZ_CHECK(uxdp_bpf_object_find_program(obj,
				uxdp_bpf_program_name(p)) != NULL,
			 "program %s not found by name",
			 uxdp_bpf_program_name(p));
	}
	while ((m = uxdp_bpf_object_next_map(obj, m))) {
		size_t size = 0;
		uint8_t *v;

		FZ_CHECK(uxdp_bpf_map_name(m) != NULL, "map without a name");
		v = uxdp_bpf_map_initial_value(m, &size);
		if (!v)
			continue;
		FZ_CHECK(size == uxdp_bpf_map_value_size(m),
			 "map %s: initial value of %zu bytes, value_size %u",
			 uxdp_bpf_map_name(m), size, uxdp_bpf_map_value_size(m));
		/* What a skeleton writes before load. */
		memset(v, 0x5a, size);
	}
}

static void run_all(struct uxdp_bpf_object *obj)
{
	struct uxdp_bpf_program *p = NULL;
	uint8_t pkt[64], out[128];

	memset(pkt, 0x11, sizeof(pkt));
	while ((p = uxdp_bpf_object_next_program(obj, p))) {
		UXDP_DECLARE_OPTS(uxdp_bpf_test_run_opts, t,
				  .data_in = pkt, .data_size_in = sizeof(pkt),
				  .data_out = out, .data_size_out = sizeof(out));
		struct uxdp_prog *prog = uxdp_bpf_program_prog(p);
		int err;

		if (!prog)
			continue;
		err = uxdp_bpf_prog_test_run(prog, &t);
		FZ_CHECK(!err, "prog %s: test run: %d %s",
			 uxdp_bpf_program_name(p), err, uxdp_errmsg());
		uxdp_prog_put(prog);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uxdp_bpf_object *obj;
	int err;

	errno = 0;
	obj = uxdp_bpf_object_open_mem(data, size, NULL);
	if (!obj) {
		FZ_CHECK(errno > 0, "open refused with errno %d", errno);
		FZ_CHECK(uxdp_errmsg()[0], "open refused without a reason");
		return 0;
	}
	walk(obj);
	err = uxdp_bpf_object_load(obj);
	if (err)
		FZ_CHECK(err < 0 && uxdp_errmsg()[0],
			 "load refused (%d) without a reason", err);
	else
		run_all(obj);
	uxdp_bpf_object_close(obj);
	return 0;
}
