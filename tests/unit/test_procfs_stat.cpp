// /proc/stat parser and the steal source.
#include <catch2/catch.hpp>

#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

const CpuTicks *find_cpu(const ProcStat &st, const std::string &scope)
{
	for (const auto &c : st.cpus)
		if (c.scope == scope)
			return &c;
	return nullptr;
}

} // namespace

TEST_CASE("proc/stat: captured debian12 host", "[procfs][stat]")
{
	auto st = parse_proc_stat(fixture_text("debian12-host", "/proc/stat"));
	REQUIRE(st.error.empty());
	REQUIRE(st.cpus.size() == 3);
	CHECK(st.cpus[0].scope == "system");
	// cpu  17278 0 7535 88000 3608 0 325 1768 0 0
	CHECK(st.cpus[0].steal == 1768u);
	CHECK(st.cpus[0].total == 17278u + 7535 + 88000 + 3608 + 325 + 1768);
	CHECK(st.cpus[0].columns == 10);
	// cpu0 7842 0 3002 47277 277 0 16 844 0 0
	const CpuTicks *cpu0 = find_cpu(st, "cpu:0");
	REQUIRE(cpu0);
	CHECK(cpu0->steal == 844u);
	CHECK(cpu0->total == 59258u);
	// cpu1 9435 0 4533 40722 3331 0 308 923 0 0
	const CpuTicks *cpu1 = find_cpu(st, "cpu:1");
	REQUIRE(cpu1);
	CHECK(cpu1->steal == 923u);
	CHECK(cpu1->total == 59252u);
}

TEST_CASE("proc/stat: 256 CPUs, guest time not counted twice", "[procfs][stat]")
{
	auto st = parse_proc_stat(fixture_text("xeon-2s-256cpu-8node", "/proc/stat"));
	REQUIRE(st.error.empty());
	REQUIRE(st.cpus.size() == 257);
	// cpu  288640 2560 160640 25828480 5120 1280 1792 97920 25600 0: the
	// guest column (25600) is inside user already.
	CHECK(st.cpus[0].total == 26386432u);
	CHECK(st.cpus[0].steal == 97920u);
	CHECK(find_cpu(st, "cpu:0")->total == 101542u);
	CHECK(find_cpu(st, "cpu:0")->steal == 0u);
	// cpu255 1255 10 755 101785 20 5 7 765 100 0
	CHECK(find_cpu(st, "cpu:255")->total == 104602u);
	CHECK(find_cpu(st, "cpu:255")->steal == 765u);
	std::uint64_t steal = 0, total = 0;
	for (std::size_t i = 1; i < st.cpus.size(); ++i) {
		steal += *st.cpus[i].steal;
		total += st.cpus[i].total;
	}
	CHECK(steal == *st.cpus[0].steal);
	CHECK(total == st.cpus[0].total);
}

TEST_CASE("proc/stat: kernels with fewer columns", "[procfs][stat]")
{
	SECTION("2.6.10: no steal column")
	{
		auto st = parse_proc_stat("cpu  10 1 20 300 4 5 6\ncpu0 10 1 20 300 4 5 6\nintr 1 2\n");
		REQUIRE(st.error.empty());
		REQUIRE(st.cpus.size() == 2);
		CHECK_FALSE(st.cpus[0].steal);
		CHECK(st.cpus[0].total == 346u);
		CHECK(st.cpus[1].columns == 7);
	}
	SECTION("2.4: user nice system idle")
	{
		auto st = parse_proc_stat("cpu 1 2 3 4\n");
		REQUIRE(st.error.empty());
		CHECK(st.cpus[0].total == 10u);
		CHECK_FALSE(st.cpus[0].steal);
	}
	SECTION("a later kernel's extra column is read but not summed")
	{
		auto st = parse_proc_stat("cpu 1 1 1 1 1 1 1 1 1 1 1000\n");
		REQUIRE(st.error.empty());
		CHECK(st.cpus[0].total == 8u);
		CHECK(st.cpus[0].steal == 1u);
	}
}

TEST_CASE("proc/stat: garbage is an error, never numbers", "[procfs][stat]")
{
	auto expect_error = [](std::string_view text, std::string_view fragment) {
		auto st = parse_proc_stat(text);
		INFO(std::string(text));
		CHECK(st.error.find(fragment) != std::string::npos);
		CHECK(st.cpus.empty());
	};
	expect_error(fixture_text("garbled", "/proc/stat"), "line 3: 'cpu1' has 3 time columns");
	expect_error("", "no aggregate 'cpu' line");
	expect_error("cpu0 1 2 3 4 5 6 7 8 0 0\n", "no aggregate");
	expect_error("cpu 1 2 3 4 5 6 7 8 0 0\ncpu 1 2 3 4 5 6 7 8 0 0\n", "second aggregate");
	expect_error("cpu 1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n",
		     "cpu0 listed twice");
	expect_error("cpu 1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8\n", "has 8 time columns, earlier lines 10");
	expect_error("cpu 1 2 3 x 5 6 7 8 0 0\n", "column 4 is not a number: 'x'");
	expect_error("cpu 1 2 3 -4 5 6 7 8 0 0\n", "is not a number: '-4'");
	expect_error("cpu 1 2 3 4 5 6 7 18446744073709551616 0 0\n", "is not a number");
	expect_error("cpu 18446744073709551615 1 0 0 0 0 0 0\n", "overflows");
	expect_error("cpu 1 2 3 4\ncpu01 1 2 3 4\n", "bad cpu name 'cpu01'");
	expect_error("cpu 1 2 3 4\ncpux 1 2 3 4\n", "bad cpu name 'cpux'");
	expect_error("cpu 1 2 3 4\ncpu99999999 1 2 3 4\n", "bad cpu name");
	expect_error(std::string_view("cpu 1 2\0 3 4\n", 13), "'2\\x00'");
}

TEST_CASE("stat source: captured host", "[procfs][stat][source]")
{
	auto src = make_stat_source();
	CHECK(src->provides() == std::vector<std::string>{"sched.steal_ratio", "sched.cpu_busy_ratio"});
	auto snap = collect(*src, fixture("debian12-host"));
	CHECK(snap.unavailable().empty());
	CHECK(counter(snap, series::kCpuStealTicks, "system") == 1768.0);
	CHECK(counter(snap, series::kCpuTotalTicks, "system") == 118514.0);
	CHECK(counter(snap, series::kCpuStealTicks, "cpu:1") == 923.0);
	CHECK(counter(snap, series::kCpuTotalTicks, "cpu:1") == 59252.0);
	// total - idle - iowait
	CHECK(counter(snap, series::kCpuBusyTicks, "system") == 118514.0 - 88000 - 3608);
	CHECK(counter(snap, series::kCpuBusyTicks, "cpu:1") == 59252.0 - 40722 - 3331);
	CHECK(series_count(snap) == 9);
	CHECK(snap.counters().at(series::kCpuStealTicks).source == "procfs");
}

TEST_CASE("stat source: missing, garbled, no steal column", "[procfs][stat][source]")
{
	auto src = make_stat_source();
	SECTION("missing")
	{
		auto snap = collect(*src, fixture("missing"));
		CHECK(note(snap, "sched.steal_ratio", "system") == "/proc/stat missing");
		CHECK(note(snap, "sched.cpu_busy_ratio", "system") == "/proc/stat missing");
		CHECK(series_count(snap) == 0);
	}
	SECTION("garbled")
	{
		auto snap = collect(*src, fixture("garbled"));
		CHECK(note(snap, "sched.steal_ratio", "system") ==
		      "/proc/stat garbled: line 3: 'cpu1' has 3 time columns, at least 4 expected");
		CHECK(series_count(snap) == 0);
	}
	SECTION("old kernel")
	{
		TempTree t;
		t.put("proc/stat", "cpu  10 1 20 300 4 5 6\ncpu0 10 1 20 300 4 5 6\n");
		auto snap = collect(*src, t.root());
		CHECK(note(snap, "sched.steal_ratio", "system") ==
		      "/proc/stat has no steal column (7 time columns: kernel older than 2.6.11)");
		// Busy time needs no steal column.
		CHECK(counter(snap, series::kCpuBusyTicks, "cpu:0") == 10.0 + 1 + 20 + 5 + 6);
		CHECK(series_count(snap) == 4);
	}
}

TEST_CASE("stat source end to end: steal ratio per CPU and system", "[procfs][stat][derive]")
{
	auto src = make_stat_source();
	auto iv = derive_between(*src, "xeon-2s-256cpu-8node", "xeon-2s-256cpu-8node-t1");
	// Every CPU gained 100 ticks, 10 of them steal on socket 0 (CPUs 0-63,
	// 128-191) and 25 on socket 1.
	CHECK(metric_count(iv, "sched.steal_ratio") == 257);
	for (auto [scope, expected] : {std::pair<const char *, double>{"cpu:0", 0.10}, {"cpu:63", 0.10},
				       {"cpu:64", 0.25}, {"cpu:128", 0.10}, {"cpu:255", 0.25}}) {
		const Metric *m = metric(iv, "sched.steal_ratio", scope);
		REQUIRE(m);
		CHECK(m->value == Approx(expected));
	}
	// cpu:0: 100 ticks, 30 of them idle; the host: 5760 idle of 25600.
	const Metric *busy0 = metric(iv, "sched.cpu_busy_ratio", "cpu:0");
	REQUIRE(busy0);
	CHECK(busy0->value == Approx(0.70));
	const Metric *busy = metric(iv, "sched.cpu_busy_ratio", "system");
	REQUIRE(busy);
	CHECK(busy->value == Approx((25600.0 - 5760) / 25600));
	const Metric *sys = metric(iv, "sched.steal_ratio", "system");
	REQUIRE(sys);
	CHECK(sys->value == Approx((128 * 10 + 128 * 25) / (256 * 100.0)));
	CHECK(sys->source == "procfs");
}
