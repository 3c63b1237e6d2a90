/*
 * core/tdata: the walk over the tracing-data blob, on a blob with every
 * section in both byte orders, on every truncation of it, and on hostile
 * counts and sizes (the walk must stop inside the blob, returning only
 * formats that lie in it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/tdata.h"

#include <stdlib.h>
#include <string.h>

/* A blob under construction, in the byte order big. */
struct blob {
	uint8_t b[4096];
	size_t n;
	bool big;
};

static void put(struct blob *x, const void *p, size_t n)
{
	assert_true(x->n + n <= sizeof(x->b));
	memcpy(x->b + x->n, p, n);
	x->n += n;
}

static void put_str(struct blob *x, const char *s)
{
	put(x, s, strlen(s) + 1);
}

static void put_uint(struct blob *x, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++) {
		size_t shift = x->big ? 8 * (bytes - 1 - i) : 8 * i;

		x->b[x->n + i] = (uint8_t)(v >> shift);
	}
	x->n += bytes;
}

/* A u64-sized section holding text; returns the offset of the text. */
static size_t put_sized64(struct blob *x, const char *text)
{
	size_t off;

	put_uint(x, strlen(text), 8);
	off = x->n;
	put(x, text, strlen(text));
	return off;
}

static const char *const fmt_text[3] = {
	"name: sched_switch\nID: 372\nformat:\n",
	"name: sched_wakeup\nID: 373\nformat:\n",
	"name: irq_handler_entry\nID: 130\nformat:\n",
};
static const char *const fmt_sys[3] = { "sched", "sched", "irq" };

/* Where build put things. */
struct layout {
	size_t fmt_off[3];
	size_t events_end; /* the first byte after the event formats (kallsyms) */
};

static void build(struct blob *x, bool big, struct layout *l)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

	memset(x, 0, sizeof(*x));
	x->big = big;
	put(x, magic, sizeof(magic));
	put_str(x, "0.6");
	put_uint(x, big, 1);
	put_uint(x, 8, 1);
	put_uint(x, 4096, 4);
	put_str(x, "header_page");
	put_sized64(x, "field: u64 timestamp;");
	put_str(x, "header_event");
	put_sized64(x, "# compressed entry header");
	put_uint(x, 2, 4);
	put_sized64(x, "name: function\nID: 1\n");
	put_sized64(x, "name: funcgraph_entry\nID: 11\n");
	put_uint(x, 3, 4);
	put_str(x, "sched");
	put_uint(x, 2, 4);
	l->fmt_off[0] = put_sized64(x, fmt_text[0]);
	l->fmt_off[1] = put_sized64(x, fmt_text[1]);
	put_str(x, "empty");
	put_uint(x, 0, 4);
	put_str(x, "irq");
	put_uint(x, 1, 4);
	l->fmt_off[2] = put_sized64(x, fmt_text[2]);
	l->events_end = x->n;
	put_uint(x, 9, 4);
	put(x, "ffff t _x", 9); /* kallsyms */
	put_uint(x, 4, 4);
	put(x, "fmts", 4); /* printk formats */
	put_sized64(x, "1 sh\n"); /* saved cmdlines */
}

/* Walks x->b[0..len); returns the formats returned, each checked against the full list. */
static size_t walk(const uint8_t *b, size_t len, const struct layout *l, enum conv_err *err,
		   bool *ok)
{
	struct tdata w;
	struct tdata_format f;
	size_t n = 0;

	*err = tdata_begin(&w, b, len);
	*ok = false;
	if (*err != CONV_E_OK)
		return 0;
	if (!tdata_skip_to_events(&w))
		return 0;
	while (tdata_next_format(&w, &f)) {
		assert_true(n < 3);
		assert_string_equal(f.sys, fmt_sys[n]);
		assert_int_equal(f.len, strlen(fmt_text[n]));
		assert_int_equal(f.off, l->fmt_off[n]);
		assert_ptr_equal(f.text, (const char *)b + l->fmt_off[n]);
		assert_true(f.off + f.len <= len);
		assert_memory_equal(f.text, fmt_text[n], f.len);
		n++;
	}
	*ok = tdata_ok(&w);
	if (*ok)
		assert_int_equal(tdata_pos(&w), l->events_end);
	else
		assert_int_equal(tdata_pos(&w), len);
	return n;
}

static void every_section(bool big)
{
	struct blob x;
	struct layout l;
	struct tdata w;
	enum conv_err err;
	bool ok;
	uint16_t one = 1;
	bool host_big = *(const uint8_t *)&one == 0;

	build(&x, big, &l);
	assert_int_equal(tdata_begin(&w, x.b, x.n), CONV_E_OK);
	assert_string_equal(w.head.version, "0.6");
	assert_int_equal(w.head.big_endian, big);
	assert_int_equal(w.head.long_size, 8);
	assert_int_equal(w.head.page_size, 4096);
	assert_int_equal(w.head.swap, big != host_big);
	assert_int_equal(walk(x.b, x.n, &l, &err, &ok), 3);
	assert_true(ok);
}

static void test_tdata_every_section(void **state)
{
	(void)state;
	every_section(false);
	every_section(true);
}

/* Every prefix of the blob: the right error, and only the formats inside it. */
static void test_tdata_truncated(void **state)
{
	struct blob x;
	struct layout l;

	(void)state;
	build(&x, false, &l);
	for (size_t len = 0; len <= x.n; len++) {
		uint8_t *copy = malloc(len ? len : 1); /* ASan sees a read past the prefix */
		enum conv_err err;
		bool ok;
		size_t n;

		assert_non_null(copy);
		memcpy(copy, x.b, len);
		n = walk(copy, len, &l, &err, &ok);
		if (len < 10)
			assert_int_equal(err, CONV_E_FORMAT);
		else if (len < 20) /* magic, "0.6", two u8, u32 page size */
			assert_int_equal(err, CONV_E_TRUNCATED);
		else
			assert_int_equal(err, CONV_E_OK);
		assert_int_equal(ok, len >= l.events_end);
		for (size_t i = 0; i < 3; i++)
			if (l.fmt_off[i] + strlen(fmt_text[i]) <= len)
				assert_true(n > i);
		free(copy);
	}
}

/* A blob of the fixed header and then rest (n bytes). */
static size_t hostile(uint8_t *b, const uint8_t *rest, size_t n)
{
	static const uint8_t head[20] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g',
					  '0', '.', '6', 0, 0, 8, 0, 0x10, 0, 0 };

	memcpy(b, head, sizeof(head));
	memcpy(b + sizeof(head), rest, n);
	return sizeof(head) + n;
}

/* Walks b: whether it ended inside the blob, and how many formats it returned. */
static size_t walk_hostile(const uint8_t *b, size_t len, bool *ok)
{
	struct tdata w;
	struct tdata_format f;
	size_t n = 0;

	assert_int_equal(tdata_begin(&w, b, len), CONV_E_OK);
	*ok = false;
	if (!tdata_skip_to_events(&w))
		return 0;
	while (tdata_next_format(&w, &f)) {
		assert_true(f.off + f.len <= len);
		assert_true(f.off >= 20);
		n++;
	}
	*ok = tdata_ok(&w);
	return n;
}

/* header_page and header_event, both empty: 20 and 21 bytes */
#define HP "header_page\0\0\0\0\0\0\0\0\0"
#define HE "header_event\0\0\0\0\0\0\0\0\0"
#define HPE (20 + 21)

static void test_tdata_hostile(void **state)
{
	/* little-endian counts; each case must fail, or stop, inside the blob */
	static const struct {
		const char *what;
		const char *rest;
		size_t n;
		bool ok;
		size_t formats;
	} cases[] = {
		{ "header_page size past the end", "header_page\0\xff\xff\xff\xff\xff\xff\xff\x7f", 20,
		  false, 0 },
		{ "header_page without its NUL", "header_page", 11, false, 0 },
		{ "ftrace count past the end", HP HE "\xff\xff\xff\xff", HPE + 4, false, 0 },
		{ "no system count", HP HE "\0\0\0\0", HPE + 4, false, 0 },
		{ "a format size cut short", HP HE "\0\0\0\0\1\0\0\0s\0\1\0\0\0\5\0\0", HPE + 8 + 9,
		  false, 0 },
		{ "system count past the end", HP HE "\0\0\0\0\xff\xff\xff\xff", HPE + 8, false,
		  0 },
		{ "system name without its NUL", HP HE "\0\0\0\0\1\0\0\0sched", HPE + 8 + 5, false,
		  0 },
		{ "format count past the end", HP HE "\0\0\0\0\1\0\0\0s\0\xff\xff\xff\xff", HPE + 8 + 6,
		  false, 0 },
		{ "format size past the end",
		  HP HE "\0\0\0\0\1\0\0\0s\0\1\0\0\0\x09\0\0\0\0\0\0\0abcdefgh", HPE + 8 + 22, false,
		  0 },
		{ "one format, then a count past the end",
		  HP HE "\0\0\0\0\1\0\0\0s\0\2\0\0\0\x02\0\0\0\0\0\0\0ab", HPE + 8 + 16, false, 1 },
		{ "no systems", HP HE "\0\0\0\0\0\0\0\0", HPE + 8, true, 0 },
		{ "an empty format", HP HE "\0\0\0\0\1\0\0\0s\0\1\0\0\0\0\0\0\0\0\0\0\0", HPE + 8 + 14,
		  true, 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t b[256];
		size_t len = hostile(b, (const uint8_t *)cases[i].rest, cases[i].n);
		uint8_t *copy = malloc(len);
		bool ok;
		size_t n;

		assert_non_null(copy);
		memcpy(copy, b, len);
		n = walk_hostile(copy, len, &ok);
		if (ok != cases[i].ok || n != cases[i].formats)
			fail_msg("%s: ok %d formats %zu", cases[i].what, ok, n);
		free(copy);
	}
	{
		uint8_t b[16] = "\x17\x08\x44trac1ng";
		struct tdata w;

		assert_int_equal(tdata_begin(&w, b, sizeof(b)), CONV_E_FORMAT);
		assert_int_equal(tdata_begin(&w, NULL, 0), CONV_E_FORMAT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tdata_every_section),
		cmocka_unit_test(test_tdata_truncated),
		cmocka_unit_test(test_tdata_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
