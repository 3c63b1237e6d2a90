/*
 * pprof encoding checked by an independent decoder: a small hand-built
 * profile is encoded and decoded with `protoc --decode_raw`, whose output
 * names fields by number; the expected text was worked out by hand from
 * profile.proto. Also: gzip output inflates back to the same bytes (with
 * zlib, an independent inflater, member after member), and equal profiles
 * give equal bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/dbuf.h"
#include "model/profile.h"
#include "pipeline/ppload.h"
#include "pprofedit/pprofedit.h"
#include "pprofwriter/pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/*
 * Inflates every gzip member of in[0, n) into out (as gzip readers do:
 * Go's compress/gzip, zcat); returns the bytes out, and in *members how many
 * members there were. Fails the test on a bad or truncated member.
 */
static size_t gunzip_all(const unsigned char *in, size_t n, unsigned char *out, size_t cap,
			 unsigned *members)
{
	z_stream z;
	size_t done = 0;

	*members = 0;
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	while (z.avail_in) {
		z.next_out = out + done;
		z.avail_out = (uInt)(cap - done);
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		done = cap - z.avail_out;
		(*members)++;
		assert_int_equal(inflateReset(&z), Z_OK);
	}
	inflateEnd(&z);
	return done;
}

static void build(struct prof *p)
{
	struct prof_mapping m = { 0 };
	struct prof_line lines[2];
	uint32_t locs[2], stack;
	struct prof_label lb = { 0 };
	int64_t vals[2] = { 3, 3000 };

	prof_init(p);
	p->nr_types = 2;
	p->types = calloc(2, sizeof(*p->types));
	p->types[0].type = prof_str(p, "cpu-clock_samples"); /* 1 */
	p->types[0].unit = prof_str(p, "count");              /* 2 */
	p->types[1].type = prof_str(p, "cpu-clock");          /* 3 */
	p->types[1].unit = prof_str(p, "nanoseconds");        /* 4 */
	p->default_type = 1;
	m.start = 0x400000;
	m.limit = 0x401000;
	m.offset = 0x1000;
	m.filename = prof_str(p, "/bin/x");                   /* 5 */
	m.build_id = prof_str(p, "abcd");                     /* 6 */
	m.has_functions = true;
	prof_add_mapping(p, &m);
	lines[0].function = prof_function(p, prof_str(p, "inner"), prof_str(p, "inner"), 0, 7); /* 7 */
	lines[0].line = 10;
	lines[0].column = 0;
	lines[1].function = prof_function(p, prof_str(p, "outer"), prof_str(p, "outer"), 0, 0); /* 8 */
	lines[1].line = 20;
	lines[1].column = 0;
	locs[0] = prof_location(p, 0, 0x400123, lines, 2);
	locs[1] = prof_location(p, PROF_NONE, 0x999, NULL, 0);
	stack = prof_stack(p, locs, 2);
	lb.key = prof_str(p, "pid"); /* 9 */
	lb.num = 42;
	prof_add_sample(p, stack, &lb, 1, vals);
	/* the same sample again adds up */
	prof_add_sample(p, stack, &lb, 1, vals);
}

static const char expected[] =
	"1 {\n  1: 1\n  2: 2\n}\n"
	"1 {\n  1: 3\n  2: 4\n}\n"
	"2 {\n  1: \"\\001\\002\"\n  2: \"\\006\\360.\"\n  3 {\n    1: 9\n    3: 42\n  }\n}\n"
	"3 {\n  1: 1\n  2: 4194304\n  3: 4198400\n  4: 4096\n  5: 5\n  6: 6\n  7: 1\n}\n"
	"4 {\n  1: 1\n  2: 1\n  3: 4194595\n  4 {\n    1: 1\n    2: 10\n  }\n  4 {\n    1: 2\n    2: 20\n  }\n}\n"
	"4 {\n  1: 2\n  3: 2457\n}\n"
	"5 {\n  1: 1\n  2: 7\n  3: 7\n  5: 7\n}\n"
	"5 {\n  1: 2\n  2: 8\n  3: 8\n}\n"
	"6: \"\"\n6: \"cpu-clock_samples\"\n6: \"count\"\n6: \"cpu-clock\"\n6: \"nanoseconds\"\n"
	"6: \"/bin/x\"\n6: \"abcd\"\n6: \"inner\"\n6: \"outer\"\n6: \"pid\"\n"
	"14: 3\n";

static void test_decode_raw(void **state)
{
	struct prof p;
	struct dbuf b;
	char path[] = "/tmp/conv-test-pprof-XXXXXX";
	char cmd[256];
	FILE *f;
	char out[8192];
	size_t n;
	int fd;
	(void)state;

	if (system("command -v protoc >/dev/null 2>&1") != 0)
		skip();
	build(&p);
	dbuf_init(&b, 0);
	assert_int_equal(pprof_encode(&p, &b), CONV_E_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_string_equal(out, expected);
	dbuf_release(&b);
	prof_release(&p);
}

static void test_gzip_deterministic(void **state)
{
	struct prof p, q;
	struct dbuf raw, gz, gz2;
	uint8_t back[4096];
	unsigned members;
	(void)state;

	build(&p);
	build(&q);
	dbuf_init(&raw, 0);
	dbuf_init(&gz, 0);
	dbuf_init(&gz2, 0);
	assert_int_equal(pprof_encode(&p, &raw), CONV_E_OK);
	assert_int_equal(pprof_encode_gz(&p, 6, &gz), CONV_E_OK);
	assert_int_equal(pprof_encode_gz(&q, 6, &gz2), CONV_E_OK);
	assert_int_equal(gz.len, gz2.len);
	assert_memory_equal(gz.data, gz2.data, gz.len);
	/* gzip magic, deflate, no name, mtime 0 */
	assert_int_equal(gz.data[0], 0x1f);
	assert_int_equal(gz.data[1], 0x8b);
	assert_int_equal(gz.data[3] & 0x08, 0);
	assert_int_equal(gz.data[4] | gz.data[5] | gz.data[6] | gz.data[7], 0);
	assert_int_equal(gunzip_all(gz.data, gz.len, back, sizeof(back), &members), raw.len);
	assert_int_equal(members, 1); /* under 256 KiB of encoding */
	assert_memory_equal(back, raw.data, raw.len);
	dbuf_release(&raw);
	dbuf_release(&gz);
	dbuf_release(&gz2);
	prof_release(&p);
	prof_release(&q);
}

/* A profile whose encoding is megabytes: many flushes of the streaming writer. */
static void build_big(struct prof *p)
{
	struct prof_mapping m = { 0 };
	int64_t vals[2];

	prof_init(p);
	p->nr_types = 2;
	p->types = calloc(2, sizeof(*p->types));
	p->types[0].type = prof_str(p, "samples");
	p->types[0].unit = prof_str(p, "count");
	p->types[1].type = prof_str(p, "cpu");
	p->types[1].unit = prof_str(p, "nanoseconds");
	m.start = 0x400000;
	m.limit = 0x800000;
	m.filename = prof_str(p, "/bin/big");
	prof_add_mapping(p, &m);
	for (uint32_t i = 0; i < 60000; i++) {
		char name[32];
		struct prof_line ln;
		uint32_t locs[8], n = 1 + i % 8, stack;
		struct prof_label lb[2];

		snprintf(name, sizeof(name), "fn_%u", i);
		ln.function = prof_function(p, prof_str(p, name), prof_str(p, name), 0, i);
		ln.line = i;
		ln.column = 0;
		for (uint32_t k = 0; k < n; k++)
			locs[k] = prof_location(p, 0, 0x400000 + (uint64_t)(i + k) * 16, &ln, 1);
		stack = prof_stack(p, locs, n);
		memset(lb, 0, sizeof(lb));
		lb[0].key = prof_str(p, "tid");
		lb[0].num = i % 7;
		lb[1].key = prof_str(p, "comm");
		lb[1].str = prof_str(p, i % 2 ? "odd" : "even");
		vals[0] = 1;
		vals[1] = 1000 + i;
		assert_true(prof_add_sample(p, stack, lb, 2, vals));
	}
}

/* Streaming to a file gives exactly the in-memory encoding; write errors are reported, not lost. */
static void test_stream(void **state)
{
	struct prof p;
	struct dbuf raw, gz;
	char path[] = "/tmp/conv-test-pprof-XXXXXX";
	int fd, io_errno = 0;
	uint64_t bytes = 0;
	FILE *f;
	unsigned char *file, *back;
	long flen;
	uLongf blen;
	(void)state;

	build_big(&p);
	dbuf_init(&raw, 0);
	dbuf_init(&gz, 0);
	assert_int_equal(pprof_encode(&p, &raw), CONV_E_OK);
	assert_true(raw.len > 2u << 20); /* several 256 KiB flushes */
	assert_int_equal(pprof_encode_gz(&p, 1, &gz), CONV_E_OK);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(pprof_write_gz(&p, 1, fd, NULL, &bytes, &io_errno), CONV_E_OK);
	assert_int_equal(io_errno, 0);
	close(fd);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	flen = ftell(f);
	rewind(f);
	assert_int_equal((uint64_t)flen, bytes);
	file = malloc((size_t)flen);
	assert_non_null(file);
	assert_int_equal(fread(file, 1, (size_t)flen, f), (size_t)flen);
	fclose(f);
	unlink(path);
	/* the same bytes as the in-memory gzip, and they inflate to the raw encoding */
	assert_int_equal((size_t)flen, gz.len);
	assert_memory_equal(file, gz.data, gz.len);
	blen = (uLongf)raw.len + 16;
	back = malloc(blen);
	assert_non_null(back);
	{
		unsigned members;

		assert_int_equal(gunzip_all(file, (size_t)flen, back, blen, &members), raw.len);
		/* one member per 256 KiB of encoding: the last one holds the rest */
		assert_int_equal(members, (raw.len + (256u << 10) - 1) / (256u << 10));
	}
	assert_memory_equal(back, raw.data, raw.len);
	/* a full disk and a bad descriptor: CONV_E_IO with errno */
	fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		assert_int_equal(pprof_write_gz(&p, 1, fd, NULL, &bytes, &io_errno), CONV_E_IO);
		assert_int_equal(io_errno, ENOSPC);
		close(fd);
	}
	assert_int_equal(pprof_write_gz(&p, 1, -1, NULL, &bytes, &io_errno), CONV_E_IO);
	assert_int_equal(io_errno, EBADF);
	/* label lists are shared: two distinct lists per tid parity, not one per sample */
	assert_true(p.nr_labels <= 2 * 14);
	free(back);
	free(file);
	dbuf_release(&raw);
	dbuf_release(&gz);
	prof_release(&p);
}

/*
 * Samples by label-list place (prof_label_set + prof_add_sample_set) are
 * the samples prof_add_sample makes from the lists themselves: equal lists
 * share a place, a list and its prefix do not, values add up per (stack,
 * list), and the pools come out the same.
 */
/* Stacks laid out by a builder become the model's as they are, and the model grows them after. */
static void test_adopt_stacks(void **state)
{
	struct prof p;
	uint32_t *pool = malloc(16 * sizeof(*pool)), *offs = malloc(4 * sizeof(*offs)), n, id;
	uint8_t *trunc = malloc(4);
	const uint32_t *l;
	const uint32_t more[3] = { 7, 8, 9 };

	(void)state;
	assert_non_null(pool);
	assert_non_null(offs);
	assert_non_null(trunc);
	/* two stacks, [5 6] and [], then garbage the model must not read as flags */
	pool[0] = 2;
	pool[1] = 5;
	pool[2] = 6;
	pool[3] = 0;
	offs[0] = 0;
	offs[1] = 3;
	trunc[0] = 0;
	trunc[1] = 1;
	trunc[2] = trunc[3] = 0xee;
	prof_init(&p);
	assert_true(prof_adopt_stacks(&p, pool, 4, 16, offs, 2, 4, trunc));
	assert_false(prof_adopt_stacks(&p, pool, 4, 16, offs, 2, 4, trunc));
	l = prof_stack_locs(&p, 0, &n);
	assert_int_equal(n, 2);
	assert_int_equal(l[0], 5);
	assert_int_equal(l[1], 6);
	prof_stack_locs(&p, 1, &n);
	assert_int_equal(n, 0);
	assert_false(prof_stack_truncated(&p, 0));
	assert_true(prof_stack_truncated(&p, 1));
	/* past what was given: new stacks, unflagged until flagged */
	for (uint32_t i = 0; i < 5; i++) {
		id = prof_stack(&p, more, 3 - i % 3);
		assert_true(id == 2 + i || (i >= 3 && id == 2 + i - 3));
	}
	assert_false(prof_stack_truncated(&p, 2));
	assert_false(prof_stack_truncated(&p, 3));
	assert_true(prof_stack_set_truncated(&p, 3));
	assert_true(prof_stack_truncated(&p, 3));
	assert_false(prof_stack_truncated(&p, 2));
	assert_true(prof_stack_truncated(&p, 1));
	l = prof_stack_locs(&p, 4, &n);
	assert_int_equal(n, 1);
	assert_int_equal(l[0], 7);
	prof_release(&p);
}

/* Types set as never used take no room, read as 0, and refuse a value. */
static void test_value_types(void **state)
{
	struct prof p;
	const uint32_t one[1] = { 1 };
	const bool used[4] = { false, false, true, true };
	const int64_t v1[4] = { 0, 0, 3, 3000 }, v2[4] = { 0, 0, 1, 1000 }, bad[4] = { 1, 0, 1, 1 };
	uint32_t st;

	(void)state;
	prof_init(&p);
	p.nr_types = 4;
	p.types = calloc(4, sizeof(*p.types));
	assert_non_null(p.types);
	assert_true(prof_set_value_types(&p, used));
	st = prof_stack(&p, one, 1);
	assert_true(prof_add_sample(&p, st, NULL, 0, v1));
	assert_true(prof_add_sample(&p, st, NULL, 0, v2));
	assert_false(prof_add_sample(&p, st, NULL, 0, bad));
	assert_int_equal(p.nr_samples, 1);
	assert_int_equal(p.nr_values, 2);
	assert_int_equal(prof_sample_value(&p, &p.samples[0], 0), 0);
	assert_int_equal(prof_sample_value(&p, &p.samples[0], 1), 0);
	assert_int_equal(prof_sample_value(&p, &p.samples[0], 2), 4);
	assert_int_equal(prof_sample_value(&p, &p.samples[0], 3), 4000);
	/* too late once samples exist */
	assert_false(prof_set_value_types(&p, used));
	prof_release(&p);
}

/* a model with stacks already takes none */
static void test_adopt_stacks_refused(void **state)
{
	struct prof p;
	const uint32_t one[1] = { 1 };
	uint32_t pool[2] = { 1, 2 }, offs[1] = { 0 };

	(void)state;
	prof_init(&p);
	assert_int_equal(prof_stack(&p, one, 1), 0);
	assert_false(prof_adopt_stacks(&p, pool, 2, 2, offs, 1, 1, NULL));
	prof_release(&p);
}

static void test_sample_label_sets(void **state)
{
	struct prof a, b;
	struct prof_label l[3][2];
	const uint32_t n[3] = { 2, 1, 2 };
	uint32_t place[3];
	(void)state;

	prof_init(&a);
	prof_init(&b);
	a.nr_types = b.nr_types = 1;
	memset(l, 0, sizeof(l));
	l[0][0].key = l[1][0].key = l[2][0].key = 1;
	l[0][0].num = l[1][0].num = l[2][0].num = 42; /* list 1 is list 0's prefix */
	l[0][1].key = l[2][1].key = 2;
	l[0][1].num = 7;
	l[2][1].num = 8;
	for (uint32_t i = 0; i < 3; i++)
		place[i] = prof_label_set(&b, l[i], n[i]);
	assert_int_not_equal(place[0], place[1]);
	assert_int_not_equal(place[0], place[2]);
	assert_int_not_equal(place[1], place[2]);
	assert_int_equal(prof_label_set(&b, l[0], 2), place[0]);
	for (int64_t round = 1; round <= 3; round++) {
		for (uint32_t stack = 0; stack < 4; stack++) {
			for (uint32_t i = 0; i < 3; i++) {
				int64_t v = round * 100 + stack * 10 + i;

				assert_true(prof_add_sample(&a, stack, l[i], n[i], &v));
				assert_true(prof_add_sample_set(&b, stack, place[i], n[i], &v));
			}
		}
	}
	assert_int_equal(a.nr_samples, 12);
	assert_int_equal(b.nr_samples, 12);
	assert_int_equal(a.nr_labels, b.nr_labels);
	assert_memory_equal(a.labels, b.labels, a.nr_labels * sizeof(*a.labels));
	for (size_t i = 0; i < 12; i++) {
		assert_int_equal(a.samples[i].stack, b.samples[i].stack);
		assert_int_equal(a.samples[i].first_label, b.samples[i].first_label);
		assert_int_equal(a.samples[i].nr_labels, b.samples[i].nr_labels);
		assert_int_equal(prof_sample_value(&a, &a.samples[i], 0), prof_sample_value(&b, &b.samples[i], 0));
		/* 100 + 200 + 300 plus three times stack * 10 + list */
		assert_int_equal(prof_sample_value(&b, &b.samples[i], 0),
				 600 + 3 * (int64_t)(b.samples[i].stack * 10 + i % 3));
	}
	prof_release(&a);
	prof_release(&b);
}

/* ---- conv symbolize's reader and rewriter (pprofedit) against hostile profiles ---- */

static void pb_varint(struct dbuf *b, uint64_t v)
{
	while (v >= 0x80) {
		dbuf_putc(b, (char)(v | 0x80));
		v >>= 7;
	}
	dbuf_putc(b, (char)v);
}

/* A profile of one function (id fid), one location without lines, and the strings "" and "f". */
static void edit_profile(struct dbuf *b, uint64_t fid)
{
	struct dbuf m;

	dbuf_init(&m, 0);
	pb_varint(&m, 1 << 3);
	pb_varint(&m, 1); /* Location.id */
	pb_varint(&m, 3 << 3);
	pb_varint(&m, 0x1000); /* address */
	pb_varint(b, 4 << 3 | 2);
	pb_varint(b, m.len);
	dbuf_append(b, m.data, m.len);
	dbuf_reset(&m);
	pb_varint(&m, 1 << 3);
	pb_varint(&m, fid); /* Function.id */
	pb_varint(&m, 2 << 3);
	pb_varint(&m, 1);
	pb_varint(b, 5 << 3 | 2);
	pb_varint(b, m.len);
	dbuf_append(b, m.data, m.len);
	dbuf_append(b, "\x32\x00\x32\x01" "f", 5);
	dbuf_release(&m);
}

static void test_edit_ids_never_wrap(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		uint64_t fid = k ? UINT64_MAX - 1 : UINT64_MAX;
		struct ppe_profile p, q;
		struct ppe_edit e;
		struct ppe_new_function nf = { "g", "g", "g.c", 0 };
		struct ppe_new_line nl = { 0, 3, 0 };
		struct conv_diag d;
		struct dbuf b, out;

		dbuf_init(&b, 0);
		dbuf_init(&out, 0);
		edit_profile(&b, fid);
		assert_int_equal(ppe_parse(&p, b.data, b.len, (size_t)1 << 30, NULL), CONV_E_OK);
		assert_true(p.max_function_id == fid);
		assert_true(ppe_edit_init(&e, &p));
		e.functions = &nf;
		e.nr_functions = 1;
		e.lines = &nl;
		e.nr_lines = 1;
		e.loc_nr[0] = 1;
		memset(&d, 0, sizeof(d));
		if (!k) {
			/* the new id would be 2^64 = 0, the id pprof reserves */
			assert_int_equal(ppe_edit_fits(&p, &e, &d), CONV_E_LIMIT);
			assert_non_null(strstr(d.msg, "no room above it"));
			assert_int_equal(ppe_write(&p, &e, false, &out), CONV_E_LIMIT);
		} else {
			assert_int_equal(ppe_edit_fits(&p, &e, &d), CONV_E_OK);
			assert_int_equal(ppe_write(&p, &e, false, &out), CONV_E_OK);
			assert_int_equal(ppe_parse(&q, out.data, out.len, (size_t)1 << 30, NULL), CONV_E_OK);
			assert_int_equal(q.nr_functions, 2);
			assert_true(q.max_function_id == UINT64_MAX);
			assert_true(q.lines[q.locations[0].first_line].function_id == UINT64_MAX);
			ppe_release(&q);
		}
		e.functions = NULL;
		e.lines = NULL;
		ppe_edit_release(&e);
		ppe_release(&p);
		dbuf_release(&b);
		dbuf_release(&out);
	}
}

static void test_inflate_cap(void **state)
{
	(void)state;
	assert_true(ppe_inflate_cap(1000, (size_t)4 << 30) == PPE_INFLATE_FLOOR);
	assert_true(ppe_inflate_cap((size_t)100 << 20, (size_t)4 << 30) == ((size_t)100 << 20) * PPE_INFLATE_RATIO);
	assert_true(ppe_inflate_cap((size_t)1 << 30, (size_t)4 << 30) == (size_t)4 << 30);
	assert_true(ppe_inflate_cap(SIZE_MAX / 2, SIZE_MAX) == SIZE_MAX);
}

/* 1 MiB past the floor of one string, gzipped: refused at the floor, with the inflation error. */
static void test_inflate_bomb(void **state)
{
	size_t n = PPE_INFLATE_FLOOR + ((size_t)1 << 20), cap = compressBound(n) + 64;
	uint8_t *raw = calloc(n + 16, 1), *gz = malloc(cap);
	struct ppe_profile p;
	struct conv_diag d;
	z_stream z;
	size_t h = 0;
	(void)state;

	assert_non_null(raw);
	assert_non_null(gz);
	raw[h++] = 0x32;
	raw[h++] = 0;
	raw[h++] = 0x32;
	for (size_t v = n - 16;; v >>= 7) {
		raw[h++] = (uint8_t)(v < 0x80 ? v : (v & 0x7f) | 0x80);
		if (v < 0x80)
			break;
	}
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = raw;
	z.avail_in = (uInt)(h + n - 16);
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	memset(&d, 0, sizeof(d));
	assert_int_equal(ppe_parse(&p, gz, z.total_out, (size_t)4 << 30, &d), CONV_E_LIMIT);
	assert_non_null(strstr(d.msg, "inflates to more than"));
	deflateEnd(&z);
	free(raw);
	free(gz);
}

/* Empty strings (two bytes each, sixteen in the table): refused for the tables' size. */
static void test_tables_bounded(void **state)
{
	size_t n = (size_t)40 << 20;
	uint8_t *raw = malloc(n);
	struct ppe_profile p;
	struct conv_diag d;
	(void)state;

	assert_non_null(raw);
	for (size_t i = 0; i < n; i += 2) {
		raw[i] = 0x32;
		raw[i + 1] = 0;
	}
	memset(&d, 0, sizeof(d));
	assert_int_equal(ppe_parse(&p, raw, n, (size_t)4 << 30, &d), CONV_E_LIMIT);
	assert_non_null(strstr(d.msg, "tables would take"));
	/* a tenth of that is within the floor */
	assert_int_equal(ppe_parse(&p, raw, n / 10, (size_t)4 << 30, NULL), CONV_E_OK);
	assert_true(p.nr_strs == n / 20);
	ppe_release(&p);
	free(raw);
}

/* p's pprof read back into the model (ppload_prof): CONV_E_OK, q filled; or the error. */
static enum conv_err read_back(const struct dbuf *pb, struct prof *q, struct conv_diag *d)
{
	struct ppe_profile pp;
	enum conv_err err;

	memset(d, 0, sizeof(*d));
	prof_init(q);
	err = ppe_parse(&pp, (const uint8_t *)pb->data, pb->len, (size_t)1 << 30, d);
	if (err)
		return err;
	err = ppload_prof(&pp, q, d);
	ppe_release(&pp);
	return err;
}

/*
 * A pprof conv wrote, read back (conv diff's pprof inputs): the same
 * model, so that writing it again gives the same bytes; the event of the
 * sample types, its samples and period; the comments' facts (which add
 * their strings).
 */
static void test_to_prof(void **state)
{
	struct prof p, q;
	struct dbuf a, b;
	struct conv_diag d;
	const struct prof_line *ln;

	(void)state;
	build(&p);
	p.period_type = p.types[1];
	p.period = 1000;
	p.time_nanos = 1700000000000000000;
	p.duration_nanos = 5000;
	dbuf_init(&a, 0);
	dbuf_init(&b, 0);
	assert_int_equal(pprof_encode_gz(&p, -1, &a), CONV_E_OK);
	assert_int_equal(read_back(&a, &q, &d), CONV_E_OK);
	assert_int_equal(pprof_encode_gz(&q, -1, &b), CONV_E_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	prof_release(&q);
	dbuf_reset(&a);
	prof_add_comment(&p, "hostname h1");
	prof_add_comment(&p, "perf version 6.1");
	assert_int_equal(pprof_encode_gz(&p, -1, &a), CONV_E_OK);
	assert_int_equal(read_back(&a, &q, &d), CONV_E_OK);
	assert_int_equal(q.nr_types, 2);
	assert_int_equal(q.nr_events_desc, 1);
	assert_string_equal(strtab_get(&q.strs, q.events_desc[0].name), "cpu-clock");
	assert_true(q.events_desc[0].clock);
	assert_false(q.events_desc[0].offcpu);
	assert_int_equal(q.events_desc[0].samples, 6);
	assert_int_equal(q.events_desc[0].period, 1000);
	assert_int_equal(q.primary_event, 0);
	assert_int_equal(q.nr_mappings, 1);
	assert_int_equal(q.mappings[0].kind, PROF_MAP_FILE);
	assert_string_equal(strtab_get(&q.strs, q.mappings[0].build_id), "abcd");
	assert_int_equal(q.nr_locations, 2);
	assert_int_equal(q.locations[0].nr_lines, 2);
	ln = &q.lines[q.locations[0].first_line];
	assert_string_equal(strtab_get(&q.strs, q.functions[ln[0].function].name), "inner");
	assert_int_equal(ln[1].line, 20);
	assert_int_equal(q.locations[1].mapping, PROF_NONE);
	assert_int_equal(q.nr_samples, 1);
	assert_int_equal(prof_sample_value(&q, &q.samples[0], 1), 6000);
	assert_string_equal(strtab_get(&q.strs, q.sys.hostname), "h1");
	assert_string_equal(strtab_get(&q.strs, q.sys.perf_version), "6.1");
	assert_int_equal(q.nr_comments, 2);
	prof_release(&p);
	prof_release(&q);
	dbuf_release(&a);
	dbuf_release(&b);
}

/* prof_split_inlines: each inline level its own location, in the stack in its place, the samples as they were. */
static void test_split_inlines(void **state)
{
	struct prof p;
	uint32_t n;
	const uint32_t *locs;

	(void)state;
	build(&p); /* a stack of: inner inlined into outer (one location), then an unmapped one */
	assert_true(prof_split_inlines(&p));
	assert_int_equal(p.nr_locations, 3);
	locs = prof_stack_locs(&p, p.samples[0].stack, &n);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < 2; i++)
		assert_int_equal(p.locations[locs[i]].nr_lines, 1);
	assert_string_equal(strtab_get(&p.strs, p.functions[p.lines[p.locations[locs[0]].first_line].function].name),
			    "inner");
	assert_int_equal(p.lines[p.locations[locs[0]].first_line].line, 10);
	assert_string_equal(strtab_get(&p.strs, p.functions[p.lines[p.locations[locs[1]].first_line].function].name),
			    "outer");
	assert_int_equal(p.lines[p.locations[locs[1]].first_line].line, 20);
	assert_int_equal(p.locations[locs[1]].address, 0x400123);
	assert_int_equal(p.locations[locs[1]].mapping, 0);
	assert_int_equal(p.locations[locs[2]].mapping, PROF_NONE);
	assert_int_equal(prof_sample_value(&p, &p.samples[0], 0), 6);
	/* again: nothing left to split */
	assert_true(prof_split_inlines(&p));
	assert_int_equal(p.nr_locations, 3);
	prof_release(&p);
}

/* A Sample message of location ids and values (packed), appended to b. */
static void sample_msg(struct dbuf *b, const uint64_t *locs, size_t nl, const uint64_t *vals, size_t nv)
{
	struct dbuf m, pk;

	dbuf_init(&m, 0);
	dbuf_init(&pk, 0);
	for (size_t i = 0; i < nl; i++)
		pb_varint(&pk, locs[i]);
	pb_varint(&m, 1 << 3 | 2);
	pb_varint(&m, pk.len);
	dbuf_append(&m, pk.data, pk.len);
	dbuf_reset(&pk);
	for (size_t i = 0; i < nv; i++)
		pb_varint(&pk, vals[i]);
	pb_varint(&m, 2 << 3 | 2);
	pb_varint(&m, pk.len);
	dbuf_append(&m, pk.data, pk.len);
	pb_varint(b, 2 << 3 | 2);
	pb_varint(b, m.len);
	dbuf_append(b, m.data, m.len);
	dbuf_release(&m);
	dbuf_release(&pk);
}

/* A ValueType of string indexes (type, unit), appended to b. */
static void type_msg(struct dbuf *b, uint64_t type, uint64_t unit)
{
	pb_varint(b, 1 << 3 | 2);
	pb_varint(b, 4);
	pb_varint(b, 1 << 3);
	pb_varint(b, type);
	pb_varint(b, 2 << 3);
	pb_varint(b, unit);
}

/* What a pprof must hold for the model, each refused with what is wrong (CONV_E_FORMAT). */
static void test_to_prof_refused(void **state)
{
	static const char *const want[] = { "location 9", "2 values for 4", "string 7", "3 sample types" };
	struct prof q;
	struct conv_diag d;

	(void)state;
	for (int k = 0; k < 4; k++) {
		struct dbuf b;
		uint64_t locs[1] = { k == 0 ? 9 : 1 }, vals[2] = { 1, 100 };

		dbuf_init(&b, 0);
		edit_profile(&b, 1); /* location 1, function 1, strings "" and "f" */
		type_msg(&b, 1, k == 2 ? 7 : 1);
		type_msg(&b, 1, 1);
		if (k == 1) {
			type_msg(&b, 1, 1);
			type_msg(&b, 1, 1);
		}
		if (k == 3)
			type_msg(&b, 1, 1);
		sample_msg(&b, locs, 1, vals, 2);
		assert_int_equal(read_back(&b, &q, &d), CONV_E_FORMAT);
		if (!strstr(d.msg, want[k]))
			fail_msg("case %d: '%s' does not say '%s'", k, d.msg, want[k]);
		prof_release(&q);
		dbuf_release(&b);
	}
	/* the same profile, well formed: read */
	{
		struct dbuf b;
		uint64_t locs[1] = { 1 }, vals[2] = { 1, 100 };

		dbuf_init(&b, 0);
		edit_profile(&b, 1);
		type_msg(&b, 1, 1);
		type_msg(&b, 1, 1);
		sample_msg(&b, locs, 1, vals, 2);
		assert_int_equal(read_back(&b, &q, &d), CONV_E_OK);
		assert_int_equal(q.nr_samples, 1);
		assert_int_equal(q.events_desc[0].samples, 1);
		prof_release(&q);
		dbuf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_raw),
		cmocka_unit_test(test_gzip_deterministic),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_sample_label_sets),
		cmocka_unit_test(test_adopt_stacks),
		cmocka_unit_test(test_adopt_stacks_refused),
		cmocka_unit_test(test_value_types),
		cmocka_unit_test(test_edit_ids_never_wrap),
		cmocka_unit_test(test_inflate_cap),
		cmocka_unit_test(test_inflate_bomb),
		cmocka_unit_test(test_tables_bounded),
		cmocka_unit_test(test_to_prof),
		cmocka_unit_test(test_to_prof_refused),
		cmocka_unit_test(test_split_inlines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
