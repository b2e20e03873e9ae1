/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Programs (from a function or a shared object) and the helpers programs
 * call to move the packet's head, tail and metadata, with the kernel's
 * bounds (net/core/filter.c).
 */
#define _GNU_SOURCE		/* ST_NOEXEC */
#include "../internal.h"

#include <dlfcn.h>
#include <link.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <uxdp/xdp.h>

#include "xdp_internal.h"

#define ETH_HLEN	14
#define META_MAX	252	/* u8 skb meta_len, 4-byte multiples */

/*
 * A loaded program is found by the symbol PROG_SYM_PREFIX<name>. Names are
 * capped at what struct uxdp_prog keeps, so the symbol buffer always fits
 * and the name the program reports is the one that was asked for: a longer
 * name is refused, never cut down to a prefix that may name another program.
 */
#define PROG_SYM_PREFIX	"uxdp_prog_"
#define PROG_NAME_MAX	((size_t)UXDP_PROG_NAME_MAX)


static struct uxdp_prog *prog_new(const char *name, uxdp_prog_fn run,
				  void *priv)
{
	struct uxdp_prog *p;

	if (!name || !run) {
		errno = -uxdp_fail(EINVAL, "prog: NULL name or function");
		return NULL;
	}
	/* Refused, never cut: the name is how a program is told apart. */
	if (strnlen(name, PROG_NAME_MAX + 1) > PROG_NAME_MAX) {
		errno = -uxdp_fail(ENAMETOOLONG,
				   "prog: program name '%.24s...' is longer "
				   "than %zu characters", name, PROG_NAME_MAX);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = -uxdp_fail(ENOMEM, "prog: out of memory");
		return NULL;
	}
	p->run = run;
	p->priv = priv;
	p->refcnt = 1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	return p;
}

UXDP_EXPORT __cold struct uxdp_prog *
uxdp_prog_create(const char *name, uxdp_prog_fn run, void *priv)
{
	uxdp_clear_err();
	return prog_new(name, run, priv);
}

UXDP_EXPORT __cold struct uxdp_prog *
uxdp_prog_create_ex(const char *name, uxdp_prog_fn run, void *priv,
		    void (*fini)(void *priv))
{
	struct uxdp_prog *p;

	uxdp_clear_err();
	p = prog_new(name, run, priv);
	if (p)
		p->fini = fini;
	return p;
}

/* ASCII only: the C identifier characters, whatever the locale says. */
static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/*
 * @name becomes the tail of a symbol: it must fit and be a C identifier
 * (a leading digit is fine, the prefix comes first). Anything else could
 * never have come from UXDP_PROG_DEFINE.
 */
static int prog_name_check(const char *name)
{
	size_t i, len = strnlen(name, PROG_NAME_MAX + 1);

	if (!len)
		return uxdp_fail(EINVAL, "prog: empty program name");
	if (len > PROG_NAME_MAX)
		return uxdp_fail(ENAMETOOLONG,
				 "prog: program name '%.24s...' is longer than "
				 "%zu characters", name, PROG_NAME_MAX);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (ident_char(name[i]))
			continue;
		if (c > 0x20 && c < 0x7f)
			return uxdp_fail(EINVAL,
					 "prog: program name '%s': '%c' cannot "
					 "be in a C identifier (symbol "
					 PROG_SYM_PREFIX "<name>)", name, c);
		return uxdp_fail(EINVAL,
				 "prog: program name: byte 0x%02x at %zu "
				 "cannot be in a C identifier (symbol "
				 PROG_SYM_PREFIX "<name>)", c, i);
	}
	return 0;
}

/* Whether @addr lies in the object @dl itself, not one of its dependencies. */
static bool sym_in_object(void *dl, const void *addr)
{
	struct link_map *obj = NULL, *owner = NULL;
	Dl_info info;

	if (dlinfo(dl, RTLD_DI_LINKMAP, &obj) || !obj)
		return false;
	if (!dladdr1(addr, &info, (void **)&owner, RTLD_DL_LINKMAP) || !owner)
		return false;
	return owner == obj;
}

/*
 * Why dlopen() refused @path, as an errno. dlerror() gives only text, so
 * look at the file: after the fact, and only to pick the errno (the text
 * stays dlopen's). *@why gets a short explanation.
 */
static int dl_classify(const char *path, const char **why)
{
	unsigned char magic[SELFMAG];
	struct statvfs vfs;
	struct stat st;
	bool noexec;
	ssize_t n;
	int fd, err;

	/* Searched on the library path: there is no one file to look at. */
	if (!strchr(path, '/')) {
		*why = "not found on the library search path, or did not load";
		return ENOENT;
	}
	if (stat(path, &st)) {
		err = errno;
		*why = err == ENOENT ? "no such file" :
		       err == EACCES ? "permission denied" : strerror(err);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		*why = "a directory";
		return EISDIR;
	}
	/* Reading a FIFO could block; no other kind of file is a library. */
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file, so not an ELF file";
		return ENOEXEC;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		*why = err == EACCES ? "permission denied" : strerror(err);
		return err;
	}
	n = read(fd, magic, sizeof(magic));
	err = n < 0 ? errno : 0;
	if (!err && (n < (ssize_t)sizeof(magic) ||
		     memcmp(magic, ELFMAG, SELFMAG)))
		err = ENOEXEC;
	/* As execve(): code on a noexec mount may not be mapped executable. */
	noexec = !err && !fstatvfs(fd, &vfs) && (vfs.f_flag & ST_NOEXEC);
	close(fd);
	if (err) {
		*why = err == ENOEXEC ? "not an ELF file" : strerror(err);
		return err;
	}
	if (noexec) {
		*why = "permission denied (noexec mount)";
		return EACCES;
	}
	/*
	 * An ELF file the dynamic loader would not take: an undefined symbol,
	 * another class or machine, an executable, a damaged file. ELIBBAD
	 * ("accessing a corrupted shared library") is the errno for a shared
	 * object that exists and is readable but cannot be used.
	 */
	*why = "an ELF file the dynamic loader refused";
	return ELIBBAD;
}

UXDP_EXPORT __cold struct uxdp_prog *
uxdp_prog_load(const char *path, const char *name, const char *args)
{
	const struct uxdp_prog_def *def;
	struct uxdp_prog *p;
	char sym[sizeof(PROG_SYM_PREFIX) + PROG_NAME_MAX];
	const char *dlmsg, *why;
	void *dl, *priv = NULL;
	int err;

	uxdp_clear_err();
	if (!path || !name) {
		errno = -uxdp_fail(EINVAL, "prog: NULL path or name");
		return NULL;
	}
	/* Before dlopen(): a bad name must not run the object's constructors */
	err = prog_name_check(name);
	if (err) {
		errno = -err;
		return NULL;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		dlmsg = dlerror();
		if (!dlmsg)
			dlmsg = path;
		err = dl_classify(path, &why);
		errno = -uxdp_fail(err, "prog: cannot load (%s): %s", why,
				   dlmsg);
		return NULL;
	}
	/* Fits: the name was checked against PROG_NAME_MAX. */
	snprintf(sym, sizeof(sym), PROG_SYM_PREFIX "%s", name);
	def = dlsym(dl, sym);
	/* dlsym() searches the object's dependencies too: a module linked
	 * against libuxdp "defines" uxdp_prog_load itself, and its code would
	 * be read as a program definition. Only the module's own symbol
	 * counts (found by the fuzzer, tests/fuzz/fuzz_prog.c). */
	if (def && !sym_in_object(dl, def))
		def = NULL;
	if (!def || !def->run) {
		err = uxdp_fail(ENOENT,
				"prog: %s defines no program '%s' (symbol %s; "
				"use UXDP_PROG_DEFINE)", path, name, sym);
		goto err_close;
	}
	if (def->init) {
		errno = 0;
		priv = def->init(args);
		if (!priv) {
			err = uxdp_fail(errno ? errno : EINVAL,
					"prog: %s: init refused args '%s'",
					name, args ? args : "");
			goto err_close;
		}
	}
	p = prog_new(name, def->run, priv);
	if (!p) {
		err = -errno;
		if (def->fini)
			def->fini(priv);
		goto err_close;
	}
	p->fini = def->fini;
	p->dl = dl;
	return p;

err_close:
	dlclose(dl);
	errno = -err;
	return NULL;
}

UXDP_EXPORT struct uxdp_prog *uxdp_prog_get(struct uxdp_prog *p)
{
	if (p)
		__atomic_fetch_add(&p->refcnt, 1, __ATOMIC_RELAXED);
	return p;
}

UXDP_EXPORT void uxdp_prog_put(struct uxdp_prog *p)
{
	/* acq_rel: the last put must see every other user's writes before
	 * fini runs. */
	if (!p || __atomic_sub_fetch(&p->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	if (p->fini)
		p->fini(p->priv);
	if (p->dl)
		dlclose(p->dl);
	free(p);
}

UXDP_EXPORT const char *uxdp_prog_name(const struct uxdp_prog *p)
{
	return p->name;
}

UXDP_EXPORT uint32_t uxdp_prog_run(const struct uxdp_prog *p,
				   struct uxdp_buff *ctx)
{
	return p->run(ctx, p->priv);
}

/* ---- helpers ------------------------------------------------------------- */

static inline bool meta_supported(const struct uxdp_buff *b)
{
	return b->data_meta <= b->data;
}

static inline uint32_t metalen(const struct uxdp_buff *b)
{
	return meta_supported(b) ?
	       (uint32_t)((char *)b->data - (char *)b->data_meta) : 0;
}

/* Leave room for the frame header before the metadata and packet. */
static inline char *frame_end(const struct uxdp_buff *b)
{
	return (char *)uxdp_frame_at(b->data_hard_start) +
	       sizeof(struct uxdp_frame);
}

UXDP_EXPORT int uxdp_adjust_head(struct uxdp_buff *b, int delta)
{
	uint32_t mlen = metalen(b);
	char *data = (char *)b->data + delta;

	if (unlikely(data < frame_end(b) + mlen ||
		     data > (char *)b->data_end - ETH_HLEN))
		return -EINVAL;
	if (mlen)
		memmove((char *)b->data_meta + delta, b->data_meta, mlen);
	/* Moves along even when unsupported (data + 1 stays data + 1). */
	b->data_meta = (char *)b->data_meta + delta;
	b->data = data;
	return 0;
}

UXDP_EXPORT int uxdp_adjust_tail(struct uxdp_buff *b, int delta)
{
	char *hard_end = (char *)b->data_hard_start + b->frame_sz -
			 UXDP_FRAME_TAILROOM;
	char *end = (char *)b->data_end + delta;

	if (unlikely(end > hard_end || end < (char *)b->data + ETH_HLEN))
		return -EINVAL;
	/* Growth exposes bytes a previous user left there: clear them. */
	if (delta > 0)
		memset(b->data_end, 0, (size_t)delta);
	b->data_end = end;
	return 0;
}

UXDP_EXPORT int uxdp_adjust_meta(struct uxdp_buff *b, int delta)
{
	char *meta = (char *)b->data_meta + delta;
	long len = (char *)b->data - meta;

	if (!meta_supported(b))
		return -EOPNOTSUPP;
	if (unlikely(meta < frame_end(b) || meta > (char *)b->data))
		return -EINVAL;
	if (unlikely(len % 4 || len > META_MAX))
		return -EACCES;
	b->data_meta = meta;
	return 0;
}
