/* Shared by the C test programs of tests/unwind: the run length and a
 * monotonic clock. Each program runs for the milliseconds given as its first
 * argument (default 500), so that a recording is bounded by time, not by how
 * fast this machine is. */
#ifndef UW_COMMON_H
#define UW_COMMON_H
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* A function that must keep its own frame and name in every stack. */
#define UW_FRAME __attribute__((noinline, noclone))

static inline double uw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline double uw_run_ms(int argc, char **argv)
{
	return argc > 1 ? atof(argv[1]) : 500.0;
}

/* Results go here so that the compiler keeps the work. */
extern volatile uint64_t uw_sink;
#endif
