/*
 * Off-CPU intervals from switch-outs and runs: what is charged to which
 * key and state, and what is counted as having no end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pipeline/offcpu.h"

/* The total of (key, label), or NULL. */
static const struct offcpu_total *total(const struct offcpu *o, uint32_t key, uint32_t label)
{
	size_t n;
	const struct offcpu_total *t = offcpu_totals(o, &n);

	for (size_t i = 0; i < n; i++)
		if (t[i].key == key && t[i].label == label)
			return &t[i];
	return NULL;
}

/* A switch-out ended by the thread's next run: its length, charged to its key and state. */
static void test_interval(void **state)
{
	struct offcpu *o = offcpu_new();
	struct offcpu_interval iv;
	bool oom;

	(void)state;
	assert_non_null(o);
	assert_false(offcpu_run(o, 7, 50, &iv, &oom)); /* nothing pending */
	assert_true(offcpu_leave(o, 7, 100, 3, 9));
	assert_true(offcpu_run(o, 7, 350, &iv, &oom));
	assert_false(oom);
	assert_int_equal(iv.key, 3);
	assert_int_equal(iv.label, 9);
	assert_int_equal(iv.start, 100);
	assert_int_equal(iv.ns, 250);
	assert_false(offcpu_run(o, 7, 400, &iv, &oom)); /* ended once */
	assert_true(offcpu_leave(o, 7, 500, 3, 9));
	assert_true(offcpu_run(o, 7, 600, &iv, &oom));
	assert_true(offcpu_leave(o, 8, 500, 4, 2));
	assert_true(offcpu_run(o, 8, 520, &iv, &oom));
	assert_int_equal(total(o, 3, 9)->n, 2);
	assert_int_equal(total(o, 3, 9)->ns, 350);
	assert_int_equal(total(o, 4, 2)->ns, 20);
	assert_int_equal(offcpu_stats(o)->intervals, 3);
	assert_int_equal(offcpu_stats(o)->ns, 370);
	assert_int_equal(offcpu_stats(o)->unended, 0);
	offcpu_free(o);
}

/* No end: pending at the end, or switched out again unseen; an end before the start. */
static void test_unended(void **state)
{
	struct offcpu *o = offcpu_new();
	struct offcpu_interval iv;
	bool oom;
	size_t n;

	(void)state;
	assert_true(offcpu_leave(o, 1, 100, 1, 0));
	assert_true(offcpu_leave(o, 1, 200, 1, 0)); /* it ran in between: the first has no known end */
	assert_true(offcpu_leave(o, 2, 300, 2, 0));
	assert_false(offcpu_run(o, 2, 250, &iv, &oom)); /* out of order: not charged */
	assert_true(offcpu_leave(o, 3, 300, 3, 0));
	offcpu_finish(o);
	assert_int_equal(offcpu_stats(o)->unended, 3); /* tid 1 twice, tid 3 at the end */
	assert_int_equal(offcpu_stats(o)->unordered, 1);
	assert_int_equal(offcpu_stats(o)->intervals, 0);
	offcpu_totals(o, &n);
	assert_int_equal(n, 0);
	offcpu_free(o);
}

/* An interval known whole (perf record --off-cpu). */
static void test_add(void **state)
{
	struct offcpu *o = offcpu_new();

	(void)state;
	assert_true(offcpu_add(o, 5, 0, 1000));
	assert_true(offcpu_add(o, 5, 0, 500));
	assert_int_equal(total(o, 5, 0)->n, 2);
	assert_int_equal(total(o, 5, 0)->ns, 1500);
	offcpu_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_unended),
		cmocka_unit_test(test_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
