/*
 * Input problems, kept for the caller as (kind, first offset, count). Two
 * lists: the caller's (rdr_problem: the header, decoding, metadata), which
 * rdr_problem_at reads, and the input side's (side_problem: reading,
 * decompression, queueing), which travels with the batches and is merged
 * into the caller's at the record it was found before. Apart from the
 * reading and the delivery because both sides record into lists of the
 * same kind and the merge must keep their order.
 */
#include "reader/reader_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Adds problem q (q->count times) to the list v of at most max kinds;
 * false when it was full. With at, a new kind's position in its batch
 * (at[i]) is the number of the batch's records read before it.
 */
static bool problem_add(struct rdr_problem *v, size_t *at, size_t *nr, size_t max,
			const struct rdr_problem *q, size_t pos)
{
	/* one entry per kind of problem: same code, record type and message */
	for (size_t i = 0; i < *nr; i++) {
		struct rdr_problem *p = &v[i];

		if (p->code == q->code && p->record_type == q->record_type && !strcmp(p->msg, q->msg)) {
			p->count += q->count;
			return true;
		}
	}
	if (*nr >= max)
		return false;
	if (at)
		at[*nr] = pos;
	v[(*nr)++] = *q;
	return true;
}

static void problem_make(struct rdr_problem *q, enum conv_err code, uint64_t offset,
			 uint32_t rtype, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void problem_make(struct rdr_problem *q, enum conv_err code, uint64_t offset,
			 uint32_t rtype, const char *fmt, va_list ap)
{
	vsnprintf(q->msg, sizeof(q->msg), fmt, ap);
	q->code = code;
	q->offset = offset;
	q->record_type = rtype;
	q->count = 1;
}

void rdr_problem(struct rdr *r, enum conv_err code, uint64_t offset, uint32_t rtype,
		 const char *fmt, ...)
{
	struct rdr_problem q;
	va_list ap;

	va_start(ap, fmt);
	problem_make(&q, code, offset, rtype, fmt, ap);
	va_end(ap);
	rdr_problem_merge(r, &q);
}

void side_problem(struct rdr_side *s, enum conv_err code, uint64_t offset, uint32_t rtype,
		  const char *fmt, ...)
{
	struct rdr_problem q;
	va_list ap;

	va_start(ap, fmt);
	problem_make(&q, code, offset, rtype, fmt, ap);
	va_end(ap);
	if (!problem_add(s->prob.v, s->prob.at, &s->prob.n, s->max_problems, &q, s->nr_open))
		s->prob.dropped++;
}

void rdr_problem_merge(struct rdr *r, const struct rdr_problem *q)
{
	if (!problem_add(r->problems, NULL, &r->nr_problems, r->opts.max_problems, q, 0))
		r->problems_dropped += q->count;
}

size_t rdr_problem_count(const struct rdr *r)
{
	return r->nr_problems;
}

const struct rdr_problem *rdr_problem_at(const struct rdr *r, size_t i)
{
	return i < r->nr_problems ? &r->problems[i] : NULL;
}

uint64_t rdr_problems_dropped(const struct rdr *r)
{
	return r->problems_dropped;
}

bool plist_init(struct rdr_plist *pl, size_t max)
{
	memset(pl, 0, sizeof(*pl));
	pl->v = calloc(max, sizeof(*pl->v));
	pl->at = calloc(max, sizeof(*pl->at));
	return pl->v && pl->at;
}

void plist_release(struct rdr_plist *pl)
{
	free(pl->v);
	free(pl->at);
	memset(pl, 0, sizeof(*pl));
}
