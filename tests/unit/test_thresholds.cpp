// The thresholds file: defaults, settings, and every bad input refused
// with the file, line and key.
#include <catch2/catch.hpp>

#include <string>

#include "hwsig/docs.h"
#include "hwsig/thresholds.h"

using namespace hwsig;

static std::string error_of(const std::string &text)
{
	try {
		parse_thresholds(text, "t.conf");
	} catch (const ThresholdError &e) {
		return e.what();
	}
	return "(accepted)";
}

TEST_CASE("thresholds: defaults in base units", "[thresholds]")
{
	Thresholds t;
	CHECK(t.user("cpu.steal_pct") == 10);
	CHECK(t.base("cpu.steal_pct") == Approx(0.10));
	CHECK(t.base("cpu.runq_p99_ms") == 1000);   // us
	CHECK(t.base("disk.latency_p99_ms") == 10000);
	CHECK(t.base("thermal.headroom_c") == 5);
	CHECK(t.base("mem.dram_peak_gibps") == 0);  // rule off until set
	CHECK_THROWS_AS(t.base("psi.no_such"), std::out_of_range);
}

TEST_CASE("thresholds: a file changes the keys it names, comments and blanks ignored", "[thresholds]")
{
	Thresholds t = parse_thresholds("# site thresholds\n\ncpu.steal_pct = 20   # busier host\r\n"
					"  disk.latency_p99_ms=2.5\nmem.dram_peak_gibps = 100", "t.conf");
	CHECK(t.user("cpu.steal_pct") == 20);
	CHECK(t.base("cpu.steal_pct") == Approx(0.20));
	CHECK(t.base("disk.latency_p99_ms") == 2500);
	CHECK(t.base("mem.dram_peak_gibps") == Approx(100.0 * 1024 * 1024 * 1024));
	CHECK(t.user("cpu.runq_p99_ms") == 1); // untouched: the default
	CHECK(parse_thresholds("", "t.conf").user("thermal.headroom_c") == 5);
}

TEST_CASE("thresholds: bad input names the file, line and key", "[thresholds]")
{
	CHECK(error_of("\ncpu.bogus = 1\n") ==
	      "t.conf:2: unknown key 'cpu.bogus' (the keys are listed in " HWSIG_DOC("thresholds.rst") ")");
	CHECK(error_of("cpu.steal_pct 10") == "t.conf:1: expected 'key = value', got 'cpu.steal_pct 10'");
	CHECK(error_of("cpu.steal_pct =") == "t.conf:1: key 'cpu.steal_pct' has no value");
	CHECK(error_of("cpu.steal_pct = abc") == "t.conf:1: key 'cpu.steal_pct': 'abc' is not a number");
	CHECK(error_of("cpu.steal_pct = 10x") == "t.conf:1: key 'cpu.steal_pct': '10x' is not a number");
	CHECK(error_of("cpu.steal_pct = nan") == "t.conf:1: key 'cpu.steal_pct': 'nan' is not a number");
	CHECK(error_of("cpu.steal_pct = inf") == "t.conf:1: key 'cpu.steal_pct': 'inf' is not a number");
	CHECK(error_of("cpu.steal_pct = 1e999") == "t.conf:1: key 'cpu.steal_pct': '1e999' is not a number");
	CHECK(error_of("cpu.steal_pct = 150") == "t.conf:1: key 'cpu.steal_pct': 150 is outside 0 .. 100 %");
	CHECK(error_of("cpu.steal_pct = -1") == "t.conf:1: key 'cpu.steal_pct': -1 is outside 0 .. 100 %");
	CHECK(error_of("disk.random_entropy = 1.5") ==
	      "t.conf:1: key 'disk.random_entropy': 1.5 is outside 0 .. 1");
	CHECK(error_of("cpu.steal_pct = 5\n# x\ncpu.steal_pct = 6") == "t.conf:3: key 'cpu.steal_pct' set a second time");
	CHECK(error_of("= 5") == "t.conf:1: unknown key '' (the keys are listed in " HWSIG_DOC("thresholds.rst") ")");
	CHECK(error_of(std::string("cpu.steal_pct = 5\0", 18)) == "t.conf:1: a NUL byte (not a text file?)");
	// Every boundary of the range is accepted.
	CHECK(error_of("cpu.steal_pct = 0\ncpu.psi_some_pct = 100") == "(accepted)");
}

TEST_CASE("thresholds: every key has a source and a default inside its range", "[thresholds]")
{
	for (const auto &d : threshold_defs()) {
		INFO(d.key);
		CHECK(std::string(d.source).size() > 10);
		CHECK(d.value >= d.min);
		CHECK(d.value <= d.max);
		CHECK(d.to_base > 0);
	}
}
