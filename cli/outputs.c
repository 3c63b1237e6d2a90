#include "cli/outputs.h"

#include "cli/cli.h"
#include "cli/outfile.h"
#include "jfrwriter/jfr.h"
#include "pprofwriter/pprof.h"
#include "views/folded.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* How each output is written: to the job's temp file, its size in j->bytes. */
static enum conv_err write_pprof(struct out_job *j);
static enum conv_err write_jfr(struct out_job *j);
static enum conv_err write_folded(struct out_job *j);
static enum conv_err write_html(struct out_job *j);

/*
 * Every output goes one way (out_begin, out_run, out_finish): a temp file
 * beside it, written, made durable, then renamed into place or removed.
 */
const struct out_desc out_descs[OUT__COUNT] = {
	{ "pprof", ".pb.gz", "the pprof output", true, write_pprof, false },
	{ "jfr", ".jfr", "the JFR output", true, write_jfr, true },
	{ "folded", ".folded", "the folded stacks", false, write_folded, true },
	{ "html", ".html", "the flame graph", false, write_html, true },
};


/*
 * gzip level of the pprof output: 1, as Go's runtime/pprof writes its
 * profiles. Measured on bench/'s 81 MB recording: level 1 deflates the 22 MB
 * protobuf in a third of level 6's time for 13 % more bytes.
 */
#define PPROF_GZ_LEVEL 1

void out_paths(const char *out, const char *in, char bufs[OUT__COUNT][4096])
{
	char base[4096];
	/* BASE from the input's name: drop its .data */
	bool from_input = cli_out_base(out, in, base, sizeof(base));
	size_t len = strlen(base);
	struct stat st;

	/*
	 * -o /dev/null, a FIFO: the outputs are that file itself, not
	 * /dev/null.pb.gz beside it (two of them on it are refused as two
	 * outputs on one file are)
	 */
	if (!from_input && strcmp(out, "-") && stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		for (int k = 0; k < OUT__COUNT; k++)
			snprintf(bufs[k], 4096, "%s", out);
		return;
	}

	if (from_input && len > 5 && !strcmp(base + len - 5, ".data"))
		base[len - 5] = 0;
	/* -o foo.pb.gz means the base foo, not foo.pb.gz.pb.gz and foo.pb.gz.jfr */
	for (int k = 0; !from_input && k < OUT__COUNT; k++) {
		size_t sl = strlen(out_descs[k].suffix);

		if (len > sl && !strcmp(base + len - sl, out_descs[k].suffix) && base[len - sl - 1] != '/') {
			base[len - sl] = 0;
			break;
		}
	}
	for (int k = 0; k < OUT__COUNT; k++)
		snprintf(bufs[k], 4096, "%.4080s%s", base, out_descs[k].suffix);
}

void out_job_init(struct out_job *j, int kind, const char *path, const struct out_src *src)
{
	memset(j, 0, sizeof(*j));
	j->kind = kind;
	j->path = path;
	j->src = src;
	j->fd = -1;
}

/* The one message for an output not written. */
static void out_say(const struct out_job *j, const char *why)
{
	cli_out_say("conv", j->path, out_descs[j->kind].what, why);
}

static enum conv_err write_pprof(struct out_job *j)
{
	return pprof_write_gz(j->src->p, PPROF_GZ_LEVEL, j->fd, j->flush, &j->bytes, &j->io_errno);
}

static enum conv_err write_jfr(struct out_job *j)
{
	struct jfr_opts jo;
	struct jfr_stats js;
	enum conv_err err;

	memset(&jo, 0, sizeof(jo));
	jo.chunk_size = j->src->chunk_size;
	jo.flush = j->flush;
	err = jfr_write(j->src->p, &jo, j->fd, &js, &j->diag);
	if (!err)
		j->bytes = js.bytes;
	return err;
}

static enum conv_err write_folded(struct out_job *j)
{
	if (j->src->nr_folded_cols)
		return view_write_folded_cols(j->src->t, j->src->folded_cols, j->src->nr_folded_cols, j->fd,
					      j->flush, &j->bytes, &j->diag);
	return view_write_folded(j->src->t, j->src->folded_col, j->fd, j->flush, &j->bytes, &j->diag);
}

static enum conv_err write_html(struct out_job *j)
{
	return view_write_html(j->src->t, j->src->ho, j->fd, j->flush, &j->bytes, &j->diag);
}

/* Opens the output's temp file and its flusher; false when it cannot be made (said). */
static bool out_begin(struct out_job *j)
{
	j->fd = cli_out_open(j->path, j->tmp, sizeof(j->tmp));
	if (j->fd < 0) {
		out_say(j, strerror(errno));
		return false;
	}
	j->flush = cli_out_flusher(j->fd, j->tmp);
	return true;
}

/*
 * Writes the output into its temp file and makes it durable; says
 * nothing (out_finish does). A thread's body: it may run beside the
 * others, as it only reads the finished model. A sync that fails is a
 * write error (ENOSPC included: see write_models' retry).
 */
static void *out_run(void *arg)
{
	struct out_job *j = arg;

	j->synced = false;
	j->err = out_descs[j->kind].write(j);
	if (!j->err && j->tmp[0]) {
		if (cli_out_sync(j->fd, j->flush)) {
			j->err = CONV_E_IO;
			j->io_errno = errno;
		} else {
			j->synced = true;
		}
		j->flush = NULL;
	}
	return NULL;
}

/*
 * Puts a written output in place and lists it in w, or removes it; false
 * when it is not written (said, unless out_begin said it already).
 */
static bool out_finish(struct out_job *j, struct written *w)
{
	if (j->fd < 0)
		return false;
	if (j->err) {
		out_say(j, j->io_errno		  ? strerror(j->io_errno)
			   : out_descs[j->kind].diag_says ? j->diag.msg
						  : conv_strerror(j->err));
		cli_out_abandon(j->fd, j->tmp, j->path, j->flush);
		return false;
	}
	if (cli_out_commit(j->fd, j->tmp, j->path, j->flush, j->synced)) {
		out_say(j, strerror(errno));
		return false;
	}
	w->path[j->kind] = j->path;
	w->bytes[j->kind] = j->bytes;
	return true;
}

/* One output written on this thread; false when it is not (said). */
bool out_write(struct out_job *j, struct written *w)
{
	if (!out_begin(j))
		return false;
	out_run(j);
	return out_finish(j, w);
}

/*
 * Whether a job that ran beside another ran out of space: written side by
 * side, the outputs compete for what is left on a nearly full disk, and
 * which one gets it is down to timing.
 */
static bool out_no_space(const struct out_job *j)
{
	return j->err == CONV_E_IO && (j->io_errno == ENOSPC || j->io_errno == EDQUOT);
}

/* Writes the job again from the start, now alone: its temp file dropped, a new one made. */
static void out_retry(struct out_job *j)
{
	cli_out_abandon(j->fd, j->tmp, j->path, j->flush);
	j->flush = NULL;
	j->bytes = 0;
	j->io_errno = 0;
	if (out_begin(j))
		out_run(j);
}

int out_models(bool parallel, const struct out_src *src, const char *const path[OUT__COUNT], struct written *w)
{
	struct out_job pj, jj;
	pthread_t thread;
	bool started = false;
	int rc = CLI_EXIT_OK;

	out_job_init(&pj, OUT_PPROF, path[OUT_PPROF], src);
	if (pj.path) {
		if (!out_begin(&pj))
			rc = CLI_EXIT_OUTPUT;
		else if (path[OUT_JFR] && parallel &&
			 pthread_create(&thread, NULL, out_run, &pj) == 0)
			started = true;
		else
			out_run(&pj);
	}
	out_job_init(&jj, OUT_JFR, path[OUT_JFR], src);
	if (jj.path && !out_write(&jj, w))
		rc = CLI_EXIT_OUTPUT;
	if (started) {
		pthread_join(thread, NULL);
		/*
		 * Make the outcome the one of writing them one after the other,
		 * small pprof first: a pprof that ran out of space beside the JFR
		 * is written again alone, now that the JFR's temp file is renamed
		 * or removed.
		 */
		if (out_no_space(&pj))
			out_retry(&pj);
	}
	if (pj.path && !out_finish(&pj, w))
		rc = CLI_EXIT_OUTPUT;
	return rc;
}
