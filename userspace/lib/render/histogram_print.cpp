// libbpf-tools' trace_helpers.c print_log2_hist()/print_stars() layout, on
// hwsig::Histogram.
#include "hwsig/histogram_print.h"

namespace hwsig {

namespace {

// val's share of val_max as a bar of width characters; "+" when val is
// beyond val_max.
void print_stars(std::FILE *out, std::uint64_t val, std::uint64_t val_max, int width)
{
	std::uint64_t shown = val < val_max ? val : val_max;
	int stars = val_max ? static_cast<int>(shown * static_cast<std::uint64_t>(width) / val_max) : 0;
	for (int i = 0; i < stars; ++i)
		std::fputc('*', out);
	for (int i = stars; i < width; ++i)
		std::fputc(' ', out);
	if (val > val_max)
		std::fputc('+', out);
}

// The rows of print_log2_hist(); divisor 0 prints the bounds as integers.
void print_log2_rows(std::FILE *out, const Histogram &h, const char *val_type, double divisor)
{
	int idx_max = -1;
	std::uint64_t val_max = 0;
	for (std::size_t i = 0; i < h.counts.size(); ++i) {
		if (h.counts[i] > 0)
			idx_max = static_cast<int>(i);
		if (h.counts[i] > val_max)
			val_max = h.counts[i];
	}
	if (idx_max < 0)
		return;
	bool narrow = idx_max <= 32;
	std::fprintf(out, "%*s%-*s : count    distribution\n", narrow ? 5 : 15, "", narrow ? 19 : 29, val_type);
	int stars = narrow ? 40 : 20;
	int width = narrow ? 10 : 20;
	for (int i = 0; i <= idx_max; ++i) {
		unsigned long long low = (1ULL << (i + 1)) >> 1;
		unsigned long long high = (1ULL << (i + 1)) - 1;
		if (low == high)
			low -= 1;
		std::uint64_t val = h.counts[static_cast<std::size_t>(i)];
		if (divisor > 0)
			std::fprintf(out, "%*.3f -> %-*.3f : %-8llu |", width, static_cast<double>(low) / divisor,
				     width, static_cast<double>(high) / divisor, static_cast<unsigned long long>(val));
		else
			std::fprintf(out, "%*llu -> %-*llu : %-8llu |", width, low, width, high,
				     static_cast<unsigned long long>(val));
		print_stars(out, val, val_max, stars);
		std::fprintf(out, "|\n");
	}
}

} // namespace

void print_log2_hist(std::FILE *out, const Histogram &h, const char *val_type)
{
	print_log2_rows(out, h, val_type, 0);
}

void print_log2_hist_scaled(std::FILE *out, const Histogram &h, const char *val_type, double divisor)
{
	print_log2_rows(out, h, val_type, divisor);
}

void print_linear_log2_hist(std::FILE *out, const Histogram &h, const char *val_type)
{
	int idx_min = -1, idx_max = -1;
	std::uint64_t val_max = 0;
	for (std::size_t i = 0; i < h.counts.size(); ++i) {
		if (h.counts[i] == 0)
			continue;
		if (idx_min < 0)
			idx_min = static_cast<int>(i);
		idx_max = static_cast<int>(i);
		if (h.counts[i] > val_max)
			val_max = h.counts[i];
	}
	if (idx_max < 0)
		return;
	std::fprintf(out, "%5s%-19s : count    distribution\n", "", val_type);
	for (int i = idx_min; i <= idx_max; ++i) {
		auto [lo, hi] = h.slot_range(static_cast<std::size_t>(i));
		auto low = static_cast<unsigned long long>(lo);
		auto high = static_cast<unsigned long long>(hi) - 1;
		std::uint64_t val = h.counts[static_cast<std::size_t>(i)];
		if (low == high)
			std::fprintf(out, "%10llu    %-10s : %-8llu |", low, "", static_cast<unsigned long long>(val));
		else
			std::fprintf(out, "%10llu -> %-10llu : %-8llu |", low, high,
				     static_cast<unsigned long long>(val));
		print_stars(out, val, val_max, 40);
		std::fprintf(out, "|\n");
	}
}

} // namespace hwsig
