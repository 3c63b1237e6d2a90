/*
 * The tracing-data blob perf saves with a recording (the TRACING_DATA
 * feature, or pipe mode's HEADER_TRACING_DATA record): a walker over its
 * layout up to the end of the event formats, the one part conv reads. The
 * reader takes tracepoint names from it, tracefmt the formats it hands to
 * libtraceevent; both walk it here.
 *
 * Layout (tools/perf/util/trace-event-{info,read}.c), integers in the byte
 * order given by the blob's own flag:
 *   u8[10]  "\x17\x08\x44tracing"
 *   char[]  version, NUL-terminated ("0.6")
 *   u8      big_endian
 *   u8      sizeof(long)
 *   u32     page_size
 *   "header_page\0"  u64 size, data
 *   "header_event\0" u64 size, data
 *   u32 n, {u64 size, data}[n]                      ftrace formats
 *   u32 nsys, {system\0, u32 n, {u64 size, data}[n]}[nsys]   event formats
 *   u32 size, data                                   kallsyms
 *   u32 size, data                                   printk formats
 *   (version >= 0.6) u64 size, data                  saved cmdlines
 * The walk stops after the event formats.
 *
 * Every read goes through one cursor (core/cursor.h): a short blob fails it
 * (position at the end) and the walk stops there; what was returned before
 * stays valid. Sizes are checked against the bytes left before a format is
 * returned.
 */
#ifndef CONV_CORE_TDATA_H
#define CONV_CORE_TDATA_H

#include "core/cursor.h"
#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The blob's fixed header. */
struct tdata_head {
	const char *version; /* in the blob; NULL when it ends inside it */
	uint8_t big_endian;
	uint8_t long_size;
	uint32_t page_size;
	bool swap; /* the blob's byte order is not the host's */
};

/* One event format. */
struct tdata_format {
	const char *sys;   /* its system, NUL-terminated in the blob */
	const char *text;  /* the format text, not NUL-terminated */
	size_t len;
	size_t off;        /* offset of the text in the blob */
};

struct tdata {
	struct cur c;
	struct tdata_head head;
	uint32_t sys_left;  /* systems not yet begun */
	uint32_t fmt_left;  /* formats left in the current system */
	const char *sys;
};

/*
 * Starts a walk over the len bytes at blob: the magic and the fixed header
 * into w->head. CONV_E_FORMAT without the magic, CONV_E_TRUNCATED when the
 * blob ends in the version (w->head.version NULL) or in the header.
 */
enum conv_err tdata_begin(struct tdata *w, const uint8_t *blob, size_t len);

/*
 * Skips header_page, header_event and the ftrace formats and reads the
 * number of systems; false when the blob ends first.
 */
bool tdata_skip_to_events(struct tdata *w);

/*
 * The next event format into *f; false after the last one, or when the
 * blob ends first (tdata_ok tells which).
 */
bool tdata_next_format(struct tdata *w, struct tdata_format *f);

/* Whether the walk so far stayed inside the blob. */
static inline bool tdata_ok(const struct tdata *w)
{
	return cur_ok(&w->c);
}

/* Where the walk is: the next byte to read (the blob's end once it failed). */
static inline size_t tdata_pos(const struct tdata *w)
{
	return w->c.pos;
}

#endif
