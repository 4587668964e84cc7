// Every family render_prometheus() can export, listed from the series
// registry it iterates: what `hwsigctl metrics --prometheus` prints, so
// the list an operator reads is the exporter's own, never a copy.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hwsig {

// What a family's series count grows with (Documentation/prometheus.rst,
// "Series budget").
enum class CountPer {
	Host,             // one labelled sample (system; cpu="N" with per-cpu)
	Socket,           // each CPU socket
	Node,             // each NUMA node
	HugepageSize,     // each huge page size
	NodeHugepageSize, // each node and size
	Zone,             // each thermal zone or hwmon sensor
	Device,           // each block device
	Vm,               // each VM
	VmVcpu,           // each vCPU of each VM
	VmPair,           // each victim and culprit VM
	Queue,            // each virtqueue
	PmuSample,        // each sample of the multiplexed counters' families
};

// The shape of a host, for counting what it exports.
struct HostShape {
	unsigned sockets = 1, nodes = 1, hugepage_sizes = 0, zones = 0, devices = 0;
	unsigned vms = 0, vcpus_per_vm = 0, queues_per_vm = 0;
};

struct FamilyRow {
	std::string family;              // 0.0.4 name: hwsig_..._total for a counter
	std::string type;                // counter | gauge | histogram | info
	std::vector<std::string> labels; // label names its samples carry ("cpu" only with per-CPU export)
	std::string source;              // the raw series it exports, "" for hwsig's own
	std::string scale;               // "× 64", "÷ 100"... from the source's unit; "" when 1
	std::vector<std::string> ids;    // the catalog metrics whose rules read that series
	std::string help;                // its # HELP text
	std::string needs;               // the hwsigd switch that exports it; "" when exported by default
	CountPer per = CountPer::Host;   // its series count: per x each
	unsigned each = 1;               // series per labelled sample (a histogram: its bucket lines + 3)
	bool pmu = false;                // a multiplexed counter's family: hwsig_pmu_*_seconds_total follow it
};

// "VMs x 5", "devices x 9": a row's count as prometheus.rst's table has it.
std::string count_text(const FamilyRow &row);
// The series a row exports on a host of that shape with the default
// switches (0 for a row that needs one); rows: all of them, for PmuSample.
std::size_t series_count(const FamilyRow &row, const HostShape &host, const std::vector<FamilyRow> &rows);

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
