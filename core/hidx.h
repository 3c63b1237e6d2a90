/*
 * Hash index: u32 values (indexes into the caller's array) found by a 64-bit
 * hash of what they index, which the caller compares to tell a match from a
 * hash collision.
 *
 * Why not hmap: the reading pass's three big tables (distinct samples,
 * frames, stacks; ~100 k entries each on the 90 MB benchmark file) keep
 * only an index per entry and compare the entry itself anyway, so hmap's
 * 16-byte slots (a 64-bit hash and a 64-bit value) were twice the memory
 * needed, and each growth left the old table behind in the heap: the three
 * tables and what their growth left came to ~22 MB of the run's ~80 MB
 * peak, all of it memory touched for the first time, which on this VM is
 * the dearest part of the reading pass (bench/README.md, stop 16).
 *
 * Slot layout: one u64, the tag (the high 32 bits of the hash times 2^64 /
 * phi) above the value. A slot's home is the tag scaled to the table
 * (tag * cap >> 32), so a table grows from its slots alone, and the tag
 * filters candidates before the caller compares: neighbours share the
 * home's bits, so the other ~32 - log2(cap) tell them apart (a false
 * candidate about once per 16 k slots scanned at 100 k entries, once per
 * 256 at 16 M: one more comparison each). Linear probing, at most
 * 70 % full, grows 2x while small then 1.5x; a bitmap says which slots are
 * used (1 bit a slot: it stays in cache while the slots do not).
 */
#ifndef CONV_CORE_HIDX_H
#define CONV_CORE_HIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIDX_NONE UINT32_MAX

struct hidx {
	uint64_t *slots;
	uint64_t *used; /* bitmap, cap bits */
	size_t cap;     /* slots; 0 before the first add */
	size_t count;
};

/* Where a lookup is: hidx_first starts one, hidx_next goes on. */
struct hidx_iter {
	size_t i;
	uint32_t tag;
};

void hidx_init(struct hidx *x);
void hidx_release(struct hidx *x);

/*
 * The first value added with a hash that may be h (same tag), or HIDX_NONE;
 * then hidx_next gives the others until HIDX_NONE. Valid until the next add.
 */
uint32_t hidx_first(const struct hidx *x, uint64_t h, struct hidx_iter *it);
uint32_t hidx_next(const struct hidx *x, struct hidx_iter *it);

/*
 * Starts loading the slot where a lookup of h begins: a caller with several
 * lookups to make (a sample's frames) asks for all of them first, so that
 * their cache misses overlap instead of following each other.
 */
void hidx_prefetch(const struct hidx *x, uint64_t h);

/* Adds val (below HIDX_NONE) under hash h; equal hashes may be added again. False when out of memory. */
bool hidx_add(struct hidx *x, uint64_t h, uint32_t val);

/* Makes room for n values in all, so that they are added without growing; false when out of memory. */
bool hidx_reserve(struct hidx *x, size_t n);

#endif
