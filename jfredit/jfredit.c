#include "jfredit/jfredit.h"

#include "core/jfrenc.h"

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/hidx.h"
#include "core/io.h"
#include "core/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Why a walk failed, for the error a pool entry gets: an array of elements that take no bytes. */
struct why {
	bool zero_array;
	size_t at;     /* the array's count, in the walked cursor */
	uint64_t type; /* of its elements */
	uint64_t count;
};

static bool skip_type(const struct jfe_chunk *ch, struct cur *c, uint64_t type, int depth, struct why *w);

static bool skip_elem(const struct jfe_chunk *ch, struct cur *c, const struct jfe_field *fd, int depth,
		      struct why *w)
{
	if (fd->cp) {
		(void)jv(c);
		return cur_ok(c);
	}
	return skip_type(ch, c, fd->type, depth + 1, w);
}

/*
 * Whether an array of n elements of field fd's type can be in the bytes
 * left: each takes one byte at least, and none are allowed of a type that
 * takes none (their count alone would decide the work).
 */
static bool array_count_ok(const struct jfe_chunk *ch, struct cur *c, const struct jfe_field *fd, uint64_t n,
			   size_t at, struct why *w)
{
	const struct jfe_type *t = fd->cp ? NULL : jfe_type_of(ch, fd->type);

	if (n && t && t->zero) {
		if (w) {
			w->zero_array = true;
			w->at = at;
			w->type = fd->type;
			w->count = n;
		}
		cur_fail(c);
		return false;
	}
	return count_ok(c, n);
}

static bool skip_field(const struct jfe_chunk *ch, struct cur *c, const struct jfe_field *fd, int depth,
		       struct why *w)
{
	size_t at = c->pos;
	uint64_t n;

	if (!fd->array)
		return skip_elem(ch, c, fd, depth, w);
	n = jv(c);
	if (!array_count_ok(ch, c, fd, n, at, w))
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!skip_elem(ch, c, fd, depth, w))
			return false;
	return true;
}

/*
 * Skips a value of type `type`; false (c failed) when its bytes do not hold
 * one. Only the fields that take bytes are visited: each visit takes a byte
 * or fails (nested at most MAX_DEPTH deep), so a walk's work follows the
 * bytes it walks, whatever the types declare.
 */
static bool skip_type(const struct jfe_chunk *ch, struct cur *c, uint64_t type, int depth, struct why *w)
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
	for (uint32_t i = 0; i < t->nr_nz; i++)
		if (!skip_field(ch, c, &ch->fields[ch->nz[t->first_nz + i]], depth, w))
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

static uint64_t field_key(size_t type_index, const char *name)
{
	return hmap_mix(hmap_hash(type_index), hmap_fingerprint(name, strlen(name)).lo);
}

/* The index of a type in the chunk's types, through its id; SIZE_MAX when it has none. */
static size_t type_index(const struct jfe_chunk *ch, uint64_t id)
{
	const struct jfe_type *t = jfe_type_of(ch, id);

	return t ? (size_t)(t - ch->types) : SIZE_MAX;
}

/*
 * What walking values needs from the types, in time linear in them: which
 * types are zero (found upwards from the structs without fields: a struct
 * becomes zero when the last of its fields does), each type's fields that
 * take bytes, and the fields by (type, name). False: no memory.
 */
static bool types_finish(struct jfe_chunk *ch)
{
	size_t nt = ch->nr_types, nf = ch->nr_fields, nq = 0, fill = 0;
	uint32_t *need = calloc(nt + 1, sizeof(*need));
	uint32_t *start = calloc(nt + 2, sizeof(*start)); /* per type: where the structs holding it start in owner */
	uint32_t *owner = malloc((nf + 1) * sizeof(*owner));
	uint32_t *queue = malloc((nt + 1) * sizeof(*queue));
	bool ok = need && start && owner && queue && nf < UINT32_MAX && nt < UINT32_MAX;

	ch->nz = malloc((nf + 1) * sizeof(*ch->nz));
	ok = ok && ch->nz;
	/* a struct waits for its fields; one with an array, reference, primitive or unknown type never becomes zero */
	for (size_t i = 0; ok && i < nt; i++) {
		const struct jfe_type *t = &ch->types[i];

		need[i] = t->prim == JFE_STRUCT ? t->nr_fields : UINT32_MAX;
		for (uint32_t k = 0; t->prim == JFE_STRUCT && k < t->nr_fields; k++) {
			const struct jfe_field *fd = &ch->fields[t->first_field + k];
			size_t ti = type_index(ch, fd->type);

			if (fd->array || fd->cp || ti == SIZE_MAX || ch->types[ti].prim != JFE_STRUCT)
				need[i] = UINT32_MAX;
			else
				start[ti + 1]++;
		}
	}
	for (size_t i = 0; ok && i < nt; i++)
		start[i + 1] += start[i];
	/* owner[start[t] .. start[t + 1]): the structs with a field of type t (queue: where each is filled to) */
	for (size_t i = 0; ok && i < nt; i++)
		queue[i] = start[i];
	for (size_t i = 0; ok && i < nt; i++) {
		const struct jfe_type *t = &ch->types[i];

		for (uint32_t k = 0; t->prim == JFE_STRUCT && k < t->nr_fields; k++) {
			const struct jfe_field *fd = &ch->fields[t->first_field + k];
			size_t ti = type_index(ch, fd->type);

			if (!fd->array && !fd->cp && ti != SIZE_MAX && ch->types[ti].prim == JFE_STRUCT)
				owner[queue[ti]++] = (uint32_t)i;
		}
	}
	for (size_t i = 0; ok && i < nt; i++)
		if (need[i] == 0)
			queue[nq++] = (uint32_t)i;
	for (size_t q = 0; ok && q < nq; q++) {
		size_t z = queue[q];

		ch->types[z].zero = true;
		for (uint32_t k = start[z]; k < start[z + 1]; k++)
			if (need[owner[k]] != UINT32_MAX && --need[owner[k]] == 0)
				queue[nq++] = owner[k];
	}
	for (size_t i = 0; ok && i < nt; i++) {
		struct jfe_type *t = &ch->types[i];

		t->first_nz = (uint32_t)fill;
		for (uint32_t k = t->nr_fields; k-- > 0 && ok;) {
			size_t fi = t->first_field + k;

			ok = hmap_put(&ch->field_idx, field_key(i, strtab_get(&ch->names, ch->fields[fi].name)), fi + 1);
		}
		for (uint32_t k = 0; k < t->nr_fields && ok; k++) {
			struct jfe_field *fd = &ch->fields[t->first_field + k];
			size_t ti = type_index(ch, fd->type);

			fd->zero = !fd->array && !fd->cp && ti != SIZE_MAX && ch->types[ti].zero;
			if (!fd->zero)
				ch->nz[fill++] = t->first_field + k;
		}
		t->nr_nz = (uint32_t)fill - t->first_nz;
	}
	free(need);
	free(start);
	free(owner);
	free(queue);
	return ok;
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
	if (!cur_ok(&c) || size > ch->off + ch->size - at || size < c.pos)
		return conv_fail(diag, CONV_E_FORMAT, at, "no metadata record at the chunk's metadata offset");
	/* the record's own bytes only, from here on */
	cur_init(&c, f->buf + at, (size_t)size, false);
	(void)jv(&c);
	if (jv(&c) != 0 || !cur_ok(&c))
		return conv_fail(diag, CONV_E_FORMAT, at, "no metadata record at the chunk's metadata offset");
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
	if (!types_finish(ch))
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
		c.pos = at + (size_t)size;
		if (type > 1) {
			ch->nr_events++;
			continue;
		}
		if (!vec_reserve((void **)&ch->records, &cap, ch->nr_records + 1, sizeof(*r)))
			return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
		r = &ch->records[ch->nr_records++];
		r->off = ch->off + at;
		r->size = (size_t)size;
		r->type = type;
	}
	return CONV_E_OK;
}

/* A type's name for a message ("?" when the chunk has no such type). */
static const char *type_name(const struct jfe_chunk *ch, uint64_t id)
{
	const struct jfe_type *t = jfe_type_of(ch, id);

	return t ? strtab_get(&ch->names, t->name) : "?";
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
			struct why w;

			w.zero_array = false;
			if (!skip_type(ch, &c, type, 0, &w) && w.zero_array)
				return conv_fail(diag, CONV_E_FORMAT, r->off + w.at,
						 "chunk at %zu: checkpoint: a pool entry of type %s with an array of "
						 "%" PRIu64 " elements of type %" PRIu64 " (%s), which take no bytes",
						 ch->off, type_name(ch, type), w.count, w.type, type_name(ch, w.type));
			if (!cur_ok(&c))
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
			if (ch->nr_entries >= HIDX_NONE ||
			    !hidx_add(&ch->entry_idx, entry_hash(type, key), (uint32_t)ch->nr_entries))
				return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
			ch->nr_entries++;
		}
	}
	return CONV_E_OK;
}

bool jfe_record_next(const struct jfe_file *f, const struct jfe_chunk *c, size_t *pos, struct jfe_record *r)
{
	struct cur cu;
	size_t at = *pos < HEADER_SIZE ? HEADER_SIZE : *pos;
	uint64_t size;

	if (at >= c->size)
		return false;
	cur_init(&cu, f->buf + c->off + at, c->size - at, false);
	size = jv(&cu);
	r->type = jv(&cu);
	/* checked by jfe_parse; a failed read ends the walk all the same */
	if (!cur_ok(&cu) || !size || size > c->size - at)
		return false;
	r->off = c->off + at;
	r->size = (size_t)size;
	*pos = at + (size_t)size;
	return true;
}

const struct jfe_entry *jfe_entry_find(const struct jfe_chunk *c, uint64_t type, uint64_t key)
{
	struct hidx_iter it;
	uint32_t first = HIDX_NONE; /* a key defined again: its first definition */

	for (uint32_t v = hidx_first(&c->entry_idx, entry_hash(type, key), &it); v != HIDX_NONE;
	     v = hidx_next(&c->entry_idx, &it))
		if (c->entries[v].type == type && c->entries[v].key == key && v < first)
			first = v;
	return first == HIDX_NONE ? NULL : &c->entries[first];
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
	if (ch->major != 1 && ch->major != 2)
		return conv_fail(diag, CONV_E_UNSUPPORTED, ch->off, "JFR version %u.%u", ch->major, ch->minor);
	if (ch->size < HEADER_SIZE || ch->size > f->len - ch->off || ch->meta_off < HEADER_SIZE ||
	    ch->meta_off >= ch->size || ch->cp_off >= ch->size)
		return conv_fail(diag, CONV_E_FORMAT, ch->off, "a chunk header whose sizes or offsets are past the chunk");
	strtab_init(&ch->names);
	hmap_init(&ch->type_idx);
	hmap_init(&ch->field_idx);
	hidx_init(&ch->entry_idx);
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
		free(ch->nz);
		hmap_release(&ch->field_idx);
		free(ch->records);
		free(ch->entries);
		hidx_release(&ch->entry_idx);
	}
	free(f->chunks);
	memset(f, 0, sizeof(*f));
}

/* ---- values ---- */

/* The first field of t named name, SIZE_MAX when t has none. */
static size_t field_named(const struct jfe_chunk *ch, const struct jfe_type *t, const char *name)
{
	uint64_t *v = hmap_get(&ch->field_idx, field_key((size_t)(t - ch->types), name));
	size_t i = v ? (size_t)*v - 1 : SIZE_MAX;

	if (i != SIZE_MAX && i >= t->first_field && i - t->first_field < t->nr_fields &&
	    !strcmp(strtab_get(&ch->names, ch->fields[i].name), name))
		return i;
	/* (two names of one type sharing a 64-bit hash: the one put last is found by its own) */
	for (uint32_t k = 0; v && k < t->nr_fields; k++)
		if (!strcmp(strtab_get(&ch->names, ch->fields[t->first_field + k].name), name))
			return t->first_field + k;
	return SIZE_MAX;
}

bool jfe_value_field(const struct jfe_value *v, const char *name, struct jfe_value *out,
		     const struct jfe_field **field)
{
	const struct jfe_chunk *ch = v->c;
	const struct jfe_field *fd;
	struct cur c;
	size_t fi, start;

	if (v->key || !v->t || v->t->prim != JFE_STRUCT)
		return false;
	fi = field_named(ch, v->t, name);
	if (fi == SIZE_MAX)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	/* the fields before it that take bytes, then its own */
	for (uint32_t i = 0; i < v->t->nr_nz && ch->nz[v->t->first_nz + i] < fi; i++)
		if (!skip_field(ch, &c, &ch->fields[ch->nz[v->t->first_nz + i]], 0, NULL))
			return false;
	fd = &ch->fields[fi];
	start = c.pos;
	if (!skip_field(ch, &c, fd, 0, NULL))
		return false;
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

/* jfe_value_str at a depth: a pool entry or a simple type may lead back to itself */
static bool value_str(const struct jfe_value *v, struct dbuf *out, int depth)
{
	struct cur c;
	bool null;

	if (depth > MAX_DEPTH)
		return false;
	if (v->key) {
		struct jfe_value e;

		return jfe_value_deref(v, &e) && !e.key && value_str(&e, out, depth + 1);
	}
	if (!v->t)
		return false;
	if (v->t->prim == JFE_STRUCT && v->t->simple && v->t->nr_fields == 1) {
		struct jfe_value inner;

		return jfe_value_field(v, strtab_get(&v->c->names, v->c->fields[v->t->first_field].name),
				       &inner, NULL) &&
		       value_str(&inner, out, depth + 1);
	}
	if (v->t->prim != JFE_STRING)
		return false;
	cur_init(&c, v->f->buf + v->off, v->end - v->off, false);
	if (!read_string(&c, out, &null) || null)
		return false;
	return dbuf_putc(out, 0);
}

bool jfe_value_str(const struct jfe_value *v, struct dbuf *out)
{
	return value_str(v, out, 0);
}

bool jfe_value_deref(const struct jfe_value *key, struct jfe_value *out)
{
	uint64_t k;
	const struct jfe_entry *e;

	return key->key && key->t && jfe_value_u64(key, &k) && (e = jfe_entry_find(key->c, key->t->id, k)) &&
	       jfe_entry_value(key->f, key->c, e, out);
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
	return array_count_ok(v->c, &c, field, a->left, 0, NULL);
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
	else if (!skip_type(v->c, &c, a->field->type, 0, NULL))
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

/* ---- writing back ---- */

/* A field's value to write: a number (keys, ints, booleans) or a string. */
struct ov {
	const char *name;
	uint64_t num;
	const char *str; /* for a String field */
};

static void write_value(struct dbuf *b, const struct jfe_chunk *ch, uint64_t type, const struct ov *ov,
			size_t n, int depth);

/* A field: its override when there is one, else nothing (0, null, an empty array). */
static void write_field(struct dbuf *b, const struct jfe_chunk *ch, const struct jfe_field *fd,
			const struct ov *ov, size_t n, int depth)
{
	const struct jfe_type *t = jfe_type_of(ch, fd->type);
	const char *name = strtab_get(&ch->names, fd->name);
	const struct ov *o = NULL;

	for (size_t i = 0; i < n && !o; i++)
		if (!strcmp(ov[i].name, name))
			o = &ov[i];
	if (fd->array) {
		jfr_put_varint(b, 0);
	} else if (fd->cp) {
		jfr_put_varint(b, o ? o->num : 0);
	} else if (t && t->prim == JFE_STRING && o && o->str) {
		jfr_put_string(b, o->str);
	} else if (t && t->prim == JFE_STRING) {
		dbuf_putc(b, 0);
	} else if (t && t->prim == JFE_BYTE) {
		dbuf_putc(b, (char)(o ? o->num : 0));
	} else if (t && t->prim == JFE_VARINT) {
		jfr_put_varint(b, o ? o->num : 0);
	} else if (t && (t->prim == JFE_FLOAT || t->prim == JFE_DOUBLE)) {
		static const uint8_t zero[8];

		dbuf_append(b, zero, t->prim == JFE_FLOAT ? 4 : 8);
	} else {
		write_value(b, ch, fd->type, NULL, 0, depth + 1);
	}
}

/* A value of a struct type: its fields in order, as ov says or empty. */
static void write_value(struct dbuf *b, const struct jfe_chunk *ch, uint64_t type, const struct ov *ov,
			size_t n, int depth)
{
	const struct jfe_type *t = jfe_type_of(ch, type);

	if (!t || depth > MAX_DEPTH) {
		b->err = true;
		return;
	}
	/* a field that takes no bytes writes none */
	for (uint32_t i = 0; i < t->nr_nz; i++)
		write_field(b, ch, &ch->fields[ch->nz[t->first_nz + i]], ov, n, depth);
}

/* The new pool entries a file's edit needs, with file-wide keys. */
struct adds {
	struct strtab syms;    /* new symbols; key = sym_base + id */
	struct strtab classes; /* new classes by name; key = class_base + id */
	/* new methods: (class id, name symbol id, descriptor symbol id, modifiers); key = method_base + index */
	uint32_t (*methods)[4];
	size_t nr_methods, cap_methods;
	uint32_t *frame_method; /* per edit frame: its method's index */
	uint32_t *class_sym;    /* per new class: its name's symbol id */
	size_t cap_class_sym;
	uint64_t sym_base, class_base, method_base;
};

/* The largest key of any pool of the type named `name`, in every chunk; *where: its chunk's offset. */
static uint64_t max_key(const struct jfe_file *f, const char *name, size_t *where)
{
	uint64_t m = 0;

	*where = 0;
	for (size_t ci = 0; ci < f->nr_chunks; ci++) {
		const struct jfe_chunk *c = &f->chunks[ci];
		const struct jfe_type *t = jfe_type_named(c, name);

		for (size_t i = 0; t && i < c->nr_entries; i++)
			if (c->entries[i].type == t->id && c->entries[i].key > m) {
				m = c->entries[i].key;
				*where = c->entries[i].off;
			}
	}
	return m;
}

/*
 * The first of n new keys above every key of the pools of type `name`
 * (*base); CONV_E_LIMIT when they would pass 2^64 - 1: a key is never
 * wrapped onto 0 or onto the recording's own.
 */
static enum conv_err new_keys(const struct jfe_file *f, const char *name, uint64_t n, uint64_t *base,
			      struct conv_diag *diag)
{
	size_t where;
	uint64_t m = max_key(f, name, &where);

	*base = m + 1;
	if (n && m > UINT64_MAX - n)
		return conv_fail(diag, CONV_E_LIMIT, where,
				 "a %s pool key of %" PRIu64 " leaves no room above it for the %" PRIu64
				 " new keys the names need",
				 name, m, n);
	return CONV_E_OK;
}

static bool adds_build(struct adds *a, const struct jfe_edit *e)
{
	struct hidx idx; /* the methods by their four ids */
	struct hidx_iter it;
	size_t i;

	memset(a, 0, sizeof(*a));
	strtab_init(&a->syms);
	strtab_init(&a->classes);
	a->frame_method = malloc((e->nr_frames ? e->nr_frames : 1) * sizeof(*a->frame_method));
	/* class 0 is "", named by symbol 0 */
	if (!a->frame_method ||
	    !vec_reserve((void **)&a->class_sym, &a->cap_class_sym, 1, sizeof(*a->class_sym)))
		return false;
	a->class_sym[0] = 0;
	hidx_init(&idx);
	for (i = 0; i < e->nr_frames; i++) {
		const struct jfe_new_frame *nf = &e->frames[i];
		uint32_t m[4], k;
		uint64_t h;

		m[0] = strtab_intern_cstr(&a->classes, nf->class_name);
		if (m[0] == STRTAB_NONE ||
		    !vec_reserve((void **)&a->class_sym, &a->cap_class_sym, a->classes.count, sizeof(*a->class_sym)))
			break;
		/* the class's name is a symbol too */
		a->class_sym[m[0]] = strtab_intern_cstr(&a->syms, nf->class_name);
		m[1] = strtab_intern_cstr(&a->syms, nf->method);
		m[2] = strtab_intern_cstr(&a->syms, nf->descriptor);
		m[3] = nf->modifiers;
		if (a->class_sym[m[0]] == STRTAB_NONE || m[1] == STRTAB_NONE || m[2] == STRTAB_NONE)
			break;
		h = hmap_mix(hmap_mix(hmap_mix(hmap_hash(m[0]), m[1]), m[2]), m[3]);
		k = HIDX_NONE;
		for (uint32_t v = hidx_first(&idx, h, &it); v != HIDX_NONE && k == HIDX_NONE; v = hidx_next(&idx, &it))
			if (!memcmp(a->methods[v], m, sizeof(m)))
				k = v;
		if (k == HIDX_NONE) {
			k = (uint32_t)a->nr_methods;
			if (!vec_reserve((void **)&a->methods, &a->cap_methods, k + 1, sizeof(*a->methods)) ||
			    !hidx_add(&idx, h, k))
				break;
			memcpy(a->methods[a->nr_methods++], m, sizeof(m));
		}
		a->frame_method[i] = k;
	}
	hidx_release(&idx);
	return i == e->nr_frames;
}

/* The new entries' keys, once their numbers are known; CONV_E_LIMIT (diag) when a pool has no room left. */
static enum conv_err adds_place(struct adds *a, const struct jfe_file *f, struct conv_diag *diag)
{
	enum conv_err err = new_keys(f, "jdk.types.Symbol", a->syms.count, &a->sym_base, diag);

	if (!err)
		err = new_keys(f, "java.lang.Class", a->classes.count, &a->class_base, diag);
	if (!err)
		err = new_keys(f, "jdk.types.Method", a->nr_methods, &a->method_base, diag);
	return err;
}

static void adds_release(struct adds *a)
{
	strtab_release(&a->syms);
	strtab_release(&a->classes);
	free(a->methods);
	free(a->frame_method);
	free(a->class_sym);
}

/* What rewriting one chunk needs. */
struct chunk_edit {
	const struct jfe_file *f;
	const struct jfe_chunk *c;
	const struct jfe_edit *e;
	const struct adds *a;
	const struct jfe_type *kind[3]; /* the pools entries are added to: Symbol, Class, Method */
	const struct jfe_type *stack, *frame, *ftype;
	struct hmap repl;      /* method key -> index + 1 in e->repl */
	uint64_t ftype_key[3]; /* Native, C++, Kernel */
	/* the checkpoint (record index) whose pool of Symbol, Class, Method gets the new entries; UINT32_MAX: none has one */
	uint32_t home[3];
	/* per new Symbol, Class, Method: whether this chunk's replacements use it (only those are written here) */
	uint8_t *used[3];
};

/* Room for what this chunk's replacements use (ce->used, one allocation, freed through used[0]); false: no memory. */
static bool used_alloc(struct chunk_edit *ce)
{
	const struct adds *a = ce->a;
	uint8_t *u = calloc(a->syms.count + a->classes.count + a->nr_methods + 1, 1);

	if (!u)
		return false;
	ce->used[0] = u;
	ce->used[1] = u + a->syms.count;
	ce->used[2] = ce->used[1] + a->classes.count;
	return true;
}

/* Marks the new Methods, Classes and Symbols replacement rp uses. */
static void mark_used(struct chunk_edit *ce, const struct jfe_replace *rp)
{
	const struct adds *a = ce->a;

	for (uint32_t k = 0; k < rp->nr; k++) {
		uint32_t mi = a->frame_method[rp->first + k];
		const uint32_t *m = a->methods[mi];

		ce->used[2][mi] = 1;
		ce->used[1][m[0]] = 1;
		ce->used[0][a->class_sym[m[0]]] = 1;
		ce->used[0][m[1]] = 1;
		ce->used[0][m[2]] = 1;
	}
}

static const char *const ftype_names[3] = { "Native", "C++", "Kernel" };

static uint64_t frame_type_key(const struct chunk_edit *ce, const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(ftype_names[i], name))
			return ce->ftype_key[i];
	return ce->ftype_key[0];
}

/* The FrameType keys of the chunk by their strings. */
static void find_frame_types(struct chunk_edit *ce)
{
	struct dbuf s;

	dbuf_init(&s, 0);
	for (size_t i = 0; ce->ftype && i < ce->c->nr_entries; i++) {
		const struct jfe_entry *en = &ce->c->entries[i];
		struct jfe_value v;

		if (en->type != ce->ftype->id || !jfe_entry_value(ce->f, ce->c, en, &v))
			continue;
		dbuf_reset(&s);
		if (!jfe_value_str(&v, &s))
			continue;
		for (int k = 0; k < 3; k++)
			if (!strcmp((const char *)s.data, ftype_names[k]))
				ce->ftype_key[k] = en->key;
	}
	dbuf_release(&s);
	/* a type the pool lacks is written as Native */
	for (int k = 1; k < 3; k++)
		if (!ce->ftype_key[k])
			ce->ftype_key[k] = ce->ftype_key[0];
}

/*
 * A stack trace entry's frames array, rewritten into out when one of its
 * frames is replaced; false: unchanged. elems: scratch, kept by the caller.
 */
static bool rewrite_stack(const struct chunk_edit *ce, const struct jfe_entry *en, struct dbuf *out,
			  struct dbuf *elems)
{
	struct jfe_value v, frames, fr, m;
	const struct jfe_field *ff;
	struct jfe_array arr;
	uint64_t count, key, n = 0;
	bool changed = false;

	if (!jfe_entry_value(ce->f, ce->c, en, &v) || !jfe_value_field(&v, "frames", &frames, &ff) ||
	    ff->cp || !jfe_array_begin(&frames, ff, &arr, &count))
		return false;
	dbuf_reset(elems);
	while (jfe_array_next(&arr, &fr, &key)) {
		uint64_t mk;
		uint64_t *r;

		if (jfe_value_field(&fr, "method", &m, NULL) && jfe_value_u64(&m, &mk) &&
		    (r = hmap_get(&ce->repl, hmap_hash(mk))) && ce->e->repl[*r - 1].method_key == mk) {
			const struct jfe_replace *rp = &ce->e->repl[*r - 1];

			for (uint32_t k = 0; k < rp->nr; k++) {
				const struct jfe_new_frame *nf = &ce->e->frames[rp->first + k];
				struct ov ov[4] = {
					{ "method", ce->a->method_base + ce->a->frame_method[rp->first + k], NULL },
					{ "lineNumber", nf->line, NULL },
					{ "bytecodeIndex", 0, NULL },
					{ "type", frame_type_key(ce, nf->frame_type), NULL },
				};

				write_value(elems, ce->c, ff->type, ov, 4, 0);
				n++;
			}
			changed = true;
		} else {
			dbuf_append(elems, ce->f->buf + fr.off, fr.end - fr.off);
			n++;
		}
	}
	if (changed) {
		/* the fields of the stack trace in order: frames rebuilt, the others as they were */
		struct cur c;

		cur_init(&c, ce->f->buf + v.off, v.end - v.off, false);
		for (uint32_t i = 0; i < v.t->nr_nz; i++) {
			const struct jfe_field *fd = &ce->c->fields[ce->c->nz[v.t->first_nz + i]];
			size_t start = c.pos;

			if (!skip_field(ce->c, &c, fd, 0, NULL))
				break;
			if (fd == ff) {
				jfr_put_varint(out, n);
				dbuf_append(out, elems->data, elems->len);
			} else {
				dbuf_append(out, ce->f->buf + v.off + start, c.pos - start);
			}
		}
	}
	if (elems->err)
		out->err = true;
	return changed;
}

/* The new entries of pool kind k (0 Symbol, 1 Class, 2 Method) into b; their number. */
static uint64_t write_new_entries(const struct chunk_edit *ce, int k, struct dbuf *b)
{
	const struct adds *a = ce->a;
	const struct jfe_type *t = ce->kind[k];
	uint64_t n = 0;

	if (k == 0) {
		const char *field = strtab_get(&ce->c->names, ce->c->fields[t->first_field].name);

		/* id 0 ("") too, when used: kernel frames' classes are named "" */
		for (uint32_t id = 0; id < a->syms.count; id++) {
			struct ov ov = { field, 0, strtab_get(&a->syms, id) };

			if (!ce->used[0][id])
				continue;
			jfr_put_varint(b, a->sym_base + id);
			write_value(b, ce->c, t->id, &ov, 1, 0);
			n++;
		}
	} else if (k == 1) {
		for (uint32_t id = 0; id < a->classes.count; id++) {
			struct ov ov = { "name", a->sym_base + a->class_sym[id], NULL };

			if (!ce->used[1][id])
				continue;
			jfr_put_varint(b, a->class_base + id);
			write_value(b, ce->c, t->id, &ov, 1, 0);
			n++;
		}
	} else {
		for (size_t i = 0; i < a->nr_methods; i++) {
			struct ov ov[5] = {
				{ "type", a->class_base + a->methods[i][0], NULL },
				{ "name", a->sym_base + a->methods[i][1], NULL },
				{ "descriptor", a->sym_base + a->methods[i][2], NULL },
				{ "modifiers", a->methods[i][3], NULL },
				{ "hidden", 0, NULL },
			};

			if (!ce->used[2][i])
				continue;
			jfr_put_varint(b, a->method_base + i);
			write_value(b, ce->c, t->id, ov, 5, 0);
			n++;
		}
	}
	return n;
}

/*
 * Checkpoint record ri re-encoded into out: its pools with the rewritten
 * stack traces and, where it is their home, the new entries. The delta is a
 * nine-byte slot patched once every record's new place is known
 * (*delta_at); the size a five-byte slot.
 */
static bool write_checkpoint(const struct chunk_edit *ce, uint32_t ri, struct dbuf *out, size_t *delta_at)
{
	const struct jfe_record *r = &ce->c->records[ri];
	size_t start = out->len, pools_at;
	uint64_t pools, extra = 0;
	bool has[3] = { false, false, false };
	struct dbuf tmp, sv, elems; /* sv, elems: a stack trace's rewrite, reused for each */
	struct cur c;
	uint8_t slot[9] = { 0 };

	cur_init(&c, ce->f->buf + r->off, r->size, false);
	(void)jv(&c);
	(void)jv(&c);
	dbuf_append(out, slot, 5); /* size */
	jfr_put_varint(out, 1);
	jfr_put_varint(out, jv(&c)); /* start time */
	jfr_put_varint(out, jv(&c)); /* duration */
	(void)jv(&c);
	*delta_at = out->len;
	dbuf_append(out, slot, 9);
	dbuf_putc(out, (char)cur_u8(&c));
	pools = jv(&c);
	pools_at = out->len;
	dbuf_init(&tmp, 0);
	dbuf_init(&sv, 0);
	dbuf_init(&elems, 0);
	for (uint64_t p = 0; p < pools && cur_ok(&c); p++) {
		uint64_t type = jv(&c), n = jv(&c), add = 0;
		int home = -1;
		size_t count_at;

		for (int k = 0; k < 3; k++) {
			const struct jfe_type *t = ce->kind[k];

			if (t && t->id == type && ce->home[k] == ri && !has[k]) {
				home = k;
				has[k] = true;
			}
		}
		jfr_put_varint(&tmp, type);
		count_at = tmp.len;
		for (uint64_t i = 0; i < n && cur_ok(&c); i++) {
			size_t at = c.pos;
			uint64_t key = jv(&c);
			size_t vstart = c.pos;

			if (!skip_type(ce->c, &c, type, 0, NULL))
				break;
			if (ce->stack && type == ce->stack->id) {
				/* this entry where it is, also when a later checkpoint defines its key again */
				const struct jfe_entry en = { type, key, r->off + vstart, r->off + c.pos, ri };

				dbuf_reset(&sv);
				if (rewrite_stack(ce, &en, &sv, &elems)) {
					jfr_put_varint(&tmp, key);
					dbuf_append(&tmp, sv.data, sv.len);
				} else {
					dbuf_append(&tmp, ce->f->buf + r->off + at, c.pos - at);
				}
				if (sv.err)
					tmp.err = true;
			} else {
				dbuf_append(&tmp, ce->f->buf + r->off + at, c.pos - at);
			}
		}
		{
			struct dbuf entries;

			dbuf_init(&entries, 0);
			if (home >= 0)
				add = write_new_entries(ce, home, &entries);
			/* the pool's count, now that the added entries are known */
			dbuf_append(out, tmp.data, count_at);
			jfr_put_varint(out, n + add);
			dbuf_append(out, tmp.data + count_at, tmp.len - count_at);
			dbuf_append(out, entries.data, entries.len);
			if (entries.err)
				out->err = true;
			dbuf_release(&entries);
			dbuf_reset(&tmp);
		}
	}
	/* a kind whose home this is but that had no pool here: a pool of its own */
	for (int k = 0; k < 3; k++) {
		const struct jfe_type *t = ce->kind[k];
		struct dbuf entries;
		uint64_t add;

		if (has[k] || ce->home[k] != ri || !t)
			continue;
		dbuf_init(&entries, 0);
		add = write_new_entries(ce, k, &entries);
		if (add) {
			jfr_put_varint(out, t->id);
			jfr_put_varint(out, add);
			dbuf_append(out, entries.data, entries.len);
			extra++;
		}
		dbuf_release(&entries);
	}
	if (tmp.err)
		out->err = true;
	dbuf_release(&tmp);
	dbuf_release(&sv);
	dbuf_release(&elems);
	if (!cur_ok(&c))
		return false;
	{
		/* the pool count goes before the pools, now that the added ones are known */
		struct dbuf rest;

		dbuf_init(&rest, 0);
		dbuf_append(&rest, out->data + pools_at, out->len - pools_at);
		out->len = pools_at;
		jfr_put_varint(out, pools + extra);
		dbuf_append(out, rest.data, rest.len);
		if (rest.err)
			out->err = true;
		dbuf_release(&rest);
	}
	if (out->err)
		return false;
	jfr_enc_varint_fixed(out->data + start, out->len - start, 5);
	return true;
}

/* Which checkpoint gets the new entries of each kind: the first with such a pool, else the first. */
static void find_homes(struct chunk_edit *ce)
{
	uint32_t first = UINT32_MAX;

	for (int k = 0; k < 3; k++)
		ce->home[k] = UINT32_MAX;
	for (size_t i = 0; i < ce->c->nr_entries; i++) {
		const struct jfe_entry *en = &ce->c->entries[i];

		for (int k = 0; k < 3; k++) {
			const struct jfe_type *t = ce->kind[k];

			if (t && en->type == t->id && ce->home[k] == UINT32_MAX)
				ce->home[k] = en->record;
		}
	}
	for (size_t i = 0; i < ce->c->nr_records && first == UINT32_MAX; i++)
		if (ce->c->records[i].type == 1)
			first = (uint32_t)i;
	for (int k = 0; k < 3; k++)
		if (ce->home[k] == UINT32_MAX)
			ce->home[k] = first;
}

/* The index of the record that started at chunk offset rel, or SIZE_MAX. */
static size_t record_at(const struct jfe_chunk *c, uint64_t rel)
{
	for (size_t i = 0; i < c->nr_records; i++)
		if (c->records[i].off - c->off == rel)
			return i;
	return SIZE_MAX;
}

/*
 * Chunk ci rewritten to s: its events copied from the input as they are
 * (never held in memory), checkpoints re-encoded in scratch, then the delta
 * chain and the header patched in place.
 */
static enum conv_err write_chunk(const struct jfe_file *f, size_t ci, const struct jfe_edit *e,
				 const struct adds *a, struct io_out *s, struct dbuf *scratch,
				 struct conv_diag *diag)
{
	const struct jfe_chunk *c = &f->chunks[ci];
	struct chunk_edit ce;
	uint64_t *new_off, *delta_at, chunk_at = io_out_tell(s);
	size_t ri, cp_rec, meta_rec, done = c->off + HEADER_SIZE;
	uint8_t hdr[24];
	bool any = false, ok = true;

	memset(&ce, 0, sizeof(ce));
	ce.f = f;
	ce.c = c;
	ce.e = e;
	ce.a = a;
	hmap_init(&ce.repl);
	if (!used_alloc(&ce))
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	for (size_t i = 0; i < e->nr_repl; i++) {
		if (e->repl[i].chunk != ci)
			continue;
		any = true;
		if (!hmap_put(&ce.repl, hmap_hash(e->repl[i].method_key), i + 1)) {
			free(ce.used[0]);
			hmap_release(&ce.repl);
			return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
		}
		mark_used(&ce, &e->repl[i]);
	}
	if (!any) {
		free(ce.used[0]);
		hmap_release(&ce.repl);
		io_out_put(s, f->buf + c->off, c->size);
		return CONV_E_OK;
	}
	ce.kind[0] = jfe_type_named(c, "jdk.types.Symbol");
	ce.kind[1] = jfe_type_named(c, "java.lang.Class");
	ce.kind[2] = jfe_type_named(c, "jdk.types.Method");
	ce.stack = jfe_type_named(c, "jdk.types.StackTrace");
	ce.ftype = jfe_type_named(c, "jdk.types.FrameType");
	if (!ce.kind[0] || !ce.kind[1] || !ce.kind[2] || !ce.stack || !ce.kind[0]->nr_fields) {
		free(ce.used[0]);
		hmap_release(&ce.repl);
		return conv_fail(diag, CONV_E_FORMAT, c->off, "a chunk without the Symbol, Class, Method and StackTrace types");
	}
	find_frame_types(&ce);
	find_homes(&ce);
	new_off = calloc(c->nr_records + 1, sizeof(*new_off));
	delta_at = calloc(c->nr_records + 1, sizeof(*delta_at));
	if (!new_off || !delta_at) {
		free(new_off);
		free(delta_at);
		free(ce.used[0]);
		hmap_release(&ce.repl);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	io_out_put(s, f->buf + c->off, HEADER_SIZE);
	for (ri = 0; ri < c->nr_records && ok && !s->io_errno; ri++) {
		const struct jfe_record *r = &c->records[ri];

		/* the events before it, as they are */
		io_out_put(s, f->buf + done, r->off - done);
		new_off[ri] = io_out_tell(s) - chunk_at;
		if (r->type == 1) {
			size_t rel;

			dbuf_reset(scratch);
			ok = write_checkpoint(&ce, (uint32_t)ri, scratch, &rel);
			delta_at[ri] = io_out_tell(s) + rel;
			io_out_put(s, scratch->data, scratch->len);
		} else {
			io_out_put(s, f->buf + r->off, r->size);
		}
		done = r->off + r->size;
	}
	io_out_put(s, f->buf + done, c->off + c->size - done);
	/* the delta chain and the header, now that every record has its place */
	for (ri = 0; ri < c->nr_records && ok; ri++) {
		const struct jfe_record *r = &c->records[ri];
		struct cur cu;
		uint64_t d, nd = 0;
		uint8_t slot[9];
		size_t target;

		if (r->type != 1)
			continue;
		cur_init(&cu, f->buf + r->off, r->size, false);
		for (int k = 0; k < 4; k++)
			(void)jv(&cu);
		d = jv(&cu);
		if (d) {
			target = record_at(c, r->off - c->off + d);
			nd = target == SIZE_MAX ? 0 : new_off[target] - new_off[ri];
		}
		jfr_enc_varint_fixed(slot, nd, 9);
		io_out_patch(s, delta_at[ri], slot, sizeof(slot));
	}
	cp_rec = record_at(c, c->cp_off);
	meta_rec = record_at(c, c->meta_off);
	jfr_put_be(hdr, io_out_tell(s) - chunk_at, 8);
	jfr_put_be(hdr + 8, cp_rec == SIZE_MAX ? c->cp_off : new_off[cp_rec], 8);
	jfr_put_be(hdr + 16, meta_rec == SIZE_MAX ? c->meta_off : new_off[meta_rec], 8);
	if (ok)
		io_out_patch(s, chunk_at + 8, hdr, sizeof(hdr));
	free(new_off);
	free(delta_at);
	free(ce.used[0]);
	hmap_release(&ce.repl);
	if (scratch->err)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	if (!ok)
		return conv_fail(diag, CONV_E_FORMAT, c->off, "a checkpoint that could not be re-encoded");
	return CONV_E_OK;
}

enum conv_err jfe_write_fd(const struct jfe_file *f, const struct jfe_edit *e, int fd, struct io_flush *flush,
			   uint64_t *bytes, int *io_errno, struct conv_diag *diag)
{
	struct adds a;
	struct dbuf scratch;
	struct io_out s;
	enum conv_err err = CONV_E_OK, end;

	*bytes = 0;
	*io_errno = 0;
	if (!adds_build(&a, e)) {
		adds_release(&a);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	/* (nothing is added without frames: no key is needed then) */
	err = e->nr_frames ? adds_place(&a, f, diag) : CONV_E_OK;
	if (err) {
		adds_release(&a);
		return err;
	}
	io_out_init(&s, fd, flush);
	dbuf_init(&scratch, 0);
	for (size_t ci = 0; ci < f->nr_chunks && !err && !s.io_errno; ci++)
		err = write_chunk(f, ci, e, &a, &s, &scratch, diag);
	end = io_out_finish(&s, bytes, err ? NULL : diag);
	if (!err)
		err = end;
	*io_errno = s.io_errno;
	dbuf_release(&scratch);
	adds_release(&a);
	return err;
}
