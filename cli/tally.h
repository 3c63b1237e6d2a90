/*
 * Counts by a small composite key (three u64s), in first-seen order, for the
 * listings of conv info (samples by thread and DSO, by JIT symbol).
 */
#ifndef CONV_CLI_TALLY_H
#define CONV_CLI_TALLY_H

#include "core/hmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tally_ent {
	uint64_t key[3];
	uint64_t count;
};

struct tally {
	struct hmap idx; /* hash of key -> index of the first entry with that hash */
	struct tally_ent *v;
	size_t n, cap;
};

void tally_init(struct tally *t);
void tally_release(struct tally *t);
/* Adds 1 to the count of (k0, k1, k2); false when out of memory. */
bool tally_add(struct tally *t, uint64_t k0, uint64_t k1, uint64_t k2);

#endif
