/*
 * Many recordings' models into one (conv --merge): each input converted on
 * its own, then merged into the accumulating profile and released, so that
 * the merged profile holds what the inputs have distinct (stacks, samples,
 * mappings, functions, strings), never their samples one by one: the
 * per-sample events of a JFR go from one spool file into another.
 */
#ifndef CONV_MODEL_MERGE_H
#define CONV_MODEL_MERGE_H

#include "core/err.h"
#include "model/profile.h"

#include <stddef.h>

/* A string label that every sample of one input gets in the merged profile (file=a.data). */
struct prof_merge_label {
	const char *key, *value;
};

struct prof_merge_opts {
	const struct prof_merge_label *labels;
	size_t nr_labels;
	const char *name;   /* the input, in front of its comments ("a.data: perf version 6.1") */
	const char *tmpdir; /* where dst's event spool goes when it has none yet (NULL: $TMPDIR, /tmp) */
};

/*
 * Adds src to dst, src's ids renumbered into dst's:
 * - strings and functions are shared (interned);
 * - mappings, locations, stacks and threads are src's own, appended: a
 *   process of one input never shares a mapping with another's, whatever
 *   their pids (a thread's origin is dst's count of inputs before);
 * - events (value types) of the same name, modifiers, kind, fields and
 *   value types are one; others are added, and dst's samples so far read
 *   0 for them (pprof's sample types are the union);
 * - samples keep their labels, with o->labels after them; equal stacks
 *   with equal labels are summed;
 * - src's spool of sample events is read back into dst's (opened when dst
 *   has none), times as the instants a single recording's JFR shows them:
 *   wall-clock nanoseconds where the recording knows its wall clock, else
 *   its own clock; dst's sys.wall_known is false so that its clock is taken
 *   as it is (pprof time_nanos: the earliest input's start);
 * - the first input gives the CPU-time and off-CPU events when dst has
 *   none, the default type and period; facts about the machine are kept
 *   where all inputs agree, lost samples summed.
 * src's spool is read (rewound), the rest of src is not changed; release
 * it afterwards. Errors: CONV_E_NOMEM, CONV_E_IO (the spools), CONV_E_INVAL
 * (src's spool names a stack, thread or event it does not have); dst is
 * then not to be written.
 */
enum conv_err prof_merge(struct prof *dst, struct prof *src, const struct prof_merge_opts *o,
			 struct conv_diag *diag);

#endif
