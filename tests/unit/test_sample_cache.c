/*
 * The cache of distinct samples (pipeline/scache.c) against no cache: every
 * recording under the folders given is converted twice, once with the cache
 * and once resolving every sample as new (convert_opts.no_sample_cache), and
 * the two must agree byte for byte: the pprof encoding, the JFR file (with
 * its sample and off-CPU events) and the counts. A cache that gives a sample
 * another's answer (a key that leaves out something the answer depends on)
 * makes them differ on the recordings where that thing varies.
 *
 *   test_sample_cache [--corpus] DIR...
 *
 * Without --corpus the files named *.data are taken (the repository's
 * recordings); with it every file but notes (*.md, *.txt, *.buildids,
 * *.expected*), as scripts/same-outputs.sh takes the shared corpus, and a
 * missing folder is a skip (exit 77). A file the reader refuses must be
 * refused alike in both modes.
 *
 * Before the folders, recordings built here byte by byte (pdbuild) repeat
 * one sample across each change its key must tell apart and the folders'
 * recordings may not hold: a mapping replaced under it (its space's
 * version), a BPF program loaded over its kernel frames (the kernel's
 * version, also for a user-mode sample with kernel frames in its chain),
 * its thread renamed (the comm), and the same IP in user, kernel and guest
 * mode (the cpumode).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "core/dbuf.h"
#include "jfrwriter/jfr.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pprofwriter/pprof.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "tests/unit/convopts.h"
#include "tests/unit/pdbuild.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOWHERE "/nonexistent/conv-test-sample-cache"

/* What one conversion gave: its error, counts and both outputs' bytes. */
struct outcome {
	enum conv_err open_err, err;
	uint64_t samples, filtered, frames, stacks, threads;
	struct dbuf pprof, jfr;
};

static int g_failed, g_files;

static bool read_fd(int fd, struct dbuf *b)
{
	struct stat st;

	if (fstat(fd, &st) || !dbuf_reserve(b, (size_t)st.st_size + 1))
		return false;
	b->len = (size_t)st.st_size;
	return pread(fd, b->data, b->len, 0) == st.st_size;
}

static void convert_once(const void *data, size_t len, bool cache, struct outcome *o)
{
	struct rdr_opts ro = { .reorder_limit = 1u << 20, .max_problems = 16 };
	struct convert_opts co;
	struct convert_stats cs;
	struct conv_diag d;
	struct jfr_opts jo = { 0 };
	struct jfr_stats js;
	struct rdr *r = NULL;
	struct prof p;
	int fd;

	memset(o, 0, sizeof(*o));
	dbuf_init(&o->pprof, 0);
	dbuf_init(&o->jfr, 0);
	memset(&d, 0, sizeof(d));
	o->open_err = rdr_open_mem(&r, data, len, &ro, &d);
	if (o->open_err)
		return;
	convopts_offline(&co, !cache);
	memset(&cs, 0, sizeof(cs));
	prof_init(&p);
	o->err = convert_run(r, &co, &p, &cs, &d);
	o->samples = cs.samples;
	o->filtered = cs.samples_filtered;
	o->frames = cs.frames;
	o->stacks = cs.unique_stacks;
	o->threads = cs.threads;
	if (!o->err) {
		if (pprof_encode(&p, &o->pprof))
			o->err = CONV_E_NOMEM;
		fd = memfd_create("test-sample-cache", MFD_CLOEXEC);
		if (fd < 0 || jfr_write(&p, &jo, fd, &js, &d) || !read_fd(fd, &o->jfr))
			o->err = CONV_E_IO;
		if (fd >= 0)
			close(fd);
	}
	convert_stats_release(&cs);
	prof_release(&p);
	rdr_close(r);
}

static bool same_bytes(const struct dbuf *a, const struct dbuf *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

static void check_file(const char *path)
{
	struct outcome with, without;
	struct dbuf in;
	FILE *f = fopen(path, "rb");
	const char *what = NULL;

	dbuf_init(&in, 0);
	if (!f || fseek(f, 0, SEEK_END) || ftell(f) < 0) {
		printf("FAIL %s: cannot read\n", path);
		g_failed++;
		if (f)
			fclose(f);
		return;
	}
	if (!dbuf_reserve(&in, (size_t)ftell(f) + 1))
		abort();
	in.len = (size_t)ftell(f);
	rewind(f);
	if (fread(in.data, 1, in.len, f) != in.len)
		in.len = 0;
	fclose(f);
	convert_once(in.data, in.len, true, &with);
	convert_once(in.data, in.len, false, &without);
	g_files++;
	if (with.open_err != without.open_err || with.err != without.err)
		what = "error";
	else if (with.samples != without.samples || with.filtered != without.filtered ||
		 with.frames != without.frames || with.stacks != without.stacks ||
		 with.threads != without.threads)
		what = "counts";
	else if (!same_bytes(&with.pprof, &without.pprof))
		what = "pprof";
	else if (!same_bytes(&with.jfr, &without.jfr))
		what = "JFR";
	if (what) {
		printf("FAIL %s: %s differ with and without the sample cache\n", path, what);
		g_failed++;
	} else {
		printf("ok   %s (%llu samples)\n", path, (unsigned long long)with.samples);
	}
	dbuf_release(&with.pprof);
	dbuf_release(&with.jfr);
	dbuf_release(&without.pprof);
	dbuf_release(&without.jfr);
	dbuf_release(&in);
}

#define PID 4242
#define UTEXT 0x400000ull
#define KTEXT 0xffffffff81000000ull

/* A record's sample_id (sample_id_all), as a sample's fields begin: tid, time and cpu. */
static void rec_id(struct pdb *p, uint64_t time)
{
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, time);
	pdb_u32(p, 0);
	pdb_u32(p, 0);
}

static void rec_comm(struct pdb *p, const char *name, bool exec, uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_COMM, exec ? PERF_MISC_COMM_EXEC : 0);
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_str8(p, name);
	rec_id(p, time);
	pdb_rec_end(p);
}

static void rec_mmap2(struct pdb *p, uint64_t start, const char *path, uint64_t ino, uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_MMAP2, PERF_MISC_USER);
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, start);
	pdb_u64(p, 0x1000);
	pdb_u64(p, 0);
	pdb_u32(p, 8); /* maj, min */
	pdb_u32(p, 1);
	pdb_u64(p, ino);
	pdb_u64(p, 0);
	pdb_u32(p, 5); /* r-x */
	pdb_u32(p, 2);
	pdb_str8(p, path);
	rec_id(p, time);
	pdb_rec_end(p);
}

/* The kernel's map (perf writes it as an MMAP of pid -1). */
static void rec_kernel(struct pdb *p)
{
	pdb_rec_begin(p, PERF_REC_MMAP, PERF_MISC_KERNEL);
	pdb_u32(p, UINT32_MAX);
	pdb_u32(p, 0);
	pdb_u64(p, KTEXT);
	pdb_u64(p, 0x1000000);
	pdb_u64(p, KTEXT);
	pdb_str8(p, "[kernel.kallsyms]_text");
	pdb_u32(p, UINT32_MAX);
	pdb_u32(p, 0);
	pdb_u64(p, 0);
	pdb_u64(p, 0); /* cpu, res */
	pdb_rec_end(p);
}

static void rec_bpf(struct pdb *p, uint64_t addr, uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_KSYMBOL, 0);
	pdb_u64(p, addr);
	pdb_u32(p, 0x100);
	pdb_u16(p, 1); /* PERF_RECORD_KSYMBOL_TYPE_BPF */
	pdb_u16(p, 0);
	pdb_str8(p, "bpf_prog_test");
	rec_id(p, time);
	pdb_rec_end(p);
}

/* A sample at ip in cpumode mode with the chain given. */
static void rec_sample(struct pdb *p, uint16_t mode, uint64_t ip, const uint64_t *chain, size_t n, uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_SAMPLE, mode);
	pdb_u64(p, ip);
	rec_id(p, time);
	pdb_u64(p, 1000);
	pdb_u64(p, n);
	for (size_t i = 0; i < n; i++)
		pdb_u64(p, chain[i]);
	pdb_rec_end(p);
}

/* The samples each built recording repeats around its change. */
static void rec_samples(struct pdb *p, uint64_t time)
{
	const uint64_t user[] = { PERF_CONTEXT_USER, UTEXT + 0x100, UTEXT + 0x200 };
	const uint64_t kern[] = { PERF_CONTEXT_KERNEL, KTEXT + 0x100, KTEXT + 0x200, PERF_CONTEXT_USER,
				  UTEXT + 0x100 };
	/* a user-mode sample with kernel frames in its chain (the chain's first address is its IP's copy) */
	const uint64_t ukern[] = { PERF_CONTEXT_KERNEL, KTEXT + 0x100, KTEXT + 0x180, PERF_CONTEXT_USER,
				   UTEXT + 0x100 };

	rec_sample(p, PERF_MISC_USER, UTEXT + 0x100, user, 3, time);
	rec_sample(p, PERF_MISC_KERNEL, KTEXT + 0x100, kern, 5, time + 1);
	rec_sample(p, PERF_MISC_USER, UTEXT + 0x100, ukern, 5, time + 2);
	/* one IP in three modes: the kernel's space does not map it, a guest's is not resolved */
	rec_sample(p, PERF_MISC_USER, UTEXT + 0x300, NULL, 0, time + 3);
	rec_sample(p, PERF_MISC_KERNEL, UTEXT + 0x300, NULL, 0, time + 4);
	rec_sample(p, PERF_MISC_GUEST_USER, UTEXT + 0x300, NULL, 0, time + 5);
}

enum change { CH_MAPPING, CH_BPF, CH_COMM, CH__COUNT };

static const char *const change_name[CH__COUNT] = { "a replaced mapping", "a BPF program", "a renamed thread" };

static void build(struct pdb *p, enum change ch)
{
	struct pdb_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = 0, .period = 1000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.flags = (1ull << PERF_ATTR_FLAG_SAMPLE_ID_ALL) | (1ull << PERF_ATTR_FLAG_MMAP2),
	};

	pdb_init(p, false);
	pdb_file_begin_one(p, &a, 1);
	rec_kernel(p);
	rec_comm(p, "first", true, 100);
	rec_mmap2(p, UTEXT, "/nonexistent/a.so", 1, 110);
	rec_samples(p, 200);
	if (ch == CH_MAPPING)
		rec_mmap2(p, UTEXT, "/nonexistent/b.so", 2, 300);
	else if (ch == CH_BPF)
		rec_bpf(p, KTEXT + 0x80, 300);
	else
		rec_comm(p, "second", false, 300);
	rec_samples(p, 400);
	pdb_rec_begin(p, PERF_REC_FINISHED_ROUND, 0);
	pdb_rec_end(p);
	pdb_file_end(p, NULL, 0);
}

static void check_built(void)
{
	for (int ch = 0; ch < CH__COUNT; ch++) {
		struct outcome with, without;
		struct pdb p;
		const char *what = NULL;

		build(&p, (enum change)ch);
		convert_once(p.b.data, p.b.len, true, &with);
		convert_once(p.b.data, p.b.len, false, &without);
		g_files++;
		if (with.open_err || with.err || with.samples != 12)
			what = "the conversion failed";
		else if (with.stacks != without.stacks || !same_bytes(&with.pprof, &without.pprof) ||
			 !same_bytes(&with.jfr, &without.jfr))
			what = "the outputs differ with and without the sample cache";
		if (what) {
			printf("FAIL built recording with %s: %s\n", change_name[ch], what);
			g_failed++;
		} else {
			printf("ok   built recording with %s\n", change_name[ch]);
		}
		dbuf_release(&with.pprof);
		dbuf_release(&with.jfr);
		dbuf_release(&without.pprof);
		dbuf_release(&without.jfr);
		pdb_release(&p);
	}
}

static bool wanted(const char *name, bool corpus)
{
	if (!corpus)
		return !fnmatch("*.data", name, 0);
	return fnmatch("*.md", name, 0) && fnmatch("*.txt", name, 0) && fnmatch("*.buildids", name, 0) &&
	       fnmatch("*.expected*", name, 0);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every wanted file under dir, in name order (the order same-outputs.sh takes them in). */
static void walk(const char *dir, bool corpus)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		printf("FAIL %s: cannot open\n", dir);
		g_failed++;
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		if (asprintf(&names[n++], "%s/%s", dir, e->d_name) < 0)
			abort();
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		const char *base = strrchr(names[i], '/') + 1;

		if (!stat(names[i], &st) && S_ISDIR(st.st_mode))
			walk(names[i], corpus);
		else if (S_ISREG(st.st_mode) && wanted(base, corpus))
			check_file(names[i]);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	bool corpus = argc > 1 && !strcmp(argv[1], "--corpus");
	int first = corpus ? 2 : 1;
	struct stat st;

	/* no perf-PID.map, ~/.debug or debuginfod of this machine */
	setenv("HOME", NOWHERE "/home", 1);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("PERF_BUILDID_DIR");
	if (first >= argc) {
		fprintf(stderr, "usage: %s [--corpus] DIR...\n", argv[0]);
		return 2;
	}
	if (!corpus)
		check_built();
	for (int i = first; i < argc; i++) {
		if (corpus && stat(argv[i], &st)) {
			printf("SKIP: corpus not found at %s\n", argv[i]);
			printf("0 passed, 0 failed, 1 skipped\n");
			return 77;
		}
		walk(argv[i], corpus);
	}
	printf("%d passed, %d failed, 0 skipped\n", g_files - g_failed, g_failed);
	if (!g_files && !g_failed) {
		printf("FAIL: no recording found\n");
		return 1;
	}
	return g_failed ? 1 : 0;
}
