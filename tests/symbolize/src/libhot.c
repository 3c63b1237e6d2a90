/* libhot.so: hot functions that live in a shared library (see pie_main.c).
 *
 * Only libhot_run() is exported.  The hot functions are hidden, so once the
 * library is stripped they are in no symbol table it keeps (.dynsym): their
 * names can only come from the separate debug info.  Each is noinline+noclone
 * so that its symbol table name (what perf shows) is its DWARF name (what a
 * DWARF symbolizer shows): GCC's .constprop/.isra/.part clones would differ.
 * mix_round() is the opposite: always inlined into hot_mix(), so the samples
 * in its code belong to hot_mix with an inline frame mix_round on top. */
#include <stdint.h>

#define HOT __attribute__((noinline, noclone, used, visibility("hidden")))

static inline __attribute__((always_inline)) uint64_t mix_round(uint64_t x, uint64_t k)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL + k;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over a synthetic byte stream: a dependent multiply chain. */
HOT uint64_t hot_hash(uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (uint64_t i = 0; i < n; i++) {
		h ^= (uint8_t)(i * 0x9e3779b9u);
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Collatz steps: data-dependent branches. */
HOT uint64_t hot_collatz(uint64_t n)
{
	uint64_t steps = 0;
	for (uint64_t s = 1; s <= n; s++) {
		uint64_t x = s;
		while (x != 1) {
			x = (x & 1) ? 3 * x + 1 : x >> 1;
			steps++;
		}
	}
	return steps;
}

/* The caller of the inlined helper: nearly all its time is in mix_round. */
HOT uint64_t hot_mix(uint64_t n)
{
	uint64_t acc = 0x1234567ULL;
	for (uint64_t i = 0; i < n; i++)
		acc = mix_round(acc + i, i & 7);
	return acc;
}

/* The library's one exported entry point; its share of the time is ~0. */
__attribute__((noinline)) uint64_t libhot_run(uint64_t base)
{
	uint64_t r = hot_mix(base * 55);
	r += hot_hash(base * 100);
	r += hot_collatz(base * 3 / 5);
	return r;
}
