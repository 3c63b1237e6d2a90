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
 */
#include "pprofwriter/pprof.h"

#include "core/dbuf.h"
#include "model/profile.h"

#include <string.h>
#include <zlib.h>

static void pb_varint(struct dbuf *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	dbuf_append(b, buf, n);
}

static void pb_key(struct dbuf *b, unsigned field, unsigned wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

static void pb_u64(struct dbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, 0);
	pb_varint(b, v);
}

static void pb_i64(struct dbuf *b, unsigned field, int64_t v)
{
	pb_u64(b, field, (uint64_t)v); /* int64 is two's complement as varint */
}

static void pb_bool(struct dbuf *b, unsigned field, bool v)
{
	pb_u64(b, field, v ? 1 : 0);
}

static void pb_bytes(struct dbuf *b, unsigned field, const void *p, size_t n)
{
	pb_key(b, field, 2);
	pb_varint(b, n);
	dbuf_append(b, p, n);
}

/* Writes a nested message from scratch buffer m, then empties m. */
static void pb_msg(struct dbuf *b, unsigned field, struct dbuf *m)
{
	pb_bytes(b, field, m->data, m->len);
	dbuf_reset(m);
}

static void value_type(struct dbuf *b, unsigned field, const struct prof_value_type *t,
		       struct dbuf *m)
{
	pb_u64(m, 1, t->type);
	pb_u64(m, 2, t->unit);
	pb_msg(b, field, m);
}

enum conv_err pprof_encode(const struct prof *p, struct dbuf *out)
{
	struct dbuf m, m2, packed;

	dbuf_init(&m, 0);
	dbuf_init(&m2, 0);
	dbuf_init(&packed, 0);
	for (size_t i = 0; i < p->nr_types; i++)
		value_type(out, 1, &p->types[i], &m);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t n;
		const uint32_t *locs = prof_stack_locs(p, s->stack, &n);

		for (uint32_t k = 0; k < n; k++)
			pb_varint(&packed, (uint64_t)locs[k] + 1);
		if (packed.len)
			pb_bytes(&m, 1, packed.data, packed.len);
		dbuf_reset(&packed);
		for (size_t k = 0; k < p->nr_types; k++)
			pb_varint(&packed, (uint64_t)p->values[s->first_value + k]);
		pb_bytes(&m, 2, packed.data, packed.len);
		dbuf_reset(&packed);
		for (uint32_t k = 0; k < s->nr_labels; k++) {
			const struct prof_label *l = &p->labels[s->first_label + k];

			pb_u64(&m2, 1, l->key);
			pb_u64(&m2, 2, l->str);
			pb_i64(&m2, 3, l->num);
			pb_u64(&m2, 4, l->unit);
			pb_msg(&m, 3, &m2);
		}
		pb_msg(out, 2, &m);
	}
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct prof_mapping *mp = &p->mappings[i];

		pb_u64(&m, 1, i + 1);
		pb_u64(&m, 2, mp->start);
		pb_u64(&m, 3, mp->limit);
		pb_u64(&m, 4, mp->offset);
		pb_u64(&m, 5, mp->filename);
		pb_u64(&m, 6, mp->build_id);
		pb_bool(&m, 7, mp->has_functions);
		pb_bool(&m, 8, mp->has_filenames);
		pb_bool(&m, 9, mp->has_line_numbers);
		pb_bool(&m, 10, mp->has_inline_frames);
		pb_msg(out, 3, &m);
	}
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct prof_location *l = &p->locations[i];

		pb_u64(&m, 1, i + 1);
		if (l->mapping != PROF_NONE)
			pb_u64(&m, 2, (uint64_t)l->mapping + 1);
		pb_u64(&m, 3, l->address);
		for (uint32_t k = 0; k < l->nr_lines; k++) {
			const struct prof_line *ln = &p->lines[l->first_line + k];

			pb_u64(&m2, 1, (uint64_t)ln->function + 1);
			pb_i64(&m2, 2, ln->line);
			pb_i64(&m2, 3, ln->column);
			pb_msg(&m, 4, &m2);
		}
		pb_msg(out, 4, &m);
	}
	for (size_t i = 0; i < p->nr_functions; i++) {
		const struct prof_function *f = &p->functions[i];

		pb_u64(&m, 1, i + 1);
		pb_u64(&m, 2, f->name);
		pb_u64(&m, 3, f->system_name);
		pb_u64(&m, 4, f->filename);
		pb_i64(&m, 5, f->start_line);
		pb_msg(out, 5, &m);
	}
	for (uint32_t i = 0; i < p->strs.count; i++) {
		const char *s = strtab_get(&p->strs, i);

		pb_bytes(out, 6, s, strlen(s));
	}
	pb_i64(out, 9, p->time_nanos);
	pb_i64(out, 10, p->duration_nanos);
	if (p->period_type.type || p->period_type.unit)
		value_type(out, 11, &p->period_type, &m);
	pb_i64(out, 12, p->period);
	for (size_t i = 0; i < p->nr_comments; i++)
		pb_varint(&packed, p->comments[i]);
	if (packed.len)
		pb_bytes(out, 13, packed.data, packed.len);
	if (p->nr_types)
		pb_u64(out, 14, p->types[p->default_type].type);
	{
		bool bad = m.err || m2.err || packed.err || out->err;

		dbuf_release(&m);
		dbuf_release(&m2);
		dbuf_release(&packed);
		return bad ? CONV_E_NOMEM : CONV_E_OK;
	}
}

enum conv_err pprof_encode_gz(const struct prof *p, int level, struct dbuf *out)
{
	struct dbuf raw;
	z_stream z;
	enum conv_err err;
	int zr;

	dbuf_init(&raw, 0);
	err = pprof_encode(p, &raw);
	if (err) {
		dbuf_release(&raw);
		return err;
	}
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: gzip wrapper with mtime 0 and no name (deterministic) */
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		dbuf_release(&raw);
		return CONV_E_NOMEM;
	}
	z.next_in = raw.data;
	z.avail_in = (uInt)raw.len;
	do {
		if (!dbuf_reserve(out, 1u << 16)) {
			deflateEnd(&z);
			dbuf_release(&raw);
			return CONV_E_NOMEM;
		}
		z.next_out = out->data + out->len;
		z.avail_out = 1u << 16;
		zr = deflate(&z, Z_FINISH);
		out->len += (1u << 16) - z.avail_out;
	} while (zr == Z_OK || zr == Z_BUF_ERROR);
	deflateEnd(&z);
	dbuf_release(&raw);
	return zr == Z_STREAM_END ? CONV_E_OK : CONV_E_NOMEM;
}
