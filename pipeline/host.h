/*
 * Facts about the machine conv runs on that decide whether its files may
 * stand in for the recording machine's.
 */
#ifndef CONV_PIPELINE_HOST_H
#define CONV_PIPELINE_HOST_H

#include <stdbool.h>

struct procmap;
struct rdr_event;
struct rdr_info;

/*
 * Whether the kernel running here has the release the recording names
 * (perf's OSRELEASE): only then may /proc/kallsyms, /sys/kernel/notes and our
 * own vdso stand in for the recorded kernel's.
 */
bool host_runs_kernel(const char *release);

/*
 * Whether the recording names this machine: its hostname and the running
 * kernel's release (perf's HOSTNAME and OSRELEASE). Files here may then be
 * the recorded ones, each still to be shown the mapped file (procmap).
 */
bool host_is_recording_machine(const char *hostname, const char *release);

/*
 * A pipe recording says its hostname and kernel release in HEADER_FEATURE
 * records, after the start and before its first mapping: when ev is one of
 * them, tells pm whether the recording names this machine now
 * (procmap_set_same_machine). For every record the caller reads.
 */
void host_note_record(struct procmap *pm, const struct rdr_info *info, const struct rdr_event *ev);

#endif
