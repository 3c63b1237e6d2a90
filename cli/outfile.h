/*
 * Output files of the command-line program: written to a temp file beside
 * the output, synced, then renamed into place; "-" and special files
 * (devices, FIFOs, sockets, /dev/stdout) are written in place, from a temp
 * file copied out once complete (cli/outfile.c).
 */
#ifndef CONV_CLI_OUTFILE_H
#define CONV_CLI_OUTFILE_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>

struct conv_diag;
struct io_flush;

/*
 * Whether path is written in place rather than replaced: "-" (standard
 * output), a descriptor's name (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
 * or a file that is there and is neither a regular file nor a directory.
 */
bool cli_out_special(const char *path);
/*
 * Whether an output path is a terminal: "-" or a descriptor's name whose
 * descriptor is one, or a terminal's device node (found by stat alone).
 */
bool cli_out_terminal(const char *path);
/*
 * Opens a special path (not "-") for writing: its descriptor (/dev/stdout,
 * /dev/fd/N ...) duplicated, a unix socket connected, anything else opened
 * as it is (no O_CREAT, no O_TRUNC: a device or FIFO is written, never made
 * or cut). A FIFO waits for its reader here. -1 with errno.
 */
int cli_out_open_special(const char *path);
/*
 * The temp file an output is written to: PATH.tmp.XXXXXX beside it, so the
 * rename stays in one filesystem; tmp (n bytes) gets its name. For a
 * special path (cli_out_special), an unlinked file in $TMPDIR, and tmp "".
 * -1 with errno on failure.
 */
int cli_out_open(const char *path, char *tmp, size_t n);
/* The background flusher of an output's temp file (core/io.h): none when tmp is "". */
struct io_flush *cli_out_flusher(int fd, const char *tmp);
/* Makes a finished temp file durable (mode, the flusher's syncs, fsync). -1 with errno. */
int cli_out_sync(int fd, struct io_flush *fl);
/*
 * Puts a finished temp file in place (cli_out_sync unless synced, then
 * rename) or, when tmp is "", copies it to stdout ("-") or into the special
 * file, opened only now; on failure removes it. Closes fd. -1 with errno on
 * failure.
 */
int cli_out_commit(int fd, const char *tmp, const char *path, struct io_flush *fl, bool synced);
/* Gives up a temp file from cli_out_open and its flusher (errno kept). */
void cli_out_abandon(int fd, const char *tmp, const char *path, struct io_flush *fl);

/* How messages name an output: path, or what for "-" (standard output). */
const char *cli_out_name(const char *path, const char *what);
/* Says (stderr) that an output was not written: "CMD: cannot write NAME: WHY" (NAME: cli_out_name). */
void cli_out_say(const char *cmd, const char *path, const char *what, const char *why);
/*
 * One output, whole or not at all: fn(ctx, fd, flusher, d) writes it to a
 * temp file (with a background flusher), which is then put in place.
 * Returns 0; -1 when the file cannot be made or put in place (said, after
 * cmd; what names "-" in that message); 1 when fn failed: the temp file is
 * removed and nothing said (d, from fn, says why).
 */
int cli_out_write(const char *cmd, const char *path, const char *what,
			    enum conv_err (*fn)(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d),
			    void *ctx, struct conv_diag *d);

/*
 * Whether an output can be made at path, before any work: its temp file
 * can be made beside it (made and removed), a special file takes writes, a
 * descriptor's name is open for writing; a directory is no output
 * (EISDIR). 0, or -1 with errno.
 */
int cli_out_check(const char *path);

/* Whether -o names a directory: it ends in '/' or is one ("-" never). */
bool cli_out_is_dir(const char *out);

/*
 * -o (out, may be NULL) for nr_inputs inputs: several need a directory
 * (cli_out_is_dir; "-" or a file name is refused), made here when missing
 * if make. Returns 0, or the exit code after saying why (after cmd).
 */
int cli_out_dir(const char *cmd, const char *out, size_t nr_inputs, bool make);

/*
 * Where an input's outputs go, before their suffixes: DIR/NAME when -o
 * (out) names a directory (cli_out_is_dir), else -o itself, else the
 * input's own path; NAME is the input's file name. True when base is made
 * from the input's name (its extension is the input's, to replace), false
 * when it is -o as given.
 */
bool cli_out_base(const char *out, const char *in, char *base, size_t n);

#endif
