/*
 * What a conversion counted: frames by where they resolved or why not, the
 * objects left unresolved, the servers given up, distinct processes and
 * threads (struct convert_stats).
 */
#include "pipeline/pass.h"

#include "buildid/debuginfod.h"
#include "core/hmap.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

void convert_stats_release(struct convert_stats *st)
{
	filter_seen_release(&st->seen);
	for (size_t i = 0; i < st->nr_missing; i++) {
		free(st->missing[i].build_id);
		free(st->missing[i].path);
		free(st->missing[i].reason);
	}
	free(st->missing);
	st->missing = NULL;
	st->nr_missing = 0;
	for (size_t i = 0; i < st->nr_dfd_down; i++) {
		free(st->dfd_down[i].url);
		free(st->dfd_down[i].why);
	}
	free(st->dfd_down);
	st->dfd_down = NULL;
	st->nr_dfd_down = 0;
}

static int missing_cmp(const void *a, const void *b)
{
	const struct convert_missing *x = a, *y = b;

	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	return strcmp(x->build_id, y->build_id);
}

/* Appends one entry (room reserved by the caller), its strings copied; none when a copy fails. */
static void missing_push(struct convert_stats *st, const char *build_id, const char *path,
			 uint64_t frames, const char *reason)
{
	struct convert_missing *e = &st->missing[st->nr_missing];

	e->build_id = strdup(build_id);
	e->path = strdup(path);
	e->frames = frames;
	e->reason = strdup(reason);
	if (!e->build_id || !e->path || !e->reason) {
		free(e->build_id);
		free(e->path);
		free(e->reason);
		return;
	}
	st->nr_missing++;
}

/*
 * A frame in a mapping with no file to look in (anonymous memory, JIT code
 * without its perf map): unresolved, listed under the mapping's name.
 */
static void note_nofile(struct convert_stats *st, const struct procmap *pm, uint32_t map,
			uint64_t n)
{
	const struct pm_mapping *m = procmap_mapping(pm, map);
	const char *name = m && m->dso ? m->dso : "[anon]";

	st->frames_nofile += n;
	for (size_t i = 0; i < st->nr_missing; i++) {
		if (!strcmp(st->missing[i].path, name)) {
			st->missing[i].frames += n;
			return;
		}
	}
	if (st->nr_missing >= 64 || !vec_reserve((void **)&st->missing, &st->cap_missing,
						  st->nr_missing + 1, sizeof(*st->missing)))
		return;
	missing_push(st, "", name, n,
		     m && m->kind == PM_KIND_JIT ? "JIT code: no perf-PID.map or jitdump names it"
						 : "no file behind this memory");
}

/* The debuginfod servers given up, copied: the symbolizer's strings go with it. */
static void collect_dfd_down(struct convert_stats *st, const struct symjob *sj)
{
	const struct dfd_server *s;

	if (!st->sym.dfd_servers_down)
		return;
	st->dfd_down = calloc(st->sym.dfd_servers_down, sizeof(*st->dfd_down));
	if (!st->dfd_down)
		return;
	for (size_t i = 0; (s = symjob_dfd_server(sj, i)) != NULL; i++) {
		struct convert_dfd_down *d = &st->dfd_down[st->nr_dfd_down];

		if (s->down == DFD_UP || st->nr_dfd_down == st->sym.dfd_servers_down)
			continue;
		d->url = strdup(s->url);
		d->why = strdup(s->why ? s->why : "");
		d->skipped = s->skipped;
		if (!d->url || !d->why) {
			free(d->url);
			free(d->why);
			continue;
		}
		st->nr_dfd_down++;
	}
}

/* Copies what the symbolizer found and missed before it goes away. */
void cstats_collect_sym(struct convert_stats *st, const struct symjob *sj)
{
	size_t n = symjob_unresolved_count(sj);

	st->sym = *symjob_stats(sj);
	collect_dfd_down(st, sj);
	if (!vec_reserve((void **)&st->missing, &st->cap_missing, st->nr_missing + n + 1,
			 sizeof(*st->missing)))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct symjob_missing *m = symjob_unresolved_at(sj, i);

		if (!m->frames)
			continue;
		/* the symbolizer's strings go with it: copied */
		missing_push(st, m->build_id ? m->build_id : "", m->path ? m->path : "", m->frames,
			     m->reason ? m->reason : "");
	}
	qsort(st->missing, st->nr_missing, sizeof(*st->missing), missing_cmp);
}

/* Statistics: samples per distinct frame, then per registered address and per mapping. */
enum conv_err cstats_count_frames(struct pass *ps)
{
	struct scache *c = &ps->c;
	struct convert_stats *st = ps->st;
	uint64_t *hits = calloc(c->nr_frames + 1, sizeof(*hits));
	enum uw_stop why;
	uint32_t why_map;

	ps->map_hits = calloc(procmap_mapping_count(ps->pm) + 1, sizeof(*ps->map_hits));
	if (!hits || !ps->map_hits) {
		free(hits);
		return CONV_E_NOMEM;
	}
	for (size_t i = 0; i < c->nr_keys; i++) {
		const uint32_t *f = c->pool + c->stack_off[c->keys[i].stack] + 1;
		uint32_t n = f[-1];

		st->frames += c->keys[i].count * n;
		for (uint32_t k = 0; k < n; k++)
			hits[f[k]] += c->keys[i].count;
	}
	for (size_t i = 0; i < c->nr_frames; i++) {
		const struct scache_frame *f = &c->frames[i];

		if (!hits[i])
			continue;
		if (scache_frame_stop(f, &why, &why_map)) {
			/* a walk's early stop: said by a frame of its own, not a frame of the program */
			st->frames -= hits[i];
			continue;
		}
		if (f->mapping != PM_NO_MAPPING)
			ps->map_hits[f->mapping] += hits[i];
		if (scache_frame_addr_id(f) != SYMJOB_NONE)
			symjob_hit(ps->sj, scache_frame_addr_id(f), hits[i]);
		else if (f->mapping == PM_NO_MAPPING)
			st->frames_unmapped += hits[i];
		else if (scache_frame_jit(c, f))
			st->frames_jit += hits[i];
		else
			note_nofile(st, ps->pm, f->mapping, hits[i]);
	}
	free(hits);
	return CONV_E_OK;
}

/* Distinct pids and tids, as perf counts them (an exec does not make a new one). */
void cstats_count_threads(struct pass *ps)
{
	struct hmap pids, tids;

	hmap_init(&pids);
	hmap_init(&tids);
	for (size_t t = 0; t < ps->c.nr_threads; t++) {
		const struct pm_proc *pr = procmap_proc(ps->pm, (uint32_t)(ps->c.threads[t] >> 32));
		uint64_t pid = pr ? pr->pid : UINT32_MAX, tid = (uint32_t)ps->c.threads[t];

		if (!hmap_get(&pids, pid + 1) && hmap_put(&pids, pid + 1, 1))
			ps->st->processes++;
		if (!hmap_get(&tids, tid + 1) && hmap_put(&tids, tid + 1, 1))
			ps->st->threads++;
	}
	hmap_release(&pids);
	hmap_release(&tids);
}
