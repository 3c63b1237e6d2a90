/*
 * The reader's public API: open (the container: file or pipe mode), next
 * and close, and the delivery of each record: decoding, deferred
 * callchains, pipe mode's metadata, the counts the caller reads. The
 * stages before delivery are files of their own: rdr_raw.c (records from
 * the input), rdr_zstd.c (COMPRESSED records), rdr_order.c (time
 * ordering), rdr_ahead.c (batches and the read-ahead thread); rdr_header.c
 * and rdr_record.c parse the header and the records.
 *
 * File and pipe containers (tools/perf/util/header.c):
 *   file: u8 magic[8] "PERFILE2", u64 header size 104, ... (see rdr_header.c)
 *   pipe: u8 magic[8] "PERFILE2", u64 header size 16, then records at once;
 *         metadata comes as records: HEADER_ATTR 64 {attr; u64 ids[]},
 *         HEADER_TRACING_DATA 66 {u32 size [+ u32 pad]} + size bytes after
 *         header.size, HEADER_BUILD_ID 67, HEADER_FEATURE 80 {u64 feat; payload}.
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_REORDER_LIMIT (32u << 20)
#define DEFAULT_MAX_TRACING (64u << 20)
#define DEFAULT_MAX_PROBLEMS 100

const struct rdr_info *rdr_info(const struct rdr *r)
{
	return &r->info;
}

const struct rdr_stats *rdr_stats(const struct rdr *r)
{
	return &r->stats;
}

static struct rdr *rdr_new(const struct rdr_opts *opts)
{
	struct rdr *r = calloc(1, sizeof(*r));
	bool ok;

	if (!r)
		return NULL;
	if (opts)
		r->opts = *opts;
	if (!r->opts.reorder_limit)
		r->opts.reorder_limit = DEFAULT_REORDER_LIMIT;
	if (!r->opts.max_tracing_data)
		r->opts.max_tracing_data = DEFAULT_MAX_TRACING;
	if (!r->opts.max_problems)
		r->opts.max_problems = DEFAULT_MAX_PROBLEMS;
	r->problems = calloc(r->opts.max_problems, sizeof(*r->problems));
	ok = r->problems && plist_init(&r->side.prob, r->opts.max_problems);
	for (size_t i = 0; i < RDR_BATCHES; i++)
		ok = plist_init(&r->batches[i].prob, r->opts.max_problems) && ok;
	if (!ok) {
		free(r->problems);
		plist_release(&r->side.prob);
		for (size_t i = 0; i < RDR_BATCHES; i++)
			plist_release(&r->batches[i].prob);
		free(r);
		return NULL;
	}
	r->side.max_problems = r->opts.max_problems;
	r->nr_slots = 1; /* RDR_BATCHES with the read-ahead thread */
	arena_init(&r->arena, 512u << 20);
	pthread_mutex_init(&r->ahead_mu, NULL);
	pthread_cond_init(&r->ahead_cv, NULL);
	for (size_t i = 0; i < RDR_BATCHES; i++)
		dbuf_init(&r->batches[i].pool, 0);
	r->side.in.fd = -1;
	r->id_zero_attr = -1;
	hmap_init(&r->tp_names);
	dbuf_init(&r->side.zin, 1u << 20);
	dbuf_init(&r->side.zout, 4u << 20);
	dbuf_init(&r->side.qpool, 0);
	dbuf_init(&r->s_callchain, 0);
	dbuf_init(&r->s_read, 0);
	dbuf_init(&r->s_branch, 0);
	dbuf_init(&r->s_regs_user, 0);
	dbuf_init(&r->s_regs_intr, 0);
	dbuf_init(&r->s_counters, 0);
	dbuf_init(&r->s_stitch, 0);
	return r;
}

void rdr_close(struct rdr *r)
{
	if (!r)
		return;
	ahead_join(r);
	for (size_t i = 0; i < RDR_BATCHES; i++) {
		dbuf_release(&r->batches[i].pool);
		free(r->batches[i].ents);
		plist_release(&r->batches[i].prob);
	}
	free(r->side.open);
	plist_release(&r->side.prob);
	pthread_cond_destroy(&r->ahead_cv);
	pthread_mutex_destroy(&r->ahead_mu);
	in_release(&r->side.in);
	hmap_release(&r->tp_names);
	arena_release(&r->arena);
	free(r->info.attrs);
	free(r->info.build_ids);
	free(r->idpos);
	free(r->id_keys);
	free(r->id_vals);
	free(r->problems);
	z_release(&r->side);
	q_release(&r->side);
	for (size_t i = 0; i < r->nr_held; i++)
		held_free(&r->held[i]);
	free(r->held);
	for (size_t i = r->emit_pos; i < r->nr_emit; i++)
		held_free(&r->emit[i]);
	free(r->emit);
	held_free(&r->cur_emit);
	dbuf_release(&r->s_callchain);
	dbuf_release(&r->s_read);
	dbuf_release(&r->s_branch);
	dbuf_release(&r->s_regs_user);
	dbuf_release(&r->s_regs_intr);
	dbuf_release(&r->s_counters);
	dbuf_release(&r->s_stitch);
	free(r);
}

static enum conv_err rdr_start(struct rdr *r, struct conv_diag *diag)
{
	const uint8_t *p;
	uint8_t head[16];
	uint64_t magic, hsize;
	bool host_le;
	uint16_t one = 1;

	memcpy(&host_le, &one, 1);
	host_le = *(const uint8_t *)&one == 1;
	r->info.file_size = r->side.in.size;
	r->info.file_mtime_ns = r->side.in.mtime_ns;
	if (in_peek(&r->side.in, 16, &p) < 16)
		return conv_fail(diag, CONV_E_NOTPERF, 0, "too short for a perf.data header");
	memcpy(head, p, 16);
	if (!memcmp(head, "PERFILE2", 8)) {
		r->info.big_endian = false;
	} else if (!memcmp(head, "2ELIFREP", 8)) {
		r->info.big_endian = true;
	} else if (!memcmp(head, "PERFFILE", 8)) {
		return conv_fail(diag, CONV_E_UNSUPPORTED, 0,
				 "obsolete perf.data version 1 (PERFFILE); perf since 2.6.37 writes version 2");
	} else {
		return conv_fail(diag, CONV_E_NOTPERF, 0, "no PERFILE2 magic at the start");
	}
	r->swap = r->info.big_endian == host_le;
	memcpy(&magic, head, 8);
	(void)magic;
	memcpy(&hsize, head + 8, 8);
	if (r->swap)
		hsize = conv_bswap64(hsize);
	if (hsize == PERF_PIPE_HEADER_SIZE) {
		r->info.mode = RDR_MODE_PIPE;
		in_consume(&r->side.in, 16);
		r->side.in.limit = UINT64_MAX;
		return CONV_E_OK;
	}
	if (hsize < PERF_FILE_HEADER_MIN || hsize > 4096)
		return conv_fail(diag, CONV_E_FORMAT, 8, "bad header size %" PRIu64, hsize);
	r->info.mode = RDR_MODE_FILE;
	if (!r->side.in.seekable) {
		enum conv_err err;

		err = in_spool(&r->side.in, diag);
		if (err)
			return err;
		r->info.file_size = r->side.in.size;
	}
	return rdr_read_file_header(r, diag);
}

static enum conv_err rdr_open_common(struct rdr *r, struct rdr **out, struct conv_diag *diag)
{
	enum conv_err err = rdr_start(r, diag);

	if (err) {
		rdr_close(r);
		*out = NULL;
		return err;
	}
	*out = r;
	return CONV_E_OK;
}

enum conv_err rdr_open_fd(struct rdr **out, int fd, const struct rdr_opts *opts,
			  struct conv_diag *diag)
{
	struct rdr *r = rdr_new(opts);
	enum conv_err err;

	*out = NULL;
	if (!r)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the reader");
	err = in_init_fd(&r->side.in, fd, diag);
	if (err) {
		rdr_close(r);
		return err;
	}
	return rdr_open_common(r, out, diag);
}

enum conv_err rdr_open_mem(struct rdr **out, const void *data, size_t len,
			   const struct rdr_opts *opts, struct conv_diag *diag)
{
	struct rdr *r = rdr_new(opts);

	*out = NULL;
	if (!r)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the reader");
	in_init_mem(&r->side.in, data, len);
	return rdr_open_common(r, out, diag);
}

enum conv_err rdr_open_path(struct rdr **out, const char *path, const struct rdr_opts *opts,
			    struct conv_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	enum conv_err err;

	*out = NULL;
	if (fd < 0)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "cannot open %s: %s", path,
				 strerror(errno));
	err = rdr_open_fd(out, fd, opts, diag);
	if (err) {
		close(fd);
		return err;
	}
	/* the reader owns the fd from here (a spooled input already replaced it) */
	if ((*out)->side.in.own_fd)
		close(fd);
	else
		(*out)->side.in.own_fd = true;
	return CONV_E_OK;
}

void note_sample(struct rdr *r, const struct rdr_event *ev)
{
	const struct rdr_sample *s = &ev->u.sample;

	r->stats.samples++;
	r->info.attrs[ev->attr].samples++;
	if (s->sample_type & (1u << 2)) {
		if (!r->stats.has_sample_time || s->time < r->stats.first_sample_time)
			r->stats.first_sample_time = s->time;
		if (!r->stats.has_sample_time || s->time > r->stats.last_sample_time)
			r->stats.last_sample_time = s->time;
		r->stats.has_sample_time = true;
	}
}


bool rdr_deliver(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz,
		    int attr)
{
	struct rdr_event *ev = &r->ev;

	if (!rdr_decode(r, rec, len, off, inz, attr))
		return false;
	switch (ev->type) {
	case PERF_REC_SAMPLE: {
		int64_t k = deferred_marker(&ev->u.sample);

		if (k >= 0) {
			hold_sample(r, rec, len, off, inz, attr, ev->u.sample.callchain[k + 1],
				    ev->u.sample.tid);
			return false;
		}
		note_sample(r, ev);
		break;
	}
	case PERF_REC_CALLCHAIN_DEFERRED:
		if (r->nr_held)
			held_release(r, ev->sid.tid, false, true, ev->u.deferred.cookie,
				     ev->u.deferred.ips, ev->u.deferred.nr);
		break;
	case PERF_REC_EXIT:
		if (r->nr_held)
			held_release(r, ev->u.fork_exit.tid, false, false, 0, NULL, 0);
		break;
	case PERF_REC_LOST:
		r->stats.lost_events += ev->u.lost.lost;
		break;
	case PERF_REC_LOST_SAMPLES:
		r->stats.lost_samples += ev->u.lost.lost;
		break;
	default:
		break;
	}
	return true;
}

/* HEADER_ATTR 64 {attr; u64 ids[]} of pipe mode: an event and its ids (c: the body). */
static void meta_attr(struct rdr *r, struct cur *c, const uint8_t *rec, uint64_t off)
{
	uint32_t type = PERF_REC_HEADER_ATTR;
	struct rdr_attr a;
	size_t asize;
	int idx;
	uint64_t nids;

	/* -1 tells the caller this record added no attr */
	r->ev.u.attr_index = -1;
	if (cur_remaining(c) < 8) {
		rdr_problem(r, CONV_E_FORMAT, off, type, "HEADER_ATTR record too short");
		return;
	}
	asize = rdr_rd32(r, rec + 12);
	if (asize == 0)
		asize = 64;
	if (asize > cur_remaining(c)) {
		rdr_problem(r, CONV_E_FORMAT, off, type,
			    "HEADER_ATTR attr.size %zu exceeds its record", asize);
		return;
	}
	rdr_parse_attr(r, c, asize, &a);
	nids = cur_remaining(c) / 8;
	if (nids > RDR_MAX_IDS - r->ids_stored) {
		rdr_problem(r, CONV_E_LIMIT, r->ev.offset, type,
			    "more than %u sample ids in HEADER_ATTR records: the rest are ignored",
			    RDR_MAX_IDS);
		nids = RDR_MAX_IDS - r->ids_stored;
	}
	r->ids_stored += (size_t)nids;
	idx = rdr_add_attr(r, &a);
	if (idx < 0)
		return;
	r->info.attrs[idx].ids = arena_alloc_array(&r->arena, nids ? nids : 1, 8);
	if (r->info.attrs[idx].ids) {
		cur_u64_array(c, r->info.attrs[idx].ids, (size_t)nids);
		r->info.attrs[idx].nr_ids = (size_t)nids;
		for (size_t i = 0; i < nids; i++)
			rdr_add_id(r, r->info.attrs[idx].ids[i], idx);
	}
	rdr_attrs_finish(r, (size_t)idx);
	rdr_name_attr(r, (size_t)idx);
	r->ev.u.attr_index = idx;
}

void rdr_handle_meta(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off)
{
	uint32_t type = rdr_rd32(r, rec);
	uint16_t size = rdr_rd16(r, rec + 6);
	struct cur c;

	cur_init(&c, rec + 8, (len < size ? len : size) - 8u, r->swap);
	switch (type) {
	case PERF_REC_HEADER_ATTR:
		meta_attr(r, &c, rec, off);
		break;
	case PERF_REC_HEADER_FEATURE: {
		uint64_t feat = cur_u64(&c);

		if (!cur_ok(&c)) {
			rdr_problem(r, CONV_E_FORMAT, off, type, "HEADER_FEATURE record too short");
			return;
		}
		r->ev.u.feature = feat;
		/* the list ends with an empty record whose id moves with perf versions */
		if (cur_remaining(&c) == 0)
			return;
		rdr_parse_feature(r, feat, c.base + c.pos, cur_remaining(&c), off + 16, true);
		break;
	}
	case PERF_REC_HEADER_BUILD_ID:
		rdr_parse_build_ids(r, rec, size, off, RDR_BID_PIPE);
		r->ev.u.build_id = rdr_last_build_id(r);
		break;
	case PERF_REC_HEADER_TRACING_DATA:
		if (len > size && len - size <= r->opts.max_tracing_data) {
			r->info.tracing_data = arena_memdup(&r->arena, rec + size, len - size);
			r->info.tracing_data_len = r->info.tracing_data ? len - size : 0;
		}
		r->info.features[0] |= 1ull << PERF_FEAT_TRACING_DATA;
		rdr_tracing_reset(r);
		rdr_name_attrs(r);
		break;
	case PERF_REC_EVENT_UPDATE: {
		uint64_t utype = cur_u64(&c);
		uint64_t id = cur_u64(&c);
		int a = rdr_lookup_id(r, id);

		if (utype == 2 && cur_ok(&c) && a >= 0) { /* PERF_EVENT_UPDATE__NAME */
			size_t nlen = strnlen((const char *)c.base + c.pos, cur_remaining(&c));

			r->info.attrs[a].name =
				arena_strndup(&r->arena, (const char *)c.base + c.pos, nlen);
			r->info.attrs[a].name_from_file = true;
		}
		break;
	}
	default:
		break;
	}
}

enum conv_err rdr_next(struct rdr *r, const struct rdr_event **out)
{
	*out = NULL;
	held_free(&r->cur_emit);
	if (r->opts.read_ahead && !r->done)
		ahead_start(r);
	for (;;) {
		if (r->emit_pos < r->nr_emit) {
			r->cur_emit = r->emit[r->emit_pos++];
			if (r->emit_pos == r->nr_emit)
				r->emit_pos = r->nr_emit = 0;
			if (emit_held(r, &r->cur_emit)) {
				*out = &r->ev;
				return CONV_E_OK;
			}
			held_free(&r->cur_emit);
			continue;
		}
		if (!r->done) {
			if (batch_next(r)) {
				*out = &r->ev;
				return CONV_E_OK;
			}
			continue;
		}
		if (r->nr_held) {
			held_release(r, 0, true, false, 0, NULL, 0);
			continue;
		}
		if (r->side.in.io_errno && r->side.in.io_errno != ENOMEM)
			rdr_problem(r, CONV_E_IO, r->side.in.pos, 0, "read error: %s",
				    strerror(r->side.in.io_errno));
		batch_release(r);
		return CONV_E_OK;
	}
}
