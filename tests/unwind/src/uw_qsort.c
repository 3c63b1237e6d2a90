/* A program whose hot code is in a shared library called back by libc:
 * main -> uw_drive -> uw_sort_round (libuwcmp.so, through the PLT) -> qsort
 * (libc) -> uw_cmp -> uw_weight. Built without frame pointers. */
#include <stdint.h>
#include "uw_common.h"

volatile uint64_t uw_sink;

uint64_t uw_sort_round(unsigned n, uint64_t seed); /* libuwcmp.so */

UW_FRAME static uint64_t uw_drive(unsigned round)
{
	uint64_t acc = 0;
	for (unsigned i = 0; i < 8; i++)
		acc ^= uw_sort_round(96 + (round + i) % 64, round * 2654435761u + i);
	return acc;
}

int main(int argc, char **argv)
{
	double end = uw_now_ms() + uw_run_ms(argc, argv);
	unsigned round = 0;

	do
		uw_sink ^= uw_drive(round++);
	while (uw_now_ms() < end);
	return 0;
}
