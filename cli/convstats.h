/*
 * conv's --stats record of one input: counts, frames by source,
 * debuginfod, objects left without symbols, the reader's problems, the
 * outputs written and the top functions, as one JSON line (statsfile).
 */
#ifndef CONV_CLI_CONVSTATS_H
#define CONV_CLI_CONVSTATS_H

#include "cli/outputs.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "reader/reader.h"
#include "views/top.h"

/* The record of input in (rc: its exit code); top NULL: none asked. */
void convstats_write(const char *in, int rc, const struct rdr *r, const struct prof *p,
		     const struct convert_stats *cs, const struct written *w, const struct view_top *top,
		     const char *top_event);

/*
 * --merge's record after the inputs': "input" is OUT, the inputs merged,
 * the merged profile's samples by event, distinct stacks, mappings and
 * functions, lost samples, its outputs and top functions.
 */
void convstats_write_merged(const char *out, int rc, const struct prof *p, const struct written *w,
			    const struct view_top *top, const char *top_event);

#endif
