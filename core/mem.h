/*
 * Memory advice for conv's large tables.
 */
#ifndef CONV_CORE_MEM_H
#define CONV_CORE_MEM_H

#include <stddef.h>

/*
 * Asks the kernel to back the 2 MiB-aligned interior of [p, p + n) with
 * transparent huge pages (madvise MADV_HUGEPAGE), when n is large enough to
 * hold one. Why: the per-file tables (hash slots, frames, stacks, the reorder
 * pool) are tens of MB touched at random; with 4 KiB pages every first touch
 * is a page fault and most lookups a TLB miss, which on a virtual machine
 * costs a nested page walk. Debian's default THP mode is "madvise", so
 * without the advice none is used. Advice only: failure (no THP, another
 * OS) changes nothing but speed, and the block stays the caller's, freed
 * with free().
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
 * Advises huge pages over the part of the brk heap (glibc's main arena)
 * that grew since the last call, in whole aligned 2 MiB runs. The growing
 * tables call it when they take a large block, so the heap's pages are
 * advised before they are first touched; the cli makes every thread
 * allocate from that one heap (mem_tune_malloc). Cheap when the heap did
 * not move (sbrk(0) reads a variable). Thread-safe.
 */
void mem_advise_heap(void);

/*
 * Sets the process's malloc policy for conv's pattern of large, short-lived
 * tables: one arena (all threads allocate from the brk heap, which
 * mem_advise_heap covers), blocks up to 32 MiB from that heap (not one mmap
 * each, which is unmapped at free and faulted in again at the next
 * allocation), freed memory kept instead of returned (it is reused by the
 * next phase's tables), and the heap grown 64 MiB at a time. Measured on a
 * 90 MB recording: 27 000 page faults -> 4 400, a third of the run time.
 * For the cli's main only (process-wide); a no-op outside glibc.
 */
void mem_tune_malloc(void);

#endif
