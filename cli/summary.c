#include "cli/summary.h"

#include "cli/text.h"
#include "core/clock.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "reader/reader.h"
#include "views/top.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- progress on a terminal ---- */

static double now_s(void)
{
	return (double)clock_now_ns() / 1e9;
}

void summary_progress_convert(void *ctx, const struct convert_progress *p)
{
	struct summary_progress *pg = ctx;
	double t = now_s();
	char pre[64], post[128], b1[32], b2[32];

	if (p->phase == CONVERT_READING && pg->shown && t - pg->last < 0.1)
		return;
	pg->last = t;
	pg->shown = true;
	if (p->phase == CONVERT_READING && p->total_bytes != UINT64_MAX && p->total_bytes) {
		double f = (double)p->bytes / (double)p->total_bytes;

		snprintf(post, sizeof(post), "%.0f%% %s of %s, %" PRIu64 " %s", f * 100,
			 cli_size(p->bytes, b1, sizeof(b1)), cli_size(p->total_bytes, b2, sizeof(b2)),
			 p->samples, cli_plural(p->samples, "sample", "samples"));
		cli_progress_line(pg->input, "reading ", f, post);
	} else if (p->phase == CONVERT_READING) {
		snprintf(post, sizeof(post), "%s, %" PRIu64 " %s", cli_size(p->bytes, b1, sizeof(b1)),
			 p->samples, cli_plural(p->samples, "sample", "samples"));
		cli_progress_line(pg->input, "reading ", -1, post);
	} else if (p->phase == CONVERT_SYMBOLIZING) {
		snprintf(pre, sizeof(pre), "symbolizing (%" PRIu64 " %s read)", p->samples,
			 cli_plural(p->samples, "sample", "samples"));
		cli_progress_line(pg->input, pre, -1, "");
	} else {
		cli_progress_line(pg->input, "writing", -1, "");
	}
}

void summary_progress_batch(const struct batch_progress *bp)
{
	char pre[64], post[4200];
	double secs = (double)(clock_now_ns() - bp->t0) / 1e9;

	snprintf(pre, sizeof(pre), "%zu/%zu inputs ", bp->done, bp->total);
	snprintf(post, sizeof(post), "%.1f files/s%s%s", secs > 0 ? (double)bp->done / secs : 0.0,
		 bp->current && bp->done < bp->total ? ", now " : "",
		 bp->current && bp->done < bp->total ? bp->current : "");
	cli_progress_line(NULL, pre, bp->total ? (double)bp->done / (double)bp->total : -1, post);
}

void summary_progress_download(void *ctx, const struct symjob_progress *p)
{
	struct summary_progress *pg = ctx;
	double t = now_s();
	const char *pre;
	char post[256];

	if (!p->done && pg->shown && t - pg->last < 0.1)
		return;
	pg->last = t;
	pg->shown = true;
	/* the summary's own words and counters: the two cannot disagree */
	cli_dfd_progress(&pre, post, sizeof(post), p, pg->offline);
	cli_progress_line(pg->input, pre, -1, post);
}

void summary_progress_clear(struct summary_progress *pg)
{
	if (pg->shown)
		cli_progress_clear();
	pg->shown = false;
}

/* ---- the summary ---- */

/*
 * One summary line being made, then written wrapped: continuation lines
 * are indented under the text after the line's label.
 */
struct line {
	char b[4096];
	size_t len;
	unsigned width;
	unsigned used; /* lines written so far */
	bool count_only; /* lines counted, nothing written */
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->b) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->b + l->len, sizeof(l->b) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->b) - l->len ? (size_t)n : sizeof(l->b) - 1 - l->len;
}

/* Writes the line (indent: its continuations' columns) and starts the next. */
static void put(struct line *l, unsigned indent)
{
	l->used += cli_wrap(l->count_only ? NULL : cli_err(), l->width, indent, l->b);
	l->len = 0;
	l->b[0] = 0;
}

/* The labels' column: "  frames      " */
#define LABEL_COLS 14

uint64_t summary_frames_symbolized(const struct convert_stats *cs)
{
	uint64_t n = cs->frames_jit;

	for (int s = 0; s < SYMSRC__COUNT; s++)
		if (s != SYMSRC_UNRESOLVED)
			n += cs->sym.frames_by_src[s];
	return n;
}

static void put_samples(struct line *l, const struct summary *s)
{
	const struct convert_stats *cs = s->cs;
	const struct prof *p = s->p;
	bool first = true;

	add(l, "%s: %" PRIu64 " %s", s->input, cs->samples, cli_plural(cs->samples, "sample", "samples"));
	/* events without samples (perf's dummy:HG, or filtered out) are not listed as if they had some */
	for (size_t i = 0; i < p->nr_events_desc; i++) {
		/* (off-CPU intervals are no recorded samples: their own line says them) */
		if (!p->events_desc[i].samples || p->events_desc[i].offcpu)
			continue;
		add(l, "%s%s %" PRIu64, first ? " (" : ", ", strtab_get(&p->strs, p->events_desc[i].full_name),
		    p->events_desc[i].samples);
		first = false;
	}
	add(l, "%s in %" PRIu64 " %s, %" PRIu64 " %s", first ? "" : ")", cs->processes,
	    cli_plural(cs->processes, "process", "processes"), cs->threads,
	    cli_plural(cs->threads, "thread", "threads"));
	if (cs->samples_filtered)
		add(l, "; %" PRIu64 " filtered out", cs->samples_filtered);
	add(l, "; %" PRIu64 " lost", cs->lost_samples);
	put(l, 4);
}

static void put_frames(struct line *l, const struct convert_stats *cs)
{
	uint64_t unres = cs->sym.frames_by_src[SYMSRC_UNRESOLVED] + cs->frames_nofile;
	bool first = true;

	add(l, "  frames      %" PRIu64 ": %" PRIu64 " symbolized", cs->frames, summary_frames_symbolized(cs));
	for (int s = 0; s < SYMSRC__COUNT; s++) {
		uint64_t n = s == SYMSRC_JIT ? cs->frames_jit : cs->sym.frames_by_src[s];

		if (s == SYMSRC_UNRESOLVED || !n)
			continue;
		add(l, "%s%s %" PRIu64, first ? " (" : ", ", symjob_src_name((enum symsrc)s), n);
		first = false;
	}
	add(l, "%s, %" PRIu64 " unresolved, %" PRIu64 " unmapped", first ? "" : ")", unres,
	    cs->frames_unmapped);
	put(l, LABEL_COLS);
	if (cs->frames_by_bid[PM_BID_PATH] || cs->frames_by_bid[PM_BID_DISK] ||
	    cs->frames_by_bid[PM_BID_PATH_UNVERIFIED]) {
		uint64_t n = cs->frames_by_bid[PM_BID_PATH] + cs->frames_by_bid[PM_BID_DISK] +
			     cs->frames_by_bid[PM_BID_PATH_UNVERIFIED];
		const char *why = cs->frames_by_bid[PM_BID_DISK] ? "--buildid-from-disk"
				  : cs->frames_by_bid[PM_BID_PATH_UNVERIFIED]
					  ? "this machine; MMAP records name no inode: unverified"
					  : "this machine, same files";

		add(l, "  build-ids   %" PRIu64 " %s of objects with no recorded build-id: read from their "
		    "recorded paths (%s)", n, cli_plural(n, "frame", "frames"), why);
		put(l, LABEL_COLS);
	}
}

static void put_facts(struct line *l, const struct summary *s)
{
	const struct convert_stats *cs = s->cs;
	char dw[512], lbr[256], b[160];

	cli_unwind_words(&cs->unwind, dw, sizeof(dw), lbr, sizeof(lbr));
	if (dw[0]) {
		add(l, "  unwound     %s", dw);
		put(l, LABEL_COLS);
	}
	if (lbr[0]) {
		add(l, "  lbr         %s", lbr);
		put(l, LABEL_COLS);
	}
	if (cs->offcpu.intervals || cs->offcpu.unended) {
		add(l, "  off-cpu     %" PRIu64 " %s, %.3f s off CPU; %" PRIu64 " without an end seen",
		    cs->offcpu.intervals, cli_plural(cs->offcpu.intervals, "interval", "intervals"),
		    (double)cs->offcpu.ns / 1e9, cs->offcpu.unended);
		put(l, LABEL_COLS);
	}
	if (cs->tracepoints.refused || cs->tracepoints.samples_undecoded) {
		add(l, "  tracepoints %" PRIu64 " formats: %" PRIu64 " decoded, %" PRIu64 " refused; %" PRIu64
		    " samples whose fields did not decode (no field labels)",
		    cs->tracepoints.formats, cs->tracepoints.parsed, cs->tracepoints.refused,
		    cs->tracepoints.samples_undecoded);
		put(l, LABEL_COLS);
	}
	if (cs->sym.dfd_fetched || cs->sym.dfd_cache_hits || cs->sym.dfd_not_found ||
	    cs->sym.dfd_errors || cs->sym.dfd_not_asked || cs->sym.dfd_untrusted) {
		cli_dfd_counts(b, sizeof(b), &cs->sym, s->offline);
		add(l, "  debuginfod  %s", b);
		put(l, LABEL_COLS);
	}
	for (size_t i = 0; i < cs->nr_dfd_down; i++) {
		char down[512];

		cli_dfd_down(down, sizeof(down), cs->dfd_down[i].url, cs->dfd_down[i].why,
			     cs->dfd_down[i].skipped);
		add(l, "  debuginfod  %s", down);
		put(l, LABEL_COLS);
	}
}

/* Objects without names the summary lists at most (-v: all), those with 1 % of the frames or more. */
#define MISSING_ROWS 2

/*
 * The objects whose frames have no names, most frames first: each on a
 * line, and the reason after the last of those that share it. Without -v
 * a build-id is cut to its first 16 digits (--stats and -v have it whole).
 */
static void put_missing(struct line *l, const struct summary *s)
{
	const struct convert_stats *cs = s->cs;
	size_t show = 0;

	while (show < cs->nr_missing &&
	       (s->verbose || (show < MISSING_ROWS && 100 * cs->missing[show].frames >= cs->frames)))
		show++;
	/* the first always: the line says that names are missing */
	if (!show && cs->nr_missing)
		show = 1;
	for (size_t i = 0; i < show; i++) {
		const struct convert_missing *m = &cs->missing[i];
		const char *why = m->reason ? m->reason : "";
		const char *next = i + 1 < show && cs->missing[i + 1].reason ? cs->missing[i + 1].reason : NULL;
		bool cut = !s->verbose && strlen(m->build_id) > 16;

		add(l, "  %s %5.1f%% of frames: %s%s%.*s%s)", i ? "          " : "unresolved",
		    cs->frames ? 100.0 * (double)m->frames / (double)cs->frames : 0.0, m->path,
		    m->build_id[0] ? " (build-id " : " (no build-id", cut ? 16 : (int)strlen(m->build_id),
		    m->build_id, cut ? "..." : "");
		put(l, LABEL_COLS + 8);
		if (!next || strcmp(next, why)) {
			add(l, "%*s%s", LABEL_COLS + 6, "", why);
			put(l, LABEL_COLS + 6);
		}
	}
	if (cs->nr_missing > show) {
		add(l, "%*sand %zu more %s (-v lists them)", LABEL_COLS - 1, "", cs->nr_missing - show,
		    cli_plural(cs->nr_missing - show, "object", "objects"));
		put(l, LABEL_COLS);
	}
}

/* "  (inlined: a, b and 3 more)" with at most k names; "" when none. */
static void inlined_words(struct line *l, const struct view_top_ent *e, uint32_t k)
{
	if (!e->nr_inlined)
		return;
	if (!k) {
		add(l, "  (%" PRIu32 " inlined)", e->nr_inlined_all);
		return;
	}
	for (uint32_t i = 0; i < k && i < e->nr_inlined; i++)
		add(l, "%s%s", i ? ", " : "  (inlined: ", e->inlined[i]);
	if (e->nr_inlined_all > k)
		add(l, " and %" PRIu32 " more", e->nr_inlined_all - k);
	add(l, ")");
}

/* Columns of a UTF-8 string. */
static size_t text_cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Rows of the value column: "    30.15%       725" or, for time, "    41.20%   1.234 s". */
static void put_top_row(struct line *l, const struct view_top *t, const struct view_top_ent *e,
			int64_t v, bool ns)
{
	size_t start;
	uint32_t k = e->nr_inlined < 3 ? e->nr_inlined : 3;

	if (ns)
		add(l, "     %6.2f%% %9.3f s  %s", t->all ? 100.0 * (double)v / (double)t->all : 0.0,
		    (double)v / 1e9, e->name);
	else
		add(l, "     %6.2f%% %9" PRId64 "  %s", t->all ? 100.0 * (double)v / (double)t->all : 0.0,
		    v, e->name);
	start = l->len;
	/* the names inlined: as many as fit on the row (a long name wraps on its own) */
	for (;;) {
		inlined_words(l, e, k);
		if (!k || !l->width || text_cols(l->b) <= l->width)
			break;
		l->len = start;
		l->b[start] = 0;
		k--;
	}
	put(l, ns ? 28 : 26);
}

/* One kind's top functions: by self value, then by total (labels: "top", "off-CPU"). */
static void put_top(struct line *l, const struct view_top *t, const char *label, const char *what,
		    bool ns, size_t rows)
{
	for (int by_total = 0; by_total < 2; by_total++) {
		const struct view_top_ent *e = by_total ? t->by_total : t->by_self;
		size_t n = by_total ? t->nr_total : t->nr_self;

		if (n > rows)
			n = rows;
		for (size_t i = 0; i < n; i++) {
			if (!i) {
				int pad = (int)(LABEL_COLS - 3 - strlen(label));

				add(l, "  %s %-*s%s", label, by_total ? 0 : pad < 5 ? 5 : pad,
				    by_total ? "total" : "self", by_total ? "" : what);
				put(l, LABEL_COLS);
			}
			put_top_row(l, t, &e[i], by_total ? e[i].total : e[i].self, ns);
		}
	}
}

static void put_tops(struct line *l, const struct summary *s, size_t rows)
{
	char what[512];

	if (s->top) {
		snprintf(what, sizeof(what), "(%s samples, of %" PRId64 ")", s->top_event, s->top->all);
		put_top(l, s->top, "top", what, false, rows);
	}
	if (s->off_top && s->off_top->all) {
		/*
		 * the self of time off CPU is where the thread waited in its own
		 * code: every switched-out stack's leaf is the scheduler
		 */
		snprintf(what, sizeof(what), "(off-CPU time, of %.3f s; self: the innermost function "
			 "outside the kernel)", (double)s->off_top->all / 1e9);
		put_top(l, s->off_top, "off-CPU", what, true, rows);
	}
}

static void put_wrote(struct line *l, const struct summary *s)
{
	char b[32];

	for (size_t i = 0; i < s->nr_wrote; i++) {
		const struct summary_wrote *w = &s->wrote[i];

		add(l, "  %s %s (%s)", i ? "           " : "wrote      ", w->path, cli_size(w->bytes, b, sizeof(b)));
		if (!strcmp(w->format, "pprof"))
			add(l, "   go tool pprof -http=: %s", w->path);
		else if (!strcmp(w->format, "jfr"))
			/* jfr print cuts stacks at 5 frames by default */
			add(l, "   jfr print --stack-depth 64 %s, or JDK Mission Control", w->path);
		else if (!strcmp(w->format, "folded"))
			add(l, "   flamegraph.pl, inferno or speedscope read it");
		else
			add(l, "   open it in a web browser");
		put(l, LABEL_COLS + 2);
	}
}

/*
 * Rows each top list shows: --top N with -v; else up to SUMMARY_TOP_ROWS,
 * fewer (down to SUMMARY_MIN_ROWS) when the lines above them and the list
 * of outputs leave less than that of SUMMARY_LINES.
 */
static size_t top_rows(const struct summary *s, unsigned used, unsigned wrote)
{
	unsigned lists = 2 * ((s->top != NULL) + (s->off_top && s->off_top->all)), room, rows;

	if (s->verbose || !lists)
		return s->top_rows;
	room = used + wrote < SUMMARY_LINES ? SUMMARY_LINES - used - wrote : 0;
	rows = room / lists > 1 ? room / lists - 1 : 0; /* each list has a heading */
	rows = rows > SUMMARY_TOP_ROWS ? SUMMARY_TOP_ROWS : rows < SUMMARY_MIN_ROWS ? SUMMARY_MIN_ROWS : rows;
	return rows < s->top_rows ? rows : s->top_rows;
}

void summary_print(const struct summary *s)
{
	struct line *lp = calloc(1, sizeof(*lp)); /* 4 KiB: not on the stack */
	unsigned wrote;

	if (!lp)
		return; /* the outputs are written: only their summary is missing */
	lp->width = cli_wrap_width(STDERR_FILENO);
	/* the outputs' lines, counted first: the top lists make room for them */
	lp->count_only = true;
	put_wrote(lp, s);
	wrote = lp->used;
	lp->used = 0;
	lp->count_only = false;
	put_samples(lp, s);
	put_frames(lp, s->cs);
	put_facts(lp, s);
	put_missing(lp, s);
	if (rdr_problem_count(s->r)) {
		add(lp, "  problems    %zu %s (warnings above)", rdr_problem_count(s->r),
		    cli_plural(rdr_problem_count(s->r), "kind", "kinds"));
		put(lp, LABEL_COLS);
	}
	if (s->verbose) {
		add(lp, "  time        read %.3f s, symbolize %.3f s, model %.3f s (partly beside it), write %.3f s",
		    (double)s->cs->ns_read / 1e9, (double)s->cs->ns_symbolize / 1e9,
		    (double)s->cs->ns_model / 1e9, (double)s->write_ns / 1e9);
		put(lp, LABEL_COLS);
	}
	put_tops(lp, s, top_rows(s, lp->used, wrote));
	/* last: the prompt follows it, so it does not scroll away */
	put_wrote(lp, s);
	free(lp);
}
