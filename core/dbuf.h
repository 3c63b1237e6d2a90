/*
 * Growable byte buffer with a size cap (curl's dynbuf idea): appends fail
 * instead of growing past the cap, so input-driven growth stays bounded.
 */
#ifndef CONV_CORE_DBUF_H
#define CONV_CORE_DBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

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

/* Makes room for n more bytes; false (and err set) at the cap or out of memory. */
bool dbuf_reserve(struct dbuf *b, size_t n);
bool dbuf_append(struct dbuf *b, const void *p, size_t n);
bool dbuf_putc(struct dbuf *b, char c);
bool dbuf_puts(struct dbuf *b, const char *s);
bool dbuf_printf(struct dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool dbuf_vprintf(struct dbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Removes the first n bytes, moving the rest to the front. */
void dbuf_consume(struct dbuf *b, size_t n);

#endif
