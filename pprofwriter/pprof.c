/*
 * profile.proto (github.com/google/pprof/proto/profile.proto), proto3 wire
 * format. Field numbers written here:
 *   Profile: 1 sample_type (ValueType), 2 sample, 3 mapping, 4 location,
 *            5 function, 6 string_table, 9 time_nanos, 10 duration_nanos,
 *            11 period_type, 12 period, 13 comment (packed), 14 default_sample_type
 *   ValueType: 1 type, 2 unit (string ids)
 *   Sample: 1 location_id (packed, leaf first), 2 value (packed), 3 label
 *   Label: 1 key, 2 str, 3 num, 4 num_unit
 *   Mapping: 1 id, 2 memory_start, 3 memory_limit, 4 file_offset, 5 filename,
 *            6 build_id, 7 has_functions, 8 has_filenames, 9 has_line_numbers,
 *            10 has_inline_frames
 *   Location: 1 id, 2 mapping_id, 3 address, 4 line (innermost first)
 *   Line: 1 function_id, 2 line, 3 column
 *   Function: 1 id, 2 name, 3 system_name, 4 filename, 5 start_line
 * Wire: key = field << 3 | type (0 varint, 2 length-delimited); ids are
 * dense, 1..N; string_table[0] is "". Zero scalars are omitted (proto3).
 *
 * gzip (RFC 1952): a sequence of members, each one PPROF_SINK_AT bytes of the
 * encoding (the last one shorter) compressed on its own by libdeflate:
 *   1f 8b 08 | flags 0 | mtime 0 (4) | xfl | os | deflate data | crc32 (4) | isize (4)
 * A gzip reader decompresses the members one after another into one
 * stream, as Go's compress/gzip (which pprof uses) does by default.
 * Why members: libdeflate compresses whole buffers only, at twice zlib's
 * speed (bench/README.md); members keep memory at one buffer whatever the
 * profile's size.
 */
#include "pprofwriter/pprof.h"

#include "core/pprofpb.h"

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/io.h"
#include "model/profile.h"

#include <stdlib.h>
#include <string.h>

static void pb_i64(struct dbuf *b, unsigned field, int64_t v)
{
	pprof_pb_u64(b, field, (uint64_t)v); /* int64 is two's complement as varint */
}

static void pb_bool(struct dbuf *b, unsigned field, bool v)
{
	pprof_pb_u64(b, field, v ? 1 : 0);
}

/* Writes a nested message from scratch buffer m, then empties m. */
static void pb_msg(struct dbuf *b, unsigned field, struct dbuf *m)
{
	pprof_pb_bytes(b, field, m->data, m->len);
	dbuf_reset(m);
}

static void value_type(struct dbuf *b, unsigned field, const struct prof_value_type *t,
		       struct dbuf *m)
{
	pprof_pb_u64(m, 1, t->type);
	pprof_pb_u64(m, 2, t->unit);
	pb_msg(b, field, m);
}

static enum conv_err encode(const struct prof *p, struct pprof_sink *k)
{
	struct dbuf m, m2, packed;
	struct dbuf *out = &k->buf;

	dbuf_init(&m, 0);
	dbuf_init(&m2, 0);
	dbuf_init(&packed, 0);
	for (size_t i = 0; i < p->nr_types; i++)
		value_type(out, 1, &p->types[i], &m);
	for (size_t i = 0; i < p->nr_samples && !k->failed; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t n;
		const uint32_t *locs = prof_stack_locs(p, s->stack, &n);

		for (uint32_t k2 = 0; k2 < n; k2++)
			pprof_pb_varint(&packed, (uint64_t)locs[k2] + 1);
		if (packed.len)
			pprof_pb_bytes(&m, 1, packed.data, packed.len);
		dbuf_reset(&packed);
		for (size_t k2 = 0; k2 < p->nr_types; k2++)
			pprof_pb_varint(&packed, (uint64_t)prof_sample_value(p, s, k2));
		pprof_pb_bytes(&m, 2, packed.data, packed.len);
		dbuf_reset(&packed);
		for (uint32_t k2 = 0; k2 < s->nr_labels; k2++) {
			const struct prof_label *l = &p->labels[s->first_label + k2];

			pprof_pb_u64(&m2, 1, l->key);
			pprof_pb_u64(&m2, 2, l->str);
			pb_i64(&m2, 3, l->num);
			pprof_pb_u64(&m2, 4, l->unit);
			pb_msg(&m, 3, &m2);
		}
		pb_msg(out, 2, &m);
		pprof_sink_maybe_flush(k);
	}
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct prof_mapping *mp = &p->mappings[i];

		pprof_pb_u64(&m, 1, i + 1);
		pprof_pb_u64(&m, 2, mp->start);
		pprof_pb_u64(&m, 3, mp->limit);
		pprof_pb_u64(&m, 4, mp->offset);
		pprof_pb_u64(&m, 5, mp->filename);
		pprof_pb_u64(&m, 6, mp->build_id);
		pb_bool(&m, 7, mp->has_functions);
		pb_bool(&m, 8, mp->has_filenames);
		pb_bool(&m, 9, mp->has_line_numbers);
		pb_bool(&m, 10, mp->has_inline_frames);
		pb_msg(out, 3, &m);
		pprof_sink_maybe_flush(k);
	}
	for (size_t i = 0; i < p->nr_locations && !k->failed; i++) {
		const struct prof_location *l = &p->locations[i];

		pprof_pb_u64(&m, 1, i + 1);
		if (l->mapping != PROF_NONE)
			pprof_pb_u64(&m, 2, (uint64_t)l->mapping + 1);
		pprof_pb_u64(&m, 3, l->address);
		for (uint32_t k2 = 0; k2 < l->nr_lines; k2++) {
			const struct prof_line *ln = &p->lines[l->first_line + k2];

			pprof_pb_u64(&m2, 1, (uint64_t)ln->function + 1);
			pb_i64(&m2, 2, ln->line);
			pb_i64(&m2, 3, ln->column);
			pb_msg(&m, 4, &m2);
		}
		pb_msg(out, 4, &m);
		pprof_sink_maybe_flush(k);
	}
	for (size_t i = 0; i < p->nr_functions && !k->failed; i++) {
		const struct prof_function *f = &p->functions[i];

		pprof_pb_u64(&m, 1, i + 1);
		pprof_pb_u64(&m, 2, f->name);
		pprof_pb_u64(&m, 3, f->system_name);
		pprof_pb_u64(&m, 4, f->filename);
		pb_i64(&m, 5, f->start_line);
		pb_msg(out, 5, &m);
		pprof_sink_maybe_flush(k);
	}
	for (uint32_t i = 0; i < p->strs.count && !k->failed; i++) {
		const char *s = strtab_get(&p->strs, i);

		pprof_pb_bytes(out, 6, s, strlen(s));
		pprof_sink_maybe_flush(k);
	}
	pb_i64(out, 9, p->time_nanos);
	pb_i64(out, 10, p->duration_nanos);
	if (p->period_type.type || p->period_type.unit)
		value_type(out, 11, &p->period_type, &m);
	pb_i64(out, 12, p->period);
	for (size_t i = 0; i < p->nr_comments; i++)
		pprof_pb_varint(&packed, p->comments[i]);
	if (packed.len)
		pprof_pb_bytes(out, 13, packed.data, packed.len);
	if (p->nr_types)
		pprof_pb_u64(out, 14, p->types[p->default_type].type);
	if (m.err || m2.err || packed.err)
		k->failed = true;
	pprof_sink_flush(k, true);
	dbuf_release(&m);
	dbuf_release(&m2);
	dbuf_release(&packed);
	return pprof_sink_status(k);
}

static enum conv_err run(const struct prof *p, int level, struct dbuf *mem, int fd,
			 struct io_flush *flush, uint64_t *bytes, int *io_errno)
{
	struct pprof_sink *k = malloc(sizeof(*k));
	enum conv_err err;

	if (!k)
		return CONV_E_NOMEM;
	err = pprof_sink_init(k, level, mem, fd, flush);
	if (err == CONV_E_OK)
		err = encode(p, k);
	if (bytes)
		*bytes = k->bytes;
	if (io_errno)
		*io_errno = k->io_errno;
	pprof_sink_release(k);
	free(k);
	return err;
}

enum conv_err pprof_encode(const struct prof *p, struct dbuf *out)
{
	return run(p, -1, out, -1, NULL, NULL, NULL);
}

/* libdeflate's scale, 0-12; below 0 its default (zlib's), 6 */
static int gz_level(int level)
{
	return level < 0 ? 6 : level > 12 ? 12 : level;
}

enum conv_err pprof_encode_gz(const struct prof *p, int level, struct dbuf *out)
{
	return run(p, gz_level(level), out, -1, NULL, NULL, NULL);
}

enum conv_err pprof_write_gz(const struct prof *p, int level, int fd, struct io_flush *flush,
			     uint64_t *bytes, int *io_errno)
{
	return run(p, gz_level(level), NULL, fd, flush, bytes, io_errno);
}
