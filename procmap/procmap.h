/*
 * Processes and their memory maps over time, fed with the reader's records in
 * time order, so that every sampled address resolves to the mapping that was
 * live in that process when the sample was taken.
 *
 * FORK copies the parent's address space (a thread, pid == ppid, shares it;
 * the copy shares the parent's intervals until either of them maps something),
 * COMM with the exec flag starts a new generation with an empty space, EXIT
 * marks a process exited but keeps it for samples that arrive late. A later
 * FORK or exec of the same pid starts a new process, so pid reuse never mixes
 * two processes. MMAP/MMAP2 insert a mapping and cut whatever it overlaps.
 * The kernel and its modules (pid -1) live in one kernel space shared by all.
 */
#ifndef CONV_PROCMAP_PROCMAP_H
#define CONV_PROCMAP_PROCMAP_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdr_event;
struct rdr_build_id;
struct procmap;

#define PM_NO_MAPPING UINT32_MAX
#define PM_BUILD_ID_MAX 20

enum pm_kind {
	PM_KIND_FILE,   /* a mapped file */
	PM_KIND_ANON,   /* anonymous or special ([heap], //anon, memfd) */
	PM_KIND_KERNEL, /* the kernel image */
	PM_KIND_MODULE, /* a kernel module */
	PM_KIND_VDSO,   /* [vdso], [vsyscall] */
	PM_KIND_BPF,    /* a BPF program (KSYMBOL) */
	PM_KIND_JIT,    /* anonymous executable memory: JIT code, named by /tmp/perf-PID.map */
};

/*
 * Where a mapping's identity came from: its build-id, or (DISK, PATH,
 * PATH_UNVERIFIED without one: a Go binary has no GNU build-id) the file
 * at its recorded path, which then is the mapped object. Most
 * authoritative first, but for PATH_UNVERIFIED (added last, so that the
 * names keep their order in the statistics).
 */
enum pm_bid_source {
	PM_BID_NONE,
	PM_BID_MMAP2, /* inline in the MMAP2 record */
	PM_BID_TABLE, /* the file's build-id table (feature section or pipe records) */
	PM_BID_DISK,  /* the file at the recorded path, mapped one and unchanged (--buildid-from-disk) */
	PM_BID_PATH,  /* the same, the recording made here: device, inode and generation match (MMAP2) */
	/*
	 * The same for an MMAP record, which names no inode: on the recording
	 * machine, unchanged since the recording and the mapping starts inside
	 * the file, as perf takes the file at the path
	 */
	PM_BID_PATH_UNVERIFIED,
	PM_BID__COUNT
};

/*
 * What the file at a mapping's recorded path was found to be, for saying
 * why an object without a build-id has no names (and which option helps).
 */
enum pm_path_check {
	PM_PATH_UNTRIED,    /* not looked at: the mapping has a build-id, or is no file's */
	PM_PATH_ELSEWHERE,  /* the recording names another machine (hostname or kernel release) */
	PM_PATH_DIFFERS,    /* this machine, but the build-ids it recorded differ from the files here */
	PM_PATH_MISSING,    /* no file at the path */
	PM_PATH_UNREADABLE, /* a file that cannot be read, or no ELF file */
	PM_PATH_CHANGED,    /* another file (device, inode, generation), or written since the recording */
	PM_PATH_OK,         /* the mapped file: identity from it (see bid_source) */
};

struct pm_mapping {
	uint32_t id;        /* index, 0..procmap_mapping_count()-1 */
	uint32_t proc;      /* process index, or PM_KERNEL_PROC */
	uint64_t start;     /* as recorded */
	uint64_t limit;     /* start + len */
	uint64_t pgoff;     /* as recorded (for the kernel: the runtime address of _text) */
	const char *path;   /* as recorded */
	const char *dso;    /* perf's DSO name: path, [kernel.kallsyms], [module], [vdso], [JIT] tid PID */
	enum pm_kind kind;
	bool exec;          /* PROT_EXEC (kernel, modules, vdso and BPF count as exec) */
	uint32_t prot, flags;
	bool has_inode;     /* MMAP2's device and inode form */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint64_t time;      /* when it was mapped (0 = synthesized at start) */
	uint8_t build_id[PM_BUILD_ID_MAX];
	uint8_t build_id_size;
	enum pm_bid_source bid_source;
	enum pm_path_check path_check;
	uint32_t jit_pid;   /* JIT: the pid whose perf-PID.map names this code */
	uint64_t samples;   /* samples whose leaf is here */
	uint64_t frames;    /* frames resolved here */
};

#define PM_KERNEL_PROC UINT32_MAX

struct pm_proc {
	uint32_t index;      /* 0..procmap_proc_count()-1 */
	uint32_t pid;
	uint32_t ppid;
	uint32_t generation; /* exec count within this pid's lineage (0 = as first seen) */
	const char *comm;    /* process name (main thread's) */
	bool exited;
	uint64_t samples;
};

enum pm_frame_flags {
	PM_FRAME_LEAF = 1u << 0,    /* the sampled IP (exact); others are callers */
	PM_FRAME_KERNEL = 1u << 1,  /* kernel address space */
	PM_FRAME_GUEST = 1u << 2,   /* a guest's address: not resolvable here */
	PM_FRAME_JIT = 1u << 3,     /* named by a perf-PID.map or jitdump entry (jit) */
};

struct jit_sym;

struct pm_frame {
	uint64_t addr;        /* leaf: the IP; callers: return address - 1 (inside the call) */
	uint32_t mapping;     /* PM_NO_MAPPING when in no mapping */
	uint32_t flags;       /* enum pm_frame_flags */
	uint64_t file_offset; /* addr - start + pgoff of the mapping */
	const struct jit_sym *jit; /* JIT symbol covering addr, or NULL (valid while the procmap lives) */
};

struct pm_stats {
	uint64_t samples;
	uint64_t samples_unknown_pid; /* no COMM/MMAP/FORK seen for the pid before */
	uint64_t frames;
	uint64_t frames_resolved;
	uint64_t frames_unmapped;
	uint64_t frames_exec_window;  /* user IPs of samples inside execve, found in the old image */
	uint64_t frames_guest;
	uint64_t frames_by_bid[PM_BID__COUNT]; /* resolved frames by their mapping's build-id source */
	uint64_t processes;
	uint64_t exec_generations;
	uint64_t threads;
	uint64_t mappings;
	uint64_t mappings_replaced; /* mappings cut or removed by a later overlapping one */
	uint64_t maps_timeout;      /* synthesized maps flagged as truncated by perf */
	uint64_t build_id_ambiguous; /* table keys with two different build-ids */
	uint64_t frames_jit;          /* frames named by a JIT symbol file */
	uint64_t jit_maps_loaded;     /* perf-PID.map files read */
	uint64_t jit_dumps_loaded;    /* jitdump files read */
	uint64_t jit_load_failures;   /* JIT files present but unreadable or refused */
	uint64_t jit_entries;         /* JIT symbols loaded */
};

struct procmap_opts {
	bool buildid_from_disk; /* read build-ids of mapped files from this machine's disk */
	bool running_kernel;    /* the recording's kernel is the one running here (same release) */
	/*
	 * The recording names this machine (hostname and kernel release): a
	 * mapped file without a recorded build-id may then be read at its path
	 * when its device, inode and generation (MMAP2) are the mapped file's and
	 * the build-ids the recording holds match the files here. In pipe mode
	 * the hostname comes later than the start: procmap_set_same_machine.
	 */
	bool same_machine;
	/* when the recording was last written (the input file's mtime), ns; 0: unknown */
	uint64_t recorded_by_ns;
	const char *kernel_notes; /* file with the running kernel's notes; NULL = /sys/kernel/notes */
	const char *jit_dir;      /* where perf-PID.map and jit-PID.dump files are; NULL = /tmp */
	bool jit_any_owner;       /* accept JIT files owned by other users (perf's -f) */
};

/* Returns NULL when out of memory. */
struct procmap *procmap_new(const struct procmap_opts *opts);
void procmap_free(struct procmap *pm);

/* The recording's build-id table (feature section or pipe records): consulted for mappings without an inline id. */
void procmap_add_build_ids(struct procmap *pm, const struct rdr_build_id *ids, size_t n);

/*
 * Applies a non-sample record (MMAP, MMAP2, COMM, FORK, EXIT, KSYMBOL); other
 * records are ignored. Records must come in time order (rdr_next's order).
 */
enum conv_err procmap_feed(struct procmap *pm, const struct rdr_event *ev);

/*
 * Resolves every frame of a SAMPLE: the leaf IP and the callchain (context
 * markers skipped, the chain's copy of the IP dropped, callers at return
 * address - 1). The frames stay valid until the next call. *proc gets the
 * process index.
 */
enum conv_err procmap_resolve(struct procmap *pm, const struct rdr_event *sample,
			      const struct pm_frame **frames, size_t *nr, uint32_t *proc);

/*
 * procmap_resolve with the kind of each chain entry given: bit i of exact
 * (one bit per callchain entry, NULL: none set) says callchain[i] is where
 * the thread was (a PC a signal interrupted, a branch's source), resolved as
 * it is; a clear bit leaves the entry to procmap_resolve's rule (a caller at
 * return address - 1).
 */
enum conv_err procmap_resolve_exact(struct procmap *pm, const struct rdr_event *sample,
				    const uint64_t *exact, const struct pm_frame **frames, size_t *nr,
				    uint32_t *proc);

/*
 * What procmap_resolve's answer depends on besides the sample's own fields
 * (cpumode, IP, callchain): the process generation of the pid and the
 * versions of its address space and of the kernel's, which change with
 * every mapping inserted. Two samples with equal keys and equal fields
 * resolve to the same frames, so a caller may resolve each distinct one
 * once. false when the pid has no process yet (procmap_resolve makes one).
 */
struct pm_space_key {
	uint32_t proc;
	uint64_t version;
	uint64_t kversion;
};
bool procmap_space_key(const struct procmap *pm, uint32_t pid, struct pm_space_key *key);

/*
 * All a sample's cache key needs of the process model, in one call: the
 * space key of its pid (has_proc false when the pid has no process yet)
 * and the name of its thread (procmap_thread_comm). key.kversion is 0 for
 * a sample without kernel frames (cpumode user, no PERF_CONTEXT_KERNEL in
 * its chain): procmap_resolve looks nothing up in the kernel's space for
 * it, so a kernel module or BPF program loaded since does not change its
 * frames. The thread remembers its process: a thread seen before costs one
 * hash lookup, not two.
 */
struct pm_sample_ctx {
	struct pm_space_key key;
	bool has_proc;
	uint32_t comm; /* PM_NO_COMM: none */
};
void procmap_sample_ctx(struct procmap *pm, const struct rdr_event *sample, struct pm_sample_ctx *ctx);

/*
 * Counts a sample of process proc that the caller resolved from an earlier
 * answer instead of procmap_resolve (which counts its own). Frame counters
 * (pm_stats.frames*, pm_mapping.frames/samples) count procmap_resolve calls.
 */
void procmap_count_sample(struct procmap *pm, uint32_t proc);

/* Says whether the recording's kernel is the one running here (known only once pipe metadata is read). */
void procmap_set_running_kernel(struct procmap *pm, bool running);

/*
 * Says whether the recording was made on this machine (procmap_opts.
 * same_machine), for a pipe recording once its hostname and kernel release
 * have come: before its first mapping (perf writes its features first).
 * Mappings fed before are looked at again by procmap_finish.
 */
void procmap_set_same_machine(struct procmap *pm, bool same);

/*
 * Whether the file at m's recorded path is m's object although m has no
 * build-id: it was shown to be the mapped file (bid_source DISK, PATH or
 * PATH_UNVERIFIED, build_id_size 0). Its frames may then be read from it.
 */
bool procmap_path_is_identity(const struct pm_mapping *m);

/*
 * Whether a and b map the same file as far as their records tell: the same
 * path, and the same device, inode and generation where both name them.
 */
bool procmap_same_file(const struct pm_mapping *a, const struct pm_mapping *b);

/* Attaches build-ids from the table (and disk) to mappings still without one. */
void procmap_finish(struct procmap *pm);

/*
 * The highest end of a user-space mapping fed so far (0: none): what bounds
 * the recording's user addresses (uw_va_bits_of), perf.data naming no
 * virtual-address width.
 */
uint64_t procmap_user_highest(const struct procmap *pm);
size_t procmap_mapping_count(const struct procmap *pm);
const struct pm_mapping *procmap_mapping(const struct procmap *pm, uint32_t id);
size_t procmap_proc_count(const struct procmap *pm);
const struct pm_proc *procmap_proc(const struct procmap *pm, uint32_t index);
/*
 * The mapping of user address addr in the current address space of pid
 * (as a sample's frames are looked up now); PM_NO_MAPPING when none.
 */
uint32_t procmap_lookup(const struct procmap *pm, uint32_t pid, uint64_t addr);
/*
 * The current address space of pid, for many lookups in it (procmap_lookup
 * finds it for each); NULL when the pid has no process. Valid until the
 * next procmap_feed or procmap_resolve*.
 */
struct pm_space;
const struct pm_space *procmap_space(const struct procmap *pm, uint32_t pid);
/*
 * The mapping of addr in space s (PM_NO_MAPPING: none, *lo = *hi = 0), and
 * the range [*lo, *hi) around addr where every address has that mapping.
 */
uint32_t procmap_space_lookup(const struct pm_space *s, uint64_t addr, uint64_t *lo, uint64_t *hi);
/* Name of the thread tid (its latest COMM), or NULL. */
const char *procmap_thread_name(const struct procmap *pm, uint32_t tid);
/*
 * The same as a number that stays the name's while the procmap lives
 * (PM_NO_COMM: none), for keys that must tell a thread's names over time
 * apart; procmap_comm_str() gives the name back.
 */
#define PM_NO_COMM UINT32_MAX
uint32_t procmap_thread_comm(const struct procmap *pm, uint32_t tid);
const char *procmap_comm_str(const struct procmap *pm, uint32_t comm);
const struct pm_stats *procmap_stats(const struct procmap *pm);
const char *procmap_bid_source_name(enum pm_bid_source s);

#endif
