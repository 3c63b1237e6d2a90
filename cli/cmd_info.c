/*
 * conv info: what a perf.data file holds, as text or JSON. It reads the whole
 * file through the reader (so it also checks that every record decodes) and
 * is the oracle the tests compare with perf's own counts.
 */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/tally.h"
#include "cli/text.h"

#include "buildid/buildid.h"
#include "buildid/debuginfod.h"
#include "core/dbuf.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/json.h"
#include "core/vec.h"
#include "pipeline/readpass.h"
#include "pipeline/symjob.h"
#include "pipeline/unwinding.h"
#include "procmap/jitmap.h"
#include "procmap/procmap.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MMAP_BUILD_IDS 100000

struct info_bid {
	uint8_t id[20];
	uint8_t size;
	char *filename;
	uint64_t offset;
};

struct info_state {
	struct info_bid *bids; /* distinct MMAP2 inline build-ids */
	size_t nr_bids, cap_bids;
	struct hidx bid_idx;   /* hash of (build-id, file name) -> index in bids */
	uint64_t bids_dropped;
	struct procmap *pm;
	bool want_dso;
	bool want_mappings;
	bool want_jit;
	bool verbose; /* every object without symbols, not the first 10 */
	bool offline;
	struct tally jit; /* (pid, name, dso) -> leaf samples */
	/* symbolization (--top) */
	struct symjob *sj;
	struct readpass *rp; /* the reading pass: owns pm and sj */
	unsigned top;
	uint64_t *leaf_hits; /* per symjob address id: samples whose leaf is there */
	size_t cap_leaf;
	uint64_t leaf_jit, leaf_unmapped, leaf_nofile;
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	struct tally dso; /* (tid << 32 | process, mapping, attr) -> samples */
};

static void note_dso(struct info_state *st, const struct rdr_event *ev, uint32_t proc,
		     const struct pm_frame *leaf)
{
	tally_add(&st->dso, (uint64_t)ev->u.sample.tid << 32 | proc,
		  leaf ? leaf->mapping : PM_NO_MAPPING, (uint32_t)ev->attr);
}

static void note_jit(struct info_state *st, uint32_t pid, const struct pm_frame *leaf)
{
	const char *dso;

	if (!leaf || !leaf->jit)
		return;
	dso = leaf->mapping == PM_NO_MAPPING ? "[unknown]"
					     : procmap_mapping(st->pm, leaf->mapping)->dso;
	/* names are interned per pid's table, so pointers compare */
	tally_add(&st->jit, pid, (uint64_t)(uintptr_t)leaf->jit->name, (uint64_t)(uintptr_t)dso);
}

/* One progress line on a terminal while debug info downloads; erased when done. */
struct progress {
	bool shown, offline;
};

static void progress_line(void *ctx, const struct symjob_progress *sp)
{
	struct progress *p = ctx;
	const char *pre;
	char post[256];

	if (!sp->active && !sp->queued) {
		if (p->shown)
			cli_progress_clear();
		p->shown = false;
		return;
	}
	cli_dfd_progress(&pre, post, sizeof(post), sp, p->offline);
	cli_progress_line(NULL, pre, -1, post);
	p->shown = true;
}

/* Registers a sample's frames for symbolization and counts its leaf. */
static void note_frames(struct info_state *st, const struct pm_frame *fr, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		uint32_t id = SYMJOB_NONE;

		if (fr[i].mapping != PM_NO_MAPPING && !fr[i].jit) {
			id = symjob_add(st->sj, fr[i].mapping, fr[i].file_offset);
			symjob_hit(st->sj, id, 1);
		}
		if (i != 0)
			continue;
		if (fr[i].jit) {
			st->leaf_jit++;
		} else if (id == SYMJOB_NONE) {
			if (fr[i].mapping == PM_NO_MAPPING)
				st->leaf_unmapped++;
			else
				st->leaf_nofile++;
		} else {
			if (id >= st->cap_leaf) {
				size_t old = st->cap_leaf;

				if (!vec_reserve((void **)&st->leaf_hits, &st->cap_leaf, (size_t)id + 1,
						 sizeof(*st->leaf_hits)))
					continue;
				memset(st->leaf_hits + old, 0, (st->cap_leaf - old) * sizeof(*st->leaf_hits));
			}
			st->leaf_hits[id]++;
		}
	}
}

struct top_ent {
	const char *name;
	uint64_t samples;
	const char *inl[8]; /* distinct inline frame names seen at its leaf addresses */
	unsigned nr_inl;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_ent *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Flat self samples per (outermost, non-inlined) function, as perf report --sort sym. */
static struct top_ent *top_functions(struct info_state *st, size_t *n_out)
{
	struct top_ent *t = NULL;
	size_t n = 0, cap = 0;
	struct hmap idx;

	hmap_init(&idx);
	for (size_t id = 0; id < st->cap_leaf; id++) {
		const struct symjob_result *r;
		const char *name;
		uint64_t *v, h = 0;
		struct top_ent *e;

		if (!st->leaf_hits[id])
			continue;
		r = symjob_get(st->sj, (uint32_t)id);
		name = r && r->nr ? r->frames[r->nr - 1].function : "[unknown]";
		if (!*name)
			name = "[unknown]";
		for (const char *c = name; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
		v = hmap_get(&idx, h);
		if (v && strcmp(t[*v].name, name))
			v = NULL; /* collision: a second entry (rare; totals stay right per entry) */
		if (!v) {
			if (!vec_reserve((void **)&t, &cap, n + 1, sizeof(*t)))
				break;
			memset(&t[n], 0, sizeof(t[n]));
			t[n].name = name;
			hmap_put(&idx, h, n);
			e = &t[n++];
		} else {
			e = &t[*v];
		}
		e->samples += st->leaf_hits[id];
		for (uint32_t k = 0; r && k + 1 < r->nr; k++) {
			bool seen = false;

			for (unsigned q = 0; q < e->nr_inl; q++)
				if (!strcmp(e->inl[q], r->frames[k].function))
					seen = true;
			if (!seen && e->nr_inl < 8)
				e->inl[e->nr_inl++] = r->frames[k].function;
		}
	}
	hmap_release(&idx);
	if (n)
		qsort(t, n, sizeof(*t), top_cmp);
	*n_out = n;
	return t;
}

static void json_symbols(struct json *j, struct info_state *st)
{
	const struct symjob_stats *ss = symjob_stats(st->sj);
	struct top_ent *t;
	size_t n;

	json_key(j, "symbolization");
	json_obj_begin(j);
	json_kv_u64(j, "objects", ss->objects);
	json_kv_u64(j, "objects_found", ss->objects_found);
	json_kv_u64(j, "addresses", ss->addresses);
	json_kv_u64(j, "inline_frames", ss->inline_frames);
	json_kv_u64(j, "normalize_failed", ss->normalize_failed);
	json_key(j, "sources");
	json_obj_begin(j);
	for (int s = 0; s < SYMSRC__COUNT; s++)
		json_kv_u64(j, symjob_src_name((enum symsrc)s),
			    s == SYMSRC_JIT ? procmap_stats(st->pm)->frames_jit : ss->frames_by_src[s]);
	json_obj_end(j);
	json_key(j, "debuginfod");
	json_obj_begin(j);
	cli_dfd_counts_json(j, ss);
	json_key(j, "servers_given_up");
	json_arr_begin(j);
	for (size_t i = 0; i < ss->dfd_servers; i++) {
		const struct dfd_server *d = symjob_dfd_server(st->sj, i);

		if (!d || d->down == DFD_UP)
			continue;
		cli_dfd_down_json(j, d->url, d->why, d->skipped);
	}
	json_arr_end(j);
	json_obj_end(j);
	json_key(j, "not_found");
	json_arr_begin(j);
	for (size_t i = 0; i < symjob_missing_count(st->sj); i++) {
		const struct symjob_missing *m = symjob_missing_at(st->sj, i);

		cli_missing_json(j, m->build_id, m->path, "frames", m->frames, NULL);
	}
	json_arr_end(j);
	json_obj_end(j);
	if (!st->top)
		return;
	t = top_functions(st, &n);
	json_key(j, "top_functions");
	json_arr_begin(j);
	for (size_t i = 0; i < n && i < st->top; i++) {
		json_obj_begin(j);
		json_kv_str(j, "name", t[i].name);
		json_kv_u64(j, "samples", t[i].samples);
		json_key(j, "inlined");
		json_arr_begin(j);
		for (unsigned k = 0; k < t[i].nr_inl; k++)
			json_str(j, t[i].inl[k]);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(t);
}

static const char *dso_name(const struct info_state *st, uint32_t map)
{
	const struct pm_mapping *m = map == PM_NO_MAPPING ? NULL : procmap_mapping(st->pm, map);

	return m ? m->dso : "[unknown]";
}

/*
 * The samples by thread and DSO, one row per (thread, object, event): a
 * process may map one object several times (a JIT's code heaps, a library's
 * segments), and the tally counts mappings. key[1] becomes the DSO's name.
 */
static int dso_row_by_key(const void *a, const void *b)
{
	const struct tally_ent *x = a, *y = b;
	int c;

	if (x->key[0] != y->key[0])
		return x->key[0] < y->key[0] ? -1 : 1;
	c = strcmp((const char *)(uintptr_t)x->key[1], (const char *)(uintptr_t)y->key[1]);
	if (c)
		return c;
	return x->key[2] < y->key[2] ? -1 : x->key[2] > y->key[2];
}

/* most samples first, as perf report --sort dso lists them; then by key */
static int dso_row_by_count(const void *a, const void *b)
{
	const struct tally_ent *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return dso_row_by_key(a, b);
}

static struct tally_ent *dso_rows(const struct info_state *st, size_t *n)
{
	struct tally_ent *v = malloc((st->dso.n ? st->dso.n : 1) * sizeof(*v));
	size_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < st->dso.n; i++) {
		v[i] = st->dso.v[i];
		v[i].key[1] = (uint64_t)(uintptr_t)dso_name(st, (uint32_t)st->dso.v[i].key[1]);
	}
	qsort(v, st->dso.n, sizeof(*v), dso_row_by_key);
	for (size_t i = 0; i < st->dso.n; i++) {
		if (k && !dso_row_by_key(&v[k - 1], &v[i]))
			v[k - 1].count += v[i].count;
		else
			v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), dso_row_by_count);
	*n = k;
	return v;
}

/* What procmap counted: processes, mappings, frames (by their build-ids' source), samples per process. */
static void json_procmap_stats(struct json *j, const struct info_state *st)
{
	const struct pm_stats *ps = procmap_stats(st->pm);

	json_key(j, "processes");
	json_obj_begin(j);
	json_kv_u64(j, "processes", ps->processes);
	json_kv_u64(j, "exec_generations", ps->exec_generations);
	json_kv_u64(j, "threads", ps->threads);
	json_kv_u64(j, "mappings", ps->mappings);
	json_kv_u64(j, "mappings_replaced", ps->mappings_replaced);
	json_kv_u64(j, "samples_unknown_pid", ps->samples_unknown_pid);
	json_kv_u64(j, "frames", ps->frames);
	json_kv_u64(j, "frames_resolved", ps->frames_resolved);
	json_kv_u64(j, "frames_unmapped", ps->frames_unmapped);
	json_kv_u64(j, "frames_exec_window", ps->frames_exec_window);
	json_kv_u64(j, "frames_guest", ps->frames_guest);
	json_key(j, "frames_by_build_id_source");
	json_obj_begin(j);
	for (int b = 0; b < PM_BID__COUNT; b++)
		json_kv_u64(j, procmap_bid_source_name((enum pm_bid_source)b), ps->frames_by_bid[b]);
	json_obj_end(j);
	json_kv_u64(j, "frames_jit", ps->frames_jit);
	json_kv_u64(j, "jit_maps_loaded", ps->jit_maps_loaded);
	json_kv_u64(j, "jit_dumps_loaded", ps->jit_dumps_loaded);
	json_kv_u64(j, "jit_load_failures", ps->jit_load_failures);
	json_kv_u64(j, "jit_entries", ps->jit_entries);
	json_kv_u64(j, "build_id_ambiguous", ps->build_id_ambiguous);
	json_kv_u64(j, "maps_timeout", ps->maps_timeout);
	json_key(j, "samples_per_process");
	json_arr_begin(j);
	for (uint32_t i = 0; i < procmap_proc_count(st->pm); i++) {
		const struct pm_proc *p = procmap_proc(st->pm, i);

		if (!p->samples)
			continue;
		json_obj_begin(j);
		json_kv_u64(j, "pid", p->pid);
		json_kv_u64(j, "generation", p->generation);
		json_kv_str(j, "comm", p->comm);
		json_kv_u64(j, "samples", p->samples);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

/* --mappings: the executable mappings. */
static void json_mappings(struct json *j, const struct info_state *st)
{
	char hex[2 * PM_BUILD_ID_MAX + 1];

	json_key(j, "mappings");
	json_arr_begin(j);
	for (uint32_t i = 0; i < procmap_mapping_count(st->pm); i++) {
		const struct pm_mapping *m = procmap_mapping(st->pm, i);
		const struct pm_proc *p = m->proc == PM_KERNEL_PROC ? NULL
								  : procmap_proc(st->pm, m->proc);

		if (!m->exec)
			continue;
		buildid_hex(m->build_id, m->build_id_size, hex);
		json_obj_begin(j);
		json_key(j, "pid");
		if (p)
			json_u64(j, p->pid);
		else
			json_i64(j, -1);
		json_kv_u64(j, "generation", p ? p->generation : 0);
		json_kv_u64(j, "start", m->start);
		json_kv_u64(j, "limit", m->limit);
		json_kv_u64(j, "pgoff", m->pgoff);
		json_kv_str(j, "path", m->path);
		json_kv_str(j, "dso", m->dso);
		json_kv_str(j, "build_id", hex);
		json_kv_str(j, "build_id_source", procmap_bid_source_name(m->bid_source));
		json_kv_u64(j, "samples", m->samples);
		json_kv_u64(j, "frames", m->frames);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* --jit: samples by JIT symbol. */
static void json_jit(struct json *j, const struct info_state *st)
{
	json_key(j, "jit_symbols");
	json_arr_begin(j);
	for (size_t i = 0; i < st->jit.n; i++) {
		const struct tally_ent *e = &st->jit.v[i];

		json_obj_begin(j);
		json_kv_u64(j, "pid", e->key[0]);
		json_kv_str(j, "dso", (const char *)(uintptr_t)e->key[2]);
		json_kv_str(j, "name", (const char *)(uintptr_t)e->key[1]);
		json_kv_u64(j, "samples", e->count);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* --dso: samples by thread and DSO. */
static void json_dso(struct json *j, const struct info_state *st, const struct rdr_info *info)
{
	struct tally_ent *rows;
	size_t nr_rows;

	rows = dso_rows(st, &nr_rows);
	json_key(j, "dso_samples");
	json_arr_begin(j);
	for (size_t i = 0; i < nr_rows; i++) {
		const struct tally_ent *e = &rows[i];
		uint32_t tid = (uint32_t)(e->key[0] >> 32);
		uint32_t attr = (uint32_t)e->key[2];
		const struct pm_proc *p = procmap_proc(st->pm, (uint32_t)e->key[0]);
		const char *tname = procmap_thread_name(st->pm, tid);

		json_obj_begin(j);
		json_kv_u64(j, "pid", p ? p->pid : 0);
		json_kv_u64(j, "tid", tid);
		json_kv_str(j, "comm", p ? p->comm : "");
		json_kv_str(j, "thread", tname ? tname : "");
		json_kv_str(j, "dso", (const char *)(uintptr_t)e->key[1]);
		json_kv_str(j, "event", attr < info->nr_attrs ? info->attrs[attr].name : "?");
		json_kv_u64(j, "samples", e->count);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(rows);
}

/*
 * arm64: the user address width conv assumes (perf.data names none, nor a
 * PAC mask): the one the highest user mapping needs, PAC bits above it
 * stripped from return addresses. Nothing for other arches.
 */
static bool arm64_va_bits(const struct info_state *st, const struct rdr_info *info, unsigned *bits,
			  uint64_t *highest)
{
	if (uw_arch_of(info->arch) != UW_ARCH_ARM64)
		return false;
	*highest = procmap_user_highest(st->pm);
	*bits = uw_va_bits_of(*highest);
	return true;
}

static void json_procmap(struct json *j, const struct info_state *st, const struct rdr_info *info)
{
	unsigned bits;
	uint64_t highest;

	if (arm64_va_bits(st, info, &bits, &highest)) {
		json_key(j, "address_width");
		json_obj_begin(j);
		json_kv_str(j, "arch", "arm64");
		json_kv_u64(j, "va_bits", bits);
		json_kv_u64_or_null(j, "highest_user_address", highest != 0, highest);
		json_obj_end(j);
	}
	json_procmap_stats(j, st);
	if (st->want_mappings)
		json_mappings(j, st);
	if (st->want_jit)
		json_jit(j, st);
	if (st->want_dso)
		json_dso(j, st, info);
}

static void note_mmap2_bid(struct info_state *st, const struct rdr_event *ev)
{
	const struct rdr_mmap *m = &ev->u.mmap;
	const char *name = m->filename ? m->filename : "";
	size_t name_len = strlen(name);
	/* hashed, not compared with every earlier one: a recording may hold any number */
	uint64_t h = hmap_mix(hmap_fingerprint(m->build_id, m->build_id_size).lo,
			      hmap_fingerprint(name, name_len).lo);
	struct hidx_iter it;

	for (uint32_t i = hidx_first(&st->bid_idx, h, &it); i != HIDX_NONE;
	     i = hidx_next(&st->bid_idx, &it))
		if (st->bids[i].size == m->build_id_size &&
		    !memcmp(st->bids[i].id, m->build_id, m->build_id_size) &&
		    !strcmp(st->bids[i].filename, name))
			return;
	if (st->nr_bids >= MAX_MMAP_BUILD_IDS) {
		st->bids_dropped++;
		return;
	}
	if (!vec_reserve((void **)&st->bids, &st->cap_bids, st->nr_bids + 1, sizeof(*st->bids)))
		return;
	st->bids[st->nr_bids].size = m->build_id_size;
	memcpy(st->bids[st->nr_bids].id, m->build_id, 20);
	st->bids[st->nr_bids].filename = strdup(name);
	st->bids[st->nr_bids].offset = ev->offset;
	if (!st->bids[st->nr_bids].filename)
		return;
	if (!hidx_add(&st->bid_idx, h, (uint32_t)st->nr_bids)) {
		free(st->bids[st->nr_bids].filename);
		return;
	}
	st->nr_bids++;
}

static const char *bid_source_name(enum rdr_bid_source s)
{
	switch (s) {
	case RDR_BID_FEATURE:
		return "build_id_feature";
	case RDR_BID_PIPE:
		return "build_id_record";
	case RDR_BID_MMAP2:
		return "mmap2";
	}
	return "unknown";
}

static const char *cpumode_name(uint16_t misc)
{
	switch (misc & PERF_MISC_CPUMODE_MASK) {
	case PERF_MISC_KERNEL:
		return "kernel";
	case PERF_MISC_USER:
		return "user";
	case PERF_MISC_HYPERVISOR:
		return "hypervisor";
	case PERF_MISC_GUEST_KERNEL:
		return "guest_kernel";
	case PERF_MISC_GUEST_USER:
		return "guest_user";
	default:
		return "unknown";
	}
}

static void format_problem(const struct rdr_problem *p, struct dbuf *out)
{
	const char *rname = p->record_type ? rdr_record_name(p->record_type) : NULL;

	if (p->offset != UINT64_MAX)
		dbuf_printf(out, "offset %" PRIu64 " (0x%" PRIx64 ")", p->offset, p->offset);
	else
		dbuf_puts(out, "file");
	if (p->record_type) {
		if (rname)
			dbuf_printf(out, ", %s record", rname);
		else
			dbuf_printf(out, ", record type %" PRIu32, p->record_type);
	}
	dbuf_printf(out, ": %s", p->msg);
	if (p->count > 1)
		dbuf_printf(out, " (%" PRIu64 " times)", p->count);
}

static void cmdline_join(const struct rdr_info *info, struct dbuf *out)
{
	for (size_t i = 0; i < info->cmdline_len; i++) {
		if (i)
			dbuf_putc(out, ' ');
		dbuf_puts(out, info->cmdline[i] ? info->cmdline[i] : "");
	}
}

/* The header's facts: file, mode, host, command line, compression (tmp: scratch). */
static void json_header(struct json *j, const char *path, const struct rdr_info *info, struct dbuf *tmp)
{
	json_kv_str(j, "file", path);
	json_kv_str(j, "mode", info->mode == RDR_MODE_FILE ? "file" : "pipe");
	json_kv_str(j, "byte_order", info->big_endian ? "big" : "little");
	json_kv_u64_or_null(j, "file_size", info->file_size != UINT64_MAX, info->file_size);
	json_kv_str(j, "perf_version", info->perf_version);
	json_kv_str(j, "hostname", info->hostname);
	json_kv_str(j, "os_release", info->osrelease);
	json_kv_str(j, "arch", info->arch);
	json_kv_u64(j, "nr_cpus_online", info->nr_cpus_online);
	json_key(j, "cmdline");
	if (info->cmdline_len) {
		cmdline_join(info, tmp);
		json_strn(j, (const char *)tmp->data, tmp->len);
	} else {
		json_null(j);
	}
	json_key(j, "compressed");
	if (info->has_compressed) {
		json_obj_begin(j);
		json_kv_u64(j, "type", info->comp_type);
		json_kv_u64(j, "level", info->comp_level);
		json_obj_end(j);
	} else {
		json_null(j);
	}
}

/* The events with their sample counts. */
static void json_events(struct json *j, const struct rdr_info *info)
{
	json_key(j, "events");
	json_arr_begin(j);
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];

		json_obj_begin(j);
		json_kv_str(j, "name", a->name);
		json_kv_u64(j, "type", a->type);
		json_kv_u64(j, "config", a->config);
		json_kv_u64(j, "sample_type", a->sample_type);
		json_kv_u64(j, a->freq ? "sample_freq" : "sample_period", a->sample_period);
		json_kv_u64(j, "ids", a->nr_ids);
		json_kv_u64(j, "samples", a->samples);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Records by type, samples, lost samples, the samples' time span. */
static void json_records(struct json *j, const struct rdr_stats *s)
{
	json_key(j, "records");
	json_obj_begin(j);
	for (uint32_t t = 0; t < RDR_RECORD_TYPES; t++)
		if (s->records[t])
			json_kv_u64(j, rdr_record_name(t), s->records[t]);
	json_obj_end(j);
	json_kv_u64(j, "records_unknown", s->records_unknown);
	json_kv_u64(j, "samples", s->samples);
	json_kv_u64(j, "samples_skipped", s->samples_malformed + s->samples_unknown_attr);
	json_kv_u64(j, "lost_samples", s->lost_events + s->lost_samples);
	json_kv_u64_or_null(j, "first_sample_time", s->has_sample_time, s->first_sample_time);
	json_kv_u64_or_null(j, "last_sample_time", s->has_sample_time, s->last_sample_time);
}

/* Opens a build-id's object with what both lists of build-ids say of it. */
static void json_build_id(struct json *j, const char *hex, const char *filename, const char *source)
{
	json_obj_begin(j);
	json_kv_str(j, "build_id", hex);
	json_kv_str(j, "filename", filename);
	json_kv_str(j, "source", source);
}

/* The build-ids: the header's table, then those of MMAP2 records. */
static void json_build_ids(struct json *j, const struct rdr_info *info, const struct info_state *st)
{
	char hex[41];

	json_key(j, "build_ids");
	json_arr_begin(j);
	for (size_t i = 0; i < info->nr_build_ids; i++) {
		const struct rdr_build_id *b = &info->build_ids[i];

		buildid_hex(b->id, b->size, hex);
		json_build_id(j, hex, b->filename, bid_source_name(b->source));
		json_kv_str(j, "cpumode", cpumode_name(b->misc));
		json_obj_end(j);
	}
	for (size_t i = 0; i < st->nr_bids; i++) {
		buildid_hex(st->bids[i].id, st->bids[i].size, hex);
		json_build_id(j, hex, st->bids[i].filename, "mmap2");
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The problems found, each with its offset (tmp: scratch). */
static void json_problems(struct json *j, const struct rdr *r, struct dbuf *tmp)
{
	json_key(j, "problems");
	json_arr_begin(j);
	for (size_t i = 0; i < rdr_problem_count(r); i++) {
		dbuf_reset(tmp);
		format_problem(rdr_problem_at(r, i), tmp);
		json_strn(j, (const char *)tmp->data, tmp->len);
	}
	if (rdr_problems_dropped(r)) {
		dbuf_reset(tmp);
		dbuf_printf(tmp, "%" PRIu64 " more %s of other kinds not listed", rdr_problems_dropped(r),
			    cli_plural(rdr_problems_dropped(r), "problem", "problems"));
		json_strn(j, (const char *)tmp->data, tmp->len);
	}
	json_arr_end(j);
}

static void print_json(const char *path, const struct rdr *r, const struct info_state *st,
		       bool complete, struct dbuf *out)
{
	const struct rdr_info *info = rdr_info(r);
	const struct rdr_stats *s = rdr_stats(r);
	struct json j;
	struct dbuf tmp;

	dbuf_init(&tmp, 0);
	json_init(&j, out, true);
	json_obj_begin(&j);
	json_header(&j, path, info, &tmp);
	json_events(&j, info);
	json_records(&j, s);
	json_build_ids(&j, info, st);
	json_problems(&j, r, &tmp);
	json_procmap(&j, st, info);
	json_key(&j, "unwind");
	cli_unwind_json(&j, unwinding_stats(readpass_unwinding(st->rp)));
	json_symbols(&j, (struct info_state *)st);
	json_key(&j, "truncated");
	json_bool(&j, s->truncated);
	json_key(&j, "complete");
	json_bool(&j, complete);
	json_obj_end(&j);
	dbuf_putc(out, '\n');
	dbuf_release(&tmp);
}

/* The header's facts: file, host, command line, events, records, samples and their times. */
static void text_header(const char *path, const struct rdr_info *info, const struct rdr_stats *s,
			struct dbuf *out)
{
	dbuf_printf(out, "file:          %s\n", path);
	dbuf_printf(out, "mode:          %s, %s-endian", info->mode == RDR_MODE_FILE ? "file" : "pipe",
		    info->big_endian ? "big" : "little");
	if (info->file_size != UINT64_MAX)
		dbuf_printf(out, ", %" PRIu64 " %s", info->file_size,
			    cli_plural(info->file_size, "byte", "bytes"));
	if (info->has_compressed)
		dbuf_printf(out, ", zstd level %" PRIu32, info->comp_level);
	dbuf_putc(out, '\n');
	dbuf_printf(out, "perf version:  %s\n", info->perf_version ? info->perf_version : "(not recorded)");
	dbuf_printf(out, "host:          %s (%s, %s, %" PRIu32 " %s online)\n",
		    info->hostname ? info->hostname : "?", info->arch ? info->arch : "?",
		    info->osrelease ? info->osrelease : "?", info->nr_cpus_online,
		    cli_plural(info->nr_cpus_online, "cpu", "cpus"));
	if (info->cmdline_len) {
		dbuf_puts(out, "command line:  ");
		cmdline_join(info, out);
		dbuf_putc(out, '\n');
	}
	dbuf_puts(out, "events:\n");
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];

		dbuf_printf(out, "  %-24s %10" PRIu64 " %-7s   type %" PRIu32 " config 0x%" PRIx64
			    " sample_type 0x%" PRIx64 " %s %" PRIu64 "\n",
			    a->name ? a->name : "?", a->samples,
			    cli_plural(a->samples, "sample", "samples"), a->type, a->config, a->sample_type,
			    a->freq ? "freq" : "period", a->sample_period);
	}
	dbuf_puts(out, "records:      ");
	for (uint32_t t = 0; t < RDR_RECORD_TYPES; t++)
		if (s->records[t])
			dbuf_printf(out, " %s %" PRIu64, rdr_record_name(t), s->records[t]);
	if (s->records_unknown)
		dbuf_printf(out, " unknown %" PRIu64, s->records_unknown);
	dbuf_putc(out, '\n');
	dbuf_printf(out, "samples:       %" PRIu64 " read, %" PRIu64 " skipped\n", s->samples,
		    s->samples_malformed + s->samples_unknown_attr);
	dbuf_printf(out, "lost samples:  %" PRIu64 "\n", s->lost_events + s->lost_samples);
	if (s->has_sample_time)
		dbuf_printf(out, "sample times:  %" PRIu64 ".%09" PRIu64 " .. %" PRIu64 ".%09" PRIu64
			    " (%.3f s)\n",
			    s->first_sample_time / 1000000000u, s->first_sample_time % 1000000000u,
			    s->last_sample_time / 1000000000u, s->last_sample_time % 1000000000u,
			    (double)(s->last_sample_time - s->first_sample_time) / 1e9);
}

/* The build-ids: the header's table, then those of MMAP2 records. */
static void text_build_ids(const struct rdr_info *info, const struct info_state *st, struct dbuf *out)
{
	char hex[41];

	dbuf_printf(out, "build-ids:     %zu\n", info->nr_build_ids + st->nr_bids);
	for (size_t i = 0; i < info->nr_build_ids; i++) {
		const struct rdr_build_id *b = &info->build_ids[i];

		buildid_hex(b->id, b->size, hex);
		dbuf_printf(out, "  %-40s %s (%s, %s)\n", hex, b->filename ? b->filename : "",
			    bid_source_name(b->source), cpumode_name(b->misc));
	}
	for (size_t i = 0; i < st->nr_bids; i++) {
		buildid_hex(st->bids[i].id, st->bids[i].size, hex);
		dbuf_printf(out, "  %-40s %s (mmap2)\n", hex, st->bids[i].filename);
	}
}

/* What procmap made of the processes and their frames, and the unwinding. */
static void text_procmap(const struct info_state *st, const struct rdr_info *info, struct dbuf *out)
{
	const struct pm_stats *ps = procmap_stats(st->pm);
	char dw[512], lbr[256];
	unsigned bits;
	uint64_t highest;

	if (arm64_va_bits(st, info, &bits, &highest)) {
		dbuf_printf(out, "address width: arm64, %u-bit user addresses assumed ", bits);
		if (highest)
			dbuf_printf(out, "(the highest user mapping ends at 0x%" PRIx64 ")", highest);
		else
			dbuf_puts(out, "(no user mapping: the usual width)");
		dbuf_puts(out, "; PAC bits above them stripped\n");
	}

	dbuf_printf(out, "processes:     %" PRIu64 " (%" PRIu64 " exec %s), %" PRIu64
		    " %s, %" PRIu64 " %s (%" PRIu64 " cut by later ones)\n",
		    ps->processes, ps->exec_generations,
		    cli_plural(ps->exec_generations, "generation", "generations"), ps->threads,
		    cli_plural(ps->threads, "thread", "threads"), ps->mappings,
		    cli_plural(ps->mappings, "mapping", "mappings"), ps->mappings_replaced);
	dbuf_printf(out, "frames:        %" PRIu64 " resolved to a mapping, %" PRIu64
		    " unmapped, %" PRIu64 " named by JIT maps; build-ids from mmap2 %" PRIu64
		    ", table %" PRIu64 ", disk %" PRIu64 ", path %" PRIu64
		    ", path_unverified %" PRIu64 ", none %" PRIu64 "\n",
		    ps->frames_resolved, ps->frames_unmapped, ps->frames_jit,
		    ps->frames_by_bid[PM_BID_MMAP2],
		    ps->frames_by_bid[PM_BID_TABLE], ps->frames_by_bid[PM_BID_DISK],
		    ps->frames_by_bid[PM_BID_PATH], ps->frames_by_bid[PM_BID_PATH_UNVERIFIED],
		    ps->frames_by_bid[PM_BID_NONE]);
	cli_unwind_words(unwinding_stats(readpass_unwinding(st->rp)), dw, sizeof(dw), lbr, sizeof(lbr));
	if (dw[0])
		dbuf_printf(out, "unwinding:     %s\n", dw);
	if (lbr[0])
		dbuf_printf(out, "lbr:           %s\n", lbr);
}

/* --top: where symbols came from, what has none, the top functions. */
static void text_symbols(const struct info_state *st, struct dbuf *out)
{
	size_t n;
	struct top_ent *t = top_functions((struct info_state *)st, &n);
	const struct symjob_stats *ss = symjob_stats(st->sj);

	dbuf_printf(out, "symbols:       %" PRIu64 " of %" PRIu64 " %s found; frames by source:",
		    ss->objects_found, ss->objects, cli_plural(ss->objects, "object", "objects"));
	for (int s2 = 0; s2 < SYMSRC__COUNT; s2++)
		if (ss->frames_by_src[s2])
			dbuf_printf(out, " %s %" PRIu64, symjob_src_name((enum symsrc)s2),
				    ss->frames_by_src[s2]);
	if (ss->dfd_fetched || ss->dfd_cache_hits || ss->dfd_not_found || ss->dfd_errors ||
	    ss->dfd_not_asked || ss->dfd_untrusted) {
		char counts[224];

		cli_dfd_counts(counts, sizeof(counts), ss, st->offline);
		dbuf_printf(out, "\ndebuginfod:    %s", counts);
	}
	for (size_t i = 0; i < ss->dfd_servers; i++) {
		const struct dfd_server *d = symjob_dfd_server(st->sj, i);
		char down[512];

		if (!d || d->down == DFD_UP)
			continue;
		cli_dfd_down(down, sizeof(down), d->url, d->why ? d->why : "", d->skipped);
		dbuf_printf(out, "\ndebuginfod:    %s", down);
	}
	for (size_t i = 0; i < symjob_missing_count(st->sj) && (st->verbose || i < 10); i++) {
		const struct symjob_missing *m = symjob_missing_at(st->sj, i);

		dbuf_printf(out, "\nno symbols:    %s %s (%" PRIu64 " %s)",
			    m->build_id[0] ? m->build_id : "(no build-id)", m->path, m->frames,
			    cli_plural(m->frames, "frame", "frames"));
	}
	dbuf_printf(out, "\ntop functions (self samples):\n");
	for (size_t i = 0; i < n && i < st->top; i++) {
		dbuf_printf(out, "  %10" PRIu64 "  %s", t[i].samples, t[i].name);
		/* the inline frames seen there, as --json lists them */
		for (unsigned k = 0; k < t[i].nr_inl; k++)
			dbuf_printf(out, "%s%s", k ? ", " : "  (inlined into it: ", t[i].inl[k]);
		dbuf_puts(out, t[i].nr_inl ? ")\n" : "\n");
	}
	free(t);
}

/* --mappings: the executable mappings. */
static void text_mappings(const struct info_state *st, struct dbuf *out)
{
	char hex[41];

	dbuf_puts(out, "executable mappings:\n");
	for (uint32_t i = 0; i < procmap_mapping_count(st->pm); i++) {
		const struct pm_mapping *m = procmap_mapping(st->pm, i);
		const struct pm_proc *p = m->proc == PM_KERNEL_PROC ? NULL
								  : procmap_proc(st->pm, m->proc);
		char pid[16];

		if (!m->exec)
			continue;
		buildid_hex(m->build_id, m->build_id_size, hex);
		snprintf(pid, sizeof(pid), "%" PRIu32, p ? p->pid : 0);
		dbuf_printf(out, "  %7s %#" PRIx64 "-%#" PRIx64 " %s  build-id %s (%s)  %" PRIu64
			    " %s\n", p ? pid : "kernel", m->start, m->limit, m->path,
			    hex[0] ? hex : "none", procmap_bid_source_name(m->bid_source),
			    m->samples, cli_plural(m->samples, "sample", "samples"));
	}
}

/* --jit: samples by JIT symbol. */
static void text_jit(const struct info_state *st, struct dbuf *out)
{
	dbuf_puts(out, "samples by JIT symbol:\n");
	for (size_t i = 0; i < st->jit.n; i++) {
		const struct tally_ent *e = &st->jit.v[i];

		dbuf_printf(out, "  %10" PRIu64 "  %7" PRIu64 " %s (%s)\n", e->count, e->key[0],
			    (const char *)(uintptr_t)e->key[1],
			    (const char *)(uintptr_t)e->key[2]);
	}
}

/* --dso: samples by thread and DSO. */
static void text_dso(const struct info_state *st, struct dbuf *out)
{
	size_t nr_rows;
	struct tally_ent *rows = dso_rows(st, &nr_rows);

	dbuf_puts(out, "samples by thread and DSO:\n");
	for (size_t i = 0; i < nr_rows; i++) {
		const struct tally_ent *e = &rows[i];
		const struct pm_proc *p = procmap_proc(st->pm, (uint32_t)e->key[0]);

		dbuf_printf(out, "  %10" PRIu64 "  %7" PRIu32 ":%-16s %s\n", e->count,
			    (uint32_t)(e->key[0] >> 32), p ? p->comm : "",
			    (const char *)(uintptr_t)e->key[1]);
	}
	free(rows);
}

/* The problems found, each with its offset. */
static void text_problems(const struct rdr *r, struct dbuf *out)
{
	if (!rdr_problem_count(r)) {
		dbuf_puts(out, "problems:      none\n");
	} else {
		dbuf_printf(out, "problems:      %zu %s\n", rdr_problem_count(r),
			    cli_plural(rdr_problem_count(r), "kind", "kinds"));
		for (size_t i = 0; i < rdr_problem_count(r); i++) {
			dbuf_puts(out, "  ");
			format_problem(rdr_problem_at(r, i), out);
			dbuf_putc(out, '\n');
		}
		if (rdr_problems_dropped(r))
			dbuf_printf(out, "  %" PRIu64 " more %s of other kinds not listed\n",
				    rdr_problems_dropped(r),
				    cli_plural(rdr_problems_dropped(r), "problem", "problems"));
	}
}

static void print_text(const char *path, const struct rdr *r, const struct info_state *st,
		       bool complete, struct dbuf *out)
{
	text_header(path, rdr_info(r), rdr_stats(r), out);
	text_build_ids(rdr_info(r), st, out);
	text_procmap(st, rdr_info(r), out);
	if (st->top)
		text_symbols(st, out);
	if (st->want_mappings)
		text_mappings(st, out);
	if (st->want_jit)
		text_jit(st, out);
	if (st->want_dso)
		text_dso(st, out);
	text_problems(r, out);
	if (!complete)
		dbuf_puts(out, "reading stopped before the end of the input\n");
}

static void usage(FILE *f)
{
	fputs("usage: conv info [OPTIONS] [FILE]   (default perf.data; '-' = stdin)\n"
	      "Reads a perf.data recording (file or pipe mode, either byte order,\n"
	      "zstd-compressed or not) and prints what it holds: perf version, host,\n"
	      "command line, events with their sample counts, records by type, lost\n"
	      "samples, build-ids and every problem found in the file, with its offset.\n"
	      "     --json              print the same facts as one JSON object\n"
	      "     --dso               also count samples by thread and DSO\n"
	      "     --mappings          list executable mappings: build-id, its source, samples\n"
	      "     --jit               count samples by JIT symbol (perf-PID.map, jit-PID.dump)\n"
	      "     --top N             symbolize; the N functions with most self samples\n",
	      f);
	fputs(cli_common_help, f);
	fputs(" -h, --help\n"
	      "Exit: 0 read (problems are listed), 1 usage, 2 input unreadable or not perf\n"
	      "data, 3 problems found with --strict. See conv(1).\n",
	      f);
}

enum { O_JSON = 256, O_DSO, O_MAPPINGS, O_JIT, O_TOP };

/* conv info's own options; the symbol sources and -j -q -v --strict are cli/opts.c's */
static const struct cli_opt info_opts[] = {
	{"json", no_argument, O_JSON},
	{"dso", no_argument, O_DSO},
	{"mappings", no_argument, O_MAPPINGS},
	{"jit", no_argument, O_JIT},
	{"top", required_argument, O_TOP},
	{"help", no_argument, 'h'},
	{NULL, 0, 0},
};

/* One run of conv info: its options and the state of its reading pass. */
struct info_run {
	struct cli_common com;
	bool json;
	struct info_state st;
};

static enum cli_take info_take(void *ctx, int id, char *arg, int argc, char **argv)
{
	struct info_run *ir = ctx;

	(void)argc;
	(void)argv;
	switch (id) {
	case O_JSON:
		ir->json = true;
		return CLI_TAKE_OK;
	case O_DSO:
		ir->st.want_dso = true;
		return CLI_TAKE_OK;
	case O_MAPPINGS:
		ir->st.want_mappings = true;
		return CLI_TAKE_OK;
	case O_JIT:
		ir->st.want_jit = true;
		return CLI_TAKE_OK;
	case O_TOP: {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || v > 1000000) {
			fprintf(stderr, "conv info: --top: expected a number, got '%s'\n", arg);
			return CLI_TAKE_USAGE;
		}
		ir->st.top = (unsigned)v;
		return CLI_TAKE_OK;
	}
	case 'h':
		usage(stdout);
		return CLI_TAKE_DONE;
	default:
		return CLI_TAKE_USAGE;
	}
}

/*
 * The reading pass's tables for the recording r: procmap, symjob (its
 * progress on prog), the unwinder, the tallies. CLI_EXIT_OK, or
 * CLI_EXIT_INPUT (said) with what was made freed.
 */
static int info_open(struct info_run *ir, struct rdr *r, struct progress *prog)
{
	struct info_state *st = &ir->st;
	struct symjob_opts sjo = ir->com.sj;
	struct conv_diag diag;
	enum conv_err err;

	memset(&diag, 0, sizeof(diag));
	if (isatty(STDERR_FILENO) && !ir->com.quiet) {
		sjo.progress = progress_line;
		sjo.progress_ctx = prog;
	}
	err = readpass_new(&st->rp, r, &ir->com.pm, &sjo, &diag);
	if (err == CONV_E_NOMEM) {
		fprintf(stderr, "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	if (err) {
		fprintf(stderr, "conv: %s: %s\n", conv_strerror(err), diag.msg);
		return CLI_EXIT_INPUT;
	}
	st->pm = readpass_procmap(st->rp);
	st->sj = readpass_symjob(st->rp);
	tally_init(&st->dso);
	hidx_init(&st->bid_idx);
	tally_init(&st->jit);
	return CLI_EXIT_OK;
}

/* A side-band record, before the process model takes it: an MMAP2's build-id noted. */
static enum conv_err info_record(void *ctx, const struct rdr_event *ev)
{
	struct info_state *st = ctx;

	if (ev->type == PERF_REC_MMAP2 && ev->u.mmap.has_build_id)
		note_mmap2_bid(st, ev);
	return CONV_E_OK;
}

/* A sample, resolved as conv resolves it (its stack unwound or joined), noted for the tallies asked for. */
static enum conv_err info_sample(void *ctx, const struct rdr_event *ev)
{
	struct info_state *st = ctx;
	const struct pm_frame *frames;
	size_t nr;
	uint32_t proc;
	enum conv_err err = readpass_resolve(st->rp, ev, &frames, &nr, &proc);

	if (err)
		return err;
	if (st->want_dso)
		note_dso(st, ev, proc, nr ? &frames[0] : NULL);
	if (st->want_jit && nr)
		note_jit(st, procmap_proc(st->pm, proc)->pid, &frames[0]);
	if (st->top)
		note_frames(st, frames, nr);
	return CONV_E_OK;
}

/*
 * The reading pass (readpass_run) over r, samples noted; CLI_EXIT_INPUT
 * (said) when a record stops the reading, with *complete false.
 */
static int info_read(struct info_state *st, const char *path, bool *complete)
{
	struct readpass_hooks h = { .ctx = st, .record = info_record, .sample = info_sample };
	uint64_t records = 0;
	enum conv_err err = readpass_run(st->rp, &h, &records);

	*complete = !err;
	if (err) {
		fprintf(stderr, "conv: %s: %s\n", path, conv_strerror(err));
		return CLI_EXIT_INPUT;
	}
	return CLI_EXIT_OK;
}

/* After the reading pass: symbols for --top, then the report on stdout; the exit code. */
static int info_report(struct info_run *ir, struct rdr *r, const char *path, bool complete, int rc)
{
	struct info_state *st = &ir->st;
	struct dbuf out;

	readpass_finish(st->rp);
	if (st->top)
		symjob_run(st->sj, NULL);
	if (rdr_stats(r)->stopped)
		complete = false;
	dbuf_init(&out, 0);
	if (ir->json)
		print_json(path, r, st, complete, &out);
	else
		print_text(path, r, st, complete, &out);
	if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		fprintf(stderr, "conv: writing the report failed: %s\n", strerror(errno));
		rc = CLI_EXIT_OUTPUT;
	}
	if (ir->com.strict && rc == CLI_EXIT_OK && (rdr_problem_count(r) || !complete))
		rc = CLI_EXIT_LOSS;
	dbuf_release(&out);
	return rc;
}

static void info_state_release(struct info_state *st)
{
	for (size_t i = 0; i < st->nr_bids; i++)
		free(st->bids[i].filename);
	free(st->bids);
	hidx_release(&st->bid_idx);
	tally_release(&st->dso);
	tally_release(&st->jit);
	free(st->leaf_hits);
	readpass_free(st->rp);
}

/* conv info on the operands argv[first..argc), options parsed. */
static int info_main(struct info_run *ir, int first, int argc, char **argv)
{
	struct progress prog = { 0 };
	const char *path = "perf.data";
	struct rdr *r = NULL;
	bool complete;
	int rc;

	if (argc - first > 1) {
		fprintf(stderr, "conv info: one input file at a time; try 'conv info --help'\n");
		return CLI_EXIT_USAGE;
	}
	if (first < argc)
		path = argv[first];
	if (!strcmp(path, "-") && !cli_stdin_usable("conv info"))
		return CLI_EXIT_USAGE;
	ir->st.verbose = ir->com.verbose;
	ir->st.offline = ir->com.sj.offline;
	prog.offline = ir->com.sj.offline;
	rc = cli_open_input(path, NULL, &r);
	if (rc)
		return rc;
	rc = info_open(ir, r, &prog);
	if (rc) {
		rdr_close(r);
		return rc;
	}
	rc = info_read(&ir->st, path, &complete);
	rc = info_report(ir, r, path, complete, rc);
	info_state_release(&ir->st);
	rdr_close(r);
	return rc;
}

int cmd_info(int argc, char **argv)
{
	struct info_run *ir = calloc(1, sizeof(*ir)); /* big lists: not on the stack */
	struct cli_cmd cmd = { "conv info", info_opts, info_take, ir, false };
	int first, rc;

	if (!ir) {
		fprintf(stderr, "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	first = cli_opts_parse(&cmd, &ir->com, argc, argv, &rc);
	if (first >= 0)
		rc = info_main(ir, first, argc, argv);
	free(ir);
	return rc;
}
