/*
 * perf-<pid>.map and jitdump parsers.
 *
 * perf-<pid>.map: text lines, each
 *
 *   START SIZE NAME\n        e.g. "0x00007ffb78ec83a0 0x00000000000001d8 int java.lang.String.hashCode()"
 *                                  "7fef06c757d2 b py::leaf:/tmp/work.py"
 *
 * START and SIZE are hex, "0x" optional, separated by spaces or tabs; NAME
 * runs to the end of the line.
 *
 * jitdump (tools/perf/Documentation/jitdump-specification.txt), all integers
 * in the writer's byte order, which the magic tells:
 *
 *   header   u32 magic 0x4A695444 ("JiTD" read as a big-endian word)
 *            u32 version (1)   u32 total_size (of the header; records start there)
 *            u32 elf_mach      u32 pad1     u32 pid
 *            u64 timestamp     u64 flags (bit 0: arch timestamps; others reserved)
 *   record   u32 id            u32 total_size (of the record, header included)
 *            u64 timestamp
 *            then by id:
 *     0 LOAD         u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size,
 *                    u64 code_index, char name[] NUL-terminated, u8 code[code_size]
 *     1 MOVE         u32 pid, u32 tid, u64 vma, u64 old_code_addr, u64 new_code_addr,
 *                    u64 code_size, u64 code_index
 *     2 DEBUG_INFO   u64 code_addr, u64 nr_entry, then nr_entry times
 *                    { u64 addr, i32 lineno, i32 discrim, char file[] NUL-terminated,
 *                      "\xff" meaning the previous entry's file }
 *                    (precedes the LOAD of the same code_addr)
 *     3 CLOSE        nothing
 *     4 UNWINDING    u64 unwinding_size, u64 eh_frame_hdr_size, u64 mapped_size,
 *                    u8 data[unwinding_size]
 *            and up to 7 bytes of padding: writers align records to 8.
 *
 * Entries are collected in file order and then applied to the table in one
 * sweep (apply_items), so a file of n entries costs O(n log n) however much
 * its entries overlap.
 */
#include "procmap/jitmap.h"

#include "core/vec.h"

#include "core/cursor.h"
#include "core/hex.h"
#include "core/hmap.h"
#include "core/ropen.h"
#include "core/sorted.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JD_MAGIC 0x4A695444u
#define JD_VERSION 1u
#define JD_HEADER_SIZE 40u
#define JD_RECORD_HEADER 16u
#define JD_FLAGS_KNOWN 1u /* JITDUMP_FLAGS_ARCH_TIMESTAMP */
#define JD_DEBUG_ENTRY_MIN 17u /* u64 addr, i32 lineno, i32 discrim, at least a NUL */
#define JD_PADDING_MAX 7u

enum jd_id {
	JD_CODE_LOAD = 0,
	JD_CODE_MOVE = 1,
	JD_CODE_DEBUG_INFO = 2,
	JD_CODE_CLOSE = 3,
	JD_CODE_UNWINDING_INFO = 4,
};

/* An entry read from a file, waiting to be applied. */
struct jit_item {
	uint64_t start, end; /* [start, end) */
	uint64_t code_start;
	const char *name;
	const struct jit_line *lines;
	size_t nr_lines;
	uint64_t kept; /* bytes of it still visible after the sweep */
};

struct jit_items {
	struct jit_item *v;
	size_t n, cap;
};

static bool items_push(struct jit_items *it, const struct jit_item *item)
{
	if (!vec_reserve((void **)&it->v, &it->cap, it->n + 1, sizeof(*it->v)))
		return false;
	it->v[it->n++] = *item;
	return true;
}

void jit_table_init(struct jit_table *t)
{
	t->syms = NULL;
	t->nr = 0;
	strtab_init(&t->strs);
	/* Line tables are copies of file bytes (at most ~1.5x), so the file cap bounds them. */
	arena_init(&t->arena, 0);
}

void jit_table_release(struct jit_table *t)
{
	free(t->syms);
	t->syms = NULL;
	t->nr = 0;
	strtab_release(&t->strs);
	arena_release(&t->arena);
}

static const char *intern(struct jit_table *t, const char *s, size_t len)
{
	uint32_t id = strtab_intern(&t->strs, s, len);

	return id == STRTAB_NONE ? NULL : strtab_get(&t->strs, id);
}

/* ---- applying entries: the latest entry covering an address wins ---- */

struct jit_ord {
	uint64_t start;
	size_t idx; /* index in the combined array = order of application */
};

static int ord_cmp(const void *a, const void *b)
{
	const struct jit_ord *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Max-heap of item indices: a larger index was applied later and wins. */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--(*n)], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * Rebuilds t->syms from its current entries followed by the new ones. A
 * sweep over the entries sorted by start keeps the active ones in a heap by
 * application order; between two consecutive boundaries (a start or the end
 * of the winner) the top of the heap owns the range. Entries that ended are
 * dropped lazily when they reach the top.
 */
static enum conv_err apply_items(struct jit_table *t, const struct jit_items *it,
				 struct jit_stats *st)
{
	size_t n, nh = 0, nout = 0, last = SIZE_MAX, i = 0;
	struct jit_item *all = NULL;
	struct jit_ord *ord = NULL;
	size_t *heap = NULL;
	struct jit_sym *out = NULL, *shrunk;
	uint64_t pos = 0;

	if (!it->n)
		return CONV_E_OK;
	if (it->n > SIZE_MAX / 2 - t->nr)
		return CONV_E_NOMEM;
	n = t->nr + it->n;
	all = calloc(n, sizeof(*all));
	ord = calloc(n, sizeof(*ord));
	heap = calloc(n, sizeof(*heap));
	/* each emitted piece ends at an entry's end or at an entry's start */
	out = calloc(2 * n, sizeof(*out));
	if (!all || !ord || !heap || !out) {
		free(all);
		free(ord);
		free(heap);
		free(out);
		return CONV_E_NOMEM;
	}
	for (size_t k = 0; k < t->nr; k++) {
		const struct jit_sym *s = &t->syms[k];

		all[k].start = s->start;
		all[k].end = s->start + s->size;
		all[k].code_start = s->code_start;
		all[k].name = s->name;
		all[k].lines = s->lines;
		all[k].nr_lines = s->nr_lines;
	}
	memcpy(all + t->nr, it->v, it->n * sizeof(*all));
	for (size_t k = 0; k < n; k++) {
		all[k].kept = 0;
		ord[k].start = all[k].start;
		ord[k].idx = k;
	}
	qsort(ord, n, sizeof(*ord), ord_cmp);

	while (i < n || nh) {
		size_t w;
		uint64_t next;

		if (!nh)
			pos = ord[i].start;
		while (i < n && ord[i].start <= pos)
			heap_push(heap, &nh, ord[i++].idx);
		while (nh && all[heap[0]].end <= pos)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		w = heap[0];
		next = all[w].end;
		if (i < n && ord[i].start < next)
			next = ord[i].start;
		if (last == w && out[nout - 1].start + out[nout - 1].size == pos) {
			out[nout - 1].size += next - pos;
		} else {
			out[nout].start = pos;
			out[nout].size = next - pos;
			out[nout].name = all[w].name;
			out[nout].code_start = all[w].code_start;
			out[nout].lines = all[w].lines;
			out[nout].nr_lines = all[w].nr_lines;
			nout++;
			last = w;
		}
		all[w].kept += next - pos;
		pos = next;
	}
	if (st)
		for (size_t k = 0; k < n; k++)
			if (all[k].kept < all[k].end - all[k].start)
				st->replaced++;
	shrunk = realloc(out, (nout ? nout : 1) * sizeof(*out));
	free(t->syms);
	t->syms = shrunk ? shrunk : out;
	t->nr = nout;
	free(all);
	free(ord);
	free(heap);
	return CONV_E_OK;
}

const struct jit_sym *jit_lookup(const struct jit_table *t, uint64_t addr)
{
	/* first entry starting above addr; the one before it may cover addr */
	size_t lo = sorted_first_above(t->syms, t->nr, sizeof(t->syms[0]), offsetof(struct jit_sym, start),
				       addr);

	if (lo == 0)
		return NULL;
	if (addr - t->syms[lo - 1].start < t->syms[lo - 1].size)
		return &t->syms[lo - 1];
	return NULL;
}

const struct jit_line *jit_lookup_line(const struct jit_sym *s, uint64_t addr)
{
	size_t lo;
	uint64_t off;

	if (!s || !s->nr_lines || addr < s->code_start)
		return NULL;
	off = addr - s->code_start;
	lo = sorted_first_above(s->lines, s->nr_lines, sizeof(s->lines[0]),
				offsetof(struct jit_line, offset), off);
	return lo ? &s->lines[lo - 1] : NULL;
}

/* Adds one file's counts to the caller's. */
static void stats_add(struct jit_stats *dst, const struct jit_stats *src, bool dump)
{
	if (!dst)
		return;
	if (!dst->map_first_malformed)
		dst->map_first_malformed = src->map_first_malformed;
	if (!dst->first_bad_offset)
		dst->first_bad_offset = src->first_bad_offset;
	if (!dst->truncated_at)
		dst->truncated_at = src->truncated_at;
	if (dump) {
		dst->dump_pid = src->dump_pid;
		dst->dump_elf_mach = src->dump_elf_mach;
		dst->dump_swapped = src->dump_swapped;
	}
	dst->map_entries += src->map_entries;
	dst->map_malformed += src->map_malformed;
	dst->records += src->records;
	dst->loads += src->loads;
	dst->moves += src->moves;
	dst->moves_unmatched += src->moves_unmatched;
	dst->debug_infos += src->debug_infos;
	dst->debug_entries += src->debug_entries;
	dst->debug_entries_dropped += src->debug_entries_dropped;
	dst->debug_orphans += src->debug_orphans;
	dst->unwinding += src->unwinding;
	dst->closes += src->closes;
	dst->unknown += src->unknown;
	dst->bad_records += src->bad_records;
	dst->empty += src->empty;
	dst->replaced += src->replaced;
}

/* ---- perf-<pid>.map ---- */

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Reads hex digits (after an optional 0x) that must be followed by a blank. */
static bool map_hex_field(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	bool any = false;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++) {
		int d = hex_digit(*p);

		if (d < 0)
			break;
		if (v >> 60)
			return false; /* a 17th significant digit */
		v = v << 4 | (uint64_t)d;
		any = true;
	}
	if (!any || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	*pp = p;
	*out = v;
	return true;
}

enum map_line { MAP_ENTRY, MAP_BLANK, MAP_MALFORMED };

static enum map_line map_parse_line(const char *p, const char *end, struct jit_item *item,
				    const char **name, size_t *name_len)
{
	const char *q = p;
	uint64_t start, size;

	if (end > p && end[-1] == '\r')
		end--;
	while (q < end && is_blank(*q))
		q++;
	if (q == end)
		return MAP_BLANK;
	if (memchr(p, '\0', (size_t)(end - p)))
		return MAP_MALFORMED;
	if (!map_hex_field(&q, end, &start) || !map_hex_field(&q, end, &size) || q == end)
		return MAP_MALFORMED;
	if (size > UINT64_MAX - start || (size_t)(end - q) > UINT32_MAX - 1)
		return MAP_MALFORMED;
	item->start = start;
	item->end = start + size;
	item->code_start = start;
	*name = q;
	*name_len = (size_t)(end - q);
	return MAP_ENTRY;
}

enum conv_err jit_parse_perf_map(struct jit_table *t, const char *text, size_t len,
				 struct jit_stats *st)
{
	struct jit_stats s = { 0 };
	struct jit_items it = { 0 };
	const char *p = text, *end = text + len;
	uint64_t lineno = 0;
	enum conv_err err;

	if (!text || !len)
		return CONV_E_OK;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct jit_item item = { 0 };
		const char *name;
		size_t name_len;

		lineno++;
		switch (map_parse_line(p, eol, &item, &name, &name_len)) {
		case MAP_BLANK:
			break;
		case MAP_MALFORMED:
			s.map_malformed++;
			if (!s.map_first_malformed)
				s.map_first_malformed = lineno;
			break;
		case MAP_ENTRY:
			if (item.end == item.start) {
				s.empty++;
				break;
			}
			item.name = intern(t, name, name_len);
			if (!item.name || !items_push(&it, &item)) {
				free(it.v);
				return CONV_E_NOMEM;
			}
			s.map_entries++;
			break;
		}
		p = nl ? nl + 1 : end;
	}
	err = apply_items(t, &it, &s);
	free(it.v);
	if (err == CONV_E_OK)
		stats_add(st, &s, false);
	return err;
}

/* ---- jitdump ---- */

/* A line entry of a DEBUG_INFO record, waiting for its LOAD. */
struct jd_line {
	uint64_t addr;
	int32_t line, discrim;
	const char *file;
	size_t idx; /* order in the record, to keep the sort stable */
};

struct jd_state {
	struct jit_table *t;
	struct jit_stats st;
	struct jit_items items;
	struct hmap by_index; /* code_index -> index in items of its latest load */
	struct jd_line *pend;
	size_t nr_pend, cap_pend;
	bool pending; /* pend holds the lines of a DEBUG_INFO for pend_addr */
	uint64_t pend_addr;
};

static void jd_bad(struct jd_state *s, uint64_t off)
{
	s->st.bad_records++;
	if (!s->st.first_bad_offset)
		s->st.first_bad_offset = off;
}

/* Reads a NUL-terminated string and moves past the NUL; NULL (and err) without one. */
static const char *jd_str(struct cur *c, size_t *len)
{
	const uint8_t *p, *nul;

	if (!cur_ok(c) || !cur_remaining(c)) {
		cur_fail(c);
		return NULL;
	}
	p = c->base + c->pos;
	nul = memchr(p, 0, cur_remaining(c));
	if (!nul) {
		cur_fail(c);
		return NULL;
	}
	*len = (size_t)(nul - p);
	cur_skip(c, *len + 1);
	return (const char *)p;
}

static int jd_line_cmp(const void *a, const void *b)
{
	const struct jd_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Gives the pending lines to a load at code_addr (or drops them); false when out of memory. */
static bool jd_take_lines(struct jd_state *s, uint64_t code_addr, bool keep,
			  const struct jit_line **lines, size_t *nr)
{
	struct jit_line *v;
	size_t k = 0;

	*lines = NULL;
	*nr = 0;
	if (!s->pending)
		return true;
	s->pending = false;
	if (!keep || s->pend_addr != code_addr) {
		s->st.debug_orphans++;
		return true;
	}
	s->st.debug_infos++;
	qsort(s->pend, s->nr_pend, sizeof(*s->pend), jd_line_cmp);
	v = arena_alloc_array(&s->t->arena, s->nr_pend ? s->nr_pend : 1, sizeof(*v));
	if (!v)
		return false;
	for (size_t i = 0; i < s->nr_pend; i++) {
		const struct jd_line *l = &s->pend[i];

		if (l->addr < code_addr) {
			s->st.debug_entries_dropped++;
			continue;
		}
		v[k].offset = l->addr - code_addr;
		v[k].line = l->line;
		v[k].discrim = l->discrim;
		v[k].file = l->file;
		k++;
	}
	s->st.debug_entries += k;
	if (k) {
		*lines = v;
		*nr = k;
	}
	return true;
}

static enum conv_err jd_load(struct jd_state *s, struct cur *c, uint64_t off)
{
	struct jit_item item = { 0 };
	uint64_t addr, size, index;
	const char *name;
	size_t name_len;

	cur_skip(c, 4 + 4 + 8); /* pid, tid, vma (code_addr is what perf maps) */
	addr = cur_u64(c);
	size = cur_u64(c);
	index = cur_u64(c);
	name = jd_str(c, &name_len);
	if (!name || size > cur_remaining(c) || size > UINT64_MAX - addr) {
		jd_bad(s, off);
		return CONV_E_OK;
	}
	s->st.loads++;
	item.start = item.code_start = addr;
	item.end = addr + size;
	item.name = intern(s->t, name, name_len);
	if (!item.name || !jd_take_lines(s, addr, size != 0, &item.lines, &item.nr_lines))
		return CONV_E_NOMEM;
	if (!size) {
		s->st.empty++;
		return CONV_E_OK;
	}
	if (!items_push(&s->items, &item) || !hmap_put(&s->by_index, index, s->items.n - 1))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

static enum conv_err jd_move(struct jd_state *s, struct cur *c, uint64_t off)
{
	struct jit_item item;
	uint64_t naddr, size, index, *from;

	cur_skip(c, 4 + 4 + 8 + 8); /* pid, tid, vma, old_code_addr */
	naddr = cur_u64(c);
	size = cur_u64(c);
	index = cur_u64(c);
	if (!cur_ok(c) || size > UINT64_MAX - naddr) {
		jd_bad(s, off);
		return CONV_E_OK;
	}
	from = hmap_get(&s->by_index, index);
	if (!from) {
		s->st.moves_unmatched++;
		return CONV_E_OK;
	}
	s->st.moves++;
	if (!size) {
		s->st.empty++;
		return CONV_E_OK;
	}
	/* The old range keeps the name: samples taken before the move still land there. */
	item = s->items.v[*from];
	item.start = item.code_start = naddr;
	item.end = naddr + size;
	if (!items_push(&s->items, &item) || !hmap_put(&s->by_index, index, s->items.n - 1))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

static enum conv_err jd_debug_info(struct jd_state *s, struct cur *c, uint64_t off)
{
	struct cur walk;
	uint64_t code_addr, nr;
	const char *file = "";
	size_t len;

	code_addr = cur_u64(c);
	nr = cur_u64(c);
	/* the count is checked against the bytes it needs before anything is allocated */
	if (!cur_ok(c) || nr > cur_remaining(c) / JD_DEBUG_ENTRY_MIN) {
		jd_bad(s, off);
		return CONV_E_OK;
	}
	/*
	 * Walk first, keep later: entries must end within the record's padding.
	 * More left over means the entries are not what the spec says (Node 20's
	 * V8 writes some script names with NULs inside), and the lines would be
	 * garbage.
	 */
	walk = *c;
	for (uint64_t i = 0; i < nr && cur_ok(&walk); i++) {
		cur_skip(&walk, 16);
		(void)jd_str(&walk, &len);
	}
	if (!cur_ok(&walk) || cur_remaining(&walk) > JD_PADDING_MAX) {
		jd_bad(s, off);
		return CONV_E_OK;
	}
	if (s->pending)
		s->st.debug_orphans++;
	s->pending = false;
	s->nr_pend = 0;
	if (!vec_reserve((void **)&s->pend, &s->cap_pend, (size_t)nr, sizeof(*s->pend)))
		return CONV_E_NOMEM;
	for (size_t i = 0; i < (size_t)nr; i++) {
		struct jd_line *l = &s->pend[i];
		const char *name;

		l->addr = cur_u64(c);
		l->line = (int32_t)cur_u32(c);
		l->discrim = (int32_t)cur_u32(c);
		l->idx = i;
		name = jd_str(c, &len);
		if (!name)
			return CONV_E_FORMAT; /* cannot happen: the walk passed */
		if (!(len == 1 && (unsigned char)name[0] == 0xff)) {
			file = intern(s->t, name, len);
			if (!file)
				return CONV_E_NOMEM;
		}
		l->file = file;
	}
	s->nr_pend = (size_t)nr;
	s->pending = true;
	s->pend_addr = code_addr;
	return CONV_E_OK;
}

static enum conv_err jd_unwinding(struct jd_state *s, struct cur *c, uint64_t off)
{
	uint64_t usize = cur_u64(c), hdr_size = cur_u64(c);

	(void)cur_u64(c); /* mapped_size */
	if (!cur_ok(c) || usize > cur_remaining(c) || hdr_size > usize)
		jd_bad(s, off);
	else
		s->st.unwinding++;
	return CONV_E_OK;
}

static enum conv_err jd_record(struct jd_state *s, uint32_t id, struct cur *c, uint64_t off)
{
	switch (id) {
	case JD_CODE_LOAD:
		return jd_load(s, c, off);
	case JD_CODE_MOVE:
		return jd_move(s, c, off);
	case JD_CODE_DEBUG_INFO:
		return jd_debug_info(s, c, off);
	case JD_CODE_UNWINDING_INFO:
		return jd_unwinding(s, c, off);
	case JD_CODE_CLOSE:
		s->st.closes++;
		return CONV_E_OK;
	default:
		s->st.unknown++;
		return CONV_E_OK;
	}
}

/* Checks the header and leaves c at the first record. */
static enum conv_err jd_header(struct cur *c, const uint8_t *data, size_t len, struct jit_stats *st,
			       struct conv_diag *diag)
{
	uint32_t magic, version, hsize;
	uint64_t flags;
	bool swap;

	if (len < 4)
		return conv_fail(diag, CONV_E_TRUNCATED, 0, "jitdump: %zu bytes, no header", len);
	memcpy(&magic, data, 4);
	if (magic == JD_MAGIC)
		swap = false;
	else if (magic == conv_bswap32(JD_MAGIC))
		swap = true;
	else
		return conv_fail(diag, CONV_E_FORMAT, 0, "not a jitdump (magic 0x%08x)", magic);
	cur_init(c, data, len, swap);
	(void)cur_u32(c);
	version = cur_u32(c);
	hsize = cur_u32(c);
	st->dump_elf_mach = cur_u32(c);
	(void)cur_u32(c); /* pad1 */
	st->dump_pid = cur_u32(c);
	(void)cur_u64(c); /* timestamp */
	flags = cur_u64(c);
	st->dump_swapped = swap;
	if (!cur_ok(c))
		return conv_fail(diag, CONV_E_TRUNCATED, 0, "jitdump: header ends after %zu bytes", len);
	if (version != JD_VERSION)
		return conv_fail(diag, CONV_E_UNSUPPORTED, 4, "jitdump version %u (only %u is known)",
				 version, JD_VERSION);
	if (flags & ~(uint64_t)JD_FLAGS_KNOWN)
		return conv_fail(diag, CONV_E_UNSUPPORTED, 32, "jitdump: unknown flags 0x%llx",
				 (unsigned long long)flags);
	if (hsize < JD_HEADER_SIZE)
		return conv_fail(diag, CONV_E_FORMAT, 8, "jitdump: header size %u below %u", hsize,
				 JD_HEADER_SIZE);
	if (hsize > len)
		return conv_fail(diag, CONV_E_TRUNCATED, 8,
				 "jitdump: header of %u bytes, file of %zu", hsize, len);
	cur_skip(c, hsize - JD_HEADER_SIZE); /* fields of later versions */
	return CONV_E_OK;
}

enum conv_err jit_parse_jitdump(struct jit_table *t, const uint8_t *data, size_t len,
				struct jit_stats *st, struct conv_diag *diag)
{
	struct jd_state s;
	struct cur c;
	enum conv_err err, status = CONV_E_OK;

	memset(&s, 0, sizeof(s));
	s.t = t;
	err = jd_header(&c, data, len, &s.st, diag);
	if (err)
		return err;
	hmap_init(&s.by_index);
	while (cur_remaining(&c)) {
		uint64_t off = c.pos;
		uint32_t id, size;
		struct cur rec;

		if (cur_remaining(&c) < JD_RECORD_HEADER) {
			s.st.truncated_at = off;
			status = conv_fail(diag, CONV_E_TRUNCATED, off,
					   "jitdump ends inside a record header at %llu",
					   (unsigned long long)off);
			break;
		}
		id = cur_u32(&c);
		size = cur_u32(&c);
		(void)cur_u64(&c); /* timestamp */
		if (size < JD_RECORD_HEADER) {
			/* without a size there is no next record */
			jd_bad(&s, off);
			status = conv_fail(diag, CONV_E_FORMAT, off,
					   "jitdump record of size %u at %llu", size,
					   (unsigned long long)off);
			break;
		}
		if (size - JD_RECORD_HEADER > cur_remaining(&c)) {
			s.st.truncated_at = off;
			status = conv_fail(diag, CONV_E_TRUNCATED, off,
					   "jitdump ends inside a record of %u bytes at %llu", size,
					   (unsigned long long)off);
			break;
		}
		rec = cur_sub(&c, size - JD_RECORD_HEADER);
		s.st.records++;
		err = jd_record(&s, id, &rec, off);
		if (err)
			goto out;
	}
	if (s.pending)
		s.st.debug_orphans++;
	err = apply_items(t, &s.items, &s.st);
	if (err == CONV_E_OK) {
		stats_add(st, &s.st, true);
		err = status;
	}
out:
	free(s.items.v);
	free(s.pend);
	hmap_release(&s.by_index);
	if (err == CONV_E_NOMEM)
		conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "jitdump: out of memory");
	return err;
}

/* ---- files ---- */

/* Reads a whole regular file of at most JIT_FILE_MAX bytes into *out (malloc'd). */
static enum conv_err read_file(const char *path, unsigned flags, uint8_t **out, size_t *out_len,
			       struct conv_diag *diag)
{
	struct stat sb;
	uint8_t *buf;
	size_t size, got = 0;
	/* only a regular file is opened: a FIFO's open blocks, a device's runs its driver */
	int fd = ropen_regular(path, !(flags & JIT_LOAD_ANY_OWNER));

	if (fd < 0) {
		int e = errno;

		if (e == EINVAL)
			return conv_fail(diag, CONV_E_UNSUPPORTED, UINT64_MAX, "%s: not a regular file",
					 path);
		if (e == ENOENT || e == ENOTDIR)
			return conv_fail(diag, CONV_E_NOTFOUND, UINT64_MAX, "%s: %s", path,
					 strerror(e));
		if (e == ELOOP && !(flags & JIT_LOAD_ANY_OWNER))
			return conv_fail(diag, CONV_E_UNSUPPORTED, UINT64_MAX,
					 "%s: a symbolic link, not followed", path);
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, &sb)) {
		int e = errno;

		close(fd);
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return conv_fail(diag, CONV_E_UNSUPPORTED, UINT64_MAX, "%s: not a regular file", path);
	}
	if (!(flags & JIT_LOAD_ANY_OWNER) && sb.st_uid != 0 && sb.st_uid != geteuid()) {
		close(fd);
		return conv_fail(diag, CONV_E_UNSUPPORTED, UINT64_MAX,
				 "%s: owned by uid %u, neither this user nor root", path,
				 (unsigned)sb.st_uid);
	}
	if ((uint64_t)sb.st_size > JIT_FILE_MAX) {
		close(fd);
		return conv_fail(diag, CONV_E_LIMIT, UINT64_MAX, "%s: %lld bytes, above %zu", path,
				 (long long)sb.st_size, JIT_FILE_MAX);
	}
	size = (size_t)sb.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "%s: out of memory", path);
	}
	/* A runtime may still be appending: read what was there at fstat time. */
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return conv_fail(diag, CONV_E_IO, got, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break; /* it shrank */
		got += (size_t)r;
	}
	close(fd);
	*out = buf;
	*out_len = got;
	return CONV_E_OK;
}

enum conv_err jit_load_perf_map(struct jit_table *t, const char *dir, uint32_t pid, unsigned flags,
				struct jit_stats *st, struct conv_diag *diag)
{
	size_t plen = strlen(dir) + sizeof("/perf-4294967295.map");
	char *path = malloc(plen);
	uint8_t *buf;
	size_t len;
	enum conv_err err;

	if (!path)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	snprintf(path, plen, "%s/perf-%u.map", dir, pid);
	err = read_file(path, flags, &buf, &len, diag);
	if (err == CONV_E_OK) {
		err = jit_parse_perf_map(t, (const char *)buf, len, st);
		if (err)
			conv_fail(diag, err, UINT64_MAX, "%s: %s", path, conv_strerror(err));
		free(buf);
	}
	free(path);
	return err;
}

enum conv_err jit_load_jitdump(struct jit_table *t, const char *path, unsigned flags,
			       struct jit_stats *st, struct conv_diag *diag)
{
	uint8_t *buf;
	size_t len;
	enum conv_err err = read_file(path, flags, &buf, &len, diag);

	if (err)
		return err;
	err = jit_parse_jitdump(t, buf, len, st, diag);
	free(buf);
	return err;
}
