#include "pipeline/offcpu.h"

#include "core/satadd.h"
#include "core/hmap.h"
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

/* A thread switched out and not yet seen running again. */
struct offcpu_pending {
	uint32_t key, label;
	uint64_t start;
	bool open;
};

struct offcpu {
	struct hmap by_tid;               /* tid -> index into pending */
	struct offcpu_pending *pending;
	size_t nr_pending, cap_pending;
	struct hmap by_key;               /* key << 32 | label -> index into totals */
	struct offcpu_total *totals;
	size_t nr_totals, cap_totals;
	struct offcpu_stats st;
};

struct offcpu *offcpu_new(void)
{
	struct offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	hmap_init(&o->by_tid);
	hmap_init(&o->by_key);
	return o;
}

void offcpu_free(struct offcpu *o)
{
	if (!o)
		return;
	hmap_release(&o->by_tid);
	hmap_release(&o->by_key);
	free(o->pending);
	free(o->totals);
	free(o);
}

static bool offcpu_charge(struct offcpu *o, uint32_t key, uint32_t label, uint64_t ns)
{
	uint64_t k = (uint64_t)key << 32 | label, *slot = hmap_get(&o->by_key, k);
	struct offcpu_total *t;

	if (!slot) {
		if (!vec_reserve((void **)&o->totals, &o->cap_totals, o->nr_totals + 1, sizeof(*o->totals)) ||
		    !hmap_put(&o->by_key, k, o->nr_totals))
			return false;
		t = &o->totals[o->nr_totals++];
		memset(t, 0, sizeof(*t));
		t->key = key;
		t->label = label;
	} else {
		t = &o->totals[*slot];
	}
	t->n++;
	t->ns = satadd_u63(t->ns, ns);
	o->st.intervals++;
	o->st.ns = satadd_u63(o->st.ns, ns);
	return true;
}

bool offcpu_run(struct offcpu *o, uint32_t tid, uint64_t t, struct offcpu_interval *iv, bool *oom)
{
	uint64_t *slot = hmap_get(&o->by_tid, tid);
	struct offcpu_pending *p;

	*oom = false;
	if (!slot || !o->pending[*slot].open)
		return false;
	p = &o->pending[*slot];
	p->open = false;
	if (t < p->start) {
		o->st.unordered++;
		return false;
	}
	iv->key = p->key;
	iv->label = p->label;
	iv->start = p->start;
	iv->ns = t - p->start;
	*oom = !offcpu_charge(o, p->key, p->label, iv->ns);
	return !*oom;
}

bool offcpu_leave(struct offcpu *o, uint32_t tid, uint64_t t, uint32_t key, uint32_t label)
{
	uint64_t *slot = hmap_get(&o->by_tid, tid);
	struct offcpu_pending *p;

	if (!slot) {
		if (!vec_reserve((void **)&o->pending, &o->cap_pending, o->nr_pending + 1,
				 sizeof(*o->pending)) ||
		    !hmap_put(&o->by_tid, tid, o->nr_pending))
			return false;
		p = &o->pending[o->nr_pending++];
	} else {
		p = &o->pending[*slot];
		/* switched out again without a sign that it ran: it did, so that wait is unknown */
		if (p->open)
			o->st.unended++;
	}
	p->key = key;
	p->label = label;
	p->start = t;
	p->open = true;
	return true;
}

bool offcpu_add(struct offcpu *o, uint32_t key, uint32_t label, uint64_t ns)
{
	return offcpu_charge(o, key, label, ns);
}

void offcpu_finish(struct offcpu *o)
{
	for (size_t i = 0; i < o->nr_pending; i++)
		if (o->pending[i].open) {
			o->pending[i].open = false;
			o->st.unended++;
		}
}

const struct offcpu_total *offcpu_totals(const struct offcpu *o, size_t *n)
{
	*n = o->nr_totals;
	return o->totals;
}

const struct offcpu_stats *offcpu_stats(const struct offcpu *o)
{
	return &o->st;
}
