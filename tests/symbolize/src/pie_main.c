/* A PIE executable whose hot code is split between itself (pie_spin) and a
 * shared library (libhot.so: hot_hash, hot_collatz, hot_mix with the inlined
 * mix_round, reached through libhot_run).  pie_spin is not exported either,
 * so the stripped executable keeps no name for it.  Runs ~0.5 s of CPU with
 * no argument; an argument scales it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HOT __attribute__((noinline, noclone, used))

uint64_t libhot_run(uint64_t base); /* libhot.so */

/* A floating-point recurrence that lives in the executable itself. */
HOT double pie_spin(uint64_t n)
{
	double x = 0.5, acc = 0.0;
	for (uint64_t i = 0; i < n; i++) {
		x = 3.9 * x * (1.0 - x);
		acc += x;
	}
	return acc;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t base = (uint64_t)(scale * 1000000.0);
	uint64_t r = 0;

	r += libhot_run(base);
	r += (uint64_t)pie_spin(base * 25);
	printf("pie_main %llu\n", (unsigned long long)r);
	return 0;
}
