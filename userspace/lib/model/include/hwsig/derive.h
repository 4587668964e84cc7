// Two snapshots -> metrics over the interval between them, by the catalog's
// rules. Pure: no I/O, no clocks.
#pragma once

#include <cstdint>
#include <map>
#include <set>
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
	// value is an upper bound, not an estimate: a percentile that fell in
	// its histogram's lowest slot (Quantile). Shown "< value".
	bool upper_bound = false;
};

struct Interval {
	std::uint64_t realtime_ns = 0; // end of the interval
	double interval_s = 0;
	std::vector<Metric> metrics;             // ordered by catalog, then scope
	std::vector<UnavailableNote> unavailable; // ordered by catalog
	// Where, per series of Snapshot::cpu_counts() and scope: the CPUs
	// (ascending) whose count grew over the interval. No entry: none grew.
	std::map<std::string, std::map<std::string, std::vector<unsigned>, std::less<>>, std::less<>> cpus;
};

// The CPUs whose count in `cur` is above `prev`'s (absent: 0), both
// ascending by CPU. A count below prev's started again (a VM index reused):
// its CPU counts when it is not 0.
std::vector<unsigned> cpus_grown(const CpuCounts *prev, const CpuCounts &cur);

// claimed_ids: every metric id some configured source provides. Catalog ids
// that produced no value are listed as unavailable: with the sources' own
// reasons when they gave one, else "no source for it in this build" or "no
// data in this interval". A scope absent from prev is derived from zero when
// prev.counts_from_zero(series), else from the next interval on. Reasons
// for a per-device metric (io.*) as a whole are at scope "dev:*".
Interval derive(const Snapshot &prev, const Snapshot &cur,
		const std::vector<std::string> &claimed_ids);

// The start of a run, for its summary: the first snapshot observed, plus
// every counter or histogram scope that appeared later, and from when each
// is covered.
//
// A series that does not count from zero: a scope that appears later is
// taken from the snapshot in which it first appeared (what it counted
// before is unknown), over its own time from there.
//
// A series that counts from zero (Snapshot::counts_from_zero: a BPF map
// whose entry appears on the first event) had counted nothing where a
// scope is absent: absent means 0, not unknown. Such a scope is covered
// from where the thing it belongs to existed, with 0 before its first
// sighting: its parts then never add to more than the whole.
//  * a scope of a VM (vm:NAME and its parts vm:NAME/culprit:WHO,
//    vm:NAME/dev:DISK, vm:NAME/vcpu:N): from the VM's start -- the whole
//    run when the VM is in the first snapshot (any series or note at
//    vm:NAME or below), else from the snapshot before the one it first
//    appeared in (a VM started mid-run covers its own life);
//  * any other scope (a disk idle until mid-run, a CPU, the system): the
//    whole run.
class RunStart {
public:
	void observe(const Snapshot &s); // every snapshot of the run, in order
	bool empty() const { return !have_; }
	const Snapshot &first() const { return first_; }
	// When (series, scope) is covered from, on its source's clock stamps
	// (Snapshot::read_ns).
	std::uint64_t since(const std::string &name, const std::string &scope) const;
	// Whether (series, scope) counts from zero and first appeared after
	// its VM did: covered from the VM's start (since()), 0 until it
	// appeared.
	bool after_its_vm(const std::string &name, const std::string &scope) const
	{
		return after_vm_.count({name, scope}) != 0;
	}

private:
	// Where a VM started: its first snapshot's predecessor's stamps.
	struct VmStart {
		bool at_first = false; // in the first snapshot: the whole run
		std::uint64_t mono_ns = 0;
		std::map<std::string, std::uint64_t, std::less<>> read_ns;
		std::uint64_t read(const std::string &name) const;
	};
	void note_vms(const Snapshot &s);
	const VmStart *vm_start(const std::string &scope) const;

	bool have_ = false;
	// The last snapshot observed: its mono_ns and each series' stamp.
	std::uint64_t last_mono_ns_ = 0;
	std::map<std::string, std::uint64_t, std::less<>> last_read_ns_;
	std::uint64_t last_read(const std::string &name) const;
	Snapshot first_;
	std::map<std::pair<std::string, std::string>, std::uint64_t> since_;
	std::set<std::pair<std::string, std::string>> after_vm_;
	std::map<std::string, VmStart, std::less<>> vms_; // "vm:NAME" -> where it started
};

// The summary of a run from start to last: like derive(start.first(),
// last), each scope from RunStart::since() (with a note where that is
// later than the run's start: "first seen 3.00 s into the run: over its
// last 9.00 s"). A rate is what its counters counted over that span / the
// span; a ratio (of two counters) and a percentile or entropy (of a
// histogram's delta) are of what was counted over it, so the zeros before
// a scope's first sighting change neither; a gauge is its last reading.
// Reasons say "in this run".
Interval derive_summary(const RunStart &start, const Snapshot &last,
			const std::vector<std::string> &claimed_ids);

// What derive() guarantees of every Interval, checked: each (id, scope) has
// at most one value, at most one unavailable note, and never both (a reader
// must not be told "21.5" and "unavailable: ..." for the same thing). One
// line per violation, naming the id and scope; empty when none. For tests.
std::vector<std::string> interval_conflicts(const Interval &iv);

} // namespace hwsig
