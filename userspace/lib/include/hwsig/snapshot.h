// One snapshot: everything every source read at (about) one instant.
// Counters are cumulative (derivation takes deltas), gauges are instantaneous,
// histograms cumulative. Series are keyed by name, then by scope
// ("system", "cpu:N", "socket:N", "node:N", "dev:NAME", "vm:NAME", "pid:N",
// "zone:NAME", "hugepages:SIZE").
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/histogram.h"

namespace hwsig {

struct CounterPoint {
	double value = 0;
	// Fraction of the time the counter was actually counting
	// (time_running / time_enabled). Below 1 means multiplexed and scaled.
	double running_fraction = 1.0;
};

template <typename P> struct Series {
	using Point = P;
	std::string source; // e.g. "procfs", "sysfs", "kmod", "perf", "bpf"
	std::map<std::string, P, std::less<>> by_scope;
};

struct UnavailableNote {
	std::string id;    // metric id from the catalog
	std::string scope; // "system" if it applies to every scope
	std::string reason;
};

class Snapshot {
public:
	std::uint64_t mono_ns = 0;     // CLOCK_MONOTONIC: same clock as ktime/BPF
	std::uint64_t realtime_ns = 0; // wall clock, for output only

	void add_counter(std::string_view name, std::string_view scope, double value,
			 std::string_view source, double running_fraction = 1.0);
	void add_gauge(std::string_view name, std::string_view scope, double value,
		       std::string_view source);
	void add_histogram(std::string_view name, std::string_view scope, Histogram h,
			   std::string_view source);
	// A metric (or one scope of it) cannot be measured, and why.
	void add_unavailable(std::string_view id, std::string_view scope, std::string_view reason);
	// The source of this series was counting when this snapshot was taken,
	// and its counts (or histograms) start at zero for every scope: a scope
	// absent here has counted nothing yet (a BPF map entry is created on a
	// device's first request). derive() then takes a scope that appears
	// later from zero instead of skipping its first interval.
	void set_counts_from_zero(std::string_view name) { from_zero_.emplace(name); }
	bool counts_from_zero(std::string_view name) const { return from_zero_.find(name) != from_zero_.end(); }
	const std::set<std::string, std::less<>> &from_zero() const { return from_zero_; }

	using Counters = std::map<std::string, Series<CounterPoint>, std::less<>>;
	using Gauges = std::map<std::string, Series<double>, std::less<>>;
	using Histograms = std::map<std::string, Series<Histogram>, std::less<>>;

	const Counters &counters() const { return counters_; }
	const Gauges &gauges() const { return gauges_; }
	const Histograms &histograms() const { return histograms_; }
	const std::vector<UnavailableNote> &unavailable() const { return unavailable_; }

	const CounterPoint *counter(std::string_view name, std::string_view scope) const;
	const double *gauge(std::string_view name, std::string_view scope) const;
	const Histogram *histogram(std::string_view name, std::string_view scope) const;

private:
	Counters counters_;
	Gauges gauges_;
	Histograms histograms_;
	std::vector<UnavailableNote> unavailable_;
	std::set<std::string, std::less<>> from_zero_;
};

} // namespace hwsig
