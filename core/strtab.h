/*
 * Interned strings: each distinct string is stored once (in an arena) and
 * named by a u32 id, 0 being "". The ids map straight to pprof's string
 * table and JFR's constant pools, so writers never compare strings.
 */
#ifndef CONV_CORE_STRTAB_H
#define CONV_CORE_STRTAB_H

#include "core/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STRTAB_NONE UINT32_MAX

struct strtab {
	struct arena arena;
	const char **strs; /* id -> string */
	uint32_t *lens;
	uint32_t count, cap;
	uint32_t *slots;   /* hash slots: id + 1, 0 = empty */
	size_t nslots;
};

void strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Returns the id of s (adding it), or STRTAB_NONE when out of memory or too long. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
uint32_t strtab_intern_cstr(struct strtab *t, const char *s);
/* Makes room for n strings in all (no rehashing or copying until then); false when out of memory. */
bool strtab_reserve(struct strtab *t, size_t n);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->count ? t->strs[id] : "";
}

#endif
