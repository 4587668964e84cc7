// A real CPU hotplug between two collects of the perf backend (root): the
// kernel takes a CPU's perf events off it when it goes offline and does not
// put them back when it returns (seen on 6.18: count and enabled time stay
// frozen), while the online list afterwards is the one of before. The
// backend sees the stopped enabled time and opens that CPU's groups again.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <string>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"
#include "require_root.h"

#include "hwsig/pmu_backend.h"

using namespace hwsig;

namespace {

// Writes 0 or 1 to cpuN/online; puts the CPU back online on destruction.
struct Hotplug {
	std::string path;
	explicit Hotplug(unsigned cpu) : path("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online") {}
	~Hotplug() { (void)set('1'); }
	bool set(char state) const
	{
		Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
		return fd && write(fd.get(), &state, 1) == 1;
	}
};

double value(const Snapshot &s, const std::string &scope)
{
	const auto *p = s.counter(series::kPmuCycles, scope);
	REQUIRE(p);
	return p->value;
}

} // namespace

TEST_CASE("perf backend: a CPU offline and back between two collects counts again", "[pmu][hotplug]")
{
	hwsig_test::require_root();
	const auto host = parse_cpu_list(read_trimmed("/sys/devices/system/cpu/online").value_or(""));
	if (!host || host->size() < 2)
		FAIL("needs two online CPUs, has " << (host ? host->size() : 0));
	const unsigned b = host->back(); // never CPU 0, which may not go offline
	Hotplug hotplug(b);
	if (!path_exists(hotplug.path))
		FAIL("CPU " << b << " cannot be taken offline here (no " << hotplug.path << ")");
	CorePlan plan;
	plan.series.push_back({series::kPmuCycles, {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, 0}});
	const std::string B = "cpu:" + std::to_string(b);
	pmu::PmuNotes notes;
	pmu::PerfBackend perf;
	perf.init("/", CpuIdentity{}, plan, "", notes);
	Snapshot s1;
	perf.collect(s1, notes);
	usleep(20000);
	Snapshot s2;
	perf.collect(s2, notes);
	const double b2 = value(s2, B);
	CHECK(b2 > value(s1, B));

	REQUIRE(hotplug.set('0'));
	usleep(50000);
	REQUIRE(hotplug.set('1'));
	usleep(20000);
	Snapshot s3;
	perf.collect(s3, notes); // the online list as before; b's events stopped
	usleep(20000);
	Snapshot s4;
	perf.collect(s4, notes); // seen stopped: opened again
	usleep(100000);
	Snapshot s5;
	perf.collect(s5, notes);
	const double b5 = value(s5, B);
	INFO("cpu-clock on CPU " << b << ": " << b2 << " ns before, " << value(s3, B) << " after the hotplug, "
				  << b5 << " 100 ms later");
	// cpu-clock counts wall time on an idle CPU too: 100 ms more.
	CHECK(b5 > value(s3, B) + 50e6);
	CHECK(value(s5, "system") > value(s4, "system"));
	perf.reset();
}
