/*
 * perf.data header, attrs and feature sections.
 *
 * File mode layout (tools/perf/util/header.c, perf_session__do_write_header):
 *   @0   u8[8]  magic "PERFILE2" ("2ELIFREP" = big-endian file)
 *   @8   u64    header size (104; 72 in files older than the feature bitmap)
 *   @16  u64    attr_size: one attrs entry = perf_event_attr + {u64 off, u64 size} of its ids
 *   @24  u64[2] attrs section {offset, size}
 *   @40  u64[2] data section {offset, size}; size 0 = perf was killed before the rewrite
 *   @56  u64[2] event_types {offset, size} (legacy, ignored)
 *   @72  u64[4] feature bitmap, bit i = feature i
 * At data.offset + data.size: one {u64 offset, u64 size} per set feature bit,
 * in ascending order, locating each feature payload.
 *
 * perf_event_attr (include/uapi/linux/perf_event.h), decoded by its own size:
 *   @0 u32 type  @4 u32 size  @8 u64 config  @16 u64 period/freq  @24 u64 sample_type
 *   @32 u64 read_format  @40 u64 flag bits  @48 u32 wakeup  @52 u32 bp_type
 *   @56 u64 config1 (VER0 ends at 64)  @64 config2 (72)  @72 branch_sample_type (80)
 *   @80 u64 regs_user  @88 u32 stack_user  @92 s32 clockid (96)  @96 u64 regs_intr (104)
 *   @104 u32 aux_watermark  @108 u16 max_stack  @110 u16 pad (112)
 *   @112 u32 aux_sample_size  @116 u32 aux_action (120)  @120 u64 sig_data (128)
 *   @128 u64 config3 (136)
 * The flag word is a C bit-field: perf does not byte-swap it but reverses the
 * bits of each byte, so flag n is bit n%8 of byte n/8 in a little-endian file
 * and bit 7-n%8 of that byte in a big-endian one.
 *
 * Feature payload strings: {u32 len; char s[len]} with a NUL inside len.
 */
#include "reader/reader_internal.h"

#include "core/vec.h"
#include "reader/perf_abi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FEATURE_MAX_BYTES (256u << 20) /* larger feature sections are skipped */

static uint64_t attr_flags_decode(const uint8_t *b, bool big_endian)
{
	uint64_t flags = 0;

	for (unsigned n = 0; n < 64; n++) {
		unsigned bit = big_endian ? 7 - n % 8 : n % 8;

		if ((b[n / 8] >> bit) & 1u)
			flags |= 1ull << n;
	}
	return flags;
}

void rdr_parse_attr(struct rdr *r, struct cur *c, size_t avail, struct rdr_attr *a)
{
	struct cur ac;
	uint8_t tmp[160];
	size_t size;
	const uint8_t *flags;

	memset(a, 0, sizeof(*a));
	if (avail < 8) {
		cur_skip(c, avail + 1); /* fail the cursor */
		return;
	}
	/* read type and size first: size tells how many bytes belong to the attr */
	{
		struct cur peek = *c;

		a->type = cur_u32(&peek);
		a->size = cur_u32(&peek);
	}
	size = a->size ? a->size : 64;
	if (size > avail)
		size = avail;
	/* fields the file does not have stay zero; bytes beyond what we know are ignored */
	memset(tmp, 0, sizeof(tmp));
	{
		const uint8_t *v = cur_view(c, size);

		if (!v)
			return;
		memcpy(tmp, v, size < sizeof(tmp) ? size : sizeof(tmp));
	}
	cur_init(&ac, tmp, sizeof(tmp), r->swap);
	a->type = cur_u32(&ac);
	a->size = cur_u32(&ac);
	a->config = cur_u64(&ac);
	a->sample_period = cur_u64(&ac);
	a->sample_type = cur_u64(&ac);
	a->read_format = cur_u64(&ac);
	flags = cur_view(&ac, 8);
	a->flags = size >= 48 ? attr_flags_decode(flags, r->info.big_endian) : 0;
	a->wakeup_events = cur_u32(&ac);
	a->bp_type = cur_u32(&ac);
	a->config1 = cur_u64(&ac);
	a->config2 = cur_u64(&ac);
	a->branch_sample_type = cur_u64(&ac);
	a->sample_regs_user = cur_u64(&ac);
	a->sample_stack_user = cur_u32(&ac);
	a->clockid = (int32_t)cur_u32(&ac);
	a->sample_regs_intr = cur_u64(&ac);
	a->aux_watermark = cur_u32(&ac);
	a->sample_max_stack = cur_u16(&ac);
	(void)cur_u16(&ac);
	a->aux_sample_size = cur_u32(&ac);
	(void)cur_u32(&ac);
	a->sig_data = cur_u64(&ac);
	a->config3 = cur_u64(&ac);
	a->freq = (a->flags >> PERF_ATTR_FLAG_FREQ) & 1u;
	a->sample_id_all = (a->flags >> PERF_ATTR_FLAG_SAMPLE_ID_ALL) & 1u;
}

int rdr_add_attr(struct rdr *r, const struct rdr_attr *a)
{
	if (r->info.nr_attrs == r->attrs_cap) {
		size_t ncap = r->attrs_cap ? r->attrs_cap * 2 : 4;
		struct rdr_attr *na;
		struct rdr_idpos *np;

		/* attrs are few; a file claiming many is checked against its size by callers */
		na = realloc(r->info.attrs, ncap * sizeof(*na));
		if (!na)
			return -1;
		r->info.attrs = na;
		np = realloc(r->idpos, ncap * sizeof(*np));
		if (!np)
			return -1;
		r->idpos = np;
		r->attrs_cap = ncap;
	}
	r->info.attrs[r->info.nr_attrs] = *a;
	return (int)r->info.nr_attrs++;
}

static size_t id_hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

int rdr_lookup_id(const struct rdr *r, uint64_t id)
{
	size_t i;

	if (id == 0)
		return r->id_zero_attr;
	if (!r->id_cap)
		return -1;
	for (i = id_hash(id, r->id_cap); r->id_keys[i]; i = (i + 1) & (r->id_cap - 1))
		if (r->id_keys[i] == id)
			return r->id_vals[i];
	return -1;
}

static bool id_insert(uint64_t *keys, int *vals, size_t cap, uint64_t id, int attr, bool *added)
{
	size_t i;

	for (i = id_hash(id, cap); keys[i]; i = (i + 1) & (cap - 1)) {
		if (keys[i] == id) {
			vals[i] = attr;
			*added = false;
			return true;
		}
	}
	keys[i] = id;
	vals[i] = attr;
	*added = true;
	return true;
}

bool rdr_add_id(struct rdr *r, uint64_t id, int attr)
{
	bool added;

	if (id == 0) {
		r->id_zero_attr = attr;
		return true;
	}
	if (r->id_count >= RDR_MAX_IDS) {
		if (!r->ids_capped)
			rdr_problem(r, CONV_E_LIMIT, UINT64_MAX, 0,
				    "more than %u sample ids: the rest are ignored, their samples skipped",
				    RDR_MAX_IDS);
		r->ids_capped = true;
		return true;
	}
	if ((r->id_count + 1) * 2 > r->id_cap) {
		size_t ncap = r->id_cap ? r->id_cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		int *nv = calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return false;
		}
		for (size_t i = 0; i < r->id_cap; i++)
			if (r->id_keys[i])
				id_insert(nk, nv, ncap, r->id_keys[i], r->id_vals[i], &added);
		free(r->id_keys);
		free(r->id_vals);
		r->id_keys = nk;
		r->id_vals = nv;
		r->id_cap = ncap;
	}
	id_insert(r->id_keys, r->id_vals, r->id_cap, id, attr, &added);
	if (added)
		r->id_count++;
	return true;
}

/* Where the event id and the time sit in samples and trailers of one attr. */
static void idpos_compute(const struct rdr_attr *a, struct rdr_idpos *p)
{
	uint64_t st = a->sample_type;
	int idx = 0;

	p->sample_id_idx = -1;
	p->sample_time_idx = -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		p->sample_id_idx = idx++;
	if (st & PERF_SAMPLE_IP)
		idx++;
	if (st & PERF_SAMPLE_TID)
		idx++;
	if (st & PERF_SAMPLE_TIME)
		p->sample_time_idx = idx++;
	if (st & PERF_SAMPLE_ADDR)
		idx++;
	if (p->sample_id_idx < 0 && (st & PERF_SAMPLE_ID))
		p->sample_id_idx = idx;

	p->trailer_id_idx = -1;
	p->trailer_size = 0;
	if (!a->sample_id_all)
		return;
	p->trailer_size = 8u * (size_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
					!!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
					!!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
	if (st & PERF_SAMPLE_IDENTIFIER)
		p->trailer_id_idx = 1;
	else if (st & PERF_SAMPLE_ID)
		p->trailer_id_idx = 1 + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
}

void rdr_attrs_finish(struct rdr *r, size_t from)
{
	for (size_t i = from; i < r->info.nr_attrs; i++)
		idpos_compute(&r->info.attrs[i], &r->idpos[i]);
	if (r->info.nr_attrs > 1) {
		const struct rdr_idpos *p0 = &r->idpos[0];

		for (size_t i = from ? from : 1; i < r->info.nr_attrs; i++) {
			const struct rdr_idpos *p = &r->idpos[i];

			if (p->sample_id_idx != p0->sample_id_idx ||
			    p->trailer_id_idx != p0->trailer_id_idx) {
				rdr_problem(r, CONV_E_FORMAT, UINT64_MAX, 0,
					    "events disagree on where the sample id is: records of events other than the first may be misattributed");
				break;
			}
		}
	}
}

/* ---- names ---- */

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB",
					   "branch", "node" };
static const char *const cache_ops[] = { "loads", "stores", "prefetches" };
static const char *const cache_results[] = { "", "-misses" };

/* perf's name for an event without an EVENT_DESC name (perf 3.x files). */
static const char *attr_default_name(struct rdr *r, const struct rdr_attr *a)
{
	char buf[96];

	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		if (a->config < sizeof(hw_names) / sizeof(hw_names[0]))
			return hw_names[a->config];
		break;
	case PERF_TYPE_SOFTWARE:
		if (a->config < sizeof(sw_names) / sizeof(sw_names[0]))
			return sw_names[a->config];
		break;
	case PERF_TYPE_HW_CACHE: {
		uint64_t id = a->config & 0xff, op = (a->config >> 8) & 0xff,
			 res = (a->config >> 16) & 0xff;

		if (id < 7 && op < 3 && res < 2) {
			snprintf(buf, sizeof(buf), "%s-%s%s", cache_names[id], cache_ops[op],
				 cache_results[res]);
			return arena_strndup(&r->arena, buf, strlen(buf));
		}
		break;
	}
	case PERF_TYPE_RAW:
		snprintf(buf, sizeof(buf), "r%" PRIx64, a->config);
		return arena_strndup(&r->arena, buf, strlen(buf));
	case PERF_TYPE_TRACEPOINT:
		snprintf(buf, sizeof(buf), "tracepoint:%" PRIu64, a->config);
		return arena_strndup(&r->arena, buf, strlen(buf));
	case PERF_TYPE_BREAKPOINT:
		snprintf(buf, sizeof(buf), "mem:0x%" PRIx64, a->config1);
		return arena_strndup(&r->arena, buf, strlen(buf));
	default:
		break;
	}
	snprintf(buf, sizeof(buf), "type%" PRIu32 "/config=0x%" PRIx64 "/", a->type, a->config);
	return arena_strndup(&r->arena, buf, strlen(buf));
}

void rdr_name_attr(struct rdr *r, size_t i)
{
	struct rdr_attr *a = &r->info.attrs[i];

	if (a->name_from_file)
		return;
	if (a->type == PERF_TYPE_TRACEPOINT) {
		const char *tp = rdr_tracing_name(r, a->config);

		if (tp) {
			a->name = tp;
			return;
		}
	}
	if (!a->name)
		a->name = attr_default_name(r, a);
}

void rdr_name_attrs(struct rdr *r)
{
	for (size_t i = 0; i < r->info.nr_attrs; i++)
		rdr_name_attr(r, i);
}

/* ---- feature payloads ---- */

static const char *feat_string(struct rdr *r, struct cur *c)
{
	uint32_t len = cur_u32(c);
	size_t slen;
	const char *s;

	if (len > cur_remaining(c)) {
		cur_fail(c);
		return NULL;
	}
	s = (const char *)cur_view(c, len);
	if (!s)
		return NULL;
	slen = strnlen(s, len);
	return arena_strndup(&r->arena, s, slen);
}

static void parse_event_desc(struct rdr *r, struct cur *c, uint64_t off)
{
	uint32_t nr = cur_u32(c);
	uint32_t attr_size = cur_u32(c);

	if (!cur_ok(c) || attr_size < 8 || (nr && attr_size > cur_remaining(c) / nr)) {
		rdr_problem(r, CONV_E_FORMAT, off, 0, "bad EVENT_DESC feature: %" PRIu32
			    " events of %" PRIu32 " bytes", nr, attr_size);
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		struct rdr_attr a;
		uint32_t nr_ids;
		const char *name;
		int idx = -1;

		{
			/* each entry's attr takes exactly attr_size bytes */
			struct cur ac = cur_sub(c, attr_size);

			rdr_parse_attr(r, &ac, attr_size, &a);
		}
		nr_ids = cur_u32(c);
		name = feat_string(r, c);
		if (!cur_ok(c) || nr_ids > cur_remaining(c) / 8) {
			rdr_problem(r, CONV_E_FORMAT, off, 0, "EVENT_DESC feature ends early");
			return;
		}
		for (uint32_t k = 0; k < nr_ids; k++) {
			uint64_t id = cur_u64(c);

			if (idx < 0)
				idx = rdr_lookup_id(r, id);
		}
		/* without ids (single event), entries follow the attrs' order */
		if (idx < 0 && i < r->info.nr_attrs && (nr_ids == 0 || r->info.nr_attrs == nr))
			idx = (int)i;
		if (idx >= 0 && name) {
			r->info.attrs[idx].name = name;
			r->info.attrs[idx].name_from_file = true;
		}
	}
}

static void parse_group_desc(struct rdr *r, struct cur *c, uint64_t off)
{
	uint32_t nr = cur_u32(c);

	/* each entry has at least a u32 string length and two u32s */
	if (!cur_ok(c) || nr > cur_remaining(c) / 12) {
		rdr_problem(r, CONV_E_FORMAT, off, 0, "bad GROUP_DESC feature");
		return;
	}
	/* a pipe stream may repeat the feature: the new one replaces the old */
	r->info.nr_groups = 0;
	r->info.groups = arena_alloc_array(&r->arena, nr, sizeof(*r->info.groups));
	if (!r->info.groups)
		return;
	for (uint32_t i = 0; i < nr; i++) {
		struct rdr_group *g = &r->info.groups[i];

		g->name = feat_string(r, c);
		g->leader_idx = cur_u32(c);
		g->nr_members = cur_u32(c);
		if (!cur_ok(c)) {
			rdr_problem(r, CONV_E_FORMAT, off, 0, "GROUP_DESC feature ends early");
			break;
		}
		r->info.nr_groups = i + 1;
	}
}

static void parse_cmdline(struct rdr *r, struct cur *c, uint64_t off)
{
	uint32_t nr = cur_u32(c);

	if (!cur_ok(c) || nr > cur_remaining(c) / 4) {
		rdr_problem(r, CONV_E_FORMAT, off, 0, "bad CMDLINE feature");
		return;
	}
	/* a pipe stream may repeat the feature: the new one replaces the old */
	r->info.cmdline_len = 0;
	r->info.cmdline = arena_alloc_array(&r->arena, nr ? nr : 1, sizeof(char *));
	if (!r->info.cmdline)
		return;
	for (uint32_t i = 0; i < nr; i++) {
		const char *s = feat_string(r, c);

		if (!s)
			break;
		r->info.cmdline[i] = s;
		r->info.cmdline_len = i + 1;
	}
}

static const char *feat_one_string(struct rdr *r, const uint8_t *p, size_t len, uint64_t off,
				   const char *what)
{
	struct cur c;
	const char *s;

	cur_init(&c, p, len, r->swap);
	s = feat_string(r, &c);
	if (!s)
		rdr_problem(r, CONV_E_FORMAT, off, 0, "bad %s feature", what);
	return s;
}

void rdr_parse_build_ids(struct rdr *r, const uint8_t *p, size_t len, uint64_t off,
			 enum rdr_bid_source src)
{
	struct cur c;

	cur_init(&c, p, len, r->swap);
	while (cur_remaining(&c) >= 8) {
		size_t rec_start = c.pos;
		uint32_t type = cur_u32(&c);
		uint16_t misc = cur_u16(&c);
		uint16_t size = cur_u16(&c);
		struct cur rc;
		struct rdr_build_id b;
		const uint8_t *id;
		size_t name_len;
		const char *name;

		(void)type;
		if (size < 36 || size - 8u > cur_remaining(&c)) {
			rdr_problem(r, CONV_E_FORMAT, off + rec_start, PERF_REC_HEADER_BUILD_ID,
				    "bad build-id record: size %u", size);
			return;
		}
		rc = cur_sub(&c, size - 8u);
		memset(&b, 0, sizeof(b));
		b.misc = misc;
		b.pid = (int32_t)cur_u32(&rc);
		id = cur_view(&rc, 20);
		b.size = cur_u8(&rc);
		cur_skip(&rc, 3);
		if (!cur_ok(&rc))
			return;
		memcpy(b.id, id, 20);
		if (misc & PERF_MISC_BUILD_ID_SIZE) {
			if (b.size > 20)
				b.size = 20;
		} else {
			/* legacy: 20 bytes, minus trailing all-zero 4-byte groups (simpleperf garbage) */
			b.size = 20;
			while (b.size >= 4 && !b.id[b.size - 1] && !b.id[b.size - 2] &&
			       !b.id[b.size - 3] && !b.id[b.size - 4])
				b.size = (uint8_t)(b.size - 4);
		}
		/* the name runs to the first NUL; anything after it (padding, trailer) is ignored */
		name = (const char *)rc.base + rc.pos;
		name_len = strnlen(name, cur_remaining(&rc));
		b.filename = arena_strndup(&r->arena, name, name_len);
		b.source = src;
		b.offset = off + rec_start;
		if (!vec_reserve((void **)&r->info.build_ids, &r->build_ids_cap, r->info.nr_build_ids + 1,
				 sizeof(*r->info.build_ids)))
			return;
		r->info.build_ids[r->info.nr_build_ids++] = b;
	}
}

const struct rdr_build_id *rdr_last_build_id(const struct rdr *r)
{
	return r->info.nr_build_ids ? &r->info.build_ids[r->info.nr_build_ids - 1] : NULL;
}

/*
 * The features of fixed-size numbers into info; the feature's name when
 * its numbers are checked and were short (said by the caller), else NULL.
 */
static const char *feat_numbers(struct rdr *r, uint64_t feat, struct cur *c)
{
	switch (feat) {
	case PERF_FEAT_NRCPUS:
		r->info.nr_cpus_avail = cur_u32(c);
		r->info.nr_cpus_online = cur_u32(c);
		return cur_ok(c) ? NULL : "NRCPUS";
	case PERF_FEAT_TOTAL_MEM:
		r->info.total_mem_kb = cur_u64(c);
		return NULL;
	case PERF_FEAT_SAMPLE_TIME:
		r->info.sample_time_first = cur_u64(c);
		r->info.sample_time_last = cur_u64(c);
		r->info.has_sample_time = cur_ok(c);
		return cur_ok(c) ? NULL : "SAMPLE_TIME";
	case PERF_FEAT_CLOCKID:
		r->info.clockid_res_ns = cur_u64(c);
		return NULL;
	case PERF_FEAT_CLOCK_DATA:
		r->info.clock_data_version = cur_u32(c);
		r->info.clock_data_clockid = cur_u32(c);
		r->info.clock_data_wall_ns = cur_u64(c);
		r->info.clock_data_clockid_ns = cur_u64(c);
		r->info.has_clock_data = cur_ok(c);
		return cur_ok(c) ? NULL : "CLOCK_DATA";
	case PERF_FEAT_COMPRESSED:
		r->info.comp_version = cur_u32(c);
		r->info.comp_type = cur_u32(c);
		r->info.comp_level = cur_u32(c);
		r->info.comp_ratio = cur_u32(c);
		r->info.comp_mmap_len = cur_u32(c);
		r->info.has_compressed = cur_ok(c);
		return cur_ok(c) ? NULL : "COMPRESSED";
	default:
		return NULL;
	}
}

void rdr_parse_feature(struct rdr *r, uint64_t feat, const uint8_t *p, size_t len, uint64_t off,
		       bool pipe)
{
	struct cur c;

	cur_init(&c, p, len, r->swap);
	if (feat < PERF_FEAT_BITS && pipe)
		r->info.features[feat / 64] |= 1ull << (feat % 64);
	switch (feat) {
	case PERF_FEAT_TRACING_DATA: {
		size_t keep = len;

		if (keep > r->opts.max_tracing_data) {
			rdr_problem(r, CONV_E_LIMIT, off, 0,
				    "TRACING_DATA of %zu bytes is over the limit; not kept", len);
			break;
		}
		r->info.tracing_data = arena_memdup(&r->arena, p, keep);
		r->info.tracing_data_len = r->info.tracing_data ? keep : 0;
		rdr_tracing_reset(r);
		rdr_name_attrs(r);
		break;
	}
	case PERF_FEAT_BUILD_ID:
		rdr_parse_build_ids(r, p, len, off, pipe ? RDR_BID_PIPE : RDR_BID_FEATURE);
		break;
	case PERF_FEAT_HOSTNAME:
		r->info.hostname = feat_one_string(r, p, len, off, "HOSTNAME");
		break;
	case PERF_FEAT_OSRELEASE:
		r->info.osrelease = feat_one_string(r, p, len, off, "OSRELEASE");
		break;
	case PERF_FEAT_VERSION:
		r->info.perf_version = feat_one_string(r, p, len, off, "VERSION");
		break;
	case PERF_FEAT_ARCH:
		r->info.arch = feat_one_string(r, p, len, off, "ARCH");
		break;
	case PERF_FEAT_CPUDESC:
		r->info.cpudesc = feat_one_string(r, p, len, off, "CPUDESC");
		break;
	case PERF_FEAT_CPUID:
		r->info.cpuid = feat_one_string(r, p, len, off, "CPUID");
		break;
	case PERF_FEAT_CMDLINE:
		parse_cmdline(r, &c, off);
		break;
	case PERF_FEAT_EVENT_DESC:
		parse_event_desc(r, &c, off);
		break;
	case PERF_FEAT_GROUP_DESC:
		parse_group_desc(r, &c, off);
		break;
	default: {
		/* the rest are numbers, or informational for conv: kept in the bitmap only */
		const char *bad = feat_numbers(r, feat, &c);

		if (bad)
			rdr_problem(r, CONV_E_FORMAT, off, 0, "bad %s feature", bad);
		break;
	}
	}
}

/* ---- file mode header ---- */

struct file_section {
	uint64_t offset, size;
};

static bool section_ok(const struct rdr *r, const struct file_section *s)
{
	uint64_t fsize = r->info.file_size;

	return fsize == UINT64_MAX || (s->offset <= fsize && s->size <= fsize - s->offset);
}

/*
 * Reads the ids of event i (attr index idx, entry at off) from their
 * section; a section outside the file or unreadable is reported and
 * skipped. Fails only when out of memory for the id table.
 */
static enum conv_err read_attr_ids(struct rdr *r, uint64_t i, uint64_t off, int idx,
				   const struct file_section *ids, struct conv_diag *diag)
{
	size_t n = (size_t)(ids->size / 8);
	uint8_t *raw;
	struct cur ic;
	uint64_t *v;

	if (!section_ok(r, ids) || ids->size > (64u << 20)) {
		rdr_problem(r, CONV_E_FORMAT, off, 0,
			    "ids of event %" PRIu64 " (offset %" PRIu64 ", size %" PRIu64
			    ") lie outside the file; ignored",
			    i, ids->offset, ids->size);
		return CONV_E_OK;
	}
	if (n > RDR_MAX_IDS - r->ids_stored) {
		rdr_problem(r, CONV_E_LIMIT, off, 0,
			    "event %" PRIu64 " claims %zu ids, past %u for all events; the rest "
			    "are ignored", i, n, RDR_MAX_IDS);
		n = RDR_MAX_IDS - r->ids_stored;
	}
	r->ids_stored += n;
	raw = malloc(n ? n * 8 : 1);
	v = arena_alloc_array(&r->arena, n ? n : 1, sizeof(uint64_t));
	if (!raw || !v || !in_pread(&r->side.in, ids->offset, raw, n * 8)) {
		free(raw);
		rdr_problem(r, CONV_E_TRUNCATED, ids->offset, 0, "cannot read ids of event %" PRIu64, i);
		return CONV_E_OK;
	}
	cur_init(&ic, raw, n * 8, r->swap);
	cur_u64_array(&ic, v, n);
	free(raw);
	r->info.attrs[idx].ids = v;
	r->info.attrs[idx].nr_ids = n;
	for (size_t k = 0; k < n; k++)
		if (!rdr_add_id(r, v[k], idx))
			return conv_fail(diag, CONV_E_NOMEM, off, "no memory for event ids");
	return CONV_E_OK;
}

/* Entry i of the attrs section (attr_size bytes at p, file offset off): the attr and its ids. */
static enum conv_err read_attr_entry(struct rdr *r, const uint8_t *p, uint64_t attr_size,
				     uint64_t i, uint64_t off, struct conv_diag *diag)
{
	struct cur c;
	struct rdr_attr a;
	struct file_section ids;
	int idx;

	cur_init(&c, p, (size_t)attr_size, r->swap);
	{
		/* the attr is exactly attr_size - 16 bytes, whatever its own size says */
		struct cur ac = cur_sub(&c, (size_t)attr_size - 16);

		rdr_parse_attr(r, &ac, (size_t)attr_size - 16, &a);
		if (a.size > attr_size - 16)
			rdr_problem(r, CONV_E_FORMAT, off, 0,
				    "event %" PRIu64 " says its attr has %" PRIu32
				    " bytes, the header %" PRIu64 "; the header's size is used",
				    i, a.size, attr_size - 16);
	}
	ids.offset = cur_u64(&c);
	ids.size = cur_u64(&c);
	if (!cur_ok(&c))
		return conv_fail(diag, CONV_E_FORMAT, off, "bad attr entry %" PRIu64, i);
	idx = rdr_add_attr(r, &a);
	if (idx < 0)
		return conv_fail(diag, CONV_E_NOMEM, off, "no memory for attrs");
	if (ids.size == 0)
		return CONV_E_OK;
	return read_attr_ids(r, i, off, idx, &ids, diag);
}

/* The header's attr_size and attrs section, checked before anything is read; CONV_E_OK if sound. */
static enum conv_err check_attrs(const struct rdr *r, uint64_t attr_size,
				 const struct file_section *sec, struct conv_diag *diag)
{
	if (attr_size < 16 + 8 || attr_size > 4096)
		return conv_fail(diag, CONV_E_FORMAT, 16,
				 "bad attr_size %" PRIu64 " in the header (perf record not properly terminated?)",
				 attr_size);
	if (!section_ok(r, sec))
		return conv_fail(diag, CONV_E_FORMAT, 24,
				 "attrs section (offset %" PRIu64 ", size %" PRIu64 ") lies outside the file",
				 sec->offset, sec->size);
	if (sec->size / attr_size == 0)
		return conv_fail(diag, CONV_E_FORMAT, 24, "the file has no events (attrs section size %" PRIu64 ")",
				 sec->size);
	if (sec->size > (16u << 20))
		return conv_fail(diag, CONV_E_LIMIT, 24, "attrs section of %" PRIu64 " bytes is too large",
				 sec->size);
	return CONV_E_OK;
}

static enum conv_err read_attrs(struct rdr *r, uint64_t attr_size, const struct file_section *sec,
				struct conv_diag *diag)
{
	enum conv_err err = check_attrs(r, attr_size, sec, diag);
	uint64_t nr;
	uint8_t *buf;

	if (err)
		return err;
	nr = sec->size / attr_size;
	buf = malloc((size_t)sec->size);
	if (!buf)
		return conv_fail(diag, CONV_E_NOMEM, 24, "no memory for the attrs section");
	if (!in_pread(&r->side.in, sec->offset, buf, (size_t)sec->size)) {
		free(buf);
		return conv_fail(diag, CONV_E_TRUNCATED, sec->offset, "cannot read the attrs section");
	}
	for (uint64_t i = 0; i < nr && !err; i++)
		err = read_attr_entry(r, buf + i * attr_size, attr_size, i,
				      sec->offset + i * attr_size, diag);
	free(buf);
	return err;
}

static void read_features(struct rdr *r, const struct file_section *data)
{
	unsigned nfeat = 0;
	uint64_t idx_off;
	uint8_t *index;
	unsigned k = 0;

	for (unsigned i = 0; i < PERF_FEAT_BITS; i++)
		if ((r->info.features[i / 64] >> (i % 64)) & 1u)
			nfeat++;
	if (!nfeat)
		return;
	idx_off = data->offset + data->size;
	index = malloc(nfeat * 16u);
	if (!index)
		return;
	if (!in_pread(&r->side.in, idx_off, index, nfeat * 16u)) {
		rdr_problem(r, CONV_E_TRUNCATED, idx_off, 0,
			    "the feature index (%u features) is missing: the file is truncated", nfeat);
		free(index);
		return;
	}
	for (unsigned i = 0; i < PERF_FEAT_BITS; i++) {
		struct cur c;
		struct file_section s;
		uint8_t *payload;

		if (!((r->info.features[i / 64] >> (i % 64)) & 1u))
			continue;
		cur_init(&c, index + 16u * k, 16, r->swap);
		k++;
		s.offset = cur_u64(&c);
		s.size = cur_u64(&c);
		if (!section_ok(r, &s) || s.size > FEATURE_MAX_BYTES) {
			rdr_problem(r, CONV_E_FORMAT, idx_off + 16u * (k - 1), 0,
				    "feature %u section (offset %" PRIu64 ", size %" PRIu64
				    ") lies outside the file; skipped",
				    i, s.offset, s.size);
			continue;
		}
		payload = malloc(s.size ? (size_t)s.size : 1);
		if (!payload)
			continue;
		if (in_pread(&r->side.in, s.offset, payload, (size_t)s.size))
			rdr_parse_feature(r, i, payload, (size_t)s.size, s.offset, false);
		else
			rdr_problem(r, CONV_E_TRUNCATED, s.offset, 0, "cannot read feature %u", i);
		free(payload);
	}
	free(index);
}

enum conv_err rdr_read_file_header(struct rdr *r, struct conv_diag *diag)
{
	uint8_t hdr[PERF_FILE_HEADER_SIZE];
	struct cur c;
	uint64_t hsize, attr_size;
	struct file_section attrs, data;
	uint64_t fsize = r->info.file_size;
	enum conv_err err;

	memset(hdr, 0, sizeof(hdr));
	if (!in_pread(&r->side.in, 0, hdr, PERF_FILE_HEADER_MIN))
		return conv_fail(diag, CONV_E_TRUNCATED, 0, "the file header is cut short");
	cur_init(&c, hdr, sizeof(hdr), r->swap);
	cur_skip(&c, 8);
	hsize = cur_u64(&c);
	if (hsize >= PERF_FILE_HEADER_SIZE &&
	    !in_pread(&r->side.in, 0, hdr, PERF_FILE_HEADER_SIZE))
		return conv_fail(diag, CONV_E_TRUNCATED, 0, "the file header is cut short");
	attr_size = cur_u64(&c);
	attrs.offset = cur_u64(&c);
	attrs.size = cur_u64(&c);
	data.offset = cur_u64(&c);
	data.size = cur_u64(&c);
	cur_skip(&c, 16); /* event_types: legacy */
	if (hsize >= PERF_FILE_HEADER_SIZE)
		for (int i = 0; i < 4; i++)
			r->info.features[i] = cur_u64(&c);
	r->info.data_offset = data.offset;
	r->info.data_size = data.size;

	err = read_attrs(r, attr_size, &attrs, diag);
	if (err)
		return err;
	rdr_attrs_finish(r, 0);

	if (fsize != UINT64_MAX && data.offset > fsize)
		return conv_fail(diag, CONV_E_TRUNCATED, 40,
				 "data section starts at %" PRIu64 ", after the end of the file (%" PRIu64 " bytes)",
				 data.offset, fsize);
	if (data.size == 0) {
		rdr_problem(r, CONV_E_TRUNCATED, 48, 0,
			    "data size is 0 in the header: perf was stopped before finishing the file; reading to the end");
		r->stats.truncated = true;
		in_seek(&r->side.in, data.offset, UINT64_MAX);
	} else if (fsize != UINT64_MAX && data.size > fsize - data.offset) {
		rdr_problem(r, CONV_E_TRUNCATED, 48, 0,
			    "data section (%" PRIu64 " bytes at %" PRIu64 ") runs past the end of the file (%" PRIu64 " bytes); reading what is there",
			    data.size, data.offset, fsize);
		r->stats.truncated = true;
		in_seek(&r->side.in, data.offset, UINT64_MAX);
	} else {
		read_features(r, &data);
		in_seek(&r->side.in, data.offset, data.offset + data.size);
	}
	rdr_name_attrs(r);
	return CONV_E_OK;
}
