/*
 * conv diff [OPTIONS] BASE NEW: what changed between two recordings. Each
 * is converted as conv converts it (convert_run), both with one object
 * table, so that the two are symbolized from the same objects and a
 * function has one name on both sides; or read back from the pprof or JFR
 * conv wrote of it (ppload_prof, jfrload_prof). They are compared by the names of
 * their frames, never by address (addresses differ between runs): a text
 * report on standard output (views/diff.h), a folded file with both counts
 * per stack and a pprof of NEW minus BASE.
 */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/outfile.h"
#include "cli/outputs.h"
#include "cli/paths.h"
#include "cli/statsfile.h"
#include "cli/text.h"

#include "core/dbuf.h"
#include "core/json.h"
#include "core/ropen.h"
#include "jfredit/jfredit.h"
#include "model/merge.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pipeline/jfrload.h"
#include "pipeline/objtab.h"
#include "pipeline/ppload.h"
#include "pprofedit/pprofedit.h"
#include "reader/reader.h"
#include "views/diff.h"
#include "views/tree.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F_BIT(k) (1u << (k))
/* the outputs conv diff writes */
#define DIFF_FORMATS (F_BIT(OUT_PPROF) | F_BIT(OUT_FOLDED) | F_BIT(OUT_HTML))

/*
 * The tree's columns: each side's count and period sum of the compared
 * event; NEW's count first, the page's first view (the page shows the
 * tree's first columns).
 */
enum { COL_NEW, COL_BASE, COL_BASE_PERIOD, COL_NEW_PERIOD, NR_COLS };

struct dfopts {
	struct convert_opts co;
	struct cli_common com;
	const char *out;        /* -o BASE or DIR/ */
	unsigned formats;       /* F_BIT(OUT_*) */
	const char *stats_path; /* --stats: NULL none, "-" stdout */
	bool json;              /* the report as JSON on stdout */
	bool counts;            /* --normalize counts */
	bool fail;              /* --fail-above given */
	double fail_above;      /* its share points */
	double z;               /* --noise-z */
	unsigned top;           /* the report's lines */
	struct rdr_opts ro;
};

/* Recordings a side takes at most (BASE or NEW: a list joined by ','). */
#define SIDE_MAX_INPUTS 64

/* One side of the comparison: a recording, or several merged as conv --merge merges them. */
struct side {
	const char *in; /* as given: one path, or several joined by ',' */
	char *list;     /* in, split (malloc'd) when it names several */
	const char *paths[SIDE_MAX_INPUTS];
	size_t nr_paths;
	struct prof p;
	uint64_t samples; /* kept, over its recordings */
	bool ready;       /* p to release */
	bool lost;        /* a recording had problems (--strict) */
	bool jfr;         /* an input is a JFR: its frames are not grouped by inlining */
	uint32_t event;   /* the compared event (view_main_event) */
};

static void usage(FILE *f)
{
	fputs("usage: conv diff [OPTIONS] BASE NEW   (perf.data recordings, or pprofs or JFRs\n"
	      "       conv wrote; each may be several joined by ',': merged as --merge does)\n"
	      "What changed from BASE to NEW: functions whose share of the samples moved most,\n"
	      "on stdout; BASE-vs-NEW.html (a differential flame graph), .folded ('stack BASE\n"
	      "NEW') and .pb.gz (NEW minus BASE, as go tool pprof -diff_base builds it).\n"
	      "Frames are compared by name.\n"
	      " -o, --output BASE|DIR/  base name of the outputs, or a directory\n"
	      " -F, --format LIST       html,folded,pprof (default all three)\n"
	      "     --top N             functions in the report (default 10)\n"
	      "     --normalize shares|counts  shares of each side's samples (default), or\n"
	      "                         counts as they are (same event and period only)\n"
	      "     --noise-z Z         noise bound: Z binomial standard errors (default 4)\n"
	      "     --fail-above PCT    exit 5 when a function's share grew by more than PCT\n"
	      "                         points beyond the noise bound\n"
	      "     --json              the report as JSON    --stats[=FILE]  JSON to FILE\n",
	      f);
	fputs(cli_common_help, f);
	fputs(" -h, --help\n"
	      "Exit: 0 ok, 1 usage, 2 input unreadable or the two not comparable, 4 output not\n"
	      "written, 5 --fail-above exceeded. See conv(1).\n",
	      f);
}

enum { O_STATS = 256, O_JSON, O_FAIL_ABOVE, O_NORMALIZE, O_TOP, O_Z };

static const struct cli_opt diff_opts[] = {
	{"output", required_argument, 'o'},
	{"format", required_argument, 'F'},
	{"stats", optional_argument, O_STATS},
	{"json", no_argument, O_JSON},
	{"fail-above", required_argument, O_FAIL_ABOVE},
	{"normalize", required_argument, O_NORMALIZE},
	{"noise-z", required_argument, O_Z},
	{"top", required_argument, O_TOP},
	{"help", no_argument, 'h'},
	{NULL, 0, 0},
};

static bool take_formats(struct dfopts *c, const char *arg)
{
	char buf[256];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	c->formats = 0;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k = !strcmp(w, "pprof") ? OUT_PPROF : !strcmp(w, "folded") ? OUT_FOLDED
			: !strcmp(w, "html") ? OUT_HTML : -1;

		if (k < 0) {
			fprintf(stderr, "conv diff: -F: unknown format '%s' (html, folded, pprof)\n", w);
			return false;
		}
		c->formats |= F_BIT(k);
	}
	if (!c->formats)
		fprintf(stderr, "conv diff: -F: no format given (html, folded, pprof)\n");
	return c->formats != 0;
}

/* A number >= 0 (and, unless zero_ok, above 0) for option opt; false (said) otherwise. */
static bool take_number(const char *opt, const char *arg, bool zero_ok, double *v)
{
	char *end;

	*v = strtod(arg, &end);
	if (end == arg || *end || !isfinite(*v) || *v < 0 || (!zero_ok && *v == 0)) {
		fprintf(stderr, "conv diff: %s: expected a number%s, got '%s'\n", opt,
			zero_ok ? " of 0 or more" : " above 0", arg);
		return false;
	}
	return true;
}

static enum cli_take diff_take(void *ctx, int id, char *arg, int argc, char **argv)
{
	struct dfopts *c = ctx;
	bool ok = true;
	double v;

	switch (id) {
	case 'o':
		c->out = cli_out_arg("conv diff", arg);
		ok = c->out != NULL;
		break;
	case 'F':
		ok = take_formats(c, arg);
		break;
	case O_STATS:
		c->stats_path = cli_stats_path("conv diff", arg, argc, argv);
		ok = c->stats_path != NULL;
		break;
	case O_JSON:
		c->json = true;
		break;
	case O_FAIL_ABOVE:
		ok = take_number("--fail-above", arg, true, &c->fail_above);
		c->fail = ok;
		break;
	case O_Z:
		ok = take_number("--noise-z", arg, false, &c->z);
		break;
	case O_TOP:
		ok = take_number("--top", arg, false, &v) && v <= 100000 && v == floor(v);
		if (ok)
			c->top = (unsigned)v;
		else
			fprintf(stderr, "conv diff: --top: expected a whole number from 1 to 100000\n");
		break;
	case O_NORMALIZE:
		if (!strcmp(arg, "shares") || !strcmp(arg, "counts")) {
			c->counts = !strcmp(arg, "counts");
		} else {
			fprintf(stderr, "conv diff: --normalize: expected shares or counts, got '%s'\n", arg);
			ok = false;
		}
		break;
	case 'h':
		usage(stdout);
		return CLI_TAKE_DONE;
	default:
		ok = false;
	}
	return ok ? CLI_TAKE_OK : CLI_TAKE_USAGE;
}

/*
 * A side's part of the default name: its first recording's file name
 * without its directory and .data, "+N" for N more.
 */
static void side_stem(const struct side *sd, char *buf, size_t n)
{
	const char *in = sd->paths[0], *s = strrchr(in, '/');
	size_t len;

	snprintf(buf, n, "%s", s && s[1] ? s + 1 : in);
	len = strlen(buf);
	if (len > 5 && !strcmp(buf + len - 5, ".data"))
		buf[len - 5] = 0;
	if (sd->nr_paths > 1)
		snprintf(buf + strlen(buf), n - strlen(buf), "+%zu", sd->nr_paths - 1);
}

/*
 * A side's recordings from its operand: the path itself when a file is
 * there (a name may hold a ','), else the ','-separated paths. False (said)
 * when there are too many or an empty one.
 */
static bool side_split(struct side *s)
{
	char *save = NULL;

	if (!strchr(s->in, ',') || access(s->in, F_OK) == 0) {
		s->paths[s->nr_paths++] = s->in;
		return true;
	}
	s->list = strdup(s->in);
	if (!s->list) {
		fprintf(stderr, "conv diff: out of memory\n");
		return false;
	}
	for (char *w = strtok_r(s->list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (s->nr_paths == SIDE_MAX_INPUTS) {
			fprintf(stderr, "conv diff: %s: more than %d recordings on one side\n", s->in, SIDE_MAX_INPUTS);
			return false;
		}
		s->paths[s->nr_paths++] = w;
	}
	return s->nr_paths > 0;
}

/* A pprof or JFR a side takes, read at most (a gzipped pprof inflates to at most PPE_INFLATE_RATIO times its size). */
#define MAX_WRITTEN ((size_t)1 << 30)
#define MAX_INFLATED ((size_t)4 << 30)

/* What an input is, from its first bytes: a perf.data unless it starts as a pprof (gzip) or a JFR does. */
enum diff_input { DIFF_PERF, DIFF_PPROF, DIFF_JFR };

static enum diff_input input_kind(const char *path)
{
	unsigned char head[4] = { 0 };
	int fd = ropen_regular(path, false);
	ssize_t n = fd >= 0 ? pread(fd, head, sizeof(head), 0) : -1;

	if (fd >= 0)
		close(fd);
	if (n == 4 && !memcmp(head, "FLR", 4))
		return DIFF_JFR;
	if (n >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8)
		return DIFF_PPROF;
	return DIFF_PERF; /* the reader says what is wrong with anything else */
}

/* A mapped pprof or JFR into p (kind: which it is). Errors: the parser's and the loader's. */
static enum conv_err load_written(enum diff_input kind, const struct cli_mapped *m, struct prof *p,
				  struct conv_diag *diag)
{
	struct ppe_profile pp;
	struct jfe_file f;
	enum conv_err err;

	if (kind == DIFF_PPROF) {
		err = ppe_parse(&pp, m->data, m->len, MAX_INFLATED, diag);
		if (!err) {
			err = ppload_prof(&pp, p, diag);
			ppe_release(&pp);
		}
		return err;
	}
	err = jfe_parse(&f, m->data, m->len, diag);
	if (!err) {
		err = jfrload_prof(&f, p, diag);
		jfe_release(&f);
	}
	return err;
}

/*
 * A pprof or JFR (one conv wrote, or another program's) into p, as it was
 * written: its names are not looked up again. The exit code (said).
 */
static int side_load_written(struct side *s, const char *in, enum diff_input kind, struct prof *p)
{
	const char *what = kind == DIFF_PPROF ? "pprof profile" : "JFR recording";
	const char *of = kind == DIFF_PPROF ? " of its protobuf" : ""; /* a pprof's offsets are its inflated bytes' */
	struct cli_mapped m;
	struct conv_diag diag;
	enum conv_err err;
	int rc = cli_map_file("conv diff", in, MAX_WRITTEN, &m);

	if (rc)
		return rc;
	memset(&diag, 0, sizeof(diag));
	err = load_written(kind, &m, p, &diag);
	cli_unmap_file(&m);
	if (err) {
		if (diag.offset != UINT64_MAX && diag.msg[0])
			fprintf(stderr, "conv diff: %s: not a %s conv diff can read: %s at offset %" PRIu64 "%s: %s\n",
				in, what, conv_strerror(err), diag.offset, of, diag.msg);
		else
			fprintf(stderr, "conv diff: %s: not a %s conv diff can read: %s%s%s\n", in, what,
				conv_strerror(err), diag.msg[0] ? ": " : "", diag.msg);
		return CLI_EXIT_INPUT;
	}
	for (size_t i = 0; i < p->nr_events_desc; i++)
		s->samples += p->events_desc[i].samples;
	return CLI_EXIT_OK;
}

/* Converts one recording into p (made by prof_init), or reads the pprof or JFR it is. The exit code (said). */
static int side_convert(struct dfopts *c, struct side *s, const char *in, struct prof *p)
{
	struct convert_stats cs;
	struct conv_diag diag;
	struct rdr *r = NULL;
	enum diff_input kind;
	enum conv_err err;
	int rc;

	if (!strcmp(in, "-")) {
		fprintf(stderr, "conv diff: the recordings are files: standard input is not taken\n");
		return CLI_EXIT_USAGE;
	}
	kind = input_kind(in);
	if (kind != DIFF_PERF) {
		s->jfr = s->jfr || kind == DIFF_JFR;
		return side_load_written(s, in, kind, p);
	}
	rc = cli_open_input(in, &c->ro, &r);
	if (rc)
		return rc;
	memset(&diag, 0, sizeof(diag));
	memset(&cs, 0, sizeof(cs));
	err = convert_run(r, &c->co, p, &cs, &diag);
	if (err) {
		fprintf(stderr, "conv diff: %s: %s%s%s\n", in, conv_strerror(err), diag.msg[0] ? ": " : "",
			diag.msg);
		rc = CLI_EXIT_INPUT;
	}
	s->samples += cs.samples;
	s->lost = s->lost || rdr_problem_count(r) || rdr_stats(r)->stopped;
	convert_stats_release(&cs);
	rdr_close(r);
	return rc;
}

/*
 * Reads and converts one side (said when it cannot): its recordings each
 * converted, then merged as conv --merge merges them (prof_merge, samples
 * labelled file=PATH) when there are several. The exit code.
 */
static int side_read(struct dfopts *c, struct side *s)
{
	int rc = CLI_EXIT_OK;

	prof_init(&s->p);
	s->ready = true;
	if (s->nr_paths == 1)
		rc = side_convert(c, s, s->paths[0], &s->p);
	for (size_t i = 0; s->nr_paths > 1 && !rc && i < s->nr_paths; i++) {
		struct prof one;
		struct prof_merge_label lb = { "file", s->paths[i] };
		struct prof_merge_opts mo;
		struct conv_diag diag;

		prof_init(&one);
		rc = side_convert(c, s, s->paths[i], &one);
		memset(&mo, 0, sizeof(mo));
		mo.labels = &lb;
		mo.nr_labels = 1;
		mo.name = s->paths[i];
		memset(&diag, 0, sizeof(diag));
		if (!rc && prof_merge(&s->p, &one, &mo, &diag)) {
			fprintf(stderr, "conv diff: %s: cannot merge it: %s\n", s->paths[i],
				diag.msg[0] ? diag.msg : "out of memory");
			rc = CLI_EXIT_INPUT;
		}
		prof_release(&one);
	}
	if (rc)
		return rc;
	s->event = view_main_event(&s->p);
	if (s->event == PROF_NONE || s->p.events_desc[s->event].offcpu) {
		fprintf(stderr, "conv diff: %s: no samples to compare\n", s->in);
		return CLI_EXIT_INPUT;
	}
	return CLI_EXIT_OK;
}

/* Whether a side's input had problems (corrupt records skipped, a truncated file): --strict's exit 3. */
static bool side_lost(const struct side *s)
{
	return s->lost;
}

static const char *side_str(const struct side *s, uint32_t id)
{
	return strtab_get(&s->p.strs, id);
}

/*
 * Whether the two sides can be compared: recorded on the same architecture
 * (said first: the events' names may differ too), the same event, and for
 * counts the same period or frequency. False (said, one line) when not.
 */
static bool sides_comparable(const struct dfopts *c, const struct side *b, const struct side *n)
{
	const struct prof_event_desc *eb = &b->p.events_desc[b->event], *en = &n->p.events_desc[n->event];
	const char *ab = side_str(b, b->p.sys.arch), *an = side_str(n, n->p.sys.arch);

	if (*ab && *an && strcmp(ab, an)) {
		fprintf(stderr, "conv diff: %s was recorded on %s, %s on %s: different architectures' code cannot "
				"be compared\n",
			b->in, ab, n->in, an);
		return false;
	}
	if (strcmp(side_str(b, eb->name), side_str(n, en->name))) {
		fprintf(stderr, "conv diff: %s sampled %s, %s sampled %s: different events cannot be compared\n",
			b->in, side_str(b, eb->full_name), n->in, side_str(n, en->full_name));
		return false;
	}
	if (c->counts && !((eb->period && eb->period == en->period) ||
			   (eb->frequency && eb->frequency == en->frequency))) {
		fprintf(stderr, "conv diff: --normalize counts: %s and %s were not sampled at one period or "
				"frequency: compare shares\n",
			b->in, n->in);
		return false;
	}
	return true;
}

/* How the report says the two were compared. */
static void say_method(const struct dfopts *c, const struct side *b, char *buf, size_t n)
{
	const struct prof_event_desc *e = &b->p.events_desc[b->event];

	if (!c->counts)
		snprintf(buf, n, "shares of each side's samples");
	else if (e->period)
		snprintf(buf, n, "sample counts (both: %s, period %" PRIu64 ")", side_str(b, e->full_name),
			 e->period);
	else
		snprintf(buf, n, "sample counts (both: %s, %" PRIu64 " Hz)", side_str(b, e->full_name),
			 e->frequency);
}

/* A share or a count as the report prints it: "12.3%" or "1234". */
static const char *fmt_value(bool counts, double v, char *buf, size_t n)
{
	if (counts)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.1f%%", 100 * v);
	return buf;
}

/* A change and its bound: "+35.2" "±3.1" (points, or samples). */
static const char *fmt_change(bool counts, double v, char *buf, size_t n, bool bound)
{
	double x = counts ? v : 100 * v;

	if (bound)
		snprintf(buf, n, "±%.*f", counts ? 0 : 1, x);
	else
		snprintf(buf, n, "%+.*f", counts ? 0 : 1, x);
	return buf;
}

/* PCT points (of BASE's samples when counts) in the units of a change. */
static double fail_units(const struct dfopts *c, const struct view_diff *d)
{
	return c->counts ? c->fail_above / 100 * (double)d->base_all : c->fail_above / 100;
}

/* The report's entries: those that moved at all, at most --top (in view_diff's order). */
static size_t report_count(const struct dfopts *c, const struct view_diff *d)
{
	size_t n = 0;

	while (n < d->nr && n < c->top && d->ents[n].sig > 0)
		n++;
	return n;
}

/* s right-aligned in width columns: a UTF-8 sequence (the bound's "±") takes one. */
static void put_col(const char *s, int width)
{
	int cols = 0;

	for (const char *p = s; *p; p++)
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	printf("%*s%s", width > cols ? width - cols : 0, "", s);
}

/* One side's four columns (self or total) of a report line. */
static void put_share(const struct dfopts *c, const struct view_diff_share *s)
{
	char v[32];

	put_col(fmt_value(c->counts, s->base_v, v, sizeof(v)), 7);
	put_col(fmt_value(c->counts, s->new_v, v, sizeof(v)), 7);
	put_col(fmt_change(c->counts, s->change, v, sizeof(v), false), 7);
	put_col(fmt_change(c->counts, s->noise, v, sizeof(v), true), 7);
}

/*
 * The numbers first and the name last, as conv's summary and pprof -top put
 * them: the columns fit an 80-column terminal whatever the names' lengths.
 */
static void report_text(const struct dfopts *c, const struct side *b, const struct side *n,
			const struct view_diff *d, const char *const *written, size_t nr_written)
{
	char method[256];
	size_t shown = report_count(c, d), beyond = 0;
	const char *unit = c->counts ? "samples" : "points";

	for (size_t i = 0; i < d->nr; i++)
		beyond += d->ents[i].moved != 0;
	say_method(c, b, method, sizeof(method));
	printf("conv diff: BASE %s: %" PRId64 " samples of %s\n", b->in, d->base_all,
	       side_str(b, b->p.events_desc[b->event].full_name));
	printf("           NEW  %s: %" PRId64 " samples\n", n->in, d->new_all);
	printf("compared: %s\n", method);
	printf("noise bound: %g standard errors (%s)\n", d->z,
	       c->counts ? "Poisson" : "binomial, of the difference of two shares");
	if (!shown) {
		printf("nothing moved\n");
	} else {
		printf("%16s%29s\n", "self", "total");
		printf("%7s%7s%7s%7s %7s%7s%7s%7s    %s\n", "base", "new", "change", "noise", "base", "new",
		       "change", "noise", "function");
	}
	for (size_t i = 0; i < shown; i++) {
		const struct view_diff_ent *e = &d->ents[i];

		put_share(c, &e->self);
		putchar(' ');
		put_share(c, &e->total);
		printf("  %s %s\n", e->moved ? "*" : " ", e->name);
	}
	if (beyond)
		printf("%zu %s moved beyond the noise bound (*); change and noise in %s\n", beyond,
		       cli_plural(beyond, "function", "functions"), unit);
	else
		printf("nothing moved beyond the noise bound\n");
	for (size_t i = 0; i < nr_written; i++)
		printf("wrote %s\n", written[i]);
}

static void json_share(struct json *j, const char *key, const struct view_diff_share *s)
{
	json_key(j, key);
	json_obj_begin(j);
	json_key(j, "base");
	json_i64(j, s->base);
	json_key(j, "new");
	json_i64(j, s->new);
	json_key(j, "base_value");
	json_f64(j, s->base_v);
	json_key(j, "new_value");
	json_f64(j, s->new_v);
	json_key(j, "change");
	json_f64(j, s->change);
	json_key(j, "noise");
	json_f64(j, s->noise);
	json_key(j, "sig");
	json_f64(j, s->sig);
	json_obj_end(j);
}

/* The report's members (after "input" and "exit_code" when a --stats record). */
static void report_json(struct json *j, const struct dfopts *c, const struct side *b, const struct side *n,
			const struct view_diff *d, const struct written *w)
{
	size_t shown = report_count(c, d);

	json_kv_str(j, "base", b->in);
	json_kv_str(j, "new", n->in);
	json_kv_str(j, "event", side_str(b, b->p.events_desc[b->event].full_name));
	json_kv_str(j, "normalized", c->counts ? "counts" : "shares");
	json_key(j, "z");
	json_f64(j, d->z);
	json_kv_u64(j, "base_samples", (uint64_t)d->base_all);
	json_kv_u64(j, "new_samples", (uint64_t)d->new_all);
	json_key(j, "functions");
	json_arr_begin(j);
	for (size_t i = 0; i < shown; i++) {
		json_obj_begin(j);
		json_kv_str(j, "name", d->ents[i].name);
		json_share(j, "self", &d->ents[i].self);
		json_share(j, "total", &d->ents[i].total);
		json_key(j, "beyond_noise");
		json_bool(j, d->ents[i].moved != 0);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "outputs");
	json_arr_begin(j);
	for (int k = 0; k < OUT__COUNT; k++)
		if (w->path[k])
			cli_output_json(j, out_descs[k].format, w->path[k], w->bytes[k]);
	json_arr_end(j);
}

/* The differential flame graph: NEW's tree and BASE's, each with the other's values. */
static bool diff_page(const struct dfopts *c, const struct side *b, const struct side *n,
		      const struct view_tree *t, const char *path, struct written *w)
{
	static const size_t other[2] = { COL_BASE, COL_NEW };
	static const char *const names[2] = { "NEW with changes", "BASE with changes" };
	static const char *const units[2] = { "samples", "samples" };
	struct view_html_opts ho;
	struct out_src src;
	struct out_job j;
	char title[600], sub[600];

	snprintf(title, sizeof(title), "%.280s \xe2\x86\x92 %.280s", b->in, n->in);
	snprintf(sub, sizeof(sub), "conv diff: %" PRIu64 " samples of %.200s in BASE, %" PRIu64
		 " in NEW; coloured by the change of each frame's share; conv %s",
		 b->samples, side_str(b, b->p.events_desc[b->event].full_name), n->samples,
		 CONV_VERSION_STRING);
	memset(&ho, 0, sizeof(ho));
	ho.title = title;
	ho.subtitle = sub;
	ho.nr_views = 2;
	ho.col_names = names;
	ho.col_units = units;
	ho.other_cols = other;
	ho.new_view = COL_NEW;
	ho.noise_z = c->z;
	ho.diff_counts = c->counts;
	memset(&src, 0, sizeof(src));
	src.t = t;
	src.ho = &ho;
	out_job_init(&j, OUT_HTML, path, &src);
	return out_write(&j, w);
}

/* The page, the folded file and the difference profile asked for, listed in w. The exit code. */
static int diff_outputs(const struct dfopts *c, const struct side *b, const struct side *n,
			const struct view_tree *t, const char *const path[OUT__COUNT], struct written *w)
{
	static const size_t folded_cols[2] = { COL_BASE, COL_NEW };
	struct view_diff_type types[2];
	struct out_src src;
	struct out_job j;
	struct prof dp;
	enum conv_err err;
	int rc = CLI_EXIT_OK;

	if (path[OUT_HTML] && !diff_page(c, b, n, t, path[OUT_HTML], w))
		rc = CLI_EXIT_OUTPUT;
	memset(&src, 0, sizeof(src));
	src.t = t;
	src.folded_cols = folded_cols;
	src.nr_folded_cols = 2;
	if (path[OUT_FOLDED]) {
		out_job_init(&j, OUT_FOLDED, path[OUT_FOLDED], &src);
		if (!out_write(&j, w))
			rc = CLI_EXIT_OUTPUT;
	}
	if (!path[OUT_PPROF])
		return rc;
	/* the compared event's value types, as NEW's pprof names them */
	for (size_t i = 0; i < 2; i++) {
		const struct prof_value_type *vt = &n->p.types[2 * (size_t)n->event + i];

		types[i].type = side_str(n, vt->type);
		types[i].unit = side_str(n, vt->unit);
		types[i].base_col = i ? COL_BASE_PERIOD : COL_BASE;
		types[i].new_col = i ? COL_NEW_PERIOD : COL_NEW;
	}
	prof_init(&dp);
	err = view_diff_model(&dp, t, types, 2);
	if (err) {
		fprintf(stderr, "conv diff: cannot build the difference profile: %s\n", conv_strerror(err));
		rc = CLI_EXIT_OUTPUT;
	} else {
		src.p = &dp;
		out_job_init(&j, OUT_PPROF, path[OUT_PPROF], &src);
		if (!out_write(&j, w))
			rc = CLI_EXIT_OUTPUT;
	}
	prof_release(&dp);
	return rc;
}

/* Whether a function grew by more than --fail-above beyond its noise bound. */
static bool diff_grew(const struct dfopts *c, const struct view_diff *d)
{
	for (size_t i = 0; c->fail && i < d->nr; i++)
		if (view_diff_growth(&d->ents[i]) > fail_units(c, d))
			return true;
	return false;
}

/* The report (text or --json on stdout) and the --stats record. */
static void diff_report(const struct dfopts *c, const struct side *b, const struct side *n,
			const struct view_diff *d, const struct written *w, int rc)
{
	const char *written[OUT__COUNT];
	size_t nr_written = 0;
	struct dbuf out;
	struct json j;

	for (int k = 0; k < OUT__COUNT; k++)
		if (w->path[k])
			written[nr_written++] = w->path[k];
	if (c->json) {
		dbuf_init(&out, 0);
		json_init(&j, &out, true);
		json_obj_begin(&j);
		json_kv_u64(&j, "exit_code", (uint64_t)rc);
		report_json(&j, c, b, n, d, w);
		json_obj_end(&j);
		dbuf_putc(&out, '\n');
		if (!out.err)
			fwrite(out.data, 1, out.len, stdout);
		dbuf_release(&out);
	} else if (!c->com.quiet) {
		report_text(c, b, n, d, written, nr_written);
	}
	if (c->stats_path) {
		statsfile_record_begin(&j, &out, n->in, rc);
		report_json(&j, c, b, n, d, w);
		statsfile_record_end(&j, &out);
	}
}

/*
 * What cli/paths.h refuses (said, usage error): an output that is one of
 * the inputs (a pprof input and -o naming it), two outputs that are one
 * file, an output over a recording. The exit code.
 */
static int diff_check_paths(const struct dfopts *c, const struct side *b, const struct side *n,
			    const char *const path[OUT__COUNT])
{
	struct cli_paths ps = { 0 };
	char *inputs[2 * SIDE_MAX_INPUTS];
	size_t nr = 0;

	for (size_t k = 0; k < b->nr_paths; k++)
		inputs[nr++] = (char *)b->paths[k];
	for (size_t k = 0; k < n->nr_paths; k++)
		inputs[nr++] = (char *)n->paths[k];
	for (size_t i = 0; i < nr; i++)
		cli_paths_add(&ps, inputs[i], -1, false, "the input", i);
	for (int k = 0; k < OUT__COUNT; k++)
		if (path[k])
			cli_paths_add(&ps, path[k], -1, true, out_descs[k].what, SIZE_MAX);
	if (c->stats_path)
		cli_paths_add(&ps, c->stats_path, strcmp(c->stats_path, "-") ? -1 : STDOUT_FILENO, true,
			      "the --stats file", SIZE_MAX);
	return cli_paths_check(&ps, "conv diff", inputs);
}

/* The outputs' paths (path[k] NULL: not written); the exit code of an output that cannot be made. */
static int diff_paths(const struct dfopts *c, const struct side *b, const struct side *n,
		      char bufs[OUT__COUNT][4096], const char *path[OUT__COUNT])
{
	char sb[1024], sn[1024], name[2100];
	int rc = CLI_EXIT_OK;

	/* -o DIR/ is made when missing, as conv makes it */
	rc = cli_out_dir("conv diff", c->out, 1, true);
	if (rc)
		return rc;
	side_stem(b, sb, sizeof(sb));
	side_stem(n, sn, sizeof(sn));
	/* the default name says which two inputs */
	snprintf(name, sizeof(name), "%s-vs-%s", sb, sn);
	out_paths(c->out, name, bufs);
	for (int k = 0; k < OUT__COUNT; k++)
		path[k] = c->formats & F_BIT(k) ? bufs[k] : NULL;
	rc = diff_check_paths(c, b, n, path);
	for (int k = 0; !rc && k < OUT__COUNT; k++) {
		if (path[k] && cli_out_check(path[k])) {
			cli_out_say("conv diff", path[k], out_descs[k].what, strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		}
	}
	return rc;
}

/* Both sides read, compared, written and reported. The exit code. */
static int diff_run(struct dfopts *c, struct side *b, struct side *n)
{
	char bufs[OUT__COUNT][4096];
	const char *path[OUT__COUNT];
	struct view_col cols[NR_COLS];
	struct view_tree t;
	struct view_diff d;
	struct written w;
	enum conv_err err;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = diff_paths(c, b, n, bufs, path);
	if (!rc)
		rc = side_read(c, b);
	if (!rc)
		rc = side_read(c, n);
	if (!rc && !sides_comparable(c, b, n))
		rc = CLI_EXIT_INPUT;
	if (!rc && (b->jfr || n->jfr) && !(prof_split_inlines(&b->p) && prof_split_inlines(&n->p))) {
		fprintf(stderr, "conv diff: out of memory\n");
		rc = CLI_EXIT_INPUT;
	}
	if (rc)
		return rc;
	err = view_diff_build(&d, &b->p, 2 * (size_t)b->event, &n->p, 2 * (size_t)n->event, c->counts, c->z);
	if (err) {
		fprintf(stderr, "conv diff: cannot compare: %s\n", conv_strerror(err));
		return CLI_EXIT_INPUT;
	}
	cols[COL_BASE] = (struct view_col){ &b->p, 2 * (size_t)b->event };
	cols[COL_NEW] = (struct view_col){ &n->p, 2 * (size_t)n->event };
	cols[COL_BASE_PERIOD] = (struct view_col){ &b->p, 2 * (size_t)b->event + 1 };
	cols[COL_NEW_PERIOD] = (struct view_col){ &n->p, 2 * (size_t)n->event + 1 };
	err = view_tree_build_cols(&t, cols, NR_COLS);
	if (err) {
		fprintf(stderr, "conv diff: cannot build the call tree: %s\n", conv_strerror(err));
		view_diff_release(&d);
		return CLI_EXIT_OUTPUT;
	}
	rc = diff_outputs(c, b, n, &t, path, &w);
	if (!rc && diff_grew(c, &d))
		rc = CLI_EXIT_GREW;
	if (!rc && c->com.strict && (side_lost(b) || side_lost(n)))
		rc = CLI_EXIT_LOSS;
	diff_report(c, b, n, &d, &w, rc);
	view_tree_release(&t);
	view_diff_release(&d);
	return rc;
}

static void side_release(struct side *s)
{
	if (s->ready)
		prof_release(&s->p);
	free(s->list);
}

int cmd_diff(int argc, char **argv)
{
	struct dfopts *c = calloc(1, sizeof(*c));
	struct cli_cmd cmd = { "conv diff", diff_opts, diff_take, c, false };
	struct side b, n;
	struct objtab *objects = NULL;
	int first, rc;

	if (!c) {
		fprintf(stderr, "conv diff: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	c->formats = DIFF_FORMATS;
	c->top = 10;
	c->z = VIEW_DIFF_Z;
	c->ro.read_ahead = sysconf(_SC_NPROCESSORS_ONLN) > 1;
	first = cli_opts_parse(&cmd, &c->com, argc, argv, &rc);
	if (first < 0)
		goto out;
	if (argc - first != 2) {
		fprintf(stderr, "conv diff: expected two recordings, BASE and NEW, got %d; try 'conv diff --help'\n",
			argc - first);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	if (c->json && c->stats_path && !strcmp(c->stats_path, "-")) {
		fprintf(stderr, "conv diff: --json and --stats without FILE both write to standard output: give one\n");
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	c->co.sj = c->com.sj;
	c->co.pm = c->com.pm;
	/* one table for both sides: an object both map is opened and named once */
	if (objtab_new(&objects, 1ull << 30) != CONV_E_OK) {
		fprintf(stderr, "conv diff: out of memory\n");
		rc = CLI_EXIT_INPUT;
		goto out;
	}
	c->co.sj.objects = objects;
	memset(&b, 0, sizeof(b));
	memset(&n, 0, sizeof(n));
	b.in = argv[first];
	n.in = argv[first + 1];
	if (!side_split(&b) || !side_split(&n)) {
		rc = CLI_EXIT_USAGE;
	} else if (c->stats_path && !statsfile_open("conv diff", c->stats_path)) {
		rc = CLI_EXIT_OUTPUT;
	} else {
		rc = diff_run(c, &b, &n);
		if (c->stats_path && !statsfile_close("conv diff") && rc < CLI_EXIT_OUTPUT)
			rc = CLI_EXIT_OUTPUT;
	}
	side_release(&b);
	side_release(&n);
	c->co.sj.objects = NULL;
	objtab_free(objects);
out:
	free(c);
	return rc;
}
