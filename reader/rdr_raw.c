/*
 * Raw records from the input, in file order: the file stream's records,
 * and in place of each COMPRESSED record the records its payload
 * decompresses to (rdr_zstd.c). Apart from the ordering because this is
 * where the input's framing is checked: sizes, truncation, and the two
 * records whose payload runs past header.size (HEADER_TRACING_DATA's blob,
 * AUXTRACE's data).
 *
 *   record header: u32 type, u16 misc, u16 size (size includes the header)
 *   HEADER_TRACING_DATA 66: u32 size @8 [+ u32 pad], then size bytes after header.size
 *   AUXTRACE 71: u64 size @8, then size bytes of trace data after header.size
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <inttypes.h>

/* What the file stream's next record was. */
enum file_rec {
	FR_END,    /* no more input (a problem says why, if it ended early) */
	FR_RECORD, /* a record to go out */
	FR_FED,    /* a COMPRESSED record, fed to the zstd stream */
};

static void count_record(struct rdr_side *s, uint32_t type)
{
	if (rdr_type_known(type))
		s->st.records[type]++;
	else
		s->st.records_unknown++;
}

/*
 * Skips the payload the last record announced after its header.size
 * (AUXTRACE's, or a tracing blob over the limit); false when the input
 * ends inside it.
 */
static bool raw_skip_pending(struct rdr_side *s)
{
	uint64_t want = s->pending_skip;
	uint64_t done;

	if (!want)
		return true;
	done = in_skip(&s->in, want);
	s->st.bytes_read += done;
	s->pending_skip = 0;
	if (done < want) {
		s->st.truncated = true;
		side_problem(s, CONV_E_TRUNCATED, s->in.pos, PERF_REC_AUXTRACE,
			     "input ends inside AUXTRACE data");
		return false;
	}
	return true;
}

/* The input ends with got (< 8) bytes at roff: says what it ended inside of, if anything. */
static void raw_note_end(struct rdr_side *s, size_t got, uint64_t roff)
{
	if (got > 0) {
		s->st.truncated = true;
		side_problem(s, CONV_E_TRUNCATED, roff, 0,
			     "input ends inside a record header (%zu stray bytes)", got);
	}
	if (s->zout.len - s->zout_pos > 0 && !s->z_broken) {
		s->st.truncated = true;
		side_problem(s, CONV_E_TRUNCATED, s->z_offset, PERF_REC_COMPRESSED,
			     "compressed data ends inside a record (%zu bytes left)",
			     s->zout.len - s->zout_pos);
	}
}

/* The len bytes at p (file offset roff) are the record: consumed, described in *rr. */
static void raw_take(struct rdr_side *s, const uint8_t *p, size_t len, uint64_t roff,
		     struct raw_rec *rr)
{
	rr->rec = p;
	rr->len = len;
	rr->off = roff;
	in_consume(&s->in, len);
	s->st.bytes_read += len;
}

/*
 * HEADER_TRACING_DATA of size bytes at p: its blob follows outside
 * header.size ("header.size is a lie") and goes out with it, unless it is
 * over the limit (skipped). False when the input ends inside it.
 */
static bool raw_tracing(const struct rdr *r, struct rdr_side *s, const uint8_t *p, uint16_t size,
			uint64_t roff, struct raw_rec *rr)
{
	uint32_t tsize = rdr_rd32(r, p + 8);
	size_t total = (size_t)size + tsize;

	if (tsize > r->opts.max_tracing_data) {
		side_problem(s, CONV_E_LIMIT, roff, PERF_REC_HEADER_TRACING_DATA,
			     "tracing data of %" PRIu32 " bytes is over the limit; skipped", tsize);
		s->pending_skip = tsize;
		raw_take(s, p, size, roff, rr);
		return true;
	}
	if (in_peek(&s->in, total, &p) < total) {
		s->st.truncated = true;
		side_problem(s, CONV_E_TRUNCATED, roff, PERF_REC_HEADER_TRACING_DATA,
			     "input ends inside tracing data");
		return false;
	}
	raw_take(s, p, total, roff, rr);
	return true;
}

/* The file stream's next record. */
static enum file_rec raw_file_record(const struct rdr *r, struct rdr_side *s, struct raw_rec *rr)
{
	uint64_t roff = s->in.pos;
	const uint8_t *p;
	size_t got = in_peek(&s->in, 8, &p);
	uint32_t type;
	uint16_t size;

	if (got < 8) {
		raw_note_end(s, got, roff);
		return FR_END;
	}
	type = rdr_rd32(r, p);
	size = rdr_rd16(r, p + 6);
	if (size < 8) {
		s->st.stopped = true;
		side_problem(s, CONV_E_FORMAT, roff, type,
			     "record size %u is below the 8-byte header: cannot find the next record, reading stops here",
			     size);
		return FR_END;
	}
	got = in_peek(&s->in, size, &p);
	if (got < size) {
		s->st.truncated = true;
		side_problem(s, CONV_E_TRUNCATED, roff, type,
			     "input ends inside a %s record (%zu of %u bytes)",
			     rdr_record_name(type) ? rdr_record_name(type) : "unknown", got, size);
		return FR_END;
	}
	count_record(s, type);
	if (type == PERF_REC_COMPRESSED || type == PERF_REC_COMPRESSED2) {
		z_feed(r, s, p, size, type, roff);
		in_consume(&s->in, size);
		s->st.bytes_read += size;
		return FR_FED;
	}
	if (type == PERF_REC_HEADER_TRACING_DATA && size >= 12)
		return raw_tracing(r, s, p, size, roff, rr) ? FR_RECORD : FR_END;
	if (type == PERF_REC_AUXTRACE && size >= 16) {
		s->pending_skip = rdr_rd64(r, p + 8);
		s->st.auxtrace_bytes += s->pending_skip;
	}
	raw_take(s, p, size, roff, rr);
	return FR_RECORD;
}

enum raw_src next_raw(const struct rdr *r, struct rdr_side *s, struct raw_rec *rr)
{
	for (;;) {
		enum file_rec fr;

		if (!raw_skip_pending(s))
			return RAW_END;
		if (z_record(r, s, &rr->rec, &rr->len)) {
			count_record(s, rdr_rd32(r, rr->rec));
			rr->off = s->z_offset;
			return RAW_ZSTD;
		}
		if (z_step(r, s))
			continue;
		fr = raw_file_record(r, s, rr);
		if (fr != FR_FED)
			return fr == FR_RECORD ? RAW_FILE : RAW_END;
	}
}
