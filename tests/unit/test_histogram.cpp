#include <catch2/catch.hpp>

#include "hwsig/histogram.h"

using namespace hwsig;

static Histogram log2_hist(std::vector<std::uint64_t> counts)
{
	Histogram h;
	h.counts = std::move(counts);
	return h;
}

TEST_CASE("log2 slot ranges follow libbpf-tools' log2l", "[histogram]")
{
	Histogram h = log2_hist({0, 0, 0, 0});
	CHECK(h.slot_range(0) == std::make_pair(0.0, 2.0));
	CHECK(h.slot_range(1) == std::make_pair(2.0, 4.0));
	CHECK(h.slot_range(3) == std::make_pair(8.0, 16.0));
}

TEST_CASE("percentile interpolates inside the slot", "[histogram]")
{
	// 100 values all in slot 3 ([8,16)): p50 is the middle of the slot.
	Histogram h = log2_hist({0, 0, 0, 100});
	CHECK(*percentile(h, 0.5) == Approx(12.0));
	CHECK(*percentile(h, 1.0) == Approx(16.0));
	// 90 in slot 1 ([2,4)), 10 in slot 5 ([32,64)): p50 in slot 1, p99 in slot 5.
	Histogram two = log2_hist({0, 90, 0, 0, 0, 10});
	CHECK(*percentile(two, 0.5) == Approx(2.0 + 2.0 * 50.0 / 90.0));
	CHECK(*percentile(two, 0.99) == Approx(32.0 + 32.0 * 9.0 / 10.0));
	CHECK_FALSE(percentile(log2_hist({0, 0}), 0.5));
	CHECK_FALSE(percentile(h, 1.5));
}

TEST_CASE("a percentile in the lowest log2 slot is its upper bound, marked", "[histogram]")
{
	// 4,002 requests all under 2 us: nothing tells them apart, so p50 and
	// p99 are "< 2", not 1.00 and 1.98 (issue 34, item 6).
	Histogram all_low = log2_hist({4002, 0, 0});
	for (double q : {0.0, 0.01, 0.5, 0.99, 1.0}) {
		auto v = quantile(all_low, q);
		REQUIRE(v);
		CHECK(v->value == 2.0);
		CHECK(v->upper_bound);
		CHECK(*percentile(all_low, q) == 2.0);
	}
	// 60 in slot 0, 40 in [4,8): p50 is a bound, p90 an estimate.
	Histogram mixed = log2_hist({60, 0, 40});
	CHECK(quantile(mixed, 0.5)->upper_bound);
	CHECK(quantile(mixed, 0.6)->upper_bound);
	auto p90 = quantile(mixed, 0.9);
	CHECK_FALSE(p90->upper_bound);
	CHECK(p90->value == Approx(4.0 + 4.0 * 30.0 / 40.0));
	// Exact layouts have no such slot: slot 0 holds exactly 0.
	Histogram linear;
	linear.layout = Histogram::Layout::Linear;
	linear.counts = {5};
	CHECK(quantile(linear, 0.5)->value == 0.0);
	CHECK_FALSE(quantile(linear, 0.5)->upper_bound);
	Histogram depths;
	depths.layout = Histogram::Layout::LinearLog2;
	depths.counts = {5, 5};
	CHECK(quantile(depths, 0.99)->value == 1.0);
	CHECK_FALSE(quantile(depths, 0.01)->upper_bound);
}

TEST_CASE("linear percentiles are exact", "[histogram]")
{
	Histogram h;
	h.layout = Histogram::Layout::Linear;
	h.counts = {0, 0, 0, 10, 0, 1}; // ten 3s and one 5
	CHECK(*percentile(h, 0.5) == 3.0);
	CHECK(*percentile(h, 0.99) == 5.0);
}

TEST_CASE("delta detects resets", "[histogram]")
{
	Histogram a = log2_hist({1, 2, 3});
	Histogram b = log2_hist({2, 2, 5, 1});
	auto d = Histogram::delta(a, b);
	REQUIRE(d);
	CHECK(d->counts == std::vector<std::uint64_t>{1, 0, 2, 1});
	CHECK_FALSE(Histogram::delta(b, a));
	Histogram lin = b;
	lin.layout = Histogram::Layout::Linear;
	CHECK_FALSE(Histogram::delta(a, lin));
}

TEST_CASE("normalized entropy: 0 for one slot, 1 for uniform", "[histogram]")
{
	CHECK(*normalized_entropy(log2_hist({0, 0, 50, 0})) == Approx(0.0));
	CHECK(*normalized_entropy(log2_hist({7, 7, 7, 7})) == Approx(1.0));
	// Two equally likely slots out of four: 1 bit / 2 bits.
	CHECK(*normalized_entropy(log2_hist({5, 0, 5, 0})) == Approx(0.5));
	CHECK_FALSE(normalized_entropy(log2_hist({0, 0})));
}

TEST_CASE("seek pattern entropy: sequential 0, uniform random ~0.9 at any scale", "[histogram]")
{
	// Sequential: every gap is 0 sectors (slot 0).
	CHECK(*seek_pattern_entropy(log2_hist({1000})) == Approx(0.0));
	// Sequential stream with a rare far jump stays low.
	Histogram rare = log2_hist(std::vector<std::uint64_t>(30, 0));
	rare.counts[0] = 990;
	rare.counts[29] = 10;
	CHECK(*seek_pattern_entropy(rare) < 0.1);
	// |X-Y| of two uniform positions over [0, 2^k): P(gap in octave k-1-j)
	// is ~(3/4)(1/2)^(2j)... simulated exactly by counting all pairs.
	for (int k : {12, 16}) {
		const std::uint64_t n = 1ull << k;
		Histogram h = log2_hist(std::vector<std::uint64_t>(40, 0));
		// Count |x-y| = d occurs 2(n-d) times (d>0), n times for d=0.
		for (std::uint64_t d = 0; d < n; ++d) {
			std::uint64_t times = d == 0 ? n : 2 * (n - d);
			std::size_t slot = d < 2 ? 0 : static_cast<std::size_t>(63 - __builtin_clzll(d));
			h.counts[slot] += times;
		}
		double e = *seek_pattern_entropy(h);
		CHECK(e > 0.8);
		CHECK(e < 1.0);
	}
	CHECK_FALSE(seek_pattern_entropy(log2_hist({0, 0, 0})));
}
