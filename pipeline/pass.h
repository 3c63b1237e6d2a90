/*
 * The state one conversion's phases share (convert_run calls them in
 * order): its inputs, the process model, the symbolizer, the sample cache
 * and what the reading pass counted. Internal to pipeline/: convert.c reads,
 * tomodel.c builds the model, cstats.c counts.
 */
#ifndef CONV_PIPELINE_PASS_H
#define CONV_PIPELINE_PASS_H

#include "pipeline/convert.h"
#include "pipeline/scache.h"

#include <stdint.h>

struct readpass;

/*
 * One conversion: its inputs, what the reading pass keeps and the phases'
 * shared state. Each phase is a function of its own (pass_*), called in
 * order by convert_run.
 */
struct pass {
	struct rdr *r;
	const struct convert_opts *o;
	struct prof *p;
	struct convert_stats *st;
	struct conv_diag *diag;
	struct readpass *rp;       /* the reading pass: owns pm, sj and uw */
	struct procmap *pm;
	struct symjob *sj;
	struct unwinding *uw;      /* --call-graph dwarf samples' stacks */
	struct tpfields *tpf;      /* tracepoint field labels; made at the first tracepoint sample */
	struct offcpu *off;        /* off-CPU intervals from sched_switch samples and switch records */
	uint8_t *roles;            /* per attr: enum attr_role + 1, 0 = not yet looked at */
	size_t nr_roles;
	uint32_t *field_sets;      /* tpfields value list -> its labels' place in the label pool + 1 */
	size_t nr_field_sets;
	struct scache c;
	uint64_t nrec;             /* records read */
	uint64_t first_time;       /* the first sample's time (for --time) */
	bool have_first;
	size_t known_stacks;       /* raw stacks seen before this sample */
	uint64_t *kept_by_attr;    /* kept samples per attr (pipe mode: attrs arrive, so this grows) */
	size_t nr_kept;
	uint64_t *map_hits;        /* frames of kept samples per mapping */
	uint32_t *map_ids;         /* procmap mapping -> model mapping */
	uint64_t t_sym;            /* when the symbolizer's workers started */
};

/* Progress of phase ph (records: read so far), to the caller's callback. */
void pass_report(const struct convert_opts *o, struct rdr *r, enum convert_phase ph, uint64_t records);

/* Statistics: samples per distinct frame, then per registered address and per mapping. */
enum conv_err cstats_count_frames(struct pass *ps);
/* Distinct pids and tids, as perf counts them (an exec does not make a new one). */
void cstats_count_threads(struct pass *ps);
/* Copies what the symbolizer found and missed before it goes away. */
void cstats_collect_sym(struct convert_stats *st, const struct symjob *sj);

/* The model's stacks, threads and samples, built while the workers symbolize. */
enum conv_err tomodel_build(struct pass *ps);
/* Joins the symbolizer, then the locations: one per distinct frame, in frame order. */
enum conv_err tomodel_locations(struct pass *ps);
/* The recording's facts: machine, times, comments, lost samples. */
void tomodel_facts(struct pass *ps);

#endif
