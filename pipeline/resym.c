#include "pipeline/resym.h"

#include "buildid/buildid.h"
#include "core/hmap.h"
#include "core/vec.h"
#include "pprofedit/pprofedit.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "symbolize/symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* User space ends below this on the 64-bit machines perf records (x86_64, arm64). */
#define KERNEL_HALF 0x8000000000000000ull
#define NO_ID UINT32_MAX

/* Two hex digits a byte; false for anything else or more than out holds. */
static bool hex_bytes(const char *s, uint8_t *out, size_t cap, uint8_t *n)
{
	size_t len = strlen(s);

	if (!len || len % 2 || len / 2 > cap)
		return false;
	for (size_t i = 0; i < len; i += 2) {
		unsigned v;

		if (sscanf(s + i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", s[i]) ||
		    !strchr("0123456789abcdefABCDEF", s[i + 1]))
			return false;
		out[i / 2] = (uint8_t)v;
	}
	*n = (uint8_t)(len / 2);
	return true;
}

/*
 * Mapping i of the profile as an MMAP2 record of a process of its own (pid
 * i + 1), the kernel's in kernel space; NO_ID when it has neither file nor
 * build-id. Returns the process model's mapping id.
 */
static uint32_t feed_mapping(struct procmap *pm, const struct ppe_profile *p, size_t i)
{
	const struct ppe_mapping *m = &p->mappings[i];
	char path[4096], bid[130];
	struct rdr_event ev;
	bool kernel = m->start >= KERNEL_HALF;
	uint32_t pid = kernel ? 0xffffffffu : (uint32_t)(i + 1);
	size_t before;

	ppe_str(p, m->filename, path, sizeof(path));
	ppe_str(p, m->build_id, bid, sizeof(bid));
	if ((!path[0] && !bid[0]) || m->limit <= m->start)
		return NO_ID;
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_MMAP2;
	ev.misc = kernel ? PERF_MISC_KERNEL : PERF_MISC_USER;
	ev.attr = -1;
	ev.u.mmap.pid = ev.u.mmap.tid = pid;
	ev.u.mmap.start = m->start;
	ev.u.mmap.len = m->limit - m->start;
	ev.u.mmap.pgoff = m->offset;
	ev.u.mmap.filename = path;
	ev.u.mmap.is_mmap2 = true;
	ev.u.mmap.prot = 5; /* PROT_READ | PROT_EXEC: code */
	ev.u.mmap.flags = 2; /* MAP_PRIVATE */
	if (bid[0] && hex_bytes(bid, ev.u.mmap.build_id, sizeof(ev.u.mmap.build_id),
				&ev.u.mmap.build_id_size)) {
		ev.u.mmap.has_build_id = true;
		ev.misc |= PERF_MISC_MMAP_BUILD_ID;
	}
	before = procmap_mapping_count(pm);
	/* a mapping record adds one mapping, the last (the kernel's has no process to look it up in) */
	if (procmap_feed(pm, &ev) != CONV_E_OK || procmap_mapping_count(pm) != before + 1)
		return NO_ID;
	return (uint32_t)before;
}

/*
 * Whether the profile's kernel is the one running here: its kernel
 * mapping's build-id is the running kernel's (/sys/kernel/notes), so that
 * this machine's kallsyms name its addresses, as a conversion uses them
 * when the recording's kernel release runs here.
 */
static bool kernel_runs_here(const struct ppe_profile *p)
{
	uint8_t run[64], rec[64];
	size_t run_len = 0;
	uint8_t rec_len;
	char path[64], bid[130];

	if (buildid_from_notes_file("/sys/kernel/notes", run, &run_len) != CONV_E_OK)
		return false;
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct ppe_mapping *m = &p->mappings[i];

		ppe_str(p, m->filename, path, sizeof(path));
		ppe_str(p, m->build_id, bid, sizeof(bid));
		if (m->start >= KERNEL_HALF && !strncmp(path, "[kernel.kallsyms]", 17) &&
		    hex_bytes(bid, rec, sizeof(rec), &rec_len) && rec_len == run_len &&
		    !memcmp(rec, run, run_len))
			return true;
	}
	return false;
}

/* The profile's mapping index of a mapping id (0: none), through idx (id -> index + 1). */
static size_t mapping_index(const struct hmap *idx, uint64_t id)
{
	uint64_t *v = id ? hmap_get(idx, hmap_hash(id)) : NULL;

	return v ? (size_t)*v : 0;
}

/* A new function's index in e, the same for equal ones (seen: hash -> index + 1, first of its hash). */
static uint32_t edit_function(struct ppe_edit *e, struct hmap *seen, const struct sym_frame *sf)
{
	uint64_t h = 5;
	uint64_t *v;
	struct ppe_new_function *f;

	for (const char *s = sf->function; *s; s++)
		h = hmap_mix(h, (unsigned char)*s);
	h = hmap_mix(hmap_mix(h, sf->start_line), strlen(sf->system_name) ^ (strlen(sf->file) << 20));
	v = hmap_get(seen, h);
	if (v) {
		f = &e->functions[*v - 1];
		if (!strcmp(f->name, sf->function) && !strcmp(f->system_name, sf->system_name) &&
		    !strcmp(f->filename, sf->file) && f->start_line == sf->start_line)
			return (uint32_t)(*v - 1);
	}
	if (!vec_reserve((void **)&e->functions, &e->cap_functions, e->nr_functions + 1, sizeof(*f)))
		return NO_ID;
	f = &e->functions[e->nr_functions];
	f->name = sf->function;
	f->system_name = sf->system_name;
	f->filename = sf->file;
	f->start_line = sf->start_line;
	/* a collision keeps the first in the index: the second is only written twice */
	if (!v && !hmap_put(seen, h, e->nr_functions + 1))
		return NO_ID;
	return (uint32_t)e->nr_functions++;
}

/* Location li's new lines from its symbolizer result, and its mapping's flags; false when out of memory. */
static bool edit_location(struct ppe_edit *e, struct hmap *seen, size_t li, size_t mi,
			  const struct symjob_result *r)
{
	unsigned flags = PPE_HAS_FUNCTIONS;

	if (!vec_reserve((void **)&e->lines, &e->cap_lines, e->nr_lines + r->nr, sizeof(*e->lines)))
		return false;
	e->loc_first[li] = (uint32_t)e->nr_lines;
	e->loc_nr[li] = r->nr;
	for (uint32_t k = 0; k < r->nr; k++) {
		struct ppe_new_line *nl = &e->lines[e->nr_lines++];
		uint32_t f = edit_function(e, seen, &r->frames[k]);

		if (f == NO_ID)
			return false;
		nl->function = f;
		nl->line = r->frames[k].line;
		nl->column = r->frames[k].column;
		if (r->frames[k].file[0])
			flags |= PPE_HAS_FILENAMES;
	}
	/* as a conversion sets them (pipeline/convert.c, location_of) */
	if (r->frames[0].line)
		flags |= PPE_HAS_LINE_NUMBERS;
	if (r->nr > 1)
		flags |= PPE_HAS_INLINE_FRAMES;
	e->map_flags[mi - 1] |= (uint8_t)flags;
	return true;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static bool copy_missing(struct resym_stats *st, const struct symjob *sj)
{
	size_t n = symjob_unresolved_count(sj);

	st->missing = calloc(n ? n : 1, sizeof(*st->missing));
	if (!st->missing)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct symjob_missing *m = symjob_unresolved_at(sj, i);
		struct resym_missing *o = &st->missing[st->nr_missing++];

		o->build_id = dup_or_empty(m->build_id);
		o->path = dup_or_empty(m->path);
		o->reason = dup_or_empty(m->reason);
		o->locations = m->frames;
		if (!o->build_id || !o->path || !o->reason)
			return false;
	}
	return true;
}

static void copy_sym_stats(struct resym_stats *st, const struct symjob *sj)
{
	const struct symjob_stats *s = symjob_stats(sj);

	st->objects = s->objects;
	st->objects_found = s->objects_found;
	st->dfd_fetched = s->dfd_fetched;
	st->dfd_cache_hits = s->dfd_cache_hits;
	st->dfd_not_found = s->dfd_not_found;
	st->dfd_errors = s->dfd_errors;
}

/* What the pass over the profile keeps while the symbolizer works. */
struct pass {
	const struct ppe_profile *p;
	struct procmap *pm;
	struct symjob *sj;
	struct hmap map_idx;   /* mapping id -> index + 1 */
	uint32_t *pm_ids;      /* per mapping: the process model's id, NO_ID none */
	uint32_t *addr_ids;    /* per location: symjob address id, NO_ID none */
	size_t *loc_map;       /* per location: mapping index + 1, 0 none */
};

/* Registers every candidate location with the symbolizer; false when out of memory. */
static bool register_locations(struct pass *ps, const struct resym_opts *o, struct resym_stats *st)
{
	const struct ppe_profile *p = ps->p;

	for (size_t i = 0; i < p->nr_mappings; i++) {
		if (p->mappings[i].id && !hmap_put(&ps->map_idx, hmap_hash(p->mappings[i].id), i + 1))
			return false;
		ps->pm_ids[i] = feed_mapping(ps->pm, p, i);
	}
	for (size_t li = 0; li < p->nr_locations; li++) {
		const struct ppe_location *l = &p->locations[li];
		size_t mi = mapping_index(&ps->map_idx, l->mapping_id);
		const struct ppe_mapping *m = mi ? &p->mappings[mi - 1] : NULL;

		ps->addr_ids[li] = NO_ID;
		ps->loc_map[li] = mi;
		if (l->nr_lines && !o->force) {
			st->named_before++;
			continue;
		}
		if (!m || ps->pm_ids[mi - 1] == NO_ID || l->address < m->start || l->address >= m->limit) {
			st->unmapped++;
			continue;
		}
		st->candidates++;
		ps->addr_ids[li] = symjob_add(ps->sj, ps->pm_ids[mi - 1], l->address - m->start + m->offset);
		/* counted per location: what the unresolved objects' list says */
		if (ps->addr_ids[li] != SYMJOB_NONE)
			symjob_hit(ps->sj, ps->addr_ids[li], 1);
	}
	return true;
}

/* The new lines of every location the symbolizer named; false when out of memory. */
static bool collect(struct pass *ps, struct ppe_edit *e, struct resym_stats *st)
{
	struct hmap seen;
	bool ok = true;

	hmap_init(&seen);
	for (size_t li = 0; li < ps->p->nr_locations && ok; li++) {
		const struct symjob_result *r =
			ps->addr_ids[li] == NO_ID ? NULL : symjob_get(ps->sj, ps->addr_ids[li]);

		if (!r || !r->nr)
			continue;
		ok = edit_location(e, &seen, li, ps->loc_map[li], r);
		st->named++;
		st->by_src[r->src < SYMSRC__COUNT ? r->src : SYMSRC_UNRESOLVED]++;
	}
	hmap_release(&seen);
	return ok;
}

enum conv_err resym_pprof(const struct ppe_profile *p, const struct resym_opts *o, bool gzip, int fd,
			  uint64_t *bytes, int *io_errno, struct resym_stats *st, struct conv_diag *diag)
{
	struct pass ps;
	struct ppe_edit e;
	enum conv_err err = CONV_E_NOMEM;
	bool have_edit = false;

	memset(st, 0, sizeof(*st));
	memset(&ps, 0, sizeof(ps));
	*bytes = 0;
	*io_errno = 0;
	st->locations = p->nr_locations;
	ps.p = p;
	hmap_init(&ps.map_idx);
	ps.pm = procmap_new(&o->pm);
	ps.pm_ids = malloc((p->nr_mappings ? p->nr_mappings : 1) * sizeof(*ps.pm_ids));
	ps.addr_ids = malloc((p->nr_locations ? p->nr_locations : 1) * sizeof(*ps.addr_ids));
	ps.loc_map = malloc((p->nr_locations ? p->nr_locations : 1) * sizeof(*ps.loc_map));
	if (!ps.pm || !ps.pm_ids || !ps.addr_ids || !ps.loc_map)
		goto out;
	err = symjob_new(&ps.sj, &o->sj, ps.pm, diag);
	if (err)
		goto out;
	err = CONV_E_NOMEM;
	if (!register_locations(&ps, o, st))
		goto out;
	if (kernel_runs_here(p)) {
		procmap_set_running_kernel(ps.pm, true);
		symjob_set_running_kernel(ps.sj, true);
	}
	procmap_finish(ps.pm);
	err = symjob_run(ps.sj, diag);
	if (err)
		goto out;
	err = CONV_E_NOMEM;
	have_edit = ppe_edit_init(&e, p);
	if (!have_edit || !collect(&ps, &e, st) || !copy_missing(st, ps.sj))
		goto out;
	copy_sym_stats(st, ps.sj);
	/* the new names are the symbolizer's strings: written before it goes */
	err = ppe_write_fd(p, &e, gzip, fd, bytes, io_errno);
out:
	if (have_edit)
		ppe_edit_release(&e);
	if (ps.sj)
		symjob_free(ps.sj);
	if (ps.pm)
		procmap_free(ps.pm);
	hmap_release(&ps.map_idx);
	free(ps.pm_ids);
	free(ps.addr_ids);
	free(ps.loc_map);
	if (err == CONV_E_IO && diag)
		conv_fail(diag, CONV_E_IO, UINT64_MAX, "%s", strerror(*io_errno));
	if (err == CONV_E_NOMEM && diag && !diag->msg[0])
		conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	return err;
}

void resym_stats_release(struct resym_stats *st)
{
	for (size_t i = 0; i < st->nr_missing; i++) {
		free(st->missing[i].build_id);
		free(st->missing[i].path);
		free(st->missing[i].reason);
	}
	free(st->missing);
	memset(st, 0, sizeof(*st));
}
