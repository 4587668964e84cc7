// The events behind the metric catalog's cpu.* and mem.imc_* metrics, chosen
// per CPU vendor and model (Documentation/pmu.rst explains each choice), and
// the event lists hwsig.ko is configured with.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/cpu_identity.h"
#include "hwsig/kmod.h"
#include "hwsig/pmu_devices.h"

namespace hwsig {

// Every series.h name a PMU plan can feed: the core pmu.* series, and the
// uncore imc.* ones. The PMU source's metrics are the catalog's metrics
// that read them (metrics_reading).
const std::vector<std::string_view> &pmu_core_series();
const std::vector<std::string_view> &pmu_dram_series();

// ---- core counters (pmu_plan.cpp) ----

// One pmu.* series and the one event that feeds it on this CPU, whichever
// backend counts it: hwsig.ko cannot try an event and fall back to another
// the way perf_event_open can, so the plan never offers a choice that the
// two would settle differently.
struct CoreSeriesPlan {
	std::string series; // series.h name, e.g. "pmu.cycles"
	PerfEventSpec event;
};
struct CorePlan {
	std::vector<CoreSeriesPlan> series;
	// series -> reason, for the series this CPU cannot count at all; the
	// catalog's rules say which metrics that leaves unmeasured.
	std::vector<std::pair<std::string, std::string>> missing;
};
CorePlan plan_core_events(const PmuDevices &pmus, const CpuIdentity &cpu);

// Names of the software events hwsig.ko counts on a host without a core PMU.
std::vector<std::string> default_software_event_names();

// The one-line reason used when the core PMU is missing, e.g.
// "no hardware PMU: running under a hypervisor (perf cycles: ENOENT)";
// via names what failed to open cycles ("perf" or "hwsig.ko").
std::string no_pmu_reason(const CpuIdentity &cpu, int err, std::string_view via = "perf");

// ---- uncore DRAM traffic (pmu_plan_uncore.cpp) ----

// Every (PMU instance, CPU) to open, with the socket it counts and whether
// it counts reads, writes or both. Counts are CAS commands (64 bytes each);
// sysfs .scale files are deliberately ignored.
enum class DramDirection { Read, Write, ReadWrite };
struct UncoreDramEvent {
	std::string pmu; // "uncore_imc_0", "amd_umc_3", "amd_df"...
	unsigned cpu = 0;
	unsigned socket = 0;
	DramDirection direction = DramDirection::Read;
	PerfEventSpec spec;
};
// The imc.* series of a direction.
const char *dram_series(DramDirection d);
struct UncoreDramPlan {
	std::string kind; // "uncore_imc_free_running", "uncore_imc", "amd_umc", "amd_df", or empty
	std::vector<UncoreDramEvent> events;
	std::string unavailable_reason; // when events is empty
	std::vector<std::string> notes; // e.g. amd_df counts reads and writes together
};
UncoreDramPlan plan_uncore_dram(const PmuDevices &pmus, const CpuIdentity &cpu);

// ---- hwsig.ko event lists (pmu_plan_kmod.cpp) ----

// The event as hwsig.ko takes it, counting on every CPU.
KmodEvent to_kmod_event(const PerfEventSpec &spec, std::string name);

// The default event set for hwsig.ko: the cpu.* events of this CPU (the
// plan's, as the perf_event_open backend counts them), or, on a host
// without a core PMU, the software events (so that the module's machinery
// still runs and can be checked); *software_only says which it chose.
std::vector<KmodEvent> default_kmod_events(const PmuDevices &pmus, const CpuIdentity &cpu, bool *software_only);

// `hwsigctl kmod start --events LIST`: LIST split at the commas that are
// not inside "pmu/.../" (an empty entry stays, for the caller to refuse).
std::vector<std::string> split_event_list(std::string_view list);
// Each name resolved (plan names such as "stall-cycles" first, then what
// PmuDevices::resolve takes); an uncore event becomes one event per CPU of
// its PMU's cpumask, named "<event>@<cpu>". Throws Error as resolve does.
std::vector<KmodEvent> kmod_events_for(const PmuDevices &pmus, const CpuIdentity &cpu,
				       const std::vector<std::string> &names);

} // namespace hwsig
