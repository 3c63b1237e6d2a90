/*
 * libFuzzer target for the whole conversion: reader -> model -> both writers,
 * in memory.
 *
 * The input is a perf.data file (file or pipe mode). It is opened with
 * rdr_open_mem(), converted by convert_run() without symbolization and
 * offline (nothing is downloaded; the recorded binaries on this machine may
 * still be read for their program headers, as conv does), then written as
 * pprof (pprof_encode and pprof_encode_gz into dbufs) and as JFR (jfr_write
 * into a memfd, with small chunks so that several chunks happen).
 *
 * Checked:
 *   - the model: every id in range (samples -> stacks -> locations ->
 *     mappings, lines -> functions, labels and names -> strings), the count
 *     values of the samples and the events' sample counts both add up to the
 *     samples kept, the event spool holds one event per kept sample;
 *   - pprof: the gzip output inflates to the plain encoding; the plain
 *     encoding is well-formed protobuf whose top-level counts match the
 *     model, string_table[0] is "";
 *   - JFR: chunks back to back to the end of the file, each starting with
 *     "FLR\0" 2.0, its size field within the file, the last one (only)
 *     flagged last, checkpoint and metadata offsets pointing at records of
 *     their type; every record's size fits its chunk; there are at least
 *     jfr_stats.events other records, and that is the number of samples kept;
 *     jfr_stats.bytes and .chunks match the file;
 *   - the cache of distinct samples: a second conversion that resolves every
 *     sample as new (convert_opts.no_sample_cache) ends alike and writes the
 *     same pprof and JFR bytes;
 *   - views: the call tree of the first event's count and weight, its folded
 *     stacks (each line "FRAMES COUNT" with a positive count, no more lines
 *     than nodes, no byte of a name able to break a line) and its page (the
 *     data in place of the marker, no '<' in it before the script's end
 *     tag); the top functions by self and total, sorted.
 *
 * Environment: the JIT directory and HOME point nowhere, so that no
 * perf-<pid>.map of this machine is read and no ~/.debug consulted; the
 * event spool is an unlinked file in $TMPDIR.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "fuzz_common.h"

#include "core/dbuf.h"
#include "core/err.h"
#include "model/events.h"
#include "model/profile.h"
#include "views/folded.h"
#include "views/html.h"
#include "views/top.h"
#include "views/tree.h"
#include "pipeline/convert.h"
#include "jfrwriter/jfr.h"
#include "pprofwriter/pprof.h"
#include "reader/reader.h"
#include "tests/unit/convopts.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

volatile uint64_t fuzz_sink;

#define JFR_SMALL_CHUNK 4096u

/*
 * Places that do not exist: no perf-<pid>.map or jit-<pid>.dump of this
 * machine, no ~/.debug, nothing to clean up after a crash.
 */
#define NOWHERE "/nonexistent/conv-fuzz-roundtrip"

static void setup_once(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	setenv("HOME", NOWHERE "/home", 1);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("PERF_BUILDID_DIR");
}

/* ---- the model ---- */

static void check_model(const struct prof *p, const struct convert_stats *cs)
{
	uint64_t counted = 0, desc = 0;

	FUZZ_CHECK(p->nr_types == 2 * p->nr_events_desc);
	FUZZ_CHECK(p->nr_types == 0 || p->default_type < p->nr_types);
	FUZZ_CHECK(p->primary_event == PROF_NONE || p->primary_event < p->nr_events_desc);
	for (size_t i = 0; i < p->nr_types; i++)
		FUZZ_CHECK(p->types[i].type < p->strs.count && p->types[i].unit < p->strs.count);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t n;
		const uint32_t *locs;

		FUZZ_CHECK(s->stack < p->nr_stacks);
		FUZZ_CHECK((size_t)s->first_label + s->nr_labels <= p->nr_labels);
		FUZZ_CHECK((size_t)s->first_value + prof_nr_slots(p) <= p->nr_values);
		locs = prof_stack_locs(p, s->stack, &n);
		for (uint32_t k = 0; k < n; k++)
			FUZZ_CHECK(locs[k] < p->nr_locations);
		for (uint32_t k = 0; k < s->nr_labels; k++) {
			const struct prof_label *l = &p->labels[s->first_label + k];

			FUZZ_CHECK(l->key < p->strs.count && l->str < p->strs.count &&
				   l->unit < p->strs.count);
		}
		for (size_t e = 0; 2 * e < p->nr_types; e++) {
			FUZZ_CHECK(prof_sample_value(p, s, 2 * e) >= 0);
			counted += (uint64_t)prof_sample_value(p, s, 2 * e);
		}
	}
	for (size_t i = 0; i < p->nr_stacks; i++)
		FUZZ_CHECK(p->stacks[i] < p->stack_pool_len &&
			   (size_t)p->stacks[i] + 1 + p->stack_pool[p->stacks[i]] <= p->stack_pool_len);
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct prof_location *l = &p->locations[i];

		FUZZ_CHECK(l->mapping == PROF_NONE || l->mapping < p->nr_mappings);
		FUZZ_CHECK((size_t)l->first_line + l->nr_lines <= p->nr_lines);
		for (uint32_t k = 0; k < l->nr_lines; k++)
			FUZZ_CHECK(p->lines[l->first_line + k].function < p->nr_functions);
	}
	for (size_t i = 0; i < p->nr_functions; i++) {
		const struct prof_function *f = &p->functions[i];

		FUZZ_CHECK(f->name < p->strs.count && f->system_name < p->strs.count &&
			   f->filename < p->strs.count);
	}
	for (size_t i = 0; i < p->nr_mappings; i++)
		FUZZ_CHECK(p->mappings[i].filename < p->strs.count &&
			   p->mappings[i].build_id < p->strs.count);
	for (size_t i = 0; i < p->nr_threads; i++)
		FUZZ_CHECK(p->threads[i].name < p->strs.count &&
			   p->threads[i].process_name < p->strs.count);
	for (size_t i = 0; i < p->nr_comments; i++)
		FUZZ_CHECK(p->comments[i] < p->strs.count);
	for (size_t i = 0; i < p->nr_events_desc; i++)
		desc += p->events_desc[i].samples;
	/* every kept sample is counted once, in the model and in the spool */
	FUZZ_CHECK(counted == cs->samples);
	FUZZ_CHECK(desc == cs->samples);
	FUZZ_CHECK(p->events && prof_events_count(p->events) == cs->samples);
}

/* ---- pprof ---- */

static bool pb_varint(const uint8_t *b, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64 && *pos < len; shift += 7) {
		uint8_t c = b[(*pos)++];

		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static void check_pprof(const struct prof *p, const struct dbuf *raw, const struct dbuf *gz)
{
	size_t pos = 0, counts[16] = { 0 };
	bool first_string = true;
	uint8_t *out;
	z_stream z;
	int zr;

	/* gzip of exactly the plain bytes */
	FUZZ_CHECK(gz->len >= 18 && gz->data[0] == 0x1f && gz->data[1] == 0x8b);
	out = malloc(raw->len + 1);
	FUZZ_CHECK(out != NULL);
	memset(&z, 0, sizeof(z));
	FUZZ_CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
	z.next_in = gz->data;
	z.avail_in = (uInt)gz->len;
	z.next_out = out;
	z.avail_out = (uInt)raw->len + 1;
	/* one gzip member per 256 KiB of encoding, read one after another */
	do {
		zr = inflate(&z, Z_FINISH);
		FUZZ_CHECK(zr == Z_STREAM_END);
		FUZZ_CHECK(inflateReset(&z) == Z_OK);
	} while (z.avail_in);
	FUZZ_CHECK(raw->len + 1 - z.avail_out == raw->len &&
		   (raw->len == 0 || !memcmp(out, raw->data, raw->len)));
	inflateEnd(&z);
	free(out);

	/* well-formed top level: varints and length-delimited fields only */
	while (pos < raw->len) {
		uint64_t key, v;
		unsigned field, wt;

		FUZZ_CHECK(pb_varint(raw->data, raw->len, &pos, &key));
		field = (unsigned)(key >> 3);
		wt = (unsigned)(key & 7);
		FUZZ_CHECK(field >= 1 && field <= 14);
		FUZZ_CHECK(wt == 0 || wt == 2);
		FUZZ_CHECK(pb_varint(raw->data, raw->len, &pos, &v));
		if (wt == 2) {
			FUZZ_CHECK(v <= raw->len - pos);
			if (field == 6 && first_string) {
				FUZZ_CHECK(v == 0); /* string_table[0] is "" */
				first_string = false;
			}
			pos += (size_t)v;
		}
		counts[field]++;
	}
	FUZZ_CHECK(counts[1] == p->nr_types);
	FUZZ_CHECK(counts[2] == p->nr_samples);
	FUZZ_CHECK(counts[3] == p->nr_mappings);
	FUZZ_CHECK(counts[4] == p->nr_locations);
	FUZZ_CHECK(counts[5] == p->nr_functions);
	FUZZ_CHECK(counts[6] == p->strs.count);
}

/* ---- JFR ---- */

static uint64_t be64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* The record at off in [.., end): its type id, or aborts when malformed; *size gets its size. */
static uint64_t jfr_record(const uint8_t *b, size_t off, size_t end, uint64_t *size)
{
	size_t pos = off;
	uint64_t type;

	FUZZ_CHECK(pb_varint(b, end, &pos, size));
	FUZZ_CHECK(*size > 0 && *size <= end - off && pos <= off + *size);
	FUZZ_CHECK(pb_varint(b, off + (size_t)*size, &pos, &type));
	return type;
}

static void check_jfr(const uint8_t *b, size_t len, const struct jfr_stats *js)
{
	size_t off = 0;
	uint64_t chunks = 0, events = 0;

	FUZZ_CHECK(js->bytes == len);
	while (off < len) {
		uint64_t csize, cp, meta, size, type;
		unsigned flags;
		size_t end, pos;
		bool saw_cp = false, saw_meta = false;

		FUZZ_CHECK(len - off >= 68);
		FUZZ_CHECK(!memcmp(b + off, "FLR\0", 4));
		FUZZ_CHECK(b[off + 4] == 0 && b[off + 5] == 2 && b[off + 6] == 0 && b[off + 7] == 0);
		csize = be64(b + off + 8);
		cp = be64(b + off + 16);
		meta = be64(b + off + 24);
		flags = (unsigned)(b[off + 66] << 8 | b[off + 67]);
		FUZZ_CHECK(csize >= 68 && csize <= len - off);
		end = off + (size_t)csize;
		FUZZ_CHECK(cp >= 68 && cp < csize && meta >= 68 && meta < csize);
		FUZZ_CHECK(b[off + 64] == 0); /* finished */
		FUZZ_CHECK(flags & 1);       /* varint integers */
		FUZZ_CHECK(!!(flags & 2) == (end == len)); /* only the last chunk says so */
		for (pos = off + 68; pos < end; pos += (size_t)size) {
			type = jfr_record(b, pos, end, &size);
			if (pos == off + cp) {
				FUZZ_CHECK(type == 1);
				saw_cp = true;
			} else if (pos == off + meta) {
				FUZZ_CHECK(type == 0);
				saw_meta = true;
			} else if (type != 0 && type != 1) {
				events++;
			}
		}
		FUZZ_CHECK(pos == end && saw_cp && saw_meta);
		chunks++;
		off = end;
	}
	FUZZ_CHECK(chunks == js->chunks);
	/* each chunk also has its recording facts (settings, OS, CPU) as events */
	FUZZ_CHECK(events >= js->events);
}

static void write_jfr(const struct prof *p, const struct convert_stats *cs)
{
	struct jfr_opts jo = { .chunk_size = JFR_SMALL_CHUNK };
	struct jfr_stats js;
	struct conv_diag diag;
	struct stat st;
	enum conv_err err;
	uint8_t *buf;
	int fd = memfd_create("fuzz-jfr", MFD_CLOEXEC);

	FUZZ_CHECK(fd >= 0);
	memset(&diag, 0, sizeof(diag));
	err = jfr_write(p, &jo, fd, &js, &diag);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOMEM);
	if (err == CONV_E_OK) {
		FUZZ_CHECK(fstat(fd, &st) == 0 && st.st_size >= 68);
		FUZZ_CHECK(js.events == cs->samples);
		buf = malloc((size_t)st.st_size);
		FUZZ_CHECK(buf != NULL);
		FUZZ_CHECK(pread(fd, buf, (size_t)st.st_size, 0) == st.st_size);
		check_jfr(buf, (size_t)st.st_size, &js);
		free(buf);
	}
	close(fd);
}

/* What a writer put in memfd fd, NUL-terminated (malloc'ed), its length in *n. */
static char *memfd_text(int fd, size_t *n)
{
	struct stat st;
	char *buf;

	FUZZ_CHECK(fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	FUZZ_CHECK(buf != NULL);
	FUZZ_CHECK(pread(fd, buf, (size_t)st.st_size, 0) == st.st_size);
	buf[st.st_size] = 0;
	*n = (size_t)st.st_size;
	return buf;
}

static void check_folded(const struct view_tree *t, size_t col)
{
	int fd = memfd_create("fuzz-folded", MFD_CLOEXEC);
	size_t n, lines = 0;
	char *buf, *ln;

	FUZZ_CHECK(fd >= 0);
	if (view_write_folded(t, col, fd, NULL, NULL, NULL) == CONV_E_OK) {
		buf = memfd_text(fd, &n);
		for (ln = buf; ln < buf + n; lines++) {
			char *end = memchr(ln, '\n', (size_t)(buf + n - ln)), *sp;

			FUZZ_CHECK(end != NULL);
			*end = 0;
			sp = strrchr(ln, ' ');
			FUZZ_CHECK(sp && sp > ln && sp[1] >= '1' && sp[1] <= '9');
			for (char *d = sp + 1; *d; d++)
				FUZZ_CHECK(*d >= '0' && *d <= '9');
			FUZZ_CHECK(!memchr(ln, '\r', (size_t)(end - ln)));
			ln = end + 1;
		}
		FUZZ_CHECK(lines < t->nr_nodes);
		free(buf);
	}
	close(fd);
}

static void check_html(const struct view_tree *t)
{
	const char *names[2] = { "count", "weight" }, *units[2] = { "samples", "" };
	struct view_html_opts o = { "fuzz", "", 0, names, units, NULL, 0, 0, false };
	int fd = memfd_create("fuzz-html", MFD_CLOEXEC);
	char *buf, *data, *end;
	size_t n;

	FUZZ_CHECK(fd >= 0);
	if (view_write_html(t, &o, fd, NULL, NULL, NULL) == CONV_E_OK) {
		buf = memfd_text(fd, &n);
		data = strstr(buf, "id=\"conv-data\">{\"title\":");
		FUZZ_CHECK(data != NULL);
		end = strstr(data, "</script>");
		FUZZ_CHECK(end != NULL && end[-1] == '}');
		FUZZ_CHECK(strchr(data + 1, '<') == end);
		/* the marker is replaced: the template holds none (a name in the data may) */
		*data = 0;
		FUZZ_CHECK(!strstr(buf, "/*CONV-DATA*/") && !strstr(end, "/*CONV-DATA*/"));
		free(buf);
	}
	close(fd);
}

static void check_views(const struct prof *p)
{
	uint32_t first = view_first_event(p);
	size_t types[2];
	struct view_tree t;
	struct view_top top;

	if (first == PROF_NONE)
		return;
	types[0] = 2 * (size_t)first;
	types[1] = types[0] + 1;
	if (view_tree_build(&t, p, types, 2) == CONV_E_OK) {
		FUZZ_CHECK(view_value(&t, 0, 0) >= 0);
		check_folded(&t, 0);
		check_folded(&t, 1);
		check_html(&t);
		view_tree_release(&t);
	}
	if (view_top_build(&top, p, types[0], 5) == CONV_E_OK) {
		for (size_t i = 1; i < top.nr_self; i++)
			FUZZ_CHECK(top.by_self[i - 1].self >= top.by_self[i].self);
		for (size_t i = 1; i < top.nr_total; i++)
			FUZZ_CHECK(top.by_total[i - 1].total >= top.by_total[i].total);
		view_top_release(&top);
	}
}

/* The JFR file of p (small chunks), malloc'ed, its length in *n; NULL when the writer failed. */
static uint8_t *jfr_bytes(const struct prof *p, size_t *n)
{
	struct jfr_opts jo = { .chunk_size = JFR_SMALL_CHUNK };
	struct jfr_stats js;
	struct conv_diag diag;
	uint8_t *buf = NULL;
	int fd = memfd_create("fuzz-jfr", MFD_CLOEXEC);

	FUZZ_CHECK(fd >= 0);
	memset(&diag, 0, sizeof(diag));
	if (jfr_write(p, &jo, fd, &js, &diag) == CONV_E_OK)
		buf = (uint8_t *)memfd_text(fd, n);
	close(fd);
	return buf;
}

/* The input converted (its reader already open in *r, closed here), into p. */
static enum conv_err convert(struct rdr *r, bool no_cache, struct prof *p, struct convert_stats *cs)
{
	struct convert_opts co;
	struct conv_diag diag;
	enum conv_err err;

	memset(&diag, 0, sizeof(diag));
	convopts_offline(&co, no_cache); /* tmpdir NULL: $TMPDIR or /tmp, the spool unlinked at once */
	memset(cs, 0, sizeof(*cs));
	prof_init(p);
	err = convert_run(r, &co, p, cs, &diag);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOMEM || err == CONV_E_IO);
	FUZZ_CHECK(memchr(diag.msg, 0, sizeof(diag.msg)) != NULL);
	rdr_close(r);
	return err;
}

/*
 * The same input without the sample cache: the same end, the same bytes out
 * (raw: the first run's pprof encoding).
 */
static void check_no_cache(const uint8_t *data, size_t size, enum conv_err err, const struct prof *p,
			   const struct dbuf *raw)
{
	struct rdr_opts ro = { .reorder_limit = 16u << 10, .max_problems = 16 };
	struct convert_stats cs;
	struct conv_diag diag;
	struct rdr *r = NULL;
	struct prof p2;
	struct dbuf raw2;
	enum conv_err err2;
	uint8_t *j1, *j2;
	size_t n1 = 0, n2 = 0;

	memset(&diag, 0, sizeof(diag));
	FUZZ_CHECK(rdr_open_mem(&r, data, size, &ro, &diag) == CONV_E_OK);
	err2 = convert(r, true, &p2, &cs);
	/* out of memory may strike one run and not the other */
	if (err2 != CONV_E_NOMEM && err != CONV_E_NOMEM) {
		FUZZ_CHECK(err2 == err);
		if (err == CONV_E_OK) {
			dbuf_init(&raw2, 0);
			FUZZ_CHECK(pprof_encode(&p2, &raw2) == CONV_E_OK);
			FUZZ_CHECK(raw2.len == raw->len && !memcmp(raw2.data, raw->data, raw->len));
			dbuf_release(&raw2);
			j1 = jfr_bytes(p, &n1);
			j2 = jfr_bytes(&p2, &n2);
			FUZZ_CHECK(!j1 == !j2 && n1 == n2 && (!j1 || !memcmp(j1, j2, n1)));
			free(j1);
			free(j2);
		}
	}
	convert_stats_release(&cs);
	prof_release(&p2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdr_opts ro = { .reorder_limit = 16u << 10, .max_problems = 16 };
	struct convert_stats cs;
	struct conv_diag diag;
	struct rdr *r = NULL;
	struct prof p;
	struct dbuf raw, gz;
	enum conv_err err;

	setup_once();
	memset(&diag, 0, sizeof(diag));
	if (rdr_open_mem(&r, data, size, &ro, &diag) != CONV_E_OK)
		return 0; /* fuzz_reader covers the failed opens */
	err = convert(r, false, &p, &cs);
	dbuf_init(&raw, 0);
	if (err == CONV_E_OK) {
		check_model(&p, &cs);
		for (size_t i = 0; i < cs.nr_missing; i++)
			fuzz_sink += fuzz_touch_str(cs.missing[i].build_id) +
				     fuzz_touch_str(cs.missing[i].path) + cs.missing[i].frames;

		dbuf_init(&gz, 0);
		FUZZ_CHECK(pprof_encode(&p, &raw) == CONV_E_OK);
		FUZZ_CHECK(pprof_encode_gz(&p, 1, &gz) == CONV_E_OK);
		check_pprof(&p, &raw, &gz);
		dbuf_release(&gz);

		write_jfr(&p, &cs);
		check_views(&p);
	}
	check_no_cache(data, size, err, &p, &raw);
	dbuf_release(&raw);
	convert_stats_release(&cs);
	prof_release(&p);
	return 0;
}
