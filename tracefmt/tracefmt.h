/*
 * Tracepoint sample fields, decoded with libtraceevent and contained.
 *
 * tfmt_open() walks the recording's TRACING_DATA blob (the reader keeps it
 * as rdr_info.tracing_data) and hands each event format text to
 * libtraceevent, but only after checking it itself: libtraceevent 1.7
 * crashed (a SEGV in print-fmt parsing) and leaked on crafted formats, and
 * later releases fixed double frees in its print-fmt parser found by
 * fuzzing. A format that fails the checks or libtraceevent is refused: it is
 * counted and its tracepoint has no event. Only the event formats are used;
 * ftrace formats, kallsyms, printk formats and saved cmdlines are skipped
 * and never reach libtraceevent. libtraceevent's plugins are not loaded
 * (they are code run on the recording's bytes).
 *
 * The tfmt_field_* functions are called per sample: they do not allocate.
 * They check the sample's raw size against every field's offset + size and
 * each __data_loc / __rel_loc against the raw size before anything reads
 * the data, and libtraceevent only ever sees a copy of the raw bytes in a
 * buffer of the tfmt's own. A struct tfmt is therefore not for use by two
 * threads at once.
 *
 * The pseudo-field "syscall": for raw_syscalls:sys_enter / sys_exit (field
 * "id") and syscalls:* (field "__syscall_nr"), tfmt_field_index(e,
 * "syscall") returns tfmt_nr_fields(e), one past the event's own fields;
 * with that index tfmt_field_name gives "syscall", tfmt_field_num the
 * syscall number and tfmt_field_text its x86-64 name ("openat"), from a
 * table generated at build time from <asm/unistd_64.h>. Other events have
 * no such index.
 */
#ifndef CONV_TRACEFMT_TRACEFMT_H
#define CONV_TRACEFMT_TRACEFMT_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tfmt;       /* the recording's tracepoint formats */
struct tfmt_event; /* one tracepoint's format */

/* formats: event formats in the blob; refused: failed validation or libtraceevent */
struct tfmt_stats {
	uint64_t formats, parsed, refused;
};

/*
 * blob: the TRACING_DATA blob. CONV_E_OK with *out even when some formats
 * were refused (counted, and the first refusal described in diag when diag
 * is non-NULL: code CONV_E_FORMAT, offset its position in the blob); an
 * error only when the blob is unusable (no magic, a long size other than 4
 * or 8, its event formats ending early) or out of memory.
 */
enum conv_err tfmt_open(const uint8_t *blob, size_t len, struct tfmt **out, struct conv_diag *diag);
void tfmt_free(struct tfmt *t);
const struct tfmt_stats *tfmt_stats(const struct tfmt *t);

/*
 * The event of a tracepoint id (perf_event_attr.config of a
 * PERF_TYPE_TRACEPOINT attr); NULL when unknown or refused.
 */
const struct tfmt_event *tfmt_event(const struct tfmt *t, uint64_t id);
const char *tfmt_event_name(const struct tfmt_event *e); /* "sched:sched_switch" */
/* the event's own fields, not common_* (the "syscall" pseudo-field is not counted) */
size_t tfmt_nr_fields(const struct tfmt_event *e);
/* NULL when i is out of range */
const char *tfmt_field_name(const struct tfmt_event *e, size_t i);
/* -1 when none; "syscall" gives the pseudo index described above */
int tfmt_field_index(const struct tfmt_event *e, const char *name);

/*
 * A field of a sample's PERF_SAMPLE_RAW data (raw, raw_len: exactly what
 * the record holds, after its u32 size). Integers of 1, 2, 4 or 8 bytes
 * (not arrays), sign-extended when the field is signed. false when the
 * field is not such an integer or the data is shorter than the event's
 * fields (never reads past raw_len).
 */
bool tfmt_field_num(const struct tfmt_event *e, size_t i, const uint8_t *raw, size_t raw_len,
		    int64_t *out);

/*
 * The field's value as `perf script -F trace` prints it after "name=" for
 * this sample (sched_switch prev_state "S", "D", "R+", "R"; next_comm
 * "bash"; next_pid "0"), from the print fmt rendered by libtraceevent; when
 * the print fmt does not show the field as name=value (or failed to parse),
 * the field's own value: an integer in decimal, a string, or libtraceevent's
 * rendering of an array. A value longer than n - 1 bytes is cut. false when
 * it cannot be decoded (data too short, a dynamic field pointing outside
 * it, a syscall number without a name); buf is always NUL-terminated when
 * n > 0.
 */
bool tfmt_field_text(const struct tfmt_event *e, size_t i, const uint8_t *raw, size_t raw_len,
		     char *buf, size_t n);

#endif
