// Human units of the table (units.h): three significant digits, the prefix
// chosen after rounding, NaN as "-".
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "hwsig/units.h"

using namespace hwsig;

TEST_CASE("sig3: three significant digits, no exponent in the usual range", "[units]")
{
	CHECK(sig3(0) == "0");
	CHECK(sig3(-0.0) == "0");
	CHECK(sig3(1) == "1.00");
	CHECK(sig3(12.34) == "12.3");
	CHECK(sig3(-12.34) == "-12.3");
	CHECK(sig3(123.4) == "123");
	CHECK(sig3(12345) == "12300");
	CHECK(sig3(0.0012345) == "0.00123");
	// 999.5 is exact in binary: the tie rounds up to the next decade.
	CHECK(sig3(999.5) == "1000");
	CHECK(sig3(999.4) == "999");
	CHECK(sig3(9.996) == "10.0");
	CHECK(sig3(0.0000012) == "1.20e-06"); // below 1e-5: an exponent
	CHECK(sig3(std::nan("")) == "-");
	CHECK(sig3(std::numeric_limits<double>::infinity()) == "-");
}

TEST_CASE("sig3_grouped: thousands separated", "[units]")
{
	CHECK(sig3_grouped(0) == "0");
	CHECK(sig3_grouped(999.4) == "999");
	CHECK(sig3_grouped(999.5) == "1,000");
	CHECK(sig3_grouped(1234567) == "1,230,000");
	CHECK(sig3_grouped(-1234567) == "-1,230,000");
	CHECK(sig3_grouped(123456) == "123,000");
	CHECK(sig3_grouped(2.5) == "2.50");
	CHECK(sig3_grouped(std::nan("")) == "-");
}

TEST_CASE("human_bytes: 1024-based, never four digits", "[units]")
{
	auto b = [](double v, const char *suffix = "") {
		HumanValue h = human_bytes(v, suffix);
		return h.number + " " + h.unit;
	};
	CHECK(b(0) == "0 B");
	CHECK(b(999) == "999 B");
	CHECK(b(999.5) == "0.976 KiB"); // 1000 B would be four digits
	CHECK(b(1536) == "1.50 KiB");
	CHECK(b(1048576, "/s") == "1.00 MiB/s");
	CHECK(b(3.5 * 1024 * 1024 * 1024) == "3.50 GiB");
	CHECK(b(-2048) == "-2.00 KiB");
	CHECK(b(std::nan(""), "/s") == "- B/s");
}

TEST_CASE("human_time_us: ns, µs, ms or s as fits", "[units]")
{
	auto t = [](double us) {
		HumanValue h = human_time_us(us);
		return h.number + " " + h.unit;
	};
	CHECK(t(0) == "0 ns");
	CHECK(t(0.5) == "500 ns");
	CHECK(t(0.9996) == "1.00 µs"); // 999.6 ns rounds to 1000: the next unit
	CHECK(t(45) == "45.0 µs");
	CHECK(t(999.95) == "1.00 ms");
	CHECK(t(12000) == "12.0 ms");
	CHECK(t(2500000) == "2.50 s");
	CHECK(t(-1500) == "-1.50 ms");
	CHECK(t(std::nan("")) == "- µs");
}

TEST_CASE("humanize: each catalog unit", "[units]")
{
	CHECK(human_text(0.125, "ratio") == "12.5 %");
	CHECK(human_text(0, "ratio") == "0 %");
	CHECK(human_text(0.0342, "s/s") == "3.42 %"); // sched.wait_behind_ratio: a share of time
	CHECK(human_text(7.5, "%") == "7.50 %");
	CHECK(human_text(2097152, "B/s") == "2.00 MiB/s");
	CHECK(human_text(2097152, "B") == "2.00 MiB");
	CHECK(human_text(1500, "us") == "1.50 ms");
	CHECK(human_text(45, "degC") == "45.0 °C");
	CHECK(human_text(0.91, "0..1") == "0.910");
	CHECK(human_text(1234, "req/s") == "1,230 req/s");
	CHECK(human_text(120, "descriptors") == "120 desc");
	CHECK(human_text(1.5, "insn/cycle") == "1.50 insn/cycle");
	CHECK(human_text(std::nan(""), "us") == "-");
}

TEST_CASE("display width and padding count code points", "[units]")
{
	CHECK(display_width("µs") == 2);
	CHECK(display_width("45.0 °C") == 7);
	CHECK(pad("µs", 4) == "µs  ");
	CHECK(pad("ms", 4, false) == "  ms");
	CHECK(pad("toolong", 3) == "toolong");
}
