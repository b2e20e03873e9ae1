/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Programs (from a function or a shared object) and the helpers programs
 * call to move the packet's head, tail and metadata, with the kernel's
 * bounds (net/core/filter.c).
 */
#include "../internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <uxdp/xdp.h>

#include "xdp_internal.h"

#define ETH_HLEN	14
#define META_MAX	252	/* u8 skb meta_len, 4-byte multiples */


static struct uxdp_prog *prog_new(const char *name, uxdp_prog_fn run,
				  void *priv)
{
	struct uxdp_prog *p;

	if (!name || !run) {
		errno = -uxdp_fail(EINVAL, "prog: NULL name or function");
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
uxdp_prog_load(const char *path, const char *name, const char *args)
{
	const struct uxdp_prog_def *def;
	struct uxdp_prog *p;
	char sym[96];
	void *dl, *priv = NULL;
	int err;

	uxdp_clear_err();
	if (!path || !name) {
		errno = -uxdp_fail(EINVAL, "prog: NULL path or name");
		return NULL;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		errno = -uxdp_fail(ENOENT, "prog: cannot load %s: %s", path,
				   dlerror());
		return NULL;
	}
	snprintf(sym, sizeof(sym), "uxdp_prog_%s", name);
	def = dlsym(dl, sym);
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
	return (char *)b->data_hard_start + sizeof(struct uxdp_frame);
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
