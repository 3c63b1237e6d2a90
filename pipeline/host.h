/*
 * Facts about the machine conv runs on that decide whether its files may
 * stand in for the recording machine's.
 */
#ifndef CONV_PIPELINE_HOST_H
#define CONV_PIPELINE_HOST_H

#include <stdbool.h>

/*
 * Whether the kernel running here has the release the recording names
 * (perf's OSRELEASE): only then may /proc/kallsyms, /sys/kernel/notes and our
 * own vdso stand in for the recorded kernel's.
 */
bool host_runs_kernel(const char *release);

#endif
