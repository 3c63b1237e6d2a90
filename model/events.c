/*
 * Event spool. Layout of one record in the temp file (host byte order: the
 * file never leaves this process):
 *   0 time u64 | 8 period u64 | 16 weight u64 | 24 stack u32 | 28 thread u32
 *   32 cpu u32 | 36 event u32                                   (40 bytes)
 * Events stay in memory until the buffer fills once; only then is a file
 * created, so small recordings never touch the disk.
 */
#include "model/events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC 40u
#define BUF_RECS 32768u /* 1.25 MiB */

struct prof_events {
	char dir[1024];
	int fd;             /* -1 while everything fits in buf */
	unsigned char *buf;
	size_t len;         /* bytes in buf (writing) / valid bytes (reading) */
	size_t pos;         /* reading position in buf */
	uint64_t count;
	uint64_t read;      /* events returned since rewind */
	uint32_t *map;
	size_t map_len;
	int err_no;         /* first I/O error */
	enum conv_err status;
};

enum conv_err prof_events_open(struct prof_events **out, const char *tmpdir, struct conv_diag *diag)
{
	struct prof_events *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e || !(e->buf = malloc((size_t)BUF_RECS * REC))) {
		free(e);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the event spool");
	}
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	snprintf(e->dir, sizeof(e->dir), "%s", tmpdir);
	e->fd = -1;
	*out = e;
	return CONV_E_OK;
}

void prof_events_free(struct prof_events *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	free(e->buf);
	free(e->map);
	free(e);
}

static bool write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static bool spill(struct prof_events *e)
{
	if (e->fd < 0) {
		char path[1100];

		snprintf(path, sizeof(path), "%s/conv-events.XXXXXX", e->dir);
		e->fd = mkstemp(path);
		if (e->fd < 0)
			return false;
		unlink(path); /* gone when we exit, however we exit */
	}
	if (!write_all(e->fd, e->buf, e->len))
		return false;
	e->len = 0;
	return true;
}

bool prof_events_add(struct prof_events *e, const struct prof_event *ev)
{
	unsigned char *p;

	if (e->err_no)
		return false;
	if (e->len + REC > (size_t)BUF_RECS * REC && !spill(e)) {
		e->err_no = errno ? errno : EIO;
		return false;
	}
	p = e->buf + e->len;
	memcpy(p, &ev->time, 8);
	memcpy(p + 8, &ev->period, 8);
	memcpy(p + 16, &ev->weight, 8);
	memcpy(p + 24, &ev->stack, 4);
	memcpy(p + 28, &ev->thread, 4);
	memcpy(p + 32, &ev->cpu, 4);
	memcpy(p + 36, &ev->event, 4);
	e->len += REC;
	e->count++;
	return true;
}

enum conv_err prof_events_finish(struct prof_events *e, struct conv_diag *diag)
{
	if (!e->err_no && e->fd >= 0 && e->len && !spill(e))
		e->err_no = errno ? errno : EIO;
	if (e->err_no)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "event spool in %s: %s", e->dir,
				 strerror(e->err_no));
	return CONV_E_OK;
}

enum conv_err prof_events_remap(struct prof_events *e, const uint32_t *map, size_t n)
{
	uint32_t *m = malloc((n ? n : 1) * sizeof(*m));

	if (!m)
		return CONV_E_NOMEM;
	if (n)
		memcpy(m, map, n * sizeof(*m));
	free(e->map);
	e->map = m;
	e->map_len = n;
	return CONV_E_OK;
}

uint64_t prof_events_count(const struct prof_events *e)
{
	return e ? e->count : 0;
}

enum conv_err prof_events_rewind(struct prof_events *e, struct conv_diag *diag)
{
	e->read = 0;
	e->pos = 0;
	e->status = CONV_E_OK;
	if (e->fd < 0)
		return CONV_E_OK; /* everything is in buf */
	if (lseek(e->fd, 0, SEEK_SET) < 0)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "event spool: %s", strerror(errno));
	e->len = 0;
	return CONV_E_OK;
}

static bool refill(struct prof_events *e)
{
	size_t got = 0, want = (size_t)BUF_RECS * REC;
	uint64_t left = (e->count - e->read) * REC;

	if (left < want)
		want = (size_t)left;
	while (got < want) {
		ssize_t k = read(e->fd, e->buf + got, want - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			e->status = CONV_E_IO;
			return false;
		}
		got += (size_t)k;
	}
	e->len = got;
	e->pos = 0;
	return true;
}

bool prof_events_next(struct prof_events *e, struct prof_event *out)
{
	const unsigned char *p;

	if (e->read >= e->count || e->status)
		return false;
	if (e->pos + REC > e->len) {
		if (e->fd < 0 || !refill(e)) {
			if (e->fd < 0)
				e->status = CONV_E_IO;
			return false;
		}
	}
	p = e->buf + e->pos;
	memcpy(&out->time, p, 8);
	memcpy(&out->period, p + 8, 8);
	memcpy(&out->weight, p + 16, 8);
	memcpy(&out->stack, p + 24, 4);
	memcpy(&out->thread, p + 28, 4);
	memcpy(&out->cpu, p + 32, 4);
	memcpy(&out->event, p + 36, 4);
	if (e->map && out->stack < e->map_len)
		out->stack = e->map[out->stack];
	e->pos += REC;
	e->read++;
	return true;
}

enum conv_err prof_events_status(const struct prof_events *e)
{
	return e->status;
}
