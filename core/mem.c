#include "core/mem.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* The end of the heap already advised (0: not started; then the heap's start at mem_tune_malloc). */
static _Atomic uintptr_t heap_done;

/* Advises what the brk heap grew by since the last call; thread-safe, cheap when it did not move. */
static void advise_heap(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
	uintptr_t done = atomic_load_explicit(&heap_done, memory_order_relaxed), end;

	if (!done)
		return;
	end = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);
	if (end <= done)
		return;
	/* one thread advises each new run; a loser leaves it to the winner */
	if (atomic_compare_exchange_strong(&heap_done, &done, end))
		(void)madvise((void *)done, (size_t)(end - done), MADV_HUGEPAGE);
#endif
}

void mem_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	long ps;
	uintptr_t page, lo, hi;

	/* (every call: the heap's new extent is advised before small blocks fill it too) */
	advise_heap();
	if (!p || n < MEM_HUGE_MIN)
		return;
	ps = sysconf(_SC_PAGESIZE);
	page = ps > 0 ? (uintptr_t)ps : 4096;
	/*
	 * The block's pages, from the page it starts in: a block malloc
	 * mapped on its own is then advised whole, as one mapping. Advice on
	 * part of it split the mapping in three, and glibc's realloc, whose
	 * mremap cannot move a range of several mappings, copied the block into
	 * a new one instead (the old and the new both resident meanwhile). A
	 * heap block's neighbours are in the heap, which advise_heap advises.
	 */
	lo = (uintptr_t)p & ~(page - 1);
	hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
	(void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

void *mem_alloc_table(size_t n)
{
	size_t r;
	void *p;

	if (n < MEM_HUGE_MIN)
		return malloc(n ? n : 1);
	if (n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	r = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	p = aligned_alloc((size_t)HUGE_PAGE, r);
	mem_advise_huge(p, r);
	return p;
}

void mem_tune_malloc(void)
{
#ifdef __GLIBC__
	uintptr_t start = ((uintptr_t)sbrk(0) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);

	(void)mallopt(M_ARENA_MAX, 1);
	(void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
	(void)mallopt(M_TOP_PAD, 64 << 20);
	atomic_store(&heap_done, start);
	/*
	 * Grow the heap now (by M_TOP_PAD) and advise it at once: the reading
	 * pass fills tens of MB with blocks below MEM_HUGE_MIN before any
	 * table is large enough to call mem_advise_huge, and every 4 KiB page
	 * touched before the advice stays a small page.
	 */
	{
		/* volatile: a malloc freed unused is otherwise removed by the compiler */
		void *volatile grow = malloc((size_t)1 << 20);

		free(grow);
	}
	advise_heap();
#endif
}
