// Exact values of the histogram math: percentiles with the rank exactly on,
// just below and just above a slot boundary in every layout, and entropies of
// distributions whose probabilities are written out (1e-9). Loose bounds
// ("0.8 < e < 1") let an off-by-one in a rank or a fold pass: these do not.
#include <catch2/catch.hpp>
#include <cmath>

#include "hwsig/histogram.h"

using namespace hwsig;

namespace {

constexpr double kEps = 1e-9;

Histogram hist(Histogram::Layout layout, std::vector<std::uint64_t> counts)
{
	Histogram h;
	h.layout = layout;
	h.counts = std::move(counts);
	return h;
}

double pct(const Histogram &h, double q)
{
	auto v = percentile(h, q);
	REQUIRE(v);
	return *v;
}

} // namespace

TEST_CASE("log2 percentile: rank on, below and above a slot boundary", "[histogram][exact]")
{
	// Four values in slot 1 [2,4), four in slot 3 [8,16): the boundary is
	// rank 4 = 0.5 * 8. Value = lo + (hi - lo) * (rank - below) / in_slot.
	Histogram h = hist(Histogram::Layout::Log2, {0, 4, 0, 4});
	CHECK(pct(h, 0.0) == Approx(2.0).margin(kEps));     // rank 0: bottom of slot 1
	CHECK(pct(h, 0.375) == Approx(3.5).margin(kEps));   // rank 3: 2 + 2 * 3/4
	CHECK(pct(h, 0.49) == Approx(3.96).margin(kEps));   // rank 3.92: 2 + 2 * 3.92/4
	CHECK(pct(h, 0.5) == Approx(4.0).margin(kEps));     // rank 4: top of slot 1, not 8
	CHECK(pct(h, 0.51) == Approx(8.16).margin(kEps));   // rank 4.08: 8 + 8 * 0.08/4
	CHECK(pct(h, 0.625) == Approx(10.0).margin(kEps));  // rank 5: 8 + 8 * 1/4
	CHECK(pct(h, 1.0) == Approx(16.0).margin(kEps));    // rank 8: top of slot 3
	// Slot 0 is [0,2): two values there, two in slot 1 [2,4). A rank in
	// slot 0 gives its top, as a bound: not 0 + 2 * 1/2.
	Histogram low = hist(Histogram::Layout::Log2, {2, 2});
	CHECK(pct(low, 0.25) == Approx(2.0).margin(kEps));  // rank 1: in slot 0, its top
	CHECK(quantile(low, 0.25)->upper_bound);
	CHECK(pct(low, 0.5) == Approx(2.0).margin(kEps));   // rank 2: top of slot 0
	CHECK(quantile(low, 0.5)->upper_bound);
	CHECK(pct(low, 0.75) == Approx(3.0).margin(kEps));  // rank 3: 2 + 2 * 1/2
	CHECK_FALSE(quantile(low, 0.75)->upper_bound);
}

TEST_CASE("linear percentile: nearest rank on, below and above a slot boundary", "[histogram][exact]")
{
	// Four 1s then four 3s: ranks 1..4 are 1, ranks 5..8 are 3;
	// rank = ceil(q * 8).
	Histogram h = hist(Histogram::Layout::Linear, {0, 4, 0, 4});
	CHECK(pct(h, 0.0) == 1.0);   // rank 1 (at least 1)
	CHECK(pct(h, 0.375) == 1.0); // rank 3
	CHECK(pct(h, 0.49) == 1.0);  // ceil(3.92) = 4
	CHECK(pct(h, 0.5) == 1.0);   // rank 4: the last 1, on the boundary
	CHECK(pct(h, 0.51) == 3.0);  // ceil(4.08) = 5: the first 3
	CHECK(pct(h, 0.625) == 3.0); // rank 5
	CHECK(pct(h, 1.0) == 3.0);   // rank 8
}

TEST_CASE("linear-log2 percentile: exact slots, log2 slots and their boundaries", "[histogram][exact]")
{
	// Two 63s (exact slot 63), four in [64,128) (slot 64), two in [128,256)
	// (slot 65): total 8, rank r = ceil(q * 8). In a log2 slot [L,2L) with n
	// samples the j-th is L + floor((j - 1/2) * L / n).
	std::vector<std::uint64_t> counts(66, 0);
	counts[63] = 2;
	counts[64] = 4;
	counts[65] = 2;
	Histogram h = hist(Histogram::Layout::LinearLog2, counts);
	CHECK(pct(h, 0.0) == 63.0);   // rank 1
	CHECK(pct(h, 0.125) == 63.0); // rank 1
	CHECK(pct(h, 0.24) == 63.0);  // ceil(1.92) = 2
	CHECK(pct(h, 0.25) == 63.0);  // rank 2: the last 63, on the boundary
	CHECK(pct(h, 0.26) == 72.0);  // ceil(2.08) = 3, j=1: 64 + floor(0.5 * 64/4) = 64 + 8
	CHECK(pct(h, 0.375) == 72.0); // rank 3, j=1
	CHECK(pct(h, 0.5) == 88.0);   // rank 4, j=2: 64 + floor(1.5 * 16) = 88
	CHECK(pct(h, 0.74) == 120.0); // ceil(5.92) = 6, j=4: 64 + floor(3.5 * 16) = 120
	CHECK(pct(h, 0.75) == 120.0); // rank 6: the last of slot 64, on the boundary
	CHECK(pct(h, 0.76) == 160.0); // ceil(6.08) = 7, slot 65 j=1: 128 + floor(0.5 * 128/2) = 160
	CHECK(pct(h, 0.875) == 160.0); // rank 7
	CHECK(pct(h, 1.0) == 224.0);  // rank 8, j=2: 128 + floor(1.5 * 64) = 224
	// 0.07 * 100 = 7.000000000000001 in doubles: still rank 7, not 8.
	std::vector<std::uint64_t> hundred(66, 0);
	hundred[1] = 7;
	hundred[2] = 93;
	CHECK(pct(hist(Histogram::Layout::LinearLog2, hundred), 0.07) == 1.0);
	CHECK(pct(hist(Histogram::Layout::LinearLog2, hundred), 0.08) == 2.0);
}

TEST_CASE("normalized entropy of written-out distributions", "[histogram][exact]")
{
	// p = 1/4, 1/4, 1/2 over k = 3 slots:
	// -(1/4 log2 1/4 + 1/4 log2 1/4 + 1/2 log2 1/2) / log2 3 = 1.5 / log2 3.
	CHECK(*normalized_entropy(hist(Histogram::Layout::Log2, {1, 1, 2})) ==
	      Approx(0.9463946303571862).margin(kEps));
	CHECK(*normalized_entropy(hist(Histogram::Layout::Log2, {1, 1, 2})) ==
	      Approx(1.5 / std::log2(3.0)).margin(kEps));
	// p = 1/8, 3/8, 1/2 over k = 8 slots (five empty):
	// -(1/8 log2 1/8 + 3/8 log2 3/8 + 1/2 log2 1/2) / log2 8 = 0.4685463540765222.
	CHECK(*normalized_entropy(hist(Histogram::Layout::Log2, {1, 0, 3, 0, 0, 0, 0, 4})) ==
	      Approx(0.4685463540765222).margin(kEps));
	// Uniform over the slots: 1; one slot: 0; one slot in all: 0.
	CHECK(*normalized_entropy(hist(Histogram::Layout::Linear, {3, 3, 3})) == Approx(1.0).margin(kEps));
	CHECK(*normalized_entropy(hist(Histogram::Layout::Log2, {0, 9, 0})) == Approx(0.0).margin(kEps));
	CHECK(*normalized_entropy(hist(Histogram::Layout::Log2, {9})) == 0.0);
}

TEST_CASE("seek entropy: the window's edges at every octave setting", "[histogram][exact]")
{
	// For o octaves, seeks around a window [L, L+o-1] (L = 6): 4 in slot L
	// (its lowest slot), 1 in slot L+1 (the next: kept apart), 2 in slot
	// L+o-1 (its top), 1 just below (L-1: folded into the lowest bin) and
	// 1 just above (L+o: into the top bin). The window holds 7; one slot
	// lower 6, one higher 4: it is the bulk. Bins [5, 1, 0, ..., 0, 3]
	// over 9 seeks, with 9 requests in slot 0 (continuing a stream): seek
	// share 1/2, spread (-(5/9 log2 5/9 + 1/9 log2 1/9 + 3/9 log2 3/9) +
	// Miller-Madow (3 - 1) / (2 * 9) nats) / log2 o. A window one octave
	// narrower folds slot L+1 into the lowest bin, a wider one or one
	// anchored a slot off puts the single seeks in other bins.
	const double h_bits = -(5.0 / 9 * std::log2(5.0 / 9) + 1.0 / 9 * std::log2(1.0 / 9) +
				3.0 / 9 * std::log2(3.0 / 9)) +
			      1 / (9 * std::log(2.0));
	CHECK(h_bits == Approx(1.511943564141055).margin(kEps));
	struct Case {
		unsigned octaves;
		double want;
	};
	for (Case c : {Case{3, 0.47696509016873345}, Case{5, 0.325579325102744}, Case{8, 0.25199059402350915}}) {
		const std::size_t lo = 6;
		std::vector<std::uint64_t> counts(lo + c.octaves + 3, 0);
		counts[0] = 9;
		counts[lo] = 4;
		counts[lo + 1] = 1;
		counts[lo + c.octaves - 1] = 2;
		counts[lo - 1] = 1;
		counts[lo + c.octaves] = 1;
		INFO("octaves " << c.octaves);
		double e = *seek_pattern_entropy(hist(Histogram::Layout::Log2, counts), c.octaves);
		CHECK(e == Approx(c.want).margin(kEps));
		CHECK(e == Approx(0.5 * h_bits / std::log2(c.octaves)).margin(kEps));
	}
	// Sequential: 0 exactly. Sequential with far jumps all alike (1% or
	// 10% of the requests): one bin of seeks, no spread: 0 exactly.
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, {1000})) == 0.0);
	std::vector<std::uint64_t> rare(30, 0);
	rare[0] = 990;
	rare[29] = 10;
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, rare)) == 0.0);
	rare[0] = 900;
	rare[29] = 100;
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, rare)) == 0.0);
	// Two distances, equally often, 18 octaves apart: the windows ending at
	// either hold 10; the higher wins, the other folds into the lowest
	// bin: two bins of 1/2, (1 + 1 / (40 ln 2)) / log2 5.
	std::vector<std::uint64_t> two(30, 0);
	two[2] = 10;
	two[20] = 10;
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, two)) ==
	      Approx((1 + 1 / (40 * std::log(2.0))) / std::log2(5.0)).margin(kEps));
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, two)) == Approx(0.44620993143738336).margin(kEps));
}

namespace {
// |x - y| over all n^2 pairs of positions in [0, n), n = 2^k: slot 0 (gaps
// 0 and 1) holds n + 2(n-1) = 3n - 2 pairs, slot j >= 1 (gaps [2^j,
// 2^(j+1))) holds sum 2(n-d) = 2^j (2n - 3 * 2^j + 1).
std::vector<std::uint64_t> uniform_gaps(int k)
{
	const std::uint64_t n = 1ull << k;
	std::vector<std::uint64_t> counts(40, 0);
	counts[0] = 3 * n - 2;
	for (int j = 1; j < k; ++j)
		counts[j] = (1ull << j) * (2 * n - 3 * (1ull << j) + 1);
	return counts;
}
} // namespace

TEST_CASE("seek entropy of uniform random offsets, exactly", "[histogram][exact]")
{
	// Computed outside the code under test (exact counts, the rule of
	// metrics.rst): k = 12, octaves 5: the window is slots 7..11, bins
	// [2015490, 1900800, 3408384, 5243904, 4196352] over the 16764930
	// seeks, seek share 16764930 / 2^24, with the Miller-Madow term.
	struct Case {
		int k;
		unsigned octaves;
		double want;
	};
	for (Case c : {Case{12, 3, 0.9750599998231675}, Case{12, 5, 0.9534263252936196}, Case{12, 8, 0.8081606062358336},
		       Case{16, 3, 0.9755013790378674}, Case{16, 5, 0.9544228852485411},
		       Case{16, 8, 0.8098397857951518}}) {
		INFO("k " << c.k << " octaves " << c.octaves);
		CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, uniform_gaps(c.k)), c.octaves) ==
		      Approx(c.want).margin(kEps));
	}
	// The default is 5 octaves.
	std::vector<std::uint64_t> counts = uniform_gaps(12);
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, counts)) == Approx(0.9534263252936196).margin(kEps));
	// One far jump (a journal write) among them joins the top bin.
	counts[35] = 1;
	const double with_jump = *seek_pattern_entropy(hist(Histogram::Layout::Log2, counts));
	CHECK(with_jump == Approx(0.9534263197604166).margin(kEps));
}

TEST_CASE("seek entropy: a mix of random and sequential requests reads as the mix", "[histogram][exact]")
{
	// p% of the requests seek as uniform random ones do, the rest continue
	// a stream (slot 0): p/100 times the value of the seeks alone (up to
	// the Miller-Madow term, which shrinks with the larger sample: < 1e-7).
	// The old definition (entropy of all gaps together) read a 50% mix
	// 0.79 and a 7% one 0.27 beside 0.91 for random alone.
	std::vector<std::uint64_t> seeks = uniform_gaps(12);
	seeks[0] = 0;
	std::uint64_t n_seeks = 0;
	for (auto c : seeks)
		n_seeks += c;
	const double alone = *seek_pattern_entropy(hist(Histogram::Layout::Log2, seeks));
	CHECK(alone == Approx(0.9541250335991454).margin(kEps));
	for (std::uint64_t p : {7, 50, 93}) {
		std::vector<std::uint64_t> mix = seeks;
		for (auto &c : mix)
			c *= p;
		mix[0] = (100 - p) * n_seeks;
		INFO(p << "% random");
		CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, mix)) ==
		      Approx(alone * static_cast<double>(p) / 100).margin(1e-6));
	}
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, {1000, 0, 0})) == 0.0);
}
