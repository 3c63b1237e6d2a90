/*
 * Open-addressing hash map from u64 keys to u64 values (linear probing,
 * power-of-two capacity, at most half full). Used for pid/tid/id lookups.
 */
#ifndef CONV_CORE_HMAP_H
#define CONV_CORE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

void hmap_init(struct hmap *m);
void hmap_release(struct hmap *m);
/* Inserts or replaces; false when out of memory. */
bool hmap_put(struct hmap *m, uint64_t key, uint64_t val);
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

#endif
