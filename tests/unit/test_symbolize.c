/*
 * sym_file tests against the addr2line tools. Tiny programs are compiled at
 * test time into a temporary directory (gcc DWARF 5 and 4, clang without
 * .debug_aranges, zlib/zstd-compressed debug sections, split DWARF, dwz
 * multi-file mode, stripped runtime + objcopy --only-keep-debug files for
 * PIE, -no-pie and lld, binaries without DWARF, C++ and Rust), and every
 * byte of some functions is looked up both here and with llvm-addr2line,
 * binutils addr2line or eu-addr2line (-a -f -i): function name per frame,
 * inline depth, file basename and line must agree. The always_inline
 * helpers give inline chains of depth 3 whose call-site lines and
 * declaration lines are checked against the sources below.
 *
 * A case whose tool is missing is skipped, not failed. CONV_KEEP_TMP keeps
 * the temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"
#include "tests/unit/testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the programs ---- */

/* Line numbers of P_SRC that the inline checks rely on. */
#define P_MIX_DECL 2
#define P_STEP_DECL 8
#define P_STEP_CALLS_MIX 10
#define P_WORK_DECL 13
#define P_WORK_CALLS_STEP 17

static const char P_SRC[] =
	"#include <stdlib.h>\n"                                                  /* 1 */
	"static inline __attribute__((always_inline)) int mix(int x)\n"          /* 2 */
	"{\n"                                                                    /* 3 */
	"	int r = x * 2654435761u;\n"                                      /* 4 */
	"	r ^= r >> 13;\n"                                                 /* 5 */
	"	return r + 7;\n"                                                 /* 6 */
	"}\n"                                                                    /* 7 */
	"static inline __attribute__((always_inline)) int step(int x, int y)\n"  /* 8 */
	"{\n"                                                                    /* 9 */
	"	int m = mix(x ^ y);\n"                                           /* 10 */
	"	return m * 31 + y;\n"                                            /* 11 */
	"}\n"                                                                    /* 12 */
	"__attribute__((noinline)) int work(int n)\n"                            /* 13 */
	"{\n"                                                                    /* 14 */
	"	int s = 0;\n"                                                    /* 15 */
	"	for (int i = 0; i < n; i++)\n"                                   /* 16 */
	"		s += step(i, s);\n"                                      /* 17 */
	"	return s;\n"                                                     /* 18 */
	"}\n"                                                                    /* 19 */
	"__attribute__((noinline)) int other(int n)\n"                           /* 20 */
	"{\n"                                                                    /* 21 */
	"	return work(n) * 3 + n;\n"                                       /* 22 */
	"}\n"                                                                    /* 23 */
	"int main(int argc, char **argv)\n"                                      /* 24 */
	"{\n"                                                                    /* 25 */
	"	(void)argv;\n"                                                   /* 26 */
	"	return other(argc * 1000) & 1;\n"                                /* 27 */
	"}\n";                                                                   /* 28 */

/* dwz input: the inline helpers and a big struct are shared by a.c and b.c. */
static const char DWZ_H[] =
	"struct big { long a, b, c, d, e, f, g, h; int arr[8]; const char *name; };\n"
	"static inline __attribute__((always_inline)) long big_sum(const struct big *x, int k)\n"
	"{\n"
	"	long s = x->a + x->b * k;\n"
	"	s ^= x->c + x->d;\n"
	"	return s + x->arr[k & 7];\n"
	"}\n"
	"static inline __attribute__((always_inline)) long big_mix(struct big *x, int k)\n"
	"{\n"
	"	long s = big_sum(x, k);\n"
	"	x->e += s;\n"
	"	return s * 3 + x->f;\n"
	"}\n";

static const char DWZ_C_FMT[] =
	"#include \"common.h\"\n"
	"struct big g_%s;\n"
	"__attribute__((noinline)) long work_%s(int n)\n"
	"{\n"
	"	long t = 0;\n"
	"	for (int i = 0; i < n; i++)\n"
	"		t += big_mix(&g_%s, i);\n"
	"	return t;\n"
	"}\n"
	"int main(int argc, char **argv) { (void)argv; return (int)work_%s(argc * 100); }\n";

/* Symbol-table choices (built without -g). */
static const char ALIAS_SRC[] =
	"__attribute__((noinline)) int real_fn(int x) { return x * 7 + 3; }\n"
	/* a weak alias with a longer name: perf prefers the non-weak one */
	"extern int a_much_longer_weak_alias(int) __attribute__((weak, alias(\"real_fn\")));\n"
	/* a local alias: global beats local */
	"static int loc_alias(int) __attribute__((alias(\"real_fn\"), used));\n"
	"__attribute__((noinline)) int __under_fn(int x) { return x * 11 + 5; }\n"
	/* fewer leading underscores win */
	"extern int under_fn(int) __attribute__((alias(\"__under_fn\")));\n"
	"__attribute__((noinline)) int ab(int x) { return x * 13 + 1; }\n"
	/* same binding and underscores: the longer name wins */
	"extern int abcdef(int) __attribute__((alias(\"ab\")));\n"
	"__attribute__((noinline, weak)) int wk(int x) { return x * 17 + 2; }\n"
	/* a weak symbol and a local alias: non-weak first, so the local one */
	"static int wk_local(int) __attribute__((alias(\"wk\"), used));\n"
	/* a local sized symbol and a global size-0 one at one address (see test_symtab_fallback) */
	"__asm__(\".text\\n.p2align 4\\n.type loc_sized,@function\\n.globl zero_glob\\n\"\n"
	"        \".type zero_glob,@function\\nloc_sized:\\nzero_glob:\\n nop\\n nop\\n ret\\n\"\n"
	"        \".size loc_sized, .-loc_sized\\n\");\n"
	/* three globals with names of one length: perf keeps the first in .symtab */
	"__attribute__((noinline)) int twin_a(int x) { return x * 19 + 4; }\n"
	"extern int twin_b(int) __attribute__((alias(\"twin_a\")));\n"
	"extern int twin_c(int) __attribute__((alias(\"twin_a\")));\n"
	/* no .size: extends to the next symbol */
	"__asm__(\".text\\n.globl nosize_fn\\n.type nosize_fn,@function\\n\"\n"
	"        \".p2align 4\\nnosize_fn:\\n nop\\n nop\\n nop\\n nop\\n ret\\n\"\n"
	"        \".p2align 4\\n.globl after_nosize\\n.type after_nosize,@function\\n\"\n"
	"        \"after_nosize:\\n ret\\n.size after_nosize, .-after_nosize\\n\");\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return real_fn(argc) + under_fn(argc) + abcdef(argc) + wk(argc) + twin_b(argc);\n"
	"}\n";

/* A shared library: after strip --strip-all only .dynsym names remain. */
static const char LIB_SRC[] =
	"static __attribute__((noinline)) int hidden_helper(int x) { return x * x + 9; }\n"
	"__attribute__((noinline)) int api_alpha(int x) { return hidden_helper(x) * 3 + x; }\n"
	"__attribute__((noinline)) int api_beta(int x) { return api_alpha(x + 1) ^ 0x55; }\n";

#define CX_TWICE_DECL 2
#define CX_BUMP_CALLS_TWICE 10
#define CX_ADD_CALLS_BUMP 16

static const char CX_SRC[] =
	"namespace ns {\n"                                                              /* 1 */
	"template <typename T> static inline __attribute__((always_inline)) T twice(T x)\n" /* 2 */
	"{\n"                                                                           /* 3 */
	"	T r = x * (T)2654435761u;\n"                                            /* 4 */
	"	r ^= r >> 13;\n"                                                        /* 5 */
	"	return r + 7;\n"                                                        /* 6 */
	"}\n"                                                                           /* 7 */
	"struct Acc {\n"                                                                /* 8 */
	"	long v;\n"                                                              /* 9 */
	"	__attribute__((always_inline)) inline void bump(long x) { v += twice<long>(x ^ v); }\n" /* 10 */
	"	long add(int k);\n"                                                     /* 11 */
	"};\n"                                                                          /* 12 */
	"__attribute__((noinline)) long Acc::add(int k)\n"                              /* 13 */
	"{\n"                                                                           /* 14 */
	"	for (int i = 0; i < k; i++)\n"                                          /* 15 */
	"		bump(i);\n"                                                     /* 16 */
	"	return v;\n"                                                            /* 17 */
	"}\n"                                                                           /* 18 */
	"}\n"                                                                           /* 19 */
	"int main(int argc, char **)\n"                                                 /* 20 */
	"{\n"                                                                           /* 21 */
	"	ns::Acc a{argc};\n"                                                     /* 22 */
	"	return (int)a.add(argc * 1000) & 1;\n"                                  /* 23 */
	"}\n";                                                                          /* 24 */

static const char RS_SRC[] =
	"#[inline(always)]\n"
	"fn rs_step(x: u64, y: u64) -> u64 {\n"
	"    (x ^ y).wrapping_mul(0x9e3779b97f4a7c15).rotate_left(7)\n"
	"}\n"
	"#[inline(never)]\n"
	"fn rs_scramble(n: u64) -> u64 {\n"
	"    let mut s = 1u64;\n"
	"    for i in 0..n {\n"
	"        s = rs_step(s, i);\n"
	"    }\n"
	"    s\n"
	"}\n"
	"fn main() {\n"
	"    let n = std::env::args().count() as u64 * 1000;\n"
	"    std::process::exit((rs_scramble(n) & 1) as i32);\n"
	"}\n";

/* ---- state and helpers ---- */

static struct {
	char tmp[PATH_MAX];
	char llvm_a2l[64]; /* "" when missing */
	bool gcc, gxx, clang, lld, rustc, dwz, objcopy, strip, nm, readelf, bu_a2l, eu_a2l;
	bool built_p; /* tmp/p/{g5,g4,c5} */
} g;

/* Runs a shell command, output to tmp/log; the exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[16384], full[16384 + PATH_MAX + 32];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	snprintf(full, sizeof(full), "( %s ) >>'%s/log' 2>&1", cmd, g.tmp);
	st = system(full);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs a shell command and returns its stdout (malloc'd), NULL when it fails. */
static char *capture(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *capture(const char *fmt, ...)
{
	static char cmd[1 << 17];
	va_list ap;
	FILE *p;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int st, k;

	va_start(ap, fmt);
	k = vsnprintf(cmd, sizeof(cmd) - 64, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof(cmd) - 64)
		return NULL;
	strcat(cmd, " 2>/dev/null");
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? cap * 2 : 8192);

			assert_non_null(nb);
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool have(const char *tool)
{
	return sh("command -v %s", tool) == 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* tmp/sub, created. */
static void case_dir(char *out, const char *sub)
{
	tu_strf(out, PATH_MAX, "%s/%s", g.tmp, sub);
	mkdir(out, 0755);
}

struct nsym {
	uint64_t addr, size;
};

/* A defined symbol from nm -S (dynamic: nm -D). */
static bool nm_sym(const char *file, const char *name, bool dynamic, struct nsym *out)
{
	char *txt = capture("nm -S --defined-only %s '%s'", dynamic ? "-D" : "", file);
	char *save = NULL;
	bool found = false;

	if (!txt)
		return false;
	for (char *l = strtok_r(txt, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save)) {
		char a[32], b[32], c[512], d[512];
		int k = sscanf(l, "%31s %31s %511s %511s", a, b, c, d);

		if (k == 4 && !strcmp(d, name)) {
			out->addr = strtoull(a, NULL, 16);
			out->size = strtoull(b, NULL, 16);
			found = true;
		} else if (k == 3 && !strcmp(c, name)) {
			out->addr = strtoull(a, NULL, 16);
			out->size = 0;
			found = true;
		}
	}
	free(txt);
	return found;
}

/* nm_sym, asserted, with a non-zero size. */
static struct nsym must_sym(const char *file, const char *name)
{
	struct nsym s;

	if (!nm_sym(file, name, false, &s))
		fail_msg("%s: no symbol %s", file, name);
	assert_true(s.size > 0);
	return s;
}

/* Section `name`: 1 (flags, ch_type filled; ch_type 0 when not compressed), 0 absent, -1 error. */
static int elf_section(const char *path, const char *name, uint64_t *flags, int *chtype)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			GElf_Chdr ch;

			if (flags)
				*flags = sh.sh_flags;
			if (chtype)
				*chtype = (sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch)
						  ? (int)ch.ch_type
						  : 0;
			rc = 1;
			break;
		}
	}
	elf_end(e);
	close(fd);
	return rc;
}

/* The index of a symbol in .symtab, -1 when absent. */
static long symtab_index(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	long idx = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && idx < 0 && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				idx = (long)i;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return idx;
}

struct xload {
	uint64_t off, vaddr, filesz;
	int etype;
};

/* The executable PT_LOAD of a runtime binary. */
static bool exec_load(const char *path, struct xload *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t n;
	bool ok = false;
	GElf_Ehdr eh;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && gelf_getehdr(e, &eh) && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n && !ok; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				out->off = ph.p_offset;
				out->vaddr = ph.p_vaddr;
				out->filesz = ph.p_filesz;
				out->etype = eh.e_type;
				ok = true;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static struct sym_file *open_ok(const char *debug, const char *runtime)
{
	struct sym_file *f = NULL;
	struct conv_diag d;
	enum conv_err e = sym_file_open(&f, debug, runtime, &d);

	if (e != CONV_E_OK)
		fail_msg("sym_file_open(%s, %s): %s", debug, runtime ? runtime : "NULL", d.msg);
	assert_non_null(f);
	return f;
}

static struct sym_result lookup_ok(struct sym_file *f, uint64_t va)
{
	struct sym_result r;

	memset(&r, 0xa5, sizeof(r));
	assert_int_equal(sym_file_lookup(f, va, &r), CONV_E_OK);
	assert_int_equal(r.elf_va, va);
	assert_true(r.nr == 0 || r.frames != NULL);
	for (uint32_t i = 0; i < r.nr; i++) {
		assert_non_null(r.frames[i].function);
		assert_non_null(r.frames[i].system_name);
		assert_non_null(r.frames[i].file);
	}
	return r;
}

/* ---- addresses and the reference tools ---- */

struct addrs {
	uint64_t *v;
	size_t n, cap;
};

static void addrs_push(struct addrs *a, uint64_t v)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 256;
		uint64_t *p = realloc(a->v, nc * sizeof(*p));

		assert_non_null(p);
		a->v = p;
		a->cap = nc;
	}
	a->v[a->n++] = v;
}

/* Every byte of a function. */
static void addrs_func(struct addrs *a, const char *file, const char *name)
{
	struct nsym s = must_sym(file, name);

	for (uint64_t v = s.addr; v < s.addr + s.size; v++)
		addrs_push(a, v);
}

#define MAXF 16

struct rframe {
	char func[1024]; /* cut at 1023 bytes */
	char base[128];  /* file basename, "??" when unknown */
	unsigned line;
};

struct rres {
	uint64_t addr;
	unsigned nr;
	struct rframe f[MAXF];
};

/* "path:line", "path:line:col", "??:0", "??:?", maybe " (discriminator N)" after. */
static void parse_loc(const char *s, struct rframe *fr)
{
	char tmp[4096];
	char *c1, *c2, *d;

	tu_strf(tmp, sizeof(tmp), "%s", s);
	d = strstr(tmp, " (discriminator");
	if (d)
		*d = '\0';
	fr->line = 0;
	c1 = strrchr(tmp, ':');
	if (!c1) {
		tu_strf(fr->base, sizeof(fr->base), "%s", base_of(tmp));
		return;
	}
	*c1 = '\0';
	c2 = strrchr(tmp, ':');
	if (c2 && c2[1] && strspn(c2 + 1, "0123456789") == strlen(c2 + 1)) {
		/* path:line:col */
		fr->line = (unsigned)strtoul(c2 + 1, NULL, 10);
		*c2 = '\0';
	} else {
		fr->line = (unsigned)strtoul(c1 + 1, NULL, 10);
	}
	tu_strf(fr->base, sizeof(fr->base), "%s", base_of(tmp));
}

/*
 * Runs `tool -a -f -i [extra] -e file addr...` and parses one record per
 * address into out (n entries, in order). eu-addr2line's "f inlined at X in
 * g" function lines are cut to "f".
 */
static void ref_query(const char *tool, const char *extra, const char *file, const struct addrs *a,
		      struct rres *out)
{
	size_t cmdcap = 256 + strlen(file) + a->n * 20, pos;
	char *cmd = malloc(cmdcap), *txt, *save = NULL;
	struct rres *cur = NULL;
	size_t idx = 0;
	bool want_func = true;
	FILE *p;
	size_t len = 0, cap = 1 << 16, got;

	assert_non_null(cmd);
	pos = (size_t)snprintf(cmd, cmdcap, "%s -a -f -i %s -e '%s'", tool, extra, file);
	for (size_t i = 0; i < a->n; i++)
		pos += (size_t)snprintf(cmd + pos, cmdcap - pos, " 0x%" PRIx64, a->v[i]);
	snprintf(cmd + pos, cmdcap - pos, " 2>/dev/null");
	p = popen(cmd, "r");
	assert_non_null(p);
	txt = malloc(cap);
	assert_non_null(txt);
	while ((got = fread(txt + len, 1, cap - len - 1, p)) > 0) {
		len += got;
		if (cap - len < 4096) {
			cap *= 2;
			txt = realloc(txt, cap);
			assert_non_null(txt);
		}
	}
	txt[len] = '\0';
	pclose(p);
	free(cmd);
	memset(out, 0, a->n * sizeof(*out));
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (l[0] == '0' && l[1] == 'x') {
			uint64_t v = strtoull(l, &end, 16);

			if (*end == '\0') {
				assert_true(idx < a->n);
				cur = &out[idx++];
				cur->addr = v;
				assert_true(v == a->v[idx - 1]);
				want_func = true;
				continue;
			}
		}
		if (!cur)
			continue;
		if (want_func) {
			char *in = strstr(l, " inlined at ");

			if (in)
				*in = '\0';
			if (cur->nr < MAXF)
				snprintf(cur->f[cur->nr].func, sizeof(cur->f[0].func), "%s", l);
			want_func = false;
		} else {
			if (cur->nr < MAXF)
				parse_loc(l, &cur->f[cur->nr]);
			cur->nr++;
			want_func = true;
		}
	}
	free(txt);
	assert_int_equal(idx, a->n);
}

static void describe(char *buf, size_t size, const struct sym_result *r)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < r->nr && pos < size; i++)
		pos += (size_t)snprintf(buf + pos, size - pos, "%s[%s:%u]%s", i ? " <- " : "",
					r->frames[i].function, r->frames[i].line,
					r->frames[i].inlined ? "i" : "");
	if (!r->nr)
		snprintf(buf, size, "(nothing, how %d)", (int)r->how);
}

static void describe_ref(char *buf, size_t size, const struct rres *r)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < r->nr && i < MAXF && pos < size; i++)
		pos += (size_t)snprintf(buf + pos, size - pos, "%s%s[%s:%u]", i ? " <- " : "",
					r->f[i].func, r->f[i].base, r->f[i].line);
}

/*
 * Compares lookups with a reference tool over the addresses: function per
 * frame, depth, file basename, line. Addresses the tool cannot name are
 * skipped. Returns the number of addresses compared; fails on any mismatch
 * (after printing up to 8 of them).
 */
static size_t compare_ref(struct sym_file *f, const char *tool, const char *extra,
			  const char *file, const struct addrs *a)
{
	struct rres *ref = calloc(a->n, sizeof(*ref));
	size_t bad = 0, compared = 0;

	assert_non_null(ref);
	ref_query(tool, extra, file, a, ref);
	for (size_t i = 0; i < a->n; i++) {
		struct sym_result r = lookup_ok(f, a->v[i]);
		const struct rres *x = &ref[i];
		bool ok;

		if (x->nr == 0 || !strcmp(x->f[0].func, "??"))
			continue;
		compared++;
		ok = r.nr == x->nr;
		for (uint32_t k = 0; ok && k < r.nr && k < MAXF; k++) {
			const struct sym_frame *fr = &r.frames[k];

			if (strncmp(fr->function, x->f[k].func, sizeof(x->f[k].func) - 1) != 0)
				ok = false;
			if (strcmp(x->f[k].base, "??") != 0 &&
			    strcmp(base_of(fr->file), x->f[k].base) != 0)
				ok = false;
			if (fr->line != x->f[k].line)
				ok = false;
			if (fr->inlined != (k + 1 < r.nr))
				ok = false;
		}
		if (!ok && bad++ < 8) {
			char s1[2048], s2[2048];

			describe(s1, sizeof(s1), &r);
			describe_ref(s2, sizeof(s2), x);
			print_message("  %s 0x%" PRIx64 ": conv %s\n  %*s %s  %s\n", base_of(file),
				      a->v[i], s1, (int)strlen(base_of(file)) + 19, "", tool, s2);
		}
	}
	free(ref);
	if (bad)
		fail_msg("%s: %zu of %zu addresses differ from %s", file, bad, compared, tool);
	return compared;
}

static bool same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "(null)", b ? b : "(null)");
}

/* Two sym_files give the same results at every address (every field). */
static void compare_files(struct sym_file *f1, struct sym_file *f2, const struct addrs *a,
			  const char *what)
{
	size_t bad = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct sym_result r1 = lookup_ok(f1, a->v[i]), r2 = lookup_ok(f2, a->v[i]);
		bool ok = r1.how == r2.how && r1.nr == r2.nr;

		for (uint32_t k = 0; ok && k < r1.nr; k++) {
			const struct sym_frame *x = &r1.frames[k], *y = &r2.frames[k];

			ok = same_str(x->function, y->function) && same_str(x->system_name, y->system_name) &&
			     same_str(x->file, y->file) && x->line == y->line && x->column == y->column &&
			     x->start_line == y->start_line && x->inlined == y->inlined;
		}
		if (!ok && bad++ < 8) {
			char s1[2048], s2[2048];

			describe(s1, sizeof(s1), &r1);
			describe(s2, sizeof(s2), &r2);
			print_message("  %s 0x%" PRIx64 ":\n    %s\n    %s\n", what, a->v[i], s1, s2);
		}
	}
	if (bad)
		fail_msg("%s: %zu of %zu addresses differ", what, bad, a->n);
}

/*
 * Checks the inline chains of P_SRC at the addresses: some address has
 * mix <- step <- work and some step <- work, with the call-site lines and
 * declaration lines of the source. Returns the number of depth-3 addresses.
 */
static size_t check_p_inlines(struct sym_file *f, const struct addrs *a)
{
	size_t depth3 = 0, depth2 = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct sym_result r = lookup_ok(f, a->v[i]);

		if (r.how != SYM_DWARF || r.nr < 2 || strcmp(r.frames[r.nr - 1].function, "work"))
			continue;
		if (r.nr == 3) {
			assert_string_equal(r.frames[0].function, "mix");
			assert_string_equal(r.frames[1].function, "step");
			assert_string_equal(r.frames[2].function, "work");
			assert_true(r.frames[0].line >= P_MIX_DECL + 2 && r.frames[0].line <= P_MIX_DECL + 4);
			assert_int_equal(r.frames[1].line, P_STEP_CALLS_MIX);
			assert_int_equal(r.frames[2].line, P_WORK_CALLS_STEP);
			assert_int_equal(r.frames[0].start_line, P_MIX_DECL);
			assert_int_equal(r.frames[1].start_line, P_STEP_DECL);
			assert_int_equal(r.frames[2].start_line, P_WORK_DECL);
			assert_true(r.frames[0].inlined && r.frames[1].inlined && !r.frames[2].inlined);
			for (int k = 0; k < 3; k++) {
				assert_string_equal(base_of(r.frames[k].file), "p.c");
				assert_true(r.frames[k].file[0] == '/'); /* joined with the compile dir */
				assert_string_equal(r.frames[k].system_name, r.frames[k].function);
			}
			depth3++;
		} else if (r.nr == 2) {
			assert_string_equal(r.frames[0].function, "step");
			assert_int_equal(r.frames[0].start_line, P_STEP_DECL);
			assert_int_equal(r.frames[1].line, P_WORK_CALLS_STEP);
			assert_true(r.frames[0].inlined && !r.frames[1].inlined);
			depth2++;
		} else {
			fail_msg("0x%" PRIx64 ": unexpected inline depth %u", a->v[i], r.nr);
		}
	}
	assert_true(depth3 > 0);
	(void)depth2;
	return depth3;
}

/* work, other and main of a P_SRC binary, byte by byte. */
static void p_addrs(struct addrs *a, const char *file)
{
	addrs_func(a, file, "work");
	addrs_func(a, file, "other");
	addrs_func(a, file, "main");
}

/*
 * bin, a build of the p program: opened, with DWARF, every address as
 * llvm-addr2line gives it and the inline chains as the source has them.
 */
static struct sym_file *open_p_checked(const char *bin, struct addrs *a)
{
	struct sym_file *f = open_ok(bin, NULL);

	assert_true(sym_file_has_dwarf(f));
	p_addrs(a, bin);
	assert_int_equal(compare_ref(f, g.llvm_a2l, "", bin, a), a->n);
	check_p_inlines(f, a);
	return f;
}

/* Builds tmp/p/{p.c,g5,g4,c5}: gcc DWARF 5, gcc DWARF 4, clang (when present). */
static void build_p(void)
{
	char dir[PATH_MAX], src[PATH_MAX];

	if (g.built_p)
		return;
	case_dir(dir, "p");
	tu_strf(src, sizeof(src), "%s/p.c", dir);
	write_file(src, P_SRC);
	if (g.gcc) {
		assert_int_equal(sh("cd '%s' && gcc -O2 -g -gdwarf-5 -o g5 p.c", dir), 0);
		assert_int_equal(sh("cd '%s' && gcc -O2 -g -gdwarf-4 -o g4 p.c", dir), 0);
	}
	if (g.clang)
		assert_int_equal(sh("cd '%s' && clang -O2 -g -o c5 p.c", dir), 0);
	g.built_p = true;
}

#define NEED(cond)                                                                     \
	do {                                                                           \
		if (!(cond)) {                                                         \
			print_message("  skipped: %s\n", #cond);                       \
			skip();                                                        \
		}                                                                      \
	} while (0)

/* ---- 1, 2: gcc ---- */

static void check_gcc(const char *name)
{
	char bin[PATH_MAX];
	struct sym_file *f;
	struct addrs a = { 0 };
	size_t n;

	NEED(g.gcc && g.nm && (g.llvm_a2l[0] || g.bu_a2l));
	build_p();
	tu_strf(bin, sizeof(bin), "%s/p/%s", g.tmp, name);
	f = open_ok(bin, NULL);
	assert_true(sym_file_has_dwarf(f));
	assert_true(sym_file_has_phdrs(f));
	assert_true(sym_file_stats(f)->cus >= 1);
	p_addrs(&a, bin);
	if (g.llvm_a2l[0]) {
		n = compare_ref(f, g.llvm_a2l, "", bin, &a);
		assert_true(n == a.n);
	}
	if (g.bu_a2l)
		compare_ref(f, "addr2line", "-C", bin, &a);
	if (g.eu_a2l) /* gcc emits .debug_aranges: eu-addr2line works here */
		compare_ref(f, "eu-addr2line", "", bin, &a);
	check_p_inlines(f, &a);
	free(a.v);
	sym_file_close(f);
}

static void test_gcc_dwarf5(void **state)
{
	(void)state;
	check_gcc("g5");
}

static void test_gcc_dwarf4(void **state)
{
	(void)state;
	check_gcc("g4");
}

/* ---- 3: clang, no .debug_aranges ---- */

static void test_clang_no_aranges(void **state)
{
	char bin[PATH_MAX];
	struct sym_file *f;
	struct addrs a = { 0 };

	(void)state;
	NEED(g.clang && g.nm && g.llvm_a2l[0]);
	build_p();
	tu_strf(bin, sizeof(bin), "%s/p/c5", g.tmp);
	assert_int_equal(elf_section(bin, ".debug_info", NULL, NULL), 1);
	/* what the case is about: libdw's dwarf_addrdie would find nothing here */
	assert_int_equal(elf_section(bin, ".debug_aranges", NULL, NULL), 0);
	/* binutils 2.40 addr2line misses clang's DWARF 5 inlines: llvm-addr2line only */
	f = open_p_checked(bin, &a);
	assert_int_equal(sym_file_stats(f)->unresolved, 0);
	free(a.v);
	sym_file_close(f);
}

/* ---- 4: compressed debug sections ---- */

/* Whether `readelf -SW` shows flag C on the section. */
static bool readelf_flag_c(const char *file, const char *sect)
{
	char *txt = capture("readelf -SW '%s'", file), *save = NULL;
	bool c = false;

	if (!txt)
		return false;
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;
		bool mine = false;

		for (tok = strtok_r(l, " []", &s2); tok; tok = strtok_r(NULL, " []", &s2)) {
			if (!strcmp(tok, sect))
				mine = true;
			else if (mine && strchr(tok, 'C') && strspn(tok, "WAXMSILOGTCxoEDlp") == strlen(tok))
				c = true;
		}
	}
	free(txt);
	return c;
}

static void test_compressed(void **state)
{
	char bin[PATH_MAX], zl[PATH_MAX], zs[PATH_MAX];
	struct sym_file *f0, *f1, *f2;
	struct addrs a = { 0 };
	uint64_t flags;
	int ct;
	bool have_zstd;

	(void)state;
	NEED(g.gcc && g.nm && g.objcopy && g.readelf);
	build_p();
	tu_strf(bin, sizeof(bin), "%s/p/g5", g.tmp);
	tu_strf(zl, sizeof(zl), "%s/p/g5.zlib", g.tmp);
	tu_strf(zs, sizeof(zs), "%s/p/g5.zstd", g.tmp);
	assert_int_equal(sh("objcopy --compress-debug-sections=zlib '%s' '%s'", bin, zl), 0);
	have_zstd = sh("objcopy --compress-debug-sections=zstd '%s' '%s'", bin, zs) == 0;
	if (!have_zstd)
		print_message("  objcopy cannot write zstd sections: zstd half skipped\n");

	assert_int_equal(elf_section(zl, ".debug_info", &flags, &ct), 1);
	assert_true(flags & SHF_COMPRESSED);
	assert_int_equal(ct, ELFCOMPRESS_ZLIB);
	assert_true(readelf_flag_c(zl, ".debug_info"));
	assert_false(readelf_flag_c(bin, ".debug_info"));

	p_addrs(&a, bin);
	f0 = open_ok(bin, NULL);
	f1 = open_ok(zl, NULL);
	assert_true(sym_file_has_dwarf(f1));
	compare_files(f0, f1, &a, "zlib vs uncompressed");
	assert_int_equal(sym_file_stats(f1)->zstd_sections, 0);
	check_p_inlines(f1, &a);
	sym_file_close(f1);
	if (have_zstd) {
		assert_int_equal(elf_section(zs, ".debug_info", &flags, &ct), 1);
		assert_true(flags & SHF_COMPRESSED);
		assert_int_equal(ct, 2 /* ELFCOMPRESS_ZSTD */);
		assert_true(readelf_flag_c(zs, ".debug_info"));
		f2 = open_ok(zs, NULL);
		assert_true(sym_file_has_dwarf(f2));
		assert_true(sym_file_stats(f2)->zstd_sections > 0);
		compare_files(f0, f2, &a, "zstd vs uncompressed");
		check_p_inlines(f2, &a);
		/* and the file is unchanged on disk: a second open works the same */
		sym_file_close(f2);
		f2 = open_ok(zs, NULL);
		compare_files(f0, f2, &a, "zstd (reopened) vs uncompressed");
		sym_file_close(f2);
	}
	sym_file_close(f0);
	free(a.v);
	if (!have_zstd)
		skip();
}

/* ---- 5: split DWARF ---- */

/* Builds tmp/split/NAME from p.c with `cc_line -c`; false when the .dwo is not where expected. */
static bool build_split(const char *dir, const char *name, const char *cc_line)
{
	char dwo[PATH_MAX];

	assert_int_equal(sh("cd '%s' && %s -c p.c -o %s.o && %s -o %s %s.o", dir, cc_line, name,
			    cc_line, name, name),
			 0);
	tu_strf(dwo, sizeof(dwo), "%s/%s.dwo", dir, name);
	return exists(dwo);
}

static void test_split_dwarf(void **state)
{
	char dir[PATH_MAX], bin[PATH_MAX], dwo[PATH_MAX], off[PATH_MAX];
	struct sym_file *f;
	struct addrs a = { 0 };

	(void)state;
	NEED(g.gcc && g.nm && g.llvm_a2l[0]);
	case_dir(dir, "split");
	tu_strf(bin, sizeof(bin), "%s/p.c", dir);
	write_file(bin, P_SRC);

	/* DWARF 4 (GNU extension, DW_AT_GNU_dwo_name): llvm-addr2line reads it too */
	assert_true(build_split(dir, "sp4", "gcc -gdwarf-4 -gsplit-dwarf -O2 -g"));
	tu_strf(bin, sizeof(bin), "%s/sp4", dir);
	f = open_p_checked(bin, &a);
	sym_file_close(f);
	a.n = 0;

	/* clang's split units (addrx/rnglistx forms): llvm-addr2line-14 shows no inlines there, so only the source's chains are checked */
	if (g.clang) {
		assert_true(build_split(dir, "csp", "clang -gsplit-dwarf -O2 -g"));
		tu_strf(bin, sizeof(bin), "%s/csp", dir);
		f = open_ok(bin, NULL);
		p_addrs(&a, bin);
		check_p_inlines(f, &a);
		sym_file_close(f);
		a.n = 0;
	}

	/* DWARF 5 */
	assert_true(build_split(dir, "sp", "gcc -gsplit-dwarf -O2 -g"));
	tu_strf(bin, sizeof(bin), "%s/sp", dir);
	tu_strf(dwo, sizeof(dwo), "%s/sp.dwo", dir);
	tu_strf(off, sizeof(off), "%s/sp.dwo.off", dir);
	assert_int_equal(elf_section(bin, ".debug_info", NULL, NULL), 1);
	/* the skeleton has no subprograms: the inlines' names come from the .dwo */
	f = open_p_checked(bin, &a);
	sym_file_close(f);

	/*
	 * Without the .dwo: no crash; the symbol names the function and the
	 * skeleton's line table (which stays in the binary) gives file:line,
	 * as llvm-addr2line and eu-addr2line show it.
	 */
	assert_int_equal(rename(dwo, off), 0);
	f = open_ok(bin, NULL);
	assert_int_equal(compare_ref(f, g.llvm_a2l, "", bin, &a), a.n);
	for (size_t i = 0; i < a.n; i++) {
		struct sym_result r = lookup_ok(f, a.v[i]);

		assert_true(r.how != SYM_NONE);
		assert_int_equal(r.nr, 1);
		assert_false(r.frames[0].inlined);
	}
	sym_file_close(f);
	assert_int_equal(rename(off, dwo), 0);
	free(a.v);
}

/* ---- 6: dwz ---- */

static void test_dwz(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX], cwd[PATH_MAX], dbg[PATH_MAX], orig[PATH_MAX], rt[PATH_MAX],
		alt[PATH_MAX], altoff[PATH_MAX];
	struct sym_file *f, *f0;
	struct addrs a = { 0 };
	size_t chains = 0;

	(void)state;
	NEED(g.gcc && g.nm && g.objcopy && g.dwz);
	case_dir(dir, "dwz");
	tu_strf(p, sizeof(p), "%s/common.h", dir);
	write_file(p, DWZ_H);
	for (int i = 0; i < 2; i++) {
		const char *n = i ? "b" : "a";
		char src[2048];

		tu_strf(src, sizeof(src), DWZ_C_FMT, n, n, n, n);
		tu_strf(p, sizeof(p), "%s/%s.c", dir, n);
		write_file(p, src);
		assert_int_equal(sh("cd '%s' && gcc -O2 -g -o %s %s.c && objcopy --only-keep-debug %s %s.debug"
				    " && cp %s.debug %s.orig.debug",
				    dir, n, n, n, n, n, n),
				 0);
	}
	if (sh("cd '%s' && dwz -m common.debug a.debug b.debug", dir) != 0) {
		print_message("  dwz -m failed (see %s/log)\n", g.tmp);
		skip();
	}
	tu_strf(dbg, sizeof(dbg), "%s/a.debug", dir);
	tu_strf(orig, sizeof(orig), "%s/a.orig.debug", dir);
	tu_strf(rt, sizeof(rt), "%s/a", dir);
	tu_strf(alt, sizeof(alt), "%s/common.debug", dir);
	tu_strf(altoff, sizeof(altoff), "%s/common.debug.off", dir);
	assert_int_equal(elf_section(dbg, ".gnu_debugaltlink", NULL, NULL), 1);
	assert_true(exists(alt));

	addrs_func(&a, rt, "work_a");
	addrs_func(&a, rt, "main");
	/* the altlink says "common.debug": run from elsewhere so that only the debug file's directory helps */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	f0 = open_ok(orig, rt);
	f = open_ok(dbg, rt);
	assert_true(sym_file_has_dwarf(f));
	compare_files(f0, f, &a, "dwz'd a.debug vs original");
	for (size_t i = 0; i < a.n; i++) {
		struct sym_result r = lookup_ok(f, a.v[i]);

		if (r.nr == 3) {
			/* abstract origins of big_sum/big_mix live in common.debug */
			assert_string_equal(r.frames[0].function, "big_sum");
			assert_string_equal(r.frames[1].function, "big_mix");
			assert_string_equal(r.frames[2].function, "work_a");
			assert_string_equal(base_of(r.frames[0].file), "common.h");
			assert_int_equal(r.frames[0].start_line, 2);
			assert_int_equal(r.frames[1].start_line, 8);
			assert_int_equal(r.frames[1].line, 10);
			assert_int_equal(r.frames[2].line, 7);
			chains++;
		}
	}
	assert_true(chains > 0);
	/*
	 * eu-addr2line follows the alt file too (gcc emits .debug_aranges);
	 * llvm-addr2line-14 prints ?? for alt names and binutils 2.40 names the
	 * innermost frame after the outer function at some addresses.
	 */
	if (g.eu_a2l)
		compare_ref(f, "eu-addr2line", "", dbg, &a);
	print_message("  libdw found the dwz alt file by its relative name next to the debug file\n");
	sym_file_close(f);

	/* alt file gone: no crash; the outermost frame is still named from .symtab */
	assert_int_equal(rename(alt, altoff), 0);
	f = open_ok(dbg, rt);
	{
		size_t empty = 0;

		for (size_t i = 0; i < a.n; i++) {
			struct sym_result r = lookup_ok(f, a.v[i]);
			struct sym_result r0 = lookup_ok(f0, a.v[i]);

			assert_true(r.nr >= 1);
			assert_string_equal(r.frames[r.nr - 1].function,
					    r0.frames[r0.nr - 1].function);
			for (uint32_t k = 0; k + 1 < r.nr; k++)
				if (!r.frames[k].function[0])
					empty++;
		}
		print_message("  without the alt file: %zu inlined frames lost their names\n", empty);
		assert_true(empty > 0); /* so the names above did come from common.debug */
	}
	sym_file_close(f);
	/* the caller finds the alt file elsewhere (by its build-id) and hands it over: names are back */
	f = open_ok(dbg, rt);
	{
		const uint8_t *abid;
		size_t alen;

		assert_true(sym_file_missing_alt(f, &abid, &alen));
		assert_int_equal(alen, 20);
		assert_int_equal(sym_file_set_alt(f, altoff), CONV_E_OK);
		assert_false(sym_file_missing_alt(f, &abid, &alen));
		/* shed before any lookup: the files opened again keep the alt file the caller gave */
		sym_file_shed(f);
		assert_false(sym_file_missing_alt(f, &abid, &alen));
		for (size_t i = 0; i < a.n; i++) {
			struct sym_result r = lookup_ok(f, a.v[i]);
			struct sym_result r0 = lookup_ok(f0, a.v[i]);

			assert_int_equal(r.nr, r0.nr);
			for (uint32_t k = 0; k < r.nr; k++)
				assert_string_equal(r.frames[k].function, r0.frames[k].function);
		}
		assert_int_equal(sym_file_stats(f)->reopened, 1);
	}
	sym_file_close(f);
	assert_int_equal(rename(altoff, alt), 0);
	sym_file_close(f0);
	assert_int_equal(chdir(cwd), 0);
	free(a.v);
}

/* ---- 7: stripped runtime + --only-keep-debug ---- */

static void check_runtime_debug(const char *dir, const char *name, const char *cc_line,
				bool expect_off_ne_vaddr)
{
	char bin[PATH_MAX], rt[PATH_MAX], dbg[PATH_MAX];
	static const char *const funcs[] = { "work", "other", "main" };
	struct sym_file *fd, *fr, *fb;
	struct xload x = { 0 };
	uint64_t bias, S, O, va;

	assert_int_equal(sh("cd '%s' && %s -o %s p.c && strip --strip-all -o %s.rt %s"
			    " && objcopy --only-keep-debug %s %s.debug",
			    dir, cc_line, name, name, name, name, name),
			 0);
	tu_strf(bin, sizeof(bin), "%s/%s", dir, name);
	tu_strf(rt, sizeof(rt), "%s/%s.rt", dir, name);
	tu_strf(dbg, sizeof(dbg), "%s/%s.debug", dir, name);
	assert_int_equal(elf_section(rt, ".symtab", NULL, NULL), 0);
	assert_true(exec_load(rt, &x));
	if (expect_off_ne_vaddr)
		assert_true(x.off != x.vaddr);

	/* the objcopy'd file's program headers are not usable on their own */
	fd = open_ok(dbg, NULL);
	assert_true(sym_file_has_dwarf(fd));
	assert_false(sym_file_has_phdrs(fd));
	sym_file_close(fd);

	fb = open_ok(bin, NULL);
	assert_true(sym_file_has_phdrs(fb));
	fr = open_ok(dbg, rt);
	assert_true(sym_file_has_phdrs(fr));
	assert_true(sym_file_has_dwarf(fr));

	/* a perf mapping of the executable segment, as the loader makes it */
	bias = x.etype == ET_DYN ? 0x55d4a3c00000ull : 0;
	S = bias + (x.vaddr & ~0xfffull);
	O = x.off & ~0xfffull;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		struct nsym s = must_sym(bin, funcs[i]);
		uint64_t ks[3] = { 0, s.size / 2, s.size - 1 };

		for (int k = 0; k < 3; k++) {
			uint64_t addr = bias + s.addr + ks[k];
			uint64_t f_off = addr - S + O;
			struct sym_result r;

			va = 0;
			assert_true(sym_file_normalize(fr, f_off, O, &va));
			if (va != s.addr + ks[k])
				fail_msg("%s %s+%#" PRIx64 ": normalize(f_off %#" PRIx64 ", pgoff %#" PRIx64
					 ") = %#" PRIx64 ", want %#" PRIx64,
					 name, funcs[i], ks[k], f_off, O, va, s.addr + ks[k]);
			va = 0;
			assert_true(sym_file_normalize(fb, f_off, O, &va));
			assert_int_equal(va, s.addr + ks[k]);
			r = lookup_ok(fr, va);
			assert_int_equal(r.how, SYM_DWARF);
			assert_string_equal(r.frames[r.nr - 1].function, funcs[i]);
			assert_string_equal(base_of(r.frames[r.nr - 1].file), "p.c");
		}
	}
	/* an offset past every segment maps nowhere */
	assert_false(sym_file_normalize(fr, x.off + x.filesz + 0x100000, O, &va));
	sym_file_close(fr);
	sym_file_close(fb);
}

static void test_runtime_phdrs(void **state)
{
	char dir[PATH_MAX], src[PATH_MAX];

	(void)state;
	NEED(g.gcc && g.nm && g.objcopy && g.strip);
	case_dir(dir, "phdrs");
	tu_strf(src, sizeof(src), "%s/p.c", dir);
	write_file(src, P_SRC);
	check_runtime_debug(dir, "pie", "gcc -O2 -g -fPIE -pie", false);
	check_runtime_debug(dir, "nopie", "gcc -O2 -g -fno-PIE -no-pie", false);
	if (g.clang && g.lld)
	{
		check_runtime_debug(dir, "lld", "clang -O2 -g -fPIE -pie -fuse-ld=lld", true);
		check_runtime_debug(dir, "lldexec", "clang -O2 -g -fno-PIE -no-pie -fuse-ld=lld", true);
	} else
		print_message("  clang/lld missing: lld half skipped\n");
}

/* ---- 8: symbol tables ---- */

static void expect_symtab(struct sym_file *f, uint64_t va, const char *name)
{
	struct sym_result r = lookup_ok(f, va);

	if (r.how == SYM_NONE || r.nr != 1)
		fail_msg("0x%" PRIx64 ": want %s, got nothing", va, name);
	if (strcmp(r.frames[0].function, name) != 0)
		fail_msg("0x%" PRIx64 ": want %s, got %s", va, name, r.frames[0].function);
	assert_string_equal(r.frames[0].system_name, name);
	assert_false(r.frames[0].inlined);
}

static void test_symtab_fallback(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX], lib[PATH_MAX], libs[PATH_MAX];
	struct sym_file *f;
	struct nsym s;

	(void)state;
	NEED(g.gcc && g.nm && g.strip);
	case_dir(dir, "symtab");
	tu_strf(p, sizeof(p), "%s/p.c", dir);
	write_file(p, P_SRC);
	assert_int_equal(sh("cd '%s' && gcc -O2 -o nog p.c", dir), 0);
	tu_strf(p, sizeof(p), "%s/nog", dir);
	assert_int_equal(elf_section(p, ".debug_info", NULL, NULL), 0);
	f = open_ok(p, NULL);
	assert_false(sym_file_has_dwarf(f));
	assert_true(sym_file_has_phdrs(f));
	{
		static const char *const fn[] = { "work", "other", "main" };

		for (int i = 0; i < 3; i++) {
			s = must_sym(p, fn[i]);
			for (uint64_t v = s.addr; v < s.addr + s.size; v++) {
				struct sym_result r = lookup_ok(f, v);

				assert_int_equal(r.how, SYM_SYMTAB);
				assert_string_equal(r.frames[0].file, "");
				assert_int_equal(r.frames[0].line, 0);
				expect_symtab(f, v, fn[i]);
			}
		}
	}
	assert_true(sym_file_stats(f)->symtab > 0);
	assert_int_equal(sym_file_stats(f)->dwarf, 0);
	{
		/* nothing there */
		struct sym_result r = lookup_ok(f, 0x10);

		assert_int_equal(r.how, SYM_NONE);
		assert_int_equal(r.nr, 0);
		assert_true(sym_file_stats(f)->unresolved >= 1);
	}
	sym_file_close(f);

	/* a stripped shared library: .dynsym only */
	tu_strf(p, sizeof(p), "%s/lib.c", dir);
	write_file(p, LIB_SRC);
	assert_int_equal(sh("cd '%s' && gcc -O2 -shared -fPIC -o libx.so lib.c"
			    " && strip --strip-all -o libx.stripped.so libx.so",
			    dir),
			 0);
	tu_strf(lib, sizeof(lib), "%s/libx.so", dir);
	tu_strf(libs, sizeof(libs), "%s/libx.stripped.so", dir);
	assert_int_equal(elf_section(libs, ".symtab", NULL, NULL), 0);
	assert_int_equal(elf_section(libs, ".dynsym", NULL, NULL), 1);
	f = open_ok(libs, NULL);
	assert_false(sym_file_has_dwarf(f));
	assert_true(sym_file_has_phdrs(f));
	for (int i = 0; i < 2; i++) {
		const char *n = i ? "api_beta" : "api_alpha";

		assert_true(nm_sym(libs, n, true, &s));
		assert_true(s.size > 0);
		expect_symtab(f, s.addr, n);
		expect_symtab(f, s.addr + s.size - 1, n);
	}
	sym_file_close(f);

	/* aliases at one address: the symbol perf would show */
	tu_strf(p, sizeof(p), "%s/alias.c", dir);
	write_file(p, ALIAS_SRC);
	assert_int_equal(sh("cd '%s' && gcc -O2 -o alias alias.c && gcc -O2 -g -o alias_g alias.c", dir), 0);
	for (int pass = 0; pass < 2; pass++) {
		tu_strf(p, sizeof(p), "%s/%s", dir, pass ? "alias_g" : "alias");
		f = open_ok(p, NULL);
		assert_true(sym_file_has_dwarf(f) == (pass == 1));
		s = must_sym(p, "real_fn");
		expect_symtab(f, s.addr, "real_fn"); /* not a_much_longer_weak_alias, not loc_alias */
		s = must_sym(p, "under_fn");
		expect_symtab(f, s.addr + 1, "under_fn"); /* not __under_fn */
		s = must_sym(p, "ab");
		expect_symtab(f, s.addr, "abcdef"); /* not ab */
		s = must_sym(p, "wk");
		expect_symtab(f, s.addr, "wk_local"); /* not the weak wk */
		{
			/* the first of the three in .symtab, whatever order the linker wrote */
			static const char *const tw[] = { "twin_a", "twin_b", "twin_c" };
			const char *first = NULL;
			long best = LONG_MAX;

			for (int t = 0; t < 3; t++) {
				long ix = symtab_index(p, tw[t]);

				assert_true(ix >= 0);
				if (ix < best) {
					best = ix;
					first = tw[t];
				}
			}
			s = must_sym(p, "twin_a");
			expect_symtab(f, s.addr, first);
		}
		if (pass == 0) {
			/*
			 * perf 6.1 stretches size-0 symbols before it drops aliases
			 * (symbols__fixup_end, then symbols__fixup_duplicate): a
			 * size-0 global listed after a sized local at its address
			 * reaches the next symbol and wins as the global one; listed
			 * before it, it stays size 0 and the sized one wins.
			 */
			long il = symtab_index(p, "loc_sized"), iz = symtab_index(p, "zero_glob");

			assert_true(il >= 0 && iz >= 0);
			assert_true(nm_sym(p, "loc_sized", false, &s));
			expect_symtab(f, s.addr, il < iz ? "zero_glob" : "loc_sized");
			assert_true(nm_sym(p, "nosize_fn", false, &s));
			assert_int_equal(s.size, 0);
			expect_symtab(f, s.addr + 3, "nosize_fn");
			assert_true(nm_sym(p, "after_nosize", false, &s));
			expect_symtab(f, s.addr, "after_nosize");
		}
		sym_file_close(f);
	}
}

/* ---- PLT stubs ---- */

static const char PLT_SRC[] =
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	"int main(int argc, char **argv) {\n"
	"  char *p = malloc(64);\n  if (!p) return 1;\n"
	"  strcpy(p, argc > 1 ? argv[1] : \"x\");\n"
	"  printf(\"%zu\\n\", strlen(p));\n  puts(p);\n  free(p);\n  return 0;\n}\n";

/*
 * Every "<NAME@plt>" stub objdump finds (it reads each stub's jump through
 * the GOT) must be conv's name for every byte of it. objdump calls an
 * IRELATIVE slot "*ABS*+0xRESOLVER@plt"; conv names it after the IFUNC
 * symbol at that resolver (memcpy@plt), so any IFUNC alias there will do.
 * Returns the number of stubs checked.
 */
static size_t check_plt(const char *path)
{
	char *out = capture("objdump -d --no-show-raw-insn -j .plt -j .plt.sec '%s'"
			    " | sed -n 's/^\\([0-9a-f]*\\) <\\(.*@plt\\)>:$/\\1 \\2/p'", path);
	struct sym_file *f;
	size_t checked = 0, ifuncs = 0;
	char *line, *save = NULL;

	assert_non_null(out);
	f = open_ok(path, NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[512];
		unsigned long long at, resolver;

		if (sscanf(line, "%llx %511s", &at, name) != 2)
			fail_msg("objdump line %s", line);
		for (uint64_t v = at; v < at + 16; v += 5) {
			struct sym_result r = lookup_ok(f, v);

			if (r.how != SYM_SYMTAB || r.nr != 1)
				fail_msg("%s 0x%" PRIx64 " (%s): no symbol", path, v, name);
			if (sscanf(name, "*ABS*+0x%llx@plt", &resolver) == 1) {
				char *aliases = capture(
					"readelf -W --dyn-syms '%s' | awk '$4 == \"IFUNC\" && "
					"$2 == \"%016llx\" { sub(/@.*/, \"\", $8); print $8 \"@plt\" }'",
					path, resolver);
				bool ok;

				assert_non_null(aliases);
				if (*aliases) {
					char want[600];
					char *all = malloc(strlen(aliases) + 2);

					assert_non_null(all);
					tu_strf(all, strlen(aliases) + 2, "\n%s", aliases);
					tu_strf(want, sizeof(want), "\n%s\n", r.frames[0].function);
					ok = strstr(all, want) != NULL;
					free(all);
				} else {
					ok = !strcmp(r.frames[0].function, name);
				}
				if (!ok)
					fail_msg("%s 0x%" PRIx64 ": objdump %s (IFUNCs there: %s), conv %s", path,
						 v, name, aliases, r.frames[0].function);
				free(aliases);
				ifuncs++;
			} else if (strcmp(r.frames[0].function, name) != 0) {
				fail_msg("%s 0x%" PRIx64 ": objdump %s, conv %s", path, v, name,
					 r.frames[0].function);
			}
		}
		checked++;
	}
	print_message("%s: %zu PLT stubs (%zu byte checks of IRELATIVE stubs) named as objdump does\n",
		      path, checked, ifuncs);
	sym_file_close(f);
	free(out);
	return checked;
}

static void test_plt(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX];
	char *libc;

	(void)state;
	NEED(g.gcc && have("objdump") && g.readelf && have("awk"));
	case_dir(dir, "plt");
	tu_strf(p, sizeof(p), "%s/plt.c", dir);
	write_file(p, PLT_SRC);
	/* a lazy .plt, and IBT stubs in .plt.sec */
	assert_int_equal(sh("cd '%s' && gcc -O1 -fno-builtin -Wl,-z,lazy -o lazy plt.c && "
			    "gcc -O1 -fno-builtin -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy -o ibt plt.c",
			    dir),
			 0);
	tu_strf(p, sizeof(p), "%s/ibt", dir);
	assert_int_equal(elf_section(p, ".plt.sec", NULL, NULL), 1);
	assert_true(check_plt(p) >= 4);
	tu_strf(p, sizeof(p), "%s/lazy", dir);
	assert_int_equal(elf_section(p, ".plt.sec", NULL, NULL), 0);
	assert_true(check_plt(p) >= 4);
	/* glibc: IRELATIVE stubs first, their relocations last in .rela.plt */
	libc = capture("gcc -print-file-name=libc.so.6");
	if (libc && libc[0] == '/') {
		libc[strcspn(libc, "\n")] = '\0';
		if (elf_section(libc, ".plt", NULL, NULL) == 1)
			assert_true(check_plt(libc) >= 1);
	}
	free(libc);
}

/* ---- 9: C++ and Rust names ---- */

/* ---- arm64 objects (tests/fixtures/arm64, built by gcc 12 in a Debian arm64 guest) ---- */

#ifndef ARM64_FIXTURE_DIR
#define ARM64_FIXTURE_DIR NULL
#endif

/*
 * Every nm function (T/t/W/w) of an object: its name, address, size (4, one
 * instruction, for those without a size).
 * Mapping symbols ($x, $d) are NOTYPE, so nm lists them as t/d/r too: they
 * are left out here, as they must be by conv.
 */
struct fn_list {
	struct {
		uint64_t addr, size;
		char name[256];
	} *v;
	size_t n;
};

static void nm_functions(const char *path, struct fn_list *out)
{
	char *txt = capture("nm -S --defined-only '%s'", path), *save = NULL;
	size_t cap = 0;

	assert_non_null(txt);
	memset(out, 0, sizeof(*out));
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, z;
		char t, name[256];

		if (sscanf(l, "%llx %llx %c %255s", &a, &z, &t, name) != 4) {
			/* no size (crt code): its first instruction at least is its own */
			z = 4;
			if (sscanf(l, "%llx %c %255s", &a, &t, name) != 3)
				continue;
		}
		if (!z || name[0] == '$' || !strchr("TtWw", t))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->v = realloc(out->v, cap * sizeof(*out->v));
			assert_non_null(out->v);
		}
		out->v[out->n].addr = a;
		out->v[out->n].size = z;
		snprintf(out->v[out->n].name, sizeof(out->v[0].name), "%s", name);
		out->n++;
	}
	free(txt);
}

/*
 * No address of an executable section gets a mapping symbol's name, and
 * each nm function's every instruction gets its nm name from the symbol
 * table (syms: the object has no DWARF) or its frames from DWARF as
 * llvm-addr2line gives them.
 * Returns the number of instruction addresses looked up.
 */
static size_t check_a64_names(const char *path, bool syms)
{
	struct sym_file *f = open_ok(path, NULL);
	struct fn_list fl;
	struct addrs a = { 0 };
	char *secs = capture("readelf -SW '%s' | sed -n 's/^ *\\[ *[0-9]*\\] *\\([^ ]*\\) *PROGBITS *"
			     "\\([0-9a-f]*\\) [0-9a-f]* \\([0-9a-f]*\\) [0-9a-f]* *[A-Z]*X.*/\\2 \\3/p'",
			     path);
	char *save = NULL;
	size_t looked = 0, nx = 0;
	uint64_t xlo[64], xhi[64];

	assert_non_null(secs);
	assert_true(sym_file_has_dwarf(f) == !syms);
	for (char *l = strtok_r(secs, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long at, size;

		assert_int_equal(sscanf(l, "%llx %llx", &at, &size), 2);
		assert_true(nx < 64);
		xlo[nx] = at;
		xhi[nx++] = at + size;
		for (uint64_t v = at; v < at + size; v += 4) {
			struct sym_result r = lookup_ok(f, v);

			for (uint32_t k = 0; k < r.nr; k++)
				if (r.frames[k].function[0] == '$' || r.frames[k].system_name[0] == '$')
					fail_msg("%s 0x%" PRIx64 ": named by the mapping symbol %s", path, v,
						 r.frames[k].system_name);
			looked++;
		}
	}
	free(secs);
	nm_functions(path, &fl);
	assert_true(fl.n >= 8);
	for (size_t i = 0; i < fl.n; i++) {
		bool code = false;

		for (size_t k = 0; k < nx; k++)
			code |= xlo[k] <= fl.v[i].addr && fl.v[i].addr < xhi[k];
		if (!code)
			continue; /* a weak data symbol (data_start) */
		for (uint64_t v = fl.v[i].addr; v < fl.v[i].addr + fl.v[i].size; v += 4) {
			/* crt code has a unit but no subprogram: llvm-addr2line names its
			 * file, conv names it from .symtab, so it is checked against nm */
			if (syms || lookup_ok(f, v).how == SYM_SYMTAB)
				expect_symtab(f, v, fl.v[i].name);
			else
				addrs_push(&a, v);
		}
	}
	if (!syms && g.llvm_a2l[0])
		assert_true(compare_ref(f, g.llvm_a2l, "", path, &a) == a.n);
	print_message("%s%s: %zu functions, %zu addresses without a mapping symbol's name\n", path,
		      syms ? " (no DWARF)" : "", fl.n, looked);
	free(fl.v);
	free(a.v);
	sym_file_close(f);
	return looked;
}

/*
 * arm64 PLT stubs: llvm-objdump names each "<puts@plt>" from the GOT slot
 * its adrp/ldr pair loads; conv must give every instruction of the stub
 * that name, one stub per R_AARCH64_JUMP_SLOT. Returns the stubs checked.
 */
static size_t check_a64_plt(const char *path)
{
	char *out = capture("llvm-objdump -d --section=.plt '%s'"
			    " | sed -n 's/^\\([0-9a-f]*\\) <\\(.*@plt\\)>:$/\\1 \\2/p'", path);
	char *slots = capture("readelf -rW '%s' | grep -c R_AARCH64_JUMP_SL", path);
	struct sym_file *f = open_ok(path, NULL);
	size_t checked = 0;
	uint64_t stride = 16;
	char *save = NULL;

	assert_non_null(out);
	assert_non_null(slots);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long at, next;
		char name[512];
		const char *nl = save && *save ? save : NULL;

		assert_int_equal(sscanf(l, "%llx %511s", &at, name), 2);
		/* a stub reaches the next one: 16 bytes, 24 in BTI and PAC PLTs */
		if (nl && sscanf(nl, "%llx", &next) == 1 && next > at)
			stride = next - at;
		for (uint64_t v = at; v < at + stride; v += 4) {
			struct sym_result r = lookup_ok(f, v);

			if (r.how != SYM_SYMTAB || r.nr != 1 || strcmp(r.frames[0].function, name))
				fail_msg("%s 0x%" PRIx64 ": llvm-objdump %s, conv %s", path, v, name,
					 r.nr ? r.frames[0].function : "nothing");
		}
		checked++;
	}
	assert_int_equal(checked, strtoul(slots, NULL, 10));
	print_message("%s: %zu PLT stubs of %" PRIu64 " bytes named as llvm-objdump does\n", path,
		      checked, stride);
	free(out);
	free(slots);
	sym_file_close(f);
	return checked;
}

static void test_arm64(void **state)
{
	static const char *const objs[] = { "a64/build/fp/workload", "a64/build/fp/libwork.so",
					    "a64/build/uw/uw_qsort", "a64/build/uw/libuwcmp.so" };
	const char *dir = ARM64_FIXTURE_DIR;
	char p[PATH_MAX], nodw[PATH_MAX], tdir[PATH_MAX];
	bool objdump = have("llvm-objdump"), llvm_objcopy = have("llvm-objcopy");

	(void)state;
	NEED(dir && g.nm && g.readelf);
	case_dir(tdir, "arm64");
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		tu_strf(p, sizeof(p), "%s/bin/%s", dir, objs[i]);
		assert_true(exists(p));
		assert_true(check_a64_names(p, false) > 100);
		if (objdump)
			assert_true(check_a64_plt(p) >= 2);
		/* the same object without DWARF: .symtab names every function */
		if (llvm_objcopy) { /* binutils' objcopy on x86-64 hosts reads no aarch64 */
			tu_strf(nodw, sizeof(nodw), "%s/%zu.nodw", tdir, i);
			assert_int_equal(sh("llvm-objcopy --strip-debug '%s' '%s'", p, nodw), 0);
			check_a64_names(nodw, true);
			if (objdump)
				assert_true(check_a64_plt(nodw) >= 2);
		}
	}
	/*
	 * BTI and PAC PLTs (24-byte stubs, DT_AARCH64_BTI_PLT / _PAC_PLT):
	 * what Debian 13's -mbranch-protection=standard objects link to; lld
	 * writes them for any input with -z force-bti / -z pac-plt
	 */
	if (objdump && g.clang && g.lld) {
		static const char *const zs[] = { "force-bti", "pac-plt" };

		tu_strf(p, sizeof(p), "%s/bti.c", tdir);
		write_file(p, "extern int ext_a(int); extern int ext_b(int); extern int ext_c(int);\n"
			      "int f(int x) { return ext_a(x) + ext_b(x) * ext_c(x); }\n");
		for (int z = 0; z < 3; z++) {
			tu_strf(p, sizeof(p), "%s/lib%d.so", tdir, z);
			if (sh("cd '%s' && clang --target=aarch64-linux-gnu -O1 -fPIC -shared -nostdlib "
			       "-fuse-ld=lld -Wl,-z,%s %s -o '%s' bti.c",
			       tdir, zs[z & 1], z == 2 ? "-Wl,-z,force-bti" : "", p) != 0) {
				print_message("  skipped: clang cannot link an aarch64 shared object here\n");
				break;
			}
			assert_int_equal(check_a64_plt(p), 3);
		}
	}
	if (!objdump || !llvm_objcopy)
		print_message("  skipped: PLT checks (llvm-objdump %d), no-DWARF copies (llvm-objcopy %d)\n",
			      objdump, llvm_objcopy);
}

/*
 * 32-bit ARM: a Thumb function's symbol value is its address + 1. Every
 * instruction of it, the first included, is named by it, and the mapping
 * symbols ($a, $t, $d) there and in the PLT never name one. Built with
 * clang --target=armv7a-linux-gnueabihf and ld.lld, without DWARF (.symtab)
 * and with it.
 */
static void test_arm32(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX];

	(void)state;
	NEED(g.clang && g.lld && g.nm && g.readelf);
	case_dir(dir, "arm32");
	tu_strf(p, sizeof(p), "%s/t.c", dir);
	write_file(p, "extern int ext_a(int);\n"
		      "__attribute__((noinline)) int thumb_leaf(int x) { return x * 7 + ext_a(x); }\n"
		      "__attribute__((noinline, target(\"arm\"))) int arm_leaf(int x) { return x * 9 + 1; }\n"
		      "int thumb_top(int x) { return thumb_leaf(x) + arm_leaf(x); }\n");
	for (int dw = 0; dw < 2; dw++) {
		static const char *const fn[] = { "thumb_leaf", "arm_leaf", "thumb_top" };
		struct sym_file *f;

		tu_strf(p, sizeof(p), "%s/t%d.so", dir, dw);
		if (sh("cd '%s' && clang --target=armv7a-linux-gnueabihf -mthumb -O1 %s -fPIC -shared "
		       "-nostdlib -fuse-ld=lld -o '%s' t.c",
		       dir, dw ? "-g" : "", p) != 0) {
			print_message("  skipped: clang cannot link an armv7 shared object here\n");
			skip();
		}
		f = open_ok(p, NULL);
		assert_true(sym_file_has_dwarf(f) == (dw == 1));
		for (int i = 0; i < 3; i++) {
			struct nsym s = must_sym(p, fn[i]);
			uint64_t lo = s.addr & ~1ull;

			/* nm prints a Thumb symbol's value, bit 0 and all */
			assert_int_equal(s.addr & 1, i != 1);
			for (uint64_t v = lo; v < lo + s.size; v += 2) {
				struct sym_result r = lookup_ok(f, v);

				if (r.nr < 1 || strcmp(r.frames[r.nr - 1].function, fn[i]) != 0)
					fail_msg("%s 0x%" PRIx64 ": want %s, got %s", p, v, fn[i],
						 r.nr ? r.frames[r.nr - 1].function : "nothing");
			}
		}
		{
			/* no address of .text or .plt named by $a/$t/$d */
			char *secs = capture("readelf -SW '%s' | sed -n 's/^ *\\[ *[0-9]*\\] *\\.\\(text\\|plt\\) "
					     "*PROGBITS *\\([0-9a-f]*\\) [0-9a-f]* \\([0-9a-f]*\\) .*/\\2 \\3/p'",
					     p);
			char *save = NULL;
			size_t looked = 0;

			assert_non_null(secs);
			for (char *l = strtok_r(secs, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
				unsigned long long at, size;

				assert_int_equal(sscanf(l, "%llx %llx", &at, &size), 2);
				for (uint64_t v = at; v < at + size; v += 2, looked++) {
					struct sym_result r = lookup_ok(f, v);

					for (uint32_t k = 0; k < r.nr; k++)
						if (r.frames[k].system_name[0] == '$')
							fail_msg("%s 0x%" PRIx64 ": named %s", p, v,
								 r.frames[k].system_name);
				}
			}
			assert_true(looked > 20);
			free(secs);
		}
		sym_file_close(f);
	}
}

static void test_cxx(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct sym_file *f;
	struct addrs a = { 0 };
	size_t chains = 0;

	(void)state;
	NEED(g.gxx && g.nm && (g.eu_a2l || g.llvm_a2l[0]));
	case_dir(dir, "cxx");
	tu_strf(p, sizeof(p), "%s/cx.cc", dir);
	write_file(p, CX_SRC);
	assert_int_equal(sh("cd '%s' && g++ -O2 -g -o cx cx.cc", dir), 0);
	tu_strf(p, sizeof(p), "%s/cx", dir);
	/* addr2line -C prints the whole signature: conv's full form */
	f = open_ok(p, NULL);
	sym_file_set_name_form(f, SYM_NAME_FULL);
	addrs_func(&a, p, "_ZN2ns3Acc3addEi");
	/* binutils 2.40 addr2line names the first byte of an inlined range after the caller: not used */
	if (g.llvm_a2l[0])
		compare_ref(f, g.llvm_a2l, "-C", p, &a);
	if (g.eu_a2l)
		compare_ref(f, "eu-addr2line", "-C", p, &a);
	for (size_t i = 0; i < a.n; i++) {
		struct sym_result r = lookup_ok(f, a.v[i]);
		const struct sym_frame *top = &r.frames[r.nr - 1];

		assert_int_equal(r.how, SYM_DWARF);
		assert_string_equal(top->function, "ns::Acc::add(int)");
		assert_string_equal(top->system_name, "_ZN2ns3Acc3addEi");
		if (r.nr == 3) {
			/* a static template without a linkage name, then an inline member */
			assert_string_equal(r.frames[0].function, "twice<long int>");
			assert_string_equal(r.frames[0].system_name, "");
			assert_int_equal(r.frames[0].start_line, CX_TWICE_DECL);
			assert_string_equal(r.frames[1].function, "ns::Acc::bump(long)");
			assert_string_equal(r.frames[1].system_name, "_ZN2ns3Acc4bumpEl");
			assert_int_equal(r.frames[1].line, CX_BUMP_CALLS_TWICE);
			assert_int_equal(r.frames[2].line, CX_ADD_CALLS_BUMP);
			chains++;
		}
	}
	assert_true(chains > 0);
	sym_file_close(f);
	/*
	 * perf's form, the default: no parameters, for the symbol and for the
	 * inline frame's linkage name alike; DW_AT_name as it is
	 */
	f = open_ok(p, NULL);
	chains = 0;
	for (size_t i = 0; i < a.n; i++) {
		struct sym_result r = lookup_ok(f, a.v[i]);
		const struct sym_frame *top = &r.frames[r.nr - 1];

		assert_string_equal(top->function, "ns::Acc::add");
		assert_string_equal(top->system_name, "_ZN2ns3Acc3addEi");
		if (r.nr == 3) {
			assert_string_equal(r.frames[0].function, "twice<long int>");
			assert_string_equal(r.frames[0].system_name, "");
			assert_string_equal(r.frames[1].function, "ns::Acc::bump");
			assert_string_equal(r.frames[1].system_name, "_ZN2ns3Acc4bumpEl");
			chains++;
		}
	}
	assert_true(chains > 0);
	free(a.v);
	sym_file_close(f);
}

static void test_rust(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX], *txt, *save = NULL, mangled[512] = "";
	struct sym_file *f;
	struct addrs a = { 0 };
	size_t steps = 0;

	(void)state;
	NEED(g.rustc && g.nm && g.bu_a2l);
	case_dir(dir, "rust");
	tu_strf(p, sizeof(p), "%s/r.rs", dir);
	write_file(p, RS_SRC);
	/* stable rustc mangles legacy-style (_ZN...17h<hash>E) by default */
	assert_int_equal(sh("cd '%s' && rustc -O -g -o rv r.rs", dir), 0);
	tu_strf(p, sizeof(p), "%s/rv", dir);
	txt = capture("nm '%s'", p);
	assert_non_null(txt);
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *m = strstr(l, "_ZN1r11rs_scramble17h");

		if (m)
			tu_strf(mangled, sizeof(mangled), "%s", m);
	}
	free(txt);
	if (!mangled[0]) {
		print_message("  rustc did not emit a legacy-mangled rs_scramble\n");
		skip();
	}
	f = open_ok(p, NULL);
	addrs_func(&a, p, mangled);
	compare_ref(f, "addr2line", "-C", p, &a);
	for (size_t i = 0; i < a.n; i++) {
		struct sym_result r = lookup_ok(f, a.v[i]);

		assert_true(r.nr >= 1);
		assert_string_equal(r.frames[r.nr - 1].function, "r::rs_scramble");
		assert_string_equal(r.frames[r.nr - 1].system_name, mangled);
		for (uint32_t k = 0; k + 1 < r.nr; k++) {
			if (!strcmp(r.frames[k].function, "r::rs_step")) {
				assert_true(!strncmp(r.frames[k].system_name, "_ZN1r7rs_step17h", 16));
				steps++;
			}
		}
	}
	assert_true(steps > 0);
	free(a.v);
	sym_file_close(f);
}

/* d: what sym_demangle gave (freed here); want: NULL when it should not demangle. */
static void demangled_is(char *d, const char *want)
{
	if (!want) {
		assert_null(d);
		return;
	}
	assert_non_null(d);
	assert_string_equal(d, want);
	free(d);
}

static void test_demangle(void **state)
{
	/* mangled name, perf's form (perf report), full form (addr2line -C) */
	static const char *const cases[][3] = {
		{ "_ZN2ns3Acc3addEi", "ns::Acc::add", "ns::Acc::add(int)" },
		/* templates kept, return type dropped */
		{ "_ZN3geo16accumulate_areasIdEET_RKSt6vectorINS_4RectIS1_EESaIS4_EE",
		  "geo::accumulate_areas<double>",
		  "double geo::accumulate_areas<double>(std::vector<geo::Rect<double>, "
		  "std::allocator<geo::Rect<double> > > const&)" },
		/* an ABI tag is part of the name */
		{ "_ZN4text11word_countsB5cxx11Ei", "text::word_counts[abi:cxx11]",
		  "text::word_counts[abi:cxx11](int)" },
		/* a clone suffix goes with the parameters, as in perf */
		{ "_ZN4ring6CursorppEv.isra.0", "ring::Cursor::operator++",
		  "ring::Cursor::operator++() [clone .isra.0]" },
		{ "_ZNK3foo3getEv", "foo::get", "foo::get() const" },
		/* a PLT entry: the symbol demangled, "@plt" kept */
		{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE10_M_replaceEmmPKcm@plt",
		  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
		  ">::_M_replace@plt",
		  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
		  ">::_M_replace(unsigned long, unsigned long, char const*, unsigned long)@plt" },
		{ "_ZSt18_Rb_tree_incrementPKSt18_Rb_tree_node_base@@GLIBCXX_3.4",
		  "std::_Rb_tree_increment@@GLIBCXX_3.4",
		  "std::_Rb_tree_increment(std::_Rb_tree_node_base const*)@@GLIBCXX_3.4" },
		/* Rust: the legacy hash is left out in both forms */
		{ "_ZN1r11rs_scramble17haa55a284daebd216E", "r::rs_scramble", "r::rs_scramble" },
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo", "mycrate::foo" },
	};
	static const char *const plain[] = { "main", "_start", "", "_Z", "malloc@plt", "_Zfoo@plt" };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		demangled_is(sym_demangle(cases[i][0], SYM_NAME_PERF), cases[i][1]);
		demangled_is(sym_demangle(cases[i][0], SYM_NAME_FULL), cases[i][2]);
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		demangled_is(sym_demangle(plain[i], SYM_NAME_PERF), NULL);
		demangled_is(sym_demangle(plain[i], SYM_NAME_FULL), NULL);
	}
	demangled_is(sym_demangle(NULL, SYM_NAME_PERF), NULL);
	demangled_is(sym_demangle("_ZZZZ", SYM_NAME_FULL), NULL);
}

/* ---- 10: the cache ---- */

static void test_cache(void **state)
{
	char bin[PATH_MAX];
	struct sym_file *f;
	struct addrs a = { 0 };
	struct sym_result r1, r2;
	const struct sym_file_stats *st;
	char *saved[8][3];
	uint32_t nr1;
	uint64_t va = 0, lookups, hits;

	(void)state;
	NEED(g.gcc && g.nm);
	build_p();
	tu_strf(bin, sizeof(bin), "%s/p/g5", g.tmp);
	f = open_ok(bin, NULL);
	st = sym_file_stats(f);
	p_addrs(&a, bin);
	/* an address with an inline chain */
	for (size_t i = 0; i < a.n && !va; i++) {
		struct sym_file *g2 = open_ok(bin, NULL);
		struct sym_result r = lookup_ok(g2, a.v[i]);

		if (r.nr == 3)
			va = a.v[i];
		sym_file_close(g2);
	}
	assert_true(va != 0);
	assert_int_equal(st->lookups, 0);
	r1 = lookup_ok(f, va);
	assert_int_equal(st->lookups, 1);
	assert_int_equal(st->cache_hits, 0);
	assert_int_equal(st->dwarf, 1);
	nr1 = r1.nr;
	assert_int_equal(nr1, 3);
	for (uint32_t k = 0; k < nr1; k++) {
		saved[k][0] = strdup(r1.frames[k].function);
		saved[k][1] = strdup(r1.frames[k].system_name);
		saved[k][2] = strdup(r1.frames[k].file);
	}
	r2 = lookup_ok(f, va);
	assert_int_equal(st->lookups, 2);
	assert_int_equal(st->cache_hits, 1);
	assert_int_equal(st->dwarf, 1);
	assert_int_equal(r2.nr, r1.nr);
	assert_ptr_equal(r2.frames, r1.frames);
	assert_int_equal(r2.how, r1.how);

	/* many other lookups (results array and arenas grow), then the first result is intact */
	for (size_t i = 0; i < a.n; i++)
		lookup_ok(f, a.v[i]);
	for (uint64_t v = 0x1000; v < 0x1000 + 4000; v++)
		lookup_ok(f, v);
	lookups = st->lookups;
	hits = st->cache_hits;
	assert_int_equal(lookups, st->dwarf + st->symtab + st->unresolved + hits);
	for (uint32_t k = 0; k < nr1; k++) {
		assert_string_equal(r1.frames[k].function, saved[k][0]);
		assert_string_equal(r1.frames[k].system_name, saved[k][1]);
		assert_string_equal(r1.frames[k].file, saved[k][2]);
		free(saved[k][0]);
		free(saved[k][1]);
		free(saved[k][2]);
	}
	r2 = lookup_ok(f, va);
	assert_int_equal(st->cache_hits, hits + 1);
	assert_ptr_equal(r2.frames, r1.frames);
	/* every address again: all hits */
	for (size_t i = 0; i < a.n; i++)
		lookup_ok(f, a.v[i]);
	assert_int_equal(st->cache_hits, hits + 1 + a.n);
	free(a.v);
	sym_file_close(f);
}

/*
 * sym_file_shed: the answers cached before it stay (strings intact with the
 * files closed: a name left pointing into the unmapped ELF would fail here
 * or under ASan), cost less than the open file, and an address not asked
 * before opens the files once more and gets what a fresh file gives.
 */
static void shed_case(const char *bin, const struct addrs *a, const char *what)
{
	struct sym_file *f = open_ok(bin, NULL), *ref = open_ok(bin, NULL);
	const struct sym_file_stats *st = sym_file_stats(f);
	struct addrs first = { a->v, a->n / 2, 0 }, rest = { a->v + a->n / 2, a->n - a->n / 2, 0 };
	bool dwarf = sym_file_has_dwarf(f);
	uint64_t open_bytes, hits;
	char label[128];

	assert_true(first.n > 0 && rest.n > 0);
	for (size_t i = 0; i < first.n; i++)
		lookup_ok(f, first.v[i]);
	open_bytes = sym_file_footprint(f);
	sym_file_shed(f);
	print_message("  %s: %" PRIu64 " bytes open, %" PRIu64 " shed (%zu answers)\n", what, open_bytes,
		      sym_file_footprint(f), first.n);
	assert_true(sym_file_footprint(f) < open_bytes);
	assert_int_equal(sym_file_has_dwarf(f), dwarf);
	assert_true(sym_file_has_phdrs(f));
	hits = st->cache_hits;
	tu_strf(label, sizeof(label), "%s: shed, answers asked before", what);
	compare_files(ref, f, &first, label);
	assert_int_equal(st->cache_hits, hits + first.n);
	assert_int_equal(st->reopened, 0);
	tu_strf(label, sizeof(label), "%s: shed, answers not asked before", what);
	compare_files(ref, f, &rest, label);
	assert_int_equal(st->reopened, 1);
	/* shed again: every answer now cached, none opens the files */
	sym_file_shed(f);
	compare_files(ref, f, a, what);
	assert_int_equal(st->reopened, 1);
	sym_file_close(ref);
	sym_file_close(f);
}

static void test_shed(void **state)
{
	char bin[PATH_MAX], dir[PATH_MAX], p[PATH_MAX];
	struct addrs a = { 0 };

	(void)state;
	NEED(g.gcc && g.nm);
	build_p();
	tu_strf(bin, sizeof(bin), "%s/p/g5", g.tmp);
	p_addrs(&a, bin);
	shed_case(bin, &a, "DWARF");
	free(a.v);
	/* names from the symbol table: in the ELF's strings until the file is shed */
	memset(&a, 0, sizeof(a));
	case_dir(dir, "shed");
	tu_strf(p, sizeof(p), "%s/p.c", dir);
	write_file(p, P_SRC);
	assert_int_equal(sh("cd '%s' && gcc -O2 -o nog p.c", dir), 0);
	tu_strf(p, sizeof(p), "%s/nog", dir);
	addrs_func(&a, p, "work");
	addrs_func(&a, p, "main");
	shed_case(p, &a, "symbol table");
	free(a.v);
}

/* ---- errors ---- */

static void test_open_errors(void **state)
{
	struct sym_file *f = (struct sym_file *)(uintptr_t)1;
	struct conv_diag d;
	char p[PATH_MAX];

	(void)state;
	tu_strf(p, sizeof(p), "%s/no-such-file", g.tmp);
	assert_int_equal(sym_file_open(&f, p, NULL, &d), CONV_E_IO);
	assert_null(f);
	assert_int_equal(d.code, CONV_E_IO);
	tu_strf(p, sizeof(p), "%s/not-elf.txt", g.tmp);
	write_file(p, "hello, this is not an ELF file\n");
	f = (struct sym_file *)(uintptr_t)1;
	assert_int_equal(sym_file_open(&f, p, NULL, &d), CONV_E_LIBELF);
	assert_null(f);
	/* a missing runtime binary is not an error: the debug file's headers are used */
	if (g.gcc) {
		char bin[PATH_MAX];

		build_p();
		tu_strf(bin, sizeof(bin), "%s/p/g5", g.tmp);
		f = open_ok(bin, p); /* not an ELF runtime */
		assert_true(sym_file_has_phdrs(f));
		sym_file_close(f);
	}
	sym_file_close(NULL);
}

/* ---- setup ---- */

static int group_setup(void **state)
{

	(void)state;
	if (!tu_tmpdir_make(g.tmp, sizeof(g.tmp), "test_symbolize"))
		return -1;
	g.gcc = have("gcc");
	g.gxx = have("g++");
	g.clang = have("clang");
	g.lld = have("ld.lld");
	g.rustc = have("rustc");
	g.dwz = have("dwz");
	g.objcopy = have("objcopy");
	g.strip = have("strip");
	g.nm = have("nm");
	g.readelf = have("readelf");
	g.bu_a2l = have("addr2line");
	g.eu_a2l = have("eu-addr2line");
	if (have("llvm-addr2line-14"))
		snprintf(g.llvm_a2l, sizeof(g.llvm_a2l), "llvm-addr2line-14");
	else if (have("llvm-addr2line"))
		snprintf(g.llvm_a2l, sizeof(g.llvm_a2l), "llvm-addr2line");
	return 0;
}

/*
 * kallsyms: text symbols only, in address order whether or not the file
 * had them so (the kernel writes them sorted and the sort is then skipped;
 * a file out of order is sorted), aliases at one address in file order.
 */
static void check_kallsyms(const char *text, const char *const *order, size_t n)
{
	struct kallsyms k;

	kallsyms_init(&k);
	assert_int_equal(kallsyms_parse(&k, text, strlen(text)), CONV_E_OK);
	assert_int_equal(k.nr, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(kallsyms_str(&k, k.syms[i].name), order[i]);
	for (size_t i = 1; i < n; i++)
		assert_true(k.syms[i - 1].addr <= k.syms[i].addr);
	assert_int_equal(k.text, 0xffffffff81000000ull);
	assert_string_equal(kallsyms_str(&k, kallsyms_lookup(&k, 0xffffffff81000150ull)->name),
			    "alias_b");
	assert_string_equal(kallsyms_str(&k, kallsyms_lookup(&k, 0xffffffff81000010ull)->name),
			    "_text");
	assert_string_equal(kallsyms_str(&k, kallsyms_lookup(&k, 0xffffffffc0000010ull)->module),
			    "ext4");
	kallsyms_release(&k);
}

static void test_kallsyms(void **state)
{
	static const char sorted[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 t alias_a\n"
		"ffffffff81000100 T alias_b\n"
		"ffffffff81000180 D some_data\n"
		"ffffffff81000200 T later\n"
		"ffffffffc0000000 t ext4_fn\t[ext4]\n"
		"ffffffffc0000100 t ext4_end\t[ext4]\n";
	static const char unsorted[] =
		"ffffffffc0000100 t ext4_end\t[ext4]\n"
		"ffffffffc0000000 t ext4_fn\t[ext4]\n"
		"ffffffff81000200 T later\n"
		"ffffffff81000100 t alias_a\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000180 D some_data\n"
		"ffffffff81000100 T alias_b\n";
	static const char *const order[] = {"_text",  "alias_a", "alias_b",
					    "later", "ext4_fn", "ext4_end"};
	(void)state;

	/* arm64 (Debian 12's 6.1 kernel, KASLR): modules list their mapping symbols */
	static const char arm64[] =
		"ffffc8d1a4a10000 T _text\n"
		"ffffc8d1a4a10000 t _head\n"
		"ffffc8d1a4a20000 T _stext\n"
		"ffffc8d1a4a20040 T el0t_64_sync\n"
		"ffffc8d17f3a0000 t $x\t[ext4]\n"
		"ffffc8d17f3a0010 t ext4_es_count\t[ext4]\n"
		"ffffc8d17f3a0100 t $d\t[ext4]\n"
		"ffffc8d17f3a0108 t $x.12\t[ext4]\n"
		"ffffc8d17f3a0200 t ext4_fill_super\t[ext4]\n";
	static const char *const a64_order[] = { "ext4_es_count", "ext4_fill_super", "_text", "_head",
						 "_stext", "el0t_64_sync" };
	struct kallsyms k;
	(void)state;

	check_kallsyms(sorted, order, 6);
	check_kallsyms(unsorted, order, 6);
	kallsyms_init(&k);
	assert_int_equal(kallsyms_parse(&k, arm64, sizeof(arm64) - 1), CONV_E_OK);
	assert_int_equal(k.nr, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(kallsyms_str(&k, k.syms[i].name), a64_order[i]);
	/* past the $d and $x.12 in ext4_es_count: still ext4_es_count, as perf names it */
	assert_string_equal(kallsyms_str(&k, kallsyms_lookup(&k, 0xffffc8d17f3a0110ull)->name),
			    "ext4_es_count");
	assert_string_equal(kallsyms_str(&k, kallsyms_lookup(&k, 0xffffc8d17f3a0110ull)->module),
			    "ext4");
	assert_int_equal(k.text, 0xffffc8d1a4a10000ull);
	kallsyms_release(&k);
}

static int group_teardown(void **state)
{
	(void)state;
	tu_tmpdir_drop(g.tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc_dwarf5),
		cmocka_unit_test(test_gcc_dwarf4),
		cmocka_unit_test(test_clang_no_aranges),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_split_dwarf),
		cmocka_unit_test(test_dwz),
		cmocka_unit_test(test_runtime_phdrs),
		cmocka_unit_test(test_symtab_fallback),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_arm32),
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_shed),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_kallsyms),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
