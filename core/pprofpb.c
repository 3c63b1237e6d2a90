#include "core/pprofpb.h"

#include "core/io.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

enum conv_err pprof_sink_init(struct pprof_sink *k, int level, struct dbuf *mem, int fd,
			      struct io_flush *flush)
{
	memset(k, 0, sizeof(*k));
	dbuf_init(&k->buf, 0);
	k->mem = mem;
	k->fd = fd;
	k->flush = flush;
	/* libdeflate's gzip header has mtime 0 and no name: the same bytes every run */
	if (level >= 0 && !(k->gz = libdeflate_alloc_compressor(level)))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

static void sink_out(struct pprof_sink *k, const unsigned char *p, size_t n)
{
	k->bytes += n;
	if (k->mem) {
		if (!dbuf_append(k->mem, p, n))
			k->failed = true;
		return;
	}
	k->io_errno = io_write_all(k->fd, p, n, NULL);
	if (k->io_errno) {
		k->failed = true;
		return;
	}
	/* made durable while the rest is encoded (core/io.h) */
	io_flush_wrote(k->flush, k->bytes);
}

void pprof_sink_flush(struct pprof_sink *k, bool last)
{
	if (k->buf.err)
		k->failed = true;
	if (k->failed)
		return;
	if (!k->gz) {
		sink_out(k, k->buf.data, k->buf.len);
	} else if (k->buf.len || (last && !k->bytes)) {
		/* nothing written yet at the end: one empty member, still a gzip file */
		size_t bound = libdeflate_gzip_compress_bound(k->gz, k->buf.len), n;

		if (bound > k->zcap) {
			unsigned char *nz = realloc(k->zout, bound);

			if (!nz) {
				k->failed = true;
				return;
			}
			k->zout = nz;
			k->zcap = bound;
		}
		n = libdeflate_gzip_compress(k->gz, k->buf.data, k->buf.len, k->zout, k->zcap);
		if (!n) { /* cannot happen with the bound's room */
			k->failed = true;
			return;
		}
		sink_out(k, k->zout, n);
	}
	dbuf_reset(&k->buf);
}

enum conv_err pprof_sink_status(const struct pprof_sink *k)
{
	return k->io_errno ? CONV_E_IO : k->failed || k->buf.err ? CONV_E_NOMEM : CONV_E_OK;
}

void pprof_sink_release(struct pprof_sink *k)
{
	if (k->gz)
		libdeflate_free_compressor(k->gz);
	free(k->zout);
	dbuf_release(&k->buf);
	memset(k, 0, sizeof(*k));
}
