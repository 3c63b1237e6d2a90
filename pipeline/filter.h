/*
 * The user's sample filters (pid, tid, comm, event, time window) and what
 * the samples had for them (convert_seen), so that the cli can tell a
 * filter naming what the recording lacks from one that matched.
 */
#ifndef CONV_PIPELINE_FILTER_H
#define CONV_PIPELINE_FILTER_H

#include "core/err.h"
#include "reader/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmap;

/* Which samples to keep (empty lists keep all). */
struct convert_filter {
	const uint32_t *pids;
	size_t nr_pids;
	const uint32_t *tids;
	size_t nr_tids;
	const char *const *comms; /* thread names at sample time, as perf report --comms */
	size_t nr_comms;
	const char *const *events; /* event names (evname_matches) */
	size_t nr_events;
	/* time window [start, end]: ns after the first sample, or perf timestamps when absolute */
	bool has_start, has_end, time_absolute;
	uint64_t start_ns, end_ns;
};

/* Thread names convert_seen keeps for a message (the first distinct ones). */
#define CONVERT_SEEN_COMMS 8

/*
 * What the samples had, for the cli to tell a filter that names what the
 * recording lacks (a usage error) from one that matched: each filter judged
 * on its own, over every sample read (before any filter dropped it). Filled
 * only for the pid, tid and comm filters given.
 */
struct convert_seen {
	bool *pids, *tids, *comms; /* per value given, in order: some sample had it (owned) */
	uint64_t samples;          /* samples looked at (all of them, when any of the three is given) */
	uint32_t pid_min, pid_max, tid_min, tid_max;
	char *comm_names[CONVERT_SEEN_COMMS]; /* the samples' first distinct thread names (owned) */
	size_t nr_comm_names;
	bool more_comms;           /* and others besides */
};

/* The per-value flags of filter_note_seen; CONV_E_NOMEM. */
enum conv_err filter_seen_init(struct convert_seen *sn, const struct convert_filter *f);
void filter_seen_release(struct convert_seen *sn);

/*
 * Notes what a sample had for each pid, tid and comm filter, whatever the
 * others say (convert_seen): only when one of them is given.
 */
void filter_note_seen(struct convert_seen *sn, const struct convert_filter *f, const struct procmap *pm,
		      const struct rdr_sample *s);

/* Whether a sample passes the user's filters (first: the first sample's time). */
bool filter_keep(const struct convert_filter *f, const struct procmap *pm, const struct rdr_info *info,
		 const struct rdr_event *ev, uint64_t first);

#endif
