/* Recursion 240 frames deep, each frame holding a 64-byte array (about
 * 100 bytes a frame, 24 KB in all: three times perf's default 8 KB stack
 * copy, well inside its largest, 65528 bytes), and all the time spent at
 * the bottom in deep_burn. With 8 KB copies every such sample's walk ends
 * where the copy does; with 65528 bytes it reaches main and _start.
 * The recursive call is not a tail call (its result is used after it) and
 * is kept out of line, so each level is a real frame. Built without frame
 * pointers. */
#include <stdint.h>
#include "uw_common.h"

#define DEPTH 240

volatile uint64_t uw_sink;

UW_FRAME static uint64_t deep_burn(uint64_t x, double end)
{
	do
		for (int i = 0; i < 100000; i++)
			x = (x ^ (x >> 13)) * 0xff51afd7ed558ccdull + 1;
	while (uw_now_ms() < end);
	return x;
}

UW_FRAME static uint64_t deep_recurse(int depth, uint64_t seed, double end)
{
	volatile unsigned char pad[64];
	uint64_t r;

	for (int i = 0; i < 64; i++)
		pad[i] = (unsigned char)((seed >> (i & 7)) ^ (uint64_t)depth);
	if (depth == 0)
		r = deep_burn(seed, end);
	else
		r = deep_recurse(depth - 1, seed * 31 + (uint64_t)depth, end);
	return r + pad[depth & 63];
}

int main(int argc, char **argv)
{
	uw_sink = deep_recurse(DEPTH, 42, uw_now_ms() + uw_run_ms(argc, argv));
	return 0;
}
