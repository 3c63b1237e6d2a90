// C++ without frame pointers: class templates with virtual functions,
// std::sort with a lambda comparator calling them through the vtable, a
// function template. Stacks: Poly<N>::area <- the lambda, inlined into
// std::sort's helpers (std::__introsort_loop, std::__insertion_sort, ...)
// <- sort_shapes <- main; and Poly<N>::area <- total_area<double> <- main.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#define UW_FRAME __attribute__((noinline, noclone))

volatile double uw_sink;

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

template <int Sides> struct Poly final : Shape {
	explicit Poly(double r) : r(r) {}
	UW_FRAME double area() const override
	{
		double a = 0;
		for (int i = 0; i < Sides * 24; i++)
			a += r / (1.0 + i * Sides);
		return a;
	}
	double r;
};

template <typename T> UW_FRAME T total_area(const std::vector<std::unique_ptr<Shape>> &v)
{
	T t = 0;
	for (const auto &s : v)
		t += static_cast<T>(s->area());
	return t;
}

UW_FRAME static void sort_shapes(std::vector<std::unique_ptr<Shape>> &v)
{
	std::sort(v.begin(), v.end(), [](const std::unique_ptr<Shape> &a, const std::unique_ptr<Shape> &b) {
		return a->area() < b->area();
	});
}

UW_FRAME static std::vector<std::unique_ptr<Shape>> make_shapes(unsigned n, uint64_t seed)
{
	std::vector<std::unique_ptr<Shape>> v;
	v.reserve(n);
	for (unsigned i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		double r = static_cast<double>(seed >> 40) / 1024.0;
		switch (seed % 3) {
		case 0: v.emplace_back(new Poly<3>(r)); break;
		case 1: v.emplace_back(new Poly<5>(r)); break;
		default: v.emplace_back(new Poly<8>(r)); break;
		}
	}
	return v;
}

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	auto end = clock::now() + std::chrono::duration<double, std::milli>(argc > 1 ? std::atof(argv[1]) : 500.0);
	uint64_t round = 0;
	do {
		auto v = make_shapes(300, ++round);
		sort_shapes(v);
		uw_sink = uw_sink + total_area<double>(v);
	} while (clock::now() < end);
	return 0;
}
