// "90", "90s", "2m", "1h", "1.5m": seconds, or nullopt.
#pragma once

#include <optional>
#include <string>

namespace hwsigctl {

std::optional<double> parse_duration(const std::string &text);

} // namespace hwsigctl
