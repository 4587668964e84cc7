// The PMU Source: core counters per CPU (pmu.* series) from hwsig.ko's rings
// when /dev/hwsig exists, else from perf_event_open groups; uncore DRAM CAS
// counts per socket (imc.* series) from perf_event_open. Emits counts, never
// ratios: derive.cpp turns them into cpu.* and mem.imc_* metrics.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/kmod.h"
#include "hwsig/pmu_events.h"
#include "hwsig/source.h"

namespace hwsig {

struct PmuSourceOptions {
	bool use_kmod = true; // prefer /dev/hwsig when it exists under the root
	// Start the module with the default events when it is loaded but idle
	// (and stop it again when the source goes away).
	bool start_kmod = true;
};

SourcePtr make_pmu_source(PmuSourceOptions opt = {});

// The kmod backend's step per snapshot: the newest complete record of every
// CPU's ring, of the current configuration generation, as counters (scaled,
// with running_fraction) at cpu:N and summed at system. series_of_event[i]
// names the series of values[i]; an empty name skips that event.
void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event, Snapshot &snap);

// The metric ids the PMU source feeds.
std::vector<std::string> pmu_metric_ids();

// The default event set for hwsig.ko: the cpu.* events of this CPU (first
// choice of each series), or, on a host without a core PMU, the software
// events (so that the module's machinery still runs and can be checked);
// *software_only says which it chose.
std::vector<KmodEvent> default_kmod_events(const PmuDevices &pmus, const CpuIdentity &cpu, bool *software_only);

// The one-line reason used when the core PMU is missing, e.g.
// "no hardware PMU: running under a hypervisor (perf cycles: ENOENT)";
// via names what failed to open cycles ("perf" or "hwsig.ko").
std::string no_pmu_reason(const CpuIdentity &cpu, int err, std::string_view via = "perf");

// `hwsigctl kmod start --events LIST`: LIST split at the commas that are
// not inside "pmu/.../" (an empty entry stays, for the caller to refuse).
std::vector<std::string> split_event_list(std::string_view list);
// Each name resolved (plan names such as "stall-cycles" first, then what
// PmuDevices::resolve takes); an uncore event becomes one event per CPU of
// its PMU's cpumask, named "<event>@<cpu>". Throws Error as resolve does.
std::vector<KmodEvent> kmod_events_for(const PmuDevices &pmus, const CpuIdentity &cpu,
				       const std::vector<std::string> &names);

} // namespace hwsig
