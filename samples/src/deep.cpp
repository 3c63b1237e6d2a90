// The second benchmark recipe's program (bench/record.sh -w deep): deep and
// varied C++ call stacks. Four recursive step functions, chosen by the bits
// of a pseudo-random seed, call each other 8 to 40 levels deep through a
// template, a virtual call and a std::function, and the innermost level
// works in libstdc++ (std::map, std::sort, std::string), so that a recording
// holds many distinct stacks of many frames each.
//
// The seeds repeat with period SEEDS, so the program has at most SEEDS
// call paths (each 8-40 levels deep): SEEDS sets how many distinct stacks it
// adds to a recording.
//
//   deep ROUNDS [SEEDS]   (prints a checksum, so that nothing is optimized away)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

unsigned next(unsigned s) { return s * 1103515245u + 12345u; }

__attribute__((noinline)) long leaf_map(unsigned s)
{
	std::map<unsigned, unsigned> m;
	for (unsigned i = 0; i < 64; i++)
		m[next(s + i) % 97] += i;
	long t = 0;
	for (auto &kv : m)
		t += kv.first * kv.second;
	return t;
}

__attribute__((noinline)) long leaf_sort(unsigned s)
{
	std::vector<unsigned> v(96);
	for (auto &x : v)
		x = s = next(s);
	std::sort(v.begin(), v.end());
	return v[v.size() / 2] & 0xffff;
}

__attribute__((noinline)) long leaf_string(unsigned s)
{
	std::string a;
	for (int i = 0; i < 24; i++)
		a += std::to_string(next(s + (unsigned)i) % 1000);
	return (long)std::count(a.begin(), a.end(), '7');
}

long step(int depth, unsigned s);

template <int K> __attribute__((noinline)) long tstep(int depth, unsigned s)
{
	return K + step(depth - 1, next(s));
}

struct Stepper {
	virtual ~Stepper() = default;
	virtual long go(int depth, unsigned s) const = 0;
};

struct Virt : Stepper {
	__attribute__((noinline)) long go(int depth, unsigned s) const override
	{
		return 1 + step(depth - 1, next(s) ^ 0x5a5a);
	}
};

__attribute__((noinline)) long via_function(int depth, unsigned s)
{
	std::function<long(int, unsigned)> f = [](int d, unsigned x) { return 2 + step(d - 1, next(x)); };
	return f(depth, s);
}

const Virt virt;
const Stepper *volatile stepper = &virt;

__attribute__((noinline)) long step(int depth, unsigned s)
{
	if (depth <= 0) {
		switch (s >> 29 & 3) {
		case 0:
			return leaf_map(s);
		case 1:
			return leaf_sort(s);
		default:
			return leaf_string(s);
		}
	}
	switch (s >> 27 & 3) {
	case 0:
		return tstep<1>(depth, s);
	case 1:
		return tstep<2>(depth, s);
	case 2:
		return stepper->go(depth, s);
	default:
		return via_function(depth, s);
	}
}

} // namespace

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 1000;
	unsigned seeds = argc > 2 ? (unsigned)std::atol(argv[2]) : 16;
	long sum = 0;

	for (long r = 0; r < rounds; r++) {
		unsigned s = next(next((unsigned)(r % (seeds ? seeds : 1)) + 1));

		sum += step(8 + (int)(s % 33), s);
	}
	std::printf("%ld\n", sum);
	return 0;
}
