/*
 * conv [OPTIONS] [FILE]: perf.data -> BASE.pb.gz. Outputs are written to a
 * temp file in the target directory and renamed into place, so a failed run
 * never leaves a half-written file.
 */
#include "cli/cli.h"

#include "core/dbuf.h"
#include "jfrwriter/jfr.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pprofwriter/pprof.h"
#include "reader/reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes buf to path atomically (temp file + rename); "-" is standard output. */
static int write_atomic(const char *path, const struct dbuf *buf)
{
	char tmp[4096];
	int fd, n;
	size_t off = 0;

	if (!strcmp(path, "-")) {
		if (fwrite(buf->data, 1, buf->len, stdout) != buf->len || fflush(stdout))
			return -1;
		return 0;
	}
	n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	while (off < buf->len) {
		ssize_t w = write(fd, buf->data + off, buf->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		off += (size_t)w;
	}
	if (fchmod(fd, 0644) || fsync(fd) || close(fd)) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) == 0)
		return 0;
	fd = -1;
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		unlink(tmp);
		errno = e;
	}
	return -1;
}

/* Copies fd (from its start) to standard output. */
static int copy_to_stdout(int fd)
{
	char buf[65536];

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		if (fwrite(buf, 1, (size_t)k, stdout) != (size_t)k)
			return -1;
	}
	return fflush(stdout) ? -1 : 0;
}

/*
 * Writes the JFR recording to path through a temp file renamed into place;
 * "-": through an unlinked temp file (the writer needs to seek) to stdout.
 */
static int write_jfr(const char *path, const struct prof *p, uint64_t chunk_size,
		     struct jfr_stats *js)
{
	char tmp[4096];
	struct jfr_opts jo;
	struct conv_diag diag;
	bool out = !strcmp(path, "-");
	const char *td = getenv("TMPDIR");
	int fd, n;

	memset(&jo, 0, sizeof(jo));
	memset(&diag, 0, sizeof(diag));
	jo.chunk_size = chunk_size;
	if (out)
		n = snprintf(tmp, sizeof(tmp), "%s/conv-jfr.XXXXXX", td && *td ? td : "/tmp");
	else
		n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		fprintf(stderr, "conv: cannot write %s: name too long\n", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "conv: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (out)
		unlink(tmp);
	if (jfr_write(p, &jo, fd, js, &diag) != CONV_E_OK) {
		fprintf(stderr, "conv: cannot write %s: %s\n", path, diag.msg);
		goto fail;
	}
	if (out) {
		if (copy_to_stdout(fd)) {
			fprintf(stderr, "conv: cannot write the JFR output: %s\n", strerror(errno));
			goto fail;
		}
		close(fd);
		return 0;
	}
	if (fchmod(fd, 0644) || fsync(fd)) {
		fprintf(stderr, "conv: cannot write %s: %s\n", path, strerror(errno));
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		fprintf(stderr, "conv: cannot write %s: %s\n", path, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path)) {
		fprintf(stderr, "conv: cannot write %s: %s\n", path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (!out)
		unlink(tmp);
	return -1;
}

static void usage(FILE *f)
{
	fputs("usage: conv [OPTIONS] [FILE]      (FILE defaults to perf.data; '-' reads stdin)\n"
	      "       conv info [--json] ... FILE (see conv info --help)\n"
	      "\n"
	      "Writes BASE.pb.gz (pprof) and BASE.jfr (JDK Flight Recorder), BASE = -o BASE\n"
	      "or FILE without .data. With --pprof or --jfr, only the outputs named.\n"
	      "  -o BASE              output base name\n"
	      "  --pprof PATH         pprof output path ('-' = stdout)\n"
	      "  --jfr PATH           JFR output path ('-' = stdout)\n"
	      "  --jfr-chunk-size N   start a new JFR chunk after N bytes (default 64M; k/M/G)\n"
	      "  --no-symbolize       keep addresses, mappings and build-ids only\n"
	      "  --debug-dir DIR      look for debug info here first (repeatable)\n"
	      "  --debuginfod URL     debuginfod server (repeatable; default $DEBUGINFOD_URLS)\n"
	      "  --offline            no network: caches and local files only\n"
	      "  --cache-dir DIR      download cache\n"
	      "  --kallsyms FILE      kernel symbols of the recording machine\n"
	      "  --jit-dir DIR        where perf-PID.map / jit-PID.dump files are (default /tmp)\n"
	      "  --buildid-from-disk  take missing build-ids from this machine's files\n"
	      "  --no-labels          no pid/tid/comm/thread labels\n"
	      "  --label cpu          add a cpu label\n"
	      "  -j N                 symbolize with N threads\n"
	      "  -q                   no progress line\n"
	      "  --strict             exit 3 when the input had problems\n"
	      "  -h, --help           this help; --version: the version\n",
	      f);
}

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o;
	struct convert_stats cs;
	const char *in = NULL, *base = NULL, *pprof_path = NULL, *jfr_path = NULL;
	char jfrbuf[4096];
	uint64_t chunk_size = 0;
	const char *dirs[32], *urls[32];
	size_t nr_dirs = 0, nr_urls = 0;
	bool strict = false, quiet = false;
	char outbuf[4096];
	struct rdr *r = NULL;
	struct conv_diag diag;
	struct prof p;
	struct dbuf gz;
	enum conv_err err;
	int rc = CLI_EXIT_OK;

	memset(&o, 0, sizeof(o));
	memset(&diag, 0, sizeof(diag));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(a, "-o") && has) {
			base = argv[++i];
		} else if (!strcmp(a, "--pprof") && has) {
			pprof_path = argv[++i];
		} else if (!strcmp(a, "--jfr") && has) {
			jfr_path = argv[++i];
		} else if (!strcmp(a, "--jfr-chunk-size") && has) {
			char *end;

			chunk_size = strtoull(argv[++i], &end, 10);
			if (*end == 'k' || *end == 'K')
				chunk_size <<= 10, end++;
			else if (*end == 'M')
				chunk_size <<= 20, end++;
			else if (*end == 'G')
				chunk_size <<= 30, end++;
			if (*end || !chunk_size) {
				fprintf(stderr, "conv: --jfr-chunk-size: not a size: '%s'\n", argv[i]);
				return CLI_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--no-symbolize")) {
			o.sj.no_symbolize = true;
		} else if (!strcmp(a, "--debug-dir") && has) {
			if (nr_dirs < 32)
				dirs[nr_dirs++] = argv[++i];
		} else if (!strcmp(a, "--debuginfod") && has) {
			if (nr_urls < 32)
				urls[nr_urls++] = argv[++i];
		} else if (!strcmp(a, "--offline")) {
			o.sj.offline = true;
		} else if (!strcmp(a, "--cache-dir") && has) {
			o.sj.cache_dir = argv[++i];
		} else if (!strcmp(a, "--kallsyms") && has) {
			o.sj.kallsyms = argv[++i];
		} else if (!strcmp(a, "--jit-dir") && has) {
			o.pm.jit_dir = argv[++i];
		} else if (!strcmp(a, "--buildid-from-disk")) {
			o.pm.buildid_from_disk = true;
		} else if (!strcmp(a, "--no-labels")) {
			o.no_labels = true;
		} else if (!strcmp(a, "--label") && has && !strcmp(argv[i + 1], "cpu")) {
			o.label_cpu = true;
			i++;
		} else if (!strcmp(a, "-j") && has) {
			o.sj.jobs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(a, "-q")) {
			quiet = true;
		} else if (!strcmp(a, "--strict")) {
			strict = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "conv: unknown option '%s'\n\n", a);
			usage(stderr);
			return CLI_EXIT_USAGE;
		} else if (!in) {
			in = a;
		} else {
			fprintf(stderr, "conv: one input file at a time\n");
			return CLI_EXIT_USAGE;
		}
	}
	(void)quiet;
	if (!in)
		in = "perf.data";
	o.sj.debug_dirs = dirs;
	o.sj.nr_debug_dirs = nr_dirs;
	o.sj.debuginfod_urls = urls;
	o.sj.nr_debuginfod_urls = nr_urls;
	if (!pprof_path && !jfr_path) {
		size_t n;

		if (!base)
			base = !strcmp(in, "-") ? "stdin" : in;
		n = strlen(base);
		if (base == in && n > 5 && !strcmp(base + n - 5, ".data"))
			n -= 5;
		snprintf(outbuf, sizeof(outbuf), "%.*s.pb.gz", (int)n, base);
		snprintf(jfrbuf, sizeof(jfrbuf), "%.*s.jfr", (int)n, base);
		pprof_path = outbuf;
		jfr_path = jfrbuf;
	}
	o.keep_events = jfr_path != NULL;
	err = !strcmp(in, "-") ? rdr_open_fd(&r, STDIN_FILENO, NULL, &diag)
			       : rdr_open_path(&r, in, NULL, &diag);
	if (err) {
		fprintf(stderr, "conv: %s: %s: %s\n", in, conv_strerror(err), diag.msg);
		return CLI_EXIT_INPUT;
	}
	prof_init(&p);
	err = convert_run(r, &o, &p, &cs, &diag);
	if (err) {
		fprintf(stderr, "conv: %s: %s%s%s\n", in, conv_strerror(err), diag.msg[0] ? ": " : "",
			diag.msg);
		prof_release(&p);
		rdr_close(r);
		return CLI_EXIT_INPUT;
	}
	for (size_t i = 0; i < rdr_problem_count(r); i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);

		fprintf(stderr, "conv: warning: %s: offset %" PRIu64 ": %s%s\n", in, pr->offset, pr->msg,
			pr->count > 1 ? " (repeated)" : "");
	}
	dbuf_init(&gz, 0);
	if (pprof_path) {
		err = pprof_encode_gz(&p, 6, &gz);
		if (err || write_atomic(pprof_path, &gz)) {
			fprintf(stderr, "conv: cannot write %s: %s\n", pprof_path,
				err ? conv_strerror(err) : strerror(errno));
			rc = CLI_EXIT_OUTPUT;
		}
	}
	if (jfr_path) {
		struct jfr_stats js;

		if (write_jfr(jfr_path, &p, chunk_size, &js))
			rc = CLI_EXIT_OUTPUT;
	}
	if (strict && rc == CLI_EXIT_OK && (rdr_problem_count(r) || rdr_stats(r)->stopped))
		rc = CLI_EXIT_LOSS;
	dbuf_release(&gz);
	prof_release(&p);
	rdr_close(r);
	return rc;
}
