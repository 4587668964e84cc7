// "90", "90s", "2m", "1h", "1.5m": seconds, or nullopt.
#pragma once

#include <optional>
#include <string>

namespace hwsigctl {

std::optional<double> parse_duration(const std::string &text);

// The longest duration whose nanoseconds fit the 64-bit counts of the
// daemon's clock (2^63 ns, about 292 years): a longer one cannot mean
// anything but "all", and is refused rather than wrapped.
inline constexpr double kMaxDurationSeconds = 9223372036.0;

} // namespace hwsigctl
