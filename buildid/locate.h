/*
 * Local debug-file locators: given a GNU build-id (and the path perf
 * recorded), find on this machine a file with the debug info for it and a
 * copy of the runtime binary whose program headers give the address mapping.
 *
 * Every candidate is checked before it is returned: it must be a regular ELF
 * file (symlinks are followed; nothing else is ever opened, core/ropen.h)
 * whose GNU build-id equals the one asked for.
 * The only exception is a .gnu_debuglink target without a build-id note,
 * which is accepted on its CRC32 alone (what GDB and libdwfl do). A candidate
 * that fails a check is skipped and counted in the optional struct loc_stats.
 *
 * Build-id hex is lowercase; NN is the first byte, REST the others. The
 * directories below are written for the debug-info search; the binary search
 * uses the same places with the runtime file names (see loc_find_binary).
 *
 *   1. each --debug-dir DIR, in the order given:
 *      a. build-id trees: DIR/.build-id/NN/REST.debug, then DIR/NN/REST.debug
 *         (DIR is itself the .build-id directory)
 *      b. perf's cache layout under ROOT = DIR, then ROOT = DIR/.debug (a
 *         home-style directory): ROOT/.build-id/NN/REST is a symlink to
 *         ROOT/<path>/<hex>/, a directory holding `debug`, `elf` or `vdso`
 *         (tried in that order); in older perf the entry was a regular file
 *         (or a link to one), which is then the candidate itself; the same
 *         with DIR as perf's .build-id directory (DIR/NN/REST)
 *      c. an unpacked `perf archive` is the tree of b; when its .build-id
 *         link is missing or dangling, ROOT/<recorded path>/<hex>/ is tried
 *         directly, right after b for the same ROOT ("[vdso]" and other
 *         pseudo names included)
 *      d. DIR as a sysroot: DIR/<recorded path>.debug, DIR/<recorded path>;
 *         as a flat folder: DIR/<basename>.debug, DIR/<basename> (without a
 *         build-id to verify them, only files that resolve inside DIR)
 *   2. the system directory (/usr/lib/debug): SYS/.build-id/NN/REST.debug
 *   3. perf's cache (~/.debug), laid out as in 1b and 1c
 *   4. the .gnu_debuglink of the recorded binary (when its build-id matches):
 *      the named file in the binary's directory, in its .debug/ subdirectory
 *      and in SYS/<binary's directory>/, then the same for the directory with
 *      symlinks resolved; the CRC32 of the whole file must equal the link's,
 *      and its build-id, when it has one, must match too
 *   5. the recorded path itself
 *
 * The library never prints, never reads $PERF_BUILDID_DIR and keeps no state:
 * calls may run in parallel as long as each has its own out, stats and diag.
 */
#ifndef CONV_BUILDID_LOCATE_H
#define CONV_BUILDID_LOCATE_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conv_diag;

/* Where a file was found; loc_source_name() gives stable names for stats. */
enum loc_source {
	LOC_NONE,
	LOC_ORIGINAL,   /* the recorded path, build-id verified (unless path-only mode) */
	LOC_DEBUG_DIR,  /* --debug-dir */
	LOC_SYSTEM,     /* /usr/lib/debug (or loc_opts.system_debug_dir) */
	LOC_PERF_CACHE, /* ~/.debug */
	LOC_DEBUGLINK,  /* .gnu_debuglink of the recorded binary */
	LOC__COUNT
};

/* All strings are borrowed for the duration of a call. */
struct loc_opts {
	const char *const *debug_dirs; /* --debug-dir, searched first, in order */
	size_t nr_debug_dirs;
	const char *home;             /* perf cache = HOME/.debug; NULL: $HOME; "": skip */
	const char *perf_cache_dir;   /* overrides HOME/.debug (perf's buildid.dir or
					 $PERF_BUILDID_DIR, read by the caller); "": skip */
	const char *system_debug_dir; /* NULL: /usr/lib/debug; "": skip (with the debuglink
					 search in it) */
	bool use_original_path;       /* try the recorded path and its .gnu_debuglink */
};

/*
 * Why candidates were skipped. Counters only grow, so one struct can sum many
 * calls; the caller zeroes it. A file reachable by two paths counts twice.
 */
struct loc_stats {
	uint64_t probed;         /* candidate regular files looked at */
	uint64_t wrong_build_id; /* another build-id, or none where one is required */
	uint64_t bad_crc;        /* .gnu_debuglink targets whose CRC32 differs */
	uint64_t no_symbols;     /* right build-id, but neither .debug_info nor .symtab */
	uint64_t debug_only;     /* loc_find_binary: debug-only file (objcopy --only-keep-debug,
				    eu-strip -f) refused: its program headers are not the runtime's */
	uint64_t unreadable;     /* exists but cannot be opened or is not ELF */
	uint64_t path_too_long;  /* a candidate path did not fit in 4096 bytes: not tried */
	uint64_t not_regular;    /* a FIFO, device or socket where a file was looked for: not opened */
	uint64_t outside_dir;    /* path-only mode: DIR/<recorded path> or DIR/<basename> resolves
				    outside DIR (`..`, a symlink out): not taken unverified */
};

struct loc_result {
	char path[4096];        /* as built from the search roots (not canonicalized) */
	enum loc_source source;
	bool has_debug_info;    /* .debug_info (or .zdebug_info) with contents, not just .symtab */
	bool has_symtab;        /* .symtab with contents */
	bool build_id_verified; /* false only for a debuglink target without a build-id note,
				   or in path-only mode (len == 0) */
};

/*
 * Debug info for a build-id: the first file in the order above whose build-id
 * equals bid and that has .debug_info; if no candidate has it, the first one
 * with at least a .symtab. orig_path is the path perf recorded (may be NULL or
 * a pseudo name like "[vdso]"; only absolute paths are opened as such).
 *
 * len == 0 is path-only mode for mappings that perf recorded without a
 * build-id: only the recorded path (unverified; with use_original_path), its
 * .gnu_debuglink (CRC verified, and its build-id checked against the
 * binary's when both have one) and, in each debug dir, DIR/<recorded path>
 * and DIR/<basename> (the user named the folder) are tried, each only when
 * it resolves to a file inside DIR (no `..` or symlink out of it: the
 * recording names the path; counted as outside_dir); needs an absolute
 * orig_path.
 *
 * Returns CONV_E_OK with *out filled; CONV_E_NOTFOUND when no candidate
 * qualified; CONV_E_LIMIT when none qualified and some candidate path was too
 * long to build (diag names it); CONV_E_INVAL for bad arguments (o or out
 * NULL, len > BUILDID_MAX, bid NULL with len > 0); CONV_E_NOMEM. On any
 * error (out not NULL) out->source is LOC_NONE and out->path is "".
 * Unreadable candidates are skipped, never fatal. stats and diag may be NULL.
 */
enum conv_err loc_find_debug(const struct loc_opts *o, const uint8_t *bid, size_t len,
			     const char *orig_path, struct loc_result *out,
			     struct loc_stats *stats, struct conv_diag *diag);

/*
 * The runtime binary, whose PT_LOAD program headers give the address mapping.
 * Tried in order: the recorded path (use_original_path); in each debug dir
 * .build-id/NN/REST (no .debug suffix: Fedora links it to the binary), the
 * perf cache layouts of 1b-1c with the names `elf` and `vdso`, and of 1d
 * only DIR/<recorded path> and DIR/<basename>; SYS/.build-id/NN/REST; perf's
 * cache. All copies have the same build-id, so the order only decides the
 * reported source. A debug-only file
 * (an executable section of type SHT_NOBITS, or an executable PT_LOAD with
 * p_filesz 0) is never returned, whatever its name. has_debug_info and
 * has_symtab describe the file returned. Errors as for loc_find_debug; path-
 * only mode tries just the recorded path.
 */
enum conv_err loc_find_binary(const struct loc_opts *o, const uint8_t *bid, size_t len,
			      const char *orig_path, struct loc_result *out,
			      struct loc_stats *stats, struct conv_diag *diag);

/* "none", "original", "debug_dir", "system", "perf_cache", "debuglink"; never NULL. */
const char *loc_source_name(enum loc_source s);

#endif
