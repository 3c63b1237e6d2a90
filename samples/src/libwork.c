/*
 * libwork.c - the shared library of the sample workload (libwork.so).
 *
 * Its only job is to put samples, and frame-pointer call chains, into a
 * second user object besides the executable: conv must map those addresses
 * through libwork.so's own MMAP record and symbolize them with its own debug
 * file.
 */
#include <stdint.h>

/* Out of line on purpose, so it is a frame of its own under lib_work. */
__attribute__((noinline)) static uint64_t lib_mix(uint64_t x)
{
	/* xorshift64: cheap, deterministic, and not foldable by the compiler */
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* Exported entry point: `rounds` iterations of lib_mix. */
uint64_t lib_work(uint64_t seed, unsigned rounds)
{
	uint64_t x = seed | 1;

	for (unsigned i = 0; i < rounds; i++)
		x = lib_mix(x + i);
	return x;
}
