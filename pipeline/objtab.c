/* The objects of a run, shared by its inputs (see objtab.h). */
#include "pipeline/objtab.h"

#include "core/hmap.h"
#include "core/vec.h"
#include "symbolize/kallsyms.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum ent_kind { ENT_SYM = 1, ENT_KALLSYMS, ENT_CFI };

/* What a file was when its entry was opened: a replaced file is another object. */
struct ent_ident {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns;
};

struct objtab_ent {
	enum ent_kind kind;
	char *key;          /* kind, paths and form, as objtab_key built it */
	size_t key_len;
	uint64_t fp;        /* the key's fingerprint: its slot in objtab.index */
	struct ent_ident id[2]; /* of the paths the entry was opened from */
	uint32_t slot;      /* index in objtab.ents */
	uint32_t users;
	bool opening;       /* being opened by its first user: others wait */
	bool indexed;       /* found by its key (false once stale: a newer file took the key) */
	uint64_t last_use;
	uint64_t bytes;     /* its footprint at the last put */
	pthread_mutex_t lock; /* ENT_CFI: rules compiled one caller at a time */
	struct sym_file *sym;   /* ENT_SYM: NULL while only wanted (objtab_sym_want) */
	struct kallsyms ks;
	struct uw_cfi *cfi;
	/* ENT_SYM: addresses wanted and not looked up yet, each once (want_idx: fingerprint -> index + 1) */
	struct objtab_want *wants;
	size_t nr_wants, cap_wants;
	struct hmap want_idx;
	bool planned; /* addresses were wanted of it: shed at every put */
	uint64_t reopened; /* its sym_file's reopened count at the last put */
};

struct objtab {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* an entry was let go of, opened or removed */
	uint64_t budget;
	struct objtab_ent **ents; /* NULL: a free slot */
	size_t nr_ents, cap_ents;
	struct hmap index;        /* fingerprint -> slot + 1 (0: none) */
	uint64_t tick;
	struct objtab_stats st;
};

enum conv_err objtab_new(struct objtab **out, uint64_t budget)
{
	struct objtab *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return CONV_E_NOMEM;
	if (pthread_mutex_init(&t->lock, NULL)) {
		free(t);
		return CONV_E_NOMEM;
	}
	if (pthread_cond_init(&t->changed, NULL)) {
		pthread_mutex_destroy(&t->lock);
		free(t);
		return CONV_E_NOMEM;
	}
	t->budget = budget;
	hmap_init(&t->index);
	*out = t;
	return CONV_E_OK;
}

static void wants_clear(struct objtab_ent *e)
{
	free(e->wants);
	e->wants = NULL;
	e->nr_wants = e->cap_wants = 0;
	hmap_release(&e->want_idx);
	hmap_init(&e->want_idx);
}

static void ent_close(struct objtab_ent *e)
{
	wants_clear(e);
	hmap_release(&e->want_idx);
	sym_file_close(e->sym);
	kallsyms_release(&e->ks);
	if (e->cfi)
		uw_cfi_close(e->cfi);
	pthread_mutex_destroy(&e->lock);
	free(e->key);
	free(e);
}

void objtab_free(struct objtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_ents; i++)
		if (t->ents[i])
			ent_close(t->ents[i]);
	free(t->ents);
	hmap_release(&t->index);
	pthread_cond_destroy(&t->changed);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

struct objtab_stats objtab_stats(struct objtab *t)
{
	struct objtab_stats st;

	pthread_mutex_lock(&t->lock);
	st = t->st;
	pthread_mutex_unlock(&t->lock);
	return st;
}

/*
 * The identity of the file at path (all zero when it cannot be asked, or for
 * /proc files, whose sizes and times say nothing of their contents).
 */
static struct ent_ident ident_of(const char *path)
{
	struct ent_ident id;
	struct stat st;

	memset(&id, 0, sizeof(id));
	if (!path || !strncmp(path, "/proc/", 6) || stat(path, &st) != 0)
		return id;
	id.dev = (uint64_t)st.st_dev;
	id.ino = (uint64_t)st.st_ino;
	id.size = (uint64_t)st.st_size;
	id.mtime_s = (int64_t)st.st_mtim.tv_sec;
	id.mtime_ns = (int64_t)st.st_mtim.tv_nsec;
	return id;
}

static bool same_ident(const struct ent_ident *a, const struct ent_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_s == b->mtime_s &&
	       a->mtime_ns == b->mtime_ns;
}

/* kind, a, NUL, b, NUL, mode: one byte string per distinct object (malloc'd, NULL: no memory). */
static char *objtab_key(enum ent_kind kind, const char *a, const char *b, unsigned mode, size_t *len)
{
	size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
	char *k = malloc(la + lb + 4);

	if (!k)
		return NULL;
	k[0] = (char)kind;
	memcpy(k + 1, a ? a : "", la);
	k[1 + la] = '\0';
	memcpy(k + 2 + la, b ? b : "", lb);
	k[2 + la + lb] = '\0';
	k[3 + la + lb] = (char)mode;
	*len = la + lb + 4;
	return k;
}

static uint64_t key_fp(const char *key, size_t len)
{
	struct hmap_fp fp = hmap_fingerprint(key, len);

	return fp.lo ^ fp.hi;
}

/* The indexed entry of key, or NULL; called locked. */
static struct objtab_ent *ent_find(struct objtab *t, const char *key, size_t len, uint64_t fp)
{
	uint64_t *v = hmap_get(&t->index, fp);
	struct objtab_ent *e;

	if (!v || !*v)
		return NULL;
	e = t->ents[*v - 1];
	if (!e || e->key_len != len || memcmp(e->key, key, len))
		return NULL; /* another key of the same fingerprint: that one keeps the slot */
	return e;
}

static void ent_unindex(struct objtab *t, struct objtab_ent *e)
{
	uint64_t *v = hmap_get(&t->index, e->fp);

	if (e->indexed && v && *v == (uint64_t)e->slot + 1)
		*v = 0;
	e->indexed = false;
}

/* Takes e out of the table and closes it; called locked, e unused. */
static void ent_remove(struct objtab *t, struct objtab_ent *e)
{
	ent_unindex(t, e);
	t->ents[e->slot] = NULL;
	t->st.bytes -= e->bytes;
	ent_close(e);
}

/* A new entry of key (taken over), held by the caller and being opened; NULL: no memory. Locked. */
static struct objtab_ent *ent_add(struct objtab *t, enum ent_kind kind, char *key, size_t len,
				  uint64_t fp, const char *a, const char *b)
{
	struct objtab_ent *e = calloc(1, sizeof(*e));
	size_t slot = t->nr_ents;

	if (!e)
		return NULL;
	for (size_t i = 0; i < t->nr_ents; i++)
		if (!t->ents[i]) {
			slot = i;
			break;
		}
	if ((slot == t->nr_ents &&
	     (slot >= UINT32_MAX - 1 ||
	      !vec_reserve((void **)&t->ents, &t->cap_ents, t->nr_ents + 1, sizeof(*t->ents)))) ||
	    pthread_mutex_init(&e->lock, NULL)) {
		free(e);
		return NULL;
	}
	if (!hmap_put(&t->index, fp, (uint64_t)slot + 1)) {
		pthread_mutex_destroy(&e->lock);
		free(e);
		return NULL;
	}
	if (slot == t->nr_ents)
		t->nr_ents++;
	t->ents[slot] = e;
	e->kind = kind;
	e->key = key;
	e->key_len = len;
	e->fp = fp;
	e->slot = (uint32_t)slot;
	e->users = 1;
	e->opening = true;
	e->indexed = true;
	e->id[0] = ident_of(a);
	e->id[1] = ident_of(b);
	kallsyms_init(&e->ks);
	hmap_init(&e->want_idx);
	return e;
}

/*
 * The entry of (kind, a, b, mode), held: an open one (exclusive kinds wait
 * for its holder), or a new one the caller must open and then settle with
 * ent_opened (*fresh). NULL: no memory. Unlocked on return.
 */
static struct objtab_ent *ent_get(struct objtab *t, enum ent_kind kind, const char *a, const char *b,
				  unsigned mode, bool exclusive, bool *fresh)
{
	size_t len;
	char *key = objtab_key(kind, a, b, mode, &len);
	uint64_t fp;
	struct objtab_ent *e;
	struct ent_ident ia = ident_of(a), ib = ident_of(b);

	*fresh = false;
	if (!key)
		return NULL;
	fp = key_fp(key, len);
	pthread_mutex_lock(&t->lock);
	for (;;) {
		e = ent_find(t, key, len, fp);
		if (e && !e->opening && (!same_ident(&e->id[0], &ia) || !same_ident(&e->id[1], &ib))) {
			/* the file changed since: the entry closes when its holders let go */
			ent_unindex(t, e);
			if (!e->users)
				ent_remove(t, e);
			e = NULL;
		}
		if (!e || (!e->opening && !(exclusive && e->users)))
			break;
		pthread_cond_wait(&t->changed, &t->lock);
	}
	if (e) {
		e->users++;
		t->st.reused++;
		free(key);
	} else {
		e = ent_add(t, kind, key, len, fp, a, b);
		if (!e)
			free(key);
		*fresh = e != NULL;
	}
	pthread_mutex_unlock(&t->lock);
	return e;
}

static uint64_t ent_footprint(struct objtab_ent *e)
{
	uint64_t n = 0;

	if (e->sym)
		n = sym_file_footprint(e->sym);
	else if (e->kind == ENT_KALLSYMS)
		n = kallsyms_footprint(&e->ks);
	else if (e->cfi) {
		pthread_mutex_lock(&e->lock);
		n = uw_cfi_footprint(e->cfi);
		pthread_mutex_unlock(&e->lock);
	}
	return n;
}

/* Closes unused entries, least recently used first, while the table holds more than its budget. Locked. */
static void objtab_trim(struct objtab *t)
{
	while (t->st.bytes > t->budget) {
		struct objtab_ent *lru = NULL;

		for (size_t i = 0; i < t->nr_ents; i++) {
			struct objtab_ent *e = t->ents[i];

			if (e && !e->users && (!lru || e->last_use < lru->last_use))
				lru = e;
		}
		if (!lru)
			break; /* everything left is in use */
		ent_remove(t, lru);
		t->st.evicted++;
	}
}

/* Settles an entry its first user opened: ok false removes it (the caller's hold ends). */
static void ent_opened(struct objtab *t, struct objtab_ent *e, bool ok)
{
	uint64_t bytes = ok ? ent_footprint(e) : 0;

	pthread_mutex_lock(&t->lock);
	e->opening = false;
	if (ok) {
		t->st.opened++;
		e->bytes = bytes;
		t->st.bytes += bytes;
		if (t->st.bytes > t->st.peak_bytes)
			t->st.peak_bytes = t->st.bytes;
	} else {
		e->users = 0;
		ent_remove(t, e);
	}
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
}

void objtab_put(struct objtab *t, struct objtab_ent *e)
{
	uint64_t bytes, reopened = 0;

	if (!e)
		return;
	if (e->kind == ENT_SYM && e->users == 1) {
		if (e->cap_wants)
			wants_clear(e);
		if (e->planned && e->sym)
			sym_file_shed(e->sym);
		if (e->sym) {
			reopened = sym_file_stats(e->sym)->reopened - e->reopened;
			e->reopened += reopened;
		}
	}
	bytes = ent_footprint(e);
	pthread_mutex_lock(&t->lock);
	t->st.reopened += reopened;
	t->st.bytes = t->st.bytes - e->bytes + bytes;
	e->bytes = bytes;
	if (t->st.bytes > t->st.peak_bytes)
		t->st.peak_bytes = t->st.bytes;
	e->last_use = ++t->tick;
	if (!--e->users && (!e->indexed || !t->budget))
		ent_remove(t, e);
	else
		objtab_trim(t);
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
}

struct objtab_ent *objtab_sym_get(struct objtab *t, const char *debug, const char *runtime,
				  enum sym_name_form form, struct sym_file **f, bool *fresh)
{
	struct objtab_ent *e = ent_get(t, ENT_SYM, debug, runtime, (unsigned)form, true, fresh);

	*f = NULL;
	if (e && !*fresh && !e->sym) {
		/* only wanted so far: opened by this holder (an exclusive hold: nobody else is at it) */
		pthread_mutex_lock(&t->lock);
		e->opening = true;
		pthread_mutex_unlock(&t->lock);
		*fresh = true;
	}
	if (e && *fresh) {
		bool ok = sym_file_open(&e->sym, debug, runtime, NULL) == CONV_E_OK;

		if (ok)
			sym_file_set_name_form(e->sym, form);
		ent_opened(t, e, ok);
		if (!ok)
			return NULL;
	}
	if (e)
		*f = e->sym;
	return e;
}

/* One wanted address into e's list, unless it is there already. */
static bool want_add(struct objtab_ent *e, const struct objtab_want *w)
{
	uint64_t key[3] = { w->value, w->pgoff, w->mode };
	struct hmap_fp h = hmap_fingerprint(key, sizeof(key));
	uint64_t fp = h.lo ^ h.hi, *v = hmap_get(&e->want_idx, fp);

	if (v && *v) {
		const struct objtab_want *o = &e->wants[*v - 1];

		if (o->value == w->value && o->pgoff == w->pgoff && o->mode == w->mode)
			return true;
		v = NULL; /* another address of the same fingerprint: this one goes unindexed */
	}
	if (!vec_reserve((void **)&e->wants, &e->cap_wants, e->nr_wants + 1, sizeof(*e->wants)))
		return false;
	if (!v && !hmap_get(&e->want_idx, fp) && !hmap_put(&e->want_idx, fp, e->nr_wants + 1))
		return false;
	e->wants[e->nr_wants++] = *w;
	return true;
}

enum conv_err objtab_sym_want(struct objtab *t, const char *debug, const char *runtime,
			      enum sym_name_form form, const struct objtab_want *w, size_t n)
{
	bool fresh, ok = true;
	struct objtab_ent *e = ent_get(t, ENT_SYM, debug, runtime, (unsigned)form, true, &fresh);

	if (!e)
		return CONV_E_NOMEM;
	if (fresh) {
		/* nothing opened: the first objtab_sym_get does it */
		pthread_mutex_lock(&t->lock);
		e->opening = false;
		pthread_cond_broadcast(&t->changed);
		pthread_mutex_unlock(&t->lock);
	}
	e->planned = true;
	for (size_t i = 0; i < n && ok; i++)
		ok = want_add(e, &w[i]);
	/* not objtab_put: that forgets the wants */
	pthread_mutex_lock(&t->lock);
	e->last_use = ++t->tick;
	e->users--;
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
	return ok ? CONV_E_OK : CONV_E_NOMEM;
}

size_t objtab_sym_wants(struct objtab_ent *e, const struct objtab_want **w)
{
	*w = e->wants;
	return e->nr_wants;
}

struct objtab_ent *objtab_kallsyms_get(struct objtab *t, const char *path, const struct kallsyms **k)
{
	bool fresh;
	struct objtab_ent *e = ent_get(t, ENT_KALLSYMS, path, NULL, 0, false, &fresh);

	*k = NULL;
	if (e && fresh) {
		bool ok = kallsyms_load(&e->ks, path) == CONV_E_OK;

		ent_opened(t, e, ok);
		if (!ok)
			return NULL;
	}
	if (e)
		*k = &e->ks;
	return e;
}

struct objtab_ent *objtab_cfi_get(struct objtab *t, enum uw_arch arch, const char *binary,
				  const char *debug, struct uw_cfi **c)
{
	bool fresh;
	struct objtab_ent *e = ent_get(t, ENT_CFI, binary, debug, (unsigned)arch, false, &fresh);

	*c = NULL;
	if (e && fresh) {
		bool ok = uw_cfi_open(&e->cfi, arch, binary, debug) == CONV_E_OK;

		ent_opened(t, e, ok);
		if (!ok)
			return NULL;
	}
	if (e)
		*c = e->cfi;
	return e;
}

const struct uw_rule *objtab_cfi_rule(struct objtab_ent *e, uint64_t elf_va)
{
	const struct uw_rule *r;

	pthread_mutex_lock(&e->lock);
	r = uw_cfi_rule(e->cfi, elf_va);
	pthread_mutex_unlock(&e->lock);
	return r;
}
