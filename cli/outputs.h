/*
 * One input's outputs on their way into place: each kind (pprof, JFR,
 * folded stacks, flame graph) written one way (out_begin, out_run,
 * out_finish): a temp file beside it, written, made durable, then renamed
 * into place or removed, with one message for an output not written.
 */
#ifndef CONV_CLI_OUTPUTS_H
#define CONV_CLI_OUTPUTS_H

#include "core/err.h"
#include "model/profile.h"
#include "views/html.h"
#include "views/tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The outputs conv writes, in the order the summary and --stats list them. */
enum out_kind { OUT_PPROF, OUT_JFR, OUT_FOLDED, OUT_HTML, OUT__COUNT };

struct out_job;

struct out_desc {
	const char *format; /* -F's word, --OPTION PATH's name, --stats' "format" */
	const char *suffix; /* added to BASE */
	const char *what;   /* for messages */
	bool binary;        /* never to a terminal */
	enum conv_err (*write)(struct out_job *j);
	bool diag_says;     /* a failed write says why in its diagnostic (else: the error's text) */
};

/* The outputs, by kind. */
extern const struct out_desc out_descs[OUT__COUNT];

/* What one input's conversion wrote, by kind: listed in outs[] order. */
struct written {
	const char *path[OUT__COUNT]; /* NULL: not written */
	uint64_t bytes[OUT__COUNT];
};

/* What one input's outputs are written from. */
struct out_src {
	const struct prof *p;
	uint64_t chunk_size;            /* --jfr-chunk-size */
	const struct view_tree *t;      /* the views' call tree */
	size_t folded_col;              /* the folded value's column of t */
	const struct view_html_opts *ho;
	/* conv diff: the folded lines' columns of t (nr_folded_cols 0: folded_col alone) */
	const size_t *folded_cols;
	size_t nr_folded_cols;
};

/* One output of one input on its way into place. */
struct out_job {
	int kind; /* OUT_* */
	const char *path;
	const struct out_src *src;
	char tmp[4096];
	int fd;
	struct io_flush *flush; /* NULL once out_run has synced */
	bool synced;
	uint64_t bytes;
	int io_errno; /* a write or sync failed so: its text says why */
	enum conv_err err;
	struct conv_diag diag;
};

/*
 * Each output's path, bufs[k] for out_descs[k]: BASE and the kind's
 * suffix, BASE from -o (out, may be NULL: cli_out_base) or the input's
 * name without its .data; -o foo.pb.gz is the base foo.
 */
void out_paths(const char *out, const char *in, char bufs[OUT__COUNT][4096]);

void out_job_init(struct out_job *j, int kind, const char *path, const struct out_src *src);
/* One output written on this thread; false when it is not (said). */
bool out_write(struct out_job *j, struct written *w);
/*
 * The pprof output and the JFR recording (path[k] NULL when not asked),
 * listed in w: with parallel the pprof output is encoded and gzipped on a
 * second thread while this one writes the JFR recording. CLI_EXIT_OK or
 * CLI_EXIT_OUTPUT.
 */
int out_models(bool parallel, const struct out_src *src, const char *const path[OUT__COUNT], struct written *w);

#endif
