#include "core/hmap.h"

#include <stdlib.h>
#include <string.h>

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap_release(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	hmap_init(m);
}

static void hmap_place(struct hmap *m, uint64_t key, uint64_t val)
{
	size_t i = (size_t)hmap_hash(key) & (m->cap - 1);

	while (m->used[i]) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
}

static bool hmap_grow(struct hmap *m)
{
	struct hmap n;
	size_t ncap = m->cap ? m->cap * 2 : 16;

	if (ncap > SIZE_MAX / sizeof(uint64_t))
		return false;
	n.cap = ncap;
	n.count = 0;
	n.keys = malloc(ncap * sizeof(uint64_t));
	n.vals = malloc(ncap * sizeof(uint64_t));
	n.used = calloc(ncap, 1);
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			hmap_place(&n, m->keys[i], m->vals[i]);
	hmap_release(m);
	*m = n;
	return true;
}

bool hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	if ((m->count + 1) * 2 > m->cap && !hmap_grow(m))
		return false;
	hmap_place(m, key, val);
	return true;
}

uint64_t *hmap_get(const struct hmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = (size_t)hmap_hash(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return &m->vals[i];
	return NULL;
}
