/*
 * The neutral profile between the pipeline and the writers: interned
 * strings, mappings, functions, locations (with their inline lines),
 * deduplicated stacks and aggregated samples. No perf.data or output-format
 * concepts. The pipeline builds it; writers read it (const) once finished.
 * Ids are dense indexes; writers map them to their own (pprof: id + 1).
 */
#ifndef CONV_MODEL_PROFILE_H
#define CONV_MODEL_PROFILE_H

#include "core/hmap.h"
#include "core/strtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_NONE UINT32_MAX

struct prof_mapping {
	uint64_t start, limit, offset;
	uint32_t filename, build_id; /* strings */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct prof_function {
	uint32_t name, system_name, filename; /* strings */
	int64_t start_line;
};

struct prof_line {
	uint32_t function;
	int64_t line, column;
};

struct prof_location {
	uint32_t mapping;   /* PROF_NONE when unmapped */
	uint64_t address;
	uint32_t first_line; /* index into lines; innermost first */
	uint32_t nr_lines;
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
	uint32_t first_value; /* into value pool: nr_types values */
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
	struct prof_sample *samples;
	size_t nr_samples, cap_samples;
	struct prof_label *labels;
	size_t nr_labels, cap_labels;
	int64_t *values;
	size_t nr_values, cap_values;
	struct prof_value_type *types;
	size_t nr_types;
	uint32_t default_type;      /* index into types */
	struct prof_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	uint32_t *comments;
	size_t nr_comments;
	/* dedup indexes (builder only) */
	struct hmap func_idx, loc_idx, stack_idx, sample_idx;
};

void prof_init(struct prof *p);
void prof_release(struct prof *p);
uint32_t prof_str(struct prof *p, const char *s);
uint32_t prof_add_mapping(struct prof *p, const struct prof_mapping *m);
uint32_t prof_function(struct prof *p, uint32_t name, uint32_t system_name, uint32_t filename,
		       int64_t start_line);
/*
 * The location of (mapping, address) with these lines, deduplicated by
 * (mapping, address): the first lines given for a pair are kept.
 */
uint32_t prof_location(struct prof *p, uint32_t mapping, uint64_t address,
		       const struct prof_line *lines, uint32_t nr_lines);
uint32_t prof_stack(struct prof *p, const uint32_t *locs, uint32_t n);
static inline const uint32_t *prof_stack_locs(const struct prof *p, uint32_t stack, uint32_t *n)
{
	const uint32_t *s = p->stack_pool + p->stacks[stack];

	*n = s[0];
	return s + 1;
}
/* Adds values (nr_types of them) to the sample of (stack, labels), creating it. */
bool prof_add_sample(struct prof *p, uint32_t stack, const struct prof_label *labels,
		     uint32_t nr_labels, const int64_t *values);
bool prof_add_comment(struct prof *p, const char *s);

#endif
