/*
 * The reading pass's cache of distinct samples, frames, stacks and threads
 * (scache.h says what each is).
 */
#include "pipeline/scache.h"

#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

/* A cheaper step for long arrays, finished by hmap_hash. */
static uint64_t mix_fast(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * The index of a distinct frame (h: frame_hash), registered with the
 * symbolizer when new; UINT32_MAX when out of memory.
 */
uint32_t scache_frame_of(struct scache *c, const struct pm_frame *pf, uint64_t h, struct symjob *sj)
{
	struct hidx_iter it;
	struct scache_frame *f;

	for (uint32_t v = hidx_first(&c->frame_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->frame_idx, &it)) {
		f = &c->frames[v];
		if (f->mapping == pf->mapping && f->addr == pf->addr && scache_frame_jit(c, f) == pf->jit)
			return v;
	}
	if (c->nr_frames >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->frames, &c->cap_frames, c->nr_frames + 1, sizeof(*f)))
		return UINT32_MAX;
	f = &c->frames[c->nr_frames];
	f->mapping = pf->mapping;
	f->addr = pf->addr;
	if (pf->jit) {
		if (c->nr_jits >= SCACHE_JIT - 1 ||
		    !vec_reserve((void **)&c->jits, &c->cap_jits, c->nr_jits + 1, sizeof(*c->jits)))
			return UINT32_MAX;
		c->jits[c->nr_jits] = pf->jit;
		f->ref = SCACHE_JIT | (uint32_t)c->nr_jits++;
	} else {
		/* --no-symbolize registers too: the binaries' program headers still give ELF addresses */
		f->ref = symjob_add(sj, pf->mapping, pf->file_offset);
		/* (ids with SCACHE_JIT's bit would take 2^31 addresses: out of memory long before) */
		if (f->ref != SYMJOB_NONE && (f->ref & SCACHE_JIT))
			return UINT32_MAX;
	}
	if (!hidx_add(&c->frame_idx, h, (uint32_t)c->nr_frames))
		return UINT32_MAX;
	return (uint32_t)c->nr_frames++;
}

/* The raw stack id of frame indexes f (added when new); UINT32_MAX when out of memory. */
uint32_t scache_stack_of(struct scache *c, const uint32_t *f, uint32_t n)
{
	uint64_t h = 7;
	struct hidx_iter it;
	size_t old_cap = c->cap_stacks;

	for (uint32_t i = 0; i < n; i++)
		h = mix_fast(h, f[i]);
	h = hmap_hash(h);
	for (uint32_t v = hidx_first(&c->stack_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->stack_idx, &it)) {
		const uint32_t *e = c->pool + c->stack_off[v];

		if (e[0] == n && (!n || !memcmp(e + 1, f, n * sizeof(*f))))
			return v;
	}
	if (c->pool_len + n + 1 > UINT32_MAX || c->nr_stacks >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->pool, &c->pool_cap, c->pool_len + n + 1, sizeof(*f)) ||
	    !vec_reserve((void **)&c->stack_off, &c->cap_stacks, c->nr_stacks + 1, sizeof(uint32_t)))
		return UINT32_MAX;
	/* the flags follow stack_off's capacity (a realloc per stack when they did not check) */
	if ((c->cap_stacks != old_cap || !c->stack_trunc) &&
	    !vec_reserve_exact((void **)&c->stack_trunc, &c->cap_trunc, c->cap_stacks, 1))
		return UINT32_MAX;
	c->stack_trunc[c->nr_stacks] = 0;
	c->pool[c->pool_len] = n;
	if (n)
		memcpy(c->pool + c->pool_len + 1, f, n * sizeof(*f));
	c->stack_off[c->nr_stacks] = (uint32_t)c->pool_len;
	c->pool_len += n + 1;
	if (!hidx_add(&c->stack_idx, h, (uint32_t)c->nr_stacks))
		return UINT32_MAX;
	return (uint32_t)c->nr_stacks++;
}

/* Chains up to this long are hashed with the key's other words, longer ones on their own. */
#define FP_INLINE 16

/*
 * A sample's key's fingerprint into id->fp: its identity (id, the kept
 * fields of k but its labels) and its raw addresses (the IP when sampled,
 * then the callchain), hashed from where they are.
 */
void scache_key_fingerprint(const struct scache_key *k, struct scache_id *id, const struct rdr_sample *s)
{
	uint64_t w[12 + FP_INLINE];
	size_t n = 0;

	w[n++] = id->version;
	w[n++] = id->kversion;
	w[n++] = (uint64_t)id->proc << 32 | id->tid;
	w[n++] = (uint64_t)k->attr << 32 | k->cpu;
	w[n++] = (uint64_t)id->mode << 32 | k->comm;
	w[n++] = id->fields.lo;
	w[n++] = id->fields.hi;
	w[n++] = s->callchain_nr;
	if (id->mode & SCACHE_HAS_IP)
		w[n++] = s->ip;
	/* the length is hashed: a chain's words and its fingerprint cannot be taken for each other */
	if (s->callchain_nr <= FP_INLINE) {
		for (uint64_t i = 0; i < s->callchain_nr; i++)
			w[n++] = s->callchain[i];
	} else {
		struct hmap_fp cf = hmap_fingerprint(s->callchain, s->callchain_nr * sizeof(uint64_t));

		w[n++] = cf.lo;
		w[n++] = cf.hi;
	}
	if (id->walk) {
		/* what an unwound chain's addresses do not say: its stop and which entries are exact */
		const struct unwinding_built *b = id->walk;
		struct hmap_fp ef = hmap_fingerprint(b->exact, b->exact_words * sizeof(uint64_t));

		w[n++] = (uint64_t)b->stop << 32 | b->stop_mapping;
		w[n++] = ef.lo;
		w[n++] = ef.hi;
	}
	id->fp = hmap_fingerprint(w, n * sizeof(uint64_t));
}

uint32_t scache_key_find(struct scache *c, const struct scache_id *id, uint32_t lk)
{
	struct hidx_iter it;

	if (c->last_key[lk] && scache_key_same(c, c->last_key[lk] - 1, id))
		return c->last_key[lk] - 1;
	for (uint32_t ki = hidx_first(&c->key_idx, id->fp.lo, &it); ki != HIDX_NONE;
	     ki = hidx_next(&c->key_idx, &it)) {
		if (scache_key_same(c, ki, id)) {
			c->last_key[lk] = ki + 1;
			return ki;
		}
	}
	return UINT32_MAX;
}

/*
 * Adds a sample's key (resolved into stack and thread) with its first count;
 * indexed only when it can be looked up again. Returns its index,
 * UINT32_MAX when out of memory.
 */
uint32_t scache_key_add(struct scache *c, const struct scache_key *k, const struct scache_id *id, bool index)
{
	size_t old_cap = c->cap_keys;

	if (c->nr_keys >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->keys, &c->cap_keys, c->nr_keys + 1, sizeof(*k)))
		return UINT32_MAX;
	/* the fingerprints follow the keys' capacity */
	if ((c->cap_keys != old_cap || !c->key_fp) &&
	    !vec_reserve_exact((void **)&c->key_fp, &c->cap_fp, c->cap_keys, sizeof(*c->key_fp)))
		return UINT32_MAX;
	c->keys[c->nr_keys] = *k;
	if (index) {
		c->key_fp[c->nr_keys] = id->fp;
		if (!hidx_add(&c->key_idx, id->fp.lo, (uint32_t)c->nr_keys))
			return UINT32_MAX;
	}
	return (uint32_t)c->nr_keys++;
}

/* The lookup tables of the reading pass (not the keys: they are the aggregates): the model needs the memory. */
void scache_drop_indexes(struct scache *c)
{
	/* what stays is done growing: give back the slack before the symbolizer's peak */
	vec_shrink((void **)&c->keys, &c->cap_keys, c->nr_keys, sizeof(*c->keys));
	vec_shrink((void **)&c->frames, &c->cap_frames, c->nr_frames, sizeof(*c->frames));
	vec_shrink((void **)&c->pool, &c->pool_cap, c->pool_len, sizeof(*c->pool));
	vec_free((void **)&c->key_fp, &c->cap_fp);
	vec_free((void **)&c->stack_buf, &c->stack_buf_cap);
	vec_free((void **)&c->hash_buf, &c->hash_buf_cap);
	hidx_release(&c->key_idx);
	hidx_release(&c->frame_idx);
	hidx_release(&c->stack_idx);
	hidx_release(&c->thread_idx);
}

void scache_release(struct scache *c)
{
	free(c->frames);
	free(c->jits);
	free(c->pool);
	free(c->stack_off);
	free(c->stack_trunc);
	free(c->threads);
	free(c->keys);
	free(c->key_fp);
	free(c->stack_buf);
	free(c->hash_buf);
	hidx_release(&c->frame_idx);
	hidx_release(&c->stack_idx);
	hidx_release(&c->thread_idx);
	hidx_release(&c->key_idx);
}

/* The thread index of (process, tid), added on first sight; UINT32_MAX when out of memory. */
uint32_t scache_thread_of(struct scache *c, uint32_t proc, uint32_t tid)
{
	uint64_t key = (uint64_t)proc << 32 | tid, h = hmap_hash(key);
	struct hidx_iter it;

	for (uint32_t v = hidx_first(&c->thread_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->thread_idx, &it))
		if (c->threads[v] == key)
			return v;
	if (c->nr_threads >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->threads, &c->cap_threads, c->nr_threads + 1, sizeof(uint64_t)))
		return UINT32_MAX;
	c->threads[c->nr_threads] = key;
	if (!hidx_add(&c->thread_idx, h, (uint32_t)c->nr_threads))
		return UINT32_MAX;
	return (uint32_t)c->nr_threads++;
}
