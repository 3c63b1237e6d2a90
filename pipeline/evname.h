/*
 * The one event-name matcher: the filter, the cli's warning about names
 * that match nothing, the off-CPU accounting and the tracepoint fields all
 * ask here, so that they cannot disagree.
 */
#ifndef CONV_PIPELINE_EVNAME_H
#define CONV_PIPELINE_EVNAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether the event recorded as `recorded` is the one a user named `wanted`:
 * the name as recorded (cycles:u, sched:sched_switch) or without perf's
 * modifier suffix (cycles:u as cycles; a tracepoint keeps its "sys:" part),
 * or "sys:*" for every tracepoint of a system.
 */
bool evname_matches(const char *recorded, const char *wanted);

/* Event name without perf's modifier suffix (cycles:ppp -> cycles; sys:event stays), into out. */
void evname_base(const char *name, char *out, size_t n);

#endif
