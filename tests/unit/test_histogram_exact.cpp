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

TEST_CASE("seek entropy: the fold boundary at every octave setting", "[histogram][exact]")
{
	// For o octaves over slots 0..top (top = o + 4): 8 gaps in slot 0, 4 in
	// slot top-o (the nearest slot that is folded), 2 in slot top-o+1 (the
	// farthest-down slot kept apart) and 2 in slot top. Folded bins:
	// [8+4, 2, 0, ..., 0, 2] -> p = 3/4, 1/8, 1/8:
	// -(3/4 log2 3/4 + 2 * 1/8 log2 1/8) / log2(o+1) = 1.0612781244591327 / log2(o+1).
	// Keeping one octave fewer apart folds slot top-o+1 too: p = 7/8, 1/8.
	// Plus the Miller-Madow correction for n = 16 gaps in 3 bins:
	// (3 - 1) / (2 * 16) nats = 1 / (16 ln 2) bits.
	const double h_bits = -(0.75 * std::log2(0.75) + 2 * 0.125 * std::log2(0.125)) + 1 / (16 * std::log(2.0));
	CHECK(h_bits == Approx(1.1514465645146932).margin(kEps));
	struct Case {
		unsigned octaves;
		double want;
	};
	for (Case c : {Case{2, 0.7264818971999567}, Case{3, 0.5757232822573466}, Case{5, 0.4454403358630778},
		       Case{8, 0.36324094859997835}}) {
		std::size_t top = c.octaves + 4;
		std::vector<std::uint64_t> counts(top + 1, 0);
		counts[0] = 8;
		counts[top - c.octaves] = 4;
		counts[top - c.octaves + 1] = 2;
		counts[top] = 2;
		INFO("octaves " << c.octaves);
		double e = *seek_pattern_entropy(hist(Histogram::Layout::Log2, counts), c.octaves);
		CHECK(e == Approx(c.want).margin(kEps));
		CHECK(e == Approx(h_bits / std::log2(c.octaves + 1.0)).margin(kEps));
	}
	// Sequential: 0 exactly. Sequential with a rare far jump, 99 : 1: the
	// 1% is under the 5% that moves the anchor, so it joins the anchor's
	// bin: one bin, 0 exactly.
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, {1000})) == 0.0);
	std::vector<std::uint64_t> rare(30, 0);
	rare[0] = 990;
	rare[29] = 10;
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, rare)) == 0.0);
	// 10% far jumps do move it: 900 gaps of 0 and 100 in slot 29, anchored
	// there: p = 0.9, 0.1 plus 1 / (2000 ln 2) bits, over log2 6.
	rare[0] = 900;
	rare[29] = 100;
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, rare)) ==
	      Approx((-(0.9 * std::log2(0.9) + 0.1 * std::log2(0.1)) + 1 / (2000 * std::log(2.0))) / std::log2(6.0))
		      .margin(kEps));
}

TEST_CASE("seek entropy of uniform random offsets, exactly", "[histogram][exact]")
{
	// |x - y| over all n^2 pairs of positions in [0, n), n = 2^k: slot 0
	// (gaps 0 and 1) holds n + 2(n-1) = 3n - 2 pairs, slot j >= 1 (gaps
	// [2^j, 2^(j+1))) holds sum 2(n-d) = 2^j (2n - 3 * 2^j + 1). Folded and
	// normalised with exact probabilities (count / n^2) outside the code
	// under test; k = 12, octaves 5: bins [1028224, 999552, 1900800,
	// 3408384, 5243904, 4196352] / 2^24 -> 0.9040246828242733, plus the
	// Miller-Madow term 5 / (2 * 2^24 ln 2) / log2 6 -> 0.9040247659892373.
	struct Case {
		int k;
		unsigned octaves;
		double want;
	};
	for (Case c : {Case{12, 3, 0.9910188527299915}, Case{12, 5, 0.9040247659892373}, Case{12, 8, 0.7710722617965386},
		       Case{16, 3, 0.9910331345791453}, Case{16, 5, 0.9041902253604702},
		       Case{16, 8, 0.771419905788378}}) {
		const std::uint64_t n = 1ull << c.k;
		std::vector<std::uint64_t> counts(40, 0);
		counts[0] = 3 * n - 2;
		for (int j = 1; j < c.k; ++j)
			counts[j] = (1ull << j) * (2 * n - 3 * (1ull << j) + 1);
		INFO("k " << c.k << " octaves " << c.octaves);
		CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, counts), c.octaves) ==
		      Approx(c.want).margin(kEps));
	}
	// The default is 5 octaves.
	std::vector<std::uint64_t> counts(40, 0);
	counts[0] = 3 * 4096 - 2;
	for (int j = 1; j < 12; ++j)
		counts[j] = (1ull << j) * (2 * 4096 - 3 * (1ull << j) + 1);
	CHECK(*seek_pattern_entropy(hist(Histogram::Layout::Log2, counts)) == Approx(0.9040247659892373).margin(kEps));
	// One far jump (a journal write) among them: the anchor stays at the
	// random I/O's top octave (the old anchor, the highest non-empty slot,
	// folded everything into "near": about 0.01).
	counts[35] = 1;
	const double with_jump = *seek_pattern_entropy(hist(Histogram::Layout::Log2, counts));
	CHECK(with_jump == Approx(0.9040247659892373).margin(1e-6));
}
