/*
 * Between the files of the reader: the reader's state and the helpers one file
 * offers another. Not for other modules.
 */
#ifndef CONV_READER_READER_INTERNAL_H
#define CONV_READER_READER_INTERNAL_H

#include "core/arena.h"
#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/hmap.h"
#include "reader/reader.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ZSTD_DCtx_s;

/* Input: a file descriptor read through a buffer, or a memory buffer. */
/*
 * Sample ids kept in all: perf writes one per event and CPU (or thread), a
 * few thousand; a file claiming millions would only cost memory.
 */
#define RDR_MAX_IDS (1u << 20)

struct rdr_in {
	int fd;              /* -1 for memory input */
	bool own_fd;         /* fd is a temp spool file we opened */
	bool seekable;
	const uint8_t *mem;  /* memory input */
	uint64_t size;       /* total input size; UINT64_MAX if unknown */
	uint64_t mtime_ns;   /* regular file's modification time; 0 if unknown */
	uint8_t *buf;        /* fd input: buffered bytes */
	size_t buf_cap;
	size_t start, end;   /* buf[start..end) is valid, starting at file offset pos */
	uint64_t pos;        /* file offset of the next unread byte */
	uint64_t limit;      /* stream end (data section end); UINT64_MAX = EOF */
	bool eof;
	int io_errno;
};

/*
 * A queued record waiting for its round to be flushed. 32 bytes: the
 * round's sort moves each entry (see q_sort).
 */
struct rdr_qent {
	uint64_t time;     /* QE_QUEUED; the record's whole length for the other kinds */
	uint64_t offset;
	size_t pool_off;   /* bytes in the queue pool */
	uint16_t len;      /* header.size: only TRACING_DATA runs past it, and it is never queued */
	bool in_compressed;
	uint8_t kind;      /* QE_*: what a read-ahead batch entry is */
	int attr;
};

/* Entries of a read-ahead batch: a queued record, one delivered as read, a metadata record. */
enum { QE_QUEUED, QE_NOW, QE_META };

/*
 * Batches in flight between the read-ahead thread and the caller's, at
 * most (fewer when they are large: AHEAD_BYTES in reader.c).
 */
#define RDR_BATCHES 8

/* Problems the input side found for one batch (opts.max_problems kinds). */
struct rdr_plist {
	struct rdr_problem *v;
	size_t *at;      /* v[i] was found before entry at[i] of the batch was read */
	size_t n, next;  /* next: the first not yet merged by the caller */
	uint64_t dropped;
};

/*
 * Records handed from reading to delivery, in delivery order, with their
 * bytes; the input side's counts (struct rdr_stats) at that moment and
 * its problems since the last batch.
 */
struct rdr_batch {
	struct dbuf pool;
	struct rdr_qent *ents;
	size_t n, cap;
	struct rdr_stats st;
	struct rdr_plist prob;
};

/* A sample held until its deferred user callchain arrives. */
struct rdr_held {
	uint32_t tid;
	uint64_t cookie;
	uint64_t offset;
	int attr;
	bool in_compressed;
	uint8_t *bytes; /* malloc'd record copy */
	uint32_t len;
	uint64_t *user_ips; /* merged user part, malloc'd; NULL when unmatched */
	uint64_t user_nr;
};

/* sample-id layout of one attr, for finding a record's event and time */
struct rdr_idpos {
	int sample_id_idx;   /* u64 index of the id in a SAMPLE body, -1 if none */
	int trailer_id_idx;  /* u64 index of the id counted from a record's end (1 = last), -1 if none */
	size_t trailer_size; /* bytes of the sample_id trailer */
	int sample_time_idx; /* u64 index of time in a SAMPLE body, -1 if none */
};

/*
 * The input side: what reading, decompression and time ordering write
 * (read_step and below, on the read-ahead thread when there is one, else
 * on the caller's when it needs a batch). These functions take it as an
 * argument, with the reader itself const: what they find goes out with
 * the batches (counts in st, problems in prob), so that only the caller's
 * thread writes what the caller reads, in the same order either way.
 */
struct rdr_side {
	struct rdr_in in;
	uint64_t pending_skip; /* payload bytes after the last record (AUXTRACE) to skip */

	/* compressed stream */
	struct ZSTD_DCtx_s *zctx;
	struct dbuf zin;  /* compressed bytes not yet fed */
	size_t zin_pos;
	struct dbuf zout; /* decompressed bytes not yet parsed */
	size_t zout_pos;
	uint64_t z_offset; /* file offset of the COMPRESSED record being decoded */
	uint64_t z_rec_out; /* bytes its decompression produced so far */
	bool z_broken;     /* the decompressed stream lost its record framing */

	/* reorder queue */
	struct rdr_qent *q;
	size_t q_len, q_cap;
	struct rdr_qent *q_tmp; /* merge buffer of q_sort, q_cap entries */
	size_t q_ready;        /* q[0..q_ready) are sorted and go in the next batch */
	struct dbuf qpool;
	uint64_t max_time;        /* largest time queued so far */
	uint64_t round_limit;     /* flush up to this at the next FINISHED_ROUND */
	uint64_t last_flushed;    /* time of the last delivered queued record */

	/* records read since the last batch that go out unqueued */
	struct rdr_qent *open;
	size_t nr_open, cap_open, open_bytes;
	struct rdr_stats st;    /* its counts (next_raw, decompression, queueing) */
	struct rdr_plist prob;  /* its problems since the last batch */
	size_t max_problems;    /* opts.max_problems */
};

struct rdr {
	struct rdr_opts opts;
	struct rdr_info info;
	struct rdr_stats stats;
	struct arena arena; /* names, feature strings, build-id table, attrs */
	bool swap;
	struct hmap tp_names; /* tracepoint id -> "sys:name" (arena string), from TRACING_DATA */
	bool tp_indexed;

	size_t attrs_cap;
	struct rdr_idpos *idpos; /* per attr */
	size_t build_ids_cap;

	/* id -> attr index (open addressing; key 0 is stored separately) */
	uint64_t *id_keys;
	int *id_vals;
	size_t id_cap, id_count;
	bool ids_capped;        /* RDR_MAX_IDS reached: later ids ignored, said once */
	size_t ids_stored;      /* ids kept in attrs[].ids, all events together */
	int id_zero_attr;

	/* the caller's problems */
	struct rdr_problem *problems;
	size_t nr_problems;
	uint64_t problems_dropped;

	/* deferred callchains */
	struct rdr_held *held;
	size_t nr_held, held_cap;
	struct rdr_held *emit; /* samples ready to go out, in order */
	size_t nr_emit, emit_pos, emit_cap;
	struct rdr_held cur_emit; /* the one being delivered (freed on the next call) */

	/* the event being delivered and its decoded arrays */
	struct rdr_event ev;
	struct dbuf s_callchain, s_read, s_branch, s_regs_user, s_regs_intr, s_counters, s_stitch;
	bool done;
	/*
	 * Batches (see batch_publish in rdr_ahead.c): nr_slots in turn, all of
	 * them with the read-ahead thread (opts.read_ahead), one without.
	 */
	size_t nr_slots;
	bool ahead_started;  /* the thread was started (and is joined on close) */
	bool ahead_joined;
	pthread_t ahead_th;
	pthread_mutex_t ahead_mu; /* guards the fields from here to ahead_stop */
	pthread_cond_t ahead_cv;
	uint64_t produced, consumed; /* batches handed over, given back */
	size_t inflight_bytes;       /* pool bytes of the batches handed over and not given back */
	size_t waiting_bytes;        /* the pool bytes the waiting thread is to hand over */
	bool producer_waiting, consumer_waiting;
	uint64_t meta_sent, meta_done; /* metadata records the caller must handle before reading on */
	bool ahead_end;  /* the last batch was handed over */
	bool ahead_stop; /* close: the thread must stop */
	struct rdr_batch batches[RDR_BATCHES];
	struct rdr_side side;
	/* the caller's: the batch being delivered, the input side's counts merged so far */
	struct rdr_batch *cur;
	size_t cur_pos;
	struct rdr_stats in_seen;
};

/* Values at p in the file's byte order (p need not be aligned; the caller checked the bounds). */
static inline uint16_t rdr_rd16(const struct rdr *r, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swap ? conv_bswap16(v) : v;
}

static inline uint32_t rdr_rd32(const struct rdr *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swap ? conv_bswap32(v) : v;
}

static inline uint64_t rdr_rd64(const struct rdr *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? conv_bswap64(v) : v;
}

/* rdr_in.c */
enum conv_err in_init_fd(struct rdr_in *in, int fd, struct conv_diag *diag);
void in_init_mem(struct rdr_in *in, const void *data, size_t len);
void in_release(struct rdr_in *in);
/* Copies len bytes at off into out; false if they are not all there (or on I/O error). */
bool in_pread(struct rdr_in *in, uint64_t off, void *out, size_t len);
/* Sets the sequential position and the end of the stream. */
bool in_seek(struct rdr_in *in, uint64_t off, uint64_t limit);
/* Makes up to n bytes at the current position contiguous; returns how many are there. */
size_t in_peek(struct rdr_in *in, size_t n, const uint8_t **p);
void in_consume(struct rdr_in *in, size_t n);
/* Skips n bytes; returns how many could be skipped. */
uint64_t in_skip(struct rdr_in *in, uint64_t n);
/*
 * Copies a non-seekable stream (what is buffered and what is still to come)
 * to an unlinked temp file that is the input from then on, positioned at 0.
 */
enum conv_err in_spool(struct rdr_in *in, struct conv_diag *diag);

/* rdr_header.c */
enum conv_err rdr_read_file_header(struct rdr *r, struct conv_diag *diag);
/* Decodes a perf_event_attr of at most avail bytes at c into a. */
void rdr_parse_attr(struct rdr *r, struct cur *c, size_t avail, struct rdr_attr *a);
/* Adds an attr (copied), returns its index or -1 when out of memory. */
int rdr_add_attr(struct rdr *r, const struct rdr_attr *a);
bool rdr_add_id(struct rdr *r, uint64_t id, int attr);
int rdr_lookup_id(const struct rdr *r, uint64_t id);
/* Computes id/time positions of attrs from index `from` on and checks them against attr 0. */
void rdr_attrs_finish(struct rdr *r, size_t from);
/* Parses a feature payload (file section or pipe HEADER_FEATURE). */
void rdr_parse_feature(struct rdr *r, uint64_t feat, const uint8_t *p, size_t len, uint64_t off,
		       bool pipe);
/* Parses build-id records (feature section or one pipe record). */
void rdr_parse_build_ids(struct rdr *r, const uint8_t *p, size_t len, uint64_t off,
			 enum rdr_bid_source src);
/* Names attr i (or every attr) from tracing formats, else from type/config, unless the file named it. */
void rdr_name_attr(struct rdr *r, size_t i);
void rdr_name_attrs(struct rdr *r);
const struct rdr_build_id *rdr_last_build_id(const struct rdr *r);

/* rdr_record.c */
/* Finds the attr and time of a raw record (header included). */
void rdr_classify(const struct rdr *r, const uint8_t *rec, size_t len, int *attr, bool *has_time,
		  uint64_t *time);
/* Decodes a raw record into r->ev; false when malformed (counted and reported). */
bool rdr_decode(struct rdr *r, const uint8_t *rec, size_t len, uint64_t offset,
		bool in_compressed, int attr);

/* rdr_tracing.c */
/* "sys:name" of tracepoint id from the tracing data's formats (indexed once), or NULL. */
const char *rdr_tracing_name(struct rdr *r, uint64_t id);
/* Forgets the index (new tracing data arrived). */
void rdr_tracing_reset(struct rdr *r);

/* rdr_types.c */
/* Whether conv knows the record type (it has a name). */
bool rdr_type_known(uint32_t type);
/* Pipe mode's metadata records: they change what the reader knows. */
bool rdr_type_meta(uint32_t type);

/* rdr_problem.c */
/* A problem of the caller's side (header, decoding, metadata): the list rdr_problem_at reads. */
void rdr_problem(struct rdr *r, enum conv_err code, uint64_t offset, uint32_t rtype,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/*
 * A problem of the input side: it goes with the next batch, merged by the
 * caller before the record read after it (s->nr_open records were read).
 */
void side_problem(struct rdr_side *s, enum conv_err code, uint64_t offset, uint32_t rtype,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Adds a batch's problem to the caller's list (counted as dropped when it is full). */
void rdr_problem_merge(struct rdr *r, const struct rdr_problem *q);
bool plist_init(struct rdr_plist *pl, size_t max);
void plist_release(struct rdr_plist *pl);

/* rdr_zstd.c: the one zstd stream of the COMPRESSED records' payloads */
/* Queues the payload of a COMPRESSED/COMPRESSED2 record (rec, len bytes at off) for decompression. */
void z_feed(const struct rdr *r, struct rdr_side *s, const uint8_t *rec, size_t len,
	    uint32_t type, uint64_t off);
/* Decompresses some of the pending input; false when nothing could be done. */
bool z_step(const struct rdr *r, struct rdr_side *s);
/* A record from the decompressed stream, if a whole one is there. */
bool z_record(const struct rdr *r, struct rdr_side *s, const uint8_t **rec, size_t *len);
void z_release(struct rdr_side *s);

/* rdr_order.c */
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

/* rdr_raw.c */
enum raw_src { RAW_END, RAW_FILE, RAW_ZSTD };
/*
 * The next raw record, header included, into rr's rec, len and off (rec
 * valid until the next call). COMPRESSED records are consumed here and
 * their contents returned instead.
 */
enum raw_src next_raw(const struct rdr *r, struct rdr_side *s, struct raw_rec *rr);

/*
 * Reads one raw record and queues it when it has a time (a FINISHED_ROUND
 * or a full window makes queued records ready). *rr describes it for
 * STEP_NOW and STEP_META.
 */
enum step read_step(const struct rdr *r, struct rdr_side *s, struct raw_rec *rr);
/* Sorts the queue and marks the records with time <= limit ready (all if all). */
void q_flush(struct rdr_side *s, uint64_t limit, bool all);
/*
 * Copies the bytes of the records not ready (q[q_ready..q_len)) from the
 * pool at from to the (empty) pool to, and points them there; false when
 * out of memory (nothing changed then).
 */
bool q_carry(struct rdr_side *s, const uint8_t *from, struct dbuf *to);
/* The queue's memory. */
void q_release(struct rdr_side *s);

/* rdr_deferred.c: samples waiting for their deferred user callchain */
void held_free(struct rdr_held *h);
/* Moves held samples of tid (all when all_tids) to the emit list, matched or not. */
void held_release(struct rdr *r, uint32_t tid, bool all_tids, bool match, uint64_t cookie,
		  const uint64_t *ips, uint64_t nr);
/* Index of the USER_DEFERRED marker followed by a cookie, or -1. */
int64_t deferred_marker(const struct rdr_sample *s);
/* Keeps a copy of a sample whose user callchain comes later. */
void hold_sample(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz, int attr,
		 uint64_t cookie, uint32_t tid);
/* Decodes an emitted held sample and stitches its user part in. */
bool emit_held(struct rdr *r, struct rdr_held *h);

/* rdr_ahead.c: batches from reading to delivery, and the read-ahead thread */
void ahead_start(struct rdr *r);
/* Stops the thread (when it still runs) and waits for it. */
void ahead_join(struct rdr *r);
/* The next record of the batches; true when r->ev is ready to go out. */
bool batch_next(struct rdr *r);
/* The batches' memory, at the end: the caller's next phase can use it. */
void batch_release(struct rdr *r);

/* reader.c */
/* Counts a delivered sample. */
void note_sample(struct rdr *r, const struct rdr_event *ev);
/* Decodes a record for delivery; false when it is not delivered (bad, or held). */
bool rdr_deliver(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off, bool inz, int attr);
/* Metadata records of pipe mode: they change what the reader knows. */
void rdr_handle_meta(struct rdr *r, const uint8_t *rec, size_t len, uint64_t off);

#endif
