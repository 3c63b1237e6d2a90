/*
 * Output files: made durable while the rest is still being written.
 */
#ifndef CONV_CORE_IO_H
#define CONV_CORE_IO_H

#include "core/dbuf.h"
#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * A background flusher for one output file. Outputs are fsync'ed before they
 * are renamed into place (a crash must not leave a renamed but empty file),
 * and on a disk with a write-back cache an fsync pays for every byte written
 * since the last one, whatever writeback was started before: on this VM
 * (virtio disk, the host's page cache behind it) ~1 ms per MB. The 90 MB
 * benchmark file's 15 MB JFR waited 15 ms in its final fsync even with
 * sync_file_range started after each MB. So a thread fdatasync()s what the
 * writer has written whenever IO_FLUSH_STEP more bytes are written and it
 * is not busy; the final fsync then covers the last few MB only (measured:
 * 12-13 ms -> 1.1 ms for 15 MB written over 50 ms).
 *
 * The thread starts at the first step (small outputs never make one). Only
 * the writer's thread calls io_flush_wrote; any thread may finish.
 */
#define IO_FLUSH_STEP ((uint64_t)2 << 20)

struct io_flush;

/* A flusher for fd (not started yet); NULL when out of memory (then nothing is flushed early). */
struct io_flush *io_flush_new(int fd);

/* The writer has now written bytes in all; f may be NULL. */
void io_flush_wrote(struct io_flush *f, uint64_t bytes);

/*
 * Waits for the thread and frees f (NULL: nothing to do). Returns 0, or the
 * errno of the first background fdatasync that failed: an error it reports
 * is not reported again to a later fsync of the same file, so the caller
 * must treat it as that fsync's. *syncs (when not NULL) gets the number of
 * background fdatasync calls.
 */
int io_flush_finish(struct io_flush *f, unsigned *syncs);

/*
 * Writes all n bytes at fd's position, again after EINTR and short writes.
 * Returns 0, or the errno that stopped it (ENOSPC for a write of 0 bytes);
 * *done (may be NULL) gets the bytes written either way.
 */
int io_write_all(int fd, const void *p, size_t n, size_t *done);

/*
 * A writer's output to fd: appended to buf, written a megabyte at a time
 * (io_out_maybe_write) with the flusher told. pos is buf[0]'s offset in
 * the file, so a writer may patch bytes it wrote before (io_out_patch).
 * Errors are sticky: the first write error's errno is kept, later writes
 * do nothing.
 */
struct io_out {
	int fd;
	struct io_flush *flush; /* may be NULL */
	struct dbuf buf;
	uint64_t pos;
	int io_errno;
};

void io_out_init(struct io_out *o, int fd, struct io_flush *flush);
/* Writes what buf holds now. */
void io_out_write(struct io_out *o);
/*
 * Writes what is left and releases buf: CONV_E_IO (the errno's text in
 * diag) after a write error, CONV_E_NOMEM when buf could not grow, else
 * CONV_E_OK; *bytes (may be NULL) gets the bytes written.
 */
enum conv_err io_out_finish(struct io_out *o, uint64_t *bytes, struct conv_diag *diag);
/* Writes what buf holds, then n bytes from p as they are (not copied: large pieces). */
void io_out_put(struct io_out *o, const void *p, size_t n);
/* Puts n bytes at file offset at, over bytes written before (still in buf, or in the file). */
void io_out_patch(struct io_out *o, uint64_t at, const void *p, size_t n);
/* The file offset of the next byte. */
static inline uint64_t io_out_tell(const struct io_out *o)
{
	return o->pos + o->buf.len;
}
/* Writes buf when it holds a megabyte or more. */
static inline void io_out_maybe_write(struct io_out *o)
{
	if (o->buf.len >= ((size_t)1 << 20))
		io_out_write(o);
}

#endif
