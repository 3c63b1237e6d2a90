/*
 * Shared by the fuzz targets: the entry point's prototype, a check that
 * aborts (so that libFuzzer reports a violated invariant as a crash), and
 * helpers that read memory so that AddressSanitizer sees every byte a
 * returned view claims to hold.
 */
#ifndef CONV_TESTS_FUZZ_COMMON_H
#define CONV_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                   \
	do {                                                                               \
		if (!(cond))                                                               \
			abort();                                                           \
	} while (0)

/* Everything read ends up here so that the loads cannot be optimised away. */
extern volatile uint64_t fuzz_sink;

static inline uint64_t fuzz_touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s;
}

static inline uint64_t fuzz_touch_str(const char *s)
{
	return s ? strlen(s) + (uint64_t)(unsigned char)s[0] : 0;
}

#endif
