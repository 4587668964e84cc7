// The metric catalog: stable ids (the user-visible contract of the brief),
// each with unit, layer, source and the rule that derives it from two
// snapshots. Documentation/metrics.rst defines every entry.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hwsig {

enum class Layer { Cpu, Memory, Io, Vhost, Sched, Thermal, Pressure };
std::string_view layer_name(Layer l); // "CPU", "Memory/NUMA", ...

struct Rule {
	enum class Kind {
		Ratio,      // scale * sum(delta num) / sum(delta den); counters
		Rate,       // scale * sum(delta num) / interval seconds; counters
		Gauge,      // scale * gauge num[0] at the later snapshot
		Percentile, // percentile q of delta histogram num[0], times scale
		Entropy,    // seek_pattern_entropy() of delta Log2 histogram num[0]
	};
	Kind kind;
	std::vector<std::string> num;
	std::vector<std::string> den;
	double scale = 1.0;
	double q = 0.0;
};

struct MetricDef {
	std::string id;
	std::string unit;
	Layer layer;
	std::string source;      // what produces it, for humans: "PMU", "procfs", "BPF sched"...
	std::string description; // one line
	Rule rule;
};

const std::vector<MetricDef> &catalog();

// Bumped whenever a metric id's definition changes (or an id goes): a dump
// says which catalog its numbers follow (Documentation/dump-format.rst).
// 2: cpu.* and mem.imc_* scaled for multiplexing per interval and counter,
// then summed (1 scaled lifetime counts by lifetime times).
// 3: vhost.queue_depth_* are TX queues only (an RX queue's depth counts
// free guest buffers: vhost.rx_buffers_*, vhost.rx_empty_ratio), their VM
// and system values over TX queues only (2 merged RX and TX).
inline constexpr int kCatalogVersion = 3;
// Ids of the catalog's metrics whose rule reads at least one of these
// series, in catalog order: what a source feeds (Source::provides) and
// what a missing series leaves unmeasured come from the rules, not from a
// second list.
std::vector<std::string> metrics_reading(const std::vector<std::string_view> &series);

} // namespace hwsig
