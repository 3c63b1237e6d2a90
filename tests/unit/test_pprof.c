/*
 * pprof encoding checked by an independent decoder: a small hand-built
 * profile is encoded and decoded with `protoc --decode_raw`, whose output
 * names fields by number; the expected text was worked out by hand from
 * profile.proto. Also: gzip output inflates back to the same bytes, and
 * equal profiles give equal bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/dbuf.h"
#include "model/profile.h"
#include "pprofwriter/pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

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
	uLongf blen = sizeof(back);
	z_stream z;
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
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz.data;
	z.avail_in = (uInt)gz.len;
	z.next_out = back;
	z.avail_out = (uInt)blen;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, raw.len);
	assert_memory_equal(back, raw.data, raw.len);
	inflateEnd(&z);
	dbuf_release(&raw);
	dbuf_release(&gz);
	dbuf_release(&gz2);
	prof_release(&p);
	prof_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_raw),
		cmocka_unit_test(test_gzip_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
