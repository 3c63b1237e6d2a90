/*
 * Kernel symbols from a kallsyms file ("ADDR TYPE NAME[\t[module]]" lines,
 * /proc/kallsyms or perf's copy in ~/.debug/[kernel.kallsyms]/<build-id>/).
 * Text symbols only; a symbol ends where the next begins.
 */
#ifndef CONV_SYMBOLIZE_KALLSYMS_H
#define CONV_SYMBOLIZE_KALLSYMS_H

#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset of the name in the file's text (kallsyms_str) */
	uint32_t module; /* offset of the module name, 0 ("") for the kernel image */
};

/*
 * The names stay in the file's text, cut into C strings where they end:
 * interning 120 k names one by one (a hash table and its growth, a copy of
 * each) was most of loading perf's 5.4 MB copy (~16 ms of a symbolizing
 * worker on the 90 MB benchmark file), and the names are unique anyway.
 */
struct kallsyms {
	struct ksym *syms; /* sorted by addr */
	size_t nr;
	char *buf;         /* the text, owned; buf[0] is "" */
	size_t buf_len;
	uint64_t text;     /* address of _text (or _stext), 0 if absent */
	uint64_t malformed;
};

void kallsyms_init(struct kallsyms *k);
void kallsyms_release(struct kallsyms *k);
/*
 * Parses kallsyms text (copied: the table keeps its own), replacing what k
 * held. CONV_E_NOMEM; CONV_E_FORMAT when no line is usable (e.g. all
 * addresses 0).
 */
enum conv_err kallsyms_parse(struct kallsyms *k, const char *text, size_t len);
/*
 * Reads and parses a file (capped at 256 MiB), replacing what k held. Only
 * a regular file is opened (core/ropen.h): anything else is CONV_E_IO.
 */
enum conv_err kallsyms_load(struct kallsyms *k, const char *path);
/* The memory k holds, in bytes. */
uint64_t kallsyms_footprint(const struct kallsyms *k);
/* The symbol covering addr (the last one at or below it), or NULL past the last text symbol. */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);
/* A name or module of a symbol of k. */
static inline const char *kallsyms_str(const struct kallsyms *k, uint32_t off)
{
	return k->buf + off;
}

#endif
