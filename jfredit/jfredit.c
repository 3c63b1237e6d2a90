#include "jfredit/jfredit.h"

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 68
#define MAX_DEPTH 32

/* ---- encodings ---- */

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* JFR's varint: seven bits a byte, little end first; a ninth byte holds eight. */
static uint64_t jv(struct cur *c)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		uint8_t b = cur_u8(c);

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v | (uint64_t)cur_u8(c) << 56;
}

/* A count read from the file: false (c failed) when fewer bytes than that are left, one at least each. */
static bool count_ok(struct cur *c, uint64_t n)
{
	if (n > cur_remaining(c)) {
		cur_fail(c);
		return false;
	}
	return cur_ok(c);
}

/* Appends code point u as UTF-8. */
static void put_utf8(struct dbuf *out, uint32_t u)
{
	char b[4];
	size_t n;

	if (u < 0x80) {
		b[0] = (char)u;
		n = 1;
	} else if (u < 0x800) {
		b[0] = (char)(0xc0 | u >> 6);
		b[1] = (char)(0x80 | (u & 0x3f));
		n = 2;
	} else if (u < 0x10000) {
		b[0] = (char)(0xe0 | u >> 12);
		b[1] = (char)(0x80 | (u >> 6 & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | u >> 18);
		b[1] = (char)(0x80 | (u >> 12 & 0x3f));
		b[2] = (char)(0x80 | (u >> 6 & 0x3f));
		b[3] = (char)(0x80 | (u & 0x3f));
		n = 4;
	}
	dbuf_append(out, b, n);
}

/*
 * A string: its encoding byte and payload, appended to out as UTF-8 when
 * out is not NULL (then *null says whether it was null). A reference into
 * the String pool (encoding 2) is skipped but not decoded (false when out).
 */
static bool read_string(struct cur *c, struct dbuf *out, bool *null)
{
	uint8_t enc = cur_u8(c);
	uint64_t n;

	if (null)
		*null = enc == 0;
	switch (enc) {
	case 0:
	case 1:
		return cur_ok(c);
	case 2:
		(void)jv(c);
		return cur_ok(c) && !out;
	case 3:
	case 5:
		n = jv(c);
		if (!count_ok(c, n))
			return false;
		if (!out) {
			cur_skip(c, (size_t)n);
		} else if (enc == 3) {
			dbuf_append(out, cur_view(c, (size_t)n), (size_t)n);
		} else {
			for (uint64_t i = 0; i < n; i++)
				put_utf8(out, cur_u8(c));
		}
		return cur_ok(c);
	case 4:
		n = jv(c);
		if (!count_ok(c, n))
			return false;
		for (uint64_t i = 0; i < n && cur_ok(c); i++) {
			uint32_t u = (uint32_t)(jv(c) & 0xffff);

			/* a surrogate pair is one code point; a lone surrogate becomes U+FFFD */
			if (u >= 0xd800 && u < 0xdc00 && i + 1 < n) {
				uint32_t lo = (uint32_t)(jv(c) & 0xffff);

				i++;
				u = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00)
								 : 0xfffd;
			} else if (u >= 0xd800 && u < 0xe000) {
				u = 0xfffd;
			}
			if (out)
				put_utf8(out, u);
		}
		return cur_ok(c);
	default:
		cur_fail(c);
		return false;
	}
}

/* ---- types ---- */

const struct jfe_type *jfe_type_of(const struct jfe_chunk *c, uint64_t id)
{
	uint64_t *v = hmap_get(&c->type_idx, hmap_hash(id));

	return v && c->types[*v - 1].id == id ? &c->types[*v - 1] : NULL;
}

const struct jfe_type *jfe_type_named(const struct jfe_chunk *c, const char *name)
{
	for (size_t i = 0; i < c->nr_types; i++)
		if (!strcmp(strtab_get(&c->names, c->types[i].name), name))
			return &c->types[i];
	return NULL;
}

static enum jfe_prim prim_of(const char *name)
{
	static const struct {
		const char *name;
		enum jfe_prim prim;
	} prims[] = {
		{ "boolean", JFE_BYTE }, { "byte", JFE_BYTE }, { "char", JFE_VARINT },
		{ "short", JFE_VARINT }, { "int", JFE_VARINT }, { "long", JFE_VARINT },
		{ "float", JFE_FLOAT }, { "double", JFE_DOUBLE }, { "java.lang.String", JFE_STRING },
	};

	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (!strcmp(prims[i].name, name))
			return prims[i].prim;
	return JFE_STRUCT;
}

static bool skip_type(const struct jfe_chunk *ch, struct cur *c, uint64_t type, int depth);

static bool skip_elem(const struct jfe_chunk *ch, struct cur *c, const struct jfe_field *fd, int depth)
{
	if (fd->cp) {
		(void)jv(c);
		return cur_ok(c);
	}
	return skip_type(ch, c, fd->type, depth + 1);
}

static bool skip_field(const struct jfe_chunk *ch, struct cur *c, const struct jfe_field *fd, int depth)
{
	uint64_t n;

	if (!fd->array)
		return skip_elem(ch, c, fd, depth);
	n = jv(c);
	if (!count_ok(c, n))
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!skip_elem(ch, c, fd, depth))
			return false;
	return true;
}

/* Skips a value of type `type`; false (c failed) when its bytes do not hold one. */
static bool skip_type(const struct jfe_chunk *ch, struct cur *c, uint64_t type, int depth)
{
	const struct jfe_type *t = jfe_type_of(ch, type);

	if (!t || depth > MAX_DEPTH) {
		cur_fail(c);
		return false;
	}
	switch (t->prim) {
	case JFE_BYTE:
		(void)cur_u8(c);
		return cur_ok(c);
	case JFE_VARINT:
		(void)jv(c);
		return cur_ok(c);
	case JFE_FLOAT:
		cur_skip(c, 4);
		return cur_ok(c);
	case JFE_DOUBLE:
		cur_skip(c, 8);
		return cur_ok(c);
	case JFE_STRING:
		return read_string(c, NULL, NULL);
	case JFE_STRUCT:
		break;
	}
	for (uint32_t i = 0; i < t->nr_fields; i++)
		if (!skip_field(ch, c, &ch->fields[t->first_field + i], depth))
			return false;
	return true;
}

/* ---- metadata ---- */

/* What parsing the metadata's elements needs. */
struct meta {
	struct jfe_chunk *ch;
	uint32_t *str; /* metadata string index -> names id */
	uint64_t nr_str;
	size_t cap_types, cap_fields;
};

static const char *meta_str(const struct meta *m, uint64_t idx)
{
	return idx < m->nr_str ? strtab_get(&m->ch->names, m->str[idx]) : "";
}

enum elem_kind { EL_TOP, EL_OTHER, EL_ROOT, EL_METADATA, EL_CLASS, EL_FIELD };

/* One element and its children; where is what its parent is (EL_TOP: none, it is the root). */
static bool parse_element(struct meta *m, struct cur *c, enum elem_kind where, int depth)
{
	struct jfe_chunk *ch = m->ch;
	const char *name = meta_str(m, jv(c));
	uint64_t nattr = jv(c), nchild;
	enum elem_kind kind = EL_OTHER;
	struct jfe_type t;
	struct jfe_field fd;
	bool have_id = false;

	if (depth > MAX_DEPTH || !count_ok(c, nattr))
		return false;
	if (where == EL_TOP)
		kind = EL_ROOT;
	else if (where == EL_ROOT && !strcmp(name, "metadata"))
		kind = EL_METADATA;
	else if (where == EL_METADATA && !strcmp(name, "class"))
		kind = EL_CLASS;
	else if (where == EL_CLASS && !strcmp(name, "field"))
		kind = EL_FIELD;
	memset(&t, 0, sizeof(t));
	memset(&fd, 0, sizeof(fd));
	for (uint64_t i = 0; i < nattr; i++) {
		const char *k = meta_str(m, jv(c));
		uint64_t vi = jv(c);
		const char *v = meta_str(m, vi);

		if (kind == EL_CLASS && !strcmp(k, "id")) {
			t.id = strtoull(v, NULL, 10);
			have_id = true;
		} else if (kind == EL_CLASS && !strcmp(k, "name")) {
			t.name = vi < m->nr_str ? m->str[vi] : 0;
		} else if (kind == EL_CLASS && !strcmp(k, "simpleType")) {
			t.simple = !strcmp(v, "true");
		} else if (kind == EL_FIELD && !strcmp(k, "name")) {
			fd.name = vi < m->nr_str ? m->str[vi] : 0;
		} else if (kind == EL_FIELD && !strcmp(k, "class")) {
			fd.type = strtoull(v, NULL, 10);
		} else if (kind == EL_FIELD && !strcmp(k, "constantPool")) {
			fd.cp = !strcmp(v, "true");
		} else if (kind == EL_FIELD && !strcmp(k, "dimension")) {
			fd.array = strcmp(v, "0") != 0;
		}
	}
	if (!cur_ok(c))
		return false;
	if (kind == EL_CLASS) {
		if (!have_id || !vec_reserve((void **)&ch->types, &m->cap_types, ch->nr_types + 1, sizeof(t)))
			return false;
		t.prim = prim_of(strtab_get(&ch->names, t.name));
		t.first_field = (uint32_t)ch->nr_fields;
		ch->types[ch->nr_types++] = t;
	} else if (kind == EL_FIELD) {
		if (!ch->nr_types ||
		    !vec_reserve((void **)&ch->fields, &m->cap_fields, ch->nr_fields + 1, sizeof(fd)))
			return false;
		ch->fields[ch->nr_fields++] = fd;
		ch->types[ch->nr_types - 1].nr_fields++;
	}
	nchild = jv(c);
	if (!count_ok(c, nchild))
		return false;
	for (uint64_t i = 0; i < nchild; i++)
		if (!parse_element(m, c, kind, depth + 1))
			return false;
	return cur_ok(c);
}

/* The metadata record at the chunk's metadata offset: its strings, then its element tree. */
static enum conv_err parse_metadata(const struct jfe_file *f, struct jfe_chunk *ch, struct conv_diag *diag)
{
	size_t at = ch->off + (size_t)ch->meta_off;
	struct meta m;
	struct dbuf s;
	struct cur c;
	uint64_t size;
	bool ok = true;

	memset(&m, 0, sizeof(m));
	m.ch = ch;
	cur_init(&c, f->buf + at, ch->off + ch->size - at, false);
	size = jv(&c);
	if (!cur_ok(&c) || size > ch->off + ch->size - at || jv(&c) != 0)
		return conv_fail(diag, CONV_E_FORMAT, at, "no metadata record at the chunk's metadata offset");
	c.len = (size_t)size;
	(void)jv(&c); /* start time */
	(void)jv(&c); /* duration */
	(void)jv(&c); /* metadata id */
	m.nr_str = jv(&c);
	if (!count_ok(&c, m.nr_str))
		return conv_fail(diag, CONV_E_FORMAT, at, "metadata: a string count past the record");
	m.str = calloc(m.nr_str ? m.nr_str : 1, sizeof(*m.str));
	if (!m.str)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	dbuf_init(&s, 0);
	for (uint64_t i = 0; i < m.nr_str && ok; i++) {
		dbuf_reset(&s);
		ok = read_string(&c, &s, NULL);
		m.str[i] = strtab_intern(&ch->names, s.len ? (const char *)s.data : "", s.len);
		ok = ok && !s.err && m.str[i] != STRTAB_NONE;
	}
	dbuf_release(&s);
	ok = ok && parse_element(&m, &c, EL_TOP, 0);
	free(m.str);
	if (!ok)
		return conv_fail(diag, CONV_E_FORMAT, at + c.pos, "metadata: malformed (strings or elements)");
	for (size_t i = 0; i < ch->nr_types; i++)
		if (!hmap_put(&ch->type_idx, hmap_hash(ch->types[i].id), i + 1))
			return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	return CONV_E_OK;
}

/* ---- records and pools ---- */

static enum conv_err parse_records(const struct jfe_file *f, struct jfe_chunk *ch, struct conv_diag *diag)
{
	struct cur c;
	size_t cap = 0;

	cur_init(&c, f->buf + ch->off, ch->size, false);
	cur_skip(&c, HEADER_SIZE);
	while (cur_remaining(&c)) {
		size_t at = c.pos;
		uint64_t size = jv(&c);
		uint64_t type = jv(&c);
		struct jfe_record *r;

		if (!cur_ok(&c) || size < c.pos - at || size > ch->size - at)
			return conv_fail(diag, CONV_E_FORMAT, ch->off + at, "a record's size is past its chunk");
		if (!vec_reserve((void **)&ch->records, &cap, ch->nr_records + 1, sizeof(*r)))
			return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
		r = &ch->records[ch->nr_records++];
		r->off = ch->off + at;
		r->size = (size_t)size;
		r->type = type;
		c.pos = at + (size_t)size;
	}
	return CONV_E_OK;
}

static uint64_t entry_hash(uint64_t type, uint64_t key)
{
	return hmap_mix(hmap_hash(type), key);
}

/* The pools of checkpoint record ri: each entry's type, key and value bytes. */
static enum conv_err parse_checkpoint(const struct jfe_file *f, struct jfe_chunk *ch, uint32_t ri,
				      size_t *cap, struct conv_diag *diag)
{
	const struct jfe_record *r = &ch->records[ri];
	struct cur c;
	uint64_t pools;

	cur_init(&c, f->buf + r->off, r->size, false);
	(void)jv(&c); /* size */
	(void)jv(&c); /* type */
	(void)jv(&c); /* start time */
	(void)jv(&c); /* duration */
	(void)jv(&c); /* delta */
	(void)cur_u8(&c); /* checkpoint type */
	pools = jv(&c);
	if (!count_ok(&c, pools))
		return conv_fail(diag, CONV_E_FORMAT, r->off, "checkpoint: a pool count past the record");
	for (uint64_t p = 0; p < pools; p++) {
		uint64_t type = jv(&c), n = jv(&c);

		if (!count_ok(&c, n) || !jfe_type_of(ch, type))
			return conv_fail(diag, CONV_E_FORMAT, r->off + c.pos,
					 "checkpoint: a pool of an undeclared type, or a count past the record");
		for (uint64_t i = 0; i < n; i++) {
			struct jfe_entry *e;
			uint64_t key = jv(&c);
			size_t start = c.pos;

			if (!skip_type(ch, &c, type, 0))
				return conv_fail(diag, CONV_E_FORMAT, r->off + start,
						 "checkpoint: a pool entry its type does not describe");
			if (!vec_reserve((void **)&ch->entries, cap, ch->nr_entries + 1, sizeof(*e)))
				return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
			e = &ch->entries[ch->nr_entries];
			e->type = type;
			e->key = key;
			e->off = r->off + start;
			e->end = r->off + c.pos;
			e->record = ri;
			if (!hmap_get(&ch->entry_idx, entry_hash(type, key)) &&
			    !hmap_put(&ch->entry_idx, entry_hash(type, key), ch->nr_entries + 1))
				return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
			ch->nr_entries++;
		}
	}
	return CONV_E_OK;
}

const struct jfe_entry *jfe_entry_find(const struct jfe_chunk *c, uint64_t type, uint64_t key)
{
	uint64_t *v = hmap_get(&c->entry_idx, entry_hash(type, key));

	if (!v)
		return NULL;
	/* a hash shared by two (type, key): the first is indexed, look on from it */
	for (size_t i = *v - 1; i < c->nr_entries; i++)
		if (c->entries[i].type == type && c->entries[i].key == key)
			return &c->entries[i];
	for (size_t i = 0; i < c->nr_entries; i++)
		if (c->entries[i].type == type && c->entries[i].key == key)
			return &c->entries[i];
	return NULL;
}

static enum conv_err parse_chunk(const struct jfe_file *f, struct jfe_chunk *ch, struct conv_diag *diag)
{
	const uint8_t *h = f->buf + ch->off;
	enum conv_err err;
	size_t cap = 0;

	if (memcmp(h, "FLR", 4))
		return conv_fail(diag, CONV_E_FORMAT, ch->off, "not a JFR chunk (no FLR magic)");
	ch->major = (uint16_t)(h[4] << 8 | h[5]);
	ch->minor = (uint16_t)(h[6] << 8 | h[7]);
	ch->size = (size_t)be64(h + 8);
	ch->cp_off = be64(h + 16);
	ch->meta_off = be64(h + 24);
	ch->start_nanos = be64(h + 32);
	ch->duration_nanos = be64(h + 40);
	ch->start_ticks = be64(h + 48);
	ch->ticks_per_second = be64(h + 56);
	if (ch->major != 1 && ch->major != 2)
		return conv_fail(diag, CONV_E_UNSUPPORTED, ch->off, "JFR version %u.%u", ch->major, ch->minor);
	if (ch->size < HEADER_SIZE || ch->size > f->len - ch->off || ch->meta_off < HEADER_SIZE ||
	    ch->meta_off >= ch->size || ch->cp_off >= ch->size)
		return conv_fail(diag, CONV_E_FORMAT, ch->off, "a chunk header whose sizes or offsets are past the chunk");
	strtab_init(&ch->names);
	hmap_init(&ch->type_idx);
	hmap_init(&ch->entry_idx);
	err = parse_metadata(f, ch, diag);
	if (!err)
		err = parse_records(f, ch, diag);
	for (size_t i = 0; !err && i < ch->nr_records; i++)
		if (ch->records[i].type == 1)
			err = parse_checkpoint(f, ch, (uint32_t)i, &cap, diag);
	return err;
}

enum conv_err jfe_parse(struct jfe_file *f, const uint8_t *buf, size_t len, struct conv_diag *diag)
{
	size_t off = 0, cap = 0;
	enum conv_err err = CONV_E_OK;

	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->len = len;
	while (off < len && !err) {
		struct jfe_chunk *ch;

		if (len - off < HEADER_SIZE) {
			err = conv_fail(diag, CONV_E_FORMAT, off, "a chunk header cut short");
			break;
		}
		if (!vec_reserve((void **)&f->chunks, &cap, f->nr_chunks + 1, sizeof(*ch))) {
			err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
			break;
		}
		ch = &f->chunks[f->nr_chunks++];
		memset(ch, 0, sizeof(*ch));
		ch->off = off;
		err = parse_chunk(f, ch, diag);
		off += ch->size ? ch->size : len;
	}
	if (!err && !f->nr_chunks)
		err = conv_fail(diag, CONV_E_FORMAT, 0, "an empty file");
	if (err)
		jfe_release(f);
	return err;
}

void jfe_release(struct jfe_file *f)
{
	for (size_t i = 0; i < f->nr_chunks; i++) {
		struct jfe_chunk *ch = &f->chunks[i];

		strtab_release(&ch->names);
		free(ch->types);
		free(ch->fields);
		hmap_release(&ch->type_idx);
		free(ch->records);
		free(ch->entries);
		hmap_release(&ch->entry_idx);
	}
	free(f->chunks);
	memset(f, 0, sizeof(*f));
}

/* ---- values ---- */

bool jfe_value_field(const struct jfe_value *v, const char *name, struct jfe_value *out,
		     const struct jfe_field **field)
{
	const struct jfe_chunk *ch = v->c;
	struct cur c;

	if (v->key || !v->t || v->t->prim != JFE_STRUCT)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	for (uint32_t i = 0; i < v->t->nr_fields; i++) {
		const struct jfe_field *fd = &ch->fields[v->t->first_field + i];
		size_t start = c.pos;

		if (!skip_field(ch, &c, fd, 0))
			return false;
		if (!strcmp(strtab_get(&ch->names, fd->name), name)) {
			out->f = v->f;
			out->c = ch;
			out->t = jfe_type_of(ch, fd->type);
			out->key = fd->cp && !fd->array;
			out->off = v->off + start;
			out->end = v->off + c.pos;
			if (field)
				*field = fd;
			return out->t != NULL;
		}
	}
	return false;
}

bool jfe_value_u64(const struct jfe_value *v, uint64_t *out)
{
	struct cur c;

	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	if (v->key || (v->t && v->t->prim == JFE_VARINT))
		*out = jv(&c);
	else if (v->t && v->t->prim == JFE_BYTE)
		*out = cur_u8(&c);
	else
		return false;
	return cur_ok(&c);
}

bool jfe_value_str(const struct jfe_value *v, struct dbuf *out)
{
	struct cur c;
	bool null;

	if (v->key || !v->t)
		return false;
	if (v->t->prim == JFE_STRUCT && v->t->simple && v->t->nr_fields == 1) {
		struct jfe_value inner;

		return jfe_value_field(v, strtab_get(&v->c->names, v->c->fields[v->t->first_field].name),
				       &inner, NULL) &&
		       jfe_value_str(&inner, out);
	}
	if (v->t->prim != JFE_STRING)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	if (!read_string(&c, out, &null) || null)
		return false;
	return dbuf_putc(out, 0);
}

bool jfe_array_begin(const struct jfe_value *v, const struct jfe_field *field, struct jfe_array *a,
		     uint64_t *count)
{
	struct cur c;

	if (!field->array)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	a->v = v;
	a->field = field;
	a->left = jv(&c);
	a->pos = c.pos;
	*count = a->left;
	return cur_ok(&c);
}

bool jfe_array_next(struct jfe_array *a, struct jfe_value *elem, uint64_t *key)
{
	const struct jfe_value *v = a->v;
	struct cur c;
	size_t start;

	if (!a->left)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	c.pos = a->pos;
	start = c.pos;
	if (a->field->cp)
		*key = jv(&c);
	else if (!skip_type(v->c, &c, a->field->type, 0))
		return false;
	if (!cur_ok(&c))
		return false;
	elem->f = v->f;
	elem->c = v->c;
	elem->t = jfe_type_of(v->c, a->field->type);
	elem->key = a->field->cp;
	elem->off = v->off + start;
	elem->end = v->off + c.pos;
	a->pos = c.pos;
	a->left--;
	return true;
}

bool jfe_event_value(const struct jfe_file *f, const struct jfe_chunk *c, const struct jfe_record *r,
		     struct jfe_value *out)
{
	struct cur cu;

	cur_init(&cu, f->buf + r->off, r->size, false);
	(void)jv(&cu);
	(void)jv(&cu);
	out->f = f;
	out->c = c;
	out->t = jfe_type_of(c, r->type);
	out->key = false;
	out->off = r->off + cu.pos;
	out->end = r->off + r->size;
	return cur_ok(&cu) && out->t;
}

bool jfe_entry_value(const struct jfe_file *f, const struct jfe_chunk *c, const struct jfe_entry *e,
		     struct jfe_value *out)
{
	out->f = f;
	out->c = c;
	out->t = jfe_type_of(c, e->type);
	out->key = false;
	out->off = e->off;
	out->end = e->end;
	return out->t != NULL;
}
