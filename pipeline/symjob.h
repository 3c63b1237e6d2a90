/*
 * Symbolization of a whole recording: the frames of every sample are
 * registered here during the reading pass (each unique (object, file offset)
 * once), then symjob_run() finds each object's debug info and resolves its
 * addresses, objects in parallel. The pipeline is the only code that knows
 * the process model (procmap) and the symbolizer together.
 */
#ifndef CONV_PIPELINE_SYMJOB_H
#define CONV_PIPELINE_SYMJOB_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symjob;
struct symjob_stats;
struct procmap;
struct sym_frame;
struct dfd_server;
struct symjob_progress;
struct objtab;

#define SYMJOB_NONE UINT32_MAX

/* Where a frame's symbols came from. */
enum symsrc {
	SYMSRC_UNRESOLVED,
	SYMSRC_LOCAL,      /* the recorded path on this machine (build-id verified) */
	SYMSRC_DEBUG_DIR,  /* --debug-dir */
	SYMSRC_SYSTEM,     /* /usr/lib/debug */
	SYMSRC_PERF_CACHE, /* ~/.debug */
	SYMSRC_DEBUGLINK,  /* .gnu_debuglink next to a local binary */
	SYMSRC_DEBUGINFOD, /* downloaded or from the debuginfod cache */
	SYMSRC_SYMTAB,     /* only a symbol table was found: names, no lines */
	SYMSRC_KALLSYMS,   /* kernel symbols */
	SYMSRC_JIT,        /* perf-PID.map / jitdump (counted by the caller) */
	SYMSRC__COUNT
};

struct symjob_opts {
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	const char *const *debuginfod_urls; /* none: $DEBUGINFOD_URLS; none there: no network */
	size_t nr_debuginfod_urls;
	const char *cache_dir;
	bool offline;
	uint64_t max_download;    /* bytes; 0: $DEBUGINFOD_MAXSIZE, else 4 GiB */
	long timeout_s;           /* debuginfod: seconds without progress; 0: $DEBUGINFOD_TIMEOUT, else 90 */
	long deadline_s;          /* debuginfod: every download over this long after the start; 0: 300 */
	const char *kallsyms;     /* --kallsyms FILE */
	bool running_kernel;      /* the recording's kernel is running here: /proc/kallsyms may be used */
	unsigned jobs;            /* threads; 0 = number of CPUs */
	bool no_symbolize;        /* no symbols: only the recorded binaries' program headers */
	bool full_signatures;     /* C++ names with return type and parameters, not perf's form */
	/*
	 * look nothing up: tell the run's object table (objects, required)
	 * which addresses of which symbol file this input will ask
	 * (objtab_sym_want), for a run that reads its inputs twice
	 */
	bool plan;
	/*
	 * the run's object table, shared with the run's other inputs (borrowed);
	 * NULL: the job's own, which keeps nothing past its use
	 */
	struct objtab *objects;
	/* download progress (called on the thread that calls symjob_add/symjob_run) */
	void (*progress)(void *ctx, const struct symjob_progress *p);
	void *progress_ctx;
};

/* What debuginfod is doing, for a progress line; valid during the call only. */
struct symjob_progress {
	const char *build_id;   /* the file this is about (lowercase hex) */
	uint64_t received;      /* body bytes of its transfer so far */
	uint64_t total;         /* its Content-Length, 0 = unknown */
	unsigned active;        /* transfers in flight */
	unsigned queued;        /* requests waiting for a transfer slot */
	bool done;              /* that file's request just finished */
	uint64_t waited_ms;     /* > 0: symbolization is blocked on debuginfod, this long so far */
	const struct symjob_stats *st; /* the debuginfod counters so far, as symjob_stats will hold them */
};

struct symjob_stats {
	uint64_t objects;            /* distinct objects with frames */
	uint64_t objects_found;      /* objects whose debug info or symbols were found */
	uint64_t addresses;          /* distinct addresses */
	uint64_t frames_by_src[SYMSRC__COUNT]; /* registered frames (with repeats) by source */
	uint64_t normalize_failed;   /* addresses outside every PT_LOAD of their object */
	uint64_t inline_frames;      /* extra frames from inlining, over distinct addresses */
	uint64_t dfd_fetched, dfd_cache_hits, dfd_not_found, dfd_errors, dfd_bytes;
	uint64_t dfd_not_asked;      /* not in a cache, and no server to ask (dfd_servers 0) */
	uint64_t dfd_servers;        /* servers that could be asked: 0 offline or none configured */
	uint64_t dfd_servers_down;   /* of those, given up (symjob_dfd_server says which, why) */
	uint64_t dfd_skipped;        /* requests a server given up was then not asked */
	uint64_t dfd_untrusted;      /* requests whose cache entry was passed over as not trusted */
};

/* An object whose debug info was not found, with how many frames it had. */
struct symjob_missing {
	const char *build_id; /* lowercase hex, "" when the mapping had none */
	const char *path;
	uint64_t frames;
	const char *reason;   /* for the unresolved list: why its frames have no names */
};

struct symjob_result {
	enum symsrc src;
	uint32_t nr;                    /* 0 when unresolved */
	const struct sym_frame *frames; /* innermost first; strings live as long as the job */
	/*
	 * per frame, its function's number (symjob_function), SYMJOB_NONE for
	 * none; NULL when no frame has one
	 */
	const uint32_t *funcs;
	uint64_t elf_va;                /* for user objects; kernel: the address */
	bool normalized;
};

/*
 * A function of the results: a frame's (function, system_name, file,
 * start_line), its strings by number. Numbers are dense over the job (below
 * symjob_string_count, symjob_function_count): one number is always one
 * string, one function, so a caller that interns them itself can do so once
 * per number instead of once per frame. Equal strings (functions) of two
 * objects may have two numbers.
 */
struct symjob_function {
	uint32_t function, system_name, file; /* string numbers */
	uint32_t start_line;
};

/* Errors: CONV_E_NOMEM; CONV_E_INVAL for a bad debuginfod URL or no usable cache dir (diag says). */
enum conv_err symjob_new(struct symjob **out, const struct symjob_opts *o, const struct procmap *pm,
			 struct conv_diag *diag);
void symjob_free(struct symjob *j);

/*
 * Registers a frame in mapping `mapping` at file offset `f_off`; returns its
 * address id (the same id for the same object and offset).
 */
uint32_t symjob_add(struct symjob *j, uint32_t mapping, uint64_t f_off);
/* What an address registered with symjob_add_as is. */
enum symjob_addr_mode {
	SYMJOB_FILE_OFFSET,  /* an offset in the mapped file (symjob_add) */
	SYMJOB_ELF_VA,       /* the ELF virtual address in the object (conv's remote JFR frames) */
	SYMJOB_IMAGE_OFFSET  /* an offset from where file offset 0 is mapped (Datadog's remote frames) */
};
/*
 * The same for an address known otherwise than by its file offset: a
 * profile's remote frames. User objects only (SYMJOB_NONE for the kernel's).
 */
uint32_t symjob_add_as(struct symjob *j, uint32_t mapping, uint64_t value, enum symjob_addr_mode mode);

/*
 * The object of a mapping, found as symjob_add finds it (SYMJOB_NONE: no
 * file behind it), with the files located for it: the runtime binary (its
 * program headers and .eh_frame; downloaded first when only debuginfod has
 * it) and the debug file, each NULL when there is none. For the reading
 * pass, which needs an object's CFI before symbolization.
 */
uint32_t symjob_object_files(struct symjob *j, uint32_t mapping, const char **runtime,
			     const char **debug);
/* Counts n samples with a frame at addr_id (for the statistics). */
void symjob_hit(struct symjob *j, uint32_t addr_id, uint64_t n);

/* Known only once pipe metadata has been read: whether the recorded kernel runs here. */
void symjob_set_running_kernel(struct symjob *j, bool running);

/* Finds debug info and resolves every registered address: symjob_start, then symjob_finish. */
enum conv_err symjob_run(struct symjob *j, struct conv_diag *diag);

/*
 * The same in two steps, so that the caller's thread can do other work
 * meanwhile: symjob_start waits for debuginfod's downloads, then starts
 * the workers beside the caller (jobs - 1 of them; none with one job) and
 * returns; symjob_finish makes the caller the last worker and returns when
 * every address is resolved. Between the two the caller must not call
 * symjob_add (the workers read the registered addresses) nor change the
 * procmap (they read its mappings).
 */
void symjob_start(struct symjob *j);
enum conv_err symjob_finish(struct symjob *j, struct conv_diag *diag);

const struct symjob_result *symjob_get(const struct symjob *j, uint32_t addr_id);
/*
 * For a mapping recorded without a build-id, the GNU build-id of the runtime
 * file found for it (at its path in a -d folder, or the recorded path on the
 * recording's machine): its length, 0 when there is none (also for mappings
 * with a recorded build-id, and ones no address was added for). *bid is
 * borrowed from the job.
 */
/* The object table the job opens its files through (symjob_opts.objects or its own). */
struct objtab *symjob_objects(const struct symjob *j);
size_t symjob_file_build_id(const struct symjob *j, uint32_t mapping, const uint8_t **bid);
/* Function number id (from symjob_result.funcs) after symjob_finish; NULL when out of range. */
const struct symjob_function *symjob_function(const struct symjob *j, uint32_t id);
size_t symjob_function_count(const struct symjob *j);
size_t symjob_string_count(const struct symjob *j);
const struct symjob_stats *symjob_stats(const struct symjob *j);
size_t symjob_missing_count(const struct symjob *j);
const struct symjob_missing *symjob_missing_at(const struct symjob *j, size_t i);
/* Objects with frames left without a name (found or not), frames = those frames. */
size_t symjob_unresolved_count(const struct symjob *j);
const struct symjob_missing *symjob_unresolved_at(const struct symjob *j, size_t i);
const char *symjob_src_name(enum symsrc s);
/*
 * debuginfod server i (< symjob_stats' dfd_servers) and whether it was
 * given up in this run (buildid/debuginfod.h); NULL past the last.
 */
const struct dfd_server *symjob_dfd_server(const struct symjob *j, size_t i);

#endif
