/*
 * JFR writer: a finished profile model and its sample events -> a JDK Flight
 * Recorder file (format 2.0) that JDK's jfr tool, JDK Mission Control and
 * async-profiler's converter read.
 */
#ifndef CONV_JFRWRITER_JFR_H
#define CONV_JFRWRITER_JFR_H

#include "core/err.h"

#include <stdbool.h>
#include <stdint.h>

struct prof;
struct io_flush;

#define JFR_CHUNK_SIZE_DEFAULT (64u << 20)

struct jfr_opts {
	/*
	 * A chunk is closed once its bytes pass this size (0: the default).
	 * Readers load a chunk at a time; JMC copies each into one Java array.
	 */
	uint64_t chunk_size;
	/* told what is written (core/io.h); NULL: none */
	struct io_flush *flush;
};

struct jfr_stats {
	uint64_t chunks;
	uint64_t events;        /* sample events written */
	uint64_t remote_frames; /* native frames written as build-id + ELF address */
	uint64_t bytes;
};

/*
 * Writes the recording to fd, which must be seekable (chunk headers are
 * completed once a chunk is done). The sample events are read from
 * p->events (none when NULL). Errors: CONV_E_NOMEM, CONV_E_IO (diag says).
 */
enum conv_err jfr_write(const struct prof *p, const struct jfr_opts *o, int fd,
			struct jfr_stats *st, struct conv_diag *diag);

/*
 * How the writer makes native frames, so that conv symbolize writes them as
 * a conversion does: the class (the object's file name), the descriptor
 * (kernel frames have their own), the modifiers and the frame type.
 */
const char *jfr_native_class(const char *path);
#define JFR_DESC_NATIVE "()L;"
#define JFR_DESC_KERNEL "(Lk;)L;"
#define JFR_ACC_NATIVE 0x100
/* "Kernel"; else "C++" for a demangled name (one that differs from its linkage name), else "Native". */
const char *jfr_native_frame_type(bool kernel, bool demangled);

#endif
