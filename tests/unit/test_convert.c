/*
 * The whole conversion on perf.data built byte by byte (pdbuild): what the
 * model and both writers say of a frame, for cases a live recording hits
 * only by chance. The vDSO: a frame in it gets an ELF address only from the
 * program headers of the recorded image (perf's copy under ~/.debug, or this
 * kernel's own vDSO when the build-ids match), never its runtime address.
 * And the two halves of how locations intern symbolized frames: symjob's
 * numbers of its results' strings and functions, the model's keyed ids.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, mkdtemp */
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "buildid/buildid.h"
#include "core/dbuf.h"
#include "jfrwriter/jfr.h"
#include "model/profile.h"
#include "pipeline/convert.h"
#include "pipeline/symjob.h"
#include "pprofwriter/pprof.h"
#include "procmap/procmap.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "symbolize/symbolize.h"
#include "tests/unit/pdbuild.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VDSO_START 0x7ffff7fc1000ull
#define PID 4242

/* The running vDSO: its image, build-id, one function in it and its first PT_LOAD. */
struct vdso {
	const uint8_t *image;
	size_t size;
	uint8_t bid[BUILDID_MAX];
	size_t bid_len;
	char func[128];
	uint64_t func_va;       /* ELF address inside func */
	uint64_t seg_off, seg_va;
	uint64_t header_va;     /* an ELF address in the PT_LOAD that no symbol covers */
};

static bool vdso_get(struct vdso *v)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t phnum;
	GElf_Phdr ph;
	bool have_seg = false;

	memset(v, 0, sizeof(*v));
	if (buildid_running_vdso((const void **)&v->image, &v->size, v->bid, &v->bid_len) !=
	    CONV_E_OK)
		return false;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)v->image, v->size);
	if (!e)
		return false;
	if (elf_getphdrnum(e, &phnum) == 0)
		for (size_t i = 0; i < phnum && !have_seg; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
				v->seg_off = ph.p_offset;
				v->seg_va = ph.p_vaddr;
				have_seg = true;
			}
	while (have_seg && !v->func[0] && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_size < 8 || !(n = elf_strptr(e, sh.sh_link, s.st_name)) ||
			    strncmp(n, "__vdso_", 7))
				continue;
			snprintf(v->func, sizeof(v->func), "%s", n);
			v->func_va = s.st_value + 4;
			break;
		}
	}
	/* inside the ELF header: mapped, yet no function is there */
	v->header_va = v->seg_va + 0x10;
	elf_end(e);
	return have_seg && v->func[0];
}

static uint64_t runtime_of(const struct vdso *v, uint64_t va)
{
	return VDSO_START + (va - v->seg_va + v->seg_off);
}

static void rec_sample(struct pdb *p, uint64_t ip, uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_SAMPLE, PERF_MISC_USER);
	pdb_u64(p, ip);
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, time);
	pdb_u64(p, 1000000);
	pdb_u64(p, 2);
	pdb_u64(p, PERF_CONTEXT_USER);
	pdb_u64(p, ip);
	pdb_rec_end(p);
}

/*
 * A process that maps [vdso] (inline build-id `bid`, the record's pgoff as
 * given) and has two samples in it: in a function, and in the ELF header.
 */
static void build(struct pdb *p, const struct vdso *v, const uint8_t *bid, uint64_t pgoff)
{
	struct pdb_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = 0, .period = 1000000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.flags = (1ull << PERF_ATTR_FLAG_SAMPLE_ID_ALL) | (1ull << PERF_ATTR_FLAG_MMAP2),
	};

	pdb_init(p, false);
	pdb_file_begin_one(p, &a, 1);
	pdb_rec_begin(p, PERF_REC_COMM, PERF_MISC_COMM_EXEC);
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_str8(p, "vdsouser");
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, 100);
	pdb_rec_end(p);
	pdb_rec_begin(p, PERF_REC_MMAP2, PERF_MISC_USER | PERF_MISC_MMAP_BUILD_ID);
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, VDSO_START);
	pdb_u64(p, (v->size + 0xfff) & ~0xfffull);
	pdb_u64(p, pgoff);
	pdb_u8(p, (uint8_t)v->bid_len);
	pdb_u8(p, 0);
	pdb_u16(p, 0);
	{
		uint8_t pad[20] = { 0 };

		memcpy(pad, bid, v->bid_len < 20 ? v->bid_len : 20);
		pdb_bytes(p, pad, 20);
	}
	pdb_u32(p, 5); /* r-x */
	pdb_u32(p, 2);
	pdb_str8(p, "[vdso]");
	pdb_u32(p, PID);
	pdb_u32(p, PID);
	pdb_u64(p, 200);
	pdb_rec_end(p);
	rec_sample(p, runtime_of(v, v->func_va), 300);
	rec_sample(p, runtime_of(v, v->header_va), 400);
	pdb_rec_begin(p, PERF_REC_FINISHED_ROUND, 0);
	pdb_rec_end(p);
	pdb_file_end(p, NULL, 0);
}

struct outcome {
	struct prof p;
	struct dbuf jfr;   /* the JFR file's bytes */
	struct dbuf pprof; /* the uncompressed protobuf */
	struct jfr_stats js;
};

static void convert_n(const struct pdb *in, struct outcome *o, uint64_t samples)
{
	struct rdr_opts ro = { .reorder_limit = 1u << 20, .max_problems = 16 };
	struct convert_opts co;
	struct convert_stats cs;
	struct conv_diag d;
	struct jfr_opts jo = { 0 };
	struct rdr *r = NULL;
	struct stat st;
	int fd;

	memset(&d, 0, sizeof(d));
	memset(&co, 0, sizeof(co));
	memset(&cs, 0, sizeof(cs));
	assert_int_equal(rdr_open_mem(&r, in->b.data, in->b.len, &ro, &d), CONV_E_OK);
	co.pm.kernel_notes = "/nonexistent/kernel/notes";
	co.pm.jit_dir = "/nonexistent/jit";
	co.sj.offline = true;
	co.sj.jobs = 1;
	co.keep_events = true;
	prof_init(&o->p);
	assert_int_equal(convert_run(r, &co, &o->p, &cs, &d), CONV_E_OK);
	assert_int_equal(cs.samples, samples);
	convert_stats_release(&cs);
	rdr_close(r);

	fd = memfd_create("test-jfr", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(jfr_write(&o->p, &jo, fd, &o->js, &d), CONV_E_OK);
	assert_int_equal(fstat(fd, &st), 0);
	dbuf_init(&o->jfr, 0);
	assert_true(dbuf_reserve(&o->jfr, (size_t)st.st_size));
	assert_int_equal(pread(fd, o->jfr.data, (size_t)st.st_size, 0), st.st_size);
	o->jfr.len = (size_t)st.st_size;
	close(fd);
	dbuf_init(&o->pprof, 0);
	assert_int_equal(pprof_encode(&o->p, &o->pprof), CONV_E_OK);
}

/* The vDSO cases' files hold two samples. */
static void convert(const struct pdb *in, struct outcome *o)
{
	convert_n(in, o, 2);
}

static void outcome_release(struct outcome *o)
{
	prof_release(&o->p);
	dbuf_release(&o->jfr);
	dbuf_release(&o->pprof);
}

static bool has_bytes(const struct dbuf *b, const char *s)
{
	return memmem(b->data, b->len, s, strlen(s)) != NULL;
}

/* The location whose runtime address is addr. */
static const struct prof_location *loc_at(const struct prof *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nr_locations; i++)
		if (p->locations[i].address == addr)
			return &p->locations[i];
	fail_msg("no location at %#llx", (unsigned long long)addr);
	return NULL;
}

static const char *leaf_name(const struct prof *p, const struct prof_location *l)
{
	if (!l->nr_lines)
		return "";
	return strtab_get(&p->strs, p->functions[p->lines[l->first_line].function].name);
}

/*
 * What both writers must say when the image is found: the function's name;
 * for the header address, a <remote> frame at its ELF address (a few bytes
 * into the image), and the mapping's build-id in the pprof and the JFR.
 */
static void check_found(const struct vdso *v, const struct outcome *o, const char *bid_hex)
{
	const struct prof_location *f = loc_at(&o->p, runtime_of(v, v->func_va));
	const struct prof_location *h = loc_at(&o->p, runtime_of(v, v->header_va));
	char want[64];

	assert_string_equal(leaf_name(&o->p, f), v->func);
	assert_true(f->has_elf_addr);
	assert_int_equal(f->elf_addr, v->func_va);
	assert_int_equal(h->nr_lines, 0);
	assert_true(h->has_elf_addr);
	assert_int_equal(h->elf_addr, v->header_va);
	assert_true(h->mapping != PROF_NONE);
	assert_string_equal(strtab_get(&o->p.strs, o->p.mappings[h->mapping].build_id), bid_hex);
	assert_true(o->p.mappings[h->mapping].has_load_bias);
	assert_int_equal(o->p.mappings[h->mapping].load_bias, runtime_of(v, 0));
	snprintf(want, sizeof(want), "(L0x%llx;)L;", (unsigned long long)v->header_va);
	assert_true(has_bytes(&o->jfr, want));
	assert_int_equal(o->js.remote_frames, 1);
	assert_true(has_bytes(&o->jfr, v->func));
	assert_true(has_bytes(&o->jfr, bid_hex));
	assert_true(has_bytes(&o->pprof, bid_hex));
	assert_true(has_bytes(&o->pprof, v->func));
	/* never the runtime address as an ELF address */
	snprintf(want, sizeof(want), "(L0x%llx;)L;", (unsigned long long)runtime_of(v, v->header_va));
	assert_false(has_bytes(&o->jfr, want));
}

static char g_home[256];

static void set_home(const char *sub)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", g_home, sub);
	mkdir(p, 0700);
	setenv("HOME", p, 1);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(g_home, sizeof(g_home), "%s/conv-test-convert-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_home))
		return -1;
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("PERF_BUILDID_DIR");
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_home);
	return system(cmd) == 0 ? 0 : -1;
}

/* The recorded vDSO is this kernel's (same build-id), ~/.debug empty: this process's image. */
static void test_vdso_running(void **state)
{
	struct vdso v;
	struct pdb in;
	struct outcome o;
	char hex[2 * BUILDID_MAX + 1];

	(void)state;
	if (!vdso_get(&v))
		skip();
	set_home("empty");
	buildid_hex(v.bid, v.bid_len, hex);
	/* pgoff 0 as the kernel writes it, and an anonymous-style pgoff that must not count */
	for (int k = 0; k < 2; k++) {
		build(&in, &v, v.bid, k ? VDSO_START : 0);
		convert(&in, &o);
		check_found(&v, &o, hex);
		outcome_release(&o);
		pdb_release(&in);
	}
}

/* Another kernel's vDSO, no copy anywhere: no name, no ELF address, not <remote>. */
static void test_vdso_other_kernel(void **state)
{
	struct vdso v;
	struct pdb in;
	struct outcome o;
	uint8_t bid[BUILDID_MAX];
	char hex[2 * BUILDID_MAX + 1], want[64];
	const struct prof_location *h;

	(void)state;
	if (!vdso_get(&v))
		skip();
	set_home("empty");
	memcpy(bid, v.bid, v.bid_len);
	bid[0] ^= 0xff;
	buildid_hex(bid, v.bid_len, hex);
	build(&in, &v, bid, 0);
	convert(&in, &o);
	h = loc_at(&o.p, runtime_of(&v, v.header_va));
	assert_false(h->has_elf_addr);
	assert_int_equal(h->nr_lines, 0);
	assert_false(loc_at(&o.p, runtime_of(&v, v.func_va))->has_elf_addr);
	/* both writers keep the build-id; the JFR writes no <remote> frame without an ELF address */
	assert_string_equal(strtab_get(&o.p.strs, o.p.mappings[h->mapping].build_id), hex);
	assert_true(has_bytes(&o.pprof, hex));
	assert_true(has_bytes(&o.jfr, hex));
	assert_int_equal(o.js.remote_frames, 0);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)runtime_of(&v, v.header_va));
	assert_true(has_bytes(&o.jfr, want));
	outcome_release(&o);
	pdb_release(&in);
}

/* Another kernel's vDSO that perf saved under ~/.debug/[vdso]/<build-id>/vdso. */
static void test_vdso_perf_cache(void **state)
{
	struct vdso v;
	struct pdb in;
	struct outcome o;
	uint8_t bid[BUILDID_MAX], *copy;
	char hex[2 * BUILDID_MAX + 1], path[1024];
	FILE *f;

	(void)state;
	if (!vdso_get(&v))
		skip();
	set_home("cache");
	memcpy(bid, v.bid, v.bid_len);
	bid[0] ^= 0xff;
	buildid_hex(bid, v.bid_len, hex);
	/* the image with its build-id note rewritten to the other kernel's */
	copy = malloc(v.size);
	assert_non_null(copy);
	memcpy(copy, v.image, v.size);
	{
		uint8_t *at = memmem(copy, v.size, v.bid, v.bid_len);

		assert_non_null(at);
		memcpy(at, bid, v.bid_len);
	}
	snprintf(path, sizeof(path), "%s/cache/.debug", g_home);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cache/.debug/[vdso]", g_home);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cache/.debug/[vdso]/%s", g_home, hex);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cache/.debug/[vdso]/%s/vdso", g_home, hex);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(copy, 1, v.size, f), v.size);
	fclose(f);
	free(copy);
	build(&in, &v, bid, 0);
	convert(&in, &o);
	check_found(&v, &o, hex);
	outcome_release(&o);
	pdb_release(&in);
}

/*
 * A perf record --off-cpu file (its BPF program's offcpu-time event: PERIOD
 * = ns off CPU, the sample's time the end), built byte by byte since
 * Debian's perf cannot record one: each sample is a whole interval, under
 * the off-CPU types of the pprof and as perf.OffCPU events in the JFR.
 */
static void test_offcpu_time_file(void **state)
{
	struct pdb_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = 10 /* bpf-output */, .period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.flags = (1ull << PERF_ATTR_FLAG_SAMPLE_ID_ALL) | (1ull << PERF_ATTR_FLAG_MMAP2),
	};
	struct pdb in, desc;
	struct pdb_feature f;
	struct outcome o;
	const uint64_t periods[] = { 5000, 7000, 9000 };
	int64_t n = 0, ns = 0;
	size_t t0 = SIZE_MAX;

	(void)state;
	set_home("offcpu");
	pdb_init(&in, false);
	pdb_file_begin_one(&in, &a, 1);
	for (int i = 0; i < 3; i++) {
		pdb_rec_begin(&in, PERF_REC_SAMPLE, PERF_MISC_USER);
		pdb_u64(&in, 0x401000);
		pdb_u32(&in, PID);
		pdb_u32(&in, PID);
		pdb_u64(&in, 100000 + 100000 * (uint64_t)i);
		pdb_u64(&in, periods[i]);
		pdb_u64(&in, 2);
		pdb_u64(&in, PERF_CONTEXT_USER);
		pdb_u64(&in, 0x401000);
		pdb_rec_end(&in);
	}
	/* EVENT_DESC: the event's name, offcpu-time */
	pdb_init(&desc, false);
	pdb_u32(&desc, 1);
	pdb_u32(&desc, 128);
	pdb_attr(&desc, &a);
	pdb_u32(&desc, 1);
	pdb_hstr(&desc, "offcpu-time");
	pdb_u64(&desc, 1);
	f.id = PERF_FEAT_EVENT_DESC;
	f.data = desc.b.data;
	f.len = desc.b.len;
	pdb_file_end(&in, &f, 1);
	convert_n(&in, &o, 3);
	assert_int_not_equal(o.p.offcpu_event, PROF_NONE);
	for (size_t i = 0; i < o.p.nr_types; i++)
		if (!strcmp(strtab_get(&o.p.strs, o.p.types[i].type), "off_cpu_samples"))
			t0 = i;
	assert_true(t0 != SIZE_MAX && t0 + 1 < o.p.nr_types);
	assert_string_equal(strtab_get(&o.p.strs, o.p.types[t0 + 1].type), "off_cpu");
	assert_string_equal(strtab_get(&o.p.strs, o.p.types[t0 + 1].unit), "nanoseconds");
	for (size_t i = 0; i < o.p.nr_samples; i++) {
		n += prof_sample_value(&o.p, &o.p.samples[i], t0);
		ns += prof_sample_value(&o.p, &o.p.samples[i], t0 + 1);
	}
	assert_int_equal(n, 3);
	assert_int_equal(ns, 21000);
	assert_true(has_bytes(&o.jfr, "perf.OffCPU"));
	/* the summary's per-event counts leave the intervals out: they are no recorded samples */
	assert_true(o.p.events_desc[o.p.offcpu_event].offcpu);
	assert_int_equal(o.p.events_desc[o.p.offcpu_event].samples, 3);
	outcome_release(&o);
	pdb_release(&desc);
	pdb_release(&in);
}

/*
 * A builder's keys: a key's id is kept on first use and given again without
 * looking at the text (which is why a key must always name one string);
 * ids are given in the same order as without keys.
 */
static void test_prof_keyed(void **state)
{
	struct prof p, q;
	uint32_t a, b, f, g;

	(void)state;
	prof_init(&p);
	prof_init(&q);
	a = prof_str_keyed(&p, 5, "alpha");
	assert_int_equal(a, prof_str(&q, "alpha"));
	assert_int_equal(prof_str_keyed(&p, 5, "not looked at"), a);
	assert_int_equal(p.strs.count, q.strs.count);
	b = prof_str_keyed(&p, PROF_NONE, "beta");
	assert_int_equal(b, prof_str(&q, "beta"));
	assert_int_equal(prof_str_keyed(&p, 0, "beta"), b); /* a new key for a known string */
	assert_int_equal(prof_function_of_key(&p, 2), PROF_NONE);
	f = prof_function_keyed(&p, 2, a, b, 0, 7);
	assert_int_equal(f, prof_function(&q, a, b, 0, 7));
	assert_int_equal(prof_function_of_key(&p, 2), f);
	assert_int_equal(prof_function_keyed(&p, 2, b, b, b, 1), f);
	assert_int_equal(p.nr_functions, 1);
	g = prof_function_keyed(&p, PROF_NONE, b, a, 0, 7);
	assert_int_equal(g, prof_function(&q, b, a, 0, 7));
	assert_int_equal(prof_function_of_key(&p, PROF_NONE), PROF_NONE);
	assert_int_equal(prof_function_of_key(&p, 3), PROF_NONE);
	prof_release(&p);
	prof_release(&q);
}

#define KBASE 0xffffffff81000000ull

/*
 * symjob's numbers of its results' strings and functions, on kernel frames
 * named by a --kallsyms file: one number per distinct function (two
 * addresses in one symbol share it), its strings' numbers below the
 * string count, a name and its equal system name one number.
 */
static void test_symjob_numbers(void **state)
{
	static const char ks[] = "ffffffff81000000 T _text\n"
				 "ffffffff81000100 T func_a\n"
				 "ffffffff81000200 T func_b\n"
				 "ffffffff81000300 T _etext\n";
	static const uint64_t addrs[] = { KBASE + 0x110, KBASE + 0x1f0, KBASE + 0x204 };
	struct procmap_opts po = { .kernel_notes = "/nonexistent/kernel/notes",
				   .jit_dir = "/nonexistent/jit" };
	struct symjob_opts so = { .offline = true, .jobs = 1 };
	struct procmap *pm = procmap_new(&po);
	struct symjob *sj = NULL;
	struct rdr_event ev;
	const struct symjob_result *r[3];
	const struct symjob_function *fn[3];
	char path[512];
	uint32_t id[3];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms", g_home);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(ks, 1, sizeof(ks) - 1, f), sizeof(ks) - 1);
	assert_int_equal(fclose(f), 0);
	assert_non_null(pm);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_MMAP;
	ev.misc = PERF_MISC_KERNEL;
	ev.attr = -1;
	ev.u.mmap.pid = ev.u.mmap.tid = 0xffffffffu;
	ev.u.mmap.start = KBASE;
	ev.u.mmap.len = 0x1000000;
	ev.u.mmap.filename = "[kernel.kallsyms]_text";
	ev.u.mmap.prot = 5;
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
	assert_int_equal(procmap_mapping_count(pm), 1);
	procmap_finish(pm);
	so.kallsyms = path;
	assert_int_equal(symjob_new(&sj, &so, pm, NULL), CONV_E_OK);
	for (int i = 0; i < 3; i++)
		id[i] = symjob_add(sj, 0, addrs[i] - KBASE);
	assert_int_equal(id[0], 0);
	assert_int_equal(id[2], 2);
	assert_int_equal(symjob_run(sj, NULL), CONV_E_OK);
	for (int i = 0; i < 3; i++) {
		r[i] = symjob_get(sj, id[i]);
		assert_non_null(r[i]);
		assert_int_equal(r[i]->src, SYMSRC_KALLSYMS);
		assert_int_equal(r[i]->nr, 1);
		assert_non_null(r[i]->funcs);
		fn[i] = symjob_function(sj, r[i]->funcs[0]);
		assert_non_null(fn[i]);
		assert_true(fn[i]->function < symjob_string_count(sj));
		assert_true(fn[i]->file < symjob_string_count(sj));
		assert_int_equal(fn[i]->function, fn[i]->system_name);
		assert_int_not_equal(fn[i]->function, fn[i]->file);
	}
	assert_string_equal(r[0]->frames[0].function, "func_a");
	assert_string_equal(r[2]->frames[0].function, "func_b");
	assert_int_equal(r[0]->funcs[0], r[1]->funcs[0]);
	assert_int_not_equal(r[0]->funcs[0], r[2]->funcs[0]);
	assert_int_not_equal(fn[0]->function, fn[2]->function);
	assert_int_equal(fn[0]->file, fn[2]->file);
	assert_int_equal(symjob_function_count(sj), 2);
	assert_null(symjob_function(sj, 2));
	assert_null(symjob_function(sj, SYMJOB_NONE));
	symjob_free(sj);
	procmap_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vdso_running),
		cmocka_unit_test(test_vdso_other_kernel),
		cmocka_unit_test(test_vdso_perf_cache),
		cmocka_unit_test(test_offcpu_time_file),
		cmocka_unit_test(test_prof_keyed),
		cmocka_unit_test(test_symjob_numbers),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
