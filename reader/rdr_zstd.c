/*
 * The zstd stream: perf compresses each ring-buffer read into a COMPRESSED
 * (or COMPRESSED2) record, and the payloads of all of them form one zstd
 * stream whose output is ordinary records, which may straddle two
 * payloads. Apart from the raw record reading because the stream has state
 * of its own (the context, its input backlog and output window) and its
 * own limits against decompression bombs.
 *
 *   COMPRESSED 81: zstd bytes from @8 to header.size.
 *   COMPRESSED2 83: u64 data_size @8, zstd bytes @16 .. 16 + data_size.
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <inttypes.h>
#include <zstd.h>

#define ZOUT_CHUNK (256u << 10)
#define ZSTD_WINDOW_LOG_MAX 27 /* zstd's own default limit: 128 MiB */

static void z_reset(struct rdr_side *s)
{
	dbuf_reset(&s->zin);
	s->zin_pos = 0;
	dbuf_reset(&s->zout);
	s->zout_pos = 0;
}

void z_feed(const struct rdr *r, struct rdr_side *s, const uint8_t *rec, size_t len,
	    uint32_t type, uint64_t off)
{
	const uint8_t *payload = rec + 8;
	size_t plen = len - 8;

	if (type == PERF_REC_COMPRESSED2) {
		uint64_t dsize;

		if (len < 16) {
			s->st.records_malformed++;
			side_problem(s, CONV_E_FORMAT, off, type, "COMPRESSED2 record too short");
			return;
		}
		dsize = rdr_rd64(r, rec + 8);
		if (dsize > len - 16) {
			s->st.records_malformed++;
			side_problem(s, CONV_E_FORMAT, off, type,
				    "COMPRESSED2 data_size %" PRIu64 " exceeds its record of %zu bytes",
				    dsize, len);
			return;
		}
		payload = rec + 16;
		plen = (size_t)dsize;
	}
	if (s->z_broken) {
		side_problem(s, CONV_E_FORMAT, off, type,
			    "compressed record skipped: the compressed stream was broken earlier");
		return;
	}
	if (!s->zctx) {
		s->zctx = (struct ZSTD_DCtx_s *)ZSTD_createDCtx();
		if (!s->zctx) {
			s->z_broken = true;
			side_problem(s, CONV_E_NOMEM, off, type, "cannot create a zstd context");
			return;
		}
		ZSTD_DCtx_setParameter((ZSTD_DCtx *)s->zctx, ZSTD_d_windowLogMax,
				       ZSTD_WINDOW_LOG_MAX);
	}
	/* the unread tail moves to the front; the new payload follows it */
	if (s->zin_pos) {
		dbuf_consume(&s->zin, s->zin_pos);
		s->zin_pos = 0;
	}
	if (!dbuf_append(&s->zin, payload, plen)) {
		s->z_broken = true;
		side_problem(s, CONV_E_LIMIT, off, type, "compressed input backlog over its limit");
		return;
	}
	s->z_offset = off;
	s->z_rec_out = 0;
	s->st.compressed_bytes_in += plen;
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

bool z_step(const struct rdr *r, struct rdr_side *s)
{
	ZSTD_outBuffer ob;
	ZSTD_inBuffer ib;
	size_t ret, before;

	if (s->z_broken || s->zin_pos >= s->zin.len)
		return false;
	if (s->zout_pos) {
		dbuf_consume(&s->zout, s->zout_pos);
		s->zout_pos = 0;
	}
	if (!dbuf_reserve(&s->zout, ZOUT_CHUNK)) {
		/* a record larger than the output window cannot be framed */
		s->z_broken = true;
		side_problem(s, CONV_E_LIMIT, s->z_offset, PERF_REC_COMPRESSED,
			    "decompressed record larger than the decompression window; rest of the compressed data skipped");
		z_reset(s);
		return false;
	}
	before = s->zout.len;
	ob.dst = s->zout.data;
	ob.size = s->zout.len + ZOUT_CHUNK;
	ob.pos = s->zout.len;
	ib.src = s->zin.data;
	ib.size = s->zin.len;
	ib.pos = s->zin_pos;
	ret = ZSTD_decompressStream((ZSTD_DCtx *)s->zctx, &ob, &ib);
	if (ZSTD_isError(ret)) {
		s->z_broken = true;
		side_problem(s, CONV_E_FORMAT, s->z_offset, PERF_REC_COMPRESSED,
			    "zstd error: %s; rest of the compressed data skipped",
			    ZSTD_getErrorName(ret));
		z_reset(s);
		return false;
	}
	s->zout.len = ob.pos;
	s->zin_pos = ib.pos;
	s->st.compressed_bytes_out += ob.pos - before;
	s->z_rec_out += ob.pos - before;
	if (s->z_rec_out > z_record_cap(r)) {
		/*
		 * perf compresses one ring-buffer read per record, so a record
		 * inflating far past the ring's size is a bomb: zstd's window
		 * (up to 128 MiB) would fill with it
		 */
		s->z_broken = true;
		side_problem(s, CONV_E_LIMIT, s->z_offset, PERF_REC_COMPRESSED,
			    "compressed record inflates past %" PRIu64
			    " MiB (its ring buffer held %u bytes); rest of the compressed data skipped",
			    z_record_cap(r) >> 20, r->info.comp_mmap_len);
		z_reset(s);
		return false;
	}
	if (s->zin_pos == s->zin.len) {
		dbuf_reset(&s->zin);
		s->zin_pos = 0;
	}
	return ob.pos > before || ib.pos > 0;
}

bool z_record(const struct rdr *r, struct rdr_side *s, const uint8_t **rec, size_t *len)
{
	size_t have = s->zout.len - s->zout_pos;
	const uint8_t *p;
	uint16_t size;

	if (s->z_broken || have < 8)
		return false;
	p = s->zout.data + s->zout_pos;
	size = rdr_rd16(r, p + 6);
	if (size < 8) {
		s->z_broken = true;
		s->st.stopped = true;
		side_problem(s, CONV_E_FORMAT, s->z_offset, rdr_rd32(r, p),
			    "record of size %u inside compressed data: framing lost, rest of the compressed data skipped",
			    size);
		z_reset(s);
		return false;
	}
	if (have < size)
		return false;
	*rec = p;
	*len = size;
	s->zout_pos += size;
	return true;
}

void z_release(struct rdr_side *s)
{
	ZSTD_freeDCtx((ZSTD_DCtx *)s->zctx);
	s->zctx = NULL;
	dbuf_release(&s->zin);
	dbuf_release(&s->zout);
}
