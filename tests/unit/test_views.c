/*
 * The views (views/): a model built by hand, so that every count is known:
 * the call tree's values, folded stacks (names, order, inline frames,
 * unnamed frames, the column chosen), the top functions (self, total
 * counted once per stack, inline functions listed), and the flame graph's
 * data (the template's marker replaced, "</" unable to end the script,
 * nodes under 1/VIEW_HTML_MIN_SHARE of the total left out, the depth and
 * node caps and what the page says they left out).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/profile.h"
#include "views/folded.h"
#include "views/html.h"
#include "views/top.h"
#include "views/tree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A function's location (one line) in /usr/lib/libx.so mapped at 0x1000, file offset 0. */
static uint32_t loc_of(struct prof *p, const char *fn, uint64_t addr)
{
	struct prof_line ln = { 0 };

	ln.function = prof_function(p, prof_str(p, fn), prof_str(p, fn), prof_str(p, "x.c"), 1);
	ln.line = 5;
	return prof_location(p, 0, addr, &ln, 1);
}

/* A sample of count cnt and period cnt * 100 on the stack of locs (leaf first). */
static void add(struct prof *p, int64_t cnt, const uint32_t *locs, uint32_t n)
{
	int64_t v[2] = { cnt, cnt * 100 };

	assert_true(prof_add_sample(p, prof_stack(p, locs, n), NULL, 0, v));
}

/*
 * Stacks (leaf first), values (count, period):
 *   main <- work <- leaf          3 samples, period 300
 *   main <- work                  1, 100
 *   main <- rec <- rec <- rec     2, 200 (recursion: counted once in rec's total)
 *   main <- inl_outer[inl_inner]  4, 400 (one location, two lines)
 *   main <- unnamed 0x1234        1, 100
 *   main <- </script>             1, 100
 *   main <- zero                  0 samples: left out everywhere
 */
static void build(struct prof *p)
{
	struct prof_mapping m = { 0 };
	struct prof_line two[2] = { { 0 } };
	uint32_t mn, wk, lf, rc, in, un, sc, ze;

	prof_init(p);
	p->nr_types = 2;
	p->types = calloc(2, sizeof(*p->types));
	p->types[0].type = prof_str(p, "cpu-clock_samples");
	p->types[1].type = prof_str(p, "cpu-clock");
	p->nr_events_desc = 1;
	p->events_desc = calloc(1, sizeof(*p->events_desc));
	p->events_desc[0].name = p->events_desc[0].full_name = prof_str(p, "cpu-clock");
	p->events_desc[0].samples = 12;
	m.start = 0x1000;
	m.limit = 0x9000;
	m.filename = prof_str(p, "/usr/lib/libx.so");
	m.build_id = prof_str(p, "beef");
	prof_add_mapping(p, &m);
	mn = loc_of(p, "main", 0x1100);
	wk = loc_of(p, "work", 0x1200);
	lf = loc_of(p, "leaf", 0x1300);
	rc = loc_of(p, "rec", 0x1400);
	sc = loc_of(p, "</script>", 0x1500);
	ze = loc_of(p, "zero", 0x1600);
	two[0].function = prof_function(p, prof_str(p, "inl_inner"), prof_str(p, "inl_inner"), 0, 0);
	two[1].function = prof_function(p, prof_str(p, "inl_outer"), prof_str(p, "inl_outer"), 0, 0);
	in = prof_location(p, 0, 0x1700, two, 2);
	un = prof_location(p, 0, 0x1234, NULL, 0);
	add(p, 3, (uint32_t[]){ lf, wk, mn }, 3);
	add(p, 1, (uint32_t[]){ wk, mn }, 2);
	add(p, 2, (uint32_t[]){ rc, rc, rc, mn }, 4);
	add(p, 4, (uint32_t[]){ in, mn }, 2);
	add(p, 1, (uint32_t[]){ un, mn }, 2);
	add(p, 1, (uint32_t[]){ sc, mn }, 2);
	add(p, 0, (uint32_t[]){ ze, mn }, 2);
}

/* What a writer put in a temporary file, NUL-terminated (malloc'ed). */
static char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	s = calloc(1, (size_t)n + 1);
	rewind(f);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	return s;
}

static void test_tree_values(void **state)
{
	struct prof p;
	struct view_tree t;
	size_t types[2] = { 0, 1 };
	uint32_t main_node = UINT32_MAX;

	(void)state;
	build(&p);
	assert_int_equal(view_first_event(&p), 0);
	assert_int_equal(view_tree_build(&t, &p, types, 2), CONV_E_OK);
	assert_int_equal(view_value(&t, 0, 0), 12);
	assert_int_equal(view_value(&t, 0, 1), 1200);
	for (uint32_t c = t.nodes[0].child; c != UINT32_MAX; c = t.nodes[c].sibling)
		main_node = c;
	assert_int_not_equal(main_node, UINT32_MAX);
	assert_string_equal(strtab_get(&t.names.strs, t.nodes[main_node].name), "main");
	assert_int_equal(view_value(&t, main_node, 0), 12);
	/* the zero stack made no node: main's children are work, rec, inl_outer, unnamed, </script> */
	{
		int n = 0;

		for (uint32_t c = t.nodes[main_node].child; c != UINT32_MAX; c = t.nodes[c].sibling)
			n++;
		assert_int_equal(n, 5);
	}
	view_tree_release(&t);
	assert_int_equal(view_tree_build(&t, &p, (size_t[]){ 7 }, 1), CONV_E_INVAL);
	view_tree_release(&t);
	prof_release(&p);
}

static void test_folded(void **state)
{
	struct prof p;
	struct view_tree t;
	size_t types[2] = { 0, 1 };
	FILE *f = tmpfile();
	uint64_t bytes = 0;
	char *s;

	(void)state;
	build(&p);
	assert_int_equal(view_tree_build(&t, &p, types, 2), CONV_E_OK);
	assert_int_equal(view_write_folded(&t, 0, fileno(f), NULL, &bytes, NULL), CONV_E_OK);
	s = slurp(f);
	assert_int_equal(bytes, strlen(s));
	/* sorted by frames as bytes ("<" before lowercase letters), a stack before its extensions */
	assert_string_equal(s, "main;</script> 1\n"
			       "main;inl_outer;inl_inner 4\n"
			       "main;libx.so+0x234 1\n"
			       "main;rec;rec;rec 2\n"
			       "main;work 1\n"
			       "main;work;leaf 3\n");
	free(s);
	fclose(f);
	f = tmpfile();
	assert_int_equal(view_write_folded(&t, 1, fileno(f), NULL, NULL, NULL), CONV_E_OK);
	s = slurp(f);
	assert_non_null(strstr(s, "main;work;leaf 300\n"));
	free(s);
	fclose(f);
	assert_int_equal(view_write_folded(&t, 2, 1, NULL, NULL, NULL), CONV_E_INVAL);
	view_tree_release(&t);
	prof_release(&p);
}

static void test_top(void **state)
{
	struct prof p;
	struct view_top t;

	(void)state;
	build(&p);
	assert_int_equal(view_top_build(&t, &p, 0, 3), CONV_E_OK);
	assert_int_equal(t.all, 12);
	assert_int_equal(t.nr_self, 3);
	/* self by the outermost function of the leaf location, inline ones listed with it */
	assert_string_equal(t.by_self[0].name, "inl_outer");
	assert_int_equal(t.by_self[0].self, 4);
	assert_int_equal(t.by_self[0].nr_inlined, 1);
	assert_string_equal(t.by_self[0].inlined[0], "inl_inner");
	assert_string_equal(t.by_self[1].name, "leaf");
	assert_int_equal(t.by_self[1].self, 3);
	/* ties by name: "[libx.so]" (the unnamed frame), "</script>" ... rec is 2 */
	assert_string_equal(t.by_self[2].name, "rec");
	assert_int_equal(t.by_total[0].total, 12);
	assert_string_equal(t.by_total[0].name, "main");
	assert_string_equal(t.by_total[1].name, "inl_outer");
	assert_string_equal(t.by_total[2].name, "work");
	assert_int_equal(t.by_total[2].total, 4);
	view_top_release(&t);
	/* recursion counts once per stack */
	assert_int_equal(view_top_build(&t, &p, 0, 100), CONV_E_OK);
	for (size_t i = 0; i < t.nr_total; i++)
		if (!strcmp(t.by_total[i].name, "rec"))
			assert_int_equal(t.by_total[i].total, 2);
	view_top_release(&t);
	prof_release(&p);
}

static void test_html(void **state)
{
	struct prof p;
	struct view_tree t;
	size_t types[1] = { 0 };
	const char *names[1] = { "cpu-clock" }, *units[1] = { "samples" };
	struct view_html_opts o = { "a<!--<script>b</script>", "sub", 0, names, units, NULL, 0, 0, false };
	FILE *f = tmpfile();
	char *s, *data;

	(void)state;
	build(&p);
	assert_int_equal(view_tree_build(&t, &p, types, 1), CONV_E_OK);
	assert_int_equal(view_write_html(&t, &o, fileno(f), NULL, NULL, NULL), CONV_E_OK);
	s = slurp(f);
	assert_null(strstr(s, "/*CONV-DATA*/"));
	data = strstr(s, "{\"title\":");
	assert_non_null(data);
	/* no '<' from the data: the title's and the function's are escaped */
	assert_non_null(strstr(data, "\"a\\u003c!--\\u003cscript>b\\u003c/script>\""));
	assert_non_null(strstr(data, "\"\\u003c/script>\""));
	/* the data ends at the script's own end tag: no '<' before it */
	assert_ptr_equal(strchr(data, '<'), strstr(data, "</script>"));
	assert_int_equal(strstr(data, "</script>")[-1], '}');
	assert_non_null(strstr(data, "\"total\":12"));
	/* preorder by name: main, then </script>, inl_outer, inl_inner, libx.so+0x234, rec x3, work, leaf */
	assert_non_null(strstr(data, "\"d\":[0,1,1,2,1,1,2,3,1,2]"));
	assert_non_null(strstr(data, "\"v\":[12,1,4,4,1,2,2,2,4,3]"));
	free(s);
	fclose(f);
	view_tree_release(&t);
	/* two columns, one view: the second column (the folded value's) is not a view of the page */
	{
		size_t two[2] = { 0, 1 };

		f = tmpfile();
		o.nr_views = 1;
		assert_int_equal(view_tree_build(&t, &p, two, 2), CONV_E_OK);
		assert_int_equal(view_write_html(&t, &o, fileno(f), NULL, NULL, NULL), CONV_E_OK);
		s = slurp(f);
		assert_non_null(strstr(s, "\"views\":[{\"name\":\"cpu-clock\""));
		assert_null(strstr(s, "\"total\":1200"));
	}
	free(s);
	fclose(f);
	view_tree_release(&t);
	prof_release(&p);
}

/* A node under 1/VIEW_HTML_MIN_SHARE of the total is left out with what is under it. */
static void test_html_prune(void **state)
{
	struct prof p;
	struct view_tree t;
	size_t types[1] = { 0 };
	struct view_html_opts o = { "t", "s", 0, NULL, NULL, NULL, 0, 0, false };
	FILE *f = tmpfile();
	char *s;

	(void)state;
	build(&p);
	/* main <- work <- leaf grows to 2 * VIEW_HTML_MIN_SHARE: the rest is under the cut but main */
	add(&p, 2 * VIEW_HTML_MIN_SHARE, (uint32_t[]){ loc_of(&p, "leaf", 0x1300), loc_of(&p, "work", 0x1200),
						       loc_of(&p, "main", 0x1100) }, 3);
	assert_int_equal(view_tree_build(&t, &p, types, 1), CONV_E_OK);
	assert_int_equal(view_write_html(&t, &o, fileno(f), NULL, NULL, NULL), CONV_E_OK);
	s = slurp(f);
	/*
	 * total 400012: nodes under 2 go. Kept: main, inl_outer and inl_inner (4),
	 * rec x3 (2), work and leaf; left out: "</script>" and the unnamed frame (1)
	 */
	assert_non_null(strstr(s, "\"d\":[0,1,2,1,2,3,1,2]"));
	assert_non_null(strstr(s, "\"v\":[400012,4,4,2,2,2,400004,400003]"));
	assert_null(strstr(s, "\\u003c/script>"));
	assert_null(strstr(s, "libx.so+0x234"));
	free(s);
	fclose(f);
	view_tree_release(&t);
	prof_release(&p);
}

/* The numbers of the JSON array that follows key in s (at most cap of them); how many there are. */
static size_t json_u64s(const char *s, const char *key, uint64_t *out, size_t cap)
{
	const char *c = strstr(s, key);
	size_t n = 0;

	assert_non_null(c);
	c += strlen(key);
	while (*c && *c != ']') {
		char *end;
		uint64_t v = strtoull(c, &end, 10);

		assert_true(end > c);
		if (n < cap)
			out[n] = v;
		n++;
		c = *end == ',' ? end + 1 : end;
	}
	return n;
}

/*
 * Both caps at once: 120 stacks of 1100 frames under main, each its own
 * from the second frame on (131 880 nodes), one of them 1000 samples.
 * The page keeps the first 1024 frames of a stack (the rest in "... more
 * frames" boxes), then the widest nodes, the heavy stack whole; what the
 * caps leave out is counted and in boxes, and the folded stacks keep it all.
 */
static void test_html_caps(void **state)
{
	struct prof p;
	struct view_tree t;
	size_t types[1] = { 0 };
	struct view_html_opts o = { "t", "s", 0, NULL, NULL, NULL, 0, 0, false };
	uint32_t pool[200], mn, *locs = malloc(1100 * sizeof(*locs));
	uint64_t *d = malloc((VIEW_HTML_MAX_NODES + 1) * sizeof(*d));
	uint64_t om[6], maxd = 0, box_nodes = 0, lines = 0, deepest = 0, whole = 0, semis = 0;
	size_t nd, nb;
	FILE *f = tmpfile();
	char name[32], *s, *c;

	(void)state;
	assert_non_null(locs);
	assert_non_null(d);
	build(&p);
	mn = loc_of(&p, "main", 0x1100);
	for (unsigned i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "f%03u", i);
		pool[i] = loc_of(&p, name, 0x2000 + 16 * i);
	}
	for (unsigned st = 0; st < 120; st++) {
		for (unsigned k = 0; k < 1100; k++)
			locs[1099 - k] = k ? pool[(st + k) % 200] : mn;
		add(&p, st == 119 ? 1000 : 1, locs, 1100);
	}
	assert_int_equal(view_tree_build(&t, &p, types, 1), CONV_E_OK);
	assert_int_equal(view_write_html(&t, &o, fileno(f), NULL, NULL, NULL), CONV_E_OK);
	s = slurp(f);
	nd = json_u64s(s, "\"d\":[", d, VIEW_HTML_MAX_NODES + 1);
	assert_true(nd <= VIEW_HTML_MAX_NODES);
	for (size_t i = 0; i < nd; i++)
		maxd = d[i] > maxd ? d[i] : maxd;
	/* 1024 frames and the box above them */
	assert_int_equal(maxd, VIEW_HTML_MAX_DEPTH);
	c = strstr(s, "\"narrow\":[");
	assert_non_null(c);
	assert_int_equal(sscanf(c, "\"narrow\":[%" SCNu64 ",%" SCNu64 "],\"cap\":[%" SCNu64 ",%" SCNu64
				   "],\"deep\":[%" SCNu64 ",%" SCNu64 "],\"deepest\":%" SCNu64,
				&om[0], &om[1], &om[2], &om[3], &om[4], &om[5], &deepest),
			 7);
	assert_int_equal(deepest, 1100);
	assert_true(om[2] > 0 && om[4] > 0);
	/* boxes: [entry, nodes, frames]; the heavy stack's ends 76 frames deeper, in a box of its 76 nodes */
	assert_non_null(strstr(s, ",76,76]"));
	c = strstr(s, "\"boxes\":[");
	assert_non_null(c);
	nb = 0;
	for (c += 9; *c == '['; nb++) {
		uint64_t e, n, fr;

		assert_int_equal(sscanf(c, "[%" SCNu64 ",%" SCNu64 ",%" SCNu64 "]", &e, &n, &fr), 3);
		box_nodes += n;
		c = strchr(c, ']') + 1;
		if (*c == ',')
			c++;
	}
	assert_int_equal(box_nodes, om[2] + om[4]);
	/* the call tree's nodes: kept, or counted where they were left out */
	assert_int_equal(nd - nb + om[0] + om[2] + om[4], t.nr_nodes - 1);
	/* the heavy stack's value is in main's: 1000 + 119 + 12 */
	assert_non_null(strstr(s, "\"v\":[1131,"));
	free(s);
	fclose(f);
	/* the folded stacks: every stack whole */
	f = tmpfile();
	assert_int_equal(view_write_folded(&t, 0, fileno(f), NULL, NULL, NULL), CONV_E_OK);
	s = slurp(f);
	for (c = s; *c; c++) {
		if (*c == ';')
			semis++;
		if (*c == '\n') {
			lines++;
			if (semis == 1099)
				whole++;
			semis = 0;
		}
	}
	assert_int_equal(lines, 126);
	assert_int_equal(whole, 120);
	free(s);
	fclose(f);
	free(locs);
	free(d);
	view_tree_release(&t);
	prof_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_values),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_html_prune),
		cmocka_unit_test(test_html_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
