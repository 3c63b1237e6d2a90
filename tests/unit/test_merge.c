/*
 * prof_merge (model/merge.c) on models built by hand, so that every id is
 * known: two inputs with the same pid, the same program and the same
 * function name, one of them with an event the other lacks. Checks that
 * the pid stays two processes (two mappings, two threads of two origins,
 * locations and stacks apart), that functions and strings are shared, that
 * event types are the union (a type an input lacks reads 0 in its
 * samples), that each sample carries its input's label, that the event
 * spool is renumbered (and that the JFR writer takes the merged model),
 * and that an input merged into an empty model keeps its values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jfrwriter/jfr.h"
#include "model/events.h"
#include "model/merge.h"
#include "model/profile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An event's two value types and description: "NAME" (samples) and "NAME_period". */
static void event(struct prof *p, size_t i, const char *name)
{
	struct prof_event_desc d;
	char buf[64];

	memset(&d, 0, sizeof(d));
	d.name = d.full_name = prof_str(p, name);
	prof_set_event(p, i, &d);
	prof_set_value_type(p, 2 * i, prof_str(p, name), prof_str(p, "count"));
	snprintf(buf, sizeof(buf), "%s_period", name);
	prof_set_value_type(p, 2 * i + 1, prof_str(p, buf), prof_str(p, "events"));
}

/*
 * One recording: pid 100 (thread 100) running /usr/bin/app, main at 0x1010
 * called from start at 0x1020; events "cycles" and, with faults, "faults";
 * a sample of each event on main <- start (one pprof sample), each spooled.
 */
static void input(struct prof *p, bool faults, int64_t n)
{
	struct prof_mapping m;
	struct prof_thread th;
	struct prof_line ln;
	struct prof_label lb;
	struct prof_event ev;
	uint32_t locs[2], map, stack;
	int64_t v[4] = { 0 };

	prof_init(p);
	assert_true(prof_set_events(p, faults ? 2 : 1));
	event(p, 0, "cycles");
	if (faults)
		event(p, 1, "faults");
	prof_set_primary_event(p, 0);
	prof_set_default_type(p, 0, 1000);
	memset(&m, 0, sizeof(m));
	m.start = 0x1000;
	m.limit = 0x2000;
	m.pid = 100;
	m.filename = prof_str(p, "/usr/bin/app");
	map = prof_add_mapping(p, &m);
	memset(&ln, 0, sizeof(ln));
	ln.function = prof_function(p, prof_str(p, "main"), prof_str(p, "main"), prof_str(p, "app.c"), 3);
	ln.line = 7;
	locs[0] = prof_location_append(p, map, 0x1010, &ln, 1);
	ln.function = prof_function(p, prof_str(p, "start"), prof_str(p, "start"), prof_str(p, "app.c"), 1);
	locs[1] = prof_location_append(p, map, 0x1020, &ln, 1);
	stack = prof_stack(p, locs, 2);
	memset(&th, 0, sizeof(th));
	th.tid = th.pid = 100;
	th.name = th.process_name = prof_str(p, "app");
	assert_int_equal(prof_add_thread(p, &th), 0);
	memset(&lb, 0, sizeof(lb));
	lb.key = prof_str(p, "pid");
	lb.num = 100;
	v[0] = n;
	v[1] = n * 1000;
	assert_true(prof_add_sample(p, stack, &lb, 1, v));
	assert_int_equal(prof_events_open(&p->events, NULL, NULL), CONV_E_OK);
	memset(&ev, 0, sizeof(ev));
	ev.time = 5000;
	ev.period = 1000;
	ev.stack = stack;
	ev.cpu = UINT32_MAX;
	assert_true(prof_events_add(p->events, &ev));
	prof_set_event_samples(p, 0, 1);
	if (faults) {
		memset(v, 0, sizeof(v));
		v[2] = 1;
		v[3] = 1;
		assert_true(prof_add_sample(p, stack, &lb, 1, v));
		ev.event = 1;
		ev.time = 6000;
		assert_true(prof_events_add(p->events, &ev));
		prof_set_event_samples(p, 1, 1);
	}
	assert_int_equal(prof_events_finish(p->events, NULL), CONV_E_OK);
	p->sys.first_time = 5000;
	p->sys.last_time = faults ? 6000 : 5000;
}

/* The value of dst's type named name in sample s. */
static int64_t value_of(const struct prof *p, const struct prof_sample *s, const char *name)
{
	for (size_t t = 0; t < p->nr_types; t++)
		if (!strcmp(strtab_get(&p->strs, p->types[t].type), name))
			return prof_sample_value(p, s, t);
	fail_msg("no type %s", name);
	return -1;
}

/* The value of sample s's label key (a string label). */
static const char *label_of(const struct prof *p, const struct prof_sample *s, const char *key)
{
	for (uint32_t i = 0; i < s->nr_labels; i++) {
		const struct prof_label *l = &p->labels[s->first_label + i];

		if (!strcmp(strtab_get(&p->strs, l->key), key))
			return strtab_get(&p->strs, l->str);
	}
	return NULL;
}

static void merge_in(struct prof *dst, struct prof *src, const char *file)
{
	struct prof_merge_label lb = { "file", file };
	struct prof_merge_opts o = { &lb, 1, file, NULL };
	struct conv_diag diag;

	memset(&diag, 0, sizeof(diag));
	assert_int_equal(prof_merge(dst, src, &o, &diag), CONV_E_OK);
	prof_release(src);
}

static void test_merge_two_inputs_same_pid(void **state)
{
	struct prof a, b, d;
	struct prof_event ev;
	struct jfr_stats st;
	struct conv_diag diag;
	uint32_t n, stack_a = PROF_NONE, stack_b = PROF_NONE;
	int fd;

	(void)state;
	prof_init(&d);
	input(&a, false, 3);
	input(&b, true, 5);
	merge_in(&d, &a, "a.data");
	merge_in(&d, &b, "b.data");
	assert_int_equal(d.nr_merged, 2);
	/* the pid of both: two processes, each with its mapping and thread */
	assert_int_equal(d.nr_mappings, 2);
	assert_int_equal(d.mappings[0].pid, 100);
	assert_int_equal(d.mappings[1].pid, 100);
	assert_int_equal(d.nr_threads, 2);
	assert_int_equal(d.threads[0].origin, 0);
	assert_int_equal(d.threads[1].origin, 1);
	assert_int_equal(d.threads[0].tid, d.threads[1].tid);
	/* functions and strings shared, locations and stacks not */
	assert_int_equal(d.nr_functions, 2);
	assert_int_equal(d.nr_locations, 4);
	assert_int_equal(d.nr_stacks, 2);
	/* the union of the events: cycles once, faults added */
	assert_int_equal(d.nr_events_desc, 2);
	assert_int_equal(d.nr_types, 4);
	assert_int_equal(d.events_desc[0].samples, 2);
	assert_int_equal(d.events_desc[1].samples, 1);
	assert_int_equal(d.primary_event, 0);
	assert_int_equal(d.nr_samples, 2); /* b.data's two on one stack are one sample */
	for (size_t i = 0; i < d.nr_samples; i++) {
		const struct prof_sample *s = &d.samples[i];
		const char *file = label_of(&d, s, "file");
		const uint32_t *locs = prof_stack_locs(&d, s->stack, &n);

		assert_non_null(file);
		assert_int_equal(n, 2);
		/* a sample's frames are in its own input's mapping */
		assert_int_equal(d.locations[locs[0]].mapping, strcmp(file, "a.data") ? 1 : 0);
		if (!strcmp(file, "a.data")) {
			stack_a = s->stack;
			assert_int_equal(value_of(&d, s, "cycles"), 3);
			assert_int_equal(value_of(&d, s, "faults"), 0); /* a type a.data has not */
		} else {
			int64_t c = value_of(&d, s, "cycles"), f = value_of(&d, s, "faults");

			assert_int_equal(c, 5);
			assert_int_equal(f, 1);
			stack_b = s->stack;
		}
	}
	assert_int_not_equal(stack_a, PROF_NONE);
	assert_int_not_equal(stack_b, PROF_NONE);
	assert_int_not_equal(stack_a, stack_b);
	/* the spool: a.data's event, then b.data's two, on their own stacks and threads */
	assert_non_null(d.events);
	assert_int_equal(prof_events_count(d.events), 3);
	assert_int_equal(prof_events_rewind(d.events, NULL), CONV_E_OK);
	assert_true(prof_events_next(d.events, &ev));
	assert_int_equal(ev.stack, stack_a);
	assert_int_equal(ev.thread, 0);
	assert_int_equal(ev.event, 0);
	assert_true(prof_events_next(d.events, &ev));
	assert_int_equal(ev.stack, stack_b);
	assert_int_equal(ev.thread, 1);
	assert_int_equal(ev.event, 0);
	assert_true(prof_events_next(d.events, &ev));
	assert_int_equal(ev.event, 1);
	assert_false(prof_events_next(d.events, &ev));
	/* the JFR writer takes the merged model: every event written */
	fd = open("/dev/null", O_WRONLY);
	assert_true(fd >= 0);
	memset(&diag, 0, sizeof(diag));
	assert_int_equal(jfr_write(&d, NULL, fd, &st, &diag), CONV_E_OK);
	assert_int_equal(st.events, 3);
	close(fd);
	prof_release(&d);
}

/* An input that brings a type after samples exist: the earlier samples keep their values. */
static void test_merge_new_event_keeps_values(void **state)
{
	struct prof a, b, d;
	int64_t cycles = 0, faults = 0;

	(void)state;
	prof_init(&d);
	input(&a, false, 7);
	input(&b, true, 11);
	merge_in(&d, &a, "a.data");
	assert_int_equal(d.nr_types, 2);
	merge_in(&d, &b, "b.data");
	assert_int_equal(d.nr_types, 4);
	for (size_t i = 0; i < d.nr_samples; i++) {
		cycles += value_of(&d, &d.samples[i], "cycles");
		faults += value_of(&d, &d.samples[i], "faults");
		if (!strcmp(label_of(&d, &d.samples[i], "file"), "a.data"))
			assert_int_equal(value_of(&d, &d.samples[i], "cycles_period"), 7000);
	}
	assert_int_equal(cycles, 7 + 11);
	assert_int_equal(faults, 1);
	prof_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_inputs_same_pid),
		cmocka_unit_test(test_merge_new_event_keeps_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
