/*
 * Sums of sample values that stop at the limits instead of wrapping: a
 * recording's periods are what its author wrote (2^63 is one SAMPLE away),
 * and a sum past INT64_MAX is undefined in C and meaningless in a profile.
 */
#ifndef CONV_CORE_SATADD_H
#define CONV_CORE_SATADD_H

#include <stdint.h>

static inline int64_t satadd_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Kept within INT64_MAX, as the profile's values are signed. */
static inline uint64_t satadd_u63(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r) || r > (uint64_t)INT64_MAX)
		return (uint64_t)INT64_MAX;
	return r;
}

#endif
