// hwsigd's side of the flight recorder: a dump file of what the history
// holds (Documentation/dump-format.rst).
#pragma once

#include <string>
#include <string_view>

#include "config.h"
#include "history.h"

namespace hwsigd {

// The dump file's bytes: the snapshots of the last `seconds` (0: all the
// history holds), with the host's facts. Throws hwsig::Error.
std::string make_dump(const History &history, const Config &cfg, const std::vector<std::string> &claimed,
		      double seconds, const std::string &trigger);

// "90", "2.5": a non-negative, finite number of seconds.
bool parse_seconds(std::string_view text, double &out);

} // namespace hwsigd
