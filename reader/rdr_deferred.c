/*
 * Deferred callchains (PERF_RECORD_CALLCHAIN_DEFERRED, Linux 6.16+): a
 * sample whose callchain ends in PERF_CONTEXT_USER_DEFERRED and a cookie
 * gets its user part later, in a record of its thread with that cookie.
 * Such a sample is held (a copy of its bytes) until that record, its
 * thread's EXIT or the end, then delivered with the user part stitched in
 * (or marked missing). Apart from the delivery because the held samples
 * are a store of their own, bounded by MAX_HELD.
 */
#include "reader/reader_internal.h"

#include "core/vec.h"
#include "reader/perf_abi.h"

#include <stdlib.h>
#include <string.h>

#define MAX_HELD 65536

void held_free(struct rdr_held *h)
{
	free(h->bytes);
	free(h->user_ips);
	h->bytes = NULL;
	h->user_ips = NULL;
}

static bool held_push(struct rdr_held **arr, size_t *n, size_t *cap, const struct rdr_held *h)
{
	if (!vec_reserve((void **)arr, cap, *n + 1, sizeof(**arr)))
		return false;
	(*arr)[(*n)++] = *h;
	return true;
}

void held_release(struct rdr *r, uint32_t tid, bool all_tids, bool match, uint64_t cookie,
		  const uint64_t *ips, uint64_t nr)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nr_held; i++) {
		struct rdr_held *h = &r->held[i];
		bool take = all_tids || (h->tid == tid && (!match || h->cookie == cookie));

		if (take && match && nr <= (SIZE_MAX / 8)) {
			h->user_ips = malloc((size_t)nr * 8 + 8);
			if (h->user_ips) {
				memcpy(h->user_ips, ips, (size_t)nr * 8);
				h->user_nr = nr;
			}
		}
		if (take && held_push(&r->emit, &r->nr_emit, &r->emit_cap, h))
			continue;
		if (take)
			held_free(h);
		else
			r->held[k++] = *h;
	}
	r->nr_held = k;
}

int64_t deferred_marker(const struct rdr_sample *s)
{
	for (uint64_t i = 0; i + 1 < s->callchain_nr; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER_DEFERRED)
			return (int64_t)i;
	return -1;
}

void hold_sample(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz,
		 int attr, uint64_t cookie, uint32_t tid)
{
	struct rdr_held h = {
		.tid = tid, .cookie = cookie, .offset = off, .attr = attr, .in_compressed = inz,
		.len = (uint32_t)len, .bytes = malloc(len),
	};

	if (!h.bytes)
		return;
	memcpy(h.bytes, rec, len);
	if (r->nr_held >= MAX_HELD) {
		/* bound memory: the oldest waits no longer */
		struct rdr_held old = r->held[0];

		memmove(r->held, r->held + 1, (r->nr_held - 1) * sizeof(*r->held));
		r->nr_held--;
		if (!held_push(&r->emit, &r->nr_emit, &r->emit_cap, &old))
			held_free(&old);
	}
	if (!held_push(&r->held, &r->nr_held, &r->held_cap, &h))
		held_free(&h);
}

bool emit_held(struct rdr *r, struct rdr_held *h)
{
	struct rdr_sample *s;
	int64_t k;
	uint64_t *out;
	size_t n = 0;

	if (!rdr_decode(r, h->bytes, h->len, h->offset, h->in_compressed, h->attr))
		return false;
	s = &r->ev.u.sample;
	k = deferred_marker(s);
	if (k < 0)
		k = (int64_t)s->callchain_nr;
	dbuf_reset(&r->s_stitch);
	if (!dbuf_reserve(&r->s_stitch, ((size_t)k + 1 + (size_t)h->user_nr) * 8))
		return false;
	out = (uint64_t *)(void *)r->s_stitch.data;
	for (int64_t i = 0; i < k; i++)
		out[n++] = s->callchain[i];
	if (h->user_ips) {
		if (!h->user_nr || h->user_ips[0] < PERF_CONTEXT_MAX)
			out[n++] = PERF_CONTEXT_USER;
		for (uint64_t i = 0; i < h->user_nr; i++)
			out[n++] = h->user_ips[i];
		s->callchain_deferred_merged = true;
		r->stats.deferred_merged++;
	} else {
		s->callchain_deferred_missing = true;
		r->stats.deferred_unmatched++;
	}
	s->callchain = out;
	s->callchain_nr = n;
	note_sample(r, &r->ev);
	return true;
}
