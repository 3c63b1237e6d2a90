/* A pprof profile read back into the profile model (see ppload.h). */
#include "pipeline/ppload.h"

#include "pprofedit/pprofedit.h"

#include "core/cursor.h"
#include "core/hmap.h"
#include "core/pprofpb.h"
#include "core/vec.h"
#include "model/profile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Profile fields read here (the tables are ppe_parse's). */
enum {
	F_SAMPLE_TYPE = 1,
	F_SAMPLE = 2,
	F_TIME = 9,
	F_DURATION = 10,
	F_PERIOD_TYPE = 11,
	F_PERIOD = 12,
	F_COMMENT = 13,
};

/* Addresses from here up are the kernel's (x86-64's and arm64's upper half). */
#define KERNEL_HALF 0x8000000000000000ull

struct ppload {
	const struct ppe_profile *pp;
	struct prof *p;
	struct conv_diag *diag;
	uint32_t *sid;                         /* pprof string index -> model string */
	struct hmap map_ids, func_ids, loc_ids; /* pprof id -> model index */
	uint32_t *type_s, *unit_s;             /* sample types, as model strings */
	size_t nr_types, cap_types;
	uint32_t period_type, period_unit;     /* model strings (0: none) */
	int64_t period, time_nanos, duration_nanos;
	/* one sample's parts, reused */
	uint64_t *ids; /* its location ids */
	size_t nr_ids, cap_ids;
	uint32_t *stack; /* their model locations */
	size_t cap_stack;
	uint64_t *vals;
	size_t nr_vals, cap_vals;
	struct prof_label *labels;
	size_t nr_labels, cap_labels;
	struct prof_line *lines;
	size_t cap_lines;
	uint64_t *event_samples; /* per event: its samples (the first type's values summed) */
};

static enum conv_err nomem(struct ppload *l)
{
	return conv_fail(l->diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
}

/* The model string of pprof string index idx; false (said) when the table has none. */
static bool str_of(struct ppload *l, uint64_t idx, uint64_t off, const char *what, uint32_t *out)
{
	if (idx >= l->pp->nr_strs) {
		conv_fail(l->diag, CONV_E_FORMAT, off, "%s names string %" PRIu64 " of %zu", what, idx,
			  l->pp->nr_strs);
		return false;
	}
	*out = l->sid[idx];
	return true;
}

static enum conv_err load_strings(struct ppload *l)
{
	l->sid = malloc((l->pp->nr_strs ? l->pp->nr_strs : 1) * sizeof(*l->sid));
	if (!l->sid)
		return nomem(l);
	for (size_t i = 0; i < l->pp->nr_strs; i++) {
		size_t len;
		const uint8_t *s = ppe_str_bytes(l->pp, i, &len);
		uint32_t id = strtab_intern(&l->p->strs, (const char *)s, len);

		if (id == STRTAB_NONE)
			return nomem(l);
		l->sid[i] = id;
	}
	return CONV_E_OK;
}

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* What a mapping holds, from what pprof keeps of it (see ppload.h). */
static enum prof_map_kind map_kind(const char *name, uint64_t start, bool has_functions)
{
	if (!strcmp(name, "[vdso]") || !strcmp(name, "[vsyscall]") || prefix(name, "bpf_prog"))
		return PROF_MAP_OTHER;
	if (prefix(name, "[kernel") || start >= KERNEL_HALF)
		return PROF_MAP_KERNEL;
	if (prefix(name, "//anon") || prefix(name, "[anon") || prefix(name, "/memfd:"))
		return has_functions ? PROF_MAP_JIT : PROF_MAP_OTHER;
	if (!*name || name[0] == '[')
		return PROF_MAP_OTHER;
	return PROF_MAP_FILE;
}

static enum conv_err load_mappings(struct ppload *l)
{
	for (size_t i = 0; i < l->pp->nr_mappings; i++) {
		const struct ppe_mapping *m = &l->pp->mappings[i];
		struct prof_mapping pm;
		uint32_t id;

		memset(&pm, 0, sizeof(pm));
		if (!str_of(l, m->filename, UINT64_MAX, "a mapping", &pm.filename) ||
		    !str_of(l, m->build_id, UINT64_MAX, "a mapping", &pm.build_id))
			return CONV_E_FORMAT;
		if (!m->id || hmap_get(&l->map_ids, m->id))
			return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX, "mapping id %" PRIu64 " %s", m->id,
					 m->id ? "given twice" : "is 0");
		pm.start = m->start;
		pm.limit = m->limit;
		pm.offset = m->offset;
		pm.has_functions = m->has_functions;
		pm.has_filenames = m->has_filenames;
		pm.has_line_numbers = m->has_line_numbers;
		pm.has_inline_frames = m->has_inline_frames;
		pm.kind = map_kind(strtab_get(&l->p->strs, pm.filename), m->start, m->has_functions);
		id = prof_add_mapping(l->p, &pm);
		if (id == PROF_NONE || !hmap_put(&l->map_ids, m->id, id))
			return nomem(l);
	}
	return CONV_E_OK;
}

static enum conv_err load_functions(struct ppload *l)
{
	for (size_t i = 0; i < l->pp->nr_functions; i++) {
		const struct ppe_function *f = &l->pp->functions[i];
		uint32_t name, sys, file, id;

		if (!str_of(l, f->name, UINT64_MAX, "a function", &name) ||
		    !str_of(l, f->system_name, UINT64_MAX, "a function", &sys) ||
		    !str_of(l, f->filename, UINT64_MAX, "a function", &file))
			return CONV_E_FORMAT;
		if (!f->id || hmap_get(&l->func_ids, f->id))
			return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX, "function id %" PRIu64 " %s", f->id,
					 f->id ? "given twice" : "is 0");
		id = prof_function(l->p, name, sys, file, f->start_line);
		if (id == PROF_NONE || !hmap_put(&l->func_ids, f->id, id))
			return nomem(l);
	}
	return CONV_E_OK;
}

/* A line or column as the model keeps it (32 bits, 0 unknown). */
static uint32_t narrow(int64_t v)
{
	return v <= 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static enum conv_err load_locations(struct ppload *l)
{
	for (size_t i = 0; i < l->pp->nr_locations; i++) {
		const struct ppe_location *loc = &l->pp->locations[i];
		uint32_t mapping = PROF_NONE, id;
		uint64_t *v;

		if (loc->mapping_id) {
			if (!(v = hmap_get(&l->map_ids, loc->mapping_id)))
				return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX,
						 "location %" PRIu64 " is in mapping %" PRIu64
						 ", which the profile does not have",
						 loc->id, loc->mapping_id);
			mapping = (uint32_t)*v;
		}
		if (!vec_reserve((void **)&l->lines, &l->cap_lines, loc->nr_lines ? loc->nr_lines : 1,
				 sizeof(*l->lines)))
			return nomem(l);
		for (uint32_t k = 0; k < loc->nr_lines; k++) {
			const struct ppe_line *ln = &l->pp->lines[loc->first_line + k];

			if (!(v = hmap_get(&l->func_ids, ln->function_id)))
				return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX,
						 "location %" PRIu64 " names function %" PRIu64
						 ", which the profile does not have",
						 loc->id, ln->function_id);
			l->lines[k].function = (uint32_t)*v;
			l->lines[k].line = narrow(ln->line);
			l->lines[k].column = narrow(ln->column);
		}
		if (!loc->id || hmap_get(&l->loc_ids, loc->id))
			return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX, "location id %" PRIu64 " %s", loc->id,
					 loc->id ? "given twice" : "is 0");
		id = prof_location_append(l->p, mapping, loc->address, l->lines, loc->nr_lines);
		if (id == PROF_NONE || !hmap_put(&l->loc_ids, loc->id, id))
			return nomem(l);
	}
	return CONV_E_OK;
}

/* A ValueType message: its type and unit as model strings. */
static bool value_type(struct ppload *l, struct cur c, uint64_t off, uint32_t *type, uint32_t *unit)
{
	uint32_t n;
	unsigned wt;
	uint64_t v;
	struct cur sub;

	*type = *unit = 0;
	while (ppe_sub_next(&c, &n, &wt, &v, &sub))
		if (wt == PPROF_WT_VARINT && (n == 1 || n == 2) &&
		    !str_of(l, v, off, "a sample type", n == 1 ? type : unit))
			return false;
	if (!cur_ok(&c)) {
		conv_fail(l->diag, CONV_E_FORMAT, off, "a malformed sample type");
		return false;
	}
	return true;
}

/* A top-level field's wire type, and in *v the value of a varint one. */
static unsigned field_wire(const struct ppload *l, const struct ppe_field *f, uint64_t *v)
{
	struct cur c;
	unsigned wt;

	cur_init(&c, l->pp->buf + f->off, f->len, false);
	wt = (unsigned)(cur_uleb128_long(&c) & 7);
	*v = wt == PPROF_WT_VARINT ? cur_uleb128_long(&c) : 0;
	return wt;
}

/*
 * Appends one varint (wt VARINT: v), or a packed run of them (wt LEN: in c),
 * to a list (*n of *cap): a sample's ids or values, the comments. Errors
 * (said, at off): CONV_E_NOMEM, CONV_E_FORMAT (a run that ends inside a
 * varint).
 */
static enum conv_err take_varints(struct ppload *l, uint64_t off, struct cur *c, unsigned wt, uint64_t v,
				  uint64_t **arr, size_t *n, size_t *cap)
{
	bool more = wt == PPROF_WT_VARINT;

	while (more || (wt == PPROF_WT_LEN && cur_remaining(c))) {
		if (!more)
			v = cur_uleb128_long(c);
		more = false;
		if (wt == PPROF_WT_LEN && !cur_ok(c))
			return conv_fail(l->diag, CONV_E_FORMAT, off, "a packed list ends inside a varint");
		if (!vec_reserve((void **)arr, cap, *n + 1, sizeof(**arr)))
			return nomem(l);
		(*arr)[(*n)++] = v;
	}
	return CONV_E_OK;
}

/* The profile's fields other than samples and tables: types, period, times, comments. */
static enum conv_err load_header(struct ppload *l)
{
	struct ppe_field f;
	size_t pos = 0;

	while (ppe_field_next(l->pp, &pos, &f)) {
		struct cur c;
		uint64_t v;
		unsigned wt = field_wire(l, &f, &v);

		cur_init(&c, l->pp->buf + f.val_off, f.val_len, false);
		if ((f.number == F_SAMPLE_TYPE || f.number == F_PERIOD_TYPE) && wt != PPROF_WT_LEN)
			return conv_fail(l->diag, CONV_E_FORMAT, f.off, "field %u is not a message", f.number);
		switch (f.number) {
		case F_SAMPLE_TYPE: {
			uint32_t *u;

			if (!vec_reserve((void **)&l->type_s, &l->cap_types, l->nr_types + 1, sizeof(*l->type_s)))
				return nomem(l);
			if (!(u = realloc(l->unit_s, l->cap_types * sizeof(*l->unit_s))))
				return nomem(l);
			l->unit_s = u;
			if (!value_type(l, c, f.off, &l->type_s[l->nr_types], &l->unit_s[l->nr_types]))
				return CONV_E_FORMAT;
			l->nr_types++;
			break;
		}
		case F_PERIOD_TYPE:
			if (!value_type(l, c, f.off, &l->period_type, &l->period_unit))
				return CONV_E_FORMAT;
			break;
		case F_PERIOD:
			l->period = (int64_t)v;
			break;
		case F_TIME:
			l->time_nanos = (int64_t)v;
			break;
		case F_DURATION:
			l->duration_nanos = (int64_t)v;
			break;
		case F_COMMENT: {
			/* packed (conv, Go) or one varint per field */
			enum conv_err err;
			uint32_t id;

			l->nr_ids = 0;
			err = take_varints(l, f.off, &c, wt, v, &l->ids, &l->nr_ids, &l->cap_ids);
			if (err)
				return err;
			for (size_t i = 0; i < l->nr_ids; i++) {
				if (!str_of(l, l->ids[i], f.off, "a comment", &id))
					return CONV_E_FORMAT;
				if (!prof_add_comment(l->p, strtab_get(&l->p->strs, id)))
					return nomem(l);
			}
			break;
		}
		default:
			break;
		}
	}
	return CONV_E_OK;
}

static const char *model_str(const struct ppload *l, uint32_t id)
{
	return strtab_get(&l->p->strs, id);
}

/* The CPU-time event, as tomodel_cpu_event picks it from the names pprof keeps; PROF_NONE: none. */
static uint32_t cpu_event(const struct ppload *l)
{
	static const char *const clocks[] = { "cpu-clock", "task-clock" }, *const cycles[] = { "cycles", "ref-cycles" };

	for (size_t i = 0; i < l->nr_types / 2; i++)
		for (size_t k = 0; k < 2; k++)
			if (!strcmp(model_str(l, l->type_s[2 * i + 1]), clocks[k]))
				return (uint32_t)i;
	for (size_t i = 0; i < l->nr_types / 2; i++)
		for (size_t k = 0; k < 2; k++)
			if (!strcmp(model_str(l, l->type_s[2 * i + 1]), cycles[k]))
				return (uint32_t)i;
	return PROF_NONE;
}

/* The events of the sample types, two types each; the default type and period. */
static enum conv_err load_events(struct ppload *l)
{
	uint32_t def = 1;

	if (!l->nr_types || l->nr_types % 2)
		return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX,
				 "%zu sample types: conv diff reads a profile's types in pairs, an event's samples "
				 "and their sum (as conv writes them)",
				 l->nr_types);
	if (!prof_set_events(l->p, l->nr_types / 2))
		return nomem(l);
	for (size_t t = 0; t < l->nr_types; t++)
		prof_set_value_type(l->p, t, l->type_s[t], l->unit_s[t]);
	for (size_t i = 0; i < l->nr_types / 2; i++) {
		struct prof_event_desc d;
		uint32_t name = l->type_s[2 * i + 1];
		bool off = !strcmp(model_str(l, name), "off_cpu");

		memset(&d, 0, sizeof(d));
		d.name = d.full_name = off ? prof_str(l->p, "off-cpu") : name;
		d.clock = !strcmp(model_str(l, l->unit_s[2 * i + 1]), "nanoseconds");
		d.offcpu = off;
		d.tracepoint = strchr(model_str(l, name), ':') != NULL;
		if (l->period_type == name && l->period_unit == l->unit_s[2 * i + 1]) {
			def = (uint32_t)(2 * i + 1);
			d.period = l->period > 0 ? (uint64_t)l->period : 0;
		}
		prof_set_event(l->p, i, &d);
		if (off)
			prof_set_offcpu_event(l->p, (uint32_t)i);
	}
	prof_set_primary_event(l->p, cpu_event(l));
	prof_set_default_type(l->p, def, l->period);
	l->event_samples = calloc(l->nr_types / 2, sizeof(*l->event_samples));
	return l->event_samples ? CONV_E_OK : nomem(l);
}

/* A Label message into l->labels. Errors (said): CONV_E_FORMAT, CONV_E_NOMEM. */
static enum conv_err take_label(struct ppload *l, struct cur c, uint64_t off)
{
	struct prof_label lb;
	uint32_t n;
	unsigned wt;
	uint64_t v;
	struct cur sub;

	memset(&lb, 0, sizeof(lb));
	while (ppe_sub_next(&c, &n, &wt, &v, &sub)) {
		if (wt != PPROF_WT_VARINT)
			continue;
		if ((n == 1 && !str_of(l, v, off, "a label", &lb.key)) ||
		    (n == 2 && !str_of(l, v, off, "a label", &lb.str)) ||
		    (n == 4 && !str_of(l, v, off, "a label", &lb.unit)))
			return CONV_E_FORMAT;
		if (n == 3)
			lb.num = (int64_t)v;
	}
	if (!cur_ok(&c))
		return conv_fail(l->diag, CONV_E_FORMAT, off, "a sample's label is malformed");
	if (!vec_reserve((void **)&l->labels, &l->cap_labels, l->nr_labels + 1, sizeof(*l->labels)))
		return nomem(l);
	l->labels[l->nr_labels++] = lb;
	return CONV_E_OK;
}

/* One Sample message, added to the model. */
static enum conv_err load_sample(struct ppload *l, struct cur c, uint64_t off)
{
	uint32_t n, stack;
	unsigned wt;
	uint64_t v;
	struct cur sub;
	enum conv_err err = CONV_E_OK;

	l->nr_ids = l->nr_vals = l->nr_labels = 0;
	while (!err && ppe_sub_next(&c, &n, &wt, &v, &sub)) {
		if (n == 1 && (wt == PPROF_WT_VARINT || wt == PPROF_WT_LEN))
			err = take_varints(l, off, &sub, wt, v, &l->ids, &l->nr_ids, &l->cap_ids);
		else if (n == 2 && (wt == PPROF_WT_VARINT || wt == PPROF_WT_LEN))
			err = take_varints(l, off, &sub, wt, v, &l->vals, &l->nr_vals, &l->cap_vals);
		else if (n == 3 && wt == PPROF_WT_LEN)
			err = take_label(l, sub, off);
	}
	if (err)
		return err;
	if (!cur_ok(&c))
		return conv_fail(l->diag, CONV_E_FORMAT, off, "a malformed sample");
	if (l->nr_vals != l->nr_types)
		return conv_fail(l->diag, CONV_E_FORMAT, off, "a sample has %zu values for %zu sample types",
				 l->nr_vals, l->nr_types);
	if (l->nr_ids > UINT32_MAX ||
	    !vec_reserve((void **)&l->stack, &l->cap_stack, l->nr_ids ? l->nr_ids : 1, sizeof(*l->stack)))
		return nomem(l);
	for (size_t i = 0; i < l->nr_ids; i++) {
		uint64_t *id = hmap_get(&l->loc_ids, l->ids[i]);

		if (!id)
			return conv_fail(l->diag, CONV_E_FORMAT, off,
					 "a sample names location %" PRIu64 ", which the profile does not have",
					 l->ids[i]);
		l->stack[i] = (uint32_t)*id;
	}
	stack = prof_stack(l->p, l->stack, (uint32_t)l->nr_ids);
	if (stack == PROF_NONE ||
	    !prof_add_sample(l->p, stack, l->labels, (uint32_t)l->nr_labels, (const int64_t *)l->vals))
		return nomem(l);
	for (size_t i = 0; i < l->nr_types / 2; i++)
		l->event_samples[i] += (int64_t)l->vals[2 * i] > 0 ? l->vals[2 * i] : 0;
	return CONV_E_OK;
}

static enum conv_err load_samples(struct ppload *l)
{
	struct ppe_field f;
	size_t pos = 0;
	enum conv_err err = CONV_E_OK;

	while (!err && ppe_field_next(l->pp, &pos, &f)) {
		struct cur c;
		uint64_t v;

		if (f.number != F_SAMPLE)
			continue;
		if (field_wire(l, &f, &v) != PPROF_WT_LEN)
			return conv_fail(l->diag, CONV_E_FORMAT, f.off, "a sample that is not a message");
		cur_init(&c, l->pp->buf + f.val_off, f.val_len, false);
		err = load_sample(l, c, f.off);
	}
	for (size_t i = 0; !err && i < l->nr_types / 2; i++)
		prof_set_event_samples(l->p, i, l->event_samples[i]);
	return err;
}

/* What the comments say of the machine (conv writes "hostname H", "perf version V", "arch A"); the times. */
static void load_facts(struct ppload *l)
{
	struct prof_sysinfo sys;

	memset(&sys, 0, sizeof(sys));
	for (size_t i = 0; i < l->p->nr_comments; i++) {
		const char *c = model_str(l, l->p->comments[i]);

		if (prefix(c, "hostname "))
			sys.hostname = prof_str(l->p, c + 9);
		else if (prefix(c, "perf version "))
			sys.perf_version = prof_str(l->p, c + 13);
		else if (prefix(c, "arch "))
			sys.arch = prof_str(l->p, c + 5);
	}
	sys.wall_known = l->time_nanos != 0;
	prof_set_sysinfo(l->p, &sys);
	prof_set_time(l->p, l->time_nanos, l->duration_nanos);
}

enum conv_err ppload_prof(const struct ppe_profile *pp, struct prof *p, struct conv_diag *diag)
{
	struct ppload l;
	enum conv_err err;

	memset(&l, 0, sizeof(l));
	l.pp = pp;
	l.p = p;
	l.diag = diag;
	hmap_init(&l.map_ids);
	hmap_init(&l.func_ids);
	hmap_init(&l.loc_ids);
	err = load_strings(&l);
	if (!err)
		err = load_mappings(&l);
	if (!err)
		err = load_functions(&l);
	if (!err)
		err = load_locations(&l);
	if (!err)
		err = load_header(&l);
	if (!err)
		err = load_events(&l);
	if (!err)
		err = load_samples(&l);
	if (!err)
		load_facts(&l);
	free(l.sid);
	hmap_release(&l.map_ids);
	hmap_release(&l.func_ids);
	hmap_release(&l.loc_ids);
	free(l.type_s);
	free(l.unit_s);
	free(l.ids);
	free(l.stack);
	free(l.vals);
	free(l.labels);
	free(l.lines);
	free(l.event_samples);
	return err;
}
