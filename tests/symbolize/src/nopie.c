/* A position-dependent (non-PIE) executable: ET_EXEC at 0x400000.  Two hot
 * functions; ~0.5 s of CPU with no argument, an argument scales it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HOT __attribute__((noinline, noclone, used))

/* Sieve-like modular arithmetic: integer divides. */
HOT uint64_t nopie_modsum(uint64_t n)
{
	uint64_t acc = 0;
	for (uint64_t i = 1; i <= n; i++)
		acc += (i * 2654435761u) % (i | 1);
	return acc;
}

/* A xorshift stream, every 16th value reduced by popcount.  Without -mpopcnt
 * __builtin_popcountll is a call to libgcc's __popcountdi2, linked in
 * statically and compiled without -g: a function of this executable that has
 * a .symtab entry (kept in nopie.debug) but no DWARF.  perf names it from the
 * symbol table, so a symbolizer must fall back to that table too. */
HOT uint64_t nopie_xorshift(uint64_t n)
{
	uint64_t x = 88172645463325252ULL, acc = 0;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((i & 15) == 0)
			acc += (uint64_t)__builtin_popcountll(x);
		else
			acc += x >> 61;
	}
	return acc;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t base = (uint64_t)(scale * 1000000.0);
	uint64_t r = nopie_modsum(base * 40) + nopie_xorshift(base * 250);
	printf("nopie %llu\n", (unsigned long long)r);
	return 0;
}
