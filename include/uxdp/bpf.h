/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp bpf layer: XDP eBPF objects as clang writes them (-target bpf), run
 * in userspace on every uxdp device, with no bpf() system call, no root and
 * no kernel BPF support.
 *
 * An object is opened (libbpf parses the ELF, the BTF, the maps and the
 * relocations), optionally adjusted (global data set, programs left out),
 * then loaded: uxdp links each XDP program, creates its maps, checks the
 * program (what it cannot prove safe gets a run-time check) and prepares
 * an engine, the JIT where there is one, else the interpreter. A loaded
 * program is an ordinary struct uxdp_prog: attach it to a device queue,
 * swap it under traffic, uxdp_prog_put() it.
 *
 *	obj = uxdp_bpf_object_open("fw.o", NULL);
 *	uxdp_bpf_map_initial_value(uxdp_bpf_object_find_map(obj, "fw.rodata"),
 *				   &size) ... set configuration ...
 *	uxdp_bpf_object_load(obj);
 *	prog = uxdp_bpf_object_prog(obj, "fw");
 *	uxdp_dev_attach_prog(dev, UXDP_ALL_QUEUES, prog);
 *	uxdp_prog_put(prog);
 *	...
 *	uxdp_bpf_object_close(obj);	(the attached program lives on)
 *
 * Semantics are the kernel's (docs/semantics.md lists where they differ):
 * the context is struct xdp_md of <linux/bpf.h> over the packet, maps have
 * the kernel's layouts, flags and errors, helpers the kernel's results.
 * uxdp's "CPUs" are its thread indices (uxdp_thread_index()): a per-CPU
 * map has one value per possible thread, UXDP_MAX_THREADS of them.
 *
 * Errors: NULL with errno, or a negative errno; uxdp_errmsg() says why. A
 * refused program is named with the instruction and the reason:
 *	prog fw: insn 14 (call 51): helper bpf_redirect_map: not supported
 *	until part 2 of issue 14
 * Libbpf's own messages are quiet unless UXDP_BPF_DEBUG=1 is set in the
 * environment; they then go to the print callback (uxdp_set_print).
 */
#ifndef UXDP_BPF_H
#define UXDP_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uxdp/common.h>
#include <uxdp/xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uxdp_bpf_object;
struct uxdp_bpf_program;
struct uxdp_bpf_map;

/* ---- objects ---------------------------------------------------------------- */

enum uxdp_bpf_engine {
	/* The JIT where there is one (x86-64), else the interpreter; a
	 * program the JIT cannot compile falls back to the interpreter. */
	UXDP_BPF_ENGINE_DEFAULT = 0,
	UXDP_BPF_ENGINE_INTERP,		/* the interpreter, any architecture */
	UXDP_BPF_ENGINE_JIT,		/* the JIT or a refusal (EOPNOTSUPP) */
};

struct uxdp_bpf_object_opts {
	size_t sz;
	/* The object's name in messages and uxdp_bpf_object_name(); for
	 * uxdp_bpf_object_open_mem() (default "mem"). Copied. */
	const char *object_name;
	uint32_t engine;		/* enum uxdp_bpf_engine */
	uint32_t flags;			/* UXDP_BPF_F_*; others: EINVAL */
	/*
	 * Back edges (a jump that closes a loop, each time it runs) one run
	 * may take before it ends as XDP_ABORTED: a bounded loop the
	 * kernel's verifier accepts stays well inside it, one that never
	 * ends stops. 0: the default.
	 */
	uint64_t budget;
};
#define uxdp_bpf_object_opts__last_field budget

/*
 * Also put every program loaded to the running kernel's verifier (its
 * maps created in the kernel with the same definitions, global data with
 * its initial values, .rodata frozen; nothing attached, all closed again)
 * and refuse what it refuses: uxdp_bpf_object_load() is then -EINVAL
 * with the verifier's reason in uxdp_errmsg() and its whole log through
 * the print callback (UXDP_INFO); -EPERM without CAP_BPF and CAP_PERFMON.
 * uxdp's own safety pass runs as ever. Needs libbpf (-EOPNOTSUPP).
 */
#define UXDP_BPF_F_KERNEL_VERIFY	(1U << 0)

/*
 * Open the object file at @path (@opts may be NULL). Nothing is created or
 * checked beyond the ELF, the BTF and the relocations: the programs and maps
 * are visible, global data can be set, programs can be left out. Returns the
 * object, or NULL with errno set and uxdp_errmsg() saying why: ENOENT,
 * EACCES and other open()/read() errors for @path; EINVAL (bad @opts, or
 * the file is not a BPF ELF object: the reason names what is wrong);
 * E2BIG (larger than 256 MiB); ENOMEM; EOPNOTSUPP (built without libbpf).
 */
struct uxdp_bpf_object *
uxdp_bpf_object_open(const char *path,
		     const struct uxdp_bpf_object_opts *opts);

/* The same from @size bytes at @buf (copied: the caller may free it). */
struct uxdp_bpf_object *
uxdp_bpf_object_open_mem(const void *buf, size_t size,
			 const struct uxdp_bpf_object_opts *opts);

/*
 * Load every XDP program of the object that is to be loaded
 * (uxdp_bpf_program_set_autoload; programs of other types are skipped with
 * a note): link it, create the maps it uses with their initial values,
 * check and prepare it, compile it. All or nothing: a refused program fails
 * the whole load and the object can only be closed then (as libbpf's).
 * Returns 0, or:
 *   -EINVAL      a program was refused (the reason names program,
 *                instruction and why), or libbpf could not link the
 *                object (its message), or loaded already
 *   -EOPNOTSUPP  something uxdp does not have: a map type, a helper, a
 *                kfunc, a kernel symbol, the JIT where asked for
 *   -E2BIG       a program too large; -ENOMEM
 */
int uxdp_bpf_object_load(struct uxdp_bpf_object *obj);

/*
 * Close the object: its programs' own references and its handles
 * (programs, maps) go. A struct uxdp_prog still referenced (attached, or
 * held by the caller) keeps running with its maps until its last reference
 * goes; its maps can no longer be reached through this API. NULL is fine.
 */
void uxdp_bpf_object_close(struct uxdp_bpf_object *obj);

const char *uxdp_bpf_object_name(const struct uxdp_bpf_object *obj);

/* ---- programs of an object ---------------------------------------------------- */

/* Iterate: NULL gives the first program, the last gives NULL. Every program
 * of the object, of every type, in the object's order. */
struct uxdp_bpf_program *
uxdp_bpf_object_next_program(const struct uxdp_bpf_object *obj,
			     const struct uxdp_bpf_program *prev);
/* By name (the C function's), or NULL with errno ENOENT. */
struct uxdp_bpf_program *
uxdp_bpf_object_find_program(const struct uxdp_bpf_object *obj,
			     const char *name);

const char *uxdp_bpf_program_name(const struct uxdp_bpf_program *p);
/* The ELF section: "xdp", "xdp.frags", "xdp/devmap", "xdp_prog", ... */
const char *uxdp_bpf_program_section(const struct uxdp_bpf_program *p);
/*
 * The kernel's program type (enum bpf_prog_type: BPF_PROG_TYPE_XDP = 6)
 * as the section name gives it, and the expected attach type (enum
 * bpf_attach_type: BPF_XDP, BPF_XDP_DEVMAP, BPF_XDP_CPUMAP). A section
 * name libbpf does not know (an old-style name such as "xdp_prog") gives
 * BPF_PROG_TYPE_XDP: uxdp loads only XDP programs.
 */
uint32_t uxdp_bpf_program_type(const struct uxdp_bpf_program *p);
uint32_t uxdp_bpf_program_attach_type(const struct uxdp_bpf_program *p);
/*
 * Whether uxdp_bpf_object_load() loads it: true for XDP programs unless
 * turned off; programs of other types are never loaded. Setting it after
 * load, or true on a program of another type, is -EINVAL.
 */
bool uxdp_bpf_program_autoload(const struct uxdp_bpf_program *p);
int uxdp_bpf_program_set_autoload(struct uxdp_bpf_program *p, bool load);

/*
 * The loaded program, a new reference (uxdp_prog_put() it): NULL with errno
 * EAGAIN before a successful load, ENOENT if it was not loaded (another
 * type, autoload off). The same struct uxdp_prog every time.
 */
struct uxdp_prog *uxdp_bpf_program_prog(const struct uxdp_bpf_program *p);
/* The same by name; NULL @name: the first program loaded. */
struct uxdp_prog *uxdp_bpf_object_prog(const struct uxdp_bpf_object *obj,
				       const char *name);

/* ---- loaded programs --------------------------------------------------------- */

/* Why a run ended early, as XDP_ABORTED (every one is counted). */
enum uxdp_bpf_fault {
	UXDP_BPF_FAULT_NONE,
	UXDP_BPF_FAULT_MEM,		/* a check found the access outside */
	UXDP_BPF_FAULT_BUDGET,		/* too many back edges */
	UXDP_BPF_FAULT_DEPTH,		/* calls nested past UXDP_BPF_MAX_DEPTH */
	UXDP_BPF_FAULT_INSN,		/* an opcode no row has (a bug) */
};

struct uxdp_bpf_prog_info {
	size_t sz;
	uint32_t engine;		/* INTERP or JIT: the one running it */
	uint32_t insns;			/* as linked (subprograms appended) */
	uint32_t xlated_insns;		/* after the fixups */
	uint32_t jit_size;		/* bytes of machine code; 0: interpreted */
	/* What the safety pass found: memory accesses in the program, those
	 * proven in bounds, those checked at run time, back edges counted. */
	uint32_t accesses;
	uint32_t proven;
	uint32_t checked;
	uint32_t back_edges;
	/* Counters, summed over threads (each thread's are exact; the sum
	 * is a snapshot while traffic flows). */
	uint64_t runs;
	uint64_t aborted;		/* runs ending XDP_ABORTED, faults too */
	uint64_t faults;		/* runs a fault ended */
	/* The last fault: its kind (enum uxdp_bpf_fault, NONE if there was
	 * none) and the instruction's index as linked (before the fixups),
	 * as a refusal would name it. */
	uint32_t last_fault;
	uint32_t last_fault_insn;
};
#define uxdp_bpf_prog_info__last_field last_fault_insn

/*
 * Fill @info for @prog, a program of a loaded object. -EINVAL if @prog is
 * not one (a C program) or @info is bad. The first fault of a program is
 * also printed once (UXDP_WARN) through the print callback, naming the
 * instruction.
 */
int uxdp_bpf_prog_info(const struct uxdp_prog *prog,
		       struct uxdp_bpf_prog_info *info);

/*
 * Program ids, as the kernel's: every loaded eBPF program has one, unique
 * in the process and never reused; 0 for what is no eBPF program. A
 * prog_array's values are ids (below). get_by_id: a new reference
 * (uxdp_prog_put() it), or NULL with errno ENOENT once the program is
 * gone (the kernel's BPF_PROG_GET_FD_BY_ID).
 */
uint32_t uxdp_bpf_prog_id(const struct uxdp_prog *prog);
struct uxdp_prog *uxdp_bpf_prog_get_by_id(uint32_t id);

/*
 * Run @prog on one packet, as BPF_PROG_TEST_RUN does for XDP: a copy of
 * data_in in a buffer of its own (256 bytes of headroom, the frame's
 * tailroom after it), run repeat times on the same buffer (the program's
 * changes carry over, as the kernel's), nothing transmitted or redirected.
 */
struct uxdp_bpf_test_run_opts {
	size_t sz;
	const void *data_in;
	uint32_t data_size_in;		/* at most 3520 (4096 - 256 - 320) */
	/*
	 * In: the first meta_size bytes of data_in are metadata (a multiple
	 * of 4, at most 252: the kernel's ctx_in.data). Out: the metadata
	 * the program left.
	 */
	uint32_t meta_size;
	/* Out: metadata and packet after the run (data_meta .. data_end).
	 * In: the room at data_out; on ENOSPC, data_size_out is the size
	 * needed and the first bytes are copied. NULL: not copied. */
	void *data_out;
	uint32_t data_size_out;
	/* The context's other fields (ctx_in): what the program reads. */
	uint32_t ingress_ifindex;
	uint32_t rx_queue_index;
	uint32_t repeat;		/* runs (0: one) */
	uint32_t retval;		/* out: the last run's verdict */
	uint32_t duration;		/* out: mean ns per run */
};
#define uxdp_bpf_test_run_opts__last_field duration

/*
 * Returns 0 (the verdict in retval, XDP_ABORTED for a fault, counted in the
 * program's info), -EINVAL (not a loaded eBPF program, bad sizes or
 * metadata, an opts.sz that does not reach duration: the results are
 * written), -ENOSPC (data_out too small: see above), -ENOMEM.
 */
int uxdp_bpf_prog_test_run(const struct uxdp_prog *prog,
			   struct uxdp_bpf_test_run_opts *opts);

/* ---- maps ----------------------------------------------------------------------- */

/* Iterate (NULL gives the first) or find by name (NULL, ENOENT). Global
 * data are maps too, named by libbpf: "<obj>.rodata", "<obj>.data",
 * "<obj>.bss" (the object's name cut to 8), and a section of its own by
 * the section's name (".rodata.cfg", ".data.ports"). */
struct uxdp_bpf_map *uxdp_bpf_object_next_map(const struct uxdp_bpf_object *obj,
					      const struct uxdp_bpf_map *prev);
struct uxdp_bpf_map *uxdp_bpf_object_find_map(const struct uxdp_bpf_object *obj,
					      const char *name);

const char *uxdp_bpf_map_name(const struct uxdp_bpf_map *map);
uint32_t uxdp_bpf_map_type(const struct uxdp_bpf_map *map);	/* BPF_MAP_TYPE_* */
uint32_t uxdp_bpf_map_key_size(const struct uxdp_bpf_map *map);
uint32_t uxdp_bpf_map_value_size(const struct uxdp_bpf_map *map);
uint32_t uxdp_bpf_map_max_entries(const struct uxdp_bpf_map *map);
uint32_t uxdp_bpf_map_flags(const struct uxdp_bpf_map *map);	/* BPF_F_* */

/*
 * Global data (.rodata, .data, .bss, .rodata.*, .data.*, .kconfig) as
 * libbpf's skeletons see it: before load, the initial value, writable (the
 * object's defaults; what is written here is what the program starts
 * with); after load, the live value of .data and .bss (writes are seen by
 * the program), and NULL with errno EPERM for .rodata and .kconfig, which
 * are frozen (the safety pass may rely on them). *@size gets the size.
 * NULL with errno EINVAL for a map that is not global data.
 */
void *uxdp_bpf_map_initial_value(struct uxdp_bpf_map *map, size_t *size);

/*
 * Possible CPUs for per-CPU maps: UXDP_MAX_THREADS. A per-CPU value as the
 * control plane passes it holds one slot per possible CPU, each
 * value_size rounded up to 8 bytes, CPU 0 first (the kernel's layout for
 * a user).
 */
int uxdp_bpf_num_possible_cpus(void);

/*
 * The control plane, as the bpf() commands of the same names: the kernel's
 * flags (BPF_ANY, BPF_NOEXIST, BPF_EXIST, BPF_F_LOCK) and errors. For
 * arrays: a key out of range is -ENOENT for lookup and -E2BIG for update;
 * update with BPF_NOEXIST is -EEXIST; delete is -EINVAL; get_next_key of
 * NULL or an out-of-range key gives key 0, of the last key -ENOENT. For
 * hashes: lookup and delete of a missing key -ENOENT; update BPF_NOEXIST
 * of a key there -EEXIST, BPF_EXIST of one not there -ENOENT, a new key
 * in a full map -E2BIG (an LRU hash evicts an element instead);
 * get_next_key of NULL or a missing key gives the first key
 * (docs/semantics.md, "Hash maps"). For a prog_array the value is a
 * program's id (uxdp_bpf_prog_id(): where the kernel's update takes a
 * file descriptor, its lookup too gives the id): update takes BPF_ANY
 * only (else -EINVAL), a slot out of range is -E2BIG, an id no program
 * has -ENOENT, a program of another kind than the array's (the first one
 * in, or the first loaded program that tail-calls through it, sets JIT
 * or interpreter and xdp.frags) -EINVAL; lookup and delete of an empty
 * slot -ENOENT; a change waits for a grace period (the old program is
 * put after it), so from inside a poll or a run it is -EDEADLK. A
 * prog_array is emptied when its object is closed (as the kernel's when
 * its last user reference goes). Flags
 * other than these, or BPF_F_LOCK on a value without a spin lock:
 * -EINVAL. A frozen map (.rodata, .kconfig) or one with BPF_F_RDONLY:
 * update -EPERM. Before load, or for a map the load left out (a type
 * uxdp does not have, used by no loaded program): -EINVAL.
 * Safe from any thread while programs run, with no lock the datapath
 * waits on. An array's or a per-CPU hash's update is not atomic with a
 * program's reads of the same value (as the kernel's); a hash's replaces
 * the element, so a program sees the old value or the new one, whole.
 */
int uxdp_bpf_map_lookup(const struct uxdp_bpf_map *map, const void *key,
			void *value, uint64_t flags);
int uxdp_bpf_map_update(struct uxdp_bpf_map *map, const void *key,
			const void *value, uint64_t flags);
int uxdp_bpf_map_delete(struct uxdp_bpf_map *map, const void *key);
int uxdp_bpf_map_get_next_key(const struct uxdp_bpf_map *map,
			      const void *key, void *next_key);

/*
 * Queues and stacks (BPF_MAP_TYPE_QUEUE, _STACK) have no keys: @key is
 * NULL (a key is -EINVAL). update pushes (BPF_ANY; BPF_EXIST into a full
 * map drops the oldest value; full without it -E2BIG; BPF_NOEXIST or
 * other flags -EINVAL), lookup peeks, lookup_and_delete pops (flags 0);
 * a peek or pop of an empty map is -ENOENT. delete and get_next_key are
 * -EINVAL. lookup_and_delete of other types is -EOPNOTSUPP (the kernel
 * has it for hashes too; uxdp not yet).
 */
int uxdp_bpf_map_lookup_and_delete(struct uxdp_bpf_map *map, const void *key,
				   void *value, uint64_t flags);

/*
 * A map of no object (the kernel's bpf_map_create): to put in an of-map,
 * or for a control plane's own use; close it with uxdp_bpf_map_close().
 * The definition is checked as an object's map's (the kernel's errors);
 * NULL with errno and uxdp_errmsg() otherwise. An of-map itself comes
 * from an object only (its inner definition is the object's BTF).
 */
struct uxdp_bpf_map *uxdp_bpf_map_open(uint32_t type, const char *name,
				       uint32_t key_size, uint32_t value_size,
				       uint32_t max_entries,
				       uint32_t map_flags);
/* Let go of a map from uxdp_bpf_map_open() or uxdp_bpf_map_get_by_id():
 * it lives on while an of-map (or its object) holds it. */
void uxdp_bpf_map_close(struct uxdp_bpf_map *map);
/*
 * Map ids, as the kernel's: every created map has one, unique in the
 * process and never reused; an of-map's values are ids. get_by_id: a new
 * reference (uxdp_bpf_map_close() it), or NULL with errno ENOENT.
 */
uint32_t uxdp_bpf_map_id(const struct uxdp_bpf_map *map);
struct uxdp_bpf_map *uxdp_bpf_map_get_by_id(uint32_t id);

/*
 * An XSKMAP's slot @key holds AF_XDP socket @xsk (NULL empties it): what
 * the kernel's update with the socket's descriptor does (a uxdp socket
 * has none; uxdp_bpf_map_update on an xskmap is -EOPNOTSUPP). A socket
 * destroyed while in the map leaves it. 0, -EINVAL (not a loaded
 * xskmap), -E2BIG.
 */
struct uxdp_xsk;
int uxdp_bpf_xskmap_set(struct uxdp_bpf_map *map, uint32_t key,
			struct uxdp_xsk *xsk);

/* ---- perf buffers: a PERF_EVENT_ARRAY's samples (libbpf's perf_buffer) --------- */

/*
 * What bpf_perf_event_output() sends, read as libbpf's perf_buffer reads
 * it. A buffer puts a ring in every slot of @map below its max_entries and
 * uxdp_bpf_num_possible_cpus() (uxdp's CPUs are thread indices: a program
 * on thread i writes slot i with BPF_F_CURRENT_CPU, and another CPU's slot
 * is -EOPNOTSUPP, as the kernel's perf event on another CPU), each ring
 * @page_cnt pages of 4 KiB (a power of two, as libbpf's).
 *
 * sample_cb gets a sample's bytes as libbpf's does: the program's data,
 * then the packet's bytes the flags asked for (bits 32..51), zero-padded
 * so that 4 + size is a multiple of 8 (size is the padded one). lost_cb
 * (may be NULL) gets how many samples a full ring lost, after that ring's
 * samples. Both run on the thread that polls or consumes; one thread at a
 * time may (as libbpf's).
 *
 * new: NULL with errno and uxdp_errmsg(): EINVAL (not a loaded
 * perf_event_array, no sample_cb, page_cnt not a power of two or above
 * 65536), ENOMEM. A new buffer on the same map takes its slots over.
 * poll: waits up to @timeout_ms (-1: for ever, 0: not at all) for a sample,
 * then hands every sample to the callbacks: how many, 0 on time-out, or
 * -errno (-EINTR). consume: the same without waiting. free: 0, or -EDEADLK
 * from inside a poll or a program run (it waits for the runs that may be
 * writing; nothing is freed then). The buffer holds a reference on the
 * map: it may outlive the map's object.
 */
struct uxdp_bpf_perf_buffer;
typedef void (*uxdp_bpf_perf_sample_fn)(void *ctx, int cpu, void *data,
					uint32_t size);
typedef void (*uxdp_bpf_perf_lost_fn)(void *ctx, int cpu, uint64_t cnt);

struct uxdp_bpf_perf_buffer *
uxdp_bpf_perf_buffer_new(struct uxdp_bpf_map *map, size_t page_cnt,
			 uxdp_bpf_perf_sample_fn sample_cb,
			 uxdp_bpf_perf_lost_fn lost_cb, void *ctx);
int uxdp_bpf_perf_buffer_poll(struct uxdp_bpf_perf_buffer *pb, int timeout_ms);
int uxdp_bpf_perf_buffer_consume(struct uxdp_bpf_perf_buffer *pb);
int uxdp_bpf_perf_buffer_free(struct uxdp_bpf_perf_buffer *pb);

/* ---- ring buffers: a RINGBUF's records (libbpf's ring_buffer) ----------------- */

/*
 * What bpf_ringbuf_output() writes, read as libbpf's ring_buffer reads it:
 * one ring for every thread's programs, records in the order their space
 * was taken, each to sample_cb with the program's bytes and their exact
 * size; a callback's negative result stops the call and is returned (the
 * record counts as read). new: a buffer reading @map (add: one more map);
 * NULL with errno / -errno and uxdp_errmsg(): EINVAL (not a loaded
 * ringbuf, no sample_cb), ENOMEM. poll: waits up to @timeout_ms (-1: for
 * ever, 0: not at all) for a record, then reads every map: how many
 * records, 0 on time-out, or -errno. consume: the same without waiting.
 * One thread at a time may poll or consume a map (as libbpf's). The
 * buffer holds a reference on each map: it may outlive the object.
 */
struct uxdp_bpf_ring_buffer;
typedef int (*uxdp_bpf_ring_sample_fn)(void *ctx, void *data, size_t size);

struct uxdp_bpf_ring_buffer *
uxdp_bpf_ring_buffer_new(struct uxdp_bpf_map *map,
			 uxdp_bpf_ring_sample_fn sample_cb, void *ctx);
int uxdp_bpf_ring_buffer_add(struct uxdp_bpf_ring_buffer *rb,
			     struct uxdp_bpf_map *map,
			     uxdp_bpf_ring_sample_fn sample_cb, void *ctx);
int uxdp_bpf_ring_buffer_poll(struct uxdp_bpf_ring_buffer *rb, int timeout_ms);
int uxdp_bpf_ring_buffer_consume(struct uxdp_bpf_ring_buffer *rb);
void uxdp_bpf_ring_buffer_free(struct uxdp_bpf_ring_buffer *rb);

#ifdef __cplusplus
}
#endif

#endif /* UXDP_BPF_H */
