#include "pipeline/resym.h"

#include "buildid/buildid.h"
#include "core/clock.h"
#include "core/dbuf.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "jfredit/jfredit.h"
#include "jfrwriter/jfr.h"
#include "pipeline/host.h"
#include "core/vec.h"
#include "pprofedit/pprofedit.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "symbolize/symbolize.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* User space ends below this on the 64-bit machines perf records (x86_64, arm64). */
#define KERNEL_HALF 0x8000000000000000ull
#define NO_ID UINT32_MAX

/* A build-id as a JFR names it: hex of at most the bytes a mapping keeps (feed_mmap's). */
static bool is_build_id(const char *s)
{
	uint8_t b[sizeof(((struct rdr_event *)0)->u.mmap.build_id)];
	size_t n;

	return buildid_from_hex(s, b, sizeof(b), &n);
}

/*
 * Whether len bytes are a build-id whole: hex digits only (no NUL inside,
 * which a C string would be cut at, asking the server for another build-id
 * and making its cache entry), an even number of them, at most a mapping's.
 */
static bool bytes_are_build_id(const uint8_t *s, size_t len)
{
	if (!len || len % 2 || len / 2 > sizeof(((struct rdr_event *)0)->u.mmap.build_id))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit(s[i]))
			return false;
	return true;
}

/* A decoded JFR string (NUL-terminated in s) that is a build-id whole: no NUL before its end. */
static bool dbuf_is_build_id(const struct dbuf *s)
{
	return s->len && bytes_are_build_id(s->data, s->len - 1) && strlen((const char *)s->data) == s->len - 1;
}

/*
 * An object as an MMAP2 record of a process of its own (the kernel's in
 * kernel space), build-id from hex bid when not NULL or empty. Returns the
 * process model's mapping id, NO_ID when it was not taken.
 */
static uint32_t feed_mmap(struct procmap *pm, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
			  const char *path, const char *bid, bool kernel)
{
	struct rdr_event ev;
	size_t before = procmap_mapping_count(pm), n;

	memset(&ev, 0, sizeof(ev));
	/*
	 * MMAP's form, not MMAP2's: a profile names no device or inode, so with
	 * --buildid-from-disk the file at the path is taken as for an MMAP
	 * record (procmap: unchanged and large enough), not refused for inode 0.
	 */
	ev.type = PERF_REC_MMAP;
	ev.misc = kernel ? PERF_MISC_KERNEL : PERF_MISC_USER;
	ev.attr = -1;
	ev.u.mmap.pid = ev.u.mmap.tid = kernel ? 0xffffffffu : pid;
	ev.u.mmap.start = start;
	ev.u.mmap.len = len;
	ev.u.mmap.pgoff = pgoff;
	ev.u.mmap.filename = path;
	ev.u.mmap.prot = 5; /* PROT_READ | PROT_EXEC: code */
	ev.u.mmap.flags = 2; /* MAP_PRIVATE */
	if (bid && bid[0] && buildid_from_hex(bid, ev.u.mmap.build_id, sizeof(ev.u.mmap.build_id), &n)) {
		ev.u.mmap.build_id_size = (uint8_t)n;
		ev.u.mmap.has_build_id = true;
		ev.misc |= PERF_MISC_MMAP_BUILD_ID;
	}
	/* a mapping record adds one mapping, the last (the kernel's has no process to look it up in) */
	if (procmap_feed(pm, &ev) != CONV_E_OK || procmap_mapping_count(pm) != before + 1)
		return NO_ID;
	return (uint32_t)before;
}

/* Whether mapping m's build_id string is one whole (or empty): one that is not is taken as none. */
static bool mapping_bid_ok(const struct ppe_profile *p, const struct ppe_mapping *m)
{
	size_t raw_len;
	const uint8_t *raw = ppe_str_bytes(p, m->build_id, &raw_len);

	return !raw_len || bytes_are_build_id(raw, raw_len);
}

/* Mapping i of the profile (pid i + 1); NO_ID when it has neither file nor build-id. */
static uint32_t feed_mapping(struct procmap *pm, const struct ppe_profile *p, size_t i)
{
	const struct ppe_mapping *m = &p->mappings[i];
	char path[4096], bid[130];

	ppe_str(p, m->filename, path, sizeof(path));
	if (mapping_bid_ok(p, m))
		ppe_str(p, m->build_id, bid, sizeof(bid));
	else
		bid[0] = 0;
	if ((!path[0] && !bid[0]) || m->limit <= m->start)
		return NO_ID;
	return feed_mmap(pm, (uint32_t)(i + 1), m->start, m->limit - m->start, m->offset, path, bid,
			 m->start >= KERNEL_HALF);
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
	size_t rec_len;
	char path[64], bid[130];

	if (buildid_from_notes_file("/sys/kernel/notes", run, &run_len) != CONV_E_OK)
		return false;
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct ppe_mapping *m = &p->mappings[i];
		const uint8_t *raw;
		size_t raw_len;

		ppe_str(p, m->filename, path, sizeof(path));
		ppe_str(p, m->build_id, bid, sizeof(bid));
		raw = ppe_str_bytes(p, m->build_id, &raw_len);
		if (m->start >= KERNEL_HALF && !strncmp(path, "[kernel.kallsyms]", 17) &&
		    bytes_are_build_id(raw, raw_len) && buildid_from_hex(bid, rec, sizeof(rec), &rec_len) &&
		    rec_len == run_len && !memcmp(rec, run, run_len))
			return true;
	}
	return false;
}

/*
 * The profile's mapping index of a mapping id (0: none): the id itself when
 * the mappings are numbered 1, 2, ... in order (dense, as writers number
 * them), else through idx (id -> index + 1).
 */
static size_t mapping_index(const struct ppe_profile *p, bool dense, const struct hmap *idx, uint64_t id)
{
	uint64_t *v;

	if (dense)
		return id && id <= p->nr_mappings ? (size_t)id : 0;
	v = id ? hmap_get(idx, hmap_hash(id)) : NULL;
	return v ? (size_t)*v : 0;
}

static uint64_t str_key(uint64_t h, const char *str)
{
	return hmap_mix(h, hmap_fingerprint(str, strlen(str)).lo);
}

/* A new function's index in e, the same for equal ones (seen: every function by its hash). */
static uint32_t edit_function(struct ppe_edit *e, struct hidx *seen, struct strtab *names,
			      const struct sym_frame *sf)
{
	uint32_t ids[3];

	uint64_t h = str_key(str_key(str_key(sf->start_line, sf->function), sf->system_name), sf->file);
	struct hidx_iter it;
	struct ppe_new_function *f;

	for (uint32_t v = hidx_first(seen, h, &it); v != HIDX_NONE; v = hidx_next(seen, &it)) {
		f = &e->functions[v];
		if (!strcmp(f->name, sf->function) && !strcmp(f->system_name, sf->system_name) &&
		    !strcmp(f->filename, sf->file) && f->start_line == sf->start_line)
			return v;
	}
	if (e->nr_functions >= HIDX_NONE ||
	    !vec_reserve((void **)&e->functions, &e->cap_functions, e->nr_functions + 1, sizeof(*f)) ||
	    !hidx_add(seen, h, (uint32_t)e->nr_functions))
		return NO_ID;
	/* copied: the symbolizer that made them goes before the profile is written */
	ids[0] = strtab_intern_cstr(names, sf->function);
	ids[1] = strtab_intern_cstr(names, sf->system_name);
	ids[2] = strtab_intern_cstr(names, sf->file);
	if (ids[0] == STRTAB_NONE || ids[1] == STRTAB_NONE || ids[2] == STRTAB_NONE)
		return NO_ID;
	f = &e->functions[e->nr_functions];
	f->name = strtab_get(names, ids[0]);
	f->system_name = strtab_get(names, ids[1]);
	f->filename = strtab_get(names, ids[2]);
	f->start_line = sf->start_line;
	return (uint32_t)e->nr_functions++;
}

/* Location li's new lines from its symbolizer result, and its mapping's flags; false when out of memory. */
static bool edit_location(struct ppe_edit *e, struct hidx *seen, struct strtab *names, size_t li,
			  size_t mi, const struct symjob_result *r)
{
	unsigned flags = PPE_HAS_FUNCTIONS;

	if (!vec_reserve((void **)&e->lines, &e->cap_lines, e->nr_lines + r->nr, sizeof(*e->lines)))
		return false;
	e->loc_first[li] = (uint32_t)e->nr_lines;
	e->loc_nr[li] = r->nr;
	for (uint32_t k = 0; k < r->nr; k++) {
		struct ppe_new_line *nl = &e->lines[e->nr_lines++];
		uint32_t f = edit_function(e, seen, names, &r->frames[k]);

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

/*
 * The unresolved objects' list as it is built: strings interned in the
 * stats' own table (one copy of each distinct string, not three allocations
 * an object), an object met in several batches listed once, where it was
 * first met. Past RESYM_MISSING_MAX objects it is only counted: a profile
 * naming a million objects would keep ~170 bytes a listed one, more than
 * the profile's own size allows (issue 32), and no one reads such a list.
 */
struct missing_store {
	struct hidx idx; /* (build-id, path, reason) -> index into st->missing */
	size_t cap;
};

static uint64_t missing_key(const char *bid, const char *path, const char *reason)
{
	return str_key(str_key(str_key(0, bid), path), reason);
}

/* Appends sj's unresolved objects to st->missing (sj NULL: none); false when out of memory. */
static bool missing_add(struct missing_store *ms, struct resym_stats *st, const struct symjob *sj)
{
	size_t n = sj ? symjob_unresolved_count(sj) : 0;

	if (!st->strs) {
		st->strs = malloc(sizeof(*st->strs));
		if (!st->strs)
			return false;
		strtab_init(st->strs);
	}
	for (size_t i = 0; i < n; i++) {
		const struct symjob_missing *m = symjob_unresolved_at(sj, i);
		const char *bid = m->build_id ? m->build_id : "", *path = m->path ? m->path : "";
		const char *reason = m->reason ? m->reason : "";
		uint64_t h = missing_key(bid, path, reason);
		struct resym_missing *o = NULL;
		struct hidx_iter it;
		uint32_t ids[3];

		for (uint32_t v = hidx_first(&ms->idx, h, &it); v != HIDX_NONE && !o; v = hidx_next(&ms->idx, &it))
			if (!strcmp(st->missing[v].build_id, bid) && !strcmp(st->missing[v].path, path) &&
			    !strcmp(st->missing[v].reason, reason))
				o = &st->missing[v];
		if (o) {
			o->locations += m->frames;
			continue;
		}
		if (st->nr_missing >= RESYM_MISSING_MAX) {
			st->missing_more++;
			st->missing_more_locations += m->frames;
			continue;
		}
		ids[0] = strtab_intern_cstr(st->strs, bid);
		ids[1] = strtab_intern_cstr(st->strs, path);
		ids[2] = strtab_intern_cstr(st->strs, reason);
		if (ids[0] == STRTAB_NONE || ids[1] == STRTAB_NONE || ids[2] == STRTAB_NONE ||
		    !vec_reserve((void **)&st->missing, &ms->cap, st->nr_missing + 1, sizeof(*st->missing)) ||
		    !hidx_add(&ms->idx, h, (uint32_t)st->nr_missing))
			return false;
		o = &st->missing[st->nr_missing++];
		o->build_id = strtab_get(st->strs, ids[0]);
		o->path = strtab_get(st->strs, ids[1]);
		o->reason = strtab_get(st->strs, ids[2]);
		o->locations = m->frames;
	}
	return true;
}

/* Adds sj's counts to st's (a profile symbolized in batches sums them). */
static void add_sym_stats(struct resym_stats *st, const struct symjob *sj)
{
	const struct symjob_stats *s = symjob_stats(sj);

	st->objects += s->objects;
	st->objects_found += s->objects_found;
	st->dfd_fetched += s->dfd_fetched;
	st->dfd_cache_hits += s->dfd_cache_hits;
	st->dfd_not_found += s->dfd_not_found;
	st->dfd_errors += s->dfd_errors;
	st->dfd_untrusted += s->dfd_untrusted;
}

/*
 * A profile's objects are symbolized a batch at a time: the locations in
 * order, cut where the next would bring a batch's mappings past this many;
 * each batch's mappings become a process model of their own and a
 * symbolizer of their own, freed before the next. The symbolizer and the
 * process model keep a few KB an object (its record, paths, debuginfod's
 * requests, the lookups' state), so that a profile naming very many objects
 * would cost gigabytes whatever its size; batches bound that, and real
 * profiles (a few hundred to a few thousand mappings) are one batch, as
 * before. Mappings that no location to be named is in are not fed at all.
 * The batches share one deadline for debuginfod (the option's, from the
 * first batch's start), so that a slow server costs it once, not once a
 * batch; past it a batch gets a second (time linear in the batches).
 */
#define RESYM_BATCH_MAPPINGS 4096u
/* dfd_opts.deadline_s's default (buildid/debuginfod.h) */
#define RESYM_DEFAULT_DEADLINE_S 300

/* What the pass over the profile keeps while the symbolizer works. */
struct pass {
	const struct ppe_profile *p;
	bool dense;            /* mapping ids 1..n in order: no index */
	struct hmap map_idx;   /* mapping id -> index + 1 (not dense) */
	uint32_t *map_batch;   /* per mapping: the batch (1-based) it was fed in, 0 none yet */
	uint32_t *pm_ids;      /* per mapping: the process model's id in that batch, NO_ID none */
	uint32_t *addr_ids;    /* per location: symjob address id, SYMJOB_NONE none */
	uint32_t *loc_map;     /* per location: mapping index + 1, 0 none */
	uint64_t start_ns;     /* when the first batch began (clock_now_ns) */
	struct hidx seen;      /* the new functions, by hash */
	struct strtab names;   /* their strings */
	struct missing_store ms;
};

/* The mapping index of every location and whether it is a candidate (ps->addr_ids: 0 yes, NONE no). */
static bool classify_locations(struct pass *ps, const struct resym_opts *o, struct resym_stats *st)
{
	const struct ppe_profile *p = ps->p;

	ps->dense = true;
	for (size_t i = 0; i < p->nr_mappings; i++) {
		if (p->mappings[i].id != i + 1)
			ps->dense = false;
		if (!mapping_bid_ok(p, &p->mappings[i]))
			st->bad_build_ids++;
	}
	for (size_t i = 0; !ps->dense && i < p->nr_mappings; i++)
		if (p->mappings[i].id && !hmap_put(&ps->map_idx, hmap_hash(p->mappings[i].id), i + 1))
			return false;
	for (size_t li = 0; li < p->nr_locations; li++) {
		const struct ppe_location *l = &p->locations[li];
		size_t mi = mapping_index(p, ps->dense, &ps->map_idx, l->mapping_id);
		const struct ppe_mapping *m = mi ? &p->mappings[mi - 1] : NULL;

		ps->addr_ids[li] = SYMJOB_NONE;
		ps->loc_map[li] = (uint32_t)mi;
		if (l->nr_lines && !o->force) {
			st->named_before++;
			continue;
		}
		if (!m || l->address < m->start || l->address >= m->limit) {
			st->unmapped++;
			continue;
		}
		ps->addr_ids[li] = 0;
	}
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Symbolizes what was fed to pm and sj; kernel_here: this machine's kallsyms
 * name the kernel's frames (the recorded release runs here, as in a conversion).
 */
static enum conv_err symbolize_fed(struct procmap *pm, struct symjob *sj, bool kernel_here,
				   struct conv_diag *diag)
{
	if (kernel_here) {
		procmap_set_running_kernel(pm, true);
		symjob_set_running_kernel(sj, true);
	}
	procmap_finish(pm);
	return symjob_run(sj, diag);
}

/*
 * One batch from location *li on: feeds its mappings (in the profile's
 * order, as one model of them all was fed), registers its candidates,
 * symbolizes them and takes their lines, strings copied; *li moved past it.
 */
static enum conv_err run_batch(struct pass *ps, const struct resym_opts *o, uint32_t batch, bool kernel_here,
			       struct ppe_edit *e, size_t *li, struct resym_stats *st, struct conv_diag *diag)
{
	const struct ppe_profile *p = ps->p;
	struct procmap *pm = procmap_new(&o->pm);
	struct symjob *sj = NULL;
	struct symjob_opts sjo = o->sj;
	size_t start = *li, end = start, nr = 0, mi;
	uint32_t *mine = NULL;
	enum conv_err err = CONV_E_NOMEM;

	mine = malloc(RESYM_BATCH_MAPPINGS * sizeof(*mine));
	if (!pm || !mine)
		goto out;
	/* the batch's locations: up to the first whose mapping would be one too many */
	for (; end < p->nr_locations; end++) {
		if (ps->addr_ids[end] == SYMJOB_NONE)
			continue;
		mi = ps->loc_map[end] - 1;
		if (ps->map_batch[mi] == batch)
			continue;
		if (nr == RESYM_BATCH_MAPPINGS)
			break;
		ps->map_batch[mi] = batch;
		mine[nr++] = (uint32_t)mi;
	}
	*li = end;
	qsort(mine, nr, sizeof(*mine), cmp_u32);
	for (size_t i = 0; i < nr; i++)
		ps->pm_ids[mine[i]] = feed_mapping(pm, p, mine[i]);
	if (batch > 1) {
		long total = o->sj.deadline_s > 0 ? o->sj.deadline_s : RESYM_DEFAULT_DEADLINE_S;
		long left = total - (long)((clock_now_ns() - ps->start_ns) / 1000000000u);

		sjo.deadline_s = left > 1 ? left : 1;
	}
	err = symjob_new(&sj, &sjo, pm, diag);
	if (err)
		goto out;
	for (size_t l = start; l < end; l++) {
		const struct ppe_location *loc = &p->locations[l];
		const struct ppe_mapping *m;

		if (ps->addr_ids[l] == SYMJOB_NONE)
			continue;
		mi = ps->loc_map[l] - 1;
		m = &p->mappings[mi];
		if (ps->pm_ids[mi] == NO_ID) {
			ps->addr_ids[l] = SYMJOB_NONE;
			st->unmapped++;
			continue;
		}
		st->candidates++;
		ps->addr_ids[l] = symjob_add(sj, ps->pm_ids[mi], loc->address - m->start + m->offset);
		/* counted per location: what the unresolved objects' list says */
		if (ps->addr_ids[l] != SYMJOB_NONE)
			symjob_hit(sj, ps->addr_ids[l], 1);
	}
	err = symbolize_fed(pm, sj, kernel_here, diag);
	if (err)
		goto out;
	err = CONV_E_NOMEM;
	for (size_t l = start; l < end; l++) {
		const struct symjob_result *r =
			ps->addr_ids[l] == SYMJOB_NONE ? NULL : symjob_get(sj, ps->addr_ids[l]);

		if (!r || !r->nr)
			continue;
		if (!edit_location(e, &ps->seen, &ps->names, l, ps->loc_map[l], r))
			goto out;
		st->named++;
		st->by_src[r->src < SYMSRC__COUNT ? r->src : SYMSRC_UNRESOLVED]++;
	}
	if (!missing_add(&ps->ms, st, sj))
		goto out;
	add_sym_stats(st, sj);
	err = CONV_E_OK;
out:
	if (sj)
		symjob_free(sj);
	if (pm)
		procmap_free(pm);
	free(mine);
	return err;
}

enum conv_err resym_pprof(const struct ppe_profile *p, const struct resym_opts *o, bool gzip, int fd,
			  uint64_t *bytes, int *io_errno, struct resym_stats *st, struct conv_diag *diag)
{
	struct pass ps;
	struct ppe_edit e;
	enum conv_err err = CONV_E_NOMEM;
	bool have_edit = false, kernel_here;
	uint32_t batch = 0;
	size_t li = 0;

	memset(st, 0, sizeof(*st));
	memset(&ps, 0, sizeof(ps));
	*bytes = 0;
	*io_errno = 0;
	st->locations = p->nr_locations;
	ps.p = p;
	hmap_init(&ps.map_idx);
	hidx_init(&ps.seen);
	hidx_init(&ps.ms.idx);
	strtab_init(&ps.names);
	ps.map_batch = calloc(p->nr_mappings ? p->nr_mappings : 1, sizeof(*ps.map_batch));
	ps.pm_ids = malloc((p->nr_mappings ? p->nr_mappings : 1) * sizeof(*ps.pm_ids));
	ps.addr_ids = malloc((p->nr_locations ? p->nr_locations : 1) * sizeof(*ps.addr_ids));
	ps.loc_map = malloc((p->nr_locations ? p->nr_locations : 1) * sizeof(*ps.loc_map));
	if (!ps.map_batch || !ps.pm_ids || !ps.addr_ids || !ps.loc_map || p->nr_mappings >= UINT32_MAX)
		goto out;
	if (!classify_locations(&ps, o, st))
		goto out;
	have_edit = ppe_edit_init(&e, p);
	if (!have_edit)
		goto out;
	kernel_here = kernel_runs_here(p);
	ps.start_ns = clock_now_ns();
	/* at least one batch: the symbolizer's options are checked (diag) even when nothing is to be named */
	do {
		err = run_batch(&ps, o, ++batch, kernel_here, &e, &li, st, diag);
	} while (!err && li < p->nr_locations);
	if (err)
		goto out;
	err = CONV_E_NOMEM;
	if (!st->strs && !missing_add(&ps.ms, st, NULL))
		goto out;
	/* new function ids go above the profile's: refused when they would wrap */
	err = ppe_edit_fits(p, &e, diag);
	if (err)
		goto out;
	err = ppe_write_fd(p, &e, gzip, fd, o->flush, bytes, io_errno);
out:
	if (have_edit)
		ppe_edit_release(&e);
	hmap_release(&ps.map_idx);
	hidx_release(&ps.seen);
	hidx_release(&ps.ms.idx);
	strtab_release(&ps.names);
	free(ps.map_batch);
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
	/* the list's strings are in st->strs */
	free(st->missing);
	if (st->strs) {
		strtab_release(st->strs);
		free(st->strs);
	}
	memset(st, 0, sizeof(*st));
}

/* ---- JFR ---- */

/* A method of the recording that can be named: a remote frame's or an unnamed kernel frame's. */
struct jmethod {
	uint32_t chunk;
	uint64_t key;
	uint32_t obj;  /* index into the objects (build-ids); UINT32_MAX: the kernel */
	uint64_t value;
	enum symjob_addr_mode mode;
	uint32_t addr_id;
};

/* An object of the recording by build-id, with the library name its jdk.NativeLibrary gives. */
struct jobj {
	char bid[130];
	char name[4096];
	uint32_t pm_id;
};

struct jpass {
	const struct jfe_file *f;
	struct jmethod *m;
	size_t nr_m, cap_m;
	struct jobj *objs;
	size_t nr_objs, cap_objs;
	char release[256]; /* the recorded kernel release (jdk.OSInformation), "" unknown */
	uint64_t bad_build_ids; /* strings in build-id places that are not one whole */
};

/* A string field of a value, through its pool when it is a reference: into out (NUL-terminated), false when none. */
static bool jfr_str(const struct jfe_value *v, const char *field, struct dbuf *out)
{
	struct jfe_value x;

	dbuf_reset(out);
	return jfe_value_field(v, field, &x, NULL) && jfe_value_str(&x, out);
}

static uint32_t jobj_of(struct jpass *jp, const char *bid)
{
	for (size_t i = 0; i < jp->nr_objs; i++)
		if (!strcmp(jp->objs[i].bid, bid))
			return (uint32_t)i;
	if (!vec_reserve((void **)&jp->objs, &jp->cap_objs, jp->nr_objs + 1, sizeof(*jp->objs)))
		return UINT32_MAX;
	memset(&jp->objs[jp->nr_objs], 0, sizeof(jp->objs[0]));
	snprintf(jp->objs[jp->nr_objs].bid, sizeof(jp->objs[0].bid), "%s", bid);
	jp->objs[jp->nr_objs].pm_id = NO_ID;
	return (uint32_t)jp->nr_objs++;
}

/* The library names of jdk.NativeLibrary events (by build-id), and the recorded kernel release. */
static bool jfr_libraries(struct jpass *jp, struct dbuf *s)
{
	for (size_t ci = 0; ci < jp->f->nr_chunks; ci++) {
		const struct jfe_chunk *c = &jp->f->chunks[ci];
		const struct jfe_type *lib = jfe_type_named(c, "jdk.NativeLibrary");
		const struct jfe_type *os = jfe_type_named(c, "jdk.OSInformation");

		struct jfe_record rec;
		size_t pos = 0;

		while (jfe_record_next(jp->f, c, &pos, &rec)) {
			struct jfe_value ev;
			char bid[130];
			uint32_t o;

			if ((!lib || rec.type != lib->id) && (!os || rec.type != os->id))
				continue;
			if (!jfe_event_value(jp->f, c, &rec, &ev))
				continue;
			if (os && rec.type == os->id) {
				/* conv writes "uname: SYSNAME HOST RELEASE MACHINE" */
				char sys[64], host[256];

				if (jfr_str(&ev, "osVersion", s) &&
				    sscanf((const char *)s->data, "uname: %63s %255s %255s", sys, host, jp->release) != 3)
					jp->release[0] = 0;
				continue;
			}
			if (!jfr_str(&ev, "buildId", s))
				continue;
			if (!dbuf_is_build_id(s)) {
				jp->bad_build_ids += s->len > 1;
				continue;
			}
			snprintf(bid, sizeof(bid), "%s", (const char *)s->data);
			o = jobj_of(jp, bid);
			if (o == UINT32_MAX)
				return false;
			if (!jp->objs[o].name[0] && jfr_str(&ev, "name", s))
				snprintf(jp->objs[o].name, sizeof(jp->objs[o].name), "%s", (const char *)s->data);
		}
	}
	return true;
}

/*
 * The methods that can be named: <remote> in a class named by a build-id
 * (descriptor "(L0x<ELF address>;)L;" as conv writes it, "(0x<ELF
 * address>)" as conv wrote it before jfr print could show it, or
 * "0x<offset from the image base>" as Datadog's profiler does), and conv's
 * unnamed kernel frames (no class, a hex name, descriptor "(Lk;)L;").
 */
/* The ELF address of a conv-written remote descriptor, either form; false if d is neither. */
static bool remote_elf_va(const char *d, uint64_t *va)
{
	const char *end;
	char *stop;

	if (!strncmp(d, "(L0x", 4)) {
		d += 4;
		end = ";)L;";
	} else if (!strncmp(d, "(0x", 3)) {
		d += 3;
		end = ")";
	} else {
		return false;
	}
	if (!isxdigit((unsigned char)*d))
		return false;
	*va = strtoull(d, &stop, 16);
	return !strcmp(stop, end);
}

static bool jfr_methods(struct jpass *jp, struct dbuf *s)
{
	struct dbuf cls, desc;
	bool ok = true;

	dbuf_init(&cls, 0);
	dbuf_init(&desc, 0);
	for (size_t ci = 0; ci < jp->f->nr_chunks && ok; ci++) {
		const struct jfe_chunk *c = &jp->f->chunks[ci];
		const struct jfe_type *mt = jfe_type_named(c, "jdk.types.Method");

		for (size_t i = 0; mt && i < c->nr_entries && ok; i++) {
			const struct jfe_entry *e = &c->entries[i];
			struct jfe_value v, cv;
			struct jmethod m;
			const char *d;

			if (e->type != mt->id || !jfe_entry_value(jp->f, c, e, &v) || !jfr_str(&v, "name", s) ||
			    !jfr_str(&v, "descriptor", &desc) || !jfe_value_field(&v, "type", &cv, NULL) ||
			    !jfe_value_deref(&cv, &cv) || (!jfr_str(&cv, "name", &cls) && !dbuf_putc(&cls, 0)))
				continue;
			memset(&m, 0, sizeof(m));
			m.chunk = (uint32_t)ci;
			m.key = e->key;
			d = (const char *)desc.data;
			/* a NUL inside a name or descriptor would cut it into another: no such method is named */
			if (strlen((const char *)s->data) + 1 != s->len || strlen(d) + 1 != desc.len)
				continue;
			if (!strcmp((const char *)s->data, "<remote>") && !dbuf_is_build_id(&cls)) {
				jp->bad_build_ids += cls.len > 1;
				continue;
			}
			if (!strcmp((const char *)s->data, "<remote>") && is_build_id((const char *)cls.data)) {
				m.obj = jobj_of(jp, (const char *)cls.data);
				if (remote_elf_va(d, &m.value)) {
					m.mode = SYMJOB_ELF_VA;
				} else if (!strncmp(d, "0x", 2)) {
					m.mode = SYMJOB_IMAGE_OFFSET;
					m.value = strtoull(d + 2, NULL, 16);
				} else {
					continue;
				}
			} else if (!((const char *)cls.data)[0] && !strcmp(d, JFR_DESC_KERNEL) &&
				   !strncmp((const char *)s->data, "0x", 2)) {
				m.obj = UINT32_MAX;
				m.mode = SYMJOB_FILE_OFFSET;
				m.value = strtoull((const char *)s->data + 2, NULL, 16);
			} else {
				continue;
			}
			ok = (m.obj != UINT32_MAX || m.mode == SYMJOB_FILE_OFFSET) &&
			     vec_reserve((void **)&jp->m, &jp->cap_m, jp->nr_m + 1, sizeof(m));
			if (ok)
				jp->m[jp->nr_m++] = m;
		}
	}
	dbuf_release(&cls);
	dbuf_release(&desc);
	return ok;
}

/*
 * A JFR object: its addresses are given otherwise (ELF addresses, image
 * offsets), so the range only has to hold them; the kernel's pgoff is 0
 * (_text unknown), so kallsyms' addresses are taken as they are.
 */
static uint32_t jfr_feed(struct procmap *pm, uint32_t pid, const char *path, const char *bid, bool kernel)
{
	return feed_mmap(pm, pid, kernel ? KERNEL_HALF : 0x10000, kernel ? ~KERNEL_HALF : 0x7fff00000000ull, 0,
			 path, bid, kernel);
}

/* The frames of every named method, as conv's JFR writer writes them. */
static bool jfr_collect(struct jpass *jp, struct symjob *sj, struct jfe_edit *e, struct resym_stats *st)
{
	for (size_t i = 0; i < jp->nr_m; i++) {
		const struct jmethod *m = &jp->m[i];
		const struct symjob_result *r = m->addr_id == SYMJOB_NONE ? NULL : symjob_get(sj, m->addr_id);
		bool kernel = m->obj == UINT32_MAX;
		struct jfe_replace *rp;

		if (!r || !r->nr)
			continue;
		if (!vec_reserve((void **)&e->repl, &e->cap_repl, e->nr_repl + 1, sizeof(*rp)) ||
		    !vec_reserve((void **)&e->frames, &e->cap_frames, e->nr_frames + r->nr, sizeof(*e->frames)))
			return false;
		rp = &e->repl[e->nr_repl++];
		rp->chunk = m->chunk;
		rp->method_key = m->key;
		rp->first = (uint32_t)e->nr_frames;
		rp->nr = r->nr;
		for (uint32_t k = 0; k < r->nr; k++) {
			const struct sym_frame *sf = &r->frames[k];
			struct jfe_new_frame *nf = &e->frames[e->nr_frames++];

			nf->class_name = kernel ? "" : jp->objs[m->obj].name[0] ? jfr_native_class(jp->objs[m->obj].name)
										 : jp->objs[m->obj].bid;
			nf->method = sf->function;
			nf->descriptor = kernel ? JFR_DESC_KERNEL : JFR_DESC_NATIVE;
			nf->modifiers = JFR_ACC_NATIVE;
			nf->line = sf->line;
			nf->frame_type = jfr_native_frame_type(kernel, strcmp(sf->system_name, sf->function) != 0);
		}
		st->named++;
		st->by_src[r->src < SYMSRC__COUNT ? r->src : SYMSRC_UNRESOLVED]++;
	}
	return true;
}

/* Registers every method with the symbolizer through a process model of the recording's objects. */
static void jfr_register(struct jpass *jp, struct procmap *pm, struct symjob *sj, struct resym_stats *st)
{
	uint32_t kernel = NO_ID;

	for (size_t i = 0; i < jp->nr_objs; i++)
		jp->objs[i].pm_id = jfr_feed(pm, (uint32_t)i + 1, jp->objs[i].name, jp->objs[i].bid, false);
	for (size_t i = 0; i < jp->nr_m; i++) {
		struct jmethod *m = &jp->m[i];
		uint32_t map;

		if (m->obj == UINT32_MAX && kernel == NO_ID)
			kernel = jfr_feed(pm, 0, "[kernel.kallsyms]_text", NULL, true);
		map = m->obj == UINT32_MAX ? kernel : jp->objs[m->obj].pm_id;
		st->candidates++;
		/* (the kernel's "file offset" is the address less the mapping's start: symjob keys it by the address) */
		m->addr_id = map == NO_ID ? SYMJOB_NONE
		    : m->mode == SYMJOB_FILE_OFFSET ? symjob_add(sj, map, m->value - KERNEL_HALF)
						     : symjob_add_as(sj, map, m->value, m->mode);
		if (m->addr_id != SYMJOB_NONE)
			symjob_hit(sj, m->addr_id, 1);
	}
}

enum conv_err resym_jfr(const struct jfe_file *f, const struct resym_opts *o, int fd, uint64_t *bytes,
			int *io_errno, struct resym_stats *st, struct conv_diag *diag)
{
	struct jpass jp;
	struct jfe_edit e;
	struct procmap *pm = NULL;
	struct symjob *sj = NULL;
	struct dbuf s;
	struct missing_store ms;
	enum conv_err err = CONV_E_NOMEM;

	memset(st, 0, sizeof(*st));
	memset(&jp, 0, sizeof(jp));
	memset(&ms, 0, sizeof(ms));
	hidx_init(&ms.idx);
	memset(&e, 0, sizeof(e));
	*bytes = 0;
	*io_errno = 0;
	jp.f = f;
	dbuf_init(&s, 0);
	if (!jfr_libraries(&jp, &s) || !jfr_methods(&jp, &s))
		goto out;
	st->locations = jp.nr_m;
	st->bad_build_ids = jp.bad_build_ids;
	pm = procmap_new(&o->pm);
	if (!pm)
		goto out;
	err = symjob_new(&sj, &o->sj, pm, diag);
	if (err)
		goto out;
	jfr_register(&jp, pm, sj, st);
	/* this machine's kallsyms name the kernel's frames when the recorded release runs here, as in a conversion */
	err = symbolize_fed(pm, sj, host_runs_kernel(jp.release[0] ? jp.release : NULL), diag);
	if (err)
		goto out;
	err = CONV_E_NOMEM;
	if (!jfr_collect(&jp, sj, &e, st) || !missing_add(&ms, st, sj))
		goto out;
	add_sym_stats(st, sj);
	err = jfe_write_fd(f, &e, fd, o->flush, bytes, io_errno, diag);
out:
	free(e.repl);
	free(e.frames);
	if (sj)
		symjob_free(sj);
	if (pm)
		procmap_free(pm);
	free(jp.m);
	free(jp.objs);
	hidx_release(&ms.idx);
	dbuf_release(&s);
	if (err == CONV_E_NOMEM && diag && !diag->msg[0])
		conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	return err;
}
