/*
 * The reader's main loop: input -> raw records (decompressing COMPRESSED
 * ones through one zstd stream) -> time ordering -> decoding -> delivery.
 *
 * File and pipe containers (tools/perf/util/header.c):
 *   file: u8 magic[8] "PERFILE2", u64 header size 104, ... (see rdr_header.c)
 *   pipe: u8 magic[8] "PERFILE2", u64 header size 16, then records at once;
 *         metadata comes as records: HEADER_ATTR 64 {attr; u64 ids[]},
 *         HEADER_TRACING_DATA 66 {u32 size [+ u32 pad]} + size bytes after
 *         header.size, HEADER_BUILD_ID 67, HEADER_FEATURE 80 {u64 feat; payload}.
 *   COMPRESSED 81: zstd bytes from @8 to header.size.
 *   COMPRESSED2 83: u64 data_size @8, zstd bytes @16 .. 16 + data_size.
 * The payloads of all compressed records form one zstd stream whose output is
 * ordinary records, which may straddle two payloads.
 *
 * Ordering follows perf's ordered-events: records with a time are queued; at
 * each FINISHED_ROUND the queued records up to the largest time seen before
 * the previous round are sorted by (time, file order) and delivered; records
 * without a time go out as read, ahead of the records still queued; the
 * rest goes out at the end. Records travel from reading to delivery in
 * batches, read on a thread of their own with opts.read_ahead (see
 * "batches" below).
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define DEFAULT_REORDER_LIMIT (32u << 20)
#define DEFAULT_MAX_TRACING (64u << 20)
#define DEFAULT_MAX_PROBLEMS 100
#define ZOUT_CHUNK (256u << 10)
#define MAX_HELD 65536
#define ZSTD_WINDOW_LOG_MAX 27 /* zstd's own default limit: 128 MiB */

static const char *const record_names[RDR_RECORD_TYPES] = {
	[PERF_REC_MMAP] = "MMAP",
	[PERF_REC_LOST] = "LOST",
	[PERF_REC_COMM] = "COMM",
	[PERF_REC_EXIT] = "EXIT",
	[PERF_REC_THROTTLE] = "THROTTLE",
	[PERF_REC_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_REC_FORK] = "FORK",
	[PERF_REC_READ] = "READ",
	[PERF_REC_SAMPLE] = "SAMPLE",
	[PERF_REC_MMAP2] = "MMAP2",
	[PERF_REC_AUX] = "AUX",
	[PERF_REC_ITRACE_START] = "ITRACE_START",
	[PERF_REC_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_REC_SWITCH] = "SWITCH",
	[PERF_REC_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_REC_NAMESPACES] = "NAMESPACES",
	[PERF_REC_KSYMBOL] = "KSYMBOL",
	[PERF_REC_BPF_EVENT] = "BPF_EVENT",
	[PERF_REC_CGROUP] = "CGROUP",
	[PERF_REC_TEXT_POKE] = "TEXT_POKE",
	[PERF_REC_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_REC_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[PERF_REC_HEADER_ATTR] = "HEADER_ATTR",
	[PERF_REC_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[PERF_REC_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[PERF_REC_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[PERF_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PERF_REC_ID_INDEX] = "ID_INDEX",
	[PERF_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PERF_REC_AUXTRACE] = "AUXTRACE",
	[PERF_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PERF_REC_THREAD_MAP] = "THREAD_MAP",
	[PERF_REC_CPU_MAP] = "CPU_MAP",
	[PERF_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PERF_REC_STAT] = "STAT",
	[PERF_REC_STAT_ROUND] = "STAT_ROUND",
	[PERF_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PERF_REC_TIME_CONV] = "TIME_CONV",
	[PERF_REC_HEADER_FEATURE] = "HEADER_FEATURE",
	[PERF_REC_COMPRESSED] = "COMPRESSED",
	[PERF_REC_FINISHED_INIT] = "FINISHED_INIT",
	[PERF_REC_COMPRESSED2] = "COMPRESSED2",
	[PERF_REC_BPF_METADATA] = "BPF_METADATA",
	[PERF_REC_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
	[PERF_REC_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
};

const char *rdr_record_name(uint32_t type)
{
	return type < RDR_RECORD_TYPES ? record_names[type] : NULL;
}

/*
 * The reader whose input side runs on this thread now (its read-ahead
 * thread, or batch_take reading without one): what read_step finds goes
 * with the batches, so that only the caller's thread writes the list the
 * caller reads, in the same order either way.
 */
static _Thread_local struct rdr *ahead_self;

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

void rdr_problem(struct rdr *r, enum conv_err code, uint64_t offset, uint32_t rtype,
		 const char *fmt, ...)
{
	struct rdr_problem q;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q.msg, sizeof(q.msg), fmt, ap);
	va_end(ap);
	q.code = code;
	q.offset = offset;
	q.record_type = rtype;
	q.count = 1;
	/* the input side's: merged by the caller before the records read after it */
	if (ahead_self == r) {
		if (!problem_add(r->in_prob.v, r->in_prob.at, &r->in_prob.n, r->opts.max_problems, &q,
				 r->nr_open))
			r->in_prob.dropped++;
	} else if (!problem_add(r->problems, NULL, &r->nr_problems, r->opts.max_problems, &q, 0)) {
		r->problems_dropped++;
	}
}

const struct rdr_info *rdr_info(const struct rdr *r)
{
	return &r->info;
}

const struct rdr_stats *rdr_stats(const struct rdr *r)
{
	return &r->stats;
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

/* ---- open / close ---- */

static bool plist_init(struct rdr_plist *pl, size_t max)
{
	memset(pl, 0, sizeof(*pl));
	pl->v = calloc(max, sizeof(*pl->v));
	pl->at = calloc(max, sizeof(*pl->at));
	return pl->v && pl->at;
}

static void plist_release(struct rdr_plist *pl)
{
	free(pl->v);
	free(pl->at);
	memset(pl, 0, sizeof(*pl));
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
	ok = r->problems && plist_init(&r->in_prob, r->opts.max_problems);
	for (size_t i = 0; i < RDR_BATCHES; i++)
		ok = plist_init(&r->batches[i].prob, r->opts.max_problems) && ok;
	if (!ok) {
		free(r->problems);
		plist_release(&r->in_prob);
		for (size_t i = 0; i < RDR_BATCHES; i++)
			plist_release(&r->batches[i].prob);
		free(r);
		return NULL;
	}
	r->nr_slots = 1; /* RDR_BATCHES with the read-ahead thread */
	arena_init(&r->arena, 512u << 20);
	pthread_mutex_init(&r->ahead_mu, NULL);
	pthread_cond_init(&r->ahead_cv, NULL);
	for (size_t i = 0; i < RDR_BATCHES; i++)
		dbuf_init(&r->batches[i].pool, 0);
	r->in.fd = -1;
	r->id_zero_attr = -1;
	hmap_init(&r->tp_names);
	dbuf_init(&r->zin, 1u << 20);
	dbuf_init(&r->zout, 4u << 20);
	dbuf_init(&r->qpool, 0);
	dbuf_init(&r->s_callchain, 0);
	dbuf_init(&r->s_read, 0);
	dbuf_init(&r->s_branch, 0);
	dbuf_init(&r->s_regs_user, 0);
	dbuf_init(&r->s_regs_intr, 0);
	dbuf_init(&r->s_counters, 0);
	dbuf_init(&r->s_stitch, 0);
	return r;
}

static void ahead_join(struct rdr *r);

static void held_free(struct rdr_held *h)
{
	free(h->bytes);
	free(h->user_ips);
	h->bytes = NULL;
	h->user_ips = NULL;
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
	free(r->open);
	plist_release(&r->in_prob);
	pthread_cond_destroy(&r->ahead_cv);
	pthread_mutex_destroy(&r->ahead_mu);
	in_release(&r->in);
	hmap_release(&r->tp_names);
	arena_release(&r->arena);
	free(r->info.attrs);
	free(r->info.build_ids);
	free(r->idpos);
	free(r->id_keys);
	free(r->id_vals);
	free(r->problems);
	ZSTD_freeDCtx((ZSTD_DCtx *)r->zctx);
	dbuf_release(&r->zin);
	dbuf_release(&r->zout);
	dbuf_release(&r->qpool);
	free(r->q);
	free(r->q_tmp);
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
	r->info.file_size = r->in.size;
	r->info.file_mtime_ns = r->in.mtime_ns;
	if (in_peek(&r->in, 16, &p) < 16)
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
		in_consume(&r->in, 16);
		r->in.limit = UINT64_MAX;
		return CONV_E_OK;
	}
	if (hsize < PERF_FILE_HEADER_MIN || hsize > 4096)
		return conv_fail(diag, CONV_E_FORMAT, 8, "bad header size %" PRIu64, hsize);
	r->info.mode = RDR_MODE_FILE;
	if (!r->in.seekable) {
		enum conv_err err;

		err = in_spool(&r->in, diag);
		if (err)
			return err;
		r->info.file_size = r->in.size;
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
	err = in_init_fd(&r->in, fd, diag);
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
	in_init_mem(&r->in, data, len);
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
	if ((*out)->in.own_fd)
		close(fd);
	else
		(*out)->in.own_fd = true;
	return CONV_E_OK;
}

/* ---- raw records: file stream and zstd stream ---- */

static void count_record(struct rdr *r, uint32_t type)
{
	if (type < RDR_RECORD_TYPES && record_names[type])
		r->in_st.records[type]++;
	else
		r->in_st.records_unknown++;
}

static void z_reset(struct rdr *r)
{
	dbuf_reset(&r->zin);
	r->zin_pos = 0;
	dbuf_reset(&r->zout);
	r->zout_pos = 0;
}

/* Queues the payload of a COMPRESSED/COMPRESSED2 record for decompression. */
static void z_feed(struct rdr *r, const uint8_t *rec, size_t len, uint32_t type, uint64_t off)
{
	const uint8_t *payload = rec + 8;
	size_t plen = len - 8;

	if (type == PERF_REC_COMPRESSED2) {
		uint64_t dsize;

		if (len < 16) {
			r->in_st.records_malformed++;
			rdr_problem(r, CONV_E_FORMAT, off, type, "COMPRESSED2 record too short");
			return;
		}
		dsize = rdr_rd64(r, rec + 8);
		if (dsize > len - 16) {
			r->in_st.records_malformed++;
			rdr_problem(r, CONV_E_FORMAT, off, type,
				    "COMPRESSED2 data_size %" PRIu64 " exceeds its record of %zu bytes",
				    dsize, len);
			return;
		}
		payload = rec + 16;
		plen = (size_t)dsize;
	}
	if (r->z_broken) {
		rdr_problem(r, CONV_E_FORMAT, off, type,
			    "compressed record skipped: the compressed stream was broken earlier");
		return;
	}
	if (!r->zctx) {
		r->zctx = (struct ZSTD_DCtx_s *)ZSTD_createDCtx();
		if (!r->zctx) {
			r->z_broken = true;
			rdr_problem(r, CONV_E_NOMEM, off, type, "cannot create a zstd context");
			return;
		}
		ZSTD_DCtx_setParameter((ZSTD_DCtx *)r->zctx, ZSTD_d_windowLogMax,
				       ZSTD_WINDOW_LOG_MAX);
	}
	/* the unread tail moves to the front; the new payload follows it */
	if (r->zin_pos) {
		dbuf_consume(&r->zin, r->zin_pos);
		r->zin_pos = 0;
	}
	if (!dbuf_append(&r->zin, payload, plen)) {
		r->z_broken = true;
		rdr_problem(r, CONV_E_LIMIT, off, type, "compressed input backlog over its limit");
		return;
	}
	r->z_offset = off;
	r->z_rec_out = 0;
	r->in_st.compressed_bytes_in += plen;
}

/*
 * Most one COMPRESSED record may inflate to: a few times the ring buffer
 * perf compressed from (HEADER_COMPRESSED mmap_len), at least 16 MiB, at
 * most 64 MiB.
 */
static uint64_t z_record_cap(const struct rdr *r)
{
	uint64_t cap = 4 * (uint64_t)r->info.comp_mmap_len;

	if (cap < (16u << 20))
		cap = 16u << 20;
	if (cap > (64u << 20))
		cap = 64u << 20;
	return cap;
}

/* Decompresses some of the pending input; false when nothing could be done. */
static bool z_step(struct rdr *r)
{
	ZSTD_outBuffer ob;
	ZSTD_inBuffer ib;
	size_t ret, before;

	if (r->z_broken || r->zin_pos >= r->zin.len)
		return false;
	if (r->zout_pos) {
		dbuf_consume(&r->zout, r->zout_pos);
		r->zout_pos = 0;
	}
	if (!dbuf_reserve(&r->zout, ZOUT_CHUNK)) {
		/* a record larger than the output window cannot be framed */
		r->z_broken = true;
		rdr_problem(r, CONV_E_LIMIT, r->z_offset, PERF_REC_COMPRESSED,
			    "decompressed record larger than the decompression window; rest of the compressed data skipped");
		z_reset(r);
		return false;
	}
	before = r->zout.len;
	ob.dst = r->zout.data;
	ob.size = r->zout.len + ZOUT_CHUNK;
	ob.pos = r->zout.len;
	ib.src = r->zin.data;
	ib.size = r->zin.len;
	ib.pos = r->zin_pos;
	ret = ZSTD_decompressStream((ZSTD_DCtx *)r->zctx, &ob, &ib);
	if (ZSTD_isError(ret)) {
		r->z_broken = true;
		rdr_problem(r, CONV_E_FORMAT, r->z_offset, PERF_REC_COMPRESSED,
			    "zstd error: %s; rest of the compressed data skipped",
			    ZSTD_getErrorName(ret));
		z_reset(r);
		return false;
	}
	r->zout.len = ob.pos;
	r->zin_pos = ib.pos;
	r->in_st.compressed_bytes_out += ob.pos - before;
	r->z_rec_out += ob.pos - before;
	if (r->z_rec_out > z_record_cap(r)) {
		/*
		 * perf compresses one ring-buffer read per record, so a record
		 * inflating far past the ring's size is a bomb: zstd's window
		 * (up to 128 MiB) would fill with it
		 */
		r->z_broken = true;
		rdr_problem(r, CONV_E_LIMIT, r->z_offset, PERF_REC_COMPRESSED,
			    "compressed record inflates past %" PRIu64
			    " MiB (its ring buffer held %u bytes); rest of the compressed data skipped",
			    z_record_cap(r) >> 20, r->info.comp_mmap_len);
		z_reset(r);
		return false;
	}
	if (r->zin_pos == r->zin.len) {
		dbuf_reset(&r->zin);
		r->zin_pos = 0;
	}
	return ob.pos > before || ib.pos > 0;
}

/* A record from the decompressed stream, if a whole one is there. */
static bool z_record(struct rdr *r, const uint8_t **rec, size_t *len)
{
	size_t have = r->zout.len - r->zout_pos;
	const uint8_t *p;
	uint16_t size;

	if (r->z_broken || have < 8)
		return false;
	p = r->zout.data + r->zout_pos;
	size = rdr_rd16(r, p + 6);
	if (size < 8) {
		r->z_broken = true;
		r->in_st.stopped = true;
		rdr_problem(r, CONV_E_FORMAT, r->z_offset, rdr_rd32(r, p),
			    "record of size %u inside compressed data: framing lost, rest of the compressed data skipped",
			    size);
		z_reset(r);
		return false;
	}
	if (have < size)
		return false;
	*rec = p;
	*len = size;
	r->zout_pos += size;
	return true;
}

enum raw_src { RAW_END, RAW_FILE, RAW_ZSTD };

/*
 * The next raw record, header included, valid until the next call.
 * COMPRESSED records are consumed here and their contents returned instead.
 */
static enum raw_src next_raw(struct rdr *r, const uint8_t **rec, size_t *len, uint64_t *off)
{
	for (;;) {
		const uint8_t *p;
		size_t got;
		uint32_t type;
		uint16_t size;
		uint64_t roff;

		if (r->pending_skip) {
			uint64_t want = r->pending_skip;
			uint64_t done = in_skip(&r->in, want);

			r->in_st.bytes_read += done;
			r->pending_skip = 0;
			if (done < want) {
				r->in_st.truncated = true;
				rdr_problem(r, CONV_E_TRUNCATED, r->in.pos, PERF_REC_AUXTRACE,
					    "input ends inside AUXTRACE data");
				return RAW_END;
			}
		}
		if (z_record(r, rec, len)) {
			count_record(r, rdr_rd32(r, *rec));
			*off = r->z_offset;
			return RAW_ZSTD;
		}
		if (z_step(r))
			continue;

		roff = r->in.pos;
		got = in_peek(&r->in, 8, &p);
		if (got < 8) {
			if (got > 0) {
				r->in_st.truncated = true;
				rdr_problem(r, CONV_E_TRUNCATED, roff, 0,
					    "input ends inside a record header (%zu stray bytes)", got);
			}
			if (r->zout.len - r->zout_pos > 0 && !r->z_broken) {
				r->in_st.truncated = true;
				rdr_problem(r, CONV_E_TRUNCATED, r->z_offset, PERF_REC_COMPRESSED,
					    "compressed data ends inside a record (%zu bytes left)",
					    r->zout.len - r->zout_pos);
			}
			return RAW_END;
		}
		type = rdr_rd32(r, p);
		size = rdr_rd16(r, p + 6);
		if (size < 8) {
			r->in_st.stopped = true;
			rdr_problem(r, CONV_E_FORMAT, roff, type,
				    "record size %u is below the 8-byte header: cannot find the next record, reading stops here",
				    size);
			return RAW_END;
		}
		got = in_peek(&r->in, size, &p);
		if (got < size) {
			r->in_st.truncated = true;
			rdr_problem(r, CONV_E_TRUNCATED, roff, type,
				    "input ends inside a %s record (%zu of %u bytes)",
				    rdr_record_name(type) ? rdr_record_name(type) : "unknown", got,
				    size);
			return RAW_END;
		}
		count_record(r, type);
		if (type == PERF_REC_COMPRESSED || type == PERF_REC_COMPRESSED2) {
			z_feed(r, p, size, type, roff);
			in_consume(&r->in, size);
			r->in_st.bytes_read += size;
			continue;
		}
		if (type == PERF_REC_HEADER_TRACING_DATA && size >= 12) {
			/* the blob follows outside header.size ("header.size is a lie") */
			uint32_t tsize = rdr_rd32(r, p + 8);
			size_t total = (size_t)size + tsize;

			if (tsize <= r->opts.max_tracing_data) {
				got = in_peek(&r->in, total, &p);
				if (got < total) {
					r->in_st.truncated = true;
					rdr_problem(r, CONV_E_TRUNCATED, roff, type,
						    "input ends inside tracing data");
					return RAW_END;
				}
				*rec = p;
				*len = total;
				*off = roff;
				in_consume(&r->in, total);
				r->in_st.bytes_read += total;
				return RAW_FILE;
			}
			rdr_problem(r, CONV_E_LIMIT, roff, type,
				    "tracing data of %" PRIu32 " bytes is over the limit; skipped", tsize);
			r->pending_skip = tsize;
		} else if (type == PERF_REC_AUXTRACE && size >= 16) {
			r->pending_skip = rdr_rd64(r, p + 8);
			r->in_st.auxtrace_bytes += r->pending_skip;
		}
		*rec = p;
		*len = size;
		*off = roff;
		in_consume(&r->in, size);
		r->in_st.bytes_read += size;
		return RAW_FILE;
	}
}

/* ---- reorder queue ---- */

static bool q_push(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz,
		   int attr, uint64_t time)
{
	struct rdr_qent *e;

	if (r->q_len == r->q_cap) {
		size_t ncap = r->q_cap ? r->q_cap * 2 : 4096;
		struct rdr_qent *nq = realloc(r->q, ncap * sizeof(*nq)), *nt;

		if (!nq)
			return false;
		r->q = nq;
		nt = realloc(r->q_tmp, ncap * sizeof(*nt));
		if (!nt)
			return false;
		r->q_tmp = nt;
		r->q_cap = ncap;
	}
	e = &r->q[r->q_len];
	e->pool_off = r->qpool.len;
	if (!dbuf_append(&r->qpool, rec, len))
		return false;
	e->time = time;
	e->offset = off;
	e->len = (uint16_t)len; /* a queued record is header.size long (see struct rdr_qent) */
	e->attr = attr;
	e->in_compressed = inz;
	e->kind = QE_QUEUED;
	r->q_len++;
	if (time > r->max_time)
		r->max_time = time;
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
static void q_sort(struct rdr *r)
{
	struct rdr_qent *a = r->q, *b = r->q_tmp;
	size_t n = r->q_len;
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
		r->q_tmp = a;
		r->q = b;
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
	if (a != r->q) {
		r->q_tmp = r->q;
		r->q = a;
	}
}

/* Marks the first n (sorted) records of the queue ready to go out. */
static void q_ready_set(struct rdr *r, size_t n)
{
	r->q_ready = n;
	/* the last one has the latest time; all go out before another record is read */
	if (n && r->q[n - 1].time > r->last_flushed)
		r->last_flushed = r->q[n - 1].time;
}

/* Sorts the queue and marks the records with time <= limit ready (all if n_all). */
static void q_flush(struct rdr *r, uint64_t limit, bool all)
{
	size_t n = 0;

	if (!r->q_len)
		return;
	q_sort(r);
	if (all) {
		n = r->q_len;
	} else {
		while (n < r->q_len && r->q[n].time <= limit)
			n++;
	}
	q_ready_set(r, n);
}

/*
 * Copies the bytes of the records not ready (q[q_ready..q_len)) from the
 * pool at from to the (empty) pool to, and points them there; false when
 * out of memory (nothing changed then).
 */
static bool q_carry(struct rdr *r, const uint8_t *from, struct dbuf *to)
{
	size_t bytes = 0;

	for (size_t i = r->q_ready; i < r->q_len; i++)
		bytes += r->q[i].len;
	if (!dbuf_reserve(to, bytes))
		return false;
	for (size_t i = r->q_ready; i < r->q_len; i++) {
		struct rdr_qent *e = &r->q[i];
		size_t noff = to->len;

		dbuf_append(to, from + e->pool_off, e->len);
		e->pool_off = noff;
	}
	return true;
}

/* ---- deferred callchains ---- */

static bool held_push(struct rdr_held **arr, size_t *n, size_t *cap, const struct rdr_held *h)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct rdr_held *na = realloc(*arr, ncap * sizeof(*na));

		if (!na)
			return false;
		*arr = na;
		*cap = ncap;
	}
	(*arr)[(*n)++] = *h;
	return true;
}

/* Moves held samples of tid (all when all_tids) to the emit list, matched or not. */
static void held_release(struct rdr *r, uint32_t tid, bool all_tids, bool match, uint64_t cookie,
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

/* Index of the USER_DEFERRED marker followed by a cookie, or -1. */
static int64_t deferred_marker(const struct rdr_sample *s)
{
	for (uint64_t i = 0; i + 1 < s->callchain_nr; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER_DEFERRED)
			return (int64_t)i;
	return -1;
}

static void hold_sample(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz,
			int attr, uint64_t cookie, uint32_t tid)
{
	struct rdr_held h;

	memset(&h, 0, sizeof(h));
	h.tid = tid;
	h.cookie = cookie;
	h.offset = off;
	h.attr = attr;
	h.in_compressed = inz;
	h.len = (uint32_t)len;
	h.bytes = malloc(len);
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

/* ---- delivery ---- */

static void note_sample(struct rdr *r, const struct rdr_event *ev)
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

/* Decodes an emitted held sample and stitches its user part in. */
static bool emit_held(struct rdr *r, struct rdr_held *h)
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

/* Decodes a record for delivery; false when it is not delivered (bad, or held). */
static bool deliver(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz,
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

/* Metadata records of pipe mode: they change what the reader knows. */
static void handle_meta(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off)
{
	uint32_t type = rdr_rd32(r, rec);
	uint16_t size = rdr_rd16(r, rec + 6);
	struct cur c;

	cur_init(&c, rec + 8, (len < size ? len : size) - 8u, r->swap);
	switch (type) {
	case PERF_REC_HEADER_ATTR: {
		struct rdr_attr a;
		size_t asize;
		int idx;
		uint64_t nids;

		/* -1 tells the caller this record added no attr */
		r->ev.u.attr_index = -1;
		if (cur_remaining(&c) < 8) {
			rdr_problem(r, CONV_E_FORMAT, off, type, "HEADER_ATTR record too short");
			return;
		}
		asize = rdr_rd32(r, rec + 12);
		if (asize == 0)
			asize = 64;
		if (asize > cur_remaining(&c)) {
			rdr_problem(r, CONV_E_FORMAT, off, type,
				    "HEADER_ATTR attr.size %zu exceeds its record", asize);
			return;
		}
		rdr_parse_attr(r, &c, asize, &a);
		nids = cur_remaining(&c) / 8;
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
			cur_u64_array(&c, r->info.attrs[idx].ids, (size_t)nids);
			r->info.attrs[idx].nr_ids = (size_t)nids;
			for (size_t i = 0; i < nids; i++)
				rdr_add_id(r, r->info.attrs[idx].ids[i], idx);
		}
		rdr_attrs_finish(r, (size_t)idx);
		rdr_name_attr(r, (size_t)idx);
		r->ev.u.attr_index = idx;
		break;
	}
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

static bool is_meta(uint32_t type)
{
	return type == PERF_REC_HEADER_ATTR || type == PERF_REC_HEADER_FEATURE ||
	       type == PERF_REC_HEADER_BUILD_ID || type == PERF_REC_HEADER_TRACING_DATA ||
	       type == PERF_REC_EVENT_UPDATE;
}

static bool known_type(uint32_t type)
{
	return type < RDR_RECORD_TYPES && record_names[type];
}

/* What read_step did with a record, and what its caller does next. */
enum step {
	STEP_END,   /* no more input */
	STEP_NONE,  /* nothing to deliver (queued, or skipped) */
	STEP_READY, /* queued records are ready (q_ready) */
	STEP_NOW,   /* the record goes out as it is: it has no time */
	STEP_META,  /* a metadata record: the caller handles it before reading on */
};

/* A raw record as read_step read it. */
struct raw_rec {
	const uint8_t *rec; /* valid until the next read_step */
	size_t len;
	uint64_t off;
	bool inz; /* from compressed data */
	int attr;
};

/*
 * Reads one raw record and queues it when it has a time (a FINISHED_ROUND
 * or a full window makes queued records ready). *rr describes it for
 * STEP_NOW and STEP_META.
 */
static enum step read_step(struct rdr *r, struct raw_rec *rr)
{
	enum raw_src src = next_raw(r, &rr->rec, &rr->len, &rr->off);
	uint64_t time;
	uint32_t type;
	bool has_time;

	if (src == RAW_END)
		return STEP_END;
	rr->inz = src == RAW_ZSTD;
	rr->attr = -1;
	type = rdr_rd32(r, rr->rec);
	if (type == PERF_REC_FINISHED_ROUND) {
		q_flush(r, r->round_limit, false);
		r->round_limit = r->max_time;
		return r->q_ready ? STEP_READY : STEP_NONE;
	}
	if (!known_type(type) || type == PERF_REC_HEADER_EVENT_TYPE)
		return STEP_NONE;
	if (is_meta(type))
		return STEP_META;
	rdr_classify(r, rr->rec, rr->len, &rr->attr, &has_time, &time);
	if (!has_time)
		return STEP_NOW;
	if (time < r->last_flushed)
		r->in_st.time_order_violations++;
	if (!q_push(r, rr->rec, rr->len, rr->off, rr->inz, rr->attr, time)) {
		rdr_problem(r, CONV_E_NOMEM, rr->off, type, "no memory to queue a record; dropped");
		return STEP_NONE;
	}
	/* the pool also holds the bytes of the next batch's unqueued records (open_bytes) */
	if (r->qpool.len - r->open_bytes > r->opts.reorder_limit) {
		/* window full before FINISHED_ROUND: deliver the older half, as perf does */
		r->in_st.reorder_forced_flushes++;
		q_sort(r);
		q_ready_set(r, r->q_len / 2 ? r->q_len / 2 : r->q_len);
		return STEP_READY;
	}
	return STEP_NONE;
}

/* ---- batches: from reading to delivery ---- */

/*
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
 * input side's counts and problems travel with the batches, merged by the
 * caller (problems at the entry they were found before), so only the
 * caller's thread writes what the caller reads, and both come out in the
 * same order with and without the thread.
 */

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
static bool open_add(struct rdr *r, const struct raw_rec *rr, uint8_t kind)
{
	struct rdr_qent *e;
	size_t pool_off = r->qpool.len;

	if (r->nr_open == r->cap_open) {
		size_t ncap = r->cap_open ? r->cap_open * 2 : 256;
		struct rdr_qent *n = realloc(r->open, ncap * sizeof(*n));

		if (!n) {
			rdr_problem(r, CONV_E_NOMEM, rr->off, rdr_rd32(r, rr->rec),
				    "no memory to hand a record over; dropped");
			return false;
		}
		r->open = n;
		r->cap_open = ncap;
	}
	if (!dbuf_append(&r->qpool, rr->rec, rr->len)) {
		rdr_problem(r, CONV_E_NOMEM, rr->off, rdr_rd32(r, rr->rec),
			    "no memory to hand a record over; dropped");
		return false;
	}
	e = &r->open[r->nr_open++];
	memset(e, 0, sizeof(*e));
	e->time = rr->len;
	e->offset = rr->off;
	e->pool_off = pool_off;
	e->in_compressed = rr->inz;
	e->kind = kind;
	e->attr = kind == QE_META ? -1 : rr->attr;
	r->open_bytes += rr->len;
	return true;
}

/*
 * Hands the unqueued records and the ready queued ones over as a batch
 * (the thread waits for a free one); false when the reader is being
 * closed.
 */
static bool batch_publish(struct rdr *r)
{
	struct rdr_batch *b;
	struct rdr_plist pl;
	struct dbuf fresh;
	size_t need = r->nr_open + r->q_ready;
	bool stop;

	pthread_mutex_lock(&r->ahead_mu);
	if (!ahead_room(r, false, r->qpool.len)) {
		r->producer_waiting = true;
		r->waiting_bytes = r->qpool.len;
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
		if (r->nr_open)
			memcpy(b->ents, r->open, r->nr_open * sizeof(*b->ents));
		if (r->q_ready)
			memcpy(b->ents + r->nr_open, r->q, r->q_ready * sizeof(*b->ents));
		b->n = need;
	} else {
		rdr_problem(r, CONV_E_NOMEM, r->q_ready ? r->q[0].offset : r->open[0].offset, 0,
			    "no memory to hand %zu records over; dropped", need);
	}
	/* the batch takes the pool; what stays queued moves to the batch's old one */
	fresh = b->pool;
	dbuf_reset(&fresh);
	b->pool = r->qpool;
	if (!q_carry(r, b->pool.data, &fresh)) {
		rdr_problem(r, CONV_E_NOMEM, r->q[r->q_ready].offset, 0,
			    "no memory to keep %zu queued records; dropped", r->q_len - r->q_ready);
		r->q_len = r->q_ready;
	}
	r->qpool = fresh;
	if (r->q_len > r->q_ready)
		memmove(r->q, r->q + r->q_ready, (r->q_len - r->q_ready) * sizeof(*r->q));
	r->q_len -= r->q_ready;
	r->q_ready = 0;
	r->nr_open = 0;
	r->open_bytes = 0;
	/* the counts so far and the problems since the last batch go with it */
	b->st = r->in_st;
	pl = b->prob;
	b->prob = r->in_prob;
	r->in_prob = pl;
	r->in_prob.n = r->in_prob.next = 0;
	r->in_prob.dropped = 0;
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
	for (;;) {
		struct raw_rec rr;

		switch (read_step(r, &rr)) {
		case STEP_END:
			q_flush(r, 0, true);
			return batch_publish(r) ? PROD_END : PROD_STOP;
		case STEP_READY:
			return batch_publish(r) ? PROD_BATCH : PROD_STOP;
		case STEP_META:
			if (open_add(r, &rr, QE_META))
				return batch_publish(r) ? PROD_META : PROD_STOP;
			break;
		case STEP_NOW:
			if (open_add(r, &rr, QE_NOW) && r->open_bytes >= AHEAD_OPEN_MAX)
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

	ahead_self = r;
	do
		p = batch_read(r);
	while (p == PROD_BATCH || (p == PROD_META && ahead_wait_meta(r)));
	pthread_mutex_lock(&r->ahead_mu);
	r->ahead_end = true;
	pthread_cond_broadcast(&r->ahead_cv);
	pthread_mutex_unlock(&r->ahead_mu);
	return NULL;
}

static void ahead_start(struct rdr *r)
{
	r->opts.read_ahead = false; /* tried once */
	r->nr_slots = RDR_BATCHES;
	r->ahead_started = pthread_create(&r->ahead_th, NULL, ahead_main, r) == 0;
	if (!r->ahead_started)
		r->nr_slots = 1; /* no thread: batch_next reads */
}

/* Stops the thread (when it still runs) and waits for it. */
static void ahead_join(struct rdr *r)
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
		ahead_self = r; /* what read_step finds goes with the batch, as on the thread */
		r->ahead_end = batch_read(r) == PROD_END;
		ahead_self = NULL;
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
		if (!problem_add(r->problems, NULL, &r->nr_problems, r->opts.max_problems,
				 &pl->v[pl->next], 0))
			r->problems_dropped += pl->v[pl->next].count;
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

/* The next record of the batches; true when r->ev is ready to go out. */
static bool batch_next(struct rdr *r)
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
			handle_meta(r, rec, (size_t)e->time, e->offset);
		ahead_meta_done(r);
		return ok;
	}
	return deliver(r, rec, e->kind == QE_QUEUED ? e->len : (size_t)e->time, e->offset,
		       e->in_compressed, e->attr);
}

/* The queue's and the batches' memory, at the end: the caller's next phase can use it. */
static void q_release(struct rdr *r)
{
	dbuf_release(&r->qpool);
	free(r->q);
	free(r->q_tmp);
	r->q = r->q_tmp = NULL;
	r->q_len = r->q_cap = r->q_ready = 0;
	for (size_t i = 0; i < RDR_BATCHES; i++) {
		dbuf_release(&r->batches[i].pool);
		free(r->batches[i].ents);
		r->batches[i].ents = NULL;
		r->batches[i].n = r->batches[i].cap = 0;
	}
	free(r->open);
	r->open = NULL;
	r->nr_open = r->cap_open = 0;
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
		if (r->in.io_errno && r->in.io_errno != ENOMEM)
			rdr_problem(r, CONV_E_IO, r->in.pos, 0, "read error: %s",
				    strerror(r->in.io_errno));
		q_release(r);
		return CONV_E_OK;
	}
}
