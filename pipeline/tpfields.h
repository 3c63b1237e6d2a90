/*
 * Tracepoint fields as sample labels: for each tracepoint event of a
 * recording, the fields its samples are labelled with (a default set per
 * event, as perf users group by them: sched_switch's prev_state, next_comm
 * and next_pid, ...), decoded from each sample's raw data with tracefmt
 * (libtraceevent, fed only formats that were validated first). Samples with
 * equal values share one interned value list, so a sample's labels cost an
 * id in its key and the table grows with distinct value lists, not samples.
 */
#ifndef CONV_PIPELINE_TPFIELDS_H
#define CONV_PIPELINE_TPFIELDS_H

#include "core/err.h"
#include "core/hmap.h"
#include "reader/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tpfields;

/* The labels of a value list: names[i] = values; a numeric label has str NULL. */
struct tpfields_label {
	const char *name;
	const char *str;
	int64_t num;
};

/*
 * The recording's tracepoint fields (info: its attrs and TRACING_DATA).
 * specs: "EVENT:FIELD,FIELD..." (EVENT as evname_matches takes it),
 * each in place of its events' default fields, the last one matching an
 * event winning; a field the format lacks is left out. Never fails for bad
 * formats (their events get no field labels, counted); NULL only when out
 * of memory.
 */
struct tpfields *tpfields_new(const struct rdr_info *info, const char *const *specs, size_t nr_specs);
void tpfields_free(struct tpfields *f);

/*
 * The value list of a sample of attr (0: no field labels: not a tracepoint,
 * no fields chosen, or its raw data did not decode); UINT32_MAX when out of
 * memory. No allocation for a list seen before.
 */
uint32_t tpfields_of(struct tpfields *f, int attr, const struct rdr_sample *s);

/*
 * What decides the value list of a sample of attr, as a fingerprint, so
 * that a caller decodes each distinct one once (tpfields_of) and counts
 * its repeats with tpfields_repeat: {0, 0} when the sample gets no labels
 * (not a tracepoint, no fields chosen, no raw data); the numbers, where
 * every field is a numeric label or the syscall behind a "syscall" label;
 * else the whole raw data, as a text value is the print fmt's rendering,
 * which may read any field. No allocation, no rendering.
 */
struct hmap_fp tpfields_key(const struct tpfields *f, int attr, const struct rdr_sample *s);

/* Counts a repeat of a sample whose value list (tpfields_of) was id, as tpfields_of would. */
void tpfields_repeat(struct tpfields *f, int attr, const struct rdr_sample *s, uint32_t id);

/*
 * The fields attr's samples are labelled with: *n names (interned), and
 * which are numeric; the same for every value list of attr, in this order.
 */
const char *const *tpfields_names(const struct tpfields *f, int attr, const bool **numeric, size_t *n);

/* The labels of a value list id from tpfields_of; *n of them (0 for id 0). */
const struct tpfields_label *tpfields_labels(const struct tpfields *f, uint32_t id, size_t *n);

/*
 * A sched:sched_switch sample's facts: the state its thread (prev) left in,
 * as perf prints it ("S", "D", "R+", ...; interned, stable; "" unknown),
 * and the pid of the thread switched in (-1 unknown). False when attr is
 * not sched_switch or its format has neither field. Decoded once per
 * distinct raw record (the state is the print fmt's rendering).
 */
bool tpfields_switch(struct tpfields *f, int attr, const struct rdr_sample *s, const char **state,
		     int64_t *next_pid);

/* Tracepoint formats the recording holds, those decoded, and those refused. */
struct tpfields_stats {
	uint64_t formats, parsed, refused;
	uint64_t samples_undecoded; /* raw data too short for the fields */
	char first_refusal[256];    /* the first refused format and why ("" none) */
};
const struct tpfields_stats *tpfields_stats(const struct tpfields *f);

#endif
