#include "core/strtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
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

static int strtab_grow(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64;
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
	if (t->count == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 64;
		const char **ns = realloc(t->strs, ncap * sizeof(*ns));
		uint32_t *nl;

		if (!ns)
			return STRTAB_NONE;
		t->strs = ns;
		nl = realloc(t->lens, ncap * sizeof(*nl));
		if (!nl)
			return STRTAB_NONE;
		t->lens = nl;
		t->cap = ncap;
	}
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
