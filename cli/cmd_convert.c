/*
 * conv [OPTIONS] [FILE...]: perf.data -> BASE.pb.gz and BASE.jfr (and, when
 * asked, BASE.folded and BASE.html), each input on its own. Outputs are written to a temp file in the target directory
 * and renamed, so a failed run never leaves a half-written file. On a
 * terminal: a progress line while working and a summary at the end; off a
 * terminal or with -q only errors and warnings. --stats writes the facts as
 * JSON (one object per input, one per line).
 */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/outfile.h"
#include "cli/paths.h"
#include "cli/statsfile.h"
#include "cli/summary.h"
#include "cli/text.h"

#include "core/dbuf.h"
#include "core/io.h"
#include "core/json.h"
#include "core/ropen.h"
#include "jfrwriter/jfr.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pipeline/evname.h"
#include "pprofwriter/pprof.h"
#include "reader/reader.h"
#include "views/folded.h"
#include "views/html.h"
#include "views/top.h"
#include "views/tree.h"

#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST CLI_MAX_LIST

/* The outputs conv writes, in the order the summary and --stats list them. */
enum out_kind { OUT_PPROF, OUT_JFR, OUT_FOLDED, OUT_HTML, OUT__COUNT };

struct out_desc {
	const char *format; /* -F's word, --OPTION PATH's name, --stats' "format" */
	const char *suffix; /* added to BASE */
	const char *what;   /* for messages */
	bool binary;        /* never to a terminal */
};

static const struct out_desc outs[OUT__COUNT] = {
	{ "pprof", ".pb.gz", "the pprof output", true },
	{ "jfr", ".jfr", "the JFR output", true },
	{ "folded", ".folded", "the folded stacks", false },
	{ "html", ".html", "the flame graph", false },
};

#define F_BIT(k) (1u << (k))

struct cvopts {
	struct convert_opts co;
	struct cli_common com;    /* symbol sources, -j, -q, -v, --strict */
	const char *out;          /* -o BASE or DIR/ */
	const char *paths[OUT__COUNT]; /* named by --pprof, --jfr, --folded, --html */
	unsigned formats;         /* F_BIT(OUT_*); 0 = from the paths given, else pprof and jfr */
	const char *folded_value; /* --folded-value EVENT: its weighted value; NULL: first event's count */
	unsigned top;             /* --top N: the summary's and --stats' top functions */
	const char *stats_path;   /* NULL: none; "-": stdout */
	struct rdr_opts ro;
	bool tty;
	uint64_t chunk_size;
	const char *comms[MAX_LIST], *events[MAX_LIST];
	const char *tp_fields[MAX_LIST];
	size_t nr_tp_fields;
	uint32_t pids[MAX_LIST], tids[MAX_LIST];
	size_t nr_comms, nr_events, nr_pids, nr_tids;
	char filters[512];        /* the filter options as given, for the warning when none is kept */
};

/* Whether any output is named (--pprof, --jfr, --folded, --html). */
static bool any_path(const struct cvopts *c)
{
	for (int k = 0; k < OUT__COUNT; k++)
		if (c->paths[k])
			return true;
	return false;
}

/* What one input's conversion wrote, by kind: listed in outs[] order. */
struct written {
	const char *path[OUT__COUNT]; /* NULL: not written */
	uint64_t bytes[OUT__COUNT];
};

/* ---- outputs ---- */

/*
 * gzip level of the pprof output: 1, as Go's runtime/pprof writes its
 * profiles. Measured on bench/'s 81 MB recording: level 1 deflates the 22 MB
 * protobuf in a third of level 6's time for 13 % more bytes.
 */
#define PPROF_GZ_LEVEL 1

/* The pprof output, written on its own thread (or inline). */
struct pprof_job {
	const struct prof *p;
	const char *path;
	char tmp[4096];
	int fd;
	struct io_flush *flush; /* NULL once out_sync has run */
	bool synced;
	uint64_t bytes;
	int io_errno;
	enum conv_err err;
};

static void *pprof_job_run(void *arg)
{
	struct pprof_job *j = arg;

	j->synced = false;
	j->err = pprof_write_gz(j->p, PPROF_GZ_LEVEL, j->fd, j->flush, &j->bytes, &j->io_errno);
	/*
	 * Made durable here, beside the JFR writer, instead of after it; the
	 * rename stays with the caller, which decides on both outputs. A sync
	 * that fails is a write error (ENOSPC included: see the caller's retry).
	 */
	if (!j->err && j->tmp[0]) {
		if (cli_out_sync(j->fd, j->flush)) {
			j->err = CONV_E_IO;
			j->io_errno = errno;
		} else {
			j->synced = true;
		}
		j->flush = NULL;
	}
	return NULL;
}

struct jfr_job {
	const struct prof *p;
	uint64_t chunk_size;
	struct jfr_stats *js;
};

static enum conv_err jfr_job_write(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d)
{
	const struct jfr_job *jj = ctx;
	struct jfr_opts jo;

	memset(&jo, 0, sizeof(jo));
	jo.chunk_size = jj->chunk_size;
	jo.flush = fl;
	return jfr_write(jj->p, &jo, fd, jj->js, d);
}

/* One output written to path by fn (cli_out_write; what names "-"); 0, or -1 said. */
static int write_out(const char *path, const char *what,
		     enum conv_err (*fn)(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d), void *ctx)
{
	struct conv_diag diag;
	int rc;

	memset(&diag, 0, sizeof(diag));
	rc = cli_out_write("conv", path, what, fn, ctx, &diag);
	if (rc > 0)
		fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(path, what), diag.msg);
	return rc ? -1 : 0;
}

/* Writes the JFR recording to path; 0 or -1 (said). */
static int write_jfr(const char *path, const struct prof *p, uint64_t chunk_size,
		     struct jfr_stats *js)
{
	struct jfr_job jj = { p, chunk_size, js };

	return write_out(path, outs[OUT_JFR].what, jfr_job_write, &jj);
}

/* ---- summary and statistics ---- */

/* The name of a record type for messages: "" for none, "type N" when perf never named it. */
static const char *record_name(uint32_t type)
{
	static char buf[32];
	const char *n;

	if (!type)
		return "";
	n = rdr_record_name(type);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "type %u", type);
	return buf;
}

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

static void write_stats(const char *in, int rc, const struct rdr *r,
			const struct prof *p, const struct convert_stats *cs,
			const struct written *w, const struct view_top *top,
			const char *top_event)
{
	struct dbuf out;
	struct json j;
	uint64_t sym = cs ? summary_frames_symbolized(cs) : 0;

	dbuf_init(&out, 0);
	json_init(&j, &out, false);
	json_obj_begin(&j);
	json_kv_str(&j, "input", in);
	json_kv_u64(&j, "exit_code", (uint64_t)rc);
	json_key(&j, "samples");
	json_obj_begin(&j);
	for (size_t i = 0; p && cs && i < p->nr_events_desc; i++)
		if (!p->events_desc[i].offcpu)
			json_kv_u64(&j, strtab_get(&p->strs, p->events_desc[i].full_name),
				    p->events_desc[i].samples);
	json_obj_end(&j);
	json_kv_u64(&j, "samples_total", cs ? cs->samples : 0);
	json_kv_u64(&j, "samples_filtered", cs ? cs->samples_filtered : 0);
	json_kv_u64(&j, "processes", cs ? cs->processes : 0);
	json_kv_u64(&j, "threads", cs ? cs->threads : 0);
	json_kv_u64(&j, "unique_stacks", cs ? cs->unique_stacks : 0);
	json_key(&j, "unwind");
	cli_unwind_json(&j, cs ? &cs->unwind : NULL);
	json_key(&j, "off_cpu");
	json_obj_begin(&j);
	json_kv_u64(&j, "intervals", cs ? cs->offcpu.intervals : 0);
	json_kv_u64(&j, "nanoseconds", cs ? cs->offcpu.ns : 0);
	json_kv_u64(&j, "unended", cs ? cs->offcpu.unended : 0);
	json_kv_u64(&j, "unordered", cs ? cs->offcpu.unordered : 0);
	json_obj_end(&j);
	json_key(&j, "tracepoints");
	json_obj_begin(&j);
	json_kv_u64(&j, "formats", cs ? cs->tracepoints.formats : 0);
	json_kv_u64(&j, "decoded", cs ? cs->tracepoints.parsed : 0);
	json_kv_u64(&j, "refused", cs ? cs->tracepoints.refused : 0);
	json_kv_u64(&j, "samples_undecoded", cs ? cs->tracepoints.samples_undecoded : 0);
	json_obj_end(&j);
	json_key(&j, "frames");
	json_obj_begin(&j);
	json_kv_u64(&j, "total", cs ? cs->frames : 0);
	json_kv_u64(&j, "symbolized", sym);
	json_kv_u64(&j, "unresolved",
		    cs ? cs->sym.frames_by_src[SYMSRC_UNRESOLVED] + cs->frames_nofile : 0);
	json_kv_u64(&j, "unmapped", cs ? cs->frames_unmapped : 0);
	json_obj_end(&j);
	json_key(&j, "sources");
	json_obj_begin(&j);
	for (int s = 0; s < SYMSRC__COUNT; s++) {
		if (s == SYMSRC_UNRESOLVED)
			continue;
		json_kv_u64(&j, symjob_src_name((enum symsrc)s),
			    !cs ? 0 : s == SYMSRC_JIT ? cs->frames_jit : cs->sym.frames_by_src[s]);
	}
	json_obj_end(&j);
	json_key(&j, "build_id_sources");
	json_obj_begin(&j);
	for (int b = 0; b < PM_BID__COUNT; b++)
		json_kv_u64(&j, procmap_bid_source_name((enum pm_bid_source)b),
			    cs ? cs->frames_by_bid[b] : 0);
	json_obj_end(&j);
	json_key(&j, "debuginfod");
	json_obj_begin(&j);
	json_kv_u64(&j, "fetched", cs ? cs->sym.dfd_fetched : 0);
	json_kv_u64(&j, "cache_hits", cs ? cs->sym.dfd_cache_hits : 0);
	json_kv_u64(&j, "not_found", cs ? cs->sym.dfd_not_found : 0);
	json_kv_u64(&j, "errors", cs ? cs->sym.dfd_errors : 0);
	json_kv_u64(&j, "bytes", cs ? cs->sym.dfd_bytes : 0);
	json_kv_u64(&j, "not_asked", cs ? cs->sym.dfd_not_asked : 0);
	json_kv_u64(&j, "skipped", cs ? cs->sym.dfd_skipped : 0);
	json_kv_u64(&j, "untrusted", cs ? cs->sym.dfd_untrusted : 0);
	json_key(&j, "servers_given_up");
	json_arr_begin(&j);
	for (size_t i = 0; cs && i < cs->nr_dfd_down; i++) {
		json_obj_begin(&j);
		json_kv_str(&j, "url", cs->dfd_down[i].url);
		json_kv_str(&j, "why", cs->dfd_down[i].why);
		json_kv_u64(&j, "skipped", cs->dfd_down[i].skipped);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_key(&j, "unresolved_objects");
	json_arr_begin(&j);
	for (size_t i = 0; cs && i < cs->nr_missing; i++) {
		json_obj_begin(&j);
		json_kv_str(&j, "build_id", cs->missing[i].build_id);
		json_kv_str(&j, "path", cs->missing[i].path);
		json_kv_u64(&j, "frames", cs->missing[i].frames);
		json_kv_str(&j, "reason", cs->missing[i].reason ? cs->missing[i].reason : "");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kv_u64(&j, "lost_samples", cs ? cs->lost_samples : 0);
	json_key(&j, "problems");
	json_arr_begin(&j);
	for (size_t i = 0; r && i < rdr_problem_count(r); i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);

		json_obj_begin(&j);
		json_kv_u64(&j, "offset", pr->offset);
		json_kv_str(&j, "record_type", record_name(pr->record_type));
		json_kv_u64(&j, "count", pr->count);
		json_kv_str(&j, "message", pr->msg);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "outputs");
	json_arr_begin(&j);
	for (int k = 0; k < OUT__COUNT; k++) {
		if (!w->path[k])
			continue;
		json_obj_begin(&j);
		json_kv_str(&j, "format", outs[k].format);
		json_kv_str(&j, "path", w->path[k]);
		json_kv_u64(&j, "bytes", w->bytes[k]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	if (top)
		json_top(&j, top, top_event);
	json_obj_end(&j);
	dbuf_putc(&out, '\n');
	statsfile_put(out.err ? NULL : out.data, out.len);
	dbuf_release(&out);
}

/* ---- one input ---- */

/* Each output's path made from the input's name or -o: bufs[k] for outs[k]. */
static void output_paths(const struct cvopts *c, const char *in, char bufs[OUT__COUNT][4096])
{
	char base[4096];
	/* BASE from the input's name: drop its .data */
	bool from_input = cli_out_base(c->out, !strcmp(in, "-") ? "stdin" : in, base, sizeof(base));
	size_t len = strlen(base);

	if (from_input && len > 5 && !strcmp(base + len - 5, ".data"))
		base[len - 5] = 0;
	/* -o foo.pb.gz means the base foo, not foo.pb.gz.pb.gz and foo.pb.gz.jfr */
	for (int k = 0; !from_input && k < OUT__COUNT; k++) {
		size_t sl = strlen(outs[k].suffix);

		if (len > sl && !strcmp(base + len - sl, outs[k].suffix) && base[len - sl - 1] != '/') {
			base[len - sl] = 0;
			break;
		}
	}
	for (int k = 0; k < OUT__COUNT; k++)
		snprintf(bufs[k], 4096, "%.4080s%s", base, outs[k].suffix);
}

/*
 * The outputs of one input (in bufs): path[k] NULL for a format not
 * written; -o - is standard output (for the one output it names).
 */
static void outputs_of(const struct cvopts *c, const char *in, char bufs[OUT__COUNT][4096],
		       const char *path[OUT__COUNT])
{
	bool std = c->out && !strcmp(c->out, "-");

	output_paths(c, in, bufs);
	for (int k = 0; k < OUT__COUNT; k++)
		path[k] = !(c->formats & F_BIT(k)) ? NULL : c->paths[k] ? c->paths[k] : std ? "-" : bufs[k];
}

/*
 * -e values that name no event of the recording: a usage error (said, with
 * the events it has), before anything is read when the header lists them
 * (in pipe mode they come with the data: then after the reading pass,
 * read). True when refused.
 */
static bool refuse_events(const struct cvopts *c, const char *in, const struct rdr_info *info, bool read)
{
	for (size_t i = 0; i < c->nr_events && (read || info->nr_attrs); i++) {
		bool found = false;
		char names[256];
		size_t len = 0;

		/* the filter's own matcher: the refusal and the filter cannot disagree */
		for (size_t a = 0; a < info->nr_attrs && !found; a++)
			found = evname_matches(info->attrs[a].name, c->events[i]);
		if (found)
			continue;
		names[0] = 0;
		for (size_t a = 0; a < info->nr_attrs && len < sizeof(names); a++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", a ? ", " : "",
						info->attrs[a].name ? info->attrs[a].name : "?");
		fprintf(stderr, "conv: %s: -e %s: no event of this recording is named so (it has %s); "
				"nothing written\n",
			in, c->events[i], info->nr_attrs ? names : "none");
		return true;
	}
	return false;
}

/* Options that cannot do anything for this recording: said, not silently ignored. */
static void warn_filters(const struct cvopts *c, const char *in, const struct rdr_info *info)
{
	if (c->co.label_cpu) {
		bool cpu = false;

		for (size_t a = 0; a < info->nr_attrs; a++)
			cpu = cpu || (info->attrs[a].sample_type & (1u << 7)) != 0; /* PERF_SAMPLE_CPU */
		if (!cpu && info->nr_attrs)
			fprintf(stderr, "conv: warning: %s: --label cpu: the samples carry no CPU number "
					"(perf record --sample-cpu or -a records it)\n",
				in);
	}
}

/* The samples' time span as --time takes it (absolute: perf timestamps), for messages; "" without times. */
static void sample_span(const struct convert_filter *f, const struct rdr_stats *rs, char *span, size_t n)
{
	uint64_t a = rs->first_sample_time, z = rs->last_sample_time;

	span[0] = 0;
	if (!rs->has_sample_time)
		return;
	if (f->time_absolute)
		snprintf(span, n, "@%" PRIu64 ".%06" PRIu64 ",@%" PRIu64 ".%06" PRIu64, a / 1000000000u,
			 a % 1000000000u / 1000, z / 1000000000u, z % 1000000000u / 1000);
	else
		snprintf(span, n, "0 to %.3f s", (double)(z - a) / 1e9);
}

/* Whether the --time window misses every sample's time (the span, rdr_stats). */
static bool window_outside(const struct convert_filter *f, const struct rdr_stats *rs)
{
	uint64_t a = rs->first_sample_time, z = rs->last_sample_time;

	if (!(f->has_start || f->has_end) || !rs->has_sample_time)
		return false;
	if (f->time_absolute)
		return (f->has_start && f->start_ns > z) || (f->has_end && f->end_ns < a);
	return f->has_start && f->start_ns > z - a;
}

/* The thread names the samples had, shortened: "a, b, c and others". */
static void seen_comms(const struct convert_seen *sn, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sn->nr_comm_names && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", sn->comm_names[i]);
	if (sn->more_comms && len < n)
		snprintf(buf + len, n - len, " and others");
}

/*
 * After the reading pass, before any output is opened: a filter that
 * names what the recording lacks (a pid, tid or thread name no sample had,
 * a time window outside the samples), or filters that together keep no
 * sample, are a usage error, said with what the recording has: a typo must
 * not put empty profiles over good ones. A recording without samples is
 * not judged (nothing to filter: its outputs are empty, and said so).
 * True when refused.
 */
static bool refuse_filters(const struct cvopts *c, const char *in, const struct rdr *r,
			   const struct convert_stats *cs)
{
	const struct convert_filter *f = &c->co.filter;
	const struct convert_seen *sn = &cs->seen;
	char span[128], names[256];

	if (!cs->samples && !cs->samples_filtered)
		return false;
	for (size_t i = 0; sn->pids && i < f->nr_pids; i++) {
		if (!sn->pids[i]) {
			fprintf(stderr, "conv: %s: --pid %" PRIu32 ": no sample of this recording has it "
					"(its pids: %" PRIu32 " to %" PRIu32 "); nothing written\n",
				in, f->pids[i], sn->pid_min, sn->pid_max);
			return true;
		}
	}
	for (size_t i = 0; sn->tids && i < f->nr_tids; i++) {
		if (!sn->tids[i]) {
			fprintf(stderr, "conv: %s: --tid %" PRIu32 ": no sample of this recording has it "
					"(its tids: %" PRIu32 " to %" PRIu32 "); nothing written\n",
				in, f->tids[i], sn->tid_min, sn->tid_max);
			return true;
		}
	}
	for (size_t i = 0; sn->comms && i < f->nr_comms; i++) {
		if (!sn->comms[i]) {
			seen_comms(sn, names, sizeof(names));
			fprintf(stderr, "conv: %s: --comm %s: no sampled thread of this recording is named so "
					"(its threads: %s); nothing written\n",
				in, f->comms[i], names);
			return true;
		}
	}
	sample_span(f, rdr_stats(r), span, sizeof(span));
	if (window_outside(f, rdr_stats(r))) {
		fprintf(stderr, "conv: %s: --time: the window holds no sample: they span %s; nothing "
				"written\n",
			in, span);
		return true;
	}
	if (!cs->samples) {
		fprintf(stderr, "conv: %s: the filters (%s) together keep none of the %" PRIu64 " %s%s%s; "
				"nothing written\n",
			in, c->filters, cs->samples_filtered, cli_plural(cs->samples_filtered, "sample", "samples"),
			span[0] ? ", which span " : "", span);
		return true;
	}
	return false;
}

/*
 * What the reading pass found that the outputs cannot show: no samples at
 * all, stacks left unwound. Warnings, so said also with -q.
 */
static void warn_result(const char *in, const struct convert_stats *cs)
{
	if (!cs->samples && !cs->samples_filtered)
		/* as perf report: not an error, but nothing to look at */
		fprintf(stderr, "conv: warning: %s: the recording holds no samples%s: the outputs are empty\n",
			in, cs->lost_samples ? " (some were lost)" : "");
	/* the same figures as the summary's "cut (stack copy ended, N of them with the whole copy used)" */
	if (cs->unwind.copy_full)
		cli_warn("%s: %" PRIu64 " of the %" PRIu64 " unwound %s cut where the stack copy ended had used "
			 "the whole copy: record with --call-graph dwarf,65528 for deeper stacks",
			 in, cs->unwind.copy_full, cs->unwind.stopped[UW_STOP_COPY],
			 cli_plural(cs->unwind.stopped[UW_STOP_COPY], "sample", "samples"));
	if (cs->tracepoints.refused || (cs->tracepoints.first_refusal[0] && !cs->tracepoints.formats))
		cli_warn("%s: %" PRIu64 " of %" PRIu64 " tracepoint formats not decoded (their samples carry "
			 "no field labels): %s",
			 in, cs->tracepoints.refused, cs->tracepoints.formats,
			 cs->tracepoints.first_refusal[0] ? cs->tracepoints.first_refusal : "refused");
}

/* ---- the views: folded stacks, flame graph ---- */

struct view_job {
	int kind; /* OUT_FOLDED or OUT_HTML */
	const struct view_tree *t;
	size_t col;
	const struct view_html_opts *ho;
	uint64_t *bytes;
};

static enum conv_err view_job_write(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d)
{
	const struct view_job *vj = ctx;

	return vj->kind == OUT_FOLDED ? view_write_folded(vj->t, vj->col, fd, fl, vj->bytes, d)
				      : view_write_html(vj->t, vj->ho, fd, fl, vj->bytes, d);
}

/* One view written to path (kind: OUT_FOLDED or OUT_HTML); 0 or -1 (said). */
static int write_view(const char *path, int kind, const struct view_tree *t, size_t col,
		      const struct view_html_opts *ho, uint64_t *bytes)
{
	struct view_job vj = { kind, t, col, ho, bytes };

	return write_out(path, outs[kind].what, view_job_write, &vj);
}

/* The tree's columns: the flame graph's views first, then the folded value's type if not one of them. */
struct view_cols {
	size_t types[VIEW_MAX_COLS];
	const char *names[VIEW_MAX_COLS], *units[VIEW_MAX_COLS];
	size_t nr, folded;
	size_t nr_html; /* the first columns: the page's views (the folded value's may follow) */
};

static void cols_add(struct view_cols *vc, size_t type, const char *name, const char *unit)
{
	if (vc->nr < VIEW_MAX_COLS) {
		vc->types[vc->nr] = type;
		vc->names[vc->nr] = name;
		vc->units[vc->nr++] = unit;
	}
}

/*
 * The folded value's type: --folded-value's event's weighted value (matched
 * as -e matches), else the first event's count; false (said) when no event
 * has that name.
 */
static bool folded_type(const struct cvopts *c, const char *in, const struct prof *p, size_t *type)
{
	uint32_t first = view_main_event(p);

	if (!c->folded_value) {
		/* (off-CPU time alone: its nanoseconds, not its count of intervals) */
		*type = first == PROF_NONE ? 0 : 2 * (size_t)first + p->events_desc[first].offcpu;
		return true;
	}
	for (size_t i = 0; i < p->nr_events_desc; i++) {
		/* an event by name as -e takes it, or by its value's name in the pprof ("off_cpu") */
		if (evname_matches(strtab_get(&p->strs, p->events_desc[i].full_name),
					  c->folded_value) ||
		    (2 * i + 1 < p->nr_types &&
		     !strcmp(strtab_get(&p->strs, p->types[2 * i + 1].type), c->folded_value))) {
			*type = 2 * i + 1;
			return true;
		}
	}
	fprintf(stderr, "conv: %s: --folded-value: no event named '%s' in this recording\n", in,
		c->folded_value);
	return false;
}

/*
 * The flame graph's views: each event with samples (its count; the main
 * event, view_main_event, first), off-CPU time (its nanoseconds), as many
 * as there are columns; the others are said. ftype (NULL: no folded stacks): the folded value's type, which
 * needs a column of its own unless it is one of the views.
 */
static void html_cols(const char *in, const struct prof *p, const size_t *ftype, struct view_cols *vc)
{
	size_t left_out = 0;
	uint32_t main = view_main_event(p);
	bool folded_shown = false;

	/* the main event (CPU time when recorded) first: the view the page opens with */
	for (size_t k = 0; k < p->nr_events_desc; k++) {
		size_t i = main == PROF_NONE ? k : !k ? main : k <= main ? k - 1 : k;
		const struct prof_event_desc *e = &p->events_desc[i];
		size_t type = e->offcpu ? 2 * i + 1 : 2 * i;

		if (!e->samples)
			continue;
		if (vc->nr == VIEW_MAX_COLS) {
			left_out++;
			continue;
		}
		folded_shown |= ftype && *ftype == type;
		cols_add(vc, type, strtab_get(&p->strs, e->full_name), e->offcpu ? "nanoseconds" : "samples");
	}
	if (ftype && !folded_shown && vc->nr == VIEW_MAX_COLS) {
		vc->nr--; /* its column goes to the folded value */
		left_out++;
	}
	if (left_out)
		fprintf(stderr, "conv: %s: the flame graph shows %zu events; %zu more with samples are left out\n",
			in, vc->nr, left_out);
	if (!vc->nr && p->nr_types)
		/* nothing sampled: a page saying so rather than none */
		cols_add(vc, 0, p->nr_events_desc ? strtab_get(&p->strs, p->events_desc[0].full_name) : "",
			 "samples");
}

/* Writes one view and lists it in w; false when it could not be written (said). */
static bool write_listed(const char *path, int kind, const struct view_tree *t, size_t col,
			 const struct view_html_opts *ho, struct written *w)
{
	if (write_view(path, kind, t, col, ho, &w->bytes[kind]))
		return false;
	w->path[kind] = path;
	return true;
}

/*
 * Writes the folded stacks and the flame graph asked for (path[k] NULL
 * when not), listing them in w; returns CLI_EXIT_OK or CLI_EXIT_OUTPUT.
 */
static int write_views(const struct cvopts *c, const char *in, const struct prof *p,
		       const struct convert_stats *cs, const char *const path[OUT__COUNT],
		       struct written *w)
{
	struct view_cols vc;
	struct view_tree t;
	struct view_html_opts ho;
	char sub[512];
	size_t ftype = 0;
	bool folded = path[OUT_FOLDED] != NULL;
	int rc = CLI_EXIT_OK;
	enum conv_err err;

	if (folded && !folded_type(c, in, p, &ftype)) {
		folded = false;
		rc = CLI_EXIT_OUTPUT;
	}
	if (!folded && !path[OUT_HTML])
		return rc;
	if (!p->nr_types) {
		fprintf(stderr, "conv: %s: no event to show: the recording describes none\n", in);
		return CLI_EXIT_OUTPUT;
	}
	memset(&vc, 0, sizeof(vc));
	if (path[OUT_HTML])
		html_cols(in, p, folded ? &ftype : NULL, &vc);
	vc.nr_html = vc.nr;
	vc.folded = vc.nr;
	for (size_t k = 0; folded && k < vc.nr; k++)
		if (vc.types[k] == ftype)
			vc.folded = k;
	if (folded && vc.folded == vc.nr)
		cols_add(&vc, ftype, "", "");
	err = view_tree_build(&t, p, vc.types, vc.nr);
	if (err) {
		fprintf(stderr, "conv: %s: cannot build the call tree: %s\n", in, conv_strerror(err));
		return CLI_EXIT_OUTPUT;
	}
	if (folded && !write_listed(path[OUT_FOLDED], OUT_FOLDED, &t, vc.folded, NULL, w))
		rc = CLI_EXIT_OUTPUT;
	if (path[OUT_HTML]) {
		snprintf(sub, sizeof(sub), "%" PRIu64 " samples in %" PRIu64 " %s, %" PRIu64 " %s; conv %s",
			 cs->samples, cs->processes, cli_plural(cs->processes, "process", "processes"),
			 cs->threads, cli_plural(cs->threads, "thread", "threads"), CONV_VERSION_STRING);
		memset(&ho, 0, sizeof(ho));
		ho.title = !strcmp(in, "-") ? "standard input" : in;
		ho.subtitle = sub;
		ho.nr_views = vc.nr_html;
		ho.col_names = vc.names;
		ho.col_units = vc.units;
		if (!write_listed(path[OUT_HTML], OUT_HTML, &t, 0, &ho, w))
			rc = CLI_EXIT_OUTPUT;
	}
	view_tree_release(&t);
	return rc;
}

/*
 * Before reading: each output can be made (cli_out_check), so that a
 * read-only or missing directory costs no conversion; each that cannot is
 * said. CLI_EXIT_OUTPUT or CLI_EXIT_OK.
 */
static int check_writable(const char *const path[OUT__COUNT])
{
	int rc = CLI_EXIT_OK;

	for (int k = 0; k < OUT__COUNT; k++) {
		if (path[k] && cli_out_check(path[k])) {
			fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(path[k], outs[k].what),
				strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		}
	}
	return rc;
}


/* The summary on stderr: the top functions of CPU time (top) and of off-CPU time apart. */
static void show_summary(const struct cvopts *c, const char *in, const struct rdr *r, const struct prof *p,
			 const struct convert_stats *cs, const struct written *w, uint64_t write_ns,
			 const struct view_top *top, const char *top_event)
{
	struct summary_wrote wrote[OUT__COUNT];
	struct view_top off;
	bool off_ready = c->top && p->offcpu_event != PROF_NONE &&
			 view_top_build_waits(&off, p, 2 * (size_t)p->offcpu_event + 1, c->top) == CONV_E_OK;
	struct summary s = {
		.input = in, .r = r, .p = p, .cs = cs, .verbose = c->com.verbose,
		.offline = c->com.sj.offline, .write_ns = write_ns, .top_rows = c->top, .top = top,
		.top_event = top_event, .off_top = off_ready ? &off : NULL, .wrote = wrote,
	};

	for (int k = 0; k < OUT__COUNT; k++) {
		if (!w->path[k])
			continue;
		wrote[s.nr_wrote].format = outs[k].format;
		wrote[s.nr_wrote].path = w->path[k];
		wrote[s.nr_wrote++].bytes = w->bytes[k];
	}
	summary_print(&s);
	if (off_ready)
		view_top_release(&off);
}
static int convert_one(struct cvopts *c, const char *in)
{
	char bufs[OUT__COUNT][4096];
	const char *path[OUT__COUNT];
	const char *pprof_path, *jfr_path;
	struct pprof_job pj;
	struct timespec t_write;
	uint64_t write_ns = 0;
	pthread_t pj_thread;
	bool pj_started = false;
	struct written w;
	struct view_top top;
	const char *top_event = "";
	bool top_ready = false;
	struct convert_stats cs;
	struct conv_diag diag;
	struct rdr *r = NULL;
	struct prof p;
	struct summary_progress pg;
	enum conv_err err;
	int rc = CLI_EXIT_OK;
	bool prof_ready = false;

	memset(&pj, 0, sizeof(pj));
	pj.fd = -1;

	memset(&cs, 0, sizeof(cs));
	memset(&w, 0, sizeof(w));
	memset(&diag, 0, sizeof(diag));
	memset(&pg, 0, sizeof(pg));
	pg.input = in;
	pg.offline = c->com.sj.offline;
	outputs_of(c, in, bufs, path);
	pprof_path = path[OUT_PPROF];
	jfr_path = path[OUT_JFR];
	c->co.keep_events = jfr_path != NULL;
	if (c->tty && !c->com.quiet) {
		c->co.progress = summary_progress_convert;
		c->co.progress_ctx = &pg;
		c->co.sj.progress = summary_progress_download;
		c->co.sj.progress_ctx = &pg;
	}
	/* an input that is not there is the error to say (exit 2), not its outputs' directory */
	if (!strcmp(in, "-") || access(in, R_OK) == 0)
		rc = check_writable(path);
	if (rc)
		goto out;
	rc = cli_open_input(in, &c->ro, &r);
	if (rc)
		goto out;
	if (refuse_events(c, in, rdr_info(r), false)) {
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	warn_filters(c, in, rdr_info(r));
	prof_init(&p);
	prof_ready = true;
	err = convert_run(r, &c->co, &p, &cs, &diag);
	/*
	 * No malloc_trim here: with one malloc arena (mem_tune_malloc) the
	 * writers reuse what the reading pass and the symbolizer freed, which
	 * a trim would hand back and have them fault in again, 4 KiB at a time
	 * in the huge pages it splits (90 MB benchmark file: 4 900 page faults
	 * -> 2 100, same peak RSS, 83-89 MB either way).
	 */
	summary_progress_clear(&pg);
	if (err) {
		fprintf(stderr, "conv: %s: %s%s%s\n", in, conv_strerror(err), diag.msg[0] ? ": " : "",
			diag.msg);
		rc = CLI_EXIT_INPUT;
		goto out;
	}
	for (size_t i = 0; i < rdr_problem_count(r); i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);
		char where[64] = "";
		char times[40] = "";

		if (pr->offset != UINT64_MAX)
			snprintf(where, sizeof(where), "offset %" PRIu64 "%s", pr->offset,
				 pr->record_type ? ", " : ": ");
		/* a count says something only when it is not one */
		if (pr->count > 1)
			snprintf(times, sizeof(times), " (%" PRIu64 " times)", pr->count);
		cli_warn("%s: %s%s%s%s%s%s", in, where,
			pr->record_type ? "record " : "",
			record_name(pr->record_type),
			pr->record_type ? ": " : "", pr->msg, times);
	}
	{
		size_t ftype;

		/* what the recording lacks, said before any output is opened */
		if (refuse_events(c, in, rdr_info(r), true) || refuse_filters(c, in, r, &cs) ||
		    (path[OUT_FOLDED] && !folded_type(c, in, &p, &ftype))) {
			rc = CLI_EXIT_USAGE;
			goto out;
		}
	}
	warn_result(in, &cs);
	/*
	 * The two writers only read the finished model: with more than one job
	 * the pprof output is encoded and gzipped on a second thread while this
	 * one writes the JFR recording.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t_write);
	if (pprof_path) {
		pj.p = &p;
		pj.path = pprof_path;
		pj.fd = cli_out_open(pprof_path, pj.tmp, sizeof(pj.tmp));
		if (pj.fd < 0) {
			fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(pprof_path, outs[OUT_PPROF].what),
				strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		} else {
			pj.flush = cli_out_flusher(pj.fd, pj.tmp);
			if (jfr_path && c->co.sj.jobs != 1 &&
			    pthread_create(&pj_thread, NULL, pprof_job_run, &pj) == 0)
				pj_started = true;
			else
				pprof_job_run(&pj);
		}
	}
	if (jfr_path) {
		struct jfr_stats js;

		if (write_jfr(jfr_path, &p, c->chunk_size, &js)) {
			rc = CLI_EXIT_OUTPUT;
		} else {
			w.path[OUT_JFR] = jfr_path;
			w.bytes[OUT_JFR] = js.bytes;
		}
	}
	if (pj_started)
		pthread_join(pj_thread, NULL);
	/*
	 * Written side by side, the two outputs compete for the space left on a
	 * nearly full disk, and which one gets it is down to timing. Make the
	 * outcome the one of writing them one after the other, small pprof
	 * first: a pprof that ran out of space beside the JFR is written again
	 * alone, now that the JFR's temp file is renamed or removed.
	 */
	if (pj_started && pj.err == CONV_E_IO &&
	    (pj.io_errno == ENOSPC || pj.io_errno == EDQUOT)) {
		cli_out_abandon(pj.fd, pj.tmp, pprof_path, pj.flush);
		pj.flush = NULL;
		pj.bytes = 0;
		pj.io_errno = 0;
		pj.fd = cli_out_open(pprof_path, pj.tmp, sizeof(pj.tmp));
		if (pj.fd < 0) {
			fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(pprof_path, outs[OUT_PPROF].what),
				strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		} else {
			pj.flush = cli_out_flusher(pj.fd, pj.tmp);
			pprof_job_run(&pj);
		}
	}
	if (pprof_path && pj.fd >= 0) {
		if (pj.err) {
			fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(pprof_path, outs[OUT_PPROF].what),
				pj.err == CONV_E_IO ? strerror(pj.io_errno) : conv_strerror(pj.err));
			cli_out_abandon(pj.fd, pj.tmp, pprof_path, pj.flush);
			rc = CLI_EXIT_OUTPUT;
		} else if (cli_out_commit(pj.fd, pj.tmp, pprof_path, pj.flush, pj.synced)) {
			fprintf(stderr, "conv: cannot write %s: %s\n", cli_out_name(pprof_path, outs[OUT_PPROF].what),
				strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		} else {
			w.path[OUT_PPROF] = pprof_path;
			w.bytes[OUT_PPROF] = pj.bytes;
		}
	}
	{
		int r1 = write_views(c, in, &p, &cs, path, &w);

		if (r1 > rc)
			rc = r1;
	}
	{
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		write_ns = (uint64_t)(t.tv_sec - t_write.tv_sec) * 1000000000u +
			   (uint64_t)t.tv_nsec - (uint64_t)t_write.tv_nsec;
	}
	if (c->com.strict && rc == CLI_EXIT_OK && (rdr_problem_count(r) || rdr_stats(r)->stopped))
		rc = CLI_EXIT_LOSS;
	if (c->top && ((c->tty && !c->com.quiet) || c->com.verbose || c->stats_path)) {
		uint32_t first = view_main_event(&p);

		/* without memory for them, the summary goes without them */
		if (first != PROF_NONE && !p.events_desc[first].offcpu &&
		    view_top_build(&top, &p, 2 * (size_t)first, c->top) == CONV_E_OK) {
			top_ready = true;
			top_event = strtab_get(&p.strs, p.events_desc[first].full_name);
		}
	}
	if ((c->tty && !c->com.quiet) || c->com.verbose)
		show_summary(c, in, r, &p, &cs, &w, write_ns, top_ready ? &top : NULL, top_event);
out:
	if (c->stats_path)
		write_stats(in, rc, r, prof_ready ? &p : NULL, prof_ready ? &cs : NULL, &w,
			    top_ready ? &top : NULL, top_event);
	if (top_ready)
		view_top_release(&top);
	convert_stats_release(&cs);
	if (prof_ready)
		prof_release(&p);
	if (r)
		rdr_close(r);
	return rc;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: conv [OPTIONS] [FILE...]   (default perf.data; '-' = stdin; globs allowed)\n"
	      "       conv info [OPTIONS] [FILE] | conv symbolize [OPTIONS] FILE...  (--help)\n"
	      "Writes BASE.pb.gz (pprof) and BASE.jfr (JDK Flight Recorder) per FILE.\n"
	      " -o, --output BASE|DIR/  base name, or a directory (DIR/ or one that exists)\n"
	      " -F, --format LIST       pprof,jfr,folded,html (default pprof,jfr); folded stacks\n"
	      "                         (flamegraph.pl's input), html: a flame graph page\n"
	      "     --pprof PATH  --jfr PATH  --folded PATH  --html PATH   name one output\n"
	      "                         ('-' = stdout); then only the outputs named are written\n"
	      "     --folded-value EVENT  EVENT's period (off_cpu: off-CPU ns), not the count\n"
	      "     --top N             top functions in the summary and --stats (default 10)\n"
	      "     --stats[=FILE]      JSON facts per input (stdout without FILE)\n"
	      "Filters (comma-separated lists, repeatable; keeping nothing is a usage error):\n"
	      " -p, --pid LIST   -t, --tid LIST   -c, --comm LIST   -e, --event LIST\n"
	      "     --time START,END    seconds after the first sample; @T = perf time\n"
	      "Output details:\n"
	      "     --no-labels         no pid/tid/comm/process labels (pprof)\n"
	      "     --label cpu         add a cpu label (pprof)\n"
	      "     --tp-fields EVENT:F1,F2\n"
	      "                         label EVENT's samples with these tracepoint fields (F#: a\n"
	      "                         number) in place of its defaults; repeatable\n"
	      "     --jfr-chunk-size N  new JFR chunk after N bytes (default 64M; k/M/G)\n"
	      "     --max-reorder N     memory for time-ordering records (default 32M)\n",
	      f);
	fputs(cli_common_help, f);
	fputs(" -h, --help    --version\n"
	      "Exit: 0 ok, 1 usage, 2 input unreadable, 3 data lost (--strict), 4 output\n"
	      "not written. See conv(1).\n",
	      f);
}

enum {
	O_PPROF = 256, O_JFR, O_STATS, O_TIME, O_NO_LABELS, O_LABEL, O_CHUNK, O_VERSION,
	O_MAX_REORDER, O_TP_FIELDS, O_FOLDED, O_HTML, O_FOLDED_VALUE, O_TOP
};

/* conv's own options; the symbol sources and -j -q -v --strict are cli/opts.c's */
static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"pprof", required_argument, NULL, O_PPROF},
	{"jfr", required_argument, NULL, O_JFR},
	{"folded", required_argument, NULL, O_FOLDED},
	{"html", required_argument, NULL, O_HTML},
	{"folded-value", required_argument, NULL, O_FOLDED_VALUE},
	{"top", required_argument, NULL, O_TOP},
	{"format", required_argument, NULL, 'F'},
	{"stats", optional_argument, NULL, O_STATS},
	{"pid", required_argument, NULL, 'p'},
	{"tid", required_argument, NULL, 't'},
	{"comm", required_argument, NULL, 'c'},
	{"event", required_argument, NULL, 'e'},
	{"time", required_argument, NULL, O_TIME},
	{"no-labels", no_argument, NULL, O_NO_LABELS},
	{"label", required_argument, NULL, O_LABEL},
	{"tp-fields", required_argument, NULL, O_TP_FIELDS},
	{"jfr-chunk-size", required_argument, NULL, O_CHUNK},
	{"max-reorder", required_argument, NULL, O_MAX_REORDER},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, O_VERSION},
	{NULL, 0, NULL, 0},
};

/* Splits a comma-separated list into strs (pointers into arg, which is modified). */
static bool split_list(char *arg, const char **strs, size_t *n)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		if (*n >= MAX_LIST)
			return false;
		strs[(*n)++] = tok;
	}
	return true;
}

static bool split_ids(char *arg, uint32_t *ids, size_t *n)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);

		if (*end || end == tok || v > UINT32_MAX || *n >= MAX_LIST)
			return false;
		ids[(*n)++] = (uint32_t)v;
	}
	return true;
}

/* "1.5" (seconds) or "@12345.678" (a perf timestamp, seconds) -> ns; *abs says which. */
static bool parse_time(const char *s, size_t len, uint64_t *ns, bool *abs)
{
	char buf[64], *end;
	double v;

	*abs = len && s[0] == '@';
	if (*abs) {
		s++;
		len--;
	}
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	v = strtod(buf, &end);
	if (*end || v < 0 || v > 1e10)
		return false;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return true;
}

static bool parse_window(const char *arg, struct convert_filter *f)
{
	const char *comma = strchr(arg, ',');
	bool a1 = false, a2 = false;

	if (!comma)
		return false;
	f->has_start = comma != arg;
	f->has_end = comma[1] != 0;
	if (!f->has_start && !f->has_end)
		return false;
	if (f->has_start && !parse_time(arg, (size_t)(comma - arg), &f->start_ns, &a1))
		return false;
	if (f->has_end && !parse_time(comma + 1, strlen(comma + 1), &f->end_ns, &a2))
		return false;
	if (f->has_start && f->has_end && a1 != a2)
		return false;
	f->time_absolute = a1 || a2;
	return !(f->has_start && f->has_end && f->end_ns < f->start_ns);
}

/* Keeps a filter option's words for the warning when the filters keep nothing. */
static void note_filter(struct cvopts *c, const char *opt, const char *arg)
{
	size_t len = strlen(c->filters);

	if (len < sizeof(c->filters))
		snprintf(c->filters + len, sizeof(c->filters) - len, "%s%s %s", len ? ", " : "", opt,
			 arg);
}

static bool has_glob_chars(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* ---- outputs against inputs, before any work ---- */

/*
 * -o -: standard output holds one output; with more formats than one to
 * write (and not named by --pprof ... themselves), says which -F to pick.
 */
static bool out_std_one(const struct cvopts *c)
{
	char list[128] = "", pick[128] = "";
	size_t ll = 0, pl = 0;
	int n = 0;

	for (int k = 0; k < OUT__COUNT; k++) {
		if (!(c->formats & F_BIT(k)) || c->paths[k])
			continue;
		n++;
		ll += (size_t)snprintf(list + ll, sizeof(list) - ll, "%s%s", ll ? ", " : "", outs[k].format);
		pl += (size_t)snprintf(pick + pl, sizeof(pick) - pl, "%s-F %s", pl ? " or " : "", outs[k].format);
	}
	if (n <= 1)
		return true;
	fprintf(stderr, "conv: -o -: standard output holds one output, and %d would go there (%s): "
			"pick one with %s\n",
		n, list, pick);
	return false;
}

/*
 * Before any work: refuses (usage error, said) binary output to a terminal,
 * a terminal as the input, and what cli/paths.h refuses: an output that is
 * an input, two outputs that are one file, an output over a recording.
 * Returns the exit code.
 */
static int check_outputs(const struct cvopts *c, char **inputs, size_t nr_inputs)
{
	struct cli_paths ps = { 0 };

	for (size_t i = 0; i < nr_inputs; i++) {
		bool std = !strcmp(inputs[i], "-");

		if (std && !cli_stdin_usable("conv")) {
			cli_paths_release(&ps);
			return CLI_EXIT_USAGE;
		}
		/* one that is not there too: an output must not create it (it fails on its own turn) */
		cli_paths_add(&ps, inputs[i], std ? STDIN_FILENO : -1, false, "the input", i);
	}
	if (c->co.sj.kallsyms)
		cli_paths_add(&ps, c->co.sj.kallsyms, -1, false, "the --kallsyms file", SIZE_MAX);
	for (size_t i = 0; i < nr_inputs; i++) {
		static char bufs[OUT__COUNT][4096];
		const char *out[OUT__COUNT];

		outputs_of(c, inputs[i], bufs, out);
		for (int k = 0; k < OUT__COUNT; k++) {
			bool std = out[k] && !strcmp(out[k], "-");

			if (!out[k])
				continue;
			if (outs[k].binary && cli_out_terminal(out[k])) {
				fprintf(stderr, "conv: --%s %s: %s is a terminal: no binary data written to "
						"it (redirect it, or name a file)\n",
					outs[k].format, out[k], std ? "standard output" : "it");
				cli_paths_release(&ps);
				return CLI_EXIT_USAGE;
			}
			cli_paths_add(&ps, out[k], std ? STDOUT_FILENO : -1, true, outs[k].what, i);
		}
	}
	if (c->stats_path)
		cli_paths_add(&ps, c->stats_path, strcmp(c->stats_path, "-") ? -1 : STDOUT_FILENO, true,
			      "the --stats file", SIZE_MAX);
	return cli_paths_check(&ps, "conv", inputs);
}

/* The symbolizer refuses anything but a regular file there; say so before the run, not as "no kernel symbols". */
static bool cli_kallsyms_readable(const char *path)
{
	int fd = ropen_regular(path, false);

	if (fd < 0) {
		fprintf(stderr, "conv: --kallsyms %s: %s\n", path, ropen_strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

int cmd_convert(int argc, char **argv)
{
	static struct cvopts c; /* big lists: not on the stack */
	static struct option opts[64];
	char **inputs = NULL;
	size_t nr_inputs = 0, cap_inputs = 0;
	glob_t gl;
	bool globbed = false;
	int opt, rc = CLI_EXIT_OK;

	memset(&c, 0, sizeof(c));
	c.top = 10;
	/* a core to spare reads, decompresses and orders the input while this one converts */
	c.ro.read_ahead = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	if (!cli_opts_join(long_opts, opts, sizeof(opts) / sizeof(opts[0]))) {
		fprintf(stderr, "conv: too many options\n");
		return CLI_EXIT_USAGE;
	}
	opterr = 0;
	optind = 1;
	/* the leading ':' tells a missing value (':') from an unknown option ('?') */
	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORT "o:F:p:t:c:e:h", opts, NULL)) != -1) {
		int taken = cli_common_take(&c.com, "conv", opt, optarg);

		if (taken < 0)
			return CLI_EXIT_USAGE;
		if (taken)
			continue;
		switch (opt) {
		case 'o':
			c.out = cli_out_arg("conv", optarg);
			if (!c.out)
				return CLI_EXIT_USAGE;
			break;
		case O_PPROF:
		case O_JFR:
		case O_FOLDED:
		case O_HTML:
			c.paths[opt == O_PPROF	 ? OUT_PPROF
				: opt == O_JFR	 ? OUT_JFR
				: opt == O_FOLDED ? OUT_FOLDED
						  : OUT_HTML] = optarg;
			break;
		case O_FOLDED_VALUE:
			c.folded_value = optarg;
			break;
		case O_TOP: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || optarg[0] == '-' || v > 100000) {
				fprintf(stderr, "conv: --top: expected a number up to 100000, got '%s'\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			c.top = (unsigned)v;
			break;
		}
		case 'F': {
			char *list = strdup(optarg);

			c.formats = 0;
			for (char *tok = list ? strtok(list, ",") : NULL; tok; tok = strtok(NULL, ",")) {
				int k = 0;

				while (k < OUT__COUNT && strcmp(tok, outs[k].format))
					k++;
				if (k == OUT__COUNT) {
					fprintf(stderr, "conv: --format: unknown format '%s' (pprof, jfr, "
							"folded, html)\n",
						tok);
					free(list);
					return CLI_EXIT_USAGE;
				}
				c.formats |= F_BIT(k);
			}
			free(list);
			if (!c.formats) {
				fprintf(stderr, "conv: --format: no format given (pprof, jfr, folded, html)\n");
				return CLI_EXIT_USAGE;
			}
			break;
		}
		case O_STATS:
			c.stats_path = cli_stats_path("conv", optarg, argc, argv);
			if (!c.stats_path)
				return CLI_EXIT_USAGE;
			break;
		case 'p':
		case 't':
			note_filter(&c, opt == 'p' ? "--pid" : "--tid", optarg);
			if (!split_ids(optarg, opt == 'p' ? c.pids : c.tids,
				       opt == 'p' ? &c.nr_pids : &c.nr_tids)) {
				fprintf(stderr, "conv: --%s: not a list of numbers: '%s'\n",
					opt == 'p' ? "pid" : "tid", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'c':
		case 'e':
			note_filter(&c, opt == 'c' ? "--comm" : "--event", optarg);
			if (!split_list(optarg, opt == 'c' ? c.comms : c.events,
					opt == 'c' ? &c.nr_comms : &c.nr_events)) {
				fprintf(stderr, "conv: too many --%s values\n", opt == 'c' ? "comm" : "event");
				return CLI_EXIT_USAGE;
			}
			break;
		case O_TIME:
			note_filter(&c, "--time", optarg);
			if (!parse_window(optarg, &c.co.filter)) {
				fprintf(stderr, "conv: --time: expected START,END in seconds after the "
						"first sample (or @perf-time for both), got '%s'\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case O_TP_FIELDS:
			/* a tracepoint is "sys:name": its fields follow a second colon */
			if (!strchr(optarg, ':') || strchr(optarg, ':') == strrchr(optarg, ':') ||
			    strrchr(optarg, ':')[1] == '\0' || c.nr_tp_fields >= MAX_LIST) {
				fprintf(stderr, "conv: --tp-fields: expected EVENT:FIELD[,FIELD...] "
						"(sched:sched_switch:prev_state,next_comm), got '%s'\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			c.tp_fields[c.nr_tp_fields++] = optarg;
			break;
		case O_NO_LABELS:
			c.co.no_labels = true;
			break;
		case O_LABEL:
			if (strcmp(optarg, "cpu")) {
				fprintf(stderr, "conv: --label: only 'cpu' can be added\n");
				return CLI_EXIT_USAGE;
			}
			c.co.label_cpu = true;
			break;
		case O_CHUNK:
			if (!cli_parse_size(optarg, &c.chunk_size)) {
				fprintf(stderr, "conv: --jfr-chunk-size: not a size: '%s'\n", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case O_MAX_REORDER: {
			uint64_t v;

			if (!cli_parse_size(optarg, &v) || v > SIZE_MAX) {
				fprintf(stderr, "conv: --max-reorder: not a size: '%s'\n", optarg);
				return CLI_EXIT_USAGE;
			}
			c.ro.reorder_limit = (size_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		case O_VERSION:
			printf("conv %s\n", CONV_VERSION_STRING);
			return CLI_EXIT_OK;
		default:
			cli_opt_error("conv", opt, argv, opts);
			return CLI_EXIT_USAGE;
		}
	}
	if (!cli_common_finish(&c.com, "conv"))
		return CLI_EXIT_USAGE;
	/* an output named, and a format list that leaves it out: which one was meant? */
	for (int k = 0; c.formats && k < OUT__COUNT; k++) {
		if (c.paths[k] && !(c.formats & F_BIT(k))) {
			fprintf(stderr, "conv: --%s names an output that -F (--format) leaves out: give "
					"one\n",
				outs[k].format);
			return CLI_EXIT_USAGE;
		}
	}
	if (!c.formats) {
		for (int k = 0; k < OUT__COUNT; k++)
			c.formats |= c.paths[k] ? F_BIT(k) : 0;
		if (!c.formats)
			c.formats = F_BIT(OUT_PPROF) | F_BIT(OUT_JFR);
	}
	if (c.out) {
		bool names = false;

		for (int k = 0; k < OUT__COUNT; k++)
			names = names || ((c.formats & F_BIT(k)) && !c.paths[k]);
		if (!names) {
			fprintf(stderr, "conv: -o (--output) would name nothing: --pprof/--jfr/--folded/"
					"--html name every output written\n");
			return CLI_EXIT_USAGE;
		}
		if (!strcmp(c.out, "-") && !out_std_one(&c))
			return CLI_EXIT_USAGE;
	}
	if (c.folded_value && !(c.formats & F_BIT(OUT_FOLDED))) {
		fprintf(stderr, "conv: --folded-value: no folded stacks are written (-F folded or "
				"--folded PATH)\n");
		return CLI_EXIT_USAGE;
	}
	c.co.sj = c.com.sj;
	c.co.pm = c.com.pm;
	c.co.filter.pids = c.pids;
	c.co.filter.nr_pids = c.nr_pids;
	c.co.filter.tids = c.tids;
	c.co.filter.nr_tids = c.nr_tids;
	c.co.filter.comms = c.comms;
	c.co.filter.nr_comms = c.nr_comms;
	c.co.filter.events = c.events;
	c.co.filter.nr_events = c.nr_events;
	c.co.tp_fields = c.tp_fields;
	c.co.nr_tp_fields = c.nr_tp_fields;
	c.tty = isatty(STDERR_FILENO);

	/* inputs: files, '-', and glob patterns (quoted, so the shell left them) */
	memset(&gl, 0, sizeof(gl));
	for (int i = optind; i < argc; i++) {
		struct stat stt;

		if (strcmp(argv[i], "-") && has_glob_chars(argv[i]) && stat(argv[i], &stt)) {
			int g = glob(argv[i], globbed ? GLOB_APPEND : 0, NULL, &gl);

			if (g == GLOB_NOMATCH) {
				fprintf(stderr, "conv: %s: no file matches\n", argv[i]);
				rc = CLI_EXIT_INPUT;
			}
			globbed = globbed || g == 0 || g == GLOB_NOMATCH;
			continue;
		}
		if (nr_inputs == cap_inputs) {
			size_t nc = cap_inputs ? 2 * cap_inputs : 16;
			char **ni = realloc(inputs, nc * sizeof(*ni));

			if (!ni) {
				fprintf(stderr, "conv: out of memory\n");
				free(inputs);
				return CLI_EXIT_INPUT;
			}
			inputs = ni;
			cap_inputs = nc;
		}
		inputs[nr_inputs++] = argv[i];
	}
	for (size_t i = 0; globbed && i < gl.gl_pathc; i++) {
		if (nr_inputs == cap_inputs) {
			size_t nc = cap_inputs ? 2 * cap_inputs : 16;
			char **ni = realloc(inputs, nc * sizeof(*ni));

			if (!ni)
				break;
			inputs = ni;
			cap_inputs = nc;
		}
		inputs[nr_inputs++] = gl.gl_pathv[i];
	}
	if (!nr_inputs && rc == CLI_EXIT_OK) {
		static char def[] = "perf.data";

		inputs = malloc(sizeof(*inputs));
		if (inputs)
			inputs[nr_inputs++] = def;
	}
	if (nr_inputs > 1 && any_path(&c)) {
		fprintf(stderr, "conv: --pprof, --jfr, --folded and --html name one file: with several "
				"inputs use -o DIR\n");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	{
		size_t stdin_uses = 0;

		for (size_t i = 0; i < nr_inputs; i++)
			stdin_uses += !strcmp(inputs[i], "-");
		if (stdin_uses > 1) {
			fprintf(stderr, "conv: standard input ('-') can be read once\n");
			rc = CLI_EXIT_USAGE;
			goto done;
		}
	}
	{
		int to_stdout = c.out && !strcmp(c.out, "-");
		int r1 = cli_out_dir("conv", c.out, nr_inputs, false);

		if (r1) {
			rc = r1;
			goto done;
		}
		for (int k = 0; k < OUT__COUNT; k++)
			to_stdout += c.paths[k] && !strcmp(c.paths[k], "-");
		if (c.stats_path && !strcmp(c.stats_path, "-") && to_stdout) {
			fprintf(stderr, "conv: --stats without FILE writes to stdout, like the output named "
					"'-'\n");
			rc = CLI_EXIT_USAGE;
			goto done;
		}
		if (to_stdout > 1) {
			fprintf(stderr, "conv: only one output can go to stdout\n");
			rc = CLI_EXIT_USAGE;
			goto done;
		}
	}
	{
		int r1 = check_outputs(&c, inputs, nr_inputs);

		if (r1) {
			rc = r1;
			goto done;
		}
	}
	if (c.co.sj.kallsyms && !cli_kallsyms_readable(c.co.sj.kallsyms)) {
		rc = CLI_EXIT_INPUT;
		goto done;
	}
	for (size_t i = 0; i < c.com.nr_dirs; i++) {
		struct stat stt;

		if (stat(c.com.dirs[i], &stt) || !S_ISDIR(stt.st_mode))
			fprintf(stderr, "conv: warning: --debug-dir %s: not a directory\n", c.com.dirs[i]);
	}
	{
		int r1 = cli_out_dir("conv", c.out, nr_inputs, true);

		if (r1) {
			rc = r1;
			goto done;
		}
	}
	/* after -o DIR exists: --stats may name a file in it */
	if (c.stats_path && !statsfile_open("conv", c.stats_path)) {
		rc = CLI_EXIT_OUTPUT;
		goto done;
	}
	for (size_t i = 0; i < nr_inputs; i++) {
		int r1;

		if (c.stats_path)
			statsfile_arm(inputs[i]);
		r1 = convert_one(&c, inputs[i]);

		/* several inputs: the worst outcome decides */
		if (r1 > rc)
			rc = r1;
	}
done:
	if (c.stats_path && !statsfile_close("conv") && rc < CLI_EXIT_OUTPUT)
		rc = CLI_EXIT_OUTPUT;
	if (globbed)
		globfree(&gl);
	free(inputs);
	return rc;
}
