/*
 * dwline against libdw: conv's own line-table decoder must answer exactly
 * as libdw 0.188 does, since the symbolizer uses one or the other per unit.
 *
 * For every unit of each ELF below, the table is decoded both ways and
 * compared: the file list name by name (dwarf_filesrc), and the row found
 * for every address of libdw's rows and its neighbours (addr - 1, addr + 1)
 * plus a spread of addresses through the unit's range (dwarf_getsrc_die:
 * line, column, file name; both none when libdw finds none). A unit dwline
 * declines is counted; on the binaries compiled here none may be declined
 * (so the comparison covers DWARF 2, 3, 4 and 5, gcc and clang, C and C++,
 * 64- and 32-bit, and sections from --gc-sections).
 *
 * ELFs: small programs compiled at test time into a temp dir (skipped
 * per compiler when missing), up to 40 files from /usr/lib/debug (the
 * distribution's DWARF, when installed; CONV_DWLINE_MAX=N for more), and
 * the files named in CONV_DWLINE_FILES (colon-separated; each must be an
 * ELF with DWARF).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolize/dwline.h"

#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[PATH_MAX];

struct tally {
	size_t files, units, declined, rows, lookups;
};

static int sh(const char *cmd)
{
	char full[8192];
	int st;

	snprintf(full, sizeof(full), "cd '%s' && ( %s ) >>log 2>&1", tmpdir, cmd);
	st = system(full);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static void load_sections(Elf *e, struct dwline_sections *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	s->swap = (elf_getident(e, NULL)[EI_DATA] == ELFDATA2MSB) !=
		  (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		if (!strcmp(name, ".debug_line")) {
			s->line = d->d_buf;
			s->line_len = d->d_size;
		} else if (!strcmp(name, ".debug_line_str")) {
			s->line_str = d->d_buf;
			s->line_str_len = d->d_size;
		} else if (!strcmp(name, ".debug_str")) {
			s->str = d->d_buf;
			s->str_len = d->d_size;
		}
	}
}

static void same_row(const char *path, Dwarf_Die *cudie, const struct dwline_table *t, uint64_t a,
		     struct tally *ty)
{
	Dwarf_Line *l = dwarf_getsrc_die(cudie, a);
	const struct dwline_row *r = dwline_find(t, a);
	int ln = 0, col = 0;
	const char *lf, *rf;

	ty->lookups++;
	if (!l || !r) {
		if (!!l != !!r)
			fail_msg("%s: 0x%llx: libdw %s a row, dwline %s", path, (unsigned long long)a,
				 l ? "finds" : "does not find", r ? "does" : "does not");
		return;
	}
	dwarf_lineno(l, &ln);
	dwarf_linecol(l, &col);
	lf = dwarf_linesrc(l, NULL, NULL);
	rf = r->file < t->nr_files ? t->files[r->file] : NULL;
	if (ln != r->line || col != r->column || !!lf != !!rf || (lf && strcmp(lf, rf)))
		fail_msg("%s: 0x%llx: libdw %s:%d:%d, dwline %s:%d:%d", path, (unsigned long long)a,
			 lf ? lf : "(null)", ln, col, rf ? rf : "(null)", (int)r->line, (int)r->column);
}

/* Compares every unit of one ELF; false when it has no DWARF (not counted). */
static bool compare_elf(const char *path, struct tally *ty)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	struct dwline_sections s;

	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
	if (!dw) {
		if (e)
			elf_end(e);
		close(fd);
		return false;
	}
	/* after dwarf_begin_elf: libdw decompresses zlib sections in place */
	load_sections(e, &s);
	ty->files++;
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Attribute a;
		Dwarf_Word off;
		Dwarf_Die tmp;
		uint8_t asz = 0, osz = 0;
		struct dwline_table t;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t nlines = 0, nfiles = 0;
		const char *comp_dir;

		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type ||
		    unit_type == DW_UT_skeleton || !dwarf_attr(&cudie, DW_AT_stmt_list, &a) ||
		    dwarf_formudata(&a, &off) != 0 || !dwarf_diecu(&cudie, &tmp, &asz, &osz))
			continue;
		ty->units++;
		comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));
		if (!dwline_decode(&t, &s, off, asz, comp_dir)) {
			ty->declined++;
			continue;
		}
		if (dwarf_getsrclines(&cudie, &lines, &nlines) != 0 ||
		    dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
			fail_msg("%s: unit at 0x%llx: dwline decoded a table libdw rejects", path,
				 (unsigned long long)dwarf_dieoffset(&cudie));
		if (nfiles != t.nr_files)
			fail_msg("%s: unit at 0x%llx: libdw %zu files, dwline %zu", path,
				 (unsigned long long)dwarf_dieoffset(&cudie), nfiles, t.nr_files);
		for (size_t i = 0; i < nfiles; i++) {
			const char *n = dwarf_filesrc(files, i, NULL, NULL);

			if (!n || strcmp(n, t.files[i]))
				fail_msg("%s: file %zu: libdw %s, dwline %s", path, i, n ? n : "(null)",
					 t.files[i]);
		}
		if (nlines != t.nr_rows)
			fail_msg("%s: unit at 0x%llx: libdw %zu rows, dwline %zu", path,
				 (unsigned long long)dwarf_dieoffset(&cudie), nlines, t.nr_rows);
		ty->rows += nlines;
		for (size_t i = 0; i < nlines; i++) {
			Dwarf_Addr addr;

			assert_int_equal(dwarf_lineaddr(dwarf_onesrcline(lines, i), &addr), 0);
			same_row(path, &cudie, &t, addr, ty);
			same_row(path, &cudie, &t, addr + 1, ty);
			if (addr)
				same_row(path, &cudie, &t, addr - 1, ty);
		}
		/* and a spread through the unit's address range */
		if (nlines) {
			Dwarf_Addr lo, hi;

			dwarf_lineaddr(dwarf_onesrcline(lines, 0), &lo);
			dwarf_lineaddr(dwarf_onesrcline(lines, nlines - 1), &hi);
			for (Dwarf_Addr x = lo; hi > lo && x <= hi; x += (hi - lo) / 97 + 1)
				same_row(path, &cudie, &t, x, ty);
		}
		dwline_release(&t);
	}
	dwarf_end(dw);
	elf_end(e);
	close(fd);
	return true;
}

static const char prog_c[] =
	"#include <stdio.h>\n"
	"#include \"inc/helper.h\"\n"
	"static inline __attribute__((always_inline)) int sq(int x) { return x * x; }\n"
	"__attribute__((noinline)) int work(int n) {\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < n; i++)\n"
	"		s += sq(i) + helper(i);\n"
	"	return s;\n"
	"}\n"
	"__attribute__((noinline)) int unused_fn(int n) { return n * 3 + 1; }\n"
	"int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", work(argc * 1000)); return 0; }\n";

static const char helper_h[] =
	"static inline int helper(int x)\n"
	"{\n"
	"	return x ^ (x >> 3);\n"
	"}\n";

static const char prog_cc[] =
	"#include <vector>\n"
	"#include <algorithm>\n"
	"template <class T> struct Box { T v; T get() const { return v * 2; } };\n"
	"int main(int argc, char **) {\n"
	"	std::vector<int> v;\n"
	"	for (int i = 0; i < argc * 100; i++) v.push_back(Box<int>{i}.get());\n"
	"	std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });\n"
	"	return v.empty() ? 0 : v[0] & 1;\n"
	"}\n";

static void write_file(const char *name, const char *text)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void test_compiled(void **state)
{
	static const struct {
		const char *tool, *cmd, *out;
	} builds[] = {
		{"gcc", "gcc -O2 -g -gdwarf-5 -o g5 p.c", "g5"},
		{"gcc", "gcc -O2 -g -gdwarf-4 -o g4 p.c", "g4"},
		{"gcc", "gcc -O1 -g -gdwarf-3 -o g3 p.c", "g3"},
		{"gcc", "gcc -O0 -g -gdwarf-2 -o g2 p.c", "g2"},
		{"gcc", "gcc -O2 -g -ffunction-sections -Wl,--gc-sections -o ggc p.c", "ggc"},
		{"gcc", "gcc -O2 -g -m32 -o g32 p.c", "g32"},
		{"gcc", "gcc -O2 -g -gz=zlib -o gz p.c", "gz"},
		{"g++", "g++ -O2 -g -o gxx p.cc", "gxx"},
		{"g++", "g++ -O2 -g -gdwarf-4 -o gxx4 p.cc", "gxx4"},
		{"clang", "clang -O2 -g -o c5 p.c", "c5"},
		{"clang", "clang -O2 -g -gdwarf-4 -o c4 p.c", "c4"},
	};
	struct tally ty;
	size_t built = 0;

	(void)state;
	memset(&ty, 0, sizeof(ty));
	snprintf(tmpdir, sizeof(tmpdir), "%s/conv-dwline-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	assert_int_equal(sh("mkdir -p inc"), 0);
	write_file("p.c", prog_c);
	write_file("inc/helper.h", helper_h);
	write_file("p.cc", prog_cc);
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		char p[PATH_MAX + 64];

		if (!have(builds[i].tool))
			continue;
		/* -m32 needs gcc-multilib: a build that fails for lack of it is skipped */
		if (sh(builds[i].cmd) != 0) {
			print_message("dwline: not built (toolchain lacks it): %s\n", builds[i].cmd);
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", tmpdir, builds[i].out);
		assert_true(compare_elf(p, &ty));
		built++;
	}
	print_message("dwline: %zu binaries, %zu units, %zu rows, %zu lookups compared, %zu declined\n",
		      built, ty.units, ty.rows, ty.lookups, ty.declined);
	if (!getenv("CONV_KEEP_TMP"))
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (!built)
		skip();
	assert_int_equal(ty.declined, 0);
	assert_true(ty.lookups > 100);
}

/* nftw has no user pointer: the walk's state */
static struct tally debug_tally;
static size_t nr_debug;

static int visit_debug(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	const char *mx = getenv("CONV_DWLINE_MAX");

	if (flag != FTW_F || !S_ISREG(st->st_mode) || nr_debug >= (mx ? strtoul(mx, NULL, 10) : 40) ||
	    st->st_size > (64 << 20))
		return 0;
	if (compare_elf(p, &debug_tally))
		nr_debug++;
	return 0;
}

static void test_distribution_debug_files(void **state)
{
	struct tally *ty = &debug_tally;

	(void)state;
	if (access("/usr/lib/debug/.build-id", R_OK) != 0)
		skip();
	nftw("/usr/lib/debug/.build-id", visit_debug, 16, FTW_PHYS);
	print_message("dwline: %zu debug files, %zu units (%zu declined), %zu rows, %zu lookups compared\n",
		      ty->files, ty->units, ty->declined, ty->rows, ty->lookups);
	if (!ty->units)
		skip();
}

/* CONV_DWLINE_FILES=A:B:...: more ELFs to compare (e.g. a large library with DWARF). */
static void test_extra_files(void **state)
{
	const char *list = getenv("CONV_DWLINE_FILES");
	char buf[8192], *save = NULL;
	struct tally ty;

	(void)state;
	if (!list || !*list)
		skip();
	memset(&ty, 0, sizeof(ty));
	snprintf(buf, sizeof(buf), "%s", list);
	/* a file named here and not compared (unreadable, no DWARF) would pass unseen */
	for (char *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save))
		if (!compare_elf(p, &ty))
			fail_msg("%s: not compared (cannot be opened, or has no DWARF)", p);
	print_message("dwline: %zu extra files, %zu units (%zu declined), %zu rows, %zu lookups compared\n",
		      ty.files, ty.units, ty.declined, ty.rows, ty.lookups);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled),
		cmocka_unit_test(test_distribution_debug_files),
		cmocka_unit_test(test_extra_files),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
