/*
 * A pprof profile read back into the profile model, for conv diff's inputs
 * (a pprof conv wrote, or another program's): its strings, mappings,
 * functions, locations with their lines, and its samples with their
 * labels, summed per (stack, labels) as the model keeps them. The sample
 * types are read as events, two types each: an event's samples and their
 * sum, as conv writes them ("cycles_samples"/count, "cycles"/count); the
 * event is named by the second (another program's pairs are read the same
 * way: Go's samples/count, cpu/nanoseconds is the event "cpu").
 *
 * What pprof does not keep stays unknown: the recording's machine (but
 * the host, perf version and architecture conv's comments say: "hostname
 * H", "perf version V", "arch A"), an event's modifiers and frequency (the period is the profile's
 * period for the event its period_type names), the threads, a mapping's
 * kind, which is taken from its name and address: [kernel.kallsyms] and
 * addresses in the upper half are the kernel; [vdso], [vsyscall], //anon,
 * BPF programs and other bracketed names are neither a file nor the kernel
 * (anonymous memory whose frames have names is a JIT's). The CPU-time
 * event is cpu-clock, task-clock, then cycles or ref-cycles, as a
 * conversion picks it; off_cpu is off-CPU time.
 *
 * Every id and string index is checked against the tables, every count
 * against the bytes it comes in.
 */
#ifndef CONV_PIPELINE_PPLOAD_H
#define CONV_PIPELINE_PPLOAD_H

#include "core/err.h"

struct ppe_profile;
struct prof;

/*
 * Fills p (made by prof_init, empty) from pp (ppe_parse's). Errors:
 * CONV_E_FORMAT (diag: what, and the field's offset in the protobuf),
 * CONV_E_NOMEM; p is then to be released, not used.
 */
enum conv_err ppload_prof(const struct ppe_profile *pp, struct prof *p, struct conv_diag *diag);

#endif
