/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp xdp layer, what a program author uses: verdicts, frames and memory
 * return, programs and the helpers they call, redirect maps, per-queue
 * counters. (Running programs is the driver's side: <uxdp/driver.h>.)
 *
 * A uxdp_buff lives for one poll; to outlive it (queued for transmit, handed
 * to another device) it becomes a uxdp_frame, written in place at
 * data_hard_start, in the buffer's own headroom (the kernel's xdp_frame):
 *
 *	data_hard_start  struct uxdp_frame (48 bytes)
 *	                 ... headroom ...
 *	data_meta        metadata (metasize bytes)
 *	data             packet (len bytes)
 *
 * A frame goes back to whoever owns its memory: a uxdp_pool buffer to its
 * pool (through the lock-free path on the pool's own thread, the pool's
 * return lock from any other), other memory to its allocator.
 *
 * Programs are C functions: uint32_t prog(struct uxdp_buff *ctx, void *priv)
 * returning a UXDP_* action. They read and write the packet between
 * ctx->data and ctx->data_end and use the helpers below. XDP_TX and
 * XDP_REDIRECT frames are collected in per-thread bulk queues of up to
 * UXDP_BULK_SIZE frames and sent with one xmit call per queue: when a queue
 * fills, and at the end of every poll (the device layer flushes them).
 */
#ifndef UXDP_XDP_H
#define UXDP_XDP_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/buff.h>
#include <uxdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Program verdicts: the kernel's enum xdp_action, same values. */
enum uxdp_action {
	UXDP_ABORTED = 0,
	UXDP_DROP,
	UXDP_PASS,
	UXDP_TX,
	UXDP_REDIRECT,
};
#define UXDP_ACTION_MAX	UXDP_REDIRECT

/* Frames per bulk queue: XDP_BULK_QUEUE_SIZE, VETH_XDP_TX_BULK_SIZE. */
#define UXDP_BULK_SIZE	16

/* xmit flags (XDP_XMIT_FLUSH): ring the doorbell after these frames. */
#define UXDP_XMIT_FLUSH		(1U << 0)
#define UXDP_XMIT_FLAGS_MASK	UXDP_XMIT_FLUSH

/* Tailroom a frame keeps free at the end of its buffer (skb_shared_info). */
#define UXDP_FRAME_TAILROOM	320

/* ---- memory models -------------------------------------------------------- */

/* Who owns a buffer's memory, so a frame can be returned to it. */
enum uxdp_mem_type {
	/* A uxdp_pool buffer head (struct uxdp_pool_buff). */
	UXDP_MEM_POOL = 0,
	/* Memory from a struct uxdp_mem_allocator. */
	UXDP_MEM_ALLOC,
	/*
	 * A buffer made from a received frame (uxdp_frame_to_buff): the
	 * frame header still at data_hard_start names the real owner, so a
	 * driver receiving frames from anywhere (veth) sets this once for its
	 * queue instead of copying each frame's owner. The helpers keep that
	 * header intact (adjust_head/meta stop at its end).
	 */
	UXDP_MEM_FRAME,
	/*
	 * A buffer of an AF_XDP socket's pool, received into by a zero-copy
	 * driver (the kernel's MEM_TYPE_XSK_BUFF_POOL); owner as for
	 * UXDP_MEM_POOL. The memory is the application's, which may write
	 * it at any time, so the library keeps nothing of its own there: a
	 * redirect to the socket hands the buffer over as it is, and a frame
	 * made of it (XDP_TX, a redirect to a device) is a copy
	 * (uxdp_frame_copy_buff).
	 */
	UXDP_MEM_XSK,
};

/*
 * Any other memory: the allocator's free() gets back uxdp_frame_at() of the
 * buffer's data_hard_start (where the frame is or would be written: the
 * hard start itself when it is 8-byte aligned, as malloc()ed memory is). It
 * may be called from any thread; making that safe is the allocator's job.
 */
struct uxdp_mem_allocator {
	void (*free)(struct uxdp_mem_allocator *a, void *hard_start);
};

struct uxdp_mem_info {
	uint32_t type;		/* enum uxdp_mem_type */
	/*
	 * UXDP_MEM_POOL: the buffer's head, or NULL when the uxdp_buff being
	 * processed *is* the head (a driver receiving into pool buffers).
	 * UXDP_MEM_ALLOC: the struct uxdp_mem_allocator.
	 */
	void *owner;
};

/*
 * Receive-queue information every buffer points to (buff->rxq): the kernel's
 * xdp_rxq_info. Drivers fill it; programs read dev and queue_index.
 */
struct uxdp_rxq_info {
	struct uxdp_dev *dev;		/* ingress device (opaque here) */
	uint32_t queue_index;
	uint32_t ifindex;
	struct uxdp_mem_info mem;
};

/* ---- frames ------------------------------------------------------------------ */

struct uxdp_frame {
	void *data;
	uint32_t len;
	uint16_t headroom;	/* bytes from the end of this struct to data */
	uint16_t metasize;
	uint32_t frame_sz;
	uint32_t flags;
	struct uxdp_mem_info mem;
	struct uxdp_dev *dev_rx;
};

/*
 * Where the frame header of a buffer whose usable area starts at
 * @hard_start goes: the first 8-byte boundary at or after it. A UMEM
 * headroom need not be a multiple of 8 and an unaligned-mode buffer may
 * start at any byte, but the header holds pointers: written at an odd
 * address it would be undefined behaviour in C and a fault on
 * strict-alignment CPUs.
 */
UXDP_INLINE struct uxdp_frame *uxdp_frame_at(void *hard_start)
{
	uintptr_t p = (uintptr_t)hard_start;

	return (struct uxdp_frame *)((p + 7) & ~(uintptr_t)7);
}

/*
 * A frame holding a copy of @buf (metadata and packet) in memory of its own
 * (UXDP_MEM_ALLOC, from the heap; freed when the frame is returned), with
 * the standard headroom and tailroom. On success @buf is given back to its
 * owner; NULL (out of memory) leaves it the caller's. The kernel's
 * xdp_convert_zc_to_xdp_frame, which uxdp_buff_to_frame() calls for
 * UXDP_MEM_XSK buffers.
 */
struct uxdp_frame *uxdp_frame_copy_buff(struct uxdp_buff *buf);

/*
 * Convert a buffer to a frame in place (xdp_convert_buff_to_frame), at
 * uxdp_frame_at(data_hard_start). Needs room for struct uxdp_frame between
 * there and the metadata, and UXDP_FRAME_TAILROOM after data_end. Returns
 * the frame, or NULL if the headroom or tailroom is too small (the buffer
 * is untouched). A UXDP_MEM_XSK buffer becomes a copy instead (see
 * uxdp_frame_copy_buff; NULL if out of memory).
 */

UXDP_INLINE struct uxdp_frame *uxdp_buff_to_frame(struct uxdp_buff *buf)
{
	/*
	 * Everything is read before the first store: the frame is written
	 * through a pointer into packet memory, which the compiler must
	 * assume may alias *buf, and would reload each field after each
	 * store otherwise.
	 */
	char *hard_start = (char *)buf->data_hard_start;
	char *data = (char *)buf->data, *end = (char *)buf->data_end;
	char *meta = (char *)buf->data_meta;
	const struct uxdp_rxq_info *rxq = buf->rxq;
	uint32_t frame_sz = buf->frame_sz, flags = buf->flags;
	uint32_t mem_type = rxq->mem.type;
	void *owner = rxq->mem.owner;
	struct uxdp_dev *dev = rxq->dev;
	struct uxdp_frame *f = uxdp_frame_at(hard_start);
	uint32_t pad = (uint32_t)((char *)f - hard_start);
	uint32_t headroom = (uint32_t)(data - (char *)f);
	uint32_t metasize = meta <= data ? (uint32_t)(data - meta) : 0;

	/* An application's memory holds no frame header of ours. */
	if (uxdp_unlikely(mem_type == UXDP_MEM_XSK))
		return uxdp_frame_copy_buff(buf);
	/* The frame header must not overwrite the metadata (data is at
	 * least a header past hard_start, or the subtraction above wrapped
	 * and this fails too), and the tail must keep the room the frame
	 * owner relies on. */
	if (uxdp_unlikely(data < (char *)f ||
			  headroom < metasize + sizeof(*f) ||
			  end > hard_start + frame_sz - UXDP_FRAME_TAILROOM))
		return NULL;
	f->data = data;
	f->len = (uint32_t)(end - data);
	f->headroom = (uint16_t)(headroom - sizeof(*f));
	f->metasize = (uint16_t)metasize;
	/* Measured from the header, so hard_start + frame_sz, the end of
	 * the buffer, stays where it was for uxdp_frame_to_buff(). */
	f->frame_sz = frame_sz - pad;
	f->flags = flags;
	f->dev_rx = dev;
	/* A buffer made from a frame: the header already names the owner. */
	if (mem_type == UXDP_MEM_FRAME)
		return f;
	/* A pool buffer's owner is its head: the buff itself unless the
	 * rxq info names another. */
	if (mem_type == UXDP_MEM_POOL && !owner)
		owner = buf;
	f->mem.type = mem_type;
	f->mem.owner = owner;
	return f;
}

/*
 * Fill @buf from @frame (xdp_convert_frame_to_buff). buf->rxq is left to
 * the caller, who also carries frame->mem over (a driver receiving frames
 * sets its rxq info's mem to the frame's, as the kernel's veth does).
 */
UXDP_INLINE void uxdp_frame_to_buff(const struct uxdp_frame *f,
				    struct uxdp_buff *buf)
{
	/* Loads first: see uxdp_buff_to_frame(). */
	char *data = (char *)f->data;
	uint32_t len = f->len, metasize = f->metasize;
	uint32_t frame_sz = f->frame_sz, flags = f->flags;

	buf->data_hard_start = (void *)f;
	buf->data = data;
	buf->data_end = data + len;
	buf->data_meta = data - metasize;
	buf->frame_sz = frame_sz;
	buf->flags = flags;
}

/* Return a frame's memory to its owner; safe from any thread. */
void uxdp_frame_return(struct uxdp_frame *frame);

/*
 * Return @n frames, batching consecutive frames of one owner into one call
 * (one lock when returning from a foreign thread). Safe from any thread.
 */
void uxdp_frame_return_bulk(struct uxdp_frame **frames, uint32_t n);

/*
 * Return a buffer that never became a frame (XDP_DROP, errors): to its pool
 * or allocator per buf->rxq->mem. Safe from any thread.
 */
void uxdp_buff_return(struct uxdp_buff *buf);

/* ---- programs ------------------------------------------------------------- */

typedef uint32_t (*uxdp_prog_fn)(struct uxdp_buff *ctx, void *priv);

/*
 * A program loadable by name from a shared object: the object defines
 * `const struct uxdp_prog_def uxdp_prog_<name>` (use UXDP_PROG_DEFINE).
 * init (optional) runs at load and returns the priv pointer passed to every
 * call, or NULL with errno set to refuse loading; fini undoes it.
 */
struct uxdp_prog_def {
	const char *name;
	uxdp_prog_fn run;
	void *(*init)(const char *args);
	void (*fini)(void *priv);
};

#define UXDP_PROG_DEFINE(name_, run_, init_, fini_)			\
	const struct uxdp_prog_def uxdp_prog_##name_ = {		\
		.name = #name_, .run = (run_), .init = (init_),		\
		.fini = (fini_),					\
	}

struct uxdp_prog;

/* Longest program name, for uxdp_prog_create() and uxdp_prog_load(). */
#define UXDP_PROG_NAME_MAX	63

/*
 * A program from a function. @name is copied. Returns the program, or NULL
 * with errno set (EINVAL: NULL argument; ENAMETOOLONG: a name longer than
 * UXDP_PROG_NAME_MAX, refused rather than cut; ENOMEM).
 */
struct uxdp_prog *uxdp_prog_create(const char *name, uxdp_prog_fn run,
				   void *priv);

/*
 * The same, with a destructor: @fini (may be NULL) gets @priv when the last
 * reference goes (uxdp_prog_put). By then no poll runs the program: a device
 * holds a reference while it is attached and gives it back only after the
 * grace period of the detach or swap, so @fini may free whatever the
 * program reads (the bpf layer frees a loaded object's code and JIT memory
 * this way). On failure (NULL, errno set as for uxdp_prog_create) @fini is
 * not called: @priv is still the caller's.
 */
struct uxdp_prog *uxdp_prog_create_ex(const char *name, uxdp_prog_fn run,
				      void *priv, void (*fini)(void *priv));

/*
 * Load program @name from the shared object at @path (dlopen; a path
 * without '/' is searched as dlopen does). @name is the <name> of
 * UXDP_PROG_DEFINE: at most 63 characters, letters, digits and '_' only.
 * @args is passed to the program's init. Returns the program, or NULL with
 * errno set and uxdp_errmsg() saying why (with dlopen's own text when the
 * object did not load):
 *
 *   EINVAL        NULL @path or @name; @name empty or not made of C
 *                 identifier characters; init refused @args (or init's
 *                 own errno)
 *   ENAMETOOLONG  @name longer than 63 characters (never shortened)
 *   ENOENT        @path does not exist, or the object defines no program
 *                 @name; also any failure to load a path without '/',
 *                 which is searched and so cannot be examined
 *   EISDIR        @path is a directory
 *   ENOEXEC       @path is not an ELF file
 *   EACCES        @path cannot be read, or is on a noexec mount
 *   ELIBBAD       @path is an ELF file the dynamic loader refused: an
 *                 undefined symbol or missing dependency, another class
 *                 or machine, not a shared object, damaged ("accessing a
 *                 corrupted shared library": the one errno for a library
 *                 that is there and readable but unusable)
 *   other         stat()'s or read()'s errno for @path (ENOTDIR, ELOOP,
 *                 EIO, ...); ENOMEM
 */
struct uxdp_prog *uxdp_prog_load(const char *path, const char *name,
				 const char *args);

/* Drop a reference; the program is freed (fini, dlclose) at the last one. */
void uxdp_prog_put(struct uxdp_prog *prog);
/* Take a reference. Returns @prog. */
struct uxdp_prog *uxdp_prog_get(struct uxdp_prog *prog);
const char *uxdp_prog_name(const struct uxdp_prog *prog);

/*
 * Run @prog on @ctx. Returns its verdict unchanged (the caller maps values
 * above UXDP_ACTION_MAX to UXDP_ABORTED and counts them).
 */
uint32_t uxdp_prog_run(const struct uxdp_prog *prog, struct uxdp_buff *ctx);

/* ---- helpers for programs ------------------------------------------------------ */

/*
 * Move the packet start by @delta bytes (negative grows the packet at the
 * front), carrying the metadata along (bpf_xdp_adjust_head). The new start
 * must leave room for struct uxdp_frame plus metadata before it and at least
 * 14 bytes (an Ethernet header) of packet. Returns 0 or -EINVAL (nothing
 * changed).
 */
int uxdp_adjust_head(struct uxdp_buff *ctx, int delta);

/*
 * Move the packet end by @delta bytes (bpf_xdp_adjust_tail); growth is
 * zeroed. The end must stay within frame_sz - UXDP_FRAME_TAILROOM of
 * data_hard_start and keep 14 bytes of packet. Returns 0 or -EINVAL.
 */
int uxdp_adjust_tail(struct uxdp_buff *ctx, int delta);

/*
 * Move the metadata start by @delta (bpf_xdp_adjust_meta). The metadata must
 * stay after struct uxdp_frame, end at data, and be a multiple of 4 bytes,
 * at most 252. Returns 0, -EINVAL (out of bounds) or -EACCES (bad length),
 * or -EOPNOTSUPP if the buffer does not support metadata
 * (data_meta > data).
 */
int uxdp_adjust_meta(struct uxdp_buff *ctx, int delta);

/* ---- redirect targets and maps -------------------------------------------- */

/*
 * Something frames can be redirected to in bulk: a device
 * (uxdp_dev_target()) or an AF_XDP socket (uxdp_xsk_target()). Opaque.
 */
struct uxdp_xdp_target;

/*
 * A redirect map: an array of targets indexed by key (the kernel's devmap,
 * and its XSKMAP when the targets are sockets). Entries are set and cleared
 * at run time, from any thread; programs look them up with
 * uxdp_redirect_map().
 */
struct uxdp_map;

/* A map of @max_entries slots. Returns it, or NULL with errno set. */
struct uxdp_map *uxdp_map_create(uint32_t max_entries);
/*
 * Destroy a map. Detach the programs that use it first; a poll running one
 * right now is waited for (a grace period), so this must not be called from
 * inside a poll (it then warns and leaks the map rather than wait for
 * itself).
 */
void uxdp_map_destroy(struct uxdp_map *map);
/*
 * Set slot @key to @t (NULL clears it). Returns 0 or -E2BIG (bad key).
 * A device destroyed while a slot holds it is cleared from every map, as
 * the kernel's devmap does: redirects through that slot then get the
 * fallback verdict (counted in redirect_miss).
 */
int uxdp_map_update(struct uxdp_map *map, uint32_t key,
		    struct uxdp_xdp_target *t);
/* The target at @key, or NULL. */
struct uxdp_xdp_target *uxdp_map_lookup(const struct uxdp_map *map,
					uint32_t key);

/*
 * For programs: redirect this packet to slot @key of @map
 * (bpf_redirect_map). Returns UXDP_REDIRECT, or, when the slot is empty or
 * out of range, the lower two bits of @flags as the verdict (so
 * UXDP_DROP / UXDP_PASS / UXDP_TX can be given as the fallback).
 */
uint32_t uxdp_redirect_map(struct uxdp_map *map, uint32_t key,
			   uint64_t flags);

/* For programs: redirect to target @t directly (bpf_redirect). */
uint32_t uxdp_redirect_target(struct uxdp_xdp_target *t);

/* ---- receive queues ----------------------------------------------------------- */

/* Called for UXDP_PASS: the buffer is the handler's only for the call. */
typedef void (*uxdp_pass_fn)(void *arg, struct uxdp_buff *buf);

/*
 * Per receive queue counters. Written only by the queue's polling thread
 * (and by the device going down, when no poll runs). Every frame received
 * ends in exactly one of pass, pass_dropped, drop, tx, redirect, aborted,
 * no_prog, tx_err, redirect_err, redirect_no_target or frame_err.
 */
struct uxdp_rxq_stats {
	/* Frames received on the queue, whether a program ran or not. */
	uint64_t packets;
	uint64_t bytes;
	uint64_t pass;		/* UXDP_PASS, handed to the pass handler */
	uint64_t pass_dropped;	/* UXDP_PASS with no pass handler set */
	uint64_t drop;		/* UXDP_DROP verdicts */
	uint64_t tx;		/* UXDP_TX frames sent */
	uint64_t redirect;	/* UXDP_REDIRECT frames sent */
	uint64_t aborted;	/* UXDP_ABORTED, including invalid verdicts */
	uint64_t invalid_action;	/* verdicts > UXDP_ACTION_MAX */
	uint64_t no_prog;	/* received with no program attached */
	/* UXDP_TX frames the device did not take; its txq stats say why. */
	uint64_t tx_err;
	/* Redirected frames the target did not take (ring full, down, too
	 * big: the target's txq stats say which). */
	uint64_t redirect_err;
	/* UXDP_REDIRECT with no target: no redirect helper called, or it
	 * found nothing. */
	uint64_t redirect_no_target;
	/* uxdp_redirect_map() found an empty slot (never set, or its device
	 * destroyed) and the fallback verdict in flags was carried out; that
	 * verdict is counted as well. */
	uint64_t redirect_miss;
	uint64_t frame_err;	/* no headroom/tailroom to make a frame */
	uint64_t xmit_calls;	/* xmit calls made flushing bulk queues */
	/* Frames queued for this queue and given back unprocessed when it
	 * went down or its device was destroyed. */
	uint64_t drained;
	/* Polls that received at least one frame: packets / polls is the
	 * mean RX batch, which says whether a poller keeps up. */
	uint64_t polls;
};

#ifdef __cplusplus
}
#endif

#endif /* UXDP_XDP_H */
