// Two snapshots -> metrics over the interval between them, by the catalog's
// rules. Pure: no I/O, no clocks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/catalog.h"
#include "hwsig/snapshot.h"

namespace hwsig {

struct Metric {
	std::string id;
	std::string scope;
	double value = 0;
	std::string unit;
	std::string source;
	std::string note; // e.g. "multiplexed: counted 43% of the time, scaled"
	Layer layer = Layer::Cpu;
};

struct Interval {
	std::uint64_t realtime_ns = 0; // end of the interval
	double interval_s = 0;
	std::vector<Metric> metrics;             // ordered by catalog, then scope
	std::vector<UnavailableNote> unavailable; // ordered by catalog
};

// claimed_ids: every metric id some configured source provides. Catalog ids
// that produced no value are listed as unavailable: with the sources' own
// reasons when they gave one, else "no source for it in this build" or "no
// data in this interval". A scope absent from prev is derived from zero when
// prev.counts_from_zero(series), else from the next interval on. Reasons
// for a per-device metric (io.*) as a whole are at scope "dev:*".
Interval derive(const Snapshot &prev, const Snapshot &cur,
		const std::vector<std::string> &claimed_ids);

// The start of a run, for its summary: the first snapshot observed, plus
// every counter or histogram scope that appeared later (a VM started
// mid-run), taken from the snapshot in which it first appeared. A scope of
// a series that counts from zero (Snapshot::counts_from_zero: a disk the
// BPF program had not seen yet) starts at 0 at the snapshot before the one
// it first appeared in (it had counted nothing there), so its first
// interval is not lost; over the whole run when that is the first snapshot.
class RunStart {
public:
	void observe(const Snapshot &s); // every snapshot of the run, in order
	bool empty() const { return !have_; }
	const Snapshot &first() const { return first_; }
	// When (series, scope) is covered from, on its source's clock stamps
	// (Snapshot::read_ns).
	std::uint64_t since(const std::string &name, const std::string &scope) const;

private:
	bool have_ = false;
	// The last snapshot observed: its mono_ns and each series' stamp.
	std::uint64_t last_mono_ns_ = 0;
	std::map<std::string, std::uint64_t, std::less<>> last_read_ns_;
	std::uint64_t last_read(const std::string &name) const;
	Snapshot first_;
	std::map<std::pair<std::string, std::string>, std::uint64_t> since_;
};

// The summary of a run from start to last: like derive(start.first(),
// last), each scope over the time since it appeared (with a note where that
// is shorter than the run); reasons say "in this run".
Interval derive_summary(const RunStart &start, const Snapshot &last,
			const std::vector<std::string> &claimed_ids);

// What derive() guarantees of every Interval, checked: each (id, scope) has
// at most one value, at most one unavailable note, and never both (a reader
// must not be told "21.5" and "unavailable: ..." for the same thing). One
// line per violation, naming the id and scope; empty when none. For tests.
std::vector<std::string> interval_conflicts(const Interval &iv);

} // namespace hwsig
