/*
 * The sample events of a recording, in recording order, for writers that
 * keep every sample (JFR) rather than aggregates (pprof). Memory must not
 * grow with samples, so events go to an unlinked temporary file through a
 * small buffer; the writer reads them back once the model is finished.
 *
 * Events carry the model's stack ids: the pipeline's stacks become the
 * model's as they are (prof_adopt_stacks).
 */
#ifndef CONV_MODEL_EVENTS_H
#define CONV_MODEL_EVENTS_H

#include "core/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct prof_events;

struct prof_event {
	uint64_t time;   /* sample clock, ns (0 when not recorded) */
	uint64_t period; /* the sample's period (count or ns) */
	uint64_t weight; /* PERF_SAMPLE_WEIGHT, 0 when absent */
	uint32_t stack;  /* model stack id once remapped */
	uint32_t thread; /* index into prof threads */
	uint32_t cpu;    /* UINT32_MAX when not recorded */
	uint32_t event;  /* index into prof events_desc, or PROF_EVENT_OFFCPU */
	/*
	 * 0 none; an off-CPU interval's: its thread state (a string of the
	 * profile); a tracepoint sample's: its fields' values, labels from
	 * labels[label - 1] (events_desc's nr_fields of them)
	 */
	uint32_t label;
};

/*
 * The event of an off-CPU interval (time: when it began, period: its
 * length in ns), whose description is prof.offcpu_event: the pipeline
 * spools intervals while a pipe's attrs may still be arriving.
 */
#define PROF_EVENT_OFFCPU (UINT32_MAX - 1)

/* tmpdir: where the spool file goes (NULL: $TMPDIR, else /tmp). Errors: CONV_E_IO, CONV_E_NOMEM. */
enum conv_err prof_events_open(struct prof_events **out, const char *tmpdir, struct conv_diag *diag);
void prof_events_free(struct prof_events *e);

/* Appends one event; false (sticky) on a write error, reported by prof_events_finish. */
bool prof_events_add(struct prof_events *e, const struct prof_event *ev);
/* Flushes; reports the first write error (CONV_E_IO with errno text). */
enum conv_err prof_events_finish(struct prof_events *e, struct conv_diag *diag);

uint64_t prof_events_count(const struct prof_events *e);

/* Reading, from the first event: rewind, then next until it returns false. */
enum conv_err prof_events_rewind(struct prof_events *e, struct conv_diag *diag);
bool prof_events_next(struct prof_events *e, struct prof_event *out);
/* After next returned false: CONV_E_OK at the end, CONV_E_IO on a read error. */
enum conv_err prof_events_status(const struct prof_events *e);

#endif
