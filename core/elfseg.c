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

bool elfseg_image_va(const struct elfseg *segs, size_t n, uint64_t img_off, uint64_t *elf_va)
{
	const struct elfseg *low = NULL;
	uint64_t va;

	for (size_t i = 0; i < n; i++)
		if (!low || segs[i].vaddr < low->vaddr)
			low = &segs[i];
	if (!low || low->vaddr < low->off)
		return false;
	va = img_off + (low->vaddr - low->off);
	for (size_t i = 0; i < n; i++) {
		if (va >= segs[i].vaddr && va - segs[i].vaddr < segs[i].filesz) {
			*elf_va = va;
			return true;
		}
	}
	return false;
}
