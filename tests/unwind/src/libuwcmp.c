/* libuwcmp.so: the hot work of uw_qsort, reached from libc.
 *
 * uw_sort_round (exported) sorts an array with qsort(); libc's merge sort
 * calls back uw_cmp, which calls uw_weight, where the time goes. So most
 * stacks are uw_weight <- uw_cmp <- msort_with_tmp (libc, recursive) ... <-
 * qsort_r <- uw_sort_round <- uw_drive (executable) <- main: an unwinder
 * must cross libc.so.6 twice and this library's frames in between.
 * uw_sort_round keeps its records in a variable-length array, so GCC gives
 * it a frame based on RBP although frame pointers are omitted: its CFA is
 * RBP + 16, not RSP + offset. */
#include <stdint.h>
#include <stdlib.h>

#define UW_FRAME __attribute__((noinline, noclone))

struct uw_rec {
	uint64_t key;
	uint32_t salt;
};

UW_FRAME static uint64_t uw_weight(const struct uw_rec *r)
{
	uint64_t h = r->key ^ r->salt;
	for (int i = 0; i < 24; i++)
		h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
	return h;
}

UW_FRAME static int uw_cmp(const void *a, const void *b)
{
	uint64_t x = uw_weight(a), y = uw_weight(b);
	return (x > y) - (x < y);
}

UW_FRAME uint64_t uw_sort_round(unsigned n, uint64_t seed)
{
	struct uw_rec v[n]; /* VLA: an RBP-based frame */

	for (unsigned i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		v[i].key = seed >> 11;
		v[i].salt = (uint32_t)(seed >> 40);
	}
	qsort(v, n, sizeof v[0], uw_cmp);
	return v[0].key ^ v[n - 1].key;
}
