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
	uint64_t lbr_samples;                 /* samples with LBR call stacks */
	uint64_t lbr_frames;                  /* callers taken from their call entries */
	uint64_t lbr_empty;                   /* of them, an empty branch stack: the recorded chain kept */
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
 * exact_ip: the record's PERF_RECORD_MISC_EXACT_IP (a precise sample, whose
 * registers may be of a moment after the sampled instruction).
 */
const uint64_t *unwinding_chain(struct unwinding *u, const struct rdr_sample *s, bool exact_ip,
				size_t *nr);

/*
 * Whether a chain word is unwinding's marker of an early stop; then its
 * reason and the mapping it names (PM_NO_MAPPING: none).
 */
bool unwinding_marker(uint64_t word, enum uw_stop *why, uint32_t *mapping);

/*
 * LBR call stacks (perf record --call-graph lbr: branch_sample_type has
 * PERF_SAMPLE_BRANCH_CALL_STACK): the sample's chain with the callers taken
 * from the branch stack's call entries (each call site +1, as callers are
 * taken at return address - 1 and a call site is exact). Below them: for a
 * user-mode sample, the sampled IP alone (a kernel part in its chain is of
 * a later moment: a precise sample's chain is taken at the interrupt); for
 * a kernel-mode one, the kernel part as recorded and the user PC recorded at
 * kernel entry. perf puts the latest call's target in place of either PC:
 * the entry of the function or of a PLT stub on the way to it, not where
 * the thread was. NULL when the recorded chain is to be taken (no user part,
 * or an empty branch stack: perf 6.1 then reads an entry past the record)
 * or out of memory. The array lives until the next call.
 */
const uint64_t *unwinding_lbr_chain(struct unwinding *u, const struct rdr_sample *s, bool user_mode,
				    size_t *nr);

/*
 * The sample the reading pass resolves: *ev itself, or *copy holding it with
 * the chain built here (LBR call stacks from the branch stack, dwarf stack
 * copies walked once), *ev then pointing at copy. False when out of memory.
 */
bool unwinding_pick(struct unwinding *u, const struct rdr_info *info, const struct rdr_event **ev,
		    struct rdr_event *copy);

const struct unwinding_stats *unwinding_stats(const struct unwinding *u);

#endif
