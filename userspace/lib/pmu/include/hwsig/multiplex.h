// Multiplexed hardware counters, scaled the way `perf stat -I` does: the
// count of each interval between two reads by that interval's own
// Δenabled / Δrunning, never the lifetime count by lifetime times (that
// pulls every interval toward the run's average running fraction). The one
// home of the formula: the PMU backends (hwsig.ko rings, perf_event_open
// groups, uncore boxes) and `replay --ticks` scale through it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hwsig/snapshot.h"

namespace hwsig {

// One read of one counter: perf's cumulative count and times since it was
// opened (or the hwsig.ko configuration started).
struct CounterReading {
	std::uint64_t count = 0;
	std::uint64_t enabled_ns = 0;
	std::uint64_t running_ns = 0;
};

// The count of one interval (the differences of two readings) scaled up to
// the whole time the counter was enabled in it. nullopt when it was
// enabled but never running: its count there is unknown, not zero.
std::optional<double> scale_interval(std::uint64_t count, std::uint64_t enabled_ns, std::uint64_t running_ns);

// One counter (an event on one CPU, one uncore box) read again and again.
// Each interval between two reads is scaled on its own and the estimates
// are added up, so that the difference of two totals, over any span, is a
// sum of per-interval estimates.
class IntervalScaledCounter {
public:
	// A later reading of the same counter. A count or time below the last
	// one means the counter restarted (its CPU came back online): its
	// counting starts again from zero.
	void read(const CounterReading &now);
	// The counter was opened again: its next reading counts from zero,
	// added to the totals so far (a reopened counter's count and times can
	// already exceed the last ones, which read() would take for a delta).
	void restart() { last_ = CounterReading{}; }
	// Cumulative: value is the estimate, mux what it was estimated from.
	const CounterPoint &totals() const { return totals_; }

private:
	CounterReading last_;
	CounterPoint totals_;
};

// The counters one PMU backend reads, each scaled per interval between its
// own reads, and their sums per scope and at system: per CPU (or box)
// first, then summed, never scaled as a sum.
class ScaledCounters {
public:
	// Names one counter within the backend across collects: (CPU, event
	// slot), (group, member), (uncore box, 0).
	using Key = std::pair<unsigned, unsigned>;

	// A reading of counter `key`, which feeds `series` at `scope` (and at
	// system).
	void read(Key key, std::string_view series, const std::string &scope, const CounterReading &r);
	// Counter `key` could not be read this time, though it kept counting
	// (a failed read, not an offline CPU). Its scope and system are
	// unknown this interval and the next (whose read then holds two
	// intervals' counts): their points say so (Multiplexing::unread),
	// and derive() says them unavailable instead of a drop then a spike.
	void read_failed(Key key);
	// Counter `key` was opened again (its CPU came back online): its next
	// reading counts from zero, on top of its total so far.
	void restart(Key key);
	// Adds the sums to the snapshot, then starts the next collect. A scope
	// is in it when at least one of its counters was read this time. A
	// counter not read this time (its CPU offline, a failed read) stays in
	// the sums of its scope and of system with its last total: dropping it
	// would make a sum of several counters (system, an uncore socket:N) go
	// down, a counter reset that never happened. What it counted meanwhile
	// comes with its next read. A scope none of whose counters was read
	// (cpu:N of an offline CPU) has no point; one whose read failed has.
	// with_system false: the scopes only (they are parts of something else
	// than the host, such as VMs).
	void add_to(Snapshot &snap, std::string_view via, bool with_system = true);
	// The counters were reopened: their counts start again.
	void clear();
	// Forgets every counter of `scope` (a VM that is gone).
	void erase_scope(const std::string &scope);

private:
	struct Counter {
		IntervalScaledCounter scaled;
		std::string series, scope;
		bool read = false;        // since the last add_to
		bool failed_now = false;  // read_failed() since the last add_to
		bool failed_last = false; // the last read failed: the next spans it
		double unread = 0;        // Multiplexing::unread
	};
	std::map<Key, Counter> counters_;
};

} // namespace hwsig
