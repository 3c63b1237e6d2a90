#include "views/out.h"

#include "core/io.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void view_out_init(struct view_out *o, int fd, struct io_flush *flush)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->flush = flush;
	dbuf_init(&o->buf, 0);
}

static void out_write(struct view_out *o)
{
	size_t off = 0;

	if (!o->io_errno)
		o->io_errno = io_write_all(o->fd, o->buf.data, o->buf.len, &off);
	o->bytes += off;
	if (!o->io_errno)
		io_flush_wrote(o->flush, o->bytes);
	dbuf_reset(&o->buf);
}

void view_out_maybe_flush(struct view_out *o)
{
	if (o->buf.len >= (1u << 20))
		out_write(o);
}

enum conv_err view_out_finish(struct view_out *o, uint64_t *bytes, struct conv_diag *diag)
{
	bool nomem = o->buf.err;

	if (!nomem)
		out_write(o);
	dbuf_release(&o->buf);
	if (bytes)
		*bytes = o->bytes;
	if (o->io_errno)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "%s", strerror(o->io_errno));
	if (nomem)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	return CONV_E_OK;
}
