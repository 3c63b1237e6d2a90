/*
 * The protobuf encoding and the output sink of pprof files, shared by the
 * writer (pprofwriter/pprof.c) and the rewriter (pprofedit/), in core/
 * because neither of those folders may include the other. The sink
 * collects top-level fields in buf and sends them on every PPROF_SINK_AT
 * bytes, raw or as one gzip member each (libdeflate), to a dbuf or a file
 * descriptor: memory stays at a few hundred KiB whatever the profile's size.
 * See pprofwriter/pprof.c for why gzip members.
 */
#ifndef CONV_CORE_PPROFPB_H
#define CONV_CORE_PPROFPB_H

#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct io_flush;
struct libdeflate_compressor;

enum { PPROF_WT_VARINT = 0, PPROF_WT_I64 = 1, PPROF_WT_LEN = 2, PPROF_WT_I32 = 5 };

static inline void pprof_pb_varint(struct dbuf *b, uint64_t v)
{
	if (dbuf_reserve(b, 10))
		b->len = (size_t)(cur_put_uleb128(b->data + b->len, v) - b->data);
}

static inline void pprof_pb_key(struct dbuf *b, unsigned field, unsigned wt)
{
	pprof_pb_varint(b, (uint64_t)field << 3 | wt);
}

/* A varint field, left out when 0 (proto3's default). */
static inline void pprof_pb_u64(struct dbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pprof_pb_key(b, field, PPROF_WT_VARINT);
	pprof_pb_varint(b, v);
}

/* A length-delimited field. */
static inline void pprof_pb_bytes(struct dbuf *b, unsigned field, const void *p, size_t n)
{
	pprof_pb_key(b, field, PPROF_WT_LEN);
	pprof_pb_varint(b, n);
	dbuf_append(b, p, n);
}

#define PPROF_SINK_AT (256u << 10)

struct pprof_sink {
	struct dbuf buf;                  /* encoded, not sent yet */
	struct libdeflate_compressor *gz; /* NULL: raw */
	unsigned char *zout;              /* one member */
	size_t zcap;
	struct dbuf *mem;                 /* NULL: write to fd */
	int fd;
	int io_errno;
	bool failed;                      /* out of memory, deflate or I/O error (sticky) */
	uint64_t bytes;                   /* sent */
	struct io_flush *flush;           /* told of what is written to fd; NULL: none */
};

/*
 * Sends to mem, or to fd when mem is NULL; level < 0: raw, else gzip at
 * that libdeflate level (0-12). CONV_E_NOMEM when the compressor cannot
 * be made.
 */
enum conv_err pprof_sink_init(struct pprof_sink *k, int level, struct dbuf *mem, int fd,
			      struct io_flush *flush);

/* Sends what buf holds; last: the end (a gzip output with nothing in it still gets a member). */
void pprof_sink_flush(struct pprof_sink *k, bool last);

static inline void pprof_sink_maybe_flush(struct pprof_sink *k)
{
	if (k->buf.len >= PPROF_SINK_AT)
		pprof_sink_flush(k, false);
}

/* CONV_E_IO (io_errno says why), CONV_E_NOMEM or CONV_E_OK: how the sink has fared. */
enum conv_err pprof_sink_status(const struct pprof_sink *k);

void pprof_sink_release(struct pprof_sink *k);

#endif
