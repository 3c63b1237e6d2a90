/*
 * conv [OPTIONS] [FILE...]: perf.data -> BASE.pb.gz and BASE.jfr (and, when
 * asked, BASE.folded and BASE.html), each input on its own or, with --merge
 * OUT, all of them into one profile (merge_all). Outputs are written to a temp file in the target directory
 * and renamed, so a failed run never leaves a half-written file. On a
 * terminal: a progress line while working and a summary at the end; off a
 * terminal or with -q only errors and warnings. --stats writes the facts as
 * JSON (one object per input, one per line).
 */
#include "cli/cli.h"
#include "cli/convstats.h"
#include "cli/opts.h"
#include "cli/outfile.h"
#include "cli/outputs.h"
#include "cli/paths.h"
#include "cli/statsfile.h"
#include "cli/summary.h"
#include "cli/text.h"

#include "core/clock.h"
#include "core/dbuf.h"
#include "core/ropen.h"
#include "core/vec.h"
#include "model/merge.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pipeline/evname.h"
#include "pipeline/objtab.h"
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
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST CLI_MAX_LIST

#define F_BIT(k) (1u << (k))

/* Inputs converted side by side at most (-j): each holds a few temp files, core/cleanup.h's slots */
#define CONVERT_MAX_WORKERS 16

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
	uint64_t object_cache;    /* --object-cache: what the run keeps of its objects for later inputs */
	bool batch;               /* one of several inputs converted side by side: no progress of its own */
	const char *comms[MAX_LIST], *events[MAX_LIST];
	const char *tp_fields[MAX_LIST];
	size_t nr_tp_fields;
	uint32_t pids[MAX_LIST], tids[MAX_LIST];
	size_t nr_comms, nr_events, nr_pids, nr_tids;
	char filters[512];        /* the filter options as given, for the warning when none is kept */
	const char *merge;        /* --merge OUT: one profile of all inputs; NULL: one per input */
	const char *merge_keys[2]; /* --merge-label: the labels naming each input ("file", "host") */
	size_t nr_merge_keys;
	bool merge_keys_given;
	/* --label K=V: for the operands from the pos-th on (a later one of the same key wins) */
	struct { char *key; const char *value; size_t pos; } ilabels[MAX_LIST];
	size_t nr_ilabels;
	char **ops;               /* the operands before "--", in order (CLI_OPERAND) */
	size_t nr_ops, cap_ops;
};

/* Whether any output is named (--pprof, --jfr, --folded, --html). */
static bool any_path(const struct cvopts *c)
{
	for (int k = 0; k < OUT__COUNT; k++)
		if (c->paths[k])
			return true;
	return false;
}

/* ---- one input ---- */

/* Each output's path made from the input's name or -o: bufs[k] for out_descs[k]. */
static void output_paths(const struct cvopts *c, const char *in, char bufs[OUT__COUNT][4096])
{
	out_paths(c->out, !strcmp(in, "-") ? "stdin" : in, bufs);
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
		fprintf(cli_err(), "conv: %s: -e %s: no event of this recording is named so (it has %s); "
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
			fprintf(cli_err(), "conv: warning: %s: --label cpu: the samples carry no CPU number "
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
 * refuse_filters' --pid and --tid (what: "pid", "tid"): true (said) when
 * a value given, ids[i], is one no sample had (seen[i]; seen NULL: not
 * noted); min and max are the recording's range.
 */
static bool refuse_ids(const char *in, const char *what, const uint32_t *ids, size_t nr, const bool *seen,
		       uint32_t min, uint32_t max)
{
	for (size_t i = 0; seen && i < nr; i++) {
		if (!seen[i]) {
			fprintf(cli_err(), "conv: %s: --%s %" PRIu32 ": no sample of this recording has it "
					"(its %ss: %" PRIu32 " to %" PRIu32 "); nothing written\n",
				in, what, ids[i], what, min, max);
			return true;
		}
	}
	return false;
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
	if (refuse_ids(in, "pid", f->pids, f->nr_pids, sn->pids, sn->pid_min, sn->pid_max) ||
	    refuse_ids(in, "tid", f->tids, f->nr_tids, sn->tids, sn->tid_min, sn->tid_max))
		return true;
	for (size_t i = 0; sn->comms && i < f->nr_comms; i++) {
		if (!sn->comms[i]) {
			seen_comms(sn, names, sizeof(names));
			fprintf(cli_err(), "conv: %s: --comm %s: no sampled thread of this recording is named so "
					"(its threads: %s); nothing written\n",
				in, f->comms[i], names);
			return true;
		}
	}
	sample_span(f, rdr_stats(r), span, sizeof(span));
	if (window_outside(f, rdr_stats(r))) {
		fprintf(cli_err(), "conv: %s: --time: the window holds no sample: they span %s; nothing "
				"written\n",
			in, span);
		return true;
	}
	if (!cs->samples) {
		fprintf(cli_err(), "conv: %s: the filters (%s) together keep none of the %" PRIu64 " %s%s%s; "
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
		fprintf(cli_err(), "conv: warning: %s: the recording holds no samples%s: the outputs are empty\n",
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
	fprintf(cli_err(), "conv: %s: --folded-value: no event named '%s' in this recording\n", in,
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
		fprintf(cli_err(), "conv: %s: the flame graph shows %zu events; %zu more with samples are left out\n",
			in, vc->nr, left_out);
	if (!vc->nr && p->nr_types)
		/* nothing sampled: a page saying so rather than none */
		cols_add(vc, 0, p->nr_events_desc ? strtab_get(&p->strs, p->events_desc[0].full_name) : "",
			 "samples");
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
	struct out_src src = { p, 0, NULL, 0, NULL, NULL, 0 };
	struct out_job j;
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
		fprintf(cli_err(), "conv: %s: no event to show: the recording describes none\n", in);
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
		fprintf(cli_err(), "conv: %s: cannot build the call tree: %s\n", in, conv_strerror(err));
		return CLI_EXIT_OUTPUT;
	}
	src.t = &t;
	src.folded_col = vc.folded;
	src.ho = &ho;
	out_job_init(&j, OUT_FOLDED, path[OUT_FOLDED], &src);
	if (folded && !out_write(&j, w))
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
		out_job_init(&j, OUT_HTML, path[OUT_HTML], &src);
		if (!out_write(&j, w))
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
			cli_out_say("conv", path[k], out_descs[k].what, strerror(errno));
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
		wrote[s.nr_wrote].format = out_descs[k].format;
		wrote[s.nr_wrote].path = w->path[k];
		wrote[s.nr_wrote++].bytes = w->bytes[k];
	}
	summary_print(&s);
	if (off_ready)
		view_top_release(&off);
}
/* One input's conversion, from its reading to its statistics. */
struct conversion {
	const char *in;
	char bufs[OUT__COUNT][4096];
	const char *path[OUT__COUNT]; /* NULL: not written */
	struct rdr *r;
	struct prof p;
	bool prof_ready;
	struct convert_stats cs;
	struct written w;
	uint64_t write_ns;
	struct view_top top;
	bool top_ready;
	const char *top_event;
	struct summary_progress pg;
};

/* The problems the reader found, each a warning: where, which record, what, how often. */
static void warn_problems(const char *in, const struct rdr *r)
{
	for (size_t i = 0; i < rdr_problem_count(r); i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);
		char where[64] = "";
		char times[40] = "";
		char name[32];

		if (pr->offset != UINT64_MAX)
			snprintf(where, sizeof(where), "offset %" PRIu64 "%s", pr->offset,
				 pr->record_type ? ", " : ": ");
		/* a count says something only when it is not one */
		if (pr->count > 1)
			snprintf(times, sizeof(times), " (%" PRIu64 " times)", pr->count);
		cli_warn("%s: %s%s%s%s%s%s", in, where,
			pr->record_type ? "record " : "",
			cli_record_name(pr->record_type, name),
			pr->record_type ? ": " : "", pr->msg, times);
	}
}

/*
 * The reading pass into cv->p: outputs checked first, then the input
 * opened, read and converted; what it lacks for the options refused
 * before any output is opened. The exit code (said).
 */
static int convert_read(struct cvopts *c, struct conversion *cv)
{
	const char *in = cv->in;
	struct conv_diag diag;
	enum conv_err err;
	size_t ftype;
	int rc = CLI_EXIT_OK;

	memset(&diag, 0, sizeof(diag));
	/* an input that is not there is the error to say (exit 2), not its outputs' directory */
	if (!strcmp(in, "-") || access(in, R_OK) == 0)
		rc = check_writable(cv->path);
	if (!rc)
		rc = cli_open_input(in, &c->ro, &cv->r);
	if (rc)
		return rc;
	if (refuse_events(c, in, rdr_info(cv->r), false))
		return CLI_EXIT_USAGE;
	warn_filters(c, in, rdr_info(cv->r));
	prof_init(&cv->p);
	cv->prof_ready = true;
	err = convert_run(cv->r, &c->co, &cv->p, &cv->cs, &diag);
	/*
	 * No malloc_trim here: with one malloc arena (mem_tune_malloc) the
	 * writers reuse what the reading pass and the symbolizer freed, which
	 * a trim would hand back and have them fault in again, 4 KiB at a time
	 * in the huge pages it splits (90 MB benchmark file: 4 900 page faults
	 * -> 2 100, same peak RSS, 83-89 MB either way).
	 */
	summary_progress_clear(&cv->pg);
	if (err) {
		fprintf(cli_err(), "conv: %s: %s%s%s\n", in, conv_strerror(err), diag.msg[0] ? ": " : "",
			diag.msg);
		return CLI_EXIT_INPUT;
	}
	warn_problems(in, cv->r);
	/* what the recording lacks, said before any output is opened */
	if (refuse_events(c, in, rdr_info(cv->r), true) || refuse_filters(c, in, cv->r, &cv->cs) ||
	    (cv->path[OUT_FOLDED] && !folded_type(c, in, &cv->p, &ftype)))
		return CLI_EXIT_USAGE;
	warn_result(in, &cv->cs);
	return CLI_EXIT_OK;
}

/* Every output asked for, listed in cv->w, timed for the summary; CLI_EXIT_OK or CLI_EXIT_OUTPUT. */
static int convert_write(const struct cvopts *c, struct conversion *cv)
{
	struct out_src src = { &cv->p, c->chunk_size, NULL, 0, NULL, NULL, 0 };
	uint64_t t0 = clock_now_ns();
	int rc, r1;

	rc = out_models(c->co.sj.jobs != 1, &src, cv->path, &cv->w);
	r1 = write_views(c, cv->in, &cv->p, &cv->cs, cv->path, &cv->w);
	if (r1 > rc)
		rc = r1;
	cv->write_ns = clock_now_ns() - t0;
	return rc;
}

/* The top functions of the main event, when the summary or --stats shows them. */
static void convert_top(const struct cvopts *c, struct conversion *cv)
{
	uint32_t first;

	if (!c->top || !((c->tty && !c->com.quiet) || c->com.verbose || c->stats_path))
		return;
	first = view_main_event(&cv->p);
	/* without memory for them, the summary goes without them */
	if (first != PROF_NONE && !cv->p.events_desc[first].offcpu &&
	    view_top_build(&cv->top, &cv->p, 2 * (size_t)first, c->top) == CONV_E_OK) {
		cv->top_ready = true;
		cv->top_event = strtab_get(&cv->p.strs, cv->p.events_desc[first].full_name);
	}
}

/* An input's --stats record (rc its exit code), then its conversion released. rc. */
static int conversion_end(const struct cvopts *c, struct conversion *cv, int rc)
{
	if (c->stats_path)
		convstats_write(cv->in, rc, cv->r, cv->prof_ready ? &cv->p : NULL,
				cv->prof_ready ? &cv->cs : NULL, &cv->w, cv->top_ready ? &cv->top : NULL,
				cv->top_event);
	if (cv->top_ready)
		view_top_release(&cv->top);
	convert_stats_release(&cv->cs);
	if (cv->prof_ready)
		prof_release(&cv->p);
	if (cv->r)
		rdr_close(cv->r);
	free(cv);
	return rc;
}

static int convert_one(struct cvopts *c, const char *in)
{
	struct conversion *cv = calloc(1, sizeof(*cv));
	int rc;

	if (!cv) {
		fprintf(cli_err(), "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	cv->in = in;
	cv->top_event = "";
	cv->pg.input = in;
	cv->pg.offline = c->com.sj.offline;
	outputs_of(c, in, cv->bufs, cv->path);
	c->co.keep_events = cv->path[OUT_JFR] != NULL;
	if (c->tty && !c->com.quiet && !c->batch) {
		c->co.progress = summary_progress_convert;
		c->co.progress_ctx = &cv->pg;
		c->co.sj.progress = summary_progress_download;
		c->co.sj.progress_ctx = &cv->pg;
	}
	rc = convert_read(c, cv);
	if (!rc) {
		rc = convert_write(c, cv);
		if (c->com.strict && rc == CLI_EXIT_OK &&
		    (rdr_problem_count(cv->r) || rdr_stats(cv->r)->stopped))
			rc = CLI_EXIT_LOSS;
		convert_top(c, cv);
		if ((c->tty && !c->com.quiet) || c->com.verbose)
			show_summary(c, in, cv->r, &cv->p, &cv->cs, &cv->w, cv->write_ns,
				     cv->top_ready ? &cv->top : NULL, cv->top_event);
	}
	return conversion_end(c, cv, rc);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: conv [OPTIONS] [FILE...]   (default perf.data; '-' = stdin; globs allowed)\n"
	      "       conv info [FILE] | conv symbolize FILE... | conv diff BASE NEW  (--help)\n"
	      "Writes BASE.pb.gz (pprof) and BASE.jfr (JDK Flight Recorder) per FILE.\n"
	      " -o, --output BASE|DIR/  base name, or a directory (DIR/ or one that exists)\n"
	      " -F, --format LIST       pprof,jfr,folded,html (default pprof,jfr); folded stacks\n"
	      "                         (flamegraph.pl's input), html: a flame graph page\n"
	      "     --pprof PATH  --jfr PATH  --folded PATH  --html PATH   name one output\n"
	      "                         ('-' = stdout); then only the outputs named are written\n"
	      "     --folded-value EVENT  EVENT's period (off_cpu: off-CPU ns), not the count\n"
	      "     --top N             top functions in the summary and --stats (default 10)\n"
	      "     --stats[=FILE]      JSON facts per input (stdout without FILE)\n"
	      "     --merge OUT         one OUT.pb.gz/.jfr of all inputs, labelled --merge-label\n"
	      "                         file|host|file,host|none; --label K=V: inputs after it\n"
	      "Filters (comma-separated lists, repeatable; keeping nothing is a usage error):\n"
	      " -p, --pid LIST   -t, --tid LIST   -c, --comm LIST   -e, --event LIST\n"
	      "     --time START,END    seconds after the first sample; @T = perf time\n"
	      "Output details:\n"
	      "     --no-labels  --label cpu   pprof: no pid/tid/comm/process labels; a cpu one\n"
	      "     --tp-fields EVENT:F1,F2  label EVENT's samples with these tracepoint\n"
	      "                         fields (F#: a number), not its defaults; repeatable\n"
	      "     --jfr-chunk-size N  --max-reorder N   JFR chunk (64M), reorder memory (32M)\n"
	      "     --object-cache N    objects kept open for later inputs (default 1G; 0: none)\n",
	      f);
	fputs(cli_common_help, f);
	fputs(" -h, --help    --version\n"
	      "Exit: 0 ok, 1 usage, 2 input unreadable, 3 data lost (--strict), 4 output\n"
	      "not written. See conv(1).\n",
	      f);
}

enum {
	O_PPROF = 256, O_JFR, O_STATS, O_TIME, O_NO_LABELS, O_LABEL, O_CHUNK, O_VERSION,
	O_MAX_REORDER, O_TP_FIELDS, O_FOLDED, O_HTML, O_FOLDED_VALUE, O_TOP, O_OBJECT_CACHE, O_MERGE,
	O_MERGE_LABEL
};

/* conv's own options; the symbol sources and -j -q -v --strict are cli/opts.c's */
static const struct cli_opt conv_opts[] = {
	{"output", required_argument, 'o'},
	{"pprof", required_argument, O_PPROF},
	{"jfr", required_argument, O_JFR},
	{"folded", required_argument, O_FOLDED},
	{"html", required_argument, O_HTML},
	{"folded-value", required_argument, O_FOLDED_VALUE},
	{"top", required_argument, O_TOP},
	{"format", required_argument, 'F'},
	{"stats", optional_argument, O_STATS},
	{"pid", required_argument, 'p'},
	{"tid", required_argument, 't'},
	{"comm", required_argument, 'c'},
	{"event", required_argument, 'e'},
	{"time", required_argument, O_TIME},
	{"no-labels", no_argument, O_NO_LABELS},
	{"label", required_argument, O_LABEL},
	{"merge", required_argument, O_MERGE},
	{"merge-label", required_argument, O_MERGE_LABEL},
	{"tp-fields", required_argument, O_TP_FIELDS},
	{"jfr-chunk-size", required_argument, O_CHUNK},
	{"max-reorder", required_argument, O_MAX_REORDER},
	{"object-cache", required_argument, O_OBJECT_CACHE},
	{"help", no_argument, 'h'},
	{"version", no_argument, O_VERSION},
	{NULL, 0, 0},
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
		ll += (size_t)snprintf(list + ll, sizeof(list) - ll, "%s%s", ll ? ", " : "", out_descs[k].format);
		pl += (size_t)snprintf(pick + pl, sizeof(pick) - pl, "%s-F %s", pl ? " or " : "", out_descs[k].format);
	}
	if (n <= 1)
		return true;
	fprintf(cli_err(), "conv: -o -: standard output holds one output, and %d would go there (%s): "
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
	char bufs[OUT__COUNT][4096]; /* each input's in turn: cli_paths_add copies them */

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
	/* --merge: the one set of outputs (named from OUT, whatever the input) */
	for (size_t i = 0; i < (c->merge && nr_inputs ? 1 : nr_inputs); i++) {
		const char *out[OUT__COUNT];

		outputs_of(c, inputs[i], bufs, out);
		for (int k = 0; k < OUT__COUNT; k++) {
			bool std = out[k] && !strcmp(out[k], "-");

			if (!out[k])
				continue;
			if (out_descs[k].binary && cli_out_terminal(out[k])) {
				fprintf(cli_err(), "conv: --%s %s: %s is a terminal: no binary data written to "
						"it (redirect it, or name a file)\n",
					out_descs[k].format, out[k], std ? "standard output" : "it");
				cli_paths_release(&ps);
				return CLI_EXIT_USAGE;
			}
			cli_paths_add(&ps, out[k], std ? STDOUT_FILENO : -1, true, out_descs[k].what, i);
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
		fprintf(cli_err(), "conv: --kallsyms %s: %s\n", path, ropen_strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

/* -F LIST: the formats named (pprof, jfr, folded, html); false when one is unknown or none given (said). */
static bool take_formats(struct cvopts *c, const char *arg)
{
	char *list = strdup(arg);

	c->formats = 0;
	for (char *tok = list ? strtok(list, ",") : NULL; tok; tok = strtok(NULL, ",")) {
		int k = 0;

		while (k < OUT__COUNT && strcmp(tok, out_descs[k].format))
			k++;
		if (k == OUT__COUNT) {
			fprintf(cli_err(), "conv: --format: unknown format '%s' (pprof, jfr, "
					"folded, html)\n",
				tok);
			free(list);
			return false;
		}
		c->formats |= F_BIT(k);
	}
	free(list);
	if (!c->formats) {
		fprintf(cli_err(), "conv: --format: no format given (pprof, jfr, folded, html)\n");
		return false;
	}
	return true;
}

/* --top N; false when not a number up to 100000 (said). */
static bool take_top(struct cvopts *c, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || end == arg || arg[0] == '-' || v > 100000) {
		fprintf(cli_err(), "conv: --top: expected a number up to 100000, got '%s'\n", arg);
		return false;
	}
	c->top = (unsigned)v;
	return true;
}

/* The filters -p, -t, -c, -e, --time: kept, and noted for the warning when they keep nothing. */
static bool take_filter(struct cvopts *c, int id, char *arg)
{
	switch (id) {
	case 'p':
	case 't':
		note_filter(c, id == 'p' ? "--pid" : "--tid", arg);
		if (!split_ids(arg, id == 'p' ? c->pids : c->tids, id == 'p' ? &c->nr_pids : &c->nr_tids)) {
			fprintf(cli_err(), "conv: --%s: not a list of numbers: '%s'\n", id == 'p' ? "pid" : "tid",
				arg);
			return false;
		}
		return true;
	case 'c':
	case 'e':
		note_filter(c, id == 'c' ? "--comm" : "--event", arg);
		if (!split_list(arg, id == 'c' ? c->comms : c->events,
				id == 'c' ? &c->nr_comms : &c->nr_events)) {
			fprintf(cli_err(), "conv: too many --%s values\n", id == 'c' ? "comm" : "event");
			return false;
		}
		return true;
	default: /* O_TIME */
		note_filter(c, "--time", arg);
		if (!parse_window(arg, &c->co.filter)) {
			fprintf(cli_err(), "conv: --time: expected START,END in seconds after the "
					"first sample (or @perf-time for both), got '%s'\n",
				arg);
			return false;
		}
		return true;
	}
}

/* --tp-fields EVENT:F1,F2; false when not of that shape or too many (said). */
static bool take_tp_fields(struct cvopts *c, const char *arg)
{
	/* a tracepoint is "sys:name": its fields follow a second colon */
	if (!strchr(arg, ':') || strchr(arg, ':') == strrchr(arg, ':') || strrchr(arg, ':')[1] == '\0' ||
	    c->nr_tp_fields >= MAX_LIST) {
		fprintf(cli_err(), "conv: --tp-fields: expected EVENT:FIELD[,FIELD...] "
				"(sched:sched_switch:prev_state,next_comm), got '%s'\n",
			arg);
		return false;
	}
	c->tp_fields[c->nr_tp_fields++] = arg;
	return true;
}

/* --jfr-chunk-size, --max-reorder and --object-cache: sizes; false when not one (said). */
static bool take_size(struct cvopts *c, int id, const char *arg)
{
	uint64_t v;

	if (id == O_OBJECT_CACHE) {
		c->object_cache = 0;
		/* 0: nothing kept between inputs */
		if (strcmp(arg, "0") && !cli_parse_size(arg, &c->object_cache)) {
			fprintf(cli_err(), "conv: --object-cache: not a size: '%s'\n", arg);
			return false;
		}
		return true;
	}
	if (id == O_CHUNK) {
		if (!cli_parse_size(arg, &c->chunk_size)) {
			fprintf(cli_err(), "conv: --jfr-chunk-size: not a size: '%s'\n", arg);
			return false;
		}
		return true;
	}
	if (!cli_parse_size(arg, &v) || v > SIZE_MAX) {
		fprintf(cli_err(), "conv: --max-reorder: not a size: '%s'\n", arg);
		return false;
	}
	c->ro.reorder_limit = (size_t)v;
	return true;
}

/*
 * --label cpu (a label of every sample), or --label K=V: a label of every
 * sample of the inputs after it in a --merge profile.
 */
static bool take_label(struct cvopts *c, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!strcmp(arg, "cpu")) {
		c->co.label_cpu = true;
		return true;
	}
	if (!eq || eq == arg || c->nr_ilabels >= MAX_LIST) {
		fprintf(cli_err(), "conv: --label: expected 'cpu' or KEY=VALUE (the inputs after it, with "
				"--merge), got '%s'\n",
			arg);
		return false;
	}
	*eq = 0;
	c->ilabels[c->nr_ilabels].key = arg;
	c->ilabels[c->nr_ilabels].value = eq + 1;
	c->ilabels[c->nr_ilabels++].pos = c->nr_ops;
	return true;
}

/* --merge-label LIST: file, host or both, in the order given (or none). */
static bool take_merge_keys(struct cvopts *c, const char *arg)
{
	char buf[64];

	c->nr_merge_keys = 0;
	c->merge_keys_given = true;
	if (!strcmp(arg, "none"))
		return true;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		const char *k = !strcmp(tok, "file") ? "file" : !strcmp(tok, "host") ? "host" : NULL;

		if (!k || c->nr_merge_keys >= 2 || (c->nr_merge_keys && !strcmp(c->merge_keys[0], k))) {
			fprintf(cli_err(), "conv: --merge-label: expected file, host, file,host or none, got "
					"'%s'\n",
				arg);
			return false;
		}
		c->merge_keys[c->nr_merge_keys++] = k;
	}
	return true;
}

/* One of conv_opts (cli_opts_parse's take). */
static enum cli_take conv_take(void *ctx, int id, char *arg, int argc, char **argv)
{
	struct cvopts *c = ctx;
	bool ok = true;

	switch (id) {
	case 'o':
		c->out = cli_out_arg("conv", arg);
		ok = c->out != NULL;
		break;
	case O_PPROF:
		c->paths[OUT_PPROF] = arg;
		break;
	case O_JFR:
		c->paths[OUT_JFR] = arg;
		break;
	case O_FOLDED:
		c->paths[OUT_FOLDED] = arg;
		break;
	case O_HTML:
		c->paths[OUT_HTML] = arg;
		break;
	case O_FOLDED_VALUE:
		c->folded_value = arg;
		break;
	case O_TOP:
		ok = take_top(c, arg);
		break;
	case 'F':
		ok = take_formats(c, arg);
		break;
	case O_STATS:
		c->stats_path = cli_stats_path("conv", arg, argc, argv);
		ok = c->stats_path != NULL;
		break;
	case 'p':
	case 't':
	case 'c':
	case 'e':
	case O_TIME:
		ok = take_filter(c, id, arg);
		break;
	case O_TP_FIELDS:
		ok = take_tp_fields(c, arg);
		break;
	case O_NO_LABELS:
		c->co.no_labels = true;
		break;
	case O_LABEL:
		ok = take_label(c, arg);
		break;
	case O_MERGE:
		c->merge = arg;
		break;
	case O_MERGE_LABEL:
		ok = take_merge_keys(c, arg);
		break;
	case CLI_OPERAND:
		ok = vec_reserve((void **)&c->ops, &c->cap_ops, c->nr_ops + 1, sizeof(*c->ops));
		if (ok)
			c->ops[c->nr_ops++] = arg;
		else
			fprintf(cli_err(), "conv: out of memory\n");
		break;
	case O_CHUNK:
	case O_MAX_REORDER:
	case O_OBJECT_CACHE:
		ok = take_size(c, id, arg);
		break;
	case 'h':
		usage(stdout);
		return CLI_TAKE_DONE;
	case O_VERSION:
		printf("conv %s\n", CONV_VERSION_STRING);
		return CLI_TAKE_DONE;
	default:
		ok = false;
	}
	return ok ? CLI_TAKE_OK : CLI_TAKE_USAGE;
}

/*
 * --merge against the other options (said; true when refused): OUT is a
 * base name, in the place of -o's; --pprof ... name one merged output
 * each, as with -o BASE; --label K=V and --merge-label need it.
 */
static bool merge_settle(struct cvopts *c)
{
	if (!c->merge) {
		if (c->nr_ilabels)
			fprintf(cli_err(), "conv: --label %s=%s: input labels go into a --merge profile; "
					"without --merge, only --label cpu\n",
				c->ilabels[0].key, c->ilabels[0].value);
		else if (c->merge_keys_given)
			fprintf(cli_err(), "conv: --merge-label: labels of a --merge profile: give --merge OUT\n");
		return c->nr_ilabels || c->merge_keys_given;
	}
	if (c->out) {
		fprintf(cli_err(), "conv: --merge %s names the merged outputs (OUT.pb.gz, OUT.jfr ...): "
				"-o has nothing left to name\n",
			c->merge);
		return true;
	}
	if (!*c->merge || (strcmp(c->merge, "-") && cli_out_is_dir(c->merge))) {
		fprintf(cli_err(), "conv: --merge '%s': OUT is the base name of the merged outputs (OUT.pb.gz, "
				"OUT.jfr), not a directory: give DIR/NAME\n",
			c->merge);
		return true;
	}
	c->out = c->merge; /* named as -o BASE names one input's outputs */
	return false;
}

/*
 * After the options: the outputs they name settled (-F against --pprof
 * ..., the default pprof and jfr), what cannot go together refused (said),
 * the conversion's options filled in. The exit code.
 */
static int conv_settle(struct cvopts *c)
{
	if (merge_settle(c))
		return CLI_EXIT_USAGE;
	/* an output named, and a format list that leaves it out: which one was meant? */
	for (int k = 0; c->formats && k < OUT__COUNT; k++) {
		if (c->paths[k] && !(c->formats & F_BIT(k))) {
			fprintf(cli_err(), "conv: --%s names an output that -F (--format) leaves out: give "
					"one\n",
				out_descs[k].format);
			return CLI_EXIT_USAGE;
		}
	}
	if (!c->formats) {
		for (int k = 0; k < OUT__COUNT; k++)
			c->formats |= c->paths[k] ? F_BIT(k) : 0;
		if (!c->formats)
			c->formats = F_BIT(OUT_PPROF) | F_BIT(OUT_JFR);
	}
	if (c->out) {
		bool names = false;

		for (int k = 0; k < OUT__COUNT; k++)
			names = names || ((c->formats & F_BIT(k)) && !c->paths[k]);
		if (!names) {
			fprintf(cli_err(), "conv: %s would name nothing: --pprof/--jfr/--folded/"
					"--html name every output written\n",
				c->merge ? "--merge OUT" : "-o (--output)");
			return CLI_EXIT_USAGE;
		}
		if (!strcmp(c->out, "-") && !out_std_one(c))
			return CLI_EXIT_USAGE;
	}
	if (c->folded_value && !(c->formats & F_BIT(OUT_FOLDED))) {
		fprintf(cli_err(), "conv: --folded-value: no folded stacks are written (-F folded or "
				"--folded PATH)\n");
		return CLI_EXIT_USAGE;
	}
	c->co.sj = c->com.sj;
	c->co.pm = c->com.pm;
	c->co.filter.pids = c->pids;
	c->co.filter.nr_pids = c->nr_pids;
	c->co.filter.tids = c->tids;
	c->co.filter.nr_tids = c->nr_tids;
	c->co.filter.comms = c->comms;
	c->co.filter.nr_comms = c->nr_comms;
	c->co.filter.events = c->events;
	c->co.filter.nr_events = c->nr_events;
	c->co.tp_fields = c->tp_fields;
	c->co.nr_tp_fields = c->nr_tp_fields;
	c->tty = isatty(STDERR_FILENO);
	return CLI_EXIT_OK;
}

/* The inputs of a run: the operands, glob patterns expanded. */
struct inputs {
	char **v;
	size_t *op; /* the operand each came from (a pattern's matches: the pattern's) */
	size_t nr, cap, cap_op;
	glob_t gl;
	bool globbed;
};

/* Appends one input; false when out of memory. */
static bool inputs_add(struct inputs *in, char *path, size_t op)
{
	if (!vec_reserve((void **)&in->v, &in->cap, in->nr + 1, sizeof(*in->v)) ||
	    !vec_reserve((void **)&in->op, &in->cap_op, in->nr + 1, sizeof(*in->op)))
		return false;
	in->op[in->nr] = op;
	in->v[in->nr++] = path;
	return true;
}

/*
 * The operands argv[first..argc) as inputs: files, '-', and glob patterns
 * (quoted, so the shell left them), their matches after the files; none
 * is perf.data. The exit code: a pattern that matches nothing is said;
 * -1 out of memory (said).
 */
static int inputs_collect(struct inputs *in, int argc, char **argv)
{
	static char def[] = "perf.data";
	size_t *gop = NULL, cap_gop = 0; /* each match's pattern */
	int rc = CLI_EXIT_OK;

	memset(in, 0, sizeof(*in));
	for (int i = 0; i < argc; i++) {
		struct stat stt;

		if (strcmp(argv[i], "-") && has_glob_chars(argv[i]) && stat(argv[i], &stt)) {
			size_t before = in->globbed ? in->gl.gl_pathc : 0;
			int g = glob(argv[i], in->globbed ? GLOB_APPEND : 0, NULL, &in->gl);

			if (g == GLOB_NOMATCH) {
				fprintf(cli_err(), "conv: %s: no file matches\n", argv[i]);
				rc = CLI_EXIT_INPUT;
			}
			in->globbed = in->globbed || g == 0 || g == GLOB_NOMATCH;
			if (in->globbed && in->gl.gl_pathc > before &&
			    !vec_reserve((void **)&gop, &cap_gop, in->gl.gl_pathc, sizeof(*gop))) {
				fprintf(cli_err(), "conv: out of memory\n");
				return -1;
			}
			for (size_t k = before; in->globbed && k < in->gl.gl_pathc; k++)
				gop[k] = (size_t)i;
			continue;
		}
		if (!inputs_add(in, argv[i], (size_t)i)) {
			fprintf(cli_err(), "conv: out of memory\n");
			free(gop);
			return -1;
		}
	}
	for (size_t i = 0; in->globbed && i < in->gl.gl_pathc; i++)
		if (!inputs_add(in, in->gl.gl_pathv[i], gop[i]))
			break;
	free(gop);
	if (!in->nr && rc == CLI_EXIT_OK && !inputs_add(in, def, 0))
		return -1;
	return rc;
}

static void inputs_release(struct inputs *in)
{
	if (in->globbed)
		globfree(&in->gl);
	free(in->v);
	free(in->op);
}

/* What standard input and standard output can take: read once, one output. The exit code (said). */
static int check_std(const struct cvopts *c, const struct inputs *in)
{
	size_t stdin_uses = 0;
	int to_stdout = c->out && !strcmp(c->out, "-");
	int rc;

	for (size_t i = 0; i < in->nr; i++)
		stdin_uses += !strcmp(in->v[i], "-");
	if (stdin_uses > 1) {
		fprintf(cli_err(), "conv: standard input ('-') can be read once\n");
		return CLI_EXIT_USAGE;
	}
	/* --merge: one set of outputs, whatever the number of inputs */
	rc = cli_out_dir("conv", c->out, c->merge ? 1 : in->nr, false);
	if (rc)
		return rc;
	for (int k = 0; k < OUT__COUNT; k++)
		to_stdout += c->paths[k] && !strcmp(c->paths[k], "-");
	if (c->stats_path && !strcmp(c->stats_path, "-") && to_stdout) {
		fprintf(cli_err(), "conv: --stats without FILE writes to stdout, like the output named "
				"'-'\n");
		return CLI_EXIT_USAGE;
	}
	if (to_stdout > 1) {
		fprintf(cli_err(), "conv: only one output can go to stdout\n");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/*
 * Before any input is read: the inputs and outputs together (check_std,
 * check_outputs), the --kallsyms file, the debug directories, -o DIR made.
 * The exit code (said).
 */
static int check_run(const struct cvopts *c, const struct inputs *in)
{
	int rc;

	if (in->nr > 1 && any_path(c) && !c->merge) {
		fprintf(cli_err(), "conv: --pprof, --jfr, --folded and --html name one file: with several "
				"inputs use -o DIR\n");
		return CLI_EXIT_USAGE;
	}
	rc = check_std(c, in);
	if (!rc)
		rc = check_outputs(c, in->v, in->nr);
	if (rc)
		return rc;
	if (c->co.sj.kallsyms && !cli_kallsyms_readable(c->co.sj.kallsyms))
		return CLI_EXIT_INPUT;
	for (size_t i = 0; i < c->com.nr_dirs; i++) {
		struct stat stt;

		if (stat(c->com.dirs[i], &stt) || !S_ISDIR(stt.st_mode))
			fprintf(cli_err(), "conv: warning: --debug-dir %s: not a directory\n", c->com.dirs[i]);
	}
	return cli_out_dir("conv", c->out, c->merge ? 1 : in->nr, true);
}

/*
 * One input of a run whose inputs are converted side by side: what its
 * worker leaves for the main thread to say, in input order.
 */
struct batch_slot {
	char *msgs;                    /* its messages (open_memstream) */
	size_t msgs_len;
	struct statsfile_capture stats; /* its --stats record */
	struct conversion *cv;         /* --merge: the conversion, for the main thread to merge */
	int rc;
	bool done;
};

struct merged;
static struct conversion *merge_read(struct cvopts *c, const struct inputs *in, size_t i, bool keep_events,
				     int *rc);
static int merge_take(const struct cvopts *c, const struct inputs *in, size_t i, struct merged *mg,
		      struct conversion *cv, int rc);

struct batch {
	const struct cvopts *c;   /* the run's options; each worker converts with a copy */
	const struct inputs *in;
	struct batch_slot *slots;
	atomic_size_t next;       /* the next input a worker takes */
	struct merged *mg;        /* --merge: the profile the main thread merges into, in input order */
	bool keep_events;         /* --merge: the inputs' events are kept for the merged JFR */
	size_t taken;             /* inputs the main thread has taken (said, merged) */
	size_t window;            /* a worker starts input i only below taken + window */
	pthread_mutex_t lock;
	pthread_cond_t done;      /* a slot is done */
	pthread_cond_t moved;     /* the main thread took an input */
};

/* Converts inputs (the next one not taken, until none is left) with a copy of the run's options. */
static void *batch_worker(void *arg)
{
	struct batch *b = arg;
	struct cvopts *c = malloc(sizeof(*c));

	if (c) {
		*c = *b->c;
		c->batch = true;
		c->co.sj.jobs = 1;       /* the inputs are the parallel work, not their objects */
		c->ro.read_ahead = false; /* a core per input already */
	}
	for (;;) {
		size_t i = atomic_fetch_add(&b->next, 1);
		struct batch_slot *sl;
		FILE *msgs;
		int rc = CLI_EXIT_INPUT;

		if (i >= b->in->nr)
			break;
		/* --merge: conversions waiting for the main thread hold their models; so many at most */
		pthread_mutex_lock(&b->lock);
		while (i - b->taken >= b->window) /* taken <= i: input i is not done */
			pthread_cond_wait(&b->moved, &b->lock);
		pthread_mutex_unlock(&b->lock);
		sl = &b->slots[i];
		/* no buffer: said at once, out of order, rather than not at all */
		msgs = open_memstream(&sl->msgs, &sl->msgs_len);
		cli_err_to(msgs);
		statsfile_capture_to(&sl->stats);
		if (c && b->mg)
			sl->cv = merge_read(c, b->in, i, b->keep_events, &rc);
		else if (c)
			rc = convert_one(c, b->in->v[i]);
		else
			fprintf(cli_err(), "conv: out of memory\n");
		statsfile_capture_to(NULL);
		cli_err_to(NULL);
		if (msgs)
			fclose(msgs);
		pthread_mutex_lock(&b->lock);
		sl->rc = rc;
		sl->done = true;
		pthread_cond_broadcast(&b->done);
		pthread_mutex_unlock(&b->lock);
	}
	free(c);
	return NULL;
}

/* The batch line: inputs done of all, files per second, the input waited for. */
static void batch_progress(const struct cvopts *c, const struct batch_progress *bp)
{
	if (c->tty && !c->com.quiet)
		summary_progress_batch(bp);
}

/* Waits for input i's worker; the progress line meanwhile. Locked. */
static void batch_wait(struct batch *b, size_t i, struct batch_progress *bp)
{
	while (!b->slots[i].done) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b->done, &b->lock, &ts);
		pthread_mutex_unlock(&b->lock);
		batch_progress(b->c, bp);
		pthread_mutex_lock(&b->lock);
	}
}

/*
 * The inputs over n workers; their messages, --stats records and exit codes
 * taken in input order, so that the run says what a one-at-a-time run
 * says; with mg (--merge), their conversions merged into it in that order,
 * no more than n waiting. The worst outcome.
 */
static int convert_batch(struct cvopts *c, const struct inputs *in, unsigned n, uint64_t t0,
			 struct merged *mg, bool keep_events)
{
	struct batch b;
	pthread_t th[CONVERT_MAX_WORKERS];
	unsigned started = 0;
	int rc = CLI_EXIT_OK;
	struct batch_progress bp = { 0, in->nr, t0, NULL };

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.in = in;
	b.mg = mg;
	b.keep_events = keep_events;
	b.window = mg ? n : SIZE_MAX;
	b.slots = calloc(in->nr, sizeof(*b.slots));
	if (!b.slots || pthread_mutex_init(&b.lock, NULL)) {
		free(b.slots);
		fprintf(stderr, "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	pthread_cond_init(&b.done, NULL);
	pthread_cond_init(&b.moved, NULL);
	atomic_init(&b.next, 0);
	/* the single arena mem_tune_malloc chose would make the workers take turns in malloc */
	mallopt(M_ARENA_MAX, (int)n + 1);
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&th[started], NULL, batch_worker, &b) == 0)
			started++;
	if (!started)
		batch_worker(&b); /* no thread: the inputs one after the other here */
	for (size_t i = 0; i < in->nr; i++) {
		struct batch_slot *sl = &b.slots[i];

		bp.current = in->v[i];
		if (c->stats_path)
			statsfile_arm(in->v[i]);
		pthread_mutex_lock(&b.lock);
		batch_wait(&b, i, &bp);
		pthread_mutex_unlock(&b.lock);
		if (c->tty && !c->com.quiet)
			cli_progress_clear();
		if (sl->msgs_len)
			fwrite(sl->msgs, 1, sl->msgs_len, stderr);
		free(sl->msgs);
		if (mg)
			sl->rc = merge_take(c, in, i, mg, sl->cv, sl->rc);
		else if (c->stats_path)
			statsfile_put_captured(&sl->stats);
		if (sl->rc > rc)
			rc = sl->rc;
		pthread_mutex_lock(&b.lock);
		b.taken = i + 1;
		pthread_cond_broadcast(&b.moved);
		pthread_mutex_unlock(&b.lock);
		bp.done = i + 1;
		batch_progress(c, &bp);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (c->tty && !c->com.quiet)
		cli_progress_clear();
	pthread_cond_destroy(&b.done);
	pthread_cond_destroy(&b.moved);
	pthread_mutex_destroy(&b.lock);
	free(b.slots);
	return rc;
}

/* The inputs one after the other, with the batch line between them. The worst outcome. */
static int convert_sequence(struct cvopts *c, const struct inputs *in, uint64_t t0)
{
	int rc = CLI_EXIT_OK;
	struct batch_progress bp = { 0, in->nr, t0, NULL };

	for (size_t i = 0; i < in->nr; i++) {
		int r1;

		if (in->nr > 1) {
			bp.done = i;
			bp.current = in->v[i];
			batch_progress(c, &bp);
		}
		if (c->stats_path)
			statsfile_arm(in->v[i]);
		r1 = convert_one(c, in->v[i]);
		if (r1 > rc)
			rc = r1;
	}
	return rc;
}

/*
 * Workers for the inputs: -j N (default the CPUs) with several inputs,
 * never more than inputs; 1: one after the other.
 */
static unsigned batch_workers(const struct cvopts *c, size_t nr_inputs)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = c->com.sj.jobs ? c->com.sj.jobs : (cpus > 0 ? (size_t)cpus : 1);

	if (n > nr_inputs)
		n = nr_inputs;
	if (n > CONVERT_MAX_WORKERS)
		n = CONVERT_MAX_WORKERS;
	return n ? (unsigned)n : 1;
}

/* -v: what the run's inputs shared, and how fast they went. */
static void say_objects(struct objtab *t, size_t nr, unsigned workers, uint64_t t0)
{
	struct objtab_stats st = objtab_stats(t);
	double secs = (double)(clock_now_ns() - t0) / 1e9;
	char b[32];

	fprintf(stderr,
		"conv: %zu inputs in %.2f s (%.1f files/s, %u %s): objects %" PRIu64 " opened, %" PRIu64
		" reused, %" PRIu64 " closed for --object-cache, %" PRIu64
		" opened again after shedding, %s held at most\n",
		nr, secs, secs > 0 ? (double)nr / secs : 0.0, workers, cli_plural(workers, "worker", "workers"),
		st.opened, st.reused, st.evicted, st.reopened, cli_size(st.peak_bytes, b, sizeof(b)));
}

/*
 * Converts each input on its own; the worst outcome is the exit code. The
 * inputs share one object table: what one opened, the next finds open.
 */
static int convert_all(struct cvopts *c, const struct inputs *in)
{
	int rc;
	struct objtab *objects = NULL;
	unsigned workers = batch_workers(c, in->nr);
	uint64_t t0 = clock_now_ns();

	/* after -o DIR exists: --stats may name a file in it */
	if (c->stats_path && !statsfile_open("conv", c->stats_path))
		return CLI_EXIT_OUTPUT;
	/* one input has no later one to keep its objects for: they close as they did */
	if (in->nr > 1 && c->object_cache && objtab_new(&objects, c->object_cache) != CONV_E_OK) {
		fprintf(stderr, "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	c->co.sj.objects = objects;
	rc = workers > 1 ? convert_batch(c, in, workers, t0, NULL, false) : convert_sequence(c, in, t0);
	c->co.sj.objects = NULL;
	if (objects && c->com.verbose)
		say_objects(objects, in->nr, workers, t0);
	objtab_free(objects);
	return rc;
}

/* ---- --merge: every input into one profile ---- */

/* The merged profile on its way, and what the inputs' conversions add up to. */
struct merged {
	struct prof p;
	char bufs[OUT__COUNT][4096];
	const char *path[OUT__COUNT];
	struct convert_stats cs; /* samples, processes and threads summed, for the flame graph's subtitle */
	bool broken; /* a merge failed (out of memory, the spool): nothing is written */
};

/*
 * The labels of input i's samples: --merge-label's (its path as given,
 * its recording's hostname, when it has one), then each key of --label K=V given before
 * the input's operand, the last value given. Their number (at most n).
 */
static size_t input_labels(const struct cvopts *c, const struct inputs *in, size_t i, const struct rdr *r,
			   struct prof_merge_label *lb, size_t n)
{
	const char *host = rdr_info(r)->hostname;
	size_t k = 0;

	for (size_t m = 0; m < c->nr_merge_keys && k < n; m++) {
		const char *v = !strcmp(c->merge_keys[m], "file") ? in->v[i] : host;

		/* an empty string label is pprof's "no string": a recording without a hostname has no host label */
		if (!v || !*v)
			continue;
		lb[k].key = c->merge_keys[m];
		lb[k++].value = v;
	}
	for (size_t l = 0; l < c->nr_ilabels && c->ilabels[l].pos <= in->op[i]; l++) {
		size_t at = 0;

		while (at < k && strcmp(lb[at].key, c->ilabels[l].key))
			at++;
		if (at == k && k == n)
			continue;
		lb[at].key = c->ilabels[l].key;
		lb[at].value = c->ilabels[l].value;
		k += at == k;
	}
	return k;
}

/*
 * Input i converted as on its own, for merging (keep_events: its events
 * kept for the merged JFR): the conversion, NULL when out of memory; *rc
 * its exit code so far. From any thread.
 */
static struct conversion *merge_read(struct cvopts *c, const struct inputs *in, size_t i, bool keep_events,
				     int *rc)
{
	struct conversion *cv = calloc(1, sizeof(*cv));

	*rc = CLI_EXIT_INPUT;
	if (!cv) {
		fprintf(cli_err(), "conv: out of memory\n");
		return NULL;
	}
	cv->in = in->v[i];
	cv->top_event = "";
	cv->pg.input = cv->in;
	cv->pg.offline = c->com.sj.offline;
	/* no output of its own (cv->path all NULL) */
	c->co.keep_events = keep_events;
	if (c->tty && !c->com.quiet && !c->batch) {
		c->co.progress = summary_progress_convert;
		c->co.progress_ctx = &cv->pg;
		c->co.sj.progress = summary_progress_download;
		c->co.sj.progress_ctx = &cv->pg;
	}
	*rc = convert_read(c, cv);
	return cv;
}

/*
 * Input i's conversion (merge_read's, rc its exit code) merged into mg, in
 * input order, and released; its --stats record. The exit code.
 */
static int merge_take(const struct cvopts *c, const struct inputs *in, size_t i, struct merged *mg,
		      struct conversion *cv, int rc)
{
	struct prof_merge_label lb[MAX_LIST + 2];
	struct prof_merge_opts mo;
	struct conv_diag diag;

	if (!cv)
		return rc;
	if (!rc && !mg->broken) {
		memset(&diag, 0, sizeof(diag));
		memset(&mo, 0, sizeof(mo));
		mo.labels = lb;
		mo.nr_labels = input_labels(c, in, i, cv->r, lb, sizeof(lb) / sizeof(lb[0]));
		mo.name = cv->in;
		mo.tmpdir = c->co.tmpdir;
		if (prof_merge(&mg->p, &cv->p, &mo, &diag)) {
			fprintf(cli_err(), "conv: %s: not merged: %s; nothing written\n", cv->in, diag.msg);
			rc = CLI_EXIT_OUTPUT;
			mg->broken = true;
		}
		if (c->com.strict && rc == CLI_EXIT_OK &&
		    (rdr_problem_count(cv->r) || rdr_stats(cv->r)->stopped))
			rc = CLI_EXIT_LOSS;
		mg->cs.samples += cv->cs.samples;
		mg->cs.processes += cv->cs.processes;
		mg->cs.threads += cv->cs.threads;
		convert_top(c, cv);
	}
	return conversion_end(c, cv, rc);
}

/* The merged outputs, their summary line and --stats record. The exit code. */
static int merge_write(const struct cvopts *c, const struct inputs *in, struct merged *mg)
{
	struct out_src src = { &mg->p, c->chunk_size, NULL, 0, NULL, NULL, 0 };
	struct written w;
	struct view_top top;
	bool top_ready = false;
	const char *top_event = "";
	uint32_t first = view_main_event(&mg->p);
	int rc, r1;

	memset(&w, 0, sizeof(w));
	if (!mg->p.nr_merged) {
		fprintf(cli_err(), "conv: --merge %s: no input was converted; nothing written\n", c->merge);
		return CLI_EXIT_INPUT;
	}
	rc = out_models(c->co.sj.jobs != 1, &src, mg->path, &w);
	r1 = write_views(c, c->merge, &mg->p, &mg->cs, mg->path, &w);
	if (r1 > rc)
		rc = r1;
	if (c->top && c->stats_path && first != PROF_NONE && !mg->p.events_desc[first].offcpu &&
	    view_top_build(&top, &mg->p, 2 * (size_t)first, c->top) == CONV_E_OK) {
		top_ready = true;
		top_event = strtab_get(&mg->p.strs, mg->p.events_desc[first].full_name);
	}
	if ((c->tty && !c->com.quiet) || c->com.verbose) {
		fprintf(cli_err(), "conv: merged %" PRIu32 " of %zu inputs (%" PRIu64 " samples, %zu stacks):",
			mg->p.nr_merged, in->nr, mg->cs.samples, mg->p.nr_stacks);
		for (int k = 0; k < OUT__COUNT; k++)
			if (w.path[k])
				fprintf(cli_err(), " %s", w.path[k]);
		fputc('\n', cli_err());
	}
	if (c->stats_path)
		convstats_write_merged(c->merge, rc, &mg->p, &w, top_ready ? &top : NULL, top_event);
	if (top_ready)
		view_top_release(&top);
	return rc;
}

/* --merge's first pass over the inputs, shared by its workers. */
struct plan {
	struct cvopts *c;
	const struct inputs *in;
	atomic_size_t next;
	struct rdr_opts ro;
};

/* Plans inputs (the next one not taken, until none is left); with bp, the batch line between them. */
static void plan_inputs(struct plan *pl, struct batch_progress *bp)
{
	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		const char *path;
		struct stat st;
		struct rdr *r = NULL;
		struct conv_diag d;

		if (i >= pl->in->nr)
			break;
		path = pl->in->v[i];
		if (bp) {
			bp->done = i;
			bp->current = path;
			batch_progress(pl->c, bp);
		}
		/* a pipe cannot be read twice: its objects are looked up in the second pass alone */
		if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		memset(&d, 0, sizeof(d));
		/* what is wrong with an input, the second pass says */
		if (rdr_open_path(&r, path, &pl->ro, &d) == CONV_E_OK)
			convert_plan(r, &pl->c->co, &d);
		rdr_close(r);
	}
}

static void *plan_worker(void *arg)
{
	plan_inputs(arg, NULL);
	return NULL;
}

/*
 * --merge's first pass: each input that can be read twice (a file, not a
 * pipe) read once, on n workers, to tell the object table what it will ask
 * of which symbol files (convert_plan). Then each file is opened once for
 * all inputs and shed after: the merge holds the answers of libc's, the
 * kernel's and the program's debug files, not the files (memory within
 * 1.5x of its largest single conversion's, not the sum of all objects').
 */
static void merge_plan(struct cvopts *c, const struct inputs *in, unsigned n, uint64_t t0)
{
	struct plan pl = { c, in, 0, c->ro };
	struct batch_progress bp = { 0, in->nr, t0, NULL };
	pthread_t th[CONVERT_MAX_WORKERS];
	unsigned started = 0;

	atomic_init(&pl.next, 0);
	pl.ro.read_ahead = false; /* a core per input already */
	for (unsigned i = 1; i < n; i++)
		if (pthread_create(&th[started], NULL, plan_worker, &pl) == 0)
			started++;
	plan_inputs(&pl, c->tty && !c->com.quiet ? &bp : NULL);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (c->tty && !c->com.quiet)
		cli_progress_clear();
}

/*
 * --merge: each input read and converted as on its own, then merged into
 * one profile and released (memory: the merged profile plus one input's
 * conversion); the merged outputs written once at the end. An input that
 * cannot be converted is left out (said), and the exit code says so.
 */
static int merge_all(struct cvopts *c, const struct inputs *in)
{
	struct merged *mg = calloc(1, sizeof(*mg));
	struct objtab *objects = NULL;
	uint64_t t0 = clock_now_ns();
	struct batch_progress bp = { 0, in->nr, t0, NULL };
	int rc = CLI_EXIT_OK, r1;
	unsigned workers = batch_workers(c, in->nr);
	bool ready;

	if (!mg) {
		fprintf(cli_err(), "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	prof_init(&mg->p);
	outputs_of(c, c->merge, mg->bufs, mg->path);
	rc = check_writable(mg->path);
	if (!rc && c->stats_path && !statsfile_open("conv", c->stats_path))
		rc = CLI_EXIT_OUTPUT;
	/* the inputs share one object table, as convert_all's do */
	if (!rc && in->nr > 1 && c->object_cache && objtab_new(&objects, c->object_cache) != CONV_E_OK) {
		fprintf(cli_err(), "conv: out of memory\n");
		rc = CLI_EXIT_INPUT;
	}
	c->co.sj.objects = objects;
	ready = !rc;
	if (ready && objects && !c->co.sj.no_symbolize)
		merge_plan(c, in, workers, t0);
	if (ready && workers > 1) {
		rc = convert_batch(c, in, workers, t0, mg, mg->path[OUT_JFR] != NULL);
	} else {
		for (size_t i = 0; ready && i < in->nr; i++) {
			struct conversion *cv;

			if (in->nr > 1) {
				bp.done = i;
				bp.current = in->v[i];
				batch_progress(c, &bp);
			}
			if (c->stats_path)
				statsfile_arm(in->v[i]);
			cv = merge_read(c, in, i, mg->path[OUT_JFR] != NULL, &r1);
			r1 = merge_take(c, in, i, mg, cv, r1);
			if (r1 > rc)
				rc = r1;
		}
	}
	if (in->nr > 1 && c->tty && !c->com.quiet)
		cli_progress_clear();
	c->co.sj.objects = NULL;
	if (objects && c->com.verbose)
		say_objects(objects, in->nr, workers, t0);
	objtab_free(objects);
	/* a merge that failed half-way leaves a profile not to be written */
	if (ready && !mg->broken) {
		r1 = merge_write(c, in, mg);
		if (r1 > rc)
			rc = r1;
	}
	prof_release(&mg->p);
	free(mg);
	return rc;
}

/* conv on the operands argv[first..argc), options parsed. */
static int convert_main(struct cvopts *c, int first, int argc, char **argv)
{
	struct inputs in;
	int rc = conv_settle(c), r1;

	memset(&in, 0, sizeof(in));
	if (rc)
		return rc;
	/* the operands as given, in order: those before "--", then those after it */
	for (int i = first; i < argc && rc == CLI_EXIT_OK; i++) {
		if (!vec_reserve((void **)&c->ops, &c->cap_ops, c->nr_ops + 1, sizeof(*c->ops)))
			rc = -1;
		else
			c->ops[c->nr_ops++] = argv[i];
	}
	if (rc == CLI_EXIT_OK)
		rc = inputs_collect(&in, (int)c->nr_ops, c->ops);
	if (rc < 0) {
		inputs_release(&in);
		return CLI_EXIT_INPUT;
	}
	r1 = check_run(c, &in);
	if (r1) {
		rc = r1; /* refused before any work: that is the outcome */
	} else {
		r1 = c->merge ? merge_all(c, &in) : convert_all(c, &in);
		/* several inputs: the worst outcome decides */
		if (r1 > rc)
			rc = r1;
	}
	if (c->stats_path && !statsfile_close("conv") && rc < CLI_EXIT_OUTPUT)
		rc = CLI_EXIT_OUTPUT;
	inputs_release(&in);
	return rc;
}

int cmd_convert(int argc, char **argv)
{
	struct cvopts *c = calloc(1, sizeof(*c)); /* big lists: not on the stack */
	struct cli_cmd cmd = { "conv", conv_opts, conv_take, c, true };
	int first, rc;

	if (!c) {
		fprintf(cli_err(), "conv: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	c->top = 10;
	c->object_cache = 1ull << 30;
	c->merge_keys[c->nr_merge_keys++] = "file";
	/* a core to spare reads, decompresses and orders the input while this one converts */
	c->ro.read_ahead = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	first = cli_opts_parse(&cmd, &c->com, argc, argv, &rc);
	if (first >= 0)
		rc = convert_main(c, first, argc, argv);
	free(c->ops);
	free(c);
	return rc;
}
