/*
 * Kernel symbols from a kallsyms file ("ADDR TYPE NAME[\t[module]]" lines,
 * /proc/kallsyms or perf's copy in ~/.debug/[kernel.kallsyms]/<build-id>/).
 * Text symbols only; a symbol ends where the next begins.
 */
#ifndef CONV_SYMBOLIZE_KALLSYMS_H
#define CONV_SYMBOLIZE_KALLSYMS_H

#include "core/err.h"
#include "core/strtab.h"

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint32_t name;   /* strtab id */
	uint32_t module; /* strtab id of the module name, 0 for the kernel image */
};

struct kallsyms {
	struct ksym *syms; /* sorted by addr */
	size_t nr;
	struct strtab strs;
	uint64_t text;     /* address of _text (or _stext), 0 if absent */
	uint64_t malformed;
};

void kallsyms_init(struct kallsyms *k);
void kallsyms_release(struct kallsyms *k);
/* Parses kallsyms text. CONV_E_NOMEM; CONV_E_FORMAT when no line is usable (e.g. all addresses 0). */
enum conv_err kallsyms_parse(struct kallsyms *k, const char *text, size_t len);
/* Reads and parses a file (capped at 256 MiB). */
enum conv_err kallsyms_load(struct kallsyms *k, const char *path);
/* The symbol covering addr (the last one at or below it), or NULL past the last text symbol. */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

#endif
