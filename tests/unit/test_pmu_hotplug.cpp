// Issue 13, item 12: the perf_event_open backend follows the online CPU list
// (<root>/sys/devices/system/cpu/online, a scratch copy here that the test
// rewrites) from one collect to the next: it opens the groups of a CPU that
// came online and closes those of one that went offline, and a CPU back
// online continues its sums instead of resetting them. The kernel has no
// hardware PMU here, so the plan is made of software events (cpu-clock
// counts on every CPU, idle or not), opened on the host's first two CPUs.
#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <linux/perf_event.h>
#include <set>
#include <utility>
#include <sys/ioctl.h>
#include <unistd.h>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"

#include "hwsig/pmu_backend.h"

using namespace hwsig;

namespace {

std::size_t open_fds()
{
	return list_dir("/proc/self/fd").size();
}

// This process's perf event fds.
std::set<int> perf_fds()
{
	std::set<int> out;
	for (const auto &name : list_dir("/proc/self/fd")) {
		char target[64] = {};
		const std::string link = "/proc/self/fd/" + name;
		if (readlink(link.c_str(), target, sizeof(target) - 1) > 0 &&
		    std::string_view(target) == "anon_inode:[perf_event]")
			out.insert(std::stoi(name));
	}
	return out;
}

struct ScratchRoot {
	std::string root;
	ScratchRoot()
	{
		char tmpl[] = "/tmp/hwsig-hotplug-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		root = tmpl;
		REQUIRE(system(("mkdir -p " + root + "/sys/devices/system/cpu").c_str()) == 0);
	}
	~ScratchRoot() { (void)system(("rm -rf " + root).c_str()); }
	void online(const std::string &list)
	{
		std::ofstream(root + "/sys/devices/system/cpu/online") << list << "\n";
	}
};

double value(const Snapshot &s, const char *series, const std::string &scope)
{
	const auto *p = s.counter(series, scope);
	REQUIRE(p);
	return p->value;
}


// The host's first two online CPUs, once per-CPU perf_event_open is known
// to be allowed (FAIL otherwise: not a pass without them).
std::pair<unsigned, unsigned> two_perf_cpus()
{
	const auto host = parse_cpu_list(read_trimmed("/sys/devices/system/cpu/online").value_or(""));
	if (!host || host->size() < 2)
		FAIL("needs two online CPUs, has " << (host ? host->size() : 0));
	try {
		PerfGroup::open({PerfEventSpec{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 0}},
				static_cast<int>((*host)[0]));
	} catch (const Error &e) {
		FAIL("perf_event_open per CPU not permitted here ("
		     << errno_name(e.err()) << "): run as root or lower kernel.perf_event_paranoid");
	}
	return {(*host)[0], (*host)[1]};
}

// A cpu-clock counter as the cycles series: it counts on every CPU, idle
// or not.
CorePlan cpu_clock_plan()
{
	CorePlan plan;
	plan.series.push_back({series::kPmuCycles, {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 0}});
	return plan;
}
} // namespace

TEST_CASE("perf backend: groups opened for a CPU that comes online, closed when it goes", "[source_pmu][hotplug]")
{
	const auto [a, b] = two_perf_cpus();
	CorePlan plan = cpu_clock_plan();
	plan.series.push_back({series::kPmuInstructions,
			       {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0}});
	const std::string A = "cpu:" + std::to_string(a), B = "cpu:" + std::to_string(b);

	ScratchRoot t;
	t.online(std::to_string(a));
	pmu::PmuNotes notes;
	pmu::PerfBackend perf;
	perf.init(t.root, CpuIdentity{}, plan, "", notes);
	const std::size_t fds_one = open_fds(); // one group {cycles, instructions} on CPU a: 2 fds
	Snapshot s1;
	perf.collect(s1, notes);
	CHECK(s1.counter(series::kPmuCycles, A));
	CHECK_FALSE(s1.counter(series::kPmuCycles, B));

	// b comes online: opened at the next collect.
	t.online(std::to_string(a) + "," + std::to_string(b));
	Snapshot s2;
	perf.collect(s2, notes);
	CHECK(open_fds() == fds_one + 2);
	REQUIRE(s2.counter(series::kPmuCycles, B));
	REQUIRE(s2.counter(series::kPmuInstructions, B));
	const double b2 = value(s2, series::kPmuCycles, B);
	CHECK(value(s2, series::kPmuCycles, "system") == Approx(value(s2, series::kPmuCycles, A) + b2));

	// b goes offline: its group is closed, its count stays in the system sum.
	t.online(std::to_string(a));
	Snapshot s3;
	perf.collect(s3, notes);
	CHECK(open_fds() == fds_one);
	CHECK_FALSE(s3.counter(series::kPmuCycles, B));
	CHECK(value(s3, series::kPmuCycles, "system") == Approx(value(s3, series::kPmuCycles, A) + b2));
	CHECK(value(s3, series::kPmuCycles, "system") > value(s2, series::kPmuCycles, "system"));

	// b back: opened again, counting on from where it was (no reset).
	t.online(std::to_string(a) + "," + std::to_string(b));
	Snapshot s4;
	perf.collect(s4, notes);
	CHECK(open_fds() == fds_one + 2);
	REQUIRE(s4.counter(series::kPmuCycles, B));
	CHECK(value(s4, series::kPmuCycles, B) > b2);
	CHECK(value(s4, series::kPmuCycles, "system") > value(s3, series::kPmuCycles, "system"));

	// An unreadable list this time: what is open stays open and is read.
	t.online("garbage");
	Snapshot s5;
	perf.collect(s5, notes);
	CHECK(open_fds() == fds_one + 2);
	CHECK(s5.counter(series::kPmuCycles, B));

	Snapshot none;
	notes.add_to(none);
	CHECK(none.unavailable().empty());
	perf.reset();
	CHECK(open_fds() == fds_one - 2);
}

TEST_CASE("perf backend: a CPU's groups that the kernel stopped are opened again", "[source_pmu][hotplug]")
{
	// A CPU that goes offline and comes back between two collects leaves
	// the online list as it was, but the kernel took its events off it
	// for good: their counts and enabled times stop. Disabling the events
	// of one CPU stops them the same way, without taking a CPU away from
	// the other tests.
	const auto [a, b] = two_perf_cpus();
	const CorePlan plan = cpu_clock_plan();
	const std::string B = "cpu:" + std::to_string(b);

	ScratchRoot t;
	t.online(std::to_string(a));
	pmu::PmuNotes notes;
	pmu::PerfBackend perf;
	perf.init(t.root, CpuIdentity{}, plan, "", notes);
	Snapshot s1;
	perf.collect(s1, notes);
	const std::set<int> before = perf_fds();
	t.online(std::to_string(a) + "," + std::to_string(b));
	Snapshot s2;
	perf.collect(s2, notes); // opens b's group, and reads it
	std::vector<int> b_fds;
	for (int fd : perf_fds())
		if (!before.count(fd))
			b_fds.push_back(fd);
	REQUIRE(b_fds.size() == 1);
	usleep(20000);
	Snapshot s3;
	perf.collect(s3, notes); // b read again: its enabled time advanced
	const double b3 = value(s3, series::kPmuCycles, B);
	CHECK(b3 > value(s2, series::kPmuCycles, B));

	REQUIRE(ioctl(b_fds[0], PERF_EVENT_IOC_DISABLE, 0) == 0);
	usleep(20000);
	Snapshot s4;
	perf.collect(s4, notes); // counted until the disable: a bit more
	const double b4 = value(s4, series::kPmuCycles, B);
	usleep(20000);
	Snapshot s5;
	perf.collect(s5, notes); // stopped: seen, b's group opened again (closed, then opened)
	CHECK(perf_fds().size() == before.size() + 1);
	usleep(50000);
	Snapshot s6;
	perf.collect(s6, notes);
	// Counting again, on from where it stopped: cpu-clock counts 50 ms of
	// wall time on an idle CPU too.
	REQUIRE(s6.counter(series::kPmuCycles, B));
	const double b6 = value(s6, series::kPmuCycles, B);
	CHECK(b6 > b4 + 10e6);
	CHECK(value(s6, series::kPmuCycles, "system") > value(s5, series::kPmuCycles, "system"));
	Snapshot none;
	notes.add_to(none);
	CHECK(none.unavailable().empty());
	perf.reset();
}
