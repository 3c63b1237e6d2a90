/*
 * What conv says on a terminal about one conversion: the progress line
 * while it works, and the summary at the end, every line fitted to the
 * terminal's width (cli_wrap) and short enough to stay on the screen:
 * the facts, the top functions (CPU time, and off-CPU time when there is
 * any, apart), and what was written last, where the prompt follows it.
 */
#ifndef CONV_CLI_SUMMARY_H
#define CONV_CLI_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct convert_progress;
struct convert_stats;
struct prof;
struct rdr;
struct symjob_progress;
struct view_top;

/*
 * Without -v the summary keeps to SUMMARY_LINES lines where it can: each
 * top list shows SUMMARY_TOP_ROWS rows, fewer (not under SUMMARY_MIN_ROWS)
 * when the facts above take the room; --top N caps them.
 */
#define SUMMARY_LINES 34
#define SUMMARY_TOP_ROWS 5
#define SUMMARY_MIN_ROWS 3

/* The progress line's state, one per input (the convert_opts hooks' ctx). */
struct summary_progress {
	const char *input;
	bool shown;
	double last;
	bool offline;
};

/* convert_opts.progress: reading, symbolizing, writing. */
void summary_progress_convert(void *ctx, const struct convert_progress *p);
/* symjob_opts.progress: debuginfod downloads. */
void summary_progress_download(void *ctx, const struct symjob_progress *p);
/* A run over several inputs: how far it is. */
struct batch_progress {
	size_t done, total;    /* inputs finished, inputs in all */
	uint64_t t0;           /* when the run began (clock_now_ns) */
	const char *current;   /* the input the run waits for now (NULL: none) */
};

/* The batch line: "12/300 inputs [===   ] 25.3 files/s, now a.data". */
void summary_progress_batch(const struct batch_progress *bp);
/* Erases the progress line, if shown. */
void summary_progress_clear(struct summary_progress *pg);

/* One output written: -F's word for it, its path and size. */
struct summary_wrote {
	const char *format, *path;
	uint64_t bytes;
};

struct summary {
	const char *input;
	const struct rdr *r;
	const struct prof *p;
	const struct convert_stats *cs;
	bool verbose, offline;
	uint64_t write_ns;
	unsigned top_rows;             /* --top N */
	const struct view_top *top;    /* of top_event's samples; NULL: none */
	const char *top_event;
	const struct view_top *off_top; /* of off-CPU time (view_top_build_waits); NULL: none */
	const struct summary_wrote *wrote;
	size_t nr_wrote;
};

/* Prints the summary on stderr. */
void summary_print(const struct summary *s);

/* Frames named, from every source but "unresolved": the summary's and --stats' figure. */
uint64_t summary_frames_symbolized(const struct convert_stats *cs);

#endif
