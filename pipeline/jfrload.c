/* A JFR recording read back into the profile model (see jfrload.h). */
#include "pipeline/jfrload.h"

#include "pipeline/evname.h"

#include "core/dbuf.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/vec.h"
#include "jfredit/jfredit.h"
#include "model/profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One sample event type (by its name, the same in every chunk): one event of the model. */
struct jevent {
	char type_name[128]; /* jdk.ExecutionSample, perf.Cycles, perf.OffCPU */
	char full_name[200]; /* its "event" setting, else its type's name */
	uint64_t frequency, interval;
	bool exec_sample, offcpu;
	uint64_t samples;
};

/* A frame as its chunk's pools name it, and its model location. */
struct jframe {
	uint64_t method, line, type;
	uint32_t loc;
};

struct jload {
	const struct jfe_file *f;
	struct prof *p;
	struct conv_diag *diag;
	struct jevent *ev;
	size_t nr_ev, cap_ev;
	struct dbuf s, s2; /* scratch strings */
	char host[256], release[256], arch[64];
	struct hmap maps;  /* (class name's model string, kind) -> model mapping + 1 */
	/* per chunk */
	uint32_t *type_ev;   /* chunk type index -> model event + 1 (0: not a sample event) */
	struct hmap stacks;  /* stack trace key -> model stack + 1 */
	/* the chunk's frames by (method key, line, frame type key): hash -> index in fkeys */
	struct hidx frame_idx;
	struct jframe *fkeys;
	size_t nr_fkeys, cap_fkeys;
	uint32_t *locs;
	size_t nr_locs, cap_locs;
	int64_t *vals;
};

static enum conv_err nomem(struct jload *l)
{
	return conv_fail(l->diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
}

/* A string field of a value, through its pool when it is a reference, into out; false when none. */
static bool str_field(const struct jfe_value *v, const char *field, struct dbuf *out)
{
	struct jfe_value x;

	dbuf_reset(out);
	return jfe_value_field(v, field, &x, NULL) && jfe_value_str(&x, out);
}

static bool u64_field(const struct jfe_value *v, const char *field, uint64_t *out)
{
	struct jfe_value x;

	*out = 0;
	return jfe_value_field(v, field, &x, NULL) && jfe_value_u64(&x, out);
}

/* A pool reference field, followed: the value it names; false when none. */
static bool ref_field(const struct jfe_value *v, const char *field, struct jfe_value *out)
{
	struct jfe_value x;

	return jfe_value_field(v, field, &x, NULL) && jfe_value_deref(&x, out);
}

static const char *sdata(const struct dbuf *b)
{
	return b->len ? (const char *)b->data : "";
}

/* Whether type t has a field of this name. */
static bool type_has_field(const struct jfe_chunk *c, const struct jfe_type *t, const char *name)
{
	for (uint32_t i = 0; i < t->nr_fields; i++)
		if (!strcmp(strtab_get(&c->names, c->fields[t->first_field + i].name), name))
			return true;
	return false;
}

/* The model event of a sample event type's name, added when new; SIZE_MAX when out of memory. */
static size_t event_of(struct jload *l, const char *type_name)
{
	struct jevent *e;

	for (size_t i = 0; i < l->nr_ev; i++)
		if (!strcmp(l->ev[i].type_name, type_name))
			return i;
	if (!vec_reserve((void **)&l->ev, &l->cap_ev, l->nr_ev + 1, sizeof(*l->ev)))
		return SIZE_MAX;
	e = &l->ev[l->nr_ev];
	memset(e, 0, sizeof(*e));
	snprintf(e->type_name, sizeof(e->type_name), "%s", type_name);
	snprintf(e->full_name, sizeof(e->full_name), "%s", type_name);
	e->exec_sample = !strcmp(type_name, "jdk.ExecutionSample");
	e->offcpu = !strcmp(type_name, "perf.OffCPU");
	return l->nr_ev++;
}

/* Chunk c's sample event types into l->type_ev (and the model's events). */
static enum conv_err chunk_types(struct jload *l, const struct jfe_chunk *c)
{
	free(l->type_ev);
	l->type_ev = calloc(c->nr_types ? c->nr_types : 1, sizeof(*l->type_ev));
	if (!l->type_ev)
		return nomem(l);
	for (size_t i = 0; i < c->nr_types; i++) {
		const struct jfe_type *t = &c->types[i];
		const char *name = strtab_get(&c->names, t->name);
		size_t e;

		if (strcmp(name, "jdk.ExecutionSample") && strncmp(name, "perf.", 5))
			continue;
		if (!type_has_field(c, t, "stackTrace"))
			continue; /* perf.LostSamples */
		e = event_of(l, name);
		if (e == SIZE_MAX)
			return nomem(l);
		l->type_ev[i] = (uint32_t)e + 1;
	}
	return CONV_E_OK;
}

/* The model event of an event record's type in the current chunk, or SIZE_MAX when it is no sample event. */
static size_t record_event(const struct jload *l, const struct jfe_chunk *c, uint64_t type)
{
	const struct jfe_type *t = jfe_type_of(c, type);
	size_t i = t ? (size_t)(t - c->types) : SIZE_MAX;

	if (i >= c->nr_types || !l->type_ev[i])
		return SIZE_MAX;
	return l->type_ev[i] - 1;
}

/* A jdk.ActiveSetting event: the event's name as recorded, its frequency or interval. */
static void take_setting(struct jload *l, const struct jfe_chunk *c, const struct jfe_value *ev)
{
	uint64_t id;
	size_t e;

	if (!u64_field(ev, "id", &id) || !str_field(ev, "name", &l->s) || !str_field(ev, "value", &l->s2))
		return;
	e = record_event(l, c, id);
	if (e == SIZE_MAX)
		return;
	if (!strcmp(sdata(&l->s), "event") && l->s2.len > 1)
		snprintf(l->ev[e].full_name, sizeof(l->ev[e].full_name), "%s", sdata(&l->s2));
	else if (!strcmp(sdata(&l->s), "frequency"))
		l->ev[e].frequency = strtoull(sdata(&l->s2), NULL, 10);
	else if (!strcmp(sdata(&l->s), "interval"))
		l->ev[e].interval = strtoull(sdata(&l->s2), NULL, 10);
}

/*
 * conv's jdk.OSInformation: "uname: Linux HOST RELEASE ARCH", each part
 * after one space (HOST may be empty); another writer's says nothing here.
 */
static void take_os(struct jload *l, const struct jfe_value *ev)
{
	static const char head[] = "uname: Linux ";
	const char *v, *sp1, *sp2;

	if (!str_field(ev, "osVersion", &l->s) || strncmp(sdata(&l->s), head, sizeof(head) - 1))
		return;
	v = sdata(&l->s) + sizeof(head) - 1;
	sp1 = strchr(v, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp2 || strchr(sp2 + 1, ' ') || !sp2[1])
		return;
	snprintf(l->host, sizeof(l->host), "%.*s", (int)(sp1 - v), v);
	snprintf(l->release, sizeof(l->release), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
	snprintf(l->arch, sizeof(l->arch), "%s", sp2 + 1);
}

/* The first pass: every chunk's sample event types, the settings naming them, the machine. */
static enum conv_err find_events(struct jload *l)
{
	for (size_t ci = 0; ci < l->f->nr_chunks; ci++) {
		const struct jfe_chunk *c = &l->f->chunks[ci];
		const struct jfe_type *set = jfe_type_named(c, "jdk.ActiveSetting");
		const struct jfe_type *os = jfe_type_named(c, "jdk.OSInformation");
		struct jfe_record r;
		size_t pos = 0;
		enum conv_err err = chunk_types(l, c);

		if (err)
			return err;
		while (jfe_record_next(l->f, c, &pos, &r)) {
			struct jfe_value ev;

			if ((!set || r.type != set->id) && (!os || r.type != os->id))
				continue;
			if (!jfe_event_value(l->f, c, &r, &ev))
				continue;
			if (set && r.type == set->id)
				take_setting(l, c, &ev);
			else
				take_os(l, &ev);
		}
	}
	if (!l->nr_ev)
		return conv_fail(l->diag, CONV_E_FORMAT, UINT64_MAX,
				 "no sample events (jdk.ExecutionSample, perf.*) to compare");
	return CONV_E_OK;
}

/* Whether an event counts time (its period sum in nanoseconds), as tomodel_is_clock_event says of perf's. */
static bool clock_event(const struct jevent *e, const char *base)
{
	return e->offcpu || !strcmp(base, "cpu-clock") || !strcmp(base, "task-clock");
}

/* The model's events and value types, two per event, as tomodel names them. */
static enum conv_err make_events(struct jload *l)
{
	uint32_t primary = PROF_NONE;

	if (!prof_set_events(l->p, l->nr_ev))
		return nomem(l);
	for (size_t i = 0; i < l->nr_ev; i++) {
		const struct jevent *e = &l->ev[i];
		struct prof_event_desc d;
		char base[200], buf[260];

		evname_base(e->full_name, base, sizeof(base));
		memset(&d, 0, sizeof(d));
		d.clock = clock_event(e, base);
		d.offcpu = e->offcpu;
		if (e->offcpu) {
			prof_set_value_type(l->p, 2 * i, prof_str(l->p, "off_cpu_samples"), prof_str(l->p, "count"));
			prof_set_value_type(l->p, 2 * i + 1, prof_str(l->p, "off_cpu"), prof_str(l->p, "nanoseconds"));
			d.name = d.full_name = prof_str(l->p, "off-cpu");
			prof_set_offcpu_event(l->p, (uint32_t)i);
		} else {
			snprintf(buf, sizeof(buf), "%s_samples", base);
			prof_set_value_type(l->p, 2 * i, prof_str(l->p, buf), prof_str(l->p, "count"));
			prof_set_value_type(l->p, 2 * i + 1, prof_str(l->p, base),
					    prof_str(l->p, d.clock ? "nanoseconds" : "count"));
			d.name = prof_str(l->p, base);
			d.full_name = prof_str(l->p, e->full_name);
		}
		d.frequency = e->frequency;
		d.period = e->frequency ? 0 : e->interval;
		prof_set_event(l->p, i, &d);
		if (e->exec_sample && primary == PROF_NONE)
			primary = (uint32_t)i;
	}
	prof_set_primary_event(l->p, primary);
	prof_set_default_type(l->p, primary != PROF_NONE ? 2 * primary + 1 : 1,
			      l->ev[primary != PROF_NONE ? primary : 0].interval);
	return CONV_E_OK;
}

/* The model mapping of a class (a library, for conv) and kind, made on first use; PROF_NONE: no memory. */
static uint32_t mapping_of(struct jload *l, const char *cls, enum prof_map_kind kind)
{
	uint32_t name = prof_str(l->p, kind == PROF_MAP_KERNEL && !*cls ? "[kernel.kallsyms]" : cls);
	uint64_t key = (uint64_t)name << 3 | (uint64_t)kind, *v = hmap_get(&l->maps, key);
	struct prof_mapping m;
	uint32_t id;

	if (v)
		return (uint32_t)*v - 1;
	memset(&m, 0, sizeof(m));
	m.filename = name;
	m.kind = kind;
	m.has_functions = true;
	id = prof_add_mapping(l->p, &m);
	if (id == PROF_NONE || !hmap_put(&l->maps, key, (uint64_t)id + 1))
		return PROF_NONE;
	return id;
}

/* "0x" and hex digits: the name conv's JFR gives a frame it could not name. */
static bool is_hex_address(const char *s)
{
	if (s[0] != '0' || s[1] != 'x' || !s[2])
		return false;
	for (s += 2; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* A frame's location kept for its next use in the chunk (hash h of its keys); loc, PROF_NONE when out of memory. */
static uint32_t frame_keep(struct jload *l, uint64_t h, uint64_t method, uint64_t line, uint64_t type,
			   uint32_t loc)
{
	if (loc == PROF_NONE || l->nr_fkeys >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&l->fkeys, &l->cap_fkeys, l->nr_fkeys + 1, sizeof(*l->fkeys)) ||
	    !hidx_add(&l->frame_idx, h, (uint32_t)l->nr_fkeys))
		return PROF_NONE;
	l->fkeys[l->nr_fkeys].method = method;
	l->fkeys[l->nr_fkeys].line = line;
	l->fkeys[l->nr_fkeys].type = type;
	l->fkeys[l->nr_fkeys++].loc = loc;
	return loc;
}

/*
 * A frame's location (see jfrload.h for its name and mapping), memoized by
 * its method, line and type keys; PROF_NONE when out of memory, *bad when
 * the frame does not decode.
 */
static uint32_t frame_location(struct jload *l, const struct jfe_value *fr, bool *bad)
{
	struct jfe_value mk, tk, method, cls, ft;
	uint64_t mkey = 0, tkey = 0, line = 0, h;
	struct hidx_iter it;
	struct prof_line ln;
	enum prof_map_kind kind = PROF_MAP_FILE;
	const char *name;
	uint32_t loc, map;

	*bad = false;
	if (!jfe_value_field(fr, "method", &mk, NULL) || !jfe_value_u64(&mk, &mkey) ||
	    !jfe_value_deref(&mk, &method)) {
		*bad = true;
		return PROF_NONE;
	}
	u64_field(fr, "lineNumber", &line);
	if (jfe_value_field(fr, "type", &tk, NULL))
		jfe_value_u64(&tk, &tkey);
	h = hmap_mix(hmap_mix(hmap_mix(7, mkey), line), tkey);
	for (uint32_t i = hidx_first(&l->frame_idx, h, &it); i != HIDX_NONE; i = hidx_next(&l->frame_idx, &it))
		if (l->fkeys[i].method == mkey && l->fkeys[i].line == line && l->fkeys[i].type == tkey)
			return l->fkeys[i].loc;
	if (!(jfe_value_field(fr, "type", &tk, NULL) && jfe_value_deref(&tk, &ft) &&
	      str_field(&ft, "description", &l->s2)))
		dbuf_reset(&l->s2);
	if (!strcmp(sdata(&l->s2), "Kernel"))
		kind = PROF_MAP_KERNEL;
	else if (!strcmp(sdata(&l->s2), "JIT compiled") || !strcmp(sdata(&l->s2), "Interpreted") ||
		 !strcmp(sdata(&l->s2), "Inlined") || !strcmp(sdata(&l->s2), "C1 compiled"))
		kind = PROF_MAP_JIT;
	if (!(ref_field(&method, "type", &cls) && str_field(&cls, "name", &l->s)))
		dbuf_reset(&l->s);
	if (!l->s.len && kind == PROF_MAP_FILE)
		kind = PROF_MAP_OTHER;
	map = mapping_of(l, sdata(&l->s), kind);
	/* the function's name: a Java method's class.name; conv's unnamed frames their name and descriptor */
	if (kind == PROF_MAP_JIT && l->s.len > 1)
		l->s.data[l->s.len - 1] = '.'; /* the class's NUL */
	else
		dbuf_reset(&l->s);
	if (str_field(&method, "name", &l->s2)) {
		bool remote = !strcmp(sdata(&l->s2), "<remote>");

		dbuf_append(&l->s, l->s2.data, l->s2.len - 1);
		if (remote && str_field(&method, "descriptor", &l->s2))
			dbuf_append(&l->s, l->s2.data, l->s2.len - 1);
	}
	dbuf_putc(&l->s, 0);
	if (l->s.err || map == PROF_NONE)
		return PROF_NONE;
	name = (const char *)l->s.data;
	if (kind == PROF_MAP_OTHER && is_hex_address(name)) {
		/* conv's frame at an address in no mapping: unnamed there too ("[unknown]" in the views) */
		loc = prof_location_append(l->p, PROF_NONE, strtoull(name + 2, NULL, 16), NULL, 0);
		return frame_keep(l, h, mkey, line, tkey, loc);
	}
	ln.function = prof_function(l->p, prof_str(l->p, *name ? name : "[unknown]"),
				    prof_str(l->p, *name ? name : "[unknown]"), 0, 0);
	ln.line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
	ln.column = 0;
	if (ln.function == PROF_NONE)
		return PROF_NONE;
	loc = prof_location_append(l->p, map, 0, &ln, 1);
	return frame_keep(l, h, mkey, line, tkey, loc);
}

/* The model stack of a stack trace reference (memoized by its key); PROF_NONE with *bad when it does not decode. */
static uint32_t stack_of(struct jload *l, const struct jfe_value *ev, uint64_t off, bool *bad)
{
	struct jfe_value sk, st, fv;
	const struct jfe_field *ff;
	struct jfe_array a;
	uint64_t key = 0, count, *v;
	uint32_t id;

	*bad = false;
	if (!jfe_value_field(ev, "stackTrace", &sk, NULL) || !jfe_value_u64(&sk, &key))
		key = 0;
	if ((v = hmap_get(&l->stacks, key)) != NULL)
		return (uint32_t)*v - 1;
	l->nr_locs = 0;
	/* no stack (key 0, or one the pools lack): an empty stack, as a sample without a call chain */
	if (key && jfe_value_deref(&sk, &st) && jfe_value_field(&st, "frames", &fv, &ff)) {
		struct jfe_value fr;
		uint64_t k2;

		if (!jfe_array_begin(&fv, ff, &a, &count)) {
			*bad = true;
			conv_fail(l->diag, CONV_E_FORMAT, off, "a stack trace's frames do not decode");
			return PROF_NONE;
		}
		while (jfe_array_next(&a, &fr, &k2)) {
			uint32_t loc = frame_location(l, &fr, bad);

			if (*bad) {
				conv_fail(l->diag, CONV_E_FORMAT, off, "a stack frame without a method");
				return PROF_NONE;
			}
			if (loc == PROF_NONE ||
			    !vec_reserve((void **)&l->locs, &l->cap_locs, l->nr_locs + 1, sizeof(*l->locs)))
				return PROF_NONE;
			l->locs[l->nr_locs++] = loc;
		}
	}
	id = prof_stack(l->p, l->locs, (uint32_t)l->nr_locs);
	if (id == PROF_NONE || !hmap_put(&l->stacks, key, (uint64_t)id + 1))
		return PROF_NONE;
	return id;
}

/* One sample event of model event e: its stack counted, its period summed. */
static enum conv_err take_sample(struct jload *l, size_t e, const struct jfe_value *ev, uint64_t off)
{
	struct jevent *je = &l->ev[e];
	uint64_t period = 0;
	bool bad;
	uint32_t stack = stack_of(l, ev, off, &bad);

	if (stack == PROF_NONE)
		return bad ? CONV_E_FORMAT : nomem(l);
	if (je->offcpu)
		u64_field(ev, "duration", &period);
	else if (!u64_field(ev, "period", &period))
		period = je->interval ? je->interval : 1;
	memset(l->vals, 0, 2 * l->nr_ev * sizeof(*l->vals));
	l->vals[2 * e] = 1;
	l->vals[2 * e + 1] = period > INT64_MAX ? INT64_MAX : (int64_t)period;
	if (!prof_add_sample(l->p, stack, NULL, 0, l->vals))
		return nomem(l);
	je->samples++;
	return CONV_E_OK;
}

/* The second pass: every chunk's sample events. */
static enum conv_err take_samples(struct jload *l)
{
	l->vals = calloc(2 * l->nr_ev, sizeof(*l->vals));
	if (!l->vals)
		return nomem(l);
	for (size_t ci = 0; ci < l->f->nr_chunks; ci++) {
		const struct jfe_chunk *c = &l->f->chunks[ci];
		struct jfe_record r;
		size_t pos = 0;
		enum conv_err err = chunk_types(l, c);

		/* pool keys are the chunk's own */
		hmap_release(&l->stacks);
		hmap_init(&l->stacks);
		hidx_release(&l->frame_idx);
		hidx_init(&l->frame_idx);
		l->nr_fkeys = 0;
		while (!err && jfe_record_next(l->f, c, &pos, &r)) {
			struct jfe_value ev;
			size_t e = record_event(l, c, r.type);

			if (e == SIZE_MAX || !jfe_event_value(l->f, c, &r, &ev))
				continue;
			err = take_sample(l, e, &ev, r.off);
		}
		if (err)
			return err;
	}
	for (size_t i = 0; i < l->nr_ev; i++)
		prof_set_event_samples(l->p, i, l->ev[i].samples);
	return CONV_E_OK;
}

enum conv_err jfrload_prof(const struct jfe_file *f, struct prof *p, struct conv_diag *diag)
{
	struct jload l;
	enum conv_err err;

	memset(&l, 0, sizeof(l));
	l.f = f;
	l.p = p;
	l.diag = diag;
	dbuf_init(&l.s, 0);
	dbuf_init(&l.s2, 0);
	hmap_init(&l.maps);
	hmap_init(&l.stacks);
	hidx_init(&l.frame_idx);
	err = find_events(&l);
	if (!err)
		err = make_events(&l);
	if (!err)
		err = take_samples(&l);
	if (!err) {
		struct prof_sysinfo sys;

		memset(&sys, 0, sizeof(sys));
		sys.hostname = prof_str(p, l.host);
		sys.os_release = prof_str(p, l.release);
		sys.arch = prof_str(p, l.arch);
		prof_set_sysinfo(p, &sys);
	}
	free(l.ev);
	free(l.type_ev);
	free(l.locs);
	free(l.vals);
	dbuf_release(&l.s);
	dbuf_release(&l.s2);
	hmap_release(&l.maps);
	hmap_release(&l.stacks);
	hidx_release(&l.frame_idx);
	free(l.fkeys);
	return err;
}
