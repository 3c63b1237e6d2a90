/*
 * libFuzzer target for the JIT symbol parsers (procmap/jitmap.h):
 * perf-<pid>.map text and jitdump files.
 *
 * Input: one selector byte, then the file(s). The selector's low two bits:
 *   0  the rest is a perf map
 *   1  the rest is a jitdump
 *   2  a perf map then a jitdump into the same table, the rest split at
 *      (selector >> 2) / 64 of its length
 *   3  the same with the jitdump first
 * Several files into one table is what procmap does for a process with both.
 *
 * After each parse the table is checked against its documented shape
 * (sorted, non-overlapping, sizes > 0 with ends below 2^64, names and line files
 * never NULL, line tables sorted, code_start at or before start), and
 * jit_lookup() / jit_lookup_line() are compared with linear searches at the
 * edges of every entry.
 */
#include "fuzz_common.h"

#include "core/err.h"
#include "procmap/jitmap.h"

volatile uint64_t fuzz_sink;

static const struct jit_sym *linear_lookup(const struct jit_table *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nr; i++)
		if (addr >= t->syms[i].start && addr - t->syms[i].start < t->syms[i].size)
			return &t->syms[i];
	return NULL;
}

static const struct jit_line *linear_line(const struct jit_sym *s, uint64_t addr)
{
	const struct jit_line *best = NULL;

	if (!s || addr < s->code_start)
		return NULL;
	for (size_t i = 0; i < s->nr_lines; i++)
		if (s->lines[i].offset <= addr - s->code_start)
			best = &s->lines[i]; /* sorted: the last one at or before */
	return best;
}

static uint64_t probe(const struct jit_table *t, uint64_t addr)
{
	const struct jit_sym *s = jit_lookup(t, addr);
	const struct jit_line *l;

	FUZZ_CHECK(s == linear_lookup(t, addr));
	if (!s)
		return 0;
	l = jit_lookup_line(s, addr);
	/* equal offsets: any of them is right, so compare the offsets */
	FUZZ_CHECK((l == NULL) == (linear_line(s, addr) == NULL));
	FUZZ_CHECK(!l || l->offset == linear_line(s, addr)->offset);
	return s->start + (l ? (uint64_t)l->line + fuzz_touch_str(l->file) : 0);
}

static uint64_t check_table(const struct jit_table *t)
{
	uint64_t sum = t->nr;

	for (size_t i = 0; i < t->nr; i++) {
		const struct jit_sym *s = &t->syms[i];

		FUZZ_CHECK(s->size > 0);
		FUZZ_CHECK(s->start + s->size > s->start); /* [start, start + size) fits below 2^64 */
		FUZZ_CHECK(i == 0 || t->syms[i - 1].start + t->syms[i - 1].size <= s->start);
		FUZZ_CHECK(s->code_start <= s->start);
		FUZZ_CHECK(s->name != NULL);
		FUZZ_CHECK((s->lines == NULL) == (s->nr_lines == 0));
		sum += fuzz_touch_str(s->name);
		for (size_t k = 0; k < s->nr_lines; k++) {
			FUZZ_CHECK(s->lines[k].file != NULL);
			FUZZ_CHECK(k == 0 || s->lines[k - 1].offset <= s->lines[k].offset);
			sum += s->lines[k].offset + fuzz_touch_str(s->lines[k].file);
		}
	}
	for (size_t i = 0; i < t->nr && i < 256; i++) {
		const struct jit_sym *s = &t->syms[i];

		sum += probe(t, s->start) + probe(t, s->start - 1) + probe(t, s->start + s->size - 1) +
		       probe(t, s->start + s->size);
		for (size_t k = 0; k < s->nr_lines && k < 16; k++)
			sum += probe(t, s->code_start + s->lines[k].offset);
	}
	sum += probe(t, 0) + probe(t, UINT64_MAX);
	return sum;
}

static uint64_t parse_map(struct jit_table *t, const uint8_t *p, size_t n, struct jit_stats *st)
{
	uint64_t before = st->map_entries + st->map_malformed;
	enum conv_err err = jit_parse_perf_map(t, (const char *)p, n, st);

	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOMEM);
	/* a line gives one entry or counts as malformed, never both */
	FUZZ_CHECK(st->map_entries + st->map_malformed - before <= n);
	return check_table(t);
}

static uint64_t parse_dump(struct jit_table *t, const uint8_t *p, size_t n, struct jit_stats *st)
{
	struct conv_diag diag;
	enum conv_err err;

	memset(&diag, 0, sizeof(diag));
	err = jit_parse_jitdump(t, p, n, st, &diag);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_TRUNCATED || err == CONV_E_FORMAT ||
		   err == CONV_E_UNSUPPORTED || err == CONV_E_NOMEM);
	FUZZ_CHECK(memchr(diag.msg, 0, sizeof(diag.msg)) != NULL);
	FUZZ_CHECK(st->debug_entries <= n);
	return check_table(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_table t;
	struct jit_stats st;
	const uint8_t *rest;
	size_t n, cut;
	uint64_t sum = 0;

	if (size < 1)
		return 0;
	rest = data + 1;
	n = size - 1;
	cut = (size_t)((uint64_t)n * (data[0] >> 2) / 64);
	memset(&st, 0, sizeof(st));
	jit_table_init(&t);
	switch (data[0] & 3) {
	case 0:
		sum += parse_map(&t, rest, n, &st);
		break;
	case 1:
		sum += parse_dump(&t, rest, n, &st);
		break;
	case 2:
		sum += parse_map(&t, rest, cut, &st);
		sum += parse_dump(&t, rest + cut, n - cut, &st);
		break;
	default:
		sum += parse_dump(&t, rest, cut, &st);
		sum += parse_map(&t, rest + cut, n - cut, &st);
		break;
	}
	jit_table_release(&t);
	fuzz_sink += sum + st.records + st.replaced;
	return 0;
}
