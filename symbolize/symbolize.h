/*
 * File-mode symbolization of one ELF object (one build-id): address
 * normalization with the runtime binary's program headers, then function,
 * inline chain and file:line from its DWARF (libdw), or from its symbol
 * table when there is no DWARF. Knows nothing of perf.data or the profile
 * model: it takes a file offset and returns frames.
 *
 * A struct sym_file is used by one thread at a time (libdw's lazily built
 * caches are not locked); different files may be used in parallel.
 */
#ifndef CONV_SYMBOLIZE_SYMBOLIZE_H
#define CONV_SYMBOLIZE_SYMBOLIZE_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_file;

/* One level of a frame; a result lists them innermost (inlined) first. */
struct sym_frame {
	const char *function;    /* demangled name in the file's sym_name_form ("" when unknown) */
	/*
	 * linkage (mangled) name, or the name itself where the language does not
	 * mangle; "" for a C++ function whose DWARF gives no linkage name
	 */
	const char *system_name;
	const char *file;        /* source file, absolute when the compile dir is known; "" if none */
	uint32_t line;           /* 0 when unknown */
	uint32_t column;
	uint32_t start_line;     /* the function's declaration line, 0 when unknown */
	bool inlined;            /* this level was inlined into the next one */
};

enum sym_how {
	SYM_NONE,   /* nothing found */
	SYM_DWARF,  /* DWARF: names, lines, inline chain */
	SYM_SYMTAB, /* symbol table only: a name */
};

/*
 * How C++, Rust and D names are demangled. perf report shows a function as
 * its qualified name with templates and ABI tags but without the return
 * type, parameter list and clone suffix (libiberty without DMGL_PARAMS):
 * "geo::accumulate_areas<double>", "text::word_counts[abi:cxx11]".
 */
enum sym_name_form {
	SYM_NAME_PERF, /* perf's form (the default) */
	SYM_NAME_FULL, /* the whole signature: return type, parameters, " [clone .isra.0]" */
};

struct sym_result {
	enum sym_how how;
	uint32_t nr;                    /* frames */
	const struct sym_frame *frames; /* owned by the sym_file; valid until sym_file_close */
	uint64_t elf_va;                /* the ELF virtual address looked up */
};

struct sym_file_stats {
	uint64_t lookups;
	uint64_t cache_hits;
	uint64_t dwarf;
	uint64_t symtab;
	uint64_t unresolved;
	uint64_t cus;                /* compile units indexed */
	uint64_t zstd_sections;      /* zstd-compressed debug sections decompressed here */
	uint64_t reopened;           /* times a shed file's files were opened again (sym_file_shed) */
};

/*
 * Opens debug_path (a file with DWARF and/or a symbol table) for lookups.
 * runtime_path is the file that was mapped (its PT_LOAD headers give the
 * address mapping); NULL when the debug file is the runtime binary itself
 * (unstripped) or none is available (then the debug file's headers are used
 * only if they are intact, see sym_file_has_phdrs). Errors: CONV_E_IO,
 * CONV_E_LIBELF, CONV_E_NOMEM.
 */
enum conv_err sym_file_open(struct sym_file **out, const char *debug_path, const char *runtime_path,
			    struct conv_diag *diag);
void sym_file_close(struct sym_file *f);

/*
 * Lets go of the files and everything read from them (decompressed
 * sections, libdw's tables, the CU and symbol indexes), keeping the
 * program headers and the cached results: a lookup of an address asked
 * before is answered as before, and one not asked before opens the files
 * again (at the paths of sym_file_open, with the alternate file given to
 * sym_file_set_alt). For a run that keeps many files for later lookups
 * it already knows (conv --merge): their answers without their memory.
 */
void sym_file_shed(struct sym_file *f);

/*
 * The form of the names this file's lookups return (SYM_NAME_PERF until set);
 * set before the first lookup, as results are cached.
 */
void sym_file_set_name_form(struct sym_file *f, enum sym_name_form form);

/* Whether usable program headers were found (from the runtime binary or an intact file). */
bool sym_file_has_phdrs(const struct sym_file *f);
/* Whether the file has DWARF. */
bool sym_file_has_dwarf(const struct sym_file *f);

/*
 * Process address -> ELF virtual address: f_off = addr - start + pgoff is the
 * offset in the mapped file, pgoff the mapping's file offset. Picks the
 * PT_LOAD segment the mapping came from (executable first). False when no
 * segment matches.
 */
bool sym_file_normalize(const struct sym_file *f, uint64_t f_off, uint64_t pgoff, uint64_t *elf_va);
/* The ELF virtual address of an offset from the image base (elfseg_image_va); false when outside the file. */
bool sym_file_image_va(const struct sym_file *f, uint64_t img_off, uint64_t *elf_va);

/* Resolves an ELF virtual address; results are cached per address. */
enum conv_err sym_file_lookup(struct sym_file *f, uint64_t elf_va, struct sym_result *out);

const struct sym_file_stats *sym_file_stats(const struct sym_file *f);
/*
 * About the memory an open file holds, in bytes: its files' sizes (mapped,
 * read as far as lookups go), decompressed sections, indexes and cached
 * results; libdw's and libelf's own tables are not counted. For a cache of
 * open files to keep within a budget.
 */
uint64_t sym_file_footprint(const struct sym_file *f);

/*
 * dwz: when the DWARF refers to an alternate file (.gnu_debugaltlink) that
 * libdw could not find by itself, its build-id (borrowed from the file) for
 * the caller to locate; false when there is none or it is already found.
 */
bool sym_file_missing_alt(struct sym_file *f, const uint8_t **bid, size_t *len);
/* Uses the alternate DWARF file at path (the caller verified its build-id). */
enum conv_err sym_file_set_alt(struct sym_file *f, const char *path);

/* The value of the named function symbol (e.g. "_text" of a vmlinux); false if absent. */
bool sym_file_symbol_addr(struct sym_file *f, const char *name, uint64_t *addr);

/*
 * Demangles a C++/Rust/D linkage name with libiberty, in the given form; a
 * suffix from '@' on ("@plt", "@@GLIBCXX_3.4") is kept after the demangled
 * name. Returns a malloc'd string (caller frees) or NULL when the name is
 * not mangled.
 */
char *sym_demangle(const char *name, enum sym_name_form form);

#endif
