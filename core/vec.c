#include "core/vec.h"

#include "core/mem.h"

#include <stdint.h>
#include <stdlib.h>

bool vec_reserve(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t nc;

	if (need <= *cap)
		return true;
	nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return false;
		/*
		 * Doubling while small; past 1 MiB, 1.5x: a third less slack
		 * lowers the peak of the per-file tables.
		 */
		nc = elem && nc >= ((size_t)1 << 20) / elem ? nc + nc / 2 + 1 : nc * 2;
	}
	return vec_reserve_exact(v, cap, nc, elem);
}

bool vec_reserve_exact(void **v, size_t *cap, size_t need, size_t elem)
{
	void *nv;

	if (need <= *cap)
		return true;
	if (elem && need > SIZE_MAX / elem)
		return false;
	nv = realloc(*v, need * elem);
	if (!nv)
		return false;
	mem_advise_huge(nv, need * elem);
	*v = nv;
	*cap = need;
	return true;
}

void vec_shrink(void **v, size_t *cap, size_t n, size_t elem)
{
	void *nv;

	if (!*v || n >= *cap || !elem)
		return;
	if (!n) {
		free(*v);
		*v = NULL;
		*cap = 0;
		return;
	}
	nv = realloc(*v, n * elem);
	if (nv) { /* on failure the larger block stays: still valid */
		*v = nv;
		*cap = n;
	}
}

void vec_free(void **v, size_t *cap)
{
	free(*v);
	*v = NULL;
	*cap = 0;
}
