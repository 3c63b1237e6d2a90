#include "pprofedit/pprofedit.h"

#include "core/pprofpb.h"

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/strtab.h"
#include "core/vec.h"

#include <inttypes.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { F_MAPPING = 3, F_LOCATION = 4, F_FUNCTION = 5, F_STRING = 6 };

/* What a field copied as it is goes into the output's buffer at a time. */
#define COPY_STEP ((size_t)256 << 10)

size_t ppe_inflate_cap(size_t len, size_t max_len)
{
	size_t cap = len > SIZE_MAX / PPE_INFLATE_RATIO ? SIZE_MAX : len * PPE_INFLATE_RATIO;

	if (cap < PPE_INFLATE_FLOOR)
		cap = PPE_INFLATE_FLOOR;
	return cap < max_len ? cap : max_len;
}

const uint8_t *ppe_str_bytes(const struct ppe_profile *p, uint64_t idx, size_t *len)
{
	if (idx >= p->nr_strs) {
		*len = 0;
		return (const uint8_t *)"";
	}
	*len = p->str_lens[idx];
	return p->strs[idx];
}

enum conv_err ppe_edit_fits(const struct ppe_profile *p, const struct ppe_edit *e, struct conv_diag *diag)
{
	if (e->nr_functions && p->max_function_id > UINT64_MAX - e->nr_functions)
		return conv_fail(diag, CONV_E_LIMIT, UINT64_MAX,
				 "a function id of %" PRIu64 " leaves no room above it for the %zu new functions' ids",
				 p->max_function_id, e->nr_functions);
	return CONV_E_OK;
}

/* Whether buf starts as a gzip member does. */
static bool ppe_is_gzip(const uint8_t *buf, size_t len)
{
	return len >= 18 && buf[0] == 0x1f && buf[1] == 0x8b && buf[2] == 8;
}

/* Inflates every gzip member of buf (conv writes one per 256 KiB) into p->owned. */
static enum conv_err gunzip(struct ppe_profile *p, const uint8_t *buf, size_t len, size_t max_len,
			    struct conv_diag *diag)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t alloc = 0, want = len * 4 > ((size_t)1 << 20) ? len * 4 : (size_t)1 << 20, used = 0, in = 0;
	enum conv_err err = CONV_E_OK;

	if (!d)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	/*
	 * The whole cap as address space at once, touched only as it fills:
	 * growing by realloc re-inflated members and copied, twice the memory
	 * at the end (a bomb refused at 64 MiB peaked at 130 MB). Where it
	 * cannot be had, the buffer grows as before.
	 */
	{
		void *m = mmap(NULL, max_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		if (m != MAP_FAILED) {
			p->mapped = m;
			p->mapped_len = max_len;
			alloc = max_len;
		}
	}
	while (in < len && !err) {
		size_t in_used = 0, out_n = 0;
		enum libdeflate_result r;

		if (want > max_len)
			want = max_len;
		if (alloc < want && !p->mapped) {
			uint8_t *n = realloc(p->owned, want);

			if (!n) {
				err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
				break;
			}
			p->owned = n;
			alloc = want;
		}
		r = libdeflate_gzip_decompress_ex(d, buf + in, len - in, (p->mapped ? p->mapped : p->owned) + used,
						  alloc - used, &in_used, &out_n);
		if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
			if (alloc >= max_len)
				err = conv_fail(diag, CONV_E_LIMIT, in,
						"gzip: inflates to more than %zu bytes from %zu (a profile "
						"inflates %u times its size at most, %u MiB whatever its size)",
						max_len, len, PPE_INFLATE_RATIO, (unsigned)(PPE_INFLATE_FLOOR >> 20));
			want = alloc > max_len / 2 ? max_len : alloc * 2;
			continue;
		}
		if (r != LIBDEFLATE_SUCCESS) {
			err = conv_fail(diag, CONV_E_FORMAT, in, "not a valid gzip member");
			break;
		}
		used += out_n;
		in += in_used;
	}
	libdeflate_free_decompressor(d);
	p->buf = p->mapped ? p->mapped : p->owned;
	p->len = used;
	return err;
}

/* Skips a field's value of wire type wt; false (c failed) for a type protobuf does not have. */
static bool skip_value(struct cur *c, unsigned wt)
{
	switch (wt) {
	case PPROF_WT_VARINT:
		(void)cur_uleb128_long(c);
		return cur_ok(c);
	case PPROF_WT_I64:
		cur_skip(c, 8);
		return cur_ok(c);
	case PPROF_WT_LEN: {
		uint64_t n = cur_uleb128_long(c);

		if (n > cur_remaining(c)) {
			cur_fail(c);
			return false;
		}
		cur_skip(c, (size_t)n);
		return cur_ok(c);
	}
	case PPROF_WT_I32:
		cur_skip(c, 4);
		return cur_ok(c);
	default:
		cur_fail(c);
		return false;
	}
}

bool ppe_sub_next(struct cur *c, uint32_t *num, unsigned *wt, uint64_t *v, struct cur *sub)
{
	uint64_t key;

	if (!cur_remaining(c))
		return false;
	key = cur_uleb128_long(c);
	*num = (uint32_t)(key >> 3);
	*wt = (unsigned)(key & 7);
	*v = 0;
	if (*wt == PPROF_WT_VARINT) {
		*v = cur_uleb128_long(c);
	} else if (*wt == PPROF_WT_LEN) {
		uint64_t n = cur_uleb128_long(c);

		if (!cur_ok(c) || n > cur_remaining(c)) {
			cur_fail(c);
			return false;
		}
		*sub = cur_sub(c, (size_t)n);
	} else {
		skip_value(c, *wt);
	}
	return cur_ok(c);
}

/* One top-level field at *pos (false at the end or when malformed: diag says, when given). */
static bool field_read(const uint8_t *buf, size_t len, size_t *pos, struct ppe_field *f, enum conv_err *err,
		       struct conv_diag *diag)
{
	struct cur c;
	size_t off = *pos;
	uint64_t key;

	*err = CONV_E_OK;
	if (off >= len)
		return false;
	cur_init(&c, buf, len, false);
	c.pos = off;
	key = cur_uleb128_long(&c);
	if (!cur_ok(&c) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) {
		*err = conv_fail(diag, CONV_E_FORMAT, off, "not a protobuf field");
		return false;
	}
	memset(f, 0, sizeof(*f));
	f->number = (uint32_t)(key >> 3);
	f->off = off;
	if ((key & 7) == PPROF_WT_LEN) {
		uint64_t n = cur_uleb128_long(&c);

		if (!cur_ok(&c) || n > cur_remaining(&c)) {
			*err = conv_fail(diag, CONV_E_FORMAT, off, "field %u runs past the end", f->number);
			return false;
		}
		f->val_off = c.pos;
		f->val_len = (size_t)n;
		cur_skip(&c, (size_t)n);
	} else if (!skip_value(&c, (unsigned)(key & 7))) {
		*err = conv_fail(diag, CONV_E_FORMAT, off, "field %u: bad value", f->number);
		return false;
	}
	if ((f->number == F_MAPPING || f->number == F_LOCATION || f->number == F_FUNCTION ||
	     f->number == F_STRING) && (key & 7) != PPROF_WT_LEN) {
		*err = conv_fail(diag, CONV_E_FORMAT, off, "field %u is not a message", f->number);
		return false;
	}
	f->len = c.pos - off;
	*pos = c.pos;
	return true;
}

bool ppe_field_next(const struct ppe_profile *p, size_t *pos, struct ppe_field *f)
{
	enum conv_err err;

	return field_read(p->buf, p->len, pos, f, &err, NULL);
}

/*
 * Counts the top-level fields and the tables' entries. The fields are not
 * kept (each is walked again where it is needed): a field can be two bytes,
 * its description was forty.
 */
static enum conv_err scan_fields(struct ppe_profile *p, size_t *nr_lines, struct conv_diag *diag)
{
	struct ppe_field f;
	size_t pos = 0;
	enum conv_err err = CONV_E_OK;

	*nr_lines = 0;
	while (field_read(p->buf, p->len, &pos, &f, &err, diag)) {
		if (f.number == F_LOCATION) {
			/* its lines, so that the table is allocated once (a malformed one fails later) */
			struct cur c, sub;
			uint32_t n;
			unsigned wt;
			uint64_t v;

			cur_init(&c, p->buf + f.val_off, f.val_len, false);
			while (ppe_sub_next(&c, &n, &wt, &v, &sub))
				*nr_lines += wt == PPROF_WT_LEN && n == 4;
		}
		p->nr_mappings += f.number == F_MAPPING;
		p->nr_locations += f.number == F_LOCATION;
		p->nr_functions += f.number == F_FUNCTION;
		p->nr_strs += f.number == F_STRING;
		p->nr_fields++;
	}
	return err;
}

static bool parse_mapping(struct ppe_mapping *m, struct cur c)
{
	uint32_t n;
	unsigned wt;
	uint64_t v;
	struct cur sub;

	while (ppe_sub_next(&c, &n, &wt, &v, &sub)) {
		if (wt != PPROF_WT_VARINT)
			continue;
		switch (n) {
		case 1: m->id = v; break;
		case 2: m->start = v; break;
		case 3: m->limit = v; break;
		case 4: m->offset = v; break;
		case 5: m->filename = v; break;
		case 6: m->build_id = v; break;
		case 7: m->has_functions = v != 0; break;
		case 8: m->has_filenames = v != 0; break;
		case 9: m->has_line_numbers = v != 0; break;
		case 10: m->has_inline_frames = v != 0; break;
		default: break;
		}
	}
	return cur_ok(&c);
}

static bool parse_function(struct ppe_function *f, struct cur c)
{
	uint32_t n;
	unsigned wt;
	uint64_t v;
	struct cur sub;

	while (ppe_sub_next(&c, &n, &wt, &v, &sub)) {
		if (wt != PPROF_WT_VARINT)
			continue;
		if (n == 1)
			f->id = v;
		else if (n == 2)
			f->name = v;
		else if (n == 3)
			f->system_name = v;
		else if (n == 4)
			f->filename = v;
		else if (n == 5)
			f->start_line = (int64_t)v;
	}
	return cur_ok(&c);
}

static bool parse_location(struct ppe_profile *p, struct ppe_location *l, struct cur c, size_t *cap_lines)
{
	uint32_t n;
	unsigned wt;
	uint64_t v;
	struct cur sub;

	l->first_line = (uint32_t)p->nr_lines;
	while (ppe_sub_next(&c, &n, &wt, &v, &sub)) {
		if (wt == PPROF_WT_VARINT && n == 1) {
			l->id = v;
		} else if (wt == PPROF_WT_VARINT && n == 2) {
			l->mapping_id = v;
		} else if (wt == PPROF_WT_VARINT && n == 3) {
			l->address = v;
		} else if (wt == PPROF_WT_LEN && n == 4) {
			struct ppe_line *ln;
			uint32_t n2;
			unsigned wt2;
			uint64_t v2;
			struct cur sub2;

			if (p->nr_lines >= UINT32_MAX ||
			    !vec_reserve((void **)&p->lines, cap_lines, p->nr_lines + 1, sizeof(*ln)))
				return false;
			ln = &p->lines[p->nr_lines++];
			memset(ln, 0, sizeof(*ln));
			while (ppe_sub_next(&sub, &n2, &wt2, &v2, &sub2)) {
				if (wt2 != PPROF_WT_VARINT)
					continue;
				if (n2 == 1)
					ln->function_id = v2;
				else if (n2 == 2)
					ln->line = (int64_t)v2;
				else if (n2 == 3)
					ln->column = (int64_t)v2;
			}
			if (!cur_ok(&sub))
				return false;
		}
	}
	l->nr_lines = (uint32_t)(p->nr_lines - l->first_line);
	return cur_ok(&c);
}

/* Each table's entries, from the fields scan_fields found. */
static enum conv_err parse_tables(struct ppe_profile *p, size_t nr_lines, struct conv_diag *diag)
{
	size_t ms = 0, ls = 0, fs = 0, ss = 0, cap_lines = nr_lines ? nr_lines : 1;

	p->strs = calloc(p->nr_strs ? p->nr_strs : 1, sizeof(*p->strs));
	p->str_lens = calloc(p->nr_strs ? p->nr_strs : 1, sizeof(*p->str_lens));
	p->mappings = calloc(p->nr_mappings ? p->nr_mappings : 1, sizeof(*p->mappings));
	p->locations = calloc(p->nr_locations ? p->nr_locations : 1, sizeof(*p->locations));
	p->functions = calloc(p->nr_functions ? p->nr_functions : 1, sizeof(*p->functions));
	p->lines = malloc(cap_lines * sizeof(*p->lines));
	if (!p->strs || !p->str_lens || !p->mappings || !p->locations || !p->functions || !p->lines)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	struct ppe_field field;
	size_t pos = 0;

	while (ppe_field_next(p, &pos, &field)) {
		const struct ppe_field *f = &field;
		struct cur c;
		bool ok = true;

		cur_init(&c, p->buf + f->val_off, f->val_len, false);
		switch (f->number) {
		case F_STRING:
			p->strs[ss] = p->buf + f->val_off;
			p->str_lens[ss++] = f->val_len;
			break;
		case F_MAPPING:
			ok = parse_mapping(&p->mappings[ms++], c);
			break;
		case F_LOCATION:
			ok = parse_location(p, &p->locations[ls++], c, &cap_lines);
			break;
		case F_FUNCTION:
			ok = parse_function(&p->functions[fs], c);
			if (p->functions[fs].id > p->max_function_id)
				p->max_function_id = p->functions[fs].id;
			fs++;
			break;
		default:
			break;
		}
		if (!ok)
			return conv_fail(diag, CONV_E_FORMAT, f->off, "field %u: a malformed message", f->number);
	}
	if (p->nr_strs && p->str_lens[0])
		return conv_fail(diag, CONV_E_FORMAT, UINT64_MAX, "string_table[0] is not \"\"");
	return CONV_E_OK;
}

/*
 * Whether the tables fit in PPE_TABLE_RATIO times the protobuf (or
 * PPE_TABLE_FLOOR): each entry costs 16 to 56 bytes, and a message can be
 * two; CONV_E_LIMIT (diag says) when not.
 */
static enum conv_err check_tables(const struct ppe_profile *p, size_t nr_lines, struct conv_diag *diag)
{
	double need = (double)p->nr_strs * (sizeof(*p->strs) + sizeof(*p->str_lens)) +
		      (double)p->nr_mappings * sizeof(*p->mappings) +
		      (double)p->nr_locations * sizeof(*p->locations) +
		      (double)p->nr_functions * sizeof(*p->functions) + (double)nr_lines * sizeof(*p->lines);
	double room = (double)p->len * PPE_TABLE_RATIO + (double)PPE_TABLE_FLOOR;

	if (need > room)
		return conv_fail(diag, CONV_E_LIMIT, UINT64_MAX,
				 "%zu strings, %zu mappings, %zu locations, %zu lines and %zu functions in %zu "
				 "bytes: their tables would take %.0f bytes, more than %u times the profile",
				 p->nr_strs, p->nr_mappings, p->nr_locations, nr_lines, p->nr_functions, p->len,
				 need, PPE_TABLE_RATIO);
	return CONV_E_OK;
}

enum conv_err ppe_parse(struct ppe_profile *p, const uint8_t *buf, size_t len, size_t max_len,
			struct conv_diag *diag)
{
	enum conv_err err = CONV_E_OK;
	size_t nr_lines = 0;

	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->len = len;
	if (ppe_is_gzip(buf, len)) {
		p->gzipped = true;
		err = gunzip(p, buf, len, ppe_inflate_cap(len, max_len), diag);
	}
	if (!err)
		err = scan_fields(p, &nr_lines, diag);
	if (!err)
		err = check_tables(p, nr_lines, diag);
	if (!err)
		err = parse_tables(p, nr_lines, diag);
	if (err)
		ppe_release(p);
	return err;
}

void ppe_release(struct ppe_profile *p)
{
	free(p->owned);
	if (p->mapped)
		munmap(p->mapped, p->mapped_len);
	free(p->strs);
	free(p->str_lens);
	free(p->mappings);
	free(p->locations);
	free(p->lines);
	free(p->functions);
	memset(p, 0, sizeof(*p));
}

void ppe_str(const struct ppe_profile *p, uint64_t idx, char *out, size_t n)
{
	size_t k;

	if (!n)
		return;
	if (idx >= p->nr_strs) {
		out[0] = 0;
		return;
	}
	k = p->str_lens[idx] < n - 1 ? p->str_lens[idx] : n - 1;
	memcpy(out, p->strs[idx], k);
	out[k] = 0;
}

bool ppe_edit_init(struct ppe_edit *e, const struct ppe_profile *p)
{
	memset(e, 0, sizeof(*e));
	e->loc_first = calloc(p->nr_locations ? p->nr_locations : 1, sizeof(*e->loc_first));
	e->loc_nr = calloc(p->nr_locations ? p->nr_locations : 1, sizeof(*e->loc_nr));
	e->map_flags = calloc(p->nr_mappings ? p->nr_mappings : 1, 1);
	if (!e->loc_first || !e->loc_nr || !e->map_flags) {
		ppe_edit_release(e);
		return false;
	}
	return true;
}

void ppe_edit_release(struct ppe_edit *e)
{
	free(e->loc_first);
	free(e->loc_nr);
	free(e->lines);
	free(e->functions);
	free(e->map_flags);
	memset(e, 0, sizeof(*e));
}

/* ---- writing ---- */

/* Copies the subfields of a message but those numbered drop_lo..drop_hi into out. */
static void copy_but(struct dbuf *out, const uint8_t *val, size_t len, uint32_t drop_lo, uint32_t drop_hi)
{
	struct cur c;

	cur_init(&c, val, len, false);
	while (cur_remaining(&c)) {
		size_t off = c.pos;
		uint64_t key = cur_uleb128_long(&c);

		/* parsed before: well-formed */
		if (!skip_value(&c, (unsigned)(key & 7)))
			break;
		if ((key >> 3) < drop_lo || (key >> 3) > drop_hi)
			dbuf_append(out, val + off, c.pos - off);
	}
}

static void write_mapping(struct dbuf *out, struct dbuf *msg, const struct ppe_profile *p,
			  const struct ppe_field *f, const struct ppe_mapping *m, unsigned add)
{
	dbuf_reset(msg);
	copy_but(msg, p->buf + f->val_off, f->val_len, 7, 10);
	pprof_pb_u64(msg, 7, m->has_functions || (add & PPE_HAS_FUNCTIONS));
	pprof_pb_u64(msg, 8, m->has_filenames || (add & PPE_HAS_FILENAMES));
	pprof_pb_u64(msg, 9, m->has_line_numbers || (add & PPE_HAS_LINE_NUMBERS));
	pprof_pb_u64(msg, 10, m->has_inline_frames || (add & PPE_HAS_INLINE_FRAMES));
	pprof_pb_bytes(out, F_MAPPING, msg->data, msg->len);
}

static void write_location(struct dbuf *out, struct dbuf *msg, struct dbuf *ln, const struct ppe_profile *p,
			   const struct ppe_field *f, const struct ppe_edit *e, size_t li)
{
	dbuf_reset(msg);
	copy_but(msg, p->buf + f->val_off, f->val_len, 4, 4);
	for (uint32_t k = 0; k < e->loc_nr[li]; k++) {
		const struct ppe_new_line *nl = &e->lines[e->loc_first[li] + k];

		dbuf_reset(ln);
		pprof_pb_u64(ln, 1, p->max_function_id + 1 + nl->function);
		pprof_pb_u64(ln, 2, (uint64_t)nl->line);
		pprof_pb_u64(ln, 3, (uint64_t)nl->column);
		pprof_pb_bytes(msg, 4, ln->data, ln->len); /* Location.line */
	}
	pprof_pb_bytes(out, F_LOCATION, msg->data, msg->len);
}

/*
 * The first new string's index: after the profile's own, whose first must
 * be "" (a profile without a string table gets one first).
 */
static uint64_t str_base(const struct ppe_profile *p)
{
	return p->nr_strs ? p->nr_strs : 1;
}

/* A new string's index: interned in t (id 0 is ""), placed after the profile's own. */
static uint64_t new_str(const struct ppe_profile *p, struct strtab *t, const char *s)
{
	uint32_t id = strtab_intern_cstr(t, s ? s : "");

	return id == 0 || id == STRTAB_NONE ? 0 : str_base(p) + id - 1;
}

static void write_functions(struct pprof_sink *s, struct dbuf *msg, const struct ppe_profile *p,
			    const struct ppe_edit *e, struct strtab *t)
{
	for (size_t k = 0; k < e->nr_functions; k++) {
		const struct ppe_new_function *nf = &e->functions[k];

		dbuf_reset(msg);
		pprof_pb_u64(msg, 1, p->max_function_id + 1 + k);
		pprof_pb_u64(msg, 2, new_str(p, t, nf->name));
		pprof_pb_u64(msg, 3, new_str(p, t, nf->system_name));
		pprof_pb_u64(msg, 4, new_str(p, t, nf->filename));
		pprof_pb_u64(msg, 5, (uint64_t)nf->start_line);
		pprof_pb_bytes(&s->buf, F_FUNCTION, msg->data, msg->len);
		pprof_sink_maybe_flush(s);
	}
	if (!p->nr_strs && t->count > 1) {
		pprof_pb_key(&s->buf, F_STRING, PPROF_WT_LEN);
		pprof_pb_varint(&s->buf, 0);
	}
	for (uint32_t id = 1; id < t->count; id++) {
		pprof_pb_key(&s->buf, F_STRING, PPROF_WT_LEN);
		pprof_pb_varint(&s->buf, t->lens[id]);
		dbuf_append(&s->buf, t->strs[id], t->lens[id]);
		pprof_sink_maybe_flush(s);
	}
}

/* The rewrite into s: the fields in order, edited ones re-encoded, then the new functions and strings. */
static enum conv_err write_all(const struct ppe_profile *p, const struct ppe_edit *e, struct pprof_sink *s)
{
	struct dbuf msg, ln;
	struct strtab t;
	size_t mi = 0, li = 0;

	dbuf_init(&msg, 0);
	dbuf_init(&ln, 0);
	strtab_init(&t);
	struct ppe_field field;
	size_t pos = 0;

	while (!s->failed && ppe_field_next(p, &pos, &field)) {
		const struct ppe_field *f = &field;

		if (f->number == F_MAPPING && e->map_flags[mi]) {
			write_mapping(&s->buf, &msg, p, f, &p->mappings[mi], e->map_flags[mi]);
		} else if (f->number == F_LOCATION && e->loc_nr[li]) {
			write_location(&s->buf, &msg, &ln, p, f, e, li);
		} else {
			/* a large field in steps: the sink's buffer stays a step, not the field */
			for (size_t done = 0; done < f->len && !s->failed;) {
				size_t n = f->len - done < COPY_STEP ? f->len - done : COPY_STEP;

				dbuf_append(&s->buf, p->buf + f->off + done, n);
				done += n;
				pprof_sink_maybe_flush(s);
			}
		}
		mi += f->number == F_MAPPING;
		li += f->number == F_LOCATION;
		pprof_sink_maybe_flush(s);
	}
	write_functions(s, &msg, p, e, &t);
	if (msg.err || ln.err)
		s->failed = true;
	pprof_sink_flush(s, true);
	dbuf_release(&msg);
	dbuf_release(&ln);
	strtab_release(&t);
	return pprof_sink_status(s);
}

/* level 6: a one-off rewrite, not the conversion's hot path */
static enum conv_err write_to(const struct ppe_profile *p, const struct ppe_edit *e, bool gzip,
			      struct dbuf *out, int fd, struct io_flush *flush, uint64_t *bytes, int *io_errno)
{
	struct pprof_sink s;
	enum conv_err err;

	if (bytes)
		*bytes = 0;
	if (io_errno)
		*io_errno = 0;
	if (ppe_edit_fits(p, e, NULL))
		return CONV_E_LIMIT;
	err = pprof_sink_init(&s, gzip ? 6 : -1, out, fd, flush);

	if (err == CONV_E_OK)
		err = write_all(p, e, &s);
	if (bytes)
		*bytes = s.bytes;
	if (io_errno)
		*io_errno = s.io_errno;
	pprof_sink_release(&s);
	return err;
}

enum conv_err ppe_write(const struct ppe_profile *p, const struct ppe_edit *e, bool gzip,
			struct dbuf *out)
{
	return write_to(p, e, gzip, out, -1, NULL, NULL, NULL);
}

enum conv_err ppe_write_fd(const struct ppe_profile *p, const struct ppe_edit *e, bool gzip, int fd,
			   struct io_flush *flush, uint64_t *bytes, int *io_errno)
{
	return write_to(p, e, gzip, NULL, fd, flush, bytes, io_errno);
}
