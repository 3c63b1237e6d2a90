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
 * gzip (RFC 1952): a sequence of members, each one FLUSH_AT bytes of the
 * encoding (the last one shorter) compressed on its own by libdeflate:
 *   1f 8b 08 | flags 0 | mtime 0 (4) | xfl | os | deflate data | crc32 (4) | isize (4)
 * A gzip reader decompresses the members one after another into one
 * stream, as Go's compress/gzip (which pprof uses) does by default.
 * Why members: libdeflate compresses whole buffers only, at twice zlib's
 * speed (bench/README.md); members keep memory at one buffer whatever the
 * profile's size.
 */
#include "pprofwriter/pprof.h"

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/io.h"
#include "model/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include <unistd.h>

static void pb_varint(struct dbuf *b, uint64_t v)
{
	if (dbuf_reserve(b, 10))
		b->len = (size_t)(cur_put_uleb128(b->data + b->len, v) - b->data);
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

/*
 * Where encoded bytes go: top-level fields collect in buf and leave it every
 * FLUSH_AT bytes, raw or as one gzip member, to a dbuf or to a file
 * descriptor. Memory stays at a few hundred KiB whatever the profile's size.
 */
#define FLUSH_AT (256u << 10)

struct sink {
	struct dbuf buf;
	struct libdeflate_compressor *gz; /* NULL: raw */
	unsigned char *zout;              /* one member */
	size_t zcap;
	struct dbuf *mem; /* NULL: write to fd */
	int fd;
	int io_errno;
	bool failed; /* out of memory, deflate error or I/O error (sticky) */
	uint64_t bytes;
	struct io_flush *flush; /* NULL: none */
};

static void sink_out(struct sink *k, const unsigned char *p, size_t n)
{
	k->bytes += n;
	if (k->mem) {
		if (!dbuf_append(k->mem, p, n))
			k->failed = true;
		return;
	}
	while (n) {
		ssize_t w = write(k->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			k->io_errno = w < 0 ? errno : ENOSPC;
			k->failed = true;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
	/* made durable while the rest is encoded (core/io.h) */
	io_flush_wrote(k->flush, k->bytes);
}

static void sink_flush(struct sink *k, bool last)
{
	if (k->buf.err)
		k->failed = true;
	if (k->failed)
		return;
	if (!k->gz) {
		sink_out(k, k->buf.data, k->buf.len);
	} else if (k->buf.len || (last && !k->bytes)) {
		/* nothing written yet at the end: one empty member, still a gzip file */
		size_t bound = libdeflate_gzip_compress_bound(k->gz, k->buf.len), n;

		if (bound > k->zcap) {
			unsigned char *nz = realloc(k->zout, bound);

			if (!nz) {
				k->failed = true;
				return;
			}
			k->zout = nz;
			k->zcap = bound;
		}
		n = libdeflate_gzip_compress(k->gz, k->buf.data, k->buf.len, k->zout, k->zcap);
		if (!n) { /* cannot happen with the bound's room */
			k->failed = true;
			return;
		}
		sink_out(k, k->zout, n);
	}
	dbuf_reset(&k->buf);
}

static void sink_maybe_flush(struct sink *k)
{
	if (k->buf.len >= FLUSH_AT)
		sink_flush(k, false);
}

static enum conv_err encode(const struct prof *p, struct sink *k)
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
			pb_varint(&packed, (uint64_t)locs[k2] + 1);
		if (packed.len)
			pb_bytes(&m, 1, packed.data, packed.len);
		dbuf_reset(&packed);
		for (size_t k2 = 0; k2 < p->nr_types; k2++)
			pb_varint(&packed, (uint64_t)prof_sample_value(p, s, k2));
		pb_bytes(&m, 2, packed.data, packed.len);
		dbuf_reset(&packed);
		for (uint32_t k2 = 0; k2 < s->nr_labels; k2++) {
			const struct prof_label *l = &p->labels[s->first_label + k2];

			pb_u64(&m2, 1, l->key);
			pb_u64(&m2, 2, l->str);
			pb_i64(&m2, 3, l->num);
			pb_u64(&m2, 4, l->unit);
			pb_msg(&m, 3, &m2);
		}
		pb_msg(out, 2, &m);
		sink_maybe_flush(k);
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
		sink_maybe_flush(k);
	}
	for (size_t i = 0; i < p->nr_locations && !k->failed; i++) {
		const struct prof_location *l = &p->locations[i];

		pb_u64(&m, 1, i + 1);
		if (l->mapping != PROF_NONE)
			pb_u64(&m, 2, (uint64_t)l->mapping + 1);
		pb_u64(&m, 3, l->address);
		for (uint32_t k2 = 0; k2 < l->nr_lines; k2++) {
			const struct prof_line *ln = &p->lines[l->first_line + k2];

			pb_u64(&m2, 1, (uint64_t)ln->function + 1);
			pb_i64(&m2, 2, ln->line);
			pb_i64(&m2, 3, ln->column);
			pb_msg(&m, 4, &m2);
		}
		pb_msg(out, 4, &m);
		sink_maybe_flush(k);
	}
	for (size_t i = 0; i < p->nr_functions && !k->failed; i++) {
		const struct prof_function *f = &p->functions[i];

		pb_u64(&m, 1, i + 1);
		pb_u64(&m, 2, f->name);
		pb_u64(&m, 3, f->system_name);
		pb_u64(&m, 4, f->filename);
		pb_i64(&m, 5, f->start_line);
		pb_msg(out, 5, &m);
		sink_maybe_flush(k);
	}
	for (uint32_t i = 0; i < p->strs.count && !k->failed; i++) {
		const char *s = strtab_get(&p->strs, i);

		pb_bytes(out, 6, s, strlen(s));
		sink_maybe_flush(k);
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
	if (m.err || m2.err || packed.err)
		k->failed = true;
	sink_flush(k, true);
	dbuf_release(&m);
	dbuf_release(&m2);
	dbuf_release(&packed);
	return k->io_errno ? CONV_E_IO : k->failed ? CONV_E_NOMEM : CONV_E_OK;
}

static enum conv_err run(const struct prof *p, int level, struct dbuf *mem, int fd,
			 struct io_flush *flush, uint64_t *bytes, int *io_errno)
{
	struct sink *k = calloc(1, sizeof(*k));
	enum conv_err err;

	if (!k)
		return CONV_E_NOMEM;
	dbuf_init(&k->buf, 0);
	k->mem = mem;
	k->fd = fd;
	k->flush = flush;
	/* libdeflate's gzip header has mtime 0 and no name: the same bytes every run */
	if (level >= 0 && !(k->gz = libdeflate_alloc_compressor(level))) {
		free(k);
		return CONV_E_NOMEM;
	}
	err = encode(p, k);
	if (k->gz)
		libdeflate_free_compressor(k->gz);
	free(k->zout);
	dbuf_release(&k->buf);
	if (bytes)
		*bytes = k->bytes;
	if (io_errno)
		*io_errno = k->io_errno;
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
