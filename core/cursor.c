#include "core/cursor.h"

#include <string.h>

void cur_init(struct cur *c, const void *base, size_t len, bool swap)
{
	c->base = base;
	c->len = base ? len : 0;
	c->pos = 0;
	c->swap = swap;
	c->err = false;
}

void cur_fail(struct cur *c)
{
	c->err = true;
	c->pos = c->len;
}

const uint8_t *cur_view(struct cur *c, size_t n)
{
	return cur_take(c, n);
}

struct cur cur_sub(struct cur *c, size_t n)
{
	struct cur sub;
	const uint8_t *p = cur_take(c, n);

	cur_init(&sub, p, p ? n : 0, c->swap);
	if (!p)
		sub.err = true;
	return sub;
}

void cur_skip(struct cur *c, size_t n)
{
	(void)cur_take(c, n);
}

const char *cur_str_field(struct cur *c, size_t n, size_t *len_out)
{
	const uint8_t *p = cur_take(c, n);
	const uint8_t *nul;

	if (!p)
		return NULL;
	nul = memchr(p, 0, n);
	if (!nul) {
		cur_fail(c);
		return NULL;
	}
	if (len_out)
		*len_out = (size_t)(nul - p);
	return (const char *)p;
}

const char *cur_str_rest(struct cur *c, size_t *len_out)
{
	return cur_str_field(c, cur_remaining(c), len_out);
}

void cur_u64_array(struct cur *c, uint64_t *out, size_t n)
{
	const uint8_t *p;

	if (n > cur_remaining(c) / 8) {
		cur_fail(c);
		return;
	}
	p = cur_take(c, n * 8);
	if (!p)
		return;
	memcpy(out, p, n * 8);
	if (c->swap)
		for (size_t i = 0; i < n; i++)
			out[i] = conv_bswap64(out[i]);
}

/*
 * LEB128 as DWARF encodes it: 7 bits per byte, low group first, the top bit
 * set on every byte but the last. Bits past the 64th must be zero (or, for
 * the signed form, copies of the sign): a longer value fails the cursor.
 */
uint64_t cur_uleb128_long(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b;

		if (c->err || 1 > c->len - c->pos) {
			cur_fail(c);
			return 0;
		}
		b = c->base[c->pos++];
		if (shift < 64) {
			uint64_t part = (uint64_t)(b & 0x7f);

			if (shift > 57 && (part >> (64 - shift)) != 0) {
				cur_fail(c);
				return 0;
			}
			v |= part << shift;
		} else if ((b & 0x7f) != 0) {
			cur_fail(c);
			return 0;
		}
		if (!(b & 0x80))
			return v;
	}
}

int64_t cur_sleb128(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->err || 1 > c->len - c->pos) {
			cur_fail(c);
			return 0;
		}
		b = c->base[c->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		else if ((b & 0x7f) != 0 && (b & 0x7f) != 0x7f) {
			cur_fail(c);
			return 0;
		}
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

const char *cur_cstr(struct cur *c, size_t *len_out)
{
	const uint8_t *p, *nul;

	if (c->err || c->pos >= c->len) {
		cur_fail(c);
		return NULL;
	}
	p = c->base + c->pos;
	nul = memchr(p, 0, c->len - c->pos);
	if (!nul) {
		cur_fail(c);
		return NULL;
	}
	c->pos += (size_t)(nul - p) + 1;
	if (len_out)
		*len_out = (size_t)(nul - p);
	return (const char *)p;
}
