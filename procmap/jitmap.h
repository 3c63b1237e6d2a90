/*
 * Symbols of JIT-compiled code, from the two files perf itself reads:
 *
 *   perf-<pid>.map  text, one "START SIZE NAME" per line (JVM with
 *                   -XX:+DumpPerfMapAtExit, CPython 3.12 -X perf, Node
 *                   --perf-basic-prof, ...)
 *   jit-<pid>.dump  binary jitdump (perf's libperf-jvmti, CPython 3.13
 *                   -X perf_jit, Node --perf-prof, ...)
 *
 * Both go into one table of non-overlapping address ranges. A table has no
 * notion of time: entries are applied in file order and a later entry that
 * overlaps earlier ones replaces them on the overlapped part, which is what
 * a runtime means when it reuses code memory. What is left of an earlier
 * entry keeps its name, with code_start still saying where it began.
 *
 * Ownership: the table owns everything it hands out. Names, file names and
 * line tables live until jit_table_release(); the syms array is rebuilt by
 * every parse or load call, so pointers into it are valid only until the
 * next one.
 */
#ifndef CONV_PROCMAP_JITMAP_H
#define CONV_PROCMAP_JITMAP_H

#include "core/arena.h"
#include "core/err.h"
#include "core/strtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest perf map or jitdump the loaders read. */
#define JIT_FILE_MAX ((size_t)256 << 20)

/* One jitdump source-line entry: code from offset on was generated for file:line. */
struct jit_line {
	uint64_t offset;  /* from the function's code_start, as written (V8 adds 0x40 for perf's ELF header) */
	int32_t line;     /* as written: 1-based by the spec, not checked */
	int32_t discrim;  /* column or discriminator, 0 = none */
	const char *file; /* never NULL ("" if the writer gave none) */
};

struct jit_sym {
	uint64_t start;      /* first address covered */
	uint64_t size;       /* bytes covered from start (> 0) */
	const char *name;
	uint64_t code_start; /* where the function's code begins: start, unless a later entry covered its front */
	const struct jit_line *lines; /* jitdump line entries sorted by offset, or NULL */
	size_t nr_lines;
};

struct jit_table {
	struct jit_sym *syms; /* sorted by start, non-overlapping */
	size_t nr;
	struct strtab strs;   /* names and file names */
	struct arena arena;   /* line tables */
};

/*
 * What the parsers saw. Every field is added to, so one struct can collect
 * several files; zero it before the first call. May be NULL everywhere.
 */
struct jit_stats {
	/* perf-<pid>.map */
	uint64_t map_entries;        /* lines that gave a symbol */
	uint64_t map_malformed;      /* lines skipped: bad number, no name, NUL byte, end reaching 2^64 */
	uint64_t map_first_malformed; /* 1-based line number of the first one, 0 = none */
	/* jitdump */
	uint32_t dump_pid;           /* from the last header read */
	uint32_t dump_elf_mach;
	bool dump_swapped;           /* written in the other byte order */
	uint64_t records;            /* complete records seen */
	uint64_t loads;              /* JIT_CODE_LOAD records applied */
	uint64_t moves;              /* JIT_CODE_MOVE records applied */
	uint64_t moves_unmatched;    /* moves of a code_index this file never loaded */
	uint64_t debug_infos;        /* JIT_CODE_DEBUG_INFO records attached to the following load */
	uint64_t debug_entries;      /* line entries kept */
	uint64_t debug_entries_dropped; /* line entries below their function's code_addr */
	uint64_t debug_orphans;      /* debug records not followed by a load of their code_addr */
	uint64_t unwinding;          /* JIT_CODE_UNWINDING_INFO records (skipped) */
	uint64_t closes;             /* JIT_CODE_CLOSE records */
	uint64_t unknown;            /* records of other ids (skipped) */
	uint64_t bad_records;        /* records whose fields do not fit their total_size; skipped */
	uint64_t first_bad_offset;   /* file offset of the first one, 0 = none */
	uint64_t truncated_at;       /* offset of an incomplete record at the end, 0 = none */
	/* both */
	uint64_t empty;              /* entries of size 0: they cover nothing and are not kept */
	uint64_t replaced;           /* entries cut or hidden, wholly or partly, by later ones */
};

/* init allocates a little (the string table); release frees everything, after which init may be called again. */
void jit_table_init(struct jit_table *t);
void jit_table_release(struct jit_table *t);

/*
 * Adds the entries of perf-<pid>.map text (not NUL-terminated). A line is
 * START SIZE NAME: START and SIZE in hex with or without 0x, separated by
 * spaces or tabs, NAME the rest of the line (it may contain spaces; a
 * trailing CR is dropped). Blank lines are ignored; malformed lines are
 * skipped and counted. Fails only with CONV_E_NOMEM, leaving the table as it was.
 */
enum conv_err jit_parse_perf_map(struct jit_table *t, const char *text, size_t len,
				 struct jit_stats *st);

/*
 * Adds the code of a jitdump (either byte order, version 1). LOAD gives
 * code_addr, code_size and name; MOVE adds the moved code at its new address
 * under the name of the load with the same code_index; a DEBUG_INFO record
 * gives the line table of the load that follows it. Records whose fields do
 * not fit their total_size are skipped and counted.
 *
 * Returns CONV_E_OK; CONV_E_FORMAT or CONV_E_UNSUPPORTED (with diag) for a
 * header that is not a jitdump one or not one this code knows; CONV_E_NOMEM.
 * Two errors are partial successes, after which the table holds every
 * complete record before the problem: CONV_E_TRUNCATED, the file ends inside
 * the header or a record (a runtime killed while writing), and CONV_E_FORMAT
 * for a record whose total_size is below its own header, after which nothing
 * can be found.
 */
enum conv_err jit_parse_jitdump(struct jit_table *t, const uint8_t *data, size_t len,
				struct jit_stats *st, struct conv_diag *diag);

enum jit_load_flags {
	/*
	 * Accept a file owned by another user, or reached through a symbolic
	 * link. Without it, like perf without -f, files of other users are
	 * refused: /tmp is world-writable, and a planted perf-<pid>.map (or a
	 * link to a secret file) would put someone else's text into the profile.
	 */
	JIT_LOAD_ANY_OWNER = 1u << 0,
};

/*
 * Reads DIR/perf-<pid>.map and parses it. CONV_E_NOTFOUND if it does not
 * exist, CONV_E_UNSUPPORTED if it is not a regular file or not trusted (see
 * JIT_LOAD_ANY_OWNER), CONV_E_LIMIT above JIT_FILE_MAX, CONV_E_IO.
 */
enum conv_err jit_load_perf_map(struct jit_table *t, const char *dir, uint32_t pid, unsigned flags,
				struct jit_stats *st, struct conv_diag *diag);

/* Reads a jitdump file and parses it; errors as for both functions above. */
enum conv_err jit_load_jitdump(struct jit_table *t, const char *path, unsigned flags,
			       struct jit_stats *st, struct conv_diag *diag);

/* The entry covering addr (start <= addr < start + size), or NULL. */
const struct jit_sym *jit_lookup(const struct jit_table *t, uint64_t addr);

/* The line entry of s in effect at addr (the last one at or before it), or NULL. */
const struct jit_line *jit_lookup_line(const struct jit_sym *s, uint64_t addr);

#endif
