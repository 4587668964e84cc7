#include "hwsig/histogram.h"

#include <algorithm>
#include <cmath>

namespace hwsig {

std::size_t Histogram::linear_log2_slot(std::uint64_t v)
{
	if (v < kLinearLog2Exact)
		return static_cast<std::size_t>(v);
	// 64..127 -> 64, 128..255 -> 65, ...
	std::size_t slot = kLinearLog2Exact;
	for (v >>= 7; v; v >>= 1)
		++slot;
	return slot;
}

std::pair<double, double> Histogram::slot_range(std::size_t i) const
{
	if (layout == Layout::Linear || (layout == Layout::LinearLog2 && i < kLinearLog2Exact))
		return {static_cast<double>(i), static_cast<double>(i + 1)};
	if (layout == Layout::LinearLog2) {
		int k = static_cast<int>(i - kLinearLog2Exact);
		return {std::ldexp(static_cast<double>(kLinearLog2Exact), k),
			std::ldexp(static_cast<double>(kLinearLog2Exact), k + 1)};
	}
	if (i == 0)
		return {0.0, 2.0};
	return {std::ldexp(1.0, static_cast<int>(i)), std::ldexp(1.0, static_cast<int>(i) + 1)};
}

std::uint64_t Histogram::total() const
{
	std::uint64_t t = 0;
	for (auto c : counts)
		t += c;
	return t;
}

Histogram &Histogram::operator+=(const Histogram &o)
{
	counts.resize(std::max(counts.size(), o.counts.size()), 0);
	for (std::size_t i = 0; i < o.counts.size(); ++i)
		counts[i] += o.counts[i];
	return *this;
}

std::optional<Histogram> Histogram::delta(const Histogram &prev, const Histogram &cur)
{
	if (prev.layout != cur.layout)
		return std::nullopt;
	Histogram d;
	d.layout = cur.layout;
	d.counts.resize(cur.counts.size());
	for (std::size_t i = 0; i < cur.counts.size(); ++i) {
		std::uint64_t before = i < prev.counts.size() ? prev.counts[i] : 0;
		if (cur.counts[i] < before)
			return std::nullopt;
		d.counts[i] = cur.counts[i] - before;
	}
	// A slot that disappeared and had counts means the source was reset.
	for (std::size_t i = cur.counts.size(); i < prev.counts.size(); ++i)
		if (prev.counts[i] != 0)
			return std::nullopt;
	return d;
}

namespace {

// Nearest rank over integer-valued slots (Linear, LinearLog2): see
// histogram.h for the rule and its bound.
double integer_percentile(const Histogram &h, double q, std::uint64_t total)
{
	// ceil(q * total) without letting 0.07 * 100 = 7.000000000000001 round up.
	double exact = q * static_cast<double>(total);
	double r = std::ceil(exact - 1e-9 * (exact > 1 ? exact : 1));
	std::uint64_t rank = r < 1 ? 1 : static_cast<std::uint64_t>(r);
	if (rank > total)
		rank = total;
	std::uint64_t below = 0;
	std::size_t last = 0;
	for (std::size_t i = 0; i < h.counts.size(); ++i) {
		std::uint64_t n = h.counts[i];
		if (n == 0)
			continue;
		last = i;
		if (rank <= below + n) {
			auto [lo, hi] = h.slot_range(i);
			if (hi - lo <= 1.0)
				return lo; // one value: exact
			double j = static_cast<double>(rank - below);
			return lo + std::floor((j - 0.5) * (hi - lo) / static_cast<double>(n));
		}
		below += n;
	}
	return h.slot_range(last).first; // not reached: rank <= total
}

} // namespace

std::optional<double> percentile(const Histogram &h, double q)
{
	auto v = quantile(h, q);
	return v ? std::optional<double>(v->value) : std::nullopt;
}

std::optional<Quantile> quantile(const Histogram &h, double q)
{
	std::uint64_t total = h.total();
	if (total == 0 || !(q >= 0.0 && q <= 1.0))
		return std::nullopt;
	if (h.layout == Histogram::Layout::LinearLog2)
		return Quantile{integer_percentile(h, q, total), false};
	double rank = q * static_cast<double>(total);
	double below = 0;
	for (std::size_t i = 0; i < h.counts.size(); ++i) {
		if (h.counts[i] == 0)
			continue;
		double in_slot = static_cast<double>(h.counts[i]);
		if (rank <= below + in_slot) {
			auto [lo, hi] = h.slot_range(i);
			// Linear slots hold exact integer values: no interpolation.
			if (h.layout == Histogram::Layout::Linear)
				return Quantile{lo, false};
			if (i == 0)
				return Quantile{hi, true};
			double frac = (rank - below) / in_slot;
			if (frac < 0)
				frac = 0;
			return Quantile{lo + (hi - lo) * frac, false};
		}
		below += in_slot;
	}
	// Rounding left rank a hair above the total: the last non-empty slot.
	for (std::size_t i = h.counts.size(); i-- > 0;)
		if (h.counts[i] != 0)
			return h.layout == Histogram::Layout::Linear ? Quantile{h.slot_range(i).first, false}
								      : Quantile{h.slot_range(i).second, i == 0};
	return std::nullopt;
}

std::optional<double> normalized_entropy(const Histogram &h)
{
	std::uint64_t total = h.total();
	if (total == 0)
		return std::nullopt;
	if (h.counts.size() < 2)
		return 0.0;
	double entropy = 0;
	for (auto c : h.counts) {
		if (c == 0)
			continue;
		double p = static_cast<double>(c) / static_cast<double>(total);
		entropy -= p * std::log2(p);
	}
	double norm = entropy / std::log2(static_cast<double>(h.counts.size()));
	return norm < 0 ? 0.0 : (norm > 1 ? 1.0 : norm);
}

std::optional<double> seek_pattern_entropy(const Histogram &h, unsigned octaves)
{
	const std::uint64_t total = h.total();
	if (total == 0 || octaves == 0)
		return std::nullopt;
	const std::uint64_t seeks = total - (h.counts.empty() ? 0 : h.counts[0]);
	if (seeks == 0 || octaves == 1)
		return 0.0;
	// The window of `octaves` slots up to a seek's slot `top` holding the
	// most seeks (the higher on a tie). Its top holds seeks, so that the
	// distances it keeps apart are there.
	const std::size_t slots = h.counts.size();
	std::size_t top = 1;
	std::uint64_t best = 0;
	for (std::size_t t = 1; t < slots; ++t) {
		if (h.counts[t] == 0)
			continue;
		std::uint64_t in = 0;
		for (std::size_t i = t + 1 > octaves ? t + 1 - octaves : 1; i <= t; ++i)
			in += h.counts[i];
		if (in >= best) {
			best = in;
			top = t;
		}
	}
	// Bin octaves-1 holds the top and farther, bin 0 the window's lowest
	// slot and nearer.
	std::vector<std::uint64_t> bins(octaves, 0);
	for (std::size_t i = 1; i < slots; ++i) {
		const std::size_t below = i >= top ? 0 : top - i;
		bins[below < octaves ? octaves - 1 - below : 0] += h.counts[i];
	}
	double entropy = 0; // bits
	unsigned used = 0;
	for (auto c : bins) {
		if (c == 0)
			continue;
		++used;
		const double p = static_cast<double>(c) / static_cast<double>(seeks);
		entropy -= p * std::log2(p);
	}
	// Miller-Madow: the plug-in estimate is low by about (used - 1) / 2s nats.
	entropy += (used - 1) / (2.0 * static_cast<double>(seeks) * std::log(2.0));
	const double spread = std::clamp(entropy / std::log2(static_cast<double>(octaves)), 0.0, 1.0);
	return static_cast<double>(seeks) / static_cast<double>(total) * spread;
}

} // namespace hwsig
