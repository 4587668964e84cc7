// Strict parsing helpers shared by every procfs/sysfs parser: no exceptions,
// no silent truncation, overflow and garbage are rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwsig {

// Whole string must be a base-10 unsigned/signed integer (surrounding
// whitespace allowed). Overflow, sign on unsigned, empty: nullopt.
std::optional<std::uint64_t> parse_u64(std::string_view s);
std::optional<std::int64_t> parse_i64(std::string_view s);
// A decimal number exactly as the kernel prints one: digits only, no
// whitespace, no leading zero (but "0"), within 64 bits. The fast paths
// that re-read a procfs file of known layout accept only this, so that
// whatever else they see goes to the strict parser.
std::optional<std::uint64_t> parse_kernel_u64(std::string_view s);
// Finite decimal number ("12.34"), whitespace allowed around it.
std::optional<double> parse_double(std::string_view s);

std::string_view trim(std::string_view s);
// Splits on any run of spaces/tabs; no empty fields.
std::vector<std::string_view> split_ws(std::string_view s);
// The same into out (cleared first): a loop over lines reuses one vector.
void split_ws(std::string_view s, std::vector<std::string_view> &out);
// Splits into lines (without '\n'); a trailing newline adds no empty line.
std::vector<std::string_view> split_lines(std::string_view s);

// Parses a CPU list such as "0-3,8,10-11" (sysfs cpumask/online format).
std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view s);
// The inverse: sorted CPU ids written the way the kernel writes a list
// ("3", "4,5", "4-7", "0,2,8-11"); "" for none.
std::string format_cpu_list(const std::vector<unsigned> &sorted_cpus);

} // namespace hwsig
