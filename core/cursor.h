/*
 * Bounds-checked reader over a byte range in a file's byte order.
 *
 * Every read checks `n > len - pos` first; a short read returns zero, sets a
 * sticky error flag and leaves the position at the end, so a parser reads all
 * fields of a record straight through and tests cur_ok() once. Multi-byte
 * values are assembled with memcpy and swapped inside when the data is in the
 * other byte order: file bytes are never cast to structs.
 */
#ifndef CONV_CORE_CURSOR_H
#define CONV_CORE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cur {
	const uint8_t *base; /* first byte of the range */
	size_t len;          /* bytes in the range */
	size_t pos;          /* next byte to read */
	bool swap;           /* data is in the other byte order */
	bool err;            /* a read ran past the end (sticky) */
};

void cur_init(struct cur *c, const void *base, size_t len, bool swap);

static inline bool cur_ok(const struct cur *c)
{
	return !c->err;
}

static inline size_t cur_remaining(const struct cur *c)
{
	return c->len - c->pos;
}

/* Marks the cursor failed; later reads return zero. */
void cur_fail(struct cur *c);


/* Returns a pointer to the next n bytes and skips them, or NULL (and sets err). */
const uint8_t *cur_view(struct cur *c, size_t n);

/* A child cursor over the next n bytes (skipped in c); on a short read the child is empty and failed. */
struct cur cur_sub(struct cur *c, size_t n);

void cur_skip(struct cur *c, size_t n);

/*
 * Reads a NUL-terminated string stored in a field of n bytes (perf pads its
 * strings). Returns NULL (and sets err) if the field is short or has no NUL;
 * *len_out gets the string length without the NUL.
 */
const char *cur_str_field(struct cur *c, size_t n, size_t *len_out);

/*
 * Reads a string that runs to the first NUL and then skips the zero padding up
 * to the end of the cursor (for the last field of a record). Returns NULL (and
 * sets err) if there is no NUL.
 */
const char *cur_str_rest(struct cur *c, size_t *len_out);

/* DWARF's unsigned and signed LEB128; a value wider than 64 bits fails. */
uint64_t cur_uleb128_long(struct cur *c);
int64_t cur_sleb128(struct cur *c);

/*
 * A value below 128 is one byte: DWARF's forms and opcodes, the event
 * spool's flags and small ids (it reads six values per event back). That
 * case is an inline test; the rest goes to the loop.
 */
static inline uint64_t cur_uleb128(struct cur *c)
{
	if (!c->err && c->pos < c->len && c->base[c->pos] < 0x80)
		return c->base[c->pos++];
	return cur_uleb128_long(c);
}

/*
 * The writing side, for formats conv writes itself (protobuf varints, the
 * event spool): v as unsigned LEB128 at p, at most 10 bytes; returns the
 * end. The caller has made the room.
 */
static inline uint8_t *cur_put_uleb128(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}
/*
 * Reads a string that runs to the next NUL (DWARF's inline strings) and
 * skips past the NUL. NULL (and err) if no NUL comes before the end.
 */
const char *cur_cstr(struct cur *c, size_t *len_out);
/* Reads n bytes of host-order u64 values into out, swapping each if needed. */
void cur_u64_array(struct cur *c, uint64_t *out, size_t n);

/* Byte-swap helpers, also used by code that decodes bytes outside a cursor. */
static inline uint16_t conv_bswap16(uint16_t v)
{
	return __builtin_bswap16(v);
}
static inline uint32_t conv_bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}
static inline uint64_t conv_bswap64(uint64_t v)
{
	return __builtin_bswap64(v);
}

/*
 * The next n bytes, skipped, or NULL (and err set). With the fixed-size
 * reads below it is inline: the reader makes about ten of them per sample,
 * and as calls (link-time optimisation stopped inlining them) they were
 * 3 % of a run's instructions.
 */
static inline const uint8_t *cur_take(struct cur *c, size_t n)
{
	const uint8_t *p;

	if (c->err || n > c->len - c->pos) {
		cur_fail(c);
		return NULL;
	}
	p = c->base + c->pos;
	c->pos += n;
	return p;
}

static inline uint8_t cur_u8(struct cur *c)
{
	const uint8_t *p = cur_take(c, 1);

	return p ? p[0] : 0;
}

static inline uint16_t cur_u16(struct cur *c)
{
	const uint8_t *p = cur_take(c, 2);
	uint16_t v;

	if (!p)
		return 0;
	memcpy(&v, p, sizeof(v));
	return c->swap ? conv_bswap16(v) : v;
}

static inline uint32_t cur_u32(struct cur *c)
{
	const uint8_t *p = cur_take(c, 4);
	uint32_t v;

	if (!p)
		return 0;
	memcpy(&v, p, sizeof(v));
	return c->swap ? conv_bswap32(v) : v;
}

static inline uint64_t cur_u64(struct cur *c)
{
	const uint8_t *p = cur_take(c, 8);
	uint64_t v;

	if (!p)
		return 0;
	memcpy(&v, p, sizeof(v));
	return c->swap ? conv_bswap64(v) : v;
}

#endif
