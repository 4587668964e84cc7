// hwsigctl hist's one way of printing: the rows a snapshot holds for the
// chosen histogram (a title, the cumulative counts), each printed as the
// difference from the previous snapshot's. The snapshots come from a
// sampler of this process's own or from hwsigd: the rows are the same.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hist_common.h"
#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsigctl::hist {

// One histogram to print, cumulative.
struct HistRow {
	std::string key;   // what the previous snapshot's counts are kept under
	std::string title; // "" for the single histogram of the system
	Histogram counts;
	std::optional<std::uint64_t> stalls; // vhost RX ring stalls
	bool skip_if_idle = false;           // bio -D: a disk without requests
	bool summed = false;                 // bio without -D: added into one histogram
};

// The rows of o's histogram in snapshot s, in print order. vms: the VMs
// the snapshot's sampler knew (titles name a guest and its pid).
std::vector<HistRow> hist_rows(const HistOptions &o, const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms);

class HistView {
public:
	// empty_note: printed when an interval has no row ("" for nothing).
	// us_slots_in_ms: -m over microsecond slots (hwsigd's programs count
	// in microseconds): each slot is printed with its bounds in ms.
	HistView(const HistOptions &o, std::string empty_note, bool us_slots_in_ms = false)
		: o_(o), empty_note_(std::move(empty_note)), us_slots_in_ms_(us_slots_in_ms)
	{
	}
	// The counts the first interval is the difference from.
	void start(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms);
	// Prints the interval that ends at s.
	void print(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms);

private:
	Histogram advance(const HistRow &row);
	void print_log2(const Histogram &h, const char *unit) const;
	std::uint64_t advance_stalls(const HistRow &row);

	const HistOptions &o_;
	std::string empty_note_;
	bool us_slots_in_ms_;
	std::map<std::string, Histogram> prev_;
	std::map<std::string, std::uint64_t> prev_stalls_;
};

} // namespace hwsigctl::hist
