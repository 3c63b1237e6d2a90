#include "views/top.h"

#include "model/profile.h"
#include "views/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An entry while counting: indexed by its name's id in view_top.strs. */
struct acc {
	int64_t self, total;
	uint32_t stamp; /* the last stack counted in total, + 1 */
	uint32_t nr_inlined;
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

/* The name location l counts for: its outermost function, else "[object]". */
static uint32_t location_key(struct view_top *t, const struct prof *p, const struct prof_location *l)
{
	const struct prof_mapping *m = l->mapping == PROF_NONE ? NULL : &p->mappings[l->mapping];
	char buf[300];

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
		for (uint32_t k = 0; k < a->nr_inlined; k++)
			out[i].inlined[k] = strtab_get(&t->strs, a->inlined[k]);
	}
	return nr;
}

/* Counts every stack's value into acc (per stack: sv). */
static void count_stacks(const struct prof *p, const uint32_t *key, const int64_t *sv,
			 struct view_top *t, struct acc *acc, const uint32_t *inl_first,
			 const uint32_t *inl_names)
{
	for (size_t s = 0; s < p->nr_stacks; s++) {
		uint32_t n;
		const uint32_t *locs = prof_stack_locs(p, (uint32_t)s, &n);
		int64_t v = sv[s];

		if (!v || !n)
			continue;
		t->all += v;
		acc[key[locs[0]]].self += v;
		for (uint32_t i = inl_first[locs[0]]; i < inl_first[locs[0] + 1]; i++)
			note_inlined(&acc[key[locs[0]]], inl_names[i]);
		for (uint32_t i = 0; i < n; i++) {
			struct acc *a = &acc[key[locs[i]]];

			if (a->stamp != s + 1) {
				a->stamp = (uint32_t)s + 1;
				a->total += v;
			}
		}
	}
}

enum conv_err view_top_build(struct view_top *t, const struct prof *p, size_t type, size_t n)
{
	size_t nl = p->nr_locations, ninl = 0;
	uint32_t *key = NULL, *inl_first = NULL, *inl_names = NULL;
	int64_t *sv = NULL;
	struct acc *acc = NULL;
	struct ranked *r = NULL;
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
	if (!key || !inl_first || !inl_names)
		goto out;
	/* each location's key and the names of its inline levels, once */
	ninl = 0;
	for (size_t l = 0; l < nl; l++) {
		const struct prof_location *loc = &p->locations[l];

		key[l] = location_key(t, p, loc);
		if (key[l] == STRTAB_NONE)
			goto out;
		inl_first[l] = (uint32_t)ninl;
		for (uint32_t i = 0; i + 1 < loc->nr_lines; i++) {
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
	count_stacks(p, key, sv, t, acc, inl_first, inl_names);
	t->nr_self = top_of(t, acc, true, n, r, t->by_self);
	t->nr_total = top_of(t, acc, false, n, r, t->by_total);
	err = CONV_E_OK;
out:
	free(key);
	free(inl_first);
	free(inl_names);
	free(sv);
	free(acc);
	free(r);
	if (err)
		view_top_release(t);
	return err;
}

void view_top_release(struct view_top *t)
{
	strtab_release(&t->strs);
	free(t->by_self);
	free(t->by_total);
	memset(t, 0, sizeof(*t));
}
