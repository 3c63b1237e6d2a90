/*
 * Memory advice for conv's large tables.
 */
#ifndef CONV_CORE_MEM_H
#define CONV_CORE_MEM_H

#include <stddef.h>

/*
 * Asks the kernel to back the pages of [p, p + n) with transparent huge
 * pages (madvise MADV_HUGEPAGE: used where whole aligned 2 MiB runs fit),
 * when n is large enough to hold one. Why: the per-file tables (hash slots,
 * frames, stacks, the reorder pool) are tens of MB touched at random; with
 * 4 KiB pages every first touch is a page fault and most lookups a TLB
 * miss, which on a virtual machine costs a nested page walk. Debian's
 * default THP mode is "madvise", so without the advice none is used. The
 * advice covers the block's pages whole, so that a block malloc mapped on
 * its own stays one mapping, which realloc can move with mremap (advice on
 * part of it split it, and realloc copied it instead). Every call also
 * advises what the brk heap grew by since the last one (in whole aligned
 * 2 MiB runs; the cli makes every thread allocate from that heap, see
 * mem_tune_malloc). Advice only: failure (no THP, another OS) changes
 * nothing but speed, and the block stays the caller's, freed with free().
 * Below MEM_HUGE_MIN only the heap is advised.
 */
void mem_advise_huge(void *p, size_t n);

/* The size from which growing tables ask for huge pages (one huge page). */
#define MEM_HUGE_MIN ((size_t)2 << 20)

/*
 * n bytes for a table that is written at random (hash slots): from
 * MEM_HUGE_MIN up, aligned to and rounded up to 2 MiB and advised as above,
 * so that all of it can be huge pages (a malloc'd block starts 16 bytes past
 * a page and mostly holds no aligned 2 MiB run); below, plain malloc. Not
 * zeroed. Freed with free(); NULL when out of memory.
 */
void *mem_alloc_table(size_t n);

/*
 * Sets the process's malloc policy for conv's pattern of large, short-lived
 * tables: one arena (all threads allocate from the brk heap, which
 * mem_advise_huge covers) for the small blocks, kept when freed (the next
 * phase reuses them) and grown 64 MiB at a time; blocks from 1 MiB up that
 * do not fit the heap's free top are mappings of their own, so that a
 * table freed between phases goes back to the kernel instead of staying in
 * the process's peak. The first 64 MiB of heap are grown and advised here,
 * before the reading pass fills them with small blocks.
 * For the cli's main only (process-wide); a no-op outside glibc.
 */
void mem_tune_malloc(void);

#endif
