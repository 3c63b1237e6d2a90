/*
 * The views' writers' output: a buffer written to fd a megabyte at a time,
 * with the background flusher told (core/io.h). Errors are sticky: the
 * first write error's errno is kept and later writes do nothing.
 */
#ifndef CONV_VIEWS_OUT_H
#define CONV_VIEWS_OUT_H

#include "core/dbuf.h"
#include "core/err.h"

#include <stdint.h>

struct io_flush;

struct view_out {
	int fd;
	struct io_flush *flush; /* may be NULL */
	struct dbuf buf;
	uint64_t bytes; /* written to fd */
	int io_errno;
};

void view_out_init(struct view_out *o, int fd, struct io_flush *flush);
/* Writes the buffer when it holds a megabyte or more. */
void view_out_maybe_flush(struct view_out *o);
/*
 * Writes what is left and releases the buffer: CONV_E_IO (the errno's
 * text in diag) after a write error, CONV_E_NOMEM when the buffer could
 * not grow, else CONV_E_OK; *bytes (may be NULL) gets the bytes written.
 */
enum conv_err view_out_finish(struct view_out *o, uint64_t *bytes, struct conv_diag *diag);

#endif
