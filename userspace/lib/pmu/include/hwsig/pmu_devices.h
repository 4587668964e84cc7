// The PMUs of one host as sysfs lists them
// (<root>/sys/bus/event_source/devices/*/{type,format/*,events/*,cpumask}),
// and event names resolved against them the way perf does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/pmu_format.h"

namespace hwsig {

struct PmuDevice {
	std::string name;
	std::uint32_t type = 0;
	std::map<std::string, FormatField, std::less<>> format;
	std::map<std::string, std::string, std::less<>> events; // alias -> terms
	std::vector<unsigned> cpumask; // empty: counts on any CPU (core PMUs)
};

// The PMUs of one host, read once.
class PmuDevices {
public:
	explicit PmuDevices(std::string root);

	const std::string &root() const { return root_; }
	const std::vector<PmuDevice> &devices() const { return devices_; }
	const PmuDevice *find(std::string_view name) const;
	// "cpu" or, on hybrid Intel, "cpu_core": the PMU that owns raw core events.
	const PmuDevice *core_pmu() const;
	// PMU directories that could not be read, with why ("uncore_imc_3: type: ...").
	const std::vector<std::string> &problems() const { return problems_; }

	// Encodes "event=0x3c,umask=1" against pmu's format. Throws Error(EINVAL)
	// naming the term that is unknown, malformed or does not fit.
	PerfEventSpec encode(const PmuDevice &pmu, std::string_view terms, std::string name = {}) const;

	// Resolves what a user may type (pmu_alias.cpp): generic hardware
	// ("cycles", "instructions", "branch-misses", "cache-misses"...),
	// hardware cache ("L1-dcache-load-misses", "dTLB-load-misses",
	// "LLC-loads"...), software ("task-clock", "context-switches",
	// "cpu-clock", "page-faults"...), "pmu/alias/" or
	// "pmu/event=..,umask=../" and raw "rNNNN" (core PMU).
	// Throws Error(ENOENT) for unknown names, EINVAL for malformed ones.
	PerfEventSpec resolve(std::string_view name) const;

private:
	std::string root_;
	std::vector<PmuDevice> devices_;
	std::vector<std::string> problems_;
};

// PERF_TYPE_HW_CACHE's config: cache | op << 8 | result << 16.
constexpr std::uint64_t hw_cache_config(std::uint64_t cache, std::uint64_t op, std::uint64_t result)
{
	return cache | (op << 8) | (result << 16);
}

} // namespace hwsig
