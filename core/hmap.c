#include "core/hmap.h"

#include "core/mem.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap_release(struct hmap *m)
{
	free(m->slots);
	free(m->used);
	hmap_init(m);
}

/*
 * The home slot: the key times 2^64 / phi (Fibonacci hashing), scaled to
 * [0, cap) by its high bits (any cap, not only powers of two). One multiply
 * where hmap_hash took two and three shifts: most keys are hashes already
 * (a lookup per sample, and one more per candidate of a chain of equal
 * hashes), and the multiply still spreads the others (ids + 1, hash + 1)
 * over the table.
 */
static size_t home(const struct hmap *m, uint64_t key)
{
	return (size_t)(((unsigned __int128)(key * 0x9e3779b97f4a7c15ull) * m->cap) >> 64);
}

static size_t next(const struct hmap *m, size_t i)
{
	return i + 1 == m->cap ? 0 : i + 1;
}

static bool is_used(const struct hmap *m, size_t i)
{
	return (m->used[i >> 6] >> (i & 63)) & 1;
}

static void hmap_place(struct hmap *m, uint64_t key, uint64_t val)
{
	size_t i = home(m, key);

	while (is_used(m, i)) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return;
		}
		i = next(m, i);
	}
	m->used[i >> 6] |= (uint64_t)1 << (i & 63);
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->count++;
}

/* Moves the entries into a table of ncap slots. */
static bool hmap_rehash(struct hmap *m, size_t ncap)
{
	struct hmap n;

	if (ncap > SIZE_MAX / 2 / sizeof(struct hmap_slot))
		return false;
	n.cap = ncap;
	n.count = 0;
	/* slots are written before they are read: no need to zero them */
	n.slots = mem_alloc_table(ncap * sizeof(struct hmap_slot));
	n.used = calloc((ncap + 63) / 64, sizeof(uint64_t));
	if (!n.slots || !n.used) {
		free(n.slots);
		free(n.used);
		return false;
	}
	for (size_t w = 0; w < (m->cap + 63) / 64; w++) {
		uint64_t bits = m->used[w];

		while (bits) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);

			bits &= bits - 1;
			hmap_place(&n, m->slots[i].key, m->slots[i].val);
		}
	}
	hmap_release(m);
	*m = n;
	return true;
}

static bool hmap_grow(struct hmap *m)
{
	/* doubling while small, then 1.5x: less slack in the big per-file tables */
	return hmap_rehash(m, !m->cap ? 64 : m->cap < 65536 ? m->cap * 2 : m->cap + m->cap / 2);
}

bool hmap_reserve(struct hmap *m, size_t n)
{
	size_t need;

	if (n > SIZE_MAX / 10)
		return false;
	/* the load hmap_put keeps: (count + 1) * 10 <= cap * 7 */
	need = (n * 10 + 6) / 7 + 1;
	return need <= m->cap || hmap_rehash(m, need);
}

bool hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	if ((m->count + 1) * 10 > m->cap * 7 && !hmap_grow(m))
		return false;
	hmap_place(m, key, val);
	return true;
}

uint64_t *hmap_get(const struct hmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = home(m, key); is_used(m, i); i = next(m, i))
		if (m->slots[i].key == key)
			return &m->slots[i].val;
	return NULL;
}

struct hmap_fp hmap_fingerprint(const void *buf, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(buf, n);
	struct hmap_fp fp;

	fp.lo = h.low64;
	fp.hi = h.high64;
	return fp;
}
