#include "cli/convstats.h"

#include "cli/statsfile.h"
#include "cli/summary.h"
#include "cli/text.h"
#include "core/dbuf.h"
#include "core/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* --stats' top functions: {event, samples, self: [...], total: [...]}. */
static void json_top(struct json *j, const struct view_top *t, const char *event)
{
	json_key(j, "top_functions");
	json_obj_begin(j);
	json_kv_str(j, "event", event);
	json_kv_u64(j, "samples", t->all > 0 ? (uint64_t)t->all : 0);
	for (int by_total = 0; by_total < 2; by_total++) {
		const struct view_top_ent *e = by_total ? t->by_total : t->by_self;
		size_t n = by_total ? t->nr_total : t->nr_self;

		json_key(j, by_total ? "total" : "self");
		json_arr_begin(j);
		for (size_t i = 0; i < n; i++) {
			json_obj_begin(j);
			json_kv_str(j, "name", e[i].name);
			json_kv_u64(j, "self", (uint64_t)e[i].self);
			json_kv_u64(j, "total", (uint64_t)e[i].total);
			json_key(j, "inlined");
			json_arr_begin(j);
			for (uint32_t k = 0; k < e[i].nr_inlined; k++)
				json_str(j, e[i].inlined[k]);
			json_arr_end(j);
			json_obj_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}

/* --stats' counts of the reading pass: samples by event, processes, unwinding, off-CPU time, tracepoints. */
static void json_counts(struct json *j, const struct prof *p, const struct convert_stats *cs)
{
	json_key(j, "samples");
	json_obj_begin(j);
	for (size_t i = 0; p && cs && i < p->nr_events_desc; i++)
		if (!p->events_desc[i].offcpu)
			json_kv_u64(j, strtab_get(&p->strs, p->events_desc[i].full_name),
				    p->events_desc[i].samples);
	json_obj_end(j);
	json_kv_u64(j, "samples_total", cs ? cs->samples : 0);
	json_kv_u64(j, "samples_filtered", cs ? cs->samples_filtered : 0);
	json_kv_u64(j, "processes", cs ? cs->processes : 0);
	json_kv_u64(j, "threads", cs ? cs->threads : 0);
	json_kv_u64(j, "unique_stacks", cs ? cs->unique_stacks : 0);
	json_key(j, "unwind");
	cli_unwind_json(j, cs ? &cs->unwind : NULL);
	json_key(j, "off_cpu");
	json_obj_begin(j);
	json_kv_u64(j, "intervals", cs ? cs->offcpu.intervals : 0);
	json_kv_u64(j, "nanoseconds", cs ? cs->offcpu.ns : 0);
	json_kv_u64(j, "unended", cs ? cs->offcpu.unended : 0);
	json_kv_u64(j, "unordered", cs ? cs->offcpu.unordered : 0);
	json_obj_end(j);
	json_key(j, "tracepoints");
	json_obj_begin(j);
	json_kv_u64(j, "formats", cs ? cs->tracepoints.formats : 0);
	json_kv_u64(j, "decoded", cs ? cs->tracepoints.parsed : 0);
	json_kv_u64(j, "refused", cs ? cs->tracepoints.refused : 0);
	json_kv_u64(j, "samples_undecoded", cs ? cs->tracepoints.samples_undecoded : 0);
	json_obj_end(j);
}

/* --stats' frames: how many were named, by which source, their build-ids by where they came from. */
static void json_frames(struct json *j, const struct convert_stats *cs)
{
	uint64_t sym = cs ? summary_frames_symbolized(cs) : 0;

	json_key(j, "frames");
	json_obj_begin(j);
	json_kv_u64(j, "total", cs ? cs->frames : 0);
	json_kv_u64(j, "symbolized", sym);
	json_kv_u64(j, "unresolved",
		    cs ? cs->sym.frames_by_src[SYMSRC_UNRESOLVED] + cs->frames_nofile : 0);
	json_kv_u64(j, "unmapped", cs ? cs->frames_unmapped : 0);
	json_obj_end(j);
	json_key(j, "sources");
	json_obj_begin(j);
	for (int s = 0; s < SYMSRC__COUNT; s++) {
		if (s == SYMSRC_UNRESOLVED)
			continue;
		json_kv_u64(j, symjob_src_name((enum symsrc)s),
			    !cs ? 0 : s == SYMSRC_JIT ? cs->frames_jit : cs->sym.frames_by_src[s]);
	}
	json_obj_end(j);
	json_key(j, "build_id_sources");
	json_obj_begin(j);
	for (int b = 0; b < PM_BID__COUNT; b++)
		json_kv_u64(j, procmap_bid_source_name((enum pm_bid_source)b),
			    cs ? cs->frames_by_bid[b] : 0);
	json_obj_end(j);
}

/* --stats' debuginfod downloads and the servers given up. */
static void json_debuginfod(struct json *j, const struct convert_stats *cs)
{
	json_key(j, "debuginfod");
	json_obj_begin(j);
	cli_dfd_counts_json(j, cs ? &cs->sym : NULL);
	json_key(j, "servers_given_up");
	json_arr_begin(j);
	for (size_t i = 0; cs && i < cs->nr_dfd_down; i++)
		cli_dfd_down_json(j, cs->dfd_down[i].url, cs->dfd_down[i].why, cs->dfd_down[i].skipped);
	json_arr_end(j);
	json_obj_end(j);
}

/* --stats' objects without symbols, and the samples lost. */
static void json_unresolved(struct json *j, const struct convert_stats *cs)
{
	json_key(j, "unresolved_objects");
	json_arr_begin(j);
	for (size_t i = 0; cs && i < cs->nr_missing; i++) {
		const struct convert_missing *m = &cs->missing[i];

		cli_missing_json(j, m->build_id, m->path, "frames", m->frames, m->reason ? m->reason : "");
	}
	json_arr_end(j);
	json_kv_u64(j, "lost_samples", cs ? cs->lost_samples : 0);
}

/* --stats' problems the reader found. */
static void json_problems(struct json *j, const struct rdr *r)
{
	json_key(j, "problems");
	json_arr_begin(j);
	for (size_t i = 0; r && i < rdr_problem_count(r); i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);
		char name[32];

		json_obj_begin(j);
		json_kv_u64(j, "offset", pr->offset);
		json_kv_str(j, "record_type", cli_record_name(pr->record_type, name));
		json_kv_u64(j, "count", pr->count);
		json_kv_str(j, "message", pr->msg);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* --stats' outputs written, with their sizes. */
static void json_outputs(struct json *j, const struct written *w)
{
	json_key(j, "outputs");
	json_arr_begin(j);
	for (int k = 0; k < OUT__COUNT; k++) {
		if (w->path[k])
			cli_output_json(j, out_descs[k].format, w->path[k], w->bytes[k]);
	}
	json_arr_end(j);
}

void convstats_write(const char *in, int rc, const struct rdr *r,
			const struct prof *p, const struct convert_stats *cs,
			const struct written *w, const struct view_top *top,
			const char *top_event)
{
	struct dbuf out;
	struct json j;

	statsfile_record_begin(&j, &out, in, rc);
	json_counts(&j, p, cs);
	json_frames(&j, cs);
	json_debuginfod(&j, cs);
	json_unresolved(&j, cs);
	json_problems(&j, r);
	json_outputs(&j, w);
	if (top)
		json_top(&j, top, top_event);
	statsfile_record_end(&j, &out);
}

void convstats_write_merged(const char *out, int rc, const struct prof *p, const struct written *w,
			    const struct view_top *top, const char *top_event)
{
	struct dbuf buf;
	struct json j;

	statsfile_record_begin(&j, &buf, out, rc);
	json_kv_u64(&j, "merged_inputs", p->nr_merged);
	json_key(&j, "samples");
	json_obj_begin(&j);
	for (size_t i = 0; i < p->nr_events_desc; i++)
		if (!p->events_desc[i].offcpu)
			json_kv_u64(&j, strtab_get(&p->strs, p->events_desc[i].full_name), p->events_desc[i].samples);
	json_obj_end(&j);
	json_kv_u64(&j, "unique_stacks", p->nr_stacks);
	json_kv_u64(&j, "mappings", p->nr_mappings);
	json_kv_u64(&j, "functions", p->nr_functions);
	json_kv_u64(&j, "lost_samples", p->sys.lost_samples);
	json_outputs(&j, w);
	if (top)
		json_top(&j, top, top_event);
	statsfile_record_end(&j, &buf);
}
