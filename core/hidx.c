#include "core/hidx.h"

#include "core/mem.h"

#include <stdlib.h>
#include <string.h>

void hidx_init(struct hidx *x)
{
	memset(x, 0, sizeof(*x));
}

void hidx_release(struct hidx *x)
{
	free(x->slots);
	free(x->used);
	hidx_init(x);
}

/* The tag of hash h: the high half of h times 2^64 / phi (Fibonacci hashing spreads ids and sums too). */
static uint32_t tag_of(uint64_t h)
{
	return (uint32_t)((h * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The home slot of a tag: any cap, not only powers of two (cap < 2^32). */
static size_t home(size_t cap, uint32_t tag)
{
	return (size_t)(((uint64_t)tag * cap) >> 32);
}

static bool is_used(const struct hidx *x, size_t i)
{
	return (x->used[i >> 6] >> (i & 63)) & 1;
}

/* The first used slot from it->i on whose tag is it->tag; HIDX_NONE at the first free slot. */
static uint32_t scan(const struct hidx *x, struct hidx_iter *it)
{
	for (size_t i = it->i; is_used(x, i); i = i + 1 == x->cap ? 0 : i + 1) {
		uint64_t s = x->slots[i];

		if ((uint32_t)(s >> 32) == it->tag) {
			it->i = i + 1 == x->cap ? 0 : i + 1;
			return (uint32_t)s;
		}
	}
	return HIDX_NONE;
}

uint32_t hidx_first(const struct hidx *x, uint64_t h, struct hidx_iter *it)
{
	it->tag = tag_of(h);
	if (!x->cap)
		return HIDX_NONE;
	it->i = home(x->cap, it->tag);
	return scan(x, it);
}

void hidx_prefetch(const struct hidx *x, uint64_t h)
{
	if (x->cap)
		__builtin_prefetch(&x->slots[home(x->cap, tag_of(h))]);
}

uint32_t hidx_next(const struct hidx *x, struct hidx_iter *it)
{
	return x->cap ? scan(x, it) : HIDX_NONE;
}

static void place(uint64_t *slots, uint64_t *used, size_t cap, uint64_t slot)
{
	size_t i = home(cap, (uint32_t)(slot >> 32));

	while ((used[i >> 6] >> (i & 63)) & 1)
		i = i + 1 == cap ? 0 : i + 1;
	used[i >> 6] |= (uint64_t)1 << (i & 63);
	slots[i] = slot;
}

/* Moves the values into a table of ncap slots. */
static bool rehash(struct hidx *x, size_t ncap)
{
	uint64_t *ns, *nu;

	if (ncap > UINT32_MAX)
		return false;
	/* slots are written before they are read: no need to zero them */
	ns = mem_alloc_table(ncap * sizeof(*ns));
	nu = calloc((ncap + 63) / 64, sizeof(*nu));
	if (!ns || !nu) {
		free(ns);
		free(nu);
		return false;
	}
	for (size_t w = 0; w < (x->cap + 63) / 64; w++) {
		uint64_t bits = x->used[w];

		while (bits) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			place(ns, nu, ncap, x->slots[i]);
		}
	}
	free(x->slots);
	free(x->used);
	x->slots = ns;
	x->used = nu;
	x->cap = ncap;
	return true;
}

bool hidx_reserve(struct hidx *x, size_t n)
{
	size_t need;

	if (n > UINT32_MAX)
		return false;
	/* the load hidx_add keeps: (count + 1) * 10 <= cap * 7 */
	need = (n * 10 + 6) / 7 + 1;
	return need <= x->cap || rehash(x, need);
}

bool hidx_add(struct hidx *x, uint64_t h, uint32_t val)
{
	if (val == HIDX_NONE)
		return false;
	if ((x->count + 1) * 10 > x->cap * 7 &&
	    !rehash(x, !x->cap ? 64 : x->cap < 65536 ? x->cap * 2 : x->cap + x->cap / 2))
		return false;
	place(x->slots, x->used, x->cap, (uint64_t)tag_of(h) << 32 | val);
	x->count++;
	return true;
}
