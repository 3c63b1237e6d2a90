/*
 * libdw-based symbolizer for one ELF object.
 *
 * Why not dwarf_addrdie/libdwfl: in elfutils 0.188 they find compile units
 * only through .debug_aranges, which clang, rustc and Go do not emit. So the
 * file's CUs are indexed here from their DW_AT_low_pc/high_pc/ranges, and
 * each CU's functions (DW_TAG_subprogram ranges) are indexed the first time
 * an address falls into that CU. The inline chain at an address is found by
 * descending from the containing subprogram through the inlined_subroutine
 * DIEs (and lexical blocks) whose ranges contain it, which gives the
 * concrete chain (dwarf_getscopes follows abstract origins instead).
 *
 * Compressed debug sections are decompressed here before libdw sees them:
 * zstd ones (ELFCOMPRESS_ZSTD = 2) because libelf 0.188 knows only zlib and
 * libdw then silently finds no DWARF; zlib ones (Debian's debug files) by
 * libdeflate, in 40 % of zlib's time (libc6-dbg's libc: 12 vs 29 ms).
 *
 * Location lists (.debug_loc, .debug_loclists) say where variables live:
 * nothing here asks for them, yet dwarf_begin_elf decompresses every debug
 * section it knows, and Debian's debug files are compressed. They are hidden
 * from libdw (typed SHT_NOBITS in libelf's copy of the section headers, which
 * libdw skips): for libc6-dbg's libc that is 1.4 of 10 MB not inflated, not
 * held in memory, for every run.
 */
#include "symbolize/symbolize.h"

#include "symbolize/dwline.h"

#include "core/arena.h"
#include "core/elfseg.h"
#include "core/hmap.h"
#include "core/ropen.h"
#include "core/sorted.h"
#include "core/strtab.h"
#include "core/vec.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include <libiberty/demangle.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

#define MAX_INLINE_DEPTH 64
#define MAX_DECOMPRESSED ((size_t)1 << 31)

struct func_ival {
	uint64_t lo, hi;
	Dwarf_Off die_off; /* the subprogram DIE, in the unit's Dwarf (split or main) */
};

struct cu_ent {
	uint64_t lo, hi;
	uint32_t cu; /* index into cus */
};

struct cu_info {
	Dwarf_Die cudie;  /* the unit's DIE (skeleton for split units): lines live here */
	Dwarf_Die subdie; /* the split unit's DIE, or cudie */
	bool funcs_built;
	struct func_ival *funcs;
	size_t nr_funcs;
	const char *comp_dir;
	/*
	 * Interned comp_dir-joined path + 1 per file index of the unit's line
	 * table (0: not yet joined), so a file named by many frames is joined
	 * and hashed once.
	 */
	uint32_t *file_ids;
	size_t nr_file_ids;
	/* conv's decode of the unit's line table; NULL: libdw's is used */
	struct dwline_table *lines;
	bool lines_tried;
};

struct symtab_ent {
	uint64_t lo, hi;
	uint64_t sec_end; /* end of the symbol's section, 0 if unknown */
	/*
	 * In the ELF's string table (valid until the file is closed), or
	 * interned for a PLT entry's made-up name: interning the names of
	 * cc1's 45 k symbols for a lookup that needs a few thousand of them
	 * was a fifth of building its table.
	 */
	const char *name;
	uint32_t order; /* index in the symbol table: sorting is stable by it */
	uint8_t bind;   /* STB_* */
	uint8_t label;  /* STT_NOTYPE code label: named only where no function is */
	/* the demangled name (or name), once a lookup asked (NULL: not yet) */
	const char *function;
};

struct cached {
	struct sym_result res;
};

/*
 * The inlined subroutines and lexical blocks under one subprogram, in DIE
 * order with their ranges, built the first time an address falls in that
 * subprogram. A lookup walks this array as inline_chain walks the DIEs
 * (first containing child, descend, skip a subtree that does not contain
 * the address) without libdw's sibling, tag and range iterators, which were
 * a third of a lookup: most addresses of a profile fall in functions
 * already seen (70 % of bench's uniform list). Building at the first
 * lookup measured better than at the second (the one-lookup functions are
 * small).
 */
struct inl_node {
	Dwarf_Off off;
	uint32_t skip; /* index of the first node after this one's subtree */
	uint32_t first_rng, nr_rng;
	bool inlined; /* DW_TAG_inlined_subroutine, else DW_TAG_lexical_block */
};

struct inl_tree {
	Dwarf *dbg;          /* the Dwarf of the subprogram (split units have their own) */
	Dwarf_Off sub_off;
	bool built;
	struct inl_node *nodes;
	size_t nr_nodes;
	uint64_t (*rngs)[2]; /* [lo, hi) */
	size_t nr_rngs;
};

/*
 * The names of a function DIE, looked up once: most frames of a profile
 * repeat functions already named (the attribute walk through abstract
 * origins, the demangler and two interns were 7-10 % of a lookup).
 */
struct name_memo {
	Dwarf *dbg;
	Dwarf_Off off;
	const char *function, *system_name;
	uint32_t decl_line;
};

struct sym_file {
	int fd, rfd;
	Elf *elf;  /* debug file */
	Elf *relf; /* runtime binary (may be NULL) */
	Dwarf *dw;
	Dwarf *alt; /* dwz alternate file we opened (libdw does not own it) */
	int afd;
	Elf *aelf;
	void **zbufs; /* decompressed zstd sections, freed after elf_end */
	size_t nr_zbufs;
	uint64_t zbytes; /* their bytes */
	struct elfseg *segs;
	size_t nr_segs;
	struct cu_info *cus;
	size_t nr_cus;
	struct cu_ent *cu_idx;
	size_t nr_cu_idx;
	struct symtab_ent *syms;
	size_t nr_syms;
	bool syms_built;
	struct strtab strs;
	struct arena arena; /* frames of cached results */
	struct hmap cache;  /* elf_va -> index in results */
	struct hmap inl_idx; /* hash of (Dwarf, subprogram offset) -> index in inl */
	struct inl_tree *inl;
	size_t nr_inl, cap_inl;
	struct dwline_sections secs; /* .debug_line and its strings, for dwline */
	bool secs_loaded;
	struct hmap name_idx; /* hash of (Dwarf, DIE offset) -> index in names */
	struct name_memo *names;
	size_t nr_names, cap_names;
	struct sym_result *results;
	size_t nr_results, cap_results;
	enum sym_name_form form;
	struct sym_file_stats st;
	/*
	 * What opens the files again after sym_file_shed: their paths (alt:
	 * the one sym_file_set_alt was given), and what the first opening
	 * found, which a shed file still answers.
	 */
	char *debug_path, *runtime_path, *alt_path;
	bool shed;
	bool had_dwarf;
};

/* ---- demangling ---- */

char *sym_demangle(const char *name, enum sym_name_form form)
{
	/*
	 * perf demangles without DMGL_PARAMS (DMGL_NO_OPTS): libiberty then leaves
	 * out the return type, the parameter list and a clone suffix, and keeps
	 * templates and ABI tags.
	 */
	int how = form == SYM_NAME_FULL ? DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO : DMGL_AUTO;
	const char *at;
	char *sym, *dem, *out;
	size_t n, dn, sn;

	if (!name || name[0] != '_')
		return NULL;
	/* _Z: Itanium C++ (and Rust legacy); _R: Rust v0; _D: D */
	if (name[1] != 'Z' && name[1] != 'R' && !(name[1] == 'D' && name[2] >= '0' && name[2] <= '9'))
		return NULL;
	at = strchr(name, '@');
	if (!at)
		return cplus_demangle(name, how);
	/*
	 * "sym@plt" (conv's PLT entries), "sym@@VERSION": no mangled name has an
	 * '@', and without DMGL_PARAMS libiberty would drop whatever follows
	 * the name. perf names a PLT entry after its demangled symbol + "@plt".
	 */
	n = (size_t)(at - name);
	sym = malloc(n + 1);
	if (!sym)
		return NULL;
	memcpy(sym, name, n);
	sym[n] = '\0';
	dem = cplus_demangle(sym, how);
	free(sym);
	if (!dem)
		return NULL;
	dn = strlen(dem);
	sn = strlen(at);
	out = realloc(dem, dn + sn + 1);
	if (!out) {
		free(dem);
		return NULL;
	}
	memcpy(out + dn, at, sn + 1);
	return out;
}

static uint32_t intern(struct sym_file *f, const char *s)
{
	uint32_t id = strtab_intern_cstr(&f->strs, s ? s : "");

	return id == STRTAB_NONE ? 0 : id;
}

/* ---- opening ---- */

/* A debug section the symbolizer never reads (see the file comment). */
static bool unused_debug_section(Elf *e, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *name = elf_strptr(e, shstrndx, sh->sh_name);

	return name && (!strcmp(name, ".debug_loc") || !strcmp(name, ".debug_loclists") ||
			!strcmp(name, ".zdebug_loc") || !strcmp(name, ".zdebug_loclists"));
}

/* Decompresses a section's payload (after its Chdr) into buf; false if it is not what ch says. */
static bool decompress(struct libdeflate_decompressor **dc, const GElf_Chdr *ch, const void *in,
		       size_t n, void *buf)
{
	size_t got = 0;

	if (ch->ch_type == ELFCOMPRESS_ZSTD) {
		got = ZSTD_decompress(buf, ch->ch_size, in, n);
		return !ZSTD_isError(got) && got == ch->ch_size;
	}
	if (!*dc && !(*dc = libdeflate_alloc_decompressor()))
		return false;
	return libdeflate_zlib_decompress(*dc, in, n, buf, ch->ch_size, &got) == LIBDEFLATE_SUCCESS &&
	       got == ch->ch_size;
}

/* Hides unused sections and decompresses compressed ones in place (see the file comment). */
static void prepare_sections(struct sym_file *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct libdeflate_decompressor *dc = NULL;

	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		shstrndx = SIZE_MAX;
	while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *d;
		void *buf;
		void **nz;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (shstrndx != SIZE_MAX && unused_debug_section(f->elf, shstrndx, &sh)) {
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
			continue;
		}
		if (!(sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (!gelf_getchdr(scn, &ch) ||
		    (ch.ch_type != ELFCOMPRESS_ZSTD && ch.ch_type != ELFCOMPRESS_ZLIB))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || ch.ch_size > MAX_DECOMPRESSED)
			continue;
		{
			size_t hdr = gelf_getclass(f->elf) == ELFCLASS32 ? sizeof(Elf32_Chdr)
									 : sizeof(Elf64_Chdr);

			if (d->d_size < hdr)
				continue;
			buf = malloc(ch.ch_size ? ch.ch_size : 1);
			if (!buf)
				continue;
			/* a section that fails here is left to libelf, which says what is wrong */
			if (!decompress(&dc, &ch, (const char *)d->d_buf + hdr, d->d_size - hdr, buf)) {
				free(buf);
				continue;
			}
		}
		nz = realloc(f->zbufs, (f->nr_zbufs + 1) * sizeof(*nz));
		if (!nz) {
			free(buf);
			continue;
		}
		f->zbufs = nz;
		f->zbufs[f->nr_zbufs++] = buf;
		f->zbytes += ch.ch_size;
		d->d_buf = buf;
		d->d_size = ch.ch_size;
		d->d_type = ELF_T_BYTE;
		d->d_align = ch.ch_addralign ? ch.ch_addralign : 1;
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = ch.ch_size;
		gelf_update_shdr(scn, &sh);
		if (ch.ch_type == ELFCOMPRESS_ZSTD)
			f->st.zstd_sections++;
	}
	if (dc)
		libdeflate_free_decompressor(dc);
}

/* PT_LOAD segments with file contents; false when the headers cannot be trusted. */
static bool read_segs(struct sym_file *f, Elf *e, bool check_text)
{
	size_t n;

	if (elf_getphdrnum(e, &n) != 0 || n == 0)
		return false;
	if (check_text) {
		/* objcopy --only-keep-debug files keep rewritten, useless program headers */
		Elf_Scn *scn = NULL;
		size_t shstrndx;

		if (elf_getshdrstrndx(e, &shstrndx) == 0) {
			while ((scn = elf_nextscn(e, scn)) != NULL) {
				GElf_Shdr sh;
				const char *name;

				if (!gelf_getshdr(scn, &sh))
					continue;
				name = elf_strptr(e, shstrndx, sh.sh_name);
				if (name && !strcmp(name, ".text") && sh.sh_type == SHT_NOBITS)
					return false;
			}
		}
	}
	f->segs = calloc(n, sizeof(*f->segs));
	if (!f->segs)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		f->segs[f->nr_segs].off = ph.p_offset;
		f->segs[f->nr_segs].vaddr = ph.p_vaddr;
		f->segs[f->nr_segs].filesz = ph.p_filesz;
		f->segs[f->nr_segs].exec = (ph.p_flags & PF_X) != 0;
		f->nr_segs++;
	}
	return f->nr_segs > 0;
}

static int cu_ent_cmp(const void *a, const void *b)
{
	const struct cu_ent *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The directory of the open debug file, as libdw takes it for the files the
 * DWARF names beside it (the file's resolved name up to its last '/').
 */
static bool file_dir(int fd, char *dir, size_t cap)
{
	char proc[40], real[PATH_MAX];
	char *slash;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!realpath(proc, real) || real[0] != '/' || !(slash = strrchr(real, '/')))
		return false;
	slash[1] = '\0';
	return (size_t)snprintf(dir, cap, "%s", real) < cap;
}

/* dir/file as libdw builds it (__libdw_filepath): file if absolute, dir if absolute, else under debugdir. */
static bool libdw_path(char *out, size_t cap, const char *debugdir, const char *dir, const char *file)
{
	int n;

	if (file[0] == '/')
		n = snprintf(out, cap, "%s", file);
	else if (dir && dir[0] == '/')
		n = snprintf(out, cap, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file);
	else if (debugdir)
		n = snprintf(out, cap, "%s%s%s%s", debugdir, dir ? dir : "",
			     dir && *dir && dir[strlen(dir) - 1] != '/' ? "/" : "", file);
	else
		return false;
	return n >= 0 && (size_t)n < cap;
}

/* Whether the path names nothing, or a regular file: what libdw may open without harm. */
static bool harmless_to_open(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/*
 * A skeleton unit's split unit (.dwo) is opened by libdw itself, when asked
 * for the unit's sub-DIE, with a blocking open() of the name the DWARF gives
 * (absolute, beside the debug file or under DW_AT_comp_dir): a debug file
 * conv did not make could name a FIFO or a device. libdw is asked only when
 * none of its places holds anything but a regular file (or nothing).
 */
static bool split_unit_harmless(struct sym_file *f, Dwarf_Die *cudie, char *debugdir, size_t cap,
				int *have_dir)
{
	Dwarf_Attribute a;
	const char *dwo, *comp;
	char path[PATH_MAX];

	if (!dwarf_attr(cudie, DW_AT_dwo_name, &a) && !dwarf_attr(cudie, DW_AT_GNU_dwo_name, &a))
		return true; /* libdw looks for nothing */
	if (!(dwo = dwarf_formstring(&a)))
		return true;
	if (!*have_dir)
		*have_dir = file_dir(f->fd, debugdir, cap) ? 1 : -1;
	if (libdw_path(path, sizeof(path), *have_dir > 0 ? debugdir : NULL, NULL, dwo) &&
	    !harmless_to_open(path))
		return false;
	comp = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	return !comp || !libdw_path(path, sizeof(path), *have_dir > 0 ? debugdir : NULL, comp, dwo) ||
	       harmless_to_open(path);
}

/* Indexes every CU by its address ranges (not .debug_aranges: often missing). */
static void index_cus(struct sym_file *f)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	size_t cap_cus = 0, cap_idx = 0;
	char debugdir[PATH_MAX];
	int have_dir = 0;

	for (; dwarf_get_units(f->dw, cu, &next, NULL, &unit_type, &cudie, NULL) == 0; cu = next) {
		struct cu_info *ci;
		ptrdiff_t off = 0;
		Dwarf_Addr base, lo, hi;
		Dwarf_Attribute a;

		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			continue;
		/* the same unit again, now with its split unit looked up (see split_unit_harmless) */
		if (unit_type != DW_UT_skeleton ||
		    !split_unit_harmless(f, &cudie, debugdir, sizeof(debugdir), &have_dir) ||
		    dwarf_get_units(f->dw, cu, &next, NULL, NULL, NULL, &subdie) != 0)
			subdie = cudie;
		if (f->nr_cus == cap_cus) {
			size_t nc = cap_cus ? cap_cus * 2 : 64;
			struct cu_info *p = realloc(f->cus, nc * sizeof(*p));

			if (!p)
				return;
			f->cus = p;
			cap_cus = nc;
		}
		ci = &f->cus[f->nr_cus];
		memset(ci, 0, sizeof(*ci));
		ci->cudie = cudie;
		ci->subdie = (unit_type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit)
				     ? subdie
				     : cudie;
		ci->comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (f->nr_cu_idx == cap_idx) {
				size_t nc = cap_idx ? cap_idx * 2 : 64;
				struct cu_ent *p = realloc(f->cu_idx, nc * sizeof(*p));

				if (!p)
					return;
				f->cu_idx = p;
				cap_idx = nc;
			}
			f->cu_idx[f->nr_cu_idx].lo = lo;
			f->cu_idx[f->nr_cu_idx].hi = hi;
			f->cu_idx[f->nr_cu_idx].cu = (uint32_t)f->nr_cus;
			f->nr_cu_idx++;
		}
		f->nr_cus++;
	}
	if (f->nr_cu_idx)
		qsort(f->cu_idx, f->nr_cu_idx, sizeof(*f->cu_idx), cu_ent_cmp);
	f->st.cus = f->nr_cus;
}

static void alt_open_here(struct sym_file *f);

/*
 * The files opened and indexed: the debug file (its DWARF, its alternate),
 * the runtime binary; the program headers read the first time only (a shed
 * file keeps them). Errors: CONV_E_IO, CONV_E_LIBELF (said in diag); the
 * caller closes what was opened.
 */
static enum conv_err files_open(struct sym_file *f, bool first, struct conv_diag *diag)
{

	f->fd = ropen_regular(f->debug_path, false);
	if (f->fd < 0) {
		int e = errno;

		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "cannot open %s: %s", f->debug_path,
				 ropen_strerror(e));
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
		return conv_fail(diag, CONV_E_LIBELF, UINT64_MAX, "%s: not an ELF file", f->debug_path);
	prepare_sections(f);
	f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (f->dw) {
		alt_open_here(f); /* before any DIE: libdw would look for it by itself */
		if (f->alt_path && !f->alt)
			sym_file_set_alt(f, f->alt_path);
		index_cus(f);
	}
	if (f->runtime_path) {
		f->rfd = ropen_regular(f->runtime_path, false);
		if (f->rfd >= 0)
			f->relf = elf_begin(f->rfd, ELF_C_READ_MMAP, NULL);
		if (first && f->relf && elf_kind(f->relf) == ELF_K_ELF)
			read_segs(f, f->relf, false);
	}
	if (first && !f->nr_segs) {
		free(f->segs);
		f->segs = NULL;
		read_segs(f, f->elf, true);
	}
	if (first)
		f->had_dwarf = f->dw != NULL && f->nr_cus > 0;
	return CONV_E_OK;
}

/*
 * The files closed, and everything that points into them or into libdw:
 * sections, DIEs, the CU index, the symbol table, the memos keyed by
 * libdw's handles. Cached results stay (their strings are the file's own).
 */
static void files_close(struct sym_file *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	if (f->alt)
		dwarf_end(f->alt);
	if (f->aelf)
		elf_end(f->aelf);
	if (f->afd >= 0)
		close(f->afd);
	if (f->elf)
		elf_end(f->elf);
	if (f->relf)
		elf_end(f->relf);
	if (f->fd >= 0)
		close(f->fd);
	if (f->rfd >= 0)
		close(f->rfd);
	f->dw = f->alt = NULL;
	f->elf = f->relf = f->aelf = NULL;
	f->fd = f->rfd = f->afd = -1;
	for (size_t i = 0; i < f->nr_zbufs; i++)
		free(f->zbufs[i]);
	free(f->zbufs);
	f->zbufs = NULL;
	f->nr_zbufs = 0;
	f->zbytes = 0;
	for (size_t i = 0; i < f->nr_cus; i++) {
		free(f->cus[i].funcs);
		free(f->cus[i].file_ids);
		if (f->cus[i].lines) {
			dwline_release(f->cus[i].lines);
			free(f->cus[i].lines);
		}
	}
	free(f->cus);
	f->cus = NULL;
	f->nr_cus = 0;
	free(f->cu_idx);
	f->cu_idx = NULL;
	f->nr_cu_idx = 0;
	free(f->syms);
	f->syms = NULL;
	f->nr_syms = 0;
	f->syms_built = false;
	hmap_release(&f->inl_idx);
	hmap_init(&f->inl_idx);
	for (size_t i = 0; i < f->nr_inl; i++) {
		free(f->inl[i].nodes);
		free(f->inl[i].rngs);
	}
	free(f->inl);
	f->inl = NULL;
	f->nr_inl = f->cap_inl = 0;
	hmap_release(&f->name_idx);
	hmap_init(&f->name_idx);
	free(f->names);
	f->names = NULL;
	f->nr_names = f->cap_names = 0;
	memset(&f->secs, 0, sizeof(f->secs));
	f->secs_loaded = false;
}

enum conv_err sym_file_open(struct sym_file **out, const char *debug_path, const char *runtime_path,
			    struct conv_diag *diag)
{
	struct sym_file *f = calloc(1, sizeof(*f));
	enum conv_err err;

	*out = NULL;
	if (!f)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	f->fd = f->rfd = f->afd = -1;
	strtab_init(&f->strs);
	arena_init(&f->arena, 0);
	hmap_init(&f->cache);
	hmap_init(&f->inl_idx);
	hmap_init(&f->name_idx);
	elf_version(EV_CURRENT);
	f->debug_path = strdup(debug_path);
	f->runtime_path = runtime_path ? strdup(runtime_path) : NULL;
	if (!f->debug_path || (runtime_path && !f->runtime_path)) {
		sym_file_close(f);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	}
	err = files_open(f, true, diag);
	if (err) {
		sym_file_close(f);
		return err;
	}
	*out = f;
	return CONV_E_OK;
}

void sym_file_close(struct sym_file *f)
{
	if (!f)
		return;
	files_close(f);
	free(f->segs);
	free(f->results);
	hmap_release(&f->cache);
	hmap_release(&f->inl_idx);
	hmap_release(&f->name_idx);
	arena_release(&f->arena);
	strtab_release(&f->strs);
	free(f->debug_path);
	free(f->runtime_path);
	free(f->alt_path);
	free(f);
}

void sym_file_shed(struct sym_file *f)
{
	files_close(f);
	f->shed = true;
}

/* A shed file's files opened again, for an answer not cached. Errors: files_open's. */
static enum conv_err files_reopen(struct sym_file *f)
{
	enum conv_err err;

	if (!f->shed)
		return CONV_E_OK;
	f->shed = false;
	err = files_open(f, false, NULL);
	if (err) {
		files_close(f);
		f->shed = true;
		return err;
	}
	f->st.reopened++;
	return CONV_E_OK;
}

void sym_file_set_name_form(struct sym_file *f, enum sym_name_form form)
{
	f->form = form;
}

bool sym_file_has_phdrs(const struct sym_file *f)
{
	return f->nr_segs > 0;
}

bool sym_file_has_dwarf(const struct sym_file *f)
{
	return f->had_dwarf;
}

/* The size of an open file, 0 when it cannot be asked. */
static uint64_t fd_size(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

uint64_t sym_file_footprint(const struct sym_file *f)
{
	return fd_size(f->fd) + fd_size(f->rfd) + fd_size(f->afd) + f->zbytes + f->arena.total +
	       f->strs.arena.total + f->nr_results * sizeof(*f->results) +
	       f->nr_cus * sizeof(*f->cus) + f->nr_cu_idx * sizeof(*f->cu_idx) +
	       f->nr_syms * sizeof(*f->syms) + f->nr_inl * sizeof(*f->inl) +
	       f->nr_names * sizeof(*f->names);
}

const struct sym_file_stats *sym_file_stats(const struct sym_file *f)
{
	return &f->st;
}

/* ---- normalization ---- */

bool sym_file_normalize(const struct sym_file *f, uint64_t f_off, uint64_t pgoff, uint64_t *elf_va)
{
	return elfseg_normalize(f->segs, f->nr_segs, f_off, pgoff, elf_va);
}

bool sym_file_image_va(const struct sym_file *f, uint64_t img_off, uint64_t *elf_va)
{
	return elfseg_image_va(f->segs, f->nr_segs, img_off, elf_va);
}

/* ---- DWARF lookups ---- */

static const struct cu_info *find_cu(struct sym_file *f, uint64_t pc, size_t *cu_index)
{
	/* last range starting at or below pc; ranges of different CUs do not nest */
	size_t lo = sorted_first_above(f->cu_idx, f->nr_cu_idx, sizeof(f->cu_idx[0]),
				       offsetof(struct cu_ent, lo), pc);

	/* CU ranges rarely overlap; a short look back covers the cases where they do */
	for (size_t i = lo; i > 0 && lo - i < 32; i--) {
		const struct cu_ent *e = &f->cu_idx[i - 1];

		if (e->lo <= pc && pc < e->hi) {
			*cu_index = e->cu;
			return &f->cus[e->cu];
		}
	}
	return NULL;
}

static int func_cmp(const void *a, const void *b)
{
	const struct func_ival *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* larger first, so the innermost containing range is found last */
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static bool push_func(struct cu_info *ci, size_t *cap, uint64_t lo, uint64_t hi, Dwarf_Off off)
{
	if (ci->nr_funcs == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		struct func_ival *p = realloc(ci->funcs, nc * sizeof(*p));

		if (!p)
			return false;
		ci->funcs = p;
		*cap = nc;
	}
	ci->funcs[ci->nr_funcs].lo = lo;
	ci->funcs[ci->nr_funcs].hi = hi;
	ci->funcs[ci->nr_funcs].die_off = off;
	ci->nr_funcs++;
	return true;
}

/*
 * Collects subprogram ranges under die: in subprogram bodies and lexical
 * blocks (nested functions, lambdas), and in namespaces and types when the
 * language has member functions (scopes: false for C, whose structs and
 * unions hold only members; walking them was most of a C unit's walk).
 */
static void collect_funcs(struct cu_info *ci, Dwarf_Die *parent, size_t *cap, int depth, bool scopes)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			ptrdiff_t off = 0;
			Dwarf_Addr base, lo, hi;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				if (hi > lo && !push_func(ci, cap, lo, hi, dwarf_dieoffset(&child)))
					return;
			/* nested functions (lambdas, Rust closures) can sit inside */
			collect_funcs(ci, &child, cap, depth + 1, scopes);
		} else if (tag == DW_TAG_lexical_block ||
			   (scopes && (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
				       tag == DW_TAG_structure_type || tag == DW_TAG_module ||
				       tag == DW_TAG_union_type))) {
			collect_funcs(ci, &child, cap, depth + 1, scopes);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void build_funcs(struct cu_info *ci)
{
	size_t cap = 0;

	int lang = dwarf_srclang(&ci->subdie);
	bool c = lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;

	ci->funcs_built = true;
	collect_funcs(ci, &ci->subdie, &cap, 0, !c);
	if (ci->nr_funcs)
		qsort(ci->funcs, ci->nr_funcs, sizeof(*ci->funcs), func_cmp);
}

static bool die_contains(Dwarf_Die *die, uint64_t pc)
{
	ptrdiff_t off = 0;
	Dwarf_Addr base, lo, hi;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if (lo <= pc && pc < hi)
			return true;
	return false;
}

/* The innermost subprogram range containing pc. */
static bool find_func(struct sym_file *f, struct cu_info *ci, uint64_t pc, Dwarf_Die *out)
{
	size_t lo = sorted_first_above(ci->funcs, ci->nr_funcs, sizeof(ci->funcs[0]),
				       offsetof(struct func_ival, lo), pc);
	Dwarf *dbg = dwarf_cu_getdwarf(ci->subdie.cu);

	/* scan back: the innermost (latest starting) containing range wins */
	for (size_t i = lo; i > 0 && lo - i < 64; i--) {
		const struct func_ival *fi = &ci->funcs[i - 1];

		if (fi->lo <= pc && pc < fi->hi)
			return dwarf_offdie(dbg ? dbg : f->dw, fi->die_off, out) != NULL;
	}
	return false;
}

/* Descends from a subprogram through inlined subroutines containing pc. */
static bool inl_push(struct inl_tree *t, size_t *cap_n, size_t *cap_r, Dwarf_Die *die, bool inlined)
{
	ptrdiff_t off = 0;
	Dwarf_Addr base, lo, hi;
	struct inl_node *nd;

	if (t->nr_nodes >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&t->nodes, cap_n, t->nr_nodes + 1, sizeof(*t->nodes)))
		return false;
	nd = &t->nodes[t->nr_nodes];
	nd->off = dwarf_dieoffset(die);
	nd->inlined = inlined;
	nd->first_rng = (uint32_t)t->nr_rngs;
	nd->nr_rng = 0;
	nd->skip = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (t->nr_rngs >= UINT32_MAX - 1 ||
		    !vec_reserve((void **)&t->rngs, cap_r, t->nr_rngs + 1, sizeof(*t->rngs)))
			return false;
		t->rngs[t->nr_rngs][0] = lo;
		t->rngs[t->nr_rngs][1] = hi;
		t->nr_rngs++;
		nd->nr_rng++;
	}
	t->nr_nodes++;
	return true;
}

/* Appends the inlined subroutines and lexical blocks under parent (depth-first, DIE order). */
static bool inl_build(struct inl_tree *t, size_t *cap_n, size_t *cap_r, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > 256 || dwarf_child(parent, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		size_t at;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		at = t->nr_nodes;
		if (!inl_push(t, cap_n, cap_r, &child, tag == DW_TAG_inlined_subroutine) ||
		    !inl_build(t, cap_n, cap_r, &child, depth + 1))
			return false;
		t->nodes[at].skip = (uint32_t)t->nr_nodes;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

/*
 * The index of sub's inline tree, built on first use; NULL when it could
 * not be built (the DIE walk then does the work).
 */
static const struct inl_tree *inl_tree_of(struct sym_file *f, Dwarf_Die *sub)
{
	Dwarf *dbg = dwarf_cu_getdwarf(sub->cu);
	Dwarf_Off off = dwarf_dieoffset(sub);
	uint64_t h = hmap_hash(off ^ ((uint64_t)(uintptr_t)dbg << 7)), *v;
	struct inl_tree *t = NULL;

	for (v = hmap_get(&f->inl_idx, h); v; v = hmap_get(&f->inl_idx, ++h)) {
		if (f->inl[*v].dbg == dbg && f->inl[*v].sub_off == off) {
			t = &f->inl[*v];
			break;
		}
	}
	if (!t) {
		if (!vec_reserve((void **)&f->inl, &f->cap_inl, f->nr_inl + 1, sizeof(*f->inl)) ||
		    !hmap_put(&f->inl_idx, h, f->nr_inl))
			return NULL;
		t = &f->inl[f->nr_inl++];
		memset(t, 0, sizeof(*t));
		t->dbg = dbg;
		t->sub_off = off;
	}
	if (t->built)
		return t->nodes ? t : NULL;
	{
		size_t cap_n = 0, cap_r = 0;

		t->built = true;
		if (!inl_build(t, &cap_n, &cap_r, sub, 0)) {
			free(t->nodes);
			free(t->rngs);
			t->nodes = NULL;
			t->rngs = NULL;
			t->nr_nodes = t->nr_rngs = 0;
			return NULL;
		}
		if (!t->nodes) {
			/* nothing inlined: an empty tree that is not NULL */
			t->nodes = malloc(sizeof(*t->nodes));
			if (!t->nodes)
				return NULL;
		}
	}
	return t;
}

static bool inl_contains(const struct inl_tree *t, const struct inl_node *nd, uint64_t pc)
{
	for (uint32_t r = 0; r < nd->nr_rng; r++)
		if (t->rngs[nd->first_rng + r][0] <= pc && pc < t->rngs[nd->first_rng + r][1])
			return true;
	return false;
}

/* inline_chain over the index: the same walk, the same answer. */
static size_t inline_chain_idx(const struct inl_tree *t, Dwarf_Die *sub, uint64_t pc, Dwarf_Die *chain,
			       size_t max)
{
	size_t n = 0, i = 0, end = t->nr_nodes;

	chain[n++] = *sub;
	while (i < end && n < max) {
		const struct inl_node *nd = &t->nodes[i];

		if (!inl_contains(t, nd, pc)) {
			i = nd->skip;
			continue;
		}
		if (nd->inlined) {
			if (!dwarf_offdie(t->dbg, nd->off, &chain[n]))
				break;
			n++;
		}
		end = nd->skip;
		i++;
	}
	return n;
}

static size_t inline_chain(Dwarf_Die *sub, uint64_t pc, Dwarf_Die *chain, size_t max)
{
	size_t n = 0;
	Dwarf_Die cur = *sub;

	chain[n++] = cur;
	while (n < max) {
		Dwarf_Die child;
		bool found = false;

		if (dwarf_child(&cur, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    die_contains(&child, pc)) {
				if (tag == DW_TAG_inlined_subroutine)
					chain[n++] = child;
				cur = child;
				found = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

static const char *die_name(Dwarf_Die *die, const char **linkage)
{
	Dwarf_Attribute a;
	const char *name, *link = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a))
		link = dwarf_formstring(&a);
	if (!link && dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	name = dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
	*linkage = link;
	return name;
}

static uint32_t die_udata(Dwarf_Die *die, unsigned at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, at, &a) || dwarf_formudata(&a, &w) != 0 || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* Joins a relative source path with the compile dir. */
static uint32_t intern_path(struct sym_file *f, const char *path, const char *comp_dir)
{
	char buf[4096];
	int n;

	if (!path || !*path)
		return 0;
	if (path[0] == '/' || !comp_dir || !*comp_dir)
		return intern(f, path);
	n = snprintf(buf, sizeof(buf), "%s/%s", comp_dir, path);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return intern(f, path);
	return intern(f, buf);
}

/*
 * A file of the unit's line table (conv's decode lt, else libdw's files),
 * joined with comp_dir and interned once.
 */
static uint32_t unit_file(struct sym_file *f, struct cu_info *ci, const struct dwline_table *lt,
			  Dwarf_Files *files, size_t nfiles, size_t idx)
{
	if (idx >= nfiles)
		return 0;
	if (!ci->file_ids) {
		ci->file_ids = calloc(nfiles, sizeof(*ci->file_ids));
		if (ci->file_ids)
			ci->nr_file_ids = nfiles;
	}
	if (idx < ci->nr_file_ids && ci->file_ids[idx])
		return ci->file_ids[idx] - 1;
	{
		uint32_t id = intern_path(f, lt ? lt->files[idx] : dwarf_filesrc(files, idx, NULL, NULL),
					  ci->comp_dir);

		if (idx < ci->nr_file_ids && id != UINT32_MAX)
			ci->file_ids[idx] = id + 1;
		return id;
	}
}

/* Whether die belongs to a C++ unit. */
static bool cxx_unit(Dwarf_Die *die)
{
	Dwarf_Die cu;
	int lang;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/*
 * A function DIE's names. With a linkage name (through the abstract origin
 * and specification), it demangled, as perf demangles the names addr2line
 * gives it for inline frames. Without one (GCC gives none to functions of
 * internal linkage: static ones, templates over a local lambda), DW_AT_name
 * as it is, as addr2line and perf show it (GCC writes the template
 * arguments into it: "__unguarded_partition<...>").
 */
static void fill_names_uncached(struct sym_file *f, struct sym_frame *fr, Dwarf_Die *die)
{
	const char *link;
	const char *name = die_name(die, &link);
	char *dem = link ? sym_demangle(link, f->form) : NULL;

	if (link)
		fr->system_name = strtab_get(&f->strs, intern(f, link));
	else if (cxx_unit(die))
		/*
		 * The symbol such a C++ function would have is mangled and not
		 * known here. And pprof takes a function whose name equals its
		 * system name for not yet demangled: it strips what looks like
		 * a template or parameter list from it ("operator()<...>" became
		 * "operator").
		 */
		fr->system_name = "";
	else
		fr->system_name = strtab_get(&f->strs, intern(f, name));
	if (dem) {
		fr->function = strtab_get(&f->strs, intern(f, dem));
		free(dem);
	} else {
		fr->function = strtab_get(&f->strs, intern(f, name ? name : link));
	}
	fr->start_line = die_udata(die, DW_AT_decl_line);
}

/* function, system_name and start_line of a function DIE, memoized per DIE. */
static void fill_names(struct sym_file *f, struct sym_frame *fr, Dwarf_Die *die)
{
	Dwarf *dbg = dwarf_cu_getdwarf(die->cu);
	Dwarf_Off off = dwarf_dieoffset(die);
	uint64_t h = hmap_hash(off ^ ((uint64_t)(uintptr_t)dbg << 7)), *v;
	struct name_memo *m;

	for (v = hmap_get(&f->name_idx, h); v; v = hmap_get(&f->name_idx, ++h)) {
		m = &f->names[*v];
		if (m->dbg == dbg && m->off == off) {
			fr->function = m->function;
			fr->system_name = m->system_name;
			fr->start_line = m->decl_line;
			return;
		}
	}
	fill_names_uncached(f, fr, die);
	if (!vec_reserve((void **)&f->names, &f->cap_names, f->nr_names + 1, sizeof(*f->names)) ||
	    !hmap_put(&f->name_idx, h, f->nr_names))
		return; /* no memo: the next lookup of this DIE names it again */
	m = &f->names[f->nr_names++];
	m->dbg = dbg;
	m->off = off;
	m->function = fr->function;
	m->system_name = fr->system_name;
	m->decl_line = fr->start_line;
}

struct symtab_ent;
static struct symtab_ent *symtab_find(struct sym_file *f, uint64_t pc);
static void name_from_symbol(struct sym_file *f, struct sym_frame *fr, struct symtab_ent *se);

/*
 * .debug_line, .debug_line_str and .debug_str of the debug file, once.
 * prepare_sections (or libdw, for what it left) has decompressed them in
 * place by now; a section still compressed is not used.
 */
static void load_line_sections(struct sym_file *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	f->secs_loaded = true;
	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		return;
	f->secs.swap = (elf_getident(f->elf, NULL)[EI_DATA] == ELFDATA2MSB) !=
		       (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if (strcmp(name, ".debug_line") && strcmp(name, ".debug_line_str") &&
		    strcmp(name, ".debug_str"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		if (!strcmp(name, ".debug_line")) {
			f->secs.line = d->d_buf;
			f->secs.line_len = d->d_size;
		} else if (!strcmp(name, ".debug_line_str")) {
			f->secs.line_str = d->d_buf;
			f->secs.line_str_len = d->d_size;
		} else {
			f->secs.str = d->d_buf;
			f->secs.str_len = d->d_size;
		}
	}
}

/*
 * conv's decode of the unit's line table, or NULL when libdw's is to be used:
 * units of the debug file itself (not split units, not a dwz partial file)
 * whose table dwline decodes as libdw would.
 */
static const struct dwline_table *unit_lines(struct sym_file *f, struct cu_info *ci)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	Dwarf_Die cu;
	uint8_t asz = 0, osz = 0;

	if (ci->lines_tried)
		return ci->lines;
	ci->lines_tried = true;
	if (!f->secs_loaded)
		load_line_sections(f);
	if (!f->secs.line || dwarf_cu_getdwarf(ci->cudie.cu) != f->dw ||
	    ci->subdie.addr != ci->cudie.addr || !dwarf_attr(&ci->cudie, DW_AT_stmt_list, &a) ||
	    dwarf_formudata(&a, &off) != 0 || !dwarf_diecu(&ci->cudie, &cu, &asz, &osz))
		return NULL;
	ci->lines = calloc(1, sizeof(*ci->lines));
	if (ci->lines && !dwline_decode(ci->lines, &f->secs, off, asz, ci->comp_dir)) {
		free(ci->lines);
		ci->lines = NULL;
	}
	return ci->lines;
}

/* The line row at pc in the unit: line, column and interned file; false if none. */
static bool unit_line_at(struct sym_file *f, struct cu_info *ci, uint64_t pc, uint32_t *line,
			 uint32_t *col, uint32_t *file)
{
	const struct dwline_table *lt = unit_lines(f, ci);
	Dwarf_Line *l;
	Dwarf_Files *files = NULL, *lf = NULL;
	size_t nfiles = 0, li = 0;
	int ln = 0, cl = 0;

	if (lt) {
		const struct dwline_row *r = dwline_find(lt, pc);

		if (!r)
			return false;
		*line = r->line > 0 ? (uint32_t)r->line : 0;
		*col = r->column;
		*file = unit_file(f, ci, lt, NULL, lt->nr_files, r->file);
		return true;
	}
	l = dwarf_getsrc_die(&ci->cudie, pc);
	if (!l)
		return false;
	dwarf_lineno(l, &ln);
	dwarf_linecol(l, &cl);
	*line = ln > 0 ? (uint32_t)ln : 0;
	*col = cl > 0 ? (uint32_t)cl : 0;
	/* the row's file list is the unit's: use its joined names */
	if (dwarf_getsrcfiles(&ci->cudie, &files, &nfiles) == 0 &&
	    dwarf_line_file(l, &lf, &li) == 0 && lf == files)
		*file = unit_file(f, ci, NULL, files, nfiles, li);
	else
		*file = intern_path(f, dwarf_linesrc(l, NULL, NULL), ci->comp_dir);
	return true;
}

/*
 * The CU's line table covers pc but no subprogram DIE does (GCC emits some
 * functions without address ranges): the symbol table names the function,
 * the line table still gives file:line, as addr2line tools do.
 */
static bool lookup_lines_only(struct sym_file *f, struct cu_info *ci, uint64_t pc,
			      struct sym_result *res)
{
	struct symtab_ent *se = symtab_find(f, pc);
	struct sym_frame *fr;
	uint32_t ln, col, file;

	if (!se || !unit_line_at(f, ci, pc, &ln, &col, &file))
		return false;
	fr = arena_alloc(&f->arena, sizeof(*fr));
	if (!fr)
		return false;
	name_from_symbol(f, fr, se);
	fr->line = ln;
	fr->column = col;
	fr->file = strtab_get(&f->strs, file);
	res->how = SYM_DWARF;
	res->nr = 1;
	res->frames = fr;
	return true;
}

static bool lookup_dwarf(struct sym_file *f, uint64_t pc, struct sym_result *res)
{
	size_t cu_index;
	struct cu_info *ci = (struct cu_info *)find_cu(f, pc, &cu_index);
	Dwarf_Die sub, chain[MAX_INLINE_DEPTH];
	size_t depth;
	struct sym_frame *frames;
	const struct dwline_table *lt;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;

	if (!ci)
		return false;
	if (!ci->funcs_built)
		build_funcs(ci);
	if (!find_func(f, ci, pc, &sub))
		return lookup_lines_only(f, ci, pc, res);
	{
		const struct inl_tree *t = inl_tree_of(f, &sub);

		depth = t ? inline_chain_idx(t, &sub, pc, chain, MAX_INLINE_DEPTH)
			  : inline_chain(&sub, pc, chain, MAX_INLINE_DEPTH);
	}
	frames = arena_alloc_array(&f->arena, depth, sizeof(*frames));
	if (!frames)
		return false;
	lt = unit_lines(f, ci);
	if (lt)
		nfiles = lt->nr_files;
	else if (dwarf_getsrcfiles(&ci->cudie, &files, &nfiles) != 0)
		nfiles = 0;
	/* innermost first: frame i names chain[depth-1-i] */
	for (size_t i = 0; i < depth; i++) {
		Dwarf_Die *die = &chain[depth - 1 - i];
		struct sym_frame *fr = &frames[i];

		fill_names(f, fr, die);
		fr->inlined = i + 1 < depth;
		fr->file = "";
		if (i == 0) {
			uint32_t ln, col, file;

			if (unit_line_at(f, ci, pc, &ln, &col, &file)) {
				fr->line = ln;
				fr->column = col;
				fr->file = strtab_get(&f->strs, file);
			}
		} else {
			/* the call site of the inlined child, in this function */
			Dwarf_Die *callee = &chain[depth - i];
			uint32_t cf = die_udata(callee, DW_AT_call_file);

			fr->line = die_udata(callee, DW_AT_call_line);
			fr->column = die_udata(callee, DW_AT_call_column);
			if ((lt || files) && cf < nfiles)
				fr->file = strtab_get(&f->strs, unit_file(f, ci, lt, files, nfiles, cf));
		}
	}
	/*
	 * The outermost frame is named as the symbol table names the code there,
	 * as perf does: clones (foo.constprop.0, foo.cold) and aliases keep the
	 * name that identifies the machine code; inlined levels keep DWARF's.
	 */
	{
		struct symtab_ent *se = symtab_find(f, pc);

		if (se)
			name_from_symbol(f, &frames[depth - 1], se);
	}
	res->how = SYM_DWARF;
	res->nr = (uint32_t)depth;
	res->frames = frames;
	return true;
}

/* ---- symbol table fallback ---- */

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_ent *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* symbol table order among aliases, as perf's rbtree keeps them */
	return x->order < y->order ? -1 : x->order > y->order;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * perf's choice among symbols at one address (choose_best_symbol): not weak
 * over weak, global over local, fewer leading underscores, longer name.
 */
static bool sym_better(const struct symtab_ent *a, const struct symtab_ent *b)
{
	const char *na = a->name, *nb = b->name;
	size_t ua, ub;

	if (a->label != b->label)
		return !a->label; /* a function over a label at the same address */
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = underscores(na);
	ub = underscores(nb);
	if (ua != ub)
		return ua < ub;
	/* on a full tie perf keeps the one that came first in the symbol table */
	return strlen(na) > strlen(nb);
}

/*
 * A .symtab name without its symbol version: the static table of a library
 * built with .symver has "__libc_start_main@@GLIBC_2.34" and
 * "cfree@GLIBC_2.2.5" as their own entries beside the local aliases, where
 * .dynsym keeps the version apart (.gnu.version) and perf, reading .dynsym
 * only, names them "__libc_start_main" and "cfree". Stripped before perf's
 * choice among aliases, so the choice is the same with or without the debug
 * file. No mangled name has an '@'. NULL when out of memory.
 */
static const char *unversioned(struct sym_file *f, const char *name)
{
	const char *at = strchr(name, '@');
	uint32_t id;

	if (!at || at == name)
		return name;
	id = strtab_intern(&f->strs, name, (size_t)(at - name));
	return id == STRTAB_NONE ? NULL : strtab_get(&f->strs, id);
}

static void load_symtab_of(struct sym_file *f, Elf *e, size_t *cap)
{
	Elf_Scn *scn = NULL;
	Elf_Scn *pick = NULL;
	GElf_Ehdr eh;
	bool arm32 = gelf_getehdr(e, &eh) && eh.e_machine == EM_ARM;

	/* .symtab when there is one, else .dynsym */
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			pick = scn;
			break;
		}
		if (sh.sh_type == SHT_DYNSYM && !pick)
			pick = scn;
	}
	if (pick) {
		GElf_Shdr sh;
		Elf_Data *d = elf_getdata(pick, NULL);
		size_t n;

		if (!gelf_getshdr(pick, &sh) || !d || !sh.sh_entsize)
			return;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			int type;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			type = GELF_ST_TYPE(s.st_info);
			/* a Thumb function's value has bit 0 set, its code starts one byte lower (perf clears it too) */
			if (arm32 && type == STT_FUNC)
				s.st_value &= ~(GElf_Addr)1;
			if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
			    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			name = unversioned(f, name);
			if (!name)
				continue;
			if (type == STT_NOTYPE) {
				/* code labels (_dl_start_user), as perf keeps them; not data or
				 * ARM's $x/$d mapping symbols */
				Elf_Scn *ls = elf_getscn(e, s.st_shndx);
				GElf_Shdr lsh;

				if (name[0] == '$' || !ls || !gelf_getshdr(ls, &lsh) ||
				    !(lsh.sh_flags & SHF_EXECINSTR))
					continue;
			}
			if (f->nr_syms == *cap) {
				size_t nc = *cap ? *cap * 2 : 256;
				struct symtab_ent *p = realloc(f->syms, nc * sizeof(*p));

				if (!p)
					return;
				f->syms = p;
				*cap = nc;
			}
			f->syms[f->nr_syms].lo = s.st_value;
			f->syms[f->nr_syms].hi = s.st_value + s.st_size;
			f->syms[f->nr_syms].sec_end = 0;
			f->syms[f->nr_syms].function = NULL;
			if (s.st_shndx < SHN_LORESERVE) {
				Elf_Scn *ss = elf_getscn(e, s.st_shndx);
				GElf_Shdr ssh;

				if (ss && gelf_getshdr(ss, &ssh) && (ssh.sh_flags & SHF_ALLOC))
					f->syms[f->nr_syms].sec_end = ssh.sh_addr + ssh.sh_size;
			}
			f->syms[f->nr_syms].name = name;
			f->syms[f->nr_syms].bind = (uint8_t)GELF_ST_BIND(s.st_info);
			f->syms[f->nr_syms].label = type == STT_NOTYPE;
			f->syms[f->nr_syms].order = (uint32_t)f->nr_syms;
			f->nr_syms++;
		}
	}
}

static Elf_Scn *section_named(Elf *e, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(e, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* one .rela.plt entry, sorted by the GOT slot it fills */
struct plt_rel {
	uint64_t got;
	uint64_t addend;
	uint32_t sym;
	uint32_t type;
};

static int plt_rel_cmp(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/*
 * The GOT slot a PLT stub jumps through: `jmp *disp32(%rip)` (ff 25) at the
 * start of a lazy .plt stub, after endbr64 (f3 0f 1e fa) in .plt.sec, with
 * an optional bnd prefix (f2). 0 when the bytes are not one of those.
 */
static uint64_t plt_stub_got(const unsigned char *b, size_t len, uint64_t addr)
{
	static const unsigned char endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t k = 0;
	int32_t disp;

	if (len >= 4 && !memcmp(b, endbr, 4))
		k = 4;
	if (k < len && b[k] == 0xf2)
		k++;
	if (k > len || 6 > len - k || b[k] != 0xff || b[k + 1] != 0x25)
		return 0;
	disp = (int32_t)((uint32_t)b[k + 2] | (uint32_t)b[k + 3] << 8 | (uint32_t)b[k + 4] << 16 |
			 (uint32_t)b[k + 5] << 24);
	return addr + k + 6 + (uint64_t)(int64_t)disp;
}

/*
 * The name of an IRELATIVE slot: its addend is an ifunc resolver's address,
 * which is the value of the IFUNC symbol the caller asked for (memcpy), so
 * "memcpy@plt"; objdump's "*ABS*+0xADDR@plt" when no such symbol is there.
 */
static void plt_ifunc_name(Elf *e, Elf_Data *dd, const GElf_Shdr *dsh, uint64_t addend,
			   char *buf, size_t len)
{
	const char *best = NULL;
	int best_bind = 0;
	size_t n = dsh->sh_entsize ? dsh->sh_size / dsh->sh_entsize : 0;

	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int bind;

		if (!gelf_getsym(dd, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC ||
		    s.st_value != addend)
			continue;
		name = elf_strptr(e, dsh->sh_link, s.st_name);
		bind = GELF_ST_BIND(s.st_info);
		if (!name || !*name)
			continue;
		/* a global before a weak alias, then the first in the table */
		if (!best || (bind == STB_GLOBAL && best_bind != STB_GLOBAL)) {
			best = name;
			best_bind = bind;
		}
	}
	if (best)
		snprintf(buf, len, "%s@plt", best);
	else
		snprintf(buf, len, "*ABS*+0x%" PRIx64 "@plt", addend);
}

/*
 * The GOT slot an arm64 PLT stub jumps through: `adrp x16, page` then
 * `ldr x17, [x16, #off]`, after an optional `bti c` (BTI PLTs, 24-byte
 * stubs). 0 when the bytes are not one of those.
 */
static uint64_t a64_stub_got(const unsigned char *b, size_t len, uint64_t addr)
{
	size_t k = 0;
	uint32_t adrp, ldr;
	uint64_t page, imm;

	if (len >= 4 && b[0] == 0x5f && b[1] == 0x24 && b[2] == 0x03 && b[3] == 0xd5)
		k = 4; /* bti c */
	if (k > len || 8 > len - k)
		return 0;
	adrp = (uint32_t)b[k] | (uint32_t)b[k + 1] << 8 | (uint32_t)b[k + 2] << 16 |
	       (uint32_t)b[k + 3] << 24;
	ldr = (uint32_t)b[k + 4] | (uint32_t)b[k + 5] << 8 | (uint32_t)b[k + 6] << 16 |
	      (uint32_t)b[k + 7] << 24;
	/* adrp x16; ldr x17, [x16, #imm12 * 8] */
	if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
		return 0;
	imm = (uint64_t)((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3);
	if (imm & (1u << 20))
		imm |= ~(uint64_t)0 << 21; /* the 21-bit page offset is signed */
	page = ((addr + k) & ~(uint64_t)0xfff) + (imm << 12);
	return page + (uint64_t)((ldr >> 10) & 0xfff) * 8;
}

/* DT_AARCH64_BTI_PLT or DT_AARCH64_PAC_PLT: the linker wrote 24-byte stubs */
static bool a64_wide_plt(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *dyn = section_named(e, ".dynamic", &sh);
	Elf_Data *d = dyn && sh.sh_type == SHT_DYNAMIC ? elf_getdata(dyn, NULL) : NULL;
	size_t n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;

	for (size_t i = 0; i < n; i++) {
		GElf_Dyn dt;

		if (!gelf_getdyn(d, (int)i, &dt) || dt.d_tag == DT_NULL)
			break;
		if (dt.d_tag == DT_AARCH64_BTI_PLT || dt.d_tag == DT_AARCH64_PAC_PLT) /* no value: present or not */
			return true;
	}
	return false;
}

/* Where a machine's PLT stubs are and how to read the GOT slot from one. */
struct plt_layout {
	uint64_t base;   /* the first stub */
	uint64_t stride; /* bytes per stub */
	uint32_t irelative;
	uint64_t (*stub_got)(const unsigned char *b, size_t len, uint64_t addr);
};

/*
 * x86-64: 16-byte stubs in .plt.sec when the binary has IBT stubs, else in
 * .plt after its 16-byte header. arm64: .plt's 32-byte header, then 16-byte
 * stubs, 24 with BTI or PAC (perf 6.1 assumes 16 and misnames those).
 * Returns the stubs' section, NULL for another machine or no PLT.
 */
static Elf_Scn *plt_layout_of(Elf *e, GElf_Half machine, GElf_Shdr *psh, struct plt_layout *l)
{
	Elf_Scn *plt;

	if (machine == EM_X86_64) {
		l->irelative = R_X86_64_IRELATIVE;
		l->stub_got = plt_stub_got;
		l->stride = 16;
		plt = section_named(e, ".plt.sec", psh);
		if (plt) {
			l->base = psh->sh_addr;
			return plt;
		}
		plt = section_named(e, ".plt", psh);
		if (!plt || psh->sh_size < 16)
			return NULL;
		l->base = psh->sh_addr + 16;
		return plt;
	}
	if (machine == EM_AARCH64) {
		l->irelative = R_AARCH64_IRELATIVE;
		l->stub_got = a64_stub_got;
		l->stride = a64_wide_plt(e) ? 24 : 16;
		plt = section_named(e, ".plt", psh);
		if (!plt || psh->sh_size < 32)
			return NULL;
		l->base = psh->sh_addr + 32;
		return plt;
	}
	return NULL;
}

/*
 * PLT entries as perf names them ("malloc@plt"), one stub per .rela.plt
 * entry. Without these, a sample in a stub would take the name of whatever
 * symbol precedes the PLT (on arm64 the `$x` mapping symbol there, which is
 * no name at all).
 *
 * Stub i does not belong to .rela.plt entry i: glibc's libc lists its
 * IRELATIVE relocations last while their stubs come first (perf 6.1 gets
 * this wrong). Each stub jumps through its own GOT slot, so the stub's
 * bytes name the relocation; when the bytes are not at hand (a .debug file
 * only), stubs follow the order of their GOT slots, as the linker lays both
 * out.
 */
static void add_plt_syms(struct sym_file *f, Elf *e, size_t *cap)
{
	GElf_Ehdr eh;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rela, *plt, *dyn;
	Elf_Data *rd, *dd, *pd;
	struct plt_rel *rels;
	struct plt_layout lay;
	uint64_t n, nstubs;

	if (!e || !gelf_getehdr(e, &eh))
		return;
	rela = section_named(e, ".rela.plt", &rsh);
	if (!rela || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return;
	plt = plt_layout_of(e, eh.e_machine, &psh, &lay);
	if (!plt || lay.base > psh.sh_addr + psh.sh_size)
		return;
	dyn = elf_getscn(e, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || !(rd = elf_getdata(rela, NULL)) ||
	    !(dd = elf_getdata(dyn, NULL)) || !rd->d_buf)
		return;
	n = rsh.sh_size / rsh.sh_entsize;
	nstubs = (psh.sh_addr + psh.sh_size - lay.base) / lay.stride;
	if (n > rd->d_size / rsh.sh_entsize)
		n = rd->d_size / rsh.sh_entsize;
	if (!n)
		return;
	rels = calloc((size_t)n, sizeof(*rels));
	if (!rels)
		return;
	for (uint64_t i = 0; i < n; i++) {
		GElf_Rela r;

		if (!gelf_getrela(rd, (int)i, &r))
			continue;
		rels[i].got = r.r_offset;
		rels[i].addend = (uint64_t)r.r_addend;
		rels[i].sym = (uint32_t)GELF_R_SYM(r.r_info);
		rels[i].type = (uint32_t)GELF_R_TYPE(r.r_info);
	}
	qsort(rels, (size_t)n, sizeof(*rels), plt_rel_cmp);
	pd = psh.sh_type == SHT_PROGBITS ? elf_getdata(plt, NULL) : NULL;
	if (pd && (!pd->d_buf || pd->d_size < psh.sh_size))
		pd = NULL;
	for (uint64_t i = 0; i < nstubs && i < n; i++) {
		const struct plt_rel *r = &rels[i];
		uint64_t at = lay.base + lay.stride * i;
		GElf_Sym ds;
		const char *name = NULL;
		char buf[512];

		if (pd) {
			uint64_t got = lay.stub_got((const unsigned char *)pd->d_buf +
							    (at - psh.sh_addr), (size_t)lay.stride, at);
			size_t lo = 0, hi = (size_t)n;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (rels[mid].got < got)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (!got || lo == n || rels[lo].got != got)
				continue; /* not a stub we can read: leave it unnamed */
			r = &rels[lo];
		}
		if (r->type == lay.irelative) {
			plt_ifunc_name(e, dd, &dsh, r->addend, buf, sizeof(buf));
		} else {
			if (!r->sym || !gelf_getsym(dd, (int)r->sym, &ds))
				continue;
			name = elf_strptr(e, dsh.sh_link, ds.st_name);
			if (!name || !*name)
				continue;
			snprintf(buf, sizeof(buf), "%s@plt", name);
		}
		if (f->nr_syms == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct symtab_ent *p = realloc(f->syms, nc * sizeof(*p));

			if (!p)
				break;
			f->syms = p;
			*cap = nc;
		}
		f->syms[f->nr_syms].lo = at;
		f->syms[f->nr_syms].hi = at + lay.stride;
		f->syms[f->nr_syms].function = NULL;
		f->syms[f->nr_syms].sec_end = psh.sh_addr + psh.sh_size;
		f->syms[f->nr_syms].name = strtab_get(&f->strs, intern(f, buf));
		f->syms[f->nr_syms].bind = STB_GLOBAL;
		f->syms[f->nr_syms].label = 0;
		f->syms[f->nr_syms].order = (uint32_t)f->nr_syms;
		f->nr_syms++;
	}
	free(rels);
}

static void build_symtab(struct sym_file *f)
{
	size_t cap = 0;

	f->syms_built = true;
	load_symtab_of(f, f->elf, &cap);
	if (!f->nr_syms && f->relf)
		load_symtab_of(f, f->relf, &cap);
	if (f->nr_syms)
		add_plt_syms(f, f->relf ? f->relf : f->elf, &cap);
	if (f->nr_syms)
		qsort(f->syms, f->nr_syms, sizeof(*f->syms), sym_cmp);
	/* keep one symbol per address, the one perf would show */
	if (f->nr_syms) {
		size_t k = 0;

		for (size_t i = 1; i < f->nr_syms; i++) {
			if (f->syms[i].lo == f->syms[k].lo) {
				if (sym_better(&f->syms[i], &f->syms[k]) ||
				    (f->syms[i].hi > f->syms[k].hi && f->syms[k].hi == f->syms[k].lo))
					f->syms[k] = f->syms[i];
				continue;
			}
			f->syms[++k] = f->syms[i];
		}
		f->nr_syms = k + 1;
	}
	/* a label inside a sized function is not a symbol of its own: the function names it */
	if (f->nr_syms) {
		size_t k = 0;
		uint64_t covered = 0;

		for (size_t i = 0; i < f->nr_syms; i++) {
			const struct symtab_ent *se = &f->syms[i];

			if (se->label && se->lo < covered)
				continue;
			if (!se->label && se->hi > covered)
				covered = se->hi;
			f->syms[k++] = *se;
		}
		f->nr_syms = k;
	}
	/* a size-0 symbol extends to the next one, as perf does, but not past its section */
	for (size_t i = 0; i < f->nr_syms; i++) {
		struct symtab_ent *se = &f->syms[i];

		if (se->hi > se->lo)
			continue;
		se->hi = i + 1 < f->nr_syms ? f->syms[i + 1].lo : se->lo + 1;
		if (se->sec_end > se->lo && se->sec_end < se->hi)
			se->hi = se->sec_end;
	}
}

/* The symbol perf would name at pc, or NULL. */
static struct symtab_ent *symtab_find(struct sym_file *f, uint64_t pc)
{
	size_t lo;

	if (!f->syms_built)
		build_symtab(f);
	lo = sorted_first_above(f->syms, f->nr_syms, sizeof(f->syms[0]), offsetof(struct symtab_ent, lo),
				pc);
	/* nested symbols are rare; a short look back finds one that covers pc */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		struct symtab_ent *s = &f->syms[i - 1];

		if (s->lo <= pc && pc < s->hi)
			return s;
	}
	return NULL;
}

/*
 * Names a frame from a symbol: demangled for display, raw as the system
 * name; demangled once per symbol, not per address (a binary
 * without debug info has tens of thousands of addresses in a few thousand
 * functions, and demangling a C++ name costs microseconds).
 */
static void name_from_symbol(struct sym_file *f, struct sym_frame *fr, struct symtab_ent *se)
{
	if (!se->function) {
		char *dem = sym_demangle(se->name, f->form);

		/* a cached result outlives the ELF's string table (sym_file_shed): its own copy */
		se->name = strtab_get(&f->strs, intern(f, se->name));
		se->function = dem ? strtab_get(&f->strs, intern(f, dem)) : se->name;
		free(dem);
	}
	fr->system_name = se->name;
	fr->function = se->function;
}

static bool lookup_symtab(struct sym_file *f, uint64_t pc, struct sym_result *res)
{
	struct symtab_ent *se = symtab_find(f, pc);
	struct sym_frame *fr;

	if (!se)
		return false;
	fr = arena_alloc(&f->arena, sizeof(*fr));
	if (!fr)
		return false;
	name_from_symbol(f, fr, se);
	fr->file = "";
	res->how = SYM_SYMTAB;
	res->nr = 1;
	res->frames = fr;
	return true;
}

enum conv_err sym_file_lookup(struct sym_file *f, uint64_t elf_va, struct sym_result *out)
{
	uint64_t *v = hmap_get(&f->cache, elf_va);
	struct sym_result res;

	f->st.lookups++;
	if (v) {
		f->st.cache_hits++;
		*out = f->results[*v];
		return CONV_E_OK;
	}
	if (files_reopen(f) != CONV_E_OK)
		return CONV_E_IO;
	memset(&res, 0, sizeof(res));
	res.elf_va = elf_va;
	if (f->dw && lookup_dwarf(f, elf_va, &res))
		f->st.dwarf++;
	else if (lookup_symtab(f, elf_va, &res))
		f->st.symtab++;
	else
		f->st.unresolved++;
	if (f->nr_results == f->cap_results) {
		size_t nc = f->cap_results ? f->cap_results * 2 : 256;
		struct sym_result *p = realloc(f->results, nc * sizeof(*p));

		if (!p)
			return CONV_E_NOMEM;
		f->results = p;
		f->cap_results = nc;
	}
	f->results[f->nr_results] = res;
	if (!hmap_put(&f->cache, elf_va, f->nr_results))
		return CONV_E_NOMEM;
	f->nr_results++;
	*out = res;
	return CONV_E_OK;
}

bool sym_file_symbol_addr(struct sym_file *f, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;

	if (files_reopen(f) != CONV_E_OK)
		return false;
	/* _text is not a function symbol, so the function index cannot answer this */
	while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			nm = elf_strptr(f->elf, sh.sh_link, sym.st_name);
			if (nm && !strcmp(nm, name)) {
				*addr = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

bool sym_file_missing_alt(struct sym_file *f, const uint8_t **bid, size_t *len)
{
	const char *name;
	const void *id;
	ssize_t n;

	/* a shed file had its alternate looked for when it was first opened */
	if (f->shed || !f->dw || f->alt)
		return false;
	n = dwelf_dwarf_gnu_debugaltlink(f->dw, &name, &id);
	if (n <= 0 || dwarf_getalt(f->dw) != NULL)
		return false;
	*bid = id;
	*len = (size_t)n;
	return true;
}

enum conv_err sym_file_set_alt(struct sym_file *f, const char *path)
{
	enum conv_err e = CONV_E_OK;

	if (files_reopen(f) != CONV_E_OK || !f->dw || f->alt)
		return CONV_E_INVAL;
	f->afd = ropen_regular(path, false);
	if (f->afd < 0)
		return CONV_E_IO;
	f->aelf = elf_begin(f->afd, ELF_C_READ_MMAP, NULL);
	if (!f->aelf)
		e = CONV_E_LIBELF;
	else if (!(f->alt = dwarf_begin_elf(f->aelf, DWARF_C_READ, NULL)))
		e = CONV_E_LIBDW;
	if (e != CONV_E_OK) {
		/* a later call may try another file */
		if (f->aelf)
			elf_end(f->aelf);
		close(f->afd);
		f->aelf = NULL;
		f->afd = -1;
		return e;
	}
	dwarf_setalt(f->dw, f->alt);
	if (!f->alt_path || strcmp(f->alt_path, path)) {
		free(f->alt_path);
		f->alt_path = strdup(path); /* NULL: a reopened file goes without it */
	}
	return CONV_E_OK;
}

/*
 * A dwz file's alternate (.gnu_debugaltlink) is looked for by libdw itself,
 * on the first DIE that refers to it, at /usr/lib/debug/.build-id/NN/REST.debug
 * and at the name the file gives (absolute, or beside the file), with a
 * blocking open() of whatever is there: a debug file conv did not make could
 * name a FIFO or a device. The same two places are tried here, through
 * ropen_regular, and when neither holds the file libdw is given its own mark
 * of a search made and failed ((Dwarf *)-1, what dwarf_getalt leaves after
 * one; dwarf_end frees only an alternate libdw opened), so that it never
 * looks; sym_file_set_alt may still give it one the caller found.
 */
static void alt_open_here(struct sym_file *f)
{
	const char *name;
	const void *id;
	char path[PATH_MAX], dir[PATH_MAX];
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(f->dw, &name, &id);

	if (n <= 0)
		return;
	if (n >= 3 && n <= 64) {
		const uint8_t *b = id;
		int k = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", b[0]);

		for (ssize_t i = 1; i < n; i++)
			k += snprintf(path + k, sizeof(path) - (size_t)k, "%02x", b[i]);
		snprintf(path + k, sizeof(path) - (size_t)k, ".debug");
		if (sym_file_set_alt(f, path) == CONV_E_OK)
			return;
	}
	if (name && *name &&
	    libdw_path(path, sizeof(path), file_dir(f->fd, dir, sizeof(dir)) ? dir : NULL, NULL, name) &&
	    sym_file_set_alt(f, path) == CONV_E_OK)
		return;
	dwarf_setalt(f->dw, (Dwarf *)-1);
}
