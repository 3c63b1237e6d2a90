/*
 * Event spool. One record in the temp file (it never leaves this process):
 *
 *   flags u8 | [time delta] | [period] | [weight] | stack | [thread] | [cpu] | [event]
 *
 * Fields after flags are unsigned LEB128 varints; a field in brackets is
 * present only when its flag bit says it differs from the previous event's
 * (F_PERIOD, F_WEIGHT, F_THREAD, F_CPU, F_EVENT) or, for time, is not the
 * previous time (F_TIME: zigzag of the signed difference, as times are
 * sorted but may repeat or be absent). cpu is stored plus one (UINT32_MAX,
 * "not recorded", wraps to 0). The first record is against an all-zero
 * previous event. A typical sample takes 6-9 bytes instead of 40 in a fixed
 * layout, so a 90 MB recording's spool is ~7 MB instead of 35 MB written and
 * read back (no gain in run time measurable on its own: bench/README.md).
 *
 * Events stay in memory until the buffer fills once; only then is a file
 * created, so small recordings never touch the disk.
 */
#include "model/events.h"

#include "core/cleanup.h"
#include "core/cursor.h"
#include "core/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_BYTES ((size_t)1 << 20)
/* flags, then at most 10 bytes for each u64 varint and 5 for each u32 */
#define REC_MAX (1 + 3 * 10 + 5 * 5)

#define F_TIME 0x01u
#define F_PERIOD 0x02u
#define F_WEIGHT 0x04u
#define F_THREAD 0x08u
#define F_CPU 0x10u
#define F_EVENT 0x20u
#define F_LABEL 0x40u

struct prof_events {
	char dir[1024];
	int fd;             /* -1 while everything fits in buf */
	unsigned char *buf;
	size_t len;         /* bytes in buf (writing) / valid bytes (reading) */
	size_t pos;         /* reading position in buf */
	uint64_t count;
	uint64_t read;      /* events returned since rewind */
	uint64_t bytes;     /* spool bytes written in all (file and buf) */
	uint64_t left;      /* spool bytes not yet read back into buf */
	struct prof_event prev; /* the previous event, written or read */
	int err_no;         /* first I/O error */
	enum conv_err status;
};

/* The previous event the first record is encoded against (both ways): zeros, cpu not recorded. */
static void prev_reset(struct prof_events *e)
{
	memset(&e->prev, 0, sizeof(e->prev));
	e->prev.cpu = UINT32_MAX;
}

enum conv_err prof_events_open(struct prof_events **out, const char *tmpdir, struct conv_diag *diag)
{
	struct prof_events *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e || !(e->buf = malloc(BUF_BYTES))) {
		free(e);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the event spool");
	}
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	snprintf(e->dir, sizeof(e->dir), "%s", tmpdir);
	e->fd = -1;
	prev_reset(e);
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
	free(e);
}

static bool spill(struct prof_events *e)
{
	if (e->fd < 0) {
		char path[1100];

		int slot;

		snprintf(path, sizeof(path), "%s/conv-events.XXXXXX", e->dir);
		/* registered until unlinked: a signal in between still removes it */
		e->fd = cleanup_mkostemp(path, O_CLOEXEC, &slot);
		if (e->fd < 0)
			return false;
		unlink(path); /* gone when we exit, however we exit */
		cleanup_drop(slot);
	}
	errno = io_write_all(e->fd, e->buf, e->len, NULL);
	if (errno)
		return false;
	e->len = 0;
	return true;
}

bool prof_events_add(struct prof_events *e, const struct prof_event *ev)
{
	unsigned char *p, *flags;
	struct prof_event *pv = &e->prev;

	if (e->err_no)
		return false;
	if (e->len + REC_MAX > BUF_BYTES && !spill(e)) {
		e->err_no = errno ? errno : EIO;
		return false;
	}
	flags = e->buf + e->len;
	p = flags + 1;
	*flags = 0;
	if (ev->time != pv->time) {
		int64_t d = (int64_t)(ev->time - pv->time);

		*flags |= F_TIME;
		p = cur_put_uleb128(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	}
	if (ev->period != pv->period) {
		*flags |= F_PERIOD;
		p = cur_put_uleb128(p, ev->period);
	}
	if (ev->weight != pv->weight) {
		*flags |= F_WEIGHT;
		p = cur_put_uleb128(p, ev->weight);
	}
	p = cur_put_uleb128(p, ev->stack);
	if (ev->thread != pv->thread) {
		*flags |= F_THREAD;
		p = cur_put_uleb128(p, ev->thread);
	}
	if (ev->cpu != pv->cpu) {
		*flags |= F_CPU;
		p = cur_put_uleb128(p, (uint32_t)(ev->cpu + 1));
	}
	if (ev->event != pv->event) {
		*flags |= F_EVENT;
		p = cur_put_uleb128(p, ev->event);
	}
	if (ev->label != pv->label) {
		*flags |= F_LABEL;
		p = cur_put_uleb128(p, ev->label);
	}
	*pv = *ev;
	e->bytes += (size_t)(p - flags);
	e->len = (size_t)(p - e->buf);
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

uint64_t prof_events_count(const struct prof_events *e)
{
	return e ? e->count : 0;
}

enum conv_err prof_events_rewind(struct prof_events *e, struct conv_diag *diag)
{
	e->read = 0;
	e->pos = 0;
	e->status = CONV_E_OK;
	prev_reset(e);
	if (e->fd < 0)
		return CONV_E_OK; /* everything is in buf */
	if (lseek(e->fd, 0, SEEK_SET) < 0)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "event spool: %s", strerror(errno));
	e->len = 0;
	e->left = e->bytes;
	return CONV_E_OK;
}

/* Keeps the unread tail and reads more behind it, so a record never straddles the end of buf. */
static bool refill(struct prof_events *e)
{
	size_t have = e->len - e->pos, want = BUF_BYTES - have, got = 0;

	memmove(e->buf, e->buf + e->pos, have);
	if (want > e->left)
		want = (size_t)e->left;
	while (got < want) {
		ssize_t k = read(e->fd, e->buf + have + got, want - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			e->status = CONV_E_IO;
			return false;
		}
		got += (size_t)k;
	}
	e->left -= got;
	e->len = have + got;
	e->pos = 0;
	return true;
}

bool prof_events_next(struct prof_events *e, struct prof_event *out)
{
	struct prof_event *pv = &e->prev;
	struct cur c;
	unsigned flags;

	if (e->read >= e->count || e->status)
		return false;
	if (e->len - e->pos < REC_MAX && e->fd >= 0 && e->left && !refill(e))
		return false;
	/* a spool that does not decode (short, or a varint past 64 bits) is an I/O fault */
	cur_init(&c, e->buf + e->pos, e->len - e->pos, false);
	flags = cur_u8(&c);
	if (flags & F_TIME) {
		uint64_t z = cur_uleb128(&c);

		pv->time += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
	}
	if (flags & F_PERIOD)
		pv->period = cur_uleb128(&c);
	if (flags & F_WEIGHT)
		pv->weight = cur_uleb128(&c);
	pv->stack = (uint32_t)cur_uleb128(&c);
	if (flags & F_THREAD)
		pv->thread = (uint32_t)cur_uleb128(&c);
	if (flags & F_CPU)
		pv->cpu = (uint32_t)cur_uleb128(&c) - 1;
	if (flags & F_EVENT)
		pv->event = (uint32_t)cur_uleb128(&c);
	if (flags & F_LABEL)
		pv->label = (uint32_t)cur_uleb128(&c);
	if (!cur_ok(&c)) {
		e->status = CONV_E_IO;
		return false;
	}
	*out = *pv;
	e->pos += c.pos;
	e->read++;
	return true;
}

enum conv_err prof_events_status(const struct prof_events *e)
{
	return e->status;
}
