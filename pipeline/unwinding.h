/*
 * The reading pass's unwinder: turns a --call-graph dwarf sample (user
 * registers and stack copy) into the call chain perf would have written
 * with frame pointers, which entries of it are exact and how the walk
 * ended, with the objects' CFI found through the symbolizer's
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
	uint64_t leaf_callers;                /* arm64 frame-pointer chains given their leaf's caller from LR */
};

/* NULL when out of memory. */
struct unwinding *unwinding_new(struct procmap *pm, struct symjob *sj, const char *perf_arch);
void unwinding_free(struct unwinding *u);

/* Whether the sample carries what unwinding needs (user registers and a stack copy). */
bool unwinding_wants(const struct rdr_sample *s);

/*
 * What a chain built here says besides its addresses: which entries are
 * exact, and how the walk ended. It lives until the next call.
 */
struct unwinding_built {
	/* bit i: chain[i] is where the thread was (procmap_resolve_exact), not a return address */
	const uint64_t *exact;
	size_t exact_words;     /* (chain length + 63) / 64 */
	enum uw_stop stop;      /* UW_STOP_ROOT: to the outermost frame, or no walk (LBR) */
	uint32_t stop_mapping;  /* UW_STOP_NO_CFI: the object without CFI's mapping; else PM_NO_MAPPING */
};

/*
 * The address the outputs give the frame that says why a walk stopped early
 * ("[truncated: ...]", pprof's location address): one per (reason, object),
 * so that each stays a location of its own. It is no program address
 * (non-canonical on every 64-bit arch conv unwinds) and goes into no chain.
 */
uint64_t unwinding_stop_address(enum uw_stop why, uint32_t mapping);

/*
 * The sample's call chain with the unwound user frames in place of the
 * user part: the kernel part as recorded, PERF_CONTEXT_USER, the user PCs
 * (a PC a signal interrupted marked exact in unwinding_built). The array
 * and *built live until the next call. *nr: its length. NULL when out of
 * memory. exact_ip: the record's PERF_RECORD_MISC_EXACT_IP (a precise
 * sample, whose registers may be of a moment after the sampled instruction).
 */
const uint64_t *unwinding_chain(struct unwinding *u, const struct rdr_sample *s, bool exact_ip,
				size_t *nr, const struct unwinding_built **built);

/*
 * LBR call stacks (perf record --call-graph lbr: branch_sample_type has
 * PERF_SAMPLE_BRANCH_CALL_STACK): the sample's chain with the callers taken
 * from the branch stack's call entries (each call site, marked exact in
 * unwinding_built). Below them: for a user-mode sample, the sampled IP
 * alone (a kernel part in its chain is of a later moment: a precise
 * sample's chain is taken at the interrupt); for a kernel-mode one, the
 * kernel part as recorded and the user PC recorded at kernel entry. perf
 * puts the latest call's target in place of either PC: the entry of the
 * function or of a PLT stub on the way to it, not where the thread was.
 * NULL when the recorded chain is to be taken (no user part, or an empty
 * branch stack: perf 6.1 then reads an entry past the record) or out of
 * memory. The array and *built live until the next call.
 */
const uint64_t *unwinding_lbr_chain(struct unwinding *u, const struct rdr_sample *s, bool user_mode,
				    size_t *nr, const struct unwinding_built **built);

/*
 * arm64 frame-pointer chains (perf record -g, which records the user link
 * register for this): a leaf function, or one in its prologue or epilogue,
 * has no frame record of its own, so the kernel's walk from the frame
 * pointer skips its caller, whose return address is still in LR. As perf
 * does (its leaf-caller injection), where the CFI at the leaf's PC says the
 * return address is in LR, the sample's chain with LR (PAC stripped, the
 * width from the recording's highest user mapping) between the first user PC and the next
 * entry; NULL when the chain is to be taken as recorded: no LR recorded, no
 * second user entry, the return address saved by then or the rule unknown,
 * LR 0 or equal to that next entry (perf compares it less one, so never:
 * conv does not add the frame twice), and out of memory (the recorded chain
 * is still right, one frame short). The array and *built live until the
 * next call.
 */
const uint64_t *unwinding_leaf_chain(struct unwinding *u, const struct rdr_sample *s, size_t *nr,
				     const struct unwinding_built **built);

/*
 * The sample the reading pass resolves: *ev itself (*built NULL), or *copy
 * holding it with the chain built here (LBR call stacks from the branch
 * stack, dwarf stack copies walked once), *ev then pointing at copy and
 * *built saying the rest (until the next call). False when out of memory.
 */
bool unwinding_pick(struct unwinding *u, const struct rdr_info *info, const struct rdr_event **ev,
		    struct rdr_event *copy, const struct unwinding_built **built);

const struct unwinding_stats *unwinding_stats(const struct unwinding *u);

#endif
