/*
 * prof_merge: one input's model renumbered into the merged one. Each kind
 * of id is mapped once (strings, functions and events through arrays the
 * size of src's tables; mappings, locations, stacks and threads by the
 * offset at which src's are appended), so the cost is src's distinct
 * entries plus one pass over its event spool.
 */
#include "model/merge.h"

#include "core/vec.h"
#include "model/events.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct merge {
	struct prof *dst;
	struct prof *src;
	uint32_t *smap;    /* src string -> dst string */
	uint32_t *fmap;    /* src function -> dst function */
	uint32_t *emap;    /* src event -> dst event */
	uint32_t *lsmap;   /* src label list at this place -> dst's, with the input's labels (PROF_NONE: not yet) */
	uint32_t *fsmap;   /* the same for tracepoint field lists of the spool, without them */
	uint32_t empty_ls; /* dst's list of a src sample without labels (PROF_NONE: not yet) */
	struct prof_label *extra;
	size_t nr_extra;
	struct prof_label *lbuf; /* a list being renumbered */
	size_t cap_lbuf;
	size_t map_base, loc_base, stack_base, thread_base;
};

static void merge_release(struct merge *m)
{
	free(m->smap);
	free(m->fmap);
	free(m->emap);
	free(m->lsmap);
	free(m->fsmap);
	free(m->extra);
	free(m->lbuf);
}

static enum conv_err merge_strings(struct merge *m)
{
	const struct strtab *s = &m->src->strs;

	m->smap = malloc((s->count ? s->count : 1) * sizeof(*m->smap));
	if (!m->smap)
		return CONV_E_NOMEM;
	for (uint32_t i = 0; i < s->count; i++)
		m->smap[i] = prof_str(m->dst, strtab_get(s, i));
	return CONV_E_OK;
}

/* A src string id as dst's; an id src does not have (a damaged model) as "". */
static uint32_t str_of(const struct merge *m, uint32_t id)
{
	return id < m->src->strs.count ? m->smap[id] : 0;
}

/* Whether dst's event j is src's event i: names, kind, fields and both value types. */
static bool event_same(const struct merge *m, size_t j, size_t i)
{
	const struct prof_event_desc *d = &m->dst->events_desc[j], *s = &m->src->events_desc[i];

	if (d->name != str_of(m, s->name) || d->full_name != str_of(m, s->full_name) ||
	    d->clock != s->clock || d->tracepoint != s->tracepoint || d->offcpu != s->offcpu ||
	    d->nr_fields != s->nr_fields)
		return false;
	for (uint32_t f = 0; f < s->nr_fields && f < PROF_MAX_FIELDS; f++)
		if (d->field_name[f] != str_of(m, s->field_name[f]) || d->field_num[f] != s->field_num[f])
			return false;
	for (size_t k = 0; k < 2; k++) {
		const struct prof_value_type *dt = &m->dst->types[2 * j + k], *st = &m->src->types[2 * i + k];

		if (dt->type != str_of(m, st->type) || dt->unit != str_of(m, st->unit))
			return false;
	}
	return true;
}

/* Whether dst's type t has a place in its samples' values. */
static bool dst_type_used(const struct prof *p, size_t t)
{
	return prof_type_slot(p, t) != PROF_NONE;
}

/*
 * dst's samples' values laid out again for the types used[] (nr, dst's
 * types after the new events): a value per used type, in type order, the
 * old ones kept and the new ones 0. Happens once per input that brings an
 * event, or a type, the inputs before it had no value of.
 */
static bool relayout_values(struct prof *p, const bool *used, size_t nr)
{
	uint32_t *slot = malloc((nr ? nr : 1) * sizeof(*slot));
	size_t ns = 0, old_ns = prof_nr_slots(p);
	int64_t *vals;
	size_t nv;

	if (!slot)
		return false;
	for (size_t t = 0; t < nr; t++)
		slot[t] = used[t] ? (uint32_t)ns++ : PROF_NONE;
	nv = p->nr_samples * ns;
	vals = calloc(nv ? nv : 1, sizeof(*vals));
	if (!vals) {
		free(slot);
		return false;
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct prof_sample *s = &p->samples[i];

		for (size_t t = 0; old_ns && t < p->nr_types; t++) {
			uint32_t os = prof_type_slot(p, t);

			if (os != PROF_NONE)
				vals[i * ns + slot[t]] = p->values[s->first_value + os];
		}
		s->first_value = (uint32_t)(i * ns);
	}
	free(p->values);
	p->values = vals;
	p->nr_values = p->nr_samples * ns;
	p->cap_values = nv ? nv : 1;
	free(p->type_slot);
	p->type_slot = slot;
	p->nr_slots = ns;
	return true;
}

/* src's events as dst's: the same ones found, the others added (two value types each). */
static enum conv_err merge_events(struct merge *m)
{
	struct prof *dst = m->dst, *src = m->src;
	size_t ne = src->nr_events_desc < src->nr_types / 2 ? src->nr_events_desc : src->nr_types / 2;
	size_t old = dst->nr_events_desc, add = 0, nt;
	bool *used, relayout;

	m->emap = malloc((ne ? ne : 1) * sizeof(*m->emap));
	if (!m->emap)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < ne; i++) {
		size_t j = 0;

		while (j < old && !event_same(m, j, i))
			j++;
		if (j == old) {
			/* a new one, unless an earlier event of src was the same (no two are) */
			j = old + add++;
		}
		m->emap[i] = (uint32_t)j;
	}
	if (add) {
		struct prof_event_desc *d = realloc(dst->events_desc, (old + add) * sizeof(*d));
		struct prof_value_type *t;

		if (!d)
			return CONV_E_NOMEM;
		dst->events_desc = d;
		t = realloc(dst->types, 2 * (old + add) * sizeof(*t));
		if (!t)
			return CONV_E_NOMEM;
		dst->types = t;
		for (size_t i = 0; i < ne; i++) {
			const struct prof_event_desc *s = &src->events_desc[i];
			size_t j = m->emap[i];

			if (j < old)
				continue;
			d[j] = *s;
			d[j].name = str_of(m, s->name);
			d[j].full_name = str_of(m, s->full_name);
			d[j].samples = 0;
			for (uint32_t f = 0; f < s->nr_fields && f < PROF_MAX_FIELDS; f++)
				d[j].field_name[f] = str_of(m, s->field_name[f]);
			for (size_t k = 0; k < 2; k++) {
				t[2 * j + k].type = str_of(m, src->types[2 * i + k].type);
				t[2 * j + k].unit = str_of(m, src->types[2 * i + k].unit);
			}
		}
	}
	for (size_t i = 0; i < ne; i++)
		dst->events_desc[m->emap[i]].samples += src->events_desc[i].samples;
	nt = 2 * (old + add);
	used = calloc(nt ? nt : 1, sizeof(*used));
	if (!used)
		return CONV_E_NOMEM;
	/* a model no input was merged into has no values yet, whatever its slots say */
	for (size_t t = 0; dst->nr_merged && t < dst->nr_types; t++)
		used[t] = dst_type_used(dst, t);
	relayout = !dst->nr_merged || nt != dst->nr_types || !dst->type_slot;
	for (size_t t = 0; t < 2 * ne; t++) {
		size_t dt = 2 * (size_t)m->emap[t / 2] + t % 2;

		if (prof_type_slot(src, t) != PROF_NONE && !used[dt]) {
			used[dt] = true;
			relayout = true;
		}
	}
	dst->nr_events_desc = old + add;
	if (relayout && !relayout_values(dst, used, nt)) {
		free(used);
		return CONV_E_NOMEM;
	}
	dst->nr_types = nt;
	free(used);
	return CONV_E_OK;
}

static enum conv_err merge_functions(struct merge *m)
{
	const struct prof *src = m->src;

	m->fmap = malloc((src->nr_functions ? src->nr_functions : 1) * sizeof(*m->fmap));
	if (!m->fmap)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < src->nr_functions; i++) {
		const struct prof_function *f = &src->functions[i];

		m->fmap[i] = prof_function(m->dst, str_of(m, f->name), str_of(m, f->system_name),
					   str_of(m, f->filename), f->start_line);
		if (m->fmap[i] == PROF_NONE)
			return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

/* Mappings and locations: src's own, appended (no other input's process has them). */
static enum conv_err merge_locations(struct merge *m)
{
	struct prof *dst = m->dst;
	const struct prof *src = m->src;
	struct prof_line *lines = NULL;
	size_t cap = 0;
	enum conv_err err = CONV_E_OK;

	m->map_base = dst->nr_mappings;
	for (size_t i = 0; i < src->nr_mappings; i++) {
		struct prof_mapping mp = src->mappings[i];

		mp.filename = str_of(m, mp.filename);
		mp.build_id = str_of(m, mp.build_id);
		if (prof_add_mapping(dst, &mp) == PROF_NONE)
			return CONV_E_NOMEM;
	}
	m->loc_base = dst->nr_locations;
	for (size_t i = 0; i < src->nr_locations && !err; i++) {
		const struct prof_location *l = &src->locations[i];
		uint32_t mapping = l->mapping == PROF_NONE || l->mapping >= src->nr_mappings
					   ? PROF_NONE
					   : (uint32_t)(m->map_base + l->mapping);
		uint32_t id;

		if (!vec_reserve((void **)&lines, &cap, l->nr_lines + 1, sizeof(*lines))) {
			err = CONV_E_NOMEM;
			break;
		}
		for (uint32_t k = 0; k < l->nr_lines; k++) {
			lines[k] = src->lines[l->first_line + k];
			lines[k].function = lines[k].function < src->nr_functions ? m->fmap[lines[k].function] : 0;
		}
		id = prof_location_append(dst, mapping, l->address, lines, l->nr_lines);
		if (id == PROF_NONE)
			err = CONV_E_NOMEM;
		else if (l->has_elf_addr)
			prof_location_set_elf_addr(dst, id, l->elf_addr);
	}
	free(lines);
	return err;
}

static enum conv_err merge_stacks(struct merge *m)
{
	struct prof *dst = m->dst;
	const struct prof *src = m->src;
	uint32_t *locs = NULL;
	size_t cap = 0;
	enum conv_err err = CONV_E_OK;

	m->stack_base = dst->nr_stacks;
	for (size_t i = 0; i < src->nr_stacks && !err; i++) {
		uint32_t n;
		const uint32_t *sl = prof_stack_locs(src, (uint32_t)i, &n);

		if (!vec_reserve((void **)&locs, &cap, (size_t)n + 1, sizeof(*locs))) {
			err = CONV_E_NOMEM;
			break;
		}
		for (uint32_t k = 0; k < n; k++)
			locs[k] = (uint32_t)(m->loc_base + sl[k]);
		/* src's stacks are distinct and use src's own locations: no other input's is equal */
		if (prof_stack_append(dst, locs, n) == PROF_NONE)
			err = CONV_E_NOMEM;
		else if (prof_stack_truncated(src, (uint32_t)i) &&
			 !prof_stack_set_truncated(dst, (uint32_t)(m->stack_base + i)))
			err = CONV_E_NOMEM;
	}
	free(locs);
	return err;
}

static enum conv_err merge_threads(struct merge *m)
{
	m->thread_base = m->dst->nr_threads;
	for (size_t i = 0; i < m->src->nr_threads; i++) {
		struct prof_thread t = m->src->threads[i];

		t.name = str_of(m, t.name);
		t.process_name = str_of(m, t.process_name);
		t.origin = m->dst->nr_merged;
		if (prof_add_thread(m->dst, &t) == PROF_NONE)
			return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

/*
 * dst's place of src's label list at first (n labels), renumbered, with
 * the input's labels after them when with_extra; UINT32_MAX when out of
 * memory or not within src's pool.
 */
static uint32_t label_list(struct merge *m, uint32_t first, uint32_t n, bool with_extra)
{
	const struct prof *src = m->src;
	size_t extra = with_extra ? m->nr_extra : 0;

	if (n > src->nr_labels || first > src->nr_labels - n ||
	    !vec_reserve((void **)&m->lbuf, &m->cap_lbuf, n + extra + 1, sizeof(*m->lbuf)))
		return UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_label *l = &src->labels[first + i];

		m->lbuf[i].key = str_of(m, l->key);
		m->lbuf[i].str = str_of(m, l->str);
		m->lbuf[i].num = l->num;
		m->lbuf[i].unit = str_of(m, l->unit);
	}
	if (extra)
		memcpy(m->lbuf + n, m->extra, extra * sizeof(*m->extra));
	return prof_label_set(m->dst, m->lbuf, (uint32_t)(n + extra));
}

/* The same through a cache by place (each list starts at a place of its own; empty ones share). */
static uint32_t label_list_cached(struct merge *m, uint32_t *cache, uint32_t first, uint32_t n,
				  bool with_extra)
{
	uint32_t *slot = !n ? (with_extra ? &m->empty_ls : NULL) : first < m->src->nr_labels ? &cache[first]
											       : NULL;
	uint32_t ls;

	if (slot && *slot != PROF_NONE)
		return *slot;
	ls = label_list(m, first, n, with_extra);
	if (slot)
		*slot = ls;
	return ls;
}

static enum conv_err merge_samples(struct merge *m)
{
	struct prof *dst = m->dst;
	const struct prof *src = m->src;
	size_t ne = src->nr_events_desc < src->nr_types / 2 ? src->nr_events_desc : src->nr_types / 2;
	int64_t *vals = calloc(dst->nr_types ? dst->nr_types : 1, sizeof(*vals));
	enum conv_err err = CONV_E_OK;

	if (!vals)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < src->nr_samples; i++) {
		const struct prof_sample *s = &src->samples[i];
		uint32_t ls = label_list_cached(m, m->lsmap, s->first_label, s->nr_labels, true);

		memset(vals, 0, dst->nr_types * sizeof(*vals));
		for (size_t t = 0; t < 2 * ne; t++)
			vals[2 * (size_t)m->emap[t / 2] + t % 2] = prof_sample_value(src, s, t);
		if (ls == UINT32_MAX || s->stack >= src->nr_stacks ||
		    !prof_add_sample_set(dst, (uint32_t)(m->stack_base + s->stack), ls,
					 (uint32_t)(s->nr_labels + m->nr_extra), vals)) {
			err = CONV_E_NOMEM;
			break;
		}
	}
	free(vals);
	return err;
}

/* A src sample event as the instant its own recording's JFR shows (jfrwriter's wall_of). */
static uint64_t time_of(const struct prof *src, uint64_t tick)
{
	if (src->sys.wall_known)
		return (uint64_t)src->time_nanos + (tick - src->sys.first_time);
	return tick;
}

/* src's spool into dst's, renumbered. */
static enum conv_err merge_spool(struct merge *m, const char *tmpdir, struct conv_diag *diag)
{
	struct prof *dst = m->dst, *src = m->src;
	size_t ne = src->nr_events_desc < src->nr_types / 2 ? src->nr_events_desc : src->nr_types / 2;
	struct prof_event ev;
	enum conv_err err;

	if (!src->events)
		return CONV_E_OK;
	if (!dst->events) {
		err = prof_events_open(&dst->events, tmpdir, diag);
		if (err)
			return err;
	}
	err = prof_events_rewind(src->events, diag);
	if (err)
		return err;
	while (prof_events_next(src->events, &ev)) {
		uint32_t e = ev.event == PROF_EVENT_OFFCPU ? src->offcpu_event : ev.event;
		const struct prof_event_desc *d;

		if (e >= ne || ev.stack >= src->nr_stacks || ev.thread >= src->nr_threads)
			return conv_fail(diag, CONV_E_INVAL, UINT64_MAX,
					 "sample event refers to stack %" PRIu32 " of %zu, thread %" PRIu32
					 " of %zu, event %" PRIu32 " of %zu",
					 ev.stack, src->nr_stacks, ev.thread, src->nr_threads, e, ne);
		d = &src->events_desc[e];
		if (d->offcpu)
			ev.label = str_of(m, ev.label);
		else if (ev.label && d->nr_fields) {
			uint32_t ls = label_list_cached(m, m->fsmap, ev.label - 1, d->nr_fields, false);

			if (ls == UINT32_MAX)
				return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the merged labels");
			ev.label = ls + 1;
		} else {
			ev.label = 0;
		}
		ev.event = m->emap[e];
		ev.stack = (uint32_t)(m->stack_base + ev.stack);
		ev.thread = (uint32_t)(m->thread_base + ev.thread);
		ev.time = time_of(src, ev.time);
		prof_events_add(dst->events, &ev);
	}
	if (prof_events_status(src->events))
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "reading the event spool back failed");
	return prof_events_finish(dst->events, diag);
}

/* Where two inputs' facts differ, the merged profile knows none. */
static uint32_t agree(uint32_t a, uint32_t b)
{
	return a == b ? a : 0;
}

/* Machine, times, comments and the first input's defaults. */
static enum conv_err merge_facts(struct merge *m, const char *name)
{
	struct prof *dst = m->dst;
	const struct prof *src = m->src;
	const struct prof_sysinfo *s = &src->sys;
	struct prof_sysinfo *d = &dst->sys;
	bool has_time = s->first_time || s->last_time;
	uint64_t first = time_of(src, s->first_time), last = time_of(src, s->last_time);
	bool dst_time = d->first_time || d->last_time;
	char buf[1024];

	if (!dst->nr_merged) {
		memset(d, 0, sizeof(*d));
		d->hostname = str_of(m, s->hostname);
		d->os_release = str_of(m, s->os_release);
		d->arch = str_of(m, s->arch);
		d->cpu_desc = str_of(m, s->cpu_desc);
		d->cpuid = str_of(m, s->cpuid);
		d->perf_version = str_of(m, s->perf_version);
		d->nr_cpus = s->nr_cpus;
		if (src->nr_types) {
			uint32_t t = src->default_type < src->nr_types ? src->default_type : 0;

			dst->default_type = 2 * m->emap[t / 2] + t % 2;
			dst->period_type.type = str_of(m, src->period_type.type);
			dst->period_type.unit = str_of(m, src->period_type.unit);
			dst->period = src->period;
		}
	} else {
		d->hostname = agree(d->hostname, str_of(m, s->hostname));
		d->os_release = agree(d->os_release, str_of(m, s->os_release));
		d->arch = agree(d->arch, str_of(m, s->arch));
		d->cpu_desc = agree(d->cpu_desc, str_of(m, s->cpu_desc));
		d->cpuid = agree(d->cpuid, str_of(m, s->cpuid));
		d->perf_version = agree(d->perf_version, str_of(m, s->perf_version));
		if (s->nr_cpus > d->nr_cpus)
			d->nr_cpus = s->nr_cpus;
	}
	d->lost_samples += s->lost_samples;
	/* the merged clock is the instants themselves (time_of): wall_of must not shift it again */
	d->wall_known = false;
	if (has_time) {
		if (!dst_time || first < d->first_time)
			d->first_time = first;
		if (!dst_time || last > d->last_time)
			d->last_time = last;
	}
	if (src->time_nanos) {
		int64_t end = dst->time_nanos + dst->duration_nanos, send = src->time_nanos + src->duration_nanos;

		if (!dst->time_nanos || src->time_nanos < dst->time_nanos)
			dst->time_nanos = src->time_nanos;
		if (!end || send > end)
			end = send;
		dst->duration_nanos = end - dst->time_nanos;
	}
	if (dst->primary_event == PROF_NONE && src->primary_event < src->nr_events_desc)
		dst->primary_event = m->emap[src->primary_event];
	if (dst->offcpu_event == PROF_NONE && src->offcpu_event < src->nr_events_desc)
		dst->offcpu_event = m->emap[src->offcpu_event];
	for (size_t i = 0; i < src->nr_comments; i++) {
		snprintf(buf, sizeof(buf), "%s: %s", name ? name : "", strtab_get(&src->strs, src->comments[i]));
		if (!prof_add_comment(dst, buf))
			return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

/* The caches and the input's labels, interned. */
static enum conv_err merge_prepare(struct merge *m, const struct prof_merge_opts *o)
{
	size_t nl = m->src->nr_labels + 1;

	m->lsmap = malloc(nl * sizeof(*m->lsmap));
	m->fsmap = malloc(nl * sizeof(*m->fsmap));
	m->extra = calloc(o->nr_labels + 1, sizeof(*m->extra));
	if (!m->lsmap || !m->fsmap || !m->extra)
		return CONV_E_NOMEM;
	memset(m->lsmap, 0xff, nl * sizeof(*m->lsmap));
	memset(m->fsmap, 0xff, nl * sizeof(*m->fsmap));
	m->empty_ls = PROF_NONE;
	for (size_t i = 0; i < o->nr_labels; i++) {
		m->extra[i].key = prof_str(m->dst, o->labels[i].key);
		m->extra[i].str = prof_str(m->dst, o->labels[i].value);
	}
	m->nr_extra = o->nr_labels;
	return CONV_E_OK;
}

enum conv_err prof_merge(struct prof *dst, struct prof *src, const struct prof_merge_opts *o,
			 struct conv_diag *diag)
{
	struct merge m;
	enum conv_err err;

	memset(&m, 0, sizeof(m));
	m.dst = dst;
	m.src = src;
	if (!dst->nr_merged && !dst->nr_events_desc) {
		/* prof_init leaves the CPU-time event at 0: an empty model has none */
		dst->primary_event = PROF_NONE;
		dst->offcpu_event = PROF_NONE;
	}
	err = merge_strings(&m);
	if (!err)
		err = merge_prepare(&m, o);
	if (!err)
		err = merge_events(&m);
	if (!err)
		err = merge_functions(&m);
	/* sized once: src's counts are what comes (exactly, so the merged arrays end as large as they need) */
	if (!err && (!prof_reserve(dst, src->nr_locations, src->nr_stacks,
				   src->stack_pool_len > src->nr_stacks ? src->stack_pool_len - src->nr_stacks : 0,
				   src->nr_samples) ||
		     !vec_reserve_exact((void **)&dst->lines, &dst->cap_lines, dst->nr_lines + src->nr_lines,
				       sizeof(*dst->lines))))
		err = CONV_E_NOMEM;
	if (!err)
		err = merge_locations(&m);
	if (!err)
		err = merge_stacks(&m);
	if (!err)
		err = merge_threads(&m);
	if (!err)
		err = merge_samples(&m);
	if (!err)
		err = merge_spool(&m, o->tmpdir, diag);
	if (!err)
		err = merge_facts(&m, o->name);
	if (err == CONV_E_NOMEM)
		conv_fail(diag, err, UINT64_MAX, "no memory for the merged profile");
	if (!err)
		dst->nr_merged++;
	merge_release(&m);
	return err;
}
