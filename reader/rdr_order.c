/*
 * Time ordering, as perf's ordered-events does it: records with a time are
 * queued; at each FINISHED_ROUND the queued records up to the largest time
 * seen before the previous round are sorted by (time, file order) and made
 * ready; records without a time go out as read, ahead of the records still
 * queued; a full reorder window (opts.reorder_limit) makes the older half
 * ready; the rest goes out at the end. Apart from the reading because the
 * queue and its sort are a structure of their own, and from the batches
 * because they only take what the queue made ready.
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <stdlib.h>
#include <string.h>

static bool q_push(struct rdr_side *s, const uint8_t *rec, size_t len, uint64_t off, bool inz,
		   int attr, uint64_t time)
{
	struct rdr_qent *e;

	if (s->q_len == s->q_cap) {
		size_t ncap = s->q_cap ? s->q_cap * 2 : 4096;
		struct rdr_qent *nq = realloc(s->q, ncap * sizeof(*nq)), *nt;

		if (!nq)
			return false;
		s->q = nq;
		nt = realloc(s->q_tmp, ncap * sizeof(*nt));
		if (!nt)
			return false;
		s->q_tmp = nt;
		s->q_cap = ncap;
	}
	e = &s->q[s->q_len];
	e->pool_off = s->qpool.len;
	if (!dbuf_append(&s->qpool, rec, len))
		return false;
	e->time = time;
	e->offset = off;
	e->len = (uint16_t)len; /* a queued record is header.size long (see struct rdr_qent) */
	e->attr = attr;
	e->in_compressed = inz;
	e->kind = QE_QUEUED;
	s->q_len++;
	if (time > s->max_time)
		s->max_time = time;
	return true;
}

/*
 * By time alone: records of equal time keep file order because the sort is
 * stable and the queue holds them in file order (what an earlier round left
 * is at the front, in order, and new records are appended as read). A
 * sequence number to break ties made the entry 48 bytes instead of 32 and
 * every comparison two; the sort moves and compares each entry of a round
 * a few times.
 */
static bool qent_before(const struct rdr_qent *x, const struct rdr_qent *y)
{
	return x->time < y->time;
}

/* Runs merged in one pass; more go through pairwise passes. */
#define Q_KWAY 8

/*
 * Merges the k sorted runs of a (run j from start[j] to start[j + 1], the
 * last to n) into b in one pass. Stable: of equal times the earliest run's
 * entry goes first, and runs are in file order.
 */
static void q_merge_runs(const struct rdr_qent *a, struct rdr_qent *b, size_t n,
			 const size_t *start, size_t k)
{
	size_t pos[Q_KWAY], end[Q_KWAY];

	for (size_t j = 0; j < k; j++) {
		pos[j] = start[j];
		end[j] = j + 1 < k ? start[j + 1] : n;
	}
	for (size_t o = 0; o < n; o++) {
		size_t best = k;

		for (size_t j = 0; j < k; j++)
			if (pos[j] < end[j] && (best == k || qent_before(&a[pos[j]], &a[pos[best]])))
				best = j;
		b[o] = a[pos[best]++];
	}
}

/*
 * Sorts the queue by (time, file order). perf writes each CPU's buffer in
 * time order, so a round is a handful of sorted runs (one per CPU, and
 * what the last flush left, sorted): up to Q_KWAY of them are merged in
 * one pass, each entry moved once (pairwise merging moved each entry once
 * per pass, two passes for the usual three runs: 115 M of the 90 MB
 * benchmark file's instructions). More runs take a natural merge sort
 * (merge neighbouring runs until one is left), linear per pass. qsort paid
 * n log n comparisons on 48-byte entries (32 now).
 */
static void q_sort(struct rdr_side *s)
{
	struct rdr_qent *a = s->q, *b = s->q_tmp;
	size_t n = s->q_len;
	size_t start[Q_KWAY], runs = 1;

	start[0] = 0;
	for (size_t i = 1; i < n && runs <= Q_KWAY; i++) {
		if (qent_before(&a[i], &a[i - 1])) {
			if (runs < Q_KWAY)
				start[runs] = i;
			runs++;
		}
	}
	if (runs == 1)
		return; /* one run: sorted */
	if (runs <= Q_KWAY) {
		q_merge_runs(a, b, n, start, runs);
		s->q_tmp = a;
		s->q = b;
		return;
	}
	for (;;) {
		size_t i = 0, j = 1;

		while (j < n && !qent_before(&a[j], &a[j - 1]))
			j++;
		if (j >= n)
			break; /* one run: sorted */
		while (i < n) {
			size_t k, x, y, o = i;

			j = i + 1;
			while (j < n && !qent_before(&a[j], &a[j - 1]))
				j++;
			k = j < n ? j + 1 : n;
			while (k < n && !qent_before(&a[k], &a[k - 1]))
				k++;
			/* stable: on equal keys the left run (earlier in the file) goes first */
			for (x = i, y = j; x < j && y < k;)
				b[o++] = qent_before(&a[y], &a[x]) ? a[y++] : a[x++];
			while (x < j)
				b[o++] = a[x++];
			while (y < k)
				b[o++] = a[y++];
			i = k;
		}
		{
			struct rdr_qent *t = a;

			a = b;
			b = t;
		}
	}
	if (a != s->q) {
		s->q_tmp = s->q;
		s->q = a;
	}
}

/* Marks the first n (sorted) records of the queue ready to go out. */
static void q_ready_set(struct rdr_side *s, size_t n)
{
	s->q_ready = n;
	/* the last one has the latest time; all go out before another record is read */
	if (n && s->q[n - 1].time > s->last_flushed)
		s->last_flushed = s->q[n - 1].time;
}

void q_flush(struct rdr_side *s, uint64_t limit, bool all)
{
	size_t n = 0;

	if (!s->q_len)
		return;
	q_sort(s);
	if (all) {
		n = s->q_len;
	} else {
		while (n < s->q_len && s->q[n].time <= limit)
			n++;
	}
	q_ready_set(s, n);
}

bool q_carry(struct rdr_side *s, const uint8_t *from, struct dbuf *to)
{
	size_t bytes = 0;

	for (size_t i = s->q_ready; i < s->q_len; i++)
		bytes += s->q[i].len;
	if (!dbuf_reserve(to, bytes))
		return false;
	for (size_t i = s->q_ready; i < s->q_len; i++) {
		struct rdr_qent *e = &s->q[i];
		size_t noff = to->len;

		dbuf_append(to, from + e->pool_off, e->len);
		e->pool_off = noff;
	}
	return true;
}

enum step read_step(const struct rdr *r, struct rdr_side *s, struct raw_rec *rr)
{
	enum raw_src src = next_raw(r, s, rr);
	uint64_t time;
	uint32_t type;
	bool has_time;

	if (src == RAW_END)
		return STEP_END;
	rr->inz = src == RAW_ZSTD;
	rr->attr = -1;
	type = rdr_rd32(r, rr->rec);
	if (type == PERF_REC_FINISHED_ROUND) {
		q_flush(s, s->round_limit, false);
		s->round_limit = s->max_time;
		return s->q_ready ? STEP_READY : STEP_NONE;
	}
	if (!rdr_type_known(type) || type == PERF_REC_HEADER_EVENT_TYPE)
		return STEP_NONE;
	if (rdr_type_meta(type))
		return STEP_META;
	rdr_classify(r, rr->rec, rr->len, &rr->attr, &has_time, &time);
	if (!has_time)
		return STEP_NOW;
	if (time < s->last_flushed)
		s->st.time_order_violations++;
	if (!q_push(s, rr->rec, rr->len, rr->off, rr->inz, rr->attr, time)) {
		side_problem(s, CONV_E_NOMEM, rr->off, type, "no memory to queue a record; dropped");
		return STEP_NONE;
	}
	/* the pool also holds the bytes of the next batch's unqueued records (open_bytes) */
	if (s->qpool.len - s->open_bytes > r->opts.reorder_limit) {
		/* window full before FINISHED_ROUND: deliver the older half, as perf does */
		s->st.reorder_forced_flushes++;
		q_sort(s);
		q_ready_set(s, s->q_len / 2 ? s->q_len / 2 : s->q_len);
		return STEP_READY;
	}
	return STEP_NONE;
}

void q_release(struct rdr_side *s)
{
	dbuf_release(&s->qpool);
	free(s->q);
	free(s->q_tmp);
	s->q = s->q_tmp = NULL;
	s->q_len = s->q_cap = s->q_ready = 0;
}
