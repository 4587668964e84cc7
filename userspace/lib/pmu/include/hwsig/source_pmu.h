// The PMU Source: core counters per CPU (pmu.* series) from hwsig.ko's rings
// when /dev/hwsig exists, else from perf_event_open groups; uncore DRAM CAS
// counts per socket (imc.* series) from perf_event_open. Emits counts, never
// ratios: derive.cpp turns them into cpu.* and mem.imc_* metrics.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hwsig/kmod.h"
#include "hwsig/multiplex.h"
#include "hwsig/pmu_events.h"
#include "hwsig/pmu_format.h"
#include "hwsig/source.h"

namespace hwsig {

struct PmuSourceOptions {
	bool use_kmod = true; // prefer /dev/hwsig when it exists under the root
	// Start the module with the default events when it is loaded but idle
	// (and stop it again when the source goes away).
	bool start_kmod = true;
};

SourcePtr make_pmu_source(PmuSourceOptions opt = {});

// The pmu.vm source: cycles, instructions and LLC counts of each VM's vCPU
// threads, summed at vm:NAME (no system point: the pmu source has it).
// events: series -> event to count it with, instead of this host's plan
// (tests count software events through the same path).
SourcePtr make_pmu_vm_source(std::map<std::string, PerfEventSpec> events = {});

// The kmod backend's step per snapshot: the newest complete record of every
// CPU's ring of configuration `generation` (the one series_of_event was
// built from), each event of it read into `counters` (scaled over the
// interval since that counter's last read, multiplex.h), then added at
// cpu:N and summed at system. series_of_event[i] names the series of
// values[i]; an empty name skips that event.
void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event,
		       std::uint64_t generation, ScaledCounters &counters, Snapshot &snap);
// The same for the reader's current configuration generation.
void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event,
		       ScaledCounters &counters, Snapshot &snap);

// The perf backend's step per snapshot for one per-CPU group it read
// (PerfGroup::read): member i feeds series[i] at cpu:N. `group` names the
// group among the backend's (the counters' key across snapshots).
void add_perf_group(ScaledCounters &counters, unsigned cpu, unsigned group, const std::vector<const char *> &series,
		    const std::vector<CounterReading> &members);

// The metric ids the PMU source feeds: the catalog's metrics that read a
// pmu.* or imc.* series (metrics_reading).
std::vector<std::string> pmu_metric_ids();

} // namespace hwsig
