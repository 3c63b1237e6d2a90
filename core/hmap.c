#include "core/hmap.h"

#include <stdlib.h>
#include <string.h>

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

static bool is_used(const struct hmap *m, size_t i)
{
	return (m->used[i >> 6] >> (i & 63)) & 1;
}

static void hmap_place(struct hmap *m, uint64_t key, uint64_t val)
{
	size_t i = (size_t)hmap_hash(key) & (m->cap - 1);

	while (is_used(m, i)) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->used[i >> 6] |= (uint64_t)1 << (i & 63);
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->count++;
}

static bool hmap_grow(struct hmap *m)
{
	struct hmap n;
	size_t ncap = m->cap ? m->cap * 2 : 64;

	if (ncap > SIZE_MAX / sizeof(struct hmap_slot))
		return false;
	n.cap = ncap;
	n.count = 0;
	/* slots are written before they are read: no need to zero them */
	n.slots = malloc(ncap * sizeof(struct hmap_slot));
	n.used = calloc(ncap / 64, sizeof(uint64_t));
	if (!n.slots || !n.used) {
		free(n.slots);
		free(n.used);
		return false;
	}
	for (size_t w = 0; w < m->cap / 64; w++) {
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
	for (i = (size_t)hmap_hash(key) & (m->cap - 1); is_used(m, i); i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == key)
			return &m->slots[i].val;
	return NULL;
}
