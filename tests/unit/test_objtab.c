/*
 * The run's object table (pipeline/objtab): an entry is opened once and
 * found again, replaced when its file changes, closed least recently used
 * first beyond the budget, at once with budget 0; a symbol file is held by
 * one caller at a time (another waits), CFI and kallsyms are shared;
 * addresses wanted ahead are handed to the first holder, and the file is
 * shed after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pipeline/objtab.h"
#include "symbolize/kallsyms.h"
#include "tests/unit/testutil.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void write_kallsyms(const char *path, unsigned n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%016x T func_%u\n", 0x1000 + 0x10 * i, i);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(dir, sizeof(dir), "test_objtab") ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tu_tmpdir_drop(dir);
	return 0;
}

/* A get of an open entry finds it again; a file that changed is opened anew. */
static void test_reuse_and_change(void **state)
{
	struct objtab *t;
	const struct kallsyms *k1, *k2;
	struct objtab_ent *e;
	struct objtab_stats st;
	char path[PATH_MAX];

	(void)state;
	tu_strf(path, sizeof(path), "%s/a", dir);
	write_kallsyms(path, 10);
	assert_int_equal(objtab_new(&t, 1 << 20), CONV_E_OK);
	e = objtab_kallsyms_get(t, path, &k1);
	assert_non_null(e);
	assert_int_equal(k1->nr, 10);
	objtab_put(t, e);
	e = objtab_kallsyms_get(t, path, &k2);
	assert_ptr_equal(k1, k2);
	objtab_put(t, e);
	st = objtab_stats(t);
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.reused, 1);
	assert_true(st.bytes > 0);
	/* another size: another file; the entry it replaces goes */
	write_kallsyms(path, 20);
	e = objtab_kallsyms_get(t, path, &k2);
	assert_non_null(e);
	assert_int_equal(k2->nr, 20);
	objtab_put(t, e);
	st = objtab_stats(t);
	assert_int_equal(st.opened, 2);
	/* a file that is not there is no entry */
	tu_strf(path, sizeof(path), "%s/missing", dir);
	assert_null(objtab_kallsyms_get(t, path, &k1));
	assert_null(k1);
	objtab_free(t);
}

/* Beyond the budget the least recently used unheld entry closes; budget 0 keeps nothing. */
static void test_budget(void **state)
{
	struct objtab *t;
	const struct kallsyms *k;
	struct objtab_ent *a, *b, *c;
	struct objtab_stats st;
	char pa[PATH_MAX], pb[PATH_MAX], pc[PATH_MAX];
	uint64_t one;

	(void)state;
	tu_strf(pa, sizeof(pa), "%s/ba", dir);
	tu_strf(pb, sizeof(pb), "%s/bb", dir);
	tu_strf(pc, sizeof(pc), "%s/bc", dir);
	write_kallsyms(pa, 1000);
	write_kallsyms(pb, 1000);
	write_kallsyms(pc, 1000);
	/* one entry's size, measured */
	assert_int_equal(objtab_new(&t, UINT64_MAX), CONV_E_OK);
	a = objtab_kallsyms_get(t, pa, &k);
	objtab_put(t, a);
	one = objtab_stats(t).bytes;
	objtab_free(t);
	assert_true(one > 0);

	/* room for two */
	assert_int_equal(objtab_new(&t, 2 * one + one / 2), CONV_E_OK);
	a = objtab_kallsyms_get(t, pa, &k);
	b = objtab_kallsyms_get(t, pb, &k);
	objtab_put(t, a); /* a is the least recently used from here */
	objtab_put(t, b);
	c = objtab_kallsyms_get(t, pc, &k);
	objtab_put(t, c);
	st = objtab_stats(t);
	assert_int_equal(st.evicted, 1);
	assert_true(st.bytes <= 2 * one + one / 2);
	/* b and c stayed, a was opened again */
	objtab_put(t, objtab_kallsyms_get(t, pb, &k));
	objtab_put(t, objtab_kallsyms_get(t, pc, &k));
	assert_int_equal(objtab_stats(t).opened, 3);
	objtab_put(t, objtab_kallsyms_get(t, pa, &k));
	assert_int_equal(objtab_stats(t).opened, 4);
	/* held entries are never closed, whatever the budget */
	objtab_free(t);

	assert_int_equal(objtab_new(&t, 0), CONV_E_OK);
	a = objtab_kallsyms_get(t, pa, &k);
	b = objtab_kallsyms_get(t, pa, &k); /* shared while held */
	assert_ptr_equal(a, b);
	objtab_put(t, a);
	assert_true(objtab_stats(t).bytes > 0);
	objtab_put(t, b);
	st = objtab_stats(t);
	assert_int_equal(st.bytes, 0);
	objtab_put(t, objtab_kallsyms_get(t, pa, &k));
	assert_int_equal(objtab_stats(t).opened, 2);
	objtab_free(t);
}

struct holder {
	struct objtab *t;
	const char *path;
	atomic_int got;
};

static void *second_holder(void *arg)
{
	struct holder *h = arg;
	struct sym_file *f;
	bool fresh;
	struct objtab_ent *e = objtab_sym_get(h->t, h->path, NULL, SYM_NAME_PERF, &f, &fresh);

	atomic_store(&h->got, e ? 1 : -1);
	objtab_put(h->t, e);
	return NULL;
}

/* A symbol file has one holder at a time: a second get waits for the put. */
static void test_sym_exclusive(void **state)
{
	struct objtab *t;
	struct sym_file *f;
	struct objtab_ent *e;
	struct holder h;
	pthread_t th;
	bool fresh;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(objtab_new(&t, UINT64_MAX), CONV_E_OK);
	e = objtab_sym_get(t, self, NULL, SYM_NAME_PERF, &f, &fresh);
	assert_non_null(e);
	assert_non_null(f);
	assert_true(fresh);
	h.t = t;
	h.path = self;
	atomic_init(&h.got, 0);
	assert_int_equal(pthread_create(&th, NULL, second_holder, &h), 0);
	for (int i = 0; i < 20; i++)
		nanosleep(&ms10, NULL);
	assert_int_equal(atomic_load(&h.got), 0); /* still waiting */
	objtab_put(t, e);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&h.got), 1);
	e = objtab_sym_get(t, self, NULL, SYM_NAME_PERF, &f, &fresh);
	assert_false(fresh);
	objtab_put(t, e);
	/* the same file with names in another form is another entry */
	e = objtab_sym_get(t, self, NULL, SYM_NAME_FULL, &f, &fresh);
	assert_true(fresh);
	objtab_put(t, e);
	assert_int_equal(objtab_stats(t).opened, 2);
	objtab_free(t);
}

/*
 * Wanted addresses: noted without opening the file, each once; the first
 * get opens it and hands them to its holder; every put sheds it, so that
 * the table holds its answers and not the file, and a later get answers
 * them without opening it again.
 */
static void test_sym_wants(void **state)
{
	struct objtab *t;
	struct sym_file *f;
	struct objtab_ent *e;
	const struct objtab_want *w;
	struct sym_result r;
	bool fresh;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const struct objtab_want first[3] = { { 0x1010, 0, 2 }, { 0x1020, 0, 2 }, { 0x1010, 0, 2 } };
	const struct objtab_want second[2] = { { 0x1020, 0, 2 }, { 0x1030, 0, 2 } };
	uint64_t open_bytes;

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(objtab_new(&t, UINT64_MAX), CONV_E_OK);
	assert_int_equal(objtab_sym_want(t, self, NULL, SYM_NAME_PERF, first, 3), CONV_E_OK);
	assert_int_equal(objtab_sym_want(t, self, NULL, SYM_NAME_PERF, second, 2), CONV_E_OK);
	assert_int_equal(objtab_stats(t).opened, 0);
	e = objtab_sym_get(t, self, NULL, SYM_NAME_PERF, &f, &fresh);
	assert_non_null(e);
	assert_non_null(f);
	assert_true(fresh); /* opened by this get: the holder attaches what a fresh file needs */
	assert_int_equal(objtab_stats(t).opened, 1);
	assert_int_equal(objtab_sym_wants(e, &w), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(w[i].value, 0x1010 + 0x10 * (uint64_t)i);
		assert_int_equal(sym_file_lookup(f, w[i].value, &r), CONV_E_OK);
	}
	open_bytes = sym_file_footprint(f);
	objtab_put(t, e);
	assert_true(objtab_stats(t).bytes < open_bytes);
	e = objtab_sym_get(t, self, NULL, SYM_NAME_PERF, &f, &fresh);
	assert_false(fresh);
	assert_int_equal(objtab_sym_wants(e, &w), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sym_file_lookup(f, 0x1010 + 0x10 * (uint64_t)i, &r), CONV_E_OK);
	assert_int_equal(sym_file_stats(f)->reopened, 0);
	assert_int_equal(sym_file_stats(f)->cache_hits, 3);
	/* an address nobody said: the file opens again for it, and is shed at the put */
	assert_int_equal(sym_file_lookup(f, 0x1040, &r), CONV_E_OK);
	assert_int_equal(sym_file_stats(f)->reopened, 1);
	objtab_put(t, e);
	assert_true(objtab_stats(t).bytes < open_bytes);
	assert_int_equal(objtab_stats(t).opened, 1);
	assert_int_equal(objtab_stats(t).reopened, 1);
	objtab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_and_change),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_sym_exclusive),
		cmocka_unit_test(test_sym_wants),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
