/*
 * An object's CFI through libdw: .eh_frame of the runtime binary (stripped
 * binaries keep it), then .debug_frame of its debug file. Each CFI row asked
 * for is compiled once into a uw_rule (libdw builds a Dwarf_Frame per call)
 * and kept by the row's address range, so that every address in the row
 * finds it; an address asked for again is found by a hash first.
 */
#include "unwind/unwind.h"

#include "core/arena.h"
#include "core/hmap.h"
#include "core/ropen.h"
#include "core/sorted.h"
#include "core/vec.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_RULE 1 /* hmap value of an address no CFI covers */

#define ROW_TAIL 32

/* A compiled CFI row: the rule for every address in [lo, hi). */
struct cfi_row {
	uint64_t lo, hi;
	const struct uw_rule *rule;
};

struct uw_cfi {
	enum uw_arch arch;
	int fd, dbg_fd;
	Elf *elf;
	Dwarf_CFI *eh;       /* .eh_frame (NULL: none) */
	Elf *dbg_elf;        /* the debug file, when it has a .debug_frame */
	Dwarf *dbg;          /* its DWARF, for that .debug_frame */
	Dwarf_CFI *dbg_cfi;  /* borrowed from dbg */
	struct elfseg *segs;
	size_t nr_segs;
	uint64_t entry;      /* e_entry; 0: none */
	struct hmap rules;   /* ELF address -> (uintptr_t) rule, or NO_RULE: addresses asked for */
	/*
	 * the rows compiled, not overlapping: [0, nr_sorted) by address, then
	 * fewer than ROW_TAIL kept since (an insert in order moved half the rows)
	 */
	struct cfi_row *rows;
	size_t nr_sorted, nr_rows, cap_rows;
	struct arena arena;  /* rules and their expressions */
};

/* The PT_LOAD segments, for ELF addresses of file offsets. */
static bool read_segs(struct uw_cfi *c)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(c->elf, &n) != 0 || !n)
		return false;
	c->segs = calloc(n, sizeof(*c->segs));
	if (!c->segs)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(c->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		c->segs[c->nr_segs].off = ph.p_offset;
		c->segs[c->nr_segs].vaddr = ph.p_vaddr;
		c->segs[c->nr_segs].filesz = ph.p_filesz;
		c->segs[c->nr_segs].exec = (ph.p_flags & PF_X) != 0;
		c->nr_segs++;
	}
	return c->nr_segs > 0;
}

/* Whether e has a .debug_frame with contents (not one stripped to NOBITS). */
static bool has_debug_frame(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_frame"))
			return true;
	}
	return false;
}

/*
 * The debug file's .debug_frame, for code its binary's .eh_frame does not
 * cover. Only a file that has one is opened as DWARF: libdw decompresses
 * every compressed debug section when it opens a file, which for
 * libc6-dbg's libc (no .debug_frame at all) was 11 MB inflated and kept for
 * nothing.
 */
static void open_debug_frame(struct uw_cfi *c, const char *debug)
{
	c->dbg_fd = ropen_regular(debug, false);
	if (c->dbg_fd < 0)
		return;
	c->dbg_elf = elf_begin(c->dbg_fd, ELF_C_READ_MMAP, NULL);
	if (!c->dbg_elf || elf_kind(c->dbg_elf) != ELF_K_ELF || !has_debug_frame(c->dbg_elf))
		return;
	c->dbg = dwarf_begin_elf(c->dbg_elf, DWARF_C_READ, NULL);
	if (c->dbg)
		c->dbg_cfi = dwarf_getcfi(c->dbg);
}

enum conv_err uw_cfi_open(struct uw_cfi **out, enum uw_arch arch, const char *binary,
			  const char *debug)
{
	struct uw_cfi *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return CONV_E_NOMEM;
	c->arch = arch;
	c->dbg_fd = -1;
	hmap_init(&c->rules);
	arena_init(&c->arena, 0);
	elf_version(EV_CURRENT);
	c->fd = ropen_regular(binary, false);
	if (c->fd < 0) {
		uw_cfi_close(c);
		return CONV_E_IO;
	}
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !read_segs(c)) {
		uw_cfi_close(c);
		return CONV_E_LIBELF;
	}
	{
		GElf_Ehdr eh;

		if (gelf_getehdr(c->elf, &eh))
			c->entry = eh.e_entry;
	}
	c->eh = dwarf_getcfi_elf(c->elf);
	if (debug)
		open_debug_frame(c, debug);
	*out = c;
	return CONV_E_OK;
}

uint64_t uw_cfi_footprint(const struct uw_cfi *c)
{
	return c->arena.total + c->cap_rows * sizeof(*c->rows) +
	       c->rules.cap * (sizeof(struct hmap_slot) + 1) + c->nr_segs * sizeof(*c->segs);
}

void uw_cfi_close(struct uw_cfi *c)
{
	if (!c)
		return;
	if (c->eh)
		dwarf_cfi_end(c->eh);
	if (c->dbg)
		dwarf_end(c->dbg);
	if (c->dbg_elf)
		elf_end(c->dbg_elf);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	if (c->dbg_fd >= 0)
		close(c->dbg_fd);
	free(c->segs);
	free(c->rows);
	hmap_release(&c->rules);
	arena_release(&c->arena);
	free(c);
}

/* How far into the entry point a lookup still counts as in it: _start's first call */
#define ENTRY_SPAN 32

bool uw_cfi_is_entry(const struct uw_cfi *c, uint64_t elf_va)
{
	return c->entry && elf_va >= c->entry && elf_va - c->entry < ENTRY_SPAN;
}

bool uw_cfi_elf_addr(const struct uw_cfi *c, uint64_t f_off, uint64_t pgoff, uint64_t *elf_va)
{
	return elfseg_normalize(c->segs, c->nr_segs, f_off, pgoff, elf_va);
}

/* A copy of libdw's expression in the arena (libdw's lives only as long as its frame). */
static const struct uw_op *copy_ops(struct uw_cfi *c, const Dwarf_Op *ops, size_t n)
{
	struct uw_op *o = arena_alloc_array(&c->arena, n ? n : 1, sizeof(*o));

	for (size_t i = 0; o && i < n; i++) {
		o[i].atom = ops[i].atom;
		o[i].number = ops[i].number;
		o[i].number2 = ops[i].number2;
	}
	return o;
}

/*
 * A register's rule from libdw's form of it (dwarf_frame_register):
 * CFA-relative rules come as DW_OP_call_frame_cfa [DW_OP_plus_uconst N]
 * [DW_OP_stack_value], a register as DW_OP_regx, anything else as the
 * expression. False: unchanged (same value), nothing to keep.
 */
static bool reg_rule(struct uw_cfi *c, const Dwarf_Op *ops, size_t n, bool undefined,
		     struct uw_reg_rule *rr)
{
	bool value = n && ops[n - 1].atom == DW_OP_stack_value;
	size_t m = value ? n - 1 : n;

	if (undefined) {
		rr->how = UW_UNDEF;
		return true;
	}
	if (!n)
		return false;
	if (ops[0].atom == DW_OP_call_frame_cfa && (m == 1 || (m == 2 && ops[1].atom == DW_OP_plus_uconst))) {
		rr->how = value ? UW_VAL : UW_AT;
		rr->off = m == 2 ? (int64_t)ops[1].number : 0;
		return true;
	}
	if (n == 1 && (ops[0].atom == DW_OP_regx || (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		rr->how = UW_REG;
		rr->src = (uint8_t)(ops[0].atom == DW_OP_regx ? ops[0].number : (uint64_t)(ops[0].atom - DW_OP_reg0));
		return true;
	}
	rr->how = value ? UW_VAL_EXPR : UW_AT_EXPR;
	rr->expr = copy_ops(c, ops, m);
	rr->expr_len = (uint16_t)(m > UINT16_MAX ? UINT16_MAX : m);
	return rr->expr != NULL;
}

/* The rule of one CFI row (NULL: out of memory, or a row libdw cannot describe). */
static const struct uw_rule *compile(struct uw_cfi *c, Dwarf_Frame *fr, unsigned nregs)
{
	struct uw_reg_rule tmp[UW_NREGS + 1];
	struct uw_rule *r;
	Dwarf_Op *ops, ops_mem[3];
	size_t n, nr = 0;
	Dwarf_Addr start, end;
	bool signal = false;
	int ra = dwarf_frame_info(fr, &start, &end, &signal);
	uint8_t cfa_reg = 0;
	int64_t cfa_off = 0;
	const struct uw_op *cfa_ops = NULL;
	uint16_t cfa_len = 0;

	if (ra < 0 || ra >= UW_NREGS || dwarf_frame_cfa(fr, &ops, &n) != 0 || !n)
		return NULL;
	if (n == 1 && (ops[0].atom == DW_OP_bregx || (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		cfa_reg = (uint8_t)(ops[0].atom == DW_OP_bregx ? ops[0].number : (uint64_t)(ops[0].atom - DW_OP_breg0));
		cfa_off = (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number);
	} else {
		cfa_ops = copy_ops(c, ops, n);
		cfa_len = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
		if (!cfa_ops)
			return NULL;
	}
	for (unsigned reg = 0; reg < nregs || reg == (unsigned)ra; reg++) {
		struct uw_reg_rule rr;

		memset(&rr, 0, sizeof(rr));
		rr.reg = (uint8_t)reg;
		if (dwarf_frame_register(fr, (int)reg, ops_mem, &ops, &n) != 0)
			continue;
		if (reg_rule(c, ops, n, !n && ops == ops_mem, &rr) && nr < UW_NREGS + 1)
			tmp[nr++] = rr;
	}
	r = arena_alloc(&c->arena, sizeof(*r) + nr * sizeof(r->regs[0]));
	if (!r)
		return NULL;
	r->cfa_expr = cfa_ops != NULL;
	r->signal = signal;
	r->cfa_reg = cfa_reg;
	r->cfa_off = cfa_off;
	r->cfa_ops = cfa_ops;
	r->cfa_len = cfa_len;
	r->ra = (uint8_t)ra;
	r->nr = (uint8_t)nr;
	memcpy(r->regs, tmp, nr * sizeof(tmp[0]));
	return r;
}

/*
 * The kept row covering va, or NULL; *next: the lowest start of a kept row
 * above va (UINT64_MAX: none). The sorted rows by binary search, the rows
 * kept since the last merge one by one.
 */
static const struct cfi_row *row_find(const struct uw_cfi *c, uint64_t va, uint64_t *next)
{
	size_t lo = sorted_first_above(c->rows, c->nr_sorted, sizeof(c->rows[0]),
				       offsetof(struct cfi_row, hi), va);

	if (lo < c->nr_sorted && c->rows[lo].lo <= va)
		return &c->rows[lo];
	*next = lo < c->nr_sorted ? c->rows[lo].lo : UINT64_MAX;
	for (size_t i = c->nr_sorted; i < c->nr_rows; i++) {
		if (c->rows[i].lo <= va && va < c->rows[i].hi)
			return &c->rows[i];
		if (c->rows[i].lo > va && c->rows[i].lo < *next)
			*next = c->rows[i].lo;
	}
	return NULL;
}

static int row_cmp(const void *a, const void *b)
{
	const struct cfi_row *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The rows kept since the last merge, sorted into the others from the back
 * (no second array), each run of sorted rows above a new one moved at once.
 */
static void row_merge(struct uw_cfi *c)
{
	struct cfi_row tail[ROW_TAIL];
	size_t nt = c->nr_rows - c->nr_sorted, i = c->nr_sorted, k = c->nr_rows;

	memcpy(tail, c->rows + c->nr_sorted, nt * sizeof(*tail));
	qsort(tail, nt, sizeof(*tail), row_cmp);
	while (nt) {
		const struct cfi_row *t = &tail[--nt];
		size_t lo = sorted_first_above(c->rows, i, sizeof(c->rows[0]),
					       offsetof(struct cfi_row, lo), t->lo);

		k -= i - lo;
		memmove(c->rows + k, c->rows + lo, (i - lo) * sizeof(*c->rows));
		i = lo;
		c->rows[--k] = *t;
	}
	c->nr_sorted = c->nr_rows;
}

/*
 * Keeps rule for [lo, hi), lo an address no kept row covers, cut at next
 * (row_find's: rows of well-formed CFI do not overlap). A failed insert
 * only means the row is compiled again for its other addresses.
 */
static void row_keep(struct uw_cfi *c, uint64_t lo, uint64_t hi, uint64_t next,
		     const struct uw_rule *rule)
{
	if (hi > next)
		hi = next;
	if (lo >= hi || !vec_reserve((void **)&c->rows, &c->cap_rows, c->nr_rows + 1, sizeof(*c->rows)))
		return;
	c->rows[c->nr_rows].lo = lo;
	c->rows[c->nr_rows].hi = hi;
	c->rows[c->nr_rows].rule = rule;
	if (++c->nr_rows - c->nr_sorted == ROW_TAIL)
		row_merge(c);
}

/*
 * The rule libdw's row at elf_va compiles to (NULL: none), kept for the row
 * when it may be (next: row_find's).
 */
static const struct uw_rule *rule_from_libdw(struct uw_cfi *c, uint64_t elf_va, uint64_t next)
{
	static const unsigned nregs[] = { [UW_ARCH_X86_64] = 17, [UW_ARCH_I386] = 9,
					  [UW_ARCH_ARM64] = 32 };
	const struct uw_rule *r;
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr lo, hi;
	bool signal, ranged;

	/*
	 * a .debug_frame row beside an .eh_frame may span addresses that the
	 * .eh_frame answers: kept for its own address only
	 */
	if (c->eh && dwarf_cfi_addrframe(c->eh, elf_va, &fr) == 0)
		ranged = true;
	else if (c->dbg_cfi && dwarf_cfi_addrframe(c->dbg_cfi, elf_va, &fr) == 0)
		ranged = !c->eh;
	else
		return NULL;
	r = compile(c, fr, c->arch < UW_ARCH_UNKNOWN ? nregs[c->arch] : 0);
	/*
	 * From elf_va, not the row's start: libdw's start after a
	 * DW_CFA_restore_state is the remembered row's, earlier than the advance
	 * that began this row. Its end is the next advance.
	 */
	if (r && ranged && dwarf_frame_info(fr, &lo, &hi, &signal) >= 0)
		row_keep(c, elf_va, hi, next, r);
	free(fr);
	return r;
}

/* arm64's rt_sigreturn: mov x8, #139 (__NR_rt_sigreturn); svc #0 */
#define A64_MOV_X8_SIGRETURN 0xd2801168u
#define A64_SVC_0 0xd4000001u

/* The little-endian instruction word at ELF address va of an executable segment. */
static bool code_word(const struct uw_cfi *c, uint64_t va, uint32_t *out)
{
	size_t size;
	const unsigned char *raw = (const unsigned char *)elf_rawfile(c->elf, &size);

	for (size_t i = 0; raw && i < c->nr_segs; i++) {
		const struct elfseg *sg = &c->segs[i];
		uint64_t off;

		if (!sg->exec || va < sg->vaddr || va - sg->vaddr >= sg->filesz || sg->filesz - (va - sg->vaddr) < 4)
			continue;
		off = sg->off + (va - sg->vaddr);
		if (off > size || size - off < 4)
			return false;
		*out = (uint32_t)raw[off] | (uint32_t)raw[off + 1] << 8 | (uint32_t)raw[off + 2] << 16 |
		       (uint32_t)raw[off + 3] << 24;
		return true;
	}
	return false;
}

/*
 * arm64's signal trampoline when no CFI describes it: the vDSO of
 * Debian's 6.1 kernel has no .eh_frame, and without a rule the walk would
 * follow the kernel's frame record, the interrupted LR, and lose the
 * interrupted function. Recognized by its two instructions, as libunwind
 * and gdb do, from the nop before it (a return address there is looked up
 * at RA - 1) to the svc's return; the rule only says "signal frame": the
 * walk reads the rt_sigframe.
 */
static const struct uw_rule *sigreturn_rule(const struct uw_cfi *c, uint64_t elf_va)
{
	static const struct uw_rule sig = { .signal = true, .cfa_reg = 31, .ra = 30 };
	uint64_t w = elf_va & ~(uint64_t)3;
	uint32_t a, b;

	if (c->arch != UW_ARCH_ARM64)
		return NULL;
	for (uint64_t m = w >= 4 ? w - 4 : w; m <= w + 4; m += 4)
		if (code_word(c, m, &a) && a == A64_MOV_X8_SIGRETURN && code_word(c, m + 4, &b) &&
		    b == A64_SVC_0 && elf_va + 4 >= m && elf_va < m + 8)
			return &sig;
	return NULL;
}

const struct uw_rule *uw_cfi_rule(struct uw_cfi *c, uint64_t elf_va)
{
	uint64_t *v = hmap_get(&c->rules, elf_va);
	const struct cfi_row *row;
	const struct uw_rule *r;
	uint64_t next = UINT64_MAX;

	if (v)
		return *v == NO_RULE ? NULL : (const struct uw_rule *)(uintptr_t)*v;
	row = row_find(c, elf_va, &next);
	r = row ? row->rule : rule_from_libdw(c, elf_va, next);
	if (!r)
		r = sigreturn_rule(c, elf_va);
	/* a failed insert only means the address is looked up again next time */
	(void)hmap_put(&c->rules, elf_va, r ? (uint64_t)(uintptr_t)r : NO_RULE);
	return r;
}

/* arm64's link register, DWARF x30: where BL leaves the return address */
#define ARM64_LR 30

bool uw_rule_ra_in_lr(enum uw_arch arch, const struct uw_rule *r)
{
	if (arch != UW_ARCH_ARM64)
		return false;
	for (uint8_t i = 0; i < r->nr; i++)
		if (r->regs[i].reg == r->ra)
			return r->regs[i].how == UW_REG && r->regs[i].src == ARM64_LR;
	/* no rule for the RA column: it keeps this frame's value (libdw's same value) */
	return r->ra == ARM64_LR;
}
