/*
 * The objects of a run: open symbol files, compiled CFI and kernel symbol
 * tables, shared by every input one conv run converts. An object that many
 * inputs map (libc, libstdc++, the kernel) is then opened, decompressed and
 * parsed once per run instead of once per input, and the symbols and CFI
 * rules it has resolved serve every later input.
 *
 * Entries nobody holds are kept while the table's footprint (what
 * sym_file_footprint, uw_cfi_footprint and kallsyms_footprint count) is
 * within its budget, and closed least recently used first beyond it. A
 * budget of 0 keeps nothing: an entry closes when its last holder lets go,
 * which is a single conversion's own lifetime for its files.
 *
 * An entry is keyed by its kind and the paths it was opened from, and
 * checked on every get against the file's identity (device, inode, size,
 * modification time): a file replaced during the run is opened again.
 *
 * Thread-safe: conversions running side by side share one table. A symbol
 * file is held by one caller at a time (libdw's lazily built caches are not
 * locked; another caller asking waits); CFI and kernel symbols are shared.
 */
#ifndef CONV_PIPELINE_OBJTAB_H
#define CONV_PIPELINE_OBJTAB_H

#include "core/err.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

#include <stdbool.h>
#include <stdint.h>

struct objtab;
struct objtab_ent; /* a held entry: what a get returns and its put takes */
struct kallsyms;

struct objtab_stats {
	uint64_t opened;     /* entries opened (files parsed) */
	uint64_t reused;     /* gets answered by an entry already open */
	uint64_t evicted;    /* entries closed to stay within the budget */
	uint64_t reopened;   /* shed symbol files opened again for an address not wanted ahead */
	uint64_t bytes;      /* footprint of the entries open now */
	uint64_t peak_bytes; /* the most they held at once */
};

/* Errors: CONV_E_NOMEM. */
enum conv_err objtab_new(struct objtab **out, uint64_t budget);
/* Closes every entry; none may be held. */
void objtab_free(struct objtab *t);
/* The counters so far (a copy: other threads may be counting). */
struct objtab_stats objtab_stats(struct objtab *t);

/*
 * The symbol file of (debug, runtime) with names in form, opened on first
 * use: held by this caller alone until objtab_put. *fresh says it was just
 * opened (nothing looked up in it yet). Returns the entry, or NULL (*f
 * NULL) when the file cannot be opened.
 */
struct objtab_ent *objtab_sym_get(struct objtab *t, const char *debug, const char *runtime,
				  enum sym_name_form form, struct sym_file **f, bool *fresh);

/*
 * An address a later input will ask of a symbol file (conv --merge reads
 * its inputs once before converting them): value in the caller's mode
 * (what symjob_addr_mode says), pgoff the mapping's file offset.
 */
struct objtab_want {
	uint64_t value, pgoff;
	unsigned mode;
};

/*
 * Adds addresses the run will ask of the symbol file of (debug, runtime,
 * form), each once, without opening it. The first objtab_sym_get opens it
 * and its holder looks them all up (objtab_sym_wants); from then on the
 * entry is shed (sym_file_shed) at every put: later inputs find their
 * answers cached, without the file's memory. Errors: CONV_E_NOMEM.
 */
enum conv_err objtab_sym_want(struct objtab *t, const char *debug, const char *runtime,
			      enum sym_name_form form, const struct objtab_want *w, size_t n);
/*
 * The addresses wanted of a held symbol file not looked up yet, for its
 * holder to look up before the put (which forgets them). Their number.
 */
size_t objtab_sym_wants(struct objtab_ent *e, const struct objtab_want **w);

/* The kernel symbols at path, loaded on first use; read-only, shared, valid until the put. */
struct objtab_ent *objtab_kallsyms_get(struct objtab *t, const char *path, const struct kallsyms **k);

/*
 * The CFI of binary (debug: its debug file for .debug_frame, or NULL) for
 * arch, opened on first use; shared: its rules are asked through
 * objtab_cfi_rule, which serializes the compilation of new rows.
 */
struct objtab_ent *objtab_cfi_get(struct objtab *t, enum uw_arch arch, const char *binary,
				  const char *debug, struct uw_cfi **c);
/* uw_cfi_rule of a held CFI entry; the rule stays valid while the entry is held. */
const struct uw_rule *objtab_cfi_rule(struct objtab_ent *e, uint64_t elf_va);

/* Lets go of an entry a get returned (NULL: nothing); the entry may close. */
void objtab_put(struct objtab *t, struct objtab_ent *e);

#endif
