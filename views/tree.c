#include "views/tree.h"

#include "core/satadd.h"
#include "core/hmap.h"
#include "core/vec.h"
#include "model/profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE UINT32_MAX

const char *view_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

const char *view_object(const char *path)
{
	static const char kernel[] = "[kernel.kallsyms]";

	/* the kernel's map is "[kernel.kallsyms]_text" (or _stext) */
	if (!strncmp(path, kernel, sizeof(kernel) - 1))
		return kernel;
	return view_basename(path);
}

/*
 * A model string in the views' table: model strings are interned already,
 * so each is looked up once (map: model id -> view id + 1).
 */
static uint32_t view_str(struct view_names *n, const struct prof *p, uint32_t *map, uint32_t id)
{
	uint32_t v;

	if (id >= p->strs.count)
		return 0;
	if (map[id])
		return map[id] - 1;
	v = strtab_intern(&n->strs, strtab_get(&p->strs, id), p->strs.lens[id]);
	if (v != STRTAB_NONE)
		map[id] = v + 1;
	return v;
}

static uint64_t frame_hash(const struct view_frame *f)
{
	uint64_t h = hmap_mix(hmap_mix(1, f->name), f->lib);

	h = hmap_mix(hmap_mix(h, f->build_id), f->file);
	return hmap_mix(h, (uint64_t)f->line << 16 | (uint64_t)f->kind << 1 | f->inlined);
}

static bool frame_same(const struct view_frame *a, const struct view_frame *b)
{
	return a->name == b->name && a->lib == b->lib && a->build_id == b->build_id &&
	       a->file == b->file && a->line == b->line && a->kind == b->kind &&
	       a->inlined == b->inlined;
}

/* The id of frame f (added when new); UINT32_MAX when out of memory. */
static uint32_t frame_id(struct view_names *n, const struct view_frame *f)
{
	uint64_t h = frame_hash(f);
	struct hidx_iter it;

	for (uint32_t v = hidx_first(&n->frame_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&n->frame_idx, &it))
		if (frame_same(&n->frames[v], f))
			return v;
	if (n->nr_frames >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&n->frames, &n->cap_frames, n->nr_frames + 1, sizeof(*f)) ||
	    !hidx_add(&n->frame_idx, h, (uint32_t)n->nr_frames))
		return UINT32_MAX;
	n->frames[n->nr_frames] = *f;
	return (uint32_t)n->nr_frames++;
}

/* The name of a location without lines: its file offset in its object, or its address. */
static uint32_t unnamed(struct view_names *n, const struct prof *p, const struct prof_location *l)
{
	const struct prof_mapping *m = l->mapping == PROF_NONE ? NULL : &p->mappings[l->mapping];
	const char *lib = m ? view_object(strtab_get(&p->strs, m->filename)) : "";
	char buf[320];

	/* an address in no mapping (a frame-pointer walk's stray word): perf's one [unknown] */
	if (!m)
		return strtab_intern_cstr(&n->strs, "[unknown]");
	if (!*lib)
		lib = "[unknown]";
	if (l->address >= m->start)
		snprintf(buf, sizeof(buf), "%.256s+0x%" PRIx64, lib, l->address - m->start + m->offset);
	else
		snprintf(buf, sizeof(buf), "%.256s+0x%" PRIx64, lib, l->address);
	return strtab_intern_cstr(&n->strs, buf);
}

/* Names location l's frames into n->frame_ids (its entry: base + l); false when out of memory. */
static bool name_location(struct view_names *n, const struct prof *p, uint32_t *map, size_t base,
			  size_t l)
{
	const struct prof_location *loc = &p->locations[l];
	const struct prof_mapping *m = loc->mapping == PROF_NONE ? NULL : &p->mappings[loc->mapping];
	size_t k = loc->nr_lines ? loc->nr_lines : 1;
	struct view_frame f;

	n->first[base + l] = (uint32_t)n->nr_frame_ids;
	n->count[base + l] = (uint32_t)k;
	memset(&f, 0, sizeof(f));
	f.kind = (uint8_t)(m ? m->kind : PROF_MAP_OTHER);
	f.lib = m ? view_str(n, p, map, m->filename) : 0;
	f.build_id = m ? view_str(n, p, map, m->build_id) : 0;
	/* lines are innermost first; a root-first walk meets the outermost first */
	for (size_t i = k; i-- > 0;) {
		uint32_t id;

		if (loc->nr_lines) {
			const struct prof_line *ln = &p->lines[loc->first_line + i];
			const struct prof_function *fn = &p->functions[ln->function];

			f.name = *strtab_get(&p->strs, fn->name) ? view_str(n, p, map, fn->name)
								   : unnamed(n, p, loc);
			f.file = view_str(n, p, map, fn->filename);
			f.line = ln->line;
			f.inlined = i + 1 < k;
		} else {
			f.name = unnamed(n, p, loc);
		}
		if (f.name == STRTAB_NONE || f.lib == STRTAB_NONE || f.build_id == STRTAB_NONE ||
		    f.file == STRTAB_NONE)
			return false;
		id = frame_id(n, &f);
		if (id == UINT32_MAX)
			return false;
		n->frame_ids[n->nr_frame_ids++] = id;
	}
	return true;
}

enum conv_err view_names_build(struct view_names *n, const struct prof *p)
{
	return view_names_build_many(n, &p, 1);
}

enum conv_err view_names_build_many(struct view_names *n, const struct prof *const *ps, size_t nr)
{
	uint32_t *map = NULL;
	size_t ids = 0, locs = 0, base = 0;
	bool ok = true;

	memset(n, 0, sizeof(*n));
	strtab_init(&n->strs);
	hidx_init(&n->frame_idx);
	for (size_t k = 0; k < nr; k++) {
		for (size_t l = 0; l < ps[k]->nr_locations; l++)
			ids += ps[k]->locations[l].nr_lines ? ps[k]->locations[l].nr_lines : 1;
		locs += ps[k]->nr_locations;
	}
	n->frame_ids = malloc((ids ? ids : 1) * sizeof(*n->frame_ids));
	n->first = malloc((locs ? locs : 1) * sizeof(*n->first));
	n->count = malloc((locs ? locs : 1) * sizeof(*n->count));
	if (!n->frame_ids || !n->first || !n->count)
		ok = false;
	/* one model after the other: equal names and frames of two models are one */
	for (size_t k = 0; ok && k < nr; k++) {
		const struct prof *p = ps[k];

		map = calloc(p->strs.count ? p->strs.count : 1, sizeof(*map));
		ok = map != NULL;
		for (size_t l = 0; ok && l < p->nr_locations; l++)
			ok = name_location(n, p, map, base, l);
		base += p->nr_locations;
		free(map);
	}
	/* the lookup is for building only */
	hidx_release(&n->frame_idx);
	if (!ok) {
		view_names_release(n);
		return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

void view_names_release(struct view_names *n)
{
	strtab_release(&n->strs);
	free(n->frames);
	hidx_release(&n->frame_idx);
	free(n->frame_ids);
	free(n->first);
	free(n->count);
	memset(n, 0, sizeof(*n));
}

struct name_ref {
	const char *s;
	uint32_t id;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* rank[id] for every string id of strs: its place in byte order (malloc'ed; NULL: no memory). */
static uint32_t *name_ranks(const struct strtab *strs)
{
	struct name_ref *r = malloc((strs->count ? strs->count : 1) * sizeof(*r));
	uint32_t *rank = malloc((strs->count ? strs->count : 1) * sizeof(*rank));

	if (!r || !rank) {
		free(r);
		free(rank);
		return NULL;
	}
	for (uint32_t i = 0; i < strs->count; i++) {
		r[i].s = strtab_get(strs, i);
		r[i].id = i;
	}
	qsort(r, strs->count, sizeof(*r), name_ref_cmp);
	for (uint32_t i = 0; i < strs->count; i++)
		rank[r[i].id] = i;
	free(r);
	return rank;
}

void view_walk_init(struct view_walk *w, const struct view_tree *t, size_t col, int64_t min)
{
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->col = col;
	w->min = min;
	if (!vec_reserve((void **)&w->st, &w->cap, 1, sizeof(*w->st))) {
		w->nomem = true;
		return;
	}
	memset(&w->st[0], 0, sizeof(w->st[0]));
	w->nr = 1;
}

/* A node's value as a walk compares it with its min: its column's, or its largest of any. */
static int64_t walk_value(const struct view_walk *w, uint32_t node)
{
	int64_t v;

	if (w->col != VIEW_ANY_COL)
		return view_value(w->t, node, w->col);
	v = INT64_MIN;
	for (size_t c = 0; c < w->t->nr_cols; c++)
		v = view_value(w->t, node, c) > v ? view_value(w->t, node, c) : v;
	return v;
}

bool view_walk_next(struct view_walk *w, uint32_t *node, uint32_t *depth)
{
	struct view_walk_item v;
	size_t first;

	if (w->nomem || !w->nr)
		return false;
	v = w->st[--w->nr];
	first = w->nr;
	/* the children (in name order, from view_tree_build), the first on top: popped first */
	for (uint32_t c = w->max_depth && v.depth >= w->max_depth ? UINT32_MAX : w->t->nodes[v.node].child;
	     c != UINT32_MAX; c = w->t->nodes[c].sibling) {
		if (walk_value(w, c) < w->min)
			continue;
		if (!vec_reserve((void **)&w->st, &w->cap, w->nr + 1, sizeof(*w->st))) {
			w->nomem = true;
			return false;
		}
		w->st[w->nr].node = c;
		w->st[w->nr++].depth = v.depth + 1;
	}
	for (size_t a = first, b = w->nr; a + 1 < b; a++, b--) {
		struct view_walk_item x = w->st[a];

		w->st[a] = w->st[b - 1];
		w->st[b - 1] = x;
	}
	*node = v.node;
	*depth = v.depth;
	return true;
}

void view_walk_release(struct view_walk *w)
{
	free(w->st);
	memset(w, 0, sizeof(*w));
}

uint32_t view_first_event(const struct prof *p)
{
	for (size_t i = 0; i < p->nr_events_desc; i++)
		if (p->events_desc[i].samples)
			return (uint32_t)i;
	return PROF_NONE;
}

uint32_t view_main_event(const struct prof *p)
{
	if (p->primary_event < p->nr_events_desc && p->events_desc[p->primary_event].samples)
		return p->primary_event;
	return view_first_event(p);
}

/* Node 0, the root. */
static bool tree_root(struct view_tree *t)
{
	if (!vec_reserve((void **)&t->nodes, &t->cap_nodes, 1, sizeof(*t->nodes)) ||
	    !vec_reserve((void **)&t->values, &t->cap_values, t->nr_cols, sizeof(*t->values)))
		return false;
	memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
	t->nodes[0].child = t->nodes[0].sibling = NO_NODE;
	t->nodes[0].frame = UINT32_MAX;
	memset(t->values, 0, t->nr_cols * sizeof(*t->values));
	t->nr_nodes = 1;
	return true;
}

/* The child of parent named name, added when new; NO_NODE when out of memory. */
static uint32_t tree_child(struct view_tree *t, uint32_t parent, uint32_t name, uint32_t frame)
{
	uint64_t h = hmap_mix(hmap_mix(2, parent), name);
	struct hidx_iter it;
	struct view_node *c;
	uint32_t id;

	for (uint32_t v = hidx_first(&t->child_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&t->child_idx, &it))
		if (t->nodes[v].parent == parent && t->nodes[v].name == name)
			return v;
	if (t->nr_nodes >= NO_NODE - 1 ||
	    !vec_reserve((void **)&t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*t->nodes)) ||
	    !vec_reserve((void **)&t->values, &t->cap_values, (t->nr_nodes + 1) * t->nr_cols,
			 sizeof(*t->values)) ||
	    !hidx_add(&t->child_idx, h, (uint32_t)t->nr_nodes))
		return NO_NODE;
	id = (uint32_t)t->nr_nodes++;
	c = &t->nodes[id];
	c->parent = parent;
	c->name = name;
	c->child = NO_NODE;
	c->frame = frame;
	c->best = INT64_MIN;
	/* prepended: the writers order children themselves */
	c->sibling = t->nodes[parent].child;
	t->nodes[parent].child = id;
	memset(t->values + (size_t)id * t->nr_cols, 0, t->nr_cols * sizeof(*t->values));
	return id;
}

static void add_values(struct view_tree *t, uint32_t node, const int64_t *v)
{
	int64_t *d = t->values + (size_t)node * t->nr_cols;

	for (size_t c = 0; c < t->nr_cols; c++)
		d[c] = satadd_i64(d[c], v[c]);
}

/* A child while its parent's children are put in order. */
struct kid {
	uint32_t rank, node;
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * Each node's children relinked in name order (byte order of their names,
 * unique among siblings), once: every walk (each view of a page, the
 * folded stacks) then takes them as they are.
 */
static bool tree_sort_children(struct view_tree *t)
{
	uint32_t *rank = name_ranks(&t->names.strs);
	struct kid *kids = NULL;
	size_t cap = 0;

	if (!rank)
		return false;
	for (size_t n = 0; n < t->nr_nodes; n++) {
		size_t nr = 0;

		for (uint32_t c = t->nodes[n].child; c != NO_NODE; c = t->nodes[c].sibling) {
			if (!vec_reserve((void **)&kids, &cap, nr + 1, sizeof(*kids))) {
				free(rank);
				free(kids);
				return false;
			}
			kids[nr].rank = rank[t->nodes[c].name];
			kids[nr++].node = c;
		}
		if (nr < 2)
			continue;
		qsort(kids, nr, sizeof(*kids), kid_cmp);
		t->nodes[n].child = kids[0].node;
		for (size_t k = 0; k < nr; k++)
			t->nodes[kids[k].node].sibling = k + 1 < nr ? kids[k + 1].node : NO_NODE;
	}
	free(rank);
	free(kids);
	return true;
}

/* Adds stack s with values v (nr_cols) along its path from the root; false when out of memory. */
static bool tree_add_stack(struct view_tree *t, const struct prof *p, size_t base, uint32_t s,
			   const int64_t *v)
{
	const struct view_names *n = &t->names;
	uint32_t nl, node = 0;
	const uint32_t *locs = prof_stack_locs(p, s, &nl);

	add_values(t, 0, v);
	for (uint32_t i = nl; i-- > 0;) {
		size_t l = base + locs[i];

		for (uint32_t k = 0; k < n->count[l]; k++) {
			uint32_t f = n->frame_ids[n->first[l] + k];

			node = tree_child(t, node, n->frames[f].name, f);
			if (node == NO_NODE)
				return false;
			add_values(t, node, v);
			if (v[0] > t->nodes[node].best) {
				t->nodes[node].best = v[0];
				t->nodes[node].frame = f;
			}
		}
	}
	return true;
}

int64_t *view_stack_values(const struct prof *p, const size_t *types, size_t nr_cols)
{
	int64_t *sv = calloc(p->nr_stacks && nr_cols ? p->nr_stacks * nr_cols : 1, sizeof(*sv));

	for (size_t i = 0; sv && i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		for (size_t c = 0; c < nr_cols; c++)
			sv[(size_t)s->stack * nr_cols + c] =
				satadd_i64(sv[(size_t)s->stack * nr_cols + c], prof_sample_value(p, s, types[c]));
	}
	return sv;
}

enum conv_err view_tree_build(struct view_tree *t, const struct prof *p, const size_t *types,
			      size_t nr_cols)
{
	struct view_col cols[VIEW_MAX_COLS];

	if (!nr_cols || nr_cols > VIEW_MAX_COLS) {
		memset(t, 0, sizeof(*t));
		return CONV_E_INVAL;
	}
	for (size_t c = 0; c < nr_cols; c++) {
		cols[c].p = p;
		cols[c].type = types[c];
	}
	return view_tree_build_cols(t, cols, nr_cols);
}

/* Adds the stacks of ps[k] (its locations' names from base on) in its columns of cols. */
static enum conv_err tree_add_model(struct view_tree *t, const struct view_col *cols, size_t nr_cols,
				    const struct prof *p, size_t base)
{
	size_t types[VIEW_MAX_COLS], own[VIEW_MAX_COLS], nr_own = 0;
	int64_t v[VIEW_MAX_COLS];
	int64_t *sv;

	for (size_t c = 0; c < nr_cols; c++) {
		if (cols[c].p != p)
			continue;
		types[nr_own] = cols[c].type;
		own[nr_own++] = c;
	}
	sv = view_stack_values(p, types, nr_own);
	if (!sv)
		return CONV_E_NOMEM;
	memset(v, 0, sizeof(v));
	for (size_t s = 0; s < p->nr_stacks; s++) {
		bool any = false;

		for (size_t c = 0; c < nr_own; c++) {
			v[own[c]] = sv[s * nr_own + c];
			any = any || v[own[c]] > 0;
		}
		if (any && !tree_add_stack(t, p, base, (uint32_t)s, v)) {
			free(sv);
			return CONV_E_NOMEM;
		}
	}
	free(sv);
	return CONV_E_OK;
}

enum conv_err view_tree_build_cols(struct view_tree *t, const struct view_col *cols, size_t nr_cols)
{
	const struct prof *ps[VIEW_MAX_COLS];
	size_t nr_ps = 0, base = 0;
	enum conv_err err;

	memset(t, 0, sizeof(*t));
	hidx_init(&t->child_idx);
	if (!nr_cols || nr_cols > VIEW_MAX_COLS)
		return CONV_E_INVAL;
	for (size_t c = 0; c < nr_cols; c++) {
		size_t k = 0;

		if (cols[c].type >= cols[c].p->nr_types)
			return CONV_E_INVAL;
		while (k < nr_ps && ps[k] != cols[c].p)
			k++;
		if (k == nr_ps)
			ps[nr_ps++] = cols[c].p;
	}
	t->nr_cols = nr_cols;
	err = view_names_build_many(&t->names, ps, nr_ps);
	if (err)
		return err;
	if (!tree_root(t)) {
		view_tree_release(t);
		return CONV_E_NOMEM;
	}
	for (size_t k = 0; k < nr_ps; k++) {
		err = tree_add_model(t, cols, nr_cols, ps[k], base);
		if (err) {
			view_tree_release(t);
			return err;
		}
		base += ps[k]->nr_locations;
	}
	hidx_release(&t->child_idx);
	if (!tree_sort_children(t)) {
		view_tree_release(t);
		return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

void view_tree_release(struct view_tree *t)
{
	view_names_release(&t->names);
	free(t->nodes);
	free(t->values);
	hidx_release(&t->child_idx);
	memset(t, 0, sizeof(*t));
}
