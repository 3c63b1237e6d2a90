/*
 * Batches: from reading to delivery, and the read-ahead thread. Apart
 * from the reading and the delivery because this is the one place where
 * two threads meet: everything here under ahead_mu is shared, everything
 * the input side writes besides is in struct rdr_side.
 *
 * Records go from read_step to delivery in batches, in the order they go
 * out: the records without a time read since the last batch (delivered
 * as read, ahead of the records still queued), then what a flush made
 * ready. A batch takes the pool with the records' bytes; the records still
 * queued move to a pool given back earlier, so their bytes are copied once
 * more, as a round's carry always was. With opts.read_ahead a thread of
 * the reader's own reads the batches (input, decompression, queueing and
 * sorting: a quarter of a run's reading time), a few ahead, while the
 * caller's thread decodes and delivers them; without it, batch_next reads
 * the next batch itself when the last is delivered. Decoded events are
 * not handed over: they are 448 bytes and point into scratch buffers
 * (copying them cost more than decoding, stop 13). A metadata record
 * (pipe mode) ends its batch: it changes the events and ids records are
 * classified by, so the thread waits until the caller has handled it. The
 * input side's counts and problems (struct rdr_side) travel with the
 * batches, merged by the caller (problems at the entry they were found
 * before), so only the caller's thread writes what the caller reads, and
 * both come out in the same order with and without the thread.
 */

#include "reader/reader_internal.h"

#include "core/vec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of records without a time that are handed over without waiting for a flush. */
#define AHEAD_OPEN_MAX (256u << 10)

/*
 * Pool bytes handed over and not given back, with the next batch's, at
 * most, unless nothing is in flight: the thread runs ahead by up to
 * RDR_BATCHES rounds while they are small (a round of the 90 MB benchmark
 * file is ~120 KB), by one when perf wrote large ones (or the reorder
 * window filled: then the records in memory are what they are without
 * read-ahead, the batch being delivered and the queue).
 */
#define AHEAD_BYTES (16u << 20)

/*
 * A batch's pool or entries larger than this are freed when it is given
 * back rather than kept for the next: 8 kept windows of a large reorder
 * limit would be 8 times its memory (a hostile file of 1 024 SAMPLEs of
 * 64 KiB in one round: peak RSS 114 MB without read-ahead, 143 MB with
 * the windows kept).
 */
#define AHEAD_KEEP_BYTES (2u << 20)

/*
 * Whether the thread may hand over another batch of next bytes. Once it
 * had to wait, it is woken only when half of them are back: waking a
 * thread costs this VM 100-150 us, and a thread woken for every batch
 * given back ran only one batch ahead and the caller waited for it (139
 * waits, 20 ms a run).
 */
static bool ahead_room(const struct rdr *r, bool waited, size_t next)
{
	uint64_t n = r->produced - r->consumed;

	if (!n)
		return true;
	if (waited)
		return n <= r->nr_slots / 2 && r->inflight_bytes + next <= AHEAD_BYTES / 2;
	return n < r->nr_slots && r->inflight_bytes + next <= AHEAD_BYTES;
}

/* Adds a record that is not queued to the next batch; false when out of memory (reported). */
static bool open_add(const struct rdr *r, struct rdr_side *s, const struct raw_rec *rr,
		     uint8_t kind)
{
	struct rdr_qent *e;
	size_t pool_off = s->qpool.len;

	if (!vec_reserve((void **)&s->open, &s->cap_open, s->nr_open + 1, sizeof(*s->open)) ||
	    !dbuf_append(&s->qpool, rr->rec, rr->len)) {
		side_problem(s, CONV_E_NOMEM, rr->off, rdr_rd32(r, rr->rec),
			    "no memory to hand a record over; dropped");
		return false;
	}
	e = &s->open[s->nr_open++];
	memset(e, 0, sizeof(*e));
	e->time = rr->len;
	e->offset = rr->off;
	e->pool_off = pool_off;
	e->in_compressed = rr->inz;
	e->kind = kind;
	e->attr = kind == QE_META ? -1 : rr->attr;
	s->open_bytes += rr->len;
	return true;
}

/*
 * Hands the unqueued records and the ready queued ones over as a batch
 * (the thread waits for a free one); false when the reader is being
 * closed.
 */
static bool batch_publish(struct rdr *r)
{
	struct rdr_side *s = &r->side;
	struct rdr_batch *b;
	struct rdr_plist pl;
	struct dbuf fresh;
	size_t need = s->nr_open + s->q_ready;
	bool stop;

	pthread_mutex_lock(&r->ahead_mu);
	if (!ahead_room(r, false, s->qpool.len)) {
		r->producer_waiting = true;
		r->waiting_bytes = s->qpool.len;
		while (!ahead_room(r, true, r->waiting_bytes) && !r->ahead_stop)
			pthread_cond_wait(&r->ahead_cv, &r->ahead_mu);
		r->producer_waiting = false;
	}
	stop = r->ahead_stop;
	pthread_mutex_unlock(&r->ahead_mu);
	if (stop)
		return false;
	b = &r->batches[r->produced % r->nr_slots];
	b->n = 0;
	if (need > b->cap) {
		size_t ncap = need + need / 2;
		struct rdr_qent *n = realloc(b->ents, ncap * sizeof(*n));

		if (n) {
			b->ents = n;
			b->cap = ncap;
		}
	}
	if (need <= b->cap) {
		if (s->nr_open)
			memcpy(b->ents, s->open, s->nr_open * sizeof(*b->ents));
		if (s->q_ready)
			memcpy(b->ents + s->nr_open, s->q, s->q_ready * sizeof(*b->ents));
		b->n = need;
	} else {
		side_problem(s, CONV_E_NOMEM, s->q_ready ? s->q[0].offset : s->open[0].offset, 0,
			    "no memory to hand %zu records over; dropped", need);
	}
	/* the batch takes the pool; what stays queued moves to the batch's old one */
	fresh = b->pool;
	dbuf_reset(&fresh);
	b->pool = s->qpool;
	if (!q_carry(s, b->pool.data, &fresh)) {
		side_problem(s, CONV_E_NOMEM, s->q[s->q_ready].offset, 0,
			    "no memory to keep %zu queued records; dropped", s->q_len - s->q_ready);
		s->q_len = s->q_ready;
	}
	s->qpool = fresh;
	if (s->q_len > s->q_ready)
		memmove(s->q, s->q + s->q_ready, (s->q_len - s->q_ready) * sizeof(*s->q));
	s->q_len -= s->q_ready;
	s->q_ready = 0;
	s->nr_open = 0;
	s->open_bytes = 0;
	/* the counts so far and the problems since the last batch go with it */
	b->st = s->st;
	pl = b->prob;
	b->prob = s->prob;
	s->prob = pl;
	s->prob.n = s->prob.next = 0;
	s->prob.dropped = 0;
	pthread_mutex_lock(&r->ahead_mu);
	r->produced++;
	r->inflight_bytes += b->pool.len;
	if (r->consumer_waiting)
		pthread_cond_broadcast(&r->ahead_cv);
	/*
	 * A large batch (a full reorder window): the thread reads on only once
	 * it is delivered, so that no more is in memory than without
	 * read-ahead (the batch, and the records it left queued).
	 */
	if (r->nr_slots > 1 && r->inflight_bytes > AHEAD_BYTES) { /* on the thread (set before it started) */
		r->producer_waiting = true;
		r->waiting_bytes = 0;
		while (r->produced != r->consumed && !r->ahead_stop)
			pthread_cond_wait(&r->ahead_cv, &r->ahead_mu);
		r->producer_waiting = false;
	}
	stop = r->ahead_stop;
	pthread_mutex_unlock(&r->ahead_mu);
	return !stop;
}

/* What batch_read ended with. */
enum produced { PROD_BATCH, PROD_META, PROD_END, PROD_STOP };

/*
 * Reads until a batch is handed over: at a flush, a metadata record (the
 * batch ends with it), 256 KiB of records without a time, or the end of
 * the input (with what was still queued).
 */
static enum produced batch_read(struct rdr *r)
{
	struct rdr_side *s = &r->side;

	for (;;) {
		struct raw_rec rr;

		switch (read_step(r, s, &rr)) {
		case STEP_END:
			q_flush(s, 0, true);
			return batch_publish(r) ? PROD_END : PROD_STOP;
		case STEP_READY:
			return batch_publish(r) ? PROD_BATCH : PROD_STOP;
		case STEP_META:
			if (open_add(r, s, &rr, QE_META))
				return batch_publish(r) ? PROD_META : PROD_STOP;
			break;
		case STEP_NOW:
			if (open_add(r, s, &rr, QE_NOW) && s->open_bytes >= AHEAD_OPEN_MAX)
				return batch_publish(r) ? PROD_BATCH : PROD_STOP;
			break;
		default:
			break;
		}
	}
}

/* Waits until the caller has handled the metadata record handed over; false when closing. */
static bool ahead_wait_meta(struct rdr *r)
{
	bool stop;

	pthread_mutex_lock(&r->ahead_mu);
	r->meta_sent++;
	while (r->meta_done < r->meta_sent && !r->ahead_stop)
		pthread_cond_wait(&r->ahead_cv, &r->ahead_mu);
	stop = r->ahead_stop;
	pthread_mutex_unlock(&r->ahead_mu);
	return !stop;
}

static void *ahead_main(void *arg)
{
	struct rdr *r = arg;
	enum produced p;

	do
		p = batch_read(r);
	while (p == PROD_BATCH || (p == PROD_META && ahead_wait_meta(r)));
	pthread_mutex_lock(&r->ahead_mu);
	r->ahead_end = true;
	pthread_cond_broadcast(&r->ahead_cv);
	pthread_mutex_unlock(&r->ahead_mu);
	return NULL;
}

void ahead_start(struct rdr *r)
{
	r->opts.read_ahead = false; /* tried once */
	r->nr_slots = RDR_BATCHES;
	r->ahead_started = pthread_create(&r->ahead_th, NULL, ahead_main, r) == 0;
	if (!r->ahead_started)
		r->nr_slots = 1; /* no thread: batch_next reads */
}

void ahead_join(struct rdr *r)
{
	if (!r->ahead_started || r->ahead_joined)
		return;
	pthread_mutex_lock(&r->ahead_mu);
	r->ahead_stop = true;
	pthread_cond_broadcast(&r->ahead_cv);
	pthread_mutex_unlock(&r->ahead_mu);
	pthread_join(r->ahead_th, NULL);
	r->ahead_joined = true;
}

/* Adds what the input side counted since the last batch (its fields only). */
static void merge_in_stats(struct rdr *r, const struct rdr_stats *now)
{
	struct rdr_stats *d = &r->stats, *seen = &r->in_seen;

	for (size_t i = 0; i < RDR_RECORD_TYPES; i++)
		d->records[i] += now->records[i] - seen->records[i];
	d->records_unknown += now->records_unknown - seen->records_unknown;
	d->bytes_read += now->bytes_read - seen->bytes_read;
	d->compressed_bytes_in += now->compressed_bytes_in - seen->compressed_bytes_in;
	d->compressed_bytes_out += now->compressed_bytes_out - seen->compressed_bytes_out;
	d->records_malformed += now->records_malformed - seen->records_malformed;
	d->time_order_violations += now->time_order_violations - seen->time_order_violations;
	d->reorder_forced_flushes += now->reorder_forced_flushes - seen->reorder_forced_flushes;
	d->auxtrace_bytes += now->auxtrace_bytes - seen->auxtrace_bytes;
	d->truncated = d->truncated || now->truncated;
	d->stopped = d->stopped || now->stopped;
	*seen = *now;
}

/* The next batch (read here without the thread, else waited for); NULL after the last. */
static struct rdr_batch *batch_take(struct rdr *r)
{
	struct rdr_batch *b = NULL;

	if (!r->ahead_started && !r->ahead_end) {
		r->ahead_end = batch_read(r) == PROD_END;
	}
	pthread_mutex_lock(&r->ahead_mu);
	while (r->produced == r->consumed && !r->ahead_end) {
		r->consumer_waiting = true;
		pthread_cond_wait(&r->ahead_cv, &r->ahead_mu);
	}
	r->consumer_waiting = false;
	if (r->produced > r->consumed)
		b = &r->batches[r->consumed % r->nr_slots];
	pthread_mutex_unlock(&r->ahead_mu);
	if (!b)
		return NULL;
	merge_in_stats(r, &b->st);
	r->problems_dropped += b->prob.dropped;
	return b;
}

/* Takes over the batch's problems found before its entry pos was read. */
static void batch_problems(struct rdr *r, struct rdr_batch *b, size_t pos)
{
	struct rdr_plist *pl = &b->prob;

	for (; pl->next < pl->n && pl->at[pl->next] <= pos; pl->next++)
		rdr_problem_merge(r, &pl->v[pl->next]);
}

/* Gives the delivered batch back for the next. */
static void batch_give_back(struct rdr *r)
{
	size_t len = r->cur->pool.len;

	/* a large one goes back to the heap at once (see AHEAD_KEEP_BYTES) */
	if (r->cur->pool.alloc > AHEAD_KEEP_BYTES)
		dbuf_release(&r->cur->pool);
	if (r->cur->cap * sizeof(*r->cur->ents) > AHEAD_KEEP_BYTES) {
		free(r->cur->ents);
		r->cur->ents = NULL;
		r->cur->n = r->cur->cap = 0;
	}
	pthread_mutex_lock(&r->ahead_mu);
	r->consumed++;
	r->inflight_bytes -= len;
	if (r->producer_waiting && ahead_room(r, true, r->waiting_bytes))
		pthread_cond_broadcast(&r->ahead_cv);
	pthread_mutex_unlock(&r->ahead_mu);
	r->cur = NULL;
}

/* Tells the thread a metadata record was handled. */
static void ahead_meta_done(struct rdr *r)
{
	pthread_mutex_lock(&r->ahead_mu);
	r->meta_done++;
	pthread_cond_broadcast(&r->ahead_cv);
	pthread_mutex_unlock(&r->ahead_mu);
}

bool batch_next(struct rdr *r)
{
	const struct rdr_qent *e;
	const uint8_t *rec;

	if (r->cur)
		batch_problems(r, r->cur, r->cur_pos);
	if (!r->cur || r->cur_pos == r->cur->n) {
		if (r->cur)
			batch_give_back(r);
		r->cur = batch_take(r);
		r->cur_pos = 0;
		if (!r->cur) {
			ahead_join(r);
			r->done = true;
		}
		return false;
	}
	e = &r->cur->ents[r->cur_pos++];
	rec = r->cur->pool.data + e->pool_off;
	if (e->kind == QE_META) {
		bool ok = rdr_decode(r, rec, (size_t)e->time, e->offset, e->in_compressed, -1);

		if (ok)
			rdr_handle_meta(r, rec, (size_t)e->time, e->offset);
		ahead_meta_done(r);
		return ok;
	}
	return rdr_deliver(r, rec, e->kind == QE_QUEUED ? e->len : (size_t)e->time, e->offset,
		       e->in_compressed, e->attr);
}

void batch_release(struct rdr *r)
{
	struct rdr_side *s = &r->side;

	q_release(s);
	for (size_t i = 0; i < RDR_BATCHES; i++) {
		dbuf_release(&r->batches[i].pool);
		free(r->batches[i].ents);
		r->batches[i].ents = NULL;
		r->batches[i].n = r->batches[i].cap = 0;
	}
	free(s->open);
	s->open = NULL;
	s->nr_open = s->cap_open = 0;
}
