// The Prometheus / OpenMetrics exposition of one snapshot: raw cumulative
// counters as *_total, gauges for levels, log2 histograms as classic
// cumulative histograms. Names, units and labels: Documentation/prometheus.rst.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsig {

enum class ExpositionFormat {
	Prometheus004, // text/plain; version=0.0.4
	OpenMetrics100, // application/openmetrics-text; version=1.0.0
	// application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
	// encoding=delimited: every histogram native too (prometheus.rst, "Formats")
	PrometheusProtobuf,
};
inline constexpr int kExpositionFormats = 3;

// The exporter's own numbers (collect duration per source, scrape duration,
// ring records lost...): rendered as given, under the hwsig_ prefix already
// in name.
struct SelfMetric {
	std::string name; // e.g. "hwsig_collect_duration_seconds"
	std::string help;
	bool counter = false; // else gauge; a counter's name ends in _total
	std::vector<std::pair<std::string, std::string>> labels;
	double value = 0;
};

// What /metrics carries beyond the default set, each a switch of hwsigd's
// configuration (Documentation/prometheus.rst, "Series budget" has the
// series each costs).
struct ExportSwitches {
	bool per_cpu = false;           // per-cpu: cpu="N" series
	bool per_vcpu = false;          // per-vcpu: hwsig_vm_vcpu_* per vCPU
	bool vm_detail = false;         // vm-detail: the per-VM families beyond the default set
	bool per_queue = false;         // per-queue: vhost series per virtqueue instead of per VM
	unsigned culprit_top = 2;       // culprit-top: named culprit VMs per victim
	bool culprit_matrix = false;    // culprit-matrix: every victim x culprit VM pair
	bool full_text_buckets = false; // text-buckets = full: every bucket of per-VM/device/queue histograms
};

// The named culprit VMs each victim has had exported, kept from one render
// to the next: a culprit stays until another one's total passes twice its
// own, so the set of series holds still while close totals trade places.
class CulpritPicks {
public:
	// totals: the victim's culprit VMs and their counts so far.
	const std::vector<std::string> &pick(const std::string &victim,
					     const std::vector<std::pair<std::string, double>> &totals, unsigned n);
	// Forgets the victims not in the last render.
	void end_render();

private:
	struct Picked {
		std::vector<std::string> names;
		bool seen = false;
	};
	std::map<std::string, Picked> picks_;
};

struct ExportInput {
	const Snapshot *snapshot = nullptr; // the latest one; counters cumulative
	// Catalog metrics that cannot be measured (derive()'s list for the
	// latest interval): one hwsig_unavailable{metric,scope,reason} 1 each.
	const std::vector<UnavailableNote> *unavailable = nullptr;
	const std::vector<Vm> *vms = nullptr; // hwsig_vm_info, vm labels of vhost queues
	ExportSwitches switches;
	CulpritPicks *culprit_picks = nullptr; // kept across renders; nullptr: ranked afresh
	std::string version;                  // hwsig_build_info{version}
	std::vector<SelfMetric> self;
};

std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt);
std::string_view content_type(ExpositionFormat fmt);
// From a scraper's Accept header: of the formats it accepts (protobuf with
// proto=io.prometheus.client.MetricFamily and encoding=delimited,
// OpenMetrics 1.0.0 or without a version, text 0.0.4 or */*), the one with
// the highest q, the first listed on a tie; 0.0.4 when it accepts none.
ExpositionFormat negotiate_format(std::string_view accept);

} // namespace hwsig
