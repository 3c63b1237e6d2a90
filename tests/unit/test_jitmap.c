/*
 * JIT symbol tests: perf-<pid>.map lines, overlap resolution, lookups at
 * range edges, jitdumps built byte by byte in both byte orders (truncated,
 * malformed, hostile counts) and the real files in tests/fixtures/jit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cursor.h"
#include "procmap/jitmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fixtures sit beside tests/unit; CMake may pass the directory instead. */
#ifndef JIT_FIXTURE_DIR
#define JIT_FIXTURE_DIR NULL
#endif

static char fixture_dir[4096];

static const char *fixtures(void)
{
	const char *d = JIT_FIXTURE_DIR;
	const char *f = __FILE__, *slash;

	if (d)
		return d;
	if (!fixture_dir[0]) {
		/* __FILE__ is .../tests/unit/test_jitmap.c */
		slash = strstr(f, "unit/test_jitmap.c");
		assert_non_null(slash);
		snprintf(fixture_dir, sizeof(fixture_dir), "%.*sfixtures/jit", (int)(slash - f), f);
	}
	return fixture_dir;
}

struct seg {
	uint64_t start, size;
	const char *name;
};

static void check_segs(const struct jit_table *t, const struct seg *want, size_t n)
{
	assert_int_equal(t->nr, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(t->syms[i].start, want[i].start);
		assert_int_equal(t->syms[i].size, want[i].size);
		assert_string_equal(t->syms[i].name, want[i].name);
	}
}

static enum conv_err parse_map(struct jit_table *t, const char *text, struct jit_stats *st)
{
	return jit_parse_perf_map(t, text, strlen(text), st);
}

/* ---- perf-<pid>.map ---- */

static void test_map_good_lines(void **state)
{
	static const struct {
		const char *line;
		uint64_t start, size;
		const char *name;
	} cases[] = {
		{ "0x10 0x20 foo", 0x10, 0x20, "foo" },
		{ "10 20 foo\n", 0x10, 0x20, "foo" },
		{ "0X1a 0XA bar", 0x1a, 0xa, "bar" },
		{ "ABCdef 1 mixed case", 0xabcdef, 1, "mixed case" },
		{ "10\t20\tname with\ttab", 0x10, 0x20, "name with\ttab" },
		{ "0x00007ffb78ec83a0 0x00000000000001d8 int java.lang.String.hashCode()",
		  0x7ffb78ec83a0, 0x1d8, "int java.lang.String.hashCode()" },
		{ "7fef06c757d2 b py::leaf:/tmp/jitgen/work.py", 0x7fef06c757d2, 0xb,
		  "py::leaf:/tmp/jitgen/work.py" },
		{ "10 20 two  spaces and trailing ", 0x10, 0x20, "two  spaces and trailing " },
		{ "10 20 crlf\r\n", 0x10, 0x20, "crlf" },
		{ "  10   20   lead", 0x10, 0x20, "lead" },
		{ "0xffffffffffff0000 0xffff top", 0xffffffffffff0000ull, 0xffff, "top" },
		{ "0x000000000000000000010 10 zeros beyond 16 digits", 0x10, 0x10,
		  "zeros beyond 16 digits" },
		{ "10 20 \xc3\xa9t\xc3\xa9 utf-8", 0x10, 0x20, "\xc3\xa9t\xc3\xa9 utf-8" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jit_table t;
		struct jit_stats st = { 0 };

		jit_table_init(&t);
		assert_int_equal(parse_map(&t, cases[i].line, &st), CONV_E_OK);
		assert_int_equal(st.map_entries, 1);
		assert_int_equal(st.map_malformed, 0);
		assert_int_equal(t.nr, 1);
		assert_int_equal(t.syms[0].start, cases[i].start);
		assert_int_equal(t.syms[0].size, cases[i].size);
		assert_int_equal(t.syms[0].code_start, cases[i].start);
		assert_string_equal(t.syms[0].name, cases[i].name);
		assert_null(t.syms[0].lines);
		jit_table_release(&t);
	}
}

static void test_map_malformed_lines(void **state)
{
	static const char *const bad[] = {
		"zz 10 a",                 /* not hex */
		"10 zz a",
		"10 10",                   /* no name */
		"10 10 ",
		"10 10 \t \r",
		"0x 10 a",                 /* prefix without digits */
		"10 0x a",
		"10z 10 a",                /* junk after a number */
		"10 10z a",
		"-10 10 a",                /* strtoull would take these */
		"+10 10 a",
		"1 10000000000000000 a",   /* 17 significant digits */
		"10000000000000000 1 a",
		"ffffffffffffffff 1 wrap", /* end reaches 2^64 */
		"fffffffffffffff0 20 wrap",
		"10",
		"10\n",
	};
	struct jit_table t;
	struct jit_stats st;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&st, 0, sizeof(st));
		jit_table_init(&t);
		assert_int_equal(parse_map(&t, bad[i], &st), CONV_E_OK);
		assert_int_equal(st.map_malformed, 1);
		assert_int_equal(st.map_first_malformed, 1);
		assert_int_equal(st.map_entries, 0);
		assert_int_equal(t.nr, 0);
		jit_table_release(&t);
	}

	/* a NUL inside a line: the name would be cut short */
	memset(&st, 0, sizeof(st));
	jit_table_init(&t);
	assert_int_equal(jit_parse_perf_map(&t, "10 10 a\0b\n20 10 c\n", 18, &st), CONV_E_OK);
	assert_int_equal(st.map_malformed, 1);
	assert_int_equal(st.map_entries, 1);
	assert_string_equal(t.syms[0].name, "c");
	jit_table_release(&t);

	/* mixed: counted, first line number kept, blank lines neither; size 0 is empty, not malformed */
	memset(&st, 0, sizeof(st));
	jit_table_init(&t);
	assert_int_equal(parse_map(&t, "100 10 good\n\nbad line\n  \n200 0 empty\n300 10 also good\n"
					"zz\n400 10 last without newline",
				   &st),
			 CONV_E_OK);
	assert_int_equal(st.map_entries, 3);
	assert_int_equal(st.map_malformed, 2);
	assert_int_equal(st.map_first_malformed, 3);
	assert_int_equal(st.empty, 1);
	assert_int_equal(t.nr, 3);
	assert_string_equal(t.syms[2].name, "last without newline");
	jit_table_release(&t);
}

static void test_map_overlaps(void **state)
{
	static const struct {
		const char *text;
		struct seg want[6];
		size_t n;
		uint64_t replaced;
	} cases[] = {
		/* later inside earlier: earlier split in two */
		{ "100 100 A\n140 20 B\n",
		  { { 0x100, 0x40, "A" }, { 0x140, 0x20, "B" }, { 0x160, 0xa0, "A" } }, 3, 1 },
		/* the same range again */
		{ "100 10 A\n100 10 B\n", { { 0x100, 0x10, "B" } }, 1, 1 },
		/* later covers the front / the back */
		{ "100 20 A\nf0 20 B\n", { { 0xf0, 0x20, "B" }, { 0x110, 0x10, "A" } }, 2, 1 },
		{ "100 20 A\n110 20 B\n", { { 0x100, 0x10, "A" }, { 0x110, 0x20, "B" } }, 2, 1 },
		/* later covers earlier wholly */
		{ "110 10 A\n100 40 B\n", { { 0x100, 0x40, "B" } }, 1, 1 },
		/* adjacent: nothing replaced */
		{ "100 10 A\n110 10 B\n", { { 0x100, 0x10, "A" }, { 0x110, 0x10, "B" } }, 2, 0 },
		/* three layers */
		{ "0 100 A\n10 80 B\n20 60 C\n",
		  { { 0x0, 0x10, "A" }, { 0x10, 0x10, "B" }, { 0x20, 0x60, "C" }, { 0x80, 0x10, "B" },
		    { 0x90, 0x70, "A" } },
		  5, 2 },
		/* an earlier entry starting inside the winner does not split it */
		{ "50 10 X\n0 100 A\n", { { 0x0, 0x100, "A" } }, 1, 1 },
		/* file order is not address order */
		{ "300 10 C\n100 10 A\n200 10 B\n",
		  { { 0x100, 0x10, "A" }, { 0x200, 0x10, "B" }, { 0x300, 0x10, "C" } }, 3, 0 },
		/* a gap between two pieces of the loser */
		{ "0 30 A\n10 10 B\n40 10 C\n",
		  { { 0x0, 0x10, "A" }, { 0x10, 0x10, "B" }, { 0x20, 0x10, "A" }, { 0x40, 0x10, "C" } },
		  4, 1 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jit_table t;
		struct jit_stats st = { 0 };

		jit_table_init(&t);
		assert_int_equal(parse_map(&t, cases[i].text, &st), CONV_E_OK);
		check_segs(&t, cases[i].want, cases[i].n);
		assert_int_equal(st.replaced, cases[i].replaced);
		jit_table_release(&t);
	}
}

/* Random small maps against a model that paints every address in file order. */
static void test_map_overlaps_model(void **state)
{
	uint32_t seed = 12345;
	(void)state;

	for (int round = 0; round < 3000; round++) {
		char text[512], *p = text;
		int owner[80];
		int n;
		struct jit_table t;
		uint64_t prev_end = 0;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (int)(seed >> 16) % 8;
		for (int a = 0; a < 80; a++)
			owner[a] = -1;
		for (int i = 0; i < n; i++) {
			int start, size;

			seed = seed * 1103515245u + 12345u;
			start = (int)(seed >> 16) % 64;
			seed = seed * 1103515245u + 12345u;
			size = (int)(seed >> 16) % 16; /* 0 now and then: covers nothing */
			p += sprintf(p, "%x %x f%d\n", start, size, i);
			for (int a = start; a < start + size; a++)
				owner[a] = i;
		}
		jit_table_init(&t);
		assert_int_equal(jit_parse_perf_map(&t, text, (size_t)(p - text), NULL), CONV_E_OK);
		for (int a = 0; a < 80; a++) {
			const struct jit_sym *s = jit_lookup(&t, (uint64_t)a);
			char want[16];

			if (owner[a] < 0) {
				assert_null(s);
				continue;
			}
			snprintf(want, sizeof(want), "f%d", owner[a]);
			assert_non_null(s);
			assert_string_equal(s->name, want);
		}
		/* pieces are sorted, disjoint and maximal: two neighbours never share a name and touch */
		for (size_t i = 0; i < t.nr; i++) {
			assert_true(t.syms[i].start >= prev_end);
			if (i && t.syms[i].start == prev_end)
				assert_ptr_not_equal(t.syms[i].name, t.syms[i - 1].name);
			prev_end = t.syms[i].start + t.syms[i].size;
		}
		jit_table_release(&t);
	}
}

static void test_map_later_call_wins(void **state)
{
	static const struct seg want[] = {
		{ 0x100, 0x50, "A" }, { 0x150, 0x10, "B" }, { 0x160, 0xa0, "A" }, { 0x300, 0x10, "C" }
	};
	struct jit_table t;
	struct jit_stats st = { 0 };
	const struct jit_sym *s;
	(void)state;

	jit_table_init(&t);
	assert_int_equal(parse_map(&t, "100 100 A\n", &st), CONV_E_OK);
	/* a second file (or a reread) applies after the first */
	assert_int_equal(parse_map(&t, "150 10 B\n300 10 C\n", &st), CONV_E_OK);
	check_segs(&t, want, 4);
	assert_int_equal(st.map_entries, 3);
	assert_int_equal(st.replaced, 1);
	/* the piece after B still knows where A's code began */
	s = jit_lookup(&t, 0x170);
	assert_non_null(s);
	assert_int_equal(s->start, 0x160);
	assert_int_equal(s->code_start, 0x100);
	jit_table_release(&t);
}

static void test_lookup_boundaries(void **state)
{
	static const struct {
		uint64_t addr;
		const char *name; /* NULL: no entry */
	} cases[] = {
		{ 0, NULL },
		{ 0xff, NULL },
		{ 0x100, "A" }, /* start is inside */
		{ 0x10f, "A" },
		{ 0x110, "B" }, /* end is outside: the next one starts there */
		{ 0x11f, "B" },
		{ 0x120, NULL },
		{ 0x1ff, NULL },
		{ 0x200, "C" },
		{ 0x201, NULL },
		{ 0xfffffffffffffff0ull, "top" },
		{ 0xfffffffffffffffeull, "top" },
		{ UINT64_MAX, NULL },
	};
	struct jit_table t;
	(void)state;

	jit_table_init(&t);
	assert_null(jit_lookup(&t, 0x100));
	assert_int_equal(parse_map(&t, "200 1 C\n100 10 A\n110 10 B\nfffffffffffffff0 f top\n", NULL),
			 CONV_E_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct jit_sym *s = jit_lookup(&t, cases[i].addr);

		if (!cases[i].name) {
			assert_null(s);
			continue;
		}
		assert_non_null(s);
		assert_string_equal(s->name, cases[i].name);
	}
	jit_table_release(&t);
}

static void test_empty_inputs(void **state)
{
	struct jit_table t;
	struct jit_stats st = { 0 };
	(void)state;

	jit_table_init(&t);
	assert_int_equal(jit_parse_perf_map(&t, NULL, 0, &st), CONV_E_OK);
	assert_int_equal(jit_parse_perf_map(&t, "", 0, &st), CONV_E_OK);
	assert_int_equal(parse_map(&t, "\n\n  \n\r\n\t\n", &st), CONV_E_OK);
	assert_int_equal(t.nr, 0);
	assert_int_equal(st.map_entries + st.map_malformed + st.empty, 0);
	assert_int_equal(jit_parse_jitdump(&t, NULL, 0, &st, NULL), CONV_E_TRUNCATED);
	assert_int_equal(t.nr, 0);
	jit_table_release(&t);

	/* release leaves a table that can be set up again */
	jit_table_init(&t);
	jit_table_release(&t);
	jit_table_release(&t);
}

/* ---- jitdump builder ---- */

struct jb {
	uint8_t buf[16384];
	size_t len;
	bool swap;
	size_t ends[64]; /* end offset of each record */
	uint32_t ids[64];
	size_t nrec;
};

static void jb_bytes(struct jb *b, const void *p, size_t n)
{
	assert_true(n <= sizeof(b->buf) - b->len);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void jb_u32(struct jb *b, uint32_t v)
{
	if (b->swap)
		v = conv_bswap32(v);
	jb_bytes(b, &v, 4);
}

static void jb_u64(struct jb *b, uint64_t v)
{
	if (b->swap)
		v = conv_bswap64(v);
	jb_bytes(b, &v, 8);
}

static void jb_str(struct jb *b, const char *s)
{
	jb_bytes(b, s, strlen(s) + 1);
}

static void jb_fill(struct jb *b, uint8_t v, size_t n)
{
	assert_true(n <= sizeof(b->buf) - b->len);
	memset(b->buf + b->len, v, n);
	b->len += n;
}

static void jb_header_ex(struct jb *b, bool swap, uint32_t version, uint32_t size, uint64_t flags)
{
	memset(b, 0, sizeof(*b));
	b->swap = swap;
	jb_u32(b, 0x4A695444);
	jb_u32(b, version);
	jb_u32(b, size);
	jb_u32(b, 62);         /* EM_X86_64 */
	jb_u32(b, 0xdeadbeef); /* pad1, as V8 writes it */
	jb_u32(b, 4242);
	jb_u64(b, 123456789);
	jb_u64(b, flags);
	if (size > 40)
		jb_fill(b, 0xee, size - 40);
}

static void jb_header(struct jb *b, bool swap)
{
	jb_header_ex(b, swap, 1, 40, 0);
}

/* Starts a record; its total_size is written by jb_end. */
static size_t jb_begin(struct jb *b, uint32_t id)
{
	size_t at = b->len;

	jb_u32(b, id);
	jb_u32(b, 0);
	jb_u64(b, 1000 + b->nrec);
	return at;
}

/* Pads to 8 as the writers do and sets total_size (or forces one). */
static void jb_end_size(struct jb *b, size_t at, uint32_t id, bool pad, uint32_t force)
{
	uint32_t size;

	if (pad)
		jb_fill(b, 0, (8 - b->len % 8) % 8);
	size = force ? force : (uint32_t)(b->len - at);
	if (b->swap)
		size = conv_bswap32(size);
	memcpy(b->buf + at + 4, &size, 4);
	assert_true(b->nrec < 64);
	b->ids[b->nrec] = id;
	b->ends[b->nrec++] = b->len;
}

static void jb_end(struct jb *b, size_t at, uint32_t id)
{
	jb_end_size(b, at, id, true, 0);
}

/* What load and move records start with: pid, tid, then two addresses. */
static void jb_code_head(struct jb *b, uint32_t pid, uint32_t tid, uint64_t a1, uint64_t a2)
{
	jb_u32(b, pid);
	jb_u32(b, tid);
	jb_u64(b, a1);
	jb_u64(b, a2);
}

/* A debug-info entry's numbers (its file name follows): address, line, discriminator. */
static void jb_dbg_nums(struct jb *b, uint64_t addr, uint32_t line, uint32_t discrim)
{
	jb_u64(b, addr);
	jb_u32(b, line);
	jb_u32(b, discrim);
}

static void jb_load(struct jb *b, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t at = jb_begin(b, 0);

	jb_code_head(b, 4242, 4243, addr, addr);
	jb_u64(b, size);
	jb_u64(b, index);
	jb_str(b, name);
	jb_fill(b, 0xcc, (size_t)size);
	jb_end(b, at, 0);
}

static void jb_move(struct jb *b, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	size_t at = jb_begin(b, 1);

	jb_code_head(b, 4242, 4243, to, from);
	jb_u64(b, to);
	jb_u64(b, size);
	jb_u64(b, index);
	jb_end(b, at, 1);
}

struct dbg_entry {
	uint64_t addr;
	int32_t line, discrim;
	const char *file; /* "\xff" = same as before */
};

static void jb_debug(struct jb *b, uint64_t code_addr, const struct dbg_entry *e, size_t n)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, code_addr);
	jb_u64(b, n);
	for (size_t i = 0; i < n; i++) {
		jb_dbg_nums(b, e[i].addr, (uint32_t)e[i].line, (uint32_t)e[i].discrim);
		jb_str(b, e[i].file);
	}
	jb_end(b, at, 2);
}

static void jb_unwinding(struct jb *b, uint64_t usize)
{
	size_t at = jb_begin(b, 4);

	jb_u64(b, usize);
	jb_u64(b, usize < 20 ? usize : 20);
	jb_u64(b, usize);
	jb_fill(b, 0x1b, (size_t)usize);
	jb_end(b, at, 4);
}

static void jb_empty(struct jb *b, uint32_t id)
{
	size_t at = jb_begin(b, id);

	jb_end(b, at, id);
}

static enum conv_err parse_jb(struct jit_table *t, const struct jb *b, size_t len,
			      struct jit_stats *st, struct conv_diag *d)
{
	return jit_parse_jitdump(t, b->buf, len, st, d);
}

/* A dump with one of everything. */
static void build_full(struct jb *b, bool swap)
{
	static const struct dbg_entry lines[] = {
		{ 0x2030, 12, 0, "b.js" }, /* written out of order on purpose */
		{ 0x2000, 10, 1, "a.js" },
		{ 0x2010, 11, 5, "\xff" },  /* same file as the entry before it */
		{ 0x1ff0, 9, 0, "a.js" },   /* before code_addr: dropped */
	};

	jb_header(b, swap);
	jb_load(b, 0x1000, 0x40, 1, "JS:first");
	jb_debug(b, 0x2000, lines, 4);
	jb_unwinding(b, 24);
	jb_load(b, 0x2000, 0x80, 2, "JS:second with spaces");
	jb_empty(b, 99); /* unknown id */
	jb_empty(b, 3);  /* CLOSE */
}

static void check_full(const struct jit_table *t, const struct jit_stats *st, bool swap)
{
	const struct jit_sym *s;
	const struct jit_line *l;

	assert_int_equal(st->dump_pid, 4242);
	assert_int_equal(st->dump_elf_mach, 62);
	assert_int_equal(st->dump_swapped, swap);
	assert_int_equal(st->records, 6);
	assert_int_equal(st->loads, 2);
	assert_int_equal(st->debug_infos, 1);
	assert_int_equal(st->debug_entries, 3);
	assert_int_equal(st->debug_entries_dropped, 1);
	assert_int_equal(st->unwinding, 1);
	assert_int_equal(st->unknown, 1);
	assert_int_equal(st->closes, 1);
	assert_int_equal(st->bad_records, 0);
	assert_int_equal(st->truncated_at, 0);
	assert_int_equal(t->nr, 2);

	s = jit_lookup(t, 0x103f);
	assert_non_null(s);
	assert_string_equal(s->name, "JS:first");
	assert_null(s->lines);
	assert_null(jit_lookup(t, 0x1040));

	s = jit_lookup(t, 0x2000);
	assert_non_null(s);
	assert_string_equal(s->name, "JS:second with spaces");
	assert_int_equal(s->nr_lines, 3);
	/* sorted by offset */
	assert_int_equal(s->lines[0].offset, 0);
	assert_int_equal(s->lines[1].offset, 0x10);
	assert_int_equal(s->lines[2].offset, 0x30);
	l = jit_lookup_line(s, 0x2000);
	assert_non_null(l);
	assert_int_equal(l->line, 10);
	assert_int_equal(l->discrim, 1);
	assert_string_equal(l->file, "a.js");
	l = jit_lookup_line(s, 0x202f);
	assert_int_equal(l->line, 11);
	assert_string_equal(l->file, "a.js"); /* "\xff" repeated it */
	l = jit_lookup_line(s, 0x207f);
	assert_int_equal(l->line, 12);
	assert_string_equal(l->file, "b.js");
	assert_null(jit_lookup_line(s, 0x1fff));
	assert_null(jit_lookup_line(NULL, 0x2000));
}

static void test_jitdump_both_orders(void **state)
{
	(void)state;

	for (int swap = 0; swap < 2; swap++) {
		struct jb *b = calloc(1, sizeof(*b));
		struct jit_table t;
		struct jit_stats st = { 0 };
		struct conv_diag d = { 0 };

		assert_non_null(b);
		build_full(b, swap);
		jit_table_init(&t);
		assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_OK);
		check_full(&t, &st, swap);
		jit_table_release(&t);
		free(b);
	}
}

static void test_jitdump_truncated(void **state)
{
	struct jb *b = calloc(1, sizeof(*b));
	(void)state;

	assert_non_null(b);
	for (int swap = 0; swap < 2; swap++) {
		build_full(b, swap);
		/* every prefix: what is complete is kept, the rest reported */
		for (size_t len = 0; len <= b->len; len++) {
			struct jit_table t;
			struct jit_stats st = { 0 };
			struct conv_diag d = { 0 };
			size_t complete = 0, loads = 0, last_end = 40;
			bool boundary = len == 40;
			enum conv_err err;

			for (size_t r = 0; r < b->nrec; r++) {
				if (b->ends[r] <= len) {
					complete++;
					loads += b->ids[r] == 0;
					last_end = b->ends[r];
				}
				boundary |= b->ends[r] == len;
			}
			jit_table_init(&t);
			err = parse_jb(&t, b, len, &st, &d);
			if (len < 40) {
				assert_int_equal(err, CONV_E_TRUNCATED);
				assert_int_equal(d.code, CONV_E_TRUNCATED);
				assert_int_equal(t.nr, 0);
			} else if (boundary) {
				assert_int_equal(err, CONV_E_OK);
				assert_int_equal(st.truncated_at, 0);
			} else {
				assert_int_equal(err, CONV_E_TRUNCATED);
				assert_int_equal(st.truncated_at, last_end);
				assert_int_equal(d.offset, last_end);
			}
			if (len >= 40) {
				assert_int_equal(st.records, complete);
				assert_int_equal(st.loads, loads);
				assert_int_equal(t.nr, loads);
			}
			jit_table_release(&t);
		}
	}
	free(b);
}

static void test_jitdump_move(void **state)
{
	struct jb *b = calloc(1, sizeof(*b));
	struct jit_table t;
	struct jit_stats st = { 0 };
	const struct jit_sym *s;
	(void)state;

	assert_non_null(b);
	jb_header(b, true);
	jb_load(b, 0x1000, 0x100, 7, "moved");
	jb_move(b, 0x1000, 0x5000, 0x100, 7);
	jb_move(b, 0x9000, 0xa000, 0x10, 99); /* never loaded */
	jb_load(b, 0x1080, 0x20, 8, "reuses old");
	jit_table_init(&t);
	assert_int_equal(parse_jb(&t, b, b->len, &st, NULL), CONV_E_OK);
	assert_int_equal(st.moves, 1);
	assert_int_equal(st.moves_unmatched, 1);
	assert_int_equal(st.loads, 2);
	s = jit_lookup(&t, 0x5000);
	assert_non_null(s);
	assert_string_equal(s->name, "moved");
	assert_int_equal(s->code_start, 0x5000);
	assert_string_equal(jit_lookup(&t, 0x50ff)->name, "moved");
	assert_null(jit_lookup(&t, 0x5100));
	assert_null(jit_lookup(&t, 0xa000));
	/* the old range keeps the name until new code covers it */
	assert_string_equal(jit_lookup(&t, 0x1000)->name, "moved");
	assert_string_equal(jit_lookup(&t, 0x1080)->name, "reuses old");
	assert_string_equal(jit_lookup(&t, 0x10a0)->name, "moved");
	jit_table_release(&t);
	free(b);
}

/* Each case: one bad record between two good loads. */
static void bad_load_short(struct jb *b)
{
	size_t at = jb_begin(b, 0);

	jb_code_head(b, 1, 1, 0x3000, 0x3000); /* code_size, code_index and the name are missing */
	jb_end_size(b, at, 0, false, 0);
}

static void bad_load_no_nul(struct jb *b)
{
	size_t at = jb_begin(b, 0);

	jb_code_head(b, 1, 1, 0x3000, 0x3000);
	jb_u64(b, 0);
	jb_u64(b, 5);
	jb_bytes(b, "name", 4);
	jb_end_size(b, at, 0, false, 0);
}

static void bad_load_code_too_big(struct jb *b)
{
	size_t at = jb_begin(b, 0);

	jb_code_head(b, 1, 1, 0x3000, 0x3000);
	jb_u64(b, 0x100); /* only 8 code bytes follow */
	jb_u64(b, 5);
	jb_str(b, "x");
	jb_fill(b, 0xcc, 8);
	jb_end_size(b, at, 0, false, 0);
}

static void bad_load_huge_code(struct jb *b)
{
	size_t at = jb_begin(b, 0);

	jb_code_head(b, 1, 1, 0x3000, 0x3000);
	jb_u64(b, UINT64_MAX);
	jb_u64(b, 5);
	jb_str(b, "x");
	jb_end(b, at, 0);
}

static void bad_load_wraps(struct jb *b)
{
	size_t at = jb_begin(b, 0);

	jb_u32(b, 1);
	jb_u32(b, 1);
	jb_u64(b, UINT64_MAX - 1);
	jb_u64(b, UINT64_MAX - 1);
	jb_u64(b, 2);
	jb_u64(b, 5);
	jb_str(b, "x");
	jb_fill(b, 0xcc, 2);
	jb_end(b, at, 0);
}

static void bad_move_short(struct jb *b)
{
	size_t at = jb_begin(b, 1);

	jb_code_head(b, 1, 1, 0x3000, 0x1000); /* new address, size and index missing */
	jb_end_size(b, at, 1, false, 0);
}

static void bad_debug_huge_count(struct jb *b)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, 0x3000);
	jb_u64(b, UINT64_MAX / 24 + 1); /* would overflow any allocation */
	jb_dbg_nums(b, 0x3000, 1, 0);
	jb_str(b, "f");
	jb_end(b, at, 2);
}

static void bad_debug_count_above_bytes(struct jb *b)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, 0x3000);
	jb_u64(b, (uint64_t)1 << 40);
	jb_end(b, at, 2);
}

static void bad_debug_entry_past_end(struct jb *b)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, 0x3000);
	jb_u64(b, 2); /* one entry present, and it fits the minimum size check */
	jb_dbg_nums(b, 0x3000, 1, 0);
	jb_str(b, "some/longer/file/name.js");
	jb_end_size(b, at, 2, false, 0);
}

static void bad_debug_name_without_nul(struct jb *b)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, 0x3000);
	jb_u64(b, 1);
	jb_dbg_nums(b, 0x3000, 1, 0);
	jb_bytes(b, "file.js", 7);
	jb_end_size(b, at, 2, false, 0);
}

/* V8's shape: names with NULs inside, so the entries end long before the record. */
static void bad_debug_entries_end_early(struct jb *b)
{
	size_t at = jb_begin(b, 2);

	jb_u64(b, 0x3000);
	jb_u64(b, 2);
	for (int i = 0; i < 2; i++) {
		jb_dbg_nums(b, 0x3040 + (uint64_t)i, 1, 24);
		jb_bytes(b, "s\xd7\x03\0\0\0\0\0\x98\x83M,\xe5\rv\xd2", 17);
	}
	jb_end(b, at, 2);
}

static void bad_unwinding_huge(struct jb *b)
{
	size_t at = jb_begin(b, 4);

	jb_u64(b, (uint64_t)1 << 62);
	jb_u64(b, 20);
	jb_u64(b, 0);
	jb_fill(b, 0, 24);
	jb_end(b, at, 4);
}

static void bad_unwinding_hdr_above_size(struct jb *b)
{
	size_t at = jb_begin(b, 4);

	jb_u64(b, 8);
	jb_u64(b, 20);
	jb_u64(b, 8);
	jb_fill(b, 0, 8);
	jb_end(b, at, 4);
}

static void bad_unwinding_short(struct jb *b)
{
	size_t at = jb_begin(b, 4);

	jb_u64(b, 0);
	jb_end_size(b, at, 4, false, 0);
}

static void test_jitdump_bad_records(void **state)
{
	static const struct {
		const char *what;
		void (*build)(struct jb *b);
	} cases[] = {
		{ "load shorter than its fields", bad_load_short },
		{ "load name without NUL", bad_load_no_nul },
		{ "load code_size above the record", bad_load_code_too_big },
		{ "load code_size 2^64-1", bad_load_huge_code },
		{ "load end past 2^64", bad_load_wraps },
		{ "move shorter than its fields", bad_move_short },
		{ "debug nr_entry overflowing", bad_debug_huge_count },
		{ "debug nr_entry 2^40", bad_debug_count_above_bytes },
		{ "debug entry past the end", bad_debug_entry_past_end },
		{ "debug name without NUL", bad_debug_name_without_nul },
		{ "debug entries ending early", bad_debug_entries_end_early },
		{ "unwinding size 2^62", bad_unwinding_huge },
		{ "unwinding header above size", bad_unwinding_hdr_above_size },
		{ "unwinding shorter than its fields", bad_unwinding_short },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int swap = 0; swap < 2; swap++) {
			struct jb *b = calloc(1, sizeof(*b));
			struct jit_table t;
			struct jit_stats st = { 0 };
			size_t bad_at;

			assert_non_null(b);
			jb_header(b, swap);
			jb_load(b, 0x1000, 0x10, 1, "before");
			bad_at = b->len;
			cases[i].build(b);
			jb_load(b, 0x3000, 0x10, 2, "after");
			jit_table_init(&t);
			if (parse_jb(&t, b, b->len, &st, NULL) != CONV_E_OK || st.bad_records != 1 ||
			    st.loads != 2 || st.first_bad_offset != bad_at)
				fail_msg("%s (swap %d): bad %llu loads %llu at %llu", cases[i].what, swap,
					 (unsigned long long)st.bad_records,
					 (unsigned long long)st.loads,
					 (unsigned long long)st.first_bad_offset);
			assert_int_equal(st.records, 3);
			assert_int_equal(t.nr, 2);
			assert_string_equal(jit_lookup(&t, 0x3000)->name, "after");
			/* a rejected debug record leaves no lines behind */
			assert_null(jit_lookup(&t, 0x3000)->lines);
			assert_int_equal(st.debug_orphans, 0);
			jit_table_release(&t);
			free(b);
		}
	}
}

static void test_jitdump_bad_headers(void **state)
{
	struct jb *b = calloc(1, sizeof(*b));
	struct jit_table t;
	struct jit_stats st = { 0 };
	struct conv_diag d = { 0 };
	uint32_t huge;
	(void)state;

	assert_non_null(b);
	jit_table_init(&t);

	memcpy(b->buf, "ELF!", 4);
	memset(b->buf + 4, 0, 60);
	assert_int_equal(jit_parse_jitdump(&t, b->buf, 64, &st, &d), CONV_E_FORMAT);
	assert_int_equal(d.code, CONV_E_FORMAT);
	assert_int_equal(jit_parse_jitdump(&t, b->buf, 3, &st, &d), CONV_E_TRUNCATED);

	jb_header_ex(b, false, 2, 40, 0);
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_UNSUPPORTED);
	jb_header_ex(b, true, 1, 40, 2); /* a reserved flag */
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_UNSUPPORTED);
	jb_header_ex(b, false, 1, 32, 0); /* smaller than its own fields */
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_FORMAT);
	jb_header_ex(b, false, 1, 40, 0);
	huge = 0xffffffffu;
	memcpy(b->buf + 8, &huge, 4); /* header size far past the end */
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_TRUNCATED);
	assert_int_equal(d.offset, 8);
	assert_int_equal(t.nr, 0);

	/* a longer header (a later version's fields) is skipped by its size */
	memset(&st, 0, sizeof(st));
	jb_header_ex(b, true, 1, 64, 1);
	jb_load(b, 0x1000, 0x10, 1, "after long header");
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_OK);
	assert_int_equal(st.loads, 1);
	assert_string_equal(jit_lookup(&t, 0x1000)->name, "after long header");

	/* a record size below its header: nothing after it can be found */
	jit_table_release(&t);
	jit_table_init(&t);
	memset(&st, 0, sizeof(st));
	jb_header(b, false);
	jb_load(b, 0x1000, 0x10, 1, "kept");
	{
		size_t at = jb_begin(b, 0);

		jb_end_size(b, at, 0, false, 8);
	}
	jb_load(b, 0x2000, 0x10, 2, "lost");
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_FORMAT);
	assert_int_equal(d.offset, b->ends[0]);
	assert_int_equal(st.loads, 1);
	assert_int_equal(t.nr, 1);
	assert_string_equal(t.syms[0].name, "kept");

	/* a record size of 4 GiB in a small file: truncated, no allocation */
	jit_table_release(&t);
	jit_table_init(&t);
	memset(&st, 0, sizeof(st));
	jb_header(b, true);
	{
		size_t at = jb_begin(b, 2);

		jb_u64(b, 0);
		jb_u64(b, UINT64_MAX);
		jb_end_size(b, at, 2, false, 0xffffffffu);
	}
	assert_int_equal(parse_jb(&t, b, b->len, &st, &d), CONV_E_TRUNCATED);
	assert_int_equal(st.truncated_at, 40);
	jit_table_release(&t);
	free(b);
}

static void test_jitdump_debug_pairing(void **state)
{
	static const struct dbg_entry l1[] = { { 0x3000, 1, 0, "x.js" } };
	static const struct dbg_entry l2[] = { { 0x2004, 7, 0, "y.js" }, { 0x2000, 6, 0, "\xff" } };
	struct jb *b = calloc(1, sizeof(*b));
	struct jit_table t;
	struct jit_stats st = { 0 };
	const struct jit_sym *s;
	(void)state;

	assert_non_null(b);
	jb_header(b, false);
	jb_debug(b, 0x3000, l1, 1); /* for code that is never loaded */
	jb_load(b, 0x2000, 0x10, 1, "no lines");
	jb_debug(b, 0x9000, l1, 1); /* replaced by the next one before any load */
	jb_debug(b, 0x2000, l2, 2); /* "\xff" first in order of address, second as written */
	jb_load(b, 0x2000, 0x10, 2, "with lines");
	jb_debug(b, 0x4000, l1, 0);
	jb_load(b, 0x4000, 0, 3, "empty code"); /* size 0: nothing to attach to */
	jb_debug(b, 0x5000, l1, 1);             /* at the end of the file */
	jit_table_init(&t);
	assert_int_equal(parse_jb(&t, b, b->len, &st, NULL), CONV_E_OK);
	assert_int_equal(st.debug_orphans, 4);
	assert_int_equal(st.debug_infos, 1);
	assert_int_equal(st.debug_entries, 2);
	assert_int_equal(st.empty, 1);
	assert_int_equal(st.replaced, 1);
	s = jit_lookup(&t, 0x2008);
	assert_string_equal(s->name, "with lines");
	assert_int_equal(s->nr_lines, 2);
	assert_int_equal(jit_lookup_line(s, 0x2003)->line, 6);
	assert_string_equal(jit_lookup_line(s, 0x2003)->file, "y.js");
	assert_int_equal(jit_lookup_line(s, 0x2004)->line, 7);
	jit_table_release(&t);
	free(b);
}

/* ---- the real files ---- */

static void test_real_jdk17_map(void **state)
{
	struct jit_table t;
	struct jit_stats st = { 0 };
	struct conv_diag d = { 0 };
	const struct jit_sym *s;
	(void)state;

	jit_table_init(&t);
	assert_int_equal(jit_load_perf_map(&t, fixtures(), 30173, 0, &st, &d), CONV_E_OK);
	assert_int_equal(st.map_entries, 47);
	assert_int_equal(st.map_malformed, 0);
	assert_int_equal(st.replaced, 0);
	assert_int_equal(t.nr, 47);
	for (size_t i = 1; i < t.nr; i++)
		assert_true(t.syms[i - 1].start + t.syms[i - 1].size <= t.syms[i].start);
	s = jit_lookup(&t, 0x00007ffb78ec9440);
	assert_non_null(s);
	assert_string_equal(s->name, "int Hello.work(int)");
	assert_int_equal(s->size, 0x8d8);
	s = jit_lookup(&t, 0x00007ffb78ecb400 + 0x1f);
	assert_string_equal(s->name,
			    "java.lang.Object java.lang.invoke.MethodHandle.linkToStatic("
			    "java.lang.Object, java.lang.Object, java.lang.Object, java.lang.Object, "
			    "java.lang.Object, java.lang.invoke.MemberName)");
	s = jit_lookup(&t, 0x00007ffb78940b80 + 0x17de0 - 1);
	assert_string_equal(s->name, "Interpreter");
	assert_null(jit_lookup(&t, 0x00007ffb78940b80 + 0x17de0));
	/* interned: the adapters' name is stored once */
	assert_ptr_equal(jit_lookup(&t, 0x00007ffb78a43700)->name,
			 jit_lookup(&t, 0x00007ffb78a44b00)->name);
	jit_table_release(&t);
}

static void test_real_cpython312_map(void **state)
{
	struct jit_table t;
	struct jit_stats st = { 0 };
	const struct jit_sym *s;
	(void)state;

	jit_table_init(&t);
	assert_int_equal(jit_load_perf_map(&t, fixtures(), 30377, 0, &st, NULL), CONV_E_OK);
	assert_int_equal(st.map_entries, 50);
	assert_int_equal(st.map_malformed, 0);
	assert_int_equal(t.nr, 50);
	s = jit_lookup(&t, 0x7fef06c757d2 + 0xa);
	assert_non_null(s);
	assert_string_equal(s->name, "py::leaf:/tmp/jitgen/work.py");
	assert_int_equal(s->size, 0xb);
	/* trampolines are back to back: the next byte is the next function */
	assert_string_equal(jit_lookup(&t, 0x7fef06c757dd)->name,
			    "py::leaf.<locals>.<genexpr>:/tmp/jitgen/work.py");
	assert_string_equal(jit_lookup(&t, 0x7fef06c75000)->name,
			    "py::_find_and_load:<frozen importlib._bootstrap>");
	jit_table_release(&t);
}

static char *fixture_path(const char *name)
{
	size_t n = strlen(fixtures()) + strlen(name) + 2;
	char *p = malloc(n);

	assert_non_null(p);
	snprintf(p, n, "%s/%s", fixtures(), name);
	return p;
}

static void test_real_cpython313_dump(void **state)
{
	char *path = fixture_path("jit-30436.dump");
	struct jit_table t;
	struct jit_stats st = { 0 };
	struct conv_diag d = { 0 };
	const struct jit_sym *s;
	(void)state;

	jit_table_init(&t);
	assert_int_equal(jit_load_jitdump(&t, path, 0, &st, &d), CONV_E_OK);
	assert_int_equal(st.dump_pid, 30436);
	assert_false(st.dump_swapped);
	assert_int_equal(st.records, 20);
	assert_int_equal(st.loads, 10);
	assert_int_equal(st.unwinding, 10);
	assert_int_equal(st.bad_records, 0);
	assert_int_equal(t.nr, 10);
	s = jit_lookup(&t, 0x7f9dd2882d00);
	assert_non_null(s);
	assert_string_equal(s->name, "py::leaf:/tmp/jitgen/work.py");
	assert_int_equal(s->size, 0xb);
	assert_null(jit_lookup(&t, 0x7f9dd2882d0b));
	jit_table_release(&t);
	free(path);
}

static void test_real_node20_dump(void **state)
{
	char *path = fixture_path("jit-30517.dump");
	struct jit_table t;
	struct jit_stats st = { 0 };
	struct conv_diag d = { 0 };
	const struct jit_sym *s;
	const struct jit_line *l;
	(void)state;

	jit_table_init(&t);
	assert_int_equal(jit_load_jitdump(&t, path, 0, &st, &d), CONV_E_OK);
	assert_int_equal(st.dump_pid, 30517);
	assert_int_equal(st.dump_elf_mach, 62);
	assert_int_equal(st.records, 20);
	assert_int_equal(st.loads, 8);
	assert_int_equal(st.unwinding, 8);
	/* one well-formed DEBUG_INFO; V8's three with broken script names rejected */
	assert_int_equal(st.debug_infos, 1);
	assert_int_equal(st.debug_entries, 4);
	assert_int_equal(st.bad_records, 3);
	assert_int_equal(st.debug_orphans, 0);
	assert_int_equal(t.nr, 8);

	s = jit_lookup(&t, 0x7fce2000a580 + 0x50);
	assert_non_null(s);
	assert_string_equal(s->name, "JS:^isPosixPathSeparator node:path:71:30");
	assert_int_equal(s->nr_lines, 4);
	l = jit_lookup_line(s, 0x7fce2000a580 + 0x45);
	assert_non_null(l);
	assert_string_equal(l->file, "node:path");
	assert_int_equal(l->line, 72);
	assert_int_equal(l->discrim, 15);
	assert_null(jit_lookup_line(s, 0x7fce2000a580 + 0x3f));

	s = jit_lookup(&t, 0x7fce20024bc0);
	assert_string_equal(s->name, "JS:*leaf /tmp/jitgen/w.js:1:14");
	assert_null(s->lines);
	assert_string_equal(jit_lookup(&t, 0x18c4000)->name, "Builtin:DeoptimizationEntry_Eager");
	jit_table_release(&t);
	free(path);
}

/* Every prefix and every single-byte corruption of the real dumps stays in bounds. */
static void test_real_dumps_mangled(void **state)
{
	static const char *const names[] = { "jit-30436.dump", "jit-30517.dump" };
	(void)state;

	for (size_t f = 0; f < 2; f++) {
		char *path = fixture_path(names[f]);
		FILE *fp = fopen(path, "rb");
		uint8_t *data, *copy;
		long size;

		assert_non_null(fp);
		assert_int_equal(fseek(fp, 0, SEEK_END), 0);
		size = ftell(fp);
		rewind(fp);
		data = malloc((size_t)size);
		copy = malloc((size_t)size);
		assert_int_equal(fread(data, 1, (size_t)size, fp), (size_t)size);
		fclose(fp);
		for (size_t len = 0; len <= (size_t)size; len += 7) {
			struct jit_table t;

			/* a copy of exactly len bytes, so ASan sees any read past it */
			uint8_t *part = malloc(len ? len : 1);

			memcpy(part, data, len);
			jit_table_init(&t);
			(void)jit_parse_jitdump(&t, part, len, NULL, NULL);
			jit_table_release(&t);
			free(part);
		}
		for (size_t i = 0; i < (size_t)size; i += 3) {
			struct jit_table t;

			memcpy(copy, data, (size_t)size);
			copy[i] ^= (uint8_t)(0x80 | i);
			jit_table_init(&t);
			(void)jit_parse_jitdump(&t, copy, (size_t)size, NULL, NULL);
			jit_table_release(&t);
		}
		free(data);
		free(copy);
		free(path);
	}
}

/* ---- loaders ---- */

static void test_load_errors(void **state)
{
	char dir[] = "/tmp/conv-jit-XXXXXX";
	char path[256], target[256];
	struct jit_table t;
	struct jit_stats st = { 0 };
	struct conv_diag d = { 0 };
	FILE *fp;
	(void)state;

	assert_non_null(mkdtemp(dir));
	jit_table_init(&t);

	assert_int_equal(jit_load_perf_map(&t, dir, 1, 0, &st, &d), CONV_E_NOTFOUND);
	assert_int_equal(d.code, CONV_E_NOTFOUND);
	snprintf(path, sizeof(path), "%s/jit-1.dump", dir);
	assert_int_equal(jit_load_jitdump(&t, path, 0, &st, &d), CONV_E_NOTFOUND);
	assert_int_equal(jit_load_perf_map(&t, "/nonexistent/dir", 1, 0, &st, &d), CONV_E_NOTFOUND);

	/* a directory, a FIFO (must not block), a symbolic link */
	snprintf(path, sizeof(path), "%s/perf-2.map", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(jit_load_perf_map(&t, dir, 2, 0, &st, &d), CONV_E_UNSUPPORTED);
	snprintf(path, sizeof(path), "%s/perf-3.map", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(jit_load_perf_map(&t, dir, 3, 0, &st, &d), CONV_E_UNSUPPORTED);

	snprintf(target, sizeof(target), "%s/real.map", dir);
	fp = fopen(target, "w");
	assert_non_null(fp);
	fputs("1000 10 linked\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/perf-4.map", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(jit_load_perf_map(&t, dir, 4, 0, &st, &d), CONV_E_UNSUPPORTED);
	assert_int_equal(t.nr, 0);
	assert_int_equal(jit_load_perf_map(&t, dir, 4, JIT_LOAD_ANY_OWNER, &st, &d), CONV_E_OK);
	assert_string_equal(jit_lookup(&t, 0x1000)->name, "linked");

	/* another user's file: refused unless asked for (needs root to set up) */
	if (geteuid() == 0) {
		assert_int_equal(chown(target, 12345, 12345), 0);
		assert_int_equal(rename(target, path), 0); /* replaces the link */
		assert_int_equal(jit_load_perf_map(&t, dir, 4, 0, &st, &d), CONV_E_UNSUPPORTED);
		assert_non_null(strstr(d.msg, "uid 12345"));
		assert_int_equal(jit_load_perf_map(&t, dir, 4, JIT_LOAD_ANY_OWNER, &st, &d), CONV_E_OK);
	} else {
		unlink(target);
	}

	/* an empty file is an empty map, and a jitdump without a header */
	snprintf(path, sizeof(path), "%s/perf-5.map", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(jit_load_perf_map(&t, dir, 5, 0, &st, &d), CONV_E_OK);
	assert_int_equal(jit_load_jitdump(&t, path, 0, &st, &d), CONV_E_TRUNCATED);

	jit_table_release(&t);
	for (int i = 2; i <= 5; i++) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", dir, i);
		if (i == 2)
			rmdir(path);
		else
			unlink(path);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_good_lines),
		cmocka_unit_test(test_map_malformed_lines),
		cmocka_unit_test(test_map_overlaps),
		cmocka_unit_test(test_map_overlaps_model),
		cmocka_unit_test(test_map_later_call_wins),
		cmocka_unit_test(test_lookup_boundaries),
		cmocka_unit_test(test_empty_inputs),
		cmocka_unit_test(test_jitdump_both_orders),
		cmocka_unit_test(test_jitdump_truncated),
		cmocka_unit_test(test_jitdump_move),
		cmocka_unit_test(test_jitdump_bad_records),
		cmocka_unit_test(test_jitdump_bad_headers),
		cmocka_unit_test(test_jitdump_debug_pairing),
		cmocka_unit_test(test_real_jdk17_map),
		cmocka_unit_test(test_real_cpython312_map),
		cmocka_unit_test(test_real_cpython313_dump),
		cmocka_unit_test(test_real_node20_dump),
		cmocka_unit_test(test_real_dumps_mangled),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
