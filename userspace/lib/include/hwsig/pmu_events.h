// Event names -> (type, config, config1, config2), resolved the way perf does
// from <root>/sys/bus/event_source/devices/*/{type,format/*,events/*,cpumask},
// plus the choice of events behind the cpu.* and mem.imc_* metrics.
// Documentation/pmu.rst explains the per-vendor choices.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwsig {

struct PerfEventSpec {
	std::string name; // what the user or the plan called it
	std::uint32_t type = 0;
	std::uint64_t config = 0;
	std::uint64_t config1 = 0;
	std::uint64_t config2 = 0;
};

// One file of a PMU's format/ directory: "config:0-7,21" -> word 0, bits.
struct FormatField {
	int word = 0; // 0: config, 1: config1, 2: config2
	std::vector<std::pair<unsigned, unsigned>> ranges; // inclusive, low bits first
	unsigned width() const;
};

// Strict parsers (no exceptions): nullopt plus a reason in *why.
std::optional<FormatField> parse_format_spec(std::string_view spec, std::string *why = nullptr);

struct EventTerm {
	std::string name;
	std::uint64_t value = 1; // a bare term ("edge") means 1
};
// "event=0x3c,umask=0x01,edge" (values hex with 0x, or decimal).
std::optional<std::vector<EventTerm>> parse_event_terms(std::string_view s, std::string *why = nullptr);

// Puts value into the field's bits (low bits of value into the first range).
// False when value does not fit the field's width.
bool apply_format(const FormatField &f, std::uint64_t value, PerfEventSpec &spec);

struct PmuDevice {
	std::string name;
	std::uint32_t type = 0;
	std::map<std::string, FormatField, std::less<>> format;
	std::map<std::string, std::string, std::less<>> events; // alias -> terms
	std::vector<unsigned> cpumask; // empty: counts on any CPU (core PMUs)
};

enum class CpuVendor { Unknown, Intel, Amd };

struct CpuIdentity {
	CpuVendor vendor = CpuVendor::Unknown;
	unsigned family = 0;
	unsigned model = 0;
	bool hypervisor = false; // "hypervisor" in the cpuinfo flags
};
// From <root>/proc/cpuinfo (first processor).
CpuIdentity read_cpu_identity(const std::string &root);

// physical_package_id of a CPU, from <root>/sys/devices/system/cpu/cpuN/topology.
std::optional<unsigned> cpu_socket(const std::string &root, unsigned cpu);

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

	// Resolves what a user may type: generic hardware ("cycles",
	// "instructions", "branch-misses", "cache-misses"...), hardware cache
	// ("L1-dcache-load-misses", "dTLB-load-misses", "LLC-loads"...), software
	// ("task-clock", "context-switches", "cpu-clock", "page-faults"...),
	// "pmu/alias/" or "pmu/event=..,umask=../" and raw "rNNNN" (core PMU).
	// Throws Error(ENOENT) for unknown names, EINVAL for malformed ones.
	PerfEventSpec resolve(std::string_view name) const;

private:
	std::string root_;
	std::vector<PmuDevice> devices_;
	std::vector<std::string> problems_;
};

// ---- the events behind the catalog's metrics ----

// One pmu.* series and the events that can feed it, best first: a backend
// uses the first alternative the kernel accepts.
struct CoreSeriesPlan {
	std::string series; // series.h name, e.g. "pmu.cycles"
	std::vector<PerfEventSpec> alternatives;
};
struct CorePlan {
	std::vector<CoreSeriesPlan> series;
	// metric id -> reason, for what this CPU cannot measure at all.
	std::vector<std::pair<std::string, std::string>> unavailable;
};
CorePlan plan_core_events(const PmuDevices &pmus, const CpuIdentity &cpu);

// Names of the default event set (`hwsigctl kmod start` without --events).
std::vector<std::string> default_core_event_names();
std::vector<std::string> default_software_event_names();

// Uncore DRAM traffic: every (PMU instance, CPU) to open, with the socket it
// counts and whether it counts reads, writes or both. Counts are CAS
// commands (64 bytes each); sysfs .scale files are deliberately ignored.
enum class DramDirection { Read, Write, ReadWrite };
struct UncoreDramEvent {
	std::string pmu; // "uncore_imc_0", "amd_umc_3", "amd_df"...
	unsigned cpu = 0;
	unsigned socket = 0;
	DramDirection direction = DramDirection::Read;
	PerfEventSpec spec;
};
struct UncoreDramPlan {
	std::string kind; // "uncore_imc_free_running", "uncore_imc", "amd_umc", "amd_df", or empty
	std::vector<UncoreDramEvent> events;
	std::string unavailable_reason; // when events is empty
	std::vector<std::string> notes; // e.g. amd_df counts reads and writes together
};
UncoreDramPlan plan_uncore_dram(const PmuDevices &pmus, const CpuIdentity &cpu);

} // namespace hwsig
