/*
 * pprof writer: a finished profile model -> profile.proto bytes (gzip).
 */
#ifndef CONV_PPROFWRITER_PPROF_H
#define CONV_PPROFWRITER_PPROF_H

#include "core/err.h"

#include <stddef.h>

struct prof;
struct dbuf;

/* Encodes the profile (uncompressed protobuf) into out. CONV_E_NOMEM. */
enum conv_err pprof_encode(const struct prof *p, struct dbuf *out);

/* Encodes and gzips into out (deterministic: no name or time in the gzip header). */
enum conv_err pprof_encode_gz(const struct prof *p, int level, struct dbuf *out);

#endif
