// Two snapshots -> metrics over the interval between them, by the catalog's
// rules. Pure: no I/O, no clocks.
#pragma once

#include <cstdint>
#include <string>
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
// data in this interval".
Interval derive(const Snapshot &prev, const Snapshot &cur,
		const std::vector<std::string> &claimed_ids);

// What derive() guarantees of every Interval, checked: each (id, scope) has
// at most one value, at most one unavailable note, and never both (a reader
// must not be told "21.5" and "unavailable: ..." for the same thing). One
// line per violation, naming the id and scope; empty when none. For tests.
std::vector<std::string> interval_conflicts(const Interval &iv);

} // namespace hwsig
