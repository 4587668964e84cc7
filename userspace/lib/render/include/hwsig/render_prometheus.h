// The Prometheus / OpenMetrics exposition of one snapshot: raw cumulative
// counters as *_total, gauges for levels, log2 histograms as classic
// cumulative histograms. Names, units and labels: Documentation/prometheus.rst.
#pragma once

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
};

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

struct ExportInput {
	const Snapshot *snapshot = nullptr; // the latest one; counters cumulative
	// Catalog metrics that cannot be measured (derive()'s list for the
	// latest interval): one hwsig_unavailable{metric,scope,reason} 1 each.
	const std::vector<UnavailableNote> *unavailable = nullptr;
	const std::vector<Vm> *vms = nullptr; // hwsig_vm_info, vm labels of vhost queues
	bool per_cpu = false;                 // cpu:N scopes as cpu="N" series
	std::string version;                  // hwsig_build_info{version}
	std::vector<SelfMetric> self;
};

std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt);
std::string_view content_type(ExpositionFormat fmt);
// From a scraper's Accept header: OpenMetrics when it asks for
// application/openmetrics-text (version 1.0.0 or none), else 0.0.4.
ExpositionFormat negotiate_format(std::string_view accept);

} // namespace hwsig
