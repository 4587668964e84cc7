// perf_event_open groups: the PMU fallback when hwsig.ko is not loaded, and
// the way uncore counters are read in either case. Reads use
// PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING so that
// multiplexing is visible and every count is scaled honestly.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "hwsig/fd.h"
#include "hwsig/pmu_format.h"

namespace hwsig {

struct PerfCount {
	std::uint64_t raw = 0;
	std::uint64_t time_enabled = 0;
	std::uint64_t time_running = 0;
	// raw * enabled / running; equal to raw when never multiplexed, 0 when
	// the group never ran.
	double scaled = 0;
	double running_fraction = 0; // running / enabled (0 when never enabled)
};

// Scales one reading; the one formula both backends use.
PerfCount scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running);

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
	// One PerfCount per event, in open order. Throws Error on a failed read.
	std::vector<PerfCount> read() const;

	void enable();
	void disable();

private:
	std::vector<Fd> members_; // [0] is the leader
	std::vector<PerfEventSpec> specs_;
};

// "ENOENT" for 2: used in one-line reasons ("perf cycles: ENOENT").
std::string errno_name(int err);

} // namespace hwsig
