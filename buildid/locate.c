/*
 * Local debug-file locators (see locate.h for the search order).
 *
 * Why so many places: perf, the distributions and users lay debug files out
 * differently (build-id trees with and without the .debug suffix, perf's
 * cache with a directory per build-id, unpacked perf archives, sysroots,
 * .gnu_debuglink), and a wrong file is worse than none because it yields
 * plausible but wrong symbols. So every candidate is proven by its build-id
 * (or a debuglink's CRC32) before it is used, and candidates are probed with
 * stat() first so that missing paths cost one system call.
 *
 * .gnu_debuglink section layout (GDB manual, "Separate Debug Files"): the
 * file name, NUL-terminated, zero-padded to a multiple of 4 bytes, then a
 * 4-byte CRC-32 (the zlib/IEEE polynomial, crc32(0, ...)) of the whole debug
 * file, in the ELF file's byte order.
 */
#include "buildid/locate.h"

#include "buildid/buildid.h"

#include "core/ropen.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define LOC_PATH_SIZE sizeof(((struct loc_result *)0)->path)

/* What a candidate must satisfy besides being ELF. */
struct loc_want {
	const uint8_t *id; /* build-id it must have; NULL: any or none */
	size_t id_len;
	bool need_id;      /* a file without a build-id note is refused */
	bool check_crc;    /* a .gnu_debuglink target: the CRC32 must match */
	uint32_t crc;
};

/* What libelf says about a candidate. */
struct loc_elf {
	bool has_debug_info;
	bool has_symtab;
	bool runtime;  /* has the loadable code itself: not a debug-only file */
	bool has_link; /* .gnu_debuglink present and well formed */
	char link[NAME_MAX + 1];
	uint32_t link_crc;
};

struct loc_ctx {
	const struct loc_opts *o;
	const uint8_t *bid;
	size_t len;             /* 0: path-only mode */
	char nn[3];             /* first build-id byte in hex */
	const char *rest;       /* the other bytes in hex (points into hex) */
	char hex[2 * BUILDID_MAX + 1];
	const char *orig;       /* recorded path, NULL when absent or empty */
	bool orig_abs;          /* orig can be opened and used as a sysroot suffix */
	bool binary;            /* loc_find_binary: only runtime images qualify */
	struct loc_result *out;
	bool orig_checked, orig_ok, orig_verified;
	struct loc_elf orig_inf;
	bool have_fallback;     /* a symtab-only debug candidate, used if nothing better */
	struct loc_result fallback;
	struct loc_stats st;
	char too_long[96];      /* start of the first path that did not fit, for diag */
};

const char *loc_source_name(enum loc_source s)
{
	static const char *const names[LOC__COUNT] = {
		[LOC_NONE] = "none",          [LOC_ORIGINAL] = "original",
		[LOC_DEBUG_DIR] = "debug_dir", [LOC_SYSTEM] = "system",
		[LOC_PERF_CACHE] = "perf_cache", [LOC_DEBUGLINK] = "debuglink",
	};

	return (unsigned)s < LOC__COUNT ? names[s] : "unknown";
}

/* Counts a path that did not fit; the first one's start is kept for the message. */
static void loc_too_long(struct loc_ctx *c, const char *path)
{
	if (!c->st.path_too_long++) {
		size_t n = strnlen(path, sizeof(c->too_long) - 1);

		memcpy(c->too_long, path, n);
		c->too_long[n] = '\0';
	}
}

/*
 * Formats a candidate path into buf (LOC_PATH_SIZE bytes). A path that does
 * not fit is counted and not tried: a truncated path could name another file.
 */
static bool loc_vpath(struct loc_ctx *c, char *buf, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static bool loc_vpath(struct loc_ctx *c, char *buf, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, LOC_PATH_SIZE, fmt, ap);

	if (n >= 0 && (size_t)n < LOC_PATH_SIZE)
		return true;
	loc_too_long(c, n < 0 ? "?" : buf);
	return false;
}

static bool loc_path(struct loc_ctx *c, char *buf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool loc_path(struct loc_ctx *c, char *buf, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = loc_vpath(c, buf, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * Length of dir without trailing slashes ("/" becomes "", so that "%.*s/x"
 * gives "/x"); -1 when dir alone cannot fit into a path.
 */
static int loc_dir_len(struct loc_ctx *c, const char *dir)
{
	size_t n = strlen(dir);

	if (n >= LOC_PATH_SIZE) {
		loc_too_long(c, dir);
		return -1;
	}
	while (n > 0 && dir[n - 1] == '/')
		n--;
	return (int)n;
}

/* CRC32 of a whole file as zlib computes it, which is what .gnu_debuglink holds. */
static bool loc_file_crc(const char *path, uint32_t *crc)
{
	unsigned char buf[16384];
	uLong acc = crc32(0L, Z_NULL, 0);
	int fd = ropen_regular(path, false);

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			close(fd);
			return false;
		}
		if (k == 0)
			break;
		acc = crc32(acc, buf, (uInt)k);
	}
	close(fd);
	*crc = (uint32_t)acc;
	return true;
}

/* Reads the .gnu_debuglink name and CRC; the CRC word is converted by libelf. */
static void loc_read_link(Elf *elf, Elf_Scn *scn, struct loc_elf *inf)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *p;
	size_t n, off;
	uint32_t raw, word;
	Elf_Data src, dst;
	const char *ident = elf_getident(elf, NULL);

	if (!d || !d->d_buf || !ident)
		return;
	p = d->d_buf;
	n = strnlen(p, d->d_size);
	off = (n + 4) & ~(size_t)3; /* NUL, then padding to 4 */
	if (n == 0 || n >= sizeof(inf->link) || off > d->d_size || d->d_size - off < 4)
		return;
	/* A bare file name: anything with a slash would leave the search directories. */
	if (memchr(p, '/', n) || !strcmp(p, ".") || !strcmp(p, ".."))
		return;
	memcpy(&raw, p + off, 4); /* aligned copy: section data need not be 4-aligned here */
	src = (Elf_Data){ .d_buf = &raw, .d_type = ELF_T_WORD, .d_size = 4,
			  .d_version = EV_CURRENT };
	dst = (Elf_Data){ .d_buf = &word, .d_type = ELF_T_WORD, .d_size = 4,
			  .d_version = EV_CURRENT };
	if (!gelf_xlatetom(elf, &dst, &src, (unsigned)(unsigned char)ident[EI_DATA]))
		return;
	memcpy(inf->link, p, n);
	inf->link[n] = '\0';
	inf->link_crc = word;
	inf->has_link = true;
}

/*
 * Looks at sections and program headers. A debug-only file (objcopy
 * --only-keep-debug, eu-strip -f) keeps program headers that describe the
 * binary, not itself: objcopy zeroes p_filesz of the code segment and turns
 * the code sections into SHT_NOBITS, eu-strip keeps p_filesz but also makes
 * the code NOBITS. Either sign marks it as unusable for address mapping.
 */
static bool loc_inspect(const char *path, struct loc_elf *inf)
{
	int fd = ropen_regular(path, false);
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx, phnum;
	bool names, exec_nobits = false, exec_bytes = false, load_bytes = false,
		    exec_load_empty = false;

	memset(inf, 0, sizeof(*inf));
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		elf_end(elf);
		close(fd);
		return false;
	}
	names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = names ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if ((sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size > 0) {
			if (sh.sh_type == SHT_NOBITS)
				exec_nobits = true;
			else
				exec_bytes = true;
		}
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			inf->has_symtab = true;
		if (!name)
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			inf->has_debug_info = true;
		else if (!strcmp(name, ".gnu_debuglink") && !inf->has_link)
			loc_read_link(elf, scn, inf);
	}
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && i <= INT_MAX; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (ph.p_filesz > 0)
				load_bytes = true;
			else if ((ph.p_flags & PF_X) && ph.p_memsz > 0)
				exec_load_empty = true;
		}
	}
	/* Modules (ET_REL) have no program headers; their code sections decide. */
	if (eh.e_type == ET_REL)
		inf->runtime = exec_bytes && !exec_nobits;
	else
		inf->runtime = load_bytes && !exec_load_empty && !exec_nobits;
	elf_end(elf);
	close(fd);
	return true;
}

static void loc_set(struct loc_result *r, const char *path, enum loc_source src,
		    const struct loc_elf *inf, bool verified)
{
	snprintf(r->path, sizeof(r->path), "%s", path); /* fits: built in a buffer this size */
	r->source = src;
	r->has_debug_info = inf->has_debug_info;
	r->has_symtab = inf->has_symtab;
	r->build_id_verified = verified;
}

/*
 * Proves that path is a regular ELF file with the build-id w asks for and
 * reads what libelf says about it; refusals are counted by reason.
 */
static bool loc_check(struct loc_ctx *c, const char *path, const struct loc_want *w,
		      struct loc_elf *inf, bool *verified)
{
	struct stat st;
	uint8_t got[BUILDID_MAX];
	size_t glen = 0;
	enum conv_err e;

	/*
	 * stat() follows symlinks; only regular files: a FIFO's open would
	 * block, a device's would run its driver. The opens below check again
	 * (ropen_regular): the name may be replaced meanwhile.
	 */
	if (stat(path, &st) != 0)
		return false;
	if (!S_ISREG(st.st_mode)) {
		if (!S_ISDIR(st.st_mode))
			c->st.not_regular++;
		return false;
	}
	c->st.probed++;
	*verified = false;
	e = buildid_from_path(path, got, &glen, NULL);
	if (e == CONV_E_OK) {
		if (w->id && (glen != w->id_len || memcmp(got, w->id, glen))) {
			c->st.wrong_build_id++;
			return false;
		}
		*verified = w->id && c->len > 0;
	} else if (e == CONV_E_NOTFOUND) {
		if (w->need_id) {
			c->st.wrong_build_id++;
			return false;
		}
	} else {
		c->st.unreadable++;
		return false;
	}
	if (!loc_inspect(path, inf)) {
		c->st.unreadable++;
		return false;
	}
	return true;
}

/*
 * Takes a checked candidate if it is what the search wants; true when the
 * search is over. A debug candidate with only a symbol table is remembered
 * and the search goes on for one with DWARF.
 */
static bool loc_accept(struct loc_ctx *c, const char *path, enum loc_source src,
		       const struct loc_want *w, const struct loc_elf *inf, bool verified)
{
	if (c->binary) {
		if (!inf->runtime) {
			c->st.debug_only++;
			return false;
		}
	} else if (!inf->has_debug_info && !inf->has_symtab) {
		c->st.no_symbols++;
		return false;
	}
	/* last: it reads the whole file */
	if (w->check_crc) {
		uint32_t crc;

		if (!loc_file_crc(path, &crc)) {
			c->st.unreadable++;
			return false;
		}
		if (crc != w->crc) {
			c->st.bad_crc++;
			return false;
		}
	}
	if (!c->binary && !inf->has_debug_info) {
		if (!c->have_fallback) {
			loc_set(&c->fallback, path, src, inf, verified);
			c->have_fallback = true;
		}
		return false;
	}
	loc_set(c->out, path, src, inf, verified);
	return true;
}

static bool loc_try(struct loc_ctx *c, const char *path, enum loc_source src,
		    const struct loc_want *w)
{
	struct loc_elf inf;
	bool verified;

	return loc_check(c, path, w, &inf, &verified) &&
	       loc_accept(c, path, src, w, &inf, verified);
}

/* The usual requirement: the build-id asked for, and nothing without one. */
static struct loc_want loc_want_bid(const struct loc_ctx *c)
{
	return (struct loc_want){ .id = c->bid, .id_len = c->len, .need_id = c->len > 0 };
}

static bool loc_try_fmt(struct loc_ctx *c, enum loc_source src, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* loc_try() on a formatted path with the usual build-id requirement. */
static bool loc_try_fmt(struct loc_ctx *c, enum loc_source src, const char *fmt, ...)
{
	char path[LOC_PATH_SIZE];
	struct loc_want w = loc_want_bid(c);
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = loc_vpath(c, path, fmt, ap);
	va_end(ap);
	return ok && loc_try(c, path, src, &w);
}

/*
 * One entry of perf's cache: a directory per build-id holding the runtime
 * copy (`elf`, `vdso` for the vdso) and, when perf found one, `debug`; in
 * older perf the entry itself was the file.
 */
static bool loc_try_entry(struct loc_ctx *c, const char *entry, enum loc_source src)
{
	static const char *const debug_names[] = { "debug", "elf", "vdso" };
	static const char *const binary_names[] = { "elf", "vdso" };
	const char *const *names = c->binary ? binary_names : debug_names;
	size_t nr = c->binary ? 2 : 3;
	struct stat st;

	if (stat(entry, &st) != 0)
		return false;
	if (S_ISREG(st.st_mode))
		return loc_try_fmt(c, src, "%s", entry);
	if (!S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; i < nr; i++)
		if (loc_try_fmt(c, src, "%s/%s", entry, names[i]))
			return true;
	return false;
}

/* Separator between a root and the recorded path: "[vdso]" needs one, "/usr/..." not. */
static const char *loc_orig_sep(const struct loc_ctx *c)
{
	return c->orig[0] == '/' ? "" : "/";
}

/*
 * perf's cache layout under root (~/.debug, or an unpacked perf archive):
 * root/.build-id/NN/REST, then root/<recorded path>/<hex> for an archive whose
 * links were lost or point elsewhere (tar without symlinks, absolute links).
 */
static bool loc_perf_root(struct loc_ctx *c, const char *root, enum loc_source src)
{
	char path[LOC_PATH_SIZE];
	int rl = loc_dir_len(c, root);

	if (rl < 0)
		return false;
	if (c->len >= 2 && loc_path(c, path, "%.*s/.build-id/%s/%s", rl, root, c->nn, c->rest) &&
	    loc_try_entry(c, path, src))
		return true;
	if (c->orig && c->len > 0 && (c->orig[0] == '/' || c->orig[0] == '[') &&
	    loc_path(c, path, "%.*s%s%s/%s", rl, root, loc_orig_sep(c), c->orig, c->hex)) {
		struct stat st;

		/* only the per-build-id directory: <path>/<hex> as a file is not perf's */
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && loc_try_entry(c, path, src))
			return true;
	}
	return false;
}

static bool loc_dir_by_path(struct loc_ctx *c, const char *dir, int dl);

static bool loc_debug_dir(struct loc_ctx *c, const char *dir)
{
	char home_style[LOC_PATH_SIZE], path[LOC_PATH_SIZE];
	int dl = loc_dir_len(c, dir);

	if (dl < 0)
		return false;
	/* a. build-id trees, DIR above .build-id or DIR being it */
	if (!c->binary && c->len >= 2 &&
	    (loc_try_fmt(c, LOC_DEBUG_DIR, "%.*s/.build-id/%s/%s.debug", dl, dir, c->nn, c->rest) ||
	     loc_try_fmt(c, LOC_DEBUG_DIR, "%.*s/%s/%s.debug", dl, dir, c->nn, c->rest)))
		return true;
	/* b, c. perf's cache or an unpacked archive in DIR, in DIR/.debug, or DIR = .build-id */
	if (loc_perf_root(c, dir, LOC_DEBUG_DIR))
		return true;
	if (loc_path(c, home_style, "%.*s/.debug", dl, dir) &&
	    loc_perf_root(c, home_style, LOC_DEBUG_DIR))
		return true;
	if (c->len >= 2 && loc_path(c, path, "%.*s/%s/%s", dl, dir, c->nn, c->rest) &&
	    loc_try_entry(c, path, LOC_DEBUG_DIR))
		return true;
	return c->len > 0 && loc_dir_by_path(c, dir, dl);
}

static bool loc_try_in_dir(struct loc_ctx *c, const char *rdir, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A candidate under a -d DIR built from the recorded path. With a build-id
 * the file proves itself wherever it lies (a build-id tree may well link
 * out of DIR). Without one it is taken unverified, so it must be DIR's own:
 * the recorded path is the recording author's, and DIR/../../x or a symlink
 * in DIR leading out would reach any file here. Such a candidate is
 * resolved (realpath) and tried only when that lies inside rdir, DIR's
 * resolved name (under the name built, which callers show and open again).
 */
static bool loc_try_in_dir(struct loc_ctx *c, const char *rdir, const char *fmt, ...)
{
	char path[LOC_PATH_SIZE], real[PATH_MAX];
	struct loc_want w = loc_want_bid(c);
	size_t rl;
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = loc_vpath(c, path, fmt, ap);
	va_end(ap);
	if (!ok)
		return false;
	if (c->len > 0)
		return loc_try(c, path, LOC_DEBUG_DIR, &w);
	if (!rdir || !realpath(path, real))
		return false;
	rl = strlen(rdir);
	if (strcmp(rdir, "/") && (strncmp(real, rdir, rl) || (real[rl] != '/' && real[rl] != '\0'))) {
		c->st.outside_dir++;
		return false;
	}
	return loc_try(c, path, LOC_DEBUG_DIR, &w);
}

/*
 * d. A sysroot (an unpacked image) or a flat folder of files: DIR/<recorded
 * path>, DIR/<basename>. Without a build-id (path-only mode) this is the
 * only place besides the recorded path where a file is taken unverified:
 * the user named the folder (-d), as perfparser's app path is named; only
 * files inside it qualify then (loc_try_in_dir).
 */
static bool loc_dir_by_path(struct loc_ctx *c, const char *dir, int dl)
{
	const char *base;
	char *rdir = NULL;
	bool done;

	if (!c->orig_abs)
		return false;
	base = strrchr(c->orig, '/') + 1;
	if (c->len == 0 && !(rdir = realpath(dir, NULL)))
		return false;
	done = (!c->binary && loc_try_in_dir(c, rdir, "%.*s%s.debug", dl, dir, c->orig)) ||
	       loc_try_in_dir(c, rdir, "%.*s%s", dl, dir, c->orig) ||
	       (*base && !c->binary && loc_try_in_dir(c, rdir, "%.*s/%s.debug", dl, dir, base)) ||
	       (*base && loc_try_in_dir(c, rdir, "%.*s/%s", dl, dir, base));
	free(rdir);
	return done;
}

static const char *loc_system_dir(const struct loc_opts *o)
{
	return o->system_debug_dir ? o->system_debug_dir : "/usr/lib/debug";
}

static bool loc_system(struct loc_ctx *c)
{
	const char *sys = loc_system_dir(c->o);
	int sl;

	if (!*sys || c->len < 2 || (sl = loc_dir_len(c, sys)) < 0)
		return false;
	/* NN/REST without the suffix is Fedora's link to the binary itself */
	if (c->binary)
		return loc_try_fmt(c, LOC_SYSTEM, "%.*s/.build-id/%s/%s", sl, sys, c->nn, c->rest);
	return loc_try_fmt(c, LOC_SYSTEM, "%.*s/.build-id/%s/%s.debug", sl, sys, c->nn, c->rest);
}

static bool loc_perf_cache(struct loc_ctx *c)
{
	char root[LOC_PATH_SIZE];
	const char *home;
	int hl;

	if (c->o->perf_cache_dir) {
		if (!*c->o->perf_cache_dir)
			return false;
		return loc_perf_root(c, c->o->perf_cache_dir, LOC_PERF_CACHE);
	}
	home = c->o->home ? c->o->home : getenv("HOME");
	if (!home || !*home || (hl = loc_dir_len(c, home)) < 0 ||
	    !loc_path(c, root, "%.*s/.debug", hl, home))
		return false;
	return loc_perf_root(c, root, LOC_PERF_CACHE);
}

/*
 * The recorded binary, checked once: the debuglink stage needs its link, the
 * last stage the file itself. Path-only mode takes it as it is.
 */
static bool loc_check_orig(struct loc_ctx *c)
{
	struct loc_want w = loc_want_bid(c);

	if (!c->orig_checked) {
		c->orig_checked = true;
		c->orig_ok = loc_check(c, c->orig, &w, &c->orig_inf, &c->orig_verified);
	}
	return c->orig_ok;
}

/* The .gnu_debuglink target in GDB's three places relative to the directory dir[0, dl). */
static bool loc_link_dirs(struct loc_ctx *c, const char *dir, size_t dl, const struct loc_want *w)
{
	char path[LOC_PATH_SIZE];
	const char *sys = loc_system_dir(c->o), *name = c->orig_inf.link;
	int sl;

	if (dl >= LOC_PATH_SIZE)
		return false;
	if (loc_path(c, path, "%.*s/%s", (int)dl, dir, name) &&
	    loc_try(c, path, LOC_DEBUGLINK, w))
		return true;
	if (loc_path(c, path, "%.*s/.debug/%s", (int)dl, dir, name) &&
	    loc_try(c, path, LOC_DEBUGLINK, w))
		return true;
	if (!*sys || (sl = loc_dir_len(c, sys)) < 0)
		return false;
	return loc_path(c, path, "%.*s%.*s/%s", sl, sys, (int)dl, dir, name) &&
	       loc_try(c, path, LOC_DEBUGLINK, w);
}

/*
 * The recorded binary, when it is the one recorded, names its debug file.
 * Looked up beside the path as recorded and beside its resolved location
 * (/lib is a symlink to /usr/lib on merged-/usr systems).
 */
static bool loc_debuglink(struct loc_ctx *c)
{
	struct loc_want w = { .check_crc = true };
	uint8_t bin_id[BUILDID_MAX];
	size_t bin_len = 0, ol, rl;
	char *real;
	bool done = false;

	if (!c->orig_abs || !c->o->use_original_path || !loc_check_orig(c) ||
	    !c->orig_inf.has_link)
		return false;
	w.crc = c->orig_inf.link_crc;
	/* the target must also carry the binary's build-id when both have one */
	if (c->len > 0) {
		w.id = c->bid;
		w.id_len = c->len;
	} else if (buildid_from_path(c->orig, bin_id, &bin_len, NULL) == CONV_E_OK) {
		w.id = bin_id;
		w.id_len = bin_len;
	}
	ol = (size_t)(strrchr(c->orig, '/') - c->orig);
	if (loc_link_dirs(c, c->orig, ol, &w))
		return true;
	real = realpath(c->orig, NULL);
	if (!real)
		return false;
	rl = strrchr(real, '/') ? (size_t)(strrchr(real, '/') - real) : 0;
	if (rl != ol || strncmp(real, c->orig, rl))
		done = loc_link_dirs(c, real, rl, &w);
	free(real);
	return done;
}

static bool loc_original(struct loc_ctx *c)
{
	struct loc_want w = loc_want_bid(c);

	return c->orig_abs && c->o->use_original_path && loc_check_orig(c) &&
	       loc_accept(c, c->orig, LOC_ORIGINAL, &w, &c->orig_inf, c->orig_verified);
}

/* Everything that needs a build-id, in the order of locate.h. */
static bool loc_search_by_id(struct loc_ctx *c)
{
	for (size_t i = 0; i < c->o->nr_debug_dirs; i++)
		if (c->o->debug_dirs[i] && *c->o->debug_dirs[i] &&
		    loc_debug_dir(c, c->o->debug_dirs[i]))
			return true;
	return loc_system(c) || loc_perf_cache(c);
}

static void loc_add_stats(struct loc_stats *to, const struct loc_stats *from)
{
	to->probed += from->probed;
	to->wrong_build_id += from->wrong_build_id;
	to->bad_crc += from->bad_crc;
	to->no_symbols += from->no_symbols;
	to->debug_only += from->debug_only;
	to->unreadable += from->unreadable;
	to->path_too_long += from->path_too_long;
	to->not_regular += from->not_regular;
	to->outside_dir += from->outside_dir;
}

/* Path-only mode's look in the user's folders (-d), in order. */
static bool loc_dirs_by_path(struct loc_ctx *c)
{
	for (size_t i = 0; i < c->o->nr_debug_dirs; i++) {
		int dl = loc_dir_len(c, c->o->debug_dirs[i]);

		if (dl >= 0 && loc_dir_by_path(c, c->o->debug_dirs[i], dl))
			return true;
	}
	return false;
}

static enum conv_err loc_find(const struct loc_opts *o, const uint8_t *bid, size_t len,
			      const char *orig_path, struct loc_result *out, bool binary,
			      struct loc_stats *stats, struct conv_diag *diag)
{
	struct loc_ctx *c;
	enum conv_err err;

	if (out) {
		out->path[0] = '\0';
		out->source = LOC_NONE;
		out->has_debug_info = out->has_symtab = out->build_id_verified = false;
	}
	if (!o || !out || len > BUILDID_MAX || (len > 0 && !bid) ||
	    (o->nr_debug_dirs && !o->debug_dirs))
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "bad locator arguments");
	/* the context holds two 4 KiB results; the path buffers of the search are on the stack */
	c = calloc(1, sizeof(*c));
	if (!c)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	c->o = o;
	c->bid = len ? bid : NULL;
	c->len = len;
	c->binary = binary;
	c->out = out;
	buildid_hex(bid ? bid : (const uint8_t *)"", len, c->hex);
	memcpy(c->nn, c->hex, len ? 2 : 0);
	c->nn[len ? 2 : 0] = '\0';
	c->rest = len ? c->hex + 2 : c->hex;
	c->orig = orig_path && *orig_path ? orig_path : NULL;
	/* results are copied into out->path: a longer recorded path cannot be one */
	if (c->orig && loc_dir_len(c, c->orig) < 0)
		c->orig = NULL;
	c->orig_abs = c->orig && c->orig[0] == '/';

	/* a binary: the recorded path first, it is the very file; debug: local files last */
	if (binary ? loc_original(c) || (len && loc_search_by_id(c)) || (!len && loc_dirs_by_path(c))
		   : (len && loc_search_by_id(c)) || loc_debuglink(c) || loc_original(c) ||
			     (!len && loc_dirs_by_path(c))) {
		err = CONV_E_OK;
	} else if (c->have_fallback) {
		*out = c->fallback;
		err = CONV_E_OK;
	} else if (c->st.path_too_long) {
		err = conv_fail(diag, CONV_E_LIMIT, UINT64_MAX,
				"a candidate path is longer than %zu bytes: %.60s...",
				LOC_PATH_SIZE - 1, c->too_long);
	} else if (len) {
		err = conv_fail(diag, CONV_E_NOTFOUND, UINT64_MAX, "no %s with build-id %s",
				binary ? "binary" : "debug info", c->hex);
	} else {
		err = conv_fail(diag, CONV_E_NOTFOUND, UINT64_MAX, "no %s for %s",
				binary ? "binary" : "debug info", c->orig ? c->orig : "(no path)");
	}
	if (err != CONV_E_OK) {
		out->path[0] = '\0';
		out->source = LOC_NONE;
	}
	if (stats)
		loc_add_stats(stats, &c->st);
	free(c);
	return err;
}

enum conv_err loc_find_debug(const struct loc_opts *o, const uint8_t *bid, size_t len,
			     const char *orig_path, struct loc_result *out,
			     struct loc_stats *stats, struct conv_diag *diag)
{
	return loc_find(o, bid, len, orig_path, out, false, stats, diag);
}

enum conv_err loc_find_binary(const struct loc_opts *o, const uint8_t *bid, size_t len,
			      const char *orig_path, struct loc_result *out,
			      struct loc_stats *stats, struct conv_diag *diag)
{
	return loc_find(o, bid, len, orig_path, out, true, stats, diag);
}
