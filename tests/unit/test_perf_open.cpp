// The perf_event_open fallback, with software events (which exist even where
// there is no hardware PMU) against workloads whose counts are known.
// When perf_event_open is forbidden (not root, perf_event_paranoid) these
// tests FAIL and say why: a test that could not run has not passed.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <linux/perf_event.h>
#include <sched.h>
#include <time.h>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/perf_open.h"

using namespace hwsig;

namespace {

std::uint64_t clock_ns(clockid_t id)
{
	timespec ts;
	clock_gettime(id, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

PerfEventSpec sw(const char *name, std::uint64_t config)
{
	return PerfEventSpec{name, PERF_TYPE_SOFTWARE, config, 0, 0};
}

std::string why_forbidden(const Error &e)
{
	std::string paranoid = "?";
	if (auto r = read_file("/proc/sys/kernel/perf_event_paranoid"); r.data)
		paranoid = std::string(r.data->substr(0, r.data->find('\n')));
	std::string msg = std::string("perf_event_open is not permitted here (") + e.what() +
			  "); kernel.perf_event_paranoid = " + paranoid + ", euid " + std::to_string(geteuid()) +
			  ". Run as root or lower perf_event_paranoid.";
	if (std::getenv("CI"))
		msg += " (CI is set: this environment must allow it)";
	return msg;
}

// Opens or fails the test with the reason; never skips silently.
PerfGroup open_or_fail(const std::vector<PerfEventSpec> &ev, int cpu, pid_t pid)
{
	try {
		return PerfGroup::open(ev, cpu, pid);
	} catch (const Error &e) {
		if (e.err() == EACCES || e.err() == EPERM)
			FAIL(why_forbidden(e));
		throw;
	}
}

void spin_thread_cpu(std::uint64_t ns)
{
	const std::uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile std::uint64_t x = 0;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x = x + i;
}

void sleep_times(int n)
{
	for (int i = 0; i < n; i++) {
		timespec ts{0, 1000000};
		nanosleep(&ts, nullptr);
	}
}

struct PinToCpu {
	cpu_set_t old;
	explicit PinToCpu(int cpu)
	{
		sched_getaffinity(0, sizeof(old), &old);
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
	}
	~PinToCpu() { sched_setaffinity(0, sizeof(old), &old); }
};

} // namespace

TEST_CASE("task-clock and context-switches of this thread match a known workload", "[perf]")
{
	PerfGroup g = open_or_fail({sw("task-clock", PERF_COUNT_SW_TASK_CLOCK),
				    sw("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES)},
				   -1, 0);
	REQUIRE(g.size() == 2);
	const std::uint64_t wall0 = clock_ns(CLOCK_MONOTONIC);
	auto before = g.read();
	const std::uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	spin_thread_cpu(60000000); // 60 ms of CPU
	sleep_times(25);           // 25 voluntary switches
	const std::uint64_t cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	auto after = g.read();
	const std::uint64_t wall1 = clock_ns(CLOCK_MONOTONIC);

	const double task_clock = double(after[0].count - before[0].count);
	const double thread_cpu = double(cpu1 - cpu0);
	const double wall = double(wall1 - wall0);
	INFO("task-clock " << task_clock << " ns, thread CPU time " << thread_cpu << " ns, wall " << wall << " ns");
	CHECK(task_clock >= 0.9 * thread_cpu);
	// The scheduler's thread CPU time leaves out time stolen by the
	// hypervisor, perf's task-clock does not: the hard upper bound is wall
	// time, and most of that window was spent spinning.
	CHECK(task_clock <= wall);
	CHECK(task_clock >= 0.5 * 60e6);
	const double switches = double(after[1].count - before[1].count);
	INFO("context switches " << switches);
	CHECK(switches >= 25);
	// Plus preemptions on a busy machine: at most about one per millisecond
	// of the window (the scheduler's granularity), never thousands.
	CHECK(switches <= 25 + wall / 1e6);
	CHECK(after[0].running_ns == after[0].enabled_ns); // software events never multiplex
	CHECK(after[1].running_ns == after[1].enabled_ns);
}

TEST_CASE("per-CPU system-wide software counters (the fallback's shape)", "[perf]")
{
	PerfGroup g = open_or_fail({sw("cpu-clock", PERF_COUNT_SW_CPU_CLOCK),
				    sw("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES)},
				   0, -1);
	PinToCpu pin(0);
	auto before = g.read();
	const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	sleep_times(30); // 30 switches away from this thread on cpu 0, at least
	spin_thread_cpu(20000000);
	const std::uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
	auto after = g.read();
	const double cpu_clock = double(after[0].count - before[0].count);
	const double wall = double(t1 - t0);
	INFO("cpu-clock on cpu 0 " << cpu_clock << " ns over " << wall << " ns wall");
	// A per-CPU cpu-clock counts wall time on that CPU while enabled.
	CHECK(cpu_clock >= 0.9 * wall);
	CHECK(cpu_clock <= 1.1 * wall + 2e6);
	CHECK(after[1].count - before[1].count >= 30);
	CHECK(after[0].enabled_ns > before[0].enabled_ns);
}

TEST_CASE("an event the kernel refuses names itself and keeps errno", "[perf]")
{
	try {
		PerfGroup::open({PerfEventSpec{"bogus-pmu-event", 0x7777, 1, 0, 0}}, -1, 0);
		FAIL("opened an event of PMU type 0x7777");
	} catch (const Error &e) {
		CHECK(e.err() != 0);
		CHECK_THAT(e.what(), Catch::Contains("bogus-pmu-event"));
		CHECK_THAT(e.what(), Catch::Contains("type 30583"));
	}
	CHECK_THROWS_AS(PerfGroup::open({}, -1, 0), Error);
	CHECK(errno_name(ENOENT) == "ENOENT");
	CHECK(errno_name(EOPNOTSUPP) == "EOPNOTSUPP");
}
