/*
 * Reader tests on perf.data bytes built field by field (pdbuild), each run in
 * both byte orders: what the reader decodes must equal what was written.
 * Every test runs twice: without and with read-ahead (rdr_opts.read_ahead).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "tests/unit/pdbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#define ST_BASIC (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)
#define FL_BASIC ((1ull << PERF_ATTR_FLAG_SAMPLE_ID_ALL) | (1ull << PERF_ATTR_FLAG_MMAP2))

/* sample_id trailer for ST_BASIC (+IDENTIFIER when ident) */
static void trailer(struct pdb *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	pdb_u32(p, pid);
	pdb_u32(p, tid);
	pdb_u64(p, time);
}

static void rec_comm(struct pdb *p, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		     uint64_t time)
{
	pdb_rec_begin(p, PERF_REC_COMM, exec ? PERF_MISC_COMM_EXEC : 0);
	pdb_u32(p, pid);
	pdb_u32(p, tid);
	pdb_str8(p, comm);
	trailer(p, pid, tid, time);
	pdb_rec_end(p);
}

static void rec_sample(struct pdb *p, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
		       uint64_t period, const uint64_t *chain, size_t nr)
{
	pdb_rec_begin(p, PERF_REC_SAMPLE, PERF_MISC_USER);
	pdb_u64(p, ip);
	pdb_u32(p, pid);
	pdb_u32(p, tid);
	pdb_u64(p, time);
	pdb_u64(p, period);
	if (chain) {
		pdb_u64(p, nr);
		for (size_t i = 0; i < nr; i++)
			pdb_u64(p, chain[i]);
	}
	pdb_rec_end(p);
}

static void rec_round(struct pdb *p)
{
	pdb_rec_begin(p, PERF_REC_FINISHED_ROUND, 0);
	pdb_rec_end(p);
}

/* The options of every reader the tests open: read_ahead is set for the second run. */
static struct rdr_opts g_opts;

struct collected {
	int n;
	uint32_t types[64];
	uint64_t times[64];
};

static struct rdr *open_ok(const struct pdb *p)
{
	struct rdr *r = NULL;
	struct conv_diag d;

	memset(&d, 0, sizeof(d));
	assert_int_equal(rdr_open_mem(&r, p->b.data, p->b.len, &g_opts, &d), CONV_E_OK);
	assert_non_null(r);
	return r;
}

static void drain(struct rdr *r, struct collected *c)
{
	const struct rdr_event *ev;

	memset(c, 0, sizeof(*c));
	for (;;) {
		assert_int_equal(rdr_next(r, &ev), CONV_E_OK);
		if (!ev)
			break;
		if (c->n < 64) {
			c->types[c->n] = ev->type;
			c->times[c->n] = ev->time;
			c->n++;
		}
	}
}

/* ---- file mode: header, features, the common records ---- */

static void build_basic(struct pdb *p, bool big, bool with_features)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .config = 0, .period = 4000,
			      .sample_type = ST_BASIC | PERF_SAMPLE_CALLCHAIN,
			      .flags = FL_BASIC | (1ull << PERF_ATTR_FLAG_FREQ) };
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000, 0x401234, 0 };
	uint8_t bid[20];
	struct pdb f, bidf, ed, hn;

	pdb_init(p, big);
	pdb_file_begin_one(p, &a, 77);
	rec_comm(p, 100, 100, "prog", true, 1000);
	/* MMAP2 with dev/inode */
	pdb_rec_begin(p, PERF_REC_MMAP2, PERF_MISC_USER);
	pdb_u32(p, 100);
	pdb_u32(p, 100);
	pdb_u64(p, 0x400000);
	pdb_u64(p, 0x2000);
	pdb_u64(p, 0x1000);
	pdb_u32(p, 8);
	pdb_u32(p, 1);
	pdb_u64(p, 123456);
	pdb_u64(p, 9);
	pdb_u32(p, 5);
	pdb_u32(p, 2);
	pdb_str8(p, "/usr/bin/prog");
	trailer(p, 100, 100, 1100);
	pdb_rec_end(p);
	/* MMAP2 with an inline build-id */
	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0xa0 + i);
	pdb_rec_begin(p, PERF_REC_MMAP2, PERF_MISC_USER | PERF_MISC_MMAP_BUILD_ID);
	pdb_u32(p, 100);
	pdb_u32(p, 100);
	pdb_u64(p, 0x7f0000000000);
	pdb_u64(p, 0x10000);
	pdb_u64(p, 0);
	pdb_u8(p, 20);
	pdb_u8(p, 0);
	pdb_u16(p, 0);
	pdb_bytes(p, bid, 20);
	pdb_u32(p, 5);
	pdb_u32(p, 2);
	pdb_str8(p, "/lib/libc.so.6");
	trailer(p, 100, 100, 1200);
	pdb_rec_end(p);
	/* FORK */
	pdb_rec_begin(p, PERF_REC_FORK, 0);
	pdb_u32(p, 101);
	pdb_u32(p, 100);
	pdb_u32(p, 101);
	pdb_u32(p, 100);
	pdb_u64(p, 1300);
	trailer(p, 101, 101, 1300);
	pdb_rec_end(p);
	rec_sample(p, 0x401000, 100, 100, 1400, 250000, chain, 4);
	/* LOST */
	pdb_rec_begin(p, PERF_REC_LOST, 0);
	pdb_u64(p, 77);
	pdb_u64(p, 5);
	trailer(p, 100, 100, 1500);
	pdb_rec_end(p);
	pdb_rec_begin(p, PERF_REC_EXIT, 0);
	pdb_u32(p, 101);
	pdb_u32(p, 100);
	pdb_u32(p, 101);
	pdb_u32(p, 100);
	pdb_u64(p, 1600);
	trailer(p, 101, 101, 1600);
	pdb_rec_end(p);
	rec_round(p);
	if (!with_features) {
		pdb_file_end(p, NULL, 0);
		return;
	}
	/* BUILD_ID: one with the size flag (16 bytes), one legacy with trailing zero groups */
	pdb_init(&bidf, big);
	pdb_rec_begin(&bidf, 0, PERF_MISC_USER | PERF_MISC_BUILD_ID_SIZE);
	pdb_u32(&bidf, (uint32_t)-1);
	pdb_bytes(&bidf, bid, 20);
	pdb_u8(&bidf, 16);
	pdb_u8(&bidf, 0);
	pdb_u16(&bidf, 0);
	pdb_str8(&bidf, "/usr/bin/prog");
	pdb_rec_end(&bidf);
	memset(bid + 12, 0, 8);
	pdb_rec_begin(&bidf, 0, PERF_MISC_KERNEL);
	pdb_u32(&bidf, (uint32_t)-1);
	pdb_bytes(&bidf, bid, 20);
	pdb_u32(&bidf, 0);
	pdb_str8(&bidf, "[kernel.kallsyms]");
	pdb_rec_end(&bidf);
	pdb_init(&hn, big);
	pdb_hstr(&hn, "testhost");
	pdb_init(&ed, big);
	pdb_u32(&ed, 1);
	pdb_u32(&ed, 128);
	pdb_attr(&ed, &a);
	pdb_u32(&ed, 1);
	pdb_hstr(&ed, "cpu-clock:ppp");
	pdb_u64(&ed, 77);
	{
		struct pdb_feature feats[] = {
			{ PERF_FEAT_BUILD_ID, bidf.b.data, bidf.b.len },
			{ PERF_FEAT_HOSTNAME, hn.b.data, hn.b.len },
			{ PERF_FEAT_EVENT_DESC, ed.b.data, ed.b.len },
		};

		pdb_file_end(p, feats, 3);
	}
	pdb_release(&bidf);
	pdb_release(&hn);
	pdb_release(&ed);
	(void)f;
}

static void check_basic(bool big)
{
	struct pdb p;
	struct rdr *r;
	const struct rdr_info *info;
	const struct rdr_event *ev;
	int seen = 0;

	build_basic(&p, big, true);
	r = open_ok(&p);
	info = rdr_info(r);
	assert_int_equal(info->mode, RDR_MODE_FILE);
	assert_int_equal(info->big_endian, big);
	assert_int_equal(info->nr_attrs, 1);
	assert_true(info->attrs[0].freq);
	assert_true(info->attrs[0].sample_id_all);
	assert_int_equal(info->attrs[0].sample_period, 4000);
	assert_string_equal(info->attrs[0].name, "cpu-clock:ppp");
	assert_string_equal(info->hostname, "testhost");
	assert_int_equal(info->nr_build_ids, 2);
	assert_int_equal(info->build_ids[0].size, 16);
	assert_string_equal(info->build_ids[0].filename, "/usr/bin/prog");
	assert_int_equal(info->build_ids[1].size, 12); /* legacy: trailing zero groups trimmed */
	assert_int_equal(info->build_ids[1].id[0], 0xa0);
	assert_string_equal(info->build_ids[1].filename, "[kernel.kallsyms]");

	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		switch (ev->type) {
		case PERF_REC_COMM:
			assert_string_equal(ev->u.comm.comm, "prog");
			assert_true(ev->u.comm.exec);
			assert_int_equal(ev->time, 1000);
			seen |= 1;
			break;
		case PERF_REC_MMAP2:
			if (ev->u.mmap.has_build_id) {
				assert_int_equal(ev->u.mmap.build_id_size, 20);
				assert_int_equal(ev->u.mmap.build_id[19], 0xa0 + 19);
				assert_string_equal(ev->u.mmap.filename, "/lib/libc.so.6");
				seen |= 2;
			} else {
				assert_int_equal(ev->u.mmap.start, 0x400000);
				assert_int_equal(ev->u.mmap.len, 0x2000);
				assert_int_equal(ev->u.mmap.pgoff, 0x1000);
				assert_int_equal(ev->u.mmap.maj, 8);
				assert_int_equal(ev->u.mmap.ino, 123456);
				assert_int_equal(ev->u.mmap.prot, 5);
				assert_string_equal(ev->u.mmap.filename, "/usr/bin/prog");
				seen |= 4;
			}
			break;
		case PERF_REC_FORK:
			assert_int_equal(ev->u.fork_exit.pid, 101);
			assert_int_equal(ev->u.fork_exit.ppid, 100);
			seen |= 8;
			break;
		case PERF_REC_SAMPLE:
			assert_int_equal(ev->u.sample.ip, 0x401000);
			assert_int_equal(ev->u.sample.pid, 100);
			assert_int_equal(ev->u.sample.time, 1400);
			assert_int_equal(ev->u.sample.period, 250000);
			assert_int_equal(ev->u.sample.callchain_nr, 4);
			assert_true(ev->u.sample.callchain[0] == PERF_CONTEXT_USER);
			assert_int_equal(ev->u.sample.callchain[2], 0x401234);
			assert_int_equal(ev->attr, 0);
			seen |= 16;
			break;
		case PERF_REC_LOST:
			assert_int_equal(ev->u.lost.lost, 5);
			seen |= 32;
			break;
		case PERF_REC_EXIT:
			assert_int_equal(ev->time, 1600);
			seen |= 64;
			break;
		default:
			break;
		}
	}
	assert_int_equal(seen, 127);
	assert_int_equal(rdr_stats(r)->samples, 1);
	assert_int_equal(rdr_stats(r)->lost_events, 5);
	assert_int_equal(rdr_problem_count(r), 0);
	assert_int_equal(info->attrs[0].samples, 1);
	rdr_close(r);
	pdb_release(&p);
}

static void test_file_basic_le(void **state)
{
	(void)state;
	check_basic(false);
}

static void test_file_basic_be(void **state)
{
	(void)state;
	check_basic(true);
}

/* ---- every sample_type field ---- */

#define ST_ALL                                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |           \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |         \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |              \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |             \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                     \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

static void check_all_fields(bool big, bool group)
{
	struct pdb_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.period = 1000,
		.sample_type = ST_ALL,
		.read_format = (group ? PERF_FORMAT_GROUP : 0) | PERF_FORMAT_ID |
			       PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			       PERF_FORMAT_LOST,
		.flags = FL_BASIC,
		.branch_sample_type = PERF_BRANCH_HW_INDEX,
		.regs_user = 0xb, /* 3 registers */
		.stack_user = 16,
		.regs_intr = 0x3,
	};
	struct pdb p;
	struct rdr *r;
	const struct rdr_event *ev;
	const struct rdr_sample *s;
	const uint8_t raw[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	const uint8_t stack[16] = { 0xde, 0xad, 0xbe, 0xef };
	const uint8_t aux[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	int samples = 0;

	pdb_init(&p, big);
	pdb_file_begin_one(&p, &a, 5);
	pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_USER);
	pdb_u64(&p, 5);          /* identifier */
	pdb_u64(&p, 0x1111);     /* ip */
	pdb_u32(&p, 42);         /* pid */
	pdb_u32(&p, 43);         /* tid */
	pdb_u64(&p, 999);        /* time */
	pdb_u64(&p, 0xadd0);    /* addr */
	pdb_u64(&p, 5);          /* id */
	pdb_u64(&p, 6);          /* stream_id */
	pdb_u32(&p, 3);          /* cpu */
	pdb_u32(&p, 0);
	pdb_u64(&p, 1000);       /* period */
	if (group) {
		pdb_u64(&p, 2);  /* nr */
		pdb_u64(&p, 70); /* time_enabled */
		pdb_u64(&p, 60); /* time_running */
		pdb_u64(&p, 11); /* value */
		pdb_u64(&p, 5);  /* id */
		pdb_u64(&p, 0);  /* lost */
		pdb_u64(&p, 12);
		pdb_u64(&p, 6);
		pdb_u64(&p, 1);
	} else {
		pdb_u64(&p, 11); /* value */
		pdb_u64(&p, 70);
		pdb_u64(&p, 60);
		pdb_u64(&p, 5);
		pdb_u64(&p, 0);
	}
	pdb_u64(&p, 2);          /* callchain */
	pdb_u64(&p, PERF_CONTEXT_USER);
	pdb_u64(&p, 0x1111);
	pdb_u32(&p, 12);         /* raw: u32 + 12 bytes = 16, 8-aligned */
	pdb_bytes(&p, raw, 12);
	pdb_u64(&p, 1);          /* branch nr */
	pdb_u64(&p, 7);          /* hw_idx */
	pdb_u64(&p, 0x10);
	pdb_u64(&p, 0x20);
	pdb_u64(&p, 0x3);
	pdb_u64(&p, 2);          /* regs_user abi */
	pdb_u64(&p, 100);
	pdb_u64(&p, 101);
	pdb_u64(&p, 102);
	pdb_u64(&p, 16);         /* stack size */
	pdb_bytes(&p, stack, 16);
	pdb_u64(&p, 8);          /* dyn_size */
	pdb_u32(&p, 300);        /* weight struct */
	pdb_u16(&p, 4);
	pdb_u16(&p, 5);
	pdb_u64(&p, 0x5a);       /* data_src */
	pdb_u64(&p, 0x7);        /* transaction */
	pdb_u64(&p, 0);          /* regs_intr abi 0: no registers */
	pdb_u64(&p, 0xfeed);     /* phys_addr */
	pdb_u64(&p, 88);         /* cgroup */
	pdb_u64(&p, 4096);       /* data page size */
	pdb_u64(&p, 2u << 20);   /* code page size */
	pdb_u64(&p, 8);          /* aux size */
	pdb_bytes(&p, aux, 8);
	pdb_rec_end(&p);
	pdb_file_end(&p, NULL, 0);

	r = open_ok(&p);
	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		if (ev->type != PERF_REC_SAMPLE)
			continue;
		samples++;
		s = &ev->u.sample;
		assert_int_equal(s->ip, 0x1111);
		assert_int_equal(s->pid, 42);
		assert_int_equal(s->tid, 43);
		assert_int_equal(s->time, 999);
		assert_int_equal(s->addr, 0xadd0);
		assert_int_equal(s->id, 5);
		assert_int_equal(s->stream_id, 6);
		assert_int_equal(s->cpu, 3);
		assert_int_equal(s->period, 1000);
		assert_int_equal(s->read.time_enabled, 70);
		assert_int_equal(s->read.time_running, 60);
		assert_int_equal(s->read.nr, group ? 2 : 1);
		assert_int_equal(s->read.values[0].value, 11);
		assert_int_equal(s->read.values[0].id, 5);
		if (group) {
			assert_int_equal(s->read.values[1].value, 12);
			assert_int_equal(s->read.values[1].lost, 1);
		}
		assert_int_equal(s->callchain_nr, 2);
		assert_int_equal(s->raw_size, 12);
		assert_memory_equal(s->raw, raw, 12);
		assert_int_equal(s->branch_nr, 1);
		assert_true(s->branch_has_hw_idx);
		assert_int_equal(s->branch_hw_idx, 7);
		assert_int_equal(s->branches[0].from, 0x10);
		assert_int_equal(s->branches[0].to, 0x20);
		assert_int_equal(s->regs_user.abi, 2);
		assert_int_equal(s->regs_user.nr, 3);
		assert_int_equal(s->regs_user.regs[2], 102);
		assert_int_equal(s->stack_user_size, 16);
		assert_memory_equal(s->stack_user, stack, 16);
		assert_int_equal(s->stack_user_dyn_size, 8);
		assert_int_equal(s->weight, 300);
		assert_int_equal(s->weight_var2, 4);
		assert_int_equal(s->weight_var3, 5);
		assert_int_equal(s->data_src, 0x5a);
		assert_int_equal(s->transaction, 7);
		assert_int_equal(s->regs_intr.abi, 0);
		assert_int_equal(s->regs_intr.nr, 0);
		assert_int_equal(s->phys_addr, 0xfeed);
		assert_int_equal(s->cgroup, 88);
		assert_int_equal(s->data_page_size, 4096);
		assert_int_equal(s->code_page_size, 2u << 20);
		assert_int_equal(s->aux_size, 8);
		assert_memory_equal(s->aux, aux, 8);
	}
	assert_int_equal(samples, 1);
	assert_int_equal(rdr_problem_count(r), 0);
	rdr_close(r);
	pdb_release(&p);
}

static void test_all_fields(void **state)
{
	(void)state;
	check_all_fields(false, true);
	check_all_fields(true, true);
	check_all_fields(false, false);
	check_all_fields(true, false);
}

/* ---- time order: perf's FINISHED_ROUND rule ---- */

static void test_ordering(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC, .flags = FL_BASIC };
	struct pdb p;
	struct rdr *r;
	struct collected c;
	static const uint64_t want[] = { 5, 10, 20, 25, 30, 15, 40 };
	(void)state;

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	rec_sample(&p, 1, 1, 1, 30, 1, NULL, 0);
	rec_sample(&p, 1, 1, 1, 10, 1, NULL, 0);
	rec_comm(&p, 1, 1, "synth", false, 0); /* no time: goes out at once */
	rec_sample(&p, 1, 1, 1, 20, 1, NULL, 0);
	rec_round(&p); /* flushes nothing: nothing was seen before the previous round */
	rec_sample(&p, 1, 1, 1, 25, 1, NULL, 0);
	rec_sample(&p, 1, 1, 1, 5, 1, NULL, 0);
	rec_round(&p); /* flushes up to 30 */
	rec_sample(&p, 1, 1, 1, 40, 1, NULL, 0);
	rec_sample(&p, 1, 1, 1, 15, 1, NULL, 0); /* below what was delivered: a violation */
	pdb_file_end(&p, NULL, 0);
	r = open_ok(&p);
	drain(r, &c);
	assert_int_equal(c.n, 8);
	assert_int_equal(c.types[0], PERF_REC_COMM);
	/* queued records come sorted; 15 arrived after 30 went out, so it trails 30 */
	{
		uint64_t got[7];

		for (int i = 0; i < 7; i++)
			got[i] = c.times[i + 1];
		assert_int_equal(got[0], want[0]);
		assert_int_equal(got[4], want[4]);
		assert_int_equal(got[5], 15);
		assert_int_equal(got[6], 40);
	}
	assert_int_equal(rdr_stats(r)->time_order_violations, 1);
	rdr_close(r);
	pdb_release(&p);
}

/*
 * A round of R sorted runs (one per CPU buffer, as perf writes them) comes
 * out as a stable sort by time: ties in file order. Runs overlap and share
 * times; R from 2 to 20 covers the one-pass merge (up to 8 runs) and the
 * pairwise passes beyond it. The IP carries each record's file position.
 */
static void test_ordering_runs(void **state)
{
	static const size_t nr_runs[] = { 2, 3, 8, 9, 20 };
	(void)state;

	for (size_t t = 0; t < sizeof(nr_runs) / sizeof(nr_runs[0]); t++) {
		struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC,
				      .flags = FL_BASIC };
		size_t runs = nr_runs[t], per = 7, n = runs * per, got = 0;
		uint64_t times[20 * 7], want[20 * 7];
		struct pdb p;
		struct rdr *r;
		const struct rdr_event *ev;

		pdb_init(&p, false);
		pdb_file_begin_one(&p, &a, 1);
		for (size_t j = 0; j < runs; j++) {
			for (size_t i = 0; i < per; i++) {
				/* each run ascending from a low start: the runs overlap, with ties */
				times[j * per + i] = 100 + (j % 3) + 2 * i;
				rec_sample(&p, j * per + i, 1, 1, times[j * per + i], 1, NULL, 0);
			}
		}
		pdb_file_end(&p, NULL, 0);
		/* the expected order: file positions stably sorted by time (insertion sort) */
		for (size_t i = 0; i < n; i++) {
			size_t k = i;

			while (k > 0 && times[want[k - 1]] > times[i]) {
				want[k] = want[k - 1];
				k--;
			}
			want[k] = i;
		}
		r = open_ok(&p);
		for (;;) {
			assert_int_equal(rdr_next(r, &ev), CONV_E_OK);
			if (!ev)
				break;
			if (ev->type != PERF_REC_SAMPLE)
				continue;
			assert_true(got < n);
			assert_int_equal(ev->u.sample.ip, want[got]);
			got++;
		}
		assert_int_equal(got, n);
		assert_int_equal(rdr_stats(r)->time_order_violations, 0);
		rdr_close(r);
		pdb_release(&p);
	}
}

/* ---- pipe mode metadata records ---- */

static const char sched_switch_fmt[] =
	"name: sched_switch\n"
	"ID: 316\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int prev_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_pid=%d\", REC->prev_pid\n";

static void tracing_blob(struct pdb *t)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

	pdb_bytes(t, magic, 10);
	pdb_bytes(t, "0.6", 4);
	pdb_u8(t, t->big);
	pdb_u8(t, 8);
	pdb_u32(t, 4096);
	pdb_bytes(t, "header_page", 12);
	pdb_u64(t, 0);
	pdb_bytes(t, "header_event", 13);
	pdb_u64(t, 0);
	pdb_u32(t, 0);        /* ftrace formats */
	pdb_u32(t, 1);        /* systems */
	pdb_bytes(t, "sched", 6);
	pdb_u32(t, 1);
	pdb_u64(t, sizeof(sched_switch_fmt) - 1);
	pdb_bytes(t, sched_switch_fmt, sizeof(sched_switch_fmt) - 1);
	pdb_u32(t, 0);        /* kallsyms */
	pdb_u32(t, 0);        /* printk */
	pdb_u64(t, 0);        /* saved cmdlines */
	while (t->b.len % 8)
		pdb_u8(t, 0);
}

static void check_pipe(bool big, bool tracing_pad)
{
	struct pdb_attr a = { .type = PERF_TYPE_TRACEPOINT, .config = 316, .period = 1,
			      .sample_type = ST_BASIC | PERF_SAMPLE_RAW, .flags = FL_BASIC };
	struct pdb p, t;
	struct rdr *r;
	const struct rdr_event *ev;
	const struct rdr_info *info;
	uint8_t bid[20] = { 0x11, 0x22 };
	int samples = 0, builds = 0;

	pdb_init(&p, big);
	pdb_pipe_header(&p);
	pdb_rec_begin(&p, PERF_REC_HEADER_ATTR, 0);
	pdb_attr(&p, &a);
	pdb_u64(&p, 31);
	pdb_u64(&p, 32);
	pdb_rec_end(&p);
	pdb_rec_begin(&p, PERF_REC_HEADER_FEATURE, 0);
	pdb_u64(&p, PERF_FEAT_HOSTNAME);
	pdb_hstr(&p, "pipehost");
	pdb_rec_end(&p);
	pdb_rec_begin(&p, PERF_REC_HEADER_FEATURE, 0);
	pdb_u64(&p, 32); /* end marker: empty payload */
	pdb_rec_end(&p);
	/* tracing data: the blob follows outside header.size */
	pdb_init(&t, big);
	tracing_blob(&t);
	pdb_rec_begin(&p, PERF_REC_HEADER_TRACING_DATA, 0);
	pdb_u32(&p, (uint32_t)t.b.len);
	if (tracing_pad)
		pdb_u32(&p, 0);
	pdb_rec_end(&p);
	pdb_bytes(&p, t.b.data, t.b.len);
	pdb_release(&t);
	pdb_rec_begin(&p, PERF_REC_HEADER_BUILD_ID, PERF_MISC_USER | PERF_MISC_BUILD_ID_SIZE);
	pdb_u32(&p, (uint32_t)-1);
	pdb_bytes(&p, bid, 20);
	pdb_u8(&p, 20);
	pdb_u8(&p, 0);
	pdb_u16(&p, 0);
	pdb_str8(&p, "/bin/x");
	pdb_rec_end(&p);
	pdb_rec_begin(&p, PERF_REC_FINISHED_INIT, 0);
	pdb_rec_end(&p);
	pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_KERNEL);
	pdb_u64(&p, 0xffffffff81000000ull);
	pdb_u32(&p, 9);
	pdb_u32(&p, 9);
	pdb_u64(&p, 5000);
	pdb_u64(&p, 1);
	pdb_u32(&p, 4);
	pdb_u32(&p, 0xcafe);
	pdb_rec_end(&p);

	r = open_ok(&p);
	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		if (ev->type == PERF_REC_SAMPLE) {
			samples++;
			assert_int_equal(ev->u.sample.raw_size, 4);
			assert_int_equal(ev->u.sample.time, 5000);
		}
		if (ev->type == PERF_REC_HEADER_BUILD_ID) {
			builds++;
			assert_non_null(ev->u.build_id);
			assert_string_equal(ev->u.build_id->filename, "/bin/x");
		}
	}
	info = rdr_info(r);
	assert_int_equal(info->mode, RDR_MODE_PIPE);
	assert_int_equal(samples, 1);
	assert_int_equal(builds, 1);
	assert_int_equal(info->nr_attrs, 1);
	assert_int_equal(info->attrs[0].nr_ids, 2);
	assert_string_equal(info->hostname, "pipehost");
	assert_non_null(info->tracing_data);
	assert_string_equal(info->attrs[0].name, "sched:sched_switch");
	assert_int_equal(info->nr_build_ids, 1);
	assert_int_equal(info->build_ids[0].source, RDR_BID_PIPE);
	assert_int_equal(rdr_problem_count(r), 0);
	rdr_close(r);
	pdb_release(&p);
}

static void test_pipe(void **state)
{
	(void)state;
	check_pipe(false, false);
	check_pipe(false, true);
	check_pipe(true, false);
	check_pipe(true, true);
}

/* ---- compressed records: one zstd stream, records straddle payloads ---- */

static void check_compressed(uint32_t ctype)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC, .flags = FL_BASIC };
	struct pdb p, inner;
	struct rdr *r;
	struct collected c;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	uint8_t out[4096];
	size_t split;
	int samples = 0;

	pdb_init(&inner, false);
	rec_comm(&inner, 1, 1, "z", true, 10);
	for (int i = 0; i < 5; i++)
		rec_sample(&inner, 0x1000u + (unsigned)i, 1, 1, 20u + (unsigned)i, 1, NULL, 0);
	rec_round(&inner);
	split = inner.b.len / 2 + 3; /* inside a record */

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	for (int part = 0; part < 2; part++) {
		ZSTD_inBuffer in = { inner.b.data + (part ? split : 0),
				     part ? inner.b.len - split : split, 0 };
		ZSTD_outBuffer o = { out, sizeof(out), 0 };

		/* perf flushes at record boundaries without ending the frame */
		ZSTD_compressStream2(cc, &o, &in, ZSTD_e_flush);
		assert_int_equal(in.pos, in.size);
		pdb_rec_begin(&p, ctype, 0);
		if (ctype == PERF_REC_COMPRESSED2)
			pdb_u64(&p, o.pos);
		pdb_bytes(&p, out, o.pos);
		while (ctype == PERF_REC_COMPRESSED2 && (p.b.len - p.rec_start) % 8)
			pdb_u8(&p, 0);
		pdb_rec_end(&p);
	}
	pdb_file_end(&p, NULL, 0);
	ZSTD_freeCCtx(cc);

	r = open_ok(&p);
	drain(r, &c);
	for (int i = 0; i < c.n; i++)
		if (c.types[i] == PERF_REC_SAMPLE)
			samples++;
	assert_int_equal(samples, 5);
	assert_int_equal(c.types[0], PERF_REC_COMM);
	assert_int_equal(rdr_stats(r)->records[ctype], 2);
	assert_int_equal(rdr_stats(r)->records[PERF_REC_SAMPLE], 5);
	assert_int_equal(rdr_problem_count(r), 0);
	rdr_close(r);
	pdb_release(&p);
	pdb_release(&inner);
}

static void test_compressed(void **state)
{
	(void)state;
	check_compressed(PERF_REC_COMPRESSED);
	check_compressed(PERF_REC_COMPRESSED2);
}

/* ---- deferred user callchains ---- */

static void test_deferred(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE,
			      .sample_type = ST_BASIC | PERF_SAMPLE_CALLCHAIN, .flags = FL_BASIC };
	const uint64_t chain_a[] = { PERF_CONTEXT_KERNEL, 0xffff1, 0xffff2, PERF_CONTEXT_USER_DEFERRED, 99 };
	const uint64_t chain_b[] = { PERF_CONTEXT_KERNEL, 0xffff3, PERF_CONTEXT_USER_DEFERRED, 5 };
	struct pdb p;
	struct rdr *r;
	const struct rdr_event *ev;
	int got_a = 0, got_b = 0;
	(void)state;

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	rec_sample(&p, 0xffff1, 7, 7, 100, 1, chain_a, 5);
	rec_sample(&p, 0xffff3, 8, 8, 110, 1, chain_b, 4);
	pdb_rec_begin(&p, PERF_REC_CALLCHAIN_DEFERRED, 0);
	pdb_u64(&p, 99);
	pdb_u64(&p, 3);
	pdb_u64(&p, PERF_CONTEXT_USER);
	pdb_u64(&p, 0x401000);
	pdb_u64(&p, 0x402000);
	trailer(&p, 7, 7, 120);
	pdb_rec_end(&p);
	pdb_rec_begin(&p, PERF_REC_EXIT, 0);
	pdb_u32(&p, 8);
	pdb_u32(&p, 8);
	pdb_u32(&p, 8);
	pdb_u32(&p, 8);
	pdb_u64(&p, 130);
	trailer(&p, 8, 8, 130);
	pdb_rec_end(&p);
	pdb_file_end(&p, NULL, 0);

	r = open_ok(&p);
	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		const struct rdr_sample *s = &ev->u.sample;

		if (ev->type != PERF_REC_SAMPLE)
			continue;
		if (s->tid == 7) {
			got_a++;
			assert_true(s->callchain_deferred_merged);
			assert_int_equal(s->callchain_nr, 6);
			assert_int_equal(s->callchain[2], 0xffff2);
			assert_true(s->callchain[3] == PERF_CONTEXT_USER);
			assert_int_equal(s->callchain[5], 0x402000);
			assert_int_equal(s->time, 100);
		} else {
			got_b++;
			assert_true(s->callchain_deferred_missing);
			assert_int_equal(s->callchain_nr, 2);
		}
	}
	assert_int_equal(got_a, 1);
	assert_int_equal(got_b, 1);
	assert_int_equal(rdr_stats(r)->deferred_merged, 1);
	assert_int_equal(rdr_stats(r)->deferred_unmatched, 1);
	assert_int_equal(rdr_stats(r)->samples, 2);
	rdr_close(r);
	pdb_release(&p);
}

/* ---- several events: id -> attr ---- */

static void test_multi_attr(void **state)
{
	struct pdb_attr a[2] = {
		{ .type = PERF_TYPE_SOFTWARE, .config = 0,
		  .sample_type = ST_BASIC | PERF_SAMPLE_IDENTIFIER, .flags = FL_BASIC },
		{ .type = PERF_TYPE_SOFTWARE, .config = 2,
		  .sample_type = ST_BASIC | PERF_SAMPLE_IDENTIFIER, .flags = FL_BASIC },
	};
	static const uint64_t ids0[] = { 11, 12 }, ids1[] = { 22 };
	const uint64_t *ids[] = { ids0, ids1 };
	size_t nids[] = { 2, 1 };
	const uint64_t sids[] = { 11, 22, 12, 33 };
	struct pdb p;
	struct rdr *r;
	struct collected c;
	(void)state;

	pdb_init(&p, true);
	pdb_file_begin(&p, a, ids, nids, 2);
	for (int i = 0; i < 4; i++) {
		pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_USER);
		pdb_u64(&p, sids[i]);
		pdb_u64(&p, 0x10);
		pdb_u32(&p, 1);
		pdb_u32(&p, 1);
		pdb_u64(&p, 100u + (unsigned)i);
		pdb_u64(&p, 1);
		pdb_rec_end(&p);
	}
	pdb_file_end(&p, NULL, 0);
	r = open_ok(&p);
	drain(r, &c);
	assert_int_equal(rdr_info(r)->attrs[0].samples, 2);
	assert_int_equal(rdr_info(r)->attrs[1].samples, 1);
	assert_string_equal(rdr_info(r)->attrs[0].name, "cpu-clock");
	assert_string_equal(rdr_info(r)->attrs[1].name, "page-faults");
	assert_int_equal(rdr_stats(r)->samples_unknown_attr, 1);
	assert_int_equal(rdr_problem_count(r), 1);
	rdr_close(r);
	pdb_release(&p);
}

/* ---- damaged input ---- */

static void test_truncated(void **state)
{
	struct pdb p;
	struct rdr *r;
	struct collected c;
	size_t full;
	(void)state;

	build_basic(&p, false, false);
	full = p.b.len;
	/* cut inside the EXIT record: the feature index is gone too */
	p.b.len = full - 8 - 20;
	r = open_ok(&p);
	drain(r, &c);
	assert_true(rdr_stats(r)->truncated);
	assert_int_equal(rdr_stats(r)->samples, 1);
	assert_true(rdr_problem_count(r) >= 1);
	rdr_close(r);

	/* data.size 0: perf killed before rewriting the header */
	p.b.len = full;
	pdb_put_u64_at(&p, 48, 0);
	r = open_ok(&p);
	drain(r, &c);
	assert_int_equal(rdr_stats(r)->samples, 1);
	assert_true(rdr_stats(r)->truncated);
	rdr_close(r);
	pdb_release(&p);
}

static void test_malformed_sample(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE,
			      .sample_type = ST_BASIC | PERF_SAMPLE_CALLCHAIN, .flags = FL_BASIC };
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x1 };
	struct pdb p;
	struct rdr *r;
	struct collected c;
	(void)state;

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	rec_sample(&p, 1, 1, 1, 10, 1, chain, 2);
	/* callchain nr far beyond the record */
	pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_USER);
	pdb_u64(&p, 1);
	pdb_u32(&p, 1);
	pdb_u32(&p, 1);
	pdb_u64(&p, 11);
	pdb_u64(&p, 1);
	pdb_u64(&p, 1000000);
	pdb_u64(&p, 1);
	pdb_rec_end(&p);
	rec_sample(&p, 1, 1, 1, 12, 1, chain, 2);
	pdb_file_end(&p, NULL, 0);
	r = open_ok(&p);
	drain(r, &c);
	assert_int_equal(rdr_stats(r)->samples, 2);
	assert_int_equal(rdr_stats(r)->samples_malformed, 1);
	assert_int_equal(rdr_problem_at(r, 0)->offset > 0, 1);
	rdr_close(r);
	pdb_release(&p);
}

static void test_not_perf(void **state)
{
	struct rdr *r;
	struct conv_diag d;
	static const char junk[] = "this is not a perf.data file at all.....";
	(void)state;

	assert_int_equal(rdr_open_mem(&r, junk, sizeof(junk), NULL, &d), CONV_E_NOTPERF);
	assert_null(r);
	assert_int_equal(rdr_open_mem(&r, "PERFFILE", 8, NULL, &d), CONV_E_NOTPERF);
	assert_int_equal(rdr_open_mem(&r, "PERFFILE\x68\0\0\0\0\0\0\0", 16, NULL, &d),
			 CONV_E_UNSUPPORTED);
	assert_int_equal(rdr_open_mem(&r, "PERFILE2\x68\0\0\0\0\0\0\0", 16, NULL, &d),
			 CONV_E_TRUNCATED);
}

/* File mode read through a pipe: the reader spools it to a temp file. */
static void test_fd_spool(void **state)
{
	struct pdb p;
	int fds[2];
	pid_t pid;
	struct rdr *r = NULL;
	struct conv_diag d;
	struct collected c;
	(void)state;

	build_basic(&p, false, true);
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		/* two writes so the reader sees a short first read */
		if (write(fds[1], p.b.data, 20) != 20 ||
		    write(fds[1], p.b.data + 20, p.b.len - 20) != (ssize_t)(p.b.len - 20))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(rdr_open_fd(&r, fds[0], &g_opts, &d), CONV_E_OK);
	drain(r, &c);
	assert_int_equal(rdr_stats(r)->samples, 1);
	assert_string_equal(rdr_info(r)->hostname, "testhost");
	rdr_close(r);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	pdb_release(&p);
}

/* A small reorder window forces flushes before FINISHED_ROUND; nothing is lost. */
static void test_reorder_limit(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC, .flags = FL_BASIC };
	struct pdb p;
	struct rdr *r = NULL;
	struct rdr_opts o = { .reorder_limit = 256, .read_ahead = g_opts.read_ahead };
	struct conv_diag d;
	struct collected c;
	(void)state;

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	for (unsigned i = 0; i < 40; i++)
		rec_sample(&p, 1, 1, 1, 1000 - i, 1, NULL, 0);
	pdb_file_end(&p, NULL, 0);
	assert_int_equal(rdr_open_mem(&r, p.b.data, p.b.len, &o, &d), CONV_E_OK);
	drain(r, &c);
	assert_int_equal(rdr_stats(r)->samples, 40);
	assert_true(rdr_stats(r)->reorder_forced_flushes > 0);
	rdr_close(r);
	pdb_release(&p);
}

/* ---- read-ahead: the same events, counts and problems as without ---- */

struct digest {
	uint64_t n, sum, meta, problem_sum;
	struct rdr_stats st;
	size_t problems;
};

/* Reads everything, folding each event's type, offset, time, attr and bytes into an order-sensitive sum. */
static void digest_of(const struct pdb *p, bool ahead, size_t reorder_limit, struct digest *dg)
{
	struct rdr_opts o = { .reorder_limit = reorder_limit, .read_ahead = ahead };
	struct rdr *r = NULL;
	struct conv_diag d;
	const struct rdr_event *ev;

	memset(dg, 0, sizeof(*dg));
	assert_int_equal(rdr_open_mem(&r, p->b.data, p->b.len, &o, &d), CONV_E_OK);
	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		uint64_t h = ev->type * 1000003ull ^ ev->offset * 31 ^ ev->time * 7 ^ (uint64_t)(ev->attr + 1);

		for (size_t i = 0; i < ev->raw_len; i++)
			h = h * 131 + ev->raw[i];
		dg->sum = dg->sum * 0x9e3779b97f4a7c15ull + h;
		dg->n++;
		if (ev->type == PERF_REC_HEADER_ATTR || ev->type == PERF_REC_EVENT_UPDATE)
			dg->meta++;
	}
	dg->st = *rdr_stats(r);
	dg->problems = rdr_problem_count(r);
	/* their order too: first found, first listed */
	for (size_t i = 0; i < dg->problems; i++) {
		const struct rdr_problem *pr = rdr_problem_at(r, i);

		for (const char *c = pr->msg; *c; c++)
			dg->problem_sum = dg->problem_sum * 131 + (unsigned char)*c;
		dg->problem_sum = dg->problem_sum * 31 + pr->count + pr->offset;
	}
	rdr_close(r);
}

/*
 * A pipe-mode stream of every kind read-ahead hands over: thousands of
 * rounds of samples out of order, records without a time (more than one
 * batch of them in a row), metadata in the middle (a second event, then
 * its samples), a long round, a malformed record and a truncated end
 * (problems in the order found); read with a window small
 * enough to force flushes, and with the default one.
 */
static void test_read_ahead_same(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC | PERF_SAMPLE_ID,
			      .flags = FL_BASIC };
	struct pdb_attr b = a;
	struct pdb p;
	struct digest x, y;
	const size_t limits[] = { 0, 4096 };
	(void)state;

	b.config = 1;
	pdb_init(&p, false);
	pdb_pipe_header(&p);
	pdb_rec_begin(&p, PERF_REC_HEADER_ATTR, 0);
	pdb_attr(&p, &a);
	pdb_u64(&p, 1);
	pdb_rec_end(&p);
	for (uint64_t i = 0; i < 30000; i++) {
		uint64_t cpu = i % 4, t = 1000 + i * 10 - cpu * 25; /* four runs interleaved */

		if (i == 12000) {
			/* a second event: its samples are unknown until this is handled */
			pdb_rec_begin(&p, PERF_REC_HEADER_ATTR, 0);
			pdb_attr(&p, &b);
			pdb_u64(&p, 2);
			pdb_rec_end(&p);
		}
		if (i >= 20000 && i < 32000 && i % 2) {
			/* no time (no trailer): goes out as read; 12 000 x 24 bytes, over one batch */
			pdb_rec_begin(&p, PERF_REC_TIME_CONV, 0);
			pdb_u64(&p, i);
			pdb_u64(&p, 1);
			pdb_rec_end(&p);
		}
		pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_USER);
		pdb_u64(&p, 0x400000 + i);
		pdb_u32(&p, 7);
		pdb_u32(&p, 7);
		pdb_u64(&p, t);
		pdb_u64(&p, i >= 12000 && i % 3 == 0 ? 2 : 1); /* id: the second event's after it came */
		pdb_u64(&p, 1);
		pdb_rec_end(&p);
		if (i % 7 == 6 && (i < 5000 || i >= 8000)) /* 3 000 samples in one round: a full window */
			rec_round(&p);
	}
	/* a sample too short for its fields (and its time: it goes out as read), then a record cut short */
	pdb_rec_begin(&p, PERF_REC_SAMPLE, PERF_MISC_USER);
	pdb_u64(&p, 0x400000);
	pdb_rec_end(&p);
	pdb_u64(&p, 0x0040000000000009ull);
	for (size_t k = 0; k < 2; k++) {
		digest_of(&p, false, limits[k], &x);
		digest_of(&p, true, limits[k], &y);
		assert_true(x.n > 30000);
		assert_int_equal(x.meta, 2);
		assert_int_equal(x.n, y.n);
		assert_true(x.sum == y.sum);
		assert_int_equal(x.st.samples, 30000);
		assert_int_equal(x.st.samples, y.st.samples);
		assert_memory_equal(x.st.records, y.st.records, sizeof(x.st.records));
		assert_int_equal(x.st.bytes_read, y.st.bytes_read);
		assert_int_equal(x.st.time_order_violations, y.st.time_order_violations);
		assert_int_equal(x.st.reorder_forced_flushes, y.st.reorder_forced_flushes);
		assert_true(x.st.truncated && y.st.truncated);
		assert_int_equal(x.problems, y.problems);
		assert_true(x.problems >= 2);
		assert_true(x.problem_sum == y.problem_sum);
		if (k == 1)
			assert_true(x.st.reorder_forced_flushes > 0);
	}
	pdb_release(&p);
}

/* Closing a reader whose read-ahead thread is still running (the caller stopped early). */
static void test_read_ahead_close_early(void **state)
{
	struct pdb_attr a = { .type = PERF_TYPE_SOFTWARE, .sample_type = ST_BASIC, .flags = FL_BASIC };
	struct rdr_opts o = { .reorder_limit = 1024, .read_ahead = true };
	struct pdb p;
	struct rdr *r = NULL;
	struct conv_diag d;
	const struct rdr_event *ev;
	(void)state;

	pdb_init(&p, false);
	pdb_file_begin_one(&p, &a, 1);
	for (unsigned i = 0; i < 20000; i++) {
		rec_sample(&p, 1, 1, 1, 1000 + i, 1, NULL, 0);
		if (i % 50 == 49)
			rec_round(&p);
	}
	pdb_file_end(&p, NULL, 0);
	for (int stop_after = 0; stop_after < 3000; stop_after += 1000) {
		assert_int_equal(rdr_open_mem(&r, p.b.data, p.b.len, &o, &d), CONV_E_OK);
		for (int i = 0; i < stop_after; i++) {
			assert_int_equal(rdr_next(r, &ev), CONV_E_OK);
			assert_non_null(ev);
		}
		rdr_close(r);
	}
	pdb_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_basic_le),
		cmocka_unit_test(test_file_basic_be),
		cmocka_unit_test(test_all_fields),
		cmocka_unit_test(test_ordering),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_deferred),
		cmocka_unit_test(test_multi_attr),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_malformed_sample),
		cmocka_unit_test(test_not_perf),
		cmocka_unit_test(test_fd_spool),
		cmocka_unit_test(test_reorder_limit),
		cmocka_unit_test(test_ordering_runs),
	};
	const struct CMUnitTest ahead_tests[] = {
		cmocka_unit_test(test_read_ahead_same),
		cmocka_unit_test(test_read_ahead_close_early),
	};
	int failed;

	failed = cmocka_run_group_tests_name("reader", tests, NULL, NULL);
	g_opts.read_ahead = true;
	failed += cmocka_run_group_tests_name("reader with read-ahead", tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("read-ahead against none", ahead_tests, NULL, NULL);
	return failed;
}
