/* Linked with lld (-fuse-ld=lld), whose default layout (no separate-code
 * padding) puts the executable PT_LOAD at a file offset that is NOT page
 * aligned: p_offset != p_vaddr, and both differ from the page-aligned pgoff
 * of the mapping perf records.  A symbolizer that equates file offset with
 * virtual address, or that ignores p_offset, gets every name here wrong.
 * crc_byte() is inlined into lld_crc32().  ~0.5 s of CPU with no argument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HOT __attribute__((noinline, noclone, used))

static inline __attribute__((always_inline)) uint32_t crc_byte(uint32_t crc, uint8_t b)
{
	crc ^= b;
	for (int k = 0; k < 8; k++)
		crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	return crc;
}

/* Bitwise CRC-32 over a synthetic stream: all the work is in crc_byte. */
HOT uint32_t lld_crc32(uint64_t n)
{
	uint32_t crc = 0xffffffffu;
	for (uint64_t i = 0; i < n; i++)
		crc = crc_byte(crc, (uint8_t)(i * 31u));
	return ~crc;
}

/* Newton iterations for square roots: a divide-bound loop. */
HOT double lld_newton(uint64_t n)
{
	double acc = 0.0;
	for (uint64_t i = 1; i <= n; i++) {
		double v = (double)i, x = v;
		for (int k = 0; k < 6; k++)
			x = 0.5 * (x + v / x);
		acc += x;
	}
	return acc;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t base = (uint64_t)(scale * 1000000.0);
	double r = (double)lld_crc32(base * 40) + lld_newton(base * 12);
	printf("lldhot %.0f\n", r);
	return 0;
}
