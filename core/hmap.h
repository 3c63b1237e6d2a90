/*
 * Open-addressing hash map from u64 keys to u64 values (linear probing,
 * at most 70 % full; grows 2x while small, then 1.5x).
 */
#ifndef CONV_CORE_HMAP_H
#define CONV_CORE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Slots are 16 bytes (key and value side by side, so a hit touches one
 * cache line) and a separate bitmap says which are used (1 bit a slot: it
 * stays in cache while the slots do not). Tables grow at 70 % load. The
 * tables that see a lookup per sample or per frame (stacks, aggregates,
 * frames) are far larger than the caches, so slot size is memory and time.
 */
struct hmap_slot {
	uint64_t key;
	uint64_t val;
};

struct hmap {
	struct hmap_slot *slots;
	uint64_t *used; /* bitmap, cap bits */
	size_t cap;     /* slots; 0 before the first put */
	size_t count;
};

void hmap_init(struct hmap *m);
void hmap_release(struct hmap *m);
/* Inserts or replaces; false when out of memory. */
bool hmap_put(struct hmap *m, uint64_t key, uint64_t val);
/*
 * Makes room for n entries in all, so that they are put without growing
 * (each growth places every entry again, at random in a table larger than
 * the caches); false when out of memory.
 */
bool hmap_reserve(struct hmap *m, size_t n);
/* Returns a pointer to the value, or NULL; valid until the next put. */
uint64_t *hmap_get(const struct hmap *m, uint64_t key);

/* The mixing function, also used by other tables. */
static inline uint64_t hmap_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* A hash h of earlier values combined with v: the one rule every composite key uses. */
static inline uint64_t hmap_mix(uint64_t h, uint64_t v)
{
	return hmap_hash(h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

/*
 * A 128-bit fingerprint of n bytes (XXH3-128): for tables that keep the
 * fingerprint of a long key instead of the key. Two different keys share
 * one with probability 2^-128; a million keys give about 10^-27 of a
 * collision in all.
 */
struct hmap_fp {
	uint64_t lo, hi;
};

struct hmap_fp hmap_fingerprint(const void *buf, size_t n);

#endif
