/*
 * perf.data -> profile model: the reading pass (process model, frames,
 * aggregation by unique stack), symbolization, then the model the writers
 * take. Memory follows unique stacks, mappings and symbols, not samples.
 */
#ifndef CONV_PIPELINE_CONVERT_H
#define CONV_PIPELINE_CONVERT_H

#include "core/err.h"
#include "pipeline/symjob.h"
#include "procmap/procmap.h"

#include <stdbool.h>
#include <stdint.h>

struct rdr;
struct prof;

struct convert_opts {
	struct procmap_opts pm;
	struct symjob_opts sj;
	bool no_labels; /* no per-thread labels (aggregate harder) */
	bool label_cpu;
	bool keep_events;   /* spool every sample event into p->events (for JFR) */
	const char *tmpdir; /* where the spool goes (NULL: $TMPDIR or /tmp) */
};

struct convert_stats {
	uint64_t samples;
	uint64_t frames;
	uint64_t unique_stacks;
	uint64_t lost_samples;
};

/*
 * Reads the whole recording and fills p (initialized by the caller). The
 * reader's problems stay in the reader. Errors: CONV_E_NOMEM, CONV_E_IO.
 */
enum conv_err convert_run(struct rdr *r, const struct convert_opts *o, struct prof *p,
			  struct convert_stats *st, struct conv_diag *diag);

#endif
