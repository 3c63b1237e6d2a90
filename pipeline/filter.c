#include "pipeline/filter.h"

#include "pipeline/evname.h"
#include "procmap/procmap.h"

#include <stdlib.h>
#include <string.h>

static bool in_u32(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool in_str(const char *const *v, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (x && !strcmp(v[i], x))
			return true;
	return false;
}

/* Whether a sample passes the user's filters (first: the first sample's time). */
bool filter_keep(const struct convert_filter *f, const struct procmap *pm,
			const struct rdr_info *info, const struct rdr_event *ev, uint64_t first)
{
	const struct rdr_sample *s = &ev->u.sample;

	if (f->nr_pids && !in_u32(f->pids, f->nr_pids, s->pid))
		return false;
	if (f->nr_tids && !in_u32(f->tids, f->nr_tids, s->tid))
		return false;
	if (f->nr_comms && !in_str(f->comms, f->nr_comms, procmap_thread_name(pm, s->tid)))
		return false;
	if (f->nr_events) {
		const char *name = (size_t)ev->attr < info->nr_attrs ? info->attrs[ev->attr].name : NULL;
		bool match = false;

		for (size_t i = 0; i < f->nr_events && !match; i++)
			match = evname_matches(name, f->events[i]);
		if (!match)
			return false;
	}
	if (f->has_start || f->has_end) {
		uint64_t t = f->time_absolute ? s->time : s->time - first;

		if (f->has_start && t < f->start_ns)
			return false;
		if (f->has_end && t > f->end_ns)
			return false;
	}
	return true;
}

/*
 * Notes what a sample had for each pid, tid and comm filter, whatever the
 * others say (convert_seen): only when one of them is given.
 */
void filter_note_seen(struct convert_seen *sn, const struct convert_filter *f, const struct procmap *pm,
		      const struct rdr_sample *s)
{
	const char *comm = f->nr_comms ? procmap_thread_name(pm, s->tid) : NULL;

	if (!sn->samples++) {
		sn->pid_min = sn->pid_max = s->pid;
		sn->tid_min = sn->tid_max = s->tid;
	}
	sn->pid_min = s->pid < sn->pid_min ? s->pid : sn->pid_min;
	sn->pid_max = s->pid > sn->pid_max ? s->pid : sn->pid_max;
	sn->tid_min = s->tid < sn->tid_min ? s->tid : sn->tid_min;
	sn->tid_max = s->tid > sn->tid_max ? s->tid : sn->tid_max;
	for (size_t i = 0; sn->pids && i < f->nr_pids; i++)
		sn->pids[i] |= f->pids[i] == s->pid;
	for (size_t i = 0; sn->tids && i < f->nr_tids; i++)
		sn->tids[i] |= f->tids[i] == s->tid;
	if (!comm)
		return;
	for (size_t i = 0; sn->comms && i < f->nr_comms; i++)
		sn->comms[i] |= !strcmp(f->comms[i], comm);
	for (size_t i = 0; i < sn->nr_comm_names; i++)
		if (!strcmp(sn->comm_names[i], comm))
			return;
	if (sn->nr_comm_names < CONVERT_SEEN_COMMS) {
		sn->comm_names[sn->nr_comm_names] = strdup(comm);
		sn->nr_comm_names += sn->comm_names[sn->nr_comm_names] != NULL;
	} else {
		sn->more_comms = true;
	}
}

/* The per-value flags of note_seen; CONV_E_NOMEM. */
enum conv_err filter_seen_init(struct convert_seen *sn, const struct convert_filter *f)
{
	memset(sn, 0, sizeof(*sn));
	sn->pids = f->nr_pids ? calloc(f->nr_pids, sizeof(bool)) : NULL;
	sn->tids = f->nr_tids ? calloc(f->nr_tids, sizeof(bool)) : NULL;
	sn->comms = f->nr_comms ? calloc(f->nr_comms, sizeof(bool)) : NULL;
	if ((f->nr_pids && !sn->pids) || (f->nr_tids && !sn->tids) || (f->nr_comms && !sn->comms))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

void filter_seen_release(struct convert_seen *sn)
{
	free(sn->pids);
	free(sn->tids);
	free(sn->comms);
	for (size_t i = 0; i < sn->nr_comm_names; i++)
		free(sn->comm_names[i]);
	memset(sn, 0, sizeof(*sn));
}
