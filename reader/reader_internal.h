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

struct rdr {
	struct rdr_opts opts;
	struct rdr_info info;
	struct rdr_stats stats;
	struct arena arena; /* names, feature strings, build-id table, attrs */
	struct rdr_in in;
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

	/* problems */
	struct rdr_problem *problems;
	size_t nr_problems;
	uint64_t problems_dropped;

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

	/* deferred callchains */
	struct rdr_held *held;
	size_t nr_held, held_cap;
	struct rdr_held *emit; /* samples ready to go out, in order */
	size_t nr_emit, emit_pos, emit_cap;
	struct rdr_held cur_emit; /* the one being delivered (freed on the next call) */

	/* the event being delivered and its decoded arrays */
	struct rdr_event ev;
	struct dbuf s_callchain, s_read, s_branch, s_regs_user, s_regs_intr, s_counters, s_stitch;
	uint64_t pending_skip; /* payload bytes after the last record (AUXTRACE) to skip */
	bool done;
	/*
	 * Batches (see batch_publish in reader.c): nr_slots in turn, all of
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
	/* the input side's: records read since the last batch that go out unqueued */
	struct rdr_qent *open;
	size_t nr_open, cap_open, open_bytes;
	struct rdr_stats in_st;    /* its counts (next_raw, decompression, queueing) */
	struct rdr_plist in_prob;  /* its problems since the last batch */
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
void rdr_classify(struct rdr *r, const uint8_t *rec, size_t len, int *attr, bool *has_time,
		  uint64_t *time);
/* Decodes a raw record into r->ev; false when malformed (counted and reported). */
bool rdr_decode(struct rdr *r, const uint8_t *rec, size_t len, uint64_t offset,
		bool in_compressed, int attr);

/* rdr_tracing.c */
/* "sys:name" of tracepoint id from the tracing data's formats (indexed once), or NULL. */
const char *rdr_tracing_name(struct rdr *r, uint64_t id);
/* Forgets the index (new tracing data arrived). */
void rdr_tracing_reset(struct rdr *r);

/* reader.c */
void rdr_problem(struct rdr *r, enum conv_err code, uint64_t offset, uint32_t rtype,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
