#include "views/diff.h"

#include "core/vec.h"
#include "model/profile.h"
#include "views/top.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every function of p with a value (view_top's entries, none left out). */
static enum conv_err diff_top(struct view_top *t, const struct prof *p, size_t type)
{
	/* at most one entry per function and one per object ("[libfoo.so]") */
	return view_top_build(t, p, type, p->nr_functions + p->nr_mappings + 2);
}

/* The entry of name, added (zeroed) when new; NULL when out of memory. */
static struct view_diff_ent *diff_ent(struct view_diff *d, size_t *cap, const char *name)
{
	uint32_t id = strtab_intern_cstr(&d->strs, name);

	if (id == STRTAB_NONE)
		return NULL;
	if (id < d->nr)
		return &d->ents[id];
	if (!vec_reserve((void **)&d->ents, cap, (size_t)id + 1, sizeof(*d->ents)))
		return NULL;
	memset(&d->ents[d->nr], 0, ((size_t)id + 1 - d->nr) * sizeof(*d->ents));
	d->nr = (size_t)id + 1;
	return &d->ents[id];
}

/*
 * The standard error of a difference of shares, Agresti and Caffo's: each
 * side as if it had one sample more in the function and one more outside
 * it. Plain sqrt(p (1 - p) / n) is 0 for a function with no sample on
 * either side, and too small for a handful of samples, where run-to-run
 * moves are largest relative to the share.
 */
static double share_se(int64_t x1, int64_t n1, int64_t x2, int64_t n2)
{
	double a = ((double)x1 + 1) / ((double)n1 + 2), b = ((double)x2 + 1) / ((double)n2 + 2);

	return sqrt(a * (1 - a) / ((double)n1 + 2) + b * (1 - b) / ((double)n2 + 2));
}

static void diff_share(struct view_diff_share *s, const struct view_diff *d)
{
	double se;

	if (d->counts) {
		s->base_v = (double)s->base;
		s->new_v = (double)s->new;
		/* Poisson counts; one sample each at least, for the same reason */
		se = sqrt((double)s->base + (double)s->new + 2);
	} else {
		s->base_v = d->base_all > 0 ? (double)s->base / (double)d->base_all : 0;
		s->new_v = d->new_all > 0 ? (double)s->new / (double)d->new_all : 0;
		se = share_se(s->base, d->base_all, s->new, d->new_all);
	}
	s->change = s->new_v - s->base_v;
	s->noise = d->z * se;
	s->sig = s->change / se;
}

/* Whether a share grew (1) or shrank (-1) beyond its noise bound, or neither (0). */
static int share_moved(const struct view_diff_share *s)
{
	return s->change > s->noise ? 1 : s->change < -s->noise ? -1 : 0;
}

/* An entry's order: what grew beyond the noise, then what shrank, then the rest. */
static int ent_rank(const struct view_diff_ent *e)
{
	return e->moved > 0 ? 0 : e->moved < 0 ? 1 : 2;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct view_diff_ent *x = a, *y = b;

	if (ent_rank(x) != ent_rank(y))
		return ent_rank(x) - ent_rank(y);
	if (x->sig != y->sig)
		return x->sig < y->sig ? 1 : -1;
	return strcmp(x->name, y->name);
}

enum conv_err view_diff_build(struct view_diff *d, const struct prof *base, size_t base_type,
			      const struct prof *new, size_t new_type, bool counts, double z)
{
	struct view_top tb, tn;
	size_t cap = 0;
	enum conv_err err;

	memset(d, 0, sizeof(*d));
	strtab_init(&d->strs);
	d->counts = counts;
	d->z = z;
	err = diff_top(&tb, base, base_type);
	if (err)
		return err;
	err = diff_top(&tn, new, new_type);
	if (err) {
		view_top_release(&tb);
		return err;
	}
	d->base_all = tb.all;
	d->new_all = tn.all;
	/* by total: every function with a self value has a total too */
	for (size_t side = 0; side < 2 && !err; side++) {
		const struct view_top *t = side ? &tn : &tb;

		for (size_t i = 0; i < t->nr_total && !err; i++) {
			struct view_diff_ent *e = diff_ent(d, &cap, t->by_total[i].name);

			if (!e) {
				err = CONV_E_NOMEM;
				break;
			}
			*(side ? &e->total.new : &e->total.base) = t->by_total[i].total;
			*(side ? &e->self.new : &e->self.base) = t->by_total[i].self;
		}
	}
	view_top_release(&tb);
	view_top_release(&tn);
	if (err) {
		view_diff_release(d);
		return err;
	}
	for (size_t i = 0; i < d->nr; i++) {
		struct view_diff_ent *e = &d->ents[i];

		e->name = strtab_get(&d->strs, (uint32_t)i);
		diff_share(&e->self, d);
		diff_share(&e->total, d);
		e->sig = fabs(e->self.sig) > fabs(e->total.sig) ? fabs(e->self.sig) : fabs(e->total.sig);
		e->moved = share_moved(&e->self) > 0 || share_moved(&e->total) > 0 ? 1
			   : share_moved(&e->self) < 0 || share_moved(&e->total) < 0 ? -1 : 0;
	}
	qsort(d->ents, d->nr, sizeof(*d->ents), ent_cmp);
	return CONV_E_OK;
}

void view_diff_release(struct view_diff *d)
{
	strtab_release(&d->strs);
	free(d->ents);
	memset(d, 0, sizeof(*d));
}

double view_diff_growth(const struct view_diff_ent *e)
{
	double s = e->self.change - e->self.noise, t = e->total.change - e->total.noise;

	return s > t ? s : t;
}

/* ---- the difference as a profile ---- */

/* The location of frame f of t (made on first use, loc[f] + 1 kept); PROF_NONE when out of memory. */
static uint32_t diff_location(struct prof *out, const struct view_tree *t, uint32_t *loc, uint32_t f)
{
	const struct view_frame *fr = &t->names.frames[f];
	struct prof_line ln;
	uint32_t name, file, fn, l;

	if (loc[f])
		return loc[f] - 1;
	name = prof_str(out, strtab_get(&t->names.strs, fr->name));
	file = prof_str(out, strtab_get(&t->names.strs, fr->file));
	if (name == PROF_NONE || file == PROF_NONE)
		return PROF_NONE;
	fn = prof_function(out, name, name, file, 0);
	if (fn == PROF_NONE)
		return PROF_NONE;
	memset(&ln, 0, sizeof(ln));
	ln.function = fn;
	ln.line = fr->line;
	l = prof_location_append(out, PROF_NONE, 0, &ln, 1);
	if (l != PROF_NONE)
		loc[f] = l + 1;
	return l;
}

/* The profile's value types, its one event, the pprof::base label's strings. */
static bool diff_types(struct prof *out, const struct view_diff_type *types, size_t nr,
		       struct prof_label *base_label)
{
	struct prof_event_desc e;

	/* one "event" per two types: the model's rule (types 2i, 2i+1) */
	if (!prof_set_events(out, (nr + 1) / 2))
		return false;
	for (size_t i = 0; i < out->nr_types; i++) {
		const struct view_diff_type *ty = &types[i < nr ? i : nr - 1];
		uint32_t tn = prof_str(out, ty->type), un = prof_str(out, ty->unit);

		if (tn == PROF_NONE || un == PROF_NONE)
			return false;
		prof_set_value_type(out, i, tn, un);
	}
	memset(&e, 0, sizeof(e));
	e.name = e.full_name = out->types[0].type;
	prof_set_event(out, 0, &e);
	prof_set_default_type(out, 0, 0);
	memset(base_label, 0, sizeof(*base_label));
	base_label->key = prof_str(out, "pprof::base");
	base_label->str = prof_str(out, "true");
	return base_label->key != PROF_NONE && base_label->str != PROF_NONE;
}

enum conv_err view_diff_model(struct prof *out, const struct view_tree *t,
			      const struct view_diff_type *types, size_t nr)
{
	struct prof_label base_label;
	struct view_walk w;
	uint32_t *loc, *path = NULL, *stack = NULL, node, depth;
	size_t cap_path = 0, cap_stack = 0;
	int64_t vb[VIEW_MAX_COLS], vn[VIEW_MAX_COLS];
	bool ok;

	if (!nr || nr > VIEW_MAX_COLS / 2)
		return CONV_E_INVAL;
	for (size_t i = 0; i < nr; i++)
		if (types[i].base_col >= t->nr_cols || types[i].new_col >= t->nr_cols)
			return CONV_E_INVAL;
	loc = calloc(t->names.nr_frames ? t->names.nr_frames : 1, sizeof(*loc));
	ok = loc && diff_types(out, types, nr, &base_label);
	view_walk_init(&w, t, VIEW_ANY_COL, 1);
	while (ok && view_walk_next(&w, &node, &depth)) {
		const struct view_node *nd = &t->nodes[node];
		bool any_b = false, any_n = false;
		uint32_t s;

		if (!node)
			continue;
		ok = vec_reserve((void **)&path, &cap_path, depth, sizeof(*path)) &&
		     vec_reserve((void **)&stack, &cap_stack, depth, sizeof(*stack));
		if (!ok)
			break;
		path[depth - 1] = diff_location(out, t, loc, nd->frame);
		ok = path[depth - 1] != PROF_NONE;
		memset(vb, 0, sizeof(vb));
		memset(vn, 0, sizeof(vn));
		for (size_t i = 0; ok && i < nr; i++) {
			int64_t sb = view_value(t, node, types[i].base_col);
			int64_t sn = view_value(t, node, types[i].new_col);

			for (uint32_t c = nd->child; c != UINT32_MAX; c = t->nodes[c].sibling) {
				sb -= view_value(t, c, types[i].base_col);
				sn -= view_value(t, c, types[i].new_col);
			}
			vb[i] = sb > 0 ? -sb : 0;
			vn[i] = sn > 0 ? sn : 0;
			any_b = any_b || sb > 0;
			any_n = any_n || sn > 0;
		}
		if (!ok || (!any_b && !any_n))
			continue;
		/* the model's stacks are leaf first */
		for (uint32_t k = 0; k < depth; k++)
			stack[k] = path[depth - 1 - k];
		s = prof_stack(out, stack, depth);
		ok = s != PROF_NONE && (!any_n || prof_add_sample(out, s, NULL, 0, vn)) &&
		     (!any_b || prof_add_sample(out, s, &base_label, 1, vb));
	}
	ok = ok && !w.nomem;
	view_walk_release(&w);
	free(loc);
	free(path);
	free(stack);
	return ok ? CONV_E_OK : CONV_E_NOMEM;
}
