/*
 * What the C benchmarks share: a monotonic clock in seconds and the
 * comparison qsort needs to take a median of run times.
 */
#ifndef CONV_BENCH_BENCHTIME_H
#define CONV_BENCH_BENCHTIME_H

#include <time.h>

static inline double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
