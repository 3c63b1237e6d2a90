/*
 * symbench: addresses per second of conv's file-mode symbolizer.
 *
 *   symbench [-r RUNS] [-a] [-o OUT.txt] ELF ADDRFILE
 *
 * ADDRFILE holds hex ELF virtual addresses, one per line ("0x" optional;
 * blank lines and lines starting with '#' are skipped). Every run opens a
 * FRESH sym_file (lookups are cached per address inside one sym_file, so
 * reusing it would measure the cache), resolves every address in file order
 * (function + inline chain + file:line) and closes it. The timed region is
 * sym_file_open .. last sym_file_lookup (CLOCK_MONOTONIC); formatting the
 * output is done afterwards, from the last run's results, and not timed.
 *
 * -o writes the results as `addr2line -f -i` does: per frame, innermost
 * first, the function name line and then the file:line line; "??" and
 * "??:0" when unknown. -a also writes each address first, as `addr2line -a`
 * does (0x%016x), so that outputs can be split per address and compared.
 *
 * Only symbolize/symbolize.h and core/ are used. Not a test: no checks.
 */
#define _GNU_SOURCE
#include "bench/benchtime.h"
#include "core/err.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t *read_addrs(const char *path, size_t *nr)
{
	FILE *fp = fopen(path, "r");
	char line[256];
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	if (!fp) {
		fprintf(stderr, "symbench: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *p = line, *end;
		uint64_t a;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n' || *p == '#')
			continue;
		errno = 0;
		a = strtoull(p, &end, 16);
		if (errno || end == p) {
			fprintf(stderr, "symbench: %s: bad address line: %s", path, line);
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			uint64_t *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				free(v);
				fclose(fp);
				return NULL;
			}
			v = nv;
			cap = nc;
		}
		v[n++] = a;
	}
	fclose(fp);
	*nr = n;
	return v;
}

static size_t count_distinct(const uint64_t *a, size_t n)
{
	uint64_t *s = malloc((n ? n : 1) * sizeof(*s));
	size_t d = 0;

	if (!s)
		return 0;
	memcpy(s, a, n * sizeof(*s));
	qsort(s, n, sizeof(*s), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || s[i] != s[i - 1])
			d++;
	free(s);
	return d;
}

static void write_result(FILE *out, uint64_t addr, const struct sym_result *r, bool with_addr)
{
	if (with_addr)
		fprintf(out, "0x%016" PRIx64 "\n", addr);
	if (r->nr == 0) {
		fputs("??\n??:0\n", out);
		return;
	}
	for (uint32_t i = 0; i < r->nr; i++) {
		const struct sym_frame *fr = &r->frames[i];
		const char *fn = fr->function && *fr->function ? fr->function : "??";

		if (fr->file && *fr->file)
			fprintf(out, "%s\n%s:%" PRIu32 "\n", fn, fr->file, fr->line);
		else
			fprintf(out, "%s\n??:0\n", fn);
	}
}

static void usage(void)
{
	fputs("usage: symbench [-r RUNS] [-a] [-o OUT.txt] ELF ADDRFILE\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	int runs = 1, opt;
	const char *out_path = NULL;
	bool with_addr = false;
	uint64_t *addrs;
	size_t nr = 0, distinct;
	double *times;
	struct sym_result *res;
	struct sym_file *f = NULL;
	struct sym_file_stats st;
	int rc = 0;

	while ((opt = getopt(argc, argv, "r:o:ah")) != -1) {
		switch (opt) {
		case 'r':
			runs = atoi(optarg);
			if (runs < 1)
				usage();
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'a':
			with_addr = true;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	addrs = read_addrs(argv[optind + 1], &nr);
	if (!addrs)
		return 1;
	distinct = count_distinct(addrs, nr);
	times = calloc((size_t)runs, sizeof(*times));
	res = calloc(nr ? nr : 1, sizeof(*res));
	if (!times || !res) {
		fputs("symbench: out of memory\n", stderr);
		return 1;
	}
	memset(&st, 0, sizeof(st));
	for (int r = 0; r < runs; r++) {
		struct conv_diag diag;
		enum conv_err e;
		double t0 = bench_now_s(), t1;

		if (f) {
			sym_file_close(f);
			f = NULL;
		}
		memset(&diag, 0, sizeof(diag));
		e = sym_file_open(&f, argv[optind], NULL, &diag);
		if (e != CONV_E_OK) {
			fprintf(stderr, "symbench: %s: %s\n", conv_strerror(e), diag.msg);
			return 1;
		}
		for (size_t i = 0; i < nr; i++) {
			e = sym_file_lookup(f, addrs[i], &res[i]);
			if (e != CONV_E_OK) {
				fprintf(stderr, "symbench: lookup 0x%" PRIx64 ": %s\n", addrs[i],
					conv_strerror(e));
				rc = 1;
				memset(&res[i], 0, sizeof(res[i]));
			}
		}
		t1 = bench_now_s();
		times[r] = t1 - t0;
		st = *sym_file_stats(f);
	}
	if (out_path) {
		FILE *out = fopen(out_path, "w");
		static char buf[1 << 20];

		if (!out) {
			fprintf(stderr, "symbench: cannot create %s: %s\n", out_path, strerror(errno));
			return 1;
		}
		setvbuf(out, buf, _IOFBF, sizeof(buf));
		for (size_t i = 0; i < nr; i++)
			write_result(out, addrs[i], &res[i], with_addr);
		if (fclose(out) != 0) {
			fprintf(stderr, "symbench: writing %s failed\n", out_path);
			rc = 1;
		}
	}
	{
		double best, median;
		double *sorted = malloc((size_t)runs * sizeof(*sorted));

		if (!sorted)
			return 1;
		memcpy(sorted, times, (size_t)runs * sizeof(*sorted));
		qsort(sorted, (size_t)runs, sizeof(*sorted), bench_dbl_cmp);
		best = sorted[0];
		median = sorted[runs / 2];
		printf("symbench: %s\n", argv[optind]);
		printf("addresses      %zu (%zu distinct)\n", nr, distinct);
		printf("runs           %d (fresh sym_file each)\n", runs);
		printf("best           %.6f s  %.0f addr/s  %.0f distinct addr/s\n", best,
		       best > 0 ? (double)nr / best : 0.0, best > 0 ? (double)distinct / best : 0.0);
		printf("median         %.6f s  %.0f addr/s  %.0f distinct addr/s\n", median,
		       median > 0 ? (double)nr / median : 0.0,
		       median > 0 ? (double)distinct / median : 0.0);
		printf("lookups        %" PRIu64 " (cache hits %" PRIu64 ")\n", st.lookups,
		       st.cache_hits);
		printf("resolved       dwarf %" PRIu64 ", symtab %" PRIu64 ", unresolved %" PRIu64 "\n",
		       st.dwarf, st.symtab, st.unresolved);
		printf("cus            %" PRIu64 "\n", st.cus);
		free(sorted);
	}
	sym_file_close(f);
	free(res);
	free(times);
	free(addrs);
	return rc;
}
