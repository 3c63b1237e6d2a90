/*
 * JFR's number encodings, shared by the writer (jfrwriter/jfr.c) and the
 * rewriter (jfredit/) so that the two cannot drift (in core/: neither of
 * those folders may include the other): a varint is LEB128 of
 * at most 9 bytes, the 9th holding bits 56-63 whole (so it is not LEB128
 * for values of 2^63 and above); header fields are big-endian.
 */
#ifndef CONV_CORE_JFRENC_H
#define CONV_CORE_JFRENC_H

#include "core/dbuf.h"
#include "core/utf8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Writes v at p in JFR's varint form; returns the end (at most 9 bytes). */
static inline unsigned char *jfr_enc_varint(unsigned char *p, uint64_t v)
{
	for (int n = 0; n < 8 && v >= 0x80; n++) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v; /* the 9th byte holds bits 56-63 whole */
	return p;
}

static inline void jfr_put_varint(struct dbuf *b, uint64_t v)
{
	if (dbuf_reserve(b, 9))
		b->len = (size_t)(jfr_enc_varint(b->data + b->len, v) - b->data);
}

/*
 * v as a varint of exactly n bytes (2 to 9), padded with continuation
 * bytes: a slot written before its value is known, patched later. Below
 * 9 bytes v must be under 2^(7n).
 */
static inline void jfr_enc_varint_fixed(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n - 1; i++)
		p[i] = (unsigned char)((v >> (7 * i) & 0x7f) | 0x80);
	p[n - 1] = (unsigned char)(n == 9 ? v >> 56 : v >> (7 * (n - 1)) & 0x7f);
}

/* v big-endian in n bytes. */
static inline void jfr_put_be(unsigned char *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		p[i] = (unsigned char)v;
		v >>= 8;
	}
}

/*
 * A string field: 0 for NULL, else encoding 3 (UTF-8), its length and
 * bytes. Readers reject invalid UTF-8 (symbol names may hold any bytes):
 * such a string keeps its ASCII and has '?' for every other byte.
 */
static inline void jfr_put_string(struct dbuf *b, const char *s)
{
	size_t n;

	if (!s) {
		dbuf_putc(b, 0);
		return;
	}
	n = strlen(s);
	dbuf_putc(b, 3);
	jfr_put_varint(b, n);
	if (utf8_valid((const unsigned char *)s, n)) {
		dbuf_append(b, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dbuf_putc(b, (unsigned char)s[i] < 0x80 ? s[i] : '?');
}

#endif
