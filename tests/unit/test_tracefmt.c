/*
 * tracefmt tests: TRACING_DATA blobs and sched_switch / raw_syscalls
 * samples built byte by byte (the formats are this machine's kernel's,
 * 6.x), the prev_state texts the print fmt gives, the syscall pseudo-field,
 * and format texts the checks must refuse (counted, no crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tracefmt/tracefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sched_switch_fmt[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
	"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & "
	"((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	"0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
	"\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { "
	"0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
	"REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
	"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
	"REC->next_pid, REC->next_prio\n";

static const char sys_enter_fmt[] =
	"name: sys_enter\n"
	"ID: 443\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
	"\n"
	"print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], "
	"REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n";

/* A format with a __data_loc string, printed as name=%s. */
static const char dynstr_fmt[] =
	"name: dyn\n"
	"ID: 500\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int mode;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"path=%s mode=%u\", __get_str(path), REC->mode\n";

/* A growing blob. */
struct blob {
	uint8_t b[1 << 17];
	size_t n;
};

static void put(struct blob *bl, const void *p, size_t n)
{
	assert_true(bl->n + n <= sizeof(bl->b));
	memcpy(bl->b + bl->n, p, n);
	bl->n += n;
}

static void put_u32(struct blob *bl, uint32_t v)
{
	put(bl, &v, 4);
}

static void put_u64(struct blob *bl, uint64_t v)
{
	put(bl, &v, 8);
}

static void put_str(struct blob *bl, const char *s)
{
	put(bl, s, strlen(s) + 1);
}

/* The head of a little-endian blob up to its event systems' count. */
static void blob_head(struct blob *bl, uint32_t nsys)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

	bl->n = 0;
	put(bl, magic, sizeof(magic));
	put_str(bl, "0.6");
	put(bl, "\0\x08", 2); /* little endian, sizeof(long) 8 */
	put_u32(bl, 4096);
	put_str(bl, "header_page");
	put_u64(bl, 0);
	put_str(bl, "header_event");
	put_u64(bl, 0);
	put_u32(bl, 0); /* ftrace formats */
	put_u32(bl, nsys);
}

/* One system with n formats. */
static void blob_sys(struct blob *bl, const char *sys, const char *const *fmts, size_t n)
{
	put_str(bl, sys);
	put_u32(bl, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_u64(bl, strlen(fmts[i]));
		put(bl, fmts[i], strlen(fmts[i]));
	}
}

static struct tfmt *open_formats(void)
{
	static struct blob bl;
	const char *sched[] = { sched_switch_fmt };
	const char *raw[] = { sys_enter_fmt };
	const char *dyn[] = { dynstr_fmt };
	struct tfmt *t = NULL;
	struct conv_diag d = { 0 };

	blob_head(&bl, 3);
	blob_sys(&bl, "sched", sched, 1);
	blob_sys(&bl, "raw_syscalls", raw, 1);
	blob_sys(&bl, "test", dyn, 1);
	assert_int_equal(tfmt_open(bl.b, bl.n, &t, &d), CONV_E_OK);
	assert_non_null(t);
	assert_int_equal(tfmt_stats(t)->formats, 3);
	assert_int_equal(tfmt_stats(t)->parsed, 3);
	assert_int_equal(tfmt_stats(t)->refused, 0);
	return t;
}

/* A sched_switch record as the kernel writes it (64 bytes, then perf's padding to 68). */
static size_t sched_raw(uint8_t *r, const char *prev, int32_t prev_pid, int64_t state,
			const char *next, int32_t next_pid)
{
	uint16_t type = 372;
	int32_t pid = prev_pid, prio = 120, nprio = 120;

	memset(r, 0, 68);
	memcpy(r, &type, 2);
	memcpy(r + 4, &pid, 4);
	strncpy((char *)r + 8, prev, 16);
	memcpy(r + 24, &prev_pid, 4);
	memcpy(r + 28, &prio, 4);
	memcpy(r + 32, &state, 8);
	strncpy((char *)r + 40, next, 16);
	memcpy(r + 56, &next_pid, 4);
	memcpy(r + 60, &nprio, 4);
	return 68;
}

static const char *text_of(const struct tfmt_event *e, const char *field, const uint8_t *r,
			   size_t n)
{
	static char buf[256];
	int i = tfmt_field_index(e, field);

	assert_true(i >= 0);
	if (!tfmt_field_text(e, (size_t)i, r, n, buf, sizeof(buf)))
		return NULL;
	return buf;
}

static void test_sched_switch_fields(void **state)
{
	struct tfmt *t = open_formats();
	const struct tfmt_event *e = tfmt_event(t, 372);
	uint8_t r[68];
	size_t n = sched_raw(r, "bash", 4242, 1, "swapper/0", 0);
	int64_t v;

	(void)state;
	assert_non_null(e);
	assert_null(tfmt_event(t, 371));
	assert_string_equal(tfmt_event_name(e), "sched:sched_switch");
	assert_int_equal(tfmt_nr_fields(e), 7);
	assert_string_equal(tfmt_field_name(e, 0), "prev_comm");
	assert_string_equal(tfmt_field_name(e, 6), "next_prio");
	assert_null(tfmt_field_name(e, 7));
	assert_int_equal(tfmt_field_index(e, "next_pid"), 5);
	assert_int_equal(tfmt_field_index(e, "common_pid"), -1);
	assert_int_equal(tfmt_field_index(e, "syscall"), -1);

	assert_true(tfmt_field_num(e, 1, r, n, &v));
	assert_int_equal(v, 4242);
	assert_true(tfmt_field_num(e, 3, r, n, &v));
	assert_int_equal(v, 1);
	assert_false(tfmt_field_num(e, 0, r, n, &v)); /* a char array */

	assert_string_equal(text_of(e, "prev_comm", r, n), "bash");
	assert_string_equal(text_of(e, "prev_pid", r, n), "4242");
	assert_string_equal(text_of(e, "prev_prio", r, n), "120");
	assert_string_equal(text_of(e, "next_comm", r, n), "swapper/0");
	assert_string_equal(text_of(e, "next_pid", r, n), "0");
	assert_string_equal(text_of(e, "next_prio", r, n), "120");
	tfmt_free(t);
}

/*
 * prev_state by the print fmt: the mask is ((0x7f + 1) << 1) - 1 = 0xff;
 * state & 0xff shown by __print_flags joined with '|' (S=1 D=2 T=4 t=8 X=0x10
 * Z=0x20 P=0x40 I=0x80), "R" when none; then "+" when state & 0x100
 * (TASK_REPORT_MAX: preempted while runnable).
 */
static void test_prev_state(void **state)
{
	static const struct {
		int64_t v;
		const char *text;
	} cases[] = {
		{ 0, "R" },	   { 1, "S" },	     { 2, "D" },     { 0x80, "I" },
		{ 0x20, "Z" },	   { 0x100, "R+" },  { 3, "S|D" },   { 0x101, "S+" },
		{ 0x10, "X" },	   { 0x40, "P" },    { 4, "T" },     { 8, "t" },
	};
	struct tfmt *t = open_formats();
	const struct tfmt_event *e = tfmt_event(t, 372);
	uint8_t r[68];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = sched_raw(r, "a b", 7, cases[i].v, "kworker/0:1", 9);

		assert_string_equal(text_of(e, "prev_state", r, n), cases[i].text);
		/* a comm with a space does not shift the values after it */
		assert_string_equal(text_of(e, "prev_comm", r, n), "a b");
		assert_string_equal(text_of(e, "next_pid", r, n), "9");
	}
	tfmt_free(t);
}

static void test_short_raw(void **state)
{
	struct tfmt *t = open_formats();
	const struct tfmt_event *e = tfmt_event(t, 372);
	uint8_t r[68];
	char buf[32];
	int64_t v;

	(void)state;
	sched_raw(r, "bash", 1, 0, "sh", 2);
	/* next_prio ends at 64: anything shorter holds not every field */
	assert_false(tfmt_field_num(e, 6, r, 63, &v));
	assert_false(tfmt_field_text(e, 0, r, 63, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_false(tfmt_field_text(e, 0, r, 0, buf, sizeof(buf)));
	assert_false(tfmt_field_text(e, 0, NULL, 0, buf, sizeof(buf)));
	assert_true(tfmt_field_text(e, 0, r, 64, buf, sizeof(buf)));
	/* a small buffer cuts, NUL-terminated */
	assert_true(tfmt_field_text(e, 0, r, 64, buf, 3));
	assert_string_equal(buf, "ba");
	assert_false(tfmt_field_text(e, 99, r, 64, buf, sizeof(buf)));
	tfmt_free(t);
}

static void test_syscall_pseudo_field(void **state)
{
	struct tfmt *t = open_formats();
	const struct tfmt_event *e = tfmt_event(t, 443);
	uint8_t r[64] = { 0 };
	uint16_t type = 443;
	int64_t id = 257, v; /* openat */
	char buf[64];
	int i;

	(void)state;
	assert_non_null(e);
	assert_string_equal(tfmt_event_name(e), "raw_syscalls:sys_enter");
	memcpy(r, &type, 2);
	memcpy(r + 8, &id, 8);
	i = tfmt_field_index(e, "syscall");
	assert_int_equal(i, (int)tfmt_nr_fields(e));
	assert_string_equal(tfmt_field_name(e, (size_t)i), "syscall");
	assert_true(tfmt_field_num(e, (size_t)i, r, sizeof(r), &v));
	assert_int_equal(v, 257);
	assert_true(tfmt_field_text(e, (size_t)i, r, sizeof(r), buf, sizeof(buf)));
	assert_string_equal(buf, "openat");
	id = 0;
	memcpy(r + 8, &id, 8);
	assert_true(tfmt_field_text(e, (size_t)i, r, sizeof(r), buf, sizeof(buf)));
	assert_string_equal(buf, "read");
	/* the number itself is not shown as id=: its own value */
	assert_string_equal(text_of(e, "id", r, sizeof(r)), "0");
	id = 100000;
	memcpy(r + 8, &id, 8);
	assert_false(tfmt_field_text(e, (size_t)i, r, sizeof(r), buf, sizeof(buf)));
	id = -1;
	memcpy(r + 8, &id, 8);
	assert_false(tfmt_field_text(e, (size_t)i, r, sizeof(r), buf, sizeof(buf)));
	tfmt_free(t);
}

static void test_dynamic_string(void **state)
{
	struct tfmt *t = open_formats();
	const struct tfmt_event *e = tfmt_event(t, 500);
	uint8_t r[32] = { 0 };
	uint16_t type = 500;
	uint32_t loc = (6u << 16) | 16u, mode = 0644;
	char buf[64];

	(void)state;
	assert_non_null(e);
	memcpy(r, &type, 2);
	memcpy(r + 8, &loc, 4);
	memcpy(r + 12, &mode, 4);
	memcpy(r + 16, "/tmp/", 6);
	assert_string_equal(text_of(e, "path", r, 22), "/tmp/");
	assert_string_equal(text_of(e, "mode", r, 22), "420");
	/* the string's data past the sample: refused before anything reads it */
	assert_false(tfmt_field_text(e, 0, r, 21, buf, sizeof(buf)));
	assert_false(tfmt_field_text(e, 1, r, 21, buf, sizeof(buf)));
	loc = (0xffffu << 16) | 0xfff0u;
	memcpy(r + 8, &loc, 4);
	assert_false(tfmt_field_text(e, 0, r, sizeof(r), buf, sizeof(buf)));
	tfmt_free(t);
}

/* sched_switch with one substitution, under another ID. */
static char *variant(const char *from, const char *to, int id)
{
	const char *p = strstr(sched_switch_fmt, from);
	size_t n = strlen(sched_switch_fmt) + strlen(to) + 16;
	char *s = malloc(n), *q;

	assert_non_null(p);
	assert_non_null(s);
	snprintf(s, n, "%.*s%s%s", (int)(p - sched_switch_fmt), sched_switch_fmt, to,
		 p + strlen(from));
	q = strstr(s, "ID: 372");
	assert_non_null(q);
	memcpy(q, "ID:    ", 7);
	q[4] = (char)('0' + id / 100);
	q[5] = (char)('0' + id / 10 % 10);
	q[6] = (char)('0' + id % 10);
	return s;
}

static void test_refusals(void **state)
{
	static struct blob bl;
	char deep[200];
	char *fmts[28];
	size_t n = 0;
	struct tfmt *t = NULL;
	struct conv_diag d = { 0 };
	char truncated[400];

	(void)state;
	memset(deep, 0, sizeof(deep));
	strcpy(deep, "REC->prev_pid + ");
	for (int i = 0; i < 40; i++)
		strcat(deep, "(");
	strcat(deep, "1");
	for (int i = 0; i < 40; i++)
		strcat(deep, ")");
	snprintf(truncated, sizeof(truncated), "%.300s", sched_switch_fmt);

	fmts[n++] = variant("REC->next_prio\n", "REC->next_prio\n", 101); /* the good one */
	fmts[n++] = strdup(truncated);                                     /* ends in a field */
	fmts[n++] = variant("REC->next_pid, ", "(REC->next_pid, ", 102);   /* unbalanced */
	fmts[n++] = variant("offset:60;", "offset:70000;", 103);           /* absurd offset */
	fmts[n++] = variant("offset:60;", "offset:30;", 104);              /* overlap */
	fmts[n++] = variant("REC->prev_pid,", deep, 105);                  /* nesting */
	fmts[n++] = variant("__print_flags(REC->prev_state", "__print_flags(REC->next_pidte", 106);
	fmts[n++] = variant("unsigned short common_type", "unsig$ned short common_type", 107);
	fmts[n++] = variant("REC->next_pid,", "sizeof(REC->next_pid),", 108);
	fmts[n++] = variant(": \"R\",", ", \"R\",", 109); /* '?' without ':' */
	fmts[n++] = variant("REC->next_prio\n", "REC->next_prio\n", 101); /* the same ID again */
	fmts[n++] = variant("\"prev_comm=", "\"prev_comm=\x01", 110);     /* not text */
	fmts[n++] = variant("REC->next_pid,", "REC->next_pid % (1 - 1),", 111); /* SIGFPE */
	fmts[n++] = variant("REC->next_pid,", "REC->next_pid / 0999L,", 112); /* octal 0 */
	fmts[n++] = variant("pid_t next_pid;", "next_pid;", 113);           /* no type: leaked */
	fmts[n++] = variant("char next_comm[16];", "char [] next_comm;", 114); /* leaked */
	fmts[n++] = variant("{ 0x00000080, \"I\" }", "{ }", 115); /* leaked (a real kvm format) */
	fmts[n++] = variant(" ==> next_comm", "\n==> next_comm", 116); /* a newline in the string: good */
	fmts[n++] = variant("{ 0x00000080,", "{ ~,", 117);              /* leaked */
	fmts[n++] = variant("REC->next_pid,", "REC->next_pid[!5],", 118); /* leaked */
	fmts[n++] = variant("REC->next_pid,", "(unsigned long long) REC->next_pid,", 119); /* good */
	fmts[n++] = variant("next_pid=%d", "next_pid=%*d", 120);         /* width from the data */
	fmts[n++] = variant("REC->next_pid,", "__print_hex(REC->prev_comm, REC->prev_state),", 121);

	blob_head(&bl, 1);
	blob_sys(&bl, "sched", (const char *const *)fmts, n);
	assert_int_equal(tfmt_open(bl.b, bl.n, &t, &d), CONV_E_OK);
	assert_int_equal(tfmt_stats(t)->formats, n);
	assert_int_equal(tfmt_stats(t)->parsed, 3);
	assert_int_equal(tfmt_stats(t)->refused, n - 3);
	assert_int_equal(d.code, CONV_E_FORMAT);
	assert_non_null(strstr(d.msg, "refused"));
	assert_non_null(tfmt_event(t, 101));
	assert_non_null(tfmt_event(t, 116));
	assert_non_null(tfmt_event(t, 119));
	assert_null(tfmt_event(t, 117));
	assert_null(tfmt_event(t, 118));
	assert_null(tfmt_event(t, 120));
	assert_null(tfmt_event(t, 121));
	for (int id = 102; id <= 115; id++)
		assert_null(tfmt_event(t, (uint64_t)id));
	tfmt_free(t);

	/* the blob itself cut at every length: an error or OK, never a crash */
	blob_head(&bl, 1);
	blob_sys(&bl, "sched", (const char *const *)fmts, 1);
	for (size_t cut = 0; cut < bl.n; cut += 7) {
		t = NULL;
		if (tfmt_open(bl.b, cut, &t, NULL) == CONV_E_OK)
			tfmt_free(t);
		else
			assert_null(t);
	}
	for (size_t i = 0; i < n; i++)
		free(fmts[i]);
}

static void test_unusable_blob(void **state)
{
	static struct blob bl;
	struct tfmt *t = (struct tfmt *)1;
	struct conv_diag d = { 0 };

	(void)state;
	assert_int_equal(tfmt_open((const uint8_t *)"nope", 4, &t, &d), CONV_E_FORMAT);
	assert_null(t);
	blob_head(&bl, 0);
	bl.b[15] = 3; /* sizeof(long) */
	assert_int_equal(tfmt_open(bl.b, bl.n, &t, &d), CONV_E_FORMAT);
	blob_head(&bl, 5); /* five systems announced, none there */
	assert_int_equal(tfmt_open(bl.b, bl.n, &t, &d), CONV_E_TRUNCATED);
	blob_head(&bl, 0);
	assert_int_equal(tfmt_open(bl.b, bl.n, &t, &d), CONV_E_OK);
	assert_int_equal(tfmt_stats(t)->formats, 0);
	assert_null(tfmt_event(t, 1));
	tfmt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_switch_fields), cmocka_unit_test(test_prev_state),
		cmocka_unit_test(test_short_raw),	    cmocka_unit_test(test_syscall_pseudo_field),
		cmocka_unit_test(test_dynamic_string),	    cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_unusable_blob),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
