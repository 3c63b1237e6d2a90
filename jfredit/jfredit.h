/*
 * Reading a JFR recording (any writer's: the JDK, async-profiler, Datadog's
 * profiler, conv) as its own metadata describes it, for `conv symbolize`:
 * the chunks, each chunk's types (from its metadata record), its records,
 * and every constant pool entry of its checkpoints with the bytes of its
 * value. Values are decoded on demand, by field name, through the types:
 * nothing is assumed of a writer's type ids or field orders.
 *
 * Parsing follows the one-cursor rule: each record is read inside a
 * sub-cursor of its size, counts are checked against the bytes left, the
 * metadata's element tree and values nested in values have a depth limit.
 */
#ifndef CONV_JFREDIT_JFREDIT_H
#define CONV_JFREDIT_JFREDIT_H

#include "core/err.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbuf;

/* How a primitive type's values are encoded. */
enum jfe_prim {
	JFE_STRUCT,  /* not a primitive: its fields, in order */
	JFE_BYTE,    /* boolean, byte: one byte */
	JFE_VARINT,  /* char, short, int, long: a varint */
	JFE_FLOAT,   /* four bytes */
	JFE_DOUBLE,  /* eight bytes */
	JFE_STRING   /* java.lang.String: an encoding byte and its payload */
};

struct jfe_field {
	uint32_t name; /* in the chunk's names */
	uint64_t type;
	bool cp, array;
	bool zero; /* encodes in no bytes: neither array nor pool reference, of a zero type */
};

struct jfe_type {
	uint64_t id;
	uint32_t name;
	enum jfe_prim prim;
	bool simple;
	/*
	 * a struct whose fields are all zero (none, or structs of such types):
	 * its values take no bytes, so an array of them is refused (a count of
	 * them costs nothing to write and all the more to walk)
	 */
	bool zero;
	uint32_t first_field, nr_fields; /* in the chunk's fields */
	/* its fields that take bytes (the only ones a walk visits): in the chunk's nz */
	uint32_t first_nz, nr_nz;
};

struct jfe_record {
	size_t off, size; /* in the file */
	uint64_t type;    /* 0 metadata, 1 checkpoint, else an event type */
};

/* A constant pool entry: its type and key, the bytes of its value in the file. */
struct jfe_entry {
	uint64_t type, key;
	size_t off, end;
	uint32_t record; /* the checkpoint's index in the chunk's records */
};

struct jfe_chunk {
	size_t off, size; /* in the file */
	uint16_t major, minor;
	uint64_t cp_off, meta_off; /* from the chunk's start */
	struct strtab names; /* the metadata's strings, UTF-8 */
	struct jfe_type *types;
	size_t nr_types;
	struct jfe_field *fields;
	size_t nr_fields;
	struct hmap type_idx; /* type id -> index + 1 */
	uint32_t *nz;         /* per type, its fields that take bytes (indexes into fields), in order */
	struct hmap field_idx; /* (type index, field name) -> the first such field's index + 1 */
	/*
	 * the metadata and checkpoint records, in file order (events are not
	 * kept: memory follows the pools, not the events; jfe_record_next walks
	 * them)
	 */
	struct jfe_record *records;
	size_t nr_records;
	uint64_t nr_events;
	struct jfe_entry *entries;
	size_t nr_entries;
	struct hidx entry_idx; /* every entry by the hash of its (type, key) */
};

struct jfe_file {
	const uint8_t *buf;
	size_t len;
	struct jfe_chunk *chunks;
	size_t nr_chunks;
};

/*
 * Parses a recording (buf must outlive f). Errors: CONV_E_FORMAT (diag:
 * what, at which file offset; an array whose elements take no bytes is
 * refused, naming its type), CONV_E_NOMEM.
 */
enum conv_err jfe_parse(struct jfe_file *f, const uint8_t *buf, size_t len, struct conv_diag *diag);
void jfe_release(struct jfe_file *f);

const struct jfe_type *jfe_type_of(const struct jfe_chunk *c, uint64_t id);
/* The type with this name, NULL when the chunk has none. */
const struct jfe_type *jfe_type_named(const struct jfe_chunk *c, const char *name);
/* The entry of the pool of type `type` with this key, NULL when there is none. */
const struct jfe_entry *jfe_entry_find(const struct jfe_chunk *c, uint64_t type, uint64_t key);

/*
 * A value of type t at [off, end) of the file, as a cursor-like view: the
 * functions below find one of its fields by name.
 */
struct jfe_value {
	const struct jfe_file *f;
	const struct jfe_chunk *c;
	const struct jfe_type *t;
	bool key; /* a constant pool reference to a value of type t: a varint key */
	size_t off, end;
};

/*
 * Field `name` of a struct value: its own value (for an inline struct or a
 * primitive) in *out, with *field set; false when there is no such field or
 * the bytes do not hold the value.
 */
bool jfe_value_field(const struct jfe_value *v, const char *name, struct jfe_value *out,
		     const struct jfe_field **field);
/* A varint or byte-encoded number (a cp field's key, an int, a boolean); false for other encodings. */
bool jfe_value_u64(const struct jfe_value *v, uint64_t *out);
/*
 * A string (UTF-8, NUL-terminated, appended to out), also through a
 * constant-pool key (a Symbol); false for a null string or other types.
 */
bool jfe_value_str(const struct jfe_value *v, struct dbuf *out);
/* The pool entry a constant-pool key names, as a value; false when the key names none. */
bool jfe_value_deref(const struct jfe_value *key, struct jfe_value *out);
/* The elements of an array field's value: their count, and each element's bytes through jfe_array_next. */
struct jfe_array {
	const struct jfe_value *v;
	uint64_t left;
	size_t pos;
	const struct jfe_field *field;
};
bool jfe_array_begin(const struct jfe_value *v, const struct jfe_field *field, struct jfe_array *a,
		     uint64_t *count);
/* The next element (a cp key in *key when the field is cp, else its value in *elem); false at the end. */
bool jfe_array_next(struct jfe_array *a, struct jfe_value *elem, uint64_t *key);

/*
 * The chunk's records one by one, from *pos (start at 0): the next record
 * in *r, events and others; false at the end. The chunk's records were
 * checked by jfe_parse to lie back to back inside it.
 */
bool jfe_record_next(const struct jfe_file *f, const struct jfe_chunk *c, size_t *pos, struct jfe_record *r);

/* The payload of an event record (after its size and type) as a value of its type; false when its type is unknown. */
bool jfe_event_value(const struct jfe_file *f, const struct jfe_chunk *c, const struct jfe_record *r,
		     struct jfe_value *out);
/* An entry's value; false when its type is unknown. */
bool jfe_entry_value(const struct jfe_file *f, const struct jfe_chunk *c, const struct jfe_entry *e,
		     struct jfe_value *out);

/* ---- writing back with frames replaced ---- */

/* A frame that replaces a remote frame, as conv's JFR writer writes native frames. */
struct jfe_new_frame {
	const char *class_name, *method, *descriptor;
	uint32_t modifiers;
	uint32_t line;
	const char *frame_type; /* the FrameType pool's string: "Native", "C++", "Kernel" */
};

/* The frames (innermost first) that replace every frame of method `method_key` in chunk `chunk`. */
struct jfe_replace {
	uint32_t chunk;
	uint64_t method_key;
	uint32_t first, nr; /* in jfe_edit.frames */
};

struct jfe_edit {
	struct jfe_replace *repl;
	size_t nr_repl, cap_repl;
	struct jfe_new_frame *frames;
	size_t nr_frames, cap_frames;
};

struct io_flush;

/*
 * Writes f to fd with e applied: in each chunk with a replaced method, the
 * stack traces that hold it get the new frames in its place, and the
 * methods, classes and symbols those need are added to the chunk's pools
 * (keys above every key of the file, the same key for the same value in
 * every chunk). Every other record is copied byte for byte; checkpoints are
 * re-encoded (their delta chain and sizes change), and each chunk header's
 * size and offsets follow. *bytes: bytes written. Errors: CONV_E_NOMEM,
 * CONV_E_IO (*io_errno), CONV_E_FORMAT (a chunk whose types lack what a
 * replacement needs: diag says), CONV_E_LIMIT (a pool whose largest key
 * leaves no room above it for the new keys: they are never wrapped).
 */
enum conv_err jfe_write_fd(const struct jfe_file *f, const struct jfe_edit *e, int fd, struct io_flush *flush,
			   uint64_t *bytes, int *io_errno, struct conv_diag *diag);

#endif
