/*
 * The neutral profile between the pipeline and the writers: interned
 * strings, mappings, functions, locations (with their inline lines),
 * deduplicated stacks and aggregated samples. No perf.data or output-format
 * concepts. The pipeline builds it; writers read it (const) once finished.
 * Ids are dense indexes; writers map them to their own (pprof: id + 1).
 */
#ifndef CONV_MODEL_PROFILE_H
#define CONV_MODEL_PROFILE_H

#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_NONE UINT32_MAX
/* Tracepoint fields an event carries at most. */
#define PROF_MAX_FIELDS 4

struct prof_events;

/* What kind of code a mapping holds: writers name frames differently (JFR frame types). */
enum prof_map_kind {
	PROF_MAP_FILE,   /* an object file (executable, library, module file) */
	PROF_MAP_KERNEL, /* the kernel and its modules */
	PROF_MAP_JIT,    /* code generated at run time, named by a JIT map */
	PROF_MAP_OTHER   /* [vdso], anonymous memory, BPF programs */
};

struct prof_mapping {
	uint64_t start, limit, offset;
	uint32_t filename, build_id; /* strings */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
	enum prof_map_kind kind;
	uint32_t pid;        /* process the mapping belongs to (0: kernel) */
	bool has_load_bias;  /* load_bias = runtime address - ELF virtual address */
	uint64_t load_bias;
};

struct prof_function {
	uint32_t name, system_name, filename; /* strings */
	int64_t start_line;
};

/* One per distinct frame and inline level: kept narrow (DWARF's lines and columns are 32-bit). */
struct prof_line {
	uint32_t function;
	uint32_t line, column; /* 0 when unknown */
};

/* One per distinct frame: fields ordered so that the struct has no padding but its tail. */
struct prof_location {
	uint64_t address;
	/*
	 * The ELF virtual address in the mapping's file that was (or would be)
	 * looked up: for callers the return address minus 1. Lets a later
	 * symbolizer resolve the frame by build-id alone.
	 */
	uint64_t elf_addr;
	uint32_t mapping;   /* PROF_NONE when unmapped */
	uint32_t first_line; /* index into lines; innermost first */
	uint32_t nr_lines;
	bool has_elf_addr;
};

/* A thread: one per (process, tid) seen in samples. */
struct prof_thread {
	uint32_t tid, pid;
	uint32_t name, process_name; /* strings */
	/*
	 * the input of a merged profile it came from (prof_merge), 0 in a
	 * single recording's: equal tids of two inputs are two threads
	 */
	uint32_t origin;
};

/*
 * A recorded event (perf attr): its samples' values are types[2 * i] (count)
 * and types[2 * i + 1] (period sum).
 */
struct prof_event_desc {
	uint32_t name;      /* event name without modifiers ("cycles", "sched:sched_switch") */
	uint32_t full_name; /* as recorded ("cycles:ppp") */
	bool clock;         /* a time-based event: periods are nanoseconds */
	bool tracepoint;
	bool offcpu;        /* not a perf event: off-CPU intervals (values in ns, events with a duration) */
	/*
	 * a tracepoint's decoded fields, the same for each of its events: names
	 * (strings) and whether numeric; an event's values are the labels at its
	 * label (prof_event.label - 1 in labels), in this order
	 */
	uint32_t nr_fields;
	uint32_t field_name[PROF_MAX_FIELDS];
	bool field_num[PROF_MAX_FIELDS];
	uint64_t period;    /* fixed period, or 0 */
	uint64_t frequency; /* sampling frequency in Hz, or 0 */
	uint64_t samples;
};

/* Facts about the recording (strings; 0 = unknown). */
struct prof_sysinfo {
	uint32_t hostname, os_release, arch, cpu_desc, cpuid, perf_version;
	uint32_t nr_cpus;
	uint64_t lost_samples;
	uint64_t first_time, last_time; /* sample clock of the first and last sample */
	bool wall_known;                /* time_nanos is a real wall clock */
};

struct prof_label {
	uint32_t key;  /* string */
	uint32_t str;  /* string, 0 for numeric labels */
	int64_t num;
	uint32_t unit; /* string, 0 = none */
};

struct prof_sample {
	uint32_t stack;       /* index into stacks */
	uint32_t first_label; /* into label pool */
	uint32_t nr_labels;
	uint32_t first_value; /* into value pool: one value per slot (prof_sample_value) */
};

struct prof_value_type {
	uint32_t type, unit; /* strings */
};

struct prof {
	struct strtab strs;
	struct prof_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	struct prof_function *functions;
	size_t nr_functions, cap_functions;
	struct prof_line *lines;
	size_t nr_lines, cap_lines;
	struct prof_location *locations;
	size_t nr_locations, cap_locations;
	uint32_t *stack_pool; /* stacks: [len, loc ids leaf first]... */
	size_t stack_pool_len, cap_stack_pool;
	uint32_t *stacks;     /* stack id -> offset in stack_pool */
	size_t nr_stacks, cap_stacks;
	uint8_t *stack_truncated; /* per stack: the recorder cut it at its depth limit */
	size_t cap_stack_truncated;
	struct prof_sample *samples;
	size_t nr_samples, cap_samples;
	struct prof_label *labels;
	size_t nr_labels, cap_labels;
	int64_t *values;
	size_t nr_values, cap_values;
	struct prof_value_type *types;
	size_t nr_types;
	/*
	 * A sample keeps a value for each type that may be non-zero
	 * (prof_set_value_types): type_slot[t] is its place among them,
	 * PROF_NONE for a type that is 0 in every sample. NULL: every type has
	 * a place (slot = type). A recording's side-band events (perf's dummy
	 * event) are never sampled, and their types were half of its values.
	 */
	uint32_t *type_slot;
	size_t nr_slots;
	uint32_t default_type;      /* index into types */
	struct prof_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	uint32_t *comments;
	size_t nr_comments;
	struct prof_thread *threads;
	size_t nr_threads, cap_threads;
	struct prof_event_desc *events_desc; /* nr_types / 2 of them */
	size_t nr_events_desc;
	uint32_t primary_event; /* the CPU-time event (index into events_desc); PROF_NONE: none */
	uint32_t offcpu_event;  /* the off-CPU intervals' description (PROF_EVENT_OFFCPU events); PROF_NONE: none */
	struct prof_sysinfo sys;
	uint32_t nr_merged; /* inputs merged into this profile (prof_merge); 0: one recording's own */
	/* every sample in recording order, for writers that keep them (JFR); may be NULL */
	struct prof_events *events;
	/* dedup indexes (builder only) */
	struct hidx func_idx, loc_idx, stack_idx, sample_idx;
	/* a builder's keys -> ids (prof_str_keyed, prof_function_keyed); PROF_NONE: not given yet */
	uint32_t *str_keys, *func_keys;
	size_t cap_str_keys, cap_func_keys;
	struct hmap labelset_idx; /* label sets already in the pool: samples share them */
};

void prof_init(struct prof *p);
void prof_release(struct prof *p);
uint32_t prof_str(struct prof *p, const char *s);
uint32_t prof_add_mapping(struct prof *p, const struct prof_mapping *m);
uint32_t prof_function(struct prof *p, uint32_t name, uint32_t system_name, uint32_t filename,
		       int64_t start_line);
/*
 * For a builder whose source numbers its strings and functions already:
 * keys, dense from 0, each always naming one string (one function). The
 * id of a key is kept on first use, so that what is seen again costs an
 * array read instead of a hash of its text. PROF_NONE as key: no key (the
 * same as prof_str, prof_function).
 */
uint32_t prof_str_keyed(struct prof *p, uint32_t key, const char *s);
uint32_t prof_function_keyed(struct prof *p, uint32_t key, uint32_t name, uint32_t system_name,
			     uint32_t filename, int64_t start_line);
/* The function prof_function_keyed gave key; PROF_NONE when none yet. */
static inline uint32_t prof_function_of_key(const struct prof *p, uint32_t key)
{
	return key < p->cap_func_keys ? p->func_keys[key] : PROF_NONE;
}
/*
 * The location of (mapping, address) with these lines, deduplicated by
 * (mapping, address): the first lines given for a pair are kept.
 */
uint32_t prof_location(struct prof *p, uint32_t mapping, uint64_t address,
		       const struct prof_line *lines, uint32_t nr_lines);
uint32_t prof_stack(struct prof *p, const uint32_t *locs, uint32_t n);
/*
 * The same without the lookup: always a new location, not indexed for later
 * prof_location calls. For a builder that already knows its locations are
 * distinct (the conversion interns frames itself): no hash table the size
 * of the profile. Two equal ones would only be two entries, which pprof and
 * JFR allow. (Such a builder's stacks come whole: prof_adopt_stacks.)
 */
uint32_t prof_location_append(struct prof *p, uint32_t mapping, uint64_t address,
			      const struct prof_line *lines, uint32_t nr_lines);
/* The same for stacks: always a new one, not indexed for later prof_stack calls. */
uint32_t prof_stack_append(struct prof *p, const uint32_t *locs, uint32_t n);
bool prof_stack_set_truncated(struct prof *p, uint32_t stack);
/*
 * Each inline level of every location a location of its own (the same
 * mapping and address, one line), in the stacks in their place (innermost
 * first): a profile as one that does not say which frames were inlined
 * into which (a JFR read back) has it, so that the two compare frame by
 * frame. The stack and location indexes of a builder are stale after.
 * false when out of memory (p unchanged but for locations added).
 */
bool prof_split_inlines(struct prof *p);
/*
 * Makes stacks a builder laid out as the model does the model's own, so
 * that the largest array of a profile is not copied: pool holds per stack
 * its length, then its location ids (leaf first); offs[i] is stack i's
 * place in pool; truncated (NULL: none) one byte per stack, 1 when the
 * recorder cut it. The arrays pass to the model (caps: elements allocated;
 * truncated has at least nr). Only into a model without stacks: false
 * otherwise, and nothing is taken.
 */
bool prof_adopt_stacks(struct prof *p, uint32_t *pool, size_t pool_len, size_t pool_cap,
		       uint32_t *offs, size_t nr, size_t offs_cap, uint8_t *truncated);
static inline bool prof_stack_truncated(const struct prof *p, uint32_t stack)
{
	return stack < p->cap_stack_truncated && p->stack_truncated[stack];
}
uint32_t prof_add_thread(struct prof *p, const struct prof_thread *t);
static inline const uint32_t *prof_stack_locs(const struct prof *p, uint32_t stack, uint32_t *n)
{
	const uint32_t *s = p->stack_pool + p->stacks[stack];

	*n = s[0];
	return s + 1;
}
/*
 * Sizes the arrays (and the samples' index) for what the caller knows is
 * coming (counts are upper bounds), so they are allocated once instead of
 * doubling: less memory at the peak, no copies and no rehashing. false when
 * out of memory.
 */
bool prof_reserve(struct prof *p, size_t locations, size_t stacks, size_t stack_frames,
		  size_t samples);

/*
 * Says which types may be non-zero (used: nr_types flags), before the first
 * sample; the others take no room in samples and read as 0. false when out
 * of memory or when samples exist (nothing changes).
 */
bool prof_set_value_types(struct prof *p, const bool *used);

/* Type t's place among a sample's values, PROF_NONE for a type set as never used. */
static inline uint32_t prof_type_slot(const struct prof *p, size_t t)
{
	return p->type_slot ? p->type_slot[t] : (uint32_t)t;
}

/* The number of values a sample keeps. */
static inline size_t prof_nr_slots(const struct prof *p)
{
	return p->type_slot ? p->nr_slots : p->nr_types;
}

/* A sample's value of type t (0 for a type set as never used). */
static inline int64_t prof_sample_value(const struct prof *p, const struct prof_sample *s, size_t t)
{
	uint32_t slot = prof_type_slot(p, t);

	return slot == PROF_NONE ? 0 : p->values[s->first_value + slot];
}

/*
 * Adds values (nr_types of them) to the sample of (stack, labels), creating
 * it. Samples with equal label lists share one copy of them in the pool.
 * false when out of memory, and when a value is not 0 for a type set as
 * never used (prof_set_value_types): nothing is added then.
 */
bool prof_add_sample(struct prof *p, uint32_t stack, const struct prof_label *labels,
		     uint32_t nr_labels, const int64_t *values);

/*
 * The same in two steps, for a caller that adds many samples with a few
 * label lists (a thread's): prof_label_set gives the list's place in the
 * pool (an equal earlier list's, else a new copy's; UINT32_MAX when out of
 * memory), and prof_add_sample_set adds values to the sample of (stack,
 * that list of nr_labels). Equal lists have one place, so the sample is
 * found by comparing places instead of labels.
 */
uint32_t prof_label_set(struct prof *p, const struct prof_label *labels, uint32_t nr_labels);
bool prof_add_sample_set(struct prof *p, uint32_t stack, uint32_t label_set, uint32_t nr_labels,
			 const int64_t *values);
bool prof_add_comment(struct prof *p, const char *s);

/*
 * The builder's setters: the model's fields set through these, so that
 * what each means (and which of them go together) is said once, here.
 */

/*
 * nr recorded events (descriptions zeroed) and their value types, two per
 * event (types 2i: its samples, 2i+1: their period sum), not yet named; no
 * primary or off-CPU event. Before any sample. false when out of memory
 * (nothing changes).
 */
bool prof_set_events(struct prof *p, size_t nr);
/* Value type t's name and unit (strings). */
void prof_set_value_type(struct prof *p, size_t t, uint32_t type, uint32_t unit);
/* Event i's description (copied). */
void prof_set_event(struct prof *p, size_t i, const struct prof_event_desc *d);
/* Event i's count of samples. */
void prof_set_event_samples(struct prof *p, size_t i, uint64_t samples);
/* A tracepoint event's decoded fields (at most PROF_MAX_FIELDS): names (strings), numeric or not. */
void prof_set_event_fields(struct prof *p, size_t i, const uint32_t *names, const bool *num, size_t n);
/* The CPU-time event, and the one of off-CPU intervals (PROF_NONE: none). */
void prof_set_primary_event(struct prof *p, uint32_t i);
void prof_set_offcpu_event(struct prof *p, uint32_t i);
/* The type shown by default and the sampling period (pprof's period_type: type t's). */
void prof_set_default_type(struct prof *p, uint32_t t, int64_t period);
/* Facts about the recording; its start (ns since the epoch, when known) and length. */
void prof_set_sysinfo(struct prof *p, const struct prof_sysinfo *sys);
void prof_set_time(struct prof *p, int64_t time_nanos, int64_t duration_nanos);
/*
 * Mapping m's load bias (runtime address - ELF virtual address), as the
 * first frame that knew it said: every frame of a mapping has the same.
 */
void prof_mapping_set_load_bias(struct prof *p, uint32_t m, uint64_t bias);
/* What the lines of a location in mapping m tell of it: functions, file names, line numbers, inlining. */
void prof_mapping_note_lines(struct prof *p, uint32_t m, const struct prof_line *lines, uint32_t n);
/* The ELF virtual address location loc was looked up at (prof_location.elf_addr). */
void prof_location_set_elf_addr(struct prof *p, uint32_t loc, uint64_t elf_addr);

#endif
