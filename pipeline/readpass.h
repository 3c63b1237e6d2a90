/*
 * The one reading pass over a recording, for conv's conversion and for
 * conv info: the process model (with the recording machine's facts), the
 * symbolizer's object table and the unwinder set up alike, every record
 * read in time order, the side-band records fed to the process model and
 * every sample handed to the caller, then the model finished. The callers
 * differ only in what they do with a sample (and with a record before the
 * model takes it), so that is all they write.
 */
#ifndef CONV_PIPELINE_READPASS_H
#define CONV_PIPELINE_READPASS_H

#include "core/err.h"
#include "pipeline/symjob.h"
#include "procmap/procmap.h"
#include "reader/reader.h"

#include <stdint.h>

struct readpass;
struct unwinding;

/*
 * What the caller does with what the pass reads; ctx is passed to each.
 * A hook's error stops the pass, which returns it.
 */
struct readpass_hooks {
	void *ctx;
	/* a side-band record (not a sample), before the process model takes it; may be NULL */
	enum conv_err (*record)(void *ctx, const struct rdr_event *ev);
	/* a sample, as recorded (the caller resolves it: readpass_resolve, or its own cache) */
	enum conv_err (*sample)(void *ctx, const struct rdr_event *ev);
	/* at the first record and every 65536th: records read so far; may be NULL */
	void (*progress)(void *ctx, uint64_t records);
};

/*
 * The pass over r (open; its header read): the process model with pm's
 * options and whether the recording was made here, the symbolizer with
 * sj's (sj->progress may be set), the unwinder for the recording's arch,
 * the build-id table given to the model. Errors: CONV_E_NOMEM and
 * symjob_new's, said in diag.
 */
enum conv_err readpass_new(struct readpass **out, struct rdr *r, const struct procmap_opts *pm,
			   const struct symjob_opts *sj, struct conv_diag *diag);
void readpass_free(struct readpass *rp);

struct procmap *readpass_procmap(struct readpass *rp);
struct symjob *readpass_symjob(struct readpass *rp);
struct unwinding *readpass_unwinding(struct readpass *rp);

/*
 * Reads every record to the end: side-band records to hooks->record, then
 * the process model; samples to hooks->sample. Returns the reader's error
 * or a hook's, CONV_E_OK at the end of the input. *records: records read
 * (also on error).
 */
enum conv_err readpass_run(struct readpass *rp, const struct readpass_hooks *hooks, uint64_t *records);

/*
 * After the last record: whether the recording's kernel runs here, told
 * to the model and the symbolizer; the model's build-ids completed
 * (procmap_finish).
 */
void readpass_finish(struct readpass *rp);

/*
 * A sample as conv resolves it when nothing is cached: its stack unwound
 * from its stack copy or joined from its branch stack (unwinding_pick),
 * then its frames in the process model (procmap_resolve; *proc its
 * process). The frames live until the next call.
 */
enum conv_err readpass_resolve(struct readpass *rp, const struct rdr_event *ev,
			       const struct pm_frame **frames, size_t *nr, uint32_t *proc);

#endif
