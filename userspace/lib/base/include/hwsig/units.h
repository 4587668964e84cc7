// Human units for the table: a metric's base value (ratio, B/s, us, req/s,
// ...) as a person reads it, three significant digits. JSON and Prometheus
// keep base values; only the table and the verdict texts use this.
#pragma once

#include <cstddef>
#include <string>

namespace hwsig {

struct HumanValue {
	std::string number; // "12.3", "1,230", "-" (unavailable: NaN or infinite)
	std::string unit;   // "%", "MiB/s", "ms", "req/s", "°C", "" ...
};

// Three significant digits, no exponent: 0 -> "0", 999.5 -> "1000",
// 0.0012345 -> "0.00123", -12.34 -> "-12.3". NaN/inf -> "-".
std::string sig3(double v);
// sig3 with thousands grouping of the integer part: 1234567 -> "1,230,000".
std::string sig3_grouped(double v);
// Bytes (or bytes/s with suffix "/s"): 1024-based prefixes, the prefix
// chosen after rounding so the number stays below 1000 (999.5 B ->
// "0.976 KiB", never "1000 B").
HumanValue human_bytes(double bytes, const std::string &suffix = "");
// A time given in microseconds: ns, µs, ms or s, whichever keeps the
// number in [1, 1000) after rounding (999.95 us -> "1.00 ms").
HumanValue human_time_us(double us);
// A catalog unit ("ratio", "B/s", "us", "req/s", "degC", ...) and a base
// value -> what the table prints.
HumanValue humanize(double value, const std::string &unit);
// humanize() as one string: "12.3 %", "1.00 MiB/s", "-" for unavailable.
std::string human_text(double value, const std::string &unit);

// Terminal columns of a UTF-8 string (every code point one column: the
// units use only "µ" and "°" beyond ASCII), for padding.
std::size_t display_width(const std::string &s);
// s padded with spaces to width columns, on the right (left=true) or left.
std::string pad(const std::string &s, std::size_t width, bool left = true);

} // namespace hwsig
