#include "core/dbuf.h"

#include "core/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dbuf_init(struct dbuf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->err = false;
}

void dbuf_release(struct dbuf *b)
{
	free(b->data);
	dbuf_init(b, b->cap);
}

void dbuf_reset(struct dbuf *b)
{
	b->len = 0;
	b->err = false;
}

bool dbuf_grow(struct dbuf *b, size_t n)
{
	size_t want, nalloc;
	unsigned char *p;

	if (b->err)
		return false;
	if (n <= b->alloc - b->len)
		return true;
	if (n > SIZE_MAX - b->len || (b->cap && b->len + n > b->cap)) {
		b->err = true;
		return false;
	}
	want = b->len + n;
	nalloc = b->alloc ? b->alloc : 256;
	while (nalloc < want)
		nalloc = nalloc > SIZE_MAX / 2 ? want : nalloc * 2;
	if (b->cap && nalloc > b->cap)
		nalloc = b->cap > want ? b->cap : want;
	p = realloc(b->data, nalloc);
	if (!p) {
		b->err = true;
		return false;
	}
	mem_advise_huge(p, nalloc);
	b->data = p;
	b->alloc = nalloc;
	return true;
}

bool dbuf_putc(struct dbuf *b, char c)
{
	return dbuf_append(b, &c, 1);
}

bool dbuf_puts(struct dbuf *b, const char *s)
{
	return dbuf_append(b, s, strlen(s));
}

bool dbuf_vprintf(struct dbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !dbuf_reserve(b, (size_t)n + 1)) {
		b->err = true;
		return false;
	}
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return true;
}

bool dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = dbuf_vprintf(b, fmt, ap);
	va_end(ap);
	return ok;
}

void dbuf_consume(struct dbuf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}
