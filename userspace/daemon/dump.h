// hwsigd's side of the flight recorder: a dump file of what the history
// holds (Documentation/dump-format.rst).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config.h"
#include "history.h"

namespace hwsigd {

// The dump file's bytes: the snapshots of the last `seconds` (0: all the
// history holds), with the host's facts, the PMU plan and the module's
// rings. triggered_mono_ns: the snapshot the trigger fired at (default:
// the history's newest). Throws hwsig::Error.
std::string make_dump(const History &history, const Config &cfg, const std::vector<std::string> &claimed,
		      double seconds, const std::string &trigger,
		      std::optional<std::uint64_t> triggered_mono_ns = std::nullopt);

// "90", "2.5": a non-negative, finite number of seconds.
bool parse_seconds(std::string_view text, double &out);

} // namespace hwsigd
