/*
 * Growable byte buffer with a size cap (curl's dynbuf idea): appends fail
 * instead of growing past the cap, so input-driven growth stays bounded.
 */
#ifndef CONV_CORE_DBUF_H
#define CONV_CORE_DBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct dbuf {
	unsigned char *data; /* owned; NULL until the first append */
	size_t len;          /* bytes in use */
	size_t alloc;        /* bytes allocated */
	size_t cap;          /* largest allowed len; 0 = no cap */
	bool err;            /* an append failed (sticky) */
};

void dbuf_init(struct dbuf *b, size_t cap);
void dbuf_release(struct dbuf *b);
/* Empties the buffer but keeps its memory. */
void dbuf_reset(struct dbuf *b);

/* The growing half of dbuf_reserve: out of line, as it is rare. */
bool dbuf_grow(struct dbuf *b, size_t n);

/*
 * Makes room for n more bytes; false (and err set) at the cap or out of
 * memory. Inline because encoders call it for every varint and the reader
 * for every record: as a call it was 5 % of a run's instructions
 * (cachegrind), nearly all of them taking the first branch.
 */
static inline bool dbuf_reserve(struct dbuf *b, size_t n)
{
	if (!b->err && n <= b->alloc - b->len)
		return true;
	return dbuf_grow(b, n);
}

static inline bool dbuf_append(struct dbuf *b, const void *p, size_t n)
{
	if (!n)
		return !b->err;
	if (!dbuf_reserve(b, n))
		return false;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

bool dbuf_putc(struct dbuf *b, char c);
bool dbuf_puts(struct dbuf *b, const char *s);
bool dbuf_printf(struct dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool dbuf_vprintf(struct dbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Removes the first n bytes, moving the rest to the front. */
void dbuf_consume(struct dbuf *b, size_t n);

#endif
