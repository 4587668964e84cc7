// The procfs/sysfs sources on the machine running the tests: they must not
// throw, every metric they claim gets a value or a reason, and the values are
// in range.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <time.h>

#include "hwsig/parse.h"
#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

std::uint64_t now_ns()
{
	timespec ts{};
	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

struct LiveInterval {
	Interval iv;
	// How much longer than the interval's nominal time (from the start of
	// one collect to the start of the next) the source's reads can lie
	// apart at most (from the start of one to the end of the next): a
	// share of time, such as a PSI stall, can exceed 100% of the nominal
	// time by that much when the machine delays a read, never more.
	double stretch = 1;
};

LiveInterval live_interval(Source &src)
{
	SourceContext ctx;
	Snapshot a, b;
	a.mono_ns = now_ns();
	REQUIRE_NOTHROW(src.collect(ctx, a));
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	b.mono_ns = now_ns();
	REQUIRE_NOTHROW(src.collect(ctx, b));
	const std::uint64_t b_done = now_ns();
	return {checked_derive(a, b, src.provides()),
		static_cast<double>(b_done - a.mono_ns) / static_cast<double>(b.mono_ns - a.mono_ns)};
}

} // namespace

TEST_CASE("live host: every claimed metric has a value or a reason, values in range", "[procfs][live]")
{
	SourcePtr sources[] = {make_stat_source(), make_numa_source(), make_meminfo_source(), make_psi_source(),
			       make_schedstat_source()};
	for (auto &src : sources) {
		INFO(std::string(src->name()));
		auto [iv, stretch] = live_interval(*src);
		INFO("reads up to " << stretch << " x the nominal interval apart");
		for (const auto &id : src->provides()) {
			INFO(id);
			bool value = metric_count(iv, id) > 0;
			bool reason = false;
			for (const auto &u : iv.unavailable)
				reason |= u.id == id && !u.reason.empty();
			CHECK((value || reason));
		}
		for (const auto &m : iv.metrics) {
			INFO(m.id + " " + m.scope);
			CHECK(m.value >= 0.0);
			if (m.unit == "ratio")
				CHECK(m.value <= 1.0 * stretch);
			if (m.unit == "%")
				CHECK(m.value <= 100.0 * stretch);
		}
	}
}

TEST_CASE("live host: CPU scopes of /proc/stat and the schedstat reason", "[procfs][live]")
{
	auto stat = make_stat_source();
	SourceContext ctx;
	Snapshot snap;
	stat->collect(ctx, snap);
	if (!note(snap, "sched.steal_ratio", "system")) {
		// One scope per online CPU plus the system line.
		std::size_t online = 0;
		auto r = read_file("/sys/devices/system/cpu/online");
		REQUIRE(r.data);
		auto cpus = parse_cpu_list(*r.data);
		REQUIRE(cpus);
		online = cpus->size();
		CHECK(snap.counters().at(series::kCpuTotalTicks).by_scope.size() == online + 1);
	}
	auto sched = make_schedstat_source();
	Snapshot s2;
	sched->collect(ctx, s2);
	if (!path_exists("/proc/schedstat"))
		CHECK(note(s2, "sched.runq_wait_avg_us", "system") ==
		      "/proc/schedstat missing (kernel built without CONFIG_SCHEDSTATS)");
	else
		CHECK(counter(s2, series::kSchedstatTimeslices, "system"));
}
