#include "core/strtab.h"

#include "core/hmap.h"

#include <stdlib.h>
#include <string.h>

/*
 * Eight bytes a step (FNV-1a took one: a multiply's latency per byte, and
 * symbol names run to hundreds of bytes), finished by hmap_hash's mixer so
 * that the low bits, which pick the slot, depend on every byte. Only slot
 * placement depends on it (ids are given in insertion order), so the host's
 * byte order, which the loads follow, changes nothing in any output.
 */
static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i = 0;

	for (; len - i >= 8; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, s + i, len - i);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	return hmap_hash(h);
}

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	arena_init(&t->arena, 0);
	strtab_intern(t, "", 0);
}

void strtab_release(struct strtab *t)
{
	arena_release(&t->arena);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void slot_place(uint32_t *slots, size_t n, uint64_t h, uint32_t id)
{
	size_t i = (size_t)h & (n - 1);

	while (slots[i])
		i = (i + 1) & (n - 1);
	slots[i] = id + 1;
}

/* Rehashes into n slots (a power of two). */
static int strtab_rehash(struct strtab *t, size_t n)
{
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t id = 0; id < t->count; id++)
		slot_place(slots, n, str_hash(t->strs[id], t->lens[id]), id);
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static int strtab_grow(struct strtab *t)
{
	return strtab_rehash(t, t->nslots ? t->nslots * 2 : 64);
}

/* Room for ncap ids in strs and lens. */
static int strtab_grow_ids(struct strtab *t, uint32_t ncap)
{
	const char **ns = realloc(t->strs, ncap * sizeof(*ns));
	uint32_t *nl;

	if (!ns)
		return -1;
	t->strs = ns;
	nl = realloc(t->lens, ncap * sizeof(*nl));
	if (!nl)
		return -1;
	t->lens = nl;
	t->cap = ncap;
	return 0;
}

bool strtab_reserve(struct strtab *t, size_t n)
{
	size_t slots = t->nslots ? t->nslots : 64;

	if (n > UINT32_MAX / 4)
		return false;
	/* the load strtab_intern keeps: (count + 1) * 2 <= nslots */
	while ((n + 1) * 2 > slots)
		slots *= 2;
	if (slots > t->nslots && strtab_rehash(t, slots))
		return false;
	return n <= t->cap || !strtab_grow_ids(t, (uint32_t)n);
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h;
	size_t i;
	char *copy;

	if (len > UINT32_MAX - 1)
		return STRTAB_NONE;
	if ((t->count + 1) * 2 > t->nslots && strtab_grow(t))
		return STRTAB_NONE;
	h = str_hash(s, len);
	for (i = (size_t)h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = t->slots[i] - 1;

		if (t->lens[id] == len && !memcmp(t->strs[id], s, len))
			return id;
	}
	if (t->count == t->cap && strtab_grow_ids(t, t->cap ? t->cap * 2 : 64))
		return STRTAB_NONE;
	copy = arena_strndup(&t->arena, s, len);
	if (!copy)
		return STRTAB_NONE;
	t->strs[t->count] = copy;
	t->lens[t->count] = (uint32_t)len;
	t->slots[i] = t->count + 1;
	return t->count++;
}

uint32_t strtab_intern_cstr(struct strtab *t, const char *s)
{
	return strtab_intern(t, s, strlen(s));
}
