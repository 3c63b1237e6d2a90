/*
 * uwcost: the reading pass's time per unwound sample and per unwound frame
 * of `--call-graph dwarf` recordings, every sample resolved as new (the
 * sample cache off: inflated copies of one recording would otherwise be
 * cache hits), nothing symbolized, no network.
 *
 *   uwcost [-r RUNS] [-d DIR]... FILE
 *
 * Reads FILE into memory once, then RUNS times: rdr_open_mem, convert_run,
 * release (the timed region, CLOCK_MONOTONIC). Prints one line of
 * key=value: samples, unwound samples, user frames, the best and median
 * seconds. -d: where the recorded binaries are (their CFI), as conv's -d.
 * bench/uwcost.sh takes the difference between a recording and an inflated
 * copy of it, so fixed costs (opening objects, compiling their CFI) cancel.
 * Not a test: no checks.
 */
#include "bench/benchtime.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "reader/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIRS 16

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)n : 0;
	fclose(f);
	return buf;
}

static void opts_bench(struct convert_opts *co, const char *const *dirs, size_t nr_dirs)
{
	memset(co, 0, sizeof(*co));
	co->pm.kernel_notes = "/nonexistent/uwcost/notes";
	co->pm.jit_dir = "/nonexistent/uwcost/jit";
	co->sj.no_symbolize = true;
	co->sj.offline = true;
	co->sj.jobs = 1;
	co->sj.cache_dir = "/nonexistent/uwcost/cache";
	co->sj.debug_dirs = dirs;
	co->sj.nr_debug_dirs = nr_dirs;
	co->no_sample_cache = true;
}

/* One reading pass; false when the file does not convert. */
static bool run_once(const void *data, size_t len, const struct convert_opts *co, double *secs,
		     struct convert_stats *out)
{
	struct rdr_opts ro = { 0 };
	struct conv_diag d;
	struct rdr *r = NULL;
	struct prof p;
	double t0 = bench_now_s();
	enum conv_err err;

	memset(&d, 0, sizeof(d));
	memset(out, 0, sizeof(*out));
	if (rdr_open_mem(&r, data, len, &ro, &d))
		return false;
	prof_init(&p);
	err = convert_run(r, co, &p, out, &d);
	prof_release(&p);
	rdr_close(r);
	*secs = bench_now_s() - t0;
	return !err;
}

int main(int argc, char **argv)
{
	const char *dirs[MAX_DIRS];
	size_t nr_dirs = 0, len;
	int runs = 5, i = 1;
	struct convert_opts co;
	struct convert_stats st;
	double *t;
	void *data;

	for (; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			break;
		if (!strcmp(argv[i], "-r"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-d") && nr_dirs < MAX_DIRS)
			dirs[nr_dirs++] = argv[i + 1];
		else
			break;
	}
	if (i != argc - 1 || runs < 1) {
		fprintf(stderr, "usage: uwcost [-r RUNS] [-d DIR]... FILE\n");
		return 1;
	}
	data = slurp(argv[i], &len);
	t = calloc((size_t)runs, sizeof(*t));
	if (!data || !t) {
		fprintf(stderr, "uwcost: cannot read %s\n", argv[i]);
		return 2;
	}
	opts_bench(&co, dirs, nr_dirs);
	for (int k = 0; k < runs; k++) {
		if (k)
			convert_stats_release(&st);
		if (!run_once(data, len, &co, &t[k], &st)) {
			fprintf(stderr, "uwcost: %s does not convert\n", argv[i]);
			return 2;
		}
	}
	qsort(t, (size_t)runs, sizeof(*t), bench_dbl_cmp);
	printf("samples=%llu unwound=%llu frames=%llu best_s=%.6f median_s=%.6f\n",
	       (unsigned long long)st.samples, (unsigned long long)st.unwind.samples,
	       (unsigned long long)st.unwind.frames, t[0], t[runs / 2]);
	convert_stats_release(&st);
	free(t);
	free(data);
	return 0;
}
