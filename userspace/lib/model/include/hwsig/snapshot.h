// One snapshot: everything every source read at (about) one instant.
// Counters are cumulative (derivation takes deltas), gauges are instantaneous,
// histograms cumulative. Series are keyed by name, then by scope: the
// string form of a Scope (scope.h), "system", "cpu:N", "vm:NAME"...
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/histogram.h"
#include "hwsig/unavailable_reason.h"

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
	// Reads that failed, and the reads after them (whose count spans the
	// failed interval too): in an interval where this grew, a sum over
	// counters (system, a socket) would be short, then long by as much.
	double unread = 0;

	bool empty() const
	{
		return raw == 0 && enabled_ns == 0 && running_ns == 0 && uncounted_ns == 0 && unread == 0;
	}
	Multiplexing &operator+=(const Multiplexing &o)
	{
		raw += o.raw;
		enabled_ns += o.enabled_ns;
		running_ns += o.running_ns;
		uncounted_ns += o.uncounted_ns;
		unread += o.unread;
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

// How far a snapshot refilling a series in its old storage
// (Snapshot::reuse_storage) has got through the scopes it had: those from
// `at` on were not given again yet. Snapshot's own bookkeeping while it is
// filled, not content: a copy or move of the series starts without it.
template <typename Map> struct RefillCursor {
	bool active = false;
	typename Map::iterator at{};
	RefillCursor() = default;
	RefillCursor(const RefillCursor &) {}
	RefillCursor &operator=(const RefillCursor &)
	{
		active = false;
		return *this;
	}
};

template <typename P> struct Series {
	using Point = P;
	using ByScope = std::map<std::string, P, std::less<>>;
	std::string source; // e.g. "procfs", "sysfs", "kmod", "perf", "bpf"
	// CLOCK_MONOTONIC when its source read it (Snapshot::stamp_readings);
	// 0: not stamped, the snapshot's mono_ns stands for it.
	std::uint64_t read_ns = 0;
	ByScope by_scope;
	// Which list of scopes by_scope holds: a number of its own, kept
	// while a refill (Snapshot::reuse_storage) gives the same scopes
	// again and changed with any scope added or dropped. Two series with
	// one shape have the same scopes: a reader keyed by scope (hwsigd's
	// history) compares them only when the shape is new to it. 0: none.
	std::uint64_t shape = 0;
	RefillCursor<ByScope> refill;
};

// A shape (Series::shape) no series had before.
std::uint64_t new_series_shape();

// Where something happened, by CPU: cumulative counts of the CPUs that have
// one, ascending by CPU (e.g. how many reads of the BPF blame matrix found a
// VM's waits behind a culprit ending on each CPU). Not a value: derive()
// names the CPUs whose count grew in the interval (Interval::cpus). No
// catalog metric reads them and nothing exports them.
using CpuCounts = std::vector<std::pair<unsigned, std::uint64_t>>;

struct UnavailableNote {
	std::string id;    // metric id from the catalog
	std::string scope; // "system" if it applies to every scope
	UnavailableCode code; // for alerts: fixed, whatever the detail says
	std::string reason;   // the detail, for people: may carry live counts

	bool operator==(const UnavailableNote &) const = default;
};

// CLOCK_MONOTONIC now, in ns: what Snapshot::stamp_readings takes.
std::uint64_t monotonic_ns();

class Snapshot {
public:
	// CLOCK_MONOTONIC (the clock of ktime/BPF) when the snapshot was begun,
	// before VM discovery and every source: the interval's nominal time.
	// A rate takes its time from its own series' stamps (read_ns), not
	// from this: the sources read one after the other.
	std::uint64_t mono_ns = 0;
	std::uint64_t realtime_ns = 0; // wall clock, for output only

	// Every series added (or re-added) from now on is stamped as read at
	// ns: the Sampler stamps each source's reading just before its
	// collect. 0 stops stamping (a copy of the snapshot must not restamp
	// what it adds).
	void stamp_readings(std::uint64_t ns) { stamp_ns_ = ns; }
	// Whether this snapshot's readings are being stamped: a source that
	// works before it reads (attaching, /proc walks) or reads several
	// files stamps again right at each read, but only then -- a snapshot
	// filled outside a Sampler (tests on fixtures, with made-up times)
	// keeps its mono_ns for every series.
	bool stamping() const { return stamp_ns_ != 0; }
	// stamp_readings(now) when stamping().
	void restamp_readings()
	{
		if (stamping())
			stamp_ns_ = monotonic_ns();
	}
	// When series `name` was read: its stamp, else the snapshot's mono_ns.
	std::uint64_t read_ns(std::string_view name) const;
	// Sets the stamp of the series `name` of every kind (decoders).
	void set_read_ns(std::string_view name, std::uint64_t ns);

	void add_counter(std::string_view name, std::string_view scope, double value,
			 std::string_view source);
	void add_counter(std::string_view name, std::string_view scope, const CounterPoint &point,
			 std::string_view source);
	void add_gauge(std::string_view name, std::string_view scope, double value,
		       std::string_view source);
	void add_histogram(std::string_view name, std::string_view scope, Histogram h,
			   std::string_view source);
	void add_cpu_counts(std::string_view name, std::string_view scope, CpuCounts counts,
			    std::string_view source);
	// A metric (or one scope of it) cannot be measured, and why: the code
	// (unavailable_reason.h) and the words.
	void add_unavailable(std::string_view id, std::string_view scope, UnavailableCode code,
			     std::string_view reason);
	// The source of this series was counting when this snapshot was taken,
	// and its counts (or histograms) start at zero for every scope: a scope
	// absent here has counted nothing yet (a BPF map entry is created on a
	// device's first request). derive() then takes a scope that appears
	// later from zero instead of skipping its first interval.
	void set_counts_from_zero(std::string_view name);
	bool counts_from_zero(std::string_view name) const { return from_zero_.find(name) != from_zero_.end(); }
	const std::set<std::string, std::less<>> &from_zero() const { return from_zero_; }

	using Counters = std::map<std::string, Series<CounterPoint>, std::less<>>;
	using Gauges = std::map<std::string, Series<double>, std::less<>>;
	using Histograms = std::map<std::string, Series<Histogram>, std::less<>>;
	using CpuCountSeries = std::map<std::string, Series<CpuCounts>, std::less<>>;

	const Counters &counters() const { return counters_; }
	const Gauges &gauges() const { return gauges_; }
	const Histograms &histograms() const { return histograms_; }
	const CpuCountSeries &cpu_counts() const { return cpu_counts_; }
	const std::vector<UnavailableNote> &unavailable() const { return unavailable_.all; }

	const CounterPoint *counter(std::string_view name, std::string_view scope) const;
	const double *gauge(std::string_view name, std::string_view scope) const;
	const Histogram *histogram(std::string_view name, std::string_view scope) const;
	const CpuCounts *cpu_count(std::string_view name, std::string_view scope) const;

	// Fills this (empty) snapshot in `old`'s storage: the map nodes and
	// strings of the series, scopes and notes it had are taken again by
	// the same ones instead of allocated. A daemon takes the same shape
	// every second, and allocating and freeing it was a fifth of its CPU.
	// What is not taken again by release_spares() is freed then. Until
	// then a refilled series may still hold scopes `old` had and that were
	// not given again: read the snapshot only after release_spares().
	void reuse_storage(Snapshot &&old);
	void release_spares();

private:
	template <typename P> struct SparesOf {
		std::map<std::string, Series<P>, std::less<>> series; // the old snapshot's, by name
		std::vector<typename std::map<std::string, P, std::less<>>::node_type> points;
	};
	// Copies of a snapshot start without spares: they are storage, not content.
	struct Spares {
		SparesOf<CounterPoint> counters;
		SparesOf<double> gauges;
		SparesOf<Histogram> histograms;
		SparesOf<CpuCounts> cpu_counts;
		std::set<std::string, std::less<>> from_zero;

		Spares() = default;
		Spares(const Spares &) {}
		Spares(Spares &&) = default;
		Spares &operator=(const Spares &) { return *this = Spares{}; }
		Spares &operator=(Spares &&) = default;
	};

	// The series a source added to last, found again without a search of
	// the map by name: 200 VMs' vCPUs are thousands of adds an interval,
	// a few names in turn. Each slot's name views its node's key, stable
	// while the node is in the map; a copy or move starts empty, and so
	// does a snapshot whose maps were handed on (reuse_storage).
	template <typename Map> struct NameCache {
		struct Slot {
			std::string_view name;
			typename Map::iterator it{};
		};
		static constexpr std::size_t kSlots = 4;
		Slot slots[kSlots];
		std::size_t next = 0; // the slot written over next

		NameCache() = default;
		NameCache(const NameCache &) {}
		NameCache &operator=(const NameCache &)
		{
			clear();
			return *this;
		}
		NameCache(NameCache &&o) noexcept { o.clear(); }
		NameCache &operator=(NameCache &&o) noexcept
		{
			clear();
			o.clear();
			return *this;
		}
		void clear()
		{
			for (Slot &slot : slots)
				slot = Slot{};
			next = 0;
		}
	};

	Counters counters_;
	Gauges gauges_;
	Histograms histograms_;
	CpuCountSeries cpu_counts_;
	NameCache<Counters> counter_names_;
	NameCache<Gauges> gauge_names_;
	NameCache<Histograms> histogram_names_;
	NameCache<CpuCountSeries> cpu_count_names_;
	// The notes. After reuse_storage() they are refilled in place: `all`
	// keeps the old snapshot's notes (their strings and the capacity),
	// the first `live` of them are this one's, the rest are written over
	// or dropped by release_spares(). A fresh vector of 2,000 notes every
	// interval (beside 200 VMs) page-faulted. A copy takes the live ones.
	struct Notes {
		std::vector<UnavailableNote> all;
		std::size_t live = 0;
		bool refilling = false;

		Notes() = default;
		Notes(const Notes &o) : all(o.all.begin(), o.all.begin() + static_cast<std::ptrdiff_t>(o.count())) {}
		Notes(Notes &&) = default;
		Notes &operator=(const Notes &o)
		{
			if (this != &o) {
				all.assign(o.all.begin(), o.all.begin() + static_cast<std::ptrdiff_t>(o.count()));
				live = 0;
				refilling = false;
			}
			return *this;
		}
		Notes &operator=(Notes &&) = default;
		std::size_t count() const { return refilling ? live : all.size(); }
	};
	Notes unavailable_;
	std::set<std::string, std::less<>> from_zero_;
	std::uint64_t stamp_ns_ = 0;
	Spares spares_;
};

} // namespace hwsig
