/*
 * procmap tests: sequences of decoded records (as the reader delivers them)
 * and the attribution each sample must get.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "procmap/jitmap.h"
#include "procmap/procmap.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define KPID 0xffffffffu
#define KTEXT 0xffffffff81000000ull

static struct rdr_event ev;

static void feed_mmap(struct procmap *pm, uint32_t pid, uint64_t start, uint64_t len,
		      uint64_t pgoff, const char *name, bool exec, uint64_t time)
{
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_MMAP2;
	ev.misc = pid == KPID ? PERF_MISC_KERNEL : PERF_MISC_USER;
	ev.has_time = time != 0;
	ev.time = time;
	ev.u.mmap.pid = pid;
	ev.u.mmap.tid = pid;
	ev.u.mmap.start = start;
	ev.u.mmap.len = len;
	ev.u.mmap.pgoff = pgoff;
	ev.u.mmap.filename = name;
	ev.u.mmap.is_mmap2 = true;
	ev.u.mmap.prot = exec ? 5 : 3;
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
}

static void feed_comm(struct procmap *pm, uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_COMM;
	ev.u.comm.pid = pid;
	ev.u.comm.tid = tid;
	ev.u.comm.comm = comm;
	ev.u.comm.exec = exec;
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
}

static void feed_fork(struct procmap *pm, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		      uint32_t ptid)
{
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.u.fork_exit.pid = pid;
	ev.u.fork_exit.ppid = ppid;
	ev.u.fork_exit.tid = tid;
	ev.u.fork_exit.ptid = ptid;
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
}

/* Resolves a sample of (pid, tid) at ip with an optional callchain. */
static const struct pm_frame *sample(struct procmap *pm, uint32_t pid, uint32_t tid, uint64_t ip,
				     bool kernel, const uint64_t *chain, uint64_t nr, size_t *n,
				     uint32_t *proc)
{
	const struct pm_frame *f;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_SAMPLE;
	ev.misc = kernel ? PERF_MISC_KERNEL : PERF_MISC_USER;
	ev.u.sample.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  (chain ? PERF_SAMPLE_CALLCHAIN : 0);
	ev.u.sample.ip = ip;
	ev.u.sample.pid = pid;
	ev.u.sample.tid = tid;
	ev.u.sample.callchain = chain;
	ev.u.sample.callchain_nr = nr;
	assert_int_equal(procmap_resolve(pm, &ev, &f, n, proc), CONV_E_OK);
	return f;
}

/* The path of the mapping a leaf at ip resolves to, or NULL. */
static const char *leaf_path(struct procmap *pm, uint32_t pid, uint64_t ip, uint32_t *proc)
{
	size_t n;
	uint32_t pr;
	const struct pm_frame *f = sample(pm, pid, pid, ip, false, NULL, 0, &n, &pr);

	if (proc)
		*proc = pr;
	assert_int_equal(n, 1);
	return f[0].mapping == PM_NO_MAPPING ? NULL : procmap_mapping(pm, f[0].mapping)->path;
}

static void test_fork_exec_exit(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	uint32_t proc_a, proc_b;
	(void)state;

	feed_comm(pm, 100, 100, "parent", false);
	feed_mmap(pm, 100, 0x400000, 0x1000, 0, "/bin/parent", true, 1);
	/* a thread shares the space */
	feed_fork(pm, PERF_REC_FORK, 100, 100, 101, 100);
	assert_string_equal(leaf_path(pm, 100, 0x400100, &proc_a), "/bin/parent");
	{
		size_t n;
		uint32_t pr;
		const struct pm_frame *f = sample(pm, 100, 101, 0x400200, false, NULL, 0, &n, &pr);

		assert_int_equal(pr, proc_a);
		assert_int_not_equal(f[0].mapping, PM_NO_MAPPING);
		assert_string_equal(procmap_thread_name(pm, 101), "parent");
	}
	/* fork copies the space; the child's later maps are its own */
	feed_fork(pm, PERF_REC_FORK, 200, 100, 200, 100);
	assert_string_equal(leaf_path(pm, 200, 0x400100, &proc_b), "/bin/parent");
	assert_int_not_equal(proc_a, proc_b);
	feed_mmap(pm, 200, 0x500000, 0x1000, 0, "/lib/childonly.so", true, 2);
	assert_null(leaf_path(pm, 100, 0x500100, NULL));
	/* the copy is shared until one of them maps: the parent's later maps are not the child's */
	feed_fork(pm, PERF_REC_FORK, 210, 100, 210, 100);
	feed_fork(pm, PERF_REC_FORK, 220, 100, 220, 100);
	feed_mmap(pm, 100, 0x510000, 0x1000, 0, "/lib/parentlater.so", true, 6);
	assert_string_equal(leaf_path(pm, 100, 0x510100, NULL), "/lib/parentlater.so");
	assert_null(leaf_path(pm, 210, 0x510100, NULL));
	assert_null(leaf_path(pm, 220, 0x510100, NULL));
	assert_string_equal(leaf_path(pm, 210, 0x400100, NULL), "/bin/parent");
	feed_mmap(pm, 210, 0x400000, 0x1000, 0, "/bin/other", true, 7);
	assert_string_equal(leaf_path(pm, 210, 0x400100, NULL), "/bin/other");
	assert_string_equal(leaf_path(pm, 220, 0x400100, NULL), "/bin/parent");
	assert_string_equal(leaf_path(pm, 100, 0x400100, NULL), "/bin/parent");
	/* exec: a new generation with an empty space */
	feed_comm(pm, 200, 200, "child", true);
	assert_null(leaf_path(pm, 200, 0x400100, &proc_b));
	feed_mmap(pm, 200, 0x400000, 0x2000, 0, "/bin/child", true, 3);
	assert_string_equal(leaf_path(pm, 200, 0x400100, &proc_b), "/bin/child");
	assert_int_equal(procmap_proc(pm, proc_b)->generation, 1);
	assert_string_equal(procmap_proc(pm, proc_b)->comm, "child");
	/*
	 * inside execve (kernel frames, the COMM of the exec already written),
	 * the user IP saved at kernel entry is the caller's, in the old image:
	 * the generation the exec replaced names it when the new one maps
	 * nothing there; a user-mode sample, or a caller frame, does not
	 */
	feed_mmap(pm, 300, 0x7f0000000000, 0x10000, 0, "/lib/libold.so", true, 4);
	feed_comm(pm, 300, 300, "newimage", true);
	feed_mmap(pm, 300, 0x600000, 0x1000, 0, "/bin/newimage", true, 5);
	{
		const uint64_t chain[] = { PERF_CONTEXT_KERNEL, KTEXT + 0x10, PERF_CONTEXT_USER,
					   0x7f0000000100, 0x7f0000000200 };
		size_t n;
		uint32_t pr;
		const struct pm_frame *f = sample(pm, 300, 300, KTEXT + 0x10, true, chain, 5, &n, &pr);

		assert_int_equal(n, 3);
		assert_int_not_equal(f[1].mapping, PM_NO_MAPPING);
		assert_string_equal(procmap_mapping(pm, f[1].mapping)->path, "/lib/libold.so");
		assert_int_equal(f[1].addr, 0x7f0000000100); /* the entry IP is exact */
		assert_int_equal(f[2].mapping, PM_NO_MAPPING); /* a caller: not the saved IP */
		assert_int_equal(procmap_stats(pm)->frames_exec_window, 1);
		assert_null(leaf_path(pm, 300, 0x7f0000000100, NULL));
		/* what the new image maps is the new image's, entry or not */
		{
			const uint64_t chain2[] = { PERF_CONTEXT_KERNEL, KTEXT + 0x10, PERF_CONTEXT_USER,
						    0x600100 };

			f = sample(pm, 300, 300, KTEXT + 0x10, true, chain2, 4, &n, &pr);
			assert_int_equal(n, 2);
			assert_string_equal(procmap_mapping(pm, f[1].mapping)->path, "/bin/newimage");
		}
	}
	/* exit keeps the process for late samples */
	feed_fork(pm, PERF_REC_EXIT, 200, 100, 200, 100);
	assert_string_equal(leaf_path(pm, 200, 0x400100, NULL), "/bin/child");
	/* pid reuse: a new fork of 200 starts from its (new) parent's space */
	feed_fork(pm, PERF_REC_FORK, 200, 100, 200, 100);
	assert_string_equal(leaf_path(pm, 200, 0x400100, &proc_a), "/bin/parent");
	assert_int_not_equal(proc_a, proc_b);
	assert_int_equal(procmap_stats(pm)->exec_generations, 2); /* 200's and 300's */
	procmap_free(pm);
}

static void test_overlap(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	size_t n;
	uint32_t pr;
	const struct pm_frame *f;
	(void)state;

	feed_mmap(pm, 1, 0x1000, 0x4000, 0x10000, "/a", true, 1);
	feed_mmap(pm, 1, 0x2000, 0x1000, 0, "/b", true, 2);
	assert_string_equal(leaf_path(pm, 1, 0x1500, NULL), "/a");
	assert_string_equal(leaf_path(pm, 1, 0x2500, NULL), "/b");
	f = sample(pm, 1, 1, 0x4000, false, NULL, 0, &n, &pr);
	assert_string_equal(procmap_mapping(pm, f[0].mapping)->path, "/a");
	/* the remnant keeps the original mapping's start and pgoff */
	assert_int_equal(f[0].file_offset, 0x4000 - 0x1000 + 0x10000);
	assert_int_equal(procmap_stats(pm)->mappings_replaced, 1);
	/* a mapping covering several cuts them all */
	feed_mmap(pm, 1, 0x0, 0x10000, 0, "/c", false, 3);
	assert_string_equal(leaf_path(pm, 1, 0x2500, NULL), "/c");
	assert_false(procmap_mapping(pm, 2)->exec);
	/* edges: start inclusive, limit exclusive */
	feed_mmap(pm, 1, 0x20000, 0x1000, 0, "/d", true, 4);
	assert_string_equal(leaf_path(pm, 1, 0x20000, NULL), "/d");
	assert_null(leaf_path(pm, 1, 0x21000, NULL));
	assert_null(leaf_path(pm, 1, 0x1ffff, NULL));
	procmap_free(pm);
}

static void test_kernel_and_chain(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	size_t n;
	uint32_t pr;
	const struct pm_frame *f;
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, KTEXT + 0x100, KTEXT + 0x200,
				   0xffffffffc0001000ull, PERF_CONTEXT_USER, 0x400500, 0x400600, 0 };
	(void)state;

	feed_mmap(pm, KPID, KTEXT, 0x1000000, KTEXT, "[kernel.kallsyms]_text", false, 0);
	feed_mmap(pm, KPID, 0xffffffffc0000000ull, 0x4000, 0, "/lib/modules/6.1/kernel/foo-bar.ko.zst",
		  false, 0);
	feed_mmap(pm, 7, 0x400000, 0x1000, 0, "/bin/x", true, 1);
	feed_mmap(pm, 7, 0x7fff0000, 0x2000, 0, "[vdso]", true, 1);
	f = sample(pm, 7, 7, KTEXT + 0x100, true, chain, 8, &n, &pr);
	/* leaf, k+0x200, module, two user callers; the chain's IP copy and the 0 are dropped */
	assert_int_equal(n, 5);
	assert_int_equal(f[0].addr, KTEXT + 0x100);
	assert_true(f[0].flags & PM_FRAME_LEAF);
	assert_true(f[0].flags & PM_FRAME_KERNEL);
	assert_string_equal(procmap_mapping(pm, f[0].mapping)->dso, "[kernel.kallsyms]");
	assert_int_equal(procmap_mapping(pm, f[0].mapping)->kind, PM_KIND_KERNEL);
	assert_true(procmap_mapping(pm, f[0].mapping)->exec);
	assert_int_equal(f[0].file_offset, KTEXT + 0x100);
	assert_int_equal(f[1].addr, KTEXT + 0x200 - 1);
	assert_false(f[1].flags & PM_FRAME_LEAF);
	assert_string_equal(procmap_mapping(pm, f[2].mapping)->dso, "[foo_bar]");
	assert_int_equal(procmap_mapping(pm, f[2].mapping)->kind, PM_KIND_MODULE);
	/* the user IP saved at kernel entry is where the thread was: exact, not a return address */
	assert_int_equal(f[3].addr, 0x400500);
	assert_false(f[3].flags & PM_FRAME_KERNEL);
	assert_false(f[3].flags & PM_FRAME_LEAF);
	assert_int_equal(f[4].addr, 0x4005ff); /* its caller: a return address */
	assert_string_equal(procmap_mapping(pm, f[4].mapping)->path, "/bin/x");
	assert_int_equal(procmap_mapping(pm, sample(pm, 7, 7, 0x7fff0010, false, NULL, 0, &n, &pr)[0]
						     .mapping)->kind,
			 PM_KIND_VDSO);
	/* no mapping: kept with its raw address */
	f = sample(pm, 7, 7, 0x12345, false, NULL, 0, &n, &pr);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].mapping, PM_NO_MAPPING);
	assert_int_equal(f[0].addr, 0x12345);
	/* a pid never seen */
	sample(pm, 999, 999, 0x400100, false, NULL, 0, &n, &pr);
	assert_int_equal(procmap_stats(pm)->samples_unknown_pid, 1);
	procmap_free(pm);
}

static void test_build_ids(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	struct rdr_build_id t[5];
	(void)state;

	memset(t, 0, sizeof(t));
	t[0].misc = PERF_MISC_USER;
	t[0].size = 20;
	t[0].id[0] = 0x11;
	t[0].filename = "/bin/x";
	t[1].misc = PERF_MISC_KERNEL;
	t[1].size = 20;
	t[1].id[0] = 0x22;
	t[1].filename = "[kernel.kallsyms]";
	t[2].misc = PERF_MISC_KERNEL;
	t[2].size = 20;
	t[2].id[0] = 0x33;
	t[2].filename = "[foo_bar]";
	t[3].misc = PERF_MISC_USER; /* same path, another id: ambiguous */
	t[3].size = 20;
	t[3].id[0] = 0x44;
	t[3].filename = "/bin/amb";
	t[4] = t[3];
	t[4].id[0] = 0x45;
	procmap_add_build_ids(pm, t, 5);
	feed_mmap(pm, KPID, KTEXT, 0x1000000, KTEXT, "[kernel.kallsyms]_stext", false, 0);
	feed_mmap(pm, KPID, 0xffffffffc0000000ull, 0x4000, 0, "/lib/modules/6.1/foo-bar.ko", false, 0);
	feed_mmap(pm, 7, 0x400000, 0x1000, 0, "/bin/x", true, 1);
	feed_mmap(pm, 7, 0x500000, 0x1000, 0, "/bin/amb", true, 1);
	/* an inline id wins over the table */
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_MMAP2;
	ev.misc = PERF_MISC_USER | PERF_MISC_MMAP_BUILD_ID;
	ev.u.mmap = (struct rdr_mmap){ .pid = 7, .tid = 7, .start = 0x600000, .len = 0x1000,
				       .filename = "/bin/x", .is_mmap2 = true, .has_build_id = true,
				       .build_id_size = 20, .prot = 5 };
	ev.u.mmap.build_id[0] = 0x99;
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
	procmap_finish(pm);
	assert_int_equal(procmap_mapping(pm, 0)->bid_source, PM_BID_TABLE);
	assert_int_equal(procmap_mapping(pm, 0)->build_id[0], 0x22);
	assert_int_equal(procmap_mapping(pm, 1)->build_id[0], 0x33);
	assert_int_equal(procmap_mapping(pm, 2)->build_id[0], 0x11);
	assert_int_equal(procmap_mapping(pm, 3)->bid_source, PM_BID_NONE);
	assert_int_equal(procmap_mapping(pm, 4)->bid_source, PM_BID_MMAP2);
	assert_int_equal(procmap_mapping(pm, 4)->build_id[0], 0x99);
	assert_int_equal(procmap_stats(pm)->build_id_ambiguous, 1);
	procmap_free(pm);
}

/* perf before 3.16 marks no exec: a COMM with a new name, then an MMAP of that binary */
static void test_exec_fallback(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	uint32_t p0, p1;
	(void)state;

	feed_comm(pm, 5, 5, "sh", false);
	feed_mmap(pm, 5, 0x400000, 0x1000, 0, "/bin/sh", true, 1);
	assert_string_equal(leaf_path(pm, 5, 0x400100, &p0), "/bin/sh");
	feed_comm(pm, 5, 5, "newprog", false);
	feed_mmap(pm, 5, 0x800000, 0x1000, 0, "/usr/bin/newprog", true, 2);
	assert_null(leaf_path(pm, 5, 0x400100, &p1));
	assert_int_not_equal(p0, p1);
	assert_int_equal(procmap_proc(pm, p1)->generation, 1);
	/* a rename without a matching MMAP is not an exec */
	feed_comm(pm, 5, 5, "renamed", false);
	feed_mmap(pm, 5, 0x900000, 0x1000, 0, "/lib/other.so", true, 3);
	assert_string_equal(leaf_path(pm, 5, 0x800100, &p0), "/usr/bin/newprog");
	assert_int_equal(p0, p1);
	procmap_free(pm);
}

static void test_ksymbol(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	size_t n;
	uint32_t pr;
	const struct pm_frame *f;
	(void)state;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_KSYMBOL;
	ev.u.ksymbol = (struct rdr_ksymbol){ .addr = 0xffffffffa0000000ull, .len = 0x100,
					     .ksym_type = 1, .name = "bpf_prog_abc_main" };
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
	f = sample(pm, 3, 3, 0xffffffffa0000010ull, true, NULL, 0, &n, &pr);
	assert_int_equal(procmap_mapping(pm, f[0].mapping)->kind, PM_KIND_BPF);
	assert_string_equal(procmap_mapping(pm, f[0].mapping)->dso, "bpf_prog_abc_main");
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_KSYMBOL;
	ev.u.ksymbol = (struct rdr_ksymbol){ .addr = 0xffffffffa0000000ull, .len = 0x100,
					     .ksym_type = 1, .flags = 1 /* unregister */,
					     .name = "bpf_prog_abc_main" };
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
	f = sample(pm, 3, 3, 0xffffffffa0000010ull, true, NULL, 0, &n, &pr);
	assert_int_equal(f[0].mapping, PM_NO_MAPPING);
	procmap_free(pm);
}

/* Anonymous executable memory is JIT code named by /tmp/perf-PID.map (here a test dir). */
static void test_jit(void **state)
{
	char dir[] = "/tmp/conv-test-jit-XXXXXX";
	char path[256];
	struct procmap_opts o = { 0 };
	struct procmap *pm;
	FILE *f;
	size_t n;
	uint32_t pr;
	const struct pm_frame *fr;
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x7f0000000100ull, 0x7f0000000210ull,
				   0x7f0000900005ull };
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-42.map", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7f0000000000 200 Ljava/lang/Foo;::bar\n"
	      "0x7f0000000200 0x100 void Foo.baz(int)\n"
	      "7f0000900000 10 outside any mapping\n", f);
	fclose(f);
	o.jit_dir = dir;
	pm = procmap_new(&o);
	feed_mmap(pm, 42, 0x7f0000000000ull, 0x10000, 0, "//anon", true, 1);
	fr = sample(pm, 42, 42, 0x7f0000000100ull, false, chain, 4, &n, &pr);
	assert_int_equal(n, 3);
	assert_int_equal(procmap_mapping(pm, fr[0].mapping)->kind, PM_KIND_JIT);
	assert_string_equal(procmap_mapping(pm, fr[0].mapping)->dso, "[JIT] tid 42");
	assert_non_null(fr[0].jit);
	assert_true(fr[0].flags & PM_FRAME_JIT);
	assert_string_equal(fr[0].jit->name, "Ljava/lang/Foo;::bar");
	/* a caller is looked up at its return address - 1 */
	assert_string_equal(fr[1].jit->name, "void Foo.baz(int)");
	/* perf maps may name code no MMAP covered */
	assert_int_equal(fr[2].mapping, PM_NO_MAPPING);
	assert_string_equal(fr[2].jit->name, "outside any mapping");
	/* a forked child keeps the parent's JIT names */
	feed_fork(pm, PERF_REC_FORK, 43, 42, 43, 42);
	fr = sample(pm, 43, 43, 0x7f0000000100ull, false, NULL, 0, &n, &pr);
	assert_string_equal(fr[0].jit->name, "Ljava/lang/Foo;::bar");
	assert_int_equal(procmap_stats(pm)->jit_maps_loaded, 1);
	assert_int_equal(procmap_stats(pm)->frames_jit, 4);
	procmap_free(pm);
	unlink(path);
	rmdir(dir);
}

#ifndef PROCMAP_FIXTURE_DIR
#define PROCMAP_FIXTURE_DIR "tests/fixtures/jit"
#endif

/* A jitdump is found through the MMAP record of the file (the runtime's marker). */
static void test_jitdump_marker(void **state)
{
	char path[512];
	struct jit_table t;
	struct procmap *pm;
	const struct jit_sym *want;
	size_t n;
	uint32_t pr;
	const struct pm_frame *fr;
	(void)state;

	snprintf(path, sizeof(path), "%s/jit-30436.dump", PROCMAP_FIXTURE_DIR);
	jit_table_init(&t);
	assert_int_equal(jit_load_jitdump(&t, path, JIT_LOAD_ANY_OWNER, NULL, NULL), CONV_E_OK);
	assert_true(t.nr > 0);
	want = &t.syms[t.nr / 2];
	pm = procmap_new(&(struct procmap_opts){ .jit_dir = "/nonexistent", .jit_any_owner = true });
	feed_mmap(pm, 30436, 0x10000, 0x1000, 0, path, true, 1);
	fr = sample(pm, 30436, 30436, want->start, false, NULL, 0, &n, &pr);
	assert_non_null(fr[0].jit);
	assert_string_equal(fr[0].jit->name, want->name);
	assert_int_equal(procmap_stats(pm)->jit_dumps_loaded, 1);
	procmap_free(pm);
	jit_table_release(&t);
}

/*
 * procmap_space_key: whatever changes what a sample resolves to changes the
 * key (a new mapping in the process, a new process generation, a kernel
 * mapping); what does not leave it alone (another process's mappings).
 */
static void test_space_key(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	struct pm_space_key a, b, c;
	uint32_t proc;
	(void)state;

	assert_false(procmap_space_key(pm, 300, &a));
	feed_comm(pm, 300, 300, "p", false);
	feed_mmap(pm, 300, 0x400000, 0x1000, 0, "/bin/p", true, 1);
	assert_true(procmap_space_key(pm, 300, &a));
	assert_string_equal(leaf_path(pm, 300, 0x400100, &proc), "/bin/p");
	assert_int_equal(a.proc, proc);
	/* another process's mapping: same key */
	feed_comm(pm, 301, 301, "q", false);
	feed_mmap(pm, 301, 0x400000, 0x1000, 0, "/bin/q", true, 2);
	assert_true(procmap_space_key(pm, 300, &b));
	assert_true(a.proc == b.proc && a.version == b.version && a.kversion == b.kversion);
	/* a mapping over the same addresses: a new key, and the address resolves anew */
	feed_mmap(pm, 300, 0x400000, 0x1000, 0, "/bin/p2", true, 3);
	assert_true(procmap_space_key(pm, 300, &b));
	assert_int_equal(a.proc, b.proc);
	assert_int_not_equal(a.version, b.version);
	assert_string_equal(leaf_path(pm, 300, 0x400100, NULL), "/bin/p2");
	/* the kernel's space is part of every key */
	feed_mmap(pm, KPID, KTEXT, 0x100000, KTEXT, "[kernel.kallsyms]_text", true, 4);
	assert_true(procmap_space_key(pm, 300, &c));
	assert_int_equal(b.version, c.version);
	assert_int_not_equal(b.kversion, c.kversion);
	/* exec: another process generation */
	feed_comm(pm, 300, 300, "p3", true);
	assert_true(procmap_space_key(pm, 300, &a));
	assert_int_not_equal(a.proc, c.proc);
	/* samples counted without procmap_resolve */
	{
		uint64_t before = procmap_proc(pm, a.proc)->samples;

		procmap_count_sample(pm, a.proc);
		assert_int_equal(procmap_proc(pm, a.proc)->samples, before + 1);
	}
	procmap_free(pm);
}

/* An MMAP (mmap2 false: no inode) or MMAP2 of an executable file, inode as given. */
static const struct pm_mapping *feed_file(struct procmap *pm, uint32_t pid, const char *path, bool mmap2,
					  const struct stat *st, uint64_t ino)
{
	memset(&ev, 0, sizeof(ev));
	ev.type = mmap2 ? PERF_REC_MMAP2 : PERF_REC_MMAP;
	ev.misc = PERF_MISC_USER;
	ev.u.mmap.pid = ev.u.mmap.tid = pid;
	ev.u.mmap.start = 0x400000;
	ev.u.mmap.len = 0x1000;
	ev.u.mmap.filename = path;
	ev.u.mmap.is_mmap2 = mmap2;
	ev.u.mmap.prot = 5;
	if (mmap2) {
		ev.u.mmap.maj = major(st->st_dev);
		ev.u.mmap.min = minor(st->st_dev);
		ev.u.mmap.ino = ino;
	}
	assert_int_equal(procmap_feed(pm, &ev), CONV_E_OK);
	return procmap_mapping(pm, (uint32_t)procmap_mapping_count(pm) - 1);
}

/*
 * On the recording machine the file at a recorded path is the mapped
 * object when its inode says so, with or without a GNU build-id (here an
 * ELF header alone, as a Go binary has none); same_machine may come late
 * (pipe mode); an MMAP record's file is taken unverified; a file of
 * another inode or written after the recording never.
 */
static void test_path_identity(void **state)
{
	static const unsigned char ehdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, [16] = 3, [18] = 62,
						[20] = 1, [52] = 64 };
	char dir[] = "/tmp/conv-test-pathid-XXXXXX", path[300], missing[300];
	struct procmap_opts o = { 0 };
	struct procmap *pm;
	const struct pm_mapping *m0, *m1, *m2, *m3, *m4;
	struct stat st;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/noid.so", dir);
	snprintf(missing, sizeof(missing), "%s/gone.so", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(ehdr, 1, sizeof(ehdr), f), sizeof(ehdr));
	fclose(f);
	assert_int_equal(stat(path, &st), 0);

	pm = procmap_new(&o);
	m0 = feed_file(pm, 1, path, true, &st, st.st_ino);
	assert_int_equal(m0->bid_source, PM_BID_NONE);
	assert_int_equal(m0->path_check, PM_PATH_ELSEWHERE);
	assert_false(procmap_path_is_identity(m0));
	/* the hostname arrives (pipe mode): mappings from now on are looked at */
	procmap_set_same_machine(pm, true);
	m1 = feed_file(pm, 2, path, true, &st, st.st_ino);
	assert_int_equal(m1->bid_source, PM_BID_PATH);
	assert_int_equal(m1->build_id_size, 0);
	assert_int_equal(m1->path_check, PM_PATH_OK);
	assert_true(procmap_path_is_identity(m1));
	m2 = feed_file(pm, 3, path, true, &st, st.st_ino + 1);
	assert_int_equal(m2->bid_source, PM_BID_NONE);
	assert_int_equal(m2->path_check, PM_PATH_CHANGED);
	m3 = feed_file(pm, 4, path, false, &st, 0);
	assert_int_equal(m3->bid_source, PM_BID_PATH_UNVERIFIED);
	assert_true(procmap_path_is_identity(m3));
	m4 = feed_file(pm, 5, missing, true, &st, st.st_ino);
	assert_int_equal(m4->path_check, PM_PATH_MISSING);
	procmap_finish(pm);
	/* mappings come from one array: look them up again after the last feed */
	m0 = procmap_mapping(pm, 0);
	m1 = procmap_mapping(pm, 1);
	m2 = procmap_mapping(pm, 2);
	assert_int_equal(m0->bid_source, PM_BID_PATH); /* fed before the verdict, looked at again */
	assert_true(procmap_same_file(m0, m1));
	assert_false(procmap_same_file(m1, m2));
	assert_int_equal(procmap_stats(pm)->mappings, 5);
	procmap_free(pm);

	/* written after the recording: the same inode, not the same file any more */
	o.same_machine = true;
	o.recorded_by_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec - 1;
	pm = procmap_new(&o);
	m0 = feed_file(pm, 1, path, true, &st, st.st_ino);
	assert_int_equal(m0->bid_source, PM_BID_NONE);
	assert_int_equal(m0->path_check, PM_PATH_CHANGED);
	m0 = feed_file(pm, 2, path, false, &st, 0);
	assert_int_equal(m0->bid_source, PM_BID_NONE);
	procmap_free(pm);
	unlink(path);
	rmdir(dir);
}

/*
 * A space looked up once for many addresses: each address's mapping and
 * the range around it that answers alike (a mapping cut by a later one is
 * only its remaining part), as procmap_lookup answers.
 */
static void test_space_lookup(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	const struct pm_space *sp;
	uint64_t lo, hi;
	uint32_t a, b;
	(void)state;

	feed_comm(pm, 300, 300, "p", false);
	feed_mmap(pm, 300, 0x400000, 0x4000, 0, "/bin/p", true, 1);
	feed_mmap(pm, 300, 0x401000, 0x1000, 0, "/lib/cut.so", true, 2);
	assert_null(procmap_space(pm, 301));
	sp = procmap_space(pm, 300);
	assert_non_null(sp);
	a = procmap_space_lookup(sp, 0x400800, &lo, &hi);
	assert_int_equal(a, procmap_lookup(pm, 300, 0x400800));
	assert_string_equal(procmap_mapping(pm, a)->path, "/bin/p");
	assert_int_equal(lo, 0x400000);
	assert_int_equal(hi, 0x401000);
	b = procmap_space_lookup(sp, 0x401000, &lo, &hi);
	assert_string_equal(procmap_mapping(pm, b)->path, "/lib/cut.so");
	assert_int_equal(lo, 0x401000);
	assert_int_equal(hi, 0x402000);
	assert_int_equal(procmap_space_lookup(sp, 0x403fff, &lo, &hi), a);
	assert_int_equal(lo, 0x402000);
	assert_int_equal(hi, 0x404000);
	assert_int_equal(procmap_space_lookup(sp, 0x404000, &lo, &hi), PM_NO_MAPPING);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 0);
	procmap_free(pm);
}

/*
 * A chain's entries said exact are resolved where they are; the others as
 * callers, inside the call before their return address.
 */
static void test_resolve_exact(void **state)
{
	struct procmap *pm = procmap_new(NULL);
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x400100, 0x400200, 0x400300, 0x400400 };
	uint64_t exact[1] = { 1u << 3 };
	const struct pm_frame *f;
	size_t n;
	uint32_t proc;
	(void)state;

	feed_comm(pm, 400, 400, "p", false);
	feed_mmap(pm, 400, 0x400000, 0x1000, 0, "/bin/p", true, 1);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_REC_SAMPLE;
	ev.misc = PERF_MISC_USER;
	ev.u.sample.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	ev.u.sample.ip = 0x400100;
	ev.u.sample.pid = ev.u.sample.tid = 400;
	ev.u.sample.callchain = chain;
	ev.u.sample.callchain_nr = 5;
	assert_int_equal(procmap_resolve_exact(pm, &ev, exact, &f, &n, &proc), CONV_E_OK);
	assert_int_equal(n, 4);
	assert_int_equal(f[0].addr, 0x400100);
	assert_int_equal(f[1].addr, 0x4001ff);
	assert_int_equal(f[2].addr, 0x400300); /* chain[3]: exact */
	assert_int_equal(f[2].file_offset, 0x300);
	assert_int_equal(f[3].addr, 0x4003ff);
	/* without bits: procmap_resolve's answer */
	assert_int_equal(procmap_resolve_exact(pm, &ev, NULL, &f, &n, &proc), CONV_E_OK);
	assert_int_equal(f[2].addr, 0x4002ff);
	procmap_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_space_lookup),
		cmocka_unit_test(test_resolve_exact),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_kernel_and_chain),
		cmocka_unit_test(test_build_ids),
		cmocka_unit_test(test_exec_fallback),
		cmocka_unit_test(test_ksymbol),
		cmocka_unit_test(test_jit),
		cmocka_unit_test(test_jitdump_marker),
		cmocka_unit_test(test_space_key),
		cmocka_unit_test(test_path_identity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
