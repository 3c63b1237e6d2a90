/*
 * Off-CPU time from the scheduler: a thread switched out (a sched_switch
 * sample whose prev is the thread, with the stack it blocked in) is off CPU
 * until it runs again (its next switch-in record, its next sample, or a
 * sched_switch naming it as next). Each interval is charged to the
 * switch-out sample's key (its stack and thread); the pass turns the totals
 * into samples and the intervals into events. Memory grows with threads
 * waiting at once and with keys that waited, not with intervals.
 */
#ifndef CONV_PIPELINE_OFFCPU_H
#define CONV_PIPELINE_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct offcpu;

/* An interval that ended: the switch-out's key and label set, when and how long. */
struct offcpu_interval {
	uint32_t key;   /* the caller's sample key of the switch-out */
	uint32_t label; /* the caller's label set of it (the state), 0 none */
	uint64_t start, ns;
};

/* What the intervals added up to, per key. */
struct offcpu_total {
	uint32_t key, label;
	uint64_t n, ns;
};

struct offcpu_stats {
	uint64_t intervals;   /* ended and charged */
	uint64_t ns;          /* their total length */
	/*
	 * no end seen, not charged: still switched out when the recording
	 * ended, or switched out again with no sign of running in between
	 */
	uint64_t unended;
	uint64_t unordered;   /* an end before its start (records out of order): not charged */
};

/* NULL when out of memory. */
struct offcpu *offcpu_new(void);
void offcpu_free(struct offcpu *o);

/*
 * tid left the CPU at t; key and label name its switch-out sample. An
 * interval of tid still pending ends here first (the thread ran in between,
 * unseen). False when out of memory.
 */
bool offcpu_leave(struct offcpu *o, uint32_t tid, uint64_t t, uint32_t key, uint32_t label);

/*
 * tid runs at t: true, *iv set, when that ends a pending interval (charged
 * to its key's total); false when none was pending. *oom set when the
 * total could not be kept.
 */
bool offcpu_run(struct offcpu *o, uint32_t tid, uint64_t t, struct offcpu_interval *iv, bool *oom);

/* An interval known whole (perf record --off-cpu: a sample of ns off CPU that ended at its time). */
bool offcpu_add(struct offcpu *o, uint32_t key, uint32_t label, uint64_t ns);

/* The end of the recording: intervals still pending are counted unended and dropped. */
void offcpu_finish(struct offcpu *o);

/* Totals per (key, label), in the order keys first waited. */
const struct offcpu_total *offcpu_totals(const struct offcpu *o, size_t *n);
const struct offcpu_stats *offcpu_stats(const struct offcpu *o);

#endif
