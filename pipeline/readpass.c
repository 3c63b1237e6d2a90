#include "pipeline/readpass.h"

#include "pipeline/host.h"
#include "pipeline/unwinding.h"
#include "reader/perf_abi.h"

#include <stdbool.h>
#include <stdlib.h>

struct readpass {
	struct rdr *r;
	struct procmap *pm;
	struct symjob *sj;
	struct unwinding *uw;
};

enum conv_err readpass_new(struct readpass **out, struct rdr *r, const struct procmap_opts *pm,
			   const struct symjob_opts *sj, struct conv_diag *diag)
{
	const struct rdr_info *info = rdr_info(r);
	struct procmap_opts po = *pm;
	struct readpass *rp = calloc(1, sizeof(*rp));
	enum conv_err err;

	*out = NULL;
	if (!rp)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	rp->r = r;
	po.same_machine = host_is_recording_machine(info->hostname, info->osrelease);
	po.recorded_by_ns = info->file_mtime_ns;
	rp->pm = procmap_new(&po);
	if (!rp->pm) {
		readpass_free(rp);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	}
	err = symjob_new(&rp->sj, sj, rp->pm, diag);
	if (err) {
		readpass_free(rp);
		return err;
	}
	rp->uw = unwinding_new(rp->pm, rp->sj, info->arch);
	if (!rp->uw) {
		readpass_free(rp);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	}
	procmap_add_build_ids(rp->pm, info->build_ids, info->nr_build_ids);
	*out = rp;
	return CONV_E_OK;
}

void readpass_free(struct readpass *rp)
{
	if (!rp)
		return;
	unwinding_free(rp->uw);
	symjob_free(rp->sj);
	procmap_free(rp->pm);
	free(rp);
}

struct procmap *readpass_procmap(struct readpass *rp)
{
	return rp->pm;
}

struct symjob *readpass_symjob(struct readpass *rp)
{
	return rp->sj;
}

struct unwinding *readpass_unwinding(struct readpass *rp)
{
	return rp->uw;
}

/* A side-band record: the caller's look first, then the process model's. */
static enum conv_err readpass_record(struct readpass *rp, const struct readpass_hooks *h,
				     const struct rdr_event *ev)
{
	enum conv_err err = h->record ? h->record(h->ctx, ev) : CONV_E_OK;

	if (err)
		return err;
	host_note_record(rp->pm, rdr_info(rp->r), ev);
	return procmap_feed(rp->pm, ev);
}

enum conv_err readpass_run(struct readpass *rp, const struct readpass_hooks *h, uint64_t *records)
{
	enum conv_err err;

	for (;;) {
		const struct rdr_event *ev;

		err = rdr_next(rp->r, &ev);
		if (err || !ev)
			break;
		/* at the first record too: a slow pipe shows that conv is reading */
		++*records;
		if (h->progress && (!(*records & 0xffff) || *records == 1))
			h->progress(h->ctx, *records);
		err = ev->type == PERF_REC_SAMPLE ? h->sample(h->ctx, ev) : readpass_record(rp, h, ev);
		if (err)
			break;
	}
	return err;
}

void readpass_finish(struct readpass *rp)
{
	bool running = host_runs_kernel(rdr_info(rp->r)->osrelease);

	procmap_set_running_kernel(rp->pm, running);
	symjob_set_running_kernel(rp->sj, running);
	procmap_finish(rp->pm);
}

enum conv_err readpass_resolve(struct readpass *rp, const struct rdr_event *ev,
			       const struct pm_frame **frames, size_t *nr, uint32_t *proc)
{
	const struct unwinding_built *walk;
	struct rdr_event built;

	if (!unwinding_pick(rp->uw, rdr_info(rp->r), &ev, &built, &walk))
		return CONV_E_NOMEM;
	/* each entry exact or a return address, as the walk says */
	return procmap_resolve_exact(rp->pm, ev, walk ? walk->exact : NULL, frames, nr, proc);
}
