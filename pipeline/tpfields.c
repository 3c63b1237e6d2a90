#include "pipeline/tpfields.h"

#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "core/vec.h"
#include "model/profile.h"
#include "pipeline/evname.h"
#include "reader/perf_abi.h"
#include "tracefmt/tracefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fields a sample is labelled with at most: a few, so that labels group rather than split. */
#define TPF_MAX PROF_MAX_FIELDS
/* A label value's longest text (comm is 16 bytes; longer values are cut, never read past) */
#define TPF_TEXT 128

/*
 * The default fields per event ("sys:*" for a whole system); '#' marks a
 * numeric label. prev_state is the text perf prints (S, D, R+, ...).
 */
static const struct {
	const char *event;
	const char *fields;
} tpf_defaults[] = {
	{ "sched:sched_switch", "prev_state,next_comm,next_pid#" },
	{ "sched:sched_wakeup", "comm,pid#" },
	{ "sched:sched_waking", "comm,pid#" },
	{ "sched:sched_wakeup_new", "comm,pid#" },
	{ "raw_syscalls:sys_enter", "syscall" },
	{ "raw_syscalls:sys_exit", "syscall,ret#" },
	{ "syscalls:*", "syscall" },
	{ "block:*", "rwbs" },
	{ "exceptions:page_fault_user", "error_code#" },
	{ "exceptions:page_fault_kernel", "error_code#" },
};

/* What an attr's samples are labelled with. */
struct tpf_attr {
	const struct tfmt_event *ev;
	size_t nr;
	int idx[TPF_MAX];
	bool num[TPF_MAX];
	const char *names[TPF_MAX]; /* interned */
	bool sched_switch;
	int prev_state, next_pid; /* sched_switch's fields, -1 none */
	bool by_value; /* every field a number (or the syscall pseudo-field): tpfields_key */
};

/*
 * A sched_switch record's facts (tpfields_switch), by its raw data's
 * fingerprint: the state is the print fmt's rendering, too costly per sample.
 */
struct tpf_switch {
	struct hmap_fp fp;
	int attr;
	const char *state;
	int64_t next_pid;
};

/* An interned value list: its attr and its labels in the pool. */
struct tpf_list {
	uint32_t attr, nr, first;
};

struct tpfields {
	struct tfmt *fmt;
	struct tpf_attr *attrs;
	size_t nr_attrs;
	struct tpf_list *lists; /* [0] is "no labels" */
	size_t nr_lists, cap_lists;
	struct tpfields_label *pool;
	size_t nr_pool, cap_pool;
	struct strtab strs;
	struct hidx idx;
	struct tpf_switch *sw; /* distinct sched_switch records' facts */
	size_t nr_sw, cap_sw;
	struct hidx sw_idx;
	struct tpfields_stats st;
};

/* Adds the fields of a list ("a,b#,c": '#' a numeric label) that the format has. */
static void tpf_add_fields(struct tpfields *f, struct tpf_attr *a, const char *p)
{
	a->nr = 0;
	while (*p && a->nr < TPF_MAX) {
		size_t len = strcspn(p, ",#");
		char field[64];
		int i;

		if (len && len < sizeof(field)) {
			memcpy(field, p, len);
			field[len] = '\0';
			i = tfmt_field_index(a->ev, field);
			if (i >= 0) {
				a->idx[a->nr] = i;
				a->num[a->nr] = p[len] == '#';
				a->names[a->nr] = strtab_get(&f->strs, strtab_intern_cstr(&f->strs, field));
				a->nr++;
			}
		}
		p += len;
		p += strspn(p, ",#");
	}
	/* the syscall's name is its number's: decided by the number alone */
	a->by_value = true;
	for (size_t i = 0; i < a->nr; i++)
		if (!a->num[i] && (size_t)a->idx[i] != tfmt_nr_fields(a->ev))
			a->by_value = false;
}

/* The fields of attr: the last --tp-fields spec naming its event, else the defaults. */
static void tpf_choose(struct tpfields *f, struct tpf_attr *a, const char *name, const char *const *specs,
		       size_t nr_specs)
{
	for (size_t i = nr_specs; i-- > 0;) {
		const char *colon = strrchr(specs[i], ':');
		char event[200];

		/* EVENT is "sys:name" (or "sys:*"): the fields follow its last colon */
		if (!colon || (size_t)(colon - specs[i]) >= sizeof(event))
			continue;
		memcpy(event, specs[i], (size_t)(colon - specs[i]));
		event[colon - specs[i]] = '\0';
		if (evname_matches(name, event)) {
			tpf_add_fields(f, a, colon + 1);
			return;
		}
	}
	for (size_t d = 0; d < sizeof(tpf_defaults) / sizeof(tpf_defaults[0]); d++) {
		if (evname_matches(name, tpf_defaults[d].event)) {
			tpf_add_fields(f, a, tpf_defaults[d].fields);
			return;
		}
	}
}

struct tpfields *tpfields_new(const struct rdr_info *info, const char *const *specs, size_t nr_specs)
{
	struct tpfields *f = calloc(1, sizeof(*f));
	const struct tfmt_stats *ts;
	struct conv_diag d;

	if (!f)
		return NULL;
	strtab_init(&f->strs);
	hidx_init(&f->idx);
	hidx_init(&f->sw_idx);
	f->attrs = calloc(info->nr_attrs ? info->nr_attrs : 1, sizeof(*f->attrs));
	if (!f->attrs || !vec_reserve((void **)&f->lists, &f->cap_lists, 16, sizeof(*f->lists))) {
		tpfields_free(f);
		return NULL;
	}
	f->nr_attrs = info->nr_attrs;
	memset(&f->lists[0], 0, sizeof(f->lists[0]));
	f->nr_lists = 1;
	/* formats libtraceevent cannot take are counted by tracefmt; their events get no labels */
	memset(&d, 0, sizeof(d));
	if (!info->tracing_data || tfmt_open(info->tracing_data, info->tracing_data_len, &f->fmt, &d)) {
		snprintf(f->st.first_refusal, sizeof(f->st.first_refusal), "%s", d.msg);
		return f;
	}
	ts = tfmt_stats(f->fmt);
	f->st.formats = ts->formats;
	f->st.parsed = ts->parsed;
	f->st.refused = ts->refused;
	if (ts->refused)
		snprintf(f->st.first_refusal, sizeof(f->st.first_refusal), "%s", d.msg);
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *ra = &info->attrs[i];

		if (ra->type != PERF_TYPE_TRACEPOINT)
			continue;
		f->attrs[i].ev = tfmt_event(f->fmt, ra->config);
		f->attrs[i].prev_state = f->attrs[i].next_pid = -1;
		if (f->attrs[i].ev) {
			const char *name = ra->name ? ra->name : tfmt_event_name(f->attrs[i].ev);

			tpf_choose(f, &f->attrs[i], name, specs, nr_specs);
			if (!strcmp(tfmt_event_name(f->attrs[i].ev), "sched:sched_switch")) {
				f->attrs[i].sched_switch = true;
				f->attrs[i].prev_state = tfmt_field_index(f->attrs[i].ev, "prev_state");
				f->attrs[i].next_pid = tfmt_field_index(f->attrs[i].ev, "next_pid");
			}
		}
	}
	return f;
}

void tpfields_free(struct tpfields *f)
{
	if (!f)
		return;
	tfmt_free(f->fmt);
	free(f->attrs);
	free(f->lists);
	free(f->pool);
	strtab_release(&f->strs);
	hidx_release(&f->idx);
	free(f->sw);
	hidx_release(&f->sw_idx);
	free(f);
}

static bool tpf_same(const struct tpfields *f, const struct tpf_list *l, uint32_t attr,
		     const struct tpfields_label *lb, size_t n)
{
	if (l->attr != attr || l->nr != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct tpfields_label *e = &f->pool[l->first + i];

		/* names and texts are interned: equal strings are equal pointers */
		if (e->name != lb[i].name || e->str != lb[i].str || e->num != lb[i].num)
			return false;
	}
	return true;
}

uint32_t tpfields_of(struct tpfields *f, int attr, const struct rdr_sample *s)
{
	struct tpfields_label lb[TPF_MAX];
	const struct tpf_attr *a;
	struct hidx_iter it;
	uint64_t h;
	uint32_t id;

	if (attr < 0 || (size_t)attr >= f->nr_attrs || !f->attrs[attr].nr || !s->raw)
		return 0;
	a = &f->attrs[attr];
	h = hmap_mix(17, (uint64_t)attr);
	for (size_t i = 0; i < a->nr; i++) {
		char text[TPF_TEXT];

		lb[i].name = a->names[i];
		lb[i].str = NULL;
		lb[i].num = 0;
		if (a->num[i]) {
			if (!tfmt_field_num(a->ev, (size_t)a->idx[i], s->raw, s->raw_size, &lb[i].num))
				goto undecoded;
		} else {
			if (!tfmt_field_text(a->ev, (size_t)a->idx[i], s->raw, s->raw_size, text, sizeof(text)))
				goto undecoded;
			id = strtab_intern_cstr(&f->strs, text);
			if (id == UINT32_MAX)
				return UINT32_MAX;
			lb[i].str = strtab_get(&f->strs, id);
		}
		h = hmap_mix(hmap_mix(h, (uint64_t)(uintptr_t)lb[i].str), (uint64_t)lb[i].num);
	}
	for (id = hidx_first(&f->idx, h, &it); id != HIDX_NONE; id = hidx_next(&f->idx, &it))
		if (tpf_same(f, &f->lists[id], (uint32_t)attr, lb, a->nr))
			return id;
	if (f->nr_lists >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&f->lists, &f->cap_lists, f->nr_lists + 1, sizeof(*f->lists)) ||
	    !vec_reserve((void **)&f->pool, &f->cap_pool, f->nr_pool + a->nr, sizeof(*f->pool)))
		return UINT32_MAX;
	id = (uint32_t)f->nr_lists;
	f->lists[id].attr = (uint32_t)attr;
	f->lists[id].nr = (uint32_t)a->nr;
	f->lists[id].first = (uint32_t)f->nr_pool;
	memcpy(f->pool + f->nr_pool, lb, a->nr * sizeof(*lb));
	f->nr_pool += a->nr;
	if (!hidx_add(&f->idx, h, id))
		return UINT32_MAX;
	f->nr_lists++;
	return id;

undecoded:
	f->st.samples_undecoded++;
	return 0;
}

struct hmap_fp tpfields_key(const struct tpfields *f, int attr, const struct rdr_sample *s)
{
	const struct tpf_attr *a;
	struct hmap_fp none = { 0, 0 };
	uint64_t w[2 * TPF_MAX];
	size_t n = 0;

	if (attr < 0 || (size_t)attr >= f->nr_attrs || !f->attrs[attr].nr || !s->raw)
		return none;
	a = &f->attrs[attr];
	if (!a->by_value)
		return hmap_fingerprint(s->raw, s->raw_size);
	for (size_t i = 0; i < a->nr; i++) {
		int64_t v = 0;
		bool ok = tfmt_field_num(a->ev, (size_t)a->idx[i], s->raw, s->raw_size, &v);

		w[n++] = ok;
		w[n++] = (uint64_t)v;
	}
	return hmap_fingerprint(w, n * sizeof(w[0]));
}

void tpfields_repeat(struct tpfields *f, int attr, const struct rdr_sample *s, uint32_t id)
{
	if (!id && attr >= 0 && (size_t)attr < f->nr_attrs && f->attrs[attr].nr && s->raw)
		f->st.samples_undecoded++;
}

const char *const *tpfields_names(const struct tpfields *f, int attr, const bool **numeric, size_t *n)
{
	if (attr < 0 || (size_t)attr >= f->nr_attrs || !f->attrs[attr].nr) {
		*n = 0;
		*numeric = NULL;
		return NULL;
	}
	*n = f->attrs[attr].nr;
	*numeric = f->attrs[attr].num;
	return f->attrs[attr].names;
}

const struct tpfields_label *tpfields_labels(const struct tpfields *f, uint32_t id, size_t *n)
{
	if (!id || id >= f->nr_lists) {
		*n = 0;
		return NULL;
	}
	*n = f->lists[id].nr;
	return f->pool + f->lists[id].first;
}

/* Decodes a sched_switch record's facts (a: its attr's). */
static void tpf_switch_decode(struct tpfields *f, const struct tpf_attr *a, const struct rdr_sample *s,
			      const char **state, int64_t *next_pid)
{
	char text[TPF_TEXT];
	uint32_t id;

	if (a->prev_state >= 0 &&
	    tfmt_field_text(a->ev, (size_t)a->prev_state, s->raw, s->raw_size, text, sizeof(text)) &&
	    (id = strtab_intern_cstr(&f->strs, text)) != STRTAB_NONE)
		*state = strtab_get(&f->strs, id);
	if (a->next_pid >= 0 && !tfmt_field_num(a->ev, (size_t)a->next_pid, s->raw, s->raw_size, next_pid))
		*next_pid = -1;
}

bool tpfields_switch(struct tpfields *f, int attr, const struct rdr_sample *s, const char **state,
		     int64_t *next_pid)
{
	struct hmap_fp fp;
	struct hidx_iter it;
	struct tpf_switch *e;

	*state = "";
	*next_pid = -1;
	if (attr < 0 || (size_t)attr >= f->nr_attrs || !f->attrs[attr].sched_switch || !s->raw)
		return false;
	/* the facts are the raw data's: decoded once per distinct record */
	fp = hmap_fingerprint(s->raw, s->raw_size);
	for (uint32_t i = hidx_first(&f->sw_idx, fp.lo, &it); i != HIDX_NONE; i = hidx_next(&f->sw_idx, &it)) {
		e = &f->sw[i];
		if (e->fp.lo == fp.lo && e->fp.hi == fp.hi && e->attr == attr) {
			*state = e->state;
			*next_pid = e->next_pid;
			return true;
		}
	}
	tpf_switch_decode(f, &f->attrs[attr], s, state, next_pid);
	/* out of memory: decoded again next time */
	if (f->nr_sw < UINT32_MAX - 1 &&
	    vec_reserve((void **)&f->sw, &f->cap_sw, f->nr_sw + 1, sizeof(*f->sw)) &&
	    hidx_add(&f->sw_idx, fp.lo, (uint32_t)f->nr_sw)) {
		e = &f->sw[f->nr_sw++];
		e->fp = fp;
		e->attr = attr;
		e->state = *state;
		e->next_pid = *next_pid;
	}
	return true;
}

const struct tpfields_stats *tpfields_stats(const struct tpfields *f)
{
	return &f->st;
}
