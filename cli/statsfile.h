/*
 * The --stats file of conv and conv symbolize: one JSON record per input,
 * written to a temp file beside FILE and renamed into place at the end, so
 * that a reader never sees a half-written file (cli/statsfile.c). A signal
 * that stops conv (cli/main.c) completes it: a record for the input being
 * worked on, with the signal, then the rename.
 */
#ifndef CONV_CLI_STATSFILE_H
#define CONV_CLI_STATSFILE_H

#include <stdbool.h>
#include <stddef.h>

struct dbuf;
struct json;

/* Opens path ("-": stdout); false when it cannot be made (said, after cmd). */
bool statsfile_open(const char *cmd, const char *path);
/*
 * The record of the input being worked on, whole; from now on a signal
 * adds no record for it. data NULL: the record could not be made (no
 * memory), and the file, short of it, is given up. From the main thread
 * (cli/main.c's handler runs there).
 */
void statsfile_put(const void *data, size_t len);
/*
 * An input's record as conv and conv symbolize both make it: begin starts
 * out (a new dbuf) and j on it with {"input": in, "exit_code": rc; the
 * command adds its members; end closes the object and the line, puts the
 * record and releases out.
 */
void statsfile_record_begin(struct json *j, struct dbuf *out, const char *in, int rc);
void statsfile_record_end(struct json *j, struct dbuf *out);
/*
 * Input `in` is being worked on: until its record is put, a signal writes
 * {"input": in, "exit_code": 128+N, "signal": N, "outputs": []} for it.
 */
void statsfile_arm(const char *in);
/*
 * A record kept for later: while conv converts inputs side by side, each
 * worker thread's record goes here (statsfile_capture_to), and the main
 * thread puts it when the input's turn comes (statsfile_put_captured), so
 * that the file lists the inputs in their order whatever finished first.
 */
struct statsfile_capture {
	unsigned char *data; /* malloc'd */
	size_t len;
	bool failed;         /* the record could not be made (no memory) */
};

/* This thread's records to c from now on (NULL: to the file again). */
void statsfile_capture_to(struct statsfile_capture *c);
/* Puts a captured record (none was made: nothing) and frees it. From the main thread. */
void statsfile_put_captured(struct statsfile_capture *c);

/* Puts the finished file in place; false when that fails (said, after cmd). */
bool statsfile_close(const char *cmd);

#endif
