// A PMU's sysfs format/ terms ("config:0-7,21") and event strings
// ("event=0x3c,umask=0x01,edge"), parsed strictly, and the perf_event_attr
// words they encode into. Documentation/pmu.rst.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwsig {

// One event as perf_event_open takes it.
struct PerfEventSpec {
	std::string name; // what the user or the plan called it
	std::uint32_t type = 0;
	std::uint64_t config = 0;
	std::uint64_t config1 = 0;
	std::uint64_t config2 = 0;
};

// One file of a PMU's format/ directory: "config:0-7,21" -> word 0, bits.
struct FormatField {
	int word = 0; // 0: config, 1: config1, 2: config2
	std::vector<std::pair<unsigned, unsigned>> ranges; // inclusive, low bits first
	unsigned width() const;
};

// Strict parsers (no exceptions): nullopt plus a reason in *why.
std::optional<FormatField> parse_format_spec(std::string_view spec, std::string *why = nullptr);

struct EventTerm {
	std::string name;
	std::uint64_t value = 1; // a bare term ("edge") means 1
};
// "event=0x3c,umask=0x01,edge" (values hex with 0x, or decimal).
std::optional<std::vector<EventTerm>> parse_event_terms(std::string_view s, std::string *why = nullptr);

// A term's value: "0x1f" or "31", the whole string, no sign, no overflow.
std::optional<std::uint64_t> parse_term_value(std::string_view s);

// Puts value into the field's bits (low bits of value into the first range).
// False when value does not fit the field's width.
bool apply_format(const FormatField &f, std::uint64_t value, PerfEventSpec &spec);

} // namespace hwsig
