/*
 * A JFR recording read back into the profile model, for conv diff's JFR
 * inputs (one conv wrote, or another writer's with the JDK's types): the
 * stack of every sample event, counted per stack. Sample events are
 * jdk.ExecutionSample (conv's CPU-time event), conv's perf.* events with a
 * stack trace, and perf.OffCPU (off-CPU time); each type is one event of
 * the model, named by its "event" setting (jdk.ActiveSetting, which conv
 * writes: the perf event as recorded) or else by its type's name, with its
 * frequency or interval from the settings. An event's period sum is its
 * events' period fields, or for jdk.ExecutionSample its count times the
 * interval (the count when there is none).
 *
 * A frame is its method's name (a Java method's class and name joined by
 * '.', conv's unnamed native frames their name and descriptor, which hold
 * the address) and line, in a mapping per class (conv's classes are the
 * libraries' file names), the kernel's for Kernel frames, a JIT's for
 * Java's; conv's frames at an address in no mapping (named by the address,
 * without a class) are such locations again, without a name. Each frame
 * is a location of its own: JFR does not say which frames were inlined
 * into which (conv diff compares such a profile level by level:
 * prof_split_inlines), nor source files or addresses. The
 * recording's host, kernel release and architecture are taken from conv's
 * jdk.OSInformation ("uname: Linux HOST RELEASE ARCH") where it is one.
 */
#ifndef CONV_PIPELINE_JFRLOAD_H
#define CONV_PIPELINE_JFRLOAD_H

#include "core/err.h"

struct jfe_file;
struct prof;

/*
 * Fills p (made by prof_init, empty) from f (jfe_parse's). Errors:
 * CONV_E_FORMAT (no sample events, or a stack trace that does not decode:
 * diag says where), CONV_E_NOMEM; p is then to be released, not used.
 */
enum conv_err jfrload_prof(const struct jfe_file *f, struct prof *p, struct conv_diag *diag);

#endif
