/*
 * Input for the reader: sequential buffered reads of the data stream (so a
 * pipe works as well as a file, and memory stays bounded), plus positioned
 * reads for the file-mode header sections. A file-mode stream that cannot
 * seek (file mode piped through stdin) is first copied to an unlinked temp
 * file, because its feature sections sit after the data.
 */
#include "reader/reader_internal.h"

#include "core/cleanup.h"
#include "core/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IN_BUF_MIN (1u << 20)

void in_init_mem(struct rdr_in *in, const void *data, size_t len)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->mem = data;
	in->size = len;
	in->seekable = true;
	in->limit = UINT64_MAX;
}

static ssize_t in_read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

enum conv_err in_init_fd(struct rdr_in *in, int fd, struct conv_diag *diag)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->fd = fd;
	in->size = UINT64_MAX;
	in->limit = UINT64_MAX;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->seekable = lseek(fd, 0, SEEK_CUR) >= 0;
		in->size = (uint64_t)st.st_size;
		if (st.st_mtim.tv_sec > 0)
			in->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
				       (uint64_t)st.st_mtim.tv_nsec;
		in->pos = in->seekable ? (uint64_t)lseek(fd, 0, SEEK_CUR) : 0;
	}
	in->buf_cap = IN_BUF_MIN;
	in->buf = malloc(in->buf_cap);
	if (!in->buf)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the input buffer");
	return CONV_E_OK;
}

void in_release(struct rdr_in *in)
{
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	free(in->buf);
	in->buf = NULL;
}

bool in_pread(struct rdr_in *in, uint64_t off, void *out, size_t len)
{
	if (in->size != UINT64_MAX && (off > in->size || len > in->size - off))
		return false;
	if (in->mem) {
		memcpy(out, in->mem + off, len);
		return true;
	}
	if (!in->seekable)
		return false;
	for (size_t got = 0; got < len;) {
		ssize_t k = pread(in->fd, (char *)out + got, len - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k < 0)
				in->io_errno = errno;
			return false;
		}
		got += (size_t)k;
	}
	return true;
}

bool in_seek(struct rdr_in *in, uint64_t off, uint64_t limit)
{
	in->limit = limit;
	in->eof = false;
	if (in->mem) {
		in->pos = off;
		return off <= in->size;
	}
	if (off >= in->pos && off - in->pos <= in->end - in->start) {
		in->start += (size_t)(off - in->pos);
		in->pos = off;
		return true;
	}
	if (!in->seekable || lseek(in->fd, (off_t)off, SEEK_SET) < 0)
		return false;
	in->start = in->end = 0;
	in->pos = off;
	return true;
}

/* Bytes left before the stream limit (or EOF when the size is known). */
static uint64_t in_left(const struct rdr_in *in)
{
	uint64_t end = in->limit;

	if (in->size != UINT64_MAX && in->size < end)
		end = in->size;
	return end > in->pos ? end - in->pos : (end == UINT64_MAX ? UINT64_MAX : 0);
}

size_t in_peek(struct rdr_in *in, size_t n, const uint8_t **p)
{
	uint64_t left = in_left(in);
	size_t have;

	if (left < n)
		n = (size_t)left;
	if (in->mem) {
		*p = in->mem + in->pos;
		return n;
	}
	have = in->end - in->start;
	if (have < n && !in->eof) {
		if (n > in->buf_cap) {
			size_t ncap = in->buf_cap;
			uint8_t *nb;

			while (ncap < n)
				ncap *= 2;
			nb = malloc(ncap);
			if (!nb) {
				in->io_errno = ENOMEM;
				*p = in->buf + in->start;
				return have;
			}
			memcpy(nb, in->buf + in->start, have);
			free(in->buf);
			in->buf = nb;
			in->buf_cap = ncap;
		} else if (in->start > 0) {
			memmove(in->buf, in->buf + in->start, have);
		}
		in->start = 0;
		in->end = have;
		while (in->end - in->start < n) {
			size_t room = in->buf_cap - in->end;
			ssize_t k;

			/* read no further than the stream limit so the feature index is not consumed */
			if (left != UINT64_MAX && room > left - (in->end - in->start))
				room = (size_t)(left - (in->end - in->start));
			if (room == 0)
				break;
			k = read(in->fd, in->buf + in->end, room);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				if (k < 0)
					in->io_errno = errno;
				in->eof = true;
				break;
			}
			in->end += (size_t)k;
		}
		have = in->end - in->start;
	}
	*p = in->buf + in->start;
	return have < n ? have : n;
}

void in_consume(struct rdr_in *in, size_t n)
{
	if (!in->mem) {
		size_t have = in->end - in->start;

		if (n > have)
			n = have;
		in->start += n;
	}
	in->pos += n;
}

uint64_t in_skip(struct rdr_in *in, uint64_t n)
{
	uint64_t left = in_left(in);
	uint64_t done = 0;

	if (n > left)
		n = left;
	if (in->mem) {
		in->pos += n;
		return n;
	}
	while (done < n) {
		const uint8_t *p;
		size_t want = n - done > in->buf_cap ? in->buf_cap : (size_t)(n - done);
		size_t got;

		if (in->seekable && in->end == in->start) {
			if (lseek(in->fd, (off_t)(in->pos + (n - done)), SEEK_SET) < 0)
				break;
			in->pos += n - done;
			return n;
		}
		got = in_peek(in, want, &p);
		if (got == 0)
			break;
		in_consume(in, got);
		done += got;
	}
	return done;
}

enum conv_err in_spool(struct rdr_in *in, struct conv_diag *diag)
{
	const uint8_t *head = in->buf + in->start;
	size_t head_len = in->end - in->start;

	const char *dir = getenv("TMPDIR");
	char path[4096];
	int tfd, slot;
	uint64_t total = 0;

	if (!dir || !*dir)
		dir = "/tmp";
	tfd = open(dir, O_TMPFILE | O_RDWR | O_EXCL, 0600);
	if (tfd < 0) {
		int n = snprintf(path, sizeof(path), "%s/conv-spool-XXXXXX", dir);

		if (n < 0 || (size_t)n >= sizeof(path))
			return conv_fail(diag, CONV_E_IO, UINT64_MAX, "temp dir path too long");
		/* registered until unlinked: a signal in between still removes it */
		tfd = cleanup_mkostemp(path, O_CLOEXEC, &slot);
		if (tfd < 0)
			return conv_fail(diag, CONV_E_IO, UINT64_MAX,
					 "cannot create a temp file in %s to spool the input: %s", dir,
					 strerror(errno));
		unlink(path);
		cleanup_drop(slot);
	}
	errno = io_write_all(tfd, head, head_len, NULL);
	if (errno)
		goto fail;
	total = head_len;
	for (;;) {
		ssize_t k = in_read_full(in->fd, in->buf, in->buf_cap);

		if (k < 0)
			goto fail;
		if (k == 0)
			break;
		errno = io_write_all(tfd, in->buf, (size_t)k, NULL);
		if (errno)
			goto fail;
		total += (uint64_t)k;
	}
	in->fd = tfd;
	in->own_fd = true;
	in->seekable = true;
	in->size = total;
	in->pos = 0;
	in->start = in->end = 0;
	in->eof = false;
	if (lseek(tfd, 0, SEEK_SET) < 0)
		goto fail;
	return CONV_E_OK;
fail:
	{
		int e = errno;

		close(tfd);
		return conv_fail(diag, CONV_E_IO, total, "cannot spool the input to a temp file: %s",
				 strerror(e));
	}
}
