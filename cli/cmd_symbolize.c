/*
 * conv symbolize [OPTIONS] FILE...: names the frames of profiles made
 * earlier (conv --no-symbolize outputs, frames conv could not name then,
 * profiles of agents that do not symbolize, Datadog's remote frames) from
 * debug info found by build-id, as a conversion finds it: pprof (gzipped
 * or not) and JFR. Each output is written beside its input as
 * BASE.symbolized.EXT (or -o), through a temp file and a rename, never over
 * an input.
 */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/outfile.h"
#include "cli/paths.h"
#include "cli/statsfile.h"
#include "cli/text.h"

#include "core/dbuf.h"
#include "core/json.h"
#include "core/ropen.h"
#include "jfredit/jfredit.h"
#include "pipeline/objtab.h"
#include "pipeline/resym.h"
#include "pprofedit/pprofedit.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest input read, and largest protobuf a gzipped one may inflate to. */
#define MAX_INPUT ((size_t)1 << 30)
#define MAX_INFLATED ((size_t)4 << 30)

struct symopts {
	struct cli_common com;
	const char *out;   /* -o PATH (one input) or DIR/ */
	bool force;
	const char *stats_path;
	bool tty;
};

static void usage(FILE *f)
{
	fputs("usage: conv symbolize [OPTIONS] FILE...\n"
	      "Names the frames of pprof profiles (gzipped or not) and the remote frames of JFR\n"
	      "recordings: those of conv --no-symbolize, of agents that do not symbolize, of\n"
	      "Datadog's profiler. Debug info is found by build-id as conv finds it. Writes\n"
	      "BASE.symbolized.pb.gz or BASE.symbolized.jfr beside each FILE.\n"
	      " -o, --output PATH|DIR/  the output (one FILE; '-' = stdout), or a directory\n"
	      "                         (DIR/ or an existing one; several FILEs need one)\n"
	      "     --force             name frames that have names already, anew\n"
	      "     --stats [FILE]      JSON facts per input (stdout without FILE)\n",
	      f);
	fputs(cli_common_help, f);
	fputs(" -h, --help\n"
	      "Exit: 0 ok, 1 usage, 2 input unreadable, 4 output not written. See conv(1).\n",
	      f);
}

enum { O_FORCE = 256, O_STATS };

/* conv symbolize's own options; the symbol sources and -j -q -v --strict are cli/opts.c's */
static const struct cli_opt sym_opts[] = {
	{"output", required_argument, 'o'},
	{"force", no_argument, O_FORCE},
	{"stats", optional_argument, O_STATS},
	{"help", no_argument, 'h'},
	{NULL, 0, 0},
};

/* BASE.symbolized.EXT beside the input, or in -o DIR, or -o PATH. */
static void output_path(const struct symopts *c, const char *in, char *out, size_t n)
{
	static const char *const exts[] = { ".pb.gz", ".pprof.gz", ".pb", ".pprof", ".gz", ".jfr" };
	char base[4096];
	size_t len, el = 0;

	if (!cli_out_base(c->out, in, base, sizeof(base))) {
		snprintf(out, n, "%s", base);
		return;
	}
	len = strlen(base);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]) && !el; i++) {
		size_t k = strlen(exts[i]);

		if (len > k && !strcmp(base + len - k, exts[i]) && base[len - k - 1] != '/')
			el = k;
	}
	snprintf(out, n, "%.*s.symbolized%s", (int)(len - el), base, base + len - el);
}

static void print_summary(const char *in, const char *out, uint64_t bytes, const struct resym_stats *st,
			  bool verbose, bool jfr)
{
	bool first = true;
	char b[32];

	fprintf(stderr, "%s: %" PRIu64 " %s: %" PRIu64 " named now", in, st->locations,
		jfr ? cli_plural(st->locations, "unnamed frame's method", "unnamed frames' methods")
		    : cli_plural(st->locations, "location", "locations"),
		st->named);
	for (int s = 0; s < SYMSRC__COUNT; s++) {
		if (!st->by_src[s])
			continue;
		fprintf(stderr, "%s%s %" PRIu64, first ? " (" : ", ", symjob_src_name((enum symsrc)s),
			st->by_src[s]);
		first = false;
	}
	fprintf(stderr, "%s, %" PRIu64 " left without a name, %" PRIu64 " named before, %" PRIu64
			" in no mapping with a file\n",
		first ? "" : ")", st->candidates - st->named, st->named_before, st->unmapped);
	if (st->bad_build_ids)
		fprintf(stderr, "  %" PRIu64 " %s (a NUL or non-hex byte, odd length or too long): taken as none\n",
			st->bad_build_ids, cli_plural(st->bad_build_ids, "build-id string that is not a build-id",
							 "build-id strings that are not build-ids"));
	for (size_t i = 0; i < st->nr_missing && (verbose || i < 3); i++)
		fprintf(stderr, "  unresolved  %s (%s%s): %" PRIu64 " %s: %s\n", st->missing[i].path,
			st->missing[i].build_id[0] ? "build-id " : "no build-id", st->missing[i].build_id,
			st->missing[i].locations, cli_plural(st->missing[i].locations, "location", "locations"),
			st->missing[i].reason);
	if (st->nr_missing > 3 && !verbose)
		fprintf(stderr, "              and %" PRIu64 " more (-v lists them)\n",
			st->nr_missing - 3 + st->missing_more);
	if (st->missing_more && verbose)
		fprintf(stderr, "              and %" PRIu64 " more not listed (%" PRIu64 " %s)\n", st->missing_more,
			st->missing_more_locations, cli_plural(st->missing_more_locations, "location", "locations"));
	if (out && jfr)
		fprintf(stderr, "  wrote       %s (%s)   jfr print --stack-depth 64 %s\n", out,
			cli_size(bytes, b, sizeof(b)), out);
	else if (out)
		fprintf(stderr, "  wrote       %s (%s)   go tool pprof -http=: %s\n", out,
			cli_size(bytes, b, sizeof(b)), out);
}

static void write_stats(const char *in, int rc, const char *out, uint64_t bytes, const struct resym_stats *st,
			bool jfr)
{
	struct dbuf o;
	struct json j;

	statsfile_record_begin(&j, &o, in, rc);
	json_kv_str(&j, "format", jfr ? "jfr" : "pprof");
	json_kv_u64(&j, "locations", st->locations);
	json_kv_u64(&j, "named", st->named);
	json_kv_u64(&j, "left_unnamed", st->candidates - st->named);
	json_kv_u64(&j, "named_before", st->named_before);
	json_kv_u64(&j, "unmapped", st->unmapped);
	json_kv_u64(&j, "bad_build_ids", st->bad_build_ids);
	json_key(&j, "sources");
	json_obj_begin(&j);
	for (int s = 0; s < SYMSRC__COUNT; s++)
		if (s != SYMSRC_UNRESOLVED)
			json_kv_u64(&j, symjob_src_name((enum symsrc)s), st->by_src[s]);
	json_obj_end(&j);
	json_key(&j, "debuginfod");
	json_obj_begin(&j);
	json_kv_u64(&j, "fetched", st->dfd_fetched);
	json_kv_u64(&j, "cache_hits", st->dfd_cache_hits);
	json_kv_u64(&j, "not_found", st->dfd_not_found);
	json_kv_u64(&j, "errors", st->dfd_errors);
	json_kv_u64(&j, "untrusted", st->dfd_untrusted);
	json_obj_end(&j);
	json_key(&j, "unresolved_objects");
	json_arr_begin(&j);
	for (size_t i = 0; i < st->nr_missing; i++)
		cli_missing_json(&j, st->missing[i].build_id, st->missing[i].path, "locations",
				 st->missing[i].locations, st->missing[i].reason);
	json_arr_end(&j);
	if (st->missing_more) {
		json_kv_u64(&j, "unresolved_objects_not_listed", st->missing_more);
		json_kv_u64(&j, "unresolved_locations_not_listed", st->missing_more_locations);
	}
	json_key(&j, "outputs");
	json_arr_begin(&j);
	if (out)
		cli_output_json(&j, jfr ? "jfr" : "pprof", out, bytes);
	json_arr_end(&j);
	statsfile_record_end(&j, &o);
}

/*
 * Before any work: no output (or --stats file) may be an input or another
 * output, and none may replace a recording (cli/paths.h). Returns the exit
 * code.
 */
static int check_paths(const struct symopts *c, char **inputs, int n)
{
	struct cli_paths ps = { 0 };
	char out[4096];

	for (int i = 0; i < n; i++)
		cli_paths_add(&ps, inputs[i], -1, false, "the input", (size_t)i);
	for (int i = 0; i < n; i++) {
		output_path(c, inputs[i], out, sizeof(out));
		cli_paths_add(&ps, out, -1, true, "the output", (size_t)i);
	}
	if (c->stats_path && strcmp(c->stats_path, "-"))
		cli_paths_add(&ps, c->stats_path, -1, true, "the --stats file", SIZE_MAX);
	return cli_paths_check(&ps, "conv symbolize", inputs);
}

/* One rewrite, as cli_out_write calls it. */
struct rewrite_job {
	const struct jfe_file *jfr; /* or */
	const struct ppe_profile *pprof;
	const struct resym_opts *ro;
	struct resym_stats *st;
	uint64_t bytes;
	int io_errno;
};

static enum conv_err rewrite_job_write(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d)
{
	struct rewrite_job *j = ctx;
	struct resym_opts ro = *j->ro;

	ro.flush = fl; /* made durable while the rest is written */
	return j->jfr ? resym_jfr(j->jfr, &ro, fd, &j->bytes, &j->io_errno, j->st, d)
		      : resym_pprof(j->pprof, &ro, j->pprof->gzipped, fd, &j->bytes, &j->io_errno, j->st, d);
}

static int symbolize_one(const struct symopts *c, const char *in)
{
	struct cli_mapped inb;
	struct ppe_profile p;
	struct jfe_file jf;
	struct resym_opts ro;
	struct resym_stats st;
	struct conv_diag diag;
	struct rewrite_job job;
	char out[4096];
	uint64_t bytes = 0;
	int rc, w;
	bool wrote = false, jfr = false;

	memset(&st, 0, sizeof(st));
	memset(&job, 0, sizeof(job));
	memset(&diag, 0, sizeof(diag));
	memset(&inb, 0, sizeof(inb));
	output_path(c, in, out, sizeof(out));
	/* before the work: a read-only or missing directory costs no symbolization (a missing input says so itself) */
	if (access(in, R_OK) == 0 && cli_out_check(out)) {
		fprintf(stderr, "conv symbolize: cannot write %s: %s\n", cli_out_name(out, "the output"),
			strerror(errno));
		rc = CLI_EXIT_OUTPUT;
		goto done;
	}
	rc = cli_map_file("conv symbolize", in, MAX_INPUT, &inb);
	if (rc)
		goto done;
	jfr = inb.len >= 4 && !memcmp(inb.data, "FLR", 4);
	if (jfr ? jfe_parse(&jf, inb.data, inb.len, &diag) != CONV_E_OK
		: ppe_parse(&p, inb.data, inb.len, MAX_INFLATED, &diag) != CONV_E_OK) {
		fprintf(stderr, "conv symbolize: %s: not a %s: %s\n", in, jfr ? "readable JFR recording" : "pprof profile",
			diag.msg);
		rc = CLI_EXIT_INPUT;
		goto done;
	}
	memset(&ro, 0, sizeof(ro));
	ro.sj = c->com.sj;
	ro.pm = c->com.pm;
	ro.force = c->force;
	job.jfr = jfr ? &jf : NULL;
	job.pprof = jfr ? NULL : &p;
	job.ro = &ro;
	job.st = &st;
	w = cli_out_write("conv symbolize", out, "the output", rewrite_job_write, &job, &diag);
	if (w > 0)
		/* what the rewrite could not read is the input's fault, what it could not write the output's */
		fprintf(stderr, "conv symbolize: %s: %s%s\n", job.io_errno ? out : in,
			job.io_errno ? "cannot write: " : "", diag.msg);
	rc = !w ? CLI_EXIT_OK : w < 0 || job.io_errno ? CLI_EXIT_OUTPUT : CLI_EXIT_INPUT;
	wrote = !w;
	bytes = job.bytes;
	if (jfr)
		jfe_release(&jf);
	else
		ppe_release(&p);
	if (wrote && ((c->tty && !c->com.quiet) || c->com.verbose))
		print_summary(in, out, bytes, &st, c->com.verbose, jfr);
done:
	if (c->stats_path)
		write_stats(in, rc, wrote ? out : NULL, bytes, &st, jfr);
	resym_stats_release(&st);
	cli_unmap_file(&inb);
	return rc;
}

static enum cli_take sym_take(void *ctx, int id, char *arg, int argc, char **argv)
{
	struct symopts *c = ctx;

	switch (id) {
	case 'o':
		c->out = cli_out_arg("conv symbolize", arg);
		return c->out ? CLI_TAKE_OK : CLI_TAKE_USAGE;
	case O_FORCE:
		c->force = true;
		return CLI_TAKE_OK;
	case O_STATS:
		c->stats_path = cli_stats_path("conv symbolize", arg, argc, argv);
		return c->stats_path ? CLI_TAKE_OK : CLI_TAKE_USAGE;
	case 'h':
		usage(stdout);
		return CLI_TAKE_DONE;
	default:
		return CLI_TAKE_USAGE;
	}
}

/* The inputs argv[first..argc), options parsed: checked, then each symbolized. */
static int symbolize_all(struct symopts *c, int first, int argc, char **argv)
{
	int rc;

	if (c->com.sj.no_symbolize) {
		fprintf(stderr, "conv symbolize: -n (--no-symbolize) leaves nothing to do\n");
		return CLI_EXIT_USAGE;
	}
	if (first >= argc) {
		fprintf(stderr, "conv symbolize: no FILE given; try 'conv symbolize --help'\n");
		return CLI_EXIT_USAGE;
	}
	c->tty = isatty(STDERR_FILENO);
	rc = cli_out_dir("conv symbolize", c->out, (size_t)(argc - first), false);
	if (rc)
		return rc;
	rc = check_paths(c, argv + first, argc - first);
	if (rc)
		return rc;
	rc = cli_out_dir("conv symbolize", c->out, (size_t)(argc - first), true);
	if (rc)
		return rc;
	if (c->stats_path && !statsfile_open("conv symbolize", c->stats_path))
		return CLI_EXIT_OUTPUT;
	/* the profiles of an archive name the same objects: each is opened once for all of them */
	if (argc - first > 1 && objtab_new(&c->com.sj.objects, 1ull << 30) != CONV_E_OK) {
		fprintf(stderr, "conv symbolize: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	for (int i = first; i < argc; i++) {
		int r1;

		if (c->stats_path)
			statsfile_arm(argv[i]);
		r1 = symbolize_one(c, argv[i]);
		if (r1 > rc)
			rc = r1;
	}
	objtab_free(c->com.sj.objects);
	c->com.sj.objects = NULL;
	if (c->stats_path && !statsfile_close("conv symbolize") && rc < CLI_EXIT_OUTPUT)
		rc = CLI_EXIT_OUTPUT;
	return rc;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symopts *c = calloc(1, sizeof(*c));
	struct cli_cmd cmd = { "conv symbolize", sym_opts, sym_take, c, false };
	int first, rc;

	if (!c) {
		fprintf(stderr, "conv symbolize: out of memory\n");
		return CLI_EXIT_INPUT;
	}
	first = cli_opts_parse(&cmd, &c->com, argc, argv, &rc);
	if (first >= 0)
		rc = symbolize_all(c, first, argc, argv);
	free(c);
	return rc;
}
