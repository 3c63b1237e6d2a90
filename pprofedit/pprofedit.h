/*
 * Reading a pprof profile (profile.proto, gzipped or not) and writing it
 * back with names added, for `conv symbolize`: everything the profile holds
 * is copied as it was, field by field and byte for byte, but the lines of
 * the locations given new ones, the flags of their mappings, and the
 * functions and strings those lines need (appended: the profile's own ids
 * and string indexes stay valid). Unknown fields are kept.
 *
 * Parsing follows the one-cursor rule: every message is read inside a
 * sub-cursor of its length, counts are checked against the bytes left, and
 * ids and string indexes are checked against the tables before use.
 */
#ifndef CONV_PPROFEDIT_PPROFEDIT_H
#define CONV_PPROFEDIT_PPROFEDIT_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbuf;

/* A top-level field as found: its number and the bytes of its key and value. */
struct ppe_field {
	uint32_t number;
	size_t off, len;      /* the whole field, key included */
	size_t val_off, val_len; /* a length-delimited field's value (else 0) */
};

struct ppe_mapping {
	uint64_t id, start, limit, offset;
	uint64_t filename, build_id; /* string indexes */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct ppe_line {
	uint64_t function_id;
	int64_t line, column;
};

struct ppe_location {
	uint64_t id, mapping_id, address;
	uint32_t first_line, nr_lines; /* in ppe_profile.lines */
};

struct ppe_function {
	uint64_t id, name, system_name, filename; /* strings */
	int64_t start_line;
};

struct ppe_profile {
	const uint8_t *buf; /* the protobuf (the caller's, or gunzipped: owned then) */
	size_t len;
	uint8_t *owned;
	uint8_t *mapped; /* or the gunzipped protobuf in its own mapping (of mapped_len bytes) */
	size_t mapped_len;
	size_t nr_fields; /* top-level fields (walked with ppe_field_next, not kept) */
	const uint8_t **strs; /* string_table: pointers into buf, not NUL-terminated */
	size_t *str_lens;
	size_t nr_strs;
	struct ppe_mapping *mappings;
	size_t nr_mappings;
	struct ppe_location *locations;
	size_t nr_locations;
	struct ppe_line *lines;
	size_t nr_lines;
	struct ppe_function *functions;
	size_t nr_functions;
	uint64_t max_function_id;
	bool gzipped; /* the input was */
};

/*
 * A gzipped profile inflates to at most PPE_INFLATE_RATIO times its size,
 * or PPE_INFLATE_FLOOR bytes when that is more: real profiles inflate 1.2
 * to 5 times (Go's runtime/pprof, go tool pprof -proto, conv's own), a
 * deflate bomb up to ~1000; a profile's memory is its inflated size and
 * more, so the ratio stays below the 10 times an input may cost.
 */
#define PPE_INFLATE_RATIO 8u
#define PPE_INFLATE_FLOOR ((size_t)64 << 20)

/*
 * The tables a profile's strings, mappings, locations, lines and functions
 * take are at most PPE_TABLE_RATIO times its protobuf's size (or
 * PPE_TABLE_FLOOR bytes): real profiles' take 0.6 to 1.6 times; two-byte
 * messages (an empty string, an empty mapping) 8 to 28 times.
 */
#define PPE_TABLE_RATIO 4u
#define PPE_TABLE_FLOOR ((size_t)32 << 20)

/* The inflation cap for an input of len bytes: ppe_parse's, at most max_len. */
size_t ppe_inflate_cap(size_t len, size_t max_len);

/*
 * Parses buf (gzip members are inflated first, at most ppe_inflate_cap(len,
 * max_len) bytes; buf must outlive p otherwise). Errors: CONV_E_FORMAT
 * (diag: what, at which offset of the protobuf), CONV_E_LIMIT (inflates
 * past the cap, or tables past PPE_TABLE_RATIO: diag says), CONV_E_NOMEM.
 */
enum conv_err ppe_parse(struct ppe_profile *p, const uint8_t *buf, size_t len, size_t max_len,
			struct conv_diag *diag);
void ppe_release(struct ppe_profile *p);

/* The top-level field at *pos (start at 0), *pos moved past it; false at the end. */
bool ppe_field_next(const struct ppe_profile *p, size_t *pos, struct ppe_field *f);

struct cur;
/*
 * The next subfield of a message in c: its number, wire type and value (a
 * varint, or a length-delimited value's cursor in *sub); false at the end
 * or on an error (c failed then).
 */
bool ppe_sub_next(struct cur *c, uint32_t *num, unsigned *wt, uint64_t *v, struct cur *sub);

/* A string of the profile, copied NUL-terminated into out (truncated to n - 1). */
void ppe_str(const struct ppe_profile *p, uint64_t idx, char *out, size_t n);
/* A string's bytes as the profile has them (NULs and all): "" for an index past the table. */
const uint8_t *ppe_str_bytes(const struct ppe_profile *p, uint64_t idx, size_t *len);

/* New lines for locations: what ppe_write puts in. */
struct ppe_new_function {
	const char *name, *system_name, *filename;
	int64_t start_line;
};

struct ppe_new_line {
	uint32_t function; /* index into ppe_edit.functions */
	int64_t line, column;
};

struct ppe_edit {
	/* per location (nr_locations of them): its new lines, innermost first; nr 0: unchanged */
	uint32_t *loc_first, *loc_nr;
	struct ppe_new_line *lines;
	size_t nr_lines, cap_lines;
	struct ppe_new_function *functions;
	size_t nr_functions, cap_functions;
	/* per mapping: flags to set (PPE_HAS_*) */
	uint8_t *map_flags;
};

#define PPE_HAS_FUNCTIONS 1u
#define PPE_HAS_FILENAMES 2u
#define PPE_HAS_LINE_NUMBERS 4u
#define PPE_HAS_INLINE_FRAMES 8u

/*
 * Whether e's new functions' ids (after the profile's largest) fit in 64
 * bits: CONV_E_LIMIT (diag says) when they would wrap to the reserved 0.
 * ppe_write and ppe_write_fd refuse such an edit (CONV_E_LIMIT) too.
 */
enum conv_err ppe_edit_fits(const struct ppe_profile *p, const struct ppe_edit *e, struct conv_diag *diag);

/* An empty edit for p (no location changed); false when out of memory. */
bool ppe_edit_init(struct ppe_edit *e, const struct ppe_profile *p);
void ppe_edit_release(struct ppe_edit *e);

struct io_flush;

/*
 * Writes p with e applied to out, gzipped when gzip is true (a gzip member
 * per 256 KiB of protobuf, as conv's pprof writer does). CONV_E_NOMEM,
 * CONV_E_LIMIT (ppe_edit_fits).
 */
enum conv_err ppe_write(const struct ppe_profile *p, const struct ppe_edit *e, bool gzip,
			struct dbuf *out);
/*
 * The same to fd as it goes (a few hundred KiB of memory whatever the
 * profile's size), flush (core/io.h; may be NULL) told; *bytes: bytes written; CONV_E_IO with *io_errno when a
 * write fails, CONV_E_NOMEM.
 */
enum conv_err ppe_write_fd(const struct ppe_profile *p, const struct ppe_edit *e, bool gzip, int fd,
			   struct io_flush *flush, uint64_t *bytes, int *io_errno);

#endif
