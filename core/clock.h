/*
 * The monotonic clock in nanoseconds: what phase times and deadlines are
 * measured with (never the wall clock, which an NTP step moves).
 */
#ifndef CONV_CORE_CLOCK_H
#define CONV_CORE_CLOCK_H

#include <stdint.h>

uint64_t clock_now_ns(void);

#endif
