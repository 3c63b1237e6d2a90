/*
 * DWARF line tables (.debug_line), versions 2 to 5 (DWARF 5, section 6.2).
 *
 * Byte layout of one table at its offset (N = 4, or 8 after the 64-bit
 * escape 0xffffffff; "ul"/"sl" = unsigned/signed LEB128):
 *
 *   unit_length        u32 (or 0xffffffff + u64): bytes after this field
 *   version            u16: 2, 3, 4 or 5
 *   [v5] address_size  u8,  segment_selector_size u8
 *   header_length      uN: bytes from after this field to the program
 *   min_inst_length    u8
 *   [v4+] max_ops_per_inst u8 (1 on every non-VLIW target)
 *   default_is_stmt    u8,  line_base s8,  line_range u8,  opcode_base u8
 *   standard_opcode_lengths  u8 x (opcode_base - 1): operands (ul) of each
 *   [v2-4] include_directories: strings, ended by an empty one;
 *          file_names: (string name, ul dir, ul mtime, ul length)...,
 *          ended by an empty name; file 0 is libdw's "???"
 *   [v5]   u8 count, (ul content type, ul form) x count   directory format
 *          ul count, directories (values in that format)
 *          u8 count, (ul content type, ul form) x count   file name format
 *          ul count, files (DW_LNCT_path, DW_LNCT_directory_index, ...)
 *   program: opcodes to the end of the unit
 *     0, ul len, u8 extended op, operands   (1 end_sequence, 2 set_address,
 *                                            3 define_file, 4 discriminator)
 *     1 .. opcode_base-1                    standard opcodes
 *     opcode_base .. 255                    special: advance address and
 *                                           line together, emit a row
 *
 * Rows are ordered and looked up as libdw 0.188 orders and looks them up
 * (see dwline.h); where its decoding would fail or differ this decoder gives
 * up instead, so the caller's fallback to libdw answers the same.
 */
#include "symbolize/dwline.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"

enum {
	LNS_copy = 1,
	LNS_advance_pc = 2,
	LNS_advance_line = 3,
	LNS_set_file = 4,
	LNS_set_column = 5,
	LNS_negate_stmt = 6,
	LNS_set_basic_block = 7,
	LNS_const_add_pc = 8,
	LNS_fixed_advance_pc = 9,
	LNE_end_sequence = 1,
	LNE_set_address = 2,
	LNE_define_file = 3,
	LNE_set_discriminator = 4,
	LNCT_path = 1,
	LNCT_directory_index = 2,
	FORM_block = 0x09,
	FORM_data1 = 0x0b,
	FORM_data2 = 0x05,
	FORM_data4 = 0x06,
	FORM_data8 = 0x07,
	FORM_data16 = 0x1e,
	FORM_string = 0x08,
	FORM_strp = 0x0e,
	FORM_udata = 0x0f,
	FORM_line_strp = 0x1f,
};

struct dir {
	const char *name; /* NULL: no directory (no DW_AT_comp_dir) */
};

struct lbuild {
	struct dwline_table *t;
	size_t cap_rows, cap_files;
	struct dir *dirs;
	size_t nr_dirs;
};

void dwline_release(struct dwline_table *t)
{
	for (size_t i = 0; i < t->nr_files; i++)
		free(t->files[i]);
	free(t->files);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/*
 * libdw's name for a file: as is when absolute or without a directory, else
 * dir/name; diridx UINT64_MAX: as is (libdw's file 0 "???" before DWARF 5).
 */
static bool add_file(struct lbuild *b, const char *name, uint64_t diridx)
{
	struct dwline_table *t = b->t;
	const char *dir;
	size_t nl = strlen(name), dl;
	char *s;

	if (diridx != UINT64_MAX && diridx >= b->nr_dirs)
		return false;
	dir = diridx == UINT64_MAX ? NULL : b->dirs[diridx].name;
	if (t->nr_files == b->cap_files) {
		size_t nc = b->cap_files ? b->cap_files * 2 : 16;
		char **p = realloc(t->files, nc * sizeof(*p));

		if (!p)
			return false;
		t->files = p;
		b->cap_files = nc;
	}
	if (name[0] == '/' || !dir || diridx == UINT64_MAX) {
		s = malloc(nl + 1);
		if (!s)
			return false;
		memcpy(s, name, nl + 1);
	} else {
		dl = strlen(dir);
		s = malloc(dl + 1 + nl + 1);
		if (!s)
			return false;
		memcpy(s, dir, dl);
		s[dl] = '/';
		memcpy(s + dl + 1, name, nl + 1);
	}
	t->files[t->nr_files++] = s;
	return true;
}

static bool add_dir(struct lbuild *b, size_t *cap, const char *name)
{
	if (b->nr_dirs == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct dir *p = realloc(b->dirs, nc * sizeof(*p));

		if (!p)
			return false;
		b->dirs = p;
		*cap = nc;
	}
	b->dirs[b->nr_dirs++].name = name;
	return true;
}

/* One value of a DWARF 5 directory/file entry; a string (or NULL) in *str, a number in *num. */
static bool read_value(struct cur *c, uint64_t form, unsigned offsz, const struct dwline_sections *s,
		       const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case FORM_string:
		*str = cur_cstr(c, NULL);
		return *str != NULL;
	case FORM_strp:
	case FORM_line_strp: {
		uint64_t o = offsz == 8 ? cur_u64(c) : cur_u32(c);
		const uint8_t *sec = form == FORM_strp ? s->str : s->line_str;
		size_t len = form == FORM_strp ? s->str_len : s->line_str_len;

		if (!cur_ok(c) || !sec || o >= len || !memchr(sec + o, 0, len - (size_t)o))
			return false;
		*str = (const char *)sec + o;
		return true;
	}
	case FORM_udata:
		*num = cur_uleb128(c);
		break;
	case FORM_data1:
		*num = cur_u8(c);
		break;
	case FORM_data2:
		*num = cur_u16(c);
		break;
	case FORM_data4:
		*num = cur_u32(c);
		break;
	case FORM_data8:
		*num = cur_u64(c);
		break;
	case FORM_data16:
		cur_skip(c, 16);
		break;
	case FORM_block: {
		uint64_t n = cur_uleb128(c);

		if (!cur_ok(c) || n > cur_remaining(c))
			return false;
		cur_skip(c, (size_t)n);
		break;
	}
	default:
		return false; /* strx and others: libdw decodes them, we do not */
	}
	return cur_ok(c);
}

/* DWARF 5 directory or file table: count entries, each in the given format. */
static bool read_v5_entries(struct cur *c, unsigned offsz, const struct dwline_sections *s,
			    struct lbuild *b, bool files, size_t *cap_dirs)
{
	uint64_t fmt[32][2], n;
	uint8_t nfmt = cur_u8(c);
	bool has_path = false;

	if (nfmt > 32)
		return false;
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[i][0] = cur_uleb128(c);
		fmt[i][1] = cur_uleb128(c);
		has_path |= fmt[i][0] == LNCT_path;
	}
	n = cur_uleb128(c);
	if (!cur_ok(c) || (n && !has_path) || n > cur_remaining(c))
		return false;
	for (uint64_t e = 0; e < n; e++) {
		const char *path = NULL;
		uint64_t diridx = 0;

		for (unsigned i = 0; i < nfmt; i++) {
			const char *str;
			uint64_t num;

			if (!read_value(c, fmt[i][1], offsz, s, &str, &num))
				return false;
			if (fmt[i][0] == LNCT_path) {
				if (!str)
					return false;
				path = str;
			} else if (fmt[i][0] == LNCT_directory_index) {
				if (str)
					return false;
				diridx = num;
			}
		}
		if (!path)
			return false;
		if (files ? !add_file(b, path, diridx) : !add_dir(b, cap_dirs, path))
			return false;
	}
	return true;
}

static bool add_row(struct lbuild *b, uint64_t addr, uint64_t file, int64_t line, uint64_t col,
		    bool end)
{
	struct dwline_table *t = b->t;
	struct dwline_row *r;

	/* libdw keeps these in narrower fields and rejects the table otherwise; files: ours */
	if (file > 0x7fff || line < INT_MIN || line > INT_MAX || col > USHRT_MAX)
		return false;
	if (t->nr_rows == b->cap_rows) {
		size_t nc = b->cap_rows ? b->cap_rows + b->cap_rows / 2 : 1024;
		struct dwline_row *p = realloc(t->rows, nc * sizeof(*p));

		if (!p)
			return false;
		t->rows = p;
		b->cap_rows = nc;
	}
	r = &t->rows[t->nr_rows++];
	r->addr = addr;
	r->file = (uint16_t)(file & 0x7fff);
	r->line = (int32_t)line;
	r->column = (uint16_t)col;
	r->end_sequence = end ? 1u : 0u;
	return true;
}

/* Runs the line program; rows in program order. */
static bool run_program(struct cur *c, struct lbuild *b, uint8_t addr_size, uint8_t min_inst,
			int8_t line_base, uint8_t line_range, uint8_t opcode_base, const uint8_t *std_len)
{
	uint64_t addr = 0, file = 1, col = 0;
	int64_t line = 1;

	while (cur_ok(c) && cur_remaining(c)) {
		uint8_t op = cur_u8(c);

		if (op >= opcode_base) {
			unsigned adj = (unsigned)(op - opcode_base);

			addr += (uint64_t)min_inst * (adj / line_range);
			line += line_base + (int)(adj % line_range);
			if (!add_row(b, addr, file, line, col, false))
				return false;
			continue;
		}
		switch (op) {
		case 0: {
			uint64_t len = cur_uleb128(c);
			struct cur e;
			uint8_t sub;

			if (!cur_ok(c) || len == 0 || len > cur_remaining(c))
				return false;
			e = cur_sub(c, (size_t)len);
			sub = cur_u8(&e);
			switch (sub) {
			case LNE_end_sequence:
				if (!add_row(b, addr, file, line, col, true))
					return false;
				addr = 0;
				file = 1;
				line = 1;
				col = 0;
				break;
			case LNE_set_address:
				if (cur_remaining(&e) != addr_size)
					return false;
				addr = addr_size == 8 ? cur_u64(&e) : cur_u32(&e);
				break;
			case LNE_define_file: {
				const char *name = cur_cstr(&e, NULL);
				uint64_t diridx = cur_uleb128(&e);

				cur_uleb128(&e);
				cur_uleb128(&e);
				if (!name || !cur_ok(&e) || cur_remaining(&e) || !add_file(b, name, diridx))
					return false;
				break;
			}
			case LNE_set_discriminator:
				cur_uleb128(&e);
				if (cur_remaining(&e))
					return false;
				break;
			default:
				break; /* unknown: its length skips it */
			}
			if (!cur_ok(&e))
				return false;
			break;
		}
		case LNS_copy:
			if (!add_row(b, addr, file, line, col, false))
				return false;
			break;
		case LNS_advance_pc:
			addr += (uint64_t)min_inst * cur_uleb128(c);
			break;
		case LNS_advance_line: {
			int64_t d = cur_sleb128(c);

			/* keeps line within int64; a table out of int range is libdw's to judge */
			if (d > (int64_t)UINT_MAX || d < -(int64_t)UINT_MAX)
				return false;
			line += d;
			break;
		}
		case LNS_set_file:
			file = cur_uleb128(c);
			break;
		case LNS_set_column:
			col = cur_uleb128(c);
			break;
		case LNS_negate_stmt:
		case LNS_set_basic_block:
			break;
		case LNS_const_add_pc:
			addr += (uint64_t)min_inst * ((255u - opcode_base) / line_range);
			break;
		case LNS_fixed_advance_pc:
			addr += cur_u16(c);
			break;
		default:
			/* other standard opcodes (prologue_end, isa, ...): skip their operands */
			for (unsigned i = 0; i < std_len[op - 1]; i++)
				cur_uleb128(c);
			break;
		}
		if (line > INT_MAX || line < INT_MIN)
			return false;
	}
	return cur_ok(c);
}

/* libdw's order: address, then an end_sequence row before others, then program order. */
struct prow {
	struct dwline_row r;
	size_t idx;
};

static int prow_cmp(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->r.addr != y->r.addr)
		return x->r.addr < y->r.addr ? -1 : 1;
	if (x->r.end_sequence != y->r.end_sequence)
		return x->r.end_sequence ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Does row a (program index ia) come before b (ib) in libdw's order? */
static bool before(const struct dwline_row *a, size_t ia, const struct dwline_row *b, size_t ib)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (a->end_sequence != b->end_sequence)
		return a->end_sequence;
	return ia < ib;
}

_Static_assert(sizeof(struct dwline_row) == 16, "dwline rows are meant to take 16 bytes");

struct seq {
	size_t first, n; /* rows [first, first + n) in program order */
};

/*
 * Row positions stand for program order throughout: a sequence is sorted
 * once, from program order, so within it equal rows keep program order by
 * position, and sequences never move before the final copy.
 */

/* Sorts rows[first, first + n), still in program order, into libdw's order. */
static bool sort_slice(struct dwline_row *rows, size_t first, size_t n)
{
	struct prow *p = malloc(n * sizeof(*p));

	if (!p)
		return false;
	for (size_t i = 0; i < n; i++) {
		p[i].r = rows[first + i];
		p[i].idx = first + i;
	}
	qsort(p, n, sizeof(*p), prow_cmp);
	for (size_t i = 0; i < n; i++)
		rows[first + i] = p[i].r;
	free(p);
	return true;
}

static bool slice_sorted(const struct dwline_row *rows, size_t first, size_t n)
{
	for (size_t i = first + 1; i < first + n; i++)
		if (!before(&rows[i - 1], i - 1, &rows[i], i))
			return false;
	return true;
}

/*
 * Puts the rows in libdw's order (address, end-of-sequence rows first,
 * program order) without sorting every row: a sequence is an address-ordered
 * run (one out of order, such as an empty sequence whose end row shares the
 * address of its only row, is sorted alone); sequences are ordered by their
 * first row, and only sequences whose ranges overlap are merged by a sort.
 */
static bool order_rows(struct dwline_table *t)
{
	size_t n = t->nr_rows, nseq = 0, cap = 0, start = 0, k = 0;
	struct seq *seqs = NULL, *ord = NULL;
	struct prow *keys = NULL;
	struct dwline_row *rows = t->rows, *out = NULL;
	bool ok = false;

	if (slice_sorted(rows, 0, n))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].end_sequence && i + 1 < n)
			continue;
		if (nseq == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct seq *q = realloc(seqs, nc * sizeof(*q));

			if (!q)
				goto done;
			seqs = q;
			cap = nc;
		}
		seqs[nseq].first = start;
		seqs[nseq++].n = i + 1 - start;
		start = i + 1;
	}
	for (size_t q = 0; q < nseq; q++)
		if (!slice_sorted(rows, seqs[q].first, seqs[q].n) &&
		    !sort_slice(rows, seqs[q].first, seqs[q].n))
			goto done;
	/* the usual case: one short sequence was out of order, and now all are in place */
	if (slice_sorted(rows, 0, n)) {
		ok = true;
		goto done;
	}
	/* sequences by their first (now smallest) row */
	keys = malloc(nseq * sizeof(*keys));
	ord = malloc(nseq * sizeof(*ord));
	out = malloc(n * sizeof(*out));
	if (!keys || !ord || !out)
		goto done;
	for (size_t q = 0; q < nseq; q++) {
		keys[q].r = rows[seqs[q].first];
		keys[q].idx = seqs[q].first;
	}
	qsort(keys, nseq, sizeof(*keys), prow_cmp);
	for (size_t q = 0; q < nseq; q++) {
		/* the sequence starting at keys[q].idx (seqs are in position order) */
		size_t lo = 0, hi = nseq;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (seqs[mid].first <= keys[q].idx)
				lo = mid;
			else
				hi = mid;
		}
		ord[q] = seqs[lo];
	}
	/* groups of overlapping sequences: one alone is copied, several are sorted together */
	for (size_t q = 0; q < nseq;) {
		size_t g = q + 1, gmax = ord[q].first + ord[q].n - 1, at = k;

		while (g < nseq && !before(&rows[gmax], gmax, &rows[ord[g].first], ord[g].first)) {
			size_t last = ord[g].first + ord[g].n - 1;

			if (before(&rows[gmax], gmax, &rows[last], last))
				gmax = last;
			g++;
		}
		for (size_t j = q; j < g; j++) {
			memcpy(&out[k], &rows[ord[j].first], ord[j].n * sizeof(*out));
			k += ord[j].n;
		}
		if (g - q > 1) {
			/* the group's program indexes, in the same order as its rows in out */
			struct prow *p = malloc((k - at) * sizeof(*p));
			size_t m = 0;

			if (!p)
				goto done;
			for (size_t j = q; j < g; j++)
				for (size_t r = 0; r < ord[j].n; r++, m++) {
					p[m].r = rows[ord[j].first + r];
					p[m].idx = ord[j].first + r;
				}
			qsort(p, m, sizeof(*p), prow_cmp);
			for (size_t r = 0; r < m; r++)
				out[at + r] = p[r].r;
			free(p);
		}
		q = g;
	}
	free(t->rows);
	t->rows = out;
	out = NULL;
	ok = true;
done:
	free(out);
	free(seqs);
	free(ord);
	free(keys);
	return ok;
}

static bool decode(struct lbuild *b, const struct dwline_sections *s, uint64_t off,
		   uint8_t cu_addr_size, const char *comp_dir)
{
	struct cur all, c;
	uint64_t unit_len, hdr_len;
	unsigned offsz = 4;
	uint16_t version;
	uint8_t addr_size = cu_addr_size, min_inst, max_ops = 1, opcode_base, line_range;
	int8_t line_base;
	const uint8_t *std_len;
	size_t cap_dirs = 0;
	struct cur prog;

	if (!s->line || off >= s->line_len)
		return false;
	cur_init(&all, s->line, s->line_len, s->swap);
	cur_skip(&all, (size_t)off);
	unit_len = cur_u32(&all);
	if (unit_len == 0xffffffffu) {
		unit_len = cur_u64(&all);
		offsz = 8;
	} else if (unit_len >= 0xfffffff0u) {
		return false;
	}
	if (!cur_ok(&all) || unit_len > cur_remaining(&all))
		return false;
	c = cur_sub(&all, (size_t)unit_len);
	version = cur_u16(&c);
	if (version < 2 || version > 5)
		return false;
	if (version >= 5) {
		addr_size = cur_u8(&c);
		if (cur_u8(&c) != 0) /* segment selectors */
			return false;
	}
	if (addr_size != 4 && addr_size != 8)
		return false;
	hdr_len = offsz == 8 ? cur_u64(&c) : cur_u32(&c);
	if (!cur_ok(&c) || hdr_len > cur_remaining(&c))
		return false;
	prog = c;
	cur_skip(&prog, (size_t)hdr_len); /* prog: the program, after the header */
	c = cur_sub(&c, (size_t)hdr_len);
	min_inst = cur_u8(&c);
	if (version >= 4)
		max_ops = cur_u8(&c);
	cur_u8(&c); /* default_is_stmt: is_stmt is not part of a row here */
	line_base = (int8_t)cur_u8(&c);
	line_range = cur_u8(&c);
	opcode_base = cur_u8(&c);
	if (!cur_ok(&c) || max_ops != 1 || line_range == 0 || opcode_base == 0)
		return false;
	std_len = cur_view(&c, (size_t)opcode_base - 1);
	if (!std_len && opcode_base > 1)
		return false;
	if (version < 5) {
		const char *name;

		/* directory 0 is the compilation directory, file 0 libdw's "???" */
		if (!add_dir(b, &cap_dirs, comp_dir))
			return false;
		while ((name = cur_cstr(&c, NULL)) != NULL && name[0])
			if (!add_dir(b, &cap_dirs, name))
				return false;
		if (!name)
			return false;
		if (!add_file(b, "???", UINT64_MAX))
			return false;
		while ((name = cur_cstr(&c, NULL)) != NULL && name[0]) {
			uint64_t diridx = cur_uleb128(&c);

			cur_uleb128(&c);
			cur_uleb128(&c);
			if (!cur_ok(&c) || !add_file(b, name, diridx))
				return false;
		}
		if (!name)
			return false;
	} else {
		if (!read_v5_entries(&c, offsz, s, b, false, &cap_dirs) ||
		    !read_v5_entries(&c, offsz, s, b, true, &cap_dirs))
			return false;
	}
	if (!cur_ok(&c) || !cur_ok(&prog))
		return false;
	/*
	 * Every row takes at least one byte of the program: reserving that many
	 * rows at once (address space, not memory, until rows are written)
	 * spares the copies of a growing array; the slack is returned below.
	 */
	{
		size_t want = cur_remaining(&prog) + 1;

		if (want > ((size_t)1 << 22))
			want = (size_t)1 << 22;
		b->t->rows = malloc(want * sizeof(*b->t->rows));
		if (!b->t->rows)
			return false;
		b->cap_rows = want;
	}
	if (!run_program(&prog, b, addr_size, min_inst, line_base, line_range, opcode_base, std_len))
		return false;
	if (!b->t->nr_rows) {
		free(b->t->rows);
		b->t->rows = NULL;
		return true;
	}
	if (b->t->nr_rows < b->cap_rows) {
		struct dwline_row *r = realloc(b->t->rows, b->t->nr_rows * sizeof(*r));

		if (r)
			b->t->rows = r;
	}
	if (!order_rows(b->t))
		return false;
	/* libdw marks the highest row as an end of sequence even when the compiler did not */
	b->t->rows[b->t->nr_rows - 1].end_sequence = true;
	return true;
}

bool dwline_decode(struct dwline_table *t, const struct dwline_sections *s, uint64_t off,
		   uint8_t cu_addr_size, const char *comp_dir)
{
	struct lbuild b;
	bool ok;

	memset(t, 0, sizeof(*t));
	memset(&b, 0, sizeof(b));
	b.t = t;
	ok = decode(&b, s, off, cu_addr_size, comp_dir);
	free(b.dirs);
	if (!ok)
		dwline_release(t);
	return ok;
}

const struct dwline_row *dwline_find(const struct dwline_table *t, uint64_t pc)
{
	size_t l = 0, u;
	const struct dwline_row *r;

	if (!t->nr_rows)
		return NULL;
	/* the last row at or below pc (the last of equal ones), as dwarf_getsrc_die */
	u = t->nr_rows - 1;
	while (l < u) {
		size_t idx = u - (u - l) / 2;

		if (pc < t->rows[idx].addr)
			u = idx - 1;
		else
			l = idx;
	}
	r = &t->rows[l];
	return r->addr <= pc && !r->end_sequence ? r : NULL;
}
