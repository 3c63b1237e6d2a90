/*
 * One rule for well-formed UTF-8, for every output that must hold it
 * (JSON, the flame graph's page, JFR strings): symbol names may hold any
 * bytes.
 */
#ifndef CONV_CORE_UTF8_H
#define CONV_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes, n > 0),
 * or 0: no overlong forms, surrogates or code points past U+10FFFF.
 */
static inline size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1fu;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0fu;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Whether s[0..n) is well-formed UTF-8 throughout. */
static inline bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_seq_len(s + i, n - i)))
			return false;
	return true;
}

#endif
