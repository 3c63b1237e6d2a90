/*
 * Chained-block arena for data that lives as long as one input file: attrs,
 * event names, feature strings, build-id tables, and later the process model.
 * Everything is freed at once by arena_release(); there is no per-object free.
 * An arena has a byte cap so that a hostile file cannot make it grow without
 * bound: at the cap allocations return NULL and callers report CONV_E_LIMIT.
 */
#ifndef CONV_CORE_ARENA_H
#define CONV_CORE_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head; /* newest block; older ones chained behind it */
	size_t used;              /* bytes handed out from head */
	size_t total;             /* bytes of all blocks, checked against cap */
	size_t cap;               /* 0 = no cap */
};

void arena_init(struct arena *a, size_t cap);
void arena_release(struct arena *a);

/* Returns zeroed, 16-byte aligned memory, or NULL at the cap or when out of memory. */
void *arena_alloc(struct arena *a, size_t size);

/* Like arena_alloc(n * size) with the multiplication checked. */
void *arena_alloc_array(struct arena *a, size_t n, size_t size);

/* Copies len bytes and appends a NUL. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

void *arena_memdup(struct arena *a, const void *p, size_t len);

#endif
