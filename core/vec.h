/*
 * Growing arrays: the one helper behind every dynamic array of conv, with
 * the size arithmetic checked.
 */
#ifndef CONV_CORE_VEC_H
#define CONV_CORE_VEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes room for at least need elements of elem bytes in *v (capacity *cap),
 * doubling (1.5x past 1 MiB); false (nothing changed) when out of memory or on
 * overflow.
 */
bool vec_reserve(void **v, size_t *cap, size_t need, size_t elem);

/* Gives back the capacity beyond n elements (an array that is done growing). Never fails. */
void vec_shrink(void **v, size_t *cap, size_t n, size_t elem);

/* The same without doubling: capacity exactly need when it grows (for known sizes). */
bool vec_reserve_exact(void **v, size_t *cap, size_t need, size_t elem);

/* Frees the array and leaves it empty (NULL, capacity 0), ready to grow again. */
void vec_free(void **v, size_t *cap);

#endif
