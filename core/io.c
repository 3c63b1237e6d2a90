#include "core/io.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct io_flush {
	int fd;
	pthread_t thread;
	bool started;      /* the thread exists */
	bool failed_start; /* it could not be made: no early syncs, the final fsync does them */
	uint64_t asked; /* writer's side: bytes written at its last request */
	/* under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned requests, done, syncs;
	bool stop;
	int err; /* errno of the first failed fdatasync */
};

static void *flush_main(void *arg)
{
	struct io_flush *f = arg;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		unsigned want;
		int e;

		while (!f->stop && f->requests == f->done)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->requests == f->done)
			break;
		want = f->requests;
		pthread_mutex_unlock(&f->mu);
		e = fdatasync(f->fd) ? errno : 0;
		pthread_mutex_lock(&f->mu);
		if (e && !f->err)
			f->err = e;
		f->syncs++;
		f->done = want;
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

struct io_flush *io_flush_new(int fd)
{
	struct io_flush *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (pthread_mutex_init(&f->mu, NULL)) {
		free(f);
		return NULL;
	}
	if (pthread_cond_init(&f->cv, NULL)) {
		pthread_mutex_destroy(&f->mu);
		free(f);
		return NULL;
	}
	f->fd = fd;
	return f;
}

void io_flush_wrote(struct io_flush *f, uint64_t bytes)
{
	if (!f || f->failed_start || bytes - f->asked < IO_FLUSH_STEP)
		return;
	if (!f->started) {
		if (pthread_create(&f->thread, NULL, flush_main, f)) {
			f->failed_start = true; /* the final fsync does it all, as without a flusher */
			return;
		}
		f->started = true;
	}
	pthread_mutex_lock(&f->mu);
	/* only when idle: a request queued behind a running fdatasync would sync twice what one sync covers */
	if (f->requests == f->done) {
		f->requests++;
		f->asked = bytes;
		pthread_cond_signal(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
}

int io_flush_finish(struct io_flush *f, unsigned *syncs)
{
	int err;

	if (syncs)
		*syncs = 0;
	if (!f)
		return 0;
	if (f->started) {
		pthread_mutex_lock(&f->mu);
		f->stop = true;
		pthread_cond_signal(&f->cv);
		pthread_mutex_unlock(&f->mu);
		pthread_join(f->thread, NULL);
	}
	err = f->err;
	if (syncs)
		*syncs = f->syncs;
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return err;
}

/* io_write_all at fd's position (at < 0), or at file offset at (pwrite). */
static int write_all_at(int fd, const void *p, size_t n, off_t at, size_t *done)
{
	const char *c = p;
	size_t off = 0;
	int err = 0;

	while (off < n) {
		ssize_t k = at < 0 ? write(fd, c + off, n - off) : pwrite(fd, c + off, n - off, at + (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			err = k < 0 ? errno : ENOSPC;
			break;
		}
		off += (size_t)k;
	}
	if (done)
		*done = off;
	return err;
}

int io_write_all(int fd, const void *p, size_t n, size_t *done)
{
	return write_all_at(fd, p, n, -1, done);
}

void io_out_init(struct io_out *o, int fd, struct io_flush *flush)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->flush = flush;
	dbuf_init(&o->buf, 0);
}

void io_out_write(struct io_out *o)
{
	if (!o->io_errno)
		o->io_errno = io_write_all(o->fd, o->buf.data, o->buf.len, NULL);
	o->pos += o->buf.len;
	/* made durable while the rest is encoded */
	if (!o->io_errno)
		io_flush_wrote(o->flush, o->pos);
	dbuf_reset(&o->buf);
}

void io_out_put(struct io_out *o, const void *p, size_t n)
{
	size_t off = 0;

	io_out_write(o);
	if (!o->io_errno)
		o->io_errno = io_write_all(o->fd, p, n, &off);
	o->pos += off;
	if (!o->io_errno)
		io_flush_wrote(o->flush, o->pos);
}

void io_out_patch(struct io_out *o, uint64_t at, const void *p, size_t n)
{
	if (at >= o->pos && at - o->pos + n <= o->buf.len) {
		memcpy(o->buf.data + (at - o->pos), p, n);
		return;
	}
	io_out_write(o);
	if (!o->io_errno)
		o->io_errno = write_all_at(o->fd, p, n, (off_t)at, NULL);
}

enum conv_err io_out_finish(struct io_out *o, uint64_t *bytes, struct conv_diag *diag)
{
	bool nomem = o->buf.err;

	if (!nomem)
		io_out_write(o);
	dbuf_release(&o->buf);
	if (bytes)
		*bytes = o->pos;
	if (o->io_errno)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "%s", strerror(o->io_errno));
	if (nomem)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	return CONV_E_OK;
}
