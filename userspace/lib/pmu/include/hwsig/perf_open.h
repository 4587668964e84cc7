// perf_event_open groups: the PMU fallback when hwsig.ko is not loaded, and
// the way uncore counters are read in either case. Reads use
// PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING so that
// multiplexing is visible; multiplex.h scales the counts.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "hwsig/fd.h"
#include "hwsig/multiplex.h"
#include "hwsig/pmu_format.h"

namespace hwsig {

// One read(2) of a group leader opened with that read format, { nr,
// time_enabled, time_running, value[nr] }, as one reading per member (each
// with the group's times: members are scheduled together). Throws Error
// when nr is not the group's size.
std::vector<CounterReading> group_readings(const std::vector<std::uint64_t> &words, std::size_t members);

class PerfGroup {
public:
	PerfGroup() = default;
	// Opens events[0] as leader and the rest as members, counting on `cpu`
	// (any task) when pid == -1, or for task `pid` on any CPU when cpu == -1.
	// Starts counting at once. Throws Error naming the event and errno
	// (ENOENT: the PMU lacks the event; EACCES: perf_event_paranoid).
	static PerfGroup open(const std::vector<PerfEventSpec> &events, int cpu, pid_t pid = -1);

	std::size_t size() const noexcept { return members_.size(); }
	bool empty() const noexcept { return members_.empty(); }
	const PerfEventSpec &event(std::size_t i) const { return specs_[i]; }
	// One reading per event, in open order. Throws Error on a failed read.
	std::vector<CounterReading> read() const;

	void enable();
	void disable();

private:
	std::vector<Fd> members_; // [0] is the leader
	std::vector<PerfEventSpec> specs_;
};

// "ENOENT" for 2: used in one-line reasons ("perf cycles: ENOENT").
std::string errno_name(int err);

} // namespace hwsig
