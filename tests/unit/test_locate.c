/*
 * Debug-file locator tests. Tiny ELF files are compiled at test time (cc -g
 * with sha1, md5 and no build-id; objcopy --only-keep-debug, --strip-debug,
 * --strip-all --add-gnu-debuglink) and laid out in a temporary directory in
 * every layout the locator knows: build-id trees, perf's cache (HOME pointed
 * at the temporary directory through loc_opts.home), an unpacked perf archive
 * (made with tar when it is installed), .gnu_debuglink places, a system debug
 * directory override, the recorded path. Wrong files are planted on purpose:
 * another build-id, a bad CRC, debug-only files where a binary is wanted.
 *
 * Environment: CC (default cc), OBJCOPY (default objcopy). Without them every
 * case is skipped, not failed. CONV_KEEP_TMP keeps the temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "buildid/buildid.h"
#include "buildid/locate.h"
#include "tests/unit/testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct elf_file {
	char path[PATH_MAX];
	uint8_t id[BUILDID_MAX];
	size_t len;
	char hex[2 * BUILDID_MAX + 1];
};

static struct {
	char tmp[PATH_MAX];
	bool have_tools, have_tar;
	struct elf_file a_full;  /* -g, sha1 build-id: DWARF + symtab, runtime */
	struct elf_file a_dbg;   /* objcopy --only-keep-debug of a_full */
	struct elf_file a_strip; /* --strip-all --add-gnu-debuglink=a.dbg: no symbols */
	struct elf_file a_sym;   /* --strip-debug: symtab only */
	struct elf_file a_badl;  /* --strip-all, debuglink "a.dbg" made from c_dbg's bytes */
	struct elf_file b_full;  /* md5 build-id (16 bytes) */
	struct elf_file b_dbg;
	struct elf_file c_full;  /* another program: another build-id */
	struct elf_file c_dbg;
	struct elf_file n_full;  /* --build-id=none */
	struct elf_file n_dbg;
	struct elf_file n_strip; /* debuglink to n.dbg */
	struct elf_file a_eu;    /* eu-strip -f debug file of a_full, when eu-strip exists */
	bool have_eu;
} g;

static bool have_tool(const char *name)
{
	char *argv[] = { (char *)name, (char *)"--version", NULL };

	return tu_run(argv) == 0;
}

static void mkparent(const char *path)
{
	char p[PATH_MAX];
	char *slash;

	tu_strf(p, sizeof(p), "%s", path);
	slash = strrchr(p, '/');
	assert_non_null(slash);
	*slash = '\0';
	tu_mkdirs(p, 0755);
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f;

	mkparent(path);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Copies src to dst (parents created); extra bytes are appended to break a CRC. */
static void copy_file(const char *src, const char *dst, const char *extra)
{
	FILE *in = fopen(src, "rb"), *out;
	char buf[8192];
	size_t n;

	assert_non_null(in);
	mkparent(dst);
	out = fopen(dst, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	if (extra)
		assert_int_equal(fwrite(extra, 1, strlen(extra), out), strlen(extra));
	fclose(in);
	assert_int_equal(fclose(out), 0);
	chmod(dst, 0755);
}

/* out = dir/rel, a copy of src. */
static void copy_into(char *out, const char *dir, const char *rel, const char *src)
{
	tu_strf(out, PATH_MAX, "%s/%s", dir, rel);
	copy_file(src, out, NULL);
}

/* The answer was path, found by source. */
static void expect_found(const struct loc_result *r, const char *path, enum loc_source source)
{
	assert_string_equal(r->path, path);
	assert_int_equal(r->source, source);
}

static void link_to(const char *target, const char *linkpath)
{
	mkparent(linkpath);
	assert_int_equal(symlink(target, linkpath), 0);
}

static bool read_id(struct elf_file *e)
{
	e->len = 0;
	e->hex[0] = '\0';
	if (buildid_from_path(e->path, e->id, &e->len, NULL) != CONV_E_OK)
		return false;
	buildid_hex(e->id, e->len, e->hex);
	return true;
}

static bool build(struct elf_file *e, const char *name, const char *src, const char *bid_flag)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char c_path[PATH_MAX], flag[64];

	tu_strf(c_path, sizeof(c_path), "%s/elves/%s.c", g.tmp, name);
	tu_strf(e->path, sizeof(e->path), "%s/elves/%s", g.tmp, name);
	tu_strf(flag, sizeof(flag), "-Wl,--build-id=%s", bid_flag);
	write_file(c_path, src, strlen(src));
	char g_flag[] = "-g", o1[] = "-O1", o[] = "-o";
	char *argv[] = { (char *)cc, g_flag, o1, flag, o, e->path, c_path, NULL };
	if (tu_run(argv) != 0)
		return false;
	return read_id(e) || !strcmp(bid_flag, "none");
}

/* objcopy ARGS... in out; e->path = out. */
static bool objcopy(struct elf_file *e, const char *name, const char *in, const char *a1,
		    const char *a2)
{
	const char *oc = getenv("OBJCOPY") && *getenv("OBJCOPY") ? getenv("OBJCOPY") : "objcopy";
	char *argv[6];
	int i = 0;

	tu_strf(e->path, sizeof(e->path), "%s/elves/%s", g.tmp, name);
	argv[i++] = (char *)oc;
	argv[i++] = (char *)a1;
	if (a2)
		argv[i++] = (char *)a2;
	argv[i++] = (char *)in;
	argv[i++] = e->path;
	argv[i] = NULL;
	if (tu_run(argv) != 0)
		return false;
	read_id(e);
	return true;
}

static bool build_all(void)
{
	static const char a_src[] = "static int f(int x) { return x * 3; }\n"
				    "int main(int argc, char **argv) { (void)argv; return f(argc) - 3; }\n";
	static const char c_src[] = "int g(int x) { return x + 7; }\n"
				    "int main(void) { return g(1) - 8; }\n";
	char link[PATH_MAX], scratch[PATH_MAX];

	if (!build(&g.a_full, "a.full", a_src, "sha1") || g.a_full.len != 20 ||
	    !build(&g.b_full, "b.full", a_src, "md5") || g.b_full.len != 16 ||
	    !build(&g.c_full, "c.full", c_src, "sha1") ||
	    !build(&g.n_full, "n.full", a_src, "none") || g.n_full.len != 0)
		return false;
	if (!objcopy(&g.a_dbg, "a.dbg", g.a_full.path, "--only-keep-debug", NULL) ||
	    !objcopy(&g.b_dbg, "b.dbg", g.b_full.path, "--only-keep-debug", NULL) ||
	    !objcopy(&g.c_dbg, "c.dbg", g.c_full.path, "--only-keep-debug", NULL) ||
	    !objcopy(&g.n_dbg, "n.dbg", g.n_full.path, "--only-keep-debug", NULL) ||
	    !objcopy(&g.a_sym, "a.sym", g.a_full.path, "--strip-debug", NULL))
		return false;
	tu_strf(link, sizeof(link), "--add-gnu-debuglink=%s", g.a_dbg.path);
	if (!objcopy(&g.a_strip, "a.strip", g.a_full.path, "--strip-all", link))
		return false;
	tu_strf(link, sizeof(link), "--add-gnu-debuglink=%s", g.n_dbg.path);
	if (!objcopy(&g.n_strip, "n.strip", g.n_full.path, "--strip-all", link))
		return false;
	/* a link named a.dbg whose CRC is that of c.dbg: right CRC, wrong build-id */
	tu_strf(scratch, sizeof(scratch), "%s/elves/other/a.dbg", g.tmp);
	copy_file(g.c_dbg.path, scratch, NULL);
	tu_strf(link, sizeof(link), "--add-gnu-debuglink=%s", scratch);
	if (!objcopy(&g.a_badl, "a.badl", g.a_full.path, "--strip-all", link))
		return false;
	if (have_tool("eu-strip")) {
		char out[PATH_MAX];

		tu_strf(g.a_eu.path, sizeof(g.a_eu.path), "%s/elves/a.eu.debug", g.tmp);
		tu_strf(out, sizeof(out), "%s/elves/a.eu.stripped", g.tmp);
		char *argv[] = { (char *)"eu-strip", (char *)"-f", g.a_eu.path, (char *)"-o", out,
				 g.a_full.path, NULL };
		g.have_eu = tu_run(argv) == 0 && read_id(&g.a_eu);
	}
	return !strcmp(g.a_dbg.hex, g.a_full.hex) && !strcmp(g.a_strip.hex, g.a_full.hex) &&
	       !strcmp(g.a_sym.hex, g.a_full.hex) && strcmp(g.c_full.hex, g.a_full.hex) &&
	       !strcmp(g.b_dbg.hex, g.b_full.hex) && g.n_strip.len == 0;
}

static int group_setup(void **state)
{
	(void)state;

	if (!tu_tmpdir_make(g.tmp, sizeof(g.tmp), "test_locate"))
		return -1;
	g.have_tools = build_all();
	g.have_tar = have_tool("tar");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tu_tmpdir_drop(g.tmp);
	return 0;
}

#define NEED_TOOLS()                                                                   \
	do {                                                                           \
		if (!g.have_tools)                                                     \
			skip();                                                        \
	} while (0)

/* A fresh directory for one case. */
static void case_dir(char *out, const char *name)
{
	tu_strf(out, PATH_MAX, "%s/%s", g.tmp, name);
	tu_mkdirs(out, 0755);
}

/* Nothing from this machine: no system dir, no ~/.debug, no recorded path. */
static void opts_none(struct loc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->home = "";
	o->system_debug_dir = "";
}

/* root/.build-id/NN/REST[suffix] */
static void id_path(char *out, const char *root, const struct elf_file *e, const char *suffix)
{
	tu_strf(out, PATH_MAX, "%s/.build-id/%.2s/%s%s", root, e->hex, e->hex + 2, suffix);
}

/*
 * perf's cache entry under root for the recorded path: root/<orig>/<hex>/ with
 * the given files and, if with_link, root/.build-id/NN/REST -> ../../<orig>/<hex>.
 */
static void perf_entry(const char *root, const char *orig, const struct elf_file *id,
		       const char *elf_src, const char *debug_src, bool with_link)
{
	char dir[PATH_MAX], p[PATH_MAX], target[PATH_MAX];

	tu_strf(dir, sizeof(dir), "%s%s/%s", root, orig, id->hex);
	tu_mkdirs(dir, 0755);
	if (elf_src) {
		tu_strf(p, sizeof(p), "%s/elf", dir);
		copy_file(elf_src, p, NULL);
	}
	if (debug_src) {
		tu_strf(p, sizeof(p), "%s/debug", dir);
		copy_file(debug_src, p, NULL);
	}
	if (with_link) {
		id_path(p, root, id, "");
		tu_strf(target, sizeof(target), "../..%s/%s", orig, id->hex);
		link_to(target, p);
	}
}

static enum conv_err find(bool binary, const struct loc_opts *o, const struct elf_file *e,
			  const char *orig, struct loc_result *r, struct loc_stats *st)
{
	struct conv_diag d = { 0 };
	enum conv_err err;

	memset(r, 0x5a, sizeof(*r)); /* every field must be written */
	err = binary ? loc_find_binary(o, e->id, e->len, orig, r, st, &d)
		     : loc_find_debug(o, e->id, e->len, orig, r, st, &d);
	if (err != CONV_E_OK) {
		assert_true(d.msg[0] != '\0'); /* every failure says why */
		assert_int_equal(d.code, err);
		assert_int_equal(r->source, LOC_NONE);
		assert_string_equal(r->path, "");
	}
	return err;
}

/* ---- cases ---- */

static void test_source_names(void **state)
{
	(void)state;
	assert_string_equal(loc_source_name(LOC_NONE), "none");
	assert_string_equal(loc_source_name(LOC_ORIGINAL), "original");
	assert_string_equal(loc_source_name(LOC_DEBUG_DIR), "debug_dir");
	assert_string_equal(loc_source_name(LOC_SYSTEM), "system");
	assert_string_equal(loc_source_name(LOC_PERF_CACHE), "perf_cache");
	assert_string_equal(loc_source_name(LOC_DEBUGLINK), "debuglink");
	assert_string_equal(loc_source_name((enum loc_source)99), "unknown");
}

static void test_invalid_arguments(void **state)
{
	struct loc_opts o;
	struct loc_result r;
	uint8_t id[BUILDID_MAX + 1] = { 1, 2, 3 };

	(void)state;
	opts_none(&o);
	assert_int_equal(loc_find_debug(&o, id, BUILDID_MAX + 1, NULL, &r, NULL, NULL), CONV_E_INVAL);
	assert_int_equal(r.source, LOC_NONE);
	assert_int_equal(loc_find_debug(&o, NULL, 20, NULL, &r, NULL, NULL), CONV_E_INVAL);
	assert_int_equal(loc_find_debug(NULL, id, 3, NULL, &r, NULL, NULL), CONV_E_INVAL);
	assert_int_equal(loc_find_binary(&o, id, 3, NULL, NULL, NULL, NULL), CONV_E_INVAL);
	o.nr_debug_dirs = 1; /* with debug_dirs NULL */
	assert_int_equal(loc_find_binary(&o, id, 3, NULL, &r, NULL, NULL), CONV_E_INVAL);
}

static void test_debug_dir_build_id_tree(void **state)
{
	char d[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "tree");
	id_path(p, d, &g.a_dbg, ".debug");
	copy_file(g.a_dbg.path, p, NULL);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.a_full, "/usr/bin/a", &r, &st), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUG_DIR);
	assert_true(r.has_debug_info);
	assert_true(r.has_symtab);
	assert_true(r.build_id_verified);
	assert_int_equal(st.wrong_build_id, 0);
	/* a debug-only file is never a binary, and nothing else is there */
	assert_int_equal(find(true, &o, &g.a_full, "/usr/bin/a", &r, &st), CONV_E_NOTFOUND);
}

/* --debug-dir pointing at the .build-id directory itself, with a trailing slash. */
static void test_debug_dir_is_build_id_dir(void **state)
{
	char d[PATH_MAX], bd[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { bd };
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "treeself");
	id_path(p, d, &g.a_dbg, ".debug");
	copy_file(g.a_dbg.path, p, NULL);
	tu_strf(bd, sizeof(bd), "%s/.build-id/", d);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUG_DIR);
}

/* A 16-byte (md5) build-id splits the same way: NN/ + 30 hex digits. */
static void test_debug_dir_md5_build_id(void **state)
{
	char d[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "md5");
	id_path(p, d, &g.b_dbg, ".debug");
	copy_file(g.b_dbg.path, p, NULL);
	assert_int_equal(strlen(strrchr(p, '/') + 1), 30 + strlen(".debug"));
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.b_full, NULL, &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	/* the sha1 program with the same code is another file */
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_NOTFOUND);
}

/* perf's cache layout inside a --debug-dir, directly and home-style (DIR/.debug). */
static void test_debug_dir_perf_layout(void **state)
{
	char d[PATH_MAX], h[PATH_MAX], hd[PATH_MAX], want[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "perfdir");
	perf_entry(d, "/usr/bin/a", &g.a_full, g.a_strip.path, g.a_dbg.path, true);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	id_path(want, d, &g.a_full, "/debug");
	expect_found(&r, want, LOC_DEBUG_DIR);
	assert_true(r.has_debug_info);
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	id_path(want, d, &g.a_full, "/elf");
	assert_string_equal(r.path, want);
	assert_false(r.has_symtab); /* the stripped runtime copy */

	case_dir(h, "perfhome");
	tu_strf(hd, sizeof(hd), "%s/.debug", h);
	perf_entry(hd, "/usr/bin/a", &g.a_full, g.a_strip.path, g.a_dbg.path, true);
	dirs[0] = h;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	id_path(want, hd, &g.a_full, "/debug");
	assert_string_equal(r.path, want);
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	id_path(want, hd, &g.a_full, "/elf");
	assert_string_equal(r.path, want);

	/* DIR = perf's .build-id directory itself */
	tu_strf(hd, sizeof(hd), "%s/.debug/.build-id", h);
	dirs[0] = hd;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	tu_strf(want, sizeof(want), "%s/%.2s/%s/debug", hd, g.a_full.hex, g.a_full.hex + 2);
	assert_string_equal(r.path, want);
}

/*
 * `perf archive`: tar of .build-id/NN/REST and the directory it points to,
 * relative to ~/.debug, unpacked into a --debug-dir. Also an archive whose
 * .build-id link is gone: found through <recorded path>/<hex>.
 */
static void test_debug_dir_perf_archive(void **state)
{
	char cache[PATH_MAX], d[PATH_MAX], d2[PATH_MAX], tarf[PATH_MAX], link[PATH_MAX],
		dirent[PATH_MAX], want[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	if (!g.have_tar)
		skip();
	case_dir(cache, "archive/cache");
	perf_entry(cache, "/opt/app/a", &g.a_full, g.a_full.path, g.a_dbg.path, true);
	tu_strf(tarf, sizeof(tarf), "%s/archive/perf.data.tar", g.tmp);
	tu_strf(link, sizeof(link), ".build-id/%.2s/%s", g.a_full.hex, g.a_full.hex + 2);
	tu_strf(dirent, sizeof(dirent), "opt/app/a/%s", g.a_full.hex);
	{
		char *argv[] = { (char *)"tar", (char *)"cf", tarf, (char *)"-C", cache, link,
				 dirent, NULL };
		assert_int_equal(tu_run(argv), 0);
	}
	case_dir(d, "archive/unpacked");
	{
		char *argv[] = { (char *)"tar", (char *)"xf", tarf, (char *)"-C", d, NULL };
		assert_int_equal(tu_run(argv), 0);
	}
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	id_path(want, d, &g.a_full, "/debug");
	expect_found(&r, want, LOC_DEBUG_DIR);
	assert_int_equal(find(true, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	id_path(want, d, &g.a_full, "/elf");
	assert_string_equal(r.path, want);

	/* only the files, no .build-id link: needs the recorded path */
	case_dir(d2, "archive/nolink");
	{
		char *argv[] = { (char *)"tar", (char *)"xf", tarf, (char *)"-C", d2, dirent, NULL };
		assert_int_equal(tu_run(argv), 0);
	}
	dirs[0] = d2;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_NOTFOUND);
	assert_int_equal(find(false, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	tu_strf(want, sizeof(want), "%s/opt/app/a/%s/debug", d2, g.a_full.hex);
	assert_string_equal(r.path, want);
}

/* Debug dirs are searched in order; a file with another build-id is skipped and counted. */
static void test_debug_dirs_order_and_wrong_id(void **state)
{
	char d1[PATH_MAX], d2[PATH_MAX], d3[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX];
	const char *dirs[3] = { d1, d2, d3 };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d1, "order/1");
	case_dir(d2, "order/2");
	case_dir(d3, "order/3");
	/* planted: c's debug file under a's build-id */
	id_path(p1, d1, &g.a_full, ".debug");
	copy_file(g.c_dbg.path, p1, NULL);
	id_path(p2, d2, &g.a_full, ".debug");
	copy_file(g.a_dbg.path, p2, NULL);
	id_path(p3, d3, &g.a_full, ".debug");
	copy_file(g.a_dbg.path, p3, NULL);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 3;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, &st), CONV_E_OK);
	assert_string_equal(r.path, p2);
	assert_int_equal(st.wrong_build_id, 1);
	assert_true(st.probed >= 2);
	/* a planted binary with the wrong build-id in a Fedora-style link */
	id_path(p1, d1, &g.a_full, "");
	copy_file(g.c_full.path, p1, NULL);
	memset(&st, 0, sizeof(st));
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.wrong_build_id, 1);
	/* and the right one in the third directory */
	id_path(p3, d3, &g.a_full, "");
	link_to(g.a_strip.path, p3);
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, &st), CONV_E_OK);
	expect_found(&r, p3, LOC_DEBUG_DIR);
}

/* A --debug-dir that is a sysroot (unpacked image) or a flat folder of files. */
static void test_debug_dir_sysroot_and_flat(void **state)
{
	char d[PATH_MAX], f[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "sysroot");
	copy_into(p, d, "opt/app/a", g.a_full.path);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(false, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	assert_int_equal(find(true, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);

	case_dir(f, "flat");
	copy_into(p, f, "a.debug", g.a_dbg.path);
	dirs[0] = f;
	assert_int_equal(find(false, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	assert_int_equal(find(true, &o, &g.a_full, "/opt/app/a", &r, NULL), CONV_E_NOTFOUND);
}

static void test_system_dir(void **state)
{
	char s[PATH_MAX], p[PATH_MAX], b[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(s, "system");
	id_path(p, s, &g.a_full, ".debug");
	copy_file(g.a_dbg.path, p, NULL);
	id_path(b, s, &g.a_full, "");
	link_to(g.a_strip.path, b); /* Fedora: NN/REST -> the binary */
	opts_none(&o);
	o.system_debug_dir = s;
	assert_int_equal(find(false, &o, &g.a_full, "/usr/bin/a", &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_SYSTEM);
	assert_int_equal(find(true, &o, &g.a_full, "/usr/bin/a", &r, NULL), CONV_E_OK);
	expect_found(&r, b, LOC_SYSTEM);
	/* "" skips it */
	o.system_debug_dir = "";
	assert_int_equal(find(false, &o, &g.a_full, "/usr/bin/a", &r, NULL), CONV_E_NOTFOUND);
}

/* ~/.debug through loc_opts.home, perf_cache_dir, the legacy file layout and the vdso. */
static void test_perf_cache(void **state)
{
	char h[PATH_MAX], hd[PATH_MAX], want[PATH_MAX], legacy[PATH_MAX], p[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(h, "home");
	tu_strf(hd, sizeof(hd), "%s/.debug", h);
	perf_entry(hd, "/usr/bin/a", &g.a_full, g.a_strip.path, g.a_dbg.path, true);
	opts_none(&o);
	o.home = h;
	assert_int_equal(find(false, &o, &g.a_full, "/usr/bin/a", &r, NULL), CONV_E_OK);
	id_path(want, hd, &g.a_full, "/debug");
	expect_found(&r, want, LOC_PERF_CACHE);
	assert_int_equal(find(true, &o, &g.a_full, "/usr/bin/a", &r, NULL), CONV_E_OK);
	id_path(want, hd, &g.a_full, "/elf");
	expect_found(&r, want, LOC_PERF_CACHE);

	/* perf_cache_dir wins over home; "" skips the cache */
	o.home = "/nonexistent";
	o.perf_cache_dir = hd;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	assert_int_equal(r.source, LOC_PERF_CACHE);
	o.perf_cache_dir = "";
	o.home = h;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_NOTFOUND);

	/* old perf: the .build-id entry is the file itself */
	case_dir(legacy, "legacy");
	tu_strf(p, sizeof(p), "%s/.debug", legacy);
	id_path(want, p, &g.a_full, "");
	copy_file(g.a_full.path, want, NULL);
	o.perf_cache_dir = NULL;
	o.home = legacy;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, want);
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, want);

	/* the vdso: [vdso]/<hex>/vdso, with and without the .build-id link */
	tu_strf(p, sizeof(p), "%s/.debug/[vdso]/%s/vdso", h, g.b_full.hex);
	copy_file(g.b_full.path, p, NULL);
	o.home = h;
	assert_int_equal(find(true, &o, &g.b_full, "[vdso]", &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	assert_int_equal(find(true, &o, &g.b_full, NULL, &r, NULL), CONV_E_NOTFOUND);
	id_path(want, hd, &g.b_full, "");
	tu_strf(p, sizeof(p), "../../[vdso]/%s", g.b_full.hex);
	link_to(p, want);
	assert_int_equal(find(true, &o, &g.b_full, NULL, &r, NULL), CONV_E_OK);
	tu_strf(p, sizeof(p), "%s/vdso", want);
	assert_string_equal(r.path, p);
}

/* Lays out <case>/bin/a = bin_src (the recorded binary) and returns its path. */
static void recorded(char *orig, const char *dir, const char *bin_src)
{
	tu_strf(orig, PATH_MAX, "%s/bin/a", dir);
	copy_file(bin_src, orig, NULL);
}

static void test_debuglink_places(void **state)
{
	char d[PATH_MAX], s[PATH_MAX], orig[PATH_MAX], p[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "link/next");
	recorded(orig, d, g.a_strip.path);
	copy_into(p, d, "bin/a.dbg", g.a_dbg.path);
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUGLINK);
	assert_true(r.has_debug_info);
	assert_true(r.build_id_verified);
	/* the stripped binary is the runtime binary */
	assert_int_equal(find(true, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	expect_found(&r, orig, LOC_ORIGINAL);
	/* without use_original_path, neither */
	o.use_original_path = false;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(find(true, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	o.use_original_path = true;

	case_dir(d, "link/dotdebug");
	recorded(orig, d, g.a_strip.path);
	copy_into(p, d, "bin/.debug/a.dbg", g.a_dbg.path);
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUGLINK);

	case_dir(d, "link/system");
	case_dir(s, "link/sysroot");
	recorded(orig, d, g.a_strip.path);
	tu_strf(p, sizeof(p), "%s%s/bin/a.dbg", s, d);
	copy_file(g.a_dbg.path, p, NULL);
	o.system_debug_dir = s;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUGLINK);
}

/* The recorded path goes through a symlinked directory; the debug file sits by the real one. */
static void test_debuglink_resolved_dir(void **state)
{
	char d[PATH_MAX], s[PATH_MAX], real[PATH_MAX], lnk[PATH_MAX], orig[PATH_MAX], p[PATH_MAX];
	char *rd;
	struct loc_opts o;
	struct loc_result r;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "link/resolved");
	case_dir(s, "link/resolved-sys");
	rd = realpath(d, NULL); /* $TMPDIR itself may contain symlinks */
	assert_non_null(rd);
	copy_into(real, d, "usr/lib/a", g.a_strip.path);
	tu_strf(lnk, sizeof(lnk), "%s/lib", d);
	link_to("usr/lib", lnk);
	tu_strf(orig, sizeof(orig), "%s/lib/a", d);
	/* the system tree knows only the resolved directory */
	tu_strf(p, sizeof(p), "%s%s/usr/lib/a.dbg", s, rd);
	free(rd);
	copy_file(g.a_dbg.path, p, NULL);
	opts_none(&o);
	o.use_original_path = true;
	o.system_debug_dir = s;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUGLINK);
}

static void test_debuglink_bad_crc(void **state)
{
	char d[PATH_MAX], orig[PATH_MAX], p[PATH_MAX], good[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "link/badcrc");
	recorded(orig, d, g.a_strip.path);
	tu_strf(p, sizeof(p), "%s/bin/a.dbg", d);
	copy_file(g.a_dbg.path, p, "x"); /* same build-id, one byte more: another CRC */
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.bad_crc, 1);
	assert_int_equal(st.no_symbols, 1); /* the stripped binary itself */
	/* the next place still counts */
	copy_into(good, d, "bin/.debug/a.dbg", g.a_dbg.path);
	memset(&st, 0, sizeof(st));
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	assert_string_equal(r.path, good);
	assert_int_equal(st.bad_crc, 1);
}

/* The CRC is right but the file is another program's: the build-id decides. */
static void test_debuglink_wrong_build_id(void **state)
{
	char d[PATH_MAX], orig[PATH_MAX], p[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "link/wrongid");
	recorded(orig, d, g.a_badl.path);
	copy_into(p, d, "bin/a.dbg", g.c_dbg.path);
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.wrong_build_id, 1);
	assert_int_equal(st.bad_crc, 0);
	/* a recorded binary with another build-id is not followed at all */
	case_dir(d, "link/otherbin");
	recorded(orig, d, g.c_full.path);
	memset(&st, 0, sizeof(st));
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.wrong_build_id, 1);
	assert_int_equal(st.probed, 1);
}

static void test_original_path(void **state)
{
	char d[PATH_MAX], orig[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "orig");
	recorded(orig, d, g.a_full.path);
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	expect_found(&r, orig, LOC_ORIGINAL);
	assert_true(r.has_debug_info);
	assert_true(r.build_id_verified);
	assert_int_equal(find(true, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	expect_found(&r, orig, LOC_ORIGINAL);
	/* the same path asked for with another build-id */
	assert_int_equal(find(false, &o, &g.c_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(find(true, &o, &g.c_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.wrong_build_id, 2);
	/* pseudo paths and missing files are not errors */
	assert_int_equal(find(false, &o, &g.a_full, "[vdso]", &r, NULL), CONV_E_NOTFOUND);
	assert_int_equal(find(false, &o, &g.a_full, "//anon", &r, NULL), CONV_E_NOTFOUND);
	assert_int_equal(find(false, &o, &g.a_full, "/nonexistent/a", &r, NULL), CONV_E_NOTFOUND);
	/* a directory or a FIFO at the recorded path is not opened */
	assert_int_equal(find(false, &o, &g.a_full, d, &r, NULL), CONV_E_NOTFOUND);
	{
		char fifo[PATH_MAX];

		tu_strf(fifo, sizeof(fifo), "%s/fifo", d);
		assert_int_equal(mkfifo(fifo, 0600), 0);
		assert_int_equal(find(false, &o, &g.a_full, fifo, &r, NULL), CONV_E_NOTFOUND);
	}
}

/* DWARF anywhere beats a symbol table found earlier; a symbol table beats nothing. */
static void test_symtab_fallback(void **state)
{
	char d[PATH_MAX], h[PATH_MAX], hd[PATH_MAX], orig[PATH_MAX], p[PATH_MAX], want[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "fallback/dir");
	id_path(p, d, &g.a_full, ".debug");
	copy_file(g.a_sym.path, p, NULL); /* symtab only */
	case_dir(h, "fallback/home");
	tu_strf(hd, sizeof(hd), "%s/.debug", h);
	perf_entry(hd, "/usr/bin/a", &g.a_full, g.a_strip.path, g.a_dbg.path, true);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	o.home = h;
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	id_path(want, hd, &g.a_full, "/debug");
	assert_string_equal(r.path, want);
	assert_true(r.has_debug_info);
	/* without the cache: the first symbol table */
	o.home = "";
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUG_DIR);
	assert_false(r.has_debug_info);
	assert_true(r.has_symtab);

	/* a recorded binary with only a symtab */
	case_dir(d, "fallback/orig");
	recorded(orig, d, g.a_sym.path);
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_OK);
	assert_int_equal(r.source, LOC_ORIGINAL);
	assert_false(r.has_debug_info);
	assert_true(r.has_symtab);
	/* a fully stripped one has nothing to offer */
	recorded(orig, d, g.a_strip.path);
	memset(&st, 0, sizeof(st));
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.no_symbols, 1);
}

/* loc_find_binary never returns a debug-only file, wherever it is planted. */
static void test_binary_never_debug_only(void **state)
{
	char d[PATH_MAX], s[PATH_MAX], h[PATH_MAX], hd[PATH_MAX], orig[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { d };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };
	const char *debug_only = g.have_eu ? g.a_eu.path : g.a_dbg.path;

	(void)state;
	NEED_TOOLS();
	case_dir(d, "dbgonly/dir");
	case_dir(s, "dbgonly/sys");
	case_dir(h, "dbgonly/home");
	id_path(p, d, &g.a_full, "");
	copy_file(g.a_dbg.path, p, NULL);
	copy_into(p, d, "usr/bin/a", debug_only);
	id_path(p, s, &g.a_full, "");
	link_to(g.a_dbg.path, p);
	tu_strf(hd, sizeof(hd), "%s/.debug", h);
	perf_entry(hd, "/usr/bin/a", &g.a_full, g.a_dbg.path, g.a_dbg.path, true);
	case_dir(p, "dbgonly/orig");
	recorded(orig, p, debug_only);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	o.system_debug_dir = s;
	o.home = h;
	o.use_original_path = true;
	assert_int_equal(find(true, &o, &g.a_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_true(st.debug_only >= 4);
	assert_int_equal(st.wrong_build_id, 0);
	memset(&st, 0, sizeof(st));
	assert_int_equal(find(true, &o, &g.a_full, "/usr/bin/a", &r, &st), CONV_E_NOTFOUND);
	assert_true(st.debug_only >= 4);
	/* the same files are fine as debug info */
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	assert_true(r.has_debug_info);
	/* a real runtime copy in the cache is found past all of them */
	tu_strf(p, sizeof(p), "%s/usr/bin/a/%s/vdso", hd, g.a_full.hex);
	copy_file(g.a_strip.path, p, NULL);
	assert_int_equal(find(true, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	assert_int_equal(r.source, LOC_PERF_CACHE);
	id_path(p, hd, &g.a_full, "/vdso");
	assert_string_equal(r.path, p);
}

/* Both kinds of debug-only files are recognized on their own. */
static void test_debug_only_kinds(void **state)
{
	const char *dirs[1];
	char d[PATH_MAX], p[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	if (!g.have_eu)
		skip();
	case_dir(d, "kinds");
	dirs[0] = d;
	id_path(p, d, &g.a_full, "");
	copy_file(g.a_eu.path, p, NULL);
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	assert_int_equal(find(true, &o, &g.a_full, NULL, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.debug_only, 1);
	assert_int_equal(find(false, &o, &g.a_full, NULL, &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	assert_true(r.has_debug_info);
}

static void test_not_found(void **state)
{
	char d[PATH_MAX];
	const char *dirs[3] = { d, "", "/nonexistent/dir" };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "empty");
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 3;
	o.home = d;
	o.system_debug_dir = d;
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, "/nonexistent/a", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(find(true, &o, &g.a_full, "/nonexistent/a", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.probed, 0);
	assert_int_equal(st.path_too_long, 0);
}

/* Paths that cannot fit are an error, never a truncated or overflowing path. */
static void test_path_too_long(void **state)
{
	static char huge[5000], big[4090], orig[5000];
	char s[PATH_MAX], p[PATH_MAX];
	const char *dirs[1] = { huge };
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };
	struct conv_diag diag = { 0 };

	(void)state;
	memset(huge, 'x', sizeof(huge) - 1);
	huge[0] = '/';
	memset(big, 'y', sizeof(big) - 1);
	big[0] = '/';
	memset(orig, 'z', sizeof(orig) - 1);
	orig[0] = '/';
	opts_none(&o);
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	{
		uint8_t id[20] = { 0xab, 0xcd };
		struct elf_file e = { .len = 20 };

		memcpy(e.id, id, sizeof(id));
		assert_int_equal(find(false, &o, &e, NULL, &r, &st), CONV_E_LIMIT);
		assert_true(st.path_too_long > 0);
		/* fits alone, not with what is appended */
		dirs[0] = big;
		assert_int_equal(find(true, &o, &e, NULL, &r, &st), CONV_E_LIMIT);
		/* a recorded path that long */
		o.nr_debug_dirs = 0;
		o.use_original_path = true;
		assert_int_equal(loc_find_debug(&o, e.id, e.len, orig, &r, NULL, &diag), CONV_E_LIMIT);
		assert_int_equal(diag.code, CONV_E_LIMIT);
		assert_non_null(strstr(diag.msg, "longer than"));
		o.home = big;
		assert_int_equal(find(false, &o, &e, "/usr/bin/a", &r, NULL), CONV_E_LIMIT);
		o.home = "";
		o.system_debug_dir = huge;
		assert_int_equal(find(false, &o, &e, NULL, &r, NULL), CONV_E_LIMIT);
		o.system_debug_dir = "";
		o.perf_cache_dir = huge;
		assert_int_equal(find(true, &o, &e, NULL, &r, NULL), CONV_E_LIMIT);
	}
	/* other places still work */
	NEED_TOOLS();
	case_dir(s, "long/sys");
	id_path(p, s, &g.a_full, ".debug");
	copy_file(g.a_dbg.path, p, NULL);
	opts_none(&o);
	dirs[0] = huge;
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	o.system_debug_dir = s;
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.a_full, orig, &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
}

/* perf recorded no build-id: the recorded path and its debuglink, CRC-checked. */
static void test_path_only_mode(void **state)
{
	char d[PATH_MAX], orig[PATH_MAX], p[PATH_MAX];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "noid");
	recorded(orig, d, g.n_strip.path);
	copy_into(p, d, "bin/n.dbg", g.n_dbg.path);
	opts_none(&o);
	o.use_original_path = true;
	assert_int_equal(find(false, &o, &g.n_full, orig, &r, &st), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUGLINK);
	assert_false(r.build_id_verified);
	assert_true(r.has_debug_info);
	assert_int_equal(find(true, &o, &g.n_full, orig, &r, &st), CONV_E_OK);
	assert_string_equal(r.path, orig);
	assert_false(r.build_id_verified);
	/* a changed debug file is refused by its CRC */
	copy_file(g.n_dbg.path, p, "x");
	assert_int_equal(find(false, &o, &g.n_full, orig, &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.bad_crc, 1);
	/* the unstripped binary itself */
	recorded(orig, d, g.n_full.path);
	assert_int_equal(find(false, &o, &g.n_full, orig, &r, NULL), CONV_E_OK);
	expect_found(&r, orig, LOC_ORIGINAL);
	/* nothing else is consulted without a build-id, and not without the recorded path */
	o.use_original_path = false;
	assert_int_equal(find(false, &o, &g.n_full, orig, &r, NULL), CONV_E_NOTFOUND);
	/* but a folder the user names (-d): DIR/<basename>, taken unverified */
	{
		char dd[PATH_MAX], f[PATH_MAX];
		const char *dirs[1];

		tu_strf(dd, sizeof(dd), "%s/given", d);
		assert_int_equal(mkdir(dd, 0755), 0);
		tu_strf(f, sizeof(f), "%s/a", dd);
		copy_file(g.n_full.path, f, NULL);
		dirs[0] = dd;
		o.debug_dirs = dirs;
		o.nr_debug_dirs = 1;
		assert_int_equal(find(true, &o, &g.n_full, "/nonexistent/bin/a", &r, NULL), CONV_E_OK);
		assert_string_equal(r.path, f);
		assert_int_equal(r.source, LOC_DEBUG_DIR);
		assert_int_equal(find(false, &o, &g.n_full, "/nonexistent/bin/a", &r, NULL), CONV_E_OK);
		assert_string_equal(r.path, f);
		/* another basename is not taken */
		assert_int_equal(find(true, &o, &g.n_full, "/nonexistent/bin/b", &r, NULL), CONV_E_NOTFOUND);
	}
}

/*
 * Path-only mode's -d DIR candidates must lie inside DIR: a recorded path
 * with ../ and a symlink in DIR leading out are refused (counted), a
 * symlink that stays inside is followed, and with a build-id a build-id
 * tree's link out of DIR is still taken (the file proves itself). A FIFO
 * where a file is looked for is never opened.
 */
static void test_debug_dir_confined(void **state)
{
	char d[PATH_MAX], dd[PATH_MAX], secret[PATH_MAX], p[PATH_MAX], orig[PATH_MAX];
	const char *dirs[1];
	struct loc_opts o;
	struct loc_result r;
	struct loc_stats st = { 0 };

	(void)state;
	NEED_TOOLS();
	case_dir(d, "confined");
	tu_strf(dd, sizeof(dd), "%s/given", d);
	tu_mkdirs(dd, 0755);
	copy_into(secret, d, "outside/secret.so", g.n_full.path);
	opts_none(&o);
	dirs[0] = dd;
	o.debug_dirs = dirs;
	o.nr_debug_dirs = 1;
	/* DIR/../outside/secret.so as DIR/<recorded path> */
	assert_int_equal(find(true, &o, &g.n_full, "/../outside/secret.so", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(find(false, &o, &g.n_full, "/../outside/secret.so", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.outside_dir, 2); /* DIR/<path> for the binary and the debug info */
	assert_int_equal(st.probed, 0);
	/* DIR/<basename>, a symlink out of DIR */
	memset(&st, 0, sizeof(st));
	tu_strf(p, sizeof(p), "%s/lib.so", dd);
	link_to(secret, p);
	assert_int_equal(find(true, &o, &g.n_full, "/usr/lib/lib.so", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.outside_dir, 1);
	assert_int_equal(st.probed, 0);
	/* a symlink that stays in DIR is followed */
	copy_into(p, dd, "inside/real.so", g.n_full.path);
	tu_strf(p, sizeof(p), "%s/in.so", dd);
	link_to("inside/real.so", p);
	assert_int_equal(find(true, &o, &g.n_full, "/usr/lib/in.so", &r, NULL), CONV_E_OK);
	expect_found(&r, p, LOC_DEBUG_DIR);
	/* a FIFO in DIR is counted, not opened (the open would wait for a writer) */
	memset(&st, 0, sizeof(st));
	tu_strf(p, sizeof(p), "%s/fifo.so", dd);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(find(true, &o, &g.n_full, "/usr/lib/fifo.so", &r, &st), CONV_E_NOTFOUND);
	assert_int_equal(st.not_regular, 1);
	assert_int_equal(st.probed, 0);
	/* with a build-id: DIR/.build-id/NN/REST.debug linking out of DIR is proven by the note */
	copy_into(orig, d, "elsewhere/a.dbg", g.a_dbg.path);
	id_path(p, dd, &g.a_full, ".debug");
	link_to(orig, p);
	assert_int_equal(find(false, &o, &g.a_full, "/../outside/a", &r, NULL), CONV_E_OK);
	assert_string_equal(r.path, p);
	assert_true(r.build_id_verified);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_names),
		cmocka_unit_test(test_invalid_arguments),
		cmocka_unit_test(test_debug_dir_build_id_tree),
		cmocka_unit_test(test_debug_dir_is_build_id_dir),
		cmocka_unit_test(test_debug_dir_md5_build_id),
		cmocka_unit_test(test_debug_dir_perf_layout),
		cmocka_unit_test(test_debug_dir_perf_archive),
		cmocka_unit_test(test_debug_dirs_order_and_wrong_id),
		cmocka_unit_test(test_debug_dir_sysroot_and_flat),
		cmocka_unit_test(test_system_dir),
		cmocka_unit_test(test_perf_cache),
		cmocka_unit_test(test_debuglink_places),
		cmocka_unit_test(test_debuglink_resolved_dir),
		cmocka_unit_test(test_debuglink_bad_crc),
		cmocka_unit_test(test_debuglink_wrong_build_id),
		cmocka_unit_test(test_original_path),
		cmocka_unit_test(test_symtab_fallback),
		cmocka_unit_test(test_binary_never_debug_only),
		cmocka_unit_test(test_debug_only_kinds),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test(test_path_only_mode),
		cmocka_unit_test(test_debug_dir_confined),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
