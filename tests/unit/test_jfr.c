/*
 * JFR writer, checked on the bytes: a small hand-built profile with sample
 * events is written and walked with a decoder of the chunk layout written
 * here from the format notes (jfr-format.md), independently of the writer:
 * exact chunk sizes, record sizes that add up, the header fields readers
 * insist on, event counts per type, chunk rotation with unique start times,
 * 32-bit fields as unsigned 32-bit varints, UTF-8 sanitizing, the remote
 * symbolication and Java method forms in the symbol pool. The JDK's own
 * reader checks the same outputs end to end (tests/jfr/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jfrwriter/jfr.h"
#include "core/jfrenc.h"
#include "model/events.h"
#include "model/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t varint(const unsigned char *p, size_t len, size_t *pos)
{
	uint64_t v = 0;

	for (int i = 0; i < 9 && *pos < len; i++) {
		unsigned char c = p[(*pos)++];

		if (i == 8)
			return v | (uint64_t)c << 56;
		v |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80))
			return v;
	}
	return v;
}

/* Builds: one native location with an inline pair, a kernel one, a remote one, a JIT one. */
static void build(struct prof *p, int nevents, const char *fname)
{
	struct prof_mapping m;
	struct prof_line ln[2];
	uint32_t locs[4], stack;
	struct prof_thread t;
	struct prof_event ev;

	prof_init(p);
	p->nr_types = 4;
	p->types = calloc(4, sizeof(*p->types));
	p->events_desc = calloc(2, sizeof(*p->events_desc));
	p->nr_events_desc = 2;
	p->events_desc[0].name = p->events_desc[0].full_name = prof_str(p, "cpu-clock");
	p->events_desc[0].clock = true;
	p->events_desc[0].frequency = 999;
	p->events_desc[1].name = p->events_desc[1].full_name = prof_str(p, "cycles");
	p->events_desc[1].period = 100000;
	p->primary_event = 0;
	p->sys.first_time = 1000;
	p->sys.last_time = 1000 + (uint64_t)nevents * 10;
	p->sys.wall_known = true;
	p->time_nanos = 1700000000000000000;

	memset(&m, 0, sizeof(m));
	m.start = 0x400000;
	m.limit = 0x500000;
	m.filename = prof_str(p, "/usr/bin/prog");
	m.build_id = prof_str(p, "00112233445566778899aabbccddeeff00112233");
	m.kind = PROF_MAP_FILE;
	m.has_load_bias = true;
	m.load_bias = 0x400000;
	prof_add_mapping(p, &m); /* 0 */
	m.filename = prof_str(p, "[kernel.kallsyms]");
	m.build_id = 0;
	m.kind = PROF_MAP_KERNEL;
	prof_add_mapping(p, &m); /* 1 */
	m.filename = prof_str(p, "[JIT] tid 7");
	m.kind = PROF_MAP_JIT;
	prof_add_mapping(p, &m); /* 2 */

	ln[0].function = prof_function(p, prof_str(p, fname), prof_str(p, fname), 0, 0);
	ln[0].line = 10;
	ln[0].column = 0;
	ln[1].function = prof_function(p, prof_str(p, "outer"), prof_str(p, "outer"), 0, 0);
	ln[1].line = -1; /* unknown: written as 0 */
	ln[1].column = 0;
	locs[0] = prof_location(p, 0, 0x401000, ln, 2);
	ln[0].function = prof_function(p, prof_str(p, "do_syscall_64"), prof_str(p, "do_syscall_64"), 0, 0);
	ln[0].line = 0;
	locs[1] = prof_location(p, 1, 0xffffffff81000000ull, ln, 1);
	locs[2] = prof_location(p, 0, 0x402345, NULL, 0);
	p->locations[locs[2]].has_elf_addr = true;
	p->locations[locs[2]].elf_addr = 0x2345;
	ln[0].function = prof_function(p, prof_str(p, "java.lang.String java.util.HashMap.get(java.lang.Object, int[])"),
				       prof_str(p, "x"), 0, 0);
	locs[3] = prof_location(p, 2, 0x7f0000001000ull, ln, 1);
	stack = prof_stack(p, locs, 4);
	prof_stack_set_truncated(p, stack);

	memset(&t, 0, sizeof(t));
	t.tid = 7;
	t.pid = 7;
	t.name = prof_str(p, "main");
	prof_add_thread(p, &t);

	assert_int_equal(prof_events_open(&p->events, NULL, NULL), CONV_E_OK);
	for (int i = 0; i < nevents; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.time = 1000 + (uint64_t)i * 10;
		ev.period = 1001001;
		ev.stack = stack;
		ev.thread = 0;
		ev.cpu = i % 3 == 0 ? UINT32_MAX : 1;
		ev.event = (uint32_t)(i % 2);
		prof_events_add(p->events, &ev);
	}
	assert_int_equal(prof_events_finish(p->events, NULL), CONV_E_OK);
}

struct out {
	unsigned char *data;
	size_t len;
};

static void write_jfr(const struct prof *p, uint64_t chunk_size, struct out *o, struct jfr_stats *st)
{
	FILE *f = tmpfile();
	long n;

	assert_non_null(f);
	struct jfr_opts jo = { .chunk_size = chunk_size };
	assert_int_equal(jfr_write(p, &jo, fileno(f), st, NULL), CONV_E_OK);
	n = lseek(fileno(f), 0, SEEK_END);
	assert_true(n > 68);
	o->len = (size_t)n;
	o->data = malloc(o->len);
	assert_int_equal(pread(fileno(f), o->data, o->len, 0), (ssize_t)o->len);
	fclose(f);
}

struct walk {
	int chunks;
	uint64_t events_by_type[1024];
	uint64_t last_start_nanos;
	int last_flag_chunks; /* chunks with the final flag */
	bool last_chunk_final;
};

/* Walks every chunk and record, checking the layout; counts events. */
static void walk(const struct out *o, struct walk *w)
{
	size_t off = 0;

	memset(w, 0, sizeof(*w));
	while (off < o->len) {
		const unsigned char *h = o->data + off;
		uint64_t size, cp, meta, nanos, flags;
		size_t pos = 68;
		bool saw_cp = false, saw_meta = false;

		assert_true(o->len - off >= 68);
		assert_memory_equal(h, "FLR\0", 4);
		assert_int_equal(be(h + 4, 2), 2);
		size = be(h + 8, 8);
		cp = be(h + 16, 8);
		meta = be(h + 24, 8);
		nanos = be(h + 32, 8);
		assert_int_equal(be(h + 56, 8), 1000000000u);
		assert_int_equal(h[64], 0); /* complete: 0xff makes the JDK wait forever */
		flags = be(h + 66, 2);
		assert_true(flags & 1); /* varint integers */
		assert_true(size <= o->len - off);
		assert_true(cp >= 68 && cp < size);
		assert_true(meta >= 68 && meta < size);
		if (w->chunks)
			assert_true(nanos > w->last_start_nanos); /* JMC drops equal start times */
		w->last_start_nanos = nanos;
		w->last_flag_chunks += (flags & 2) != 0;
		while (pos < size) {
			size_t rec = pos;
			uint64_t rsize = varint(h, size, &pos), type = varint(h, size, &pos);

			assert_true(rsize > 0); /* size 0 hangs jfr summary */
			assert_true(rsize <= size - rec);
			if (rec == cp) {
				assert_int_equal(type, 1);
				saw_cp = true;
			} else if (rec == meta) {
				assert_int_equal(type, 0);
				saw_meta = true;
			} else if (type < 1024) {
				w->events_by_type[type]++;
			}
			pos = rec + rsize;
		}
		assert_int_equal(pos, size); /* records fill the chunk exactly */
		assert_true(saw_cp && saw_meta);
		off += size;
		w->chunks++;
		w->last_chunk_final = (flags & 2) != 0;
	}
	assert_int_equal(off, o->len);
}

static bool contains(const struct out *o, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i + n <= o->len; i++)
		if (!memcmp(o->data + i, s, n))
			return true;
	return false;
}

/* The same for bytes that may hold a 0. */
static bool contains_n(const struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i + n <= o->len; i++)
		if (!memcmp(o->data + i, s, n))
			return true;
	return false;
}

static void test_one_chunk(void **state)
{
	struct prof p;
	struct out o;
	struct walk w;
	struct jfr_stats st;

	(void)state;
	build(&p, 10, "inner");
	write_jfr(&p, 0, &o, &st);
	walk(&o, &w);
	assert_int_equal(w.chunks, 1);
	assert_int_equal(st.chunks, 1);
	assert_int_equal(st.events, 10);
	assert_int_equal(st.bytes, o.len);
	assert_int_equal(w.events_by_type[100], 5); /* jdk.ExecutionSample: cpu-clock */
	assert_int_equal(w.events_by_type[1000], 5); /* perf.Cycles */
	assert_true(w.last_chunk_final);
	assert_true(contains(&o, "perf.Cycles"));
	assert_true(contains(&o, "jdk.ExecutionSample"));
	/* the remote symbolication form */
	assert_true(contains(&o, "00112233445566778899aabbccddeeff00112233"));
	assert_true(contains(&o, "<remote>"));
	assert_true(contains(&o, "(L0x2345;)L;"));
	assert_int_equal(st.remote_frames, 1);
	/* the Java method from a HotSpot perf-map name */
	assert_true(contains(&o, "java/util/HashMap"));
	assert_true(contains(&o, "(Ljava/lang/Object;[I)Ljava/lang/String;"));
	assert_true(contains(&o, "java/util")); /* its package */
	/* kernel frames' descriptor; the library's short name as the class */
	assert_true(contains(&o, "(Lk;)L;"));
	assert_true(contains(&o, "\003\004prog"));
	/* cpu -1 as an unsigned 32-bit varint, never a 9-byte negative */
	assert_true(contains(&o, "\xff\xff\xff\xff\x0f"));
	/*
	 * jdk.ExecutionSample (size 7, type 100, time 1000, thread, stack 1,
	 * state 0): the thread's key is its tid, 7
	 */
	assert_true(contains_n(&o, "\x07\x64\xe8\x07\x07\x01\x00", 7));
	/*
	 * jdk.ActiveSetting in JDK 17's layout (type 101, time 1000, duration 0,
	 * eventThread 0, stackTrace 0, id 100, "event"): async-profiler's
	 * converter up to 2.10 reads it field by field in this order
	 */
	assert_true(contains_n(&o, "\x65\xe8\x07\x00\x00\x00\x64\x03\x05" "event", 14));
	free(o.data);
	prof_release(&p);
}

static void test_chunks_rotate(void **state)
{
	struct prof p;
	struct out o;
	struct walk w;
	struct jfr_stats st;

	(void)state;
	build(&p, 400, "inner");
	write_jfr(&p, 512, &o, &st);
	walk(&o, &w);
	assert_true(w.chunks >= 3);
	assert_int_equal((uint64_t)w.chunks, st.chunks);
	assert_int_equal(w.events_by_type[100] + w.events_by_type[1000], 400);
	/* every chunk stands alone: its own settings; only the last is final */
	/* cpu-clock: event, frequency, interval; cycles: event, interval */
	assert_int_equal(w.events_by_type[101], 5 * (uint64_t)w.chunks);
	assert_int_equal(w.last_flag_chunks, 1);
	assert_true(w.last_chunk_final);
	free(o.data);
	prof_release(&p);
}

static void test_same_bytes(void **state)
{
	struct prof p;
	struct out a, b;
	struct jfr_stats st;

	(void)state;
	build(&p, 50, "inner");
	write_jfr(&p, 0, &a, &st);
	write_jfr(&p, 0, &b, &st);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	free(a.data);
	free(b.data);
	prof_release(&p);
}

static void test_invalid_utf8(void **state)
{
	struct prof p;
	struct out o;
	struct walk w;
	struct jfr_stats st;

	(void)state;
	build(&p, 2, "bad\xff\xfename");
	write_jfr(&p, 0, &o, &st);
	walk(&o, &w);
	assert_false(contains(&o, "bad\xff\xfename"));
	assert_true(contains(&o, "bad??name"));
	free(o.data);
	prof_release(&p);
}

/* The one string encoder of both JFR writers (jfr.c and jfredit's rewrite). */
static void test_put_string(void **state)
{
	static const unsigned char valid[] = { 3, 4, 'n', 0xc3, 0xa9, 'e' };
	static const unsigned char bad[] = { 3, 5, 'a', '?', '?', 'b', '?' };
	struct dbuf b;

	(void)state;
	dbuf_init(&b, 0);
	jfr_put_string(&b, "n\xc3\xa9" "e");
	assert_int_equal(b.len, sizeof(valid));
	assert_memory_equal(b.data, valid, sizeof(valid));
	dbuf_reset(&b);
	jfr_put_string(&b, "a\xff\xfe" "b\xc3");
	assert_int_equal(b.len, sizeof(bad));
	assert_memory_equal(b.data, bad, sizeof(bad));
	dbuf_reset(&b);
	/* the same rule as JSON's (core/utf8.h): a surrogate, an overlong form, past U+10FFFF */
	for (int i = 0; i < 3; i++) {
		static const char *const s[] = { "\xed\xa0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80" };
		static const unsigned char q[] = { 3, 3, '?', '?', '?' }, q4[] = { 3, 4, '?', '?', '?', '?' };

		dbuf_reset(&b);
		jfr_put_string(&b, s[i]);
		assert_int_equal(b.len, i < 2 ? sizeof(q) : sizeof(q4));
		assert_memory_equal(b.data, i < 2 ? q : q4, b.len);
	}
	dbuf_reset(&b);
	jfr_put_string(&b, NULL);
	assert_int_equal(b.len, 1);
	assert_int_equal(b.data[0], 0);
	dbuf_release(&b);
}

/*
 * Thread keys: two model threads with one tid (an exec: the launcher's
 * generation, then the program's) are one pool entry under the tid, named
 * as the later one; a later thread of that tid under another pid does not
 * rename it (powerd, tid 0, beside the idle task); the tids that cannot be
 * keys (0, JFR's null reference; perf's -1, above INT32_MAX where
 * async-profiler reads 32-bit ints) take the free keys from INT32_MAX down,
 * skipping a thread whose tid is INT32_MAX.
 */
static void test_thread_keys(void **state)
{
	static const struct {
		uint32_t tid, pid;
		const char *name;
	} th[] = {{7, 7, "launcher"}, {7, 7, "program"}, {0, 0, "swapper"},
		  {UINT32_MAX, UINT32_MAX, "neg"}, {INT32_MAX, INT32_MAX, "big"},
		  {0, 1430, "powerd"}};
	struct prof p;
	struct out o;
	struct walk w;
	struct jfr_stats st;
	struct prof_thread t;
	struct prof_event ev;

	(void)state;
	build(&p, 0, "inner");
	p.nr_threads = 0;
	for (uint32_t i = 0; i < 6; i++) {
		memset(&t, 0, sizeof(t));
		t.tid = th[i].tid;
		t.pid = th[i].pid;
		t.name = prof_str(&p, th[i].name);
		prof_add_thread(&p, &t);
	}
	prof_events_free(p.events);
	p.events = NULL;
	assert_int_equal(prof_events_open(&p.events, NULL, NULL), CONV_E_OK);
	for (uint32_t i = 0; i < 6; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.time = 1000 + i;
		ev.stack = 0;
		ev.thread = i;
		prof_events_add(p.events, &ev);
	}
	assert_int_equal(prof_events_finish(p.events, NULL), CONV_E_OK);
	write_jfr(&p, 0, &o, &st);
	walk(&o, &w);
	assert_int_equal(w.events_by_type[100], 6);
	/* pool entries: key | osName | osThreadId | javaName null | javaThreadId 0 */
	assert_true(contains_n(&o, "\x07\x03\x07program\x07\x00\x00", 13));
	assert_false(contains(&o, "launcher"));
	assert_false(contains(&o, "powerd"));
	assert_true(contains_n(&o, "\xff\xff\xff\xff\x07\x03\x03" "big\xff\xff\xff\xff\x07\x00\x00",
			       17));
	assert_true(contains_n(&o, "\xfe\xff\xff\xff\x07\x03\x07swapper\x00\x00\x00", 17));
	assert_true(contains_n(&o, "\xfd\xff\xff\xff\x07\x03\x03neg\xff\xff\xff\xff\x0f\x00\x00",
			       17));
	/* jdk.ExecutionSample: size | 100 | time | thread key | stack 1 | state 0 */
	assert_true(contains_n(&o, "\x07\x64\xe8\x07\x07\x01\x00", 7));
	assert_true(contains_n(&o, "\x07\x64\xe9\x07\x07\x01\x00", 7));
	assert_true(contains_n(&o, "\x0b\x64\xea\x07\xfe\xff\xff\xff\x07\x01\x00", 11));
	assert_true(contains_n(&o, "\x0b\x64\xeb\x07\xfd\xff\xff\xff\x07\x01\x00", 11));
	assert_true(contains_n(&o, "\x0b\x64\xec\x07\xff\xff\xff\xff\x07\x01\x00", 11));
	assert_true(contains_n(&o, "\x0b\x64\xed\x07\xfe\xff\xff\xff\x07\x01\x00", 11));
	free(o.data);
	prof_release(&p);
}

static void test_no_events(void **state)
{
	struct prof p;
	struct out o;
	struct walk w;
	struct jfr_stats st;

	(void)state;
	build(&p, 0, "inner");
	write_jfr(&p, 0, &o, &st);
	walk(&o, &w);
	assert_int_equal(w.chunks, 1);
	assert_int_equal(w.events_by_type[100], 0);
	free(o.data);
	prof_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_chunk),
		cmocka_unit_test(test_chunks_rotate),
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_put_string),
		cmocka_unit_test(test_thread_keys),
		cmocka_unit_test(test_no_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
