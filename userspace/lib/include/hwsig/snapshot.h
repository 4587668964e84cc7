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

// What a multiplexed hardware counter's value was estimated from,
// cumulative like it and summed over the counters of its scope (CPUs,
// uncore boxes). All zero for every other counter.
struct Multiplexing {
	double raw = 0;        // events as counted, not scaled
	double enabled_ns = 0; // time the counters were enabled
	double running_ns = 0; // and actually counting: below enabled_ns, multiplexed
	// Enabled time between two reads in which a counter never ran: its
	// count there is unknown, and in no value.
	double uncounted_ns = 0;

	bool empty() const { return raw == 0 && enabled_ns == 0 && running_ns == 0 && uncounted_ns == 0; }
	Multiplexing &operator+=(const Multiplexing &o)
	{
		raw += o.raw;
		enabled_ns += o.enabled_ns;
		running_ns += o.running_ns;
		uncounted_ns += o.uncounted_ns;
		return *this;
	}
};

struct CounterPoint {
	// A multiplexed counter's is the sum of its counts scaled interval by
	// interval (multiplex.h): any difference of two is an estimate that
	// needs no further scaling.
	double value = 0;
	Multiplexing mux;
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
			 std::string_view source);
	void add_counter(std::string_view name, std::string_view scope, const CounterPoint &point,
			 std::string_view source);
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
