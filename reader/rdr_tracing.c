/*
 * TRACING_DATA: the tracepoint formats perf saved with the recording, used to
 * name tracepoint events whose names the file does not carry itself (pipe
 * files and old perf), and kept parsed (libtraceevent) for decoding
 * tracepoint fields later.
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

#include <stdio.h>
#include <string.h>
#include <traceevent/event-parse.h>

static const uint8_t trace_magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

static const char *blob_cstr(struct cur *c)
{
	const char *s = (const char *)c->base + c->pos;
	size_t left = cur_remaining(c);
	size_t n = strnlen(s, left);

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

static void rdr_tracing_parse(struct rdr *r)
{
	struct cur c;
	const char *version, *sys;
	uint8_t big;
	uint32_t nftrace, nsys;
	struct tep_handle *tep;
	bool host_big = false;
	uint16_t one = 1;

	if (r->tep || !r->info.tracing_data || r->info.tracing_data_len < 16)
		return;
	cur_init(&c, r->info.tracing_data, r->info.tracing_data_len, false);
	if (memcmp(cur_view(&c, 10), trace_magic, 10) != 0) {
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
	if (!cur_ok(&c))
		goto bad;

	tep = tep_alloc();
	if (!tep)
		return;
	/* the library must not print: tracing data of other kernels often has formats libtraceevent rejects */
	tep_set_loglevel(TEP_LOG_NONE);
	tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	r->tep = tep;
	nsys = cur_u32(&c);
	for (uint32_t s = 0; s < nsys && cur_ok(&c); s++) {
		uint32_t n;

		sys = blob_cstr(&c);
		n = cur_u32(&c);
		for (uint32_t i = 0; i < n && cur_ok(&c); i++) {
			uint64_t size = cur_u64(&c);
			const char *fmt;

			if (size > cur_remaining(&c)) {
				cur_fail(&c);
				break;
			}
			fmt = (const char *)cur_view(&c, (size_t)size);
			if (fmt && sys &&
			    tep_parse_event(tep, fmt, (unsigned long)size, sys) != TEP_ERRNO__SUCCESS)
				r->stats.tracepoint_formats_bad++;
		}
	}
	if (!cur_ok(&c))
		goto bad;
	return;
bad:
	rdr_problem(r, CONV_E_FORMAT, UINT64_MAX, 0,
		    "tracing data ends early or is malformed; tracepoint names may be missing");
}

void rdr_tracing_name(struct rdr *r)
{
	if (!r->tep)
		rdr_tracing_parse(r);
	if (!r->tep)
		return;
	for (size_t i = 0; i < r->info.nr_attrs; i++) {
		struct rdr_attr *a = &r->info.attrs[i];
		struct tep_event *e;
		char buf[256];

		if (a->type != PERF_TYPE_TRACEPOINT || a->name_from_file || a->config > INT32_MAX)
			continue;
		e = tep_find_event(r->tep, (int)a->config);
		if (!e || !e->name || !e->system)
			continue;
		snprintf(buf, sizeof(buf), "%s:%s", e->system, e->name);
		a->name = arena_strndup(&r->arena, buf, strlen(buf));
	}
}

void rdr_tracing_free(struct rdr *r)
{
	if (r->tep)
		tep_free(r->tep);
	r->tep = NULL;
}
