/*
 * libFuzzer target for conv's JFR reader (jfredit/jfredit.h).
 *
 * The input is a JFR recording. When it parses: every record lies in its
 * chunk and the records of a chunk are back to back; every pool entry's
 * value lies in its checkpoint record and has a known type; then every event
 * is read as tests/tools/jfr_stacks reads it: its stackTrace's entry, the
 * frames array, each frame's method, class, symbols and frame type, through
 * jfe_value_field, jfe_value_u64, jfe_value_str and the array walk, whose
 * views must stay inside the file; every pool entry is also read as a
 * string (a type may refer to itself). Then every method of every chunk is
 * replaced by two frames and the file written back (jfe_write_fd into a
 * memfd): the result must parse again with the same number of chunks and
 * events. The recording read into the model (jfrload_prof, conv diff's JFR
 * inputs) either fails with a format error or has two value types an event.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "fuzz_common.h"

#include "core/dbuf.h"
#include "core/vec.h"
#include "jfredit/jfredit.h"
#include "model/profile.h"
#include "pipeline/jfrload.h"

#include <sys/mman.h>
#include <unistd.h>

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
	uint64_t count, key, seen = 0;

	if (!jfe_event_value(f, c, r, &ev))
		return;
	check_view(f, &ev);
	if (!jfe_value_field(&ev, "stackTrace", &st, NULL) || !jfe_value_deref(&st, &st) ||
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

/* Events (records of types above 1) of a parsed file. */
static size_t count_events(const struct jfe_file *f)
{
	size_t n = 0;

	for (size_t ci = 0; ci < f->nr_chunks; ci++)
		n += f->chunks[ci].nr_events;
	return n;
}

/* Every method replaced by two frames, written back and parsed again. */
static void check_rewrite(const struct jfe_file *f)
{
	static const struct jfe_new_frame nf[2] = {
		{ "libx.so", "inner", "()L;", 0x100, 7, "Native" },
		{ "", "outer", "(Lk;)L;", 0x100, 0, "Kernel" },
	};
	struct jfe_edit e;
	struct jfe_file g;
	uint64_t bytes = 0;
	int io_errno = 0, fd = memfd_create("fuzz-jfr", MFD_CLOEXEC);
	uint8_t *buf;

	FUZZ_CHECK(fd >= 0);
	memset(&e, 0, sizeof(e));
	e.frames = (struct jfe_new_frame *)nf;
	e.nr_frames = 2;
	for (size_t ci = 0; ci < f->nr_chunks; ci++) {
		const struct jfe_chunk *c = &f->chunks[ci];
		const struct jfe_type *mt = jfe_type_named(c, "jdk.types.Method");

		for (size_t i = 0; mt && i < c->nr_entries; i++) {
			if (c->entries[i].type != mt->id)
				continue;
			FUZZ_CHECK(vec_reserve((void **)&e.repl, &e.cap_repl, e.nr_repl + 1, sizeof(*e.repl)));
			e.repl[e.nr_repl].chunk = (uint32_t)ci;
			e.repl[e.nr_repl].method_key = c->entries[i].key;
			e.repl[e.nr_repl].first = 0;
			e.repl[e.nr_repl++].nr = 2;
		}
	}
	if (jfe_write_fd(f, &e, fd, NULL, &bytes, &io_errno, NULL) == CONV_E_OK && bytes) {
		buf = malloc(bytes);
		FUZZ_CHECK(buf && pread(fd, buf, bytes, 0) == (ssize_t)bytes);
		FUZZ_CHECK(jfe_parse(&g, buf, bytes, NULL) == CONV_E_OK);
		FUZZ_CHECK(g.nr_chunks == f->nr_chunks && count_events(&g) == count_events(f));
		jfe_release(&g);
		free(buf);
	}
	free(e.repl);
	close(fd);
}

/* The recording as conv diff reads it: a format error, or its events with two value types each. */
static void check_model(const struct jfe_file *f)
{
	struct prof q;
	enum conv_err err;

	prof_init(&q);
	err = jfrload_prof(f, &q, NULL);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_FORMAT || err == CONV_E_NOMEM);
	if (!err)
		FUZZ_CHECK(q.nr_events_desc && q.nr_types == 2 * q.nr_events_desc);
	prof_release(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfe_file f;
	struct dbuf s;

	if (jfe_parse(&f, data, size, NULL) != CONV_E_OK)
		return 0;
	check_model(&f);
	dbuf_init(&s, 0);
	for (size_t ci = 0; ci < f.nr_chunks; ci++) {
		const struct jfe_chunk *c = &f.chunks[ci];
		size_t at = c->off + 68, pos = 0, kept = 0;
		uint64_t events = 0;
		struct jfe_record rec;

		FUZZ_CHECK(c->off + c->size <= size);
		while (jfe_record_next(&f, c, &pos, &rec)) {
			FUZZ_CHECK(rec.off == at && rec.size > 0);
			at += rec.size;
			if (rec.type > 1) {
				events++;
				touch_event(&f, c, &rec, &s);
			} else {
				FUZZ_CHECK(kept < c->nr_records && c->records[kept].off == rec.off);
				kept++;
			}
		}
		FUZZ_CHECK(at == c->off + c->size && events == c->nr_events && kept == c->nr_records);
		for (size_t ei = 0; ei < c->nr_entries; ei++) {
			const struct jfe_entry *e = &c->entries[ei];
			const struct jfe_record *r = &c->records[e->record];

			struct jfe_value v;

			FUZZ_CHECK(r->type == 1 && e->off >= r->off && e->end <= r->off + r->size && e->off <= e->end);
			FUZZ_CHECK(jfe_type_of(c, e->type) != NULL);
			/* any entry as a string: a type may lead back to itself through a pool or a simple type */
			dbuf_reset(&s);
			if (jfe_entry_value(&f, c, e, &v) && jfe_value_str(&v, &s))
				fuzz_sink += fuzz_touch_str((const char *)s.data);
		}
	}
	dbuf_release(&s);
	check_rewrite(&f);
	jfe_release(&f);
	return 0;
}
