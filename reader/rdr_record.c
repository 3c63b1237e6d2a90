/*
 * Decoding of single records. Every record is parsed inside a cursor bounded
 * by its header.size, so a lying field can never read into the next record.
 *
 * Record header (include/uapi/linux/perf_event.h): u32 type, u16 misc, u16 size
 * (size includes the header). Layouts, offsets from the record start:
 *   MMAP   1  u32 pid @8, tid @12, u64 addr @16, len @24, pgoff @32, filename @40
 *   MMAP2 10  as MMAP to @40, then either u32 maj @40, min @44, u64 ino @48,
 *             ino_generation @56, or (misc & 1<<14) u8 build_id_size @40,
 *             3 bytes reserved, u8 build_id[20] @44; u32 prot @64, flags @68, filename @72
 *   COMM   3  u32 pid @8, tid @12, comm @16 (misc & 1<<13: exec)
 *   FORK 7 / EXIT 4  u32 pid @8, ppid @12, tid @16, ptid @20, u64 time @24
 *   LOST   2  u64 id @8, lost @16          LOST_SAMPLES 13  u64 lost @8
 *   THROTTLE 5 / UNTHROTTLE 6  u64 time @8, id @16, stream_id @24
 *   KSYMBOL 17  u64 addr @8, u32 len @16, u16 type @20, u16 flags @22, name @24
 *   CGROUP 19  u64 id @8, path @16
 *   SWITCH 14  nothing (misc: out/preempt); SWITCH_CPU_WIDE 15 u32 pid @8, tid @12
 *   NAMESPACES 16  u32 pid @8, tid @12, u64 nr @16, {u64 dev, ino}[nr] @24
 *   CALLCHAIN_DEFERRED 22  u64 cookie @8, nr @16, ips[nr] @24
 *   ID_INDEX 69  u64 nr @8, {id, idx, cpu, tid}[nr]
 *   THREAD_MAP 73  u64 nr @8, {u64 pid, char comm[16]}[nr]
 *   CPU_MAP 74  u16 type @8, then a cpu list, mask or range
 *   AUXTRACE 71  u64 size @8, offset @16, reference @24, u32 idx @32, tid @36, cpu @40
 *   TIME_CONV 79  u64 shift @8, mult @16, zero @24, [cycles @32, mask @40, u8 zero cap @48, short cap @49]
 * Kernel records (types below 64) other than SAMPLE end with the sample_id
 * trailer when the event has sample_id_all: {u32 pid, tid} {u64 time} {u64 id}
 * {u64 stream_id} {u32 cpu, res} {u64 identifier}, each present by sample_type.
 *
 * SAMPLE 9: fields in this order, each present iff its sample_type bit is set:
 *   IDENTIFIER u64, IP u64, TID u32 pid + u32 tid, TIME u64, ADDR u64, ID u64,
 *   STREAM_ID u64, CPU u32 cpu + u32 res, PERIOD u64, READ (read_format),
 *   CALLCHAIN u64 nr + u64 ips[nr], RAW u32 size + data, BRANCH_STACK u64 nr
 *   [+ u64 hw_idx] + {from, to, flags}[nr] [+ u64 counters[nr]], REGS_USER u64 abi
 *   + regs[popcount(mask)] if abi, STACK_USER u64 size + data + u64 dyn_size if size,
 *   WEIGHT u64 or WEIGHT_STRUCT {u32, u16, u16}, DATA_SRC u64, TRANSACTION u64,
 *   REGS_INTR like REGS_USER, PHYS_ADDR u64, CGROUP u64, DATA_PAGE_SIZE u64,
 *   CODE_PAGE_SIZE u64, AUX u64 size + data (last although its bit is lower).
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static bool has_trailer(uint32_t type)
{
	return type < PERF_REC_HEADER_ATTR && type != PERF_REC_SAMPLE;
}

void rdr_classify(const struct rdr *r, const uint8_t *rec, size_t len, int *attr, bool *has_time,
		  uint64_t *time)
{
	uint32_t type;
	int a = -1;
	const struct rdr_idpos *p;

	*attr = -1;
	*has_time = false;
	*time = 0;
	memcpy(&type, rec, 4);
	if (r->swap)
		type = conv_bswap32(type);
	if (r->info.nr_attrs == 0 || (type != PERF_REC_SAMPLE && !has_trailer(type)))
		return;
	if (r->info.nr_attrs == 1) {
		a = 0;
	} else if (type == PERF_REC_SAMPLE) {
		int idx = r->idpos[0].sample_id_idx;

		if (idx >= 0 && 8u + 8u * (size_t)idx + 8u <= len)
			a = rdr_lookup_id(r, rdr_rd64(r, rec + 8 + 8 * idx));
	} else {
		int idx = r->idpos[0].trailer_id_idx;

		if (idx >= 0 && 8u + 8u * (size_t)idx <= len)
			a = rdr_lookup_id(r, rdr_rd64(r, rec + len - 8u * (size_t)idx));
	}
	*attr = a;
	if (a < 0)
		return;
	p = &r->idpos[a];
	if (type == PERF_REC_SAMPLE) {
		if (p->sample_time_idx >= 0 && 8u + 8u * (size_t)p->sample_time_idx + 8u <= len) {
			*time = rdr_rd64(r, rec + 8 + 8 * p->sample_time_idx);
			*has_time = *time != 0;
		}
		return;
	}
	if (p->trailer_size && (r->info.attrs[a].sample_type & PERF_SAMPLE_TIME) &&
	    p->trailer_size + 8 <= len) {
		size_t toff = len - p->trailer_size;

		if (r->info.attrs[a].sample_type & PERF_SAMPLE_TID)
			toff += 8;
		*time = rdr_rd64(r, rec + toff);
		*has_time = *time != 0 && *time != UINT64_MAX;
	}
}

/* Reads the sample_id trailer at the end of rc (which it shortens). */
static bool parse_trailer(struct rdr *r, struct cur *rc, int attr, struct rdr_sample_id *sid)
{
	const struct rdr_attr *a;
	struct cur t;
	size_t tsize;
	uint64_t st;

	memset(sid, 0, sizeof(*sid));
	if (attr < 0)
		return true;
	a = &r->info.attrs[attr];
	tsize = r->idpos[attr].trailer_size;
	if (!tsize)
		return true;
	if (tsize > cur_remaining(rc))
		return false;
	cur_init(&t, rc->base + rc->len - tsize, tsize, r->swap);
	rc->len -= tsize;
	st = a->sample_type;
	if (st & PERF_SAMPLE_TID) {
		sid->pid = cur_u32(&t);
		sid->tid = cur_u32(&t);
		sid->fields |= RDR_SID_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = cur_u64(&t);
		sid->fields |= RDR_SID_TIME;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = cur_u64(&t);
		sid->fields |= RDR_SID_ID;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = cur_u64(&t);
		sid->fields |= RDR_SID_STREAM_ID;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = cur_u32(&t);
		(void)cur_u32(&t);
		sid->fields |= RDR_SID_CPU;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		sid->id = cur_u64(&t);
		sid->fields |= RDR_SID_ID;
	}
	return cur_ok(&t);
}

/* Decodes an array of n u64 into a reusable scratch buffer. */
static const uint64_t *scratch_u64(struct dbuf *b, struct cur *c, uint64_t n)
{
	if (n > cur_remaining(c) / 8) {
		cur_fail(c);
		return NULL;
	}
	dbuf_reset(b);
	if (!dbuf_reserve(b, (size_t)n * 8 + 8)) {
		cur_fail(c);
		return NULL;
	}
	cur_u64_array(c, (uint64_t *)(void *)b->data, (size_t)n);
	return (const uint64_t *)(void *)b->data;
}

static void parse_regs(struct dbuf *b, struct cur *c, uint64_t mask, struct rdr_regs *regs)
{
	regs->abi = cur_u64(c);
	regs->mask = mask;
	regs->nr = 0;
	regs->regs = NULL;
	if (regs->abi) {
		regs->nr = (uint32_t)__builtin_popcountll(mask);
		regs->regs = scratch_u64(b, c, regs->nr);
	}
}

/* rdr_decode counts on a sample's memset clearing the whole union */
_Static_assert(sizeof(((struct rdr_event *)0)->u) == sizeof(struct rdr_sample),
	       "the sample is the union's largest member");

/* The fixed fields at a sample's start, IDENTIFIER to PERIOD. */
static void sample_head(struct cur *c, uint64_t st, struct rdr_sample *s)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(c);
	if (st & PERF_SAMPLE_IP)
		s->ip = cur_u64(c);
	if (st & PERF_SAMPLE_TID) {
		s->pid = cur_u32(c);
		s->tid = cur_u32(c);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = cur_u64(c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = cur_u64(c);
	if (st & PERF_SAMPLE_ID)
		s->id = cur_u64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		s->stream_id = cur_u64(c);
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = cur_u32(c);
		(void)cur_u32(c);
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = cur_u64(c);
}

/* SAMPLE_READ in the event's read_format; false when malformed (c failed). */
static bool sample_read(struct rdr *r, struct cur *c, uint64_t rf, struct rdr_sample *s)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	struct rdr_read_value *v;

	if (rf & PERF_FORMAT_GROUP) {
		s->read.nr = cur_u64(c);
	} else {
		s->read.nr = 1;
	}
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED && (rf & PERF_FORMAT_GROUP))
		s->read.time_enabled = cur_u64(c);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING && (rf & PERF_FORMAT_GROUP))
		s->read.time_running = cur_u64(c);
	if (s->read.nr > cur_remaining(c) / (8 * per)) {
		cur_fail(c);
		return false;
	}
	dbuf_reset(&r->s_read);
	if (!dbuf_reserve(&r->s_read, (size_t)s->read.nr * sizeof(*v) + 1)) {
		cur_fail(c);
		return false;
	}
	v = (struct rdr_read_value *)(void *)r->s_read.data;
	for (uint64_t i = 0; i < s->read.nr; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].value = cur_u64(c);
		if (!(rf & PERF_FORMAT_GROUP)) {
			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				s->read.time_enabled = cur_u64(c);
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				s->read.time_running = cur_u64(c);
		}
		if (rf & PERF_FORMAT_ID)
			v[i].id = cur_u64(c);
		if (rf & PERF_FORMAT_LOST)
			v[i].lost = cur_u64(c);
	}
	s->read.values = v;
	return true;
}

/* SAMPLE_BRANCH_STACK; false when malformed (c failed). */
static bool sample_branches(struct rdr *r, struct cur *c, const struct rdr_attr *a,
			    struct rdr_sample *s)
{
	struct rdr_branch *b;

	s->branch_nr = cur_u64(c);
	if (a->branch_sample_type & PERF_BRANCH_HW_INDEX) {
		s->branch_has_hw_idx = true;
		s->branch_hw_idx = cur_u64(c);
	}
	if (s->branch_nr > cur_remaining(c) / 24) {
		cur_fail(c);
		return false;
	}
	dbuf_reset(&r->s_branch);
	if (!dbuf_reserve(&r->s_branch, (size_t)s->branch_nr * sizeof(*b) + 1)) {
		cur_fail(c);
		return false;
	}
	b = (struct rdr_branch *)(void *)r->s_branch.data;
	for (uint64_t i = 0; i < s->branch_nr; i++) {
		b[i].from = cur_u64(c);
		b[i].to = cur_u64(c);
		b[i].flags = cur_u64(c);
	}
	s->branches = b;
	if (a->branch_sample_type & PERF_BRANCH_COUNTERS)
		s->branch_counters = scratch_u64(&r->s_counters, c, s->branch_nr);
	return true;
}

/* A size-prefixed view (STACK_USER, AUX): the size, then that many bytes; false when they are not there. */
static bool sample_sized(struct cur *c, uint64_t *size, const uint8_t **data)
{
	*size = cur_u64(c);
	if (*size > cur_remaining(c)) {
		cur_fail(c);
		return false;
	}
	*data = cur_view(c, (size_t)*size);
	return true;
}

/* The fields after REGS_USER and STACK_USER, WEIGHT to AUX; false when malformed. */
static bool sample_tail(struct rdr *r, struct cur *c, const struct rdr_attr *a,
			struct rdr_sample *s)
{
	uint64_t st = a->sample_type;

	if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
		s->weight = cur_u32(c);
		s->weight_var2 = cur_u16(c);
		s->weight_var3 = cur_u16(c);
	} else if (st & PERF_SAMPLE_WEIGHT) {
		s->weight = cur_u64(c);
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = cur_u64(c);
	if (st & PERF_SAMPLE_TRANSACTION)
		s->transaction = cur_u64(c);
	if (st & PERF_SAMPLE_REGS_INTR)
		parse_regs(&r->s_regs_intr, c, a->sample_regs_intr, &s->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = cur_u64(c);
	if (st & PERF_SAMPLE_CGROUP)
		s->cgroup = cur_u64(c);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = cur_u64(c);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = cur_u64(c);
	if ((st & PERF_SAMPLE_AUX) && !sample_sized(c, &s->aux_size, &s->aux))
		return false;
	return true;
}

static bool parse_sample(struct rdr *r, struct cur *c, int attr, struct rdr_sample *s)
{
	const struct rdr_attr *a = &r->info.attrs[attr];
	uint64_t st = a->sample_type;

	memset(s, 0, sizeof(*s));
	s->sample_type = st;
	sample_head(c, st, s);
	if ((st & PERF_SAMPLE_READ) && !sample_read(r, c, a->read_format, s))
		return false;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = cur_u64(c);
		s->callchain = scratch_u64(&r->s_callchain, c, s->callchain_nr);
	}
	if (st & PERF_SAMPLE_RAW) {
		s->raw_size = cur_u32(c);
		s->raw = cur_view(c, s->raw_size);
	}
	if ((st & PERF_SAMPLE_BRANCH_STACK) && !sample_branches(r, c, a, s))
		return false;
	if (st & PERF_SAMPLE_REGS_USER)
		parse_regs(&r->s_regs_user, c, a->sample_regs_user, &s->regs_user);
	if (st & PERF_SAMPLE_STACK_USER) {
		if (!sample_sized(c, &s->stack_user_size, &s->stack_user))
			return false;
		if (s->stack_user_size)
			s->stack_user_dyn_size = cur_u64(c);
	}
	if (!sample_tail(r, c, a, s))
		return false;
	return cur_ok(c);
}

static const char *rest_string(struct cur *c)
{
	return cur_str_rest(c, NULL);
}

static void parse_mmap(struct rdr *r, struct cur *c, uint32_t type, uint16_t misc,
		       struct rdr_mmap *m)
{
	memset(m, 0, sizeof(*m));
	m->pid = cur_u32(c);
	m->tid = cur_u32(c);
	m->start = cur_u64(c);
	m->len = cur_u64(c);
	m->pgoff = cur_u64(c);
	if (type == PERF_REC_MMAP2) {
		m->is_mmap2 = true;
		if (misc & PERF_MISC_MMAP_BUILD_ID) {
			const uint8_t *id;

			m->build_id_size = cur_u8(c);
			cur_skip(c, 3);
			id = cur_view(c, 20);
			if (id)
				memcpy(m->build_id, id, 20);
			if (m->build_id_size > 20)
				m->build_id_size = 20;
			m->has_build_id = m->build_id_size > 0;
		} else {
			m->maj = cur_u32(c);
			m->min = cur_u32(c);
			m->ino = cur_u64(c);
			m->ino_generation = cur_u64(c);
		}
		m->prot = cur_u32(c);
		m->flags = cur_u32(c);
	}
	m->filename = rest_string(c);
	(void)r;
}

static void parse_comm(struct cur *c, uint16_t misc, struct rdr_comm *comm)
{
	comm->pid = cur_u32(c);
	comm->tid = cur_u32(c);
	comm->comm = rest_string(c);
	comm->exec = (misc & PERF_MISC_COMM_EXEC) != 0;
}

static void parse_fork_exit(struct cur *c, struct rdr_event *ev)
{
	ev->u.fork_exit.pid = cur_u32(c);
	ev->u.fork_exit.ppid = cur_u32(c);
	ev->u.fork_exit.tid = cur_u32(c);
	ev->u.fork_exit.ptid = cur_u32(c);
	ev->u.fork_exit.time = cur_u64(c);
	/* records without a trailer still carry their own time */
	if (!ev->has_time && ev->u.fork_exit.time) {
		ev->time = ev->u.fork_exit.time;
		ev->has_time = true;
	}
}

static void parse_switch(struct cur *c, uint32_t type, uint16_t misc, struct rdr_switch *sw)
{
	sw->out = (misc & PERF_MISC_SWITCH_OUT) != 0;
	sw->preempt = (misc & PERF_MISC_SWITCH_OUT_PREEMPT) != 0;
	if (type == PERF_REC_SWITCH_CPU_WIDE) {
		sw->cpu_wide = true;
		sw->next_prev_pid = cur_u32(c);
		sw->next_prev_tid = cur_u32(c);
	}
}

/* ID_INDEX: the number of entries (each checked to be there, none kept). */
static uint64_t parse_id_index(struct cur *c)
{
	uint64_t nr = cur_u64(c);

	if (nr > cur_remaining(c) / 32) {
		cur_fail(c);
		return nr;
	}
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t id = cur_u64(c);

		cur_skip(c, 24); /* idx, cpu, tid */
		(void)id;
	}
	return nr;
}

/* CPU_MAP: the number of CPUs of a list or a range (0 for a mask). */
static uint64_t parse_cpu_map(struct cur *c)
{
	uint16_t t = cur_u16(c);
	uint64_t count = 0;

	if (t == 0) { /* list of cpus */
		uint16_t nr = cur_u16(c);

		count = nr;
		if (nr > cur_remaining(c) / 2)
			cur_fail(c);
	} else if (t == 2) { /* range */
		uint8_t any = cur_u8(c);
		uint16_t start, end;

		(void)any;
		(void)cur_u8(c);
		start = cur_u16(c);
		end = cur_u16(c);
		count = end >= start ? (uint64_t)(end - start) + 1 : 0;
	}
	return count;
}

static void parse_time_conv(struct cur *c, struct rdr_time_conv *tc)
{
	tc->time_shift = cur_u64(c);
	tc->time_mult = cur_u64(c);
	tc->time_zero = cur_u64(c);
	if (cur_remaining(c) >= 18) {
		tc->has_ext = true;
		tc->time_cycles = cur_u64(c);
		tc->time_mask = cur_u64(c);
		tc->cap_user_time_zero = cur_u8(c) != 0;
		tc->cap_user_time_short = cur_u8(c) != 0;
	}
}

/* The body of a record other than SAMPLE into ev->u; the caller checks body. */
static void decode_body(struct rdr *r, struct cur *body, struct rdr_event *ev)
{
	switch (ev->type) {
	case PERF_REC_MMAP:
	case PERF_REC_MMAP2:
		parse_mmap(r, body, ev->type, ev->misc, &ev->u.mmap);
		break;
	case PERF_REC_COMM:
		parse_comm(body, ev->misc, &ev->u.comm);
		break;
	case PERF_REC_FORK:
	case PERF_REC_EXIT:
		parse_fork_exit(body, ev);
		break;
	case PERF_REC_LOST:
		ev->u.lost.id = cur_u64(body);
		ev->u.lost.lost = cur_u64(body);
		break;
	case PERF_REC_LOST_SAMPLES:
		ev->u.lost.lost = cur_u64(body);
		break;
	case PERF_REC_THROTTLE:
	case PERF_REC_UNTHROTTLE:
		ev->u.throttle.time = cur_u64(body);
		ev->u.throttle.id = cur_u64(body);
		ev->u.throttle.stream_id = cur_u64(body);
		break;
	case PERF_REC_KSYMBOL:
		ev->u.ksymbol.addr = cur_u64(body);
		ev->u.ksymbol.len = cur_u32(body);
		ev->u.ksymbol.ksym_type = cur_u16(body);
		ev->u.ksymbol.flags = cur_u16(body);
		ev->u.ksymbol.name = rest_string(body);
		break;
	case PERF_REC_CGROUP:
		ev->u.cgroup.id = cur_u64(body);
		ev->u.cgroup.path = rest_string(body);
		break;
	case PERF_REC_SWITCH:
	case PERF_REC_SWITCH_CPU_WIDE:
		parse_switch(body, ev->type, ev->misc, &ev->u.sw);
		break;
	case PERF_REC_NAMESPACES:
		ev->u.ns.pid = cur_u32(body);
		ev->u.ns.tid = cur_u32(body);
		ev->u.ns.nr = cur_u64(body);
		if (ev->u.ns.nr > cur_remaining(body) / 16)
			cur_fail(body);
		break;
	case PERF_REC_CALLCHAIN_DEFERRED:
		ev->u.deferred.cookie = cur_u64(body);
		ev->u.deferred.nr = cur_u64(body);
		ev->u.deferred.ips = scratch_u64(&r->s_callchain, body, ev->u.deferred.nr);
		break;
	case PERF_REC_READ:
	case PERF_REC_AUX:
	case PERF_REC_ITRACE_START:
	case PERF_REC_BPF_EVENT:
	case PERF_REC_TEXT_POKE:
	case PERF_REC_AUX_OUTPUT_HW_ID:
		/* kept as raw bytes: conv does not use their fields yet */
		break;
	case PERF_REC_ID_INDEX:
		ev->u.count = parse_id_index(body);
		break;
	case PERF_REC_THREAD_MAP:
		ev->u.count = cur_u64(body);
		if (ev->u.count > cur_remaining(body) / 24)
			cur_fail(body);
		break;
	case PERF_REC_CPU_MAP:
		ev->u.count = parse_cpu_map(body);
		break;
	case PERF_REC_AUXTRACE:
		ev->u.auxtrace.size = cur_u64(body);
		ev->u.auxtrace.offset = cur_u64(body);
		ev->u.auxtrace.reference = cur_u64(body);
		ev->u.auxtrace.idx = cur_u32(body);
		ev->u.auxtrace.tid = cur_u32(body);
		ev->u.auxtrace.cpu = cur_u32(body);
		break;
	case PERF_REC_TIME_CONV:
		parse_time_conv(body, &ev->u.time_conv);
		break;
	default:
		break;
	}
}

/* A SAMPLE's body; false when it is not delivered (counted and reported). */
static bool decode_sample(struct rdr *r, struct cur *body, int attr, struct rdr_event *ev)
{
	if (attr < 0) {
		r->stats.samples_unknown_attr++;
		rdr_problem(r, CONV_E_FORMAT, ev->offset, ev->type,
			    "sample with an id that matches no event; skipped");
		return false;
	}
	if (!parse_sample(r, body, attr, &ev->u.sample)) {
		r->stats.samples_malformed++;
		rdr_problem(r, CONV_E_FORMAT, ev->offset, ev->type,
			    "sample fields do not fit in its record of %u bytes; skipped", ev->size);
		return false;
	}
	ev->time = ev->u.sample.time;
	ev->has_time = (ev->u.sample.sample_type & PERF_SAMPLE_TIME) != 0;
	return true;
}

bool rdr_decode(struct rdr *r, const uint8_t *rec, size_t len, uint64_t offset,
		bool in_compressed, int attr)
{
	struct rdr_event *ev = &r->ev;
	struct cur c, body;
	bool ok = true;

	/*
	 * Zeroed once: the header here, the union by its parser (a sample,
	 * the largest member, clears all of it) or below. The whole event
	 * and then the sample again were cleared before: the two clears were
	 * 3 % of a run's instructions.
	 */
	memset(ev, 0, offsetof(struct rdr_event, u));
	cur_init(&c, rec, len, r->swap);
	ev->type = cur_u32(&c);
	ev->misc = cur_u16(&c);
	ev->size = cur_u16(&c);
	ev->offset = offset;
	ev->in_compressed = in_compressed;
	ev->attr = attr;
	ev->raw = rec;
	ev->raw_len = len;
	/* the body ends at header.size; pipe TRACING_DATA and AUXTRACE payloads follow it */
	body = cur_sub(&c, (len < ev->size ? len : ev->size) - 8u);

	if (ev->type == PERF_REC_SAMPLE)
		return decode_sample(r, &body, attr, ev);
	memset(&ev->u, 0, sizeof(ev->u));
	if (has_trailer(ev->type)) {
		if (!parse_trailer(r, &body, attr, &ev->sid)) {
			r->stats.records_malformed++;
			rdr_problem(r, CONV_E_FORMAT, offset, ev->type,
				    "%s record of %u bytes is too short for its sample_id trailer",
				    rdr_record_name(ev->type), ev->size);
			return false;
		}
		ev->has_time = (ev->sid.fields & RDR_SID_TIME) != 0;
		ev->time = ev->sid.time;
	}

	decode_body(r, &body, ev);
	ok = cur_ok(&body);
	if (!ok) {
		r->stats.records_malformed++;
		rdr_problem(r, CONV_E_FORMAT, offset, ev->type,
			    "%s record of %u bytes is too short for its fields; skipped",
			    rdr_record_name(ev->type) ? rdr_record_name(ev->type) : "unknown",
			    ev->size);
	}
	return ok;
}
