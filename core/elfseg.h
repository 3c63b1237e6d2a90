/*
 * The arithmetic between a mapped file's offsets and its ELF virtual
 * addresses, from the file's PT_LOAD program headers: one rule for the
 * symbolizer and the unwinder.
 */
#ifndef CONV_CORE_ELFSEG_H
#define CONV_CORE_ELFSEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A PT_LOAD segment. */
struct elfseg {
	uint64_t off, vaddr, filesz;
	bool exec;
};

/*
 * The ELF virtual address of file offset f_off in a mapping made at file
 * offset pgoff: the segment the mapping came from is the (executable first)
 * one whose page-aligned start is at or below pgoff and that holds f_off.
 * False when no segment does.
 */
bool elfseg_normalize(const struct elfseg *segs, size_t n, uint64_t f_off, uint64_t pgoff,
		      uint64_t *elf_va);

/*
 * The ELF virtual address of an offset from the image base (where file
 * offset 0 is mapped, as remote-symbolication frames give addresses): the
 * lowest segment's address less its file offset, plus the offset. False
 * when no segment holds the result.
 */
bool elfseg_image_va(const struct elfseg *segs, size_t n, uint64_t img_off, uint64_t *elf_va);

#endif
