// replay --since/--until: a moment of a dump, given as an offset from its
// trigger ("-90s", "+30s", "-2m") or as the UTC wall clock ("18:03:20",
// "2026-11-28 18:03:20", the form 'replay --info' prints; a fraction of a
// second after the seconds, "18:03:20.25"), as seconds from
// the trigger; and the intervals a window of two such moments selects.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/dump_file.h"

namespace hwsigctl {

// The dump's trigger on both clocks.
struct DumpClock {
	std::uint64_t trigger_mono_ns = 0;
	std::uint64_t trigger_realtime_ns = 0; // 0: no snapshot carries a wall clock
};

DumpClock dump_clock(const hwsig::DumpContents &dump);

// Seconds from the trigger (negative before it), or nullopt with *error
// saying why (a form not understood, a wall clock the dump cannot place).
std::optional<double> parse_dump_time(const std::string &text, const DumpClock &clock, std::string *error);

struct DumpWindow {
	double since_s = -std::numeric_limits<double>::infinity();
	double until_s = std::numeric_limits<double>::infinity();
};

// The indexes i (1..snapshots-1) of the intervals, snapshot i-1 to i, that
// overlap the window.
std::vector<std::size_t> intervals_in(const hwsig::DumpContents &dump, const DumpClock &clock, const DumpWindow &w);

} // namespace hwsigctl
