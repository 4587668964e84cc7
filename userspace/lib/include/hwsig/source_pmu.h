// The PMU Source: core counters per CPU (pmu.* series) from hwsig.ko's rings
// when /dev/hwsig exists, else from perf_event_open groups; uncore DRAM CAS
// counts per socket (imc.* series) from perf_event_open. Emits counts, never
// ratios: derive.cpp turns them into cpu.* and mem.imc_* metrics.
#pragma once

#include <memory>
#include <string>
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
// The same for records of one configuration generation only (the one
// series_of_event was built from); add_ring_counters above takes the
// reader's current one.
void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event,
		       std::uint64_t generation, Snapshot &snap);

// The metric ids the PMU source feeds: the catalog's metrics that read a
// pmu.* or imc.* series (metrics_reading).
std::vector<std::string> pmu_metric_ids();

} // namespace hwsig
