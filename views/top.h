/*
 * The top functions of a profile, by self and by total value, as perf
 * report shows symbols (--no-children and --children): a location counts
 * for the function it is in, the outermost of its inline levels, and the
 * functions inlined there are listed with it; a location without a name
 * counts for its object, "[libfoo.so]". A function recursing in a stack
 * counts once for that stack's total. The frames the pipeline adds where
 * an unwinding stopped early ("[truncated: ...]", unmapped) are no
 * functions: they count in no entry (their samples stay in `all`).
 */
#ifndef CONV_VIEWS_TOP_H
#define CONV_VIEWS_TOP_H

#include "core/err.h"
#include "core/strtab.h"

#include <stddef.h>
#include <stdint.h>

struct prof;

/* Functions inlined into an entry that it lists at most (as conv info --top). */
#define VIEW_TOP_INLINED 8

struct view_top_ent {
	const char *name;
	int64_t self, total;
	/* distinct functions seen inlined into it where its self value was taken */
	const char *inlined[VIEW_TOP_INLINED];
	uint32_t nr_inlined;
	uint32_t nr_inlined_all; /* how many distinct ones in all (inlined[] holds the first seen) */
};

struct view_top {
	struct strtab strs;
	int64_t all; /* the type's total over every sample */
	/* the n entries with the most self value, then the n with the most total value */
	struct view_top_ent *by_self, *by_total;
	size_t nr_self, nr_total;
};

/*
 * The top n functions of p by model value type `type`. Errors:
 * CONV_E_NOMEM, CONV_E_INVAL (no such type).
 */
enum conv_err view_top_build(struct view_top *t, const struct prof *p, size_t type, size_t n);

/*
 * The same for time spent waiting (off-CPU time): a stack's self value
 * goes to its innermost frame outside the kernel, the code that waited
 * (its leaf when every frame is the kernel's), since the leaf of every
 * switched-out stack is the scheduler's.
 */
enum conv_err view_top_build_waits(struct view_top *t, const struct prof *p, size_t type, size_t n);
void view_top_release(struct view_top *t);

#endif
