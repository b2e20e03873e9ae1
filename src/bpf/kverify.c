/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UXDP_BPF_F_KERNEL_VERIFY: a program as linked, also put to the running
 * kernel's verifier. uxdp's own safety pass lets a program through that it
 * cannot prove and checks it at run time; a user who wants the kernel's
 * verdict as well (a program must stay loadable into the kernel) asks for
 * it with this flag, and needs CAP_BPF for it.
 *
 * The kernel sees what the engines will run: the instructions after
 * libbpf's linking and uxdp's CO-RE relocation, with each map the program
 * names created in the kernel with the same type, sizes and entries, global
 * data with its initial value, .rodata frozen (the verifier reads frozen
 * read-only values as constants, and so may prune on them), as a loader
 * would. Nothing is attached; the kernel's program and maps are closed at
 * once. A refusal is uxdp's refusal, with the verifier's reason in the
 * message and its whole log through the print callback (UXDP_INFO).
 *
 * Not given to the kernel: the object's BTF (its functions are then all
 * verified as static ones) and its license (taken as GPL-compatible).
 */
#include "../internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf_internal.h"

#ifdef UXDP_HAVE_LIBBPF

#include <bpf/bpf.h>
#include <bpf/btf.h>

#define KV_LOG_SIZE	(4U << 20)

static bool all_zero(const uint8_t *v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

/* The kernel's map for @m (-errno): same definition, same contents. */
static int kv_map(const char *prog, const struct uxdp_bpf_build_map *m,
		  const struct uxdp_bpf_build_map *maps, uint32_t nmaps)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	char kname[16];
	uint32_t key;
	int fd, err, inner = -1;

	/* An of-map is made with a map of its inner definition. */
	if (m->inner && m->inner <= nmaps) {
		inner = kv_map(prog, &maps[m->inner - 1], maps, 0);
		if (inner < 0)
			return inner;
		o.inner_map_fd = (uint32_t)inner;
	}

	/* The definition's flags (an LPM trie must be BPF_F_NO_PREALLOC);
	 * what the program may not write, libbpf creates read-only for it. */
	o.map_flags = m->map_flags;
	if (m->rdonly)
		o.map_flags |= BPF_F_RDONLY_PROG;
	/* A redirect map is read-only to programs by the kernel's own
	 * doing, which a user may not ask for. */
	if (m->type == BPF_MAP_TYPE_DEVMAP ||
	    m->type == BPF_MAP_TYPE_DEVMAP_HASH ||
	    m->type == BPF_MAP_TYPE_XSKMAP)
		o.map_flags &= ~(uint32_t)BPF_F_RDONLY_PROG;
	snprintf(kname, sizeof(kname), "%.15s", m->name);
	for (char *c = kname; *c; c++)
		if (*c != '.' && !isalnum((unsigned char)*c))
			*c = '_';
	fd = bpf_map_create(m->type, kname, m->key_size, m->value_size,
			    m->max_entries, &o);
	if (inner >= 0)
		close(inner);
	if (fd < 0)
		return uxdp_fail(errno, "prog %s: kernel verify: map %s: the "
				 "kernel cannot create it: %s", prog, m->name,
				 strerror(errno));
	/* Plain arrays carry their contents (global data's initial value,
	 * what the control plane wrote before load); a per-CPU value is
	 * not laid out for the kernel here, and is all zero. */
	if (m->type == BPF_MAP_TYPE_ARRAY && m->values && m->value_size)
		for (key = 0; key < m->max_entries; key++) {
			/* Elements are value_size rounded up to 8 apart
			 * (map_array.c, as the kernel's). */
			const uint8_t *v = m->values + (uint64_t)key *
					   ((m->value_size + 7) & ~7U);

			/* The kernel's starts zeroed: only what is not (a
			 * syscall each; Katran's ch_rings has 2^25). */
			if (all_zero(v, m->value_size))
				continue;
			if (bpf_map_update_elem(fd, &key, v, BPF_ANY)) {
				err = errno;
				close(fd);
				return uxdp_fail(err, "prog %s: kernel verify: "
						 "map %s: %s", prog, m->name,
						 strerror(err));
			}
		}
	if (m->rdonly && bpf_map_freeze(fd)) {
		err = errno;
		close(fd);
		return uxdp_fail(err, "prog %s: kernel verify: map %s: freeze: "
				 "%s", prog, m->name, strerror(err));
	}
	return fd;
}

#endif /* UXDP_HAVE_LIBBPF */

/* The lines the verifier ends with after its reason. */
static bool kv_after_reason(const char *line)
{
	static const char *const after[] = {
		"processed ", "verification time", "stack depth",
		"cur state:", "old state:",	/* after an infinite loop */
	};
	size_t i;

	for (i = 0; i < sizeof(after) / sizeof(after[0]); i++)
		if (!strncmp(line, after[i], strlen(after[i])))
			return true;
	return false;
}

const char *uxdp_bpf_kverify_reason(char *log)
{
	char *end = log + strlen(log), *p;

	for (;;) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			*--end = '\0';
		p = end;
		while (p > log && p[-1] != '\n')
			p--;
		if (p == log || !kv_after_reason(p))
			return *p ? p : "(no log)";
		end = p;
	}
}

#ifdef UXDP_HAVE_LIBBPF

/*
 * The kernel verifies a program with bpf-to-bpf calls only with BTF for
 * its functions when one of them tail-calls ("tail_call is not allowed in
 * subprogs without BTF"). The object's own BTF stays with libbpf, so this
 * makes the least that says where each function starts: one static
 * function "int fN(void *)" a function, loaded into the kernel, and a
 * func_info record each. Returns the BTF's descriptor (0 with no calls),
 * or a negative errno; *@info (free()) and *@n the records.
 */
static int kv_btf(const char *name, const struct bpf_insn *k, uint32_t len,
		  struct bpf_func_info **info, uint32_t *n)
{
	struct bpf_func_info *fi;
	struct btf *btf;
	bool *start;
	int i32, vp, proto, err = 0, fd;
	uint32_t i, c = 0;

	*info = NULL;
	*n = 0;
	start = calloc(len ? len : 1, sizeof(*start));
	if (!start)
		return -ENOMEM;
	start[0] = true;
	for (i = 0; i < len; i++) {
		int64_t t = (int64_t)i + k[i].imm + 1;

		if (k[i].code == (BPF_JMP | BPF_CALL) &&
		    k[i].src_reg == BPF_PSEUDO_CALL && t >= 0 && t < len)
			start[t] = true;
		if (k[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
	for (i = 0; i < len; i++)
		c += start[i];
	if (c < 2) {
		free(start);
		return 0;
	}
	fi = calloc(c, sizeof(*fi));
	btf = btf__new_empty();
	if (!fi || !btf) {
		err = -ENOMEM;
		goto out;
	}
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	vp = btf__add_ptr(btf, 0);
	proto = btf__add_func_proto(btf, i32);
	if (i32 < 0 || vp < 0 || proto < 0 ||
	    btf__add_func_param(btf, "ctx", vp)) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, c = 0; i < len; i++) {
		char fname[16];
		int id;

		if (!start[i])
			continue;
		snprintf(fname, sizeof(fname), "f%u", c);
		id = btf__add_func(btf, fname, BTF_FUNC_STATIC, proto);
		if (id < 0) {
			err = -ENOMEM;
			goto out;
		}
		fi[c].insn_off = i;
		fi[c].type_id = (uint32_t)id;
		c++;
	}
	if (btf__load_into_kernel(btf)) {
		err = uxdp_fail(errno, "prog %s: kernel verify: the kernel "
				"takes no BTF for its functions: %s", name,
				strerror(errno));
		goto out;
	}
	/* The descriptor outlives the btf object: it is the caller's. */
	fd = dup(btf__fd(btf));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	*info = fi;
	*n = c;
	fi = NULL;
	err = fd;
out:
	btf__free(btf);
	free(fi);
	free(start);
	return err;
}

int uxdp_bpf_kverify(const char *name, const char *section,
		     uint32_t attach_type, const struct bpf_insn *insns,
		     uint32_t len, const struct uxdp_bpf_build_map *maps,
		     uint32_t nmaps)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)attach_type);
	struct bpf_func_info *finfo = NULL;
	struct bpf_insn *k = NULL;
	char kname[16], *log = NULL;
	struct utsname u;
	int *fds, err = 0, fd, btf_fd = -1;
	uint32_t i, nfinfo = 0;

	fds = malloc((nmaps ? nmaps : 1) * sizeof(*fds));
	k = malloc((len ? len : 1) * sizeof(*k));
	log = malloc(KV_LOG_SIZE);
	if (!fds || !k || !log) {
		err = uxdp_fail(ENOMEM, "prog %s: kernel verify: out of memory",
				name);
		goto out;
	}
	for (i = 0; i < nmaps; i++)
		fds[i] = -1;
	memcpy(k, insns, len * sizeof(*k));
	/* Maps by index become maps by the kernel's descriptor. */
	for (i = 0; i + 1 < len && !err; i++) {
		struct bpf_insn *in = &k[i];
		uint32_t m = (uint32_t)in->imm;

		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (in->src_reg == BPF_PSEUDO_MAP_IDX ||
		    in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
			if (m >= nmaps || !maps[m].map) {
				err = uxdp_fail(EINVAL, "prog %s: kernel "
						"verify: insn %u: no map %u",
						name, i, m);
				break;
			}
			if (fds[m] < 0)
				fds[m] = kv_map(name, &maps[m], maps, nmaps);
			if (fds[m] < 0) {
				err = fds[m];
				break;
			}
			in->src_reg = in->src_reg == BPF_PSEUDO_MAP_IDX ?
				      BPF_PSEUDO_MAP_FD : BPF_PSEUDO_MAP_VALUE;
			in->imm = fds[m];
		}
		i++;
	}
	if (err)
		goto out;
	if (section && !strncmp(section, "xdp.frags", 9))
		o.prog_flags = BPF_F_XDP_HAS_FRAGS;
	btf_fd = kv_btf(name, k, len, &finfo, &nfinfo);
	if (btf_fd < 0) {
		err = btf_fd;
		goto out;
	}
	if (btf_fd > 0) {
		o.prog_btf_fd = btf_fd;
		o.func_info = finfo;
		o.func_info_cnt = nfinfo;
		o.func_info_rec_size = sizeof(*finfo);
	}
	snprintf(kname, sizeof(kname), "%.15s", name);
	for (char *c = kname; *c; c++)
		if (!isalnum((unsigned char)*c))
			*c = '_';
	log[0] = '\0';
	o.log_buf = log;
	o.log_size = KV_LOG_SIZE;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, kname, "GPL", k, len, &o);
	if (fd < 0 && !log[0] && errno != EPERM) {
		/* Again with the log on, for the reason. */
		o.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, kname, "GPL", k, len,
				   &o);
	}
	if (fd >= 0) {
		close(fd);
		goto out;
	}
	err = errno;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	if (err == EPERM) {
		err = uxdp_fail(EPERM, "prog %s: kernel verify: the kernel "
				"loads no program for this process (it needs "
				"CAP_BPF and CAP_PERFMON)", name);
		goto out;
	}
	if (log[0])
		uxdp_pr(UXDP_INFO, "bpf: prog %s: the verifier of kernel %s "
			"refuses it; its log:\n%s\n", name, u.release, log);
	err = uxdp_fail(EINVAL, "prog %s: the verifier of kernel %s refuses "
			"it (%s): %s", name, u.release, strerror(err),
			log[0] ? uxdp_bpf_kverify_reason(log) : "no log");
out:
	if (btf_fd > 0)
		close(btf_fd);
	free(finfo);
	for (i = 0; fds && i < nmaps; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(k);
	free(log);
	return err;
}

#else /* !UXDP_HAVE_LIBBPF */

int uxdp_bpf_kverify(const char *name, const char *section,
		     uint32_t attach_type, const struct bpf_insn *insns,
		     uint32_t len, const struct uxdp_bpf_build_map *maps,
		     uint32_t nmaps)
{
	(void)section, (void)attach_type, (void)insns, (void)len;
	(void)maps, (void)nmaps;
	return uxdp_fail(EOPNOTSUPP, "prog %s: kernel verify: uxdp was built "
			 "without libbpf", name);
}

#endif /* UXDP_HAVE_LIBBPF */
