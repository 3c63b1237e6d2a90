#include "core/elfseg.h"

bool elfseg_normalize(const struct elfseg *segs, size_t n, uint64_t f_off, uint64_t pgoff,
		      uint64_t *elf_va)
{
	const struct elfseg *best = NULL;

	for (int pass = 0; pass < 2 && !best; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct elfseg *s = &segs[i];
			uint64_t down = s->off & ~(uint64_t)0xfff;

			if (pass == 0 && !s->exec)
				continue;
			if (down <= pgoff && pgoff < s->off + s->filesz && f_off >= down &&
			    f_off < s->off + s->filesz) {
				best = s;
				break;
			}
		}
	}
	if (!best)
		return false;
	*elf_va = f_off - best->off + best->vaddr;
	return true;
}
