/*
 * The files a command names, checked against each other before any work
 * (cli/paths.c): no output may be an input (by name, link or hard link),
 * two outputs may not be one file, and no output may replace a perf.data
 * recording. Shared by conv and conv symbolize.
 */
#ifndef CONV_CLI_PATHS_H
#define CONV_CLI_PATHS_H

#include <stdbool.h>
#include <stddef.h>

struct cli_path;

/* Zero-initialised: empty. */
struct cli_paths {
	struct cli_path *f;
	size_t nr, cap;
	bool nomem; /* an add failed: cli_paths_check says so */
};

/*
 * Adds a file: name, or fd (standard input or output) when fd >= 0, in
 * which case a pipe or terminal is left out (nothing on the disk to
 * compare). what names it in messages ("the pprof output", "the input");
 * input is the input it is or belongs to (an index into the inputs given
 * to cli_paths_check), SIZE_MAX for none.
 */
void cli_paths_add(struct cli_paths *ps, const char *name, int fd, bool output, const char *what,
		   size_t input);

/*
 * Applies the rules and frees the list. Returns 0, or the exit code after
 * saying why (prefixed with cmd): CLI_EXIT_USAGE for a refused name,
 * CLI_EXIT_INPUT when memory ran out.
 */
int cli_paths_check(struct cli_paths *ps, const char *cmd, char *const *inputs);

/*
 * Whether path is a regular file that starts as perf.data does (either byte
 * order, or perf's first format). Reads nothing else (a FIFO, a device) and
 * never waits.
 */
bool cli_path_is_perf_data(const char *path);

/* Frees the list without checking it (a command that gives up first). */
void cli_paths_release(struct cli_paths *ps);

#endif
