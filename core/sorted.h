/*
 * Binary search over an array of structs sorted by a uint64_t member: the
 * one search the address tables (mappings, CFI rows, CUs, functions,
 * symbols, kallsyms, JIT code) all make. Inline, so that each caller's
 * stride and member offset are constants in its hot loop.
 */
#ifndef CONV_CORE_SORTED_H
#define CONV_CORE_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Index of the first of the n elements (each size bytes, from base) whose
 * uint64_t member at key_off is above key; n when there is none. The
 * element before it, if any, is the last one at or below key.
 */
static inline size_t sorted_first_above(const void *base, size_t n, size_t size, size_t key_off,
					uint64_t key)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, p + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
