/*
 * Words and lines both commands print: sizes in one unit rule, plurals,
 * the progress line fitted to the terminal, the debuginfod counters (one
 * wording for the progress line, the summary and conv info), and the
 * opening of an input with its refusals said plainly.
 */
#ifndef CONV_CLI_TEXT_H
#define CONV_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json;
struct rdr;
struct rdr_opts;
struct symjob_progress;
struct symjob_stats;
struct unwinding_stats;

/*
 * bytes in the largest unit (B, kB, MB, GB; powers of 1000) that keeps the
 * number at 1 or more: "812 B", "4.7 MB". One rule everywhere, so that
 * figures printed side by side compare at a glance.
 */
const char *cli_size(uint64_t bytes, char *buf, size_t n);

/* one or many: cli_plural(1, "process", "processes") */
const char *cli_plural(uint64_t n, const char *one, const char *many);

/* Columns of the terminal on fd: TIOCGWINSZ, else $COLUMNS, else 80. */
unsigned cli_term_width(int fd);

/*
 * Replaces the progress line on stderr (a terminal) with
 * "conv: NAME: PRE[bar] POST", in fewer columns than the terminal has, so
 * that it never wraps (a wrapped line is not replaced by the next one):
 * the name is shortened first, the bar is left out when there is no room
 * for it (frac < 0: no bar), the rest is cut last. name NULL: no name.
 */
void cli_progress_line(const char *name, const char *pre, double frac, const char *post);
/* Erases the progress line. */
void cli_progress_clear(void);
/*
 * Erases the progress line if one is shown: async-signal-safe (one
 * write(2) of a fixed "\r\033[K"), for the stop signals' handler, so that
 * the shell's prompt does not continue on it.
 */
void cli_progress_clear_on_signal(void);

/*
 * The width the summary and the warnings on a terminal are wrapped at:
 * fd's terminal's columns; off a terminal $COLUMNS, else 0 (no wrapping:
 * a log keeps one line per fact).
 */
unsigned cli_wrap_width(int fd);

/*
 * Writes text to f in lines of at most width columns, broken at spaces;
 * every line after the first starts with indent spaces. A word longer
 * than a line is broken at the edge. A '\n' in text starts a new
 * (indented) line. width 0: text as it is. Ends with a line break.
 * Returns the lines written; f NULL: only counts them.
 */
unsigned cli_wrap(FILE *f, unsigned width, unsigned indent, const char *text);

/*
 * Where this thread's messages go: stderr, or while conv converts inputs
 * side by side (-j with several inputs), the buffer of the input the thread
 * works on, written out in input order.
 */
FILE *cli_err(void);
/* Sends this thread's messages to f (NULL: stderr again). */
void cli_err_to(FILE *f);

/* "conv: warning: " and the message on cli_err(), wrapped on a terminal (cli_wrap_width). */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The debuginfod counters in words, the same for the progress line, the
 * summary and conv info: "2 fetched (1.2 MB), 1 from cache, 0 not found,
 * 1 error", or when no server could be asked "no server asked (--offline):
 * 1 from cache, 2 not cached". offline: --offline was given.
 */
void cli_dfd_counts(char *buf, size_t n, const struct symjob_stats *st, bool offline);

/*
 * A debuginfod server given up in the run, in words, the same for the
 * summary and conv info: "http://host:8002 did not answer within 3 s; not
 * asked again (12 requests not sent)".
 */
void cli_dfd_down(char *buf, size_t n, const char *url, const char *why, uint64_t skipped);

/*
 * The debuginfod part of a progress line: what is going on, or while
 * symbolization is blocked on it (p->waited_ms > 0) what it waits for:
 * "waiting for debuginfod: 23 requests, 2.1 s". *pre and post are set.
 */
void cli_dfd_progress(const char **pre, char *post, size_t n, const struct symjob_progress *p,
		      bool offline);

/*
 * What unwinding did, in words, the same for the summary and conv info:
 * "538 samples with a stack copy: 520 to the root; cut: 12 stack copy ended
 * (10 with the whole copy used), 6 return address in no mapping; 4.5 user
 * frames a sample", then for LBR call stacks
 * "29 samples with LBR call stacks: 3.1 callers a sample from the call
 * entries, 8 with an empty branch stack (recorded chain kept)". Empty when
 * there was neither; dwarf and lbr are separate lines ("" when none).
 */
void cli_unwind_words(const struct unwinding_stats *u, char *dwarf, size_t ndwarf, char *lbr,
		      size_t nlbr);

/* The "unwind" object of --stats and conv info --json (u NULL: all 0). */
void cli_unwind_json(struct json *j, const struct unwinding_stats *u);

/*
 * The debuginfod counts of --stats and conv info --json, members of the
 * object j is in (ss NULL: all 0).
 */
void cli_dfd_counts_json(struct json *j, const struct symjob_stats *ss);

/* One of "servers_given_up": {url, why, skipped}; why NULL (none given) is written "". */
void cli_dfd_down_json(struct json *j, const char *url, const char *why, uint64_t skipped);

/*
 * One object without symbols: {build_id, path, count_key: count, reason};
 * reason NULL: none (conv info's "not_found").
 */
void cli_missing_json(struct json *j, const char *build_id, const char *path, const char *count_key,
		      uint64_t count, const char *reason);

/* One of --stats' "outputs": {format, path, bytes}. */
void cli_output_json(struct json *j, const char *format, const char *path, uint64_t bytes);

/*
 * Opens an input: '-' is standard input; a directory is refused; a failure
 * is said in one plain line on stderr. Returns 0 with *r set, else the exit
 * code (CLI_EXIT_INPUT).
 */
int cli_open_input(const char *path, const struct rdr_opts *ro, struct rdr **r);

/* A file mapped whole: the page cache holds it, not the heap (a JFR's events are copied from it as they are). */
struct cli_mapped {
	const uint8_t *data;
	size_t len;
	void *map;
};

/*
 * Maps the regular file at path (at most max bytes, not empty); 0, or an
 * exit code (said, after "cmd: path: ").
 */
int cli_map_file(const char *cmd, const char *path, size_t max, struct cli_mapped *m);
void cli_unmap_file(struct cli_mapped *m);

/*
 * Refuses (says, false) standard input on a terminal: a recording is binary
 * and comes from a file or a pipe; a terminal would only wait.
 */
bool cli_stdin_usable(const char *cmd);

/* The name of a record type for messages: "" for none, "type N" (in buf) when perf never named it. */
const char *cli_record_name(uint32_t type, char buf[static 32]);

#endif
