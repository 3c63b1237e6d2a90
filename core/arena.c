#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *prev;
	size_t size;
	_Alignas(16) unsigned char data[];
};

/*
 * Blocks start at 4 KiB and double up to 64 KiB: an arena that holds a few
 * strings (the string table of each object the symbolizer meets, most of
 * them with a handful of names) took a 64 KiB block, resident in the
 * heap's huge pages: 1.4 MB for the 21 objects of the 90 MB benchmark file.
 */
#define ARENA_FIRST_BLOCK (4u * 1024u)
#define ARENA_MIN_BLOCK (64u * 1024u)

void arena_init(struct arena *a, size_t cap)
{
	a->head = NULL;
	a->used = 0;
	a->total = 0;
	a->cap = cap;
}

void arena_release(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *prev = b->prev;

		free(b);
		b = prev;
	}
	arena_init(a, a->cap);
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t need = (size + 15u) & ~(size_t)15u;
	struct arena_block *b;
	void *p;

	if (need < size)
		return NULL;
	if (!a->head || need > a->head->size - a->used) {
		size_t grow = a->total < ARENA_FIRST_BLOCK ? ARENA_FIRST_BLOCK
				: a->total < ARENA_MIN_BLOCK ? a->total : ARENA_MIN_BLOCK;
		size_t bsize = need > grow ? need : grow;

		if (bsize > SIZE_MAX - sizeof(*b))
			return NULL;
		if (a->cap && bsize > a->cap - (a->total < a->cap ? a->total : a->cap))
			return NULL;
		b = malloc(sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->prev = a->head;
		b->size = bsize;
		a->head = b;
		a->used = 0;
		a->total += bsize;
	}
	p = a->head->data + a->used;
	a->used += need;
	memset(p, 0, size);
	return p;
}

void *arena_alloc_array(struct arena *a, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	return arena_alloc(a, total);
}

void *arena_memdup(struct arena *a, const void *p, size_t len)
{
	void *q = arena_alloc(a, len ? len : 1);

	if (q && len)
		memcpy(q, p, len);
	return q;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *q;

	if (len == SIZE_MAX)
		return NULL;
	q = arena_alloc(a, len + 1);
	if (q) {
		memcpy(q, s, len);
		q[len] = '\0';
	}
	return q;
}
