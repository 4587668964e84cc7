// /proc/pressure parser and the PSI source.
#include <catch2/catch.hpp>

#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

const char *const kNoPsi = "PSI not available (kernel without CONFIG_PSI or booted with psi=0)";
const char *const kIds[] = {"psi.cpu_some_pct", "psi.memory_some_pct", "psi.memory_full_pct", "psi.io_some_pct",
			    "psi.io_full_pct"};

} // namespace

TEST_CASE("pressure: captured debian12 host", "[procfs][pressure]")
{
	auto cpu = parse_pressure(fixture_text("debian12-host", "/proc/pressure/cpu"));
	REQUIRE(cpu.error.empty());
	REQUIRE(cpu.some);
	CHECK(cpu.some->avg10 == Approx(5.93));
	CHECK(cpu.some->avg60 == Approx(4.86));
	CHECK(cpu.some->avg300 == Approx(2.89));
	CHECK(cpu.some->total_us == 19052466u);
	REQUIRE(cpu.full);
	CHECK(cpu.full->avg10 == 0.0);
	CHECK(cpu.full->total_us == 0u);

	auto io = parse_pressure(fixture_text("debian12-host", "/proc/pressure/io"));
	REQUIRE(io.error.empty());
	CHECK(io.some->avg10 == Approx(0.33));
	CHECK(io.some->total_us == 32154096u);
	CHECK(io.full->avg60 == Approx(0.27));
	CHECK(io.full->total_us == 30659744u);

	auto mem = parse_pressure(fixture_text("debian12-host", "/proc/pressure/memory"));
	REQUIRE(mem.error.empty());
	CHECK(mem.some->avg10 == 0.0);
	CHECK(mem.full->avg300 == 0.0);
}

TEST_CASE("pressure: hand-made trees, cpu without 'full' before 5.13", "[procfs][pressure]")
{
	auto io = parse_pressure(fixture_text("xeon-2s-256cpu-8node", "/proc/pressure/io"));
	REQUIRE(io.error.empty());
	CHECK(io.some->avg10 == Approx(30.75));
	CHECK(io.full->avg10 == Approx(22.10));
	CHECK(io.full->total_us == 87654321u);
	auto cpu = parse_pressure(fixture_text("amd-1s-64cpu-4node", "/proc/pressure/cpu"));
	REQUIRE(cpu.error.empty());
	CHECK(cpu.some->avg10 == Approx(0.37));
	CHECK_FALSE(cpu.full);
}

TEST_CASE("pressure: garbage is an error", "[procfs][pressure]")
{
	auto expect_error = [](std::string_view text, std::string_view fragment) {
		auto p = parse_pressure(text);
		INFO(std::string(text));
		CHECK(p.error.find(fragment) != std::string::npos);
		CHECK_FALSE(p.some);
		CHECK_FALSE(p.full);
	};
	expect_error(fixture_text("garbled", "/proc/pressure/cpu"), "line 1: avg10 is not a percentage: 'abc'");
	expect_error(fixture_text("garbled", "/proc/pressure/memory"), "line 1: avg60 is not a percentage: ''");
	expect_error(fixture_text("garbled", "/proc/pressure/io"),
		     "line 1: expected 'some' or 'full', got '\\x00\\xff\\xfesome\\x01'");
	expect_error("", "no 'some' line");
	expect_error("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "no 'some' line");
	expect_error("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", "avg10 is not a percentage: '100.01'");
	expect_error("some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n", "avg10 is not a percentage: '-1.00'");
	expect_error("some avg10=1e3 avg60=0.00 avg300=0.00 total=0\n", "avg10 is not a percentage");
	expect_error("some avg10=1.00 avg60=0.00 avg300=0.00\n", "lacks one of avg10, avg60, avg300, total");
	expect_error("some avg10=1.00 avg10=1.00 avg60=0.00 avg300=0.00 total=1\n", "avg10 listed twice");
	expect_error("some avg10=1.00 avg60=0.00 avg300=0.00 total=-1\n", "total is not an unsigned number");
	expect_error("some avg10=1.00 avg60=0.00 avg300=0.00 total=1\nsome avg10=1.00 avg60=0.00 avg300=0.00 total=1\n",
		     "line 2: some listed twice");
	expect_error("some avg10 avg60=0.00 avg300=0.00 total=1\n", "expected key=value, got 'avg10'");
	expect_error("some =1 avg10=1.00 avg60=0.00 avg300=0.00 total=1\n", "expected key=value, got '=1'");
}

TEST_CASE("pressure: a key a later kernel adds is ignored", "[procfs][pressure]")
{
	auto p = parse_pressure("some avg10=1.50 avg60=0.00 avg300=0.00 total=10 avg1=9.99\n");
	REQUIRE(p.error.empty());
	CHECK(p.some->avg10 == Approx(1.5));
}

TEST_CASE("psi source: captured host and hand-made trees", "[procfs][psi][source]")
{
	auto src = make_psi_source();
	CHECK(src->provides() == std::vector<std::string>(std::begin(kIds), std::end(kIds)));
	SECTION("debian12 host")
	{
		auto snap = collect(*src, fixture("debian12-host"));
		CHECK(snap.unavailable().empty());
		CHECK(gauge(snap, series::kPsiCpuSome, "system") == Approx(5.93));
		CHECK(gauge(snap, series::kPsiMemorySome, "system") == 0.0);
		CHECK(gauge(snap, series::kPsiMemoryFull, "system") == 0.0);
		CHECK(gauge(snap, series::kPsiIoSome, "system") == Approx(0.33));
		CHECK(gauge(snap, series::kPsiIoFull, "system") == 0.0);
		// The totals (us) the catalog's rates come from.
		CHECK(counter(snap, series::kPsiCpuSomeUs, "system") == 19052466.0);
		CHECK(counter(snap, series::kPsiMemorySomeUs, "system") == 0.0);
		CHECK(counter(snap, series::kPsiIoSomeUs, "system") == 32154096.0);
		CHECK(counter(snap, series::kPsiIoFullUs, "system") == 30659744.0);
		CHECK(series_count(snap) == 10);
	}
	SECTION("amd: no cpu 'full' line is no problem")
	{
		auto snap = collect(*src, fixture("amd-1s-64cpu-4node"));
		CHECK(snap.unavailable().empty());
		CHECK(gauge(snap, series::kPsiCpuSome, "system") == Approx(0.37));
		CHECK(gauge(snap, series::kPsiIoFull, "system") == Approx(0.75));
		CHECK(counter(snap, series::kPsiCpuSomeUs, "system") == 4455667.0);
		CHECK(counter(snap, series::kPsiIoFullUs, "system") == 554433.0);
		CHECK(series_count(snap) == 10);
	}
}

TEST_CASE("psi source: missing, garbled, partial", "[procfs][psi][source]")
{
	auto src = make_psi_source();
	SECTION("no /proc/pressure")
	{
		auto snap = collect(*src, fixture("missing"));
		for (const char *id : kIds)
			CHECK(note(snap, id, "system") == kNoPsi);
		CHECK(series_count(snap) == 0);
	}
	SECTION("garbled")
	{
		auto snap = collect(*src, fixture("garbled"));
		CHECK(note(snap, "psi.cpu_some_pct", "system") ==
		      "/proc/pressure/cpu garbled: line 1: avg10 is not a percentage: 'abc'");
		CHECK(note(snap, "psi.memory_full_pct", "system") ==
		      "/proc/pressure/memory garbled: line 1: avg60 is not a percentage: ''");
		CHECK(note(snap, "psi.io_some_pct", "system")->find("/proc/pressure/io garbled: line 1:") == 0);
		CHECK(series_count(snap) == 0);
	}
	SECTION("one file missing, memory without a 'full' line")
	{
		TempTree t;
		t.put("proc/pressure/cpu", "some avg10=2.00 avg60=0.00 avg300=0.00 total=5\n");
		t.put("proc/pressure/memory", "some avg10=3.00 avg60=0.00 avg300=0.00 total=5\n");
		auto snap = collect(*src, t.root());
		CHECK(gauge(snap, series::kPsiCpuSome, "system") == Approx(2.0));
		CHECK(gauge(snap, series::kPsiMemorySome, "system") == Approx(3.0));
		CHECK(note(snap, "psi.memory_full_pct", "system") == "/proc/pressure/memory has no 'full' line");
		CHECK(note(snap, "psi.io_some_pct", "system") == "/proc/pressure/io missing");
		CHECK(note(snap, "psi.io_full_pct", "system") == "/proc/pressure/io missing");
		CHECK(series_count(snap) == 4);
	}
	SECTION("a read error other than 'missing' names the file and the errno")
	{
		TempTree t;
		t.mkdir("proc/pressure/cpu");
		t.put("proc/pressure/memory", "some avg10=3.00 avg60=0.00 avg300=0.00 total=5\n"
					       "full avg10=1.00 avg60=0.00 avg300=0.00 total=2\n");
		auto snap = collect(*src, t.root());
		CHECK(note(snap, "psi.cpu_some_pct", "system") == "reading /proc/pressure/cpu: Is a directory");
		CHECK(gauge(snap, series::kPsiMemoryFull, "system") == Approx(1.0));
	}
}

// The interval's share comes from the totals: the fixtures' totals advance
// by what makes t1's avg10 over their 2 s (see make-large-tree).
TEST_CASE("psi source end to end: the interval's share of stalled time", "[procfs][psi][derive]")
{
	auto src = make_psi_source();
	auto iv = derive_between(*src, "xeon-2s-256cpu-8node", "xeon-2s-256cpu-8node-t1");
	std::pair<const char *, double> expected[] = {{"psi.cpu_some_pct", 20.00},  {"psi.memory_some_pct", 5.50},
						      {"psi.memory_full_pct", 2.25}, {"psi.io_some_pct", 40.50},
						      {"psi.io_full_pct", 33.30}};
	for (auto [id, value] : expected) {
		const Metric *m = metric(iv, id, "system");
		REQUIRE(m);
		CHECK(m->value == Approx(value));
		CHECK(m->unit == "%");
	}
}

// avg10 is a 10 s average refreshed every 2 s: after a burst it stays high
// for seconds, and a burst within the interval shows late. The interval's
// value is what its totals say, whatever avg10 says.
TEST_CASE("psi source: the interval's value is the totals', not avg10", "[procfs][psi][derive]")
{
	auto src = make_psi_source();
	TempTree t;
	auto put = [&](double avg10, std::uint64_t some_us, std::uint64_t full_us) {
		char line[200];
		std::snprintf(line, sizeof line,
			      "some avg10=%.2f avg60=0.00 avg300=0.00 total=%llu\n"
			      "full avg10=%.2f avg60=0.00 avg300=0.00 total=%llu\n",
			      avg10, static_cast<unsigned long long>(some_us), avg10,
			      static_cast<unsigned long long>(full_us));
		for (const char *f : {"proc/pressure/cpu", "proc/pressure/memory", "proc/pressure/io"})
			t.put(f, line);
	};
	// A quiet second after a burst: avg10 still 35%, the totals moved 1 ms.
	put(35.0, 5'000'000, 4'000'000);
	auto a = collect(*src, t.root(), nullptr, 1'000'000'000ull);
	put(35.0, 5'001'000, 4'000'000);
	auto b = collect(*src, t.root(), nullptr, 2'000'000'000ull);
	auto iv = checked_derive(a, b, src->provides());
	REQUIRE(metric(iv, "psi.cpu_some_pct", "system"));
	CHECK(metric(iv, "psi.cpu_some_pct", "system")->value == Approx(0.1));
	CHECK(metric(iv, "psi.io_full_pct", "system")->value == 0.0);
	// A 600 ms stall within a 2 s interval: 30%, while avg10 says 2%.
	put(2.0, 5'601'000, 4'300'000);
	auto c = collect(*src, t.root(), nullptr, 4'000'000'000ull);
	auto iv2 = checked_derive(b, c, src->provides());
	CHECK(metric(iv2, "psi.memory_some_pct", "system")->value == Approx(30.0));
	CHECK(metric(iv2, "psi.memory_full_pct", "system")->value == Approx(15.0));
}
