// hwsigctl hist's text: libbpf-tools' print_log2_hist() layout, checked
// character for character on small histograms.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "hwsig/histogram_print.h"

using namespace hwsig;

namespace {

// What print(out, h, unit) writes, through an open_memstream FILE.
template <typename Print> std::string printed(Print print, const Histogram &h, const char *unit)
{
	char *buf = nullptr;
	std::size_t len = 0;
	std::FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	print(f, h, unit);
	std::fclose(f);
	std::string s(buf, len);
	std::free(buf);
	return s;
}

std::string bar(int stars, int width)
{
	return "|" + std::string(static_cast<std::size_t>(stars), '*') +
	       std::string(static_cast<std::size_t>(width - stars), ' ') + "|\n";
}

} // namespace

TEST_CASE("log2 histogram prints like libbpf-tools' runqlat", "[histogram]")
{
	Histogram h;
	h.counts = {1, 0, 4, 2, 0, 0};
	// Header: 5 spaces, the unit left-aligned in 19; rows "%10llu -> %-10llu :
	// %-8llu |" and 40 columns of stars scaled to the largest count; the
	// rows end at the highest non-empty slot.
	const std::string want = "     usecs               : count    distribution\n"
				 "         0 -> 1          : 1        " + bar(10, 40) +
				 "         2 -> 3          : 0        " + bar(0, 40) +
				 "         4 -> 7          : 4        " + bar(40, 40) +
				 "         8 -> 15         : 2        " + bar(20, 40);
	CHECK(printed(print_log2_hist, h, "usecs") == want);
}

TEST_CASE("log2 histogram scaled: microsecond slots with bounds in ms", "[histogram]")
{
	Histogram h;
	h.counts = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1};
	const auto print = [](std::FILE *f, const Histogram &x, const char *unit) {
		print_log2_hist_scaled(f, x, unit, 1000.0);
	};
	const std::string out = printed(print, h, "msecs");
	// Same layout as unscaled; the bounds divided, three decimals.
	CHECK(out.rfind("     msecs               : count    distribution\n"
			"     0.000 -> 0.001      : 0        " + bar(0, 40),
			0) == 0);
	CHECK(out.find("     1.024 -> 2.047      : 3        " + bar(40, 40)) != std::string::npos);
	CHECK(out.find("     2.048 -> 4.095      : 1        " + bar(13, 40)) != std::string::npos);
}

TEST_CASE("log2 histogram beyond slot 32 uses the wide layout", "[histogram]")
{
	Histogram h;
	h.counts.assign(34, 0);
	h.counts[33] = 3;
	const std::string out = printed(print_log2_hist, h, "usecs");
	// 15 spaces, the unit in 29; rows of width 20 and 20 stars.
	CHECK(out.rfind(std::string(15, ' ') + "usecs" + std::string(24, ' ') + " : count    distribution\n", 0) == 0);
	CHECK(out.find("          8589934592 -> 17179869183          : 3        " + bar(20, 20)) != std::string::npos);
}

TEST_CASE("an empty histogram prints nothing", "[histogram]")
{
	Histogram h;
	h.counts.assign(8, 0);
	CHECK(printed(print_log2_hist, h, "usecs").empty());
	h.layout = Histogram::Layout::LinearLog2;
	CHECK(printed(print_linear_log2_hist, h, "depth").empty());
}

TEST_CASE("linear-log2 histogram: exact rows below 64, ranges above", "[histogram]")
{
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	h.counts.assign(Histogram::kLinearLog2Exact + 2, 0);
	h.counts[2] = 1;
	h.counts[3] = 2;
	CHECK(printed(print_linear_log2_hist, h, "depth") ==
	      "     depth               : count    distribution\n"
	      "         2               : 1        " + bar(20, 40) +
	      "         3               : 2        " + bar(40, 40));

	h.counts.assign(Histogram::kLinearLog2Exact + 2, 0);
	h.counts[Histogram::kLinearLog2Exact + 1] = 5; // [128, 256)
	CHECK(printed(print_linear_log2_hist, h, "depth") ==
	      "     depth               : count    distribution\n"
	      "       128 -> 255        : 5        " + bar(40, 40));
}
