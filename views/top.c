#include "views/top.h"

#include "core/satadd.h"

#include "model/profile.h"
#include "views/tree.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An entry while counting: indexed by its name's id in view_top.strs. */
struct acc {
	int64_t self, total;
	uint32_t stamp; /* the last stack counted in total, + 1 */
	uint32_t nr_inlined, nr_inlined_all;
	uint32_t inlined[VIEW_TOP_INLINED];
};

/*
 * "[object]" as perf names the object: a name already in brackets ([vdso],
 * "[JIT] tid 42") as it is, the kernel's map ("[kernel.kallsyms]_text") as
 * perf's DSO, [kernel.kallsyms].
 */
static const char *object_key(const char *filename, char *buf, size_t size)
{
	const char *base = *filename ? view_object(filename) : "unknown";

	if (base[0] == '[')
		return base;
	snprintf(buf, size, "[%.256s]", base);
	return buf;
}

/* The key of a location that is no function: an unwinding's stop marker. */
#define NO_FUNCTION (STRTAB_NONE - 1)

/*
 * Whether l is the frame the pipeline adds where an unwinding stopped
 * early: unmapped, one line, its function named "[truncated: why]".
 */
static bool is_stop_marker(const struct prof *p, const struct prof_location *l)
{
	static const char tag[] = "[truncated";

	return l->mapping == PROF_NONE && l->nr_lines == 1 &&
	       !strncmp(strtab_get(&p->strs, p->functions[p->lines[l->first_line].function].name), tag,
			sizeof(tag) - 1);
}

/* The name location l counts for: its outermost function, else "[object]". */
static uint32_t location_key(struct view_top *t, const struct prof *p, const struct prof_location *l)
{
	const struct prof_mapping *m = l->mapping == PROF_NONE ? NULL : &p->mappings[l->mapping];
	char buf[300];

	if (is_stop_marker(p, l))
		return NO_FUNCTION;
	if (l->nr_lines) {
		const struct prof_function *f =
			&p->functions[p->lines[l->first_line + l->nr_lines - 1].function];
		const char *name = strtab_get(&p->strs, f->name);

		if (*name)
			return strtab_intern_cstr(&t->strs, name);
	}
	return strtab_intern_cstr(&t->strs, object_key(m ? strtab_get(&p->strs, m->filename) : "",
						       buf, sizeof(buf)));
}

static void note_inlined(struct acc *a, uint32_t name)
{
	for (uint32_t i = 0; i < a->nr_inlined; i++)
		if (a->inlined[i] == name)
			return;
	if (a->nr_inlined < VIEW_TOP_INLINED)
		a->inlined[a->nr_inlined++] = name;
}

struct ranked {
	const char *name;
	int64_t key;
	uint32_t id;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The n entries with the largest self (by_self) or total value, in out. */
static size_t top_of(const struct view_top *t, const struct acc *acc, bool by_self, size_t n,
		     struct ranked *r, struct view_top_ent *out)
{
	size_t nr = 0;

	for (uint32_t i = 0; i < t->strs.count; i++) {
		int64_t k = by_self ? acc[i].self : acc[i].total;

		if (k <= 0)
			continue;
		r[nr].name = strtab_get(&t->strs, i);
		r[nr].key = k;
		r[nr++].id = i;
	}
	qsort(r, nr, sizeof(*r), ranked_cmp);
	if (nr > n)
		nr = n;
	for (size_t i = 0; i < nr; i++) {
		const struct acc *a = &acc[r[i].id];

		out[i].name = r[i].name;
		out[i].self = a->self;
		out[i].total = a->total;
		out[i].nr_inlined = a->nr_inlined;
		out[i].nr_inlined_all = a->nr_inlined_all > a->nr_inlined ? a->nr_inlined_all : a->nr_inlined;
		for (uint32_t k = 0; k < a->nr_inlined; k++)
			out[i].inlined[k] = strtab_get(&t->strs, a->inlined[k]);
	}
	return nr;
}

/* Where a stack's self value goes: its leaf, or (waits) its innermost frame outside the kernel. */
static uint32_t self_index(const struct prof *p, const uint32_t *locs, uint32_t n, bool waits)
{
	for (uint32_t i = 0; waits && i < n; i++) {
		const struct prof_location *l = &p->locations[locs[i]];

		if (l->mapping == PROF_NONE || p->mappings[l->mapping].kind != PROF_MAP_KERNEL)
			return i;
	}
	return 0;
}

/* What counting reads: each location's key and inline names, the stacks' values. */
struct count_in {
	const uint32_t *key, *inl_first, *inl_names;
	const int64_t *sv;
	bool waits;
	bool *self_loc; /* per location: it took a self value (its inline names are listed) */
};

/* Counts every stack's value into acc. */
static void count_stacks(const struct prof *p, const struct count_in *in, struct view_top *t,
			 struct acc *acc)
{
	for (size_t s = 0; s < p->nr_stacks; s++) {
		uint32_t n, leaf;
		const uint32_t *locs = prof_stack_locs(p, (uint32_t)s, &n);
		int64_t v = in->sv[s];

		if (!v || !n)
			continue;
		t->all += v;
		leaf = locs[self_index(p, locs, n, in->waits)];
		if (in->key[leaf] != NO_FUNCTION) {
			acc[in->key[leaf]].self = satadd_i64(acc[in->key[leaf]].self, v);
			in->self_loc[leaf] = true;
			for (uint32_t i = in->inl_first[leaf]; i < in->inl_first[leaf + 1]; i++)
				note_inlined(&acc[in->key[leaf]], in->inl_names[i]);
		}
		for (uint32_t i = 0; i < n; i++) {
			struct acc *a;

			if (in->key[locs[i]] == NO_FUNCTION)
				continue;
			a = &acc[in->key[locs[i]]];
			if (a->stamp != s + 1) {
				a->stamp = (uint32_t)s + 1;
				a->total = satadd_i64(a->total, v);
			}
		}
	}
}

static int pair_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Each entry's count of distinct functions inlined where it took self
 * value: the (entry, inlined name) pairs of those locations, sorted and
 * counted once each. False when out of memory.
 */
static bool count_inlined(const struct prof *p, const struct count_in *in, struct acc *acc)
{
	size_t np = 0, k = 0;
	uint64_t *pairs;

	for (size_t l = 0; l < p->nr_locations; l++)
		np += in->self_loc[l] ? in->inl_first[l + 1] - in->inl_first[l] : 0;
	pairs = malloc((np ? np : 1) * sizeof(*pairs));
	if (!pairs)
		return false;
	for (size_t l = 0; l < p->nr_locations; l++)
		for (uint32_t i = in->inl_first[l]; in->self_loc[l] && i < in->inl_first[l + 1]; i++)
			pairs[k++] = (uint64_t)in->key[l] << 32 | in->inl_names[i];
	qsort(pairs, np, sizeof(*pairs), pair_cmp);
	for (size_t i = 0; i < np; i++)
		if (!i || pairs[i] != pairs[i - 1])
			acc[pairs[i] >> 32].nr_inlined_all++;
	free(pairs);
	return true;
}

static enum conv_err top_build(struct view_top *t, const struct prof *p, size_t type, size_t n,
			       bool waits)
{
	size_t nl = p->nr_locations, ninl = 0;
	uint32_t *key = NULL, *inl_first = NULL, *inl_names = NULL;
	int64_t *sv = NULL;
	bool *self_loc = NULL;
	struct acc *acc = NULL;
	struct ranked *r = NULL;
	struct count_in in;
	enum conv_err err = CONV_E_NOMEM;

	memset(t, 0, sizeof(*t));
	strtab_init(&t->strs);
	if (type >= p->nr_types)
		return CONV_E_INVAL;
	for (size_t l = 0; l < nl; l++)
		ninl += p->locations[l].nr_lines > 1 ? p->locations[l].nr_lines - 1 : 0;
	key = malloc((nl ? nl : 1) * sizeof(*key));
	inl_first = malloc((nl + 1) * sizeof(*inl_first));
	inl_names = malloc((ninl ? ninl : 1) * sizeof(*inl_names));
	self_loc = calloc(nl ? nl : 1, sizeof(*self_loc));
	if (!key || !inl_first || !inl_names || !self_loc)
		goto out;
	/* each location's key and the names of its inline levels, once */
	ninl = 0;
	for (size_t l = 0; l < nl; l++) {
		const struct prof_location *loc = &p->locations[l];

		key[l] = location_key(t, p, loc);
		if (key[l] == STRTAB_NONE)
			goto out;
		inl_first[l] = (uint32_t)ninl;
		for (uint32_t i = 0; key[l] != NO_FUNCTION && i + 1 < loc->nr_lines; i++) {
			const struct prof_function *f = &p->functions[p->lines[loc->first_line + i].function];

			inl_names[ninl] = strtab_intern_cstr(&t->strs, strtab_get(&p->strs, f->name));
			if (inl_names[ninl++] == STRTAB_NONE)
				goto out;
		}
	}
	inl_first[nl] = (uint32_t)ninl;
	sv = view_stack_values(p, &type, 1);
	acc = calloc(t->strs.count ? t->strs.count : 1, sizeof(*acc));
	r = malloc((t->strs.count ? t->strs.count : 1) * sizeof(*r));
	t->by_self = calloc(n ? n : 1, sizeof(*t->by_self));
	t->by_total = calloc(n ? n : 1, sizeof(*t->by_total));
	if (!sv || !acc || !r || !t->by_self || !t->by_total)
		goto out;
	in.key = key;
	in.inl_first = inl_first;
	in.inl_names = inl_names;
	in.sv = sv;
	in.waits = waits;
	in.self_loc = self_loc;
	count_stacks(p, &in, t, acc);
	if (!count_inlined(p, &in, acc))
		goto out;
	t->nr_self = top_of(t, acc, true, n, r, t->by_self);
	t->nr_total = top_of(t, acc, false, n, r, t->by_total);
	err = CONV_E_OK;
out:
	free(key);
	free(inl_first);
	free(inl_names);
	free(self_loc);
	free(sv);
	free(acc);
	free(r);
	if (err)
		view_top_release(t);
	return err;
}

enum conv_err view_top_build(struct view_top *t, const struct prof *p, size_t type, size_t n)
{
	return top_build(t, p, type, n, false);
}

enum conv_err view_top_build_waits(struct view_top *t, const struct prof *p, size_t type, size_t n)
{
	return top_build(t, p, type, n, true);
}

void view_top_release(struct view_top *t)
{
	strtab_release(&t->strs);
	free(t->by_self);
	free(t->by_total);
	memset(t, 0, sizeof(*t));
}
