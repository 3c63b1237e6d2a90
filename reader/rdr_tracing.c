/*
 * TRACING_DATA: the tracepoint formats perf saved with the recording. The
 * reader only needs them to name tracepoint events whose names the file does
 * not carry (pipe files and old perf): each event format starts with
 * "name: NAME" and "ID: NUMBER" lines, which are parsed here strictly. The
 * blob itself is kept for libtraceevent, which decodes tracepoint fields;
 * hostile format text is not handed to it while reading, because fuzzing
 * found libtraceevent 1.7 crashing (SEGV in print-fmt parsing) and leaking on
 * crafted formats.
 *
 * Blob layout (tools/perf/util/trace-event-{info,read}.c), integers in the
 * byte order given by the blob's own flag:
 *   u8[10]  "\x17\x08\x44tracing"
 *   char[]  version, NUL-terminated ("0.6")
 *   u8      big_endian
 *   u8      sizeof(long)
 *   u32     page_size
 *   "header_page\0"  u64 size, data
 *   "header_event\0" u64 size, data
 *   u32 n, {u64 size, data}[n]                      ftrace formats
 *   u32 nsys, {system\0, u32 n, {u64 size, data}[n]}[nsys]   event formats
 *   u32 size, data                                   kallsyms
 *   u32 size, data                                   printk formats
 *   (version >= 0.6) u64 size, data                  saved cmdlines
 * Only the event formats matter here; parsing stops after them.
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const uint8_t trace_magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

static const char *blob_cstr(struct cur *c)
{
	const char *s = (const char *)c->base + c->pos;
	size_t left = cur_remaining(c);
	size_t n;

	if (!left || c->err) {
		cur_fail(c);
		return NULL;
	}
	n = strnlen(s, left);
	if (n == left) {
		cur_fail(c);
		return NULL;
	}
	cur_skip(c, n + 1);
	return s;
}

static void blob_skip_sized64(struct cur *c)
{
	uint64_t n = cur_u64(c);

	if (n > cur_remaining(c))
		cur_fail(c);
	else
		cur_skip(c, (size_t)n);
}

/* The value of a "KEY: value" line of a format text, or NULL. */
static const char *format_field(const char *fmt, size_t len, const char *key, size_t *vlen)
{
	size_t klen = strlen(key);
	size_t pos = 0;

	while (pos < len) {
		const char *line = fmt + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;

		if (llen > klen && !memcmp(line, key, klen)) {
			const char *v = line + klen;
			size_t n = llen - klen;

			while (n && (*v == ' ' || *v == '\t')) {
				v++;
				n--;
			}
			*vlen = n;
			return v;
		}
		pos += llen + 1;
	}
	return NULL;
}

static bool name_ok(const char *s, size_t n)
{
	if (!n || n > 200)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= ' ' || ch >= 0x7f || ch == ':')
			return false;
	}
	return true;
}

/* Indexes this format's ID -> "sys:name". */
static void name_from_format(struct rdr *r, const char *sys, const char *fmt, size_t len)
{
	size_t nlen, ilen, slen = strlen(sys);
	const char *name = format_field(fmt, len, "name:", &nlen);
	const char *idv = format_field(fmt, len, "ID:", &ilen);
	uint64_t id = 0;
	char buf[420];

	if (!name || !idv || !ilen || ilen > 10 || !name_ok(name, nlen) || !name_ok(sys, slen))
		return;
	for (size_t i = 0; i < ilen; i++) {
		if (idv[i] < '0' || idv[i] > '9')
			return;
		id = id * 10 + (uint64_t)(idv[i] - '0');
	}
	snprintf(buf, sizeof(buf), "%.*s:%.*s", (int)slen, sys, (int)nlen, name);
	{
		char *copy = arena_strndup(&r->arena, buf, strlen(buf));

		if (copy && !hmap_get(&r->tp_names, id))
			hmap_put(&r->tp_names, id, (uint64_t)(uintptr_t)copy);
	}
}

void rdr_tracing_reset(struct rdr *r)
{
	hmap_release(&r->tp_names);
	r->tp_indexed = false;
}

/* Walks the blob once and indexes every event format's ID and name. */
static void tracing_index(struct rdr *r)
{
	struct cur c;
	const uint8_t *magic;
	const char *version, *sys;
	uint8_t big;
	uint32_t nftrace, nsys;
	bool host_big;
	uint16_t one = 1;

	r->tp_indexed = true;
	if (!r->info.tracing_data || r->info.tracing_data_len < 16)
		return;
	cur_init(&c, r->info.tracing_data, r->info.tracing_data_len, false);
	magic = cur_view(&c, 10);
	if (!magic || memcmp(magic, trace_magic, 10) != 0) {
		rdr_problem(r, CONV_E_FORMAT, UINT64_MAX, 0, "tracing data has no 'tracing' magic");
		return;
	}
	version = blob_cstr(&c);
	big = cur_u8(&c);
	(void)cur_u8(&c); /* sizeof(long) */
	host_big = *(const uint8_t *)&one == 0;
	c.swap = (big != 0) != host_big;
	(void)cur_u32(&c); /* page size */
	if (!version || !cur_ok(&c))
		goto bad;
	if (!blob_cstr(&c)) /* "header_page" */
		goto bad;
	blob_skip_sized64(&c);
	if (!blob_cstr(&c)) /* "header_event" */
		goto bad;
	blob_skip_sized64(&c);
	nftrace = cur_u32(&c);
	for (uint32_t i = 0; i < nftrace && cur_ok(&c); i++)
		blob_skip_sized64(&c);
	nsys = cur_u32(&c);
	for (uint32_t s = 0; s < nsys && cur_ok(&c); s++) {
		uint32_t n;

		sys = blob_cstr(&c);
		n = cur_u32(&c);
		for (uint32_t i = 0; i < n && cur_ok(&c); i++) {
			uint64_t size = cur_u64(&c);
			const uint8_t *fmt;

			if (size > cur_remaining(&c)) {
				cur_fail(&c);
				break;
			}
			fmt = cur_view(&c, (size_t)size);
			if (fmt && sys)
				name_from_format(r, sys, (const char *)fmt, (size_t)size);
		}
	}
	if (cur_ok(&c))
		return;
bad:
	rdr_problem(r, CONV_E_FORMAT, UINT64_MAX, 0,
		    "tracing data ends early or is malformed; tracepoint names may be missing");
}

const char *rdr_tracing_name(struct rdr *r, uint64_t id)
{
	uint64_t *v;

	if (!r->tp_indexed)
		tracing_index(r);
	v = hmap_get(&r->tp_names, id);
	return v ? (const char *)(uintptr_t)*v : NULL;
}
