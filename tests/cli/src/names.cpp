/*
 * names.cpp - the C++ program of tests/cli/test_names.py: the kinds of C++
 * names perf shows in its own form (no return type, no parameter list).
 *
 *   geo::accumulate_areas<double>    a function template (its return type and
 *                                    parameter list are in the linkage name)
 *   text::word_counts[abi:cxx11]     returns std::string: an ABI tag
 *   text::word_counts calls std::string::_M_replace and _M_append through
 *                                    the PLT into libstdc++ (@plt frames)
 *   tally::walk                      iterates a std::map: std::_Rb_tree_increment
 *                                    through the PLT, a few instructions each
 *   std::__introsort_loop<...>       std::sort with a lambda: __unguarded_partition,
 *                                    _Iter_comp_iter::operator() and the lambda's
 *                                    operator() are inline frames in it
 *   ring::Cursor::operator++         a member operator, out of line (GCC makes an
 *                                    .isra clone of it: perf drops the suffix)
 *   step                             static inline in ring::spin: an inline frame
 *                                    without linkage name, named by DW_AT_name
 *
 * usage: names SECONDS (stops after that much CPU time; 1 when absent)
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace geo {
template <typename T> struct Rect {
	T w, h;
};

template <typename T> __attribute__((noinline)) T accumulate_areas(const std::vector<Rect<T>> &v)
{
	T s = 0;

	for (const Rect<T> &r : v)
		s += r.w * r.h / (r.w + r.h + 1);
	return s;
}
} // namespace geo

namespace text {
/* std::string return, int parameter: the ABI tag shows in the name */
__attribute__((noinline)) std::string word_counts(int n)
{
	std::string s;

	for (int i = 0; i < n; i++) {
		s.append("ab", 1 + (i & 1));
		if (s.size() > 24)
			s.replace(0, 8, "xyz");
	}
	return s;
}
} // namespace text

namespace tally {
__attribute__((noinline)) long walk(const std::map<int, long> &m)
{
	long t = 0;

	for (const auto &kv : m)
		t += kv.second ^ kv.first;
	return t;
}
} // namespace tally

struct Item {
	uint32_t key;
	uint32_t pad;
};

__attribute__((noinline)) static void sort_items(std::vector<Item> &v, uint32_t seed)
{
	for (Item &it : v) {
		seed = seed * 1103515245u + 12345u;
		it.key = seed >> 8;
	}
	std::sort(v.begin(), v.end(), [](const Item &a, const Item &b) { return a.key < b.key; });
}

namespace ring {
struct Cursor {
	unsigned pos, size;
	unsigned long acc;

	__attribute__((noinline)) Cursor &operator++()
	{
		pos = pos + 1 == size ? 0 : pos + 1;
		acc = acc * 31 + pos;
		return *this;
	}
};

/* internal linkage: GCC writes no DW_AT_linkage_name for it */
static inline __attribute__((always_inline)) unsigned long step(Cursor &c)
{
	c.pos = c.pos + 1 == c.size ? 0 : c.pos + 1;
	c.acc = c.acc * 37 + c.pos;
	return c.acc;
}

__attribute__((noinline)) unsigned long spin(Cursor &c, int n)
{
	unsigned long t = 0;

	for (int i = 0; i < n; i++) {
		++c;
		t += step(c);
	}
	return t;
}
} // namespace ring

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	std::vector<geo::Rect<double>> rects(4096);
	std::vector<Item> items(1024);
	std::map<int, long> m;
	ring::Cursor c = { 0, 1000, 1 };
	double sum = 0;
	unsigned long t = 0;
	size_t len = 0;
	uint32_t seed = 1;

	for (size_t i = 0; i < rects.size(); i++)
		rects[i] = { (double)(i % 17), (double)(i % 23) };
	for (int i = 0; i < 2048; i++)
		m[i * 7] = i;
	while (cpu_seconds() < secs) {
		for (int r = 0; r < 100; r++)
			sum += geo::accumulate_areas(rects);
		for (int r = 0; r < 200; r++)
			len += text::word_counts(100).size();
		for (int r = 0; r < 100; r++)
			t += (unsigned long)tally::walk(m);
		sort_items(items, seed++);
		t += ring::spin(c, 20000);
	}
	printf("%g %lu %zu %u\n", sum, t, len, items[0].key);
	return 0;
}
