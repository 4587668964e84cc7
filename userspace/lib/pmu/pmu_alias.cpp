// What a user may type for an event, resolved the way perf does: generic
// hardware, hardware cache and software names, "pmu/alias/", "pmu/terms/"
// and raw "rNNNN" (PmuDevices::resolve, pmu_devices.h).

#include "hwsig/pmu_devices.h"

#include <cerrno>
#include <linux/perf_event.h>
#include <optional>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

namespace {

struct NamedConfig {
	const char *name;
	std::uint64_t config;
};

constexpr NamedConfig kHardware[] = {
	{"cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
	{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
	{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
};

constexpr NamedConfig kSoftware[] = {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
	{"dummy", PERF_COUNT_SW_DUMMY},
};

constexpr NamedConfig kCaches[] = {
	{"L1-dcache", PERF_COUNT_HW_CACHE_L1D}, {"L1-icache", PERF_COUNT_HW_CACHE_L1I},
	{"LLC", PERF_COUNT_HW_CACHE_LL},        {"dTLB", PERF_COUNT_HW_CACHE_DTLB},
	{"iTLB", PERF_COUNT_HW_CACHE_ITLB},     {"branch", PERF_COUNT_HW_CACHE_BPU},
	{"node", PERF_COUNT_HW_CACHE_NODE},
};

constexpr NamedConfig kCacheOps[] = {
	{"load", PERF_COUNT_HW_CACHE_OP_READ},      {"loads", PERF_COUNT_HW_CACHE_OP_READ},
	{"store", PERF_COUNT_HW_CACHE_OP_WRITE},    {"stores", PERF_COUNT_HW_CACHE_OP_WRITE},
	{"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH}, {"prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH},
};

std::optional<std::uint64_t> lookup(const NamedConfig *table, std::size_t n, std::string_view name)
{
	for (std::size_t i = 0; i < n; i++)
		if (name == table[i].name)
			return table[i].config;
	return std::nullopt;
}

// "L1-dcache-load-misses", "LLC-loads", "dTLB-store-misses", "branch-loads"...
std::optional<std::uint64_t> parse_cache_event(std::string_view name)
{
	for (const auto &c : kCaches) {
		std::string_view prefix = c.name;
		if (name.substr(0, prefix.size()) != prefix || name.size() <= prefix.size() ||
		    name[prefix.size()] != '-')
			continue;
		std::string_view rest = name.substr(prefix.size() + 1);
		std::uint64_t result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
		if (rest.size() > 7 && rest.substr(rest.size() - 7) == "-misses") {
			result = PERF_COUNT_HW_CACHE_RESULT_MISS;
			rest.remove_suffix(7);
		}
		auto op = lookup(kCacheOps, std::size(kCacheOps), rest);
		if (!op)
			return std::nullopt;
		// "L1-dcache-load-misses" uses the singular, "L1-dcache-loads" the plural.
		if (result == PERF_COUNT_HW_CACHE_RESULT_MISS && rest.back() == 's')
			return std::nullopt;
		if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS && rest.back() != 's')
			return std::nullopt;
		return hw_cache_config(c.config, *op, result);
	}
	return std::nullopt;
}

} // namespace

PerfEventSpec PmuDevices::resolve(std::string_view name) const
{
	const std::string n(trim(name));
	PerfEventSpec spec;
	spec.name = n;
	if (n.empty())
		throw Error("resolving an event: empty name", EINVAL);
	if (auto slash = n.find('/'); slash != std::string::npos) {
		std::string_view pmu_name = std::string_view(n).substr(0, slash);
		std::string_view body = std::string_view(n).substr(slash + 1);
		if (body.empty() || body.back() != '/')
			throw Error("resolving event \"" + n + "\": expected pmu/event/", EINVAL);
		body.remove_suffix(1);
		const PmuDevice *pmu = find(pmu_name);
		if (!pmu)
			throw Error("resolving event \"" + n + "\": no PMU named \"" + std::string(pmu_name) +
					    "\" in " + join_path(root_, "/sys/bus/event_source/devices"),
				    ENOENT);
		if (body.find('=') == std::string_view::npos && body.find(',') == std::string_view::npos) {
			auto alias = pmu->events.find(body);
			if (alias == pmu->events.end())
				throw Error("resolving event \"" + n + "\": PMU " + pmu->name + " has no event \"" +
						    std::string(body) + "\"",
					    ENOENT);
			return encode(*pmu, alias->second, n);
		}
		return encode(*pmu, body, n);
	}
	if (auto v = lookup(kHardware, std::size(kHardware), n)) {
		spec.type = PERF_TYPE_HARDWARE;
		spec.config = *v;
		return spec;
	}
	if (auto v = lookup(kSoftware, std::size(kSoftware), n)) {
		spec.type = PERF_TYPE_SOFTWARE;
		spec.config = *v;
		return spec;
	}
	if (auto v = parse_cache_event(n)) {
		spec.type = PERF_TYPE_HW_CACHE;
		spec.config = *v;
		return spec;
	}
	if (n.size() > 1 && n[0] == 'r') {
		auto v = parse_term_value("0x" + n.substr(1));
		if (!v)
			throw Error("resolving event \"" + n + "\": raw events are r<hex>", EINVAL);
		const PmuDevice *core = core_pmu();
		spec.type = core ? core->type : std::uint32_t(PERF_TYPE_RAW);
		spec.config = *v;
		return spec;
	}
	throw Error("resolving event \"" + n + "\": unknown event (try cycles, task-clock, "
					   "L1-dcache-load-misses, pmu/event=0x..,umask=0x../)",
		    ENOENT);
}

} // namespace hwsig
