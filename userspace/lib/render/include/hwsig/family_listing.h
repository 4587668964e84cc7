// Every family render_prometheus() can export, listed from the series
// registry it iterates: what `hwsigctl metrics --prometheus` prints, so
// the list an operator reads is the exporter's own, never a copy.
#pragma once

#include <string>
#include <vector>

namespace hwsig {

struct FamilyRow {
	std::string family;              // 0.0.4 name: hwsig_..._total for a counter
	std::string type;                // counter | gauge | histogram | info
	std::vector<std::string> labels; // label names its samples carry ("cpu" only with per-CPU export)
	std::string source;              // the raw series it exports, "" for hwsig's own
	std::string scale;               // "× 64", "÷ 100"... from the source's unit; "" when 1
	std::vector<std::string> ids;    // the catalog metrics whose rules read that series
	std::string help;                // its # HELP text
};

// The families that are hwsig's own, not a registry series'.
namespace own_family {
inline constexpr const char *kPmuEnabled = "hwsig_pmu_enabled_seconds_total";
inline constexpr const char *kPmuEnabledHelp =
	"Time a PMU counter was enabled (perf time_enabled), summed over the counters of its labels.";
inline constexpr const char *kPmuRunning = "hwsig_pmu_running_seconds_total";
inline constexpr const char *kPmuRunningHelp =
	"Time a PMU counter was actually counting (perf time_running); below hwsig_pmu_enabled_seconds_total "
	"it was multiplexed: scale its rate by rate(enabled) / rate(running).";
inline constexpr const char *kUnavailable = "hwsig_unavailable";
inline constexpr const char *kUnavailableHelp =
	"A catalog metric (or one scope of it) that cannot be measured on this host, and why.";
inline constexpr const char *kBuildInfo = "hwsig_build_info";
inline constexpr const char *kBuildInfoHelp = "The hwsig version exporting these metrics.";
inline constexpr const char *kVmInfo = "hwsig_vm_info";
inline constexpr const char *kVmInfoHelp =
	"A QEMU/KVM guest on this host: its name (the vm label elsewhere) and QEMU pid.";
} // namespace own_family

// Registry order (a series' host family, then its hwsig_node_*,
// hwsig_vm_* and PMU time families), then hwsig's own families.
std::vector<FamilyRow> prometheus_families();

} // namespace hwsig
