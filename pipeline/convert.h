/*
 * perf.data -> profile model: the reading pass (process model, frames,
 * aggregation by unique stack), symbolization, then the model the writers
 * take. Memory follows unique stacks, mappings and symbols, not samples.
 */
#ifndef CONV_PIPELINE_CONVERT_H
#define CONV_PIPELINE_CONVERT_H

#include "core/err.h"
#include "pipeline/filter.h"
#include "pipeline/offcpu.h"
#include "pipeline/symjob.h"
#include "pipeline/tpfields.h"
#include "pipeline/unwinding.h"
#include "procmap/procmap.h"

#include <stdbool.h>
#include <stdint.h>

struct rdr;
struct prof;

enum convert_phase { CONVERT_READING, CONVERT_SYMBOLIZING, CONVERT_MODEL };

/* Progress, reported now and then (every 64k records while reading). */
struct convert_progress {
	enum convert_phase phase;
	uint64_t bytes, total_bytes; /* total_bytes: UINT64_MAX when unknown (pipe) */
	uint64_t records, samples;
};

struct convert_opts {
	struct procmap_opts pm;
	struct symjob_opts sj;
	struct convert_filter filter;
	bool no_labels; /* no per-thread labels (aggregate harder) */
	bool label_cpu;
	bool keep_events;   /* spool every sample event into p->events (for JFR) */
	/*
	 * Resolve every sample as if it were new (no cache of distinct
	 * samples): the same outputs, slower; for tests that check the cache.
	 */
	bool no_sample_cache;
	/* --tp-fields: "EVENT:FIELD,FIELD..." each, in place of the event's default field labels */
	const char *const *tp_fields;
	size_t nr_tp_fields;
	const char *tmpdir; /* where the spool goes (NULL: $TMPDIR or /tmp) */
	void (*progress)(void *ctx, const struct convert_progress *p);
	void *progress_ctx;
};

/* An object whose frames stayed unresolved. */
struct convert_missing {
	char *build_id; /* lowercase hex, "" when none */
	char *path;
	uint64_t frames; /* frames (per sample) left without a name */
	char *reason;    /* why (owned) */
};

/* A debuginfod server given up during the run (not asked again). */
struct convert_dfd_down {
	char *url;        /* owned */
	char *why;        /* owned: "did not answer within 3 s", "refused the connection" ... */
	uint64_t skipped; /* requests it was then not asked */
};

struct convert_stats {
	uint64_t samples;          /* kept (after filters) */
	uint64_t samples_filtered; /* dropped by the filters */
	uint64_t frames;           /* frames of kept samples */
	uint64_t frames_unmapped;  /* in no mapping */
	uint64_t frames_jit;       /* named by a JIT map */
	uint64_t frames_nofile;    /* in a mapping with no file (anonymous, JIT without map) */
	uint64_t frames_by_bid[PM_BID__COUNT]; /* frames in mappings, by where their build-id came from */
	uint64_t unique_stacks;
	uint64_t lost_samples;
	uint64_t processes, threads; /* distinct pids and tids with kept samples */
	/* kept samples with a user stack copy (perf record --call-graph dwarf), unwound */
	struct unwinding_stats unwind;
	struct offcpu_stats offcpu;           /* off-CPU intervals (sched_switch, perf --off-cpu) */
	struct tpfields_stats tracepoints;    /* tracepoint formats and their fields' decoding */
	struct symjob_stats sym;   /* frames by source are counted over kept samples */
	struct convert_seen seen;  /* for the filters given */
	struct convert_missing *missing; /* most frames first */
	size_t nr_missing, cap_missing;
	struct convert_dfd_down *dfd_down; /* in the order the servers are asked */
	size_t nr_dfd_down;
	/*
	 * wall time of each phase (CLOCK_MONOTONIC, ns): where a run's time went
	 * (conv -v). Symbolization runs from the end of the reading pass; the
	 * model's stacks and samples are built meanwhile, so ns_model overlaps it.
	 */
	uint64_t ns_read, ns_symbolize, ns_model;
};

void convert_stats_release(struct convert_stats *st);

/*
 * Reads the whole recording and fills p, a model just made by prof_init.
 * The reader's problems stay in the reader. Errors: CONV_E_NOMEM,
 * CONV_E_IO; CONV_E_INVAL when p already has locations or stacks.
 */
enum conv_err convert_run(struct rdr *r, const struct convert_opts *o, struct prof *p,
			  struct convert_stats *st, struct conv_diag *diag);

/*
 * The first of two passes over r for a run whose object table (o->sj.objects,
 * required) serves many inputs: reads the recording as convert_run would and
 * tells the table which addresses of which files it will ask
 * (symjob_opts.plan), building no model. When every input was planned
 * first, each symbol file is opened once, looks up what all inputs ask of
 * it, and is shed (objtab_sym_want): the run holds the answers, not the
 * files. Errors: convert_run's.
 */
enum conv_err convert_plan(struct rdr *r, const struct convert_opts *o, struct conv_diag *diag);

#endif
