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
 * The blob's layout and its walk: core/tdata.h.
 */
#include "reader/reader_internal.h"

#include "core/tdata.h"

#include "reader/perf_abi.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
	struct tdata w;
	struct tdata_format f;
	enum conv_err err;

	r->tp_indexed = true;
	if (!r->info.tracing_data || r->info.tracing_data_len < 16)
		return;
	err = tdata_begin(&w, r->info.tracing_data, r->info.tracing_data_len);
	if (err == CONV_E_FORMAT) {
		rdr_problem(r, CONV_E_FORMAT, UINT64_MAX, 0, "tracing data has no 'tracing' magic");
		return;
	}
	if (err == CONV_E_OK && tdata_skip_to_events(&w)) {
		while (tdata_next_format(&w, &f))
			name_from_format(r, f.sys, f.text, f.len);
		if (tdata_ok(&w))
			return;
	}
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
