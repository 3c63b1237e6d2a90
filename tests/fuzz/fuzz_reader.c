/*
 * libFuzzer target for the perf.data reader.
 *
 * Opens the input from memory, drains every record and touches everything
 * the decoded event points to (callchains, raw bytes, branch stacks,
 * registers, user stacks, strings...), so that AddressSanitizer sees any view
 * that runs outside its buffer, then walks rdr_info(), the stats and the
 * problem list, and closes the reader. Never prints.
 *
 * Invariants the API documents are checked with FUZZ_CHECK, which aborts so
 * that the fuzzer reports a violation as a crash.
 *
 * Small reorder and problem limits make the forced-flush and problem-dropping
 * paths reachable with inputs of a few KiB; they are ordinary settings of
 * struct rdr_opts, not a special mode of the reader.
 */
#include "reader/perf_abi.h"
#include "reader/reader.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                   \
	do {                                                                               \
		if (!(cond))                                                               \
			abort();                                                           \
	} while (0)

/* Everything read ends up here so that the loads cannot be optimised away. */
static volatile uint64_t sink;

static uint64_t touch_bytes(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s;
}

static uint64_t touch_u64s(const uint64_t *p, uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

static uint64_t touch_str(const char *s)
{
	return s ? strlen(s) + (uint64_t)(unsigned char)s[0] : 0;
}

static uint64_t touch_regs(const struct rdr_regs *regs)
{
	if (!regs->abi)
		return 0;
	FUZZ_CHECK(regs->nr == (uint32_t)__builtin_popcountll(regs->mask));
	return touch_u64s(regs->regs, regs->nr);
}

static uint64_t touch_sample(const struct rdr_sample *s)
{
	uint64_t t = s->ip + s->time + s->addr + s->period + s->id;

	if (s->sample_type & PERF_SAMPLE_READ) {
		for (uint64_t i = 0; i < s->read.nr; i++)
			t += s->read.values[i].value + s->read.values[i].id + s->read.values[i].lost;
	}
	t += touch_u64s(s->callchain, s->callchain_nr);
	if (s->raw_size)
		t += touch_bytes(s->raw, s->raw_size);
	for (uint64_t i = 0; i < s->branch_nr; i++)
		t += s->branches[i].from + s->branches[i].to + s->branches[i].flags;
	if (s->branch_counters)
		t += touch_u64s(s->branch_counters, s->branch_nr);
	t += touch_regs(&s->regs_user);
	t += touch_regs(&s->regs_intr);
	if (s->stack_user_size)
		t += touch_bytes(s->stack_user, (size_t)s->stack_user_size);
	if (s->aux_size)
		t += touch_bytes(s->aux, (size_t)s->aux_size);
	return t;
}

static uint64_t touch_build_id(const struct rdr_build_id *b)
{
	FUZZ_CHECK(b->size <= sizeof(b->id));
	return touch_bytes(b->id, b->size) + touch_str(b->filename) + (uint64_t)b->pid;
}

static uint64_t touch_event(const struct rdr *r, const struct rdr_event *ev)
{
	const struct rdr_info *info = rdr_info(r);
	uint64_t t = ev->type + ev->offset + ev->time;

	/* the raw record is always there: at least its 8-byte header */
	FUZZ_CHECK(ev->raw != NULL && ev->raw_len >= 8);
	t += touch_bytes(ev->raw, ev->raw_len);
	FUZZ_CHECK(ev->attr >= -1 && (ev->attr < 0 || (size_t)ev->attr < info->nr_attrs));
	if (ev->attr >= 0)
		t += info->attrs[ev->attr].sample_type + touch_str(info->attrs[ev->attr].name);

	switch (ev->type) {
	case PERF_REC_SAMPLE:
		FUZZ_CHECK(ev->attr >= 0);
		t += touch_sample(&ev->u.sample);
		break;
	case PERF_REC_MMAP:
	case PERF_REC_MMAP2:
		t += strlen(ev->u.mmap.filename) + ev->u.mmap.start;
		FUZZ_CHECK(ev->u.mmap.build_id_size <= sizeof(ev->u.mmap.build_id));
		t += touch_bytes(ev->u.mmap.build_id, ev->u.mmap.build_id_size);
		break;
	case PERF_REC_COMM:
		t += strlen(ev->u.comm.comm);
		break;
	case PERF_REC_KSYMBOL:
		t += strlen(ev->u.ksymbol.name);
		break;
	case PERF_REC_CGROUP:
		t += strlen(ev->u.cgroup.path);
		break;
	case PERF_REC_CALLCHAIN_DEFERRED:
		t += touch_u64s(ev->u.deferred.ips, ev->u.deferred.nr);
		break;
	case PERF_REC_HEADER_BUILD_ID:
		if (ev->u.build_id)
			t += touch_build_id(ev->u.build_id);
		break;
	case PERF_REC_HEADER_ATTR:
		/* a malformed HEADER_ATTR adds nothing; only index what exists */
		if (ev->u.attr_index >= 0 && (size_t)ev->u.attr_index < info->nr_attrs)
			t += info->attrs[ev->u.attr_index].config;
		break;
	default:
		break;
	}
	return t;
}

static uint64_t touch_info(const struct rdr_info *info)
{
	uint64_t t = info->file_size + info->data_offset + info->data_size;

	t += touch_str(info->hostname) + touch_str(info->osrelease) + touch_str(info->perf_version);
	t += touch_str(info->arch) + touch_str(info->cpudesc) + touch_str(info->cpuid);
	/* cmdline_len and nr_groups count entries that were read, so none is NULL */
	for (size_t i = 0; i < info->cmdline_len; i++) {
		FUZZ_CHECK(info->cmdline[i] != NULL);
		t += touch_str(info->cmdline[i]);
	}
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];

		t += a->config + a->sample_type + touch_str(a->name) + a->samples;
		t += touch_u64s(a->ids, a->nr_ids);
	}
	for (size_t i = 0; i < info->nr_build_ids; i++)
		t += touch_build_id(&info->build_ids[i]);
	for (size_t i = 0; i < info->nr_groups; i++) {
		FUZZ_CHECK(info->groups[i].name != NULL);
		t += touch_str(info->groups[i].name) + info->groups[i].leader_idx +
		     info->groups[i].nr_members;
	}
	if (info->tracing_data_len)
		t += touch_bytes(info->tracing_data, info->tracing_data_len);
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdr_opts opts = {
		.reorder_limit = 16u << 10,
		.max_problems = 16,
	};
	struct conv_diag diag;
	struct rdr *r = NULL;
	const struct rdr_event *ev;
	const struct rdr_stats *st;
	uint64_t t = 0;
	size_t np;
	enum conv_err oerr;

	memset(&diag, 0, sizeof(diag));
	oerr = rdr_open_mem(&r, data, size, &opts, &diag);
	if (oerr != CONV_E_OK) {
		/* a failed open leaves no reader and says why in diag */
		FUZZ_CHECK(r == NULL);
		FUZZ_CHECK(diag.code == oerr);
		FUZZ_CHECK(memchr(diag.msg, 0, sizeof(diag.msg)) != NULL);
		sink += strlen(diag.msg) + touch_str(conv_strerror(diag.code));
		return 0;
	}
	FUZZ_CHECK(r != NULL);
	t += touch_info(rdr_info(r));
	for (;;) {
		enum conv_err err = rdr_next(r, &ev);

		if (err != CONV_E_OK || !ev)
			break;
		t += touch_event(r, ev);
	}
	t += touch_info(rdr_info(r));
	st = rdr_stats(r);
	t += st->samples + st->bytes_read + st->records_unknown + (uint64_t)st->truncated;
	np = rdr_problem_count(r);
	FUZZ_CHECK(np <= opts.max_problems);
	for (size_t i = 0; i < np; i++) {
		const struct rdr_problem *p = rdr_problem_at(r, i);

		FUZZ_CHECK(p != NULL);
		FUZZ_CHECK(memchr(p->msg, 0, sizeof(p->msg)) != NULL);
		t += strlen(p->msg) + p->count + p->offset + touch_str(conv_strerror(p->code));
		t += touch_str(rdr_record_name(p->record_type));
	}
	FUZZ_CHECK(rdr_problem_at(r, np) == NULL);
	t += rdr_problems_dropped(r);
	rdr_close(r);
	sink += t;
	return 0;
}
