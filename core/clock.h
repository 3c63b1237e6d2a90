/*
 * The monotonic clock in nanoseconds: what phase times and deadlines are
 * measured with (never the wall clock, which an NTP step moves).
 */
#ifndef CONV_CORE_CLOCK_H
#define CONV_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
