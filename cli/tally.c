#include "cli/tally.h"

#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

void tally_init(struct tally *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->idx);
}

void tally_release(struct tally *t)
{
	hmap_release(&t->idx);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static bool key_eq(const struct tally_ent *e, uint64_t k0, uint64_t k1, uint64_t k2)
{
	return e->key[0] == k0 && e->key[1] == k1 && e->key[2] == k2;
}

bool tally_add(struct tally *t, uint64_t k0, uint64_t k1, uint64_t k2)
{
	uint64_t h = hmap_hash(k0 ^ hmap_hash(k1 ^ hmap_hash(k2)));
	uint64_t *v = hmap_get(&t->idx, h);
	struct tally_ent *e;

	if (v) {
		if (key_eq(&t->v[*v], k0, k1, k2)) {
			t->v[*v].count++;
			return true;
		}
		/* two keys with one hash: rare, a scan settles it */
		for (size_t i = 0; i < t->n; i++)
			if (key_eq(&t->v[i], k0, k1, k2)) {
				t->v[i].count++;
				return true;
			}
	}
	if (!vec_reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return false;
	e = &t->v[t->n];
	e->key[0] = k0;
	e->key[1] = k1;
	e->key[2] = k2;
	e->count = 1;
	if (!v && !hmap_put(&t->idx, h, t->n))
		return false;
	t->n++;
	return true;
}
