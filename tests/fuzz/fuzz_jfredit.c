/*
 * libFuzzer target for conv's JFR reader (jfredit/jfredit.h).
 *
 * The input is a JFR recording. When it parses: every record lies in its
 * chunk and the records of a chunk are back to back; every pool entry's
 * value lies in its checkpoint record and has a known type; then every event
 * is read as tests/tools/jfr_stacks reads it: its stackTrace's entry, the
 * frames array, each frame's method, class, symbols and frame type, through
 * jfe_value_field, jfe_value_u64, jfe_value_str and the array walk, whose
 * views must stay inside the file.
 */
#include "fuzz_common.h"

#include "core/dbuf.h"
#include "jfredit/jfredit.h"

volatile uint64_t fuzz_sink;

static void check_view(const struct jfe_file *f, const struct jfe_value *v)
{
	FUZZ_CHECK(v->off <= v->end && v->end <= f->len);
}

/* A pool string a cp key names, read and checked. */
static void touch_key(const struct jfe_file *f, const struct jfe_value *key, struct dbuf *s)
{
	uint64_t k;
	const struct jfe_entry *e;
	struct jfe_value v;

	check_view(f, key);
	if (!jfe_value_u64(key, &k) || !(e = jfe_entry_find(key->c, key->t->id, k)))
		return;
	FUZZ_CHECK(e->type == key->t->id && e->key == k);
	if (!jfe_entry_value(f, key->c, e, &v))
		return;
	check_view(f, &v);
	dbuf_reset(s);
	if (jfe_value_str(&v, s))
		fuzz_sink += fuzz_touch_str((const char *)s->data);
}

static void touch_frame(const struct jfe_file *f, const struct jfe_value *fr, struct dbuf *s)
{
	static const char *const names[] = { "method", "lineNumber", "bytecodeIndex", "type" };
	struct jfe_value x;
	uint64_t n;

	check_view(f, fr);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!jfe_value_field(fr, names[i], &x, NULL))
			continue;
		check_view(f, &x);
		FUZZ_CHECK(x.off >= fr->off && x.end <= fr->end);
		if (x.key)
			touch_key(f, &x, s);
		else if (jfe_value_u64(&x, &n))
			fuzz_sink += n;
	}
}

static void touch_event(const struct jfe_file *f, const struct jfe_chunk *c, const struct jfe_record *r,
			struct dbuf *s)
{
	struct jfe_value ev, st, frames, fr;
	const struct jfe_field *ff;
	struct jfe_array a;
	uint64_t k, count, key, seen = 0;
	const struct jfe_entry *e;

	if (!jfe_event_value(f, c, r, &ev))
		return;
	check_view(f, &ev);
	if (!jfe_value_field(&ev, "stackTrace", &st, NULL) || !jfe_value_u64(&st, &k) ||
	    !(e = jfe_entry_find(c, st.t->id, k)) || !jfe_entry_value(f, c, e, &st) ||
	    !jfe_value_field(&st, "frames", &frames, &ff) || !jfe_array_begin(&frames, ff, &a, &count))
		return;
	while (jfe_array_next(&a, &fr, &key)) {
		FUZZ_CHECK(++seen <= count);
		if (fr.key)
			touch_key(f, &fr, s);
		else
			touch_frame(f, &fr, s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfe_file f;
	struct dbuf s;

	if (jfe_parse(&f, data, size, NULL) != CONV_E_OK)
		return 0;
	dbuf_init(&s, 0);
	for (size_t ci = 0; ci < f.nr_chunks; ci++) {
		const struct jfe_chunk *c = &f.chunks[ci];
		size_t at = c->off + 68;

		FUZZ_CHECK(c->off + c->size <= size);
		for (size_t ri = 0; ri < c->nr_records; ri++) {
			FUZZ_CHECK(c->records[ri].off == at && c->records[ri].size > 0);
			at += c->records[ri].size;
			touch_event(&f, c, &c->records[ri], &s);
		}
		FUZZ_CHECK(at == c->off + c->size);
		for (size_t ei = 0; ei < c->nr_entries; ei++) {
			const struct jfe_entry *e = &c->entries[ei];
			const struct jfe_record *r = &c->records[e->record];

			FUZZ_CHECK(r->type == 1 && e->off >= r->off && e->end <= r->off + r->size && e->off <= e->end);
			FUZZ_CHECK(jfe_type_of(c, e->type) != NULL);
		}
	}
	dbuf_release(&s);
	jfe_release(&f);
	return 0;
}
