// Histograms as the sources deliver them: cumulative bucket counts in a known
// layout. Derivation works on the difference of two snapshots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace hwsig {

struct Histogram {
	enum class Layout : std::uint8_t {
		// Slot 0 holds values 0..1, slot k>=1 holds [2^k, 2^(k+1)):
		// the layout of libbpf-tools' log2l() histograms.
		Log2,
		// Slot i holds exactly the value i; the last slot holds >= its index.
		Linear,
		// Exact below kLinearLog2Exact (slot i < 64 holds exactly the
		// value i), log2 above: slot 64+k holds [64*2^k, 64*2^(k+1)).
		// The vhost queue depths (bpf/hwsig_vhost.h): 74 slots, the last
		// one [32768, 65536) covering every 16-bit depth.
		LinearLog2,
	};
	static constexpr std::size_t kLinearLog2Exact = 64;
	// The LinearLog2 slot of value v (unbounded: callers clamp).
	static std::size_t linear_log2_slot(std::uint64_t v);
	Layout layout = Layout::Log2;
	std::vector<std::uint64_t> counts;

	// [low, high) of values that fall in slot i.
	std::pair<double, double> slot_range(std::size_t i) const;
	std::uint64_t total() const;
	// Slot-wise cur - prev; nullopt when a slot went backwards (reset) or the
	// layouts differ.
	static std::optional<Histogram> delta(const Histogram &prev, const Histogram &cur);
	// Slot-wise sum (the longer of the two lengths); the layout stays this
	// one's: callers add histograms of one layout (per-CPU maps, scopes).
	Histogram &operator+=(const Histogram &o);

	// A histogram over n slots read from a BPF map (whatever the u64 type).
	template <typename Count>
	static Histogram from_slots(Layout layout, const Count *slots, std::size_t n)
	{
		Histogram h;
		h.layout = layout;
		h.counts.assign(slots, slots + n);
		return h;
	}
};

// q in [0,1]. Linear interpolation inside the slot that holds the q-th
// value. Error bound: the true quantile lies in that slot, so the error is at
// most the slot width (for Log2: a factor of 2). nullopt when empty.
//
// Linear and LinearLog2 hold integer values; their rule is nearest rank: the
// value of the r-th smallest sample, r = ceil(q * total) (at least 1). In a
// slot that holds one value (every Linear slot, LinearLog2 slots below 64)
// that value is returned exactly: 200 samples of 8 give p50 = 8, never 8.5.
// In a LinearLog2 log2 slot [L, 2L) the j-th of its n samples is estimated
// as if the n were spread evenly over its L integers: L + floor((j - 1/2) *
// L / n). The estimate and the true value both lie in [L, 2L-1]: the error is
// at most L-1, less than the true value (within a factor of 2).
std::optional<double> percentile(const Histogram &h, double q);

// A percentile with what the histogram can vouch for. In the lowest Log2
// slot [0, 2) nothing separates its values: interpolating there would give
// numbers no sample had (1.00 and 1.98 for requests that all took < 2 us).
// There the answer is the slot's upper end, marked as a bound: every sample
// up to rank q lay below it.
struct Quantile {
	double value = 0;
	bool upper_bound = false; // value is an exclusive upper bound, not an estimate
};
std::optional<Quantile> quantile(const Histogram &h, double q);

// Shannon entropy of the slot distribution normalised by log2(number of
// slots): 0 when all values share one slot, 1 when uniform over all slots.
// nullopt when empty.
std::optional<double> normalized_entropy(const Histogram &h);

// io.pattern_entropy from a Log2 histogram of seek distances (slot 0: the
// request continued a stream; every other slot: a seek). Weighted by
// requests, so that a mix reads as the mix: the share of requests that
// seeked times the spread of their distances. The spread is the entropy of
// the seeks over `octaves` bins anchored on their bulk: the `octaves`
// slots up to a slot with seeks that hold the most seeks (the higher on a
// tie) stay apart, nearer seeks join the lowest bin and farther ones (a
// journal write beside random I/O, the jumps to a second stream) the
// highest.
// With the Miller-Madow correction for a small sample ((bins used - 1) / 2s
// nats for s seeks), normalized by log2(octaves) and kept within 0..1.
// Sequential: 0. Uniformly random offsets over any area: about 0.9 (their
// distances spread over the top octaves as 1/4, 5/16, 7/32, ...); a share p
// of them beside sequential streams: about p times that. nullopt when empty.
inline constexpr std::uint64_t kMinEntropyRequests = 16; // fewer: derive says "too few requests"
std::optional<double> seek_pattern_entropy(const Histogram &h, unsigned octaves = 5);

} // namespace hwsig
