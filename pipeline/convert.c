/*
 * The conversion, phase by phase (convert_run): the reading pass feeds
 * every record to the process model and every kept sample to the sample
 * cache (scache.c), where a sample seen before costs a hash of its
 * addresses and a new one is resolved frame by frame; the off-CPU
 * accounting and the JFR's event spool follow each sample. Then the
 * counts (cstats.c), the symbolizer's workers, and the model (tomodel.c)
 * built beside them.
 */
#include "pipeline/pass.h"

#include "pipeline/evname.h"
#include "pipeline/readpass.h"

#include "core/clock.h"
#include "core/satadd.h"
#include "core/vec.h"
#include "model/events.h"
#include "model/profile.h"
#include "reader/perf_abi.h"

#include <stdlib.h>
#include <string.h>

/*
 * Whether perf cut the callchain at its depth limit: as many entries (context
 * markers aside) as the limit (attr.sample_max_stack, else the kernel's
 * default perf_event_max_stack of 127).
 */
static bool callchain_truncated(const struct rdr_sample *s, const struct rdr_attr *a)
{
	uint64_t limit = a && a->sample_max_stack ? a->sample_max_stack : 127, n = 0;

	if (!s->callchain)
		return false;
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		if (s->callchain[i] < PERF_CONTEXT_MAX)
			n++;
	return n >= limit;
}

void pass_report(const struct convert_opts *o, struct rdr *r, enum convert_phase ph,
		   uint64_t records)
{
	struct convert_progress pr;
	const struct rdr_info *info = rdr_info(r);

	memset(&pr, 0, sizeof(pr));
	pr.phase = ph;
	pr.bytes = rdr_stats(r)->bytes_read;
	pr.total_bytes = info->file_size;
	pr.records = records;
	pr.samples = rdr_stats(r)->samples;
	o->progress(o->progress_ctx, &pr);
}

/* The pass over r into p (st: its counts, zeroed) set up; pass_release undoes it, also on error. */
static enum conv_err pass_init(struct pass *ps, struct rdr *r, const struct convert_opts *o, struct prof *p,
			       struct convert_stats *st, struct conv_diag *diag)
{
	enum conv_err err;

	memset(ps, 0, sizeof(*ps));
	ps->r = r;
	ps->o = o;
	ps->p = p;
	ps->st = st;
	ps->diag = diag;
	memset(ps->st, 0, sizeof(*ps->st));
	if (filter_seen_init(&ps->st->seen, &ps->o->filter))
		return conv_fail(ps->diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	memset(&ps->c, 0, sizeof(ps->c));
	hidx_init(&ps->c.frame_idx);
	hidx_init(&ps->c.stack_idx);
	hidx_init(&ps->c.thread_idx);
	hidx_init(&ps->c.key_idx);
	err = readpass_new(&ps->rp, ps->r, &ps->o->pm, &ps->o->sj, ps->diag);
	if (err)
		return err;
	ps->pm = readpass_procmap(ps->rp);
	ps->sj = readpass_symjob(ps->rp);
	ps->uw = readpass_unwinding(ps->rp);
	if (ps->o->keep_events && !ps->p->events) {
		err = prof_events_open(&ps->p->events, ps->o->tmpdir, ps->diag);
		if (err)
			return err;
	}
	return CONV_E_OK;
}

/*
 * A sample not seen before: its frames resolved and interned, its stack and
 * thread found or added, and its key added (k and id hold what was known
 * before; id->fp is set when known).
 */
static enum conv_err pass_new_sample(struct pass *ps, const struct rdr_event *ev, struct scache_key *k,
				     struct scache_id *id, bool known, uint32_t lk, uint32_t *key)
{
	const struct rdr_sample *s = &ev->u.sample;
	struct scache *c = &ps->c;
	const struct pm_frame *frames;
	struct pm_sample_ctx sc;
	struct pm_frame stop;
	size_t nr;
	uint32_t proc, stack, thread, ki;
	enum conv_err err;
	const struct unwinding_built *w = id->walk;
	bool cut = w && w->stop != UW_STOP_ROOT;

	err = procmap_resolve_exact(ps->pm, ev, w ? w->exact : NULL, &frames, &nr, &proc);
	if (err)
		return err;
	if (!vec_reserve((void **)&c->stack_buf, &c->stack_buf_cap, nr + 2, sizeof(uint32_t)) ||
	    !vec_reserve((void **)&c->hash_buf, &c->hash_buf_cap, nr + 1, sizeof(uint64_t)))
		return CONV_E_NOMEM;
	/* the frames' lookups are cache misses in a large table: started together */
	for (size_t i = 0; i < nr; i++) {
		c->hash_buf[i] = scache_frame_hash(&frames[i]);
		hidx_prefetch(&c->frame_idx, c->hash_buf[i]);
	}
	for (size_t i = 0; i < nr; i++) {
		c->stack_buf[i] = scache_frame_of(c, &frames[i], c->hash_buf[i], ps->sj);
		if (c->stack_buf[i] == UINT32_MAX)
			return CONV_E_NOMEM;
	}
	if (cut) {
		/* the walk's early stop: a frame of its own kind (scache_frame_stop), one per reason and object */
		bool in_object = w->stop == UW_STOP_NO_CFI && w->stop_mapping != PM_NO_MAPPING;
		size_t old = c->nr_frames;

		memset(&stop, 0, sizeof(stop));
		stop.mapping = PM_NO_MAPPING;
		stop.addr = unwinding_stop_address(w->stop, w->stop_mapping);
		c->stack_buf[nr] = scache_frame_of(c, &stop, scache_frame_hash(&stop), ps->sj);
		if (c->stack_buf[nr] == UINT32_MAX)
			return CONV_E_NOMEM;
		if (c->nr_frames > old)
			c->frames[c->stack_buf[nr]].ref =
				in_object ? UW_STOP__COUNT + w->stop_mapping : (uint32_t)w->stop;
		nr++;
	}
	stack = scache_stack_of(c, c->stack_buf, (uint32_t)nr);
	if (stack == UINT32_MAX)
		return CONV_E_NOMEM;
	/* a property of the stack (its depth): looked at once, when the stack is new */
	/* (an unwound chain is not perf's: its length says nothing of perf's depth limit) */
	if (stack + 1 == c->nr_stacks && c->nr_stacks > ps->known_stacks &&
	    (cut || (!unwinding_wants(s) && (size_t)ev->attr < rdr_info(ps->r)->nr_attrs &&
		     callchain_truncated(s, &rdr_info(ps->r)->attrs[ev->attr]))))
		c->stack_trunc[stack] = 1;
	ps->known_stacks = c->nr_stacks;
	thread = scache_thread_of(c, proc, s->tid);
	if (thread == UINT32_MAX)
		return CONV_E_NOMEM;
	/* the key as it was before resolving (procmap_resolve may have made the process) */
	if (!known && !ps->o->no_sample_cache) {
		procmap_sample_ctx(ps->pm, ev, &sc);
		id->proc = sc.key.proc;
		id->version = sc.key.version;
		id->kversion = sc.key.kversion;
		known = sc.has_proc && sc.key.proc == proc;
		if (known)
			scache_key_fingerprint(k, id, s);
	}
	k->stack = stack;
	k->thread = thread;
	k->count = 1;
	k->weight = satadd_u63(0, s->period ? s->period : 1);
	ki = scache_key_add(c, k, id, known);
	if (ki == UINT32_MAX)
		return CONV_E_NOMEM;
	if (known)
		c->last_key[lk] = ki + 1;
	*key = ki;
	return CONV_E_OK;
}

/*
 * Whether the sample is a tracepoint's; its field labels' tables are set up
 * at the first tracepoint sample (a pipe carries its formats before its
 * samples), also without labels: off-CPU time needs sched_switch's fields.
 * false also when out of memory (*oom).
 */
static bool pass_tracepoint(struct pass *ps, const struct rdr_event *ev, bool *oom)
{
	const struct rdr_info *info = rdr_info(ps->r);

	*oom = false;
	if (ev->attr < 0 || (size_t)ev->attr >= info->nr_attrs ||
	    info->attrs[ev->attr].type != PERF_TYPE_TRACEPOINT)
		return false;
	if (!ps->tpf) {
		ps->tpf = tpfields_new(info, ps->o->tp_fields, ps->o->nr_tp_fields);
		*oom = !ps->tpf;
	}
	return ps->tpf != NULL;
}

/*
 * What decides the sample's field labels, for its key (tpfields_key;
 * {0, 0}: none): decoded only when the key is new (pass_fields). false
 * when out of memory.
 */
static bool pass_fields_key(struct pass *ps, const struct rdr_event *ev, struct hmap_fp *fk)
{
	bool oom;

	fk->lo = fk->hi = 0;
	if (pass_tracepoint(ps, ev, &oom) && !ps->o->no_labels)
		*fk = tpfields_key(ps->tpf, ev->attr, &ev->u.sample);
	return !oom;
}

/*
 * The sample's tracepoint field labels (a tpfields value list; 0: none),
 * UINT32_MAX when out of memory; after pass_fields_key.
 */
static uint32_t pass_fields(struct pass *ps, const struct rdr_event *ev)
{
	if (!ps->tpf || ps->o->no_labels)
		return 0;
	return tpfields_of(ps->tpf, ev->attr, &ev->u.sample);
}

/*
 * A tracepoint event's field values for the JFR: the value list's labels
 * placed in the profile's label pool (once per list), as that place + 1;
 * 0 for none, UINT32_MAX when out of memory.
 */
static uint32_t pass_field_set(struct pass *ps, uint32_t fields)
{
	const struct tpfields_label *fl;
	struct prof_label lb[PROF_MAX_FIELDS];
	size_t n;
	uint32_t place;

	if (!fields || !ps->tpf)
		return 0;
	if (fields < ps->nr_field_sets && ps->field_sets[fields])
		return ps->field_sets[fields];
	fl = tpfields_labels(ps->tpf, fields, &n);
	memset(lb, 0, sizeof(lb));
	for (size_t i = 0; i < n && i < PROF_MAX_FIELDS; i++) {
		lb[i].key = prof_str(ps->p, fl[i].name);
		if (fl[i].str)
			lb[i].str = prof_str(ps->p, fl[i].str);
		else
			lb[i].num = fl[i].num;
	}
	place = prof_label_set(ps->p, lb, (uint32_t)(n < PROF_MAX_FIELDS ? n : PROF_MAX_FIELDS));
	if (place == UINT32_MAX)
		return UINT32_MAX;
	if (fields >= ps->nr_field_sets) {
		size_t nn = (size_t)fields * 2 + 16;
		uint32_t *m = realloc(ps->field_sets, nn * sizeof(*m));

		if (!m)
			return UINT32_MAX;
		memset(m + ps->nr_field_sets, 0, (nn - ps->nr_field_sets) * sizeof(*m));
		ps->field_sets = m;
		ps->nr_field_sets = nn;
	}
	ps->field_sets[fields] = place + 1;
	return place + 1;
}

/* What an attr's samples mean to the off-CPU accounting (by the one event-name matcher). */
enum attr_role { ROLE_NONE, ROLE_SCHED_SWITCH, ROLE_OFFCPU_TIME };

static enum attr_role pass_attr_role(struct pass *ps, int attr)
{
	const struct rdr_info *info = rdr_info(ps->r);
	const struct rdr_attr *a;
	enum attr_role role = ROLE_NONE;

	if (attr < 0 || (size_t)attr >= info->nr_attrs)
		return ROLE_NONE;
	if ((size_t)attr < ps->nr_roles && ps->roles[attr])
		return (enum attr_role)(ps->roles[attr] - 1);
	a = &info->attrs[attr];
	if (a->name && a->type == PERF_TYPE_TRACEPOINT && evname_matches(a->name, "sched:sched_switch"))
		role = ROLE_SCHED_SWITCH;
	else if (a->name && evname_matches(a->name, "offcpu-time"))
		role = ROLE_OFFCPU_TIME;
	if ((size_t)attr >= ps->nr_roles) {
		size_t n = (size_t)attr + 8;
		uint8_t *r = realloc(ps->roles, n);

		if (!r)
			return role;
		memset(r + ps->nr_roles, 0, n - ps->nr_roles);
		ps->roles = r;
		ps->nr_roles = n;
	}
	ps->roles[attr] = (uint8_t)(role + 1);
	return role;
}

/* tid runs at t: an off-CPU interval of it that was pending ends, and is spooled as an event. */
static enum conv_err pass_offcpu_run(struct pass *ps, uint32_t tid, uint64_t t)
{
	struct offcpu_interval iv;
	bool oom;

	if (!ps->off || !offcpu_run(ps->off, tid, t, &iv, &oom))
		return ps->off && oom ? CONV_E_NOMEM : CONV_E_OK;
	if (ps->p->events) {
		const struct scache_key *k = &ps->c.keys[iv.key];
		struct prof_event pe;

		pe.time = iv.start;
		pe.period = iv.ns;
		pe.weight = 0;
		pe.stack = k->stack;
		pe.thread = k->thread;
		pe.cpu = UINT32_MAX;
		pe.event = PROF_EVENT_OFFCPU;
		pe.label = iv.label;
		prof_events_add(ps->p->events, &pe);
	}
	return CONV_E_OK;
}

/*
 * A kept sample's part in off-CPU time (key: its sample key): its thread
 * runs, so its pending interval ends; a sched_switch also ends the next
 * thread's (system-wide recordings name it) and starts one for its own,
 * charged to this sample's stack, unless the thread is dead; an
 * offcpu-time sample (perf record --off-cpu) is an interval of PERIOD ns
 * that ended at its time.
 */
static enum conv_err pass_offcpu_sample(struct pass *ps, const struct rdr_event *ev, uint32_t key)
{
	const struct rdr_sample *s = &ev->u.sample;
	enum attr_role role = pass_attr_role(ps, ev->attr);
	const char *state;
	int64_t next;
	uint32_t label;
	enum conv_err err;

	if (!(s->sample_type & PERF_SAMPLE_TIME))
		return CONV_E_OK;
	if (role != ROLE_NONE && !ps->off && !(ps->off = offcpu_new()))
		return CONV_E_NOMEM;
	err = pass_offcpu_run(ps, s->tid, s->time);
	if (err || role == ROLE_NONE)
		return err;
	if (role == ROLE_OFFCPU_TIME) {
		if (!offcpu_add(ps->off, key, 0, s->period))
			return CONV_E_NOMEM;
		if (ps->p->events) {
			struct prof_event pe;

			pe.time = s->time >= s->period ? s->time - s->period : 0;
			pe.period = s->period;
			pe.weight = 0;
			pe.stack = ps->c.keys[key].stack;
			pe.thread = ps->c.keys[key].thread;
			pe.cpu = UINT32_MAX;
			pe.event = PROF_EVENT_OFFCPU;
			pe.label = 0;
			prof_events_add(ps->p->events, &pe);
		}
		return CONV_E_OK;
	}
	if (!ps->tpf || !tpfields_switch(ps->tpf, ev->attr, s, &state, &next))
		return CONV_E_OK;
	if (next > 0) {
		err = pass_offcpu_run(ps, (uint32_t)next, s->time);
		if (err)
			return err;
	}
	/* the idle task, and a thread that exits, never wait to run */
	if (!s->tid || state[0] == 'X' || state[0] == 'Z')
		return CONV_E_OK;
	label = state[0] ? prof_str(ps->p, state) : 0;
	if (!offcpu_leave(ps->off, s->tid, s->time, key, label))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

/*
 * A kept sample: a sample seen before (same process generation and space
 * versions, thread, event, cpu and raw addresses) takes the earlier answer;
 * a new one is resolved frame by frame. Then it is counted and spooled.
 */
static enum conv_err pass_sample(struct pass *ps, const struct rdr_event *ev)
{
	struct rdr_event unwound;
	const struct unwinding_built *built;
	const struct rdr_sample *s;
	struct scache *c = &ps->c;
	struct pm_sample_ctx sc;
	struct scache_key k;
	struct scache_id id;
	uint32_t lk, found = UINT32_MAX;
	bool known;
	enum conv_err err;

	if (!unwinding_pick(ps->uw, rdr_info(ps->r), &ev, &unwound, &built))
		return CONV_E_NOMEM;
	s = &ev->u.sample;
	procmap_sample_ctx(ps->pm, ev, &sc);
	known = sc.has_proc && !ps->o->no_sample_cache;
	lk = (s->sample_type & PERF_SAMPLE_CPU ? s->cpu : s->tid) % SCACHE_LAST_KEYS;
	memset(&k, 0, sizeof(k));
	memset(&id, 0, sizeof(id));
	id.walk = built;
	id.tid = s->tid;
	k.comm = sc.comm;
	k.attr = (uint32_t)ev->attr;
	/* no CPU field recorded: no cpu label rather than a made-up cpu 0 */
	k.cpu = !ps->o->label_cpu ? 0 : s->sample_type & PERF_SAMPLE_CPU ? s->cpu : UINT32_MAX;
	id.mode = (ev->misc & PERF_MISC_CPUMODE_MASK) | (s->sample_type & PERF_SAMPLE_IP ? SCACHE_HAS_IP : 0);
	if (!pass_fields_key(ps, ev, &id.fields))
		return CONV_E_NOMEM;
	if (known) {
		id.proc = sc.key.proc;
		id.version = sc.key.version;
		id.kversion = sc.key.kversion;
		scache_key_fingerprint(&k, &id, s);
		found = scache_key_find(c, &id, lk);
	}
	if (found != UINT32_MAX) {
		struct scache_key *e = &c->keys[found];

		e->count++;
		e->weight = satadd_u63(e->weight, s->period ? s->period : 1);
		k.thread = e->thread;
		k.stack = e->stack;
		k.fields = e->fields;
		if (ps->tpf)
			tpfields_repeat(ps->tpf, ev->attr, s, k.fields);
		procmap_count_sample(ps->pm, id.proc);
	} else {
		k.fields = pass_fields(ps, ev);
		if (k.fields == UINT32_MAX)
			return CONV_E_NOMEM;
		err = pass_new_sample(ps, ev, &k, &id, known, lk, &found);
		if (err)
			return err;
	}
	err = pass_offcpu_sample(ps, ev, found);
	if (err)
		return err;
	if (ev->attr >= 0 && (size_t)ev->attr >= ps->nr_kept) {
		size_t nn = (size_t)ev->attr + 8;
		uint64_t *nk = realloc(ps->kept_by_attr, nn * sizeof(*nk));

		if (!nk)
			return CONV_E_NOMEM;
		memset(nk + ps->nr_kept, 0, (nn - ps->nr_kept) * sizeof(*nk));
		ps->kept_by_attr = nk;
		ps->nr_kept = nn;
	}
	if (ev->attr >= 0)
		ps->kept_by_attr[ev->attr]++;
	if (ps->p->events) {
		struct prof_event pe;

		pe.time = s->time;
		pe.period = s->period ? s->period : 1;
		pe.weight = s->weight;
		pe.stack = k.stack;
		pe.thread = k.thread;
		pe.cpu = s->sample_type & PERF_SAMPLE_CPU ? s->cpu : UINT32_MAX;
		pe.event = (uint32_t)ev->attr;
		pe.label = pass_field_set(ps, k.fields);
		if (pe.label == UINT32_MAX)
			return CONV_E_NOMEM;
		prof_events_add(ps->p->events, &pe);
	}
	ps->st->samples++;
	return CONV_E_OK;
}

/* A side-band record: a switch-in ends an off-CPU interval of the thread (it runs again). */
static enum conv_err pass_record(void *ctx, const struct rdr_event *ev)
{
	struct pass *ps = ctx;

	if ((ev->type == PERF_REC_SWITCH || ev->type == PERF_REC_SWITCH_CPU_WIDE) &&
	    !(ev->misc & PERF_MISC_SWITCH_OUT) && ev->has_time && (ev->sid.fields & RDR_SID_TID))
		return pass_offcpu_run(ps, ev->sid.tid, ev->time);
	return CONV_E_OK;
}

/* A sample read: noted for the filters' messages, dropped by them or kept (pass_sample). */
static enum conv_err pass_read_sample(void *ctx, const struct rdr_event *ev)
{
	struct pass *ps = ctx;
	const struct convert_filter *f = &ps->o->filter;

	if (!ps->have_first && ev->u.sample.time) {
		ps->first_time = ev->u.sample.time;
		ps->have_first = true;
	}
	if (f->nr_pids || f->nr_tids || f->nr_comms)
		filter_note_seen(&ps->st->seen, f, ps->pm, &ev->u.sample);
	if (!filter_keep(f, ps->pm, rdr_info(ps->r), ev, ps->first_time)) {
		ps->st->samples_filtered++;
		return CONV_E_OK;
	}
	return pass_sample(ps, ev);
}

static void pass_read_progress(void *ctx, uint64_t records)
{
	struct pass *ps = ctx;

	pass_report(ps->o, ps->r, CONVERT_READING, records);
}

/* The reading pass (readpass_run): every record, in time order, to the process model or pass_sample. */
static enum conv_err pass_read(struct pass *ps)
{
	struct readpass_hooks h = {
		.ctx = ps,
		.record = pass_record,
		.sample = pass_read_sample,
		.progress = ps->o->progress ? pass_read_progress : NULL,
	};
	uint64_t t0 = clock_now_ns();
	enum conv_err err = readpass_run(ps->rp, &h, &ps->nrec);

	if (err)
		return err;
	if (ps->off)
		offcpu_finish(ps->off);
	if (ps->p->events) {
		err = prof_events_finish(ps->p->events, ps->diag);
		if (err)
			return err;
	}
	scache_drop_indexes(&ps->c);
	ps->st->ns_read = clock_now_ns() - t0;
	return CONV_E_OK;
}

/*
 * Symbolization starts on the workers beside this thread, which meanwhile
 * builds the model's stacks and samples: they need no symbols (a frame's
 * location will be its index). pass_locations joins them.
 */
static void pass_start_symbolize(struct pass *ps)
{
	if (ps->o->progress)
		pass_report(ps->o, ps->r, CONVERT_SYMBOLIZING, ps->nrec);
	readpass_finish(ps->rp);
	/* where the build-ids came from, once the last ones are known (pipe mode: at the end) */
	for (uint32_t i = 0; i < procmap_mapping_count(ps->pm); i++)
		ps->st->frames_by_bid[procmap_mapping(ps->pm, i)->bid_source] += ps->map_hits[i];
	ps->t_sym = clock_now_ns();
	symjob_start(ps->sj);
}

static void pass_release(struct pass *ps)
{
	free(ps->kept_by_attr);
	free(ps->map_ids);
	free(ps->map_hits);
	scache_release(&ps->c);
	tpfields_free(ps->tpf);
	offcpu_free(ps->off);
	free(ps->roles);
	free(ps->field_sets);
	readpass_free(ps->rp);
}

enum conv_err convert_run(struct rdr *r, const struct convert_opts *o, struct prof *p,
			  struct convert_stats *st, struct conv_diag *diag)
{
	struct pass ps;
	enum conv_err err = pass_init(&ps, r, o, p, st, diag);

	if (!err)
		err = pass_read(&ps);
	if (!err)
		err = cstats_count_frames(&ps);
	if (!err) {
		cstats_count_threads(&ps);
		pass_start_symbolize(&ps);
		err = tomodel_build(&ps);
	}
	if (!err)
		err = tomodel_locations(&ps);
	if (!err)
		tomodel_facts(&ps);
	if (ps.uw)
		st->unwind = *unwinding_stats(ps.uw);
	if (ps.off)
		st->offcpu = *offcpu_stats(ps.off);
	if (ps.tpf)
		st->tracepoints = *tpfields_stats(ps.tpf);
	pass_release(&ps);
	return err;
}

enum conv_err convert_plan(struct rdr *r, const struct convert_opts *o, struct conv_diag *diag)
{
	struct convert_opts po = *o;
	struct convert_stats st;
	struct prof p;
	struct pass ps;
	enum conv_err err;

	if (!o->sj.objects)
		return CONV_E_INVAL;
	po.sj.plan = true;
	po.sj.jobs = 1; /* nothing to look up: no workers */
	po.keep_events = false; /* the events are the later pass's */
	po.progress = NULL;
	po.sj.progress = NULL;
	prof_init(&p);
	err = pass_init(&ps, r, &po, &p, &st, diag);
	if (!err)
		err = pass_read(&ps);
	if (!err) {
		readpass_finish(ps.rp);
		err = symjob_run(ps.sj, diag);
	}
	pass_release(&ps);
	prof_release(&p);
	convert_stats_release(&st);
	return err;
}
