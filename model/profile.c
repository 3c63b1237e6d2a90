/*
 * Profile builder. Everything is deduplicated through hash indexes whose keys
 * are verified against the stored items, so equal inputs give equal ids in
 * first-seen order: the writers' output is deterministic.
 */
#include "model/profile.h"

#include "core/satadd.h"
#include "core/vec.h"
#include "model/events.h"

#include <stdlib.h>
#include <string.h>

void prof_init(struct prof *p)
{
	memset(p, 0, sizeof(*p));
	strtab_init(&p->strs);
	hidx_init(&p->func_idx);
	hidx_init(&p->loc_idx);
	hidx_init(&p->stack_idx);
	hidx_init(&p->sample_idx);
	hmap_init(&p->labelset_idx);
	p->offcpu_event = PROF_NONE;
}

void prof_release(struct prof *p)
{
	strtab_release(&p->strs);
	free(p->mappings);
	free(p->functions);
	free(p->lines);
	free(p->locations);
	free(p->stack_pool);
	free(p->stacks);
	free(p->samples);
	free(p->labels);
	free(p->values);
	free(p->types);
	free(p->type_slot);
	free(p->comments);
	free(p->stack_truncated);
	free(p->threads);
	free(p->events_desc);
	prof_events_free(p->events);
	free(p->str_keys);
	free(p->func_keys);
	hidx_release(&p->func_idx);
	hidx_release(&p->loc_idx);
	hidx_release(&p->stack_idx);
	hidx_release(&p->sample_idx);
	hmap_release(&p->labelset_idx);
	memset(p, 0, sizeof(*p));
}

uint32_t prof_str(struct prof *p, const char *s)
{
	uint32_t id = strtab_intern_cstr(&p->strs, s ? s : "");

	return id == STRTAB_NONE ? 0 : id;
}

/* Keeps id as key's in keys (grown, new room PROF_NONE); out of memory it is not kept. */
static void key_set(uint32_t **keys, size_t *cap, uint32_t key, uint32_t id)
{
	size_t old = *cap;

	if (key >= old) {
		if (!vec_reserve((void **)keys, cap, (size_t)key + 1, sizeof(**keys)))
			return;
		memset(*keys + old, 0xff, (*cap - old) * sizeof(**keys));
	}
	(*keys)[key] = id;
}

uint32_t prof_str_keyed(struct prof *p, uint32_t key, const char *s)
{
	uint32_t id;

	if (key < p->cap_str_keys && p->str_keys[key] != PROF_NONE)
		return p->str_keys[key];
	id = strtab_intern_cstr(&p->strs, s ? s : "");
	if (id == STRTAB_NONE)
		return 0; /* as prof_str; not kept, so asked again */
	if (key != PROF_NONE)
		key_set(&p->str_keys, &p->cap_str_keys, key, id);
	return id;
}

uint32_t prof_function_keyed(struct prof *p, uint32_t key, uint32_t name, uint32_t system_name,
			     uint32_t filename, int64_t start_line)
{
	uint32_t id = prof_function_of_key(p, key);

	if (id != PROF_NONE)
		return id;
	id = prof_function(p, name, system_name, filename, start_line);
	if (id != PROF_NONE && key != PROF_NONE)
		key_set(&p->func_keys, &p->cap_func_keys, key, id);
	return id;
}

uint32_t prof_add_mapping(struct prof *p, const struct prof_mapping *m)
{
	if (!vec_reserve((void **)&p->mappings, &p->cap_mappings, p->nr_mappings + 1, sizeof(*m)))
		return PROF_NONE;
	p->mappings[p->nr_mappings] = *m;
	return (uint32_t)p->nr_mappings++;
}

uint32_t prof_function(struct prof *p, uint32_t name, uint32_t system_name, uint32_t filename,
		       int64_t start_line)
{
	uint64_t h = hmap_mix(hmap_mix(hmap_mix(hmap_mix(1, name), system_name), filename), (uint64_t)start_line);
	struct hidx_iter it;
	struct prof_function *f;

	for (uint32_t v = hidx_first(&p->func_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&p->func_idx, &it)) {
		f = &p->functions[v];
		if (f->name == name && f->system_name == system_name && f->filename == filename &&
		    f->start_line == start_line)
			return v;
	}
	if (p->nr_functions >= PROF_NONE - 1 ||
	    !vec_reserve((void **)&p->functions, &p->cap_functions, p->nr_functions + 1, sizeof(*f)))
		return PROF_NONE;
	f = &p->functions[p->nr_functions];
	f->name = name;
	f->system_name = system_name;
	f->filename = filename;
	f->start_line = start_line;
	if (!hidx_add(&p->func_idx, h, (uint32_t)p->nr_functions))
		return PROF_NONE;
	return (uint32_t)p->nr_functions++;
}

static uint32_t location_new(struct prof *p, uint32_t mapping, uint64_t address,
			     const struct prof_line *lines, uint32_t nr_lines)
{
	struct prof_location *l;

	if (!vec_reserve((void **)&p->locations, &p->cap_locations, p->nr_locations + 1, sizeof(*l)) ||
	    !vec_reserve((void **)&p->lines, &p->cap_lines, p->nr_lines + nr_lines, sizeof(*lines)))
		return PROF_NONE;
	l = &p->locations[p->nr_locations];
	l->mapping = mapping;
	l->address = address;
	l->first_line = (uint32_t)p->nr_lines;
	l->nr_lines = nr_lines;
	l->has_elf_addr = false;
	l->elf_addr = 0;
	if (nr_lines)
		memcpy(p->lines + p->nr_lines, lines, nr_lines * sizeof(*lines));
	p->nr_lines += nr_lines;
	return (uint32_t)p->nr_locations++;
}

uint32_t prof_location(struct prof *p, uint32_t mapping, uint64_t address,
		       const struct prof_line *lines, uint32_t nr_lines)
{
	uint64_t h = hmap_mix(hmap_mix(2, mapping), address);
	struct hidx_iter it;
	uint32_t id;

	for (uint32_t v = hidx_first(&p->loc_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&p->loc_idx, &it)) {
		const struct prof_location *l = &p->locations[v];

		if (l->mapping == mapping && l->address == address)
			return v;
	}
	id = location_new(p, mapping, address, lines, nr_lines);
	if (id != PROF_NONE && !hidx_add(&p->loc_idx, h, id))
		return PROF_NONE;
	return id;
}

uint32_t prof_location_append(struct prof *p, uint32_t mapping, uint64_t address,
			      const struct prof_line *lines, uint32_t nr_lines)
{
	return location_new(p, mapping, address, lines, nr_lines);
}

static uint32_t stack_new(struct prof *p, const uint32_t *locs, uint32_t n)
{
	if (!vec_reserve((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks)) ||
	    !vec_reserve((void **)&p->stack_pool, &p->cap_stack_pool, p->stack_pool_len + n + 1,
			 sizeof(*p->stack_pool)))
		return PROF_NONE;
	p->stacks[p->nr_stacks] = (uint32_t)p->stack_pool_len;
	p->stack_pool[p->stack_pool_len] = n;
	if (n)
		memcpy(p->stack_pool + p->stack_pool_len + 1, locs, n * sizeof(*locs));
	p->stack_pool_len += n + 1;
	return (uint32_t)p->nr_stacks++;
}

uint32_t prof_stack(struct prof *p, const uint32_t *locs, uint32_t n)
{
	uint64_t h = 3;
	struct hidx_iter it;
	uint32_t id;

	for (uint32_t i = 0; i < n; i++)
		h = hmap_mix(h, locs[i]);
	for (uint32_t v = hidx_first(&p->stack_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&p->stack_idx, &it)) {
		const uint32_t *s = p->stack_pool + p->stacks[v];

		if (s[0] == n && (!n || !memcmp(s + 1, locs, n * sizeof(*locs))))
			return v;
	}
	id = stack_new(p, locs, n);
	if (id != PROF_NONE && !hidx_add(&p->stack_idx, h, id))
		return PROF_NONE;
	return id;
}

uint32_t prof_stack_append(struct prof *p, const uint32_t *locs, uint32_t n)
{
	return stack_new(p, locs, n);
}

bool prof_split_inlines(struct prof *p)
{
	size_t nl = p->nr_locations, pool_len = 0;
	uint32_t *first = malloc((nl ? nl : 1) * sizeof(*first)), *pool;

	if (!first)
		return false;
	/* each location's levels: itself for its innermost, new ones for the rest, in order */
	for (size_t l = 0; l < nl; l++) {
		struct prof_location loc = p->locations[l];

		first[l] = (uint32_t)l;
		for (uint32_t i = 1; i < loc.nr_lines; i++) {
			struct prof_line ln = p->lines[loc.first_line + i];
			uint32_t id = location_new(p, loc.mapping, loc.address, &ln, 1);

			if (id == PROF_NONE) {
				free(first);
				return false;
			}
			if (i == 1)
				first[l] = id;
		}
	}
	for (size_t s = 0; s < p->nr_stacks; s++) {
		uint32_t n;
		const uint32_t *locs = prof_stack_locs(p, (uint32_t)s, &n);

		pool_len += 1 + n;
		for (uint32_t i = 0; i < n; i++)
			pool_len += p->locations[locs[i]].nr_lines > 1 ? p->locations[locs[i]].nr_lines - 1 : 0;
	}
	pool = malloc((pool_len ? pool_len : 1) * sizeof(*pool));
	if (!pool) {
		free(first);
		return false;
	}
	pool_len = 0;
	for (size_t s = 0; s < p->nr_stacks; s++) {
		uint32_t n, at = (uint32_t)pool_len;
		const uint32_t *locs = prof_stack_locs(p, (uint32_t)s, &n);

		pool_len++;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t k = p->locations[locs[i]].nr_lines;

			pool[pool_len++] = locs[i];
			for (uint32_t j = 1; j < k; j++)
				pool[pool_len++] = first[locs[i]] + j - 1;
		}
		pool[at] = (uint32_t)pool_len - at - 1;
		p->stacks[s] = at;
	}
	for (size_t l = 0; l < nl; l++)
		if (p->locations[l].nr_lines > 1)
			p->locations[l].nr_lines = 1;
	free(p->stack_pool);
	p->stack_pool = pool;
	p->cap_stack_pool = pool_len ? pool_len : 1;
	p->stack_pool_len = pool_len;
	free(first);
	return true;
}

/* Where the label list lives in the pool: an equal earlier list, else a new copy; UINT32_MAX when out of memory. */
uint32_t prof_label_set(struct prof *p, const struct prof_label *labels, uint32_t n)
{
	uint64_t h = hmap_mix(6, n), *v;
	uint32_t at;

	for (uint32_t i = 0; i < n; i++)
		h = hmap_mix(hmap_mix(hmap_mix(hmap_mix(h, labels[i].key), labels[i].str), (uint64_t)labels[i].num),
			labels[i].unit);
	for (v = hmap_get(&p->labelset_idx, h); v; v = hmap_get(&p->labelset_idx, ++h)) {
		uint32_t first = (uint32_t)*v, k = (uint32_t)(*v >> 32);
		bool same = k == n;

		for (uint32_t i = 0; same && i < n; i++) {
			const struct prof_label *a = &p->labels[first + i], *b = &labels[i];

			same = a->key == b->key && a->str == b->str && a->num == b->num &&
			       a->unit == b->unit;
		}
		if (same)
			return first;
	}
	if (p->nr_labels + n >= UINT32_MAX ||
	    !vec_reserve((void **)&p->labels, &p->cap_labels, p->nr_labels + n, sizeof(*labels)))
		return UINT32_MAX;
	at = (uint32_t)p->nr_labels;
	if (n)
		memcpy(p->labels + p->nr_labels, labels, n * sizeof(*labels));
	p->nr_labels += n;
	if (!hmap_put(&p->labelset_idx, h, (uint64_t)n << 32 | at))
		return UINT32_MAX;
	return at;
}

bool prof_reserve(struct prof *p, size_t locations, size_t stacks, size_t stack_frames,
		  size_t samples)
{
	return vec_reserve_exact((void **)&p->locations, &p->cap_locations, p->nr_locations + locations,
			   sizeof(*p->locations)) &&
	       vec_reserve_exact((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + stacks,
			   sizeof(*p->stacks)) &&
	       vec_reserve_exact((void **)&p->stack_pool, &p->cap_stack_pool,
			   p->stack_pool_len + stack_frames + stacks, sizeof(*p->stack_pool)) &&
	       vec_reserve_exact((void **)&p->samples, &p->cap_samples, p->nr_samples + samples,
			   sizeof(*p->samples)) &&
	       vec_reserve_exact((void **)&p->values, &p->cap_values,
			   p->nr_values + samples * prof_nr_slots(p), sizeof(*p->values)) &&
	       hidx_reserve(&p->sample_idx, p->nr_samples + samples);
}

bool prof_set_value_types(struct prof *p, const bool *used)
{
	uint32_t *slot;
	size_t n = 0;

	if (p->nr_samples)
		return false;
	slot = malloc((p->nr_types ? p->nr_types : 1) * sizeof(*slot));
	if (!slot)
		return false;
	for (size_t t = 0; t < p->nr_types; t++)
		slot[t] = used[t] ? (uint32_t)n++ : PROF_NONE;
	free(p->type_slot);
	p->type_slot = slot;
	p->nr_slots = n;
	return true;
}

/* Whether every type without a slot has 0 in values (nr_types of them). */
static bool values_fit(const struct prof *p, const int64_t *values)
{
	for (size_t t = 0; p->type_slot && t < p->nr_types; t++)
		if (p->type_slot[t] == PROF_NONE && values[t])
			return false;
	return true;
}

/* values (nr_types) added into a sample's slots at v */
static void add_values(const struct prof *p, const int64_t *values, int64_t *v)
{
	for (size_t t = 0; t < p->nr_types; t++) {
		uint32_t slot = prof_type_slot(p, t);

		if (slot != PROF_NONE)
			v[slot] = satadd_i64(v[slot], values[t]);
	}
}

bool prof_add_sample_set(struct prof *p, uint32_t stack, uint32_t label_set, uint32_t nr_labels,
			 const int64_t *values)
{
	uint64_t h = hmap_mix(hmap_mix(hmap_mix(4, stack), label_set), nr_labels);
	struct hidx_iter it;
	struct prof_sample *s;
	size_t ns = prof_nr_slots(p);

	/* checked first: a refused value leaves the profile as it was */
	if (!values_fit(p, values))
		return false;
	for (uint32_t v = hidx_first(&p->sample_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&p->sample_idx, &it)) {
		s = &p->samples[v];
		if (s->stack == stack && s->first_label == label_set && s->nr_labels == nr_labels) {
			add_values(p, values, p->values + s->first_value);
			return true;
		}
	}
	if (p->nr_samples >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&p->samples, &p->cap_samples, p->nr_samples + 1, sizeof(*s)) ||
	    !vec_reserve((void **)&p->values, &p->cap_values, p->nr_values + ns, sizeof(*values)))
		return false;
	/* indexed first: a failure leaves the profile as it was */
	if (!hidx_add(&p->sample_idx, h, (uint32_t)p->nr_samples))
		return false;
	s = &p->samples[p->nr_samples];
	s->stack = stack;
	s->first_label = label_set;
	s->nr_labels = nr_labels;
	s->first_value = (uint32_t)p->nr_values;
	if (ns) { /* a recording without events has no values (and maybe no array) */
		memset(p->values + p->nr_values, 0, ns * sizeof(*p->values));
		add_values(p, values, p->values + p->nr_values);
	}
	p->nr_values += ns;
	p->nr_samples++;
	return true;
}

bool prof_add_sample(struct prof *p, uint32_t stack, const struct prof_label *labels,
		     uint32_t nr_labels, const int64_t *values)
{
	uint32_t ls = prof_label_set(p, labels, nr_labels);

	return ls != UINT32_MAX && prof_add_sample_set(p, stack, ls, nr_labels, values);
}

bool prof_add_comment(struct prof *p, const char *s)
{
	uint32_t *nc = realloc(p->comments, (p->nr_comments + 1) * sizeof(*nc));

	if (!nc)
		return false;
	p->comments = nc;
	p->comments[p->nr_comments++] = prof_str(p, s);
	return true;
}

bool prof_stack_set_truncated(struct prof *p, uint32_t stack)
{
	size_t old = p->cap_stack_truncated;

	if (stack >= p->nr_stacks)
		return false;
	if (!vec_reserve((void **)&p->stack_truncated, &p->cap_stack_truncated, p->nr_stacks, 1))
		return false;
	memset(p->stack_truncated + old, 0, p->cap_stack_truncated - old);
	p->stack_truncated[stack] = 1;
	return true;
}

bool prof_adopt_stacks(struct prof *p, uint32_t *pool, size_t pool_len, size_t pool_cap,
		       uint32_t *offs, size_t nr, size_t offs_cap, uint8_t *truncated)
{
	if (p->nr_stacks || p->stack_pool || p->stacks || p->stack_truncated)
		return false;
	p->stack_pool = pool;
	p->stack_pool_len = pool_len;
	p->cap_stack_pool = pool_cap;
	p->stacks = offs;
	p->nr_stacks = nr;
	p->cap_stacks = offs_cap;
	p->stack_truncated = truncated;
	/* the flags past nr are not the builder's to vouch for: prof_stack_set_truncated clears them when it grows */
	p->cap_stack_truncated = truncated ? nr : 0;
	return true;
}

uint32_t prof_add_thread(struct prof *p, const struct prof_thread *t)
{
	if (!vec_reserve((void **)&p->threads, &p->cap_threads, p->nr_threads + 1, sizeof(*t)))
		return PROF_NONE;
	p->threads[p->nr_threads] = *t;
	return (uint32_t)p->nr_threads++;
}

bool prof_set_events(struct prof *p, size_t nr)
{
	struct prof_value_type *types;
	struct prof_event_desc *desc;

	if (nr > SIZE_MAX / 2 / sizeof(*types) || p->nr_samples)
		return false;
	types = calloc(nr ? 2 * nr : 1, sizeof(*types));
	desc = calloc(nr ? nr : 1, sizeof(*desc));
	if (!types || !desc) {
		free(types);
		free(desc);
		return false;
	}
	free(p->types);
	free(p->events_desc);
	p->types = types;
	p->nr_types = 2 * nr;
	p->events_desc = desc;
	p->nr_events_desc = nr;
	p->primary_event = PROF_NONE;
	p->offcpu_event = PROF_NONE;
	return true;
}

void prof_set_value_type(struct prof *p, size_t t, uint32_t type, uint32_t unit)
{
	p->types[t].type = type;
	p->types[t].unit = unit;
}

void prof_set_event(struct prof *p, size_t i, const struct prof_event_desc *d)
{
	p->events_desc[i] = *d;
}

void prof_set_event_samples(struct prof *p, size_t i, uint64_t samples)
{
	p->events_desc[i].samples = samples;
}

void prof_set_event_fields(struct prof *p, size_t i, const uint32_t *names, const bool *num, size_t n)
{
	struct prof_event_desc *e = &p->events_desc[i];

	if (n > PROF_MAX_FIELDS)
		n = PROF_MAX_FIELDS;
	for (size_t f = 0; f < n; f++) {
		e->field_name[f] = names[f];
		e->field_num[f] = num[f];
	}
	e->nr_fields = (uint32_t)n;
}

void prof_set_primary_event(struct prof *p, uint32_t i)
{
	p->primary_event = i;
}

void prof_set_offcpu_event(struct prof *p, uint32_t i)
{
	p->offcpu_event = i;
}

void prof_set_default_type(struct prof *p, uint32_t t, int64_t period)
{
	p->default_type = t;
	p->period_type = p->types[t];
	p->period = period;
}

void prof_set_sysinfo(struct prof *p, const struct prof_sysinfo *sys)
{
	p->sys = *sys;
}

void prof_set_time(struct prof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void prof_mapping_set_load_bias(struct prof *p, uint32_t m, uint64_t bias)
{
	if (p->mappings[m].has_load_bias)
		return;
	p->mappings[m].has_load_bias = true;
	p->mappings[m].load_bias = bias;
}

void prof_mapping_note_lines(struct prof *p, uint32_t m, const struct prof_line *lines, uint32_t n)
{
	struct prof_mapping *pm = &p->mappings[m];

	if (!n)
		return;
	pm->has_functions = true;
	if (lines[0].line)
		pm->has_line_numbers = true;
	for (uint32_t i = 0; i < n; i++)
		if (p->functions[lines[i].function].filename)
			pm->has_filenames = true;
	if (n > 1)
		pm->has_inline_frames = true;
}

void prof_location_set_elf_addr(struct prof *p, uint32_t loc, uint64_t elf_addr)
{
	p->locations[loc].has_elf_addr = true;
	p->locations[loc].elf_addr = elf_addr;
}
