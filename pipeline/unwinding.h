/*
 * The reading pass's unwinder: turns a --call-graph dwarf sample (user
 * registers and stack copy) into the call chain perf would have written
 * with frame pointers, with the objects' CFI found through the symbolizer's
 * object table and the process model's mappings at the sample's time.
 */
#ifndef CONV_PIPELINE_UNWINDING_H
#define CONV_PIPELINE_UNWINDING_H

#include "reader/reader.h"
#include "unwind/unwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmap;
struct symjob;
struct unwinding;

/* What unwinding did, over the kept samples. */
struct unwinding_stats {
	uint64_t samples;                     /* samples with a user stack copy */
	uint64_t to_root;                     /* walked to the outermost frame */
	uint64_t stopped[UW_STOP__COUNT];     /* by why the walk ended before a root */
	uint64_t frames;                      /* user frames produced */
	uint64_t copy_full;                   /* walks that ran out of a copy the kernel filled */
};

/* NULL when out of memory. */
struct unwinding *unwinding_new(struct procmap *pm, struct symjob *sj, const char *perf_arch);
void unwinding_free(struct unwinding *u);

/* Whether the sample carries what unwinding needs (user registers and a stack copy). */
bool unwinding_wants(const struct rdr_sample *s);

/*
 * The sample's call chain with the unwound user frames in place of the
 * user part: the kernel part as recorded, PERF_CONTEXT_USER, the user PCs
 * (a PC a signal interrupted is written +1, as callers are taken at return
 * address - 1), then, when the walk stopped early, one marker word (see
 * unwinding_marker) that the caller takes off before resolving. The array
 * lives until the next call. *nr: its length. NULL when out of memory.
 */
const uint64_t *unwinding_chain(struct unwinding *u, const struct rdr_sample *s, size_t *nr);

/*
 * Whether a chain word is unwinding's marker of an early stop; then its
 * reason and the mapping it names (PM_NO_MAPPING: none).
 */
bool unwinding_marker(uint64_t word, enum uw_stop *why, uint32_t *mapping);

/*
 * LBR call stacks (perf record --call-graph lbr: branch_sample_type has
 * PERF_SAMPLE_BRANCH_CALL_STACK): the sample's chain with the user part
 * taken from the branch stack as perf takes it: the kernel part as
 * recorded, PERF_CONTEXT_USER, the latest call's target, then every call
 * entry's call site (+1, as callers are taken at return address - 1 and a
 * call site is exact). NULL when the sample is not one (no user part in
 * its chain) or out of memory. The array lives until the next call.
 */
const uint64_t *unwinding_lbr_chain(struct unwinding *u, const struct rdr_sample *s, size_t *nr);

const struct unwinding_stats *unwinding_stats(const struct unwinding *u);

#endif
