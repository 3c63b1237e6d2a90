/*
 * pprof writer: a finished profile model -> profile.proto bytes (gzip).
 */
#ifndef CONV_PPROFWRITER_PPROF_H
#define CONV_PPROFWRITER_PPROF_H

#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

struct prof;
struct dbuf;
struct io_flush;

/* Encodes the profile (uncompressed protobuf) into out. CONV_E_NOMEM. */
enum conv_err pprof_encode(const struct prof *p, struct dbuf *out);

/*
 * Encodes and gzips into out (deterministic: no name or time in the gzip
 * header; one gzip member per 256 KiB of encoding). level: 0-12 as
 * libdeflate counts (1 fastest, 6 zlib's default, 12 smallest); below 0: 6.
 */
enum conv_err pprof_encode_gz(const struct prof *p, int level, struct dbuf *out);

/*
 * Encodes and gzips to fd as it goes (a few hundred KiB of memory whatever
 * the profile's size), telling flush (core/io.h; NULL: none) what it wrote.
 * *bytes: bytes written; CONV_E_IO with *io_errno when a write fails,
 * CONV_E_NOMEM. Reads the profile only: another thread may read the same
 * profile meanwhile (the JFR writer does).
 */
enum conv_err pprof_write_gz(const struct prof *p, int level, int fd, struct io_flush *flush,
			     uint64_t *bytes, int *io_errno);

#endif
