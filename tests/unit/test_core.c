/* Unit tests of core/: cursor bounds and byte order, dbuf caps, arena, JSON escaping, ropen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/arena.h"
#include "core/cursor.h"
#include "core/dbuf.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/vec.h"
#include "core/strtab.h"
#include "core/err.h"
#include "core/json.h"
#include "core/io.h"
#include "core/ropen.h"

#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static void test_cursor_reads(void **state)
{
	static const uint8_t b[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct cur c;
	(void)state;

	cur_init(&c, b, sizeof(b), false);
	assert_int_equal(cur_u8(&c), 1);
	assert_int_equal(cur_u16(&c), 0x0302);
	assert_int_equal(cur_u32(&c), 0x07060504);
	assert_true(cur_ok(&c));
	assert_int_equal(cur_remaining(&c), 3);
	/* a read past the end returns 0 and sticks */
	assert_int_equal(cur_u32(&c), 0);
	assert_false(cur_ok(&c));
	assert_int_equal(cur_u8(&c), 0);
	assert_int_equal(cur_remaining(&c), 0);

	cur_init(&c, b, sizeof(b), true);
	assert_int_equal(cur_u16(&c), 0x0102);
	assert_int_equal(cur_u64(&c), 0x030405060708090aull);
	assert_true(cur_ok(&c));
}

/* LEB128 values from the DWARF 5 standard's examples (figures 7.3.3 and 7.3.4), the 64-bit edges, and failures. */
static void test_cursor_leb128(void **state)
{
	static const uint8_t u[] = { 2, 0x7f, 0x80, 1, 0x81, 1, 0x82, 1, 0xb9, 0x64 };
	static const uint8_t sl[] = { 2, 0x7e, 0xff, 0, 0x81, 0x7f, 0x80, 1, 0x80, 0x7f };
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1 };
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2 };
	static const uint8_t smin[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f };
	static const uint8_t cut[] = { 0x80, 0x80 };
	static const uint8_t str[] = { 'a', 'b', 0, 0, 'c' };
	static const uint64_t uw[] = { 2, 127, 128, 129, 130, 12857 };
	static const int64_t sw[] = { 2, -2, 127, -127, 128, -128 };
	struct cur c;
	size_t len = 99;
	(void)state;

	cur_init(&c, u, sizeof(u), false);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(cur_uleb128(&c), uw[i]);
	assert_true(cur_ok(&c));
	assert_int_equal(cur_remaining(&c), 0);
	cur_init(&c, sl, sizeof(sl), false);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(cur_sleb128(&c), sw[i]);
	assert_true(cur_ok(&c));
	cur_init(&c, max, sizeof(max), false);
	assert_true(cur_uleb128(&c) == UINT64_MAX && cur_ok(&c));
	cur_init(&c, over, sizeof(over), false); /* 65 bits */
	assert_int_equal(cur_uleb128(&c), 0);
	assert_false(cur_ok(&c));
	cur_init(&c, smin, sizeof(smin), false);
	assert_true(cur_sleb128(&c) == INT64_MIN && cur_ok(&c));
	cur_init(&c, cut, sizeof(cut), false); /* continuation bit set at the end */
	assert_int_equal(cur_uleb128(&c), 0);
	assert_false(cur_ok(&c));
	cur_init(&c, cut, sizeof(cut), false);
	assert_int_equal(cur_sleb128(&c), 0);
	assert_false(cur_ok(&c));

	cur_init(&c, str, sizeof(str), false);
	assert_string_equal(cur_cstr(&c, &len), "ab");
	assert_int_equal(len, 2);
	assert_string_equal(cur_cstr(&c, &len), "");
	assert_int_equal(len, 0);
	assert_null(cur_cstr(&c, NULL)); /* "c" has no NUL */
	assert_false(cur_ok(&c));
}

static void test_cursor_sub_and_strings(void **state)
{
	static const uint8_t b[] = { 'a', 'b', 0, 0, 'x', 'y', 'z', 'w', 9 };
	struct cur c, s;
	size_t len = 99;
	(void)state;

	cur_init(&c, b, sizeof(b), false);
	s = cur_sub(&c, 4);
	assert_string_equal(cur_str_rest(&s, &len), "ab");
	assert_int_equal(len, 2);
	/* no NUL inside the field: error, never a read past it */
	assert_null(cur_str_field(&c, 4, NULL));
	assert_false(cur_ok(&c));

	cur_init(&c, b, sizeof(b), false);
	s = cur_sub(&c, 100);
	assert_false(cur_ok(&s));
	assert_false(cur_ok(&c));
	assert_int_equal(cur_remaining(&s), 0);

	/* bounds written as n > len - pos: a huge n never wraps */
	cur_init(&c, b, sizeof(b), false);
	cur_u8(&c);
	assert_null(cur_view(&c, SIZE_MAX));
	assert_false(cur_ok(&c));
}

static void test_cursor_u64_array(void **state)
{
	uint8_t b[16];
	uint64_t out[2];
	struct cur c;
	(void)state;

	for (int i = 0; i < 16; i++)
		b[i] = (uint8_t)i;
	cur_init(&c, b, sizeof(b), true);
	cur_u64_array(&c, out, 2);
	assert_true(cur_ok(&c));
	assert_int_equal(out[0], 0x0001020304050607ull);
	assert_int_equal(out[1], 0x08090a0b0c0d0e0full);
	cur_init(&c, b, sizeof(b), false);
	cur_u64_array(&c, out, (SIZE_MAX / 8) + 2);
	assert_false(cur_ok(&c));
}

static void test_dbuf_cap(void **state)
{
	struct dbuf b;
	(void)state;

	dbuf_init(&b, 10);
	assert_true(dbuf_append(&b, "12345", 5));
	assert_true(dbuf_printf(&b, "%d", 1234));
	assert_false(dbuf_append(&b, "xx", 2));
	assert_true(b.err);
	assert_int_equal(b.len, 9);
	dbuf_consume(&b, 5);
	assert_memory_equal(b.data, "1234", 4);
	dbuf_release(&b);
}

static void test_arena(void **state)
{
	struct arena a;
	char *s;
	void *big;
	(void)state;

	arena_init(&a, 1u << 20);
	s = arena_strndup(&a, "hello world", 5);
	assert_string_equal(s, "hello");
	assert_int_equal(((uintptr_t)arena_alloc(&a, 3)) % 16, 0);
	big = arena_alloc(&a, 2u << 20); /* over the cap */
	assert_null(big);
	assert_null(arena_alloc_array(&a, SIZE_MAX / 2, 4));
	arena_release(&a);
}

static void test_json(void **state)
{
	struct dbuf b;
	struct json j;
	static const char bad[] = { 'a', (char)0xff, 'b', '"', '\n', (char)0xc3, (char)0xa9, 0 };
	(void)state;

	dbuf_init(&b, 0);
	json_init(&j, &b, false);
	json_obj_begin(&j);
	json_key(&j, "s");
	json_str(&j, bad);
	json_key(&j, "a");
	json_arr_begin(&j);
	json_u64(&j, 1);
	json_i64(&j, -2);
	json_null(&j);
	json_bool(&j, true);
	json_arr_end(&j);
	json_key(&j, "e");
	json_obj_begin(&j);
	json_obj_end(&j);
	json_obj_end(&j);
	dbuf_putc(&b, 0);
	assert_string_equal((const char *)b.data,
			    "{\"s\":\"a\\ufffdb\\\"\\n\xc3\xa9\",\"a\":[1,-2,null,true],\"e\":{}}");
	dbuf_release(&b);
}

static void test_errors(void **state)
{
	struct conv_diag d;
	(void)state;

	assert_string_equal(conv_strerror(CONV_E_OK), "success");
	assert_string_equal(conv_strerror((enum conv_err)9999), "unknown error");
	assert_int_equal(conv_fail(&d, CONV_E_FORMAT, 42, "bad %s", "thing"), CONV_E_FORMAT);
	assert_int_equal(d.offset, 42);
	assert_string_equal(d.msg, "bad thing");
	assert_int_equal(conv_fail(NULL, CONV_E_IO, 0, "x"), CONV_E_IO);
	for (int e = 0; e < CONV_E__COUNT; e++)
		assert_string_not_equal(conv_strerror((enum conv_err)e), "unknown error");
}

/* The hash map against a plain array: keys 0 and UINT64_MAX, replaces, growth, misses. */
static void test_hmap(void **state)
{
	struct hmap m;
	const uint32_t n = 200000;
	(void)state;

	hmap_init(&m);
	assert_null(hmap_get(&m, 5));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t key = i == 0 ? 0 : i == 1 ? UINT64_MAX : (uint64_t)i * 0x10001ull;

		assert_true(hmap_put(&m, key, i));
	}
	assert_int_equal(m.count, n);
	assert_true(m.count * 10 <= m.cap * 7);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t key = i == 0 ? 0 : i == 1 ? UINT64_MAX : (uint64_t)i * 0x10001ull;
		uint64_t *v = hmap_get(&m, key);

		assert_non_null(v);
		assert_int_equal(*v, i);
		assert_null(hmap_get(&m, key + 3)); /* never a key: i * 0x10001 + 3 */
	}
	/* a put on a present key replaces */
	assert_true(hmap_put(&m, 0, 77));
	assert_int_equal(*hmap_get(&m, 0), 77);
	assert_int_equal(m.count, n);
	hmap_release(&m);
	assert_null(hmap_get(&m, 0));
	assert_int_equal(m.count, 0);
}

/* Reserving makes room once: no growth while the reserved entries go in, and nothing is lost. */
/* A vector grows to what is asked, shrinks to what it holds, and is empty again after vec_free. */
static void test_vec(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_true(vec_reserve((void **)&v, &cap, 100, sizeof(*v)));
	assert_true(cap >= 100);
	for (uint32_t i = 0; i < 100; i++)
		v[i] = i;
	vec_shrink((void **)&v, &cap, 40, sizeof(*v));
	assert_int_equal(cap, 40);
	assert_int_equal(v[39], 39);
	vec_free((void **)&v, &cap);
	assert_null(v);
	assert_int_equal(cap, 0);
	assert_true(vec_reserve_exact((void **)&v, &cap, 7, sizeof(*v)));
	assert_int_equal(cap, 7);
	vec_free((void **)&v, &cap);
	vec_free((void **)&v, &cap); /* an empty vector may be freed again */
	assert_null(v);
}

/* The fingerprint is XXH3-128 (its published value for no bytes) and tells every one-bit change apart. */
static void test_hmap_fingerprint(void **state)
{
	uint64_t w[16] = { 0 };
	struct hmap_fp a, b;

	(void)state;
	a = hmap_fingerprint(w, 0);
	assert_true(a.hi == 0x99aa06d3014798d8ull && a.lo == 0x6001c324468d497full);
	for (size_t i = 0; i < 16; i++)
		w[i] = 0xffffffff81000000ull + i * 64;
	a = hmap_fingerprint(w, sizeof(w));
	b = hmap_fingerprint(w, sizeof(w));
	assert_true(a.lo == b.lo && a.hi == b.hi);
	for (size_t bit = 0; bit < 16 * 64; bit++) {
		w[bit / 64] ^= 1ull << (bit % 64);
		b = hmap_fingerprint(w, sizeof(w));
		w[bit / 64] ^= 1ull << (bit % 64);
		assert_false(a.lo == b.lo || a.hi == b.hi);
	}
	/* a shorter run of the same words is another key */
	b = hmap_fingerprint(w, sizeof(w) - sizeof(w[0]));
	assert_false(a.lo == b.lo && a.hi == b.hi);
}

static void test_hmap_reserve(void **state)
{
	struct hmap m;
	size_t cap;
	(void)state;

	hmap_init(&m);
	assert_true(hmap_put(&m, 42, 1));
	assert_true(hmap_reserve(&m, 100000));
	cap = m.cap;
	assert_true(cap * 7 >= 100001 * 10);
	assert_int_equal(*hmap_get(&m, 42), 1);
	for (uint64_t i = 0; i < 99999; i++)
		assert_true(hmap_put(&m, 1000 + i * 7919, i));
	assert_int_equal(m.cap, cap);
	assert_int_equal(m.count, 100000);
	for (uint64_t i = 0; i < 99999; i++)
		assert_int_equal(*hmap_get(&m, 1000 + i * 7919), i);
	assert_true(hmap_reserve(&m, 10)); /* smaller: nothing moves */
	assert_int_equal(m.cap, cap);
	assert_false(hmap_reserve(&m, SIZE_MAX / 4));
	assert_int_equal(*hmap_get(&m, 42), 1);
	hmap_release(&m);
}

/*
 * The hash index: every value comes back among the candidates of its hash,
 * across growth; values added under one hash all come back; other values
 * come back only when their tag collides (rare); an empty index has none.
 */
static void test_hidx(void **state)
{
	struct hidx x;
	struct hidx_iter it;
	const uint64_t same = hmap_hash(0xfeedull);
	size_t extra = 0;
	uint64_t seen = 0;
	(void)state;

	hidx_init(&x);
	assert_int_equal(hidx_first(&x, 1, &it), HIDX_NONE);
	assert_false(hidx_add(&x, 1, HIDX_NONE));
	for (uint32_t i = 0; i < 200000; i++) {
		assert_true(hidx_add(&x, hmap_hash(i), i));
		if (i % 4000 == 0) /* 50 more under one hash, among the rest */
			assert_true(hidx_add(&x, same, 1000000 + i / 4000));
	}
	assert_int_equal(x.count, 200050);
	assert_true(x.count * 10 <= x.cap * 7);
	for (uint32_t i = 0; i < 200000; i++) {
		bool found = false;

		for (uint32_t v = hidx_first(&x, hmap_hash(i), &it); v != HIDX_NONE;
		     v = hidx_next(&x, &it)) {
			if (v == i)
				found = true;
			else
				extra++;
		}
		assert_true(found);
	}
	/*
	 * Other values among the candidates: only on equal tags. Neighbours'
	 * tags share the home's ~18 bits (331 776 slots), so about once per
	 * 2^14 slots scanned: ~50 here; without the tag filter every slot of
	 * a run would be a candidate (hundreds of thousands).
	 */
	print_message("hidx: %zu other values among the candidates of 200 000 lookups\n", extra);
	assert_true(extra < 200);
	extra = 0;
	for (uint32_t v = hidx_first(&x, same, &it); v != HIDX_NONE; v = hidx_next(&x, &it)) {
		if (v >= 1000000 && v < 1000050)
			seen |= (uint64_t)1 << (v - 1000000);
		else
			extra++;
	}
	assert_int_equal(seen, ((uint64_t)1 << 50) - 1);
	assert_true(extra < 5);
	assert_int_equal(hidx_first(&x, hmap_hash(7777777), &it), HIDX_NONE);
	hidx_release(&x);
	assert_int_equal(x.cap, 0);
	assert_int_equal(hidx_first(&x, same, &it), HIDX_NONE);
	/* reserved: no growth while the reserved values go in, and nothing is lost */
	{
		size_t cap;

		assert_true(hidx_add(&x, 42, 7));
		assert_true(hidx_reserve(&x, 100000));
		cap = x.cap;
		assert_true(cap * 7 >= 100001 * 10);
		for (uint32_t i = 0; i < 99999; i++)
			assert_true(hidx_add(&x, hmap_hash(i + 1000), i));
		assert_int_equal(x.cap, cap);
		assert_int_equal(hidx_first(&x, 42, &it), 7);
		assert_true(hidx_reserve(&x, 10)); /* smaller: nothing moves */
		assert_int_equal(x.cap, cap);
		assert_false(hidx_reserve(&x, (size_t)UINT32_MAX + 1));
		hidx_release(&x);
	}
}

/*
 * Interning: one id per distinct string, in insertion order, whatever the
 * length (the hash reads 8 bytes a step: strings that differ only in a last
 * partial word, or only in length, must stay apart), across reservation and
 * growth.
 */
static void test_strtab(void **state)
{
	struct strtab t;
	char buf[64];
	uint32_t ids[40][2];
	(void)state;

	strtab_init(&t);
	assert_int_equal(strtab_intern_cstr(&t, ""), 0);
	for (int len = 1; len < 40; len++) {
		memset(buf, 'a', sizeof(buf));
		buf[len] = 0;
		ids[len][0] = strtab_intern(&t, buf, (size_t)len);
		buf[len - 1] = 'b';
		ids[len][1] = strtab_intern(&t, buf, (size_t)len);
		assert_int_equal(ids[len][0], (uint32_t)(2 * len - 1));
		assert_int_equal(ids[len][1], (uint32_t)(2 * len));
	}
	assert_true(strtab_reserve(&t, 5000));
	assert_true(t.cap >= 5000 && t.nslots >= 2 * 5001);
	for (int i = 0; i < 4000; i++) {
		snprintf(buf, sizeof(buf), "sym_%d_%s", i, i % 2 ? "x" : "longer-name");
		assert_int_equal(strtab_intern_cstr(&t, buf), (uint32_t)(79 + i));
	}
	for (int len = 1; len < 40; len++) {
		memset(buf, 'a', sizeof(buf));
		assert_int_equal(strtab_intern(&t, buf, (size_t)len), ids[len][0]);
		buf[len - 1] = 'b';
		assert_int_equal(strtab_intern(&t, buf, (size_t)len), ids[len][1]);
		assert_int_equal(strlen(strtab_get(&t, ids[len][1])), (size_t)len);
	}
	snprintf(buf, sizeof(buf), "sym_%d_%s", 3999, "x");
	assert_int_equal(strtab_intern_cstr(&t, buf), 79 + 3999);
	assert_int_equal(t.count, 79 + 4000);
	strtab_release(&t);
}

/* Writes n MiB to fd, telling f after each; returns the bytes written. */
static uint64_t write_mib(int fd, struct io_flush *f, unsigned n)
{
	static unsigned char mib[1 << 20];
	uint64_t total = 0;

	memset(mib, 0x5a, sizeof(mib));
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(write(fd, mib, sizeof(mib)), (ssize_t)sizeof(mib));
		total += sizeof(mib);
		io_flush_wrote(f, total);
	}
	return total;
}

static void test_io_flush(void **state)
{
	FILE *tf = tmpfile();
	int fd = tf ? fileno(tf) : -1, pfd[2];
	unsigned syncs = 99;
	struct io_flush *f;

	(void)state;
	assert_true(fd >= 0);
	/* past a step the thread syncs what was written: at least once, whatever the timing */
	f = io_flush_new(fd);
	assert_non_null(f);
	assert_int_equal(write_mib(fd, f, 7), (uint64_t)7 << 20);
	assert_int_equal(io_flush_finish(f, &syncs), 0);
	assert_true(syncs >= 1 && syncs <= 3);
	/* below a step: no thread, no sync */
	f = io_flush_new(fd);
	assert_non_null(f);
	io_flush_wrote(f, IO_FLUSH_STEP - 1);
	assert_int_equal(io_flush_finish(f, &syncs), 0);
	assert_int_equal(syncs, 0);
	fclose(tf);
	/* none at all */
	io_flush_wrote(NULL, (uint64_t)1 << 30);
	assert_int_equal(io_flush_finish(NULL, &syncs), 0);
	assert_int_equal(syncs, 0);
	/* a sync that fails (a pipe cannot be synced) is reported by finish */
	assert_int_equal(pipe(pfd), 0);
	f = io_flush_new(pfd[1]);
	assert_non_null(f);
	io_flush_wrote(f, IO_FLUSH_STEP);
	assert_int_equal(io_flush_finish(f, &syncs), EINVAL);
	assert_int_equal(syncs, 1);
	close(pfd[0]);
	close(pfd[1]);
}

/* io_out: buffered bytes, bytes put as they are, and patches over both land where they belong. */
static void test_io_out(void **state)
{
	FILE *tf = tmpfile();
	int fd = tf ? fileno(tf) : -1, pfd[2];
	struct io_out o;
	uint64_t bytes = 0;
	char got[16];

	(void)state;
	assert_true(fd >= 0);
	io_out_init(&o, fd, NULL);
	dbuf_append(&o.buf, "abcd", 4);
	assert_int_equal(io_out_tell(&o), 4);
	io_out_put(&o, "efgh", 4);          /* writes "abcd" first */
	assert_int_equal(io_out_tell(&o), 8);
	dbuf_append(&o.buf, "ijkl", 4);
	io_out_patch(&o, 9, "JK", 2);       /* still in buf */
	io_out_patch(&o, 1, "BC", 2);       /* already in the file */
	assert_int_equal(io_out_finish(&o, &bytes, NULL), CONV_E_OK);
	assert_int_equal(bytes, 12);
	assert_int_equal(pread(fd, got, sizeof(got), 0), 12);
	assert_memory_equal(got, "aBCdefghiJKl", 12);
	fclose(tf);

	/* a write that fails is kept and reported by finish */
	assert_int_equal(pipe(pfd), 0);
	close(pfd[0]);
	signal(SIGPIPE, SIG_IGN);
	io_out_init(&o, pfd[1], NULL);
	io_out_put(&o, "x", 1);
	assert_int_equal(o.io_errno, EPIPE);
	io_out_patch(&o, 0, "y", 1);
	assert_int_equal(io_out_finish(&o, &bytes, NULL), CONV_E_IO);
	assert_int_equal(bytes, 0);
	close(pfd[1]);
}

/* ropen_regular's answer for path: the errno it failed with, or 0 after checking the descriptor. */
static int ropen_errno(const char *path, bool nofollow)
{
	char got[8] = { 0 };
	int fd, fl;

	errno = 0;
	fd = ropen_regular(path, nofollow);
	if (fd < 0)
		return errno ? errno : -1;
	fl = fcntl(fd, F_GETFL);
	assert_int_equal(fl & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, got, sizeof(got) - 1), 5);
	assert_string_equal(got, "hello");
	close(fd);
	return 0;
}

/* Only regular files are opened; FIFOs, devices, sockets and directories are refused without waiting. */
static void test_ropen_regular(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], p[4200], q[4200];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, sfd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/ropen.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	alarm(20); /* a FIFO's blocking open would wait for ever: fail instead */

	snprintf(p, sizeof(p), "%s/file", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	close(fd);
	assert_int_equal(ropen_errno(p, false), 0);
	assert_int_equal(ropen_errno(p, true), 0);

	snprintf(q, sizeof(q), "%s/link", dir);
	assert_int_equal(symlink("file", q), 0);
	assert_int_equal(ropen_errno(q, false), 0);
	assert_int_equal(ropen_errno(q, true), ELOOP);

	snprintf(p, sizeof(p), "%s/fifo", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(ropen_errno(p, false), EINVAL);
	assert_int_equal(ropen_errno(p, true), EINVAL);
	snprintf(q, sizeof(q), "%s/fifolink", dir);
	assert_int_equal(symlink("fifo", q), 0);
	assert_int_equal(ropen_errno(q, false), EINVAL);
	assert_int_equal(ropen_errno(q, true), ELOOP);

	assert_int_equal(ropen_errno("/dev/null", false), EINVAL);
	assert_int_equal(ropen_errno("/dev/null", true), EINVAL);
	assert_int_equal(ropen_errno(dir, false), EINVAL);

	snprintf(p, sizeof(p), "%s/sock", dir);
	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(sfd >= 0);
	assert_true(strlen(p) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, p, strlen(p) + 1);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(ropen_errno(p, false), EINVAL);
	close(sfd);

	snprintf(p, sizeof(p), "%s/missing", dir);
	assert_int_equal(ropen_errno(p, false), ENOENT);
	snprintf(p, sizeof(p), "%s/file/below", dir);
	assert_int_equal(ropen_errno(p, false), ENOTDIR);
	assert_string_equal(ropen_strerror(EINVAL), "not a regular file");
	assert_string_equal(ropen_strerror(ENOENT), strerror(ENOENT));
	alarm(0);

	for (const char *const *n = (const char *const[]){ "file", "link", "fifo", "fifolink", "sock", NULL };
	     *n; n++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *n);
		unlink(p);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cursor_reads),
		cmocka_unit_test(test_cursor_leb128),
		cmocka_unit_test(test_cursor_sub_and_strings),
		cmocka_unit_test(test_cursor_u64_array),
		cmocka_unit_test(test_dbuf_cap),
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_hmap),
		cmocka_unit_test(test_hmap_reserve),
		cmocka_unit_test(test_hmap_fingerprint),
		cmocka_unit_test(test_vec),
		cmocka_unit_test(test_hidx),
		cmocka_unit_test(test_strtab),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_io_flush),
		cmocka_unit_test(test_io_out),
		cmocka_unit_test(test_ropen_regular),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
