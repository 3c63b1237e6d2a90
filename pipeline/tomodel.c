/*
 * The profile model from the reading pass's cache: event types, stacks
 * (taken over), threads and their labels, samples, off-CPU samples, then,
 * once the symbolizer is joined, one location per distinct frame, and the
 * recording's facts. Mappings enter the model when a frame first needs
 * them, the main binary's first (pprof takes the first for the program).
 */
#include "pipeline/pass.h"

#include "pipeline/evname.h"

#include "buildid/buildid.h"
#include "core/clock.h"
#include "core/vec.h"
#include "model/profile.h"
#include "procmap/jitmap.h"
#include "reader/perf_abi.h"
#include "symbolize/symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool tomodel_is_clock_event(const struct rdr_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && (a->config == 0 || a->config == 1);
}

/* Recorded event i's value types: its samples ("cycles_samples", count) and their periods. */
static void tomodel_attr_types(struct prof *p, size_t i, const struct rdr_attr *a)
{
	char base[200], buf[260];
	uint32_t count, sum;

	evname_base(a->name ? a->name : "event", base, sizeof(base));
	snprintf(buf, sizeof(buf), "%s_samples", base);
	/* (interned in this order: the string table's) */
	count = prof_str(p, buf);
	prof_set_value_type(p, 2 * i, count, prof_str(p, "count"));
	sum = prof_str(p, base);
	prof_set_value_type(p, 2 * i + 1, sum, prof_str(p, tomodel_is_clock_event(a) ? "nanoseconds" : "count"));
}

/* Recorded event i's description. */
static void tomodel_attr_desc(struct prof *p, size_t i, const struct rdr_attr *a)
{
	struct prof_event_desc e;
	char base[200];

	memset(&e, 0, sizeof(e));
	evname_base(a->name ? a->name : "event", base, sizeof(base));
	e.name = prof_str(p, base);
	e.full_name = prof_str(p, a->name ? a->name : "event");
	e.clock = tomodel_is_clock_event(a);
	e.tracepoint = a->type == PERF_TYPE_TRACEPOINT;
	if (a->freq)
		e.frequency = a->sample_period;
	else
		e.period = a->sample_period;
	e.samples = a->samples;
	prof_set_event(p, i, &e);
}

/* Off-CPU intervals, described as event i: off_cpu_samples/count, off_cpu/nanoseconds. */
static void tomodel_offcpu_desc(struct prof *p, size_t i)
{
	struct prof_event_desc e;
	uint32_t t;

	t = prof_str(p, "off_cpu_samples");
	prof_set_value_type(p, 2 * i, t, prof_str(p, "count"));
	t = prof_str(p, "off_cpu");
	prof_set_value_type(p, 2 * i + 1, t, prof_str(p, "nanoseconds"));
	memset(&e, 0, sizeof(e));
	e.name = e.full_name = prof_str(p, "off-cpu");
	e.clock = true;
	e.offcpu = true;
	prof_set_event(p, i, &e);
	prof_set_offcpu_event(p, (uint32_t)i);
}

/*
 * The CPU-time event: cpu-clock, task-clock, then cycles (or ref-cycles),
 * else none (PROF_NONE): a tracepoint or another count shown as CPU samples
 * would tell JFR tools that threads ran where they waited or switched.
 */
static uint32_t tomodel_cpu_event(const struct rdr_info *info)
{
	for (size_t i = 0; i < info->nr_attrs; i++)
		if (tomodel_is_clock_event(&info->attrs[i]))
			return (uint32_t)i;
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];

		if (a->type == PERF_TYPE_HARDWARE && ((a->config & 0xffffffffu) == 0 /* cycles, any PMU */ ||
						      (a->config & 0xffffffffu) == 9 /* ref-cycles */))
			return (uint32_t)i;
	}
	return PROF_NONE;
}

/*
 * The model's event descriptions and sample types: two per recorded event
 * (its samples, their periods), then with offcpu two for off-CPU intervals,
 * described as one more event. The first event's period is the default.
 */
static void tomodel_event_types(struct prof *p, const struct rdr_info *info, bool offcpu)
{
	const struct rdr_attr *a = info->nr_attrs ? &info->attrs[0] : NULL;
	int64_t period = 0;

	if (!prof_set_events(p, info->nr_attrs + (offcpu ? 1 : 0)))
		return;
	for (size_t i = 0; i < info->nr_attrs; i++)
		tomodel_attr_types(p, i, &info->attrs[i]);
	if (offcpu)
		tomodel_offcpu_desc(p, info->nr_attrs);
	for (size_t i = 0; i < info->nr_attrs; i++)
		tomodel_attr_desc(p, i, &info->attrs[i]);
	prof_set_primary_event(p, tomodel_cpu_event(info));
	if (!a)
		return;
	if (!a->freq)
		period = (int64_t)a->sample_period;
	else if (tomodel_is_clock_event(a) && a->sample_period)
		period = (int64_t)(1000000000ull / a->sample_period);
	prof_set_default_type(p, 1, period);
}

/*
 * The model mapping of a procmap mapping (created on first use). Its
 * build-id is the recorded one or, without one, that of the file found for
 * it: the identity an unnamed frame keeps for naming it later (a JFR
 * <remote> frame has no other).
 */
static uint32_t tomodel_mapping_of(struct prof *p, const struct procmap *pm, const struct symjob *sj,
				   uint32_t *map_ids, uint32_t id)
{
	const struct pm_mapping *m = procmap_mapping(pm, id);
	struct prof_mapping pmp;
	char hex[2 * BUILDID_MAX + 1];
	const uint8_t *file_bid;
	size_t file_bid_len = m->build_id_size ? 0 : symjob_file_build_id(sj, id, &file_bid);

	if (map_ids[id] != PROF_NONE)
		return map_ids[id];
	memset(&pmp, 0, sizeof(pmp));
	pmp.start = m->start;
	pmp.limit = m->limit;
	pmp.offset = m->pgoff;
	pmp.filename = prof_str(p, m->path);
	if (file_bid_len)
		buildid_hex(file_bid, file_bid_len, hex);
	else
		buildid_hex(m->build_id, m->build_id_size, hex);
	pmp.build_id = prof_str(p, hex);
	switch (m->kind) {
	case PM_KIND_FILE:
		pmp.kind = PROF_MAP_FILE;
		break;
	case PM_KIND_KERNEL:
	case PM_KIND_MODULE:
		pmp.kind = PROF_MAP_KERNEL;
		break;
	case PM_KIND_JIT:
		pmp.kind = PROF_MAP_JIT;
		break;
	default:
		pmp.kind = PROF_MAP_OTHER;
		break;
	}
	if (m->proc != PM_KERNEL_PROC) {
		const struct pm_proc *pr = procmap_proc(pm, m->proc);

		pmp.pid = pr ? pr->pid : 0;
	}
	map_ids[id] = prof_add_mapping(p, &pmp);
	return map_ids[id];
}

/*
 * pprof takes the first mapping for the main binary: make it the executable
 * of the process with the most samples (its first executable file mapping,
 * which the kernel maps at exec before any library).
 */
static void tomodel_main_mapping_first(struct prof *p, const struct procmap *pm, const struct symjob *sj,
				       uint32_t *map_ids)
{
	const struct pm_proc *best = NULL;

	for (uint32_t i = 0; i < procmap_proc_count(pm); i++) {
		const struct pm_proc *pr = procmap_proc(pm, i);

		if (pr->samples && (!best || pr->samples > best->samples))
			best = pr;
	}
	if (!best)
		return;
	for (uint32_t i = 0; i < procmap_mapping_count(pm); i++) {
		const struct pm_mapping *m = procmap_mapping(pm, i);

		if (m->proc == best->index && m->exec && m->kind == PM_KIND_FILE) {
			tomodel_mapping_of(p, pm, sj, map_ids, i);
			return;
		}
	}
}

/*
 * The name of the frame that ends an unwound stack early ("[truncated: stack
 * copy ended]", "[truncated: no CFI for libfoo.so]").
 */
static void tomodel_stop_name(const struct procmap *pm, enum uw_stop why, uint32_t map, char *buf,
			      size_t size)
{
	const struct pm_mapping *m = map == PM_NO_MAPPING ? NULL : procmap_mapping(pm, map);

	if (why == UW_STOP_NO_CFI && m) {
		const char *b = strrchr(m->path, '/');

		snprintf(buf, size, "[truncated: no CFI for %s]", b ? b + 1 : m->path);
	} else {
		snprintf(buf, size, "[truncated: %s]", uw_stop_text(why));
	}
}

/*
 * The one name of the unnamed code in an anonymous region: perf's DSO for
 * JIT code without a perf map ("[JIT] tid 42"), else the region's own name
 * in brackets ("[heap]", "//anon" as "[anon]"). A name per address (what
 * the views made of "anon+0x7f...") gave each address its own frame and
 * shredded the flame graph: 2767 distinct stacks of a JVM where perf has
 * 1515. The address stays in the location.
 */
static const char *tomodel_region_name(const struct pm_mapping *m, char *buf, size_t size)
{
	const char *b;

	if (m->kind == PM_KIND_JIT || m->dso[0] == '[')
		return m->dso;
	b = strrchr(m->path, '/');
	snprintf(buf, size, "[%.256s]", b && b[1] ? b + 1 : m->path[0] ? m->path : "anon");
	return buf;
}

/* The model location of a raw frame (created on first use). */
static uint32_t tomodel_location_of(struct prof *p, const struct procmap *pm, struct symjob *sj,
			    uint32_t *map_ids, const struct scache_frame *f, const struct jit_sym *jit)
{
	char stop[320];
	struct prof_line lines[64];
	uint32_t nl = 0, mapping = PROF_NONE, loc;
	uint64_t elf_addr = 0;
	bool has_elf = false;
	const struct pm_mapping *m = f->mapping == PM_NO_MAPPING ? NULL
								 : procmap_mapping(pm, f->mapping);
	enum uw_stop why;
	uint32_t why_map;

	if (m)
		mapping = tomodel_mapping_of(p, pm, sj, map_ids, f->mapping);
	if (scache_frame_stop(f, &why, &why_map)) {
		tomodel_stop_name(pm, why, why_map, stop, sizeof(stop));
		lines[nl].function = prof_function(p, prof_str(p, stop), prof_str(p, stop), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	} else if (jit) {
		lines[nl].function = prof_function(p, prof_str(p, jit->name), prof_str(p, jit->name), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	} else if (scache_frame_addr_id(f) != SYMJOB_NONE) {
		const struct symjob_result *r = symjob_get(sj, scache_frame_addr_id(f));

		if (r && r->normalized && m && m->kind != PM_KIND_KERNEL && m->kind != PM_KIND_MODULE) {
			elf_addr = r->elf_va;
			has_elf = true;
			if (mapping != PROF_NONE)
				prof_mapping_set_load_bias(p, mapping, f->addr - r->elf_va);
		}

		for (uint32_t i = 0; r && i < r->nr && nl < 64; i++) {
			const struct sym_frame *sf = &r->frames[i];
			/* the symbolizer's numbers as keys: each string and function hashed into the model once */
			uint32_t key = r->funcs ? r->funcs[i] : SYMJOB_NONE;
			const struct symjob_function *fn = symjob_function(sj, key);
			uint32_t fid = prof_function_of_key(p, key);

			if (fid == PROF_NONE) {
				/* file, system name, name: the order the model has numbered them in */
				uint32_t file = prof_str_keyed(p, fn ? fn->file : PROF_NONE, sf->file);
				uint32_t sys = prof_str_keyed(p, fn ? fn->system_name : PROF_NONE,
							      sf->system_name);
				uint32_t name = prof_str_keyed(p, fn ? fn->function : PROF_NONE, sf->function);

				fid = prof_function_keyed(p, fn ? key : PROF_NONE, name, sys, file,
							  sf->start_line);
			}
			lines[nl].function = fid;
			lines[nl].line = sf->line;
			lines[nl].column = sf->column;
			nl++;
		}
	}
	if (!nl && m && (m->kind == PM_KIND_JIT || m->kind == PM_KIND_ANON)) {
		const char *name = tomodel_region_name(m, stop, sizeof(stop));

		lines[nl].function = prof_function(p, prof_str(p, name), prof_str(p, name), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	}
	if (mapping != PROF_NONE)
		prof_mapping_note_lines(p, mapping, lines, nl);
	/* frames are distinct (mapping, address, JIT symbol): no lookup, no index */
	loc = prof_location_append(p, mapping, f->addr, lines, nl);
	if (has_elf && loc != PROF_NONE)
		prof_location_set_elf_addr(p, loc, elf_addr);
	return loc;
}

/* The label keys of the model's samples. */
struct label_keys {
	uint32_t pid, tid, comm, process, cpu, event, state;
};

/*
 * Values are kept for the types of events that have samples, and for
 * off-CPU time: an event that was never sampled (perf's dummy event of a
 * system-wide recording) has only zeros. Without the model's table of them
 * (out of memory) every type keeps its values: more memory, same profile.
 */
static void tomodel_value_types(struct pass *ps)
{
	struct prof *p = ps->p;
	bool *used = calloc(p->nr_types ? p->nr_types : 1, sizeof(*used));

	if (!used)
		return;
	for (size_t i = 0; i < p->nr_events_desc && 2 * i + 1 < p->nr_types; i++)
		used[2 * i] = used[2 * i + 1] = i == p->offcpu_event || p->events_desc[i].samples;
	(void)prof_set_value_types(p, used);
	free(used);
}

/* The model's event types, and the label keys (interned in this order: the string table's). */
static void tomodel_types(struct pass *ps, struct label_keys *k)
{
	struct prof *p = ps->p;

	tomodel_event_types(p, rdr_info(ps->r), ps->off != NULL);
	for (size_t i = 0; i < p->nr_events_desc; i++)
		prof_set_event_samples(p, i, i < ps->nr_kept ? ps->kept_by_attr[i] : 0);
	if (p->offcpu_event != PROF_NONE)
		prof_set_event_samples(p, p->offcpu_event, offcpu_stats(ps->off)->intervals);
	tomodel_value_types(ps);
	for (size_t i = 0; ps->tpf && i < p->nr_events_desc && i < rdr_info(ps->r)->nr_attrs; i++) {
		uint32_t ids[PROF_MAX_FIELDS];
		const bool *num;
		size_t n;
		const char *const *names = tpfields_names(ps->tpf, (int)i, &num, &n);

		for (size_t f = 0; f < n && f < PROF_MAX_FIELDS; f++)
			ids[f] = prof_str(p, names[f]);
		prof_set_event_fields(p, i, ids, num, n);
	}
	k->pid = prof_str(p, "pid");
	k->tid = prof_str(p, "tid");
	k->comm = prof_str(p, "comm");
	k->process = prof_str(p, "process");
	k->cpu = prof_str(p, "cpu");
	k->event = prof_str(p, "event");
	/* (interned only where used: a string more changes every output's string table) */
	k->state = p->offcpu_event != PROF_NONE ? prof_str(p, "state") : 0;
}

/*
 * The model's stacks: the raw stacks themselves, taken over by the model (a
 * stack's id stays its raw id, and a frame's location will be the frame's
 * index: the model is new, so it has no locations or stacks before them),
 * sized for the samples to come.
 */
static enum conv_err tomodel_stacks(struct pass *ps)
{
	struct scache *c = &ps->c;
	struct prof *p = ps->p;

	if (p->nr_locations)
		return CONV_E_INVAL;
	if (c->nr_frames >= PROF_NONE)
		return CONV_E_NOMEM;
	if (c->nr_stacks) {
		if (!prof_adopt_stacks(p, c->pool, c->pool_len, c->pool_cap, c->stack_off, c->nr_stacks,
				       c->cap_stacks, c->stack_trunc))
			return CONV_E_INVAL;
		c->pool = NULL;
		c->stack_off = NULL;
		c->stack_trunc = NULL;
	}
	/* sizes known now: allocated once (+1: the lost-samples entry) */
	if (!prof_reserve(p, c->nr_frames + 1, 1, 1, c->nr_keys + 1))
		return CONV_E_NOMEM;
	ps->st->unique_stacks = c->nr_stacks;
	return CONV_E_OK;
}

/* Per thread of the sample events (the spool's numbering), what its samples' labels use. */
struct thread_labels {
	uint32_t comm;  /* string: the thread's name */
	uint32_t proc;  /* string: the process's name */
	uint32_t cid;   /* procmap_thread_comm: the name's number, to tell older names apart */
	/*
	 * the label list of a thread's samples without a cpu or event label,
	 * placed in the pool once (prof_label_set) instead of hashed and
	 * compared for each of its distinct samples; UINT32_MAX: not yet
	 */
	uint32_t set;
};

/* The model's threads, and the labels their samples share. */
static enum conv_err tomodel_threads(struct pass *ps, struct thread_labels *tl)
{
	struct prof *p = ps->p;

	for (size_t t = 0; t < ps->c.nr_threads; t++) {
		uint32_t proc = (uint32_t)(ps->c.threads[t] >> 32), tid = (uint32_t)ps->c.threads[t];
		const struct pm_proc *pr = procmap_proc(ps->pm, proc);
		const char *tn = procmap_thread_name(ps->pm, tid);
		struct prof_thread th;

		th.tid = tid;
		th.pid = pr ? pr->pid : tid;
		th.origin = 0;
		th.name = prof_str(p, tn ? tn : pr && pr->comm ? pr->comm : "");
		th.process_name = prof_str(p, pr && pr->comm ? pr->comm : "");
		/*
		 * comm is the thread's, as perf's comm (perf report --comms), and
		 * the process's name is a label of its own
		 */
		tl[t].comm = th.name;
		tl[t].proc = th.process_name;
		tl[t].cid = procmap_thread_comm(ps->pm, tid);
		tl[t].set = UINT32_MAX;
		if (prof_add_thread(p, &th) == PROF_NONE)
			return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

/*
 * A key's thread labels (pid, tid, comm, process; none with --no-labels)
 * into lb; their number. *thread_only stays true while they are the
 * thread's own list (a sample named before the thread's last rename is not).
 */
static uint32_t tomodel_thread_labels(const struct pass *ps, const struct label_keys *keys,
				   const struct thread_labels *t, const struct scache_key *a,
				   struct prof_label *lb, bool *thread_only)
{
	const struct pm_proc *pr;
	uint64_t th = ps->c.threads[a->thread];
	uint32_t n = 0;

	*thread_only = true;
	if (ps->o->no_labels)
		return 0;
	pr = procmap_proc(ps->pm, (uint32_t)(th >> 32));
	lb[n].key = keys->pid;
	lb[n++].num = pr ? (int32_t)pr->pid : 0; /* -1: perf has none (a task at exit) */
	lb[n].key = keys->tid;
	lb[n++].num = (int32_t)(uint32_t)th;
	lb[n].key = keys->comm;
	/* a sample taken before the thread's last rename has the name it had then */
	if (a->comm == t->cid || a->comm == PM_NO_COMM) {
		lb[n++].str = t->comm;
	} else {
		lb[n++].str = prof_str(ps->p, procmap_comm_str(ps->pm, a->comm));
		*thread_only = false;
	}
	lb[n].key = keys->process;
	lb[n++].str = t->proc;
	return n;
}

/* The model's samples: one per distinct sample key, with its labels and values. */
static enum conv_err tomodel_samples(struct pass *ps, const struct label_keys *keys,
				       struct thread_labels *tl)
{
	struct prof *p = ps->p;
	const struct rdr_info *info = rdr_info(ps->r);
	int64_t *vals = calloc(p->nr_types ? p->nr_types : 1, sizeof(*vals));
	enum conv_err err = CONV_E_OK;

	if (!vals)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < ps->c.nr_keys; i++) {
		const struct scache_key *a = &ps->c.keys[i];
		struct thread_labels *t = &tl[a->thread];
		struct prof_label lb[16];
		const struct tpfields_label *fl;
		size_t nfl = 0;
		uint32_t nlb = 0, ls;
		bool thread_only = true;

		memset(vals, 0, p->nr_types * sizeof(*vals));
		if (2 * (size_t)a->attr + 1 < p->nr_types) {
			vals[2 * a->attr] = (int64_t)a->count;
			vals[2 * a->attr + 1] = (int64_t)a->weight;
		}
		memset(lb, 0, sizeof(lb));
		nlb = tomodel_thread_labels(ps, keys, t, a, lb, &thread_only);
		if (ps->o->label_cpu && a->cpu != UINT32_MAX) {
			lb[nlb].key = keys->cpu;
			lb[nlb++].num = a->cpu;
			thread_only = false;
		}
		if (a->attr < info->nr_attrs && info->attrs[a->attr].type == PERF_TYPE_TRACEPOINT) {
			lb[nlb].key = keys->event;
			lb[nlb++].str = prof_str(p, info->attrs[a->attr].name);
			thread_only = false;
		}
		fl = a->fields && ps->tpf ? tpfields_labels(ps->tpf, a->fields, &nfl) : NULL;
		for (size_t f = 0; f < nfl && nlb < sizeof(lb) / sizeof(lb[0]); f++) {
			lb[nlb].key = prof_str(p, fl[f].name);
			if (fl[f].str)
				lb[nlb++].str = prof_str(p, fl[f].str);
			else
				lb[nlb++].num = fl[f].num;
			thread_only = false;
		}
		ls = thread_only ? t->set : UINT32_MAX;
		if (ls == UINT32_MAX) {
			ls = prof_label_set(p, lb, nlb);
			if (thread_only)
				t->set = ls;
		}
		if (ls == UINT32_MAX || !prof_add_sample_set(p, a->stack, ls, nlb, vals)) {
			err = CONV_E_NOMEM;
			break;
		}
	}
	free(vals);
	return err;
}

/*
 * The off-CPU samples: per switch-out key and state, the intervals' count
 * and nanoseconds under the off-CPU types, labelled with the thread's
 * labels and the state (not with the switch's other fields: a wait is the
 * thread's, whoever ran next).
 */
static enum conv_err tomodel_offcpu(struct pass *ps, const struct label_keys *keys,
				      const struct thread_labels *tl)
{
	struct prof *p = ps->p;
	const struct offcpu_total *t;
	int64_t *vals;
	size_t n;
	uint32_t o = p->offcpu_event;

	if (o == PROF_NONE)
		return CONV_E_OK;
	t = offcpu_totals(ps->off, &n);
	vals = calloc(p->nr_types, sizeof(*vals));
	if (!vals)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct scache_key *a = &ps->c.keys[t[i].key];
		const struct thread_labels *th = &tl[a->thread];
		struct prof_label lb[5];
		bool thread_only;
		uint32_t nlb;

		memset(lb, 0, sizeof(lb));
		nlb = tomodel_thread_labels(ps, keys, th, a, lb, &thread_only);
		if (t[i].label && !ps->o->no_labels) {
			lb[nlb].key = keys->state;
			lb[nlb++].str = t[i].label;
		}
		vals[2 * o] = (int64_t)t[i].n;
		vals[2 * o + 1] = (int64_t)t[i].ns;
		if (!prof_add_sample(p, a->stack, lb, nlb, vals)) {
			free(vals);
			return CONV_E_NOMEM;
		}
	}
	free(vals);
	return CONV_E_OK;
}

/* The model's stacks, threads and samples, built while the workers symbolize. */
enum conv_err tomodel_build(struct pass *ps)
{
	uint64_t t0 = clock_now_ns();
	struct thread_labels *tl;
	struct label_keys keys;
	enum conv_err err;

	tomodel_types(ps, &keys);
	err = tomodel_stacks(ps);
	if (err)
		return err;
	tl = malloc((ps->c.nr_threads + 1) * sizeof(*tl));
	if (!tl)
		return CONV_E_NOMEM;
	err = tomodel_threads(ps, tl);
	if (!err)
		err = tomodel_samples(ps, &keys, tl);
	if (!err)
		err = tomodel_offcpu(ps, &keys, tl);
	free(tl);
	free(ps->c.keys);
	ps->c.keys = NULL;
	ps->c.nr_keys = ps->c.cap_keys = 0;
	ps->st->ns_model = clock_now_ns() - t0;
	return err;
}

/* Joins the symbolizer, then the locations: one per distinct frame, in frame order. */
enum conv_err tomodel_locations(struct pass *ps)
{
	uint64_t t0;
	size_t nmaps = procmap_mapping_count(ps->pm) + 1;
	enum conv_err err = symjob_finish(ps->sj, ps->diag);

	if (err)
		return err;
	cstats_collect_sym(ps->st, ps->sj);
	/* from the workers' start: it overlaps the model's stacks and samples */
	ps->st->ns_symbolize = clock_now_ns() - ps->t_sym;
	t0 = clock_now_ns();
	if (ps->o->progress)
		pass_report(ps->o, ps->r, CONVERT_MODEL, ps->nrec);
	ps->map_ids = malloc(nmaps * sizeof(*ps->map_ids));
	if (!ps->map_ids)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < nmaps; i++)
		ps->map_ids[i] = PROF_NONE;
	tomodel_main_mapping_first(ps->p, ps->pm, ps->sj, ps->map_ids);
	for (size_t i = 0; i < ps->c.nr_frames; i++)
		if (tomodel_location_of(ps->p, ps->pm, ps->sj, ps->map_ids, &ps->c.frames[i],
				scache_frame_jit(&ps->c, &ps->c.frames[i])) != i)
			return CONV_E_NOMEM;
	vec_free((void **)&ps->c.frames, &ps->c.cap_frames);
	vec_free((void **)&ps->c.jits, &ps->c.cap_jits);
	ps->st->ns_model += clock_now_ns() - t0;
	return CONV_E_OK;
}

/* Lost samples, visible, never silent: a comment and a zero-valued sample labelled with the count. */
static void tomodel_lost_samples(struct pass *ps)
{
	struct prof *p = ps->p;
	struct prof_label lb;
	int64_t *zero = calloc(p->nr_types ? p->nr_types : 1, sizeof(*zero));
	uint32_t none[1];
	struct prof_line ln;
	char buf[64];

	snprintf(buf, sizeof(buf), "lost samples %" PRIu64, ps->st->lost_samples);
	prof_add_comment(p, buf);
	ln.function = prof_function(p, prof_str(p, "[lost samples]"), prof_str(p, "[lost samples]"), 0,
				    0);
	ln.line = ln.column = 0;
	none[0] = prof_location(p, PROF_NONE, 0, &ln, 1);
	memset(&lb, 0, sizeof(lb));
	lb.key = prof_str(p, "lost_samples");
	lb.num = (int64_t)ps->st->lost_samples;
	if (zero)
		prof_add_sample(p, prof_stack(p, none, 1), &lb, 1, zero);
	free(zero);
}

/* The recording's facts: machine, times, comments, lost samples. */
void tomodel_facts(struct pass *ps)
{
	struct prof *p = ps->p;
	const struct rdr_info *info = rdr_info(ps->r);
	const struct rdr_stats *rs = rdr_stats(ps->r);
	char buf[512];

	struct prof_sysinfo sys;
	int64_t start = 0, duration = 0;

	ps->st->lost_samples = rs->lost_events + rs->lost_samples;
	memset(&sys, 0, sizeof(sys));
	sys.lost_samples = ps->st->lost_samples;
	sys.hostname = prof_str(p, info->hostname);
	sys.os_release = prof_str(p, info->osrelease);
	sys.arch = prof_str(p, info->arch);
	sys.cpu_desc = prof_str(p, info->cpudesc);
	sys.cpuid = prof_str(p, info->cpuid);
	sys.perf_version = prof_str(p, info->perf_version);
	sys.nr_cpus = info->nr_cpus_avail;
	if (rs->has_sample_time) {
		uint64_t first = rs->first_sample_time;

		sys.first_time = rs->first_sample_time;
		sys.last_time = rs->last_sample_time;
		sys.wall_known = true;
		if (info->has_clock_data && info->clock_data_wall_ns)
			start = (int64_t)(info->clock_data_wall_ns + first - info->clock_data_clockid_ns);
		else if (info->file_mtime_ns > rs->last_sample_time - first)
			/* perf wrote the file when the recording ended, like perf report's
			 * "captured on"; sample times are since boot, not since the epoch */
			start = (int64_t)(info->file_mtime_ns - (rs->last_sample_time - first));
		else
			sys.wall_known = false;
		duration = (int64_t)(rs->last_sample_time - first);
	}
	prof_set_sysinfo(p, &sys);
	if (rs->has_sample_time)
		prof_set_time(p, start, duration);
	if (info->perf_version) {
		snprintf(buf, sizeof(buf), "perf version %s", info->perf_version);
		prof_add_comment(p, buf);
	}
	if (info->hostname) {
		snprintf(buf, sizeof(buf), "hostname %s", info->hostname);
		prof_add_comment(p, buf);
	}
	/* pprof has no field for it: conv diff reads it back to refuse another architecture's profile */
	if (info->arch) {
		snprintf(buf, sizeof(buf), "arch %s", info->arch);
		prof_add_comment(p, buf);
	}
	if (info->cmdline_len) {
		size_t n = 0;

		n += (size_t)snprintf(buf, sizeof(buf), "cmdline");
		for (size_t i = 0; i < info->cmdline_len && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s", info->cmdline[i]);
		prof_add_comment(p, buf);
	}
	if (ps->st->lost_samples)
		tomodel_lost_samples(ps);
}
