// A C++ program whose hot paths the compiler inlines (-O2): templates,
// std::map and std::vector, lambdas, so that the top functions carry
// inline lists.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

template <typename T> static inline T mix(T a, T b) { return (a * 31) ^ (b + 7); }

struct Acc {
	std::map<int, long> m;
	std::vector<long> v;
	inline void add(int k, long x) { m[k % 97] += mix<long>(x, k); v.push_back(x); }
};

static inline long sum_sorted(std::vector<long> &v)
{
	std::sort(v.begin(), v.end());
	long s = 0;
	for (long x : v)
		s = mix(s, x);
	return s;
}

__attribute__((noinline)) long work(int rounds)
{
	long total = 0;
	for (int r = 0; r < rounds; r++) {
		Acc a;
		for (int i = 0; i < 20000; i++)
			a.add(i * r + 1, (long)i * 2654435761u);
		std::string s;
		for (auto &kv : a.m)
			s += std::to_string(kv.second);
		total += sum_sorted(a.v) + (long)s.size();
	}
	return total;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	printf("%ld\n", work(rounds));
	return 0;
}
