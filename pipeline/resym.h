/*
 * `conv symbolize` on a pprof profile: the locations without a function (all
 * with force) in a mapping with a build-id or a file get the functions,
 * lines and inline frames a direct conversion gives them, found as a
 * conversion finds them (symjob: local files, -d, /usr/lib/debug, ~/.debug,
 * debuginfod), and the profile is written back with everything else as it
 * was (pprofedit). The profile's mappings become the mappings of a process
 * model of their own (procmap), one process each, so that the symbolizer
 * sees them as it sees a recording's; a profile naming very many objects is
 * symbolized a few thousand mappings at a time (resym.c), so that memory
 * follows the profile's size.
 */
#ifndef CONV_PIPELINE_RESYM_H
#define CONV_PIPELINE_RESYM_H

#include "core/err.h"
#include "pipeline/symjob.h"
#include "procmap/procmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ppe_profile;
struct strtab;
struct jfe_file;

struct io_flush;

struct resym_opts {
	struct symjob_opts sj;
	struct procmap_opts pm;
	bool force; /* name located frames that have names already, anew */
	struct io_flush *flush; /* the output's background flusher (core/io.h); may be NULL */
};

/* The unresolved objects listed at most (resym_stats.missing): past it they are counted. */
#define RESYM_MISSING_MAX 65536u

/* An object whose frames stay without names, and why. */
struct resym_missing {
	const char *build_id, *path, *reason; /* in resym_stats.strs */
	uint64_t locations;
};

struct resym_stats {
	uint64_t locations;  /* in the profile */
	uint64_t named_before; /* had lines and were kept (no --force) */
	uint64_t candidates; /* without lines (or all, forced) in a mapping with a file or build-id */
	uint64_t named;      /* of the candidates, given lines now */
	uint64_t unmapped;   /* no mapping, or one with neither file nor build-id */
	/*
	 * build-id strings that are not one (a NUL or other non-hex byte, an
	 * odd length, too long): taken as no build-id
	 */
	uint64_t bad_build_ids;
	uint64_t by_src[SYMSRC__COUNT]; /* named locations by where their names came from */
	uint64_t objects, objects_found;
	uint64_t dfd_fetched, dfd_cache_hits, dfd_not_found, dfd_errors;
	uint64_t dfd_untrusted; /* cache entries passed over as not trusted (debuginfod.h) */
	/* the first RESYM_MISSING_MAX unresolved objects, in the order they were met */
	struct resym_missing *missing;
	size_t nr_missing;
	struct strtab *strs; /* the missing list's strings (each distinct one once) */
	/*
	 * unresolved objects past the list and their locations (an object of
	 * a profile symbolized in batches counted once per batch it is in)
	 */
	uint64_t missing_more, missing_more_locations;
};

/*
 * Names p's locations and writes the result to fd as it goes (gzipped when
 * gzip); *bytes: bytes written. Errors: CONV_E_NOMEM, CONV_E_INVAL (bad
 * options: diag says), CONV_E_IO (a write failed: *io_errno).
 */
enum conv_err resym_pprof(const struct ppe_profile *p, const struct resym_opts *o, bool gzip, int fd,
			  uint64_t *bytes, int *io_errno, struct resym_stats *st, struct conv_diag *diag);
/*
 * The same for a JFR recording: its remote frames (<remote> in a class
 * named by a build-id: conv's "(0x<ELF address>)", Datadog's "0x<offset
 * from the image base>") and conv's unnamed kernel frames become the frames
 * a conversion writes, one per inline level (jfredit). locations counts
 * such methods. Errors as resym_pprof's, and CONV_E_FORMAT.
 */
enum conv_err resym_jfr(const struct jfe_file *f, const struct resym_opts *o, int fd, uint64_t *bytes,
			int *io_errno, struct resym_stats *st, struct conv_diag *diag);
void resym_stats_release(struct resym_stats *st);

#endif
